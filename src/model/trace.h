/* SPDX-License-Identifier: MIT */
/*
 * Lookups on a decoded trace that need no analysis (src/model/trace.c),
 * beside the accessors model/model.h declares.
 */
#ifndef PP_MODEL_TRACE_H
#define PP_MODEL_TRACE_H

#include <stdint.h>

#include "metrics/registry.h"
#include "model/model.h"

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

/* Counters and frame streams are named series: *out[loc] is the lowest
 * loc with the same (non-empty) name, so all sites of one series share a
 * key; a library metric (PP_KIND_METRIC) and a user counter of the same
 * name are two series. malloc'ed array of t->nlocs entries (NULL when
 * there are no locs). Returns 0, or -1 when out of memory. */
int pp_loc_canon(const pp_trace *t, uint32_t **out);

/* ---- library metrics among a trace's sites ---------------------------- */

/* The kind library metrics have in t: PP_KIND_METRIC for a file of format
 * 1.4 or later (t->format_minor) or when any site has it; PP_KIND_COUNTER
 * for an older file or a model built in memory without such a site (names
 * alone then tell). O(nlocs): call once per pass. */
uint32_t pp_trace_metric_kind(const pp_trace *t);

/* The registry row of site loc when it is a library metric of t (its name
 * is registered and, when mkind from pp_trace_metric_kind is
 * PP_KIND_METRIC, its kind is too), else PP_METRIC_NONE. index, free, free_len
 * as pp_metric_lookup; may be NULL. */
pp_metric_id pp_loc_metric(const pp_trace *t, uint32_t loc, uint32_t mkind,
                           long *index, const char **free, size_t *free_len);

#endif /* PP_MODEL_TRACE_H */
