/* SPDX-License-Identifier: MIT */
/*
 * Log-linear (HDR-style) histogram of unsigned 64-bit values with three
 * significant digits: every value is kept in a bucket whose width is at most
 * 1/1024 of its lower bound, so any reported percentile is within 0.1% of a
 * value that was recorded. Counters are allocated lazily, one 8.25 KiB block
 * per power of two touched, so a histogram of latencies spanning three
 * decades costs under 100 KiB. Histograms merge exactly.
 *
 * Thread safety: none; one writer at a time (the aggregator owns its
 * histograms). Recording never allocates more than one block and never
 * fails loudly: when a block cannot be allocated the value is counted in
 * `lost`.
 */
#ifndef PP_HISTOGRAM_H
#define PP_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#define PP_HIST_SUB_BITS 11u                  /* 2048 sub-buckets */
#define PP_HIST_SUB_COUNT (1u << PP_HIST_SUB_BITS)
#define PP_HIST_HALF (PP_HIST_SUB_COUNT / 2u) /* 1024 */
#define PP_HIST_BUCKETS (64u - PP_HIST_SUB_BITS + 1u) /* 54: covers 2^64 */
#define PP_HIST_GROUP 32u                     /* counters per group sum */

/* Internal layout. The counters are stored in 55 "slots" of 1024 counters:
 * slot 0 holds [0, 1024) and slot 1 holds [1024, 2048) (the two halves of
 * bucket 0, width 1); slot s >= 2 holds bucket s - 1, i.e. [1024 << (s - 1),
 * 2048 << (s - 1)) in steps of 2^(s - 1). The flat counter index
 * s * 1024 + sub (0 .. 56319) equals HdrHistogram's counts index for 11
 * sub-bucket bits and is the index used by pp_hist_encode.
 *
 * Invariants: slot_total[s] is the sum of block[s]'s counters;
 * block[s]->group[g] is the sum of block[s]->c[g][0 .. 31]; count is the
 * sum of slot_total[]; block[s] is non-NULL whenever slot_total[s] is
 * non-zero, and block[s]->c[g] whenever group[g] is. */
#define PP_HIST_SLOTS (PP_HIST_BUCKETS + 1u)                  /* 55 */
#define PP_HIST_SLOT_GROUPS (PP_HIST_HALF / PP_HIST_GROUP)    /* 32 */
#define PP_HIST_INDEX_COUNT (PP_HIST_SLOTS * PP_HIST_HALF)    /* 56320 */

typedef struct pp_hist_block {
  uint64_t group[PP_HIST_SLOT_GROUPS]; /* group sums */
  /* each group's PP_HIST_GROUP counters, allocated on its first value
   * (NULL: all zero): a histogram of a few values costs a few hundred
   * bytes, not 8 KiB a slot (issue 26) */
  uint64_t *c[PP_HIST_SLOT_GROUPS];
} pp_hist_block;

/* Counter sub (0 .. PP_HIST_HALF - 1) of block b. */
static inline uint64_t pp_hist_block_at(const pp_hist_block *b,
                                        unsigned sub) {
  const uint64_t *g = b->c[sub / PP_HIST_GROUP];
  return g ? g[sub % PP_HIST_GROUP] : 0;
}

typedef struct pp_hist {
  uint64_t count;          /* values recorded (excluding lost) */
  uint64_t lost;           /* values not recorded for lack of memory */
  uint64_t min, max;       /* exact; min is UINT64_MAX and max 0 when empty */
  uint64_t sum_lo, sum_hi; /* 128-bit sum of the values (exact unless
                              approx) */
  uint64_t sq[3];          /* 192-bit sum of the squares of the values,
                              little-endian words (exact unless approx) */
  int approx;              /* 0: the moments are the exact integer sums
                              above; 1: they are mean and m2 below (a
                              histogram from pp_hist_decode, or one that
                              merged one) */
  double mean, m2;         /* only when approx: the mean and the sum of
                              squared deviations */
  uint64_t slot_total[PP_HIST_SLOTS];
  pp_hist_block *block[PP_HIST_SLOTS]; /* allocated on first touch */
} pp_hist;

/* Initialise an empty histogram (no allocation). */
void pp_hist_init(pp_hist *h);
/* Free the blocks; h is empty afterwards and may be reused. */
void pp_hist_free(pp_hist *h);
/* Empty h keeping its blocks. */
void pp_hist_reset(pp_hist *h);

/* Record one value / n equal values (n == 0 records nothing). Values that
 * would overflow count are counted in lost instead. pp_hist_record is a C99
 * inline function (defined below; every declaration must say inline) with
 * its external definition in histogram.c. */
inline void pp_hist_record(pp_hist *h, uint64_t v);
void pp_hist_record_n(pp_hist *h, uint64_t v, uint64_t n);

/* Counts gathered elsewhere in this layout (ring/tally.h: a thread's
 * histogram of one site): c holds slot s's PP_HIST_HALF counters, added to
 * h's (counts only; the moments come with pp_hist_add_moments). Returns 0,
 * or -1 when a block could not be allocated or the count would overflow
 * (nothing added: the caller counts the loss). */
int pp_hist_add_slot(pp_hist *h, unsigned s, const uint64_t *c);
/* The extremes and exact integer moments (a 128-bit sum, a 192-bit sum of
 * squares) of values whose counts pp_hist_add_slot added; h must not be
 * approximate. */
void pp_hist_add_moments(pp_hist *h, uint64_t min, uint64_t max,
                         uint64_t sum_lo, uint64_t sum_hi,
                         const uint64_t sq[3]);
/* A decoded histogram (approximate moments) made exact again: its moments
 * replaced by the exact integer sums of its values, which its encoding
 * does not carry (a checkpoint saves them beside it). */
void pp_hist_exact_moments(pp_hist *h, uint64_t sum_lo, uint64_t sum_hi,
                           const uint64_t sq[3]);
/* The value counter sub of slot s starts at. */
uint64_t pp_hist_slot_value(unsigned s, unsigned sub);

/* Add every count of src into dst. Returns 0, or -1 when a block could not be
 * allocated (the missing counts go to dst->lost). The merge is all or
 * nothing: on -1 (also when dst's count would overflow) none of src is
 * merged and all of src's count goes to dst->lost. dst may be src. */
int pp_hist_merge(pp_hist *dst, const pp_hist *src);

/* Value at percentile p (0..100): the highest value equivalent to the bucket
 * holding the ceil(p/100 * count)-th smallest value (at least the first),
 * clamped to [min, max]. 0 when empty. */
uint64_t pp_hist_percentile(const pp_hist *h, double p);

/* Number of recorded values <= v (for cumulative buckets), to bucket
 * resolution: values equivalent to v count as <= v. Exact when v is the
 * highest value of its bucket (always for v < 2048), 0 when v < min and
 * count when v >= max. */
uint64_t pp_hist_count_le(const pp_hist *h, uint64_t v);

/* Moments. A histogram that recorded values (pp_hist_record,
 * pp_hist_record_n) or merged histograms that did keeps them exactly:
 * the sum of the values in 128 bits and the sum of their squares in 192
 * bits, plain integer additions per value (no division, no rounding).
 * Mean and the sum of squared deviations are derived when asked (here,
 * by pp_hist_merge into an approximate histogram, and by pp_hist_encode):
 *
 *   mean = double(S1) * (1 / n), clamped to [min, max]
 *   m2   = double(n * S2 - S1^2) / n
 *
 * where n * S2 - S1^2 (= n * m2, never negative) is computed exactly in
 * 256 bits and rounded once to double, so m2 is within one rounding of
 * a division of the exact value (Welford's running update, kept before,
 * gathered a rounding error per value: figures printed to 17 digits
 * changed in their last one to three digits, relative 1e-16 to 5e-15 on
 * the bench trace). The mean is computed as the running update computed
 * it after each value, double(S1) (hi * 2^64 + lo, as before) times the
 * rounded reciprocal of n, so it is the same to the bit as before for a
 * histogram of recorded values (a merged one divided: its mean may move
 * by an ulp). pp_hist_mean returns mean, pp_hist_stddev sqrt(m2 / n) (the
 * population standard deviation).
 *
 * A decoded histogram carries only mean and m2 (binary64, the encoding's
 * fields): it is `approx`, and so is any histogram that merges one or is
 * merged into one; there pp_hist_merge combines the doubles by Chan's
 * formula and pp_hist_record_n updates them by Welford's, as they always
 * did. 0 and 0 when empty. */
double pp_hist_mean(const pp_hist *h);
double pp_hist_stddev(const pp_hist *h); /* population standard deviation */
/* Both at once, for exporters (mean, m2 as above; NULL to skip one). */
void pp_hist_moments(const pp_hist *h, double *mean, double *m2);

/* Bucket geometry, for tests and exporters: the lowest and highest values
 * that share v's bucket. */
uint64_t pp_hist_lowest_equivalent(uint64_t v);
uint64_t pp_hist_highest_equivalent(uint64_t v);

/* Compact serialisation: varint count of non-empty counters followed by
 * (index delta, count) varint pairs, then min, max, mean, m2, lost.
 * pp_hist_encode returns the bytes needed (writing nothing past cap, so call
 * with cap 0 to size a buffer). pp_hist_decode returns bytes consumed or -1
 * on malformed or truncated input (h is then empty); it never reads past
 * len.
 *
 * Details: varints are unsigned LEB128 (at most 10 bytes); the first index
 * delta is the index itself (see the layout comment above), later deltas are
 * >= 1; counts are >= 1; min, max and lost are varints; mean and m2 are the
 * IEEE-754 binary64 bit patterns as 8 little-endian bytes. pp_hist_decode
 * needs an initialised h (pp_hist_init, or one in use): its contents are
 * replaced, its blocks reused. Besides truncation it rejects out-of-range
 * or repeated indexes, zero counts, a total count that overflows, min/max
 * that do not fall in the first/last non-empty bucket, and a non-finite
 * mean or a negative or non-finite m2. */
size_t pp_hist_encode(const pp_hist *h, unsigned char *buf, size_t cap);
long pp_hist_decode(pp_hist *h, const unsigned char *buf, size_t len);

/* Slow path of pp_hist_record (block allocation); not API. */
void pp__hist_record_slow(pp_hist *h, uint64_t v, uint64_t n);
/* v^2 into the sum of squares, for compilers without a 128-bit type; not
 * API. */
void pp__hist_add_square(pp_hist *h, uint64_t v);

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 pp__hist_u128;
#endif

/* The record fast path: clz picks the slot (slot 0 for v < 1024), one shift
 * the counter; the moments are integer additions: v to the 128-bit sum,
 * v * v (one 64 x 64 -> 128 multiply) to the 192-bit sum of squares.
 * Approximate histograms (decoded ones) and counts from 2^62 up take the
 * slow path. */
inline void pp_hist_record(pp_hist *h, uint64_t v) {
  unsigned s = 54u - (unsigned)__builtin_clzll(v | (PP_HIST_HALF - 1u));
  unsigned shift = s ? s - 1u : 0u;
  unsigned sub = (unsigned)(v >> shift) & (PP_HIST_HALF - 1u);
  pp_hist_block *b = h->block[s];
  uint64_t *g;
  if (__builtin_expect(b == NULL || !(g = b->c[sub / PP_HIST_GROUP]) ||
                           h->approx || h->count >= (UINT64_C(1) << 62),
                       0)) {
    pp__hist_record_slow(h, v, 1);
    return;
  }
  g[sub % PP_HIST_GROUP]++;
  b->group[sub / PP_HIST_GROUP]++;
  h->slot_total[s]++;
  h->count++;
  if (v < h->min)
    h->min = v;
  if (v > h->max)
    h->max = v;
  uint64_t lo = h->sum_lo + v;
  h->sum_hi += lo < v;
  h->sum_lo = lo;
#ifdef __SIZEOF_INT128__
  pp__hist_u128 q = (pp__hist_u128)v * v;
  pp__hist_u128 a = ((pp__hist_u128)h->sq[1] << 64 | h->sq[0]) + q;
  h->sq[2] += a < q;
  h->sq[0] = (uint64_t)a;
  h->sq[1] = (uint64_t)(a >> 64);
#else
  pp__hist_add_square(h, v);
#endif
}

#endif /* PP_HISTOGRAM_H */
