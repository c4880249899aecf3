/* SPDX-License-Identifier: MIT */
/*
 * The "stalls" table (stalls.h).
 */
#include "stalls.h"

#include <inttypes.h>

#include "../internal.h"

static const pp_col cols[] = {
    {"queue", "queue", PP_VALUE_TEXT, 0, NULL},
    {"kind", "kind", PP_VALUE_TEXT, PP_COL_JSON_ONLY, NULL},
    {"what", "stall", PP_VALUE_TEXT, 0, NULL},
    {"stage", "stage held up", PP_VALUE_TEXT, 0, NULL},
    {"at_ns", "at (from start)", PP_VALUE_NS, PP_COL_INT, NULL},
    {"duration_ns", "duration", PP_VALUE_NS, PP_COL_INT, NULL},
    {"seen_from", "seen from", PP_VALUE_TEXT, 0, NULL},
    {"recorded", "recorded", PP_VALUE_TEXT, PP_COL_BOOL | PP_COL_JSON_ONLY,
     NULL},
    {"start_ns", "start", PP_VALUE_NS, PP_COL_INT | PP_COL_JSON_ONLY, NULL},
    {"end_ns", "end", PP_VALUE_NS, PP_COL_INT | PP_COL_JSON_ONLY, NULL},
};

pp_table *pp_results_stalls(pp_doc *d, const pp_stall_figures *s, size_t n,
                            uint64_t periods) {
  if (!n)
    return NULL;
  pp_table *t = pp_doc_table(d, "stalls", "longest stalls",
                             "longest first; full: its producer blocked, "
                             "empty: its consumer starved",
                             cols, sizeof cols / sizeof *cols);
  for (size_t i = 0; t && i < n; i++) {
    const pp_stall_figures *x = &s[i];
    long r = pp_table_row(t);
    if (r < 0)
      return NULL;
    pp_cell_text(t, r, "queue", x->queue);
    pp_cell_text(t, r, "kind", x->full ? "full" : "empty");
    pp_cell_text(t, r, "what", x->full ? "queue full: producer blocked"
                                       : "queue empty: consumer starved");
    pp_cell_text(t, r, "stage", x->stage);
    pp_cell_int(t, r, "at_ns", x->at_ns);
    pp_cell_int(t, r, "duration_ns", pp__span(x->start_ns, x->end_ns));
    pp_cell_text(t, r, "seen_from",
                 x->recorded ? "recorded waits" : "queue depth");
    pp_cell_num(t, r, "recorded", x->recorded ? 1 : 0);
    pp_cell_int(t, r, "start_ns", x->start_ns);
    pp_cell_int(t, r, "end_ns", x->end_ns);
  }
  if (t && periods > n)
    pp_table_remark(t, "%" PRIu64 " stall periods in all; the %zu longest "
                    "are listed", periods, n);
  return t;
}
