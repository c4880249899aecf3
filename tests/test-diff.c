/* SPDX-License-Identifier: MIT */
/*
 * Tests of the two-sample statistics (src/analyze/stat_tests.c) against
 * hand-computed and textbook values and brute-force enumeration, of the
 * regression decision on synthetic lognormal latencies (shifts, spread,
 * false-positive rate, small samples), and of `pipeprof diff` end to end:
 * on trace files written by the test with exact timestamps (verdicts, exit
 * codes, one run against several per side, run figures, cumulative
 * counters, the table, Markdown and JSON outputs, summary-JSON inputs) and
 * on traces recorded by the library (ranges, sampled counters), and its
 * usage errors; and the bounded samples diff keeps (analyze/reservoir.h:
 * whole below the cap, uniform above it, merged uniformly) with a diff of
 * traces holding more instances than it keeps. No verdict asserted here
 * depends on how busy the machine is.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef PP_HAVE_JANSSON
#include <jansson.h>
#endif

#include "analyze/reservoir.h"
#include "analyze/stat_tests.h"
#include "format/pptrace.h"
#include "pipeprof.h"
#include "runner.h"
#include "trace_builder.h"

/* ---- helpers ------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rng_next(void) { /* splitmix64 */
  uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static double rng_unit(void) { /* (0, 1) */
  return ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0;
}

static double rng_normal(void) { /* Box-Muller */
  double u = rng_unit(), v = rng_unit();
  return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* n lognormal latencies with the given median (ns) and log-sd, sorted. */
static double *lognormal(size_t n, double median, double sigma) {
  double *v = malloc(n * sizeof *v);
  CHECK(v != NULL);
  for (size_t i = 0; i < n; i++)
    v[i] = median * exp(sigma * rng_normal());
  pp_stat_sort(v, n);
  return v;
}

static pp_compare compare(const double *b, size_t nb, const double *c,
                          size_t nn, double thr, double alpha) {
  pp_compare r;
  CHECK_EQ(pp_stat_compare(b, nb, c, nn, NULL, 0, NULL, 0, thr, alpha, &r), 0);
  return r;
}

/* ---- quantiles ----------------------------------------------------------- */

PP_TEST(stat_quantiles) {
  double a[] = {1, 2, 3, 4};
  CHECK_NEAR(pp_stat_median(a, 4), 2.5, 0);
  CHECK_NEAR(pp_stat_median(a, 3), 2, 0);
  CHECK(isnan(pp_stat_median(a, 0)));
  double v[100];
  for (int i = 0; i < 100; i++)
    v[i] = i + 1;
  CHECK_NEAR(pp_stat_quantile(v, 100, 0.99), 99.01, 1e-9);
  CHECK_NEAR(pp_stat_quantile(v, 100, 0.5), 50.5, 1e-9);
  CHECK_NEAR(pp_stat_quantile(v, 100, 0), 1, 0);
  CHECK_NEAR(pp_stat_quantile(v, 100, 1), 100, 0);
  CHECK_NEAR(pp_stat_quantile(v, 1, 0.99), 1, 0);
  double u[] = {3, -1, 2, 2, 10};
  pp_stat_sort(u, 5);
  CHECK_NEAR(u[0], -1, 0);
  CHECK_NEAR(u[4], 10, 0);
  CHECK_NEAR(pp_stat_median(u, 5), 2, 0);
  CHECK_NEAR(pp_stat_norm_cdf(1.959963984540054), 0.975, 1e-12);
  CHECK_NEAR(pp_stat_norm_quantile(0.975), 1.959963984540054, 1e-9);
  CHECK_NEAR(pp_stat_norm_quantile(0.5), 0, 1e-12);
}

/* ---- Mann-Whitney ---------------------------------------------------------
 */

PP_TEST(stat_mann_whitney_exact_small) {
  /* Completely separated samples: U = 0, two-sided exact p = 2 / C(2n, n):
   * 2/20, 2/70, 2/252. */
  static const double want[] = {2.0 / 20, 2.0 / 70, 2.0 / 252};
  for (size_t n = 3; n <= 5; n++) {
    double x[5], y[5];
    for (size_t i = 0; i < n; i++) {
      x[i] = (double)i + 1;
      y[i] = (double)(i + 1 + n);
    }
    pp_mw_result r;
    CHECK_EQ(pp_stat_mann_whitney(x, n, y, n, &r), 0);
    CHECK(r.exact);
    CHECK(!r.ties);
    CHECK_NEAR(r.u, 0, 0);
    CHECK_NEAR(r.p, want[n - 3], 1e-12);
    /* The other direction: U = n^2, same p. */
    CHECK_EQ(pp_stat_mann_whitney(y, n, x, n, &r), 0);
    CHECK_NEAR(r.u, (double)(n * n), 0);
    CHECK_NEAR(r.p, want[n - 3], 1e-12);
  }
  /* The null distribution of U for n = m = 5 counts partitions of u into at
   * most 5 parts of at most 5: 1, 1, 2, 3, 5, ... of C(10, 5) = 252. */
  CHECK_NEAR(pp_stat_mw_exact_cdf(5, 5, 0), 1.0 / 252, 1e-12);
  CHECK_NEAR(pp_stat_mw_exact_cdf(5, 5, 2), 4.0 / 252, 1e-12);
  CHECK_NEAR(pp_stat_mw_exact_cdf(5, 5, 3), 7.0 / 252, 1e-12);
  CHECK_NEAR(pp_stat_mw_exact_cdf(5, 5, 4), 12.0 / 252, 1e-12);
  CHECK_NEAR(pp_stat_mw_exact_cdf(5, 5, 25), 1, 1e-12);
  /* Symmetric about n m / 2: P(U <= 11) = P(U >= 13) for n m = 24. */
  CHECK_NEAR(pp_stat_mw_exact_cdf(4, 6, 11) + pp_stat_mw_exact_cdf(4, 6, 12), 1,
             1e-12);
  /* A textbook case: x = {1.1, 3.4, 5.0}, y = {2.2, 4.8, 6.1, 7.7}: U = 3
   * (3.4 > 2.2; 5.0 > 2.2, 4.8); P(U <= 3) = (1+1+2+3)/C(7,3) = 7/35. */
  double x[] = {1.1, 3.4, 5.0}, y[] = {2.2, 4.8, 6.1, 7.7};
  pp_mw_result r;
  CHECK_EQ(pp_stat_mann_whitney(x, 3, y, 4, &r), 0);
  CHECK_NEAR(r.u, 3, 0);
  CHECK(r.exact);
  CHECK_NEAR(r.p, 0.4, 1e-12);
  /* Identical samples: p = 1. */
  CHECK_EQ(pp_stat_mann_whitney(x, 3, x, 3, &r), 0);
  CHECK_NEAR(r.p, 1, 1e-12);
  CHECK_EQ(pp_stat_mann_whitney(x, 0, y, 4, &r), -1);
}

/* Exact p with ties against enumeration of every split of the pooled
 * sample (midranks, twice as integers). */
PP_TEST(stat_mann_whitney_exact_ties_bruteforce) {
  static const double xs[][5] = {
      {1, 2, 2, 3, 5}, {1, 1, 1, 2, 9}, {4, 4, 4, 4, 4}, {0, 1, 2, 3, 3}};
  static const double ys[][6] = {{2, 3, 3, 4, 6, 7},
                                 {1, 2, 2, 2, 3, 3},
                                 {1, 4, 4, 5, 6, 7},
                                 {3, 3, 3, 4, 5, 6}};
  for (size_t c = 0; c < 4; c++) {
    size_t n = 5, m = 6, nn = n + m;
    double pool[11];
    memcpy(pool, xs[c], n * sizeof *pool);
    memcpy(pool + n, ys[c], m * sizeof *pool);
    int w[11]; /* twice the midrank of each pooled value */
    for (size_t i = 0; i < nn; i++) {
      int less = 0, eq = 0;
      for (size_t j = 0; j < nn; j++) {
        less += pool[j] < pool[i];
        eq += pool[j] == pool[i];
      }
      w[i] = 2 * less + eq + 1;
    }
    int obs = 0;
    for (size_t i = 0; i < n; i++)
      obs += w[i];
    double lo = 0, hi = 0, all = 0;
    for (unsigned mask = 0; mask < (1u << nn); mask++) {
      if (__builtin_popcount(mask) != (int)n)
        continue;
      int s = 0;
      for (size_t i = 0; i < nn; i++)
        if (mask >> i & 1u)
          s += w[i];
      all++;
      lo += s <= obs;
      hi += s >= obs;
    }
    double want = 2 * (lo < hi ? lo : hi) / all;
    if (want > 1)
      want = 1;
    pp_mw_result r;
    CHECK_EQ(pp_stat_mann_whitney(xs[c], n, ys[c], m, &r), 0);
    CHECK(r.exact);
    CHECK(r.ties);
    CHECK_NEAR(r.p, want, 1e-12);
  }
}

PP_TEST(stat_mann_whitney_normal) {
  /* x = 1..20, y = 11..30: U = (0+1+...+9) + 10 ties / 2 = 50, mean 200,
   * variance 20*20/12 (41 - 10 * 6 / (40 * 39)); z = (50 - 200 + 0.5) / sd
   * = -4.046. */
  double x[20], y[20];
  for (int i = 0; i < 20; i++) {
    x[i] = i + 1;
    y[i] = i + 11;
  }
  pp_mw_result r;
  CHECK_EQ(pp_stat_mann_whitney(x, 20, y, 20, &r), 0);
  CHECK(!r.exact);
  CHECK(r.ties);
  CHECK_NEAR(r.u, 50, 0);
  double var = 400.0 / 12 * (41 - 60.0 / (40.0 * 39));
  CHECK_NEAR(r.z, -149.5 / sqrt(var), 1e-12);
  CHECK_NEAR(r.z, -4.046, 1e-3);
  CHECK_NEAR(r.p, erfc(149.5 / sqrt(var) / sqrt(2.0)), 1e-15);
  CHECK_NEAR(r.p, 5.21e-5, 0.02e-5);
  /* No ties: x = 1..20, y = 20.5..39.5 shifted by half. */
  for (int i = 0; i < 20; i++)
    y[i] = i + 10.5;
  CHECK_EQ(pp_stat_mann_whitney(x, 20, y, 20, &r), 0);
  CHECK(!r.ties);
  /* U = pairs x > y: x = 11..20 beat y below them: 1+2+...+10 = 55. */
  CHECK_NEAR(r.u, 55, 0);
  CHECK_NEAR(r.z, (55 - 200 + 0.5) / sqrt(400.0 * 41 / 12), 1e-12);
  /* All values equal: no evidence at all. */
  double e[10] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
  CHECK_EQ(pp_stat_mann_whitney(e, 10, e, 10, &r), 0);
  CHECK_NEAR(r.p, 1, 0);
}

/* ---- Kolmogorov-Smirnov -------------------------------------------------- */

PP_TEST(stat_kolmogorov_smirnov) {
  double a[] = {1, 2, 3}, b[] = {4, 5, 6};
  CHECK_NEAR(pp_stat_ks_d(a, 3, b, 3), 1, 0);
  /* Exact: only 2 of the C(6,3) = 20 paths reach D = 1. */
  CHECK_NEAR(pp_stat_ks_p(1, 3, 3), 0.1, 1e-12);
  CHECK_NEAR(pp_stat_ks_p_exact(1, 3, 3), 0.1, 1e-12);
  /* n = m = 4, D = 1: 2 / C(8, 4) = 2/70. */
  CHECK_NEAR(pp_stat_ks_p_exact(1, 4, 4), 2.0 / 70, 1e-12);
  /* n = m = 2: every path leaves the diagonal, so D >= 0.5 always. */
  CHECK_NEAR(pp_stat_ks_p_exact(0.5, 2, 2), 1, 1e-12);
  /* n = m = 3, D >= 2/3: the paths with |i - j| < 2 stay within one step
   * of the diagonal: 2^3 = 8 of 20, so p = 12/20. */
  CHECK_NEAR(pp_stat_ks_p_exact(2.0 / 3, 3, 3), 0.6, 1e-12);
  double c[] = {1, 2, 3, 4}, d[] = {3, 4, 5, 6};
  CHECK_NEAR(pp_stat_ks_d(c, 4, d, 4), 0.5, 0); /* ties at 3 and 4 */
  double e[] = {1, 2, 3, 4, 5}, f[] = {2.5};
  CHECK_NEAR(pp_stat_ks_d(e, 5, f, 1), 0.6, 1e-12);
  CHECK_NEAR(pp_stat_ks_d(e, 5, e, 5), 0, 0);
  /* Kolmogorov's distribution: Q(1.3581) = 0.05, Q(1.2238) = 0.10,
   * Q(1.6276) = 0.01, P(K <= 0.5) = 0.036055. */
  CHECK_NEAR(pp_stat_kolmogorov_q(1.3581), 0.05, 5e-5);
  CHECK_NEAR(pp_stat_kolmogorov_q(1.2238), 0.10, 5e-5);
  CHECK_NEAR(pp_stat_kolmogorov_q(1.6276), 0.01, 5e-5);
  CHECK_NEAR(pp_stat_kolmogorov_q(0.5), 1 - 0.036055, 2e-6);
  CHECK_NEAR(pp_stat_kolmogorov_q(0), 1, 0);
  /* Both series agree where they switch. */
  CHECK_NEAR(pp_stat_kolmogorov_q(1.17999), pp_stat_kolmogorov_q(1.18001),
             1e-4);
  /* Asymptotic with Stephens' correction: n = m = 100, D = 0.2:
   * lambda = (sqrt 50 + 0.12 + 0.11 / sqrt 50) 0.2 = 1.4413, Q = 0.0314.
   * The exact p-value is close. */
  CHECK_NEAR(pp_stat_ks_p_asymptotic(0.2, 100, 100), 0.0314, 5e-4);
  CHECK_NEAR(pp_stat_ks_p(0.2, 100, 100), 0.0314, 0.01);
  CHECK_NEAR(pp_stat_ks_p(0, 100, 100), 1, 0);
}

PP_TEST(stat_tail_fisher) {
  /* x = 1..10, y = 11..20: the pooled 0.9-quantile is 18.1, above it 19
   * and 20, both from y: P = C(10,2) / C(20,2) = 45/190, two-sided 90/190. */
  double x[10], y[10];
  for (int i = 0; i < 10; i++) {
    x[i] = i + 1;
    y[i] = i + 11;
  }
  size_t kx, ky;
  CHECK_NEAR(pp_stat_tail_p(x, 10, y, 10, 0.9, &kx, &ky), 90.0 / 190, 1e-12);
  CHECK_EQ(kx, 0);
  CHECK_EQ(ky, 2);
  /* Symmetric, and no evidence when the tails are shared. */
  CHECK_NEAR(pp_stat_tail_p(y, 10, x, 10, 0.9, &kx, &ky), 90.0 / 190, 1e-12);
  CHECK_NEAR(pp_stat_tail_p(x, 10, x, 10, 0.9, NULL, NULL), 1, 1e-12);
  /* 20 of 1000 vs 0 of 1000 above the pooled p99: p = 2 C(1000,20) /
   * C(2000,20) ~ 2 / 2^20 (about 1.7e-6). */
  double *a = malloc(1000 * sizeof *a), *b = malloc(1000 * sizeof *b);
  CHECK(a && b);
  for (int i = 0; i < 1000; i++) {
    a[i] = i;
    b[i] = i < 980 ? i + 0.5 : 5000 + i;
  }
  double p = pp_stat_tail_p(a, 1000, b, 1000, 0.99, &kx, &ky);
  CHECK_EQ(kx, 0);
  CHECK_EQ(ky, 20);
  CHECK(p > 1e-6 && p < 3e-6);
  free(a);
  free(b);
}

/* ---- Hodges-Lehmann --------------------------------------------------------
 */

PP_TEST(stat_hodges_lehmann) {
  /* x = 1..3, y = 4..6: differences 1,2,2,3,3,3,4,4,5, median 3. With n =
   * m = 3, P(U <= 0) = 0.05: no 95% interval; the 90% one is [1, 5]. */
  double x[] = {1, 2, 3}, y[] = {4, 5, 6};
  pp_hl_result r;
  CHECK_EQ(pp_stat_hodges_lehmann(x, 3, y, 3, 0.05, &r), 0);
  CHECK_NEAR(r.shift, 3, 0);
  CHECK(isinf(r.lo) && r.lo < 0);
  CHECK(isinf(r.hi) && r.hi > 0);
  CHECK_EQ(pp_stat_hodges_lehmann(x, 3, y, 3, 0.10, &r), 0);
  CHECK_NEAR(r.lo, 1, 0);
  CHECK_NEAR(r.hi, 5, 0);
  CHECK_EQ(r.rank_lo, 1);
  CHECK_NEAR(r.confidence, 0.9, 1e-12);
  /* x = 1..5, y = 11..15: differences 10 + k, k = -4..4 with 5 - |k|
   * copies; median 10. P(U <= 2) = 4/252 <= 0.025 < P(U <= 3): C = 3, the
   * interval is [D(3), D(23)] = [7, 13], coverage 1 - 8/252. */
  double a[] = {1, 2, 3, 4, 5}, b[] = {11, 12, 13, 14, 15};
  CHECK_EQ(pp_stat_hodges_lehmann(a, 5, b, 5, 0.05, &r), 0);
  CHECK_NEAR(r.shift, 10, 0);
  CHECK_EQ(r.rank_lo, 3);
  CHECK_NEAR(r.lo, 7, 0);
  CHECK_NEAR(r.hi, 13, 0);
  CHECK_NEAR(r.confidence, 1 - 8.0 / 252, 1e-12);
  /* Even n m: the mean of the two middle differences. */
  double c[] = {0, 10}, d[] = {1, 2};
  CHECK_EQ(pp_stat_hodges_lehmann(c, 2, d, 2, 0.05, &r), 0);
  CHECK_NEAR(r.shift, (-8.0 + 1.0) / 2, 0); /* -9, -8, 1, 2 */
  /* Large samples: normal approximation, the interval covers the shift. */
  rng_state = 7;
  double *u = lognormal(300, 1000, 0.2), *v = lognormal(300, 1000, 0.2);
  for (size_t i = 0; i < 300; i++)
    v[i] += 50;
  CHECK_EQ(pp_stat_hodges_lehmann(u, 300, v, 300, 0.05, &r), 0);
  CHECK(r.lo < 50 && r.hi > 50);
  CHECK(r.lo < r.shift && r.shift < r.hi);
  CHECK_NEAR(r.confidence, 0.95, 1e-12);
  /* Half-width about z sqrt(2/n) sigma*median ~ 1.96 * 0.0816 * 200. */
  CHECK(r.hi - r.lo < 80);
  free(u);
  free(v);
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Every order statistic of the pairwise differences against a sorted list
 * of all of them, with negatives, ties and fractions. */
PP_TEST(stat_diff_kth_bruteforce) {
  rng_state = 99;
  enum { N = 37, M = 23 };
  double x[N], y[M], all[N * M];
  for (int i = 0; i < N; i++)
    x[i] = (double)((int)(rng_next() % 41) - 20) / 4;
  for (int j = 0; j < M; j++)
    y[j] = (double)((int)(rng_next() % 1000) - 300) / 7;
  pp_stat_sort(x, N);
  pp_stat_sort(y, M);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      all[i * M + j] = y[j] - x[i];
  qsort(all, N * M, sizeof *all, cmp_dbl);
  for (size_t k = 1; k <= N * M; k++)
    if (pp_stat_diff_kth(x, N, y, M, k) != all[k - 1])
      PP_FAIL("k = %zu: %.17g vs %.17g", k, pp_stat_diff_kth(x, N, y, M, k),
              all[k - 1]);
}

/* ---- the decision on synthetic latencies ----------------------------------
 */

PP_TEST(diff_verdict_shifts) {
  rng_state = 1234;
  double *base = lognormal(200, 50000, 0.25);
  double *up = lognormal(200, 55000, 0.25);   /* +10% */
  double *down = lognormal(200, 45000, 0.25); /* -10% */
  pp_compare c = compare(base, 200, up, 200, 0.05, 0.05);
  printf("# +10%%: median %+.1f%%, shift %+.1f%% [%+.1f%%, %+.1f%%], p %.2g\n",
         c.rel_med * 100, c.rel_shift * 100, c.rel_lo * 100, c.rel_hi * 100,
         c.p);
  CHECK_EQ(c.verdict, PP_VERDICT_WORSE);
  CHECK(!c.by_p99);
  CHECK(c.rel_lo > 0);
  CHECK_NEAR(c.rel_shift, 0.10, 0.05);
  c = compare(base, 200, down, 200, 0.05, 0.05);
  CHECK_EQ(c.verdict, PP_VERDICT_BETTER);
  CHECK(c.rel_hi < 0);
  /* The same shift below a 20% threshold is no change. */
  c = compare(base, 200, up, 200, 0.20, 0.05);
  CHECK_EQ(c.verdict, PP_VERDICT_NO_CHANGE);
  free(base);
  free(up);
  free(down);
}

PP_TEST(diff_false_positive_rate) {
  enum { SEEDS = 200, N = 200 };
  int flagged = 0, sig = 0, mw_sig = 0, ks_sig = 0, flagged_tight = 0;
  for (int s = 0; s < SEEDS; s++) {
    rng_state = 1000 + (uint64_t)s;
    double *a = lognormal(N, 50000, 0.25), *b = lognormal(N, 50000, 0.25);
    pp_compare c = compare(a, N, b, N, 0.05, 0.05);
    flagged += c.verdict == PP_VERDICT_WORSE || c.verdict == PP_VERDICT_BETTER;
    CHECK(c.verdict != PP_VERDICT_NEED_MORE);
    sig += c.p <= 0.05;
    mw_sig += c.mw.p <= 0.05;
    ks_sig += c.p_ks <= 0.05;
    /* No practical threshold at all: only the tests decide. */
    c = compare(a, N, b, N, 0, 0.05);
    flagged_tight +=
        c.verdict == PP_VERDICT_WORSE || c.verdict == PP_VERDICT_BETTER;
    free(a);
    free(b);
  }
  printf("# no shift, %d seeds, n = %d, alpha 0.05: verdict worse/better "
         "%.3f (threshold 5%%), %.3f (threshold 0); p = min(MW, KS) <= alpha "
         "%.3f; MW %.3f; KS %.3f\n",
         SEEDS, N, flagged / (double)SEEDS, flagged_tight / (double)SEEDS,
         sig / (double)SEEDS, mw_sig / (double)SEEDS, ks_sig / (double)SEEDS);
  CHECK_LE(flagged, SEEDS * 8 / 100);
  CHECK_LE(flagged_tight, SEEDS * 8 / 100);
  CHECK_LE(mw_sig, SEEDS * 8 / 100);
  CHECK_LE(ks_sig, SEEDS * 8 / 100);
}

PP_TEST(diff_spread_only) {
  /* Same median, four times the log-spread: the rank test sees nothing,
   * KS does, and the p99 doubles. */
  rng_state = 77;
  double *a = lognormal(300, 50000, 0.1), *b = lognormal(300, 50000, 0.4);
  pp_compare c = compare(a, 300, b, 300, 0.05, 0.05);
  printf("# spread: median %+.1f%%, p99 %+.1f%%, MW p %.3g, KS p %.3g\n",
         c.rel_med * 100, c.rel_p99 * 100, c.mw.p, c.p_ks);
  CHECK(c.mw.p > 0.05);
  CHECK(c.p_ks < 1e-6);
  CHECK(fabs(c.rel_med) < 0.05);
  CHECK(c.rel_p99 > 0.5);
  CHECK_EQ(c.verdict, PP_VERDICT_WORSE);
  CHECK(c.by_p99);
  /* Narrower: better, by the p99. */
  c = compare(b, 300, a, 300, 0.05, 0.05);
  CHECK_EQ(c.verdict, PP_VERDICT_BETTER);
  CHECK(c.by_p99);
  free(a);
  free(b);
}

PP_TEST(diff_small_samples) {
  rng_state = 5;
  double *a = lognormal(5, 50000, 0.25), *b = lognormal(5, 50000, 0.25);
  pp_compare c = compare(a, 5, b, 5, 0.05, 0.05);
  CHECK_EQ(c.verdict, PP_VERDICT_NEED_MORE);
  CHECK(c.mw.exact);
  CHECK_GT(c.need, 5);
  CHECK_LE(c.need, PP_STAT_ENOUGH);
  /* Three against three, even fully separated, cannot reach p <= 0.05
   * (the smallest exact p is 0.1). */
  double x[] = {100, 101, 102}, y[] = {150, 151, 152};
  c = compare(x, 3, y, 3, 0.05, 0.05);
  CHECK_NEAR(c.p, 0.1, 1e-12);
  CHECK_EQ(c.verdict, PP_VERDICT_NEED_MORE);
  CHECK_GE(c.need, 4);
  /* Four against four can: p = 2/70. */
  double x4[] = {100, 101, 102, 103}, y4[] = {150, 151, 152, 153};
  c = compare(x4, 4, y4, 4, 0.05, 0.05);
  CHECK_EQ(c.verdict, PP_VERDICT_WORSE);
  /* Tight, identical small samples: the interval lies within +-5%. */
  double t1[] = {1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007};
  c = compare(t1, 8, t1, 8, 0.05, 0.05);
  CHECK_EQ(c.verdict, PP_VERDICT_NO_CHANGE);
  free(a);
  free(b);
}

/* The fewest runs per side with which the exact test can decide. */
PP_TEST(stat_mw_min_n) {
  CHECK_EQ(pp_stat_mw_min_n(0.05), 4);  /* 2/70 <= 0.05 < 2/20 */
  CHECK_EQ(pp_stat_mw_min_n(0.01), 5);  /* 2/252 */
  CHECK_EQ(pp_stat_mw_min_n(0.1), 3);   /* 2/20 */
  CHECK_EQ(pp_stat_mw_min_n(0.5), 2);   /* 2/6 */
  CHECK_EQ(pp_stat_mw_min_n(0.001), 7); /* 2/3432; 2/924 is above */
  /* and it agrees with the test: n separated values per side */
  for (size_t n = 2; n <= 7; n++) {
    double x[7], y[7];
    for (size_t i = 0; i < n; i++) {
      x[i] = (double)i;
      y[i] = (double)(i + n);
    }
    pp_mw_result r;
    CHECK_EQ(pp_stat_mann_whitney(x, n, y, n, &r), 0);
    CHECK_EQ(r.p <= 0.05, n >= pp_stat_mw_min_n(0.05));
    CHECK_EQ(r.p <= 0.01, n >= pp_stat_mw_min_n(0.01));
  }
}

/* Why runs, not pooled instances: 5 runs per side whose medians spread by
 * +-10% from run to run (the machine), each with 200 instances spread by
 * +-2%, and no change of the code. Pooled, the instances make any chance
 * difference between the sides' runs significant; the runs' medians do
 * not. Over 40 seeds the pooled test calls a change (worse or better, min
 * effect 1%) far more often than the run-level one. */
PP_TEST(diff_pooled_vs_run_level) {
  enum { SEEDS = 40, RUNS = 5, N = 200 };
  int pooled_flags = 0, run_flags = 0;
  for (int s = 0; s < SEEDS; s++) {
    rng_state = 5000 + (uint64_t)s;
    double pb[RUNS * N], pn[RUNS * N], mb[RUNS], mn[RUNS];
    for (int side = 0; side < 2; side++)
      for (int k = 0; k < RUNS; k++) {
        double run_median = 1e6 * exp(0.10 * rng_normal());
        double *v = lognormal(N, run_median, 0.02);
        memcpy((side ? pn : pb) + k * N, v, N * sizeof *v);
        (side ? mn : mb)[k] = pp_stat_median(v, N);
        free(v);
      }
    pp_stat_sort(pb, RUNS * N);
    pp_stat_sort(pn, RUNS * N);
    pp_stat_sort(mb, RUNS);
    pp_stat_sort(mn, RUNS);
    pp_compare c = compare(pb, RUNS * N, pn, RUNS * N, 0.01, 0.05);
    pooled_flags +=
        c.verdict == PP_VERDICT_WORSE || c.verdict == PP_VERDICT_BETTER;
    c = compare(mb, RUNS, mn, RUNS, 0.01, 0.05);
    run_flags +=
        c.verdict == PP_VERDICT_WORSE || c.verdict == PP_VERDICT_BETTER;
  }
  printf("# no code change, between-run sd 10%%: pooled instances flag "
         "%d/%d, run medians %d/%d\n",
         pooled_flags, SEEDS, run_flags, SEEDS);
  CHECK_GE(pooled_flags, SEEDS / 2);
  CHECK_LE(run_flags, SEEDS / 5);
}

/* ---- the command ------------------------------------------------------------
 */

static char *tpath(const char *name) {
  static char buf[16][512];
  static int k;
  char *p = buf[k++ % 16];
  snprintf(p, sizeof buf[0], "%s/%s", pp_test_tmpdir(), name);
  return p;
}

/* The table row of metric `name` in out, or NULL. */
static const char *row_of(const char *out, const char *name) {
  size_t len = strlen(name);
  for (const char *l = out; l && *l;
       l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    if (strncmp(l, name, len) == 0 && l[len] == ' ')
      return l;
  return NULL;
}

static int line_contains(const char *line, const char *needle) {
  if (!line)
    return 0;
  const char *end = strchr(line, '\n');
  size_t n = end ? (size_t)(end - line) : strlen(line);
  char buf[1024];
  if (n >= sizeof buf)
    n = sizeof buf - 1;
  memcpy(buf, line, n);
  buf[n] = 0;
  return strstr(buf, needle) != NULL;
}

/* "work" (300 instances around work_us, +-2%) and "steady" (20 us). */
static void make_trace(const char *path, double work_us, unsigned seed) {
  tw_spec sp = {.zones = {{"work", work_us * 1000, 0.02, 300},
                          {"steady", 20000, 0.02, 300}},
                .seed = seed};
  tw_write(path, &sp);
}

PP_TEST_T(diff_cli_traces, 120) {
  char *a = tpath("a.pptrace"), *b = tpath("b.pptrace"),
       *a2 = tpath("a2.pptrace");
  make_trace(a, 50, 1);
  make_trace(b, 80, 2);
  make_trace(a2, 50, 3);

  pp_cli_result r = pp_test_cli("diff '%s' '%s'", a, b);
  printf("%s", r.out);
  CHECK_EQ(r.rc, 1);
  CHECK_STR(r.err, "");
  const char *w = row_of(r.out, "work");
  CHECK(w != NULL);
  CHECK(line_contains(w, "worse"));
  CHECK(line_contains(w, "300/300"));
  const char *s = row_of(r.out, "steady");
  CHECK(s != NULL);
  CHECK(!line_contains(s, "worse"));
  CHECK_CONTAINS(r.out, "min effect 5%");
  /* one run per side: the within-run caveat and the run figures' rule */
  CHECK_CONTAINS(r.out, "ignores run-to-run variation");
  CHECK_CONTAINS(r.out, "one run per side: no significance test possible; "
                        "threshold 5%");
  /* the wall time (the traces' span) is a row, judged without a test;
   * with one run per side it does not gate (it moves with the load) */
  CHECK(line_contains(row_of(r.out, "wall time"), "higher (no test)"));
  CHECK(line_contains(row_of(r.out, "wall time"), "1/1"));
  /* no CPU time or RSS in these files: said, not made up */
  CHECK_CONTAINS(r.out, "CPU time: unavailable: ");
  CHECK_CONTAINS(r.out, "max RSS: unavailable: ");
  pp_cli_result_free(&r);

  /* The other way round it is an improvement: exit 0. */
  r = pp_test_cli("diff --threshold 0.05 '%s' -- '%s'", b, a);
  CHECK_EQ(r.rc, 0);
  CHECK(line_contains(row_of(r.out, "work"), "better"));
  pp_cli_result_free(&r);

  /* Two runs of the same workload: no regression. */
  r = pp_test_cli("diff '%s' '%s'", a, a2);
  printf("%s", r.out);
  CHECK_EQ(r.rc, 0);
  CHECK(!strstr(r.out, "worse"));
  CHECK(line_contains(row_of(r.out, "work"), "no change"));
  pp_cli_result_free(&r);

  /* One run against two: the pooled instances, and --metric. */
  r = pp_test_cli("diff --metric work '%s' '%s' -- '%s'", a, a2, b);
  CHECK_EQ(r.rc, 1);
  CHECK(line_contains(row_of(r.out, "work"), "600/300"));
  CHECK(row_of(r.out, "steady") == NULL);
  CHECK(row_of(r.out, "wall time") == NULL);
  CHECK_CONTAINS(r.out, "base (2 runs)");
  CHECK_CONTAINS(r.out, "one run on the new side");
  pp_cli_result_free(&r);
  r = pp_test_cli("diff --metric steady '%s' '%s'", a, b);
  CHECK_EQ(r.rc, 0);
  pp_cli_result_free(&r);

  /* -o writes the file, nothing on stdout. */
  char *o = tpath("diff.txt");
  r = pp_test_cli("diff -o '%s' '%s' '%s'", o, a, b);
  CHECK_EQ(r.rc, 1);
  CHECK_STR(r.out, "");
  char *txt = pp_test_slurp(o, NULL);
  CHECK(txt != NULL);
  CHECK(line_contains(row_of(txt, "work"), "worse"));
  free(txt);
  pp_cli_result_free(&r);

  /* Markdown for a PR comment: work regressed (the wall time of one run
   * per side is only shown). */
  r = pp_test_cli("diff --format markdown '%s' '%s'", a, b);
  CHECK_EQ(r.rc, 1);
  CHECK_CONTAINS(r.out, "### pipeprof diff: 1 regression");
  CHECK_CONTAINS(r.out, "|---|");
  CHECK_CONTAINS(r.out, "| `work` | 300 / 300 |");
  CHECK_CONTAINS(r.out, "**worse**");
  CHECK_CONTAINS(r.out, "> note: one run per side");
  CHECK_CONTAINS(r.out, "- max RSS: unavailable: ");
  pp_cli_result_free(&r);

  /* JSON. */
  r = pp_test_cli("diff --format=json '%s' '%s'", a, b);
  CHECK_EQ(r.rc, 1);
  CHECK_CONTAINS(r.out, "\"schema\":\"pipeprof.diff\"");
#ifdef PP_HAVE_JANSSON
  json_error_t jerr;
  json_t *root = json_loads(r.out, 0, &jerr);
  if (!root)
    PP_FAIL("diff JSON does not parse: %s (line %d)", jerr.text, jerr.line);
  CHECK_STR(json_string_value(json_object_get(root, "schema")),
            "pipeprof.diff");
  CHECK_EQ(json_integer_value(json_object_get(root, "schema_version")), 1);
  CHECK(json_is_true(json_object_get(root, "regression")));
  CHECK_STR(json_string_value(json_object_get(root, "mode")), "samples");
  CHECK_NEAR(json_real_value(json_object_get(root, "threshold")), 0.05, 0);
  CHECK_NEAR(json_real_value(json_object_get(root, "min_effect")), 0.05, 0);
  CHECK_EQ(json_integer_value(json_object_get(root, "min_runs_per_side")), 4);
  CHECK(json_is_string(
      json_object_get(json_object_get(root, "unavailable"), "CPU time")));
  json_t *counts = json_object_get(root, "counts");
  /* work; the wall time of one run per side is "higher" */
  CHECK_EQ(json_integer_value(json_object_get(counts, "worse")), 1);
  json_t *rows = json_object_get(root, "rows");
  CHECK(json_is_array(rows));
  CHECK_EQ(json_array_size(rows), 3);
  int found = 0;
  for (size_t i = 0; i < json_array_size(rows); i++) {
    json_t *row = json_array_get(rows, i);
    const char *name = json_string_value(json_object_get(row, "name"));
    CHECK_STR(json_string_value(json_object_get(row, "unit")), "ns");
    if (strcmp(name, "wall time") == 0) {
      CHECK_EQ(i, 0);
      CHECK_STR(json_string_value(json_object_get(row, "kind")), "run");
      CHECK_STR(json_string_value(json_object_get(row, "verdict_basis")),
                "threshold");
      CHECK(json_is_null(json_object_get(row, "p")));
      CHECK(json_is_null(json_object_get(row, "mann_whitney")));
      continue;
    }
    CHECK_STR(json_string_value(json_object_get(row, "kind")), "zone");
    CHECK_STR(json_string_value(json_object_get(row, "test")), "within_run");
    if (strcmp(name, "work") != 0)
      continue;
    found = 1;
    CHECK_STR(json_string_value(json_object_get(row, "verdict")), "worse");
    CHECK_STR(json_string_value(json_object_get(row, "verdict_basis")),
              "median");
    json_t *base = json_object_get(row, "base");
    CHECK_EQ(json_integer_value(json_object_get(base, "n")), 300);
    double bm = json_number_value(json_object_get(base, "median"));
    double nm = json_number_value(
        json_object_get(json_object_get(row, "new"), "median"));
    CHECK(bm >= 49000 && bm <= 51000);
    CHECK(nm >= 78400 && nm <= 81600);
    double ch = json_number_value(json_object_get(row, "median_change"));
    CHECK_NEAR(ch, (nm - bm) / bm, 1e-9);
    json_t *shift = json_object_get(row, "shift");
    double lo = json_number_value(json_object_get(shift, "lo"));
    double hi = json_number_value(json_object_get(shift, "hi"));
    double est = json_number_value(json_object_get(shift, "estimate"));
    CHECK(lo <= est && est <= hi);
    CHECK(lo > 28000 && hi < 32000);
    CHECK_NEAR(json_number_value(json_object_get(shift, "confidence")), 0.95,
               1e-9);
    double p = json_number_value(json_object_get(row, "p"));
    CHECK(p < 1e-6);
    CHECK(json_is_false(
        json_object_get(json_object_get(row, "mann_whitney"), "exact")));
    CHECK(json_is_null(json_object_get(row, "need_per_side")));
  }
  CHECK(found);
  json_decref(root);
#endif
  pp_cli_result_free(&r);
}

/* "BASE... -- NEW..." with the inputs named name0.pptrace ... */
static void list_of(char *buf, size_t len, const char *prefix, int n) {
  buf[0] = 0;
  for (int i = 0; i < n; i++) {
    char name[64];
    snprintf(name, sizeof name, "%s%d.pptrace", prefix, i);
    size_t l = strlen(buf);
    snprintf(buf + l, len - l, " '%s'", tpath(name));
  }
}

/* Runs whose medians spread by +-15% from run to run, with a tight spread
 * (+-2%) inside each run. */
static void make_runs(const char *prefix, const double *medians_us,
                      const double *wall_s, int n, unsigned seed) {
  for (int i = 0; i < n; i++) {
    char name[64], wall[32];
    snprintf(name, sizeof name, "%s%d.pptrace", prefix, i);
    snprintf(wall, sizeof wall, "%.0f", wall_s[i] * 1e9);
    tw_spec sp = {.zones = {{"infer", medians_us[i] * 1000, 0.02, 200}},
                  .meta = {{"run.wall_ns", wall}},
                  .seed = seed + (unsigned)i};
    tw_write(tpath(name), &sp);
  }
}

/* Between-run spread larger than a small shift: pooled instances call
 * the shift significant, the run-level test does not. */
PP_TEST_T(diff_cli_runs_between_run_spread, 120) {
  static const double base[5] = {850, 950, 1000, 1050, 1150};
  static const double cur[5] = {900, 1000, 1060, 1200, 1250}; /* +6% */
  static const double wb[5] = {1.70, 1.90, 2.00, 2.10, 2.30};
  static const double wn[5] = {1.80, 2.00, 2.12, 2.40, 2.50};
  make_runs("sb", base, wb, 5, 10);
  make_runs("sn", cur, wn, 5, 20);
  char lb[4096], ln[4096];
  list_of(lb, sizeof lb, "sb", 5);
  list_of(ln, sizeof ln, "sn", 5);
  pp_cli_result r = pp_test_cli("diff %s --%s", lb, ln);
  printf("%s", r.out);
  CHECK_EQ(r.rc, 0);
  CHECK_STR(r.err, "");
  CHECK(!strstr(r.out, "worse"));
  CHECK_CONTAINS(r.out, "note: several runs per side");
  CHECK(line_contains(row_of(r.out, "infer"), "5/5"));
  CHECK(line_contains(row_of(r.out, "infer"), "+6."));
  CHECK(line_contains(row_of(r.out, "infer"), "need more samples"));
  CHECK(line_contains(row_of(r.out, "wall time"), "+6.0%"));
  CHECK(line_contains(row_of(r.out, "wall time"), "5/5"));
  pp_cli_result_free(&r);
}

/* A 20% slowdown in every one of 5 runs per side: worse, exit 1. */
PP_TEST_T(diff_cli_runs_slowdown, 120) {
  static const double base[5] = {970, 990, 1000, 1010, 1030};
  static const double cur[5] = {1164, 1188, 1200, 1212, 1236};
  static const double wb[5] = {1.60, 1.61, 1.62, 1.63, 1.64};
  static const double wn[5] = {1.92, 1.93, 1.94, 1.96, 1.97};
  make_runs("fb", base, wb, 5, 30);
  make_runs("fn", cur, wn, 5, 40);
  char lb[4096], ln[4096];
  list_of(lb, sizeof lb, "fb", 5);
  list_of(ln, sizeof ln, "fn", 5);
  pp_cli_result r = pp_test_cli("diff %s --%s", lb, ln);
  printf("%s", r.out);
  CHECK_EQ(r.rc, 1);
  CHECK(line_contains(row_of(r.out, "infer"), "worse"));
  CHECK(line_contains(row_of(r.out, "infer"), "0.00794")); /* 2/252 */
  CHECK(line_contains(row_of(r.out, "wall time"), "worse"));
  CHECK(!line_contains(row_of(r.out, "wall time"), "no test"));
  pp_cli_result_free(&r);
  /* Above the minimum effect only: --min-effect 25 turns both to no
   * verdict of change. */
  r = pp_test_cli("diff --min-effect 25 %s --%s", lb, ln);
  CHECK_EQ(r.rc, 0);
  CHECK(!strstr(r.out, "worse"));
  CHECK_CONTAINS(r.out, "min effect 25%");
  pp_cli_result_free(&r);
  /* Three runs per side cannot reach p <= 0.05 (at best 0.1): said, with
   * the number of runs that can. */
  list_of(lb, sizeof lb, "fb", 3);
  list_of(ln, sizeof ln, "fn", 3);
  r = pp_test_cli("diff %s --%s", lb, ln);
  CHECK_EQ(r.rc, 0);
  CHECK(line_contains(row_of(r.out, "infer"),
                      "need more samples (4 runs per side)"));
  CHECK(!strstr(r.out, "20 runs per side"));
  pp_cli_result_free(&r);
  /* At alpha 0.01 five runs are the fewest. */
  r = pp_test_cli("diff --alpha 0.01 %s --%s", lb, ln);
  CHECK(line_contains(row_of(r.out, "infer"), "(5 runs per side)"));
  pp_cli_result_free(&r);
}

/* The wall time (and CPU time) alone changed: rows and a verdict. */
PP_TEST_T(diff_cli_wall_time_alone, 60) {
  char *a = tpath("wa.pptrace"), *b = tpath("wb.pptrace"),
       *c = tpath("wc.pptrace");
  tw_spec sp = {.zones = {{"decode", 100000, 0.02, 100}},
                .meta = {{"run.wall_ns", "1610000000"},
                         {"run.user_ns", "1200000000"},
                         {"run.system_ns", "100000000"},
                         {"run.maxrss_bytes", "104857600"}},
                .seed = 5};
  tw_write(a, &sp);
  sp.meta[0][1] = "2720000000";
  sp.meta[1][1] = "1800000000";
  tw_write(b, &sp);
  sp.meta[0][1] = "1650000000"; /* +2.5% */
  sp.meta[1][1] = "1220000000";
  tw_write(c, &sp);
  pp_cli_result r = pp_test_cli("diff '%s' '%s'", a, b);
  printf("%s", r.out);
  CHECK_EQ(r.rc, 1);
  CHECK(line_contains(row_of(r.out, "wall time"), "+68.9%"));
  /* one run per side: the wall time is shown, the CPU time gates */
  CHECK(line_contains(row_of(r.out, "wall time"), "higher (no test)"));
  CHECK(line_contains(row_of(r.out, "CPU time"), "+46.2%"));
  CHECK(line_contains(row_of(r.out, "CPU time"), "worse (no test)"));
  CHECK(line_contains(row_of(r.out, "max RSS"), "100 MiB"));
  CHECK(line_contains(row_of(r.out, "max RSS"), "no change (no test)"));
  CHECK(line_contains(row_of(r.out, "decode"), "no change"));
  pp_cli_result_free(&r);
  /* Below the minimum effect: no change, exit 0. */
  r = pp_test_cli("diff '%s' '%s'", a, c);
  CHECK_EQ(r.rc, 0);
  CHECK(line_contains(row_of(r.out, "wall time"), "+2.5%"));
  CHECK(line_contains(row_of(r.out, "wall time"), "no change (no test)"));
  pp_cli_result_free(&r);
  /* wall +2.5% past a 2% minimum effect, CPU +1.5% under it: the wall
   * time of one run alone does not fail the gate */
  r = pp_test_cli("diff --min-effect 2%% '%s' '%s'", a, c);
  CHECK_EQ(r.rc, 0);
  CHECK(line_contains(row_of(r.out, "wall time"), "higher (no test)"));
  CHECK(line_contains(row_of(r.out, "CPU time"), "no change (no test)"));
  pp_cli_result_free(&r);
  /* with several runs per side the wall time gates like any run figure */
  r = pp_test_cli("diff --min-effect 2%% '%s' '%s' '%s' '%s' -- '%s' '%s' "
                  "'%s' '%s'",
                  a, a, a, a, b, b, b, b);
  CHECK_EQ(r.rc, 1);
  CHECK(line_contains(row_of(r.out, "wall time"), "worse"));
  CHECK(!line_contains(row_of(r.out, "wall time"), "higher"));
  pp_cli_result_free(&r);
#ifdef PP_HAVE_JANSSON
  r = pp_test_cli("diff --format json '%s' '%s'", a, b);
  json_error_t jerr;
  json_t *root = json_loads(r.out, 0, &jerr);
  CHECK(root != NULL);
  json_t *row = json_array_get(json_object_get(root, "rows"), 0);
  CHECK_STR(json_string_value(json_object_get(row, "name")), "wall time");
  CHECK_STR(json_string_value(json_object_get(row, "source")), "pipeprof run");
  CHECK_NEAR(
      json_number_value(json_object_get(json_object_get(row, "new"), "median")),
      2.72e9, 0);
  row = json_array_get(json_object_get(root, "rows"), 2);
  CHECK_STR(json_string_value(json_object_get(row, "name")), "max RSS");
  CHECK_STR(json_string_value(json_object_get(row, "unit")), "bytes");
  json_decref(root);
  pp_cli_result_free(&r);
#endif
}

/* Cumulative counters: a total and a rate per second, not a
 * distribution of their running values. */
PP_TEST_T(diff_cli_cumulative_counters, 60) {
  /* Base: 1000 page faults over 10 samples; new: 1500 over 10. Sampled as
   * distributions the running values differ by every test; as totals
   * they differ by +50%. An RSS gauge stays a distribution. */
  double fb[10], fn[10], fs[20], rb[10], rn[10];
  for (int i = 0; i < 10; i++) {
    fb[i] = 100.0 * (i + 1);
    fn[i] = 150.0 * (i + 1);
    rb[i] = rn[i] = 50e6 + 1e6 * (i % 3);
  }
  for (int i = 0; i < 20; i++)
    fs[i] = 50.0 * (i + 1); /* the base total, sampled twice as often */
  char *a = tpath("ca.pptrace"), *b = tpath("cb.pptrace"),
       *c = tpath("cc.pptrace");
  tw_spec sp = {
      .counters = {{"proc.minflt_total", fb, 10}, {"proc.rss_bytes", rb, 10}},
      .meta = {{"run.wall_ns", "2000000000"}}};
  tw_write(a, &sp);
  sp.counters[0].v = fn;
  sp.counters[1].v = rn;
  tw_write(b, &sp);
  sp.counters[0].v = fs;
  sp.counters[0].n = 20;
  tw_write(c, &sp);
  pp_cli_result r = pp_test_cli("diff '%s' '%s'", a, b);
  printf("%s", r.out);
  CHECK_EQ(r.rc, 0); /* counters read higher / lower, they never gate */
  CHECK(line_contains(row_of(r.out, "proc.minflt_total"), "1000"));
  CHECK(line_contains(row_of(r.out, "proc.minflt_total"), "1500"));
  CHECK(line_contains(row_of(r.out, "proc.minflt_total"), "+50.0%"));
  CHECK(line_contains(row_of(r.out, "proc.minflt_total"), "1/1"));
  CHECK(line_contains(row_of(r.out, "proc.minflt_total"), "higher (no test)"));
  CHECK(line_contains(row_of(r.out, "proc.minflt_total per s"), "500"));
  CHECK(line_contains(row_of(r.out, "proc.minflt_total per s"), "750"));
  /* the gauge is still compared as samples; max RSS is its largest */
  CHECK(line_contains(row_of(r.out, "proc.rss_bytes"), "10/10"));
  CHECK(line_contains(row_of(r.out, "proc.rss_bytes"), "48.6 MiB"));
  CHECK(line_contains(row_of(r.out, "max RSS"), "49.6 MiB"));
  pp_cli_result_free(&r);
  /* The same total sampled twice as often: no change (as a distribution
   * of running values it would differ). */
  r = pp_test_cli("diff '%s' '%s'", a, c);
  CHECK_EQ(r.rc, 0);
  CHECK(line_contains(row_of(r.out, "proc.minflt_total"), "0.0%"));
  CHECK(line_contains(row_of(r.out, "proc.minflt_total"), "no change"));
  CHECK(line_contains(row_of(r.out, "proc.minflt_total"), "1/1"));
  pp_cli_result_free(&r);
#ifdef PP_HAVE_JANSSON
  r = pp_test_cli("diff --format json --metric minflt '%s' '%s'", a, b);
  json_error_t jerr;
  json_t *root = json_loads(r.out, 0, &jerr);
  CHECK(root != NULL);
  json_t *rows = json_object_get(root, "rows");
  CHECK_EQ(json_array_size(rows), 2);
  CHECK_STR(json_string_value(json_object_get(json_array_get(rows, 0), "kind")),
            "total");
  CHECK_STR(json_string_value(json_object_get(json_array_get(rows, 1), "kind")),
            "rate");
  CHECK_STR(
      json_string_value(json_object_get(json_array_get(rows, 0), "verdict")),
      "higher");
  json_decref(root);
  pp_cli_result_free(&r);
#endif
}

/* One run per side: a significant change below the minimum effect is no
 * change; --min-effect lowers the bar. */
PP_TEST_T(diff_cli_single_run_min_effect, 60) {
  char *a = tpath("ma.pptrace"), *b = tpath("mb.pptrace");
  tw_spec sp = {.zones = {{"infer", 1000000, 0.01, 400}},
                .meta = {{"run.wall_ns", "1000000000"}},
                .seed = 7};
  tw_write(a, &sp);
  sp.zones[0].median_ns = 1030000; /* +3% */
  sp.seed = 8;
  tw_write(b, &sp);
  pp_cli_result r = pp_test_cli("diff '%s' '%s'", a, b);
  printf("%s", r.out);
  CHECK_EQ(r.rc, 0);
  CHECK(line_contains(row_of(r.out, "infer"), "<1e-4"));
  CHECK(line_contains(row_of(r.out, "infer"), "no change"));
  CHECK_CONTAINS(r.out, "ignores run-to-run variation");
  CHECK_CONTAINS(r.out, "one run per side: no significance test possible");
  pp_cli_result_free(&r);
  r = pp_test_cli("diff --min-effect 2 '%s' '%s'", a, b);
  CHECK_EQ(r.rc, 1);
  CHECK(line_contains(row_of(r.out, "infer"), "worse"));
  CHECK_CONTAINS(r.out, "threshold 2%");
  pp_cli_result_free(&r);
  /* --per-run with one run per side: no test, the minimum effect only */
  r = pp_test_cli("diff --per-run '%s' '%s'", a, b);
  CHECK_EQ(r.rc, 0);
  CHECK(line_contains(row_of(r.out, "infer"), "no change (no test)"));
  CHECK(!strstr(r.out, "20 runs per side"));
  pp_cli_result_free(&r);
}

/* Summary JSON inputs (no raw samples): one p50 and p99 per run. */
PP_TEST_T(diff_cli_summaries, 120) {
  char *list_base = calloc(1, 4096), *list_new = calloc(1, 4096);
  CHECK(list_base && list_new);
  for (int i = 0; i < 4; i++) {
    char name[64];
    snprintf(name, sizeof name, "base%d.pptrace", i);
    char *t = tpath(name);
    make_trace(t, 50 + i, 100 + (unsigned)i);
    snprintf(name, sizeof name, "base%d.json", i);
    char *j = tpath(name);
    pp_cli_result r = pp_test_cli("export '%s' --format json -o '%s'", t, j);
    CHECK_EQ(r.rc, 0);
    pp_cli_result_free(&r);
    size_t len = strlen(list_base);
    snprintf(list_base + len, 4096 - len, " '%s'", j);
    snprintf(name, sizeof name, "new%d.pptrace", i);
    t = tpath(name);
    make_trace(t, 80 + i, 200 + (unsigned)i);
    len = strlen(list_new);
    snprintf(list_new + len, 4096 - len, " '%s'", t);
  }
#ifdef PP_HAVE_JANSSON
  /* Four runs per side: the exact rank test reaches p = 2/70. */
  pp_cli_result r = pp_test_cli("diff %s --%s", list_base, list_new);
  printf("%s", r.out);
  CHECK_EQ(r.rc, 1);
  CHECK_CONTAINS(r.out, "each run counting as one sample");
  CHECK(line_contains(row_of(r.out, "work"), "worse"));
  CHECK(line_contains(row_of(r.out, "work"), "4/4"));
  CHECK(line_contains(row_of(r.out, "wall time"), "4/4"));
  pp_cli_result_free(&r);
  /* One run per side: no test, the minimum effect decides, and it says
   * so (it used to ask for "20 runs per side"). */
  r = pp_test_cli("diff '%s' '%s'", tpath("base0.json"), tpath("new0.pptrace"));
  CHECK_EQ(r.rc, 1);
  CHECK(line_contains(row_of(r.out, "work"), "worse (no test)"));
  CHECK_CONTAINS(r.out, "one run per side: no significance test possible");
  CHECK(!strstr(r.out, "runs per side)"));
  pp_cli_result_free(&r);
  /* Not a summary. */
  char *bad = tpath("other.json");
  FILE *f = fopen(bad, "w");
  CHECK(f != NULL);
  fputs("{\"schema\":\"something.else\"}\n", f);
  fclose(f);
  r = pp_test_cli("diff '%s' '%s'", bad, tpath("new0.pptrace"));
  CHECK_ONE_LINE_ERROR_FROM(r, 2, "other.json");
  pp_cli_result_free(&r);
  f = fopen(bad, "w");
  CHECK(f != NULL);
  fputs("{\"schema\": ", f);
  fclose(f);
  r = pp_test_cli("diff '%s' '%s'", bad, tpath("new0.pptrace"));
  CHECK_ONE_LINE_ERROR_FROM(r, 2, "not valid JSON");
  pp_cli_result_free(&r);
#else
  pp_cli_result r = pp_test_cli("diff %s --%s", list_base, list_new);
  CHECK_EQ(r.rc, 2);
  pp_cli_result_free(&r);
#endif
  /* Several traces per side: per-run figures without --per-run. */
  list_base[0] = 0;
  for (int i = 0; i < 4; i++) {
    char name[64];
    snprintf(name, sizeof name, "base%d.pptrace", i);
    size_t len = strlen(list_base);
    snprintf(list_base + len, 4096 - len, " '%s'", tpath(name));
  }
  r = pp_test_cli("diff %s --%s", list_base, list_new);
  CHECK_EQ(r.rc, 1);
  CHECK_CONTAINS(r.out, "note: several runs per side");
  CHECK(line_contains(row_of(r.out, "work"), "4/4"));
  CHECK(line_contains(row_of(r.out, "work"), "worse"));
  pp_cli_result_free(&r);
  r = pp_test_cli("diff --per-run %s --%s", list_base, list_new);
  CHECK_EQ(r.rc, 1);
  CHECK_CONTAINS(r.out, "note: --per-run");
  pp_cli_result_free(&r);
  free(list_base);
  free(list_new);
}

static void spin_ns(int64_t ns) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do
    clock_gettime(CLOCK_MONOTONIC, &t);
  while ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) < ns);
}

/* Ranges (requests) and the sys.* / proc.* metrics recorded by the
 * library (sites of kind PP_KIND_METRIC, as the sampler records them)
 * become rows; other counters do not, even when named like a library
 * metric; sampled metrics say higher / lower and never fail. (Only
 * verdicts of the counters' fixed values are asserted: the durations
 * depend on the machine.) The user's "sys.load1" moves the other way from
 * the library's, so that a user value mixed into the library's row would
 * turn its verdict. */
static void make_trace_ranges(const char *path, double level) {
  static const pp_srcloc load = {"sys.load1", NULL, NULL, 0, PP_KIND_METRIC};
  static const pp_srcloc minflt = {"proc.minflt_total", NULL, NULL, 0,
                                   PP_KIND_METRIC};
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  for (int i = 0; i < 100; i++) {
    uint64_t id = pp_range_start("request");
    spin_ns(30000);
    pp_range_end(id);
    pp_counter_setf_loc(&load, level + (i % 10) * 0.1);
    pp_counter_setf("sys.load1", 1000 - level * 10);
    pp_counter_setf("sys.cpu.busy_pct", level);
    /* running totals: the library's is a total row, the user's none */
    pp_counter_set_loc(&minflt, (int64_t)(level * i));
    pp_counter_set("proc.majflt_total", i);
    pp_counter_set("app.queue", i);
  }
  CHECK_EQ(pp_shutdown(), PP_OK);
}

PP_TEST_T(diff_cli_ranges_and_sampled, 60) {
  char *a = tpath("ra.pptrace"), *b = tpath("rb.pptrace");
  make_trace_ranges(a, 10);
  make_trace_ranges(b, 20);
  pp_cli_result r = pp_test_cli(
      "diff --metric request --metric sys. --metric app. '%s' '%s'", a, b);
  printf("%s", r.out);
  CHECK_EQ(r.rc, 0);
  CHECK(line_contains(row_of(r.out, "range request"), "100/100"));
  CHECK(line_contains(row_of(r.out, "sys.load1"), "higher"));
  CHECK(line_contains(row_of(r.out, "sys.load1"), "100/100"));
  CHECK(row_of(r.out, "sys.cpu.busy_pct") == NULL);
  CHECK(row_of(r.out, "app.queue") == NULL);
  pp_cli_result_free(&r);
  r = pp_test_cli("diff --format json --metric proc. '%s' '%s'", a, b);
  CHECK_EQ(r.rc, 0);
  /* the library's proc.minflt_total: a total (the tree's last value, 990
   * then 1980) and a rate */
  CHECK_CONTAINS(r.out, "{\"name\":\"proc.minflt_total\",\"kind\":\"total\","
                        "\"unit\":\"\",\"test\":\"none (one run on a side)\","
                        "\"base\":{\"n\":1,\"median\":990,\"p99\":990,"
                        "\"instances\":1},"
                        "\"new\":{\"n\":1,\"median\":1980,");
  CHECK_CONTAINS(r.out, "{\"name\":\"proc.minflt_total per s\",\"kind\":"
                        "\"rate\"");
  CHECK(strstr(r.out, "proc.majflt_total") == NULL);
  pp_cli_result_free(&r);
  r = pp_test_cli("diff --format json --metric sys. '%s' '%s'", b, a);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "\"kind\":\"sampled\"");
  CHECK_CONTAINS(r.out, "\"verdict\":\"lower\"");
  pp_cli_result_free(&r);
  r = pp_test_cli("diff --format json --metric request '%s' '%s'", b, a);
  CHECK_CONTAINS(r.out, "\"kind\":\"range\"");
  pp_cli_result_free(&r);
}

/* ---- bounded samples ------------------------------------------------------
 */

/* Below the cap a reservoir holds every value, in order; above it, cap of
 * them, each value of the stream equally likely to be kept: over 4000
 * seeds (fixed: the counts are the same every run), value i of 100 kept in
 * 10 is kept about 400 times (binomial sd 19; bounds at 5 sd). */
PP_TEST(reservoir_whole_then_uniform) {
  pp_reservoir r;
  pp_reservoir_init(&r, 10, 1);
  for (int i = 0; i < 10; i++)
    CHECK_EQ(pp_reservoir_add(&r, i), 0);
  CHECK(pp_reservoir_complete(&r));
  CHECK_EQ_U(r.n, 10);
  for (int i = 0; i < 10; i++)
    CHECK_NEAR(r.v[i], i, 0);
  pp_reservoir_free(&r);
  static unsigned kept[100];
  memset(kept, 0, sizeof kept);
  for (uint64_t seed = 1; seed <= 4000; seed++) {
    pp_reservoir_init(&r, 10, seed);
    for (int i = 0; i < 100; i++)
      CHECK_EQ(pp_reservoir_add(&r, i), 0);
    CHECK(!pp_reservoir_complete(&r));
    CHECK_EQ_U(r.n, 10);
    CHECK_EQ_U(r.seen, 100);
    for (size_t j = 0; j < r.n; j++)
      kept[(int)r.v[j]]++;
    pp_reservoir_free(&r);
  }
  for (int i = 0; i < 100; i++) {
    CHECK_GT(kept[i], 400 - 95);
    CHECK_LT(kept[i], 400 + 95);
  }
}

/* Merging: whole samples append; otherwise the result is a uniform sample
 * of both streams together, whatever their sizes (70 values and 30, cap
 * 10: each of the 100 kept about 400 times in 4000 seeds). */
PP_TEST(reservoir_merge_uniform) {
  pp_reservoir a, b;
  pp_reservoir_init(&a, 10, 7);
  pp_reservoir_init(&b, 10, 8);
  for (int i = 0; i < 4; i++)
    CHECK_EQ(pp_reservoir_add(&a, i), 0);
  for (int i = 4; i < 9; i++)
    CHECK_EQ(pp_reservoir_add(&b, i), 0);
  CHECK_EQ(pp_reservoir_merge(&a, &b), 0);
  CHECK(pp_reservoir_complete(&a));
  CHECK_EQ_U(a.n, 9);
  for (int i = 0; i < 9; i++)
    CHECK_NEAR(a.v[i], i, 0);
  pp_reservoir_free(&a);
  pp_reservoir_free(&b);
  /* into an empty sample (nothing allocated yet): src's values */
  pp_reservoir_init(&a, 10, 7);
  pp_reservoir_init(&b, 10, 8);
  for (int i = 0; i < 50; i++)
    CHECK_EQ(pp_reservoir_add(&b, 1000 + i), 0);
  CHECK_EQ(pp_reservoir_merge(&a, &b), 0);
  CHECK_EQ_U(a.n, 10);
  CHECK_EQ_U(a.seen, 50);
  for (size_t j = 0; j < a.n; j++)
    CHECK(a.v[j] >= 1000 && a.v[j] < 1050);
  pp_reservoir_free(&a);
  pp_reservoir_free(&b);
  static unsigned kept[100];
  memset(kept, 0, sizeof kept);
  for (uint64_t seed = 1; seed <= 4000; seed++) {
    pp_reservoir_init(&a, 10, seed);
    pp_reservoir_init(&b, 10, seed + 100000);
    for (int i = 0; i < 70; i++)
      CHECK_EQ(pp_reservoir_add(&a, i), 0);
    for (int i = 70; i < 100; i++)
      CHECK_EQ(pp_reservoir_add(&b, i), 0);
    CHECK_EQ(pp_reservoir_merge(&a, &b), 0);
    CHECK_EQ_U(a.n, 10);
    CHECK_EQ_U(a.seen, 100);
    for (size_t j = 0; j < a.n; j++)
      kept[(int)a.v[j]]++;
    pp_reservoir_free(&a);
    pp_reservoir_free(&b);
  }
  for (int i = 0; i < 100; i++) {
    CHECK_GT(kept[i], 400 - 95);
    CHECK_LT(kept[i], 400 + 95);
  }
}

/* More instances than diff keeps (16384 per metric and side): the row
 * says so (`*`, JSON sampled, n the values tested, instances all of
 * them), two traces of one distribution still show no change, and 10%
 * more work is still worse; a zone under the cap is compared whole. */
PP_TEST_T(diff_cli_sampled_past_the_cap, 120) {
  tw_spec sp = {
      .zones = {{"many", 100000, 0.05, 40000}, {"few", 20000, 0.02, 300}},
      .seed = 1};
  tw_write(tpath("m1.pptrace"), &sp);
  sp.seed = 2;
  tw_write(tpath("m2.pptrace"), &sp);
  sp.zones[0].median_ns = 110000;
  sp.seed = 3;
  tw_write(tpath("m3.pptrace"), &sp);
  pp_cli_result r =
      pp_test_cli("diff '%s' '%s'", tpath("m1.pptrace"), tpath("m2.pptrace"));
  printf("%s", r.out);
  CHECK_EQ(r.rc, 0);
  CHECK(line_contains(row_of(r.out, "many"), "40000/40000*"));
  CHECK(line_contains(row_of(r.out, "many"), "no change"));
  CHECK(line_contains(row_of(r.out, "few"), "300/300 "));
  CHECK_CONTAINS(r.out, "uniform random sample of 16384");
  pp_cli_result_free(&r);
  r = pp_test_cli("diff --format json '%s' '%s'", tpath("m1.pptrace"),
                  tpath("m3.pptrace"));
  CHECK_EQ(r.rc, 1);
  CHECK_CONTAINS(r.out, "\"sample_cap\":16384");
  const char *many = strstr(r.out, "{\"name\":\"many\"");
  CHECK(many != NULL);
  CHECK(line_contains(many, "\"n\":16384,"));
  CHECK(line_contains(many, "\"instances\":40000}"));
  CHECK(line_contains(many, "\"verdict\":\"worse\""));
  CHECK(line_contains(many, "\"sampled\":true"));
  const char *few = strstr(r.out, "{\"name\":\"few\"");
  CHECK(few != NULL);
  CHECK(line_contains(few, "\"n\":300,"));
  CHECK(line_contains(few, "\"sampled\":false"));
  pp_cli_result_free(&r);
}

PP_TEST(diff_cli_usage_errors) {
  char *a = tpath("u.pptrace");
  make_trace(a, 1, 9);
  char *junk = tpath("junk.pptrace");
  FILE *f = fopen(junk, "wb");
  CHECK(f != NULL);
  for (int i = 0; i < 4096; i++)
    fputc((i * 7919) & 0xff, f);
  fclose(f);
  struct {
    const char *args;
    const char *who;
  } cases[] = {
      {"diff", "pipeprof diff"},
      {"diff A", "pipeprof diff"},
      {"diff A A A", "'--'"},
      {"diff --bogus A A", "--bogus"},
      {"diff --threshold abc A A", "--threshold"},
      {"diff --threshold 5 A A", "--threshold"},
      {"diff --threshold", "--threshold"},
      {"diff --min-effect -3 A A", "--min-effect '-3'"},
      {"diff --min-effect abc A A", "--min-effect 'abc'"},
      {"diff --min-effect=5x A A", "--min-effect '5x'"},
      {"diff --min-effect 1001 A A", "--min-effect '1001'"},
      {"diff --min-effect nan A A", "--min-effect 'nan'"},
      {"diff --min-effect= A A", "--min-effect ''"},
      {"diff A A --min-effect", "--min-effect"},
      {"diff --alpha 2 A A", "--alpha"},
      {"diff --format xml A A", "xml"},
      {"diff A --", "NEW"},
      {"diff -- A", "BASE"},
      {"diff A -- A -- A", "--"},
      {"diff A /nonexistent/x.pptrace", "/nonexistent/x.pptrace"},
      {"diff A J", "junk.pptrace"},
      {"diff --metric no-such-zone A A", "nothing to compare"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char cmd[1024];
    size_t k = 0;
    for (const char *p = cases[i].args; *p && k < sizeof cmd - 300; p++) {
      if (*p == 'A' && (p[1] == 0 || p[1] == ' ') && p[-1] == ' ')
        k += (size_t)snprintf(cmd + k, sizeof cmd - k, "'%s'", a);
      else if (*p == 'J' && p[1] == 0 && p[-1] == ' ')
        k += (size_t)snprintf(cmd + k, sizeof cmd - k, "'%s'", junk);
      else
        cmd[k++] = *p;
    }
    cmd[k] = 0;
    pp_cli_result r = pp_test_cli("%s", cmd);
    if (r.rc != 2 || pp_test_count_lines(r.err) != 1 || r.out[0])
      PP_FAIL("%s: rc %d, stdout:\n%s\nstderr:\n%s", cmd, r.rc, r.out, r.err);
    CHECK_ONE_LINE_ERROR_FROM(r, 2, cases[i].who);
    pp_cli_result_free(&r);
  }
  pp_cli_result r = pp_test_cli("diff --help");
  CHECK_EQ(r.rc, 0);
  CHECK_STR(r.err, "");
  CHECK_CONTAINS(r.out, "usage: pipeprof diff");
  CHECK_CONTAINS(r.out, "--min-effect PCT");
  /* the help says what --per-run needs, as the output does */
  CHECK_CONTAINS(r.out, ">= 4 runs per side");
  pp_cli_result_free(&r);
  /* valid values */
  r = pp_test_cli("diff --min-effect 0 '%s' '%s'", a, a);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "min effect 0%");
  pp_cli_result_free(&r);
  r = pp_test_cli("diff --min-effect=12.5%% '%s' '%s'", a, a);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "min effect 12.5%");
  pp_cli_result_free(&r);
}

/* What a diff of two identical builds must not call a regression, and
 * what it leaves out: max RSS +8% of a 4.4 MiB process (below the 1 MiB
 * floor), the machine's own series (sys.*, only with --host), figures 0
 * on both sides ("no change", not "need more samples"); per-thread series
 * pair by thread name though the ids differ; the verdict comes first. */
PP_TEST(diff_cli_identical_builds_noise) {
  static const double avail_b[] = {9e9, 8e9, 9e9, 8.5e9};
  static const double avail_n[] = {4e9, 3e9, 4e9, 3.5e9};
  static const double zero[] = {0, 0, 0, 0};
  static const double th_b[] = {40, 50, 45, 42};
  static const double th_n[] = {41, 49, 46, 43};
  char *a = tpath("na.pptrace"), *b = tpath("nb.pptrace");
  tw_spec sp = {.zones = {{"work", 100000, 0.02, 200}},
                .counters = {{"sys.mem.available_bytes", avail_b, 4},
                             {"proc.majflt_per_s", zero, 4},
                             {"proc.thread.101.cpu_pct", th_b, 4}},
                .meta = {{"run.maxrss_bytes", "4613734"},
                         {"tree.thread.0.tid", "101"},
                         {"tree.thread.0.comm", "decoder"},
                         {"run.command", "app"}},
                .seed = 1};
  tw_write(a, &sp);
  sp.counters[0].v = avail_n;
  sp.counters[2] = (tw_counter){"proc.thread.202.cpu_pct", th_n, 4};
  sp.meta[0][1] = "4982833"; /* +8% */
  sp.meta[1][1] = "202";
  sp.seed = 2;
  tw_write(b, &sp);
  pp_cli_result r = pp_test_cli("diff '%s' '%s'", a, b);
  printf("%s", r.out);
  CHECK_EQ(r.rc, 0);
  CHECK(strncmp(r.out, "verdict: no regression (", 24) == 0);
  CHECK(line_contains(row_of(r.out, "max RSS"), "no change"));
  CHECK(row_of(r.out, "sys.mem.available_bytes") == NULL);
  CHECK(line_contains(row_of(r.out, "proc.majflt_per_s"), "no change"));
  CHECK(!line_contains(row_of(r.out, "proc.majflt_per_s"), "need more"));
  CHECK(line_contains(row_of(r.out, "proc.thread.decoder.cpu_pct"), "4/4"));
  CHECK(row_of(r.out, "proc.thread.101.cpu_pct") == NULL);
  pp_cli_result_free(&r);
  /* the machine's series when asked */
  r = pp_test_cli("diff --host '%s' '%s'", a, b);
  CHECK(row_of(r.out, "sys.mem.available_bytes") != NULL);
  pp_cli_result_free(&r);
  /* a real regression still shows first */
  char *c = tpath("nc.pptrace");
  sp.zones[0].median_ns = 150000;
  tw_write(c, &sp);
  r = pp_test_cli("diff '%s' '%s'", a, c);
  CHECK_EQ(r.rc, 1);
  CHECK(strncmp(r.out, "verdict: worse (1 of ", 21) == 0);
  CHECK_CONTAINS(r.out, " rows: work)\n");
  pp_cli_result_free(&r);
}

/* The median's distribution-free 95% interval (the benches' spreads):
 * ranks from Binomial(n, 1/2), the whole range for small n. */
PP_TEST(stat_median_interval_ranks) {
  double v[12], lo, hi;
  for (int i = 0; i < 12; i++)
    v[i] = i;
  /* n = 10: P[X <= 1] = 0.0107, P[X <= 2] = 0.0547: k = 2 */
  pp_stat_median_interval(v, 10, &lo, &hi);
  CHECK(lo == 1 && hi == 8);
  /* n = 5: P[X = 0] = 0.031 > 0.025: the whole range */
  pp_stat_median_interval(v, 5, &lo, &hi);
  CHECK(lo == 0 && hi == 4);
  pp_stat_median_interval(v, 0, &lo, &hi);
  CHECK(lo != lo && hi != hi);
}
