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
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/recorder.h"
#include "format/pptrace.h"
#include "http/metrics.h"
#include "pipeprof.h"
#include "runner.h"

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

static const pp_http_host fake_host = {
    sizeof(pp_http_host), "9.9.9", fake_zone_name,
    fake_cumulative,      NULL,    fake_dropped};

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
  char *page = pp_metrics_page(&fake_host, &len);
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

/* Send req to 127.0.0.1:port and read the reply until the server closes;
 * NULL when no connection. */
static char *http(int port, const char *req, size_t *len) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  CHECK(s >= 0);
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_port = htons((uint16_t)port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(s, (struct sockaddr *)&sa, sizeof sa) != 0) {
    close(s);
    return NULL;
  }
  struct timeval tv = {30, 0};
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  size_t off = 0, n = strlen(req);
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

/* The child: a session serving on port, 20 zones of 2^12 .. 2^21 ns (two
 * each, times chosen by the test), then it waits to be killed. */
static void child_serve(int port, const char *errpath) {
  char spec[32];
  snprintf(spec, sizeof spec, "127.0.0.1:%d", port);
  setenv("PIPEPROF_HTTP", spec, 1);
  setenv("PIPEPROF_CLOCK", "monotonic", 1);
  setenv("PIPEPROF_LIVE", "interval=100ms", 1);
  if (!freopen(errpath, "w", stderr))
    _exit(3);
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.mode = PP_MODE_TRACE;
  char out[4200];
  snprintf(out, sizeof out, "%s/served-%d.pptrace", pp_test_tmpdir(), port);
  cfg.out_path = out;
  cfg.install_signals = 0;
  if (pp_init(&cfg) != PP_OK)
    _exit(2);
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
static pid_t start_child(int port, const char *file, char *path, size_t n) {
  snprintf(path, n, "%s/%s", pp_test_tmpdir(), file);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0)
    child_serve(port, path);
  return pid;
}

static void sleep_100ms(void) {
  struct timespec ts = {0, 100000000};
  nanosleep(&ts, NULL);
}

static const char *companion(void) {
  static char path[4200];
  const char *b = getenv("PP_BUILD_DIR");
  snprintf(path, sizeof path, "%s/libpipeprof-http.so.0", b ? b : "build");
  return path;
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
  pid_t pid = start_child(port, "child-stderr.txt", errpath, sizeof errpath);
  /* the page, once the child's zones are in a closed interval (waiting is
   * no timing assertion: only a failure waits the whole minute) */
  char *page = NULL;
  size_t len = 0;
  const char *want =
      "pipeprof_zone_duration_seconds_count{zone=\"served\"} 20\n";
  for (int tries = 0; tries < 600; tries++) {
    free(page);
    page = http(port,
                "GET /metrics HTTP/1.1\r\nHost: x\r\n"
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
                "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: "
                "close\r\n\r\n",
                "HTTP/1.1 200");
  CHECK(strstr(page, "pipeprof_build_info") == NULL);
  free(page);
  /* other methods and paths are refused */
  page = expect(port,
                "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: "
                "3\r\nConnection: close\r\n\r\nabc",
                "HTTP/1.1 405");
  CHECK_CONTAINS(page, "Allow: GET, HEAD");
  free(page);
  page = expect(port,
                "GET /etc/passwd HTTP/1.1\r\nHost: x\r\nConnection: "
                "close\r\n\r\n",
                "HTTP/1.1 404");
  free(page);
  /* a request head past the 16 KiB a connection may hold: refused or
   * closed, never served */
  size_t big = 64 * 1024;
  char *req = malloc(big + 256);
  CHECK(req != NULL);
  int k = snprintf(req, 256, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ");
  memset(req + k, 'a', big);
  strcpy(req + k + big, "\r\nConnection: close\r\n\r\n");
  page = http(port, req, &len);
  free(req);
  CHECK(!page || strncmp(page, "HTTP/1.1 200", 12) != 0);
  free(page);
  /* and the server still answers */
  page = http(port,
              "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: "
              "close\r\n\r\n",
              &len);
  CHECK(page && strstr(page, want));
  free(page);

  /* a second process asking for the same port: one line, and it records
   * on without HTTP */
  char errpath2[4200];
  pid_t pid2 =
      start_child(port, "child2-stderr.txt", errpath2, sizeof errpath2);
  char *e2 = NULL;
  for (int tries = 0; tries < 600; tries++) {
    free(e2);
    e2 = pp_test_slurp(errpath2, NULL);
    if (e2 && strstr(e2, "child recorded"))
      break;
    sleep_100ms();
  }
  kill(pid2, SIGKILL);
  waitpid(pid2, NULL, 0);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  CHECK(e2 != NULL);
  CHECK_CONTAINS(e2, "pipeprof: PIPEPROF_HTTP=127.0.0.1:");
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
PP_TEST_T(http_prometheus_scrapes_and_answers_p99, 180) {
  const char *prom = "/usr/bin/prometheus";
  if (access(companion(), R_OK) != 0 || access(prom, X_OK) != 0) {
    if (required())
      PP_FAIL("no %s or %s (PP_REQUIRE_HTTP=1)", companion(), prom);
    printf("# skipped: no companion or no prometheus\n");
    return;
  }
  setenv("PIPEPROF_HTTP_LIB", companion(), 1);
  int port = free_port(), pport = free_port();
  char errpath[4200], cfg[4200], data[4200], plog[4200];
  snprintf(cfg, sizeof cfg, "%s/prometheus.yml", pp_test_tmpdir());
  snprintf(data, sizeof data, "%s/tsdb", pp_test_tmpdir());
  snprintf(plog, sizeof plog, "%s/prometheus.log", pp_test_tmpdir());
  FILE *f = fopen(cfg, "w");
  CHECK(f != NULL);
  fprintf(f,
          "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
          "scrape_configs:\n  - job_name: pp\n    static_configs:\n"
          "      - targets: ['127.0.0.1:%d']\n",
          port);
  fclose(f);
  pid_t child = start_child(port, "child-stderr.txt", errpath, sizeof errpath);
  pid_t server = fork();
  CHECK(server >= 0);
  if (server == 0) {
    char listen[64], cf[4300], st[4300];
    snprintf(listen, sizeof listen, "--web.listen-address=127.0.0.1:%d", pport);
    snprintf(cf, sizeof cf, "--config.file=%s", cfg);
    snprintf(st, sizeof st, "--storage.tsdb.path=%s", data);
    if (!freopen(plog, "w", stderr) || !freopen(plog, "a", stdout))
      _exit(3);
    execl(prom, prom, cf, st, listen, "--log.level=warn", (char *)NULL);
    _exit(4);
  }
  /* ask Prometheus until it has scraped the zones (only a failure waits
   * the whole two minutes) */
  const char *q = "GET /api/v1/query?query=histogram_quantile(0.99%2C"
                  "pipeprof_zone_duration_seconds_bucket%7Bzone%3D%22served"
                  "%22%7D) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  double got = -1;
  char *reply = NULL;
  for (int tries = 0; tries < 1200 && got < 0; tries++) {
    free(reply);
    reply = http(pport, q, NULL);
    const char *v = reply ? strstr(reply, "\"value\":[") : NULL;
    const char *s = v ? strchr(v + 9, ',') : NULL;
    if (s && s[1] == '"') {
      double x = strtod(s + 2, NULL);
      if (x > 0)
        got = x;
    }
    if (got < 0)
      sleep_100ms();
  }
  kill(server, SIGTERM);
  waitpid(server, NULL, 0);
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  unsetenv("PIPEPROF_HTTP_LIB");
  if (got < 0) {
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
