/* SPDX-License-Identifier: MIT */
/*
 * The "stages" table of the results document (doc.h): per pipeline stage
 * (a name a queue gives as its producer or consumer), its workers, items,
 * busy time and share, time per item and capacity, its queues, and
 * whether it bounds the pipeline. Filled by the analysis
 * (analyze/document.c); the text report, the summary JSON
 * (pipeline.stages) and the HTML page lay it out.
 */
#ifndef PP_RESULTS_STAGES_H
#define PP_RESULTS_STAGES_H

#include <stddef.h>
#include <stdint.h>

#include "doc.h"

typedef struct pp_stage_figures {
  const char *name;
  uint32_t workers;
  uint64_t items, calls;
  int64_t busy_ns;
  double util_pct, max_thread_util_pct; /* NAN without items */
  double service_ns, capacity_per_s;    /* NAN without items */
  const char *in_queue, *out_queue;     /* NULL: none */
  int bound;                            /* the stage of lowest capacity */
} pp_stage_figures;

pp_table *pp_results_stages(pp_doc *d, const pp_stage_figures *s, size_t n);

/* The pipeline's facts (the table "pipeline_facts", the summary's
 * pipeline.bound, ...): the bounding stage, its capacity, the throughput
 * achieved, the efficiency, the window and the stall periods. */
typedef struct pp_pipeline_figures {
  const char *bound;      /* NULL: unavailable, bound_why says why */
  const char *bound_why;
  int bound_saturated;    /* busy at least 90% of the window */
  double bound_per_s;     /* the bound's capacity */
  double achieved_per_s;  /* items out of the last stages / window */
  double efficiency;      /* achieved / bound_per_s; < 0: no items left */
  int64_t window_ns;
  uint64_t stall_periods;
} pp_pipeline_figures;

pp_table *pp_results_pipeline_facts(pp_doc *d, const pp_pipeline_figures *f);

#endif /* PP_RESULTS_STAGES_H */
