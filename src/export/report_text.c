/* SPDX-License-Identifier: MIT */
/*
 * The human-readable report printed by `pipeprof report`: a header with
 * the process, wall time and data-loss indicators, the zone table sorted by
 * total time with latency percentiles, the top bottlenecks by self time,
 * per-thread busy time, frame pacing and energy per frame, counters,
 * requests (E2E, TTFT, TPOT, ITL, goodput, batches, energy per request and
 * per output token) and an estimate of the profiler's own overhead. Reads
 * an analysed pp_trace; never modifies it.
 *
 * A `pipeprof run` trace (META run.command) names the profiled command, its
 * pid and process tree in the header and shows pipeprof apart, as the
 * profiler: its threads stay out of the thread table and its CPU time is
 * the overhead, set against the profiled tree's CPU time.
 *
 * Names come from the traced program and may hold any bytes: control
 * characters and malformed UTF-8 are shown as '?', and long names are cut
 * to the column width with "...".
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "analyze/system.h"
#include "export/doc_text.h"
#include "export/export.h"
#include "export/report_gpu.h"
#include "export/report_gpuzones.h"
#include "export/text_cells.h"
#include "analyze/run_tree.h"
#include "internal.h"

#define NAME_MAX_COLS 40
#define NAME_MIN_COLS 12
#define DUR_W 9   /* a duration column, separator included */
#define PCT_W 8   /* a percentage column, separator included */
#define CELL_MAX 64

/* A name in at most width cells, padded to width when pad is set. */
static void put_name(FILE *out, const char *s, int width, int pad) {
  pp_text_put(out, s, width, pad, 0);
}

static int name_cols(const char *s) { return pp_text_cols(s); }

static int min_int(int a, int b) { return a < b ? a : b; }
static int max_int(int a, int b) { return a > b ? a : b; }


/* ---- cells --------------------------------------------------------------- */

/* ---- sections ------------------------------------------------------------ */

/* The ranking of zones by self time: the first top_n rows of the
 * document's top_self, "1. name  12.3 ms self (45.6% of zone time)". */
static void bottlenecks(FILE *out, const pp_analysis *a, int top_n, int cap) {
  const pp_table *t = pp_doc_find(a->doc, "top_self");
  long cs = pp_table_col(t, "self_ns"), cp = pp_table_col(t, "share_pct");
  if (!t || top_n <= 0 || cs < 0 || cp < 0)
    return;
  size_t n = (size_t)top_n < t->nrows ? (size_t)top_n : t->nrows;
  int longest = 0;
  for (size_t k = 0; k < n; k++)
    longest = max_int(longest, name_cols(pp_table_cell(t, k, 0)->text));
  int nw = min_int(longest, cap);
  fprintf(out, "\n%s\n", t->title);
  for (size_t k = 0; k < n; k++) {
    char self[CELL_MAX], share[CELL_MAX];
    fprintf(out, "%2zu. ", k + 1);
    put_name(out, pp_table_cell(t, k, 0)->text, nw, 1);
    fprintf(out, "  %s self (%s of zone time)\n",
            pp_cell_format(&t->cols[cs], pp_table_cell(t, k, (size_t)cs),
                           self, sizeof self),
            pp_cell_format(&t->cols[cp], pp_table_cell(t, k, (size_t)cp),
                           share, sizeof share));
  }
}

/* Where each top-level zone's time goes, and an imported profile's
 * operators by input shape: the results document's (doc_breakdown.c). */
#define BREAKDOWN_STAGES_SHOWN 5
#define BREAKDOWN_NESTED_SHOWN 30
#define SHAPE_OPS_SHOWN 8
#define SHAPE_ROWS_SHOWN 40

static void breakdown(FILE *out, const pp_analysis *a, int cap) {
  pp_doc_text_table_n(out, pp_doc_find(a->doc, "breakdown_stages"), cap,
                      BREAKDOWN_STAGES_SHOWN);
  pp_doc_text_table_n(out, pp_doc_find(a->doc, "breakdown_nested"), cap,
                      BREAKDOWN_NESTED_SHOWN);
  pp_doc_text_table_n(out, pp_doc_find(a->doc, "shapes_operators"), cap,
                      SHAPE_OPS_SHOWN);
  pp_doc_text_table_n(out, pp_doc_find(a->doc, "shapes_by_shape"), cap,
                      SHAPE_ROWS_SHOWN);
}

/* "0.52 J (CPU package 0.31 J + GPU 0.21 J)": the run's energy e over n,
 * with its parts where both sources were measured. */
static void put_energy(FILE *out, const pp_energy *e, double n) {
  int all = e->gpu_counter &&
            strcmp(e->gpu_counter,
                   pp_metric_def_of(PP_METRIC_GPU_ENERGY_ALL)->name) == 0;
  const char *gpu = all ? "all GPUs" : "GPU";
  fprintf(out, "%.4g J (", e->joules / n);
  const char *cpu = e->has_cpu ? "CPU package" : "platform (psys)";
  double cpu_j = e->has_cpu ? e->cpu_j : e->platform_j;
  int has_cpu = e->has_cpu || e->has_platform;
  if (has_cpu && e->has_gpu)
    fprintf(out, "%s %.4g J + %s %.4g J", cpu, cpu_j / n, gpu, e->gpu_j / n);
  else
    fputs(has_cpu ? cpu : gpu, out);
  fputc(')', out);
}

/* Energy per frame of each frame stream: the whole run's energy over the
 * stream's marks. */
static void frame_energy(FILE *out, const pp_analysis *a, int cap) {
  const pp_trace *t = a->trace;
  pp_energy e;
  if (!pp_run_energy(a, &e)) {
    fprintf(out, "  energy per frame: unavailable: %s\n", e.sources);
    return;
  }
  int any = 0;
  for (size_t i = 0; i < a->prof.nframes; i++) {
    const pp_frame_stats *f = &a->prof.frames[i];
    if (!f->frames)
      continue;
    fputs("  energy per frame (", out);
    put_name(out, pp_trace_loc_name(t, f->loc), cap, 0);
    fputs("): ", out);
    put_energy(out, &e, (double)f->frames);
    fprintf(out, ", %" PRIu64 " frames\n", f->frames);
    any = 1;
  }
  if (any)
    fputs("  (energy of the whole run, warm-up and idle included, / the "
          "stream's marks)\n",
          out);
}

static void frame_table(FILE *out, const pp_analysis *a, int cap) {
  pp_doc_text_table(out, pp_doc_find(a->doc, "frames"), cap);
  frame_energy(out, a, cap);
}

/* Names of the library's metrics (metrics/registry.h). The counter table
 * goes by the series' kind instead (pp_loc_metric), so that a user counter
 * named like a library metric is listed as the user's. */
int pp_counter_is_sampled(const char *name) {
  return pp_metric_lookup(name, NULL, NULL, NULL) != PP_METRIC_NONE;
}


/* ---- zone SLOs ---------------------------------------------------------- */

/* ---- requests --------------------------------------------------------- */

static int has_request_sites(const pp_trace *t) {
  for (size_t i = 0; i < t->nlocs; i++) {
    const pp_loc *l = &t->locs[i];
    if (l->name && (!l->function || !l->function[0]) &&
        (strcmp(l->name, "(request)") == 0 || strcmp(l->name, "(batch)") == 0))
      return 1;
  }
  return 0;
}

static void request_table(FILE *out, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  const pp_request_stats *r = &a->prof.req;
  if (t->from_stats) {
    if (has_request_sites(t))
      fputs("\nrequests: unavailable in stats mode (record in trace "
            "mode)\n",
            out);
    return;
  }
  const pp_table *facts = pp_doc_find(a->doc, "request_facts");
  if (!facts) /* no request or batch events */
    return;
  pp_doc_text_table(out, facts, 0);
  if (r->requests) {
    pp_energy e;
    if (!pp_run_energy(a, &e)) {
      fprintf(out, "  energy per request: unavailable: %s\n", e.sources);
    } else if (!r->completed) {
      fputs("  energy per request: unavailable: no completed request\n", out);
    } else {
      fputs("  energy per completed request: ", out);
      put_energy(out, &e, (double)r->completed);
      fprintf(out, ", %" PRIu64 " requests\n", r->completed);
      if (r->output_tokens) {
        fputs("  energy per output token: ", out);
        put_energy(out, &e, (double)r->output_tokens);
        fprintf(out, ", %" PRIu64 " tokens\n", r->output_tokens);
      }
      fputs("  (energy of the whole run, warm-up included, / completed "
            "requests or tokens)\n",
            out);
    }
    pp_doc_text_table(out, pp_doc_find(a->doc, "request_latency"), 0);
    pp_doc_text_table(out, pp_doc_find(a->doc, "request_slo"), 0);
    pp_doc_text_table(out, pp_doc_find(a->doc, "request_validity"), 0);
  }
  /* the batches' section with batches: when they have a sizes table */
  const pp_table *sizes = pp_doc_find(a->doc, "request_batch_sizes");
  if (sizes) {
    pp_doc_text_table(out, pp_doc_find(a->doc, "request_batches"), 0);
    pp_doc_text_table(out, sizes, 0);
  }
}

/* ---- anomalies and alerts -------------------------------------------- */

#define NOTES_MAX 50 /* lines printed; the rest are counted */

static void notes_table(FILE *out, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  const char *live = pp_trace_meta(t, "live");
  if (!t->nnotes) {
    if (live && strcmp(live, "off") != 0) {
      fputs("\nanomalies and alerts: none (live statistics: ", out);
      put_name(out, live, 120, 0);
      fputs(")\n", out);
    }
    return;
  }
  fputs("\nanomalies and alerts (raised inside the process, once per "
        "episode; time since start)\n", out);
  int64_t t0 = a->prof.t0;
  for (size_t i = 0; i < t->nnotes && i < NOTES_MAX; i++) {
    const pp_note *n = &t->notes[i];
    /* in doubles: a damaged trace's times may be any int64 */
    fprintf(out, "  %+10.3f s  ", ((double)n->ts - (double)t0) * 1e-9);
    put_name(out, n->message, 160, 0);
    fputc('\n', out);
  }
  if (t->nnotes > NOTES_MAX)
    fprintf(out, "  ... and %zu more\n", t->nnotes - NOTES_MAX);
}

int pp_report_text(FILE *out, const pp_analysis *a,
                   const pp_report_opts *opts) {
  const pp_trace *t = a->trace;
  if (!out || !t || !a->analyzed)
    return -1;
  pp_report_opts o = {0, 0};
  if (opts)
    o = *opts;
  if (o.top_n == 0)
    o.top_n = 3;
  int cap = NAME_MAX_COLS;
  if (o.width_hint > 0) {
    /* The zone table's other columns: count, 8 durations, %wall. */
    int rest = 10 + 8 * DUR_W + PCT_W;
    cap = max_int(NAME_MIN_COLS, min_int(NAME_MAX_COLS, o.width_hint - rest));
  }
  pp_doc_text_table(out, pp_doc_find(a->doc, "header"), 0);
  pp_doc_text_table(out, pp_doc_find(a->doc, "metadata"), cap);
  pp_doc_text_table(out, pp_doc_find(a->doc, "zones"), cap);
  bottlenecks(out, a, o.top_n, cap);
  breakdown(out, a, cap);
  pp_doc_text_table(out, pp_doc_find(a->doc, "stacks"), cap);
  pp_doc_text_table(out, pp_doc_find(a->doc, "threads"), cap);
  const pp_table *procs = pp_doc_find(a->doc, "process_table");
  if (procs && procs->nrows > 1) { /* a run of several processes */
    pp_doc_text_table(out, procs, cap);
    const pp_table *pz = pp_doc_find(a->doc, "zones_by_process");
    if (pz && (pz->nrows || pz->why))
      pp_doc_text_table(out, pz, cap);
  }
  frame_table(out, a, cap);
  pp_doc_text_table(out, pp_doc_find(a->doc, "counters"), cap);
  request_table(out, a);
  pp_doc_text_table(out, pp_doc_find(a->doc, "zone_slos"), 0);
  notes_table(out, a);
  if (pp_report_pipeline(out, a) != 0 || pp_report_system(out, a) != 0 ||
      pp_report_gpu(out, a) != 0 || pp_report_gpu_zones(out, a) != 0 ||
      pp_report_cuda(out, a) != 0 || pp_report_advice(out, a) != 0)
    return -1;
  pp_doc_text_table(out, pp_doc_find(a->doc, "overhead"), 0);
  return ferror(out) ? -1 : 0;
}
