/* SPDX-License-Identifier: MIT */
/*
 * NVIDIA GPU metrics through NVML, loaded at run time with dlopen
 * (libnvidia-ml.so.1, then libnvidia-ml.so) so that one binary serves hosts
 * with and without a driver. Per GPU: utilization, framebuffer memory
 * (v2 struct with reserved memory, v1 fallback), power, energy since open,
 * temperature, SM and memory clocks, clock-event (throttle) reasons as
 * words, PCIe throughput, GPM metrics on Hopper and newer (SM activity,
 * occupancy, tensor activity, DRAM bandwidth), the framebuffer memory of
 * the run's processes, and XID critical errors. Every metric carries
 * available/reason; a GPU that falls off the bus is marked lost and never
 * queried again. Not API: used by `pipeprof run` and the sampler.
 *
 * Invariants: GPUs keep their NVML index from open to close; energy never
 * decreases; a metric that NVML reports as not supported (or whose call the
 * driver lacks) stays unavailable with the same reason and is not called
 * again; every call is non-blocking (event waits use timeout 0). All
 * strings in a sample are copies: a sample outlives its handle.
 */
#ifndef PP_COLLECT_NVML_H
#define PP_COLLECT_NVML_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PP_GPU_MAX 16         /* GPUs read; more are ignored */
#define PP_GPU_MAX_PROCS 256  /* (gpu, pid) rows per sample */
#define PP_GPU_MAX_XIDS 64    /* XID events per sample */
#define PP_GPU_REASON_LEN 112 /* reason strings, NUL included */
#define PP_GPU_WORDS_LEN 224  /* decoded clock-event reasons */

/* Metric groups, each with its own available/reason per GPU. */
typedef enum pp_gpu_metric {
  PP_GPU_M_UTIL,          /* util_gpu_pct, util_mem_pct */
  PP_GPU_M_MEM,           /* mem_* bytes */
  PP_GPU_M_POWER,         /* power_w */
  PP_GPU_M_ENERGY,        /* energy_j */
  PP_GPU_M_TEMP,          /* temp_c */
  PP_GPU_M_SM_CLOCK,      /* sm_clock_mhz */
  PP_GPU_M_MEM_CLOCK,     /* mem_clock_mhz */
  PP_GPU_M_CLOCK_REASONS, /* clock_reasons, clock_reasons_words */
  PP_GPU_M_PCIE,          /* pcie_tx/rx_bytes_per_s */
  PP_GPU_M_SM_ACTIVE,     /* GPM */
  PP_GPU_M_SM_OCCUPANCY,  /* GPM */
  PP_GPU_M_TENSOR_ACTIVE, /* GPM */
  PP_GPU_M_DRAM_BW,       /* GPM */
  PP_GPU_M_PROCS,         /* proc_mem_bytes, used_by_run, procs[] */
  PP_GPU_M_XID,           /* xids[] */
  PP_GPU_NMETRICS
} pp_gpu_metric;

/* "util", "mem", "power", "energy", "temp", "sm_clock", "mem_clock",
 * "clock_reasons", "pcie", "sm_active", "sm_occupancy", "tensor_active",
 * "dram_bw", "procs", "xid"; "?" out of range. Static storage. */
const char *pp_gpu_metric_name(pp_gpu_metric m);

/* One GPU in a sample. A value is meaningful only when its metric's
 * available[] is set; otherwise reason[] says why (never an empty
 * string). */
typedef struct pp_gpu_dev {
  int index;         /* NVML index */
  char name[96];     /* "NVIDIA H100 80GB HBM3", "" when unknown */
  char uuid[96];     /* "GPU-...", "" when unknown */
  char pci_bus_id[32];
  int usable;        /* 0: lost or never opened, see reason_gpu */
  int lost;          /* fell off the bus (GPU_IS_LOST): not read again */
  char reason_gpu[PP_GPU_REASON_LEN]; /* why not usable */
  int mig;           /* MIG mode enabled */
  int available[PP_GPU_NMETRICS];
  char reason[PP_GPU_NMETRICS][PP_GPU_REASON_LEN];

  double util_gpu_pct; /* % of time a kernel ran (NVML's 1/6..1 s window) */
  double util_mem_pct; /* % of time device memory was read or written */
  uint64_t mem_total_bytes;
  uint64_t mem_used_bytes;     /* v2: excludes reserved; v1: includes it */
  uint64_t mem_free_bytes;
  uint64_t mem_reserved_bytes; /* 0 and mem_has_reserved 0 on v1 */
  int mem_has_reserved;        /* read through nvmlDeviceGetMemoryInfo_v2 */
  double power_w;              /* board power, NVML mW / 1000 */
  double energy_j;             /* since open, from the mJ counter */
  double temp_c;
  double sm_clock_mhz;
  double mem_clock_mhz;
  uint64_t clock_reasons;                 /* NVML bitmask */
  char clock_reasons_words[PP_GPU_WORDS_LEN]; /* "sw power cap, idle" */
  double pcie_tx_bytes_per_s;             /* NVML KB/s x 1024 */
  double pcie_rx_bytes_per_s;
  double sm_active_pct;    /* GPM, 0..100, over the interval since the */
  double sm_occupancy_pct; /* previous GPM sample (>= 100 ms) */
  double tensor_active_pct;
  double dram_bw_pct;
  uint64_t proc_mem_bytes; /* sum over the given pids on this GPU */
  int used_by_run;         /* some given pid has a context on it */
  /* Since open (kept by the handle across reads): */
  int used_by_run_ever;
  uint64_t clock_reasons_seen; /* OR of every mask read */
  uint64_t xid_total;          /* XID events seen */
  uint64_t xid_last;           /* code of the latest, when xid_total > 0 */
} pp_gpu_dev;

/* Framebuffer memory of one given pid on one GPU. */
typedef struct pp_gpu_proc {
  int gpu;             /* NVML index */
  pid_t pid;
  int mem_known;       /* 0: NVML gave no figure (containers, WDDM) */
  uint64_t used_bytes; /* max over its compute and graphics contexts */
} pp_gpu_proc;

typedef struct pp_gpu_xid {
  int gpu;       /* NVML index */
  uint64_t xid;  /* XID code (999: unknown to the driver) */
} pp_gpu_xid;

typedef struct pp_gpu_sample {
  int ngpus;
  pp_gpu_dev gpu[PP_GPU_MAX];
  size_t nprocs;
  pp_gpu_proc procs[PP_GPU_MAX_PROCS];
  size_t procs_dropped; /* rows that did not fit */
  size_t nxids;         /* events since the previous read, each once */
  pp_gpu_xid xids[PP_GPU_MAX_XIDS];
  size_t xids_dropped;
  uint64_t t_ns;        /* CLOCK_MONOTONIC time of this read */
} pp_gpu_sample;

typedef struct pp_collect_gpu pp_collect_gpu;

/* Load NVML, initialize it, enumerate the GPUs, take the energy baseline
 * and the first GPM sample, register for XID events.
 * @param libpath  library to dlopen (tests); NULL: libnvidia-ml.so.1,
 *                 then libnvidia-ml.so
 * @return a handle, also when NVML is missing or has no GPU (see
 *         pp_collect_gpu_reason), or NULL with errno ENOMEM.
 * Never blocks beyond NVML's own init. One thread at a time per handle. */
pp_collect_gpu *pp_collect_gpu_open(const char *libpath);

/* "unavailable: <why>" when no GPU can be read, NULL otherwise; owned by
 * the handle. e.g. "unavailable: no NVIDIA driver (libnvidia-ml.so.1 not
 * found)". */
const char *pp_collect_gpu_reason(const pp_collect_gpu *g);

/* GPUs enumerated (0 when NVML or GPUs are missing; lost GPUs count). */
int pp_collect_gpu_count(const pp_collect_gpu *g);

/* Read every GPU now. pids (npids of them, NULL when 0) are the run's
 * processes (host PIDs): their framebuffer memory and the GPUs they use
 * are reported; with none, process lists are not queried. Returns the
 * number of usable GPUs (0 when unavailable), or -1 with errno EINVAL for
 * NULL arguments. */
int pp_collect_gpu_read(pp_collect_gpu *g, const pid_t *pids, size_t npids,
                        pp_gpu_sample *out);

/* As pp_collect_gpu_read at an explicit CLOCK_MONOTONIC time in ns (tests
 * inject it; GPM needs >= 100 ms between its samples). */
int pp_collect_gpu_read_at(pp_collect_gpu *g, uint64_t now_ns,
                           const pid_t *pids, size_t npids,
                           pp_gpu_sample *out);

/* nvmlShutdown, dlclose and free. NULL is a no-op. */
void pp_collect_gpu_close(pp_collect_gpu *g);

/* CLOCK_MONOTONIC in ns, the clock of pp_collect_gpu_read. */
uint64_t pp_collect_gpu_now_ns(void);

/* ---- sampler glue --------------------------------------------------- */

typedef void (*pp_gpu_counter_fn)(void *ctx, const char *name, double v);
typedef void (*pp_gpu_meta_fn)(void *ctx, const char *key, const char *val);

/* Each available figure of a sample as a counter (units in the name; N is
 * the NVML index): gpuN.util_pct gpuN.mem_util_pct gpuN.mem_used_bytes
 * gpuN.mem_reserved_bytes gpuN.mem_free_bytes gpuN.mem_total_bytes
 * gpuN.power_w gpuN.energy_j gpuN.temp_c gpuN.sm_clock_mhz
 * gpuN.mem_clock_mhz gpuN.clock_reasons (mask) gpuN.pcie_tx_bytes_per_s
 * gpuN.pcie_rx_bytes_per_s gpuN.sm_active_pct gpuN.sm_occupancy_pct
 * gpuN.tensor_active_pct gpuN.dram_bw_pct gpuN.proc_mem_bytes (the run's
 * pids) gpuN.xid_total, and gpu.energy_j (all GPUs) and gpu.run_energy_j
 * (GPUs the run has used). Returns the number of calls made. */
size_t pp_gpu_sample_counters(const pp_gpu_sample *s, pp_gpu_counter_fn fn,
                              void *ctx);

/* META for a handle and its latest sample (s may be NULL before the first
 * read): "unavailable.gpu" (no GPU at all), per GPU "gpuN.name",
 * "gpuN.uuid", "gpuN.pci_bus_id", "gpuN.used_by_run" ("1"/"0"),
 * "gpuN.clock_reasons_seen" (words), "gpuN.xid_last", "unavailable.gpuN"
 * (lost or never opened) and "unavailable.gpuN.<metric>" (metric names of
 * pp_gpu_metric_name, "procs" and "xid" only when asked for). Call it at
 * start and at stop: readers take the last value of a key. Returns the
 * number of calls made. */
size_t pp_gpu_sample_meta(const pp_collect_gpu *g, const pp_gpu_sample *s,
                          pp_gpu_meta_fn fn, void *ctx);

/* Decode a clock-event (throttle) reason mask into comma-separated words
 * ("sw power cap, hw thermal slowdown"; "none" for 0; unknown bits as
 * "other 0x..."). Always NUL-terminates when n > 0; returns buf. */
char *pp_gpu_clock_reasons_words(uint64_t mask, char *buf, size_t n);

#endif /* PP_COLLECT_NVML_H */
