/* SPDX-License-Identifier: MIT */
/*
 * The counter tables (counters.h).
 */
#include "counters.h"

#include "../metrics/registry.h"

static const pp_col cols[] = {
    {"name", "counter", PP_VALUE_TEXT, 0, NULL},
    {"library_metric", "library metric", PP_VALUE_COUNT,
     PP_COL_BOOL | PP_COL_JSON_ONLY, NULL},
    {"type", "type", PP_VALUE_TEXT, PP_COL_JSON_ONLY, NULL},
    {"unit", "unit", PP_VALUE_TEXT, PP_COL_JSON_ONLY, NULL},
    {"samples", "samples", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"min", "min", PP_VALUE_ROW, 0, NULL},
    {"max", "max", PP_VALUE_ROW, 0, NULL},
    {"mean", "mean", PP_VALUE_ROW, 0, NULL},
    {"last", "last", PP_VALUE_ROW, 0, NULL},
};

pp_value_unit pp_counter_unit(const char *name, int library_metric,
                              int is_float) {
  pp_metric_id id =
      library_metric ? pp_metric_lookup(name, NULL, NULL, NULL) : PP_METRIC_NONE;
  if (id == PP_METRIC_NONE)
    return is_float ? PP_VALUE_NUMBER : PP_VALUE_COUNT;
  switch (pp_metric_def_of(id)->unit) {
  case PP_UNIT_PERCENT:
    return PP_VALUE_PCT;
  case PP_UNIT_BYTES:
    return PP_VALUE_BYTES;
  case PP_UNIT_SECONDS:
    return PP_VALUE_SECONDS;
  case PP_UNIT_PER_SECOND:
    return PP_VALUE_RATE;
  case PP_UNIT_BYTES_PER_SECOND:
    return PP_VALUE_BYTE_RATE;
  case PP_UNIT_COUNT: /* whole when it is, whatever the type */
    return PP_VALUE_COUNT;
  case PP_UNIT_MHZ:
    return PP_VALUE_MHZ;
  case PP_UNIT_WATTS:
    return PP_VALUE_WATTS;
  case PP_UNIT_JOULES:
    return PP_VALUE_JOULES;
  case PP_UNIT_CELSIUS:
    return PP_VALUE_CELSIUS;
  case PP_UNIT_MILLISECONDS:
    return PP_VALUE_MS;
  case PP_UNIT_NONE:
  default:
    return PP_VALUE_NUMBER;
  }
}

static pp_table *table(pp_doc *d, int library) {
  return library
             ? pp_doc_table(d, "sampled_counters", "sampled counters",
                            "system, process, hardware, power and GPU "
                            "samples; their charts are in the system and "
                            "GPU sections",
                            cols, sizeof cols / sizeof *cols)
             : pp_doc_table(d, "counters", "counters", NULL, cols,
                            sizeof cols / sizeof *cols);
}

int pp_results_counters(pp_doc *d, const pp_counter_figures *c, size_t n) {
  pp_table *t[2] = {NULL, NULL};
  for (int lib = 0; lib < 2; lib++) {
    int any = 0;
    for (size_t i = 0; i < n && !any; i++)
      any = !c[i].library_metric == !lib;
    if (any && !(t[lib] = table(d, lib)))
      return -1;
  }
  for (size_t i = 0; i < n; i++) {
    const pp_counter_figures *f = &c[i];
    pp_table *tab = t[f->library_metric ? 1 : 0];
    long r = pp_table_row(tab);
    if (r < 0)
      return -1;
    pp_cell_text(tab, r, "name", f->name);
    pp_cell_num(tab, r, "library_metric", f->library_metric ? 1 : 0);
    pp_cell_text(tab, r, "type", f->is_float ? "float" : "int");
    pp_cell_text(tab, r, "unit", pp_value_unit_name(f->unit));
    pp_cell_count(tab, r, "samples", f->samples);
    pp_cell_num_unit(tab, r, "min", f->min, f->unit);
    pp_cell_num_unit(tab, r, "max", f->max, f->unit);
    pp_cell_num_unit(tab, r, "mean", f->mean, f->unit);
    pp_cell_num_unit(tab, r, "last", f->last, f->unit);
  }
  return 0;
}
