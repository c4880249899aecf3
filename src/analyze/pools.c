/* SPDX-License-Identifier: MIT */
/*
 * Device memory pools as a stream (pools.h): per pool name and device, the
 * MEM_* events of every thread in time order. In use = bytes allocated and
 * not freed (a free takes the size its pointer was allocated with; a
 * pointer allocated again while live replaces the earlier allocation),
 * reserved = the last MEM_RESERVE figure. Definitions of every figure in
 * docs/api.md; bounds and what they cost in docs/internals/streaming.md.
 *
 * Per pool the stream keeps running figures (counts, level, watermark,
 * time integrals), its live pointers (a table shared by the bound of all
 * pools) and a level series of bounded length; nothing grows with the
 * number of events.
 */
#include <stdlib.h>
#include <string.h>

#include "../format/pptrace.h"
#include "../internal.h"
#include "analysis.h"
#include "model/feed.h"
#include "pools.h"

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

/* A point of the level series: the events from ts to the next point's. */
typedef struct level_pt {
  int64_t ts;        /* its first event */
  uint64_t in_use;   /* the highest level after any of its events */
  uint64_t reserved; /* the highest reservation known then */
  double area;       /* level x time over its span, for the steady state */
  uint64_t nev;
} level_pt;

typedef struct pstate {
  uint32_t loc, device;
  pp_mem_pool_stats st; /* the running figures; levels filled at finish */
  uint64_t level, reserved;
  int has_res;
  int64_t first, prev;
  double area, unused_area, unused_time;
  uint64_t untracked_open; /* untracked allocations not yet freed */
  live_map live;
  level_pt *pts;
  size_t npts;
  uint64_t stride; /* events per point */
} pstate;

/* Pools of one loc: one entry per device seen, chained. */
typedef struct loc_dev {
  uint32_t device, pool, next; /* next: index + 1, 0 ends */
} loc_dev;

struct pp_pool_stream {
  pstate *p;
  size_t np, capp;
  uint32_t *by_loc; /* loc -> first loc_dev index + 1 */
  size_t nby_loc;
  loc_dev *ld;
  size_t nld, capld;
  size_t max_live, live, max_levels;
};

pp_pool_stream *pp__pool_stream_new(size_t max_live, size_t max_levels) {
  pp_pool_stream *s = pp__calloc(1, sizeof *s);
  if (!s)
    return NULL;
  s->max_live = max_live;
  /* Two points at least, and an even number: they merge by pairs. */
  s->max_levels = max_levels < 2 ? 2 : max_levels & ~(size_t)1;
  return s;
}

void pp__pool_stream_free(pp_pool_stream *s) {
  if (!s)
    return;
  for (size_t i = 0; i < s->np; i++) {
    pp__free(s->p[i].live.key);
    pp__free(s->p[i].live.val);
    pp__free(s->p[i].pts);
  }
  pp__free(s->p);
  pp__free(s->by_loc);
  pp__free(s->ld);
  pp__free(s);
}

size_t pp__pool_stream_live(const pp_pool_stream *s) { return s->live; }

/* The pool of e (its loc's name and its device), made on first sight. */
static pstate *get_pool(pp_pool_stream *s, const pp_trace *t,
                        const pp_event *e) {
  uint32_t loc = e->loc, dev = pp_mem_device(e);
  if (loc >= s->nby_loc) {
    size_t cap = s->nby_loc;
    if (pp__grow((void **)&s->by_loc, &cap, (size_t)loc + 1, sizeof *s->by_loc))
      return NULL;
    memset(s->by_loc + s->nby_loc, 0, (cap - s->nby_loc) * sizeof *s->by_loc);
    s->nby_loc = cap;
  }
  for (uint32_t i = s->by_loc[loc]; i; i = s->ld[i - 1].next)
    if (s->ld[i - 1].device == dev)
      return &s->p[s->ld[i - 1].pool];
  /* First event of this loc on this device: a pool of that name may
   * exist already (several sites may name one pool). */
  const char *name = pp_trace_loc_name(t, loc);
  size_t k = 0;
  while (k < s->np && !(s->p[k].device == dev &&
                        strcmp(pp_trace_loc_name(t, s->p[k].loc), name) == 0))
    k++;
  if (k == s->np) {
    if (s->np >= UINT32_MAX - 1 ||
        pp__grow((void **)&s->p, &s->capp, s->np + 1, sizeof *s->p))
      return NULL;
    pstate *p = &s->p[s->np++];
    memset(p, 0, sizeof *p);
    p->loc = loc;
    p->device = dev;
    p->first = p->prev = e->ts;
    p->stride = 1;
  }
  if (s->nld >= UINT32_MAX - 1 ||
      pp__grow((void **)&s->ld, &s->capld, s->nld + 1, sizeof *s->ld))
    return NULL;
  s->ld[s->nld] = (loc_dev){dev, (uint32_t)k, s->by_loc[loc]};
  s->by_loc[loc] = (uint32_t)++s->nld;
  return &s->p[k];
}

/* Time passes from p->prev to ts at the current level. */
static void hold(pstate *p, int64_t ts) {
  int64_t dt = pp__span(p->prev, ts);
  if (dt > 0) {
    double a = (double)p->level * (double)dt;
    p->area += a;
    if (p->npts)
      p->pts[p->npts - 1].area += a;
    if (p->has_res) {
      p->unused_area += ((double)p->reserved - (double)p->level) * (double)dt;
      p->unused_time += (double)dt;
    }
  }
  p->prev = ts;
}

/* The level after an event at ts, into the series. */
static int series_add(pstate *p, size_t max, int64_t ts) {
  uint64_t res = p->has_res ? p->reserved : 0;
  if (p->npts && p->pts[p->npts - 1].nev < p->stride) {
    level_pt *l = &p->pts[p->npts - 1];
    if (p->level > l->in_use)
      l->in_use = p->level;
    if (res > l->reserved)
      l->reserved = res;
    l->nev++;
    return 0;
  }
  if (p->npts == max) {
    /* Full: neighbours merge, keeping the higher level so that the peak
     * stays visible; from now on a point covers twice as many events. */
    for (size_t i = 0; i < max / 2; i++) {
      level_pt a = p->pts[2 * i], b = p->pts[2 * i + 1];
      a.in_use = a.in_use > b.in_use ? a.in_use : b.in_use;
      a.reserved = a.reserved > b.reserved ? a.reserved : b.reserved;
      a.area += b.area;
      a.nev += b.nev;
      p->pts[i] = a;
    }
    p->npts = max / 2;
    p->stride *= 2;
    return series_add(p, max, ts);
  }
  if (!p->pts) {
    p->pts = pp__malloc(max * sizeof *p->pts);
    if (!p->pts)
      return -1;
  }
  p->pts[p->npts++] = (level_pt){ts, p->level, res, 0, 1};
  return 0;
}

int pp__pool_stream_event(void *arg, const pp_trace *t, uint32_t thread,
                          const pp_event *e) {
  (void)thread;
  pp_pool_stream *s = arg;
  if (!ppt_is_mem(e->type) || e->loc >= t->nlocs)
    return 0;
  pstate *p = get_pool(s, t, e);
  if (!p)
    return -1;
  pp_mem_pool_stats *ps = &p->st;
  int first = ps->allocs + ps->frees == 0 && !ps->has_reserve;
  hold(p, e->ts);
  uint64_t old;
  int had;
  if (e->type == PPT_EV_MEM_ALLOC) {
    ps->allocs++;
    uint64_t bytes = pp_mem_bytes(e);
    uint64_t k = e->v.id;
    int known = k ? p->live.cap && p->live.key[live_find(&p->live, k)] == k
                  : p->live.has_zero;
    if (!known && s->live >= s->max_live) {
      /* No room: in use counts it and never takes it off (an upper
       * bound from now on, said by the report). */
      ps->untracked_allocs++;
      p->untracked_open++;
    } else {
      if (live_put(&p->live, k, bytes, &old, &had) != 0)
        return -1;
      if (had)
        p->level -= old <= p->level ? old : p->level;
      else
        s->live++;
    }
    p->level += bytes;
  } else if (e->type == PPT_EV_MEM_FREE) {
    ps->frees++;
    if (live_take(&p->live, e->v.id, &old)) {
      p->level -= old <= p->level ? old : p->level;
      s->live--;
    } else if (p->untracked_open) {
      /* Taken as the free of an untracked allocation: its size is not
       * known, so nothing is taken off. */
      p->untracked_open--;
      ps->untracked_frees++;
    } else {
      ps->unmatched_frees++;
    }
  } else {
    p->reserved = pp_mem_bytes(e);
    p->has_res = 1;
    ps->has_reserve = 1;
  }
  if (series_add(p, s->max_levels, e->ts) != 0)
    return -1;
  if (p->level > ps->peak || first) {
    ps->peak = p->level;
    ps->peak_ts = e->ts;
    ps->reserved_at_peak = p->has_res ? p->reserved : 0;
  } else if (p->level == ps->peak && e->ts == ps->peak_ts) {
    /* A reservation recorded at the same instant as the watermark. */
    ps->reserved_at_peak = p->has_res ? p->reserved : 0;
  }
  return 0;
}

typedef struct level_seg {
  uint64_t level;
  double dur;
} level_seg;

static int cmp_seg(const void *a, const void *b) {
  const level_seg *x = a, *y = b;
  return x->level < y->level ? -1 : x->level > y->level;
}

/* Time-weighted median of the levels in segs (sorted here). */
static uint64_t weighted_median(level_seg *segs, size_t n) {
  double total = 0; /* in doubles: durations may sum past int64 */
  for (size_t i = 0; i < n; i++)
    total += segs[i].dur;
  if (!n || total <= 0)
    return 0;
  pp__sort(segs, n, sizeof *segs, cmp_seg);
  double acc = 0;
  for (size_t i = 0; i < n; i++) {
    acc += segs[i].dur;
    if (2 * acc >= total)
      return segs[i].level;
  }
  return segs[n - 1].level;
}

/* The steady state: the time-weighted median of in use over [mid, end],
 * from the series. A point of one event holds its level over its span;
 * a merged point counts as its mean level (area / span) over it. */
static int steady(const pstate *p, int64_t mid, int64_t end, uint64_t *out) {
  level_seg *segs = pp__malloc((p->npts + 1) * sizeof *segs);
  if (!segs)
    return -1;
  size_t n = 0;
  /* Level 0 from the middle of the run until the pool's first event. */
  if (p->first > mid)
    segs[n++] = (level_seg){0, (double)pp__span(mid, p->first)};
  for (size_t i = 0; i < p->npts; i++) {
    const level_pt *l = &p->pts[i];
    int64_t b = i + 1 < p->npts ? p->pts[i + 1].ts : end;
    int64_t from = l->ts > mid ? l->ts : mid;
    if (b <= from)
      continue;
    uint64_t lv = l->in_use;
    if (l->nev > 1) {
      int64_t span = pp__span(l->ts, b);
      lv = span > 0 ? (uint64_t)(l->area / (double)span + 0.5) : l->in_use;
    }
    segs[n++] = (level_seg){lv, (double)pp__span(from, b)};
  }
  *out = weighted_median(segs, n);
  pp__free(segs);
  return 0;
}

static int pool_finish(pstate *p, pp_mem_pool_stats *ps, int64_t t_start,
                       int64_t t_end) {
  *ps = p->st;
  ps->loc = p->loc;
  ps->device = p->device;
  int64_t end = t_end > p->prev ? t_end : p->prev;
  hold(p, end);
  int64_t span = pp__span(p->first, p->prev);
  ps->mean_in_use = span > 0 ? p->area / (double)span : (double)p->level;
  ps->mean_unused = p->unused_time > 0 ? p->unused_area / p->unused_time : 0;
  ps->unused_at_peak =
      ps->has_reserve ? (int64_t)ps->reserved_at_peak - (int64_t)ps->peak : 0;
  int64_t mid = t_start + pp__span(t_start, t_end) / 2;
  if (steady(p, mid, end, &ps->steady) != 0)
    return -1;
  ps->final_in_use = p->level;
  live_map *m = &p->live;
  ps->leaks = m->n + (m->has_zero ? 1 : 0);
  ps->leaked_bytes = m->has_zero ? m->zero_val : 0;
  for (size_t i = 0; i < m->cap; i++)
    if (m->key[i])
      ps->leaked_bytes += m->val[i];
  ps->levels_stride = p->stride;
  ps->levels = pp__malloc((p->npts ? p->npts : 1) * sizeof *ps->levels);
  if (!ps->levels)
    return -1;
  for (size_t i = 0; i < p->npts; i++)
    ps->levels[i] =
        (pp_mem_level){p->pts[i].ts, p->pts[i].in_use, p->pts[i].reserved};
  ps->nlevels = p->npts;
  return 0;
}

typedef struct pool_key {
  const char *name;
  uint32_t device;
  size_t i;
} pool_key;

static int cmp_pool(const void *a, const void *b) {
  const pool_key *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  if (c)
    return c;
  return x->device < y->device ? -1 : x->device > y->device;
}

int pp__pool_stream_finish(pp_pool_stream *s, const pp_trace *t,
                           int64_t t_start, int64_t t_end, pp_profile *prof) {
  if (!s->np)
    return 0;
  pool_key *k = pp__malloc(s->np * sizeof *k);
  prof->pools = pp__calloc(s->np, sizeof *prof->pools);
  if (!k || !prof->pools) {
    pp__free(k);
    return -1;
  }
  for (size_t i = 0; i < s->np; i++)
    k[i] = (pool_key){pp_trace_loc_name(t, s->p[i].loc), s->p[i].device, i};
  /* By name, then device. */
  pp__sort(k, s->np, sizeof *k, cmp_pool);
  int rc = 0;
  for (size_t i = 0; i < s->np && rc == 0; i++) {
    rc = pool_finish(&s->p[k[i].i], &prof->pools[i], t_start, t_end);
    prof->npools = i + 1;
  }
  pp__free(k);
  return rc;
}

/* The pool figures a read's stream computed from every event
 * (pp_stream_results): finished at the first analysis with the trace's
 * times, copied at each. */
static int streamed_pools(pp_analysis *a) {
  const pp_trace *t = a->trace;
  pp_stream_results *sr = a->streamres;
  pp_profile *prof = &a->prof;
  if (sr->pools_open) {
    pp_profile tmp;
    memset(&tmp, 0, sizeof tmp);
    int rc = pp__pool_stream_finish(sr->pools_open, t, prof->t0, prof->t1,
                                    &tmp);
    pp__pool_stream_free(sr->pools_open);
    sr->pools_open = NULL;
    sr->pools = tmp.pools;
    sr->npools = tmp.npools;
    if (rc != 0)
      return -1;
    sr->have_pools = 1;
  }
  if (!sr->npools)
    return 0;
  prof->pools = pp__calloc(sr->npools, sizeof *prof->pools);
  if (!prof->pools)
    return -1;
  for (size_t i = 0; i < sr->npools; i++) {
    const pp_mem_pool_stats *src = &sr->pools[i];
    pp_mem_pool_stats *dst = &prof->pools[i];
    *dst = *src;
    dst->levels = NULL;
    prof->npools = i + 1;
    if (src->nlevels) {
      dst->levels = pp__malloc(src->nlevels * sizeof *dst->levels);
      if (!dst->levels)
        return -1;
      memcpy(dst->levels, src->levels, src->nlevels * sizeof *dst->levels);
    }
  }
  return 0;
}

int pp__pools_analyze(pp_analysis *a) {
  const pp_trace *t = a->trace;
  if (a->streamres && (a->streamres->pools_open || a->streamres->have_pools))
    return streamed_pools(a);
  pp_pool_stream *s = pp__pool_stream_new(PP_POOL_LIVE_MAX, PP_POOL_LEVELS_MAX);
  if (!s)
    return -1;
  uint32_t types = PP_FEED_TYPE(PPT_EV_MEM_ALLOC) |
                   PP_FEED_TYPE(PPT_EV_MEM_FREE) |
                   PP_FEED_TYPE(PPT_EV_MEM_RESERVE);
  int rc = pp_feed_in_time_order(t, types, pp__pool_stream_event, s);
  if (rc == 0)
    rc = pp__pool_stream_finish(s, t, a->prof.t0, a->prof.t1, &a->prof);
  pp__pool_stream_free(s);
  return rc ? -1 : 0;
}
