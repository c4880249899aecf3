/* SPDX-License-Identifier: MIT */
/*
 * The energy a run used, from the running totals the samplers record: the
 * CPU package energy (RAPL, counter "energy.package_j") and the GPU energy
 * of the GPUs the run used (NVML, "gpu.run_energy_j"; all GPUs'
 * "gpu.energy_j" when the run used none it could tell). Each total is the
 * counter's last value, so the figure covers the whole sampled run, warm-up
 * and idle time included. Energy per frame and per request divide it
 * (src/export/report_text.c, summary_json.c); this is the one place that
 * decides which counters count.
 */
#include <math.h>
#include <string.h>

#include "analyze.h"
#include "model.h"

/* The counter named name with a finite last value, or NULL. */
static const pp_counter_stats *last_counter(const pp_trace *t,
                                            const char *name) {
  for (size_t i = 0; i < t->prof.ncounters; i++) {
    const pp_counter_stats *c = &t->prof.counters[i];
    if (c->samples && isfinite(c->last) &&
        strcmp(pp_trace_loc_name(t, c->loc), name) == 0)
      return c;
  }
  return NULL;
}

int pp_run_energy(const pp_trace *t, pp_energy *e) {
  static const char *const gpu_names[] = {"gpu.run_energy_j", "gpu.energy_j"};
  memset(e, 0, sizeof *e);
  const pp_counter_stats *cpu = last_counter(t, "energy.package_j");
  const pp_counter_stats *gpu = NULL;
  for (size_t i = 0; !gpu && i < sizeof gpu_names / sizeof gpu_names[0]; i++) {
    gpu = last_counter(t, gpu_names[i]);
    if (gpu)
      e->gpu_counter = gpu_names[i];
  }
  e->has_cpu = cpu != NULL;
  e->has_gpu = gpu != NULL;
  e->cpu_j = cpu ? cpu->last : 0;
  e->gpu_j = gpu ? gpu->last : 0;
  e->joules = e->cpu_j + e->gpu_j;
  if (cpu && gpu)
    e->sources = "CPU package + GPU";
  else if (cpu)
    e->sources = "CPU package";
  else if (gpu)
    e->sources = "GPU";
  else
    e->sources = "no energy counter in this trace (RAPL or NVML; run "
                 "under `pipeprof run` or with PIPEPROF_SAMPLE_HZ)";
  return cpu || gpu;
}
