/* SPDX-License-Identifier: MIT */
/*
 * The system figures of an analysed trace, computed once: the run
 * (`pipeprof run`'s META run.*), the machine (CPU, per core, load, memory,
 * pressure, rates, frequency, throttling, temperatures, NUMA), the process
 * tree, the perf_event counters and ratios, RAPL power and energy and the
 * run's energy per frame and per call. The text report, the summary JSON
 * and (through the JSON) the HTML report only render this struct.
 *
 * Library metrics are found by their registry ids (metrics/registry.h):
 * only series recorded as PP_KIND_METRIC count (in a trace written before
 * that kind existed, where no site has it, counters of a registered name),
 * so a user counter named like a library metric is never a system figure.
 *
 * Every figure is either measured (ok = 1, its statistics set) or not,
 * with the reason META "unavailable.<group>" gives (why; its producer's
 * "unavailable: " prefix stripped), or NULL when no reason was recorded:
 * an unmeasured figure is never 0.
 *
 * Lifetime: strings (names, reasons, run facts) point into the trace; the
 * result lives no longer than it. pp_system_free() releases the arrays.
 */
#ifndef PP_ANALYZE_SYSTEM_H
#define PP_ANALYZE_SYSTEM_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"
#include "metrics/registry.h"

/* ---- library metrics among a trace's series ------------------------------ */

/* pp_trace_metric_kind and pp_loc_metric: model/trace.h. */

/* One library metric among a->prof.counters. */
typedef struct pp_metric_ref {
  const pp_counter_stats *c;
  pp_metric_id id;
  long index;       /* the {N} number, -1 without one */
  const char *free; /* the {*} part (free_len bytes), NULL without one */
  size_t free_len;
} pp_metric_ref;

/* The library metrics among a's counters, in a->prof.counters order, into
 * *out (malloc'ed, pp__free; NULL when none) and *n. 0, or -1 when out of
 * memory. */
int pp_trace_metrics(const pp_analysis *a, pp_metric_ref **out, size_t *n);

/* Did a sampled power-group series measure anything? An energy total
 * (is_total) must have moved over the run (one sample: be above 0); a
 * power gauge must have read above 0 once. A counter that exists but
 * stays put while the machine works (some VMs' perf energy-psys reads 0
 * throughout) is not a measurement: the analyses leave such series out
 * and say why (pp_system.power_why). */
int pp_power_series_measured(const pp_counter_stats *c, int is_total);
/* Is c a core's clock read from /proc/cpuinfo (META cpufreq.source: no
 * cpufreq driver) that never moved: the nominal clock a VM reports, not a
 * measurement? */
int pp_freq_series_nominal(const pp_trace *t, const pp_counter_stats *c);
/* Whether counter c of the analysed trace t may be shown as a figure: 0
 * for a library power series that did not move (above) and for a nominal
 * clock (pp_freq_series_nominal), 1 otherwise. The one test every view
 * applies (the report through pp_system_get, the summary JSON's counters
 * and their series, `pipeprof serve`'s /metrics). */
int pp_series_is_measurement(const pp_trace *t, const pp_counter_stats *c);

/* 1 when a counter name is a GPU one NVML reads ("gpu<N>.*", the GPUs'
 * energy totals; doc_nvml.c). */
int pp_counter_is_gpu(const char *name);

/* Is counter c of t a library metric (to list apart from user counters)? */
int pp_counter_is_library(const pp_trace *t, const pp_counter_stats *c);

/* ---- the system figures ----------------------------------------------- */

/* A sampled series, or why it was not measured. */
typedef struct pp_sys_fig {
  int ok; /* 1: measured, the figures below are set */
  double mean, min, max, last;
  uint64_t samples;
  const char *why; /* !ok: the reason, or NULL (no reason: leave it out) */
} pp_sys_fig;

/* A total of the process tree and where it comes from. */
typedef struct pp_sys_total {
  int ok;       /* v is set */
  int rusage;   /* from the run's rusage, else the last sample */
  double v;
  const char *why; /* !ok: the reason, or NULL */
} pp_sys_total;

/* A member of a numbered family (per core, per NUMA node). */
typedef struct pp_sys_indexed {
  unsigned long index;
  pp_sys_fig f;
} pp_sys_indexed;

typedef struct pp_sys_family {
  pp_sys_indexed *v; /* in order of index */
  size_t n;
  const char *why; /* n == 0: why the family was not measured, or NULL */
} pp_sys_family;

/* A member of a named family (temperature sensors). */
typedef struct pp_sys_named {
  const char *name; /* len bytes, from the machine: not clean text */
  size_t len;
  pp_sys_fig f;
} pp_sys_named;

/* A RAPL domain other than the package total: power and energy. */
typedef struct pp_sys_domain {
  const char *name; /* len bytes, from the machine */
  size_t len;
  pp_sys_fig w, j;
} pp_sys_domain;

/* A perf_event counter. */
typedef struct pp_sys_perf_event {
  const char *name; /* the event, e.g. "cycles" (NUL-terminated) */
  int known;        /* one of the events the perf collector opens */
  int hardware;     /* known: a hardware event */
  pp_sys_fig f;     /* f.last is the count over the run; why when absent */
  int has_running;  /* META perf.<event>.running_pct */
  double running_pct;
} pp_sys_perf_event;

/* A ratio of perf events: the sampler's figure, else one event's count
 * over another's. */
typedef struct pp_sys_ratio {
  int ok;
  double v;
} pp_sys_ratio;

/* Pressure stall information of one resource (cpu, memory, io). */
typedef struct pp_sys_psi {
  const char *resource;
  pp_sys_fig some, full; /* a shared why when neither was measured */
} pp_sys_psi;

/* Energy per unit of work: the run's energy (pp_run_energy) over n. */
typedef struct pp_sys_energy_per {
  int ok;
  const char *what; /* the frame stream or the zone, a trace name */
  uint64_t n;       /* frames, or calls */
  double joules, cpu_j, platform_j, gpu_j;
} pp_sys_energy_per;

typedef struct pp_system {
  int any; /* anything to report (a library metric of the system, process,
              perf or power groups, or an "unavailable.*" reason) */

  /* run: META run.* of `pipeprof run` */
  const char *run_command, *run_exit;
  int has_wall, has_user, has_system, has_maxrss;
  double wall_ns, user_ns, system_ns, maxrss_bytes;

  /* sampler */
  int has_hz;
  double hz;
  uint64_t samples; /* of sys.cpu.busy_pct, else the most of any sys.* */

  /* Statistics of every library metric that is not a family member, by
   * id (m[PP_METRIC_SYS_LOAD1], ...), with the reason of its group when
   * not measured. Entries of family rows ({N}, {*}) stay unset. */
  pp_sys_fig m[PP_METRIC_COUNT];

  /* the machine */
  int has_host;    /* a sys.* metric was recorded */
  int show_system; /* has_host, or a reason for a system group */
  pp_sys_family core_busy, core_freq, core_throttle, numa;
  char freq_nominal[160]; /* core_freq.why when the clock is nominal */
  pp_sys_psi psi[3];
  pp_sys_named *temps; /* in the counters' order */
  size_t ntemps;
  const char *temp_why_hwmon, *temp_why_thermal; /* no sensor: why */

  /* the process tree */
  int has_tree;     /* a proc.* metric was recorded */
  int show_tree;    /* has_tree, a reason for a process group, or maxrss */
  int cpu_time_src; /* 1 rusage of the run, 2 sampled, 0 neither */
  /* the tree's mean CPU: its CPU time over the run's wall time when the
   * run's rusage has both, else the sampled series's mean; NAN unknown */
  double cpu_mean_pct;
  int cpu_mean_rusage;
  /* The tree's totals: the run's rusage (wait4: every process of the tree
   * that was waited for, short-lived ones included) where `pipeprof run`
   * recorded it, else the last sample (ok and rusage 0: processes that
   * lived less than a sampling interval are missed). Context switches
   * from rusage count every thread; sampled, each process's main thread
   * (/proc/PID/status). */
  pp_sys_total minflt, majflt, vol_ctxt, nonvol_ctxt;
  double cpu_user_s, cpu_system_s; /* NAN where not known */
  const char *cpu_time_why;        /* cpu_time_src == 0: why, or NULL */

  /* perf_event */
  int show_perf; /* a perf.* metric, or an "unavailable.perf*" reason */
  int has_perf;  /* a perf.* metric */
  pp_sys_perf_event *perf; /* the known events in the collector's order
                              (measured or with a reason; those with
                              neither are left out), then the recorded
                              events it does not know, in counter order */
  size_t nperf;
  pp_sys_ratio ipc, cache_miss, branch_miss; /* ratios (0..1) */

  /* power and energy */
  int has_power;          /* a power.* or energy.* metric */
  const char *power_why;  /* !has_power: why, or NULL */
  char power_stuck[192];  /* power_why of series that did not move */
  pp_sys_domain *domains; /* by name */
  size_t ndomains;
  pp_energy energy;            /* the run's (pp_run_energy) */
  pp_sys_energy_per per_frame; /* over the first frame stream */
  pp_sys_energy_per per_call;  /* over the top zone's calls */
  int has_carbon;
  double carbon_g, g_per_kwh; /* of the run's energy */
  int g_per_kwh_default;      /* no META carbon.g_per_kwh: world average */
} pp_system;

/* Compute the system figures of the analysed trace t into *s. 0, or -1
 * (out of memory, or t not analysed) with *s empty. */
int pp_system_get(const pp_analysis *a, pp_system *s);
/* Release what pp_system_get allocated; safe on a zeroed struct, twice. */
void pp_system_free(pp_system *s);


/* The run's energy over n (n > 0) into *per. */
void pp_energy_per_unit(const pp_energy *e, uint64_t n, pp_sys_energy_per *per);

#endif /* PP_ANALYZE_SYSTEM_H */
