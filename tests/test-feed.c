/* SPDX-License-Identifier: MIT */
/*
 * Events of several threads in one time order (src/model/feed.h): the
 * in-memory merge and the streaming reorder buffer give the same order,
 * keep each thread's own order, and the buffer says what came late.
 */
#include <stdlib.h>
#include <string.h>

#include "format/pptrace.h"
#include "model/feed.h"
#include "runner.h"

#define NT 4
#define NE 200

typedef struct seen {
  uint32_t thread[NT * NE];
  int64_t ts[NT * NE];
  size_t n;
} seen;

static int record(void *arg, const pp_trace *t, uint32_t thread,
                  const pp_event *e) {
  (void)t;
  seen *s = arg;
  s->thread[s->n] = thread;
  s->ts[s->n++] = e->ts;
  return 0;
}

/* NT threads of NE events; thread 2's clock steps back once. */
static void make_trace(pp_trace *t, pp_thread *th, pp_event ev[NT][NE],
                       pp_loc *loc) {
  memset(t, 0, sizeof *t);
  memset(loc, 0, sizeof *loc);
  loc->name = "q";
  t->locs = loc;
  t->nlocs = 1;
  unsigned seed = 7;
  for (int k = 0; k < NT; k++) {
    int64_t ts = k;
    for (int i = 0; i < NE; i++) {
      seed = seed * 1103515245u + 12345u;
      ts += (int64_t)(seed >> 16) % 50;
      if (k == 2 && i == NE / 2)
        ts -= 400; /* this thread's clock goes back */
      ev[k][i] = (pp_event){.ts = ts, .loc = 0, .type = PPT_EV_QUEUE_PUSH};
      ev[k][i].v.id = (uint64_t)i;
    }
    memset(&th[k], 0, sizeof th[k]);
    th[k].ev = ev[k];
    th[k].nev = NE;
  }
  t->threads = th;
  t->nthreads = NT;
}

static void check_thread_order(const seen *s) {
  int64_t pos[NT] = {0};
  for (size_t i = 0; i < s->n; i++)
    pos[s->thread[i]]++;
  for (int k = 0; k < NT; k++)
    CHECK_EQ(pos[k], NE);
}

PP_TEST(feed_merge_is_time_ordered_and_keeps_thread_order) {
  static pp_event ev[NT][NE];
  pp_thread th[NT];
  pp_loc loc;
  pp_trace t;
  make_trace(&t, th, ev, &loc);
  static seen s;
  memset(&s, 0, sizeof s);
  CHECK_EQ(pp_feed_in_time_order(&t, PP_FEED_ALL, record, &s), 0);
  CHECK_EQ_U(s.n, NT * NE);
  check_thread_order(&s);
  /* Each thread's events in recording order: the k-th event of thread j
   * handed over is ev[j][k]. */
  size_t next[NT] = {0};
  size_t backwards = 0;
  for (size_t i = 0; i < s.n; i++) {
    uint32_t k = s.thread[i];
    CHECK_EQ(s.ts[i], ev[k][next[k]].ts);
    next[k]++;
    backwards += i > 0 && s.ts[i] < s.ts[i - 1];
  }
  /* Only thread 2's step back may show as time going back. */
  CHECK(backwards <= 1);
  /* Filtering by type: none wanted, none fed. */
  memset(&s, 0, sizeof s);
  CHECK_EQ(pp_feed_in_time_order(&t, PP_FEED_TYPE(PPT_EV_FRAME), record,
                                 &s),
           0);
  CHECK_EQ_U(s.n, 0);
}

/* Put the threads' events interleaved in bursts, as chunks come in a file. */
static void put_in_bursts(pp_order *o, const pp_trace *t, size_t burst) {
  size_t pos[NT] = {0};
  for (int left = 1; left;) {
    left = 0;
    for (uint32_t k = 0; k < NT; k++)
      for (size_t i = 0; i < burst && pos[k] < t->threads[k].nev; i++) {
        CHECK_EQ(pp_order_put(o, t, k, &t->threads[k].ev[pos[k]++]), 0);
        left = 1;
      }
  }
  CHECK_EQ(pp_order_flush(o, t), 0);
}

PP_TEST(feed_reorder_buffer_matches_merge_when_it_holds_the_lag) {
  static pp_event ev[NT][NE];
  pp_thread th[NT];
  pp_loc loc;
  pp_trace t;
  make_trace(&t, th, ev, &loc);
  static seen want, got;
  memset(&want, 0, sizeof want);
  memset(&got, 0, sizeof got);
  CHECK_EQ(pp_feed_in_time_order(&t, PP_FEED_ALL, record, &want), 0);
  pp_order *o = pp_order_new(NT * 30, record, &got);
  CHECK(o != NULL);
  put_in_bursts(o, &t, 25);
  CHECK_EQ_U(pp_order_late(o), 0);
  pp_order_free(o);
  CHECK_EQ_U(got.n, want.n);
  for (size_t i = 0; i < got.n; i++) {
    CHECK_EQ_U(got.thread[i], want.thread[i]);
    CHECK_EQ(got.ts[i], want.ts[i]);
  }
}

PP_TEST(feed_reorder_buffer_too_small_counts_late_and_loses_nothing) {
  static pp_event ev[NT][NE];
  pp_thread th[NT];
  pp_loc loc;
  pp_trace t;
  make_trace(&t, th, ev, &loc);
  static seen got;
  memset(&got, 0, sizeof got);
  pp_order *o = pp_order_new(4, record, &got);
  CHECK(o != NULL);
  put_in_bursts(o, &t, NE); /* each thread's whole stream at once */
  CHECK(pp_order_late(o) > 0);
  pp_order_free(o);
  CHECK_EQ_U(got.n, NT * NE);
  check_thread_order(&got);
  size_t next[NT] = {0};
  for (size_t i = 0; i < got.n; i++) {
    uint32_t k = got.thread[i];
    CHECK_EQ(got.ts[i], ev[k][next[k]++].ts);
  }
}

/* Released at each burst's horizon (the least time of every event not put
 * yet, as the reader knows it from its first pass), a buffer of any size
 * gives the merge exactly, holding only what may still be overtaken. */
PP_TEST(feed_reorder_buffer_released_at_the_horizon_is_the_merge) {
  static pp_event ev[NT][NE];
  pp_thread th[NT];
  pp_loc loc;
  pp_trace t;
  make_trace(&t, th, ev, &loc);
  static seen want, got;
  memset(&want, 0, sizeof want);
  memset(&got, 0, sizeof got);
  CHECK_EQ(pp_feed_in_time_order(&t, PP_FEED_ALL, record, &want), 0);
  pp_order *o = pp_order_new((size_t)NT * NE, record, &got);
  CHECK(o != NULL);
  const size_t burst = 25;
  size_t most = 0;
  for (size_t at = 0; at < NE; at += burst) {
    for (int k = 0; k < NT; k++)
      for (size_t i = at; i < at + burst && i < NE; i++)
        CHECK_EQ(pp_order_put(o, &t, (uint32_t)k, &ev[k][i]), 0);
    int64_t horizon = INT64_MAX;
    for (int k = 0; k < NT; k++)
      for (size_t i = at + burst; i < NE; i++)
        if (ev[k][i].ts < horizon)
          horizon = ev[k][i].ts;
    size_t before = got.n;
    CHECK_EQ(pp_order_release(o, &t, horizon), 0);
    for (size_t i = before; i < got.n; i++)
      CHECK(got.ts[i] < horizon);
    size_t waiting = (at + burst < NE ? at + burst : NE) * NT - got.n;
    if (waiting > most)
      most = waiting;
  }
  CHECK_EQ(pp_order_flush(o, &t), 0);
  CHECK_EQ_U(pp_order_late(o), 0);
  pp_order_free(o);
  CHECK(most < (size_t)NT * NE / 2); /* it did hand events over early */
  CHECK_EQ_U(got.n, want.n);
  for (size_t i = 0; i < got.n; i++) {
    CHECK_EQ_U(got.thread[i], want.thread[i]);
    CHECK_EQ(got.ts[i], want.ts[i]);
  }
}
