/* SPDX-License-Identifier: MIT */
/*
 * Live statistics building blocks (see live.h): compact interval
 * histogram, rolling window, EWMA and the median/MAD detector.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "live.h"

/* ---- compact histogram --------------------------------------------------- */

uint64_t pp_lhist_highest(unsigned index) {
  unsigned g = index / PP_LHIST_SUB, sub = index % PP_LHIST_SUB;
  if (g == 0)
    return sub;
  unsigned shift = g - 1u; /* o - 5 with o = g + 4 */
  uint64_t lo = (uint64_t)(PP_LHIST_SUB + sub) << shift;
  return lo + ((UINT64_C(1) << shift) - 1u);
}

uint64_t pp_lhist_lowest(unsigned index) {
  unsigned g = index / PP_LHIST_SUB, sub = index % PP_LHIST_SUB;
  return g == 0 ? sub : (uint64_t)(PP_LHIST_SUB + sub) << (g - 1u);
}

void pp_lhist_init(pp_lhist *h) {
  memset(h, 0, sizeof *h);
  h->min = UINT64_MAX;
}

void pp_lhist_free(pp_lhist *h) {
  pp__free(h->c);
  pp_lhist_init(h);
}

void pp_lhist_reset(pp_lhist *h) {
  if (h->c && h->count)
    memset(h->c, 0,
           (size_t)(h->ghi - h->glo + 1u) * PP_LHIST_SUB * sizeof *h->c);
  h->count = h->lost = 0;
  h->min = UINT64_MAX;
  h->max = 0;
  h->sum = 0;
}

/* Make groups [lo, hi] present. */
static int cover(pp_lhist *h, unsigned lo, unsigned hi) {
  if (h->c && lo >= h->glo && hi <= h->ghi)
    return 0;
  unsigned nlo = h->c && h->glo < lo ? h->glo : lo;
  unsigned nhi = h->c && h->ghi > hi ? h->ghi : hi;
  size_t n = (size_t)(nhi - nlo + 1u) * PP_LHIST_SUB;
  uint32_t *c = pp__calloc(n, sizeof *c);
  if (!c)
    return -1;
  if (h->c) {
    memcpy(c + (size_t)(h->glo - nlo) * PP_LHIST_SUB, h->c,
           (size_t)(h->ghi - h->glo + 1u) * PP_LHIST_SUB * sizeof *c);
    pp__free(h->c);
  }
  h->c = c;
  h->glo = (uint16_t)nlo;
  h->ghi = (uint16_t)nhi;
  return 0;
}

/* A value outside the groups held: grow them, then count it. */
void pp__lhist_record_slow(pp_lhist *h, uint64_t v) {
  unsigned g = pp_lhist_index(v) / PP_LHIST_SUB;
  if (cover(h, g, g) != 0) {
    h->lost++;
    return;
  }
  pp_lhist_record(h, v); /* the fast path now holds */
}

int pp_lhist_merge(pp_lhist *dst, const pp_lhist *src) {
  dst->lost += src->lost;
  if (!src->count)
    return 0;
  if (cover(dst, src->glo, src->ghi) != 0) {
    dst->lost += src->count;
    return -1;
  }
  size_t off = (size_t)(src->glo - dst->glo) * PP_LHIST_SUB;
  size_t n = (size_t)(src->ghi - src->glo + 1u) * PP_LHIST_SUB;
  for (size_t i = 0; i < n; i++) {
    uint64_t s = (uint64_t)dst->c[off + i] + src->c[i];
    dst->c[off + i] = s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
  }
  dst->count += src->count;
  dst->sum += src->sum;
  if (src->min < dst->min)
    dst->min = src->min;
  if (src->max > dst->max)
    dst->max = src->max;
  return 0;
}

int pp_lhist_add_n(pp_lhist *h, unsigned index, uint64_t n) {
  unsigned g = index / PP_LHIST_SUB;
  if (!n)
    return 0;
  if (g >= PP_LHIST_GROUPS || cover(h, g, g) != 0) {
    h->lost += n;
    return -1;
  }
  uint32_t *c = &h->c[index - (unsigned)h->glo * PP_LHIST_SUB];
  uint64_t s = *c + n;
  *c = s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
  h->count += n;
  return 0;
}

int pp_lhist_delta(pp_lhist *out, const pp_lhist *cur, const pp_lhist *prev) {
  pp_lhist_reset(out);
  if (!cur->c)
    return 0;
  int rc = 0;
  size_t n = (size_t)(cur->ghi - cur->glo + 1u) * PP_LHIST_SUB;
  for (size_t i = 0; i < n; i++) {
    unsigned ix = (unsigned)(cur->glo * PP_LHIST_SUB + i);
    uint64_t was = 0;
    if (prev->c && ix / PP_LHIST_SUB >= prev->glo &&
        ix / PP_LHIST_SUB <= prev->ghi)
      was = prev->c[ix - (unsigned)prev->glo * PP_LHIST_SUB];
    uint64_t d = cur->c[i] > was ? cur->c[i] - was : 0;
    if (!d)
      continue;
    rc |= pp_lhist_add_n(out, ix, d);
    if (pp_lhist_lowest(ix) < out->min)
      out->min = pp_lhist_lowest(ix);
    out->max = pp_lhist_highest(ix);
  }
  return rc;
}

uint64_t pp_lhist_percentile(const pp_lhist *h, double p) {
  if (!h->count || !h->c)
    return 0;
  if (!(p > 0))
    p = 0;
  if (p > 100)
    p = 100;
  uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->count);
  if (rank < 1)
    rank = 1;
  if (rank > h->count)
    rank = h->count;
  size_t n = (size_t)(h->ghi - h->glo + 1u) * PP_LHIST_SUB;
  uint64_t seen = 0;
  for (size_t i = 0; i < n; i++) {
    seen += h->c[i];
    if (seen >= rank) {
      uint64_t v = pp_lhist_highest((unsigned)(h->glo * PP_LHIST_SUB + i));
      return v < h->min ? h->min : v > h->max ? h->max : v;
    }
  }
  return h->max;
}

void pp_lhist_split(const pp_lhist *h, uint64_t v, uint64_t *below,
                    uint64_t *at) {
  *below = *at = 0;
  if (!h->count || !h->c)
    return;
  if (h->max <= v) {
    *below = h->count;
    return;
  }
  if (h->min > v)
    return;
  size_t n = (size_t)(h->ghi - h->glo + 1u) * PP_LHIST_SUB;
  for (size_t i = 0; i < n; i++) {
    unsigned ix = (unsigned)(h->glo * PP_LHIST_SUB + i);
    if (pp_lhist_highest(ix) <= v)
      *below += h->c[i];
    else if (pp_lhist_lowest(ix) <= v)
      *at += h->c[i];
  }
}

/* ---- rolling window ------------------------------------------------------ */

void pp_roll_init(pp_roll *r) {
  for (unsigned i = 0; i < PP_ROLL_SLOTS; i++) {
    pp_lhist_init(&r->slot[i]);
    r->ix[i] = -1;
  }
}

void pp_roll_free(pp_roll *r) {
  for (unsigned i = 0; i < PP_ROLL_SLOTS; i++)
    pp_lhist_free(&r->slot[i]);
  pp_roll_init(r);
}

uint64_t pp_roll_count(const pp_roll *r, int64_t i) {
  if (i < 0)
    return 0;
  unsigned s = (unsigned)(i % PP_ROLL_SLOTS);
  return r->ix[s] == i ? r->slot[s].count : 0;
}

int pp_roll_merge(pp_roll *r, int64_t i, const pp_lhist *h) {
  pp_lhist *dst = pp__roll_slot(r, i);
  return dst ? pp_lhist_merge(dst, h) : -1;
}

int pp_roll_window(const pp_roll *r, int64_t last, unsigned n,
                   pp_lhist *out) {
  pp_lhist_reset(out);
  if (n < 1)
    n = 1;
  if (n > PP_ROLL_MAX_WINDOW)
    n = PP_ROLL_MAX_WINDOW;
  int rc = 0;
  for (unsigned k = 0; k < n; k++) {
    int64_t i = last - (int64_t)k;
    if (i < 0)
      break;
    unsigned s = (unsigned)(i % PP_ROLL_SLOTS);
    if (r->ix[s] == i && pp_lhist_merge(out, &r->slot[s]) != 0)
      rc = -1;
  }
  return rc;
}

/* ---- EWMA ---------------------------------------------------------------- */

void pp_ewma_init(pp_ewma *e, double tau_s) {
  e->tau_s = tau_s > 0 ? tau_s : 1;
  e->value = 0;
  e->have = 0;
}

void pp_ewma_update(pp_ewma *e, double x, double dt_s) {
  if (!isfinite(x))
    return;
  if (!e->have) {
    e->value = x;
    e->have = 1;
    return;
  }
  if (!(dt_s > 0))
    return;
  double a = 1.0 - exp(-dt_s / e->tau_s);
  e->value += a * (x - e->value);
}

/* ---- detector ------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double pp_median(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void pp_detector_cfg_default(pp_detector_cfg *c) {
  memset(c, 0, sizeof *c);
  c->k = 5;
  c->history = 60;
  c->min_values = 10;
  c->floor_rel = 0.05;
  c->direction = PP_DETECT_BOTH;
}

int pp_detector_init(pp_detector *d, const pp_detector_cfg *c) {
  memset(d, 0, sizeof *d);
  if (!c || c->history < 1 || c->history > PP_DETECT_MAX_HISTORY ||
      !(c->k > 0) || c->floor_rel < 0 || c->floor_abs < 0 ||
      c->poisson_t < 0)
    return -1;
  d->cfg = *c;
  d->hist = pp__calloc(c->history, sizeof *d->hist);
  return d->hist ? 0 : -1;
}

void pp_detector_free(pp_detector *d) {
  pp__free(d->hist);
  d->hist = NULL;
  d->n = 0;
}

pp_detect_result pp_detector_step(pp_detector *d, double x) {
  if (!d->hist || !isfinite(x))
    return PP_DETECT_NONE;
  int dir = 0; /* of this value's anomaly */
  if (d->n >= d->cfg.min_values && d->n > 0) {
    double tmp[PP_DETECT_MAX_HISTORY];
    memcpy(tmp, d->hist, d->n * sizeof *tmp);
    double med = pp_median(tmp, d->n);
    for (unsigned i = 0; i < d->n; i++)
      tmp[i] = fabs(d->hist[i] - med);
    double mad = pp_median(tmp, d->n);
    double fl = d->cfg.floor_rel * fabs(med);
    if (d->cfg.floor_abs > fl)
      fl = d->cfg.floor_abs;
    if (d->cfg.poisson_t > 0) {
      /* the standard deviation of a Poisson count, as a rate; at least
       * that of one event, so a series of zeros does not flag a single
       * event */
      double t = d->cfg.poisson_t, cnt = fabs(med) * t;
      double pn = sqrt(cnt > 1 ? cnt : 1) / t;
      if (pn > fl)
        fl = pn;
    }
    if (mad < fl)
      mad = fl;
    double band = d->cfg.k * 1.4826 * mad;
    d->median = med;
    d->mad = mad;
    d->threshold = x < med ? med - band : med + band;
    if (x > med + band && d->cfg.direction != PP_DETECT_DOWN)
      dir = 1;
    else if (x < med - band && d->cfg.direction != PP_DETECT_UP)
      dir = -1;
  }
  d->hist[d->head] = x;
  d->head = (d->head + 1) % d->cfg.history;
  if (d->n < d->cfg.history)
    d->n++;
  if (dir == 0) {
    int was = d->active;
    d->active = 0;
    return was ? PP_DETECT_END : PP_DETECT_NONE;
  }
  if (d->active == dir)
    return PP_DETECT_ONGOING;
  d->active = dir;
  return PP_DETECT_START;
}
