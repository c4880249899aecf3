/* SPDX-License-Identifier: MIT */
/*
 * The "GPU" section of the text report: the results document's tables of
 * what the NVML reader (src/collect/nvml.c) recorded through the sampler
 * (analyze/doc_nvml.c).
 */
#include <stdio.h>
#include <string.h>

#include "export/doc_text.h"
#include "export/report_gpu.h"
#include "internal.h"
#include "metrics/registry.h"

/* "gpu<digits>." prefix: the index, else -1. */
static int gpu_index(const char *s) {
  const char *end;
  long v = pp__name_index(s, "gpu", &end);
  if (v < 0 || (*end != '.' && *end != '\0'))
    return -1;
  return (int)v;
}

/* A gpu{N}.* row (NVML), not cuda{N}.* nor the all-GPU totals. */
static int is_nvml_row(pp_metric_id id, long index) {
  const pp_metric_def *d = pp_metric_def_of(id);
  return d && d->group == PP_GROUP_GPU && index >= 0 &&
         id != PP_METRIC_CUDA_MEM_USED && id != PP_METRIC_CUDA_MEM_TOTAL;
}

int pp_counter_is_gpu(const char *name) {
  long ix;
  pp_metric_id id = pp_metric_lookup(name, &ix, NULL, NULL);
  return id == PP_METRIC_GPU_ENERGY_ALL || id == PP_METRIC_GPU_RUN_ENERGY ||
         (id != PP_METRIC_NONE && is_nvml_row(id, ix));
}

int pp_report_gpu(FILE *out, const pp_analysis *a) {
  if (!out || !a->trace || !a->analyzed)
    return -1;
  /* the document's "gpuN" tables, in its order, then the facts "gpu" */
  int any = 0;
  for (size_t i = 0; i < pp_doc_ntables(a->doc); i++) {
    const pp_table *t = pp_doc_table_at(a->doc, i);
    if (gpu_index(t->id) < 0 || strchr(t->id, '.'))
      continue;
    if (!any++)
      fputs("\nGPU (NVML)\n", out);
    pp_doc_text_table(out, t, 0);
  }
  pp_doc_text_table(out, pp_doc_find(a->doc, "gpu"), 0);
  return ferror(out) ? -1 : 0;
}
