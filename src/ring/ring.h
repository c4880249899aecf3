/* SPDX-License-Identifier: MIT */
/*
 * A thread's event ring as its two sides see it: the slot, the unit of
 * the ring, and the thread's ring state (pp__tstate). The recorder
 * (core/recorder.h) makes, fills and registers the rings; the writer and
 * its sinks (sink/sink.h, sink/flight.h) read them. Here, below both, so
 * that neither reaches into the other for them.
 *
 * Slot layout: ts = ticks; a = type << 56 | pointer to a pp_srcloc. Events
 * with a value (counters, flows) take a second slot whose `a` holds the
 * PPT_SLOT_CONT tag, so a reader starting mid-ring (flight mode) can find
 * event boundaries.
 */
#ifndef PP_RING_RING_H
#define PP_RING_RING_H

#include <stdatomic.h>
#include <stdint.h>

#define PP__TAG_SHIFT 56
#define PP__PTR_MASK ((UINT64_C(1) << PP__TAG_SHIFT) - 1)
#define PPT_SLOT_CONT 0xFFu

/* Slots are written with relaxed atomic stores (plain moves on x86-64) so
 * that a flight-mode dump reading a ring being overwritten is well defined;
 * torn events are discarded by the dumper's recheck of the write index. */
typedef struct pp__slot {
  _Atomic uint64_t ts;
  _Atomic uint64_t a;
} pp__slot;

/* A slot's word: the event's type in the top byte, its site's address
 * below (the recorder writes it; the writer's fast loops compare whole
 * words with it). */
static inline uint64_t pp__slot_tag(unsigned type, const void *p) {
  return (uint64_t)type << PP__TAG_SHIFT |
         ((uint64_t)(uintptr_t)p & PP__PTR_MASK);
}


typedef struct pp__tstate {
  /* producer cache line (the struct is page-aligned). The producer keeps
   * its own copy of ring, mask and w in its TLS (recorder.c) and only
   * stores here: w after every event, ring and mask when it maps its
   * ring, dropped on a drop. */
  _Alignas(64) pp__slot *ring;
  uint64_t mask;
  _Atomic uint64_t w;          /* published write index */
  _Atomic uint64_t dropped;    /* events not recorded (producer adds) */
  /* consumer side, on its own line: the writer stores r after each drain */
  _Alignas(64) _Atomic uint64_t r; /* writer's read index */
  /* The writer's drain of a pass not yet committed (ring/arena.h): r
   * moves to r_pending once the pass's chunks are in the file, so a
   * process killed in between loses nothing (a salvager reads from
   * r_pending when the arena's commit_pass >= pending_pass, else r). */
  uint64_t r_pending, pending_pass;
  uint64_t capacity;           /* slots */
  uint64_t tid;
  _Atomic uint64_t dead;       /* 0 while the thread runs; then its place
                                  in the order threads exited (1, 2, ...) */
  int name_dirty;              /* guarded by the registry lock */
  char name[64];               /* guarded by the registry lock */
  uint64_t written_dropped;    /* writer: last drop count written */
  int announced;               /* writer: THREAD record written */
  uint64_t live_r;             /* writer, flight mode: slots already fed to
                                  the live statistics */
  uint64_t prefaulted;         /* bytes of the ring populated: set with the
                                  ring, then advanced by the writer */
  struct pp__tstate *next;     /* registry list, guarded by its lock */
  /* stats mode: the zones the thread aggregates itself (tally.h); set by
   * the thread (release), read by the writer, freed by the writer once
   * the thread is dead */
  _Atomic(struct pp__tallies *) tallies;
} pp__tstate;

#endif /* PP_RING_RING_H */
