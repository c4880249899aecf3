/* SPDX-License-Identifier: MIT */
/*
 * The .pptrace writer->reader round trip, shared by tests/test-format.c
 * (bytes from a seeded generator, many seeds) and
 * fuzz/fuzz_format_roundtrip.c (the fuzzer's bytes): the input bytes
 * choose chunks, event types, values and lengths; the chosen records are
 * encoded with the format's encoders (format/events.h, format/records.h)
 * into a file as the writer lays one out (file header, chunks with their
 * checksums and sequence numbers), the file is read with
 * pp_trace_read_mem(), and every decoded field is compared with what was
 * generated. Times are ticks of a tick_source=monotonic file, so the
 * reader takes them as ns unchanged.
 *
 * rt_run() returns 0, or -1 with the first difference in why. Only what
 * the format allows is generated (a value the reader would refuse is a
 * reader test, not a round trip); the reader's documented clamps (a site
 * kind past 255 reads as 0, ...) are generated too and expected.
 */
#ifndef PP_FUZZ_ROUNDTRIP_H
#define PP_FUZZ_ROUNDTRIP_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "model/reader.h"
#include "format/records.h"
#include "internal.h"
#include "stats/histogram.h"

#define RT_LOCS 32u /* site ids 0..31 */
#define RT_THREADS 16u
#define RT_EVENTS 4096u /* events of all threads */
#define RT_ITEMS 256u   /* notes, GPU zones, CUDA records of each kind */
#define RT_ARENA (1u << 16)

/* ---- the bytes that drive the generator ---- */
typedef struct rt_src {
  const uint8_t *d;
  size_t n, pos;
} rt_src;

static int rt_more(const rt_src *s) { return s->pos < s->n; }

static unsigned rt_byte(rt_src *s) { return rt_more(s) ? s->d[s->pos++] : 0; }

static uint64_t rt_bytes(rt_src *s, unsigned k) {
  uint64_t v = 0;
  for (unsigned i = 0; i < k; i++)
    v |= (uint64_t)rt_byte(s) << (8 * i);
  return v;
}

/* A number, often an extreme one. */
static uint64_t rt_u64(rt_src *s) {
  switch (rt_byte(s) % 10) {
  case 0:
    return 0;
  case 1:
    return UINT64_MAX;
  case 2:
    return (uint64_t)INT64_MAX;
  case 3:
    return (uint64_t)INT64_MIN;
  case 4:
    return rt_bytes(s, 1);
  case 5:
    return rt_bytes(s, 2);
  case 6:
    return rt_bytes(s, 4);
  default:
    return rt_bytes(s, 8);
  }
}

/* A double, often one a counter should never hold (NaN, inf, -0). */
static double rt_f64(rt_src *s) {
  switch (rt_byte(s) % 8) {
  case 0:
    return NAN;
  case 1:
    return INFINITY;
  case 2:
    return -INFINITY;
  case 3:
    return -0.0;
  case 4:
    return 5e-324; /* the smallest subnormal */
  default: {
    uint64_t u = rt_bytes(s, 8);
    double d;
    memcpy(&d, &u, 8);
    return d; /* any bit pattern, NaN payloads included */
  }
  }
}

/* ---- what was generated: the trace the reader should rebuild ---- */
typedef struct rt_thread {
  uint64_t tid;
  ppt_str name;
  uint64_t dropped;
  int64_t busy; /* STATS */
  int has_busy;
} rt_thread;

typedef struct rt_gpu {
  ppt_ev e;
  uint64_t tid, tick;
} rt_gpu;

typedef struct rt_note {
  ppt_ev e;
  uint64_t tick;
} rt_note;

typedef struct rt_gen {
  rt_src *src;
  char arena[RT_ARENA];
  size_t arena_used;
  ppt_buf file;
  uint32_t seq;
  uint64_t chunks;
  /* model */
  ppt_meta meta[64];
  size_t nmeta;
  ppt_clock clock[64];
  size_t nclock;
  ppt_srcloc locs[RT_LOCS];
  int loc_defined[RT_LOCS];
  size_t nlocs; /* largest site id referenced + 1 */
  rt_thread threads[RT_THREADS];
  size_t nthreads;
  pp_event ev[RT_EVENTS];
  uint32_t ev_thread[RT_EVENTS];
  size_t nev;
  size_t nzone, nzoneruns; /* ZONE and ZONES events written (read as
                              their zones' begins and ends in ev) */
  rt_gpu gpu[RT_ITEMS];
  size_t ngpu;
  rt_note notes[RT_ITEMS];
  size_t nnotes;
  uint64_t note_tick;
  int clean_end;
  /* STATS (at most one chunk is read) */
  int has_stats, stats_minor;
  ppt_stats_zone szones[8];
  pp_hist szone_h[8][2];
  size_t nszones;
  ppt_stats_thread sthreads[8];
  size_t nsthreads;
  ppt_stats_frame sframes[8];
  pp_hist sframe_h[8];
  size_t nsframes;
  ppt_stats_counter scounters[8];
  size_t nscounters;
  ppt_stats_totals stotals;
  ppt_stats_gpu sgpu[16];
  pp_hist sgpu_h[16];
  size_t nsgpu;
  uint64_t sgpu_lost;
  ppt_stats_pairing spairing;
  /* CUDA */
  uint64_t cuda_chunks;
  ppt_str cuda_names[64];
  int cuda_named[64];
  size_t cuda_nnames;
  ppt_cuda_kernel kernels[RT_ITEMS];
  size_t nkernels;
  ppt_cuda_memcpy memcpys[RT_ITEMS];
  size_t nmemcpys;
  ppt_cuda_memset memsets[RT_ITEMS];
  size_t nmemsets;
  ppt_cuda_sync syncs[RT_ITEMS];
  size_t nsyncs;
  ppt_cuda_api apis[RT_ITEMS];
  size_t napis;
  uint64_t cuda_dropped;
} rt_gen;

/* A printable string of 0..max bytes, kept in the arena. */
static ppt_str rt_str(rt_gen *g, const char *prefix, size_t max) {
  size_t lp = strlen(prefix);
  size_t n = rt_byte(g->src) % (max + 1);
  if (g->arena_used + lp + n > RT_ARENA)
    n = lp = 0;
  char *s = g->arena + g->arena_used;
  memcpy(s, prefix, lp);
  for (size_t i = 0; i < n; i++)
    s[lp + i] = (char)(0x20 + rt_byte(g->src) % 0x5f);
  g->arena_used += lp + n;
  ppt_str r = {s, lp + n};
  return r;
}

static void rt_chunk(rt_gen *g, uint16_t type, ppt_buf *payload) {
  unsigned char hdr[PPT_CHUNK_HEADER_SIZE];
  ppt_chunk_header(hdr, type, payload->data, (uint32_t)payload->len, g->seq++);
  ppt_buf_bytes(&g->file, hdr, sizeof hdr);
  ppt_buf_bytes(&g->file, payload->data, payload->len);
  payload->len = 0;
  g->chunks++;
}

static uint32_t rt_loc(rt_gen *g) {
  uint32_t id = (uint32_t)(rt_byte(g->src) % RT_LOCS);
  if (id >= g->nlocs)
    g->nlocs = id + 1;
  return id;
}

/* The thread with this tid, created (as the reader creates them, at first
 * mention) if new; NULL when there are enough. */
static rt_thread *rt_thread_for(rt_gen *g, uint64_t tid) {
  for (size_t i = 0; i < g->nthreads; i++)
    if (g->threads[i].tid == tid)
      return &g->threads[i];
  if (g->nthreads == RT_THREADS)
    return NULL;
  rt_thread *t = &g->threads[g->nthreads++];
  memset(t, 0, sizeof *t);
  t->tid = tid;
  t->name.s = "";
  return t;
}

/* A tid: an existing thread's or a new one (never 0: the notes' chunks
 * use thread 0 and create no thread). */
static uint64_t rt_tid(rt_gen *g) {
  if (g->nthreads && (rt_byte(g->src) & 3) != 0)
    return g->threads[rt_byte(g->src) % g->nthreads].tid;
  if (g->nthreads == RT_THREADS)
    return g->threads[0].tid;
  uint64_t tid = rt_u64(g->src);
  return tid ? tid : 1;
}

/* ---- chunks ---- */

static void rt_gen_meta(rt_gen *g, ppt_buf *b, int first) {
  size_t n = first ? 1 + rt_byte(g->src) % 4 : 1 + rt_byte(g->src) % 4;
  if (g->nmeta + n > 64)
    return;
  ppt_count_put_n(b, n);
  for (size_t i = 0; i < n; i++) {
    ppt_meta m;
    if (first && i == 0) {
      m.key = ppt_str_of("tick_source");
      m.value = ppt_str_of("monotonic");
    } else { /* "k." keeps clear of the keys the reader looks up */
      m.key = rt_str(g, "k.", 12);
      m.value = rt_str(g, "", 40);
    }
    ppt_meta_put(b, &m);
    g->meta[g->nmeta++] = m;
  }
  rt_chunk(g, PPT_CHUNK_META, b);
}

/* Clock points rise in both ticks and ns, so the reader keeps them all
 * and in order. */
static void rt_gen_clock(rt_gen *g, ppt_buf *b) {
  size_t n = 1 + rt_byte(g->src) % 3;
  for (size_t i = 0; i < n && g->nclock < 64; i++) {
    ppt_clock r;
    if (g->nclock == 0) {
      r.tick = rt_bytes(g->src, 7);
      r.mono_ns = (int64_t)rt_bytes(g->src, 7) - (INT64_C(1) << 55);
    } else {
      const ppt_clock *p = &g->clock[g->nclock - 1];
      r.tick = p->tick + 1 + rt_bytes(g->src, 4);
      r.mono_ns = p->mono_ns + 1 + (int64_t)rt_bytes(g->src, 4);
    }
    r.real_ns = (int64_t)rt_u64(g->src);
    ppt_clock_put(b, &r);
    g->clock[g->nclock++] = r;
  }
  rt_chunk(g, PPT_CHUNK_CLOCK, b);
}

static void rt_gen_srcloc(rt_gen *g, ppt_buf *b) {
  size_t n = 1 + rt_byte(g->src) % 4;
  for (size_t i = 0; i < n; i++) {
    ppt_srcloc r;
    r.id = rt_loc(g);
    /* kinds past 255 and lines past UINT32_MAX read as 0 */
    r.kind = rt_byte(g->src) % 4 == 0 ? rt_u64(g->src) : rt_byte(g->src);
    r.name = rt_str(g, "", 24);
    r.function = rt_str(g, "", 16);
    r.file = rt_str(g, "", 16);
    r.line = rt_u64(g->src);
    ppt_srcloc_put(b, &r);
    g->locs[r.id] = r;
    g->loc_defined[r.id] = 1;
  }
  rt_chunk(g, PPT_CHUNK_SRCLOC, b);
}

static void rt_gen_thread(rt_gen *g, ppt_buf *b) {
  size_t n = 1 + rt_byte(g->src) % 3;
  for (size_t i = 0; i < n; i++) {
    ppt_thread r = {rt_tid(g), rt_str(g, "", 20)};
    rt_thread *t = rt_thread_for(g, r.tid);
    if (!t)
      break;
    t->name = r.name;
    ppt_thread_put(b, &r);
  }
  if (b->len)
    rt_chunk(g, PPT_CHUNK_THREAD, b);
}

static void rt_gen_drops(rt_gen *g, ppt_buf *b) {
  size_t n = 1 + rt_byte(g->src) % 3;
  for (size_t i = 0; i < n; i++) {
    ppt_drops r = {rt_tid(g), rt_bytes(g->src, 5)};
    rt_thread *t = rt_thread_for(g, r.tid);
    if (!t)
      break;
    t->dropped += r.n;
    ppt_drops_put(b, &r);
  }
  if (b->len)
    rt_chunk(g, PPT_CHUNK_DROPS, b);
}

/* One EVENTS chunk of a thread: every type but the notes, any deltas
 * (negative ones included), extreme values. */
static void rt_gen_events(rt_gen *g, ppt_buf *b) {
  uint64_t tid = rt_tid(g);
  /* the reader makes the thread at the chunk's first event: a chunk of
   * none makes none (rt_tid's tids always find a slot) */
  uint32_t thi = UINT32_MAX;
#define RT_THREAD_NOW()                                                        \
  do {                                                                         \
    rt_thread *t_ = thi == UINT32_MAX ? rt_thread_for(g, tid) : NULL;          \
    if (t_)                                                                    \
      thi = (uint32_t)(t_ - g->threads);                                       \
  } while (0)
  ppt_events_base base = {tid, rt_u64(g->src)};
  ppt_events_base_put(b, &base);
  uint64_t tick = base.tick;
  size_t n = 1 + rt_byte(g->src) % 48;
  for (size_t i = 0; i < n; i++) {
    ppt_ev e;
    memset(&e, 0, sizeof e);
    do
      e.type = 1 + rt_byte(g->src) % PPT_EV_MAX_;
    while (ppt_is_note(e.type));
    e.delta = (int64_t)rt_u64(g->src);
    e.loc = rt_loc(g);
    e.value = rt_u64(g->src);
    if (e.type == PPT_EV_COUNTER_SETF) {
      double d = rt_f64(g->src);
      memcpy(&e.value, &d, 8);
    }
    unsigned layout = ppt_ev_layout(e.type);
    if (layout == PPT_L_SITE_UV2)
      e.extra = rt_u64(g->src);
    if (layout == PPT_L_MEM) {
      e.extra = rt_u64(g->src) & PPT_MEM_MAX_BYTES;
      e.device = rt_byte(g->src);
    }
    if (layout == PPT_L_GPU) {
      e.device = rt_u64(g->src) & UINT32_MAX;
      e.extra = rt_u64(g->src);
      e.launch = (int64_t)rt_u64(g->src);
      e.dur = rt_u64(g->src) & (uint64_t)INT64_MAX;
    }
    if (layout == PPT_L_ZONES)
      e.value = 1 + rt_byte(g->src) % 6;
    size_t reads_as = layout == PPT_L_ZONES ? 2 * (size_t)e.value : 2;
    if (layout == PPT_L_GPU ? g->ngpu == RT_ITEMS
                            : g->nev + reads_as >= RT_EVENTS)
      break;
    tick += (uint64_t)e.delta;
    ppt_buf_ev(b, &e);
    if (layout == PPT_L_ZONES) { /* the zones: each read as two events */
      g->nzoneruns++;
      for (uint64_t k = 0; k < e.value; k++) {
        uint64_t gap = k ? rt_u64(g->src) : 0, dur = rt_u64(g->src);
        if (ppt_buf_reserve(b, 20) != 0)
          return;
        b->len += ppt_zones_put(b->data + b->len, k == 0, gap, dur);
        for (int half = 0; half < 2; half++) {
          tick += half ? dur : gap;
          pp_event *x = &g->ev[g->nev];
          memset(x, 0, sizeof *x);
          x->ts = (int64_t)tick;
          x->loc = (uint32_t)e.loc;
          x->type = half ? PPT_EV_ZONE_END : PPT_EV_ZONE_BEGIN;
          RT_THREAD_NOW();
          g->ev_thread[g->nev++] = thi;
        }
      }
      continue;
    }
    if (layout == PPT_L_GPU) {
      RT_THREAD_NOW();
      rt_gpu *z = &g->gpu[g->ngpu++];
      z->e = e;
      z->tid = tid;
      z->tick = tick;
      continue;
    }
    pp_event *x = &g->ev[g->nev];
    memset(x, 0, sizeof *x);
    x->ts = (int64_t)tick;
    x->loc = (uint32_t)e.loc;
    x->type = (uint8_t)e.type;
    if (e.type == PPT_EV_ZONE) { /* read as a begin and its end */
      g->nzone++;
      x->type = PPT_EV_ZONE_BEGIN;
      RT_THREAD_NOW();
      g->ev_thread[g->nev++] = thi;
      tick += e.value;
      x = &g->ev[g->nev];
      memset(x, 0, sizeof *x);
      x->ts = (int64_t)tick;
      x->loc = (uint32_t)e.loc;
      x->type = PPT_EV_ZONE_END;
      g->ev_thread[g->nev++] = thi;
      continue;
    }
    /* what the table says the reader makes of the fields */
    x->v.id = layout == PPT_L_SITE ? 0 : e.value;
    x->v2 = layout == PPT_L_MEM ? e.extra | e.device << 56 : e.extra;
    RT_THREAD_NOW();
    g->ev_thread[g->nev++] = thi;
  }
#undef RT_THREAD_NOW
  rt_chunk(g, PPT_CHUNK_EVENTS, b);
}

/* Anomalies and alerts in a chunk of thread 0, as the writer puts them:
 * rising times (the reader sorts notes by time). */
static void rt_gen_notes(rt_gen *g, ppt_buf *b) {
  size_t n = 1 + rt_byte(g->src) % 4;
  if (g->nnotes + n > RT_ITEMS)
    return;
  uint64_t first = g->note_tick + 1 + rt_bytes(g->src, 3);
  ppt_events_base base = {0, first - rt_byte(g->src)};
  ppt_events_base_put(b, &base);
  uint64_t prev = base.tick;
  for (size_t i = 0; i < n; i++) {
    uint64_t tick = i ? g->note_tick + 1 + rt_bytes(g->src, 3) : first;
    ppt_ev e;
    memset(&e, 0, sizeof e);
    e.type = rt_byte(g->src) & 1 ? PPT_EV_ALERT : PPT_EV_ANOMALY;
    e.delta = (int64_t)(tick - prev);
    e.what = rt_str(g, "", 12);
    e.which = rt_str(g, "", 20);
    e.message = rt_str(g, "", 60);
    e.nvalue = rt_f64(g->src);
    e.baseline = rt_f64(g->src);
    e.spread = rt_f64(g->src);
    e.threshold = rt_f64(g->src);
    ppt_buf_ev(b, &e);
    rt_note *x = &g->notes[g->nnotes++];
    x->e = e;
    x->tick = tick;
    prev = g->note_tick = tick;
  }
  rt_chunk(g, PPT_CHUNK_EVENTS, b);
}

static void rt_hist(rt_gen *g, pp_hist *h) {
  pp_hist_init(h);
  size_t n = rt_byte(g->src) % 6;
  for (size_t i = 0; i < n; i++)
    pp_hist_record(h, rt_bytes(g->src, 1 + rt_byte(g->src) % 6));
}

static void rt_gen_stats(rt_gen *g, ppt_buf *b) {
  g->has_stats = 1;
  g->stats_minor = 2 + rt_byte(g->src) % 3; /* 1.2, 1.3 or 1.4 layout */
  g->nszones = rt_byte(g->src) % 4;
  ppt_count_put_n(b, g->nszones);
  for (size_t i = 0; i < g->nszones; i++) {
    ppt_stats_zone *z = &g->szones[i];
    rt_hist(g, &g->szone_h[i][0]);
    rt_hist(g, &g->szone_h[i][1]);
    z->loc = rt_loc(g);
    z->count = rt_u64(g->src);
    z->total = rt_u64(g->src);
    z->self = rt_u64(g->src);
    z->hist = (ppt_hist){&g->szone_h[i][0], NULL};
    z->self_hist = (ppt_hist){&g->szone_h[i][1], NULL};
    ppt_stats_zone_put(b, z);
  }
  /* threads named in STATS become threads of the trace */
  size_t nt = rt_byte(g->src) % 4;
  g->nsthreads = 0;
  for (size_t i = 0; i < nt; i++) {
    ppt_stats_thread *s = &g->sthreads[g->nsthreads];
    s->tid = rt_tid(g);
    rt_thread *t = rt_thread_for(g, s->tid);
    if (!t)
      break;
    s->busy = rt_u64(g->src);
    s->events = rt_u64(g->src);
    s->zones = rt_u64(g->src);
    t->busy = (int64_t)s->busy;
    t->has_busy = 1;
    g->nsthreads++;
  }
  ppt_count_put_n(b, g->nsthreads);
  for (size_t i = 0; i < g->nsthreads; i++)
    ppt_stats_thread_put(b, &g->sthreads[i]);
  g->nsframes = rt_byte(g->src) % 3;
  ppt_count_put_n(b, g->nsframes);
  for (size_t i = 0; i < g->nsframes; i++) {
    ppt_stats_frame *f = &g->sframes[i];
    rt_hist(g, &g->sframe_h[i]);
    f->loc = rt_loc(g);
    f->frames = rt_u64(g->src);
    f->first_ns = (int64_t)rt_u64(g->src);
    f->last_ns = (int64_t)rt_u64(g->src);
    f->jitter_ns = rt_f64(g->src);
    f->hist = (ppt_hist){&g->sframe_h[i], NULL};
    ppt_stats_frame_put(b, f);
  }
  g->nscounters = rt_byte(g->src) % 3;
  ppt_count_put_n(b, g->nscounters);
  for (size_t i = 0; i < g->nscounters; i++) {
    ppt_stats_counter *k = &g->scounters[i];
    k->loc = rt_loc(g);
    k->samples = rt_u64(g->src);
    k->min = rt_f64(g->src);
    k->max = rt_f64(g->src);
    k->mean = rt_f64(g->src);
    k->last = rt_f64(g->src);
    k->is_float = rt_u64(g->src);
    ppt_stats_counter_put(b, k);
  }
  ppt_stats_totals *tot = &g->stotals;
  tot->t0 = (int64_t)rt_u64(g->src);
  tot->t1 = (int64_t)rt_u64(g->src);
  tot->events = rt_u64(g->src);
  tot->unmatched_ends = rt_u64(g->src);
  tot->unclosed = rt_u64(g->src);
  ppt_stats_totals_put(b, tot);
  if (g->stats_minor >= 3) {
    /* keys in increasing (site, device, stream) order, counts above 0 */
    g->nsgpu = rt_byte(g->src) % 5;
    ppt_count_put_n(b, g->nsgpu);
    for (size_t i = 0; i < g->nsgpu; i++) {
      ppt_stats_gpu *r = &g->sgpu[i];
      rt_hist(g, &g->sgpu_h[i]);
      r->loc = 4 * i + rt_byte(g->src) % 4;
      if (r->loc >= g->nlocs)
        g->nlocs = r->loc + 1;
      r->device = rt_u64(g->src) & UINT32_MAX;
      r->stream = rt_u64(g->src);
      r->tid = rt_u64(g->src);
      r->count = rt_u64(g->src) | 1;
      r->total = rt_u64(g->src);
      r->launch_ns = (int64_t)rt_u64(g->src);
      r->start_ns = (int64_t)rt_u64(g->src);
      r->end_ns = (int64_t)rt_u64(g->src);
      r->hist = (ppt_hist){&g->sgpu_h[i], NULL};
      ppt_stats_gpu_put_framed(b, r);
    }
    g->sgpu_lost = rt_u64(g->src);
    ppt_count_put_n(b, g->sgpu_lost);
  }
  if (g->stats_minor >= 4) {
    ppt_stats_pairing *p = &g->spairing;
    p->too_deep = rt_u64(g->src);
    p->backwards = rt_u64(g->src);
    p->ranges_unclosed = rt_u64(g->src);
    p->ranges_unbegun = rt_u64(g->src);
    p->ranges_lost = rt_u64(g->src);
    ppt_stats_pairing_put(b, p);
  }
  rt_chunk(g, PPT_CHUNK_STATS, b);
}

/* A CUDA record: its kind, the body from the table, and sometimes fields
 * of a later writer after it (which the reader skips). */
static void rt_cuda_emit(rt_gen *g, ppt_buf *b, unsigned kind,
                         const unsigned char *body, size_t n) {
  unsigned char tail[30];
  size_t extra = 0;
  for (unsigned i = rt_byte(g->src) % 4; i-- > 0;)
    extra += ppt_put_uv(tail + extra, rt_u64(g->src));
  if (ppt_buf_reserve(b, 11 + n + extra) != 0)
    return;
  b->len += ppt_cuda_head_enc(b->data + b->len, kind, n + extra);
  ppt_buf_bytes(b, body, n);
  ppt_buf_bytes(b, tail, extra);
}

/* start and duration within what the reader takes (end <= INT64_MAX) */
static void rt_span(rt_gen *g, uint64_t *start, uint64_t *dur) {
  *start = rt_u64(g->src) & (uint64_t)INT64_MAX;
  *dur = rt_u64(g->src) % ((uint64_t)INT64_MAX - *start + 1);
}

static void rt_gen_cuda(rt_gen *g, ppt_buf *b) {
  size_t n = 1 + rt_byte(g->src) % 8;
  unsigned char body[512];
  for (size_t i = 0; i < n; i++) {
    switch (rt_byte(g->src) % 8) {
    case 0: {
      ppt_cuda_string r = {rt_byte(g->src) % 64, rt_str(g, "", 40)};
      g->cuda_names[r.id] = r.text;
      g->cuda_named[r.id] = 1;
      if (r.id >= g->cuda_nnames)
        g->cuda_nnames = r.id + 1;
      rt_cuda_emit(g, b, PPT_CUDA_STRING, body, ppt_cuda_string_enc(body, &r));
      break;
    }
    case 1: {
      if (g->nkernels == RT_ITEMS)
        break;
      ppt_cuda_kernel *r = &g->kernels[g->nkernels++];
      rt_span(g, &r->start, &r->dur);
      r->queued = rt_u64(g->src); /* past INT64_MAX reads as 0 */
      r->device = rt_u64(g->src) & UINT32_MAX;
      r->context = rt_u64(g->src) & UINT32_MAX;
      r->stream = rt_u64(g->src) & UINT32_MAX;
      r->correlation = rt_u64(g->src) & UINT32_MAX;
      r->name = rt_u64(g->src) & UINT32_MAX;
      r->grid_x = (int32_t)rt_u64(g->src);
      r->grid_y = (int32_t)rt_u64(g->src);
      r->grid_z = (int32_t)rt_u64(g->src);
      r->block_x = (int32_t)rt_u64(g->src);
      r->block_y = (int32_t)rt_u64(g->src);
      r->block_z = (int32_t)rt_u64(g->src);
      r->static_smem = (int32_t)rt_u64(g->src);
      r->dynamic_smem = (int32_t)rt_u64(g->src);
      r->registers = rt_u64(g->src) & UINT32_MAX;
      rt_cuda_emit(g, b, PPT_CUDA_KERNEL, body, ppt_cuda_kernel_enc(body, r));
      break;
    }
    case 2: {
      if (g->nmemcpys == RT_ITEMS)
        break;
      ppt_cuda_memcpy *r = &g->memcpys[g->nmemcpys++];
      rt_span(g, &r->start, &r->dur);
      r->bytes = rt_u64(g->src);
      r->copy_kind = rt_u64(g->src) & UINT32_MAX; /* past 255: 0 */
      r->src_kind = rt_u64(g->src) & UINT32_MAX;
      r->dst_kind = rt_u64(g->src) & UINT32_MAX;
      r->flags = rt_u64(g->src) & UINT32_MAX; /* kept: the low 8 bits */
      r->device = rt_u64(g->src) & UINT32_MAX;
      r->context = rt_u64(g->src) & UINT32_MAX;
      r->stream = rt_u64(g->src) & UINT32_MAX;
      r->correlation = rt_u64(g->src) & UINT32_MAX;
      rt_cuda_emit(g, b, PPT_CUDA_MEMCPY, body, ppt_cuda_memcpy_enc(body, r));
      break;
    }
    case 3: {
      if (g->nmemsets == RT_ITEMS)
        break;
      ppt_cuda_memset *r = &g->memsets[g->nmemsets++];
      rt_span(g, &r->start, &r->dur);
      r->bytes = rt_u64(g->src);
      r->value = rt_u64(g->src) & UINT32_MAX;
      r->memory_kind = rt_u64(g->src) & UINT32_MAX;
      r->device = rt_u64(g->src) & UINT32_MAX;
      r->context = rt_u64(g->src) & UINT32_MAX;
      r->stream = rt_u64(g->src) & UINT32_MAX;
      r->correlation = rt_u64(g->src) & UINT32_MAX;
      rt_cuda_emit(g, b, PPT_CUDA_MEMSET, body, ppt_cuda_memset_enc(body, r));
      break;
    }
    case 4: {
      if (g->nsyncs == RT_ITEMS)
        break;
      ppt_cuda_sync *r = &g->syncs[g->nsyncs++];
      rt_span(g, &r->start, &r->dur);
      r->type = rt_u64(g->src) & UINT32_MAX;
      r->context = rt_u64(g->src) & UINT32_MAX;
      r->stream = rt_u64(g->src) & UINT32_MAX;
      r->correlation = rt_u64(g->src) & UINT32_MAX;
      r->event = rt_u64(g->src) & UINT32_MAX;
      rt_cuda_emit(g, b, PPT_CUDA_SYNC, body, ppt_cuda_sync_enc(body, r));
      break;
    }
    case 5: {
      if (g->napis == RT_ITEMS)
        break;
      ppt_cuda_api *r = &g->apis[g->napis++];
      rt_span(g, &r->start, &r->dur);
      r->domain = rt_u64(g->src) & UINT32_MAX;
      r->cbid = rt_u64(g->src) & UINT32_MAX;
      r->name = rt_u64(g->src) & UINT32_MAX;
      r->tid = rt_u64(g->src);
      r->correlation = rt_u64(g->src) & UINT32_MAX;
      r->result = rt_u64(g->src) & UINT32_MAX;
      rt_cuda_emit(g, b, PPT_CUDA_API, body, ppt_cuda_api_enc(body, r));
      break;
    }
    case 6: {
      ppt_cuda_dropped r = {rt_u64(g->src)};
      g->cuda_dropped = pp__add_sat_u64(g->cuda_dropped, r.count);
      rt_cuda_emit(g, b, PPT_CUDA_DROPPED, body,
                   ppt_cuda_dropped_enc(body, &r));
      break;
    }
    default: { /* a kind of a later writer: skipped */
      size_t k = rt_byte(g->src) % 16;
      for (size_t j = 0; j < k; j++)
        body[j] = (unsigned char)rt_byte(g->src);
      rt_cuda_emit(g, b, 8 + rt_byte(g->src) % 248, body, k);
      break;
    }
    }
  }
  g->cuda_chunks++;
  rt_chunk(g, PPT_CHUNK_CUDA, b);
}

/* A chunk type of a later writer: skipped, and counted as read. */
static void rt_gen_unknown(rt_gen *g, ppt_buf *b) {
  size_t k = rt_byte(g->src) % 32;
  for (size_t j = 0; j < k; j++) {
    unsigned char c = (unsigned char)rt_byte(g->src);
    ppt_buf_bytes(b, &c, 1);
  }
  rt_chunk(g, (uint16_t)(11 + rt_byte(g->src) % 200), b);
}

static void rt_generate(rt_gen *g) {
  unsigned char hdr[PPT_FILE_HEADER_SIZE];
  ppt_file_header(hdr, (uint32_t)rt_bytes(g->src, 4));
  ppt_buf_bytes(&g->file, hdr, sizeof hdr);
  ppt_buf b = {0};
  rt_gen_meta(g, &b, 1);
  for (unsigned k = 0; k < 200 && rt_more(g->src) && !g->clean_end; k++) {
    switch (rt_byte(g->src) % 16) {
    case 0:
      rt_gen_meta(g, &b, 0);
      break;
    case 1:
      rt_gen_clock(g, &b);
      break;
    case 2:
    case 3:
      rt_gen_srcloc(g, &b);
      break;
    case 4:
      rt_gen_thread(g, &b);
      break;
    case 5:
      rt_gen_drops(g, &b);
      break;
    case 6:
      rt_gen_notes(g, &b);
      break;
    case 7:
      if (!g->has_stats)
        rt_gen_stats(g, &b);
      break;
    case 8:
      rt_gen_cuda(g, &b);
      break;
    case 9:
      rt_gen_unknown(g, &b);
      break;
    case 10: {
      ppt_end r = {rt_u64(g->src), rt_u64(g->src)};
      ppt_end_put(&b, &r);
      rt_chunk(g, PPT_CHUNK_END, &b);
      g->clean_end = 1;
      break;
    }
    default:
      rt_gen_events(g, &b);
      break;
    }
  }
  ppt_buf_free(&b);
}

/* ---- comparing what the reader made of it ---- */

static int rt_fail(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int rt_fail(char *why, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, len, fmt, ap);
  va_end(ap);
  return -1;
}

static int rt_str_is(const char *got, ppt_str want) {
  return got && strlen(got) == want.n && memcmp(got, want.s, want.n) == 0;
}

static int rt_same_f64(double a, double b) {
  return memcmp(&a, &b, sizeof a) == 0;
}

/* Histograms compare by their encoding. */
static int rt_same_hist(const pp_hist *a, const pp_hist *b) {
  size_t na = pp_hist_encode(a, NULL, 0), nb = pp_hist_encode(b, NULL, 0);
  if (na != nb)
    return 0;
  unsigned char *x = malloc(na + 1), *y = malloc(nb + 1);
  int same = x && y;
  if (same) {
    pp_hist_encode(a, x, na);
    pp_hist_encode(b, y, nb);
    same = memcmp(x, y, na) == 0;
  }
  free(x);
  free(y);
  return same;
}

#define RT_CHECK(cond, ...)                                                    \
  do {                                                                         \
    if (!(cond))                                                               \
      return rt_fail(why, len, __VA_ARGS__);                                   \
  } while (0)

static int64_t rt_span_end(uint64_t start, uint64_t dur) {
  return (int64_t)(start + dur);
}

static int rt_compare_cuda(const rt_gen *g, const pp_trace *t, char *why,
                           size_t len) {
  const pp_cuda_trace *c = &t->cuda;
  RT_CHECK(c->chunks == g->cuda_chunks, "cuda chunks %llu",
           (unsigned long long)c->chunks);
  RT_CHECK(c->dropped == g->cuda_dropped, "cuda dropped");
  RT_CHECK(c->nnames == g->cuda_nnames, "cuda names %zu vs %zu", c->nnames,
           g->cuda_nnames);
  for (size_t i = 0; i < g->cuda_nnames; i++)
    RT_CHECK(g->cuda_named[i] ? rt_str_is(c->names[i], g->cuda_names[i])
                              : c->names[i] == NULL,
             "cuda name %zu", i);
  RT_CHECK(c->nkernels == g->nkernels, "kernels");
  for (size_t i = 0; i < g->nkernels; i++) {
    const ppt_cuda_kernel *w = &g->kernels[i];
    const pp_cuda_kernel *k = &c->kernels[i];
    RT_CHECK(
        k->start == (int64_t)w->start &&
            k->end == rt_span_end(w->start, w->dur) &&
            k->queued ==
                (w->queued > (uint64_t)INT64_MAX ? 0 : (int64_t)w->queued) &&
            k->device == w->device && k->context == w->context &&
            k->stream == w->stream && k->correlation == w->correlation &&
            k->name == w->name && k->grid[0] == w->grid_x &&
            k->grid[1] == w->grid_y && k->grid[2] == w->grid_z &&
            k->block[0] == w->block_x && k->block[1] == w->block_y &&
            k->block[2] == w->block_z && k->static_smem == w->static_smem &&
            k->dynamic_smem == w->dynamic_smem && k->registers == w->registers,
        "kernel %zu", i);
  }
  RT_CHECK(c->nmemcpys == g->nmemcpys, "memcpys");
  for (size_t i = 0; i < g->nmemcpys; i++) {
    const ppt_cuda_memcpy *w = &g->memcpys[i];
    const pp_cuda_memcpy *m = &c->memcpys[i];
    RT_CHECK(m->start == (int64_t)w->start &&
                 m->end == rt_span_end(w->start, w->dur) &&
                 m->bytes == w->bytes &&
                 m->copy_kind == (w->copy_kind > 255 ? 0 : w->copy_kind) &&
                 m->src_kind == (w->src_kind > 255 ? 0 : w->src_kind) &&
                 m->dst_kind == (w->dst_kind > 255 ? 0 : w->dst_kind) &&
                 m->flags == (uint8_t)w->flags && m->device == w->device &&
                 m->context == w->context && m->stream == w->stream &&
                 m->correlation == w->correlation,
             "memcpy %zu", i);
  }
  RT_CHECK(c->nmemsets == g->nmemsets, "memsets");
  for (size_t i = 0; i < g->nmemsets; i++) {
    const ppt_cuda_memset *w = &g->memsets[i];
    const pp_cuda_memset *m = &c->memsets[i];
    RT_CHECK(m->start == (int64_t)w->start &&
                 m->end == rt_span_end(w->start, w->dur) &&
                 m->bytes == w->bytes && m->value == w->value &&
                 m->memory_kind == w->memory_kind && m->device == w->device &&
                 m->context == w->context && m->stream == w->stream &&
                 m->correlation == w->correlation,
             "memset %zu", i);
  }
  RT_CHECK(c->nsyncs == g->nsyncs, "syncs");
  for (size_t i = 0; i < g->nsyncs; i++) {
    const ppt_cuda_sync *w = &g->syncs[i];
    const pp_cuda_sync *y = &c->syncs[i];
    RT_CHECK(y->start == (int64_t)w->start &&
                 y->end == rt_span_end(w->start, w->dur) &&
                 y->type == w->type && y->context == w->context &&
                 y->stream == w->stream && y->correlation == w->correlation &&
                 y->event == w->event,
             "sync %zu", i);
  }
  RT_CHECK(c->napis == g->napis, "apis");
  for (size_t i = 0; i < g->napis; i++) {
    const ppt_cuda_api *w = &g->apis[i];
    const pp_cuda_api *a = &c->apis[i];
    RT_CHECK(a->start == (int64_t)w->start &&
                 a->end == rt_span_end(w->start, w->dur) &&
                 a->domain == w->domain && a->cbid == w->cbid &&
                 a->name == w->name && a->tid == w->tid &&
                 a->correlation == w->correlation && a->result == w->result,
             "api %zu", i);
  }
  return 0;
}

static int rt_compare_stats(const rt_gen *g, const pp_trace *t,
                            const pp_analysis *an, char *why, size_t len) {
  const pp_profile *p = &an->prof;
  RT_CHECK(t->from_stats == g->has_stats, "from_stats");
  if (!g->has_stats)
    return 0;
  RT_CHECK(p->nzones == g->nszones, "stats zones %zu", p->nzones);
  for (size_t i = 0; i < g->nszones; i++) {
    const ppt_stats_zone *w = &g->szones[i];
    const pp_zone_stats *z = &p->zones[i];
    RT_CHECK(z->loc == w->loc && z->count == w->count &&
                 z->total_ns == (int64_t)w->total &&
                 z->self_ns == (int64_t)w->self &&
                 rt_same_hist(&z->hist, w->hist.in),
             "stats zone %zu", i);
  }
  RT_CHECK(p->nframes == g->nsframes, "stats frames");
  for (size_t i = 0; i < g->nsframes; i++) {
    const ppt_stats_frame *w = &g->sframes[i];
    const pp_frame_stats *f = &p->frames[i];
    RT_CHECK(f->loc == w->loc && f->frames == w->frames &&
                 rt_same_f64(f->jitter_ns, w->jitter_ns) &&
                 rt_same_hist(&f->hist, w->hist.in),
             "stats frame %zu", i);
  }
  RT_CHECK(p->ncounters == g->nscounters, "stats counters");
  for (size_t i = 0; i < g->nscounters; i++) {
    const ppt_stats_counter *w = &g->scounters[i];
    const pp_counter_stats *k = &p->counters[i];
    RT_CHECK(k->loc == w->loc && k->samples == w->samples &&
                 rt_same_f64(k->min, w->min) && rt_same_f64(k->max, w->max) &&
                 rt_same_f64(k->mean, w->mean) &&
                 rt_same_f64(k->last, w->last) &&
                 k->is_float == (w->is_float != 0),
             "stats counter %zu", i);
  }
  const ppt_stats_totals *tot = &g->stotals;
  RT_CHECK(p->t0 == tot->t0 && p->t1 == tot->t1 && p->events == tot->events &&
               p->unmatched_ends == tot->unmatched_ends &&
               p->unclosed == tot->unclosed,
           "stats totals");
  if (g->stats_minor < 3) {
    RT_CHECK(an->ngpu_agg == 0 && an->gpu_agg_lost == -1, "no GPU part");
  } else {
    RT_CHECK(an->ngpu_agg == g->nsgpu, "stats gpu %zu", an->ngpu_agg);
    for (size_t i = 0; i < g->nsgpu; i++) {
      const ppt_stats_gpu *w = &g->sgpu[i];
      const pp_gpu_zone_agg *a = &an->gpu_agg[i];
      RT_CHECK(a->loc == w->loc && a->device == w->device &&
                   a->stream == w->stream && a->tid == w->tid &&
                   a->count == w->count &&
                   a->total_ns == (w->total > (uint64_t)INT64_MAX
                                       ? INT64_MAX
                                       : (int64_t)w->total) &&
                   a->launch_ns == w->launch_ns && a->start_ns == w->start_ns &&
                   a->end_ns == w->end_ns && rt_same_hist(&a->hist, w->hist.in),
               "stats gpu %zu", i);
    }
    RT_CHECK(an->gpu_agg_lost == (g->sgpu_lost > (uint64_t)INT64_MAX
                                      ? INT64_MAX
                                      : (int64_t)g->sgpu_lost),
             "stats gpu lost");
  }
  const ppt_stats_pairing *w = &g->spairing;
  if (g->stats_minor >= 4)
    RT_CHECK(p->pairing.too_deep == w->too_deep &&
                 p->pairing.backwards == w->backwards &&
                 p->ranges_unclosed == w->ranges_unclosed &&
                 p->ranges_unbegun == w->ranges_unbegun &&
                 p->ranges_lost == w->ranges_lost,
             "stats pairing");
  else
    RT_CHECK(p->pairing.too_deep == 0 && p->ranges_lost == 0,
             "no pairing part");
  return 0;
}

static int rt_compare(const rt_gen *g, const pp_trace *t, const pp_analysis *an,
                      char *why, size_t len) {
  const pp_read_diag *d = &t->diag;
  RT_CHECK(d->chunks_ok == g->chunks && d->chunks_bad == 0 &&
               d->bytes_skipped == 0 && d->events_bad == 0 && !d->truncated &&
               d->clean_end == g->clean_end,
           "diag: %llu of %llu chunks ok, %llu bad, %llu events bad",
           (unsigned long long)d->chunks_ok, (unsigned long long)g->chunks,
           (unsigned long long)d->chunks_bad,
           (unsigned long long)d->events_bad);
  RT_CHECK(t->nmeta == g->nmeta, "meta count %zu vs %zu", t->nmeta, g->nmeta);
  for (size_t i = 0; i < g->nmeta; i++)
    RT_CHECK(rt_str_is(t->meta[i].key, g->meta[i].key) &&
                 rt_str_is(t->meta[i].value, g->meta[i].value),
             "meta %zu", i);
  RT_CHECK(t->nclock == g->nclock, "clock points %zu vs %zu", t->nclock,
           g->nclock);
  for (size_t i = 0; i < g->nclock; i++)
    RT_CHECK(t->clock[i].tick == g->clock[i].tick &&
                 t->clock[i].mono_ns == g->clock[i].mono_ns &&
                 t->clock[i].real_ns == g->clock[i].real_ns,
             "clock %zu", i);
  RT_CHECK(t->nlocs == g->nlocs, "sites %zu vs %zu", t->nlocs, g->nlocs);
  for (size_t i = 0; i < g->nlocs; i++) {
    const pp_loc *l = &t->locs[i];
    if (!g->loc_defined[i]) {
      char name[32];
      snprintf(name, sizeof name, "(unknown #%zu)", i);
      RT_CHECK(strcmp(l->name, name) == 0, "site %zu unnamed", i);
      continue;
    }
    const ppt_srcloc *w = &g->locs[i];
    RT_CHECK(rt_str_is(l->name, w->name) &&
                 rt_str_is(l->function, w->function) &&
                 rt_str_is(l->file, w->file) &&
                 l->kind == (w->kind > 255 ? 0 : w->kind) &&
                 l->line == (w->line > UINT32_MAX ? 0 : w->line),
             "site %zu", i);
  }
  RT_CHECK(t->nthreads == g->nthreads, "threads %zu vs %zu", t->nthreads,
           g->nthreads);
  size_t *seen = calloc(g->nthreads + 1, sizeof *seen);
  if (!seen)
    return rt_fail(why, len, "out of memory");
  for (size_t i = 0; i < g->nthreads; i++) {
    const pp_thread *th = &t->threads[i];
    const rt_thread *w = &g->threads[i];
    if (th->tid != w->tid || !rt_str_is(th->name, w->name) ||
        th->dropped != w->dropped ||
        an->threads[i].busy_ns != (w->has_busy ? w->busy : 0)) {
      free(seen);
      return rt_fail(why, len, "thread %zu (tid %llu)", i,
                     (unsigned long long)w->tid);
    }
  }
  /* events of each thread, in the order generated */
  for (size_t j = 0; j < g->nev; j++) {
    uint32_t thi = g->ev_thread[j];
    const pp_thread *th = &t->threads[thi];
    size_t k = seen[thi]++;
    const pp_event *x = &g->ev[j];
    if (k >= th->nev || th->ev[k].ts != x->ts || th->ev[k].loc != x->loc ||
        th->ev[k].type != x->type || th->ev[k].v.id != x->v.id ||
        th->ev[k].v2 != x->v2) {
      free(seen);
      return rt_fail(why, len, "event %zu (type %u) of thread %u", k,
                     (unsigned)x->type, (unsigned)thi);
    }
  }
  size_t extra = 0, where = 0;
  for (size_t i = 0; i < g->nthreads; i++)
    if (seen[i] != t->threads[i].nev && !extra) {
      extra = t->threads[i].nev - seen[i];
      where = i;
    }
  free(seen);
  RT_CHECK(!extra, "thread %zu has %zu events more", where, extra);
  RT_CHECK(t->ngpu == g->ngpu, "GPU zones %zu vs %zu", t->ngpu, g->ngpu);
  /* The model holds them in (device, stream, start, site) order: each
   * written zone is found once among them, and they are in that order. */
  unsigned char *used = calloc(g->ngpu + 1, 1);
  if (!used)
    return rt_fail(why, len, "out of memory");
  size_t missing = SIZE_MAX;
  for (size_t i = 0; i < g->ngpu && missing == SIZE_MAX; i++) {
    const rt_gpu *w = &g->gpu[i];
    int64_t start = (int64_t)w->tick, end;
    if (__builtin_add_overflow(start, (int64_t)w->e.dur, &end))
      end = INT64_MAX;
    size_t k = 0;
    for (; k < t->ngpu; k++) {
      const pp_gpu_zone_rec *z = &t->gpu[k];
      if (!used[k] && z->start == start &&
          z->launch == (int64_t)(w->tick + (uint64_t)w->e.launch) &&
          z->end == end && z->tid == w->tid && z->stream == w->e.extra &&
          z->device == w->e.device && z->loc == w->e.loc)
        break;
    }
    if (k == t->ngpu)
      missing = i;
    else
      used[k] = 1;
  }
  free(used);
  RT_CHECK(missing == SIZE_MAX, "GPU zone %zu", missing);
  for (size_t k = 1; k < t->ngpu; k++) {
    const pp_gpu_zone_rec *x = &t->gpu[k - 1], *y = &t->gpu[k];
    RT_CHECK(x->device < y->device ||
                 (x->device == y->device &&
                  (x->stream < y->stream ||
                   (x->stream == y->stream &&
                    (x->start < y->start ||
                     (x->start == y->start && x->loc <= y->loc))))),
             "GPU zones out of order at %zu", k);
  }
  RT_CHECK(t->nnotes == g->nnotes, "notes %zu vs %zu", t->nnotes, g->nnotes);
  for (size_t i = 0; i < g->nnotes; i++) {
    const rt_note *w = &g->notes[i];
    const pp_note *n = &t->notes[i];
    RT_CHECK(n->ts == (int64_t)w->tick && n->type == w->e.type &&
                 rt_str_is(n->what, w->e.what) &&
                 rt_str_is(n->which, w->e.which) &&
                 rt_str_is(n->message, w->e.message) &&
                 rt_same_f64(n->value, w->e.nvalue) &&
                 rt_same_f64(n->baseline, w->e.baseline) &&
                 rt_same_f64(n->spread, w->e.spread) &&
                 rt_same_f64(n->threshold, w->e.threshold),
             "note %zu", i);
  }
  if (rt_compare_stats(g, t, an, why, len) != 0)
    return -1;
  return rt_compare_cuda(g, t, why, len);
}

static void rt_free(rt_gen *g) {
  ppt_buf_free(&g->file);
  for (size_t i = 0; i < g->nszones; i++) {
    pp_hist_free(&g->szone_h[i][0]);
    pp_hist_free(&g->szone_h[i][1]);
  }
  for (size_t i = 0; i < g->nsframes; i++)
    pp_hist_free(&g->sframe_h[i]);
  for (size_t i = 0; i < g->nsgpu; i++)
    pp_hist_free(&g->sgpu_h[i]);
}

/* Compare the trace t read from g's file with g: the model, and a
 * stats-mode file's figures as the analysis decodes them (in the file's
 * order: no sorting). 0, -1 with the first difference in why, 1 when out
 * of memory. */
static int rt_compare_trace(const rt_gen *g, const pp_trace *t, char *why,
                            size_t len) {
  pp_analysis an = {0};
  int rc;
  an.trace = t;
  an.nthreads = t->nthreads;
  if (!(an.threads = pp__calloc(t->nthreads + 1, sizeof *an.threads)))
    rc = 1;
  else if (t->from_stats && pp__figures_apply(&an, t->stats, t->nstats) != 0)
    rc = rt_fail(why, len, "the STATS payload does not decode");
  else
    rc = rt_compare(g, t, &an, why, len);
  pp_analysis_free(&an);
  return rc;
}

/* Read g's file back and compare: 0, -1 with the first difference in
 * why, or 1 when the encoders ran out of memory (no verdict). */
static int rt_verify(const rt_gen *g, char *why, size_t len) {
  if (g->file.oom)
    return 1;
  pp_trace t;
  char err[256] = "";
  int rc;
  if (pp_trace_read_mem(g->file.data, g->file.len, &t, err, sizeof err) != 0)
    rc = rt_fail(why, len, "read failed: %s", err);
  else
    rc = rt_compare_trace(g, &t, why, len);
  pp_trace_free(&t);
  return rc;
}

/* Generate from data, encode, read back, compare (rt_verify). */
__attribute__((unused)) static int rt_run(const uint8_t *data, size_t size,
                                          char *why, size_t len) {
  rt_src src = {data, size, 0};
  rt_gen *g = calloc(1, sizeof *g);
  if (!g)
    return 1;
  g->src = &src;
  rt_generate(g);
  int rc = rt_verify(g, why, len);
  rt_free(g);
  free(g);
  return rc;
}

#endif /* PP_FUZZ_ROUNDTRIP_H */
