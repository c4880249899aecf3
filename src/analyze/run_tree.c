/* SPDX-License-Identifier: MIT */
/*
 * The profiled program of a `pipeprof run` read back from META (contracts
 * in run_tree.h): the run's facts, and the sampler's process and thread
 * tables, which arrive as one META entry per field ("tree.thread.3.tid").
 * The entries are collected as (kind, K, order) triples, sorted, and folded
 * into one row per K, so the cost is O(n log n) in the number of META
 * entries whatever a damaged or hostile trace holds.
 */
#include "analyze/run_tree.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "internal.h"
#include "metrics/registry.h"

/* A plain non-negative decimal number: digits, optionally '.' and digits;
 * nothing else (no sign, no blanks, no exponent). */
static int plain_num(const char *s, double *out) {
  if (!s || *s < '0' || *s > '9')
    return 0;
  double v = 0;
  const char *p = s;
  for (; *p >= '0' && *p <= '9'; p++)
    v = v * 10 + (*p - '0');
  if (*p == '.') {
    double scale = 0.1;
    p++;
    if (*p < '0' || *p > '9')
      return 0;
    for (; *p >= '0' && *p <= '9'; p++, scale /= 10)
      v += (*p - '0') * scale;
  }
  if (*p || !isfinite(v))
    return 0;
  *out = v;
  return 1;
}

static int meta_num(const pp_trace *t, const char *key, double *out) {
  return plain_num(pp_trace_meta(t, key), out);
}

/* The library's series (never a user counter of the same name). */
static const pp_counter_stats *ctr(const pp_analysis *a, pp_metric_id id) {
  return a ? pp_profile_metric(a, pp_metric_def_of(id)->name) : NULL;
}

typedef struct field_ref {
  int thread; /* 1: tree.thread.K, 0: tree.proc.K */
  long k;
  size_t meta; /* index in t->meta: later entries override earlier */
  const char *field;
} field_ref;

static int cmp_ref(const void *pa, const void *pb) {
  const field_ref *a = pa, *b = pb;
  if (a->thread != b->thread)
    return a->thread - b->thread;
  if (a->k != b->k)
    return a->k < b->k ? -1 : 1;
  return (a->meta > b->meta) - (a->meta < b->meta);
}

typedef struct row {
  pp_run_ent e;
  int has_id;
  double first_ns, last_ns;
} row;

static void row_init(row *r) {
  memset(r, 0, sizeof *r);
  r->e.comm = r->e.kernel_comm = "";
  r->first_ns = r->last_ns = NAN;
  r->e.user_s = r->e.system_s = r->e.cpu_s = NAN;
}

static void row_field(row *r, int thread, const char *f, const char *v) {
  double x;
  if (strcmp(f, "comm") == 0) {
    r->e.comm = r->e.kernel_comm = v ? v : "";
    return;
  }
  if (!plain_num(v, &x))
    return;
  if (strcmp(f, thread ? "tid" : "pid") == 0) {
    if (x >= 1 && x <= (double)INT32_MAX) {
      r->e.id = (uint32_t)x;
      r->has_id = 1;
    }
  } else if (strcmp(f, thread ? "pid" : "ppid") == 0) {
    if (x <= (double)INT32_MAX)
      r->e.owner = (uint32_t)x;
  } else if (strcmp(f, "first_ns") == 0) {
    r->first_ns = x;
  } else if (strcmp(f, "last_ns") == 0) {
    r->last_ns = x;
  } else if (strcmp(f, thread ? "user_ns" : "cpu_ns") == 0) {
    r->e.user_s = x / 1e9;
  } else if (thread && strcmp(f, "system_ns") == 0) {
    r->e.system_s = x / 1e9;
  }
}

static int cmp_cpu(const void *pa, const void *pb) {
  const pp_run_ent *a = pa, *b = pb;
  double x = isfinite(a->cpu_s) ? a->cpu_s : -1;
  double y = isfinite(b->cpu_s) ? b->cpu_s : -1;
  if (x != y)
    return x > y ? -1 : 1;
  /* the order first seen: first_s, then tid */
  double fa = isfinite(a->first_s) ? a->first_s : INFINITY;
  double fb = isfinite(b->first_s) ? b->first_s : INFINITY;
  if (fa != fb)
    return fa < fb ? -1 : 1;
  return (a->id > b->id) - (a->id < b->id);
}

/* Fold the sorted refs [a, b) of one kind into rows; returns 0 or -1. */
static int fold(const pp_trace *t, const field_ref *refs, size_t n, int thread,
                pp_run_ent **out, size_t *nout, size_t *dropped,
                double origin_ns) {
  *out = NULL;
  *nout = *dropped = 0;
  size_t cap = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    row r;
    row_init(&r);
    for (; j < n && refs[j].k == refs[i].k; j++)
      row_field(&r, thread, refs[j].field, t->meta[refs[j].meta].value);
    i = j;
    if (!r.has_id)
      continue;
    if (*nout >= PP_RUN_TREE_MAX) {
      (*dropped)++;
      continue;
    }
    if (*nout >= cap) {
      void *a = *out;
      if (pp__grow(&a, &cap, *nout + 1, sizeof **out) != 0) {
        pp__free(*out);
        *out = NULL;
        *nout = 0;
        return -1;
      }
      *out = a;
    }
    pp_run_ent *e = &(*out)[(*nout)++];
    *e = r.e;
    e->first_s = isfinite(r.first_ns) && isfinite(origin_ns)
                     ? (r.first_ns - origin_ns) / 1e9
                     : NAN;
    e->last_s = isfinite(r.last_ns) && isfinite(origin_ns)
                    ? (r.last_ns - origin_ns) / 1e9
                    : NAN;
    if (isfinite(e->user_s) || isfinite(e->system_s))
      e->cpu_s = (isfinite(e->user_s) ? e->user_s : 0) +
                 (isfinite(e->system_s) ? e->system_s : 0);
  }
  return 0;
}

/* The earliest first_ns of any row: the origin when run.start_mono_ns is
 * absent. */
static double earliest(const pp_trace *t, const field_ref *refs, size_t n) {
  double m = INFINITY, x;
  for (size_t i = 0; i < n; i++)
    if (strcmp(refs[i].field, "first_ns") == 0 &&
        plain_num(t->meta[refs[i].meta].value, &x) && x < m)
      m = x;
  return isfinite(m) ? m : NAN;
}

int pp_run_tree_get(const pp_trace *t, const pp_analysis *a, pp_run_tree *rt) {
  memset(rt, 0, sizeof *rt);
  rt->tree_cpu_s = rt->profiler_cpu_s = rt->threads_max = NAN;
  rt->command = pp_trace_meta(t, "run.command");
  rt->is_run = rt->command != NULL;
  double v;
  if (meta_num(t, "run.pid", &v) && v >= 1 && v <= (double)INT32_MAX) {
    rt->pid = (uint32_t)v;
    rt->has_pid = 1;
  }
  if (meta_num(t, "run.profiler_pid", &v) && v >= 1 && v <= (double)INT32_MAX) {
    rt->profiler_pid = (uint32_t)v;
    rt->has_profiler_pid = 1;
  }
  if (meta_num(t, "run.profiler_cpu_ns", &v))
    rt->profiler_cpu_s = v / 1e9;
  double u, s;
  int hu = meta_num(t, "run.user_ns", &u),
      hs = meta_num(t, "run.system_ns", &s);
  if (hu || hs) {
    rt->tree_cpu_s = ((hu ? u : 0) + (hs ? s : 0)) / 1e9;
    rt->tree_cpu_src = "rusage";
  } else {
    const pp_counter_stats *cu = ctr(a, PP_METRIC_PROC_CPU_USER_S);
    const pp_counter_stats *cs = ctr(a, PP_METRIC_PROC_CPU_SYSTEM_S);
    double x = (cu && isfinite(cu->last) ? cu->last : 0) +
               (cs && isfinite(cs->last) ? cs->last : 0);
    if ((cu || cs) && isfinite(x)) {
      rt->tree_cpu_s = x;
      rt->tree_cpu_src = "sampled";
    }
  }
  if (meta_num(t, "tree.threads.max", &v))
    rt->threads_max = v;
  if (meta_num(t, "tree.threads.untracked_max", &v))
    rt->threads_untracked_max = v;
  if (meta_num(t, "tree.procs.untracked_max", &v))
    rt->procs_untracked_max = v;

  size_t n = 0;
  for (size_t i = 0; i < t->nmeta; i++)
    if (t->meta[i].key && strncmp(t->meta[i].key, "tree.", 5) == 0)
      n++;
  if (!n)
    return 0;
  field_ref *refs = pp__malloc(n * sizeof *refs);
  if (!refs)
    return -1;
  size_t m = 0;
  for (size_t i = 0; i < t->nmeta; i++) {
    const char *key = t->meta[i].key, *rest;
    if (!key || strncmp(key, "tree.", 5) != 0)
      continue;
    int thread = 1;
    long k = pp__name_index(key, "tree.thread.", &rest);
    if (k < 0) {
      thread = 0;
      k = pp__name_index(key, "tree.proc.", &rest);
    }
    if (k < 0 || rest[0] != '.' || !rest[1])
      continue;
    refs[m++] = (field_ref){thread, k, i, rest + 1};
  }
  if (m > 1)
    qsort(refs, m, sizeof *refs, cmp_ref);
  size_t np = 0;
  while (np < m && !refs[np].thread)
    np++;
  double origin;
  if (!meta_num(t, "run.start_mono_ns", &origin))
    origin = earliest(t, refs, m);
  int rc =
      fold(t, refs, np, 0, &rt->procs, &rt->nprocs, &rt->procs_dropped, origin);
  if (!rc)
    rc = fold(t, refs + np, m - np, 1, &rt->threads, &rt->nthreads,
              &rt->threads_dropped, origin);
  pp__free(refs);
  if (rc) {
    pp_run_tree_free(rt);
    return -1;
  }
  if (rt->nthreads > 1)
    qsort(rt->threads, rt->nthreads, sizeof *rt->threads, cmp_cpu);
  /* A thread the program recorded on carries the name the program gave
   * it (pp_thread_name, Python's thread names); the kernel's comm is
   * often a truncated or shared one ("python" for every Python thread). */
  for (size_t i = 0; i < rt->nthreads; i++) {
    pp_run_ent *e = &rt->threads[i];
    size_t k = pp_trace_thread_index(t, e->id);
    const char *name = k < t->nthreads ? t->threads[k].name : NULL;
    if (name && *name)
      e->comm = name;
  }
  for (size_t i = 0; i < rt->nthreads; i++)
    if (isfinite(rt->threads[i].cpu_s))
      rt->threads_cpu_s += rt->threads[i].cpu_s;
  return 0;
}

void pp_run_tree_free(pp_run_tree *rt) {
  if (!rt)
    return;
  pp__free(rt->procs);
  pp__free(rt->threads);
  rt->procs = rt->threads = NULL;
  rt->nprocs = rt->nthreads = 0;
}

double pp_run_tree_cpu_whole(const pp_run_tree *rt) {
  double tree = rt->tree_cpu_s;
  if (!rt->nthreads)
    return tree;
  if (!isfinite(tree) || rt->threads_cpu_s > tree)
    return rt->threads_cpu_s;
  return tree;
}

const pp_run_ent *pp_run_tree_thread(const pp_run_tree *rt, uint32_t tid) {
  for (size_t i = 0; i < rt->nthreads; i++)
    if (rt->threads[i].id == tid)
      return &rt->threads[i];
  return NULL;
}

int pp_run_tree_is_profiler(const pp_trace *t, const pp_run_tree *rt,
                            const pp_thread *th) {
  return rt->is_run && rt->has_profiler_pid &&
         pp_thread_pid(t, th) == rt->profiler_pid;
}

void pp_run_overhead_get(const pp_analysis *a, const pp_run_tree *rt,
                         pp_run_overhead *o) {
  memset(o, 0, sizeof *o);
  o->state = PP_RUN_OH_NONE;
  o->profiler_ns = rt->profiler_cpu_s * 1e9;
  o->tree_ns = rt->tree_cpu_s * 1e9;
  o->tree_src = rt->tree_cpu_src;
  o->app_writer_ns = -1;
  if (!rt->is_run)
    return;
  const pp_trace *t = a->trace;
  const pp_profile *p = &a->prof;
  for (size_t i = 0; i < t->nthreads; i++)
    if (!pp_run_tree_is_profiler(t, rt, &t->threads[i])) {
      o->has_app = 1;
      o->app_events += a->threads[i].events;
    }
  if (o->has_app && p->event_cost_ns > 0) {
    o->app_known = 1;
    o->app_recording_ns = pp_profile_events_cost(p, o->app_events);
    o->app_writer_ns = p->writer_cpu_ns >= 0 ? (double)p->writer_cpu_ns : -1;
    o->app_in_ns = o->app_recording_ns +
                   (o->app_writer_ns > 0 ? o->app_writer_ns : 0);
  }
  char b[32], c[32];
  if (!isfinite(o->profiler_ns)) {
    snprintf(o->why, sizeof o->why,
             "pipeprof's own CPU time was not recorded");
    return;
  }
  if (!isfinite(o->tree_ns) || o->tree_ns <= 0) {
    snprintf(o->why, sizeof o->why,
             "the profiled programs' CPU time is %s (pipeprof's own CPU %s)",
             isfinite(o->tree_ns) ? "zero" : "unknown",
             pp_format_ns(b, sizeof b, o->profiler_ns));
    return;
  }
  if (o->tree_ns < PP_RUN_OVERHEAD_MIN_TREE_NS) {
    o->state = PP_RUN_OH_NOT_MEANINGFUL;
    snprintf(o->why, sizeof o->why,
             "not meaningful: the profiled programs used less than %s of CPU",
             pp_format_ns(c, sizeof c, PP_RUN_OVERHEAD_MIN_TREE_NS));
    return;
  }
  o->state = PP_RUN_OH_SHARE;
  o->pct = o->profiler_ns / o->tree_ns * 100.0;
  if (o->app_known)
    o->total_pct = (o->profiler_ns + o->app_in_ns) / o->tree_ns * 100.0;
}
