/* SPDX-License-Identifier: MIT */
/*
 * The pipeline runtime (include/pipeprof/runtime.h): the bounded MPMC
 * queue's order, capacity, non-blocking and timed calls, no loss and no
 * duplication with 8 threads and random delays, close with items in
 * flight and producers blocked, and what it records (read back from a
 * real trace and analysed).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze/analyze.h"
#include "analyze/pipeline.h"
#include "model/reader.h"
#include "model/trace.h"
#include "pipeprof.h"
#include "pipeprof/runtime.h"
#include "runner.h"
#include "trace_builder.h"

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

PP_TEST(runtime_queue_fifo_capacity_and_nonblocking_calls) {
  CHECK(pp_rt_queue_new("x", NULL, NULL, 0) == NULL);
  pp_rt_queue *q = pp_rt_queue_new("fifo", "a", "b", 5);
  CHECK(q != NULL);
  CHECK_EQ_U(pp_rt_queue_capacity(q), 8); /* rounded up */
  int vals[8];
  for (int i = 0; i < 8; i++)
    CHECK_EQ(pp_rt_queue_push(q, &vals[i], (uint64_t)i + 100, 0), PP_OK);
  CHECK_EQ_U(pp_rt_queue_depth(q), 8);
  CHECK_EQ(pp_rt_queue_push(q, &vals[0], 1, 0), PP_EAGAIN);
  CHECK_EQ(pp_rt_queue_push(q, &vals[0], 1, 1000000), PP_ETIMEDOUT);
  for (int i = 0; i < 8; i++) {
    void *it = NULL;
    uint64_t id = 0;
    CHECK_EQ(pp_rt_queue_pop(q, &it, &id, 0), PP_OK);
    CHECK(it == &vals[i]);
    CHECK_EQ(id, (uint64_t)i + 100);
  }
  CHECK_EQ(pp_rt_queue_pop(q, NULL, NULL, 0), PP_EAGAIN);
  CHECK_EQ(pp_rt_queue_pop(q, NULL, NULL, 1000000), PP_ETIMEDOUT);
  /* wrap around the ring many times */
  for (int i = 0; i < 1000; i++) {
    CHECK_EQ(pp_rt_queue_push(q, NULL, (uint64_t)i, 0), PP_OK);
    uint64_t id;
    CHECK_EQ(pp_rt_queue_pop(q, NULL, &id, 0), PP_OK);
    CHECK_EQ(id, (uint64_t)i);
  }
  CHECK_EQ(pp_rt_queue_push(NULL, NULL, 0, 0), PP_EINVAL);
  CHECK_EQ(pp_rt_queue_pop(NULL, NULL, NULL, 0), PP_EINVAL);
  pp_rt_queue_close(q);
  CHECK_EQ(pp_rt_queue_push(q, NULL, 0, -1), PP_ECLOSED);
  CHECK_EQ(pp_rt_queue_pop(q, NULL, NULL, -1), PP_ECLOSED);
  pp_rt_queue_free(q);
}

/* ---- 4 producers, 4 consumers ------------------------------------------- */

#define PRODUCERS 4
#define CONSUMERS 4
#define PER_PRODUCER 20000

typedef struct mpmc {
  pp_rt_queue *q;
  int k;
  uint64_t *got; /* consumers: ids taken, in order */
  size_t ngot;
  unsigned seed;
} mpmc;

static unsigned next_rand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 16;
}

static void *producer(void *arg) {
  mpmc *m = arg;
  for (uint64_t i = 0; i < PER_PRODUCER; i++) {
    uint64_t id = (uint64_t)m->k << 32 | i;
    CHECK_EQ(pp_rt_queue_push(m->q, (void *)(uintptr_t)(id + 1), id, -1),
             PP_OK);
    if (next_rand(&m->seed) % 512 == 0)
      sleep_us(next_rand(&m->seed) % 200);
  }
  return NULL;
}

static void *consumer(void *arg) {
  mpmc *m = arg;
  for (;;) {
    void *it;
    uint64_t id;
    int rc = pp_rt_queue_pop(m->q, &it, &id, -1);
    if (rc == PP_ECLOSED)
      break;
    CHECK_EQ(rc, PP_OK);
    CHECK(it == (void *)(uintptr_t)(id + 1));
    m->got[m->ngot++] = id;
    if (next_rand(&m->seed) % 512 == 0)
      sleep_us(next_rand(&m->seed) % 200);
  }
  return NULL;
}

/* Every item taken exactly once, and each consumer sees each producer's
 * items in the order they were pushed. */
PP_TEST_T(runtime_queue_eight_threads_no_loss_no_duplication, 120) {
  pp_rt_queue *q = pp_rt_queue_new("mpmc", NULL, NULL, 64);
  CHECK(q != NULL);
  mpmc p[PRODUCERS], c[CONSUMERS];
  pthread_t tp[PRODUCERS], tc[CONSUMERS];
  for (int k = 0; k < CONSUMERS; k++) {
    c[k] = (mpmc){q, k, malloc(PRODUCERS * PER_PRODUCER * sizeof(uint64_t)), 0,
                  7u + (unsigned)k};
    CHECK(c[k].got != NULL);
    CHECK_EQ(pthread_create(&tc[k], NULL, consumer, &c[k]), 0);
  }
  for (int k = 0; k < PRODUCERS; k++) {
    p[k] = (mpmc){q, k, NULL, 0, 99u + (unsigned)k};
    CHECK_EQ(pthread_create(&tp[k], NULL, producer, &p[k]), 0);
  }
  for (int k = 0; k < PRODUCERS; k++)
    pthread_join(tp[k], NULL);
  pp_rt_queue_close(q);
  for (int k = 0; k < CONSUMERS; k++)
    pthread_join(tc[k], NULL);
  unsigned char *seen = calloc(PRODUCERS * PER_PRODUCER, 1);
  CHECK(seen != NULL);
  size_t total = 0;
  for (int k = 0; k < CONSUMERS; k++) {
    int64_t last[PRODUCERS];
    for (int j = 0; j < PRODUCERS; j++)
      last[j] = -1;
    for (size_t i = 0; i < c[k].ngot; i++) {
      uint64_t id = c[k].got[i];
      unsigned pk = (unsigned)(id >> 32);
      uint64_t n = id & 0xffffffffu;
      CHECK(pk < PRODUCERS && n < PER_PRODUCER);
      CHECK((int64_t)n > last[pk]);
      last[pk] = (int64_t)n;
      CHECK_EQ(seen[pk * PER_PRODUCER + n], 0);
      seen[pk * PER_PRODUCER + n] = 1;
    }
    total += c[k].ngot;
    free(c[k].got);
  }
  CHECK_EQ_U(total, PRODUCERS * PER_PRODUCER);
  free(seen);
  pp_rt_queue_free(q);
}

/* ---- close with items in flight ----------------------------------------- */

typedef struct blocked {
  pp_rt_queue *q;
  int ok, closed;
} blocked;

static void *push_until_closed(void *arg) {
  blocked *b = arg;
  for (uint64_t i = 0;; i++) {
    int rc = pp_rt_queue_push(b->q, NULL, i, -1);
    if (rc == PP_ECLOSED) {
      b->closed = 1;
      return NULL;
    }
    CHECK_EQ(rc, PP_OK);
    b->ok++;
  }
}

/* Producers blocked on a full queue get PP_ECLOSED; every item pushed
 * before the close is still taken, then pops report the close. */
PP_TEST_T(runtime_queue_close_with_items_in_flight, 60) {
  pp_rt_queue *q = pp_rt_queue_new("closing", NULL, NULL, 16);
  blocked b[3];
  pthread_t t[3];
  for (int k = 0; k < 3; k++) {
    b[k] = (blocked){q, 0, 0};
    CHECK_EQ(pthread_create(&t[k], NULL, push_until_closed, &b[k]), 0);
  }
  while (pp_rt_queue_depth(q) < 16)
    sleep_us(1000);
  sleep_us(20000); /* let them block: not asserted, only more likely */
  pp_rt_queue_close(q);
  for (int k = 0; k < 3; k++) {
    pthread_join(t[k], NULL);
    CHECK(b[k].closed);
  }
  int pushed = b[0].ok + b[1].ok + b[2].ok, popped = 0;
  CHECK_EQ(pushed, 16);
  while (pp_rt_queue_pop(q, NULL, NULL, -1) == PP_OK)
    popped++;
  CHECK_EQ(popped, pushed);
  CHECK_EQ(pp_rt_queue_pop(q, NULL, NULL, 0), PP_ECLOSED);
  pp_rt_queue_free(q);
}

/* ---- recorded ------------------------------------------------------------ */

static void *drain(void *arg) {
  pp_rt_queue *q = arg;
  while (pp_rt_queue_pop(q, NULL, NULL, -1) == PP_OK)
    sleep_us(50);
  return NULL;
}

/* The trace at path read and analysed into *t and *a, and its queue
 * named name (the test fails without one). */
static const pp_queue_stats *recorded_queue(const char *path, pp_trace *t,
                                            pp_analysis *a, const char *name) {
  char err[256];
  if (pp_trace_read_file(path, t, err, sizeof err) != 0)
    PP_FAIL("%s", err);
  CHECK_EQ(pp_analyze(t, a), 0);
  for (size_t i = 0; i < a->prof.pipe.nqueues; i++)
    if (strcmp(a->prof.pipe.queues[i].name, name) == 0)
      return &a->prof.pipe.queues[i];
  PP_FAIL("no queue %s in %s", name, path);
  return NULL;
}

/* A queue of the runtime is a queue of the report: declared with its
 * stages and capacity, every push and pop paired by id, the producer's
 * waits on the full queue recorded. */
PP_TEST_T(runtime_queue_is_recorded, 60) {
  char path[4096];
  snprintf(path, sizeof path, "%s/rt.pptrace", pp_test_tmpdir());
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.install_signals = 0;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  pp_rt_queue *q = pp_rt_queue_new("rt frames", "decode", "infer", 4);
  for (uint64_t i = 0; i < 4; i++)
    CHECK_EQ(pp_rt_queue_push(q, NULL, i, 0), PP_OK);
  /* full and no consumer yet: a producer's wait, recorded */
  CHECK_EQ(pp_rt_queue_push(q, NULL, 4, 1000000), PP_ETIMEDOUT);
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, drain, q), 0);
  for (uint64_t i = 4; i < 200; i++)
    CHECK_EQ(pp_rt_queue_push(q, NULL, i, -1), PP_OK);
  pp_rt_queue_close(q);
  pthread_join(th, NULL);
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis a = {0};
  const pp_queue_stats *s = recorded_queue(path, &t, &a, "rt frames");
  CHECK_STR(s->from, "decode");
  CHECK_STR(s->to, "infer");
  CHECK_EQ(s->depth.capacity, 4);
  CHECK_EQ(s->pushes, 200);
  CHECK_EQ(s->pops, 200);
  CHECK_EQ(s->matched, 200);
  CHECK(s->depth.max <= 4);
  CHECK(s->waits_full >= 1);
  pp_rt_queue_free(q);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* ---- pipelines ----------------------------------------------------------- */

typedef struct slow_ctx {
  unsigned seed;
  pthread_mutex_t m;
  int fail_at; /* id that fails, -1 none */
  long us;     /* the longest random delay */
  long fixed;  /* and a fixed one, us */
} slow_ctx;

/* A stage: a random delay, then the item on (the same pointer). */
static int step(void *ctx, void *item, uint64_t id, void **out) {
  slow_ctx *c = ctx;
  pthread_mutex_lock(&c->m);
  long d = c->us ? (long)(next_rand(&c->seed) % (unsigned long)c->us) : 0;
  pthread_mutex_unlock(&c->m);
  if (d + c->fixed)
    sleep_us(d + c->fixed);
  if (c->fail_at >= 0 && id == (uint64_t)c->fail_at)
    return -100;
  *out = item;
  return PP_OK;
}

/* Odd ids are filtered out. */
static int evens(void *ctx, void *item, uint64_t id, void **out) {
  (void)ctx;
  *out = id % 2 ? NULL : item;
  return PP_OK;
}

typedef struct taker {
  pp_rt_pipeline *p;
  unsigned char *seen;
  size_t n, dup;
} taker;

static void *take_all(void *arg) {
  taker *t = arg;
  void *item;
  uint64_t id;
  while (pp_rt_pipeline_take(t->p, &item, &id, -1) == PP_OK) {
    CHECK(item == (void *)(uintptr_t)(id + 1));
    if (t->seen[id])
      t->dup++;
    t->seen[id] = 1;
    t->n++;
  }
  return NULL;
}

/* Three stages of 3, 2 and 3 threads (8) with random delays and a filter:
 * every even item comes out exactly once, none is lost, and the drain
 * with items in flight finishes them all. */
PP_TEST_T(runtime_pipeline_no_loss_no_duplication, 120) {
  enum { N = 4000 };
  slow_ctx a = {1, PTHREAD_MUTEX_INITIALIZER, -1, 100, 0};
  slow_ctx b = {2, PTHREAD_MUTEX_INITIALIZER, -1, 100, 0};
  pp_rt_pipeline *p = pp_rt_pipeline_new("items", NULL, NULL);
  CHECK_EQ(pp_rt_stage_add(p, "decode", 3, 16, step, &a), PP_OK);
  CHECK_EQ(pp_rt_stage_add(p, "filter", 2, 16, evens, NULL), PP_OK);
  CHECK_EQ(pp_rt_stage_add(p, "infer", 3, 16, step, &b), PP_OK);
  CHECK_EQ(pp_rt_stage_add(p, "bad", 0, 16, step, &b), PP_EINVAL);
  CHECK_EQ(pp_rt_pipeline_output(p, 32), PP_OK);
  CHECK_EQ(pp_rt_pipeline_take(p, NULL, NULL, 0), PP_EINVAL); /* not yet */
  CHECK_EQ(pp_rt_pipeline_start(p), PP_OK);
  CHECK_EQ(pp_rt_stage_add(p, "late", 1, 16, step, &b), PP_EBUSY);
  taker t = {p, calloc(N, 1), 0, 0};
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, take_all, &t), 0);
  for (uint64_t i = 0; i < N; i++)
    CHECK_EQ(pp_rt_pipeline_submit(p, (void *)(uintptr_t)(i + 1), i, -1),
             PP_OK);
  CHECK_EQ(pp_rt_pipeline_drain(p), PP_OK); /* items still in flight */
  pthread_join(th, NULL);
  CHECK_EQ(pp_rt_pipeline_submit(p, NULL, N, 0), PP_ECLOSED);
  CHECK_EQ_U(t.n, N / 2);
  CHECK_EQ_U(t.dup, 0);
  for (size_t i = 0; i < N; i++)
    CHECK_EQ(t.seen[i], i % 2 == 0);
  pp_rt_stats st;
  pp_rt_pipeline_stats(p, &st);
  CHECK_EQ(st.submitted, N);
  CHECK_EQ(st.completed, N / 2);
  CHECK_EQ(st.filtered, N / 2);
  CHECK_EQ(st.dropped, 0);
  CHECK_EQ(st.error, PP_OK);
  free(t.seen);
  pp_rt_pipeline_free(p);
}

static _Atomic int dropped_seen;
static void count_drop(void *ctx, void *item, uint64_t id) {
  (void)ctx;
  (void)item;
  (void)id;
  dropped_seen++;
}

/* A stage's error fails the pipeline: the drain returns it, the stats name
 * the stage and the item, and every item is accounted for: done, or
 * dropped (each drop reported to the drop function). */
PP_TEST_T(runtime_pipeline_stage_error_propagates, 60) {
  enum { N = 2000 };
  dropped_seen = 0;
  slow_ctx a = {3, PTHREAD_MUTEX_INITIALIZER, -1, 20, 0};
  slow_ctx b = {4, PTHREAD_MUTEX_INITIALIZER, 500, 20, 0};
  pp_rt_pipeline *p = pp_rt_pipeline_new("failing", count_drop, NULL);
  CHECK_EQ(pp_rt_stage_add(p, "first", 2, 8, step, &a), PP_OK);
  CHECK_EQ(pp_rt_stage_add(p, "second", 2, 8, step, &b), PP_OK);
  CHECK_EQ(pp_rt_pipeline_start(p), PP_OK);
  uint64_t in = 0;
  for (uint64_t i = 0; i < N; i++) {
    int rc = pp_rt_pipeline_submit(p, (void *)(uintptr_t)(i + 1), i, -1);
    if (rc == PP_ECLOSED)
      break; /* failed meanwhile */
    CHECK_EQ(rc, PP_OK);
    in++;
  }
  CHECK_EQ(pp_rt_pipeline_drain(p), -100);
  pp_rt_stats st;
  pp_rt_pipeline_stats(p, &st);
  CHECK_EQ(st.error, -100);
  CHECK_STR(st.error_stage, "second");
  CHECK_EQ(st.error_item, 500);
  CHECK_EQ(st.submitted, in);
  /* the failing item is neither done nor dropped */
  CHECK_EQ(st.completed + st.dropped + 1, in);
  CHECK_EQ((uint64_t)dropped_seen, st.dropped);
  pp_rt_pipeline_free(p);
}

/* Cancel stops a pipeline whose stage is slow: no more submits, the rest
 * dropped; every item accounted for. */
PP_TEST_T(runtime_pipeline_cancel, 60) {
  dropped_seen = 0;
  slow_ctx a = {5, PTHREAD_MUTEX_INITIALIZER, -1, 2000, 0};
  pp_rt_pipeline *p = pp_rt_pipeline_new("cancelled", count_drop, NULL);
  CHECK_EQ(pp_rt_stage_add(p, "slow", 1, 64, step, &a), PP_OK);
  CHECK_EQ(pp_rt_pipeline_start(p), PP_OK);
  for (uint64_t i = 0; i < 50; i++)
    CHECK_EQ(pp_rt_pipeline_submit(p, (void *)(uintptr_t)(i + 1), i, -1),
             PP_OK);
  pp_rt_pipeline_cancel(p);
  CHECK_EQ(pp_rt_pipeline_submit(p, NULL, 99, -1), PP_ECLOSED);
  CHECK_EQ(pp_rt_pipeline_drain(p), PP_OK);
  pp_rt_stats st;
  pp_rt_pipeline_stats(p, &st);
  CHECK_EQ(st.submitted, 50);
  CHECK_EQ(st.completed + st.dropped, 50);
  CHECK_EQ((uint64_t)dropped_seen, st.dropped);
  pp_rt_pipeline_free(p);
}

/* A pipeline is a pipeline of the report: its stages, their queues, and
 * each item's flow from submit to the last stage. */
PP_TEST_T(runtime_pipeline_is_recorded, 60) {
  char path[4096];
  snprintf(path, sizeof path, "%s/rtp.pptrace", pp_test_tmpdir());
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.install_signals = 0;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  /* infer: 1 ms an item on 2 threads, the bound whatever else runs */
  slow_ctx a = {6, PTHREAD_MUTEX_INITIALIZER, -1, 0, 0};
  slow_ctx b = {7, PTHREAD_MUTEX_INITIALIZER, -1, 0, 1000};
  pp_rt_pipeline *p = pp_rt_pipeline_new("frames", NULL, NULL);
  CHECK_EQ(pp_rt_pipeline_ends(NULL, "camera", NULL), PP_EINVAL);
  CHECK_EQ(pp_rt_pipeline_ends(p, "camera", NULL), PP_OK);
  CHECK_EQ(pp_rt_stage_add(p, "decode", 1, 8, step, &a), PP_OK);
  CHECK_EQ(pp_rt_pipeline_ends(p, "late", NULL), PP_EBUSY);
  CHECK_EQ(pp_rt_stage_add(p, "infer", 2, 8, step, &b), PP_OK);
  CHECK_EQ(pp_rt_pipeline_start(p), PP_OK);
  for (uint64_t i = 1; i <= 100; i++)
    CHECK_EQ(pp_rt_pipeline_submit(p, (void *)(uintptr_t)(i + 1), i, -1),
             PP_OK);
  CHECK_EQ(pp_rt_pipeline_drain(p), PP_OK);
  pp_rt_pipeline_free(p);
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis an = {0};
  char err[256];
  if (pp_trace_read_file(path, &t, err, sizeof err) != 0)
    PP_FAIL("%s", err);
  CHECK_EQ(pp_analyze(&t, &an), 0);
  const pp_pipeline *pl = &an.prof.pipe;
  int have_decode = 0, have_infer = 0;
  for (size_t i = 0; i < pl->nstages; i++) {
    const pp_stage_stats *s = &pl->stages[i];
    if (strcmp(s->name, "decode") == 0) {
      have_decode = 1;
      CHECK_EQ(s->items, 100);
    } else if (strcmp(s->name, "infer") == 0) {
      have_infer = 1;
      CHECK_EQ(s->items, 100);
      CHECK(s->workers >= 1 && s->workers <= 2);
    }
  }
  CHECK(have_decode && have_infer);
  /* the queue into the first stage comes from the named source */
  int have_in = 0;
  for (size_t i = 0; i < pl->nqueues; i++)
    if (strcmp(pl->queues[i].name, "decode in") == 0) {
      have_in = 1;
      CHECK_STR(pl->queues[i].from, "camera");
      CHECK_STR(pl->queues[i].to, "decode");
    }
  CHECK(have_in);
  CHECK(pl->bound >= 0);
  CHECK_STR(pl->stages[pl->bound].name, "infer");
  int flow = 0;
  for (size_t i = 0; i < pl->nflows; i++)
    if (strcmp(pp_trace_loc_name(&t, pl->flows[i].loc), "frames") == 0) {
      flow = 1;
      CHECK_EQ(pl->flows[i].items, 100);
    }
  CHECK(flow);
  pp_analysis_free(&an);
  pp_trace_free(&t);
}

/* ---- dynamic batcher ----------------------------------------------------- */

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A full batch goes at once; a partial one only after its oldest item
 * waited the delay; padding; a close hands out the rest, then
 * PP_ECLOSED. */
PP_TEST_T(runtime_batcher_size_delay_padding_and_close, 60) {
  CHECK(pp_rt_batcher_new("b", 0, 0, 1, 8, PP_RT_PAD_NONE) == NULL);
  CHECK(pp_rt_batcher_new("b", 4, -1, 1, 8, PP_RT_PAD_NONE) == NULL);
  pp_rt_batcher *b = pp_rt_batcher_new("b", 4, 20000000, 1, 16, PP_RT_PAD_POW2);
  CHECK(b != NULL);
  void *items[4];
  uint64_t ids[4];
  pp_rt_batch bt = {items, ids, 0, 0, 0, 0};
  CHECK_EQ(pp_rt_batcher_next(b, &bt, 0), PP_EAGAIN);
  CHECK_EQ(pp_rt_batcher_next(b, &bt, 1000000), PP_ETIMEDOUT);
  for (uint64_t i = 0; i < 5; i++)
    CHECK_EQ(pp_rt_batcher_put(b, (void *)(uintptr_t)(i + 1), i, 0, 0), PP_OK);
  CHECK_EQ(pp_rt_batcher_put(b, NULL, 9, 1, 0), PP_EINVAL); /* no lane 1 */
  /* four items: a full batch */
  CHECK_EQ(pp_rt_batcher_next(b, &bt, -1), PP_OK);
  CHECK_EQ_U(bt.n, 4);
  CHECK_EQ_U(bt.padded, 4);
  CHECK_EQ(bt.full, 1);
  for (uint64_t i = 0; i < 4; i++) {
    CHECK_EQ(ids[i], i);
    CHECK(items[i] == (void *)(uintptr_t)(i + 1));
  }
  /* one left: it goes once it has waited 20 ms, padded to 1 */
  int64_t t0 = mono_ns();
  CHECK_EQ(pp_rt_batcher_next(b, &bt, -1), PP_OK);
  CHECK_EQ_U(bt.n, 1);
  CHECK_EQ(bt.full, 0);
  CHECK(bt.waited_ns >= 20000000);
  CHECK(mono_ns() - t0 > 0);
  /* three then a close: they come out at once, padded to 4. The delay
   * is an hour now, so only the close can make them due: a batcher that
   * waited for the delay would answer PP_EAGAIN to a call that does not
   * wait, however slowly the machine runs this. */
  CHECK_EQ(pp_rt_batcher_lane_delay(b, 0, 3600 * 1000000000LL), PP_OK);
  int64_t t1 = mono_ns();
  for (uint64_t i = 10; i < 13; i++)
    CHECK_EQ(pp_rt_batcher_put(b, NULL, i, 0, 0), PP_OK);
  CHECK_EQ(pp_rt_batcher_next(b, &bt, 0), PP_EAGAIN); /* not due yet */
  pp_rt_batcher_close(b);
  CHECK_EQ(pp_rt_batcher_put(b, NULL, 13, 0, 0), PP_ECLOSED);
  CHECK_EQ(pp_rt_batcher_next(b, &bt, 0), PP_OK);
  int64_t t2 = mono_ns();
  CHECK_EQ_U(bt.n, 3);
  CHECK_EQ_U(bt.padded, 4);
  CHECK_EQ(bt.full, 0);
  for (uint64_t i = 0; i < 3; i++)
    CHECK_EQ(ids[i], 10 + i);
  /* how long the oldest waited: within what the test saw go by */
  CHECK(bt.waited_ns >= 0 && bt.waited_ns <= t2 - t1);
  CHECK_EQ(pp_rt_batcher_next(b, &bt, -1), PP_ECLOSED);
  pp_rt_batcher_free(b);
}

/* A batcher with its stages named is a queue of the report between them:
 * its capacity (lanes x lane capacity), every item's push and pop, and a
 * batch per pp_rt_batcher_next; naming stages after the first put is too
 * late. */
PP_TEST_T(runtime_batcher_stages_are_recorded, 60) {
  char path[4096];
  snprintf(path, sizeof path, "%s/rt-batcher.pptrace", pp_test_tmpdir());
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.install_signals = 0;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  pp_rt_batcher *b = pp_rt_batcher_new("rt batches", 4, 0, 2, 8,
                                       PP_RT_PAD_NONE);
  CHECK(b != NULL);
  CHECK_EQ(pp_rt_batcher_stages(NULL, "a", "b"), PP_EINVAL);
  CHECK_EQ(pp_rt_batcher_stages(b, "preprocess", "infer"), PP_OK);
  CHECK_EQ(pp_rt_batcher_stages(b, "x", "y"), PP_EBUSY);
  void *items[4];
  uint64_t ids[4];
  pp_rt_batch bt = {items, ids, 0, 0, 0, 0};
  for (uint64_t i = 0; i < 10; i++)
    CHECK_EQ(pp_rt_batcher_put(b, NULL, i, (int)(i % 2), 0), PP_OK);
  pp_rt_batcher_close(b);
  int batches = 0;
  while (pp_rt_batcher_next(b, &bt, -1) == PP_OK)
    batches++;
  CHECK_EQ(batches, 3); /* 4, 4, 2 */
  pp_rt_batcher_free(b);
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis a = {0};
  const pp_queue_stats *s = recorded_queue(path, &t, &a, "rt batches");
  CHECK_STR(s->from, "preprocess");
  CHECK_STR(s->to, "infer");
  CHECK_EQ(s->depth.capacity, 16);
  CHECK_EQ(s->pushes, 10);
  CHECK_EQ(s->pops, 10);
  CHECK_EQ(s->matched, 10);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* Lane 0 overtakes: its items lead the batch, and its short delay makes a
 * batch go while lane 1's items alone would still wait. */
PP_TEST_T(runtime_batcher_priority_lanes, 60) {
  pp_rt_batcher *b = pp_rt_batcher_new("lanes", 3, 10 * INT64_C(1000000000), 2,
                                       8, PP_RT_PAD_MAX);
  CHECK_EQ(pp_rt_batcher_lane_delay(b, 0, 0), PP_OK);
  CHECK_EQ(pp_rt_batcher_lane_delay(b, 2, 0), PP_EINVAL);
  void *items[3];
  uint64_t ids[3];
  pp_rt_batch bt = {items, ids, 0, 0, 0, 0};
  for (uint64_t i = 100; i < 102; i++)
    CHECK_EQ(pp_rt_batcher_put(b, NULL, i, 1, 0), PP_OK);
  /* lane 1 alone waits 10 s: no batch is due */
  CHECK_EQ(pp_rt_batcher_next(b, &bt, 0), PP_EAGAIN);
  CHECK_EQ(pp_rt_batcher_next(b, &bt, 1000000), PP_ETIMEDOUT);
  for (uint64_t i = 0; i < 2; i++)
    CHECK_EQ(pp_rt_batcher_put(b, NULL, i, 0, 0), PP_OK);
  CHECK_EQ(pp_rt_batcher_next(b, &bt, -1), PP_OK);
  CHECK_EQ_U(bt.n, 3);
  CHECK_EQ_U(bt.padded, 3);
  CHECK_EQ(ids[0], 0);
  CHECK_EQ(ids[1], 1);
  CHECK_EQ(ids[2], 100);
  /* lane 1's last item waits for its delay; a lane-0 item takes it along */
  CHECK_EQ(pp_rt_batcher_put(b, NULL, 2, 0, 0), PP_OK);
  CHECK_EQ(pp_rt_batcher_next(b, &bt, -1), PP_OK);
  CHECK_EQ_U(bt.n, 2);
  CHECK_EQ_U(bt.padded, 3); /* padded to max_batch */
  CHECK_EQ(ids[0], 2);
  CHECK_EQ(ids[1], 101);
  pp_rt_batcher_free(b);
}

/* ---- memory pools -------------------------------------------------------- */

typedef struct getter {
  pp_rt_pool *p;
  void *block;
  int rc;
} getter;

static void *get_block(void *arg) {
  getter *g = arg;
  g->rc = pp_rt_pool_get(g->p, &g->block, -1);
  return NULL;
}

/* Blocks are distinct, aligned, and come back; an empty pool says so or
 * holds the thread until a block is returned (backpressure); the high
 * watermark and the waits are counted. */
PP_TEST_T(runtime_pool_blocks_exhaustion_and_backpressure, 60) {
  CHECK(pp_rt_pool_new("p", PP_RT_MEM_HOST, 0, 0, 4) == NULL);
  pp_rt_pool *p = pp_rt_pool_new("frames", PP_RT_MEM_HOST, 0, 1000, 3);
  CHECK(p != NULL);
  void *b[3];
  for (int i = 0; i < 3; i++) {
    CHECK_EQ(pp_rt_pool_get(p, &b[i], 0), PP_OK);
    CHECK_EQ((uintptr_t)b[i] % 256, 0);
    memset(b[i], i, 1000); /* the whole block is ours */
  }
  CHECK(b[0] != b[1] && b[1] != b[2] && b[0] != b[2]);
  void *x;
  CHECK_EQ(pp_rt_pool_get(p, &x, 0), PP_EAGAIN);
  CHECK_EQ(pp_rt_pool_get(p, &x, 1000000), PP_ETIMEDOUT);
  getter g = {p, NULL, -1};
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, get_block, &g), 0);
  pp_rt_pool_info info;
  do { /* until the thread found the pool empty: it waits */
    sleep_us(1000);
    pp_rt_pool_info_get(p, &info);
  } while (info.waits < 3);
  CHECK_EQ(g.rc, -1); /* still held */
  pp_rt_pool_put(p, b[1]);
  pthread_join(th, NULL);
  CHECK_EQ(g.rc, PP_OK);
  CHECK(g.block == b[1]);
  pp_rt_pool_info_get(p, &info);
  CHECK_EQ(info.kind, PP_RT_MEM_HOST);
  CHECK_EQ_U(info.block_size, 1024); /* rounded to the alignment */
  CHECK_EQ_U(info.in_use, 3);
  CHECK_EQ_U(info.high_water, 3);
  CHECK(info.waits >= 2);
  CHECK_STR(info.reason, "");
  for (int i = 0; i < 3; i++)
    pp_rt_pool_put(p, i == 1 ? g.block : b[i]);
  pp_rt_pool_info_get(p, &info);
  CHECK_EQ_U(info.in_use, 0);
  pp_rt_pool_free(p);
}

/* Pinned memory without the CUDA runtime: pageable memory, and why; a
 * device pool without it: NULL, and why. */
PP_TEST(runtime_pool_without_cuda) {
  setenv("PIPEPROF_LIBCUDART", "/nonexistent/libcudart.so", 1);
  pp_rt_pool *p = pp_rt_pool_new("pinned", PP_RT_MEM_PINNED, 0, 4096, 2);
  CHECK(p != NULL);
  pp_rt_pool_info info;
  pp_rt_pool_info_get(p, &info);
  CHECK_EQ(info.kind, PP_RT_MEM_HOST);
  CHECK_CONTAINS(info.reason, "no CUDA runtime");
  pp_rt_pool_free(p);
  CHECK(pp_rt_pool_new("dev", PP_RT_MEM_DEVICE, 0, 4096, 2) == NULL);
  CHECK_CONTAINS(pp_rt_error(), "pool dev: no CUDA runtime");
  unsetenv("PIPEPROF_LIBCUDART");
}

/* A pool is a memory pool of the report, on the host. */
PP_TEST_T(runtime_pool_is_recorded, 60) {
  char path[4096];
  snprintf(path, sizeof path, "%s/pool.pptrace", pp_test_tmpdir());
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.install_signals = 0;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  pp_rt_pool *p = pp_rt_pool_new("staging", PP_RT_MEM_HOST, 0, 4096, 8);
  void *b[5];
  for (int i = 0; i < 5; i++)
    CHECK_EQ(pp_rt_pool_get(p, &b[i], 0), PP_OK);
  for (int i = 0; i < 5; i++)
    pp_rt_pool_put(p, b[i]);
  CHECK_EQ(pp_rt_pool_get(p, &b[0], 0), PP_OK); /* one left in use */
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis an = {0};
  char err[256];
  if (pp_trace_read_file(path, &t, err, sizeof err) != 0)
    PP_FAIL("%s", err);
  CHECK_EQ(pp_analyze(&t, &an), 0);
  const pp_mem_pool_stats *s = NULL;
  for (size_t i = 0; i < an.prof.npools; i++)
    if (strcmp(pp_trace_loc_name(&t, an.prof.pools[i].loc), "staging") == 0)
      s = &an.prof.pools[i];
  CHECK(s != NULL);
  CHECK_EQ(s->device, PP_MEM_HOST);
  /* the summary says host, not "device 255" */
  char *js = tb_summary_json(&an);
  CHECK_CONTAINS(js, "\"name\":\"staging\",\"device\":null,\"host\":true,");
  free(js);
  CHECK_EQ(s->allocs, 6);
  CHECK_EQ(s->frees, 5);
  CHECK_EQ(s->peak, 5 * 4096);
  CHECK(s->has_reserve);
  CHECK_EQ(s->leaks, 1);
  pp_analysis_free(&an);
  pp_trace_free(&t);
  pp_rt_pool_put(p, b[0]);
  pp_rt_pool_free(p);
}

/* ---- adaptive batch sizer ------------------------------------------------ */

/* Below the objective the size grows by one per window up to the maximum;
 * a window over it halves the size; out of memory halves it and caps it
 * below the size that failed. */
PP_TEST(runtime_sizer_aimd_and_oom) {
  CHECK(pp_rt_sizer_new("s", 0, 8, 1000, 4) == NULL);
  CHECK(pp_rt_sizer_new("s", 4, 2, 1000, 4) == NULL);
  pp_rt_sizer *s = pp_rt_sizer_new("model", 1, 16, 10000000, 4); /* 10 ms */
  CHECK_EQ_U(pp_rt_sizer_size(s), 1);
  /* 4 windows at 5 ms: 1 -> 5 */
  for (int i = 0; i < 16; i++)
    pp_rt_sizer_observe(s, 5000000);
  CHECK_EQ_U(pp_rt_sizer_size(s), 5);
  /* 9 ms is between 80% and 100%: held */
  for (int i = 0; i < 8; i++)
    pp_rt_sizer_observe(s, 9000000);
  CHECK_EQ_U(pp_rt_sizer_size(s), 5);
  /* one slow batch in a window of 4 is its p99: halved */
  for (int i = 0; i < 3; i++)
    pp_rt_sizer_observe(s, 1000000);
  CHECK_EQ_U(pp_rt_sizer_observe(s, 30000000), 2);
  /* up to the maximum, never past it */
  for (int i = 0; i < 100; i++)
    pp_rt_sizer_observe(s, 1000000);
  CHECK_EQ_U(pp_rt_sizer_size(s), 16);
  /* out of memory at 16: 8, and at most 15 from now on */
  CHECK_EQ_U(pp_rt_sizer_oom(s), 8);
  for (int i = 0; i < 100; i++)
    pp_rt_sizer_observe(s, 1000000);
  CHECK_EQ_U(pp_rt_sizer_size(s), 15);
  CHECK_EQ_U(pp_rt_sizer_oom(s), 7);
  for (int i = 0; i < 100; i++)
    pp_rt_sizer_observe(s, 1000000);
  CHECK_EQ_U(pp_rt_sizer_size(s), 14);
  pp_rt_sizer_free(s);
}

/* The batcher takes a new batch size at once. */
PP_TEST(runtime_batcher_set_max) {
  pp_rt_batcher *b = pp_rt_batcher_new("resized", 8, INT64_C(1000000000), 1, 16,
                                       PP_RT_PAD_NONE);
  void *items[8];
  pp_rt_batch bt = {items, NULL, 0, 0, 0, 0};
  for (uint64_t i = 0; i < 3; i++)
    CHECK_EQ(pp_rt_batcher_put(b, NULL, i, 0, 0), PP_OK);
  CHECK_EQ(pp_rt_batcher_next(b, &bt, 0), PP_EAGAIN); /* 3 of 8, 1 s */
  CHECK_EQ(pp_rt_batcher_set_max(b, 9), PP_EINVAL);
  CHECK_EQ(pp_rt_batcher_set_max(b, 2), PP_OK);
  CHECK_EQ(pp_rt_batcher_next(b, &bt, 0), PP_OK);
  CHECK_EQ_U(bt.n, 2);
  CHECK_EQ(bt.full, 1);
  pp_rt_batcher_free(b);
}
