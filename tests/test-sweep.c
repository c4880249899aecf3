/* SPDX-License-Identifier: MIT */
/*
 * `pipeprof sweep` (src/cli/sweep.c) over a batch "model"
 * (tests/helpers/batch_worker.c): the table and the JSON agree, every
 * value has its figures, the best value and the knee follow their
 * definitions from the figures printed (never from timings the test
 * expects), a failing value is said and the others still run, and bad
 * input gets one line and exit 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

#ifdef PP_HAVE_JANSSON
#include <jansson.h>

static const char *worker(void) {
  static char path[4200];
  snprintf(path, sizeof path, "%s/pipeprof-test-batch-worker",
           pp_test_bindir());
  return path;
}

PP_TEST_T(sweep_batch_sizes_table_json_best_and_knee, 180) {
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/sweep", pp_test_tmpdir());
  pp_cli_result r = pp_test_cli(
      "sweep --param batch=1,4,16 --repeat 2 --latency-bound 50ms -o '%s' "
      "-- '%s' --batch {batch} --items 64",
      dir, worker());
  if (r.rc != 0)
    PP_FAIL("exit %d\n%s\n%s", r.rc, r.out, r.err);
  /* the figures, for a failure below to be read against */
  for (const char *l = r.out; *l;) {
    size_t n = strcspn(l, "\n");
    printf("# %.*s\n", (int)n, l);
    l += n + (l[n] == '\n');
  }
  CHECK_CONTAINS(r.out, "pipeprof sweep: batch over 3 values, 2 runs each");
  CHECK_CONTAINS(r.out, "items: requests; latency: request E2E");
  CHECK_CONTAINS(r.out, "energy per item: unavailable:");
  CHECK_CONTAINS(r.err, "batch=16, run 2 of 2");
  char path[4300];
  snprintf(path, sizeof path, "%s/sweep.json", dir);
  json_error_t err;
  json_t *d = json_load_file(path, 0, &err);
  if (!d)
    PP_FAIL("%s: %s", path, err.text);
  CHECK_STR(json_string_value(json_object_get(d, "schema")), "pipeprof.sweep");
  json_t *vals = json_object_get(d, "values");
  CHECK_EQ(json_array_size(vals), 3);
  double bound = 50e6, top = 0;
  const char *want_best = NULL;
  double best_per_s = -1;
  static const char *const names[] = {"1", "4", "16"};
  for (size_t i = 0; i < 3; i++) {
    json_t *v = json_array_get(vals, i);
    CHECK_STR(json_string_value(json_object_get(v, "value")), names[i]);
    CHECK_EQ(json_integer_value(json_object_get(v, "runs_ok")), 2);
    CHECK_STR(json_string_value(json_object_get(v, "item")), "request");
    /* 64 requests per run, whatever the batch size */
    CHECK_NEAR(json_number_value(json_object_get(v, "items")), 64, 0);
    double per_s = json_number_value(json_object_get(v, "items_per_s"));
    double p50 = json_number_value(json_object_get(v, "p50_ns"));
    double p99 = json_number_value(json_object_get(v, "p99_ns"));
    CHECK(per_s > 0);
    /* every batch sleeps 2 ms + 0.2 ms per item at least (a lower bound:
     * a loaded machine only sleeps longer) */
    CHECK_GE(p50, 2000000);
    CHECK_GE(p99, p50);
    CHECK(json_number_value(json_object_get(v, "peak_rss_bytes")) > 0);
    CHECK(json_is_string(json_object_get(v, "joules_per_item")));
    char row[64];
    snprintf(row, sizeof row, "\n%-12s %12.1f", names[i], per_s);
    CHECK_CONTAINS(r.out, row);
    if (per_s > top)
      top = per_s;
    if (p99 <= bound && per_s > best_per_s) {
      best_per_s = per_s;
      want_best = names[i];
    }
  }
  json_t *best = json_object_get(d, "best");
  if (want_best) {
    CHECK_STR(json_string_value(best), want_best);
    char line[64];
    snprintf(line, sizeof line, "best batch: %s (", want_best);
    CHECK_CONTAINS(r.out, line);
  } else {
    CHECK(json_is_null(best));
  }
  /* the knee: the first value at 90% of the top throughput */
  const char *want_knee = NULL;
  for (size_t i = 0; i < 3 && !want_knee; i++)
    if (json_number_value(json_object_get(json_array_get(vals, i),
                                          "items_per_s")) >= 0.9 * top)
      want_knee = names[i];
  CHECK_STR(json_string_value(json_object_get(d, "knee")), want_knee);
  json_decref(d);
  pp_cli_result_free(&r);
  /* the chart page, in Chromium: both charts drew the three values */
  const char *chromium = pp_test_chromium();
  if (!chromium)
    return;
  char url[4400];
  snprintf(url, sizeof url, "file://%s/sweep.html", dir);
  char *dom = pp_test_chromium_dom(chromium, url, "");
  CHECK_CONTAINS(dom, " data-rendered=\"ok\"");
  CHECK(strstr(dom, "id=\"pp-render-error\"") == NULL);
  CHECK_CONTAINS(dom, "pipeprof sweep: batch");
  const char *req = getenv("PP_REQUIRE_CHARTS");
  if (req && strcmp(req, "1") == 0) {
    CHECK_CONTAINS(dom, "data-chart=\"sweep-throughput\" "
                        "data-points=\"3\"");
    CHECK_CONTAINS(dom, "data-chart=\"sweep-latency\" data-points=\"9\"");
  }
  free(dom);
}
#endif

PP_TEST_T(sweep_failing_value_and_bad_input, 120) {
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/sweepf", pp_test_tmpdir());
  char w[4300];
  snprintf(w, sizeof w, "%s/pipeprof-test-batch-worker", pp_test_bindir());
  pp_cli_result r = pp_test_cli(
      "sweep --param batch=2,7 -o '%s' -- '%s' --batch {batch} --items 8 "
      "--fail-on 7",
      dir, w);
  CHECK_EQ(r.rc, 1);
  CHECK_CONTAINS(r.err, "pipeprof sweep: batch=7: CMD exited with status 3");
  CHECK_CONTAINS(r.out, "\n7            failed: CMD exited with status 3");
  CHECK_CONTAINS(r.out, "\n2 ");
  pp_cli_result_free(&r);
  r = pp_test_cli("sweep --param batch= -- '%s' --batch {batch}", w);
  CHECK_ONE_LINE_ERROR_FROM(r, 2,
                            "pipeprof sweep: --param 'batch=' has no "
                            "values");
  pp_cli_result_free(&r);
  r = pp_test_cli("sweep --param batch=1,2 -- '%s' --items 8", w);
  CHECK_ONE_LINE_ERROR_FROM(r, 2, "CMD has no {batch}");
  pp_cli_result_free(&r);
  r = pp_test_cli("sweep --param batch=1 --latency-bound 5parsecs -- '%s' "
                  "{batch}",
                  w);
  CHECK_ONE_LINE_ERROR_FROM(r, 2, "bad --latency-bound '5parsecs'");
  pp_cli_result_free(&r);
  r = pp_test_cli("sweep --param batch=1 --repeat 0 -- x {batch}");
  CHECK_ONE_LINE_ERROR_FROM(r, 2, "bad --repeat '0'");
  pp_cli_result_free(&r);
  r = pp_test_cli("sweep --param batch=1,2");
  CHECK_ONE_LINE_ERROR_FROM(r, 2, "missing -- CMD");
  pp_cli_result_free(&r);
  /* --env: the worker reads PIPEPROF_SWEEP_BATCH (--batch 0) */
  r = pp_test_cli("sweep --env --param batch=3 -o '%s' -- '%s' --batch 0 "
                  "--items 6",
                  dir, w);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "\n3 ");
  pp_cli_result_free(&r);
}
