/* SPDX-License-Identifier: MIT */
/* Shared by tests/gpu/gpu_zones.cu and tests/gpu/check.c. */
#ifndef PP_GPU_CHECK_H
#define PP_GPU_CHECK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Read the trace at path and compare its n GPU zones (in launch order)
 * with ref_ms; print the agreement. Returns 0 when every zone is within
 * tolerance (relative), 1 otherwise. */
int pp_gpu_check(const char *path, const double *ref_ms, int n,
                 double tolerance);

/* Read the trace at path and compare the last device memory sample of
 * CUDA device dev (counters cuda<dev>.mem_used_bytes and
 * cuda<dev>.mem_total_bytes) with used_ref and total_ref, bytes the
 * program read with cudaMemGetInfo; print the agreement. Returns 0 when
 * used is within tolerance_bytes and total is equal, 1 otherwise. */
int pp_gpu_mem_check(const char *path, int dev, double used_ref,
                     double total_ref, double tolerance_bytes);

#ifdef __cplusplus
}
#endif

#endif /* PP_GPU_CHECK_H */
