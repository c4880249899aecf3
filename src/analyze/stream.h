/* SPDX-License-Identifier: MIT */
/*
 * The figures of a trace computed as its events stream by, with memory
 * bounded by the number of sites and threads, not of events: per-site zone
 * statistics (the zone pairing of pair/zones.h), thread busy time, frame
 * pacing, counters and ranges. The stream is the stats sink the library
 * uses in stats mode (sink/stats.h), so a trace-mode file and a
 * stats-mode file of the same run give the same figures by construction:
 * one engine.
 *
 * Events come from the reader's second pass (pp_read_opts.on_event) or,
 * for a model in memory, from pp__stream_feed_threads. Zone events go to
 * the pairing in each thread's recording order; every other event goes
 * through a bounded reorder buffer (model/feed.h) so that frame and
 * counter series spread over threads are taken in time order.
 *
 * pp__stream_finish encodes the result as a STATS chunk payload, which
 * pp_analyze decodes into the profile with the stats-mode decoder.
 */
#ifndef PP_ANALYZE_STREAM_H
#define PP_ANALYZE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/model.h"

typedef struct pp_stream pp_stream;

pp_stream *pp__stream_new(void);
void pp__stream_free(pp_stream *s);
/* A pp_feed_fn: one event of thread `thread` of t (the reader's on_event). */
int pp__stream_event(void *s, const pp_trace *t, uint32_t thread,
                     const pp_event *e);
/* The stored events of threads first.. of t: zone events thread by thread,
 * the rest in time order. 0, or -1 when out of memory. */
int pp__stream_feed_threads(pp_stream *s, const pp_trace *t, size_t first);
/* Close what is open at the end of the stream and encode the figures as
 * a STATS payload (malloc'd into *out, *len); the stream is spent.
 * Returns 0, or -1 when out of memory. */
int pp__stream_finish(pp_stream *s, const pp_trace *t, unsigned char **out,
                      size_t *len);
/* Events the reorder buffer handed over out of time order (it was full). */
uint64_t pp__stream_late(const pp_stream *s);

#endif /* PP_ANALYZE_STREAM_H */
