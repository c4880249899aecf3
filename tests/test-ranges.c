/* SPDX-License-Identifier: MIT */
/*
 * Ranges that start on one thread and end on another (pp_range_start /
 * pp_range_end, what nvtxRangeStart/End map to): recorded in trace and
 * stats modes, paired by id in the analysis, with zone statistics, and
 * exported as async slices.
 */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "export/export.h"
#include "model/reader.h"
#include "pipeprof.h"
#include "runner.h"

#define NRANGES 50

static uint64_t ids[NRANGES];

static void *ender(void *arg) {
  (void)arg;
  pp_thread_name("ender");
  for (int i = 0; i < NRANGES; i++) {
    if (i % 10 == 9)
      continue; /* these stay open */
    pp_range_end(ids[i]);
  }
  return NULL;
}

static void record(pp_mode mode, const char *path) {
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.mode = mode;
  cfg.out_path = path;
  cfg.install_signals = 0;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  pp_thread_name("starter");
  struct timespec ts = {0, 20000};
  for (int i = 0; i < NRANGES; i++) {
    ids[i] = pp_range_start(i % 2 ? "request" : "batch");
    CHECK(ids[i] != 0);
    nanosleep(&ts, NULL);
  }
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, ender, NULL), 0);
  pthread_join(th, NULL);
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_range_end(0); /* harmless */
  CHECK_EQ(pp_range_start("off"), 0);
}

static const pp_zone_stats *find(const pp_analysis *a, const char *name) {
  const pp_trace *t = a->trace;
  for (size_t i = 0; i < a->prof.nzones; i++)
    if (strcmp(pp_trace_loc_name(t, a->prof.zones[i].loc), name) == 0)
      return &a->prof.zones[i];
  return NULL;
}

PP_TEST(ranges_cross_threads_trace) {
  char path[4200], err[256];
  snprintf(path, sizeof path, "%s/r.pptrace", pp_test_tmpdir());
  record(PP_MODE_TRACE, path);
  pp_trace t;
  pp_analysis a = {0};
  CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK_EQ(a.nranges, NRANGES);
  CHECK_EQ(a.prof.ranges_unclosed, NRANGES / 10);
  size_t crossed = 0;
  for (size_t i = 0; i < a.nranges; i++) {
    const pp_range *r = &a.ranges[i];
    CHECK(r->end >= r->start);
    if (i)
      CHECK(r->start >= a.ranges[i - 1].start);
    crossed += !r->unclosed && r->tid_start != r->tid_end;
  }
  CHECK_EQ(crossed, NRANGES - NRANGES / 10);
  const pp_zone_stats *req = find(&a, "request"), *bat = find(&a, "batch");
  CHECK(req && bat);
  /* the ranges left open (i % 10 == 9: all "request") have no duration
   * and are not counted, as in stats mode (pair/intervals.h) */
  CHECK_EQ(req->count, NRANGES / 2 - NRANGES / 10);
  CHECK_EQ(bat->count, NRANGES / 2);
  CHECK_EQ(req->self_ns, req->total_ns); /* ranges do not nest */
  char *json = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&json, &len);
  CHECK_EQ(pp_export_chrome(f, &a), 0);
  fclose(f);
  size_t b = 0, e = 0;
  for (const char *p = json; (p = strstr(p, "\"cat\":\"range\"")); p++) {
    const char *ph = p;
    while (ph > json && strncmp(ph, "\"ph\":", 5) != 0)
      ph--;
    b += ph[6] == 'b';
    e += ph[6] == 'e';
  }
  CHECK_EQ(b, NRANGES);
  CHECK_EQ(e, NRANGES);
  free(json);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(ranges_cross_threads_stats) {
  char path[4200], err[256];
  snprintf(path, sizeof path, "%s/s.pptrace", pp_test_tmpdir());
  record(PP_MODE_STATS, path);
  pp_trace t;
  pp_analysis a = {0};
  CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK_EQ(t.from_stats, 1);
  const pp_zone_stats *req = find(&a, "request"), *bat = find(&a, "batch");
  CHECK(req && bat);
  /* only closed ranges have a duration, as in trace mode */
  CHECK_EQ(req->count, NRANGES / 2 - NRANGES / 10);
  CHECK_EQ(bat->count, NRANGES / 2);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}
