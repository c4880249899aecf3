/* SPDX-License-Identifier: MIT */
/*
 * Two-sample statistics for `pipeprof diff` (src/analyze/stat_tests.c):
 * quantiles of raw samples, the Mann-Whitney U test (exact null
 * distribution for small samples, normal approximation with tie and
 * continuity corrections otherwise), the two-sample Kolmogorov-Smirnov
 * statistic with its p-value (exact lattice-path count up to 10^6 pairs,
 * the asymptotic Kolmogorov distribution beyond), a tail test (Fisher's
 * exact test above the pooled p99), the Hodges-Lehmann shift estimate with
 * its distribution-free confidence interval, and the three-valued
 * regression decision of `pipeprof diff` built from them.
 *
 * Conventions: every function takes samples already sorted ascending
 * (pp_stat_sort) and finite; x is the base sample, y the new one, and a
 * shift is y - x (positive: the new sample is larger). Nothing here keeps
 * state; the functions are safe to call from any thread on distinct data.
 * Time is bounded: O(n + m) per call after sorting (the Hodges-Lehmann
 * order statistics take 64 passes each), plus the exact distributions,
 * used only where they are cheap: Mann-Whitney while the smaller side has
 * fewer than PP_STAT_MW_EXACT_MIN values and n + m <= PP_STAT_EXACT_MAX_N
 * (about 10^6 steps at most), KS while n m <= PP_STAT_KS_EXACT_MAX_NM.
 */
#ifndef PP_STAT_TESTS_H
#define PP_STAT_TESTS_H

#include <stddef.h>

/* The normal approximation is used once both sides have this many values. */
#define PP_STAT_MW_EXACT_MIN 8
/* Largest n + m for which the exact distribution is computed. */
#define PP_STAT_EXACT_MAX_N 200

/* Sort v ascending in place. */
void pp_stat_sort(double *v, size_t n);

/* Quantile q (0..1) of a sorted sample by linear interpolation between the
 * closest ranks (Hyndman and Fan type 7, numpy's default): h = (n-1)q,
 * v[floor h] + (h - floor h)(v[floor h + 1] - v[floor h]). NaN when n is 0. */
double pp_stat_quantile(const double *sorted, size_t n, double q);
/* The median: the middle value, or the mean of the two middle values. */
double pp_stat_median(const double *sorted, size_t n);
/* The median's distribution-free 95% interval: the k-th smallest and k-th
 * largest of a sorted sample, k the largest rank with P[Binomial(n, 1/2)
 * < k] <= 0.025; the whole range when n is too small for 95% (NaN when
 * n is 0). */
void pp_stat_median_interval(const double *sorted, size_t n, double *lo,
                             double *hi);

/* Standard normal distribution function and its inverse (0 < p < 1). */
double pp_stat_norm_cdf(double z);
double pp_stat_norm_quantile(double p);

typedef struct pp_mw_result {
  double u;  /* U of x: pairs with x_i > y_j, plus half the ties */
  double z;  /* normal score of u (tie-corrected; 0 when exact) */
  double p;  /* two-sided p-value */
  int exact; /* 1: p from the exact (permutation) distribution */
  int ties;  /* 1: the pooled sample holds equal values */
} pp_mw_result;

/* Two-sided Mann-Whitney U test of x against y (both sorted, n, m >= 1).
 * The exact distribution is the permutation distribution of the rank sum
 * (with midranks when there are ties), computed by dynamic programming.
 * Returns 0, or -1 when out of memory or a sample is empty. */
int pp_stat_mann_whitney(const double *x, size_t n, const double *y, size_t m,
                         pp_mw_result *r);

/* The fewest values per side (n = m) with which the exact two-sided
 * Mann-Whitney test can reach p <= alpha: the smallest n with
 * 2 / C(2n, n) <= alpha (4 at alpha 0.05: 3 per side give at best 0.1).
 * Capped at PP_STAT_ENOUGH. */
size_t pp_stat_mw_min_n(double alpha);

/* P(U <= k) under the null hypothesis, with no ties, for samples of n and m
 * values (n + m <= PP_STAT_EXACT_MAX_N); -1 when out of memory or too
 * large. */
double pp_stat_mw_exact_cdf(size_t n, size_t m, double k);

/* Two-sample Kolmogorov-Smirnov statistic D = sup |F_x - F_y| (sorted
 * samples, n, m >= 1; 0 when either is empty). */
double pp_stat_ks_d(const double *x, size_t n, const double *y, size_t m);
/* Its two-sided p-value P(D >= d) under the null hypothesis. Exact while
 * n m <= PP_STAT_KS_EXACT_MAX_NM (lattice paths that keep |i/n - j/m| < d,
 * counted in O(n m) with normalised counts; for continuous data, and
 * conservative with ties); otherwise pp_stat_ks_p_asymptotic. */
double pp_stat_ks_p(double d, size_t n, size_t m);
#define PP_STAT_KS_EXACT_MAX_NM 1000000
/* The asymptotic Kolmogorov distribution with Stephens' small-sample
 * correction: Q((sqrt(ne) + 0.12 + 0.11/sqrt(ne)) d), ne = n m / (n + m). */
double pp_stat_ks_p_asymptotic(double d, size_t n, size_t m);
/* The exact p-value (any n m; O(n m) time, O(m) memory); -1 when out of
 * memory. */
double pp_stat_ks_p_exact(double d, size_t n, size_t m);
/* Kolmogorov's survival function Q(lambda) = 2 sum (-1)^(k-1)
 * exp(-2 k^2 lambda^2). */
double pp_stat_kolmogorov_q(double lambda);

typedef struct pp_hl_result {
  double shift;      /* median of the n m differences y_j - x_i */
  double lo, hi;     /* confidence bounds; -inf / +inf when the samples are
                        too small for the requested confidence */
  double confidence; /* coverage actually achieved (>= the one asked for
                        when exact; nominal under the normal
                        approximation) */
  size_t rank_lo;    /* 1-based rank of lo among the sorted differences
                        (0 when unbounded); hi has rank n m + 1 - rank_lo */
} pp_hl_result;

/* Hodges-Lehmann estimate of the shift y - x and its distribution-free
 * confidence interval at level 1 - alpha: the differences of ranks C and
 * n m + 1 - C, where C - 1 is the lower alpha/2 critical value of U (exact
 * for small samples, normal approximation otherwise). The order statistics
 * are found exactly without materialising the n m differences (bisection
 * over the doubles with an O(n + m) count per step), so any size works in
 * O(64 (n + m)) per statistic. Returns 0, or -1 when a sample is empty or
 * out of memory. */
int pp_stat_hodges_lehmann(const double *x, size_t n, const double *y, size_t m,
                           double alpha, pp_hl_result *r);

/* The k-th smallest (1-based, 1 <= k <= n m) of the differences y_j - x_i
 * of two sorted samples. */
double pp_stat_diff_kth(const double *x, size_t n, const double *y, size_t m,
                        size_t k);

/* Is the upper tail heavier on one side? Counts the values of x and of y
 * above the q-quantile of the pooled sample (x, y sorted) and tests the
 * 2x2 table with Fisher's exact test (two-sided: twice the smaller tail of
 * the hypergeometric distribution, at most 1). *kx and *ky (may be NULL)
 * get the counts. 1 when nothing lies above the quantile; -1 when out of
 * memory. */
double pp_stat_tail_p(const double *x, size_t n, const double *y, size_t m,
                      double q, size_t *kx, size_t *ky);

/* ---- the regression decision of `pipeprof diff` (docs/diff.md) ---- */

/* Values per side from which a non-significant result is "no change". */
#define PP_STAT_ENOUGH 20

typedef enum pp_verdict {
  PP_VERDICT_WORSE = 0,     /* significantly larger (slower) */
  PP_VERDICT_BETTER = 1,    /* significantly smaller (faster) */
  PP_VERDICT_NO_CHANGE = 2, /* no change of at least the threshold */
  PP_VERDICT_NEED_MORE = 3  /* undecided: see pp_compare.need */
} pp_verdict;

typedef struct pp_compare {
  size_t nb, nn;            /* values per side */
  double base_med, new_med; /* medians */
  double base_p99, new_p99; /* p99 (or the median of per-run p99s) */
  double rel_med, rel_p99;  /* (new - base) / |base|; NaN if base 0 */
  pp_mw_result mw;
  double ks_d, p_ks;
  double p;                         /* min(mw.p, p_ks) */
  double p_tail;                    /* pp_stat_tail_p above the pooled p99 */
  size_t tail_b, tail_n;            /* values above the pooled p99 */
  pp_hl_result hl;                  /* shift new - base */
  double rel_shift, rel_lo, rel_hi; /* hl relative to |base median| */
  pp_verdict verdict;
  int by_p99;  /* worse/better decided by the p99 (only
                  KS-significant spread change) */
  size_t need; /* NEED_MORE: values per side that would
                  decide (<= PP_STAT_ENOUGH) */
} pp_compare;

/* Compare base and cur (sorted, nb, nn >= 1) and decide:
 *  - worse / better when p <= alpha and |rel_med| >= threshold, by the
 *    sign of rel_med;
 *  - otherwise worse / better by the sign of rel_p99 when only KS is
 *    significant (p_ks <= alpha < mw.p), |rel_med| < threshold,
 *    |rel_p99| >= threshold, and the tail itself differs in the same
 *    direction (p_tail <= alpha, the side with the larger p99 holds the
 *    larger share above the pooled p99): a change of spread or tail that
 *    the median does not show, guarded against a noisy p99;
 *  - otherwise no change when both sides have PP_STAT_ENOUGH values or the
 *    shift's confidence interval lies within +-threshold of the base
 *    median;
 *  - otherwise need more samples, with the estimated values per side.
 * base_p99 / new_p99 (sorted, may be NULL): per-run p99 values whose
 * median gives the p99 columns; NULL: the 0.99 quantile of the samples.
 * Returns 0, or -1 when a side is empty or out of memory. */
int pp_stat_compare(const double *base, size_t nb, const double *cur, size_t nn,
                    const double *base_p99, size_t nb99, const double *new_p99,
                    size_t nn99, double threshold, double alpha, pp_compare *c);

#endif /* PP_STAT_TESTS_H */
