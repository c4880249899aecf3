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

#ifdef __cplusplus
}
#endif

#endif /* PP_GPU_CHECK_H */
