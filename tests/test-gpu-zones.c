/* SPDX-License-Identifier: MIT */
/*
 * GPU zones (src/core/gpu.c) end to end against the fake libcuda built
 * from tests/fakes/fake_cuda.c: a scripted GPU decides when each event
 * completes and what time it carries, so the tests can check that the
 * durations in the trace are the scripted ones, that nesting and order
 * survive, that the starts land on the CPU clock within the calibration
 * bound, and that every way of failing (pool exhausted, a record failing,
 * no context, no library, cuInit failing, events still pending at
 * shutdown) is counted and reported rather than crashing or blocking.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/model.h"
#include "export/export.h"
#include "pipeprof.h"
#include "runner.h"

#define MS 1000000LL

static char trace_path[512], log_path[512];
static void *stream; /* a program stream of the fake */

static const char *fake_path(void) {
#ifdef PP_FAKE_CUDA_PATH
  return PP_FAKE_CUDA_PATH;
#else
  static char p[512];
  snprintf(p, sizeof p, "%s/fakes/libcuda.so.1", pp_test_bindir());
  return p;
#endif
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Script the fake, point pipeprof at it, and (make_ctx) make a context
 * current on this thread and create a program stream, as a CUDA program
 * would. Then start a trace-mode session. */
static void start(const char *script, int make_ctx, pp_mode mode) {
  char sp[512];
  snprintf(sp, sizeof sp, "%s/cuda.txt", pp_test_tmpdir());
  FILE *f = fopen(sp, "w");
  if (!f)
    PP_FAIL("cannot write %s", sp);
  fputs(script, f);
  fclose(f);
  snprintf(log_path, sizeof log_path, "%s/cuda.log", pp_test_tmpdir());
  remove(log_path);
  setenv("PP_FAKE_CUDA", sp, 1);
  setenv("PP_FAKE_CUDA_LOG", log_path, 1);
  setenv("PIPEPROF_LIBCUDA", fake_path(), 1);
  if (make_ctx) {
    void *h = dlopen(fake_path(), RTLD_NOW | RTLD_LOCAL);
    if (!h)
      PP_FAIL("cannot load the fake libcuda at %s", fake_path());
    int (*init)(unsigned);
    int (*ctx_create)(void **, unsigned, int);
    int (*stream_create)(void **, unsigned);
    *(void **)&init = dlsym(h, "cuInit");
    *(void **)&ctx_create = dlsym(h, "cuCtxCreate_v2");
    *(void **)&stream_create = dlsym(h, "cuStreamCreate");
    void *ctx;
    CHECK(init && ctx_create && stream_create);
    CHECK_EQ(init(0), 0);
    CHECK_EQ(ctx_create(&ctx, 0, 0), 0);
    CHECK_EQ(stream_create(&stream, 0), 0);
  }
  snprintf(trace_path, sizeof trace_path, "%s/gpu.pptrace",
           pp_test_tmpdir());
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = trace_path;
  cfg.mode = mode;
  cfg.install_signals = 0;
  CHECK_EQ(pp_init(&cfg), PP_OK);
}

static void finish(pp_trace *t) {
  CHECK_EQ(pp_shutdown(), PP_OK);
  char err[256];
  CHECK_EQ(pp_trace_read_file(trace_path, t, err, sizeof err), 0);
  CHECK_EQ(pp_analyze(t), 0);
}

/* The fake's log: CPU-clock time of program-stream record k. */
static int64_t record_time(long k) {
  char *log = pp_test_slurp(log_path, NULL);
  CHECK(log != NULL);
  char needle[32];
  snprintf(needle, sizeof needle, "record %ld ", k);
  const char *p = strstr(log, needle);
  CHECK(p != NULL);
  long long v = strtoll(p + strlen(needle), NULL, 10);
  free(log);
  return (int64_t)v;
}

static int64_t meta_num(const pp_trace *t, const char *key) {
  const char *v = pp_trace_meta(t, key);
  if (!v)
    PP_FAIL("META %s missing", key);
  return strtoll(v, NULL, 10);
}

static char *report(const pp_trace *t) {
  char path[512];
  snprintf(path, sizeof path, "%s/report.txt", pp_test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  CHECK_EQ(pp_report_text(f, t, NULL), 0);
  fclose(f);
  return pp_test_slurp(path, NULL);
}

PP_TEST(gpu_zone_durations_are_the_scripted_elapsed_times) {
  /* Records: begin0 end0 begin1 end1 begin2 end2, at these GPU steps. */
  start("steps 1 2.5 1 0.25 1 4\n", 1, PP_MODE_TRACE);
  static const int64_t want[3] = {2500000, 250000, 4000000};
  for (int i = 0; i < 3; i++) {
    pp_gpu_zone z = pp_gpu_zone_begin(stream, i == 1 ? "copy" : "infer");
    CHECK(z.slot != NULL);
    pp_gpu_zone_end(z);
  }
  sleep_ms(60); /* resolved by the writer while running */
  pp_trace t;
  finish(&t);
  CHECK_EQ(t.ngpu, 3);
  CHECK_EQ(t.prof.gpu.ntracks, 1);
  CHECK_EQ(meta_num(&t, "gpu_zones.resolved"), 3);
  CHECK_EQ(meta_num(&t, "gpu_zones.unresolved"), 0);
  int64_t bound = meta_num(&t, "gpu_zones.calib_error_ns");
  CHECK_GE(meta_num(&t, "gpu_zones.calibrations"), 1);
  for (int i = 0; i < 3; i++) {
    const pp_gpu_zone_rec *g = &t.gpu[i];
    CHECK_EQ(g->end - g->start, want[i]);
    CHECK_STR(pp_trace_loc_name(&t, g->loc), i == 1 ? "copy" : "infer");
    /* Placed on the CPU clock within the calibration bound (plus the
     * tick conversion's own error). */
    int64_t expect = record_time(2 * i);
    CHECK_LE(llabs(g->start - expect), bound + 20000);
    CHECK_LE(g->launch, g->start + bound + 20000);
  }
  /* Per-site statistics. */
  const pp_gpu_stats *s = &t.prof.gpu;
  CHECK_EQ(s->nzones, 2);
  CHECK_STR(pp_trace_loc_name(&t, s->zones[0].loc), "infer");
  CHECK_EQ(s->zones[0].count, 2);
  CHECK_EQ(s->zones[0].total_ns, 6500000);
  CHECK_EQ(s->zones[0].max_ns, 4000000);
  /* The same statistics as CPU zones (pp__zone_stats_*): exact mean and
   * population standard deviation of 2.5 ms and 4 ms; self = total. */
  CHECK_EQ(s->zones[0].min_ns, 2500000);
  CHECK_EQ(s->zones[0].self_ns, 6500000);
  CHECK_NEAR(s->zones[0].mean_ns, 3250000, 1e-6);
  CHECK_NEAR(s->zones[0].std_ns, 750000, 1e-6);
  char *r = report(&t);
  CHECK_CONTAINS(r, "GPU zones (device time");
  CHECK_CONTAINS(r, "track GPU 0 stream 0x");
  CHECK_CONTAINS(r, "resolved 3, unresolved at shutdown 0\n");
  free(r);
  pp_trace_free(&t);
}

PP_TEST(gpu_zones_nest_keep_order_and_link_to_the_launching_zone) {
  start("device 3\nsteps 1 2 3 4\n", 1, PP_MODE_TRACE);
  {
    PP_ZONE("launch");
    PP_GPU_ZONE_BEGIN(outer, stream, "outer");
    pp_gpu_zone inner = pp_gpu_zone_begin(stream, "inner");
    pp_gpu_zone_end(inner);
    PP_GPU_ZONE_END(outer);
  }
  pp_trace t;
  finish(&t); /* resolved by the final pass's bounded wait */
  CHECK_EQ(t.ngpu, 2);
  const pp_gpu_zone_rec *o = &t.gpu[0], *in = &t.gpu[1];
  CHECK_STR(pp_trace_loc_name(&t, o->loc), "outer");
  CHECK_STR(pp_trace_loc_name(&t, in->loc), "inner");
  CHECK_EQ(o->end - o->start, 9 * MS);
  CHECK_EQ(in->end - in->start, 3 * MS);
  CHECK_LE(llabs((in->start - o->start) - 2 * MS), 2000);
  CHECK(in->start >= o->start && in->end <= o->end + 2000);
  CHECK_EQ(o->device, 3);
  CHECK_EQ(o->stream, (uint64_t)(uintptr_t)stream);
  /* Both tie to the CPU zone open at their launch. */
  CHECK_EQ(t.nthreads, 1);
  CHECK(o->cpu_zone >= 0 && in->cpu_zone == o->cpu_zone);
  CHECK_STR(pp_trace_loc_name(&t, t.threads[0].zones[o->cpu_zone].loc),
            "launch");
  /* Chrome: the GPU track is a thread of its own, with a flow from the
   * launching zone. */
  char path[512];
  snprintf(path, sizeof path, "%s/chrome.json", pp_test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK_EQ(pp_export_chrome(f, &t), 0);
  fclose(f);
  char *j = pp_test_slurp(path, NULL);
  char name[96];
  snprintf(name, sizeof name, "\"name\":\"GPU 3 stream 0x%" PRIxPTR "\"",
           (uintptr_t)stream);
  CHECK_CONTAINS(j, name);
  CHECK_CONTAINS(j, "\"cat\":\"gpu\",\"pid\":");
  CHECK_CONTAINS(j, "{\"ph\":\"s\",\"name\":\"outer\",\"cat\":\"gpu_launch\"");
  CHECK_CONTAINS(j, "{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"inner\"");
  free(j);
  pp_trace_free(&t);
}

PP_TEST(gpu_zones_pending_at_shutdown_are_counted) {
  /* Zone 0 completes; zone 1's events never do; zone 2 is never ended. */
  start("steps 1\nhold_from 2\n", 1, PP_MODE_TRACE);
  for (int i = 0; i < 2; i++)
    pp_gpu_zone_end(pp_gpu_zone_begin(stream, "step"));
  pp_gpu_zone open = pp_gpu_zone_begin(stream, "open");
  CHECK(open.slot != NULL);
  pp_trace t;
  finish(&t);
  pp_gpu_zone_end(open); /* after the session: harmless, not recorded */
  CHECK_EQ(t.ngpu, 1);
  CHECK_EQ(meta_num(&t, "gpu_zones.resolved"), 1);
  CHECK_EQ(meta_num(&t, "gpu_zones.unresolved"), 2);
  char *r = report(&t);
  CHECK_CONTAINS(r, "resolved 1, unresolved at shutdown 2");
  free(r);
  pp_trace_free(&t);
}

PP_TEST(gpu_zone_pool_exhaustion_and_record_failures_are_counted) {
  setenv("PIPEPROF_GPU_SLOTS", "4", 1);
  /* Nothing completes: the 4 slots stay taken. Record 0 fails. */
  start("hold_from 0\nfail_record 0\n", 1, PP_MODE_TRACE);
  pp_gpu_zone z = pp_gpu_zone_begin(stream, "k");
  CHECK(z.slot == NULL); /* the record failed */
  int got = 0;
  for (int i = 0; i < 10; i++) {
    z = pp_gpu_zone_begin(stream, "k");
    got += z.slot != NULL;
    pp_gpu_zone_end(z);
  }
  CHECK_EQ(got, 4);
  pp_trace t;
  finish(&t);
  CHECK_EQ(t.ngpu, 0);
  CHECK_EQ(meta_num(&t, "gpu_zones.slots"), 4);
  CHECK_EQ(meta_num(&t, "gpu_zones.dropped.pool_exhausted"), 6);
  CHECK_EQ(meta_num(&t, "gpu_zones.dropped.record_failed"), 1);
  CHECK_EQ(meta_num(&t, "gpu_zones.unresolved"), 4);
  char *r = report(&t);
  CHECK_CONTAINS(r, "GPU zones: none resolved");
  CHECK_CONTAINS(r, "pool exhausted 6, record failed 1");
  free(r);
  pp_trace_free(&t);
}

PP_TEST(gpu_zones_without_libcuda_report_unavailable) {
  start("", 0, PP_MODE_TRACE);
  setenv("PIPEPROF_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  for (int i = 0; i < 3; i++) {
    pp_gpu_zone z = pp_gpu_zone_begin((void *)0, "infer");
    CHECK(z.slot == NULL);
    pp_gpu_zone_end(z);
  }
  pp_trace t;
  finish(&t);
  CHECK_EQ(meta_num(&t, "gpu_zones.dropped.unavailable"), 3);
  char *r = report(&t);
  CHECK_CONTAINS(r, "GPU zones: unavailable: cannot load "
                    "/nonexistent/libcuda.so.1 (no NVIDIA driver?)\n");
  free(r);
  pp_trace_free(&t);
}

PP_TEST(gpu_zones_cuinit_failure_and_missing_context) {
  start("init 100\n", 0, PP_MODE_TRACE);
  pp_gpu_zone_end(pp_gpu_zone_begin((void *)0, "infer"));
  pp_trace t;
  finish(&t);
  char *r = report(&t);
  CHECK_CONTAINS(r, "GPU zones: unavailable: cuInit failed: fake CUDA "
                    "error (100)\n");
  free(r);
  pp_trace_free(&t);
}

PP_TEST(gpu_zones_without_a_current_context) {
  /* The driver loads but this thread never made a context current. */
  start("steps 1\n", 0, PP_MODE_TRACE);
  pp_gpu_zone_end(pp_gpu_zone_begin((void *)0, "infer"));
  pp_gpu_zone_end(pp_gpu_zone_begin((void *)0, "infer"));
  pp_trace t;
  finish(&t);
  CHECK_EQ(meta_num(&t, "gpu_zones.dropped.no_context"), 2);
  char *r = report(&t);
  CHECK_CONTAINS(r, "GPU zones: unavailable: no CUDA context current");
  free(r);
  pp_trace_free(&t);
}

PP_TEST(gpu_zones_in_flight_mode_dumps) {
  start("steps 1 2\n", 1, PP_MODE_FLIGHT);
  pp_gpu_zone_end(pp_gpu_zone_begin(stream, "infer"));
  sleep_ms(40);
  pp_trace t;
  finish(&t);
  CHECK_EQ(t.ngpu, 1);
  CHECK_EQ(t.gpu[0].end - t.gpu[0].start, 2 * MS);
  pp_trace_free(&t);
}

PP_TEST(gpu_zones_idle_when_not_profiling) {
  /* No session: no library load, nothing recorded, no crash. */
  pp_gpu_zone z = pp_gpu_zone_begin((void *)0, "x");
  CHECK(z.slot == NULL);
  pp_gpu_zone_end(z);
  setenv("PIPEPROF", "1", 1);
  setenv("PIPEPROF_GPU_SLOTS", "1", 1);
  CHECK_EQ(pp_init_from_env(), PP_EENV);
  CHECK(!pp_is_running());
}

/* tests/gpu/gpu_zones.cu, when the build found nvcc: on a GPU it checks
 * pipeprof's GPU zone durations against cudaEventElapsedTime (within 5%)
 * and its cuMemGetInfo samples against cudaMemGetInfo (within 8 MiB);
 * without one it says so and exits 0. */
PP_TEST(gpu_zones_cuda_program) {
#ifdef PP_GPU_ZONES_BIN
  char cmd[1024], out[512];
  snprintf(out, sizeof out, "%s/cuda.pptrace", pp_test_tmpdir());
  snprintf(cmd, sizeof cmd, "'%s' '%s' 2>&1", PP_GPU_ZONES_BIN, out);
  unsetenv("PIPEPROF_LIBCUDA");
  unsetenv("PIPEPROF");
  FILE *p = popen(cmd, "r");
  CHECK(p != NULL);
  char text[4096] = "";
  size_t n = fread(text, 1, sizeof text - 1, p);
  text[n] = 0;
  int st = pclose(p);
  fprintf(stderr, "# %s", text);
  CHECK_EQ(st, 0);
  if (!strstr(text, "skipped: no GPU\n")) {
    CHECK_CONTAINS(text, "pipeprof vs cudaEventElapsedTime");
    CHECK_CONTAINS(text, "pipeprof vs cudaMemGetInfo");
  }
#else
  fprintf(stderr, "# skipped: built without the CUDA toolkit\n");
#endif
}
