/* SPDX-License-Identifier: MIT */
/*
 * Helpers around pp_analyze() (src/analyze/analyze.c) for the reader, the
 * exporters and the text report: releasing what the analysis allocated,
 * finding the zone instance that encloses a timestamp on a thread, and
 * looking up the aggregate statistics of one zone site.
 *
 * Invariants (after pp_analyze): per thread, zones[] is in start order
 * (pre-order: a parent precedes its children, siblings are in time order)
 * and properly nested; every instance's loc is < t->nlocs; prof.zones is
 * sorted by total_ns descending (ties by name, then loc), one entry per zone
 * site. Frame streams and counters are identified by name, since several
 * call sites may feed one ("queue" set by a producer and a consumer): each
 * prof.frames / prof.counters entry merges every loc of that name and
 * carries the lowest such loc id; they are sorted by name (unnamed locs
 * stay apart and sort by loc). Zones closed forcibly
 * (by the end of the trace, or by the end of an enclosing zone) have
 * unclosed = 1 and are counted in prof.unclosed.
 */
#ifndef PP_ANALYZE_H
#define PP_ANALYZE_H

#include <stdint.h>

#include "model.h"
#include "model/trace.h"

/* Free everything pp_analyze() allocated (zone instances of every thread,
 * the profile and its histograms) and reset t->prof, the threads' zone
 * arrays and busy_ns, and t->analyzed to zero. The events, locs, threads
 * and meta are untouched. Safe on a trace never analysed, and twice.
 * pp_trace_free() calls it. */
void pp__analysis_free(pp_trace *t);


/* Aggregate statistics of the zone site loc, or NULL when that site has no
 * instance (or t was not analysed). O(number of zone sites). */
const pp_zone_stats *pp_profile_zone(const pp_trace *t, uint32_t loc);
/* The statistics of the library metric named name (metrics/registry.h),
 * or NULL: a series recorded as PP_KIND_METRIC; in a trace written before
 * that kind existed (no metric site at all), a counter of that name. A
 * user counter that shares the name is never returned. */
const pp_counter_stats *pp_profile_metric(const pp_trace *t,
                                          const char *name);

/* Per-site zone statistics, shared by CPU zones and GPU zones: init n
 * entries (empty histograms, min/max sentinels), add one instance of d ns
 * with self ns of it, and finish n entries (mean, std) once all are in. */
void pp__zone_stats_init(pp_zone_stats *zs, size_t n);
void pp__zone_stats_add(pp_zone_stats *zs, int64_t d, int64_t self);
void pp__zone_stats_finish(pp_zone_stats *zs, size_t n);

/* The profiler's own cost in an analysed trace, for the report and the
 * summary JSON. */
typedef struct pp_overhead {
  int known;           /* 0: no event cost recorded, nothing below is set */
  double recording_ns; /* estimated, all threads: events x event cost
                          + dropped_ns */
  double events_ns;    /* events x event cost (META event_cost_ns) */
  double dropped_ns;   /* dropped events x drop cost (META drop_cost_ns);
                          0 when nothing was dropped or -1 when events were
                          dropped and the trace has no drop cost (older
                          traces), which recording_ns then leaves out */
  double busy_ns;      /* summed busy time of all threads */
  double total_ns;     /* recording + the writer's and sampler's measured
                          CPU time; -1 when the writer's is not recorded */
} pp_overhead;
void pp_profile_overhead(const pp_trace *t, pp_overhead *o);

#endif /* PP_ANALYZE_H */
