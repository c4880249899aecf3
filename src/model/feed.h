/* SPDX-License-Identifier: MIT */
/*
 * Events of several threads in one time order, for the analyses that pair
 * or sequence events across threads (requests, queues, frames, ranges):
 * the contract every such streaming analysis is fed by, from a model held
 * in memory (pp_feed_in_time_order, an exact merge) or from the trace
 * reader streaming a file (pp_order, a bounded reorder buffer).
 *
 * The order: non-decreasing time across threads; within a thread, always
 * recording order (a thread whose clock went backwards is never reordered:
 * its events come as recorded, so the merged stream may step back in time
 * there); at equal times the lower thread index first.
 */
#ifndef PP_MODEL_FEED_H
#define PP_MODEL_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* A bit set of event types (enum ppt_event_type): 1u << type each. */
#define PP_FEED_TYPE(type) (UINT32_C(1) << (type))
#define PP_FEED_ALL UINT32_MAX

/* Consumers are pp_feed_fn (model/model.h). */

/* Every stored event of t whose type is in `types` and whose loc is
 * defined, in the order above. Returns 0 after the last event, fn's
 * non-zero value when fn stopped it, or -1 when out of memory (nothing
 * was fed). */
int pp_feed_in_time_order(const pp_trace *t, uint32_t types, pp_feed_fn fn,
                          void *arg);
/* The same for threads first.. of t only (their indices as in t). */
int pp_feed_threads_in_time_order(const pp_trace *t, size_t first,
                                  uint32_t types, pp_feed_fn fn, void *arg);

/* The reorder buffer of a streaming read: events put in per-thread
 * recording order (threads interleaved in any way) come out to fn in the
 * order above, as far as a buffer of `cap` events allows: when it is
 * full, the earliest waiting event is handed over, and an event put
 * later with an earlier time than one already handed over is handed over
 * at once and counted late (pp_order_late). Memory: at most cap events. */
typedef struct pp_order pp_order;

pp_order *pp_order_new(size_t cap, pp_feed_fn fn, void *arg);
/* Queue e (copied) of thread `thread`. Returns 0, fn's non-zero value, or
 * -1 when out of memory. */
int pp_order_put(pp_order *o, const pp_trace *t, uint32_t thread,
                 const pp_event *e);
/* The caller knows that no event put from now on is earlier than
 * `before`: hand over the waiting events that come before any such
 * event, in the order above (those earlier than `before`), so that the
 * buffer holds only what may still be overtaken. Returns 0, fn's value or
 * -1. */
int pp_order_release(pp_order *o, const pp_trace *t, int64_t before);
/* Hand over everything still waiting, and start a new sequence: events put
 * afterwards are ordered among themselves, none of them late for being
 * earlier than what was handed over before (the next file of a run
 * directory starts again at its own first event). Returns 0, fn's value
 * or -1. */
int pp_order_flush(pp_order *o, const pp_trace *t);
/* Forget everything still waiting, handing nothing over (the input they
 * came from failed), and start a new sequence. */
void pp_order_drop(pp_order *o);
/* Events handed over out of order because the buffer was full. */
uint64_t pp_order_late(const pp_order *o);
void pp_order_free(pp_order *o);

#endif /* PP_MODEL_FEED_H */
