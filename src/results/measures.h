/* SPDX-License-Identifier: MIT */
/*
 * A table of sampled measures (the results document, doc.h): per measure
 * of the machine or the process tree (CPU busy, memory used, pressure,
 * ...) its mean, min, max and last sample in its unit. A measure that
 * could not be measured is not a row: the table's remarks say which and
 * why (one remark per reason), and a measure without a reason is left
 * out. Filled by the analysis (analyze/document.c) from pp_system; the
 * text report, the summary JSON (system.host: each measure a member,
 * {"label", "unit", "mean", "min", "max", "last", "samples"}) and the
 * HTML page lay it out.
 */
#ifndef PP_RESULTS_MEASURES_H
#define PP_RESULTS_MEASURES_H

#include <stddef.h>
#include <stdint.h>

#include "doc.h"

typedef struct pp_measure_figures {
  const char *key;   /* the JSON member ("cpu_busy_pct") */
  const char *label; /* "CPU busy" */
  pp_value_unit unit;
  int ok; /* measured: the figures below are set */
  double mean, min, max, last;
  uint64_t samples;
  const char *why; /* !ok: why not (NULL: the measure is left out) */
} pp_measure_figures;

pp_table *pp_results_measures(pp_doc *d, const char *id, const char *title,
                              const char *note, const pp_measure_figures *m,
                              size_t n);

#endif /* PP_RESULTS_MEASURES_H */
