/* SPDX-License-Identifier: MIT */
/*
 * The system figures of an analysed trace (system.h), computed once from
 * the library metrics among a->prof.counters, found by registry id, and
 * from META (run.*, sampler.hz, carbon.g_per_kwh, unavailable.<group>,
 * perf.<event>.running_pct). The renderers (export/report_system.c, the
 * frame energy lines of report_text.c, summary_json.c) only print it.
 * docs/internals/system.md.
 */
#include "analyze/system.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "internal.h"

#define DEFAULT_G_PER_KWH 475.0

/* ---- library metrics among the series ------------------------------------ */

int pp_trace_metrics(const pp_analysis *a, pp_metric_ref **out, size_t *n) {
  const pp_trace *t = a->trace;
  *out = NULL;
  *n = 0;
  if (!a->prof.ncounters)
    return 0;
  pp_metric_ref *v = pp__malloc(a->prof.ncounters * sizeof *v);
  if (!v)
    return -1;
  uint32_t mkind = pp_trace_metric_kind(t);
  size_t k = 0;
  for (size_t i = 0; i < a->prof.ncounters; i++) {
    pp_metric_ref r = {&a->prof.counters[i], PP_METRIC_NONE, -1, NULL, 0};
    r.id = pp_loc_metric(t, r.c->loc, mkind, &r.index, &r.free, &r.free_len);
    if (r.id != PP_METRIC_NONE && r.c->samples)
      v[k++] = r;
  }
  if (!k) {
    pp__free(v);
    return 0;
  }
  *out = v;
  *n = k;
  return 0;
}

int pp_counter_is_library(const pp_trace *t, const pp_counter_stats *c) {
  return pp_loc_metric(t, c->loc, pp_trace_metric_kind(t), NULL, NULL, NULL) !=
         PP_METRIC_NONE;
}

/* ---- META -------------------------------------------------------------- */


#define REASON(t, ...)                                                         \
  pp_trace_unavailable((t), (const char *const[]){__VA_ARGS__, NULL})

/* The META groups that explain a missing metric, most specific first
 * (those the samplers write: src/core/sampler.c, collect/). */
static const struct {
  pp_metric_id id;
  const char *groups[4];
} why_groups[] = {
    {PP_METRIC_SYS_CPU_BUSY, {"cpu", "sys"}},
    {PP_METRIC_SYS_CPU_USER, {"cpu", "sys"}},
    {PP_METRIC_SYS_CPU_SYSTEM, {"cpu", "sys"}},
    {PP_METRIC_SYS_CPU_IOWAIT, {"cpu", "sys"}},
    {PP_METRIC_SYS_CPU_STEAL, {"cpu", "sys"}},
    {PP_METRIC_SYS_CTXT_RATE, {"cpu", "sys"}},
    {PP_METRIC_SYS_INTR_RATE, {"cpu", "sys"}},
    {PP_METRIC_SYS_LOAD1, {"loadavg", "sys"}},
    {PP_METRIC_SYS_MEM_TOTAL, {"meminfo", "sys"}},
    {PP_METRIC_SYS_MEM_AVAIL, {"meminfo", "sys"}},
    {PP_METRIC_SYS_MEM_USED, {"meminfo", "sys"}},
    {PP_METRIC_SYS_SWAP_USED, {"meminfo", "sys"}},
    {PP_METRIC_PROC_CPU, {"proc_stat", "proc"}},
    {PP_METRIC_PROC_USER, {"proc_stat", "proc"}},
    {PP_METRIC_PROC_SYSTEM, {"proc_stat", "proc"}},
    {PP_METRIC_PROC_CPU_USER_S, {"proc_stat", "proc"}},
    {PP_METRIC_PROC_CPU_SYSTEM_S, {"proc_stat", "proc"}},
    {PP_METRIC_PROC_PROCS, {"proc_stat", "proc"}},
    {PP_METRIC_PROC_THREADS, {"proc_stat", "proc"}},
    {PP_METRIC_PROC_RSS, {"proc_stat", "proc"}},
    {PP_METRIC_PROC_RSS_PEAK, {"proc_status", "proc_stat", "proc"}},
    {PP_METRIC_PROC_HWM, {"proc_status", "proc"}},
    {PP_METRIC_PROC_VSIZE, {"proc_stat", "proc"}},
    {PP_METRIC_PROC_MINFLT, {"proc_stat", "proc"}},
    {PP_METRIC_PROC_MAJFLT, {"proc_stat", "proc"}},
    {PP_METRIC_PROC_VOL_CTXT, {"proc_status", "proc"}},
    {PP_METRIC_PROC_NONVOL_CTXT, {"proc_status", "proc"}},
    {PP_METRIC_PROC_READ_BYTES, {"proc_io", "proc"}},
    {PP_METRIC_PROC_WRITE_BYTES, {"proc_io", "proc"}},
    {PP_METRIC_PROC_MINFLT_RATE, {"proc_stat", "proc"}},
    {PP_METRIC_PROC_MAJFLT_RATE, {"proc_stat", "proc"}},
    {PP_METRIC_PROC_READ_RATE, {"proc_io", "proc"}},
    {PP_METRIC_PROC_WRITE_RATE, {"proc_io", "proc"}},
    {PP_METRIC_POWER_PACKAGE, {"power", "energy", "rapl"}},
    {PP_METRIC_ENERGY_PACKAGE, {"power", "energy", "rapl"}},
};

/* Groups of the machine's reasons: a reason for one of them alone shows
 * the system section. */
static const char *const system_groups[] = {
    "sys",        "cpu",    "loadavg", "meminfo",  "psi_cpu",
    "psi_memory", "psi_io", "cpufreq", "throttle", "hwmon",
    "thermal",    "numa",   NULL};
static const char *const tree_groups[] = {"proc", "proc_stat", "proc_status",
                                          "proc_io", NULL};

static int any_meta(const pp_trace *t, const char *prefix) {
  size_t n = strlen(prefix);
  for (size_t i = 0; i < t->nmeta; i++)
    if (t->meta[i].key && strncmp(t->meta[i].key, prefix, n) == 0)
      return 1;
  return 0;
}

/* ---- figures ------------------------------------------------------------ */

/* The reason for power series that did not move
 * (pp_power_series_measured): the first of them, c, and how many more. */
static void stuck_reason(const pp_trace *t, const pp_counter_stats *c,
                         size_t more, pp_system *s) {
  char others[48] = "";
  if (more)
    snprintf(others, sizeof others, " (and %zu more power series)", more);
  snprintf(s->power_stuck, sizeof s->power_stuck,
           "%s%s stayed at %.6g over %llu samples (a counter that does not "
           "move is not a measurement)",
           pp_trace_loc_name(t, c->loc), others, c->last,
           (unsigned long long)c->samples);
}

static pp_sys_fig fig_of(const pp_counter_stats *c) {
  return (pp_sys_fig){1, c->mean, c->min, c->max, c->last, c->samples, NULL};
}

static int cmp_indexed(const void *a, const void *b) {
  const pp_sys_indexed *x = a, *y = b;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* The members of the numbered family id, in order of index. */
static int family(const pp_metric_ref *r, size_t n, pp_metric_id id,
                  pp_sys_family *f) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    k += r[i].id == id && r[i].index >= 0;
  if (!k)
    return 0;
  f->v = pp__malloc(k * sizeof *f->v);
  if (!f->v)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (r[i].id == id && r[i].index >= 0)
      f->v[f->n++] =
          (pp_sys_indexed){(unsigned long)r[i].index, fig_of(r[i].c)};
  qsort(f->v, f->n, sizeof *f->v, cmp_indexed);
  return 0;
}

static pp_sys_domain *find_domain(pp_sys_domain *d, size_t n, const char *s,
                                  size_t len) {
  for (size_t i = 0; i < n; i++)
    if (d[i].len == len && memcmp(d[i].name, s, len) == 0)
      return &d[i];
  return NULL;
}

static int cmp_domain(const void *a, const void *b) {
  const pp_sys_domain *x = a, *y = b;
  int c = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);
  if (c)
    return c;
  return x->len < y->len ? -1 : x->len > y->len;
}

/* RAPL domains other than the package total, by name. */
static int domains(const pp_metric_ref *r, size_t n, pp_system *s) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    k +=
        r[i].id == PP_METRIC_POWER_DOMAIN || r[i].id == PP_METRIC_ENERGY_DOMAIN;
  if (!k)
    return 0;
  pp_sys_domain *d = pp__calloc(k, sizeof *d);
  if (!d)
    return -1;
  size_t nd = 0;
  for (size_t i = 0; i < n; i++) {
    int is_w = r[i].id == PP_METRIC_POWER_DOMAIN;
    if (!is_w && r[i].id != PP_METRIC_ENERGY_DOMAIN)
      continue;
    pp_sys_domain *e = find_domain(d, nd, r[i].free, r[i].free_len);
    if (!e) {
      e = &d[nd++];
      e->name = r[i].free;
      e->len = r[i].free_len;
    }
    if (is_w)
      e->w = fig_of(r[i].c);
    else
      e->j = fig_of(r[i].c);
  }
  qsort(d, nd, sizeof *d, cmp_domain);
  s->domains = d;
  s->ndomains = nd;
  return 0;
}

static int temps(const pp_trace *t, const pp_metric_ref *r, size_t n,
                 pp_system *s) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    k += r[i].id == PP_METRIC_SYS_TEMP;
  if (!k) {
    s->temp_why_hwmon = REASON(t, "hwmon");
    s->temp_why_thermal = REASON(t, "thermal");
    if (!s->temp_why_hwmon && !s->temp_why_thermal)
      s->temp_why_hwmon = REASON(t, "sys");
    return 0;
  }
  s->temps = pp__malloc(k * sizeof *s->temps);
  if (!s->temps)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (r[i].id == PP_METRIC_SYS_TEMP)
      s->temps[s->ntemps++] =
          (pp_sys_named){r[i].free, r[i].free_len, fig_of(r[i].c)};
  return 0;
}

/* ---- perf_event ---------------------------------------------------------- */

/* The events the perf collector opens (collect/perf.c), in its order. */
static const struct {
  const char *name;
  int hardware;
} perf_events[] = {{"cycles", 1},
                   {"instructions", 1},
                   {"cache-references", 1},
                   {"cache-misses", 1},
                   {"branches", 1},
                   {"branch-misses", 1},
                   {"L1-dcache-load-misses", 1},
                   {"LLC-load-misses", 1},
                   {"task-clock", 0},
                   {"context-switches", 0},
                   {"cpu-migrations", 0},
                   {"page-faults", 0}};
#define N_PERF_EVENTS (sizeof perf_events / sizeof perf_events[0])

/* The recorded perf.<event> counter of ev, or NULL. */
static const pp_metric_ref *perf_ref(const pp_metric_ref *r, size_t n,
                                     const char *ev) {
  size_t len = strlen(ev);
  int clock = strcmp(ev, "task-clock") == 0; /* a row of its own */
  for (size_t i = 0; i < n; i++)
    if ((clock && r[i].id == PP_METRIC_PERF_TASK_CLOCK) ||
        (r[i].id == PP_METRIC_PERF_EVENT && r[i].free_len == len &&
         memcmp(r[i].free, ev, len) == 0))
      return &r[i];
  return NULL;
}

/* Why perf event ev has no value: "unavailable.perf.<event>", then the
 * hardware or software group, then "perf". */
static const char *perf_reason(const pp_trace *t, const char *ev, int hw) {
  char g[96];
  int n = snprintf(g, sizeof g, "perf.%s", ev);
  const char *r = NULL;
  if (n > 0 && (size_t)n < sizeof g)
    r = REASON(t, g);
  if (!r)
    r = hw ? REASON(t, "perf_hw", "perf") : REASON(t, "perf_sw", "perf");
  return r;
}

static void perf_running(const pp_trace *t, pp_sys_perf_event *e) {
  char k[128];
  int n = snprintf(k, sizeof k, "perf.%s.running_pct", e->name);
  e->has_running =
      n > 0 && (size_t)n < sizeof k && pp_trace_meta_num(t, k, &e->running_pct);
}

/* A ratio: the sampler's figure, else num_ev's count over den_ev's. */
static pp_sys_ratio perf_ratio(const pp_system *s, pp_metric_id id,
                               const pp_metric_ref *r, size_t n,
                               const char *num_ev, const char *den_ev) {
  if (s->m[id].ok && isfinite(s->m[id].last))
    return (pp_sys_ratio){1, s->m[id].last};
  const pp_metric_ref *a = perf_ref(r, n, num_ev), *b = perf_ref(r, n, den_ev);
  if (a && b && b->c->last > 0 && isfinite(a->c->last) && isfinite(b->c->last))
    return (pp_sys_ratio){1, a->c->last / b->c->last};
  return (pp_sys_ratio){0, 0};
}

static int perf(const pp_trace *t, const pp_metric_ref *r, size_t n,
                pp_system *s) {
  size_t k = N_PERF_EVENTS;
  for (size_t i = 0; i < n; i++)
    k += r[i].id == PP_METRIC_PERF_EVENT;
  s->perf = pp__calloc(k, sizeof *s->perf);
  if (!s->perf)
    return -1;
  for (size_t i = 0; i < N_PERF_EVENTS; i++) {
    pp_sys_perf_event *e = &s->perf[s->nperf];
    *e = (pp_sys_perf_event){
        perf_events[i].name, 1, perf_events[i].hardware, {0}, 0, 0};
    const pp_metric_ref *c = perf_ref(r, n, e->name);
    if (c)
      e->f = fig_of(c->c);
    else
      e->f.why = perf_reason(t, e->name, e->hardware);
    if (!e->f.ok && !e->f.why)
      continue;
    perf_running(t, e);
    s->nperf++;
  }
  /* Events this build does not know by name, as recorded: their names are
   * the trace's (NUL-terminated after "perf."). */
  for (size_t i = 0; i < n; i++) {
    if (r[i].id != PP_METRIC_PERF_EVENT)
      continue;
    int known = 0;
    for (size_t j = 0; j < N_PERF_EVENTS && !known; j++)
      known = strlen(perf_events[j].name) == r[i].free_len &&
              memcmp(perf_events[j].name, r[i].free, r[i].free_len) == 0;
    if (known)
      continue;
    pp_sys_perf_event *e = &s->perf[s->nperf++];
    *e = (pp_sys_perf_event){r[i].free, 0, 0, fig_of(r[i].c), 0, 0};
    perf_running(t, e);
  }
  s->ipc = perf_ratio(s, PP_METRIC_PERF_IPC, r, n, "instructions", "cycles");
  s->cache_miss = perf_ratio(s, PP_METRIC_PERF_CACHE_MISS, r, n, "cache-misses",
                             "cache-references");
  s->branch_miss = perf_ratio(s, PP_METRIC_PERF_BRANCH_MISS, r, n,
                              "branch-misses", "branches");
  return 0;
}

/* ---- energy ------------------------------------------------------------ */

void pp_energy_per_unit(const pp_energy *e, uint64_t n,
                        pp_sys_energy_per *per) {
  double d = (double)n;
  per->ok = n > 0;
  per->n = n;
  per->joules = n ? e->joules / d : 0;
  per->cpu_j = n ? e->cpu_j / d : 0;
  per->platform_j = n ? e->platform_j / d : 0;
  per->gpu_j = n ? e->gpu_j / d : 0;
}

/* Energy per frame of the first frame stream and per call of the top
 * zone, and the carbon estimate, all from the run's energy
 * (pp_run_energy: CPU package + GPU), the one definition the frame and
 * request figures use too. */
static void energy(const pp_analysis *a, pp_system *s) {
  const pp_trace *t = a->trace;
  if (!pp_run_energy(a, &s->energy))
    return;
  const pp_profile *p = &a->prof;
  if (p->nframes && p->frames[0].frames) {
    pp_energy_per_unit(&s->energy, p->frames[0].frames, &s->per_frame);
    s->per_frame.what = pp_trace_loc_name(t, p->frames[0].loc);
  }
  if (p->nzones && p->zones[0].count) {
    pp_energy_per_unit(&s->energy, p->zones[0].count, &s->per_call);
    s->per_call.what = pp_trace_loc_name(t, p->zones[0].loc);
  }
  double g;
  s->g_per_kwh_default = !(pp_trace_meta_num(t, "carbon.g_per_kwh", &g) && g > 0);
  s->g_per_kwh = s->g_per_kwh_default ? DEFAULT_G_PER_KWH : g;
  s->carbon_g = s->energy.joules / 3.6e6 * s->g_per_kwh;
  s->has_carbon = 1;
}

/* ---- the whole ---------------------------------------------------------- */

static void run_facts(const pp_trace *t, pp_system *s) {
  s->run_command = pp_trace_meta(t, "run.command");
  s->run_exit = pp_trace_meta(t, "run.exit");
  s->has_wall = pp_trace_meta_num(t, "run.wall_ns", &s->wall_ns);
  s->has_user = pp_trace_meta_num(t, "run.user_ns", &s->user_ns);
  s->has_system = pp_trace_meta_num(t, "run.system_ns", &s->system_ns);
  s->has_maxrss = pp_trace_meta_num(t, "run.maxrss_bytes", &s->maxrss_bytes);
  s->has_hz = pp_trace_meta_num(t, "sampler.hz", &s->hz);
}

/* CPU seconds of the tree: rusage when `pipeprof run` recorded it, else
 * the last sample. */
static void tree_cpu_time(const pp_trace *t, pp_system *s) {
  s->cpu_user_s = s->cpu_system_s = NAN;
  if (s->has_user || s->has_system) {
    if (s->has_user)
      s->cpu_user_s = s->user_ns / 1e9;
    if (s->has_system)
      s->cpu_system_s = s->system_ns / 1e9;
    s->cpu_time_src = 1;
    return;
  }
  const pp_sys_fig *u = &s->m[PP_METRIC_PROC_CPU_USER_S];
  const pp_sys_fig *y = &s->m[PP_METRIC_PROC_CPU_SYSTEM_S];
  if (u->ok)
    s->cpu_user_s = u->last;
  if (y->ok)
    s->cpu_system_s = y->last;
  s->cpu_time_src = u->ok || y->ok ? 2 : 0;
  if (!s->cpu_time_src)
    s->cpu_time_why = REASON(t, "proc_stat", "proc");
}

/* A tree total from META key (the run's rusage), else the last sample of
 * the library metric id. */
static pp_sys_total tree_total(const pp_trace *t, const pp_system *s,
                               const char *key, pp_metric_id id) {
  pp_sys_total o = {0, 0, 0, NULL};
  double v;
  if (pp_trace_meta_num(t, key, &v) && v >= 0) {
    o.ok = o.rusage = 1;
    o.v = v;
  } else if (s->m[id].ok) {
    o.ok = 1;
    o.v = s->m[id].last;
  } else {
    o.why = s->m[id].why;
  }
  return o;
}

static void tree_totals(const pp_trace *t, pp_system *s) {
  s->minflt = tree_total(t, s, "run.minflt", PP_METRIC_PROC_MINFLT);
  s->majflt = tree_total(t, s, "run.majflt", PP_METRIC_PROC_MAJFLT);
  s->vol_ctxt = tree_total(t, s, "run.nvcsw", PP_METRIC_PROC_VOL_CTXT);
  s->nonvol_ctxt = tree_total(t, s, "run.nivcsw", PP_METRIC_PROC_NONVOL_CTXT);
  s->cpu_mean_pct = NAN;
  double cpu = (isfinite(s->cpu_user_s) ? s->cpu_user_s : 0) +
               (isfinite(s->cpu_system_s) ? s->cpu_system_s : 0);
  if (s->cpu_time_src == 1 && s->has_wall && s->wall_ns > 0) {
    s->cpu_mean_pct = cpu / (s->wall_ns / 1e9) * 100.0;
    s->cpu_mean_rusage = 1;
  } else if (s->m[PP_METRIC_PROC_CPU].ok) {
    s->cpu_mean_pct = s->m[PP_METRIC_PROC_CPU].mean;
  }
}

/* The reason the core clocks are left out when every one of them was the
 * nominal clock of /proc/cpuinfo (pp_freq_series_nominal): nominal is one
 * such series, or NULL. */
static void nominal_freq(const pp_counter_stats *nominal, pp_system *s) {
  pp_sys_family *f = &s->core_freq;
  if (!nominal || f->n)
    return;
  snprintf(s->freq_nominal, sizeof s->freq_nominal,
           "no cpufreq driver: /proc/cpuinfo's %.0f MHz never moved (the "
           "nominal clock, not a measurement)",
           nominal->min);
  f->why = s->freq_nominal;
}

static int is_family(pp_metric_id id) {
  const char *p = pp_metric_def_of(id)->name;
  return strstr(p, "{N}") || strstr(p, "{*}");
}

static void psi(const pp_metric_ref *r, size_t n, pp_system *s,
                const pp_trace *t) {
  static const char *const res[] = {"cpu", "memory", "io"};
  for (size_t i = 0; i < 3; i++) {
    pp_sys_psi *p = &s->psi[i];
    p->resource = res[i];
    size_t len = strlen(res[i]);
    for (size_t k = 0; k < n; k++) {
      if ((r[k].id != PP_METRIC_SYS_PSI_SOME &&
           r[k].id != PP_METRIC_SYS_PSI_FULL) ||
          r[k].free_len != len || memcmp(r[k].free, res[i], len) != 0)
        continue;
      pp_sys_fig *f = r[k].id == PP_METRIC_SYS_PSI_SOME ? &p->some : &p->full;
      if (!f->ok)
        *f = fig_of(r[k].c);
    }
    if (!p->some.ok && !p->full.ok) {
      char g[32];
      snprintf(g, sizeof g, "psi_%s", res[i]);
      p->some.why = p->full.why = REASON(t, g, "sys");
    }
  }
}

int pp_system_get(const pp_analysis *a, pp_system *s) {
  const pp_trace *t = a->trace;
  memset(s, 0, sizeof *s);
  if (!t || !a->analyzed)
    return -1;
  pp_metric_ref *r;
  size_t n;
  if (pp_trace_metrics(a, &r, &n))
    return -1;
  run_facts(t, s);

  /* Single series, first of a name wins (as pp_profile_metric). */
  /* Power series that did not move and nominal clocks are left out of
   * every figure. */
  size_t nstuck = 0, kept = 0;
  const pp_counter_stats *first_stuck = NULL, *nominal = NULL;
  for (size_t i = 0; i < n; i++) {
    if (pp_freq_series_nominal(t, r[i].c)) {
      nominal = r[i].c;
    } else if (!pp_series_is_measurement(t, r[i].c)) {
      if (!nstuck++)
        first_stuck = r[i].c;
    } else {
      r[kept++] = r[i];
    }
  }
  n = kept;
  if (nstuck)
    stuck_reason(t, first_stuck, nstuck - 1, s);
  uint64_t host_samples = 0;
  for (size_t i = 0; i < n; i++) {
    pp_metric_group g = pp_metric_def_of(r[i].id)->group;
    if (g == PP_GROUP_PROCESS)
      s->has_tree = 1;
    else if (g == PP_GROUP_PERF)
      s->has_perf = 1;
    else if (g == PP_GROUP_POWER)
      s->has_power = 1;
    else if (pp_metric_group_is_host(g)) {
      s->has_host = 1;
      if (r[i].c->samples > host_samples)
        host_samples = r[i].c->samples;
    }
    if (!is_family(r[i].id) && !s->m[r[i].id].ok)
      s->m[r[i].id] = fig_of(r[i].c);
  }
  for (size_t i = 0; i < sizeof why_groups / sizeof why_groups[0]; i++) {
    pp_sys_fig *f = &s->m[why_groups[i].id];
    if (!f->ok)
      f->why = pp_trace_unavailable(t, why_groups[i].groups);
  }
  s->samples = s->m[PP_METRIC_SYS_CPU_BUSY].ok
                   ? s->m[PP_METRIC_SYS_CPU_BUSY].samples
                   : host_samples;
  s->show_system = s->has_host || pp_trace_unavailable(t, system_groups);
  s->show_tree =
      s->has_tree || pp_trace_unavailable(t, tree_groups) || s->has_maxrss;
  s->show_perf = s->has_perf || any_meta(t, "unavailable.perf");
  if (!s->has_power) {
    s->power_why = REASON(t, "power", "energy", "rapl");
    if (!s->power_why && nstuck)
      s->power_why = s->power_stuck;
  }
  s->any = s->has_host || s->has_tree || s->has_perf || s->has_power ||
           nstuck || any_meta(t, "unavailable.");

  int rc = family(r, n, PP_METRIC_SYS_CPUN_BUSY, &s->core_busy);
  if (!rc)
    rc = family(r, n, PP_METRIC_SYS_CPUN_FREQ, &s->core_freq);
  if (!rc)
    rc = family(r, n, PP_METRIC_SYS_CPUN_THROTTLE, &s->core_throttle);
  if (!rc)
    rc = family(r, n, PP_METRIC_SYS_NUMAN_USED, &s->numa);
  if (!rc)
    rc = temps(t, r, n, s);
  if (!rc)
    rc = domains(r, n, s);
  if (!rc)
    rc = perf(t, r, n, s);
  nominal_freq(nominal, s);
  if (!s->core_freq.n && !s->core_freq.why)
    s->core_freq.why = REASON(t, "cpufreq", "sys");
  if (!s->core_throttle.n)
    s->core_throttle.why = REASON(t, "throttle", "sys");
  if (!s->numa.n)
    s->numa.why = REASON(t, "numa");
  psi(r, n, s, t);
  tree_cpu_time(t, s);
  tree_totals(t, s);
  energy(a, s);
  pp__free(r);
  if (rc) {
    pp_system_free(s);
    return -1;
  }
  return 0;
}

void pp_system_free(pp_system *s) {
  if (!s)
    return;
  pp__free(s->core_busy.v);
  pp__free(s->core_freq.v);
  pp__free(s->core_throttle.v);
  pp__free(s->numa.v);
  pp__free(s->temps);
  pp__free(s->domains);
  pp__free(s->perf);
  memset(s, 0, sizeof *s);
}
