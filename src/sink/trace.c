/* SPDX-License-Identifier: MIT */
/*
 * The trace sink (see trace.h): ring slots and GPU zones encoded as
 * EVENTS chunks through format/events.h's table.
 *
 * Ring slots are the bulk of a trace and the writer's main cost, so
 * slots() has a fast path for the commonest events, zone begins and ends
 * at sites whose one-byte id is cached (zone_run): written straight into
 * the chunk through the table's SITE, ZONE and ZONES encoders, a zone
 * with nothing inside as one event, a run of them as one
 * (docs/internals/sinks.md says what each saves). Everything else goes
 * through the table's general encoder.
 */
#include "trace.h"

#include <stdlib.h>

#include "../format/events.h"
#include "../format/records.h"
#include "../internal.h"

/* An EVENTS chunk is closed past this many bytes. */
#define CHUNK_BYTES (256u << 10)

/* Sites in the id cache (a power of two). */
#define ID_CACHE 16u

typedef struct trace_sink {
  pp__sink sink;
  pp__out *out;
  pp__sites *sites;
  ppt_buf ev;    /* the EVENTS chunk being built */
  uint64_t ev_n; /* events in it */
  uint64_t prev; /* tick of its last event */
  int open;      /* ev holds a base and maybe events */
  /* Site ids under 0x80 (one byte) by the site's address, in front of
   * the site table: a slot's site is looked up with one compare (nested
   * zones change site every event). An id never changes in a table. */
  struct {
    uint64_t site;
    unsigned char id;
  } ids[ID_CACHE];
} trace_sink;

static inline unsigned id_slot(uint64_t site) {
  return (unsigned)(site >> 4) & (ID_CACHE - 1);
}

/* Close the chunk being built: the sites it uses first. */
static void chunk_close(trace_sink *t) {
  if (!t->open)
    return;
  pp__sites_write(t->sites, t->out);
  pp__out_chunk(t->out, PPT_CHUNK_EVENTS, &t->ev, t->ev_n);
  t->ev_n = 0;
  t->open = 0;
}

static void chunk_open(trace_sink *t, uint64_t tid, uint64_t tick) {
  ppt_events_base base = {tid, tick};
  ppt_events_base_put(&t->ev, &base);
  t->prev = tick;
  t->open = 1;
}

/* Events written by the fast loop between two checks of the chunk's room. */
#define RUN 256u

/* One event at *i of any type, through the table's general encoder (and
 * the chunk's opening and closing). Returns 1 when it wrote one. */
static int put_one(trace_sink *t, const pp__slots *s, uint64_t *i) {
  ppt_buf *out = &t->ev;
  pp__slot_ev e;
  int r = pp__slot_read(s, i, &e);
  if (r < 0) {
    *i = s->to; /* a value slot past the end: stop there */
    return 0;
  }
  if (r == 0)
    return 0;
  if (!t->open || out->len > CHUNK_BYTES) {
    chunk_close(t);
    chunk_open(t, s->tid, e.ts);
  }
  if (ppt_buf_reserve(out, PPT_EV_MAX_FIXED) != 0)
    return 0;
  uint32_t id = pp__sites_id(t->sites, e.loc);
  if (id == UINT32_MAX)
    return 0;
  if (id < 0x80) {
    uint64_t site = (uint64_t)(uintptr_t)e.loc;
    t->ids[id_slot(site)].site = site;
    t->ids[id_slot(site)].id = (unsigned char)id;
  }
  /* The ring keeps a memory event's bytes << 8 | device in the extra
   * number; the file has them as two fields (format/events.h). */
  ppt_ev v;
  v.type = e.type;
  v.delta = (int64_t)(e.ts - t->prev);
  v.loc = id;
  v.value = e.value;
  v.extra = e.extra;
  v.device = 0;
  v.launch = 0;
  v.dur = 0;
  if (ppt_is_mem(e.type)) {
    v.extra = e.extra >> 8;
    v.device = e.extra & 0xff;
  }
  t->prev = e.ts;
  out->len += ppt_ev_put_fixed(out->data + out->len, &v);
  return 1;
}

/* The fast loop: zone begins and ends at sites in the id cache, from slot
 * i up to stop or the ring's wrap, encoded at t's chunk. A begin whose
 * end is the next slot (a zone with nothing inside, the commonest) is
 * one ZONE event, 4 bytes where the two took 6, and a run of them at one
 * site one ZONES event, 2 bytes a zone. It keeps the chunk's end and time
 * in locals (stores through an unsigned char pointer may alias anything,
 * so fields read through t would be reloaded after every byte) and walks
 * the slots by pointer. Returns the slot it stopped at: an event of
 * another type, or a site not cached. */
static uint64_t zone_run(trace_sink *t, const pp__slots *s, uint64_t i,
                         uint64_t stop) {
  const uint64_t end_bit =
      (uint64_t)(PPT_EV_ZONE_BEGIN ^ PPT_EV_ZONE_END) << PP__TAG_SHIFT;
  stop = pp__slots_contig_end(s, i, stop);
  const pp__slot *q = &s->ring[i & s->mask], *const qe = q + (stop - i);
  unsigned char *p = t->ev.data + t->ev.len;
  uint64_t prev = t->prev;
  for (; q < qe; q++) {
    __builtin_prefetch(q + 64);
    uint64_t ts = atomic_load_explicit(&q->ts, memory_order_relaxed);
    uint64_t a = atomic_load_explicit(&q->a, memory_order_relaxed);
    unsigned type = (unsigned)(a >> PP__TAG_SHIFT);
    uint64_t site = a & PP__PTR_MASK;
    if ((type != PPT_EV_ZONE_BEGIN && type != PPT_EV_ZONE_END) ||
        t->ids[id_slot(site)].site != site)
      break;
    const unsigned id = t->ids[id_slot(site)].id; /* < 0x80 */
    if (type == PPT_EV_ZONE_BEGIN && q + 1 < qe &&
        atomic_load_explicit(&q[1].a, memory_order_relaxed) == (a ^ end_bit)) {
      /* a begin and its end in the next slot: a ZONE, or with more such
       * pairs after it a ZONES event (n patched in when known) */
      const uint64_t wb = a, we = a ^ end_bit;
      uint64_t end = atomic_load_explicit(&q[1].ts, memory_order_relaxed);
      q += 2;
      if (q + 1 < qe &&
          atomic_load_explicit(&q->a, memory_order_relaxed) == wb &&
          atomic_load_explicit(&q[1].a, memory_order_relaxed) == we) {
        p += ppt_ev_put_site_uv(p, PPT_EV_ZONES, (int64_t)(ts - prev), id,
                                1);
        unsigned char *count = p - 1; /* n < 0x80: one byte */
        p += ppt_zones_put(p, 1, 0, end - ts);
        unsigned n = 1;
        for (; n < PPT_ZONES_RUN && q + 1 < qe &&
               atomic_load_explicit(&q->a, memory_order_relaxed) == wb &&
               atomic_load_explicit(&q[1].a, memory_order_relaxed) == we;
             n++, q += 2) {
          __builtin_prefetch(q + 64);
          uint64_t b = atomic_load_explicit(&q->ts, memory_order_relaxed);
          uint64_t e = atomic_load_explicit(&q[1].ts, memory_order_relaxed);
          p += ppt_zones_put(p, 0, b - end, e - b);
          end = e;
        }
        *count = (unsigned char)n;
      } else {
        p += ppt_ev_put_zone(p, (int64_t)(ts - prev), id, end - ts);
      }
      prev = end;
      q--; /* the loop's q++ */
      continue;
    }
    p += ppt_ev_put_site(p, type, (int64_t)(ts - prev), id);
    prev = ts;
  }
  t->ev.len = (size_t)(p - t->ev.data);
  t->prev = prev;
  return stop - (uint64_t)(qe - q);
}

/* Ring slots to events: zone begins and ends at cached sites (the bulk of
 * a ring) through zone_run, the rest one by one through put_one (which
 * caches the sites it meets). */
static uint64_t trace_slots(pp__sink *k, const pp__slots *s) {
  trace_sink *t = (trace_sink *)k;
  const uint64_t to = s->to;
  uint64_t n = 0, i = s->from;
  while (i < to) {
    if (t->open && t->ev.len <= CHUNK_BYTES &&
        ppt_buf_reserve(&t->ev, RUN * PPT_EV_MAX_FIXED) == 0) {
      const uint64_t stop = to - i > RUN ? i + RUN : to;
      const uint64_t i0 = i;
      i = zone_run(t, s, i, stop);
      n += i - i0; /* one slot, one event */
      if (i >= to)
        break;
      if (i < stop) /* an event the fast loop does not take */
        n += (uint64_t)put_one(t, s, &i);
      continue;
    }
    n += (uint64_t)put_one(t, s, &i);
  }
  t->ev_n += n;
  if (s->last)
    chunk_close(t);
  return n;
}

static int cmp_gpu_rec(const void *a, const void *b) {
  const pp__gpu_rec *x = a, *y = b;
  if (x->tid != y->tid)
    return x->tid < y->tid ? -1 : 1;
  return x->start_tick < y->start_tick ? -1 : x->start_tick > y->start_tick;
}

/* GPU_ZONE events in one EVENTS chunk per launching thread (more past
 * CHUNK_BYTES). */
static void trace_gpu(pp__sink *k, pp__gpu_rec *recs, size_t n,
                      const pp__clockmap *clock) {
  trace_sink *t = (trace_sink *)k;
  (void)clock;
  chunk_close(t);
  qsort(recs, n, sizeof *recs, cmp_gpu_rec);
  for (size_t i = 0; i < n;) {
    chunk_open(t, recs[i].tid, recs[i].start_tick);
    size_t j = i;
    for (; j < n && recs[j].tid == recs[i].tid && t->ev.len < CHUNK_BYTES;
         j++) {
      const pp__gpu_rec *r = &recs[j];
      uint32_t id = pp__sites_id(t->sites, r->loc);
      if (id == UINT32_MAX || ppt_buf_reserve(&t->ev, PPT_EV_MAX_FIXED) != 0)
        continue;
      ppt_ev e;
      e.type = PPT_EV_GPU_ZONE;
      e.delta = (int64_t)(r->start_tick - t->prev);
      e.loc = id;
      e.device = r->device;
      e.extra = r->stream;
      e.launch = (int64_t)(r->launch_tick - r->start_tick);
      e.dur = r->dur_ns;
      t->prev = r->start_tick;
      t->ev.len += ppt_ev_put_fixed(t->ev.data + t->ev.len, &e);
      t->ev_n++;
    }
    chunk_close(t);
    i = j;
  }
}

static void trace_pass_end(pp__sink *k, int64_t now_ns, int final) {
  (void)now_ns;
  (void) final;
  chunk_close((trace_sink *)k);
}

static void trace_free(pp__sink *k) {
  trace_sink *t = (trace_sink *)k;
  if (!t)
    return;
  ppt_buf_free(&t->ev);
  pp__free(t);
}

static const pp__sink_ops trace_ops = {.name = "trace",
                                       .slots = trace_slots,
                                       .gpu = trace_gpu,
                                       .pass_end = trace_pass_end,
                                       .free = trace_free};

pp__sink *pp__trace_sink_new(pp__out *out, pp__sites *sites) {
  trace_sink *t = pp__calloc(1, sizeof *t);
  if (!t)
    return NULL;
  t->sink.ops = &trace_ops;
  for (unsigned k = 0; k < ID_CACHE; k++)
    t->ids[k].site = UINT64_MAX; /* no site: past the pointer bits */
  t->out = out;
  t->sites = sites;
  return &t->sink;
}
