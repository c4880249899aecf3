/* SPDX-License-Identifier: MIT */
/*
 * The counter tables of the results document (doc.h): "counters" (the
 * program's) and "sampled_counters" (the library's sampled metrics:
 * system, process, perf, power, GPU), one row per series, each value in
 * its unit (the metric registry's for a library metric). Filled by the
 * analysis of a trace (analyze/document.c) and by the live endpoint
 * (http/api.c) from the same figures; the summary JSON's "counters"
 * holds the rows of both.
 */
#ifndef PP_RESULTS_COUNTERS_H
#define PP_RESULTS_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "doc.h"

typedef struct pp_counter_figures {
  const char *name;
  int library_metric; /* a series the library sampled */
  int is_float;       /* a value was set as a double */
  pp_value_unit unit; /* of min, max, mean, last */
  uint64_t samples;
  double min, max, mean, last; /* NAN: none */
} pp_counter_figures;

/* The unit of a series named name: the registry's for a library metric
 * (metrics/registry.h), else a count for integer values, a number for
 * doubles. */
pp_value_unit pp_counter_unit(const char *name, int library_metric,
                              int is_float);

/* Both tables (the program's first), or -1 when out of memory. */
int pp_results_counters(pp_doc *d, const pp_counter_figures *c, size_t n);

#endif /* PP_RESULTS_COUNTERS_H */
