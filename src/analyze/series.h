/* SPDX-License-Identifier: MIT */
/*
 * Time series for charts (docs/internals/series.md): the values the
 * figures take (sink/stats.h pp__agg_observer: zones and ranges as they
 * close, frame times, counter values) and queue depths, followed over time
 * while a trace's events stream by, in memory bounded by the number of
 * series, never by the number of events; and the coarse duration
 * histograms the summary draws (pp_hist_coarse).
 *
 * Invariants: every line is on one grid: buckets of 2^shift ns starting
 * at multiples of it, the least such width at which the earliest and the
 * latest time placed so far fall at most PP_SERIES_POINTS_MAX buckets
 * apart; so the grid depends on those two times only, never on the order
 * values came in. A line's buckets are brought onto the grid when it is
 * next touched (its own origin and shift say which grid they are on).
 * Boundaries nest: the width only doubles and the origin only moves back
 * by whole buckets, so a bucket of an older grid lies inside one bucket of
 * the newer.
 */
#ifndef PP_ANALYZE_SERIES_H
#define PP_ANALYZE_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"
#include "sink/stats.h"
#include "stats/histogram.h"

#define PP_SERIES_POINTS_MAX 600u   /* buckets per series */
#define PP_SERIES_ZONES 8u          /* zones drawn: the most total time */
#define PP_SERIES_ZONES_MAX 64u     /* zone and range sites followed */
#define PP_SERIES_FRAMES_MAX 64u    /* frame series followed */
#define PP_SERIES_COUNTERS_MAX 256u /* counter series followed */
#define PP_SERIES_QUEUES_MAX 64u    /* queues followed */

/* Coarse buckets of a duration: 0..3 each alone, then 4 per power of two
 * ([2^k + q 2^(k-2), 2^k + (q+1) 2^(k-2) - 1], q = 0..3), 252 in all;
 * the histogram's buckets (stats/histogram.h) nest in them. */
#define PP_COARSE_BUCKETS 252u
unsigned pp_coarse_index(uint64_t v);
/* The highest value of coarse bucket c (its inclusive upper edge). */
uint64_t pp_coarse_le(unsigned c);
/* h's counts in coarse buckets, from its first to its last non-empty
 * one: le[i] the bucket's highest value, counts[i] its values (empty
 * buckets between included); both arrays must hold PP_COARSE_BUCKETS.
 * Returns the number of buckets, 0 for an empty histogram. The counts sum
 * to h->count. */
size_t pp_hist_coarse(const pp_hist *h, uint64_t *le, uint64_t *counts);

typedef struct pp_series_rec pp_series_rec;

pp_series_rec *pp__series_new(void);
void pp__series_free(pp_series_rec *r);
/* The observer that feeds r from an aggregate (pp__aggregate_observe). */
void pp__series_observer(pp_series_rec *r, pp__agg_observer *o);
/* A queue event of site loc at ts: the depth the library recorded with
 * it (negative taken as 0, as the queue figures take it). Events of one
 * queue come in time order (a later one earlier than the one before holds
 * for no time). */
void pp__series_queue(pp_series_rec *r, uint32_t loc, int64_t ts,
                      int64_t depth);

/* Fill a->prof.series from r (NULL: nothing followed) once a's figures
 * are ordered (zones, frames, counters, pipe.queues): frames and counters
 * by name, queues in pipeline order, the PP_SERIES_ZONES zones with the
 * most total time. r is brought onto its grid (not otherwise changed).
 * 0, or -1 when out of memory. */
int pp__series_build(pp_series_rec *r, pp_analysis *a);
/* Release what s holds and zero it. */
void pp_series_free(pp_series *s);

#endif /* PP_ANALYZE_SERIES_H */
