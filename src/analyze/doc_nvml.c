/* SPDX-License-Identifier: MIT */
/*
 * The results document's GPUs as NVML saw them (src/collect/nvml.c, through
 * the sampler: gpuN.* counters and gpuN.* / unavailable.gpu* META):
 * - per GPU N a table of measures "gpuN", titled with its model, UUID,
 *   PCI bus and whether the run used it: utilization, memory, the run's
 *   memory, power, energy, temperature, clocks, PCIe, GPM activity and XID
 *   errors, each measured or (in a remark per reason) unavailable; a GPU
 *   lost during the run says so in a warning, the clock limits seen in a
 *   remark;
 * - the facts "gpu": the energy of the run's GPUs and of all of them, or
 *   why no GPU was read at all.
 * Library metrics are found by registry id (analyze/system.h), so a user
 * counter named like one is not a GPU figure. The text report lays them
 * out; the summary JSON has the series in its counters.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "internal.h"
#include "analyze/system.h"
#include "results/doc.h"
#include "results/measures.h"

#define MAX_GPUS 64

typedef struct gpu_metrics {
  pp_metric_ref *r;
  size_t n;
} gpu_metrics;

/* The series of row id for GPU gpu (-1: a row without {N}), or NULL. */
static const pp_counter_stats *ctr(const gpu_metrics *m, int gpu,
                                   pp_metric_id id) {
  for (size_t i = 0; i < m->n; i++)
    if (m->r[i].id == id && m->r[i].index == gpu)
      return m->r[i].c;
  return NULL;
}

/* A gpu{N}.* row (NVML), not cuda{N}.* nor the all-GPU totals. */
static int is_nvml_row(pp_metric_id id, long index) {
  const pp_metric_def *d = pp_metric_def_of(id);
  return d && d->group == PP_GROUP_GPU && index >= 0 &&
         id != PP_METRIC_CUDA_MEM_USED && id != PP_METRIC_CUDA_MEM_TOTAL;
}

int pp_counter_is_gpu(const char *name) {
  long ix;
  pp_metric_id id = pp_metric_lookup(name, &ix, NULL, NULL);
  return id == PP_METRIC_GPU_ENERGY_ALL || id == PP_METRIC_GPU_RUN_ENERGY ||
         (id != PP_METRIC_NONE && is_nvml_row(id, ix));
}

static const char *meta(const pp_trace *t, const char *f, int gpu,
                        const char *what) {
  char key[96];
  int k = snprintf(key, sizeof key, f, gpu, what);
  if (k < 0 || (size_t)k >= sizeof key)
    return NULL;
  return pp_trace_meta(t, key);
}

static const char *gmeta(const pp_trace *t, int gpu, const char *what) {
  return meta(t, "gpu%d.%s", gpu, what);
}

static const char *why(const pp_trace *t, int gpu, const char *metric) {
  const char *w = meta(t, "unavailable.gpu%d.%s", gpu, metric);
  return w ? pp_reason_strip(w) : NULL;
}

/* "gpu<digits>." prefix: the index, else -1. */
static int gpu_index(const char *s) {
  const char *end;
  long v = pp__name_index(s, "gpu", &end);
  if (v < 0 || (*end != '.' && *end != '\0') || v >= MAX_GPUS)
    return -1;
  return (int)v;
}

/* Number of GPU slots mentioned by counters or META (max index + 1). */
static int gpu_slots(const pp_trace *t, const gpu_metrics *m) {
  int n = 0;
  for (size_t i = 0; i < m->n; i++)
    if (is_nvml_row(m->r[i].id, m->r[i].index) && m->r[i].index < MAX_GPUS &&
        m->r[i].index >= n)
      n = (int)m->r[i].index + 1;
  for (size_t i = 0; i < t->nmeta; i++) {
    const char *k = t->meta[i].key;
    if (!k)
      continue;
    if (strncmp(k, "unavailable.", 12) == 0)
      k += 12;
    int g = gpu_index(k);
    if (g >= n)
      n = g + 1;
  }
  return n;
}

/* The measures of GPU g, in the order the table shows them. */
static const struct {
  const char *key, *label;
  pp_value_unit unit;
  pp_metric_id id;
  const char *why; /* the META unavailable.gpuN.<why> */
} gpu_rows[] = {
    {"util_pct", "utilization", PP_VALUE_PCT, PP_METRIC_GPU_UTIL, "util"},
    {"mem_util_pct", "memory bus", PP_VALUE_PCT, PP_METRIC_GPU_MEM_UTIL,
     "util"},
    {"mem_used_bytes", "memory used", PP_VALUE_BYTES, PP_METRIC_GPU_MEM_USED,
     "mem"},
    {"mem_total_bytes", "memory total", PP_VALUE_BYTES,
     PP_METRIC_GPU_MEM_TOTAL, "mem"},
    {"mem_reserved_bytes", "reserved by the driver", PP_VALUE_BYTES,
     PP_METRIC_GPU_MEM_RESERVED, NULL},
    {"proc_mem_bytes", "run's memory", PP_VALUE_BYTES,
     PP_METRIC_GPU_PROC_MEM, "procs"},
    {"power_w", "power", PP_VALUE_WATTS, PP_METRIC_GPU_POWER, "power"},
    {"energy_j", "energy (last: the run's)", PP_VALUE_JOULES,
     PP_METRIC_GPU_ENERGY, "energy"},
    {"temp_c", "temperature", PP_VALUE_CELSIUS, PP_METRIC_GPU_TEMP, "temp"},
    {"sm_clock_mhz", "SM clock", PP_VALUE_MHZ, PP_METRIC_GPU_SM_CLOCK,
     "sm_clock"},
    {"mem_clock_mhz", "memory clock", PP_VALUE_MHZ, PP_METRIC_GPU_MEM_CLOCK,
     "mem_clock"},
    {"pcie_tx", "PCIe TX", PP_VALUE_BYTE_RATE, PP_METRIC_GPU_PCIE_TX, "pcie"},
    {"pcie_rx", "PCIe RX", PP_VALUE_BYTE_RATE, PP_METRIC_GPU_PCIE_RX, "pcie"},
    {"sm_active_pct", "SM active", PP_VALUE_PCT, PP_METRIC_GPU_SM_ACTIVE,
     "sm_active"},
    {"sm_occupancy_pct", "SM occupancy", PP_VALUE_PCT,
     PP_METRIC_GPU_SM_OCCUPANCY, "sm_occupancy"},
    {"tensor_active_pct", "tensor active", PP_VALUE_PCT,
     PP_METRIC_GPU_TENSOR_ACTIVE, "tensor_active"},
    {"dram_bw_pct", "DRAM bandwidth", PP_VALUE_PCT, PP_METRIC_GPU_DRAM_BW,
     "dram_bw"},
    {"xid", "XID errors (last: total)", PP_VALUE_COUNT, PP_METRIC_GPU_XID,
     "xid"},
};
#define NROWS (sizeof gpu_rows / sizeof *gpu_rows)

static int gpu_table(const pp_trace *t, const gpu_metrics *gm, int g,
                     pp_doc *d) {
  pp_measure_figures m[NROWS];
  size_t n = 0;
  for (size_t i = 0; i < NROWS; i++) {
    const pp_counter_stats *c = ctr(gm, g, gpu_rows[i].id);
    /* the driver's reservation: said when there is one */
    if (gpu_rows[i].id == PP_METRIC_GPU_MEM_RESERVED && c && !(c->last > 0))
      c = NULL;
    m[n++] = (pp_measure_figures){
        .key = gpu_rows[i].key,
        .label = gpu_rows[i].label,
        .unit = gpu_rows[i].unit,
        .ok = c != NULL,
        .mean = c ? c->mean : NAN,
        .min = c ? c->min : NAN,
        .max = c ? c->max : NAN,
        .last = c ? c->last : NAN,
        .samples = c ? c->samples : 0,
        .why = c || !gpu_rows[i].why ? NULL : why(t, g, gpu_rows[i].why)};
  }
  /* the GPU's identity, from the machine */
  const char *name = gmeta(t, g, "name"), *uuid = gmeta(t, g, "uuid");
  const char *pci = gmeta(t, g, "pci_bus_id");
  const char *used = gmeta(t, g, "used_by_run");
  char id[16], title[400];
  snprintf(id, sizeof id, "gpu%d", g);
  snprintf(title, sizeof title, "gpu%d: %s%s%s%s%s%s", g,
           name ? name : "unknown model", uuid ? ", " : "", uuid ? uuid : "",
           pci ? ", PCI " : "", pci ? pci : "",
           !used                   ? ""
           : strcmp(used, "1") == 0 ? ", used by the run"
                                    : ", not used by the run");
  pp_table *tb = pp_results_measures(d, id, title, NULL, m, n);
  if (!tb)
    return -1;
  pp_table_empty(tb, "no figure of this GPU was measured");
  const char *lost = meta(t, "unavailable.gpu%d%s", g, "");
  if (lost)
    pp_table_warning(tb, "lost during the run: %s", pp_reason_strip(lost));
  const char *seen = gmeta(t, g, "clock_reasons_seen");
  const char *seen_why = why(t, g, "clock_reasons");
  if (seen)
    pp_table_remark(tb, "clock limits seen: %s", seen);
  else if (seen_why)
    pp_table_remark(tb, "clock limits seen: unavailable: %s", seen_why);
  const pp_counter_stats *x = ctr(gm, g, PP_METRIC_GPU_XID);
  const char *xlast = gmeta(t, g, "xid_last");
  if (x && x->last > 0 && xlast)
    pp_table_remark(tb, "the last XID error: %s", xlast);
  return pp_doc_ok(d) ? 0 : -1;
}

int pp__nvml_tables(const pp_analysis *a, pp_doc *d) {
  const pp_trace *t = a->trace;
  gpu_metrics m;
  if (pp_trace_metrics(a, &m.r, &m.n))
    return -1;
  int n = gpu_slots(t, &m), rc = 0;
  const char *none = pp_trace_meta(t, "unavailable.gpu");
  for (int g = 0; g < n && !rc; g++)
    rc = gpu_table(t, &m, g, d);
  const pp_counter_stats *all = ctr(&m, -1, PP_METRIC_GPU_ENERGY_ALL);
  const pp_counter_stats *run = ctr(&m, -1, PP_METRIC_GPU_RUN_ENERGY);
  if (!rc && (run || all || (!n && none))) {
    pp_table *f = pp_doc_facts(d, "gpu", "GPU", NULL);
    if (!n && none)
      pp_fact_unavailable(f, "gpu", "GPU", pp_reason_strip(none));
    if (run)
      pp_fact_num(f, "run_energy_j", "energy, the run's GPUs", run->last,
                  PP_VALUE_JOULES);
    if (all)
      pp_fact_num(f, "all_energy_j", "energy, all GPUs", all->last,
                  PP_VALUE_JOULES);
    rc = pp_doc_ok(d) ? 0 : -1;
  }
  pp__free(m.r);
  return rc;
}
