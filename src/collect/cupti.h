/* SPDX-License-Identifier: MIT */
/*
 * CUPTI activity tracing (src/collect/cupti.c; cupti_none.c when the build
 * found no CUPTI headers): libcupti is opened with dlopen, the activity API
 * hands buffers of kernel, memcpy, memset, synchronization and runtime /
 * driver API records to our callbacks, and each record's fields are
 * encoded straight into CUDA-chunk records (src/format/pptrace.h) kept in
 * a pending buffer until the session's writer takes them. Design, clock and
 * limits: docs/internals/cupti.md.
 *
 * Invariants: one tracer per process (CUPTI's callbacks are global); every
 * call here is a control-path call (locks, allocation) and none is made on
 * a recording thread's hot path; after pp__cupti_stop() no callback touches
 * the pending buffer (late buffers are counted as dropped and freed).
 */
#ifndef PP_COLLECT_CUPTI_H
#define PP_COLLECT_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include "format/pptrace.h"

/* Start tracing. Returns 0, or -1 with a one-line reason in why (e.g.
 * "built without CUPTI headers", "libcupti not found (tried ...)",
 * "cuptiActivityEnable(CONCURRENT_KERNEL): CUPTI_ERROR_NOT_SUPPORTED").
 * A second start while running returns 0. Optional kinds that cannot be
 * enabled (memset, synchronization, driver API, ...) do not fail the start;
 * pp__cupti_info() lists them. */
int pp__cupti_start(char *why, size_t len);

/* 1 while tracing. */
int pp__cupti_running(void);

/* Facts for the trace's META after a successful start: "clock" (callback or
 * mapped), "library" (the path opened), "version" (cuptiGetVersion), and
 * "missing" (kinds that could not be enabled, with their errors; "" when
 * none). Returns a static string, "" for unknown keys. */
const char *pp__cupti_info(const char *key);

/* Ask CUPTI to hand over completed buffers (forced: also the partly
 * filled ones). Control path: may call the buffer callback on this thread.
 * Also refreshes the clock mapping when the timestamp callback is not
 * available. */
void pp__cupti_flush(int forced);

/* Append the records encoded since the last call to out (a CUDA chunk
 * payload) and clear them. The writer thread calls it. */
void pp__cupti_take(ppt_buf *out);

/* Flush everything (forced), disable the activity kinds and stop taking
 * records. Records encoded and not yet taken stay for pp__cupti_take(). */
void pp__cupti_stop(void);

/* In a forked child: forget the parent's tracer without calling CUPTI. */
void pp__cupti_after_fork_child(void);

#endif /* PP_COLLECT_CUPTI_H */
