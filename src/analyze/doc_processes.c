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

#include "analyze.h"
#include "internal.h"
#include "analyze/run_tree.h"
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
  if (t->cols[k].unit == PP_VALUE_NS)
    pp_cell_int(t, r, key, (int64_t)(c->num + v));
  else
    pp_cell_count(t, r, key, (uint64_t)(c->num + v));
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
