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
#ifndef PP_ANALYZE_RUN_TREE_H
#define PP_ANALYZE_RUN_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"

#define PP_RUN_TREE_MAX 4096

/* One process (tid 0) or thread of the profiled tree, as last sampled.
 * Times in seconds after the start of the run; CPU in seconds. */
typedef struct pp_run_ent {
  uint32_t id;             /* pid of a process, tid of a thread */
  uint32_t owner;          /* parent pid of a process, owning pid of a thread */
  const char *comm;        /* the name to show: for a thread the program
                              named (its name in the trace), that name;
                              else the kernel's comm. Points into t; ""
                              when absent */
  const char *kernel_comm; /* the kernel's comm as sampled ("" absent) */
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
/* Whether thread th of t runs in pipeprof itself (a run's profiler pid). */
int pp_run_tree_is_profiler(const pp_trace *t, const pp_run_tree *rt,
                            const pp_thread *th);

/* ---- the profiler's cost in a run ------------------------------------- */

/* Below this much CPU time of the profiled programs, pipeprof's own CPU
 * (start-up, sampling, writing: a few milliseconds) as a share of theirs
 * says nothing about the cost of profiling a program that works: `sleep 1`
 * would show "overhead 769%". The share is then not meaningful. */
#define PP_RUN_OVERHEAD_MIN_TREE_NS 100e6

typedef enum pp_run_overhead_state {
  PP_RUN_OH_NONE,        /* not a run, or a figure missing: why */
  PP_RUN_OH_NOT_MEANINGFUL, /* both known, the programs' too small: why */
  PP_RUN_OH_SHARE        /* pct is the share */
} pp_run_overhead_state;

/* pipeprof's own CPU time in a `pipeprof run` set against the profiled
 * programs', and what the programs spent recording when they link
 * libpipeprof: the one computation the text and the JSON lay out. */
typedef struct pp_run_overhead {
  pp_run_overhead_state state;
  char why[200];         /* state != SHARE: why there is no share */
  double profiler_ns;    /* pipeprof's own CPU (rusage of the run process);
                            NAN when not recorded */
  double tree_ns;        /* the programs' CPU; NAN when unknown */
  const char *tree_src;  /* "rusage" or "sampled"; NULL when unknown */
  double pct;            /* SHARE: profiler_ns / tree_ns * 100 */
  /* recording inside the programs (threads that are not pipeprof's) */
  int has_app;           /* such threads recorded events */
  uint64_t app_events;
  int app_known;         /* the event cost is known: the figures below */
  double app_recording_ns; /* app_events x event cost (estimated) */
  double app_writer_ns;    /* the programs' writer thread; -1 unknown */
  double app_in_ns;        /* recording + writer */
  double total_pct;        /* SHARE and app_known: (profiler + in) / tree */
} pp_run_overhead;

/* Fill *o for the analysed trace a, rt from pp_run_tree_get(a->trace, a,
 * ...). state NONE with why "" when it is not a run at all. */
void pp_run_overhead_get(const pp_analysis *a, const pp_run_tree *rt,
                         pp_run_overhead *o);

#endif /* PP_ANALYZE_RUN_TREE_H */
