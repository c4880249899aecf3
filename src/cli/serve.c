/* SPDX-License-Identifier: MIT */
/*
 * `pipeprof serve FILE|DIR`: a finished trace (or run directory) over
 * HTTP, through the same companion a running session uses
 * (docs/http.md): its HTML report at /, its summary JSON at
 * /api/v1/summary, its figures on /metrics and the other /api/v1
 * documents. The companion reads the analysis through the host table
 * (core/http_host.h) filled here: every "window" of a finished trace is the
 * whole trace.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "analyze/system.h"
#include "cli.h"
#include "core/http.h"
#include "export/export.h"
#include "core/http_host.h"
#include "model/trace.h"
#include "pipeprof/version.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1 };

const char pp_cli_serve_usage[] =
    "usage: pipeprof serve [--http ADDR] FILE|DIR\n"
    "\n"
    "Serve a trace (or a `pipeprof run` directory) over HTTP until\n"
    "interrupted: its HTML report at /, its summary JSON at\n"
    "/api/v1/summary, its figures on /metrics (Prometheus) and the other\n"
    "/api/v1 documents (docs/http.md).\n"
    "\n"
    "      --http ADDR     PORT (loopback), :PORT or IPV4:PORT\n"
    "                      (default 127.0.0.1:9464)\n";

static const pp_analysis *A;
static char *summary_doc, *page_doc;
static size_t summary_len, page_len;
static volatile sig_atomic_t stop_signal;

static const char *loc_name(uint32_t loc) {
  return pp_trace_loc_name(A->trace, loc);
}

/* Zone sites sharing a name count as one series, as in the live
 * statistics: the i-th distinct name. */
static const pp_zone_stats *zone_first(size_t i) {
  const pp_profile *p = &A->prof;
  size_t n = 0;
  for (size_t k = 0; k < p->nzones; k++) {
    int seen = 0;
    for (size_t j = 0; j < k && !seen; j++)
      seen = strcmp(loc_name(p->zones[j].loc), loc_name(p->zones[k].loc)) == 0;
    if (!seen && n++ == i)
      return &p->zones[k];
  }
  return NULL;
}

static int zone_name(size_t i, char *buf, size_t size) {
  const pp_zone_stats *z = zone_first(i);
  if (!z)
    return PP_EINVAL;
  snprintf(buf, size, "%s", loc_name(z->loc));
  return PP_OK;
}

/* Every site of name merged into h (initialised by the caller). */
static int zone_hist(const char *name, pp_hist *h) {
  int found = 0;
  for (size_t k = 0; k < A->prof.nzones; k++)
    if (strcmp(loc_name(A->prof.zones[k].loc), name) == 0) {
      pp_hist_merge(h, &A->prof.zones[k].hist);
      found = 1;
    }
  return found;
}

static const pp_hist *series_hist(int kind, const char *name, pp_hist *tmp) {
  const pp_request_stats *r = &A->prof.req;
  switch (kind) {
  case PP_HTTP_SERIES_ZONE:
    return name && zone_hist(name, tmp) ? tmp : NULL;
  case PP_HTTP_SERIES_E2E:
    return r->e2e.count ? &r->e2e : NULL;
  case PP_HTTP_SERIES_TTFT:
    return r->ttft.count ? &r->ttft : NULL;
  case PP_HTTP_SERIES_TPOT:
    return r->tpot.count ? &r->tpot : NULL;
  case PP_HTTP_SERIES_ITL:
    return r->itl.count ? &r->itl : NULL;
  case PP_HTTP_SERIES_QUEUE_WAIT:
    for (size_t i = 0; name && i < A->prof.pipe.nqueues; i++)
      if (strcmp(A->prof.pipe.queues[i].name, name) == 0)
        return &A->prof.pipe.queues[i].wait;
    return NULL;
  default:
    return NULL;
  }
}

static int cumulative(int kind, const char *name, const uint64_t *le, size_t n,
                      uint64_t *counts, uint64_t *total, double *sum) {
  pp_hist tmp;
  pp_hist_init(&tmp);
  const pp_hist *h = series_hist(kind, name, &tmp);
  if (h) {
    for (size_t i = 0; i < n; i++)
      counts[i] = pp_hist_count_le(h, le[i]);
    *total = h->count;
    *sum = pp_hist_mean(h) * (double)h->count;
  }
  pp_hist_free(&tmp);
  return h ? PP_OK : PP_EINVAL;
}

static int zone_cumulative(const char *name, const uint64_t *le, size_t n,
                           uint64_t *counts, uint64_t *total, double *sum) {
  return cumulative(PP_HTTP_SERIES_ZONE, name, le, n, counts, total, sum);
}

/* The whole trace as each window of a series. */
static void whole(const pp_hist *h, pp_live_stats w[4]) {
  pp_live_stats st;
  memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  st.seconds = (double)A->prof.wall_ns * 1e-9;
  st.count = h->count;
  st.rate = st.seconds > 0 ? (double)h->count / st.seconds : 0;
  st.ewma_rate = st.rate;
  if (h->count) {
    st.mean_ns = pp_hist_mean(h);
    st.p50_ns = pp_hist_percentile(h, 50);
    st.p90_ns = pp_hist_percentile(h, 90);
    st.p99_ns = pp_hist_percentile(h, 99);
    st.max_ns = h->max;
  }
  st.as_of_ns = A->prof.t1;
  for (int i = 0; i < 4; i++)
    w[i] = st;
}

static int zone_stats(const char *name, int window_s, pp_live_stats *out) {
  (void)window_s;
  pp_hist tmp;
  pp_hist_init(&tmp);
  int found = zone_hist(name, &tmp);
  pp_live_stats w[4];
  if (found) {
    whole(&tmp, w);
    *out = w[3];
  }
  pp_hist_free(&tmp);
  return found ? PP_OK : PP_EINVAL;
}

static uint64_t dropped(void) { return A->prof.dropped; }

static int info(pp_http_info *o) {
  const char *mode = pp_trace_meta(A->trace, "mode");
  const char *name = pp_trace_meta(A->trace, "process_name");
  o->mode = mode ? mode : "";
  o->process_name = name ? name : "";
  o->pid = (long)A->trace->pid;
  o->t0_ns = A->prof.t0;
  o->now_ns = A->prof.t1;
  o->interval_ns = A->prof.wall_ns > 0 ? A->prof.wall_ns : 1;
  return PP_OK;
}

static int series(pp_http_series_fn fn, void *ctx) {
  char name[512];
  pp_live_stats w[4];
  for (size_t i = 0; zone_name(i, name, sizeof name) == 0; i++) {
    pp_hist tmp;
    pp_hist_init(&tmp);
    zone_hist(name, &tmp);
    whole(&tmp, w);
    fn(ctx, PP_HTTP_SERIES_ZONE, name, w);
    pp_hist_free(&tmp);
  }
  static const char *const req[] = {"request e2e", "request ttft",
                                    "request tpot", "request itl"};
  for (int k = PP_HTTP_SERIES_E2E; k <= PP_HTTP_SERIES_ITL; k++) {
    const pp_hist *h = series_hist(k, NULL, NULL);
    if (h) {
      whole(h, w);
      fn(ctx, k, req[k - PP_HTTP_SERIES_E2E], w);
    }
  }
  for (size_t i = 0; i < A->prof.pipe.nqueues; i++) {
    const pp_queue_stats *q = &A->prof.pipe.queues[i];
    if (q->wait.count) {
      whole(&q->wait, w);
      fn(ctx, PP_HTTP_SERIES_QUEUE_WAIT, q->name, w);
    }
  }
  return PP_OK;
}

static int board(pp_http_board_fn fn, void *ctx, uint64_t *left_out) {
  const pp_profile *p = &A->prof;
  uint32_t mkind = pp_trace_metric_kind(A->trace);
  pp__board_entry e;
  for (size_t i = 0; i < p->nframes; i++) {
    const pp_frame_stats *f = &p->frames[i];
    memset(&e, 0, sizeof e);
    e.name = loc_name(f->loc);
    e.kind = PP__BOARD_FRAME;
    e.events = f->frames;
    e.first_ns = p->t0;
    e.last_ns = p->t0 + (f->fps > 0 && f->frames > 1
                             ? (int64_t)((double)(f->frames - 1) / f->fps * 1e9)
                             : 0);
    fn(ctx, &e);
  }
  for (size_t i = 0; i < p->ncounters; i++) {
    const pp_counter_stats *c = &p->counters[i];
    if (!pp_series_is_measurement(A->trace, c))
      continue; /* a counter that did not move: the report says why */
    memset(&e, 0, sizeof e);
    e.name = loc_name(c->loc);
    e.kind = pp_loc_metric(A->trace, c->loc, mkind, NULL, NULL, NULL) !=
                     PP_METRIC_NONE
                 ? PP__BOARD_METRIC
                 : PP__BOARD_COUNTER;
    e.is_float = c->is_float;
    e.not_total = 1; /* a trace does not say whether it was only added to */
    e.events = c->samples;
    e.value = c->last;
    e.last_ns = p->t1;
    fn(ctx, &e);
  }
  for (size_t i = 0; i < p->pipe.nqueues; i++) {
    const pp_queue_stats *q = &p->pipe.queues[i];
    memset(&e, 0, sizeof e);
    e.name = q->name;
    e.kind = PP__BOARD_QUEUE;
    e.first_ns = q->t_first;
    e.last_ns = q->t_last;
    e.events = q->pushes;
    e.pops = q->pops;
    e.value = (double)(q->depth.depth > 0 ? q->depth.depth : 0);
    e.waits[0] = q->waits_full;
    e.waits[1] = q->waits_empty;
    /* the trace's own figures: its stages, depth and blocked time, so the
     * served queue row is the report's */
    e.from = q->from;
    e.to = q->to;
    e.depth = q->depth;
    e.wait_ns[0] = q->blocked_full_ns;
    e.wait_ns[1] = q->blocked_empty_ns;
    e.waiters[0] = q->waiters_full;
    e.waiters[1] = q->waiters_empty;
    fn(ctx, &e);
  }
  *left_out = 0;
  return PP_OK;
}

/* The trace's alerts are in its summary (/api/v1/summary); the alerts
 * document of a finished trace is empty. */
static int alerts(pp_http_alert_fn fn, void *ctx) {
  (void)fn;
  (void)ctx;
  return PP_OK;
}

static int document(int which, char **out, size_t *len) {
  const char *src = which == PP_HTTP_DOC_SUMMARY ? summary_doc : page_doc;
  size_t n = which == PP_HTTP_DOC_SUMMARY ? summary_len : page_len;
  if (!src || !(*out = malloc(n + 1)))
    return -1;
  memcpy(*out, src, n + 1);
  *len = n;
  return 0;
}

/* An exporter's output in memory. */
static char *render(int (*fn)(FILE *, const pp_analysis *),
                    const pp_analysis *a, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  if (!f)
    return NULL;
  int rc = fn(f, a);
  if (fclose(f) != 0 || rc != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

static void on_stop(int sig) { stop_signal = sig; }

static int serve(const char *path, const char *addr) {
  static const pp_slo none;
  static const pp_cli_with no_with;
  pp_trace t;
  pp_analysis an;
  if (pp_cli_load_with(path, &t, &an, PP_CLI_KEEP_EVENTS, 0, &none, &no_with) !=
      0)
    return EXIT_FAIL;
  A = &an;
  summary_doc = render(pp_export_summary_json, &an, &summary_len);
  page_doc = render(pp_export_html, &an, &page_len);
  int rc = EXIT_FAIL;
  if (!summary_doc || !page_doc) {
    fprintf(stderr, "pipeprof serve: out of memory rendering %s\n", path);
    goto out;
  }
  static pp_http_host host = {sizeof(pp_http_host),
                              NULL,
                              zone_name,
                              zone_cumulative,
                              zone_stats,
                              dropped,
                              info,
                              series,
                              board,
                              alerts,
                              cumulative,
                              document,
                              NULL,
                              NULL,
                              sizeof(pp__board_entry)};
  host.version = pp_version_string();
  /* SIGINT and SIGTERM end the serving: handled before the server
   * starts, and blocked but while waiting, so that none is lost (or
   * ignored, when the parent ignored them) */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigset_t stop_set, old;
  sigemptyset(&stop_set);
  sigaddset(&stop_set, SIGINT);
  sigaddset(&stop_set, SIGTERM);
  sigprocmask(SIG_BLOCK, &stop_set, &old);
  char err[4400];
  if (pp__http_serve(&host, addr, err, sizeof err) != 0) {
    fprintf(stderr, "pipeprof serve: %s: %s\n", addr, err);
    sigprocmask(SIG_SETMASK, &old, NULL);
    goto out;
  }
  fprintf(stderr, "pipeprof serve: %s on http://%s%s%s/ (Ctrl-C to stop)\n",
          path, strchr(addr, ':') && addr[0] != ':' ? "" : "127.0.0.1",
          strchr(addr, ':') ? "" : ":", addr);
  sigset_t wait_set = old;
  sigdelset(&wait_set, SIGINT);
  sigdelset(&wait_set, SIGTERM);
  while (!stop_signal)
    sigsuspend(&wait_set);
  sigprocmask(SIG_SETMASK, &old, NULL);
  pp__http_stop();
  rc = EXIT_OK;
out:
  free(summary_doc);
  free(page_doc);
  summary_doc = page_doc = NULL;
  pp_analysis_free(&an);
  pp_trace_free(&t);
  return rc;
}

int pp_cli_serve(int argc, char **argv) {
  const char *addr = "127.0.0.1:9464", *path = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (pp_cli_is_help(a)) {
      fputs(pp_cli_serve_usage, stdout);
      return EXIT_OK;
    } else if (strcmp(a, "--http") == 0) {
      if (i + 1 >= argc || !pp_cli_http_addr_ok(argv[i + 1]))
        return pp_cli_usage_error("serve",
                                  "bad --http address '%s' (expected "
                                  "PORT, :PORT or IPV4:PORT)",
                                  i + 1 < argc ? argv[i + 1] : "");
      addr = argv[++i];
    } else if (a[0] == '-' && a[1]) {
      return pp_cli_usage_error("serve", "unknown option '%s'", a);
    } else if (path) {
      return pp_cli_usage_error("serve", "one trace only, got also '%s'", a);
    } else {
      path = a;
    }
  }
  if (!path)
    return pp_cli_usage_error("serve", "missing FILE|DIR%s", "");
  return serve(path, addr);
}
