/* SPDX-License-Identifier: MIT */
/*
 * The streamed read (analyze/stream.h, format/reader.c's second pass):
 * many threads whose frame marks and counter updates of one series
 * interleave in time, recorded with fixed times, give the same zones,
 * frames and counters whether every event is stored or only a window of
 * a few hundred, and the window holds every event before its cut.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "analyze/stream.h"
#include "core/clock.h"
#include "core/recorder.h"
#include "format/pptrace.h"
#include "pipeprof.h"
#include "runner.h"

#define NTHREADS 40
#define REPS 60
#define KEEP 300

static const pp_srcloc L_WORK = {"s-work", NULL, NULL, 0, PP_KIND_ZONE};
static const pp_srcloc L_FRAME = {"s-frame", NULL, NULL, 0, PP_KIND_FRAME};
static const pp_srcloc L_LEVEL = {"s-level", NULL, NULL, 0,
                                  PP_KIND_COUNTER};

typedef struct worker {
  int k;
  int64_t base;
} worker;

/* Thread k marks frame i at base + 1000 * (i * NTHREADS + k): the marks
 * of all threads form one stream, 1000 ns apart, only in time order. */
static void *work(void *arg) {
  worker *w = arg;
  for (int i = 0; i < REPS; i++) {
    int64_t t = w->base + 1000 * (i * NTHREADS + w->k);
    CHECK_EQ(pp__test_record(PPT_EV_ZONE_BEGIN, &L_WORK, (uint64_t)t, 0, 0),
             1);
    CHECK_EQ(pp__test_record(PPT_EV_FRAME, &L_FRAME, (uint64_t)t + 1, 0, 0),
             1);
    CHECK_EQ(pp__test_record(PPT_EV_COUNTER_SET, &L_LEVEL, (uint64_t)t + 2,
                             (uint64_t)(i * NTHREADS + w->k), 0),
             1);
    CHECK_EQ(pp__test_record(PPT_EV_ZONE_END, &L_WORK,
                             (uint64_t)(t + 100 + 7 * w->k + i), 0, 0),
             1);
  }
  return NULL;
}

static const pp_zone_stats *zone(const pp_trace *t, const char *name) {
  for (size_t i = 0; i < t->prof.nzones; i++)
    if (!strcmp(pp_trace_loc_name(t, t->prof.zones[i].loc), name))
      return &t->prof.zones[i];
  return NULL;
}

PP_TEST_T(stream_window_and_cross_thread_series_same_figures, 60) {
  setenv("PIPEPROF_CLOCK", "monotonic", 1);
  char path[4096];
  snprintf(path, sizeof path, "%s/stream.pptrace", pp_test_tmpdir());
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.mode = PP_MODE_TRACE;
  cfg.out_path = path;
  cfg.buffer_kib = 1024;
  if (pp_init(&cfg) != PP_OK)
    PP_FAIL("pp_init: %s", pp_last_error());
  worker w[NTHREADS];
  pthread_t th[NTHREADS];
  int64_t base = pp__mono_ns() + 1000000;
  for (int k = 0; k < NTHREADS; k++) {
    w[k] = (worker){k, base};
    CHECK_EQ(pthread_create(&th[k], NULL, work, &w[k]), 0);
  }
  for (int k = 0; k < NTHREADS; k++)
    CHECK_EQ(pthread_join(th[k], NULL), 0);
  CHECK_EQ(pp_shutdown(), PP_OK);

  pp_trace all, win;
  char err[512];
  if (pp_trace_read_file(path, &all, err, sizeof err) != 0)
    PP_FAIL("%s", err);
  CHECK_EQ(pp_analyze(&all), 0);
  pp_stream *s = pp__stream_new();
  CHECK(s != NULL);
  pp_read_opts o = {KEEP, pp__stream_event, s};
  if (pp_trace_read_file_opts(path, &win, &o, err, sizeof err) != 0)
    PP_FAIL("%s", err);
  win.stream = s;
  CHECK_EQ(pp_analyze(&win), 0);

  /* The window: at most KEEP stored, and every event before the cut. */
  CHECK_EQ_U(win.diag.events, (uint64_t)NTHREADS * REPS * 4);
  CHECK(win.diag.events_kept <= KEEP && win.diag.events_kept > 0);
  uint64_t before = 0;
  for (size_t i = 0; i < all.nthreads; i++)
    for (size_t j = 0; j < all.threads[i].nev; j++)
      before += all.threads[i].ev[j].ts < win.diag.first_unkept_ns;
  CHECK_EQ_U(before, win.diag.events_kept);

  /* The figures: equal, and right. */
  const pp_zone_stats *za = zone(&all, "s-work"), *zw = zone(&win, "s-work");
  CHECK(za && zw);
  CHECK_EQ_U(za->count, (uint64_t)NTHREADS * REPS);
  CHECK_EQ_U(zw->count, za->count);
  CHECK_EQ(zw->total_ns, za->total_ns);
  CHECK_EQ(zw->max_ns, za->max_ns);
  CHECK_EQ(zw->min_ns, za->min_ns);
  CHECK_EQ_U(all.prof.nframes, 1);
  CHECK_EQ_U(win.prof.nframes, 1);
  const pp_frame_stats *fa = &all.prof.frames[0], *fw = &win.prof.frames[0];
  CHECK_EQ_U(fa->frames, (uint64_t)NTHREADS * REPS);
  CHECK_EQ_U(fw->frames, fa->frames);
  /* every gap 1000 ns: taken in time order across the threads */
  CHECK_EQ_U(fa->hist.min, 1000);
  CHECK_EQ_U(fa->hist.max, 1000);
  CHECK_EQ_U(fw->hist.min, 1000);
  CHECK_EQ_U(fw->hist.max, 1000);
  CHECK_NEAR(fw->jitter_ns, 0, 1e-9);
  CHECK_EQ_U(all.prof.ncounters, 1);
  CHECK_EQ_U(win.prof.ncounters, 1);
  /* the last value set, in time order, is the highest */
  CHECK_NEAR(all.prof.counters[0].last, NTHREADS * REPS - 1, 0);
  CHECK_NEAR(win.prof.counters[0].last, NTHREADS * REPS - 1, 0);
  CHECK_NEAR(win.prof.counters[0].mean, all.prof.counters[0].mean, 1e-9);
  /* per-thread figures from the stream */
  for (size_t i = 0; i < win.nthreads; i++) {
    CHECK_EQ_U(win.threads[i].events, (uint64_t)REPS * 4);
    CHECK_EQ_U(win.threads[i].zones_measured, (uint64_t)REPS);
  }
  pp_trace_free(&all);
  pp_trace_free(&win);
}
