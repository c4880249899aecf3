/* SPDX-License-Identifier: MIT */
/*
 * Log-linear histogram (see histogram.h for the layout and invariants):
 * lazy block allocation, exact integer moments (a 128-bit sum and a 192-bit
 * sum of squares, mean and squared deviations derived from them when asked;
 * decoded histograms carry doubles, merged by Chan's parallel formula),
 * exact merging, percentile and cumulative queries that walk slot totals,
 * then group sums, then counters, and a compact varint serialisation whose
 * decoder checks every field against the invariants before accepting it.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "internal.h"
#include "stats/histogram.h"

/* The external definition of the inline fast path. */
extern inline void pp_hist_record(pp_hist *h, uint64_t v);

#define SLOT_MASK (PP_HIST_HALF - 1u)

static unsigned slot_of(uint64_t v) {
  return 54u - (unsigned)__builtin_clzll(v | SLOT_MASK);
}

static unsigned shift_of(unsigned s) { return s ? s - 1u : 0u; }

/* Lowest value counted by counter sub of slot s. */
static uint64_t index_lowest(unsigned s, unsigned sub) {
  if (s == 0)
    return sub;
  return (uint64_t)(PP_HIST_HALF + sub) << (s - 1u);
}

/* Highest value counted by counter sub of slot s (never overflows). */
static uint64_t index_highest(unsigned s, unsigned sub) {
  return index_lowest(s, sub) + ((UINT64_C(1) << shift_of(s)) - 1u);
}

static uint64_t clamp_u64(uint64_t v, uint64_t lo, uint64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

/* 128-bit helpers, portable (no __int128). */
static double u128_to_double(uint64_t lo, uint64_t hi) {
  return (double)hi * 18446744073709551616.0 + (double)lo;
}

static void add128(uint64_t *lo, uint64_t *hi, uint64_t blo, uint64_t bhi) {
  uint64_t l = *lo + blo;
  *hi += bhi + (l < blo);
  *lo = l;
}

/* a += b (192 bits). */
static void add192(uint64_t a[3], const uint64_t b[3]) {
  uint64_t carry = 0;
  for (unsigned i = 0; i < 3; i++) {
    uint64_t t = a[i] + b[i];
    uint64_t c = t < b[i];
    uint64_t t2 = t + carry;
    c += t2 < carry;
    a[i] = t2;
    carry = c;
  }
}

static void mul64(uint64_t a, uint64_t b, uint64_t *lo, uint64_t *hi) {
  uint64_t a0 = a & 0xffffffffu, a1 = a >> 32;
  uint64_t b0 = b & 0xffffffffu, b1 = b >> 32;
  uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  *lo = (mid << 32) | (p00 & 0xffffffffu);
  *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* Nearest 128-bit integer to d, clamped to [0, 2^128 - 1]. */
static void double_to_u128(double d, uint64_t *lo, uint64_t *hi) {
  if (!(d > 0)) {
    *lo = *hi = 0;
  } else if (d >= 0x1p128) {
    *lo = *hi = UINT64_MAX;
  } else {
    d = floor(d + 0.5);
    *hi = (uint64_t)(d * 0x1p-64);
    double rest = d - (double)*hi * 0x1p64;
    *lo = rest >= 0x1p64 ? UINT64_MAX : (uint64_t)rest;
  }
}

/* r[0..3] = a[0..2] * b (192 x 64 -> 256 bits). */
static void mul192_64(const uint64_t a[3], uint64_t b, uint64_t r[4]) {
  uint64_t carry = 0;
  for (unsigned i = 0; i < 3; i++) {
    uint64_t lo, hi;
    mul64(a[i], b, &lo, &hi);
    lo += carry;
    hi += lo < carry;
    r[i] = lo;
    carry = hi;
  }
  r[3] = carry;
}

/* r[0..3] = (hi:lo)^2 (128 -> 256 bits). */
static void sqr128(uint64_t lo, uint64_t hi, uint64_t r[4]) {
  uint64_t ll_lo, ll_hi, lh_lo, lh_hi, hh_lo, hh_hi;
  mul64(lo, lo, &ll_lo, &ll_hi);
  mul64(lo, hi, &lh_lo, &lh_hi);
  mul64(hi, hi, &hh_lo, &hh_hi);
  /* 2 * lo * hi, 129 bits: top bit into the high half */
  uint64_t top = lh_hi >> 63;
  lh_hi = lh_hi << 1 | lh_lo >> 63;
  lh_lo <<= 1;
  r[0] = ll_lo;
  uint64_t t = ll_hi + lh_lo, c = t < lh_lo;
  r[1] = t;
  t = hh_lo + lh_hi;
  uint64_t c2 = t < lh_hi;
  uint64_t t2 = t + c;
  c2 += t2 < c;
  r[2] = t2;
  r[3] = hh_hi + top + c2;
}

/* a -= b (256 bits); returns the borrow. */
static int sub256(uint64_t a[4], const uint64_t b[4]) {
  uint64_t borrow = 0;
  for (unsigned i = 0; i < 4; i++) {
    uint64_t x = a[i], y = b[i];
    uint64_t d = x - y - borrow;
    borrow = (x < y) || (x == y && borrow);
    a[i] = d;
  }
  return borrow != 0;
}

/* A 256-bit integer rounded to the nearest double: its top 64 bits, with
 * any lower bit set folded into the lowest (sticky), so the one rounding
 * of (double) a uint64_t is the correct one. */
static double u256_to_double(const uint64_t a[4]) {
  int w = 3;
  while (w >= 0 && a[w] == 0)
    w--;
  if (w < 0)
    return 0.0;
  unsigned lz = (unsigned)__builtin_clzll(a[w]);
  uint64_t top = a[w] << lz;
  uint64_t sticky = 0;
  if (w > 0) {
    if (lz)
      top |= a[w - 1] >> (64 - lz);
    sticky = a[w - 1] << lz;
    for (int i = w - 2; i >= 0; i--)
      sticky |= a[i];
  } else if (lz) {
    /* the value fits in 64 bits: exact */
    return (double)a[0];
  }
  if (sticky)
    top |= 1;
  return ldexp((double)top, 64 * w - (int)lz);
}

/* Mean and sum of squared deviations (histogram.h). */
void pp_hist_moments(const pp_hist *h, double *mean_out, double *m2_out) {
  double mean = 0, m2 = 0;
  if (h->count && h->approx) {
    mean = h->mean;
    m2 = h->m2;
  } else if (h->count) {
    /* as the running mean was kept (times the reciprocal), so a mean is
     * the same to the bit as before the integer moments */
    mean = u128_to_double(h->sum_lo, h->sum_hi) * (1.0 / (double)h->count);
    if (!(mean >= (double)h->min))
      mean = (double)h->min;
    if (!(mean <= (double)h->max))
      mean = (double)h->max;
    /* n * S2 - S1^2 = n * m2, exactly (S1 wraps only past 2^128: then
     * the difference may too, and m2 is taken as 0) */
    uint64_t d[4], s1sq[4];
    mul192_64(h->sq, h->count, d);
    sqr128(h->sum_lo, h->sum_hi, s1sq);
    if (sub256(d, s1sq) == 0)
      m2 = u256_to_double(d) / (double)h->count;
  }
  if (mean_out)
    *mean_out = mean;
  if (m2_out)
    *m2_out = m2;
}

void pp_hist_init(pp_hist *h) {
  memset(h, 0, sizeof *h);
  h->min = UINT64_MAX;
}

void pp_hist_free(pp_hist *h) {
  for (unsigned s = 0; s < PP_HIST_SLOTS; s++) {
    pp_hist_block *b = h->block[s];
    for (unsigned g = 0; b && g < PP_HIST_SLOT_GROUPS; g++)
      pp__free(b->c[g]);
    pp__free(b);
  }
  pp_hist_init(h);
}

void pp_hist_reset(pp_hist *h) {
  for (unsigned s = 0; s < PP_HIST_SLOTS; s++) {
    pp_hist_block *b = h->block[s];
    for (unsigned g = 0; b && h->slot_total[s] && g < PP_HIST_SLOT_GROUPS;
         g++) {
      if (b->group[g])
        memset(b->c[g], 0, PP_HIST_GROUP * sizeof *b->c[g]);
      b->group[g] = 0;
    }
    h->slot_total[s] = 0;
  }
  h->count = h->lost = 0;
  h->min = UINT64_MAX;
  h->max = 0;
  h->sum_lo = h->sum_hi = 0;
  h->sq[0] = h->sq[1] = h->sq[2] = 0;
  h->approx = 0;
  h->mean = h->m2 = 0;
}

static pp_hist_block *get_block(pp_hist *h, unsigned s) {
  if (!h->block[s])
    h->block[s] = pp__calloc(1, sizeof(pp_hist_block));
  return h->block[s];
}

/* The counters of slot s's group g, allocated on first touch; NULL when
 * out of memory. */
static uint64_t *get_group(pp_hist *h, unsigned s, unsigned g) {
  pp_hist_block *b = get_block(h, s);
  if (b && !b->c[g])
    b->c[g] = pp__calloc(PP_HIST_GROUP, sizeof *b->c[g]);
  return b ? b->c[g] : NULL;
}

void pp_hist_record_n(pp_hist *h, uint64_t v, uint64_t n) {
  if (n == 0)
    return;
  if (n > UINT64_MAX - h->count) {
    h->lost = pp__add_sat_u64(h->lost, n);
    return;
  }
  unsigned s = slot_of(v);
  unsigned sub = (unsigned)(v >> shift_of(s)) & SLOT_MASK;
  uint64_t *g = get_group(h, s, sub / PP_HIST_GROUP);
  if (!g) {
    h->lost = pp__add_sat_u64(h->lost, n);
    return;
  }
  pp_hist_block *b = h->block[s];
  g[sub % PP_HIST_GROUP] += n;
  b->group[sub / PP_HIST_GROUP] += n;
  h->slot_total[s] += n;
  h->count += n;
  if (v < h->min)
    h->min = v;
  if (v > h->max)
    h->max = v;
  uint64_t plo, phi;
  mul64(v, n, &plo, &phi);
  add128(&h->sum_lo, &h->sum_hi, plo, phi);
  if (h->approx) {
    /* Welford for n equal values (Chan's formula with m2_b = 0). */
    double x = (double)v, old_mean = h->mean;
    h->mean = u128_to_double(h->sum_lo, h->sum_hi) / (double)h->count;
    h->m2 += (double)n * (x - old_mean) * (x - h->mean);
    return;
  }
  /* n * v^2 into the sum of squares */
  uint64_t qlo, qhi, q[3], r[4];
  mul64(v, v, &qlo, &qhi);
  q[0] = qlo;
  q[1] = qhi;
  q[2] = 0;
  mul192_64(q, n, r);
  add192(h->sq, r); /* r[3] is 0: n * v^2 < 2^192 */
}

void pp__hist_add_square(pp_hist *h, uint64_t v) {
  uint64_t q[3] = {0, 0, 0};
  mul64(v, v, &q[0], &q[1]);
  add192(h->sq, q);
}

void pp__hist_record_slow(pp_hist *h, uint64_t v, uint64_t n) {
  pp_hist_record_n(h, v, n);
}

int pp_hist_add_slot(pp_hist *h, unsigned s, const uint64_t *c) {
  uint64_t total = 0;
  for (unsigned i = 0; i < PP_HIST_HALF; i++)
    if (__builtin_add_overflow(total, c[i], &total))
      return -1;
  if (!total)
    return 0;
  if (s >= PP_HIST_SLOTS || total > UINT64_MAX - h->count)
    return -1;
  /* all or nothing: every group the counts touch first */
  for (unsigned g = 0; g < PP_HIST_SLOT_GROUPS; g++)
    for (unsigned i = 0; i < PP_HIST_GROUP; i++)
      if (c[g * PP_HIST_GROUP + i]) {
        if (!get_group(h, s, g))
          return -1;
        break;
      }
  pp_hist_block *b = h->block[s];
  for (unsigned i = 0; i < PP_HIST_HALF; i++)
    if (c[i]) {
      b->c[i / PP_HIST_GROUP][i % PP_HIST_GROUP] += c[i];
      b->group[i / PP_HIST_GROUP] += c[i];
    }
  h->slot_total[s] += total;
  h->count += total;
  return 0;
}

void pp_hist_add_moments(pp_hist *h, uint64_t min, uint64_t max,
                         uint64_t sum_lo, uint64_t sum_hi,
                         const uint64_t sq[3]) {
  if (min < h->min)
    h->min = min;
  if (max > h->max)
    h->max = max;
  add128(&h->sum_lo, &h->sum_hi, sum_lo, sum_hi);
  add192(h->sq, sq);
}

void pp_hist_exact_moments(pp_hist *h, uint64_t sum_lo, uint64_t sum_hi,
                           const uint64_t sq[3]) {
  h->approx = 0;
  h->mean = h->m2 = 0;
  h->sum_lo = sum_lo;
  h->sum_hi = sum_hi;
  memcpy(h->sq, sq, sizeof h->sq);
}

uint64_t pp_hist_slot_value(unsigned s, unsigned sub) {
  return index_lowest(s, sub);
}

int pp_hist_merge(pp_hist *dst, const pp_hist *src) {
  if (src->count == 0) {
    dst->lost = pp__add_sat_u64(dst->lost, src->lost);
    return 0;
  }
  /* All or nothing: allocate every group first. */
  int fail = src->count > UINT64_MAX - dst->count;
  for (unsigned s = 0; s < PP_HIST_SLOTS && !fail; s++)
    for (unsigned g = 0; src->slot_total[s] && g < PP_HIST_SLOT_GROUPS; g++)
      if (src->block[s]->group[g] && !get_group(dst, s, g)) {
        fail = 1;
        break;
      }
  if (fail) {
    dst->lost = pp__add_sat_u64(pp__add_sat_u64(dst->lost, src->lost), src->count);
    return -1;
  }
  /* Snapshot src's scalars: dst may be src. */
  uint64_t nb = src->count, slo = src->sum_lo, shi = src->sum_hi;
  uint64_t sq_b[3] = {src->sq[0], src->sq[1], src->sq[2]};
  int exact = !src->approx && !dst->approx;
  double mean_b = 0, m2_b = 0, mean_a = 0, m2_a = 0;
  if (!exact) {
    pp_hist_moments(src, &mean_b, &m2_b);
    pp_hist_moments(dst, &mean_a, &m2_a);
  }
  for (unsigned s = 0; s < PP_HIST_SLOTS; s++) {
    uint64_t t = src->slot_total[s];
    if (!t)
      continue;
    const pp_hist_block *sb = src->block[s];
    pp_hist_block *db = dst->block[s];
    for (unsigned g = 0; g < PP_HIST_SLOT_GROUPS; g++) {
      uint64_t gs = sb->group[g];
      if (!gs)
        continue;
      const uint64_t *sc = sb->c[g];
      uint64_t *dc = db->c[g];
      for (unsigned i = 0; i < PP_HIST_GROUP; i++)
        dc[i] += sc[i];
      db->group[g] += gs;
    }
    dst->slot_total[s] += t;
  }
  if (src->min < dst->min)
    dst->min = src->min;
  if (src->max > dst->max)
    dst->max = src->max;
  dst->lost = pp__add_sat_u64(dst->lost, src->lost);
  if (exact) {
    add192(dst->sq, sq_b); /* integer moments add exactly */
    dst->count += nb;
    add128(&dst->sum_lo, &dst->sum_hi, slo, shi);
    return 0;
  }
  /* Chan et al.: m2 = m2_a + m2_b + delta^2 * na * nb / n. */
  double na = (double)dst->count, delta = mean_b - mean_a;
  double m2 = m2_a + m2_b;
  if (dst->count)
    m2 += delta * delta * (na * (double)nb / (na + (double)nb));
  dst->count += nb;
  add128(&dst->sum_lo, &dst->sum_hi, slo, shi);
  dst->mean = u128_to_double(dst->sum_lo, dst->sum_hi) / (double)dst->count;
  dst->m2 = m2;
  dst->approx = 1;
  return 0;
}

/* Find the counter holding the rank-th smallest value (1 <= rank <= count)
 * and return its highest equivalent value. */
static uint64_t value_at_rank(const pp_hist *h, uint64_t rank) {
  uint64_t seen = 0;
  unsigned s = 0;
  while (s < PP_HIST_SLOTS - 1u && seen + h->slot_total[s] < rank)
    seen += h->slot_total[s++];
  const pp_hist_block *b = h->block[s];
  if (!b) /* impossible by the invariants */
    return h->max;
  unsigned g = 0;
  while (g < PP_HIST_SLOT_GROUPS - 1u && seen + b->group[g] < rank)
    seen += b->group[g++];
  unsigned i = g * PP_HIST_GROUP, end = i + PP_HIST_GROUP - 1u;
  while (i < end && seen + pp_hist_block_at(b, i) < rank)
    seen += pp_hist_block_at(b, i++);
  return index_highest(s, i);
}

uint64_t pp_hist_percentile(const pp_hist *h, double p) {
  if (h->count == 0)
    return 0;
  if (!(p > 0)) /* also NaN */
    return h->min;
  if (p >= 100)
    return h->max;
  double x = ceil(p * (double)h->count / 100.0);
  uint64_t rank;
  if (!(x < (double)h->count))
    rank = h->count;
  else if (x < 1)
    rank = 1;
  else
    rank = (uint64_t)x;
  return clamp_u64(value_at_rank(h, rank), h->min, h->max);
}

uint64_t pp_hist_count_le(const pp_hist *h, uint64_t v) {
  if (h->count == 0 || v < h->min)
    return 0;
  if (v >= h->max)
    return h->count;
  unsigned s = slot_of(v);
  unsigned sub = (unsigned)(v >> shift_of(s)) & SLOT_MASK;
  uint64_t n = 0;
  for (unsigned k = 0; k < s; k++)
    n += h->slot_total[k];
  const pp_hist_block *b = h->block[s];
  if (!b)
    return n;
  unsigned g = sub / PP_HIST_GROUP;
  for (unsigned k = 0; k < g; k++)
    n += b->group[k];
  for (unsigned i = g * PP_HIST_GROUP; i <= sub; i++)
    n += pp_hist_block_at(b, i);
  return n;
}

double pp_hist_mean(const pp_hist *h) {
  double mean;
  pp_hist_moments(h, &mean, NULL);
  return mean;
}

double pp_hist_stddev(const pp_hist *h) {
  double m2;
  pp_hist_moments(h, NULL, &m2);
  if (h->count == 0 || !(m2 > 0))
    return 0.0;
  return sqrt(m2 / (double)h->count);
}

uint64_t pp_hist_lowest_equivalent(uint64_t v) {
  unsigned sh = shift_of(slot_of(v));
  return (v >> sh) << sh;
}

uint64_t pp_hist_highest_equivalent(uint64_t v) {
  unsigned sh = shift_of(slot_of(v));
  return ((v >> sh) << sh) + ((UINT64_C(1) << sh) - 1u);
}

/* ---- serialisation ---------------------------------------------------- */

typedef struct writer {
  unsigned char *buf;
  size_t cap, pos;
} writer;

static void put_bytes(writer *w, const unsigned char *p, size_t n) {
  if (w->pos <= w->cap && n <= w->cap - w->pos)
    memcpy(w->buf + w->pos, p, n);
  w->pos += n;
}

static void put_varint(writer *w, uint64_t v) {
  unsigned char tmp[10];
  size_t n = 0;
  while (v >= 0x80) {
    tmp[n++] = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  tmp[n++] = (unsigned char)v;
  put_bytes(w, tmp, n);
}

static void put_double(writer *w, double d) {
  uint64_t bits;
  unsigned char tmp[8];
  memcpy(&bits, &d, sizeof bits);
  for (unsigned i = 0; i < 8; i++)
    tmp[i] = (unsigned char)(bits >> (8 * i));
  put_bytes(w, tmp, 8);
}

size_t pp_hist_encode(const pp_hist *h, unsigned char *buf, size_t cap) {
  writer w = {buf, buf ? cap : 0, 0};
  uint64_t nonempty = 0;
  for (unsigned s = 0; s < PP_HIST_SLOTS; s++) {
    const pp_hist_block *b = h->block[s];
    if (!h->slot_total[s] || !b)
      continue;
    for (unsigned g = 0; g < PP_HIST_SLOT_GROUPS; g++)
      for (unsigned i = 0; b->group[g] && i < PP_HIST_GROUP; i++)
        nonempty += b->c[g][i] != 0;
  }
  put_varint(&w, nonempty);
  uint64_t prev = 0;
  for (unsigned s = 0; s < PP_HIST_SLOTS; s++) {
    const pp_hist_block *b = h->block[s];
    if (!h->slot_total[s] || !b)
      continue;
    for (unsigned g = 0; g < PP_HIST_SLOT_GROUPS; g++) {
      if (!b->group[g])
        continue;
      for (unsigned i = g * PP_HIST_GROUP; i < (g + 1) * PP_HIST_GROUP; i++) {
        uint64_t c = b->c[g][i % PP_HIST_GROUP];
        if (!c)
          continue;
        uint64_t idx = (uint64_t)s * PP_HIST_HALF + i;
        put_varint(&w, idx - prev);
        put_varint(&w, c);
        prev = idx;
      }
    }
  }
  put_varint(&w, h->min);
  put_varint(&w, h->max);
  /* Rounding can leave the moments a hair outside what the decoder accepts
   * (a mean just below min, an m2 just below 0 when every value is the
   * same): clamp them, so that what is encoded always decodes. */
  double mean, m2;
  pp_hist_moments(h, &mean, &m2);
  if (h->count && !(mean >= (double)h->min))
    mean = (double)h->min;
  if (h->count && !(mean <= (double)h->max))
    mean = (double)h->max;
  if (!(m2 >= 0))
    m2 = 0;
  else if (!isfinite(m2))
    m2 = DBL_MAX;
  put_double(&w, mean);
  put_double(&w, m2);
  put_varint(&w, h->lost);
  return w.pos;
}

typedef struct reader {
  const unsigned char *p;
  size_t len, pos;
} reader;

static int get_varint(reader *r, uint64_t *out) {
  uint64_t v = 0;
  for (unsigned i = 0; i < 10; i++) {
    if (r->pos >= r->len)
      return -1;
    unsigned char c = r->p[r->pos++];
    if (i == 9 && c > 1) /* more than 64 bits */
      return -1;
    v |= (uint64_t)(c & 0x7f) << (7 * i);
    if (!(c & 0x80)) {
      *out = v;
      return 0;
    }
  }
  return -1;
}

static int get_double(reader *r, double *out) {
  if (r->len - r->pos < 8)
    return -1;
  uint64_t bits = 0;
  for (unsigned i = 0; i < 8; i++)
    bits |= (uint64_t)r->p[r->pos + i] << (8 * i);
  r->pos += 8;
  memcpy(out, &bits, sizeof bits);
  return 0;
}

static int decode_body(pp_hist *h, reader *r) {
  uint64_t n, first = 0, last = 0;
  if (get_varint(r, &n) || n > PP_HIST_INDEX_COUNT)
    return -1;
  uint64_t idx = 0;
  for (uint64_t k = 0; k < n; k++) {
    uint64_t delta, c;
    if (get_varint(r, &delta) || get_varint(r, &c))
      return -1;
    if ((k > 0 && delta == 0) || delta >= PP_HIST_INDEX_COUNT - idx || c == 0)
      return -1;
    idx += delta;
    if (c > UINT64_MAX - h->count)
      return -1;
    unsigned s = (unsigned)(idx / PP_HIST_HALF);
    unsigned sub = (unsigned)(idx % PP_HIST_HALF);
    uint64_t *g = get_group(h, s, sub / PP_HIST_GROUP);
    if (!g)
      return -1;
    g[sub % PP_HIST_GROUP] = c;
    h->block[s]->group[sub / PP_HIST_GROUP] += c;
    h->slot_total[s] += c;
    h->count += c;
    if (k == 0)
      first = idx;
    last = idx;
  }
  uint64_t mn, mx, lost;
  double mean, m2;
  if (get_varint(r, &mn) || get_varint(r, &mx) || get_double(r, &mean) ||
      get_double(r, &m2) || get_varint(r, &lost))
    return -1;
  if (h->count == 0) {
    if (mn != UINT64_MAX || mx != 0 || mean != 0 || m2 != 0)
      return -1;
  } else {
    unsigned s0 = slot_of(mn), s1 = slot_of(mx);
    uint64_t i0 = (uint64_t)s0 * PP_HIST_HALF +
                  ((mn >> shift_of(s0)) & SLOT_MASK);
    uint64_t i1 = (uint64_t)s1 * PP_HIST_HALF +
                  ((mx >> shift_of(s1)) & SLOT_MASK);
    if (mn > mx || i0 != first || i1 != last)
      return -1;
    /* The mean lies in [min, max] up to rounding. */
    double lo = (double)mn, hi = (double)mx, slack = 1e-9 * hi + 1e-9;
    if (!isfinite(mean) || mean < lo - slack || mean > hi + slack)
      return -1;
    if (!isfinite(m2) || m2 < 0)
      return -1;
  }
  h->min = mn;
  h->max = mx;
  /* The file keeps the moments as doubles: the histogram is approx
   * (histogram.h) from here on, its sum rebuilt from them. */
  h->mean = mean;
  h->m2 = m2;
  h->approx = h->count != 0;
  if (h->count)
    double_to_u128(mean * (double)h->count, &h->sum_lo, &h->sum_hi);
  h->lost = lost;
  return 0;
}

long pp_hist_decode(pp_hist *h, const unsigned char *buf, size_t len) {
  reader r = {buf, buf ? len : 0, 0};
  pp_hist_reset(h);
  if (decode_body(h, &r) != 0) {
    pp_hist_reset(h);
    return -1;
  }
  return (long)r.pos;
}
