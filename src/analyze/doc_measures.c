/* SPDX-License-Identifier: MIT */
/*
 * The results document's tables of sampled measures (results/measures.h):
 * the machine's ("system_host": CPU, load, memory, pressure, rates) and
 * the process tree's ("process_tree_measures": CPU, threads, memory,
 * fault and disk rates), each measure's mean, min, max and last sample,
 * or why it was not measured.
 */
#include <inttypes.h>
#include <stdio.h>

#include "analyze.h"
#include "internal.h"
#include "analyze/system.h"
#include "results/doc.h"
#include "results/measures.h"

/* A sampled figure of the system as a measure. */
static pp_measure_figures measure(const char *key, const char *label,
                                  pp_value_unit unit, const pp_sys_fig *f) {
  return (pp_measure_figures){.key = key,
                              .label = label,
                              .unit = unit,
                              .ok = f->ok,
                              .mean = f->mean,
                              .min = f->min,
                              .max = f->max,
                              .last = f->last,
                              .samples = f->samples,
                              .why = f->why};
}

/* A measure of the system's registry row id: its JSON key, label, unit. */
typedef struct measure_row {
  const char *key, *label;
  pp_value_unit unit;
  pp_metric_id id;
} measure_row;

/* The measures of rows (n of them) into m; returns n. */
static size_t measures_of(const pp_system *s, const measure_row *rows,
                          size_t n, pp_measure_figures *m) {
  for (size_t i = 0; i < n; i++)
    m[i] = measure(rows[i].key, rows[i].label, rows[i].unit,
                   &s->m[rows[i].id]);
  return n;
}

/* "system_host": the machine's sampled measures (CPU, load, memory,
 * pressure, rates), when the trace has system samples or says why not. */
static int system_host(const pp_system *s, pp_doc *d) {
  if (!s->show_system)
    return 0;
  static const measure_row rows[] = {
      {"cpu_busy_pct", "CPU busy", PP_VALUE_PCT, PP_METRIC_SYS_CPU_BUSY},
      {"cpu_user_pct", "CPU user", PP_VALUE_PCT, PP_METRIC_SYS_CPU_USER},
      {"cpu_system_pct", "CPU system", PP_VALUE_PCT, PP_METRIC_SYS_CPU_SYSTEM},
      {"cpu_iowait_pct", "CPU iowait", PP_VALUE_PCT, PP_METRIC_SYS_CPU_IOWAIT},
      {"cpu_steal_pct", "CPU steal", PP_VALUE_PCT, PP_METRIC_SYS_CPU_STEAL},
      {"load1", "load (1 min)", PP_VALUE_NUMBER, PP_METRIC_SYS_LOAD1},
      {"mem_used_bytes", "memory used", PP_VALUE_BYTES,
       PP_METRIC_SYS_MEM_USED},
      {"mem_available_bytes", "memory available", PP_VALUE_BYTES,
       PP_METRIC_SYS_MEM_AVAIL},
      {"mem_total_bytes", "memory total", PP_VALUE_BYTES,
       PP_METRIC_SYS_MEM_TOTAL},
      {"swap_used_bytes", "swap used", PP_VALUE_BYTES,
       PP_METRIC_SYS_SWAP_USED},
  };
  enum { NROWS = sizeof rows / sizeof rows[0] };
  pp_measure_figures m[NROWS + 6 + 2];
  char keys[6][40], labels[6][40];
  size_t n = measures_of(s, rows, NROWS, m);
  for (size_t i = 0; i < 3; i++) { /* pressure stall (PSI) */
    const pp_sys_psi *p = &s->psi[i];
    for (int full = 0; full < 2; full++) {
      size_t k = i * 2 + (size_t)full;
      snprintf(keys[k], sizeof keys[k], "psi_%s_%s_pct", p->resource,
               full ? "full" : "some");
      snprintf(labels[k], sizeof labels[k], "pressure %s %s", p->resource,
               full ? "full" : "some");
      m[n++] = measure(keys[k], labels[k], PP_VALUE_PCT,
                       full ? &p->full : &p->some);
    }
  }
  m[n++] = measure("ctxt_per_s", "context switches", PP_VALUE_RATE,
                   &s->m[PP_METRIC_SYS_CTXT_RATE]);
  m[n++] = measure("intr_per_s", "interrupts", PP_VALUE_RATE,
                   &s->m[PP_METRIC_SYS_INTR_RATE]);
  char note[96] = "";
  if (s->has_hz && s->hz > 0 && s->samples)
    snprintf(note, sizeof note, "sampled at %.6g Hz, %" PRIu64 " samples",
             s->hz, s->samples);
  else if (s->has_hz && s->hz > 0)
    snprintf(note, sizeof note, "sampled at %.6g Hz", s->hz);
  else if (s->samples)
    snprintf(note, sizeof note, "%" PRIu64 " samples", s->samples);
  pp_table *t = pp_results_measures(d, "system_host", "system",
                                    *note ? note : NULL, m, n);
  pp_table_empty(t, "no figure of the machine was measured");
  return t ? 0 : -1;
}

/* "process_tree_measures": the tree's sampled gauges. */
static int tree_measures(pp_doc *d, const pp_system *s) {
  static const measure_row rows[] = {
      {"cpu_pct", "CPU (100% = one core)", PP_VALUE_PCT, PP_METRIC_PROC_CPU},
      {"user_pct", "CPU user", PP_VALUE_PCT, PP_METRIC_PROC_USER},
      {"system_pct", "CPU system", PP_VALUE_PCT, PP_METRIC_PROC_SYSTEM},
      {"threads", "threads", PP_VALUE_COUNT, PP_METRIC_PROC_THREADS},
      {"procs", "processes", PP_VALUE_COUNT, PP_METRIC_PROC_PROCS},
      {"rss_bytes", "RSS", PP_VALUE_BYTES, PP_METRIC_PROC_RSS},
      {"hwm_bytes", "VmHWM", PP_VALUE_BYTES, PP_METRIC_PROC_HWM},
      {"vsize_bytes", "virtual memory", PP_VALUE_BYTES,
       PP_METRIC_PROC_VSIZE},
      {"minflt_per_s", "page faults, minor", PP_VALUE_RATE,
       PP_METRIC_PROC_MINFLT_RATE},
      {"majflt_per_s", "page faults, major", PP_VALUE_RATE,
       PP_METRIC_PROC_MAJFLT_RATE},
      {"read_bytes_per_s", "disk read", PP_VALUE_BYTE_RATE,
       PP_METRIC_PROC_READ_RATE},
      {"write_bytes_per_s", "disk written", PP_VALUE_BYTE_RATE,
       PP_METRIC_PROC_WRITE_RATE},
  };
  enum { NROWS = sizeof rows / sizeof rows[0] };
  if (!s->show_tree)
    return 0;
  pp_measure_figures m[NROWS];
  measures_of(s, rows, NROWS, m);
  pp_table *t = pp_results_measures(d, "process_tree_measures",
                                    "process tree, sampled", NULL, m, NROWS);
  return t ? 0 : -1;
}

int pp__measure_tables(const struct pp_system *s, pp_doc *d) {
  return system_host(s, d) || tree_measures(d, s) ? -1 : 0;
}
