/* SPDX-License-Identifier: MIT */
/*
 * A STATS payload into an analysis (pp__figures_apply): per-site zone,
 * frame and counter figures, the threads' busy time, the totals and
 * pairing counts, and the GPU zones aggregated per site and track. The
 * payload is a stats-mode file's (checked by the reader) or the figures
 * a trace-mode file's events streamed into (analyze/stream.c): one
 * decoder for both roads, the walk itself format/'s.
 */
#include <string.h>

#include "analysis.h"
#include "format/stats_payload.h"
#include "internal.h"

typedef struct apply_ctx {
  pp_analysis *a;
  const pp_trace *t;
} apply_ctx;

/* The capacity pp__grow gives an array that push grew to n elements: 16,
 * then doubled (the arrays push appends to are grown by push alone). */
static size_t cap_of(size_t n) {
  size_t c = n ? 16 : 0;
  while (c < n)
    c *= 2;
  return c;
}

/* Append one element of elem bytes at *n of *arr, doubling its room when
 * full: a payload of 200,000 sites grew it by one each time, which
 * reallocation made quadratic under allocators that copy (ASan: 117 s
 * for 50,000 counters). */
static int push(void **arr, size_t *n, const void *x, size_t elem) {
  size_t cap = cap_of(*n);
  if (pp__grow(arr, &cap, *n + 1, elem) != 0)
    return -1;
  memcpy((char *)*arr + *n * elem, x, elem);
  (*n)++;
  return 0;
}

/* Move a walker's histogram into dst. */
static void take_hist(pp_hist *dst, pp_hist *src) {
  *dst = *src;
  pp_hist_init(src);
}

static int on_zone(void *arg, ppt_stats_zone *r) {
  apply_ctx *x = arg;
  pp_profile *p = &x->a->prof;
  if (r->loc >= x->t->nlocs)
    return -1;
  pp_zone_stats z;
  memset(&z, 0, sizeof z);
  take_hist(&z.hist, r->hist.out);
  z.loc = (uint32_t)r->loc;
  z.count = r->count;
  z.total_ns = (int64_t)r->total;
  z.self_ns = (int64_t)r->self;
  z.min_ns = (int64_t)z.hist.min;
  z.max_ns = (int64_t)z.hist.max;
  z.mean_ns = pp_hist_mean(&z.hist);
  z.std_ns = pp_hist_stddev(&z.hist);
  if (push((void **)&p->zones, &p->nzones, &z, sizeof z) != 0) {
    pp_hist_free(&z.hist);
    return -1;
  }
  return 0;
}

static int on_thread(void *arg, const ppt_stats_thread *r) {
  apply_ctx *x = arg;
  size_t i = pp_trace_thread_index(x->t, r->tid);
  if (i == x->t->nthreads)
    return -1; /* the reader made every thread exist */
  pp_thread_figures *f = &x->a->threads[i];
  f->busy_ns = (int64_t)r->busy;
  f->events = r->events;
  f->zones_measured = r->zones;
  return 0;
}

static int on_frame(void *arg, ppt_stats_frame *r) {
  apply_ctx *x = arg;
  pp_profile *p = &x->a->prof;
  if (r->loc >= x->t->nlocs)
    return -1;
  pp_frame_stats f;
  memset(&f, 0, sizeof f);
  take_hist(&f.hist, r->hist.out);
  f.loc = (uint32_t)r->loc;
  f.frames = r->frames;
  f.jitter_ns = r->jitter_ns;
  /* in double: first and last may be anywhere in int64 */
  int64_t first = r->first_ns, last = r->last_ns;
  f.fps = last > first && f.frames > 1
              ? (double)(f.frames - 1) / (((double)last - (double)first) * 1e-9)
              : 0;
  f.mean_ns = pp_hist_mean(&f.hist);
  f.std_ns = pp_hist_stddev(&f.hist);
  if (push((void **)&p->frames, &p->nframes, &f, sizeof f) != 0) {
    pp_hist_free(&f.hist);
    return -1;
  }
  return 0;
}

static int on_counter(void *arg, const ppt_stats_counter *r) {
  apply_ctx *x = arg;
  pp_profile *p = &x->a->prof;
  if (r->loc >= x->t->nlocs)
    return -1;
  pp_counter_stats k = {(uint32_t)r->loc, r->samples, r->min,          r->max,
                        r->mean,          r->last,    r->is_float != 0};
  return push((void **)&p->counters, &p->ncounters, &k, sizeof k);
}

static int on_totals(void *arg, const ppt_stats_totals *r) {
  pp_profile *p = &((apply_ctx *)arg)->a->prof;
  p->t0 = r->t0;
  p->t1 = r->t1;
  p->events = r->events;
  p->unmatched_ends = r->unmatched_ends;
  p->unclosed = r->unclosed;
  p->wall_ns = pp__span(p->t0, p->t1);
  p->pairing.lost_ends = p->unclosed;
  p->pairing.stray_ends = p->unmatched_ends;
  return 0;
}

static int on_gpu(void *arg, ppt_stats_gpu *r) {
  apply_ctx *x = arg;
  pp_analysis *a = x->a;
  if (r->loc >= x->t->nlocs)
    return -1;
  pp_gpu_zone_agg g;
  memset(&g, 0, sizeof g);
  take_hist(&g.hist, r->hist.out);
  g.loc = (uint32_t)r->loc;
  g.device = (uint32_t)r->device;
  g.stream = r->stream;
  g.tid = r->tid;
  g.count = r->count;
  g.total_ns = r->total > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)r->total;
  g.launch_ns = r->launch_ns;
  g.start_ns = r->start_ns;
  g.end_ns = r->end_ns;
  if (push((void **)&a->gpu_agg, &a->ngpu_agg, &g, sizeof g) != 0) {
    pp_hist_free(&g.hist);
    return -1;
  }
  return 0;
}

static int on_gpu_lost(void *arg, uint64_t lost) {
  ((apply_ctx *)arg)->a->gpu_agg_lost =
      lost > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)lost;
  return 0;
}

static int on_pairing(void *arg, const ppt_stats_pairing *r) {
  pp_profile *p = &((apply_ctx *)arg)->a->prof;
  p->pairing.too_deep = r->too_deep;
  p->pairing.backwards = r->backwards;
  p->ranges_unclosed = r->ranges_unclosed;
  p->ranges_unbegun = r->ranges_unbegun;
  p->ranges_lost = r->ranges_lost;
  return 0;
}

int pp__figures_apply(pp_analysis *a, const unsigned char *p, size_t n) {
  static const ppt_stats_visitor apply = {on_zone,     on_thread, on_frame,
                                          on_counter,  on_totals, on_gpu,
                                          on_gpu_lost, on_pairing};
  apply_ctx x = {a, a->trace};
  a->gpu_agg_lost = -1;
  return ppt_stats_walk(p, n, &apply, &x, NULL) == 0 ? 0 : -1;
}
