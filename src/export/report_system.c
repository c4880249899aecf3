/* SPDX-License-Identifier: MIT */
/*
 * The system part of the report and of the summary JSON: the run, the
 * machine, the process tree, the perf_event counters and the energy, as
 * computed once by pp_system_get() (analyze/system.c: library metrics by
 * registry id, run facts and reasons from META). This file only renders
 * them; the thread table comes from export/run_tree.c.
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

/* ---- number formatting -------------------------------------------------- */

/* A formatted number; used as fmt_x(v).s within one full expression. */
typedef pp_unit_text num; /* units.h */

static num numf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static num numf(const char *fmt, ...) {
  num n;
  va_list ap;
  va_start(ap, fmt);
  int r = vsnprintf(n.s, sizeof n.s, fmt, ap);
  va_end(ap);
  if (r < 0)
    n.s[0] = '\0';
  return n;
}

static num fmt_bytes(double v) { return pp_unit_text_of(pp__fmt_bytes, v); }

/* v with a fixed number of decimals. */
static num fmt_fixed(double v, int decimals) {
  if (!isfinite(v))
    return numf("-");
  if (fabs(v) >= 1e15)
    return numf("%.3g", v);
  return numf("%.*f", decimals, v);
}


/* An exact count with thousands separators: 12,345,678. */
static num fmt_count(double v) {
  if (!isfinite(v))
    return numf("-");
  if (fabs(v) >= 9e18)
    return numf("%.3g", v);
  long long x = llround(v);
  unsigned long long a = x < 0 ? 0ull - (unsigned long long)x
                               : (unsigned long long)x;
  char digits[32];
  int nd = snprintf(digits, sizeof digits, "%llu", a);
  if (nd <= 0 || (size_t)nd >= sizeof digits)
    return numf("-");
  num n;
  size_t k = 0;
  if (x < 0)
    n.s[k++] = '-';
  for (int i = 0; i < nd && k + 2 < sizeof n.s; i++) {
    if (i && (nd - i) % 3 == 0)
      n.s[k++] = ',';
    n.s[k++] = digits[i];
  }
  n.s[k] = '\0';
  return n;
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

static void line(FILE *out, const char *l, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void line(FILE *out, const char *l, const char *fmt, ...) {
  put_label(out, l);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(out, fmt, ap);
  va_end(ap);
  fputc('\n', out);
}

static void reason_line(FILE *out, const char *l, const char *reason) {
  put_label(out, l);
  fputs("unavailable: ", out);
  put_clean(out, reason, strlen(reason));
  fputc('\n', out);
}

/* ", " between the parts of one line. */
typedef struct sep {
  FILE *out;
  int n;
} sep;

static void part(sep *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void part(sep *s, const char *fmt, ...) {
  if (s->n++)
    fputs(", ", s->out);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(s->out, fmt, ap);
  va_end(ap);
}

/* ---- run ------------------------------------------------------------------ */

/* ---- system --------------------------------------------------------------- */

static void sys_per_core(FILE *out, const pp_system *s) {
  const pp_sys_family *f = &s->core_busy;
  if (f->n > 0 && f->n <= MAX_CORES_LISTED) {
    put_label(out, "per core busy max");
    for (size_t i = 0; i < f->n; i++)
      fprintf(out, "%s%s", i ? " " : "", fmt_fixed(f->v[i].f.max, 0).s);
    fputc('\n', out);
  }
}

static void sys_freq_throttle(FILE *out, const pp_system *s) {
  const pp_sys_family *f = &s->core_freq;
  if (f->n > 0) {
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < f->n; i++) {
      double m = f->v[i].f.mean;
      if (isfinite(m)) {
        lo = m < lo ? m : lo;
        hi = m > hi ? m : hi;
      }
    }
    if (lo <= hi)
      line(out, "CPU frequency", "mean per core %.0f..%.0f MHz (%zu cores)", lo,
           hi, f->n);
    else
      line(out, "CPU frequency", "-");
  } else if (f->why) {
    reason_line(out, "CPU frequency", f->why);
  }

  f = &s->core_throttle;
  if (f->n > 0) {
    /* A sum over the cores; NaN (printed "-") when a core has no value. */
    double last = 0, grew = 0;
    for (size_t i = 0; i < f->n; i++) {
      last += f->v[i].f.last;
      grew += f->v[i].f.last - f->v[i].f.min;
    }
    put_label(out, "thermal throttling");
    fprintf(out, "%s events (counter total, %zu cores), %s while sampled",
            fmt_count(last).s, f->n, fmt_count(grew).s);
    if (f->n <= MAX_CORES_LISTED && grew > 0) {
      fputs(":", out);
      for (size_t i = 0; i < f->n; i++) {
        double d = f->v[i].f.last - f->v[i].f.min;
        if (isfinite(d) && d > 0)
          fprintf(out, " cpu%lu +%s", f->v[i].index, fmt_count(d).s);
      }
    }
    fputc('\n', out);
  } else if (f->why) {
    reason_line(out, "thermal throttling", f->why);
  }
}

static void sys_temps(FILE *out, const pp_system *s) {
  size_t shown = 0;
  for (size_t i = 0; i < s->ntemps; i++) {
    if (!i)
      fputs("  temperatures (max):\n", out);
    if (shown >= MAX_SENSORS)
      continue;
    shown++;
    put_label_at(out, 4, s->temps[i].name, s->temps[i].len);
    fprintf(out, "%s C\n", fmt_fixed(s->temps[i].f.max, 1).s);
  }
  if (s->ntemps > shown)
    fprintf(out, "    ... %zu more sensors\n", s->ntemps - shown);
  const char *h = s->temp_why_hwmon, *th = s->temp_why_thermal;
  if (s->ntemps || (!h && !th))
    return;
  put_label(out, "temperatures");
  fputs("unavailable: ", out);
  if (h)
    put_clean(out, h, strlen(h));
  if (h && th)
    fputs("; ", out);
  if (th)
    put_clean(out, th, strlen(th));
  fputc('\n', out);
}

static void sys_numa(FILE *out, const pp_system *s) {
  const pp_sys_family *f = &s->numa;
  if (f->n > 0) {
    put_label(out, "NUMA used max");
    sep p = {out, 0};
    for (size_t i = 0; i < f->n; i++)
      part(&p, "node%lu %s", f->v[i].index, fmt_bytes(f->v[i].f.max).s);
    fputc('\n', out);
  } else if (f->why) {
    reason_line(out, "NUMA", f->why);
  }
}

/* The machine: the results document's measures (analyze/document.c),
 * then the per-core, frequency, throttling, temperature and NUMA lines. */
static void section_system(FILE *out, const pp_analysis *a,
                           const pp_system *s) {
  if (!s->show_system)
    return;
  pp_doc_text_table(out, pp_doc_find(a->doc, "system_host"), 0);
  sys_per_core(out, s);
  sys_freq_throttle(out, s);
  sys_temps(out, s);
  sys_numa(out, s);
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
  int rc = 0;
  if (s.any) {
    pp_doc_text_table(out, pp_doc_find(a->doc, "system_run"), 0);
    section_system(out, a, &s);
    section_tree(out, a);
    section_perf_energy(out, a);
    section_other(out, t);
  }
  pp_system_free(&s);
  return rc || ferror(out) ? -1 : 0;
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

/* "key": [{"<idx>": N, "<field>": value}, ...] of a family; what: 1 max,
 * 0 mean, 2 last. */
static void j_family(pp_jsonw *w, const pp_sys_family *f, const char *key,
                     const char *idx, const char *field, int what) {
  if (!f->n)
    return;
  pp_jsonw_key(w, key);
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < f->n; i++) {
    const pp_sys_fig *c = &f->v[i].f;
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_uint(w, idx, f->v[i].index);
    pp_jsonw_kv_double(w, field,
                       what == 1   ? c->max
                       : what == 0 ? c->mean
                                   : c->last);
    pp_jsonw_obj_end(w);
  }
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
  j_family(w, &s->core_busy, "cpu_busy_max_pct", "cpu", "max_pct", 1);
  j_family(w, &s->core_freq, "cpu_freq_mean_mhz", "cpu", "mean_mhz", 0);
  j_family(w, &s->core_throttle, "cpu_throttle_total", "cpu", "total", 2);
  j_family(w, &s->numa, "numa_used_max_bytes", "node", "max_bytes", 1);
  if (s->ntemps) {
    pp_jsonw_key(w, "temperatures");
    pp_jsonw_arr_begin(w);
    for (size_t i = 0; i < s->ntemps; i++) {
      pp_jsonw_obj_begin(w);
      pp_jsonw_key(w, "sensor");
      pp_jsonw_strn(w, s->temps[i].name, s->temps[i].len);
      pp_jsonw_kv_double(w, "max_c", s->temps[i].f.max);
      pp_jsonw_kv_double(w, "mean_c", s->temps[i].f.mean);
      pp_jsonw_obj_end(w);
    }
    pp_jsonw_arr_end(w);
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
  int rc = 0;
  pp_jsonw_obj_end(w);
  pp_system_free(&s);
  return rc || w->err ? -1 : 0;
}
