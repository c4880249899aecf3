/* SPDX-License-Identifier: MIT */
/*
 * The live board: the latest state of the program's counters, the
 * library's sampled metrics (metrics/registry.h), frame marks and queues,
 * for the HTTP endpoint's /metrics and /api/v1 (docs/http.md). The live
 * engine (live.h) feeds it the drained events on the writer thread and
 * publishes it once per interval; readers on any thread walk the
 * published copy under the board's lock, held for microseconds.
 *
 * Bounded: at most PP__BOARD_MAX entries; events of further sites are
 * counted in `left_out`, which the readers show.
 */
#ifndef PP_SINK_BOARD_H
#define PP_SINK_BOARD_H

#include <stddef.h>
#include <stdint.h>

#include "../stats/depth.h"
#include "pipeprof.h"

#define PP__BOARD_MAX 4096u

typedef enum pp__board_kind {
  PP__BOARD_COUNTER = 1, /* a program's counter (PP_COUNTER_*) */
  PP__BOARD_METRIC = 2,  /* a metric the library sampled */
  PP__BOARD_FRAME = 3,   /* a frame-mark site */
  PP__BOARD_QUEUE = 4    /* a queue (pp_queue_*) */
} pp__board_kind;

typedef struct pp__board_entry {
  const char *name;          /* the site's: lives until the process exits */
  int kind;                  /* pp__board_kind */
  int is_float;              /* counters: a value was set as a double */
  int not_total;             /* counters: a value was set, or a delta was
                                negative: not a running total (a counter
                                only ever added to, by non-negative deltas,
                                is one: Prometheus's "counter") */
  int64_t first_ns, last_ns; /* first and last event (CLOCK_MONOTONIC) */
  uint64_t events;           /* counter events, frame marks, queue pushes */
  double value;      /* counters, metrics: the value; queues: the depth */
  uint64_t pops;     /* queues: pops */
  uint64_t waits[2]; /* queues: recorded waits on full, on empty */
  int64_t wait_ns[2]; /* queues: time of those waits that ended */
  int64_t open_ns[2]; /* queues: time so far of those still open, as of
                         the publish (0 between publishes) */
  uint32_t waiters[2]; /* queues: threads that waited on full, on empty */
  double lo, hi;     /* the value's range since the last publish (the
                        value alone when no event came) */
  double vmin, vmax, vsum; /* counters, metrics: the values' range and sum
                              over the session (mean: vsum / events) */
  /* queues: their stages as declared ("" when not) and their depth over
   * the session, capacity included (the analysis's computation) */
  const char *from, *to;
  pp_depth depth;
} pp__board_entry;

/* One point of an entry's history: its value at a publish and the range
 * it took since the publish before. */
typedef struct pp__board_point {
  int64_t t_ns;
  double value, lo, hi;
} pp__board_point;
#define PP__BOARD_POINTS 120u

/* One interval of a live series's history (live.h): the interval's end,
 * and the count, median and maximum of its values. */
typedef struct pp__live_point {
  int64_t end_ns;
  uint64_t count, p50_ns, max_ns;
} pp__live_point;

typedef struct pp__board pp__board;

pp__board *pp__board_new(void);
void pp__board_free(pp__board *b);
/* A queue wait of one thread (why: 1 full, 2 empty) lasting ns: ended,
 * or still open at the next publish (begun at open_since: counted up to
 * the queue's last event at most, the end of the window its share is
 * of, as the analysis closes a wait left open); new_waiter when the
 * thread never waited so on this queue before. Writer thread. */
void pp__board_wait(pp__board *b, const pp_srcloc *loc, int why,
                    int64_t open_since, int64_t ns, int ended,
                    int new_waiter);
/* One drained event of a counter, frame or queue site (other types are
 * ignored). Returns the site's previous last event time (0: none), which
 * the live engine turns into frame times. Writer thread. */
int64_t pp__board_event(pp__board *b, unsigned type, const pp_srcloc *loc,
                        int64_t ns, uint64_t value, uint64_t extra);
/* Keep the last PP__BOARD_POINTS publishes of every entry. Writer
 * thread. */
void pp__board_history_on(pp__board *b);
/* Make what the events built visible to readers, as of at_ns (the end of
 * the live interval closed last). Writer thread. */
void pp__board_publish(pp__board *b, int64_t at_ns);
/* Call fn for every published entry (in the order first seen) under the
 * board's lock; fn must not call back into the library. Returns the
 * number of sites left out (PP__BOARD_MAX reached). Any thread. */
uint64_t pp__board_visit(pp__board *b,
                         void (*fn)(void *ctx, const pp__board_entry *e),
                         void *ctx);

/* Call fn for every entry with history, its points oldest first, under
 * the board's lock. Any thread. */
void pp__board_history(pp__board *b,
                       void (*fn)(void *ctx, const pp__board_entry *e,
                                  const pp__board_point *pts, size_t n),
                       void *ctx);

#endif /* PP_SINK_BOARD_H */
