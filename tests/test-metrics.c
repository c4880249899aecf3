/* SPDX-License-Identifier: MIT */
/*
 * The metric registry (src/metrics/registry.h): names to rows, and every
 * metric the sampler records is a row of the table, recorded in the
 * library's own namespace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze/analyze.h"
#include "model/reader.h"
#include "metrics/registry.h"
#include "pipeprof.h"
#include "runner.h"

PP_TEST(metrics_lookup_names_indices_and_free_parts) {
  long ix;
  const char *fr;
  size_t fl;
  CHECK_EQ(pp_metric_lookup("sys.mem.total_bytes", &ix, &fr, &fl),
           PP_METRIC_SYS_MEM_TOTAL);
  CHECK_EQ(ix, -1);
  CHECK(fr == NULL);
  CHECK_EQ(pp_metric_lookup("sys.cpu12.busy_pct", &ix, NULL, NULL),
           PP_METRIC_SYS_CPUN_BUSY);
  CHECK_EQ(ix, 12);
  CHECK_EQ(pp_metric_lookup("gpu0.mem_used_bytes", &ix, NULL, NULL),
           PP_METRIC_GPU_MEM_USED);
  CHECK_EQ(ix, 0);
  CHECK_EQ(pp_metric_lookup("sys.psi.memory.some_pct", &ix, &fr, &fl),
           PP_METRIC_SYS_PSI_SOME);
  CHECK_EQ(fl, 6);
  CHECK(strncmp(fr, "memory", fl) == 0);
  CHECK_EQ(pp_metric_lookup("sys.temp.coretemp.core0_c", NULL, &fr, &fl),
           PP_METRIC_SYS_TEMP);
  CHECK(strncmp(fr, "coretemp.core0", fl) == 0 && fl == 14);
  /* specific rows before general ones */
  CHECK_EQ(pp_metric_lookup("perf.ipc", NULL, NULL, NULL), PP_METRIC_PERF_IPC);
  CHECK_EQ(pp_metric_lookup("perf.cycles.running_pct", NULL, &fr, &fl),
           PP_METRIC_PERF_RUNNING);
  CHECK_EQ(pp_metric_lookup("perf.cycles", NULL, NULL, NULL),
           PP_METRIC_PERF_EVENT);
  CHECK_EQ(pp_metric_lookup("power.package_w", NULL, NULL, NULL),
           PP_METRIC_POWER_PACKAGE);
  CHECK_EQ(pp_metric_lookup("power.dram_w", NULL, &fr, &fl),
           PP_METRIC_POWER_DOMAIN);
  /* not library metrics */
  static const char *const no[] = {
      "",  "sys.mem.total_bytesx", "sys.cpuX.busy_pct", "sys.cpu.busy",
      "gpu01.util_pct", "gpu.util_pct", "sys.cpu-1.busy_pct", "decode",
      "sys.psi..x", "sys.temp._c", "gpu999999999999.util_pct", "perf."};
  for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
    if (pp_metric_lookup(no[i], &ix, &fr, &fl) != PP_METRIC_NONE)
      PP_FAIL("\"%s\" taken for a library metric", no[i]);
  CHECK_EQ(pp_metric_lookup(NULL, NULL, NULL, NULL), PP_METRIC_NONE);
  /* every row is complete */
  for (int id = 0; id < PP_METRIC_COUNT; id++) {
    const pp_metric_def *d = pp_metric_def_of((pp_metric_id)id);
    CHECK(d && d->name && *d->name && d->help && *d->help);
    CHECK(*pp_metric_group_name(d->group));
  }
  CHECK(pp_metric_def_of(PP_METRIC_COUNT) == NULL);
}

/* The sampler over the fixture machine (tests/fixtures/sysroot/full):
 * every series it records is a library metric of the table, and a user
 * counter sharing a name stays apart in the report. */
PP_TEST_T(metrics_sampler_records_only_registered_metrics, 60) {
  char root[4200], path[4200], err[256];
  snprintf(root, sizeof root, "%s/tests/fixtures/sysroot/full",
           pp_test_srcdir());
  snprintf(path, sizeof path, "%s/m.pptrace", pp_test_tmpdir());
  setenv("PIPEPROF_SYSROOT", root, 1);
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.sample_hz = 100;
  cfg.install_signals = 0;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  pp_counter_setf("sys.mem.total_bytes", 12345); /* the user's */
  struct timespec ts = {0, 100 * 1000000L};
  nanosleep(&ts, NULL);
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis a = {0};
  CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  size_t metrics = 0, user = 0;
  for (size_t i = 0; i < t.nlocs; i++) {
    const char *n = pp_trace_loc_name(&t, (uint32_t)i);
    if (t.locs[i].kind == PP_KIND_METRIC) {
      metrics++;
      if (pp_metric_lookup(n, NULL, NULL, NULL) == PP_METRIC_NONE)
        PP_FAIL("the sampler recorded \"%s\", which the registry lacks", n);
    } else if (!strcmp(n, "sys.mem.total_bytes")) {
      user++;
    }
  }
  CHECK_GE(metrics, 20);
  CHECK_EQ(user, 1);
  /* the system report reads the library's value, not the user's */
  const pp_counter_stats *m = pp_profile_metric(&a, "sys.mem.total_bytes");
  CHECK(m != NULL);
  CHECK(m->last != 12345);
  CHECK_GT(m->last, 1e6); /* the fixture's MemTotal */
  pp_analysis_free(&a);
  pp_trace_free(&t);
}
