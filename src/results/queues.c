/* SPDX-License-Identifier: MIT */
/*
 * The "queues" table (queues.h).
 */
#include "queues.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define BLOCKED "producer waits / blocked / share"
#define WAITED "consumer waits / waited / share"
#define WAIT "wait p50 / p99 / max"

static const pp_col cols[] = {
    {"name", "queue", PP_VALUE_TEXT, 0, NULL},
    {"from", "from", PP_VALUE_TEXT, PP_COL_JSON_ONLY, NULL},
    {"to", "to", PP_VALUE_TEXT, PP_COL_JSON_ONLY, NULL},
    {"stages", "stages", PP_VALUE_TEXT, PP_COL_DETAIL, NULL},
    {"capacity", "capacity", PP_VALUE_COUNT, PP_COL_INT, "unbounded"},
    {"window_ns", "window", PP_VALUE_NS, PP_COL_INT | PP_COL_JSON_ONLY, NULL},
    {"pushes", "items in / out", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"pops", "items in / out", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"paired", "paired", PP_VALUE_COUNT, PP_COL_INT | PP_COL_JSON_ONLY, NULL},
    {"unmatched_pops", "unmatched pops", PP_VALUE_COUNT,
     PP_COL_INT | PP_COL_JSON_ONLY, NULL},
    {"items_untracked", "items untracked", PP_VALUE_COUNT,
     PP_COL_INT | PP_COL_JSON_ONLY, NULL},
    {"in_per_s", "rate in / out", PP_VALUE_RATE, 0, NULL},
    {"out_per_s", "rate in / out", PP_VALUE_RATE, 0, NULL},
    {"depth.min", "depth min", PP_VALUE_COUNT, PP_COL_INT | PP_COL_JSON_ONLY,
     NULL},
    {"depth.mean", "depth mean / max", PP_VALUE_NUMBER, 0, NULL},
    {"depth.max", "depth mean / max", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"depth.last", "depth last", PP_VALUE_COUNT, PP_COL_INT | PP_COL_JSON_ONLY,
     NULL},
    {"full_ns", "full time", PP_VALUE_NS, PP_COL_INT | PP_COL_JSON_ONLY, NULL},
    {"full_pct", "full", PP_VALUE_PCT, PP_COL_BAR, NULL},
    {"empty_ns", "empty time", PP_VALUE_NS, PP_COL_INT | PP_COL_JSON_ONLY,
     NULL},
    {"empty_pct", "empty", PP_VALUE_PCT, PP_COL_BAR, NULL},
    {"producer_waits", BLOCKED, PP_VALUE_COUNT, PP_COL_INT | PP_COL_DETAIL,
     NULL},
    {"producer_blocked_ns", BLOCKED, PP_VALUE_NS, PP_COL_INT | PP_COL_DETAIL,
     NULL},
    {"producer_blocked_pct", BLOCKED, PP_VALUE_PCT, PP_COL_DETAIL, NULL},
    {"consumer_waits", WAITED, PP_VALUE_COUNT, PP_COL_INT | PP_COL_DETAIL,
     NULL},
    {"consumer_waited_ns", WAITED, PP_VALUE_NS, PP_COL_INT | PP_COL_DETAIL,
     NULL},
    {"consumer_waiting_pct", WAITED, PP_VALUE_PCT, PP_COL_DETAIL, NULL},
    {"waits_unclosed", "waits unclosed", PP_VALUE_COUNT,
     PP_COL_INT | PP_COL_JSON_ONLY, NULL},
    {"wait.p50_ns", WAIT, PP_VALUE_NS, PP_COL_VIEW_ONLY, NULL},
    {"wait.p99_ns", WAIT, PP_VALUE_NS, PP_COL_VIEW_ONLY, NULL},
    {"wait.max_ns", WAIT, PP_VALUE_NS, PP_COL_VIEW_ONLY, NULL},
};

static void count(pp_table *t, long r, const char *key, int64_t v) {
  if (v >= 0)
    pp_cell_int(t, r, key, v);
}

/* Recorded waits of one side: their count, summed time and share; the
 * time and share unavailable (why) when the producer does not keep them;
 * without a wait, a time of 0 and no share. */
static void waits(pp_table *t, long r, const char *const keys[3], int64_t n,
                  double ns, double pct, const char *why) {
  count(t, r, keys[0], n);
  if (n > 0 && why) {
    pp_cell_unavailable(t, r, keys[1], why);
    pp_cell_unavailable(t, r, keys[2], why);
  } else if (!why) { /* no wait: no time (0), no share (none) */
    pp_cell_num(t, r, keys[1], n > 0 ? ns : 0);
    if (n > 0)
      pp_cell_num(t, r, keys[2], pct);
  }
}

pp_table *pp_results_queues(pp_doc *d, const pp_queue_figures *q, size_t n) {
  pp_table *t = pp_doc_table(
      d, "queues", "queues",
      "depth: items in the queue, time-weighted over the queue's window; "
      "full / empty: share of that window; wait: push to pop of an item",
      cols, sizeof cols / sizeof *cols);
  for (size_t i = 0; t && i < n; i++) {
    const pp_queue_figures *f = &q[i];
    const pp_depth *dp = f->depth;
    long r = pp_table_row(t);
    if (r < 0)
      break;
    char stages[512];
    snprintf(stages, sizeof stages, "%s -> %s", f->from[0] ? f->from : "?",
             f->to[0] ? f->to : "?");
    pp_cell_text(t, r, "name", f->name);
    pp_cell_text(t, r, "from", f->from);
    pp_cell_text(t, r, "to", f->to);
    /* the stages, unless the name says them */
    if (!(strstr(f->name, f->from) && strstr(f->name, f->to)))
      pp_cell_text(t, r, "stages", stages);
    if (dp->capacity > 0)
      pp_cell_int(t, r, "capacity", (int64_t)dp->capacity);
    int64_t win = pp_depth_window_ns(dp);
    pp_cell_int(t, r, "window_ns", (int64_t)win);
    count(t, r, "pushes", f->pushes);
    count(t, r, "pops", f->pops);
    count(t, r, "paired", f->paired);
    count(t, r, "unmatched_pops", f->unmatched_pops);
    count(t, r, "items_untracked", f->items_untracked);
    if (win > 0) {
      pp_cell_num(t, r, "in_per_s", (double)f->pushes / ((double)win * 1e-9));
      pp_cell_num(t, r, "out_per_s", (double)f->pops / ((double)win * 1e-9));
    }
    if (dp->steps) {
      pp_cell_int(t, r, "depth.min", (int64_t)dp->min);
      pp_cell_num(t, r, "depth.mean", pp_depth_mean(dp));
      pp_cell_int(t, r, "depth.max", (int64_t)dp->max);
      pp_cell_int(t, r, "depth.last", (int64_t)dp->depth);
    }
    if (dp->capacity > 0)
      pp_cell_int(t, r, "full_ns", (int64_t)dp->full_ns);
    pp_cell_num(t, r, "full_pct", pp_depth_full_pct(dp));
    pp_cell_int(t, r, "empty_ns", (int64_t)dp->empty_ns);
    pp_cell_num(t, r, "empty_pct", pp_depth_empty_pct(dp));
    static const char *const pk[3] = {"producer_waits", "producer_blocked_ns",
                                      "producer_blocked_pct"};
    static const char *const ck[3] = {"consumer_waits", "consumer_waited_ns",
                                      "consumer_waiting_pct"};
    waits(t, r, pk, f->producer_waits, f->producer_blocked_ns,
          f->producer_blocked_pct, f->why_blocked);
    waits(t, r, ck, f->consumer_waits, f->consumer_waited_ns,
          f->consumer_waiting_pct, f->why_blocked);
    count(t, r, "waits_unclosed", f->waits_unclosed);
    pp_cell_num(t, r, "wait.p50_ns", f->wait_p50_ns);
    pp_cell_num(t, r, "wait.p99_ns", f->wait_p99_ns);
    pp_cell_num(t, r, "wait.max_ns", f->wait_max_ns);
    /* what a reader of the row must know */
    if (f->producer_waiters > 1)
      pp_row_note(t, r, "producer share: the mean of %" PRIu32 " threads",
                  f->producer_waiters);
    if (f->consumer_waiters > 1)
      pp_row_note(t, r, "consumer share: the mean of %" PRIu32 " threads",
                  f->consumer_waiters);
    if (f->paired >= 0) {
      /* pushes still queued at the end have no pop: not a pairing
       * failure */
      int64_t queued = dp->depth > 0 ? dp->depth : 0;
      int64_t known = f->paired + queued +
                      (f->items_untracked > 0 ? f->items_untracked : 0);
      int64_t unpaired = f->unmatched_pops > 0 ? f->unmatched_pops : 0;
      if (f->pushes > known)
        unpaired += f->pushes - known;
      if (unpaired > 0)
        pp_row_note(t, r, "%" PRId64 " items not paired by id", unpaired);
    }
    if (f->items_untracked > 0)
      pp_row_note(t, r,
                  "%" PRId64 " items untracked (item table full), no wait "
                  "measured",
                  f->items_untracked);
    if (f->waits_unclosed > 0)
      pp_row_note(t, r,
                  "%" PRId64 " waits never ended (closed at the queue's last "
                  "event)",
                  f->waits_unclosed);
  }
  return t;
}
