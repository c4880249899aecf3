/* SPDX-License-Identifier: MIT */
/*
 * Analysis of CUDA activity (CUPTI records, pp_trace.cuda): each kernel,
 * copy and memset is joined to the runtime or driver API call that
 * launched it (same correlation id; a runtime call wins over a driver
 * call) and attributed to the innermost zone open on the calling thread at
 * the call's start (NVTX push/pop ranges are zones); its stage is that
 * zone's top-level ancestor. From that: the per-kernel table, GPU busy vs
 * idle over the run and per stage, host<->device transfers per stage,
 * launch latency, API and synchronization totals. Definitions:
 * docs/internals/cupti.md.
 *
 * Invariants (after pp_analyze, when a->cuda is set): kernels[] is sorted
 * by total_ns descending (ties by name); stages[] by the stage's GPU-side
 * time (kernels + copies + memsets) descending, the stage without a zone
 * (loc PP_GPU_NO_ZONE) included when it has any work; the attribution
 * arrays have one entry per record of pp_trace.cuda, in the same order.
 */
#ifndef PP_GPU_ACTIVITY_H
#define PP_GPU_ACTIVITY_H

#include <stdint.h>

#include "analysis.h"

#define PP_GPU_NO_ZONE UINT32_MAX

/* Copy directions (from CUPTI's copy kind). */
enum { PP_XFER_H2D, PP_XFER_D2H, PP_XFER_D2D, PP_XFER_OTHER, PP_XFER_N };

/* Copies of one direction. Host memory is the source of H2D, the
 * destination of D2H; pageable + pinned <= bytes (other kinds: managed,
 * unknown). Bandwidth = bytes / time_ns. */
typedef struct pp_gpu_xfer {
  uint64_t count, bytes, pageable_bytes, pinned_bytes;
  int64_t time_ns; /* sum of copy durations */
} pp_gpu_xfer;

typedef struct pp_gpu_kernel_stats {
  uint32_t name;      /* pp_trace.cuda.names index */
  uint64_t calls;
  int64_t total_ns;
  double mean_ns;
  double share_pct;   /* of all kernels' time */
  pp_hist hist;       /* durations, ns */
} pp_gpu_kernel_stats;

typedef struct pp_gpu_stage {
  uint32_t loc;       /* top-level zone site, PP_GPU_NO_ZONE: none */
  int64_t wall_ns;    /* union of the stage's instances (all threads) */
  int64_t busy_ns;    /* of that, time some device was busy (any work) */
  uint64_t kernels;
  int64_t kernel_ns;  /* kernels the stage launched (sum of durations) */
  uint64_t memsets;
  int64_t memset_ns;
  pp_gpu_xfer xfer[PP_XFER_N];
} pp_gpu_stage;

typedef struct pp_gpu_device {
  uint32_t device;
  int64_t busy_ns;    /* union of its kernels, copies and memsets */
  uint64_t kernels, copies, memsets;
  int64_t kernel_ns, copy_ns, memset_ns; /* sums of durations */
} pp_gpu_device;

typedef struct pp_gpu_api_stats {
  uint32_t name, domain;
  uint64_t calls;
  int64_t total_ns;
} pp_gpu_api_stats;

typedef struct pp_gpu_sync_stats {
  uint32_t type;      /* CUpti_ActivitySynchronizationType */
  uint64_t count;
  int64_t total_ns;
} pp_gpu_sync_stats;

/* Where one GPU operation came from. */
typedef struct pp_gpu_attr {
  int32_t api;        /* index in pp_trace.cuda.apis, -1: no call found */
  uint32_t zone;      /* innermost zone site, PP_GPU_NO_ZONE: none */
  uint32_t stage;     /* its top-level ancestor, PP_GPU_NO_ZONE: none */
} pp_gpu_attr;

typedef struct pp_gpu_activity {
  int64_t t0, t1, wall_ns; /* the run: zones' span widened by GPU work */
  int64_t busy_ns;         /* union of all devices' work */
  pp_gpu_device *devices;  /* by device id */
  size_t ndevices;
  pp_gpu_kernel_stats *kernels;
  size_t nkernels;
  int64_t kernel_ns;       /* all kernels */
  pp_gpu_stage *stages;
  size_t nstages;
  pp_gpu_xfer xfer[PP_XFER_N]; /* whole run */
  pp_hist launch;          /* API call start -> kernel start, ns */
  pp_hist queued;          /* queued -> kernel start, ns (when collected) */
  uint64_t correlated;     /* GPU operations joined to an API call */
  uint64_t uncorrelated;   /* ... with no API call in the trace */
  uint64_t unattributed;   /* ... joined but with no zone open */
  pp_gpu_api_stats *apis;  /* by total_ns descending */
  size_t napis;
  pp_gpu_sync_stats *syncs; /* by type */
  size_t nsyncs;
  uint64_t dropped;        /* CUPTI records lost */
  pp_gpu_attr *kernel_attr, *memcpy_attr, *memset_attr;
} pp_gpu_activity;

/* Fill an->cuda from the trace's CUDA records and the zones (pp_analyze
 * calls it after the zones are built). Leaves it NULL when the trace has no
 * CUDA chunk.
 * Returns 0, or -1 when out of memory. */
int pp_analyze_cuda(pp_analysis *an);
/* Free an analysis (NULL is fine). */
void pp_gpu_activity_free(pp_gpu_activity *g);

/* Direction of a CUPTI copy kind (PP_XFER_*), and its short label
 * ("HtoD", "DtoH", "DtoD", "other"). */
int pp_gpu_xfer_dir(unsigned copy_kind);
const char *pp_gpu_xfer_label(int dir);
/* "pageable", "pinned", "device", "array", "managed", ... or "unknown". */
const char *pp_gpu_memory_kind(unsigned kind);
/* "event synchronize", "stream wait event", "stream synchronize",
 * "context synchronize" or "unknown". */
const char *pp_gpu_sync_type(unsigned type);

#endif /* PP_GPU_ACTIVITY_H */
