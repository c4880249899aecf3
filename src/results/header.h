/* SPDX-License-Identifier: MIT */
/*
 * The results document's "header" facts: what was profiled and how (the
 * command or process, the profiler, the mode, where an imported profile
 * came from, the wall time, the threads, processes, events and dropped
 * events). Filled by the analysis (analyze/doc_header.c, which adds the
 * trace's warnings) and by the live endpoint (http/api.c); the text
 * report lays it out flush left as its first lines, the summary JSON and
 * /api/v1 as the member "header", the page as the grid under its title.
 */
#ifndef PP_RESULTS_HEADER_H
#define PP_RESULTS_HEADER_H

#include <stddef.h>
#include <stdint.h>

#include "doc.h"

typedef struct pp_header_merged {
  const char *file, *source, *aligned_by;
} pp_header_merged;

typedef struct pp_header_figures {
  /* `pipeprof run`: the command and its pid; pipeprof as the profiler */
  const char *command; /* NULL: not a run */
  int has_pid, has_profiler_pid;
  uint32_t pid, profiler_pid;
  size_t tree_procs;          /* processes the sampler saw (a run) */
  const char *tree_why;       /* none seen: why, or NULL ("not sampled") */
  /* otherwise the process that recorded */
  const char *process_name; /* NULL or "": unknown */
  const char *process_pid;  /* as recorded (text), or NULL */
  const char *mode;         /* NULL: unknown */
  const char *imported_from;
  const pp_header_merged *merged;
  size_t nmerged;
  int64_t provider_transitions; /* < 0: none */
  int64_t provider_copies, provider_copy_ns;
  double wall_ns;
  int threads_known;
  size_t threads;
  const char *processes_label; /* "recorded by" or "processes"; NULL: none */
  size_t processes;
  const char *processes_list; /* "4242 synthetic, 4243 worker" */
  int events_known;
  uint64_t events;
  const char *events_why; /* !events_known: why */
  uint64_t dropped;
} pp_header_figures;

/* The facts "header" of d from f; NULL when out of memory. */
pp_table *pp_results_header(pp_doc *d, const pp_header_figures *f);

#endif /* PP_RESULTS_HEADER_H */
