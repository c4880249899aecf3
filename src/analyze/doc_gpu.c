/* SPDX-License-Identifier: MIT */
/*
 * The results document's GPU sections besides the GPU zones' table:
 * - "gpu_tracks": each (device, stream) the GPU zones ran on, the thread
 *   that launched them and how many;
 * - the facts "gpu_zone_counts": the zones resolved, those unresolved at
 *   shutdown, those dropped by cause (shown when any), and the error
 *   bound of placing GPU times on the CPU clock. A count the trace does
 *   not carry (cut short, flight mode) has no value.
 * The text report, the summary JSON (gpu_zones) and the HTML page lay
 * them out.
 */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "analyze.h"
#include "internal.h"
#include "results/doc.h"

static const pp_col track_cols[] = {
    {"device", "GPU", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"stream", "stream", PP_VALUE_TEXT, 0, NULL},
    {"tid", "tid", PP_VALUE_COUNT, PP_COL_INT | PP_COL_JSON_ONLY, NULL},
    /* the tid and the thread's name, as the views say it */
    {"thread", "launched by thread", PP_VALUE_TEXT, PP_COL_VIEW_ONLY, NULL},
    {"zones", "zones", PP_VALUE_COUNT, PP_COL_INT, NULL},
};

/* The name of thread tid ("" when unknown or unnamed). */
static const char *thread_name(const pp_trace *t, uint64_t tid) {
  size_t i = pp_trace_thread_index(t, tid);
  return i < t->nthreads && t->threads[i].name ? t->threads[i].name : "";
}

/* A count of the trace in unit (-1: not carried, a fact without value
 * that only the JSON has, as null). */
static long count(pp_table *t, const char *key, const char *label,
                  int64_t n, pp_value_unit unit) {
  if (n >= 0)
    return pp_fact_int(t, key, label, n, unit);
  long r = pp_fact_num(t, key, label, NAN, unit);
  pp_fact_json_only(t, r);
  return r;
}

int pp__gpu_zone_facts(const pp_analysis *a, pp_doc *d) {
  const pp_trace *tr = a->trace;
  const pp_gpu_stats *g = &a->prof.gpu;
  if (g->ntracks) {
    pp_table *t = pp_doc_table(d, "gpu_tracks", "GPU zone tracks", NULL,
                               track_cols,
                               sizeof track_cols / sizeof *track_cols);
    if (!t)
      return -1;
    for (size_t i = 0; i < g->ntracks; i++) {
      char hex[24];
      snprintf(hex, sizeof hex, "0x%" PRIx64, g->tracks[i].stream);
      long r = pp_table_row(t);
      pp_cell_count(t, r, "device", g->tracks[i].device);
      pp_cell_text(t, r, "stream", hex);
      pp_cell_count(t, r, "tid", g->tracks[i].tid);
      char th[96];
      const char *name = thread_name(tr, g->tracks[i].tid);
      snprintf(th, sizeof th, "%" PRIu64 "%s%s", g->tracks[i].tid,
               *name ? " " : "", name);
      pp_cell_text(t, r, "thread", th);
      pp_cell_count(t, r, "zones", g->tracks[i].zones);
    }
  }
  pp_table *f = pp_doc_facts(d, "gpu_zone_counts", "GPU zone counts", "GPU times are placed on the CPU clock within the clock placement error");
  if (!f)
    return -1;
  /* why GPU zones were not (all) resolved: the zones table says it, the
   * JSON has it here */
  pp_fact_json_only(f, g->unavailable
                           ? pp_fact_text(f, "unavailable", "unavailable",
                                          g->unavailable)
                           : pp_fact_num(f, "unavailable", "unavailable", NAN,
                                         PP_VALUE_TEXT));
  count(f, "resolved", "resolved", g->resolved, PP_VALUE_COUNT);
  count(f, "unresolved", "unresolved at shutdown",
        g->resolved >= 0 && g->unresolved < 0 ? 0 : g->unresolved,
        PP_VALUE_COUNT);
  static const struct {
    const char *key, *label;
    size_t off;
  } drops[] = {
      {"dropped.pool_exhausted", "dropped, pool exhausted",
       offsetof(pp_gpu_stats, pool_exhausted)},
      {"dropped.no_context", "dropped, no CUDA context",
       offsetof(pp_gpu_stats, no_context)},
      {"dropped.record_failed", "dropped, record failed",
       offsetof(pp_gpu_stats, record_failed)},
      {"dropped.unavailable", "dropped, CUDA unavailable",
       offsetof(pp_gpu_stats, unavailable_calls)},
      {"dropped.query_failed", "dropped, query failed",
       offsetof(pp_gpu_stats, query_failed)},
  };
  for (size_t i = 0; i < sizeof drops / sizeof *drops; i++) {
    int64_t n = *(const int64_t *)(const void *)((const char *)g +
                                                 drops[i].off);
    long r = count(f, drops[i].key, drops[i].label, n, PP_VALUE_COUNT);
    if (n <= 0) /* the views say the causes that dropped any */
      pp_fact_json_only(f, r);
  }
  long r = count(f, "calib_error_ns", "clock placement error, max",
                 g->calib_error_ns, PP_VALUE_NS);
  if (g->calib_error_ns >= 0 && !g->nzones) /* no zone placed with it */
    pp_fact_json_only(f, r);
  return pp_doc_ok(d) ? 0 : -1;
}
