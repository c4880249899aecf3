/* SPDX-License-Identifier: MIT */
/*
 * The HTTP endpoint (docs/http.md): the /metrics page built from a table
 * of figures (escaping, cumulative buckets, Prometheus's own checker
 * `promtool check metrics` when installed), and the companion
 * libpipeprof-http serving a profiled child process on loopback: the
 * zones it recorded, HEAD, refused methods and paths, an oversized
 * request head, and a port in use (one stderr line, the program runs on);
 * and a real Prometheus server scraping it and answering
 * histogram_quantile. Prometheus (promtool) and the companion are required
 * with PP_REQUIRE_HTTP=1 (CI), skipped otherwise when missing.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/recorder.h"
#include "format/pptrace.h"
#include "model/reader.h"
#include "http/api.h"
#include "http/metrics.h"
#include "metrics/registry.h"
#include "pipeprof.h"
#include "cdp.h"
#include "results/doc.h"
#include "runner.h"
#include "trace_builder.h"
#include "units.h"

static int required(void) {
  const char *e = getenv("PP_REQUIRE_HTTP");
  return e && strcmp(e, "1") == 0;
}

/* ---- the page, from a table of known figures ----------------------------- */

static const char *const fake_names[] = {"decode", "odd \"name\"\\ with\nnl"};

static int fake_zone_name(size_t i, char *buf, size_t size) {
  if (i >= 2)
    return PP_EINVAL;
  snprintf(buf, size, "%s", fake_names[i]);
  return PP_OK;
}

/* decode: 10 zones of 2^k ns for k = 10..19 (1 us .. 524 us); the other
 * zone: 3 of 100 ms */
static int fake_cumulative(const char *name, const uint64_t *le, size_t n,
                           uint64_t *counts, uint64_t *total, double *sum) {
  int dec = strcmp(name, "decode") == 0;
  *total = dec ? 10 : 3;
  *sum = dec ? (double)((UINT64_C(1) << 20) - 1024) : 3e8;
  for (size_t i = 0; i < n; i++) {
    uint64_t c = 0;
    for (int k = 10; dec && k < 20; k++)
      c += (UINT64_C(1) << k) <= le[i];
    if (!dec)
      c = le[i] >= 100000000 ? 3 : 0;
    counts[i] = c;
  }
  return PP_OK;
}

static uint64_t fake_dropped(void) { return 7; }

static int fake_info(pp_http_info *o) {
  o->mode = "trace";
  o->process_name = "fake";
  o->pid = 42;
  o->t0_ns = INT64_C(1000000000);
  o->now_ns = INT64_C(3100000000);
  o->interval_ns = INT64_C(1000000000);
  return PP_OK;
}

/* A window of the fake series: count n, every value v ns. */
static pp_live_stats fake_win(uint64_t n, uint64_t v, int w) {
  pp_live_stats st = {sizeof st, (uint32_t)w, w ? w : 2.0, n,
                      0,         0,           (double)v,   v,
                      v,         v,           v,           INT64_C(3000000000)};
  st.rate = (double)n / st.seconds;
  return st;
}

static int fake_series(pp_http_series_fn fn, void *ctx) {
  static const struct {
    int kind;
    const char *name;
    uint64_t v;
  } s[] = {{PP_HTTP_SERIES_ZONE, "decode", 1000},
           {PP_HTTP_SERIES_ZONE, "odd \"name\"\\ with\nnl", 100000000},
           {PP_HTTP_SERIES_E2E, "request e2e", 50000000},
           {PP_HTTP_SERIES_TTFT, "request ttft", 5000000},
           {PP_HTTP_SERIES_TPOT, "request tpot", 2000000},
           {PP_HTTP_SERIES_ITL, "request itl", 1000000},
           {PP_HTTP_SERIES_QUEUE_WAIT, "q", 30000}};
  for (size_t i = 0; i < sizeof s / sizeof *s; i++) {
    pp_live_stats w[4] = {fake_win(1, s[i].v, 1), fake_win(5, s[i].v, 10),
                          fake_win(10, s[i].v, 60), fake_win(10, s[i].v, 0)};
    fn(ctx, s[i].kind, s[i].name, w);
  }
  return PP_OK;
}

/* One entry of the fake board. */
static pp__board_entry fake_entry(const char *name, int kind, int is_float,
                                  uint64_t events, double value) {
  pp__board_entry e;
  memset(&e, 0, sizeof e);
  e.name = name;
  e.kind = kind;
  e.is_float = is_float;
  e.events = events;
  e.value = e.lo = e.hi = value;
  return e;
}

static int fake_board(pp_http_board_fn fn, void *ctx, uint64_t *left_out) {
  pp__board_entry e[] = {
      fake_entry("frame", PP__BOARD_FRAME, 0, 31, 0),
      fake_entry("q", PP__BOARD_QUEUE, 0, 10, 3),
      fake_entry("user.count", PP__BOARD_COUNTER, 0, 4, 5),
      fake_entry("user.level", PP__BOARD_COUNTER, 0, 2, 3),
      fake_entry("proc.thread.4321.cpu_pct", PP__BOARD_METRIC, 1, 2, 40),
      fake_entry("sys.cpu.busy_pct", PP__BOARD_METRIC, 1, 2, 50),
      fake_entry("proc.rss_bytes", PP__BOARD_METRIC, 0, 2, 1e6),
      fake_entry("sys.cpu3.busy_pct", PP__BOARD_METRIC, 1, 2, 25),
      fake_entry("sys.cpu2.freq_mhz", PP__BOARD_METRIC, 1, 2, 2000),
      fake_entry("sys.psi.cpu.some_pct", PP__BOARD_METRIC, 1, 2, 10),
      fake_entry("proc.cpu_user_s", PP__BOARD_METRIC, 1, 2, 1.5),
      fake_entry("proc.read_bytes_total", PP__BOARD_METRIC, 0, 2, 4096)};
  e[3].not_total = 1; /* set, not only added to */
  /* e[4]: a per-thread series, on the page only when asked */
  e[0].first_ns = INT64_C(1000000000);
  e[0].last_ns = INT64_C(2000000000);
  e[1].pops = 7;
  e[1].waits[0] = 2;
  e[1].waits[1] = 1;
  for (size_t i = 0; i < sizeof e / sizeof *e; i++)
    fn(ctx, &e[i]);
  *left_out = 0;
  return PP_OK;
}

/* History: "decode" over intervals ending at 1.5, 2, 2.5 and 3 s (the
 * first before t0 + 0.5 s), user.count at 2 and 3 s. */
static int fake_history(pp_http_series_history_fn sfn,
                        pp_http_board_history_fn bfn, void *ctx) {
  pp__live_point sp[3] = {{INT64_C(2000000000), 4, 1000, 2000},
                          {INT64_C(2500000000), 0, 0, 0},
                          {INT64_C(3000000000), 6, 1100, 5000}};
  sfn(ctx, PP_HTTP_SERIES_ZONE, "decode", sp, 3);
  pp__board_entry e = fake_entry("user.count", PP__BOARD_COUNTER, 0, 4, 5);
  pp__board_point bp[2] = {{INT64_C(2000000000), 3, 1, 3},
                           {INT64_C(3000000000), 5, 3, 5}};
  bfn(ctx, &e, bp, 2);
  return PP_OK;
}

static int fake_alerts(pp_http_alert_fn fn, void *ctx) {
  pp_alert a = {sizeof a,
                PP_ALERT_RESOURCE,
                "mem",
                "system",
                "memory 95.0% used <b>",
                95,
                0,
                0,
                90,
                INT64_C(2500000000)};
  fn(ctx, &a);
  return PP_OK;
}

/* zones as fake_cumulative; the other series: 4 values of 2^20 ns */
static int fake_cumulative_any(int kind, const char *name, const uint64_t *le,
                               size_t n, uint64_t *counts, uint64_t *total,
                               double *sum) {
  if (kind == PP_HTTP_SERIES_ZONE)
    return fake_cumulative(name, le, n, counts, total, sum);
  if (kind == PP_HTTP_SERIES_QUEUE_WAIT && (!name || strcmp(name, "q")))
    return PP_EINVAL;
  *total = 4;
  *sum = 4.0 * (1 << 20);
  for (size_t i = 0; i < n; i++)
    counts[i] = le[i] >= (1 << 20) ? 4 : 0;
  return PP_OK;
}

static const pp_http_host fake_host = {sizeof(pp_http_host),
                                       "9.9.9",
                                       fake_zone_name,
                                       fake_cumulative,
                                       NULL,
                                       fake_dropped,
                                       fake_info,
                                       fake_series,
                                       fake_board,
                                       fake_alerts,
                                       fake_cumulative_any,
                                       NULL,
                                       fake_history,
                                       NULL,
                                       sizeof(pp__board_entry)};

/* Path of promtool, or NULL (skip, or fail with PP_REQUIRE_HTTP=1). */
static const char *promtool(void) {
  static const char *const cands[] = {"/usr/bin/promtool",
                                      "/usr/local/bin/promtool"};
  for (size_t i = 0; i < 2; i++)
    if (access(cands[i], X_OK) == 0)
      return cands[i];
  if (required())
    PP_FAIL("promtool not found (PP_REQUIRE_HTTP=1; deps.sh --http)");
  return NULL;
}

/* promtool's verdict on a page: 0 when clean (its output in *out). */
static int promtool_check(const char *page, size_t len, char **out) {
  const char *pt = promtool();
  if (!pt)
    return -2;
  char path[4096];
  snprintf(path, sizeof path, "%s/metrics.txt", pp_test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  CHECK_EQ(fwrite(page, 1, len, f), len);
  fclose(f);
  return pp_test_run(out, "'%s' check metrics < '%s' 2>&1", pt, path);
}

/* promtool finds nothing to say about the page (skipped without it). */
static void promtool_clean(const char *page, size_t len) {
  char *out = NULL;
  int rc = promtool_check(page, len, &out);
  if (rc == -2)
    printf("# promtool not installed: its check skipped\n");
  else if (rc != 0)
    PP_FAIL("promtool check metrics: exit %d\n%s", rc, out ? out : "");
  free(out);
}

PP_TEST(http_metrics_page_buckets_escaping_and_promtool) {
  size_t len = 0;
  char *page = pp_metrics_page(&fake_host, 0, &len);
  CHECK(page != NULL);
  CHECK_EQ_U(strlen(page), len);
  CHECK_CONTAINS(page, "pipeprof_build_info{version=\"9.9.9\"} 1\n");
  CHECK_CONTAINS(page, "pipeprof_dropped_events_total 7\n");
  CHECK_CONTAINS(page, "# TYPE pipeprof_zone_duration_seconds histogram\n");
  /* 2^10 ns = 1.024 us: the first bucket holds the 1.024 us zone */
  CHECK_CONTAINS(page, "pipeprof_zone_duration_seconds_bucket{zone=\"decode"
                       "\",le=\"1.024e-06\"} 1\n");
  CHECK_CONTAINS(page, "pipeprof_zone_duration_seconds_bucket{zone=\"decode"
                       "\",le=\"0.000524288\"} 10\n");
  CHECK_CONTAINS(page, "pipeprof_zone_duration_seconds_bucket{zone=\"decode"
                       "\",le=\"+Inf\"} 10\n");
  CHECK_CONTAINS(page,
                 "pipeprof_zone_duration_seconds_count{zone=\"decode\"} 10\n");
  CHECK_CONTAINS(page, "pipeprof_zone_duration_seconds_sum{zone=\"decode\"} "
                       "0.001047552\n");
  /* label escaping: quote, backslash, newline */
  CHECK_CONTAINS(page, "zone=\"odd \\\"name\\\"\\\\ with\\nnl\",le=\"+Inf\"} "
                       "3\n");
  CHECK_CONTAINS(page, "pipeprof_metrics_zones_left_out 0\n");
  /* every bucket series is cumulative: never falls */
  unsigned long long prev = 0;
  int lines = 0;
  for (const char *p = strstr(page, "_bucket{zone=\"decode\""); p;
       p = strstr(p + 1, "_bucket{zone=\"decode\"")) {
    const char *v = strstr(p, "} ");
    CHECK(v != NULL);
    unsigned long long c = strtoull(v + 2, NULL, 10);
    CHECK(c >= prev);
    prev = c;
    lines++;
  }
  CHECK_EQ(lines, PP_METRICS_BUCKET_HI - PP_METRICS_BUCKET_LO + 2);
  promtool_clean(page, len);
  free(page);
}

/* The series beyond zones: requests, frames, queues, counters and the
 * library's metrics in base units, under the names docs/http.md lists. */
PP_TEST(http_metrics_page_requests_queues_counters_and_system) {
  size_t len = 0;
  char *page = pp_metrics_page(&fake_host, 0, &len);
  CHECK(page != NULL);
  CHECK_CONTAINS(page, "# TYPE pipeprof_request_ttft_seconds histogram\n");
  CHECK_CONTAINS(page, "pipeprof_request_ttft_seconds_bucket{le="
                       "\"0.001048576\"} 4\n");
  CHECK_CONTAINS(page, "pipeprof_request_ttft_seconds_bucket{le="
                       "\"0.000524288\"} 0\n");
  CHECK_CONTAINS(page, "pipeprof_request_tpot_seconds_count 4\n");
  CHECK_CONTAINS(page, "pipeprof_request_itl_seconds_count 4\n");
  CHECK_CONTAINS(page, "pipeprof_request_duration_seconds_count 4\n");
  CHECK_CONTAINS(page, "pipeprof_frames_total{frame=\"frame\"} 31\n");
  CHECK_CONTAINS(page, "pipeprof_queue_depth{queue=\"q\"} 3\n");
  CHECK_CONTAINS(page, "pipeprof_queue_pushes_total{queue=\"q\"} 10\n");
  CHECK_CONTAINS(page, "pipeprof_queue_pops_total{queue=\"q\"} 7\n");
  CHECK_CONTAINS(page,
                 "pipeprof_queue_waits_total{queue=\"q\",on=\"full\"} 2\n");
  CHECK_CONTAINS(page,
                 "pipeprof_queue_waits_total{queue=\"q\",on=\"empty\"} 1\n");
  CHECK_CONTAINS(page, "pipeprof_queue_wait_seconds_count{queue=\"q\"} 4\n");
  /* a counter only added to is a running total; one set is a level */
  CHECK_CONTAINS(page, "# TYPE pipeprof_program_total counter\n"
                       "pipeprof_program_total{name=\"user.count\"} 5\n");
  CHECK_CONTAINS(page, "# TYPE pipeprof_program_value gauge\n"
                       "pipeprof_program_value{name=\"user.level\"} 3\n");
  CHECK(strstr(page, "pipeprof_program_value{name=\"user.count\"}") == NULL);
  /* percentages as ratios; the all-CPU figure beside the per-CPU ones */
  CHECK_CONTAINS(page, "pipeprof_sys_cpu_busy_ratio{cpu=\"all\"} 0.5\n");
  CHECK_CONTAINS(page, "pipeprof_sys_cpu_busy_ratio{cpu=\"3\"} 0.25\n");
  CHECK_CONTAINS(page, "pipeprof_sys_cpu_freq_hertz{cpu=\"2\"} 2000000000\n");
  CHECK_CONTAINS(page, "pipeprof_sys_psi_some_ratio{resource=\"cpu\"} 0.1\n");
  CHECK_CONTAINS(page, "pipeprof_proc_rss_bytes 1000000\n");
  CHECK_CONTAINS(page, "# TYPE pipeprof_proc_cpu_user_seconds_total "
                       "counter\n");
  CHECK_CONTAINS(page, "pipeprof_proc_cpu_user_seconds_total 1.5\n");
  CHECK_CONTAINS(page, "pipeprof_proc_read_bytes_total 4096\n");
  CHECK_CONTAINS(page, "pipeprof_metrics_sites_left_out 0\n");
  /* one HELP and one TYPE per family, its samples together */
  const char *fam = "# TYPE pipeprof_sys_cpu_busy_ratio gauge\n";
  const char *first = strstr(page, fam);
  CHECK(first != NULL);
  CHECK(strstr(first + 1, fam) == NULL);
  const char *a = strstr(page, "pipeprof_sys_cpu_busy_ratio{cpu=\"all\"}");
  const char *b = strstr(page, "pipeprof_sys_cpu_busy_ratio{cpu=\"3\"}");
  CHECK(a && b);
  const char *between = a < b ? a : b, *end = a < b ? b : a;
  CHECK(memchr(between, '#', (size_t)(end - between)) == NULL);
  promtool_clean(page, len);
  free(page);
}

/* Every metric of the registry gets a well-formed family: a valid name
 * ending in its unit (counters in _total), a label where the name has a
 * placeholder, no two rows under one family but an aggregate beside its
 * per-index row. */
PP_TEST(http_metrics_every_registry_row_has_a_family) {
  char fam[PP_METRIC_COUNT][128], lab[PP_METRIC_COUNT][32];
  for (int id = 0; id < PP_METRIC_COUNT; id++) {
    const pp_metric_def *d = pp_metric_def_of(id);
    double scale;
    pp_metrics_family(d, fam[id], sizeof fam[id], lab[id], sizeof lab[id],
                      &scale);
    const char *f = fam[id];
    CHECK(strncmp(f, "pipeprof_", 9) == 0);
    for (const char *c = f; *c; c++)
      CHECK((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_');
    CHECK(strstr(f, "__") == NULL);
    size_t n = strlen(f);
    int total = n > 6 && strcmp(f + n - 6, "_total") == 0;
    CHECK_EQ(total, d->kind == PP_METRIC_TOTAL);
    /* "_total" once at most ("mem_total_bytes" is a gauge's word) */
    const char *t1 = strstr(f, "_total");
    CHECK(!t1 || !strstr(t1 + 1, "_total"));
    static const char *const sfx[] = {[PP_UNIT_PERCENT] = "_ratio",
                                      [PP_UNIT_BYTES] = "_bytes",
                                      [PP_UNIT_SECONDS] = "_seconds",
                                      [PP_UNIT_MHZ] = "_hertz",
                                      [PP_UNIT_WATTS] = "_watts",
                                      [PP_UNIT_JOULES] = "_joules",
                                      [PP_UNIT_CELSIUS] = "_celsius",
                                      [PP_UNIT_PER_SECOND] = "_per_second",
                                      [PP_UNIT_BYTES_PER_SECOND] =
                                          "_bytes_per_second",
                                      [PP_UNIT_MILLISECONDS] = "_seconds"};
    const char *want =
        (size_t)d->unit < sizeof sfx / sizeof *sfx ? sfx[d->unit] : NULL;
    if (want) {
      size_t m = n - (total ? 6 : 0), k = strlen(want);
      if (!(m > k && strncmp(f + m - k, want, k) == 0))
        PP_FAIL("%s: family %s lacks %s", d->name, f, want);
    }
    CHECK_EQ(strchr(d->name, '{') != NULL, lab[id][0] != 0);
  }
  /* perf's task-clock (milliseconds) is a family of its own, in seconds;
   * the counts are a counter family by event: no family mixes units */
  double scale;
  pp_metrics_family(pp_metric_def_of(PP_METRIC_PERF_TASK_CLOCK), fam[0],
                    sizeof fam[0], lab[0], sizeof lab[0], &scale);
  CHECK_STR(fam[0], "pipeprof_perf_task_clock_seconds_total");
  CHECK_NEAR(scale, 1e-3, 0);
  pp_metrics_family(pp_metric_def_of(PP_METRIC_PERF_EVENT), fam[0],
                    sizeof fam[0], lab[0], sizeof lab[0], &scale);
  CHECK_STR(fam[0], "pipeprof_perf_total");
  CHECK_STR(lab[0], "event");
  CHECK_EQ(pp_metric_lookup("perf.task-clock", NULL, NULL, NULL),
           PP_METRIC_PERF_TASK_CLOCK);
  for (int id = 0; id < PP_METRIC_COUNT; id++)
    pp_metrics_family(pp_metric_def_of(id), fam[id], sizeof fam[id], lab[id],
                      sizeof lab[id], &scale);
  for (int a = 0; a < PP_METRIC_COUNT; a++)
    for (int b = a + 1; b < PP_METRIC_COUNT; b++)
      if (strcmp(fam[a], fam[b]) == 0 && !!lab[a][0] == !!lab[b][0])
        PP_FAIL("%s and %s share %s", pp_metric_def_of(a)->name,
                pp_metric_def_of(b)->name, fam[a]);
}

/* OpenMetrics: counters declared without _total, units, info, # EOF. */
PP_TEST(http_metrics_page_openmetrics) {
  size_t len = 0;
  char *page = pp_metrics_page(&fake_host, 1, &len);
  CHECK(page != NULL);
  CHECK_CONTAINS(page, "# TYPE pipeprof_build info\n");
  CHECK_CONTAINS(page, "pipeprof_build_info{version=\"9.9.9\"} 1\n");
  CHECK_CONTAINS(page, "# TYPE pipeprof_dropped_events counter\n");
  CHECK_CONTAINS(page, "pipeprof_dropped_events_total 7\n");
  CHECK_CONTAINS(page, "# UNIT pipeprof_zone_duration_seconds seconds\n");
  CHECK_CONTAINS(page, "# TYPE pipeprof_proc_cpu_user_seconds counter\n");
  CHECK_CONTAINS(page, "# UNIT pipeprof_proc_cpu_user_seconds seconds\n");
  CHECK_CONTAINS(page, "# UNIT pipeprof_sys_cpu_busy_ratio ratio\n");
  CHECK(len > 6 && strcmp(page + len - 6, "# EOF\n") == 0);
  CHECK(strstr(page, "# TYPE pipeprof_dropped_events_total") == NULL);
  free(page);
  page = pp_metrics_page(&fake_host, 0, &len);
  CHECK(strstr(page, "# EOF") == NULL);
  CHECK(strstr(page, "# UNIT") == NULL);
  free(page);
}

#ifdef PP_HAVE_JANSSON
#include <jansson.h>

static json_t *api_doc(const char *path, const char *window, unsigned want) {
  unsigned status = 0;
  size_t len = 0;
  char *page = pp_api_page(&fake_host, path, window, &status, &len);
  CHECK(page != NULL);
  CHECK_EQ_U(status, want);
  json_error_t err;
  json_t *d = json_loadb(page, len, 0, &err);
  if (!d)
    PP_FAIL("%s: not JSON (%s): %.200s", path, err.text, page);
  free(page);
  return d;
}

/* The element of arr named name, or NULL. */
static json_t *named(json_t *arr, const char *name) {
  size_t i;
  json_t *v;
  json_array_foreach(arr, i, v) {
    const char *n = json_string_value(json_object_get(v, "name"));
    if (n && strcmp(n, name) == 0)
      return v;
  }
  return NULL;
}

/* As named, failing the test when there is none. */
static json_t *by_name(json_t *arr, const char *name) {
  json_t *v = named(arr, name);
  if (!v)
    PP_FAIL("no %s", name);
  return v;
}

/* /api/v1 documents from the same figures: the summary's names and
 * units, each window, errors as JSON with their status. */
PP_TEST(http_api_documents) {
  json_t *d = api_doc("/api/v1/summary", NULL, 200);
  CHECK_STR(json_string_value(json_object_get(d, "schema")),
            "pipeprof.summary");
  CHECK_EQ(json_integer_value(json_object_get(d, "api_version")), 1);
  CHECK_STR(json_string_value(json_object_get(d, "mode")), "trace");
  json_t *live = json_object_get(d, "live");
  CHECK_EQ(json_integer_value(json_object_get(live, "window_s")), 0);
  CHECK_EQ(json_integer_value(json_object_get(live, "as_of_ns")),
           INT64_C(3000000000));
  /* the session: t0 to the last interval's end */
  CHECK_EQ(json_integer_value(json_object_get(d, "wall_ns")),
           INT64_C(2000000000));
  json_t *z = by_name(json_object_get(d, "zones"), "decode");
  CHECK_EQ(json_integer_value(json_object_get(z, "count")), 10);
  CHECK_EQ(json_integer_value(json_object_get(z, "p99_ns")), 1000);
  CHECK_NEAR(json_number_value(json_object_get(z, "total_ns")), 10000, 1e-9);
  CHECK_NEAR(json_number_value(json_object_get(z, "wall_pct")), 5e-4, 1e-12);
  /* the session's histogram: decode's 10 zones of 2^10 .. 2^19 ns, each
   * at the bound equal to it */
  json_t *hc = json_object_get(json_object_get(z, "hist"), "counts");
  json_t *hl = json_object_get(json_object_get(z, "hist"), "le_ns");
  CHECK_EQ(json_array_size(hc), json_array_size(hl));
  CHECK_EQ(json_integer_value(json_array_get(hl, 0)), 1024);
  long long hsum = 0;
  for (size_t i = 0; i < json_array_size(hc); i++)
    hsum += json_integer_value(json_array_get(hc, i));
  CHECK_EQ(hsum, 10);
  json_t *q = by_name(json_object_get(d, "queues"), "q");
  CHECK_EQ(json_integer_value(json_object_get(q, "pushes")), 10);
  CHECK_EQ(
      json_integer_value(json_object_get(json_object_get(q, "wait"), "p50_ns")),
      30000);
  json_t *f = by_name(json_object_get(d, "frames"), "frame");
  CHECK_NEAR(json_number_value(json_object_get(f, "fps")), 30, 1e-9);
  json_t *r = json_object_get(d, "requests");
  CHECK_EQ(json_integer_value(json_object_get(r, "completed")), 10);
  CHECK_EQ(
      json_integer_value(json_object_get(json_object_get(r, "tpot"), "p99_ns")),
      2000000);
  json_t *c = by_name(json_object_get(d, "counters"), "sys.cpu.busy_pct");
  CHECK(json_is_true(json_object_get(c, "library_metric")));
  /* the recent intervals for charts, relative to t0 (1 s) */
  json_t *se = json_object_get(d, "series");
  json_t *zs = by_name(json_object_get(se, "zones"), "decode");
  CHECK_EQ(json_array_size(json_object_get(zs, "t_ns")), 3);
  CHECK_EQ(json_integer_value(json_array_get(json_object_get(zs, "t_ns"), 0)),
           INT64_C(1000000000));
  CHECK_EQ(json_integer_value(json_array_get(json_object_get(zs, "count"), 2)),
           6);
  CHECK_EQ(json_integer_value(json_array_get(json_object_get(zs, "max_ns"), 2)),
           5000);
  json_t *cs = by_name(json_object_get(se, "counters"), "user.count");
  CHECK_NEAR(json_number_value(json_array_get(json_object_get(cs, "value"), 1)),
             5, 0);
  CHECK_NEAR(json_number_value(json_array_get(json_object_get(cs, "min"), 1)),
             3, 0);
  json_t *al = json_array_get(json_object_get(d, "alerts"), 0);
  CHECK_STR(json_string_value(json_object_get(al, "message")),
            "memory 95.0% used <b>");
  json_decref(d);

  /* the last 10 intervals */
  d = api_doc("/api/v1/zones", "10", 200);
  z = by_name(json_object_get(d, "zones"), "decode");
  CHECK_EQ(json_integer_value(json_object_get(z, "count")), 5);
  CHECK_EQ(json_integer_value(
               json_object_get(json_object_get(d, "live"), "window_s")),
           10);
  json_decref(d);
  d = api_doc("/api/v1/live", NULL, 200);
  json_t *s0 = json_array_get(json_object_get(d, "series"), 0);
  CHECK_STR(json_string_value(json_object_get(s0, "kind")), "zone");
  CHECK_EQ(json_integer_value(json_object_get(
               json_object_get(json_object_get(s0, "windows"), "60"), "count")),
           10);
  json_decref(d);
  d = api_doc("/api/v1/system", NULL, 200);
  json_t *m = by_name(json_object_get(d, "metrics"), "proc.rss_bytes");
  CHECK_STR(json_string_value(json_object_get(m, "unit")), "bytes");
  json_decref(d);
  d = api_doc("/api/v1/alerts", NULL, 200);
  CHECK_EQ(json_array_size(json_object_get(d, "alerts")), 1);
  json_decref(d);
  d = api_doc("/api/v1", NULL, 200);
  CHECK(json_array_size(json_object_get(d, "endpoints")) >= 6);
  json_decref(d);
  d = api_doc("/api/v1/zones", "7", 400);
  CHECK(json_string_value(json_object_get(d, "error")) != NULL);
  json_decref(d);
  d = api_doc("/api/v1/../../etc/passwd", NULL, 404);
  json_decref(d);
}
#endif

/* ---- the companion serving a child process ------------------------------- */

/* A port nobody listens on now (the kernel's pick for port 0). */
static int free_port(void) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  CHECK(s >= 0);
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK_EQ(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
  socklen_t sl = sizeof sa;
  CHECK_EQ(getsockname(s, (struct sockaddr *)&sa, &sl), 0);
  close(s);
  return ntohs(sa.sin_port);
}

/* A connection to 127.0.0.1:port, or -1. */
static int dial(int port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  CHECK(s >= 0);
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_port = htons((uint16_t)port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(s, (struct sockaddr *)&sa, sizeof sa) != 0) {
    close(s);
    return -1;
  }
  return s;
}

/* Send req to 127.0.0.1:port and read the reply until the server closes;
 * NULL when no connection. */
static char *http(int port, const char *req, size_t *len) {
  /* the server keeps a connection open for the next request unless the
   * request says close: say it */
  char with_close[4096];
  size_t n = strlen(req);
  if (!strstr(req, "Connection:") && n >= 4 && n + 20 < sizeof with_close &&
      strcmp(req + n - 4, "\r\n\r\n") == 0) {
    snprintf(with_close, sizeof with_close, "%.*sConnection: close\r\n\r\n",
             (int)(n - 2), req);
    req = with_close;
    n = strlen(req);
  }
  int s = dial(port);
  if (s < 0)
    return NULL;
  struct timeval tv = {30, 0};
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  size_t off = 0;
  while (off < n) {
    ssize_t w = send(s, req + off, n - off, MSG_NOSIGNAL);
    if (w <= 0)
      break;
    off += (size_t)w;
  }
  size_t cap = 1 << 16, got = 0;
  char *b = malloc(cap);
  CHECK(b != NULL);
  for (;;) {
    if (got + 4096 > cap) {
      cap *= 2;
      b = realloc(b, cap);
      CHECK(b != NULL);
    }
    ssize_t r = recv(s, b + got, cap - got - 1, 0);
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  b[got] = 0;
  close(s);
  if (len)
    *len = got;
  return b;
}

/* The reply to req, which must start with status (its first line). */
static char *expect(int port, const char *req, const char *status) {
  char *page = http(port, req, NULL);
  if (!page || strncmp(page, status, strlen(status)) != 0)
    PP_FAIL("%.60s...: %.200s, expected %s", req, page ? page : "(nothing)",
            status);
  return page;
}

static const pp_srcloc L_SERVED = {"served", NULL, NULL, 0, PP_KIND_ZONE};

/* In a child: serve a trace-mode session on port (live interval 100 ms,
 * the monotonic clock when asked, samples at sample_hz), its stderr into
 * errpath and its trace in TMP/NAME-PORT.pptrace; exits when it cannot. */
static void child_session(int port, const char *errpath, const char *name,
                          int monotonic, unsigned sample_hz) {
  char spec[32];
  snprintf(spec, sizeof spec, "127.0.0.1:%d", port);
  setenv("PIPEPROF_HTTP", spec, 1);
  if (monotonic)
    setenv("PIPEPROF_CLOCK", "monotonic", 1);
  setenv("PIPEPROF_LIVE", "interval=100ms", 1);
  if (!freopen(errpath, "w", stderr))
    _exit(3);
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.mode = PP_MODE_TRACE;
  static char out[4200];
  snprintf(out, sizeof out, "%s/%s-%d.pptrace", pp_test_tmpdir(), name, port);
  cfg.out_path = out;
  cfg.install_signals = 0;
  cfg.sample_hz = sample_hz;
  if (pp_init(&cfg) != PP_OK)
    _exit(2);
}

/* The child: a session serving on port, 20 zones of 2^12 .. 2^21 ns (two
 * each, times chosen by the test), then it waits to be killed. */
static void child_serve(int port, const char *errpath) {
  child_session(port, errpath, "served", 1, 0);
  int64_t t = pp__mono_ns();
  for (int k = 12; k < 22; k++)
    for (int r = 0; r < 2; r++) {
      pp__test_record(PPT_EV_ZONE_BEGIN, &L_SERVED, (uint64_t)t, 0, 0);
      t += INT64_C(1) << k;
      pp__test_record(PPT_EV_ZONE_END, &L_SERVED, (uint64_t)t, 0, 0);
      t += 10;
    }
  fprintf(stderr, "child recorded\n");
  fflush(stderr);
  for (;;)
    pause();
}

/* A child serving on port (child_serve), its stderr in the test's
 * directory as file; the path in path. */
/* A child process running body(port, path), its stderr into path (n
 * bytes: TMP/file); its pid. */
static pid_t start_child(void (*body)(int, const char *), int port,
                         const char *file, char *path, size_t n) {
  snprintf(path, n, "%s/%s", pp_test_tmpdir(), file);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0)
    body(port, path);
  return pid;
}

static void sleep_100ms(void) {
  struct timespec ts = {0, 100000000};
  nanosleep(&ts, NULL);
}

/* A child's stderr at path once it holds text (a minute at most): the
 * last read (the caller frees it), NULL when none. */
static char *child_said(const char *path, const char *text) {
  char *e = NULL;
  for (int tries = 0; tries < 600; tries++) {
    free(e);
    e = pp_test_slurp(path, NULL);
    if (e && strstr(e, text))
      break;
    sleep_100ms();
  }
  return e;
}

/* GET /metrics on port until the page holds a, b and c (NULL: no more),
 * for a minute at most: the last page (the caller frees it), NULL when
 * none came. */
static char *metrics_until(int port, const char *a, const char *b,
                           const char *c) {
  char *page = NULL;
  for (int tries = 0; tries < 600; tries++) {
    free(page);
    page = http(port,
                "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
                "close\r\n\r\n",
                NULL);
    if (page && strstr(page, a) && (!b || strstr(page, b)) &&
        (!c || strstr(page, c)))
      break;
    sleep_100ms();
  }
  return page;
}

static const char *companion(void) {
  static char path[4200];
  const char *b = getenv("PP_BUILD_DIR");
  snprintf(path, sizeof path, "%s/libpipeprof-http.so.0", b ? b : "build");
  return path;
}

/* The child of the live test: a session serving on port that keeps
 * working until killed: a zone, a frame mark, a queue item, a request of
 * three token chunks 1 ms apart and a counter every 3 ms, sampled at
 * 20 Hz. */
static void child_live(int port, const char *errpath) {
  child_session(port, errpath, "live", 0, 20);
  pp_queue *q = pp_queue_declare("frames <q>", "decode", "infer", 8);
  struct timespec ms = {0, 1000000};
  for (uint64_t i = 1;; i++) {
    pp_request_begin(i);
    PP_ZONE_BEGIN(z, "work <b>");
    /* the consumer waits on the empty queue until the item comes */
    pp_queue_wait_begin(q, PP_QUEUE_EMPTY);
    pp_queue_push(q, i);
    pp_queue_wait_end(q, PP_QUEUE_EMPTY);
    nanosleep(&ms, NULL);
    pp_request_tokens(i, 1);
    pp_queue_pop(q, i);
    nanosleep(&ms, NULL);
    pp_request_tokens(i, 1);
    nanosleep(&ms, NULL);
    pp_request_tokens(i, 1);
    pp_request_end(i, 0);
    pp_frame_mark("frame");
    pp_counter_set("items", (int64_t)i);
    PP_ZONE_END(z);
  }
}

/* The child of the live queue test: a session serving on port with a
 * queue of capacity 2 that fills, stays full, drains and stays empty a
 * few times, then waits for SIGUSR1 to end its session (its trace in
 * TMP/queue-PORT.pptrace). */
static volatile sig_atomic_t queue_child_end;
static void on_usr1(int sig) {
  (void)sig;
  queue_child_end = 1;
}
static void child_queue(int port, const char *errpath) {
  signal(SIGUSR1, on_usr1);
  child_session(port, errpath, "queue", 1, 0);
  pp_queue *q = pp_queue_declare("batches", "decode", "infer", 2);
  struct timespec full = {0, 30000000}, half = {0, 10000000},
                  empty = {0, 20000000};
  for (uint64_t i = 0; i < 5; i++) {
    pp_queue_push(q, 2 * i + 1);
    pp_queue_push(q, 2 * i + 2);
    /* the producer finds it full and waits (a recorded wait: the live
     * blocked time is the report's) */
    pp_queue_wait_begin(q, PP_QUEUE_FULL);
    nanosleep(&full, NULL);
    pp_queue_wait_end(q, PP_QUEUE_FULL);
    pp_queue_pop(q, 2 * i + 1);
    nanosleep(&half, NULL);
    pp_queue_pop(q, 2 * i + 2);
    nanosleep(&empty, NULL);
    pp_counter_set("batch size", (int64_t)i + 1); /* 1..5: mean 3 */
    pp_frame_mark("tick");
  }
  fprintf(stderr, "child recorded\n");
  fflush(stderr);
  while (!queue_child_end)
    pause();
  pp_shutdown();
  _exit(0);
}

/* Read from a stream (/api/v1/stream) until it has held n events; the
 * text read, or NULL. */
static char *stream_events(int port, int n) {
  int s = dial(port);
  if (s < 0)
    return NULL;
  struct timeval tv = {30, 0};
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  /* HTTP/1.0: no chunked encoding to take apart */
  static const char req[] = "GET /api/v1/stream HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  CHECK_EQ(send(s, req, sizeof req - 1, MSG_NOSIGNAL),
           (ssize_t)(sizeof req - 1));
  size_t cap = 1 << 20, got = 0;
  char *b = malloc(cap);
  CHECK(b != NULL);
  b[0] = 0;
  for (;;) {
    int events = 0;
    for (const char *p = strstr(b, "event: snapshot\ndata: "); p;
         p = strstr(p + 1, "event: snapshot\ndata: "))
      if (strstr(p, "\n\n"))
        events++;
    if (events >= n || got + 4096 > cap)
      break;
    ssize_t r = recv(s, b + got, cap - got - 1, 0);
    if (r <= 0)
      break;
    got += (size_t)r;
    b[got] = 0;
  }
  close(s);
  return b;
}

#ifdef PP_HAVE_JANSSON
/* The data of the k-th event in a stream's text, parsed. */
static json_t *stream_event(const char *text, int k) {
  const char *p = text;
  for (int i = 0; i <= k && p; i++) {
    p = strstr(p, "event: snapshot\ndata: ");
    if (p && i < k)
      p++;
  }
  CHECK(p != NULL);
  p += strlen("event: snapshot\n");
  const char *e = strstr(p, "\n\n");
  CHECK(e != NULL);
  /* the data lines joined with newlines, as EventSource does */
  size_t cap = (size_t)(e - p) + 1, n = 0;
  char *joined = malloc(cap);
  CHECK(joined != NULL);
  for (const char *l = p; l < e;) {
    const char *nl = memchr(l, '\n', (size_t)(e - l));
    const char *end = nl ? nl : e;
    CHECK(strncmp(l, "data: ", 6) == 0);
    if (n)
      joined[n++] = '\n';
    memcpy(joined + n, l + 6, (size_t)(end - l - 6));
    n += (size_t)(end - l - 6);
    l = nl ? nl + 1 : e;
  }
  json_error_t err;
  json_t *d = json_loadb(joined, n, 0, &err);
  free(joined);
  if (!d)
    PP_FAIL("event %d is not JSON: %s", k, err.text);
  return d;
}

static uint64_t zone_count(json_t *doc, const char *name) {
  size_t i;
  json_t *v;
  json_array_foreach(json_object_get(doc, "zones"), i, v) {
    if (strcmp(json_string_value(json_object_get(v, "name")), name) == 0)
      return (uint64_t)json_integer_value(json_object_get(v, "count"));
  }
  return 0;
}

/* 1 when the companion is built, and PIPEPROF_HTTP_LIB names it; else 0
 * after a skip line (the test fails instead with PP_REQUIRE_HTTP=1). */
static int companion_ready(void) {
  if (access(companion(), R_OK) != 0) {
    if (required())
      PP_FAIL("%s missing (PP_REQUIRE_HTTP=1)", companion());
    printf("# skipped: no %s\n", companion());
    return 0;
  }
  setenv("PIPEPROF_HTTP_LIB", companion(), 1);
  return 1;
}

/* The companion uses the board only when the library's entries have its
 * own layout: a host whose board_entry_size differs (a library of
 * another build) serves no board figures, rather than misread ones. */
PP_TEST(http_board_of_another_layout_is_not_read) {
  if (!companion_ready())
    return;
  void *lib = dlopen(companion(), RTLD_NOW | RTLD_LOCAL);
  CHECK(lib != NULL);
  pp_http_start_fn start;
  pp_http_stop_fn stop;
  *(void **)&start = dlsym(lib, "pp_http_start");
  *(void **)&stop = dlsym(lib, "pp_http_stop");
  CHECK(start != NULL && stop != NULL);
  for (int other = 0; other < 2; other++) {
    pp_http_host h = fake_host;
    if (other)
      h.board_entry_size = (uint32_t)sizeof(pp__board_entry) + 8;
    int port = free_port();
    char addr[32], err[256];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    CHECK_EQ(start(&h, addr, err, sizeof err), 0);
    char *page = http(port,
                      "GET /api/v1/summary HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      "Connection: close\r\n\r\n",
                      NULL);
    stop();
    CHECK(page != NULL);
    /* the fake board's queue "q" and counter "user.count" */
    if (other) {
      CHECK(strstr(page, "\"user.count\"") == NULL);
      CHECK_CONTAINS(page, "\"queues\":[]");
    } else {
      CHECK_CONTAINS(page, "\"user.count\"");
    }
    free(page);
  }
  dlclose(lib);
}

/* A bounded queue on the live summary (what the live page draws) is the
 * report's: its capacity (not "unbounded"), stages, depth and its shares
 * of time full and empty are the same figures the analysis of the
 * session's trace gives, computed by the same code (stats/depth.h); so
 * are a counter's min, max and mean. */
PP_TEST_T(http_live_queue_is_the_reports, 120) {
  if (!companion_ready())
    return;
  int port = free_port();
  char errpath[4200];
  pid_t pid =
      start_child(child_queue, port, "live-queue.txt", errpath, sizeof errpath);
  json_t *live = NULL, *lq = NULL;
  for (int tries = 0; tries < 600; tries++) {
    char *page = http(port,
                      "GET /api/v1/summary HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      "Connection: close\r\n\r\n",
                      NULL);
    char *body = page ? strstr(page, "\r\n\r\n") : NULL;
    json_decref(live);
    live = body ? json_loads(body + 4, 0, NULL) : NULL;
    free(page);
    lq = live ? named(json_object_get(live, "queues"), "batches") : NULL;
    /* every event in: the last pop, then the last count and mark */
    json_t *tick =
        live ? named(json_object_get(live, "frames"), "tick") : NULL;
    json_t *bs = live ? named(json_object_get(live, "counters"), "batch size")
                      : NULL;
    /* ...and the 4 frame times of the 5 marks in the live histograms
     * (a frame time is counted once its live interval closed: under load
     * the last one came later, and the p50 of 3 is not the p50 of 4) */
    json_int_t times = 0;
    json_t *counts = tick ? json_object_get(json_object_get(tick, "hist"),
                                            "counts")
                          : NULL;
    for (size_t i = 0; i < json_array_size(counts); i++)
      times += json_integer_value(json_array_get(counts, i));
    if (lq && json_integer_value(json_object_get(lq, "pops")) == 10 && tick &&
        json_integer_value(json_object_get(tick, "frames")) == 5 && bs &&
        json_integer_value(json_object_get(bs, "samples")) == 5 && times == 4)
      break;
    sleep_100ms();
  }
  kill(pid, SIGUSR1);
  int st;
  waitpid(pid, &st, 0);
  if (!lq || json_integer_value(json_object_get(lq, "pops")) != 10)
    PP_FAIL("the live summary never had the queue's 10 pops, 5 marks and 5 "
            "counts");
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  char trace[4200];
  snprintf(trace, sizeof trace, "%s/queue-%d.pptrace", pp_test_tmpdir(), port);
  pp_cli_result r = pp_test_cli("export --format json '%s'", trace);
  CHECK_EQ(r.rc, 0);
  json_t *root = json_loads(r.out, 0, NULL);
  CHECK(root != NULL);
  json_t *sq = by_name(json_object_get(root, "queues"), "batches");
  CHECK(sq != NULL);
  CHECK_EQ(json_integer_value(json_object_get(lq, "capacity")), 2);
  /* the session's dropped events, as the summary's (none here) */
  json_t *dr = json_object_get(json_object_get(live, "dropped"), "total");
  CHECK(json_is_integer(dr));
  CHECK_EQ(json_integer_value(dr), 0);
  static const char *const same_int[] = {"capacity", "window_ns", "pushes",
                                         "pops", "full_ns", "empty_ns"};
  for (size_t i = 0; i < sizeof same_int / sizeof *same_int; i++)
    CHECK_EQ(json_integer_value(json_object_get(lq, same_int[i])),
             json_integer_value(json_object_get(sq, same_int[i])));
  CHECK_STR(json_string_value(json_object_get(lq, "from")), "decode");
  CHECK_STR(json_string_value(json_object_get(lq, "to")), "infer");
  static const char *const same_pct[] = {"full_pct", "empty_pct"};
  for (size_t i = 0; i < 2; i++) {
    double a = json_number_value(json_object_get(lq, same_pct[i]));
    CHECK(a > 0);
    CHECK_NEAR(a, json_number_value(json_object_get(sq, same_pct[i])), 1e-9);
  }
  /* the producer's recorded waits: count, blocked time and share, as
   * the report's (5 waits of about 30 ms) */
  CHECK_EQ(json_integer_value(json_object_get(lq, "producer_waits")), 5);
  CHECK_EQ(json_integer_value(json_object_get(lq, "producer_blocked_ns")),
           json_integer_value(json_object_get(sq, "producer_blocked_ns")));
  CHECK_GE(json_integer_value(json_object_get(lq, "producer_blocked_ns")),
           5 * 30000000);
  CHECK_NEAR(json_number_value(json_object_get(lq, "producer_blocked_pct")),
             json_number_value(json_object_get(sq, "producer_blocked_pct")),
             1e-9);
  json_t *ld = json_object_get(lq, "depth"), *sd = json_object_get(sq, "depth");
  CHECK_EQ(json_integer_value(json_object_get(ld, "max")), 2);
  CHECK_NEAR(json_number_value(json_object_get(ld, "mean")),
             json_number_value(json_object_get(sd, "mean")), 1e-9);
  /* a counter's range and mean over the session: the report's */
  json_t *lc = named(json_object_get(live, "counters"), "batch size");
  json_t *sc = named(json_object_get(root, "counters"), "batch size");
  CHECK(lc != NULL && sc != NULL);
  static const char *const same_num[] = {"min", "max", "mean", "last"};
  for (size_t i = 0; i < 4; i++)
    CHECK_NEAR(json_number_value(json_object_get(lc, same_num[i])),
               json_number_value(json_object_get(sc, same_num[i])), 1e-12);
  CHECK_NEAR(json_number_value(json_object_get(lc, "mean")), 3.0, 1e-12);
  /* a frame stream's marks and rate, and its frame times (p50 within the
   * live histograms' 3.1%) with their histogram */
  json_t *lf = named(json_object_get(live, "frames"), "tick");
  json_t *sf = named(json_object_get(root, "frames"), "tick");
  CHECK(lf != NULL && sf != NULL);
  CHECK_EQ(json_integer_value(json_object_get(lf, "frames")), 5);
  CHECK_EQ(json_integer_value(json_object_get(sf, "frames")), 5);
  CHECK_NEAR(json_number_value(json_object_get(lf, "fps")),
             json_number_value(json_object_get(sf, "fps")), 1e-9);
  double lp50 = (double)json_integer_value(json_object_get(lf, "p50_ns"));
  double sp50 = (double)json_integer_value(json_object_get(sf, "p50_ns"));
  if (!(sp50 > 0 && fabs(lp50 - sp50) <= 0.032 * sp50))
    PP_FAIL("frame time p50: live %.0f ns, report %.0f ns (more than the "
            "live histograms' 3.1%% apart)",
            lp50, sp50);
  CHECK(json_is_object(json_object_get(lf, "hist")));
  printf("# full %.2f%%, empty %.2f%% in both\n",
         json_number_value(json_object_get(lq, "full_pct")),
         json_number_value(json_object_get(lq, "empty_pct")));
  json_decref(root);
  json_decref(live);
  pp_cli_result_free(&r);
}


/* A running program's figures through /api/v1 and the stream, and the
 * series beyond zones on /metrics, OpenMetrics when asked. */
PP_TEST_T(http_live_api_stream_and_series, 120) {
  if (!companion_ready())
    return;
  int port = free_port();
  char errpath[4200];
  pid_t pid =
      start_child(child_live, port, "live-stderr.txt", errpath, sizeof errpath);
  /* wait for a summary that has every kind of figure */
  char *page = NULL;
  json_t *d = NULL;
  for (int tries = 0; tries < 600; tries++) {
    free(page);
    json_decref(d);
    d = NULL;
    page = http(port,
                "GET /api/v1/summary HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Connection: close\r\n\r\n",
                NULL);
    char *body = page ? strstr(page, "\r\n\r\n") : NULL;
    if (body && (d = json_loads(body + 4, 0, NULL)) &&
        zone_count(d, "work <b>") > 0 &&
        json_object_get(json_object_get(d, "requests"), "itl") &&
        json_array_size(json_object_get(d, "queues")) > 0 &&
        json_array_size(
            json_object_get(json_object_get(d, "series"), "frames")) > 0)
      break;
    sleep_100ms();
  }
  if (!d || !zone_count(d, "work <b>")) {
    char *e = pp_test_slurp(errpath, NULL);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    PP_FAIL("no live summary: %s\nchild stderr: %s", page ? page : "",
            e ? e : "");
  }
  CHECK_CONTAINS(page, "Content-Type: application/json");
  CHECK_STR(json_string_value(json_object_get(d, "schema")),
            "pipeprof.summary");
  json_t *r = json_object_get(d, "requests");
  /* ITL: each request's chunks are 1 ms of sleep or more apart */
  CHECK(json_integer_value(
            json_object_get(json_object_get(r, "itl"), "p50_ns")) >= 1000000);
  CHECK(json_integer_value(
            json_object_get(json_object_get(r, "tpot"), "count")) > 0);
  json_t *q = json_array_get(json_object_get(d, "queues"), 0);
  CHECK_STR(json_string_value(json_object_get(q, "name")), "frames <q>");
  /* charts' history: frame times of at least the loop's three 1 ms
   * sleeps, the counter rising */
  json_t *se = json_object_get(d, "series");
  json_t *fr = json_array_get(json_object_get(se, "frames"), 0);
  CHECK_STR(json_string_value(json_object_get(fr, "name")), "frame");
  json_t *fp = json_object_get(fr, "frame_ns");
  CHECK(json_array_size(fp) > 0);
  for (size_t i = 0; i < json_array_size(fp); i++)
    CHECK(json_integer_value(json_array_get(fp, i)) == 0 ||
          json_integer_value(json_array_get(fp, i)) >= 3000000);
  CHECK(json_array_size(json_object_get(
            by_name(json_object_get(se, "zones"), "work <b>"), "t_ns")) > 0);
  json_t *items = by_name(json_object_get(se, "counters"), "items");
  json_t *iv = json_object_get(items, "value");
  CHECK(json_array_size(iv) > 0);
  for (size_t i = 1; i < json_array_size(iv); i++)
    CHECK(json_number_value(json_array_get(iv, i)) >=
          json_number_value(json_array_get(iv, i - 1)));
  CHECK(json_integer_value(json_object_get(q, "pushes")) > 0);
  free(page);
  json_decref(d);

  /* the stream: two snapshots, the second with more work in it */
  char *text = stream_events(port, 2);
  CHECK(text != NULL);
  CHECK_CONTAINS(text, "Content-Type: text/event-stream");
  json_t *e0 = stream_event(text, 0), *e1 = stream_event(text, 1);
  uint64_t c0 = zone_count(e0, "work <b>"), c1 = zone_count(e1, "work <b>");
  CHECK(c0 > 0);
  CHECK(c1 > c0);
  json_decref(e0);
  json_decref(e1);
  free(text);

  /* /metrics: frames, queues, requests, the program's counter and the
   * sampler's process figures; OpenMetrics when asked */
  const char *want = "pipeprof_proc_rss_bytes ";
  for (int tries = 0; tries < 600; tries++) {
    page = http(port,
                "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: "
                "application/openmetrics-text;version=1.0.0,text/plain;"
                "q=0.5\r\nConnection: close\r\n\r\n",
                NULL);
    if (page && strstr(page, want))
      break;
    free(page);
    page = NULL;
    sleep_100ms();
  }
  CHECK(page != NULL);
  CHECK_CONTAINS(page, "Content-Type: application/openmetrics-text; "
                       "version=1.0.0");
  CHECK_CONTAINS(page, want);
  CHECK_CONTAINS(page, "pipeprof_frames_total{frame=\"frame\"} ");
  CHECK_CONTAINS(page, "pipeprof_queue_depth{queue=\"frames <q>\"} ");
  CHECK_CONTAINS(page, "pipeprof_queue_wait_seconds_count{queue=\"frames "
                       "<q>\"} ");
  CHECK_CONTAINS(page, "pipeprof_request_itl_seconds_count ");
  CHECK_CONTAINS(page, "pipeprof_program_value{name=\"items\"} ");
  CHECK_CONTAINS(page, "\n# EOF\n");
  free(page);

  /* Hostile clients while the program records: as many idle connections
   * as the server holds do not keep a new client out: once it is
   * crowded, those that asked nothing give way (src/http/guard.h), which
   * the page counts; a client that stops in the middle of its request
   * head is closed by the server (10 s without traffic). */
  int idle[64];
  for (int i = 0; i < 64; i++)
    CHECK((idle[i] = dial(port)) >= 0);
  page = http(port, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", NULL);
  CHECK(page != NULL);
  CHECK(strncmp(page, "HTTP/1.1 200", 12) == 0);
  const char *moved = strstr(page, "\npipeprof_http_connections_displaced_total ");
  CHECK(moved != NULL);
  CHECK_GT(strtod(moved + 43, NULL), 0);
  free(page);
  for (int i = 0; i < 64; i++)
    close(idle[i]);
  page = NULL;
  for (int tries = 0; tries < 600 && !page; tries++) {
    page = http(port,
                "GET /api/v1/summary HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Connection: close\r\n\r\n",
                NULL);
    if (page && strncmp(page, "HTTP/1.1 200", 12) != 0) {
      free(page);
      page = NULL;
    }
    if (!page)
      sleep_100ms();
  }
  CHECK(page != NULL);
  int slow = dial(port);
  CHECK(slow >= 0);
  CHECK_EQ(send(slow, "GET /metrics HTTP/1.1\r\nHo", 26, MSG_NOSIGNAL), 26);
  char *body = strstr(page, "\r\n\r\n");
  json_t *before = body ? json_loads(body + 4, 0, NULL) : NULL;
  CHECK(before != NULL);
  free(page);
  char c;
  struct timeval tv = {60, 0};
  setsockopt(slow, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  int64_t t_slow = pp__mono_ns();
  ssize_t got = recv(slow, &c, 1, 0);
  int e = errno;
  /* closed by the server (an orderly close, or a reset), not by the 60 s
   * bound */
  double waited = (double)(pp__mono_ns() - t_slow) * 1e-9;
  if (!(got == 0 || (got < 0 && e == ECONNRESET)))
    PP_FAIL("slow client: recv %zd (%s) after %.1f s", got, strerror(e),
            waited);
  printf("# the slow client was closed after %.1f s\n", waited);
  close(slow);
  /* and the recording went on, losing nothing */
  uint64_t c_before = zone_count(before, "work <b>");
  json_decref(before);
  page = http(port,
              "GET /api/v1/summary HTTP/1.1\r\nHost: 127.0.0.1\r\n"
              "Connection: close\r\n\r\n",
              NULL);
  CHECK(page != NULL);
  body = strstr(page, "\r\n\r\n");
  json_t *after = body ? json_loads(body + 4, 0, NULL) : NULL;
  CHECK(after != NULL);
  if (zone_count(after, "work <b>") <= c_before)
    PP_FAIL("zones %llu then %llu: %s", (unsigned long long)c_before,
            (unsigned long long)zone_count(after, "work <b>"), body);
  json_decref(after);
  free(page);
  page = http(port,
              "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
              "Connection: close\r\n\r\n",
              NULL);
  CHECK(page != NULL);
  CHECK_CONTAINS(page, "pipeprof_dropped_events_total 0\n");
  free(page);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}
#endif

/* `pipeprof run --http`: an unmodified program's samples served live by
 * pipeprof's own session; a bad address is a usage error. */
/* The count in the rendered zone table's row of a zone (its name as the
 * DOM serializer writes text), or -1 when there is no such row. */
static long long dom_zone_count(const char *dom, const char *escaped) {
  char cell[600];
  snprintf(cell, sizeof cell,
           "<td class=\"pp-t pp-name\" data-k=\"name\">%s</td>", escaped);
  const char *table = dom ? strstr(dom, "id=\"pp-zone-table\"") : NULL;
  const char *row = table ? strstr(table, cell) : NULL;
  const char *end = row ? strstr(row, "</tr>") : NULL;
  const char *c = row ? strstr(row, "data-k=\"count\">") : NULL;
  if (!c || c > end)
    return -1;
  return atoll(c + strlen("data-k=\"count\">"));
}

/* The live page at / in real headless Chromium, served by a running
 * program: it renders from /api/v1/summary and the stream, names with
 * markup stay text, and two looks a while apart show the figures grown.
 * A screenshot of it is a test artifact
 * (<build>/test-artifacts/http/live-page.png). */
PP_TEST_T(http_live_page_in_chromium, 240) {
  if (access(companion(), R_OK) != 0) {
    if (required())
      PP_FAIL("%s missing (PP_REQUIRE_HTTP=1)", companion());
    printf("# skipped: no %s\n", companion());
    return;
  }
  const char *chromium = pp_test_chromium();
  if (!chromium)
    return;
  setenv("PIPEPROF_HTTP_LIB", companion(), 1);
  int port = free_port();
  char errpath[4200];
  pid_t pid =
      start_child(child_live, port, "live-page.txt", errpath, sizeof errpath);
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
  /* the first look, once the program's zones are in a closed interval */
  long long first = -1;
  char *dom = NULL;
  for (int tries = 0; tries < 60 && first <= 0; tries++) {
    free(dom);
    dom = pp_test_chromium_dom(chromium, url, "--timeout=3000");
    first = dom_zone_count(dom, "work &lt;b&gt;");
  }
  if (first <= 0) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    PP_FAIL("the live page shows no zone 'work <b>': %.3000s", dom);
  }
  CHECK_CONTAINS(dom, " data-rendered=\"ok\"");
  CHECK(strstr(dom, "id=\"pp-render-error\"") == NULL);
  CHECK_CONTAINS(dom, "id=\"pp-live-status\"");
  CHECK_CONTAINS(dom, "live · updated");
  /* markup in names is text, never elements */
  CHECK(strstr(dom, "<b>") == NULL);
  CHECK(strstr(dom, "<q>") == NULL);
  CHECK_CONTAINS(dom, "frames &lt;q&gt;");
  /* no raw field tables ("left out: sites 0", "other: api_version 1") */
  /* (the class of a section, not the page's script that names it) */
  CHECK(strstr(dom, "pp-generic\"") == NULL);
  CHECK(strstr(dom, ">api_version<") == NULL);
  free(dom);
  /* a second look: the program went on, so have the figures */
  long long second = first;
  for (int tries = 0; tries < 60 && second <= first; tries++) {
    sleep_100ms();
    dom = pp_test_chromium_dom(chromium, url, "--timeout=3000");
    second = dom_zone_count(dom, "work &lt;b&gt;");
    free(dom);
  }
  CHECK(second > first);
  printf("# the live page: %lld zones, then %lld\n", first, second);
  /* the screenshot */
  char art[4200], png[4300], profile[4300], log[4300];
  snprintf(art, sizeof art, "%s/test-artifacts/http", pp_test_bindir());
  char *out = NULL;
  pp_test_run(&out, "mkdir -p '%s'", art);
  free(out);
  snprintf(png, sizeof png, "%s/live-page.png", art);
  snprintf(profile, sizeof profile, "%s/chromium-shot", pp_test_tmpdir());
  snprintf(log, sizeof log, "%s/chromium-shot.log", pp_test_tmpdir());
  remove(png);
  int rc = pp_test_run(&out,
                       "timeout 90 '%s' --headless --no-sandbox --disable-gpu "
                       "--disable-dev-shm-usage --no-first-run "
                       "--hide-scrollbars --window-size=1280,2400 "
                       "--timeout=4000 --user-data-dir='%s' "
                       "--screenshot='%s' '%s' 2>'%s'",
                       chromium, profile, png, url, log);
  free(out);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  CHECK_EQ(rc, 0);
  CHECK(access(png, R_OK) == 0);
  printf("# screenshot: %s\n", png);
}

/* One look at a live page: a zone's count, a queue's items in (the first
 * figure of its cell), a sampled counter's samples and the live status,
 * as JSON text (cdp.h). */
static const char LOOK_JS[] =
    "(function () {\n"
    "  function cell(sel, name, k) {\n"
    "    var rows = document.querySelectorAll(sel + ' tr');\n"
    "    for (var i = 0; i < rows.length; i++) {\n"
    "      var n = rows[i].querySelector('[data-k=\"name\"]');\n"
    "      if (n && (n.textContent === name ||\n"
    "                n.textContent.indexOf(name + ' (') === 0)) {\n"
    "        var c = rows[i].querySelector('[data-k=\"' + k + '\"]');\n"
    "        return c ? c.textContent : null;\n"
    "      }\n"
    "    }\n"
    "    return null;\n"
    "  }\n"
    "  var r = document.querySelector('[data-rendered]');\n"
    "  var st = document.getElementById('pp-live-status');\n"
    "  var b = document.getElementById('pp-live-banner');\n"
    "  return JSON.stringify({\n"
    "    rendered: r ? r.getAttribute('data-rendered') : null,\n"
    "    status: st ? st.textContent : null,\n"
    "    banner: b && !b.hidden ? b.textContent : '',\n"
    "    zone: cell('#pp-zones', ZONE, 'count'),\n"
    "    queue: cell('#pp-queues', QUEUE, 'pushes'),\n"
    "    samples: cell('#pp-counters', COUNTER, 'samples')\n"
    "  });\n"
    "})()";

typedef struct look {
  long long zone, queue_items, samples;
  char status[128];
} look;

/* A look at the page in c: its figures, or a failed test when the page
 * did not render, shows the disconnected banner, or lacks one. */
static look look_at(pp_cdp *c, const char *zone, const char *queue,
                    const char *counter) {
  char js[sizeof LOOK_JS + 1024];
  char defs[512];
  snprintf(defs, sizeof defs, "var ZONE = '%s', QUEUE = '%s', COUNTER = '%s';",
           zone, queue, counter);
  snprintf(js, sizeof js, "(function () { %s return %s; })()", defs, LOOK_JS);
  look l = {-1, -1, -1, ""};
  char last[1024] = "(nothing)";
  for (int tries = 0; tries < 300; tries++) {
    char *text = pp_cdp_eval(c, js);
    if (text)
      snprintf(last, sizeof last, "%s", text);
    json_t *j = text ? json_loads(text, 0, NULL) : NULL;
    const char *z = json_string_value(json_object_get(j, "zone"));
    const char *q = json_string_value(json_object_get(j, "queue"));
    const char *n = json_string_value(json_object_get(j, "samples"));
    const char *st = json_string_value(json_object_get(j, "status"));
    const char *banner = json_string_value(json_object_get(j, "banner"));
    if (banner && banner[0])
      PP_FAIL("the live page says: %s", banner);
    if (z && q && n && st) {
      l.zone = atoll(z);
      l.queue_items = atoll(q); /* "items in / out" */
      l.samples = atoll(n);
      snprintf(l.status, sizeof l.status, "%s", st);
      CHECK_STR(json_string_value(json_object_get(j, "rendered")), "ok");
      json_decref(j);
      free(text);
      return l;
    }
    json_decref(j);
    free(text);
    sleep_100ms();
  }
  PP_FAIL("the live page never showed zone %s, queue %s and counter %s: %s",
          zone, queue, counter, last);
  return l;
}

/* `pipeprof run -q --hz 20 --http PORT -o TMP/NAME -- CMD` started in a
 * process group of its own (output in TMP/NAME.out); its pid. */
static pid_t start_run_http(int port, const char *name, const char *cmd_) {
  const char *b = getenv("PP_BUILD_DIR");
  char cmd[8400];
  snprintf(cmd, sizeof cmd,
           "'%s/pipeprof' run -q --hz 20 --http %d -o '%s/%s' -- %s "
           "> '%s/%s.out' 2>&1",
           b ? b : "build", port, pp_test_tmpdir(), name, cmd_,
           pp_test_tmpdir(), name);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    setpgid(0, 0);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  return pid;
}

/* A live page watched in Chromium (cdp.h): what to read on it. */
typedef struct watched {
  const char *url, *zone, *queue, *counter, *png;
  pp_cdp *c;
  look prev;
} watched;

/* Hold the live pages open for two minutes, each in one connection,
 * looking at each every 5 s: each look shows more of its zone, of the
 * items into its queue and of its counter's samples than the one before, and
 * the page stays connected (live, no banner). A screenshot of each at
 * the end is a test artifact. */
static void watch_live_pages(const char *chromium, watched *w, size_t n) {
  for (size_t k = 0; k < n; k++) {
    w[k].c = pp_cdp_open(chromium, w[k].url);
    w[k].prev = look_at(w[k].c, w[k].zone, w[k].queue, w[k].counter);
  }
  struct timespec five = {5, 0};
  for (int i = 0; i < 24; i++) {
    nanosleep(&five, NULL);
    for (size_t k = 0; k < n; k++) {
      look l = look_at(w[k].c, w[k].zone, w[k].queue, w[k].counter);
      look p = w[k].prev;
      if (!(l.zone > p.zone && l.queue_items > p.queue_items &&
            l.samples > p.samples))
        PP_FAIL("%s: look %d, 5 s after the one before, shows no change: "
                "zone %lld -> %lld, queue items in %lld -> %lld, samples %lld "
                "-> %lld",
                w[k].png, i + 1, p.zone, l.zone, p.queue_items,
                l.queue_items, p.samples, l.samples);
      CHECK_CONTAINS(l.status, "live");
      w[k].prev = l;
    }
  }
  char art[4200], shot[4400];
  snprintf(art, sizeof art, "%s/test-artifacts/http", pp_test_bindir());
  char *out = NULL;
  pp_test_run(&out, "mkdir -p '%s'", art);
  free(out);
  for (size_t k = 0; k < n; k++) {
    snprintf(shot, sizeof shot, "%s/%s", art, w[k].png);
    pp_cdp_screenshot(w[k].c, shot);
    printf("# %s: 25 looks 5 s apart, the last: zone %s %lld, queue %s "
           "items in %lld, %s samples %lld; screenshot %s\n",
           w[k].png, w[k].zone, w[k].prev.zone, w[k].queue,
           w[k].prev.queue_items, w[k].counter, w[k].prev.samples, shot);
    pp_cdp_close(w[k].c);
  }
}

static pid_t run_group;
static void end_run_group(void) {
  if (run_group > 0)
    kill(-run_group, SIGKILL);
}

/* The live page of a program (its own endpoint, in-process sampling) and
 * that of `pipeprof run --http` over the example pipeline (the program's
 * zones and queues from its endpoint, the run's samples), watched
 * together: zones, queues and system samples change between looks 5 s
 * apart, connected for two minutes. */
PP_TEST_T(http_live_pages_for_two_minutes, 300) {
  if (!companion_ready())
    return;
  const char *chromium = pp_test_chromium();
  if (!chromium)
    return;
  unsetenv("PIPEPROF_HTTP");
  int port = free_port();
  char errpath[4200];
  pid_t child =
      start_child(child_live, port, "live-2min.txt", errpath, sizeof errpath);
  char url[64], run_url[64], prog[4200];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
  int run_port = free_port();
  while (run_port == port)
    run_port = free_port();
  snprintf(prog, sizeof prog,
           "'%s/pipeprof-example-pipeline' --frames 100000 --fps 50 --quiet",
           pp_test_bindir());
  pid_t run = start_run_http(run_port, "run-2min", prog);
  run_group = run; /* in its own process group: ended at exit, failed or not */
  atexit(end_run_group);
  snprintf(run_url, sizeof run_url, "http://127.0.0.1:%d/", run_port);
  watched w[2] = {
      {url, "work <b>", "frames <q>", "proc.rss_bytes",
       "live-page-program.png", NULL, {0, 0, 0, ""}},
      {run_url, "detect", "source->preprocess", "proc.rss_bytes",
       "live-page-run.png", NULL, {0, 0, 0, ""}}};
  watch_live_pages(chromium, w, 2);
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  kill(-run, SIGINT);
  waitpid(run, NULL, 0);
  run_group = 0;
}

PP_TEST_T(http_run_serves_an_unmodified_programs_samples, 120) {
  if (access(companion(), R_OK) != 0) {
    if (required())
      PP_FAIL("%s missing (PP_REQUIRE_HTTP=1)", companion());
    printf("# skipped: no %s\n", companion());
    return;
  }
  pp_cli_result r = pp_test_cli("run --http 127.0.0.1:99999 -- true");
  CHECK_ONE_LINE_ERROR_FROM(r, 2, "bad --http address '127.0.0.1:99999'");
  pp_cli_result_free(&r);
  setenv("PIPEPROF_HTTP_LIB", companion(), 1);
  int port = free_port();
  pid_t pid = start_run_http(port, "run-http", "sleep 30");
  const char *want = "pipeprof_proc_rss_bytes ";
  char *page = metrics_until(port, want,
                             "pipeprof_sys_cpu_busy_ratio{cpu=\"all\"} ", NULL);
  /* the live summary is about sleep, as of its last sample */
  char *summary = http(port,
                       "GET /api/v1/summary HTTP/1.1\r\nHost: "
                       "127.0.0.1\r\nConnection: close\r\n\r\n",
                       NULL);
  kill(-pid, SIGINT);
  int st;
  waitpid(pid, &st, 0);
  if (!page || !strstr(page, want))
    PP_FAIL("no samples on /metrics: %s", page ? page : "(no connection)");
  CHECK_CONTAINS(page, "pipeprof_sys_cpu_busy_ratio{cpu=\"all\"} ");
  CHECK_CONTAINS(page, "pipeprof_proc_threads ");
  /* sleep records nothing and serves nothing: said, and no zone family */
  CHECK_CONTAINS(page, "\npipeprof_program_up 0\n");
  CHECK(strstr(page, "pipeprof_zone_duration_seconds") == NULL);
  char *body = strstr(page, "\r\n\r\n");
  CHECK(body != NULL);
  promtool_clean(body + 4, strlen(body + 4));
  free(page);
  CHECK(summary != NULL && strstr(summary, "\r\n\r\n"));
  json_t *d = json_loads(strstr(summary, "\r\n\r\n") + 4, 0, NULL);
  CHECK(d != NULL);
  json_t *proc = json_object_get(d, "process");
  CHECK_STR(json_string_value(json_object_get(proc, "name")), "sleep");
  CHECK(json_integer_value(json_object_get(proc, "pid")) != (json_int_t)pid);
  CHECK_STR(json_string_value(
                json_object_get(json_object_get(d, "profiler"), "name")),
            "pipeprof");
  /* the header every view lays out: the program, then pipeprof */
  json_t *hd = json_object_get(d, "header");
  CHECK_STR(json_string_value(json_object_get(hd, "process")), "sleep");
  CHECK_STR(json_string_value(json_object_get(hd, "profiler")), "pipeprof");
  CHECK_EQ(json_integer_value(json_object_get(hd, "profiler_pid")),
           json_integer_value(
               json_object_get(json_object_get(d, "profiler"), "pid")));
  CHECK(json_integer_value(json_object_get(
            json_object_get(d, "live"), "as_of_ns")) >
        json_integer_value(json_object_get(d, "t0_ns")));
  json_decref(d);
  free(summary);
}

/* No "# TYPE name" twice in a page. */
static void families_once(const char *page) {
  for (const char *t = strstr(page, "# TYPE "); t;
       t = strstr(t + 1, "# TYPE ")) {
    const char *e = strchr(t + 7, ' ');
    CHECK(e != NULL);
    char fam[256];
    size_t n = (size_t)(e - t) + 1 < sizeof fam ? (size_t)(e - t) + 1 : 0;
    CHECK(n > 0);
    memcpy(fam, t, n); /* "# TYPE name " */
    fam[n] = 0;
    if (strstr(t + 1, fam))
      PP_FAIL("family twice: %s", fam);
  }
}

/* `pipeprof run --http` of an instrumented program: one scrape has the
 * program's zones (from its own endpoint, on a free loopback port) and the
 * run's samples, each family once, promtool clean in both formats; the
 * program's /api/v1 documents under /program. */
PP_TEST_T(http_run_merges_the_programs_own_endpoint, 120) {
  if (!companion_ready())
    return;
  unsetenv("PIPEPROF_HTTP");
  int port = free_port();
  char prog[4200];
  snprintf(prog, sizeof prog, "'%s/pipeprof-example-pipeline' --frames 100000",
           pp_test_bindir());
  pid_t pid = start_run_http(port, "run-http-prog", prog);
  char *om = NULL, *zones = NULL, *stream = NULL;
  char *page =
      metrics_until(port, "pipeprof_program_up 1",
                    "pipeprof_zone_duration_seconds_count{zone=\"detect\"}",
                    "pipeprof_proc_rss_bytes ");
  om = http(port,
            "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: "
            "application/openmetrics-text; version=1.0.0\r\nConnection: "
            "close\r\n\r\n",
            NULL);
  zones = http(port,
               "GET /program/api/v1/zones?window=0 HTTP/1.1\r\nHost: "
               "127.0.0.1\r\nConnection: close\r\n\r\n",
               NULL);
  stream = http(port,
                "GET /program/api/v1/stream HTTP/1.1\r\nHost: "
                "127.0.0.1\r\nConnection: close\r\n\r\n",
                NULL);
  char *summary = http(port,
                       "GET /api/v1/summary HTTP/1.1\r\nHost: "
                       "127.0.0.1\r\nConnection: close\r\n\r\n",
                       NULL);
  kill(-pid, SIGINT);
  int st;
  waitpid(pid, &st, 0);
  if (!page || !strstr(page, "pipeprof_program_up 1"))
    PP_FAIL("the program's figures never came: %s",
            page ? page : "(no connection)");
  CHECK_CONTAINS(page, "pipeprof_zone_duration_seconds_bucket{zone=\"detect\"");
  CHECK_CONTAINS(page, "pipeprof_queue_depth{queue=");
  CHECK_CONTAINS(page, "pipeprof_proc_rss_bytes ");
  CHECK_CONTAINS(page, "pipeprof_build_info{");
  families_once(page);
  char *body = strstr(page, "\r\n\r\n");
  CHECK(body != NULL);
  promtool_clean(body + 4, strlen(body + 4));
  CHECK(om != NULL);
  families_once(om);
  char *eof = strstr(om, "# EOF\n");
  CHECK(eof != NULL && strstr(eof + 1, "# EOF") == NULL && eof[6] == '\0');
  CHECK_CONTAINS(om, "pipeprof_program_up 1");
  CHECK(zones != NULL);
  CHECK_CONTAINS(zones, "200 OK");
  CHECK_CONTAINS(zones, "\"schema\":\"pipeprof.zones\"");
  CHECK_CONTAINS(zones, "\"name\":\"detect\"");
  CHECK(stream != NULL);
  CHECK_CONTAINS(stream, "404");
  CHECK_CONTAINS(stream, "not passed on");
  /* the live summary (what the live page draws) is the program's, with
   * the run's samples: its zones and queues, the tree's and the system's
   * counters and their histories, pipeprof as the profiler */
  CHECK(summary != NULL && strstr(summary, "\r\n\r\n"));
  json_error_t jerr;
  json_t *d = json_loads(strstr(summary, "\r\n\r\n") + 4, 0, &jerr);
  if (!d)
    PP_FAIL("the run's summary is not JSON: %s: %.300s", jerr.text, summary);
  CHECK_STR(json_string_value(json_object_get(d, "schema")),
               "pipeprof.summary");
  CHECK_STR(json_string_value(json_object_get(
                   json_object_get(d, "process"), "name")),
               "pipeprof-example-pipeline");
  CHECK_STR(json_string_value(json_object_get(
                   json_object_get(d, "profiler"), "name")),
               "pipeprof");
  CHECK(by_name(json_object_get(d, "zones"), "detect") != NULL);
  CHECK(json_array_size(json_object_get(d, "queues")) > 0);
  CHECK(by_name(json_object_get(d, "counters"), "proc.rss_bytes") != NULL);
  json_t *ser = json_object_get(json_object_get(d, "series"), "counters");
  CHECK(by_name(ser, "proc.rss_bytes") != NULL);
  json_t *t = json_object_get(by_name(ser, "proc.rss_bytes"), "t_ns");
  for (size_t i = 0; i < json_array_size(t); i++)
    CHECK(json_integer_value(json_array_get(t, i)) > 0);
  int64_t t0 = json_integer_value(json_object_get(d, "t0_ns"));
  int64_t as_of = json_integer_value(
      json_object_get(json_object_get(d, "live"), "as_of_ns"));
  CHECK(as_of > t0);
  CHECK_EQ(json_integer_value(json_object_get(d, "wall_ns")),
           json_integer_value(json_object_get(d, "t1_ns")) - t0);
  json_decref(d);
  free(summary);
  free(page);
  free(om);
  free(zones);
  free(stream);
}

/* A program's endpoint that is not a pipeprof one keeping to the program's
 * scope (here Python's file server with a file named "metrics" holding
 * another page's families, at the address the user gave in PIPEPROF_HTTP,
 * which wins): its page is left out, pipeprof_program_up says 0, and no
 * family comes twice. */
PP_TEST_T(http_run_leaves_out_a_page_without_the_programs_scope, 120) {
  if (!companion_ready())
    return;
  char dir[4200], file[4300];
  snprintf(dir, sizeof dir, "%s/fake-program", pp_test_tmpdir());
  mkdir(dir, 0755);
  snprintf(file, sizeof file, "%s/metrics", dir);
  FILE *f = fopen(file, "w");
  CHECK(f != NULL);
  fputs("# TYPE pipeprof_build_info gauge\npipeprof_build_info{version=\"x\"} "
        "1\n",
        f);
  fclose(f);
  int port = free_port(), prog = free_port();
  while (prog == port)
    prog = free_port();
  char env[64], cmd[4600];
  snprintf(env, sizeof env, "127.0.0.1:%d", prog);
  setenv("PIPEPROF_HTTP", env, 1);
  snprintf(cmd, sizeof cmd,
           "/usr/bin/python3 -m http.server %d --bind 127.0.0.1 "
           "--directory '%s'",
           prog, dir);
  pid_t pid = start_run_http(port, "run-http-fake", cmd);
  unsetenv("PIPEPROF_HTTP");
  char *page = NULL, *fake = NULL;
  for (int tries = 0; tries < 600; tries++) {
    free(fake);
    fake = http(prog, "GET /metrics HTTP/1.0\r\n\r\n", NULL);
    if (fake && strstr(fake, "200 OK"))
      break;
    sleep_100ms();
  }
  page = metrics_until(port, "pipeprof_proc_rss_bytes ", NULL, NULL);
  kill(-pid, SIGINT);
  int st;
  waitpid(pid, &st, 0);
  CHECK(fake != NULL);
  CHECK_CONTAINS(fake, "version=\"x\""); /* it was there to be taken */
  CHECK(page != NULL);
  CHECK_CONTAINS(page, "\npipeprof_program_up 0\n");
  CHECK(strstr(page, "version=\"x\"") == NULL);
  families_once(page);
  free(page);
  free(fake);
}

/* The worker of the served trace: zones of 2^12 .. 2^21 ns, two each. */
static void *served_zones(void *arg) {
  const tb_worker *w = arg;
  int64_t t = w->base;
  for (int k = 12; k < 22; k++)
    for (int r = 0; r < 2; r++) {
      tb_rec(PPT_EV_ZONE_BEGIN, &L_SERVED, t, 0, 0);
      t += INT64_C(1) << k;
      tb_rec(PPT_EV_ZONE_END, &L_SERVED, t, 0, 0);
      t += 10;
    }
  return NULL;
}

/* Start `pipeprof serve` of trace on a free port (its stderr in the
 * test's directory as errname) and wait until it answers; the port, *pid
 * the child to stop with SIGINT. */
static int start_serve(const char *trace, const char *errname, pid_t *pid) {
  int port = free_port();
  const char *b = getenv("PP_BUILD_DIR");
  char cmd[8400];
  snprintf(cmd, sizeof cmd,
           "exec '%s/pipeprof' serve --http %d '%s' 2> '%s/%s'",
           b ? b : "build", port, trace, pp_test_tmpdir(), errname);
  *pid = fork();
  CHECK(*pid >= 0);
  if (*pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  for (int tries = 0; tries < 600; tries++) {
    int s = dial(port);
    if (s >= 0) {
      close(s);
      return port;
    }
    sleep_100ms();
  }
  PP_FAIL("pipeprof serve did not answer on port %d", port);
  return port;
}

/* `pipeprof serve`: a finished trace's report at /, its summary, and its
 * zones on /metrics with the same buckets as a running session's. */
PP_TEST_T(http_serve_a_finished_trace, 120) {
  if (!companion_ready())
    return;
  char trace[4200];
  snprintf(trace, sizeof trace, "%s/served.pptrace", pp_test_tmpdir());
  setenv("PIPEPROF_CLOCK", "monotonic", 1); /* ticks are ns */
  tb_record_threads(trace, 1, served_zones, pp__mono_ns());
  unsetenv("PIPEPROF_CLOCK");
  pp_cli_result r = pp_test_cli("serve --http 1.2.3:80 '%s'", trace);
  CHECK_ONE_LINE_ERROR_FROM(r, 2, "bad --http address");
  pp_cli_result_free(&r);
  r = pp_test_cli("serve '%s/nothing-here'", pp_test_tmpdir());
  CHECK_EQ(r.rc, 1);
  pp_cli_result_free(&r);
  pid_t pid;
  int port = start_serve(trace, "serve.err", &pid);
  char *page = http(
      port, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", NULL);
  CHECK(page != NULL);
  CHECK(strncmp(page, "HTTP/1.1 200", 12) == 0);
  CHECK_CONTAINS(page, "Content-Type: text/html");
  CHECK_CONTAINS(page, "<!DOCTYPE html>");
  free(page);
  page = expect(port,
                "GET /api/v1/summary HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
                "close\r\n\r\n",
                "HTTP/1.1 200");
  CHECK_CONTAINS(page, "\"schema\":\"pipeprof.summary\"");
  CHECK_CONTAINS(page, "\"name\":\"served\"");
  free(page);
  page = expect(port,
                "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
                "close\r\n\r\n",
                "HTTP/1.1 200");
  /* the trace's histogram is finer than the live one: a zone of exactly
   * 2^k ns is counted at le = 2^k ns */
  CHECK_CONTAINS(page, "zone=\"served\",le=\"2.048e-06\"} 0\n");
  CHECK_CONTAINS(page, "zone=\"served\",le=\"4.096e-06\"} 2\n");
  CHECK_CONTAINS(page, "zone=\"served\",le=\"8.192e-06\"} 4\n");
  CHECK_CONTAINS(page, "zone=\"served\",le=\"0.001048576\"} 18\n");
  CHECK_CONTAINS(page, "zone=\"served\",le=\"0.002097152\"} 20\n");
  char *body = strstr(page, "\r\n\r\n");
  CHECK(body != NULL);
  promtool_clean(body + 4, strlen(body + 4));
  free(page);
  page = expect(port,
                "GET /api/v1/zones HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
                "close\r\n\r\n",
                "HTTP/1.1 200");
  CHECK_CONTAINS(page, "\"count\":20");
  free(page);
  kill(pid, SIGINT);
  int st = 0;
  waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

PP_TEST_T(http_endpoint_serves_a_profiled_process, 120) {
  if (access(companion(), R_OK) != 0) {
    if (required())
      PP_FAIL("%s missing (PP_REQUIRE_HTTP=1): libmicrohttpd-dev?",
              companion());
    printf("# skipped: no %s (built without libmicrohttpd)\n", companion());
    return;
  }
  setenv("PIPEPROF_HTTP_LIB", companion(), 1);
  int port = free_port();
  char errpath[4200];
  pid_t pid = start_child(child_serve, port, "child-stderr.txt", errpath,
                          sizeof errpath);
  /* the page, once the child's zones are in a closed interval (waiting is
   * no timing assertion: only a failure waits the whole minute) */
  char *page = NULL;
  size_t len = 0;
  const char *want =
      "pipeprof_zone_duration_seconds_count{zone=\"served\"} 20\n";
  for (int tries = 0; tries < 600; tries++) {
    free(page);
    page = http(port,
                "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Connection: close\r\n\r\n",
                &len);
    if (page && strstr(page, want))
      break;
    sleep_100ms();
  }
  if (!page || !strstr(page, want)) {
    char *e = pp_test_slurp(errpath, NULL);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    PP_FAIL("no zones on /metrics: %s\nchild stderr: %s",
            page ? page : "(no connection)", e ? e : "");
  }
  CHECK(strncmp(page, "HTTP/1.1 200", 12) == 0);
  CHECK_CONTAINS(page, "Content-Type: text/plain; version=0.0.4");
  /* 2^12 .. 2^21 ns, two each: a power-of-two bound holds the zones up to
   * it (a zone of exactly 2^k ns is in the bucket starting there) */
  CHECK_CONTAINS(page, "zone=\"served\",le=\"4.096e-06\"} 0\n");
  CHECK_CONTAINS(page, "zone=\"served\",le=\"8.192e-06\"} 2\n");
  CHECK_CONTAINS(page, "zone=\"served\",le=\"0.002097152\"} 18\n");
  CHECK_CONTAINS(page, "zone=\"served\",le=\"0.004194304\"} 20\n");
  CHECK_CONTAINS(page, "pipeprof_dropped_events_total 0\n");
  char *body = strstr(page, "\r\n\r\n");
  CHECK(body != NULL);
  promtool_clean(body + 4, strlen(body + 4));
  free(page);

  /* HEAD: the head alone */
  page = expect(port,
                "HEAD /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
                "close\r\n\r\n",
                "HTTP/1.1 200");
  CHECK(strstr(page, "pipeprof_build_info") == NULL);
  free(page);
  /* other methods and paths are refused */
  page = expect(port,
                "POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
                "3\r\nConnection: close\r\n\r\nabc",
                "HTTP/1.1 405");
  CHECK_CONTAINS(page, "Allow: GET, HEAD");
  free(page);
  page = expect(port,
                "GET /etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
                "close\r\n\r\n",
                "HTTP/1.1 404");
  free(page);
  /* a request head past the 16 KiB a connection may hold: refused or
   * closed, never served */
  size_t big = 64 * 1024;
  char *req = malloc(big + 256);
  CHECK(req != NULL);
  int k = snprintf(req, 256, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ");
  memset(req + k, 'a', big);
  strcpy(req + k + big, "\r\nConnection: close\r\n\r\n");
  page = http(port, req, &len);
  free(req);
  CHECK(!page || strncmp(page, "HTTP/1.1 200", 12) != 0);
  free(page);
  /* and the server still answers */
  page = http(port,
              "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
              "close\r\n\r\n",
              &len);
  CHECK(page && strstr(page, want));
  free(page);

  /* a second process asking for the same port: one line, and it records
   * on without HTTP */
  char errpath2[4200];
  pid_t pid2 = start_child(child_serve, port, "child2-stderr.txt", errpath2,
                           sizeof errpath2);
  char *e2 = child_said(errpath2, "child recorded");
  kill(pid2, SIGKILL);
  waitpid(pid2, NULL, 0);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  CHECK(e2 != NULL);
  CHECK_CONTAINS(e2, "pipeprof: PIPEPROF_HTTP=\"127.0.0.1:");
  CHECK_CONTAINS(e2, "cannot listen on");
  CHECK_CONTAINS(e2, "running on without it");
  CHECK_CONTAINS(e2, "child recorded");
  int lines = 0;
  for (const char *p = e2; *p; p++)
    lines += *p == '\n';
  CHECK_EQ(lines, 2); /* the one line, then the child's own */
  free(e2);
  unsetenv("PIPEPROF_HTTP_LIB");
}

/* ---- a real Prometheus server scraping the endpoint ---------------------- */

/* Prometheus (Debian's, started and stopped here with a configuration
 * written here, on loopback) scrapes a child serving its zones, and its
 * HTTP API answers histogram_quantile(0.99, ...) over them. The zones:
 * two each of 2^12 .. 2^21 ns, so pipeprof's p99 is 2^21 ns; Prometheus
 * interpolates within the bucket that holds it, (2^21, 2^22] ns here: its
 * answer and pipeprof's p99 are in the same bucket (the bucket error). */
/* The status of GET /metrics on port with the Host header host (NULL:
 * none, as HTTP/1.0); 0 when no reply. */
static int status_for_host(int port, const char *host) {
  char req[512];
  if (host)
    snprintf(req, sizeof req,
             "GET /metrics HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
             host);
  else
    snprintf(req, sizeof req, "GET /metrics HTTP/1.0\r\n\r\n");
  char *r = http(port, req, NULL);
  int st = r && strncmp(r, "HTTP/1.", 7) == 0 ? atoi(r + 9) : 0;
  free(r);
  return st;
}

/* A child serving (child_serve) with PIPEPROF_HTTP_HOSTS=hosts (NULL:
 * unset), once it recorded; its stderr in *err when not NULL. */
static pid_t serving_with_hosts(int port, const char *hosts, char **err) {
  if (hosts)
    setenv("PIPEPROF_HTTP_HOSTS", hosts, 1);
  char errpath[4200];
  snprintf(errpath, sizeof errpath, "%s/hosts-stderr.txt", pp_test_tmpdir());
  unlink(errpath); /* the last child's */
  pid_t pid = start_child(child_serve, port, "hosts-stderr.txt", errpath,
                          sizeof errpath);
  unsetenv("PIPEPROF_HTTP_HOSTS");
  char *e = child_said(errpath, "child recorded");
  if (err)
    *err = e;
  else
    free(e);
  return pid;
}

/* Issue 26: the endpoint answers only Host names that cannot come from
 * DNS rebinding (an IP address, localhost, names under .localhost) and
 * those PIPEPROF_HTTP_HOSTS lists; others get 403, counted on the page. A
 * bad list is one line and the program runs on without HTTP. */
PP_TEST_T(http_answers_only_its_host_names, 120) {
  if (!companion_ready())
    return;
  int port = free_port();
  char hp[64];
  pid_t pid = serving_with_hosts(port, NULL, NULL);
  CHECK_EQ(status_for_host(port, "evil.example"), 403);
  CHECK_EQ(status_for_host(port, "127.0.0.1.evil.example:80"), 403);
  CHECK_EQ(status_for_host(port, "localhost.evil.example"), 403);
  CHECK_EQ(status_for_host(port, "[::1"), 403);
  snprintf(hp, sizeof hp, "127.0.0.1:%d", port);
  CHECK_EQ(status_for_host(port, hp), 200);
  snprintf(hp, sizeof hp, "LocalHost:%d", port);
  CHECK_EQ(status_for_host(port, hp), 200);
  CHECK_EQ(status_for_host(port, "app.localhost"), 200);
  CHECK_EQ(status_for_host(port, "[::1]:9464"), 200);
  CHECK_EQ(status_for_host(port, "10.1.2.3"), 200);
  CHECK_EQ(status_for_host(port, NULL), 200);
  char *r = http(port,
                 "GET /api/v1/summary HTTP/1.1\r\nHost: evil.example\r\n\r\n",
                 NULL);
  CHECK(r != NULL);
  CHECK_CONTAINS(r, "403 Forbidden");
  CHECK_CONTAINS(r, "PIPEPROF_HTTP_HOSTS");
  CHECK(strstr(r, "\"zones\"") == NULL);
  free(r);
  char *page = metrics_until(port, "pipeprof_http_requests_refused_host_total",
                             NULL, NULL);
  CHECK(page != NULL);
  CHECK_CONTAINS(page, "\npipeprof_http_requests_refused_host_total 5\n");
  free(page);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);

  port = free_port();
  char *err = NULL;
  pid = serving_with_hosts(port, "box,.Example.org", &err);
  if (status_for_host(port, "box:1") != 200)
    PP_FAIL("Host box not answered; the child said: %s", err ? err : "");
  free(err);
  CHECK_EQ(status_for_host(port, "BOX"), 200);
  CHECK_EQ(status_for_host(port, "example.org"), 200);
  CHECK_EQ(status_for_host(port, "a.b.example.org:9464"), 200);
  CHECK_EQ(status_for_host(port, "xexample.org"), 403);
  CHECK_EQ(status_for_host(port, "boxes"), 403);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);

  port = free_port();
  pid = serving_with_hosts(port, "*", NULL);
  CHECK_EQ(status_for_host(port, "evil.example"), 200);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);

  port = free_port();
  pid = serving_with_hosts(port, "box,ev/il", &err);
  CHECK_EQ(status_for_host(port, "box"), 0); /* not serving */
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  CHECK(err != NULL);
  CHECK_CONTAINS(err, "PIPEPROF_HTTP_HOSTS: bad name \"ev/il\"");
  CHECK_CONTAINS(err, "running on without it");
  CHECK_CONTAINS(err, "child recorded");
  free(err);
  unsetenv("PIPEPROF_HTTP_LIB");
}

/* Prometheus (Debian's /usr/bin/prometheus) scraping 127.0.0.1:port
 * every second (timeout 1 s) as job "pp", its API on pport, its files in
 * the test's directory under name; its pid. */
static pid_t prometheus_start(int port, int pport, const char *name) {
  char cfg[4200], data[4200], plog[4200];
  snprintf(cfg, sizeof cfg, "%s/%s.yml", pp_test_tmpdir(), name);
  snprintf(data, sizeof data, "%s/%s-tsdb", pp_test_tmpdir(), name);
  snprintf(plog, sizeof plog, "%s/%s.log", pp_test_tmpdir(), name);
  FILE *f = fopen(cfg, "w");
  CHECK(f != NULL);
  fprintf(f,
          "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
          "scrape_configs:\n  - job_name: pp\n    static_configs:\n"
          "      - targets: ['127.0.0.1:%d']\n",
          port);
  fclose(f);
  pid_t server = fork();
  CHECK(server >= 0);
  if (server == 0) {
    const char *prom = "/usr/bin/prometheus";
    char listen[64], cf[4300], st[4300];
    snprintf(listen, sizeof listen, "--web.listen-address=127.0.0.1:%d", pport);
    snprintf(cf, sizeof cf, "--config.file=%s", cfg);
    snprintf(st, sizeof st, "--storage.tsdb.path=%s", data);
    if (!freopen(plog, "w", stderr) || !freopen(plog, "a", stdout))
      _exit(3);
    execl(prom, prom, cf, st, listen, "--log.level=warn", (char *)NULL);
    _exit(4);
  }
  return server;
}

/* The first value of a Prometheus instant query (q URL-encoded, with its
 * &time= when wanted), -1 when none; the reply in *reply when not NULL. */
static double prometheus_query(int pport, const char *q, char **reply) {
  char req[2048];
  snprintf(req, sizeof req,
           "GET /api/v1/query?query=%s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
           "Connection: close\r\n\r\n",
           q);
  char *r = http(pport, req, NULL);
  const char *v = r ? strstr(r, "\"value\":[") : NULL;
  const char *c = v ? strchr(v + 9, ',') : NULL;
  double got = c && c[1] == '"' ? strtod(c + 2, NULL) : -1;
  if (reply)
    *reply = r;
  else
    free(r);
  return got;
}

static int have_prometheus(void) {
  if (access(companion(), R_OK) == 0 &&
      access("/usr/bin/prometheus", X_OK) == 0)
    return 1;
  if (required())
    PP_FAIL("no %s or /usr/bin/prometheus (PP_REQUIRE_HTTP=1)", companion());
  printf("# skipped: no companion or no prometheus\n");
  return 0;
}

/* Prometheus (Debian's, started and stopped here with a configuration
 * written here, on loopback) scrapes a child serving its zones, and its
 * HTTP API answers histogram_quantile(0.99, ...) over them. The zones:
 * two each of 2^12 .. 2^21 ns, so pipeprof's p99 is 2^21 ns; Prometheus
 * interpolates within the bucket that holds it, (2^21, 2^22] ns here: its
 * answer and pipeprof's p99 are in the same bucket (the bucket error). */
PP_TEST_T(http_prometheus_scrapes_and_answers_p99, 180) {
  if (!have_prometheus())
    return;
  setenv("PIPEPROF_HTTP_LIB", companion(), 1);
  int port = free_port(), pport = free_port();
  char errpath[4200], plog[4200];
  snprintf(plog, sizeof plog, "%s/prometheus.log", pp_test_tmpdir());
  pid_t child = start_child(child_serve, port, "child-stderr.txt", errpath,
                            sizeof errpath);
  pid_t server = prometheus_start(port, pport, "prometheus");
  /* ask Prometheus until it has scraped the zones (only a failure waits
   * the whole two minutes) */
  const char *q = "histogram_quantile(0.99%2C"
                  "pipeprof_zone_duration_seconds_bucket%7Bzone%3D%22served"
                  "%22%7D)";
  double got = -1;
  char *reply = NULL;
  for (int tries = 0; tries < 1200 && got <= 0; tries++) {
    free(reply);
    got = prometheus_query(pport, q, &reply);
    if (got <= 0)
      sleep_100ms();
  }
  kill(server, SIGTERM);
  waitpid(server, NULL, 0);
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  unsetenv("PIPEPROF_HTTP_LIB");
  if (got <= 0) {
    char *l = pp_test_slurp(plog, NULL);
    PP_FAIL("Prometheus never answered: %s\nits log: %s",
            reply ? reply : "(no connection)", l ? l : "");
  }
  printf("# Prometheus histogram_quantile(0.99) %.6f s; pipeprof p99 %.6f "
         "s\n",
         got, (double)(UINT64_C(1) << 21) * 1e-9);
  CHECK(got >= (double)(UINT64_C(1) << 21) * 1e-9);
  CHECK(got <= (double)(UINT64_C(1) << 22) * 1e-9);
  free(reply);
}

/* Issue 26: the endpoint stays available to Prometheus under a siege from
 * loopback: 1,000 slowloris connections (a byte of request head a second,
 * never finished) and 1,000 clients each GETting /metrics again as soon
 * as answered (pipeprof-test-http-siege). Prometheus scrapes every second
 * with a 1 s timeout; over the siege's 100 s at least 99% of its scrapes
 * succeed (its own up series), while the slowloris connections are
 * displaced (the page counts them) and the flood is answered. */
PP_TEST_T(http_prometheus_scrapes_through_a_siege, 400) {
  if (!have_prometheus())
    return;
  setenv("PIPEPROF_HTTP_LIB", companion(), 1);
  int port = free_port(), pport = free_port();
  char errpath[4200], plog[4200], spath[4200];
  snprintf(plog, sizeof plog, "%s/siege-prometheus.log", pp_test_tmpdir());
  snprintf(spath, sizeof spath, "%s/siege.out", pp_test_tmpdir());
  pid_t child = start_child(child_serve, port, "siege-child-stderr.txt",
                            errpath, sizeof errpath);
  pid_t server = prometheus_start(port, pport, "siege-prometheus");
  /* Prometheus scrapes: up is 1 */
  double up = -1;
  for (int tries = 0; tries < 1200 && up != 1; tries++) {
    up = prometheus_query(pport, "up%7Bjob%3D%22pp%22%7D", NULL);
    if (up != 1)
      sleep_100ms();
  }
  CHECK(up == 1);
  time_t t0 = time(NULL);
  char *out = NULL;
  int rc = pp_test_run(&out,
                       "'%s/pipeprof-test-http-siege' %d --slow 1000 "
                       "--drip-ms 1000 --flood 1000 --seconds 100",
                       pp_test_bindir(), port);
  time_t t1 = time(NULL);
  /* every scrape that fell in the siege, and those that succeeded */
  char q[256];
  snprintf(q, sizeof q,
           "count_over_time(up%%7Bjob%%3D%%22pp%%22%%7D%%5B%llds%%5D)"
           "&time=%lld",
           (long long)(t1 - t0), (long long)t1);
  double scrapes = prometheus_query(pport, q, NULL);
  snprintf(q, sizeof q,
           "sum_over_time(up%%7Bjob%%3D%%22pp%%22%%7D%%5B%llds%%5D)"
           "&time=%lld",
           (long long)(t1 - t0), (long long)t1);
  double ok = prometheus_query(pport, q, NULL);
  char *page = metrics_until(port, "pipeprof_http_connections_displaced_total",
                             NULL, NULL);
  kill(server, SIGTERM);
  waitpid(server, NULL, 0);
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  unsetenv("PIPEPROF_HTTP_LIB");
  if (rc != 0)
    PP_FAIL("siege exit %d: %s", rc, out ? out : "");
  printf("# siege of %lld s: %s# Prometheus: %.0f of %.0f scrapes "
         "succeeded\n",
         (long long)(t1 - t0), out, ok, scrapes);
  if (scrapes < (double)(t1 - t0) * 0.8 || ok < scrapes * 0.99)
    PP_FAIL("Prometheus: %.0f of %.0f scrapes over %lld s succeeded",
            ok, scrapes, (long long)(t1 - t0));
  unsigned long long slow_closed = 0, flood_ok = 0;
  const char *k = strstr(out, "\"slow_closed\": ");
  CHECK(k && sscanf(k, "\"slow_closed\": %llu", &slow_closed) == 1);
  k = strstr(out, "\"flood_ok\": ");
  CHECK(k && sscanf(k, "\"flood_ok\": %llu", &flood_ok) == 1);
  CHECK_GT(slow_closed, 1000); /* displaced and come again */
  CHECK_GT(flood_ok, 1000);
  CHECK(page != NULL);
  const char *moved = strstr(page, "\npipeprof_http_connections_displaced_total ");
  CHECK(moved != NULL);
  CHECK(strtod(moved + 43, NULL) >= (double)slow_closed * 0.5);
  free(page);
  free(out);
}

/* Per-thread series carry a thread id label: as many series as the
 * program ever had threads. They are on the page only when the scrape asks
 * (/metrics?threads=1). */
PP_TEST(http_metrics_thread_series_only_when_asked) {
  size_t len = 0;
  char *page = pp_metrics_page(&fake_host, 0, &len);
  CHECK(page != NULL);
  CHECK(strstr(page, "pipeprof_proc_thread_cpu_ratio") == NULL);
  CHECK_CONTAINS(page, "pipeprof_proc_rss_bytes 1000000\n");
  free(page);
  page = pp_metrics_page_parts(&fake_host, 0,
                               PP_METRICS_ALL | PP_METRICS_THREADS, &len);
  CHECK(page != NULL);
  CHECK_CONTAINS(page,
                 "pipeprof_proc_thread_cpu_ratio{proc_thread=\"4321\"} 0.4\n");
  free(page);
}

/* Finer buckets when the scrape asks (/metrics?buckets=4): four per power
 * of two, each an edge of the live histograms, ascending, the same count
 * at the shared powers of two as the default page. */
PP_TEST(http_metrics_fine_buckets_when_asked) {
  size_t len = 0;
  char *coarse = pp_metrics_page(&fake_host, 0, &len);
  char *fine = pp_metrics_page_parts(&fake_host, 0,
                                     PP_METRICS_ALL | PP_METRICS_FINE, &len);
  CHECK(coarse && fine);
  static const char pre[] =
      "pipeprof_zone_duration_seconds_bucket{zone=\"decode\",le=\"";
  size_t nc = 0, nf = 0;
  double last = 0;
  for (const char *p = strstr(fine, pre); p; p = strstr(p + 1, pre)) {
    const char *v = p + sizeof pre - 1;
    if (strncmp(v, "+Inf", 4) == 0)
      continue;
    double le = strtod(v, NULL);
    CHECK(le > last);
    last = le;
    nf++;
    /* a power of two of the coarse page: the same count there */
    double k = log2(le * 1e9);
    if (fabs(k - round(k)) < 1e-9) {
      const char *end = strchr(p, '\n');
      CHECK(end != NULL);
      char line[256];
      snprintf(line, sizeof line, "%.*s", (int)(end - p + 1), p);
      CHECK_CONTAINS(coarse, line);
    }
  }
  for (const char *p = strstr(coarse, pre); p; p = strstr(p + 1, pre))
    nc += strncmp(p + sizeof pre - 1, "+Inf", 4) != 0;
  CHECK_EQ(nc, PP_METRICS_BUCKET_HI - PP_METRICS_BUCKET_LO + 1);
  CHECK_EQ(nf, (nc - 1) * 4 + 1);
  /* the first edges above 2^10 ns: 1216, 1440 and 1728 ns */
  CHECK_CONTAINS(fine, "le=\"1.216e-06\"}");
  CHECK_CONTAINS(fine, "le=\"1.44e-06\"}");
  CHECK_CONTAINS(fine, "le=\"1.728e-06\"}");
  free(coarse);
  free(fine);
}

/* ---- one figure, every view --------------------------------------------- */

#ifdef PP_HAVE_JANSSON

/* The text of the cell data-k="key" in the table row whose cell
 * data-k="name" holds name, as the DOM serializer wrote it, tags (a bar
 * cell's bar) left out; "" when absent. A static copy. */
static const char *row_cell(const char *dom, const char *name,
                            const char *key) {
  static char out[128];
  char want[256];
  out[0] = 0;
  snprintf(want, sizeof want, "data-k=\"name\">%s</td>", name);
  const char *row = strstr(dom, want);
  if (!row)
    return out;
  const char *end = strstr(row, "</tr>");
  snprintf(want, sizeof want, "data-k=\"%s\">", key);
  const char *c = strstr(row, want);
  if (!c || (end && c > end))
    return out;
  c += strlen(want);
  const char *e = strstr(c, "</td>");
  size_t n = 0;
  for (int tag = 0; e && c < e && n + 1 < sizeof out; c++) {
    if (*c == '<' || *c == '>')
      tag = *c == '<';
    else if (!tag)
      out[n++] = *c;
  }
  out[n] = 0;
  return out;
}

/* The same trace in every view: the text report, the summary JSON, the
 * HTML report in Chromium and /metrics of `pipeprof serve` show the same
 * figures, each computed once by the analysis: a zone's count and p99,
 * a queue's share of time full and its throughput (items in and out per
 * second; its pops on /metrics), the tree's CPU (the run's rusage), and
 * energy that did not move, which every view says is unavailable. */
PP_TEST_T(http_same_figures_in_every_view, 180) {
  if (!companion_ready())
    return;
  const char *chromium = pp_test_chromium();
  if (!chromium)
    return;
  char trace[4200];
  snprintf(trace, sizeof trace, "%s/views.pptrace", pp_test_tmpdir());
  static const double stuck[] = {0, 0, 0, 0};
  static const double cpu[] = {0.2, 0.5, 0.9, 0.9};
  tw_spec sp = {
      .zones = {{"infer", 2e6, 0.5, 300}, {"decode", 2e5, 0.1, 300}},
      .counters = {{"energy.package_j", stuck, 4}, {"proc.cpu_user_s", cpu, 4}},
      .queue = {"frames", "decode", "infer", 3, 20},
      .meta = {{"run.command", "app --serve"},
               {"run.user_ns", "900000000"},
               {"run.system_ns", "100000000"},
               {"run.wall_ns", "2000000000"}},
      .seed = 7};
  tw_write(trace, &sp);

  /* the figures, computed once */
  pp_trace t;
  pp_analysis a = {0};
  char err[256];
  CHECK_EQ(pp_trace_read_file(trace, &t, err, sizeof err), 0);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  const pp_zone_stats *z = NULL;
  for (size_t i = 0; i < a.prof.nzones; i++)
    if (!strcmp(pp_trace_loc_name(&t, a.prof.zones[i].loc), "infer"))
      z = &a.prof.zones[i];
  CHECK(z != NULL);
  uint64_t p99 = pp_hist_percentile(&z->hist, 99);
  char p99s[32];
  pp_format_ns(p99s, sizeof p99s, (double)p99);
  CHECK_EQ_U(z->count, 300);
  CHECK_EQ_U(a.prof.pipe.nqueues, 1);
  const pp_queue_stats *q = &a.prof.pipe.queues[0];
  CHECK_EQ_U(q->pops, 60);
  double full_pct = q->full_pct;
  CHECK(full_pct > 0 && full_pct < 100);
  char fulls[32];
  pp_format_pct(fulls, sizeof fulls, full_pct);
  /* the throughput: the queue's items in and out per second */
  /* (the results document's cells: the figures every view lays out) */
  const pp_table *qt = pp_doc_find(a.doc, "queues");
  CHECK(qt != NULL && qt->nrows == 1);
  double in_rate = pp_table_cell(qt, 0, (size_t)pp_table_col(qt, "in_per_s"))->num,
         out_rate =
             pp_table_cell(qt, 0, (size_t)pp_table_col(qt, "out_per_s"))->num;
  char rates[80], ins[32], outs[32];
  pp_format_rate(ins, sizeof ins, in_rate);
  pp_format_rate(outs, sizeof outs, out_rate);
  snprintf(rates, sizeof rates, "%s / %s", ins, outs);
  CHECK(out_rate > 0);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  printf("# infer: 300 zones, p99 %llu ns (%s); frames full %s\n",
         (unsigned long long)p99, p99s, fulls);

  /* text */
  pp_cli_result r = pp_test_cli("report '%s'", trace);
  CHECK_EQ(r.rc, 0);
  const char *row = strstr(r.out, "\ninfer ");
  if (!row)
    row = strstr(r.out, "\n  infer ");
  CHECK(row != NULL);
  char line[512];
  snprintf(line, sizeof line, "%.*s", (int)strcspn(row + 1, "\n"), row + 1);
  CHECK_CONTAINS(line, " 300 ");
  CHECK_CONTAINS(line, p99s);
  CHECK_CONTAINS(r.out, "  CPU time, user:        900 ms (rusage of the run)\n"
                        "  CPU time, system:      100 ms (rusage of the "
                        "run)\n");
  CHECK_CONTAINS(r.out, "\nenergy\nunavailable: energy.package_j stayed "
                        "at 0 over 4 samples");
  row = strstr(r.out, "\nframes ");
  CHECK(row != NULL);
  snprintf(line, sizeof line, "%.*s", (int)strcspn(row + 1, "\n"), row + 1);
  CHECK_CONTAINS(line, fulls);
  CHECK_CONTAINS(line, rates);
  pp_cli_result_free(&r);

  /* summary JSON */
  r = pp_test_cli("export --format json '%s'", trace);
  CHECK_EQ(r.rc, 0);
  json_t *root = json_loads(r.out, 0, NULL);
  CHECK(root != NULL);
  json_t *zj = by_name(json_object_get(root, "zones"), "infer");
  CHECK(zj != NULL);
  CHECK_EQ(json_integer_value(json_object_get(zj, "count")), 300);
  CHECK_EQ(json_integer_value(json_object_get(zj, "p99_ns")), (json_int_t)p99);
  json_t *sys = json_object_get(root, "system");
  CHECK_NEAR(json_number_value(json_object_get(
                 json_object_get(sys, "process_tree"), "cpu_user_s")),
             0.9, 1e-12);
  CHECK(json_object_get(sys, "energy") == NULL);
  CHECK_CONTAINS(json_string_value(json_object_get(
                     json_object_get(sys, "unavailable"), "power")),
                 "energy.package_j stayed at 0");
  json_t *qj = by_name(json_object_get(root, "queues"), "frames");
  CHECK(qj != NULL);
  CHECK_NEAR(json_number_value(json_object_get(qj, "full_pct")), full_pct,
             1e-9);
  CHECK_NEAR(json_number_value(json_object_get(qj, "in_per_s")), in_rate,
             1e-9);
  CHECK_NEAR(json_number_value(json_object_get(qj, "out_per_s")), out_rate,
             1e-9);
  json_decref(root);
  pp_cli_result_free(&r);

  /* HTML (served) in Chromium, and /metrics */
  pid_t pid;
  int port = start_serve(trace, "views.err", &pid);
  char *page = http(
      port, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
      NULL);
  CHECK(page != NULL);
  CHECK_CONTAINS(page, "pipeprof_zone_duration_seconds_count{zone=\"infer\"} "
                       "300\n");
  CHECK_CONTAINS(page, "pipeprof_proc_cpu_user_seconds_total 0.9\n");
  CHECK(strstr(page, "pipeprof_energy") == NULL); /* not measured: absent */
  CHECK_CONTAINS(page, "pipeprof_queue_pops_total{queue=\"frames\"} 60\n");
  free(page);
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
  char *dom = pp_test_chromium_dom(chromium, url, "");

  CHECK_STR(row_cell(dom, "infer", "count"), "300");
  CHECK_STR(row_cell(dom, "infer", "p99_ns"), p99s);
  CHECK_STR(row_cell(dom, "frames", "full_pct"), fulls);
  CHECK_STR(row_cell(dom, "frames", "in_per_s"), rates);
  /* a sampled counter in its unit, as the text's "user 900 ms" (the
   * sampled-counters table showed 0.9) */
  CHECK_STR(row_cell(dom, "proc.cpu_user_s", "last"), "900 ms");
  /* and the process tree's facts, the document's */
  CHECK_CONTAINS(dom, "data-k=\"cpu_user_s\"><div class=\"pp-fact-k\">CPU "
                      "time, user</div><div class=\"pp-fact-v\">900 ms</div>");
  CHECK_STR(row_cell(dom, "frames", "stages"), "decode -&gt; infer");
  CHECK_CONTAINS(dom, "unavailable: energy.package_j stayed at 0");
  CHECK(strstr(dom, "energy.package_j stayed") != NULL);
  free(dom);
  kill(pid, SIGINT);
  int st = 0;
  waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
#endif /* PP_HAVE_JANSSON */

/* Malformed PIPEPROF_HTTP values: each refused in one line that shows the
 * value escaped, and the program runs on, profiled. */
PP_TEST(http_bad_addresses_are_said) {
  static const char *const bad[] = {" 16", "0", "80\n", "abc", "1.2.3:80",
                                    "70000", "+80", "127.0.0.1:"};
  char trace[4096];
  snprintf(trace, sizeof trace, "%s/bad-http.pptrace", pp_test_tmpdir());
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    setenv("PP_BAD_HTTP", bad[i], 1);
    char *out = NULL;
    int rc = pp_test_run(&out,
                         "PIPEPROF=1 PIPEPROF_OUT='%s' "
                         "PIPEPROF_HTTP=\"$PP_BAD_HTTP\" timeout 60 "
                         "'%s/pipeprof-example-pipeline' --frames 2 --quiet "
                         "2>&1",
                         trace, pp_test_bindir());
    CHECK_EQ(rc, 0);
    CHECK_CONTAINS(out, "pipeprof: PIPEPROF_HTTP=\"");
    CHECK_CONTAINS(out, "; running on without it\n");
    CHECK_CONTAINS(out, "pipeline: 2 frames");
    if (!strcmp(bad[i], "80\n"))
      CHECK_CONTAINS(out, "PIPEPROF_HTTP=\"80\\n\"");
    free(out);
  }
  unsetenv("PP_BAD_HTTP");
}
