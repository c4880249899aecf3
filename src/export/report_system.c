/* SPDX-License-Identifier: MIT */
/*
 * The system part of the report and of the summary JSON: the run, the
 * machine, the process tree, the perf_event counters and the energy, as
 * computed once by pp_system_get() (analyze/system.c: library metrics by
 * registry id, run facts and reasons from META). This file only renders
 * the results document's tables of them (analyze/doc_*.c).
 *
 * Rules: a metric that was not measured is never printed as 0. It prints
 * "unavailable: <reason>" when META gives a reason for its group and is
 * left out otherwise. Non-finite values print as "-" (text) or null (JSON),
 * never "nan" or "inf". Names from the machine (sensors, energy domains)
 * and reasons are shown with control characters replaced by '?'.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "analyze/run_tree.h"
#include "analyze/system.h"
#include "export/doc_json.h"
#include "export/doc_text.h"
#include "export/export.h"
#include "export/jsonw.h"
#include "internal.h"

#define LABEL_W 25          /* values start in this column */
#define MAX_CORES_LISTED 16 /* per-core line only up to this many cores */
#define MAX_SENSORS 32      /* temperature lines printed */
#define THREADS_LISTED 15   /* rows of the tree's thread table */
#define PROCS_LISTED 20     /* rows of the tree's process table */
#define PROC_NAME_W 24      /* process and thread names cut at */

/* A figure of the registry row PP_METRIC_<id>. */
#define M(s, id) (&(s)->m[PP_METRIC_##id])

#define REASON(t, ...)                                                         \
  pp_trace_unavailable((t), (const char *const[]){__VA_ARGS__, NULL})

/* ---- META reasons ------------------------------------------------------- */

static int has_prefix(const char *s, const char *p) {
  return strncmp(s, p, strlen(p)) == 0;
}

/* Groups the sections below explain; other "unavailable.*" keys go to a
 * section of their own. Keys starting "perf" belong to the perf section,
 * "gpu" to the GPU section (report_gpu.c). */
static const char *const known_groups[] = {
    "sys",    "cpu",       "loadavg",     "meminfo", "psi_cpu", "psi_memory",
    "psi_io", "cpufreq",   "throttle",    "hwmon",   "thermal", "numa",
    "proc",   "proc_stat", "proc_status", "proc_io", "power",   "energy",
    "rapl",   "threads",   NULL};

static int known_group(const char *g) {
  if (has_prefix(g, "perf") || has_prefix(g, "gpu"))
    return 1;
  for (size_t i = 0; known_groups[i]; i++)
    if (strcmp(g, known_groups[i]) == 0)
      return 1;
  return 0;
}

/* True when meta[i] is the last entry with its key (the one that counts). */
static int meta_is_last(const pp_trace *t, size_t i) {
  for (size_t j = i + 1; j < t->nmeta; j++)
    if (t->meta[j].key && strcmp(t->meta[j].key, t->meta[i].key) == 0)
      return 0;
  return 1;
}

/* ---- text output ---------------------------------------------------------- */

/* s with control characters shown as '?'. */
static void put_clean(FILE *out, const char *s, size_t len) {
  for (size_t i = 0; i < len && s[i]; i++) {
    unsigned char c = (unsigned char)s[i];
    fputc(c < 0x20 || c == 0x7f ? '?' : (int)c, out);
  }
}

/* indent spaces, "label:", padding to column LABEL_W (at least one space
 * after the colon). */
static void put_label_at(FILE *out, int indent, const char *l, size_t len) {
  fprintf(out, "%*s", indent, "");
  put_clean(out, l, len);
  fputc(':', out);
  int pad = LABEL_W - indent - 1 - (int)len;
  fprintf(out, "%*s", pad > 1 ? pad : 1, "");
}

static void put_labeln(FILE *out, const char *l, size_t len) {
  put_label_at(out, 2, l, len);
}

static void put_label(FILE *out, const char *l) {
  put_labeln(out, l, strlen(l));
}

static void reason_line(FILE *out, const char *l, const char *reason) {
  put_label(out, l);
  fputs("unavailable: ", out);
  put_clean(out, reason, strlen(reason));
  fputc('\n', out);
}

/* ---- run ------------------------------------------------------------------ */

/* ---- system --------------------------------------------------------------- */

/* The machine: the results document's measures, per-core figures,
 * facts (throttling, what was not measured), temperatures and NUMA nodes
 * (analyze/document.c, doc_machine.c). */
static void section_system(FILE *out, const pp_analysis *a,
                           const pp_system *s) {
  if (!s->show_system)
    return;
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

/* ---- other reasons -------------------------------------------------------- */

static void section_other(FILE *out, const pp_trace *t) {
  int any = 0;
  for (size_t i = 0; i < t->nmeta; i++) {
    const pp_meta *m = &t->meta[i];
    if (!m->key || !has_prefix(m->key, "unavailable."))
      continue;
    const char *g = m->key + strlen("unavailable.");
    if (known_group(g) || !meta_is_last(t, i))
      continue;
    if (!any++)
      fputs("\nother metrics\n", out);
    const char *r = pp_reason_strip(m->value ? m->value : "");
    reason_line(out, g, r);
  }
}

int pp_report_system(FILE *out, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  if (!out || !t || !a->analyzed)
    return -1;
  pp_system s;
  if (pp_system_get(a, &s))
    return -1;
  if (s.any) {
    pp_doc_text_table(out, pp_doc_find(a->doc, "system_run"), 0);
    section_system(out, a, &s);
    section_tree(out, a);
    section_perf_energy(out, a);
    section_other(out, t);
  }
  pp_system_free(&s);
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
static void j_host(pp_jsonw *w, const pp_analysis *a, const pp_system *s) {
  if (!s->has_host)
    return;
  pp_jsonw_key(w, "host");
  pp_jsonw_obj_begin(w);
  if (s->has_hz)
    pp_jsonw_kv_double(w, "sampler_hz", s->hz);
  pp_jsonw_kv_uint(w, "samples", s->samples);
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

static void j_unavailable(pp_jsonw *w, const pp_trace *t, const pp_system *s) {
  pp_jsonw_key(w, "unavailable");
  pp_jsonw_obj_begin(w);
  for (size_t i = 0; i < t->nmeta; i++) {
    const pp_meta *m = &t->meta[i];
    if (!m->key || !has_prefix(m->key, "unavailable.") || !meta_is_last(t, i))
      continue;
    pp_jsonw_kv_str(w, m->key + strlen("unavailable."),
                    pp_reason_strip(m->value ? m->value : ""));
  }
  /* the analysis's own finding: energy counters that did not move */
  if (!s->has_power && s->power_why == s->power_stuck)
    pp_jsonw_kv_str(w, "power", s->power_stuck);
  if (s->core_freq.why == s->freq_nominal)
    pp_jsonw_kv_str(w, "cpufreq", s->freq_nominal);
  pp_jsonw_obj_end(w);
}

int pp_summary_system_json(struct pp_jsonw *w, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  if (!w || !t || !a->analyzed)
    return -1;
  pp_system s;
  if (pp_system_get(a, &s))
    return -1;
  pp_jsonw_key(w, "system");
  if (!s.any) {
    pp_jsonw_null(w);
    pp_system_free(&s);
    return w->err ? -1 : 0;
  }
  pp_jsonw_obj_begin(w);
  j_run(w, a);
  j_host(w, a, &s);
  j_tree(w, a);
  j_perf(w, a);
  j_energy(w, a);
  j_unavailable(w, t, &s);
  pp_jsonw_obj_end(w);
  pp_system_free(&s);
  return w->err ? -1 : 0;
}
