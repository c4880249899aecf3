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
 * pp_analyze decodes into the analysis with the stats-mode decoder
 * (pp__figures_apply, analyze/figures.c).
 */
#ifndef PP_ANALYZE_STREAM_H
#define PP_ANALYZE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"

typedef struct pp_stream pp_stream;

/* Release what a pp_stream_results (analyze/analysis.h) holds, and it. */
void pp__stream_results_free(pp_stream_results *r);

pp_stream *pp__stream_new(void);
/* Also follow requests (with the analysis options a report gives:
 * warm-up, SLOs), queues and memory pools, so that their figures come
 * from every event (pp_stream_results). 0, or -1 when out of memory. */
int pp__stream_details(pp_stream *s, uint64_t warmup, const pp_slo *slo);
/* Also follow the chart series (analyze/series.h; pp__stream_details
 * does). 0, or -1 when out of memory. */
int pp__stream_series(pp_stream *s);
/* Once finished, hand over what the series followed (NULL when not
 * followed): the caller frees it (pp__series_free). */
struct pp_series_rec *pp__stream_take_series(pp_stream *s);
/* Follow memory pools only (what the Chrome export draws from the
 * figures). 0, or -1 when out of memory. */
int pp__stream_pools(pp_stream *s);
void pp__stream_free(pp_stream *s);
/* Also hand every event to fn (with arg) before the figures take it, as
 * the reader decodes it: each thread's events in recording order, threads
 * interleaved chunk by chunk, the events of a part (below) numbered as
 * the merge will number them. fn's non-zero value fails the read. For a
 * consumer of the same read that needs more than the figures (diff's
 * samples). */
void pp__stream_tap(pp_stream *s, pp_feed_fn fn, void *arg);
/* A pp_feed_fn: one event of thread `thread` of t (the reader's on_event). */
int pp__stream_event(void *s, const pp_trace *t, uint32_t thread,
                     const pp_event *e);
/* A trace read after t's, to be merged into t (pp_trace_merge, or with
 * share pp_trace_merge_process: a process of the same run) once read: its
 * events stream through s as they are decoded, numbered as they will be
 * in t after the merge (its sites after t's nlocs sites, or t's where
 * shared; its threads after t's nthreads threads), so the figures need
 * none of them stored.
 * Between pp__stream_part_begin and pp__stream_part_end (called before
 * the merge) the read's on_event is pp__stream_part_event with s; t must
 * not change in between. What t's read left in the reorder buffer is
 * handed over first, and the part's events are ordered among themselves
 * (as pp__stream_feed_threads does for a part read whole). 0, or -1 when
 * out of memory. */
int pp__stream_part_begin(pp_stream *s, const pp_trace *t, int share);
/* A pp_feed_fn: one event of thread `thread` of the part being read. */
int pp__stream_part_event(void *s, const pp_trace *part, uint32_t thread,
                          const pp_event *e);
/* Hand over the part's events still waiting and forget the part. After a
 * failed read of the part (read_failed), nothing more is handed over (the
 * part's names are freed with it). 0, or -1 when out of memory or when
 * the failed part's events already reached the figures: they are then
 * wrong, and the read of the whole must fail. */
int pp__stream_part_end(pp_stream *s, int read_failed);
/* The stored events of threads first.. of t: zone events thread by thread,
 * the rest in time order. 0, or -1 when out of memory. */
int pp__stream_feed_threads(pp_stream *s, const pp_trace *t, size_t first);
/* Events the reorder buffer handed over out of time order because it was
 * full (pp_order_late). */
uint64_t pp__stream_late(const pp_stream *s);
/* Close what is open at the end of the stream and encode the figures as
 * a STATS payload (malloc'd into *out, *len), and, when res is not NULL,
 * the other figures into a new *res (NULL when there are none); the
 * stream is spent. Returns 0, or -1 when out of memory. */
int pp__stream_finish(pp_stream *s, const pp_trace *t, unsigned char **out,
                      size_t *len, pp_stream_results **res);
/* Copy src's request figures into dst (pp_request_stats_free frees it). 0,
 * or -1 when out of memory (dst then holds nothing). */
int pp__request_stats_copy(pp_request_stats *dst,
                           const pp_request_stats *src);

#endif /* PP_ANALYZE_STREAM_H */
