/* SPDX-License-Identifier: MIT */
/*
 * Zones aggregated on their own thread (stats mode; see tally.h): the
 * slow paths of the owner's inline calls, and the writer's reads.
 */
#include "tally.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arena.h"

/* ns per tick x 2^40; 2^40 (a tick is a ns) until the session says. */
_Atomic uint64_t pp__tally_mult = UINT64_C(1) << 40;

void pp__tally_set_rate(uint64_t mult) {
  if (mult)
    atomic_store_explicit(&pp__tally_mult, mult, memory_order_relaxed);
}

/* ---- the set's memory ------------------------------------------------------
 */

#define CHUNK_FIRST (64u << 10)
#define CHUNK_MAX (1u << 20)
#define ALIGN 64u

/* A chunk of at least want bytes with room for need more after its
 * header. */
static pp__tally_chunk *chunk_new(size_t need, size_t want, int durable) {
  long pg = sysconf(_SC_PAGESIZE);
  size_t page = pg > 0 ? (size_t)pg : 4096;
  size_t len = sizeof(pp__tally_chunk) + ALIGN + need;
  if (len < want)
    len = want;
  len = (len + page - 1) / page * page;
  pp__tally_chunk *c = durable ? pp__arena_alloc(len, PP__SEG_TALLY, 0) : NULL;
  uint64_t arena = c != NULL;
  if (!c && !(c = pp__calloc(1, len)))
    return NULL;
  c->len = len;
  c->used = sizeof *c;
  c->arena = arena;
  return c;
}

static void *chunk_take(pp__tally_chunk *c, size_t bytes) {
  uintptr_t at = ((uintptr_t)c + c->used + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1);
  if (at + bytes > (uintptr_t)c + c->len)
    return NULL;
  c->used = at + bytes - (uintptr_t)c;
  return (void *)at;
}

void *pp__tallies_alloc(pp__tallies *g, size_t bytes) {
  void *p = chunk_take(g->chunk, bytes);
  if (p)
    return p;
  size_t want = g->chunk->len * 2 < CHUNK_MAX ? g->chunk->len * 2 : CHUNK_MAX;
  pp__tally_chunk *c = chunk_new(bytes, want, g->durable);
  if (!c)
    return NULL;
  c->next = g->chunk;
  g->chunk = c;
  return chunk_take(c, bytes);
}

pp__tallies *pp__tallies_new(unsigned gen, int durable) {
  pp__tally_chunk *c = chunk_new(sizeof(pp__tallies), CHUNK_FIRST, durable);
  pp__tallies *g = c ? chunk_take(c, sizeof *g) : NULL;
  if (!g)
    return NULL;
  g->chunk = c;
  g->durable = durable;
  g->token = durable ? pp__arena_token() : 0;
  atomic_store_explicit(&g->gen, gen, memory_order_release);
  return g;
}

static void zero_tally(pp__tally *t) {
  for (unsigned s = 0; s < PP_HIST_SLOTS; s++) {
    _Atomic uint64_t *b = atomic_load(&t->block[s]);
    for (unsigned i = 0; b && i < PP_HIST_HALF; i++)
      pp__tally_put(&b[i], 0);
  }
  pp__tally_put(&t->min, UINT64_MAX);
  pp__tally_put(&t->max, 0);
  pp__tally_put(&t->sum_lo, 0);
  pp__tally_put(&t->sum_hi, 0);
  for (int i = 0; i < 3; i++)
    pp__tally_put(&t->sq[i], 0);
  pp__tally_put(&t->self_ns, 0);
  pp__tally_put(&t->lost, 0);
}

/* The pairing's anomaly counts, for the writer. */
static void mirror(pp__tallies *g) {
  pp__tally_put(&g->lost_ends, g->pc.lost_ends);
  pp__tally_put(&g->stray_ends, g->pc.stray_ends);
  pp__tally_put(&g->too_deep, g->pc.too_deep);
  pp__tally_put(&g->backwards, g->pc.backwards);
  pp__tally_put(&g->no_memory, g->pc.no_memory);
  pp__tally_put(&g->open, g->zs.n);
}

void pp__tallies_reset(pp__tallies *g, unsigned gen) {
  /* gen 0 first: a writer that reads the set meanwhile ignores it */
  atomic_store_explicit(&g->gen, 0, memory_order_release);
  pp__zstack_free(&g->zs);
  memset(&g->pc, 0, sizeof g->pc);
  for (pp__tally *t = atomic_load(&g->head); t; t = t->next)
    zero_tally(t);
  pp__tally_put(&g->events, 0);
  pp__tally_put(&g->busy_ticks, 0);
  pp__tally_put(&g->first_tick, 0);
  pp__tally_put(&g->last_tick, 0);
  pp__tally_put(&g->no_tally, 0);
  atomic_store_explicit(&g->pend, NULL, memory_order_relaxed);
  atomic_store_explicit(&g->taken_pass, 0, memory_order_relaxed);
  g->named = NULL; /* the next session's file numbers its sites anew */
  g->token = g->durable ? pp__arena_token() : 0;
  mirror(g);
  atomic_store_explicit(&g->gen, gen, memory_order_release);
}

void pp__tallies_free(pp__tallies *g) {
  if (!g)
    return;
  pp__zstack_free(&g->zs);
  for (pp__tally_chunk *c = g->chunk, *next; c; c = next) {
    next = c->next; /* g itself is in the oldest chunk */
    if (!c->arena)
      pp__free(c);
    else if (!pp__arena_free(c)) /* an arena this process no longer has */
      munmap(c, (size_t)c->len);
  }
}

/* Put t in the map (which has room). */
static void map_put(pp__tally **map, uint32_t mask, pp__tally *t) {
  uint32_t j = pp__tally_hash(t->loc) & mask;
  while (map[j])
    j = (j + 1) & mask;
  map[j] = t;
}

pp__tally *pp__tally_of_slow(pp__tallies *g, const pp_srcloc *loc) {
  if (g->map)
    for (uint32_t j = pp__tally_hash(loc) & g->map_mask; g->map[j];
         j = (j + 1) & g->map_mask)
      if (g->map[j]->loc == loc)
        return g->map[j];
  /* A new site: kept at most half full. */
  if (!g->map || (g->n + 1) * 2 > g->map_mask + 1) {
    uint32_t cap = g->map ? (g->map_mask + 1) * 2 : 16;
    pp__tally **m = pp__tallies_alloc(g, cap * sizeof *m);
    if (!m)
      return NULL;
    for (uint32_t j = 0; g->map && j <= g->map_mask; j++)
      if (g->map[j])
        map_put(m, cap - 1, g->map[j]);
    g->map = m; /* the old one stays in its chunk, unused: a map grows
                   to twice its size at most, so they add up to less */
    g->map_mask = cap - 1;
  }
  pp__tally *t = pp__tallies_alloc(g, sizeof *t);
  if (!t)
    return NULL;
  t->loc = loc;
  t->set = g;
  atomic_init(&t->min, UINT64_MAX);
  t->next = atomic_load_explicit(&g->head, memory_order_relaxed);
  map_put(g->map, g->map_mask, t);
  g->n++;
  atomic_store_explicit(&g->head, t, memory_order_release);
  return t;
}

_Atomic uint64_t *pp__tally_block_new(pp__tally *t, unsigned s) {
  _Atomic uint64_t *b = pp__tallies_alloc(t->set, PP_HIST_HALF * sizeof *b);
  if (b)
    atomic_store_explicit(&t->block[s], b, memory_order_release);
  return b;
}

static void first_event(pp__tallies *g, int64_t ts) {
  if (!pp__tally_get(&g->first_tick))
    pp__tally_put(&g->first_tick, ts > 0 ? (uint64_t)ts : 1);
}

void pp__tally_begin_slow(pp__tallies *g, const pp_srcloc *loc, int64_t ts,
                          pp__tally *t) {
  first_event(g, ts);
  pp__zstack_begin(&g->zs, (uint64_t)(uintptr_t)loc, ts, (uint64_t)(uintptr_t)t,
                   &g->pc);
  pp__tally_add(&g->events, 1);
  pp__tally_put(&g->last_tick, (uint64_t)g->zs.last);
  mirror(g);
}

/* A zone the general pairing closed (pair/zones.h): counted only with its
 * own end. */
static void closed(void *ctx, const pp_zone_closed *z) {
  pp__tallies *g = ctx;
  if (!z->depth)
    pp__tally_add(&g->busy_ticks, (uint64_t)z->covered);
  if (!pp__zone_counts(z))
    return;
  pp__tally *t = (pp__tally *)(uintptr_t)z->cookie;
  if (!t) {
    pp__tally_add(&g->no_tally, 1);
    return;
  }
  pp__tally_record(t, (uint64_t)z->dur, (uint64_t)z->self);
}

void pp__tally_end_slow(pp__tallies *g, const pp_srcloc *loc, int64_t ts) {
  first_event(g, ts);
  pp__zstack_end(&g->zs, (uint64_t)(uintptr_t)loc, ts, &g->pc, closed, g);
  pp__zstack_trim(&g->zs);
  pp__tally_add(&g->events, 1);
  pp__tally_put(&g->last_tick, (uint64_t)g->zs.last);
  mirror(g);
}

void pp__tallies_finish_dead(pp__tallies *g) {
  pp__zstack_finish(&g->zs, g->zs.last, &g->pc, closed, g);
  pp__tally *t = atomic_load_explicit(&g->pend, memory_order_relaxed);
  if (t)
    pp__tally_record(t, pp__tally_get(&g->pend_dur),
                     pp__tally_get(&g->pend_self));
  atomic_store_explicit(&g->pend, NULL, memory_order_relaxed);
  mirror(g);
}

pp__tally *pp__tallies_pending(const pp__tallies *g, uint64_t *ns,
                               uint64_t *self_ns) {
  pp__tally *t = atomic_load_explicit(&g->pend, memory_order_relaxed);
  *ns = pp__tally_ns(pp__tally_get(&g->pend_dur));
  *self_ns = pp__tally_ns(pp__tally_get(&g->pend_self));
  return t;
}

/* ---- the writer ---------------------------------------------------------- */

void pp__tally_read_now(const pp__tally *t, pp__tally_read *r) {
  r->min = pp__tally_get(&t->min);
  r->max = pp__tally_get(&t->max);
  r->sum_lo = pp__tally_get(&t->sum_lo);
  r->sum_hi = pp__tally_get(&t->sum_hi);
  for (int i = 0; i < 3; i++)
    r->sq[i] = pp__tally_get(&t->sq[i]);
  r->self_ns = pp__tally_get(&t->self_ns);
  r->lost = pp__tally_get(&t->lost);
  r->count = 0;
  for (unsigned s = 0; s < PP_HIST_SLOTS; s++) {
    const _Atomic uint64_t *b = pp__tally_block(t, s);
    for (unsigned i = 0; b && i < PP_HIST_HALF; i++)
      r->count += pp__tally_get(&b[i]);
  }
}

int pp__tally_merge_into(const pp__tally *t, const pp__tally_read *r,
                         pp_hist *h) {
  uint64_t c[PP_HIST_HALF];
  uint64_t lo = UINT64_MAX, hi = 0, n = 0; /* values of the ends' buckets */
  int rc = 0;
  for (unsigned s = 0; s < PP_HIST_SLOTS; s++) {
    const _Atomic uint64_t *b = pp__tally_block(t, s);
    if (!b)
      continue;
    uint64_t sum = 0;
    for (unsigned i = 0; i < PP_HIST_HALF; i++) {
      c[i] = pp__tally_get(&b[i]);
      if (c[i]) {
        uint64_t v = pp_hist_slot_value(s, i);
        if (v < lo)
          lo = v;
        if (v > hi)
          hi = v;
      }
      sum += c[i];
    }
    if (pp_hist_add_slot(h, s, c) != 0) {
      h->lost = pp__add_sat_u64(h->lost, sum);
      rc = -1;
    }
    n += sum;
  }
  if (!n)
    return rc;
  /* The owner may have counted a zone whose extremes it has not stored
   * yet (a running thread): keep min and max in their buckets, as every
   * histogram's are. */
  uint64_t min = r->min, max = r->max;
  if (min < pp_hist_lowest_equivalent(lo) ||
      min > pp_hist_highest_equivalent(lo))
    min = lo;
  if (max < pp_hist_lowest_equivalent(hi) ||
      max > pp_hist_highest_equivalent(hi))
    max = pp_hist_highest_equivalent(hi);
  pp_hist_add_moments(h, min, max, r->sum_lo, r->sum_hi, r->sq);
  h->lost = pp__add_sat_u64(h->lost, r->lost);
  return rc;
}
