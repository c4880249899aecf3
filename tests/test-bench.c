/* SPDX-License-Identifier: MIT */
/*
 * pipeprof-bench's output, not its figures (benchmarks print numbers; no
 * test asserts a timing): `--json` is one JSON object with every key the
 * core issue lists, each a finite positive number, no events dropped by
 * the zone loops, every paired ratio inside its interquartile range and
 * 95% interval, each goal with a verdict, and the pipeline part marked as
 * not measured when skipped; bad flags are refused with one line and
 * exit 2.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

#ifdef PP_HAVE_JANSSON
#include <jansson.h>

PP_TEST_T(bench_json_has_every_figure, 120) {
  char *out = NULL;
  int rc = pp_test_run(&out,
                       "'%s/pipeprof-bench' --json --quick --no-pipeline "
                       "2>/dev/null",
                       pp_test_bindir());
  CHECK_EQ(rc, 0);
  json_error_t err;
  json_t *root = json_loads(out, 0, &err);
  if (!root)
    PP_FAIL("not JSON (%s): %s", err.text, out);
  static const char *const keys[] = {"floor_zone_ns",
                                     "zone_trace_ns",
                                     "zone_trace_ns_mean",
                                     "zone_stats_ns",
                                     "zone_stats_ns_mean",
                                     "zone_flight_ns",
                                     "zone_disabled_ns",
                                     "zone_trace_2threads_ns",
                                     "counter_ns",
                                     "zone_cold_ns",
                                     "floor_cold_ns",
                                     "hist_record_ns",
                                     "hist_p99_query_ns",
                                     "export_chrome_events_per_s",
                                     "trace_write_events_per_s",
                                     "ratio_trace_to_floor",
                                     "ratio_stats_to_floor",
                                     "ratio_2threads_to_1",
                                     "zone_trace_ns_cpu_per_zone_to_floor",
                                     "zone_stats_ns_cpu_per_zone_to_floor",
                                     "zone_trace_ns_others_cpu_per_zone_ns",
                                     "zone_stats_ns_others_cpu_per_zone_ns"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    json_t *v = json_object_get(root, keys[i]);
    if (!json_is_number(v))
      PP_FAIL("%s: missing or not a number in %s", keys[i], out);
    double d = json_number_value(v);
    if (!isfinite(d) || d <= 0)
      PP_FAIL("%s: %g", keys[i], d);
  }
  CHECK_EQ(json_integer_value(json_object_get(root, "zone_trace_ns_dropped")),
           0);
  /* The process's CPU per zone holds the other threads' part of it. */
  CHECK(json_number_value(
            json_object_get(root, "zone_trace_ns_others_cpu_per_zone_ns")) <
        json_number_value(
            json_object_get(root, "zone_trace_ns_cpu_per_zone_ns")));
  /* Ratios are medians of paired rounds, each with its interquartile
   * range and the median's 95% interval around it; goals have a verdict. */
  static const char *const ratios[] = {
      "ratio_trace_to_floor", "ratio_stats_to_floor", "ratio_2threads_to_1",
      "zone_trace_ns_cpu_per_zone_to_floor",
      "zone_stats_ns_cpu_per_zone_to_floor"};
  for (size_t i = 0; i < sizeof ratios / sizeof ratios[0]; i++) {
    char key[128];
    double med = json_number_value(json_object_get(root, ratios[i]));
    for (int k = 0; k < 2; k++) {
      snprintf(key, sizeof key, "%s_%s", ratios[i], k ? "ci95" : "iqr");
      json_t *a = json_object_get(root, key);
      if (!json_is_array(a) || json_array_size(a) != 2)
        PP_FAIL("%s: missing or not a pair in %s", key, out);
      double lo = json_number_value(json_array_get(a, 0));
      double hi = json_number_value(json_array_get(a, 1));
      if (!(0 < lo && lo <= med && med <= hi))
        PP_FAIL("%s: [%g, %g] around %g", key, lo, hi, med);
    }
  }
  CHECK(json_integer_value(json_object_get(root, "paired_rounds")) >= 6);
  static const char *const goals[] = {
      "zone_trace_ns_cpu_per_zone_to_floor_verdict",
      "zone_stats_ns_cpu_per_zone_to_floor_verdict"};
  for (size_t i = 0; i < sizeof goals / sizeof goals[0]; i++) {
    const char *v = json_string_value(json_object_get(root, goals[i]));
    if (!v || (strcmp(v, "met") && strcmp(v, "missed") &&
               strncmp(v, "too noisy to judge: ", 20)))
      PP_FAIL("%s: %s", goals[i], v ? v : "(missing)");
  }
  CHECK_STR(json_string_value(json_object_get(root, "pipeline_overhead")),
            "unavailable: not measured (--no-pipeline)");
  json_decref(root);
  free(out);
}
#endif

PP_TEST(bench_bad_flags) {
  char *out = NULL;
  CHECK_EQ(
      pp_test_run(&out, "'%s/pipeprof-bench' --pairs 0 2>&1", pp_test_bindir()),
      2);
  CHECK_CONTAINS(out, "--pairs: expected 1 to");
  CHECK_EQ(pp_test_count_lines(out), 1);
  free(out);
  CHECK_EQ(pp_test_run(&out, "'%s/pipeprof-bench' --frobnicate 2>&1",
                       pp_test_bindir()),
           2);
  CHECK_CONTAINS(out, "unknown option '--frobnicate'");
  free(out);
}
