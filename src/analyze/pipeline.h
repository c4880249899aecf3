/* SPDX-License-Identifier: MIT */
/*
 * The parts of pp_analyze_pipeline() (analysis.h), one file each: queue
 * statistics and stall periods (queues.c), stages, the bounding stage,
 * efficiency and flow critical paths (bottleneck.c), recommendations
 * (advice.c). Each fills its part of a->prof.pipe and returns 0, or -1
 * when out of memory (the caller then frees the whole pipe). They run in
 * that order: each may read what the previous ones filled.
 */
#ifndef PP_PIPELINE_H
#define PP_PIPELINE_H

#include "../internal.h" /* pp__span, pp__add_sat */
#include "analysis.h"

int pp__queues_analyze(pp_analysis *a);

/* Queues as a stream (queues.c; docs/internals/streaming.md): feed it every
 * event (pp__queue_stream_event is a pp_feed_fn; other types are skipped)
 * in the order of model/feed.h, then finish fills out->queues, nqueues,
 * stalls, nstalls and stall_periods (out's queues must be empty: a cleared
 * pipe); t is the model as read by then (queue sites and their names,
 * which the stats point into). t_end is the trace's end, unused today (a
 * queue's window ends at its own last event). The stream keeps at most
 * max_open_items pushes waiting for their pop (48 bytes each, the table
 * at most 3/4 full); pushes past it are counted in items_untracked.
 * Memory otherwise: a fixed record per queue and an open-wait slot per
 * thread and kind. new returns NULL, event and finish -1, when out of
 * memory; free accepts NULL. */
#define PP_QUEUE_ITEMS_MAX_OPEN ((size_t)1 << 18)
typedef struct pp_queue_stream pp_queue_stream;
pp_queue_stream *pp__queue_stream_new(size_t max_open_items);
int pp__queue_stream_event(void *arg, const pp_trace *t, uint32_t thread,
                           const pp_event *e);
int pp__queue_stream_finish(pp_queue_stream *s, const pp_trace *t,
                            int64_t t_end, pp_pipeline *out);
void pp__queue_stream_free(pp_queue_stream *s);
/* Pushes waiting for their pop now, and the most at any time. */
size_t pp__queue_stream_items_kept(const pp_queue_stream *s);
size_t pp__queue_stream_items_high(const pp_queue_stream *s);
int pp__stages_analyze(pp_analysis *a);
int pp__flows_analyze(pp_analysis *a);
int pp__advice_build(pp_analysis *a);

/* Offer a stall period to the list of the longest (pipe.stalls). */
void pp__stall_offer(pp_pipeline *p, uint32_t queue, int full, int recorded,
                     int64_t start, int64_t end);

/* Index of the stage / queue of that name, -1 when none. */
int pp__stage_find(const pp_pipeline *p, const char *name);
int pp__queue_between(const pp_pipeline *p, const char *from,
                      const char *to);

#endif /* PP_PIPELINE_H */
