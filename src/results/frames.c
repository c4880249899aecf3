/* SPDX-License-Identifier: MIT */
/*
 * The "frames" table (frames.h).
 */
#include "frames.h"

#include <math.h>

#define TIME "frame time p50 / p90 / p99 / max"
#define SPREAD "frame time mean / std dev"

static const pp_col cols[] = {
    {"name", "frame", PP_VALUE_TEXT, 0, NULL},
    {"frames", "frames", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"fps", "fps", PP_VALUE_NUMBER, 0, NULL},
    {"mean_ns", SPREAD, PP_VALUE_NS, PP_COL_DETAIL, NULL},
    {"std_ns", SPREAD, PP_VALUE_NS, PP_COL_DETAIL, NULL},
    {"p50_ns", TIME, PP_VALUE_NS, PP_COL_INT, NULL},
    {"p90_ns", TIME, PP_VALUE_NS, PP_COL_INT, NULL},
    {"p99_ns", TIME, PP_VALUE_NS, PP_COL_INT, NULL},
    {"max_ns", TIME, PP_VALUE_NS, PP_COL_INT, NULL},
    {"jitter_ns", "jitter", PP_VALUE_NS, 0, NULL},
};

pp_table *pp_results_frames(pp_doc *d, const pp_frame_figures *f, size_t n) {
  pp_table *t = pp_doc_table(d, "frames", "frames",
                             "frame time = gap between consecutive marks",
                             cols, sizeof cols / sizeof *cols);
  for (size_t i = 0; t && i < n; i++) {
    const pp_frame_figures *x = &f[i];
    long r = pp_table_row(t);
    if (r < 0)
      return NULL;
    pp_cell_text(t, r, "name", x->name);
    pp_cell_count(t, r, "frames", x->frames);
    if (x->frames < 2)
      continue; /* no gap: no rate, no frame time */
    pp_cell_num(t, r, "fps", x->fps > 0 ? x->fps : (double)NAN);
    pp_cell_num(t, r, "mean_ns", x->mean_ns);
    pp_cell_num(t, r, "std_ns", x->std_ns);
    pp_cell_num(t, r, "jitter_ns", x->jitter_ns);
    pp_cell_num(t, r, "p50_ns", x->p50_ns);
    pp_cell_num(t, r, "p90_ns", x->p90_ns);
    pp_cell_num(t, r, "p99_ns", x->p99_ns);
    pp_cell_num(t, r, "max_ns", x->max_ns);
  }
  return t;
}
