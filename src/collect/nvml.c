/* SPDX-License-Identifier: MIT */
/*
 * The NVML reader (see nvml.h): loads libnvidia-ml with dlopen, resolves
 * each entry point with dlsym (a missing one makes its metric unavailable,
 * as does NVML_ERROR_FUNCTION_NOT_FOUND), and reads every GPU per call.
 * No nvml.h is needed to build: the few types used are declared below from
 * the documented layouts (docs/internals/nvml.md), with static asserts on
 * their sizes. Errors are mapped to per-metric reasons; NOT_SUPPORTED and
 * missing functions are remembered so that their calls are not repeated,
 * and GPU_IS_LOST retires the GPU for good.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/nvml.h"
#include "internal.h"

/* ---- NVML declarations (from the documented ABI) -------------------- */

typedef int nvml_ret;
typedef struct nvml_device_st *nvml_device;
typedef struct nvml_event_set_st *nvml_event_set;
typedef struct nvml_gpm_sample {
  struct nvml_gpm_sample_st *handle;
} nvml_gpm_sample;

enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_GPU_NOT_FOUND = 28,
  NVML_ERROR_UNKNOWN = 999
};

typedef struct nvml_utilization {
  unsigned gpu, memory;
} nvml_utilization;

typedef struct nvml_memory_v1 {
  unsigned long long total, free, used;
} nvml_memory_v1;

typedef struct nvml_memory_v2 {
  unsigned version;
  unsigned long long total, reserved, free, used;
} nvml_memory_v2;
/* sizeof | (2 << 24) = 0x02000028: not 2. */
#define NVML_MEMORY_V2_VERSION                                              \
  ((unsigned)(sizeof(nvml_memory_v2) | (2u << 24)))

typedef struct nvml_pci_info {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
} nvml_pci_info;

typedef struct nvml_process_info { /* v2: the _v2 and _v3 calls */
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id, compute_instance_id;
} nvml_process_info;
#define NVML_VALUE_NOT_AVAILABLE 0xFFFFFFFFFFFFFFFFull

typedef struct nvml_event_data { /* _v2 wait; v1 fills the first three */
  nvml_device device;
  unsigned long long event_type, event_data;
  unsigned gpu_instance_id, compute_instance_id;
} nvml_event_data;
#define NVML_EVENT_XID_CRITICAL_ERROR 0x8ull

typedef struct nvml_gpm_support {
  unsigned version, is_supported_device;
} nvml_gpm_support;
#define NVML_GPM_SUPPORT_VERSION 1u

typedef struct nvml_gpm_metric {
  unsigned metric_id;
  nvml_ret ret;
  double value;
  struct {
    char *short_name, *long_name, *unit;
  } info;
} nvml_gpm_metric;

/* The header sizes metrics[] by NVML_GPM_METRIC_MAX (98 in NVML 12); we
 * pass numMetrics = 4 and give room for more than any header declares, in
 * case a library touches the whole array. */
#define GPM_METRIC_SLOTS 256
typedef struct nvml_gpm_metrics_get {
  unsigned version, num_metrics;
  nvml_gpm_sample sample1, sample2;
  nvml_gpm_metric metrics[GPM_METRIC_SLOTS];
} nvml_gpm_metrics_get;
#define NVML_GPM_METRICS_GET_VERSION 1u

_Static_assert(sizeof(nvml_utilization) == 8, "nvmlUtilization_t");
_Static_assert(sizeof(nvml_memory_v1) == 24, "nvmlMemory_t");
_Static_assert(sizeof(nvml_memory_v2) == 40, "nvmlMemory_v2_t");
_Static_assert(NVML_MEMORY_V2_VERSION == 0x02000028u, "memory v2 version");
_Static_assert(sizeof(nvml_pci_info) == 68, "nvmlPciInfo_t");
_Static_assert(sizeof(nvml_process_info) == 24, "nvmlProcessInfo_t");
_Static_assert(sizeof(nvml_event_data) == 32, "nvmlEventData_t");
_Static_assert(sizeof(nvml_gpm_metric) == 40, "nvmlGpmMetric_t");
_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "dlsym casts");

enum { TEMP_GPU = 0, CLOCK_SM = 1, CLOCK_MEM = 2, PCIE_TX = 0, PCIE_RX = 1 };
enum { GPM_SM_UTIL = 2, GPM_SM_OCCUPANCY = 3, GPM_TENSOR = 5, GPM_DRAM = 10 };

typedef struct nvml_fns {
  nvml_ret (*init_v2)(void);
  nvml_ret (*shutdown)(void);
  const char *(*error_string)(nvml_ret);
  nvml_ret (*get_count_v2)(unsigned *);
  nvml_ret (*get_handle_by_index_v2)(unsigned, nvml_device *);
  nvml_ret (*get_name)(nvml_device, char *, unsigned);
  nvml_ret (*get_uuid)(nvml_device, char *, unsigned);
  nvml_ret (*get_pci_info_v3)(nvml_device, nvml_pci_info *);
  nvml_ret (*get_mig_mode)(nvml_device, unsigned *, unsigned *);
  nvml_ret (*get_utilization)(nvml_device, nvml_utilization *);
  nvml_ret (*get_memory_v2)(nvml_device, nvml_memory_v2 *);
  nvml_ret (*get_memory)(nvml_device, nvml_memory_v1 *);
  nvml_ret (*get_power)(nvml_device, unsigned *);
  nvml_ret (*get_energy)(nvml_device, unsigned long long *);
  nvml_ret (*get_temperature)(nvml_device, int, unsigned *);
  nvml_ret (*get_clock)(nvml_device, int, unsigned *);
  nvml_ret (*get_event_reasons)(nvml_device, unsigned long long *);
  nvml_ret (*get_throttle_reasons)(nvml_device, unsigned long long *);
  nvml_ret (*get_pcie)(nvml_device, int, unsigned *);
  nvml_ret (*compute_v3)(nvml_device, unsigned *, nvml_process_info *);
  nvml_ret (*compute_v2)(nvml_device, unsigned *, nvml_process_info *);
  nvml_ret (*graphics_v3)(nvml_device, unsigned *, nvml_process_info *);
  nvml_ret (*graphics_v2)(nvml_device, unsigned *, nvml_process_info *);
  nvml_ret (*event_set_create)(nvml_event_set *);
  nvml_ret (*register_events)(nvml_device, unsigned long long,
                              nvml_event_set);
  nvml_ret (*event_set_wait_v2)(nvml_event_set, nvml_event_data *,
                                unsigned);
  nvml_ret (*event_set_wait)(nvml_event_set, nvml_event_data *, unsigned);
  nvml_ret (*event_set_free)(nvml_event_set);
  nvml_ret (*gpm_query_support)(nvml_device, nvml_gpm_support *);
  nvml_ret (*gpm_sample_alloc)(nvml_gpm_sample *);
  nvml_ret (*gpm_sample_free)(nvml_gpm_sample);
  nvml_ret (*gpm_sample_get)(nvml_device, nvml_gpm_sample);
  nvml_ret (*gpm_metrics_get)(nvml_gpm_metrics_get *);
} nvml_fns;

/* ---- handle ---------------------------------------------------------- */

#define GPM_MIN_NS 100000000ull /* NVML wants >= 100 ms between samples */
#define MAX_PROC_ROWS 4096      /* hard cap on the process list buffer */
#define MAX_EVENT_POLLS 256     /* events drained per read */
#define NGPM 4

static const pp_gpu_metric gpm_metric[NGPM] = {
    PP_GPU_M_SM_ACTIVE, PP_GPU_M_SM_OCCUPANCY, PP_GPU_M_TENSOR_ACTIVE,
    PP_GPU_M_DRAM_BW};
static const unsigned gpm_id[NGPM] = {GPM_SM_UTIL, GPM_SM_OCCUPANCY,
                                      GPM_TENSOR, GPM_DRAM};

typedef struct gpu_dev {
  nvml_device dev;
  int usable, lost, mig;
  char name[96], uuid[96], pci_bus_id[32];
  char reason_gpu[PP_GPU_REASON_LEN];
  /* Sticky: unavailable for good (not supported, call missing); the
   * reason stays and the call is not made again. */
  int sticky[PP_GPU_NMETRICS];
  int available[PP_GPU_NMETRICS];
  char reason[PP_GPU_NMETRICS][PP_GPU_REASON_LEN];
  int mem_v1;         /* v2 missing or refused: use v1 */
  int old_reasons;    /* ClocksEventReasons missing: use ThrottleReasons */
  int compute_off, graphics_off; /* process list call unsupported */
  int compute_old, graphics_old; /* _v3 missing: use _v2 */
  int energy_have;
  unsigned long long energy_last_mj, energy_total_mj;
  int gpm_on, gpm_primed, gpm_cur;
  nvml_gpm_sample gpm[2];
  int gpm_alloced[2];
  uint64_t gpm_t_ns;
  int gpm_has[NGPM];
  double gpm_val[NGPM];
  char gpm_reason[NGPM][PP_GPU_REASON_LEN];
  int xid_on;
  int used_ever;
  unsigned long long reasons_seen, xid_total, xid_last;
} gpu_dev;

struct pp_collect_gpu {
  void *lib;
  int inited;
  nvml_fns fn;
  int n;
  gpu_dev d[PP_GPU_MAX];
  nvml_event_set events;
  nvml_process_info *pbuf;
  size_t pcap;
  nvml_gpm_metrics_get *mg;
  char reason[PP_GPU_REASON_LEN + 64];
};

uint64_t pp_collect_gpu_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char *const metric_names[PP_GPU_NMETRICS] = {
    [PP_GPU_M_UTIL] = "util",
    [PP_GPU_M_MEM] = "mem",
    [PP_GPU_M_POWER] = "power",
    [PP_GPU_M_ENERGY] = "energy",
    [PP_GPU_M_TEMP] = "temp",
    [PP_GPU_M_SM_CLOCK] = "sm_clock",
    [PP_GPU_M_MEM_CLOCK] = "mem_clock",
    [PP_GPU_M_CLOCK_REASONS] = "clock_reasons",
    [PP_GPU_M_PCIE] = "pcie",
    [PP_GPU_M_SM_ACTIVE] = "sm_active",
    [PP_GPU_M_SM_OCCUPANCY] = "sm_occupancy",
    [PP_GPU_M_TENSOR_ACTIVE] = "tensor_active",
    [PP_GPU_M_DRAM_BW] = "dram_bw",
    [PP_GPU_M_PROCS] = "procs",
    [PP_GPU_M_XID] = "xid",
};

const char *pp_gpu_metric_name(pp_gpu_metric m) {
  if ((int)m < 0 || m >= PP_GPU_NMETRICS)
    return "?";
  return metric_names[m];
}

/* ---- clock-event reasons -------------------------------------------- */

static const struct {
  uint64_t bit;
  const char *word;
} reason_words[] = {
    {0x4, "sw power cap"},
    {0x8, "hw slowdown"},
    {0x40, "hw thermal slowdown"},
    {0x20, "sw thermal slowdown"},
    {0x80, "hw power brake"},
    {0x1, "idle"},
    {0x2, "applications clocks setting"},
    {0x10, "sync boost"},
    {0x100, "display clock setting"},
};

char *pp_gpu_clock_reasons_words(uint64_t mask, char *buf, size_t n) {
  if (!buf || n == 0)
    return buf;
  buf[0] = '\0';
  if (mask == 0) {
    snprintf(buf, n, "none");
    return buf;
  }
  size_t len = 0;
  uint64_t known = 0;
  for (size_t i = 0; i < PP__ARRAY_LEN(reason_words); i++) {
    known |= reason_words[i].bit;
    if (!(mask & reason_words[i].bit))
      continue;
    int k = snprintf(buf + len, n - len, "%s%s", len ? ", " : "",
                     reason_words[i].word);
    if (k < 0 || (size_t)k >= n - len)
      return buf; /* truncated, still terminated */
    len += (size_t)k;
  }
  if (mask & ~known)
    snprintf(buf + len, n - len, "%sother 0x%llx", len ? ", " : "",
             (unsigned long long)(mask & ~known));
  return buf;
}

/* ---- errors ---------------------------------------------------------- */

static const char *own_error_string(nvml_ret rc) {
  switch (rc) {
  case NVML_SUCCESS: return "Success";
  case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
  case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
  case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
  case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
  case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
  case NVML_ERROR_NOT_FOUND: return "Not Found";
  case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
  case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
  case NVML_ERROR_TIMEOUT: return "Timeout";
  case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
  case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
  case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
  case NVML_ERROR_OPERATING_SYSTEM: return "Operating System Error";
  case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
    return "RM has detected an NVML/RM version mismatch";
  case NVML_ERROR_NO_DATA: return "No Data";
  case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
    return "Argument Version Mismatch";
  case NVML_ERROR_DEPRECATED: return "Deprecated";
  case NVML_ERROR_NOT_READY: return "Not Ready";
  case NVML_ERROR_GPU_NOT_FOUND: return "GPU Not Found";
  default: return "Unknown Error";
  }
}

static const char *err_str(const pp_collect_gpu *g, nvml_ret rc) {
  const char *s = g->fn.error_string ? g->fn.error_string(rc) : NULL;
  return s && *s ? s : own_error_string(rc);
}

static void fmt(char *dst, size_t n, const char *f, ...)
    __attribute__((format(printf, 3, 4)));
static void fmt(char *dst, size_t n, const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  int k = vsnprintf(dst, n, f, ap);
  va_end(ap);
  if (k < 0 && n)
    dst[0] = '\0';
}

/* Words for an NVML error in a metric's reason. */
static void describe(const pp_collect_gpu *g, nvml_ret rc, const char *call,
                     char *dst, size_t n) {
  switch (rc) {
  case NVML_ERROR_NOT_SUPPORTED:
    fmt(dst, n, "not supported on this GPU");
    break;
  case NVML_ERROR_NO_PERMISSION:
    fmt(dst, n, "permission denied");
    break;
  case NVML_ERROR_FUNCTION_NOT_FOUND:
    fmt(dst, n, "not provided by this driver's NVML (%s missing)", call);
    break;
  case NVML_ERROR_UNINITIALIZED:
    fmt(dst, n, "NVML not initialized (%s)", call);
    break;
  case NVML_ERROR_NOT_FOUND:
    fmt(dst, n, "not found (%s)", call);
    break;
  default:
    fmt(dst, n, "%s failed: %s (NVML error %d)", call, err_str(g, rc), rc);
    break;
  }
}

static void set_reason(gpu_dev *d, pp_gpu_metric m, const char *why) {
  d->available[m] = 0;
  fmt(d->reason[m], sizeof d->reason[m], "%s", why);
}

static void mark_lost(pp_collect_gpu *g, gpu_dev *d, const char *call) {
  d->lost = 1;
  d->usable = 0;
  fmt(d->reason_gpu, sizeof d->reason_gpu,
      "GPU is lost (fell off the bus or stopped responding) at %s", call);
  for (int m = 0; m < PP_GPU_NMETRICS; m++) {
    d->sticky[m] = 1;
    set_reason(d, (pp_gpu_metric)m, "GPU lost");
  }
}

/* Record the outcome of `call` for metric m. Returns 1 on success. On
 * GPU_IS_LOST the GPU is retired; NOT_SUPPORTED and FUNCTION_NOT_FOUND
 * make the metric sticky. */
static int check(pp_collect_gpu *g, gpu_dev *d, pp_gpu_metric m,
                 const char *call, nvml_ret rc) {
  if (rc == NVML_SUCCESS) {
    d->available[m] = 1;
    d->reason[m][0] = '\0';
    return 1;
  }
  if (rc == NVML_ERROR_GPU_IS_LOST) {
    mark_lost(g, d, call);
    return 0;
  }
  char why[PP_GPU_REASON_LEN];
  describe(g, rc, call, why, sizeof why);
  set_reason(d, m, why);
  if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND)
    d->sticky[m] = 1;
  return 0;
}

#define CALL(fp, ...)                                                       \
  ((fp) ? (fp)(__VA_ARGS__) : NVML_ERROR_FUNCTION_NOT_FOUND)

/* ---- open ------------------------------------------------------------ */

static void resolve(void *lib, const char *name, void *dst, size_t n) {
  void *p = dlsym(lib, name);
  memcpy(dst, &p, n);
}

#define RESOLVE(field, name)                                                \
  resolve(g->lib, name, &g->fn.field, sizeof g->fn.field)

static void resolve_all(pp_collect_gpu *g) {
  RESOLVE(init_v2, "nvmlInit_v2");
  RESOLVE(shutdown, "nvmlShutdown");
  RESOLVE(error_string, "nvmlErrorString");
  RESOLVE(get_count_v2, "nvmlDeviceGetCount_v2");
  RESOLVE(get_handle_by_index_v2, "nvmlDeviceGetHandleByIndex_v2");
  RESOLVE(get_name, "nvmlDeviceGetName");
  RESOLVE(get_uuid, "nvmlDeviceGetUUID");
  RESOLVE(get_pci_info_v3, "nvmlDeviceGetPciInfo_v3");
  RESOLVE(get_mig_mode, "nvmlDeviceGetMigMode");
  RESOLVE(get_utilization, "nvmlDeviceGetUtilizationRates");
  RESOLVE(get_memory_v2, "nvmlDeviceGetMemoryInfo_v2");
  RESOLVE(get_memory, "nvmlDeviceGetMemoryInfo");
  RESOLVE(get_power, "nvmlDeviceGetPowerUsage");
  RESOLVE(get_energy, "nvmlDeviceGetTotalEnergyConsumption");
  RESOLVE(get_temperature, "nvmlDeviceGetTemperature");
  RESOLVE(get_clock, "nvmlDeviceGetClockInfo");
  RESOLVE(get_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons");
  RESOLVE(get_throttle_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  RESOLVE(get_pcie, "nvmlDeviceGetPcieThroughput");
  RESOLVE(compute_v3, "nvmlDeviceGetComputeRunningProcesses_v3");
  RESOLVE(compute_v2, "nvmlDeviceGetComputeRunningProcesses_v2");
  RESOLVE(graphics_v3, "nvmlDeviceGetGraphicsRunningProcesses_v3");
  RESOLVE(graphics_v2, "nvmlDeviceGetGraphicsRunningProcesses_v2");
  RESOLVE(event_set_create, "nvmlEventSetCreate");
  RESOLVE(register_events, "nvmlDeviceRegisterEvents");
  RESOLVE(event_set_wait_v2, "nvmlEventSetWait_v2");
  RESOLVE(event_set_wait, "nvmlEventSetWait");
  RESOLVE(event_set_free, "nvmlEventSetFree");
  RESOLVE(gpm_query_support, "nvmlGpmQueryDeviceSupport");
  RESOLVE(gpm_sample_alloc, "nvmlGpmSampleAlloc");
  RESOLVE(gpm_sample_free, "nvmlGpmSampleFree");
  RESOLVE(gpm_sample_get, "nvmlGpmSampleGet");
  RESOLVE(gpm_metrics_get, "nvmlGpmMetricsGet");
}

static void copy_str(char *dst, size_t n, const char *src) {
  fmt(dst, n, "%s", src);
}

static void open_identity(pp_collect_gpu *g, gpu_dev *d) {
  char buf[128];
  memset(buf, 0, sizeof buf);
  if (CALL(g->fn.get_name, d->dev, buf, 96) == NVML_SUCCESS) {
    buf[95] = '\0';
    copy_str(d->name, sizeof d->name, buf);
  }
  memset(buf, 0, sizeof buf);
  if (CALL(g->fn.get_uuid, d->dev, buf, 96) == NVML_SUCCESS) {
    buf[95] = '\0';
    copy_str(d->uuid, sizeof d->uuid, buf);
  }
  nvml_pci_info pci;
  memset(&pci, 0, sizeof pci);
  if (CALL(g->fn.get_pci_info_v3, d->dev, &pci) == NVML_SUCCESS) {
    pci.bus_id[sizeof pci.bus_id - 1] = '\0';
    copy_str(d->pci_bus_id, sizeof d->pci_bus_id, pci.bus_id);
  }
}

static void open_mig(pp_collect_gpu *g, gpu_dev *d) {
  unsigned cur = 0, pending = 0;
  nvml_ret rc = CALL(g->fn.get_mig_mode, d->dev, &cur, &pending);
  if (rc == NVML_ERROR_GPU_IS_LOST) {
    mark_lost(g, d, "nvmlDeviceGetMigMode");
  } else if (rc == NVML_SUCCESS && cur == 1) {
    d->mig = 1;
    d->sticky[PP_GPU_M_UTIL] = 1;
    set_reason(d, PP_GPU_M_UTIL,
               "MIG enabled: per-instance utilization not available "
               "through NVML");
  }
}

static void open_energy(pp_collect_gpu *g, gpu_dev *d) {
  unsigned long long mj = 0;
  nvml_ret rc = CALL(g->fn.get_energy, d->dev, &mj);
  if (rc == NVML_SUCCESS) {
    d->energy_have = 1;
    d->energy_last_mj = mj;
  } else {
    check(g, d, PP_GPU_M_ENERGY, "nvmlDeviceGetTotalEnergyConsumption", rc);
  }
}

static void gpm_all(gpu_dev *d, const char *why, int sticky) {
  for (int k = 0; k < NGPM; k++) {
    set_reason(d, gpm_metric[k], why);
    d->sticky[gpm_metric[k]] = sticky;
  }
}

static void open_gpm(pp_collect_gpu *g, gpu_dev *d, uint64_t now) {
  const nvml_fns *f = &g->fn;
  const char *missing =
      !f->gpm_query_support  ? "nvmlGpmQueryDeviceSupport"
      : !f->gpm_sample_alloc ? "nvmlGpmSampleAlloc"
      : !f->gpm_sample_free  ? "nvmlGpmSampleFree"
      : !f->gpm_sample_get   ? "nvmlGpmSampleGet"
      : !f->gpm_metrics_get  ? "nvmlGpmMetricsGet"
                             : NULL;
  char why[PP_GPU_REASON_LEN];
  if (missing) {
    describe(g, NVML_ERROR_FUNCTION_NOT_FOUND, missing, why, sizeof why);
    gpm_all(d, why, 1);
    return;
  }
  nvml_gpm_support sup = {.version = NVML_GPM_SUPPORT_VERSION};
  nvml_ret rc = f->gpm_query_support(d->dev, &sup);
  if (rc == NVML_ERROR_GPU_IS_LOST) {
    mark_lost(g, d, "nvmlGpmQueryDeviceSupport");
    return;
  }
  if (rc != NVML_SUCCESS || !sup.is_supported_device) {
    if (rc == NVML_SUCCESS || rc == NVML_ERROR_NOT_SUPPORTED)
      fmt(why, sizeof why, "not supported on this GPU (GPM needs Hopper or "
                           "newer)");
    else
      describe(g, rc, "nvmlGpmQueryDeviceSupport", why, sizeof why);
    gpm_all(d, why, 1);
    return;
  }
  if (!g->mg) {
    g->mg = pp__calloc(1, sizeof *g->mg);
    if (!g->mg) {
      gpm_all(d, "out of memory", 1);
      return;
    }
  }
  for (int i = 0; i < 2; i++) {
    rc = f->gpm_sample_alloc(&d->gpm[i]);
    if (rc != NVML_SUCCESS) {
      describe(g, rc, "nvmlGpmSampleAlloc", why, sizeof why);
      gpm_all(d, why, 1);
      return;
    }
    d->gpm_alloced[i] = 1;
  }
  d->gpm_on = 1;
  d->gpm_cur = 0;
  rc = f->gpm_sample_get(d->dev, d->gpm[0]);
  if (rc == NVML_ERROR_GPU_IS_LOST) {
    mark_lost(g, d, "nvmlGpmSampleGet");
    return;
  }
  if (rc == NVML_SUCCESS) {
    d->gpm_primed = 1;
    d->gpm_t_ns = now;
  }
  for (int k = 0; k < NGPM; k++)
    fmt(d->gpm_reason[k], sizeof d->gpm_reason[k],
        "warming up: GPM needs two samples 100 ms apart");
}

static void open_xid(pp_collect_gpu *g) {
  const nvml_fns *f = &g->fn;
  const char *missing = !f->event_set_create ? "nvmlEventSetCreate"
                        : !f->register_events ? "nvmlDeviceRegisterEvents"
                        : !f->event_set_wait_v2 && !f->event_set_wait
                            ? "nvmlEventSetWait_v2"
                            : NULL;
  char why[PP_GPU_REASON_LEN];
  nvml_ret rc = NVML_SUCCESS;
  if (!missing) {
    rc = f->event_set_create(&g->events);
    if (rc != NVML_SUCCESS)
      g->events = NULL;
  }
  for (int i = 0; i < g->n; i++) {
    gpu_dev *d = &g->d[i];
    if (!d->usable)
      continue;
    d->sticky[PP_GPU_M_XID] = 1;
    if (missing) {
      describe(g, NVML_ERROR_FUNCTION_NOT_FOUND, missing, why, sizeof why);
      set_reason(d, PP_GPU_M_XID, why);
      continue;
    }
    if (!g->events) {
      describe(g, rc, "nvmlEventSetCreate", why, sizeof why);
      set_reason(d, PP_GPU_M_XID, why);
      continue;
    }
    nvml_ret r = f->register_events(d->dev, NVML_EVENT_XID_CRITICAL_ERROR,
                                    g->events);
    if (r == NVML_ERROR_GPU_IS_LOST) {
      mark_lost(g, d, "nvmlDeviceRegisterEvents");
      continue;
    }
    if (r != NVML_SUCCESS) {
      describe(g, r, "nvmlDeviceRegisterEvents", why, sizeof why);
      set_reason(d, PP_GPU_M_XID, why);
      continue;
    }
    d->xid_on = 1;
    d->sticky[PP_GPU_M_XID] = 0;
  }
}

static void init_failed(pp_collect_gpu *g, nvml_ret rc) {
  switch (rc) {
  case NVML_ERROR_DRIVER_NOT_LOADED:
    fmt(g->reason, sizeof g->reason,
        "unavailable: NVIDIA driver not loaded (nvmlInit_v2: %s)",
        err_str(g, rc));
    break;
  case NVML_ERROR_NO_PERMISSION:
    fmt(g->reason, sizeof g->reason,
        "unavailable: permission denied talking to the NVIDIA driver");
    break;
  case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
    fmt(g->reason, sizeof g->reason,
        "unavailable: NVML and NVIDIA driver versions differ (reload the "
        "driver or reboot)");
    break;
  default:
    fmt(g->reason, sizeof g->reason,
        "unavailable: nvmlInit_v2 failed: %s (NVML error %d)",
        err_str(g, rc), rc);
    break;
  }
}

static void open_devices(pp_collect_gpu *g, uint64_t now) {
  unsigned count = 0;
  nvml_ret rc = CALL(g->fn.get_count_v2, &count);
  if (rc != NVML_SUCCESS) {
    fmt(g->reason, sizeof g->reason,
        "unavailable: nvmlDeviceGetCount_v2 failed: %s (NVML error %d)",
        err_str(g, rc), rc);
    return;
  }
  if (count == 0) {
    fmt(g->reason, sizeof g->reason, "unavailable: no NVIDIA GPU found");
    return;
  }
  g->n = count > PP_GPU_MAX ? PP_GPU_MAX : (int)count;
  int usable = 0;
  for (int i = 0; i < g->n; i++) {
    gpu_dev *d = &g->d[i];
    rc = CALL(g->fn.get_handle_by_index_v2, (unsigned)i, &d->dev);
    if (rc != NVML_SUCCESS) {
      char why[PP_GPU_REASON_LEN];
      describe(g, rc, "nvmlDeviceGetHandleByIndex_v2", why, sizeof why);
      if (rc == NVML_ERROR_GPU_IS_LOST)
        mark_lost(g, d, "nvmlDeviceGetHandleByIndex_v2");
      else
        for (int m = 0; m < PP_GPU_NMETRICS; m++) {
          d->sticky[m] = 1;
          set_reason(d, (pp_gpu_metric)m, "GPU not opened");
        }
      fmt(d->reason_gpu, sizeof d->reason_gpu, "cannot open GPU %d: %s", i,
          why);
      d->dev = NULL;
      continue;
    }
    d->usable = 1;
    open_identity(g, d);
    open_mig(g, d);
    if (d->usable)
      open_energy(g, d);
    if (d->usable)
      open_gpm(g, d, now);
    usable += d->usable;
  }
  open_xid(g);
  if (!usable)
    fmt(g->reason, sizeof g->reason, "unavailable: no usable GPU (%s)",
        g->d[0].reason_gpu);
}

pp_collect_gpu *pp_collect_gpu_open(const char *libpath) {
  pp_collect_gpu *g = pp__calloc(1, sizeof *g);
  if (!g) {
    errno = ENOMEM;
    return NULL;
  }
  uint64_t now = pp_collect_gpu_now_ns();
  if (libpath && *libpath) {
    g->lib = dlopen(libpath, RTLD_NOW | RTLD_LOCAL);
  } else {
    g->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!g->lib)
      g->lib = dlopen("libnvidia-ml.so", RTLD_NOW | RTLD_LOCAL);
  }
  if (!g->lib) {
    fmt(g->reason, sizeof g->reason,
        "unavailable: no NVIDIA driver (%s not found)",
        libpath && *libpath ? libpath : "libnvidia-ml.so.1");
    return g;
  }
  resolve_all(g);
  if (!g->fn.init_v2) {
    fmt(g->reason, sizeof g->reason,
        "unavailable: NVML library without nvmlInit_v2");
    return g;
  }
  nvml_ret rc = g->fn.init_v2();
  if (rc != NVML_SUCCESS) {
    init_failed(g, rc);
    return g;
  }
  g->inited = 1;
  open_devices(g, now);
  return g;
}

const char *pp_collect_gpu_reason(const pp_collect_gpu *g) {
  if (!g)
    return "unavailable: out of memory";
  return g->reason[0] ? g->reason : NULL;
}

int pp_collect_gpu_count(const pp_collect_gpu *g) {
  return g ? g->n : 0;
}

/* ---- read ------------------------------------------------------------ */

static void read_util(pp_collect_gpu *g, gpu_dev *d, pp_gpu_dev *o) {
  nvml_utilization u = {0, 0};
  if (check(g, d, PP_GPU_M_UTIL, "nvmlDeviceGetUtilizationRates",
            CALL(g->fn.get_utilization, d->dev, &u))) {
    o->util_gpu_pct = u.gpu;
    o->util_mem_pct = u.memory;
  }
}

static void read_mem(pp_collect_gpu *g, gpu_dev *d, pp_gpu_dev *o) {
  if (!d->mem_v1) {
    nvml_memory_v2 m;
    memset(&m, 0, sizeof m);
    m.version = NVML_MEMORY_V2_VERSION;
    nvml_ret rc = CALL(g->fn.get_memory_v2, d->dev, &m);
    if (rc == NVML_SUCCESS) {
      check(g, d, PP_GPU_M_MEM, "nvmlDeviceGetMemoryInfo_v2", rc);
      o->mem_total_bytes = m.total;
      o->mem_used_bytes = m.used;
      o->mem_free_bytes = m.free;
      o->mem_reserved_bytes = m.reserved;
      o->mem_has_reserved = 1;
      return;
    }
    if (rc == NVML_ERROR_GPU_IS_LOST) {
      mark_lost(g, d, "nvmlDeviceGetMemoryInfo_v2");
      return;
    }
    if (rc != NVML_ERROR_FUNCTION_NOT_FOUND &&
        rc != NVML_ERROR_ARGUMENT_VERSION_MISMATCH &&
        rc != NVML_ERROR_NOT_SUPPORTED) {
      check(g, d, PP_GPU_M_MEM, "nvmlDeviceGetMemoryInfo_v2", rc);
      return;
    }
    d->mem_v1 = 1; /* the driver predates v2: v1 from now on */
  }
  nvml_memory_v1 m;
  memset(&m, 0, sizeof m);
  if (check(g, d, PP_GPU_M_MEM, "nvmlDeviceGetMemoryInfo",
            CALL(g->fn.get_memory, d->dev, &m))) {
    o->mem_total_bytes = m.total;
    o->mem_used_bytes = m.used;
    o->mem_free_bytes = m.free;
  }
}

static void read_energy(pp_collect_gpu *g, gpu_dev *d, pp_gpu_dev *o) {
  unsigned long long mj = 0;
  if (!check(g, d, PP_GPU_M_ENERGY, "nvmlDeviceGetTotalEnergyConsumption",
             CALL(g->fn.get_energy, d->dev, &mj)))
    return;
  if (!d->energy_have) { /* baseline failed at open: start here */
    d->energy_have = 1;
    d->energy_last_mj = mj;
  }
  if (mj >= d->energy_last_mj)
    d->energy_total_mj += mj - d->energy_last_mj;
  /* A smaller value means the counter restarted (driver reload): keep
   * the total, rebase. */
  d->energy_last_mj = mj;
  o->energy_j = (double)d->energy_total_mj / 1000.0;
}

static void read_temp(pp_collect_gpu *g, gpu_dev *d, pp_gpu_dev *o) {
  unsigned c = 0;
  if (!check(g, d, PP_GPU_M_TEMP, "nvmlDeviceGetTemperature",
             CALL(g->fn.get_temperature, d->dev, TEMP_GPU, &c)))
    return;
  if (c > 200) {
    set_reason(d, PP_GPU_M_TEMP, "implausible reading (> 200 C) discarded");
    return;
  }
  o->temp_c = c;
}

static void read_reasons(pp_collect_gpu *g, gpu_dev *d, pp_gpu_dev *o) {
  unsigned long long mask = 0;
  nvml_ret rc = NVML_ERROR_FUNCTION_NOT_FOUND;
  const char *call = "nvmlDeviceGetCurrentClocksEventReasons";
  if (!d->old_reasons) {
    rc = CALL(g->fn.get_event_reasons, d->dev, &mask);
    if (rc == NVML_ERROR_FUNCTION_NOT_FOUND)
      d->old_reasons = 1;
  }
  if (d->old_reasons) {
    call = "nvmlDeviceGetCurrentClocksThrottleReasons";
    rc = CALL(g->fn.get_throttle_reasons, d->dev, &mask);
  }
  if (!check(g, d, PP_GPU_M_CLOCK_REASONS, call, rc))
    return;
  o->clock_reasons = mask;
  d->reasons_seen |= mask;
  pp_gpu_clock_reasons_words(mask, o->clock_reasons_words,
                             sizeof o->clock_reasons_words);
}

static void read_pcie(pp_collect_gpu *g, gpu_dev *d, pp_gpu_dev *o) {
  unsigned tx = 0, rx = 0;
  if (!check(g, d, PP_GPU_M_PCIE, "nvmlDeviceGetPcieThroughput",
             CALL(g->fn.get_pcie, d->dev, PCIE_TX, &tx)))
    return;
  if (!check(g, d, PP_GPU_M_PCIE, "nvmlDeviceGetPcieThroughput",
             CALL(g->fn.get_pcie, d->dev, PCIE_RX, &rx)))
    return;
  o->pcie_tx_bytes_per_s = (double)tx * 1024.0;
  o->pcie_rx_bytes_per_s = (double)rx * 1024.0;
}

static void read_gpm(pp_collect_gpu *g, gpu_dev *d, uint64_t now) {
  char why[PP_GPU_REASON_LEN];
  if (!d->gpm_primed) {
    nvml_ret rc = g->fn.gpm_sample_get(d->dev, d->gpm[d->gpm_cur]);
    if (rc == NVML_ERROR_GPU_IS_LOST) {
      mark_lost(g, d, "nvmlGpmSampleGet");
      return;
    }
    if (rc != NVML_SUCCESS) {
      describe(g, rc, "nvmlGpmSampleGet", why, sizeof why);
      gpm_all(d, why, 0);
      return;
    }
    d->gpm_primed = 1;
    d->gpm_t_ns = now;
  } else if (now >= d->gpm_t_ns + GPM_MIN_NS) {
    int next = d->gpm_cur ^ 1;
    nvml_ret rc = g->fn.gpm_sample_get(d->dev, d->gpm[next]);
    if (rc == NVML_ERROR_GPU_IS_LOST) {
      mark_lost(g, d, "nvmlGpmSampleGet");
      return;
    }
    if (rc != NVML_SUCCESS) {
      describe(g, rc, "nvmlGpmSampleGet", why, sizeof why);
      gpm_all(d, why, 0);
      return;
    }
    nvml_gpm_metrics_get *mg = g->mg;
    memset(mg, 0, sizeof *mg);
    mg->version = NVML_GPM_METRICS_GET_VERSION;
    mg->num_metrics = NGPM;
    mg->sample1 = d->gpm[d->gpm_cur];
    mg->sample2 = d->gpm[next];
    for (int k = 0; k < NGPM; k++)
      mg->metrics[k].metric_id = gpm_id[k];
    d->gpm_cur = next;
    d->gpm_t_ns = now;
    rc = g->fn.gpm_metrics_get(mg);
    if (rc == NVML_ERROR_GPU_IS_LOST) {
      mark_lost(g, d, "nvmlGpmMetricsGet");
      return;
    }
    for (int k = 0; k < NGPM; k++) {
      nvml_ret r = rc != NVML_SUCCESS ? rc : mg->metrics[k].ret;
      double v = mg->metrics[k].value;
      d->gpm_has[k] = 0;
      if (r == NVML_SUCCESS && v >= 0 && v <= 100.0001) {
        d->gpm_has[k] = 1;
        d->gpm_val[k] = v > 100 ? 100 : v;
      } else if (r == NVML_SUCCESS) {
        fmt(d->gpm_reason[k], sizeof d->gpm_reason[k],
            "implausible GPM value discarded");
      } else {
        describe(g, r, "nvmlGpmMetricsGet", d->gpm_reason[k],
                 sizeof d->gpm_reason[k]);
      }
    }
  }
  /* Between GPM samples the last interval's figures stand. */
  for (int k = 0; k < NGPM; k++) {
    if (d->gpm_has[k]) {
      d->available[gpm_metric[k]] = 1;
      d->reason[gpm_metric[k]][0] = '\0';
    } else {
      set_reason(d, gpm_metric[k], d->gpm_reason[k]);
    }
  }
}

/* Fill g->pbuf with one process list; *n gets the rows. Grows the buffer
 * on INSUFFICIENT_SIZE (with slack, as processes may start in between). */
static nvml_ret list_procs(pp_collect_gpu *g, gpu_dev *d,
                           nvml_ret (*fn)(nvml_device, unsigned *,
                                          nvml_process_info *),
                           size_t *n) {
  *n = 0;
  if (!fn)
    return NVML_ERROR_FUNCTION_NOT_FOUND;
  for (int tries = 0; tries < 6; tries++) {
    unsigned count = (unsigned)g->pcap;
    nvml_ret rc = fn(d->dev, &count, g->pcap ? g->pbuf : NULL);
    if (rc == NVML_SUCCESS) {
      *n = PP__MIN((size_t)count, g->pcap);
      return rc;
    }
    if (rc != NVML_ERROR_INSUFFICIENT_SIZE)
      return rc;
    if (g->pcap >= MAX_PROC_ROWS)
      return rc;
    size_t need = (size_t)count + (size_t)count / 4 + 8;
    if (need <= g->pcap)
      need = g->pcap * 2;
    if (need > MAX_PROC_ROWS)
      need = MAX_PROC_ROWS;
    void *p = pp__realloc(g->pbuf, need * sizeof *g->pbuf);
    if (!p)
      return NVML_ERROR_INSUFFICIENT_SIZE;
    g->pbuf = p;
    g->pcap = need;
  }
  return NVML_ERROR_INSUFFICIENT_SIZE;
}

static int pid_wanted(pid_t pid, const pid_t *pids, size_t npids) {
  for (size_t i = 0; i < npids; i++)
    if (pids[i] == pid)
      return 1;
  return 0;
}

static void add_proc(pp_gpu_sample *out, int gpu, pid_t pid,
                     unsigned long long bytes) {
  int known = bytes != NVML_VALUE_NOT_AVAILABLE;
  for (size_t i = 0; i < out->nprocs; i++) {
    pp_gpu_proc *p = &out->procs[i];
    if (p->gpu == gpu && p->pid == pid) { /* compute and graphics: max */
      if (known && (!p->mem_known || bytes > p->used_bytes)) {
        p->used_bytes = bytes;
        p->mem_known = 1;
      }
      return;
    }
  }
  if (out->nprocs >= PP_GPU_MAX_PROCS) {
    out->procs_dropped++;
    return;
  }
  pp_gpu_proc *p = &out->procs[out->nprocs++];
  p->gpu = gpu;
  p->pid = pid;
  p->mem_known = known;
  p->used_bytes = known ? bytes : 0;
}

static void read_procs(pp_collect_gpu *g, gpu_dev *d, int idx,
                       const pid_t *pids, size_t npids, pp_gpu_sample *out) {
  static const char *const names[2][2] = {
      {"nvmlDeviceGetComputeRunningProcesses_v3",
       "nvmlDeviceGetComputeRunningProcesses_v2"},
      {"nvmlDeviceGetGraphicsRunningProcesses_v3",
       "nvmlDeviceGetGraphicsRunningProcesses_v2"}};
  nvml_ret first_rc = NVML_SUCCESS;
  const char *first_call = NULL;
  int ok = 0;
  for (int kind = 0; kind < 2; kind++) {
    int *off = kind ? &d->graphics_off : &d->compute_off;
    int *old = kind ? &d->graphics_old : &d->compute_old;
    if (*off)
      continue;
    nvml_ret (*v3)(nvml_device, unsigned *, nvml_process_info *) =
        kind ? g->fn.graphics_v3 : g->fn.compute_v3;
    nvml_ret (*v2)(nvml_device, unsigned *, nvml_process_info *) =
        kind ? g->fn.graphics_v2 : g->fn.compute_v2;
    if (*old || !v3)
      v3 = NULL;
    const char *call = names[kind][v3 ? 0 : 1];
    size_t n = 0;
    nvml_ret rc = list_procs(g, d, v3 ? v3 : v2, &n);
    if (rc == NVML_ERROR_FUNCTION_NOT_FOUND && v3 && v2) {
      *old = 1; /* this NVML lacks _v3: _v2 from now on */
      call = names[kind][1];
      rc = list_procs(g, d, v2, &n);
    }
    if (rc == NVML_ERROR_GPU_IS_LOST) {
      mark_lost(g, d, call);
      return;
    }
    if (rc != NVML_SUCCESS) {
      if (rc == NVML_ERROR_NOT_SUPPORTED ||
          rc == NVML_ERROR_FUNCTION_NOT_FOUND)
        *off = 1;
      if (!first_call) {
        first_call = call;
        first_rc = rc;
      }
      continue;
    }
    ok = 1;
    for (size_t i = 0; i < n; i++) {
      const nvml_process_info *p = &g->pbuf[i];
      if (pid_wanted((pid_t)p->pid, pids, npids))
        add_proc(out, idx, (pid_t)p->pid, p->used_gpu_memory);
    }
  }
  if (ok) {
    d->available[PP_GPU_M_PROCS] = 1;
    d->reason[PP_GPU_M_PROCS][0] = '\0';
  } else if (first_call) {
    char why[PP_GPU_REASON_LEN];
    if (first_rc == NVML_ERROR_INSUFFICIENT_SIZE)
      fmt(why, sizeof why, "process list kept growing (or out of memory)");
    else
      describe(g, first_rc, first_call, why, sizeof why);
    set_reason(d, PP_GPU_M_PROCS, why);
    if (d->compute_off && d->graphics_off)
      d->sticky[PP_GPU_M_PROCS] = 1;
  }
}

static int gpu_of_device(const pp_collect_gpu *g, nvml_device dev) {
  for (int i = 0; i < g->n; i++)
    if (g->d[i].dev && g->d[i].dev == dev)
      return i;
  return -1;
}

static void read_xids(pp_collect_gpu *g, pp_gpu_sample *out) {
  if (!g->events)
    return;
  int any = 0;
  for (int i = 0; i < g->n; i++)
    any |= g->d[i].xid_on && g->d[i].usable;
  if (!any)
    return;
  for (int k = 0; k < MAX_EVENT_POLLS; k++) {
    nvml_event_data ev;
    memset(&ev, 0, sizeof ev);
    nvml_ret rc = g->fn.event_set_wait_v2
                      ? g->fn.event_set_wait_v2(g->events, &ev, 0)
                      : g->fn.event_set_wait(g->events, &ev, 0);
    if (rc != NVML_SUCCESS)
      break; /* TIMEOUT: nothing pending */
    if (!(ev.event_type & NVML_EVENT_XID_CRITICAL_ERROR))
      continue;
    int gpu = gpu_of_device(g, ev.device);
    if (gpu >= 0) {
      g->d[gpu].xid_total++;
      g->d[gpu].xid_last = ev.event_data;
    }
    if (out->nxids >= PP_GPU_MAX_XIDS) {
      out->xids_dropped++;
      continue;
    }
    out->xids[out->nxids].gpu = gpu;
    out->xids[out->nxids].xid = ev.event_data;
    out->nxids++;
  }
}

static void read_one(pp_collect_gpu *g, int i, uint64_t now,
                     const pid_t *pids, size_t npids, pp_gpu_sample *out) {
  gpu_dev *d = &g->d[i];
  pp_gpu_dev *o = &out->gpu[i];
  for (int m = 0; m < PP_GPU_NMETRICS; m++)
    if (!d->sticky[m])
      set_reason(d, (pp_gpu_metric)m, "not read");
  if (d->usable && !d->sticky[PP_GPU_M_UTIL])
    read_util(g, d, o);
  if (d->usable && !d->sticky[PP_GPU_M_MEM])
    read_mem(g, d, o);
  if (d->usable && !d->sticky[PP_GPU_M_POWER]) {
    unsigned mw = 0;
    if (check(g, d, PP_GPU_M_POWER, "nvmlDeviceGetPowerUsage",
              CALL(g->fn.get_power, d->dev, &mw)))
      o->power_w = mw / 1000.0;
  }
  if (d->usable && !d->sticky[PP_GPU_M_ENERGY])
    read_energy(g, d, o);
  if (d->usable && !d->sticky[PP_GPU_M_TEMP])
    read_temp(g, d, o);
  if (d->usable && !d->sticky[PP_GPU_M_SM_CLOCK]) {
    unsigned mhz = 0;
    if (check(g, d, PP_GPU_M_SM_CLOCK, "nvmlDeviceGetClockInfo",
              CALL(g->fn.get_clock, d->dev, CLOCK_SM, &mhz)))
      o->sm_clock_mhz = mhz;
  }
  if (d->usable && !d->sticky[PP_GPU_M_MEM_CLOCK]) {
    unsigned mhz = 0;
    if (check(g, d, PP_GPU_M_MEM_CLOCK, "nvmlDeviceGetClockInfo",
              CALL(g->fn.get_clock, d->dev, CLOCK_MEM, &mhz)))
      o->mem_clock_mhz = mhz;
  }
  if (d->usable && !d->sticky[PP_GPU_M_CLOCK_REASONS])
    read_reasons(g, d, o);
  if (d->usable && !d->sticky[PP_GPU_M_PCIE])
    read_pcie(g, d, o);
  if (d->usable && d->gpm_on)
    read_gpm(g, d, now);
  if (d->usable && !d->sticky[PP_GPU_M_PROCS]) {
    if (npids)
      read_procs(g, d, i, pids, npids, out);
    else
      set_reason(d, PP_GPU_M_PROCS, "no process given");
  }
  if (d->usable && d->xid_on) {
    d->available[PP_GPU_M_XID] = 1;
    d->reason[PP_GPU_M_XID][0] = '\0';
  }
}

static void publish(const pp_collect_gpu *g, int i, pp_gpu_sample *out) {
  const gpu_dev *d = &g->d[i];
  pp_gpu_dev *o = &out->gpu[i];
  o->index = i;
  copy_str(o->name, sizeof o->name, d->name);
  copy_str(o->uuid, sizeof o->uuid, d->uuid);
  copy_str(o->pci_bus_id, sizeof o->pci_bus_id, d->pci_bus_id);
  o->usable = d->usable;
  o->lost = d->lost;
  o->mig = d->mig;
  copy_str(o->reason_gpu, sizeof o->reason_gpu, d->reason_gpu);
  for (int m = 0; m < PP_GPU_NMETRICS; m++) {
    o->available[m] = d->usable && d->available[m];
    if (o->available[m])
      o->reason[m][0] = '\0';
    else
      copy_str(o->reason[m], sizeof o->reason[m],
               d->reason[m][0] ? d->reason[m] : "not read");
  }
  o->used_by_run_ever = d->used_ever;
  o->clock_reasons_seen = d->reasons_seen;
  o->xid_total = d->xid_total;
  o->xid_last = d->xid_last;
  if (d->available[PP_GPU_M_SM_ACTIVE])
    o->sm_active_pct = d->gpm_val[0];
  if (d->available[PP_GPU_M_SM_OCCUPANCY])
    o->sm_occupancy_pct = d->gpm_val[1];
  if (d->available[PP_GPU_M_TENSOR_ACTIVE])
    o->tensor_active_pct = d->gpm_val[2];
  if (d->available[PP_GPU_M_DRAM_BW])
    o->dram_bw_pct = d->gpm_val[3];
}

int pp_collect_gpu_read_at(pp_collect_gpu *g, uint64_t now_ns,
                           const pid_t *pids, size_t npids,
                           pp_gpu_sample *out) {
  if (!g || !out || (npids && !pids)) {
    errno = EINVAL;
    return -1;
  }
  memset(out, 0, sizeof *out);
  out->t_ns = now_ns;
  if (g->reason[0] && g->n == 0)
    return 0;
  out->ngpus = g->n;
  for (int i = 0; i < g->n; i++)
    read_one(g, i, now_ns, pids, npids, out);
  read_xids(g, out);
  for (size_t k = 0; k < out->nprocs; k++)
    g->d[out->procs[k].gpu].used_ever = 1;
  int usable = 0;
  for (int i = 0; i < g->n; i++) {
    publish(g, i, out);
    usable += g->d[i].usable;
  }
  /* Rows of a GPU that got lost later in this read stay: they were read. */
  for (size_t k = 0; k < out->nprocs; k++) {
    const pp_gpu_proc *p = &out->procs[k];
    pp_gpu_dev *o = &out->gpu[p->gpu];
    o->used_by_run = 1;
    if (p->mem_known)
      o->proc_mem_bytes += p->used_bytes;
  }
  return usable;
}

int pp_collect_gpu_read(pp_collect_gpu *g, const pid_t *pids, size_t npids,
                        pp_gpu_sample *out) {
  return pp_collect_gpu_read_at(g, pp_collect_gpu_now_ns(), pids, npids,
                                out);
}

void pp_collect_gpu_close(pp_collect_gpu *g) {
  if (!g)
    return;
  if (g->inited) {
    for (int i = 0; i < g->n; i++)
      for (int k = 0; k < 2; k++)
        if (g->d[i].gpm_alloced[k] && g->fn.gpm_sample_free)
          g->fn.gpm_sample_free(g->d[i].gpm[k]);
    if (g->events && g->fn.event_set_free)
      g->fn.event_set_free(g->events);
    if (g->fn.shutdown)
      g->fn.shutdown();
  }
  if (g->lib)
    dlclose(g->lib);
  pp__free(g->pbuf);
  pp__free(g->mg);
  pp__free(g);
}

/* ---- sampler glue ---------------------------------------------------- */

static size_t emit(pp_gpu_counter_fn fn, void *ctx, int gpu, const char *what,
                   double v) {
  char name[64];
  int k = gpu >= 0 ? snprintf(name, sizeof name, "gpu%d.%s", gpu, what)
                   : snprintf(name, sizeof name, "gpu.%s", what);
  if (k < 0 || (size_t)k >= sizeof name)
    return 0;
  fn(ctx, name, v);
  return 1;
}

size_t pp_gpu_sample_counters(const pp_gpu_sample *s, pp_gpu_counter_fn fn,
                              void *ctx) {
  if (!s || !fn)
    return 0;
  size_t n = 0;
  double all_j = 0, run_j = 0;
  int any_j = 0, any_run = 0;
  for (int i = 0; i < s->ngpus && i < PP_GPU_MAX; i++) {
    const pp_gpu_dev *o = &s->gpu[i];
    const int *av = o->available;
    if (av[PP_GPU_M_UTIL]) {
      n += emit(fn, ctx, i, "util_pct", o->util_gpu_pct);
      n += emit(fn, ctx, i, "mem_util_pct", o->util_mem_pct);
    }
    if (av[PP_GPU_M_MEM]) {
      n += emit(fn, ctx, i, "mem_used_bytes", (double)o->mem_used_bytes);
      if (o->mem_has_reserved)
        n += emit(fn, ctx, i, "mem_reserved_bytes",
                  (double)o->mem_reserved_bytes);
      n += emit(fn, ctx, i, "mem_free_bytes", (double)o->mem_free_bytes);
      n += emit(fn, ctx, i, "mem_total_bytes", (double)o->mem_total_bytes);
    }
    if (av[PP_GPU_M_POWER])
      n += emit(fn, ctx, i, "power_w", o->power_w);
    if (av[PP_GPU_M_ENERGY]) {
      n += emit(fn, ctx, i, "energy_j", o->energy_j);
      all_j += o->energy_j;
      any_j = 1;
      if (o->used_by_run_ever) {
        run_j += o->energy_j;
        any_run = 1;
      }
    }
    if (av[PP_GPU_M_TEMP])
      n += emit(fn, ctx, i, "temp_c", o->temp_c);
    if (av[PP_GPU_M_SM_CLOCK])
      n += emit(fn, ctx, i, "sm_clock_mhz", o->sm_clock_mhz);
    if (av[PP_GPU_M_MEM_CLOCK])
      n += emit(fn, ctx, i, "mem_clock_mhz", o->mem_clock_mhz);
    if (av[PP_GPU_M_CLOCK_REASONS])
      n += emit(fn, ctx, i, "clock_reasons", (double)o->clock_reasons);
    if (av[PP_GPU_M_PCIE]) {
      n += emit(fn, ctx, i, "pcie_tx_bytes_per_s", o->pcie_tx_bytes_per_s);
      n += emit(fn, ctx, i, "pcie_rx_bytes_per_s", o->pcie_rx_bytes_per_s);
    }
    if (av[PP_GPU_M_SM_ACTIVE])
      n += emit(fn, ctx, i, "sm_active_pct", o->sm_active_pct);
    if (av[PP_GPU_M_SM_OCCUPANCY])
      n += emit(fn, ctx, i, "sm_occupancy_pct", o->sm_occupancy_pct);
    if (av[PP_GPU_M_TENSOR_ACTIVE])
      n += emit(fn, ctx, i, "tensor_active_pct", o->tensor_active_pct);
    if (av[PP_GPU_M_DRAM_BW])
      n += emit(fn, ctx, i, "dram_bw_pct", o->dram_bw_pct);
    if (av[PP_GPU_M_PROCS])
      n += emit(fn, ctx, i, "proc_mem_bytes", (double)o->proc_mem_bytes);
    if (av[PP_GPU_M_XID])
      n += emit(fn, ctx, i, "xid_total", (double)o->xid_total);
  }
  if (any_j)
    n += emit(fn, ctx, -1, "energy_j", all_j);
  if (any_run)
    n += emit(fn, ctx, -1, "run_energy_j", run_j);
  return n;
}

static size_t meta_kv(pp_gpu_meta_fn fn, void *ctx, int gpu, const char *what,
                      const char *val) {
  char key[80];
  int k = snprintf(key, sizeof key, "gpu%d.%s", gpu, what);
  if (k < 0 || (size_t)k >= sizeof key)
    return 0;
  fn(ctx, key, val);
  return 1;
}

size_t pp_gpu_sample_meta(const pp_collect_gpu *g, const pp_gpu_sample *s,
                          pp_gpu_meta_fn fn, void *ctx) {
  if (!g || !fn)
    return 0;
  size_t n = 0;
  if (g->reason[0]) {
    fn(ctx, "unavailable.gpu", g->reason);
    n++;
  }
  char key[80], val[PP_GPU_WORDS_LEN];
  for (int i = 0; i < g->n; i++) {
    const gpu_dev *d = &g->d[i];
    if (d->name[0])
      n += meta_kv(fn, ctx, i, "name", d->name);
    if (d->uuid[0])
      n += meta_kv(fn, ctx, i, "uuid", d->uuid);
    if (d->pci_bus_id[0])
      n += meta_kv(fn, ctx, i, "pci_bus_id", d->pci_bus_id);
    n += meta_kv(fn, ctx, i, "used_by_run", d->used_ever ? "1" : "0");
    if (d->reasons_seen) {
      pp_gpu_clock_reasons_words(d->reasons_seen, val, sizeof val);
      n += meta_kv(fn, ctx, i, "clock_reasons_seen", val);
    }
    if (d->xid_total) {
      fmt(val, sizeof val, "%llu", d->xid_last);
      n += meta_kv(fn, ctx, i, "xid_last", val);
    }
    if (!d->usable) {
      fmt(key, sizeof key, "unavailable.gpu%d", i);
      fn(ctx, key, d->reason_gpu[0] ? d->reason_gpu : "not opened");
      n++;
      continue;
    }
    if (!s || i >= s->ngpus)
      continue;
    for (int m = 0; m < PP_GPU_NMETRICS; m++) {
      const pp_gpu_dev *o = &s->gpu[i];
      if (o->available[m] || !o->reason[m][0] ||
          strcmp(o->reason[m], "no process given") == 0)
        continue;
      fmt(key, sizeof key, "unavailable.gpu%d.%s", i,
          pp_gpu_metric_name((pp_gpu_metric)m));
      fn(ctx, key, o->reason[m]);
      n++;
    }
  }
  return n;
}
