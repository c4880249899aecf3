/* SPDX-License-Identifier: MIT */
/*
 * The C half of tests/gpu/gpu_zones.cu: reads the trace the CUDA program
 * wrote and compares pipeprof's GPU zone durations with the reference
 * durations the program measured itself with cudaEventElapsedTime, and
 * pipeprof's device memory samples with the program's cudaMemGetInfo.
 * Compiled by the C compiler (the reader and the model are C).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/analyze.h"
#include "model/reader.h"
#include "gpu_check.h"

int pp_gpu_check(const char *path, const double *ref_ms, int n,
                 double tolerance) {
  pp_trace t;
  pp_analysis a = {0};
  char err[256];
  if (pp_trace_read_file(path, &t, err, sizeof err) != 0) {
    fprintf(stderr, "gpu_zones: %s\n", err);
    return 1;
  }
  int rc = 0;
  if (pp_analyze(&t, &a) != 0) {
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
  pp_analysis_free(&a);
  pp_trace_free(&t);
  return rc;
}

static const pp_counter_stats *counter(const pp_analysis *a, const char *name) {
  for (size_t i = 0; i < a->prof.ncounters; i++)
    if (a->prof.counters[i].samples &&
        strcmp(pp_trace_loc_name(a->trace, a->prof.counters[i].loc), name) == 0)
      return &a->prof.counters[i];
  return NULL;
}

int pp_gpu_mem_check(const char *path, int dev, double used_ref,
                     double total_ref, double tolerance_bytes) {
  pp_trace t;
  pp_analysis a = {0};
  char err[256], used_name[64], total_name[64];
  if (pp_trace_read_file(path, &t, err, sizeof err) != 0) {
    fprintf(stderr, "gpu_zones: %s\n", err);
    return 1;
  }
  int rc = 1;
  if (pp_analyze(&t, &a) != 0) {
    fprintf(stderr, "gpu_zones: analysis failed\n");
    goto done;
  }
  snprintf(used_name, sizeof used_name, "cuda%d.mem_used_bytes", dev);
  snprintf(total_name, sizeof total_name, "cuda%d.mem_total_bytes", dev);
  char key[64];
  snprintf(key, sizeof key, "cuda_mem.%d.unavailable", dev);
  const pp_counter_stats *u = counter(&a, used_name);
  const pp_counter_stats *k = counter(&a, total_name);
  if (!u || !k) {
    const char *why = pp_trace_meta(&t, key);
    fprintf(stderr, "gpu_zones: no %s samples in the trace (%s)\n",
            u ? total_name : used_name, why ? why : "no reason recorded");
    goto done;
  }
  double diff = fabs(u->last - used_ref);
  printf("gpu_zones: device memory (%llu samples); pipeprof vs "
         "cudaMemGetInfo: used %.1f vs %.1f MiB (%.2f MiB apart, limit "
         "%.0f), total %.1f vs %.1f MiB\n",
         (unsigned long long)u->samples, u->last / 1048576.0,
         used_ref / 1048576.0, diff / 1048576.0, tolerance_bytes / 1048576.0,
         k->last / 1048576.0, total_ref / 1048576.0);
  rc = diff <= tolerance_bytes && k->last == total_ref ? 0 : 1;
  if (rc)
    fprintf(stderr, "gpu_zones: device memory disagrees with "
                    "cudaMemGetInfo\n");
done:
  pp_analysis_free(&a);
  pp_trace_free(&t);
  return rc;
}
