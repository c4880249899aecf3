/* SPDX-License-Identifier: MIT */
/*
 * Tick source selection and clock synchronisation points. The TSC is used
 * only when CPUID reports it invariant (constant rate, running in every
 * C-state), as Tracy and the kernel do; then rdtsc is monotonic across
 * cores on the machines we target. Otherwise ticks are CLOCK_MONOTONIC ns.
 */
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "clock.h"
#include "options.h"

int pp__tick_is_tsc = 0;
static int clock_ready = 0;

void pp__clock_init(void) {
  if (clock_ready)
    return;
  const char *e = getenv("PIPEPROF_CLOCK");
  int tsc = pp__cpu_has(PP_CPU_INVARIANT_TSC);
  uint64_t which = 0; /* the options' words: tsc, monotonic */
  char want[160];
  if (e && pp__option_check(pp__option("PIPEPROF_CLOCK"), e, &which, want,
                            sizeof want) == 0 &&
      which == 1)
    tsc = 0;
  pp__tick_is_tsc = tsc;
  clock_ready = 1;
}

const char *pp__clock_source(void) {
  return pp__tick_is_tsc ? "tsc" : "monotonic";
}

void pp__clock_sync_now(pp__clock_sync *s) {
  /* Bracket the clock_gettime call between two tick reads and keep the
   * tightest of a few tries; the tick is the midpoint of the bracket. */
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 5; i++) {
    uint64_t t0 = pp__ticks();
    int64_t mono = pp__mono_ns();
    uint64_t t1 = pp__ticks();
    if (t1 - t0 < best) {
      best = t1 - t0;
      s->tick = t0 + (t1 - t0) / 2;
      s->mono_ns = mono;
    }
  }
  s->real_ns = pp__real_ns();
  /* Express realtime at the same instant as mono. */
  s->real_ns -= pp__mono_ns() - s->mono_ns;
}

double pp__clock_rate(const pp__clock_sync *a, const pp__clock_sync *b) {
  if (!pp__tick_is_tsc || b->mono_ns <= a->mono_ns || b->tick <= a->tick)
    return 1.0;
  return (double)(b->tick - a->tick) / (double)(b->mono_ns - a->mono_ns);
}
