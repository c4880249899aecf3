/* SPDX-License-Identifier: MIT */
/*
 * The analysis's results document (results/doc.h): the tables every view
 * lays out, built once from the figures at the end of pp_analyze. The
 * sections move here one by one from the renderers; so far: the
 * program's metadata, zones and their ranking by self time, frames,
 * counters and queues.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "internal.h"
#include "pipeline.h"
#include "analyze/system.h"
#include "format/pptrace.h"
#include "results/advice.h"
#include "results/counters.h"
#include "results/frames.h"
#include "analyze/run_tree.h"
#include "results/queues.h"
#include "results/requests.h"
#include "results/stages.h"
#include "results/stalls.h"
#include "results/threads.h"
#include "results/zones.h"

static int queues(const pp_analysis *a, pp_doc *d) {
  const pp_pipeline *p = &a->prof.pipe;
  if (p->queues_unavailable) {
    pp_table *t = pp_results_queues(d, NULL, 0);
    pp_table_unavailable(t, "stats mode keeps no queue statistics (record "
                            "in trace mode)");
    return t ? 0 : -1;
  }
  if (!p->nqueues)
    return 0;
  pp_queue_figures *f = pp__calloc(p->nqueues, sizeof *f);
  if (!f)
    return -1;
  for (size_t i = 0; i < p->nqueues; i++) {
    const pp_queue_stats *q = &p->queues[i];
    pp_queue_figures *o = &f[i];
    o->name = q->name;
    o->from = q->from;
    o->to = q->to;
    o->depth = &q->depth;
    o->pushes = (int64_t)q->pushes;
    o->pops = (int64_t)q->pops;
    o->paired = (int64_t)q->matched;
    o->unmatched_pops = (int64_t)q->unmatched_pops;
    o->items_untracked = (int64_t)q->items_untracked;
    o->producer_waits = (int64_t)q->waits_full;
    o->consumer_waits = (int64_t)q->waits_empty;
    o->producer_blocked_ns = (double)q->blocked_full_ns;
    o->consumer_waited_ns = (double)q->blocked_empty_ns;
    o->producer_blocked_pct = q->producer_blocked_pct;
    o->consumer_waiting_pct = q->consumer_waiting_pct;
    o->producer_waiters = q->waiters_full;
    o->consumer_waiters = q->waiters_empty;
    o->waits_unclosed = (int64_t)q->waits_unclosed;
    int any = q->wait.count > 0;
    o->wait_p50_ns = any ? (double)pp_hist_percentile(&q->wait, 50) : NAN;
    o->wait_p99_ns = any ? (double)pp_hist_percentile(&q->wait, 99) : NAN;
    o->wait_max_ns = any ? (double)q->wait.max : NAN;
  }
  pp_table *t = pp_results_queues(d, f, p->nqueues);
  pp__free(f);
  return t ? 0 : -1;
}

/* "metadata": what the program said of its run (pp_metadata "user.*"
 * keys), each key at its last value, in the order first set. */
static const pp_col meta_cols[] = {
    {"key", "key", PP_VALUE_TEXT, 0, NULL},
    {"value", "value", PP_VALUE_TEXT, 0, NULL},
};

static int metadata(const pp_analysis *a, pp_doc *d) {
  const pp_trace *t = a->trace;
  pp_table *tab = NULL;
  for (size_t i = 0; i < t->nmeta; i++) {
    const char *k = t->meta[i].key;
    if (!k || strncmp(k, "user.", 5) != 0)
      continue;
    int first = 1;
    for (size_t j = 0; j < i && first; j++)
      first = !t->meta[j].key || strcmp(t->meta[j].key, k) != 0;
    if (!first)
      continue;
    if (!tab && !(tab = pp_doc_table(d, "metadata", "metadata",
                                     "set by the program with pp_metadata",
                                     meta_cols, 2)))
      return -1;
    long r = pp_table_row(tab);
    pp_cell_text(tab, r, "key", k);
    pp_cell_text(tab, r, "value", pp_trace_meta(t, k));
  }
  return 0;
}

/* "counters" and "sampled_counters": every series that is a measurement
 * (a power counter that never moved is not: system.unavailable says
 * why), the program's and the library's apart by the series' kind, not
 * by its name. */
static int counters(const pp_analysis *a, pp_doc *d) {
  const pp_trace *t = a->trace;
  const pp_profile *p = &a->prof;
  if (!p->ncounters)
    return 0;
  uint32_t mkind = pp_trace_metric_kind(t);
  pp_counter_figures *f = pp__calloc(p->ncounters, sizeof *f);
  if (!f)
    return -1;
  size_t n = 0;
  for (size_t i = 0; i < p->ncounters; i++) {
    const pp_counter_stats *c = &p->counters[i];
    if (!pp_series_is_measurement(t, c))
      continue;
    pp_counter_figures *o = &f[n++];
    o->name = pp_trace_loc_name(t, c->loc);
    o->library_metric =
        pp_loc_metric(t, c->loc, mkind, NULL, NULL, NULL) != PP_METRIC_NONE;
    o->is_float = c->is_float;
    o->unit = pp_counter_unit(o->name, o->library_metric, c->is_float);
    o->samples = c->samples;
    o->min = c->min;
    o->max = c->max;
    o->mean = c->mean;
    o->last = c->last;
  }
  int rc = pp_results_counters(d, f, n);
  pp__free(f);
  return rc;
}

/* "frames": per frame-mark stream, its frame times. */
static int frames(const pp_analysis *a, pp_doc *d) {
  const pp_profile *p = &a->prof;
  if (!p->nframes)
    return 0;
  pp_frame_figures *f = pp__calloc(p->nframes, sizeof *f);
  if (!f)
    return -1;
  for (size_t i = 0; i < p->nframes; i++) {
    const pp_frame_stats *s = &p->frames[i];
    const pp_hist *h = &s->hist;
    int any = h->count > 0;
    f[i] = (pp_frame_figures){
        .name = pp_trace_loc_name(a->trace, s->loc),
        .frames = s->frames,
        .fps = s->fps,
        .mean_ns = s->mean_ns,
        .std_ns = s->std_ns,
        .jitter_ns = s->jitter_ns,
        .p50_ns = any ? (double)pp_hist_percentile(h, 50.0) : NAN,
        .p90_ns = any ? (double)pp_hist_percentile(h, 90.0) : NAN,
        .p99_ns = any ? (double)pp_hist_percentile(h, 99.0) : NAN,
        .max_ns = any ? (double)h->max : NAN};
  }
  pp_table *t = pp_results_frames(d, f, p->nframes);
  pp__free(f);
  return t ? 0 : -1;
}

/* How many zones the ranking by self time keeps (the text report's
 * --top shows up to this many; the summary JSON its first 3). */
#define TOP_SELF_KEEP 64

/* The figures of one zone site; wall 0: no share of it. */
static pp_zone_figures zone_figures(const pp_trace *t, const pp_zone_stats *z,
                                    double wall) {
  const pp_loc *l = z->loc < t->nlocs ? &t->locs[z->loc] : NULL;
  const pp_hist *h = &z->hist;
  return (pp_zone_figures){
      .name = pp_trace_loc_name(t, z->loc),
      .function = l ? l->function : NULL,
      .file = l ? l->file : NULL,
      .line = l ? l->line : 0,
      .count = z->count,
      .total_ns = (double)z->total_ns,
      .self_ns = (double)z->self_ns,
      .mean_ns = z->mean_ns,
      .std_ns = z->std_ns,
      .min_ns = z->count ? (double)z->min_ns : 0,
      .max_ns = z->count ? (double)z->max_ns : 0,
      .p50_ns = (double)pp_hist_percentile(h, 50.0),
      .p90_ns = (double)pp_hist_percentile(h, 90.0),
      .p95_ns = (double)pp_hist_percentile(h, 95.0),
      .p99_ns = (double)pp_hist_percentile(h, 99.0),
      .p999_ns = (double)pp_hist_percentile(h, 99.9),
      .wall_pct = wall > 0 ? (double)z->total_ns / wall * 100.0 : NAN,
      .rate_per_s = wall > 0 ? (double)z->count / (wall * 1e-9) : NAN};
}

/* "gpu_zones": the device time of GPU zones (when the trace used them). */
static int gpu_zones(const pp_analysis *a, pp_doc *d) {
  const pp_gpu_stats *g = &a->prof.gpu;
  if (!g->used)
    return 0;
  pp_zone_figures *f = g->nzones ? pp__calloc(g->nzones, sizeof *f) : NULL;
  if (g->nzones && !f)
    return -1;
  for (size_t i = 0; i < g->nzones; i++)
    f[i] = zone_figures(a->trace, &g->zones[i], 0);
  pp_table *t = pp_results_gpu_zones(d, f, g->nzones);
  pp__free(f);
  if (!t)
    return -1;
  if (!g->nzones && g->unavailable)
    pp_table_unavailable(t, g->unavailable);
  else if (!g->nzones)
    pp_table_empty(t, "none resolved");
  else if (g->unavailable)
    pp_table_remark(t, "%s", g->unavailable);
  if (g->not_aggregated > 0)
    pp_table_warning(t,
                     "%lld resolved zones are not in the statistics (stats "
                     "mode keeps at most %u site/device/stream keys)",
                     (long long)g->not_aggregated, PPT_STATS_GPU_MAX);
  return pp_doc_ok(d) ? pp__gpu_zone_facts(a, d) : -1;
}

/* "zones" (in the profile's order: total time descending) with what the
 * pairing left out as remarks, and "top_self". */
static int zones(const pp_analysis *a, pp_doc *d) {
  const pp_trace *t = a->trace;
  const pp_profile *p = &a->prof;
  pp_zone_figures *f = p->nzones ? pp__calloc(p->nzones, sizeof *f) : NULL;
  if (p->nzones && !f)
    return -1;
  double wall = (double)p->wall_ns;
  for (size_t i = 0; i < p->nzones; i++)
    f[i] = zone_figures(t, &p->zones[i], wall);
  pp_table *zt = pp_results_zones(d, f, p->nzones, NULL);
  if (zt) { /* what the pairing did (pair/zones.h, docs/internals/pairing.md) */
    if (p->unclosed)
      pp_table_remark(zt, "%" PRIu64 " zone instances lost their end "
                      "(closed at the end of the trace or of an enclosing "
                      "zone): not in the figures above", p->unclosed);
    if (p->unmatched_ends)
      pp_table_remark(zt, "%" PRIu64 " zone ends without a begin were "
                      "ignored", p->unmatched_ends);
    if (p->pairing.too_deep)
      pp_table_remark(zt, "%" PRIu64 " zone begins nested deeper than %u "
                      "levels were not paired (nor their ends)",
                      p->pairing.too_deep, PP_PAIR_MAX_DEPTH);
    if (p->pairing.backwards)
      pp_table_remark(zt, "%" PRIu64 " zone events were earlier than their "
                      "thread's previous event and were taken at its time",
                      p->pairing.backwards);
    if (p->ranges_unclosed || p->ranges_unbegun || p->ranges_lost)
      pp_table_remark(zt, "ranges: %" PRIu64 " never ended, %" PRIu64
                      " ends without a begin, %" PRIu64 " halves not kept "
                      "(no room): not in the figures above",
                      p->ranges_unclosed, p->ranges_unbegun, p->ranges_lost);
  }
  if (zt && p->nzones)
    pp_results_top_self(d, f, p->nzones, TOP_SELF_KEEP);
  pp__free(f);
  return zt ? 0 : -1;
}

/* "threads": every recorded thread, the profiler's own flagged (a
 * `pipeprof run`'s sampler and writer: in the JSON, not in the tables). */
static int threads(const pp_analysis *a, const pp_run_tree *rt,
                   pp_doc *d) {
  const pp_trace *t = a->trace;
  pp_thread_row *f =
      t->nthreads ? pp__calloc(t->nthreads, sizeof *f) : NULL;
  if (t->nthreads && !f)
    return -1;
  double wall = (double)a->prof.wall_ns;
  for (size_t i = 0; i < t->nthreads; i++) {
    const pp_thread *th = &t->threads[i];
    const pp_thread_figures *x = &a->threads[i];
    f[i] = (pp_thread_row){
        .name = th->name,
        .tid = th->tid,
        .pid = pp_thread_pid(t, th),
        .busy_ns = (double)x->busy_ns,
        .busy_pct = wall > 0 ? (double)x->busy_ns / wall * 100.0 : NAN,
        .zones = x->zones_measured,
        .events = x->events,
        .dropped = th->dropped,
        .profiler = pp_run_tree_is_profiler(t, rt, th)};
  }
  pp_table *tab = pp_results_threads(
      d, f, t->nthreads,
      rt->is_run ? "no thread of the profiled programs recorded events (they "
                  "do not link libpipeprof); CPU per thread: see \"threads "
                  "of the profiled programs\""
                : NULL);
  pp__free(f);
  return tab ? 0 : -1;
}

/* "stages": the pipeline's stages with the bound marked (when the trace
 * has stages or flows). */
static int stages(const pp_analysis *a, pp_doc *d) {
  const pp_pipeline *p = &a->prof.pipe;
  if (!p->nstages && !p->nflows)
    return 0;
  pp_stage_figures *f =
      p->nstages ? pp__calloc(p->nstages, sizeof *f) : NULL;
  if (p->nstages && !f)
    return -1;
  for (size_t i = 0; i < p->nstages; i++) {
    const pp_stage_stats *s = &p->stages[i];
    int any = s->items > 0;
    f[i] = (pp_stage_figures){
        .name = s->name,
        .workers = s->workers,
        .items = s->items,
        .calls = s->calls,
        .busy_ns = s->busy_ns,
        .util_pct = any ? s->util * 100.0 : NAN,
        .max_thread_util_pct = s->max_thread_util * 100.0,
        .service_ns = any ? s->service_ns : NAN,
        .capacity_per_s = s->capacity_per_s > 0 ? s->capacity_per_s : NAN,
        .in_queue = s->in_queue >= 0 ? p->queues[s->in_queue].name : NULL,
        .out_queue = s->out_queue >= 0 ? p->queues[s->out_queue].name : NULL,
        .bound = (int32_t)i == p->bound};
  }
  pp_table *t = pp_results_stages(d, f, p->nstages);
  pp__free(f);
  if (!t)
    return -1;
  const pp_stage_stats *b = p->bound >= 0 ? &p->stages[p->bound] : NULL;
  pp_pipeline_figures pf = {
      .bound = b ? b->name : NULL,
      .bound_why = p->nstages ? "no stage has zones named like it"
                              : "no stages (flows only)",
      .bound_saturated = b && b->util >= 0.9,
      .bound_per_s = b ? p->bound_per_s : NAN,
      .achieved_per_s = p->achieved_per_s,
      .efficiency = p->efficiency,
      .window_ns = pp__span(p->win_start, p->win_end),
      .stall_periods = p->stall_periods};
  return pp_results_pipeline_facts(d, &pf) ? 0 : -1;
}

/* Request or batch events to report (trace mode only: stats mode keeps
 * no request events): the request tables are built, and the views show
 * the requests' section, when this holds. */
static int has_requests(const pp_analysis *a) {
  const pp_request_stats *r = &a->prof.req;
  return !a->trace->from_stats && (r->requests || r->warmup || r->batches ||
                                   r->orphans || r->lost);
}

/* "request_latency": E2E, TTFT, TPOT and ITL of the successful requests
 * (when the trace has request events). */
static int request_latency(const pp_analysis *a, pp_doc *d) {
  const pp_request_stats *r = &a->prof.req;
  if (!has_requests(a))
    return 0;
  static const char *const no_tokens =
      "no token events (pp_request_first_token, pp_request_tokens)";
  const struct {
    const char *key, *metric;
    const pp_hist *h;
    const char *empty;
  } m[] = {{"e2e", "E2E", &r->e2e, NULL},
           {"ttft", "TTFT", &r->ttft, no_tokens},
           {"tpot", "TPOT", &r->tpot, no_tokens},
           {"itl", "ITL", &r->itl, no_tokens}};
  pp_latency_figures f[4];
  for (size_t i = 0; i < 4; i++) {
    const pp_hist *h = m[i].h;
    f[i] = (pp_latency_figures){
        .key = m[i].key,
        .metric = m[i].metric,
        .count = h->count,
        .mean_ns = pp_hist_mean(h),
        .min_ns = (double)h->min,
        .p50_ns = (double)pp_hist_percentile(h, 50.0),
        .p90_ns = (double)pp_hist_percentile(h, 90.0),
        .p95_ns = (double)pp_hist_percentile(h, 95.0),
        .p99_ns = (double)pp_hist_percentile(h, 99.0),
        .p999_ns = (double)pp_hist_percentile(h, 99.9),
        .max_ns = (double)h->max,
        .empty_note = m[i].empty};
  }
  return pp_results_request_latency(d, f, 4, NULL) ? 0 : -1;
}

/* "zone_slos": each zone SLO given (--slo NAME=DURATION), as
 * pp_zone_slo_get computes it. */
static int zone_slos(const pp_analysis *a, pp_doc *d) {
  static const pp_col cols[] = {
      {"zone", "zone", PP_VALUE_TEXT, 0, NULL},
      {"target_ns", "target", PP_VALUE_NS, PP_COL_INT, NULL},
      {"count", "instances", PP_VALUE_COUNT, PP_COL_INT, NULL},
      {"met", "met", PP_VALUE_COUNT, PP_COL_INT, NULL},
      {"violations", "violations", PP_VALUE_COUNT, PP_COL_INT, NULL},
      {"uncertain", "uncertain", PP_VALUE_COUNT, PP_COL_INT, NULL},
      {"compliance_pct", "compliance", PP_VALUE_PCT, 0, NULL},
      {"compliance_max_pct", "compliance at most", PP_VALUE_PCT,
       PP_COL_JSON_ONLY, NULL},
  };
  if (!a->req_slo.nzones)
    return 0;
  pp_table *t = pp_doc_table(
      d, "zone_slos", "service-level objectives",
      "zones: each instance of every zone of that name within the target; "
      "uncertain: within the histogram's 0.1% of the target, either",
      cols, sizeof cols / sizeof *cols);
  for (size_t i = 0; t && i < a->req_slo.nzones; i++) {
    pp_zone_slo z;
    if (pp_zone_slo_get(a, i, &z) != 0)
      continue;
    long r = pp_table_row(t);
    pp_cell_text(t, r, "zone", z.name);
    pp_cell_int(t, r, "target_ns", z.limit_ns);
    if (!z.found || !z.count) {
      const char *why = z.found ? "the zone has no instance"
                                : "no zone of that name in this trace";
      for (size_t c = 2; c < sizeof cols / sizeof *cols; c++)
        pp_cell_unavailable(t, r, cols[c].key, why);
      continue;
    }
    pp_cell_count(t, r, "count", z.count);
    pp_cell_count(t, r, "met", z.met);
    pp_cell_count(t, r, "violations", z.violations);
    pp_cell_count(t, r, "uncertain", z.uncertain);
    pp_cell_num(t, r, "compliance_pct", z.compliance_pct);
    pp_cell_num(t, r, "compliance_max_pct", z.compliance_hi_pct);
    if (z.uncertain) {
      char lo[32], hi[32];
      pp_row_note(t, r,
                  "%" PRIu64 " within 0.1%% of the target (either): "
                  "compliance %s to %s",
                  z.uncertain, pp_format_pct(lo, sizeof lo, z.compliance_pct),
                  pp_format_pct(hi, sizeof hi, z.compliance_hi_pct));
    }
  }
  return pp_doc_ok(d) ? 0 : -1;
}

/* A limit of an SLO as a fact: none (null, "-") when not set. */
static void slo_limit(pp_table *t, const char *key, const char *label,
                      int64_t ns) {
  if (ns > 0)
    pp_fact_int(t, key, label, ns, PP_VALUE_NS);
  else
    pp_fact_num(t, key, label, NAN, PP_VALUE_NS);
}

/* The requests' facts: "request_facts" (counts, span, rates),
 * "request_slo" (with an SLO), "request_validity" (the sample size the
 * percentiles need), "request_batches" (the counts; the mean size and
 * the padding waste with batches) and "request_batch_sizes" (with
 * batches). */
static int request_facts(const pp_analysis *a, pp_doc *d) {
  const pp_request_stats *r = &a->prof.req;
  if (!has_requests(a))
    return 0;
  pp_table *t = pp_doc_facts(d, "request_facts", "requests", NULL);
  pp_fact_int(t, "requests", "requests", (int64_t)r->requests,
              PP_VALUE_COUNT);
  pp_fact_int(t, "completed", "completed", (int64_t)r->completed,
              PP_VALUE_COUNT);
  pp_fact_int(t, "failed", "failed", (int64_t)r->failed, PP_VALUE_COUNT);
  pp_fact_int(t, "unfinished", "unfinished", (int64_t)r->unfinished,
              PP_VALUE_COUNT);
  pp_fact_int(t, "warmup_excluded", "warm-up excluded", (int64_t)r->warmup,
              PP_VALUE_COUNT);
  pp_fact_int(t, "orphan_events", "events without a begin",
              (int64_t)r->orphans, PP_VALUE_COUNT);
  long l = pp_fact_int(t, "lost", "lost", (int64_t)r->lost, PP_VALUE_COUNT);
  if (r->lost)
    pp_row_note(t, l, "more open at once than the pairing table holds");
  pp_fact_int(t, "output_tokens", "output tokens", (int64_t)r->output_tokens,
              PP_VALUE_COUNT);
  if (!r->requests) { /* batches only (the runtime's batcher): no span */
    static const char none[] = "no request recorded (pp_request_begin)";
    pp_fact_unavailable(t, "span_ns", "span", none);
    pp_fact_unavailable(t, "requests_per_s", "throughput", none);
    pp_fact_unavailable(t, "output_tokens_per_s", "token throughput", none);
  } else {
    pp_fact_int(t, "span_ns", "span", r->span_ns, PP_VALUE_NS);
    pp_fact_num(t, "requests_per_s", "throughput", r->req_per_s,
                PP_VALUE_RATE);
    if (r->output_tokens)
      pp_fact_num(t, "output_tokens_per_s", "token throughput",
                  r->tokens_per_s, PP_VALUE_RATE);
    else
      pp_fact_unavailable(t, "output_tokens_per_s", "token throughput",
                          "no output tokens recorded (pp_request_tokens)");
  }
  if (r->slo_set) {
    t = pp_doc_facts(d, "request_slo", "SLO",
                     "a finished request is good when it meets every limit");
    slo_limit(t, "ttft_ns", "TTFT limit", r->slo.ttft_ns);
    slo_limit(t, "tpot_ns", "TPOT limit", r->slo.tpot_ns);
    slo_limit(t, "e2e_ns", "E2E limit", r->slo.e2e_ns);
    pp_fact_int(t, "good", "good requests", (int64_t)r->good,
                PP_VALUE_COUNT);
    pp_fact_num(t, "goodput_per_s", "goodput", r->goodput_per_s,
                PP_VALUE_RATE);
    long c = pp_fact_num(t, "compliance", "compliance", r->compliance,
                         PP_VALUE_FRACTION);
    pp_row_note(t, c, "%" PRIu64 " of %" PRIu64 " finished requests",
                r->good, r->completed + r->failed);
  }
  uint64_t over = r->slo_set ? r->completed - r->good : 0;
  t = pp_doc_facts(d, "request_validity", "validity",
                   "MLPerf early stopping: the requests a percentile needs "
                   "to be claimed at this confidence");
  pp_fact_num(t, "confidence", "confidence", 0.99, PP_VALUE_FRACTION);
  pp_fact_int(t, "over_latency", "over the SLOs", (int64_t)over,
              PP_VALUE_COUNT);
  static const double pcts[] = {90, 99};
  for (size_t i = 0; i < 2; i++) {
    char key[32], label[48];
    uint64_t need = pp_request_min_count(pcts[i], 0.99, over);
    snprintf(key, sizeof key, "min_requests_p%.0f", pcts[i]);
    snprintf(label, sizeof label, "requests for p%.0f", pcts[i]);
    long n = pp_fact_int(t, key, label, (int64_t)need, PP_VALUE_COUNT);
    if (need && r->completed >= need)
      pp_row_note(t, n, "met");
    else
      pp_row_note(t, n, "need %" PRIu64 " more",
                  need > r->completed ? need - r->completed : 0);
  }
  t = pp_doc_facts(d, "request_batches", "batches", NULL);
  pp_fact_int(t, "count", "batches", (int64_t)r->batches, PP_VALUE_COUNT);
  pp_fact_int(t, "items", "items", (int64_t)r->batch_items, PP_VALUE_COUNT);
  pp_fact_int(t, "padded_items", "padded items", (int64_t)r->batch_padded,
              PP_VALUE_COUNT);
  if (r->batches) { /* the mean and the waste, and the sizes table */
    pp_fact_num(t, "mean_size", "mean size", r->batch_mean, PP_VALUE_NUMBER);
    pp_fact_num(t, "padding_waste", "padding waste", r->padding_waste,
                PP_VALUE_FRACTION);
    static const pp_col size_cols[] = {
        {"size", "batch size", PP_VALUE_COUNT, PP_COL_INT, NULL},
        {"batches", "batches", PP_VALUE_COUNT, PP_COL_INT, NULL}};
    t = pp_doc_table(d, "request_batch_sizes", "batches by size", NULL,
                     size_cols, 2);
    for (size_t i = 0; t && i < r->nsizes; i++) {
      long row = pp_table_row(t);
      pp_cell_int(t, row, "size", r->sizes[i].size);
      pp_cell_count(t, row, "batches", r->sizes[i].batches);
    }
  }
  return pp_doc_ok(d) ? 0 : -1;
}

/* "stalls": the pipeline's longest stall periods. */
static int stalls(const pp_analysis *a, pp_doc *d) {
  const pp_pipeline *p = &a->prof.pipe;
  if (!p->nstalls)
    return 0;
  pp_stall_figures f[PP_STALLS_MAX];
  size_t n = p->nstalls < PP_STALLS_MAX ? p->nstalls : PP_STALLS_MAX;
  for (size_t i = 0; i < n; i++) {
    const pp_stall *s = &p->stalls[i];
    const pp_queue_stats *q = &p->queues[s->queue];
    f[i] = (pp_stall_figures){.queue = q->name,
                              .stage = s->full ? q->from : q->to,
                              .full = s->full,
                              .recorded = s->recorded,
                              .start_ns = s->start,
                              .end_ns = s->end,
                              .at_ns = pp__span(a->prof.t0, s->start)};
  }
  return pp_results_stalls(d, f, n, p->stall_periods) ? 0 : -1;
}

/* "system_run": what `pipeprof run` says of the run (the command, its
 * exit, the pids, the profiler's CPU, the rusage of the run). */
static int system_run(const pp_run_tree *rt, const pp_system *s,
                      pp_doc *d) {
  if (!s->run_command && !s->run_exit && !s->has_wall && !s->has_user &&
      !s->has_system && !s->has_maxrss)
    return 0;
  pp_table *t = pp_doc_facts(d, "system_run", "run", NULL);
  if (!t)
    return -1;
  if (s->run_command)
    pp_fact_text(t, "command", "command", s->run_command);
  if (s->run_exit)
    pp_fact_text(t, "exit", "exit", s->run_exit);
  if (rt->has_pid)
    pp_fact_int(t, "pid", "pid", rt->pid, PP_VALUE_COUNT);
  if (rt->has_profiler_pid)
    pp_fact_int(t, "profiler_pid", "profiler pid", rt->profiler_pid,
                PP_VALUE_COUNT);
  if (isfinite(rt->profiler_cpu_s))
    pp_fact_num(t, "profiler_cpu_s", "profiler CPU time", rt->profiler_cpu_s,
                PP_VALUE_SECONDS);
  if (s->has_wall)
    pp_fact_num(t, "wall_s", "wall time", s->wall_ns / 1e9, PP_VALUE_SECONDS);
  if (s->has_user)
    pp_fact_num(t, "user_s", "CPU user (rusage)", s->user_ns / 1e9,
                PP_VALUE_SECONDS);
  if (s->has_system)
    pp_fact_num(t, "system_s", "CPU system (rusage)", s->system_ns / 1e9,
                PP_VALUE_SECONDS);
  if (s->has_maxrss)
    pp_fact_num(t, "maxrss_bytes", "max RSS (rusage)", s->maxrss_bytes,
                PP_VALUE_BYTES);
  return pp_doc_ok(d) ? 0 : -1;
}

static int system_tables(const pp_analysis *a, const pp_run_tree *rt,
                         pp_doc *d) {
  pp_system s;
  if (pp_system_get(a, &s))
    return -1;
  int rc = pp__system_facts(a, &s, d);
  if (!rc)
    rc = system_run(rt, &s, d);
  if (!rc)
    rc = pp__measure_tables(&s, d);
  if (!rc)
    rc = pp__machine_tables(&s, d);
  if (!rc)
    rc = pp__tree_tables(a, rt, &s, d);
  if (!rc)
    rc = pp__perf_tables(&s, d);
  if (!rc)
    rc = pp__energy_tables(&s, d);
  pp_system_free(&s);
  return rc;
}

/* "recommendations": the rules' advice, most severe first. */
/* A stage's hottest function, from the document's "stacks" table (its
 * zone's first row: most samples taken in it), as evidence:
 * "; 62% of its CPU stack samples in F (file)"; "" when there is none. */
static void hot_function(const pp_doc *d, const char *stage, char *out,
                         size_t len) {
  out[0] = '\0';
  const pp_table *t = pp_doc_find(d, "stacks");
  long zc = t ? pp_table_col(t, "zone") : -1, fc = pp_table_col(t, "function"),
       mc = pp_table_col(t, "module"), sc = pp_table_col(t, "self_pct");
  if (!t || zc < 0 || fc < 0 || mc < 0 || sc < 0)
    return;
  for (size_t r = 0; r < t->nrows; r++) {
    const pp_cell *z = pp_table_cell(t, r, (size_t)zc);
    if (!z->text || strcmp(z->text, stage) != 0)
      continue;
    const pp_cell *f = pp_table_cell(t, r, (size_t)fc);
    const pp_cell *m = pp_table_cell(t, r, (size_t)mc);
    char pct[32];
    pp_cell_format(&t->cols[sc], pp_table_cell(t, r, (size_t)sc), pct,
                   sizeof pct);
    snprintf(out, len, "; %s of its CPU stack samples in %s%s%s%s", pct,
             f->text ? f->text : "?", m->text ? " (" : "",
             m->text ? m->text : "", m->text ? ")" : "");
    return;
  }
}

static int advice(const pp_analysis *a, pp_doc *d) {
  const pp_pipeline *p = &a->prof.pipe;
  pp_advice_figures *f =
      p->nadvice ? pp__calloc(p->nadvice, sizeof *f) : NULL;
  if (p->nadvice && !f)
    return -1;
  /* evidence with the hot function of the stage an advice names */
  char **more = p->nadvice ? pp__calloc(p->nadvice, sizeof *more) : NULL;
  if (p->nadvice && !more) {
    pp__free(f);
    return -1;
  }
  for (size_t i = 0; i < p->nadvice; i++) {
    f[i] = (pp_advice_figures){.rule = p->advice[i].rule,
                               .severity = p->advice[i].severity,
                               .text = p->advice[i].text,
                               .evidence = p->advice[i].evidence};
    char hot[640];
    if (!p->advice[i].stage)
      continue;
    hot_function(d, p->advice[i].stage, hot, sizeof hot);
    size_t n = strlen(p->advice[i].evidence) + strlen(hot) + 1;
    if (hot[0] && (more[i] = pp__malloc(n)) != NULL) {
      snprintf(more[i], n, "%s%s", p->advice[i].evidence, hot);
      f[i].evidence = more[i];
    }
  }
  pp_table *t = pp_results_advice(d, f, p->nadvice);
  for (size_t i = 0; i < p->nadvice; i++)
    pp__free(more[i]);
  pp__free(more);
  pp__free(f);
  return t ? 0 : -1;
}

int pp__analysis_document(pp_analysis *a) {
  pp_doc_free(a->doc);
  a->doc = pp_doc_new();
  /* what `pipeprof run` recorded of its command, read once for every
   * builder that needs it */
  pp_run_tree rt;
  int have_rt = a->doc && pp_run_tree_get(a->trace, a, &rt) == 0;
  pp_doc *d = a->doc;
  if (!have_rt || pp__header_facts(a, &rt, d) != 0 || metadata(a, d) != 0 ||
      zones(a, d) != 0 || threads(a, &rt, d) != 0 ||
      pp__process_table(a, &rt, d) != 0 || pp__process_zones(a, d) != 0 ||
      frames(a, d) != 0 ||
      counters(a, d) != 0 || queues(a, d) != 0 || stages(a, d) != 0 ||
      request_latency(a, d) != 0 || gpu_zones(a, d) != 0 ||
      stalls(a, d) != 0 || pp__stack_tables(a, d) != 0 ||
      advice(a, d) != 0 ||
      system_tables(a, &rt, d) != 0 || request_facts(a, d) != 0 ||
      zone_slos(a, d) != 0 || pp__overhead_facts(a, &rt, d) != 0 ||
      pp__flow_table(a, d) != 0 || pp__breakdown_tables(a, d) != 0 ||
      pp__memory_tables(a, d) != 0 || pp__nvml_tables(a, d) != 0 ||
      pp__cuda_tables(a, d) != 0 || pp__hist_tables(a, d) != 0 ||
      !pp_doc_ok(d)) {
    if (have_rt)
      pp_run_tree_free(&rt);
    pp_doc_free(a->doc);
    a->doc = NULL;
    return -1;
  }
  pp_run_tree_free(&rt);
  return 0;
}
