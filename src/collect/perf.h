/* SPDX-License-Identifier: MIT */
/*
 * Hardware and software performance counters of one process tree through
 * perf_event_open(2): cycles, instructions, cache and branch events, and the
 * software events (task-clock, context switches, migrations, page faults)
 * that also work inside virtual machines without a PMU. Every event is
 * opened on its own (no group), so an event the CPU, the hypervisor or the
 * permission level refuses only costs that event; its reason is kept in
 * words for the report. Reads scale multiplexed counts and derive IPC and
 * miss ratios. Not API: used by `pipeprof run` and the sampler.
 *
 * Invariants: the event table order is fixed (pp_perf_event_id); names are
 * the ones `perf stat` prints; a value is only meaningful when `counted`.
 */
#ifndef PP_COLLECT_PERF_H
#define PP_COLLECT_PERF_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The events, in table order. */
typedef enum pp_perf_event_id {
  PP_PERF_CYCLES,
  PP_PERF_INSTRUCTIONS,
  PP_PERF_CACHE_REFERENCES,
  PP_PERF_CACHE_MISSES,
  PP_PERF_BRANCHES,
  PP_PERF_BRANCH_MISSES,
  PP_PERF_L1D_LOAD_MISSES,
  PP_PERF_LLC_LOAD_MISSES,
  PP_PERF_TASK_CLOCK,
  PP_PERF_CONTEXT_SWITCHES,
  PP_PERF_CPU_MIGRATIONS,
  PP_PERF_PAGE_FAULTS,
  PP_PERF_NEVENTS
} pp_perf_event_id;

/* Flags for pp_collect_perf_open. */
enum {
  /* Open the counters disabled and let the kernel enable them when the
   * target calls execve(): the `pipeprof run` pattern (fork, the child
   * waits on a pipe, the parent opens on the child's pid, the child execs),
   * so the profiler's own fork/exec setup is not counted. */
  PP_PERF_ENABLE_ON_EXEC = 1 << 0
};

/* One event in a sample. Pointers stay valid until pp_collect_perf_close. */
typedef struct pp_perf_value {
  const char *name;      /* as perf prints it: "cycles", "task-clock" */
  const char *unit;      /* "msec" for task-clock, "" for counts */
  int hardware;          /* 1 for PMU events, 0 for software events */
  int available;         /* opened at pp_collect_perf_open */
  int user_only;         /* kernel excluded (paranoid level; perf's ":u");
                            then context-switches and cpu-migrations,
                            which the kernel only sees in kernel mode,
                            are not counted (perf stat prints 0) */
  int counted;           /* available and ran for a non-zero time */
  double value;          /* scaled: raw * enabled / running; task-clock ms */
  uint64_t raw;          /* the count as read, before scaling (ns for
                            task-clock) */
  uint64_t time_enabled; /* ns the event was enabled */
  uint64_t time_running; /* ns it was on the PMU */
  double running_share;  /* time_running / time_enabled, 0..1 (perf's %) */
  const char *reason;    /* why not available / not counted; NULL if fine */
} pp_perf_value;

/* A reading of every event, cumulative since the counters were enabled. */
typedef struct pp_perf_sample {
  pp_perf_value ev[PP_PERF_NEVENTS]; /* indexed by pp_perf_event_id */
  int navailable;                    /* events opened */
  int ncounted;                      /* events with a value */
  /* Derived ratios, each set only when both inputs were counted and the
   * denominator is non-zero. The inputs come from separately opened
   * events, so under heavy multiplexing the ratio mixes two estimates. */
  int has_ipc, has_cache_miss_ratio, has_branch_miss_ratio;
  double ipc;               /* instructions / cycles */
  double cache_miss_ratio;  /* cache-misses / cache-references, 0..1 */
  double branch_miss_ratio; /* branch-misses / branches, 0..1 */
} pp_perf_sample;

typedef struct pp_collect_perf pp_collect_perf;

/* Open every event for process `pid` (0: the calling process) with
 * inherit = 1: threads and children created after this call are counted
 * too, their counts folded in when they exit. Counts stay readable after
 * the target exited and was reaped; read after waitpid() for the final
 * totals (the fd holds them until pp_collect_perf_close). The counters stop
 * before the kernel tears down an exiting task's memory, so task-clock can
 * be a few ms below the rusage of a process with a large address space
 * (perf stat shows the same).
 * @param pid    target process, >= 0
 * @param flags  PP_PERF_* flags
 * @return a handle (even when no event could be opened: see the reasons),
 *         or NULL with errno set (EINVAL for pid < 0, ENOMEM).
 * Never blocks. One thread at a time per handle. */
pp_collect_perf *pp_collect_perf_open(pid_t pid, int flags);

/* Read all events into *out (caller-owned; its pointers refer to the
 * handle). Returns the number of counted events, or -1 with errno EINVAL
 * for NULL arguments. A read after the target exited gives the totals. */
int pp_collect_perf_read(pp_collect_perf *p, pp_perf_sample *out);

/* Close the counters and free the handle. NULL is a no-op. */
void pp_collect_perf_close(pp_collect_perf *p);

/* Number of events opened (0..PP_PERF_NEVENTS). */
int pp_collect_perf_navailable(const pp_collect_perf *p);

/* When no hardware event could be opened: "hardware counters unavailable:
 * <reason of the first one>"; NULL when at least one is available. Owned by
 * the handle. */
const char *pp_collect_perf_hw_reason(const pp_collect_perf *p);

/* Name of event `id` as perf prints it; NULL when out of range. */
const char *pp_collect_perf_event_name(int id);

/* The reason, in words, for a perf_event_open errno (static storage except
 * for EACCES/EPERM, which name the paranoid level: written into buf).
 * @param paranoid  the perf_event_paranoid value to print */
const char *pp_collect_perf_strerror(int err, int paranoid, char *buf,
                                     size_t len);

/* /proc/sys/kernel/perf_event_paranoid, or 2 when unreadable. */
int pp_collect_perf_paranoid(void);

/* perf_event_open(2) through the test hook: returns an fd, or -1 with
 * errno set. Shared with the power collector (perf's power PMU). */
int pp_collect_perf_event_open(struct perf_event_attr *attr, pid_t pid,
                               int cpu, int group_fd, unsigned long flags);

/* ---- tests only ----------------------------------------------------- */

/* Replace the perf_event_open syscall (fault injection); NULL restores the
 * real one. Not thread-safe: set it before opening, from the test. */
typedef int (*pp_collect_perf_open_fn)(struct perf_event_attr *attr,
                                       pid_t pid, int cpu, int group_fd,
                                       unsigned long flags);
void pp_collect_perf_set_open_hook(pp_collect_perf_open_fn fn);

#endif /* PP_COLLECT_PERF_H */
