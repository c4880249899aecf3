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

#include "export/report_gpu.h"
#include "internal.h"

#define LABEL_W 25
#define MAX_GPUS 64

typedef struct num {
  char s[48];
} num;

static num numf(const char *f, ...) __attribute__((format(printf, 1, 2)));
static num numf(const char *f, ...) {
  num n;
  va_list ap;
  va_start(ap, f);
  int k = vsnprintf(n.s, sizeof n.s, f, ap);
  va_end(ap);
  if (k < 0)
    n.s[0] = '\0';
  return n;
}

/* 3 significant digits (integers from 100 up). */
static num sig3(double v) {
  if (!isfinite(v))
    return numf("-");
  double a = fabs(v);
  int d = a >= 100 ? 0 : a >= 10 ? 1 : 2;
  if (a >= 1e15)
    return numf("%.3g", v);
  return numf("%.*f", d, v);
}

static num scaled(double v, double base, const char *const *u, size_t nu) {
  if (!isfinite(v))
    return numf("-");
  double a = fabs(v);
  size_t i = 0;
  while (i + 1 < nu && a >= base) {
    a /= base;
    i++;
  }
  if (a >= 999.5 && i + 1 < nu) {
    a /= base;
    i++;
  }
  if (i == 0) /* bytes are whole */
    return numf("%s%.0f%s", v < 0 ? "-" : "", a, u[0]);
  num s = sig3(v < 0 ? -a : a);
  return numf("%s%s", s.s, u[i]);
}

static num bytes(double v) {
  static const char *const u[] = {" B", " KiB", " MiB", " GiB", " TiB"};
  return scaled(v, 1024.0, u, sizeof u / sizeof u[0]);
}

static num byte_rate(double v) {
  static const char *const u[] = {" B/s", " KiB/s", " MiB/s", " GiB/s"};
  return scaled(v, 1024.0, u, sizeof u / sizeof u[0]);
}

static num joules(double v) {
  static const char *const u[] = {" J", " kJ", " MJ", " GJ"};
  return scaled(v, 1000.0, u, sizeof u / sizeof u[0]);
}

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

/* Strip the "unavailable: " a producer may have put in front. */
static const char *strip(const char *r) {
  static const char pre[] = "unavailable: ";
  return strncmp(r, pre, sizeof pre - 1) == 0 ? r + sizeof pre - 1 : r;
}

static num pct(double v) {
  if (!isfinite(v))
    return numf("-");
  return numf("%.1f%%", v);
}

static void reason_line(FILE *out, int indent, const char *l,
                        const char *why) {
  label(out, indent, l);
  fputs("unavailable: ", out);
  put_clean(out, strip(why));
  fputc('\n', out);
}

/* ---- lookups ----------------------------------------------------------- */

static const pp_counter_stats *ctr(const pp_trace *t, int gpu,
                                   const char *what) {
  char name[64];
  int k = gpu >= 0 ? snprintf(name, sizeof name, "gpu%d.%s", gpu, what)
                   : snprintf(name, sizeof name, "gpu.%s", what);
  if (k < 0 || (size_t)k >= sizeof name)
    return NULL;
  for (size_t i = 0; i < t->prof.ncounters; i++) {
    const pp_counter_stats *c = &t->prof.counters[i];
    if (c->samples && strcmp(pp_trace_loc_name(t, c->loc), name) == 0)
      return c;
  }
  return NULL;
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
  return name && (strncmp(name, "gpu.", 4) == 0 || gpu_index(name) >= 0);
}

/* Number of GPU slots mentioned by counters or META (max index + 1). */
static int gpu_slots(const pp_trace *t) {
  int n = 0;
  for (size_t i = 0; i < t->prof.ncounters; i++) {
    int g = gpu_index(pp_trace_loc_name(t, t->prof.counters[i].loc));
    if (g >= n)
      n = g + 1;
  }
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
static void pct_line(FILE *out, const pp_trace *t, int g, const char *l,
                     const char *counter, const char *metric) {
  const pp_counter_stats *c = ctr(t, g, counter);
  if (c)
    line(out, l, "mean %s, max %s", pct(c->mean).s, pct(c->max).s);
  else if (why(t, g, metric))
    reason_line(out, 4, l, why(t, g, metric));
}

static void gpu_block(FILE *out, const pp_trace *t, int g) {
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
  if ((c = ctr(t, g, "util_pct"))) {
    c2 = ctr(t, g, "mem_util_pct");
    label(out, 4, "utilization");
    fprintf(out, "mean %s, max %s", pct(c->mean).s, pct(c->max).s);
    if (c2)
      fprintf(out, " (memory bus mean %s)", pct(c2->mean).s);
    fputc('\n', out);
  } else if (why(t, g, "util")) {
    reason_line(out, 4, "utilization", why(t, g, "util"));
  }
  if ((c = ctr(t, g, "mem_used_bytes"))) {
    c2 = ctr(t, g, "mem_total_bytes");
    const pp_counter_stats *r = ctr(t, g, "mem_reserved_bytes");
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
  if ((c = ctr(t, g, "proc_mem_bytes")))
    line(out, "run's memory", "max %s", bytes(c->max).s);
  else if (why(t, g, "procs"))
    reason_line(out, 4, "run's memory", why(t, g, "procs"));
  if ((c = ctr(t, g, "power_w")))
    line(out, "power", "mean %s W, max %s W", sig3(c->mean).s,
         sig3(c->max).s);
  else if (why(t, g, "power"))
    reason_line(out, 4, "power", why(t, g, "power"));
  if ((c = ctr(t, g, "energy_j")))
    line(out, "energy", "%s", joules(c->last).s);
  else if (why(t, g, "energy"))
    reason_line(out, 4, "energy", why(t, g, "energy"));
  if ((c = ctr(t, g, "temp_c")))
    line(out, "temperature", "mean %s C, max %s C", sig3(c->mean).s,
         sig3(c->max).s);
  else if (why(t, g, "temp"))
    reason_line(out, 4, "temperature", why(t, g, "temp"));
  if ((c = ctr(t, g, "sm_clock_mhz")))
    line(out, "SM clock", "mean %s MHz, min %s MHz, max %s MHz",
         sig3(c->mean).s, sig3(c->min).s, sig3(c->max).s);
  else if (why(t, g, "sm_clock"))
    reason_line(out, 4, "SM clock", why(t, g, "sm_clock"));
  if ((c = ctr(t, g, "mem_clock_mhz")))
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
  if ((c = ctr(t, g, "pcie_tx_bytes_per_s"))) {
    c2 = ctr(t, g, "pcie_rx_bytes_per_s");
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
      !strcmp(w0, w3) && !ctr(t, g, "sm_active_pct")) {
    reason_line(out, 4, "GPM activity", w0);
  } else {
    pct_line(out, t, g, "SM active", "sm_active_pct", "sm_active");
    pct_line(out, t, g, "SM occupancy", "sm_occupancy_pct", "sm_occupancy");
    pct_line(out, t, g, "tensor active", "tensor_active_pct",
             "tensor_active");
    pct_line(out, t, g, "DRAM bandwidth", "dram_bw_pct", "dram_bw");
  }
  if ((c = ctr(t, g, "xid_total")) && c->last > 0) {
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

int pp_report_gpu(FILE *out, const pp_trace *t) {
  if (!out || !t || !t->analyzed)
    return -1;
  int n = gpu_slots(t);
  const char *none = pp_trace_meta(t, "unavailable.gpu");
  if (n == 0) {
    if (none) {
      fputs("\nGPU\n", out);
      reason_line(out, 2, "GPU", none);
    }
    return ferror(out) ? -1 : 0;
  }
  fputs("\nGPU (NVML)\n", out);
  for (int g = 0; g < n; g++)
    gpu_block(out, t, g);
  const pp_counter_stats *all = ctr(t, -1, "energy_j");
  const pp_counter_stats *run = ctr(t, -1, "run_energy_j");
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
  return ferror(out) ? -1 : 0;
}
