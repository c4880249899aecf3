/* SPDX-License-Identifier: MIT */
/*
 * A queue's depth over time (docs/internals/analysis.md, "queues"): its
 * range, time-weighted mean and the time it spent full and empty, from
 * the depth each push and pop left. One computation for the analysis of
 * a trace (analyze/queues.c) and the live board (sink/board.c), so a
 * queue's "full 16.8%" is the same figure in the report and on the live
 * page. Plain data, no allocation; the caller owns the locking.
 */
#ifndef PP_STATS_DEPTH_H
#define PP_STATS_DEPTH_H

#include <stdint.h>

typedef struct pp_depth {
  int64_t capacity;        /* full at capacity and above; 0: never full */
  uint64_t steps;          /* depths seen */
  int64_t t_first, t_last; /* the earliest and latest step */
  int64_t at, depth;       /* the last step: its depth holds from at on */
  int64_t min, max;
  double weighted;          /* depth x ns, over the window */
  int64_t full_ns, empty_ns; /* time at depth >= capacity, at depth <= 0 */
} pp_depth;

/* An empty record of a queue of that capacity (0 or less: unbounded). */
pp_depth pp_depth_make(int64_t capacity);
/* The queue holds d items from ts on (the time the previous depth held
 * counts up to ts; steps out of time order count no time). */
void pp_depth_step(pp_depth *q, int64_t ts, int64_t d);
/* The window: first to last step, ns (0 before two steps apart). */
int64_t pp_depth_window_ns(const pp_depth *q);
/* Time-weighted mean over the window; the depth itself when the window
 * is empty. */
double pp_depth_mean(const pp_depth *q);
/* Shares of the window in percent: NAN when the window is empty, and
 * full's also when the queue is unbounded. */
double pp_depth_full_pct(const pp_depth *q);
/* The share of the window the threads of one side spent waiting: waited
 * (their summed wait time) / (window x waiters) x 100, waiters at least
 * 1; NAN without a wait or a window. The analysis and the live figures
 * both. */
double pp_depth_wait_pct(const pp_depth *q, double waited_ns, uint64_t waits,
                         uint32_t waiters);
double pp_depth_empty_pct(const pp_depth *q);

#endif /* PP_STATS_DEPTH_H */
