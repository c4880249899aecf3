/* SPDX-License-Identifier: MIT */
/*
 * GPU zones and device memory pools of a trace (pp_analyze_gpu).
 *
 * GPU zones: sorted by track (device, stream) then start; one track per
 * device and stream; per-site statistics as for CPU zones (a GPU zone's self
 * time is its duration: work on a stream does not nest); each zone is tied
 * to the innermost CPU zone open on its launching thread at launch time;
 * the library's own counts (resolved, dropped by reason, unresolved at
 * shutdown, calibration error bound) come from META gpu_zones.*.
 *
 * Memory pools, per pool name and device, replaying MEM_* events of every
 * thread in time order: in use = bytes allocated and not freed (a free
 * takes the size its pointer was allocated with; a pointer allocated again
 * while live replaces the earlier allocation), reserved = the last
 * MEM_RESERVE figure. Definitions of every figure in docs/api.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../format/pptrace.h"
#include "../internal.h"
#include "analyze.h"
#include "pipeline.h"
#include "model.h"

void pp_gpu_stats_free(pp_profile *p) {
  for (size_t i = 0; i < p->gpu.nzones; i++) {
    pp_hist_free(&p->gpu.zones[i].hist);
    pp_hist_free(&p->gpu.zones[i].self_hist);
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

static int cmp_gpu(const void *a, const void *b) {
  const pp_gpu_zone_rec *x = a, *y = b;
  if (x->device != y->device)
    return x->device < y->device ? -1 : 1;
  if (x->stream != y->stream)
    return x->stream < y->stream ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->loc < y->loc ? -1 : x->loc > y->loc;
}

static int64_t meta_i64(const pp_trace *t, const char *key) {
  const char *v = pp_trace_meta(t, key);
  if (!v)
    return -1;
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  return end != v && !*end && !errno && x >= 0 ? (int64_t)x : -1;
}

static const pp_thread *thread_by_tid(const pp_trace *t, uint64_t tid) {
  for (size_t i = 0; i < t->nthreads; i++)
    if (t->threads[i].tid == tid)
      return &t->threads[i];
  return NULL;
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
 * (t->gpu_agg, one per site and track, in site order): per site, the
 * histograms merged, count and total summed, mean = total / count as in
 * trace mode; per track, the zone count and the launcher of the zone that
 * started first (ties: the lower site, as cmp_gpu orders them). */
static int gpu_zones_from_stats(pp_trace *t) {
  pp_gpu_stats *g = &t->prof.gpu;
  size_t na = t->ngpu_agg;
  if (!na)
    return 0;
  size_t nz = 0;
  for (size_t i = 0; i < na; i++)
    nz += i == 0 || t->gpu_agg[i].loc != t->gpu_agg[i - 1].loc;
  g->zones = pp__calloc(nz, sizeof *g->zones);
  g->tracks = pp__calloc(na, sizeof *g->tracks);
  if (!g->zones || !g->tracks)
    return -1;
  pp__zone_stats_init(g->zones, nz);
  g->nzones = nz;
  pp_zone_stats *z = NULL;
  for (size_t i = 0; i < na; i++) {
    const pp_gpu_zone_agg *a = &t->gpu_agg[i];
    if (!z || a->loc != z->loc) {
      z = z ? z + 1 : g->zones;
      z->loc = a->loc;
    }
    z->count = pp__add_sat_u64(z->count, a->count);
    z->total_ns = pp__add_sat(z->total_ns, a->total_ns);
    if (pp_hist_merge(&z->hist, &a->hist) != 0 ||
        pp_hist_merge(&z->self_hist, &a->hist) != 0)
      return -1;
    /* The track: found by a linear search, there are few. */
    size_t k = 0;
    while (k < g->ntracks && (g->tracks[k].device != a->device ||
                              g->tracks[k].stream != a->stream))
      k++;
    pp_gpu_track *tr = &g->tracks[k];
    if (k == g->ntracks) {
      g->ntracks++;
      tr->device = a->device;
      tr->stream = a->stream;
      tr->tid = a->tid;
      tr->zones = 0;
      tr->first_ns = a->start_ns;
    } else if (a->start_ns < tr->first_ns) {
      tr->tid = a->tid; /* earlier site on ties: sites come in order */
      tr->first_ns = a->start_ns;
    }
    tr->zones = pp__add_sat_u64(tr->zones, a->count);
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

static int gpu_zones(pp_trace *t) {
  pp_gpu_stats *g = &t->prof.gpu;
  g->unavailable = pp_trace_meta(t, "gpu_zones.unavailable");
  g->resolved = meta_i64(t, "gpu_zones.resolved");
  g->unresolved = meta_i64(t, "gpu_zones.unresolved");
  g->pool_exhausted = meta_i64(t, "gpu_zones.dropped.pool_exhausted");
  g->no_context = meta_i64(t, "gpu_zones.dropped.no_context");
  g->record_failed = meta_i64(t, "gpu_zones.dropped.record_failed");
  g->unavailable_calls = meta_i64(t, "gpu_zones.dropped.unavailable");
  g->query_failed = meta_i64(t, "gpu_zones.dropped.query_failed");
  g->calib_error_ns = meta_i64(t, "gpu_zones.calib_error_ns");
  g->not_aggregated = t->from_stats ? t->gpu_agg_lost : -1;
  g->used =
      t->ngpu > 0 || t->ngpu_agg > 0 || g->unavailable || g->resolved >= 0;
  if (t->ngpu_agg) /* stats mode since 1.3 (1.2 wrote GPU_ZONE events) */
    return gpu_zones_from_stats(t);
  if (!t->ngpu)
    return 0;
  pp__sort(t->gpu, t->ngpu, sizeof *t->gpu, cmp_gpu);
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
    pp_gpu_zone_rec *z = &t->gpu[i];
    if (i == 0 || z->device != t->gpu[i - 1].device ||
        z->stream != t->gpu[i - 1].stream) {
      pp_gpu_track *k = &g->tracks[g->ntracks++];
      k->device = z->device;
      k->stream = z->stream;
      k->tid = z->tid;
      k->first_ns = z->start;
    }
    z->track = (uint32_t)(g->ntracks - 1);
    g->tracks[z->track].zones++;
    const pp_thread *th = thread_by_tid(t, z->tid);
    z->cpu_zone = th ? pp_zone_enclosing(th, z->launch) : -1;
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

/* ---- memory pools ------------------------------------------------------- */

typedef struct mem_ref {
  const pp_event *ev;
  const char *name;
  uint32_t th;
  size_t seq;
} mem_ref;

static int cmp_mem(const void *a, const void *b) {
  const mem_ref *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  if (c)
    return c;
  if (pp_mem_device(x->ev) != pp_mem_device(y->ev))
    return pp_mem_device(x->ev) < pp_mem_device(y->ev) ? -1 : 1;
  if (x->ev->ts != y->ev->ts)
    return x->ev->ts < y->ev->ts ? -1 : 1;
  if (x->th != y->th)
    return x->th < y->th ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Live allocations: open addressing on the pointer (never 0 here: pointer
 * 0 is kept in a side slot). */
typedef struct live_map {
  uint64_t *key, *val;
  size_t cap, n;
  int has_zero;
  uint64_t zero_val;
} live_map;

static size_t h64(uint64_t k, size_t cap) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return (size_t)k & (cap - 1);
}

/* Slot of k, or of the empty slot where it would go. */
static size_t live_find(const live_map *m, uint64_t k) {
  size_t i = h64(k, m->cap);
  while (m->key[i] && m->key[i] != k)
    i = (i + 1) & (m->cap - 1);
  return i;
}

static int live_put(live_map *m, uint64_t k, uint64_t v, uint64_t *old,
                    int *had) {
  if (!k) {
    *had = m->has_zero;
    *old = m->zero_val;
    m->has_zero = 1;
    m->zero_val = v;
    return 0;
  }
  if ((m->n + 1) * 2 > m->cap) {
    size_t nc = m->cap ? m->cap * 2 : 64;
    live_map g = {pp__calloc(nc, 8), pp__calloc(nc, 8), nc, 0, 0, 0};
    if (!g.key || !g.val) {
      pp__free(g.key);
      pp__free(g.val);
      return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
      if (m->key[i]) {
        size_t j = live_find(&g, m->key[i]);
        g.key[j] = m->key[i];
        g.val[j] = m->val[i];
        g.n++;
      }
    pp__free(m->key);
    pp__free(m->val);
    m->key = g.key;
    m->val = g.val;
    m->cap = nc;
  }
  size_t i = live_find(m, k);
  *had = m->key[i] != 0;
  *old = m->val[i];
  if (!*had)
    m->n++;
  m->key[i] = k;
  m->val[i] = v;
  return 0;
}

/* Remove k; returns 1 and its value in *v when it was live. */
static int live_take(live_map *m, uint64_t k, uint64_t *v) {
  if (!k) {
    if (!m->has_zero)
      return 0;
    m->has_zero = 0;
    *v = m->zero_val;
    return 1;
  }
  if (!m->cap)
    return 0;
  size_t i = live_find(m, k);
  if (!m->key[i])
    return 0;
  *v = m->val[i];
  /* Backward-shift deletion keeps probe chains intact. */
  size_t j = i;
  for (;;) {
    m->key[i] = 0;
    for (;;) {
      j = (j + 1) & (m->cap - 1);
      if (!m->key[j]) {
        m->n--;
        return 1;
      }
      size_t home = h64(m->key[j], m->cap);
      /* Move j to i when its home is not cyclically within (i, j]. */
      if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
        break;
    }
    m->key[i] = m->key[j];
    m->val[i] = m->val[j];
    i = j;
  }
}

typedef struct level_seg {
  uint64_t level;
  int64_t dur;
} level_seg;

static int cmp_seg(const void *a, const void *b) {
  const level_seg *x = a, *y = b;
  return x->level < y->level ? -1 : x->level > y->level;
}

/* Time-weighted median of the levels in segs (sorted here). */
static uint64_t weighted_median(level_seg *segs, size_t n) {
  double total = 0; /* in doubles: durations may sum past int64 */
  for (size_t i = 0; i < n; i++)
    total += (double)segs[i].dur;
  if (!n || total <= 0)
    return 0;
  pp__sort(segs, n, sizeof *segs, cmp_seg);
  double acc = 0;
  for (size_t i = 0; i < n; i++) {
    acc += (double)segs[i].dur;
    if (2 * acc >= total)
      return segs[i].level;
  }
  return segs[n - 1].level;
}

/* One pool on one device: r[0..n) in time order. */
static int one_pool(pp_mem_pool_stats *ps, const mem_ref *r, size_t n,
                    int64_t t_start, int64_t t_end) {
  live_map m = {0};
  level_seg *segs = pp__malloc((n + 1) * sizeof *segs);
  ps->levels = pp__malloc(n * sizeof *ps->levels);
  if (!segs || !ps->levels) {
    pp__free(segs);
    return -1;
  }
  size_t nseg = 0;
  int64_t mid = t_start + pp__span(t_start, t_end) / 2;
  uint64_t level = 0, reserved = 0;
  int has_res = 0;
  double area = 0, unused_area = 0, unused_time = 0;
  int64_t first = r[0].ev->ts;
  int64_t prev = first;
  /* Level 0 from the middle of the run until the pool's first event. */
  if (first > mid)
    segs[nseg++] = (level_seg){0, pp__span(mid, first)};
  for (size_t i = 0; i <= n; i++) {
    int64_t ts = i < n ? r[i].ev->ts : (t_end > prev ? t_end : prev);
    int64_t dt = pp__span(prev, ts);
    if (dt > 0) {
      area += (double)level * (double)dt;
      if (has_res) {
        unused_area += ((double)reserved - (double)level) * (double)dt;
        unused_time += (double)dt;
      }
      int64_t from = prev > mid ? prev : mid;
      if (ts > from)
        segs[nseg++] = (level_seg){level, pp__span(from, ts)};
    }
    prev = ts;
    if (i == n)
      break;
    const pp_event *e = r[i].ev;
    uint64_t old;
    int had;
    if (e->type == PPT_EV_MEM_ALLOC) {
      ps->allocs++;
      uint64_t bytes = pp_mem_bytes(e);
      if (live_put(&m, e->v.id, bytes, &old, &had) != 0) {
        pp__free(segs);
        pp__free(m.key);
        pp__free(m.val);
        return -1;
      }
      if (had)
        level -= old <= level ? old : level;
      level += bytes;
    } else if (e->type == PPT_EV_MEM_FREE) {
      ps->frees++;
      if (live_take(&m, e->v.id, &old))
        level -= old <= level ? old : level;
      else
        ps->unmatched_frees++;
    } else {
      reserved = pp_mem_bytes(e);
      has_res = 1;
      ps->has_reserve = 1;
    }
    ps->levels[ps->nlevels++] = (pp_mem_level){ts, level, reserved};
    if (level > ps->peak || i == 0) {
      ps->peak = level;
      ps->peak_ts = ts;
      ps->reserved_at_peak = has_res ? reserved : 0;
    } else if (level == ps->peak && ts == ps->peak_ts) {
      /* A reservation recorded at the same instant as the watermark. */
      ps->reserved_at_peak = has_res ? reserved : 0;
    }
  }
  int64_t span = pp__span(first, prev);
  ps->mean_in_use = span > 0 ? area / (double)span : (double)level;
  ps->mean_unused = unused_time > 0 ? unused_area / unused_time : 0;
  ps->unused_at_peak = ps->has_reserve ? (int64_t)ps->reserved_at_peak -
                                             (int64_t)ps->peak
                                       : 0;
  ps->steady = weighted_median(segs, nseg);
  ps->final_in_use = level;
  ps->leaks = m.n + (m.has_zero ? 1 : 0);
  ps->leaked_bytes = m.has_zero ? m.zero_val : 0;
  for (size_t i = 0; i < m.cap; i++)
    if (m.key[i])
      ps->leaked_bytes += m.val[i];
  pp__free(segs);
  pp__free(m.key);
  pp__free(m.val);
  return 0;
}

static int mem_pools(pp_trace *t) {
  pp_profile *p = &t->prof;
  size_t n = 0;
  for (size_t i = 0; i < t->nthreads; i++)
    for (size_t j = 0; j < t->threads[i].nev; j++)
      if (ppt_is_mem(t->threads[i].ev[j].type))
        n++;
  if (!n)
    return 0;
  mem_ref *r = pp__malloc(n * sizeof *r);
  if (!r)
    return -1;
  size_t k = 0;
  for (size_t i = 0; i < t->nthreads; i++)
    for (size_t j = 0; j < t->threads[i].nev; j++) {
      const pp_event *e = &t->threads[i].ev[j];
      if (ppt_is_mem(e->type))
        r[k++] = (mem_ref){e, pp_trace_loc_name(t, e->loc), (uint32_t)i, j};
    }
  pp__sort(r, n, sizeof *r, cmp_mem);
  size_t groups = 0;
  for (size_t i = 0; i < n; i++)
    groups += i == 0 || strcmp(r[i].name, r[i - 1].name) != 0 ||
              pp_mem_device(r[i].ev) != pp_mem_device(r[i - 1].ev);
  p->pools = pp__calloc(groups, sizeof *p->pools);
  if (!p->pools) {
    pp__free(r);
    return -1;
  }
  int64_t t_end = p->t1;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && strcmp(r[j].name, r[i].name) == 0 &&
           pp_mem_device(r[j].ev) == pp_mem_device(r[i].ev))
      j++;
    pp_mem_pool_stats *ps = &p->pools[p->npools++];
    ps->loc = r[i].ev->loc;
    ps->device = pp_mem_device(r[i].ev);
    if (one_pool(ps, r + i, j - i, p->t0, t_end) != 0) {
      pp__free(r);
      return -1;
    }
    i = j;
  }
  pp__free(r);
  return 0;
}

int pp_analyze_gpu(pp_trace *t) {
  pp_gpu_stats_free(&t->prof);
  if (gpu_zones(t) != 0 || mem_pools(t) != 0) {
    pp_gpu_stats_free(&t->prof);
    return -1;
  }
  return 0;
}
