/* SPDX-License-Identifier: MIT */
/*
 * Stats mode: the writer feeds every drained event (already in ns) to an
 * aggregate that keeps per-zone duration and self-time histograms, per
 * thread busy time, frame-time histograms and counter summaries, and writes
 * them as one STATS chunk at the end. The writer also feeds it every
 * resolved GPU zone (pp__aggregate_gpu): per site, device and stream, a
 * count, a total and a duration histogram. Memory is bounded by the number
 * of distinct sites, threads and (site, device, stream) keys, not by the
 * number of events; GPU zones of keys past PPT_STATS_GPU_MAX are counted,
 * not kept.
 *
 * Not thread-safe: only the writer thread touches it.
 */
#ifndef PP_SINK_STATS_H
#define PP_SINK_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "../format/pptrace.h"
#include "../pair/zones.h"
#include "../stats/histogram.h"
#include "pipeprof.h"

typedef struct pp__aggregate pp__aggregate;

pp__aggregate *pp__aggregate_new(void);
void pp__aggregate_free(pp__aggregate *a);
void pp__aggregate_define(pp__aggregate *a, uint32_t id, const pp_srcloc *p);
void pp__aggregate_thread(pp__aggregate *a, uint64_t tid, const char *name);
/* One event of thread tid: type (PPT_EV_*), site id, time in ns, value
 * word (a counter's bits, a range's id). */
void pp__aggregate_event(pp__aggregate *a, uint64_t tid, unsigned type,
                         uint32_t id, int64_t ns, uint64_t value);

/* A batch of events of one thread, in its recording order: what n calls
 * of pp__aggregate_event would do, with the thread looked up once and the
 * trace's first and last times updated once (the one code path:
 * pp__aggregate_event is a batch of one). Both the stats sink and the
 * tools' stream (analyze/stream.c) feed their events this way. */
typedef struct pp__agg_ev {
  uint32_t type, id;
  int64_t ns;
  uint64_t value;
} pp__agg_ev;

void pp__aggregate_events(pp__aggregate *a, uint64_t tid,
                          const pp__agg_ev *ev, size_t n);
void pp__aggregate_drops(pp__aggregate *a, uint64_t tid, uint64_t n);
/* One resolved GPU zone of site id (already defined) on device/stream,
 * launched by thread tid at launch_ns, run on the GPU from start_ns for
 * dur_ns (times CLOCK_MONOTONIC ns). */
void pp__aggregate_gpu(pp__aggregate *a, uint32_t id, uint32_t device,
                       uint64_t stream, uint64_t tid, int64_t launch_ns,
                       int64_t start_ns, uint64_t dur_ns);
/* Stats mode's zones, aggregated on their own thread (ring/tally.h) and
 * handed over when the thread exits or the session ends: the zones of
 * site id that thread tid closed, as a histogram of their durations
 * (exact moments; its count is theirs), and their summed self time. */
void pp__aggregate_zones(pp__aggregate *a, uint64_t tid, uint32_t id,
                         const pp_hist *dur, uint64_t self_ns);
/* ...and that thread's totals: what the pairing counted (pair/zones.h;
 * `zones` unused: the histograms hold them), its time inside outermost
 * zones, the zone events it took and the times of its first and last. */
typedef struct pp__agg_thread {
  uint64_t busy_ns, events;
  int64_t first_ns, last_ns; /* valid when events > 0 */
  pp_pair_counts pc;
} pp__agg_thread;
void pp__aggregate_thread_zones(pp__aggregate *a, uint64_t tid,
                                const pp__agg_thread *x);
/* What the figures take, value by value, for a consumer that follows
 * them over time (the tools' chart series, analyze/series.h): each
 * counted zone or range of site id as it closes (end and duration, ns),
 * each frame time of a frame series (the mark's time and the gap to the
 * previous mark of that series) and each value of a counter series (its
 * time and the series's value after it, ADD applied). A series is named
 * by its first site (the alias prof.frames and prof.counters carry).
 * Members may be NULL; the library's stats sink sets none. */
typedef struct pp__agg_observer {
  void (*zone)(void *arg, uint32_t id, int64_t end_ns, uint64_t dur_ns);
  void (*frame)(void *arg, uint32_t id, int64_t ns, int64_t dt_ns);
  void (*counter)(void *arg, uint32_t id, int64_t ns, double v);
  void *arg;
} pp__agg_observer;
void pp__aggregate_observe(pp__aggregate *a, const pp__agg_observer *o);
/* Close zones still open at end_ns. */
void pp__aggregate_finish(pp__aggregate *a, int64_t end_ns);
/* The STATS chunk payload (docs/formats/pptrace.md). */
void pp__aggregate_encode(const pp__aggregate *a, ppt_buf *out);

/* The durable arena's checkpoint (docs/internals/durable.md): the whole
 * state of a, saved so that pp__aggregate_load into a fresh aggregate
 * (its sites defined first, for their names) makes the same one: every
 * site's figures with its histogram's exact moments, the threads, the
 * totals and pairing counts, the range halves still waiting for their
 * other half and the GPU zones. Open zone stacks are not saved (stats
 * mode's zones are counted on their threads, ring/tally.h). */
void pp__aggregate_save(const pp__aggregate *a, ppt_buf *out);
/* 0, or -1 when p is not a whole checkpoint (a keeps what was loaded). */
int pp__aggregate_load(pp__aggregate *a, const unsigned char *p, size_t n);

#endif /* PP_SINK_STATS_H */
