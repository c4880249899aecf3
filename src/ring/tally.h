/* SPDX-License-Identifier: MIT */
/*
 * Stats mode's zones, aggregated on the thread that records them
 * (docs/internals/tally.md). In trace mode a zone is two ring slots that
 * the writer pairs and aggregates; in stats mode that writer work cost
 * 2.2 times what the recording thread spent, so the recording thread
 * pairs its own zones (pair/zones.h, the policy every road shares) and
 * counts each closed zone's duration in a histogram of its own, one per
 * site it met: a tally. No ring slot is written for a zone and the writer
 * reads the tallies instead of events:
 *
 *   the stats sink   when the thread exits (its last look) and at the
 *                    session's end: counts, times, histograms, pairing
 *                    anomalies, busy time into the STATS aggregate
 *   the live engine  once per live interval: what each tally gained since
 *                    the last look is that interval's values
 *
 * A tally's counters have the layout of pp_hist (stats/histogram.h, 1024
 * counters per power of two, blocks allocated on first touch) so that it
 * merges into the aggregate's histogram exactly: a zone counts in the same
 * bucket as when the writer paired it from the ring.
 *
 * Threads: the owner thread alone writes a tally set; the writer reads the
 * fields marked "shared" with relaxed atomic loads (on x86-64 the owner's
 * relaxed stores are plain moves) while the owner may still write them, so
 * a look at a running thread sees each counter whole but not all of them
 * at one instant (a live interval may count a zone whose sum is not in
 * yet). A dead thread's set is read and freed by the writer alone.
 */
#ifndef PP_RING_TALLY_H
#define PP_RING_TALLY_H

#include <stdatomic.h>
#include <stdint.h>

#include "../internal.h"
#include "../pair/zones.h"
#include "../stats/histogram.h"
#include "pipeprof.h"

/* One site's closed zones on one thread. Durations are CLOCK_MONOTONIC ns
 * (ticks converted at the session's rate, pp__tally_set_rate). */
typedef struct pp__tally {
  const pp_srcloc *loc;
  struct pp__tally *next; /* the set's list, newest first (set before the
                             tally is published through head) */
  struct pp__tallies *set; /* whose memory its blocks come from */
  /* shared */
  _Atomic(_Atomic uint64_t *) block[PP_HIST_SLOTS]; /* PP_HIST_HALF each */
  _Atomic uint64_t min, max;                        /* of the durations */
  _Atomic uint64_t sum_lo, sum_hi;                  /* 128-bit sum */
  _Atomic uint64_t sq[3];                           /* 192-bit sum of squares */
  _Atomic uint64_t self_ns;                         /* summed self times */
  _Atomic uint64_t lost; /* zones not counted: no memory for a block */
  /* the writer's */
  void *live; /* the live engine's last look at this tally */
} pp__tally;

/* The memory of a set, in chunks (newest first): from the durable arena
 * (ring/arena.h) when the set is durable and the arena has room, so that
 * a salvager reads a killed thread's zones from the file; else from the
 * heap. Its bytes follow the header. */
typedef struct pp__tally_chunk {
  struct pp__tally_chunk *next;
  uint64_t len, used; /* bytes, header included */
  uint64_t arena;     /* 1: an arena segment (PP__SEG_TALLY) */
} pp__tally_chunk;

/* One thread's tallies. */
typedef struct pp__tallies {
  /* the owner's */
  pp__tally_chunk *chunk; /* where the set's memory comes from */
  int durable;            /* chunks from the arena when it has room */
  pp_zone_stack zs;  /* ticks */
  pp_pair_counts pc; /* mirrored below after each slow path */
  pp__tally **map;   /* open addressing by site, map_mask + 1 slots */
  uint32_t map_mask, n;
  /* shared */
  _Atomic unsigned gen;        /* the generation of pp__active it counts for;
                                  0 while the owner resets it */
  uint64_t token;              /* the session's durable token
                                  (ring/arena.h; 0: none), so that a
                                  salvager tells an earlier session's set
                                  from this one's */
  _Atomic(pp__tally *) head;   /* every tally, newest first */
  _Atomic uint64_t events;     /* zone begins and ends taken */
  _Atomic uint64_t busy_ticks; /* time inside outermost zones */
  _Atomic uint64_t first_tick, last_tick; /* first_tick 0: none yet */
  _Atomic uint64_t open;                  /* zones open now (paired ones) */
  _Atomic uint64_t lost_ends, stray_ends, too_deep, backwards, no_memory;
  _Atomic uint64_t no_tally; /* zones of sites without a tally (no
                                memory) */
  /* The zone that closed last, counted at the next end (see
   * pp__tally_end); pend NULL: none. */
  _Atomic(pp__tally *) pend;
  _Atomic uint64_t pend_dur, pend_self; /* its duration, self time:
                                           ticks */
  /* the writer's: the pass whose checkpoint holds this set's zones (it
   * merged them: the thread exited or the session ended); 0 none. A
   * salvager counts a set only when the arena's commit is older. */
  _Atomic uint64_t taken_pass;
  /* the writer's: the newest tally whose site it has recorded (durable
   * sessions name every site in the arena, for a salvager) */
  const pp__tally *named;
} pp__tallies;

/* ---- the owner ----------------------------------------------------------- */

/* A new, empty set for generation gen, its memory in the durable arena
 * when durable and the arena has room (else the heap); NULL when out of
 * memory. */
pp__tallies *pp__tallies_new(unsigned gen, int durable);
/* Zeroed memory of the set's, 64-byte aligned (freed with the set); NULL
 * when out of memory. */
void *pp__tallies_alloc(pp__tallies *g, size_t bytes);
/* Empty g for generation gen, keeping its memory (the owner, when a new
 * session starts). */
void pp__tallies_reset(pp__tallies *g, unsigned gen);

/* Slow paths of the inline calls below (not to be called otherwise). */
pp__tally *pp__tally_of_slow(pp__tallies *g, const pp_srcloc *loc);
void pp__tally_begin_slow(pp__tallies *g, const pp_srcloc *loc, int64_t ts,
                          pp__tally *t);
void pp__tally_end_slow(pp__tallies *g, const pp_srcloc *loc, int64_t ts);
_Atomic uint64_t *pp__tally_block_new(pp__tally *t, unsigned s);
extern _Atomic uint64_t pp__tally_mult;

/* The owner's additions to shared fields: plain loads and stores (only the
 * owner writes them), atomic so that the writer may read them. */
static inline void pp__tally_add(_Atomic uint64_t *a, uint64_t v) {
  atomic_store_explicit(a, atomic_load_explicit(a, memory_order_relaxed) + v,
                        memory_order_relaxed);
}
static inline uint64_t pp__tally_get(const _Atomic uint64_t *a) {
  return atomic_load_explicit(a, memory_order_relaxed);
}
static inline void pp__tally_put(_Atomic uint64_t *a, uint64_t v) {
  atomic_store_explicit(a, v, memory_order_relaxed);
}

static inline uint32_t pp__tally_hash(const pp_srcloc *loc) {
  return (uint32_t)(((uint64_t)(uintptr_t)loc * UINT64_C(0x9E3779B97F4A7C15)) >>
                    40);
}

/* The tally of loc (NULL when out of memory). */
static inline pp__tally *pp__tally_of(pp__tallies *g, const pp_srcloc *loc) {
  pp__tally *t = g->map ? g->map[pp__tally_hash(loc) & g->map_mask] : NULL;
  if (pp__likely(t && t->loc == loc))
    return t;
  return pp__tally_of_slow(g, loc);
}

/* Ticks to ns at the session's rate. */
static inline uint64_t pp__tally_ns(uint64_t ticks) {
  __extension__ unsigned __int128 ns =
      (unsigned __int128)ticks *
      atomic_load_explicit(&pp__tally_mult, memory_order_relaxed);
  return (uint64_t)(ns >> 40);
}

/* Where t counts a duration of v ns: its counter in the block of v's
 * power of two (allocated on first touch); NULL when out of memory. */
static inline _Atomic uint64_t *pp__tally_counter(pp__tally *t, uint64_t v) {
  unsigned s = 54u - (unsigned)__builtin_clzll(v | (PP_HIST_HALF - 1u));
  _Atomic uint64_t *b =
      atomic_load_explicit(&t->block[s], memory_order_relaxed);
  if (pp__unlikely(!b) && !(b = pp__tally_block_new(t, s)))
    return NULL;
  return &b[(v >> (s ? s - 1u : 0u)) & (PP_HIST_HALF - 1u)];
}

/* Count one closed zone of v ns (self ns of its own) in t at counter c
 * (pp__tally_counter's): the record of pp_hist_record, less the counts
 * it derives from counters. */
static inline void pp__tally_count(pp__tally *t, _Atomic uint64_t *c,
                                   uint64_t v, uint64_t self) {
  if (pp__unlikely(!c)) {
    pp__tally_add(&t->lost, 1);
    return;
  }
  pp__tally_add(c, 1);
  if (v < pp__tally_get(&t->min))
    pp__tally_put(&t->min, v);
  if (v > pp__tally_get(&t->max))
    pp__tally_put(&t->max, v);
  uint64_t lo = pp__tally_get(&t->sum_lo) + v;
  pp__tally_put(&t->sum_lo, lo);
  if (pp__unlikely(lo < v))
    pp__tally_add(&t->sum_hi, 1);
  __extension__ unsigned __int128 q = (unsigned __int128)v * v;
  __extension__ unsigned __int128 a =
      ((unsigned __int128)pp__tally_get(&t->sq[1]) << 64 |
       pp__tally_get(&t->sq[0])) +
      q;
  pp__tally_put(&t->sq[0], (uint64_t)a);
  pp__tally_put(&t->sq[1], (uint64_t)(a >> 64));
  if (pp__unlikely(a < q))
    pp__tally_add(&t->sq[2], 1);
  pp__tally_add(&t->self_ns, self);
}

/* A closed zone's duration and self time, in ticks, into t at once. */
static inline void pp__tally_record(pp__tally *t, uint64_t dur, uint64_t self) {
  uint64_t v = pp__tally_ns(dur);
  pp__tally_count(t, pp__tally_counter(t, v), v, pp__tally_ns(self));
}

/* A zone begin at tick ts of the owner thread. */
static inline void pp__tally_begin(pp__tallies *g, const pp_srcloc *loc,
                                   uint64_t ts) {
  pp__tally *t = pp__tally_of(g, loc);
  if (pp__unlikely(!t) ||
      pp__zstack_begin_fast(&g->zs, (uint64_t)(uintptr_t)loc, (int64_t)ts,
                            (uint64_t)(uintptr_t)t) != 0) {
    pp__tally_begin_slow(g, loc, (int64_t)ts, t);
    return;
  }
  pp__tally_add(&g->events, 1);
  pp__tally_put(&g->open, g->zs.n);
  pp__tally_put(&g->last_tick, ts);
}

/* A zone end at tick ts of the owner thread. The zone is counted at the
 * thread's next end, and the one that closed before it now: where its
 * counter lies depends on its duration, that is on the clock read just
 * now, and a store whose address waited for the clock made the next
 * zone wait for it (1.6x the floor of two clock reads and two stores,
 * where counting the previous zone, whose duration is long known, costs
 * 1.2x; docs/internals/tally.md). The writer counts a pending zone
 * itself (pp__tallies_pending). */
static inline void pp__tally_end(pp__tallies *g, const pp_srcloc *loc,
                                 uint64_t ts) {
  pp_zone_closed z;
  if (pp__unlikely(pp__zstack_end_fast(&g->zs, (uint64_t)(uintptr_t)loc,
                                       (int64_t)ts, &g->pc, &z) != 0)) {
    pp__tally_end_slow(g, loc, (int64_t)ts);
    return;
  }
  pp__tally *prev = atomic_load_explicit(&g->pend, memory_order_relaxed);
  if (pp__likely(prev != NULL))
    pp__tally_record(prev, pp__tally_get(&g->pend_dur),
                     pp__tally_get(&g->pend_self));
  pp__tally *t = (pp__tally *)(uintptr_t)z.cookie;
  atomic_store_explicit(&g->pend, t, memory_order_relaxed);
  if (pp__likely(t != NULL)) {
    pp__tally_put(&g->pend_dur, (uint64_t)z.dur);
    pp__tally_put(&g->pend_self, (uint64_t)z.self);
  } else {
    pp__tally_add(&g->no_tally, 1);
  }
  if (!z.depth)
    pp__tally_add(&g->busy_ticks, (uint64_t)z.covered);
  pp__tally_add(&g->events, 1);
  pp__tally_put(&g->open, g->zs.n);
  pp__tally_put(&g->last_tick, ts);
}

/* The session's conversion of a duration in ticks to ns: ns per tick
 * times 2^40 (sink.h's pp__clockmap.mult), stored by the session and the
 * writer, read by every closed zone. */
void pp__tally_set_rate(uint64_t mult);

/* ---- the writer ---------------------------------------------------------- */

/* Free a dead thread's set (or one of an ended session). */
void pp__tallies_free(pp__tallies *g);

/* A tally's figures as read now, ns. count 0: nothing recorded. */
typedef struct pp__tally_read {
  uint64_t count, min, max, sum_lo, sum_hi, sq[3], self_ns, lost;
} pp__tally_read;

/* Read t's figures (the counters' sum is the count). */
void pp__tally_read_now(const pp__tally *t, pp__tally_read *r);
/* The counters of slot s (PP_HIST_HALF of them) or NULL. */
static inline const _Atomic uint64_t *pp__tally_block(const pp__tally *t,
                                                      unsigned s) {
  return atomic_load_explicit(&t->block[s], memory_order_acquire);
}
/* Add t's figures to h (a pp_hist of exact moments): the counters as read,
 * the moments and extremes from r (read just before). Returns 0, or -1
 * when h could not take them (counted in h->lost). */
int pp__tally_merge_into(const pp__tally *t, const pp__tally_read *r,
                         pp_hist *h);

/* Close what a dead thread left open (the pairing's finish: lost ends,
 * their children's time to the busy time) and count its pending zone.
 * The owner is gone. */
void pp__tallies_finish_dead(pp__tallies *g);
/* The zone a running thread closed last and has not counted yet (see
 * pp__tally_end), for a look at the session's end: its tally or NULL,
 * its duration and self time (ns). */
pp__tally *pp__tallies_pending(const pp__tallies *g, uint64_t *ns,
                               uint64_t *self_ns);

#endif /* PP_RING_TALLY_H */
