/* SPDX-License-Identifier: MIT */
/*
 * The program's endpoint behind `pipeprof run --http` (docs/http.md): an
 * HTTP GET to another pipeprof endpoint on this machine, on libcurl,
 * bounded in time and size. Used by the companion (server.c) to merge the
 * program's /metrics into its own and to pass its /api/v1 documents on.
 */
#ifndef PP_HTTP_UPSTREAM_H
#define PP_HTTP_UPSTREAM_H

#include <stddef.h>

/* What a GET brought back. */
typedef struct pp_upstream_reply {
  long status; /* the HTTP status */
  char *body;  /* malloc'd, NUL-terminated */
  size_t len;
  char type[128]; /* its Content-Type, "" when none */
  char scope[32]; /* its Pipeprof-Scope header, "" when none */
} pp_upstream_reply;

/* 0 when the build can reach an upstream (libcurl), else -1 with why. */
int pp_upstream_available(char *err, size_t errlen);

/* GET http://addr path (path with its query) with the Accept header accept
 * (NULL: none), at most timeout_ms and max_bytes of body. 0 with *out
 * filled (any status; free out->body), or -1 with a one-line err
 * (refused, timed out, larger than max_bytes). */
int pp_upstream_get(const char *addr, const char *path, const char *accept,
                    long timeout_ms, size_t max_bytes, pp_upstream_reply *out,
                    char *err, size_t errlen);

#endif /* PP_HTTP_UPSTREAM_H */
