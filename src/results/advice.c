/* SPDX-License-Identifier: MIT */
/*
 * The "recommendations" table (advice.h).
 */
#include "advice.h"

static const pp_col cols[] = {
    {"rank", "#", PP_VALUE_COUNT, PP_COL_VIEW_ONLY, NULL},
    {"severity", "severity", PP_VALUE_TEXT, 0, NULL},
    {"text", "recommendation", PP_VALUE_TEXT, 0, NULL},
    {"evidence", "evidence", PP_VALUE_TEXT, PP_COL_DETAIL, NULL},
    {"rule", "rule", PP_VALUE_TEXT, PP_COL_DETAIL, NULL},
};

pp_table *pp_results_advice(pp_doc *d, const pp_advice_figures *a, size_t n) {
  static const char *const sev[] = {"low", "medium", "high"};
  pp_table *t = pp_doc_table(
      d, "recommendations", "recommendations",
      "most severe first, each with the figures that fired its rule; the "
      "rules: docs/analysis.md",
      cols, sizeof cols / sizeof *cols);
  if (!t)
    return NULL;
  pp_table_empty(t, "none: no rule found evidence of a problem (rules in "
                    "docs/analysis.md)");
  for (size_t i = 0; i < n; i++) {
    long r = pp_table_row(t);
    if (r < 0)
      return NULL;
    int s = a[i].severity;
    pp_cell_int(t, r, "rank", (int64_t)i + 1);
    pp_cell_text(t, r, "rule", a[i].rule);
    pp_cell_text(t, r, "severity", sev[s >= 0 && s <= 2 ? s : 0]);
    pp_cell_text(t, r, "text", a[i].text);
    pp_cell_text(t, r, "evidence", a[i].evidence);
  }
  return t;
}
