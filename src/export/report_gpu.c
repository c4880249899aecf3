/* SPDX-License-Identifier: MIT */
/*
 * The "GPU" section of the text report: the results document's tables of
 * what the NVML reader (src/collect/nvml.c) recorded through the sampler
 * (analyze/doc_nvml.c).
 */
#include <stdio.h>

#include "export/doc_text.h"
#include "export/report_gpu.h"

int pp_report_gpu(FILE *out, const pp_analysis *a) {
  if (!out || !a->trace || !a->analyzed)
    return -1;
  /* the document's tables "gpu0", "gpu1", ... (one per GPU slot, in
   * order), then the facts "gpu" */
  for (int g = 0;; g++) {
    char id[16];
    snprintf(id, sizeof id, "gpu%d", g);
    const pp_table *t = pp_doc_find(a->doc, id);
    if (!t)
      break;
    if (!g)
      fputs("\nGPU (NVML)\n", out);
    pp_doc_text_table(out, t, 0);
  }
  pp_doc_text_table(out, pp_doc_find(a->doc, "gpu"), 0);
  return ferror(out) ? -1 : 0;
}
