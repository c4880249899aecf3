/* SPDX-License-Identifier: MIT */
/*
 * Stats mode: the writer feeds every drained event (already in ns) to an
 * aggregate that keeps per-zone duration and self-time histograms, per
 * thread busy time, frame-time histograms and counter summaries, and writes
 * them as one STATS chunk at the end. Memory is bounded by the number of
 * distinct sites and threads, not by the number of events.
 *
 * Not thread-safe: only the writer thread touches it.
 */
#ifndef PP_AGGREGATE_H
#define PP_AGGREGATE_H

#include <stdint.h>

#include "../format/pptrace.h"
#include "pipeprof.h"

typedef struct pp__aggregate pp__aggregate;

pp__aggregate *pp__aggregate_new(void);
void pp__aggregate_free(pp__aggregate *a);
void pp__aggregate_define(pp__aggregate *a, uint32_t id, const pp_srcloc *p);
void pp__aggregate_thread(pp__aggregate *a, uint64_t tid, const char *name);
void pp__aggregate_event(pp__aggregate *a, uint64_t tid, unsigned type,
                         uint32_t id, int64_t ns, uint64_t value);
void pp__aggregate_drops(pp__aggregate *a, uint64_t tid, uint64_t n);
/* Close zones still open at end_ns. */
void pp__aggregate_finish(pp__aggregate *a, int64_t end_ns);
/* The STATS chunk payload (docs/formats/pptrace.md). */
void pp__aggregate_encode(const pp__aggregate *a, ppt_buf *out);

#endif /* PP_AGGREGATE_H */
