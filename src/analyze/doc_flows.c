/* SPDX-License-Identifier: MIT */
/*
 * The results document's "flows": per flow of items (pp_flow_begin ...
 * pp_flow_end), the items followed, their latency and where it went,
 * working in stage zones or queued between stages, in time and as
 * shares, and in a run of several processes how many items crossed from
 * one to another. The text report, the summary JSON (pipeline.flows, whose
 * latency histogram and critical paths are written beside each row) and
 * the HTML page lay it out.
 */
#include <stdio.h>

#include "analyze.h"
#include "internal.h"
#include "pipeline.h"
#include "results/doc.h"

static const pp_col flow_cols[] = {
    {"name", "flow", PP_VALUE_TEXT, 0, NULL},
    {"items", "items", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"incomplete", "incomplete", PP_VALUE_COUNT, PP_COL_INT, NULL},
    /* a run of several processes: items one began and another ended */
    {"crossed", "across processes", PP_VALUE_COUNT, PP_COL_INT, NULL},
    /* in the JSON the row's "latency" object (pp_summary_pipeline_json) */
    {"latency.p50_ns", "latency p50 / p90 / p99", PP_VALUE_NS, PP_COL_VIEW_ONLY,
     NULL},
    {"latency.p90_ns", "latency p50 / p90 / p99", PP_VALUE_NS, PP_COL_VIEW_ONLY,
     NULL},
    {"latency.p99_ns", "latency p50 / p90 / p99", PP_VALUE_NS, PP_COL_VIEW_ONLY,
     NULL},
    {"latency.max_ns", "max", PP_VALUE_NS, PP_COL_VIEW_ONLY, NULL},
    {"zone_ns", "working / queued", PP_VALUE_NS, PP_COL_INT, NULL},
    {"wait_ns", "working / queued", PP_VALUE_NS, PP_COL_INT, NULL},
    {"zone_pct", "working / queued, %", PP_VALUE_PCT, 0, NULL},
    {"wait_pct", "working / queued, %", PP_VALUE_PCT, 0, NULL},
};

int pp__flow_table(const pp_analysis *a, pp_doc *d) {
  const pp_pipeline *p = &a->prof.pipe;
  if (!p->nflows)
    return 0;
  pp_table *t = pp_doc_table(
      d, "flows", "flows",
      "items followed from begin to end; working = in stage zones, queued "
      "= between stages, summed over the items",
      flow_cols, sizeof flow_cols / sizeof *flow_cols);
  if (!t)
    return -1;
  uint32_t *pids = NULL;
  size_t npids = pp_trace_pids(a->trace, &pids);
  pp__free(pids);
  for (size_t i = 0; i < p->nflows; i++) {
    const pp_flow_stats *f = &p->flows[i];
    long r = pp_table_row(t);
    pp_cell_text(t, r, "name", pp_trace_loc_name(a->trace, f->loc));
    pp_cell_count(t, r, "items", f->items);
    pp_cell_count(t, r, "incomplete", f->incomplete);
    if (npids > 1)
      pp_cell_count(t, r, "crossed", f->crossed);
    if (f->items) {
      pp_cell_num(t, r, "latency.p50_ns", (double)pp_hist_percentile(&f->latency, 50));
      pp_cell_num(t, r, "latency.p90_ns", (double)pp_hist_percentile(&f->latency, 90));
      pp_cell_num(t, r, "latency.p99_ns", (double)pp_hist_percentile(&f->latency, 99));
      pp_cell_num(t, r, "latency.max_ns", (double)f->latency.max);
    }
    pp_cell_int(t, r, "zone_ns", f->zone_ns);
    pp_cell_int(t, r, "wait_ns", f->wait_ns);
    double total = (double)f->zone_ns + (double)f->wait_ns;
    pp_cell_share(t, r, "zone_pct", (double)f->zone_ns, total);
    pp_cell_share(t, r, "wait_pct", (double)f->wait_ns, total);
    if (!f->items)
      pp_row_note(t, r, "no item followed from begin to end");
  }
  return pp_doc_ok(d) ? 0 : -1;
}
