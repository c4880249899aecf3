/* SPDX-License-Identifier: MIT */
/*
 * The GPU part of the text report (src/export/report_gpu.c), read from the
 * counters and META that pp_gpu_sample_counters/pp_gpu_sample_meta
 * (src/collect/nvml.h) name. Kept apart from export.h until the lead folds
 * it into that header's blocks.
 */
#ifndef PP_EXPORT_REPORT_GPU_H
#define PP_EXPORT_REPORT_GPU_H

#include <stdio.h>

#include "analyze/analysis.h"

/* Print the "GPU" section of an analysed trace, starting with a blank
 * line: per GPU its identity and whether the run used it, then
 * utilization, memory, the run's memory, power, energy, temperature,
 * clocks, clock limits seen, PCIe, GPM activity and XID errors, each from
 * its gpuN.* counter; a metric without a counter prints "unavailable:
 * <reason>" when META "unavailable.gpuN.<metric>" has one and is left out
 * otherwise. A GPU lost during the run says so. Prints the reason alone
 * when META "unavailable.gpu" is set and no gpuN.* counter exists, and
 * nothing when there is neither. Returns 0, or -1 when t was not analysed
 * or writing failed. */
int pp_report_gpu(FILE *out, const pp_analysis *a);

#endif /* PP_EXPORT_REPORT_GPU_H */
