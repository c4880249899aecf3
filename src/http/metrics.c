/* SPDX-License-Identifier: MIT */
/*
 * The /metrics page (see metrics.h): build info, events dropped, and per
 * zone name a histogram of durations over the session so far, from the
 * live statistics through the host table.
 */
#include "metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct page {
  char *b;
  size_t len, cap;
  int oom;
} page;

static void put(page *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void put(page *p, const char *fmt, ...) {
  for (int tries = 0; tries < 2 && !p->oom; tries++) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p->b + p->len, p->cap - p->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
      p->oom = 1;
      return;
    }
    if ((size_t)n < p->cap - p->len) {
      p->len += (size_t)n;
      return;
    }
    size_t cap = (p->cap + (size_t)n + 1) * 2;
    char *b = realloc(p->b, cap);
    if (!b) {
      p->oom = 1;
      return;
    }
    p->b = b;
    p->cap = cap;
  }
}

/* A label value: backslash, double quote and newline escaped, as the
 * format asks. */
static void put_label(page *p, const char *s) {
  for (; *s && !p->oom; s++) {
    if (*s == '\\')
      put(p, "\\\\");
    else if (*s == '"')
      put(p, "\\\"");
    else if (*s == '\n')
      put(p, "\\n");
    else
      put(p, "%c", *s);
  }
}

#define NB (PP_METRICS_BUCKET_HI - PP_METRICS_BUCKET_LO + 1)
#define NAME_MAX_BYTES 512

static void zones(page *p, const pp_http_host *h) {
  uint64_t le[NB], counts[NB];
  for (int i = 0; i < NB; i++)
    le[i] = UINT64_C(1) << (PP_METRICS_BUCKET_LO + i);
  put(p, "# HELP pipeprof_zone_duration_seconds Time inside each zone, "
         "begin to end with nested zones, over every complete live "
         "interval of the session.\n"
         "# TYPE pipeprof_zone_duration_seconds histogram\n");
  char name[NAME_MAX_BYTES];
  size_t left_out = 0;
  for (size_t i = 0; h->zone_name(i, name, sizeof name) == 0 && !p->oom; i++) {
    uint64_t total = 0;
    double sum = 0;
    /* a name as long as the buffer may have been cut: not asked for under
     * another name */
    if (strlen(name) + 1 >= sizeof name ||
        h->zone_cumulative(name, le, NB, counts, &total, &sum) != 0) {
      left_out++;
      continue;
    }
    for (int k = 0; k < NB; k++) {
      put(p, "pipeprof_zone_duration_seconds_bucket{zone=\"");
      put_label(p, name);
      put(p, "\",le=\"%.9g\"} %llu\n", (double)le[k] * 1e-9,
          (unsigned long long)counts[k]);
    }
    put(p, "pipeprof_zone_duration_seconds_bucket{zone=\"");
    put_label(p, name);
    put(p, "\",le=\"+Inf\"} %llu\n", (unsigned long long)total);
    put(p, "pipeprof_zone_duration_seconds_sum{zone=\"");
    put_label(p, name);
    put(p, "\"} %.9g\n", sum * 1e-9);
    put(p, "pipeprof_zone_duration_seconds_count{zone=\"");
    put_label(p, name);
    put(p, "\"} %llu\n", (unsigned long long)total);
  }
  put(p,
      "# HELP pipeprof_metrics_zones_left_out Zone names this page "
      "could not show (a name of %d bytes or more).\n"
      "# TYPE pipeprof_metrics_zones_left_out gauge\n"
      "pipeprof_metrics_zones_left_out %zu\n",
      NAME_MAX_BYTES - 1, left_out);
}

char *pp_metrics_page(const pp_http_host *h, size_t *len) {
  page p = {NULL, 0, 0, 0};
  p.cap = 4096;
  p.b = malloc(p.cap);
  if (!p.b)
    return NULL;
  p.b[0] = 0;
  put(&p, "# HELP pipeprof_build_info The pipeprof library serving this "
          "page; always 1.\n"
          "# TYPE pipeprof_build_info gauge\n"
          "pipeprof_build_info{version=\"");
  put_label(&p, h->version ? h->version : "");
  put(&p, "\"} 1\n");
  put(&p,
      "# HELP pipeprof_dropped_events_total Events not recorded "
      "because a thread's buffer was full.\n"
      "# TYPE pipeprof_dropped_events_total counter\n"
      "pipeprof_dropped_events_total %llu\n",
      (unsigned long long)h->dropped());
  zones(&p, h);
  if (p.oom) {
    free(p.b);
    return NULL;
  }
  *len = p.len;
  return p.b;
}
