/* SPDX-License-Identifier: MIT */
/*
 * The energy a run used, from the running totals the samplers record: the
 * CPU package energy (RAPL, PP_METRIC_ENERGY_PACKAGE; the platform's,
 * RAPL psys, where no package domain moved) and the GPU energy
 * of the GPUs the run used (NVML, PP_METRIC_GPU_RUN_ENERGY; all GPUs'
 * PP_METRIC_GPU_ENERGY_ALL when the run used none it could tell). Each
 * total is the series' last value, so the figure covers the whole sampled
 * run, warm-up and idle time included. Only library metrics count
 * (analyze/system.h): a user counter of the same name is the user's.
 * Energy per frame, per call and per request divide it (analyze/system.c,
 * the text report, summary_json.c); this is the one place that decides
 * which series count, and whether a power series measured anything at all
 * (pp_power_series_measured: a counter that does not move did not).
 */
#include <math.h>
#include <string.h>

#include "analysis.h"
#include "analyze.h"
#include "analyze/system.h"

int pp_power_series_measured(const pp_counter_stats *c, int is_total) {
  if (!c->samples || !isfinite(c->max) || !isfinite(c->min))
    return 0;
  if (!is_total)
    return c->max > 0;
  return c->samples > 1 ? c->max > c->min : c->last > 0;
}

/* pp_freq_series_nominal for c, a series of metric id. */
static int nominal_clock(const pp_trace *t, const pp_counter_stats *c,
                         pp_metric_id id) {
  const char *src;
  return id == PP_METRIC_SYS_CPUN_FREQ && c->samples && isfinite(c->min) &&
         c->min == c->max && (src = pp_trace_meta(t, "cpufreq.source")) &&
         strcmp(src, "cpuinfo") == 0;
}

int pp_freq_series_nominal(const pp_trace *t, const pp_counter_stats *c) {
  return nominal_clock(t, c,
                       pp_loc_metric(t, c->loc, pp_trace_metric_kind(t), NULL,
                                     NULL, NULL));
}

int pp_series_is_measurement(const pp_trace *t, const pp_counter_stats *c) {
  pp_metric_id id =
      pp_loc_metric(t, c->loc, pp_trace_metric_kind(t), NULL, NULL, NULL);
  if (id == PP_METRIC_NONE)
    return 1;
  if (nominal_clock(t, c, id))
    return 0;
  const pp_metric_def *d = pp_metric_def_of(id);
  if (d->group != PP_GROUP_POWER || !isfinite(c->min) || !isfinite(c->max))
    return 1;
  return pp_power_series_measured(c, d->kind == PP_METRIC_TOTAL);
}

/* The library metric id with a finite last value that moved over the run
 * (pp_power_series_measured), or NULL; *stuck set when the series is there
 * but did not move. */
static const pp_counter_stats *last_metric(const pp_analysis *a, uint32_t mkind,
                                           pp_metric_id id, int *stuck) {
  const pp_trace *t = a->trace;
  for (size_t i = 0; i < a->prof.ncounters; i++) {
    const pp_counter_stats *c = &a->prof.counters[i];
    if (!c->samples || !isfinite(c->last) ||
        pp_loc_metric(t, c->loc, mkind, NULL, NULL, NULL) != id)
      continue;
    if (pp_power_series_measured(c, 1))
      return c;
    *stuck = 1;
  }
  return NULL;
}

/* The platform's energy (RAPL psys: the library's domain series
 * energy.psys_j) when it moved over the run, or NULL; *stuck as
 * last_metric's. */
static const pp_counter_stats *platform_energy(const pp_analysis *a,
                                               uint32_t mkind, int *stuck) {
  const pp_trace *t = a->trace;
  for (size_t i = 0; i < a->prof.ncounters; i++) {
    const pp_counter_stats *c = &a->prof.counters[i];
    if (!c->samples || !isfinite(c->last) ||
        pp_loc_metric(t, c->loc, mkind, NULL, NULL, NULL) !=
            PP_METRIC_ENERGY_DOMAIN ||
        strcmp(pp_trace_loc_name(t, c->loc), "energy.psys_j") != 0)
      continue;
    if (pp_power_series_measured(c, 1))
      return c;
    *stuck = 1;
  }
  return NULL;
}

int pp_run_energy(const pp_analysis *a, pp_energy *e) {
  const pp_trace *t = a->trace;
  static const pp_metric_id gpu_ids[] = {PP_METRIC_GPU_RUN_ENERGY,
                                         PP_METRIC_GPU_ENERGY_ALL};
  memset(e, 0, sizeof *e);
  uint32_t mkind = pp_trace_metric_kind(t);
  int stuck = 0;
  const pp_counter_stats *cpu =
      last_metric(a, mkind, PP_METRIC_ENERGY_PACKAGE, &stuck);
  const pp_counter_stats *gpu = NULL;
  for (size_t i = 0; !gpu && i < sizeof gpu_ids / sizeof gpu_ids[0]; i++) {
    gpu = last_metric(a, mkind, gpu_ids[i], &stuck);
    if (gpu)
      e->gpu_counter = pp_metric_def_of(gpu_ids[i])->name;
  }
  /* no CPU package (some machines expose only psys): the platform's */
  const pp_counter_stats *plat = cpu ? NULL : platform_energy(a, mkind, &stuck);
  e->has_cpu = cpu != NULL;
  e->has_platform = plat != NULL;
  e->has_gpu = gpu != NULL;
  e->cpu_j = cpu ? cpu->last : 0;
  e->platform_j = plat ? plat->last : 0;
  e->gpu_j = gpu ? gpu->last : 0;
  e->joules = e->cpu_j + e->platform_j + e->gpu_j;
  if (cpu && gpu)
    e->sources = "CPU package + GPU";
  else if (cpu)
    e->sources = "CPU package";
  else if (plat && gpu)
    e->sources = "platform (psys) + GPU";
  else if (plat)
    e->sources = "platform (psys)";
  else if (gpu)
    e->sources = "GPU";
  else if (stuck)
    e->sources = "the energy counters did not move over the run (a counter "
                 "that does not move is not a measurement)";
  else if ((e->sources = pp_trace_unavailable(
                 t, (const char *const[]){"power", NULL})) == NULL)
    e->sources = "no energy counter in this trace (RAPL or NVML; run "
                 "under `pipeprof run` or with PIPEPROF_SAMPLE_HZ)";
  return cpu || plat || gpu;
}
