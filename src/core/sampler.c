/* SPDX-License-Identifier: MIT */
/*
 * The sampler thread (see sampler.h): reads the system, a process tree,
 * perf_event counters and RAPL energy every 1/hz and records each figure as
 * a counter of the running session. Names are built once per sample with
 * snprintf and interned by pp_counter_setf (no allocation after the first
 * sample). Unavailable metric groups are reported once, as metadata.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../collect/nvml.h"
#include "../collect/perf.h"
#include "../collect/power.h"
#include "../collect/proc.h"
#include "../internal.h"
#include "clock.h"
#include "meta.h"
#include "recorder.h"
#include "sampler.h"

/* One process or thread of the tree, tracked from its first sample. */
typedef struct trk_ent {
  pid_t id, owner; /* tid and pid, or pid and ppid */
  uint64_t start;  /* start ticks: with id, the identity */
  char comm[64];
  uint64_t first_ns, last_ns;
  uint64_t user_ns, sys_ns;        /* last seen */
  uint64_t rate_cpu_ns, rate_t_ns; /* previous sighting, for the rate */
  const pp_srcloc *pct_loc; /* a thread's proc.thread.<tid>.cpu_pct */
  double pct_recorded;      /* its last value recorded; NAN: none yet */
} trk_ent;

/* A table of tracked entities with a hash from id to the newest entry. */
typedef struct trk_table {
  trk_ent *e;
  size_t n, max;
  int32_t *hash; /* 4 * max slots, -1 empty */
  size_t hcap;
  size_t untracked_max; /* most seen at once past the bound */
} trk_table;

struct pp__sampler {
  pp__sampler_cfg cfg;
  trk_table procs, threads;
  int want_threads; /* tracking asked for (off when out of memory) */
  pp_thread_list tlist;
  pp_collect_proc *proc;
  pp_collect_perf *perf;
  pp_collect_power *power;
  pp_system_sample sys[2];
  pp_tree_sample tree[2];
  pp_system_rates srates;
  pp_tree_rates trates;
  pp_perf_sample perf_sample;
  pp_power_sample power_sample;
  int64_t power_open_ns; /* when s->power was opened (pp__mono_ns) */
  long ncpu;             /* CPUs online at open; 0 unknown */
  int cur;               /* index of the newest sample in sys[]/tree[] */
  int64_t perf_read_ns;  /* when perf counters were last read */
  pp_collect_gpu *gpu;
  pp_gpu_sample *gpu_sample; /* large: on the heap */
  pid_t *gpu_pids;
  size_t gpu_cap;
  int64_t gpu_read_ns;
  unsigned long n;    /* samples taken */
  pthread_t thread;
  int started;
  pthread_mutex_t lock; /* guards status and stop */
  pthread_cond_t cond;
  int stop;
  int64_t cpu_ns;     /* the thread's CPU time when it ended; -1 unknown */
  pp__sampler_status status;
  char sysroot[256];
};

/* Library metrics are interned as PP_KIND_METRIC (metrics/registry.h),
 * apart from user counters of the same name. */
static void set_named(const char *name, double v) {
  if (isfinite(v))
    pp_counter_setf_loc(pp__intern(name, PP_KIND_METRIC), v);
}

/* set("literal", v): the name is interned once per call site (interned
 * names live as long as the process), not at every sample. */
#define set(name, v)                                                           \
  do {                                                                         \
    static _Atomic(const pp_srcloc *) set_loc_;                                \
    double set_v_ = (v);                                                       \
    if (!isfinite(set_v_))                                                     \
      break;                                                                   \
    const pp_srcloc *set_l_ = atomic_load_explicit(&set_loc_,                  \
                                                   memory_order_relaxed);      \
    if (!set_l_) {                                                             \
      set_l_ = pp__intern("" name "", PP_KIND_METRIC);                         \
      atomic_store_explicit(&set_loc_, set_l_, memory_order_relaxed);          \
    }                                                                          \
    pp_counter_setf_loc(set_l_, set_v_);                                       \
  } while (0)

#define setu(name, v)                                                          \
  do {                                                                         \
    uint64_t setu_v_ = (v);                                                    \
    if (setu_v_ != PP_COLLECT_NONE)                                            \
      set(name, (double)setu_v_);                                              \
  } while (0)

static void setf(double v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void setf(double v, const char *fmt, ...) {
  char name[160];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(name, sizeof name, fmt, ap);
  va_end(ap);
  if (k > 0 && (size_t)k < sizeof name)
    set_named(name, v);
}

static void gpu_counter(void *ctx, const char *name, double v) {
  (void)ctx;
  set_named(name, v);
}

static void gpu_meta(void *ctx, const char *key, const char *val) {
  (void)ctx;
  pp__session_meta(key, val);
}

/* Group names in metadata keys: "unavailable.<name>". */
static void report_unavailable(pp__sampler *s) {
  char key[96];
  /* a root with no /proc (a mistyped PIPEPROF_SYSROOT) samples nothing:
   * said once, here, rather than by every group's empty figures */
  char stat_path[sizeof s->sysroot + 16];
  snprintf(stat_path, sizeof stat_path, "%s/proc/stat",
           strcmp(s->sysroot, "/") ? s->sysroot : "");
  if (access(stat_path, R_OK) != 0) {
    char why[2 * sizeof stat_path + 160];
    snprintf(why, sizeof why, "cannot read %s (%s): the root is %s%s",
             stat_path, strerror(errno), s->sysroot,
             strcmp(s->sysroot, "/") ? " (PIPEPROF_SYSROOT)" : "");
    pp__session_meta("unavailable.proc", why);
    if (strcmp(s->sysroot, "/"))
      fprintf(stderr, "pipeprof: %s; no system samples\n", why);
  }
  if (s->proc)
    for (int g = 0; g < PP_COLLECT_NGROUPS; g++) {
      const char *why = pp_collect_proc_reason(s->proc, (pp_collect_group)g);
      if (!why || !*why)
        continue;
      if (!s->cfg.system && g < PP_COLLECT_PROC_STAT)
        continue;
      snprintf(key, sizeof key, "unavailable.%s",
               pp_collect_group_name((pp_collect_group)g));
      pp__session_meta(key, why);
    }
  if (s->cfg.system && pp_collect_proc_freq_from_cpuinfo(s->proc))
    pp__session_meta("cpufreq.source", "cpuinfo"); /* no cpufreq driver */
  if (s->perf) {
    const char *hw = pp_collect_perf_hw_reason(s->perf);
    if (hw && *hw)
      pp__session_meta("unavailable.perf_hw", hw);
  } else if (s->cfg.perf) {
    pp__session_meta("unavailable.perf", "perf_event counters not opened");
  }
  if (s->cfg.gpu) {
    if (!s->gpu || !s->gpu_sample)
      pp__session_meta("unavailable.gpu", "out of memory");
    else
      pp_gpu_sample_meta(s->gpu, NULL, gpu_meta, NULL);
  }
  if (s->cfg.power) {
    if (!s->power)
      pp__session_meta("unavailable.power", "out of memory");
    else if (pp_collect_power_source(s->power) == PP_POWER_NONE)
      pp__session_meta("unavailable.power", pp_collect_power_reason(s->power));
  }
}

static void record_system(pp__sampler *s, const pp_system_sample *a,
                          const pp_system_sample *b) {
  if (b->mem_total != PP_COLLECT_NONE) {
    setu("sys.mem.total_bytes", b->mem_total);
    if (b->mem_available != PP_COLLECT_NONE) {
      setu("sys.mem.available_bytes", b->mem_available);
      set("sys.mem.used_bytes", (double)b->mem_total - b->mem_available);
    }
  }
  if (b->swap_total != PP_COLLECT_NONE && b->swap_free != PP_COLLECT_NONE)
    set("sys.swap.used_bytes", (double)b->swap_total - b->swap_free);
  set("sys.load1", b->load1);
  for (size_t i = 0; i < b->ncpu_slots; i++) {
    const pp_cpu_sample *c = &b->cpu[i];
    if (!c->online)
      continue;
    if (c->freq_khz != PP_COLLECT_NONE)
      setf((double)c->freq_khz / 1000.0, "sys.cpu%zu.freq_mhz", i);
    if (c->throttle_core != PP_COLLECT_NONE ||
        c->throttle_package != PP_COLLECT_NONE) {
      uint64_t t = 0;
      if (c->throttle_core != PP_COLLECT_NONE)
        t += c->throttle_core;
      if (c->throttle_package != PP_COLLECT_NONE)
        t += c->throttle_package;
      setf((double)t, "sys.cpu%zu.throttle_total", i);
    }
  }
  for (size_t i = 0; i < b->ntemps; i++)
    setf(b->temps[i].celsius, "sys.temp.%s.%s_c",
         b->temps[i].chip ? b->temps[i].chip : "?",
         b->temps[i].label ? b->temps[i].label : "?");
  for (size_t i = 0; i < b->nnodes; i++)
    if (b->nodes[i].mem_used != PP_COLLECT_NONE)
      setf((double)b->nodes[i].mem_used, "sys.numa%d.used_bytes",
           b->nodes[i].node);
  if (!a || pp_collect_system_rates(a, b, &s->srates) != 0)
    return;
  const pp_system_rates *r = &s->srates;
  if (r->total.valid) {
    set("sys.cpu.busy_pct", 100 * r->total.busy);
    set("sys.cpu.user_pct", 100 * r->total.user);
    set("sys.cpu.system_pct", 100 * r->total.system);
    set("sys.cpu.iowait_pct", 100 * r->total.iowait);
    set("sys.cpu.steal_pct", 100 * r->total.steal);
  }
  for (size_t i = 0; i < r->ncpu_slots; i++)
    if (r->cpu[i].valid)
      setf(100 * r->cpu[i].busy, "sys.cpu%zu.busy_pct", i);
  set("sys.ctxt_per_s", r->ctxt_per_s);
  set("sys.intr_per_s", r->intr_per_s);
  static const char *const psi[PP_PSI_N] = {"cpu", "memory", "io", "irq"};
  for (int k = 0; k < PP_PSI_N; k++) {
    setf(100 * r->psi_some[k], "sys.psi.%s.some_pct", psi[k]);
    setf(100 * r->psi_full[k], "sys.psi.%s.full_pct", psi[k]);
  }
  pthread_mutex_lock(&s->lock);
  s->status.sys_busy_pct = r->total.valid ? 100 * r->total.busy : -1;
  pthread_mutex_unlock(&s->lock);
}

static void record_tree(pp__sampler *s, const pp_tree_sample *a,
                        const pp_tree_sample *b) {
  const pp_proc_counters *c = &b->total;
  set("proc.cpu_user_s", (double)c->utime_ns * 1e-9);
  set("proc.cpu_system_s", (double)c->stime_ns * 1e-9);
  if (b->nproc == 0)
    return; /* the tree has exited: only its totals still mean something */
  set("proc.procs", (double)b->nproc);
  set("proc.threads", (double)b->num_threads);
  set("proc.rss_bytes", (double)b->rss_bytes);
  set("proc.rss_peak_bytes", (double)b->rss_peak_bytes);
  setu("proc.hwm_bytes", b->hwm_max_bytes);
  set("proc.vsize_bytes", (double)b->vsize_bytes);
  set("proc.minflt_total", (double)c->minflt);
  set("proc.majflt_total", (double)c->majflt);
  set("proc.vol_ctxt_total", (double)c->vol_ctxt);
  set("proc.nonvol_ctxt_total", (double)c->nonvol_ctxt);
  set("proc.read_bytes_total", (double)c->read_bytes);
  set("proc.write_bytes_total", (double)c->write_bytes);
  double cpu = -1;
  if (a && pp_collect_tree_rates(a, b, &s->trates) == 0) {
    pp_tree_rates *r = &s->trates;
    /* The counters move in clock ticks (10 ms): over a 100 ms interval a
     * tree of several processes can read more CPU than the machine has
     * (205% on 2 cores). No tree runs faster than every CPU: bound it. */
    double most = 100.0 * (double)s->ncpu;
    if (s->ncpu > 0 && r->cpu_pct > most) {
      double k = most / r->cpu_pct;
      r->cpu_pct = most;
      r->cpu_user_pct *= k;
      r->cpu_system_pct *= k;
    }
    set("proc.cpu_pct", r->cpu_pct);
    set("proc.user_pct", r->cpu_user_pct);
    set("proc.system_pct", r->cpu_system_pct);
    set("proc.minflt_per_s", r->minflt_per_s);
    set("proc.majflt_per_s", r->majflt_per_s);
    set("proc.read_bytes_per_s", r->read_bytes_per_s);
    set("proc.write_bytes_per_s", r->write_bytes_per_s);
    cpu = r->cpu_pct;
  }
  pthread_mutex_lock(&s->lock);
  if (cpu >= 0)
    s->status.cpu_pct = cpu;
  s->status.rss_bytes = (double)b->rss_bytes;
  pthread_mutex_unlock(&s->lock);
}

/* ---- per-process and per-thread tables ----------------------------------- */

static int trk_init(trk_table *t, size_t max) {
  size_t cap = 64;
  while (cap < max * 4)
    cap *= 2;
  t->e = pp__calloc(max, sizeof *t->e);
  t->hash = pp__malloc(cap * sizeof *t->hash);
  if (!t->e || !t->hash) {
    pp__free(t->e);
    pp__free(t->hash);
    memset(t, 0, sizeof *t);
    return -1;
  }
  for (size_t i = 0; i < cap; i++)
    t->hash[i] = -1;
  t->hcap = cap;
  t->max = max;
  return 0;
}

static void trk_free(trk_table *t) {
  pp__free(t->e);
  pp__free(t->hash);
  memset(t, 0, sizeof *t);
}

/* The entry of (id, start), made when new and room is left; NULL when the
 * table is full (or off). *fresh says it was made now. */
static trk_ent *trk_get(trk_table *t, pid_t id, uint64_t start, int *fresh) {
  *fresh = 0;
  if (!t->max)
    return NULL;
  size_t mask = t->hcap - 1;
  size_t h = ((uint32_t)id * 2654435761u) & mask;
  for (;; h = (h + 1) & mask) {
    int32_t i = t->hash[h];
    if (i < 0)
      break;
    if (t->e[i].id == id) {
      if (t->e[i].start == start)
        return &t->e[i];
      break; /* id reused by a new process or thread: a new entry */
    }
  }
  if (t->n >= t->max)
    return NULL;
  trk_ent *e = &t->e[t->n];
  memset(e, 0, sizeof *e);
  e->id = id;
  e->start = start;
  e->pct_recorded = NAN;
  t->hash[h] = (int32_t)t->n++;
  *fresh = 1;
  return e;
}

/* Update e with a sighting at now; returns the CPU % since the previous
 * sighting, or NAN on the first. */
static double trk_seen(trk_ent *e, int fresh, uint64_t now, uint64_t user,
                       uint64_t sys, const char *comm) {
  double pct = NAN;
  uint64_t cpu = user + sys;
  if (fresh) {
    e->first_ns = now;
  } else if (now > e->rate_t_ns && cpu >= e->rate_cpu_ns) {
    pct = (double)(cpu - e->rate_cpu_ns) / (double)(now - e->rate_t_ns) * 100.0;
  }
  e->rate_cpu_ns = cpu;
  e->rate_t_ns = now;
  e->last_ns = now;
  e->user_ns = user;
  e->sys_ns = sys;
  size_t n = strnlen(comm, sizeof e->comm - 1);
  memcpy(e->comm, comm, n);
  e->comm[n] = '\0';
  return pct;
}

/* Each thread's CPU % is recorded when it changes and at the last sample:
 * a counter holds its value until the next, so the track is the same as
 * with every sample, and 100 sleeping threads cost no events. */
static void record_tables(pp__sampler *s, const pp_tree_sample *tree,
                          int last) {
  if (!s->threads.max)
    return;
  size_t over = 0;
  for (size_t i = 0; i < tree->nproc; i++) {
    const pp_proc_sample *p = &tree->procs[i];
    int fresh;
    trk_ent *e = trk_get(&s->procs, p->pid, p->start_ticks, &fresh);
    if (!e) {
      over++;
      continue;
    }
    e->owner = p->ppid;
    uint64_t u = p->c.utime_ns == PP_COLLECT_NONE ? 0 : p->c.utime_ns;
    uint64_t y = p->c.stime_ns == PP_COLLECT_NONE ? 0 : p->c.stime_ns;
    trk_seen(e, fresh, tree->t_ns, u, y, p->comm);
  }
  if (over > s->procs.untracked_max)
    s->procs.untracked_max = over;
  /* Read a few past the bound so that the report can say how many were
   * left out. */
  size_t read_max = s->threads.max * 2;
  if (pp_collect_threads(s->proc, tree, read_max, &s->tlist) != 0)
    return;
  over = s->tlist.nmore;
  for (size_t i = 0; i < s->tlist.n; i++) {
    const pp_thread_sample *th = &s->tlist.threads[i];
    int fresh;
    trk_ent *e = trk_get(&s->threads, th->tid, th->start_ticks, &fresh);
    if (!e) {
      over++;
      continue;
    }
    e->owner = th->pid;
    double pct =
        trk_seen(e, fresh, s->tlist.t_ns, th->utime_ns, th->stime_ns, th->comm);
    if (!isfinite(pct) || (pct == e->pct_recorded && !last))
      continue;
    e->pct_recorded = pct;
    if (!e->pct_loc) { /* named once per thread, not per sample */
      char name[48];
      snprintf(name, sizeof name, "proc.thread.%d.cpu_pct", (int)th->tid);
      e->pct_loc = pp__intern(name, PP_KIND_METRIC);
    }
    pp_counter_setf_loc(e->pct_loc, pct);
  }
  if (over > s->threads.untracked_max)
    s->threads.untracked_max = over;
}

static void meta_u64(const char *key, uint64_t v) {
  char num[32];
  snprintf(num, sizeof num, "%llu", (unsigned long long)v);
  pp__session_meta(key, num);
}

static void meta_table(const trk_table *t, const char *what,
                       const char *plural) {
  char key[96];
  for (size_t k = 0; k < t->n; k++) {
    const trk_ent *e = &t->e[k];
    int thr = what[0] == 't';
#define KEY(f) (snprintf(key, sizeof key, "tree.%s.%zu.%s", what, k, f), key)
    meta_u64(KEY(thr ? "tid" : "pid"), (uint64_t)e->id);
    meta_u64(KEY(thr ? "pid" : "ppid"),
             (uint64_t)(e->owner < 0 ? 0 : e->owner));
    pp__session_meta(KEY("comm"), e->comm);
    meta_u64(KEY("first_ns"), e->first_ns);
    meta_u64(KEY("last_ns"), e->last_ns);
    if (thr) {
      meta_u64(KEY("user_ns"), e->user_ns);
      meta_u64(KEY("system_ns"), e->sys_ns);
    } else {
      meta_u64(KEY("cpu_ns"), e->user_ns + e->sys_ns);
    }
#undef KEY
  }
  snprintf(key, sizeof key, "tree.%s.tracked", plural);
  meta_u64(key, t->n);
  snprintf(key, sizeof key, "tree.%s.max", plural);
  meta_u64(key, t->max);
  if (t->untracked_max) {
    snprintf(key, sizeof key, "tree.%s.untracked_max", plural);
    meta_u64(key, t->untracked_max);
  }
}

static void record_perf(pp__sampler *s, int force) {
  /* Reading inherited counters sums them over every thread of the tree
   * (and may interrupt the CPUs those threads run on): the cumulative
   * counts are read at most once a second, and at the end. */
  int64_t now = pp__mono_ns();
  if (!s->perf || (!force && s->perf_read_ns &&
                   now - s->perf_read_ns < 1000000000))
    return;
  s->perf_read_ns = now;
  if (pp_collect_perf_read(s->perf, &s->perf_sample) < 0)
    return;
  const pp_perf_sample *p = &s->perf_sample;
  for (int i = 0; i < PP_PERF_NEVENTS; i++)
    if (p->ev[i].counted)
      setf(p->ev[i].value, "perf.%s", p->ev[i].name);
  if (p->has_ipc)
    set("perf.ipc", p->ipc);
  if (p->has_cache_miss_ratio)
    set("perf.cache_miss_ratio", p->cache_miss_ratio);
  if (p->has_branch_miss_ratio)
    set("perf.branch_miss_ratio", p->branch_miss_ratio);
}

static void record_power(pp__sampler *s) {
  if (!s->power || pp_collect_power_source(s->power) == PP_POWER_NONE ||
      pp_collect_power_read(s->power, &s->power_sample) < 0)
    return;
  const pp_power_sample *p = &s->power_sample;
  /* Only counters that have moved since open are measurements: one that
   * stays put (some VMs' perf energy-psys) is said unavailable at stop. */
  for (int i = 0; i < p->ndomains; i++) {
    const pp_power_domain *d = &p->d[i];
    if (!d->available || !d->advanced)
      continue;
    setf(d->energy_j, "energy.%s_j", d->label);
    if (d->has_power)
      setf(d->power_w, "power.%s_w", d->label);
  }
  if (!p->has_package_energy)
    return;
  set("energy.package_j", p->package_energy_j);
  if (p->has_package_power)
    set("power.package_w", p->package_power_w);
}

/* NVML calls cost tens of microseconds each: at most 10 reads a second. */
static void record_gpu(pp__sampler *s, const pp_tree_sample *tree,
                       int force) {
  int64_t now = pp__mono_ns();
  if (!s->gpu || !s->gpu_sample || pp_collect_gpu_count(s->gpu) == 0 ||
      (!force && s->gpu_read_ns && now - s->gpu_read_ns < 100000000))
    return;
  s->gpu_read_ns = now;
  size_t n = tree ? tree->nproc : 0;
  if (n > s->gpu_cap) {
    void *a = s->gpu_pids;
    if (pp__grow(&a, &s->gpu_cap, n, sizeof *s->gpu_pids) != 0)
      n = 0;
    else
      s->gpu_pids = a;
  }
  for (size_t i = 0; i < n; i++)
    s->gpu_pids[i] = tree->procs[i].pid;
  if (pp_collect_gpu_read(s->gpu, s->gpu_pids, n, s->gpu_sample) >= 0)
    pp_gpu_sample_counters(s->gpu_sample, gpu_counter, NULL);
}

static void sample_once(pp__sampler *s, int last) {
  int prev = s->cur, next = s->cur ^ 1;
  int have_prev = s->n > 0;
  const pp_tree_sample *tree = NULL;
  if (s->proc) {
    if (s->cfg.system && pp_collect_system(s->proc, &s->sys[next]) == 0)
      record_system(s, have_prev ? &s->sys[prev] : NULL, &s->sys[next]);
    if (pp_collect_tree(s->proc, s->cfg.pid, &s->tree[next]) == 0) {
      record_tree(s, have_prev ? &s->tree[prev] : NULL, &s->tree[next]);
      tree = &s->tree[next];
      record_tables(s, tree, last);
    }
  }
  record_perf(s, last);
  record_power(s);
  record_gpu(s, tree, last);
  s->cur = next;
  s->n++;
  pthread_mutex_lock(&s->lock);
  s->status.samples = s->n;
  pthread_mutex_unlock(&s->lock);
}

pp__sampler *pp__sampler_open(const pp__sampler_cfg *cfg) {
  pp__sampler *s = pp__calloc(1, sizeof *s);
  if (!s)
    return NULL;
  s->cfg = *cfg;
  if (s->cfg.hz < 1)
    s->cfg.hz = 1;
  if (s->cfg.hz > 1000)
    s->cfg.hz = 1000;
  snprintf(s->sysroot, sizeof s->sysroot, "%s",
           cfg->sysroot && *cfg->sysroot ? cfg->sysroot : "/");
  s->cfg.sysroot = s->sysroot;
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->cond, NULL);
  s->status.cpu_pct = s->status.rss_bytes = s->status.sys_busy_pct = -1;
  s->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  if (s->ncpu < 0)
    s->ncpu = 0;
  s->proc = pp_collect_proc_open(s->sysroot);
  if (s->proc && cfg->fd_budget > 0)
    pp_collect_proc_set_fd_budget(s->proc, cfg->fd_budget);
  /* frequency, throttling, temperatures, NUMA: once a second is enough,
   * and /proc/cpuinfo costs more than the rest of a sample */
  pp_collect_proc_set_slow_period(s->proc, 1000000000ull);
  if (cfg->perf)
    s->perf = pp_collect_perf_open(
        cfg->pid, cfg->perf_on_exec ? PP_PERF_ENABLE_ON_EXEC : 0);
  if (cfg->power) {
    s->power = pp_collect_power_open(s->sysroot);
    s->power_open_ns = pp__mono_ns();
  }
  if (cfg->gpu) {
    s->gpu = pp_collect_gpu_open(NULL);
    s->gpu_sample = pp__calloc(1, sizeof *s->gpu_sample);
  }
  return s;
}

static void *sampler_main(void *arg) {
  pp__sampler *s = arg;
  pp_thread_name("pipeprof sampler");
  pp__name_own_thread("pp-sampler");
  uint64_t period = 1000000000ull / s->cfg.hz;
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  pthread_mutex_lock(&s->lock);
  while (!s->stop) {
    pthread_mutex_unlock(&s->lock);
    sample_once(s, 0);
    pthread_mutex_lock(&s->lock);
    uint64_t ns = (uint64_t)next.tv_nsec + period;
    next.tv_sec += (time_t)(ns / 1000000000ull);
    next.tv_nsec = (long)(ns % 1000000000ull);
    /* Never try to catch up on missed ticks: skip to the next one ahead. */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (next.tv_sec < now.tv_sec ||
        (next.tv_sec == now.tv_sec && next.tv_nsec < now.tv_nsec))
      next = now;
    while (!s->stop &&
           pthread_cond_timedwait(&s->cond, &s->lock, &next) != ETIMEDOUT) {
    }
  }
  pthread_mutex_unlock(&s->lock);
  struct timespec ts;
  s->cpu_ns = clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0
                  ? (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec
                  : -1;
  return NULL;
}

int pp__sampler_track_threads(pp__sampler *s, int max) {
  if (!s || s->started)
    return -1;
  trk_free(&s->procs);
  trk_free(&s->threads);
  s->want_threads = max > 0;
  if (max <= 0)
    return 0;
  if (trk_init(&s->procs, (size_t)max) != 0 ||
      trk_init(&s->threads, (size_t)max) != 0) {
    trk_free(&s->procs); /* out of memory: per-thread sampling off */
    return -1;
  }
  return 0;
}

int pp__sampler_start(pp__sampler *s) {
  char hz[16];
  snprintf(hz, sizeof hz, "%u", s->cfg.hz);
  pp__session_meta("sampler.hz", hz);
  report_unavailable(s);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_destroy(&s->cond);
  pthread_cond_init(&s->cond, &ca);
  pthread_condattr_destroy(&ca);
  if (pthread_create(&s->thread, NULL, sampler_main, s) != 0)
    return -1;
  s->started = 1;
  return 0;
}

void pp__sampler_status_get(pp__sampler *s, pp__sampler_status *out) {
  pthread_mutex_lock(&s->lock);
  *out = s->status;
  pthread_mutex_unlock(&s->lock);
}

void pp__sampler_stop(pp__sampler *s) {
  if (!s)
    return;
  if (s->started) {
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_signal(&s->cond);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    sample_once(s, 1); /* the last interval, up to now */
    if (s->cpu_ns >= 0) { /* the profiler's own cost, for the report */
      char v[32];
      snprintf(v, sizeof v, "%lld", (long long)s->cpu_ns);
      pp__session_meta("sampler_cpu_ns", v);
    }
    if (s->gpu && s->gpu_sample)
      pp_gpu_sample_meta(s->gpu, s->gpu_sample, gpu_meta, NULL);
    char stuck[256];
    if (pp_collect_power_stuck_reason(
            s->power, (double)(pp__mono_ns() - s->power_open_ns) / 1e9, stuck,
            sizeof stuck))
      pp__session_meta("unavailable.power", stuck);
    if (s->threads.max) {
      meta_table(&s->procs, "proc", "procs");
      meta_table(&s->threads, "thread", "threads");
    } else if (s->want_threads) {
      pp__session_meta("unavailable.threads", "out of memory");
    }
    if (s->perf)
      for (int i = 0; i < PP_PERF_NEVENTS; i++) {
        const pp_perf_value *v = &s->perf_sample.ev[i];
        char key[80], val[32];
        if (!v->counted && v->reason && v->available) {
          snprintf(key, sizeof key, "unavailable.perf.%s", v->name);
          pp__session_meta(key, v->reason);
        }
        if (v->counted && v->running_share < 0.9995) {
          snprintf(key, sizeof key, "perf.%s.running_pct", v->name);
          snprintf(val, sizeof val, "%.1f", 100 * v->running_share);
          pp__session_meta(key, val);
        }
      }
  }
  for (int i = 0; i < 2; i++) {
    pp_system_sample_free(&s->sys[i]);
    pp_tree_sample_free(&s->tree[i]);
  }
  pp_system_rates_free(&s->srates);
  pp_thread_list_free(&s->tlist);
  trk_free(&s->procs);
  trk_free(&s->threads);
  pp_collect_proc_close(s->proc);
  pp_collect_perf_close(s->perf);
  pp_collect_power_close(s->power);
  pp_collect_gpu_close(s->gpu);
  pp__free(s->gpu_sample);
  pp__free(s->gpu_pids);
  pthread_mutex_destroy(&s->lock);
  pthread_cond_destroy(&s->cond);
  pp__free(s);
}
