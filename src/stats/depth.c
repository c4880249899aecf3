/* SPDX-License-Identifier: MIT */
/*
 * A queue's depth over time (depth.h).
 */
#include "depth.h"

#include <math.h>

#include "../internal.h"

pp_depth pp_depth_make(int64_t capacity) {
  pp_depth q = {0};
  q.capacity = capacity > 0 ? capacity : 0;
  return q;
}

void pp_depth_step(pp_depth *q, int64_t ts, int64_t d) {
  if (!q->steps) {
    q->t_first = q->t_last = ts;
    q->min = q->max = d;
  } else {
    int64_t held = pp__span(q->at, ts);
    q->weighted += (double)q->depth * (double)held;
    if (q->capacity > 0 && q->depth >= q->capacity)
      q->full_ns = pp__add_sat(q->full_ns, held);
    if (q->depth <= 0)
      q->empty_ns = pp__add_sat(q->empty_ns, held);
    if (ts < q->t_first)
      q->t_first = ts;
    if (ts > q->t_last)
      q->t_last = ts;
    if (d < q->min)
      q->min = d;
    if (d > q->max)
      q->max = d;
  }
  q->at = ts;
  q->depth = d;
  q->steps++;
}

int64_t pp_depth_window_ns(const pp_depth *q) {
  return pp__span(q->t_first, q->t_last);
}

double pp_depth_mean(const pp_depth *q) {
  int64_t win = pp_depth_window_ns(q);
  return win > 0 ? q->weighted / (double)win : (double)q->depth;
}

double pp_depth_wait_pct(const pp_depth *q, double waited_ns, uint64_t waits,
                         uint32_t waiters) {
  int64_t win = pp_depth_window_ns(q);
  if (!waits || win <= 0)
    return NAN;
  return waited_ns / (double)win * 100.0 / (waiters > 1 ? waiters : 1);
}

double pp_depth_full_pct(const pp_depth *q) {
  int64_t win = pp_depth_window_ns(q);
  return win > 0 && q->capacity > 0 ? (double)q->full_ns / (double)win * 100.0
                                     : NAN;
}

double pp_depth_empty_pct(const pp_depth *q) {
  int64_t win = pp_depth_window_ns(q);
  return win > 0 ? (double)q->empty_ns / (double)win * 100.0 : NAN;
}
