/* SPDX-License-Identifier: MIT */
/*
 * The "request_latency" table of the results document (doc.h): per
 * request latency (E2E, TTFT, TPOT, ITL), its count, mean and
 * percentiles. Filled by the analysis of a trace (analyze/document.c) and
 * by the live endpoint (http/api.c); the text report and the HTML page
 * lay it out, the summary JSON writes each row as requests.<key>.
 */
#ifndef PP_RESULTS_REQUESTS_H
#define PP_RESULTS_REQUESTS_H

#include <stddef.h>
#include <stdint.h>

#include "doc.h"

/* One latency; a double NAN is not measured (count 0: no value; else
 * unavailable, with the table's why_spread). */
typedef struct pp_latency_figures {
  const char *key;    /* "e2e": the JSON member */
  const char *metric; /* "E2E": what the tables show */
  uint64_t count;
  double mean_ns, min_ns, p50_ns, p90_ns, p95_ns, p99_ns, p999_ns, max_ns;
  const char *empty_note; /* why count is 0, said once for all such rows
                             as the table's remark (NULL: nothing) */
} pp_latency_figures;

/* why_spread: why a producer with values lacks min, p95 and p99.9 (NULL:
 * it has them). */
pp_table *pp_results_request_latency(pp_doc *d, const pp_latency_figures *f,
                                     size_t n, const char *why_spread);

#endif /* PP_RESULTS_REQUESTS_H */
