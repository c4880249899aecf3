/* SPDX-License-Identifier: MIT */
/*
 * A duration histogram as the summary JSON draws it (schema_minor 13,
 * docs/formats/summary-json.md): the coarse buckets of analyze/series.h,
 * from the first non-empty one to the last. Shared by the zones, frames
 * (summary_json.c) and queue waits (summary_pipeline.c).
 */
#include "analyze/series.h"
#include "export/export.h"
#include "export/jsonw.h"

void pp_summary_hist_json(pp_jsonw *w, const char *k, const pp_hist *h) {
  uint64_t le[PP_COARSE_BUCKETS], counts[PP_COARSE_BUCKETS];
  size_t n = pp_hist_coarse(h, le, counts);
  pp_jsonw_key(w, k);
  pp_jsonw_obj_begin(w);
  pp_jsonw_key(w, "le_ns");
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < n; i++)
    pp_jsonw_uint(w, le[i]);
  pp_jsonw_arr_end(w);
  pp_jsonw_key(w, "counts");
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < n; i++)
    pp_jsonw_uint(w, counts[i]);
  pp_jsonw_arr_end(w);
  pp_jsonw_obj_end(w);
}
