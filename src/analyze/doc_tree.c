/* SPDX-License-Identifier: MIT */
/*
 * The results document's tables of the profiled process tree: its facts
 * (CPU time, the tree's mean CPU, peak memory, page faults, context
 * switches, disk bytes: each from the run's rusage where `pipeprof run`
 * recorded it, else the last sample, and said which), its sampled
 * measures, and the sampler's process and thread tables (pp_run_tree).
 * The text report, the summary JSON (system.process_tree) and the HTML
 * page lay them out.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "internal.h"
#include "analyze/run_tree.h"
#include "analyze/system.h"
#include "results/doc.h"

#define M(s, id) (&(s)->m[PP_METRIC_##id])

static const char *const SAMPLED_MISSES =
    "sampled: processes shorter than a sample are missed";

/* A fact from a total of the tree, with where it comes from; the source
 * as a JSON-only member key_source. */
static void total(pp_table *t, const char *key, const char *label,
                  const pp_sys_total *x, const char *sampled_note) {
  if (!x->ok) {
    if (x->why)
      pp_fact_unavailable(t, key, label, x->why);
    return;
  }
  long r = pp_fact_num(t, key, label, x->v, PP_VALUE_COUNT);
  pp_row_note(t, r, "%s", x->rusage ? "rusage of the run" : sampled_note);
  char k[64];
  snprintf(k, sizeof k, "%s_source", key);
  pp_fact_json_only(t, pp_fact_text(t, k, "source",
                                    x->rusage ? "rusage" : "sampled"));
}

/* A fact from the last sample of a running total. */
static void last(pp_table *t, const char *key, const char *label,
                 const pp_sys_fig *f, pp_value_unit unit, const char *note) {
  if (!f->ok) {
    if (f->why)
      pp_fact_unavailable(t, key, label, f->why);
    return;
  }
  long r = pp_fact_num(t, key, label, f->last, unit);
  if (note)
    pp_row_note(t, r, "%s", note);
}

/* The tree's CPU that no thread listed accounts for (threads that ended
 * between samples or past the bound): 0 when none or unknown. */
static double unattributed(const pp_run_tree *rt) {
  double rest = pp_run_tree_cpu_whole(rt) - rt->threads_cpu_s;
  return isfinite(rest) && rest > 0 ? rest : 0;
}

/* "process_tree": the tree's facts. */
static int tree_facts(pp_doc *d, const pp_system *s, const pp_run_tree *rt) {
  pp_table *t = pp_doc_facts(d, "process_tree", "process tree", NULL);
  if (!t)
    return -1;
  if (s->cpu_time_src) {
    const char *src = s->cpu_time_src == 1 ? "rusage of the run"
                                           : "sampled from /proc";
    if (isfinite(s->cpu_user_s))
      pp_row_note(t, pp_fact_num(t, "cpu_user_s", "CPU time, user",
                                 s->cpu_user_s, PP_VALUE_SECONDS),
                  "%s", src);
    if (isfinite(s->cpu_system_s))
      pp_row_note(t, pp_fact_num(t, "cpu_system_s", "CPU time, system",
                                 s->cpu_system_s, PP_VALUE_SECONDS),
                  "%s", src);
    pp_fact_json_only(t, pp_fact_text(t, "cpu_time_source", "source",
                                      s->cpu_time_src == 1 ? "rusage"
                                                           : "sampled"));
  } else if (s->cpu_time_why) {
    pp_fact_unavailable(t, "cpu_user_s", "CPU time", s->cpu_time_why);
  }
  const pp_sys_fig *c = M(s, PROC_CPU);
  if (isfinite(s->cpu_mean_pct)) {
    long r = pp_fact_num(t, "cpu_mean_pct", "CPU, mean", s->cpu_mean_pct,
                         PP_VALUE_PCT);
    pp_row_note(t, r, "%s; 100%% = one core",
                s->cpu_mean_rusage
                    ? "CPU time over the run's wall time"
                    : "the mean of the samples");
    pp_fact_json_only(t, pp_fact_text(t, "cpu_mean_source", "source",
                                      s->cpu_mean_rusage ? "rusage"
                                                         : "sampled"));
  } else if (c->why) {
    pp_fact_unavailable(t, "cpu_mean_pct", "CPU, mean", c->why);
  }
  const pp_sys_fig *pk = M(s, PROC_RSS_PEAK);
  last(t, "rss_peak_bytes", "RSS peak, tree total", pk, PP_VALUE_BYTES,
       "the largest sampled sum over the tree's processes");
  if (s->has_maxrss)
    pp_row_note(t, pp_fact_num(t, "maxrss_bytes", "RSS peak, one process",
                               s->maxrss_bytes, PP_VALUE_BYTES),
                "the largest process's, rusage of the run");
  total(t, "minflt_total", "page faults, minor", &s->minflt, SAMPLED_MISSES);
  total(t, "majflt_total", "page faults, major", &s->majflt, SAMPLED_MISSES);
  /* the run's rusage counts every thread; /proc/PID/status, sampled, the
   * main thread of each process only */
  static const char *const main_thread =
      "sampled: each process's main thread; processes shorter than a "
      "sample are missed";
  total(t, "vol_ctxt_total", "voluntary ctx switches", &s->vol_ctxt,
        main_thread);
  total(t, "nonvol_ctxt_total", "involuntary ctx switches",
        &s->nonvol_ctxt, main_thread);
  last(t, "read_bytes_total", "disk read", M(s, PROC_READ_BYTES),
       PP_VALUE_BYTES, NULL);
  last(t, "write_bytes_total", "disk written", M(s, PROC_WRITE_BYTES),
       PP_VALUE_BYTES, NULL);
  if (rt->nprocs || rt->nthreads) {
    pp_fact_json_only(t, pp_fact_num(t, "threads_cpu_s", "threads' CPU",
                                     rt->threads_cpu_s, PP_VALUE_SECONDS));
    pp_fact_json_only(t, pp_fact_num(t, "threads_whole_cpu_s", "whole CPU",
                                     pp_run_tree_cpu_whole(rt),
                                     PP_VALUE_SECONDS));
    /* said by the threads table's remark */
    pp_fact_json_only(t, pp_fact_num(t, "unattributed_cpu_s",
                                     "CPU of no thread listed",
                                     unattributed(rt), PP_VALUE_SECONDS));
    pp_fact_json_only(t, pp_fact_num(t, "threads_tracking_limit",
                                     "threads tracked one by one",
                                     rt->threads_max, PP_VALUE_COUNT));
    pp_fact_json_only(
        t, pp_fact_num(t, "threads_untracked_max", "threads not tracked",
                       rt->threads_untracked_max + (double)rt->threads_dropped,
                       PP_VALUE_COUNT));
    pp_fact_json_only(
        t, pp_fact_num(t, "procs_untracked_max", "processes not tracked",
                       rt->procs_untracked_max + (double)rt->procs_dropped,
                       PP_VALUE_COUNT));
  }
  return pp_doc_ok(d) ? 0 : -1;
}

static const pp_col proc_cols[] = {
    {"name", "process", PP_VALUE_TEXT, 0, NULL},
    {"pid", "pid", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"ppid", "ppid", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"first_seen_s", "seen", PP_VALUE_SECONDS, 0, NULL},
    {"last_seen_s", "seen", PP_VALUE_SECONDS, 0, NULL},
    {"cpu_s", "CPU", PP_VALUE_SECONDS, 0, NULL},
};

static const pp_col thread_cols[] = {
    {"name", "thread", PP_VALUE_TEXT, 0, NULL},
    {"tid", "tid", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"pid", "pid", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"user_s", "user", PP_VALUE_SECONDS, 0, NULL},
    {"system_s", "system", PP_VALUE_SECONDS, 0, NULL},
    {"cpu_s", "CPU", PP_VALUE_SECONDS, 0, NULL},
    {"share_pct", "share", PP_VALUE_PCT, PP_COL_BAR, NULL},
    {"first_seen_s", "seen", PP_VALUE_SECONDS, 0, NULL},
    {"last_seen_s", "seen", PP_VALUE_SECONDS, 0, NULL},
};

/* A time or CPU figure of the sampler's tables: none when not known. */
static void secs(pp_table *t, long r, const char *key, double v) {
  if (isfinite(v))
    pp_cell_num(t, r, key, v);
}

/* "tree_processes" and "tree_threads": the sampler's tables. */
static int tree_tables(pp_doc *d, const pp_analysis *a, const pp_system *s,
                       const pp_run_tree *rt) {
  if (!rt->nprocs && !rt->nthreads) {
    const char *why = pp_trace_unavailable(
        a->trace, (const char *const[]){"threads", "proc_stat", "proc", NULL});
    if (rt->is_run && why) {
      pp_table *t = pp_doc_table(d, "tree_threads",
                                 "threads of the profiled programs", NULL,
                                 thread_cols,
                                 sizeof thread_cols / sizeof *thread_cols);
      pp_table_unavailable(t, why);
    }
    return pp_doc_ok(d) ? 0 : -1;
  }
  char hz[48] = "";
  if (s->has_hz)
    snprintf(hz, sizeof hz, " at %.6g Hz", s->hz);
  char note[256];
  snprintf(note, sizeof note,
           "as the sampler saw them%s: seen = first and last sample after "
           "the start; CPU as last sampled",
           hz);
  pp_table *p = pp_doc_table(d, "tree_processes", "processes of the tree",
                             note, proc_cols,
                             sizeof proc_cols / sizeof *proc_cols);
  if (!p)
    return -1;
  pp_table_empty(p, "no process sampled");
  for (size_t i = 0; i < rt->nprocs; i++) {
    const pp_run_ent *e = &rt->procs[i];
    long r = pp_table_row(p);
    pp_cell_text(p, r, "name", e->comm[0] ? e->comm : "?");
    pp_cell_count(p, r, "pid", e->id);
    pp_cell_count(p, r, "ppid", e->owner);
    secs(p, r, "first_seen_s", e->first_s);
    secs(p, r, "last_seen_s", e->last_s);
    secs(p, r, "cpu_s", e->cpu_s);
  }
  if (rt->procs_untracked_max > 0 || rt->procs_dropped)
    pp_table_remark(p,
                    "more processes than the sampler tracks one by one: up "
                    "to %.0f at once were not listed (their CPU is in the "
                    "tree's)",
                    rt->procs_untracked_max + (double)rt->procs_dropped);

  double whole = pp_run_tree_cpu_whole(rt);
  char b[32];
  const char *src =
      rt->tree_cpu_src && whole == rt->tree_cpu_s
          ? (strcmp(rt->tree_cpu_src, "rusage") == 0 ? "from the run's rusage"
                                                     : "sampled from /proc")
          : "summed over the threads";
  snprintf(note, sizeof note,
           "CPU as last sampled%s; share of the tree's CPU time, %s %s", hz,
           pp_format_ns(b, sizeof b, whole * 1e9), src);
  pp_table *t = pp_doc_table(d, "tree_threads",
                             "threads of the profiled programs", note,
                             thread_cols,
                             sizeof thread_cols / sizeof *thread_cols);
  if (!t)
    return -1;
  pp_table_empty(t, "no thread sampled");
  for (size_t i = 0; i < rt->nthreads; i++) {
    const pp_run_ent *e = &rt->threads[i];
    long r = pp_table_row(t);
    pp_cell_text(t, r, "name", e->comm[0] ? e->comm : "?");
    pp_cell_count(t, r, "tid", e->id);
    pp_cell_count(t, r, "pid", e->owner);
    secs(t, r, "user_s", e->user_s);
    secs(t, r, "system_s", e->system_s);
    secs(t, r, "cpu_s", e->cpu_s);
    secs(t, r, "share_pct", e->cpu_s / whole * 100.0);
    secs(t, r, "first_seen_s", e->first_s);
    secs(t, r, "last_seen_s", e->last_s);
  }
  double rest = unattributed(rt);
  char pct[32];
  if (rest > 0)
    pp_table_remark(t,
                    "not attributed to a thread listed: %s (%s of the "
                    "tree's CPU), threads that ended between samples or "
                    "were not tracked",
                    pp_format_ns(b, sizeof b, rest * 1e9),
                    pp_format_pct(pct, sizeof pct, rest / whole * 100.0));
  if (rt->threads_untracked_max > 0 || rt->threads_dropped)
    pp_table_remark(t,
                    "the bound of %.0f threads tracked one by one was "
                    "reached: up to %.0f more at once were not tracked "
                    "(their CPU is not attributed)",
                    rt->threads_max,
                    rt->threads_untracked_max + (double)rt->threads_dropped);
  return pp_doc_ok(d) ? 0 : -1;
}

int pp__tree_tables(const pp_analysis *a, const pp_run_tree *rt,
                    const struct pp_system *s, pp_doc *d) {
  if (s->show_tree && tree_facts(d, s, rt))
    return -1;
  return tree_tables(d, a, s, rt);
}
