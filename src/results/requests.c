/* SPDX-License-Identifier: MIT */
/*
 * The "request_latency" table (requests.h).
 */
#include "requests.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const pp_col cols[] = {
    {"key", "key", PP_VALUE_TEXT, PP_COL_JSON_ONLY, NULL},
    {"metric", "metric", PP_VALUE_TEXT, 0, NULL},
    {"count", "count", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"mean_ns", "mean", PP_VALUE_NS, 0, NULL},
    {"min_ns", "min", PP_VALUE_NS, PP_COL_INT, NULL},
    {"p50_ns", "p50", PP_VALUE_NS, PP_COL_INT, NULL},
    {"p90_ns", "p90", PP_VALUE_NS, PP_COL_INT, NULL},
    {"p95_ns", "p95", PP_VALUE_NS, PP_COL_INT, NULL},
    {"p99_ns", "p99", PP_VALUE_NS, PP_COL_INT, NULL},
    {"p999_ns", "p99.9", PP_VALUE_NS, PP_COL_INT, NULL},
    {"max_ns", "max", PP_VALUE_NS, PP_COL_INT, NULL},
};

pp_table *pp_results_request_latency(pp_doc *d, const pp_latency_figures *f,
                                     size_t n, const char *why_spread) {
  pp_table *t = pp_doc_table(
      d, "request_latency", "request latency",
      "of successful requests; E2E: begin to end; TTFT: begin to first "
      "token; TPOT: (E2E - TTFT) / (tokens - 1); ITL: gaps between token "
      "chunks",
      cols, sizeof cols / sizeof *cols);
  for (size_t i = 0; t && i < n; i++) {
    const pp_latency_figures *x = &f[i];
    long r = pp_table_row(t);
    if (r < 0)
      return NULL;
    pp_cell_text(t, r, "key", x->key);
    pp_cell_text(t, r, "metric", x->metric);
    pp_cell_count(t, r, "count", x->count);
    if (!x->count) /* no value: none, not 0 ns */
      continue;
    static const char *const keys[] = {"mean_ns", "min_ns", "p50_ns",
                                       "p90_ns",  "p95_ns", "p99_ns",
                                       "p999_ns", "max_ns"};
    const double v[] = {x->mean_ns, x->min_ns, x->p50_ns, x->p90_ns,
                        x->p95_ns,  x->p99_ns, x->p999_ns, x->max_ns};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
      if (isnan(v[k])) {
        if (why_spread)
          pp_cell_unavailable(t, r, keys[k], why_spread);
      } else if (k == 0) {
        pp_cell_num(t, r, keys[k], v[k]); /* the mean */
      } else {
        pp_cell_whole(t, r, keys[k], v[k]);
      }
    }
  }
  /* the rows without a value, said once: "TTFT, TPOT, ITL: no token
   * events (...)" */
  char names[128] = "";
  const char *why = NULL;
  for (size_t i = 0; t && i < n; i++)
    if (!f[i].count && f[i].empty_note) {
      size_t l = strlen(names);
      snprintf(names + l, sizeof names - l, "%s%s", l ? ", " : "",
               f[i].metric);
      why = f[i].empty_note;
    }
  if (why)
    pp_table_remark(t, "%s: %s", names, why);
  return t;
}
