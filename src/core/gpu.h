/* SPDX-License-Identifier: MIT */
/*
 * GPU zones: CUDA events recorded around the work a program queues on a
 * stream (pp_gpu_zone_begin/end), resolved off the hot path by the
 * session's writer thread.
 *
 * libcuda.so.1 is opened with dlopen on the first pp_gpu_zone_begin of the
 * process (PIPEPROF_LIBCUDA overrides the path, for tests and odd
 * installs); the few driver types and calls are declared locally, so the
 * library builds without the CUDA toolkit.
 *
 * Invariants: each CUDA context gets one pool of event pairs, created on
 * its first zone and kept until the process exits (tokens point into it,
 * so an end after a session ended is harmless). A slot goes FREE ->
 * CLAIMED (begin, by the recording thread) -> OPEN (begin event recorded)
 * -> ENDED (end event recorded) -> FREE (the resolver emitted or counted
 * it). The recording thread publishes a slot's fields with a release store
 * of its state; the resolver reads them after an acquire load. Only the
 * writer thread resolves and calibrates.
 */
#ifndef PP_CORE_GPU_H
#define PP_CORE_GPU_H

#include <stdint.h>

#include "pipeprof.h"

/* One resolved GPU zone. Ticks are on the recorder's clock. */
typedef struct pp__gpu_rec {
  const pp_srcloc *loc;
  uint64_t tid;         /* thread that called pp_gpu_zone_begin */
  uint64_t stream;      /* the CUstream handle as an integer */
  uint32_t device;      /* CUdevice ordinal of the context */
  uint64_t launch_tick; /* CPU tick of the begin call */
  uint64_t start_tick;  /* GPU start mapped to the CPU tick clock */
  uint64_t dur_ns;      /* cuEventElapsedTime(begin, end) */
} pp__gpu_rec;

typedef void (*pp__gpu_emit_fn)(const pp__gpu_rec *r, void *arg);

/* A session starts: zero the counters (pools are kept). Control path. */
void pp__gpu_session_start(void);

/* Resolver pass, writer thread only: calibrate pools due for it and emit
 * every zone whose events completed. ticks_per_ns is the recorder's clock
 * rate. final: wait a bounded time (200 ms) for zones already ended, then
 * count what is left as unresolved, free every slot and add the
 * gpu_zones.* META keys (only when GPU zones were used this session). */
void pp__gpu_poll(double ticks_per_ns, int final, pp__gpu_emit_fn emit,
                  void *arg);

/* Parse PIPEPROF_GPU_SLOTS (NULL: default). Returns the slot count, or 0
 * for an invalid value. */
uint32_t pp__gpu_parse_slots(const char *v);

#endif /* PP_CORE_GPU_H */
