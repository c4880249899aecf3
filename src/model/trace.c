/* SPDX-License-Identifier: MIT */
/*
 * The tools' read-only view of a decoded trace: lookups that need no
 * analysis (metadata, processes, site names, the canonical site of a named
 * series, the zone enclosing a time). Analyses and renderers use these;
 * nothing here calls into src/analyze/, so the model sits below it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/trace.h"
#include "internal.h"

uint32_t pp_thread_pid(const pp_trace *t, const pp_thread *th) {
  return th->pid ? th->pid : t->pid;
}

const char *pp_trace_process_name(const pp_trace *t, uint32_t pid) {
  if (pid == t->pid)
    return pp_trace_meta(t, "process_name");
  char key[40];
  snprintf(key, sizeof key, "process_name.%u", (unsigned)pid);
  return pp_trace_meta(t, key);
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

size_t pp_trace_pids(const pp_trace *t, uint32_t **out) {
  uint32_t *p = pp__malloc((t->nthreads + 1) * sizeof *p);
  *out = p;
  if (!p)
    return 0;
  size_t n = 0;
  for (size_t i = 0; i < t->nthreads; i++) {
    uint32_t pid = pp_thread_pid(t, &t->threads[i]);
    if (pid != t->pid)
      p[n++] = pid;
  }
  pp__sort(p, n, sizeof *p, cmp_u32);
  size_t u = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || p[i] != p[i - 1])
      p[u++] = p[i];
  memmove(p + 1, p, u * sizeof *p);
  p[0] = t->pid;
  return u + 1;
}

const char *pp_trace_meta(const pp_trace *t, const char *key) {
  if (!t || !key)
    return NULL;
  /* The last occurrence wins: a later META record overrides an earlier. */
  for (size_t i = t->nmeta; i-- > 0;) {
    const pp_meta *m = &t->meta[i];
    if (m->key && strcmp(m->key, key) == 0)
      return m->value ? m->value : "";
  }
  return NULL;
}

const char *pp_trace_loc_name(const pp_trace *t, uint32_t loc) {
  if (!t || loc >= t->nlocs)
    return "(unknown)";
  const char *n = t->locs[loc].name;
  return n && n[0] ? n : "(unnamed)";
}

/* ---- series sites --------------------------------------------------------- */

int pp_sort_key_cmp(const void *a, const void *b) {
  const pp_sort_key *x = a, *y = b;
  if (x->primary != y->primary)
    return x->primary > y->primary ? -1 : 1;
  int c = strcmp(x->name, y->name);
  if (c)
    return c;
  return x->loc < y->loc ? -1 : x->loc > y->loc;
}

/* canon[loc] = the lowest loc id with the same name. Counters and frame
 * streams are identified by name, which several call sites may share
 * (PP_COUNTER_SET("queue", ..) in the producer and the consumer). Unnamed
 * locs stay apart. *out is NULL when the trace has no locs. */
int pp_loc_canon(const pp_trace *t, uint32_t **out) {
  *out = NULL;
  if (!t->nlocs)
    return 0;
  uint32_t *canon = pp__malloc(t->nlocs * sizeof *canon);
  pp_sort_key *keys = pp__malloc(t->nlocs * sizeof *keys);
  if (!canon || !keys) {
    pp__free(canon);
    pp__free(keys);
    return -1;
  }
  /* Library metrics (PP_KIND_METRIC) are a namespace of their own: a user
   * counter with the same name is another series. */
  for (size_t i = 0; i < t->nlocs; i++)
    keys[i] = (pp_sort_key){t->locs[i].kind == PP_KIND_METRIC,
                         pp_trace_loc_name(t, (uint32_t)i), (uint32_t)i, i};
  qsort(keys, t->nlocs, sizeof *keys, pp_sort_key_cmp);
  for (size_t i = 0; i < t->nlocs; i++) {
    const char *n = t->locs[keys[i].loc].name;
    int named = n && n[0];
    if (i > 0 && named && keys[i].primary == keys[i - 1].primary &&
        strcmp(keys[i].name, keys[i - 1].name) == 0)
      canon[keys[i].loc] = canon[keys[i - 1].loc];
    else
      canon[keys[i].loc] = keys[i].loc;
  }
  pp__free(keys);
  *out = canon;
  return 0;
}

/* ---- queries ------------------------------------------------------------- */

int pp_zone_enclosing(const pp_thread *th, int64_t ts) {
  if (!th || !th->nzones)
    return -1;
  /* Last instance starting at or before ts; the innermost enclosing
   * instance, if any, is it or one of its ancestors (pre-order). */
  size_t lo = 0, hi = th->nzones;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (th->zones[mid].start <= ts)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0)
    return -1;
  int64_t i = (int64_t)lo - 1;
  while (i >= 0 && th->zones[i].end < ts)
    i = th->zones[i].parent;
  return i >= 0 && i <= INT32_MAX ? (int)i : -1;
}

int64_t pp_details_window_ns(const pp_trace *t) {
  if (t->diag.events_kept >= t->diag.events)
    return -1;
  return pp__span(t->prof.t0, t->diag.first_unkept_ns);
}

void pp_profile_figures_free(pp_profile *p) {
  for (size_t i = 0; i < p->nzones; i++) {
    pp_hist_free(&p->zones[i].hist);
    pp_hist_free(&p->zones[i].self_hist);
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

/* ---- library metrics among a trace's sites ------------------------------ */

uint32_t pp_trace_metric_kind(const pp_trace *t) {
  /* Files since 1.4 give the library's metrics that kind, sampled or not:
   * a counter of another kind there is the user's, whatever its name. */
  if (t->format_minor >= 4)
    return PP_KIND_METRIC;
  for (size_t i = 0; i < t->nlocs; i++)
    if (t->locs[i].kind == PP_KIND_METRIC)
      return PP_KIND_METRIC;
  return PP_KIND_COUNTER;
}

pp_metric_id pp_loc_metric(const pp_trace *t, uint32_t loc, uint32_t mkind,
                           long *index, const char **free, size_t *free_len) {
  /* Before PP_KIND_METRIC, a series' name was all that told */
  if (loc >= t->nlocs ||
      (mkind == PP_KIND_METRIC && t->locs[loc].kind != PP_KIND_METRIC))
    return pp_metric_lookup(NULL, index, free, free_len);
  return pp_metric_lookup(pp_trace_loc_name(t, loc), index, free, free_len);
}
