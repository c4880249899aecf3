/* SPDX-License-Identifier: MIT */
/*
 * Chart data of the summary JSON (schema_minor 13, analyze/series.h):
 * coarse duration histograms (zones[].hist, frames[].hist,
 * queues[].wait.hist) and the bounded time series (series). Traces built
 * by hand with known durations, values and times; a long trace for the
 * bound and the spike a merge must keep; a recorded file through
 * `pipeprof export --format json` against the same trace analysed in
 * memory; a stats-mode file.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "analyze/series.h"
#include "core/clock.h"
#include "core/recorder.h"
#include "format/pptrace.h"
#include "model/reader.h"
#include "internal.h"
#include "pipeprof.h"
#include "runner.h"
#include "trace_builder.h"

#ifdef PP_HAVE_JANSSON
#include <jansson.h>
#endif

#define T0 INT64_C(1000000000) /* a multiple of every width below */

static void zone(pp_trace *t, size_t th, uint32_t loc, int64_t b, int64_t e) {
  tb_ev(t, th, b, loc, PPT_EV_ZONE_BEGIN);
  tb_ev(t, th, e, loc, PPT_EV_ZONE_END);
}

static void counter(pp_trace *t, size_t th, uint32_t loc, int64_t ts,
                    int64_t v) {
  tb_ev(t, th, ts, loc, PPT_EV_COUNTER_SET)->v.i = v;
}

static void queue_ev(pp_trace *t, size_t th, uint32_t loc, int64_t ts,
                     uint8_t type, uint64_t id, int64_t depth) {
  pp_event *e = tb_ev(t, th, ts, loc, type);
  e->v.id = id;
  e->v2 = ppt_zigzag(depth);
}

/* The least power of two w at which the buckets of w from lo's (starting
 * at a multiple of w) to hi's number at most PP_SERIES_POINTS_MAX: the
 * grid rule of docs/formats/summary-json.md, for times >= 0. */
static int64_t grid_width(int64_t lo, int64_t hi) {
  int64_t w = 1;
  while ((hi - lo / w * w) / w >= (int64_t)PP_SERIES_POINTS_MAX)
    w *= 2;
  return w;
}

PP_TEST(series_coarse_buckets_are_contiguous_and_nest_the_histogram) {
  /* Every coarse bucket starts one past the previous one's highest
   * value, 4 per power of two from 4 on. */
  CHECK_EQ_U(pp_coarse_le(0), 0);
  for (unsigned c = 0; c + 1 < PP_COARSE_BUCKETS; c++) {
    CHECK_EQ(pp_coarse_index(pp_coarse_le(c)), c);
    CHECK_EQ(pp_coarse_index(pp_coarse_le(c) + 1), c + 1);
  }
  CHECK_EQ_U(pp_coarse_le(PP_COARSE_BUCKETS - 1), UINT64_MAX);
  CHECK_EQ_U(pp_coarse_le(4 + 4 * 8), 1279); /* [1024, 1279] */
  /* The histogram's buckets lie inside one coarse bucket each. */
  for (uint64_t v = 1; v < (UINT64_C(1) << 40); v = v * 3 + 1)
    CHECK_EQ(pp_coarse_index(pp_hist_lowest_equivalent(v)),
             pp_coarse_index(pp_hist_highest_equivalent(v)));
}

#ifdef PP_HAVE_JANSSON

static json_t *parse(const char *js) {
  json_error_t err;
  json_t *root = json_loads(js, 0, &err);
  if (!root)
    PP_FAIL("bad JSON: %s", err.text);
  CHECK_EQ(json_integer_value(json_object_get(root, "schema_minor")), 22);
  return root;
}

/* The element of array arr whose "name" is name (NULL when none). */
static json_t *named(json_t *arr, const char *name) {
  for (size_t i = 0; i < json_array_size(arr); i++) {
    json_t *e = json_array_get(arr, i);
    if (strcmp(json_string_value(json_object_get(e, "name")), name) == 0)
      return e;
  }
  return NULL;
}

static int64_t num_at(json_t *o, const char *k, size_t i) {
  json_t *v = json_array_get(json_object_get(o, k), i);
  CHECK(json_is_integer(v));
  return (int64_t)json_integer_value(v);
}

static double real_at(json_t *o, const char *k, size_t i) {
  json_t *v = json_array_get(json_object_get(o, k), i);
  CHECK(json_is_number(v));
  return json_number_value(v);
}

/* hist == {"le_ns": le, "counts": counts} (n buckets), and its counts sum
 * to `count`. */
static void check_hist(json_t *hist, const uint64_t *le, const uint64_t *counts,
                       size_t n, uint64_t count) {
  json_t *l = json_object_get(hist, "le_ns"),
         *c = json_object_get(hist, "counts");
  CHECK_EQ(json_array_size(l), n);
  CHECK_EQ(json_array_size(c), n);
  uint64_t sum = 0;
  for (size_t i = 0; i < n; i++) {
    CHECK_EQ_U((uint64_t)json_integer_value(json_array_get(l, i)), le[i]);
    CHECK_EQ_U((uint64_t)json_integer_value(json_array_get(c, i)), counts[i]);
    sum += counts[i];
  }
  CHECK_EQ_U(sum, count);
}

PP_TEST(series_hist_of_known_durations) {
  pp_trace t = {0};
  uint32_t work = tb_loc(&t, "work", PP_KIND_ZONE);
  uint32_t fr = tb_loc(&t, "frames", PP_KIND_FRAME);
  uint32_t q = tb_loc(&t, "q", PP_KIND_QUEUE);
  t.locs[q].line = 0; /* unbounded */
  size_t th = tb_thread(&t, 1, "main"), th2 = tb_thread(&t, 2, "other");
  /* zones: 5 of 1000 ns, 3 of 1100, 2 of 5000 */
  int64_t at = T0;
  static const int64_t d[] = {1000, 1000, 1000, 1000, 1000,
                              1100, 1100, 1100, 5000, 5000};
  for (size_t i = 0; i < sizeof d / sizeof d[0]; i++, at += 10000)
    zone(&t, th, work, at, at + d[i]);
  /* frame times 2000, 2000, 3000 */
  static const int64_t marks[] = {0, 2000, 4000, 7000};
  for (size_t i = 0; i < 4; i++)
    tb_ev(&t, th2, T0 + marks[i], fr, PPT_EV_FRAME);
  /* two items, each waiting 100 ns */
  queue_ev(&t, th2, q, T0 + 8000, PPT_EV_QUEUE_PUSH, 1, 1);
  queue_ev(&t, th2, q, T0 + 8100, PPT_EV_QUEUE_POP, 1, 0);
  queue_ev(&t, th2, q, T0 + 9000, PPT_EV_QUEUE_PUSH, 2, 1);
  queue_ev(&t, th2, q, T0 + 9100, PPT_EV_QUEUE_POP, 2, 0);
  pp_analysis a = {0};
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *js = tb_summary_json(&a);
  json_t *root = parse(js);

  /* 1000 is in [896, 1023] (2^9 + 3 * 2^7 ..), 1100 in [1024, 1279],
   * 5000 in [4096, 5119]; the buckets between are empty. */
  json_t *z = named(json_object_get(root, "zones"), "work");
  CHECK(z != NULL);
  static const uint64_t zle[] = {1023, 1279, 1535, 1791, 2047,
                                 2559, 3071, 3583, 4095, 5119};
  static const uint64_t zc[] = {5, 3, 0, 0, 0, 0, 0, 0, 0, 2};
  check_hist(json_object_get(z, "hist"), zle, zc, 10,
             (uint64_t)json_integer_value(json_object_get(z, "count")));
  /* 2000 in [1792, 2047], 3000 in [2560, 3071] */
  json_t *f = named(json_object_get(root, "frames"), "frames");
  CHECK(f != NULL);
  static const uint64_t fle[] = {2047, 2559, 3071}, fc[] = {2, 0, 1};
  check_hist(json_object_get(f, "hist"), fle, fc, 3, 3);
  /* 100 in [96, 111] */
  json_t *qu = named(json_object_get(root, "queues"), "q");
  CHECK(qu != NULL);
  static const uint64_t qle[] = {111}, qc[] = {2};
  json_t *wait = json_object_get(qu, "wait");
  check_hist(json_object_get(wait, "hist"), qle, qc, 1,
             (uint64_t)json_integer_value(json_object_get(wait, "count")));
  json_decref(root);
  free(js);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(series_counter_points_at_known_times) {
  pp_trace t = {0};
  uint32_t level = tb_loc(&t, "level", PP_KIND_COUNTER);
  uint32_t rss = tb_loc(&t, "proc.rss_bytes", PP_KIND_METRIC);
  size_t th = tb_thread(&t, 1, "main");
  for (int i = 0; i < 10; i++) {
    counter(&t, th, level, T0 + 1024 * i, 10 * i);
    if (i == 5) /* a second value in bucket 5 */
      counter(&t, th, level, T0 + 1024 * i + 1, 1000);
  }
  counter(&t, th, rss, T0 + 9 * 1024, 7);
  pp_analysis a = {0};
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *js = tb_summary_json(&a);
  json_t *root = parse(js);
  json_t *s = json_object_get(root, "series");
  CHECK_EQ(json_integer_value(json_object_get(s, "points_max")),
           PP_SERIES_POINTS_MAX);
  int64_t w = grid_width(T0, T0 + 9 * 1024);
  CHECK_EQ(w, 16); /* 9216 ns: 576 buckets of 16 */
  CHECK_EQ(json_integer_value(json_object_get(s, "bucket_ns")), w);
  json_t *cs = json_object_get(s, "counters");
  CHECK_EQ(json_array_size(cs), 2); /* by name, as counters[] */
  CHECK_STR(json_string_value(json_object_get(json_array_get(cs, 0), "name")),
            "level");
  json_t *c = json_array_get(cs, 0);
  CHECK(json_is_false(json_object_get(c, "library_metric")));
  CHECK(json_is_true(json_object_get(c, "downsampled")));
  CHECK_EQ(json_array_size(json_object_get(c, "t_ns")), 10);
  for (size_t i = 0; i < 10; i++) {
    CHECK_EQ(num_at(c, "t_ns", i), 1024 * (int64_t)i);
    double mean = i == 5 ? 525.0 : 10.0 * (double)i;
    CHECK_NEAR(real_at(c, "value", i), mean, 0);
    CHECK_NEAR(real_at(c, "min", i), 10.0 * (double)i, 0);
    CHECK_NEAR(real_at(c, "max", i), i == 5 ? 1000.0 : 10.0 * (double)i, 0);
  }
  json_t *m = json_array_get(cs, 1);
  CHECK_STR(json_string_value(json_object_get(m, "name")), "proc.rss_bytes");
  CHECK(json_is_true(json_object_get(m, "library_metric")));
  CHECK(json_is_true(json_object_get(
      named(json_object_get(root, "counters"), "proc.rss_bytes"),
      "library_metric")));
  CHECK(json_is_false(json_object_get(m, "downsampled")));
  CHECK_EQ(json_array_size(json_object_get(m, "t_ns")), 1);
  CHECK_EQ(num_at(m, "t_ns", 0), 9 * 1024);
  CHECK_NEAR(real_at(m, "value", 0), 7.0, 0);
  CHECK_EQ(json_array_size(json_object_get(s, "left_out")), 0);
  json_decref(root);
  free(js);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(series_zone_medians_and_the_eight_zones_with_most_time) {
  pp_trace t = {0};
  uint32_t big = tb_loc(&t, "big", PP_KIND_ZONE);
  uint32_t z[9];
  for (int k = 0; k < 9; k++) {
    char name[16];
    snprintf(name, sizeof name, "z%d", k);
    z[k] = tb_loc(&t, name, PP_KIND_ZONE);
  }
  size_t th[4];
  for (int k = 0; k < 4; k++)
    th[k] = tb_thread(&t, (uint64_t)k + 1, "w");
  /* big: 100, 200 and 1000 ns, all ending at T0 + 10000 */
  int64_t end = T0 + 10000;
  zone(&t, th[0], big, end - 100, end);
  zone(&t, th[1], big, end - 200, end);
  zone(&t, th[2], big, end - 1000, end);
  /* z0..z8: one instance of 100 (k + 1) ns each, one after another */
  int64_t at = T0;
  for (int k = 0; k < 9; k++) {
    zone(&t, th[3], z[k], at, at + 100 * (k + 1));
    at += 100 * (k + 1) + 10;
  }
  pp_analysis a = {0};
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *js = tb_summary_json(&a);
  json_t *root = parse(js);
  json_t *zs = json_object_get(json_object_get(root, "series"), "zones");
  json_t *zt = json_object_get(root, "zones");
  CHECK_EQ(json_array_size(zs), PP_SERIES_ZONES);
  CHECK_EQ(json_array_size(zt), 10);
  for (size_t i = 0; i < PP_SERIES_ZONES; i++) {
    json_t *l = json_array_get(zs, i), *row = json_array_get(zt, i);
    CHECK_STR(json_string_value(json_object_get(l, "name")),
              json_string_value(json_object_get(row, "name")));
    int64_t sum = 0;
    for (size_t j = 0; j < json_array_size(json_object_get(l, "count")); j++)
      sum += num_at(l, "count", j);
    CHECK_EQ(sum, json_integer_value(json_object_get(row, "count")));
  }
  /* by total time: big (1300), z8 (900) .. z2 (300); z1, z0 not drawn */
  CHECK_STR(json_string_value(json_object_get(json_array_get(zs, 0), "name")),
            "big");
  CHECK_STR(json_string_value(json_object_get(json_array_get(zs, 7), "name")),
            "z2");
  json_t *b = json_array_get(zs, 0);
  CHECK_EQ(json_array_size(json_object_get(b, "t_ns")), 1);
  CHECK_EQ(num_at(b, "count", 0), 3);
  /* the 2nd of 100, 200, 1000 is in the coarse bucket [192, 223] */
  CHECK_EQ(num_at(b, "p50_ns", 0), 223);
  CHECK_EQ(num_at(b, "max_ns", 0), 1000);
  CHECK(json_is_true(json_object_get(b, "downsampled")));
  int64_t w = grid_width(T0 + 100, end);
  CHECK_EQ(json_integer_value(
               json_object_get(json_object_get(root, "series"), "bucket_ns")),
           w);
  CHECK_EQ(num_at(b, "t_ns", 0), (end - T0) / w * w);
  json_t *z8 = json_array_get(zs, 1); /* one instance: its own median */
  CHECK_EQ(num_at(z8, "p50_ns", 0), 900);
  CHECK_EQ(num_at(z8, "max_ns", 0), 900);
  CHECK(json_is_false(json_object_get(z8, "downsampled")));
  json_decref(root);
  free(js);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(series_queue_depth_time_weighted) {
  pp_trace t = {0};
  uint32_t q = tb_loc(&t, "q", PP_KIND_QUEUE);
  t.locs[q].line = 0;
  size_t th = tb_thread(&t, 1, "main");
  queue_ev(&t, th, q, T0, PPT_EV_QUEUE_PUSH, 1, 1);
  queue_ev(&t, th, q, T0 + 100, PPT_EV_QUEUE_PUSH, 2, 2);
  queue_ev(&t, th, q, T0 + 300, PPT_EV_QUEUE_POP, 1, 1);
  queue_ev(&t, th, q, T0 + 400, PPT_EV_QUEUE_POP, 2, 0);
  queue_ev(&t, th, q, T0 + 40000, PPT_EV_QUEUE_PUSH, 3, 0);
  pp_analysis a = {0};
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *js = tb_summary_json(&a);
  json_t *root = parse(js);
  json_t *s = json_object_get(root, "series");
  int64_t w = grid_width(T0, T0 + 40000);
  CHECK_EQ(w, 128);
  CHECK_EQ(json_integer_value(json_object_get(s, "bucket_ns")), w);
  json_t *l = named(json_object_get(s, "queues"), "q");
  CHECK(l != NULL);
  /* a point for every bucket the depth held through, to the last event */
  CHECK_EQ(json_array_size(json_object_get(l, "t_ns")), 40000 / 128 + 1);
  /* [0, 128): 1 for 100 ns, 2 for 28; [128, 256): 2; [256, 384): 2 for
   * 44, 1 for 84; [384, 512): 1 for 16, 0 for 112 */
  static const double mean[] = {156.0 / 128, 2.0, 172.0 / 128, 16.0 / 128};
  static const int64_t mx[] = {2, 2, 2, 1};
  for (size_t i = 0; i < 4; i++) {
    CHECK_EQ(num_at(l, "t_ns", i), 128 * (int64_t)i);
    /* written to 4 significant digits */
    CHECK_NEAR(real_at(l, "depth", i), mean[i], 5e-4 * mean[i]);
    CHECK_EQ(num_at(l, "depth_max", i), mx[i]);
  }
  CHECK_NEAR(real_at(l, "depth", 100), 0.0, 0);
  /* over the buckets, the same depth x time as the queue's mean (to the
   * 4 significant digits of each point) */
  double area = 0;
  size_t n = json_array_size(json_object_get(l, "t_ns"));
  for (size_t i = 0; i < n; i++)
    area += real_at(l, "depth", i) * (double)(i + 1 < n ? w : 0);
  json_t *qt = named(json_object_get(root, "queues"), "q");
  CHECK_NEAR(
      area / 40000.0,
      json_number_value(json_object_get(json_object_get(qt, "depth"), "mean")),
      5e-4 * json_number_value(
                 json_object_get(json_object_get(qt, "depth"), "mean")));
  json_decref(root);
  free(js);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST_T(series_long_trace_is_bounded_and_keeps_its_spikes, 120) {
  enum { N = 1000000, SPIKE = 654321, DIP = 111111, ZN = 200000 };
  pp_trace t = {0};
  uint32_t c = tb_loc(&t, "level", PP_KIND_COUNTER);
  uint32_t tick = tb_loc(&t, "tick", PP_KIND_ZONE);
  uint32_t fr = tb_loc(&t, "frame", PP_KIND_FRAME);
  size_t th = tb_thread(&t, 1, "a"), th2 = tb_thread(&t, 2, "b"),
         th3 = tb_thread(&t, 3, "c");
  for (int64_t i = 0; i < N; i++) {
    counter(&t, th, c, T0 + 1000 * i, i == SPIKE ? 1000000 : i == DIP ? -5 : 1);
    if (i % 10 == 0)
      tb_ev(&t, th, T0 + 1000 * i + 1, fr, PPT_EV_FRAME);
  }
  for (int64_t i = 0; i < ZN; i++)
    zone(&t, th2, tick, T0 + 5000 * i, T0 + 5000 * i + 100);
  int64_t spike_end = T0 + 500000000 + 1000000;
  zone(&t, th3, tick, T0 + 500000000, spike_end);
  pp_analysis a = {0};
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *js = tb_summary_json(&a);
  json_t *root = parse(js);
  json_t *s = json_object_get(root, "series");
  int64_t w = grid_width(T0, T0 + 1000 * (int64_t)(N - 1));
  CHECK_EQ(json_integer_value(json_object_get(s, "bucket_ns")), w);

  json_t *l = named(json_object_get(s, "counters"), "level");
  size_t n = json_array_size(json_object_get(l, "t_ns"));
  CHECK(n <= PP_SERIES_POINTS_MAX && n > PP_SERIES_POINTS_MAX / 2);
  CHECK(json_is_true(json_object_get(l, "downsampled")));
  size_t spikes = 0, dips = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t at = num_at(l, "t_ns", i);
    double hi = real_at(l, "max", i), lo = real_at(l, "min", i);
    if (hi == 1000000.0) {
      spikes++;
      CHECK(at <= 1000 * (int64_t)SPIKE && 1000 * (int64_t)SPIKE < at + w);
      CHECK(real_at(l, "value", i) > 1.0);
    } else {
      CHECK_NEAR(hi, 1.0, 0);
    }
    if (lo == -5.0) {
      dips++;
      CHECK(at <= 1000 * (int64_t)DIP && 1000 * (int64_t)DIP < at + w);
    } else {
      CHECK_NEAR(lo, 1.0, 0);
    }
  }
  CHECK_EQ(spikes, 1);
  CHECK_EQ(dips, 1);

  json_t *z = named(json_object_get(s, "zones"), "tick");
  n = json_array_size(json_object_get(z, "t_ns"));
  CHECK(n <= PP_SERIES_POINTS_MAX);
  int64_t count = 0, longest = 0;
  for (size_t i = 0; i < n; i++) {
    count += num_at(z, "count", i);
    int64_t mx = num_at(z, "max_ns", i), p50 = num_at(z, "p50_ns", i);
    if (mx == 1000000) {
      longest++;
      int64_t at = num_at(z, "t_ns", i);
      CHECK(at <= spike_end - T0 && spike_end - T0 < at + w);
    } else {
      CHECK_EQ(mx, 100);
    }
    CHECK(p50 >= 100 && p50 <= 111); /* the coarse bucket [96, 111] */
  }
  CHECK_EQ(count, ZN + 1);
  CHECK_EQ(longest, 1);

  json_t *f = named(json_object_get(s, "frames"), "frame");
  n = json_array_size(json_object_get(f, "t_ns"));
  CHECK(n <= PP_SERIES_POINTS_MAX);
  for (size_t i = 0; i < n; i++) {
    CHECK_NEAR(real_at(f, "frame_ns", i), 10000.0, 0);
    CHECK_EQ(num_at(f, "frame_max_ns", i), 10000);
  }
  json_decref(root);
  free(js);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* A recorded file: two threads of zones, a counter, frames and a queue. */
static const pp_srcloc R_WORK = {"rt-work", "fn", "f.c", 1, PP_KIND_ZONE};
static const pp_srcloc R_LEVEL = {"rt-level", "fn", "f.c", 2, PP_KIND_COUNTER};
static const pp_srcloc R_FRAME = {"rt-frame", "fn", "f.c", 3, PP_KIND_FRAME};
static const pp_srcloc R_QUEUE = {"rt-queue", "fn", "f.c", 0, PP_KIND_QUEUE};

#define R_REPS 3000

static void *rt_work(void *arg) {
  tb_worker *w = arg;
  for (int i = 0; i < R_REPS; i++) {
    int64_t ts = w->base + 1024 * (int64_t)(2 * i + w->k);
    tb_rec(PPT_EV_ZONE_BEGIN, &R_WORK, ts, 0, 0);
    if (w->k == 0) {
      tb_rec(PPT_EV_COUNTER_SET, &R_LEVEL, ts + 1, (uint64_t)i, 0);
      tb_rec(PPT_EV_FRAME, &R_FRAME, ts + 2, 0, 0);
      tb_rec(PPT_EV_QUEUE_PUSH, &R_QUEUE, ts + 3, (uint64_t)i + 1,
             ppt_zigzag(1));
    } else {
      tb_rec(PPT_EV_QUEUE_POP, &R_QUEUE, ts + 3, (uint64_t)i + 1,
             ppt_zigzag(0));
    }
    tb_rec(PPT_EV_ZONE_END, &R_WORK, ts + 500 + 100 * w->k, 0, 0);
  }
  return NULL;
}

PP_TEST_T(series_cli_export_equals_the_trace_in_memory, 120) {
  setenv("PIPEPROF_CLOCK", "monotonic", 1);
  char path[4096], out[4200];
  snprintf(path, sizeof path, "%s/series.pptrace", pp_test_tmpdir());
  snprintf(out, sizeof out, "%s/series.json", pp_test_tmpdir());
  int64_t base = pp__mono_ns() + 1000000;
  tb_record_threads(path, 2, rt_work, base);

  /* The CLI streams the file (a window of 100 events kept). */
  pp_cli_result r =
      pp_test_cli("export '%s' --format json --details 100 -o '%s'", path, out);
  CHECK_EQ(r.rc, 0);
  pp_cli_result_free(&r);
  json_error_t jerr;
  json_t *cli = json_load_file(out, 0, &jerr);
  if (!cli)
    PP_FAIL("%s: %s", out, jerr.text);
  CHECK_EQ(json_integer_value(json_object_get(cli, "schema_minor")), 22);

  /* The same file read whole and analysed in memory. */
  pp_trace t;
  char err[512];
  if (pp_trace_read_file(path, &t, err, sizeof err) != 0)
    PP_FAIL("%s", err);
  pp_analysis a = {0};
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *js = tb_summary_json(&a);
  json_t *mem = parse(js);
  json_t *s = json_object_get(cli, "series");
  CHECK(json_equal(s, json_object_get(mem, "series")));

  /* The counter's values at their times: i at base + 2048 i + 1. */
  int64_t t0 = json_integer_value(json_object_get(cli, "t0_ns"));
  CHECK_EQ(t0, base);
  int64_t last = base + 1024 * (2 * (R_REPS - 1) + 1) + 600;
  int64_t w = grid_width(base + 1, last); /* the first value: a counter */
  CHECK_EQ(json_integer_value(json_object_get(s, "bucket_ns")), w);
  json_t *c = named(json_object_get(s, "counters"), "rt-level");
  CHECK(c != NULL);
  size_t n = json_array_size(json_object_get(c, "t_ns"));
  CHECK(n <= PP_SERIES_POINTS_MAX);
  size_t i = 0;
  for (size_t p = 0; p < n; p++) {
    int64_t at = num_at(c, "t_ns", p);
    if (p == 0) { /* its bucket may start before t0: t_ns is then 0 */
      int64_t start = (base + 1) / w * w - t0;
      CHECK_EQ(at, start > 0 ? start : 0);
      at = start;
    }
    /* the values in this bucket: i.. while base + 2048 i + 1 is in it */
    double lo = (double)i, sum = 0;
    size_t k = 0;
    while (i < R_REPS && base + 2048 * (int64_t)i + 1 - t0 < at + w) {
      CHECK(base + 2048 * (int64_t)i + 1 - t0 >= at);
      sum += (double)i++;
      k++;
    }
    CHECK(k > 0);
    CHECK_NEAR(real_at(c, "min", p), lo, 0);
    CHECK_NEAR(real_at(c, "max", p), (double)(i - 1), 0);
    CHECK_NEAR(real_at(c, "value", p), sum / (double)k, 1e-9);
  }
  CHECK_EQ(i, R_REPS);
  /* zones[].hist: 3000 of 500 ns, 3000 of 600 */
  json_t *z = named(json_object_get(cli, "zones"), "rt-work");
  /* [448, 511] and [512, 639]: neighbours */
  static const uint64_t le[] = {511, 639}, counts[] = {3000, 3000};
  check_hist(json_object_get(z, "hist"), le, counts, 2, 2 * R_REPS);
  json_t *zl = named(json_object_get(s, "zones"), "rt-work");
  CHECK(zl != NULL);
  int64_t total = 0;
  for (size_t p = 0; p < json_array_size(json_object_get(zl, "count")); p++)
    total += num_at(zl, "count", p);
  CHECK_EQ(total, 2 * R_REPS);
  CHECK(named(json_object_get(s, "frames"), "rt-frame") != NULL);
  CHECK(named(json_object_get(s, "queues"), "rt-queue") != NULL);
  json_decref(mem);
  json_decref(cli);
  free(js);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

static void *stats_work(void *arg) {
  (void)arg;
  for (int i = 0; i < 100; i++) {
    PP_ZONE("st-work");
    PP_COUNTER_SET("st-level", i);
    PP_FRAME_MARK("st-frame");
  }
  return NULL;
}

/* A damaged trace can give one site a counter's values and a zone's: the
 * site's line keeps the kind it was first fed (the order the analysis
 * feeds the kinds in), and the values of the other kind are counted as
 * not followed. (A zone's median was once read from a counter's line of
 * negative values.) */
PP_TEST(series_site_with_two_kinds_keeps_one) {
  pp_trace t = {0};
  uint32_t mixed = tb_loc(&t, "mixed", PP_KIND_COUNTER);
  size_t th = tb_thread(&t, 1, "main");
  counter(&t, th, mixed, T0, -1);
  counter(&t, th, mixed, T0 + 100, -3);
  zone(&t, th, mixed, T0 + 200, T0 + 300);
  pp_analysis a = {0};
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *js = tb_summary_json(&a);
  json_t *root = parse(js);
  json_t *s = json_object_get(root, "series");
  json_t *c = named(json_object_get(s, "counters"), "mixed");
  json_t *z = named(json_object_get(s, "zones"), "mixed");
  CHECK((c != NULL) != (z != NULL));
  json_int_t lost = json_integer_value(json_object_get(s, "values_lost"));
  if (c) { /* the zone's one value lost */
    CHECK_EQ(lost, 1);
    CHECK_NEAR(real_at(c, "min", 1), -3.0, 0);
  } else { /* the counter's two values lost */
    CHECK_EQ(lost, 2);
    CHECK_EQ(num_at(z, "max_ns", 0), 100);
  }
  json_decref(root);
  free(js);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(series_stats_mode_says_what_is_unavailable) {
  char path[4096];
  snprintf(path, sizeof path, "%s/stats.pptrace", pp_test_tmpdir());
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.mode = PP_MODE_STATS;
  cfg.out_path = path;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  stats_work(NULL);
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  char err[512];
  if (pp_trace_read_file(path, &t, err, sizeof err) != 0)
    PP_FAIL("%s", err);
  CHECK(t.from_stats);
  uint64_t events = 0; /* stats mode keeps no event, counters included */
  for (size_t i = 0; i < t.nthreads; i++)
    events += t.threads[i].nev;
  CHECK_EQ_U(events, 0);
  pp_analysis a = {0};
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *js = tb_summary_json(&a);
  json_t *root = parse(js);
  json_t *s = json_object_get(root, "series");
  static const char *const kinds[] = {"frames", "counters", "queues", "zones"};
  for (size_t k = 0; k < 4; k++) {
    json_t *v = json_object_get(s, kinds[k]);
    CHECK(json_is_object(v));
    CHECK_CONTAINS(json_string_value(json_object_get(v, "unavailable")),
                   "stats mode");
  }
  /* the histograms come from the STATS chunk */
  json_t *z = named(json_object_get(root, "zones"), "st-work");
  CHECK(z != NULL);
  json_t *c = json_object_get(json_object_get(z, "hist"), "counts");
  uint64_t sum = 0;
  for (size_t i = 0; i < json_array_size(c); i++)
    sum += (uint64_t)json_integer_value(json_array_get(c, i));
  CHECK_EQ_U(sum, 100);
  CHECK_EQ(json_integer_value(json_object_get(z, "count")), 100);
  json_decref(root);
  free(js);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

#endif /* PP_HAVE_JANSSON */
