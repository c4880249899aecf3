/* SPDX-License-Identifier: MIT */
/*
 * The metric registry's table (registry.h) and the matching of concrete
 * names against its patterns.
 */
#include "registry.h"

#include <string.h>

#include "../internal.h"

static const pp_metric_def table[PP_METRIC_COUNT] = {
#define PP_METRIC_ROW_(id, name, unit, kind, group, help)                    \
  [PP_METRIC_##id] = {name, PP_UNIT_##unit, PP_METRIC_##kind,                \
                      PP_GROUP_##group, help},
    PP_METRIC_TABLE(PP_METRIC_ROW_)
#undef PP_METRIC_ROW_
};

const pp_metric_def *pp_metric_def_of(pp_metric_id id) {
  return id >= 0 && id < PP_METRIC_COUNT ? &table[id] : NULL;
}

/* Match name against pattern p (at most one {N} and one {*}). */
static int match(const char *p, const char *name, long *index,
                 const char **free, size_t *free_len) {
  const char *n = name;
  while (*p) {
    if (strncmp(p, "{N}", 3) == 0) {
      if (*n == '0' && n[1] >= '0' && n[1] <= '9')
        return 0; /* no leading zero */
      long v = pp__name_index(n, "", &n);
      if (v < 0)
        return 0;
      *index = v;
      p += 3;
      continue;
    }
    if (strncmp(p, "{*}", 3) == 0) {
      p += 3;
      /* the rest of the pattern is literal: it must end the name */
      size_t rest = strlen(p), left = strlen(n);
      if (left <= rest || strcmp(n + left - rest, p) != 0)
        return 0;
      *free = n;
      *free_len = left - rest;
      return 1;
    }
    if (*p++ != *n++)
      return 0;
  }
  return *n == '\0';
}

pp_metric_id pp_metric_lookup(const char *name, long *index,
                              const char **free, size_t *free_len) {
  long ix = -1;
  const char *fr = NULL;
  size_t fl = 0;
  pp_metric_id id = PP_METRIC_NONE;
  if (name)
    for (int i = 0; i < PP_METRIC_COUNT; i++) {
      ix = -1;
      fr = NULL;
      fl = 0;
      if (match(table[i].name, name, &ix, &fr, &fl)) {
        id = (pp_metric_id)i;
        break;
      }
    }
  if (id == PP_METRIC_NONE) {
    ix = -1;
    fr = NULL;
    fl = 0;
  }
  if (index)
    *index = ix;
  if (free)
    *free = fr;
  if (free_len)
    *free_len = fl;
  return id;
}

int pp_metric_group_is_host(pp_metric_group g) {
  return g == PP_GROUP_CPU || g == PP_GROUP_MEMORY || g == PP_GROUP_PRESSURE ||
         g == PP_GROUP_THERMAL;
}

const char *pp_metric_unit_name(pp_metric_unit u) {
  static const char *const names[] = {
      "", "percent", "bytes", "seconds", "per second", "bytes per second",
      "count", "MHz", "watts", "joules", "celsius", "milliseconds"};
  return (unsigned)u < sizeof names / sizeof names[0] ? names[u] : "";
}

const char *pp_metric_group_name(pp_metric_group g) {
  static const char *const names[] = {"cpu",     "memory", "pressure",
                                      "thermal", "process", "perf",
                                      "power",   "gpu"};
  return (unsigned)g < sizeof names / sizeof names[0] ? names[g] : "";
}
