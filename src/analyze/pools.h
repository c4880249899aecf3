/* SPDX-License-Identifier: MIT */
/*
 * Device memory pools as a stream (pools.c; docs/internals/streaming.md):
 * MEM_ALLOC, MEM_FREE and MEM_RESERVE events, handed over one at a time in
 * the order of model/feed.h, become pp_mem_pool_stats per pool name and
 * device (definitions in docs/api.md). pp__pool_stream_event is a
 * pp_feed_fn (other event types are skipped); finish fills prof->pools and
 * prof->npools (which must be empty) from what the stream kept, with
 * t_start and t_end the trace's first and last time (the steady state is
 * taken over the second half of [t_start, t_end], the means run to
 * t_end), t the model as read by then.
 *
 * Bounds: at most max_live live pointers, all pools together (32 bytes
 * each, the table at most half full): an allocation past it is counted in
 * untracked_allocs, adds to in use and is never taken off (in use becomes
 * an upper bound, said by the report). Per pool a level series of at most
 * max_levels points (PP_POOL_LEVELS_MAX; 40 bytes each): when full,
 * neighbours merge two by two, each merged point keeping the higher in
 * use, and every later point covers as many events (levels_stride). Peak,
 * means, counts are exact whatever the bounds; steady is exact while the
 * series holds one point per event. new returns NULL, event and finish
 * -1, when out of memory; free accepts NULL.
 */
#ifndef PP_ANALYZE_POOLS_H
#define PP_ANALYZE_POOLS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"

#define PP_POOL_LIVE_MAX ((size_t)1 << 18)
#define PP_POOL_LEVELS_MAX ((size_t)4096)

typedef struct pp_pool_stream pp_pool_stream;

pp_pool_stream *pp__pool_stream_new(size_t max_live, size_t max_levels);
int pp__pool_stream_event(void *arg, const pp_trace *t, uint32_t thread,
                          const pp_event *e);
int pp__pool_stream_finish(pp_pool_stream *s, const pp_trace *t,
                           int64_t t_start, int64_t t_end, pp_profile *prof);
void pp__pool_stream_free(pp_pool_stream *s);
/* Live pointers the stream keeps now (all pools). */
size_t pp__pool_stream_live(const pp_pool_stream *s);

/* Pools of a model in memory, through the stream (pp_analyze_gpu). */
int pp__pools_analyze(pp_analysis *a);

#endif /* PP_ANALYZE_POOLS_H */
