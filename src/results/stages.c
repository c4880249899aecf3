/* SPDX-License-Identifier: MIT */
/*
 * The "stages" table (stages.h).
 */
#include "stages.h"

#include <math.h>

static const pp_col cols[] = {
    {"name", "stage", PP_VALUE_TEXT, 0, NULL},
    {"workers", "workers", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"items", "items", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"calls", "calls", PP_VALUE_COUNT, PP_COL_INT | PP_COL_JSON_ONLY, NULL},
    {"busy_ns", "busy", PP_VALUE_NS, PP_COL_INT, NULL},
    {"util_pct", "util", PP_VALUE_PCT, PP_COL_BAR, NULL},
    {"max_thread_util_pct", "busiest worker", PP_VALUE_PCT,
     PP_COL_JSON_ONLY, NULL},
    {"service_ns", "per item", PP_VALUE_NS, 0, NULL},
    {"capacity_per_s", "capacity", PP_VALUE_RATE, 0, NULL},
    {"in_queue", "input queue", PP_VALUE_TEXT, 0, NULL},
    {"out_queue", "output queue", PP_VALUE_TEXT, 0, NULL},
    {"bound", "bound", PP_VALUE_TEXT, PP_COL_BOOL, ""},
};

pp_table *pp_results_stages(pp_doc *d, const pp_stage_figures *s, size_t n) {
  pp_table *t = pp_doc_table(
      d, "stages", "pipeline bottlenecks",
      "busy = time in zones named like the stage; capacity = workers x "
      "items / busy; bound: the lowest capacity",
      cols, sizeof cols / sizeof *cols);
  if (!t)
    return NULL;
  pp_table_empty(t, "stages: none (declare queues with pp_queue_declare "
                    "to name the stages)");
  for (size_t i = 0; i < n; i++) {
    const pp_stage_figures *x = &s[i];
    long r = pp_table_row(t);
    if (r < 0)
      return NULL;
    pp_cell_text(t, r, "name", x->name);
    pp_cell_int(t, r, "workers", x->workers);
    pp_cell_count(t, r, "items", x->items);
    pp_cell_count(t, r, "calls", x->calls);
    pp_cell_int(t, r, "busy_ns", x->busy_ns);
    pp_cell_num(t, r, "util_pct", x->util_pct);
    pp_cell_num(t, r, "max_thread_util_pct", x->max_thread_util_pct);
    pp_cell_num(t, r, "service_ns", x->service_ns);
    pp_cell_num(t, r, "capacity_per_s", x->capacity_per_s);
    pp_cell_text(t, r, "in_queue", x->in_queue);
    pp_cell_text(t, r, "out_queue", x->out_queue);
    pp_cell_num(t, r, "bound", x->bound ? 1 : 0);
    if (!x->items)
      pp_row_note(t, r, "no zone named like it");
  }
  return t;
}

pp_table *pp_results_pipeline_facts(pp_doc *d, const pp_pipeline_figures *f) {
  pp_table *t = pp_doc_facts(d, "pipeline_facts", "", NULL);
  if (!t)
    return NULL;
  if (f->bound) {
    long r = pp_fact_text(t, "bound", "bound", f->bound);
    pp_row_note(t, r, "the stage of lowest capacity");
    r = pp_fact_bool(t, "bound_saturated", "bound saturated",
                     f->bound_saturated);
    pp_row_note(t, r, "busy at least 90%% of the window");
    pp_fact_num(t, "bound_per_s", "capacity of the bound", f->bound_per_s,
                PP_VALUE_RATE);
  } else {
    pp_fact_unavailable(t, "bound", "bound", f->bound_why);
  }
  pp_fact_num(t, "achieved_per_s", "throughput", f->achieved_per_s,
              PP_VALUE_RATE);
  if (f->bound && f->efficiency >= 0) {
    long r = pp_fact_num(t, "efficiency", "pipeline efficiency",
                         f->efficiency, PP_VALUE_FRACTION);
    pp_row_note(t, r, "throughput / capacity of the bound");
  } else if (f->bound) {
    pp_fact_unavailable(t, "efficiency", "pipeline efficiency",
                        "no items left the last stage");
  }
  pp_fact_int(t, "window_ns", "window", f->window_ns, PP_VALUE_NS);
  pp_fact_int(t, "stall_periods", "stall periods", (int64_t)f->stall_periods,
              PP_VALUE_COUNT);
  return t;
}
