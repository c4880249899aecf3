/* SPDX-License-Identifier: MIT */
/*
 * The results document's CPU stack samples ("stacks"): where each zone's
 * CPU time went, by function. Each sample of the trace (model/stacks.h)
 * is placed on its thread at its time: under the innermost zone open
 * there and every zone around it (a stage's table holds what its nested
 * zones ran), under "(between zones)" when none is open or its thread
 * recorded no zones, and always under "(whole program)". Per group, a
 * function's self share is the share of the group's samples taken in
 * it, its total share the share with it anywhere on the stack. The text
 * report, the summary JSON and the HTML page lay the table out.
 * Design: docs/internals/stacks.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "internal.h"
#include "results/doc.h"

/* Functions shown per group; the rest are counted in a remark. */
#define TOP_FUNCTIONS 10

enum { GROUP_ALL = 0, GROUP_OUTSIDE = 1, GROUP_ZONES = 2 };

typedef struct group {
  uint64_t samples;
  uint32_t *self, *total; /* per frame: NULL until the group's first */
} group;

typedef struct fn_row {
  uint32_t frame;
  uint32_t self, total;
} fn_row;

static int by_self(const void *a, const void *b) {
  const fn_row *x = a, *y = b;
  if (x->self != y->self)
    return x->self < y->self ? 1 : -1;
  if (x->total != y->total)
    return x->total < y->total ? 1 : -1;
  return x->frame < y->frame ? -1 : x->frame > y->frame;
}

static const pp_col stack_cols[] = {
    {"zone", "zone", PP_VALUE_TEXT, PP_COL_GROUP, NULL},
    {"function", "function", PP_VALUE_TEXT, 0, NULL},
    {"module", "file", PP_VALUE_TEXT, 0, NULL},
    {"self_pct", "self", PP_VALUE_PCT, 0, NULL},
    {"total_pct", "total", PP_VALUE_PCT, 0, NULL},
    {"self_samples", "samples", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"zone_samples", "of", PP_VALUE_COUNT, PP_COL_INT | PP_COL_JSON_ONLY, NULL},
};

/* Count sample i into group g: its innermost frame's self, every distinct
 * frame's total (stamp[f] == epoch: f already counted this time; each
 * call has an epoch of its own). */
static int count(group *g, const pp_stack_set *s, size_t i, uint32_t *stamp,
                 uint32_t epoch) {
  if (!g->self) {
    g->self = pp__calloc(s->nframes, sizeof *g->self);
    g->total = pp__calloc(s->nframes, sizeof *g->total);
    if (!g->self || !g->total)
      return -1;
  }
  const pp_stack_rec *r = &s->samples[i];
  g->samples++;
  if (r->n)
    g->self[s->ids[r->first]]++;
  for (uint32_t k = 0; k < r->n; k++) {
    uint32_t f = s->ids[r->first + k];
    if (stamp[f] != epoch) {
      stamp[f] = epoch;
      g->total[f]++;
    }
  }
  return 0;
}

/* The group rows of g: its top functions by self samples. */
static int group_rows(pp_table *t, const pp_stack_set *s, const group *g,
                      const char *name, uint32_t row_group, fn_row *rows) {
  size_t n = 0;
  for (size_t f = 0; f < s->nframes; f++)
    if (g->self[f])
      rows[n++] = (fn_row){(uint32_t)f, g->self[f], g->total[f]};
  qsort(rows, n, sizeof *rows, by_self);
  size_t shown = n < TOP_FUNCTIONS ? n : TOP_FUNCTIONS;
  for (size_t k = 0; k < shown; k++) {
    const pp_stack_frame *fr = &s->frames[rows[k].frame];
    long r = pp_table_row(t);
    pp_row_group(t, r, row_group);
    pp_cell_text(t, r, "zone", name);
    pp_cell_text(t, r, "function", fr->name);
    if (fr->module)
      pp_cell_text(t, r, "module", fr->module);
    pp_cell_num(t, r, "self_pct", 100.0 * rows[k].self / (double)g->samples);
    pp_cell_num(t, r, "total_pct", 100.0 * rows[k].total / (double)g->samples);
    pp_cell_num(t, r, "self_samples", rows[k].self);
    pp_cell_num(t, r, "zone_samples", (double)g->samples);
  }
  if (n > shown)
    pp_table_remark(t, "%s: %zu more functions took samples", name, n - shown);
  return 0;
}

int pp__stack_tables(const pp_analysis *a, pp_doc *d) {
  const pp_trace *tr = a->trace;
  const pp_stack_set *s = &tr->stacks;
  /* asked for and not taken: `pipeprof run` said why in the metadata */
  const char *why = pp_trace_meta(tr, "unavailable.stacks");
  if (!s->nsamples && !s->lost && !why)
    return 0;
  pp_table *t = pp_doc_table(
      d, "stacks", "CPU stack samples",
      "where each zone's CPU time went: self = samples taken in the "
      "function, total = with it on the stack, of the zone's samples",
      stack_cols, sizeof stack_cols / sizeof *stack_cols);
  if (!t)
    return -1;
  if (why && !s->nsamples) {
    pp_table_unavailable(t, why);
    return pp_doc_ok(d) ? 0 : -1;
  }
  pp_table_empty(t, "no stack sample could be walked");
  size_t ngroups = GROUP_ZONES + tr->nlocs;
  group *g = pp__calloc(ngroups, sizeof *g);
  uint32_t *stamp = pp__calloc(s->nframes ? s->nframes : 1, sizeof *stamp);
  uint32_t *zstamp = pp__calloc(tr->nlocs ? tr->nlocs : 1, sizeof *zstamp);
  fn_row *rows = pp__malloc((s->nframes ? s->nframes : 1) * sizeof *rows);
  int rc = g && stamp && zstamp && rows ? 0 : -1;
  uint64_t placed = 0;
  uint32_t epoch = 0; /* wraps after 4 G counts: then stamps start over */
  for (size_t i = 0; rc == 0 && i < s->nsamples; i++) {
    const pp_stack_rec *r = &s->samples[i];
    if (epoch > UINT32_MAX - 1024) {
      memset(stamp, 0, s->nframes * sizeof *stamp);
      epoch = 0;
    }
    rc = count(&g[GROUP_ALL], s, i, stamp, ++epoch);
    size_t ti = pp_trace_thread_index(tr, r->tid);
    int z = ti < a->nthreads ? pp_zone_enclosing(a, ti, r->t) : -1;
    if (z < 0 && rc == 0)
      rc = count(&g[GROUP_OUTSIDE], s, i, stamp, ++epoch);
    if (z >= 0)
      placed++;
    /* each zone site around the sample once (a recursive zone too) */
    for (int k = z; k >= 0 && rc == 0; k = a->threads[ti].zones[k].parent) {
      uint32_t loc = a->threads[ti].zones[k].loc;
      if (loc >= tr->nlocs || zstamp[loc] == (uint32_t)i + 1)
        continue;
      zstamp[loc] = (uint32_t)i + 1;
      if (epoch > UINT32_MAX - 1024) {
        memset(stamp, 0, s->nframes * sizeof *stamp);
        epoch = 0;
      }
      rc = count(&g[GROUP_ZONES + loc], s, i, stamp, ++epoch);
    }
  }
  if (rc == 0) {
    /* whole program, the zones by samples, then between zones */
    size_t *order = pp__malloc((tr->nlocs ? tr->nlocs : 1) * sizeof *order);
    size_t nz = 0;
    if (!order)
      rc = -1;
    for (size_t l = 0; rc == 0 && l < tr->nlocs; l++)
      if (g[GROUP_ZONES + l].samples)
        order[nz++] = l;
    for (size_t x = 1; rc == 0 && x < nz; x++) /* by samples, few zones */
      for (size_t y = x; y > 0 && g[GROUP_ZONES + order[y]].samples >
                                      g[GROUP_ZONES + order[y - 1]].samples;
           y--) {
        size_t tmp = order[y];
        order[y] = order[y - 1];
        order[y - 1] = tmp;
      }
    uint32_t row_group = 1;
    if (rc == 0 && g[GROUP_ALL].samples)
      rc =
          group_rows(t, s, &g[GROUP_ALL], "(whole program)", row_group++, rows);
    for (size_t x = 0; rc == 0 && x < nz; x++)
      rc = group_rows(t, s, &g[GROUP_ZONES + order[x]],
                      tr->locs[order[x]].name ? tr->locs[order[x]].name : "?",
                      row_group++, rows);
    if (rc == 0 && g[GROUP_OUTSIDE].samples)
      rc = group_rows(t, s, &g[GROUP_OUTSIDE], "(between zones)", row_group,
                      rows);
    pp__free(order);
  }
  if (rc == 0) {
    pp_table_remark(t,
                    "%zu samples at %d Hz per thread of CPU time (%s), "
                    "%llu inside zones",
                    s->nsamples, s->hz, s->mode[0] ? s->mode : "?",
                    (unsigned long long)placed);
    if (s->lost)
      pp_table_remark(t, "%llu samples lost: the kernel's buffers were full",
                      (unsigned long long)s->lost);
    if (s->broken)
      pp_table_remark(t,
                      "%llu samples whose frames could not be walked are "
                      "left out",
                      (unsigned long long)s->broken);
    if (tr->from_stats)
      pp_table_remark(t, "a stats-mode trace holds no zone instances: "
                         "samples are not placed in zones");
  }
  for (size_t k = 0; g && k < ngroups; k++) {
    pp__free(g[k].self);
    pp__free(g[k].total);
  }
  pp__free(g);
  pp__free(stamp);
  pp__free(zstamp);
  pp__free(rows);
  return rc == 0 && pp_doc_ok(d) ? 0 : -1;
}
