/* SPDX-License-Identifier: MIT */
/*
 * /api/v1 (api.h): the running session's figures as JSON. Every document
 * is written with the exporters' JSON writer (export/jsonw.h) into memory.
 */
#include "api.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../export/doc_json.h"
#include "../export/jsonw.h"
#include "../results/counters.h"
#include "../results/frames.h"
#include "../results/header.h"
#include "../results/queues.h"
#include "../results/requests.h"
#include "../results/zones.h"
#include "../internal.h"
#include "../metrics/registry.h"

#define API_VERSION 1
#define SCHEMA_MINOR 19

/* ---- what the host holds, copied out of its locks ------------------------ */

typedef struct one_series {
  int kind;
  char *name;
  pp_live_stats win[4];
} one_series;

/* A history copied out of the host's locks (pts owned). */
typedef struct one_history {
  int kind; /* a PP_HTTP_SERIES_*, or 100 + a board kind */
  char *name;
  int library_metric;
  pp__live_point *spts;  /* series */
  pp__board_point *bpts; /* board entries */
  size_t n;
} one_history;

typedef struct state {
  const pp_http_host *host; /* for the histograms, asked while writing */
  pp_http_info info;
  one_series *ser;
  size_t nser, capser;
  pp__board_entry *board;
  size_t nboard, capboard;
  uint64_t board_left_out;
  pp_alert *alerts; /* strings copied into text */
  char (*text)[3][256];
  size_t nalerts;
  one_history *hist;
  size_t nhist, caphist;
  int oom;
} state;

static void take_series(void *ctx, int kind, const char *name,
                        const pp_live_stats win[4]) {
  state *s = ctx;
  if (s->oom ||
      pp__grow((void **)&s->ser, &s->capser, s->nser + 1, sizeof *s->ser)) {
    s->oom = 1;
    return;
  }
  one_series *o = &s->ser[s->nser];
  if (!(o->name = strdup(name ? name : ""))) {
    s->oom = 1;
    return;
  }
  o->kind = kind;
  memcpy(o->win, win, sizeof o->win);
  s->nser++;
}

static void take_board(void *ctx, const pp__board_entry *e) {
  state *s = ctx;
  if (s->oom || pp__grow((void **)&s->board, &s->capboard, s->nboard + 1,
                         sizeof *s->board)) {
    s->oom = 1;
    return;
  }
  s->board[s->nboard++] = *e; /* names live until the process exits */
}

static void take_alert(void *ctx, const pp_alert *a) {
  state *s = ctx;
  if (s->oom || s->nalerts >= 64)
    return;
  pp_alert *o = &s->alerts[s->nalerts];
  *o = *a;
  snprintf(s->text[s->nalerts][0], 256, "%s", a->what ? a->what : "");
  snprintf(s->text[s->nalerts][1], 256, "%s", a->which ? a->which : "");
  snprintf(s->text[s->nalerts][2], 256, "%s", a->message ? a->message : "");
  o->what = s->text[s->nalerts][0];
  o->which = s->text[s->nalerts][1];
  o->message = s->text[s->nalerts][2];
  s->nalerts++;
}

static one_history *hist_new(state *s, int kind, const char *name, size_t n,
                             size_t elem) {
  if (s->oom ||
      pp__grow((void **)&s->hist, &s->caphist, s->nhist + 1, sizeof *s->hist)) {
    s->oom = 1;
    return NULL;
  }
  one_history *h = &s->hist[s->nhist];
  memset(h, 0, sizeof *h);
  void *pts = malloc(n * elem);
  if (!pts || !(h->name = strdup(name ? name : ""))) {
    free(pts);
    s->oom = 1;
    return NULL;
  }
  if (kind >= 100)
    h->bpts = pts;
  else
    h->spts = pts;
  h->kind = kind;
  h->n = n;
  s->nhist++;
  return h;
}

static void take_series_history(void *ctx, int kind, const char *name,
                                const pp__live_point *pts, size_t n) {
  one_history *h = hist_new(ctx, kind, name, n, sizeof *pts);
  if (h)
    memcpy(h->spts, pts, n * sizeof *pts);
}

static void take_board_history(void *ctx, const pp__board_entry *e,
                               const pp__board_point *pts, size_t n) {
  one_history *h = hist_new(ctx, 100 + e->kind, e->name, n, sizeof *pts);
  if (h) {
    memcpy(h->bpts, pts, n * sizeof *pts);
    h->library_metric = e->kind == PP__BOARD_METRIC;
  }
}

static void state_free(state *s) {
  for (size_t i = 0; i < s->nhist; i++) {
    free(s->hist[i].name);
    free(s->hist[i].spts);
    free(s->hist[i].bpts);
  }
  free(s->hist);
  for (size_t i = 0; i < s->nser; i++)
    free(s->ser[i].name);
  free(s->ser);
  free(s->board);
  free(s->alerts);
  free(s->text);
}

/* 0, or -1 (out of memory, or no session: *gone set). */
static int state_load(const pp_http_host *h, state *s, int *gone) {
  memset(s, 0, sizeof *s);
  s->host = h;
  *gone = 0;
  s->alerts = malloc(64 * sizeof *s->alerts);
  s->text = malloc(64 * sizeof *s->text);
  if (!s->alerts || !s->text) {
    state_free(s);
    return -1;
  }
  if (h->info(&s->info) != 0 || h->series(take_series, s) != 0 ||
      h->board(take_board, s, &s->board_left_out) != 0 ||
      h->alerts(take_alert, s) != 0) {
    *gone = 1;
    state_free(s);
    return -1;
  }
  if (h->size >= sizeof *h && h->history)
    h->history(take_series_history, take_board_history, s);
  if (s->oom) {
    state_free(s);
    return -1;
  }
  return 0;
}

/* ---- writing ---------------------------------------------------------------
 */

typedef struct doc {
  FILE *f;
  char *buf;
  size_t len;
  pp_jsonw w;
} doc;

static int doc_open(doc *d) {
  memset(d, 0, sizeof *d);
  if (!(d->f = open_memstream(&d->buf, &d->len)))
    return -1;
  if (pp_jsonw_init(&d->w, d->f) != 0) {
    pp_jsonw_finish(&d->w);
    fclose(d->f);
    free(d->buf);
    return -1;
  }
  return 0;
}

static char *doc_close(doc *d, size_t *len) {
  pp_jsonw_putc(&d->w, '\n');
  int bad = pp_jsonw_finish(&d->w) != 0;
  bad |= fclose(d->f) != 0;
  if (bad) {
    free(d->buf);
    return NULL;
  }
  *len = d->len;
  return d->buf;
}

static int window_index(int window_s) {
  return window_s == 1 ? 0 : window_s == 10 ? 1 : window_s == 60 ? 2 : 3;
}

/* The figures of one window, with the summary's names. */
static void stats_members(pp_jsonw *w, const pp_live_stats *st) {
  pp_jsonw_kv_uint(w, "count", st->count);
  pp_jsonw_kv_double(w, "seconds", st->seconds);
  pp_jsonw_kv_double(w, "rate_per_s", st->rate);
  pp_jsonw_kv_double(w, "ewma_rate_per_s", st->ewma_rate);
  pp_jsonw_kv_double(w, "mean_ns", st->mean_ns);
  pp_jsonw_kv_uint(w, "p50_ns", st->p50_ns);
  pp_jsonw_kv_uint(w, "p90_ns", st->p90_ns);
  pp_jsonw_kv_uint(w, "p99_ns", st->p99_ns);
  pp_jsonw_kv_uint(w, "max_ns", st->max_ns);
  pp_jsonw_kv_int(w, "as_of_ns", st->as_of_ns);
}

static void stats(pp_jsonw *w, const pp_live_stats *st) {
  pp_jsonw_obj_begin(w);
  stats_members(w, st);
  pp_jsonw_obj_end(w);
}

static const char *kind_name(int kind) {
  static const char *const k[] = {"zone",         "request e2e", "request ttft",
                                  "request tpot", "request itl", "queue wait",
                                  "frame"};
  return kind >= 0 && kind <= 6 ? k[kind] : "?";
}

static const one_series *find_series(const state *s, int kind,
                                     const char *name) {
  for (size_t i = 0; i < s->nser; i++)
    if (s->ser[i].kind == kind && (!name || strcmp(s->ser[i].name, name) == 0))
      return &s->ser[i];
  return NULL;
}

static void process_member(pp_jsonw *w, const char *key, long pid,
                           const char *name) {
  pp_jsonw_key(w, key);
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_int(w, "pid", pid);
  if (name && name[0])
    pp_jsonw_kv_str(w, "name", name);
  else {
    pp_jsonw_key(w, "name");
    pp_jsonw_null(w);
  }
  pp_jsonw_obj_end(w);
}

/* Whether the session serves another process's figures (`pipeprof run`):
 * then that process, the subject, is in *pid and name, and this one is
 * the profiler. */
static int subject_of(const state *s, long *pid, char *name, size_t len) {
  return s->host->size >= sizeof *s->host && s->host->subject &&
         s->host->subject(pid, name, len) == 0;
}

static void header(pp_jsonw *w, const state *s, const char *schema) {
  pp_jsonw_kv_str(w, "schema", schema);
  pp_jsonw_kv_int(w, "schema_version", 1);
  if (strcmp(schema, "pipeprof.summary") == 0)
    pp_jsonw_kv_int(w, "schema_minor", SCHEMA_MINOR);
  pp_jsonw_kv_int(w, "api_version", API_VERSION);
  pp_jsonw_key(w, "generator");
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_str(w, "name", "pipeprof");
  pp_jsonw_obj_end(w);
  /* the subject, when the session serves another process's figures
   * (`pipeprof run`): then this process is the profiler */
  char subject[64];
  long subject_pid;
  int other = subject_of(s, &subject_pid, subject, sizeof subject);
  process_member(w, "process", other ? subject_pid : s->info.pid,
                 other ? subject : s->info.process_name);
  if (other)
    process_member(w, "profiler", s->info.pid, s->info.process_name);
  pp_jsonw_kv_str(w, "mode", s->info.mode);
  pp_jsonw_kv_str(w, "clock", "monotonic");
}

/* "header": the results document's facts of what is profiled (the
 * subject of `pipeprof run --http`, else this process), as the report's. */
static void header_member(pp_jsonw *w, const state *s, int64_t wall_ns,
                          uint64_t dropped, pp_doc *results) {
  char subject[64], pid[24];
  long subject_pid;
  int other = subject_of(s, &subject_pid, subject, sizeof subject);
  snprintf(pid, sizeof pid, "%ld", other ? subject_pid : (long)s->info.pid);
  pp_header_figures f = {
      .process_name = other ? subject : s->info.process_name,
      .process_pid = pid,
      .has_profiler_pid = other,
      .profiler_pid = (uint32_t)s->info.pid,
      .mode = s->info.mode,
      .provider_transitions = -1,
      .wall_ns = (double)wall_ns,
      .events_why = "the live engine counts no events",
      .dropped = dropped};
  pp_table *t = pp_results_header(results, &f);
  pp_jsonw_key(w, "header");
  pp_jsonw_obj_begin(w);
  pp_doc_json_facts(w, t);
  pp_jsonw_obj_end(w);
}

/* The time the figures are as of: the latest closed interval of a series
 * (window wi), or the latest event on the board (samples, counters,
 * queues), whichever is later; 0 when there is nothing yet. */
static int64_t figures_as_of(const state *s, int wi) {
  int64_t as_of = 0;
  for (size_t i = 0; i < s->nser; i++)
    if (s->ser[i].win[wi].as_of_ns > as_of)
      as_of = s->ser[i].win[wi].as_of_ns;
  for (size_t i = 0; i < s->nboard; i++)
    if (s->board[i].last_ns > as_of)
      as_of = s->board[i].last_ns;
  return as_of;
}

/* "live": what the document is a view of. */
static void live_member(pp_jsonw *w, const state *s, int window_s) {
  int64_t as_of = figures_as_of(s, 3);
  pp_jsonw_key(w, "live");
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_double(w, "interval_s", (double)s->info.interval_ns * 1e-9);
  pp_jsonw_kv_int(w, "window_s", window_s);
  pp_jsonw_kv_int(w, "as_of_ns", as_of);
  pp_jsonw_kv_int(w, "now_ns", s->info.now_ns);
  pp_jsonw_obj_end(w);
}

/* "hist" of a series as the summary's (schema_minor 13): counts between
 * bounds a quarter of a power of two apart (each an edge of the live
 * histograms' buckets, so the counts are exact), from 1.024 us to 2^36 ns,
 * from the first non-empty bucket to the last; a last bucket up to 2^37 ns
 * holds the longer values. Over the session so far. */
#define HB (27 * 4)
static void hist_member(pp_jsonw *w, const state *s, int kind,
                        const char *name) {
  if (!s->host->cumulative)
    return;
  uint64_t le[HB + 1], cum[HB + 1], total = 0;
  double sum;
  for (int e = 0; e < 27; e++)
    for (int q = 0; q < 4; q++)
      le[e * 4 + q] = (UINT64_C(1) << (10 + e)) / 4 * (uint64_t)(4 + q);
  if (s->host->cumulative(kind, name, le, HB, cum, &total, &sum) != 0 ||
      !total)
    return;
  le[HB] = UINT64_C(1) << 37;
  cum[HB] = total;
  int first = -1, last = -1;
  for (int i = 0; i <= HB; i++) {
    uint64_t c = cum[i] - (i ? cum[i - 1] : 0);
    if (c && first < 0)
      first = i;
    if (c)
      last = i;
  }
  pp_jsonw_key(w, "hist");
  pp_jsonw_obj_begin(w);
  pp_jsonw_key(w, "le_ns");
  pp_jsonw_arr_begin(w);
  for (int i = first; i <= last; i++)
    pp_jsonw_uint(w, le[i]);
  pp_jsonw_arr_end(w);
  pp_jsonw_key(w, "counts");
  pp_jsonw_arr_begin(w);
  for (int i = first; i <= last; i++)
    pp_jsonw_uint(w, cum[i] - (i ? cum[i - 1] : 0));
  pp_jsonw_arr_end(w);
  pp_jsonw_obj_end(w);
}

/* A window object with the series's session histogram in it. */
static void stats_with_hist(pp_jsonw *w, const state *s,
                            const pp_live_stats *st, int kind,
                            const char *name) {
  pp_jsonw_obj_begin(w);
  stats_members(w, st);
  hist_member(w, s, kind, name);
  pp_jsonw_obj_end(w);
}

/* Zone rows: the results document's table (results/zones.h) from the
 * zone series' window wi, and each row's histogram over the session. The
 * live windows keep no nesting (no self time) and, of the durations, the
 * mean, p50, p90, p99 and max: the other cells say so. */
typedef struct zone_rows {
  const state *s;
  const pp_table *t;
} zone_rows;

static void zone_hist(pp_jsonw *w, size_t r, void *ctx) {
  const zone_rows *x = ctx;
  const pp_cell *name = pp_table_cell(x->t, r, 0);
  if (name->kind == PP_CELL_TEXT)
    hist_member(w, x->s, PP_HTTP_SERIES_ZONE, name->text);
}

static void zones_member(pp_jsonw *w, const state *s, int wi, double wall_ns,
                         pp_doc *results) {
  size_t n = 0;
  for (size_t i = 0; i < s->nser; i++)
    n += s->ser[i].kind == PP_HTTP_SERIES_ZONE;
  pp_zone_figures *f = calloc(n ? n : 1, sizeof *f);
  pp_table *t = NULL;
  if (f) {
    size_t k = 0;
    for (size_t i = 0; i < s->nser; i++) {
      const one_series *o = &s->ser[i];
      const pp_live_stats *st = &o->win[wi];
      if (o->kind != PP_HTTP_SERIES_ZONE)
        continue;
      double total = st->mean_ns * (double)st->count;
      int any = st->count > 0;
      f[k++] = (pp_zone_figures){
          .name = o->name,
          .count = st->count,
          .total_ns = total,
          .self_ns = NAN,
          .mean_ns = any ? st->mean_ns : NAN,
          .std_ns = NAN,
          .min_ns = NAN,
          .max_ns = any ? (double)st->max_ns : NAN,
          .p50_ns = any ? (double)st->p50_ns : NAN,
          .p90_ns = any ? (double)st->p90_ns : NAN,
          .p95_ns = NAN,
          .p99_ns = any ? (double)st->p99_ns : NAN,
          .p999_ns = NAN,
          .wall_pct = wall_ns > 0 ? total / wall_ns * 100 : NAN,
          .rate_per_s = st->rate};
    }
    static const pp_zone_whys why = {
        .self = "the live windows keep no nesting (the report of the "
                "trace has it)",
        .spread = "the live windows keep the mean, p50, p90, p99 and max "
                  "(the report of the trace has the rest)"};
    t = pp_results_zones(results, f, n, &why);
  }
  free(f);
  zone_rows rows = {s, t};
  pp_jsonw_key(w, "zones");
  pp_doc_json_rows(w, t, zone_hist, &rows); /* no table: [] */
}

static void alerts_array(pp_jsonw *w, const state *s) {
  pp_jsonw_key(w, "alerts");
  pp_jsonw_arr_begin_lines(w);
  for (size_t i = 0; i < s->nalerts; i++) {
    const pp_alert *a = &s->alerts[i];
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "type",
                    a->kind == PP_ALERT_ANOMALY ? "anomaly" : "alert");
    pp_jsonw_kv_int(w, "t_ns", a->ts_ns);
    pp_jsonw_kv_str(w, "what", a->what);
    pp_jsonw_kv_str(w, "which", a->which);
    pp_jsonw_kv_str(w, "message", a->message);
    pp_jsonw_kv_double(w, "value", a->value);
    pp_jsonw_kv_double(w, "baseline", a->baseline);
    pp_jsonw_kv_double(w, "spread", a->spread);
    pp_jsonw_kv_double(w, "threshold", a->threshold);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
}

static void metrics_array(pp_jsonw *w, const state *s) {
  pp_jsonw_key(w, "metrics");
  pp_jsonw_arr_begin_lines(w);
  for (size_t i = 0; i < s->nboard; i++) {
    const pp__board_entry *e = &s->board[i];
    if (e->kind != PP__BOARD_METRIC)
      continue;
    pp_metric_id id = pp_metric_lookup(e->name, NULL, NULL, NULL);
    const pp_metric_def *d = pp_metric_def_of(id);
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "name", e->name);
    pp_jsonw_kv_double(w, "value", e->value);
    pp_jsonw_kv_int(w, "t_ns", e->last_ns);
    pp_jsonw_kv_uint(w, "samples", e->events);
    if (d) {
      pp_jsonw_kv_str(w, "unit", pp_metric_unit_name(d->unit));
      pp_jsonw_kv_str(w, "group", pp_metric_group_name(d->group));
      pp_jsonw_kv_str(w, "kind",
                      d->kind == PP_METRIC_TOTAL ? "total" : "gauge");
      pp_jsonw_kv_str(w, "help", d->help);
    }
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
}

/* The live members of a latency row beyond the table: its window's length,
 * rates and time. */
typedef struct latency_rows {
  const pp_live_stats *st[4];
} latency_rows;

static void latency_more(pp_jsonw *w, size_t r, void *ctx) {
  const latency_rows *x = ctx;
  const pp_live_stats *st = r < 4 ? x->st[r] : NULL;
  if (!st)
    return;
  pp_jsonw_kv_double(w, "seconds", st->seconds);
  pp_jsonw_kv_double(w, "rate_per_s", st->rate);
  pp_jsonw_kv_double(w, "ewma_rate_per_s", st->ewma_rate);
  pp_jsonw_kv_int(w, "as_of_ns", st->as_of_ns);
}

/* "requests": the completed requests and their rate over the window, and
 * the latency rows of the results document (results/requests.h) from the
 * request series' window: "e2e": {...} as the summary's. */
static void request_member(pp_jsonw *w, const state *s, int wi,
                           pp_doc *results) {
  static const struct {
    int kind;
    const char *key, *metric;
  } m[] = {{PP_HTTP_SERIES_E2E, "e2e", "E2E"},
           {PP_HTTP_SERIES_TTFT, "ttft", "TTFT"},
           {PP_HTTP_SERIES_TPOT, "tpot", "TPOT"},
           {PP_HTTP_SERIES_ITL, "itl", "ITL"}};
  pp_latency_figures f[4];
  latency_rows more = {{NULL}};
  size_t n = 0;
  for (size_t i = 0; i < 4; i++) {
    const one_series *o = find_series(s, m[i].kind, NULL);
    if (!o)
      continue;
    const pp_live_stats *st = &o->win[wi];
    more.st[n] = st;
    f[n++] = (pp_latency_figures){.key = m[i].key,
                                  .metric = m[i].metric,
                                  .count = st->count,
                                  .mean_ns = st->mean_ns,
                                  .min_ns = NAN,
                                  .p50_ns = (double)st->p50_ns,
                                  .p90_ns = (double)st->p90_ns,
                                  .p95_ns = NAN,
                                  .p99_ns = (double)st->p99_ns,
                                  .p999_ns = NAN,
                                  .max_ns = (double)st->max_ns};
  }
  if (!n)
    return; /* as the summary: present only with requests */
  const one_series *e2e = find_series(s, PP_HTTP_SERIES_E2E, NULL);
  pp_jsonw_key(w, "requests");
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_bool(w, "available", 1);
  /* the facts the live windows have, laid out as the report's */
  pp_table *facts = pp_doc_facts(results, "request_facts", "requests",
                                 "over the live window");
  pp_fact_int(facts, "completed", "completed",
              e2e ? (int64_t)e2e->win[wi].count : 0, PP_VALUE_COUNT);
  pp_fact_num(facts, "requests_per_s", "throughput",
              e2e ? e2e->win[wi].rate : 0, PP_VALUE_RATE);
  pp_doc_json_facts(w, facts);
  pp_doc_json_keyed(
      w,
      pp_results_request_latency(results, f, n,
                                 "the live windows keep the mean, p50, "
                                 "p90, p99 and max (the report of the "
                                 "trace has the rest)"),
      "key", latency_more, &more);
  pp_jsonw_obj_end(w);
}

/* A live table's rows, the state and window they came from, for the
 * row hooks (pp_doc_row_fn): a row's name is the table's first cell. */
typedef struct live_rows {
  const state *s;
  const pp_table *t;
  int wi;
} live_rows;

static const char *row_name(const live_rows *x, size_t r) {
  const pp_cell *name = pp_table_cell(x->t, r, 0);
  return name->kind == PP_CELL_TEXT ? name->text : NULL;
}

/* Window wi of the series kind/name when it holds values, else NULL. */
static const pp_live_stats *window_of(const state *s, int kind,
                                      const char *name, int wi) {
  const one_series *o = find_series(s, kind, name);
  return o && o->win[wi].count ? &o->win[wi] : NULL;
}

/* A queues row's "wait": its items' waits over the window. */
static void queue_wait(pp_jsonw *w, size_t r, void *ctx) {
  const live_rows *x = ctx;
  const char *name = row_name(x, r);
  const one_series *o =
      name ? find_series(x->s, PP_HTTP_SERIES_QUEUE_WAIT, name) : NULL;
  if (o) {
    pp_jsonw_key(w, "wait");
    stats_with_hist(w, x->s, &o->win[x->wi], PP_HTTP_SERIES_QUEUE_WAIT, name);
  }
}

/* A frames row's "hist": the frame times' histogram over the session, as
 * the report's. */
static void frame_hist(pp_jsonw *w, size_t r, void *ctx) {
  const char *name = row_name(ctx, r);
  if (name)
    hist_member(w, ((const live_rows *)ctx)->s, PP_HTTP_SERIES_FRAME, name);
}

/* The board entries of one kind. */
static size_t board_count(const state *s, int kind) {
  size_t n = 0;
  for (size_t i = 0; i < s->nboard; i++)
    n += s->board[i].kind == kind;
  return n;
}

/* "queues": the results document's table (results/queues.h), as the
 * report's, from the board's figures over the session so far (blocked
 * time: the waits that ended and those still open, as of the board's
 * publish); the items' waits over the window. */
static void queues_member(pp_jsonw *w, const state *s, int wi, pp_doc *results) {
  size_t n = board_count(s, PP__BOARD_QUEUE);
  pp_queue_figures *f = calloc(n ? n : 1, sizeof *f);
  pp_table *t = NULL;
  if (f) {
    size_t k = 0;
    for (size_t i = 0; i < s->nboard; i++) {
      const pp__board_entry *b = &s->board[i];
      if (b->kind != PP__BOARD_QUEUE)
        continue;
      const pp_live_stats *ws =
          window_of(s, PP_HTTP_SERIES_QUEUE_WAIT, b->name, wi);
      /* the waits that ended and those still open, as of the publish */
      double waited[2] = {(double)b->wait_ns[0] + (double)b->open_ns[0],
                          (double)b->wait_ns[1] + (double)b->open_ns[1]};
      f[k++] = (pp_queue_figures){
          .name = b->name,
          .from = b->from ? b->from : "",
          .to = b->to ? b->to : "",
          .depth = &b->depth,
          .pushes = (int64_t)b->events,
          .pops = (int64_t)b->pops,
          .paired = -1,
          .unmatched_pops = -1,
          .items_untracked = -1,
          .producer_waits = (int64_t)b->waits[0],
          .consumer_waits = (int64_t)b->waits[1],
          .producer_blocked_ns = waited[0],
          .consumer_waited_ns = waited[1],
          .producer_blocked_pct = pp_depth_wait_pct(
              &b->depth, waited[0], b->waits[0], b->waiters[0]),
          .consumer_waiting_pct = pp_depth_wait_pct(
              &b->depth, waited[1], b->waits[1], b->waiters[1]),
          .producer_waiters = b->waiters[0],
          .consumer_waiters = b->waiters[1],
          .waits_unclosed = -1,
          .wait_p50_ns = ws ? (double)ws->p50_ns : NAN,
          .wait_p99_ns = ws ? (double)ws->p99_ns : NAN,
          .wait_max_ns = ws ? (double)ws->max_ns : NAN,
          .why_blocked = NULL};
    }
    t = pp_results_queues(results, f, n);
  }
  free(f);
  live_rows rows = {s, t, wi};
  pp_jsonw_key(w, "queues");
  pp_doc_json_rows(w, t, queue_wait, &rows); /* no table: [] */
}

/* "frames": the results document's table (results/frames.h) from the
 * board (marks, rate over the session) and the frame-time series (its
 * window); no jitter or spread live. */
static void frames_member(pp_jsonw *w, const state *s, int wi,
                          pp_doc *results) {
  size_t n = board_count(s, PP__BOARD_FRAME);
  pp_frame_figures *f = calloc(n ? n : 1, sizeof *f);
  pp_table *t = NULL;
  if (f) {
    size_t k = 0;
    for (size_t i = 0; i < s->nboard; i++) {
      const pp__board_entry *e = &s->board[i];
      if (e->kind != PP__BOARD_FRAME)
        continue;
      double span = (double)(e->last_ns - e->first_ns) * 1e-9;
      const pp_live_stats *ws = window_of(s, PP_HTTP_SERIES_FRAME, e->name, wi);
      f[k++] = (pp_frame_figures){
          .name = e->name,
          .frames = e->events,
          .fps = e->events > 1 && span > 0 ? (double)(e->events - 1) / span
                                           : NAN,
          .mean_ns = ws ? ws->mean_ns : NAN,
          .std_ns = NAN,
          .jitter_ns = NAN,
          .p50_ns = ws ? (double)ws->p50_ns : NAN,
          .p90_ns = ws ? (double)ws->p90_ns : NAN,
          .p99_ns = ws ? (double)ws->p99_ns : NAN,
          .max_ns = ws ? (double)ws->max_ns : NAN};
    }
    t = pp_results_frames(results, f, n);
  }
  free(f);
  live_rows rows = {s, t, wi};
  pp_jsonw_key(w, "frames");
  pp_doc_json_rows(w, t, frame_hist, &rows); /* no table: [] */
}

/* "counters": the results document's counter tables (results/counters.h)
 * from the board, over the session so far (a counter added to: its
 * running total at each event), as the report's. */
static void counters_member(pp_jsonw *w, const state *s, pp_doc *results) {
  size_t n = board_count(s, PP__BOARD_COUNTER) +
             board_count(s, PP__BOARD_METRIC);
  pp_counter_figures *f = calloc(n ? n : 1, sizeof *f);
  int ok = f != NULL;
  for (size_t i = 0, k = 0; ok && i < s->nboard; i++) {
    const pp__board_entry *e = &s->board[i];
    if (e->kind != PP__BOARD_COUNTER && e->kind != PP__BOARD_METRIC)
      continue;
    int lib = e->kind == PP__BOARD_METRIC;
    double none = NAN;
    f[k++] = (pp_counter_figures){
        .name = e->name,
        .library_metric = lib,
        .is_float = e->is_float,
        .unit = pp_counter_unit(e->name, lib, e->is_float),
        .samples = e->events,
        .min = e->events ? e->vmin : none,
        .max = e->events ? e->vmax : none,
        .mean = e->events ? e->vsum / (double)e->events : none,
        .last = e->value};
  }
  if (ok)
    ok = pp_results_counters(results, f, n) == 0;
  free(f);
  pp_jsonw_key(w, "counters");
  pp_jsonw_arr_begin_lines(w);
  if (ok) {
    pp_doc_json_objects(w, pp_doc_find(results, "counters"), NULL, NULL);
    pp_doc_json_objects(w, pp_doc_find(results, "sampled_counters"), NULL,
                        NULL);
  }
  pp_jsonw_arr_end(w);
}

static void board_arrays(pp_jsonw *w, const state *s, int wi, pp_doc *results) {
  frames_member(w, s, wi, results);
  counters_member(w, s, results);
  queues_member(w, s, wi, results);
}

static void left_out(pp_jsonw *w, const state *s) {
  pp_jsonw_key(w, "left_out");
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_uint(w, "sites", s->board_left_out);
  pp_jsonw_obj_end(w);
}

/* The window's span: from the session's start, or the last window_s
 * intervals, to the end of the last interval published. */
static void span(const state *s, int window_s, int64_t *t0, int64_t *t1) {
  int64_t as_of = figures_as_of(s, window_index(window_s));
  *t0 = s->info.t0_ns;
  if (window_s > 0 && as_of - (int64_t)window_s * s->info.interval_ns > *t0)
    *t0 = as_of - (int64_t)window_s * s->info.interval_ns;
  *t1 = as_of > *t0 ? as_of : *t0;
}

/* One array of a history's points after t0: times relative to t0. */
static void points(pp_jsonw *w, const char *key, const one_history *h,
                   int64_t t0, int what) {
  pp_jsonw_key(w, key);
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < h->n; i++) {
    int64_t t = h->spts ? h->spts[i].end_ns : h->bpts[i].t_ns;
    if (t <= t0)
      continue;
    if (what == 0)
      pp_jsonw_int(w, t - t0);
    else if (h->spts)
      pp_jsonw_uint(w, what == 1   ? h->spts[i].count
                       : what == 2 ? h->spts[i].p50_ns
                                   : h->spts[i].max_ns);
    else
      pp_jsonw_double(w, what == 1   ? h->bpts[i].value
                         : what == 2 ? h->bpts[i].lo
                                     : h->bpts[i].hi);
  }
  pp_jsonw_arr_end(w);
}

/* "series": the recent intervals of each series, for charts (the shape
 * of the summary's series member, docs/formats/api-v1.md). */
static void series_member(pp_jsonw *w, const state *s, int64_t t0) {
  if (!s->nhist)
    return;
  static const struct {
    const char *key;
    int kind;
    const char *cols[3];
  } groups[] = {
      {"zones", PP_HTTP_SERIES_ZONE, {"count", "p50_ns", "max_ns"}},
      {"frames", PP_HTTP_SERIES_FRAME, {"count", "frame_ns", "frame_max_ns"}},
      {"requests", -1, {"count", "p50_ns", "max_ns"}},
      {"queue_waits", PP_HTTP_SERIES_QUEUE_WAIT, {"count", "p50_ns", "max_ns"}},
      {"counters", 100 + PP__BOARD_COUNTER, {"value", "min", "max"}},
      {"queues", 100 + PP__BOARD_QUEUE, {"depth", "depth_min", "depth_max"}}};
  pp_jsonw_key(w, "series");
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_int(w, "points_max", PP__BOARD_POINTS);
  pp_jsonw_kv_str(w, "points", "one per live interval");
  for (size_t g = 0; g < sizeof groups / sizeof *groups; g++) {
    pp_jsonw_key(w, groups[g].key);
    pp_jsonw_arr_begin_lines(w);
    for (size_t i = 0; i < s->nhist; i++) {
      const one_history *h = &s->hist[i];
      int k = h->kind;
      int in = groups[g].kind == -1
                   ? k >= PP_HTTP_SERIES_E2E && k <= PP_HTTP_SERIES_ITL
               : groups[g].kind == 100 + PP__BOARD_COUNTER
                   ? k == 100 + PP__BOARD_COUNTER || k == 100 + PP__BOARD_METRIC
                   : k == groups[g].kind;
      if (!in)
        continue;
      pp_jsonw_obj_begin(w);
      pp_jsonw_kv_str(w, "name", h->name);
      if (k >= 100 && k != 100 + PP__BOARD_QUEUE)
        pp_jsonw_kv_bool(w, "library_metric", h->library_metric);
      points(w, "t_ns", h, t0, 0);
      for (int c = 0; c < 3; c++)
        points(w, groups[g].cols[c], h, t0, c + 1);
      pp_jsonw_kv_bool(w, "downsampled", 0);
      pp_jsonw_obj_end(w);
    }
    pp_jsonw_arr_end(w);
  }
  pp_jsonw_obj_end(w);
}

static char *summary(const state *s, int window_s, size_t *len) {
  doc d;
  if (doc_open(&d) != 0)
    return NULL;
  pp_jsonw *w = &d.w;
  int wi = window_index(window_s);
  int64_t t0, t1;
  span(s, window_s, &t0, &t1);
  pp_doc *results = pp_doc_new(); /* the tables the page lays out */
  pp_jsonw_obj_begin(w);
  header(w, s, "pipeprof.summary");
  pp_jsonw_kv_int(w, "t0_ns", t0);
  pp_jsonw_kv_int(w, "t1_ns", t1);
  pp_jsonw_kv_int(w, "wall_ns", t1 - t0);
  live_member(w, s, window_s);
  /* the events the session could not record so far (the summary's
   * "dropped"; the live engine counts no "events") */
  pp_jsonw_key(w, "dropped");
  pp_jsonw_obj_begin(w);
  uint64_t dropped = s->host->dropped ? s->host->dropped() : 0;
  pp_jsonw_kv_uint(w, "total", dropped);
  pp_jsonw_obj_end(w);
  header_member(w, s, t1 - t0, dropped, results);
  zones_member(w, s, wi, (double)(t1 - t0), results);
  board_arrays(w, s, wi, results);
  request_member(w, s, wi, results);
  alerts_array(w, s);
  series_member(w, s, t0);
  left_out(w, s);
  pp_doc_json_layouts(w, results);
  pp_jsonw_obj_end(w);
  pp_doc_free(results);
  return doc_close(&d, len);
}

char *pp_api_summary(const pp_http_host *h, int window_s, size_t *len) {
  state s;
  int gone;
  if (state_load(h, &s, &gone) != 0)
    return NULL;
  char *r = summary(&s, window_s, len);
  state_free(&s);
  return r;
}

/* ---- the other documents ---------------------------------------------------
 */

static char *error_doc(unsigned code, unsigned *status, const char *msg,
                       size_t *len) {
  doc d;
  if (doc_open(&d) != 0)
    return NULL;
  pp_jsonw_obj_begin(&d.w);
  pp_jsonw_kv_str(&d.w, "error", msg);
  pp_jsonw_obj_end(&d.w);
  *status = code;
  return doc_close(&d, len);
}

static char *index_doc(size_t *len) {
  static const char *const paths[] = {"/api/v1/summary", "/api/v1/zones",
                                      "/api/v1/live",    "/api/v1/alerts",
                                      "/api/v1/system",  "/api/v1/stream"};
  doc d;
  if (doc_open(&d) != 0)
    return NULL;
  pp_jsonw_obj_begin(&d.w);
  pp_jsonw_kv_str(&d.w, "schema", "pipeprof.api");
  pp_jsonw_kv_int(&d.w, "api_version", API_VERSION);
  pp_jsonw_key(&d.w, "endpoints");
  pp_jsonw_arr_begin(&d.w);
  for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
    pp_jsonw_str(&d.w, paths[i]);
  pp_jsonw_arr_end(&d.w);
  pp_jsonw_obj_end(&d.w);
  return doc_close(&d, len);
}

/* /api/v1/live: every series with every window */
static char *live_doc(const state *s, size_t *len) {
  static const char *const wname[4] = {"1", "10", "60", "session"};
  doc d;
  if (doc_open(&d) != 0)
    return NULL;
  pp_jsonw *w = &d.w;
  pp_jsonw_obj_begin(w);
  header(w, s, "pipeprof.live");
  live_member(w, s, 0);
  pp_jsonw_key(w, "series");
  pp_jsonw_arr_begin_lines(w);
  for (size_t i = 0; i < s->nser; i++) {
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "kind", kind_name(s->ser[i].kind));
    pp_jsonw_kv_str(w, "name", s->ser[i].name);
    pp_jsonw_key(w, "windows");
    pp_jsonw_obj_begin(w);
    for (int k = 0; k < 4; k++) {
      pp_jsonw_key(w, wname[k]);
      stats(w, &s->ser[i].win[k]);
    }
    pp_jsonw_obj_end(w);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
  pp_jsonw_obj_end(w);
  return doc_close(&d, len);
}

static char *part_doc(const state *s, const char *what, int window_s,
                      size_t *len) {
  doc d;
  if (doc_open(&d) != 0)
    return NULL;
  pp_jsonw *w = &d.w;
  pp_jsonw_obj_begin(w);
  char schema[32];
  snprintf(schema, sizeof schema, "pipeprof.%s", what);
  header(w, s, schema);
  live_member(w, s, window_s);
  if (strcmp(what, "zones") == 0) {
    int64_t t0, t1;
    span(s, window_s, &t0, &t1);
    pp_doc *results = pp_doc_new();
    zones_member(w, s, window_index(window_s), (double)(t1 - t0), results);
    pp_doc_json_layouts(w, results);
    pp_doc_free(results);
  } else if (strcmp(what, "alerts") == 0) {
    alerts_array(w, s);
  } else {
    metrics_array(w, s);
    left_out(w, s);
  }
  pp_jsonw_obj_end(w);
  return doc_close(&d, len);
}

char *pp_api_page(const pp_http_host *h, const char *path, const char *window,
                  unsigned *status, size_t *len) {
  *status = 200;
  if (strcmp(path, "/api/v1") == 0 || strcmp(path, "/api/v1/") == 0)
    return index_doc(len);
  static const char *const known[] = {"summary", "zones", "live", "alerts",
                                      "system"};
  const char *what = NULL;
  for (size_t i = 0; i < sizeof known / sizeof *known; i++)
    if (strncmp(path, "/api/v1/", 8) == 0 && strcmp(path + 8, known[i]) == 0)
      what = known[i];
  if (!what)
    return error_doc(404, status, "no such document (see /api/v1)", len);
  int window_s = 0;
  if (window) {
    if (strcmp(window, "1") == 0 || strcmp(window, "10") == 0 ||
        strcmp(window, "60") == 0 || strcmp(window, "0") == 0)
      window_s = atoi(window);
    else
      return error_doc(400, status,
                       "window: expected 1, 10, 60 or 0 (the session)", len);
  }
  state s;
  int gone;
  if (state_load(h, &s, &gone) != 0)
    return gone ? error_doc(503, status,
                            "no live statistics (the session ended, or "
                            "PIPEPROF_LIVE=off)",
                            len)
                : NULL;
  char *r = strcmp(what, "summary") == 0 ? summary(&s, window_s, len)
            : strcmp(what, "live") == 0  ? live_doc(&s, len)
                                         : part_doc(&s, what, window_s, len);
  state_free(&s);
  return r;
}
