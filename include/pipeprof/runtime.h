/* SPDX-License-Identifier: MIT */
/*
 * The pipeline runtime (docs/runtime.md): building blocks for inference
 * pipelines that record themselves through the profiler's APIs, so that
 * `pipeprof report` analyses a pipeline built on them with no code from
 * the user. Part of libpipeprof; C11 and pthreads only.
 *
 * This part: the bounded multi-producer multi-consumer queue.
 */
#ifndef PIPEPROF_RUNTIME_H
#define PIPEPROF_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "../pipeprof.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Bounded MPMC queue                                                        */
/* ------------------------------------------------------------------------ */

/**
 * A bounded queue of pointers for any number of producer and consumer
 * threads: a ring of capacity slots (rounded up to a power of two), each
 * with a sequence number, claimed with one compare-and-swap per push or
 * pop; no lock on the way when the queue is neither full nor empty.
 * Blocked producers and consumers sleep on a futex and are woken by the
 * pop or push that lets them on (backpressure: a full queue holds its
 * producers).
 *
 * Recorded through the queue API of pipeprof.h: the queue is declared
 * with pp_queue_declare(name, from_stage, to_stage, capacity), every push
 * and pop records the item (pp_queue_push/pop with the item id given) and
 * every blocking wait records pp_queue_wait_begin/end, so a report shows
 * the queue's depth, item waits, time full and empty, and the stage that
 * bounds the pipeline.
 */
typedef struct pp_rt_queue pp_rt_queue;

/** A new queue of at least capacity items (1 .. 2^30; rounded up to a
 * power of two), named for the report (copied; NULL: "queue"). from_stage
 * and to_stage may be NULL. NULL when out of memory or capacity is out of
 * range. */
PP_API pp_rt_queue *pp_rt_queue_new(const char *name, const char *from_stage,
                                    const char *to_stage, size_t capacity);
/** Free a queue no thread uses any more (items still in it are the
 * caller's to have drained). NULL is fine. */
PP_API void pp_rt_queue_free(pp_rt_queue *q);

/**
 * Put item (any pointer; id: the item's id for the report, e.g. a frame
 * number) into the queue. timeout_ns 0: do not wait; negative: wait as
 * long as it takes; else wait at most that long for room. Returns PP_OK;
 * PP_EAGAIN (full, timeout_ns 0); PP_ETIMEDOUT; PP_ECLOSED once the queue
 * is closed (also for a producer waiting when it closes). Any thread.
 */
PP_API int pp_rt_queue_push(pp_rt_queue *q, void *item, uint64_t id,
                            int64_t timeout_ns);
/**
 * Take the oldest item (FIFO among completed pushes) into *item and its id
 * into *id (either may be NULL). timeout_ns as for push. Returns PP_OK;
 * PP_EAGAIN (empty, timeout_ns 0); PP_ETIMEDOUT; PP_ECLOSED when the queue
 * is closed and empty: items pushed before the close are still taken.
 */
PP_API int pp_rt_queue_pop(pp_rt_queue *q, void **item, uint64_t *id,
                           int64_t timeout_ns);
/** Close the queue: no push succeeds from now on, waiting producers get
 * PP_ECLOSED, consumers drain what is left and then get PP_ECLOSED.
 * Idempotent. Any thread. */
PP_API void pp_rt_queue_close(pp_rt_queue *q);
/** Items in the queue now (a snapshot); 0 for NULL. */
PP_API size_t pp_rt_queue_depth(const pp_rt_queue *q);
/** The queue's capacity (after rounding). */
PP_API size_t pp_rt_queue_capacity(const pp_rt_queue *q);

#ifdef __cplusplus
}
#endif

#endif /* PIPEPROF_RUNTIME_H */
