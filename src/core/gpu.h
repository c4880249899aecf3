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
 *
 * Device memory: the writer also samples cuMemGetInfo about once a second
 * for each device it knows a context of (the first pool of each device),
 * recorded as counters of its own thread (named "pipeprof writer"):
 *   cuda<dev>.mem_used_bytes   total - free, all processes on the device
 *                              (or the MIG instance)
 *   cuda<dev>.mem_total_bytes  the device's (instance's) memory
 * where <dev> is the CUDA device ordinal of the context (the numbering the
 * program sees under CUDA_VISIBLE_DEVICES; NVML's gpu<N> counters use
 * NVML's). META: "cuda_mem.<dev>.unavailable" = the first reason a sample
 * of that device could not be taken, "cuda_mem.<dev>.failed" = failed
 * calls (at the end, when any), "cuda_mem.unavailable" = why no device
 * could be sampled although the program used GPU zones.
 */
#ifndef PP_CORE_GPU_H
#define PP_CORE_GPU_H

#include <stdint.h>

#include "../ring/gpu_rec.h"
#include "pipeprof.h"

/* One resolved GPU zone. Ticks are on the recorder's clock. */


typedef void (*pp__gpu_emit_fn)(const pp__gpu_rec *r, void *arg);

/* A session starts: zero the counters (pools are kept). Control path. */
void pp__gpu_session_start(uint32_t slots); /* 0: the default */

/* Resolver pass, writer thread only: calibrate pools due for it, emit
 * every zone whose events completed and, while recording is on, take the
 * device memory samples that are due. ticks_per_ns is the recorder's clock
 * rate. final: wait a bounded time (200 ms) for zones already ended, then
 * count what is left as unresolved, free every slot and add the
 * gpu_zones.* META keys (only when GPU zones were used this session) and
 * the cuda_mem.* ones. */
void pp__gpu_poll(double ticks_per_ns, int final, pp__gpu_emit_fn emit,
                  void *arg);

/* Tests: the device memory sampling period (ns; <= 0: the default, 1 s).
 * Kept across sessions. */
void pp__gpu_mem_period(int64_t ns);

/* Parse PIPEPROF_GPU_SLOTS (NULL: default). Returns the slot count, or 0
 * for an invalid value. */
uint32_t pp__gpu_parse_slots(const char *v);

#endif /* PP_CORE_GPU_H */
