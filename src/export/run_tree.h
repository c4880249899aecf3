/* SPDX-License-Identifier: MIT */
/*
 * What `pipeprof run` knows about the program it profiled, read back from
 * an analysed pp_trace for the report, the summary JSON and the Chrome
 * export: the command and its pid, pipeprof's own pid and CPU time (META
 * "run.*", written by src/cli/run.c), the tree's CPU time (rusage of the
 * run, else sampled), and the per-process and per-thread tables of the
 * sampler (META "tree.proc.K.*", "tree.thread.K.*": src/core/sampler.h).
 *
 * META comes from a trace file and may hold anything: fields that are not
 * plain non-negative decimal numbers are ignored, entries without their
 * id (pid, tid) are dropped, and the tables are bounded (PP_RUN_TREE_MAX
 * entries each, the rest counted in *_dropped).
 */
#ifndef PP_EXPORT_RUN_TREE_H
#define PP_EXPORT_RUN_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"

#define PP_RUN_TREE_MAX 4096

/* One process (tid 0) or thread of the profiled tree, as last sampled.
 * Times in seconds after the start of the run; CPU in seconds. */
typedef struct pp_run_ent {
  uint32_t id;             /* pid of a process, tid of a thread */
  uint32_t owner;          /* parent pid of a process, owning pid of a thread */
  const char *comm;        /* points into t's META; "" when absent */
  double first_s, last_s;  /* NAN when absent */
  double user_s, system_s; /* a process: cpu in user_s, system_s NAN */
  double cpu_s;            /* user + system (known parts) */
} pp_run_ent;

typedef struct pp_run_tree {
  int is_run;          /* META run.command present */
  const char *command; /* NULL when not a run */
  int has_pid, has_profiler_pid;
  uint32_t pid, profiler_pid;
  double tree_cpu_s;        /* NAN when unknown */
  const char *tree_cpu_src; /* "rusage" or "sampled"; NULL when unknown */
  double profiler_cpu_s;    /* NAN when not recorded */
  pp_run_ent *procs;        /* in the order first seen */
  size_t nprocs;
  pp_run_ent *threads; /* by CPU, largest first (ties: order first seen) */
  size_t nthreads;
  size_t procs_dropped, threads_dropped; /* over PP_RUN_TREE_MAX */
  double threads_max;                    /* the sampler's bound; NAN unknown */
  double threads_untracked_max;          /* most seen at once past it; 0 none */
  double procs_untracked_max;
  double threads_cpu_s; /* sum of the threads' CPU */
} pp_run_tree;

/* Fill *rt from t and its analysis a (NULL when not analysed yet: the
 * tree's CPU is then what the trace's META says, never the sampled
 * series). Returns 0, or -1 when out of memory (then *rt holds no
 * tables). Free with pp_run_tree_free. */
int pp_run_tree_get(const pp_trace *t, const pp_analysis *a, pp_run_tree *rt);
void pp_run_tree_free(pp_run_tree *rt);

/* The CPU that the thread table divides by: the tree's CPU time, or the
 * threads' sum when that is larger (orphans the run's rusage cannot see);
 * NAN when neither is known. */
double pp_run_tree_cpu_whole(const pp_run_tree *rt);

/* The thread of the table with this tid, or NULL. */
const pp_run_ent *pp_run_tree_thread(const pp_run_tree *rt, uint32_t tid);

#endif /* PP_EXPORT_RUN_TREE_H */
