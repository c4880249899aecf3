/* SPDX-License-Identifier: MIT */
/*
 * Stats-mode aggregation (see sink/stats.h): zone stacks per thread, per-site
 * histograms, frame and counter summaries, GPU zones per (site, device,
 * stream), and the STATS chunk encoder.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../format/records.h"
#include "../format/stats_payload.h"
#include "../internal.h"
#include "../pair/intervals.h"
#include "../pair/zones.h"
#include "../stats/histogram.h"
#include "sink/stats.h"

typedef struct site {
  uint32_t kind;
  int defined;
  const char *name;  /* the site's (static) name */
  uint32_t alias;    /* counters and frames: first site with this name */
  /* zones */
  uint64_t count;
  uint64_t total, self;
  pp_hist dur;
  /* frames */
  uint64_t frames;
  int64_t first_ns, last_ns, prev_dt;
  double jitter_sum;
  uint64_t jitter_n;
  /* counters */
  uint64_t samples;
  double cmin, cmax, csum, cur;
  int is_float;
} site;

typedef struct tstat {
  uint64_t tid;
  uint64_t busy, events, zones;
  pp_zone_stack zs; /* memory only while zones are open */
} tstat;

#define RANGE_SLOTS 4096u /* open cross-thread ranges tracked at once */

/* GPU zones of one site on one track (device, stream). */
typedef struct gpu_key {
  uint32_t loc, device;
  uint64_t stream;
  uint64_t tid; /* launcher of the zone that started first */
  uint64_t count;
  uint64_t total;             /* saturates at INT64_MAX */
  int64_t launch, start, end; /* earliest launch and start, latest end */
  pp_hist dur;
} gpu_key;

struct pp__aggregate {
  pp_id_pairs ranges; /* range halves waiting for their other half */
  gpu_key *gpu; /* in order of first appearance */
  size_t ngpu, cap_gpu;
  uint32_t *gpu_map; /* open addressing: index + 1 into gpu, 0 empty */
  size_t gpu_map_cap;
  uint64_t gpu_lost; /* zones of keys past PPT_STATS_GPU_MAX (or no memory) */
  site *sites;
  size_t nsites, cap_sites;
  /* Named series by (kind, name): the first site of each, open
   * addressing, index + 1 (0 empty); when it could not grow, a search
   * of the sites takes its place (name_map_failed). */
  uint32_t *name_map;
  size_t name_map_cap, name_map_n;
  int name_map_failed;
  tstat **threads;
  size_t nthreads, cap_threads;
  uint32_t *thread_map; /* open addressing by tid: index + 1, 0 empty */
  size_t thread_map_cap;
  tstat *last;
  int64_t t0, t1;
  int have_t;
  uint64_t events;
  pp_pair_counts pc;    /* zone pairing anomalies (zones.h) */
  pp__agg_observer obs; /* pp__aggregate_observe; zeroed: none */
};

pp__aggregate *pp__aggregate_new(void) {
  pp__aggregate *a = pp__calloc(1, sizeof(pp__aggregate));
  if (a)
    pp__idpairs_init(&a->ranges, RANGE_SLOTS);
  return a;
}

void pp__aggregate_observe(pp__aggregate *a, const pp__agg_observer *o) {
  if (o)
    a->obs = *o;
  else
    memset(&a->obs, 0, sizeof a->obs);
}

void pp__aggregate_free(pp__aggregate *a) {
  if (!a)
    return;
  for (size_t i = 0; i < a->nsites; i++) {
    pp_hist_free(&a->sites[i].dur);
  }
  pp__free(a->sites);
  pp__free(a->name_map);
  for (size_t i = 0; i < a->nthreads; i++) {
    pp__zstack_free(&a->threads[i]->zs);
    pp__free(a->threads[i]);
  }
  pp__free(a->threads);
  pp__free(a->thread_map);
  for (size_t i = 0; i < a->ngpu; i++)
    pp_hist_free(&a->gpu[i].dur);
  pp__free(a->gpu);
  pp__free(a->gpu_map);
  pp__idpairs_free(&a->ranges);
  pp__free(a);
}

static site *grow_sites(pp__aggregate *a, uint32_t id);

/* The site of id, created (zeroed) on first use; NULL when out of
 * memory. */
static inline site *get_site(pp__aggregate *a, uint32_t id) {
  if (__builtin_expect(id < a->nsites, 1))
    return &a->sites[id];
  return grow_sites(a, id);
}

static site *grow_sites(pp__aggregate *a, uint32_t id) {
  size_t old = a->cap_sites;
  if (pp__grow((void **)&a->sites, &a->cap_sites, (size_t)id + 1,
               sizeof(site)) != 0)
    return NULL;
  for (size_t i = old; i < a->cap_sites; i++) {
    memset(&a->sites[i], 0, sizeof(site));
    pp_hist_init(&a->sites[i].dur);
  }
  a->nsites = (size_t)id + 1;
  return &a->sites[id];
}

static int named_kind(uint32_t kind) {
  return kind == PP_KIND_COUNTER || kind == PP_KIND_FRAME ||
         kind == PP_KIND_METRIC;
}

static size_t name_slot(uint32_t kind, const char *name, size_t cap) {
  uint64_t h = UINT64_C(14695981039346656037) ^ kind;
  for (const unsigned char *c = (const unsigned char *)name; *c; c++)
    h = (h ^ *c) * UINT64_C(1099511628211);
  return (size_t)(h ^ h >> 29) & (cap - 1);
}

/* The map's slot for (kind, name): where it is, or the empty slot where
 * it goes. */
static uint32_t *name_find(pp__aggregate *a, uint32_t kind, const char *name) {
  size_t k = name_slot(kind, name, a->name_map_cap);
  for (;;) {
    uint32_t *m = &a->name_map[k];
    if (!*m)
      return m;
    const site *o = &a->sites[*m - 1];
    if (o->kind == kind && strcmp(o->name, name) == 0)
      return m;
    k = (k + 1) & (a->name_map_cap - 1);
  }
}

/* Room in the map for one more name (kept at most half full): 0, or -1
 * when it could not grow (from then on the sites are searched). */
static int name_room(pp__aggregate *a) {
  if (a->name_map_failed)
    return -1;
  if ((a->name_map_n + 1) * 2 <= a->name_map_cap)
    return 0;
  size_t cap = a->name_map_cap ? a->name_map_cap * 2 : 64, old_cap =
                                                          a->name_map_cap;
  uint32_t *old = a->name_map;
  if (!(a->name_map = pp__calloc(cap, sizeof *a->name_map))) {
    a->name_map = old;
    a->name_map_failed = 1;
    return -1;
  }
  a->name_map_cap = cap;
  for (size_t k = 0; k < old_cap; k++)
    if (old[k]) {
      const site *o = &a->sites[old[k] - 1];
      *name_find(a, o->kind, o->name) = old[k];
    }
  pp__free(old);
  return 0;
}

/* The series site id (defined, of a named kind) feeds: the first site
 * below it defined with its kind and name that is its own series, or id
 * itself, then the first of its name (taken into the map). */
static uint32_t series_first(pp__aggregate *a, uint32_t id) {
  const site *s = &a->sites[id];
  if (name_room(a) == 0) {
    uint32_t *m = name_find(a, s->kind, s->name);
    if (*m && *m - 1 < id)
      return *m - 1;
    a->name_map_n += !*m;
    *m = id + 1;
    return id;
  }
  for (uint32_t i = 0; i < id && i < a->nsites; i++) {
    const site *o = &a->sites[i];
    if (o->defined && o->alias == i && o->kind == s->kind &&
        strcmp(o->name, s->name) == 0)
      return i;
  }
  return id;
}

void pp__aggregate_define(pp__aggregate *a, uint32_t id, const pp_srcloc *p) {
  site *s = get_site(a, id);
  if (!s)
    return;
  s->kind = p->kind;
  s->defined = 1;
  s->name = p->name ? p->name : "";
  s->alias = id;
  /* Counters and frame streams are named series: every site that names
   * the same one feeds it (a queue depth set by producer and consumer). */
  if (named_kind(p->kind))
    s->alias = series_first(a, id);
}

/* The site that accumulates events of id. */
static site *series_site(pp__aggregate *a, uint32_t id) {
  site *s = get_site(a, id);
  return s && s->defined && s->alias != id ? get_site(a, s->alias) : s;
}

static size_t tid_slot(uint64_t tid, size_t cap) {
  return (size_t)((tid * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (cap - 1);
}

/* Index tid -> thread, kept at most half full: events of many threads
 * come interleaved (a reader's time-ordered stream), so a lookup must not
 * walk every thread. */
static int thread_map_put(pp__aggregate *a, uint64_t tid, size_t idx) {
  if ((a->nthreads + 1) * 2 > a->thread_map_cap) {
    size_t cap = a->thread_map_cap ? a->thread_map_cap * 2 : 64;
    uint32_t *m = pp__calloc(cap, sizeof *m);
    if (!m)
      return -1;
    for (size_t i = 0; i < a->nthreads; i++) {
      size_t k = tid_slot(a->threads[i]->tid, cap);
      while (m[k])
        k = (k + 1) & (cap - 1);
      m[k] = (uint32_t)i + 1;
    }
    pp__free(a->thread_map);
    a->thread_map = m;
    a->thread_map_cap = cap;
  }
  size_t k = tid_slot(tid, a->thread_map_cap);
  while (a->thread_map[k])
    k = (k + 1) & (a->thread_map_cap - 1);
  a->thread_map[k] = (uint32_t)idx + 1;
  return 0;
}

static tstat *get_thread(pp__aggregate *a, uint64_t tid) {
  if (a->last && a->last->tid == tid)
    return a->last;
  if (a->thread_map_cap) {
    size_t k = tid_slot(tid, a->thread_map_cap);
    for (uint32_t i; (i = a->thread_map[k]) != 0;
         k = (k + 1) & (a->thread_map_cap - 1))
      if (a->threads[i - 1]->tid == tid)
        return a->last = a->threads[i - 1];
  }
  if (a->nthreads >= UINT32_MAX - 1 ||
      pp__grow((void **)&a->threads, &a->cap_threads, a->nthreads + 1,
               sizeof(tstat *)) != 0)
    return NULL;
  tstat *t = pp__calloc(1, sizeof *t);
  if (!t)
    return NULL;
  t->tid = tid;
  if (thread_map_put(a, tid, a->nthreads) != 0) {
    pp__free(t);
    return NULL;
  }
  a->threads[a->nthreads++] = t;
  return a->last = t;
}

void pp__aggregate_thread(pp__aggregate *a, uint64_t tid, const char *name) {
  (void)name; /* names travel in THREAD chunks */
  get_thread(a, tid);
}

void pp__aggregate_drops(pp__aggregate *a, uint64_t tid, uint64_t n) {
  (void)a;
  (void)tid;
  (void)n; /* drops travel in DROPS chunks */
}

static void range_done(pp__aggregate *a, uint32_t loc, int64_t start,
                       int64_t end) {
  site *rs = get_site(a, loc);
  int64_t d = end > start ? end - start : 0;
  if (!rs)
    return;
  rs->count++;
  rs->total += (uint64_t)d;
  rs->self += (uint64_t)d; /* ranges do not nest */
  pp_hist_record(&rs->dur, (uint64_t)d);
  if (a->obs.zone)
    a->obs.zone(a->obs.arg, loc, end, (uint64_t)d);
}

/* A range half: an interval once its other half is seen (intervals.h). */
static void range_event(pp__aggregate *a, int is_end, uint32_t loc,
                        uint64_t id, int64_t ns) {
  pp_half h = {id, ns, loc, 0, 0, (uint32_t)is_end}, b, e;
  if (pp__idpairs_put(&a->ranges, &h, &b, &e) == 1)
    range_done(a, (uint32_t)b.cookie, b.ts, e.ts);
}

typedef struct close_ctx {
  pp__aggregate *a;
  tstat *t;
} close_ctx;

/* A zone the pairing closed: counted only with its own end (zones.h). */
static void zone_closed(void *ctx, const pp_zone_closed *z) {
  close_ctx *cc = ctx;
  if (z->depth == 0)
    cc->t->busy += (uint64_t)z->covered;
  if (!pp__zone_counts(z))
    return;
  cc->t->zones++;
  site *s = get_site(cc->a, (uint32_t)z->site);
  if (s) {
    s->count++;
    s->total += (uint64_t)z->dur;
    s->self += (uint64_t)z->self;
    pp_hist_record(&s->dur, (uint64_t)z->dur);
    if (cc->a->obs.zone)
      cc->a->obs.zone(cc->a->obs.arg, (uint32_t)z->site, z->end,
                      (uint64_t)z->dur);
  }
}

/* One event of thread t (the rules of every road: pair/zones.h for
 * zones, pair/intervals.h for ranges; frames and counters per series). */
static inline void one_event(pp__aggregate *a, tstat *t, unsigned type,
                             uint32_t id, int64_t ns, uint64_t value) {
  site *s;
  switch (type) {
  case PPT_EV_ZONE_BEGIN:
    if (pp__zstack_begin_fast(&t->zs, id, ns, 0) != 0)
      pp__zstack_begin(&t->zs, id, ns, 0, &a->pc);
    return;
  case PPT_EV_ZONE_END: {
    close_ctx cc = {a, t};
    pp_zone_closed z;
    if (pp__zstack_end_fast(&t->zs, id, ns, &a->pc, &z) == 0)
      zone_closed(&cc, &z);
    else
      pp__zstack_end(&t->zs, id, ns, &a->pc, zone_closed, &cc);
    pp__zstack_trim(&t->zs);
    return;
  }
  case PPT_EV_RANGE_BEGIN:
  case PPT_EV_RANGE_END:
    range_event(a, type == PPT_EV_RANGE_END, id, value, ns);
    return;
  case PPT_EV_FRAME:
    if (!(s = series_site(a, id)))
      return;
    if (s->frames > 0) {
      int64_t dt; /* a crafted file's times may be far apart */
      if (__builtin_sub_overflow(ns, s->last_ns, &dt))
        dt = ns < s->last_ns ? 0 : INT64_MAX;
      if (dt < 0)
        dt = 0;
      pp_hist_record(&s->dur, (uint64_t)dt);
      if (s->frames > 1) {
        s->jitter_sum += fabs((double)(dt - s->prev_dt));
        s->jitter_n++;
      }
      s->prev_dt = dt;
      if (a->obs.frame)
        a->obs.frame(a->obs.arg, (uint32_t)(s - a->sites), ns, dt);
    } else {
      s->first_ns = ns;
    }
    s->last_ns = ns;
    s->frames++;
    return;
  case PPT_EV_COUNTER_SET:
  case PPT_EV_COUNTER_ADD:
  case PPT_EV_COUNTER_SETF: {
    if (!(s = series_site(a, id)))
      return;
    double v;
    if (type == PPT_EV_COUNTER_SET)
      v = (double)(int64_t)value;
    else if (type == PPT_EV_COUNTER_ADD)
      v = s->cur + (double)(int64_t)value;
    else {
      memcpy(&v, &value, sizeof v);
      s->is_float = 1;
    }
    s->cur = v;
    if (!s->samples || v < s->cmin)
      s->cmin = v;
    if (!s->samples || v > s->cmax)
      s->cmax = v;
    s->csum += v;
    s->samples++;
    if (a->obs.counter)
      a->obs.counter(a->obs.arg, (uint32_t)(s - a->sites), ns, v);
    return;
  }
  default:
    return; /* marks and flows carry no statistics */
  }
}

void pp__aggregate_events(pp__aggregate *a, uint64_t tid,
                          const pp__agg_ev *ev, size_t n) {
  if (n == 0)
    return;
  tstat *t = get_thread(a, tid);
  if (!t)
    return;
  a->events += n;
  t->events += n;
  int64_t lo = ev[0].ns, hi = ev[0].ns;
  for (size_t i = 0; i < n; i++) {
    const pp__agg_ev *e = &ev[i];
    int64_t ns = e->ns;
    lo = ns < lo ? ns : lo;
    hi = ns > hi ? ns : hi;
    one_event(a, t, e->type, e->id, ns, e->value);
  }
  if (!a->have_t || lo < a->t0)
    a->t0 = lo;
  if (!a->have_t || hi > a->t1)
    a->t1 = hi;
  a->have_t = 1;
}

void pp__aggregate_event(pp__aggregate *a, uint64_t tid, unsigned type,
                         uint32_t id, int64_t ns, uint64_t value) {
  pp__agg_ev e = {type, id, ns, value};
  pp__aggregate_events(a, tid, &e, 1);
}

void pp__aggregate_zones(pp__aggregate *a, uint64_t tid, uint32_t id,
                         const pp_hist *dur, uint64_t self_ns) {
  tstat *t = get_thread(a, tid);
  site *s = get_site(a, id);
  if (!s || !t || !dur->count)
    return;
  uint64_t total = dur->sum_hi ? UINT64_MAX : dur->sum_lo;
  if (pp_hist_merge(&s->dur, dur) != 0)
    return; /* counted in the histogram's lost */
  s->count += dur->count;
  s->total = pp__add_sat_u64(s->total, total);
  s->self = pp__add_sat_u64(s->self, self_ns);
  t->zones += dur->count;
}

void pp__aggregate_thread_zones(pp__aggregate *a, uint64_t tid,
                                const pp__agg_thread *x) {
  tstat *t = get_thread(a, tid);
  if (!t)
    return;
  t->busy = pp__add_sat_u64(t->busy, x->busy_ns);
  t->events += x->events;
  a->events += x->events;
  a->pc.lost_ends += x->pc.lost_ends;
  a->pc.stray_ends += x->pc.stray_ends;
  a->pc.too_deep += x->pc.too_deep;
  a->pc.backwards += x->pc.backwards;
  a->pc.no_memory += x->pc.no_memory;
  if (!x->events)
    return;
  if (!a->have_t || x->first_ns < a->t0)
    a->t0 = x->first_ns;
  if (!a->have_t || x->last_ns > a->t1)
    a->t1 = x->last_ns;
  a->have_t = 1;
}

void pp__aggregate_finish(pp__aggregate *a, int64_t end_ns) {
  int64_t end = a->have_t && a->t1 < end_ns ? a->t1 : end_ns;
  for (size_t i = 0; i < a->nthreads; i++) {
    tstat *t = a->threads[i];
    close_ctx cc = {a, t};
    pp__zstack_finish(&t->zs, end, &a->pc, zone_closed, &cc);
    pp__zstack_free(&t->zs);
  }
  pp__idpairs_finish(&a->ranges, NULL, NULL);
}

/* ---- GPU zones ---------------------------------------------------------- */

static size_t gpu_hash(uint32_t loc, uint32_t device, uint64_t stream,
                       size_t cap) {
  uint64_t h = stream ^ ((uint64_t)loc << 32 | device) * 0x9E3779B97F4A7C15ULL;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 32;
  return (size_t)h & (cap - 1);
}

static int gpu_map_grow(pp__aggregate *a) {
  size_t cap = a->gpu_map_cap ? a->gpu_map_cap * 2 : 64;
  uint32_t *m = pp__calloc(cap, sizeof *m);
  if (!m)
    return -1;
  for (size_t i = 0; i < a->ngpu; i++) {
    const gpu_key *k = &a->gpu[i];
    size_t j = gpu_hash(k->loc, k->device, k->stream, cap);
    while (m[j])
      j = (j + 1) & (cap - 1);
    m[j] = (uint32_t)i + 1;
  }
  pp__free(a->gpu_map);
  a->gpu_map = m;
  a->gpu_map_cap = cap;
  return 0;
}

/* The entry of a key, created on first use; NULL when the table is full or
 * out of memory. */
static gpu_key *gpu_get(pp__aggregate *a, uint32_t loc, uint32_t device,
                        uint64_t stream) {
  if (a->gpu_map_cap) {
    size_t j = gpu_hash(loc, device, stream, a->gpu_map_cap);
    for (; a->gpu_map[j]; j = (j + 1) & (a->gpu_map_cap - 1)) {
      gpu_key *k = &a->gpu[a->gpu_map[j] - 1];
      if (k->loc == loc && k->device == device && k->stream == stream)
        return k;
    }
  }
  if (a->ngpu >= PPT_STATS_GPU_MAX)
    return NULL;
  if ((a->ngpu + 1) * 2 > a->gpu_map_cap && gpu_map_grow(a) != 0)
    return NULL;
  if (pp__grow((void **)&a->gpu, &a->cap_gpu, a->ngpu + 1, sizeof *a->gpu) != 0)
    return NULL;
  gpu_key *k = &a->gpu[a->ngpu];
  memset(k, 0, sizeof *k);
  k->loc = loc;
  k->device = device;
  k->stream = stream;
  pp_hist_init(&k->dur);
  size_t j = gpu_hash(loc, device, stream, a->gpu_map_cap);
  while (a->gpu_map[j])
    j = (j + 1) & (a->gpu_map_cap - 1);
  a->gpu_map[j] = (uint32_t)++a->ngpu;
  return k;
}

void pp__aggregate_gpu(pp__aggregate *a, uint32_t id, uint32_t device,
                       uint64_t stream, uint64_t tid, int64_t launch_ns,
                       int64_t start_ns, uint64_t dur_ns) {
  gpu_key *k = gpu_get(a, id, device, stream);
  if (!k) {
    a->gpu_lost++;
    return;
  }
  int64_t end;
  if (dur_ns > (uint64_t)INT64_MAX ||
      __builtin_add_overflow(start_ns, (int64_t)dur_ns, &end))
    end = INT64_MAX;
  if (!k->count || start_ns < k->start) {
    k->start = start_ns;
    k->tid = tid;
  }
  if (!k->count || launch_ns < k->launch)
    k->launch = launch_ns;
  if (!k->count || end > k->end)
    k->end = end;
  k->count++;
  k->total = dur_ns > (uint64_t)INT64_MAX - k->total ? (uint64_t)INT64_MAX
                                                     : k->total + dur_ns;
  pp_hist_record(&k->dur, dur_ns);
}

static int cmp_gpu_key(const void *x, const void *y) {
  const gpu_key *a = *(const gpu_key *const *)x,
                *b = *(const gpu_key *const *)y;
  if (a->loc != b->loc)
    return a->loc < b->loc ? -1 : 1;
  if (a->device != b->device)
    return a->device < b->device ? -1 : 1;
  return a->stream < b->stream ? -1 : a->stream > b->stream;
}

/* Since format 1.3: the GPU zone records after `unclosed`
 * (docs/formats/pptrace.md), each with its length so that later writers
 * can append fields. */
static void encode_gpu(const pp__aggregate *a, ppt_buf *out) {
  const gpu_key **order = a->ngpu ? pp__malloc(a->ngpu * sizeof *order) : NULL;
  size_t n = order ? a->ngpu : 0;
  for (size_t i = 0; i < n; i++)
    order[i] = &a->gpu[i];
  if (n > 1)
    qsort(order, n, sizeof *order, cmp_gpu_key);
  ppt_count_put_n(out, n);
  for (size_t i = 0; i < n && !out->oom; i++) {
    const gpu_key *k = order[i];
    ppt_stats_gpu r = {k->loc,   k->device, k->stream, k->tid, k->count,
                       k->total, k->launch, k->start,  k->end, {&k->dur, NULL}};
    /* out of memory: the chunk is discarded rather than written short */
    ppt_stats_gpu_put_framed(out, &r);
  }
  pp__free(order);
  /* Zones whose key found no room, and those of every key left out for
   * lack of memory for the sort. */
  uint64_t lost = a->gpu_lost;
  for (size_t i = n; i < a->ngpu; i++)
    lost += a->gpu[i].count;
  ppt_count_put_n(out, lost);
}

void pp__aggregate_encode(const pp__aggregate *a, ppt_buf *out) {
  size_t nz = 0, nf = 0, nc = 0;
  for (size_t i = 0; i < a->nsites; i++) {
    const site *s = &a->sites[i];
    nz += s->count > 0;
    nf += s->frames > 0;
    nc += s->samples > 0;
  }
  ppt_count_put_n(out, nz);
  /* The self-time histogram of the format is written empty: self time is
   * kept as a total (stats mode's threads count their zones themselves,
   * docs/internals/tally.md, and no report showed its percentiles). */
  pp_hist no_self;
  pp_hist_init(&no_self);
  for (size_t i = 0; i < a->nsites; i++) {
    const site *s = &a->sites[i];
    if (!s->count)
      continue;
    ppt_stats_zone r = {i,       s->count,        s->total,
                        s->self, {&s->dur, NULL}, {&no_self, NULL}};
    ppt_stats_zone_put(out, &r);
  }
  ppt_count_put_n(out, a->nthreads);
  for (size_t i = 0; i < a->nthreads; i++) {
    const tstat *t = a->threads[i];
    ppt_stats_thread r = {t->tid, t->busy, t->events, t->zones};
    ppt_stats_thread_put(out, &r);
  }
  ppt_count_put_n(out, nf);
  for (size_t i = 0; i < a->nsites; i++) {
    const site *s = &a->sites[i];
    if (!s->frames)
      continue;
    ppt_stats_frame r = {i,
                         s->frames,
                         s->first_ns,
                         s->last_ns,
                         s->jitter_n ? s->jitter_sum / (double)s->jitter_n : 0,
                         {&s->dur, NULL}};
    ppt_stats_frame_put(out, &r);
  }
  ppt_count_put_n(out, nc);
  for (size_t i = 0; i < a->nsites; i++) {
    const site *s = &a->sites[i];
    if (!s->samples)
      continue;
    ppt_stats_counter r = {i,
                           s->samples,
                           s->cmin,
                           s->cmax,
                           s->csum / (double)s->samples,
                           s->cur,
                           (uint64_t)s->is_float};
    ppt_stats_counter_put(out, &r);
  }
  ppt_stats_totals tot = {a->t0, a->t1, a->events, a->pc.stray_ends,
                          a->pc.lost_ends};
  ppt_stats_totals_put(out, &tot);
  encode_gpu(a, out);
  /* Since 1.4: the rest of what the pairing saw (pair/zones.h,
   * pair/intervals.h), so a stats-mode report says what a trace-mode one
   * says. */
  ppt_stats_pairing pr = {a->pc.too_deep + a->pc.no_memory, a->pc.backwards,
                          a->ranges.c.unended, a->ranges.c.unbegun,
                          a->ranges.c.lost};
  ppt_stats_pairing_put(out, &pr);
}

/* ---- the durable arena's checkpoint ------------------------------------- */

/* A histogram's exact integer moments (PPT_REC_CKPT_MOMENTS). */
typedef struct moments {
  uint64_t exact, sum_lo, sum_hi, sq0, sq1, sq2;
} moments;

static moments moments_of(const pp_hist *h) {
  moments m = {!h->approx, h->sum_lo, h->sum_hi,
                        h->sq[0],   h->sq[1],  h->sq[2]};
  return m;
}

/* A decoded histogram (approximate moments) moved into dst, made exact
 * again with the moments m when the saved one had them. */
static void hist_restore(pp_hist *dst, pp_hist *decoded,
                         const moments *m) {
  pp_hist_free(dst);
  *dst = *decoded;
  pp_hist_init(decoded);
  if (m->exact && dst->count) {
    uint64_t sq[3] = {m->sq0, m->sq1, m->sq2};
    pp_hist_exact_moments(dst, m->sum_lo, m->sum_hi, sq);
  }
}

void pp__aggregate_save(const pp__aggregate *a, ppt_buf *out) {
  size_t ns = 0;
  for (size_t i = 0; i < a->nsites; i++)
    ns += a->sites[i].defined || a->sites[i].count || a->sites[i].frames ||
          a->sites[i].samples;
  ppt_count_put_n(out, ns);
  for (size_t i = 0; i < a->nsites; i++) {
    const site *s = &a->sites[i];
    if (!(s->defined || s->count || s->frames || s->samples))
      continue;
    ppt_ckpt_site r;
    memset(&r, 0, sizeof r);
    r.id = i;
    r.kind = s->kind;
    r.defined = s->defined != 0;
    r.alias = s->alias;
    r.count = s->count;
    r.total = s->total;
    r.self = s->self;
    r.dur.in = &s->dur;
    moments m = moments_of(&s->dur);
    r.exact = m.exact;
    r.sum_lo = m.sum_lo;
    r.sum_hi = m.sum_hi;
    r.sq0 = m.sq0;
    r.sq1 = m.sq1;
    r.sq2 = m.sq2;
    r.frames = s->frames;
    r.first_ns = s->first_ns;
    r.last_ns = s->last_ns;
    r.prev_dt = s->prev_dt;
    r.jitter_sum = s->jitter_sum;
    r.jitter_n = s->jitter_n;
    r.samples = s->samples;
    r.cmin = s->cmin;
    r.cmax = s->cmax;
    r.csum = s->csum;
    r.cur = s->cur;
    r.is_float = s->is_float != 0;
    ppt_ckpt_site_put(out, &r);
  }
  ppt_count_put_n(out, a->nthreads);
  for (size_t i = 0; i < a->nthreads; i++) {
    const tstat *t = a->threads[i];
    ppt_ckpt_thread r = {t->tid, t->busy, t->events, t->zones};
    ppt_ckpt_thread_put(out, &r);
  }
  ppt_ckpt_totals tot = {a->t0,
                         a->t1,
                         (uint64_t)(a->have_t != 0),
                         a->events,
                         a->pc.lost_ends,
                         a->pc.stray_ends,
                         a->pc.too_deep,
                         a->pc.backwards,
                         a->pc.no_memory,
                         a->gpu_lost,
                         a->ranges.c.paired,
                         a->ranges.c.unended,
                         a->ranges.c.unbegun,
                         a->ranges.c.lost};
  ppt_ckpt_totals_put(out, &tot);
  ppt_count_put_n(out, a->ranges.n);
  for (size_t i = 0; i < a->ranges.cap; i++) {
    const pp_half *h = &a->ranges.v[i];
    if (h->is_end == UINT32_MAX)
      continue;
    ppt_ckpt_half r = {h->id,  h->ts,    h->cookie,
                       h->tid, h->space, (uint64_t)(h->is_end != 0)};
    ppt_ckpt_half_put(out, &r);
  }
  ppt_count_put_n(out, a->ngpu);
  for (size_t i = 0; i < a->ngpu; i++) {
    const gpu_key *k = &a->gpu[i];
    moments m = moments_of(&k->dur);
    ppt_ckpt_gpu r = {k->loc,      k->device, k->stream, k->tid,
                      k->count,    k->total,  k->launch, k->start,
                      k->end,      {&k->dur, NULL}, m.exact, m.sum_lo,
                      m.sum_hi,    m.sq0,     m.sq1,     m.sq2};
    ppt_ckpt_gpu_put(out, &r);
  }
}

static int load_site(pp__aggregate *a, ppt_cursor *c, pp_hist *tmp) {
  ppt_ckpt_site r;
  memset(&r, 0, sizeof r);
  r.dur.out = tmp;
  if (ppt_ckpt_site_get(c, &r) != 0 || r.alias > r.id)
    return -1;
  site *s = get_site(a, (uint32_t)r.id);
  if (!s)
    return -1;
  moments m = {r.exact, r.sum_lo, r.sum_hi, r.sq0, r.sq1, r.sq2};
  hist_restore(&s->dur, tmp, &m);
  if (!s->defined && r.defined) { /* a site the caller did not define: no
                                     name to take as another's series */
    s->defined = 1;
    s->name = "";
  }
  s->kind = (uint32_t)r.kind;
  s->alias = (uint32_t)r.alias;
  if (s->defined && s->alias == r.id && named_kind(s->kind))
    (void)series_first(a, s->alias); /* later sites of its name join it */
  s->count = r.count;
  s->total = r.total;
  s->self = r.self;
  s->frames = r.frames;
  s->first_ns = r.first_ns;
  s->last_ns = r.last_ns;
  s->prev_dt = r.prev_dt;
  s->jitter_sum = r.jitter_sum;
  s->jitter_n = r.jitter_n;
  s->samples = r.samples;
  s->cmin = r.cmin;
  s->cmax = r.cmax;
  s->csum = r.csum;
  s->cur = r.cur;
  s->is_float = (int)r.is_float;
  return 0;
}

static int load_gpu(pp__aggregate *a, ppt_cursor *c, pp_hist *tmp) {
  ppt_ckpt_gpu r;
  memset(&r, 0, sizeof r);
  r.dur.out = tmp;
  if (ppt_ckpt_gpu_get(c, &r) != 0)
    return -1;
  gpu_key *k = gpu_get(a, (uint32_t)r.loc, (uint32_t)r.device, r.stream);
  if (!k)
    return -1;
  moments m = {r.exact, r.sum_lo, r.sum_hi, r.sq0, r.sq1, r.sq2};
  hist_restore(&k->dur, tmp, &m);
  k->tid = r.tid;
  k->count = r.count;
  k->total = r.total;
  k->launch = r.launch;
  k->start = r.start;
  k->end = r.end;
  return 0;
}

/* A count of records, at most max. -1 when bad. */
static int64_t load_count(ppt_cursor *c, uint64_t max) {
  ppt_count k = {0};
  if (ppt_count_get(c, &k) != 0 || k.n > max)
    return -1;
  return (int64_t)k.n;
}

int pp__aggregate_load(pp__aggregate *a, const unsigned char *p, size_t n) {
  ppt_cursor c = {p, p + n, 0};
  pp_hist tmp;
  pp_hist_init(&tmp);
  int rc = -1;
  int64_t k = load_count(&c, PPT_STATS_SITES_MAX);
  for (int64_t i = 0; i < k; i++)
    if (load_site(a, &c, &tmp) != 0)
      goto out;
  if (k < 0 || (k = load_count(&c, PPT_STATS_THREADS_MAX)) < 0)
    goto out;
  for (int64_t i = 0; i < k; i++) {
    ppt_ckpt_thread r;
    tstat *t;
    if (ppt_ckpt_thread_get(&c, &r) != 0 || !(t = get_thread(a, r.tid)))
      goto out;
    t->busy = r.busy;
    t->events = r.events;
    t->zones = r.zones;
  }
  ppt_ckpt_totals tot;
  if (ppt_ckpt_totals_get(&c, &tot) != 0)
    goto out;
  a->t0 = tot.t0;
  a->t1 = tot.t1;
  a->have_t = (int)tot.have_t;
  a->events = tot.events;
  a->pc.lost_ends = tot.lost_ends;
  a->pc.stray_ends = tot.stray_ends;
  a->pc.too_deep = tot.too_deep;
  a->pc.backwards = tot.backwards;
  a->pc.no_memory = tot.no_memory;
  a->gpu_lost = tot.gpu_lost;
  if ((k = load_count(&c, RANGE_SLOTS)) < 0)
    goto out;
  for (int64_t i = 0; i < k; i++) {
    ppt_ckpt_half r;
    pp_half b, e;
    if (ppt_ckpt_half_get(&c, &r) != 0)
      goto out;
    pp_half h = {r.id, r.ts, r.cookie, r.tid, (uint32_t)r.space,
                 (uint32_t)r.is_end};
    pp__idpairs_put(&a->ranges, &h, &b, &e);
  }
  /* the counts as saved: offering the kept halves again counts nothing
   * new, and what it would is the saved state's */
  a->ranges.c.paired = tot.paired;
  a->ranges.c.unended = tot.unended;
  a->ranges.c.unbegun = tot.unbegun;
  a->ranges.c.lost = tot.lost;
  if ((k = load_count(&c, PPT_STATS_GPU_MAX)) < 0)
    goto out;
  for (int64_t i = 0; i < k; i++)
    if (load_gpu(a, &c, &tmp) != 0)
      goto out;
  rc = c.p == c.end ? 0 : -1;
out:
  pp_hist_free(&tmp);
  return rc;
}
