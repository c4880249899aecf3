/* SPDX-License-Identifier: MIT */
/*
 * Id pairing: intervals whose begin and end are matched by an id and may
 * be recorded on different threads (ranges today; the space field keeps
 * other kinds of id apart). The stats sink, the live engine and the
 * reader's analysis all pair through it (docs/internals/pairing.md).
 *
 * Halves come in any order: the writer drains thread after thread, so an
 * end can arrive before its begin. A half is kept until its other half
 * arrives. Policy:
 *
 *   matching     a half pairs with a kept opposite half of the same space
 *                and id: the one closest in time on the right side (a
 *                begin not after the end), else the closest one (a clock
 *                difference between threads; the interval is then 0 ns).
 *                With ids unique while open, as the API asks, the order of
 *                arrival does not change any pair.
 *   duration     end - begin, at least 0.
 *   unpaired     halves still kept when the stream finishes: begins are
 *                `unended`, ends `unbegun`; neither has a duration and
 *                neither is counted in statistics.
 *   bound        at most max_open halves are kept; a half that finds no
 *                room is not kept and counted in `lost`. A long-running
 *                consumer (the live engine) expires old halves.
 *
 * Not thread-safe. Memory grows with the halves kept (48 bytes each, the
 * table at most 3/4 full), up to max_open.
 */
#ifndef PP_PAIR_INTERVALS_H
#define PP_PAIR_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

typedef struct pp_half {
  uint64_t id;     /* 0 is not an id: such halves are ignored */
  int64_t ts;
  uint64_t cookie; /* the caller's: a site, a thread */
  uint64_t tid;
  uint32_t space;
  uint32_t is_end;
} pp_half;

typedef struct pp_id_counts {
  uint64_t paired, unended, unbegun, lost;
} pp_id_counts;

typedef struct pp_id_pairs {
  pp_half *v;      /* open addressing; is_end == UINT32_MAX: empty */
  size_t cap, n;   /* slots (power of two), halves kept */
  size_t max_open;
  pp_id_counts c;
} pp_id_pairs;

void pp__idpairs_init(pp_id_pairs *p, size_t max_open);
void pp__idpairs_free(pp_id_pairs *p);
/* Offer one half. Returns 1 when it completes an interval (*begin and *end
 * are then its two halves), 0 when it is kept, -1 when it is not (id 0,
 * or no room: counted in lost). */
int pp__idpairs_put(pp_id_pairs *p, const pp_half *h, pp_half *begin,
                    pp_half *end);
/* For a consumer whose halves come in time order (a queue's pops): pair h
 * with the kept opposite half of its space and id that has waited longest
 * (the earliest on the right side: first in, first out; else the closest
 * on the wrong side), and never keep h, so that a half finding no partner
 * is counted by the caller at once. Returns 1 when paired (*begin and
 * *end set, counted in paired), 0 when not (h is not counted), -1 for id
 * 0. */
int pp__idpairs_match(pp_id_pairs *p, const pp_half *h, pp_half *begin,
                      pp_half *end);
/* Forget halves recorded before ts (a long-running process whose other
 * halves never came), counted as at the finish. Returns how many. */
size_t pp__idpairs_expire(pp_id_pairs *p, int64_t ts);
/* The stream is over: fn (may be NULL) gets every half still kept, which
 * are counted as unended or unbegun and forgotten. */
void pp__idpairs_finish(pp_id_pairs *p, void (*fn)(void *, const pp_half *),
                        void *ctx);

#endif /* PP_PAIR_INTERVALS_H */
