/* SPDX-License-Identifier: MIT */
/*
 * Tests of the system report and its summary JSON member
 * (src/export/report_system.c). Traces are built by hand with counters
 * named as the sampler names them (src/core/sampler.h) and META entries
 * ("run.*", "sampler.hz", "unavailable.<group>", ...), analysed, and
 * rendered to memory: the lines and numbers are checked, a trace with only
 * reasons prints them, a trace with neither prints nothing, and no "nan" or
 * "inf" ever appears. With jansson (PP_HAVE_JANSSON) the JSON is parsed and
 * its numbers compared with the inputs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "export/export.h"
#include "export/jsonw.h"
#include "format/pptrace.h"
#include "internal.h"
#include "runner.h"
#include "trace_builder.h"

#ifdef PP_HAVE_JANSSON
#include <jansson.h>
#endif

/* ---- trace builder (tests/trace_builder.c), one thread at index 0 ---- */

static uint32_t loc_add(pp_trace *t, const char *name, uint32_t kind) {
  return tb_loc(t, name, kind);
}

static void trace_init(pp_trace *t) {
  memset(t, 0, sizeof *t);
  t->pid = 77;
  tb_thread(t, 77, "main");
}

static pp_event *ev_add(pp_trace *t, int64_t ts, uint32_t loc, uint8_t type) {
  return tb_ev(t, 0, ts, loc, type);
}

/* Float samples of counter `name` at ts 1000, 2000, ... (n values). */
static void ctr_f(pp_trace *t, const char *name, int n, const double *v) {
  uint32_t l = loc_add(t, name, PP_KIND_COUNTER);
  for (int i = 0; i < n; i++)
    ev_add(t, 1000 * (i + 1), l, PPT_EV_COUNTER_SETF)->v.f = v[i];
}

/* Integer samples, as the sampler records counts and bytes. */
static void ctr_i(pp_trace *t, const char *name, int n, const int64_t *v) {
  uint32_t l = loc_add(t, name, PP_KIND_COUNTER);
  for (int i = 0; i < n; i++)
    ev_add(t, 1000 * (i + 1), l, PPT_EV_COUNTER_SET)->v.i = v[i];
}

#define CF(t, name, ...)                                                    \
  ctr_f(t, name, (int)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)),   \
        (double[]){__VA_ARGS__})
#define CI(t, name, ...)                                                    \
  ctr_i(t, name, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
        (int64_t[]){__VA_ARGS__})

#define meta_add tb_meta
#define trace_free pp_trace_free

static char *render(const pp_analysis *t) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  CHECK(f != NULL);
  CHECK_EQ(pp_report_system(f, t), 0);
  CHECK_EQ(fclose(f), 0);
  CHECK(buf != NULL);
  return buf;
}

/* {"system": ...} as written by pp_summary_system_json. */
static char *render_json(const pp_analysis *t) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  CHECK(f != NULL);
  pp_jsonw w;
  CHECK_EQ(pp_jsonw_init(&w, f), 0);
  pp_jsonw_obj_begin(&w);
  CHECK_EQ(pp_summary_system_json(&w, t), 0);
  pp_jsonw_obj_end(&w);
  CHECK_EQ(pp_jsonw_finish(&w), 0);
  CHECK_EQ(fclose(f), 0);
  CHECK(buf != NULL);
  return buf;
}

/* No "nan" or "inf" as a word of its own, in any case ("minflt" is fine). */
static void check_no_nonfinite(const char *s) {
  for (const char *p = s; p[0] && p[1] && p[2]; p++) {
    char a = (char)(p[0] | 0x20), b = (char)(p[1] | 0x20),
         c = (char)(p[2] | 0x20);
    int word_start = p == s || !((p[-1] | 0x20) >= 'a' && (p[-1] | 0x20) <= 'z');
    if (word_start && ((a == 'n' && b == 'a' && c == 'n') ||
                       (a == 'i' && b == 'n' && c == 'f')))
      PP_FAIL("non-finite value printed at \"%.20s\" in:\n%s", p, s);
  }
}

/* ---- the full trace ----------------------------------------------------- */

/* Everything the sampler can record, plus run facts, one zone site with
 * four calls and a frame stream with three marks. */
static void build_full(pp_trace *t, pp_analysis *a) {
  trace_init(t);
  meta_add(t, "sampler.hz", "10");
  meta_add(t, "run.command", "python serve.py --batch 8");
  meta_add(t, "run.exit", "exit 0");
  meta_add(t, "run.wall_ns", "5000000000");
  meta_add(t, "run.user_ns", "2500000000");
  meta_add(t, "run.system_ns", "400000000");
  meta_add(t, "run.maxrss_bytes", "314572800"); /* 300 MiB */
  meta_add(t, "unavailable.psi_io",
           "unavailable: no such file /proc/pressure/io (kernel without PSI: "
           "needs 4.20+ and psi=1)");
  meta_add(t, "unavailable.cpufreq", "no cpufreq driver, common in VMs");
  meta_add(t, "unavailable.perf.LLC-load-misses", "not supported by the CPU");
  meta_add(t, "unavailable.psi_irq", "needs kernel 6.1+");
  meta_add(t, "perf.cycles.running_pct", "50.0");
  meta_add(t, "perf.instructions.running_pct", "100");

  CF(t, "sys.cpu.busy_pct", 40.0, 60.0);
  CF(t, "sys.cpu.user_pct", 30.0, 50.0);
  CF(t, "sys.cpu.system_pct", 8.0, 12.0);
  CF(t, "sys.cpu.iowait_pct", 0.5, 0.5);
  CF(t, "sys.cpu.steal_pct", 0.0, 0.0);
  CF(t, "sys.cpu0.busy_pct", 90.0, 97.0);
  CF(t, "sys.cpu1.busy_pct", 95.0, 80.0);
  CF(t, "sys.cpu2.busy_pct", 12.0, 3.0);
  CF(t, "sys.cpu10.busy_pct", 50.0, 1.0);
  CF(t, "sys.load1", 1.5, 3.25);
  CI(t, "sys.mem.used_bytes", INT64_C(1) << 30, INT64_C(3) << 30);
  CI(t, "sys.mem.total_bytes", INT64_C(16) << 30, INT64_C(16) << 30);
  CI(t, "sys.mem.available_bytes", INT64_C(13) << 30, INT64_C(12) << 30);
  CI(t, "sys.swap.used_bytes", 0, 0);
  CF(t, "sys.psi.cpu.some_pct", 1.0, 2.0);
  CF(t, "sys.psi.memory.some_pct", 2.0, 2.0);
  CF(t, "sys.psi.memory.full_pct", 0.5, 0.5);
  CF(t, "sys.ctxt_per_s", 12000.0, 12690.0);
  CF(t, "sys.intr_per_s", 2.5e6, 2.5e6);
  CI(t, "sys.cpu0.throttle_total", 5, 7);
  CI(t, "sys.cpu1.throttle_total", 3, 3);
  CF(t, "sys.temp.coretemp.Package_id_0_c", 55.0, 71.5);
  CF(t, "sys.temp.nvme.Composite_c", 40.0, 41.0);
  CI(t, "sys.numa0.used_bytes", INT64_C(1) << 30, INT64_C(3) << 29);

  CF(t, "proc.cpu_pct", 150.0, 250.0);
  CF(t, "proc.cpu_user_s", 1.0, 3.5); /* rusage (run.user_ns) wins */
  CF(t, "proc.cpu_system_s", 0.1, 0.3);
  CI(t, "proc.threads", 8, 12);
  CI(t, "proc.procs", 2, 3);
  CI(t, "proc.rss_bytes", INT64_C(256) << 20, INT64_C(512) << 20);
  CI(t, "proc.rss_peak_bytes", INT64_C(256) << 20, INT64_C(512) << 20);
  CI(t, "proc.hwm_bytes", INT64_C(300) << 20, INT64_C(600) << 20);
  CI(t, "proc.vsize_bytes", INT64_C(2) << 30, INT64_C(4) << 30);
  CI(t, "proc.minflt_total", 1000, 1234567);
  CI(t, "proc.majflt_total", 0, 0);
  CI(t, "proc.vol_ctxt_total", 10, 4321);
  CI(t, "proc.nonvol_ctxt_total", 1, 99);
  CI(t, "proc.read_bytes_total", 0, INT64_C(10) << 20);
  CI(t, "proc.write_bytes_total", 0, 1536);

  CI(t, "perf.cycles", 1000000000, 2000000000);
  CI(t, "perf.instructions", 1500000000, 3000000000);
  CF(t, "perf.task-clock", 600.0, 1234.5);
  CI(t, "perf.context-switches", 10, 42);
  CF(t, "perf.branch_miss_ratio", 0.02, 0.025);

  CF(t, "power.package-0_w", 20.0, 40.0);
  CF(t, "energy.package-0_j", 100.0, 600.0);
  CF(t, "power.package-0-dram_w", 5.0, 5.0);
  CF(t, "energy.package-0-dram_j", 25.0, 50.0);
  CF(t, "power.package_w", 20.0, 40.0);
  CF(t, "energy.package_j", 100.0, 600.0);

  uint32_t z = loc_add(t, "decode", PP_KIND_ZONE);
  for (int i = 0; i < 4; i++) {
    ev_add(t, 10000 + i * 100, z, PPT_EV_ZONE_BEGIN);
    ev_add(t, 10050 + i * 100, z, PPT_EV_ZONE_END);
  }
  uint32_t fr = loc_add(t, "frame", PP_KIND_FRAME);
  for (int i = 0; i < 3; i++)
    ev_add(t, 20000 + i * 1000, fr, PPT_EV_FRAME);
  CHECK_EQ(pp_analyze(t, a), 0);
}

PP_TEST(report_system_full) {
  pp_trace t;
  pp_analysis a = {0};
  build_full(&t, &a);
  char *s = render(&a);
  check_no_nonfinite(s);
  /* run */
  CHECK_CONTAINS(s, "\nrun\n");
  CHECK_CONTAINS(s, "  command:               python serve.py --batch 8\n");
  CHECK_CONTAINS(s, "  exit:                  exit 0\n");
  CHECK_CONTAINS(s, "  wall time:             5.00 s\n");
  CHECK_CONTAINS(s, "  CPU user (rusage):     2.50 s\n"
                    "  CPU system (rusage):   400 ms\n");
  /* system */
  CHECK_CONTAINS(s, "\nsystem (sampled at 10 Hz, 2 samples)\n");
  /* the machine's measures: the results document's table */
  CHECK_CONTAINS(s, "(sampled at 10 Hz, 2 samples)\n"
                    "measure                   mean       min       max"
                    "      last\n"
                    "CPU busy                 50.0%     40.0%     60.0%"
                    "     60.0%\n"
                    "CPU user                 40.0%     30.0%     50.0%"
                    "     50.0%\n");
  CHECK_CONTAINS(s, "\nCPU iowait               0.50%     0.50%     0.50%"
                    "     0.50%\n");
  CHECK_CONTAINS(s, "\nload (1 min)              2.38      1.50      3.25"
                    "      3.25\n");
  CHECK_CONTAINS(s, "\nmemory used           2.00 GiB  1.00 GiB  3.00 GiB"
                    "  3.00 GiB\n");
  CHECK_CONTAINS(s, "\nmemory available      12.5 GiB  12.0 GiB  13.0 GiB"
                    "  12.0 GiB\n");
  CHECK_CONTAINS(s, "\nmemory total          16.0 GiB  16.0 GiB  16.0 GiB"
                    "  16.0 GiB\n");
  CHECK_CONTAINS(s, "\nswap used                  0 B       0 B       0 B"
                    "       0 B\n");
  CHECK_CONTAINS(s, "\npressure cpu some        1.50%     1.00%     2.00%"
                    "     2.00%\n");
  CHECK_CONTAINS(s, "\npressure memory full     0.50%     0.50%     0.50%"
                    "     0.50%\n");
  /* not measured: said once, with the reason, after the table */
  CHECK_CONTAINS(s, "\nnote: pressure io some, pressure io full: "
                    "unavailable: no such file /proc/pressure/io (kernel "
                    "without PSI");
  CHECK(!strstr(s, "unavailable: unavailable"));
  CHECK_CONTAINS(s, "\ncontext switches      12.3 k/s  12.0 k/s  12.7 k/s"
                    "  12.7 k/s\n");
  CHECK_CONTAINS(s, "\ninterrupts            2.50 M/s  2.50 M/s  2.50 M/s"
                    "  2.50 M/s\n");
  /* no clock measured: the column says nothing and is left out */
  CHECK_CONTAINS(s, "CPU  busy, max  throttling events\n"
                    "0        97.0%              7 / 2\n"
                    "1        95.0%              3 / 0\n"
                    "2        12.0%              - / -\n"
                    "10       50.0%              - / -\n");
  CHECK_CONTAINS(s, "  thermal throttling:    10 (events, the counters' total "
                    "over 2 cores; 2 while sampled)\n");
  CHECK_CONTAINS(s, "  CPU frequency:         unavailable: no cpufreq driver, "
                    "common in VMs\n");
  CHECK_CONTAINS(s, "\ntemperatures\nsensor                     max     mean\n"
                    "coretemp.Package_id_0  71.5 \u00b0C  63.2 \u00b0C\n"
                    "nvme.Composite         41.0 \u00b0C  40.5 \u00b0C\n");
  CHECK_CONTAINS(s, "\nNUMA nodes\nnode  used, max\n0      1.50 GiB\n");
  /* process tree */
  CHECK_CONTAINS(s, "\nprocess tree\n");
  CHECK_CONTAINS(s, "  CPU time, user:           2.50 s (rusage of the run)\n"
                    "  CPU time, system:         400 ms (rusage of the "
                    "run)\n");
  /* the mean is the run's rusage CPU (2.90 s) over its wall time (5 s) */
  CHECK_CONTAINS(s, "  CPU, mean:                58.0% (CPU time over the "
                    "run's wall time; 100% = one core)\n");
  CHECK_CONTAINS(s, "  RSS peak, tree total:     512 MiB (the largest "
                    "sampled sum over the tree's processes)\n"
                    "  RSS peak, one process:    300 MiB (the largest "
                    "process's, rusage of the run)\n");
  CHECK_CONTAINS(s, "  page faults, minor:       1234567 (sampled: processes "
                    "shorter than a sample are missed)\n"
                    "  page faults, major:       0 (sampled: processes "
                    "shorter than a sample are missed)\n");
  CHECK_CONTAINS(s, "  voluntary ctx switches:   4321 (sampled: each "
                    "process's main thread; processes shorter than a sample "
                    "are missed)\n");
  CHECK_CONTAINS(s, "  involuntary ctx switches: 99 (sampled: ");
  CHECK_CONTAINS(s, "  disk read:                10.0 MiB\n"
                    "  disk written:             1.50 KiB\n");
  /* the sampled gauges: the largest CPU, threads, processes, memory */
  CHECK_CONTAINS(s, "\nprocess tree, sampled\n");
  CHECK_CONTAINS(s, "\nCPU (100% = one core)      200%      150%      250%"
                    "      250%\n");
  CHECK_CONTAINS(s, "\nthreads                      10         8        12"
                    "        12\n");
  CHECK_CONTAINS(s, "\nprocesses                  2.50         2         3"
                    "         3\n");
  CHECK_CONTAINS(s, "\nVmHWM                   450 MiB   300 MiB   600 MiB"
                    "   600 MiB\n");
  CHECK_CONTAINS(s, "\nvirtual memory         3.00 GiB  2.00 GiB  4.00 GiB"
                    "  4.00 GiB\n");
  /* perf */
  CHECK_CONTAINS(s, "\nhardware counters (perf_event, whole process tree; "
                    "counting = the share of the run the kernel counted the "
                    "event, multiplexed events scaled up)\n"
                    "event                  value  counting\n"
                    "context-switches          42         -\n"
                    "cycles            2000000000     50.0%\n"
                    "instructions      3000000000      100%\n"
                    "task-clock            1.23 s         -\n"
                    "note: LLC-load-misses: unavailable: not supported by "
                    "the CPU\n");
  CHECK(!strstr(s, "cache-references")); /* no value, no reason */
  CHECK_CONTAINS(s, "  IPC:                   1.50 (instructions per cycle)\n"
                    "  branch miss ratio:     2.50% (of branches)\n");
  CHECK(!strstr(s, "cache miss ratio"));
  /* energy */
  CHECK_CONTAINS(s, "\nenergy (RAPL, whole host)\n"
                    "domain          power, mean / max  energy\n"
                    "package-0         30.0 W / 40.0 W   600 J\n"
                    "package-0-dram    5.00 W / 5.00 W  50.0 J\n"
                    "  package power, mean:   30.0 W\n"
                    "  package power, max:    40.0 W\n"
                    "  package energy:        600 J\n"
                    "  per frame (estimate):  200 J (CPU package energy / 3 "
                    "frames of \"frame\")\n"
                    "  per call (estimate):   150 J (CPU package energy / 4 "
                    "calls of zone \"decode\")\n");
  /* 600 J / 3.6e6 * 475 = 0.0791667 g */
  CHECK_CONTAINS(s, "  gCO2eq (estimate):     0.0792 (of the CPU package "
                    "energy at 475 gCO2eq/kWh, the world average (the "
                    "default))\n");
  /* groups no section explains */
  CHECK_CONTAINS(s, "\nother metrics\n  psi_irq:");
  CHECK_CONTAINS(s, "unavailable: needs kernel 6.1+\n");
  free(s);
  pp_analysis_free(&a);
  trace_free(&t);
}

/* Sampled /proc CPU time when there is no rusage; the configured carbon
 * intensity; more than 16 cores: the first 16 rows of the per-core
 * table, and how many more the JSON has. */
PP_TEST(report_system_sampled_cpu_and_carbon) {
  pp_trace t;
  pp_analysis a = {0};
  trace_init(&t);
  meta_add(&t, "carbon.g_per_kwh", "100");
  CF(&t, "proc.cpu_user_s", 1.0, 3.5);
  CF(&t, "energy.package_j", 0.0, 36.0);
  for (int i = 0; i < 20; i++) {
    char n[64];
    snprintf(n, sizeof n, "sys.cpu%d.busy_pct", i);
    CF(&t, n, 10.0, 20.0);
  }
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = render(&a);
  check_no_nonfinite(s);
  CHECK_CONTAINS(s, "  CPU time, user:        3.50 s (sampled from /proc)\n");
  CHECK(strstr(s, "CPU time, system") == NULL); /* not sampled */
  CHECK_CONTAINS(s, "\n15       20.0%\n"
                    "(4 more rows: pipeprof export --format json)\n");
  CHECK(!strstr(s, "\nrun\n"));
  CHECK(!strstr(s, "per frame"));
  CHECK(!strstr(s, "per call"));
  /* 36 J / 3.6e6 * 100 = 0.001 g */
  CHECK_CONTAINS(s, "  gCO2eq (estimate):     0.00100 (of the CPU package "
                    "energy at 100 gCO2eq/kWh)\n");
  CHECK(!strstr(s, "default"));
  free(s);
  pp_analysis_free(&a);
  trace_free(&t);
}

/* Only reasons: every one of them printed, no numbers made up. */
PP_TEST(report_system_only_reasons) {
  pp_trace t;
  pp_analysis a = {0};
  trace_init(&t);
  meta_add(&t, "unavailable.hwmon",
           "unavailable: no such file /sys/class/hwmon (no sensors exposed)");
  meta_add(&t, "unavailable.thermal", "no thermal zones");
  meta_add(&t, "unavailable.perf_hw",
           "hardware counters unavailable: perf_event_paranoid is 4");
  meta_add(&t, "unavailable.power",
           "unavailable: no RAPL interface (powercap absent, no perf power "
           "PMU)");
  meta_add(&t, "unavailable.cpufreq", "no cpufreq driver");
  meta_add(&t, "unavailable.proc_io", "permission denied reading /proc/42/io");
  meta_add(&t, "unavailable.gpu", "no NVML");
  meta_add(&t, "unavailable.gpu", "no NVML (libnvidia-ml.so.1 not found)");
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = render(&a);
  check_no_nonfinite(s);
  CHECK_CONTAINS(s, "  temperatures:          unavailable: no such file "
                    "/sys/class/hwmon (no sensors exposed); no thermal zones\n");
  CHECK_CONTAINS(s, "  CPU frequency:         unavailable: no cpufreq driver\n");
  CHECK_CONTAINS(s, "no hardware counter was counted\nnote: cycles, "
                    "instructions, cache-references, cache-misses, "
                    "branches, branch-misses, L1-dcache-load-misses, "
                    "LLC-load-misses: unavailable: perf_event_paranoid is "
                    "4\n");
  CHECK(!strstr(s, "task-clock")); /* software events: no reason recorded */
  CHECK_CONTAINS(s, "\nenergy\nunavailable: no RAPL interface (powercap "
                    "absent, no perf power PMU)\n");
  CHECK_CONTAINS(s, "  disk read:             unavailable: permission denied "
                    "reading /proc/42/io\n");
  /* GPU reasons belong to the GPU section (report_gpu.c), not here */
  CHECK(!strstr(s, "no NVML"));
  CHECK(!strstr(s, "unavailable: unavailable"));
  CHECK(!strstr(s, "hardware counters unavailable"));
  /* nothing measured, so no number at all */
  for (const char *p = s; *p; p++)
    if (*p >= '0' && *p <= '9') {
      /* digits only inside reasons: "/proc/42/io", "is 4", "ml.so.1" */
      const char *ln = p;
      while (ln > s && ln[-1] != '\n')
        ln--;
      CHECK(strstr(ln, "unavailable:") != NULL);
    }
  free(s);

#ifdef PP_HAVE_JANSSON
  char *js = render_json(&a);
  json_error_t err;
  json_t *root = json_loads(js, 0, &err);
  if (!root)
    PP_FAIL("bad JSON: %s\n%s", err.text, js);
  json_t *sys = json_object_get(root, "system");
  CHECK(json_is_object(sys));
  json_t *un = json_object_get(sys, "unavailable");
  CHECK_STR(json_string_value(json_object_get(un, "perf_hw")),
            "perf_event_paranoid is 4");
  CHECK_STR(json_string_value(json_object_get(un, "gpu")),
            "no NVML (libnvidia-ml.so.1 not found)");
  CHECK_EQ(json_object_size(un), 7);
  CHECK(json_object_get(sys, "host") == NULL);
  CHECK(json_object_get(sys, "energy") == NULL);
  json_decref(root);
  free(js);
#endif
  pp_analysis_free(&a);
  trace_free(&t);
}

/* Neither counters nor reasons (run facts alone do not count): nothing. */
PP_TEST(report_system_nothing) {
  pp_trace t;
  pp_analysis a = {0};
  trace_init(&t);
  meta_add(&t, "run.exit", "exit 0");
  meta_add(&t, "sampler.hz", "10");
  CF(&t, "queue_depth", 1.0, 2.0); /* an application counter */
  uint32_t z = loc_add(&t, "decode", PP_KIND_ZONE);
  ev_add(&t, 1, z, PPT_EV_ZONE_BEGIN);
  ev_add(&t, 9, z, PPT_EV_ZONE_END);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = render(&a);
  CHECK_STR(s, "");
  free(s);
  char *js = render_json(&a);
  CHECK_STR(js, "{\"system\":null}");
  free(js);
  pp_analysis_free(&a);
  trace_free(&t);

  /* an empty, unanalysed trace is an error */
  memset(&t, 0, sizeof t);
  CHECK_EQ(pp_report_system(stdout, &a), -1);
}

/* Non-finite samples print as "-" / null, never nan or inf. */
PP_TEST(report_system_no_nonfinite) {
  pp_trace t;
  pp_analysis a = {0};
  trace_init(&t);
  CF(&t, "sys.cpu.busy_pct", NAN, 10.0);
  CF(&t, "sys.cpu0.busy_pct", INFINITY);
  CF(&t, "sys.cpu0.freq_mhz", NAN);
  CF(&t, "sys.mem.used_bytes", -INFINITY, 5.0);
  CF(&t, "sys.load1", NAN);
  CF(&t, "sys.ctxt_per_s", INFINITY);
  CF(&t, "sys.temp.x.y_c", NAN);
  CF(&t, "proc.cpu_pct", NAN);
  CF(&t, "proc.minflt_total", INFINITY);
  CF(&t, "perf.cycles", NAN);
  CF(&t, "perf.instructions", INFINITY);
  CF(&t, "perf.task-clock", NAN);
  CF(&t, "power.package_w", NAN);
  CF(&t, "energy.package_j", INFINITY);
  CF(&t, "sys.cpu0.throttle_total", NAN);
  meta_add(&t, "sampler.hz", "inf");
  meta_add(&t, "run.wall_ns", "nan");
  meta_add(&t, "carbon.g_per_kwh", "-nan");
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = render(&a);
  check_no_nonfinite(s);
  CHECK_CONTAINS(s, "\nsystem (2 samples)\n"); /* hz "inf" ignored */
  CHECK_CONTAINS(s, "\nCPU\n0\n  thermal throttling:    -\n");
  /* a measure whose samples are not finite: no value ("-"), never nan */
  CHECK_CONTAINS(s, "\nCPU busy             -    -    -  10.0%\n");
  CHECK_CONTAINS(s, "\ncontext switches     -    -    -      -\n");
  CHECK_CONTAINS(s, "\nevent         value\ncycles            -\n");
  free(s);
  char *js = render_json(&a);
  check_no_nonfinite(js);
  CHECK_CONTAINS(js, "\"cpu_busy_pct\":{\"label\":\"CPU busy\",\"unit\":"
                     "\"pct\",\"mean\":null");
  free(js);
  pp_analysis_free(&a);
  trace_free(&t);
}

/* The JSON member holds the inputs, in base units. */
PP_TEST(report_system_json) {
  pp_trace t;
  pp_analysis a = {0};
  build_full(&t, &a);
  char *js = render_json(&a);
  check_no_nonfinite(js);
#ifdef PP_HAVE_JANSSON
  json_error_t err;
  json_t *root = json_loads(js, 0, &err);
  if (!root)
    PP_FAIL("bad JSON: %s\n%s", err.text, js);
  json_t *sys = json_object_get(root, "system");
  CHECK(json_is_object(sys));
#define NUM(obj, key) json_number_value(json_object_get((obj), (key)))
  json_t *run = json_object_get(sys, "run");
  CHECK_STR(json_string_value(json_object_get(run, "command")),
            "python serve.py --batch 8");
  CHECK_STR(json_string_value(json_object_get(run, "exit")), "exit 0");
  CHECK_NEAR(NUM(run, "wall_s"), 5.0, 1e-12);
  CHECK_NEAR(NUM(run, "user_s"), 2.5, 1e-12);
  CHECK_NEAR(NUM(run, "system_s"), 0.4, 1e-12);
  CHECK_NEAR(NUM(run, "maxrss_bytes"), 314572800.0, 0);

  json_t *host = json_object_get(sys, "host");
  CHECK_NEAR(NUM(host, "sampler_hz"), 10.0, 0);
  CHECK_EQ(json_integer_value(json_object_get(host, "samples")), 2);
  json_t *busy = json_object_get(host, "cpu_busy_pct");
  CHECK_NEAR(NUM(busy, "mean"), 50.0, 1e-12);
  CHECK_NEAR(NUM(busy, "max"), 60.0, 0);
  CHECK_NEAR(NUM(busy, "min"), 40.0, 0);
  CHECK_NEAR(NUM(json_object_get(host, "mem_used_bytes"), "max"),
             3.0 * 1073741824.0, 0);
  CHECK_NEAR(NUM(json_object_get(host, "mem_available_bytes"), "min"),
             12.0 * 1073741824.0, 0);
  CHECK_NEAR(NUM(json_object_get(host, "psi_memory_full_pct"), "mean"), 0.5,
             1e-12);
  CHECK(json_object_get(host, "psi_io_some_pct") == NULL);
  CHECK_NEAR(NUM(json_object_get(host, "intr_per_s"), "mean"), 2.5e6, 1e-6);
  json_t *cores = json_object_get(host, "cpu_busy_max_pct");
  CHECK_EQ(json_array_size(cores), 4);
  CHECK_EQ(json_integer_value(
               json_object_get(json_array_get(cores, 3), "cpu")), 10);
  CHECK_NEAR(NUM(json_array_get(cores, 3), "max_pct"), 50.0, 0);
  CHECK_NEAR(NUM(json_array_get(
                     json_object_get(host, "cpu_throttle_total"), 0), "total"),
             7.0, 0);
  CHECK_NEAR(NUM(json_array_get(
                     json_object_get(host, "numa_used_max_bytes"), 0),
                 "max_bytes"),
             1610612736.0, 0);
  json_t *temp0 = json_array_get(json_object_get(host, "temperatures"), 0);
  CHECK_STR(json_string_value(json_object_get(temp0, "sensor")),
            "coretemp.Package_id_0");
  CHECK_NEAR(NUM(temp0, "max_c"), 71.5, 0);
  CHECK(json_object_get(host, "cpu_freq_mean_mhz") == NULL);

  json_t *tree = json_object_get(sys, "process_tree");
  CHECK_NEAR(NUM(tree, "cpu_user_s"), 2.5, 1e-12);
  CHECK_NEAR(NUM(tree, "cpu_system_s"), 0.4, 1e-12);
  CHECK_STR(json_string_value(json_object_get(tree, "cpu_time_source")),
            "rusage");
  CHECK_NEAR(NUM(json_object_get(tree, "cpu_pct"), "max"), 250.0, 0);
  CHECK_NEAR(NUM(tree, "rss_peak_bytes"), 536870912.0, 0);
  CHECK_NEAR(NUM(tree, "maxrss_bytes"), 314572800.0, 0);
  CHECK_NEAR(NUM(tree, "minflt_total"), 1234567.0, 0);
  CHECK_NEAR(NUM(tree, "majflt_total"), 0.0, 0);
  CHECK_NEAR(NUM(tree, "write_bytes_total"), 1536.0, 0);

  json_t *perf = json_object_get(sys, "perf");
  json_t *evs = json_object_get(perf, "events");
  CHECK_NEAR(NUM(json_object_get(evs, "cycles"), "value"), 2e9, 0);
  CHECK_NEAR(NUM(json_object_get(evs, "cycles"), "running_pct"), 50.0, 0);
  CHECK_NEAR(NUM(json_object_get(evs, "task-clock"), "seconds"), 1.2345,
             1e-12);
  CHECK(json_object_get(evs, "branch_miss_ratio") == NULL);
  CHECK_NEAR(NUM(perf, "ipc"), 1.5, 1e-12);
  CHECK_NEAR(NUM(perf, "branch_miss_pct"), 2.5, 1e-12);

  json_t *en = json_object_get(sys, "energy");
  CHECK_NEAR(NUM(en, "package_energy_j"), 600.0, 0);
  CHECK_NEAR(NUM(en, "package_power_mean_w"), 30.0, 1e-12);
  CHECK_NEAR(NUM(en, "package_power_max_w"), 40.0, 0);
  CHECK_EQ(json_array_size(json_object_get(en, "domains")), 2);
  json_t *d0 = json_array_get(json_object_get(en, "domains"), 0);
  CHECK_STR(json_string_value(json_object_get(d0, "name")), "package-0");
  CHECK_NEAR(NUM(d0, "energy_j"), 600.0, 0);
  CHECK_NEAR(NUM(en, "joules_per_frame_estimate"), 200.0, 1e-9);
  CHECK_NEAR(NUM(en, "joules_per_zone_call_estimate"), 150.0, 1e-9);
  CHECK_NEAR(NUM(en, "carbon_g_estimate"), 600.0 / 3.6e6 * 475.0, 1e-15);
  CHECK_NEAR(NUM(en, "carbon_g_per_kwh"), 475.0, 0);
  CHECK(json_is_true(json_object_get(en, "carbon_g_per_kwh_default")));

  json_t *un = json_object_get(sys, "unavailable");
  CHECK_EQ(json_object_size(un), 4);
  CHECK_STR(json_string_value(json_object_get(un, "cpufreq")),
            "no cpufreq driver, common in VMs");
  CHECK_STR(json_string_value(json_object_get(un, "perf.LLC-load-misses")),
            "not supported by the CPU");
#undef NUM
  json_decref(root);
#else
  CHECK_CONTAINS(js, "\"package_energy_j\":600");
  CHECK_CONTAINS(js, "\"cpu_time_source\":\"rusage\"");
  CHECK_CONTAINS(js, "\"cpufreq\":\"no cpufreq driver, common in VMs\"");
#endif
  free(js);
  pp_analysis_free(&a);
  trace_free(&t);
}

/* ---- user counters named like library metrics --------------------------- */

/* Samples of a series on a site of kind `kind`. */
static void series(pp_trace *t, const char *name, uint32_t kind, int n,
                   const double *v) {
  uint32_t l = loc_add(t, name, kind);
  for (int i = 0; i < n; i++)
    ev_add(t, 1000 * (i + 1), l, PPT_EV_COUNTER_SETF)->v.f = v[i];
}

#define SERIES(t, name, kind, ...)                                             \
  series(t, name, kind,                                                        \
         (int)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)),              \
         (double[]){__VA_ARGS__})

/* User counters named like library metrics (recorded with
 * pp_counter_set: PP_KIND_COUNTER), with values the library's are not. */
static void user_lookalikes(pp_trace *t) {
  SERIES(t, "sys.mem.total_bytes", PP_KIND_COUNTER, 1.0, 2.0);
  SERIES(t, "sys.cpu.busy_pct", PP_KIND_COUNTER, 5.0, 7.0);
  SERIES(t, "sys.cpu7.busy_pct", PP_KIND_COUNTER, 99.0);
  SERIES(t, "gpu0.power_w", PP_KIND_COUNTER, 1.0, 3.0);
  SERIES(t, "energy.package_j", PP_KIND_COUNTER, 500.0);
  SERIES(t, "sys.temp.fake.x_c", PP_KIND_COUNTER, 900.0);
}

/* The rows of the text report's user counter table (from its heading to
 * the next blank line), malloc'ed; "" when there is none. */
static char *counter_rows(const char *report) {
  const char *s = strstr(report, "\ncounters\n");
  if (!s)
    return tb_strdup("");
  s += strlen("\ncounters\n");
  const char *e = strstr(s, "\n\n");
  size_t n = e ? (size_t)(e - s) + 1 : strlen(s);
  char *r = tb_strdup(s);
  r[n] = '\0';
  return r;
}

/* With the library's own metrics (PP_KIND_METRIC) beside the lookalikes:
 * the system and GPU figures are the library's, and the user's counters
 * are listed as user counters. */
PP_TEST(report_system_user_counters_are_not_figures) {
  pp_trace t;
  pp_analysis a = {0};
  trace_init(&t);
  meta_add(&t, "sampler.hz", "10");
  SERIES(&t, "sys.mem.total_bytes", PP_KIND_METRIC, 16.0 * 1073741824.0,
         16.0 * 1073741824.0);
  SERIES(&t, "sys.cpu.busy_pct", PP_KIND_METRIC, 50.0, 60.0);
  SERIES(&t, "gpu0.power_w", PP_KIND_METRIC, 100.0, 200.0);
  user_lookalikes(&t);
  CHECK_EQ(pp_analyze(&t, &a), 0);

  char *s = render(&a);
  printf("%s", s);
  CHECK_CONTAINS(s, "\nsystem (sampled at 10 Hz, 2 samples)\n");
  CHECK_CONTAINS(s, "\nCPU busy         55.0%     50.0%     60.0%     60.0%\n");
  CHECK_CONTAINS(s, "\nmemory total  16.0 GiB  16.0 GiB  16.0 GiB  16.0 GiB\n");
  CHECK(strstr(s, "per core") == NULL);     /* the user's sys.cpu7.busy_pct */
  CHECK(strstr(s, "temperatures") == NULL); /* the user's sensor */
  CHECK(strstr(s, "energy") == NULL);       /* the user's energy.package_j */
  CHECK(strstr(s, "900") == NULL);
  free(s);

  char *all = tb_report_text(&a);
  CHECK_CONTAINS(all, "\ngpu0: unknown model\nmeasure   mean    min    max "
                      "  last\npower    150 W  100 W  200 W  200 W\n");
  CHECK(strstr(all, "energy per frame: unavailable: no energy counter") ||
        !strstr(all, "energy per frame"));
  char *rows = counter_rows(all);
  printf("%s", rows);
  static const char *const user[] = {
      "sys.mem.total_bytes", "sys.cpu.busy_pct", "sys.cpu7.busy_pct",
      "gpu0.power_w",        "energy.package_j", "sys.temp.fake.x_c"};
  for (size_t i = 0; i < sizeof user / sizeof user[0]; i++)
    CHECK_CONTAINS(rows, user[i]);
  /* One row per name: the library's series are not in the user table. */
  const char *p = strstr(rows, "sys.cpu.busy_pct");
  CHECK(p && !strstr(p + 1, "sys.cpu.busy_pct"));
  free(rows);
  free(all);

  char *js = render_json(&a);
  CHECK(strstr(js, "cpu_busy_max_pct") == NULL);
  CHECK(strstr(js, "temperatures") == NULL);
  CHECK(strstr(js, "\"energy\"") == NULL);
#ifdef PP_HAVE_JANSSON
  json_error_t err;
  json_t *root = json_loads(js, 0, &err);
  if (!root)
    PP_FAIL("bad JSON: %s\n%s", err.text, js);
  json_t *host = json_object_get(json_object_get(root, "system"), "host");
  json_t *busy = json_object_get(host, "cpu_busy_pct");
  CHECK_NEAR(json_number_value(json_object_get(busy, "mean")), 55.0, 1e-12);
  CHECK_NEAR(json_number_value(json_object_get(busy, "min")), 50.0, 0);
  CHECK_NEAR(json_number_value(json_object_get(
                 json_object_get(host, "mem_total_bytes"), "max")),
             16.0 * 1073741824.0, 0);
  json_decref(root);
#else
  CHECK_CONTAINS(js, "\"cpu_busy_pct\":{\"mean\":55,");
#endif
  free(js);

  pp_energy e;
  CHECK_EQ(pp_run_energy(&a, &e), 0); /* the user's energy.package_j */
  pp_analysis_free(&a);
  trace_free(&t);
}

/* With no library metric at all (the machine could not be read): the
 * system section gives the reasons, never a user's value, and the user's
 * counters are listed as user counters. */
PP_TEST(report_system_user_counters_without_metrics) {
  pp_trace t;
  pp_analysis a = {0};
  trace_init(&t);
  meta_add(&t, "unavailable.cpu", "unavailable: no /proc/stat");
  meta_add(&t, "unavailable.meminfo", "no /proc/meminfo");
  meta_add(&t, "unavailable.gpu", "no NVIDIA driver");
  /* A library metric of another group marks this as a trace written with
   * PP_KIND_METRIC (else names alone decide, as in older traces). */
  SERIES(&t, "proc.threads", PP_KIND_METRIC, 4.0);
  user_lookalikes(&t);
  CHECK_EQ(pp_analyze(&t, &a), 0);

  char *s = render(&a);
  printf("%s", s);
  CHECK_CONTAINS(s, "\nsystem\nno figure of the machine was measured\n");
  CHECK_CONTAINS(s, "\nnote: CPU busy, CPU user, CPU system, CPU iowait, CPU "
                    "steal, context switches, interrupts: unavailable: no "
                    "/proc/stat\n");
  CHECK_CONTAINS(s, "\nnote: memory used, memory available, memory total, "
                    "swap used: unavailable: no /proc/meminfo\n");
  CHECK(strstr(s, "5.0%") == NULL && strstr(s, "6.0%") == NULL);
  CHECK(strstr(s, "per core") == NULL);
  CHECK(strstr(s, "temperatures:") == NULL);
  CHECK(strstr(s, "\nenergy") == NULL);
  CHECK_CONTAINS(s, "\nprocess tree, sampled\nmeasure  mean  min  max  "
                    "last\nthreads     4    4    4     4\n");
  free(s);

  char *all = tb_report_text(&a);
  CHECK(strstr(all, "GPU (NVML)") == NULL); /* the user's gpu0.power_w */
  CHECK_CONTAINS(all, "  GPU:                   unavailable: no NVIDIA "
                      "driver\n");
  char *rows = counter_rows(all);
  CHECK_CONTAINS(rows, "sys.mem.total_bytes");
  CHECK_CONTAINS(rows, "gpu0.power_w");
  CHECK(strstr(rows, "proc.threads") == NULL);
  free(rows);
  free(all);

  char *js = render_json(&a);
  CHECK(strstr(js, "\"host\"") == NULL);
  CHECK_CONTAINS(js, "\"cpu\":\"no /proc/stat\"");
  free(js);
  pp_analysis_free(&a);
  trace_free(&t);
}

/* Energy per frame and per call in the system section: the run's energy
 * (CPU package + the run's GPUs, pp_run_energy), the figure the frame
 * table and the summary's frames[].energy give too. */
PP_TEST(report_system_energy_per_frame_is_the_runs) {
  pp_trace t;
  pp_analysis a = {0};
  trace_init(&t);
  uint32_t fr = loc_add(&t, "cam", PP_KIND_FRAME);
  for (int i = 0; i < 4; i++)
    ev_add(&t, 1000 * (i + 1), fr, PPT_EV_FRAME);
  SERIES(&t, "energy.package_j", PP_KIND_METRIC, 1.0, 6.0);
  SERIES(&t, "power.package_w", PP_KIND_METRIC, 10.0, 20.0);
  SERIES(&t, "gpu.run_energy_j", PP_KIND_METRIC, 0.5, 2.0);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = render(&a);
  printf("%s", s);
  /* (6 + 2) J / 4 frames */
  CHECK_CONTAINS(s, "  per frame (estimate):  2.00 J (CPU package + GPU "
                    "energy / 4 frames of \"cam\")\n");
  free(s);
  char *all = tb_report_text(&a);
  CHECK_CONTAINS(all, "  energy per frame (cam): 2 J (CPU package 1.5 J + "
                      "GPU 0.5 J), 4 frames\n");
  free(all);
  char *js = render_json(&a);
  CHECK_CONTAINS(js, "\"joules_per_frame_estimate\":2,");
  CHECK_CONTAINS(js, "\"run_energy_sources\":\"CPU package + GPU\"");
  /* 8 J / 3.6e6 J/kWh * 475 g/kWh */
  CHECK_CONTAINS(js, "\"carbon_g_estimate\":0.0010555");
  free(js);
  pp_analysis_free(&a);
  trace_free(&t);
}

/* Energy counters that stayed at 0 while the program worked (this VM's
 * perf energy-psys): no joules, watts, per-frame or carbon figure, in the
 * text or the JSON, and a reason that names the counter. */
PP_TEST(report_system_stuck_energy) {
  pp_trace t;
  pp_analysis a = {0};
  trace_init(&t);
  CF(&t, "energy.psys_j", 0.0, 0.0, 0.0);
  CF(&t, "power.psys_w", 0.0, 0.0);
  CF(&t, "energy.package_j", 0.0, 0.0, 0.0);
  CF(&t, "proc.cpu_user_s", 0.5, 1.5, 2.5); /* the program was busy */
  uint32_t fr = loc_add(&t, "camera", PP_KIND_FRAME);
  for (int i = 0; i < 3; i++)
    ev_add(&t, 1000 * (i + 1), fr, PPT_EV_FRAME);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = render(&a);
  check_no_nonfinite(s);
  CHECK_CONTAINS(
      s, "\nenergy\nunavailable: "
         "energy.package_j (and 2 more power series) stayed at 0 over 3 "
         "samples (a counter "
         "that does not move is not a measurement)\n");
  CHECK(!strstr(s, " J"));
  CHECK(!strstr(s, " W"));
  CHECK(!strstr(s, "gCO2eq"));
  free(s);
  pp_energy e;
  CHECK_EQ(pp_run_energy(&a, &e), 0);
  CHECK_CONTAINS(e.sources, "did not move");
  char *txt = tb_report_text(&a);
  CHECK_CONTAINS(txt, "energy per frame: unavailable: the energy counters "
                      "did not move over the run");
  CHECK(!strstr(txt, "0 J"));
  free(txt);
#ifdef PP_HAVE_JANSSON
  char *js = render_json(&a);
  json_error_t err;
  json_t *root = json_loads(js, 0, &err);
  if (!root)
    PP_FAIL("bad JSON: %s\n%s", err.text, js);
  json_t *sys = json_object_get(root, "system");
  CHECK(json_object_get(sys, "energy") == NULL);
  CHECK_CONTAINS(json_string_value(json_object_get(
                     json_object_get(sys, "unavailable"), "power")),
                 "energy.package_j (and 2 more power series) stayed at 0");
  json_decref(root);
  free(js);
#endif
  pp_analysis_free(&a);
  trace_free(&t);
}

/* Frequencies from /proc/cpuinfo that never moved (a VM without a cpufreq
 * driver) are the nominal clock: unavailable, with that reason, in the
 * text and the JSON, and left out of the counters the charts draw; ones
 * that moved are measurements. */
PP_TEST(report_system_nominal_cpu_frequency) {
  for (int moving = 0; moving < 2; moving++) {
    pp_trace t;
    pp_analysis a = {0};
    trace_init(&t);
    meta_add(&t, "cpufreq.source", "cpuinfo");
    CF(&t, "sys.cpu.busy_pct", 50.0, 60.0, 70.0);
    CF(&t, "sys.cpu0.freq_mhz", 2300.0, 2300.0, moving ? 2100.0 : 2300.0);
    CF(&t, "sys.cpu1.freq_mhz", 2300.0, 2300.0, 2300.0);
    CHECK_EQ(pp_analyze(&t, &a), 0);
    char *s = render(&a);
    if (moving) {
      CHECK_CONTAINS(s, "\nCPU  clock, mean\n0       2233 MHz\n");
      CHECK(!strstr(s, "nominal"));
    } else {
      CHECK_CONTAINS(s, "  CPU frequency:         unavailable: no cpufreq "
                        "driver: /proc/cpuinfo's 2300 MHz never moved (the "
                        "nominal clock, not a measurement)\n");
      CHECK(!strstr(s, "\nper core")); /* no clock shown as measured */
    }
    free(s);
#ifdef PP_HAVE_JANSSON
    char *js = render_json(&a);
    json_t *root = json_loads(js, 0, NULL);
    CHECK(root != NULL);
    json_t *un = json_object_get(json_object_get(root, "system"),
                                 "unavailable");
    if (moving)
      CHECK(json_object_get(un, "cpufreq") == NULL);
    else
      CHECK_CONTAINS(json_string_value(json_object_get(un, "cpufreq")),
                     "never moved");
    /* the per-core figures only where they measured something */
    CHECK_EQ(strstr(js, "\"cpu_freq_mean_mhz\"") != NULL, moving);
    /* and the counters (the charts' series) only the clock that moved */
    char *doc = tb_summary_json(&a);
    json_t *full = json_loads(doc, 0, NULL);
    CHECK(full != NULL);
    int n0 = 0, n1 = 0;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(full, "counters"), i, c) {
      const char *name = json_string_value(json_object_get(c, "name"));
      n0 += !strcmp(name, "sys.cpu0.freq_mhz");
      n1 += !strcmp(name, "sys.cpu1.freq_mhz");
    }
    CHECK_EQ(n0, moving);
    CHECK_EQ(n1, 0);
    CHECK_EQ(strstr(doc, "\"sys.cpu0.freq_mhz\"") != NULL, moving);
    CHECK(strstr(doc, "\"sys.cpu1.freq_mhz\"") == NULL);
    json_decref(full);
    free(doc);
    json_decref(root);
    free(js);
#endif
    pp_analysis_free(&a);
    trace_free(&t);
  }
}

/* Under `pipeprof run` the sampler says why it measured no energy: energy
 * per frame and per request give that reason, not advice to run under
 * `pipeprof run`; requests without tokens give no token rate. */
PP_TEST(report_system_energy_per_frame_reason_from_the_sampler) {
  pp_trace t;
  pp_analysis a = {0};
  trace_init(&t);
  meta_add(&t, "unavailable.power",
           "unavailable: no RAPL interface (powercap absent, no perf power "
           "PMU)");
  uint32_t fr = loc_add(&t, "camera", PP_KIND_FRAME);
  uint32_t rq = loc_add(&t, "(request)", 0);
  for (int i = 0; i < 3; i++) {
    ev_add(&t, 1000 * (i + 1), fr, PPT_EV_FRAME);
    ev_add(&t, 1000 * (i + 1), rq, PPT_EV_REQ_BEGIN)->v.id = (uint64_t)i;
    pp_event *e = ev_add(&t, 1000 * (i + 1) + 500, rq, PPT_EV_REQ_END);
    e->v.id = (uint64_t)i;
  }
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *txt = tb_report_text(&a);
  CHECK_CONTAINS(txt, "  energy per frame: unavailable: no RAPL interface "
                      "(powercap absent, no perf power PMU)\n");
  CHECK_CONTAINS(txt, "  energy per request: unavailable: no RAPL interface");
  CHECK(!strstr(txt, "run under `pipeprof run`"));
  CHECK_CONTAINS(txt, "\n  token throughput:       unavailable: no output "
                      "tokens recorded (pp_request_tokens)\n");
  free(txt);
  char *js = tb_summary_json(&a);
  CHECK_CONTAINS(js, "\"output_tokens_per_s\":{\"unavailable\":\"no output "
                     "tokens recorded (pp_request_tokens)\"}");
  free(js);
  pp_analysis_free(&a);
  trace_free(&t);
}
