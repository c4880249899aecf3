/* SPDX-License-Identifier: MIT */
/*
 * The machine-readable summary of an analysed trace: schema
 * "pipeprof.summary", schema_version 1, specified field by field in
 * docs/formats/summary-json.md (keep the two in step; within one
 * schema_version fields are only ever added). Everything comes from the
 * pp_profile and the threads; nothing is recomputed here except ratios and
 * histogram percentiles.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "analyze/series.h"
#include "analyze/system.h"
#include "export/doc_json.h"
#include "export/export.h"
#include "export/jsonw.h"
#include "export/report_gpuzones.h"
#include "analyze/run_tree.h"
#include "format/pptrace.h"
#include "internal.h"
#include "pipeprof/version.h"

#define SUMMARY_SCHEMA "pipeprof.summary"
#define SUMMARY_SCHEMA_VERSION 1
/* Compatible additions within version 1 (docs/formats/summary-json.md):
 * 1 = queues, pipeline, recommendations; 2 = gpu_zones, memory_pools;
 * 3 = measured costs in overhead; 4 = processes, threads[].pid; 5 =
 * frames[].energy and the CPU/GPU parts in requests.energy;
 * 6 = device_memory; 7 = system.run's pids, system.process_tree's
 * processes and threads, the run_* fields of overhead;
 * 8 = pairing (what zone and range pairing counted), memory_pools[]'s
 * inconsistent, overhead's events_estimated_ns, dropped_events and
 * dropped_estimated_ns; ...; 13 = zones[].hist, frames[].hist,
 * queues[].wait.hist and series (chart data); 15 = in a `pipeprof run`,
 * process is the profiled command (with its command line) and profiler
 * is pipeprof, threads[].profiler marks pipeprof's threads, overhead
 * holds only the run's figures, and run_profiler_pct_of_tree_cpu is null
 * with run_pct_unavailable when not meaningful; 20 = every section from
 * the results document (docs/formats/summary-json.md). */
#define SUMMARY_SCHEMA_MINOR 22
#define TOP_SELF_N 3

/* zones[r]'s histogram (the document's rows are the profile's zones, in
 * its order). */
static void zone_hist(pp_jsonw *w, size_t r, void *ctx) {
  const pp_profile *p = ctx;
  if (r < p->nzones)
    pp_summary_hist_json(w, "hist", &p->zones[r].hist);
}

static void write_zones(pp_jsonw *w, const pp_analysis *a) {
  pp_jsonw_key(w, "zones");
  pp_doc_json_rows(w, pp_doc_find(a->doc, "zones"), zone_hist,
                   (void *)&a->prof);
  pp_jsonw_key(w, "top_self");
  pp_doc_json_rows_n(w, pp_doc_find(a->doc, "top_self"), TOP_SELF_N, NULL,
                     NULL);
}

/* The rows of table "rows" in group r + 1 (the nested rows of row r of
 * the parent table) as the array member key. */
typedef struct group_ctx {
  const pp_table *rows;
  const char *key;
} group_ctx;

static void group_rows(pp_jsonw *w, size_t r, void *ctx) {
  const group_ctx *g = ctx;
  pp_jsonw_key(w, g->key);
  pp_doc_json_group(w, g->rows, (uint32_t)r + 1);
}

/* "key": {"<list>": [parent rows, each with its nested rows as
 * "<nested>"], then the facts}: the results document's parent and nested
 * tables (analyze/doc_breakdown.c). */
static void write_nested(pp_jsonw *w, const pp_analysis *a, const char *key,
                         const char *list, const char *parent,
                         const char *nested, const char *nested_key) {
  group_ctx g = {pp_doc_find(a->doc, nested), nested_key};
  pp_jsonw_key(w, key);
  pp_jsonw_obj_begin(w);
  pp_jsonw_key(w, list);
  pp_jsonw_arr_begin_lines(w);
  pp_doc_json_objects(w, pp_doc_find(a->doc, parent), group_rows, &g);
  pp_jsonw_arr_end(w);
  pp_doc_json_facts(w, pp_doc_find(a->doc, key));
  pp_jsonw_obj_end(w);
}

/* "zone_slos" (schema_minor 15): each zone SLO given, as
 * pp_zone_slo_get computed it; an empty array when none was given. */
static void write_zone_slos(pp_jsonw *w, const pp_analysis *a) {
  pp_jsonw_key(w, "zone_slos");
  pp_doc_json_rows(w, pp_doc_find(a->doc, "zone_slos"), NULL, NULL);
}

/* The subject of the document: the profiled command in a `pipeprof run`
 * (and pipeprof as "profiler"), else the process that recorded. */
static void write_process(pp_jsonw *w, const pp_trace *t,
                          const pp_run_tree *rt) {
  pp_jsonw_key(w, "process");
  pp_jsonw_obj_begin(w);
  if (rt && rt->is_run && rt->has_pid) {
    /* the name the program's own session gave (its full name), else the
     * kernel's comm as sampled (cut to 15 bytes) */
    const char *name = pp_trace_process_name(t, rt->pid);
    for (size_t i = 0; i < rt->nprocs && !name; i++)
      if (rt->procs[i].id == rt->pid && rt->procs[i].comm[0])
        name = rt->procs[i].comm;
    pp_jsonw_kv_uint(w, "pid", rt->pid);
    pp_jsonw_kv_str(w, "name", name);
    pp_jsonw_kv_str(w, "command", rt->command);
    pp_jsonw_obj_end(w);
    pp_jsonw_key(w, "profiler");
    pp_jsonw_obj_begin(w);
    if (rt->has_profiler_pid)
      pp_jsonw_kv_uint(w, "pid", rt->profiler_pid);
    pp_jsonw_kv_str(w, "name", "pipeprof");
    pp_jsonw_obj_end(w);
    return;
  }
  pp_jsonw_kv_uint(w, "pid", t->pid);
  pp_jsonw_kv_str(w, "name", pp_trace_meta(t, "process_name"));
  pp_jsonw_obj_end(w);
}

/* The run's energy e over n as "joules<suffix>",
 * "cpu_package_joules<suffix>" and "gpu_joules<suffix>", each part only
 * where it was measured. */
static void kv_energy(pp_jsonw *w, const pp_energy *e, const char *suffix,
                      double n) {
  char k[64];
  snprintf(k, sizeof k, "joules%s", suffix);
  pp_jsonw_kv_double(w, k, e->joules / n);
  if (e->has_cpu) {
    snprintf(k, sizeof k, "cpu_package_joules%s", suffix);
    pp_jsonw_kv_double(w, k, e->cpu_j / n);
  }
  if (e->has_platform) { /* schema_minor 16 */
    snprintf(k, sizeof k, "platform_joules%s", suffix);
    pp_jsonw_kv_double(w, k, e->platform_j / n);
  }
  if (e->has_gpu) {
    snprintf(k, sizeof k, "gpu_joules%s", suffix);
    pp_jsonw_kv_double(w, k, e->gpu_j / n);
  }
}

/* "sources" and "gpu_counter" of a measured energy. */
static void kv_energy_sources(pp_jsonw *w, const pp_energy *e) {
  pp_jsonw_kv_str(w, "sources", e->sources);
  if (e->gpu_counter)
    pp_jsonw_kv_str(w, "gpu_counter", e->gpu_counter);
}

/* A frames row's members beyond the table: its frame-time histogram and
 * the run's energy per frame. */
typedef struct frame_more {
  const pp_analysis *a;
  pp_energy e;
  int has_e;
} frame_more;

static void frame_extra(pp_jsonw *w, size_t r, void *ctx) {
  const frame_more *m = ctx;
  const pp_profile *p = &m->a->prof;
  if (r >= p->nframes)
    return;
  const pp_frame_stats *f = &p->frames[r];
  pp_summary_hist_json(w, "hist", &f->hist);
  pp_jsonw_key(w, "energy");
  pp_jsonw_obj_begin(w);
  if (m->has_e && f->frames) {
    kv_energy_sources(w, &m->e);
    kv_energy(w, &m->e, "_per_frame", (double)f->frames);
  } else {
    pp_jsonw_kv_str(w, "unavailable", m->has_e ? "no frames" : m->e.sources);
  }
  pp_jsonw_obj_end(w);
}

/* "frames": the results document's table (results/frames.h), each row
 * with its histogram and energy per frame. */
static void write_frames(pp_jsonw *w, const pp_analysis *a) {
  frame_more m;
  memset(&m, 0, sizeof m);
  m.a = a;
  m.has_e = pp_run_energy(a, &m.e);
  pp_jsonw_key(w, "frames"); /* [] without frame marks */
  pp_doc_json_rows(w, pp_doc_find(a->doc, "frames"), frame_extra, &m);
}

/* "counters": the rows of the results document's two counter tables
 * (results/counters.h), the program's first. */
static void write_counters(pp_jsonw *w, const pp_analysis *a) {
  pp_jsonw_key(w, "counters");
  pp_jsonw_arr_begin_lines(w);
  pp_doc_json_objects(w, pp_doc_find(a->doc, "counters"), NULL, NULL);
  pp_doc_json_objects(w, pp_doc_find(a->doc, "sampled_counters"), NULL, NULL);
  pp_jsonw_arr_end(w);
}

/* "overhead": the document's facts of the profiler's cost (an unavailable
 * table: {"unavailable": why}). */
static void write_overhead(pp_jsonw *w, const pp_analysis *a) {
  const pp_table *t = pp_doc_find(a->doc, "overhead");
  pp_jsonw_key(w, "overhead");
  pp_jsonw_obj_begin(w);
  if (t && t->why)
    pp_jsonw_kv_str(w, "unavailable", t->why);
  else
    pp_doc_json_facts(w, t);
  pp_jsonw_obj_end(w);
}

static void write_reader(pp_jsonw *w, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  const pp_read_diag *d = &t->diag;
  pp_jsonw_key(w, "reader");
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_uint(w, "file_bytes", d->file_bytes);
  pp_jsonw_kv_uint(w, "chunks_ok", d->chunks_ok);
  pp_jsonw_kv_uint(w, "chunks_bad", d->chunks_bad);
  pp_jsonw_kv_uint(w, "bytes_skipped", d->bytes_skipped);
  pp_jsonw_kv_uint(w, "events_bad", d->events_bad);
  /* schema_minor 9: events decoded and stored for the details */
  pp_jsonw_kv_uint(w, "events_read", d->events);
  pp_jsonw_kv_uint(w, "events_kept", d->events_kept);
  pp_jsonw_key(w, "details_complete_until_ns");
  int64_t window = pp_details_window_ns(a);
  if (window >= 0)
    pp_jsonw_int(w, window);
  else
    pp_jsonw_null(w);
  /* schema_minor 10: events the figures took out of time order */
  pp_jsonw_kv_uint(w, "events_late", a->events_late);
  pp_jsonw_kv_bool(w, "truncated", d->truncated);
  pp_jsonw_kv_bool(w, "clean_end", d->clean_end);
  /* schema_minor 9: a write failure the library recorded (disk full),
   * which explains a missing END chunk */
  const char *werr = pp_trace_meta(t, "write_error");
  const char *lost = pp_trace_meta(t, "events_lost");
  pp_jsonw_key(w, "write_error");
  if (werr)
    pp_jsonw_str(w, werr);
  else
    pp_jsonw_null(w);
  char *end = NULL;
  unsigned long long nl = lost ? strtoull(lost, &end, 10) : 0;
  pp_jsonw_key(w, "events_lost");
  if (lost && end != lost && !*end)
    pp_jsonw_uint(w, nl);
  else
    pp_jsonw_null(w);
  pp_jsonw_obj_end(w);
}

/* "requests": present only when the trace has request or batch events
 * (or, in stats mode, request sites: then {"available": false}). */
static void write_requests(pp_jsonw *w, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  const pp_request_stats *r = &a->prof.req;
  if (t->from_stats) {
    int sites = 0;
    for (size_t i = 0; i < t->nlocs; i++) {
      const pp_loc *l = &t->locs[i];
      sites |= l->name && (!l->function || !l->function[0]) &&
               (strcmp(l->name, "(request)") == 0 ||
                strcmp(l->name, "(batch)") == 0);
    }
    if (sites) {
      pp_jsonw_key(w, "requests");
      pp_jsonw_obj_begin(w);
      pp_jsonw_kv_bool(w, "available", 0);
      pp_jsonw_kv_str(w, "reason", "stats mode");
      pp_jsonw_obj_end(w);
    }
    return;
  }
  const pp_table *facts = pp_doc_find(a->doc, "request_facts");
  if (!facts) /* no request or batch events */
    return;
  pp_jsonw_key(w, "requests");
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_bool(w, "available", 1);
  pp_doc_json_facts(w, facts);
  {
    pp_energy e;
    pp_jsonw_key(w, "energy");
    pp_jsonw_obj_begin(w);
    if (pp_run_energy(a, &e)) {
      kv_energy_sources(w, &e);
      kv_energy(w, &e, "", 1.0);
      if (r->completed)
        kv_energy(w, &e, "_per_request", (double)r->completed);
      if (r->output_tokens)
        kv_energy(w, &e, "_per_output_token", (double)r->output_tokens);
    } else {
      pp_jsonw_kv_str(w, "unavailable", e.sources);
    }
    pp_jsonw_obj_end(w);
  }
  /* e2e, ttft, tpot, itl: the document's latency rows */
  pp_doc_json_keyed(w, pp_doc_find(a->doc, "request_latency"), "key", NULL,
                    NULL);
  pp_jsonw_key(w, "slo");
  const pp_table *slo = pp_doc_find(a->doc, "request_slo");
  if (slo) {
    pp_jsonw_obj_begin(w);
    pp_doc_json_facts(w, slo);
    pp_jsonw_obj_end(w);
  } else {
    pp_jsonw_null(w);
  }
  pp_jsonw_key(w, "validity");
  pp_jsonw_obj_begin(w);
  pp_doc_json_facts(w, pp_doc_find(a->doc, "request_validity"));
  pp_jsonw_obj_end(w);
  pp_jsonw_key(w, "batches");
  pp_jsonw_obj_begin(w);
  pp_doc_json_facts(w, pp_doc_find(a->doc, "request_batches"));
  pp_jsonw_key(w, "by_size");
  pp_doc_json_rows(w, pp_doc_find(a->doc, "request_batch_sizes"), NULL,
                   NULL);
  pp_jsonw_obj_end(w);
  pp_jsonw_obj_end(w);
}

/* schema_minor 13: the chart series (analyze/series.h). */
static void arr_double(pp_jsonw *w, const char *k, const double *v, size_t n) {
  pp_jsonw_key(w, k);
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < n; i++)
    pp_jsonw_double(w, v[i]);
  pp_jsonw_arr_end(w);
}

static void arr_uint(pp_jsonw *w, const char *k, const uint64_t *v, size_t n) {
  pp_jsonw_key(w, k);
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < n; i++)
    pp_jsonw_uint(w, v[i]);
  pp_jsonw_arr_end(w);
}

/* A mean drawn in a chart: 4 significant digits are more than a chart
 * shows (and full precision tripled the size of a demo's JSON). */
static void arr_chart(pp_jsonw *w, const char *k, const double *v, size_t n) {
  pp_jsonw_key(w, k);
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < n; i++) {
    char tmp[32];
    int len = isfinite(v[i]) ? snprintf(tmp, sizeof tmp, "%.4g", v[i]) : 0;
    pp_jsonw_elem(w);
    if (len > 0 && len < (int)sizeof tmp)
      pp_jsonw_put(w, tmp, (size_t)len);
    else
      pp_jsonw_put(w, "null", 4);
  }
  pp_jsonw_arr_end(w);
}

/* Durations are whole ns: written as integers; one past int64's range
 * (only a crafted trace gives one) is null. */
static void arr_ns(pp_jsonw *w, const char *k, const double *v, size_t n) {
  pp_jsonw_key(w, k);
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < n; i++) {
    if (v[i] >= -0x1p63 && v[i] < 0x1p63) {
      pp_jsonw_int(w, (int64_t)v[i]);
    } else {
      pp_jsonw_null(w);
    }
  }
  pp_jsonw_arr_end(w);
}

enum { S_FRAMES, S_COUNTERS, S_QUEUES, S_ZONES };

/* Is the counter at loc one the views may draw (pp_series_is_measurement)? */
static int counter_drawn(const pp_analysis *a, uint32_t loc) {
  for (size_t i = 0; i < a->prof.ncounters; i++)
    if (a->prof.counters[i].loc == loc)
      return pp_series_is_measurement(a->trace, &a->prof.counters[i]);
  return 1;
}

static void series_lines(pp_jsonw *w, const pp_analysis *a, int kind,
                         const char *k, const pp_series_line *v, size_t n) {
  const pp_trace *t = a->trace;
  uint32_t mkind = pp_trace_metric_kind(t);
  pp_jsonw_key(w, k);
  if (!a->prof.series.available) {
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "unavailable",
                    "stats mode: the file holds no events to follow over "
                    "time");
    pp_jsonw_obj_end(w);
    return;
  }
  pp_jsonw_arr_begin_lines(w);
  for (size_t i = 0; i < n; i++) {
    const pp_series_line *l = &v[i];
    if (kind == S_COUNTERS && !counter_drawn(a, l->loc))
      continue;
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "name", pp_trace_loc_name(t, l->loc));
    if (kind == S_COUNTERS)
      pp_jsonw_kv_bool(w, "library_metric",
                       pp_loc_metric(t, l->loc, mkind, NULL, NULL, NULL) !=
                           PP_METRIC_NONE);
    pp_jsonw_key(w, "t_ns");
    pp_jsonw_arr_begin(w);
    for (size_t j = 0; j < l->n; j++)
      pp_jsonw_int(w, l->t_ns[j]);
    pp_jsonw_arr_end(w);
    switch (kind) {
    case S_FRAMES:
      arr_ns(w, "frame_ns", l->mean, l->n);
      arr_ns(w, "frame_max_ns", l->max, l->n);
      break;
    case S_COUNTERS:
      arr_double(w, "value", l->mean, l->n);
      arr_double(w, "min", l->min, l->n);
      arr_double(w, "max", l->max, l->n);
      break;
    case S_QUEUES:
      arr_chart(w, "depth", l->mean, l->n);
      arr_ns(w, "depth_max", l->max, l->n);
      break;
    default:
      arr_uint(w, "count", l->count, l->n);
      arr_uint(w, "p50_ns", l->p50, l->n);
      arr_ns(w, "max_ns", l->max, l->n);
    }
    pp_jsonw_kv_bool(w, "downsampled", l->downsampled);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
}

static void left_out(pp_jsonw *w, const char *k, uint64_t n, const char *why) {
  if (!n)
    return;
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_str(w, "series", k);
  pp_jsonw_kv_uint(w, "count", n);
  pp_jsonw_kv_str(w, "reason", why);
  pp_jsonw_obj_end(w);
}

static void write_series(pp_jsonw *w, const pp_analysis *a) {
  const pp_series *s = &a->prof.series;
  pp_jsonw_key(w, "series");
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_uint(w, "points_max", PP_SERIES_POINTS_MAX);
  pp_jsonw_kv_int(w, "bucket_ns", s->bucket_ns);
  series_lines(w, a, S_FRAMES, "frames", s->frames, s->nframes);
  series_lines(w, a, S_COUNTERS, "counters", s->counters, s->ncounters);
  series_lines(w, a, S_QUEUES, "queues", s->queues, s->nqueues);
  series_lines(w, a, S_ZONES, "zones", s->zones, s->nzones);
  pp_jsonw_key(w, "left_out");
  pp_jsonw_arr_begin(w);
  left_out(w, "frames", s->frames_left, s->frames_why);
  left_out(w, "counters", s->counters_left, s->counters_why);
  left_out(w, "queues", s->queues_left, s->queues_why);
  left_out(w, "zones", s->zones_left, s->zones_why);
  pp_jsonw_arr_end(w);
  pp_jsonw_kv_uint(w, "values_lost", s->values_lost);
  pp_jsonw_obj_end(w);
}

/* "alerts": anomalies and alerts raised inside the process, time order. */
static void write_alerts(pp_jsonw *w, const pp_trace *t) {
  pp_jsonw_key(w, "alerts");
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < t->nnotes; i++) {
    const pp_note *n = &t->notes[i];
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "type", n->type == PPT_EV_ANOMALY ? "anomaly"
                                                         : "alert");
    pp_jsonw_kv_int(w, "t_ns", n->ts);
    pp_jsonw_kv_str(w, "what", n->what);
    pp_jsonw_kv_str(w, "which", n->which);
    pp_jsonw_kv_str(w, "message", n->message);
    pp_jsonw_kv_double(w, "value", n->value);
    pp_jsonw_kv_double(w, "baseline", n->baseline);
    pp_jsonw_kv_double(w, "spread", n->spread);
    pp_jsonw_kv_double(w, "threshold", n->threshold);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
}

int pp_export_summary_json(FILE *out, const pp_analysis *a) {
  return pp_summary_json_write(out, a, NULL, NULL);
}

int pp_summary_json_write(FILE *out, const pp_analysis *a,
                          pp_summary_extra_fn extra, void *arg) {
  const pp_trace *t = a->trace;
  if (!out || !t || !a->analyzed)
    return -1;
  const pp_profile *p = &a->prof;
  pp_jsonw w;
  if (pp_jsonw_init(&w, out) != 0) {
    pp_jsonw_finish(&w);
    return -1;
  }
  pp_jsonw_obj_begin(&w);
  pp_jsonw_kv_str(&w, "schema", SUMMARY_SCHEMA);
  pp_jsonw_kv_int(&w, "schema_version", SUMMARY_SCHEMA_VERSION);
  pp_jsonw_kv_int(&w, "schema_minor", SUMMARY_SCHEMA_MINOR);
  pp_jsonw_key(&w, "generator");
  pp_jsonw_obj_begin(&w);
  pp_jsonw_kv_str(&w, "name", "pipeprof");
  pp_jsonw_kv_str(&w, "version", PP_VERSION_STRING);
  pp_jsonw_obj_end(&w);
  /* schema_minor 19: the results document's header, as every view lays
   * it out (the members below keep the older shapes) */
  pp_jsonw_key(&w, "header");
  pp_jsonw_obj_begin(&w);
  pp_doc_json_facts(&w, pp_doc_find(a->doc, "header"));
  pp_jsonw_obj_end(&w);

  pp_run_tree rt;
  int have_rt = pp_run_tree_get(t, a, &rt) == 0;
  write_process(&w, t, have_rt ? &rt : NULL);
  /* the results document's processes (since schema_minor 20 with how
   * each ended and its threads' figures) */
  pp_jsonw_key(&w, "processes");
  pp_jsonw_arr_begin(&w);
  pp_doc_json_objects(&w, pp_doc_find(a->doc, "process_table"), NULL, NULL);
  pp_jsonw_arr_end(&w);
  /* schema_minor 21: each zone several processes recorded, per process
   * (or {"available": false, "reason": ...}) */
  pp_jsonw_key(&w, "zones_by_process");
  pp_doc_json_rows(&w, pp_doc_find(a->doc, "zones_by_process"), NULL, NULL);
  /* schema_minor 22: CPU stack samples by zone and function, when the
   * trace holds samples or says why it has none */
  const pp_table *stacks = pp_doc_find(a->doc, "stacks");
  if (stacks) {
    pp_jsonw_key(&w, "stacks");
    pp_doc_json_rows(&w, stacks, NULL, NULL);
  }
  pp_jsonw_kv_str(&w, "mode", pp_trace_meta(t, "mode"));
  /* schema_minor 11: where the trace came from; an imported profile's
   * clock is the one its tool wrote */
  const char *source = pp_trace_meta(t, "import.source");
  pp_jsonw_kv_str(&w, "source", source ? source : "pipeprof");
  /* an ONNX Runtime profile: how often execution changed providers, and
   * the Memcpy nodes between them */
  if (p->provider_transitions >= 0) {
    pp_jsonw_key(&w, "providers");
    pp_jsonw_obj_begin(&w);
    pp_jsonw_kv_int(&w, "transitions", p->provider_transitions);
    pp_jsonw_kv_int(&w, "copies",
                    p->provider_copies > 0 ? p->provider_copies : 0);
    pp_jsonw_kv_int(&w, "copy_ns",
                    p->provider_copy_ns > 0 ? p->provider_copy_ns : 0);
    pp_jsonw_obj_end(&w);
  }
  /* schema_minor 12: profiles merged in by wall clock (--with) */
  pp_jsonw_key(&w, "merged_profiles");
  pp_jsonw_arr_begin(&w);
  for (unsigned k = 1;; k++) {
    static const char *const fields[] = {"file", "source", "aligned_by"};
    char key[48];
    snprintf(key, sizeof key, "with.%u.file", k);
    if (!pp_trace_meta(t, key))
      break;
    pp_jsonw_obj_begin(&w);
    for (size_t f = 0; f < 3; f++) {
      snprintf(key, sizeof key, "with.%u.%s", k, fields[f]);
      pp_jsonw_kv_str(&w, fields[f], pp_trace_meta(t, key));
    }
    snprintf(key, sizeof key, "with.%u.shift_ns", k);
    const char *shift = pp_trace_meta(t, key);
    pp_jsonw_kv_int(&w, "shift_ns", shift ? strtoll(shift, NULL, 10) : 0);
    pp_jsonw_obj_end(&w);
  }
  pp_jsonw_arr_end(&w);
  const char *iclock = pp_trace_meta(t, "import.clock");
  pp_jsonw_kv_str(&w, "clock", iclock ? iclock : "monotonic");
  pp_jsonw_kv_int(&w, "t0_ns", p->t0);
  pp_jsonw_kv_int(&w, "t1_ns", p->t1);
  pp_jsonw_kv_int(&w, "wall_ns", p->wall_ns);
  pp_jsonw_kv_uint(&w, "events", p->events);

  pp_jsonw_key(&w, "dropped");
  pp_jsonw_obj_begin(&w);
  pp_jsonw_kv_uint(&w, "total", p->dropped);
  pp_jsonw_key(&w, "by_thread");
  pp_jsonw_arr_begin(&w);
  for (size_t i = 0; i < t->nthreads; i++) {
    pp_jsonw_obj_begin(&w);
    pp_jsonw_kv_uint(&w, "tid", t->threads[i].tid);
    pp_jsonw_kv_uint(&w, "dropped", t->threads[i].dropped);
    pp_jsonw_obj_end(&w);
  }
  pp_jsonw_arr_end(&w);
  pp_jsonw_obj_end(&w);
  pp_jsonw_kv_uint(&w, "unclosed_zones", p->unclosed);
  pp_jsonw_kv_uint(&w, "unmatched_zone_ends", p->unmatched_ends);
  pp_jsonw_key(&w, "pairing"); /* schema_minor 8 */
  pp_jsonw_obj_begin(&w);
  pp_jsonw_kv_uint(&w, "lost_ends", p->unclosed);
  pp_jsonw_kv_uint(&w, "stray_ends", p->unmatched_ends);
  pp_jsonw_kv_uint(&w, "too_deep", p->pairing.too_deep);
  pp_jsonw_kv_uint(&w, "clock_backwards", p->pairing.backwards);
  pp_jsonw_kv_uint(&w, "ranges_unended", p->ranges_unclosed);
  pp_jsonw_kv_uint(&w, "ranges_unbegun", p->ranges_unbegun);
  pp_jsonw_kv_uint(&w, "ranges_lost", p->ranges_lost);
  pp_jsonw_obj_end(&w);

  if (pp_doc_find(a->doc, "metadata")) { /* schema_minor 16 */
    pp_jsonw_key(&w, "metadata");
    pp_doc_json_rows(&w, pp_doc_find(a->doc, "metadata"), NULL, NULL);
  }
  write_zones(&w, a); /* and top_self */
  /* schema_minor 11: where each top-level zone's time goes; 12: an
   * imported profile's operators by input shape */
  write_nested(&w, a, "breakdown", "stages", "breakdown_stages",
               "breakdown_nested", "nested");
  write_nested(&w, a, "shapes", "operators", "shapes_operators",
               "shapes_by_shape", "by_shape");
  pp_jsonw_key(&w, "threads");
  pp_doc_json_rows(&w, pp_doc_find(a->doc, "threads"), NULL, NULL);
  write_frames(&w, a);
  write_counters(&w, a);
  write_requests(&w, a);
  write_zone_slos(&w, a);
  int pipe_rc = pp_summary_pipeline_json(&w, a);
  write_series(&w, a);
  write_alerts(&w, t);
  write_overhead(&w, a);
  write_reader(&w, a);
  int sys_rc = pp_summary_system_json(&w, a);
  if (pp_summary_gpu_zones_json(&w, a) != 0 || pp_summary_cuda_json(&w, a) != 0)
    sys_rc = -1;
  pp_doc_json_layouts(&w, a->doc);
  /* Members a caller adds (the HTML report's "timeline") come last. */
  if (extra && extra(&w, a, arg) != 0)
    sys_rc = -1;
  pp_jsonw_obj_end(&w);
  pp_jsonw_putc(&w, '\n');
  int rc = pp_jsonw_finish(&w);
  if (have_rt)
    pp_run_tree_free(&rt);
  return rc || sys_rc || pipe_rc ? -1 : 0;
}
