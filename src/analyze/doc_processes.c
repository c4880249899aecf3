/* SPDX-License-Identifier: MIT */
/*
 * The results document's "process_table": per process that recorded (a
 * run's program and its children, merged) its pid and name, how its
 * session ended, its threads, zones, busy time and events. A process
 * whose file did not finish before any of its events was written (killed
 * at once) is a row too. `pipeprof run`'s own process is left out. The
 * text report shows it when several processes recorded; the summary JSON
 * has it as "processes".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "internal.h"
#include "analyze/run_tree.h"
#include "format/stats_payload.h"
#include "results/doc.h"

size_t pp__run_pids(const pp_trace *t, const pp_run_tree *rt,
                    uint32_t **out) {
  uint32_t *pids = NULL;
  size_t n = pp_trace_pids(t, &pids), shown = 0;
  for (size_t i = 0; i < n; i++)
    if (!rt->is_run || !rt->has_profiler_pid || pids[i] != rt->profiler_pid)
      pids[shown++] = pids[i];
  /* a process whose file did not finish before any of its events was
   * written (killed at once) has no thread: listed too */
  const pp_read_diag *d = &t->diag;
  size_t nun = pp_unfinished_listed(d);
  uint32_t *all = nun ? pp__realloc(pids, (shown + nun) * sizeof *pids) : pids;
  if (all) {
    pids = all;
    for (size_t k = 0; k < nun; k++) {
      size_t j = 0;
      while (j < shown && pids[j] != d->unfinished_pid[k])
        j++;
      if (j == shown)
        pids[shown++] = d->unfinished_pid[k];
    }
  }
  *out = pids;
  return shown;
}

const char *pp__process_end(const pp_trace *t, uint32_t pid) {
  const pp_read_diag *d = &t->diag;
  for (size_t k = 0; k < pp_unfinished_listed(d); k++)
    if (d->unfinished_pid[k] == pid)
      return "did not finish its file";
  if (pid == t->pid)
    return d->file_bytes && !d->clean_end ? "did not finish its file"
                                          : pp_trace_meta(t, "process.end");
  char key[48];
  snprintf(key, sizeof key, "process.end.%" PRIu32, pid);
  return pp_trace_meta(t, key);
}

static const pp_col cols[] = {
    {"pid", "pid", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"name", "process", PP_VALUE_TEXT, 0, NULL},
    {"ended", "ended", PP_VALUE_TEXT, 0, NULL},
    {"threads", "threads", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"zones", "zones", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"busy_ns", "busy", PP_VALUE_NS, PP_COL_INT, NULL},
    {"events", "events", PP_VALUE_COUNT, PP_COL_INT, NULL},
};

/* The row of pid in t (rows in the order of pids), or -1. */
static long row_of(const pp_table *t, uint32_t pid) {
  long kp = pp_table_col(t, "pid");
  for (size_t r = 0; r < t->nrows; r++)
    if (pp_table_cell(t, r, (size_t)kp)->num == (double)pid)
      return (long)r;
  return -1;
}

static void add(pp_table *t, long r, const char *key, double v) {
  long k = pp_table_col(t, key);
  if (r < 0 || k < 0)
    return;
  const pp_cell *c = pp_table_cell(t, (size_t)r, (size_t)k);
  /* a crafted file's sums can pass what the cell holds: saturate */
  double x = c->num + v;
  if (t->cols[k].unit == PP_VALUE_NS)
    pp_cell_int(t, r, key,
                !(x > -9.2e18)  ? (x != x ? 0 : INT64_MIN)
                : x < 9.2e18 ? (int64_t)x
                             : INT64_MAX);
  else
    pp_cell_count(t, r, key,
                  !(x > 0) ? 0 : x < 1.8e19 ? (uint64_t)x : UINT64_MAX);
}

int pp__process_table(const pp_analysis *a, const pp_run_tree *rt,
                      pp_doc *d) {
  const pp_trace *tr = a->trace;
  pp_table *t = pp_doc_table(d, "process_table", "processes",
                             "each process that recorded: how its session "
                             "ended, and its threads' figures",
                             cols, sizeof cols / sizeof *cols);
  if (!t)
    return -1;
  uint32_t *pids = NULL;
  size_t n = pp__run_pids(tr, rt, &pids);
  for (size_t i = 0; i < n; i++) {
    long r = pp_table_row(t);
    const char *name = pp_trace_process_name(tr, pids[i]);
    const char *end = pp__process_end(tr, pids[i]);
    pp_cell_count(t, r, "pid", pids[i]);
    pp_cell_text(t, r, "name", name ? name : "");
    if (end)
      pp_cell_text(t, r, "ended", end);
    pp_cell_count(t, r, "threads", 0);
    pp_cell_count(t, r, "zones", 0);
    pp_cell_int(t, r, "busy_ns", 0);
    pp_cell_count(t, r, "events", 0);
  }
  pp__free(pids);
  for (size_t i = 0; i < tr->nthreads; i++) {
    long r = row_of(t, pp_thread_pid(tr, &tr->threads[i]));
    if (r < 0) /* the profiler's */
      continue;
    add(t, r, "threads", 1);
    add(t, r, "zones", (double)a->threads[i].zones_measured);
    add(t, r, "busy_ns", (double)a->threads[i].busy_ns);
    add(t, r, "events", (double)a->threads[i].events);
  }
  return pp_doc_ok(d) ? 0 : -1;
}

/* ---- zones per process ---------------------------------------------------
 *
 * "zones_by_process": a run of several processes merges a zone site the
 * processes share into one zone (the zones table); here each process's
 * part of it: its closed zones' count, total, mean, p50, p99 and max, and
 * its share of the zone's total. From the zone instances of a trace whose
 * events were all stored, or each stats-mode file's own payload
 * (model.h's stats_parts). */

typedef struct pz_row {
  uint32_t loc, pid;
  uint64_t count, total, self;
  pp_hist h;
} pz_row;

typedef struct pz_set {
  pz_row *v;
  size_t n, cap;
  uint32_t *map; /* open addressing: index + 1, 0 empty */
  size_t map_cap;
} pz_set;

static size_t pz_slot(uint32_t loc, uint32_t pid, size_t cap) {
  uint64_t k = ((uint64_t)loc << 32 | pid) * UINT64_C(0x9E3779B97F4A7C15);
  return (size_t)(k >> 32) & (cap - 1);
}

static pz_row *pz_get(pz_set *s, uint32_t loc, uint32_t pid) {
  if (s->map_cap) {
    for (size_t j = pz_slot(loc, pid, s->map_cap); s->map[j];
         j = (j + 1) & (s->map_cap - 1)) {
      pz_row *r = &s->v[s->map[j] - 1];
      if (r->loc == loc && r->pid == pid)
        return r;
    }
  }
  if ((s->n + 1) * 2 > s->map_cap) {
    size_t cap = s->map_cap ? s->map_cap * 2 : 64;
    uint32_t *m = pp__calloc(cap, sizeof *m);
    if (!m)
      return NULL;
    for (size_t i = 0; i < s->n; i++) {
      size_t j = pz_slot(s->v[i].loc, s->v[i].pid, cap);
      while (m[j])
        j = (j + 1) & (cap - 1);
      m[j] = (uint32_t)i + 1;
    }
    pp__free(s->map);
    s->map = m;
    s->map_cap = cap;
  }
  if (pp__grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v) != 0)
    return NULL;
  pz_row *r = &s->v[s->n];
  memset(r, 0, sizeof *r);
  r->loc = loc;
  r->pid = pid;
  pp_hist_init(&r->h);
  size_t j = pz_slot(loc, pid, s->map_cap);
  while (s->map[j])
    j = (j + 1) & (s->map_cap - 1);
  s->map[j] = (uint32_t)++s->n;
  return r;
}

static void pz_free(pz_set *s) {
  for (size_t i = 0; i < s->n; i++)
    pp_hist_free(&s->v[i].h);
  pp__free(s->v);
  pp__free(s->map);
}

/* Trace mode: every closed zone instance, by its thread's process. */
static int pz_from_instances(const pp_analysis *a, pz_set *s) {
  const pp_trace *t = a->trace;
  for (size_t i = 0; i < t->nthreads && i < a->nthreads; i++) {
    uint32_t pid = pp_thread_pid(t, &t->threads[i]);
    const pp_thread_figures *f = &a->threads[i];
    for (size_t k = 0; k < f->nzones; k++) {
      const pp_zone_inst *z = &f->zones[k];
      if (z->unclosed)
        continue;
      pz_row *r = pz_get(s, z->loc, pid);
      if (!r)
        return -1;
      uint64_t d =
          z->end > z->start ? (uint64_t)z->end - (uint64_t)z->start : 0;
      r->count++;
      r->total += d;
      r->self += z->self > 0 ? (uint64_t)z->self : 0;
      pp_hist_record(&r->h, d);
    }
  }
  return 0;
}

typedef struct pz_walk {
  pz_set *s;
  const struct pp_stats_part *part;
} pz_walk;

static int pz_zone(void *arg, ppt_stats_zone *z) {
  pz_walk *w = arg;
  uint64_t loc = w->part->map && z->loc < w->part->nmap
                     ? w->part->map[z->loc]
                     : z->loc;
  pz_row *r = loc < UINT32_MAX ? pz_get(w->s, (uint32_t)loc, w->part->pid)
                               : NULL;
  if (!r)
    return -1;
  r->count += z->count;
  r->total += z->total;
  r->self += z->self;
  return pp_hist_merge(&r->h, z->hist.out);
}

/* Stats mode: each process's own payload. */
static int pz_from_parts(const pp_trace *t, pz_set *s) {
  static const ppt_stats_visitor v = {pz_zone, NULL, NULL, NULL,
                                      NULL,    NULL, NULL, NULL};
  for (size_t i = 0; i < t->nstats_parts; i++) {
    pz_walk w = {s, &t->stats_parts[i]};
    if (ppt_stats_walk(t->stats_parts[i].stats, t->stats_parts[i].nstats, &v,
                       &w, NULL) < 0)
      return -1;
  }
  return 0;
}

typedef struct pz_order {
  const pz_row *r;
  uint64_t zone_total; /* of every process */
} pz_order;

static int cmp_loc_pid(const void *x, const void *y) {
  const pz_row *a = ((const pz_order *)x)->r, *b = ((const pz_order *)y)->r;
  if (a->loc != b->loc)
    return a->loc < b->loc ? -1 : 1;
  return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static int cmp_pz(const void *x, const void *y) {
  const pz_order *a = x, *b = y;
  if (a->zone_total != b->zone_total)
    return a->zone_total > b->zone_total ? -1 : 1;
  if (a->r->loc != b->r->loc)
    return a->r->loc < b->r->loc ? -1 : 1;
  return a->r->pid < b->r->pid ? -1 : a->r->pid > b->r->pid;
}

static const pp_col pz_cols[] = {
    {"zone", "zone", PP_VALUE_TEXT, 0, NULL},
    {"pid", "pid", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"process", "process", PP_VALUE_TEXT, 0, NULL},
    {"count", "count", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"total_ns", "total", PP_VALUE_NS, PP_COL_INT, NULL},
    {"mean_ns", "mean", PP_VALUE_NS, 0, NULL},
    {"p50_ns", "p50", PP_VALUE_NS, PP_COL_INT, NULL},
    {"p99_ns", "p99", PP_VALUE_NS, PP_COL_INT, NULL},
    {"max_ns", "max", PP_VALUE_NS, PP_COL_INT, NULL},
    {"share", "share of zone", PP_VALUE_PCT, 0, NULL},
};

static int pz_table(const pp_trace *tr, pz_set *s, pp_table *t) {
  /* only zones that several processes recorded: the others are the
   * zones table's rows as they are */
  pz_order *o = s->n ? pp__malloc(s->n * sizeof *o) : NULL;
  if (s->n && !o)
    return -1;
  for (size_t i = 0; i < s->n; i++)
    o[i] = (pz_order){&s->v[i], 0};
  if (s->n > 1)
    qsort(o, s->n, sizeof *o, cmp_loc_pid);
  size_t n = 0;
  for (size_t i = 0, j; i < s->n; i = j) { /* each zone's rows together */
    uint64_t total = 0;
    for (j = i; j < s->n && o[j].r->loc == o[i].r->loc; j++)
      total += o[j].r->total;
    for (size_t k = i; j - i > 1 && k < j; k++)
      o[n++] = (pz_order){o[k].r, total};
  }
  if (n > 1)
    qsort(o, n, sizeof *o, cmp_pz);
  for (size_t i = 0; i < n; i++) {
    const pz_row *r = o[i].r;
    long row = pp_table_row(t);
    const char *pname = pp_trace_process_name(tr, r->pid);
    pp_cell_text(t, row, "zone", pp_trace_loc_name(tr, r->loc));
    pp_cell_count(t, row, "pid", r->pid);
    pp_cell_text(t, row, "process", pname ? pname : "");
    pp_cell_count(t, row, "count", r->count);
    pp_cell_int(t, row, "total_ns", (int64_t)r->total);
    pp_cell_num(t, row, "mean_ns",
                r->count ? (double)r->total / (double)r->count : 0);
    pp_cell_int(t, row, "p50_ns", (int64_t)pp_hist_percentile(&r->h, 50));
    pp_cell_int(t, row, "p99_ns", (int64_t)pp_hist_percentile(&r->h, 99));
    pp_cell_int(t, row, "max_ns", (int64_t)r->h.max);
    pp_cell_share(t, row, "share", (double)r->total, (double)o[i].zone_total);
  }
  pp__free(o);
  return 0;
}

int pp__process_zones(const pp_analysis *a, pp_doc *d) {
  const pp_trace *tr = a->trace;
  pp_table *t = pp_doc_table(
      d, "zones_by_process", "zones by process",
      "each zone that several processes recorded: each process's part",
      pz_cols, sizeof pz_cols / sizeof *pz_cols);
  if (!t)
    return -1;
  uint32_t *pids = NULL;
  size_t npids = pp_trace_pids(tr, &pids);
  pp__free(pids);
  if (npids < 2)
    return pp_doc_ok(d) ? 0 : -1; /* one process: the zones table */
  pz_set s;
  memset(&s, 0, sizeof s);
  int rc = 0;
  if (tr->from_stats && tr->nstats_parts < 2)
    pp_table_unavailable(t, "each process's own figures were not kept");
  else if (!tr->from_stats && tr->diag.events_kept < tr->diag.events)
    pp_table_unavailable(t, "not every event was stored (the details' "
                            "window): the figures per process would cover "
                            "part of the run");
  else
    rc = (tr->from_stats ? pz_from_parts(tr, &s)
                         : pz_from_instances(a, &s)) != 0 ||
                 pz_table(tr, &s, t) != 0
             ? -1
             : 0;
  pz_free(&s);
  return rc == 0 && pp_doc_ok(d) ? 0 : -1;
}
