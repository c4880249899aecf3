/* SPDX-License-Identifier: MIT */
/*
 * Operators by input shape (pp_analyze_shapes): the table an imported
 * profile carries (pp_trace.shapes: per zone site and shapes text, the
 * calls, total and self time over every event, import/profile.c) grouped
 * per site, each site's shapes by total time. The first PP_SHAPES_LISTED
 * of a site are listed; the rest are summed and counted as other shapes,
 * so a site's rows and its other shapes add up to its figures.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "internal.h"
#include "model/trace.h"

/* For the sorts: the trace whose rows and site names are sorted. */
static const pp_trace *sort_trace;

/* Entries of t->shapes by site, then total time descending, count
 * descending and text; the entry without a text (shapes past the
 * importer's bound) last. */
static int cmp_entry(const void *a, const void *b) {
  const pp_op_shape *x = &sort_trace->shapes[*(const size_t *)a],
                    *y = &sort_trace->shapes[*(const size_t *)b];
  if (x->loc != y->loc)
    return x->loc < y->loc ? -1 : 1;
  if (!x->shape != !y->shape)
    return x->shape ? -1 : 1;
  if (x->total_ns != y->total_ns)
    return x->total_ns > y->total_ns ? -1 : 1;
  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  return x->shape ? strcmp(x->shape, y->shape) : 0;
}

static int cmp_op(const void *a, const void *b) {
  const pp_op_shapes *x = a, *y = b;
  if (x->total_ns != y->total_ns)
    return x->total_ns > y->total_ns ? -1 : 1;
  int c = strcmp(pp_trace_loc_name(sort_trace, x->loc),
                 pp_trace_loc_name(sort_trace, y->loc));
  return c ? c : (x->loc > y->loc) - (x->loc < y->loc);
}

void pp_shapes_free(pp_shapes *s) {
  for (size_t i = 0; i < s->nops; i++)
    pp__free(s->ops[i].rows);
  pp__free(s->ops);
  memset(s, 0, sizeof *s);
}

/* One site's entries (idx[0..n), in cmp_entry's order) into op. */
static int build_op(const pp_trace *t, const size_t *idx, size_t n,
                    pp_op_shapes *op) {
  op->loc = t->shapes[idx[0]].loc;
  size_t listed = 0;
  for (size_t k = 0; k < n; k++) {
    const pp_op_shape *e = &t->shapes[idx[k]];
    op->count += e->count;
    op->total_ns = pp__add_sat(op->total_ns, e->total_ns);
    op->self_ns = pp__add_sat(op->self_ns, e->self_ns);
    if (e->shape && listed < PP_SHAPES_LISTED) {
      listed++;
      continue;
    }
    if (e->shape)
      op->other_shapes++;
    else
      op->untold += e->count;
    op->other_count += e->count;
    op->other_total_ns = pp__add_sat(op->other_total_ns, e->total_ns);
    op->other_self_ns = pp__add_sat(op->other_self_ns, e->self_ns);
  }
  if (listed && !(op->rows = pp__calloc(listed, sizeof *op->rows)))
    return -1;
  for (size_t k = 0; k < listed; k++) {
    const pp_op_shape *e = &t->shapes[idx[k]];
    op->rows[k] = (pp_shape_row){e->shape, e->count, e->total_ns, e->self_ns};
  }
  op->nrows = listed;
  return 0;
}

int pp_analyze_shapes(pp_analysis *a) {
  pp_shapes *s = &a->prof.shapes;
  const pp_trace *t = a->trace;
  pp_shapes_free(s);
  if (!t->nshapes)
    return 0;
  size_t *idx = pp__malloc(t->nshapes * sizeof *idx);
  if (!idx)
    return -1;
  for (size_t i = 0; i < t->nshapes; i++)
    idx[i] = i;
  sort_trace = t;
  pp__sort(idx, t->nshapes, sizeof *idx, cmp_entry);
  size_t nops = 0;
  for (size_t i = 0; i < t->nshapes; i++)
    nops += !i || t->shapes[idx[i]].loc != t->shapes[idx[i - 1]].loc;
  int rc = 0;
  if (!(s->ops = pp__calloc(nops, sizeof *s->ops)))
    rc = -1;
  for (size_t i = 0; i < t->nshapes && rc == 0;) {
    size_t j = i + 1;
    while (j < t->nshapes && t->shapes[idx[j]].loc == t->shapes[idx[i]].loc)
      j++;
    rc = build_op(t, idx + i, j - i, &s->ops[s->nops++]);
    i = j;
  }
  if (rc == 0) {
    pp__sort(s->ops, s->nops, sizeof *s->ops, cmp_op);
    if (s->nops > PP_SHAPE_OPS_MAX) {
      for (size_t i = PP_SHAPE_OPS_MAX; i < s->nops; i++)
        pp__free(s->ops[i].rows);
      s->ops_more = s->nops - PP_SHAPE_OPS_MAX;
      s->nops = PP_SHAPE_OPS_MAX;
    }
  }
  sort_trace = NULL;
  pp__free(idx);
  if (rc != 0)
    pp_shapes_free(s);
  return rc;
}
