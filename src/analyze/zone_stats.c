/* SPDX-License-Identifier: MIT */
/*
 * Per-site zone statistics shared by CPU zones, ranges and GPU zones:
 * count, total, self, extremes, moments and histograms (analyze.h).
 */
#include <math.h>

#include "analyze/analyze.h"
#include "internal.h"

void pp__zone_stats_init(pp_zone_stats *zs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    pp_hist_init(&zs[i].hist);
    zs[i].min_ns = INT64_MAX;
    zs[i].max_ns = INT64_MIN;
  }
}

void pp__zone_stats_finish(pp_zone_stats *zs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!zs[i].count)
      continue;
    zs[i].mean_ns = (double)zs[i].total_ns / (double)zs[i].count;
    zs[i].std_ns = sqrt(zs[i].std_ns / (double)zs[i].count);
  }
}

void pp__zone_stats_add(pp_zone_stats *zs, int64_t d, int64_t self) {
  zs->count++;
  zs->total_ns = pp__add_sat(zs->total_ns, d);
  zs->self_ns = pp__add_sat(zs->self_ns, self);
  if (d < zs->min_ns)
    zs->min_ns = d;
  if (d > zs->max_ns)
    zs->max_ns = d;
  /* Welford; std_ns holds the sum of squared deviations for now. */
  double delta = (double)d - zs->mean_ns;
  zs->mean_ns += delta / (double)zs->count;
  zs->std_ns += delta * ((double)d - zs->mean_ns);
  pp_hist_record(&zs->hist, (uint64_t)d);
}

