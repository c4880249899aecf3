/* SPDX-License-Identifier: MIT */
/*
 * Lookups on a decoded trace that need no analysis (src/model/trace.c).
 * The trace's types are in analyze/model.h for now, which also declares
 * the accessors of metadata, processes and site names implemented here.
 */
#ifndef PP_MODEL_TRACE_H
#define PP_MODEL_TRACE_H

#include <stdint.h>

#include "analyze/model.h"

/* A sort key for sites and the arrays of results about them: primary
 * descending, then name, then loc; idx is the element's position before
 * sorting. pp_sort_key_cmp is its qsort comparator. */
typedef struct pp_sort_key {
  int64_t primary;
  const char *name;
  uint32_t loc;
  size_t idx;
} pp_sort_key;

int pp_sort_key_cmp(const void *a, const void *b);

/* Index in th->zones of the innermost zone instance with
 * start <= ts <= end, or -1 when none. At a boundary shared by two
 * adjacent zones, the later one wins. O(log n + depth). Needs th's zone
 * instances (pp_analyze). */
int pp_zone_enclosing(const pp_thread *th, int64_t ts);

/* Counters and frame streams are named series: *out[loc] is the lowest
 * loc with the same (non-empty) name, so all sites of one series share a
 * key; a library metric (PP_KIND_METRIC) and a user counter of the same
 * name are two series. malloc'ed array of t->nlocs entries (NULL when
 * there are no locs). Returns 0, or -1 when out of memory. */
int pp_loc_canon(const pp_trace *t, uint32_t **out);

#endif /* PP_MODEL_TRACE_H */
