/* SPDX-License-Identifier: MIT */
/*
 * Chart series (series.h): the grid of buckets every series shares, the
 * lines of frames, counters, queues and zones on it, and the summary's
 * coarse histograms.
 */
#include <string.h>

#include "analyze/series.h"
#include "internal.h"

/* ---- coarse histograms --------------------------------------------------- */

static inline unsigned coarse_index(uint64_t v) {
  if (v < 4)
    return (unsigned)v;
  unsigned k = 63u - (unsigned)__builtin_clzll(v); /* 2..63 */
  return 4u + (k - 2u) * 4u + (unsigned)((v >> (k - 2u)) & 3u);
}

unsigned pp_coarse_index(uint64_t v) { return coarse_index(v); }

uint64_t pp_coarse_le(unsigned c) {
  if (c < 4)
    return c;
  unsigned k = (c - 4u) / 4u + 2u, q = (c - 4u) % 4u;
  return (UINT64_C(1) << k) + ((uint64_t)(q + 1u) << (k - 2u)) - 1u;
}

size_t pp_hist_coarse(const pp_hist *h, uint64_t *le, uint64_t *counts) {
  if (!h->count)
    return 0;
  uint64_t c[PP_COARSE_BUCKETS] = {0};
  for (unsigned s = 0; s < PP_HIST_SLOTS; s++) {
    const pp_hist_block *b = h->block[s];
    if (!h->slot_total[s] || !b)
      continue;
    for (unsigned g = 0; g < PP_HIST_SLOT_GROUPS; g++) {
      if (!b->group[g])
        continue;
      for (unsigned j = 0; j < PP_HIST_GROUP; j++) {
        unsigned sub = g * PP_HIST_GROUP + j;
        if (b->c[g][j])
          c[pp_coarse_index(pp_hist_slot_value(s, sub))] +=
              b->c[g][j];
      }
    }
  }
  unsigned lo = pp_coarse_index(h->min), hi = pp_coarse_index(h->max);
  size_t n = 0;
  for (unsigned i = lo; i <= hi; i++, n++) {
    le[n] = pp_coarse_le(i);
    counts[n] = c[i];
  }
  return n;
}

/* ---- the grid and its lines ---------------------------------------------- */

#define CAP PP_SERIES_POINTS_MAX
#define LEFT_OUT UINT32_MAX /* by_site: a series past its kind's bound */

enum { K_FRAME, K_COUNTER, K_QUEUE, K_ZONE, K_KINDS };

static const unsigned kind_max[K_KINDS] = {
    PP_SERIES_FRAMES_MAX, PP_SERIES_COUNTERS_MAX, PP_SERIES_QUEUES_MAX,
    PP_SERIES_ZONES_MAX};

/* One bucket of a line. n counts raw values (zones closed, frame times,
 * counter values, queue events); the rest by kind:
 *   frames:   sum of frame times, hi the longest;
 *   counters: sum of values, lo and hi the least and greatest;
 *   zones:    lo and hi the shortest and longest (median from the bins);
 *   queues:   sum of depth x ns held in the bucket over held ns, hi the
 *             greatest depth held or recorded, lo the depth of the
 *             bucket's last event. */
typedef struct bucket {
  uint64_t n;
  double sum, lo, hi;
  int64_t held;
} bucket;

typedef struct line {
  uint32_t loc;
  uint8_t kind;
  unsigned shift; /* the grid its buckets are on */
  int64_t origin;
  bucket *b; /* CAP buckets once it has a value, else NULL */
  /* zones: CAP x nbins counts of coarse buckets lo_c.. */
  uint32_t *bins;
  unsigned lo_c, nbins;
  /* queues: the last event's time and depth */
  int have_prev;
  int64_t prev_ts, prev_d;
} line;

struct pp_series_rec {
  int have_grid;
  int64_t lo, hi; /* the earliest and latest times placed */
  int64_t origin; /* lo rounded down to a multiple of the width */
  unsigned shift; /* the width: 2^shift ns */
  line *lines;
  size_t nlines, cap_lines;
  uint32_t *by_site; /* site -> line index + 1, 0 none yet, LEFT_OUT */
  size_t cap_sites;
  size_t nkind[K_KINDS];
  uint64_t left[K_KINDS]; /* series past kind_max, by site */
  uint64_t lost;          /* values not placed */
};

pp_series_rec *pp__series_new(void) {
  return pp__calloc(1, sizeof(pp_series_rec));
}

void pp__series_free(pp_series_rec *r) {
  if (!r)
    return;
  for (size_t i = 0; i < r->nlines; i++) {
    pp__free(r->lines[i].b);
    pp__free(r->lines[i].bins);
  }
  pp__free(r->lines);
  pp__free(r->by_site);
  pp__free(r);
}

/* The line of site loc of kind k, made on first use; NULL when past the
 * kind's bound (counted once per site), out of memory (counted), or when
 * the site already has a line of another kind, as only a damaged trace
 * gives (counted). */
static line *get_line_slow(pp_series_rec *r, uint32_t loc, int k) {
  if (loc < r->cap_sites && r->by_site[loc]) {
    uint32_t v = r->by_site[loc];
    if (v == LEFT_OUT)
      return NULL;
    if (r->lines[v - 1].kind != k) {
      r->lost++;
      return NULL;
    }
    return &r->lines[v - 1];
  }
  if (loc >= r->cap_sites) {
    size_t old = r->cap_sites;
    if (pp__grow((void **)&r->by_site, &r->cap_sites, (size_t)loc + 1,
                 sizeof *r->by_site) != 0) {
      r->lost++;
      return NULL;
    }
    memset(r->by_site + old, 0, (r->cap_sites - old) * sizeof *r->by_site);
  }
  if (r->nkind[k] >= kind_max[k]) {
    r->by_site[loc] = LEFT_OUT;
    r->left[k]++;
    return NULL;
  }
  if (pp__grow((void **)&r->lines, &r->cap_lines, r->nlines + 1,
               sizeof *r->lines) != 0) {
    r->lost++;
    return NULL;
  }
  line *l = &r->lines[r->nlines];
  memset(l, 0, sizeof *l);
  l->loc = loc;
  l->kind = (uint8_t)k;
  r->by_site[loc] = (uint32_t)++r->nlines;
  r->nkind[k]++;
  return l;
}

static int64_t align_down(int64_t ts, unsigned shift) {
  return (int64_t)((uint64_t)ts & ~((UINT64_C(1) << shift) - 1u));
}

static inline line *get_line(pp_series_rec *r, uint32_t loc, int k) {
  uint32_t v = loc < r->cap_sites ? r->by_site[loc] : 0;
  if (__builtin_expect(v != 0 && v != LEFT_OUT, 1) &&
      __builtin_expect(r->lines[v - 1].kind == k, 1))
    return &r->lines[v - 1];
  return get_line_slow(r, loc, k);
}

/* Place ts on the grid; its bucket index in *idx. The grid is a function
 * of the earliest and latest times placed, whatever their order: the
 * least width 2^shift (from 1 ns) at which the buckets from lo's (its
 * start a multiple of the width) to hi's number at most CAP. At 2^62 ns
 * any two times fit, so the loop ends there. */
static void grid_place(pp_series_rec *r, int64_t ts, uint64_t *idx) {
  if (!r->have_grid) {
    r->have_grid = 1;
    r->lo = r->hi = ts;
    r->shift = 0;
  }
  if (ts < r->lo)
    r->lo = ts;
  if (ts > r->hi)
    r->hi = ts;
  while ((((uint64_t)r->hi - (uint64_t)align_down(r->lo, r->shift)) >>
          r->shift) >= CAP)
    r->shift++;
  r->origin = align_down(r->lo, r->shift);
  *idx = ((uint64_t)ts - (uint64_t)r->origin) >> r->shift;
}

static void bucket_merge(bucket *a, const bucket *b, int kind) {
  if (!b->n && !b->held)
    return;
  if (!a->n && !a->held) {
    *a = *b;
    return;
  }
  if (b->n && (kind != K_QUEUE ? b->lo < a->lo : 1))
    a->lo = b->lo; /* queues: the later bucket's last depth */
  if (b->hi > a->hi)
    a->hi = b->hi;
  a->n += b->n;
  a->sum += b->sum;
  a->held += b->held;
}

/* Bring l's buckets (and bins) onto the grid. 0, or -1 when out of
 * memory (l keeps its grid). */
static int line_sync(pp_series_rec *r, line *l) {
  if (!l->b) {
    l->origin = r->origin;
    l->shift = r->shift;
    return 0;
  }
  if (l->origin == r->origin && l->shift == r->shift)
    return 0;
  bucket *nb = pp__calloc(CAP, sizeof *nb);
  uint32_t *nbins =
      l->bins ? pp__calloc((size_t)CAP * l->nbins, sizeof *nbins) : NULL;
  if (!nb || (l->bins && !nbins)) {
    pp__free(nb);
    pp__free(nbins);
    return -1;
  }
  for (uint64_t i = 0; i < CAP; i++) {
    if (!l->b[i].n && !l->b[i].held)
      continue;
    uint64_t start = (uint64_t)l->origin + (i << l->shift);
    uint64_t j = (start - (uint64_t)r->origin) >> r->shift;
    bucket_merge(&nb[j], &l->b[i], l->kind);
    for (unsigned c = 0; nbins && c < l->nbins; c++) {
      uint32_t *d = &nbins[j * l->nbins + c];
      uint32_t v = l->bins[i * l->nbins + c];
      *d = v > UINT32_MAX - *d ? UINT32_MAX : *d + v;
    }
  }
  pp__free(l->b);
  pp__free(l->bins);
  l->b = nb;
  l->bins = nbins;
  l->origin = r->origin;
  l->shift = r->shift;
  return 0;
}

/* The bucket of ts in l (the line brought onto the grid, its buckets
 * made), or NULL when memory ran out (counted). */
static bucket *line_at_slow(pp_series_rec *r, line *l, int64_t ts,
                            uint64_t *idx) {
  grid_place(r, ts, idx);
  if (line_sync(r, l) != 0 ||
      (!l->b && !(l->b = pp__calloc(CAP, sizeof *l->b)))) {
    r->lost++;
    return NULL;
  }
  return &l->b[*idx];
}

/* line_at_slow when ts falls in the grid as it is and l is on it: the
 * grid is unchanged (lo and hi may move, their buckets do not). */
static inline bucket *line_at(pp_series_rec *r, line *l, int64_t ts,
                              uint64_t *idx) {
  uint64_t d = ((uint64_t)ts - (uint64_t)r->origin) >> r->shift;
  if (__builtin_expect(r->have_grid && ts >= r->origin && d < CAP && l->b &&
                           l->origin == r->origin && l->shift == r->shift,
                       1)) {
    if (ts < r->lo)
      r->lo = ts;
    if (ts > r->hi)
      r->hi = ts;
    *idx = d;
    return &l->b[d];
  }
  return line_at_slow(r, l, ts, idx);
}

/* Widen a zone line's bins to hold coarse bucket c (an octave to spare
 * each side). 0, or -1 when out of memory. */
static int bins_cover(line *l, unsigned c) {
  if (l->bins && c >= l->lo_c && c < l->lo_c + l->nbins)
    return 0;
  unsigned lo = c >= 4 ? c - 4 : 0,
           hi = c + 4 < PP_COARSE_BUCKETS ? c + 4 : PP_COARSE_BUCKETS - 1;
  if (l->bins) {
    lo = l->lo_c < lo ? l->lo_c : lo;
    hi = l->lo_c + l->nbins - 1 > hi ? l->lo_c + l->nbins - 1 : hi;
  }
  unsigned n = hi - lo + 1;
  uint32_t *nb = pp__calloc((size_t)CAP * n, sizeof *nb);
  if (!nb)
    return -1;
  for (size_t i = 0; l->bins && i < CAP; i++)
    memcpy(nb + i * n + (l->lo_c - lo), l->bins + i * l->nbins,
           l->nbins * sizeof *nb);
  pp__free(l->bins);
  l->bins = nb;
  l->lo_c = lo;
  l->nbins = n;
  return 0;
}

static void on_zone(void *arg, uint32_t id, int64_t end_ns, uint64_t dur) {
  pp_series_rec *r = arg;
  line *l = get_line(r, id, K_ZONE);
  uint64_t i;
  bucket *b;
  if (!l || !(b = line_at(r, l, end_ns, &i)))
    return;
  unsigned c = coarse_index(dur);
  if ((c < l->lo_c || c >= l->lo_c + l->nbins || !l->bins) &&
      bins_cover(l, c) != 0) {
    r->lost++;
    return;
  }
  uint32_t *bin = &l->bins[i * l->nbins + (c - l->lo_c)];
  *bin += *bin != UINT32_MAX;
  double d = (double)dur;
  if (!b->n || d < b->lo)
    b->lo = d;
  if (!b->n || d > b->hi)
    b->hi = d;
  b->n++;
}

static void on_frame(void *arg, uint32_t id, int64_t ns, int64_t dt) {
  pp_series_rec *r = arg;
  line *l = get_line(r, id, K_FRAME);
  uint64_t i;
  bucket *b;
  if (!l || !(b = line_at(r, l, ns, &i)))
    return;
  double d = (double)dt;
  if (!b->n || d > b->hi)
    b->hi = d;
  b->sum += d;
  b->n++;
}

static void on_counter(void *arg, uint32_t id, int64_t ns, double v) {
  pp_series_rec *r = arg;
  line *l = get_line(r, id, K_COUNTER);
  uint64_t i;
  bucket *b;
  if (!l || !(b = line_at(r, l, ns, &i)))
    return;
  if (!b->n || v < b->lo)
    b->lo = v;
  if (!b->n || v > b->hi)
    b->hi = v;
  b->sum += v;
  b->n++;
}

void pp__series_observer(pp_series_rec *r, pp__agg_observer *o) {
  *o = (pp__agg_observer){on_zone, on_frame, on_counter, r};
}

/* The depth d held by a queue from `from` to `to` (to > from, both on
 * the grid already), spread over the buckets it crosses. */
static void queue_hold(pp_series_rec *r, line *l, int64_t from, int64_t to,
                       int64_t d) {
  uint64_t a = ((uint64_t)from - (uint64_t)r->origin) >> r->shift;
  uint64_t z = ((uint64_t)to - (uint64_t)r->origin) >> r->shift;
  for (uint64_t i = a; i <= z && i < CAP; i++) {
    int64_t bs = (int64_t)((uint64_t)r->origin + (i << r->shift));
    int64_t be = (int64_t)((uint64_t)bs + (UINT64_C(1) << r->shift));
    int64_t s = from > bs ? from : bs, e = to < be ? to : be;
    if (e <= s)
      continue;
    bucket *b = &l->b[i];
    if ((!b->n && !b->held) || (double)d > b->hi)
      b->hi = (double)d;
    b->sum += (double)d * (double)(e - s);
    b->held += e - s;
  }
}

void pp__series_queue(pp_series_rec *r, uint32_t loc, int64_t ts,
                      int64_t depth) {
  line *l = get_line(r, loc, K_QUEUE);
  uint64_t i;
  bucket *b;
  if (!l || !(b = line_at(r, l, ts, &i)))
    return;
  int64_t d = depth > 0 ? depth : 0;
  if (l->have_prev && ts > l->prev_ts)
    queue_hold(r, l, l->prev_ts, ts, l->prev_d);
  if ((!b->n && !b->held) || (double)d > b->hi)
    b->hi = (double)d;
  b->lo = (double)d;
  b->n++;
  l->have_prev = 1; /* as the queue's figures: the depth holds from here */
  l->prev_ts = ts;
  l->prev_d = d;
}

/* ---- the profile's series ------------------------------------------------ */

static void line_free(pp_series_line *s) {
  pp__free(s->t_ns);
  pp__free(s->mean);
  pp__free(s->min);
  pp__free(s->max);
  pp__free(s->count);
  pp__free(s->p50);
}

void pp_series_free(pp_series *s) {
  pp_series_line *all[4] = {s->frames, s->counters, s->queues, s->zones};
  size_t n[4] = {s->nframes, s->ncounters, s->nqueues, s->nzones};
  for (int k = 0; k < 4; k++) {
    for (size_t i = 0; i < n[k]; i++)
      line_free(&all[k][i]);
    pp__free(all[k]);
  }
  memset(s, 0, sizeof *s);
}

/* The median of bucket i of zone line l: the highest value of the coarse
 * bucket holding the ceil(n / 2)-th shortest, within the bucket's
 * shortest and longest. */
static uint64_t zone_p50(const line *l, uint64_t i) {
  const bucket *b = &l->b[i];
  uint64_t rank = (b->n + 1) / 2, seen = 0;
  uint64_t v = (uint64_t)b->hi;
  for (unsigned c = 0; c < l->nbins; c++) {
    seen += l->bins[i * l->nbins + c];
    if (seen >= rank) {
      v = pp_coarse_le(l->lo_c + c);
      break;
    }
  }
  if (v < (uint64_t)b->lo)
    v = (uint64_t)b->lo;
  if (v > (uint64_t)b->hi)
    v = (uint64_t)b->hi;
  return v;
}

/* The points of line l (on the grid) into out. 0, or -1 when out of
 * memory. */
static int line_points(const pp_series_rec *r, const line *l, int64_t t0,
                       pp_series_line *out) {
  memset(out, 0, sizeof *out);
  out->loc = l->loc;
  size_t n = 0;
  for (size_t i = 0; l->b && i < CAP; i++)
    n += l->b[i].n || l->b[i].held;
  if (!n)
    return 0;
  int k = l->kind;
  out->t_ns = pp__malloc(n * sizeof *out->t_ns);
  out->max = pp__malloc(n * sizeof *out->max);
  if (k != K_ZONE)
    out->mean = pp__malloc(n * sizeof *out->mean);
  if (k == K_COUNTER)
    out->min = pp__malloc(n * sizeof *out->min);
  if (k == K_ZONE) {
    out->count = pp__malloc(n * sizeof *out->count);
    out->p50 = pp__malloc(n * sizeof *out->p50);
  }
  if (!out->t_ns || !out->max || (k != K_ZONE && !out->mean) ||
      (k == K_COUNTER && !out->min) ||
      (k == K_ZONE && (!out->count || !out->p50))) {
    line_free(out);
    return -1;
  }
  for (size_t i = 0; i < CAP; i++) {
    const bucket *b = &l->b[i];
    if (!b->n && !b->held)
      continue;
    size_t j = out->n++;
    int64_t start = (int64_t)((uint64_t)r->origin + (i << r->shift));
    out->t_ns[j] = start > t0 ? pp__span(t0, start) : 0;
    out->max[j] = b->hi;
    out->downsampled |= b->n > 1;
    switch (k) {
    case K_FRAME:
      out->mean[j] = b->sum / (double)b->n;
      break;
    case K_COUNTER:
      out->mean[j] = b->sum / (double)b->n;
      out->min[j] = b->lo;
      break;
    case K_QUEUE:
      out->mean[j] = b->held ? b->sum / (double)b->held : b->lo;
      break;
    default:
      out->count[j] = b->n;
      out->p50[j] = zone_p50(l, i);
    }
  }
  return 0;
}

/* The line of site loc of kind k in r, or NULL. */
static const line *find_line(const pp_series_rec *r, uint32_t loc, int k) {
  if (!r || loc >= r->cap_sites || !r->by_site[loc] ||
      r->by_site[loc] == LEFT_OUT)
    return NULL;
  const line *l = &r->lines[r->by_site[loc] - 1];
  return l->kind == k ? l : NULL;
}

/* One kind's lines, in the order of locs (n of them): a site without a
 * line (no value followed) gets none. */
static int kind_points(const pp_series_rec *r, int k, const uint32_t *locs,
                       size_t n, int64_t t0, pp_series_line **out,
                       size_t *nout) {
  *out = NULL;
  *nout = 0;
  if (!n)
    return 0;
  pp_series_line *v = pp__calloc(n, sizeof *v);
  if (!v)
    return -1;
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    const line *l = find_line(r, locs[i], k);
    if (!l)
      continue;
    if (line_points(r, l, t0, &v[m]) != 0) {
      for (size_t j = 0; j < m; j++)
        line_free(&v[j]);
      pp__free(v);
      return -1;
    }
    m += v[m].n > 0;
  }
  *out = v;
  *nout = m;
  return 0;
}

int pp__series_build(pp_series_rec *r, pp_analysis *a) {
  pp_profile *p = &a->prof;
  pp_series *s = &p->series;
  pp_series_free(s);
  s->available = !a->trace->from_stats;
  if (!r)
    return 0;
  for (size_t i = 0; i < r->nlines; i++)
    if (line_sync(r, &r->lines[i]) != 0)
      return -1;
  s->bucket_ns = r->have_grid ? (int64_t)(UINT64_C(1) << r->shift) : 0;
  s->values_lost = r->lost;
  size_t most = p->nframes;
  if (p->ncounters > most)
    most = p->ncounters;
  if (p->pipe.nqueues > most)
    most = p->pipe.nqueues;
  if (PP_SERIES_ZONES > most)
    most = PP_SERIES_ZONES;
  uint32_t *locs = pp__malloc(most * sizeof *locs);
  if (!locs)
    return -1;
  int rc = 0;
  for (size_t i = 0; i < p->nframes; i++)
    locs[i] = p->frames[i].loc;
  rc |=
      kind_points(r, K_FRAME, locs, p->nframes, p->t0, &s->frames, &s->nframes);
  for (size_t i = 0; i < p->ncounters; i++)
    locs[i] = p->counters[i].loc;
  rc |= kind_points(r, K_COUNTER, locs, p->ncounters, p->t0, &s->counters,
                    &s->ncounters);
  for (size_t i = 0; i < p->pipe.nqueues; i++)
    locs[i] = p->pipe.queues[i].loc;
  rc |= kind_points(r, K_QUEUE, locs, p->pipe.nqueues, p->t0, &s->queues,
                    &s->nqueues);
  size_t nz = p->nzones < PP_SERIES_ZONES ? p->nzones : PP_SERIES_ZONES;
  uint64_t untracked = 0;
  for (size_t i = 0; i < nz; i++) {
    locs[i] = p->zones[i].loc;
    untracked += find_line(r, locs[i], K_ZONE) == NULL;
  }
  rc |= kind_points(r, K_ZONE, locs, nz, p->t0, &s->zones, &s->nzones);
  pp__free(locs);
  if (rc != 0) {
    pp_series_free(s);
    return -1;
  }
  s->frames_left = r->left[K_FRAME];
  s->frames_why = s->frames_left ? "more than 64 frame series: the first 64 "
                                   "to take a value are drawn"
                                 : NULL;
  s->counters_left = r->left[K_COUNTER];
  s->counters_why = s->counters_left
                        ? "more than 256 counter series: the first 256 to "
                          "take a value are drawn"
                        : NULL;
  s->queues_left = r->left[K_QUEUE];
  s->queues_why = s->queues_left ? "more than 64 queues: the first 64 to "
                                   "take an event are drawn"
                                 : NULL;
  s->zones_left = untracked;
  s->zones_why = untracked ? "of the 8 zones with the most time, these were "
                             "not followed: only the first 64 zone and range "
                             "sites to close one are"
                           : NULL;
  return 0;
}
