/* SPDX-License-Identifier: MIT */
/*
 * GPU zones and device memory pools of a trace (pp_analyze_gpu).
 *
 * GPU zones: in the model's order, by track (device, stream) then start;
 * one track per device and stream; per-site statistics as for CPU zones (a
 * GPU zone's self time is its duration: work on a stream does not nest);
 * each zone is tied (pp_analysis.gpu) to the innermost CPU zone open on its
 * launching thread at launch time;
 * the library's own counts (resolved, dropped by reason, unresolved at
 * shutdown, calibration error bound) come from META gpu_zones.*.
 *
 * Device memory pools are analysed by their own stream (pools.c), called
 * from pp_analyze_gpu; their release is here with the GPU zones'.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../format/pptrace.h"
#include "../internal.h"
#include "analysis.h"
#include "analyze.h"
#include "pipeline.h"
#include "pools.h"

void pp_gpu_stats_free(pp_profile *p) {
  for (size_t i = 0; i < p->gpu.nzones; i++) {
    pp_hist_free(&p->gpu.zones[i].hist);
  }
  pp__free(p->gpu.zones);
  pp__free(p->gpu.tracks);
  memset(&p->gpu, 0, sizeof p->gpu);
  for (size_t i = 0; i < p->npools; i++)
    pp__free(p->pools[i].levels);
  pp__free(p->pools);
  p->pools = NULL;
  p->npools = 0;
}

/* ---- GPU zones ---------------------------------------------------------- */

static int64_t meta_i64(const pp_trace *t, const char *key) {
  const char *v = pp_trace_meta(t, key);
  if (!v)
    return -1;
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  return end != v && !*end && !errno && x >= 0 ? (int64_t)x : -1;
}

static int cmp_zone_total(const void *a, const void *b) {
  const pp_zone_stats *x = a, *y = b;
  if (x->total_ns != y->total_ns)
    return x->total_ns > y->total_ns ? -1 : 1;
  return x->loc < y->loc ? -1 : x->loc > y->loc;
}

static int cmp_track(const void *a, const void *b) {
  const pp_gpu_track *x = a, *y = b;
  if (x->device != y->device)
    return x->device < y->device ? -1 : 1;
  return x->stream < y->stream ? -1 : x->stream > y->stream;
}

/* A stats-mode file: the same statistics from the writer's aggregates
 * (a->gpu_agg, one per site and track, in site order): per site, the
 * histograms merged, count and total summed, mean = total / count as in
 * trace mode; per track, the zone count and the launcher of the zone that
 * started first (ties: the lower site, as cmp_gpu orders them). */
static int gpu_zones_from_stats(pp_analysis *a) {
  pp_gpu_stats *g = &a->prof.gpu;
  size_t na = a->ngpu_agg;
  if (!na)
    return 0;
  size_t nz = 0;
  for (size_t i = 0; i < na; i++)
    nz += i == 0 || a->gpu_agg[i].loc != a->gpu_agg[i - 1].loc;
  g->zones = pp__calloc(nz, sizeof *g->zones);
  g->tracks = pp__calloc(na, sizeof *g->tracks);
  if (!g->zones || !g->tracks)
    return -1;
  pp__zone_stats_init(g->zones, nz);
  g->nzones = nz;
  pp_zone_stats *z = NULL;
  for (size_t i = 0; i < na; i++) {
    const pp_gpu_zone_agg *ag = &a->gpu_agg[i];
    if (!z || ag->loc != z->loc) {
      z = z ? z + 1 : g->zones;
      z->loc = ag->loc;
    }
    z->count = pp__add_sat_u64(z->count, ag->count);
    z->total_ns = pp__add_sat(z->total_ns, ag->total_ns);
    if (pp_hist_merge(&z->hist, &ag->hist) != 0)
      return -1;
    /* The track: found by a linear search, there are few. */
    size_t k = 0;
    while (k < g->ntracks && (g->tracks[k].device != ag->device ||
                              g->tracks[k].stream != ag->stream))
      k++;
    pp_gpu_track *tr = &g->tracks[k];
    if (k == g->ntracks) {
      g->ntracks++;
      tr->device = ag->device;
      tr->stream = ag->stream;
      tr->tid = ag->tid;
      tr->zones = 0;
      tr->first_ns = ag->start_ns;
    } else if (ag->start_ns < tr->first_ns) {
      tr->tid = ag->tid; /* earlier site on ties: sites come in order */
      tr->first_ns = ag->start_ns;
    }
    tr->zones = pp__add_sat_u64(tr->zones, ag->count);
  }
  for (size_t i = 0; i < nz; i++) {
    pp_zone_stats *s = &g->zones[i];
    s->self_ns = s->total_ns; /* device time has no children */
    s->min_ns = s->hist.count ? (int64_t)s->hist.min : 0;
    s->max_ns = s->hist.count ? (int64_t)s->hist.max : 0;
    s->mean_ns = s->count ? (double)s->total_ns / (double)s->count : 0;
    s->std_ns = pp_hist_stddev(&s->hist);
  }
  pp__sort(g->zones, nz, sizeof *g->zones, cmp_zone_total);
  pp__sort(g->tracks, g->ntracks, sizeof *g->tracks, cmp_track);
  return 0;
}

static int gpu_zones(pp_analysis *a) {
  const pp_trace *t = a->trace;
  pp_gpu_stats *g = &a->prof.gpu;
  g->unavailable = pp_trace_meta(t, "gpu_zones.unavailable");
  g->resolved = meta_i64(t, "gpu_zones.resolved");
  g->unresolved = meta_i64(t, "gpu_zones.unresolved");
  g->pool_exhausted = meta_i64(t, "gpu_zones.dropped.pool_exhausted");
  g->no_context = meta_i64(t, "gpu_zones.dropped.no_context");
  g->record_failed = meta_i64(t, "gpu_zones.dropped.record_failed");
  g->unavailable_calls = meta_i64(t, "gpu_zones.dropped.unavailable");
  g->query_failed = meta_i64(t, "gpu_zones.dropped.query_failed");
  g->calib_error_ns = meta_i64(t, "gpu_zones.calib_error_ns");
  g->not_aggregated = t->from_stats ? a->gpu_agg_lost : -1;
  g->used =
      t->ngpu > 0 || a->ngpu_agg > 0 || g->unavailable || g->resolved >= 0;
  if (a->ngpu_agg) /* stats mode since 1.3 (1.2 wrote GPU_ZONE events) */
    return gpu_zones_from_stats(a);
  if (!t->ngpu)
    return 0;
  if (!(a->gpu = pp__calloc(t->ngpu, sizeof *a->gpu)))
    return -1;
  /* Tracks. */
  size_t nt = 0;
  for (size_t i = 0; i < t->ngpu; i++)
    if (i == 0 || t->gpu[i].device != t->gpu[i - 1].device ||
        t->gpu[i].stream != t->gpu[i - 1].stream)
      nt++;
  g->tracks = pp__calloc(nt, sizeof *g->tracks);
  if (!g->tracks)
    return -1;
  for (size_t i = 0; i < t->ngpu; i++) {
    const pp_gpu_zone_rec *z = &t->gpu[i];
    pp_gpu_zone_place *at = &a->gpu[i];
    if (i == 0 || z->device != t->gpu[i - 1].device ||
        z->stream != t->gpu[i - 1].stream) {
      pp_gpu_track *k = &g->tracks[g->ntracks++];
      k->device = z->device;
      k->stream = z->stream;
      k->tid = z->tid;
      k->first_ns = z->start;
    }
    at->track = (uint32_t)(g->ntracks - 1);
    g->tracks[at->track].zones++;
    at->cpu_zone = pp_zone_enclosing(a, pp_trace_thread_index(t, z->tid), z->launch);
  }
  /* Per-site statistics. */
  uint32_t *slot = pp__malloc(t->nlocs * sizeof *slot);
  if (!slot)
    return -1;
  for (size_t i = 0; i < t->nlocs; i++)
    slot[i] = UINT32_MAX;
  size_t n = 0;
  for (size_t i = 0; i < t->ngpu; i++)
    if (t->gpu[i].loc < t->nlocs && slot[t->gpu[i].loc] == UINT32_MAX)
      slot[t->gpu[i].loc] = (uint32_t)n++;
  g->zones = pp__calloc(n ? n : 1, sizeof *g->zones);
  if (!g->zones) {
    pp__free(slot);
    return -1;
  }
  g->nzones = n;
  pp__zone_stats_init(g->zones, n);
  for (size_t i = 0; i < t->ngpu; i++) {
    const pp_gpu_zone_rec *z = &t->gpu[i];
    if (z->loc >= t->nlocs)
      continue;
    pp_zone_stats *s = &g->zones[slot[z->loc]];
    int64_t d;
    if (__builtin_sub_overflow(z->end, z->start, &d) || d < 0)
      d = 0;
    s->loc = z->loc;
    pp__zone_stats_add(s, d, d); /* device time has no children */
  }
  pp__free(slot);
  pp__zone_stats_finish(g->zones, n);
  pp__sort(g->zones, n, sizeof *g->zones, cmp_zone_total);
  return 0;
}

int pp_analyze_gpu(pp_analysis *a) {
  pp_gpu_stats_free(&a->prof);
  pp__free(a->gpu);
  a->gpu = NULL;
  if (gpu_zones(a) != 0 || pp__pools_analyze(a) != 0) {
    pp_gpu_stats_free(&a->prof);
    return -1;
  }
  return 0;
}
