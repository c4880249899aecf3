/* SPDX-License-Identifier: MIT */
/*
 * The sampler: a thread that reads the system (/proc, /sys), a process tree,
 * perf_event counters and RAPL energy at a fixed rate and records each
 * figure as a counter track of the running session, so samples land in the
 * trace beside the zones. `pipeprof run` samples the program it launched;
 * PIPEPROF_SAMPLE_HZ starts one inside an instrumented program.
 *
 * Counter names (the report and exporters rely on them; units in the name):
 *   sys.cpu.busy_pct sys.cpu.user_pct sys.cpu.system_pct sys.cpu.iowait_pct
 *   sys.cpu.steal_pct sys.cpuN.busy_pct       utilization, 0..100 per core
 *   sys.load1                                 run-queue average
 *   sys.mem.used_bytes sys.mem.available_bytes sys.mem.total_bytes
 *   sys.swap.used_bytes
 *   sys.psi.cpu.some_pct sys.psi.memory.some_pct sys.psi.memory.full_pct
 *   sys.psi.io.some_pct sys.psi.io.full_pct   share of time stalled, 0..100
 *   sys.ctxt_per_s sys.intr_per_s
 *   sys.cpuN.freq_mhz sys.cpuN.throttle_total
 *   sys.temp.<chip>.<label>_c                 degrees Celsius
 *   sys.numaN.used_bytes
 *   proc.cpu_pct proc.user_pct proc.system_pct (100 = one core)
 *   proc.cpu_user_s proc.cpu_system_s         cumulative CPU time, s
 *   proc.threads proc.procs proc.rss_bytes proc.rss_peak_bytes
 *   proc.hwm_bytes proc.vsize_bytes
 *   proc.minflt_total proc.majflt_total proc.vol_ctxt_total
 *   proc.nonvol_ctxt_total proc.read_bytes_total proc.write_bytes_total
 *   proc.minflt_per_s proc.majflt_per_s proc.read_bytes_per_s
 *   proc.write_bytes_per_s
 *   proc.thread.<tid>.cpu_pct                 one thread of the tree, 100 =
 *                          one core (with pp__sampler_track_threads)
 *   perf.<event> (cumulative, as perf names it; task-clock in ms)
 *   perf.ipc perf.cache_miss_ratio perf.branch_miss_ratio
 *   power.<domain>_w energy.<domain>_j power.package_w energy.package_j
 *   gpuN.util_pct gpuN.mem_util_pct gpuN.mem_used_bytes gpuN.mem_free_bytes
 *   gpuN.mem_reserved_bytes gpuN.mem_total_bytes gpuN.power_w gpuN.temp_c
 *   gpuN.sm_clock_mhz gpuN.mem_clock_mhz gpuN.clock_reasons
 *   gpuN.pcie_tx_bytes_per_s gpuN.pcie_rx_bytes_per_s gpuN.sm_active_pct
 *   gpuN.sm_occupancy_pct gpuN.tensor_active_pct gpuN.dram_bw_pct
 *   gpuN.proc_mem_bytes gpuN.xid_total gpuN.energy_j gpu.energy_j
 *   gpu.run_energy_j (src/collect/nvml.c emits them)
 * Metadata (session META): "sampler.hz", "gpuN.name", "gpuN.uuid", ...,
 * and "unavailable.<group>" =
 * "<reason>" for every metric group the machine cannot give, and at the end
 * "perf.<event>.running_pct" for multiplexed events.
 *
 * After pp__sampler_track_threads(s, max) the sampler also keeps a table
 * of every process and thread of the tree it saw (at most max of each;
 * later ones are counted, not tracked) and writes it as META when it
 * stops, K counting from 0 in the order first seen, times in
 * CLOCK_MONOTONIC ns, CPU the last value seen (CPU used after a thread's
 * last sample is not in it):
 *   tree.proc.K.pid .ppid .comm .first_ns .last_ns .cpu_ns
 *   tree.thread.K.tid .pid .comm .first_ns .last_ns .user_ns .system_ns
 *   tree.procs.tracked tree.threads.tracked tree.threads.max (the bound)
 *   tree.procs.untracked_max tree.threads.untracked_max (most seen at once
 *   past the bound; written only when the bound was hit)
 */
#ifndef PP_SAMPLER_H
#define PP_SAMPLER_H

#include <sys/types.h>

typedef struct pp__sampler pp__sampler;

typedef struct pp__sampler_cfg {
  pid_t pid;           /* root of the process tree to sample */
  unsigned hz;         /* 1..1000 */
  const char *sysroot; /* "/" unless testing */
  int system;          /* sample the system (not only the tree) */
  int perf;            /* open perf_event counters on pid (inherit) */
  int perf_on_exec;    /* open them disabled, enabled when pid execs */
  int power;           /* read RAPL energy */
  int fd_budget;       /* files kept open between samples; 0: 32 (inside a
                          host program); pipeprof run uses 256 */
  int gpu;             /* read NVIDIA GPUs through NVML (dlopen) */
} pp__sampler_cfg;

/* Live figures for a status line. */
typedef struct pp__sampler_status {
  double cpu_pct;   /* tree, last interval; 100 = one core; <0 unknown */
  double rss_bytes; /* tree; <0 unknown */
  double sys_busy_pct;
  unsigned long samples;
} pp__sampler_status;

/* Open the readers (perf counters included, so a caller using
 * perf_on_exec must call this before letting the target exec) without
 * starting the thread. NULL when out of memory. A session must be running
 * for samples to be recorded. */
pp__sampler *pp__sampler_open(const pp__sampler_cfg *cfg);
/* Track up to max processes and max threads of the tree one by one (see
 * the file comment); call before pp__sampler_start. 0 (the default) turns
 * it off. Returns 0, or -1 when out of memory (tracking stays off, and the
 * trace says so). */
int pp__sampler_track_threads(pp__sampler *s, int max);
/* Start sampling on a thread of its own: one sample now, then one every
 * 1/hz. Returns 0 or -1. */
int pp__sampler_start(pp__sampler *s);
void pp__sampler_status_get(pp__sampler *s, pp__sampler_status *out);
/* Take a last sample, stop the thread, record final metadata and free. */
void pp__sampler_stop(pp__sampler *s);

#endif /* PP_SAMPLER_H */
