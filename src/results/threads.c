/* SPDX-License-Identifier: MIT */
/*
 * The "threads" table (threads.h).
 */
#include "threads.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

static const pp_col cols[] = {
    {"label", "thread", PP_VALUE_TEXT, 0, NULL},
    {"tid", "tid", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"pid", "pid", PP_VALUE_COUNT, PP_COL_INT | PP_COL_JSON_ONLY, NULL},
    /* the pid in the tables, when several processes recorded (null
     * otherwise: the views leave the column out) */
    {"process", "pid", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"name", "name", PP_VALUE_TEXT, PP_COL_JSON_ONLY, NULL},
    {"busy_ns", "busy", PP_VALUE_NS, PP_COL_INT, NULL},
    {"busy_pct", "%wall", PP_VALUE_PCT, PP_COL_BAR, NULL},
    {"zones", "zones", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"events", "events", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"dropped", "dropped", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"profiler", "profiler", PP_VALUE_COUNT,
     PP_COL_BOOL | PP_COL_JSON_ONLY | PP_COL_HIDES_ROW, NULL},
};

pp_table *pp_results_threads(pp_doc *d, const pp_thread_row *t, size_t n,
                             const char *empty) {
  pp_table *tab = pp_doc_table(d, "threads", "threads",
                               "busy = time inside top-level zones", cols,
                               sizeof cols / sizeof *cols);
  if (!tab)
    return NULL;
  pp_table_empty(tab, empty ? empty : "no threads recorded");
  int several = 0; /* processes: the tables say which thread is whose */
  for (size_t i = 1; i < n && !several; i++)
    several = t[i].pid != t[0].pid;
  for (size_t i = 0; i < n; i++) {
    const pp_thread_row *x = &t[i];
    long r = pp_table_row(tab);
    if (r < 0)
      return NULL;
    char label[96];
    if (x->name && x->name[0])
      pp_cell_text(tab, r, "label", x->name);
    else {
      snprintf(label, sizeof label, "thread %" PRIu64, x->tid);
      pp_cell_text(tab, r, "label", label);
    }
    pp_cell_count(tab, r, "tid", x->tid);
    pp_cell_count(tab, r, "pid", x->pid);
    if (several)
      pp_cell_count(tab, r, "process", x->pid);
    pp_cell_text(tab, r, "name", x->name ? x->name : "");
    pp_cell_whole(tab, r, "busy_ns", x->busy_ns);
    pp_cell_num(tab, r, "busy_pct", x->busy_pct);
    pp_cell_count(tab, r, "zones", x->zones);
    pp_cell_count(tab, r, "events", x->events);
    pp_cell_count(tab, r, "dropped", x->dropped);
    pp_cell_num(tab, r, "profiler", x->profiler ? 1 : 0);
  }
  return tab;
}
