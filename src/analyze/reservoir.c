/* SPDX-License-Identifier: MIT */
/*
 * Reservoir sampling (reservoir.h): algorithm R for values offered one at
 * a time, a hypergeometric split for merging two samples.
 */
#include <string.h>

#include "analyze/reservoir.h"
#include "internal.h"

/* splitmix64: a small generator whose every seed gives a good stream. */
static uint64_t next_u64(pp_reservoir *r) {
  uint64_t z = (r->rng += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* Uniform in [0, n), n >= 1, without modulo bias (Lemire's rejection). */
static uint64_t below(pp_reservoir *r, uint64_t n) {
  uint64_t threshold = (0 - n) % n;
  for (;;) {
    uint64_t x = next_u64(r);
    if (x >= threshold)
      return x % n;
  }
}

void pp_reservoir_init(pp_reservoir *r, size_t cap, uint64_t seed) {
  memset(r, 0, sizeof *r);
  r->cap = cap ? cap : 1;
  r->rng = seed;
}

void pp_reservoir_free(pp_reservoir *r) {
  pp__free(r->v);
  r->v = NULL;
  r->n = r->alloc = 0;
  r->seen = 0;
}

static int room(pp_reservoir *r, size_t need) {
  if (need <= r->alloc)
    return 0;
  size_t a = r->alloc ? r->alloc : 16;
  while (a < need)
    a *= 2;
  if (a > r->cap)
    a = r->cap;
  double *nv = pp__realloc(r->v, a * sizeof *nv);
  if (!nv)
    return -1;
  r->v = nv;
  r->alloc = a;
  return 0;
}

int pp_reservoir_add(pp_reservoir *r, double x) {
  if (r->n < r->cap) {
    if (room(r, r->n + 1) != 0)
      return -1;
    r->v[r->n++] = x;
    r->seen++;
    return 0;
  }
  uint64_t j = below(r, r->seen + 1);
  if (j < r->cap)
    r->v[j] = x;
  r->seen++;
  return 0;
}

/* k values of v[0..n) drawn uniformly without replacement, appended to
 * out (a partial Fisher-Yates shuffle of a copy, into out's tail). */
static void draw(pp_reservoir *r, const double *v, size_t n, size_t k,
                 double *out, double *tmp) {
  if (!k)
    return; /* v may be NULL */
  memcpy(tmp, v, n * sizeof *v);
  for (size_t i = 0; i < k; i++) {
    size_t j = i + (size_t)below(r, n - i);
    double t = tmp[i];
    tmp[i] = tmp[j];
    tmp[j] = t;
    out[i] = tmp[i];
  }
}

int pp_reservoir_merge(pp_reservoir *dst, const pp_reservoir *src) {
  if (!src->seen)
    return 0;
  if (dst->seen + src->seen <= dst->cap) { /* both whole: append */
    if (room(dst, dst->n + src->n) != 0)
      return -1;
    memcpy(dst->v + dst->n, src->v, src->n * sizeof *src->v);
    dst->n += src->n;
    dst->seen += src->seen;
    return 0;
  }
  /* How many of a uniform sample of k from the union come from each
   * side: k draws without replacement from the two populations. */
  size_t k = dst->cap;
  uint64_t ra = dst->seen, rb = src->seen;
  size_t ka = 0, kb = 0;
  for (size_t i = 0; i < k; i++) {
    if (below(dst, ra + rb) < ra) {
      ra--;
      ka++;
    } else {
      rb--;
      kb++;
    }
  }
  /* With equal caps a side's sample holds min(seen, cap) >= its draws. */
  if (ka > dst->n || kb > src->n)
    return -1;
  size_t big = dst->n > src->n ? dst->n : src->n;
  double *out = pp__malloc(k * sizeof *out);
  double *tmp = pp__malloc((big ? big : 1) * sizeof *tmp);
  if (!out || !tmp) {
    pp__free(out);
    pp__free(tmp);
    return -1;
  }
  draw(dst, dst->v, dst->n, ka, out, tmp);
  draw(dst, src->v, src->n, kb, out + ka, tmp);
  pp__free(tmp);
  pp__free(dst->v);
  dst->v = out;
  dst->n = dst->alloc = k;
  dst->seen += src->seen;
  return 0;
}
