/* SPDX-License-Identifier: MIT */
/*
 * Two-sample statistics behind `pipeprof diff`: quantiles, Mann-Whitney U
 * (exact permutation distribution of the rank sum by dynamic programming
 * for small samples, normal approximation with tie and continuity
 * corrections otherwise), the Kolmogorov-Smirnov two-sample statistic with
 * its exact (lattice paths) or asymptotic (Kolmogorov, Stephens'
 * correction) p-value, Fisher's exact test on the tails, the
 * Hodges-Lehmann shift with its distribution-free confidence interval, and
 * the verdict of `pipeprof diff`. The formulas are the textbook ones
 * (Hollander and Wolfe, Nonparametric Statistical Methods; Stephens 1970;
 * Hodges 1957 for the exact two-sample KS); contracts are in
 * stat_tests.h, the rules in docs/diff.md.
 */
#include "analyze/stat_tests.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void pp_stat_sort(double *v, size_t n) {
  if (n > 1)
    qsort(v, n, sizeof *v, cmp_double);
}

double pp_stat_quantile(const double *s, size_t n, double q) {
  if (!n)
    return NAN;
  if (!(q > 0))
    return s[0];
  if (q >= 1)
    return s[n - 1];
  double h = (double)(n - 1) * q;
  size_t i = (size_t)h;
  if (i + 1 >= n)
    return s[n - 1];
  double f = h - (double)i;
  return s[i] + f * (s[i + 1] - s[i]);
}

double pp_stat_median(const double *s, size_t n) {
  if (!n)
    return NAN;
  if (n % 2)
    return s[n / 2];
  return s[n / 2 - 1] + (s[n / 2] - s[n / 2 - 1]) / 2;
}

void pp_stat_median_interval(const double *s, size_t n, double *lo,
                             double *hi) {
  if (!n) {
    *lo = *hi = NAN;
    return;
  }
  /* the largest k with P[X < k] <= 0.025, X ~ Binomial(n, 1/2) */
  size_t k = 0;
  double cdf = 0, pk = pow(0.5, (double)n); /* P[X = 0] */
  for (size_t j = 0; j < n; j++) {
    if (cdf + pk > 0.025)
      break;
    cdf += pk;
    k = j + 1;
    pk = pk * (double)(n - j) / (double)(j + 1);
  }
  if (k < 1)
    k = 1;
  *lo = s[k - 1];
  *hi = s[n - k];
}

double pp_stat_norm_cdf(double z) { return 0.5 * erfc(-z / sqrt(2.0)); }

double pp_stat_norm_quantile(double p) {
  if (!(p > 0))
    return -INFINITY;
  if (p >= 1)
    return INFINITY;
  /* Bisection on the distribution function: called a handful of times per
   * diff, so simplicity beats speed; 200 halvings of [-40, 40] reach the
   * resolution of the doubles. */
  double lo = -40, hi = 40;
  for (int i = 0; i < 200 && hi - lo > 0; i++) {
    double mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi)
      break;
    if (pp_stat_norm_cdf(mid) < p)
      lo = mid;
    else
      hi = mid;
  }
  return lo + (hi - lo) / 2;
}

/* ---- exact rank-sum distribution --------------------------------------- */

/* counts[s] = number of k-subsets of the N items whose weights sum to s
 * (s = 0 .. *smax). Weights are non-negative integers (twice the midranks).
 * Returns a malloc'ed array or NULL when out of memory. */
static double *subset_sum_counts(const uint32_t *w, size_t nitems, size_t k,
                                 size_t *smax) {
  size_t total = 0;
  for (size_t i = 0; i < nitems; i++)
    total += w[i];
  size_t width = total + 1;
  double *dp = pp__calloc((k + 1) * width, sizeof *dp);
  if (!dp)
    return NULL;
  dp[0] = 1;
  for (size_t i = 0; i < nitems; i++) {
    size_t jmax = i + 1 < k ? i + 1 : k;
    for (size_t j = jmax; j >= 1; j--) {
      double *row = dp + j * width, *prev = dp + (j - 1) * width;
      for (size_t s = total; s >= w[i]; s--) {
        row[s] += prev[s - w[i]];
        if (s == 0)
          break;
      }
    }
  }
  double *out = pp__malloc(width * sizeof *out);
  if (out)
    memcpy(out, dp + k * width, width * sizeof *out);
  pp__free(dp);
  *smax = total;
  return out;
}

/* Null distribution of U (no ties) for n and m values: counts[u], u = 0 ..
 * n m, from the rank sums of the smaller side. */
static double *u_counts(size_t n, size_t m, double *ways) {
  size_t nitems = n + m, k = n < m ? n : m;
  uint32_t *w = pp__malloc(nitems * sizeof *w);
  if (!w)
    return NULL;
  for (size_t i = 0; i < nitems; i++)
    w[i] = (uint32_t)(i + 1);
  size_t smax;
  double *c = subset_sum_counts(w, nitems, k, &smax);
  pp__free(w);
  if (!c)
    return NULL;
  /* U = R - k (k + 1) / 2 ranges over 0 .. n m. */
  size_t base = k * (k + 1) / 2, nm = n * m;
  double *u = pp__calloc(nm + 1, sizeof *u);
  if (!u) {
    pp__free(c);
    return NULL;
  }
  double sum = 0;
  for (size_t i = 0; i <= nm && base + i <= smax; i++) {
    u[i] = c[base + i];
    sum += u[i];
  }
  pp__free(c);
  *ways = sum;
  return u;
}

double pp_stat_mw_exact_cdf(size_t n, size_t m, double k) {
  if (!n || !m || n + m > PP_STAT_EXACT_MAX_N)
    return -1;
  double ways;
  double *u = u_counts(n, m, &ways);
  if (!u)
    return -1;
  double acc = 0;
  for (size_t i = 0; i <= n * m && (double)i <= k; i++)
    acc += u[i];
  pp__free(u);
  return acc / ways;
}

size_t pp_stat_mw_min_n(double alpha) {
  double c = 2; /* C(2n, n) */
  for (size_t n = 1; n < PP_STAT_ENOUGH; n++) {
    /* C(2n, n) = C(2n - 2, n - 1) (2n - 1) 2n / n^2 */
    if (n > 1)
      c = c * (double)(2 * n - 1) * (double)(2 * n) / ((double)n * (double)n);
    if (2 / c <= alpha)
      return n;
  }
  return PP_STAT_ENOUGH;
}

/* ---- Mann-Whitney U ----------------------------------------------------- */

static int use_exact(size_t n, size_t m) {
  size_t small = n < m ? n : m;
  return small < PP_STAT_MW_EXACT_MIN && n + m <= PP_STAT_EXACT_MAX_N;
}

int pp_stat_mann_whitney(const double *x, size_t n, const double *y, size_t m,
                         pp_mw_result *r) {
  memset(r, 0, sizeof *r);
  r->p = 1;
  if (!n || !m)
    return -1;
  size_t nitems = n + m;
  int exact = use_exact(n, m);
  int x_small = n <= m;
  uint32_t *w = NULL;
  if (exact) {
    w = pp__malloc(nitems * sizeof *w);
    if (!w)
      return -1;
  }
  /* Walk the merged order in groups of equal values: a group at positions
   * pos + 1 .. pos + t gets the midrank pos + (t + 1) / 2. */
  double rank_x = 0, tie_sum = 0;
  uint64_t w_obs = 0;
  size_t i = 0, j = 0, pos = 0;
  while (i < n || j < m) {
    double v = i < n && (j >= m || x[i] <= y[j]) ? x[i] : y[j];
    size_t cx = 0, cy = 0;
    while (i < n && x[i] == v) {
      i++;
      cx++;
    }
    while (j < m && y[j] == v) {
      j++;
      cy++;
    }
    size_t t = cx + cy;
    double mid = (double)pos + (double)(t + 1) / 2;
    rank_x += (double)cx * mid;
    if (t > 1) {
      r->ties = 1;
      tie_sum += (double)t * (double)t * (double)t - (double)t;
    }
    if (exact) {
      uint32_t tw = (uint32_t)(2 * pos + t + 1); /* twice the midrank */
      for (size_t k = 0; k < t; k++)
        w[pos + k] = tw;
      w_obs += (uint64_t)(x_small ? cx : cy) * tw;
    }
    pos += t;
  }
  double dn = (double)n, dm = (double)m, nm = dn * dm;
  r->u = rank_x - dn * (dn + 1) / 2;
  if (exact) {
    size_t smax;
    double *c = subset_sum_counts(w, nitems, x_small ? n : m, &smax);
    pp__free(w);
    if (!c)
      return -1;
    double lo = 0, hi = 0, all = 0;
    for (size_t s = 0; s <= smax; s++) {
      all += c[s];
      if (s <= w_obs)
        lo += c[s];
      if (s >= w_obs)
        hi += c[s];
    }
    pp__free(c);
    double p = 2 * (lo < hi ? lo : hi) / all;
    r->p = p < 1 ? p : 1;
    r->exact = 1;
    return 0;
  }
  double big_n = dn + dm;
  double var = nm / 12 * ((big_n + 1) - tie_sum / (big_n * (big_n - 1)));
  if (!(var > 0)) {
    r->p = 1; /* every value equal */
    return 0;
  }
  double d = r->u - nm / 2, ad = fabs(d) - 0.5;
  r->z = ad > 0 ? (d > 0 ? ad : -ad) / sqrt(var) : 0;
  double p = erfc(fabs(r->z) / sqrt(2.0));
  r->p = p < 1 ? p : 1;
  return 0;
}

/* ---- Kolmogorov-Smirnov -------------------------------------------------- */

double pp_stat_ks_d(const double *x, size_t n, const double *y, size_t m) {
  if (!n || !m)
    return 0;
  size_t i = 0, j = 0;
  double d = 0;
  /* After both samples pass a value, |F_x - F_y| is evaluated there; once
   * one sample is exhausted the gap only shrinks. */
  while (i < n && j < m) {
    double v = x[i] <= y[j] ? x[i] : y[j];
    while (i < n && x[i] == v)
      i++;
    while (j < m && y[j] == v)
      j++;
    double g = fabs((double)i / (double)n - (double)j / (double)m);
    if (g > d)
      d = g;
  }
  return d;
}

double pp_stat_kolmogorov_q(double lambda) {
  if (!(lambda > 0))
    return 1;
  double q;
  if (lambda < 1.18) {
    /* The Jacobi-theta form converges fast for small lambda:
     * P(K <= l) = sqrt(2 pi) / l * sum exp(-(2k-1)^2 pi^2 / (8 l^2)). */
    double s = 0, c = M_PI * M_PI / (8 * lambda * lambda);
    for (int k = 1; k <= 50; k++) {
      double t = exp(-(double)((2 * k - 1) * (2 * k - 1)) * c);
      s += t;
      if (t < 1e-17 * s)
        break;
    }
    q = 1 - sqrt(2 * M_PI) / lambda * s;
  } else {
    double s = 0;
    for (int k = 1; k <= 100; k++) {
      double t = exp(-2.0 * k * k * lambda * lambda);
      s += k % 2 ? t : -t;
      if (t < 1e-17)
        break;
    }
    q = 2 * s;
  }
  return q < 0 ? 0 : q > 1 ? 1 : q;
}

double pp_stat_ks_p_asymptotic(double d, size_t n, size_t m) {
  if (!n || !m || !(d > 0))
    return 1;
  double en = sqrt((double)n * (double)m / ((double)n + (double)m));
  return pp_stat_kolmogorov_q((en + 0.12 + 0.11 / en) * d);
}

double pp_stat_ks_p_exact(double d, size_t n, size_t m) {
  if (!n || !m || !(d > 0))
    return 1;
  /* D is |i m - j n| / (n m) for integers i, j: compare in integers. A
   * lattice point (i, j) (i values of x and j of y taken) is allowed when
   * |i m - j n| < K. w[j] holds paths(i, j) / C(i + j, i), the share of
   * the monotone paths to (i, j) that stayed allowed, which obeys
   * w(i, j) = (i w(i-1, j) + j w(i, j-1)) / (i + j) and stays in [0, 1]. */
  double nm = (double)n * (double)m;
  double kd = floor(d * nm + 0.5);
  double *w = pp__malloc((m + 1) * sizeof *w);
  if (!w)
    return -1;
  for (size_t i = 0; i <= n; i++)
    for (size_t j = 0; j <= m; j++) {
      double gap = fabs((double)i * (double)m - (double)j * (double)n);
      double v;
      if (gap >= kd)
        v = 0;
      else if (i == 0 && j == 0)
        v = 1;
      else if (i == 0)
        v = w[j - 1];
      else if (j == 0)
        v = w[0];
      else
        v = ((double)i * w[j] + (double)j * w[j - 1]) / (double)(i + j);
      w[j] = v;
    }
  double p = 1 - w[m];
  pp__free(w);
  return p < 0 ? 0 : p > 1 ? 1 : p;
}

double pp_stat_ks_p(double d, size_t n, size_t m) {
  if ((double)n * (double)m <= PP_STAT_KS_EXACT_MAX_NM) {
    double p = pp_stat_ks_p_exact(d, n, m);
    if (p >= 0)
      return p;
  }
  return pp_stat_ks_p_asymptotic(d, n, m);
}

/* ---- Hodges-Lehmann ---------------------------------------------------- */

/* Doubles mapped to unsigned keys in the same order (finite values). */
static uint64_t dkey(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return (b >> 63) ? ~b : b | (UINT64_C(1) << 63);
}

static double dval(uint64_t k) {
  uint64_t b = (k >> 63) ? k & ~(UINT64_C(1) << 63) : ~k;
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

/* Number of pairs with y_j - x_i <= v. For ascending x_i the qualifying j
 * form a growing prefix of y (rounded subtraction is monotone in each
 * argument), so one pass of two pointers counts them. */
static uint64_t count_le(const double *x, size_t n, const double *y, size_t m,
                         double v) {
  uint64_t c = 0;
  size_t j = 0;
  for (size_t i = 0; i < n; i++) {
    while (j < m && y[j] - x[i] <= v)
      j++;
    c += j;
  }
  return c;
}

double pp_stat_diff_kth(const double *x, size_t n, const double *y, size_t m,
                        size_t k) {
  if (!n || !m)
    return NAN;
  uint64_t lo = dkey(y[0] - x[n - 1]), hi = dkey(y[m - 1] - x[0]);
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (count_le(x, n, y, m, dval(mid)) >= (uint64_t)k)
      hi = mid;
    else
      lo = mid + 1;
  }
  return dval(lo);
}

int pp_stat_hodges_lehmann(const double *x, size_t n, const double *y, size_t m,
                           double alpha, pp_hl_result *r) {
  memset(r, 0, sizeof *r);
  r->shift = r->lo = r->hi = NAN;
  if (!n || !m)
    return -1;
  size_t nm = n * m;
  if (nm % 2)
    r->shift = pp_stat_diff_kth(x, n, y, m, nm / 2 + 1);
  else {
    double a = pp_stat_diff_kth(x, n, y, m, nm / 2);
    double b = pp_stat_diff_kth(x, n, y, m, nm / 2 + 1);
    r->shift = a + (b - a) / 2;
  }
  /* C = 1 + the largest c with P(U <= c) <= alpha / 2. */
  size_t c_rank = 0;
  double conf = 1 - alpha;
  if (use_exact(n, m)) {
    double ways;
    double *u = u_counts(n, m, &ways);
    if (!u)
      return -1;
    double acc = 0;
    for (size_t c = 0; c <= nm / 2; c++) {
      acc += u[c];
      if (acc / ways > alpha / 2)
        break;
      c_rank = c + 1;
      conf = 1 - 2 * acc / ways;
    }
    pp__free(u);
  } else {
    double z = pp_stat_norm_quantile(1 - alpha / 2);
    double c = (double)nm / 2 - z * sqrt((double)nm * (double)(n + m + 1) / 12);
    c_rank = c >= 1 ? (size_t)floor(c) : 0;
  }
  if (c_rank == 0 || c_rank > nm + 1 - c_rank) {
    r->lo = -INFINITY;
    r->hi = INFINITY;
    r->confidence = 1;
    return 0;
  }
  r->rank_lo = c_rank;
  r->confidence = conf;
  r->lo = pp_stat_diff_kth(x, n, y, m, c_rank);
  r->hi = pp_stat_diff_kth(x, n, y, m, nm + 1 - c_rank);
  return 0;
}

/* ---- tails ------------------------------------------------------------------
 */

double pp_stat_tail_p(const double *x, size_t n, const double *y, size_t m,
                      double q, size_t *kx, size_t *ky) {
  if (kx)
    *kx = 0;
  if (ky)
    *ky = 0;
  if (!n || !m)
    return 1;
  size_t nn = n + m;
  double *pool = pp__malloc(nn * sizeof *pool);
  if (!pool)
    return -1;
  size_t i = 0, j = 0, k = 0;
  while (i < n || j < m)
    pool[k++] = j >= m || (i < n && x[i] <= y[j]) ? x[i++] : y[j++];
  double thr = pp_stat_quantile(pool, nn, q);
  pp__free(pool);
  size_t ax = 0, ay = 0;
  for (size_t a = n; a > 0 && x[a - 1] > thr; a--)
    ax++;
  for (size_t a = m; a > 0 && y[a - 1] > thr; a--)
    ay++;
  if (kx)
    *kx = ax;
  if (ky)
    *ky = ay;
  size_t draws = ax + ay;
  if (!draws)
    return 1;
  /* Y = values of y among the `draws` largest: hypergeometric. Log weights
   * from the ratio P(t + 1) / P(t) = (m - t)(draws - t) / ((t + 1)(n -
   * draws + t + 1)), normalised over the support. */
  size_t lo = draws > n ? draws - n : 0, hi = draws < m ? draws : m;
  double lw = 0, maxw = 0;
  for (size_t t = lo; t <= hi; t++) {
    if (t > lo)
      lw += log((double)(m - t + 1) * (double)(draws - t + 1) /
                ((double)t * (double)(n - draws + t)));
    if (lw > maxw || t == lo)
      maxw = lw;
  }
  double all = 0, below = 0, above = 0;
  lw = 0;
  for (size_t t = lo; t <= hi; t++) {
    if (t > lo)
      lw += log((double)(m - t + 1) * (double)(draws - t + 1) /
                ((double)t * (double)(n - draws + t)));
    double w = exp(lw - maxw);
    all += w;
    if (t <= ay)
      below += w;
    if (t >= ay)
      above += w;
  }
  double p = 2 * (below < above ? below : above) / all;
  return p < 1 ? p : 1;
}

/* ---- the decision -------------------------------------------------------- */

static double rel_change(double from, double to) {
  if (!(fabs(from) > 0) || !isfinite(from) || !isfinite(to))
    return NAN;
  return (to - from) / fabs(from);
}

int pp_stat_compare(const double *base, size_t nb, const double *cur, size_t nn,
                    const double *base_p99, size_t nb99, const double *new_p99,
                    size_t nn99, double threshold, double alpha,
                    pp_compare *c) {
  memset(c, 0, sizeof *c);
  c->nb = nb;
  c->nn = nn;
  c->rel_shift = c->rel_lo = c->rel_hi = NAN;
  if (!nb || !nn)
    return -1;
  c->base_med = pp_stat_median(base, nb);
  c->new_med = pp_stat_median(cur, nn);
  c->base_p99 = base_p99 ? pp_stat_median(base_p99, nb99)
                         : pp_stat_quantile(base, nb, 0.99);
  c->new_p99 =
      new_p99 ? pp_stat_median(new_p99, nn99) : pp_stat_quantile(cur, nn, 0.99);
  c->rel_med = rel_change(c->base_med, c->new_med);
  c->rel_p99 = rel_change(c->base_p99, c->new_p99);
  if (pp_stat_mann_whitney(base, nb, cur, nn, &c->mw) != 0)
    return -1;
  c->ks_d = pp_stat_ks_d(base, nb, cur, nn);
  c->p_ks = pp_stat_ks_p(c->ks_d, nb, nn);
  c->p = c->mw.p < c->p_ks ? c->mw.p : c->p_ks;
  c->p_tail = pp_stat_tail_p(base, nb, cur, nn, 0.99, &c->tail_b, &c->tail_n);
  if (c->p_tail < 0 ||
      pp_stat_hodges_lehmann(base, nb, cur, nn, alpha, &c->hl) != 0)
    return -1;
  double den = fabs(c->base_med);
  if (den > 0) {
    c->rel_shift = c->hl.shift / den;
    c->rel_lo = c->hl.lo / den;
    c->rel_hi = c->hl.hi / den;
  }

  double thr = threshold;
  int med_big =
      isfinite(c->rel_med) && fabs(c->rel_med) >= thr && c->rel_med != 0;
  int dir = 0;
  if (c->p <= alpha && med_big) {
    dir = c->rel_med > 0 ? 1 : -1;
  } else if (c->p_ks <= alpha && c->mw.p > alpha && !med_big &&
             isfinite(c->rel_p99) && fabs(c->rel_p99) >= thr &&
             c->rel_p99 != 0) {
    /* Only KS sees a difference and the p99 moved: a spread change, if the
     * tail itself is heavier on the side whose p99 grew. */
    int up = c->rel_p99 > 0;
    double share_b = (double)c->tail_b / (double)nb;
    double share_n = (double)c->tail_n / (double)nn;
    if (c->p_tail <= alpha && (up ? share_n > share_b : share_b > share_n)) {
      dir = up ? 1 : -1;
      c->by_p99 = 1;
    }
  }
  if (dir) {
    c->verdict = dir > 0 ? PP_VERDICT_WORSE : PP_VERDICT_BETTER;
    return 0;
  }
  int enough = nb >= PP_STAT_ENOUGH && nn >= PP_STAT_ENOUGH;
  int ci_within = isfinite(c->rel_lo) && isfinite(c->rel_hi) &&
                  c->rel_lo >= -thr && c->rel_hi <= thr;
  if (enough || ci_within) {
    c->verdict = PP_VERDICT_NO_CHANGE;
    return 0;
  }
  /* PP_STAT_ENOUGH values per side always decide; fewer do when the
   * interval, shrinking as 1 / sqrt(n), would fit within +-threshold
   * around the current estimate. */
  size_t have = nb < nn ? nb : nn, need = PP_STAT_ENOUGH;
  double e = fabs(c->rel_shift), h = (c->rel_hi - c->rel_lo) / 2;
  if (isfinite(e) && isfinite(h) && e < thr && h > 0) {
    double k = h / (thr - e);
    double est = ceil((double)have * k * k);
    if (est < (double)need)
      need = (size_t)est;
  }
  if (need <= have)
    need = have + 1;
  c->verdict = PP_VERDICT_NEED_MORE;
  c->need = need;
  return 0;
}
