/* SPDX-License-Identifier: MIT */
/*
 * The /metrics page: the session's figures in the Prometheus text
 * exposition format 0.0.4 or OpenMetrics 1.0 (docs/http.md lists the metrics
 * and the bucket layout). Plain text building, no HTTP: tested apart from the
 * server.
 */
#ifndef PP_HTTP_METRICS_H
#define PP_HTTP_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "../core/http_host.h"

/* Zone duration buckets: 2^10 .. 2^36 ns (1.024 us .. 68.7 s), each a
 * bucket edge of the live histograms, then +Inf. */
#define PP_METRICS_BUCKET_LO 10
#define PP_METRICS_BUCKET_HI 36

/* The Prometheus family of a library metric (metrics/registry.h) into out
 * (size bytes): the registry name without its placeholders and unit
 * suffix, dots as underscores, "pipeprof_" before and the base unit after
 * ("_ratio" for percentages, "_hertz" for MHz), "_total" for running
 * totals; label gets the label a "{N}" or "{*}" part becomes ("" for
 * none), *scale the factor to the base unit. docs/http.md. */
struct pp_metric_def;
void pp_metrics_family(const struct pp_metric_def *d, char *out, size_t size,
                       char *label, size_t lsize, double *scale);

/* The page, malloc'd and NUL-terminated (*len its length), or NULL when
 * out of memory. om: OpenMetrics 1.0 rather than text format 0.0.4. */
char *pp_metrics_page(const pp_http_host *h, int om, size_t *len);

/* Parts of the page, for an endpoint that merges a program's page into its
 * own (`pipeprof run --http`, docs/http.md): the library's build; what the
 * program recorded (dropped events, zones, requests, frames, queues, its
 * counters); the sampled library metrics; the OpenMetrics "# EOF". No
 * family belongs to two parts. */
enum {
  PP_METRICS_INFO = 1,
  PP_METRICS_PROGRAM = 2,
  PP_METRICS_SAMPLES = 4,
  PP_METRICS_EOF = 8,
  PP_METRICS_ALL = 15,
  /* the per-thread series (a label per thread id: as many series as the
   * program ever had threads), only when asked: /metrics?threads=1 */
  PP_METRICS_THREADS = 16,
  /* histograms with four buckets per power of two (edges 2^k times 1,
   * 38/32, 45/32 and 54/32, steps of 1.16 to 1.19, each an edge of the
   * live histograms) instead of one: histogram_quantile within a few
   * percent instead of up to half a power of two; /metrics?buckets=4 */
  PP_METRICS_FINE = 32
};
char *pp_metrics_page_parts(const pp_http_host *h, int om, unsigned parts,
                            size_t *len);

/* What the server did to stay available (guard.h), for the page's info
 * part: connections displaced, requests refused for their Host. */
typedef struct pp_metrics_server {
  uint64_t displaced, refused_host;
} pp_metrics_server;
/* pp_metrics_page_parts with the server's families in the info part
 * (server NULL: none). */
char *pp_metrics_page_served(const pp_http_host *h, int om, unsigned parts,
                             const pp_metrics_server *server, size_t *len);

#endif /* PP_HTTP_METRICS_H */
