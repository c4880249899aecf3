/* SPDX-License-Identifier: MIT */
/*
 * One hostile event sequence, every road: recorded in trace, stats and
 * flight mode, it must give the same per-zone counts and the same
 * histograms in each mode's report, and the same counts in the live
 * windows (issue 12's outcome test). The sequence has lost ends, ends
 * without begins, 300-deep nesting, three threads interleaved, a clock
 * running backwards, zones open at the end, and ranges ended on another
 * thread (so their halves reach each road in another order) or never. Times are chosen by the
 * test (pp__test_record with the CLOCK_MONOTONIC tick source), so
 * durations are the same in every run and every mode. Trace and flight
 * files are also read as the tools read them: every event streamed
 * through the figures, at most KEEP stored.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze/analyze.h"
#include "analyze/stream.h"
#include "core/clock.h"
#include "core/recorder.h"
#include "format/pptrace.h"
#include "model/reader.h"
#include "pipeprof.h"
#include "runner.h"

#define NTHREADS 3
#define REPS 50    /* A > B pairs per thread */
#define LOST 5     /* X > Y pairs whose Y loses its end */
#define STRAY 3    /* ends of Z, never begun */
#define DEEP 300   /* nested D zones */
#define RANGES 10  /* ranges begun per thread, ended by the next thread */
#define OPEN 2     /* of which never ended */
#define KEEP 100   /* events a streamed read stores */

static const pp_srcloc L_A = {"id-a", NULL, NULL, 0, PP_KIND_ZONE};
static const pp_srcloc L_B = {"id-b", NULL, NULL, 0, PP_KIND_ZONE};
static const pp_srcloc L_X = {"id-x", NULL, NULL, 0, PP_KIND_ZONE};
static const pp_srcloc L_Y = {"id-y", NULL, NULL, 0, PP_KIND_ZONE};
static const pp_srcloc L_Z = {"id-z", NULL, NULL, 0, PP_KIND_ZONE};
static const pp_srcloc L_D = {"id-d", NULL, NULL, 0, PP_KIND_ZONE};
static const pp_srcloc L_E = {"id-e", NULL, NULL, 0, PP_KIND_ZONE};
static const pp_srcloc L_F = {"id-f", NULL, NULL, 0, PP_KIND_ZONE};
static const pp_srcloc L_W = {"id-w", NULL, NULL, 0, PP_KIND_ZONE};
static const pp_srcloc L_R = {"id-r", NULL, NULL, 0, PP_KIND_ZONE};

static const char *const names[] = {"id-a", "id-b", "id-x", "id-d",
                                    "id-e", "id-f", "id-r"};
#define NNAMES (sizeof names / sizeof names[0])

typedef struct worker {
  int k;
  int64_t base;
  int64_t last; /* the latest time it recorded */
} worker;

static void rec(unsigned type, const pp_srcloc *loc, int64_t ts) {
  CHECK_EQ(pp__test_record(type, loc, (uint64_t)ts, 0, 0), 1);
}

static void *hostile(void *arg) {
  worker *w = arg;
  int64_t t = w->base + w->k * 3; /* threads interleave in time too */
  for (int64_t i = 0; i < REPS; i++) {
    int64_t db = 1000 + 37 * i * (w->k + 1), da = db + 500 + 11 * i;
    rec(PPT_EV_ZONE_BEGIN, &L_A, t);
    rec(PPT_EV_ZONE_BEGIN, &L_B, t + 10);
    rec(PPT_EV_ZONE_END, &L_B, t + 10 + db);
    rec(PPT_EV_ZONE_END, &L_A, t + da);
    t += da + 100;
  }
  for (int i = 0; i < LOST; i++) { /* Y's end is lost */
    rec(PPT_EV_ZONE_BEGIN, &L_X, t);
    rec(PPT_EV_ZONE_BEGIN, &L_Y, t + 50);
    rec(PPT_EV_ZONE_END, &L_X, t + 700 + 13 * i);
    t += 1000;
  }
  for (int i = 0; i < STRAY; i++) /* ends without begins */
    rec(PPT_EV_ZONE_END, &L_Z, t += 10);
  for (int i = 0; i < DEEP; i++) /* nesting past the cap */
    rec(PPT_EV_ZONE_BEGIN, &L_D, t += 2);
  for (int i = 0; i < DEEP; i++)
    rec(PPT_EV_ZONE_END, &L_D, t += 3);
  t += 100; /* the clock runs backwards */
  rec(PPT_EV_ZONE_BEGIN, &L_E, t);
  rec(PPT_EV_ZONE_END, &L_E, t - 40);
  rec(PPT_EV_ZONE_BEGIN, &L_F, t - 1000);
  rec(PPT_EV_ZONE_END, &L_F, t + 200);
  /* ranges: begun here, ended by another thread (so the writer sees the
   * halves in any order), times fixed by the id; the last OPEN of the
   * next thread's never end, and one end has no begin */
  int next = (w->k + 1) % NTHREADS;
  for (int i = 0; i < RANGES; i++) {
    uint64_t id = 1000 * (uint64_t)(w->k + 1) + (uint64_t)i;
    CHECK_EQ(pp__test_record(PPT_EV_RANGE_BEGIN, &L_R,
                             (uint64_t)(w->base + 100 * i), id, 0), 1);
    uint64_t other = 1000 * (uint64_t)(next + 1) + (uint64_t)i;
    if (i < RANGES - OPEN)
      CHECK_EQ(pp__test_record(PPT_EV_RANGE_END, &L_R,
                               (uint64_t)(w->base + 100 * i + 5000 + 7 * i),
                               other, 0), 1);
  }
  CHECK_EQ(pp__test_record(PPT_EV_RANGE_END, &L_R, (uint64_t)t, 999999, 0),
           1);
  t += 300;
  rec(PPT_EV_ZONE_BEGIN, &L_W, t); /* open at the end */
  w->last = t;
  return NULL;
}

typedef struct figures {
  uint64_t count[NNAMES];
  int64_t total[NNAMES], min[NNAMES], max[NNAMES];
  uint64_t pct[NNAMES][1001]; /* the histogram at every 0.1 percentile */
  double mean[NNAMES];
  uint64_t p50[NNAMES], p99[NNAMES];
  pp_live_stats live[NNAMES];
  uint64_t lost_ends, stray_ends, too_deep, backwards, unended, unbegun;
} figures;

/* The report's figures of an analysed-to-be trace. */
static void report_figures(pp_trace *t, pp_analysis *a, pp_mode mode,
                           figures *f) {
  CHECK_EQ(pp_analyze(t, a), 0);
  CHECK_EQ(t->from_stats, mode == PP_MODE_STATS);
  CHECK_EQ_U(a->prof.dropped, 0);
  for (size_t n = 0; n < NNAMES; n++) {
    const pp_zone_stats *z = NULL;
    for (size_t i = 0; i < a->prof.nzones; i++)
      if (!strcmp(pp_trace_loc_name(t, a->prof.zones[i].loc), names[n]))
        z = &a->prof.zones[i];
    if (!z)
      PP_FAIL("%s: no zone %s", pp_trace_meta(t, "mode"), names[n]);
    f->count[n] = z->count;
    f->total[n] = z->total_ns;
    f->min[n] = z->min_ns;
    f->max[n] = z->max_ns;
    f->p50[n] = pp_hist_percentile(&z->hist, 50);
    f->p99[n] = pp_hist_percentile(&z->hist, 99);
    for (int q = 0; q <= 1000; q++)
      f->pct[n][q] = pp_hist_percentile(&z->hist, q / 10.0);
    f->mean[n] = z->mean_ns;
  }
  f->lost_ends = a->prof.unclosed;
  f->stray_ends = a->prof.unmatched_ends;
  f->too_deep = a->prof.pairing.too_deep;
  f->backwards = a->prof.pairing.backwards;
  f->unended = a->prof.ranges_unclosed;
  f->unbegun = a->prof.ranges_unbegun;
}

static void record_mode(pp_mode mode, const char *path, figures *f) {
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.mode = mode;
  cfg.out_path = path;
  cfg.buffer_kib = 4096; /* no drop, and the flight ring keeps it all */
  if (pp_init(&cfg) != PP_OK)
    PP_FAIL("pp_init: %s", pp_last_error());
  CHECK_STR(pp__clock_source(), "monotonic");
  worker w[NTHREADS];
  pthread_t th[NTHREADS];
  int64_t base = pp__mono_ns() + 1000000;
  for (int k = 0; k < NTHREADS; k++) {
    w[k] = (worker){k, base, 0};
    CHECK_EQ(pthread_create(&th[k], NULL, hostile, &w[k]), 0);
  }
  int64_t last = 0;
  for (int k = 0; k < NTHREADS; k++) {
    CHECK_EQ(pthread_join(th[k], NULL), 0);
    if (w[k].last > last)
      last = w[k].last;
  }
  /* The live windows: wait (not a timing assertion: the outcome does not
   * depend on how long it takes) until an interval that ended after the
   * threads did has closed, then read the 60-interval window, which holds
   * them all. The writer pass that closes such an interval has first
   * drained every ring (trace), peeked at them (flight) or looked at every
   * dead thread's tallies (stats), and the windows it publishes count the
   * values placed in earlier intervals too; an interval merely holding the
   * last zone could close before a slow thread's last values arrived (seen
   * under ASan in stats mode, where the sequence's times are the test's,
   * all in the past). */
  int64_t joined = pp__mono_ns();
  for (int tries = 0;; tries++) {
    /* every name's window: the writer publishes them one by one, so a
     * window read right after another's may still be the interval
     * before (seen under TSan: the ranges' window, published last,
     * still empty) */
    size_t ready = 0;
    for (size_t n = 0; n < NNAMES; n++) {
      pp_live_stats st = {0};
      ready += pp_live_zone(names[n], 60, &st) == PP_OK &&
               st.as_of_ns > last && st.as_of_ns > joined;
    }
    if (ready == NNAMES)
      break;
    if (tries > 3000)
      PP_FAIL("live window never reached the end of the sequence");
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  for (size_t n = 0; n < NNAMES; n++)
    CHECK_EQ(pp_live_zone(names[n], 60, &f->live[n]), PP_OK);
  CHECK_EQ(pp_shutdown(), PP_OK);

  pp_trace t;

  pp_analysis a = {0};
  char err[512] = "";
  if (pp_trace_read_file(path, &t, err, sizeof err) != 0)
    PP_FAIL("cannot read %s: %s", path, err);
  report_figures(&t, &a, mode, f);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  if (mode == PP_MODE_STATS)
    return;
  /* One more road: the file read as the tools read it, every event
   * streamed through the figures and only the first KEEP stored. */
  pp_stream *s = pp__stream_new();
  CHECK(s != NULL);
  pp_read_opts o = {KEEP, pp__stream_event, s, 0};
  if (pp_trace_read_file_opts(path, &t, &o, err, sizeof err) != 0)
    PP_FAIL("cannot read %s: %s", path, err);
  a.stream = s;
  CHECK(t.diag.events_kept <= KEEP && t.diag.events_kept > 0);
  CHECK(t.diag.events > 10 * KEEP);
  static figures g;
  memset(&g, 0, sizeof g);
  report_figures(&t, &a, mode, &g);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  for (size_t n = 0; n < NNAMES; n++) {
    CHECK_EQ_U(g.count[n], f->count[n]);
    CHECK_EQ(g.total[n], f->total[n]);
    CHECK_EQ(g.min[n], f->min[n]);
    CHECK_EQ(g.max[n], f->max[n]);
    CHECK(memcmp(g.pct[n], f->pct[n], sizeof g.pct[n]) == 0);
    CHECK_NEAR(g.mean[n], f->mean[n], 1e-9 * f->mean[n]);
  }
  CHECK_EQ_U(g.lost_ends, f->lost_ends);
  CHECK_EQ_U(g.stray_ends, f->stray_ends);
  CHECK_EQ_U(g.too_deep, f->too_deep);
  CHECK_EQ_U(g.backwards, f->backwards);
  CHECK_EQ_U(g.unended, f->unended);
  CHECK_EQ_U(g.unbegun, f->unbegun);
}

PP_TEST_T(identity_hostile_sequence_same_figures_in_every_mode, 120) {
  setenv("PIPEPROF_CLOCK", "monotonic", 1);
  /* Intervals of 1 s: the 60-interval window read once the sequence's
   * last interval closed still holds the whole sequence when this thread
   * waits seconds to be scheduled on a busy machine (100 ms intervals, a
   * 6 s window, lost it once under ASan and load). */
  setenv("PIPEPROF_LIVE", "interval=1s", 1);
  static const pp_mode modes[3] = {PP_MODE_TRACE, PP_MODE_STATS,
                                   PP_MODE_FLIGHT};
  static const char *const mode_names[3] = {"trace", "stats", "flight"};
  static figures f[3];
  for (int m = 0; m < 3; m++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/identity-%s.pptrace", pp_test_tmpdir(),
             mode_names[m]);
    record_mode(modes[m], path, &f[m]);
  }
  /* What the policy says (src/pair/zones.h), per thread: REPS A and B;
   * LOST X (their Y lost its end: not counted); the 256 D zones within
   * the cap; one E (0 ns: its end came before its begin) and one F (its
   * begin is held at the thread's time: 200 ns); W open at the end. */
  const uint64_t want[NNAMES] = {NTHREADS * REPS,  NTHREADS * REPS,
                                 NTHREADS * LOST,  NTHREADS * 256,
                                 NTHREADS,         NTHREADS,
                                 NTHREADS * (RANGES - OPEN)};
  for (size_t n = 0; n < NNAMES; n++)
    CHECK_EQ_U(f[0].count[n], want[n]);
  CHECK_EQ(f[0].min[4], 0);  /* E */
  CHECK_EQ(f[0].max[4], 0);
  CHECK_EQ(f[0].min[5], 200); /* F */
  CHECK_EQ(f[0].max[5], 200);
  CHECK_EQ_U(f[0].lost_ends, NTHREADS * (LOST + 1));
  CHECK_EQ_U(f[0].stray_ends, NTHREADS * STRAY);
  CHECK_EQ_U(f[0].too_deep, NTHREADS * (DEEP - 256));
  CHECK_EQ_U(f[0].backwards, NTHREADS * 2); /* E's end, F's begin */
  CHECK_EQ_U(f[0].unended, NTHREADS * OPEN);
  CHECK_EQ_U(f[0].unbegun, NTHREADS); /* the ends of id 999999 */
  for (int m = 0; m < 3; m++) {
    for (size_t n = 0; n < NNAMES; n++) {
      /* the same counts, totals, extremes and histograms (every bucket:
       * the moments may differ in the last bits, as zones of different
       * threads close in another order on another road) */
      CHECK_EQ_U(f[m].count[n], f[0].count[n]);
      CHECK_EQ(f[m].total[n], f[0].total[n]);
      CHECK_EQ(f[m].min[n], f[0].min[n]);
      CHECK_EQ(f[m].max[n], f[0].max[n]);
      for (int q = 0; q <= 1000; q++)
        if (f[m].pct[n][q] != f[0].pct[n][q])
          PP_FAIL("%s: %s p%.1f %llu, trace mode %llu", mode_names[m],
                  names[n], q / 10.0, (unsigned long long)f[m].pct[n][q],
                  (unsigned long long)f[0].pct[n][q]);
      CHECK_NEAR(f[m].mean[n], f[0].mean[n], 1e-9 * f[0].mean[n]);
      /* the live window: the same count and maximum; percentiles within
       * its coarser buckets (1/32) of the report's */
      const pp_live_stats *l = &f[m].live[n];
      if (l->count != f[0].count[n])
        PP_FAIL("%s: %s live count %llu, trace mode %llu (window as of "
                "%lld)",
                mode_names[m], names[n], (unsigned long long)l->count,
                (unsigned long long)f[0].count[n], (long long)l->as_of_ns);
      CHECK_EQ_U(l->max_ns, (uint64_t)f[0].max[n]);
      CHECK_NEAR((double)l->p50_ns, (double)f[0].p50[n],
                 (double)f[0].p50[n] / 32.0 + 1);
      CHECK_NEAR((double)l->p99_ns, (double)f[0].p99[n],
                 (double)f[0].p99[n] / 32.0 + 1);
    }
    CHECK_EQ_U(f[m].lost_ends, f[0].lost_ends);
    CHECK_EQ_U(f[m].stray_ends, f[0].stray_ends);
    CHECK_EQ_U(f[m].too_deep, f[0].too_deep);
    CHECK_EQ_U(f[m].backwards, f[0].backwards);
    CHECK_EQ_U(f[m].unended, f[0].unended);
    CHECK_EQ_U(f[m].unbegun, f[0].unbegun);
  }
}
