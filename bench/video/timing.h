/* SPDX-License-Identifier: MIT */
/* The clock and the median the video benchmarks (bench/video/) share. */
#ifndef PP_BENCH_VIDEO_TIMING_H
#define PP_BENCH_VIDEO_TIMING_H

#include <stdlib.h>
#include <time.h>

/* CLOCK_MONOTONIC in seconds. */
static inline double bench_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of v[0..n-1] (sorts v); n >= 1. */
static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
  return v[n / 2];
}

#endif /* PP_BENCH_VIDEO_TIMING_H */
