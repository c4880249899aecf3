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
 * Stats mode aggregates the zones instead of writing them: the statistics
 * must be those of trace mode for the same script, and the reader must
 * survive the STATS chunk cut anywhere.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "analyze/analyze.h"
#include "export/export.h"
#include "fake_cuda_harness.h"
#include "format/pptrace.h"
#include "model/reader.h"
#include "pipeprof.h"
#include "runner.h"
#include "sink/stats.h"
#include "trace_builder.h"

#define MS 1000000LL

static void *stream; /* a program stream of the fake */
static const char *trace_name = "gpu.pptrace"; /* file start() records to */

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Script the fake, point pipeprof at it, and (make_ctx) make a context
 * current on this thread and create a program stream, as a CUDA program
 * would. Then start a session in mode. */
static void start(const char *script, int make_ctx, pp_mode mode) {
  fcu_script(fcu_lib(), script);
  if (make_ctx)
    stream = fcu_program_stream(fcu_lib());
  fcu_session(trace_name, mode);
}

/* The fake's log: CPU-clock time of program-stream record k. */
static int64_t record_time(long k) {
  char *log = pp_test_slurp(fcu_log_path, NULL);
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
  pp_analysis a = {0};
  fcu_finish(&t, &a);
  CHECK_EQ(t.ngpu, 3);
  CHECK_EQ(a.prof.gpu.ntracks, 1);
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
  const pp_gpu_stats *s = &a.prof.gpu;
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
  char *r = tb_report_text(&a);
  CHECK_CONTAINS(r, "GPU zones (device time");
  CHECK_CONTAINS(r, "\nGPU zone tracks\nGPU  stream  ");
  CHECK_CONTAINS(r, "\n0    0x");
  CHECK_CONTAINS(r, "\n  resolved:                   3\n"
                    "  unresolved at shutdown:     0\n");
  free(r);
  pp_analysis_free(&a);
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
  pp_analysis a = {0};
  fcu_finish(&t, &a); /* resolved by the final pass's bounded wait */
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
  int o_zone = a.gpu[o - t.gpu].cpu_zone;
  CHECK(o_zone >= 0 && a.gpu[in - t.gpu].cpu_zone == o_zone);
  CHECK_STR(pp_trace_loc_name(&t, a.threads[0].zones[o_zone].loc), "launch");
  /* Chrome: the GPU track is a thread of its own, with a flow from the
   * launching zone. */
  char path[512];
  snprintf(path, sizeof path, "%s/chrome.json", pp_test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK_EQ(pp_export_chrome(f, &a), 0);
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
  pp_analysis_free(&a);
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
  pp_analysis a = {0};
  fcu_finish(&t, &a);
  pp_gpu_zone_end(open); /* after the session: harmless, not recorded */
  CHECK_EQ(t.ngpu, 1);
  CHECK_EQ(meta_num(&t, "gpu_zones.resolved"), 1);
  CHECK_EQ(meta_num(&t, "gpu_zones.unresolved"), 2);
  char *r = tb_report_text(&a);
  CHECK_CONTAINS(r, "\n  resolved:                   1\n"
                    "  unresolved at shutdown:     2\n");
  free(r);
  pp_analysis_free(&a);
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
  pp_analysis a = {0};
  fcu_finish(&t, &a);
  CHECK_EQ(t.ngpu, 0);
  CHECK_EQ(meta_num(&t, "gpu_zones.slots"), 4);
  CHECK_EQ(meta_num(&t, "gpu_zones.dropped.pool_exhausted"), 6);
  CHECK_EQ(meta_num(&t, "gpu_zones.dropped.record_failed"), 1);
  CHECK_EQ(meta_num(&t, "gpu_zones.unresolved"), 4);
  char *r = tb_report_text(&a);
  CHECK_CONTAINS(r, "\nGPU zones (device time of the work queued on a "
                    "stream between pp_gpu_zone_begin and end)\nnone "
                    "resolved\n");
  CHECK_CONTAINS(r, "\n  dropped, pool exhausted: 6\n"
                    "  dropped, record failed:  1\n");
  free(r);
  pp_analysis_free(&a);
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
  pp_analysis a = {0};
  fcu_finish(&t, &a);
  CHECK_EQ(meta_num(&t, "gpu_zones.dropped.unavailable"), 3);
  char *r = tb_report_text(&a);
  CHECK_CONTAINS(r, "\nGPU zones\nunavailable: cannot load "
                    "/nonexistent/libcuda.so.1 (no NVIDIA driver?)\n");
  free(r);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(gpu_zones_cuinit_failure_and_missing_context) {
  start("init 100\n", 0, PP_MODE_TRACE);
  pp_gpu_zone_end(pp_gpu_zone_begin((void *)0, "infer"));
  pp_trace t;
  pp_analysis a = {0};
  fcu_finish(&t, &a);
  char *r = tb_report_text(&a);
  CHECK_CONTAINS(r, "\nGPU zones\nunavailable: cuInit failed: fake CUDA "
                    "error (100)\n");
  free(r);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(gpu_zones_without_a_current_context) {
  /* The driver loads but this thread never made a context current. */
  start("steps 1\n", 0, PP_MODE_TRACE);
  pp_gpu_zone_end(pp_gpu_zone_begin((void *)0, "infer"));
  pp_gpu_zone_end(pp_gpu_zone_begin((void *)0, "infer"));
  pp_trace t;
  pp_analysis a = {0};
  fcu_finish(&t, &a);
  CHECK_EQ(meta_num(&t, "gpu_zones.dropped.no_context"), 2);
  char *r = tb_report_text(&a);
  CHECK_CONTAINS(r, "\nGPU zones\nunavailable: no CUDA context current");
  free(r);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(gpu_zones_in_flight_mode_dumps) {
  start("steps 1 2\n", 1, PP_MODE_FLIGHT);
  pp_gpu_zone_end(pp_gpu_zone_begin(stream, "infer"));
  sleep_ms(40);
  pp_trace t;
  pp_analysis a = {0};
  fcu_finish(&t, &a);
  CHECK_EQ(t.ngpu, 1);
  CHECK_EQ(t.gpu[0].end - t.gpu[0].start, 2 * MS);
  pp_analysis_free(&a);
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

/* ---- stats mode ------------------------------------------------------------
 * The same script run in trace mode (in a child process, so that the fake
 * numbers its records from 0 again) and in stats mode. */

/* Zones: site, stream (0: the program stream, 1: the NULL stream) and the
 * scripted device time in ms (each exact in a float, as the fake reports
 * elapsed times). Each begin comes 0.25 ms of GPU time after the previous
 * end. */
static const struct {
  const char *site;
  int null_stream;
  double ms;
} gz[] = {{"infer", 0, 2.5}, {"copy", 1, 0.25},  {"infer", 0, 4},
          {"infer", 0, 1},   {"copy", 1, 0.75},  {"infer", 0, 8},
          {"infer", 0, 0.5}, {"copy", 0, 0.125}, {"infer", 0, 3},
          {"infer", 1, 6},   {"infer", 0, 1.5}};
#define NGZ (sizeof gz / sizeof gz[0])

static void gz_script(char *buf, size_t len) {
  size_t n = (size_t)snprintf(buf, len, "steps");
  for (size_t i = 0; i < NGZ && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, " 0.25 %g", gz[i].ms);
  if (n < len)
    snprintf(buf + n, len - n, "\n");
}

static void gz_run(void) {
  for (size_t i = 0; i < NGZ; i++) {
    pp_gpu_zone z =
        pp_gpu_zone_begin(gz[i].null_stream ? NULL : stream, gz[i].site);
    CHECK(z.slot != NULL);
    pp_gpu_zone_end(z);
  }
  sleep_ms(20); /* some resolved while running, the rest at shutdown */
}

/* Record the script in trace mode in a child process; returns the path
 * and the child's pid (the tid of its main thread) in *child. */
static const char *gz_trace_mode(const char *script, pid_t *child) {
  static char path[512];
  snprintf(path, sizeof path, "%s/gz-trace.pptrace", pp_test_tmpdir());
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    trace_name = "gz-trace.pptrace";
    start(script, 1, PP_MODE_TRACE);
    gz_run();
    if (pp_shutdown() != PP_OK)
      _exit(1);
    _exit(0);
  }
  int st = 0;
  CHECK_EQ(waitpid(pid, &st, 0), pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  *child = pid;
  return path;
}

/* The expected percentile of the scripted durations of site (ns): the
 * highest value of the histogram bucket of the ceil(p% * n)-th smallest,
 * clamped to the largest (docs/formats/summary-json.md). */
static uint64_t gz_percentile(const char *site, double p) {
  uint64_t v[NGZ];
  size_t n = 0;
  for (size_t i = 0; i < NGZ; i++)
    if (strcmp(gz[i].site, site) == 0)
      v[n++] = (uint64_t)(gz[i].ms * 1e6 + 0.5);
  for (size_t i = 1; i < n; i++) /* insertion sort */
    for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
      uint64_t x = v[j];
      v[j] = v[j - 1];
      v[j - 1] = x;
    }
  size_t rank = (size_t)ceil(p * (double)n / 100.0);
  rank = rank < 1 ? 1 : rank > n ? n : rank;
  uint64_t r = pp_hist_highest_equivalent(v[rank - 1]);
  return r > v[n - 1] ? v[n - 1] : r;
}

static const pp_zone_stats *gz_zone(const pp_analysis *a, const char *site) {
  const pp_trace *t = a->trace;
  for (size_t i = 0; i < a->prof.gpu.nzones; i++)
    if (strcmp(pp_trace_loc_name(t, a->prof.gpu.zones[i].loc), site) == 0)
      return &a->prof.gpu.zones[i];
  PP_FAIL("no GPU zone statistics for %s", site);
}

/* Chunk types of a file in order, into types (at most max); returns how
 * many chunks. */
static size_t chunk_types(const unsigned char *d, size_t len, unsigned *types,
                          size_t max) {
  size_t n = 0, pos = PPT_FILE_HEADER_SIZE;
  while (pos + PPT_CHUNK_HEADER_SIZE <= len) {
    CHECK_EQ(ppt_get_u32(d + pos), PPT_CHUNK_MAGIC);
    CHECK_LT(n, max);
    types[n++] = ppt_get_u16(d + pos + 4);
    pos += PPT_CHUNK_HEADER_SIZE + ppt_get_u32(d + pos + 8);
  }
  CHECK_EQ(pos, len);
  return n;
}

/* The part of text that starts at from and ends before to (malloc'ed). */
static char *between(const char *text, const char *from, const char *to) {
  const char *a = strstr(text, from);
  if (!a)
    PP_FAIL("\"%s\" not found in:\n%s", from, text);
  const char *b = strstr(a, to);
  if (!b)
    PP_FAIL("\"%s\" not found after \"%s\" in:\n%s", to, from, text);
  char *r = malloc((size_t)(b - a) + 1);
  CHECK(r != NULL);
  memcpy(r, a, (size_t)(b - a));
  r[b - a] = 0;
  return r;
}

PP_TEST(gpu_zone_stats_mode_matches_trace_mode) {
  char script[1024];
  gz_script(script, sizeof script);
  pid_t child;
  const char *tpath = gz_trace_mode(script, &child);
  trace_name = "gz-stats.pptrace";
  start(script, 1, PP_MODE_STATS);
  gz_run();
  pp_trace s, t;
  pp_analysis s_a = {0};
  pp_analysis an = {0};
  fcu_finish(&s, &s_a);
  char err[256];
  CHECK_EQ(pp_trace_read_file(tpath, &t, err, sizeof err), 0);
  CHECK_EQ(pp_analyze(&t, &an), 0);
  CHECK(!t.from_stats && t.ngpu == NGZ);

  /* Stats mode: a STATS chunk, no EVENTS chunk (no GPU_ZONE event). */
  size_t len;
  unsigned char *d = (unsigned char *)pp_test_slurp(fcu_trace_path, &len);
  CHECK(d != NULL);
  unsigned types[256];
  size_t nch = chunk_types(d, len, types, 256), nstats = 0;
  for (size_t i = 0; i < nch; i++) {
    CHECK_NE(types[i], PPT_CHUNK_EVENTS);
    nstats += types[i] == PPT_CHUNK_STATS;
  }
  CHECK_EQ(nstats, 1);
  CHECK_EQ(ppt_get_u16(d + 10), PPT_VERSION_MINOR); /* format 1.5 */
  free(d);
  CHECK(s.from_stats);
  CHECK_EQ(s.ngpu, 0);
  CHECK_EQ(s_a.ngpu_agg, 4); /* infer and copy, each on both streams */
  CHECK_EQ(s_a.gpu_agg_lost, 0);
  CHECK_EQ(meta_num(&s, "gpu_zones.resolved"), NGZ);
  CHECK_EQ(meta_num(&s, "gpu_zones.unresolved"), 0);

  /* The statistics are the script's, and trace mode's. */
  const pp_gpu_stats *gs = &s_a.prof.gpu, *gt = &an.prof.gpu;
  CHECK_EQ(gs->nzones, 2);
  CHECK_EQ(gt->nzones, 2);
  static const char *const sites[] = {"infer", "copy"};
  static const double pct[] = {50, 90, 99, 99.9};
  for (int k = 0; k < 2; k++) {
    uint64_t count = 0;
    int64_t total = 0, lo = INT64_MAX, hi = 0;
    for (size_t i = 0; i < NGZ; i++)
      if (strcmp(gz[i].site, sites[k]) == 0) {
        int64_t ns = (int64_t)(gz[i].ms * 1e6 + 0.5);
        count++;
        total += ns;
        lo = ns < lo ? ns : lo;
        hi = ns > hi ? ns : hi;
      }
    /* zones[] is ordered by total: infer first, in both modes. */
    CHECK_STR(pp_trace_loc_name(&s, gs->zones[k].loc), sites[k]);
    CHECK_STR(pp_trace_loc_name(&t, gt->zones[k].loc), sites[k]);
    for (int m = 0; m < 2; m++) {
      const pp_zone_stats *z =
          m ? gz_zone(&an, sites[k]) : gz_zone(&s_a, sites[k]);
      CHECK_EQ_U(z->count, count);
      CHECK_EQ(z->total_ns, total);
      CHECK_EQ(z->self_ns, total);
      CHECK_EQ(z->min_ns, lo);
      CHECK_EQ(z->max_ns, hi);
      CHECK_EQ_U(z->hist.count, count);
      CHECK_NEAR(z->mean_ns, (double)total / (double)count, 1e-6);
      for (int q = 0; q < 4; q++) {
        CHECK_EQ_U(pp_hist_percentile(&z->hist, pct[q]),
                   gz_percentile(sites[k], pct[q]));
      }
    }
    const pp_zone_stats *a = gz_zone(&s_a, sites[k]),
                        *b = gz_zone(&an, sites[k]);
    CHECK_NEAR(a->std_ns, b->std_ns, 1e-6 * b->std_ns + 1e-3);
    CHECK_GT(a->std_ns, 0);
  }
  /* Tracks: the program stream and the NULL stream, both launched by the
   * main thread (of this process; of the child in trace mode), with the
   * zones each ran. */
  CHECK_EQ(gs->ntracks, 2);
  CHECK_EQ(gt->ntracks, 2);
  for (size_t i = 0; i < 2; i++) {
    CHECK_EQ(gs->tracks[i].device, gt->tracks[i].device);
    CHECK_EQ_U(gs->tracks[i].stream, gt->tracks[i].stream);
    CHECK_EQ_U(gs->tracks[i].zones, gt->tracks[i].zones);
    CHECK_EQ_U(gs->tracks[i].tid, (uint64_t)getpid());
    CHECK_EQ_U(gt->tracks[i].tid, (uint64_t)child);
  }
  CHECK_EQ_U(gs->tracks[0].stream, 0); /* NULL sorts first */
  CHECK_EQ_U(gs->tracks[0].zones, 3);
  CHECK_EQ_U(gs->tracks[1].stream, (uint64_t)(uintptr_t)stream);
  CHECK_EQ_U(gs->tracks[1].zones, NGZ - 3);
  /* Each track's first zone starts at its scripted time (zone 1 is the
   * first on the NULL stream), within the calibration bound; the time
   * range runs to the last zone's end, as in trace mode (no CPU event). */
  int64_t bound = meta_num(&s, "gpu_zones.calib_error_ns") + 20000;
  CHECK_LE(llabs(gs->tracks[0].first_ns - record_time(2)), bound);
  CHECK_LE(llabs(gs->tracks[1].first_ns - record_time(0)), bound);
  CHECK_LE(llabs(s_a.prof.t1 - record_time(2 * NGZ - 1)), bound);
  CHECK_GE(s_a.prof.wall_ns, record_time(2 * NGZ - 1) - record_time(0));

  /* The report's GPU zone table and the summary's zones read the same in
   * both modes; the tracks differ only by the launching thread's id. */
  char *rs = tb_report_text(&s_a), *rt = tb_report_text(&an);
  char *ss = between(rs, "\nGPU zones (", "\nGPU zone tracks");
  char *st = between(rt, "\nGPU zones (", "\nGPU zone tracks");
  CHECK_STR(ss, st);
  CHECK_CONTAINS(ss, "\ninfer      8  26.5 ms  3.31 ms  2.50 ms  8.00 ms  "
                     "8.00 ms  8.00 ms  8.00 ms\n");
  CHECK_CONTAINS(ss, "\ncopy       3  1.12 ms   375 us   250 us   750 us   "
                     "750 us   750 us   750 us\n");
  /* the tracks: GPU, stream, the launching thread, zones (the widths
   * follow the pid and the stream's address) */
  char head[64], who[64], want[160];
  snprintf(who, sizeof who, " %d pp-tests ", (int)getpid());
  for (int k = 0; k < 2; k++) {
    if (k == 0)
      snprintf(head, sizeof head, "\n0    0x0 ");
    else
      snprintf(head, sizeof head, "\n0    0x%" PRIxPTR " ",
               (uintptr_t)stream);
    const char *line = strstr(rs, head);
    CHECK(line != NULL);
    const char *eol = strchr(line + 1, '\n');
    CHECK(eol != NULL);
    CHECK(memmem(line, (size_t)(eol - line), who, strlen(who)) != NULL);
    CHECK_EQ(eol[-1], k == 0 ? '3' : '8');
    CHECK_EQ(eol[-2], ' ');
  }
  CHECK_CONTAINS(rs, "\n  resolved:                   11\n"
                     "  unresolved at shutdown:     0\n");
  free(ss);
  free(st);
  free(rs);
  free(rt);
  char *js = tb_summary_json(&s_a), *jt = tb_summary_json(&an);
  ss = between(js, "\"gpu_zones\":", "\"tracks\":");
  st = between(jt, "\"gpu_zones\":", "\"tracks\":");
  CHECK_STR(ss, st);
  snprintf(want, sizeof want, "\"count\":8,\"total_ns\":26500000");
  CHECK_CONTAINS(ss, want);
  snprintf(want, sizeof want, "\"p50_ns\":%" PRIu64 ",\"p90_ns\":%" PRIu64,
           gz_percentile("infer", 50), gz_percentile("infer", 90));
  CHECK_CONTAINS(ss, want);
  free(ss);
  free(st);
  free(js);
  free(jt);
  pp_analysis_free(&s_a);
  pp_trace_free(&s);
  pp_analysis_free(&an);
  pp_trace_free(&t);
}

/* Many zones: the stats-mode file holds their statistics, not the zones,
 * so it stays small. */
PP_TEST(gpu_zone_stats_mode_file_does_not_grow) {
  start("steps 0.01\n", 1, PP_MODE_STATS);
  for (int i = 0; i < 1500; i++) {
    pp_gpu_zone z = pp_gpu_zone_begin(stream, i % 3 ? "step" : "other");
    CHECK(z.slot != NULL);
    pp_gpu_zone_end(z);
    if (i % 100 == 99)
      sleep_ms(3); /* 2 ms of scripted GPU time per 100 zones */
  }
  pp_trace t;
  pp_analysis a = {0};
  fcu_finish(&t, &a);
  CHECK_EQ(meta_num(&t, "gpu_zones.resolved"), 1500);
  CHECK_EQ(t.ngpu, 0);
  const pp_gpu_stats *g = &a.prof.gpu;
  CHECK_EQ(g->nzones, 2);
  CHECK_EQ_U(g->zones[0].count + g->zones[1].count, 1500);
  CHECK_EQ(g->zones[0].total_ns, 1000 * 10000);
  CHECK_EQ(g->zones[0].max_ns, 10000);
  CHECK_EQ(g->ntracks, 1);
  CHECK_EQ_U(g->tracks[0].zones, 1500);
  size_t len;
  unsigned char *d = (unsigned char *)pp_test_slurp(fcu_trace_path, &len);
  CHECK(d != NULL);
  unsigned types[256];
  size_t n = chunk_types(d, len, types, 256);
  for (size_t i = 0; i < n; i++)
    CHECK_NE(types[i], PPT_CHUNK_EVENTS);
  /* 1500 GPU_ZONE events would take over 15 KiB. */
  CHECK_LT(len, 6000);
  free(d);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* Read len bytes of d through an exact-size heap copy (sanitizers catch a
 * read past the end), analyse and export; returns what was read. */
static int gz_read(const unsigned char *d, size_t len, pp_trace *t,
                   pp_analysis *a) {
  unsigned char *copy = malloc(len ? len : 1);
  CHECK(copy != NULL);
  memcpy(copy, d, len);
  char err[256];
  int rc = pp_trace_read_mem(copy, len, t, err, sizeof err);
  free(copy);
  if (rc != 0)
    return rc;
  CHECK_EQ(pp_analyze(t, a), 0);
  FILE *null = fopen("/dev/null", "w");
  CHECK(null != NULL);
  CHECK_EQ(pp_report_text(null, a, NULL), 0);
  CHECK_EQ(pp_export_summary_json(null, a), 0);
  CHECK_EQ(pp_export_chrome(null, a), 0);
  CHECK_EQ(pp_export_html(null, a), 0);
  fclose(null);
  return 0;
}

/* The STATS chunk of a stats-mode file with GPU zones cut at every byte
 * and re-sealed (so that the decoder sees the short payload), and the file
 * cut at every byte of it: nothing is read out of bounds; a chunk cut
 * before the GPU part loses the statistics (counted bad), one cut exactly
 * there reads as a 1.2 file (no GPU statistics, nothing bad), one cut
 * inside the GPU part keeps the rest of the statistics and a prefix of the
 * GPU records. */
PP_TEST_T(gpu_zone_stats_chunk_cut_at_every_byte, 120) {
  char script[1024];
  gz_script(script, sizeof script);
  start(script, 1, PP_MODE_STATS);
  {
    PP_ZONE("cpu");
    gz_run();
  }
  pp_trace full;
  pp_analysis full_a = {0};
  fcu_finish(&full, &full_a);
  CHECK_EQ(full_a.ngpu_agg, 4);
  uint64_t nzones = full_a.prof.nzones;
  CHECK_EQ(nzones, 1);
  pp_analysis_free(&full_a);
  pp_trace_free(&full);
  size_t len;
  unsigned char *d = (unsigned char *)pp_test_slurp(fcu_trace_path, &len);
  CHECK(d != NULL);
  /* Find the STATS chunk. */
  size_t off = 0, pos = PPT_FILE_HEADER_SIZE, plen = 0;
  while (pos + PPT_CHUNK_HEADER_SIZE <= len) {
    size_t n = ppt_get_u32(d + pos + 8);
    if (ppt_get_u16(d + pos + 4) == PPT_CHUNK_STATS) {
      off = pos;
      plen = n;
    }
    pos += PPT_CHUNK_HEADER_SIZE + n;
  }
  CHECK_GT(off, 0);
  size_t after = off + PPT_CHUNK_HEADER_SIZE + plen; /* the END chunk */
  unsigned char *m = malloc(len);
  CHECK(m != NULL);
  size_t base_end = 0; /* payload length of a 1.2 STATS chunk */
  /* the 1.4 pairing counts close the chunk: five varints, all 0 here (one
   * byte each); a cut among them loses them only */
  size_t end13 = plen - 5;
  for (size_t k = 0; k <= plen; k++) {
    /* Chunks before STATS, STATS cut to k bytes and re-sealed, END. */
    memcpy(m, d, off + PPT_CHUNK_HEADER_SIZE + k);
    ppt_chunk_header(m + off, PPT_CHUNK_STATS, m + off + PPT_CHUNK_HEADER_SIZE,
                     (uint32_t)k, ppt_get_u32(d + off + 16));
    memcpy(m + off + PPT_CHUNK_HEADER_SIZE + k, d + after, len - after);
    size_t mlen = off + PPT_CHUNK_HEADER_SIZE + k + (len - after);
    pp_trace t;
    pp_analysis a = {0};
    CHECK_EQ(gz_read(m, mlen, &t, &a), 0);
    CHECK(t.diag.clean_end);
    if (!t.from_stats) {
      if (base_end)
        PP_FAIL("cut at %zu of %zu: statistics lost after a cut at %zu "
                "kept them",
                k, plen, base_end);
      CHECK_EQ(t.diag.chunks_bad, 1);
    } else if (!base_end) {
      base_end = k; /* the first length that holds all of the 1.2 part */
      CHECK_EQ(t.diag.chunks_bad, 0);
      CHECK_EQ(a.ngpu_agg, 0);
      CHECK_EQ(a.gpu_agg_lost, -1);
      CHECK_EQ(a.prof.nzones, nzones);
      CHECK(a.prof.gpu.used); /* from META: "none resolved" */
      CHECK_EQ(a.prof.gpu.nzones, 0);
    } else {
      CHECK_EQ(a.prof.nzones, nzones);
      CHECK_EQ(t.diag.chunks_bad, k < end13);
      CHECK_LE(a.ngpu_agg, 4);
      if (k < end13)
        CHECK_EQ(a.gpu_agg_lost, -1);
      else
        CHECK(a.ngpu_agg == 4 && a.gpu_agg_lost == 0 && a.prof.gpu.nzones == 2);
      CHECK_EQ_U(a.prof.pairing.too_deep + a.prof.pairing.backwards +
                     a.prof.ranges_unbegun + a.prof.ranges_lost,
                 0);
    }
    pp_analysis_free(&a);
    pp_trace_free(&t);
  }
  CHECK_GT(base_end, 0);
  CHECK_LT(base_end, plen);
  /* The file cut inside the STATS chunk: truncated, read up to it. */
  for (size_t cut = off; cut < after; cut++) {
    pp_trace t;
    pp_analysis a = {0};
    CHECK_EQ(gz_read(d, cut, &t, &a), 0);
    CHECK(!t.from_stats && !t.diag.clean_end);
    CHECK_EQ(t.diag.truncated, cut > off);
    pp_analysis_free(&a);
    pp_trace_free(&t);
  }
  free(m);
  free(d);
}

/* The aggregate keeps at most PPT_STATS_GPU_MAX (site, device, stream)
 * keys and counts the zones of the others; the reader takes the records in
 * any number up to that, sorted, and the report says what was left out. */
PP_TEST(gpu_zone_stats_aggregate_caps_keys) {
  static const pp_srcloc site = {"k", NULL, NULL, 0, PP_KIND_ZONE};
  pp__aggregate *a = pp__aggregate_new();
  CHECK(a != NULL);
  pp__aggregate_define(a, 0, &site);
  const uint64_t nkeys = PPT_STATS_GPU_MAX + 4;
  for (uint64_t i = 0; i < nkeys; i++) /* streams in decreasing order */
    pp__aggregate_gpu(a, 0, 1, nkeys - i, 77, (int64_t)(i * 2000),
                      (int64_t)(i * 2000 + 500), 1000 + i % 7);
  pp__aggregate_gpu(a, 0, 1, nkeys, 78, -5, 0, 64); /* a known key */
  ppt_buf stats = {0}, defs = {0}, end = {0};
  pp__aggregate_finish(a, 0);
  pp__aggregate_encode(a, &stats);
  pp__aggregate_free(a);
  ppt_buf_uv(&defs, 0);
  ppt_buf_uv(&defs, PP_KIND_ZONE);
  ppt_buf_str(&defs, "k");
  ppt_buf_str(&defs, "");
  ppt_buf_str(&defs, "");
  ppt_buf_uv(&defs, 0);
  ppt_buf_uv(&end, 0);
  ppt_buf_uv(&end, 0);
  CHECK(!stats.oom && !defs.oom && !end.oom);
  size_t len = PPT_FILE_HEADER_SIZE + 3 * PPT_CHUNK_HEADER_SIZE + stats.len +
               defs.len + end.len;
  unsigned char *d = malloc(len);
  CHECK(d != NULL);
  ppt_file_header(d, 1);
  size_t pos = PPT_FILE_HEADER_SIZE;
  const ppt_buf *parts[] = {&defs, &stats, &end};
  static const uint16_t types[] = {PPT_CHUNK_SRCLOC, PPT_CHUNK_STATS,
                                   PPT_CHUNK_END};
  for (int i = 0; i < 3; i++) {
    ppt_chunk_header(d + pos, types[i], parts[i]->data, (uint32_t)parts[i]->len,
                     (uint32_t)i);
    memcpy(d + pos + PPT_CHUNK_HEADER_SIZE, parts[i]->data, parts[i]->len);
    pos += PPT_CHUNK_HEADER_SIZE + parts[i]->len;
  }
  ppt_buf_free(&stats);
  ppt_buf_free(&defs);
  ppt_buf_free(&end);
  pp_trace t;
  pp_analysis an = {0};
  CHECK_EQ(gz_read(d, len, &t, &an), 0);
  free(d);
  CHECK_EQ(t.diag.chunks_bad, 0);
  CHECK(t.from_stats);
  CHECK_EQ(an.ngpu_agg, PPT_STATS_GPU_MAX);
  CHECK_EQ(an.gpu_agg_lost, 4);
  const pp_gpu_stats *g = &an.prof.gpu;
  CHECK_EQ(g->nzones, 1);
  CHECK_EQ_U(g->zones[0].count, PPT_STATS_GPU_MAX + 1);
  CHECK_EQ(g->zones[0].min_ns, 64);
  CHECK_EQ(g->zones[0].max_ns, 1006);
  CHECK_EQ(g->ntracks, PPT_STATS_GPU_MAX);
  CHECK_EQ(g->not_aggregated, 4);
  /* The stream seen first ran the zone of the known key too; it started
   * first, so its launcher is the track's. */
  const pp_gpu_track *last = &g->tracks[g->ntracks - 1];
  CHECK_EQ_U(last->stream, nkeys);
  CHECK_EQ_U(last->zones, 2);
  CHECK_EQ_U(last->tid, 78);
  CHECK_EQ(an.prof.t0, -5); /* no CPU event: the GPU zones' range */
  char *r = tb_report_text(&an);
  CHECK_CONTAINS(r, "\nwarning: 4 resolved zones are not in the statistics "
                    "(stats mode keeps at most 4096 site/device/stream "
                    "keys)\n");
  /* the tracks: the first 16, and how many more the JSON has */
  CHECK_CONTAINS(r, "\n(4080 more rows: pipeprof export --format json)\n");
  free(r);
  pp_analysis_free(&an);
  pp_trace_free(&t);
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
