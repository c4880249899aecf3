/* SPDX-License-Identifier: MIT */
/*
 * The results document's per-core, per-sensor and per-node figures of
 * the machine: "cpu_cores" (each core's largest busy share, mean clock
 * and thermal throttling events, the counter's total and those while
 * sampled), "temperatures" (each sensor's max and mean), "numa" (each
 * node's most memory used) and the facts "machine" (the throttling total
 * over the cores, and why a family was not measured). The text report,
 * the summary JSON (system.host) and the HTML page lay them out.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "internal.h"
#include "analyze/system.h"
#include "results/doc.h"

static const pp_col core_cols[] = {
    {"cpu", "CPU", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"busy_max_pct", "busy, max", PP_VALUE_PCT, PP_COL_BAR, NULL},
    {"freq_mean_mhz", "clock, mean", PP_VALUE_MHZ, 0, NULL},
    {"throttle_total", "throttling events", PP_VALUE_COUNT, 0, NULL},
    {"throttle_sampled", "throttling events", PP_VALUE_COUNT, 0, NULL},
};

/* The row of core index in t, made in index order (the families are). */
static long core_row(pp_table *t, unsigned long index) {
  long kc = pp_table_col(t, "cpu");
  for (size_t r = 0; r < t->nrows; r++)
    if (pp_table_cell(t, r, (size_t)kc)->num == (double)index)
      return (long)r;
  long r = pp_table_row(t);
  pp_cell_count(t, r, "cpu", index);
  return r;
}

static void cell(pp_table *t, long r, const char *key, double v) {
  if (r >= 0 && isfinite(v))
    pp_cell_num(t, r, key, v);
}

static int cores(pp_doc *d, const pp_system *s) {
  const pp_sys_family *b = &s->core_busy, *f = &s->core_freq,
                      *th = &s->core_throttle;
  if (!b->n && !f->n && !th->n)
    return 0;
  pp_table *t = pp_doc_table(
      d, "cpu_cores", "per core",
      "busy: the largest sampled share; clock: the mean sampled; "
      "throttling events: the counter's total / those while sampled",
      core_cols, sizeof core_cols / sizeof *core_cols);
  if (!t)
    return -1;
  for (size_t i = 0; i < b->n; i++)
    cell(t, core_row(t, b->v[i].index), "busy_max_pct", b->v[i].f.max);
  for (size_t i = 0; i < f->n; i++)
    cell(t, core_row(t, f->v[i].index), "freq_mean_mhz", f->v[i].f.mean);
  for (size_t i = 0; i < th->n; i++) {
    long r = core_row(t, th->v[i].index);
    cell(t, r, "throttle_total", th->v[i].f.last);
    cell(t, r, "throttle_sampled", th->v[i].f.last - th->v[i].f.min);
  }
  return pp_doc_ok(d) ? 0 : -1;
}

static const pp_col temp_cols[] = {
    {"sensor", "sensor", PP_VALUE_TEXT, 0, NULL},
    {"max_c", "max", PP_VALUE_CELSIUS, 0, NULL},
    {"mean_c", "mean", PP_VALUE_CELSIUS, 0, NULL},
};

static int temperatures(pp_doc *d, const pp_system *s) {
  if (!s->ntemps)
    return 0;
  pp_table *t = pp_doc_table(d, "temperatures", "temperatures", NULL,
                             temp_cols, sizeof temp_cols / sizeof *temp_cols);
  if (!t)
    return -1;
  for (size_t i = 0; i < s->ntemps; i++) {
    long r = pp_table_row(t);
    char name[160];
    size_t n = s->temps[i].len < sizeof name ? s->temps[i].len
                                             : sizeof name - 1;
    memcpy(name, s->temps[i].name, n);
    name[n] = '\0';
    pp_cell_text(t, r, "sensor", name);
    cell(t, r, "max_c", s->temps[i].f.max);
    cell(t, r, "mean_c", s->temps[i].f.mean);
  }
  return pp_doc_ok(d) ? 0 : -1;
}

static const pp_col numa_cols[] = {
    {"node", "node", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"max_bytes", "used, max", PP_VALUE_BYTES, 0, NULL},
};

static int numa(pp_doc *d, const pp_system *s) {
  if (!s->numa.n)
    return 0;
  pp_table *t = pp_doc_table(d, "numa", "NUMA nodes", NULL, numa_cols,
                             sizeof numa_cols / sizeof *numa_cols);
  if (!t)
    return -1;
  for (size_t i = 0; i < s->numa.n; i++) {
    long r = pp_table_row(t);
    pp_cell_count(t, r, "node", s->numa.v[i].index);
    cell(t, r, "max_bytes", s->numa.v[i].f.max);
  }
  return pp_doc_ok(d) ? 0 : -1;
}

/* "machine": the throttling total over the cores, and why a family was
 * not measured. */
static int machine_facts(pp_doc *d, const pp_system *s) {
  pp_table *t = pp_doc_facts(d, "machine", "", NULL);
  if (!t)
    return -1;
  const pp_sys_family *th = &s->core_throttle;
  if (th->n) {
    /* NAN (no value) when a core has none */
    double last = 0, grew = 0;
    for (size_t i = 0; i < th->n; i++) {
      last += th->v[i].f.last;
      grew += th->v[i].f.last - th->v[i].f.min;
    }
    long r = pp_fact_num(t, "throttle_total", "thermal throttling", last,
                         PP_VALUE_COUNT);
    if (isfinite(grew))
      pp_row_note(t, r, "events, the counters' total over %zu cores; %.0f "
                        "while sampled",
                  th->n, grew);
    pp_fact_json_only(t, pp_fact_num(t, "throttle_sampled",
                                     "while sampled", grew, PP_VALUE_COUNT));
  } else if (th->why) {
    pp_fact_unavailable(t, "throttle_total", "thermal throttling", th->why);
  }
  if (!s->core_freq.n && s->core_freq.why)
    pp_fact_unavailable(t, "cpu_freq", "CPU frequency", s->core_freq.why);
  if (!s->ntemps && (s->temp_why_hwmon || s->temp_why_thermal)) {
    char why[512];
    snprintf(why, sizeof why, "%s%s%s",
             s->temp_why_hwmon ? s->temp_why_hwmon : "",
             s->temp_why_hwmon && s->temp_why_thermal ? "; " : "",
             s->temp_why_thermal ? s->temp_why_thermal : "");
    pp_fact_unavailable(t, "temperatures", "temperatures", why);
  }
  if (!s->numa.n && s->numa.why)
    pp_fact_unavailable(t, "numa", "NUMA", s->numa.why);
  return pp_doc_ok(d) ? 0 : -1;
}

int pp__machine_tables(const struct pp_system *s, pp_doc *d) {
  if (!s->show_system)
    return 0;
  return cores(d, s) || machine_facts(d, s) || temperatures(d, s) ||
                 numa(d, s)
             ? -1
             : 0;
}
