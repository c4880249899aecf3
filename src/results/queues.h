/* SPDX-License-Identifier: MIT */
/*
 * The "queues" table of the results document (doc.h): one definition of
 * what a bounded or unbounded queue's row says, filled by the analysis of
 * a trace (analyze/queues.c) and by the live endpoint (http/api.c) from
 * the same figures, so that the report, the summary JSON, the HTML page
 * and the live page show one queue the same way.
 */
#ifndef PP_RESULTS_QUEUES_H
#define PP_RESULTS_QUEUES_H

#include <stdint.h>

#include "../stats/depth.h"
#include "doc.h"

/* A queue's figures, whoever measured them. NAN (doubles) or a negative
 * count where a producer has no such figure: the cell is then left
 * empty, or says why when why_* is set. */
typedef struct pp_queue_figures {
  const char *name, *from, *to; /* from, to: "" when not declared */
  const pp_depth *depth; /* capacity, window, depth, full/empty time */
  int64_t pushes, pops;
  int64_t paired, unmatched_pops, items_untracked; /* < 0: not kept */
  int64_t producer_waits, consumer_waits;          /* recorded waits */
  double producer_blocked_ns, consumer_waited_ns;  /* their summed time */
  double producer_blocked_pct, consumer_waiting_pct; /* the waiters' mean
                                                        share of the
                                                        window */
  uint32_t producer_waiters, consumer_waiters;
  int64_t waits_unclosed; /* < 0: not kept */
  double wait_p50_ns, wait_p99_ns, wait_max_ns; /* push to pop per item */
  const char *why_blocked; /* why the blocked times are not known (NULL:
                              they are, or no wait was recorded) */
} pp_queue_figures;

/* The queues table (id "queues") with a row per queue, or NULL when out
 * of memory. */
pp_table *pp_results_queues(pp_doc *d, const pp_queue_figures *q, size_t n);

#endif /* PP_RESULTS_QUEUES_H */
