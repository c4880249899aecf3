/* SPDX-License-Identifier: MIT */
/*
 * The HTTP endpoint's view of the recording library (docs/internals/
 * http.md). The endpoint is a companion shared object, libpipeprof-http
 * (src/http/server.c over libmicrohttpd), that libpipeprof loads only
 * when PIPEPROF_HTTP asks for it (src/core/http.c), so that the library
 * gains no link dependency. It reaches the session through this table of
 * the library's own functions, never by linking libpipeprof: a program
 * that linked the static library has one copy of the session, and the
 * companion sees it.
 *
 * Every function in the table may be called from any thread (the
 * server's) and takes the library's locks for microseconds.
 */
#ifndef PP_CORE_HTTP_HOST_H
#define PP_CORE_HTTP_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "../sink/board.h"
#include "pipeprof.h"

/* What the session is (pp_http_host.info). Strings live as long as the
 * session. */
typedef struct pp_http_info {
  const char *mode;         /* "stats", "trace", "flight" */
  const char *process_name; /* "" when unknown */
  long pid;
  int64_t t0_ns;       /* the session's start (CLOCK_MONOTONIC) */
  int64_t now_ns;      /* now, same clock */
  int64_t interval_ns; /* the live interval */
} pp_http_info;

/* A series of the live statistics: kind one of PP_HTTP_SERIES_*, name the
 * zone's or queue's (the request series's fixed name otherwise), win the
 * windows of 1, 10 and 60 intervals and the session's. */
enum {
  PP_HTTP_SERIES_ZONE = 0,
  PP_HTTP_SERIES_E2E = 1,
  PP_HTTP_SERIES_TTFT = 2,
  PP_HTTP_SERIES_TPOT = 3,
  PP_HTTP_SERIES_ITL = 4,
  PP_HTTP_SERIES_QUEUE_WAIT = 5,
  PP_HTTP_SERIES_FRAME = 6 /* frame times (gaps between marks), by stream */
};
typedef void (*pp_http_series_fn)(void *ctx, int kind, const char *name,
                                  const pp_live_stats win[4]);
typedef void (*pp_http_board_fn)(void *ctx, const pp__board_entry *e);
typedef void (*pp_http_alert_fn)(void *ctx, const pp_alert *a);
/* History for charts: a series's last intervals (count, p50 and max of
 * each), an entry of the board's last publishes; oldest first. */
typedef void (*pp_http_series_history_fn)(void *ctx, int kind, const char *name,
                                          const pp__live_point *pts, size_t n);
typedef void (*pp_http_board_history_fn)(void *ctx, const pp__board_entry *e,
                                         const pp__board_point *pts, size_t n);

typedef struct pp_http_host {
  uint32_t size; /* sizeof(pp_http_host): later fields only when larger */
  const char *version;
  int (*zone_name)(size_t index, char *buf, size_t size);
  int (*zone_cumulative)(const char *name, const uint64_t *le_ns, size_t n,
                         uint64_t *counts, uint64_t *total, double *sum_ns);
  int (*zone_stats)(const char *name, int window_s, pp_live_stats *out);
  uint64_t (*dropped)(void); /* events dropped since the session began */
  /* Each of the following returns PP_OK, or PP_ENOTRUNNING /
   * PP_ENOTSUP (live statistics off) having called nothing. The walks
   * hold the library's locks while they call fn: fn only copies. */
  int (*info)(pp_http_info *out);
  int (*series)(pp_http_series_fn fn, void *ctx);
  /* the board (sink/board.h); *left_out gets the sites it could not keep */
  int (*board)(pp_http_board_fn fn, void *ctx, uint64_t *left_out);
  /* the session's last anomalies and alerts, oldest first (at most 64) */
  int (*alerts)(pp_http_alert_fn fn, void *ctx);
  /* as zone_cumulative for a series of any kind */
  int (*cumulative)(int kind, const char *name, const uint64_t *le_ns, size_t n,
                    uint64_t *counts, uint64_t *total, double *sum_ns);
  /* NULL in a running session. A finished trace (`pipeprof serve`) has
   * whole documents: which PP_HTTP_DOC_SUMMARY (its summary JSON, served
   * as /api/v1/summary) or PP_HTTP_DOC_PAGE (its HTML report, served as
   * /). 0 with *out malloc'd (*len bytes), or -1. */
  int (*document)(int which, char **out, size_t *len);
  /* the recent history for live charts (NULL: none) */
  int (*history)(pp_http_series_history_fn sfn, pp_http_board_history_fn bfn,
                 void *ctx);
  /* The process the figures are about when it is not this one (`pipeprof
   * run` samples its command's tree): 0 with its pid and name (n bytes),
   * or -1 when the session is about itself. */
  int (*subject)(long *pid, char *name, size_t n);
  /* sizeof(pp__board_entry) as the library was built: the board's entries
   * cross into the companion, which uses the board (and its history)
   * only when its own layout is the same size */
  uint32_t board_entry_size;
} pp_http_host;

enum { PP_HTTP_DOC_SUMMARY = 0, PP_HTTP_DOC_PAGE = 1 };

/* The companion's entry points (dlsym names "pp_http_start",
 * "pp_http_stop"). start serves host's figures on addr ("HOST:PORT";
 * HOST an IPv4 address) from a thread of its own; returns 0, or -1 with a
 * one-line reason in err. stop ends it (waiting for a request being
 * answered). */
typedef int (*pp_http_start_fn)(const pp_http_host *host, const char *addr,
                                char *err, size_t errlen);
typedef void (*pp_http_stop_fn)(void);

/* Defined by the companion only (the library finds them with dlsym). */
int pp_http_start(const pp_http_host *host, const char *addr, char *err,
                  size_t errlen);
void pp_http_stop(void);

#endif /* PP_CORE_HTTP_HOST_H */
