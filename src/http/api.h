/* SPDX-License-Identifier: MIT */
/*
 * The JSON documents of /api/v1 (docs/formats/api-v1.md), built from the
 * host table: plain text building, no HTTP, tested apart from the server.
 */
#ifndef PP_HTTP_API_H
#define PP_HTTP_API_H

#include <stddef.h>

#include "../core/http_host.h"

/* The document at path ("/api/v1", "/api/v1/summary", ...) for the query
 * argument window (NULL: the session; "1", "10", "60" or "0"). Returns it
 * malloc'd with *status 200; or a one-member error document
 * {"error": "..."} with *status 400, 404 or 503; or NULL when out of
 * memory. */
char *pp_api_page(const pp_http_host *h, const char *path, const char *window,
                  unsigned *status, size_t *len);

/* The live summary (GET /api/v1/summary, each event of /api/v1/stream)
 * over window_s (1, 10, 60; 0 the session), or NULL (out of memory, or
 * the session is gone). */
char *pp_api_summary(const pp_http_host *h, int window_s, size_t *len);

#endif /* PP_HTTP_API_H */
