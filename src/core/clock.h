/* SPDX-License-Identifier: MIT */
/*
 * Timestamps for the recording hot path. When the CPU has an invariant TSC
 * the hot path reads it with a bare rdtsc (about 12 ns here); otherwise it
 * falls back to CLOCK_MONOTONIC in nanoseconds. Ticks are converted to
 * nanoseconds off the hot path from synchronisation points (tick,
 * monotonic ns, realtime ns) that the writer records in the trace.
 */
#ifndef PP_CLOCK_H
#define PP_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "../internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define PP__HAVE_RDTSC 1
#endif

/* 1 when ticks are TSC cycles, 0 when they are CLOCK_MONOTONIC ns. Set once
 * by pp__clock_init() before any event is recorded. */
extern int pp__tick_is_tsc;

static inline uint64_t pp__ticks(void) {
#ifdef PP__HAVE_RDTSC
  if (__builtin_expect(pp__tick_is_tsc, 1))
    return __rdtsc();
#endif
  return (uint64_t)pp__mono_ns();
}

/* One synchronisation point. */
typedef struct pp__clock_sync {
  uint64_t tick;
  int64_t mono_ns, real_ns;
} pp__clock_sync;

/* Decide the tick source (honours PIPEPROF_CLOCK=tsc|monotonic when valid).
 * Idempotent. */
void pp__clock_init(void);
/* Take a synchronisation point as tightly as the clocks allow. */
void pp__clock_sync_now(pp__clock_sync *s);
/* "tsc" or "monotonic". */
const char *pp__clock_source(void);
/* Ticks per ns between two sync points (1.0 for the monotonic source). */
double pp__clock_rate(const pp__clock_sync *a, const pp__clock_sync *b);

#endif /* PP_CLOCK_H */
