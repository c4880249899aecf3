/* SPDX-License-Identifier: MIT */
/*
 * The "GPU zones", "device memory" and "memory pools" sections of the text
 * report and their summary JSON members (see report_gpuzones.h). Device
 * memory and the pools are the results document's tables (analyze/
 * doc_memory.c); the GPU zones' figures come from the analysis
 * (prof.gpu); the library's counts that a trace does not carry are left
 * out rather than printed as 0.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/doc_json.h"
#include "export/doc_text.h"
#include "export/export.h"
#include "export/jsonw.h"
#include "export/report_gpuzones.h"
#include "format/pptrace.h"
#include "internal.h"
#include "pipeprof.h"

void pp_gpu_track_name(char *buf, size_t len, const pp_gpu_track *k) {
  snprintf(buf, len, "GPU %" PRIu32 " stream 0x%" PRIx64, k->device,
           k->stream);
}

#define TRACKS_LISTED 16 /* rows of the tracks' table */

/* The GPU zones, their tracks and counts: the results document's
 * (analyze/document.c, doc_gpu.c). */
static void gpu_section(FILE *out, const pp_analysis *a) {
  pp_doc_text_table(out, pp_doc_find(a->doc, "gpu_zones"), 0);
  pp_doc_text_table_n(out, pp_doc_find(a->doc, "gpu_tracks"), 0,
                      TRACKS_LISTED);
  pp_doc_text_table(out, pp_doc_find(a->doc, "gpu_zone_counts"), 0);
}

int pp_report_gpu_zones(FILE *out, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  if (!out || !t || !a->analyzed)
    return -1;
  if (a->prof.gpu.used)
    gpu_section(out, a);
  pp_doc_text_table(out, pp_doc_find(a->doc, "device_memory"), 0);
  pp_doc_text_table(out, pp_doc_find(a->doc, "memory_pools"), 0);
  return ferror(out) ? -1 : 0;
}

/* ---- summary JSON ------------------------------------------------------- */

int pp_summary_gpu_zones_json(struct pp_jsonw *w, const pp_analysis *a) {
  if (!w || !a->trace || !a->analyzed)
    return -1;
  const pp_table *gz = pp_doc_find(a->doc, "gpu_zones");
  pp_jsonw_key(w, "gpu_zones");
  if (!gz) {
    pp_jsonw_null(w);
  } else {
    pp_jsonw_obj_begin(w);
    pp_jsonw_key(w, "zones");
    pp_jsonw_arr_begin_lines(w);
    pp_doc_json_objects(w, gz, NULL, NULL);
    pp_jsonw_arr_end(w);
    pp_jsonw_key(w, "tracks");
    pp_jsonw_arr_begin(w);
    pp_doc_json_objects(w, pp_doc_find(a->doc, "gpu_tracks"), NULL, NULL);
    pp_jsonw_arr_end(w);
    pp_doc_json_facts(w, pp_doc_find(a->doc, "gpu_zone_counts"));
    pp_jsonw_obj_end(w);
  }
  /* device memory: the source, why no device answered, the devices */
  const pp_table *dm = pp_doc_find(a->doc, "device_memory");
  pp_jsonw_key(w, "device_memory");
  if (!dm) {
    pp_jsonw_null(w);
  } else {
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "source", "cuMemGetInfo");
    pp_jsonw_kv_str(w, "unavailable", dm->why);
    pp_jsonw_key(w, "devices");
    pp_jsonw_arr_begin_lines(w);
    pp_doc_json_objects(w, dm, NULL, NULL);
    pp_jsonw_arr_end(w);
    pp_jsonw_obj_end(w);
  }
  /* memory pools: "unavailable: <why>" when the trace keeps none */
  const pp_table *mp = pp_doc_find(a->doc, "memory_pools");
  pp_jsonw_key(w, "memory_pools");
  if (mp && mp->why) {
    char b[256];
    snprintf(b, sizeof b, "unavailable: %s", mp->why);
    pp_jsonw_str(w, b);
  } else {
    pp_jsonw_arr_begin_lines(w);
    pp_doc_json_objects(w, mp, NULL, NULL);
    pp_jsonw_arr_end(w);
  }
  return w->err ? -1 : 0;
}
