/* SPDX-License-Identifier: MIT */
/*
 * Tables of sampled measures (measures.h).
 */
#include "measures.h"

#include <stdio.h>
#include <string.h>

static const pp_col cols[] = {
    {"key", "key", PP_VALUE_TEXT, PP_COL_JSON_ONLY, NULL},
    {"label", "measure", PP_VALUE_TEXT, 0, NULL},
    {"unit", "unit", PP_VALUE_TEXT, PP_COL_JSON_ONLY, NULL},
    {"mean", "mean", PP_VALUE_ROW, 0, NULL},
    {"min", "min", PP_VALUE_ROW, 0, NULL},
    {"max", "max", PP_VALUE_ROW, 0, NULL},
    {"last", "last", PP_VALUE_ROW, 0, NULL},
    {"samples", "samples", PP_VALUE_COUNT, PP_COL_INT | PP_COL_JSON_ONLY,
     NULL},
};

/* One remark per reason: "CPU iowait, CPU steal: unavailable: why". */
static void unmeasured(pp_table *t, const pp_measure_figures *m, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (m[i].ok || !m[i].why)
      continue;
    int said = 0; /* an earlier measure had this reason */
    for (size_t j = 0; j < i && !said; j++)
      said = !m[j].ok && m[j].why && strcmp(m[j].why, m[i].why) == 0;
    if (said)
      continue;
    char names[400];
    size_t len = 0;
    names[0] = '\0';
    for (size_t j = i; j < n; j++) {
      if (m[j].ok || !m[j].why || strcmp(m[j].why, m[i].why) != 0)
        continue;
      int w = snprintf(names + len, sizeof names - len, "%s%s",
                       len ? ", " : "", m[j].label);
      if (w < 0 || (size_t)w >= sizeof names - len) {
        len = sizeof names - 1;
        break;
      }
      len += (size_t)w;
    }
    pp_table_remark(t, "%s: unavailable: %s", names, m[i].why);
  }
}

pp_table *pp_results_measures(pp_doc *d, const char *id, const char *title,
                              const char *note, const pp_measure_figures *m,
                              size_t n) {
  pp_table *t =
      pp_doc_table(d, id, title, note, cols, sizeof cols / sizeof *cols);
  if (!t)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    const pp_measure_figures *x = &m[i];
    if (!x->ok)
      continue;
    long r = pp_table_row(t);
    if (r < 0)
      return NULL;
    pp_cell_text(t, r, "key", x->key);
    pp_cell_text(t, r, "label", x->label);
    pp_cell_text(t, r, "unit", pp_value_unit_name(x->unit));
    pp_cell_num_unit(t, r, "mean", x->mean, x->unit);
    pp_cell_num_unit(t, r, "min", x->min, x->unit);
    pp_cell_num_unit(t, r, "max", x->max, x->unit);
    pp_cell_num_unit(t, r, "last", x->last, x->unit);
    pp_cell_count(t, r, "samples", x->samples);
  }
  unmeasured(t, m, n);
  return pp_doc_ok(d) ? t : NULL;
}
