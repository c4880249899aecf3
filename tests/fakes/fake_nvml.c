/* SPDX-License-Identifier: MIT */
/*
 * A fake libnvidia-ml.so.1 for the NVML reader's tests: exactly the entry
 * points src/collect/nvml.c calls, with values and failures scripted by the
 * text file named in $PP_FAKE_NVML and re-read on every call, so that a
 * test can change values between reads. Every call is appended to
 * $PP_FAKE_NVML_LOG (when set) as "<function> <gpu index or -1>". Script
 * lines ('#' starts a comment):
 *
 *   count N                       number of GPUs (default 0)
 *   init ERR                      nvmlInit_v2 fails with ERR
 *   no_symbol NAME                NAME returns FUNCTION_NOT_FOUND (13);
 *                                 nvmlErrorString returns NULL
 *   gpu I name|uuid|pci STRING
 *   gpu I handle ERR              nvmlDeviceGetHandleByIndex_v2 fails
 *   gpu I util GPU MEM            percent
 *   gpu I mem TOTAL RESERVED FREE USED   bytes (v1 reports used+reserved)
 *   gpu I power MW | energy_mj MJ | temp C | reasons MASK
 *   gpu I clock SM_MHZ MEM_MHZ | pcie TX_KBS RX_KBS
 *   gpu I mig on|off              MIG mode
 *   gpu I gpm SM OCC TENSOR DRAM  GPM supported, metric values in %
 *   gpu I gpm_metric ID ERR       that GPM metric fails
 *   gpu I register ERR            nvmlDeviceRegisterEvents fails
 *   gpu I lost                    every call on the GPU: GPU_IS_LOST
 *   gpu I fail FUNCTION ERR       that call on the GPU fails with ERR
 *   procs I PID:BYTES ...         compute processes (BYTES "na": unknown)
 *   gprocs I PID:BYTES ...        graphics processes
 *   xid I CODE                    an XID event (append lines for more;
 *                                 each is delivered once)
 * Any value may be replaced by an error name (NOT_SUPPORTED,
 * NO_PERMISSION, GPU_IS_LOST, ...) or number: the call returns it.
 *
 * Checks that make a wrong reader fail: nvmlMemory_v2_t's version must be
 * 0x02000028 and GPM structs version 1 (else ARGUMENT_VERSION_MISMATCH);
 * process lists answer INSUFFICIENT_SIZE with the real count when the
 * buffer is short; GPM metrics need two samples of one GPU taken in order;
 * event waits must use timeout 0 (else INVALID_ARGUMENT).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_API __attribute__((visibility("default")))

#define MAX_GPUS 16
#define MAX_PROCS 512
#define MAX_FAILS 8
#define MAX_NOSYM 16
#define MAX_XIDS 128
#define NGPM_IDS 4

typedef int nvml_ret;
typedef struct fake_dev {
  int index;
} fake_dev;
typedef fake_dev *nvml_device;
typedef struct fake_event_set {
  int magic;
} fake_event_set;
typedef fake_event_set *nvml_event_set;
typedef struct fake_gpm_sample_st {
  int magic;
  int dev;   /* -1 until taken */
  unsigned seq;
} fake_gpm_sample_st;
typedef struct nvml_gpm_sample {
  fake_gpm_sample_st *handle;
} nvml_gpm_sample;

typedef struct {
  unsigned gpu, memory;
} nvml_utilization;
typedef struct {
  unsigned long long total, free, used;
} nvml_memory_v1;
typedef struct {
  unsigned version;
  unsigned long long total, reserved, free, used;
} nvml_memory_v2;
typedef struct {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
} nvml_pci_info;
typedef struct {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id, compute_instance_id;
} nvml_process_info;
typedef struct {
  nvml_device device;
  unsigned long long event_type, event_data;
  unsigned gpu_instance_id, compute_instance_id;
} nvml_event_data;
typedef struct {
  unsigned version, is_supported_device;
} nvml_gpm_support;
typedef struct {
  unsigned metric_id;
  nvml_ret ret;
  double value;
  struct {
    char *short_name, *long_name, *unit;
  } info;
} nvml_gpm_metric;
typedef struct {
  unsigned version, num_metrics;
  nvml_gpm_sample sample1, sample2;
  nvml_gpm_metric metrics[98]; /* NVML 12's NVML_GPM_METRIC_MAX */
} nvml_gpm_metrics_get;

enum {
  OK = 0,
  E_UNINITIALIZED = 1,
  E_INVALID_ARGUMENT = 2,
  E_NOT_SUPPORTED = 3,
  E_INSUFFICIENT_SIZE = 7,
  E_TIMEOUT = 10,
  E_FUNCTION_NOT_FOUND = 13,
  E_GPU_IS_LOST = 15,
  E_ARGUMENT_VERSION_MISMATCH = 25
};

/* ---- the script ------------------------------------------------------- */

typedef struct proc_list {
  int n;
  unsigned pid[MAX_PROCS];
  unsigned long long mem[MAX_PROCS];
} proc_list;

typedef struct gpu_script {
  char name[64], uuid[64], pci[32];
  int handle_rc, lost, mig_rc, mig, register_rc;
  int util_rc, mem_rc, power_rc, energy_rc, temp_rc, clock_rc, reasons_rc;
  int pcie_rc;
  unsigned util_g, util_m, power_mw, temp, sm, memclk, tx, rx;
  unsigned long long total, reserved, free, used, energy_mj, reasons;
  int gpm;
  double gpm_v[NGPM_IDS];
  int gpm_rc[NGPM_IDS];
  int nfail;
  char fail_fn[MAX_FAILS][64];
  int fail_rc[MAX_FAILS];
  proc_list procs, gprocs;
} gpu_script;

typedef struct script {
  int count, init_rc;
  int nnosym;
  char nosym[MAX_NOSYM][64];
  gpu_script gpu[MAX_GPUS];
  int nxid;
  int xid_gpu[MAX_XIDS];
  unsigned long long xid_code[MAX_XIDS];
} script;

static script sc;
static fake_dev devs[MAX_GPUS];
static fake_event_set the_set = {0x5e7};
static int inited, set_created, registered[MAX_GPUS];
static int xid_delivered;
static unsigned gpm_seq;

static const unsigned gpm_ids[NGPM_IDS] = {2, 3, 5, 10};

static const struct {
  const char *name;
  int rc;
} err_names[] = {
    {"SUCCESS", 0},           {"UNINITIALIZED", 1},
    {"INVALID_ARGUMENT", 2},  {"NOT_SUPPORTED", 3},
    {"NO_PERMISSION", 4},     {"ALREADY_INITIALIZED", 5},
    {"NOT_FOUND", 6},         {"INSUFFICIENT_SIZE", 7},
    {"DRIVER_NOT_LOADED", 9}, {"TIMEOUT", 10},
    {"LIBRARY_NOT_FOUND", 12}, {"FUNCTION_NOT_FOUND", 13},
    {"GPU_IS_LOST", 15},      {"LIB_RM_VERSION_MISMATCH", 18},
    {"NO_DATA", 21},          {"ARGUMENT_VERSION_MISMATCH", 25},
    {"UNKNOWN", 999},
};

/* An error name or number: 1 and *rc set. */
static int parse_err(const char *tok, int *rc) {
  for (size_t i = 0; i < sizeof err_names / sizeof err_names[0]; i++)
    if (strcmp(tok, err_names[i].name) == 0) {
      *rc = err_names[i].rc;
      return 1;
    }
  return 0;
}

static unsigned long long num(const char *tok) {
  return tok ? strtoull(tok, NULL, 0) : 0;
}

static void parse_procs(proc_list *pl, char *save) {
  char *tok;
  while ((tok = strtok_r(NULL, " \t", &save)) && pl->n < MAX_PROCS) {
    char *colon = strchr(tok, ':');
    pl->pid[pl->n] = (unsigned)strtoul(tok, NULL, 10);
    pl->mem[pl->n] = colon && strcmp(colon + 1, "na") != 0
                         ? strtoull(colon + 1, NULL, 0)
                         : (colon ? ~0ull : 0);
    pl->n++;
  }
}

/* value-or-error fields: "gpu I what V..." */
static void parse_gpu(gpu_script *g, const char *what, char *save) {
  char *a = strtok_r(NULL, " \t", &save);
  char *b = a ? strtok_r(NULL, " \t", &save) : NULL;
  char *c = b ? strtok_r(NULL, " \t", &save) : NULL;
  char *d = c ? strtok_r(NULL, " \t", &save) : NULL;
  int rc = 0, is_err = a && parse_err(a, &rc);
  if (!strcmp(what, "name") && a)
    snprintf(g->name, sizeof g->name, "%s", a);
  else if (!strcmp(what, "uuid") && a)
    snprintf(g->uuid, sizeof g->uuid, "%s", a);
  else if (!strcmp(what, "pci") && a)
    snprintf(g->pci, sizeof g->pci, "%s", a);
  else if (!strcmp(what, "handle"))
    g->handle_rc = rc;
  else if (!strcmp(what, "lost"))
    g->lost = 1;
  else if (!strcmp(what, "register"))
    g->register_rc = rc;
  else if (!strcmp(what, "mig")) {
    g->mig_rc = rc;
    g->mig = a && !strcmp(a, "on");
  } else if (!strcmp(what, "util")) {
    g->util_rc = rc;
    g->util_g = (unsigned)num(a);
    g->util_m = (unsigned)num(b);
  } else if (!strcmp(what, "mem")) {
    g->mem_rc = rc;
    g->total = num(a);
    g->reserved = num(b);
    g->free = num(c);
    g->used = num(d);
  } else if (!strcmp(what, "power")) {
    g->power_rc = rc;
    g->power_mw = (unsigned)num(a);
  } else if (!strcmp(what, "energy_mj")) {
    g->energy_rc = rc;
    g->energy_mj = num(a);
  } else if (!strcmp(what, "temp")) {
    g->temp_rc = rc;
    g->temp = (unsigned)num(a);
  } else if (!strcmp(what, "clock")) {
    g->clock_rc = rc;
    g->sm = (unsigned)num(a);
    g->memclk = (unsigned)num(b);
  } else if (!strcmp(what, "reasons")) {
    g->reasons_rc = rc;
    g->reasons = num(a);
  } else if (!strcmp(what, "pcie")) {
    g->pcie_rc = rc;
    g->tx = (unsigned)num(a);
    g->rx = (unsigned)num(b);
  } else if (!strcmp(what, "gpm")) {
    g->gpm = !is_err && a;
    const char *v[NGPM_IDS] = {a, b, c, d};
    for (int k = 0; k < NGPM_IDS; k++)
      g->gpm_v[k] = v[k] ? strtod(v[k], NULL) : 0;
  } else if (!strcmp(what, "gpm_metric") && a && b) {
    int r = 0;
    for (int k = 0; k < NGPM_IDS; k++)
      if (gpm_ids[k] == (unsigned)num(a) && parse_err(b, &r))
        g->gpm_rc[k] = r;
  } else if (!strcmp(what, "fail") && a && b && g->nfail < MAX_FAILS) {
    int r = 0;
    if (parse_err(b, &r)) {
      snprintf(g->fail_fn[g->nfail], sizeof g->fail_fn[0], "%s", a);
      g->fail_rc[g->nfail++] = r;
    }
  }
}

static void load(void) {
  memset(&sc, 0, sizeof sc);
  for (int i = 0; i < MAX_GPUS; i++) {
    gpu_script *g = &sc.gpu[i];
    snprintf(g->name, sizeof g->name, "Fake GPU %d", i);
    snprintf(g->uuid, sizeof g->uuid, "GPU-fake-%04d", i);
    snprintf(g->pci, sizeof g->pci, "00000000:%02X:00.0", i + 1);
  }
  const char *path = getenv("PP_FAKE_NVML");
  FILE *f = path ? fopen(path, "r") : NULL;
  if (!f)
    return;
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    char *hash = strchr(line, '#');
    if (hash)
      *hash = '\0';
    line[strcspn(line, "\r\n")] = '\0';
    char *save = NULL;
    char *key = strtok_r(line, " \t", &save);
    if (!key)
      continue;
    char *arg = strtok_r(NULL, " \t", &save);
    int idx = arg ? atoi(arg) : -1;
    if (!strcmp(key, "count")) {
      sc.count = idx < 0 ? 0 : idx > MAX_GPUS ? MAX_GPUS : idx;
    } else if (!strcmp(key, "init") && arg) {
      parse_err(arg, &sc.init_rc);
    } else if (!strcmp(key, "no_symbol") && arg && sc.nnosym < MAX_NOSYM) {
      snprintf(sc.nosym[sc.nnosym++], sizeof sc.nosym[0], "%s", arg);
    } else if (idx < 0 || idx >= MAX_GPUS) {
      continue;
    } else if (!strcmp(key, "gpu")) {
      char *what = strtok_r(NULL, " \t", &save);
      if (what)
        parse_gpu(&sc.gpu[idx], what, save);
    } else if (!strcmp(key, "procs")) {
      parse_procs(&sc.gpu[idx].procs, save);
    } else if (!strcmp(key, "gprocs")) {
      parse_procs(&sc.gpu[idx].gprocs, save);
    } else if (!strcmp(key, "xid") && sc.nxid < MAX_XIDS) {
      sc.xid_gpu[sc.nxid] = idx;
      sc.xid_code[sc.nxid++] = num(strtok_r(NULL, " \t", &save));
    }
  }
  fclose(f);
}

static void log_call(const char *fn, int idx) {
  const char *path = getenv("PP_FAKE_NVML_LOG");
  FILE *f = path ? fopen(path, "a") : NULL;
  if (!f)
    return;
  fprintf(f, "%s %d\n", fn, idx);
  fclose(f);
}

static int no_symbol(const char *fn) {
  for (int i = 0; i < sc.nnosym; i++)
    if (!strcmp(sc.nosym[i], fn))
      return 1;
  return 0;
}

/* Common prologue: load the script, log, scripted failures. */
static nvml_ret begin(const char *fn, int idx) {
  load();
  log_call(fn, idx);
  if (no_symbol(fn))
    return E_FUNCTION_NOT_FOUND;
  if (!inited)
    return E_UNINITIALIZED;
  return OK;
}

static nvml_ret dev_begin(const char *fn, nvml_device dev, gpu_script **g) {
  int idx = dev && dev >= devs && dev < devs + MAX_GPUS ? dev->index : -1;
  nvml_ret rc = begin(fn, idx);
  if (rc)
    return rc;
  if (idx < 0 || idx >= sc.count)
    return E_INVALID_ARGUMENT;
  *g = &sc.gpu[idx];
  if ((*g)->lost)
    return E_GPU_IS_LOST;
  for (int i = 0; i < (*g)->nfail; i++)
    if (!strcmp((*g)->fail_fn[i], fn))
      return (*g)->fail_rc[i];
  return OK;
}

/* ---- the entry points --------------------------------------------------- */

FAKE_API nvml_ret nvmlInit_v2(void);
FAKE_API nvml_ret nvmlShutdown(void);
FAKE_API const char *nvmlErrorString(nvml_ret rc);
FAKE_API nvml_ret nvmlDeviceGetCount_v2(unsigned *n);
FAKE_API nvml_ret nvmlDeviceGetHandleByIndex_v2(unsigned i, nvml_device *d);
FAKE_API nvml_ret nvmlDeviceGetName(nvml_device d, char *s, unsigned n);
FAKE_API nvml_ret nvmlDeviceGetUUID(nvml_device d, char *s, unsigned n);
FAKE_API nvml_ret nvmlDeviceGetPciInfo_v3(nvml_device d, nvml_pci_info *p);
FAKE_API nvml_ret nvmlDeviceGetMigMode(nvml_device d, unsigned *cur,
                                       unsigned *pending);
FAKE_API nvml_ret nvmlDeviceGetUtilizationRates(nvml_device d,
                                                nvml_utilization *u);
FAKE_API nvml_ret nvmlDeviceGetMemoryInfo_v2(nvml_device d,
                                             nvml_memory_v2 *m);
FAKE_API nvml_ret nvmlDeviceGetMemoryInfo(nvml_device d, nvml_memory_v1 *m);
FAKE_API nvml_ret nvmlDeviceGetPowerUsage(nvml_device d, unsigned *mw);
FAKE_API nvml_ret nvmlDeviceGetTotalEnergyConsumption(nvml_device d,
                                                      unsigned long long *e);
FAKE_API nvml_ret nvmlDeviceGetTemperature(nvml_device d, int sensor,
                                           unsigned *c);
FAKE_API nvml_ret nvmlDeviceGetClockInfo(nvml_device d, int type,
                                         unsigned *mhz);
FAKE_API nvml_ret
nvmlDeviceGetCurrentClocksEventReasons(nvml_device d, unsigned long long *r);
FAKE_API nvml_ret nvmlDeviceGetCurrentClocksThrottleReasons(
    nvml_device d, unsigned long long *r);
FAKE_API nvml_ret nvmlDeviceGetPcieThroughput(nvml_device d, int counter,
                                              unsigned *kbs);
FAKE_API nvml_ret nvmlDeviceGetComputeRunningProcesses_v3(
    nvml_device d, unsigned *n, nvml_process_info *p);
FAKE_API nvml_ret nvmlDeviceGetComputeRunningProcesses_v2(
    nvml_device d, unsigned *n, nvml_process_info *p);
FAKE_API nvml_ret nvmlDeviceGetGraphicsRunningProcesses_v3(
    nvml_device d, unsigned *n, nvml_process_info *p);
FAKE_API nvml_ret nvmlDeviceGetGraphicsRunningProcesses_v2(
    nvml_device d, unsigned *n, nvml_process_info *p);
FAKE_API nvml_ret nvmlEventSetCreate(nvml_event_set *set);
FAKE_API nvml_ret nvmlDeviceRegisterEvents(nvml_device d,
                                           unsigned long long types,
                                           nvml_event_set set);
FAKE_API nvml_ret nvmlEventSetWait_v2(nvml_event_set set, nvml_event_data *e,
                                      unsigned timeout_ms);
FAKE_API nvml_ret nvmlEventSetFree(nvml_event_set set);
FAKE_API nvml_ret nvmlGpmQueryDeviceSupport(nvml_device d,
                                            nvml_gpm_support *s);
FAKE_API nvml_ret nvmlGpmSampleAlloc(nvml_gpm_sample *s);
FAKE_API nvml_ret nvmlGpmSampleFree(nvml_gpm_sample s);
FAKE_API nvml_ret nvmlGpmSampleGet(nvml_device d, nvml_gpm_sample s);
FAKE_API nvml_ret nvmlGpmMetricsGet(nvml_gpm_metrics_get *m);

nvml_ret nvmlInit_v2(void) {
  load();
  log_call("nvmlInit_v2", -1);
  if (no_symbol("nvmlInit_v2"))
    return E_FUNCTION_NOT_FOUND;
  if (sc.init_rc)
    return sc.init_rc;
  inited = 1;
  set_created = 0;
  xid_delivered = 0;
  memset(registered, 0, sizeof registered);
  for (int i = 0; i < MAX_GPUS; i++)
    devs[i].index = i;
  return OK;
}

nvml_ret nvmlShutdown(void) {
  log_call("nvmlShutdown", -1);
  if (!inited)
    return E_UNINITIALIZED;
  inited = 0;
  return OK;
}

const char *nvmlErrorString(nvml_ret rc) {
  load();
  if (no_symbol("nvmlErrorString"))
    return NULL;
  for (size_t i = 0; i < sizeof err_names / sizeof err_names[0]; i++)
    if (err_names[i].rc == rc)
      return err_names[i].name; /* enum spelling: tells it from the reader's */
  return "UNKNOWN";
}

nvml_ret nvmlDeviceGetCount_v2(unsigned *n) {
  nvml_ret rc = begin("nvmlDeviceGetCount_v2", -1);
  if (rc)
    return rc;
  if (!n)
    return E_INVALID_ARGUMENT;
  *n = (unsigned)sc.count;
  return OK;
}

nvml_ret nvmlDeviceGetHandleByIndex_v2(unsigned i, nvml_device *d) {
  nvml_ret rc = begin("nvmlDeviceGetHandleByIndex_v2", (int)i);
  if (rc)
    return rc;
  if (!d || i >= (unsigned)sc.count)
    return E_INVALID_ARGUMENT;
  if (sc.gpu[i].handle_rc)
    return sc.gpu[i].handle_rc;
  if (sc.gpu[i].lost)
    return E_GPU_IS_LOST;
  *d = &devs[i];
  return OK;
}

static nvml_ret get_str(const char *fn, nvml_device d, char *s, unsigned n,
                        int which) {
  gpu_script *g = NULL;
  nvml_ret rc = dev_begin(fn, d, &g);
  if (rc)
    return rc;
  const char *v = which == 0 ? g->name : g->uuid;
  if (!s || strlen(v) + 1 > n)
    return E_INSUFFICIENT_SIZE;
  memcpy(s, v, strlen(v) + 1);
  return OK;
}

nvml_ret nvmlDeviceGetName(nvml_device d, char *s, unsigned n) {
  return get_str("nvmlDeviceGetName", d, s, n, 0);
}

nvml_ret nvmlDeviceGetUUID(nvml_device d, char *s, unsigned n) {
  return get_str("nvmlDeviceGetUUID", d, s, n, 1);
}

nvml_ret nvmlDeviceGetPciInfo_v3(nvml_device d, nvml_pci_info *p) {
  gpu_script *g = NULL;
  nvml_ret rc = dev_begin("nvmlDeviceGetPciInfo_v3", d, &g);
  if (rc)
    return rc;
  memset(p, 0, sizeof *p);
  snprintf(p->bus_id, sizeof p->bus_id, "%s", g->pci);
  return OK;
}

nvml_ret nvmlDeviceGetMigMode(nvml_device d, unsigned *cur,
                              unsigned *pending) {
  gpu_script *g = NULL;
  nvml_ret rc = dev_begin("nvmlDeviceGetMigMode", d, &g);
  if (rc)
    return rc;
  if (g->mig_rc)
    return g->mig_rc;
  *cur = *pending = (unsigned)g->mig;
  return OK;
}

nvml_ret nvmlDeviceGetUtilizationRates(nvml_device d, nvml_utilization *u) {
  gpu_script *g = NULL;
  nvml_ret rc = dev_begin("nvmlDeviceGetUtilizationRates", d, &g);
  if (rc || (rc = g->util_rc))
    return rc;
  if (g->mig)
    return E_NOT_SUPPORTED; /* as the driver does under MIG */
  u->gpu = g->util_g;
  u->memory = g->util_m;
  return OK;
}

nvml_ret nvmlDeviceGetMemoryInfo_v2(nvml_device d, nvml_memory_v2 *m) {
  gpu_script *g = NULL;
  nvml_ret rc = dev_begin("nvmlDeviceGetMemoryInfo_v2", d, &g);
  if (rc || (rc = g->mem_rc))
    return rc;
  if (!m || m->version != 0x02000028u)
    return E_ARGUMENT_VERSION_MISMATCH;
  m->total = g->total;
  m->reserved = g->reserved;
  m->free = g->free;
  m->used = g->used;
  return OK;
}

nvml_ret nvmlDeviceGetMemoryInfo(nvml_device d, nvml_memory_v1 *m) {
  gpu_script *g = NULL;
  nvml_ret rc = dev_begin("nvmlDeviceGetMemoryInfo", d, &g);
  if (rc || (rc = g->mem_rc))
    return rc;
  m->total = g->total;
  m->free = g->free;
  m->used = g->used + g->reserved;
  return OK;
}

nvml_ret nvmlDeviceGetPowerUsage(nvml_device d, unsigned *mw) {
  gpu_script *g = NULL;
  nvml_ret rc = dev_begin("nvmlDeviceGetPowerUsage", d, &g);
  if (rc || (rc = g->power_rc))
    return rc;
  *mw = g->power_mw;
  return OK;
}

nvml_ret nvmlDeviceGetTotalEnergyConsumption(nvml_device d,
                                             unsigned long long *e) {
  gpu_script *g = NULL;
  nvml_ret rc = dev_begin("nvmlDeviceGetTotalEnergyConsumption", d, &g);
  if (rc || (rc = g->energy_rc))
    return rc;
  *e = g->energy_mj;
  return OK;
}

nvml_ret nvmlDeviceGetTemperature(nvml_device d, int sensor, unsigned *c) {
  gpu_script *g = NULL;
  nvml_ret rc = dev_begin("nvmlDeviceGetTemperature", d, &g);
  if (rc || (rc = g->temp_rc))
    return rc;
  if (sensor != 0)
    return E_INVALID_ARGUMENT;
  *c = g->temp;
  return OK;
}

nvml_ret nvmlDeviceGetClockInfo(nvml_device d, int type, unsigned *mhz) {
  gpu_script *g = NULL;
  nvml_ret rc = dev_begin("nvmlDeviceGetClockInfo", d, &g);
  if (rc || (rc = g->clock_rc))
    return rc;
  if (type == 1)
    *mhz = g->sm;
  else if (type == 2)
    *mhz = g->memclk;
  else
    return E_INVALID_ARGUMENT;
  return OK;
}

static nvml_ret reasons(const char *fn, nvml_device d, unsigned long long *r) {
  gpu_script *g = NULL;
  nvml_ret rc = dev_begin(fn, d, &g);
  if (rc || (rc = g->reasons_rc))
    return rc;
  *r = g->reasons;
  return OK;
}

nvml_ret nvmlDeviceGetCurrentClocksEventReasons(nvml_device d,
                                                unsigned long long *r) {
  return reasons("nvmlDeviceGetCurrentClocksEventReasons", d, r);
}

nvml_ret nvmlDeviceGetCurrentClocksThrottleReasons(nvml_device d,
                                                   unsigned long long *r) {
  return reasons("nvmlDeviceGetCurrentClocksThrottleReasons", d, r);
}

nvml_ret nvmlDeviceGetPcieThroughput(nvml_device d, int counter,
                                     unsigned *kbs) {
  gpu_script *g = NULL;
  nvml_ret rc = dev_begin("nvmlDeviceGetPcieThroughput", d, &g);
  if (rc || (rc = g->pcie_rc))
    return rc;
  if (counter != 0 && counter != 1)
    return E_INVALID_ARGUMENT;
  *kbs = counter == 0 ? g->tx : g->rx;
  return OK;
}

static nvml_ret procs(const char *fn, nvml_device d, unsigned *n,
                      nvml_process_info *p, int graphics) {
  gpu_script *g = NULL;
  nvml_ret rc = dev_begin(fn, d, &g);
  if (rc)
    return rc;
  if (!n)
    return E_INVALID_ARGUMENT;
  const proc_list *pl = graphics ? &g->gprocs : &g->procs;
  if (*n < (unsigned)pl->n) {
    *n = (unsigned)pl->n;
    return E_INSUFFICIENT_SIZE;
  }
  if (pl->n && !p)
    return E_INVALID_ARGUMENT;
  for (int i = 0; i < pl->n; i++) {
    p[i].pid = pl->pid[i];
    p[i].used_gpu_memory = pl->mem[i];
    p[i].gpu_instance_id = p[i].compute_instance_id = 0xFFFFFFFFu;
  }
  *n = (unsigned)pl->n;
  return OK;
}

nvml_ret nvmlDeviceGetComputeRunningProcesses_v3(nvml_device d, unsigned *n,
                                                 nvml_process_info *p) {
  return procs("nvmlDeviceGetComputeRunningProcesses_v3", d, n, p, 0);
}

nvml_ret nvmlDeviceGetComputeRunningProcesses_v2(nvml_device d, unsigned *n,
                                                 nvml_process_info *p) {
  return procs("nvmlDeviceGetComputeRunningProcesses_v2", d, n, p, 0);
}

nvml_ret nvmlDeviceGetGraphicsRunningProcesses_v3(nvml_device d, unsigned *n,
                                                  nvml_process_info *p) {
  return procs("nvmlDeviceGetGraphicsRunningProcesses_v3", d, n, p, 1);
}

nvml_ret nvmlDeviceGetGraphicsRunningProcesses_v2(nvml_device d, unsigned *n,
                                                  nvml_process_info *p) {
  return procs("nvmlDeviceGetGraphicsRunningProcesses_v2", d, n, p, 1);
}

nvml_ret nvmlEventSetCreate(nvml_event_set *set) {
  nvml_ret rc = begin("nvmlEventSetCreate", -1);
  if (rc)
    return rc;
  set_created = 1;
  *set = &the_set;
  return OK;
}

nvml_ret nvmlDeviceRegisterEvents(nvml_device d, unsigned long long types,
                                  nvml_event_set set) {
  gpu_script *g = NULL;
  nvml_ret rc = dev_begin("nvmlDeviceRegisterEvents", d, &g);
  if (rc || (rc = g->register_rc))
    return rc;
  if (set != &the_set || !set_created || !(types & 0x8))
    return E_INVALID_ARGUMENT;
  registered[d->index] = 1;
  return OK;
}

nvml_ret nvmlEventSetWait_v2(nvml_event_set set, nvml_event_data *e,
                             unsigned timeout_ms) {
  nvml_ret rc = begin("nvmlEventSetWait_v2", -1);
  if (rc)
    return rc;
  if (set != &the_set || !e || timeout_ms != 0)
    return E_INVALID_ARGUMENT; /* the reader must never block */
  while (xid_delivered < sc.nxid) {
    int i = xid_delivered++;
    int gpu = sc.xid_gpu[i];
    if (gpu >= sc.count || !registered[gpu])
      continue;
    memset(e, 0, sizeof *e);
    e->device = &devs[gpu];
    e->event_type = 0x8;
    e->event_data = sc.xid_code[i];
    e->gpu_instance_id = e->compute_instance_id = 0xFFFFFFFFu;
    return OK;
  }
  return E_TIMEOUT;
}

nvml_ret nvmlEventSetFree(nvml_event_set set) {
  log_call("nvmlEventSetFree", -1);
  if (set != &the_set || !set_created)
    return E_INVALID_ARGUMENT;
  set_created = 0;
  return OK;
}

nvml_ret nvmlGpmQueryDeviceSupport(nvml_device d, nvml_gpm_support *s) {
  gpu_script *g = NULL;
  nvml_ret rc = dev_begin("nvmlGpmQueryDeviceSupport", d, &g);
  if (rc)
    return rc;
  if (!s || s->version != 1)
    return E_ARGUMENT_VERSION_MISMATCH;
  s->is_supported_device = (unsigned)g->gpm;
  return OK;
}

nvml_ret nvmlGpmSampleAlloc(nvml_gpm_sample *s) {
  nvml_ret rc = begin("nvmlGpmSampleAlloc", -1);
  if (rc)
    return rc;
  fake_gpm_sample_st *p = calloc(1, sizeof *p);
  if (!p)
    return 999;
  p->magic = 0x69e;
  p->dev = -1;
  s->handle = p;
  return OK;
}

nvml_ret nvmlGpmSampleFree(nvml_gpm_sample s) {
  log_call("nvmlGpmSampleFree", -1);
  if (!s.handle || s.handle->magic != 0x69e)
    return E_INVALID_ARGUMENT;
  s.handle->magic = 0;
  free(s.handle);
  return OK;
}

nvml_ret nvmlGpmSampleGet(nvml_device d, nvml_gpm_sample s) {
  gpu_script *g = NULL;
  nvml_ret rc = dev_begin("nvmlGpmSampleGet", d, &g);
  if (rc)
    return rc;
  if (!s.handle || s.handle->magic != 0x69e)
    return E_INVALID_ARGUMENT;
  if (!g->gpm)
    return E_NOT_SUPPORTED;
  s.handle->dev = d->index;
  s.handle->seq = ++gpm_seq;
  return OK;
}

nvml_ret nvmlGpmMetricsGet(nvml_gpm_metrics_get *m) {
  nvml_ret rc = begin("nvmlGpmMetricsGet", -1);
  if (rc)
    return rc;
  if (!m || m->version != 1)
    return E_ARGUMENT_VERSION_MISMATCH;
  const fake_gpm_sample_st *a = m->sample1.handle, *b = m->sample2.handle;
  if (!a || !b || a->magic != 0x69e || b->magic != 0x69e || a->dev < 0 ||
      a->dev != b->dev || a->seq >= b->seq || m->num_metrics > 98)
    return E_INVALID_ARGUMENT;
  const gpu_script *g = &sc.gpu[a->dev];
  if (g->lost)
    return E_GPU_IS_LOST;
  for (unsigned i = 0; i < m->num_metrics; i++) {
    nvml_gpm_metric *x = &m->metrics[i];
    x->ret = E_NOT_SUPPORTED;
    for (int k = 0; k < NGPM_IDS; k++)
      if (x->metric_id == gpm_ids[k]) {
        x->ret = g->gpm_rc[k];
        x->value = g->gpm_rc[k] ? 0 : g->gpm_v[k];
      }
  }
  return OK;
}
