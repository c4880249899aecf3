/* SPDX-License-Identifier: MIT */
/*
 * CPU energy through RAPL: the powercap zones under
 * <sysroot>/sys/class/powercap (intel-rapl:N packages and psys,
 * intel-rapl:N:M core/uncore/dram sub-zones; AMD kernels expose the same
 * names, some an amd-rapl: prefix), falling back to perf's `power` PMU
 * (energy-pkg, energy-cores, energy-ram, ... system-wide, one CPU per
 * package) when powercap is absent or unreadable. Reads give cumulative
 * joules per domain since open, with counter wraparound handled, and the
 * average power since the previous read. Also the carbon conversion and the
 * per-process attribution estimate. Not API: used by `pipeprof run` and the
 * sampler.
 *
 * Invariants: domains keep their index from open to close; energy never
 * decreases; a domain that was unavailable at open stays so (reason kept).
 */
#ifndef PP_COLLECT_POWER_H
#define PP_COLLECT_POWER_H

#include <stddef.h>
#include <stdint.h>

#define PP_POWER_MAX_DOMAINS 64

/* World-average grid carbon intensity in gCO2eq/kWh used when none is
 * configured: CodeCarbon's fallback, from IEA 2019 figures. Reports must
 * print the intensity they used. */
#define PP_CARBON_DEFAULT_G_PER_KWH 475.0

/* Label to print next to pp_collect_power_attribute results. */
#define PP_POWER_ATTRIBUTION_LABEL                                          \
  "estimate: host energy x process CPU share"

typedef enum pp_power_kind {
  PP_POWER_PACKAGE, /* whole socket (includes core and uncore) */
  PP_POWER_CORE,    /* cores of a package (PP0) */
  PP_POWER_UNCORE,  /* integrated GPU / uncore (PP1) */
  PP_POWER_DRAM,
  PP_POWER_PSYS, /* platform (SoC + more), not a sum of the others */
  PP_POWER_OTHER
} pp_power_kind;

typedef enum pp_power_source {
  PP_POWER_NONE,
  PP_POWER_POWERCAP, /* /sys/class/powercap RAPL zones */
  PP_POWER_PERF_PMU  /* perf_event_open on the `power` PMU */
} pp_power_source;

/* One energy domain in a sample. */
typedef struct pp_power_domain {
  char label[48];      /* "package-0", "package-0/dram", "psys" */
  char zone[48];       /* "intel-rapl:0:1" or "power/energy-ram" */
  pp_power_kind kind;
  int package;        /* package index, -1 when unknown */
  int available;      /* readable at open */
  const char *reason; /* why not available; owned by the handle */
  double energy_j;    /* cumulative since open, J */
  int has_power;      /* power_w set (needs a later timestamp) */
  double power_w;     /* average W since the previous read (or open) */
  uint64_t nwraps;    /* counter wraparounds seen */
  int advanced;       /* the counter has moved since open: only then is
                         energy_j a measurement (a counter that exists
                         but stays put, as some VMs' perf energy-psys
                         does, measures nothing) */
} pp_power_domain;

typedef struct pp_power_sample {
  pp_power_source source;
  int ndomains;
  pp_power_domain d[PP_POWER_MAX_DOMAINS];
  /* Sum over available package domains whose counter has advanced
   * (sub-zones and psys are inside or overlap a package and are not
   * added): host CPU energy and power. Set only with has_package_energy
   * (a package domain that advanced). */
  int has_package_energy;
  double package_energy_j;
  int has_package_power;
  double package_power_w;
  uint64_t t_ns; /* timestamp of this read, CLOCK_MONOTONIC ns */
} pp_power_sample;

typedef struct pp_collect_power pp_collect_power;

/* Discover the energy domains and take the baseline reading.
 * @param sysroot  directory holding sys/ (NULL or "" for "/"): tests point
 *                 it at a fixture tree
 * @return a handle, also when nothing is readable (see
 *         pp_collect_power_reason), or NULL with errno ENOMEM.
 * Never blocks. One thread at a time per handle. */
pp_collect_power *pp_collect_power_open(const char *sysroot);

/* Where the energy comes from. */
pp_power_source pp_collect_power_source(const pp_collect_power *p);

/* "unavailable: <why>" when no domain is readable, NULL otherwise. Owned by
 * the handle. e.g. "unavailable: no RAPL interface (powercap absent, no perf
 * power PMU)". */
const char *pp_collect_power_reason(const pp_collect_power *p);

/* Read every domain now (CLOCK_MONOTONIC). Returns the number of available
 * domains, or -1 with errno EINVAL for NULL arguments. A domain whose read
 * fails keeps its previous energy and has no power. */
int pp_collect_power_read(pp_collect_power *p, pp_power_sample *out);

/* As pp_collect_power_read with an explicit timestamp (CLOCK_MONOTONIC ns,
 * same clock as open's baseline; tests inject it). Power is set only when
 * now_ns is later than the previous read. */
int pp_collect_power_read_at(pp_collect_power *p, uint64_t now_ns,
                             pp_power_sample *out);

/* "unavailable: ..." when the source has readable domains but none of
 * them has advanced since open (seconds: how long they were watched), into
 * buf; NULL when one has, or there is no source (see
 * pp_collect_power_reason). */
const char *pp_collect_power_stuck_reason(const pp_collect_power *p,
                                          double seconds, char *buf,
                                          size_t len);

/* Close and free. NULL is a no-op. */
void pp_collect_power_close(pp_collect_power *p);

/* CLOCK_MONOTONIC in ns, the clock of pp_collect_power_read. */
uint64_t pp_collect_power_now_ns(void);

/* Grams of CO2eq for `joules` at grid intensity g_per_kwh (gCO2eq/kWh);
 * g_per_kwh <= 0 or NaN selects PP_CARBON_DEFAULT_G_PER_KWH.
 * grams = joules / 3.6e6 * g_per_kwh. */
double pp_carbon_grams(double joules, double g_per_kwh);

/* Energy attributed to a process: host_joules * cpu_share, cpu_share
 * clamped to 0..1 (the process's share of host CPU time over the same
 * interval). An estimate, not a measurement: print
 * PP_POWER_ATTRIBUTION_LABEL with it. */
double pp_collect_power_attribute(double host_joules, double cpu_share);

/* ---- tests only ----------------------------------------------------- */

/* Fault injection on the files the collector opens: fn(path) returns an
 * errno to fail that open with (0: open normally). NULL removes the hook.
 * Not thread-safe: set it before pp_collect_power_open. */
typedef int (*pp_collect_power_fault_fn)(const char *path);
void pp_collect_power_set_fault_hook(pp_collect_power_fault_fn fn);

#endif /* PP_COLLECT_POWER_H */
