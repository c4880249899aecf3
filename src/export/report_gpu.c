/* SPDX-License-Identifier: MIT */
/*
 * The "GPU" section of the text report: what the NVML reader
 * (src/collect/nvml.c) recorded through the sampler, as gpuN.* counters
 * and gpuN.* / unavailable.gpu* META. Same rules as the system report: a
 * metric not measured is never printed as 0; it prints "unavailable:
 * <reason>" when META has one and is left out otherwise; non-finite values
 * print as "-"; names and reasons from the machine have control
 * characters shown as '?'.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/system.h"
#include "export/report_gpu.h"
#include "internal.h"

#define LABEL_W 25
#define MAX_GPUS 64

typedef pp_unit_text num; /* units.h */

static num sig3(double v) { return pp_unit_text_of(pp_format_sig3, v); }
static num bytes(double v) { return pp_unit_text_of(pp__fmt_bytes, v); }
static num byte_rate(double v) {
  return pp_unit_text_of(pp_format_byte_rate, v);
}
static num joules(double v) { return pp_unit_text_of(pp_format_joules, v); }

static void put_clean(FILE *out, const char *s) {
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    fputc(c < 0x20 || c == 0x7f ? '?' : (int)c, out);
  }
}

static void label(FILE *out, int indent, const char *l) {
  fprintf(out, "%*s", indent, "");
  put_clean(out, l);
  fputc(':', out);
  int pad = LABEL_W - indent - 1 - (int)strlen(l);
  fprintf(out, "%*s", pad > 1 ? pad : 1, "");
}

static void line(FILE *out, const char *l, const char *f, ...)
    __attribute__((format(printf, 3, 4)));
static void line(FILE *out, const char *l, const char *f, ...) {
  label(out, 4, l);
  va_list ap;
  va_start(ap, f);
  vfprintf(out, f, ap);
  va_end(ap);
  fputc('\n', out);
}

static num pct(double v) { return pp_unit_text_of(pp_format_pct, v); }

static void reason_line(FILE *out, int indent, const char *l,
                        const char *why) {
  label(out, indent, l);
  fputs("unavailable: ", out);
  put_clean(out, pp_reason_strip(why));
  fputc('\n', out);
}

/* ---- lookups ----------------------------------------------------------- */

/* The library metrics of the trace (analyze/system.h), found by registry
 * id: a user counter named like one is not a GPU figure. */
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
  return meta(t, "unavailable.gpu%d.%s", gpu, metric);
}

/* "gpu<digits>." prefix: the index, else -1. */
static int gpu_index(const char *s) {
  const char *end;
  long v = pp__name_index(s, "gpu", &end);
  if (v < 0 || (*end != '.' && *end != '\0') || v >= MAX_GPUS)
    return -1;
  return (int)v;
}

int pp_counter_is_gpu(const char *name) {
  long ix;
  pp_metric_id id = pp_metric_lookup(name, &ix, NULL, NULL);
  return id == PP_METRIC_GPU_ENERGY_ALL || id == PP_METRIC_GPU_RUN_ENERGY ||
         (id != PP_METRIC_NONE && is_nvml_row(id, ix));
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

/* ---- the section ------------------------------------------------------- */

/* mean/max of a percentage gauge, or its reason. */
static void pct_line(FILE *out, const pp_trace *t, const gpu_metrics *m, int g,
                     const char *l, pp_metric_id id, const char *metric) {
  const pp_counter_stats *c = ctr(m, g, id);
  if (c)
    line(out, l, "mean %s, max %s", pct(c->mean).s, pct(c->max).s);
  else if (why(t, g, metric))
    reason_line(out, 4, l, why(t, g, metric));
}

static void gpu_block(FILE *out, const pp_trace *t, const gpu_metrics *m,
                      int g) {
  char gl[16];
  snprintf(gl, sizeof gl, "gpu%d", g);
  const char *lost = meta(t, "unavailable.gpu%d%s", g, "");
  const char *name = gmeta(t, g, "name"), *uuid = gmeta(t, g, "uuid");
  const char *pci = gmeta(t, g, "pci_bus_id");
  const char *used = gmeta(t, g, "used_by_run");
  label(out, 2, gl);
  put_clean(out, name ? name : "unknown model");
  if (uuid) {
    fputs(", ", out);
    put_clean(out, uuid);
  }
  if (pci) {
    fputs(", PCI ", out);
    put_clean(out, pci);
  }
  if (used)
    fputs(strcmp(used, "1") == 0 ? ", used by the run"
                                 : ", not used by the run",
          out);
  fputc('\n', out);
  if (lost)
    reason_line(out, 4, "state", lost);

  const pp_counter_stats *c, *c2;
  if ((c = ctr(m, g, PP_METRIC_GPU_UTIL))) {
    c2 = ctr(m, g, PP_METRIC_GPU_MEM_UTIL);
    label(out, 4, "utilization");
    fprintf(out, "mean %s, max %s", pct(c->mean).s, pct(c->max).s);
    if (c2)
      fprintf(out, " (memory bus mean %s)", pct(c2->mean).s);
    fputc('\n', out);
  } else if (why(t, g, "util")) {
    reason_line(out, 4, "utilization", why(t, g, "util"));
  }
  if ((c = ctr(m, g, PP_METRIC_GPU_MEM_USED))) {
    c2 = ctr(m, g, PP_METRIC_GPU_MEM_TOTAL);
    const pp_counter_stats *r = ctr(m, g, PP_METRIC_GPU_MEM_RESERVED);
    label(out, 4, "memory used");
    fprintf(out, "mean %s, max %s", bytes(c->mean).s, bytes(c->max).s);
    if (c2)
      fprintf(out, " of %s", bytes(c2->last).s);
    if (r && r->last > 0)
      fprintf(out, " (+ %s reserved by the driver)", bytes(r->last).s);
    fputc('\n', out);
  } else if (why(t, g, "mem")) {
    reason_line(out, 4, "memory used", why(t, g, "mem"));
  }
  if ((c = ctr(m, g, PP_METRIC_GPU_PROC_MEM)))
    line(out, "run's memory", "max %s", bytes(c->max).s);
  else if (why(t, g, "procs"))
    reason_line(out, 4, "run's memory", why(t, g, "procs"));
  if ((c = ctr(m, g, PP_METRIC_GPU_POWER)))
    line(out, "power", "mean %s W, max %s W", sig3(c->mean).s,
         sig3(c->max).s);
  else if (why(t, g, "power"))
    reason_line(out, 4, "power", why(t, g, "power"));
  if ((c = ctr(m, g, PP_METRIC_GPU_ENERGY)))
    line(out, "energy", "%s", joules(c->last).s);
  else if (why(t, g, "energy"))
    reason_line(out, 4, "energy", why(t, g, "energy"));
  if ((c = ctr(m, g, PP_METRIC_GPU_TEMP)))
    line(out, "temperature", "mean %s C, max %s C", sig3(c->mean).s,
         sig3(c->max).s);
  else if (why(t, g, "temp"))
    reason_line(out, 4, "temperature", why(t, g, "temp"));
  if ((c = ctr(m, g, PP_METRIC_GPU_SM_CLOCK)))
    line(out, "SM clock", "mean %s MHz, min %s MHz, max %s MHz",
         sig3(c->mean).s, sig3(c->min).s, sig3(c->max).s);
  else if (why(t, g, "sm_clock"))
    reason_line(out, 4, "SM clock", why(t, g, "sm_clock"));
  if ((c = ctr(m, g, PP_METRIC_GPU_MEM_CLOCK)))
    line(out, "memory clock", "mean %s MHz", sig3(c->mean).s);
  else if (why(t, g, "mem_clock"))
    reason_line(out, 4, "memory clock", why(t, g, "mem_clock"));
  const char *seen = gmeta(t, g, "clock_reasons_seen");
  if (seen) {
    label(out, 4, "clock limits seen");
    put_clean(out, seen);
    fputc('\n', out);
  } else if (why(t, g, "clock_reasons")) {
    reason_line(out, 4, "clock limits seen", why(t, g, "clock_reasons"));
  }
  if ((c = ctr(m, g, PP_METRIC_GPU_PCIE_TX))) {
    c2 = ctr(m, g, PP_METRIC_GPU_PCIE_RX);
    label(out, 4, "PCIe");
    fprintf(out, "TX mean %s, max %s", byte_rate(c->mean).s,
            byte_rate(c->max).s);
    if (c2)
      fprintf(out, "; RX mean %s, max %s", byte_rate(c2->mean).s,
              byte_rate(c2->max).s);
    fputc('\n', out);
  } else if (why(t, g, "pcie")) {
    reason_line(out, 4, "PCIe", why(t, g, "pcie"));
  }
  /* GPM: one line when all four are out for one reason (pre-Hopper) */
  const char *w0 = why(t, g, "sm_active"), *w1 = why(t, g, "sm_occupancy");
  const char *w2 = why(t, g, "tensor_active"), *w3 = why(t, g, "dram_bw");
  if (w0 && w1 && w2 && w3 && !strcmp(w0, w1) && !strcmp(w0, w2) &&
      !strcmp(w0, w3) && !ctr(m, g, PP_METRIC_GPU_SM_ACTIVE)) {
    reason_line(out, 4, "GPM activity", w0);
  } else {
    pct_line(out, t, m, g, "SM active", PP_METRIC_GPU_SM_ACTIVE, "sm_active");
    pct_line(out, t, m, g, "SM occupancy", PP_METRIC_GPU_SM_OCCUPANCY,
             "sm_occupancy");
    pct_line(out, t, m, g, "tensor active", PP_METRIC_GPU_TENSOR_ACTIVE,
             "tensor_active");
    pct_line(out, t, m, g, "DRAM bandwidth", PP_METRIC_GPU_DRAM_BW, "dram_bw");
  }
  if ((c = ctr(m, g, PP_METRIC_GPU_XID)) && c->last > 0) {
    const char *last = gmeta(t, g, "xid_last");
    label(out, 4, "XID errors");
    fprintf(out, "%.0f", c->last);
    if (last) {
      fputs(" (last XID ", out);
      put_clean(out, last);
      fputc(')', out);
    }
    fputc('\n', out);
  } else if (c) {
    line(out, "XID errors", "none");
  } else if (why(t, g, "xid")) {
    reason_line(out, 4, "XID errors", why(t, g, "xid"));
  }
}

int pp_report_gpu(FILE *out, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  if (!out || !t || !a->analyzed)
    return -1;
  gpu_metrics m;
  if (pp_trace_metrics(a, &m.r, &m.n))
    return -1;
  int n = gpu_slots(t, &m);
  const char *none = pp_trace_meta(t, "unavailable.gpu");
  if (n == 0) {
    if (none) {
      fputs("\nGPU\n", out);
      reason_line(out, 2, "GPU", none);
    }
    pp__free(m.r);
    return ferror(out) ? -1 : 0;
  }
  fputs("\nGPU (NVML)\n", out);
  for (int g = 0; g < n; g++)
    gpu_block(out, t, &m, g);
  const pp_counter_stats *all = ctr(&m, -1, PP_METRIC_GPU_ENERGY_ALL);
  const pp_counter_stats *run = ctr(&m, -1, PP_METRIC_GPU_RUN_ENERGY);
  if (run) {
    label(out, 2, "energy, run's GPUs");
    fprintf(out, "%s", joules(run->last).s);
    if (all)
      fprintf(out, " (all GPUs %s)", joules(all->last).s);
    fputc('\n', out);
  } else if (all) {
    label(out, 2, "energy, all GPUs");
    fprintf(out, "%s\n", joules(all->last).s);
  }
  pp__free(m.r);
  return ferror(out) ? -1 : 0;
}
