/* SPDX-License-Identifier: MIT */
/*
 * The results document's CUDA activity (CUPTI; analyze/gpu_activity.h):
 * - the facts "cuda": the clock, what was not traced, the records (and
 *   those dropped, a warning), the GPU busy and idle over the traced time,
 *   launch and queued latency percentiles, and how GPU operations were
 *   joined to calls and zones; the table unavailable with the reason when
 *   tracing was asked for but could not run;
 * - "cuda_devices", "cuda_transfers" (per direction), "cuda_kernels",
 *   "cuda_stages" (GPU work per top-level zone, copies included) with
 *   "cuda_stage_transfers" (grouped by stage), "cuda_syncs", "cuda_api".
 * The text report and the summary JSON ("cuda") lay them out.
 */
#include <math.h>
#include <stdio.h>

#include "analyze.h"
#include "analyze/gpu_activity.h"
#include "internal.h"
#include "results/doc.h"

#define NO_ZONE "(no zone)"

/* ---- the facts ---------------------------------------------------------- */

static void latency(pp_table *f, const char *key, const char *label,
                    const pp_hist *h, const char *none) {
  if (!h->count) {
    pp_fact_unavailable(f, key, label, none);
    return;
  }
  char k[64], l[96];
  static const struct {
    const char *k, *l;
    double p;
  } ps[] = {
      {"p50_ns", "p50", 50}, {"p90_ns", "p90", 90}, {"p99_ns", "p99", 99}};
  snprintf(k, sizeof k, "%s.count", key);
  snprintf(l, sizeof l, "%s, kernels", label);
  pp_fact_json_only(f, pp_fact_int(f, k, l, (int64_t)h->count, PP_VALUE_COUNT));
  for (size_t i = 0; i < 3; i++) {
    snprintf(k, sizeof k, "%s.%s", key, ps[i].k);
    snprintf(l, sizeof l, "%s %s", label, ps[i].l);
    pp_fact_int(f, k, l, (int64_t)pp_hist_percentile(h, ps[i].p), PP_VALUE_NS);
  }
  snprintf(k, sizeof k, "%s.max_ns", key);
  snprintf(l, sizeof l, "%s max", label);
  pp_fact_json_only(f, pp_fact_int(f, k, l, h->max, PP_VALUE_NS));
}

static void facts(const pp_trace *t, const pp_gpu_activity *g, pp_table *f) {
  const pp_cuda_trace *c = &t->cuda;
  const char *clock = pp_trace_meta(t, "cuda.clock");
  if (clock)
    pp_fact_text(f, "clock", "clock", clock);
  else
    pp_fact_json_only(f, pp_fact_num(f, "clock", "clock", NAN, PP_VALUE_TEXT));
  const char *miss = pp_trace_meta(t, "unavailable.cuda.kinds");
  if (miss)
    pp_fact_text(f, "not_traced", "not traced", miss);
  pp_fact_int(f, "records.kernels", "kernels", (int64_t)c->nkernels,
              PP_VALUE_COUNT);
  pp_fact_int(f, "records.memcpys", "copies", (int64_t)c->nmemcpys,
              PP_VALUE_COUNT);
  pp_fact_int(f, "records.memsets", "memsets", (int64_t)c->nmemsets,
              PP_VALUE_COUNT);
  pp_fact_int(f, "records.syncs", "synchronizations", (int64_t)c->nsyncs,
              PP_VALUE_COUNT);
  pp_fact_int(f, "records.api_calls", "API calls", (int64_t)c->napis,
              PP_VALUE_COUNT);
  pp_fact_int(f, "records.dropped", "records dropped", (int64_t)g->dropped,
              PP_VALUE_COUNT);
  if (g->dropped)
    pp_table_warning(f,
                     "%llu CUPTI records dropped (buffers full): the "
                     "figures miss them",
                     (unsigned long long)g->dropped);
  pp_fact_int(f, "wall_ns", "time traced", g->wall_ns, PP_VALUE_NS);
  pp_fact_int(f, "busy_ns", "GPU busy", g->busy_ns, PP_VALUE_NS);
  pp_fact_int(f, "idle_ns", "GPU idle", g->wall_ns - g->busy_ns, PP_VALUE_NS);
  pp_fact_num(f, "busy_pct", "GPU busy, share",
              g->wall_ns > 0 ? 100.0 * (double)g->busy_ns / (double)g->wall_ns
                             : NAN,
              PP_VALUE_PCT);
  latency(f, "launch_latency", "launch (call to start)", &g->launch,
          "no kernel joined to its API call");
  latency(f, "queued_latency", "queued to start", &g->queued,
          "queued times not collected");
  pp_fact_int(f, "correlated", "operations joined to a call",
              (int64_t)g->correlated, PP_VALUE_COUNT);
  pp_fact_int(f, "uncorrelated", "operations without a call",
              (int64_t)g->uncorrelated, PP_VALUE_COUNT);
  pp_fact_int(f, "unattributed", "operations outside any zone",
              (int64_t)g->unattributed, PP_VALUE_COUNT);
}

/* ---- tables ---------------------------------------------------------------
 */

static const pp_col dev_cols[] = {
    {"device", "device", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"busy_ns", "busy", PP_VALUE_NS, PP_COL_INT, NULL},
    {"busy_pct", "busy", PP_VALUE_PCT, PP_COL_BAR, NULL},
    {"kernels", "kernels", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"kernel_ns", "kernels", PP_VALUE_NS, PP_COL_INT, NULL},
    {"copies", "copies", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"copy_ns", "copies", PP_VALUE_NS, PP_COL_INT, NULL},
    {"memsets", "memsets", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"memset_ns", "memsets", PP_VALUE_NS, PP_COL_INT, NULL},
};

/* A transfer direction's columns (the whole run's, a stage's). */
#define XFER_COLS                                                              \
  {"dir", "dir", PP_VALUE_TEXT, PP_COL_JSON_ONLY, NULL},                       \
      {"direction", "direction", PP_VALUE_TEXT, PP_COL_VIEW_ONLY, NULL},       \
      {"count", "copies", PP_VALUE_COUNT, PP_COL_INT, NULL},                   \
      {"bytes", "bytes", PP_VALUE_BYTES, PP_COL_INT, NULL},                    \
      {"time_ns", "time", PP_VALUE_NS, PP_COL_INT, NULL},                      \
      {"bandwidth_bytes_per_s", "bandwidth", PP_VALUE_BYTE_RATE, 0, NULL},     \
      {"pageable_bytes", "pageable / pinned", PP_VALUE_BYTES, PP_COL_INT,      \
       NULL},                                                                  \
  {                                                                            \
    "pinned_bytes", "pageable / pinned", PP_VALUE_BYTES, PP_COL_INT, NULL      \
  }

static const pp_col xfer_cols[] = {XFER_COLS};

static const pp_col stage_xfer_cols[] = {
    {"stage", "stage", PP_VALUE_TEXT, PP_COL_VIEW_ONLY | PP_COL_GROUP, NULL},
    XFER_COLS};

/* The directions of x that moved anything, as rows of t in group g of
 * stage (NULL: the whole run, no stage column). */
static void xfers(pp_table *t, uint32_t g, const char *stage,
                  const pp_gpu_xfer *x) {
  static const char *const key[PP_XFER_N] = {"h2d", "d2h", "d2d", "other"};
  for (int d = 0; d < PP_XFER_N; d++) {
    if (!x[d].count)
      continue;
    long r = pp_table_row(t);
    pp_row_group(t, r, g);
    if (stage)
      pp_cell_text(t, r, "stage", stage);
    pp_cell_text(t, r, "dir", key[d]);
    pp_cell_text(t, r, "direction", pp_gpu_xfer_label(d));
    pp_cell_count(t, r, "count", x[d].count);
    pp_cell_count(t, r, "bytes", x[d].bytes);
    pp_cell_int(t, r, "time_ns", x[d].time_ns);
    if (x[d].time_ns > 0)
      pp_cell_num(t, r, "bandwidth_bytes_per_s",
                  (double)x[d].bytes * 1e9 / (double)x[d].time_ns);
    pp_cell_count(t, r, "pageable_bytes", x[d].pageable_bytes);
    pp_cell_count(t, r, "pinned_bytes", x[d].pinned_bytes);
  }
}

static const pp_col kernel_cols[] = {
    {"name", "kernel", PP_VALUE_TEXT, 0, NULL},
    {"calls", "calls", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"total_ns", "total", PP_VALUE_NS, PP_COL_INT, NULL},
    {"mean_ns", "mean", PP_VALUE_NS, 0, NULL},
    {"p50_ns", "p50", PP_VALUE_NS, PP_COL_INT, NULL},
    {"p99_ns", "p99", PP_VALUE_NS, PP_COL_INT, NULL},
    {"gpu_time_pct", "share of kernel time", PP_VALUE_PCT, PP_COL_BAR, NULL},
};

static const pp_col stage_cols[] = {
    {"name", "stage", PP_VALUE_TEXT, 0, NO_ZONE},
    {"wall_ns", "stage time", PP_VALUE_NS, PP_COL_INT, NULL},
    {"gpu_busy_ns", "GPU busy", PP_VALUE_NS, PP_COL_INT, NULL},
    {"gpu_busy_pct", "GPU busy", PP_VALUE_PCT, PP_COL_BAR, NULL},
    {"kernels", "kernels", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"kernel_ns", "kernels", PP_VALUE_NS, PP_COL_INT, NULL},
    {"memsets", "memsets", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"memset_ns", "memsets", PP_VALUE_NS, PP_COL_INT, NULL},
    /* copies: the stage's transfers summed ("transfers" in the JSON) */
    {"copy_ns", "copies", PP_VALUE_NS, PP_COL_INT | PP_COL_VIEW_ONLY, NULL},
    {"copy_pct", "copies", PP_VALUE_PCT, PP_COL_VIEW_ONLY, NULL},
};

static const pp_col sync_cols[] = {
    {"type", "synchronization", PP_VALUE_TEXT, 0, NULL},
    {"count", "calls", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"total_ns", "time", PP_VALUE_NS, PP_COL_INT, NULL},
};

static const pp_col api_cols[] = {
    {"name", "API call", PP_VALUE_TEXT, 0, NULL},
    {"domain", "API", PP_VALUE_TEXT, 0, NULL},
    {"calls", "calls", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"total_ns", "total", PP_VALUE_NS, PP_COL_INT, NULL},
    {"mean_ns", "mean", PP_VALUE_NS, PP_COL_VIEW_ONLY, NULL},
};

#define TABLE(d, id, title, note, cols)                                        \
  pp_doc_table((d), (id), (title), (note), (cols),                             \
               sizeof(cols) / sizeof *(cols))

static int tables(const pp_trace *tr, const pp_gpu_activity *g, pp_doc *d) {
  const pp_cuda_trace *c = &tr->cuda;
  pp_table *t = TABLE(d, "cuda_devices", "CUDA devices",
                      "busy: the union of its kernels, copies and memsets, "
                      "and its share of the time traced",
                      dev_cols);
  for (size_t i = 0; t && i < g->ndevices; i++) {
    const pp_gpu_device *v = &g->devices[i];
    long r = pp_table_row(t);
    pp_cell_count(t, r, "device", v->device);
    pp_cell_int(t, r, "busy_ns", v->busy_ns);
    pp_cell_share(t, r, "busy_pct", (double)v->busy_ns, (double)g->wall_ns);
    pp_cell_count(t, r, "kernels", v->kernels);
    pp_cell_int(t, r, "kernel_ns", v->kernel_ns);
    pp_cell_count(t, r, "copies", v->copies);
    pp_cell_int(t, r, "copy_ns", v->copy_ns);
    pp_cell_count(t, r, "memsets", v->memsets);
    pp_cell_int(t, r, "memset_ns", v->memset_ns);
  }
  t = TABLE(d, "cuda_transfers", "transfers", NULL, xfer_cols);
  if (t)
    xfers(t, 0, NULL, g->xfer);
  t = TABLE(d, "cuda_kernels", "kernels", "by total time", kernel_cols);
  for (size_t i = 0; t && i < g->nkernels; i++) {
    const pp_gpu_kernel_stats *k = &g->kernels[i];
    long r = pp_table_row(t);
    pp_cell_text(t, r, "name", pp_cuda_name(c, k->name));
    pp_cell_count(t, r, "calls", k->calls);
    pp_cell_int(t, r, "total_ns", k->total_ns);
    pp_cell_num(t, r, "mean_ns", k->mean_ns);
    pp_cell_count(t, r, "p50_ns", pp_hist_percentile(&k->hist, 50));
    pp_cell_count(t, r, "p99_ns", pp_hist_percentile(&k->hist, 99));
    pp_cell_num(t, r, "gpu_time_pct", k->share_pct);
  }
  t = TABLE(d, "cuda_stages", "GPU work per stage",
            "stage time: the union of the top-level zone's instances; GPU "
            "busy: of it, the time some device was busy",
            stage_cols);
  pp_table *x = TABLE(d, "cuda_stage_transfers", "transfers per stage", NULL,
                      stage_xfer_cols);
  for (size_t i = 0; t && x && i < g->nstages; i++) {
    const pp_gpu_stage *s = &g->stages[i];
    const char *name =
        s->loc == PP_GPU_NO_ZONE ? NULL : pp_trace_loc_name(tr, s->loc);
    long r = pp_table_row(t);
    pp_row_group(t, r, (uint32_t)i + 1);
    if (name) {
      pp_cell_text(t, r, "name", name);
      pp_cell_int(t, r, "wall_ns", s->wall_ns);
      pp_cell_share(t, r, "gpu_busy_pct", (double)s->busy_ns,
                    (double)s->wall_ns);
    }
    pp_cell_int(t, r, "gpu_busy_ns", s->busy_ns);
    pp_cell_count(t, r, "kernels", s->kernels);
    pp_cell_int(t, r, "kernel_ns", s->kernel_ns);
    pp_cell_count(t, r, "memsets", s->memsets);
    pp_cell_int(t, r, "memset_ns", s->memset_ns);
    int64_t copy = 0;
    for (int k = 0; k < PP_XFER_N; k++)
      copy += s->xfer[k].time_ns;
    pp_cell_int(t, r, "copy_ns", copy);
    if (name)
      pp_cell_share(t, r, "copy_pct", (double)copy, (double)s->wall_ns);
    xfers(x, (uint32_t)i + 1, name ? name : NO_ZONE, s->xfer);
  }
  t = TABLE(d, "cuda_syncs", "synchronization", NULL, sync_cols);
  for (size_t i = 0; t && i < g->nsyncs; i++) {
    long r = pp_table_row(t);
    pp_cell_text(t, r, "type", pp_gpu_sync_type(g->syncs[i].type));
    pp_cell_count(t, r, "count", g->syncs[i].count);
    pp_cell_int(t, r, "total_ns", g->syncs[i].total_ns);
  }
  t = TABLE(d, "cuda_api", "API calls", "by total time", api_cols);
  for (size_t i = 0; t && i < g->napis; i++) {
    const pp_gpu_api_stats *s = &g->apis[i];
    long r = pp_table_row(t);
    pp_cell_text(t, r, "name", pp_cuda_name(c, s->name));
    pp_cell_text(t, r, "domain", s->domain == 1 ? "driver" : "runtime");
    pp_cell_count(t, r, "calls", s->calls);
    pp_cell_int(t, r, "total_ns", s->total_ns);
    if (s->calls)
      pp_cell_num(t, r, "mean_ns", (double)s->total_ns / (double)s->calls);
  }
  return pp_doc_ok(d) ? 0 : -1;
}

int pp__cuda_tables(const pp_analysis *a, pp_doc *d) {
  const pp_trace *t = a->trace;
  const pp_gpu_activity *g = a->cuda;
  const char *why = pp_trace_meta(t, "unavailable.cuda");
  if (!g && !why)
    return 0;
  pp_table *f = pp_doc_facts(d, "cuda", "CUDA activity (CUPTI)", NULL);
  if (!f)
    return -1;
  if (!g) {
    pp_table_unavailable(f, why);
    return pp_doc_ok(d) ? 0 : -1;
  }
  facts(t, g, f);
  return pp_doc_ok(d) ? tables(t, g, d) : -1;
}
