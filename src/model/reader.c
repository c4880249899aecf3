/* SPDX-License-Identifier: MIT */
/*
 * The validating .pptrace reader. It walks the file chunk by chunk, checks
 * each header and payload checksum, decodes intact chunks into a pp_trace,
 * and resynchronises on the next chunk magic after damage, counting what it
 * skipped. Every read is bounds-checked through ppt_cursor, so no input can
 * make it read outside the buffer. Ticks are converted to nanoseconds once
 * all clock synchronisation points are known.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../internal.h"
#include "../format/pptrace.h"
#include "../format/records.h"
#include "../format/stats_payload.h"
#include "reader.h"
#include "trace.h"

#define MAX_LOCS (1u << 22)
#define MAX_THREADS 65536u

/* Running out of memory is not damage: every allocation failure while
 * decoding sets t->diag.out_of_memory, which stops the walk with an error
 * instead of counting a bad chunk and showing a partial trace. */
static char *dup_n(pp_trace *t, const char *s, size_t n) {
  char *d = pp__malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = 0;
  } else {
    t->diag.out_of_memory = 1;
  }
  return d;
}

static int grow(pp_trace *t, void **arr, size_t *cap, size_t need,
                size_t elem) {
  if (pp__grow(arr, cap, need, elem) == 0)
    return 0;
  t->diag.out_of_memory = 1;
  return -1;
}

/* Bounds that keep memory and time proportional to the input: every
 * defined site or thread takes at least a few bytes of the file, so ids far
 * beyond that cannot be genuine. */
static uint64_t loc_limit(const pp_trace *t) {
  uint64_t n = t->diag.file_bytes / 4 + 64;
  return n < MAX_LOCS ? n : MAX_LOCS;
}

static size_t thread_limit(const pp_trace *t) {
  uint64_t n = t->diag.file_bytes / 16 + 16;
  return n < MAX_THREADS ? (size_t)n : MAX_THREADS;
}

/* Put thread i in t's index (which has room). */
static void tid_index_put(pp_trace *t, size_t i) {
  size_t m = t->tid_index_cap - 1;
  size_t j = pp__tid_slot(t->threads[i].tid, t->tid_index_cap);
  while (t->tid_index[j])
    j = (j + 1) & m;
  t->tid_index[j] = (uint32_t)i + 1;
}

/* The index covering every thread, kept at most half full; -1 when out
 * of memory (the reader searches then). */
static int tid_index_room(pp_trace *t) {
  if (t->tid_index && t->tid_index_n == t->nthreads &&
      (t->nthreads + 1) * 2 <= t->tid_index_cap)
    return 0;
  size_t cap = t->tid_index_cap ? t->tid_index_cap : 64;
  while ((t->nthreads + 1) * 2 > cap)
    cap *= 2;
  uint32_t *m = pp__calloc(cap, sizeof *m);
  if (!m)
    return -1;
  pp__free(t->tid_index);
  t->tid_index = m;
  t->tid_index_cap = cap;
  for (size_t i = 0; i < t->nthreads; i++)
    tid_index_put(t, i);
  t->tid_index_n = t->nthreads;
  return 0;
}

/* The thread of tid, made at its first mention. A table by tid: a trace
 * of 200,000 threads took 62 s to report with a search per mention. */
static pp_thread *thread_for(pp_trace *t, uint64_t tid) {
  size_t at = pp_trace_thread_index(t, tid);
  if (at < t->nthreads)
    return &t->threads[at];
  int indexed = tid_index_room(t) == 0;
  if (t->nthreads >= thread_limit(t) ||
      grow(t, (void **)&t->threads, &t->cap_threads, t->nthreads + 1,
               sizeof(pp_thread)) != 0)
    return NULL;
  pp_thread *th = &t->threads[t->nthreads];
  memset(th, 0, sizeof *th);
  th->tid = tid;
  th->name = dup_n(t, "", 0);
  if (!th->name)
    return NULL;
  t->nthreads++;
  if (indexed) {
    tid_index_put(t, t->nthreads - 1);
    t->tid_index_n = t->nthreads;
  }
  return th;
}

/* Make locs[0..id] exist (placeholders for holes). */
static pp_loc *loc_slot(pp_trace *t, uint64_t id) {
  if (id >= loc_limit(t))
    return NULL;
  if (id >= t->nlocs) {
    if (grow(t, (void **)&t->locs, &t->cap_locs, (size_t)id + 1,
                 sizeof(pp_loc)) != 0)
      return NULL;
    for (size_t i = t->nlocs; i <= id; i++) {
      memset(&t->locs[i], 0, sizeof(pp_loc));
      t->locs[i].id = (uint32_t)i;
    }
    t->nlocs = (size_t)id + 1;
  }
  return &t->locs[id];
}

static int decode_meta(pp_trace *t, ppt_cursor *c) {
  ppt_count n;
  ppt_count_get(c, &n);
  for (uint64_t i = 0; i < n.n && !c->err; i++) {
    ppt_meta r;
    if (ppt_meta_get(c, &r) != 0)
      break;
    if (grow(t, (void **)&t->meta, &t->cap_meta, t->nmeta + 1,
                 sizeof(pp_meta)) != 0)
      return -1;
    pp_meta *m = &t->meta[t->nmeta];
    m->key = dup_n(t, r.key.s, r.key.n);
    m->value = dup_n(t, r.value.s, r.value.n);
    if (!m->key || !m->value) {
      pp__free(m->key);
      pp__free(m->value);
      return -1;
    }
    t->nmeta++;
  }
  return c->err ? -1 : 0;
}

static int decode_clock(pp_trace *t, ppt_cursor *c) {
  while (c->p < c->end && !c->err) {
    ppt_clock r;
    if (ppt_clock_get(c, &r) != 0)
      break;
    pp_clock_sync s;
    s.tick = r.tick;
    s.mono_ns = r.mono_ns;
    s.real_ns = r.real_ns;
    if (grow(t, (void **)&t->clock, &t->cap_clock, t->nclock + 1,
                 sizeof s) != 0)
      return -1;
    t->clock[t->nclock++] = s;
  }
  return c->err ? -1 : 0;
}

static int decode_srcloc(pp_trace *t, ppt_cursor *c) {
  while (c->p < c->end && !c->err) {
    ppt_srcloc r;
    if (ppt_srcloc_get(c, &r) != 0)
      break;
    pp_loc *l = loc_slot(t, r.id);
    if (!l)
      return -1;
    pp__free(l->name);
    pp__free(l->function);
    pp__free(l->file);
    l->kind = (uint32_t)(r.kind > 255 ? 0 : r.kind);
    l->name = dup_n(t, r.name.s, r.name.n);
    l->function = dup_n(t, r.function.s, r.function.n);
    l->file = dup_n(t, r.file.s, r.file.n);
    l->line = (uint32_t)(r.line > UINT32_MAX ? 0 : r.line);
    if (!l->name || !l->function || !l->file)
      return -1;
  }
  return c->err ? -1 : 0;
}

static int decode_thread(pp_trace *t, ppt_cursor *c) {
  while (c->p < c->end && !c->err) {
    ppt_thread r;
    if (ppt_thread_get(c, &r) != 0)
      break;
    pp_thread *th = thread_for(t, r.tid);
    char *n = dup_n(t, r.name.s, r.name.n);
    if (!th || !n) {
      pp__free(n);
      return -1;
    }
    pp__free(th->name);
    th->name = n;
  }
  return c->err ? -1 : 0;
}

static int decode_drops(pp_trace *t, ppt_cursor *c) {
  while (c->p < c->end && !c->err) {
    ppt_drops r;
    if (ppt_drops_get(c, &r) != 0)
      break;
    pp_thread *th = thread_for(t, r.tid);
    if (!th)
      return -1;
    th->dropped = pp__add_sat_u64(th->dropped, r.n); /* a crafted count never wraps */
  }
  return c->err ? -1 : 0;
}


/* An anomaly or alert (since 1.2): its fields after type and delta. The
 * time stays in ticks until convert_rest(). */
static int decode_note(pp_trace *t, ppt_cursor *c, unsigned type,
                       uint64_t tick) {
  ppt_ev r;
  r.type = type;
  if (ppt_ev_body(c, &r) != 0)
    return -1;
  pp_note n;
  memset(&n, 0, sizeof n);
  n.value = r.nvalue;
  n.baseline = r.baseline;
  n.spread = r.spread;
  n.threshold = r.threshold;
  n.ts = (int64_t)tick;
  n.type = (uint8_t)type;
  if (grow(t, (void **)&t->notes, &t->cap_notes, t->nnotes + 1,
               sizeof n) != 0)
    return -1;
  n.what = dup_n(t, r.what.s, r.what.n);
  n.which = dup_n(t, r.which.s, r.which.n);
  n.message = dup_n(t, r.message.s, r.message.n);
  if (!n.what || !n.which || !n.message) {
    pp__free(n.what);
    pp__free(n.which);
    pp__free(n.message);
    return -1;
  }
  t->notes[t->nnotes++] = n;
  return 0;
}

/* A GPU_ZONE event (since 1.2): device, stream, launch delta (ticks),
 * duration (ns). Ticks are kept in start/launch until convert_rest(); the
 * end is set from the duration there. */
static int decode_gpu_zone(pp_trace *t, ppt_cursor *c, uint64_t tid,
                           uint64_t tick, uint64_t id) {
  ppt_ev r;
  r.type = PPT_EV_GPU_ZONE;
  r.loc = id;
  if (ppt_ev_body(c, &r) != 0 || id >= loc_limit(t)) {
    t->diag.events_bad++;
    return -1;
  }
  if (!loc_slot(t, id) || !thread_for(t, tid) ||
      grow(t, (void **)&t->gpu, &t->cap_gpu, t->ngpu + 1,
               sizeof(pp_gpu_zone_rec)) != 0)
    return -1;
  pp_gpu_zone_rec *g = &t->gpu[t->ngpu++];
  memset(g, 0, sizeof *g);
  g->start = (int64_t)tick;
  g->launch = (int64_t)(tick + (uint64_t)r.launch);
  g->end = (int64_t)r.dur; /* the duration until convert_rest() */
  g->tid = tid;
  g->stream = r.extra;
  g->device = (uint32_t)r.device;
  g->loc = (uint32_t)id;
  return 0;
}

/* ---- ticks to ns ------------------------------------------------------- */

/* What converting a tick needs, prepared once all CLOCK chunks are read
 * (prepare_clock): the sorted, filtered synchronisation points, the
 * fallback and overall rates, and a cursor that moves locally because
 * events come nearly in time order. */
typedef struct tick_conv {
  int identity; /* ticks are monotonic ns already */
  double fallback, overall;
  size_t seg;
  double *ns_per_tick; /* from each point to the next (the overall rate
                          after the last) */
  /* The segment the last conversion used when the tick was past its
   * point: [lo, hi) (hi_open: to the end of ticks), its point's ns and
   * rate; have_last 0 until then. */
  uint64_t lo, hi;
  double base, scale;
  int have_last, hi_open;
} tick_conv;

/* What the second pass carries from event to event. */
typedef struct ev_pass {
  tick_conv conv;
  const pp_read_opts *opts;
  int64_t cut;         /* when cut_set: events at or after this time are
                          not stored */
  int cut_set;
} ev_pass;

static inline int64_t conv_tick(const pp_trace *t, tick_conv *v,
                                uint64_t tick);

/* A decoded event of thread thi: to the consumer, and stored while the
 * budget allows. -1 when the consumer or memory failed. */
static int take_event(pp_trace *t, ev_pass *ps, size_t thi,
                      const pp_event *ev) {
  pp_thread *th = &t->threads[thi];
  t->diag.events++;
  if (ps->opts->on_event &&
      ps->opts->on_event(ps->opts->arg, t, (uint32_t)thi, ev) != 0) {
    t->diag.out_of_memory = 1;
    return -1;
  }
  if ((ps->cut_set && ev->ts >= ps->cut) || !ps->opts->keep_events) {
    if (ev->ts < t->diag.first_unkept_ns)
      t->diag.first_unkept_ns = ev->ts;
    return 0;
  }
  if (grow(t, (void **)&th->ev, &th->cap_ev, th->nev + 1,
           sizeof(pp_event)) != 0)
    return -1;
  th->ev[th->nev++] = *ev;
  if (++t->diag.events_kept > ps->opts->keep_events)
    pp__trace_lower_cut(t, ps->opts->keep_events, &ps->cut, &ps->cut_set);
  return 0;
}

/* A zone begin at *tick (its site in ev->loc) and its end dur ticks
 * later, where *tick moves: a ZONE, or one zone of a ZONES. */
static int take_zone(pp_trace *t, ev_pass *ps, size_t thi, pp_event *ev,
                     uint64_t *tick, uint64_t dur) {
  ev->v.id = 0;
  ev->v2 = 0;
  ev->type = PPT_EV_ZONE_BEGIN;
  ev->ts = conv_tick(t, &ps->conv, *tick);
  if (take_event(t, ps, thi, ev) != 0)
    return -1;
  *tick += dur;
  ev->type = PPT_EV_ZONE_END;
  ev->ts = conv_tick(t, &ps->conv, *tick);
  return take_event(t, ps, thi, ev);
}

/* The n zones of a ZONES event from *tick (the first begin); *tick ends
 * at the last end. A cut event, or n of 0, is a bad event. */
static int decode_zones(pp_trace *t, ppt_cursor *c, ev_pass *ps, size_t thi,
                        pp_event *ev, uint64_t n, uint64_t *tick) {
  if (n == 0) {
    t->diag.events_bad++;
    return -1;
  }
  for (uint64_t k = 0; k < n; k++) {
    uint64_t gap, dur;
    if (ppt_zones_get(c, k == 0, &gap, &dur) != 0) {
      t->diag.events_bad++;
      return -1;
    }
    *tick += gap;
    if (take_zone(t, ps, thi, ev, tick, dur) != 0)
      return -1;
  }
  return 0;
}

/* An EVENTS chunk (second pass): each thread event is decoded, its time
 * converted to ns, handed to the consumer and stored while the budget
 * allows; anomalies, alerts and GPU zones are kept in ticks until
 * convert_rest(). */
static int decode_events(pp_trace *t, ppt_cursor *c, ev_pass *ps) {
  ppt_events_base base;
  if (ppt_events_base_get(c, &base) != 0)
    return -1;
  uint64_t tid = base.tid;
  uint64_t tick = base.tick;
  pp_thread *th = NULL; /* looked up at the first thread event: a chunk
                           of anomalies and alerts belongs to no thread */
  size_t thi = 0;
  while (c->p < c->end) {
    ppt_ev r;
    ppt_ev_head(c, &r);
    unsigned type = r.type;
    int64_t delta = r.delta;
    if (ppt_is_note(type)) {
      if (c->err || decode_note(t, c, type, tick + (uint64_t)delta) != 0) {
        t->diag.events_bad++;
        return -1;
      }
      tick += (uint64_t)delta;
      continue;
    }
    if (!th) {
      if (!(th = thread_for(t, tid)))
        return -1;
      thi = (size_t)(th - t->threads);
    }
    ppt_ev_site(c, &r);
    uint64_t id = r.loc;
    pp_event ev;
    memset(&ev, 0, sizeof ev);
    if (type == PPT_EV_GPU_ZONE) {
      if (decode_gpu_zone(t, c, tid, tick + (uint64_t)delta, id) != 0)
        return -1;
      th = &t->threads[thi]; /* thread_for may have moved the array */
      tick += (uint64_t)delta;
      continue;
    }
    /* The fields the table gives this type (format/events.h), into the
     * members its layout names: v holds the value's 64 bits whatever its
     * coding (.id, .i or .f); MEM keeps the device in v2's top byte. */
    if (c->err || (!ppt_ev_is(type, PPT_L_SITE) && ppt_ev_body(c, &r) != 0) ||
        id >= loc_limit(t)) { /* a SITE layout has no body past the site */
      t->diag.events_bad++;
      return -1;
    }
    ev.v.id = r.value;
    ev.v2 = r.extra | r.device << 56;
    tick += (uint64_t)delta;
    ev.loc = (uint32_t)id;
    if (id >= t->nlocs && !loc_slot(t, id))
      return -1;
    if (type == PPT_EV_ZONES) { /* value zones, each a begin and end */
      if (decode_zones(t, c, ps, thi, &ev, r.value, &tick) != 0)
        return -1;
      continue;
    }
    if (type == PPT_EV_ZONE) { /* a begin, and its end value ticks later */
      if (take_zone(t, ps, thi, &ev, &tick, r.value) != 0)
        return -1;
      continue;
    }
    ev.type = (uint8_t)type;
    ev.ts = conv_tick(t, &ps->conv, tick);
    if (take_event(t, ps, thi, &ev) != 0)
      return -1;
  }
  return 0;
}

/* ---- CUDA chunk (CUPTI activity, since 1.2) ------------------------------ */

/* A record's start and duration (the table bounds the start by
 * INT64_MAX) as start and end: an end past INT64_MAX makes it bad. */
static void set_span(ppt_cursor *c, uint64_t s, uint64_t d, int64_t *start,
                     int64_t *end) {
  if (d > (uint64_t)INT64_MAX - s)
    c->err = 1;
  *start = (int64_t)s;
  *end = (int64_t)(s + d);
}

static int cuda_string(pp_trace *t, ppt_cursor *c) {
  pp_cuda_trace *g = &t->cuda;
  ppt_cuda_string r;
  if (ppt_cuda_string_get(c, &r) != 0 || r.id >= loc_limit(t))
    return -1;
  uint64_t id = r.id;
  size_t n = r.text.n;
  const char *s = r.text.s;
  if (id >= g->nnames) {
    size_t cap = g->nnames;
    if (grow(t, (void **)&g->names, &cap, (size_t)id + 1, sizeof(char *)))
      return -1;
    memset(g->names + g->nnames, 0,
           ((size_t)id + 1 - g->nnames) * sizeof(char *));
    g->nnames = (size_t)id + 1;
  }
  char *d = dup_n(t, s, n);
  if (!d)
    return -1;
  pp__free(g->names[id]);
  g->names[id] = d;
  return 0;
}

/* Grow one record array; *arr holds *n of *cap elements. */
/* Append a decoded CUDA record of elem bytes to *arr: -1 when the cursor
 * ran out (a cut record) or out of memory, else 0. */
static int cuda_append(pp_trace *t, const ppt_cursor *c, void **arr, size_t *n,
                       size_t *cap, const void *rec, size_t elem) {
  if (c->err || grow(t, arr, cap, *n + 1, elem) != 0)
    return -1;
  memcpy((unsigned char *)*arr + *n * elem, rec, elem);
  (*n)++;
  return 0;
}

static int cuda_record(pp_trace *t, unsigned kind, ppt_cursor *c) {
  pp_cuda_trace *g = &t->cuda;
  switch (kind) {
  case PPT_CUDA_STRING:
    return cuda_string(t, c);
  case PPT_CUDA_KERNEL: {
    ppt_cuda_kernel r;
    pp_cuda_kernel k;
    ppt_cuda_kernel_get(c, &r);
    set_span(c, r.start, r.dur, &k.start, &k.end);
    k.queued = r.queued > (uint64_t)INT64_MAX ? 0 : (int64_t)r.queued;
    k.device = (uint32_t)r.device;
    k.context = (uint32_t)r.context;
    k.stream = (uint32_t)r.stream;
    k.correlation = (uint32_t)r.correlation;
    k.name = (uint32_t)r.name;
    k.grid[0] = (int32_t)r.grid_x;
    k.grid[1] = (int32_t)r.grid_y;
    k.grid[2] = (int32_t)r.grid_z;
    k.block[0] = (int32_t)r.block_x;
    k.block[1] = (int32_t)r.block_y;
    k.block[2] = (int32_t)r.block_z;
    k.static_smem = (int32_t)r.static_smem;
    k.dynamic_smem = (int32_t)r.dynamic_smem;
    k.registers = (uint32_t)r.registers;
    return cuda_append(t, c, (void **)&g->kernels, &g->nkernels,
                       &g->cap_kernels, &k, sizeof k);
  }
  case PPT_CUDA_MEMCPY: {
    ppt_cuda_memcpy r;
    pp_cuda_memcpy m;
    ppt_cuda_memcpy_get(c, &r);
    set_span(c, r.start, r.dur, &m.start, &m.end);
    m.bytes = r.bytes;
    m.copy_kind = (uint8_t)(r.copy_kind > 255 ? 0 : r.copy_kind);
    m.src_kind = (uint8_t)(r.src_kind > 255 ? 0 : r.src_kind);
    m.dst_kind = (uint8_t)(r.dst_kind > 255 ? 0 : r.dst_kind);
    m.flags = (uint8_t)r.flags;
    m.device = (uint32_t)r.device;
    m.context = (uint32_t)r.context;
    m.stream = (uint32_t)r.stream;
    m.correlation = (uint32_t)r.correlation;
    return cuda_append(t, c, (void **)&g->memcpys, &g->nmemcpys,
                       &g->cap_memcpys, &m, sizeof m);
  }
  case PPT_CUDA_MEMSET: {
    ppt_cuda_memset r;
    pp_cuda_memset m;
    ppt_cuda_memset_get(c, &r);
    set_span(c, r.start, r.dur, &m.start, &m.end);
    m.bytes = r.bytes;
    m.value = (uint32_t)r.value;
    m.memory_kind = (uint32_t)r.memory_kind;
    m.device = (uint32_t)r.device;
    m.context = (uint32_t)r.context;
    m.stream = (uint32_t)r.stream;
    m.correlation = (uint32_t)r.correlation;
    return cuda_append(t, c, (void **)&g->memsets, &g->nmemsets,
                       &g->cap_memsets, &m, sizeof m);
  }
  case PPT_CUDA_SYNC: {
    ppt_cuda_sync r;
    pp_cuda_sync y;
    ppt_cuda_sync_get(c, &r);
    set_span(c, r.start, r.dur, &y.start, &y.end);
    y.type = (uint32_t)r.type;
    y.context = (uint32_t)r.context;
    y.stream = (uint32_t)r.stream;
    y.correlation = (uint32_t)r.correlation;
    y.event = (uint32_t)r.event;
    return cuda_append(t, c, (void **)&g->syncs, &g->nsyncs,
                       &g->cap_syncs, &y, sizeof y);
  }
  case PPT_CUDA_API: {
    ppt_cuda_api r;
    pp_cuda_api a;
    ppt_cuda_api_get(c, &r);
    set_span(c, r.start, r.dur, &a.start, &a.end);
    a.domain = (uint32_t)r.domain;
    a.cbid = (uint32_t)r.cbid;
    a.name = (uint32_t)r.name;
    a.tid = r.tid;
    a.correlation = (uint32_t)r.correlation;
    a.result = (uint32_t)r.result;
    return cuda_append(t, c, (void **)&g->apis, &g->napis,
                       &g->cap_apis, &a, sizeof a);
  }
  case PPT_CUDA_DROPPED: {
    ppt_cuda_dropped r;
    if (ppt_cuda_dropped_get(c, &r) != 0)
      return -1;
    g->dropped = pp__add_sat_u64(g->dropped, r.count);
    return 0;
  }
  default:
    return 0; /* a kind from a newer writer */
  }
}

/* Records are kind, body length, body: a damaged record costs the rest of
 * its chunk; an unknown kind or extra trailing fields are skipped. */
static int decode_cuda(pp_trace *t, ppt_cursor *c) {
  t->cuda.chunks++;
  while (c->p < c->end) {
    unsigned kind;
    ppt_cursor body;
    if (ppt_cuda_head_get(c, &kind, &body) != 0)
      return -1;
    if (cuda_record(t, kind, &body) != 0)
      return -1;
  }
  return 0;
}

/* ---- STATS chunk (stats mode) ------------------------------------------ */

/* A stats-mode file's STATS chunk is kept as it is, for the analysis to
 * decode (analyze/figures.c), once checked here: it must decode whole,
 * and every site and thread it names is made to exist in the model. */
static int stats_site(pp_trace *t, uint64_t loc) {
  return loc_slot(t, loc) ? 0 : -1;
}
static int stats_zone(void *t, ppt_stats_zone *r) {
  return stats_site(t, r->loc);
}
static int stats_frame(void *t, ppt_stats_frame *r) {
  return stats_site(t, r->loc);
}
static int stats_counter(void *t, const ppt_stats_counter *r) {
  return stats_site(t, r->loc);
}
static int stats_gpu(void *t, ppt_stats_gpu *r) {
  return stats_site(t, r->loc);
}
static int stats_thread(void *t, const ppt_stats_thread *r) {
  return thread_for(t, r->tid) ? 0 : -1;
}

static int decode_stats(pp_trace *t, const unsigned char *p, size_t n) {
  static const ppt_stats_visitor check = {
      stats_zone, stats_thread, stats_frame, stats_counter,
      NULL,       stats_gpu,    NULL,        NULL};
  size_t good = n;
  int rc = ppt_stats_walk(p, n, &check, t, &good);
  if (rc < 0)
    return -1;
  /* A bad GPU part makes the chunk bad; the statistics before it stay. */
  if (rc > 0)
    n = good;
  if (!(t->stats = pp__malloc(n ? n : 1))) {
    t->diag.out_of_memory = 1;
    return -1;
  }
  if (n)
    memcpy(t->stats, p, n);
  t->nstats = n;
  t->from_stats = 1;
  return rc > 0 ? -1 : 0;
}

/* ---- ticks to ns (the rest) -------------------------------------------- */

static int cmp_sync(const void *a, const void *b) {
  const pp_clock_sync *x = a, *y = b;
  return x->tick < y->tick ? -1 : x->tick > y->tick;
}

static int cmp_note(const void *a, const void *b) {
  const pp_note *x = a, *y = b;
  return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Saturating conversion of a double number of ns to int64, rounded half
 * away from zero (as llround, without its call: this runs per event). */
static int64_t sat_ns(double v) {
  if (!(v == v))
    return 0;
  if (v >= 9.2e18)
    return INT64_MAX;
  if (v <= -9.2e18)
    return INT64_MIN;
  return v < 0 ? -(int64_t)(0.5 - v) : (int64_t)(v + 0.5);
}

/* Sort the synchronisation points, drop those that would make time go
 * backwards, and derive the rates (all arithmetic in double: ticks and ns
 * from a damaged file may be anywhere in their 64-bit ranges). */
static void prepare_clock(pp_trace *t, tick_conv *v) {
  const char *src = pp_trace_meta(t, "tick_source");
  memset(v, 0, sizeof *v);
  v->identity = src && strcmp(src, "monotonic") == 0;
  v->fallback = 1.0;
  const char *r = pp_trace_meta(t, "ticks_per_ns");
  if (r) {
    double x = strtod(r, NULL);
    if (isfinite(x) && x > 0.01 && x < 100)
      v->fallback = x;
  }
  if (t->nclock > 1)
    qsort(t->clock, t->nclock, sizeof *t->clock, cmp_sync);
  size_t k = 0;
  for (size_t i = 0; i < t->nclock; i++)
    if (k == 0 || (t->clock[i].tick > t->clock[k - 1].tick &&
                   t->clock[i].mono_ns > t->clock[k - 1].mono_ns))
      t->clock[k++] = t->clock[i];
  t->nclock = k;
  v->overall = v->fallback;
  if (k >= 2) {
    double dt = (double)t->clock[k - 1].tick - (double)t->clock[0].tick;
    double dn = (double)t->clock[k - 1].mono_ns - (double)t->clock[0].mono_ns;
    if (dt > 0 && dn > 0)
      v->overall = dt / dn;
  }
  /* Each segment's rate once, not per event. */
  v->ns_per_tick = k ? pp__malloc(k * sizeof *v->ns_per_tick) : NULL;
  if (k && !v->ns_per_tick)
    t->diag.out_of_memory = 1;
  for (size_t i = 0; v->ns_per_tick && i < k; i++) {
    v->ns_per_tick[i] = 1.0 / v->overall;
    if (i + 1 < k) {
      double dt = (double)t->clock[i + 1].tick - (double)t->clock[i].tick;
      double dn =
          (double)t->clock[i + 1].mono_ns - (double)t->clock[i].mono_ns;
      if (dt > 0 && dn > 0)
        v->ns_per_tick[i] = dn / dt;
    }
  }
}

/* One tick to ns: linear between the synchronisation points around it,
 * at the overall rate outside them. The cursor v->seg moves from where the
 * last conversion left it. */
static int64_t conv_tick_seg(const pp_trace *t, tick_conv *v, uint64_t tick);

/* The same in the segment of the last conversion without a call: the
 * same arithmetic on the same values. */
static inline int64_t conv_tick(const pp_trace *t, tick_conv *v,
                                uint64_t tick) {
  if (v->identity)
    return (int64_t)tick;
  if (v->have_last && tick >= v->lo && (tick < v->hi || v->hi_open))
    return sat_ns(v->base + (double)(tick - v->lo) * v->scale);
  return conv_tick_seg(t, v, tick);
}

static int64_t conv_tick_seg(const pp_trace *t, tick_conv *v, uint64_t tick) {
  size_t k = t->nclock;
  if (k == 0)
    return sat_ns((double)tick / v->fallback);
  const pp_clock_sync *c = t->clock;
  size_t g = v->seg < k ? v->seg : 0;
  if (tick < c[g].tick || (g + 1 < k && c[g + 1].tick <= tick)) {
    while (g + 1 < k && c[g + 1].tick <= tick)
      g++;
    while (g > 0 && c[g].tick > tick)
      g--;
    v->seg = g;
  }
  if (tick >= c[g].tick) { /* the next conversions here take the path
                              above */
    v->lo = c[g].tick;
    v->hi_open = g + 1 >= k;
    v->hi = v->hi_open ? 0 : c[g + 1].tick;
    v->base = (double)c[g].mono_ns;
    v->scale = v->ns_per_tick[g];
    v->have_last = 1;
  }
  /* A multiplication, not a division: this runs for every event. */
  double scale = tick >= c[g].tick ? v->ns_per_tick[g] : 1.0 / v->overall;
  double d = tick >= c[g].tick ? (double)(tick - c[g].tick)
                               : -(double)(c[g].tick - tick);
  return sat_ns((double)c[g].mono_ns + d * scale);
}

/* GPU zones and notes, decoded in ticks, once every event is read. */
static void convert_rest(pp_trace *t, tick_conv *v) {
  for (size_t i = 0; i < t->ngpu; i++) {
    pp_gpu_zone_rec *g = &t->gpu[i];
    int64_t dur = g->end;
    g->start = conv_tick(t, v, (uint64_t)g->start);
    g->launch = conv_tick(t, v, (uint64_t)g->launch);
    if (__builtin_add_overflow(g->start, dur, &g->end))
      g->end = INT64_MAX;
  }
  for (size_t i = 0; i < t->nnotes; i++)
    t->notes[i].ts = conv_tick(t, v, (uint64_t)t->notes[i].ts);
  if (t->nnotes > 1)
    qsort(t->notes, t->nnotes, sizeof *t->notes, cmp_note);
  pp__trace_sort_gpu(t);
}

/* ---- chunk walk ---------------------------------------------------------- */

static int decode_chunk(pp_trace *t, unsigned type, const unsigned char *p,
                        size_t n) {
  ppt_cursor c = {p, p + n, 0};
  switch (type) {
  case PPT_CHUNK_META:
    return decode_meta(t, &c);
  case PPT_CHUNK_CLOCK:
    return decode_clock(t, &c);
  case PPT_CHUNK_SRCLOC:
    return decode_srcloc(t, &c);
  case PPT_CHUNK_THREAD:
    return decode_thread(t, &c);
  case PPT_CHUNK_EVENTS:
    return 0; /* indexed by the first pass, decoded by the second */
  case PPT_CHUNK_DROPS:
    return decode_drops(t, &c);
  case PPT_CHUNK_STATS:
    return t->from_stats ? 0 : decode_stats(t, p, n);
  case PPT_CHUNK_CUDA:
    return decode_cuda(t, &c);
  case PPT_CHUNK_STACKS: {
    int rc = pp_stack_set_decode(&t->stacks, p, n);
    if (rc == -2)
      t->diag.out_of_memory = 1;
    return rc ? -1 : 0;
  }
  case PPT_CHUNK_END:
    t->diag.clean_end = 1;
    return 0;
  default:
    return 0; /* unknown chunk types from newer writers are skipped */
  }
}

/* ---- input: a memory buffer, or a descriptor read in bounded pieces ----
 *
 * The walk sees the input through a window buf[pos..end): in memory it is
 * the whole buffer; from a descriptor it holds at most one chunk (its
 * header and payload, at most PPT_CHUNK_HEADER_SIZE + PPT_MAX_PAYLOAD
 * bytes) plus what the last read() brought, and consumed bytes are
 * dropped before the next fill. */

#define RD_READ_SIZE (1u << 16)

typedef struct rd_src {
  const unsigned char *buf; /* the window's storage (mem, or own) */
  unsigned char *own;       /* descriptor mode: malloc'd storage */
  size_t cap;               /* size of own */
  size_t pos, end;          /* the window */
  size_t gran;              /* bytes a read() asks for at least */
  uint64_t base;            /* file offset of buf[0] */
  int fd;                   /* -1: memory */
  int seekable;             /* fd is a regular file: pread() by offset */
  int eof;
  int io_errno; /* read() failed with this errno */
  int oom;
} rd_src;

/* Make n bytes available at pos if the input has them (never more than
 * the bound above); returns how many are (fewer only at the end of input,
 * on a read error or out of memory). */
static size_t rd_need(rd_src *s, size_t n) {
  while (s->end - s->pos < n && !s->eof) {
    if (s->pos > 0) { /* drop what was consumed */
      memmove(s->own, s->own + s->pos, s->end - s->pos);
      s->base += s->pos;
      s->end -= s->pos;
      s->pos = 0;
    }
    size_t want = n > s->gran ? n : s->gran;
    if (want > s->cap) {
      unsigned char *nb = pp__realloc(s->own, want);
      if (!nb) {
        s->oom = 1;
        s->eof = 1;
        break;
      }
      s->own = nb;
      s->buf = nb;
      s->cap = want;
    }
    ssize_t k = read(s->fd, s->own + s->end, s->cap - s->end);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0) {
      s->io_errno = errno;
      s->eof = 1;
    } else if (k == 0) {
      s->eof = 1;
    } else {
      s->end += (size_t)k;
    }
  }
  size_t have = s->end - s->pos;
  return have < n ? have : n;
}

/* Skip to the next chunk magic after the current position (at least one
 * byte); returns the number of bytes skipped. */
static uint64_t rd_resync(rd_src *s) {
  uint64_t skipped = 1;
  s->pos++;
  for (;;) {
    const unsigned char *d = s->buf;
    size_t i = s->pos;
    for (; i + 4 <= s->end; i++)
      if (d[i] == 0x50 && d[i + 1] == 0x50 && d[i + 2] == 0x43 &&
          d[i + 3] == 0x4B) {
        skipped += i - s->pos;
        s->pos = i;
        return skipped;
      }
    /* Keep a possible partial magic (the last 3 bytes) and read on. */
    size_t keep = s->end - s->pos < 3 ? s->end - s->pos : 3;
    skipped += s->end - keep - s->pos;
    s->pos = s->end - keep;
    if (s->eof || rd_need(s, keep + 1) <= keep) {
      skipped += s->end - s->pos;
      s->pos = s->end;
      return skipped;
    }
  }
}

static uint64_t rd_offset(const rd_src *s) { return s->base + s->pos; }

/* ---- the event chunks: indexed by the first pass, decoded by the second --
 *
 * The first pass decodes every chunk but EVENTS and notes where each
 * intact EVENTS chunk is; once the clock is known the second pass decodes
 * them in file order, so no event needs storing to be converted. */

typedef struct ev_chunk {
  uint64_t off;        /* payload offset in the input */
  uint32_t len;
  uint32_t crc;        /* the payload's CRC-32C, checked again on pread */
  unsigned char *copy; /* a pipe's payload, held (NULL otherwise) */
  /* pp_read_opts.scan_first: what the first pass found (scan_chunk) */
  uint64_t lo_u, lo_s; /* the earliest tick, as unsigned and as signed */
  uint64_t limit;      /* the site bound the scan used (loc_limit) */
  int64_t first_ns;    /* lo converted, once the clock is known */
  int64_t rest_ns;     /* the least first_ns of this chunk and those after
                          it (INT64_MAX: none has an event) */
  uint32_t maxloc;     /* the highest site named */
  uint8_t have;        /* an event was found: the fields above hold */
  uint8_t cut;         /* the scan stopped at a site past limit */
} ev_chunk;

typedef struct ev_index {
  ev_chunk *v;
  size_t n, cap;
} ev_index;

static void ev_index_free(ev_index *x) {
  for (size_t i = 0; i < x->n; i++)
    pp__free(x->v[i].copy);
  pp__free(x->v);
  memset(x, 0, sizeof *x);
}

/* The thread an EVENTS payload belongs to exists from the first pass on,
 * as when every chunk was decoded in one pass (the order of t->threads
 * stays the order of first appearance). A chunk of only anomalies and
 * alerts (thread 0) creates no thread. */
static int ev_chunk_thread(pp_trace *t, const unsigned char *p, size_t n) {
  ppt_cursor c = {p, p + n, 0};
  ppt_events_base base;
  if (ppt_events_base_get(&c, &base) != 0 || c.p >= c.end ||
      ppt_is_note(*c.p))
    return 0;
  return thread_for(t, base.tid) ? 0 : -1;
}

static void scan_chunk(const unsigned char *p, size_t n, uint64_t limit,
                       ev_chunk *e);

static int ev_index_add(pp_trace *t, ev_index *x, const rd_src *s,
                        const unsigned char *payload, uint32_t len,
                        int scan) {
  if (grow(t, (void **)&x->v, &x->cap, x->n + 1, sizeof *x->v) != 0)
    return -1;
  ev_chunk *e = &x->v[x->n];
  memset(e, 0, sizeof *e);
  e->len = len;
  e->crc = pp__crc32c(0, payload, len);
  if (s->fd < 0 || s->seekable) {
    e->off = s->fd < 0 ? (uint64_t)(payload - s->buf)
                       : s->base + (uint64_t)(payload - s->buf);
  } else {
    e->copy = pp__malloc(len ? len : 1);
    if (!e->copy) {
      t->diag.out_of_memory = 1;
      return -1;
    }
    memcpy(e->copy, payload, len);
  }
  if (scan)
    scan_chunk(payload, len, loc_limit(t), e);
  x->n++;
  return ev_chunk_thread(t, payload, len);
}

/* Chunk e's payload: in memory, or read again into *buf (grown to *cap).
 * NULL when it cannot be had: an I/O error (s->io_errno set), memory
 * (diag.out_of_memory set), or *changed set when its bytes are no longer
 * those of the first pass. */
static const unsigned char *chunk_bytes(rd_src *s, pp_trace *t,
                                        const ev_chunk *e, unsigned char **buf,
                                        size_t *cap, int *changed) {
  *changed = 0;
  if (e->copy)
    return e->copy;
  if (s->fd < 0)
    return s->buf + e->off;
  if (e->len > *cap) {
    unsigned char *nb = pp__realloc(*buf, e->len);
    if (!nb) {
      t->diag.out_of_memory = 1;
      return NULL;
    }
    *buf = nb;
    *cap = e->len;
  }
  size_t got = 0;
  while (got < e->len) {
    ssize_t k = pread(s->fd, *buf + got, e->len - got, (off_t)(e->off + got));
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      s->io_errno = k < 0 ? errno : EIO; /* the file shrank */
      return NULL;
    }
    got += (size_t)k;
  }
  if (pp__crc32c(0, *buf, e->len) != e->crc) {
    *changed = 1; /* the file changed under the reader */
    return NULL;
  }
  return *buf;
}

/* The earliest tick in one EVENTS payload and the highest site it names,
 * as decode_events would take them: thread events and GPU zones' launch
 * and start, up to the first bad event (where decode_events stops too).
 * Ticks are kept as the lowest unsigned and the lowest signed value: which
 * one counts depends on the clock (identity ticks are ns as int64_t),
 * known once every chunk is read. The conversion never runs backwards, so
 * only the chunk's earliest tick is converted (first_times). */
/* Keep tick if it is the lowest yet, unsigned and signed (scan_chunk). */
static inline void lowest(uint64_t *lo_u, uint64_t *lo_s, uint64_t tick) {
  if (tick < *lo_u)
    *lo_u = tick;
  if ((int64_t)tick < (int64_t)*lo_s)
    *lo_s = tick;
}

static void scan_chunk(const unsigned char *p, size_t n, uint64_t limit,
                       ev_chunk *e) {
  ppt_cursor c = {p, p + n, 0};
  e->have = e->cut = 0;
  e->maxloc = 0;
  e->limit = limit;
  ppt_events_base base;
  if (ppt_events_base_get(&c, &base) != 0)
    return;
  uint64_t tick = base.tick, lo_u = 0, lo_s = 0;
  uint64_t maxloc = 0;
  int have = 0;
  while (c.p < c.end) {
    ppt_ev r;
    if (ppt_ev_is(*c.p, PPT_L_SITE)) { /* the commonest: type, delta, site */
      c.p++;
      int64_t delta = ppt_get_sv(&c);
      uint64_t loc = ppt__dec_UV(&c, UINT32_MAX);
      if (c.err)
        break;
      if (loc >= limit) {
        e->cut = 1;
        break;
      }
      tick += (uint64_t)delta;
      if (!have) {
        lo_u = lo_s = tick;
        have = 1;
      }
      if (loc > maxloc)
        maxloc = loc;
      lowest(&lo_u, &lo_s, tick);
      continue;
    }
    if (ppt_ev_head(&c, &r) != 0)
      break;
    if (ppt_is_note(r.type)) {
      if (ppt_ev_body(&c, &r) != 0 || c.err)
        break;
      tick += (uint64_t)r.delta;
      continue;
    }
    if (ppt_ev_site(&c, &r) != 0 || ppt_ev_body(&c, &r) != 0 || c.err)
      break;
    if (r.loc >= limit) {
      e->cut = 1;
      break;
    }
    tick += (uint64_t)r.delta;
    if (!have) {
      lo_u = lo_s = tick;
      have = 1;
    }
    if (r.loc > maxloc)
      maxloc = r.loc;
    lowest(&lo_u, &lo_s, tick);
    if (r.type == PPT_EV_GPU_ZONE) /* and its launch */
      lowest(&lo_u, &lo_s, tick + (uint64_t)r.launch);
    if (r.type == PPT_EV_ZONE) /* the chunk's time moves to the end */
      lowest(&lo_u, &lo_s, tick += r.value);
    if (r.type == PPT_EV_ZONES) { /* every begin and end */
      int bad = r.value == 0;
      for (uint64_t k = 0; k < r.value; k++) {
        uint64_t gap, dur;
        if ((bad = ppt_zones_get(&c, k == 0, &gap, &dur) != 0))
          break;
        lowest(&lo_u, &lo_s, tick += gap);
        lowest(&lo_u, &lo_s, tick += dur);
      }
      if (bad)
        break;
    }
  }
  e->lo_u = lo_u;
  e->lo_s = lo_s;
  e->maxloc = (uint32_t)maxloc;
  e->have = (uint8_t)have;
}

static const unsigned char *chunk_bytes(rd_src *s, pp_trace *t,
                                        const ev_chunk *e, unsigned char **buf,
                                        size_t *cap, int *changed);

/* The earliest time before any event is handed on (diag.first_ns), from
 * the first pass's scans, and each chunk's earliest time (first_ns). A
 * chunk whose scan stopped at the site bound is scanned again when the
 * bound grew since (a file that grew while read). Sites an event names
 * beyond those defined are made now, as decode_events would make them,
 * so that the trace's sites are final before its first event. */
static void first_times(rd_src *s, pp_trace *t, ev_index *x, tick_conv *v,
                        unsigned char **buf, size_t *cap) {
  int any = 0, anyloc = 0;
  int64_t first = 0;
  uint32_t maxloc = 0;
  uint64_t limit = loc_limit(t);
  int stop = 0, changed;
  for (size_t i = 0; i < x->n; i++) {
    ev_chunk *e = &x->v[i];
    if (e->cut && e->limit != limit && !stop) {
      const unsigned char *p = chunk_bytes(s, t, e, buf, cap, &changed);
      if (p)
        scan_chunk(p, e->len, limit, e);
      else
        e->have = 0;
      stop = !p && !changed; /* an I/O error: the decode meets it too */
    } else if (e->cut && e->limit != limit) {
      e->have = 0;
    }
    if (!e->have)
      continue;
    e->first_ns = conv_tick(t, v, v->identity ? e->lo_s : e->lo_u);
    if (!any || e->first_ns < first) {
      first = e->first_ns;
      any = 1;
    }
    if (!anyloc || e->maxloc > maxloc)
      maxloc = e->maxloc;
    anyloc = 1;
  }
  int64_t rest = INT64_MAX;
  for (size_t i = x->n; i-- > 0;) {
    ev_chunk *e = &x->v[i];
    if (e->have && e->first_ns < rest)
      rest = e->first_ns;
    e->rest_ns = rest;
  }
  s->io_errno = 0;
  t->diag.first_ns = first;
  t->diag.have_first = any;
  if (anyloc && maxloc >= t->nlocs && !loc_slot(t, maxloc))
    t->diag.out_of_memory = 1;
}

/* The read of one input in its stages: the header and the first pass
 * (read_first), the second pass chunk by chunk (dec_begin, dec_chunk,
 * dec_end), then the names and the verdict (read_last). read_src runs
 * them in a row; a pp__trace_reader runs the second pass as its caller
 * steps it. */
typedef struct rd_state {
  rd_src s;
  pp_trace *t;
  pp_read_opts o;
  ev_index idx;
  ev_pass ps;
  unsigned char *buf; /* a chunk read again */
  size_t cap;
  size_t next; /* the next chunk of idx to decode */
  uint64_t size_hint;
  int decoding; /* dec_begin ran and dec_end did not */
  int stopped;  /* the second pass is over */
} rd_state;

/* The second pass's start: the clock, and the earliest time when asked. */
static void dec_begin(rd_state *r) {
  pp_trace *t = r->t;
  memset(&r->ps, 0, sizeof r->ps);
  r->ps.opts = &r->o;
  r->next = 0;
  r->stopped = 0;
  if (r->s.oom || t->diag.out_of_memory || r->s.io_errno) {
    r->stopped = 1; /* nothing to decode: read_last says why */
    return;
  }
  r->decoding = 1;
  prepare_clock(t, &r->ps.conv);
  if (!t->diag.out_of_memory && r->o.scan_first)
    first_times(&r->s, t, &r->idx, &r->ps.conv, &r->buf, &r->cap);
  if (t->diag.out_of_memory)
    r->stopped = 1;
}

/* Decode the next chunk; 0, or -1 when the pass is over (every chunk
 * done, or it had to stop). */
static int dec_chunk(rd_state *r) {
  pp_trace *t = r->t;
  if (r->stopped || r->next >= r->idx.n || t->diag.out_of_memory) {
    r->stopped = 1;
    return -1;
  }
  const ev_chunk *e = &r->idx.v[r->next++];
  int changed;
  const unsigned char *p =
      chunk_bytes(&r->s, t, e, &r->buf, &r->cap, &changed);
  if (!p) {
    if (!changed) {
      r->stopped = 1;
      return -1;
    }
    t->diag.chunks_bad++;
    return 0;
  }
  ppt_cursor c = {p, p + e->len, 0};
  if (decode_events(t, &c, &r->ps) != 0) {
    if (t->diag.out_of_memory) {
      r->stopped = 1;
      return -1;
    }
    t->diag.chunks_bad++;
  } else {
    t->diag.chunks_ok++;
  }
  return 0;
}

static void dec_end(rd_state *r) {
  if (!r->decoding)
    return;
  r->decoding = 0;
  pp__free(r->buf);
  r->buf = NULL;
  r->cap = 0;
  if (!r->t->diag.out_of_memory && !r->s.io_errno)
    convert_rest(r->t, &r->ps.conv);
  pp__free(r->ps.conv.ns_per_tick);
  r->ps.conv.ns_per_tick = NULL;
}

/* The header and the first pass. 0, or -1 (err set). */
static int read_first(rd_state *r, char *err, size_t errlen) {
  rd_src *s = &r->s;
  pp_trace *t = r->t;
  const pp_read_opts *o = &r->o;
  ev_index *idx = &r->idx;
  uint64_t size_hint = r->size_hint;
  memset(t, 0, sizeof *t);
  t->diag.file_bytes = size_hint;
  t->diag.first_unkept_ns = INT64_MAX;
  size_t have = rd_need(s, PPT_FILE_HEADER_SIZE);
  const unsigned char *d = s->buf + s->pos;
  if (s->io_errno) {
    pp__err_set(err, errlen, "cannot read: %s", strerror(s->io_errno));
    return -1;
  }
  if (have == 0) {
    pp__err_set(err, errlen, "empty file");
    return -1;
  }
  if (have < 8 || memcmp(d, PPT_FILE_MAGIC, 8) != 0) {
    pp__err_set(err, errlen, "not a pipeprof trace (bad magic)");
    return -1;
  }
  if (have < PPT_FILE_HEADER_SIZE) {
    pp__err_set(err, errlen, "truncated file header (%zu bytes)", have);
    return -1;
  }
  if (ppt_get_u16(d + 8) != PPT_VERSION_MAJOR) {
    pp__err_set(err, errlen, "unsupported trace format version %u",
            (unsigned)ppt_get_u16(d + 8));
    return -1;
  }
  t->pid = ppt_get_u32(d + 20);
  t->format_minor = ppt_get_u16(d + 10);
  s->pos += PPT_FILE_HEADER_SIZE;
  s->gran = RD_READ_SIZE;
  for (;;) {
    have = rd_need(s, PPT_CHUNK_HEADER_SIZE);
    /* The id bounds grow with the input seen (a FIFO has no size). */
    if (s->base + s->end > t->diag.file_bytes)
      t->diag.file_bytes = s->base + s->end;
    if (have < PPT_CHUNK_HEADER_SIZE)
      break;
    const unsigned char *h = s->buf + s->pos;
    uint32_t plen = ppt_get_u32(h + 8);
    if (!ppt_chunk_header_ok(h)) {
      if (ppt_get_u32(h) == PPT_CHUNK_MAGIC)
        t->diag.chunks_bad++;
      t->diag.bytes_skipped += rd_resync(s);
      continue;
    }
    size_t total = PPT_CHUNK_HEADER_SIZE + plen;
    have = rd_need(s, total);
    if (have < total) {
      if (s->oom)
        break;
      t->diag.truncated = 1;
      t->diag.bytes_skipped += have;
      s->pos += have;
      break;
    }
    h = s->buf + s->pos; /* the window may have moved */
    const unsigned char *payload = h + PPT_CHUNK_HEADER_SIZE;
    s->pos += total;
    if (ppt_get_u32(h + 12) != pp__crc32c(0, payload, plen)) {
      t->diag.chunks_bad++;
      t->diag.bytes_skipped += total;
      continue;
    }
    unsigned type = ppt_get_u16(h + 4);
    if (type == PPT_CHUNK_EVENTS) {
      if (ev_index_add(t, idx, s, payload, plen, o->scan_first) != 0 &&
          t->diag.out_of_memory)
        break; /* counted ok or bad when decoded */
      continue;
    }
    if (decode_chunk(t, type, payload, plen) != 0) {
      if (t->diag.out_of_memory)
        break;
      t->diag.chunks_bad++;
    } else {
      t->diag.chunks_ok++;
    }
  }
  if (s->end > s->pos && !s->oom && !t->diag.out_of_memory) {
    t->diag.truncated = 1;
    t->diag.bytes_skipped += s->end - s->pos;
    s->pos = s->end;
  }
  uint64_t offset = rd_offset(s);
  if (offset > t->diag.file_bytes)
    t->diag.file_bytes = offset;
  return 0;
}

/* Names, and the verdict. 0, -1 (err set) or PP_TRACE_ENOMEM. */
static int read_last(rd_state *r, char *err, size_t errlen) {
  rd_src *s = &r->s;
  pp_trace *t = r->t;
  uint64_t size_hint = r->size_hint;
  uint64_t offset = rd_offset(s);
  dec_end(r);
  ev_index_free(&r->idx);
  pp_stack_set_file_done(&t->stacks);
  /* Name every loc an event or statistic refers to. */
  for (size_t i = 0; i < t->nlocs && !s->oom && !t->diag.out_of_memory;
       i++) {
    pp_loc *l = &t->locs[i];
    if (!l->name) {
      char buf[32];
      snprintf(buf, sizeof buf, "(unknown #%zu)", i);
      l->name = pp__strdup(buf);
      l->function = pp__strdup("");
      l->file = pp__strdup("");
      if (!l->name || !l->function || !l->file)
        t->diag.out_of_memory = 1;
    }
  }
  if (s->oom || t->diag.out_of_memory) {
    uint64_t events = t->diag.events + t->ngpu; /* stored or not */
    pp_trace_free(t);
    t->diag.out_of_memory = 1;
    pp__err_set(err, errlen, "(after %llu of %llu bytes, %llu events decoded)",
            (unsigned long long)offset,
            (unsigned long long)(size_hint > offset ? size_hint : offset),
            (unsigned long long)events);
    return PP_TRACE_ENOMEM;
  }
  if (s->io_errno) {
    pp_trace_free(t);
    pp__err_set(err, errlen, "cannot read after %llu bytes: %s",
            (unsigned long long)offset, strerror(s->io_errno));
    return -1;
  }
  return 0;
}

/* Header, chunks, names, ticks. 0, -1 (err set) or PP_TRACE_ENOMEM. */
static int read_src(rd_state *r, char *err, size_t errlen) {
  if (read_first(r, err, errlen) != 0) {
    ev_index_free(&r->idx);
    return -1;
  }
  dec_begin(r);
  while (dec_chunk(r) == 0)
    ;
  return read_last(r, err, errlen);
}

static const pp_read_opts keep_all = {UINT64_MAX, NULL, NULL, 0};

int pp_trace_read_mem_opts(const unsigned char *d, size_t len, pp_trace *t,
                           const pp_read_opts *o, char *err, size_t errlen) {
  rd_state r;
  memset(&r, 0, sizeof r);
  r.s.buf = d;
  r.s.end = d ? len : 0;
  r.s.fd = -1;
  r.s.eof = 1;
  r.t = t;
  r.o = o ? *o : keep_all;
  r.size_hint = len;
  char inner[200] = "";
  int rc = read_src(&r, inner, sizeof inner);
  if (rc == PP_TRACE_ENOMEM)
    pp__err_set(err, errlen, "out of memory reading the trace %s", inner);
  else if (rc != 0)
    pp__err_set(err, errlen, "%s", inner);
  return rc;
}

int pp_trace_read_mem(const unsigned char *d, size_t len, pp_trace *t,
                      char *err, size_t errlen) {
  return pp_trace_read_mem_opts(d, len, t, NULL, err, errlen);
}

/* Open path for r (r->t and r->o set by the caller). 0, or -1 with err
 * set as pp_trace_read_file_opts sets it; r then holds the descriptor
 * (file_done closes it). */
static int open_file(rd_state *r, const char *path, char *err,
                     size_t errlen) {
  memset(r->t, 0, sizeof *r->t);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    pp__err_set(err, errlen, "cannot open %s: %s", path, strerror(errno));
    return -1;
  }
  struct stat st;
  uint64_t size = 0;
  int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (regular && st.st_size > 0)
    size = (uint64_t)st.st_size;
  rd_src *s = &r->s;
  memset(s, 0, sizeof *s);
  s->fd = fd;
  s->seekable = regular;
  r->size_hint = size;
  /* The header alone first: a non-trace input is refused after reading
   * PPT_FILE_HEADER_SIZE bytes. */
  s->cap = s->gran = PPT_FILE_HEADER_SIZE;
  s->own = pp__malloc(s->cap);
  s->buf = s->own;
  return 0;
}

static int file_done(rd_state *r, int rc, const char *path,
                     const char *inner, char *err, size_t errlen) {
  pp__free(r->buf);
  r->buf = NULL;
  pp__free(r->s.own);
  r->s.own = NULL;
  close(r->s.fd);
  r->s.fd = -1;
  if (rc == PP_TRACE_ENOMEM)
    pp__err_set(err, errlen, "out of memory reading %s %s", path, inner);
  else if (rc != 0)
    pp__err_set(err, errlen, "%s: %s", path, inner);
  return rc;
}

int pp_trace_read_file_opts(const char *path, pp_trace *t,
                            const pp_read_opts *o, char *err,
                            size_t errlen) {
  rd_state r;
  memset(&r, 0, sizeof r);
  r.t = t;
  r.o = o ? *o : keep_all;
  if (open_file(&r, path, err, errlen) != 0)
    return -1;
  char inner[200] = "";
  int rc = r.s.own ? read_src(&r, inner, sizeof inner) : PP_TRACE_ENOMEM;
  return file_done(&r, rc, path, inner, err, errlen);
}

/* ---- a file read as its caller steps it (reader.h pp__trace_reader) --- */

struct pp__trace_reader {
  rd_state r;
  char *path;
};

int pp__trace_reader_open(const char *path, pp_trace *t,
                          const pp_read_opts *o, pp__trace_reader **out,
                          char *err, size_t errlen) {
  *out = NULL;
  memset(t, 0, sizeof *t);
  pp__trace_reader *x = pp__calloc(1, sizeof *x);
  if (!x || !(x->path = pp__strdup(path))) {
    pp__free(x);
    pp__err_set(err, errlen, "out of memory reading %s", path);
    return PP_TRACE_ENOMEM;
  }
  x->r.t = t;
  x->r.o = o ? *o : keep_all;
  if (open_file(&x->r, path, err, errlen) != 0) {
    pp__free(x->path);
    pp__free(x);
    return -1;
  }
  char inner[200] = "";
  int rc = PP_TRACE_ENOMEM;
  if (x->r.s.own && (rc = read_first(&x->r, inner, sizeof inner)) == 0) {
    dec_begin(&x->r);
    *out = x;
    return 0;
  }
  ev_index_free(&x->r.idx);
  pp_trace_free(t);
  rc = file_done(&x->r, rc, path, inner, err, errlen);
  pp__free(x->path);
  pp__free(x);
  return rc;
}

int pp__trace_reader_next(const pp__trace_reader *x, int64_t *first_ns) {
  const rd_state *r = &x->r;
  if (r->stopped || r->next >= r->idx.n || r->t->diag.out_of_memory)
    return 0;
  const ev_chunk *e = &r->idx.v[r->next];
  *first_ns = e->have ? e->first_ns : INT64_MIN;
  return 1;
}

int64_t pp__trace_reader_horizon(const pp__trace_reader *x) {
  const rd_state *r = &x->r;
  if (!r->o.scan_first || r->stopped || r->next >= r->idx.n ||
      r->t->diag.out_of_memory)
    return r->o.scan_first ? INT64_MAX : INT64_MIN;
  return r->idx.v[r->next].rest_ns;
}

int pp__trace_reader_step(pp__trace_reader *x) {
  return dec_chunk(&x->r) == 0 ? 0 : -1;
}

int pp__trace_reader_finish(pp__trace_reader *x, char *err, size_t errlen) {
  char inner[200] = "";
  int rc = read_last(&x->r, inner, sizeof inner);
  rc = file_done(&x->r, rc, x->path, inner, err, errlen);
  pp__free(x->path);
  pp__free(x);
  return rc;
}

int pp_trace_read_file(const char *path, pp_trace *t, char *err,
                       size_t errlen) {
  return pp_trace_read_file_opts(path, t, NULL, err, errlen);
}

void pp_trace_free(pp_trace *t) {
  if (!t)
    return;
  for (size_t i = 0; i < t->nmeta; i++) {
    pp__free(t->meta[i].key);
    pp__free(t->meta[i].value);
  }
  pp__free(t->meta);
  for (size_t i = 0; i < t->nlocs; i++) {
    pp__free(t->locs[i].name);
    pp__free(t->locs[i].function);
    pp__free(t->locs[i].file);
  }
  pp__free(t->locs);
  for (size_t i = 0; i < t->nthreads; i++) {
    pp__free(t->threads[i].name);
    pp__free(t->threads[i].ev);
  }
  pp__free(t->threads);
  pp__free(t->clock);
  for (size_t i = 0; i < t->nnotes; i++) {
    pp__free(t->notes[i].what);
    pp__free(t->notes[i].which);
    pp__free(t->notes[i].message);
  }
  pp__free(t->notes);
  pp__free(t->gpu);
  pp__free(t->tid_index);
  t->tid_index = NULL;
  t->tid_index_cap = t->tid_index_n = 0;
  pp__free(t->stats);
  for (size_t i = 0; i < t->nstats_parts; i++) {
    pp__free(t->stats_parts[i].stats);
    pp__free(t->stats_parts[i].map);
  }
  pp__free(t->stats_parts);
  pp_cuda_trace_free(&t->cuda);
  for (size_t i = 0; i < t->nshapes; i++)
    pp__free(t->shapes[i].shape);
  pp__free(t->shapes);
  pp_stack_set_free(&t->stacks);
  memset(t, 0, sizeof *t);
}
