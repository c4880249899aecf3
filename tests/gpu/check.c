/* SPDX-License-Identifier: MIT */
/*
 * The C half of tests/gpu/gpu_zones.cu: reads the trace the CUDA program
 * wrote and compares pipeprof's GPU zone durations with the reference
 * durations the program measured itself with cudaEventElapsedTime.
 * Compiled by the C compiler (the reader and the model are C).
 */
#include <math.h>
#include <stdio.h>

#include "analyze/analyze.h"
#include "analyze/model.h"
#include "gpu_check.h"

int pp_gpu_check(const char *path, const double *ref_ms, int n,
                 double tolerance) {
  pp_trace t;
  char err[256];
  if (pp_trace_read_file(path, &t, err, sizeof err) != 0) {
    fprintf(stderr, "gpu_zones: %s\n", err);
    return 1;
  }
  int rc = 0;
  if (pp_analyze(&t) != 0) {
    fprintf(stderr, "gpu_zones: analysis failed\n");
    rc = 1;
    goto done;
  }
  if ((int)t.ngpu != n) {
    fprintf(stderr, "gpu_zones: %zu GPU zones in the trace, expected %d "
                    "(resolved %s, unresolved %s, unavailable: %s)\n",
            t.ngpu, n, pp_trace_meta(&t, "gpu_zones.resolved"),
            pp_trace_meta(&t, "gpu_zones.unresolved"),
            pp_trace_meta(&t, "gpu_zones.unavailable"));
    rc = 1;
    goto done;
  }
  /* One stream, so the analysis keeps the zones in start order: the
   * order the program launched them. */
  double worst = 0, sum = 0;
  for (int i = 0; i < n; i++) {
    double got = (double)(t.gpu[i].end - t.gpu[i].start) / 1e6;
    double rel = fabs(got - ref_ms[i]) / ref_ms[i];
    sum += rel;
    if (rel > worst)
      worst = rel;
    if (rel > tolerance) {
      fprintf(stderr, "gpu_zones: zone %d: pipeprof %.4f ms, "
                      "cudaEventElapsedTime %.4f ms (%.2f%% apart)\n",
              i, got, ref_ms[i], rel * 100);
      rc = 1;
    }
  }
  printf("gpu_zones: %d zones; pipeprof vs cudaEventElapsedTime: mean "
         "difference %.3f%%, worst %.3f%% (limit %.0f%%); calibration "
         "error bound %s ns\n",
         n, sum / n * 100, worst * 100, tolerance * 100,
         pp_trace_meta(&t, "gpu_zones.calib_error_ns")
             ? pp_trace_meta(&t, "gpu_zones.calib_error_ns")
             : "?");
done:
  pp_trace_free(&t);
  return rc;
}
