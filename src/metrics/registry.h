/* SPDX-License-Identifier: MIT */
/*
 * The metric registry: every metric the library itself samples (system,
 * process tree, perf_event, power, GPU), one row each in a table with its
 * name, unit, kind, group and help, and an id that samplers, live alerts,
 * reports, diff and exporters share instead of re-parsing name strings.
 *
 * Families with a number or a free part in their names use placeholders:
 * "{N}" a decimal index (sys.cpu{N}.busy_pct), "{*}" one or more
 * characters (sys.psi.{*}.some_pct). pp_metric_lookup() takes a concrete
 * name back to its row, index and free part.
 *
 * Namespace: the library records its metrics with the srcloc kind
 * PP_KIND_METRIC (pipeprof.h), interned apart from user counters, so a
 * user counter named "sys.mem.total_bytes" stays the user's: it is a
 * counter like any other and no alert or system report reads it.
 *
 * Plain constant data and pure functions: safe from any thread.
 * docs/internals/metrics.md says how to add a metric.
 */
#ifndef PP_METRICS_REGISTRY_H
#define PP_METRICS_REGISTRY_H

#include <stddef.h>

typedef enum pp_metric_unit {
  PP_UNIT_NONE,     /* a plain number (load average, ratio) */
  PP_UNIT_PERCENT,  /* 0..100 (per CPU for process figures: up to 100 * n) */
  PP_UNIT_BYTES,
  PP_UNIT_SECONDS,
  PP_UNIT_PER_SECOND,
  PP_UNIT_BYTES_PER_SECOND,
  PP_UNIT_COUNT,
  PP_UNIT_MHZ,
  PP_UNIT_WATTS,
  PP_UNIT_JOULES,
  PP_UNIT_CELSIUS,
  PP_UNIT_MILLISECONDS /* perf's task-clock, as perf stat prints it */
} pp_metric_unit;

typedef enum pp_metric_kind {
  PP_METRIC_GAUGE, /* a level: compare distributions or last values */
  PP_METRIC_TOTAL  /* cumulative since the start: compare totals, rates */
} pp_metric_kind;

typedef enum pp_metric_group {
  PP_GROUP_CPU,
  PP_GROUP_MEMORY,
  PP_GROUP_PRESSURE,
  PP_GROUP_THERMAL,
  PP_GROUP_PROCESS,
  PP_GROUP_PERF,
  PP_GROUP_POWER,
  PP_GROUP_GPU
} pp_metric_group;

/* X(ID, name pattern, unit, kind, group, help) */
#define PP_METRIC_TABLE(X)                                                   \
  X(SYS_CPU_BUSY, "sys.cpu.busy_pct", PERCENT, GAUGE, CPU,                   \
    "CPU time not idle, all CPUs")                                           \
  X(SYS_CPU_USER, "sys.cpu.user_pct", PERCENT, GAUGE, CPU,                   \
    "CPU time in user mode, all CPUs")                                       \
  X(SYS_CPU_SYSTEM, "sys.cpu.system_pct", PERCENT, GAUGE, CPU,               \
    "CPU time in the kernel, all CPUs")                                      \
  X(SYS_CPU_IOWAIT, "sys.cpu.iowait_pct", PERCENT, GAUGE, CPU,               \
    "CPU time idle with I/O outstanding, all CPUs")                          \
  X(SYS_CPU_STEAL, "sys.cpu.steal_pct", PERCENT, GAUGE, CPU,                 \
    "CPU time taken by the hypervisor, all CPUs")                            \
  X(SYS_CPUN_BUSY, "sys.cpu{N}.busy_pct", PERCENT, GAUGE, CPU,               \
    "CPU time not idle, one CPU")                                            \
  X(SYS_CPUN_FREQ, "sys.cpu{N}.freq_mhz", MHZ, GAUGE, CPU,                   \
    "current frequency of one CPU")                                          \
  X(SYS_CPUN_THROTTLE, "sys.cpu{N}.throttle_total", COUNT, TOTAL, THERMAL,   \
    "thermal throttle events of one CPU since boot")                         \
  X(SYS_CTXT_RATE, "sys.ctxt_per_s", PER_SECOND, GAUGE, CPU,                 \
    "context switches per second, whole system")                             \
  X(SYS_INTR_RATE, "sys.intr_per_s", PER_SECOND, GAUGE, CPU,                 \
    "interrupts per second, whole system")                                   \
  X(SYS_LOAD1, "sys.load1", NONE, GAUGE, CPU, "1-minute load average")       \
  X(SYS_MEM_TOTAL, "sys.mem.total_bytes", BYTES, GAUGE, MEMORY,              \
    "physical memory")                                                       \
  X(SYS_MEM_AVAIL, "sys.mem.available_bytes", BYTES, GAUGE, MEMORY,          \
    "memory available for new work without swapping")                        \
  X(SYS_MEM_USED, "sys.mem.used_bytes", BYTES, GAUGE, MEMORY,                \
    "physical memory less available memory")                                 \
  X(SYS_SWAP_USED, "sys.swap.used_bytes", BYTES, GAUGE, MEMORY,              \
    "swap space in use")                                                     \
  X(SYS_NUMAN_USED, "sys.numa{N}.used_bytes", BYTES, GAUGE, MEMORY,          \
    "memory in use on one NUMA node")                                        \
  X(SYS_PSI_SOME, "sys.psi.{*}.some_pct", PERCENT, GAUGE, PRESSURE,          \
    "share of time some task stalled on cpu, memory or io (avg10)")          \
  X(SYS_PSI_FULL, "sys.psi.{*}.full_pct", PERCENT, GAUGE, PRESSURE,          \
    "share of time all tasks stalled on memory or io (avg10)")               \
  X(SYS_TEMP, "sys.temp.{*}_c", CELSIUS, GAUGE, THERMAL,                     \
    "a temperature sensor (chip.label)")                                     \
  X(PROC_CPU, "proc.cpu_pct", PERCENT, GAUGE, PROCESS,                       \
    "CPU of the process tree: one busy CPU is 100 percent, a ratio of 1")   \
  X(PROC_USER, "proc.user_pct", PERCENT, GAUGE, PROCESS,                     \
    "user-mode CPU of the process tree")                                     \
  X(PROC_SYSTEM, "proc.system_pct", PERCENT, GAUGE, PROCESS,                 \
    "kernel CPU of the process tree")                                        \
  X(PROC_CPU_USER_S, "proc.cpu_user_s", SECONDS, TOTAL, PROCESS,             \
    "user-mode CPU time of the process tree")                                \
  X(PROC_CPU_SYSTEM_S, "proc.cpu_system_s", SECONDS, TOTAL, PROCESS,         \
    "kernel CPU time of the process tree")                                   \
  X(PROC_PROCS, "proc.procs", COUNT, GAUGE, PROCESS,                         \
    "processes in the tree")                                                 \
  X(PROC_THREADS, "proc.threads", COUNT, GAUGE, PROCESS,                     \
    "threads in the tree")                                                   \
  X(PROC_THREAD_CPU, "proc.thread.{N}.cpu_pct", PERCENT, GAUGE, PROCESS,    \
    "CPU of one thread of the tree (by Linux thread id)")                    \
  X(PROC_RSS, "proc.rss_bytes", BYTES, GAUGE, PROCESS,                       \
    "resident memory of the tree")                                           \
  X(PROC_RSS_PEAK, "proc.rss_peak_bytes", BYTES, GAUGE, PROCESS,             \
    "highest resident memory of the tree seen by the sampler")               \
  X(PROC_HWM, "proc.hwm_bytes", BYTES, GAUGE, PROCESS,                       \
    "largest peak resident memory (VmHWM) of a process of the tree")         \
  X(PROC_VSIZE, "proc.vsize_bytes", BYTES, GAUGE, PROCESS,                   \
    "virtual memory of the tree")                                            \
  X(PROC_MINFLT, "proc.minflt_total", COUNT, TOTAL, PROCESS,                 \
    "minor page faults of the tree")                                         \
  X(PROC_MAJFLT, "proc.majflt_total", COUNT, TOTAL, PROCESS,                 \
    "major page faults of the tree")                                         \
  X(PROC_VOL_CTXT, "proc.vol_ctxt_total", COUNT, TOTAL, PROCESS,             \
    "voluntary context switches of the tree")                                \
  X(PROC_NONVOL_CTXT, "proc.nonvol_ctxt_total", COUNT, TOTAL, PROCESS,       \
    "involuntary context switches of the tree")                              \
  X(PROC_READ_BYTES, "proc.read_bytes_total", BYTES, TOTAL, PROCESS,         \
    "bytes the tree read from storage")                                      \
  X(PROC_WRITE_BYTES, "proc.write_bytes_total", BYTES, TOTAL, PROCESS,       \
    "bytes the tree wrote to storage")                                       \
  X(PROC_MINFLT_RATE, "proc.minflt_per_s", PER_SECOND, GAUGE, PROCESS,       \
    "minor page faults per second")                                          \
  X(PROC_MAJFLT_RATE, "proc.majflt_per_s", PER_SECOND, GAUGE, PROCESS,       \
    "major page faults per second")                                          \
  X(PROC_READ_RATE, "proc.read_bytes_per_s", BYTES_PER_SECOND, GAUGE,        \
    PROCESS, "storage reads per second")                                     \
  X(PROC_WRITE_RATE, "proc.write_bytes_per_s", BYTES_PER_SECOND, GAUGE,      \
    PROCESS, "storage writes per second")                                    \
  X(PERF_IPC, "perf.ipc", NONE, GAUGE, PERF,                                 \
    "instructions per cycle")                                                \
  X(PERF_CACHE_MISS, "perf.cache_miss_ratio", NONE, GAUGE, PERF,             \
    "cache misses per cache reference")                                      \
  X(PERF_BRANCH_MISS, "perf.branch_miss_ratio", NONE, GAUGE, PERF,           \
    "mispredicted branches per branch")                                      \
  X(PERF_RUNNING, "perf.{*}.running_pct", PERCENT, GAUGE, PERF,              \
    "share of the time a multiplexed perf_event counter ran")                \
  X(PERF_TASK_CLOCK, "perf.task-clock", MILLISECONDS, TOTAL, PERF,           \
    "CPU time the tree's tasks ran (perf_event task-clock)")                 \
  X(PERF_EVENT, "perf.{*}", COUNT, TOTAL, PERF,                              \
    "a perf_event counter's running total since it was enabled")            \
  X(POWER_PACKAGE, "power.package_w", WATTS, GAUGE, POWER,                   \
    "CPU package power (RAPL)")                                              \
  X(POWER_DOMAIN, "power.{*}_w", WATTS, GAUGE, POWER,                        \
    "power of one RAPL domain")                                              \
  X(ENERGY_PACKAGE, "energy.package_j", JOULES, TOTAL, POWER,                \
    "CPU package energy since the session started (RAPL)")                   \
  X(ENERGY_DOMAIN, "energy.{*}_j", JOULES, TOTAL, POWER,                     \
    "energy of one RAPL domain since the session started")                   \
  X(GPU_ENERGY_ALL, "gpu.energy_j", JOULES, TOTAL, GPU,                      \
    "energy of every GPU since the session started")                         \
  X(GPU_RUN_ENERGY, "gpu.run_energy_j", JOULES, TOTAL, GPU,                  \
    "energy of the GPUs the run used")                                       \
  X(GPU_UTIL, "gpu{N}.util_pct", PERCENT, GAUGE, GPU,                        \
    "time a kernel ran on the GPU (NVML)")                                   \
  X(GPU_MEM_UTIL, "gpu{N}.mem_util_pct", PERCENT, GAUGE, GPU,                \
    "time device memory was read or written")                                \
  X(GPU_MEM_USED, "gpu{N}.mem_used_bytes", BYTES, GAUGE, GPU,                \
    "device memory in use (NVML)")                                           \
  X(GPU_MEM_RESERVED, "gpu{N}.mem_reserved_bytes", BYTES, GAUGE, GPU,        \
    "device memory reserved by the driver")                                  \
  X(GPU_MEM_FREE, "gpu{N}.mem_free_bytes", BYTES, GAUGE, GPU,                \
    "device memory free")                                                    \
  X(GPU_MEM_TOTAL, "gpu{N}.mem_total_bytes", BYTES, GAUGE, GPU,              \
    "device memory")                                                         \
  X(GPU_POWER, "gpu{N}.power_w", WATTS, GAUGE, GPU, "GPU power draw")       \
  X(GPU_ENERGY, "gpu{N}.energy_j", JOULES, TOTAL, GPU,                       \
    "GPU energy since the session started")                                  \
  X(GPU_TEMP, "gpu{N}.temp_c", CELSIUS, GAUGE, GPU, "GPU temperature")      \
  X(GPU_SM_CLOCK, "gpu{N}.sm_clock_mhz", MHZ, GAUGE, GPU, "SM clock")       \
  X(GPU_MEM_CLOCK, "gpu{N}.mem_clock_mhz", MHZ, GAUGE, GPU,                  \
    "memory clock")                                                          \
  X(GPU_CLOCK_REASONS, "gpu{N}.clock_reasons", NONE, GAUGE, GPU,           \
    "NVML bit mask of the reasons the clocks are held down")                 \
  X(GPU_PCIE_TX, "gpu{N}.pcie_tx_bytes_per_s", BYTES_PER_SECOND, GAUGE, GPU, \
    "PCIe bytes sent per second")                                            \
  X(GPU_PCIE_RX, "gpu{N}.pcie_rx_bytes_per_s", BYTES_PER_SECOND, GAUGE, GPU, \
    "PCIe bytes received per second")                                        \
  X(GPU_SM_ACTIVE, "gpu{N}.sm_active_pct", PERCENT, GAUGE, GPU,              \
    "SM activity (NVML GPM)")                                                \
  X(GPU_SM_OCCUPANCY, "gpu{N}.sm_occupancy_pct", PERCENT, GAUGE, GPU,        \
    "SM occupancy (NVML GPM)")                                               \
  X(GPU_TENSOR_ACTIVE, "gpu{N}.tensor_active_pct", PERCENT, GAUGE, GPU,      \
    "tensor core activity (NVML GPM)")                                       \
  X(GPU_DRAM_BW, "gpu{N}.dram_bw_pct", PERCENT, GAUGE, GPU,                  \
    "device memory bandwidth used (NVML GPM)")                               \
  X(GPU_PROC_MEM, "gpu{N}.proc_mem_bytes", BYTES, GAUGE, GPU,                \
    "device memory of the profiled processes")                               \
  X(GPU_XID, "gpu{N}.xid_total", COUNT, TOTAL, GPU,                          \
    "XID errors reported by the driver")                                     \
  X(CUDA_MEM_USED, "cuda{N}.mem_used_bytes", BYTES, GAUGE, GPU,              \
    "device memory in use as the CUDA driver sees it (cuMemGetInfo)")        \
  X(CUDA_MEM_TOTAL, "cuda{N}.mem_total_bytes", BYTES, GAUGE, GPU,            \
    "device memory as the CUDA driver sees it")

typedef enum pp_metric_id {
#define PP_METRIC_ENUM_(id, name, unit, kind, group, help) PP_METRIC_##id,
  PP_METRIC_TABLE(PP_METRIC_ENUM_)
#undef PP_METRIC_ENUM_
  PP_METRIC_COUNT,
  PP_METRIC_NONE = -1
} pp_metric_id;

typedef struct pp_metric_def {
  const char *name; /* the pattern */
  pp_metric_unit unit;
  pp_metric_kind kind;
  pp_metric_group group;
  const char *help;
} pp_metric_def;

/* The row of id (NULL out of range). */
const pp_metric_def *pp_metric_def_of(pp_metric_id id);

/* A concrete name: its row, or PP_METRIC_NONE. index gets the {N} number
 * (-1 without one) and free/free_len the {*} part (NULL, 0 without one);
 * each may be NULL. Rows are tried in table order, so a specific row
 * listed before a general one (perf.ipc before perf.{*}) wins. */
pp_metric_id pp_metric_lookup(const char *name, long *index,
                              const char **free, size_t *free_len);

/* Does group g describe the machine as a whole (the sys.* rows: cpu,
 * memory, pressure, thermal)? The process tree, perf_event, power and GPU
 * groups do not. */
int pp_metric_group_is_host(pp_metric_group g);

/* Unit and group names for documents and exporters ("bytes", "memory"). */
const char *pp_metric_unit_name(pp_metric_unit u);
const char *pp_metric_group_name(pp_metric_group g);

#endif /* PP_METRICS_REGISTRY_H */
