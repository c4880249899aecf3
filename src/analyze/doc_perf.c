/* SPDX-License-Identifier: MIT */
/*
 * The results document's hardware counters: the perf_event counts of the
 * profiled tree ("perf": one row per event, its value in its unit: the
 * task clock in milliseconds, the others counts) and the ratios the
 * analysis derives from them ("perf_ratios": IPC, cache and branch miss
 * ratios). An event that was not counted is not a row: the table's
 * remarks say which and why, one remark per reason. The text report, the
 * summary JSON (system.perf) and the HTML page lay them out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "internal.h"
#include "analyze/system.h"
#include "results/doc.h"

static const pp_col perf_cols[] = {
    {"name", "event", PP_VALUE_TEXT, 0, NULL},
    {"value", "value", PP_VALUE_ROW, 0, NULL},
    {"unit", "unit", PP_VALUE_TEXT, PP_COL_JSON_ONLY, NULL},
    {"seconds", "seconds", PP_VALUE_SECONDS, PP_COL_JSON_ONLY, NULL},
    {"running_pct", "counting", PP_VALUE_PCT, 0, NULL},
};

static int by_name(const void *a, const void *b) {
  const pp_sys_perf_event *const *x = a, *const *y = b;
  return strcmp((*x)->name, (*y)->name);
}

/* "perf": the counted events by name (as the trace's series are
 * sorted). */
static int perf_table(pp_doc *d, const pp_system *s) {
  pp_table *t = pp_doc_table(
      d, "perf", "hardware counters",
      "perf_event, whole process tree; counting = the share of the run "
      "the kernel counted the event, multiplexed events scaled up",
      perf_cols, sizeof perf_cols / sizeof *perf_cols);
  if (!t)
    return -1;
  pp_table_empty(t, "no hardware counter was counted");
  const pp_sys_perf_event **ev =
      pp__malloc((s->nperf ? s->nperf : 1) * sizeof *ev);
  if (!ev)
    return -1;
  size_t n = 0;
  for (size_t i = 0; i < s->nperf; i++)
    if (s->perf[i].f.ok)
      ev[n++] = &s->perf[i];
  qsort(ev, n, sizeof *ev, by_name);
  for (size_t i = 0; i < n; i++) {
    const pp_sys_perf_event *e = ev[i];
    long r = pp_table_row(t);
    pp_cell_text(t, r, "name", e->name);
    /* the task clock counts CPU milliseconds, the others events */
    int ms = strcmp(e->name, "task-clock") == 0;
    pp_value_unit u = ms ? PP_VALUE_MS : PP_VALUE_COUNT;
    pp_cell_num_unit(t, r, "value", e->f.last, u);
    pp_cell_text(t, r, "unit", pp_value_unit_name(u));
    if (ms)
      pp_cell_num(t, r, "seconds", e->f.last / 1e3);
    if (e->has_running)
      pp_cell_num(t, r, "running_pct", e->running_pct);
  }
  pp__free(ev);
  /* what was not counted, one remark per reason, in the collector's
   * order */
  for (size_t i = 0; i < s->nperf; i++) {
    const pp_sys_perf_event *e = &s->perf[i];
    if (e->f.ok || !e->f.why)
      continue;
    int said = 0;
    for (size_t k = 0; k < i && !said; k++)
      said = !s->perf[k].f.ok && s->perf[k].f.why &&
             strcmp(s->perf[k].f.why, e->f.why) == 0;
    if (said)
      continue;
    char names[512] = "";
    for (size_t k = i; k < s->nperf; k++) {
      const pp_sys_perf_event *o = &s->perf[k];
      if (o->f.ok || !o->f.why || strcmp(o->f.why, e->f.why) != 0)
        continue;
      size_t len = strlen(names);
      snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "",
               o->name);
    }
    pp_table_remark(t, "%s: unavailable: %s", names, e->f.why);
  }
  return pp_doc_ok(d) ? 0 : -1;
}

/* "perf_ratios": the ratios of the counts. */
static int perf_ratios(pp_doc *d, const pp_system *s) {
  if (!s->ipc.ok && !s->cache_miss.ok && !s->branch_miss.ok)
    return 0;
  pp_table *t = pp_doc_facts(d, "perf_ratios", "", NULL);
  if (!t)
    return -1;
  if (s->ipc.ok)
    pp_row_note(t, pp_fact_num(t, "ipc", "IPC", s->ipc.v, PP_VALUE_NUMBER),
                "instructions per cycle");
  if (s->cache_miss.ok)
    pp_row_note(t,
                pp_fact_num(t, "cache_miss_pct", "cache miss ratio",
                            s->cache_miss.v * 100.0, PP_VALUE_PCT),
                "of cache references");
  if (s->branch_miss.ok)
    pp_row_note(t,
                pp_fact_num(t, "branch_miss_pct", "branch miss ratio",
                            s->branch_miss.v * 100.0, PP_VALUE_PCT),
                "of branches");
  return pp_doc_ok(d) ? 0 : -1;
}

int pp__perf_tables(const struct pp_system *s, pp_doc *d) {
  if (!s->show_perf)
    return 0;
  return perf_table(d, s) || perf_ratios(d, s) ? -1 : 0;
}
