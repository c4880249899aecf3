/* SPDX-License-Identifier: MIT */
/*
 * Device memory sampled through the CUDA driver (cuMemGetInfo_v2, in
 * src/core/gpu.c) end to end against the fake libcuda: the fake scripts
 * the used and total bytes of each call, so the tests check that the
 * counter samples in the trace are exactly the scripted values, in order,
 * in trace, stats and flight modes, that the report and the summary JSON
 * show them, and that a failing call, a driver without the symbol and no
 * driver at all each give "unavailable: <reason>" while the GPU zones of
 * the same session still work. The sampling period is shortened to 20 ms
 * (pp__gpu_mem_period) so that a test sees several samples quickly.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze/analysis.h"
#include "analyze/analyze.h"
#include "core/gpu.h"
#include "export/export.h"
#include "fake_cuda_harness.h"
#include "format/pptrace.h"
#include "pipeprof.h"
#include "runner.h"
#include "trace_builder.h"

#define MS 1000000LL
#define MIB 1048576LL
#define GIB (1024 * MIB)

static void *stream; /* a program stream of the fake */

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Script the fake at lib, point pipeprof at it, make a context current on
 * this thread and create a program stream (as a CUDA program would), then
 * start a session in mode with 20 ms between device memory samples. */
static void start(const char *lib, const char *script, pp_mode mode) {
  fcu_script(lib, script);
  stream = fcu_program_stream(lib);
  pp__gpu_mem_period(20 * MS);
  fcu_session("mem.pptrace", mode);
}

/* cuMemGetInfo_v2 calls the fake has logged. */
static int mem_calls(void) {
  char *log = pp_test_slurp(fcu_log_path, NULL);
  int n = 0;
  for (const char *p = log; p && (p = strstr(p, "mem ")); p += 4)
    n += p == log || p[-1] == '\n';
  free(log);
  return n;
}

/* Wait (at most 5 s) until the writer has called cuMemGetInfo n times. */
static void wait_mem_calls(int n) {
  for (int i = 0; i < 500 && mem_calls() < n; i++)
    sleep_ms(10);
  CHECK_GE(mem_calls(), n);
}

/* One GPU zone, so that pipeprof knows the context. */
static void one_zone(void) {
  pp_gpu_zone z = pp_gpu_zone_begin(stream, "infer");
  CHECK(z.slot != NULL);
  pp_gpu_zone_end(z);
}

static const pp_counter_stats *counter(const pp_analysis *a, const char *name) {
  const pp_trace *t = a->trace;
  for (size_t i = 0; i < a->prof.ncounters; i++)
    if (strcmp(pp_trace_loc_name(t, a->prof.counters[i].loc), name) == 0)
      return &a->prof.counters[i];
  return NULL;
}

/* The values of counter `name` in the trace, in time order (one thread
 * records them); returns how many (at most cap). *tid: their thread. */
static size_t counter_values(const pp_trace *t, const char *name, int64_t *v,
                             size_t cap, size_t *thread) {
  size_t n = 0;
  for (size_t i = 0; i < t->nthreads; i++)
    for (size_t k = 0; k < t->threads[i].nev; k++) {
      const pp_event *e = &t->threads[i].ev[k];
      if (e->type != PPT_EV_COUNTER_SET ||
          strcmp(pp_trace_loc_name(t, e->loc), name) != 0)
        continue;
      if (n < cap)
        v[n] = e->v.i;
      n++;
      *thread = i;
    }
  return n;
}

/* Used bytes of call k (the last one repeats). */
static const int64_t script_used[4] = {1 * GIB, 3 * GIB, 2 * GIB, 512 * MIB};
#define SCRIPT_MEM                                                             \
  "mem_total 17179869184\n"                                                    \
  "mem_used 1073741824 3221225472 2147483648 536870912\n"

static int64_t want_used(size_t k) { return script_used[k < 4 ? k : 3]; }

PP_TEST(gpu_zone_mem_samples_are_the_scripted_values) {
  start(fcu_lib(), "device 2\nsteps 1 2\n" SCRIPT_MEM, PP_MODE_TRACE);
  one_zone();
  wait_mem_calls(6);
  pp_trace t;
  pp_analysis a = {0};
  fcu_finish(&t, &a);
  /* The GPU zone is unaffected. */
  CHECK_EQ(t.ngpu, 1);
  CHECK_EQ(t.gpu[0].end - t.gpu[0].start, 2 * MS);
  /* Every sample recorded, in order, with the exact scripted values (the
   * last call may have raced with pp_shutdown and is then missing). */
  int64_t used[64], total[64];
  size_t tu = 0, tt = 0;
  size_t nu = counter_values(&t, "cuda2.mem_used_bytes", used, 64, &tu);
  size_t nt = counter_values(&t, "cuda2.mem_total_bytes", total, 64, &tt);
  CHECK_GE(nu, 5);
  CHECK_EQ(nu, nt);
  CHECK_LE(nu, (size_t)mem_calls());
  for (size_t k = 0; k < nu && k < 64; k++) {
    CHECK_EQ(used[k], want_used(k));
    CHECK_EQ(total[k], 16 * GIB);
  }
  /* On pipeprof's writer thread, named as such. */
  CHECK_EQ(tu, tt);
  CHECK_STR(t.threads[tu].name, "pipeprof writer");
  /* Statistics over the samples. */
  const pp_counter_stats *u = counter(&a, "cuda2.mem_used_bytes");
  const pp_counter_stats *k = counter(&a, "cuda2.mem_total_bytes");
  CHECK(u && k);
  CHECK_EQ(u->samples, nu);
  CHECK_EQ((int64_t)u->min, 512 * MIB);
  CHECK_EQ((int64_t)u->max, 3 * GIB);
  CHECK_EQ((int64_t)u->last, 512 * MIB);
  CHECK_EQ((int64_t)k->last, 16 * GIB);
  double sum = 0;
  for (size_t i = 0; i < nu; i++)
    sum += (double)want_used(i);
  CHECK_NEAR(u->mean, sum / (double)nu, 1.0);
  CHECK(pp_trace_meta(&t, "cuda_mem.2.unavailable") == NULL);
  CHECK(pp_trace_meta(&t, "cuda_mem.2.failed") == NULL);

  char *r = tb_report_text(&a);
  CHECK_CONTAINS(r, "\ndevice memory (cuMemGetInfo about once a second; "
                    "used = total - free, by every process on the "
                    "device)\n");
  char line[256];
  char mean[32];
  double m = u->mean / (double)GIB;
  snprintf(mean, sizeof mean, "%.*f GiB", m < 10 ? 2 : 1, m);
  snprintf(line, sizeof line,
           "\n2            %s / 512 MiB / 3.00 GiB / 512 MiB  %7zu  "
           "16.0 GiB\n",
           mean, nu);
  CHECK_CONTAINS(r, line);
  /* Not repeated in the generic counters table. */
  CHECK(strstr(r, "cuda2.mem_used_bytes") == NULL);
  free(r);

  char *j = tb_summary_json(&a);
  CHECK_CONTAINS(j, "\"device_memory\":{\"source\":\"cuMemGetInfo\","
                    "\"unavailable\":null,\"devices\":[");
  snprintf(line, sizeof line, "{\"device\":2,\"used_bytes\":{\"mean\":");
  CHECK_CONTAINS(j, line);
  snprintf(line, sizeof line,
           "\"min\":536870912,\"max\":3221225472,\"last\":536870912,"
           "\"samples\":%zu},\"total_bytes\":17179869184,"
           "\"unavailable\":null,\"failed_calls\":0}",
           nu);
  CHECK_CONTAINS(j, line);
  CHECK_CONTAINS(j, "\"schema_minor\":22");
  free(j);

  /* Chrome: a counter track like any other counter. */
  char path[512];
  snprintf(path, sizeof path, "%s/chrome.json", pp_test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  CHECK_EQ(pp_export_chrome(f, &a), 0);
  fclose(f);
  char *c = pp_test_slurp(path, NULL);
  CHECK_CONTAINS(c, "cuda2.mem_used_bytes");
  free(c);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* Stats and flight modes keep the same figures (from the STATS chunk's
 * counter statistics, and from the writer's ring in the dump). */
static void check_mode(pp_mode mode) {
  start(fcu_lib(), "steps 1\n" SCRIPT_MEM, mode);
  one_zone();
  wait_mem_calls(5);
  pp_trace t;
  pp_analysis a = {0};
  fcu_finish(&t, &a);
  const pp_counter_stats *u = counter(&a, "cuda0.mem_used_bytes");
  const pp_counter_stats *k = counter(&a, "cuda0.mem_total_bytes");
  CHECK(u && k);
  CHECK_GE(u->samples, 4);
  CHECK_EQ((int64_t)u->min, 512 * MIB);
  CHECK_EQ((int64_t)u->max, 3 * GIB);
  CHECK_EQ((int64_t)u->last, 512 * MIB);
  CHECK_EQ((int64_t)k->min, 16 * GIB);
  CHECK_EQ((int64_t)k->max, 16 * GIB);
  char *r = tb_report_text(&a);
  CHECK_CONTAINS(r, "\nCUDA device             used mean / min / max / "
                    "last  samples     total\n0            ");
  CHECK_CONTAINS(r, " / 512 MiB / 3.00 GiB / 512 MiB  ");
  CHECK_CONTAINS(r, "  16.0 GiB\n");
  free(r);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(gpu_zone_mem_in_stats_mode) { check_mode(PP_MODE_STATS); }

PP_TEST(gpu_zone_mem_in_flight_mode) { check_mode(PP_MODE_FLIGHT); }

PP_TEST(gpu_zone_mem_info_failing_is_unavailable) {
  start(fcu_lib(), "steps 1 2\nmem_error 2\n", PP_MODE_TRACE);
  one_zone();
  wait_mem_calls(3);
  pp_gpu_zone_end(pp_gpu_zone_begin(stream, "infer")); /* still works */
  pp_trace t;
  pp_analysis a = {0};
  fcu_finish(&t, &a);
  CHECK_EQ(t.ngpu, 2);
  CHECK_STR(pp_trace_meta(&t, "gpu_zones.resolved"), "2");
  CHECK(counter(&a, "cuda0.mem_used_bytes") == NULL);
  CHECK(counter(&a, "cuda0.mem_total_bytes") == NULL);
  CHECK_EQ(t.nthreads, 1); /* the writer recorded nothing */
  const char *why = pp_trace_meta(&t, "cuda_mem.0.unavailable");
  CHECK(why != NULL);
  CHECK_STR(why, "cuMemGetInfo failed: fake CUDA error (2)");
  CHECK_GE(strtoll(pp_trace_meta(&t, "cuda_mem.0.failed"), NULL, 10), 3);
  char *r = tb_report_text(&a);
  CHECK_CONTAINS(r, "\n0            unavailable (cuMemGetInfo failed: "
                    "fake CUDA error (2))\n");
  CHECK_CONTAINS(r, "\n  resolved:                   2\n"
                    "  unresolved at shutdown:     0\n");
  free(r);
  char *j = tb_summary_json(&a);
  /* each used figure unavailable with the reason, never null or 0 */
  CHECK_CONTAINS(j, "{\"device\":0,\"used_bytes\":{\"mean\":{\"unavailable\":"
                    "\"cuMemGetInfo failed: fake CUDA error (2)\"},");
  CHECK_CONTAINS(j, "\"samples\":null},\"total_bytes\":null,"
                    "\"unavailable\":\"cuMemGetInfo failed: fake CUDA "
                    "error (2)\",\"failed_calls\":");
  free(j);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(gpu_zone_mem_without_the_symbol_is_unavailable) {
  start(fcu_lib_nomem(), "steps 1 2\n", PP_MODE_TRACE);
  one_zone();
  sleep_ms(100); /* several writer passes, each due for a sample */
  pp_trace t;
  pp_analysis a = {0};
  fcu_finish(&t, &a);
  CHECK_EQ(t.ngpu, 1);
  CHECK_EQ(t.gpu[0].end - t.gpu[0].start, 2 * MS);
  CHECK_EQ(mem_calls(), 0);
  CHECK_STR(pp_trace_meta(&t, "cuda_mem.0.unavailable"),
            "libcuda has no cuMemGetInfo_v2");
  CHECK(pp_trace_meta(&t, "cuda_mem.0.failed") == NULL);
  char *r = tb_report_text(&a);
  CHECK_CONTAINS(r, "\n0            unavailable (libcuda has no "
                    "cuMemGetInfo_v2)\n");
  free(r);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(gpu_zone_mem_without_libcuda_is_unavailable) {
  setenv("PIPEPROF_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  fcu_session("mem.pptrace", PP_MODE_TRACE);
  pp_gpu_zone_end(pp_gpu_zone_begin((void *)0, "infer"));
  pp_trace t;
  pp_analysis a = {0};
  fcu_finish(&t, &a);
  char *r = tb_report_text(&a);
  CHECK_CONTAINS(r, "\ndevice memory\nunavailable: cannot load "
                    "/nonexistent/libcuda.so.1 (no NVIDIA driver?)\n");
  free(r);
  char *j = tb_summary_json(&a);
  CHECK_CONTAINS(j, "\"device_memory\":{\"source\":\"cuMemGetInfo\","
                    "\"unavailable\":\"cannot load /nonexistent/"
                    "libcuda.so.1 (no NVIDIA driver?)\",\"devices\":[]}");
  free(j);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(gpu_zone_mem_absent_without_gpu_zones) {
  /* A program that never used GPU zones: no driver call, no section. */
  start(fcu_lib(), "steps 1\n" SCRIPT_MEM, PP_MODE_TRACE);
  sleep_ms(60);
  pp_trace t;
  pp_analysis a = {0};
  fcu_finish(&t, &a);
  CHECK_EQ(mem_calls(), 0);
  char *r = tb_report_text(&a);
  CHECK(strstr(r, "device memory") == NULL);
  free(r);
  char *j = tb_summary_json(&a);
  CHECK_CONTAINS(j, "\"device_memory\":null");
  free(j);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}
