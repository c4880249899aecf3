/* SPDX-License-Identifier: MIT */
/*
 * The /metrics page (see metrics.h and docs/http.md): build info, events
 * dropped, per zone a histogram of durations over the session so far,
 * the requests' latencies, frames, queues, the program's counters and the
 * library's sampled metrics, from the live statistics through the host
 * table. Text format 0.0.4, or OpenMetrics 1.0 when asked.
 */
#include "metrics.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "../metrics/registry.h"
#include "page.h"

#define NB (PP_METRICS_BUCKET_HI - PP_METRICS_BUCKET_LO + 1)
#define NAME_MAX_BYTES 512

/* A label value: backslash, double quote and newline escaped, as the
 * format asks. */
static void put_label(pp_page *p, const char *s) {
  for (; *s && !p->oom; s++) {
    if (*s == '\\')
      pp_page_put(p, "\\\\");
    else if (*s == '"')
      pp_page_put(p, "\\\"");
    else if (*s == '\n')
      pp_page_put(p, "\\n");
    else
      pp_page_putn(p, s, 1);
  }
}

/* HELP and TYPE (and UNIT in OpenMetrics) of the family whose samples are
 * named name. OpenMetrics names a counter's family without "_total", and
 * an info family without "_info". */
static void family(pp_page *p, int om, const char *name, const char *type,
                   const char *help) {
  size_t n = strlen(name);
  if (om && strcmp(type, "counter") == 0 && n > 6 &&
      strcmp(name + n - 6, "_total") == 0)
    n -= 6;
  if (om && strcmp(type, "info") == 0 && n > 5 &&
      strcmp(name + n - 5, "_info") == 0)
    n -= 5;
  if (!om && strcmp(type, "info") == 0)
    type = "gauge";
  pp_page_put(p, "# HELP %.*s %s\n# TYPE %.*s %s\n", (int)n, name, help, (int)n,
              name, type);
  if (!om)
    return;
  static const char *const units[] = {"seconds", "bytes",   "ratio", "joules",
                                      "watts",   "celsius", "hertz"};
  for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
    size_t u = strlen(units[i]);
    if (n > u + 1 && name[n - u - 1] == '_' &&
        strncmp(name + n - u, units[i], u) == 0) {
      pp_page_put(p, "# UNIT %.*s %s\n", (int)n, name, units[i]);
      break;
    }
  }
}

/* One sample: name{label="value"[,label2="value2"]} v */
static void sample(pp_page *p, const char *name, const char *label,
                   const char *value, const char *label2, const char *value2,
                   double v) {
  pp_page_put(p, "%s", name);
  if (label) {
    pp_page_put(p, "{%s=\"", label);
    put_label(p, value);
    if (label2) {
      pp_page_put(p, "\",%s=\"", label2);
      put_label(p, value2);
    }
    pp_page_put(p, "\"}");
  }
  if (isnan(v))
    pp_page_put(p, " NaN\n");
  else if (isinf(v))
    pp_page_put(p, v > 0 ? " +Inf\n" : " -Inf\n");
  else if (v == floor(v) && fabs(v) < 9e15)
    pp_page_put(p, " %.0f\n", v);
  else {
    /* the shortest form that reads back as v */
    char b[40];
    for (int prec = 15; prec <= 17; prec++) {
      snprintf(b, sizeof b, "%.*g", prec, v);
      if (strtod(b, NULL) == v)
        break;
    }
    pp_page_put(p, " %s\n", b);
  }
}

/* ---- histograms -----------------------------------------------------------
 */

/* The bucket bounds: powers of two from 2^LO to 2^HI ns, and with fine
 * three more edges of the live histograms (1 + j/32 of a power of two)
 * between each two, near its quarters. *n gets their number. */
#define NB_FINE ((NB - 1) * 4 + 1)
static const uint64_t *bounds(int fine, int *n) {
  static uint64_t le[NB], le_fine[NB_FINE];
  static const unsigned quarter[4] = {0, 6, 13, 22}; /* of 32 */
  if (!le[0]) {
    for (int i = 0; i < NB; i++)
      le[i] = UINT64_C(1) << (PP_METRICS_BUCKET_LO + i);
    for (int i = 0; i < NB_FINE; i++) {
      uint64_t p2 = UINT64_C(1) << (PP_METRICS_BUCKET_LO + i / 4);
      le_fine[i] = p2 + (p2 / 32) * quarter[i % 4];
    }
  }
  *n = fine ? NB_FINE : NB;
  return fine ? le_fine : le;
}

/* The histogram samples of one series (label NULL: none). 0 when the
 * host has no such series. */
static int histogram(pp_page *p, const pp_http_host *h, const char *name,
                     int kind, const char *series, const char *label,
                     unsigned parts) {
  uint64_t counts[NB_FINE], total = 0;
  double sum = 0;
  int nb;
  const uint64_t *le = bounds((parts & PP_METRICS_FINE) != 0, &nb);
  int rc = kind == PP_HTTP_SERIES_ZONE && h->size < sizeof *h
               ? h->zone_cumulative(series, le, (size_t)nb, counts, &total,
                                    &sum)
               : h->cumulative(kind, series, le, (size_t)nb, counts, &total,
                               &sum);
  if (rc != 0)
    return 0;
  for (int k = 0; k <= nb; k++) {
    pp_page_put(p, "%s_bucket{", name);
    if (label) {
      pp_page_put(p, "%s=\"", label);
      put_label(p, series);
      pp_page_put(p, "\",");
    }
    if (k < nb)
      pp_page_put(p, "le=\"%.9g\"} %llu\n", (double)le[k] * 1e-9,
                  (unsigned long long)counts[k]);
    else
      pp_page_put(p, "le=\"+Inf\"} %llu\n", (unsigned long long)total);
  }
  char sname[128];
  snprintf(sname, sizeof sname, "%s_sum", name);
  sample(p, sname, label, series, NULL, NULL, sum * 1e-9);
  snprintf(sname, sizeof sname, "%s_count", name);
  sample(p, sname, label, series, NULL, NULL, (double)total);
  return 1;
}

static void zones(pp_page *p, const pp_http_host *h, int om,
                  unsigned parts) {
  family(p, om, "pipeprof_zone_duration_seconds", "histogram",
         "Time inside each zone, begin to end with nested zones (a "
         "running session: its complete live intervals).");
  char name[NAME_MAX_BYTES];
  size_t left_out = 0;
  for (size_t i = 0; h->zone_name(i, name, sizeof name) == 0 && !p->oom; i++)
    /* a name as long as the buffer may have been cut: not asked for under
     * another name */
    if (strlen(name) + 1 >= sizeof name ||
        !histogram(p, h, "pipeprof_zone_duration_seconds", PP_HTTP_SERIES_ZONE,
                   name, "zone", parts))
      left_out++;
  family(p, om, "pipeprof_metrics_zones_left_out", "gauge",
         "Zone names this page could not show (a name of 511 bytes or "
         "more).");
  sample(p, "pipeprof_metrics_zones_left_out", NULL, NULL, NULL, NULL,
         (double)left_out);
}

static void requests(pp_page *p, const pp_http_host *h, int om,
                     unsigned parts) {
  static const struct {
    int kind;
    const char *name, *help;
  } req[] = {{PP_HTTP_SERIES_E2E, "pipeprof_request_duration_seconds",
              "Requests begin to end (successful requests)."},
             {PP_HTTP_SERIES_TTFT, "pipeprof_request_ttft_seconds",
              "Time to first token: request begin to its first output token."},
             {PP_HTTP_SERIES_TPOT, "pipeprof_request_tpot_seconds",
              "Time per output token after the first: (E2E - TTFT) / (tokens - "
              "1), requests with more than one token."},
             {PP_HTTP_SERIES_ITL, "pipeprof_request_itl_seconds",
              "Inter-token latency: gaps between consecutive token chunks of a "
              "request."}};
  for (size_t i = 0; i < sizeof req / sizeof *req; i++) {
    /* a family only once its series exists: an empty histogram would be
     * read as "no requests in this process" */
    uint64_t total;
    double sum;
    if (h->cumulative(req[i].kind, NULL, NULL, 0, NULL, &total, &sum) != 0)
      continue;
    family(p, om, req[i].name, "histogram", req[i].help);
    histogram(p, h, req[i].name, req[i].kind, NULL, NULL, parts);
  }
}

/* ---- the board: frames, queues, counters, library metrics ---------------- */

typedef struct board {
  pp__board_entry *e;
  size_t n, cap;
  int oom;
} board;

static void board_take(void *ctx, const pp__board_entry *e) {
  board *b = ctx;
  if (pp__grow((void **)&b->e, &b->cap, b->n + 1, sizeof *b->e) != 0) {
    b->oom = 1;
    return;
  }
  b->e[b->n++] = *e;
}

/* What a family's sample of a board entry is. */
enum { V_EVENTS, V_VALUE, V_POPS, V_WAITS };

static void frames_and_queues(pp_page *p, const board *b, int om) {
  /* program counters: "value" takes those the program sets (not_total),
   * "total" those it only adds to */
  static const struct {
    int kind, what, not_total;
    const char *name, *type, *help;
  } fam[] = {
      {PP__BOARD_FRAME, V_EVENTS, 0, "pipeprof_frames_total", "counter",
       "Frame marks (PP_FRAME_MARK) per frame stream."},
      {PP__BOARD_QUEUE, V_VALUE, 0, "pipeprof_queue_depth", "gauge",
       "Items in the queue at its last push or pop."},
      {PP__BOARD_QUEUE, V_EVENTS, 0, "pipeprof_queue_pushes_total", "counter",
       "Items pushed into the queue."},
      {PP__BOARD_QUEUE, V_POPS, 0, "pipeprof_queue_pops_total", "counter",
       "Items popped from the queue."},
      {PP__BOARD_QUEUE, V_WAITS, 0, "pipeprof_queue_waits_total", "counter",
       "Recorded waits on the queue: a producer on a full queue (on=\"full\"), "
       "a consumer on an empty one (on=\"empty\")."},
      {PP__BOARD_COUNTER, V_VALUE, 1, "pipeprof_program_value", "gauge",
       "The program's own counters (PP_COUNTER_*) that it sets, by name: the "
       "last value."},
      {PP__BOARD_COUNTER, V_VALUE, 0, "pipeprof_program_total", "counter",
       "The program's own counters that it only adds to "
       "(PP_COUNTER_ADD, non-negative deltas), by name: running totals."}};
  for (size_t f = 0; f < sizeof fam / sizeof *fam; f++) {
    int header = 0;
    for (size_t i = 0; i < b->n && !p->oom; i++) {
      const pp__board_entry *e = &b->e[i];
      if (e->kind != fam[f].kind ||
          (e->kind == PP__BOARD_COUNTER && !e->not_total != !fam[f].not_total))
        continue;
      if (!header++)
        family(p, om, fam[f].name, fam[f].type, fam[f].help);
      const char *label = e->kind == PP__BOARD_FRAME   ? "frame"
                          : e->kind == PP__BOARD_QUEUE ? "queue"
                                                       : "name";
      if (fam[f].what == V_WAITS) {
        sample(p, fam[f].name, label, e->name, "on", "full",
               (double)e->waits[0]);
        sample(p, fam[f].name, label, e->name, "on", "empty",
               (double)e->waits[1]);
        continue;
      }
      double v = fam[f].what == V_VALUE ? e->value
                 : fam[f].what == V_POPS ? (double)e->pops
                                         : (double)e->events;
      sample(p, fam[f].name, label, e->name, NULL, NULL, v);
    }
  }
}

/* The Prometheus family of a library metric (registry.h): the pattern
 * without its placeholders and unit suffix, dots as underscores, then the
 * base unit ("_ratio" for percentages, "_hertz" for MHz) and "_total" for
 * running totals; a "{N}" part becomes a label named by the word before
 * it, a "{*}" part a label named by the group. *scale converts the value
 * to the base unit. */
void pp_metrics_family(const pp_metric_def *d, char *out, size_t size,
                       char *label, size_t lsize, double *scale) {
  static const struct {
    pp_metric_unit unit;
    const char *suffix, *prom;
    double scale;
  } units[] = {
      {PP_UNIT_PERCENT, "_pct", "_ratio", 0.01},
      {PP_UNIT_BYTES_PER_SECOND, "_bytes_per_s", "_bytes_per_second", 1},
      {PP_UNIT_BYTES, "_bytes", "_bytes", 1},
      {PP_UNIT_PER_SECOND, "_per_s", "_per_second", 1},
      {PP_UNIT_SECONDS, "_s", "_seconds", 1},
      {PP_UNIT_MHZ, "_mhz", "_hertz", 1e6},
      {PP_UNIT_WATTS, "_w", "_watts", 1},
      {PP_UNIT_JOULES, "_j", "_joules", 1},
      {PP_UNIT_CELSIUS, "_c", "_celsius", 1},
      {PP_UNIT_MILLISECONDS, "", "_seconds", 1e-3},
      {PP_UNIT_COUNT, "_total", "", 1}};
  char base[128];
  size_t n = 0;
  label[0] = 0;
  for (const char *s = d->name; *s && n + 1 < sizeof base; s++) {
    if (s[0] == '{' && (s[1] == 'N' || s[1] == '*') && s[2] == '}') {
      if (s[1] == 'N') {
        /* the word before: "cpu" of "sys.cpu{N}" */
        size_t w = n;
        while (w > 0 && base[w - 1] != '.' && base[w - 1] != '_')
          w--;
        snprintf(label, lsize, "%.*s", (int)(n - w), base + w);
        if (!label[0]) /* "proc.thread.{N}" */ {
          size_t e = n - 1, s0 = e;
          while (s0 > 0 && base[s0 - 1] != '.')
            s0--;
          snprintf(label, lsize, "%.*s", (int)(e - s0), base + s0);
        }
      } else {
        static const char *const by_group[] = {[PP_GROUP_PRESSURE] = "resource",
                                               [PP_GROUP_THERMAL] = "sensor",
                                               [PP_GROUP_PERF] = "event",
                                               [PP_GROUP_POWER] = "domain"};
        const char *l = (size_t)d->group < sizeof by_group / sizeof *by_group
                            ? by_group[d->group]
                            : NULL;
        snprintf(label, lsize, "%s", l ? l : "name");
      }
      s += 2;
      continue;
    }
    base[n++] = *s == '.' || *s == '-' ? '_' : *s; /* "task-clock" */
  }
  base[n] = 0;
  const char *prom = "";
  *scale = 1;
  /* a running total's "_total" goes at the very end */
  if (d->kind == PP_METRIC_TOTAL && n >= 6 &&
      strcmp(base + n - 6, "_total") == 0)
    base[n -= 6] = 0;
  for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
    if (units[i].unit != d->unit)
      continue;
    size_t sl = strlen(units[i].suffix);
    if (n >= sl && strcmp(base + n - sl, units[i].suffix) == 0)
      base[n -= sl] = 0;
    prom = units[i].prom;
    *scale = units[i].scale;
    break;
  }
  /* placeholders leave "__" or a trailing "_" behind */
  char clean[96];
  size_t c = 0;
  for (size_t i = 0; base[i] && c + 1 < sizeof clean; i++)
    if (base[i] != '_' || (c > 0 && clean[c - 1] != '_'))
      clean[c++] = base[i];
  while (c > 0 && clean[c - 1] == '_')
    c--;
  clean[c] = 0;
  snprintf(out, size, "pipeprof_%s%s%s", clean, prom,
           d->kind == PP_METRIC_TOTAL ? "_total" : "");
}

typedef struct msample {
  pp_metric_id id;
  const char *family;   /* metric_family's */
  char label_value[80]; /* the {N} number or the {*} part */
  double value;
} msample;

/* By family, so that a family's samples stand together; then by row. */
static int by_family(const void *a, const void *b) {
  const msample *x = a, *y = b;
  int c = strcmp(x->family, y->family);
  return c ? c : (x->id > y->id) - (x->id < y->id);
}

static void library_metrics(pp_page *p, const board *b, int om,
                            unsigned parts) {
  char fams[PP_METRIC_COUNT][128], labels[PP_METRIC_COUNT][32];
  double scales[PP_METRIC_COUNT];
  for (int id = 0; id < PP_METRIC_COUNT; id++)
    pp_metrics_family(pp_metric_def_of(id), fams[id], sizeof fams[id],
                      labels[id], sizeof labels[id], &scales[id]);
  msample *m = malloc((b->n ? b->n : 1) * sizeof *m);
  if (!m) {
    p->oom = 1;
    return;
  }
  size_t n = 0;
  for (size_t i = 0; i < b->n; i++) {
    const pp__board_entry *e = &b->e[i];
    long ix;
    const char *fr;
    size_t fl;
    if (e->kind != PP__BOARD_METRIC)
      continue;
    pp_metric_id id = pp_metric_lookup(e->name, &ix, &fr, &fl);
    if (id == PP_METRIC_NONE ||
        (id == PP_METRIC_PROC_THREAD_CPU && !(parts & PP_METRICS_THREADS)))
      continue;
    m[n].id = id;
    m[n].family = fams[id];
    m[n].value = e->value * scales[id];
    if (ix >= 0)
      snprintf(m[n].label_value, sizeof m->label_value, "%ld", ix);
    else
      snprintf(m[n].label_value, sizeof m->label_value, "%.*s",
               (int)(fl < 79 ? fl : 79), fr ? fr : "");
    n++;
  }
  qsort(m, n, sizeof *m, by_family);
  for (size_t i = 0; i < n && !p->oom; i++) {
    pp_metric_id id = m[i].id;
    const pp_metric_def *d = pp_metric_def_of(id);
    const char *label = labels[id][0] ? labels[id] : NULL;
    const char *value = m[i].label_value;
    /* An aggregate whose family is also a labelled row's (sys.cpu.busy_pct
     * beside sys.cpu{N}.busy_pct) joins it with the label value "all". */
    for (int j = 0; j < PP_METRIC_COUNT && !label; j++)
      if (j != (int)id && labels[j][0] && strcmp(fams[j], fams[id]) == 0) {
        label = labels[j];
        value = "all";
      }
    if (i == 0 || strcmp(m[i - 1].family, m[i].family) != 0)
      family(p, om, fams[id], d->kind == PP_METRIC_TOTAL ? "counter" : "gauge",
             d->help);
    sample(p, fams[id], label, value, NULL, NULL, m[i].value);
  }
  free(m);
}

/* Queue waits, item push to pop, by the board's queues. */
static void queue_waits(pp_page *p, const pp_http_host *h, const board *b,
                        int om, unsigned parts) {
  int header = 0;
  for (size_t i = 0; i < b->n && !p->oom; i++) {
    if (b->e[i].kind != PP__BOARD_QUEUE)
      continue;
    uint64_t total;
    double sum;
    if (h->cumulative(PP_HTTP_SERIES_QUEUE_WAIT, b->e[i].name, NULL, 0, NULL,
                      &total, &sum) != 0)
      continue;
    if (!header++)
      family(p, om, "pipeprof_queue_wait_seconds", "histogram",
             "Time items waited in the queue, push to pop.");
    histogram(p, h, "pipeprof_queue_wait_seconds", PP_HTTP_SERIES_QUEUE_WAIT,
              b->e[i].name, "queue", parts);
  }
}

char *pp_metrics_page_served(const pp_http_host *h, int om, unsigned parts,
                             const pp_metrics_server *server, size_t *len) {
  pp_page p;
  if (pp_page_init(&p) != 0)
    return NULL;
  if (parts & PP_METRICS_INFO) {
    family(&p, om, "pipeprof_build_info", "info",
           "The pipeprof library serving this page; always 1.");
    sample(&p, "pipeprof_build_info", "version", h->version ? h->version : "",
           NULL, NULL, 1);
  }
  if ((parts & PP_METRICS_INFO) && server) {
    family(&p, om, "pipeprof_http_connections_displaced_total", "counter",
           "Connections of this endpoint shut down to make room for new "
           "ones: they had sent no whole request while the endpoint was "
           "full.");
    sample(&p, "pipeprof_http_connections_displaced_total", NULL, NULL, NULL,
           NULL, (double)server->displaced);
    family(&p, om, "pipeprof_http_requests_refused_host_total", "counter",
           "Requests this endpoint refused (403) for a Host header it does "
           "not answer (PIPEPROF_HTTP_HOSTS).");
    sample(&p, "pipeprof_http_requests_refused_host_total", NULL, NULL, NULL,
           NULL, (double)server->refused_host);
  }
  if (parts & PP_METRICS_PROGRAM) {
    family(&p, om, "pipeprof_dropped_events_total", "counter",
           "Events not recorded because a thread's buffer was full.");
    sample(&p, "pipeprof_dropped_events_total", NULL, NULL, NULL, NULL,
           (double)h->dropped());
    zones(&p, h, om, parts);
  }
  if (h->size >= sizeof *h) {
    if (parts & PP_METRICS_PROGRAM)
      requests(&p, h, om, parts);
    board b = {NULL, 0, 0, 0};
    uint64_t left_out = 0;
    if (h->board(board_take, &b, &left_out) == 0 && !b.oom) {
      if (parts & PP_METRICS_PROGRAM) {
        frames_and_queues(&p, &b, om);
        queue_waits(&p, h, &b, om, parts);
      }
      if (parts & PP_METRICS_SAMPLES)
        library_metrics(&p, &b, om, parts);
      if (parts & PP_METRICS_PROGRAM) {
        family(&p, om, "pipeprof_metrics_sites_left_out", "gauge",
               "Counter, frame and queue sites this page could not show "
               "(more than 4096).");
        sample(&p, "pipeprof_metrics_sites_left_out", NULL, NULL, NULL, NULL,
               (double)left_out);
      }
    }
    p.oom |= b.oom;
    free(b.e);
  }
  if (om && (parts & PP_METRICS_EOF))
    pp_page_put(&p, "# EOF\n");
  return pp_page_finish(&p, len);
}

char *pp_metrics_page_parts(const pp_http_host *h, int om, unsigned parts,
                            size_t *len) {
  return pp_metrics_page_served(h, om, parts, NULL, len);
}

char *pp_metrics_page(const pp_http_host *h, int om, size_t *len) {
  return pp_metrics_page_parts(h, om, PP_METRICS_ALL, len);
}
