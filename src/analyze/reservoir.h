/* SPDX-License-Identifier: MIT */
/*
 * A bounded uniform sample of a stream of values (reservoir sampling,
 * Vitter's algorithm R), for the statistics that need values rather than
 * a histogram (`pipeprof diff`'s rank tests) in memory bounded
 * independently of the stream's length.
 *
 * Invariants: n <= cap; while seen <= cap the sample holds every value
 * offered (n == seen, in the order offered); afterwards it holds cap
 * values, a uniform random subset of the seen values (every subset of
 * that size equally likely), in no particular order. Merging two samples
 * keeps the invariant for the union of their streams. The random choices
 * come from a generator seeded by the caller, so a given input gives the
 * same sample every time.
 *
 * Memory: the values held, grown by doubling up to cap (8 bytes each).
 * Not thread-safe.
 */
#ifndef PP_ANALYZE_RESERVOIR_H
#define PP_ANALYZE_RESERVOIR_H

#include <stddef.h>
#include <stdint.h>

typedef struct pp_reservoir {
  double *v;     /* the sample (malloc'd; NULL while empty) */
  size_t n, cap; /* values held; most values held */
  size_t alloc;  /* room in v */
  uint64_t seen; /* values offered (also through merges) */
  uint64_t rng;  /* generator state */
} pp_reservoir;

/* An empty reservoir holding at most cap (>= 1) values; no allocation. */
void pp_reservoir_init(pp_reservoir *r, size_t cap, uint64_t seed);
void pp_reservoir_free(pp_reservoir *r);
/* Offer x. 0, or -1 when out of memory (x is then not counted). */
int pp_reservoir_add(pp_reservoir *r, double x);
/* Make dst a sample of dst's stream followed by src's (src unchanged; both
 * with the same cap):
 * min(cap, dst->seen + src->seen) values, as many from each side as a
 * uniform sample of the union would draw (a hypergeometric draw), each
 * side's drawn uniformly from its sample. 0, or -1 when out of memory
 * (dst unchanged). */
int pp_reservoir_merge(pp_reservoir *dst, const pp_reservoir *src);
/* Does the sample hold every value offered? */
static inline int pp_reservoir_complete(const pp_reservoir *r) {
  return r->seen == r->n;
}

#endif /* PP_ANALYZE_RESERVOIR_H */
