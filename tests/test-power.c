/* SPDX-License-Identifier: MIT */
/*
 * Tests of the RAPL energy collector on fixture sysroots
 * (tests/fixtures/powercap): zone discovery and labels for two packages
 * with sub-zones, counter wraparound with injected timestamps, EACCES on
 * energy_uj through the fault hook, the perf power PMU fallback on crafted
 * counter reads, the "no RAPL interface" reason, the carbon conversion and
 * the attribution estimate, and whatever this machine offers.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "collect/perf.h"
#include "collect/power.h"
#include "runner.h"

#define PKG_RANGE 262143328850ull
#define DRAM_RANGE 65712999613ull

static void fixture_path(char *out, size_t len, const char *name) {
  snprintf(out, len, "%s/tests/fixtures/powercap/%s", pp_test_srcdir(),
           name);
}

/* Copy fixture `name` into the scratch directory (merging trees). */
static void copy_fixture(const char *name) {
  char src[1024];
  fixture_path(src, sizeof src, name);
  char *out = NULL;
  int rc = pp_test_run(&out, "cp -R '%s/.' '%s/'", src, pp_test_tmpdir());
  if (rc != 0)
    PP_FAIL("cp failed: %s", out ? out : "");
  free(out);
}

static void write_value(const char *zone, unsigned long long v) {
  char path[1024];
  snprintf(path, sizeof path, "%s/sys/class/powercap/%s/energy_uj",
           pp_test_tmpdir(), zone);
  FILE *f = fopen(path, "w"); /* same inode: the collector keeps it open */
  CHECK(f != NULL);
  fprintf(f, "%llu\n", v);
  CHECK_EQ(fclose(f), 0);
}

PP_TEST(power_two_packages) {
  char root[1024];
  fixture_path(root, sizeof root, "two-packages");
  pp_collect_power *p = pp_collect_power_open(root);
  CHECK(p != NULL);
  CHECK_EQ(pp_collect_power_source(p), PP_POWER_POWERCAP);
  CHECK(pp_collect_power_reason(p) == NULL);
  pp_power_sample s;
  CHECK_EQ(pp_collect_power_read_at(p, pp_collect_power_now_ns() + 1000000000u,
                                    &s),
           6);
  CHECK_EQ(s.ndomains, 6); /* not intel-rapl, not intel-rapl-mmio:0 */
  static const struct {
    const char *label, *zone;
    pp_power_kind kind;
    int package;
  } want[] = {
      {"package-0", "intel-rapl:0", PP_POWER_PACKAGE, 0},
      {"package-0/core", "intel-rapl:0:0", PP_POWER_CORE, 0},
      {"package-0/dram", "intel-rapl:0:1", PP_POWER_DRAM, 0},
      {"package-1", "intel-rapl:1", PP_POWER_PACKAGE, 1},
      {"package-1/core", "intel-rapl:1:0", PP_POWER_CORE, 1},
      {"package-1/dram", "intel-rapl:1:1", PP_POWER_DRAM, 1},
  };
  for (int i = 0; i < 6; i++) {
    CHECK_STR(s.d[i].label, want[i].label);
    CHECK_STR(s.d[i].zone, want[i].zone);
    CHECK_EQ(s.d[i].kind, want[i].kind);
    CHECK_EQ(s.d[i].package, want[i].package);
    CHECK(s.d[i].available);
    CHECK(s.d[i].reason == NULL);
    CHECK_NEAR(s.d[i].energy_j, 0, 0); /* nothing changed since open */
    CHECK(!s.d[i].advanced);           /* so nothing is measured yet */
  }
  CHECK(!s.has_package_energy);
  CHECK(!s.has_package_power);
  /* A read at the same instant gives no power. */
  CHECK_EQ(pp_collect_power_read_at(p, s.t_ns, &s), 6);
  CHECK(!s.d[0].has_power);
  CHECK(!s.has_package_power);
  pp_collect_power_close(p);
  pp_collect_power_close(NULL);
}

/* A counter that exists but stays put is not a measurement: no package
 * energy, and a reason naming it, until it moves. */
PP_TEST(power_stuck_counter) {
  copy_fixture("two-packages");
  pp_collect_power *p = pp_collect_power_open(pp_test_tmpdir());
  CHECK(p != NULL);
  CHECK_EQ(pp_collect_power_source(p), PP_POWER_POWERCAP);
  uint64_t t0 = pp_collect_power_now_ns();
  pp_power_sample s;
  char why[256];
  for (int i = 1; i <= 3; i++) { /* three reads, no change */
    CHECK_EQ(pp_collect_power_read_at(p, t0 + i * 500000000ull, &s), 6);
    CHECK(!s.has_package_energy);
    CHECK(!s.has_package_power);
    for (int d = 0; d < 6; d++)
      CHECK(!s.d[d].advanced);
  }
  CHECK_STR(pp_collect_power_stuck_reason(p, 1.5, why, sizeof why),
            "unavailable: intel-rapl:0 and the other energy counters did not "
            "advance in 1.5 s (a counter that does not move is not a "
            "measurement)");
  /* package-1 moves (+3 J in 1 s): it is measured, package-0 is not. */
  write_value("intel-rapl:1", 203000000);
  CHECK_EQ(pp_collect_power_read_at(p, t0 + 2500000000u, &s), 6);
  CHECK(!s.d[0].advanced);
  CHECK(s.d[3].advanced);
  CHECK_STR(s.d[3].label, "package-1");
  CHECK(s.has_package_energy);
  CHECK_NEAR(s.package_energy_j, 3.0, 1e-9);
  CHECK(s.has_package_power);
  CHECK_NEAR(s.package_power_w, 3.0, 1e-9);
  CHECK(pp_collect_power_stuck_reason(p, 2.5, why, sizeof why) == NULL);
  pp_collect_power_close(p);
  /* No source: the other reason says why (pp_collect_power_reason). */
  p = pp_collect_power_open("/nonexistent-sysroot");
  CHECK(pp_collect_power_stuck_reason(p, 1, why, sizeof why) == NULL);
  pp_collect_power_close(p);
}

PP_TEST(power_wraparound) {
  copy_fixture("two-packages");
  pp_collect_power *p = pp_collect_power_open(pp_test_tmpdir());
  CHECK(p != NULL);
  uint64_t t0 = pp_collect_power_now_ns();
  pp_power_sample s;
  CHECK_EQ(pp_collect_power_read_at(p, t0 + 1000000000u, &s), 6);
  CHECK_NEAR(s.d[0].energy_j, 0, 0);

  /* package-0 wraps: 100000000 -> 1000; package-0/dram goes +0.5 J. */
  write_value("intel-rapl:0", 1000);
  write_value("intel-rapl:0:1", 20500000);
  CHECK_EQ(pp_collect_power_read_at(p, t0 + 1500000000u, &s), 6);
  double e = (double)(PKG_RANGE - 100000000ull + 1000ull) / 1e6;
  CHECK_NEAR(e, 262043.32985, 1e-9); /* by hand */
  CHECK_NEAR(s.d[0].energy_j, e, 0);
  CHECK_EQ_U(s.d[0].nwraps, 1);
  CHECK(s.d[0].has_power);
  CHECK_NEAR(s.d[0].power_w, e / 0.5, 1e-9);
  CHECK_NEAR(s.d[2].energy_j, 0.5, 0);
  CHECK_NEAR(s.d[2].power_w, 1.0, 1e-12);
  CHECK_EQ_U(s.d[2].nwraps, 0);
  CHECK_NEAR(s.d[3].energy_j, 0, 0); /* package-1 unchanged */
  CHECK_NEAR(s.package_energy_j, e, 0);
  CHECK_NEAR(s.package_power_w, e / 0.5, 1e-9);

  /* After the wrap the counter goes on normally: +2 J in 2 s. */
  write_value("intel-rapl:0", 2001000);
  CHECK_EQ(pp_collect_power_read_at(p, t0 + 3500000000u, &s), 6);
  CHECK_NEAR(s.d[0].energy_j, e + 2.0, 1e-9);
  CHECK_NEAR(s.d[0].power_w, 1.0, 1e-9);
  CHECK_EQ_U(s.d[0].nwraps, 1);

  /* dram wraps at its own range. */
  write_value("intel-rapl:0:1", 7);
  CHECK_EQ(pp_collect_power_read_at(p, t0 + 4500000000u, &s), 6);
  double dram = 0.5 + (double)(DRAM_RANGE - 20500000ull + 7ull) / 1e6;
  CHECK_NEAR(s.d[2].energy_j, dram, 1e-9);
  CHECK_EQ_U(s.d[2].nwraps, 1);
  pp_collect_power_close(p);
}

static int fail_energy_uj(const char *path) {
  size_t n = strlen(path);
  return n >= 10 && strcmp(path + n - 10, "/energy_uj") == 0 ? EACCES : 0;
}

#define EACCES_REASON                                                       \
  "permission denied reading energy_uj (RAPL is root-only on this kernel)"

PP_TEST(power_eacces_reason) {
  char root[1024];
  fixture_path(root, sizeof root, "two-packages");
  pp_collect_power_set_fault_hook(fail_energy_uj);
  pp_collect_power *p = pp_collect_power_open(root);
  pp_collect_power_set_fault_hook(NULL);
  CHECK(p != NULL);
  CHECK_EQ(pp_collect_power_source(p), PP_POWER_NONE);
  CHECK_STR(pp_collect_power_reason(p),
            "unavailable: " EACCES_REASON "; no perf power PMU");
  pp_power_sample s;
  CHECK_EQ(pp_collect_power_read(p, &s), 0);
  CHECK_EQ(s.ndomains, 6);
  for (int i = 0; i < s.ndomains; i++) {
    CHECK(!s.d[i].available);
    CHECK_STR(s.d[i].reason, EACCES_REASON);
    CHECK(!s.d[i].has_power);
  }
  CHECK_STR(s.d[4].label, "package-1/core");
  CHECK(!s.has_package_power);
  pp_collect_power_close(p);
}

PP_TEST(power_absent) {
  pp_collect_power *p = pp_collect_power_open(pp_test_tmpdir());
  CHECK(p != NULL);
  CHECK_EQ(pp_collect_power_source(p), PP_POWER_NONE);
  CHECK_STR(pp_collect_power_reason(p),
            "unavailable: no RAPL interface (powercap absent, no perf power "
            "PMU)");
  pp_power_sample s;
  CHECK_EQ(pp_collect_power_read(p, &s), 0);
  CHECK_EQ(s.ndomains, 0);
  CHECK_EQ(pp_collect_power_read(NULL, &s), -1);
  CHECK_EQ(pp_collect_power_read(p, NULL), -1);
  pp_collect_power_close(p);
}

/* ---- perf power PMU fallback ------------------------------------------ */

static int pmu_wfd[8];
static uint64_t pmu_config[8];
static int pmu_n;

static void pmu_push(int i, uint64_t raw) {
  CHECK_EQ(write(pmu_wfd[i], &raw, sizeof raw), (ssize_t)sizeof raw);
}

static int hook_pmu(struct perf_event_attr *a, pid_t pid, int cpu, int g,
                    unsigned long fl) {
  CHECK_EQ(a->type, 24);
  CHECK_EQ(a->size, sizeof *a);
  CHECK_EQ(pid, -1); /* system-wide */
  CHECK_EQ(cpu, 0);  /* from cpumask */
  CHECK(pmu_n < 8);
  int pfd[2];
  CHECK_EQ(pipe2(pfd, O_CLOEXEC | O_NONBLOCK), 0);
  pmu_wfd[pmu_n] = pfd[1];
  pmu_config[pmu_n] = a->config;
  pmu_push(pmu_n, (uint64_t)1 << 32); /* baseline: 1 J */
  pmu_n++;
  return pfd[0];
}

static int hook_eacces(struct perf_event_attr *a, pid_t pid, int cpu, int g,
                       unsigned long fl) {
  errno = EACCES;
  return -1;
}

PP_TEST(power_pmu_fallback) {
  copy_fixture("two-packages");
  copy_fixture("perf-pmu");
  pmu_n = 0;
  pp_collect_power_set_fault_hook(fail_energy_uj); /* powercap unreadable */
  pp_collect_perf_set_open_hook(hook_pmu);
  pp_collect_power *p = pp_collect_power_open(pp_test_tmpdir());
  pp_collect_perf_set_open_hook(NULL);
  pp_collect_power_set_fault_hook(NULL);
  CHECK(p != NULL);
  CHECK_EQ(pp_collect_power_source(p), PP_POWER_PERF_PMU);
  CHECK(pp_collect_power_reason(p) == NULL);
  CHECK_EQ(pmu_n, 2);
  CHECK_EQ_U(pmu_config[0], 2); /* energy-pkg: event=0x02 */
  CHECK_EQ_U(pmu_config[1], 3); /* energy-ram: event=0x03 */

  uint64_t t0 = pp_collect_power_now_ns();
  pp_power_sample s;
  pmu_push(0, (uint64_t)1 << 32);
  pmu_push(1, (uint64_t)1 << 32);
  CHECK_EQ(pp_collect_power_read_at(p, t0 + 1000000000u, &s), 2);
  CHECK_EQ(s.ndomains, 2);
  CHECK_EQ(s.source, PP_POWER_PERF_PMU);
  CHECK_STR(s.d[0].label, "package-0");
  CHECK_STR(s.d[0].zone, "power/energy-pkg");
  CHECK_EQ(s.d[0].kind, PP_POWER_PACKAGE);
  CHECK_STR(s.d[1].label, "package-0/dram");
  CHECK_EQ(s.d[1].kind, PP_POWER_DRAM);
  CHECK_NEAR(s.d[0].energy_j, 0, 0);

  pmu_push(0, (uint64_t)3 << 32); /* +2 J exactly (scale 2^-32) */
  pmu_push(1, ((uint64_t)1 << 32) + ((uint64_t)1 << 31)); /* +0.5 J */
  CHECK_EQ(pp_collect_power_read_at(p, t0 + 3000000000u, &s), 2);
  CHECK_NEAR(s.d[0].energy_j, 2.0, 0);
  CHECK_NEAR(s.d[0].power_w, 1.0, 1e-12);
  CHECK_NEAR(s.d[1].energy_j, 0.5, 0);
  CHECK_NEAR(s.package_energy_j, 2.0, 0);

  /* An empty pipe (a failed read) keeps the energy and gives no power. */
  CHECK_EQ(pp_collect_power_read_at(p, t0 + 4000000000u, &s), 2);
  CHECK_STR(s.d[0].reason, "read failed");
  CHECK(!s.d[0].has_power);
  CHECK_NEAR(s.d[0].energy_j, 2.0, 0);
  /* The next good read measures power since the last good one. */
  pmu_push(0, (uint64_t)6 << 32);
  pmu_push(1, (uint64_t)2 << 32);
  CHECK_EQ(pp_collect_power_read_at(p, t0 + 5000000000u, &s), 2);
  CHECK_NEAR(s.d[0].energy_j, 5.0, 0);
  CHECK_NEAR(s.d[0].power_w, 1.5, 1e-12);
  pp_collect_power_close(p);
  for (int i = 0; i < pmu_n; i++)
    close(pmu_wfd[i]);
}

PP_TEST(power_pmu_refused) {
  char root[1024];
  fixture_path(root, sizeof root, "perf-pmu");
  pp_collect_perf_set_open_hook(hook_eacces);
  pp_collect_power *p = pp_collect_power_open(root);
  pp_collect_perf_set_open_hook(NULL);
  CHECK(p != NULL);
  CHECK_EQ(pp_collect_power_source(p), PP_POWER_NONE);
  char want[256];
  snprintf(want, sizeof want,
           "unavailable: powercap absent; perf power PMU: permission denied "
           "(perf_event_paranoid=%d; run as root or lower it)",
           pp_collect_perf_paranoid());
  CHECK_STR(pp_collect_power_reason(p), want);
  pp_collect_power_close(p);
}

PP_TEST(power_carbon_and_attribution) {
  CHECK_NEAR(pp_carbon_grams(3.6e6, 475.0), 475.0, 0); /* 1 kWh */
  CHECK_NEAR(pp_carbon_grams(7.2e6, 100.0), 200.0, 0);
  CHECK_NEAR(pp_carbon_grams(3.6e6, 0), PP_CARBON_DEFAULT_G_PER_KWH, 0);
  CHECK_NEAR(pp_carbon_grams(3.6e6, -1), 475.0, 0);
  CHECK_NEAR(pp_carbon_grams(3.6e6, NAN), 475.0, 0);
  CHECK_NEAR(pp_carbon_grams(1000.0, 475.0), 1000.0 / 3.6e6 * 475.0, 0);
  CHECK_NEAR(pp_carbon_grams(0, 475.0), 0, 0);
  CHECK_NEAR(pp_collect_power_attribute(100.0, 0.25), 25.0, 0);
  CHECK_NEAR(pp_collect_power_attribute(100.0, 1.5), 100.0, 0);
  CHECK_NEAR(pp_collect_power_attribute(100.0, -0.5), 0, 0);
  CHECK_NEAR(pp_collect_power_attribute(100.0, NAN), 0, 0);
  CHECK_CONTAINS(PP_POWER_ATTRIBUTION_LABEL, "estimate");
}

/* Whatever this machine has: readable energy, or a reason. */
PP_TEST(power_this_machine) {
  pp_collect_power *p = pp_collect_power_open(NULL);
  CHECK(p != NULL);
  pp_power_sample s;
  int n = pp_collect_power_read(p, &s);
  const char *why = pp_collect_power_reason(p);
  if (why) {
    printf("# %s\n", why);
    CHECK_EQ(strncmp(why, "unavailable: ", 13), 0);
    CHECK_EQ(n, 0);
    CHECK_EQ(s.source, PP_POWER_NONE);
  } else {
    CHECK_GT(n, 0);
    CHECK(s.source != PP_POWER_NONE);
    for (int i = 0; i < s.ndomains; i++) {
      CHECK(s.d[i].energy_j >= 0);
      printf("# %s (%s): %s\n", s.d[i].label, s.d[i].zone,
             s.d[i].available ? "available" : s.d[i].reason);
    }
  }
  pp_collect_power_close(p);
}
