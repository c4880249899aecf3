/* SPDX-License-Identifier: MIT */
/*
 * GPU zones and device memory pools in the text report and the summary
 * JSON (src/export/report_gpuzones.c), from prof.gpu and prof.pools (see
 * src/analyze/gpu.c). Kept apart from export.h until the lead folds it
 * into that header's blocks.
 */
#ifndef PP_EXPORT_REPORT_GPUZONES_H
#define PP_EXPORT_REPORT_GPUZONES_H

#include <stdio.h>

#include "analyze/analysis.h"

struct pp_jsonw; /* src/export/jsonw.h */

/* Print the "GPU zones" section (per site count, total, mean, p50, p90,
 * p99, p99.9, max; tracks; the library's resolved/dropped/unresolved
 * counts and calibration bound) when the program used GPU zones, as
 * "GPU zones: unavailable: <reason>" when none could be measured; the
 * "device memory" section (per CUDA device: used min, mean, max, last and
 * total from the cuda<dev>.mem_* counters, or "unavailable: <reason>")
 * when the trace has those counters or cuda_mem.* reasons; and the
 * "memory pools" section when pools were recorded. Each section starts
 * with a blank line; nothing is printed when none applies. Returns 0, or
 * -1 when t was not analysed or writing failed. */
int pp_report_gpu_zones(FILE *out, const pp_analysis *a);

/* Write the members "gpu_zones" (object, or null when GPU zones were not
 * used), "device_memory" (object, or null without cuMemGetInfo samples or
 * reasons) and "memory_pools" (array, or the string "unavailable:
 * <reason>") into the JSON object open in w; layout in
 * docs/formats/summary-json.md. Returns 0, or -1 when t was not analysed
 * or w is in the error state. */
int pp_summary_gpu_zones_json(struct pp_jsonw *w, const pp_analysis *a);

/* Chrome track name of a GPU track: "GPU <device> stream 0x<handle>". */
void pp_gpu_track_name(char *buf, size_t len, const pp_gpu_track *k);

#endif /* PP_EXPORT_REPORT_GPUZONES_H */
