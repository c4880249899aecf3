/* SPDX-License-Identifier: MIT */
/*
 * The "stalls" table of the results document (doc.h): the pipeline's
 * longest stall periods, longest first: a queue full (its producer
 * blocked) or empty (its consumer starved), when and for how long, and
 * whether recorded waits or the queue's depth show it. Filled by the
 * analysis (analyze/document.c); the text report, the summary JSON
 * (pipeline.longest_stalls) and the HTML page lay it out.
 */
#ifndef PP_RESULTS_STALLS_H
#define PP_RESULTS_STALLS_H

#include <stddef.h>
#include <stdint.h>

#include "doc.h"

typedef struct pp_stall_figures {
  const char *queue;
  const char *stage; /* the stage held up: the producer of a full queue,
                        the consumer of an empty one ("" unknown) */
  int full;
  int recorded;           /* from recorded waits, else from the depth */
  int64_t start_ns, end_ns; /* on the trace's clock */
  int64_t at_ns;            /* start - the trace's start */
} pp_stall_figures;

/* periods: stall periods found in all (the table lists n of them). */
pp_table *pp_results_stalls(pp_doc *d, const pp_stall_figures *s, size_t n,
                            uint64_t periods);

#endif /* PP_RESULTS_STALLS_H */
