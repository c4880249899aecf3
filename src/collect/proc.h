/* SPDX-License-Identifier: MIT */
/*
 * Reader of Linux /proc and /sys for the whole system (CPU times, memory,
 * load, pressure stall, CPU frequency, thermal throttling, temperatures,
 * NUMA) and for one process tree (CPU time, faults, memory, context
 * switches, disk I/O of a root process and all its descendants). Every path
 * is taken relative to a root directory given at open ("/" on a real
 * machine, a fixture tree in tests), so nothing here reads a hard-coded
 * absolute path.
 *
 * Invariants and contracts:
 * - Pure data: no threads, no mutable globals. One pp_collect_proc per
 *   sampler; a reader is not thread-safe, distinct readers are independent.
 * - pp_collect_proc_open() discovers once what exists (CPU slots, cpufreq
 *   policies, thermal_throttle counters, hwmon temperature inputs, thermal
 *   zones, NUMA nodes, PSI files) and remembers, per metric group, whether
 *   it is available and, when not, why ("unavailable: no such file ...").
 *   pp_collect_proc_rescan() repeats the discovery (after CPU or sensor
 *   hotplug).
 * - Samples are caller-owned structs (zero-initialise them, e.g.
 *   `pp_system_sample s = {0};`) whose arrays the reader allocates on first
 *   use and reuses afterwards; release them with pp_system_sample_free() /
 *   pp_tree_sample_free(). Two samples from one reader stay valid together,
 *   so a sampler keeps the previous and the current sample and swaps them.
 *   Strings inside samples (sensor names, labels) point into the reader and
 *   die with it.
 * - A value that the machine does not provide is PP_COLLECT_NONE (integers)
 *   or NAN (floating point), never 0. Rates that cannot be computed for an
 *   interval (counters went backwards, a CPU went offline, a file became
 *   unreadable) are NAN or marked invalid, never negative.
 * - Cheap sampling: the system /proc files stay open and are re-read with
 *   one pread() at offset 0; one scratch buffer is reused for every file;
 *   no allocation per sample once the arrays have their size.
 * - Never crashes or blocks on bad, missing or unreadable files: such a
 *   file makes its group (or field) unavailable with a reason.
 *
 * Fault injection (tests only): pp_collect_proc_inject() makes opening one
 * path (relative to the root, e.g. "proc/102/io") fail with a chosen errno.
 * It exists because tests that run as root cannot make a file unreadable
 * with chmod. Injections are per reader; production code never calls it.
 */
#ifndef PP_COLLECT_PROC_H
#define PP_COLLECT_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/** Integer field not provided by this machine (or not readable). */
#define PP_COLLECT_NONE UINT64_MAX

typedef struct pp_collect_proc pp_collect_proc;

/** Metric groups, each available or not, with a reason when not. */
typedef enum pp_collect_group {
  PP_COLLECT_CPU = 0,     /**< /proc/stat: CPU times, ctxt, intr, procs */
  PP_COLLECT_LOADAVG,     /**< /proc/loadavg */
  PP_COLLECT_MEMINFO,     /**< /proc/meminfo */
  PP_COLLECT_PSI_CPU,     /**< /proc/pressure/cpu */
  PP_COLLECT_PSI_MEMORY,  /**< /proc/pressure/memory */
  PP_COLLECT_PSI_IO,      /**< /proc/pressure/io */
  PP_COLLECT_PSI_IRQ,     /**< /proc/pressure/irq (kernel 6.1+) */
  PP_COLLECT_CPUFREQ,     /**< cpufreq policies, else /proc/cpuinfo MHz */
  PP_COLLECT_THROTTLE,    /**< cpuN/thermal_throttle (Intel only) */
  PP_COLLECT_HWMON,       /**< /sys/class/hwmon temp*_input */
  PP_COLLECT_THERMAL,     /**< /sys/class/thermal/thermal_zone* */
  PP_COLLECT_NUMA,        /**< /sys/devices/system/node/nodeN/meminfo */
  PP_COLLECT_PROC_STAT,   /**< /proc/[pid]/stat of the tree */
  PP_COLLECT_PROC_STATUS, /**< /proc/[pid]/status of the tree */
  PP_COLLECT_PROC_IO,     /**< /proc/[pid]/io of the tree */
  PP_COLLECT_NGROUPS
} pp_collect_group;

/** PSI resources, index of pp_system_sample.psi. */
enum { PP_PSI_CPU = 0, PP_PSI_MEMORY, PP_PSI_IO, PP_PSI_IRQ, PP_PSI_N };

/** Where pp_cpu_sample.freq_khz came from. */
typedef enum pp_freq_source {
  PP_FREQ_NONE = 0,    /**< not available */
  PP_FREQ_CPUFREQ = 1, /**< cpufreq policyN/scaling_cur_freq */
  PP_FREQ_CPUINFO = 2  /**< /proc/cpuinfo "cpu MHz" (often nominal in VMs) */
} pp_freq_source;

/** Kind of a temperature sensor. */
typedef enum pp_temp_kind {
  PP_TEMP_HWMON = 0,  /**< /sys/class/hwmon/hwmonN/tempM_input */
  PP_TEMP_THERMAL = 1 /**< /sys/class/thermal/thermal_zoneN/temp */
} pp_temp_kind;

/* ------------------------------------------------------------------------ */
/* Reader                                                                   */
/* ------------------------------------------------------------------------ */

/**
 * Open a reader rooted at sysroot (NULL or "" means "/"): /proc and /sys are
 * read as sysroot/proc and sysroot/sys. Discovers what exists (see the file
 * comment). Returns NULL with errno set when sysroot is not a readable
 * directory (ENOENT, ENOTDIR, EACCES) or memory runs out (ENOMEM); missing
 * metric files never make it fail.
 */
pp_collect_proc *pp_collect_proc_open(const char *sysroot);

/** Close a reader (NULL is fine). Samples' strings die with it. */
void pp_collect_proc_close(pp_collect_proc *r);

/**
 * Repeat the discovery (CPU slots, cpufreq policies, throttle counters,
 * sensors, NUMA nodes, PSI and /proc files), e.g. after hotplug. The
 * chip/label strings of samples taken before die here (the next
 * pp_collect_system() sets them again). Returns PP_OK or PP_ENOMEM (the
 * reader then works with what it managed to discover).
 */
int pp_collect_proc_rescan(pp_collect_proc *r);

/* Files read at every sample are kept open (real /proc and /sys only) and
 * re-read with pread. At most n stay open (default 32, at most 256): a
 * reader inside a host program must leave it its file descriptors. */
void pp_collect_proc_set_fd_budget(pp_collect_proc *r, int n);

/**
 * Why a group is unavailable, or NULL when it is available. Reflects the
 * last sample that touched the group (discovery before the first one), e.g.
 * "unavailable: no such file /sys/class/hwmon (no sensors exposed)" or
 * "unavailable: permission denied reading /proc/42/io". The string lives in
 * the reader until the next call that touches the group.
 */
const char *pp_collect_proc_reason(const pp_collect_proc *r,
                                   pp_collect_group g);

/** Whether CPU frequencies come from /proc/cpuinfo's "cpu MHz" (no cpufreq
 * driver: on VMs that is the nominal clock and never moves). */
int pp_collect_proc_freq_from_cpuinfo(const pp_collect_proc *r);

/** Short name of a group ("cpu", "psi_io", "hwmon", ...); static storage. */
const char *pp_collect_group_name(pp_collect_group g);

/** Number of CPU slots (highest logical CPU number seen + 1). */
size_t pp_collect_proc_cpu_slots(const pp_collect_proc *r);

/**
 * Tests only: make every open of `relpath` (relative to the root, no
 * leading slash, e.g. "proc/102/io" or "sys/class/hwmon") fail with errno
 * `err`; err 0 removes the injection. At most 8 paths; returns PP_OK or
 * PP_EINVAL. Discovery-time paths take effect at the next rescan.
 */
int pp_collect_proc_inject(pp_collect_proc *r, const char *relpath, int err);

/* ------------------------------------------------------------------------ */
/* System sample                                                            */
/* ------------------------------------------------------------------------ */

/** Cumulative CPU time in USER_HZ ticks (pp_system_sample.clk_tck per
 * second), as in /proc/stat. guest/guest_nice are already inside user/nice
 * and are not repeated. */
typedef struct pp_cpu_times {
  uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
} pp_cpu_times;

/** One logical CPU; index in pp_system_sample.cpu = CPU number. */
typedef struct pp_cpu_sample {
  bool online;        /**< a "cpuN" line was in /proc/stat this sample */
  pp_cpu_times times; /**< valid when online */
  uint64_t freq_khz;  /**< current frequency, kHz; PP_COLLECT_NONE if unknown */
  uint64_t throttle_core;    /**< core_throttle_count; PP_COLLECT_NONE */
  uint64_t throttle_package; /**< package_throttle_count; PP_COLLECT_NONE */
} pp_cpu_sample;

/** Pressure stall information for one resource. Percentages are 0..100;
 * totals are cumulative microseconds stalled. */
typedef struct pp_psi {
  bool has_some, has_full; /**< which lines the kernel provided */
  double some_avg10, some_avg60, some_avg300; /**< percent; NAN if absent */
  double full_avg10, full_avg60, full_avg300; /**< percent; NAN if absent */
  uint64_t some_total_us, full_total_us;      /**< PP_COLLECT_NONE if absent */
} pp_psi;

/** One temperature reading. */
typedef struct pp_temp_sample {
  pp_temp_kind kind;
  const char *chip;  /**< hwmon "name" (coretemp, nvme) or zone "type" */
  const char *label; /**< hwmon tempN_label or "tempN"; zone: "thermal_zoneN" */
  double celsius;    /**< degrees C; NAN when this read failed */
} pp_temp_sample;

/** Memory of one NUMA node, bytes. */
typedef struct pp_numa_sample {
  int node;                               /**< N of nodeN */
  uint64_t mem_total, mem_free, mem_used; /**< PP_COLLECT_NONE if absent */
} pp_numa_sample;

/**
 * One system sample. Counters are raw and cumulative; derive rates with
 * pp_collect_system_rates(). Fields of an unavailable group keep
 * PP_COLLECT_NONE / NAN; `avail` says which groups delivered data.
 */
typedef struct pp_system_sample {
  uint64_t t_ns;    /**< CLOCK_MONOTONIC ns when the sample was taken */
  uint32_t avail;   /**< bit (1u << pp_collect_group) per group that read */
  uint64_t clk_tck; /**< ticks per second of pp_cpu_times */

  /* /proc/stat */
  size_t ncpu;        /**< CPUs online (cpuN lines) */
  size_t ncpu_slots;  /**< length of cpu[] (highest CPU number + 1) */
  pp_cpu_sample *cpu; /**< per CPU, by number; owned by the sample */
  pp_cpu_times total; /**< the "cpu" line: sum over online CPUs */
  uint64_t ctxt;      /**< context switches since boot */
  uint64_t intr;      /**< interrupts since boot (first number of intr) */
  uint64_t processes; /**< forks since boot */
  uint64_t procs_running, procs_blocked; /**< instantaneous */
  uint64_t boot_time_s;                  /**< btime, seconds since the epoch */

  /* /proc/loadavg */
  double load1, load5, load15; /**< run-queue averages; NAN if absent */

  /* /proc/meminfo, bytes; PP_COLLECT_NONE when the kernel lacks the line */
  uint64_t mem_total, mem_free, mem_available, buffers, cached;
  uint64_t swap_total, swap_free, shmem;

  pp_psi psi[PP_PSI_N]; /**< by PP_PSI_CPU .. PP_PSI_IRQ */

  pp_freq_source freq_source; /**< where cpu[].freq_khz came from */

  size_t ntemps;         /**< hwmon inputs first, then thermal zones */
  pp_temp_sample *temps; /**< owned by the sample; strings by the reader */

  size_t nnodes;         /**< NUMA nodes */
  pp_numa_sample *nodes; /**< owned by the sample */

  size_t cpu_cap_, temps_cap_, nodes_cap_; /* private: array capacities */
} pp_system_sample;

/**
 * Read every available system group into *out (a zero-initialised or
 * previously used sample; its arrays are reused). Returns PP_OK (also when
 * groups are unavailable: see out->avail and pp_collect_proc_reason()),
 * PP_EINVAL for NULL arguments, PP_ENOMEM when arrays cannot grow.
 */
int pp_collect_system(pp_collect_proc *r, pp_system_sample *out);

/** Free a sample's arrays and zero it (NULL is fine). */
void pp_system_sample_free(pp_system_sample *s);

/** CPU utilisation over an interval: fractions 0..1 of all ticks. */
typedef struct pp_cpu_util {
  bool valid;    /**< false: offline in either sample, counters went
                      backwards (hotplug) or no ticks elapsed */
  double user;   /**< user + nice */
  double system; /**< system + irq + softirq */
  double iowait, steal, idle;
  double busy; /**< 1 - idle - iowait */
} pp_cpu_util;

/** Rates between two system samples a (earlier) and b (later). */
typedef struct pp_system_rates {
  double dt_s;               /**< b.t_ns - a.t_ns, seconds */
  pp_cpu_util total;         /**< from the "cpu" lines */
  size_t ncpu_slots;         /**< length of cpu[] */
  pp_cpu_util *cpu;          /**< per CPU number; owned by the rates struct */
  double ctxt_per_s;         /**< context switches/s; NAN if unavailable */
  double intr_per_s;         /**< interrupts/s; NAN if unavailable */
  double forks_per_s;        /**< new processes/s; NAN if unavailable */
  double psi_some[PP_PSI_N]; /**< share of time stalled (0..1); NAN */
  double psi_full[PP_PSI_N]; /**< share of time fully stalled; NAN */
  size_t cpu_cap_;           /* private */
} pp_system_rates;

/**
 * Derive rates from two samples of one machine, a taken before b. Pure
 * function of its inputs (samples may come from different readers, and
 * their t_ns may be set by hand). A counter that went backwards or a CPU
 * missing from either sample gives NAN / valid = false for that item,
 * never a negative rate. Returns PP_OK, PP_EINVAL (NULL argument or
 * b.t_ns <= a.t_ns) or PP_ENOMEM; out->cpu is reused across calls.
 */
int pp_collect_system_rates(const pp_system_sample *a,
                            const pp_system_sample *b, pp_system_rates *out);

/** Free a rates struct's array and zero it (NULL is fine). */
void pp_system_rates_free(pp_system_rates *x);

/* ------------------------------------------------------------------------ */
/* Process tree                                                             */
/* ------------------------------------------------------------------------ */

/** Cumulative per-process counters. A field is PP_COLLECT_NONE in a
 * pp_proc_sample when its file could not be read; sums skip such fields. */
typedef struct pp_proc_counters {
  uint64_t utime_ns, stime_ns;      /**< user / system CPU time, ns (stat) */
  uint64_t minflt, majflt;          /**< page faults (stat) */
  uint64_t vol_ctxt, nonvol_ctxt;   /**< context switches (status) */
  uint64_t rchar, wchar;            /**< bytes through read/write calls (io) */
  uint64_t read_bytes, write_bytes; /**< bytes from/to storage (io) */
} pp_proc_counters;

/** Flags of pp_proc_sample.flags. */
enum {
  PP_PROC_HAS_STATUS = 1u << 0, /**< status read: ctxt, hwm, rss exact */
  PP_PROC_HAS_IO = 1u << 1      /**< io read: rchar..write_bytes valid */
};

/** One process of the tree. */
typedef struct pp_proc_sample {
  pid_t pid, ppid;
  char state;           /**< R, S, D, Z, ... */
  char comm[64];        /**< command name (may hold spaces and parens) */
  unsigned flags;       /**< PP_PROC_HAS_* */
  uint64_t start_ticks; /**< start time, clock ticks after boot (identity) */
  pp_proc_counters c;
  uint64_t cutime_ns, cstime_ns; /**< CPU time of reaped children, ns */
  uint64_t num_threads;
  uint64_t rss_bytes;   /**< resident set (VmRSS, else stat rss x page) */
  uint64_t hwm_bytes;   /**< peak resident set VmHWM; PP_COLLECT_NONE */
  uint64_t vsize_bytes; /**< virtual size */
} pp_proc_sample;

/**
 * One sample of a process tree: the root and every descendant (by ppid),
 * plus processes seen in the tree before that have since been re-parented
 * (orphans stay tracked while they live).
 */
typedef struct pp_tree_sample {
  uint64_t t_ns;    /**< CLOCK_MONOTONIC ns when the scan started */
  uint64_t clk_tck; /**< ticks per second used for the ns conversion */
  pid_t root;
  bool root_alive;       /**< the root process exists (same start time) */
  size_t nproc;          /**< processes alive in the tree, sorted by pid */
  pp_proc_sample *procs; /**< owned by the sample */

  pp_proc_counters alive;    /**< sum over procs (known fields only) */
  pp_proc_counters departed; /**< last-seen counters of processes that left
                                  the tree since tracking started */
  pp_proc_counters total;    /**< alive + departed: never decreases */
  uint64_t ndeparted;        /**< processes that left since tracking began */

  uint64_t num_threads;     /**< sum over procs */
  uint64_t rss_bytes;       /**< sum of RSS over procs (shared pages counted
                                 once per process) */
  uint64_t vsize_bytes;     /**< sum of virtual sizes */
  uint64_t rss_peak_bytes;  /**< max of rss_bytes over this reader's samples */
  uint64_t hwm_max_bytes;   /**< max VmHWM of any process seen so far */
  uint32_t nstatus_missing; /**< procs whose status was unreadable */
  uint32_t nio_missing;     /**< procs whose io was unreadable */

  size_t procs_cap_; /* private */
} pp_tree_sample;

/**
 * Scan /proc for root and its descendants and fill *out (zero-initialised
 * or previously used; procs[] reused). The reader tracks one tree: calling
 * it with another root resets the departed accumulator and the peaks.
 * Returns PP_OK (also when the root is gone: root_alive false, nproc 0;
 * and when some files are unreadable: see nio_missing and
 * pp_collect_proc_reason(r, PP_COLLECT_PROC_IO)), PP_EINVAL, PP_ENOMEM, or
 * PP_EIO when /proc itself cannot be listed.
 */
int pp_collect_tree(pp_collect_proc *r, pid_t root, pp_tree_sample *out);

/** Free a tree sample's array and zero it (NULL is fine). */
void pp_tree_sample_free(pp_tree_sample *s);

/** The process with this pid in a tree sample, or NULL. */
const pp_proc_sample *pp_tree_sample_find(const pp_tree_sample *s, pid_t pid);

/** Rates of a tree between samples a (earlier) and b (later); NAN when a
 * rate cannot be computed (a file unreadable in either sample, or a
 * counter that went backwards). */
typedef struct pp_tree_rates {
  double dt_s;
  double cpu_user_pct, cpu_system_pct, cpu_pct; /**< 100 = one core busy */
  double minflt_per_s, majflt_per_s;
  double vol_ctxt_per_s, nonvol_ctxt_per_s;
  double rchar_per_s, wchar_per_s;            /**< bytes/s */
  double read_bytes_per_s, write_bytes_per_s; /**< bytes/s, storage */
} pp_tree_rates;

/** Derive tree rates from the totals (alive + departed) of two samples of
 * one reader. Returns PP_OK or PP_EINVAL (NULL, other roots, or
 * b.t_ns <= a.t_ns). */
int pp_collect_tree_rates(const pp_tree_sample *a, const pp_tree_sample *b,
                          pp_tree_rates *out);

/* ------------------------------------------------------------------------ */
/* Threads of a process tree                                                */
/* ------------------------------------------------------------------------ */

/** One thread of a process of the tree, from /proc/PID/task/TID/stat. */
typedef struct pp_thread_sample {
  pid_t tid, pid;       /**< thread id and the process that owns it */
  char comm[64];        /**< thread name (comm; may hold spaces, parens) */
  uint64_t start_ticks; /**< start time, clock ticks after boot (identity) */
  uint64_t utime_ns, stime_ns; /**< this thread's user / system CPU, ns */
} pp_thread_sample;

/** The threads of a tree sample's processes at one moment. */
typedef struct pp_thread_list {
  uint64_t t_ns;             /**< CLOCK_MONOTONIC ns when the read began */
  size_t n;                  /**< threads read, by process then tid */
  pp_thread_sample *threads; /**< owned by the list */
  size_t nmore;              /**< threads listed but not read (over max) */
  size_t cap_;               /* private */
} pp_thread_list;

/**
 * Read the threads of every process of `tree` (a sample of this reader)
 * into *out (zero-initialised or previously used; its array is reused),
 * at most `max` of them; threads past the bound are counted in out->nmore,
 * not read. A thread or process that exits while being read is skipped.
 * Files are /proc/PID/task/TID/stat, read through the reader's root (and
 * its fault injection). On the real /proc a process whose CPU-time clock
 * (clock_getcpuclockid) has not moved since the last call read all its
 * threads is not read again: no thread of it ran, so its threads, names
 * and CPU times are the last call's, which out gets (one clock read in
 * place of a directory listing and a read per thread). Returns PP_OK,
 * PP_EINVAL (NULL argument) or PP_ENOMEM (out keeps the threads read so
 * far).
 */
int pp_collect_threads(pp_collect_proc *r, const pp_tree_sample *tree,
                       size_t max, pp_thread_list *out);

/** Threads the last pp_collect_threads took over from the call before
 * instead of reading them (tests, benchmarks). */
size_t pp_collect_threads_reused(const pp_collect_proc *r);

/** Read CPU frequency, throttle counts, temperatures and NUMA nodes in
 * pp_collect_system at most once per ns (0, the default: every call);
 * between, the sample leaves them out (PP_COLLECT_NONE, no temps, no
 * nodes). They change slowly, and /proc/cpuinfo, where frequency comes
 * from without cpufreq, is costly to read: the kernel formats every
 * CPU's whole entry. */
void pp_collect_proc_set_slow_period(pp_collect_proc *r, uint64_t ns);

/** Turn off (0) or back on the use of processes' CPU-time clocks to skip
 * reading what cannot have changed: threads (pp_collect_threads) and, in
 * pp_collect_tree between full scans, the children of a process that has
 * not run. On by default for the real /proc; never on under a sysroot. */
void pp_collect_proc_set_cpu_clocks(pp_collect_proc *r, int on);

/** Free a thread list's array and zero it (NULL is fine). */
void pp_thread_list_free(pp_thread_list *l);

#endif /* PP_COLLECT_PROC_H */
