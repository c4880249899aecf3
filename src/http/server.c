/* SPDX-License-Identifier: MIT */
/*
 * libpipeprof-http: the HTTP endpoint of a profiled process (docs/http.md),
 * on libmicrohttpd. GET and HEAD of /metrics (Prometheus text 0.0.4, or
 * OpenMetrics 1.0 when the Accept header asks), /api/v1/... (JSON,
 * api.h) and /api/v1/stream (server-sent events); anything else is
 * refused. Bounded: 64 connections served by epoll in two threads
 * (guard.h: while 48 are open, those that sent no whole request within
 * 200 ms are shut down; a Host that is not an address, a loopback name or
 * in PIPEPROF_HTTP_HOSTS gets 403), at most 4 of them streams; 16 KiB of
 * memory per connection (a larger request head is refused by the library
 * with 431 or by closing); 10 s without traffic closes a connection (a
 * stream sends at least once per interval). Loaded by libpipeprof only
 * when PIPEPROF_HTTP is set (src/core/http.c), or by `pipeprof serve`.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "export/html_page.h"
#include "../core/http_host.h"
#include "guard.h"
#include "internal.h"
#include "metrics.h"
#include "merge.h"
#include "upstream.h"

#define PP_HTTP_API __attribute__((visibility("default")))
#define MAX_STREAMS 4

static struct MHD_Daemon *daemon_;
static pp_http_host host;

/* The board of a library built with another board layout: empty. */
static int no_board(pp_http_board_fn fn, void *ctx, uint64_t *left_out) {
  (void)fn;
  (void)ctx;
  *left_out = 0;
  return PP_OK;
}
/* The program's own endpoint (PIPEPROF_HTTP_UPSTREAM, set by `pipeprof
 * run --http`), "" when none: its /metrics merge into ours, its /api/v1
 * documents are passed on under /program. */
static char upstream[64];
#define UPSTREAM_TIMEOUT_MS 1000L
#define UPSTREAM_MAX_BYTES ((size_t)64 << 20)
/* The live summary of window_s (0: the session): the session's; under
 * `pipeprof run --http`, the program's merged with it (merge.h), or the
 * session's alone while the program's endpoint does not answer (a
 * program that does not link libpipeprof has none). Malloc'd, or NULL. */
static char *summary_doc(int window_s, size_t *len) {
  char *own = pp_api_summary(&host, window_s, len);
  if (!own || !upstream[0])
    return own;
  char path[64], err[256];
  snprintf(path, sizeof path, "/api/v1/summary?window=%d", window_s);
  pp_upstream_reply r;
  if (pp_upstream_get(upstream, path, "application/json", UPSTREAM_TIMEOUT_MS,
                      UPSTREAM_MAX_BYTES, &r, err, sizeof err) != 0)
    return own;
  size_t n = 0;
  char *merged = r.status == 200 ? pp_merge_run_summary(r.body, own, &n, err,
                                                        sizeof err)
                                 : NULL;
  free(r.body);
  if (!merged)
    return own;
  free(own);
  *len = n;
  return merged;
}

/* The live dashboard: the HTML report's page (export/html_page.h) with
 * the session's summary as its first snapshot, shown at once, after which
 * the page follows /api/v1/stream. Malloc'd, or NULL. */
static char *live_page(size_t *len) {
  size_t n;
  char *doc = summary_doc(0, &n);
  if (!doc)
    return NULL;
  char *page = NULL;
  FILE *f = open_memstream(&page, len);
  int rc = f ? pp__html_page(f, "pipeprof live", doc,
                             "{\"live\": {\"summary\": \"/api/v1/summary\", "
                             "\"stream\": \"/api/v1/stream\"}}")
             : -1;
  if (f && fclose(f) != 0)
    rc = -1;
  free(doc);
  if (rc != 0) {
    free(page);
    return NULL;
  }
  return page;
}

/* Streams: those open (a list), how many, and the ticker that resumes
 * them when their next event is due (stream_read suspends a stream
 * between events: libmicrohttpd's threads serve every connection and
 * never wait); it also makes room for new connections (guard.h). */
typedef struct stream stream;
static pthread_mutex_t stream_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stream_cond;
static pthread_t ticker_thread;
static stream *open_streams;
static int streams, stopping;

/* A reply; scope, when not NULL, goes in a Pipeprof-Scope header (a
 * /metrics?scope=program page says so, so that a merging endpoint knows
 * the program kept to the scope). */
static enum MHD_Result reply_scoped(struct MHD_Connection *c, unsigned status,
                                    const char *type, char *body, size_t len,
                                    enum MHD_ResponseMemoryMode mode,
                                    const char *scope) {
  struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
  if (!r) {
    if (mode == MHD_RESPMEM_MUST_FREE)
      free(body);
    return MHD_NO;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  if (scope)
    MHD_add_response_header(r, "Pipeprof-Scope", scope);
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
    MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  enum MHD_Result ok = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ok;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
                             const char *type, char *body, size_t len,
                             enum MHD_ResponseMemoryMode mode) {
  return reply_scoped(c, status, type, body, len, mode, NULL);
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status,
                            const char *msg) {
  return reply(c, status, "text/plain; charset=utf-8", (char *)msg, strlen(msg),
               MHD_RESPMEM_PERSISTENT);
}

/* OpenMetrics when the Accept header names it (Prometheus's own scrapes
 * do, preferring it); the text format otherwise. */
static int wants_openmetrics(struct MHD_Connection *c) {
  const char *a =
      MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
  return a && strstr(a, "application/openmetrics-text") != NULL;
}

/* ---- /api/v1/stream ------------------------------------------------------ */

struct stream {
  char *buf; /* the event being sent */
  size_t len, off;
  int sent; /* events sent */
  int window_s;
  struct MHD_Connection *c;
  int64_t due_ns; /* the next event, CLOCK_MONOTONIC */
  int suspended;
  stream *next;
};

/* Every PP_GUARD_TICK_MS, and when a stream's event is due: makes room
 * for new connections (guard.h), resumes each suspended stream whose
 * event is due (every one when stopping). */
static void *ticker(void *arg) {
  (void)arg;
  pthread_mutex_lock(&stream_lock);
  for (;;) {
    pp_guard_make_room();
    int64_t now = pp__mono_ns(),
            next = now + (int64_t)PP_GUARD_TICK_MS * 1000000;
    for (stream *s = open_streams; s; s = s->next) {
      if (s->suspended && (stopping || s->due_ns <= now)) {
        s->suspended = 0;
        MHD_resume_connection(s->c);
      } else if (s->suspended && s->due_ns < next) {
        next = s->due_ns;
      }
    }
    if (stopping)
      break;
    struct timespec ts = {next / 1000000000, next % 1000000000};
    pthread_cond_timedwait(&stream_cond, &stream_lock, &ts);
  }
  pthread_mutex_unlock(&stream_lock);
  return NULL;
}

/* The next event: "event: snapshot" with the summary as its data (one
 * line: the writer puts no newline inside a document but the last). */
static int stream_next(stream *s) {
  free(s->buf);
  s->buf = NULL;
  s->len = s->off = 0;
  pp_http_info info;
  if (host.info(&info) != 0)
    return -1; /* the session ended */
  s->due_ns = pp__mono_ns() + info.interval_ns;
  size_t n;
  char *doc = summary_doc(s->window_s, &n);
  if (!doc)
    return -1;
  while (n && doc[n - 1] == '\n')
    n--;
  /* every line of the document a "data:" line (the client joins them
   * with newlines again), then the blank line that ends the event */
  size_t lines = 1;
  for (size_t i = 0; i < n; i++)
    lines += doc[i] == '\n';
  static const char head[] = "event: snapshot\n";
  static const char data[] = "data: ";
  s->buf = malloc(sizeof head + n + lines * (sizeof data - 1) + 2);
  if (!s->buf) {
    free(doc);
    return -1;
  }
  char *o = s->buf;
  memcpy(o, head, sizeof head - 1);
  o += sizeof head - 1;
  memcpy(o, data, sizeof data - 1);
  o += sizeof data - 1;
  for (size_t i = 0; i < n; i++) {
    *o++ = doc[i];
    if (doc[i] == '\n') {
      memcpy(o, data, sizeof data - 1);
      o += sizeof data - 1;
    }
  }
  memcpy(o, "\n\n", 2);
  o += 2;
  s->len = (size_t)(o - s->buf);
  s->sent++;
  free(doc);
  return 0;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
  (void)pos;
  stream *s = cls;
  if (s->off == s->len && s->sent) {
    /* between events: suspended until the ticker resumes it */
    pthread_mutex_lock(&stream_lock);
    int end = stopping, wait = !end && pp__mono_ns() < s->due_ns;
    if (wait) {
      s->suspended = 1;
      MHD_suspend_connection(s->c);
      pthread_cond_signal(&stream_cond);
    }
    pthread_mutex_unlock(&stream_lock);
    if (end)
      return MHD_CONTENT_READER_END_OF_STREAM;
    if (wait)
      return 0;
  }
  if (s->off == s->len && stream_next(s) != 0)
    return MHD_CONTENT_READER_END_OF_STREAM;
  size_t k = s->len - s->off < max ? s->len - s->off : max;
  memcpy(buf, s->buf + s->off, k);
  s->off += k;
  return (ssize_t)k;
}

static void stream_free(void *cls) {
  stream *s = cls;
  pthread_mutex_lock(&stream_lock);
  for (stream **p = &open_streams; *p; p = &(*p)->next)
    if (*p == s) {
      *p = s->next;
      break;
    }
  streams--;
  pthread_mutex_unlock(&stream_lock);
  free(s->buf);
  free(s);
}

static enum MHD_Result serve_stream(struct MHD_Connection *c, int window_s) {
  pthread_mutex_lock(&stream_lock);
  int full = streams >= MAX_STREAMS;
  if (!full)
    streams++;
  pthread_mutex_unlock(&stream_lock);
  if (full)
    return text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
                "too many streams open (at most 4)\n");
  stream *s = calloc(1, sizeof *s);
  struct MHD_Response *r =
      s ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024,
                                            stream_read, s, stream_free)
        : NULL;
  if (!r) {
    if (s)
      stream_free(s); /* not in the list: nothing to unlink */
    else {
      pthread_mutex_lock(&stream_lock);
      streams--;
      pthread_mutex_unlock(&stream_lock);
    }
    return MHD_NO;
  }
  s->window_s = window_s;
  s->c = c;
  pthread_mutex_lock(&stream_lock);
  s->next = open_streams;
  open_streams = s;
  pthread_mutex_unlock(&stream_lock);
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                          "text/event-stream; charset=utf-8");
  MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_OK, r);
  MHD_destroy_response(r);
  return ok;
}

/* ---- the program's endpoint (pipeprof run --http) ------------------------
 */

/* The session's /metrics parts with the server's own figures. */
static char *own_metrics(int om, unsigned parts, size_t *len) {
  pp_metrics_server srv;
  pp_guard_counts(&srv);
  return pp_metrics_page_served(&host, om, parts, &srv, len);
}

/* Our build and samples, then the program's page (what it recorded), then
 * whether that page came: no family twice, one "# EOF". */
static char *merged_metrics(int om, unsigned threads, size_t *len) {
  size_t own_len = 0;
  char *own =
      own_metrics(om, PP_METRICS_INFO | PP_METRICS_SAMPLES | threads, &own_len);
  if (!own)
    return NULL;
  pp_upstream_reply r;
  char err[256];
  int up = pp_upstream_get(upstream,
                           threads & PP_METRICS_FINE
                               ? "/metrics?scope=program&buckets=4"
                               : "/metrics?scope=program",
                           om ? "application/openmetrics-text; "
                                "version=1.0.0"
                              : "text/plain; version=0.0.4",
                           UPSTREAM_TIMEOUT_MS, UPSTREAM_MAX_BYTES, &r, err,
                           sizeof err) == 0;
  /* only a program's page that says it kept to its scope: anything else
   * (another pipeprof, another server) could repeat our families */
  if (up && (r.status != 200 || strcmp(r.scope, "program") != 0)) {
    up = 0;
    free(r.body);
  }
  size_t body = 0;
  if (up) {
    body = r.len;
    static const char eof[] = "# EOF\n";
    int has_eof =
        body >= sizeof eof - 1 &&
        memcmp(r.body + body - (sizeof eof - 1), eof, sizeof eof - 1) == 0;
    if (has_eof)
      body -= sizeof eof - 1;
    if ((om && !has_eof) || (body && r.body[body - 1] != '\n'))
      up = 0, free(r.body), body = 0; /* cut short, or not a page */
  }
  char *page = NULL;
  FILE *f = open_memstream(&page, len);
  if (f) {
    fwrite(own, 1, own_len, f);
    if (up)
      fwrite(r.body, 1, body, f);
    fprintf(f,
            "# HELP pipeprof_program_up 1 when this scrape got the page of "
            "the program under pipeprof run (what it recorded), else 0.\n"
            "# TYPE pipeprof_program_up gauge\n"
            "pipeprof_program_up %d\n%s",
            up, om ? "# EOF\n" : "");
    if (fclose(f) != 0) {
      free(page);
      page = NULL;
    }
  }
  free(own);
  if (up)
    free(r.body);
  return page;
}

/* GET /program/PATH: the program's /PATH (its /api/v1 documents), passed
 * on as it came. Its stream and page are not: they would follow our
 * paths. */
static enum MHD_Result proxy(struct MHD_Connection *c, const char *path) {
  if (strncmp(path, "/api/v1", 7) != 0 ||
      strncmp(path, "/api/v1/stream", 14) == 0)
    return text(c, MHD_HTTP_NOT_FOUND,
                "not passed on: /program serves the program's /api/v1 "
                "documents (not its stream or page)\n");
  const char *window =
      MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "window");
  char full[256];
  int n = snprintf(full, sizeof full, "%s%s%s", path, window ? "?window=" : "",
                   window ? window : "");
  if (n < 0 || (size_t)n >= sizeof full ||
      (window && strspn(window, "0123456789") != strlen(window)))
    return text(c, MHD_HTTP_BAD_REQUEST, "bad path or window\n");
  pp_upstream_reply r;
  char err[300];
  if (pp_upstream_get(upstream, full, "application/json", UPSTREAM_TIMEOUT_MS,
                      UPSTREAM_MAX_BYTES, &r, err, sizeof err) != 0) {
    char msg[400];
    snprintf(msg, sizeof msg, "the program's endpoint is unavailable: %s\n",
             err);
    char *m = strdup(msg);
    if (!m)
      return MHD_NO;
    return reply(c, MHD_HTTP_BAD_GATEWAY, "text/plain; charset=utf-8", m,
                 strlen(m), MHD_RESPMEM_MUST_FREE);
  }
  return reply(c, (unsigned)r.status,
               r.type[0] ? r.type : "application/octet-stream", r.body, r.len,
               MHD_RESPMEM_MUST_FREE);
}

/* ---- requests -------------------------------------------------------------
 */

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **state) {
  (void)cls;
  (void)version;
  (void)upload;
  /* the first call has the head: answering then would close the
   * connection (libmicrohttpd could not read past the body), so the
   * answer waits for the last call, once any body is read (and ignored);
   * a kept-alive connection serves the next request */
  static char seen;
  if (!*state) {
    *state = &seen;
    pp_guard_request(c);
    return MHD_YES;
  }
  if (*upload_size) {
    *upload_size = 0;
    return MHD_YES;
  }
  if (!pp_guard_host_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                    MHD_HTTP_HEADER_HOST)))
    return text(c, MHD_HTTP_FORBIDDEN,
                "this endpoint answers only a Host that is an IP address, "
                "localhost or a name in PIPEPROF_HTTP_HOSTS\n");
  if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
      strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
    return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
  if (strcmp(url, "/metrics") == 0) {
    int om = wants_openmetrics(c);
    const char *scope =
        MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "scope");
    int program = scope && strcmp(scope, "program") == 0;
    const char *th =
        MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "threads");
    const char *bk =
        MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "buckets");
    unsigned threads = (th && strcmp(th, "1") == 0 ? PP_METRICS_THREADS : 0) |
                       (bk && strcmp(bk, "4") == 0 ? PP_METRICS_FINE : 0);
    size_t len = 0;
    char *page = program
                     ? pp_metrics_page_parts(&host, om,
                                             PP_METRICS_PROGRAM |
                                                 PP_METRICS_EOF | threads,
                                             &len)
                 : upstream[0] ? merged_metrics(om, threads, &len)
                                : own_metrics(om, PP_METRICS_ALL | threads, &len);
    if (!page)
      return text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory\n");
    return reply_scoped(c, MHD_HTTP_OK,
                        om ? "application/openmetrics-text; version=1.0.0; "
                             "charset=utf-8"
                           : "text/plain; version=0.0.4; charset=utf-8",
                        page, len, MHD_RESPMEM_MUST_FREE,
                        program ? "program" : NULL);
  }
  if (upstream[0] && strncmp(url, "/program/", 9) == 0)
    return proxy(c, url + 8);
  if (host.size >= sizeof host && strncmp(url, "/api/v1", 7) == 0) {
    const char *window =
        MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "window");
    static const char json[] = "application/json; charset=utf-8";
    if (strcmp(url, "/api/v1/stream") == 0) {
      int w = window ? atoi(window) : 0;
      if (w != 0 && w != 1 && w != 10 && w != 60)
        return reply(c, MHD_HTTP_BAD_REQUEST, json,
                     (char *)"{\"error\":\"window: expected 1, 10, 60 or "
                             "0 (the session)\"}\n",
                     57, MHD_RESPMEM_PERSISTENT);
      return serve_stream(c, w);
    }
    unsigned status = 200;
    size_t len = 0;
    char *page = NULL;
    if (host.document && strcmp(url, "/api/v1/summary") == 0 &&
        host.document(PP_HTTP_DOC_SUMMARY, &page, &len) != 0)
      page = NULL;
    if (upstream[0] && strcmp(url, "/api/v1/summary") == 0 &&
        (!window || !strcmp(window, "0") || !strcmp(window, "1") ||
         !strcmp(window, "10") || !strcmp(window, "60")))
      page = summary_doc(window ? atoi(window) : 0, &len);
    if (!page)
      page = pp_api_page(&host, url, window, &status, &len);
    if (!page)
      return text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory\n");
    return reply(c, status, json, page, len, MHD_RESPMEM_MUST_FREE);
  }
  if (strcmp(url, "/") == 0 && host.size >= sizeof host && host.document) {
    size_t len = 0;
    char *page = NULL;
    if (host.document(PP_HTTP_DOC_PAGE, &page, &len) != 0)
      return text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no page\n");
    return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", page, len,
                 MHD_RESPMEM_MUST_FREE);
  }
  if (strcmp(url, "/") == 0 && host.size >= sizeof host) {
    size_t len = 0;
    char *page = live_page(&len);
    if (!page)
      return text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
                  "no live page: out of memory, or the session ended\n");
    return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", page, len,
                 MHD_RESPMEM_MUST_FREE);
  }
  return text(c, MHD_HTTP_NOT_FOUND,
              "not found: this endpoint serves /, /metrics and /api/v1\n");
}

/* "HOST:PORT" into sa (HOST an IPv4 address). */
static int parse_addr(const char *addr, struct sockaddr_in *sa) {
  const char *colon = strrchr(addr, ':');
  char hostpart[64];
  if (!colon || (size_t)(colon - addr) >= sizeof hostpart)
    return -1;
  memcpy(hostpart, addr, (size_t)(colon - addr));
  hostpart[colon - addr] = 0;
  char *end;
  unsigned long port = strtoul(colon + 1, &end, 10);
  if (!colon[1] || *end || port > 65535)
    return -1;
  memset(sa, 0, sizeof *sa);
  sa->sin_family = AF_INET;
  sa->sin_port = htons((uint16_t)port);
  return inet_pton(AF_INET, hostpart, &sa->sin_addr) == 1 ? 0 : -1;
}

/* Ends every stream: the ticker resumes the suspended (libmicrohttpd may
 * not stop with a connection suspended), which then end. */
static void stop_streams(void) {
  pthread_mutex_lock(&stream_lock);
  stopping = 1;
  pthread_cond_broadcast(&stream_cond);
  pthread_mutex_unlock(&stream_lock);
  pthread_join(ticker_thread, NULL);
  pthread_cond_destroy(&stream_cond);
}

PP_HTTP_API int pp_http_start(const pp_http_host *h, const char *addr,
                              char *err, size_t errlen) {
  struct sockaddr_in sa;
  if (daemon_) {
    snprintf(err, errlen, "already serving");
    return -1;
  }
  /* an older library's table serves /metrics only */
  if (!h || h->size < offsetof(pp_http_host, info) || !addr ||
      parse_addr(addr, &sa) != 0) {
    snprintf(err, errlen, "bad address '%s' (expected IPV4:PORT)",
             addr ? addr : "");
    return -1;
  }
  upstream[0] = '\0';
  const char *up = getenv("PIPEPROF_HTTP_UPSTREAM");
  if (up && *up) {
    struct sockaddr_in usa;
    if (parse_addr(up, &usa) != 0 || strlen(up) >= sizeof upstream) {
      snprintf(err, errlen,
               "bad PIPEPROF_HTTP_UPSTREAM '%s' (expected IPV4:PORT)", up);
      return -1;
    }
    char why[160];
    if (pp_upstream_available(why, sizeof why) != 0) {
      snprintf(err, errlen, "PIPEPROF_HTTP_UPSTREAM: %s", why);
      return -1;
    }
    snprintf(upstream, sizeof upstream, "%s", up);
  }
  if (pp_guard_init(err, errlen) != 0)
    return -1;
  memset(&host, 0, sizeof host);
  memcpy(&host, h, h->size < sizeof host ? h->size : sizeof host);
  /* a library whose board entries are laid out otherwise (another
   * build): no board figures rather than misread ones */
  if (host.board_entry_size != sizeof(pp__board_entry)) {
    host.board = no_board;
    host.history = NULL;
  }
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&stream_cond, &ca);
  pthread_condattr_destroy(&ca);
  stopping = 0;
  open_streams = NULL;
  if (pthread_create(&ticker_thread, NULL, ticker, NULL) != 0) {
    pthread_cond_destroy(&stream_cond);
    snprintf(err, errlen, "cannot start a thread");
    return -1;
  }
  /* epoll in a pool of threads: connections cost no thread, and at its
   * limit the daemon stops accepting (the rest wait in the listen queue)
   * rather than accepting and closing */
  daemon_ = MHD_start_daemon(
      MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME,
      ntohs(sa.sin_port), NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR,
      (struct sockaddr *)&sa, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)2,
      MHD_OPTION_CONNECTION_LIMIT, PP_GUARD_CONNECTIONS,
      MHD_OPTION_NOTIFY_CONNECTION, pp_guard_connection, NULL,
      MHD_OPTION_NOTIFY_COMPLETED, pp_guard_completed, NULL,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(16 * 1024),
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
  if (!daemon_) {
    snprintf(err, errlen,
             "cannot listen on %s (in use, or not an address "
             "of this machine)",
             addr);
    stop_streams();
    return -1;
  }
  return 0;
}

PP_HTTP_API void pp_http_stop(void) {
  if (!daemon_)
    return;
  stop_streams();
  MHD_stop_daemon(daemon_);
  daemon_ = NULL;
}
