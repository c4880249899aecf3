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
#ifndef PP_HTTP_HOST_H
#define PP_HTTP_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "pipeprof.h"

typedef struct pp_http_host {
  uint32_t size; /* sizeof(pp_http_host): later fields only when larger */
  const char *version;
  int (*zone_name)(size_t index, char *buf, size_t size);
  int (*zone_cumulative)(const char *name, const uint64_t *le_ns, size_t n,
                         uint64_t *counts, uint64_t *total, double *sum_ns);
  int (*zone_stats)(const char *name, int window_s, pp_live_stats *out);
  uint64_t (*dropped)(void); /* events dropped since the session began */
} pp_http_host;

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

#endif /* PP_HTTP_HOST_H */
