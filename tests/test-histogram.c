/* SPDX-License-Identifier: MIT */
/*
 * Tests for the log-linear histogram (src/stats/histogram.c): percentile
 * accuracy against an exact sort on heavy-tailed, lognormal and multimodal
 * samples from a seeded splitmix64 generator, bucket geometry, exact
 * merging, the serialisation round trip and its rejection of truncated or
 * random input, and edge cases (empty, 0, UINT64_MAX, huge repeat counts).
 */
#include <stdint.h>
#include <string.h>

#include "runner.h"
#include "stats/histogram.h"

#define NVALS 1000000

static uint64_t rng_state;

static void rng_seed(uint64_t s) { rng_state = s; }

static uint64_t rng_next(void) {
  uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

/* Uniform in (0, 1]. */
static double rng_unit(void) {
  return (double)((rng_next() >> 11) + 1) * 0x1p-53;
}

static double rng_normal(void) {
  return sqrt(-2.0 * log(rng_unit())) * cos(6.283185307179586 * rng_unit());
}

static uint64_t to_u64(double d) { return d <= 0 ? 0 : (uint64_t)(d + 0.5); }

enum dist { DIST_PARETO, DIST_LOGNORMAL, DIST_MIXTURE, DIST_LOGUNIFORM };

/* Values in nanoseconds. */
static uint64_t draw(enum dist d) {
  switch (d) {
  case DIST_PARETO: /* x_m = 1 us, alpha = 1.2: very heavy tail */
    return to_u64(1000.0 / pow(rng_unit(), 1.0 / 1.2));
  case DIST_LOGNORMAL: /* median 1 ms */
    return to_u64(exp(log(1e6) + 1.0 * rng_normal()));
  case DIST_MIXTURE: {
    double u = rng_unit();
    if (u <= 0.001) /* outliers at seconds */
      return to_u64(1e9 + 4e9 * rng_unit());
    if (u <= 0.6)
      return to_u64(50e3 + 5e3 * rng_normal());
    if (u <= 0.9)
      return to_u64(2e6 + 2e5 * rng_normal());
    return to_u64(80e6 + 8e6 * rng_normal());
  }
  case DIST_LOGUNIFORM: /* 1 ns .. ~1000 s, plus small exact values */
    return to_u64(exp2(40.0 * rng_unit()) - 1.0);
  }
  return 0;
}

static uint64_t *gen(enum dist d, uint64_t seed, size_t n) {
  uint64_t *v = malloc(n * sizeof *v);
  CHECK(v != NULL);
  rng_seed(seed);
  for (size_t i = 0; i < n; i++)
    v[i] = draw(d);
  return v;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* The exact value at percentile p of sorted[0..n), same rank rule as the
 * histogram. */
static uint64_t exact_pct(const uint64_t *sorted, size_t n, double p) {
  double x = ceil(p * (double)n / 100.0);
  size_t rank = x < 1 ? 1 : x > (double)n ? n : (size_t)x;
  return sorted[rank - 1];
}

static const double pcts[] = {50, 90, 95, 99, 99.9};

static void check_accuracy(enum dist d, uint64_t seed) {
  uint64_t *v = gen(d, seed, NVALS);
  pp_hist h;
  pp_hist_init(&h);
  long double sum = 0;
  for (size_t i = 0; i < NVALS; i++) {
    pp_hist_record(&h, v[i]);
    sum += v[i];
  }
  long double mean = sum / NVALS, ss = 0;
  for (size_t i = 0; i < NVALS; i++)
    ss += ((long double)v[i] - mean) * ((long double)v[i] - mean);
  double sd = (double)sqrtl(ss / NVALS);
  qsort(v, NVALS, sizeof *v, cmp_u64);
  CHECK_EQ_U(h.count, NVALS);
  CHECK_EQ_U(h.lost, 0);
  CHECK_EQ_U(h.min, v[0]);
  CHECK_EQ_U(h.max, v[NVALS - 1]);
  CHECK_EQ_U(pp_hist_percentile(&h, 0), v[0]);
  CHECK_EQ_U(pp_hist_percentile(&h, 100), v[NVALS - 1]);
  CHECK_NEAR(pp_hist_mean(&h), (double)mean, 1e-9 * (double)mean);
  CHECK_NEAR(pp_hist_stddev(&h), sd, 1e-6 * sd);
  for (size_t k = 0; k < sizeof pcts / sizeof pcts[0]; k++) {
    uint64_t want = exact_pct(v, NVALS, pcts[k]);
    uint64_t got = pp_hist_percentile(&h, pcts[k]);
    if (!(fabs((double)got - (double)want) <= 0.001 * (double)want))
      PP_FAIL("dist %d p%g: hist %llu exact %llu", (int)d, pcts[k],
              (unsigned long long)got, (unsigned long long)want);
    /* The reported value is the top of the exact value's bucket. */
    CHECK_EQ_U(got, pp_hist_highest_equivalent(want) < h.max
                        ? pp_hist_highest_equivalent(want)
                        : h.max);
  }
  /* A fine sweep, including ranks at bucket boundaries. */
  for (double p = 0.5; p < 100; p += 0.5) {
    uint64_t want = exact_pct(v, NVALS, p);
    uint64_t got = pp_hist_percentile(&h, p);
    CHECK_LE(want, got);
    CHECK_LE(got - want, want / 1024);
  }
  /* count_le agrees with the sort at bucket tops. */
  for (size_t i = 0; i < NVALS; i += 9973) {
    uint64_t top = pp_hist_highest_equivalent(v[i]);
    size_t lo = 0, hi = NVALS; /* first index with value > top */
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (v[mid] <= top)
        lo = mid + 1;
      else
        hi = mid;
    }
    CHECK_EQ_U(pp_hist_count_le(&h, top), lo);
  }
  pp_hist_free(&h);
  free(v);
}

PP_TEST(hist_accuracy_pareto) { check_accuracy(DIST_PARETO, 1); }
PP_TEST(hist_accuracy_lognormal) { check_accuracy(DIST_LOGNORMAL, 2); }
PP_TEST(hist_accuracy_mixture) { check_accuracy(DIST_MIXTURE, 3); }
PP_TEST(hist_accuracy_loguniform) { check_accuracy(DIST_LOGUNIFORM, 4); }

static void check_geometry(uint64_t v) {
  uint64_t lo = pp_hist_lowest_equivalent(v);
  uint64_t hi = pp_hist_highest_equivalent(v);
  if (!(lo <= v && v <= hi))
    PP_FAIL("%llu not in [%llu, %llu]", (unsigned long long)v,
            (unsigned long long)lo, (unsigned long long)hi);
  if (v < 2048) {
    CHECK_EQ_U(lo, v);
    CHECK_EQ_U(hi, v);
  } else {
    uint64_t width = hi - lo + 1;
    CHECK((width & (width - 1)) == 0);
    CHECK_LE(width, lo / 1024);
    CHECK_EQ_U(lo % width, 0);
  }
  /* Every value of the bucket maps to the same bucket, and the buckets
   * tile the line. */
  CHECK_EQ_U(pp_hist_lowest_equivalent(hi), lo);
  CHECK_EQ_U(pp_hist_highest_equivalent(lo), hi);
  if (lo > 0)
    CHECK_EQ_U(pp_hist_highest_equivalent(lo - 1), lo - 1);
  if (hi < UINT64_MAX)
    CHECK_EQ_U(pp_hist_lowest_equivalent(hi + 1), hi + 1);
}

PP_TEST(hist_geometry) {
  for (uint64_t v = 0; v < 70000; v++)
    check_geometry(v);
  for (unsigned b = 0; b < 64; b++) {
    uint64_t p = UINT64_C(1) << b;
    check_geometry(p);
    check_geometry(p - 1);
    check_geometry(p + 1);
    check_geometry(p | (p - 1));
  }
  check_geometry(UINT64_MAX);
  CHECK_EQ_U(pp_hist_highest_equivalent(UINT64_MAX), UINT64_MAX);
  CHECK_EQ_U(pp_hist_lowest_equivalent(UINT64_MAX),
             UINT64_MAX - (UINT64_C(1) << 53) + 1);
  /* Known boundaries: bucket 1 starts at 2048 with width 2. */
  CHECK_EQ_U(pp_hist_lowest_equivalent(2049), 2048);
  CHECK_EQ_U(pp_hist_highest_equivalent(2048), 2049);
  CHECK_EQ_U(pp_hist_lowest_equivalent(4095), 4094);
  CHECK_EQ_U(pp_hist_highest_equivalent(4096), 4099);
  rng_seed(7);
  for (int i = 0; i < 200000; i++)
    check_geometry(rng_next() >> (rng_next() % 64));
  /* Recording a value keeps it within its bucket. */
  pp_hist h;
  pp_hist_init(&h);
  for (int i = 0; i < 10000; i++) {
    uint64_t v = rng_next() >> (rng_next() % 64);
    pp_hist_reset(&h);
    pp_hist_record(&h, v);
    pp_hist_record(&h, 0);
    uint64_t p100 = pp_hist_percentile(&h, 99.99);
    CHECK_EQ_U(p100, v);
    CHECK_EQ_U(pp_hist_count_le(&h, pp_hist_lowest_equivalent(v)), 2);
    if (pp_hist_lowest_equivalent(v) > 0)
      CHECK_EQ_U(pp_hist_count_le(&h, pp_hist_lowest_equivalent(v) - 1), 1);
  }
  pp_hist_free(&h);
}

static void check_same(const pp_hist *a, const pp_hist *b) {
  CHECK_EQ_U(a->count, b->count);
  CHECK_EQ_U(a->min, b->min);
  CHECK_EQ_U(a->max, b->max);
  CHECK_EQ_U(a->lost, b->lost);
  for (double p = 0; p <= 100; p += 0.1)
    CHECK_EQ_U(pp_hist_percentile(a, p), pp_hist_percentile(b, p));
  CHECK_EQ_U(pp_hist_percentile(a, 99.999), pp_hist_percentile(b, 99.999));
  for (unsigned s = 0; s < PP_HIST_SLOTS; s++) {
    CHECK_EQ_U(a->slot_total[s], b->slot_total[s]);
    if (!a->slot_total[s])
      continue;
    CHECK(memcmp(a->block[s]->group, b->block[s]->group,
                 sizeof a->block[s]->group) == 0);
    for (unsigned i = 0; i < PP_HIST_HALF; i++)
      CHECK_EQ_U(pp_hist_block_at(a->block[s], i),
                 pp_hist_block_at(b->block[s], i));
  }
}

PP_TEST(hist_merge) {
  uint64_t *v = gen(DIST_MIXTURE, 11, NVALS);
  pp_hist whole, a, b;
  pp_hist_init(&whole);
  pp_hist_init(&a);
  pp_hist_init(&b);
  for (size_t i = 0; i < NVALS; i++) {
    pp_hist_record(&whole, v[i]);
    pp_hist_record(i < NVALS / 3 ? &a : &b, v[i]);
  }
  CHECK_EQ(pp_hist_merge(&a, &b), 0);
  check_same(&a, &whole);
  CHECK_NEAR(pp_hist_mean(&a), pp_hist_mean(&whole),
             1e-12 * pp_hist_mean(&whole));
  CHECK_NEAR(pp_hist_stddev(&a), pp_hist_stddev(&whole),
             1e-9 * pp_hist_stddev(&whole));
  for (size_t i = 0; i < NVALS; i += 7919)
    CHECK_EQ_U(pp_hist_count_le(&a, v[i]), pp_hist_count_le(&whole, v[i]));

  /* Into an empty histogram, and an empty one into a full one. */
  pp_hist e;
  pp_hist_init(&e);
  CHECK_EQ(pp_hist_merge(&e, &whole), 0);
  check_same(&e, &whole);
  CHECK_NEAR(pp_hist_mean(&e), pp_hist_mean(&whole), 0);
  pp_hist empty;
  pp_hist_init(&empty);
  CHECK_EQ(pp_hist_merge(&e, &empty), 0);
  check_same(&e, &whole);

  /* Merging with itself doubles every count. */
  CHECK_EQ(pp_hist_merge(&e, &e), 0);
  CHECK_EQ_U(e.count, 2 * whole.count);
  CHECK_EQ_U(pp_hist_percentile(&e, 50), pp_hist_percentile(&whole, 50));
  CHECK_NEAR(pp_hist_mean(&e), pp_hist_mean(&whole),
             1e-12 * pp_hist_mean(&whole));
  CHECK_NEAR(pp_hist_stddev(&e), pp_hist_stddev(&whole),
             1e-9 * pp_hist_stddev(&whole));
  CHECK_EQ_U(pp_hist_count_le(&e, 100000), 2 * pp_hist_count_le(&whole,
                                                                  100000));

  /* Disjoint ranges: Chan's formula against a direct computation. */
  pp_hist lo, hi, both;
  pp_hist_init(&lo);
  pp_hist_init(&hi);
  pp_hist_init(&both);
  for (uint64_t i = 0; i < 1000; i++) {
    pp_hist_record(&lo, 10 + i % 7);
    pp_hist_record(&hi, 1000000000 + i * 13);
    pp_hist_record(&both, 10 + i % 7);
    pp_hist_record(&both, 1000000000 + i * 13);
  }
  CHECK_EQ(pp_hist_merge(&lo, &hi), 0);
  check_same(&lo, &both);
  CHECK_NEAR(pp_hist_mean(&lo), pp_hist_mean(&both),
             1e-12 * pp_hist_mean(&both));
  CHECK_NEAR(pp_hist_stddev(&lo), pp_hist_stddev(&both),
             1e-9 * pp_hist_stddev(&both));
  pp_hist_free(&lo);
  pp_hist_free(&hi);
  pp_hist_free(&both);
  pp_hist_free(&e);
  pp_hist_free(&empty);
  pp_hist_free(&whole);
  pp_hist_free(&a);
  pp_hist_free(&b);
  free(v);
}

static unsigned char *encode_alloc(const pp_hist *h, size_t *len) {
  size_t n = pp_hist_encode(h, NULL, 0);
  unsigned char *buf = malloc(n);
  CHECK(buf != NULL);
  CHECK_EQ_U(pp_hist_encode(h, buf, n), n);
  *len = n;
  return buf;
}

PP_TEST(hist_encode_roundtrip) {
  uint64_t *v = gen(DIST_LOGUNIFORM, 21, 200000);
  pp_hist h, d;
  pp_hist_init(&h);
  pp_hist_init(&d);
  for (size_t i = 0; i < 200000; i++)
    pp_hist_record(&h, v[i]);
  pp_hist_record(&h, UINT64_MAX);
  pp_hist_record(&h, 0);
  h.lost = 5;
  size_t n;
  unsigned char *buf = encode_alloc(&h, &n);
  CHECK_EQ(pp_hist_decode(&d, buf, n), (long)n);
  check_same(&d, &h);
  CHECK_NEAR(pp_hist_mean(&d), pp_hist_mean(&h), 0);
  CHECK_NEAR(pp_hist_stddev(&d), pp_hist_stddev(&h),
             1e-12 * pp_hist_stddev(&h));

  /* Re-encoding gives the same bytes. */
  size_t n2;
  unsigned char *buf2 = encode_alloc(&d, &n2);
  CHECK_EQ_U(n2, n);
  CHECK(memcmp(buf, buf2, n) == 0);

  /* A short cap writes nothing past it. */
  unsigned char *small = malloc(n + 16);
  CHECK(small != NULL);
  for (size_t cap = 0; cap < n; cap += 1 + cap / 3) {
    memset(small, 0xa5, n + 16);
    CHECK_EQ_U(pp_hist_encode(&h, small, cap), n);
    for (size_t i = cap; i < n + 16; i++)
      CHECK_EQ(small[i], 0xa5);
  }

  /* Trailing bytes are not consumed. */
  memcpy(small, buf, n);
  CHECK_EQ(pp_hist_decode(&d, small, n + 16), (long)n);
  check_same(&d, &h);

  /* Every truncation fails and leaves d empty: every length of a smaller
   * histogram's encoding, every 97th of the big one. */
  pp_hist t;
  pp_hist_init(&t);
  for (size_t i = 0; i < 3000; i++)
    pp_hist_record(&t, v[i]);
  size_t nt;
  unsigned char *bt = encode_alloc(&t, &nt);
  for (size_t len = 0; len < nt; len++) {
    CHECK_EQ(pp_hist_decode(&d, bt, len), -1);
    CHECK_EQ_U(d.count, 0);
    CHECK_EQ_U(pp_hist_percentile(&d, 50), 0);
  }
  CHECK_EQ(pp_hist_decode(&d, bt, nt), (long)nt);
  check_same(&d, &t);
  for (size_t len = 0; len < n; len += len < 64 || n - len < 64 ? 1 : 97)
    CHECK_EQ(pp_hist_decode(&d, buf, len), -1);
  free(bt);
  pp_hist_free(&t);
  CHECK_EQ(pp_hist_decode(&d, NULL, 0), -1);

  /* Recording into a decoded histogram keeps working. */
  CHECK_EQ(pp_hist_decode(&d, buf, n), (long)n);
  pp_hist_record(&d, 12345);
  pp_hist_record(&h, 12345);
  check_same(&d, &h);
  CHECK_NEAR(pp_hist_mean(&d), pp_hist_mean(&h), 1e-12 * pp_hist_mean(&h));

  /* The empty histogram round-trips too. */
  pp_hist e;
  pp_hist_init(&e);
  size_t ne;
  unsigned char *be = encode_alloc(&e, &ne);
  CHECK_EQ(pp_hist_decode(&d, be, ne), (long)ne);
  CHECK_EQ_U(d.count, 0);
  CHECK_EQ_U(d.min, UINT64_MAX);
  CHECK_EQ_U(d.max, 0);
  free(be);
  free(small);
  free(buf2);
  free(buf);
  free(v);
  pp_hist_free(&h);
  pp_hist_free(&d);
}

/* A histogram that decode accepted must satisfy the invariants. */
static void check_invariants(const pp_hist *h) {
  uint64_t total = 0;
  for (unsigned s = 0; s < PP_HIST_SLOTS; s++) {
    if (!h->slot_total[s])
      continue;
    CHECK(h->block[s] != NULL);
    uint64_t st = 0;
    for (unsigned g = 0; g < PP_HIST_SLOT_GROUPS; g++) {
      uint64_t gs = 0;
      for (unsigned i = 0; i < PP_HIST_GROUP; i++)
        gs += pp_hist_block_at(h->block[s], g * PP_HIST_GROUP + i);
      CHECK_EQ_U(gs, h->block[s]->group[g]);
      /* a group of counts has its counters */
      CHECK(!gs || h->block[s]->c[g] != NULL);
      st += gs;
    }
    CHECK_EQ_U(st, h->slot_total[s]);
    total += st;
  }
  CHECK_EQ_U(total, h->count);
  if (h->count) {
    CHECK(h->min <= h->max);
    uint64_t p = pp_hist_percentile(h, 50);
    CHECK(p >= h->min && p <= h->max);
    CHECK_EQ_U(pp_hist_count_le(h, h->max), h->count);
  }
}

/* Every value equal: rounding in the running mean can leave the sum of
 * squared deviations a hair below 0 (it did for 500 values of 10000 ns of
 * a stats-mode GPU zone), which the decoder rejects; what is encoded must
 * always decode, with a zero deviation. */
PP_TEST(hist_encode_equal_values_decode) {
  static const uint64_t vals[] = {10000, 3, 1234567, 999999999937ULL};
  for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
    pp_hist h, d;
    pp_hist_init(&h);
    pp_hist_init(&d);
    for (int i = 1; i <= 3000; i++) {
      pp_hist_record(&h, vals[k]);
      size_t n;
      unsigned char *buf = encode_alloc(&h, &n);
      if (pp_hist_decode(&d, buf, n) != (long)n)
        PP_FAIL("%d values of %llu do not decode", i,
                (unsigned long long)vals[k]);
      free(buf);
      CHECK_EQ_U(d.count, (uint64_t)i);
      CHECK_NEAR(pp_hist_stddev(&d), 0, 1e-9 * (double)vals[k] + 1e-6);
      CHECK_NEAR(pp_hist_mean(&d), (double)vals[k], 1e-9 * (double)vals[k]);
    }
    pp_hist_free(&h);
    pp_hist_free(&d);
  }
}

PP_TEST(hist_decode_garbage) {
  /* Random bytes. */
  unsigned char buf[256];
  pp_hist h;
  pp_hist_init(&h);
  rng_seed(99);
  for (int i = 0; i < 100000; i++) {
    size_t len = rng_next() % sizeof buf;
    for (size_t k = 0; k < len; k++)
      buf[k] = (unsigned char)rng_next();
    if (i % 4 == 0 && len > 0)
      buf[0] = (unsigned char)(rng_next() % 4); /* few counters */
    long r = pp_hist_decode(&h, buf, len);
    CHECK(r == -1 || (r > 0 && (size_t)r <= len));
    if (r > 0)
      check_invariants(&h);
    else
      CHECK_EQ_U(h.count, 0);
  }
  /* Mutations of a valid encoding. */
  pp_hist src;
  pp_hist_init(&src);
  for (uint64_t v = 1; v < (UINT64_C(1) << 40); v = v * 3 + 1)
    pp_hist_record_n(&src, v, v % 5 + 1);
  size_t n;
  unsigned char *valid = encode_alloc(&src, &n);
  unsigned char *mut = malloc(n);
  CHECK(mut != NULL);
  int rejected = 0;
  for (int i = 0; i < 100000; i++) {
    memcpy(mut, valid, n);
    int flips = 1 + (int)(rng_next() % 3);
    for (int f = 0; f < flips; f++)
      mut[rng_next() % n] ^= (unsigned char)(1u << (rng_next() % 8));
    long r = pp_hist_decode(&h, mut, n);
    CHECK(r == -1 || (r > 0 && (size_t)r <= n));
    if (r > 0)
      check_invariants(&h);
    else
      rejected++;
  }
  CHECK_GT(rejected, 1000);
  free(mut);
  free(valid);
  pp_hist_free(&src);
  pp_hist_free(&h);
}

/* Hand-built encodings that are well-formed but inconsistent. */
PP_TEST(hist_decode_rejects) {
  pp_hist h;
  pp_hist_init(&h);
  /* One counter at index 5 with count 2, min 5, max 5, mean 5, m2 0. */
  unsigned char ok[] = {1, 5, 2, 5, 5, 0, 0, 0, 0, 0, 0, 0x14, 0x40,
                        0, 0, 0, 0, 0, 0, 0, 0, 0};
  CHECK_EQ(pp_hist_decode(&h, ok, sizeof ok), (long)sizeof ok);
  CHECK_EQ_U(h.count, 2);
  CHECK_EQ_U(pp_hist_percentile(&h, 50), 5);
  CHECK_NEAR(pp_hist_mean(&h), 5.0, 0);
  unsigned char bad[sizeof ok];
  /* min outside the first bucket */
  memcpy(bad, ok, sizeof ok);
  bad[3] = 4;
  CHECK_EQ(pp_hist_decode(&h, bad, sizeof bad), -1);
  CHECK_EQ_U(h.count, 0);
  /* max outside the last bucket */
  memcpy(bad, ok, sizeof ok);
  bad[4] = 6;
  CHECK_EQ(pp_hist_decode(&h, bad, sizeof bad), -1);
  /* zero count */
  memcpy(bad, ok, sizeof ok);
  bad[2] = 0;
  CHECK_EQ(pp_hist_decode(&h, bad, sizeof bad), -1);
  /* negative m2 */
  memcpy(bad, ok, sizeof ok);
  bad[20] = 0xbf;
  bad[19] = 0xf0;
  CHECK_EQ(pp_hist_decode(&h, bad, sizeof bad), -1);
  /* NaN mean */
  memcpy(bad, ok, sizeof ok);
  bad[12] = 0x7f;
  bad[11] = 0xf8;
  CHECK_EQ(pp_hist_decode(&h, bad, sizeof bad), -1);

  /* Index out of range: 56320 = 0x80 0xb8 0x03. */
  unsigned char oor[] = {1, 0x80, 0xb8, 0x03, 1};
  CHECK_EQ(pp_hist_decode(&h, oor, sizeof oor), -1);
  /* Repeated index (delta 0 after the first). */
  unsigned char rep[] = {2, 5, 1, 0, 1, 5, 5, 0, 0, 0, 0, 0, 0, 0x14, 0x40,
                         0, 0, 0, 0, 0, 0, 0, 0, 0};
  CHECK_EQ(pp_hist_decode(&h, rep, sizeof rep), -1);
  /* Too many counters. */
  unsigned char many[] = {0x81, 0xb8, 0x03};
  CHECK_EQ(pp_hist_decode(&h, many, sizeof many), -1);
  /* Overlong varint (11 bytes) and a 10th byte above 1. */
  unsigned char longv[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                           0x80, 0x80, 0x80, 0x80, 0x00};
  CHECK_EQ(pp_hist_decode(&h, longv, sizeof longv), -1);
  /* A 64-bit varint whose 10th byte carries more than bit 63 (lost). */
  unsigned char wide[sizeof ok + 9];
  memcpy(wide, ok, sizeof ok - 1);
  memset(wide + sizeof ok - 1, 0xff, 9);
  wide[sizeof wide - 1] = 0x01; /* UINT64_MAX: fine */
  CHECK_EQ(pp_hist_decode(&h, wide, sizeof wide), (long)sizeof wide);
  CHECK_EQ_U(h.lost, UINT64_MAX);
  wide[sizeof wide - 1] = 0x03; /* 2^65 - 1: too wide */
  CHECK_EQ(pp_hist_decode(&h, wide, sizeof wide), -1);
  /* Total count overflow: counters of 2^63 and 2^63 + 1 (which would wrap
   * to a plausible total of 1). */
  unsigned char ovf[64];
  size_t k = 0;
  ovf[k++] = 2;
  for (int c = 0; c < 2; c++) {
    ovf[k++] = (unsigned char)(c ? 1 : 5); /* indexes 5 and 6 */
    ovf[k++] = (unsigned char)(c ? 0x81 : 0x80);
    for (int i = 0; i < 8; i++)
      ovf[k++] = 0x80;
    ovf[k++] = 0x01; /* 2^63 (+ 1) */
  }
  ovf[k++] = 5;
  ovf[k++] = 6;
  memset(ovf + k, 0, 16);
  ovf[k + 6] = 0x16; /* mean 5.5 = 0x4016000000000000 */
  ovf[k + 7] = 0x40;
  k += 16;
  ovf[k++] = 0;
  CHECK_EQ(pp_hist_decode(&h, ovf, k), -1);
  pp_hist_free(&h);
}

PP_TEST(hist_edge_cases) {
  pp_hist h;
  pp_hist_init(&h);
  /* Empty. */
  CHECK_EQ_U(h.count, 0);
  CHECK_EQ_U(pp_hist_percentile(&h, 0), 0);
  CHECK_EQ_U(pp_hist_percentile(&h, 50), 0);
  CHECK_EQ_U(pp_hist_percentile(&h, 100), 0);
  CHECK_EQ_U(pp_hist_count_le(&h, UINT64_MAX), 0);
  CHECK_NEAR(pp_hist_mean(&h), 0, 0);
  CHECK_NEAR(pp_hist_stddev(&h), 0, 0);

  /* Value 0. */
  pp_hist_record(&h, 0);
  CHECK_EQ_U(h.count, 1);
  CHECK_EQ_U(pp_hist_percentile(&h, 50), 0);
  CHECK_EQ_U(pp_hist_percentile(&h, 100), 0);
  CHECK_EQ_U(pp_hist_count_le(&h, 0), 1);
  CHECK_NEAR(pp_hist_mean(&h), 0, 0);

  /* UINT64_MAX. */
  pp_hist_record(&h, UINT64_MAX);
  CHECK_EQ_U(h.max, UINT64_MAX);
  CHECK_EQ_U(pp_hist_percentile(&h, 50), 0);
  CHECK_EQ_U(pp_hist_percentile(&h, 50.1), UINT64_MAX);
  CHECK_EQ_U(pp_hist_percentile(&h, 100), UINT64_MAX);
  CHECK_EQ_U(pp_hist_count_le(&h, UINT64_MAX - 1), 2); /* same bucket */
  CHECK_EQ_U(pp_hist_count_le(&h, UINT64_MAX - (UINT64_C(1) << 53)), 1);
  CHECK_NEAR(pp_hist_mean(&h), 0x1p63, 0x1p63 * 1e-12);
  CHECK_NEAR(pp_hist_stddev(&h), 0x1p63, 0x1p63 * 1e-12);

  /* p outside [0, 100] and NaN. */
  CHECK_EQ_U(pp_hist_percentile(&h, -5), 0);
  CHECK_EQ_U(pp_hist_percentile(&h, 1e9), UINT64_MAX);
  CHECK_EQ_U(pp_hist_percentile(&h, NAN), 0);

  /* Reset keeps the blocks and empties everything. */
  pp_hist_block *kept = h.block[0];
  pp_hist_reset(&h);
  CHECK(h.block[0] == kept);
  CHECK_EQ_U(h.count, 0);
  CHECK_EQ_U(h.min, UINT64_MAX);
  CHECK_EQ_U(pp_hist_percentile(&h, 50), 0);
  CHECK_EQ_U(pp_hist_block_at(h.block[0], 0), 0);
  CHECK_EQ_U(h.block[0]->group[0], 0);

  /* record_n with large n: two equal halves. */
  uint64_t big = UINT64_C(1) << 61;
  pp_hist_record_n(&h, 100, big);
  pp_hist_record_n(&h, 300, big);
  pp_hist_record_n(&h, 7, 0); /* no-op */
  CHECK_EQ_U(h.count, 2 * big);
  CHECK_EQ_U(h.min, 100);
  CHECK_EQ_U(h.max, 300);
  CHECK_NEAR(pp_hist_mean(&h), 200, 1e-9);
  CHECK_NEAR(pp_hist_stddev(&h), 100, 1e-6);
  CHECK_EQ_U(pp_hist_percentile(&h, 50), 100);
  CHECK_EQ_U(pp_hist_percentile(&h, 50.0001), 300);
  CHECK_EQ_U(pp_hist_count_le(&h, 299), big);
  CHECK_EQ_U(pp_hist_count_le(&h, 300), 2 * big);
  CHECK_EQ_U(pp_hist_count_le(&h, 99), 0);
  /* Past 2^62 pp_hist_record takes the slow path and still counts. */
  pp_hist_record(&h, 200);
  CHECK_EQ_U(h.count, 2 * big + 1);
  CHECK_EQ_U(pp_hist_count_le(&h, 200), big + 1);
  /* Overflowing count goes to lost. */
  pp_hist_record_n(&h, 5, UINT64_MAX);
  CHECK_EQ_U(h.count, 2 * big + 1);
  CHECK_EQ_U(h.lost, UINT64_MAX);
  CHECK_EQ_U(h.min, 100);
  pp_hist_reset(&h);
  pp_hist_record_n(&h, UINT64_MAX, UINT64_MAX);
  CHECK_EQ_U(h.count, UINT64_MAX);
  CHECK_EQ_U(pp_hist_percentile(&h, 99), UINT64_MAX);
  CHECK_NEAR(pp_hist_mean(&h), 0x1p64, 0x1p20);
  pp_hist_record(&h, 1); /* no room left */
  CHECK_EQ_U(h.lost, 1);
  CHECK_EQ_U(h.min, UINT64_MAX);
  pp_hist o;
  pp_hist_init(&o);
  pp_hist_record(&o, 1);
  CHECK_EQ(pp_hist_merge(&h, &o), -1);
  CHECK_EQ_U(h.lost, 2);
  CHECK_EQ_U(h.count, UINT64_MAX);

  /* Small exact values: every percentile is exact below 2048. */
  pp_hist_reset(&h);
  for (uint64_t v = 1; v <= 2000; v++)
    pp_hist_record(&h, v);
  CHECK_EQ_U(pp_hist_percentile(&h, 50), 1000);
  CHECK_EQ_U(pp_hist_percentile(&h, 75), 1500);
  CHECK_EQ_U(pp_hist_percentile(&h, 0.05), 1);
  CHECK_EQ_U(pp_hist_percentile(&h, 0.0001), 1);
  CHECK_EQ_U(pp_hist_count_le(&h, 1500), 1500);
  CHECK_NEAR(pp_hist_mean(&h), 1000.5, 1e-12);

  /* Free, then reuse. */
  pp_hist_free(&h);
  CHECK(h.block[0] == NULL);
  CHECK_EQ_U(h.count, 0);
  pp_hist_record(&h, 42);
  CHECK_EQ_U(pp_hist_percentile(&h, 50), 42);
  pp_hist_free(&h);
  pp_hist_free(&o);
}

#ifdef __SIZEOF_INT128__
__extension__ typedef __int128 i128;

/* The moments of values v0 + d[i] against the exact integer reference:
 * n * m2 = n * sum(d^2) - sum(d)^2 whatever v0, computed in 128 bits, and
 * rounded once; the histogram's 256-bit arithmetic must give that double
 * to the bit. */
static void check_exact_moments(const pp_hist *h, uint64_t v0,
                                const int64_t *d, size_t n) {
  i128 s1 = 0, s2 = 0;
  for (size_t i = 0; i < n; i++) {
    s1 += d[i];
    s2 += (i128)d[i] * d[i];
  }
  i128 nm2 = (i128)n * s2 - s1 * s1;
  CHECK(nm2 >= 0);
  double m2 = (double)nm2 / (double)n;
  double got;
  pp_hist_moments(h, NULL, &got);
  CHECK(got == m2);
  CHECK(pp_hist_stddev(h) == (m2 > 0 ? sqrt(m2 / (double)n) : 0.0));
  (void)v0;
}

PP_TEST(hist_moments_exact) {
  /* Large values, small spread: a running floating-point update loses
   * digits here, the integer sums do not. */
  enum { N = 300000 };
  static int64_t d[N];
  uint64_t v0 = UINT64_C(1000000000000000);
  pp_hist h, a, b, r;
  pp_hist_init(&h);
  pp_hist_init(&a);
  pp_hist_init(&b);
  pp_hist_init(&r);
  for (size_t i = 0; i < N; i++) {
    d[i] = (int64_t)(i % 3);
    pp_hist_record(&h, v0 + (uint64_t)d[i]);
    pp_hist_record(i & 1 ? &a : &b, v0 + (uint64_t)d[i]);
  }
  check_exact_moments(&h, v0, d, N);
  CHECK_NEAR(pp_hist_mean(&h), (double)v0 + 1.0, 1.0); /* S1 rounded */
  /* record_n and merge keep the same integers: identical figures */
  pp_hist_record_n(&r, v0, N / 3);
  pp_hist_record_n(&r, v0 + 1, N / 3);
  pp_hist_record_n(&r, v0 + 2, N / 3);
  CHECK_EQ(pp_hist_merge(&a, &b), 0);
  CHECK(pp_hist_mean(&a) == pp_hist_mean(&h));
  CHECK(pp_hist_stddev(&a) == pp_hist_stddev(&h));
  CHECK(pp_hist_mean(&r) == pp_hist_mean(&h));
  CHECK(pp_hist_stddev(&r) == pp_hist_stddev(&h));
  CHECK(memcmp(a.sq, h.sq, sizeof h.sq) == 0);
  CHECK(memcmp(r.sq, h.sq, sizeof h.sq) == 0);

  /* Values around 2^63, spread 2^61: the squares fill all three words
   * of the sum and n * S2 and S1^2 cross into the fourth. */
  int64_t e[7] = {0, INT64_C(1) << 61, -(INT64_C(1) << 61), 12345,
                  -(INT64_C(1) << 60) - 7, (INT64_C(1) << 61) - 1, 1};
  uint64_t w0 = UINT64_C(1) << 63;
  pp_hist_reset(&h);
  for (size_t i = 0; i < 7; i++)
    pp_hist_record(&h, w0 + (uint64_t)e[i]);
  check_exact_moments(&h, w0, e, 7);
  int64_t es = 0;
  for (size_t i = 0; i < 7; i++)
    es += e[i];
  CHECK_NEAR(pp_hist_mean(&h), 0x1p63 + (double)es / 7, 0x1p63 * 1e-15);

  /* A decoded histogram carries doubles; merging it makes the result
   * approximate, with Chan's formula, and a copy of it keeps its figures */
  size_t len = pp_hist_encode(&a, NULL, 0);
  unsigned char *buf = malloc(len);
  CHECK(buf != NULL);
  pp_hist_encode(&a, buf, len);
  pp_hist_reset(&b);
  CHECK_EQ(pp_hist_decode(&b, buf, len), (long)len);
  CHECK_EQ(b.approx, 1);
  CHECK(pp_hist_mean(&b) == pp_hist_mean(&a));
  CHECK(pp_hist_stddev(&b) == pp_hist_stddev(&a));
  pp_hist c;
  pp_hist_init(&c);
  CHECK_EQ(pp_hist_merge(&c, &b), 0);
  CHECK_EQ(c.approx, 1);
  CHECK(pp_hist_stddev(&c) == pp_hist_stddev(&a));
  pp_hist_record(&c, v0 + 1); /* the slow path: Welford on the doubles */
  CHECK_EQ_U(c.count, a.count + 1);
  double m2a;
  pp_hist_moments(&a, NULL, &m2a); /* one more value at the mean */
  CHECK_NEAR(pp_hist_stddev(&c), sqrt(m2a / (double)c.count),
             1e-6 * pp_hist_stddev(&a));
  free(buf);
  pp_hist_free(&c);
  pp_hist_free(&h);
  pp_hist_free(&a);
  pp_hist_free(&b);
  pp_hist_free(&r);
}
#endif

/* Counts gathered in the histogram's own layout elsewhere (a thread's
 * tally, ring/tally.h) and added slot by slot with their moments give the
 * histogram that recording the values gives: every counter, percentile,
 * extreme and moment. */
PP_TEST(hist_add_slot_and_moments_equal_recording) {
  static uint64_t slot_c[PP_HIST_SLOTS][PP_HIST_HALF];
  memset(slot_c, 0, sizeof slot_c);
  pp_hist want, got;
  pp_hist_init(&want);
  pp_hist_init(&got);
  uint64_t lo = 0, hi = 0, sq[3] = {0, 0, 0}, min = UINT64_MAX, max = 0;
  uint64_t x = 88172645463325252ULL;
  for (int i = 0; i < 20000; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    uint64_t v = (x % 5000000) >> (x % 13); /* 0 .. 5 ms, skewed */
    pp_hist_record(&want, v);
    unsigned s = 54u - (unsigned)__builtin_clzll(v | (PP_HIST_HALF - 1u));
    slot_c[s][(v >> (s ? s - 1u : 0u)) & (PP_HIST_HALF - 1u)]++;
    CHECK_EQ_U(pp_hist_slot_value(s, (unsigned)((v >> (s ? s - 1u : 0u)) &
                                                (PP_HIST_HALF - 1u))),
               pp_hist_lowest_equivalent(v));
    uint64_t l = lo + v;
    hi += l < v;
    lo = l;
    __extension__ unsigned __int128 q = (unsigned __int128)v * v;
    __extension__ unsigned __int128 a =
        ((unsigned __int128)sq[1] << 64 | sq[0]) + q;
    sq[2] += a < q;
    sq[0] = (uint64_t)a;
    sq[1] = (uint64_t)(a >> 64);
    min = v < min ? v : min;
    max = v > max ? v : max;
  }
  for (unsigned s = 0; s < PP_HIST_SLOTS; s++)
    CHECK_EQ(pp_hist_add_slot(&got, s, slot_c[s]), 0);
  pp_hist_add_moments(&got, min, max, lo, hi, sq);
  CHECK_EQ_U(got.count, want.count);
  CHECK_EQ_U(got.min, want.min);
  CHECK_EQ_U(got.max, want.max);
  CHECK_EQ_U(got.sum_lo, want.sum_lo);
  CHECK_EQ_U(got.sum_hi, want.sum_hi);
  CHECK(memcmp(got.sq, want.sq, sizeof got.sq) == 0);
  for (int q = 0; q <= 1000; q++)
    CHECK_EQ_U(pp_hist_percentile(&got, q / 10.0),
               pp_hist_percentile(&want, q / 10.0));
  CHECK_EQ(pp_hist_stddev(&got), pp_hist_stddev(&want));
  /* a slot past the last, or counts that overflow, add nothing */
  CHECK_EQ(pp_hist_add_slot(&got, PP_HIST_SLOTS, slot_c[0]), -1);
  slot_c[1][0] = UINT64_MAX;
  CHECK_EQ(pp_hist_add_slot(&got, 1, slot_c[1]), -1);
  CHECK_EQ_U(got.count, want.count);
  pp_hist_free(&want);
  pp_hist_free(&got);
}
