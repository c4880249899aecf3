/* SPDX-License-Identifier: MIT */
/*
 * Queries on the results of an analysis (analysis.h, analyze.h): the
 * figures of one zone site or library metric, the zone instance that
 * encloses a time, the window of stored events, and releasing the
 * per-site figures. A leaf: the analyses that need these call here and
 * nothing here calls an analysis.
 */
#include <string.h>

#include "analyze.h"
#include "internal.h"

void pp_profile_figures_free(pp_profile *p) {
  for (size_t i = 0; i < p->nzones; i++) {
    pp_hist_free(&p->zones[i].hist);
  }
  for (size_t i = 0; i < p->nframes; i++)
    pp_hist_free(&p->frames[i].hist);
  pp__free(p->zones);
  pp__free(p->frames);
  pp__free(p->counters);
  p->zones = NULL;
  p->frames = NULL;
  p->counters = NULL;
  p->nzones = p->nframes = p->ncounters = 0;
}

const pp_counter_stats *pp_profile_metric(const pp_analysis *a,
                                          const char *name) {
  const pp_trace *t = a->trace;
  int any_metric = 0;
  for (size_t i = 0; i < t->nlocs && !any_metric; i++)
    any_metric = t->locs[i].kind == PP_KIND_METRIC;
  uint32_t want = any_metric ? PP_KIND_METRIC : PP_KIND_COUNTER;
  for (size_t i = 0; i < a->prof.ncounters; i++) {
    uint32_t loc = a->prof.counters[i].loc;
    if (loc < t->nlocs && t->locs[loc].kind == want &&
        strcmp(pp_trace_loc_name(t, loc), name) == 0)
      return &a->prof.counters[i];
  }
  return NULL;
}

const pp_zone_stats *pp_profile_zone(const pp_analysis *a, uint32_t loc) {
  if (!a || !a->analyzed)
    return NULL;
  for (size_t i = 0; i < a->prof.nzones; i++)
    if (a->prof.zones[i].loc == loc)
      return &a->prof.zones[i];
  return NULL;
}

int pp_zone_enclosing(const pp_analysis *a, size_t thread, int64_t ts) {
  if (!a || thread >= a->nthreads || !a->threads[thread].nzones)
    return -1;
  const pp_thread_figures *f = &a->threads[thread];
  /* Last instance starting at or before ts; the innermost enclosing
   * instance, if any, is it or one of its ancestors (pre-order). */
  size_t lo = 0, hi = f->nzones;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (f->zones[mid].start <= ts)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0)
    return -1;
  int64_t i = (int64_t)lo - 1;
  while (i >= 0 && f->zones[i].end < ts)
    i = f->zones[i].parent;
  return i >= 0 && i <= INT32_MAX ? (int)i : -1;
}

int64_t pp_details_window_ns(const pp_analysis *a) {
  const pp_trace *t = a->trace;
  if (t->diag.events_kept >= t->diag.events)
    return -1;
  return pp__span(a->prof.t0, t->diag.first_unkept_ns);
}
