/* SPDX-License-Identifier: MIT */
/*
 * Flight mode: the rings are the recorder and are never drained. This
 * module reads them without consuming them — for a dump (the newest
 * events of each ring) and for the live sink (what was recorded since the
 * last look) — and, as the flight sink, keeps the newest resolved GPU
 * zones for the next dump.
 *
 * Producers may overwrite slots while they are copied: a copy is made
 * first, then only the slots the write index shows were not overwritten
 * meanwhile are kept.
 */
#ifndef PP_SINK_FLIGHT_H
#define PP_SINK_FLIGHT_H

#include "sink.h"

/* The most GPU zones the flight sink keeps (the newest). */
#define PP__FLIGHT_GPU_MAX 8192u

/* The flight sink; NULL when out of memory. */
pp__sink *pp__flight_sink_new(void);
/* A copy of the GPU zones it keeps (oldest first; the caller frees *out
 * with pp__free). Returns how many (0: none, or out of memory). */
size_t pp__flight_sink_gpu(pp__sink *k, pp__gpu_rec **out);

/* Copy the newest events of t's ring (up to its capacity), in blocks
 * newest first, stopping where the producer overwrote what was being
 * copied. On success s describes the copy (s->ring is *buf, to be freed
 * with pp__free) and 1 is returned; 0 when the ring is empty or out of
 * memory. */
int pp__flight_copy_ring(pp__tstate *t, pp__slots *s, pp__slot **buf);
/* The slots of t recorded since its last peek (t->live_r), copied into
 * *buf (grown; *cap its capacity): s describes the valid part. Returns 1
 * when there is something to read, 0 otherwise; n_seen: slots since the
 * last peek (for the writer's period). */
int pp__flight_peek(pp__tstate *t, pp__slots *s, pp__slot **buf, size_t *cap,
                    uint64_t *n_seen);

#endif /* PP_SINK_FLIGHT_H */
