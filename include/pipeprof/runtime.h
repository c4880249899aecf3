/* SPDX-License-Identifier: MIT */
/*
 * The pipeline runtime (docs/runtime.md): building blocks for inference
 * pipelines that record themselves through the profiler's APIs, so that
 * `pipeprof report` analyses a pipeline built on them with no code from
 * the user. Part of libpipeprof; C11 and pthreads only.
 *
 * This part: the bounded multi-producer multi-consumer queue and
 * pipelines of stages on it.
 */
#ifndef PIPEPROF_RUNTIME_H
#define PIPEPROF_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "../pipeprof.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Why the calling thread's last runtime constructor returned NULL, when
 * the reason is not an argument or memory (e.g. "pool x: cudaMalloc
 * failed: ..."); "" when none. Thread-local, static storage. */
PP_API const char *pp_rt_error(void);

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

/* ------------------------------------------------------------------------ */
/* Pipelines of stages                                                       */
/* ------------------------------------------------------------------------ */

/**
 * A pipeline: stages in a line, each with its worker threads, joined by
 * bounded queues (the queue above). An item submitted goes through every
 * stage in order; a stage's function turns it into the item for the next
 * stage.
 *
 * Recorded with no code from the user: each worker thread is named
 * "<stage> <n>"; each call of a stage's function is a zone named exactly
 * like the stage (so the report's pipeline analysis sees the stage busy);
 * the queue into stage S is named "<S> in" with the stages on each side;
 * each item is a flow named like the pipeline, from submit to the last
 * stage, by its id.
 */
typedef struct pp_rt_pipeline pp_rt_pipeline;

/**
 * A stage's work on one item: return PP_OK with *out the item for the next
 * stage (the last stage's *out goes to the output queue when there is one,
 * else it is dropped; NULL drops it: a filter); any other value fails the
 * pipeline (see pp_rt_pipeline_drain). Called on the stage's threads, for
 * one item at a time per thread.
 */
typedef int (*pp_rt_stage_fn)(void *ctx, void *item, uint64_t id, void **out);
/** Called for each item a cancelled or failed pipeline drops (on the
 * thread that drops it). */
typedef void (*pp_rt_drop_fn)(void *ctx, void *item, uint64_t id);

/** A pipeline named name (copied; the flow name of its items). drop may
 * be NULL. NULL when out of memory. */
PP_API pp_rt_pipeline *pp_rt_pipeline_new(const char *name, pp_rt_drop_fn drop,
                                          void *drop_ctx);
/** Name, for the report, the stage that submits items (default "submit":
 * the queue into the first stage comes from it) and the one that takes
 * them from the output queue (default "take"); NULL or "" keeps a
 * default. Before the first stage: PP_OK, PP_EBUSY after, PP_EINVAL. */
PP_API int pp_rt_pipeline_ends(pp_rt_pipeline *p, const char *source,
                               const char *sink);
/**
 * Add a stage after the others (at most 64): workers threads (1..256)
 * running fn, fed by a queue of queue_capacity items (as
 * pp_rt_queue_new). Before start only. PP_OK, PP_EINVAL, PP_EBUSY
 * (started), PP_ENOMEM.
 */
PP_API int pp_rt_stage_add(pp_rt_pipeline *p, const char *name, int workers,
                           size_t queue_capacity, pp_rt_stage_fn fn, void *ctx);
/** Give the pipeline an output queue of capacity items after its last
 * stage (before start). */
PP_API int pp_rt_pipeline_output(pp_rt_pipeline *p, size_t capacity);
/** Send what the last stage gives into a batcher's lane instead of an
 * output queue (before start; not with pp_rt_pipeline_output): the put
 * waits for room outside the stage's zone, so the stage's time stays its
 * own work. The pipeline never closes the batcher (it may have other
 * producers): close it after pp_rt_pipeline_drain; its consumer must keep
 * taking until then. PP_OK, PP_EBUSY, PP_EINVAL. */
typedef struct pp_rt_batcher pp_rt_batcher;
PP_API int pp_rt_pipeline_to_batcher(pp_rt_pipeline *p, pp_rt_batcher *b,
                                     int lane);
/** Start every stage's threads. PP_OK, PP_EINVAL (no stage), PP_EBUSY,
 * PP_ENOMEM. */
PP_API int pp_rt_pipeline_start(pp_rt_pipeline *p);
/** Put an item into the first stage's queue (timeout_ns as for the
 * queue): PP_OK, PP_EAGAIN, PP_ETIMEDOUT, PP_ECLOSED (draining, cancelled
 * or failed). */
PP_API int pp_rt_pipeline_submit(pp_rt_pipeline *p, void *item, uint64_t id,
                                 int64_t timeout_ns);
/** Take an item from the output queue: as pp_rt_queue_pop; PP_EINVAL
 * without an output queue. */
PP_API int pp_rt_pipeline_take(pp_rt_pipeline *p, void **item, uint64_t *id,
                               int64_t timeout_ns);
/**
 * No more submits: every item already in finishes, stage by stage, then
 * the threads end (the output queue, if any, is closed after its last
 * item: take until PP_ECLOSED, from another thread while this waits, or
 * give it room). Returns PP_OK, or the first error a stage returned (the
 * pipeline then dropped what was in flight). Blocks.
 */
PP_API int pp_rt_pipeline_drain(pp_rt_pipeline *p);
/** Stop as soon as possible: no more submits, items not yet started are
 * dropped (pp_rt_drop_fn), the calls running finish. Any thread; returns
 * at once (pp_rt_pipeline_drain or _free wait for the threads). */
PP_API void pp_rt_pipeline_cancel(pp_rt_pipeline *p);

/** What a pipeline did: items submitted, finished by the last stage,
 * dropped (cancel, failure or a NULL *out), and its first error. */
typedef struct pp_rt_stats {
  uint64_t submitted, completed, dropped, filtered;
  int error;            /* PP_OK or the first stage's error */
  char error_stage[64]; /* the stage that returned it */
  uint64_t error_item;  /* the item's id */
} pp_rt_stats;
PP_API void pp_rt_pipeline_stats(pp_rt_pipeline *p, pp_rt_stats *out);
/** Cancel if running, wait for the threads, free. NULL is fine. */
PP_API void pp_rt_pipeline_free(pp_rt_pipeline *p);

/* ------------------------------------------------------------------------ */
/* Dynamic batcher                                                          */
/* ------------------------------------------------------------------------ */

/**
 * Items put by any threads, handed out in batches: a batch goes as soon as
 * it holds max_batch items, or when its oldest item has waited its lane's
 * max delay, whichever comes first. Lanes are priorities: lane 0 first,
 * then 1, ...; a batch takes the items of lower lanes first, and a lane
 * with a short delay makes a batch go early (a low-latency lane overtakes
 * the others). A full lane holds its producers (backpressure).
 *
 * Recorded: the batcher is a queue named name (each item's wait, push to
 * pop, by its id), each batch a pp_batch(size, padded size), and the time
 * a consumer waits for a batch to form a zone named "<name> form".
 */

/** Padding of a batch: none (ragged), to max_batch, or to the next power
 * of two (the sizes a compiled model may accept). */
typedef enum pp_rt_pad {
  PP_RT_PAD_NONE = 0,
  PP_RT_PAD_MAX = 1,
  PP_RT_PAD_POW2 = 2
} pp_rt_pad;

/** A batcher of batches of at most max_batch (1..65536) items, lanes
 * lanes (1..16) of lane_capacity items each, every lane's max delay
 * max_delay_ns (>= 0; 0: a batch goes with whatever is there). NULL when
 * out of memory or an argument is out of range. */
PP_API pp_rt_batcher *pp_rt_batcher_new(const char *name, size_t max_batch,
                                        int64_t max_delay_ns, int lanes,
                                        size_t lane_capacity, pp_rt_pad pad);
/** Name the stages on each side of the batcher for the report's pipeline
 * analysis (the stage that puts and the stage that takes batches; either
 * may be NULL), before the first put: PP_OK, PP_EBUSY after it (the queue
 * is declared by then), PP_EINVAL. The batcher's queue is declared to the
 * profiler at this call or at the first put; a queue of the same name
 * declared before keeps its stages. */
PP_API int pp_rt_batcher_stages(pp_rt_batcher *b, const char *from_stage,
                                const char *to_stage);
/** Set one lane's max delay (before items flow). PP_OK or PP_EINVAL. */
PP_API int pp_rt_batcher_lane_delay(pp_rt_batcher *b, int lane,
                                    int64_t max_delay_ns);
/** Put an item into lane (0 .. lanes - 1); timeout_ns as for the queue.
 * PP_OK, PP_EAGAIN, PP_ETIMEDOUT, PP_ECLOSED, PP_EINVAL. */
PP_API int pp_rt_batcher_put(pp_rt_batcher *b, void *item, uint64_t id,
                             int lane, int64_t timeout_ns);

/** One batch: the caller gives arrays of max_batch entries. */
typedef struct pp_rt_batch {
  void **items;      /* in: room for max_batch; out: the items */
  uint64_t *ids;     /* in: room for max_batch (or NULL); out: their ids */
  size_t n;          /* out: items */
  size_t padded;     /* out: the size after padding (>= n) */
  int64_t waited_ns; /* out: how long its oldest item waited */
  int full;          /* out: 1 when it went for reaching max_batch, 0 for
                        a delay or the close */
} pp_rt_batch;

/**
 * Wait for the next batch (timeout_ns as for the queue: it bounds the wait
 * for a batch to be due). PP_OK with out filled; PP_EAGAIN (none due,
 * timeout_ns 0), PP_ETIMEDOUT; PP_ECLOSED once closed and empty (a close
 * hands out what is left first, without waiting for delays).
 */
PP_API int pp_rt_batcher_next(pp_rt_batcher *b, pp_rt_batch *out,
                              int64_t timeout_ns);
/** Change the batch size from now on (1 .. the max_batch given to
 * pp_rt_batcher_new): for an adaptive sizer. PP_OK or PP_EINVAL. */
PP_API int pp_rt_batcher_set_max(pp_rt_batcher *b, size_t max_batch);
/** No more puts; waiting producers get PP_ECLOSED. */
PP_API void pp_rt_batcher_close(pp_rt_batcher *b);
PP_API void pp_rt_batcher_free(pp_rt_batcher *b);

/* ------------------------------------------------------------------------ */
/* Memory pools                                                              */
/* ------------------------------------------------------------------------ */

/**
 * A pool of fixed-size blocks taken from one allocation: pageable host
 * memory, page-locked (pinned) host memory for fast copies to a GPU, or
 * device memory. Pinned and device memory come from the CUDA runtime
 * (libcudart, loaded at run time: PIPEPROF_LIBCUDART names it; nothing is
 * linked). An empty pool holds the threads asking for a block until one
 * is released (backpressure), never fails a program by surprise.
 *
 * Recorded as a memory pool (pp_mem_*: the pool's reservation, each block
 * taken and returned), so the report gives its high watermark, steady
 * level and unused reserved bytes; host and pinned pools as device
 * PP_MEM_HOST.
 */
typedef struct pp_rt_pool pp_rt_pool;

typedef enum pp_rt_mem {
  PP_RT_MEM_HOST = 0,   /**< malloc'd (pageable) host memory */
  PP_RT_MEM_PINNED = 1, /**< cudaHostAlloc'd host memory; pageable host
                             memory (and the reason in pp_rt_pool_info)
                             when the CUDA runtime cannot give it */
  PP_RT_MEM_DEVICE = 2  /**< cudaMalloc'd memory of a device */
} pp_rt_mem;

/** A pool of blocks blocks of block_size bytes (each aligned to 256
 * bytes), named name (copied) for the report; device: the CUDA device of
 * a device pool (else ignored). NULL when the memory cannot be had (a
 * device pool without a CUDA device: pp_rt_error() says why) or an
 * argument is out of range. */
PP_API pp_rt_pool *pp_rt_pool_new(const char *name, pp_rt_mem kind, int device,
                                  size_t block_size, size_t blocks);
/** Take a block into *block (timeout_ns as for the queue): PP_OK;
 * PP_EAGAIN (none free, timeout_ns 0); PP_ETIMEDOUT. */
PP_API int pp_rt_pool_get(pp_rt_pool *p, void **block, int64_t timeout_ns);
/** Return a block taken from this pool. */
PP_API void pp_rt_pool_put(pp_rt_pool *p, void *block);

/** A pool's state. */
typedef struct pp_rt_pool_info {
  pp_rt_mem kind; /**< what the blocks are (PINNED may have become
                       HOST: see reason) */
  size_t block_size, blocks;
  size_t in_use, high_water; /**< blocks */
  uint64_t gets, waits;      /**< gets, and those that found the pool empty */
  char reason[160];          /**< why the kind differs from the one asked,
                                  else "" */
} pp_rt_pool_info;
PP_API void pp_rt_pool_info_get(pp_rt_pool *p, pp_rt_pool_info *out);
/** Free the pool (every block back first). */
PP_API void pp_rt_pool_free(pp_rt_pool *p);

/* ------------------------------------------------------------------------ */
/* Adaptive batch sizer                                                      */
/* ------------------------------------------------------------------------ */

/**
 * Chooses the batch size that holds a latency objective: after every
 * window of observed batches it takes the window's p99 latency; above the
 * objective it halves the size (multiplicative decrease), below 80% of it
 * it adds one (additive increase), up to max_batch. Running out of memory
 * at a size halves it and caps every later size below that one.
 *
 * Recorded: counters "<name> batch size" (each change) and "<name> p99"
 * (ns, each window).
 */
typedef struct pp_rt_sizer pp_rt_sizer;

/** A sizer between min_batch and max_batch (1 <= min <= max <= 65536)
 * starting at min_batch, for a p99 objective of slo_p99_ns (> 0), judging
 * every window (1..4096) batches. NULL when out of memory or out of
 * range. */
PP_API pp_rt_sizer *pp_rt_sizer_new(const char *name, size_t min_batch,
                                    size_t max_batch, int64_t slo_p99_ns,
                                    unsigned window);
/** The batch size to use now. */
PP_API size_t pp_rt_sizer_size(pp_rt_sizer *s);
/** One batch ran with latency_ns (what the objective is about: the
 * batch's run, or its items' time end to end). Returns the size to use
 * next. Any thread (a lock inside). */
PP_API size_t pp_rt_sizer_observe(pp_rt_sizer *s, int64_t latency_ns);
/** A batch of the current size ran out of memory: returns the smaller
 * size to use (never above it again). */
PP_API size_t pp_rt_sizer_oom(pp_rt_sizer *s);
PP_API void pp_rt_sizer_free(pp_rt_sizer *s);

#ifdef __cplusplus
}
#endif

#endif /* PIPEPROF_RUNTIME_H */
