/* SPDX-License-Identifier: MIT */
/*
 * The request and batch analysis as a streaming analysis: fed the
 * REQ_BEGIN, REQ_FIRST, REQ_TOKENS, REQ_END and BATCH events of a trace
 * one at a time in time order across threads (model/feed.h), it builds
 * the same pp_request_stats as pp_analyze_requests() without keeping the
 * events: its state is the request pairing table (pair/requests.h) and,
 * per open request, its running figures and the inter-token gaps waiting
 * for the request's outcome.
 *
 * Memory: at most max_open requests kept (0: 1,000,000, about 120 MiB at
 * 112 bytes and a 4-8 byte index each when that many are open at once) and
 * at most 2^19 chunks of 6 waiting inter-token gaps (28 MiB, 3.1 million
 * gaps). A request that finds no room is counted in `lost`; a gap that
 * finds no room is counted in itl.lost when its request succeeds.
 *
 * Single-threaded; the trace t handed to the event function is read only
 * during the call (thread pids), never kept.
 */
#ifndef PP_ANALYZE_REQUESTS_H
#define PP_ANALYZE_REQUESTS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"

/* The event types the analysis wants, for pp_feed_in_time_order(). */
#define PP_REQ_STREAM_TYPES                                                    \
  ((UINT32_C(1) << PPT_EV_REQ_BEGIN) | (UINT32_C(1) << PPT_EV_REQ_FIRST) |     \
   (UINT32_C(1) << PPT_EV_REQ_TOKENS) | (UINT32_C(1) << PPT_EV_REQ_END) |      \
   (UINT32_C(1) << PPT_EV_BATCH))

typedef struct pp_req_stream pp_req_stream;

/* A stream leaving out the first `warmup` requests by begin (the first
 * begins of the stream), judging goodput by slo (NULL: none), keeping at
 * most max_open requests (0: 1,000,000). NULL when out of memory. */
pp_req_stream *pp__req_stream_new(uint64_t warmup, const pp_slo *slo,
                                  size_t max_open);
/* One event (a pp_feed_fn; other types are ignored). Returns 0, or -1 when
 * out of memory (the figures are then incomplete: stop). */
int pp__req_stream_event(void *s, const pp_trace *t, uint32_t thread,
                         const pp_event *e);
/* The stream is over at t_end (not used by any figure today: a request
 * still open is unfinished whatever its age): settle what is open and fill
 * *out, which takes the histograms and sizes (free with
 * pp_request_stats_free; *out is overwritten, not freed). Returns 0, or
 * -1 when an event failed for lack of memory (*out is then still filled
 * with what was counted). */
int pp__req_stream_finish(pp_req_stream *s, int64_t t_end,
                          pp_request_stats *out);
/* Free s (NULL is fine); what finish handed to *out is not touched. */
void pp__req_stream_free(pp_req_stream *s);

#endif /* PP_ANALYZE_REQUESTS_H */
