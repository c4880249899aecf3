/* SPDX-License-Identifier: MIT */
/*
 * The parts of pp_analyze_pipeline() (model.h), one file each: queue
 * statistics and stall periods (queues.c), stages, the bounding stage,
 * efficiency and flow critical paths (bottleneck.c), recommendations
 * (advice.c). Each fills its part of t->prof.pipe and returns 0, or -1
 * when out of memory (the caller then frees the whole pipe). They run in
 * that order: each may read what the previous ones filled.
 */
#ifndef PP_PIPELINE_H
#define PP_PIPELINE_H

#include "../internal.h" /* pp__span, pp__add_sat */
#include "model.h"

int pp__queues_analyze(pp_trace *t);
int pp__stages_analyze(pp_trace *t);
int pp__flows_analyze(pp_trace *t);
int pp__advice_build(pp_trace *t);

/* Offer a stall period to the list of the longest (pipe.stalls). */
void pp__stall_offer(pp_pipeline *p, uint32_t queue, int full, int recorded,
                     int64_t start, int64_t end);

/* Index of the stage / queue of that name, -1 when none. */
int pp__stage_find(const pp_pipeline *p, const char *name);
int pp__queue_between(const pp_pipeline *p, const char *from,
                      const char *to);

#endif /* PP_PIPELINE_H */
