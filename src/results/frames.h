/* SPDX-License-Identifier: MIT */
/*
 * The "frames" table of the results document (doc.h): per frame-mark
 * stream, its marks, rate and frame times (the gap between consecutive
 * marks). Filled by the analysis of a trace (analyze/document.c) and by
 * the live endpoint (http/api.c), laid out by every view. The energy per
 * frame is the views' own member beside it (frames[].energy).
 */
#ifndef PP_RESULTS_FRAMES_H
#define PP_RESULTS_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "doc.h"

/* NAN where a producer has no such figure; with fewer than 2 marks
 * there is no frame time and no rate. */
typedef struct pp_frame_figures {
  const char *name;
  uint64_t frames;
  double fps;
  double mean_ns, std_ns, jitter_ns;
  double p50_ns, p90_ns, p99_ns, max_ns;
} pp_frame_figures;

pp_table *pp_results_frames(pp_doc *d, const pp_frame_figures *f, size_t n);

#endif /* PP_RESULTS_FRAMES_H */
