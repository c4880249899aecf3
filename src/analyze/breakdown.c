/* SPDX-License-Identifier: MIT */
/*
 * Where each top-level zone's time goes (pp_analyze_breakdown): for every
 * site of a top-level zone (a "stage": a request handler, torch's
 * record_function("infer"), ONNX Runtime's model_run), the sites of the
 * zones nested in its instances with their count, total and self time.
 * The self times of a stage's nested zones plus the stage's own self time
 * add up to the stage's total, so the shares say where the stage spent
 * its time. Zone instances are in pre-order per thread, so each instance's
 * top-level ancestor is the last top-level instance before it.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "internal.h"
#include "model/trace.h"

#define STAGE_ITSELF UINT32_MAX /* the op field of a stage's own entry */

typedef struct entry {
  uint64_t key; /* top loc << 32 | op loc (STAGE_ITSELF: the stage) */
  uint64_t count;
  int64_t total_ns, self_ns;
} entry;

typedef struct table {
  entry *e;
  uint32_t *slot; /* index + 1 into e; 0: empty */
  size_t cap, n, cap_e;
} table;

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

static int table_grow(table *t) {
  size_t cap = t->cap ? t->cap * 2 : 256;
  uint32_t *slot = pp__calloc(cap, sizeof *slot);
  if (!slot)
    return -1;
  for (size_t i = 0; i < t->n; i++) {
    size_t j = (size_t)mix(t->e[i].key) & (cap - 1);
    while (slot[j])
      j = (j + 1) & (cap - 1);
    slot[j] = (uint32_t)i + 1;
  }
  pp__free(t->slot);
  t->slot = slot;
  t->cap = cap;
  return 0;
}

/* The entry of key, created empty. NULL when out of memory. */
static entry *table_get(table *t, uint64_t key) {
  if ((t->n + 1) * 2 > t->cap && table_grow(t) != 0)
    return NULL;
  size_t j = (size_t)mix(key) & (t->cap - 1);
  while (t->slot[j]) {
    entry *e = &t->e[t->slot[j] - 1];
    if (e->key == key)
      return e;
    j = (j + 1) & (t->cap - 1);
  }
  if (t->n >= UINT32_MAX - 1 ||
      pp__grow((void **)&t->e, &t->cap_e, t->n + 1, sizeof *t->e) != 0)
    return NULL;
  t->slot[j] = (uint32_t)++t->n;
  entry *e = &t->e[t->n - 1];
  memset(e, 0, sizeof *e);
  e->key = key;
  return e;
}

static int add(table *t, uint32_t top, uint32_t op, const pp_zone_inst *z) {
  entry *e = table_get(t, (uint64_t)top << 32 | op);
  if (!e)
    return -1;
  e->count++;
  e->total_ns = pp__add_sat(e->total_ns, pp__span(z->start, z->end));
  e->self_ns = pp__add_sat(e->self_ns, z->self);
  return 0;
}

/* For the sorts: the trace whose site names break ties. */
static const pp_trace *sort_trace;

static int cmp_entry(const void *a, const void *b) {
  const entry *x = a, *y = b;
  uint32_t tx = (uint32_t)(x->key >> 32), ty = (uint32_t)(y->key >> 32);
  if (tx != ty)
    return tx < ty ? -1 : 1;
  int sx = (uint32_t)x->key == STAGE_ITSELF,
      sy = (uint32_t)y->key == STAGE_ITSELF;
  if (sx != sy)
    return sx ? -1 : 1; /* the stage's own entry first */
  if (x->self_ns != y->self_ns)
    return x->self_ns > y->self_ns ? -1 : 1;
  int c = strcmp(pp_trace_loc_name(sort_trace, (uint32_t)x->key),
                 pp_trace_loc_name(sort_trace, (uint32_t)y->key));
  return c ? c : (x->key > y->key) - (x->key < y->key);
}

static int cmp_stage(const void *a, const void *b) {
  const pp_breakdown_stage *x = a, *y = b;
  if (x->total_ns != y->total_ns)
    return x->total_ns > y->total_ns ? -1 : 1;
  int c = strcmp(pp_trace_loc_name(sort_trace, x->loc),
                 pp_trace_loc_name(sort_trace, y->loc));
  return c ? c : (x->loc > y->loc) - (x->loc < y->loc);
}

void pp_breakdown_free(pp_breakdown *b) {
  for (size_t i = 0; i < b->nstages; i++)
    pp__free(b->stages[i].ops);
  pp__free(b->stages);
  memset(b, 0, sizeof *b);
}

/* The stages of the sorted entries into b: each stage with nested zones,
 * its ops up to the bound. */
static int build(pp_breakdown *b, const entry *e, size_t n) {
  size_t nst = 0;
  for (size_t i = 0; i < n; i++)
    nst += (uint32_t)e[i].key == STAGE_ITSELF && i + 1 < n &&
           e[i + 1].key >> 32 == e[i].key >> 32;
  if (!nst)
    return 0;
  if (!(b->stages = pp__calloc(nst, sizeof *b->stages)))
    return -1;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && e[j].key >> 32 == e[i].key >> 32)
      j++;
    if ((uint32_t)e[i].key == STAGE_ITSELF && j > i + 1) {
      pp_breakdown_stage *s = &b->stages[b->nstages++];
      s->loc = (uint32_t)(e[i].key >> 32);
      s->count = e[i].count;
      s->total_ns = e[i].total_ns;
      s->self_ns = e[i].self_ns;
      size_t nops = j - i - 1;
      if (nops > PP_BREAKDOWN_OPS_MAX) {
        s->ops_more = nops - PP_BREAKDOWN_OPS_MAX;
        nops = PP_BREAKDOWN_OPS_MAX;
      }
      if (!(s->ops = pp__calloc(nops, sizeof *s->ops)))
        return -1;
      for (size_t k = 0; k < nops; k++) {
        const entry *x = &e[i + 1 + k];
        s->ops[k] = (pp_breakdown_op){(uint32_t)x->key, x->count, x->total_ns,
                                      x->self_ns};
      }
      s->nops = nops;
    }
    i = j;
  }
  pp__sort(b->stages, b->nstages, sizeof *b->stages, cmp_stage);
  if (b->nstages > PP_BREAKDOWN_STAGES_MAX) {
    for (size_t i = PP_BREAKDOWN_STAGES_MAX; i < b->nstages; i++)
      pp__free(b->stages[i].ops);
    b->stages_more = b->nstages - PP_BREAKDOWN_STAGES_MAX;
    b->nstages = PP_BREAKDOWN_STAGES_MAX;
  }
  return 0;
}

int pp_analyze_breakdown(pp_analysis *a) {
  pp_breakdown *b = &a->prof.breakdown;
  pp_breakdown_free(b);
  table t = {0};
  int rc = 0;
  for (size_t i = 0; i < a->nthreads && rc == 0; i++) {
    const pp_thread_figures *f = &a->threads[i];
    uint32_t top = 0;
    int top_ok = 0; /* the current top-level instance has a duration */
    for (size_t k = 0; k < f->nzones && rc == 0; k++) {
      const pp_zone_inst *z = &f->zones[k];
      if (z->depth == 0) {
        top = z->loc;
        top_ok = !z->unclosed;
      }
      if (!top_ok || z->unclosed)
        continue; /* no measured duration (pair/zones.h) */
      rc = add(&t, top, z->depth == 0 ? STAGE_ITSELF : z->loc, z);
    }
  }
  if (rc == 0) {
    sort_trace = a->trace;
    pp__sort(t.e, t.n, sizeof *t.e, cmp_entry);
    rc = build(b, t.e, t.n);
    sort_trace = NULL;
  }
  pp__free(t.e);
  pp__free(t.slot);
  if (rc != 0)
    pp_breakdown_free(b);
  return rc;
}
