/* SPDX-License-Identifier: MIT */
/*
 * A GPU zone's record: what the GPU zone code (core/gpu.c) resolves from
 * CUDA events and hands to the writer's sinks (sink/sink.h). Here, below
 * both, so that the sinks do not reach into core/ for it.
 */
#ifndef PP_RING_GPU_REC_H
#define PP_RING_GPU_REC_H

#include <stdint.h>

#include "pipeprof.h"

typedef struct pp__gpu_rec {
  const pp_srcloc *loc;
  uint64_t tid;         /* thread that called pp_gpu_zone_begin */
  uint64_t stream;      /* the CUstream handle as an integer */
  uint32_t device;      /* CUdevice ordinal of the context */
  uint64_t launch_tick; /* CPU tick of the begin call */
  uint64_t start_tick;  /* GPU start mapped to the CPU tick clock */
  uint64_t dur_ns;      /* cuEventElapsedTime(begin, end) */
} pp__gpu_rec;

#endif /* PP_RING_GPU_REC_H */
