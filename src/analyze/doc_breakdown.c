/* SPDX-License-Identifier: MIT */
/*
 * The results document's answers to "where does the time inside a zone
 * or an operator go":
 * - "breakdown_stages" and "breakdown_nested": each top-level zone (its
 *   calls, time and the time in the zone itself, outside any nested zone)
 *   and its nested zones by self time, each with its share of the
 *   top-level zone's time; the facts "breakdown" (JSON-only: the
 *   top-level zones the analysis did not keep);
 * - "shapes_operators" and "shapes": an imported profile's operators and
 *   their calls by input shape, each shape's share of the operator's
 *   time, and a row of the shapes not listed (in the tables only: the
 *   JSON has it as the operator's "other_shapes"); the facts "shapes"
 *   (JSON-only: the operators not kept).
 * The nested rows are grouped by their top-level zone or operator
 * (pp_row_group): the text report names it once, the summary JSON lists
 * each group under its row (breakdown.stages[].nested,
 * shapes.operators[].by_shape).
 */
#include <stdio.h>

#include "analyze.h"
#include "internal.h"
#include "results/doc.h"

#define TOP_LABEL "top-level zone"

static const pp_col stage_cols[] = {
    {"name", TOP_LABEL, PP_VALUE_TEXT, 0, NULL},
    {"count", "calls", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"total_ns", "total", PP_VALUE_NS, PP_COL_INT, NULL},
    {"self_ns", "in the zone itself", PP_VALUE_NS, PP_COL_INT, NULL},
    {"self_pct", "in the zone itself", PP_VALUE_PCT, PP_COL_BAR, NULL},
    {"nested_more", "nested zones not listed", PP_VALUE_COUNT,
     PP_COL_INT | PP_COL_JSON_ONLY, NULL},
};

static const pp_col nested_cols[] = {
    {"stage", TOP_LABEL, PP_VALUE_TEXT, PP_COL_VIEW_ONLY | PP_COL_GROUP, NULL},
    {"name", "nested zone", PP_VALUE_TEXT, 0, NULL},
    {"count", "calls", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"self_ns", "self", PP_VALUE_NS, PP_COL_INT, NULL},
    {"self_pct", "share", PP_VALUE_PCT, PP_COL_BAR, NULL},
    {"total_ns", "total", PP_VALUE_NS, PP_COL_INT, NULL},
};

static int breakdown(const pp_analysis *a, pp_doc *d) {
  const pp_trace *tr = a->trace;
  const pp_breakdown *bd = &a->prof.breakdown;
  pp_table *f = pp_doc_facts(d, "breakdown", "", NULL);
  pp_fact_json_only(f, pp_fact_int(f, "stages_more",
                                   "top-level zones not "
                                   "listed",
                                   (int64_t)bd->stages_more, PP_VALUE_COUNT));
  if (!bd->nstages)
    return pp_doc_ok(d) ? 0 : -1;
  pp_table *s = pp_doc_table(
      d, "breakdown_stages", "inside the top-level zones",
      "the time of each top-level zone that has nested zones, and of it "
      "the time in the zone itself, outside any nested zone",
      stage_cols, sizeof stage_cols / sizeof *stage_cols);
  pp_table *n = pp_doc_table(
      d, "breakdown_nested", "nested zones",
      "by self time, with the share of their top-level zone's time",
      nested_cols, sizeof nested_cols / sizeof *nested_cols);
  if (!s || !n)
    return -1;
  for (size_t i = 0; i < bd->nstages; i++) {
    const pp_breakdown_stage *st = &bd->stages[i];
    const char *name = pp_trace_loc_name(tr, st->loc);
    long r = pp_table_row(s);
    pp_cell_text(s, r, "name", name);
    pp_cell_count(s, r, "count", st->count);
    pp_cell_int(s, r, "total_ns", st->total_ns);
    pp_cell_int(s, r, "self_ns", st->self_ns);
    pp_cell_share(s, r, "self_pct", st->self_ns, st->total_ns);
    pp_cell_count(s, r, "nested_more", st->ops_more);
    pp_row_group(s, r, (uint32_t)i + 1);
    for (size_t k = 0; k < st->nops; k++) {
      const pp_breakdown_op *op = &st->ops[k];
      long q = pp_table_row(n);
      pp_row_group(n, q, (uint32_t)i + 1);
      pp_cell_text(n, q, "stage", name);
      pp_cell_text(n, q, "name", pp_trace_loc_name(tr, op->loc));
      pp_cell_count(n, q, "count", op->count);
      pp_cell_int(n, q, "self_ns", op->self_ns);
      pp_cell_share(n, q, "self_pct", op->self_ns, st->total_ns);
      pp_cell_int(n, q, "total_ns", op->total_ns);
    }
    if (st->ops_more)
      pp_table_remark(n,
                      "%s: %llu more nested zones are not listed (the "
                      "analysis keeps %u)",
                      name, (unsigned long long)st->ops_more,
                      PP_BREAKDOWN_OPS_MAX);
  }
  if (bd->stages_more)
    pp_table_remark(s,
                    "%llu more top-level zones with nested zones are not "
                    "listed (the analysis keeps %u)",
                    (unsigned long long)bd->stages_more,
                    PP_BREAKDOWN_STAGES_MAX);
  return pp_doc_ok(d) ? 0 : -1;
}

static const pp_col op_cols[] = {
    {"name", "operator", PP_VALUE_TEXT, 0, NULL},
    {"count", "calls", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"total_ns", "total", PP_VALUE_NS, PP_COL_INT, NULL},
    {"self_ns", "self", PP_VALUE_NS, PP_COL_INT, NULL},
    {"shapes", "shapes", PP_VALUE_COUNT, PP_COL_INT, NULL},
    /* the shapes not listed, a row of the "shapes" table in the views */
    {"other_shapes.shapes", "", PP_VALUE_COUNT, PP_COL_INT | PP_COL_JSON_ONLY,
     NULL},
    {"other_shapes.untold", "", PP_VALUE_COUNT, PP_COL_INT | PP_COL_JSON_ONLY,
     NULL},
    {"other_shapes.count", "", PP_VALUE_COUNT, PP_COL_INT | PP_COL_JSON_ONLY,
     NULL},
    {"other_shapes.total_ns", "", PP_VALUE_NS, PP_COL_INT | PP_COL_JSON_ONLY,
     NULL},
    {"other_shapes.self_ns", "", PP_VALUE_NS, PP_COL_INT | PP_COL_JSON_ONLY,
     NULL},
    {"other_shapes.total_pct", "", PP_VALUE_PCT, PP_COL_JSON_ONLY, NULL},
};

static const pp_col shape_cols[] = {
    {"operator", "operator", PP_VALUE_TEXT, PP_COL_VIEW_ONLY | PP_COL_GROUP,
     NULL},
    {"input_shapes", "input shapes", PP_VALUE_TEXT, 0, NULL},
    {"count", "calls", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"total_ns", "total", PP_VALUE_NS, PP_COL_INT, NULL},
    {"self_ns", "self", PP_VALUE_NS, PP_COL_INT, NULL},
    {"total_pct", "share", PP_VALUE_PCT, PP_COL_BAR, NULL},
};

/* A row of shapes table t in group g of operator name. */
static long shape_row(pp_table *t, uint32_t g, const char *name,
                      const char *shapes, uint64_t count, int64_t total,
                      int64_t self, int64_t op_total) {
  long r = pp_table_row(t);
  pp_row_group(t, r, g);
  pp_cell_text(t, r, "operator", name);
  pp_cell_text(t, r, "input_shapes", shapes);
  pp_cell_count(t, r, "count", count);
  pp_cell_int(t, r, "total_ns", total);
  pp_cell_share(t, r, "total_pct", total, op_total);
  pp_cell_int(t, r, "self_ns", self);
  return r;
}

static int shapes(const pp_analysis *a, pp_doc *d) {
  const pp_trace *tr = a->trace;
  const pp_shapes *sh = &a->prof.shapes;
  pp_table *f = pp_doc_facts(d, "shapes", "", NULL);
  pp_fact_json_only(f, pp_fact_int(f, "operators_more", "operators not listed",
                                   (int64_t)sh->ops_more, PP_VALUE_COUNT));
  if (!sh->nops)
    return pp_doc_ok(d) ? 0 : -1;
  pp_table *o = pp_doc_table(
      d, "shapes_operators", "operators by input shape",
      "the imported profile's operators that recorded their inputs' "
      "shapes, largest first, from every event of the profile",
      op_cols, sizeof op_cols / sizeof *op_cols);
  pp_table *t =
      pp_doc_table(d, "shapes_by_shape", "their calls by input shape",
                   "by total time, with the share of the operator's time",
                   shape_cols, sizeof shape_cols / sizeof *shape_cols);
  if (!o || !t)
    return -1;
  for (size_t i = 0; i < sh->nops; i++) {
    const pp_op_shapes *op = &sh->ops[i];
    const char *name = pp_trace_loc_name(tr, op->loc);
    uint32_t g = (uint32_t)i + 1;
    long r = pp_table_row(o);
    pp_row_group(o, r, g);
    pp_cell_text(o, r, "name", name);
    pp_cell_count(o, r, "count", op->count);
    pp_cell_int(o, r, "total_ns", op->total_ns);
    pp_cell_int(o, r, "self_ns", op->self_ns);
    pp_cell_count(o, r, "shapes", op->nrows + op->other_shapes);
    pp_cell_count(o, r, "other_shapes.shapes", op->other_shapes);
    pp_cell_count(o, r, "other_shapes.untold", op->untold);
    pp_cell_count(o, r, "other_shapes.count", op->other_count);
    pp_cell_int(o, r, "other_shapes.total_ns", op->other_total_ns);
    pp_cell_int(o, r, "other_shapes.self_ns", op->other_self_ns);
    pp_cell_share(o, r, "other_shapes.total_pct", op->other_total_ns,
                  op->total_ns);
    for (size_t k = 0; k < op->nrows; k++)
      shape_row(t, g, name, op->rows[k].shape, op->rows[k].count,
                op->rows[k].total_ns, op->rows[k].self_ns, op->total_ns);
    if (op->other_shapes || op->untold) {
      char label[96];
      if (op->untold)
        snprintf(label, sizeof label, "(%llu other shapes, more untold)",
                 (unsigned long long)op->other_shapes);
      else
        snprintf(label, sizeof label, "(%llu other shape%s)",
                 (unsigned long long)op->other_shapes,
                 op->other_shapes == 1 ? "" : "s");
      pp_row_view_only(t, shape_row(t, g, name, label, op->other_count,
                                    op->other_total_ns, op->other_self_ns,
                                    op->total_ns));
    }
  }
  if (sh->ops_more)
    pp_table_remark(o,
                    "%llu more operators with shapes are not listed (the "
                    "analysis keeps %u)",
                    (unsigned long long)sh->ops_more, PP_SHAPE_OPS_MAX);
  return pp_doc_ok(d) ? 0 : -1;
}

int pp__breakdown_tables(const pp_analysis *a, pp_doc *d) {
  return breakdown(a, d) || shapes(a, d) ? -1 : 0;
}
