/* SPDX-License-Identifier: MIT */
/*
 * Trace analysis (pp_analyze): from a read-only pp_trace into a
 * pp_analysis of its own: the figures (the streamed STATS payload, or a
 * stats-mode file's), zone instances per thread (the shared zone pairing
 * of pair/zones.h), ranges, requests, GPU and CUDA activity, the pipeline
 * and its advice. Queries on the results are in results.c.
 *
 * Every timestamp is taken as nanoseconds. Within a thread, a timestamp
 * lower than the one before it (a clock glitch) is raised to it for zone
 * matching, so that instances always nest properly.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "results/doc.h"
#include "analyze/series.h"
#include "analyze/stream.h"
#include "format/pptrace.h"
#include "gpu_activity.h"
#include "internal.h"
#include "pair/intervals.h"
#include "pair/zones.h"

#define NO_SLOT UINT32_MAX

/* ---- freeing ------------------------------------------------------------- */

void pp__analysis_results_free(pp_analysis *a) {
  if (!a)
    return;
  for (size_t i = 0; i < a->nthreads; i++)
    pp__free(a->threads[i].zones);
  pp__free(a->threads);
  a->threads = NULL;
  a->nthreads = 0;
  pp_profile *p = &a->prof;
  pp_profile_figures_free(p);
  pp_request_stats_free(&p->req);
  pp_pipeline_free(&p->pipe);
  pp_gpu_stats_free(p);
  pp_breakdown_free(&p->breakdown);
  pp_shapes_free(&p->shapes);
  pp_series_free(&p->series);
  memset(p, 0, sizeof *p);
  pp__free(a->ranges);
  a->ranges = NULL;
  a->nranges = 0;
  pp__free(a->gpu);
  a->gpu = NULL;
  for (size_t i = 0; i < a->ngpu_agg; i++)
    pp_hist_free(&a->gpu_agg[i].hist);
  pp__free(a->gpu_agg);
  a->gpu_agg = NULL;
  a->ngpu_agg = 0;
  pp_gpu_activity_free(a->cuda);
  a->cuda = NULL;
  pp_doc_free(a->doc);
  a->doc = NULL;
  a->analyzed = 0;
}

void pp_analysis_free(pp_analysis *a) {
  if (!a)
    return;
  pp__analysis_results_free(a);
  pp__stream_free(a->stream);
  pp__free(a->streamed);
  pp__stream_results_free(a->streamres);
  pp__series_free(a->series_rec);
  memset(a, 0, sizeof *a);
}

/* ---- ranges (start and end on any thread) ------------------------------ */

static int cmp_range_start(const void *a, const void *b) {
  const pp_range *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* Ranges: RANGE_BEGIN and RANGE_END paired by id across threads through
 * the shared id pairing (pair/intervals.h). A begin whose end never came
 * is kept for timelines (unclosed, drawn to the trace end) and counted in
 * ranges_unclosed, not in statistics. */
typedef struct range_ctx {
  pp_range *r;
  size_t n;
  int64_t t_end;
} range_ctx;

static void range_unended(void *ctx, const pp_half *h) {
  range_ctx *rc = ctx;
  if (h->is_end)
    return;
  rc->r[rc->n++] = (pp_range){h->ts, rc->t_end < h->ts ? h->ts : rc->t_end,
                              h->id, h->tid, h->tid, (uint32_t)h->cookie, 1};
}

static int build_ranges(pp_analysis *a, int64_t t_end) {
  const pp_trace *t = a->trace;
  size_t n = 0;
  for (size_t i = 0; i < t->nthreads; i++)
    for (size_t j = 0; j < t->threads[i].nev; j++)
      n += t->threads[i].ev[j].type == PPT_EV_RANGE_BEGIN;
  if (!n)
    return 0;
  range_ctx rc = {pp__malloc(n * sizeof *rc.r), 0, t_end};
  if (!rc.r)
    return -1;
  pp_id_pairs pairs;
  pp__idpairs_init(&pairs, SIZE_MAX);
  for (size_t i = 0; i < t->nthreads; i++) {
    const pp_thread *th = &t->threads[i];
    for (size_t j = 0; j < th->nev; j++) {
      const pp_event *e = &th->ev[j];
      if ((e->type != PPT_EV_RANGE_BEGIN && e->type != PPT_EV_RANGE_END) ||
          (e->type == PPT_EV_RANGE_BEGIN && e->loc >= t->nlocs))
        continue;
      pp_half h = {e->v.id, e->ts, e->loc, th->tid, 0,
                   e->type == PPT_EV_RANGE_END}, b, x;
      int rcode = pp__idpairs_put(&pairs, &h, &b, &x);
      if (rcode == 1)
        rc.r[rc.n++] = (pp_range){b.ts, x.ts < b.ts ? b.ts : x.ts, b.id,
                                  b.tid, x.tid, (uint32_t)b.cookie, 0};
      else if (rcode < 0 && e->v.id != 0) {
        pp__idpairs_free(&pairs);
        pp__free(rc.r);
        return -1; /* no memory: the table has no bound here */
      }
    }
  }
  pp__idpairs_finish(&pairs, range_unended, &rc);
  pp__idpairs_free(&pairs);
  a->prof.ranges_unclosed += pairs.c.unended;
  a->prof.ranges_unbegun += pairs.c.unbegun;
  qsort(rc.r, rc.n, sizeof *rc.r, cmp_range_start);
  a->ranges = rc.r;
  a->nranges = rc.n;
  return 0;
}

/* ---- sorting helpers ----------------------------------------------------- */

/* Reorder arr (n elements of elem bytes) as keys[] says after sorting them.
 * Returns 0, or -1 when out of memory (arr unchanged). */
static int apply_order(void *arr, size_t n, size_t elem, pp_sort_key *keys) {
  if (n < 2)
    return 0;
  qsort(keys, n, sizeof *keys, pp_sort_key_cmp);
  unsigned char *tmp = pp__malloc(n * elem);
  if (!tmp)
    return -1;
  unsigned char *a = arr;
  for (size_t i = 0; i < n; i++)
    memcpy(tmp + i * elem, a + keys[i].idx * elem, elem);
  memcpy(a, tmp, n * elem);
  pp__free(tmp);
  return 0;
}

/* ---- zone instances ------------------------------------------------------ */

/* Zones of one thread through the shared pairing (pair/zones.h); the
 * cookie of a zone is its index in f->zones. */
static void zone_closed(void *ctx, const pp_zone_closed *c) {
  pp_thread_figures *f = ctx;
  pp_zone_inst *z = &f->zones[c->cookie];
  z->end = c->end;
  z->self = c->self;
  z->unclosed = (uint32_t)c->lost_end;
}

static int build_zones(const pp_thread *th, pp_thread_figures *f, size_t nlocs,
                       int64_t t_end, pp_pair_counts *pc) {
  size_t nbegin = 0;
  for (size_t i = 0; i < th->nev; i++)
    if (th->ev[i].type == PPT_EV_ZONE_BEGIN && th->ev[i].loc < nlocs)
      nbegin++;
  if (nbegin > (size_t)INT32_MAX)
    return -1; /* parent indices would not fit */
  if (!nbegin)
    return 0;
  f->zones = pp__malloc(nbegin * sizeof *f->zones);
  if (!f->zones)
    return -1;
  f->cap_zones = nbegin;
  pp_zone_stack s;
  pp__zstack_init(&s);
  for (size_t i = 0; i < th->nev; i++) {
    const pp_event *e = &th->ev[i];
    if ((e->type != PPT_EV_ZONE_BEGIN && e->type != PPT_EV_ZONE_END) ||
        e->loc >= nlocs)
      continue;
    if (e->type == PPT_EV_ZONE_END) {
      pp_zone_closed z;
      if (pp__zstack_end_fast(&s, e->loc, e->ts, pc, &z) == 0)
        zone_closed(f, &z);
      else
        pp__zstack_end(&s, e->loc, e->ts, pc, zone_closed, f);
      continue;
    }
    uint32_t depth = s.n;
    int32_t parent = s.n ? (int32_t)s.v[s.n - 1].cookie : -1;
    if (pp__zstack_begin_fast(&s, e->loc, e->ts, f->nzones) != 0 &&
        pp__zstack_begin(&s, e->loc, e->ts, f->nzones, pc) != 0)
      continue; /* too deep (or no memory): not a zone */
    pp_zone_inst *z = &f->zones[f->nzones++];
    z->start = z->end = s.v[s.n - 1].start;
    z->self = 0;
    z->loc = e->loc;
    z->depth = depth;
    z->parent = parent;
    z->unclosed = 0;
  }
  pp__zstack_finish(&s, t_end, pc, zone_closed, f);
  pp__zstack_free(&s);
  return 0;
}

/* ---- entry point --------------------------------------------------------- */

/* The recorder's measured cost of one event (META event_cost_ns), 0 when
 * absent or not a positive number. */
static double meta_event_cost(const pp_trace *t) {
  double c;
  return pp_trace_meta_num(t, "event_cost_ns", &c) && c > 0 ? c : 0;
}

/* A non-negative integer META value, -1 when absent or malformed. */
static int64_t meta_ns(const pp_trace *t, const char *key) {
  const char *v = pp_trace_meta(t, key);
  if (!v || *v < '0' || *v > '9')
    return -1;
  char *end;
  errno = 0;
  long long n = strtoll(v, &end, 10);
  return *end || errno ? -1 : (int64_t)n;
}

/* The profiler's own measured costs (pp_profile). */
static void meta_costs(const pp_trace *t, pp_profile *p) {
  p->event_cost_ns = meta_event_cost(t);
  double over;
  int64_t pyev = meta_ns(t, "binding.python.events");
  if (pp_trace_meta_num(t, "binding.python.zone_overhead_ns", &over) &&
      over > 0 && pyev > 0) {
    p->python_overhead_ns = over;
    p->python_events = (uint64_t)pyev;
  }
  p->writer_cpu_ns = meta_ns(t, "writer_cpu_ns");
  p->sampler_cpu_ns = meta_ns(t, "sampler_cpu_ns");
  p->process_cpu_ns = meta_ns(t, "process_cpu_ns");
  p->provider_transitions = meta_ns(t, "import.ort.provider_transitions");
  p->provider_copies = meta_ns(t, "import.ort.copies");
  p->provider_copy_ns = meta_ns(t, "import.ort.copy_ns");
}

/* Sort the per-site figures, whichever road they came by: zones by total
 * time, frames and counters by name (ties by name, then site). */
static int order_figures(pp_analysis *a) {
  const pp_trace *t = a->trace;
  pp_profile *p = &a->prof;
  size_t most = p->nzones > p->nframes ? p->nzones : p->nframes;
  if (p->ncounters > most)
    most = p->ncounters;
  if (!most)
    return 0;
  pp_sort_key *keys = pp__malloc(most * sizeof *keys);
  if (!keys)
    return -1;
  for (size_t i = 0; i < p->nzones; i++)
    keys[i] = (pp_sort_key){p->zones[i].total_ns,
                            pp_trace_loc_name(t, p->zones[i].loc),
                            p->zones[i].loc, i};
  int rc = apply_order(p->zones, p->nzones, sizeof *p->zones, keys);
  for (size_t i = 0; i < p->nframes && rc == 0; i++)
    keys[i] = (pp_sort_key){0, pp_trace_loc_name(t, p->frames[i].loc),
                            p->frames[i].loc, i};
  if (rc == 0)
    rc = apply_order(p->frames, p->nframes, sizeof *p->frames, keys);
  for (size_t i = 0; i < p->ncounters && rc == 0; i++)
    keys[i] = (pp_sort_key){0, pp_trace_loc_name(t, p->counters[i].loc),
                            p->counters[i].loc, i};
  if (rc == 0)
    rc = apply_order(p->counters, p->ncounters, sizeof *p->counters, keys);
  pp__free(keys);
  return rc;
}

/* A stats-mode file: the profile is its STATS payload's; add what comes
 * from elsewhere in the file. */
static int analyze_from_stats(pp_analysis *a) {
  const pp_trace *t = a->trace;
  pp_profile *p = &a->prof;
  if (pp__figures_apply(a, t->stats, t->nstats) != 0)
    return -1;
  p->dropped = 0;
  for (size_t i = 0; i < t->nthreads; i++)
    p->dropped = pp__add_sat_u64(p->dropped, t->threads[i].dropped);
  meta_costs(t, p);
  if (order_figures(a) != 0)
    return -1;
  /* GPU work may outlast the CPU (as in pp_analyze): the GPU zones'
   * earliest launch or start and latest end widen the time range. */
  int any = p->events > 0;
  for (size_t i = 0; i < a->ngpu_agg; i++) {
    const pp_gpu_zone_agg *g = &a->gpu_agg[i];
    int64_t lo = g->launch_ns < g->start_ns ? g->launch_ns : g->start_ns;
    if (!any || lo < p->t0)
      p->t0 = lo;
    if (!any || g->end_ns > p->t1)
      p->t1 = g->end_ns;
    any = 1;
  }
  if (a->ngpu_agg)
    p->wall_ns = pp__span(p->t0, p->t1);
  return pp_analyze_pipeline(a) != 0 || pp_analyze_gpu(a) != 0 ||
                 pp__series_build(NULL, a) != 0
             ? -1
             : 0;
}

/* The streamed figures of a trace-mode file: finished from a->stream when
 * a read fed it (and kept in a->streamed for later analyses: the events
 * are not all stored), or computed again from the stored events of a
 * model in memory, which may have changed since the last analysis. */
static int streamed_figures(pp_analysis *a) {
  const pp_trace *t = a->trace;
  pp_stream *s = a->stream;
  if (!s && a->streamed && a->streamed_by_read)
    return 0;
  pp__free(a->streamed);
  a->streamed = NULL;
  a->nstreamed = 0;
  pp__series_free(a->series_rec);
  a->series_rec = NULL;
  a->streamed_by_read = s != NULL;
  if (!s && (!(s = pp__stream_new()) || pp__stream_series(s) != 0 ||
             pp__stream_feed_threads(s, t, 0) != 0)) {
    pp__stream_free(s);
    return -1;
  }
  int rc = pp__stream_finish(s, t, &a->streamed, &a->nstreamed,
                             a->streamed_by_read ? &a->streamres : NULL);
  a->series_rec = pp__stream_take_series(s);
  a->events_late = pp__stream_late(s);
  pp__stream_free(s);
  a->stream = NULL;
  return rc;
}

int pp_analyze(const pp_trace *t, pp_analysis *a) {
  if (!t || !a)
    return -1;
  pp__analysis_results_free(a);
  a->trace = t;
  pp_profile *p = &a->prof;
  if (t->nthreads &&
      !(a->threads = pp__calloc(t->nthreads, sizeof *a->threads)))
    goto oom;
  a->nthreads = t->nthreads;
  if (t->from_stats) {
    if (analyze_from_stats(a) != 0)
      goto oom;
    a->analyzed = 1; /* the document reads the figures through the API */
    if (pp__analysis_document(a) != 0)
      goto oom;
    return 0;
  }

  /* The figures: one engine for every road (analyze/stream.h). */
  if (streamed_figures(a) != 0)
    goto oom;
  if (pp__figures_apply(a, a->streamed, a->nstreamed) != 0 ||
      order_figures(a) != 0)
    goto oom;
  int any = p->events > 0;
  for (size_t i = 0; i < t->nthreads; i++)
    p->dropped = pp__add_sat_u64(p->dropped, t->threads[i].dropped);
  for (size_t i = 0; i < t->ngpu; i++) { /* GPU work may outlast the CPU */
    const pp_gpu_zone_rec *g = &t->gpu[i];
    int64_t lo = g->launch < g->start ? g->launch : g->start;
    if (!any || lo < p->t0)
      p->t0 = lo;
    if (!any || g->end > p->t1)
      p->t1 = g->end;
    any = 1;
  }
  p->wall_ns = any ? pp__span(p->t0, p->t1) : 0;
  meta_costs(t, p);

  /* The details, from the events stored (all of them unless the read kept
   * fewer: t->diag.events_kept): zone instances for timelines, flows and
   * GPU zones, the ranges' list; requests, queues and pools too unless the
   * read streamed them (a->streamres). Their pairing counts are the
   * figures' already. */
  pp_pair_counts detail = {0};
  uint64_t r_unended = p->ranges_unclosed, r_unbegun = p->ranges_unbegun;
  /* A window ends where the stored events do: what is open there is
   * drawn to its end, not to the trace's. */
  int64_t d_end =
      pp_details_window_ns(a) >= 0 && t->diag.first_unkept_ns < p->t1
          ? t->diag.first_unkept_ns
          : p->t1;
  for (size_t i = 0; i < t->nthreads; i++) {
    if (build_zones(&t->threads[i], &a->threads[i], t->nlocs, d_end, &detail))
      goto oom;
  }
  if (build_ranges(a, d_end))
    goto oom;
  p->ranges_unclosed = r_unended;
  p->ranges_unbegun = r_unbegun;
  /* Requests from every event when the read's stream followed them. */
  const pp_stream_results *sr = a->streamres;
  if (sr && sr->have_requests) {
    if (pp__request_stats_copy(&p->req, &sr->req) != 0)
      goto oom;
  } else if (pp__requests_figures(a)) {
    goto oom;
  }
  if (pp_analyze_breakdown(a) || pp_analyze_shapes(a) || pp_analyze_gpu(a) ||
      pp_analyze_cuda(a) ||
      pp_analyze_pipeline(a) || /* after GPU: its advice reads them */
      pp__series_build(a->series_rec, a))
    goto oom;
  a->analyzed = 1; /* the document reads the figures through the API */
  if (pp__analysis_document(a))
    goto oom;
  return 0;
oom:
  a->analyzed = 0;
  pp__analysis_results_free(a);
  return -1;
}

int pp_analyze_requests(pp_analysis *a) {
  int rc = pp__requests_figures(a);
  /* a finished analysis: its document shows the new figures */
  if (rc == 0 && a->doc && pp__analysis_document(a) != 0)
    rc = -1;
  return rc;
}
