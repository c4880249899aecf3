/* SPDX-License-Identifier: MIT */
/*
 * The tools' read-only view of a decoded trace: lookups that need no
 * analysis (metadata, processes, site names, the canonical site of a named
 * series, GPU zone order, CUDA names). Analyses and renderers use these;
 * nothing here calls into src/analyze/, so the model sits below it.
 */
#include <errno.h>
#include <math.h>
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

static char *dup_or_empty(const char *s) { return pp__strdup(s ? s : ""); }

int pp__meta_add(pp_trace *t, const char *key, const char *value) {
  if (pp__grow((void **)&t->meta, &t->cap_meta, t->nmeta + 1,
               sizeof(pp_meta)) != 0)
    return -1;
  pp_meta *m = &t->meta[t->nmeta];
  m->key = dup_or_empty(key);
  m->value = dup_or_empty(value);
  if (!m->key || !m->value) {
    pp__free(m->key);
    pp__free(m->value);
    return -1;
  }
  t->nmeta++;
  return 0;
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

int pp_meta_number(const char *s, double *out) {
  if (!s || !*s || !(*s == '-' || *s == '.' || (*s >= '0' && *s <= '9')) ||
      strpbrk(s, "xX")) /* decimal only: strtod would read "0x10" */
    return 0;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || *end || !isfinite(v))
    return 0;
  *out = v;
  return 1;
}

int pp_trace_meta_num(const pp_trace *t, const char *key, double *out) {
  return pp_meta_number(pp_trace_meta(t, key), out);
}

const char *pp_reason_strip(const char *r) {
  static const char *const pre[] = {"hardware counters unavailable: ",
                                    "unavailable: "};
  for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
    if (strncmp(r, pre[i], strlen(pre[i])) == 0)
      return r + strlen(pre[i]);
  return r;
}

const char *pp_trace_unavailable(const pp_trace *t, const char *const *groups) {
  char key[128] = "unavailable.";
  const size_t at = sizeof "unavailable." - 1;
  for (; *groups; groups++) {
    size_t n = strlen(*groups);
    if (at + n >= sizeof key)
      continue;
    memcpy(key + at, *groups, n + 1); /* no format: asked per figure */
    const char *r = pp_trace_meta(t, key);
    if (r)
      return pp_reason_strip(r);
  }
  return NULL;
}

size_t pp_trace_thread_index(const pp_trace *t, uint64_t tid) {
  if (t->tid_index && t->tid_index_n == t->nthreads) {
    size_t m = t->tid_index_cap - 1;
    for (size_t j = pp__tid_slot(tid, t->tid_index_cap); t->tid_index[j];
         j = (j + 1) & m)
      if (t->threads[t->tid_index[j] - 1].tid == tid)
        return t->tid_index[j] - 1;
    return t->nthreads;
  }
  size_t i = 0;
  while (i < t->nthreads && t->threads[i].tid != tid)
    i++;
  return i;
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

static int cmp_gpu(const void *a, const void *b) {
  const pp_gpu_zone_rec *x = a, *y = b;
  if (x->device != y->device)
    return x->device < y->device ? -1 : 1;
  if (x->stream != y->stream)
    return x->stream < y->stream ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->loc < y->loc ? -1 : x->loc > y->loc;
}

void pp__trace_sort_gpu(pp_trace *t) {
  pp__sort(t->gpu, t->ngpu, sizeof *t->gpu, cmp_gpu);
}

const char *pp_cuda_name(const pp_cuda_trace *c, uint32_t id) {
  if (!c || id >= c->nnames || !c->names[id])
    return "(unknown)";
  return c->names[id];
}

void pp_cuda_trace_free(pp_cuda_trace *c) {
  if (!c)
    return;
  for (size_t i = 0; i < c->nnames; i++)
    pp__free(c->names[i]);
  pp__free(c->names);
  pp__free(c->kernels);
  pp__free(c->memcpys);
  pp__free(c->memsets);
  pp__free(c->syncs);
  pp__free(c->apis);
  memset(c, 0, sizeof *c);
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
