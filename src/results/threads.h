/* SPDX-License-Identifier: MIT */
/*
 * The "threads" table of the results document (doc.h): per recorded
 * thread, its label, ids, busy time (inside top-level zones), zones,
 * events and drops. The profiler's own threads (a `pipeprof run`'s
 * sampler and writer) are rows of the JSON document flagged "profiler",
 * left out of the tables the views show (PP_COL_HIDES_ROW).
 */
#ifndef PP_RESULTS_THREADS_H
#define PP_RESULTS_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include "doc.h"

typedef struct pp_thread_row {
  const char *name; /* as the thread named itself; NULL or "": none */
  uint64_t tid, pid;
  double busy_ns;  /* NAN: not measured */
  double busy_pct; /* of the wall time; NAN: no wall time */
  uint64_t zones, events, dropped;
  int profiler; /* pipeprof's own thread, not the program's */
} pp_thread_row;

/* The threads table; empty says what the views print when no thread of
 * the program is in it (NULL: "no threads recorded"). */
pp_table *pp_results_threads(pp_doc *d, const pp_thread_row *t, size_t n,
                             const char *empty);

#endif /* PP_RESULTS_THREADS_H */
