/* SPDX-License-Identifier: MIT */
/*
 * The results document's figures of the pipeline's histograms, for the
 * summary JSON's objects that carry them beside the histogram itself:
 * "queue_waits" (a row per queue, in the "queues" table's order: its
 * items' push-to-pop wait) and "flow_latencies" (a row per flow, in the
 * "flows" table's order: its items' begin-to-end latency). Each row: the
 * count, mean, min, max and the p50, p90, p99 and p99.9 in ns, 0 without
 * items (the summary's shape since schema_minor 1). The text report and
 * the page show the tables these rows belong to, not these tables.
 */
#include "analyze.h"
#include "internal.h"
#include "pipeline.h"
#include "results/doc.h"

static const pp_col hist_cols[] = {
    {"count", "count", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"mean_ns", "mean", PP_VALUE_NS, 0, NULL},
    {"min_ns", "min", PP_VALUE_NS, PP_COL_INT, NULL},
    {"max_ns", "max", PP_VALUE_NS, PP_COL_INT, NULL},
    {"p50_ns", "p50", PP_VALUE_NS, PP_COL_INT, NULL},
    {"p90_ns", "p90", PP_VALUE_NS, PP_COL_INT, NULL},
    {"p99_ns", "p99", PP_VALUE_NS, PP_COL_INT, NULL},
    {"p999_ns", "p99.9", PP_VALUE_NS, PP_COL_INT, NULL},
};

static void hist_row(pp_table *t, const pp_hist *h) {
  long r = pp_table_row(t);
  pp_cell_count(t, r, "count", h->count);
  pp_cell_num(t, r, "mean_ns", h->count ? pp_hist_mean(h) : 0.0);
  pp_cell_count(t, r, "min_ns", h->count ? h->min : 0);
  pp_cell_count(t, r, "max_ns", h->count ? h->max : 0);
  pp_cell_count(t, r, "p50_ns", pp_hist_percentile(h, 50.0));
  pp_cell_count(t, r, "p90_ns", pp_hist_percentile(h, 90.0));
  pp_cell_count(t, r, "p99_ns", pp_hist_percentile(h, 99.0));
  pp_cell_count(t, r, "p999_ns", pp_hist_percentile(h, 99.9));
}

int pp__hist_tables(const pp_analysis *a, pp_doc *d) {
  const pp_pipeline *p = &a->prof.pipe;
  if (p->nqueues) {
    pp_table *t = pp_doc_table(d, "queue_waits", "queue waits",
                               "each queue's items, push to pop", hist_cols,
                               sizeof hist_cols / sizeof *hist_cols);
    for (size_t i = 0; t && i < p->nqueues; i++)
      hist_row(t, &p->queues[i].wait);
  }
  if (p->nflows) {
    pp_table *t = pp_doc_table(d, "flow_latencies", "flow latencies",
                               "each flow's items, begin to end", hist_cols,
                               sizeof hist_cols / sizeof *hist_cols);
    for (size_t i = 0; t && i < p->nflows; i++)
      hist_row(t, &p->flows[i].latency);
  }
  return pp_doc_ok(d) ? 0 : -1;
}
