/* SPDX-License-Identifier: MIT */
/*
 * Where the writer thread sends what it drains: one interface that every
 * sink implements (as curl's client writers share one). The sinks:
 *
 *   trace   EVENTS chunks in the session's file, or in a flight dump
 *           (sink/trace.c)
 *   stats   per-site statistics written as one STATS chunk at the end
 *           (sink/stats_sink.c over sink/stats.c, which the tools share)
 *   live    rolling windows, anomalies and alerts (sink/live.c)
 *   flight  the newest GPU zones, kept for a dump (sink/flight.c); the
 *           rings themselves are the flight recorder's events
 *
 * The writer (core/writer.c) chooses the sinks for the session's mode
 * (trace: trace + live; stats: stats + live; flight: live + flight) and
 * calls, in this order each pass: gpu() with the GPU zones resolved,
 * thread() for threads new or renamed, slots() for each thread's new ring
 * slots (in blocks, each sink in turn over the same block, so the second
 * reads it from the cache), drops(), in stats mode tallies() for the zones
 * threads aggregated themselves, pass_end(); after the last pass
 * finish(). A NULL entry is a call the sink does not take. The file's own
 * chunks (META, THREAD, CLOCK, DROPS, CUDA, the anomalies and alerts, END)
 * are the writer's, not a sink's.
 *
 * Every call comes from the writer thread (or a flight dump holding the
 * writer's lock); sinks are not thread-safe.
 */
#ifndef PP_SINK_SINK_H
#define PP_SINK_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "../ring/gpu_rec.h"
#include "../ring/ring.h"
#include "../format/pptrace.h"

/* Ticks to CLOCK_MONOTONIC ns from the session's first clock point at the
 * writer's running rate (the reader interpolates between clock points
 * instead). The rate is kept in fixed point, ns per tick times 2^40: a
 * multiply and a shift per event where a conversion to double and back
 * was the live sink's largest cost. Exact when a tick is a nanosecond
 * (the monotonic clock); with the TSC it is off by under 1 ns after 10^12
 * ticks (about 5 minutes at 3 GHz) from the first clock point. */
typedef struct pp__clockmap {
  uint64_t tick0;
  int64_t ns0;
  double ns_per_tick;
  uint64_t mult; /* ns_per_tick * 2^PP__CLOCKMAP_SHIFT, rounded */
} pp__clockmap;

#define PP__CLOCKMAP_SHIFT 40

static inline pp__clockmap pp__clockmap_make(uint64_t tick0, int64_t ns0,
                                             double ns_per_tick) {
  pp__clockmap m = {tick0, ns0, ns_per_tick, 0};
  double mult = ns_per_tick * (double)(UINT64_C(1) << PP__CLOCKMAP_SHIFT);
  /* below 2^63 (a tick of up to 8 ms): one signed product converts */
  m.mult = mult > 0 && mult < 9.2e18 ? (uint64_t)(mult + 0.5) : 0;
  return m;
}

#ifdef __SIZEOF_INT128__
__extension__ typedef __int128 pp__i128;
static inline int64_t pp__clockmap_ns(const pp__clockmap *m, uint64_t t) {
  int64_t d = (int64_t)(t - m->tick0);
  pp__i128 p = (pp__i128)d * (pp__i128)(int64_t)m->mult;
  /* an arithmetic shift: ticks before tick0 round down, where the double
   * conversion truncated toward 0; both are within a nanosecond */
  return m->ns0 + (int64_t)(p >> PP__CLOCKMAP_SHIFT);
}
#else
static inline int64_t pp__clockmap_ns(const pp__clockmap *m, uint64_t t) {
  return m->ns0 + (int64_t)((double)(int64_t)(t - m->tick0) * m->ns_per_tick);
}
#endif

/* Slots [from, to) of one thread's ring (indices taken modulo mask + 1; a
 * copy has mask UINT64_MAX). */
typedef struct pp__slots {
  uint64_t tid;
  const pp__slot *ring;
  uint64_t mask;
  uint64_t from, to;
  int last; /* the thread's last block of this pass */
  pp__clockmap clock;
} pp__slots;

/* Where the slots from i on stop being contiguous in memory: stop, or
 * the ring's wrap before it (a copy never wraps). For loops that walk
 * slots by pointer. */
static inline uint64_t pp__slots_contig_end(const pp__slots *s, uint64_t i,
                                            uint64_t stop) {
  if (s->mask != UINT64_MAX) {
    uint64_t wrap = i + (s->mask + 1 - (i & s->mask));
    if (stop > wrap)
      stop = wrap;
  }
  return stop;
}

/* One event read from a ring. */
typedef struct pp__slot_ev {
  unsigned type;
  const pp_srcloc *loc;
  uint64_t ts, value, extra;
} pp__slot_ev;

/* Read the event at slot *i of s into e and move *i past it. Returns 1 for
 * an event, 0 for a slot to skip (a continuation or an unknown type), -1
 * when its value slot is past s->to (stop there). Relaxed loads: a flight
 * ring may be written meanwhile (the caller rechecks). */
static inline int pp__slot_read(const pp__slots *s, uint64_t *i,
                                pp__slot_ev *e) {
  const pp__slot *p = &s->ring[*i & s->mask];
  e->ts = atomic_load_explicit(&p->ts, memory_order_relaxed);
  uint64_t a = atomic_load_explicit(&p->a, memory_order_relaxed);
  e->type = (unsigned)(a >> PP__TAG_SHIFT);
  e->loc = (const pp_srcloc *)(uintptr_t)(a & PP__PTR_MASK);
  e->value = e->extra = 0;
  ++*i;
  if (e->type == PPT_SLOT_CONT || !ppt_type_known(e->type))
    return 0;
  if (ppt_has_value(e->type)) {
    if (*i >= s->to)
      return -1;
    const pp__slot *v = &s->ring[*i & s->mask];
    e->value = atomic_load_explicit(&v->ts, memory_order_relaxed);
    e->extra = atomic_load_explicit(&v->a, memory_order_relaxed) & PP__PTR_MASK;
    ++*i;
  }
  return 1;
}

/* One anomaly or alert (docs/live.md), as the live engine queues it for
 * the writer to record and dispatch. */
typedef struct pp__note {
  int type; /* PPT_EV_ANOMALY or PPT_EV_ALERT */
  int64_t ns;
  char what[16];
  char which[64];
  char message[256];
  double value, baseline, spread, threshold;
} pp__note;

/* A note as the public pp_alert (its strings point into the note). */
static inline pp_alert pp__note_alert(const pp__note *nt) {
  pp_alert a = {sizeof a,
                nt->type == PPT_EV_ANOMALY ? PP_ALERT_ANOMALY
                                           : PP_ALERT_RESOURCE,
                nt->what,
                nt->which,
                nt->message,
                nt->value,
                nt->baseline,
                nt->spread,
                nt->threshold,
                nt->ns};
  return a;
}

/* Where a block of at most max slots starting at from ends, given that
 * the slots end at to: never between the two slots of an event (the
 * block then takes one slot more). */
static inline uint64_t pp__slots_block_end(const pp__slot *ring,
                                           uint64_t mask, uint64_t from,
                                           uint64_t to, uint64_t max) {
  if (to - from <= max)
    return to;
  uint64_t end = from + max;
  uint64_t a =
      atomic_load_explicit(&ring[(end - 1) & mask].a, memory_order_relaxed);
  if (ppt_has_value((unsigned)(a >> PP__TAG_SHIFT)))
    end++;
  return end;
}

typedef struct pp__sink pp__sink;
struct pp__tallies;

enum { PP__TALLY_TICK, PP__TALLY_EXIT, PP__TALLY_FINAL };

typedef struct pp__sink_ops {
  const char *name;
  void (*thread)(pp__sink *k, uint64_t tid, const char *name);
  /* Returns the events it took (counted in the file's END by the writer
   * for the sink that writes them). */
  uint64_t (*slots)(pp__sink *k, const pp__slots *s);
  void (*drops)(pp__sink *k, uint64_t tid, uint64_t n);
  /* The GPU zones resolved this pass (the sink may reorder them); clock
   * at the rate the resolver placed them with. */
  void (*gpu)(pp__sink *k, pp__gpu_rec *recs, size_t n,
              const pp__clockmap *clock);
  /* Stats mode: the zones thread tid aggregated itself (ring/tally.h),
   * for why: PP__TALLY_TICK a live interval ended since the last look;
   * PP__TALLY_EXIT the thread is dead (its set's last look: it is freed
   * after); PP__TALLY_FINAL the session ends (the thread may still run).
   * clock converts the set's ticks. */
  void (*tallies)(pp__sink *k, uint64_t tid, struct pp__tallies *g, int why,
                  const pp__clockmap *clock);
  void (*pass_end)(pp__sink *k, int64_t now_ns, int final);
  /* The durable arena's checkpoint of what the sink holds, appended to
   * out (stats mode: its aggregate; ring/arena.h), after a pass. */
  void (*checkpoint)(pp__sink *k, ppt_buf *out);
  /* After the last pass: write what the sink holds (end_ns: now). */
  void (*finish)(pp__sink *k, int64_t end_ns);
  void (*free)(pp__sink *k);
} pp__sink_ops;

struct pp__sink {
  const pp__sink_ops *ops;
};

#endif /* PP_SINK_SINK_H */
