/* SPDX-License-Identifier: MIT */
/*
 * pipeprof-bench's output, not its figures (benchmarks print numbers; no
 * test asserts a timing): `--json` is one JSON object with every key the
 * core issue lists, each a finite positive number, no events dropped by
 * the zone loops, and the pipeline part marked as not measured when
 * skipped; bad flags are refused with one line and exit 2.
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
