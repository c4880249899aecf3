/* SPDX-License-Identifier: MIT */
/*
 * The "CUDA activity" section of the text report and the summary JSON's
 * "cuda": the results document's facts and tables of what CUPTI traced
 * (analyze/doc_cuda.c). When tracing was asked for but could not run,
 * the reason alone.
 */
#include <stdio.h>

#include "export/doc_json.h"
#include "export/doc_text.h"
#include "export/export.h"
#include "export/jsonw.h"

#define KERNELS_SHOWN 20
#define APIS_SHOWN 10
#define NAME_W 48 /* kernel names are long C++ signatures */

int pp_report_cuda(FILE *out, const pp_analysis *a) {
  if (!out || !a->trace || !a->analyzed)
    return -1;
  const pp_doc *d = a->doc;
  const pp_table *f = pp_doc_find(d, "cuda");
  if (!f)
    return ferror(out) ? -1 : 0;
  pp_doc_text_table(out, f, 0);
  pp_doc_text_table(out, pp_doc_find(d, "cuda_devices"), 0);
  pp_doc_text_table(out, pp_doc_find(d, "cuda_transfers"), 0);
  pp_doc_text_table_n(out, pp_doc_find(d, "cuda_kernels"), NAME_W,
                      KERNELS_SHOWN);
  pp_doc_text_table(out, pp_doc_find(d, "cuda_stages"), NAME_W);
  pp_doc_text_table(out, pp_doc_find(d, "cuda_stage_transfers"), NAME_W);
  pp_doc_text_table(out, pp_doc_find(d, "cuda_syncs"), NAME_W);
  pp_doc_text_table_n(out, pp_doc_find(d, "cuda_api"), NAME_W, APIS_SHOWN);
  return ferror(out) ? -1 : 0;
}

/* ---- summary JSON member "cuda" ------------------------------------------ */

/* The rows of transfers table t in group g: {"<dir>": {...}}. */
static void xfers(pp_jsonw *w, const pp_table *t, uint32_t g) {
  long kd = pp_table_col(t, "dir");
  pp_jsonw_obj_begin(w);
  for (size_t r = 0; t && kd >= 0 && r < t->nrows; r++) {
    if (t->row_info[r].group != g)
      continue;
    pp_jsonw_key(w, pp_table_cell(t, r, (size_t)kd)->text);
    pp_doc_json_row(w, t, r, kd, NULL, NULL);
  }
  pp_jsonw_obj_end(w);
}

static void stage_xfers(pp_jsonw *w, size_t r, void *ctx) {
  pp_jsonw_key(w, "transfers");
  xfers(w, ctx, (uint32_t)r + 1);
}

int pp_summary_cuda_json(pp_jsonw *w, const pp_analysis *a) {
  const pp_doc *d = a->doc;
  const pp_table *f = pp_doc_find(d, "cuda");
  pp_jsonw_key(w, "cuda");
  if (!f) {
    pp_jsonw_null(w);
    return w->err ? -1 : 0;
  }
  pp_jsonw_obj_begin(w);
  if (f->why) {
    pp_jsonw_kv_str(w, "unavailable", f->why);
    pp_jsonw_obj_end(w);
    return w->err ? -1 : 0;
  }
  pp_doc_json_facts(w, f);
  static const struct {
    const char *key, *id;
  } lists[] = {{"devices", "cuda_devices"}, {"kernels", "cuda_kernels"},
               {"syncs", "cuda_syncs"}, {"api", "cuda_api"}};
  for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) {
    pp_jsonw_key(w, lists[i].key);
    pp_jsonw_arr_begin(w);
    pp_doc_json_objects(w, pp_doc_find(d, lists[i].id), NULL, NULL);
    pp_jsonw_arr_end(w);
  }
  pp_jsonw_key(w, "transfers");
  xfers(w, pp_doc_find(d, "cuda_transfers"), 0);
  pp_jsonw_key(w, "stages");
  pp_jsonw_arr_begin(w);
  pp_doc_json_objects(w, pp_doc_find(d, "cuda_stages"), stage_xfers,
                      (void *)pp_doc_find(d, "cuda_stage_transfers"));
  pp_jsonw_arr_end(w);
  pp_jsonw_obj_end(w);
  return w->err ? -1 : 0;
}
