/* SPDX-License-Identifier: MIT */
/*
 * The live-statistics engine of a session (docs/live.md). The writer
 * thread feeds it every drained event (already in ns) and ticks it after
 * each pass; it pairs zone begins/ends per thread, ranges and requests by
 * id, keeps a rolling window per zone name and for request E2E and TTFT,
 * closes an interval once its end is a grace period in the past, runs the
 * median/MAD detectors on the closed interval's p99 and rate, watches the
 * sampler's counters for resource pressure, and queues one note per
 * anomaly or alert episode for the writer to write and dispatch.
 *
 * Threads: everything but pp__live_query() runs on the writer thread
 * (which owns the engine); pp__live_query() may be called from any thread
 * and only touches the published snapshots, under the engine's lock.
 */
#ifndef PP_SINK_LIVE_H
#define PP_SINK_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "../stats/live.h"
#include "board.h"
#include "pipeprof.h"
#include "sink.h"

typedef struct pp__live_cfg {
  int on;               /* 0: PIPEPROF_LIVE=off */
  int64_t interval_ns;  /* default 1 s */
  int64_t grace_ns;     /* close an interval this long after its end */
  double k;             /* detector threshold in robust sigmas, default 5 */
  unsigned history;     /* intervals of history per detector, default 60 */
  unsigned min_values;  /* history needed before flagging, default 10 */
  double floor_rel;     /* MAD floor relative to the median, default 0.05 */
  double tau_s;         /* EWMA time constant, default 10 s */
  /* alerts (PIPEPROF_ALERTS); a negative threshold or 0 flag: off */
  double mem_pct;       /* memory used >= this % of total, default 90 */
  int swap;             /* swap in use and growing, default on */
  double psi_pct;       /* PSI some avg10 >= this %, default 10 */
  int throttle;         /* CPU thermal throttle count rising, default on */
  double gpu_mem_pct;   /* GPU memory used >= this %, default 95 */
} pp__live_cfg;

void pp__live_cfg_default(pp__live_cfg *c);
/* Parse PIPEPROF_LIVE ("off", or comma-separated interval=1s, k=5,
 * history=60, min=10, floor=5%, tau=10s) into c. Returns 0, or -1 with a
 * one-line reason in err. */
int pp__live_parse(const char *spec, pp__live_cfg *c, char *err, size_t n);
/* Parse PIPEPROF_ALERTS ("off", or mem=90%, swap=on, psi=10%,
 * throttle=on, gpu_mem=95%; each also "off"). */
int pp__alerts_parse(const char *spec, pp__live_cfg *c, char *err, size_t n);

/* One anomaly or alert, as queued for the writer. */
typedef pp__note pp__live_note;

typedef struct pp__live pp__live;

/* origin_ns: the session start (interval 0 begins there). NULL when out of
 * memory or cfg->on is 0. */
pp__live *pp__live_new(const pp__live_cfg *cfg, int64_t origin_ns);
void pp__live_free(pp__live *l);
/* The engine as the writer's live sink (slots: every event to
 * pp__live_event). */
pp__sink *pp__live_sink(pp__live *l);
/* One drained event (types of enum ppt_event_type); extra as in the ring. */
void pp__live_event(pp__live *l, uint64_t tid, unsigned type,
                    const pp_srcloc *loc, int64_t ns, uint64_t value,
                    uint64_t extra);
/* Stats mode: whether a live interval has ended since the last call that
 * said so (the writer then shows the engine every thread's tallies). */
int pp__live_tally_due(pp__live *l, int64_t now_ns);
/* Close every interval that ended more than grace before now. */
void pp__live_tick(pp__live *l, int64_t now_ns);
/* Every event up to now has been drained (a sync pass, or the last one):
 * publish each series's session window (pp__live_query's window 0) as of
 * now, the intervals not closed yet included, with requests that ended
 * before now settled. The windows of 1, 10 and 60 intervals stay those of
 * the last closed interval. */
void pp__live_publish_now(pp__live *l, int64_t now_ns);
/* Notes queued since the last call: up to max copied into out, returns how
 * many (the rest stay queued). */
size_t pp__live_take(pp__live *l, pp__live_note *out, size_t max);
/* The last notes of the session (oldest first; at most PP__LIVE_KEEP), for
 * flight dumps. */
#define PP__LIVE_KEEP 64u
size_t pp__live_recent(const pp__live *l, pp__live_note *out, size_t max);
/* The kinds of series: a zone (or range) by name; the requests' E2E,
 * TTFT, TPOT and ITL (docs/formats/summary-json.md#requests); a queue's
 * item waits (push to pop) by the queue's name. */
enum {
  PP__LIVE_ZONE = 0,
  PP__LIVE_E2E = 1,
  PP__LIVE_TTFT = 2,
  PP__LIVE_TPOT = 3,
  PP__LIVE_ITL = 4,
  PP__LIVE_QWAIT = 5,
  PP__LIVE_FRAME = 6 /* frame times (gaps between marks) by stream name */
};
/* Query the snapshot (any thread): the series of kind (PP__LIVE_*; name
 * for zones and queues). window_s 1, 10, 60, or 0 for the session. */
int pp__live_query(pp__live *l, int kind, const char *name, int window_s,
                   pp_live_stats *out);
/* The session's histogram of a series (kind as pp__live_query's): every
 * value of the intervals closed so far, copied into out (initialised by
 * the caller). PP_OK, PP_EINVAL (no such series), PP_ENOMEM, PP_ENOTSUP
 * (NULL engine). Any thread, under the engine's lock. */
int pp__live_hist(pp__live *l, int kind, const char *name, pp_lhist *out);
/* The i-th zone name (0-based, in the order first seen) copied into buf of
 * size bytes (buf not NULL, size > 0; any thread, under the engine's
 * lock): PP_OK, PP_EINVAL past the last name, PP_ENOTSUP for a NULL
 * engine. A name longer than size - 1 bytes is cut. */
int pp__live_zone_name(pp__live *l, size_t i, char *buf, size_t size);

/* The session's values of a series (kind and name as pp__live_query's)
 * split at v (pp_lhist_split): *count all, *below at or below v, *at in
 * v's own bucket. The running engine's as of its last publish (window 0's),
 * or the ended session's. PP_OK, PP_EINVAL (no such series), PP_ENOTSUP
 * (NULL engine). Any thread, under the engine's lock. */
int pp__live_split(pp__live *l, int kind, const char *name, uint64_t v,
                   uint64_t *count, uint64_t *below, uint64_t *at);

/* Call fn for every series published so far, with its windows 1, 10, 60
 * and the session's (in that order), under the engine's lock: fn must be
 * quick and must not call into the library. Any thread. */
typedef void (*pp__live_visit_fn)(void *ctx, int kind, const char *name,
                                  const pp_live_stats win[4]);
void pp__live_visit(pp__live *l, pp__live_visit_fn fn, void *ctx);
/* Walk the published board (board.h); returns the sites left out. */
uint64_t pp__live_board(pp__live *l,
                        void (*fn)(void *ctx, const pp__board_entry *e),
                        void *ctx);
/* The session's last anomalies and alerts, as pp__live_recent, for any
 * thread. */
size_t pp__live_alerts(pp__live *l, pp__live_note *out, size_t max);

/* History for live charts (the HTTP endpoint turns it on): each series's
 * last PP__LIVE_POINTS intervals, and the board's (board.h). Off, it costs
 * nothing. Writer thread, before the first interval closes. */
#define PP__LIVE_POINTS 120u
void pp__live_history_on(pp__live *l);
/* Call fn for each series with points, oldest first, under the engine's
 * lock. Any thread. */
typedef void (*pp__live_history_fn)(void *ctx, int kind, const char *name,
                                    const pp__live_point *pts, size_t n);
void pp__live_history(pp__live *l, pp__live_history_fn fn, void *ctx);
/* The board's history (board.h). Any thread. */
void pp__live_board_history(pp__live *l,
                            void (*fn)(void *ctx, const pp__board_entry *e,
                                       const pp__board_point *pts, size_t n),
                            void *ctx);

#endif /* PP_SINK_LIVE_H */
