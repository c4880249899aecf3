/* SPDX-License-Identifier: MIT */
/*
 * Ring slots written by hand, for the tests that hand them to a sink
 * (test-live.c, test-trace-sink.c): an event as the recorder lays it out,
 * its value slot after it for the types that carry one.
 */
#ifndef PP_TESTS_RING_SLOTS_H
#define PP_TESTS_RING_SLOTS_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/recorder.h"
#include "format/pptrace.h"

/* Write an event of type at site loc and time ts at slot *w of ring (size
 * slots, a power of two), and move *w past it. */
static inline void pp_test_ring_put(pp__slot *ring, uint64_t size, uint64_t *w,
                                    unsigned type, const pp_srcloc *loc,
                                    uint64_t ts) {
  pp__slot *q = &ring[*w & (size - 1)];
  atomic_store(&q->ts, ts);
  atomic_store(&q->a, pp__slot_tag(type, loc));
  ++*w;
  if (ppt_has_value(type)) {
    q = &ring[*w & (size - 1)];
    atomic_store(&q->ts, 42);
    atomic_store(&q->a, (uint64_t)PPT_SLOT_CONT << PP__TAG_SHIFT);
    ++*w;
  }
}

#endif /* PP_TESTS_RING_SLOTS_H */
