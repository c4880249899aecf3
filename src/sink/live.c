/* SPDX-License-Identifier: MIT */
/*
 * The live-statistics engine (see live.h and docs/live.md): zone, range and
 * request pairing, per-name rolling windows, EWMA rates, anomaly detectors,
 * resource-pressure alerts from the sampler's counters, and the snapshot
 * that pp_live_zone() reads.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ring/tally.h"
#include "../format/pptrace.h"
#include "../internal.h"
#include "../metrics/registry.h"
#include "../pair/intervals.h"
#include "../pair/requests.h"
#include "../pair/zones.h"
#include "../stats/live.h"
#include "board.h"
#include "live.h"

#define MAX_SERIES 1024u   /* names tracked; later ones are ignored */
#define SERIES_CACHE 16u   /* sites in zone_series's cache (power of two) */
#define MAX_THREADS 4096u  /* threads with zone stacks */
#define PAIR_CAP 65536u    /* open ranges (power of two) */
#define REQ_OPEN 49152u    /* open requests (pair/requests.h) */
#define PAIR_MAX_AGE_NS (600 * INT64_C(1000000000))
#define NOTE_QUEUE 256u
#define MAX_CPUS 1024u
#define MAX_GPUS 64u

enum {
  S_ZONE = PP__LIVE_ZONE,
  S_E2E = PP__LIVE_E2E,
  S_TTFT = PP__LIVE_TTFT,
  S_TPOT = PP__LIVE_TPOT,
  S_ITL = PP__LIVE_ITL,
  S_QWAIT = PP__LIVE_QWAIT,
  S_FRAME = PP__LIVE_FRAME
};

/* Counter classes the alerts watch. */
enum {
  C_UNKNOWN = 0, /* not classified yet */
  C_NONE,
  C_MEM_TOTAL,
  C_MEM_AVAIL,
  C_SWAP_USED,
  C_PSI, /* idx: 0 cpu, 1 memory, 2 io */
  C_THROTTLE,
  C_GPU_USED,
  C_GPU_TOTAL
};

typedef struct series {
  char *name;
  int kind;
  int64_t first_ix; /* first interval with a value */
  pp_roll roll;
  pp_ewma ewma;
  pp_detector det_p99, det_rate;
  pp_live_stats snap[4]; /* windows 1, 10, 60, the session; under the
                            lock */
  pp_lhist all;          /* every closed interval: the session's window (and the
                            cumulative histogram of pp__live_hist); under the lock */
  pp_lhist all_now;      /* all with the intervals not closed yet, as of
                            the last pp__live_publish_now (now_valid: no
                            interval closed since); under the lock */
  int now_valid;
  pp__live_point *pts; /* history: the last PP__LIVE_POINTS intervals
                          (a ring, allocated when history is on); under
                          the lock */
  unsigned npts, head;
} series;

typedef struct locent {
  const pp_srcloc *p; /* NULL: free */
  int32_t series;     /* zones and ranges: index, -1 none */
  int16_t cls, idx;   /* counters */
} locent;

#define WAITED_MAX 8 /* queues a thread's distinct waits are told apart on */

typedef struct tstack {
  uint64_t tid;
  pp_zone_stack zs; /* memory only while zones are open */
  /* the queue wait open on the thread (a thread blocks in one queue at a
   * time), and the queues and sides it has waited on (the board counts
   * each thread once as a waiter) */
  const pp_srcloc *wait_loc; /* NULL: none open */
  int wait_why;              /* 1 full, 2 empty */
  int64_t wait_begin;
  const pp_srcloc *waited[WAITED_MAX];
  int waited_why[WAITED_MAX];
  unsigned nwaited;
} tstack;

struct pp__live {
  pp__sink sink; /* the writer's view: pp__live_sink */
  pp__live_cfg cfg;
  int64_t origin;
  double interval_s;
  int64_t closed; /* last interval closed, -1 none */
  pthread_mutex_t lock; /* series table growth and snapshots */
  series **ser;
  size_t nser, cap_ser;
  uint64_t series_lost;
  /* name -> series index + 1 (open addressing, 2 * MAX_SERIES) */
  uint32_t names[2 * MAX_SERIES];
  locent *locs;
  size_t nlocs, cap_locs;
  tstack *th;
  size_t nth, cap_th;
  tstack *last_th;
  pp_pair_counts pc; /* zone pairing anomalies (zones.h) */
  pp_id_pairs ranges; /* range halves waiting (intervals.h) */
  /* a cache in front of zone_series, by the site's address (nested
   * zones change site every event) */
  const pp_srcloc *last_loc[SERIES_CACHE];
  int last_series[SERIES_CACHE];
  int64_t ix_start, ix_end, ix; /* interval of the last value: [start, end) */
  pp_req_table reqs; /* requests open (pair/requests.h); user[0]: TTFT
                        given */
  int req_series[4]; /* series of E2E, TTFT, TPOT, ITL; -1 until the
                        first */
  pp_id_pairs qitems; /* queue pushes waiting for their pops */
  pp__board *board;   /* counters, metrics, frames, queues (board.h) */
  int history;        /* keep per-interval points (pp__live_history_on) */
  pp_lhist scratch, open_h; /* open_h: the open intervals (publish_now) */
  /* stats mode's zones (ring/tally.h): the interval of the last look at
   * the threads' tallies, and two histograms to read them into */
  int64_t tally_ix;
  pp_lhist tcur, tdelta;
  /* notes */
  /* Both allocated with the first note: 125 KB that most sessions never
   * touch would otherwise be faulted in at start-up. */
  pp__live_note *queue; /* NOTE_QUEUE */
  size_t nqueue;
  uint64_t notes_lost;
  pp__live_note *recent; /* PP__LIVE_KEEP */
  size_t nrecent, recent_head;
  /* alert state */
  double mem_total;
  int mem_on;
  double swap_prev;
  int swap_have, swap_on;
  int64_t swap_grow_ns;
  int psi_on[3];
  double *cpu_thr;  /* MAX_CPUS, NAN unknown */
  int thr_on;
  int64_t thr_ns;
  /* GPU memory, per NVML GPU (slots 0..MAX_GPUS-1) and per CUDA device as
   * the driver sees it (cuMemGetInfo; slots MAX_GPUS + device) */
  double gpu_used[2 * MAX_GPUS], gpu_total[2 * MAX_GPUS];
  int gpu_on[2 * MAX_GPUS];
};

/* ---- configuration ------------------------------------------------------- */

void pp__live_cfg_default(pp__live_cfg *c) {
  memset(c, 0, sizeof *c);
  c->on = 1;
  c->interval_ns = 1000000000;
  c->grace_ns = 30000000;
  c->k = 5;
  c->history = 60;
  c->min_values = 10;
  c->floor_rel = 0.05;
  c->tau_s = 10;
  c->mem_pct = 90;
  c->swap = 1;
  c->psi_pct = 10;
  c->throttle = 1;
  c->gpu_mem_pct = 95;
}

static int errf(char *err, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int errf(char *err, size_t n, const char *fmt, ...) {
  if (err && n) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* "1s", "100ms", "250us", "5000ns" (a unit is required). */
static int parse_dur(const char *v, int64_t *ns) {
  return pp__parse_duration(v, strlen(v), ns);
}

/* "90%" or "90": a percentage in (0, 100]. */
static int parse_pct(const char *v, double *out) {
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (errno || end == v || (*end && strcmp(end, "%") != 0) ||
      !isfinite(x) || !(x > 0) || x > 100)
    return -1;
  *out = x;
  return 0;
}

static int parse_uint(const char *v, unsigned lo, unsigned hi,
                      unsigned *out) {
  char *end;
  errno = 0;
  unsigned long x = strtoul(v, &end, 10);
  if (errno || end == v || *end || v[0] == '-' || x < lo || x > hi)
    return -1;
  *out = (unsigned)x;
  return 0;
}

static int is_off(const char *v) {
  return strcmp(v, "off") == 0 || strcmp(v, "0") == 0 ||
         strcmp(v, "no") == 0 || strcmp(v, "false") == 0;
}

static int is_on(const char *v) {
  return strcmp(v, "on") == 0 || strcmp(v, "1") == 0 ||
         strcmp(v, "yes") == 0 || strcmp(v, "true") == 0;
}

/* Split "a=b,c=d" and hand each pair to fn. */
typedef int (*kv_fn)(const char *k, const char *v, pp__live_cfg *c,
                     char *err, size_t n);

static int parse_list(const char *what, const char *spec, pp__live_cfg *c,
                      kv_fn fn, char *err, size_t n) {
  char buf[512];
  if (strlen(spec) >= sizeof buf)
    return errf(err, n, "invalid %s: longer than %zu bytes", what,
                sizeof buf - 1);
  snprintf(buf, sizeof buf, "%s", spec);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ')
      tok++;
    char *eq = strchr(tok, '=');
    if (!eq)
      return errf(err, n, "invalid %s=\"%s\": expected key=value, got "
                  "\"%s\"", what, spec, tok);
    *eq = 0;
    char emsg[160] = "";
    if (fn(tok, eq + 1, c, emsg, sizeof emsg) != 0)
      return errf(err, n, "invalid %s=\"%s\": %s", what, spec, emsg);
  }
  return 0;
}

static int live_kv(const char *k, const char *v, pp__live_cfg *c, char *err,
                   size_t n) {
  int64_t ns;
  unsigned u;
  double x;
  if (strcmp(k, "interval") == 0) {
    if (parse_dur(v, &ns) || ns < 10000000 || ns > 60 * INT64_C(1000000000))
      return errf(err, n, "interval \"%s\": expected 10ms to 60s", v);
    c->interval_ns = ns;
  } else if (strcmp(k, "k") == 0) {
    char *end;
    x = strtod(v, &end);
    if (end == v || *end || !isfinite(x) || !(x > 0) || x > 1000)
      return errf(err, n, "k \"%s\": expected a number above 0", v);
    c->k = x;
  } else if (strcmp(k, "history") == 0) {
    if (parse_uint(v, 3, PP_DETECT_MAX_HISTORY, &u))
      return errf(err, n, "history \"%s\": expected 3 to %u intervals", v,
                  PP_DETECT_MAX_HISTORY);
    c->history = u;
  } else if (strcmp(k, "min") == 0) {
    if (parse_uint(v, 1, PP_DETECT_MAX_HISTORY, &u))
      return errf(err, n, "min \"%s\": expected 1 to %u values", v,
                  PP_DETECT_MAX_HISTORY);
    c->min_values = u;
  } else if (strcmp(k, "floor") == 0) {
    if (parse_pct(v, &x))
      return errf(err, n, "floor \"%s\": expected a percentage", v);
    c->floor_rel = x / 100;
  } else if (strcmp(k, "tau") == 0) {
    if (parse_dur(v, &ns) || ns < 1000000 || ns > 3600 * INT64_C(1000000000))
      return errf(err, n, "tau \"%s\": expected 1ms to 3600s", v);
    c->tau_s = (double)ns * 1e-9;
  } else {
    return errf(err, n, "unknown key \"%s\" (interval, k, history, min, "
                "floor, tau)", k);
  }
  return 0;
}

int pp__live_parse(const char *spec, pp__live_cfg *c, char *err, size_t n) {
  if (!spec)
    return 0;
  if (is_off(spec)) {
    c->on = 0;
    return 0;
  }
  if (is_on(spec) || !*spec)
    return 0;
  if (parse_list("PIPEPROF_LIVE", spec, c, live_kv, err, n) != 0)
    return -1;
  if (c->min_values > c->history)
    return errf(err, n, "invalid PIPEPROF_LIVE=\"%s\": min %u exceeds "
                "history %u", spec, c->min_values, c->history);
  return 0;
}

static int alert_kv(const char *k, const char *v, pp__live_cfg *c, char *err,
                    size_t n) {
  double *pct = strcmp(k, "mem") == 0       ? &c->mem_pct
                : strcmp(k, "psi") == 0     ? &c->psi_pct
                : strcmp(k, "gpu_mem") == 0 ? &c->gpu_mem_pct
                                            : NULL;
  if (pct) {
    if (is_off(v))
      *pct = -1;
    else if (parse_pct(v, pct))
      return errf(err, n, "%s \"%s\": expected a percentage or off", k, v);
    return 0;
  }
  int *flag = strcmp(k, "swap") == 0       ? &c->swap
              : strcmp(k, "throttle") == 0 ? &c->throttle
                                           : NULL;
  if (flag) {
    if (is_off(v))
      *flag = 0;
    else if (is_on(v))
      *flag = 1;
    else
      return errf(err, n, "%s \"%s\": expected on or off", k, v);
    return 0;
  }
  return errf(err, n, "unknown key \"%s\" (mem, swap, psi, throttle, "
              "gpu_mem)", k);
}

int pp__alerts_parse(const char *spec, pp__live_cfg *c, char *err,
                     size_t n) {
  if (!spec || is_on(spec) || !*spec)
    return 0;
  if (is_off(spec)) {
    c->mem_pct = c->psi_pct = c->gpu_mem_pct = -1;
    c->swap = c->throttle = 0;
    return 0;
  }
  return parse_list("PIPEPROF_ALERTS", spec, c, alert_kv, err, n);
}

/* ---- notes --------------------------------------------------------------- */

static pp__live_note *note_new(pp__live *l, int type, int64_t ns,
                               const char *what, const char *which) {
  if (!l->queue)
    l->queue = pp__malloc(NOTE_QUEUE * sizeof *l->queue);
  if (!l->queue || l->nqueue >= NOTE_QUEUE) {
    l->notes_lost++;
    return NULL;
  }
  pp__live_note *n = &l->queue[l->nqueue++];
  memset(n, 0, sizeof *n);
  n->type = type;
  n->ns = ns;
  snprintf(n->what, sizeof n->what, "%s", what);
  snprintf(n->which, sizeof n->which, "%s", which);
  return n;
}

/* Keep a copy for flight dumps once the note is complete. */
static void note_done(pp__live *l, const pp__live_note *n) {
  if (!l->recent && !(l->recent = pp__malloc(PP__LIVE_KEEP * sizeof *n)))
    return;
  pthread_mutex_lock(&l->lock); /* pp__live_alerts reads it */
  l->recent[l->recent_head] = *n;
  l->recent_head = (l->recent_head + 1) % PP__LIVE_KEEP;
  if (l->nrecent < PP__LIVE_KEEP)
    l->nrecent++;
  pthread_mutex_unlock(&l->lock);
}

size_t pp__live_take(pp__live *l, pp__live_note *out, size_t max) {
  if (!l)
    return 0;
  size_t k = l->nqueue < max ? l->nqueue : max;
  if (!k)
    return 0;
  memcpy(out, l->queue, k * sizeof *out);
  memmove(l->queue, l->queue + k, (l->nqueue - k) * sizeof *out);
  l->nqueue -= k;
  return k;
}

size_t pp__live_recent(const pp__live *l, pp__live_note *out, size_t max) {
  if (!l)
    return 0;
  size_t k = l->nrecent < max ? l->nrecent : max;
  size_t start = (l->recent_head + PP__LIVE_KEEP - l->nrecent) %
                 PP__LIVE_KEEP + (l->nrecent - k);
  for (size_t i = 0; i < k; i++)
    out[i] = l->recent[(start + i) % PP__LIVE_KEEP];
  return k;
}

/* ---- series -------------------------------------------------------------- */

static uint32_t str_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static int series_find(const pp__live *l, int kind, const char *name) {
  uint32_t h = str_hash(name) ^ (uint32_t)kind * 0x9E3779B9u;
  for (uint32_t k = 0; k < 2 * MAX_SERIES; k++) {
    uint32_t j = (h + k) & (2 * MAX_SERIES - 1);
    uint32_t v = l->names[j];
    if (!v)
      return -1;
    const series *s = l->ser[v - 1];
    if (s->kind == kind && strcmp(s->name, name) == 0)
      return (int)(v - 1);
  }
  return -1;
}

static int series_get(pp__live *l, int kind, const char *name) {
  int i = series_find(l, kind, name);
  if (i >= 0)
    return i;
  if (l->nser >= MAX_SERIES) {
    l->series_lost++;
    return -1;
  }
  series *s = pp__calloc(1, sizeof *s);
  if (!s || !(s->name = pp__strdup(name))) {
    pp__free(s);
    return -1;
  }
  s->kind = kind;
  s->first_ix = -1;
  pp_roll_init(&s->roll);
  pp_lhist_init(&s->all);
  pp_lhist_init(&s->all_now);
  pp_ewma_init(&s->ewma, l->cfg.tau_s);
  pp_detector_cfg dc;
  pp_detector_cfg_default(&dc);
  dc.k = l->cfg.k;
  dc.history = l->cfg.history;
  dc.min_values = l->cfg.min_values;
  dc.floor_rel = l->cfg.floor_rel;
  dc.direction = PP_DETECT_UP; /* a faster p99 is no alarm */
  int rc = pp_detector_init(&s->det_p99, &dc);
  dc.direction = PP_DETECT_BOTH;
  dc.poisson_t = l->interval_s;
  rc |= pp_detector_init(&s->det_rate, &dc);
  if (rc != 0) {
    pp_detector_free(&s->det_p99);
    pp_detector_free(&s->det_rate);
    pp__free(s->name);
    pp__free(s);
    return -1;
  }
  pthread_mutex_lock(&l->lock);
  if (pp__grow((void **)&l->ser, &l->cap_ser, l->nser + 1, sizeof *l->ser)) {
    pthread_mutex_unlock(&l->lock);
    pp_detector_free(&s->det_p99);
    pp_detector_free(&s->det_rate);
    pp__free(s->name);
    pp__free(s);
    return -1;
  }
  uint32_t idx = (uint32_t)l->nser;
  l->ser[l->nser++] = s;
  uint32_t h = str_hash(name) ^ (uint32_t)kind * 0x9E3779B9u;
  for (uint32_t k = 0; k < 2 * MAX_SERIES; k++) {
    uint32_t j = (h + k) & (2 * MAX_SERIES - 1);
    if (!l->names[j]) {
      l->names[j] = idx + 1;
      break;
    }
  }
  pthread_mutex_unlock(&l->lock);
  return (int)idx;
}

static int64_t interval_of(pp__live *l, int64_t ns) {
  /* Values come in time order per thread: most fall in the interval of the
   * one before, so skip the division then. */
  if (ns >= l->ix_start && ns < l->ix_end)
    return l->ix;
  int64_t i = ns <= l->origin ? 0 : (ns - l->origin) / l->cfg.interval_ns;
  if (ns > l->origin) {
    l->ix = i;
    l->ix_start = l->origin + i * l->cfg.interval_ns;
    l->ix_end = l->ix_start + l->cfg.interval_ns;
  }
  return i;
}

static void series_value(pp__live *l, int si, int64_t ns, uint64_t v) {
  if (si < 0)
    return;
  series *s = l->ser[si];
  int64_t i = interval_of(l, ns);
  if (s->first_ix < 0 || i < s->first_ix)
    s->first_ix = i;
  pp_roll_record(&s->roll, i, v);
}

/* ---- loc map ------------------------------------------------------------- */

static locent *loc_get(pp__live *l, const pp_srcloc *p) {
  if ((l->nlocs + 1) * 2 > l->cap_locs) {
    size_t ncap = l->cap_locs ? l->cap_locs * 2 : 256;
    locent *n = pp__calloc(ncap, sizeof *n);
    if (!n)
      return NULL;
    for (size_t i = 0; i < l->cap_locs; i++) {
      if (!l->locs[i].p)
        continue;
      size_t j = ((uintptr_t)l->locs[i].p >> 4) * 0x9E3779B97F4A7C15ULL;
      for (j &= ncap - 1; n[j].p; j = (j + 1) & (ncap - 1)) {
      }
      n[j] = l->locs[i];
    }
    pp__free(l->locs);
    l->locs = n;
    l->cap_locs = ncap;
  }
  size_t j = ((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ULL;
  for (j &= l->cap_locs - 1; l->locs[j].p; j = (j + 1) & (l->cap_locs - 1))
    if (l->locs[j].p == p)
      return &l->locs[j];
  locent *e = &l->locs[j];
  e->p = p;
  e->series = -2; /* not looked up */
  e->cls = C_UNKNOWN;
  l->nlocs++;
  return e;
}

static int zone_series(pp__live *l, const pp_srcloc *p) {
  unsigned slot = (unsigned)((uintptr_t)p >> 4) & (SERIES_CACHE - 1);
  if (p == l->last_loc[slot])
    return l->last_series[slot];
  locent *e = loc_get(l, p);
  if (!e)
    return -1;
  if (e->series == -2)
    e->series = (int32_t)series_get(l, S_ZONE, p->name ? p->name : "");
  l->last_loc[slot] = p;
  l->last_series[slot] = e->series;
  return e->series;
}

/* ---- threads and pairs --------------------------------------------------- */

static tstack *thread_get(pp__live *l, uint64_t tid) {
  if (l->last_th && l->last_th->tid == tid)
    return l->last_th;
  for (size_t i = 0; i < l->nth; i++)
    if (l->th[i].tid == tid)
      return l->last_th = &l->th[i];
  tstack *t = NULL;
  if (l->nth >= MAX_THREADS) {
    /* Reuse a thread with nothing open (most likely gone). */
    for (size_t i = 0; i < l->nth && !t; i++)
      if (l->th[i].zs.n == 0 && !l->th[i].zs.deep && !l->th[i].wait_loc)
        t = &l->th[i];
    if (!t)
      return NULL;
    pp__zstack_free(&t->zs); /* a new thread: its clock starts afresh */
    t->wait_loc = NULL;
    t->nwaited = 0;
  } else {
    if (pp__grow((void **)&l->th, &l->cap_th, l->nth + 1, sizeof *l->th))
      return NULL;
    t = &l->th[l->nth++];
    memset(t, 0, sizeof *t);
  }
  t->tid = tid;
  return l->last_th = t;
}

/* which: 0 E2E, 1 TTFT, 2 TPOT, 3 ITL (the order of the series kinds
 * after S_ZONE) */
static void req_series_value(pp__live *l, int which, int64_t ns,
                             int64_t dur) {
  static const char *const names[4] = {"request e2e", "request ttft",
                                       "request tpot", "request itl"};
  if (l->req_series[which] < 0)
    l->req_series[which] = series_get(l, S_E2E + which, names[which]);
  series_value(l, l->req_series[which], ns, dur > 0 ? (uint64_t)dur : 0);
}

/* A request's TTFT once its begin and first token are both seen, and its
 * E2E (successful requests) once complete: the pairing table gathers the
 * halves, which the writer drains in any order. */
static void request_settled(void *ctx, const pp_req *q, int outcome) {
  pp__live *l = ctx;
  if (outcome != PP_REQ_DONE)
    return; /* unfinished or orphaned: no figure */
  if ((q->flags & PP_REQ_FIRST) && !q->user[0])
    req_series_value(l, 1, q->first, q->first - q->begin);
  if (q->status == 0) {
    req_series_value(l, 0, q->end, q->end - q->begin);
    /* TPOT as the report defines it: (E2E - TTFT) / (tokens - 1) */
    if ((q->flags & PP_REQ_FIRST) && q->tokens > 1 && q->end >= q->first)
      req_series_value(l, 2, q->end,
                       (q->end - q->first) / (int64_t)(q->tokens - 1));
  }
}

/* A range half: a value of its series once the other half is seen
 * (intervals.h). */
static void range_event(pp__live *l, int is_end, const pp_srcloc *loc,
                        uint64_t id, int64_t ns) {
  pp_half h = {id, ns, (uint64_t)(uintptr_t)loc, 0, 0, (uint32_t)is_end};
  pp_half b, e;
  if (pp__idpairs_put(&l->ranges, &h, &b, &e) != 1)
    return;
  int64_t d = e.ts - b.ts;
  series_value(l, zone_series(l, (const pp_srcloc *)(uintptr_t)b.cookie),
               e.ts, d > 0 ? (uint64_t)d : 0);
}

static void request_event(pp__live *l, unsigned type, uint64_t id,
                          uint64_t extra, int64_t ns) {
  pp_req *q = pp__reqs_put(&l->reqs, 0, id, type, extra, ns);
  /* ITL: the gap to the request's previous chunk (a request's chunks come
   * from one thread in the usual case, so in time order) */
  if (q && type == PPT_EV_REQ_TOKENS && q->chunks >= 2 && q->last_tok == ns &&
      q->prev_tok <= ns)
    req_series_value(l, 3, ns, ns - q->prev_tok);
  if (q && (q->flags & PP_REQ_BEGUN) && (q->flags & PP_REQ_FIRST) &&
      !q->user[0]) {
    req_series_value(l, 1, q->first, q->first - q->begin);
    q->user[0] = 1;
  }
}

/* A queue item's push and pop: its wait, a value of the queue's series
 * (the queue's name) once both are seen. */
static void queue_item(pp__live *l, int is_pop, const pp_srcloc *loc,
                       uint64_t id, int64_t ns) {
  pp_half h = {id,
               ns,
               (uint64_t)(uintptr_t)loc,
               0,
               (uint32_t)((uintptr_t)loc >> 4),
               (uint32_t)is_pop};
  pp_half b, e;
  if (pp__idpairs_put(&l->qitems, &h, &b, &e) != 1)
    return;
  int64_t d = e.ts - b.ts;
  series_value(l, series_get(l, S_QWAIT, loc->name ? loc->name : ""), e.ts,
               d > 0 ? (uint64_t)d : 0);
}

static void pairs_sweep(pp__live *l, int64_t now) {
  pp__idpairs_expire(&l->ranges, now - PAIR_MAX_AGE_NS);
  pp__idpairs_expire(&l->qitems, now - PAIR_MAX_AGE_NS);
  pp__reqs_expire(&l->reqs, now - PAIR_MAX_AGE_NS);
}

/* ---- alerts -------------------------------------------------------------- */

/* The alerts watch library metrics only (metrics/registry.h): a user
 * counter that happens to share a name is not classified. */
static void classify(locent *e) {
  const char *fr;
  size_t fl;
  long ix;
  e->cls = C_NONE;
  if (e->p->kind != PP_KIND_METRIC)
    return;
  pp_metric_id id = pp_metric_lookup(e->p->name, &ix, &fr, &fl);
  switch (id) {
  case PP_METRIC_SYS_MEM_TOTAL:
    e->cls = C_MEM_TOTAL;
    break;
  case PP_METRIC_SYS_MEM_AVAIL:
    e->cls = C_MEM_AVAIL;
    break;
  case PP_METRIC_SYS_SWAP_USED:
    e->cls = C_SWAP_USED;
    break;
  case PP_METRIC_SYS_PSI_SOME: {
    static const char *const res[3] = {"cpu", "memory", "io"};
    for (int16_t i = 0; i < 3; i++)
      if (strlen(res[i]) == fl && strncmp(fr, res[i], fl) == 0)
        e->cls = C_PSI, e->idx = i;
    break;
  }
  case PP_METRIC_SYS_CPUN_THROTTLE:
    if (ix < (long)MAX_CPUS)
      e->cls = C_THROTTLE, e->idx = (int16_t)ix;
    break;
  case PP_METRIC_GPU_MEM_USED:
  case PP_METRIC_GPU_MEM_TOTAL:
  case PP_METRIC_CUDA_MEM_USED:
  case PP_METRIC_CUDA_MEM_TOTAL: {
    int cuda = id == PP_METRIC_CUDA_MEM_USED || id == PP_METRIC_CUDA_MEM_TOTAL;
    int used = id == PP_METRIC_GPU_MEM_USED || id == PP_METRIC_CUDA_MEM_USED;
    if (ix < (long)MAX_GPUS) {
      e->cls = used ? C_GPU_USED : C_GPU_TOTAL;
      e->idx = (int16_t)((cuda ? MAX_GPUS : 0) + (unsigned)ix);
    }
    break;
  }
  default:
    break;
  }
}

static void alert(pp__live *l, int64_t ns, const char *what,
                  const char *which, double value, double baseline,
                  double threshold, const char *msg) {
  pp__live_note *n = note_new(l, PPT_EV_ALERT, ns, what, which);
  if (!n)
    return;
  n->value = value;
  n->baseline = baseline;
  n->threshold = threshold;
  snprintf(n->message, sizeof n->message, "alert: %s", msg);
  note_done(l, n);
}

static void gpu_check(pp__live *l, int g, int64_t ns) {
  double used = l->gpu_used[g], total = l->gpu_total[g];
  if (!(total > 0) || !(used >= 0) || l->cfg.gpu_mem_pct <= 0)
    return;
  double pct = 100 * used / total;
  if (!l->gpu_on[g] && pct >= l->cfg.gpu_mem_pct) {
    char which[16], msg[160], a[32], b[32];
    if (g < (int)MAX_GPUS)
      snprintf(which, sizeof which, "gpu%d", g);
    else
      snprintf(which, sizeof which, "cuda%d", g - (int)MAX_GPUS);
    pp__fmt_bytes(a, sizeof a, used);
    pp__fmt_bytes(b, sizeof b, total);
    snprintf(msg, sizeof msg, "%s memory %.1f%% used (%s of %s; threshold "
             "%g%%)", which, pct, a, b, l->cfg.gpu_mem_pct);
    alert(l, ns, "gpu_mem", which, pct, 0, l->cfg.gpu_mem_pct, msg);
    l->gpu_on[g] = 1;
  } else if (l->gpu_on[g] && pct < l->cfg.gpu_mem_pct - 5) {
    l->gpu_on[g] = 0;
  }
}

static void counter_event(pp__live *l, const pp_srcloc *loc, unsigned type,
                          uint64_t value, int64_t ns) {
  locent *e = loc_get(l, loc);
  if (!e)
    return;
  if (e->cls == C_UNKNOWN)
    classify(e);
  if (e->cls == C_NONE)
    return;
  double v;
  if (type == PPT_EV_COUNTER_SETF)
    memcpy(&v, &value, sizeof v);
  else if (type == PPT_EV_COUNTER_SET)
    v = (double)(int64_t)value;
  else
    return;
  if (!isfinite(v))
    return;
  char msg[160], a[32], b[32];
  switch (e->cls) {
  case C_MEM_TOTAL:
    l->mem_total = v;
    return;
  case C_MEM_AVAIL: {
    if (!(l->mem_total > 0) || l->cfg.mem_pct <= 0)
      return;
    double pct = 100 * (1 - v / l->mem_total);
    if (!l->mem_on && pct >= l->cfg.mem_pct) {
      pp__fmt_bytes(a, sizeof a, v);
      pp__fmt_bytes(b, sizeof b, l->mem_total);
      snprintf(msg, sizeof msg, "memory %.1f%% used (%s available of %s; "
               "threshold %g%%)", pct, a, b, l->cfg.mem_pct);
      alert(l, ns, "mem", "system", pct, 0, l->cfg.mem_pct, msg);
      l->mem_on = 1;
    } else if (l->mem_on && pct < l->cfg.mem_pct - 5) {
      l->mem_on = 0;
    }
    return;
  }
  case C_SWAP_USED:
    if (!l->cfg.swap)
      return;
    if (l->swap_have && v > l->swap_prev && v > 0) {
      l->swap_grow_ns = ns;
      if (!l->swap_on) {
        pp__fmt_bytes(a, sizeof a, v);
        pp__fmt_bytes(b, sizeof b, v - l->swap_prev);
        snprintf(msg, sizeof msg, "swap in use and growing: %s (+%s)", a, b);
        alert(l, ns, "swap", "system", v, l->swap_prev, 0, msg);
        l->swap_on = 1;
      }
    } else if (l->swap_on &&
               (v <= 0 || ns - l->swap_grow_ns > 30 * INT64_C(1000000000))) {
      l->swap_on = 0;
    }
    l->swap_prev = v;
    l->swap_have = 1;
    return;
  case C_PSI: {
    static const char *const res[] = {"cpu", "memory", "io"};
    int r = e->idx;
    if (l->cfg.psi_pct <= 0)
      return;
    if (!l->psi_on[r] && v >= l->cfg.psi_pct) {
      char what[16];
      snprintf(what, sizeof what, "psi.%s", res[r]);
      snprintf(msg, sizeof msg, "PSI %s some %.1f%% of time stalled (avg10; "
               "threshold %g%%)", res[r], v, l->cfg.psi_pct);
      alert(l, ns, what, "system", v, 0, l->cfg.psi_pct, msg);
      l->psi_on[r] = 1;
    } else if (l->psi_on[r] && v < l->cfg.psi_pct / 2) {
      l->psi_on[r] = 0;
    }
    return;
  }
  case C_THROTTLE: {
    if (!l->cfg.throttle)
      return;
    if (!l->cpu_thr) {
      l->cpu_thr = pp__malloc(MAX_CPUS * sizeof *l->cpu_thr);
      if (!l->cpu_thr)
        return;
      for (unsigned i = 0; i < MAX_CPUS; i++)
        l->cpu_thr[i] = NAN;
    }
    double prev = l->cpu_thr[e->idx];
    l->cpu_thr[e->idx] = v;
    if (isnan(prev) || !(v > prev)) {
      if (l->thr_on && ns - l->thr_ns > 10 * INT64_C(1000000000))
        l->thr_on = 0;
      return;
    }
    l->thr_ns = ns;
    if (l->thr_on)
      return;
    char which[16];
    snprintf(which, sizeof which, "cpu%d", e->idx);
    snprintf(msg, sizeof msg, "CPU throttling on %s (+%.0f thermal throttle "
             "events)", which, v - prev);
    alert(l, ns, "throttle", which, v - prev, prev, 0, msg);
    l->thr_on = 1;
    return;
  }
  case C_GPU_USED:
    l->gpu_used[e->idx] = v;
    gpu_check(l, e->idx, ns);
    return;
  case C_GPU_TOTAL:
    l->gpu_total[e->idx] = v;
    gpu_check(l, e->idx, ns);
    return;
  default:
    return;
  }
}

/* ---- events -------------------------------------------------------------- */

/* A zone the pairing closed: a value of its series only with its own end
 * (zones.h). */
static void zone_closed(void *ctx, const pp_zone_closed *z) {
  pp__live *l = ctx;
  if (pp__zone_counts(z))
    series_value(l, zone_series(l, (const pp_srcloc *)(uintptr_t)z->site),
                 z->end, (uint64_t)z->dur);
}

static inline void zone_begin(pp__live *l, tstack *t, const pp_srcloc *loc,
                              int64_t ns) {
  uint64_t site = (uint64_t)(uintptr_t)loc;
  if (t && pp__zstack_begin_fast(&t->zs, site, ns, 0) != 0)
    pp__zstack_begin(&t->zs, site, ns, 0, &l->pc);
}

static inline void zone_end(pp__live *l, tstack *t, const pp_srcloc *loc,
                            int64_t ns) {
  if (!t)
    return;
  uint64_t site = (uint64_t)(uintptr_t)loc;
  pp_zone_closed z;
  if (pp__zstack_end_fast(&t->zs, site, ns, &l->pc, &z) == 0)
    zone_closed(l, &z);
  else
    pp__zstack_end(&t->zs, site, ns, &l->pc, zone_closed, l);
  pp__zstack_trim(&t->zs);
}

/* A queue wait begins on thread t: the board counts t once per queue and
 * side as a waiter. */
static void wait_begin(pp__live *l, tstack *t, const pp_srcloc *loc, int why,
                       int64_t ns) {
  if (!t || (why != 1 && why != 2))
    return;
  t->wait_loc = loc;
  t->wait_why = why;
  t->wait_begin = ns;
  int seen = 0;
  for (unsigned i = 0; i < t->nwaited && !seen; i++)
    seen = t->waited[i] == loc && t->waited_why[i] == why;
  if (!seen && t->nwaited < WAITED_MAX) {
    t->waited[t->nwaited] = loc;
    t->waited_why[t->nwaited++] = why;
  }
  /* past WAITED_MAX queues a thread counts again: at worst a waiter too
   * many, and the shares a little low */
  pp__board_wait(l->board, loc, why, ns, 0, 0, !seen);
}

/* The wait open on t ends: its time goes to the queue's blocked time. */
static void wait_end(pp__live *l, tstack *t, const pp_srcloc *loc, int why,
                     int64_t ns) {
  if (!t || t->wait_loc != loc || t->wait_why != why)
    return; /* no begin seen: not paired, as the analysis leaves it */
  pp__board_wait(l->board, loc, why, t->wait_begin,
                 ns > t->wait_begin ? ns - t->wait_begin : 0, 1, 0);
  t->wait_loc = NULL;
}

void pp__live_event(pp__live *l, uint64_t tid, unsigned type,
                    const pp_srcloc *loc, int64_t ns, uint64_t value,
                    uint64_t extra) {
  if (!l || !loc)
    return;
  switch (type) {
  case PPT_EV_ZONE_BEGIN:
    zone_begin(l, thread_get(l, tid), loc, ns);
    return;
  case PPT_EV_ZONE_END:
    zone_end(l, thread_get(l, tid), loc, ns);
    return;
  case PPT_EV_RANGE_BEGIN:
  case PPT_EV_RANGE_END:
    range_event(l, type == PPT_EV_RANGE_END, loc, value, ns);
    return;
  case PPT_EV_REQ_BEGIN:
  case PPT_EV_REQ_FIRST:
  case PPT_EV_REQ_TOKENS:
  case PPT_EV_REQ_END:
    request_event(l, type, value, extra, ns);
    return;
  case PPT_EV_COUNTER_SET:
  case PPT_EV_COUNTER_SETF:
    counter_event(l, loc, type, value, ns);
    pp__board_event(l->board, type, loc, ns, value, extra);
    return;
  case PPT_EV_QUEUE_PUSH:
  case PPT_EV_QUEUE_POP:
    queue_item(l, type == PPT_EV_QUEUE_POP, loc, value, ns);
    pp__board_event(l->board, type, loc, ns, value, extra);
    return;
  case PPT_EV_FRAME: {
    /* frame time: the gap to the stream's previous mark */
    int64_t prev = pp__board_event(l->board, type, loc, ns, value, extra);
    if (prev > 0 && ns >= prev)
      series_value(l, series_get(l, S_FRAME, loc->name ? loc->name : ""), ns,
                   (uint64_t)(ns - prev));
    return;
  }
  case PPT_EV_COUNTER_ADD:
    pp__board_event(l->board, type, loc, ns, value, extra);
    return;
  case PPT_EV_QUEUE_WAIT_BEGIN:
    pp__board_event(l->board, type, loc, ns, value, extra);
    wait_begin(l, thread_get(l, tid), loc, (int)value, ns);
    return;
  case PPT_EV_QUEUE_WAIT_END:
    wait_end(l, thread_get(l, tid), loc, (int)value, ns);
    return;
  default:
    return;
  }
}

/* ---- intervals ----------------------------------------------------------- */

static const unsigned windows[3] = {1, 10, 60};

/* One window's figures from h (the window's values). */
static void window_figures(const pp__live *l, const series *s,
                           const pp_lhist *h, int64_t intervals, int64_t end_ns,
                           pp_live_stats *o) {
  memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->seconds = (double)(intervals < 1 ? 1 : intervals) * l->interval_s;
  o->count = h->count;
  o->rate = (double)o->count / o->seconds;
  o->ewma_rate = s->ewma.value;
  if (o->count) {
    o->mean_ns = h->sum / (double)o->count;
    o->p50_ns = pp_lhist_percentile(h, 50);
    o->p90_ns = pp_lhist_percentile(h, 90);
    o->p99_ns = pp_lhist_percentile(h, 99);
    o->max_ns = h->max;
  }
  o->as_of_ns = end_ns;
}

/* The windows of 1, 10 and 60 intervals ending at last, and the session's
 * (s->all, which holds last already). */
static void snapshot(pp__live *l, series *s, int64_t last, int64_t end_ns,
                     pp_live_stats out[4]) {
  int64_t have_all = last - s->first_ix + 1;
  for (int w = 0; w < 3; w++) {
    int64_t have = have_all < (int64_t)windows[w] ? have_all : windows[w];
    pp_roll_window(&s->roll, last, windows[w], &l->scratch);
    window_figures(l, s, &l->scratch, have, end_ns, &out[w]);
    out[w].window_s = windows[w];
  }
  window_figures(l, s, &s->all, have_all, end_ns, &out[3]);
  out[3].window_s = 0;
}

static void anomaly(pp__live *l, series *s, const pp_detector *d,
                    const char *what, double x, int64_t ns) {
  pp__live_note *n = note_new(l, PPT_EV_ANOMALY, ns, what, s->name);
  if (!n)
    return;
  n->value = x;
  n->baseline = d->median;
  n->spread = d->mad;
  n->threshold = d->threshold;
  char a[32], b[32], c[32];
  if (strcmp(what, "rate") == 0) {
    pp_format_rate(a, sizeof a, x);
    pp_format_rate(b, sizeof b, d->median);
    pp_format_rate(c, sizeof c, d->mad);
  } else {
    pp_format_ns(a, sizeof a, x);
    pp_format_ns(b, sizeof b, d->median);
    pp_format_ns(c, sizeof c, d->mad);
  }
  snprintf(n->message, sizeof n->message,
           "anomaly: %.80s %s %s (median %s, MAD %s)", s->name, what, a, b,
           c);
  note_done(l, n);
}

/* Interval i, not judged (a stall skipped it), into each series's
 * session window. */
static void session_add(pp__live *l, int64_t i) {
  for (size_t k = 0; k < l->nser; k++) {
    series *s = l->ser[k];
    if (!pp_roll_count(&s->roll, i) ||
        pp_roll_window(&s->roll, i, 1, &l->scratch) != 0)
      continue;
    pthread_mutex_lock(&l->lock);
    pp_lhist_merge(&s->all, &l->scratch);
    pthread_mutex_unlock(&l->lock);
  }
}

static void close_interval(pp__live *l, int64_t i) {
  int64_t end_ns = l->origin + (i + 1) * l->cfg.interval_ns;
  for (size_t k = 0; k < l->nser; k++) {
    series *s = l->ser[k];
    if (s->first_ix < 0 || s->first_ix > i)
      continue;
    uint64_t count = pp_roll_count(&s->roll, i);
    double rate = (double)count / l->interval_s;
    pp_ewma_update(&s->ewma, rate, l->interval_s);
    if (count) {
      pp_roll_window(&s->roll, i, 1, &l->scratch);
      double p99 = (double)pp_lhist_percentile(&l->scratch, 99);
      if (pp_detector_step(&s->det_p99, p99) == PP_DETECT_START)
        anomaly(l, s, &s->det_p99, "p99", p99, end_ns);
      /* the session's window: every interval as it closes (a value
       * drained after its interval closed is in the windows that still
       * hold that interval, not in the session's) */
      pthread_mutex_lock(&l->lock);
      pp_lhist_merge(&s->all, &l->scratch);
      pthread_mutex_unlock(&l->lock);
    }
    /* The first interval of a series is partial: its rate is no value. */
    if (i > s->first_ix &&
        pp_detector_step(&s->det_rate, rate) == PP_DETECT_START)
      anomaly(l, s, &s->det_rate, "rate", rate, end_ns);
    pp_live_stats snap[4];
    snapshot(l, s, i, end_ns, snap);
    pthread_mutex_lock(&l->lock);
    memcpy(s->snap, snap, sizeof snap);
    s->now_valid = 0; /* the session's window is the closed intervals' */
    if (l->history &&
        (s->pts || (s->pts = pp__calloc(PP__LIVE_POINTS, sizeof *s->pts)))) {
      pp__live_point *pt = &s->pts[s->head];
      pt->end_ns = end_ns;
      pt->count = snap[0].count;
      pt->p50_ns = snap[0].p50_ns;
      pt->max_ns = snap[0].max_ns;
      s->head = (s->head + 1) % PP__LIVE_POINTS;
      if (s->npts < PP__LIVE_POINTS)
        s->npts++;
    }
    pthread_mutex_unlock(&l->lock);
  }
}

void pp__live_tick(pp__live *l, int64_t now) {
  if (!l)
    return;
  /* Complete requests whose ends are older than the grace: their halves
   * have all been drained, and their E2E goes to an interval still open. */
  pp__reqs_settle_before(&l->reqs, now - l->cfg.grace_ns);
  int64_t due = now - l->cfg.grace_ns - l->origin;
  if (due < l->cfg.interval_ns)
    return;
  int64_t last = due / l->cfg.interval_ns - 1; /* last interval to close */
  if (last <= l->closed)
    return;
  /* After a long stall only the intervals the ring still holds matter;
   * those not judged still count in the session's window. */
  if (last - l->closed > (int64_t)PP_ROLL_MAX_WINDOW) {
    for (int64_t i = l->closed + 1; i <= last - PP_ROLL_MAX_WINDOW; i++)
      session_add(l, i);
    l->closed = last - PP_ROLL_MAX_WINDOW;
  }
  while (l->closed < last)
    close_interval(l, ++l->closed);
  int64_t at = l->origin + (last + 1) * l->cfg.interval_ns;
  for (size_t i = 0; i < l->nth; i++) /* waits still open, so far */
    if (l->th[i].wait_loc && at > l->th[i].wait_begin)
      pp__board_wait(l->board, l->th[i].wait_loc, l->th[i].wait_why,
                     l->th[i].wait_begin, at - l->th[i].wait_begin, 0, 0);
  pp__board_publish(l->board, at);
  pairs_sweep(l, now);
}

void pp__live_publish_now(pp__live *l, int64_t now) {
  if (!l)
    return;
  /* Everything up to now has been drained: requests that ended before it
   * are complete (their halves are all in), whatever the grace. */
  pp__reqs_settle_before(&l->reqs, now + 1);
  int64_t cur = now <= l->origin ? 0 : (now - l->origin) / l->cfg.interval_ns;
  for (size_t k = 0; k < l->nser; k++) {
    series *s = l->ser[k];
    if (s->first_ix < 0)
      continue;
    /* the intervals not closed yet, [closed + 1, cur], that the ring
     * holds (closing keeps at most PP_ROLL_MAX_WINDOW of them open) */
    int64_t from = l->closed + 1 > s->first_ix ? l->closed + 1 : s->first_ix;
    int64_t n = cur - from + 1;
    if (n > (int64_t)PP_ROLL_MAX_WINDOW)
      n = PP_ROLL_MAX_WINDOW;
    pp_lhist_reset(&l->open_h);
    if (n > 0)
      pp_roll_window(&s->roll, cur, (unsigned)n, &l->open_h);
    pthread_mutex_lock(&l->lock);
    pp_lhist_reset(&l->scratch);
    pp_lhist_merge(&l->scratch, &s->all);
    pthread_mutex_unlock(&l->lock);
    pp_lhist_merge(&l->scratch, &l->open_h);
    pp_live_stats o;
    window_figures(l, s, &l->scratch, 1, now, &o);
    /* the session so far: from the start of the series' first interval to
     * now, not a whole number of intervals */
    int64_t since = l->origin + s->first_ix * l->cfg.interval_ns;
    o.seconds = now > since ? (double)(now - since) * 1e-9 : 1e-9;
    o.rate = (double)o.count / o.seconds;
    o.window_s = 0;
    pthread_mutex_lock(&l->lock);
    s->snap[3] = o;
    pp_lhist_reset(&s->all_now);
    s->now_valid = pp_lhist_merge(&s->all_now, &l->scratch) == 0;
    pthread_mutex_unlock(&l->lock);
  }
}

/* ---- the writer's live sink ---------------------------------------------- */

/* A histogram's counters and totals in a fast loop's locals (stores to
 * the counters would otherwise reload the totals): the counters held,
 * groups [glo, ghi], as the bucket index of their first and how many. */
typedef struct run_hist {
  uint32_t *c;
  unsigned first, held;
  uint64_t count, min, max;
  double sum;
} run_hist;

/* Count dur as pp_lhist_record would, when its bucket is held (unsigned
 * wrap sends those below the first past held too); else 0 and nothing
 * counted. The caller has made sure no counter can fill. */
static inline int run_count(run_hist *r, int64_t dur) {
  unsigned bx = pp_lhist_index((uint64_t)dur) - r->first;
  if (bx >= r->held)
    return 0;
  r->c[bx]++;
  r->count++;
  r->sum += (double)dur; /* >= 0: the same double as of (uint64_t)dur */
  if ((uint64_t)dur < r->min)
    r->min = (uint64_t)dur;
  if ((uint64_t)dur > r->max)
    r->max = (uint64_t)dur;
  return 1;
}

/* The fast loop over a thread's slots (the bulk of the writer's work in
 * trace mode): zone begins and ends at site loc, from slot i up to the
 * ring's wrap, while each begin has room on the stack, each end closes
 * the zone on top, the thread's clock does not step back and each zone
 * ends in the interval of the last value, whose histogram the series
 * holds already. Those are the conditions under which
 * pp__zstack_begin_fast, pp__zstack_end_fast and series_value do what
 * this loop does in locals: anything else stops it for the general path.
 * Returns the slot it stopped at. */
static uint64_t zone_run(pp__live *l, tstack *t, const pp__slots *s,
                         uint64_t i, const pp_srcloc *loc) {
  pp_zone_stack *zs = &t->zs;
  int si = zone_series(l, loc);
  if (si < 0 || zs->deep || !zs->have_last)
    return i;
  series *se = l->ser[si];
  const int64_t ix = l->ix, lo = l->ix_start, hi = l->ix_end;
  const unsigned slot = (unsigned)(ix % PP_ROLL_SLOTS);
  if (ix < 0 || se->first_ix < 0 || se->first_ix > ix ||
      se->roll.ix[slot] != ix)
    return i;
  pp_lhist *h = &se->roll.slot[slot];
  const uint64_t site = (uint64_t)(uintptr_t)loc;
  const uint64_t wb = pp__slot_tag(PPT_EV_ZONE_BEGIN, loc);
  const uint64_t we = pp__slot_tag(PPT_EV_ZONE_END, loc);
  const uint64_t stop = pp__slots_contig_end(s, i, s->to);
  const pp__clockmap clock = s->clock;
  const pp__slot *q = &s->ring[i & s->mask], *const qe = q + (stop - i);
  pp_zone_open *const v = zs->v;
  uint32_t n = zs->n;
  const uint32_t cap = zs->cap;
  int64_t last = zs->last;
  run_hist r = {h->c, 1, 0, h->count, h->min, h->max, h->sum};
  if (h->c) {
    r.first = (unsigned)h->glo * PP_LHIST_SUB;
    r.held = ((unsigned)h->ghi + 1u) * PP_LHIST_SUB - r.first;
  }
  const uint64_t span = (uint64_t)(hi - lo);
  /* No counter holds more than count, and the loop adds at most a value
   * per slot: when that cannot reach UINT32_MAX (a full counter counts
   * values as lost: pp_lhist_record's rule), no counter needs a test. */
  if (r.count >= UINT32_MAX - (uint64_t)(qe - q))
    return i;
  while (q < qe) {
    uint64_t a = atomic_load_explicit(&q->a, memory_order_relaxed);
    if (a == wb && n < cap) {
      /* A run of zones with nothing inside (each begin's end in the next
       * slot), the commonest: none is pushed, each counts as it closes,
       * and their time passes up to the parent once for the run (their
       * sum saturated, as adding each saturated would give). A zone the
       * run cannot take is pushed and closed below, as any other. */
      const pp__slot *const q0 = q;
      uint64_t child = 0;
      while (q + 1 < qe &&
             atomic_load_explicit(&q->a, memory_order_relaxed) == wb &&
             atomic_load_explicit(&q[1].a, memory_order_relaxed) == we) {
        int64_t b = pp__clockmap_ns(
            &clock, atomic_load_explicit(&q->ts, memory_order_relaxed));
        int64_t e = pp__clockmap_ns(
            &clock, atomic_load_explicit(&q[1].ts, memory_order_relaxed));
        int64_t dur;
        if (b < last || e < b || (uint64_t)e - (uint64_t)lo >= span ||
            __builtin_sub_overflow(e, b, &dur) || !run_count(&r, dur))
          break;
        child += (uint64_t)dur;
        if (child > INT64_MAX)
          child = INT64_MAX;
        last = e;
        q += 2;
      }
      if (q != q0) {
        if (n) {
          int64_t *ch = &v[n - 1].child;
          if (__builtin_add_overflow(*ch, (int64_t)child, ch))
            *ch = INT64_MAX;
        }
        continue;
      }
    }
    int64_t ns = pp__clockmap_ns(
        &clock, atomic_load_explicit(&q->ts, memory_order_relaxed));
    if (ns < last)
      break;
    if (a == wb) { /* pushed */
      if (n >= cap)
        break;
      pp_zone_open *o = &v[n++];
      o->site = site;
      o->cookie = 0;
      o->start = ns;
      o->child = 0;
    } else if (a == we) { /* closes the zone on top */
      if (!n || v[n - 1].site != site ||
          (uint64_t)ns - (uint64_t)lo >= span)
        break;
      int64_t dur;
      if (__builtin_sub_overflow(ns, v[n - 1].start, &dur))
        dur = INT64_MAX;
      if (!run_count(&r, dur))
        break;
      if (--n) {
        int64_t *ch = &v[n - 1].child;
        if (__builtin_add_overflow(*ch, dur, ch))
          *ch = INT64_MAX;
      }
    } else {
      break;
    }
    last = ns;
    q++;
  }
  l->pc.zones += r.count - h->count; /* every zone counted closed here */
  h->count = r.count;
  h->sum = r.sum;
  h->min = r.min;
  h->max = r.max;
  zs->n = n;
  zs->last = last;
  pp__zstack_trim(zs);
  return stop - (uint64_t)(qe - q);
}

/* Whether slots i and i + 1 (when before s->to) are both zone begins or
 * ends at site loc: a run for zone_run, whose setup costs more than the
 * general path's one event (nested zones change site every slot). */
static inline int run_ahead(const pp__slots *s, uint64_t i,
                            const pp_srcloc *loc) {
  for (uint64_t k = i; k < i + 2 && k < s->to; k++) {
    uint64_t a =
        atomic_load_explicit(&s->ring[k & s->mask].a, memory_order_relaxed);
    if (a != pp__slot_tag(PPT_EV_ZONE_BEGIN, loc) &&
        a != pp__slot_tag(PPT_EV_ZONE_END, loc))
      return 0;
  }
  return 1;
}

/* Zone begins and ends, most of what a ring holds, are paired here with
 * the thread's stack looked up once per block (runs of them at one site
 * by zone_run); the rest goes through pp__live_event. */
static uint64_t live_slots(pp__sink *k, const pp__slots *sp) {
  pp__live *l = (pp__live *)k;
  /* A local copy: the pairing's stores (64-bit fields) could alias the
   * caller's struct, whose fields would then be reloaded per event. */
  const pp__slots ls = *sp, *s = &ls;
  tstack *t = NULL;
  int have_t = 0;
  const pp_srcloc *run = NULL; /* the site of the last zone event */
  pp__slot_ev e;
  uint64_t n = 0;
  for (uint64_t i = s->from; i < s->to;) {
    if (run && run_ahead(s, i, run)) {
      uint64_t j = zone_run(l, t, s, i, run);
      n += j - i; /* zone events all */
      i = j;
      run = NULL;
      if (i >= s->to)
        break;
    }
    int r = pp__slot_read(s, &i, &e);
    if (r < 0)
      break;
    if (r == 0 || !e.loc)
      continue;
    n++;
    int64_t ns = pp__clockmap_ns(&s->clock, e.ts);
    if (e.type == PPT_EV_ZONE_BEGIN || e.type == PPT_EV_ZONE_END) {
      if (!have_t) {
        t = thread_get(l, s->tid);
        have_t = 1;
      }
      if (e.type == PPT_EV_ZONE_BEGIN)
        zone_begin(l, t, e.loc, ns);
      else
        zone_end(l, t, e.loc, ns);
      if (t)
        run = e.loc;
      continue;
    }
    pp__live_event(l, s->tid, e.type, e.loc, ns, e.value, e.extra);
  }
  return n;
}

/* ---- stats mode: zones their threads aggregated (ring/tally.h) --------- */

int pp__live_tally_due(pp__live *l, int64_t now_ns) {
  int64_t ix =
      now_ns <= l->origin ? 0 : (now_ns - l->origin) / l->cfg.interval_ns;
  if (ix <= l->tally_ix)
    return 0;
  l->tally_ix = ix;
  return 1;
}

/* The engine's last look at one tally: its histogram then (cumulative,
 * in the live buckets) and its sum. */
typedef struct tally_seen {
  pp_lhist cum;
  uint64_t sum_lo;
} tally_seen;

/* What t counted since the last look, as values of the interval of the
 * thread's latest event (at_ns): a look per interval, so a zone counts
 * in the interval the writer saw it in, at most a writer period late.
 * The zone the thread closed last and counts with its next end (tally.h)
 * is taken as counted already (pend_ns when pend is t): the looks see
 * counters plus that zone, which only grow. */
static void tally_look(pp__live *l, pp__tally *t, int64_t at_ns,
                       const pp__tally *pend, uint64_t pend_ns) {
  int si = zone_series(l, t->loc);
  tally_seen *seen = t->live;
  if (si < 0)
    return;
  if (!seen) {
    if (!(seen = pp__calloc(1, sizeof *seen)))
      return;
    pp_lhist_init(&seen->cum);
    t->live = seen;
  }
  pp_lhist *cur = &l->tcur;
  pp_lhist_reset(cur);
  for (unsigned s = 0; s < PP_HIST_SLOTS; s++) {
    const _Atomic uint64_t *b = pp__tally_block(t, s);
    for (unsigned i = 0; b && i < PP_HIST_HALF; i++) {
      uint64_t n = pp__tally_get(&b[i]);
      if (n)
        pp_lhist_add_n(cur, pp_lhist_index(pp_hist_slot_value(s, i)), n);
    }
  }
  pp__tally_read r = {0};
  r.sum_lo = pp__tally_get(&t->sum_lo);
  if (pend == t) {
    pp_lhist_add_n(cur, pp_lhist_index(pend_ns), 1);
    r.sum_lo += pend_ns;
  }
  r.min = pp__tally_get(&t->min);
  r.max = pp__tally_get(&t->max);
  if (pend == t && pend_ns < r.min)
    r.min = pend_ns;
  if (pend == t && pend_ns > r.max)
    r.max = pend_ns;
  pp_lhist *d = &l->tdelta;
  pp_lhist_delta(d, cur, &seen->cum);
  if (d->count) {
    /* the buckets' bounds, within the tally's exact extremes */
    if (d->min < r.min)
      d->min = r.min;
    if (d->max > r.max)
      d->max = r.max;
    if (d->min > d->max)
      d->min = d->max;
    int64_t dsum = (int64_t)(r.sum_lo - seen->sum_lo); /* wraps like it */
    d->sum = dsum > 0 ? (double)dsum : 0;
    series *sr = l->ser[si];
    int64_t ix = interval_of(l, at_ns);
    if (sr->first_ix < 0 || ix < sr->first_ix)
      sr->first_ix = ix;
    pp_roll_merge(&sr->roll, ix, d);
  }
  /* this look is the next one's base: swap the memories */
  pp_lhist tmp = seen->cum;
  seen->cum = *cur;
  *cur = tmp;
  seen->sum_lo = r.sum_lo;
}

static void live_tallies(pp__sink *k, uint64_t tid, pp__tallies *g, int why,
                         const pp__clockmap *clock) {
  (void)tid;
  pp__live *l = (pp__live *)k;
  int64_t at = pp__clockmap_ns(clock, pp__tally_get(&g->last_tick));
  uint64_t pend_ns, pend_self;
  const pp__tally *pend = pp__tallies_pending(g, &pend_ns, &pend_self);
  for (pp__tally *t = atomic_load_explicit(&g->head, memory_order_acquire); t;
       t = t->next) {
    tally_look(l, t, at, pend, pend_ns);
    if (why != PP__TALLY_TICK && t->live) { /* the last look */
      tally_seen *seen = t->live;
      pp_lhist_free(&seen->cum);
      pp__free(seen);
      t->live = NULL;
    }
  }
}

static const pp__sink_ops live_sink_ops = {
    .name = "live", .slots = live_slots, .tallies = live_tallies};

pp__sink *pp__live_sink(pp__live *l) { return l ? &l->sink : NULL; }

pp__live *pp__live_new(const pp__live_cfg *cfg, int64_t origin_ns) {
  if (!cfg || !cfg->on)
    return NULL;
  pp__live *l = pp__calloc(1, sizeof *l);
  if (!l)
    return NULL;
  l->sink.ops = &live_sink_ops;
  l->cfg = *cfg;
  l->origin = origin_ns;
  l->interval_s = (double)cfg->interval_ns * 1e-9;
  l->closed = -1;
  for (int i = 0; i < 4; i++)
    l->req_series[i] = -1;
  if (!(l->board = pp__board_new())) {
    pp__free(l);
    return NULL;
  }
  pp__idpairs_init(&l->ranges, PAIR_CAP / 2);
  pp__idpairs_init(&l->qitems, PAIR_CAP / 2);
  pp__reqs_init(&l->reqs, REQ_OPEN, request_settled, l);
  pthread_mutex_init(&l->lock, NULL);
  pp_lhist_init(&l->scratch);
  pp_lhist_init(&l->open_h);
  pp_lhist_init(&l->tcur);
  pp_lhist_init(&l->tdelta);
  return l;
}

void pp__live_free(pp__live *l) {
  if (!l)
    return;
  for (size_t i = 0; i < l->nser; i++) {
    series *s = l->ser[i];
    pp_roll_free(&s->roll);
    pp_lhist_free(&s->all);
    pp_lhist_free(&s->all_now);
    pp_detector_free(&s->det_p99);
    pp_detector_free(&s->det_rate);
    pp__free(s->pts);
    pp__free(s->name);
    pp__free(s);
  }
  pp__free(l->ser);
  pp__free(l->queue);
  pp__free(l->recent);
  pp__free(l->locs);
  for (size_t i = 0; i < l->nth; i++)
    pp__zstack_free(&l->th[i].zs);
  pp__free(l->th);
  pp__reqs_free(&l->reqs);
  pp__idpairs_free(&l->ranges);
  pp__idpairs_free(&l->qitems);
  pp__board_free(l->board);
  pp__free(l->cpu_thr);
  pp_lhist_free(&l->scratch);
  pp_lhist_free(&l->open_h);
  pp_lhist_free(&l->tcur);
  pp_lhist_free(&l->tdelta);
  pthread_mutex_destroy(&l->lock);
  pp__free(l);
}

/* The series a query names: a zone's name, or a request series's. */
static const char *series_name(int kind, const char *name) {
  static const char *const req[4] = {"request e2e", "request ttft",
                                     "request tpot", "request itl"};
  return kind >= S_E2E && kind <= S_ITL ? req[kind - S_E2E] : name;
}

/* The snapshot slot of a window: 1, 10, 60 intervals, 0 the session;
 * -1 for any other. */
static int window_index(int window_s) {
  return window_s == 1    ? 0
         : window_s == 10 ? 1
         : window_s == 60 ? 2
         : window_s == 0  ? 3
                          : -1;
}

/* Zones, queue waits and frames are asked for by name. */
static int named(int kind) {
  return kind == S_ZONE || kind == S_QWAIT || kind == S_FRAME;
}

int pp__live_query(pp__live *l, int kind, const char *name, int window_s,
                   pp_live_stats *out) {
  if (!l)
    return PP_ENOTSUP;
  int w = window_index(window_s);
  if (w < 0 || !out || (named(kind) && !name))
    return PP_EINVAL;
  pthread_mutex_lock(&l->lock);
  int i = series_find(l, kind, series_name(kind, name));
  if (i >= 0) {
    *out = l->ser[i]->snap[w];
    out->struct_size = sizeof *out;
    out->window_s = (uint32_t)window_s;
  }
  pthread_mutex_unlock(&l->lock);
  return i >= 0 ? PP_OK : PP_EINVAL;
}

int pp__live_hist(pp__live *l, int kind, const char *name, pp_lhist *out) {
  if (!l)
    return PP_ENOTSUP;
  if (!out || (named(kind) && !name))
    return PP_EINVAL;
  pthread_mutex_lock(&l->lock);
  int i = series_find(l, kind, series_name(kind, name));
  int rc = i < 0 ? PP_EINVAL : PP_OK;
  pp_lhist_reset(out);
  if (i >= 0 && pp_lhist_merge(out, &l->ser[i]->all) != 0)
    rc = PP_ENOMEM;
  pthread_mutex_unlock(&l->lock);
  return rc;
}

int pp__live_split(pp__live *l, int kind, const char *name, uint64_t v,
                   uint64_t *count, uint64_t *below, uint64_t *at) {
  if (!l)
    return PP_ENOTSUP;
  if (named(kind) && !name)
    return PP_EINVAL;
  pthread_mutex_lock(&l->lock);
  int i = series_find(l, kind, series_name(kind, name));
  if (i >= 0) {
    const series *s = l->ser[i];
    const pp_lhist *h = s->now_valid ? &s->all_now : &s->all;
    *count = h->count;
    pp_lhist_split(h, v, below, at);
  }
  pthread_mutex_unlock(&l->lock);
  return i >= 0 ? PP_OK : PP_EINVAL;
}

int pp__live_zone_name(pp__live *l, size_t i, char *buf, size_t size) {
  if (!l)
    return PP_ENOTSUP;
  int rc = PP_EINVAL;
  pthread_mutex_lock(&l->lock);
  for (size_t k = 0, n = 0; k < l->nser; k++) {
    if (l->ser[k]->kind != S_ZONE || n++ != i)
      continue;
    snprintf(buf, size, "%s", l->ser[k]->name);
    rc = PP_OK;
    break;
  }
  pthread_mutex_unlock(&l->lock);
  return rc;
}

void pp__live_visit(pp__live *l, pp__live_visit_fn fn, void *ctx) {
  if (!l)
    return;
  pthread_mutex_lock(&l->lock);
  for (size_t k = 0; k < l->nser; k++) {
    const series *s = l->ser[k];
    if (s->snap[3].as_of_ns) /* published once at least */
      fn(ctx, s->kind, s->name, s->snap);
  }
  pthread_mutex_unlock(&l->lock);
}

uint64_t pp__live_board(pp__live *l,
                        void (*fn)(void *ctx, const pp__board_entry *e),
                        void *ctx) {
  return l ? pp__board_visit(l->board, fn, ctx) : 0;
}

size_t pp__live_alerts(pp__live *l, pp__live_note *out, size_t max) {
  if (!l)
    return 0;
  pthread_mutex_lock(&l->lock);
  size_t k = pp__live_recent(l, out, max);
  pthread_mutex_unlock(&l->lock);
  return k;
}

void pp__live_history_on(pp__live *l) {
  if (!l)
    return;
  l->history = 1;
  pp__board_history_on(l->board);
}

void pp__live_history(pp__live *l, pp__live_history_fn fn, void *ctx) {
  if (!l)
    return;
  pp__live_point pts[PP__LIVE_POINTS];
  pthread_mutex_lock(&l->lock);
  for (size_t k = 0; k < l->nser; k++) {
    const series *s = l->ser[k];
    if (!s->npts)
      continue;
    unsigned start = (s->head + PP__LIVE_POINTS - s->npts) % PP__LIVE_POINTS;
    for (unsigned i = 0; i < s->npts; i++)
      pts[i] = s->pts[(start + i) % PP__LIVE_POINTS];
    fn(ctx, s->kind, s->name, pts, s->npts);
  }
  pthread_mutex_unlock(&l->lock);
}

void pp__live_board_history(pp__live *l,
                            void (*fn)(void *ctx, const pp__board_entry *e,
                                       const pp__board_point *pts, size_t n),
                            void *ctx) {
  if (l)
    pp__board_history(l->board, fn, ctx);
}
