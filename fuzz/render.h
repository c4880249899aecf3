/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets do with whatever they manage to read: render it
 * with the text report and every exporter into /dev/null, so that any
 * input that reads also exercises every renderer.
 */
#ifndef PP_FUZZ_RENDER_H
#define PP_FUZZ_RENDER_H

#include <stdio.h>

#include "analyze/analysis.h"
#include "export/export.h"

/* /dev/null (or a temporary file), opened once. */
static inline FILE *pp_fuzz_sink(void) {
  static FILE *null;
  if (!null) {
    null = fopen("/dev/null", "w");
    if (!null)
      null = tmpfile();
  }
  return null;
}

/* The report and every export of the analysis a, into the sink. */
static inline void pp_fuzz_render(const pp_analysis *a) {
  FILE *out = pp_fuzz_sink();
  if (!out)
    return;
  pp_report_opts opts = {0, 5};
  pp_report_text(out, a, &opts);
  pp_export_chrome(out, a);
  pp_export_summary_json(out, a);
  pp_export_csv(out, a);
  pp_export_html(out, a);
  fflush(out);
  clearerr(out);
}

#endif /* PP_FUZZ_RENDER_H */
