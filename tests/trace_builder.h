/* SPDX-License-Identifier: MIT */
/*
 * Building pp_trace objects by hand for tests: sites, threads, events and
 * metadata, allocated as the reader allocates them so that pp_trace_free()
 * releases everything. Allocation failures fail the running test.
 */
#ifndef PP_TRACE_BUILDER_H
#define PP_TRACE_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"
#include "pipeprof.h"

char *tb_strdup(const char *s);
/* Grow p (cap elements of elem bytes) to hold need; new space zeroed. */
void *tb_grow(void *p, size_t *cap, size_t need, size_t elem);
/* A site named name of kind (pp_kind); returns its id. */
uint32_t tb_loc(pp_trace *t, const char *name, uint32_t kind);
/* A thread; returns its index. */
size_t tb_thread(pp_trace *t, uint64_t tid, const char *name);
/* An event on thread thi; returns it so the caller can set values. */
pp_event *tb_ev(pp_trace *t, size_t thi, int64_t ts, uint32_t loc,
                uint8_t type);
void tb_meta(pp_trace *t, const char *key, const char *value);
/* What `pipeprof report` and the summary JSON export print for an analysed
 * t (malloc'ed; failures fail the running test). */
char *tb_report_text(const pp_analysis *a);
char *tb_summary_json(const pp_analysis *a);

/* Record one event of the calling thread at tick ts, through the
 * recorder's test hook (pp__test_record); fails the test when it is not
 * recorded. */
void tb_rec(unsigned type, const pp_srcloc *loc, int64_t ts, uint64_t value,
            uint64_t extra);

/* What a recording thread of tb_record_threads gets: its number (0 ..
 * n - 1) and the time base the test chose. */
typedef struct tb_worker {
  int k;
  int64_t base;
} tb_worker;
#define TB_MAX_WORKERS 64
/* Record a trace-mode file (1 MiB rings) at path: n (<= TB_MAX_WORKERS)
 * threads running fn on a tb_worker each; fails the test when the session
 * cannot start or end cleanly. */
void tb_record_threads(const char *path, int n, void *(*fn)(void *),
                       int64_t base);

/* The analysis's figures of th, a thread of a's trace (NULL for NULL). */
static inline const pp_thread_figures *tb_fig(const pp_analysis *a,
                                              const pp_thread *th) {
  return th ? &a->threads[th - a->trace->threads] : NULL;
}

/* A trace file written byte by byte with exact timestamps (ticks are ns:
 * tick_source monotonic, no CLOCK chunk), so the command's verdicts do not
 * depend on the machine. Zones are closed on thread 1, one instance of
 * each zone after the other; counters are set on thread 2, one value per
 * millisecond; a queue's pushes and pops are on thread 3. */
typedef struct tw_zone {
  const char *name;
  double median_ns; /* instances: median_ns (1 + spread u), u in [-1, 1] */
  double spread;
  int n;
} tw_zone;

typedef struct tw_counter {
  const char *name;
  const double *v;
  int n;
} tw_counter;

/* A bounded queue (from -> to, capacity > 0) on thread 3: cycles times,
 * items are pushed 1 ms apart until it is full, then popped 1 ms apart
 * until it is empty. */
typedef struct tw_queue {
  const char *name, *from, *to;
  int capacity;
  int cycles;
} tw_queue;

typedef struct tw_spec {
  tw_zone zones[4];
  tw_counter counters[4];
  tw_queue queue; /* none when name is NULL */
  const char *meta[8][2];
  unsigned seed;
} tw_spec;
/* Write sp to path (a trace file of format 1.x, checked by CHECKs). */
void tw_write(const char *path, const tw_spec *sp);

#endif /* PP_TRACE_BUILDER_H */
