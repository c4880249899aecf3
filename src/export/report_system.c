/* SPDX-License-Identifier: MIT */
/*
 * The system part of the report and of the summary JSON: the run, the
 * machine, the process tree, the perf_event counters, the energy and what
 * was not measured. This file only lays out the results document's
 * tables of them (analyze/doc_*.c; the figures: analyze/system.c).
 *
 * Rules: a metric that was not measured is never printed as 0. It prints
 * "unavailable: <reason>" when META gives a reason for its group and is
 * left out otherwise. Non-finite values print as "-" (text) or null (JSON),
 * never "nan" or "inf". Names from the machine (sensors, energy domains)
 * and reasons are shown with control characters replaced by '?'.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "export/doc_json.h"
#include "export/doc_text.h"
#include "export/export.h"
#include "export/jsonw.h"
#include "internal.h"

#define MAX_CORES_LISTED 16 /* per-core line only up to this many cores */
#define MAX_SENSORS 32      /* temperature lines printed */
#define THREADS_LISTED 15   /* rows of the tree's thread table */
#define PROCS_LISTED 20     /* rows of the tree's process table */
#define PROC_NAME_W 24      /* process and thread names cut at */

/* ---- system --------------------------------------------------------------- */

/* The machine: the results document's measures, per-core figures,
 * facts (throttling, what was not measured), temperatures and NUMA nodes
 * (analyze/document.c, doc_machine.c). */
static void section_system(FILE *out, const pp_analysis *a) {
  pp_doc_text_table(out, pp_doc_find(a->doc, "system_host"), 0);
  pp_doc_text_table_n(out, pp_doc_find(a->doc, "cpu_cores"), 0,
                      MAX_CORES_LISTED);
  pp_doc_text_table(out, pp_doc_find(a->doc, "machine"), 0);
  pp_doc_text_table_n(out, pp_doc_find(a->doc, "temperatures"), 0,
                      MAX_SENSORS);
  pp_doc_text_table(out, pp_doc_find(a->doc, "numa"), 0);
}

/* ---- process tree ------------------------------------------------------- */

/* The tree's facts and sampled measures, and the sampler's process and
 * thread tables: the results document's (analyze/doc_tree.c). */
static void section_tree(FILE *out, const pp_analysis *a) {
  pp_doc_text_table(out, pp_doc_find(a->doc, "process_tree"), 0);
  pp_doc_text_table(out, pp_doc_find(a->doc, "process_tree_measures"), 0);
  pp_doc_text_table_n(out, pp_doc_find(a->doc, "tree_processes"),
                      PROC_NAME_W, PROCS_LISTED);
  pp_doc_text_table_n(out, pp_doc_find(a->doc, "tree_threads"), PROC_NAME_W,
                      THREADS_LISTED);
}

/* ---- perf_event and energy ------------------------------------------------ */

/* The results document's (analyze/doc_perf.c, doc_energy.c). */
static void section_perf_energy(FILE *out, const pp_analysis *a) {
  pp_doc_text_table(out, pp_doc_find(a->doc, "perf"), 0);
  pp_doc_text_table(out, pp_doc_find(a->doc, "perf_ratios"), 0);
  pp_doc_text_table(out, pp_doc_find(a->doc, "energy_domains"), 0);
  pp_doc_text_table(out, pp_doc_find(a->doc, "energy"), 0);
}

int pp_report_system(FILE *out, const pp_analysis *a) {
  if (!out || !a->trace || !a->analyzed)
    return -1;
  if (pp_doc_find(a->doc, "system")) {
    pp_doc_text_table(out, pp_doc_find(a->doc, "system_run"), 0);
    section_system(out, a);
    section_tree(out, a);
    section_perf_energy(out, a);
    pp_doc_text_table(out, pp_doc_find(a->doc, "system_unavailable"), 0);
  }
  return ferror(out) ? -1 : 0;
}

/* ---- JSON ------------------------------------------------------------------- */

/* "run": the results document's facts of the run. */
static void j_run(pp_jsonw *w, const pp_analysis *a) {
  const pp_table *t = pp_doc_find(a->doc, "system_run");
  if (!t)
    return;
  pp_jsonw_key(w, "run");
  pp_jsonw_obj_begin(w);
  pp_doc_json_facts(w, t);
  pp_jsonw_obj_end(w);
}

/* "key": [{"<idx>": N, "<field>": value}, ...]: a column of table t (the
 * rows where it has a value), in the shape the summary has always had. */
static void j_column(pp_jsonw *w, const pp_table *t, const char *key,
                     const char *idx, const char *col, const char *field) {
  long ki = pp_table_col(t, idx), kv = pp_table_col(t, col);
  if (!t || ki < 0 || kv < 0)
    return;
  int open = 0;
  for (size_t r = 0; r < t->nrows; r++) {
    const pp_cell *i = pp_table_cell(t, r, (size_t)ki),
                  *v = pp_table_cell(t, r, (size_t)kv);
    if (v->kind != PP_CELL_NUM)
      continue;
    if (!open++) {
      pp_jsonw_key(w, key);
      pp_jsonw_arr_begin(w);
    }
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_double(w, idx, i->num);
    pp_jsonw_kv_double(w, field, v->num);
    pp_jsonw_obj_end(w);
  }
  if (open)
    pp_jsonw_arr_end(w);
}

/* "host": the sampler's rate, then the results document's measures (each
 * a member: {"label", "unit", "mean", "min", "max", "last", "samples"}),
 * the per-core and per-node families and the temperatures. */
static void j_host(pp_jsonw *w, const pp_analysis *a) {
  const pp_table *sys = pp_doc_find(a->doc, "system");
  if (!pp_fact_find(sys, "samples"))
    return;
  pp_jsonw_key(w, "host");
  pp_jsonw_obj_begin(w);
  pp_doc_json_facts(w, sys);
  pp_doc_json_keyed(w, pp_doc_find(a->doc, "system_host"), "key", NULL,
                    NULL);
  /* the per-core table (schema_minor 19), and its columns as the
   * arrays the summary has always had */
  const pp_table *c = pp_doc_find(a->doc, "cpu_cores");
  if (c) {
    pp_jsonw_key(w, "cores");
    pp_doc_json_rows(w, c, NULL, NULL);
  }
  j_column(w, c, "cpu_busy_max_pct", "cpu", "busy_max_pct", "max_pct");
  j_column(w, c, "cpu_freq_mean_mhz", "cpu", "freq_mean_mhz", "mean_mhz");
  j_column(w, c, "cpu_throttle_total", "cpu", "throttle_total", "total");
  pp_doc_json_facts(w, pp_doc_find(a->doc, "machine"));
  const pp_table *n = pp_doc_find(a->doc, "numa");
  if (n) {
    pp_jsonw_key(w, "numa_used_max_bytes");
    pp_doc_json_rows(w, n, NULL, NULL);
  }
  const pp_table *tt = pp_doc_find(a->doc, "temperatures");
  if (tt) {
    pp_jsonw_key(w, "temperatures");
    pp_doc_json_rows(w, tt, NULL, NULL);
  }
  pp_jsonw_obj_end(w);
}

/* "process_tree": the results document's facts, each sampled measure a
 * member ({"label", "unit", "mean", "min", "max", "last", "samples"}),
 * and the sampler's "processes" and "threads" tables. */
static void j_tree(pp_jsonw *w, const pp_analysis *a) {
  const pp_table *f = pp_doc_find(a->doc, "process_tree"),
                 *p = pp_doc_find(a->doc, "tree_processes"),
                 *t = pp_doc_find(a->doc, "tree_threads");
  if (!f && !p && !t)
    return;
  pp_jsonw_key(w, "process_tree");
  pp_jsonw_obj_begin(w);
  pp_doc_json_facts(w, f);
  pp_doc_json_keyed(w, pp_doc_find(a->doc, "process_tree_measures"), "key",
                    NULL, NULL);
  if (p) {
    pp_jsonw_key(w, "processes");
    pp_doc_json_rows(w, p, NULL, NULL);
  }
  if (t && !t->why) {
    pp_jsonw_key(w, "threads");
    pp_doc_json_rows(w, t, NULL, NULL);
  }
  pp_jsonw_obj_end(w);
}

/* "perf": the counted events, each a member of "events" named by the
 * event ({"value", "seconds", "running_pct"}), and the ratios. */
static void j_perf(pp_jsonw *w, const pp_analysis *a) {
  const pp_table *t = pp_doc_find(a->doc, "perf"),
                 *r = pp_doc_find(a->doc, "perf_ratios");
  if ((!t || !t->nrows) && !r)
    return;
  pp_jsonw_key(w, "perf");
  pp_jsonw_obj_begin(w);
  pp_jsonw_key(w, "events");
  pp_jsonw_obj_begin(w);
  pp_doc_json_keyed(w, t, "name", NULL, NULL);
  pp_jsonw_obj_end(w);
  pp_doc_json_facts(w, r);
  pp_jsonw_obj_end(w);
}

/* "energy": the domains' rows and the run's facts; nothing when the
 * energy is unavailable (system.unavailable says why). */
static void j_energy(pp_jsonw *w, const pp_analysis *a) {
  const pp_table *f = pp_doc_find(a->doc, "energy");
  if (!f || f->why)
    return;
  pp_jsonw_key(w, "energy");
  pp_jsonw_obj_begin(w);
  pp_jsonw_key(w, "domains");
  pp_doc_json_rows(w, pp_doc_find(a->doc, "energy_domains"), NULL, NULL);
  pp_doc_json_facts(w, f);
  pp_jsonw_obj_end(w);
}

/* "unavailable": {"<group>": "<reason>"}, every group of the results
 * document's "system_unavailable". */
static void j_unavailable(pp_jsonw *w, const pp_analysis *a) {
  const pp_table *t = pp_doc_find(a->doc, "system_unavailable");
  long kk = pp_table_col(t, "key"), kv = pp_table_col(t, "value");
  pp_jsonw_key(w, "unavailable");
  pp_jsonw_obj_begin(w);
  for (size_t r = 0; kk >= 0 && kv >= 0 && r < t->nrows; r++) {
    const pp_cell *k = pp_table_cell(t, r, (size_t)kk),
                  *v = pp_table_cell(t, r, (size_t)kv);
    if (k->kind == PP_CELL_TEXT && v->kind == PP_CELL_UNAVAILABLE)
      pp_jsonw_kv_str(w, k->text, v->text);
  }
  pp_jsonw_obj_end(w);
}

int pp_summary_system_json(struct pp_jsonw *w, const pp_analysis *a) {
  if (!w || !a->trace || !a->analyzed)
    return -1;
  pp_jsonw_key(w, "system");
  if (!pp_doc_find(a->doc, "system")) {
    pp_jsonw_null(w);
    return w->err ? -1 : 0;
  }
  pp_jsonw_obj_begin(w);
  j_run(w, a);
  j_host(w, a);
  j_tree(w, a);
  j_perf(w, a);
  j_energy(w, a);
  j_unavailable(w, a);
  pp_jsonw_obj_end(w);
  return w->err ? -1 : 0;
}
