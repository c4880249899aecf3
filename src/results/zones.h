/* SPDX-License-Identifier: MIT */
/*
 * The "zones" and "top_self" tables of the results document (doc.h): per
 * zone site, its count, times and duration percentiles; and the zones
 * ranked by self time with their share of all zone self time. Filled by
 * the analysis of a trace (analyze/document.c) and by the live endpoint
 * (http/api.c), laid out by every view. A figure a producer does not
 * keep is unavailable with its reason (the live windows keep no nesting,
 * so no self time), never a 0.
 */
#ifndef PP_RESULTS_ZONES_H
#define PP_RESULTS_ZONES_H

#include <stddef.h>
#include <stdint.h>

#include "doc.h"

/* One zone site. A double NAN is "not measured": the cell says
 * unavailable with the table's reason for that figure (pp_zone_whys). */
typedef struct pp_zone_figures {
  const char *name;
  const char *function, *file; /* the site (NULL: not known) */
  uint32_t line;
  uint64_t count;
  double total_ns, self_ns, mean_ns, std_ns, min_ns, max_ns;
  double p50_ns, p90_ns, p95_ns, p99_ns, p999_ns;
  double wall_pct; /* total over the window's wall time; NAN: no window */
  double rate_per_s; /* instances per second of the window */
} pp_zone_figures;

/* Why a producer lacks a figure (NULL: it has all of them). */
typedef struct pp_zone_whys {
  const char *self;   /* self time */
  const char *spread; /* std dev, min, p95, p99.9 */
} pp_zone_whys;

/* The zones table: rows in the order given (the producer's ranking);
 * remarks (pp_table_remark) say what the pairing left out. */
pp_table *pp_results_zones(pp_doc *d, const pp_zone_figures *z, size_t n,
                           const pp_zone_whys *why);

/* The gpu_zones table: device time of GPU zones (no self time, no share
 * of the wall: their columns are not in it). */
pp_table *pp_results_gpu_zones(pp_doc *d, const pp_zone_figures *z,
                               size_t n);

/* The top_self table: the first top of z by self time (ties: the order
 * given), each with its share of the summed self time of all n. None when
 * no zone has a self time. */
pp_table *pp_results_top_self(pp_doc *d, const pp_zone_figures *z, size_t n,
                              size_t top);

#endif /* PP_RESULTS_ZONES_H */
