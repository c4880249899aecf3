/* SPDX-License-Identifier: MIT */
/*
 * The "zones" and "top_self" tables (zones.h).
 */
#include "zones.h"

#include <math.h>
#include <stdint.h>

/* The columns every zone table starts with: the site, its count and
 * total time. */
#define SITE_COLS                                                              \
  {"name", "zone", PP_VALUE_TEXT, 0, NULL},                                    \
      {"function", "function", PP_VALUE_TEXT, PP_COL_JSON_ONLY, NULL},         \
      {"file", "file", PP_VALUE_TEXT, PP_COL_JSON_ONLY, NULL},                 \
      {"line", "line", PP_VALUE_COUNT, PP_COL_INT | PP_COL_JSON_ONLY, NULL},   \
      {"count", "count", PP_VALUE_COUNT, PP_COL_INT, NULL},                    \
      {"total_ns", "total", PP_VALUE_NS, PP_COL_INT, NULL}

static const pp_col cols[] = {
    SITE_COLS,
    {"self_ns", "self", PP_VALUE_NS, PP_COL_INT, NULL},
    {"mean_ns", "mean", PP_VALUE_NS, 0, NULL},
    {"std_ns", "std dev", PP_VALUE_NS, PP_COL_JSON_ONLY, NULL},
    {"min_ns", "min", PP_VALUE_NS, PP_COL_INT | PP_COL_JSON_ONLY, NULL},
    {"p50_ns", "p50", PP_VALUE_NS, PP_COL_INT, NULL},
    {"p90_ns", "p90", PP_VALUE_NS, PP_COL_INT, NULL},
    {"p95_ns", "p95", PP_VALUE_NS, PP_COL_INT | PP_COL_JSON_ONLY, NULL},
    {"p99_ns", "p99", PP_VALUE_NS, PP_COL_INT, NULL},
    {"p999_ns", "p99.9", PP_VALUE_NS, PP_COL_INT, NULL},
    {"max_ns", "max", PP_VALUE_NS, PP_COL_INT, NULL},
    {"wall_pct", "%wall", PP_VALUE_PCT, 0, NULL},
    {"rate_per_s", "rate", PP_VALUE_RATE, PP_COL_JSON_ONLY, NULL},
};

/* v in the cell, or unavailable with why when v is NAN and why is
 * given (else none). Whole numbers of an integer column exactly. */
static void put(pp_table *t, long r, const char *key, double v,
                const char *why) {
  if (isnan(v)) {
    if (why)
      pp_cell_unavailable(t, r, key, why);
  } else {
    pp_cell_whole(t, r, key, v);
  }
}

/* GPU zones: device time; no nesting (self), no share of the wall. */
static const pp_col gpu_cols[] = {
    SITE_COLS,
    {"mean_ns", "mean", PP_VALUE_NS, 0, NULL},
    {"std_ns", "std dev", PP_VALUE_NS, PP_COL_JSON_ONLY, NULL},
    {"min_ns", "min", PP_VALUE_NS, PP_COL_INT | PP_COL_JSON_ONLY, NULL},
    {"p50_ns", "p50", PP_VALUE_NS, PP_COL_INT, NULL},
    {"p90_ns", "p90", PP_VALUE_NS, PP_COL_INT, NULL},
    {"p99_ns", "p99", PP_VALUE_NS, PP_COL_INT, NULL},
    {"p999_ns", "p99.9", PP_VALUE_NS, PP_COL_INT, NULL},
    {"max_ns", "max", PP_VALUE_NS, PP_COL_INT, NULL},
};

/* The rows of z into t (the cells of keys t has no column for are not
 * set: pp_cell_* ignores them). */
static pp_table *fill(pp_table *t, const pp_zone_figures *z, size_t n,
                      const pp_zone_whys *why) {
  const char *wself = why ? why->self : NULL;
  const char *wspread = why ? why->spread : NULL;
  for (size_t i = 0; t && i < n; i++) {
    const pp_zone_figures *x = &z[i];
    long r = pp_table_row(t);
    if (r < 0)
      return NULL;
    pp_cell_text(t, r, "name", x->name);
    pp_cell_text(t, r, "function", x->function ? x->function : "");
    pp_cell_text(t, r, "file", x->file ? x->file : "");
    pp_cell_int(t, r, "line", x->line);
    pp_cell_count(t, r, "count", x->count);
    put(t, r, "total_ns", x->total_ns, NULL);
    put(t, r, "self_ns", x->self_ns, wself);
    put(t, r, "mean_ns", x->mean_ns, NULL);
    put(t, r, "std_ns", x->std_ns, wspread);
    put(t, r, "min_ns", x->min_ns, wspread);
    put(t, r, "p50_ns", x->p50_ns, NULL);
    put(t, r, "p90_ns", x->p90_ns, NULL);
    put(t, r, "p95_ns", x->p95_ns, wspread);
    put(t, r, "p99_ns", x->p99_ns, NULL);
    put(t, r, "p999_ns", x->p999_ns, wspread);
    put(t, r, "max_ns", x->max_ns, NULL);
    pp_cell_num(t, r, "wall_pct", x->wall_pct);
    pp_cell_num(t, r, "rate_per_s", x->rate_per_s);
  }
  return t;
}

pp_table *pp_results_zones(pp_doc *d, const pp_zone_figures *z, size_t n,
                           const pp_zone_whys *why) {
  pp_table *t = pp_doc_table(d, "zones", "zones",
                             "by total time; %wall can exceed 100% with "
                             "several threads",
                             cols, sizeof cols / sizeof *cols);
  pp_table_empty(t, "no zones recorded");
  return fill(t, z, n, why);
}

pp_table *pp_results_gpu_zones(pp_doc *d, const pp_zone_figures *z,
                               size_t n) {
  pp_table *t = pp_doc_table(d, "gpu_zones", "GPU zones",
                             "device time of the work queued on a stream "
                             "between pp_gpu_zone_begin and end",
                             gpu_cols, sizeof gpu_cols / sizeof *gpu_cols);
  return fill(t, z, n, NULL);
}

static const pp_col top_cols[] = {
    {"name", "zone", PP_VALUE_TEXT, 0, NULL},
    {"function", "function", PP_VALUE_TEXT, PP_COL_JSON_ONLY, NULL},
    {"file", "file", PP_VALUE_TEXT, PP_COL_JSON_ONLY, NULL},
    {"line", "line", PP_VALUE_COUNT, PP_COL_INT | PP_COL_JSON_ONLY, NULL},
    {"self_ns", "self", PP_VALUE_NS, PP_COL_INT, NULL},
    {"share_pct", "of zone time", PP_VALUE_PCT, PP_COL_BAR, NULL},
};

/* True when a ranks before b by self time (ties: the order given). */
static int self_before(const pp_zone_figures *z, size_t a, size_t b) {
  if (z[a].self_ns != z[b].self_ns)
    return z[a].self_ns > z[b].self_ns;
  return a < b;
}

pp_table *pp_results_top_self(pp_doc *d, const pp_zone_figures *z, size_t n,
                              size_t top) {
  double all = 0;
  for (size_t i = 0; i < n; i++) {
    if (isnan(z[i].self_ns))
      return NULL; /* not kept: no ranking */
    all += z[i].self_ns;
  }
  if (!n || !top)
    return NULL;
  pp_table *t = pp_doc_table(d, "top_self", "top bottlenecks by self time",
                             "share: of the self time of all zones, which "
                             "sums to the time inside zones",
                             top_cols, sizeof top_cols / sizeof *top_cols);
  /* Selection without allocating: each pick is the best zone ranking
   * strictly after the previous one. */
  size_t prev = SIZE_MAX;
  for (size_t k = 0; t && k < top && k < n; k++) {
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
      if (prev != SIZE_MAX && !self_before(z, prev, i))
        continue;
      if (best == SIZE_MAX || self_before(z, i, best))
        best = i;
    }
    prev = best;
    const pp_zone_figures *x = &z[best];
    long r = pp_table_row(t);
    if (r < 0)
      return NULL;
    pp_cell_text(t, r, "name", x->name);
    pp_cell_text(t, r, "function", x->function ? x->function : "");
    pp_cell_text(t, r, "file", x->file ? x->file : "");
    pp_cell_int(t, r, "line", x->line);
    put(t, r, "self_ns", x->self_ns, NULL);
    if (all > 0)
      pp_cell_num(t, r, "share_pct", x->self_ns / all * 100.0);
  }
  return t;
}
