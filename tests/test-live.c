/* SPDX-License-Identifier: MIT */
/*
 * Live statistics (docs/live.md): the interval histogram, rolling window,
 * EWMA and median/MAD detector on known series; the engine driven by
 * synthetic events and an injected clock (a latency jump raises exactly
 * one anomaly, the query API on known durations, requests paired across
 * threads, resource alerts once per episode); and whole sessions: a zone
 * whose latency jumps tenfold, recorded with its schedule's times so that
 * load cannot change what the engine sees (callback, trace file, report,
 * summary, Chrome export), flight mode dumping from the callback, a
 * memory-near-full alert from a fixture sysroot, and invalid PIPEPROF_LIVE
 * / PIPEPROF_ALERTS.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze/analysis.h"
#include "core/clock.h"
#include "core/recorder.h"
#include "core/writer.h"
#include "export/export.h"
#include "format/pptrace.h"
#include "model/reader.h"
#include "pipeprof.h"
#include "ring_slots.h"
#include "runner.h"
#include "sink/live.h"
#include "sink/sink.h"
#include "stats/live.h"

#define MS 1000000LL
#define SEC 1000000000LL

/* xorshift64* and Box-Muller: a fixed-seed normal sample. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static double urand(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 2685821657736338717ULL) >> 11) * 0x1.0p-53;
}
static double nrand(void) {
  double u = urand(), v = urand();
  if (u < 1e-300)
    u = 1e-300;
  return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* ---- interval histogram ------------------------------------------------- */

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

PP_TEST(live_lhist_percentiles_within_bucket_error) {
  enum { N = 20000 };
  static uint64_t v[N];
  pp_lhist h, a, b;
  pp_lhist_init(&h);
  pp_lhist_init(&a);
  pp_lhist_init(&b);
  for (int i = 0; i < N; i++) {
    v[i] = (uint64_t)(exp(urand() * 20)); /* 1 ns .. 0.5 s, log-uniform */
    pp_lhist_record(&h, v[i]);
    pp_lhist_record(i % 2 ? &a : &b, v[i]);
  }
  qsort(v, N, sizeof v[0], cmp_u64);
  CHECK_EQ_U(h.count, N);
  CHECK_EQ_U(h.min, v[0]);
  CHECK_EQ_U(h.max, v[N - 1]);
  static const double ps[] = {1, 10, 50, 90, 99, 99.9, 100};
  for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
    size_t rank = (size_t)ceil(ps[k] / 100 * N);
    uint64_t exact = v[rank - 1];
    uint64_t got = pp_lhist_percentile(&h, ps[k]);
    CHECK(got >= exact);
    CHECK(got - exact <= exact / 32 + 1);
  }
  /* merge gives the same histogram as recording everything in one */
  CHECK_EQ(pp_lhist_merge(&a, &b), 0);
  CHECK_EQ_U(a.count, h.count);
  for (double p = 0; p <= 100; p += 0.5)
    CHECK_EQ_U(pp_lhist_percentile(&a, p), pp_lhist_percentile(&h, p));
  /* bucket geometry */
  for (int i = 0; i < 5000; i++) {
    uint64_t x = (uint64_t)(exp(urand() * 40));
    uint64_t hi = pp_lhist_highest(pp_lhist_index(x));
    CHECK(hi >= x);
    CHECK(hi - x <= x / 32);
    CHECK_EQ(pp_lhist_index(hi), pp_lhist_index(x));
    CHECK_EQ(pp_lhist_index(hi + 1), pp_lhist_index(x) + 1);
  }
  CHECK_EQ_U(pp_lhist_highest(pp_lhist_index(UINT64_MAX)), UINT64_MAX);
  pp_lhist_reset(&h);
  CHECK_EQ_U(h.count, 0);
  CHECK_EQ_U(pp_lhist_percentile(&h, 50), 0);
  pp_lhist_free(&h);
  pp_lhist_free(&a);
  pp_lhist_free(&b);
}

/* What a source counted between two looks (stats mode's tallies): the
 * later cumulative histogram less the earlier, bucket by bucket; a bucket
 * that seems to go back counts nothing. */
PP_TEST(live_lhist_delta_between_two_looks) {
  pp_lhist a, b, d;
  pp_lhist_init(&a);
  pp_lhist_init(&b);
  pp_lhist_init(&d);
  CHECK_EQ(pp_lhist_add_n(&a, pp_lhist_index(100), 3), 0);
  CHECK_EQ(pp_lhist_add_n(&b, pp_lhist_index(100), 5), 0);
  CHECK_EQ(pp_lhist_add_n(&b, pp_lhist_index(7), 1), 0);
  CHECK_EQ(pp_lhist_add_n(&b, pp_lhist_index(1000000), 4), 0);
  CHECK_EQ(pp_lhist_delta(&d, &b, &a), 0);
  CHECK_EQ_U(d.count, 2 + 1 + 4);
  CHECK_EQ_U(d.min, 7);
  CHECK_EQ_U(d.max, pp_lhist_highest(pp_lhist_index(1000000)));
  CHECK(pp_lhist_lowest(pp_lhist_index(1000000)) <= 1000000);
  CHECK_EQ_U(pp_lhist_percentile(&d, 25),
             pp_lhist_highest(pp_lhist_index(100)));
  /* the other way round: nothing grew but the buckets prev lacks */
  CHECK_EQ(pp_lhist_delta(&d, &a, &b), 0);
  CHECK_EQ_U(d.count, 0);
  pp_lhist_free(&a);
  pp_lhist_free(&b);
  pp_lhist_free(&d);
}

PP_TEST(live_roll_windows_merge_recent_intervals) {
  pp_roll r;
  pp_roll_init(&r);
  pp_lhist out;
  pp_lhist_init(&out);
  /* interval i holds i + 1 values equal to 1000 * (i + 1) */
  for (int64_t i = 0; i < 100; i++)
    for (int64_t k = 0; k <= i; k++)
      CHECK_EQ(pp_roll_record(&r, i, (uint64_t)(1000 * (i + 1))), 0);
  CHECK_EQ(pp_roll_window(&r, 99, 1, &out), 0);
  CHECK_EQ_U(out.count, 100);
  CHECK_EQ_U(out.min, 100000);
  CHECK_EQ(pp_roll_window(&r, 99, 10, &out), 0);
  CHECK_EQ_U(out.count, 100 + 99 + 98 + 97 + 96 + 95 + 94 + 93 + 92 + 91);
  CHECK_EQ_U(out.min, 91000);
  CHECK_EQ_U(out.max, 100000);
  CHECK_EQ(pp_roll_window(&r, 99, 60, &out), 0);
  CHECK_EQ_U(out.min, 41000);
  /* a window ending earlier; and an interval that left the ring */
  CHECK_EQ(pp_roll_window(&r, 98, 1, &out), 0);
  CHECK_EQ_U(out.count, 99);
  CHECK_EQ(pp_roll_record(&r, 99 - 64, 5), -1);
  CHECK_EQ_U(pp_roll_count(&r, 20), 0);
  CHECK_EQ_U(pp_roll_count(&r, 90), 91);
  /* a late value of a recent interval lands in it */
  CHECK_EQ(pp_roll_record(&r, 95, 7), 0);
  CHECK_EQ_U(pp_roll_count(&r, 95), 97);
  pp_lhist_free(&out);
  pp_roll_free(&r);
}

/* ---- EWMA ------------------------------------------------------------------ */

PP_TEST(live_ewma_time_constant_and_irregular_steps) {
  pp_ewma e;
  pp_ewma_init(&e, 10);
  pp_ewma_update(&e, 100, 1); /* first value sets it */
  CHECK_NEAR(e.value, 100, 1e-12);
  for (int i = 0; i < 50; i++)
    pp_ewma_update(&e, 100, 0.3);
  CHECK_NEAR(e.value, 100, 1e-9);
  /* a step to 200: after tau seconds 63.2% of the way, whatever the steps */
  pp_ewma a = e, b = e, c = e;
  pp_ewma_update(&a, 200, 10);
  for (int i = 0; i < 100; i++)
    pp_ewma_update(&b, 200, 0.1);
  static const double irregular[] = {0.5, 3, 0.25, 1.25, 5};
  for (size_t i = 0; i < 5; i++)
    pp_ewma_update(&c, 200, irregular[i]);
  double want = 100 + 100 * (1 - exp(-1));
  CHECK_NEAR(a.value, want, 1e-9);
  CHECK_NEAR(b.value, want, 1e-9);
  CHECK_NEAR(c.value, want, 1e-9);
  /* dt 0 or negative changes nothing; NaN is ignored */
  double before = c.value;
  pp_ewma_update(&c, 1e6, 0);
  pp_ewma_update(&c, NAN, 1);
  CHECK_NEAR(c.value, before, 0);
}

/* ---- detector ---------------------------------------------------------------- */

static pp_detector make_det(double k, unsigned hist, unsigned min_v,
                            double floor_rel, int dir) {
  pp_detector_cfg c;
  pp_detector_cfg_default(&c);
  c.k = k;
  c.history = hist;
  c.min_values = min_v;
  c.floor_rel = floor_rel;
  c.direction = dir;
  pp_detector d;
  CHECK_EQ(pp_detector_init(&d, &c), 0);
  return d;
}

PP_TEST(live_detector_flags_a_step_at_the_step) {
  pp_detector d = make_det(5, 60, 10, 0.05, PP_DETECT_BOTH);
  int starts = 0, first = -1, ends = 0;
  for (int i = 0; i < 120; i++) {
    double x = (i < 70 ? 100 : 160) + 2 * nrand();
    pp_detect_result r = pp_detector_step(&d, x);
    if (r == PP_DETECT_START) {
      starts++;
      if (first < 0) {
        first = i;
        CHECK_NEAR(d.median, 100, 2);
        CHECK(d.threshold > d.median && d.threshold < x);
      }
    }
    ends += r == PP_DETECT_END;
  }
  CHECK_EQ(first, 70);
  CHECK_EQ(starts, 1);
  /* the new level becomes the baseline once it fills half the history */
  CHECK_EQ(ends, 1);
  CHECK_EQ(d.active, 0);
  pp_detector_free(&d);

  /* direction: an upward-only detector ignores a drop */
  d = make_det(5, 30, 10, 0.05, PP_DETECT_UP);
  starts = 0;
  for (int i = 0; i < 60; i++)
    starts += pp_detector_step(&d, i < 30 ? 100 : 10) == PP_DETECT_START;
  CHECK_EQ(starts, 0);
  pp_detector_free(&d);
}

PP_TEST(live_detector_quiet_on_white_noise_and_constants) {
  rng_state = 12345;
  pp_detector d = make_det(5, 60, 10, 0.05, PP_DETECT_BOTH);
  int flags = 0;
  for (int i = 0; i < 5000; i++)
    flags += pp_detector_step(&d, 100 + 10 * nrand()) == PP_DETECT_START;
  CHECK_LE(flags, 2);
  pp_detector_free(&d);

  /* a constant series, zero included: MAD 0, no flag */
  static const double consts[] = {42, 0, 1e9};
  for (size_t k = 0; k < 3; k++) {
    d = make_det(5, 20, 5, 0.05, PP_DETECT_BOTH);
    for (int i = 0; i < 200; i++)
      CHECK_EQ(pp_detector_step(&d, consts[k]), PP_DETECT_NONE);
    pp_detector_free(&d);
  }
  /* the MAD floor: a near-flat series does not alarm on a 1% wiggle */
  d = make_det(5, 20, 5, 0.05, PP_DETECT_BOTH);
  for (int i = 0; i < 50; i++)
    CHECK_EQ(pp_detector_step(&d, 1000 + (i % 2)), PP_DETECT_NONE);
  CHECK_EQ(pp_detector_step(&d, 1010), PP_DETECT_NONE);
  CHECK_EQ(pp_detector_step(&d, 2000), PP_DETECT_START);
  pp_detector_free(&d);
  /* nothing is flagged before min_values values */
  d = make_det(5, 20, 8, 0.05, PP_DETECT_BOTH);
  for (int i = 0; i < 7; i++)
    CHECK_EQ(pp_detector_step(&d, i == 6 ? 1e6 : 1), PP_DETECT_NONE);
  pp_detector_free(&d);
  /* invalid configurations */
  pp_detector_cfg c;
  pp_detector_cfg_default(&c);
  c.history = 0;
  CHECK_EQ(pp_detector_init(&d, &c), -1);
  pp_detector_cfg_default(&c);
  c.k = 0;
  CHECK_EQ(pp_detector_init(&d, &c), -1);
}

PP_TEST(live_detector_poisson_floor_for_low_counts) {
  /* 4 events per 0.1 s interval: a drop to 0 is Poisson noise, not an
   * anomaly; at 2000 per interval a drop to 0 is */
  pp_detector_cfg c;
  pp_detector_cfg_default(&c);
  c.poisson_t = 0.1;
  pp_detector d;
  CHECK_EQ(pp_detector_init(&d, &c), 0);
  for (int i = 0; i < 30; i++)
    pp_detector_step(&d, 40);
  CHECK_EQ(pp_detector_step(&d, 0), PP_DETECT_NONE);
  pp_detector_free(&d);
  CHECK_EQ(pp_detector_init(&d, &c), 0);
  for (int i = 0; i < 30; i++)
    pp_detector_step(&d, 20000);
  CHECK_EQ(pp_detector_step(&d, 0), PP_DETECT_START);
  pp_detector_free(&d);
  /* a zone that rarely runs: single events are no surge, a burst is */
  c.poisson_t = 1;
  CHECK_EQ(pp_detector_init(&d, &c), 0);
  for (int i = 0; i < 100; i++)
    CHECK_EQ(pp_detector_step(&d, i % 7 == 0 ? 1 : 0), PP_DETECT_NONE);
  CHECK_EQ(pp_detector_step(&d, 3), PP_DETECT_NONE);
  CHECK_EQ(pp_detector_step(&d, 12), PP_DETECT_START);
  pp_detector_free(&d);
}

/* ---- configuration ------------------------------------------------------------ */

PP_TEST(live_config_parsing) {
  pp__live_cfg c;
  char err[256];
  pp__live_cfg_default(&c);
  CHECK_EQ(pp__live_parse("interval=250ms,k=4,history=30,min=5,floor=10%,"
                          "tau=30s",
                          &c, err, sizeof err),
           0);
  CHECK_EQ(c.interval_ns, 250 * MS);
  CHECK_NEAR(c.k, 4, 0);
  CHECK_EQ(c.history, 30);
  CHECK_EQ(c.min_values, 5);
  CHECK_NEAR(c.floor_rel, 0.10, 1e-12);
  CHECK_NEAR(c.tau_s, 30, 1e-9);
  CHECK_EQ(c.on, 1);
  CHECK_EQ(pp__live_parse("off", &c, err, sizeof err), 0);
  CHECK_EQ(c.on, 0);
  static const char *const bad[] = {"interval=5ms", "interval=1",
                                    "k=0",          "history=2",
                                    "min=61",       "floor=200%",
                                    "speed=3",      "interval"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    pp__live_cfg_default(&c);
    err[0] = 0;
    CHECK_EQ(pp__live_parse(bad[i], &c, err, sizeof err), -1);
    CHECK_CONTAINS(err, "PIPEPROF_LIVE");
    CHECK(strchr(err, '\n') == NULL);
  }
  pp__live_cfg_default(&c);
  CHECK_EQ(pp__alerts_parse("mem=80%,psi=off,gpu_mem=99,swap=off", &c, err,
                            sizeof err),
           0);
  CHECK_NEAR(c.mem_pct, 80, 0);
  CHECK(c.psi_pct < 0);
  CHECK_NEAR(c.gpu_mem_pct, 99, 0);
  CHECK_EQ(c.swap, 0);
  CHECK_EQ(c.throttle, 1);
  CHECK_EQ(pp__alerts_parse("off", &c, err, sizeof err), 0);
  CHECK(c.mem_pct < 0 && c.gpu_mem_pct < 0 && !c.throttle);
  CHECK_EQ(pp__alerts_parse("mem=150%", &c, err, sizeof err), -1);
  CHECK_CONTAINS(err, "PIPEPROF_ALERTS=\"mem=150%\"");
  CHECK_EQ(pp__alerts_parse("disk=90%", &c, err, sizeof err), -1);
  CHECK_CONTAINS(err, "unknown key \"disk\"");
}

/* ---- engine with an injected clock ----------------------------------------------- */

static const pp_srcloc decode_loc = {"decode", "f", "x.c", 1, PP_KIND_ZONE};
static const pp_srcloc other_loc = {"decode", "g", "y.c", 2, PP_KIND_ZONE};
static const pp_srcloc req_loc = {"request", NULL, NULL, 0, PP_KIND_MARK};

static pp__live *engine(int64_t interval_ns) {
  pp__live_cfg c;
  pp__live_cfg_default(&c);
  c.interval_ns = interval_ns;
  c.grace_ns = 5 * MS;
  pp__live *l = pp__live_new(&c, 0);
  CHECK(l != NULL);
  return l;
}

static void zone(pp__live *l, uint64_t tid, const pp_srcloc *loc,
                 int64_t start, int64_t dur) {
  pp__live_event(l, tid, PPT_EV_ZONE_BEGIN, loc, start, 0, 0);
  pp__live_event(l, tid, PPT_EV_ZONE_END, loc, start + dur, 0, 0);
}

PP_TEST(live_engine_latency_jump_raises_one_anomaly) {
  pp__live *l = engine(SEC);
  pp__live_note notes[16];
  size_t total = 0;
  pp__live_note got[16];
  /* 40 intervals at 20 zones each of ~2 ms, then 10 intervals at 20 ms:
   * the rate stays at 20/s, the p99 jumps tenfold at interval 40 */
  for (int64_t i = 0; i < 50; i++) {
    for (int k = 0; k < 20; k++) {
      int64_t dur = (i < 40 ? 2 * MS : 20 * MS) + (int64_t)(urand() * 100000);
      zone(l, 7, k % 2 ? &decode_loc : &other_loc, i * SEC + k * 40 * MS,
           dur);
    }
    pp__live_tick(l, (i + 1) * SEC + 10 * MS);
    size_t n = pp__live_take(l, notes, 16);
    for (size_t j = 0; j < n && total < 16; j++)
      got[total++] = notes[j];
  }
  CHECK_EQ(total, 1);
  CHECK_EQ(got[0].type, PPT_EV_ANOMALY);
  CHECK_STR(got[0].what, "p99");
  CHECK_STR(got[0].which, "decode"); /* both sites share the name */
  CHECK_EQ(got[0].ns, 41 * SEC);     /* end of interval 40 */
  CHECK(got[0].value >= 20 * MS && got[0].value < 21 * MS);
  CHECK(got[0].baseline >= 2 * MS && got[0].baseline < 2.2 * MS);
  CHECK(got[0].threshold > got[0].baseline && got[0].threshold < 20 * MS);
  CHECK_CONTAINS(got[0].message, "anomaly: decode p99 20");
  CHECK_CONTAINS(got[0].message, "(median 2.");
  /* kept for flight dumps */
  CHECK_EQ(pp__live_recent(l, notes, 16), 1);
  CHECK_STR(notes[0].which, "decode");
  pp__live_free(l);
}

PP_TEST(live_engine_query_known_durations) {
  pp__live *l = engine(SEC);
  pp_live_stats st;
  CHECK_EQ(pp__live_query(l, 0, "load", 1, &st), PP_EINVAL);
  /* interval i: 100 zones of 1..100 ms (i + 1 times that for i = 9); they
   * overlap, so each is on a thread of its own (one thread's clock cannot
   * run backwards) */
  for (int64_t i = 0; i < 10; i++)
    for (int64_t k = 1; k <= 100; k++)
      zone(l, 100 + (uint64_t)k, &decode_loc, i * SEC + k * MS,
           k * MS * (i == 9 ? 2 : 1));
  /* nested zone and one on another thread */
  pp__live_event(l, 2, PPT_EV_ZONE_BEGIN, &req_loc, 5 * SEC, 0, 0);
  zone(l, 2, &decode_loc, 5 * SEC + 1, 50 * MS);
  pp__live_event(l, 2, PPT_EV_ZONE_END, &req_loc, 5 * SEC + 400 * MS, 0, 0);
  CHECK_EQ(pp__live_query(l, 0, "decode", 1, &st), PP_OK);
  CHECK_EQ_U(st.count, 0); /* nothing closed yet */
  CHECK_EQ(st.as_of_ns, 0);
  pp__live_tick(l, 10 * SEC + 5 * MS);
  CHECK_EQ(pp__live_query(l, 0, "decode", 1, &st), PP_OK);
  CHECK_EQ_U(st.count, 100);
  CHECK_NEAR(st.seconds, 1, 1e-12);
  CHECK_NEAR(st.rate, 100, 1e-9);
  CHECK_EQ(st.as_of_ns, 10 * SEC);
  CHECK_EQ_U(st.max_ns, 200 * MS);
  CHECK(st.p50_ns >= 100 * MS && st.p50_ns <= 100 * MS * 33 / 32);
  CHECK(st.p99_ns >= 198 * MS && st.p99_ns <= 198 * MS * 33 / 32);
  CHECK_NEAR(st.mean_ns, 101 * MS, 1);
  CHECK_EQ(pp__live_query(l, 0, "decode", 10, &st), PP_OK);
  CHECK_EQ_U(st.count, 1001);
  CHECK_NEAR(st.seconds, 10, 1e-9);
  CHECK_NEAR(st.rate, 100.1, 1e-9);
  /* rank 501: 9 * 53 values of 1..53 ms, 26 of 2..52 ms, the 50 ms one */
  CHECK(st.p50_ns >= 53 * MS && st.p50_ns <= 53 * MS * 33 / 32);
  /* 60 s window: only 10 intervals exist so far */
  CHECK_EQ(pp__live_query(l, 0, "decode", 60, &st), PP_OK);
  CHECK_EQ_U(st.count, 1001);
  CHECK_NEAR(st.seconds, 10, 1e-9);
  CHECK(st.ewma_rate > 99 && st.ewma_rate < 101);
  CHECK_EQ(pp__live_query(l, 0, "request", 10, &st), PP_OK);
  CHECK_EQ_U(st.count, 1);
  CHECK_EQ_U(st.max_ns, 400 * MS);
  CHECK_EQ(pp__live_query(l, 0, "decode", 5, &st), PP_EINVAL);
  CHECK_EQ(pp__live_query(NULL, 0, "decode", 1, &st), PP_ENOTSUP);
  /* the session's window (0): every closed interval, here all ten; then
   * 70 more intervals of one 3 ms zone each: the 60-interval window lets
   * the first ones go, the session keeps them */
  CHECK_EQ(pp__live_query(l, 0, "decode", 0, &st), PP_OK);
  CHECK_EQ_U(st.window_s, 0);
  CHECK_EQ_U(st.count, 1001);
  for (int64_t i = 10; i < 80; i++) { /* a writer ticks every pass */
    zone(l, 7, &decode_loc, i * SEC + MS, 3 * MS);
    pp__live_tick(l, (i + 1) * SEC + 5 * MS);
  }
  CHECK_EQ(pp__live_query(l, 0, "decode", 60, &st), PP_OK);
  CHECK_EQ_U(st.count, 60);
  CHECK_EQ(pp__live_query(l, 0, "decode", 0, &st), PP_OK);
  CHECK_EQ_U(st.count, 1001 + 70);
  CHECK_NEAR(st.seconds, 80, 1e-9);
  CHECK_EQ_U(st.max_ns, 200 * MS);
  CHECK_EQ(st.as_of_ns, 80 * SEC);
  /* a writer that stalled for 63 intervals: the first three are not
   * judged (the detectors see the last 60), but the session counts them */
  for (int64_t i = 80; i < 143; i++)
    zone(l, 7, &decode_loc, i * SEC + MS, 3 * MS);
  pp__live_tick(l, 143 * SEC + 5 * MS);
  CHECK_EQ(pp__live_query(l, 0, "decode", 0, &st), PP_OK);
  CHECK_EQ_U(st.count, 1071 + 63);
  /* and its histogram, for cumulative exports */
  pp_lhist h;
  pp_lhist_init(&h);
  CHECK_EQ(pp__live_hist(l, 0, "decode", &h), PP_OK);
  CHECK_EQ_U(h.count, 1071 + 63);
  CHECK_EQ_U(h.max, 200 * MS);
  CHECK_EQ_U(pp_lhist_percentile(&h, 50), st.p50_ns);
  CHECK_EQ(pp__live_hist(l, 0, "nothing", &h), PP_EINVAL);
  CHECK_EQ(pp__live_hist(NULL, 0, "decode", &h), PP_ENOTSUP);
  pp_lhist_free(&h);
  pp__live_free(l);
}

PP_TEST(live_engine_requests_and_ranges_pair_in_any_order) {
  pp__live *l = engine(SEC);
  /* request 5: its end drained before its begin (another thread) */
  pp__live_event(l, 2, PPT_EV_REQ_END, &req_loc, 300 * MS, 5, 0);
  pp__live_event(l, 2, PPT_EV_REQ_TOKENS, &req_loc, 150 * MS, 5, 3);
  pp__live_event(l, 1, PPT_EV_REQ_BEGIN, &req_loc, 100 * MS, 5, 0);
  /* request 6 failed: no E2E, TTFT from its first token */
  pp__live_event(l, 1, PPT_EV_REQ_BEGIN, &req_loc, 110 * MS, 6, 0);
  pp__live_event(l, 1, PPT_EV_REQ_FIRST, &req_loc, 130 * MS, 6, 0);
  pp__live_event(l, 1, PPT_EV_REQ_END, &req_loc, 140 * MS, 6,
                 ppt_zigzag(-1));
  /* a range ending on another thread, end first */
  static const pp_srcloc rng = {"upload", NULL, NULL, 0, PP_KIND_ZONE};
  pp__live_event(l, 3, PPT_EV_RANGE_END, &req_loc, 700 * MS, 99, 0);
  pp__live_event(l, 4, PPT_EV_RANGE_BEGIN, &rng, 200 * MS, 99, 0);
  pp__live_tick(l, SEC + 10 * MS);
  pp_live_stats st;
  CHECK_EQ(pp__live_query(l, 1, NULL, 1, &st), PP_OK);
  CHECK_EQ_U(st.count, 1);
  CHECK_EQ_U(st.max_ns, 200 * MS);
  CHECK_EQ(pp__live_query(l, 2, NULL, 1, &st), PP_OK);
  CHECK_EQ_U(st.count, 2);
  CHECK(st.p50_ns >= 20 * MS && st.p50_ns <= 20 * MS * 33 / 32);
  CHECK_EQ_U(st.max_ns, 50 * MS);
  CHECK_EQ(pp__live_query(l, 0, "upload", 1, &st), PP_OK);
  CHECK_EQ_U(st.count, 1);
  CHECK_EQ_U(st.max_ns, 500 * MS);
  pp__live_free(l);
}

PP_TEST(live_engine_first_token_drained_after_the_end_gives_ttft) {
  pp__live *l = engine(SEC);
  /* the begin and end drained first, the first token (another thread)
   * later: the request is held until its end is older than the grace */
  pp__live_event(l, 1, PPT_EV_REQ_BEGIN, &req_loc, 100 * MS, 8, 0);
  pp__live_event(l, 1, PPT_EV_REQ_END, &req_loc, 300 * MS, 8, 0);
  pp__live_event(l, 2, PPT_EV_REQ_FIRST, &req_loc, 160 * MS, 8, 0);
  /* a token later than the end is not the request's */
  pp__live_event(l, 2, PPT_EV_REQ_TOKENS, &req_loc, 310 * MS, 8, 1);
  pp__live_tick(l, SEC + 10 * MS);
  pp_live_stats st;
  CHECK_EQ(pp__live_query(l, 1, NULL, 1, &st), PP_OK);
  CHECK_EQ_U(st.count, 1);
  CHECK_EQ_U(st.max_ns, 200 * MS);
  CHECK_EQ(pp__live_query(l, 2, NULL, 1, &st), PP_OK);
  CHECK_EQ_U(st.count, 1);
  CHECK_EQ_U(st.max_ns, 60 * MS);
  pp__live_free(l);
}

static void counter(pp__live *l, const pp_srcloc *loc, int64_t ns, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  pp__live_event(l, 9, PPT_EV_COUNTER_SETF, loc, ns, bits, 0);
}

PP_TEST(live_engine_resource_alerts_once_per_episode) {
  static const pp_srcloc total = {"sys.mem.total_bytes", 0, 0, 0, PP_KIND_METRIC};
  static const pp_srcloc avail = {"sys.mem.available_bytes", 0, 0, 0, PP_KIND_METRIC};
  static const pp_srcloc swap = {"sys.swap.used_bytes", 0, 0, 0, PP_KIND_METRIC};
  static const pp_srcloc psi = {"sys.psi.memory.some_pct", 0, 0, 0, PP_KIND_METRIC};
  static const pp_srcloc thr = {"sys.cpu3.throttle_total", 0, 0, 0, PP_KIND_METRIC};
  static const pp_srcloc gused = {"gpu1.mem_used_bytes", 0, 0, 0, PP_KIND_METRIC};
  static const pp_srcloc gtotal = {"gpu1.mem_total_bytes", 0, 0, 0, PP_KIND_METRIC};
  static const pp_srcloc cused = {"cuda1.mem_used_bytes", 0, 0, 0, PP_KIND_METRIC};
  static const pp_srcloc ctotal = {"cuda1.mem_total_bytes", 0, 0, 0, PP_KIND_METRIC};
  static const pp_srcloc unrelated = {"sys.cpu3.busy_pct", 0, 0, 0, PP_KIND_METRIC};
  /* a user's counters that share the library's names stay the user's:
   * 99.9% "used" memory by these raises nothing (metrics/registry.h) */
  static const pp_srcloc u_total = {"sys.mem.total_bytes", 0, 0, 0,
                                    PP_KIND_COUNTER};
  static const pp_srcloc u_avail = {"sys.mem.available_bytes", 0, 0, 0,
                                    PP_KIND_COUNTER};
  pp__live *l = engine(SEC);
  counter(l, &u_total, 0, 1000);
  counter(l, &u_avail, 0, 1);
  counter(l, &u_avail, 50 * MS, 1);
  pp__live_note none[4];
  CHECK_EQ(pp__live_take(l, none, 4), 0);
  /* used %: 50 95 93 97 80 96: episodes start at 95 and 96 */
  static const double used[] = {50, 95, 93, 97, 80, 96};
  for (int i = 0; i < 6; i++) {
    counter(l, &total, i * 100 * MS, 1000);
    counter(l, &avail, i * 100 * MS, 1000 - 10 * used[i]);
  }
  /* swap constant, then growing twice in a row: one alert */
  static const double sw[] = {4096, 4096, 8192, 16384, 16384};
  for (int i = 0; i < 5; i++)
    counter(l, &swap, i * 100 * MS, sw[i]);
  /* PSI 2, 15 (fire), 8 (stays raised: above half the threshold), 12 */
  static const double ps[] = {2, 15, 8, 12};
  for (int i = 0; i < 4; i++)
    counter(l, &psi, i * 100 * MS, ps[i]);
  /* throttle counter: first value is no event; then +4 */
  counter(l, &thr, 0, 10);
  counter(l, &thr, 100 * MS, 10);
  counter(l, &thr, 200 * MS, 14);
  counter(l, &thr, 300 * MS, 15);
  /* GPU memory: used arrives before total in each sample */
  counter(l, &gused, 0, 50);
  counter(l, &gtotal, 0, 100);
  counter(l, &gused, 100 * MS, 96);
  counter(l, &gtotal, 100 * MS, 100);
  /* the CUDA driver's view of device 1 (cuMemGetInfo) is a series of its
   * own: 90% (no alert; NVML's gpu1 is above), then 97% */
  counter(l, &ctotal, 200 * MS, 1000);
  counter(l, &cused, 200 * MS, 900);
  counter(l, &cused, 300 * MS, 970);
  counter(l, &unrelated, 0, 99);
  pp__live_note n[32];
  size_t k = pp__live_take(l, n, 32);
  CHECK_EQ(k, 7);
  CHECK_STR(n[0].what, "mem");
  CHECK_NEAR(n[0].value, 95, 1e-9);
  CHECK_NEAR(n[0].threshold, 90, 0);
  CHECK_EQ(n[0].ns, 100 * MS);
  CHECK_CONTAINS(n[0].message, "alert: memory 95.0% used");
  CHECK_STR(n[1].what, "mem");
  CHECK_EQ(n[1].ns, 500 * MS);
  CHECK_STR(n[2].what, "swap");
  CHECK_NEAR(n[2].value, 8192, 0);
  CHECK_NEAR(n[2].baseline, 4096, 0);
  CHECK_STR(n[3].what, "psi.memory");
  CHECK_NEAR(n[3].value, 15, 0);
  CHECK_STR(n[4].what, "throttle");
  CHECK_STR(n[4].which, "cpu3");
  CHECK_NEAR(n[4].value, 4, 0);
  CHECK_STR(n[5].what, "gpu_mem");
  CHECK_STR(n[5].which, "gpu1");
  CHECK_NEAR(n[5].value, 96, 1e-9);
  CHECK_STR(n[6].what, "gpu_mem");
  CHECK_STR(n[6].which, "cuda1");
  CHECK_NEAR(n[6].value, 97, 1e-9);
  CHECK_EQ(n[6].ns, 300 * MS);
  CHECK_CONTAINS(n[6].message, "cuda1 memory 97.0% used");
  for (size_t i = 0; i < k; i++)
    CHECK_EQ(n[i].type, PPT_EV_ALERT);
  pp__live_free(l);

  /* thresholds from PIPEPROF_ALERTS; off means off */
  pp__live_cfg c;
  pp__live_cfg_default(&c);
  char err[200];
  CHECK_EQ(pp__alerts_parse("mem=99%,swap=off", &c, err, sizeof err), 0);
  l = pp__live_new(&c, 0);
  for (int i = 0; i < 6; i++) {
    counter(l, &total, i * 100 * MS, 1000);
    counter(l, &avail, i * 100 * MS, 1000 - 10 * used[i]);
  }
  for (int i = 0; i < 5; i++)
    counter(l, &swap, i * 100 * MS, sw[i]);
  CHECK_EQ(pp__live_take(l, n, 32), 0);
  pp__live_free(l);
}

/* ---- whole sessions ------------------------------------------------------------- */

typedef struct seen {
  pthread_mutex_t mu;
  int n, anomalies, alerts;
  char which[8][64], what[8][16];
  int64_t ts[8];
  int dumped;
  char dump_path[4200];
} seen;

static seen g_seen = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, {""}, {""}, {0},
                      0, ""};

static void on_alert(const pp_alert *a, void *user) {
  seen *s = user;
  CHECK_EQ(a->struct_size, sizeof *a);
  pthread_mutex_lock(&s->mu);
  if (s->n < 8) {
    snprintf(s->which[s->n], sizeof s->which[0], "%s", a->which);
    snprintf(s->what[s->n], sizeof s->what[0], "%s", a->what);
    s->ts[s->n] = a->ts_ns;
  }
  s->n++;
  s->anomalies += a->kind == PP_ALERT_ANOMALY;
  s->alerts += a->kind == PP_ALERT_RESOURCE;
  pthread_mutex_unlock(&s->mu);
  /* react: dump the flight recorder (PP_EMODE outside flight mode) */
  if (s->dump_path[0] && pp_flight_dump(s->dump_path) == PP_OK)
    s->dumped++;
}

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * SEC + ts.tv_nsec;
}

/* One "decode" zone every 25 ms for base_ms, lasting 2 ms, then lasting
 * 20 ms for jump_ms: the rate stays 40/s, the p99 jumps tenfold. The
 * zones are recorded with the times of this schedule (pp__test_record,
 * through the hot path's ring code, with the monotonic tick source:
 * ticks are ns), from t0, a moment ahead of the clock, and all before
 * the clock gets there. The writer then has every zone of an interval
 * before it closes that interval, and the engine sees exactly these
 * durations, however loaded the machine (a slept zone lasts what the
 * machine gives it, and a late one lands in an interval already
 * judged). The engine with an injected clock is tested above. */
typedef struct jump_run {
  int64_t t0, jump, end; /* first zone's start, the jump, the schedule's end */
  int64_t last_end;      /* the last zone's end */
} jump_run;

static const pp_srcloc L_DECODE = {"decode", "decode_frame", "test-live.c", 1,
                                   PP_KIND_ZONE};

static int64_t jump_dur(const jump_run *r, int64_t start) {
  return start < r->jump ? 2 * MS : 20 * MS;
}

/* Zones of the schedule that end in [from, to), and how many of them are
 * jumped ones. */
static void jump_zones(const jump_run *r, int64_t from, int64_t to, uint64_t *n,
                       uint64_t *jumped) {
  *n = *jumped = 0;
  for (int64_t t = r->t0; t < r->end; t += 25 * MS) {
    int64_t e = t + jump_dur(r, t);
    if (e >= from && e < to) {
      (*n)++;
      *jumped += t >= r->jump;
    }
  }
}

/* Stats mode's zones reach the engine when the writer looks at the
 * thread's tallies, as values of the interval of the thread's latest
 * event: sync_each makes it look after each zone. */
static void record_jump(jump_run *r, int sync_each) {
  for (int64_t t = r->t0; t < r->end; t += 25 * MS) {
    int64_t e = t + jump_dur(r, t);
    CHECK_EQ(pp__test_record(PPT_EV_ZONE_BEGIN, &L_DECODE, (uint64_t)t, 0, 0),
             1);
    CHECK_EQ(pp__test_record(PPT_EV_ZONE_END, &L_DECODE, (uint64_t)e, 0, 0), 1);
    if (sync_each)
      CHECK_EQ(pp__writer_sync(60000), 0);
    r->last_end = e;
  }
}

/* A live window of intervals ending at st->as_of_ns against the
 * schedule: the zones that ended in it, their durations exactly (the
 * percentiles are nearest-rank, a bucket's top clamped to the maximum). */
static void check_window(const pp_live_stats *st, const jump_run *r,
                         int intervals) {
  uint64_t n, j;
  jump_zones(r, st->as_of_ns - intervals * 100 * MS, st->as_of_ns, &n, &j);
  CHECK_EQ_U(st->count, n);
  if (!n)
    return;
  CHECK_NEAR(st->rate, (double)n / st->seconds, 1e-9);
  CHECK_EQ_U(st->max_ns, j ? 20 * MS : 2 * MS);
  CHECK_NEAR(st->mean_ns, (double)(2 * MS * (n - j) + 20 * MS * j) / n, 1);
  static const double ps[] = {50, 99};
  uint64_t got[] = {st->p50_ns, st->p99_ns};
  for (int k = 0; k < 2; k++) {
    uint64_t rank = (uint64_t)ceil(ps[k] / 100 * (double)n);
    if (rank > n - j) /* a jumped zone: the maximum */
      CHECK_EQ_U(got[k], 20 * MS);
    else if (!j) /* the maximum too */
      CHECK_EQ_U(got[k], 2 * MS);
    else
      CHECK(got[k] >= 2 * MS && got[k] <= 2 * MS * 33 / 32);
  }
}

/* A session of mode writing path, with PIPEPROF_LIVE=live. */
static void start_live(pp_mode mode, const char *path, const char *live) {
  setenv("PIPEPROF_LIVE", live, 1);
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.mode = mode;
  cfg.out_path = path;
  cfg.install_signals = 0;
  CHECK_EQ(pp_init(&cfg), PP_OK);
}

static void start(pp_mode mode, const char *path) {
  /* 100 ms intervals so that the test takes 2 s, not 20; a loose MAD
   * floor so that a loaded machine's sleep jitter is no anomaly */
  start_live(mode, path, "interval=100ms,history=30,min=8,floor=40%");
}

/* A session of mode writing path through the jump's schedule, returned
 * once the engine has closed the interval of the last zone (a deadline
 * only a broken engine reaches). Should the recording take longer than
 * its lead (a very loaded machine), the session runs again with twice
 * the lead: what the test sees never depends on how long it took. */
static jump_run jump_session(pp_mode mode, const char *path, int base_ms,
                             int jump_ms) {
  setenv("PIPEPROF_CLOCK", "monotonic", 1);
  for (int64_t lead = 1 * SEC;; lead *= 2) {
    start(mode, path);
    CHECK_STR(pp__clock_source(), "monotonic");
    jump_run r;
    r.t0 = mono_ns() + lead;
    r.jump = r.t0 + base_ms * MS;
    r.end = r.jump + jump_ms * MS;
    record_jump(&r, mode == PP_MODE_STATS);
    if (mono_ns() < r.t0) {
      pp_live_stats st;
      int64_t deadline = r.end + 60 * SEC;
      while (pp_live_zone("decode", 1, &st) != PP_OK ||
             st.as_of_ns <= r.last_end) {
        if (mono_ns() > deadline)
          PP_FAIL("60 s after the schedule's end the live engine had "
                  "closed its intervals up to %lld ns, not past %lld",
                  (long long)st.as_of_ns, (long long)r.last_end);
        struct timespec ts = {0, 10 * MS};
        nanosleep(&ts, NULL);
      }
      return r;
    }
    if (lead >= 16 * SEC)
      PP_FAIL("recording the schedule took more than 16 s");
    printf("# recording the schedule took more than its lead of %lld ms: "
           "again with twice the lead\n",
           (long long)(lead / MS));
    CHECK_EQ(pp_shutdown(), PP_OK);
    pthread_mutex_lock(&g_seen.mu);
    g_seen.n = g_seen.anomalies = g_seen.alerts = g_seen.dumped = 0;
    pthread_mutex_unlock(&g_seen.mu);
  }
}

/* pp_live_zone_name lists zone and range names in the order the writer
 * first saw them, never the request series. */
PP_TEST_T(live_zone_names_listed_in_order, 30) {
  char path[4200], name[8];
  snprintf(path, sizeof path, "%s/names.pptrace", pp_test_tmpdir());
  CHECK_EQ(pp_live_zone_name(0, name, sizeof name), PP_ENOTRUNNING);
  start(PP_MODE_TRACE, path);
  {
    PP_ZONE("first");
  }
  pp_request_begin(7);
  pp_request_end(7, 0);
  pp_range_end(pp_range_start("second-range"));
  /* the writer names a series when it drains its first value */
  int64_t deadline = mono_ns() + 10 * SEC;
  while (pp_live_zone_name(1, name, sizeof name) != PP_OK &&
         mono_ns() < deadline) {
    struct timespec ts = {0, 5 * MS};
    nanosleep(&ts, NULL);
  }
  CHECK_EQ(pp_live_zone_name(0, name, sizeof name), PP_OK);
  CHECK_STR(name, "first");
  CHECK_EQ(pp_live_zone_name(1, name, sizeof name), PP_OK);
  CHECK_STR(name, "second-"); /* cut to the buffer */
  CHECK_EQ(pp_live_zone_name(2, name, sizeof name), PP_EINVAL);
  CHECK_EQ(pp_live_zone_name(0, NULL, 4), PP_EINVAL);
  CHECK_EQ(pp_live_zone_name(0, name, 0), PP_EINVAL);
  CHECK_EQ(pp_shutdown(), PP_OK);
  /* the names stay readable after the session, until the next one */
  CHECK_EQ(pp_live_zone_name(0, name, sizeof name), PP_OK);
  CHECK_STR(name, "first");
  start(PP_MODE_TRACE, path);
  CHECK_EQ(pp_live_zone_name(0, name, sizeof name), PP_EINVAL);
  CHECK_EQ(pp_shutdown(), PP_OK);
}

PP_TEST_T(live_session_jump_in_trace_report_and_exports, 180) {
  char path[4200], err[256];
  snprintf(path, sizeof path, "%s/live.pptrace", pp_test_tmpdir());
  pp_live_stats st;
  CHECK_EQ(pp_live_zone("decode", 1, &st), PP_ENOTRUNNING);
  CHECK_EQ(pp_on_alert(on_alert, &g_seen), PP_OK);
  jump_run jr = jump_session(PP_MODE_TRACE, path, 1300, 500);
  int64_t jump = jr.jump;
  /* the query API while running: each window holds the zones of the
   * schedule that ended in its intervals, whichever intervals the
   * engine had closed when asked */
  CHECK_EQ(pp_live_zone("decode", 10, &st), PP_OK);
  CHECK_EQ(st.struct_size, sizeof st);
  CHECK_EQ(st.window_s, 10);
  CHECK(st.as_of_ns > jr.last_end);
  check_window(&st, &jr, 10);
  /* interval rates are at most 40/s: so is their average */
  CHECK(st.ewma_rate > 0 && st.ewma_rate <= 40 + 1e-9);
  CHECK_EQ(pp_live_zone("decode", 1, &st), PP_OK);
  check_window(&st, &jr, 1);
  CHECK_EQ(pp_live_zone("decode", 60, &st), PP_OK);
  check_window(&st, &jr, 60);
  /* the session's window: every zone, 20 of them jumped */
  CHECK_EQ(pp_live_zone("decode", 0, &st), PP_OK);
  uint64_t zones, jumped;
  jump_zones(&jr, INT64_MIN, INT64_MAX, &zones, &jumped);
  CHECK_EQ_U(zones, 72);
  CHECK_EQ_U(jumped, 20);
  CHECK_EQ_U(st.count, zones);
  CHECK_EQ_U(st.max_ns, 20 * MS);
  CHECK_EQ_U(st.p99_ns, 20 * MS);
  CHECK(st.p50_ns >= 2 * MS && st.p50_ns <= 2 * MS * 33 / 32);
  CHECK_EQ(pp_live_zone("no such zone", 1, &st), PP_EINVAL);
  CHECK_EQ(pp_live_zone("decode", 2, &st), PP_EINVAL);
  CHECK_EQ(pp_live_request(PP_LIVE_E2E, 1, &st), PP_EINVAL);
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_on_alert(NULL, NULL);

  /* the callback: exactly one anomaly, decode's p99, around the jump */
  pthread_mutex_lock(&g_seen.mu);
  int n = g_seen.n;
  pthread_mutex_unlock(&g_seen.mu);
  CHECK_EQ(n, 1);
  CHECK_EQ(g_seen.anomalies, 1);
  CHECK_STR(g_seen.which[0], "decode");
  CHECK_STR(g_seen.what[0], "p99");
  CHECK(g_seen.ts[0] >= jump && g_seen.ts[0] <= jump + 300 * MS);

  /* the trace file */
  pp_trace t;
  pp_analysis a = {0};
  CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
  CHECK_EQ(t.nnotes, 1);
  CHECK_EQ(t.notes[0].type, PPT_EV_ANOMALY);
  CHECK_STR(t.notes[0].which, "decode");
  CHECK_STR(t.notes[0].what, "p99");
  CHECK(llabs(t.notes[0].ts - g_seen.ts[0]) < MS);
  CHECK(t.notes[0].value >= 19 * MS);
  CHECK(t.notes[0].baseline >= 1 * MS && t.notes[0].baseline < 10 * MS);
  CHECK_EQ_U(t.diag.events_bad, 0);
  CHECK_EQ_U(t.diag.chunks_bad, 0);
  const char *live = pp_trace_meta(&t, "live");
  CHECK(live != NULL);
  CHECK_CONTAINS(live, "interval 100 ms");
  CHECK_EQ(pp_analyze(&t, &a), 0);
  /* no thread for the pseudo thread 0 of the notes */
  for (size_t i = 0; i < t.nthreads; i++)
    CHECK_NE(t.threads[i].tid, 0);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK_EQ(pp_export_summary_json(f, &a), 0);
  fclose(f);
  CHECK_CONTAINS(buf, "\"alerts\":[{\"type\":\"anomaly\"");
  CHECK_CONTAINS(buf, "\"what\":\"p99\",\"which\":\"decode\"");
  free(buf);
  f = open_memstream(&buf, &len);
  CHECK_EQ(pp_export_chrome(f, &a), 0);
  fclose(f);
  CHECK_CONTAINS(buf, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"anomaly: decode "
                      "p99 ");
  CHECK_CONTAINS(buf, "\"cat\":\"anomaly\"");
  free(buf);
  pp_analysis_free(&a);
  pp_trace_free(&t);

  /* pipeprof report */
  pp_cli_result r = pp_test_cli("report '%s'", path);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "anomalies and alerts");
  CHECK_CONTAINS(r.out, "anomaly: decode p99 ");
  pp_cli_result_free(&r);
}

PP_TEST_T(live_flight_mode_callback_dumps_the_anomaly, 180) {
  char path[4200], err[256];
  snprintf(path, sizeof path, "%s/flight.pptrace", pp_test_tmpdir());
  snprintf(g_seen.dump_path, sizeof g_seen.dump_path, "%s/dump.pptrace",
           pp_test_tmpdir());
  pp_on_alert(on_alert, &g_seen);
  jump_session(PP_MODE_FLIGHT, path, 1300, 400);
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_on_alert(NULL, NULL);
  CHECK_EQ(g_seen.anomalies, 1);
  CHECK_EQ(g_seen.dumped, 1);
  pp_trace t;
  pp_analysis a = {0};
  CHECK_EQ(pp_trace_read_file(g_seen.dump_path, &t, err, sizeof err), 0);
  CHECK_EQ(t.nnotes, 1);
  CHECK_STR(t.notes[0].which, "decode");
  CHECK_EQ(pp_analyze(&t, &a), 0);
  int zones = 0;
  for (size_t i = 0; i < a.prof.nzones; i++)
    zones += strcmp(pp_trace_loc_name(&t, a.prof.zones[i].loc), "decode") == 0;
  CHECK_EQ(zones, 1); /* the dump holds the zones that led up to it */
  pp_analysis_free(&a);
  pp_trace_free(&t);
  /* the exit dump has it too */
  CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
  CHECK_EQ(t.nnotes, 1);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST_T(live_stats_mode_keeps_notes, 180) {
  char path[4200], err[256];
  snprintf(path, sizeof path, "%s/stats.pptrace", pp_test_tmpdir());
  jump_session(PP_MODE_STATS, path, 1300, 400);
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis a = {0};
  CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
  CHECK(t.from_stats);
  CHECK_EQ(t.nnotes, 1);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  for (size_t i = 0; i < t.nthreads; i++)
    CHECK_NE(t.threads[i].tid, 0);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* Stats mode's zones never reach the ring: the thread aggregates them
 * (ring/tally.h) and the live windows take what its tallies gained once
 * per interval. A thread that keeps running shows every zone it closed,
 * the last one too (which it counts only with its next end), and the
 * file's statistics at the end have them all. Durations are the test's
 * (the monotonic tick source), so the figures are exact. */
static const pp_srcloc L_TZ = {"tz", NULL, NULL, 0, PP_KIND_ZONE};

static void tz_zones(int64_t *t, int n, int64_t dur0) {
  for (int i = 0; i < n; i++) {
    CHECK_EQ(pp__test_record(PPT_EV_ZONE_BEGIN, &L_TZ, (uint64_t)*t, 0, 0), 1);
    CHECK_EQ(pp__test_record(PPT_EV_ZONE_END, &L_TZ,
                             (uint64_t)(*t + dur0 * (i + 1)), 0, 0),
             1);
    *t += dur0 * (i + 1) + 100;
  }
}

static void wait_live_count(const char *name, uint64_t want,
                            pp_live_stats *st) {
  int64_t deadline = mono_ns() + 60 * SEC; /* only a failure waits long */
  for (;;) {
    memset(st, 0, sizeof *st);
    if (pp_live_zone(name, 60, st) == PP_OK && st->count >= want)
      return;
    if (mono_ns() > deadline)
      PP_FAIL("live window of %s: %llu zones, want %llu", name,
              (unsigned long long)st->count, (unsigned long long)want);
    struct timespec ts = {0, 10 * MS};
    nanosleep(&ts, NULL);
  }
}

PP_TEST_T(live_stats_mode_windows_from_the_threads_tallies, 120) {
  char path[4200], err[256];
  snprintf(path, sizeof path, "%s/tally.pptrace", pp_test_tmpdir());
  setenv("PIPEPROF_CLOCK", "monotonic", 1);
  start(PP_MODE_STATS, path);
  CHECK_STR(pp__clock_source(), "monotonic");
  int64_t t = mono_ns();
  tz_zones(&t, 10, 1000); /* 1, 2, ... 10 us */
  pp_live_stats st;
  wait_live_count("tz", 10, &st);
  CHECK_EQ_U(st.count, 10);
  CHECK_EQ_U(st.max_ns, 10000);
  CHECK_NEAR(st.mean_ns, 5500, 1e-9);
  CHECK_NEAR((double)st.p50_ns, 5000, 5000 / 32.0 + 1);
  tz_zones(&t, 5, 100000); /* 100 ... 500 us */
  wait_live_count("tz", 15, &st);
  CHECK_EQ_U(st.count, 15);
  CHECK_EQ_U(st.max_ns, 500000);
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace tr;
  pp_analysis a = {0};
  CHECK_EQ(pp_trace_read_file(path, &tr, err, sizeof err), 0);
  CHECK(tr.from_stats);
  CHECK_EQ(pp_analyze(&tr, &a), 0);
  const pp_zone_stats *z = NULL;
  for (size_t i = 0; i < a.prof.nzones; i++)
    if (!strcmp(pp_trace_loc_name(&tr, a.prof.zones[i].loc), "tz"))
      z = &a.prof.zones[i];
  CHECK(z != NULL);
  CHECK_EQ_U(z->count, 15);
  CHECK_EQ(z->total_ns, 55000 + 1500000);
  CHECK_EQ(z->min_ns, 1000);
  CHECK_EQ(z->max_ns, 500000);
  CHECK_EQ(z->self_ns, z->total_ns);
  CHECK_EQ_U(a.prof.events, 30);
  pp_analysis_free(&a);
  pp_trace_free(&tr);
  unsetenv("PIPEPROF_CLOCK");
}

PP_TEST_T(live_memory_alert_from_fixture_sysroot, 30) {
  char root[4200], path[4200], err[256];
  snprintf(root, sizeof root, "%s/root", pp_test_tmpdir());
  snprintf(path, sizeof path, "%s/alert.pptrace", pp_test_tmpdir());
  CHECK_EQ(pp_test_run(NULL, "cp -r '%s/tests/fixtures/sysroot/full' '%s'",
                       pp_test_srcdir(), root),
           0);
  /* 16314564 kB total, 400000 kB available: 97.5% used */
  char mi[4300];
  snprintf(mi, sizeof mi, "%s/proc/meminfo", root);
  FILE *f = fopen(mi, "w");
  CHECK(f != NULL);
  fputs("MemTotal:       16314564 kB\nMemFree:          100000 kB\n"
        "MemAvailable:     400000 kB\nSwapTotal:       2097148 kB\n"
        "SwapFree:        2097148 kB\n",
        f);
  fclose(f);
  setenv("PIPEPROF_SYSROOT", root, 1);
  setenv("PIPEPROF_ALERTS", "mem=95%", 1);
  memset(g_seen.dump_path, 0, sizeof g_seen.dump_path);
  pp_on_alert(on_alert, &g_seen);
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.sample_hz = 50;
  cfg.install_signals = 0;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  struct timespec ts = {0, 400 * MS}; /* about 20 samples */
  nanosleep(&ts, NULL);
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_on_alert(NULL, NULL);
  CHECK_EQ(g_seen.alerts, 1);
  CHECK_STR(g_seen.what[0], "mem");
  CHECK_STR(g_seen.which[0], "system");
  pp_trace t;
  pp_analysis a = {0};
  CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
  CHECK_EQ(t.nnotes, 1);
  CHECK_EQ(t.notes[0].type, PPT_EV_ALERT);
  CHECK_NEAR(t.notes[0].value, 100 * (1 - 400000.0 / 16314564), 1e-6);
  CHECK_NEAR(t.notes[0].threshold, 95, 0);
  CHECK_CONTAINS(t.notes[0].message, "alert: memory 97.5% used");
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *buf = NULL;
  size_t len = 0;
  f = open_memstream(&buf, &len);
  CHECK_EQ(pp_report_text(f, &a, NULL), 0);
  fclose(f);
  CHECK_CONTAINS(buf, "anomalies and alerts");
  CHECK_CONTAINS(buf, "alert: memory 97.5% used");
  free(buf);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(live_invalid_env_leaves_profiling_off) {
  char path[4200];
  snprintf(path, sizeof path, "%s/x.pptrace", pp_test_tmpdir());
  setenv("PIPEPROF", "1", 1);
  setenv("PIPEPROF_OUT", path, 1);
  setenv("PIPEPROF_ALERTS", "mem=150%", 1);
  CHECK_EQ(pp_init_from_env(), PP_EENV);
  CHECK_EQ(pp_is_running(), 0);
  unsetenv("PIPEPROF_ALERTS");
  setenv("PIPEPROF_LIVE", "interval=fast", 1);
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  CHECK_EQ(pp_init(&cfg), PP_EENV);
  CHECK_CONTAINS(pp_last_error(), "invalid PIPEPROF_LIVE=\"interval=fast\"");
  /* off: the session runs, the live API says so */
  setenv("PIPEPROF_LIVE", "off", 1);
  CHECK_EQ(pp_init(&cfg), PP_OK);
  pp_live_stats st;
  CHECK_EQ(pp_live_zone("x", 1, &st), PP_ENOTSUP);
  CHECK_EQ(pp_shutdown(), PP_OK);
}

PP_TEST(live_invalid_env_one_stderr_line) {
  /* A program linked with the library: one line on stderr, it runs on */
  char *out = NULL;
  int rc = pp_test_run(&out,
                       "cd '%s' && PIPEPROF=1 PIPEPROF_ALERTS=psi=lots "
                       "'%s/pipeprof-example-pipeline' --frames 2 "
                       "2>&1 >/dev/null",
                       pp_test_tmpdir(), pp_test_bindir());
  CHECK_EQ(rc, 0);
  CHECK_EQ(pp_test_count_lines(out), 1);
  CHECK_CONTAINS(out, "pipeprof: invalid PIPEPROF_ALERTS=\"psi=lots\": psi "
                      "\"lots\": expected a percentage or off; profiling is "
                      "off");
  free(out);
}

/* A file of header, CLOCK and one EVENTS chunk with payload p (valid
 * checksums: only the decoder's bounds checks stand between it and p). */
static void read_events_chunk(const ppt_buf *p, pp_trace *t) {
  ppt_buf f = {0};
  unsigned char hdr[PPT_FILE_HEADER_SIZE], ch[PPT_CHUNK_HEADER_SIZE];
  ppt_file_header(hdr, 1);
  ppt_buf_bytes(&f, hdr, sizeof hdr);
  ppt_buf clk = {0};
  ppt_buf_uv(&clk, 1000);
  ppt_buf_sv(&clk, 1000);
  ppt_buf_sv(&clk, 1000);
  ppt_chunk_header(ch, PPT_CHUNK_CLOCK, clk.data, (uint32_t)clk.len, 0);
  ppt_buf_bytes(&f, ch, sizeof ch);
  ppt_buf_bytes(&f, clk.data, clk.len);
  ppt_chunk_header(ch, PPT_CHUNK_EVENTS, p->data, (uint32_t)p->len, 1);
  ppt_buf_bytes(&f, ch, sizeof ch);
  ppt_buf_bytes(&f, p->data, p->len);
  char err[200];
  CHECK_EQ(pp_trace_read_mem(f.data, f.len, t, err, sizeof err), 0);
  ppt_buf_free(&clk);
  ppt_buf_free(&f);
}

static void put_note(ppt_buf *b, unsigned type, const char *msg) {
  unsigned char ty = (unsigned char)type;
  ppt_buf_bytes(b, &ty, 1);
  ppt_buf_sv(b, 10);
  ppt_buf_str(b, "p99");
  ppt_buf_str(b, "decode");
  ppt_buf_str(b, msg);
  ppt_buf_f64(b, 1);
  ppt_buf_f64(b, 2);
  ppt_buf_f64(b, 3);
  ppt_buf_f64(b, 4);
}

PP_TEST(live_reader_notes_bounds_checked) {
  ppt_buf b = {0};
  pp_trace t;
  /* two good notes */
  ppt_buf_uv(&b, 0);
  ppt_buf_uv(&b, 1000);
  put_note(&b, PPT_EV_ANOMALY, "first");
  put_note(&b, PPT_EV_ALERT, "second");
  read_events_chunk(&b, &t);
  CHECK_EQ(t.nnotes, 2);
  CHECK_STR(t.notes[1].message, "second");
  CHECK_EQ(t.notes[0].ts, 1010);
  CHECK_EQ(t.notes[1].ts, 1020);
  CHECK_NEAR(t.notes[1].threshold, 4, 0);
  CHECK_EQ(t.nthreads, 0);
  pp_trace_free(&t);
  /* every truncation of the second note: the first survives, no read
   * past the end (ASan), the bad event is counted */
  size_t full = b.len;
  for (size_t cut = full - 1; cut > full - 40; cut--) {
    ppt_buf c = {0};
    ppt_buf_bytes(&c, b.data, cut);
    read_events_chunk(&c, &t);
    CHECK_EQ(t.nnotes, 1);
    CHECK_EQ_U(t.diag.events_bad, 1);
    pp_trace_free(&t);
    ppt_buf_free(&c);
  }
  /* a string length beyond the payload */
  ppt_buf c = {0};
  ppt_buf_uv(&c, 0);
  ppt_buf_uv(&c, 1000);
  unsigned char ty = PPT_EV_ALERT;
  ppt_buf_bytes(&c, &ty, 1);
  ppt_buf_sv(&c, 0);
  ppt_buf_uv(&c, 1u << 30);
  read_events_chunk(&c, &t);
  CHECK_EQ(t.nnotes, 0);
  CHECK_EQ_U(t.diag.events_bad, 1);
  pp_trace_free(&t);
  ppt_buf_free(&c);
  ppt_buf_free(&b);
}

/* The live sink's fast loop over ring slots (zone runs at one site, in
 * locals) against the engine fed the same events one by one: the same
 * session histograms, bucket for bucket, and the same windows. The
 * sequence breaks the fast loop in every way it may break: other sites
 * nested and in turn, ends of zones not on top, ends never begun, the
 * clock stepping back, ticks before the clock map's first, a stack that
 * must grow, counter events with their value slot, intervals changing
 * (1 ms intervals at 0.37 ns per tick), the ring's wrap and blocks of
 * every size. */
static const pp_srcloc run_a = {"run-a", "f", "x.c", 1, PP_KIND_ZONE};
static const pp_srcloc run_b = {"run-b", "f", "x.c", 2, PP_KIND_ZONE};
static const pp_srcloc run_c = {"run-c", "f", "x.c", 3, PP_KIND_ZONE};
static const pp_srcloc run_n = {"run-n", "f", "x.c", 4, PP_KIND_COUNTER};

#define RUN_RING 4096u

static uint64_t bucket(const pp_lhist *h, unsigned ix) {
  unsigned g = ix / PP_LHIST_SUB;
  if (!h->c || g < h->glo || g > h->ghi)
    return 0;
  return h->c[ix - (unsigned)h->glo * PP_LHIST_SUB];
}
#define RUN_EVENTS 60000u

static void run_put(pp__slot *ring, uint64_t *w, unsigned type,
                    const pp_srcloc *loc, uint64_t ts) {
  pp_test_ring_put(ring, RUN_RING, w, type, loc, ts);
}

PP_TEST(live_engine_slots_fast_loop_equals_events_one_by_one) {
  static pp__slot ring[RUN_RING];
  static const pp_srcloc *const sites[3] = {&run_a, &run_b, &run_c};
  pp__live *fast = engine(MS), *slow = engine(MS);
  pp__sink *k = pp__live_sink(fast);
  const pp__clockmap clock = pp__clockmap_make(1000, 0, 0.37);
  uint64_t tick = 200, w = 3000, r = w; /* first ticks before tick0 */
  const pp_srcloc *open[64];
  size_t depth = 0;
  uint64_t fed = 0;
  while (fed < RUN_EVENTS) {
    /* write up to half a ring of events */
    while (w - r < RUN_RING / 2 - 2) {
      double u = urand();
      tick += 1 + (uint64_t)(urand() * 300);
      if (urand() < 0.002)
        tick += (uint64_t)(urand() * 20e6); /* across intervals */
      if (urand() < 0.003)
        tick -= 200; /* the clock steps back */
      const pp_srcloc *top = depth ? open[depth - 1] : &run_a;
      if (u < 0.01) {
        run_put(ring, &w, PPT_EV_COUNTER_SET, &run_n, tick);
      } else if (u < 0.012) {
        run_put(ring, &w, PPT_EV_ZONE_END, &run_c, tick); /* maybe stray */
      } else if (depth < 40 && (depth == 0 || u < 0.5)) {
        /* mostly the site on top again (runs), sometimes another */
        const pp_srcloc *s = urand() < 0.9 ? top : sites[(int)(u * 300) % 3];
        run_put(ring, &w, PPT_EV_ZONE_BEGIN, s, tick);
        open[depth++] = s;
      } else if (urand() < 0.005 && depth > 1) {
        /* the outer zone ends first: the inner one loses its end */
        run_put(ring, &w, PPT_EV_ZONE_END, open[depth - 2], tick);
        depth -= 2;
      } else {
        run_put(ring, &w, PPT_EV_ZONE_END, open[--depth], tick);
      }
    }
    /* drain it in blocks of random size, as the writer does */
    while (r < w) {
      uint64_t max = 1 + (uint64_t)(urand() * 700);
      uint64_t end = pp__slots_block_end(ring, RUN_RING - 1, r, w, max);
      pp__slots s = {5, ring, RUN_RING - 1, r, end, end == w, clock};
      k->ops->slots(k, &s);
      for (uint64_t i = r; i < end;) {
        pp__slot_ev e;
        int got = pp__slot_read(&s, &i, &e);
        if (got > 0 && e.loc) {
          pp__live_event(slow, 5, e.type, e.loc,
                         pp__clockmap_ns(&clock, e.ts), e.value, e.extra);
          fed++;
        }
      }
      r = end;
    }
    int64_t now = pp__clockmap_ns(&clock, tick);
    pp__live_tick(fast, now);
    pp__live_tick(slow, now);
  }
  int64_t end_ns = pp__clockmap_ns(&clock, tick) + SEC;
  pp__live_tick(fast, end_ns);
  pp__live_tick(slow, end_ns);
  uint64_t zones = 0;
  for (int n = 0; n < 3; n++) {
    pp_lhist a, b;
    pp_lhist_init(&a);
    pp_lhist_init(&b);
    CHECK_EQ(pp__live_hist(fast, 0, sites[n]->name, &a), PP_OK);
    CHECK_EQ(pp__live_hist(slow, 0, sites[n]->name, &b), PP_OK);
    CHECK_EQ_U(a.count, b.count);
    CHECK_EQ_U(a.lost, b.lost);
    CHECK_EQ_U(a.min, b.min);
    CHECK_EQ_U(a.max, b.max);
    CHECK(a.sum == b.sum);
    for (unsigned ix = 0; ix < PP_LHIST_GROUPS * PP_LHIST_SUB; ix++)
      CHECK_EQ_U(bucket(&a, ix), bucket(&b, ix));
    zones += a.count;
    pp_lhist_free(&a);
    pp_lhist_free(&b);
    for (int win = 1; win <= 60; win = win == 1 ? 10 : 60) {
      pp_live_stats x, y;
      CHECK_EQ(pp__live_query(fast, 0, sites[n]->name, win, &x), PP_OK);
      CHECK_EQ(pp__live_query(slow, 0, sites[n]->name, win, &y), PP_OK);
      CHECK_EQ_U(x.count, y.count);
      CHECK_EQ_U(x.p50_ns, y.p50_ns);
      CHECK_EQ_U(x.p99_ns, y.p99_ns);
      CHECK_EQ_U(x.max_ns, y.max_ns);
      CHECK(x.mean_ns == y.mean_ns);
      if (win == 60)
        break;
    }
  }
  CHECK(zones > RUN_EVENTS / 3); /* most events paired into zones */
  pp__live_free(fast);
  pp__live_free(slow);
}

/* The session's window (0) is exact as of the call, whatever the interval:
 * ten zones in a 0.2 s run read ten right after the loop (they had read 0
 * until a 1 s interval closed), and the same after pp_shutdown. In each
 * mode: stats mode's threads aggregate themselves, trace mode's go
 * through the ring. */
static void session_window_exact(pp_mode mode) {
  char path[4200];
  snprintf(path, sizeof path, "%s/exact-%d.pptrace", pp_test_tmpdir(),
           (int)mode);
  start_live(mode, path, "interval=1s");
  int64_t t0 = mono_ns();
  for (int i = 0; i < 10; i++) {
    PP_ZONE("ten");
    struct timespec ts = {0, 20 * MS};
    nanosleep(&ts, NULL);
  }
  pp_request_begin(1);
  pp_request_end(1, 0);
  int64_t t1 = mono_ns();
  pp_live_stats st;
  CHECK_EQ(pp_live_zone("ten", 0, &st), PP_OK);
  CHECK_EQ_U(st.count, 10);
  CHECK(st.p50_ns >= 19 * MS && st.max_ns >= st.p50_ns);
  /* the window runs from the session's start to the call */
  CHECK(st.as_of_ns >= t1);
  CHECK(st.seconds >= (double)(t1 - t0) / 1e9 - 0.05 && st.seconds < 60);
  CHECK_NEAR(st.rate, (double)st.count / st.seconds, 1e-9);
  CHECK_EQ(pp_live_request(PP_LIVE_E2E, 0, &st), PP_OK);
  CHECK_EQ_U(st.count, 1);
  {
    PP_ZONE("ten"); /* one more after the first look */
  }
  CHECK_EQ(pp_live_zone("ten", 0, &st), PP_OK);
  CHECK_EQ_U(st.count, 11);
  /* a stage SLO over the same window: ten zones of 20 ms and more, one of
   * almost nothing, against 10 ms */
  uint64_t n, met, unc;
  CHECK_EQ(pp_live_zone_slo("ten", 10 * MS, &n, &met, &unc), PP_OK);
  CHECK_EQ_U(n, 11);
  CHECK_EQ_U(met, 1);
  CHECK_EQ_U(unc, 0);
  CHECK_EQ(pp_live_zone_slo("ten", 10 * SEC, &n, &met, &unc), PP_OK);
  CHECK_EQ_U(met, 11);
  CHECK_EQ(pp_live_zone_slo("no such zone", MS, &n, &met, &unc), PP_EINVAL);
  CHECK_EQ(pp_live_zone_slo("ten", MS, NULL, &met, &unc), PP_EINVAL);
  CHECK_EQ(pp_shutdown(), PP_OK);
  CHECK_EQ(pp_live_zone_slo("ten", 10 * MS, &n, &met, &unc), PP_OK);
  CHECK_EQ_U(n, 11); /* the ended session's */
  CHECK_EQ_U(met, 1);
  /* after the session: its figures as it ended */
  memset(&st, 0, sizeof st);
  CHECK_EQ(pp_live_zone("ten", 0, &st), PP_OK);
  CHECK_EQ_U(st.count, 11);
  CHECK_EQ(pp_live_request(PP_LIVE_E2E, 0, &st), PP_OK);
  CHECK_EQ_U(st.count, 1);
  CHECK_EQ(pp_live_zone("no such zone", 0, &st), PP_EINVAL);
  CHECK_EQ(pp_live_zone("ten", 2, &st), PP_EINVAL);
  unsetenv("PIPEPROF_LIVE");
}

PP_TEST_T(live_session_window_exact_as_of_the_call_stats, 30) {
  session_window_exact(PP_MODE_STATS);
}

PP_TEST_T(live_session_window_exact_as_of_the_call_trace, 30) {
  session_window_exact(PP_MODE_TRACE);
}

static void board_one(void *ctx, const pp__board_entry *e) {
  const pp__board_entry **out = ctx;
  for (int i = 0; i < 3; i++)
    if (!out[i]) {
      out[i] = e;
      return;
    }
}

/* The board tells running totals from levels: a counter only added to by
 * non-negative deltas is one (Prometheus's counter); one set, or added a
 * negative delta, is a level. */
PP_TEST(live_board_counter_totals_and_levels) {
  static const pp_srcloc added = {"requests", NULL, NULL, 0, PP_KIND_COUNTER};
  static const pp_srcloc set = {"depth", NULL, NULL, 0, PP_KIND_COUNTER};
  static const pp_srcloc down = {"credit", NULL, NULL, 0, PP_KIND_COUNTER};
  pp__board *b = pp__board_new();
  CHECK(b != NULL);
  pp__board_event(b, PPT_EV_COUNTER_ADD, &added, 10, 2, 0);
  pp__board_event(b, PPT_EV_COUNTER_ADD, &added, 20, 3, 0);
  pp__board_event(b, PPT_EV_COUNTER_SET, &set, 10, 7, 0);
  pp__board_event(b, PPT_EV_COUNTER_ADD, &down, 10, 5, 0);
  pp__board_event(b, PPT_EV_COUNTER_ADD, &down, 20, (uint64_t)-1, 0);
  pp__board_publish(b, 100);
  const pp__board_entry *e[3] = {NULL, NULL, NULL};
  pp__board_visit(b, board_one, e);
  CHECK(e[0] && e[1] && e[2]);
  CHECK_STR(e[0]->name, "requests");
  CHECK_EQ(e[0]->not_total, 0);
  CHECK_NEAR(e[0]->value, 5, 0);
  CHECK_EQ(e[1]->not_total, 1);
  CHECK_EQ(e[2]->not_total, 1);
  CHECK_NEAR(e[2]->value, 4, 0);
  pp__board_free(b);
}

/* pp_lhist_split: values at or below v by bucket, the ones of v's bucket
 * apart when it reaches above v; exact where the extremes decide. */
PP_TEST(live_lhist_split_at_bucket_edges) {
  pp_lhist h;
  pp_lhist_init(&h);
  uint64_t below, at;
  pp_lhist_split(&h, 10, &below, &at);
  CHECK_EQ_U(below + at, 0);
  for (uint64_t v = 1; v <= 100; v++) /* exact buckets below 128 */
    pp_lhist_record(&h, v);
  pp_lhist_record(&h, 5000); /* bucket [4992, 5120) */
  pp_lhist_record(&h, 9000); /* above every split below */
  pp_lhist_split(&h, 10, &below, &at);
  CHECK_EQ_U(below, 10);
  CHECK_EQ_U(at, 0);
  pp_lhist_split(&h, 5000, &below, &at);
  CHECK_EQ_U(below, 100);
  CHECK_EQ_U(at, 1); /* 5000 shares its bucket with values above it */
  pp_lhist_split(&h, 5119, &below, &at);
  CHECK_EQ_U(below, 101);
  CHECK_EQ_U(at, 0);
  pp_lhist_split(&h, 0, &below, &at); /* below every value */
  CHECK_EQ_U(below + at, 0);
  pp_lhist_split(&h, 9000, &below, &at); /* the largest: all, exactly */
  CHECK_EQ_U(below, 102);
  CHECK_EQ_U(at, 0);
  pp_lhist_free(&h);
}
