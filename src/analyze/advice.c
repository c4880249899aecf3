/* SPDX-License-Identifier: MIT */
/*
 * Recommendations: a table of rules, each a metric measured on a subject
 * (the pipeline, a stage, a queue, a flow, a sampled counter), a threshold
 * and two templates, one for the advice and one for the evidence. A rule
 * fires only when its metric was measured and crosses the threshold, so
 * every recommendation carries the numbers that triggered it. The table is
 * documented rule by rule in docs/analysis.md; keep the two in step.
 *
 * Templates name values in braces ({stage}, {value}, ...), filled from
 * what the metric found; they are data, never printf formats.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "gpu_activity.h"
#include "internal.h"
#include "metrics/registry.h"
#include "model/trace.h"
#include "pipeline.h"

typedef enum subject {
  SUBJ_PIPELINE,
  SUBJ_STAGE,
  SUBJ_QUEUE,
  SUBJ_FLOW,
  SUBJ_COUNTER,
  SUBJ_GPU_STAGE /* a stage of the CUDA activity analysis (a->cuda) */
} subject;

typedef enum metric {
  M_BOUND_UTIL,   /* the bounding stage's utilisation, % */
  M_QUEUE_FULL,   /* % of the queue's window full or producer-blocked */
  M_QUEUE_EMPTY,  /* % of the window empty or consumer-waiting */
  M_EFFICIENCY,   /* pipeline efficiency, % */
  M_FLOW_WAIT,    /* % of items' latency spent between stages */
  M_COUNTER_MEAN, /* mean of a sampled counter */
  M_COUNTER_RISE, /* max - min of a sampled counter */
  M_DROPPED,      /* events dropped */
  M_STAGE_COPY,   /* % of a GPU stage's wall time in host<->device copies,
                     measured when most of their bytes are pageable */
  M_DATA_WAIT     /* % of a loop's time waiting for its next batch from a
                     torch DataLoader (pipeprof.torch's zone) */
} metric;

typedef struct rule {
  const char *id;
  subject subj;
  metric m;
  pp_metric_id counter; /* M_COUNTER_*: the library metric (registry id;
                           a user counter of the same name is not it) */
  const char *member;   /* ... and its {*} part ("memory" of
                           sys.psi.{*}.some_pct), NULL: none */
  int above;            /* fires when value >= threshold, else <= */
  int chain;            /* queues: skip one whose cause lies further along
                           the chain (full: the consumer's output queue is
                           full as often; empty: the producer is busy less
                           than 50% of the time) */
  double threshold;
  double scale; /* display value = value / scale (counters) */
  int severity; /* 2 high, 1 medium, 0 low */
  const char *advice;
  const char *evidence;
} rule;

/* The rule table (docs/analysis.md, "Recommendations"). M(X): library
 * metric PP_METRIC_X, no {*} part; NONE: no counter. */
#define M(x) PP_METRIC_##x, NULL
#define NONE PP_METRIC_NONE, NULL
static const rule rules[] = {
    {"stage-bound", SUBJ_PIPELINE, M_BOUND_UTIL, NONE, 1, 0, 90, 1, 2,
     "{stage} bounds throughput: add workers to {stage} or make it faster "
     "(batch its work, or move it to the GPU)",
     "{stage} busy {value} ({workers} worker(s), {service} per item, at "
     "most {capacity} items/s){contrast}"},
    {"no-stage-saturated", SUBJ_PIPELINE, M_BOUND_UTIL, NONE, 0, 0, 60, 1, 0,
     "no stage is saturated: throughput is set by the input rate or by "
     "time spent outside the stage zones, not by a stage",
     "the slowest stage, {stage}, is busy only {value} of the time"},
    {"queue-full", SUBJ_QUEUE, M_QUEUE_FULL, NONE, 1, 1, 25, 1, 2,
     "the consumer {to} is the bottleneck of queue {queue}: speed up {to} "
     "or give it more workers (a longer queue only absorbs bursts)",
     "queue {queue} ({from} -> {to}): {depth}, producer blocked "
     "{blocked_pct}"},
    {"queue-empty", SUBJ_QUEUE, M_QUEUE_EMPTY, NONE, 1, 1, 75, 1, 1,
     "{to} is starved by its producer {from}: speed up {from} or what "
     "feeds it",
     "queue {queue} ({from} -> {to}): {depth}, consumer waiting "
     "{blocked_pct}, while {from} is busy {producer_util}"},
    {"low-efficiency", SUBJ_PIPELINE, M_EFFICIENCY, NONE, 0, 0, 80, 1, 1,
     "the pipeline delivers {value} of what its slowest stage {stage} "
     "could: look at the stall periods for where it waits",
     "{achieved} items/s achieved, {stage} could do {capacity} items/s"},
    {"flow-waiting", SUBJ_FLOW, M_FLOW_WAIT, NONE, 1, 0, 50, 1, 1,
     "{flow} latency is mostly time spent queued, not work: smaller queues "
     "before the slowest stage cut latency without costing throughput",
     "{flow} items spend {value} of their latency between stages, most "
     "of it at {where}"},
    {"cpu-steal", SUBJ_COUNTER, M_COUNTER_MEAN, M(SYS_CPU_STEAL), 1, 0, 5, 1, 2,
     "the hypervisor takes CPU time from this machine: use dedicated cores "
     "or a less loaded host",
     "CPU steal {value} on average"},
    {"iowait", SUBJ_COUNTER, M_COUNTER_MEAN, M(SYS_CPU_IOWAIT), 1, 0, 20, 1, 1,
     "the CPUs often wait for disk I/O: prefetch or cache the inputs",
     "I/O wait {value} of CPU time on average"},
    {"swap-growth", SUBJ_COUNTER, M_COUNTER_RISE, M(SYS_SWAP_USED), 1, 0,
     64.0 * 1048576, 1048576, 2,
     "the host is short of memory and swaps: reduce memory use or add RAM",
     "swap in use grew by {value} while profiling"},
    {"major-faults", SUBJ_COUNTER, M_COUNTER_MEAN, M(PROC_MAJFLT_RATE), 1, 0,
     10, 1, 1,
     "the process waits for pages from disk (swapped memory or re-read "
     "files): keep the working set in RAM",
     "{value} major page faults/s on average"},
    {"memory-pressure", SUBJ_COUNTER, M_COUNTER_MEAN, PP_METRIC_SYS_PSI_SOME,
     "memory", 1, 0, 10, 1, 1,
     "tasks stall on memory: reduce memory use or add RAM",
     "memory pressure (PSI some) {value} on average"},
    {"pageable-copies", SUBJ_GPU_STAGE, M_STAGE_COPY, NONE, 1, 0, 20, 1, 2,
     "use pinned (page-locked) host buffers for {stage}'s copies "
     "(cudaHostAlloc / pin_memory): copies from pageable memory are staged "
     "through a driver buffer, run slower and cannot overlap kernels",
     "{value} of {stage} is host<->device copy ({copy} of {wall}, "
     "{mib} MiB), {pageable} of the bytes from pageable memory"},
    {"data-starved", SUBJ_PIPELINE, M_DATA_WAIT, NONE, 1, 0, 20, 1, 1,
     "the model waits for data: add DataLoader workers (num_workers), "
     "raise prefetch_factor, or make the dataset's loading faster",
     "the loop on thread {thread} waited for its next batch {value} of its "
     "time ({wait} of {loop} over {batches} batches, the first and the last "
     "left out)"},
    {"dropped-events", SUBJ_PIPELINE, M_DROPPED, NONE, 1, 0, 1, 1, 1,
     "raise PIPEPROF_BUFFER_KIB (or PIPEPROF_FLUSH_MS lower) when the "
     "drops came in bursts; when many threads record faster than the "
     "writer can drain (more threads than cores), record in stats mode "
     "(PIPEPROF_MODE=stats), which counts zones on each thread and drops "
     "none of them: the profile is incomplete",
     "{value} events were dropped because thread buffers were full"},
};
#undef M
#undef NONE

#define NVARS 12

typedef struct vars {
  const char *key[NVARS];
  char val[NVARS][96];
  int n;
} vars;

static void setv(vars *v, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void setv(vars *v, const char *key, const char *fmt, ...) {
  if (v->n >= NVARS)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v->val[v->n], sizeof v->val[0], fmt, ap);
  va_end(ap);
  v->key[v->n++] = key;
}

static const char *getv(const vars *v, const char *key, size_t klen) {
  for (int i = 0; i < v->n; i++)
    if (strlen(v->key[i]) == klen && memcmp(v->key[i], key, klen) == 0)
      return v->val[i];
  return NULL;
}

/* Fill the template: {key} by its value; unknown keys stay as written. */
static char *expand(const char *tpl, const vars *v) {
  size_t cap = 256, len = 0;
  char *out = pp__malloc(cap);
  if (!out)
    return NULL;
  for (const char *p = tpl; *p;) {
    const char *piece = p;
    size_t n = 1;
    if (*p == '{') {
      const char *e = strchr(p, '}');
      const char *val = e ? getv(v, p + 1, (size_t)(e - p - 1)) : NULL;
      if (val) {
        piece = val;
        n = strlen(val);
        p = e + 1;
      } else {
        p++;
      }
    } else {
      p++;
    }
    if (len + n + 1 > cap) {
      while (len + n + 1 > cap)
        cap *= 2;
      char *nb = pp__realloc(out, cap);
      if (!nb) {
        pp__free(out);
        return NULL;
      }
      out = nb;
    }
    memcpy(out + len, piece, n);
    len += n;
  }
  out[len] = 0;
  return out;
}

/* Figures print as every view prints them (units.h): a percentage with
 * its sign, a duration with its unit, a number with 3 digits. */
static void setpct(vars *v, const char *key, double pct) {
  char b[32];
  setv(v, key, "%s", pp_format_pct(b, sizeof b, pct));
}

static void setdur(vars *v, const char *key, double ns) {
  char b[32];
  setv(v, key, "%s", pp_format_ns(b, sizeof b, ns));
}

static void setnum(vars *v, const char *key, double x) {
  char b[48];
  setv(v, key, "%s", pp_format_sig3(b, sizeof b, x));
}

static double pct_of(int64_t part, int64_t whole) {
  return whole > 0 ? (double)part / (double)whole * 100.0 : 0;
}

/* The stage to compare the bounding stage with: its consumer, else its
 * producer, else the busiest other stage; -1 when there is none. */
static int other_stage(const pp_pipeline *p, int b) {
  const pp_stage_stats *s = &p->stages[b];
  if (s->out_queue >= 0) {
    int o = pp__stage_find(p, p->queues[s->out_queue].to);
    if (o >= 0 && o != b)
      return o;
  }
  if (s->in_queue >= 0) {
    int o = pp__stage_find(p, p->queues[s->in_queue].from);
    if (o >= 0 && o != b)
      return o;
  }
  int best = -1;
  for (size_t i = 0; i < p->nstages; i++)
    if ((int)i != b && (best < 0 || p->stages[i].util > p->stages[best].util))
      best = (int)i;
  return best;
}

/* The rule's value for a queue, in %: the larger of its time full (empty)
 * and the mean share its producers (consumers) waited, both the queue's
 * own figures (pp_queue_stats *_pct), which the evidence quotes as they
 * are. 0 when unmeasured (no window; full of an unbounded queue with no
 * recorded blocking). */
static int queue_pct(const pp_queue_stats *q, metric m, double *pct) {
  if (pp__span(q->t_first, q->t_last) <= 0)
    return 0;
  int full = m == M_QUEUE_FULL;
  double depth = full ? q->full_pct : q->empty_pct;
  double blocked = full ? q->producer_blocked_pct : q->consumer_waiting_pct;
  if (isnan(depth) && isnan(blocked))
    return 0;
  *pct = isnan(blocked) || depth > blocked ? depth : blocked;
  return 1;
}

/* The series of library metric id (with {*} part member, when not NULL)
 * among t's counters, found by registry id and site kind as
 * analyze/system.c finds them: a user counter named like it is not it. */
static const pp_counter_stats *
find_metric(const pp_analysis *a, pp_metric_id id, const char *member) {
  const pp_trace *t = a->trace;
  uint32_t mkind = pp_trace_metric_kind(t);
  for (size_t i = 0; i < a->prof.ncounters; i++) {
    const char *free = NULL;
    size_t len = 0;
    if (pp_loc_metric(t, a->prof.counters[i].loc, mkind, NULL, &free, &len) !=
        id)
      continue;
    if (!member ||
        (free && len == strlen(member) && memcmp(free, member, len) == 0))
      return &a->prof.counters[i];
  }
  return NULL;
}

static size_t subjects(const pp_analysis *a, subject s) {
  const pp_pipeline *p = &a->prof.pipe;
  switch (s) {
  case SUBJ_QUEUE:
    return p->nqueues;
  case SUBJ_FLOW:
    return p->nflows;
  case SUBJ_GPU_STAGE:
    return a->cuda ? a->cuda->nstages : 0;
  default:
    return 1;
  }
}

/* Measure rule r on subject i: returns 1 with *value and the template
 * values in v when measured, 0 when not measured. */
static int measure(const pp_analysis *a, const rule *r, size_t i, double *value,
                   vars *v) {
  const pp_trace *t = a->trace;
  const pp_pipeline *p = &a->prof.pipe;
  switch (r->m) {
  case M_BOUND_UTIL: {
    if (p->bound < 0 || p->win_end <= p->win_start)
      return 0;
    const pp_stage_stats *s = &p->stages[p->bound];
    *value = s->util * 100.0;
    setv(v, "stage", "%s", s->name);
    setv(v, "workers", "%u", s->workers);
    setdur(v, "service", s->service_ns);
    setnum(v, "capacity", s->capacity_per_s);
    int o = other_stage(p, p->bound);
    const pp_gpu_activity *g = a->cuda;
    char pc[32];
    if (g && g->wall_ns > 0) {
      /* With CUDA activity traced, the GPU is the telling contrast. */
      setv(v, "contrast", " while the GPU is busy %s",
           pp_format_pct(pc, sizeof pc, pct_of(g->busy_ns, g->wall_ns)));
    } else if (o < 0) {
      setv(v, "contrast", "%s", "");
    } else {
      setv(v, "contrast", " while %s busy %s", p->stages[o].name,
           pp_format_pct(pc, sizeof pc, p->stages[o].util * 100.0));
    }
    return 1;
  }
  case M_QUEUE_FULL:
  case M_QUEUE_EMPTY: {
    const pp_queue_stats *q = &p->queues[i];
    double pct;
    if (!q->to[0] || !q->from[0] || !queue_pct(q, r->m, &pct))
      return 0;
    if (r->chain && r->m == M_QUEUE_FULL) {
      /* Backpressure: the consumer is itself held up by its full output
       * queue, so the cause lies further downstream. */
      int s = pp__stage_find(p, q->to);
      int32_t nq = s < 0 ? -1 : p->stages[s].out_queue;
      double npct;
      if (nq >= 0 && (size_t)nq != i &&
          queue_pct(&p->queues[nq], r->m, &npct) && npct >= r->threshold)
        return 0;
    } else if (r->chain) {
      /* Starvation: only a busy producer (>= 50%) starves its consumer;
       * an idle one is starved itself, further upstream. */
      int s = pp__stage_find(p, q->from);
      if (s < 0 || !p->stages[s].items || p->stages[s].util < 0.5)
        return 0;
      setpct(v, "producer_util", p->stages[s].util * 100.0);
    }
    *value = pct;
    int full = r->m == M_QUEUE_FULL;
    double depth = full ? q->full_pct : q->empty_pct;
    char pd[32];
    if (isnan(depth))
      setv(v, "depth", "unbounded (never full)");
    else
      setv(v, "depth", "%s %s of the time", full ? "full" : "empty",
           pp_format_pct(pd, sizeof pd, depth));
    double b = full ? q->producer_blocked_pct : q->consumer_waiting_pct;
    uint32_t n = full ? q->waiters_full : q->waiters_empty;
    char pb[32];
    if (isnan(b))
      setv(v, "blocked_pct", "not recorded");
    else if (n > 1)
      setv(v, "blocked_pct", "%s on average over %u threads",
           pp_format_pct(pb, sizeof pb, b), n);
    else
      setpct(v, "blocked_pct", b);
    setv(v, "queue", "%s", q->name);
    setv(v, "from", "%s", q->from);
    setv(v, "to", "%s", q->to);
    return 1;
  }
  case M_EFFICIENCY: {
    if (p->efficiency < 0 || p->bound < 0)
      return 0;
    *value = p->efficiency * 100.0;
    setv(v, "stage", "%s", p->stages[p->bound].name);
    setnum(v, "achieved", p->achieved_per_s);
    setnum(v, "capacity", p->bound_per_s);
    return 1;
  }
  case M_FLOW_WAIT: {
    const pp_flow_stats *f = &p->flows[i];
    int64_t total = pp__add_sat(f->zone_ns, f->wait_ns);
    if (!f->items || total <= 0)
      return 0;
    *value = pct_of(f->wait_ns, total);
    setv(v, "flow", "%s", pp_trace_loc_name(t, f->loc));
    const pp_path_seg *w = NULL;
    for (size_t k = 0; k < f->nwhere && !w; k++)
      if (f->where[k].wait)
        w = &f->where[k];
    if (!w)
      return 0;
    if (w->name)
      setv(v, "where", "queue %s", w->name);
    else
      setv(v, "where", "%s -> %s", w->from, w->to);
    return 1;
  }
  case M_COUNTER_MEAN:
  case M_COUNTER_RISE: {
    const pp_counter_stats *c = find_metric(a, r->counter, r->member);
    if (!c || !c->samples)
      return 0;
    *value = r->m == M_COUNTER_MEAN ? c->mean : c->max - c->min;
    double shown = *value / r->scale;
    pp_metric_unit u = pp_metric_def_of(r->counter)->unit;
    char b[48];
    if (r->m == M_COUNTER_MEAN && u == PP_UNIT_PERCENT)
      setpct(v, "value", shown);
    else if (u == PP_UNIT_BYTES)
      setv(v, "value", "%s", pp__fmt_bytes(b, sizeof b, *value));
    else
      setnum(v, "value", shown);
    return 2; /* value already formatted */
  }
  case M_STAGE_COPY: {
    const pp_gpu_stage *st = &a->cuda->stages[i];
    const pp_gpu_xfer *h = &st->xfer[PP_XFER_H2D], *d = &st->xfer[PP_XFER_D2H];
    uint64_t bytes = h->bytes + d->bytes;
    uint64_t pageable = h->pageable_bytes + d->pageable_bytes;
    if (st->loc == PP_GPU_NO_ZONE || st->wall_ns <= 0 || !bytes ||
        pageable * 2 < bytes)
      return 0;
    int64_t copy = h->time_ns + d->time_ns;
    *value = pct_of(copy, st->wall_ns);
    setv(v, "stage", "%s", pp_trace_loc_name(t, st->loc));
    setdur(v, "copy", (double)copy);
    setdur(v, "wall", (double)st->wall_ns);
    setnum(v, "mib", (double)bytes / 1048576.0);
    setpct(v, "pageable", (double)pageable / (double)bytes * 100.0);
    return 1;
  }
  case M_DATA_WAIT: {
    /* the thread that waited longest in the steady state: its "DataLoader
     * wait" zones (pipeprof.torch) but the first (the workers starting)
     * and the last (the loader exhausted, its workers ending), over the
     * span from the end of the first to the start of the last */
    static const char wait_zone[] = "DataLoader wait";
    int64_t best = -1, best_span = 0;
    uint64_t best_n = 0;
    size_t best_th = 0;
    for (size_t ti = 0; ti < a->nthreads && ti < t->nthreads; ti++) {
      const pp_thread_figures *th = &a->threads[ti];
      int64_t sum = 0;
      long first = -1, last = -1;
      uint64_t n = 0;
      for (size_t k = 0; k < th->nzones; k++) {
        const pp_zone_inst *z = &th->zones[k];
        if (z->unclosed ||
            strcmp(pp_trace_loc_name(t, z->loc), wait_zone) != 0)
          continue;
        if (first < 0 || z->start < th->zones[first].start)
          first = (long)k;
        if (last < 0 || z->start > th->zones[last].start)
          last = (long)k;
        sum = pp__add_sat(sum, pp__span(z->start, z->end));
        n++;
      }
      if (n < 4)
        continue;
      const pp_zone_inst *f = &th->zones[first], *l = &th->zones[last];
      sum -= pp__span(f->start, f->end) + pp__span(l->start, l->end);
      if (sum > best) {
        best = sum;
        best_span = pp__span(f->end, l->start);
        best_n = n - 2;
        best_th = ti;
      }
    }
    if (!best_n || best_span <= 0)
      return 0;
    *value = pct_of(best, best_span);
    const pp_thread *th = &t->threads[best_th];
    setv(v, "thread", "%s", th->name && th->name[0] ? th->name : "?");
    setdur(v, "wait", (double)best);
    setdur(v, "loop", (double)best_span);
    setv(v, "batches", "%llu", (unsigned long long)best_n);
    return 1;
  }
  case M_DROPPED:
    *value = (double)a->prof.dropped;
    setv(v, "value", "%.0f", *value);
    return 2;
  }
  return 0;
}

static int cmp_advice(const void *a, const void *b) {
  const pp_advice *x = a, *y = b;
  if (x->severity != y->severity)
    return x->severity > y->severity ? -1 : 1;
  return 0;
}

int pp__advice_build(pp_analysis *a) {
  pp_pipeline *p = &a->prof.pipe;
  size_t cap = 0;
  for (size_t ri = 0; ri < PP__ARRAY_LEN(rules); ri++) {
    const rule *r = &rules[ri];
    size_t n = subjects(a, r->subj);
    for (size_t i = 0; i < n; i++) {
      vars v;
      v.n = 0;
      double value = 0;
      int got = measure(a, r, i, &value, &v);
      if (!got || !isfinite(value))
        continue;
      if (r->above ? value < r->threshold : value > r->threshold)
        continue;
      if (got == 1)
        setpct(&v, "value", value);
      if (pp__grow((void **)&p->advice, &cap, p->nadvice + 1,
                   sizeof *p->advice))
        return -1;
      pp_advice *adv = &p->advice[p->nadvice];
      adv->rule = r->id;
      adv->severity = r->severity;
      adv->text = expand(r->advice, &v);
      adv->evidence = expand(r->evidence, &v);
      /* the stage the advice tells to speed up: the document adds where
       * its CPU time goes, when stack samples were taken */
      const char *key = r->m == M_QUEUE_FULL    ? "to"
                        : r->m == M_QUEUE_EMPTY ? "from"
                        : r->m == M_BOUND_UTIL && r->above ? "stage"
                                                           : NULL;
      const char *st = key ? getv(&v, key, strlen(key)) : NULL;
      adv->stage = st && *st ? pp__strdup(st) : NULL;
      p->nadvice++;
      if (!adv->text || !adv->evidence || (st && *st && !adv->stage))
        return -1;
    }
  }
  /* Stable by severity: qsort is not stable, so sort (severity, order). */
  for (size_t i = 1; i < p->nadvice; i++) {
    pp_advice x = p->advice[i];
    size_t j = i;
    while (j > 0 && cmp_advice(&p->advice[j - 1], &x) > 0) {
      p->advice[j] = p->advice[j - 1];
      j--;
    }
    p->advice[j] = x;
  }
  return 0;
}
