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

static void put_dur(FILE *out, double ns) {
  char b[CELL_MAX];
  fprintf(out, "%*s", DUR_W, pp_format_ns(b, sizeof b, ns));
}

static void put_pct(FILE *out, double part, double whole) {
  char b[CELL_MAX];
  if (whole > 0)
    snprintf(b, sizeof b, "%.1f%%", part / whole * 100.0);
  else
    snprintf(b, sizeof b, "-");
  fprintf(out, "%*s", PCT_W, b);
}

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

/* Where each top-level zone's time goes: the largest stages, each with
 * its nested zones by self time, and what is left in the stage itself. */
#define BREAKDOWN_STAGES_SHOWN 5
#define BREAKDOWN_OPS_SHOWN 8

static void breakdown_line(FILE *out, const char *name, int nw, int64_t self,
                           int64_t total, uint64_t count) {
  char b[CELL_MAX];
  fputs("    ", out);
  put_name(out, name, nw, 1);
  fprintf(out, "  %9s self  %5.1f%%", pp_format_ns(b, sizeof b, (double)self),
          total > 0 ? (double)self / (double)total * 100.0 : 0.0);
  if (count)
    fprintf(out, "  (%" PRIu64 " call%s)", count, count == 1 ? "" : "s");
  fputc('\n', out);
}

static void breakdown(FILE *out, const pp_analysis *a, int cap) {
  const pp_trace *t = a->trace;
  const pp_breakdown *bd = &a->prof.breakdown;
  if (!bd->nstages)
    return;
  fputs("\ninside the top-level zones (nested zones by self time; share of "
        "the top-level zone's time)\n",
        out);
  size_t ns = bd->nstages < BREAKDOWN_STAGES_SHOWN ? bd->nstages
                                                   : BREAKDOWN_STAGES_SHOWN;
  for (size_t i = 0; i < ns; i++) {
    const pp_breakdown_stage *s = &bd->stages[i];
    char b[CELL_MAX];
    int nw = name_cols("(in the zone itself)");
    size_t no = s->nops < BREAKDOWN_OPS_SHOWN ? s->nops : BREAKDOWN_OPS_SHOWN;
    for (size_t k = 0; k < no; k++)
      nw = max_int(nw, name_cols(pp_trace_loc_name(t, s->ops[k].loc)));
    nw = min_int(nw, cap);
    put_name(out, pp_trace_loc_name(t, s->loc), cap, 0);
    fprintf(out, ": %" PRIu64 " x, %s\n", s->count,
            pp_format_ns(b, sizeof b, (double)s->total_ns));
    for (size_t k = 0; k < no; k++)
      breakdown_line(out, pp_trace_loc_name(t, s->ops[k].loc), nw,
                     s->ops[k].self_ns, s->total_ns, s->ops[k].count);
    breakdown_line(out, "(in the zone itself)", nw, s->self_ns, s->total_ns, 0);
    uint64_t more = s->nops - no + s->ops_more;
    if (more)
      fprintf(out,
              "    (%" PRIu64 " more nested zone%s: summary JSON "
              "\"breakdown\")\n",
              more, more == 1 ? "" : "s");
  }
  uint64_t more = bd->nstages - ns + bd->stages_more;
  if (more)
    fprintf(out, "(%" PRIu64 " more top-level zone%s with nested zones)\n",
            more, more == 1 ? "" : "s");
}

/* Operators by input shape (an imported profile's): the largest
 * operators, each with its shapes by total time and what is left in its
 * other shapes; what is not shown is said. */
#define SHAPE_OPS_SHOWN 8
#define SHAPE_ROWS_SHOWN 5
#define SHAPE_COLS_MAX 56

static void shape_line(FILE *out, const char *shape, int sw, uint64_t count,
                       int64_t total, int64_t self, int64_t op_total) {
  fputs("    ", out);
  put_name(out, shape, sw, 1);
  fprintf(out, "%8" PRIu64, count);
  put_dur(out, (double)total);
  put_dur(out, (double)self);
  put_pct(out, (double)total, (double)op_total);
  fputc('\n', out);
}

static void shapes_table(FILE *out, const pp_analysis *a, int cap) {
  const pp_trace *t = a->trace;
  const pp_shapes *sh = &a->prof.shapes;
  if (!sh->nops)
    return;
  fputs("\noperators by input shape (largest first; each shape's calls, "
        "total and self time, and share of the operator's total)\n",
        out);
  size_t no = sh->nops < SHAPE_OPS_SHOWN ? sh->nops : SHAPE_OPS_SHOWN;
  for (size_t i = 0; i < no; i++) {
    const pp_op_shapes *op = &sh->ops[i];
    size_t nr = op->nrows < SHAPE_ROWS_SHOWN ? op->nrows : SHAPE_ROWS_SHOWN;
    uint64_t other = op->other_shapes + (op->nrows - nr);
    int sw = name_cols("input shapes");
    for (size_t k = 0; k < nr; k++)
      sw = max_int(sw, name_cols(op->rows[k].shape));
    sw = min_int(max_int(sw, name_cols("(99 other shapes)")), SHAPE_COLS_MAX);
    char b[CELL_MAX];
    put_name(out, pp_trace_loc_name(t, op->loc), cap, 0);
    fprintf(out, ": %" PRIu64 " call%s, %s, %" PRIu64 " shape%s\n", op->count,
            op->count == 1 ? "" : "s",
            pp_format_ns(b, sizeof b, (double)op->total_ns),
            op->nrows + op->other_shapes,
            op->nrows + op->other_shapes == 1 ? "" : "s");
    fputs("    ", out);
    put_name(out, "input shapes", sw, 1);
    fprintf(out, "%8s%*s%*s%*s\n", "calls", DUR_W, "total", DUR_W, "self",
            PCT_W, "share");
    for (size_t k = 0; k < nr; k++)
      shape_line(out, op->rows[k].shape, sw, op->rows[k].count,
                 op->rows[k].total_ns, op->rows[k].self_ns, op->total_ns);
    if (other || op->untold) {
      uint64_t n = op->other_count;
      int64_t tot = op->other_total_ns, self = op->other_self_ns;
      for (size_t k = nr; k < op->nrows; k++) {
        n += op->rows[k].count;
        tot = pp__add_sat(tot, op->rows[k].total_ns);
        self = pp__add_sat(self, op->rows[k].self_ns);
      }
      char label[64];
      if (op->untold)
        snprintf(label, sizeof label,
                 "(%" PRIu64 " other shapes, more "
                 "untold)",
                 other);
      else
        snprintf(label, sizeof label, "(%" PRIu64 " other shape%s)", other,
                 other == 1 ? "" : "s");
      shape_line(out, label, sw, n, tot, self, op->total_ns);
    }
  }
  uint64_t more = sh->nops - no + sh->ops_more;
  if (more)
    fprintf(out,
            "(%" PRIu64 " more operator%s with shapes: summary JSON "
            "\"shapes\")\n",
            more, more == 1 ? "" : "s");
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
  shapes_table(out, a, cap);
  pp_doc_text_table(out, pp_doc_find(a->doc, "threads"), cap);
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
