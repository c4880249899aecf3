/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets do with whatever they manage to read: render it
 * with one of the text report and the exporters into /dev/null, picked
 * by the input's bytes, so that the corpus exercises every renderer.
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

/* One of the renderers (the text report and every exporter, by k % 5) of
 * the analysis a, into the sink: an input exercises one, the corpus all
 * of them, and a run stays above 1,000 inputs a second (rendering every
 * export of every pass was 21 a second; issue 26). */
static inline void pp_fuzz_render_one(const pp_analysis *a, unsigned k) {
  FILE *out = pp_fuzz_sink();
  if (!out)
    return;
  pp_report_opts opts = {0, 5};
  switch (k % 5) {
  case 0:
    pp_report_text(out, a, &opts);
    break;
  case 1:
    pp_export_chrome(out, a);
    break;
  case 2:
    pp_export_summary_json(out, a);
    break;
  case 3: /* the two small text exports */
    pp_export_csv(out, a);
    pp_export_stacks_folded(out, a);
    break;
  default:
    pp_export_html(out, a);
    break;
  }
  fflush(out);
  clearerr(out);
}

/* Which renderer an input gets: from its bytes, so that a mutation
 * moves it. */
static inline unsigned pp_fuzz_pick(const unsigned char *data, size_t size) {
  unsigned h = (unsigned)size;
  for (size_t i = size > 8 ? size - 8 : 0; i < size; i++)
    h = h * 31u + data[i];
  return h;
}

#endif /* PP_FUZZ_RENDER_H */
