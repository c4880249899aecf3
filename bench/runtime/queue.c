/* SPDX-License-Identifier: MIT */
/*
 * pipeprof-bench-queue: the runtime's bounded MPMC queue
 * (include/pipeprof/runtime.h) against a plain mutex + condition variable
 * bounded queue, measured in the same run: items per second through 1->1
 * and 4->4 producer->consumer threads (capacity 1024), and the cost of an
 * uncontended push + pop pair on one thread; without a profiling session
 * and with one recording (trace mode). Both queues record the same
 * events (pp_queue_push/pop and the waits; the mutex queue inside its
 * lock, as pipeprof.h advises), so "recording" compares like with like.
 * Rounds alternate the queues; medians are printed with the ratios.
 * A figure, never a test.
 *
 *   pipeprof-bench-queue [ROUNDS] [ITEMS]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pipeprof.h"
#include "pipeprof/runtime.h"

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the baseline: a mutex and two condition variables ------------------ */

typedef struct mq {
  pp_queue *rec; /* recorded as pipeprof.h advises: inside the lock */
  pthread_mutex_t m;
  pthread_cond_t not_full, not_empty;
  void **v;
  size_t cap, head, n;
  int closed;
} mq;

static void mq_init(mq *q, size_t cap) {
  q->rec = pp_queue_declare("bench mutex", "p", "c", (int64_t)cap);
  pthread_mutex_init(&q->m, NULL);
  pthread_cond_init(&q->not_full, NULL);
  pthread_cond_init(&q->not_empty, NULL);
  q->v = calloc(cap, sizeof *q->v);
  q->cap = cap;
  q->head = q->n = 0;
  q->closed = 0;
}

static void mq_free(mq *q) {
  pthread_mutex_destroy(&q->m);
  pthread_cond_destroy(&q->not_full);
  pthread_cond_destroy(&q->not_empty);
  free(q->v);
}

static void mq_push(mq *q, void *x, uint64_t id) {
  pthread_mutex_lock(&q->m);
  if (q->n == q->cap) {
    pp_queue_wait_begin(q->rec, PP_QUEUE_FULL);
    while (q->n == q->cap)
      pthread_cond_wait(&q->not_full, &q->m);
    pp_queue_wait_end(q->rec, PP_QUEUE_FULL);
  }
  pp_queue_push(q->rec, id);
  q->v[(q->head + q->n++) % q->cap] = x;
  pthread_cond_signal(&q->not_empty);
  pthread_mutex_unlock(&q->m);
}

static int mq_pop(mq *q, void **x) {
  pthread_mutex_lock(&q->m);
  if (q->n == 0 && !q->closed) {
    pp_queue_wait_begin(q->rec, PP_QUEUE_EMPTY);
    while (q->n == 0 && !q->closed)
      pthread_cond_wait(&q->not_empty, &q->m);
    pp_queue_wait_end(q->rec, PP_QUEUE_EMPTY);
  }
  if (q->n == 0) {
    pthread_mutex_unlock(&q->m);
    return -1;
  }
  *x = q->v[q->head];
  pp_queue_pop(q->rec, (uint64_t)(uintptr_t)*x - 1);
  q->head = (q->head + 1) % q->cap;
  q->n--;
  pthread_cond_signal(&q->not_full);
  pthread_mutex_unlock(&q->m);
  return 0;
}

static void mq_close(mq *q) {
  pthread_mutex_lock(&q->m);
  q->closed = 1;
  pthread_cond_broadcast(&q->not_empty);
  pthread_mutex_unlock(&q->m);
}

/* ---- throughput -----------------------------------------------------------
 */

typedef struct job {
  int lockfree;
  pp_rt_queue *rq;
  mq *mq;
  long items;
} job;

static void *produce(void *arg) {
  job *j = arg;
  for (long i = 0; i < j->items; i++) {
    if (j->lockfree)
      pp_rt_queue_push(j->rq, (void *)(intptr_t)(i + 1), (uint64_t)i, -1);
    else
      mq_push(j->mq, (void *)(intptr_t)(i + 1), (uint64_t)i);
  }
  return NULL;
}

static void *consume(void *arg) {
  job *j = arg;
  void *x;
  if (j->lockfree)
    while (pp_rt_queue_pop(j->rq, &x, NULL, -1) == PP_OK)
      ;
  else
    while (mq_pop(j->mq, &x) == 0)
      ;
  return NULL;
}

/* Items per second through n producers and n consumers. */
static double throughput(int lockfree, int n, long items) {
  pp_rt_queue *rq = lockfree ? pp_rt_queue_new("bench", "p", "c", 1024) : NULL;
  mq m;
  if (!lockfree)
    mq_init(&m, 1024);
  job j = {lockfree, rq, &m, items / n};
  pthread_t p[8], c[8];
  int64_t t0 = now_ns();
  for (int k = 0; k < n; k++) {
    pthread_create(&c[k], NULL, consume, &j);
    pthread_create(&p[k], NULL, produce, &j);
  }
  for (int k = 0; k < n; k++)
    pthread_join(p[k], NULL);
  if (lockfree)
    pp_rt_queue_close(rq);
  else
    mq_close(&m);
  for (int k = 0; k < n; k++)
    pthread_join(c[k], NULL);
  double s = (double)(now_ns() - t0) * 1e-9;
  if (lockfree)
    pp_rt_queue_free(rq);
  else
    mq_free(&m);
  return (double)(j.items * n) / s;
}

/* ns per push + pop on one thread, the queue never full or empty. */
static double pair_ns(int lockfree, long items) {
  pp_rt_queue *rq = lockfree ? pp_rt_queue_new("pair", NULL, NULL, 1024) : NULL;
  mq m;
  if (!lockfree)
    mq_init(&m, 1024);
  void *x;
  int64_t t0 = now_ns();
  for (long i = 0; i < items; i++) {
    if (lockfree) {
      pp_rt_queue_push(rq, &x, (uint64_t)i, 0);
      pp_rt_queue_pop(rq, &x, NULL, 0);
    } else {
      mq_push(&m, (void *)(intptr_t)(i + 1), (uint64_t)i);
      mq_pop(&m, &x);
    }
  }
  double ns = (double)(now_ns() - t0) / (double)items;
  if (lockfree)
    pp_rt_queue_free(rq);
  else
    mq_free(&m);
  return ns;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 5;
  long items = argc > 2 ? atol(argv[2]) : 400000;
  if (rounds < 1 || rounds > 100 || items < 1000) {
    fprintf(stderr, "usage: pipeprof-bench-queue [ROUNDS 1..100] "
                    "[ITEMS >= 1000]\n");
    return 2;
  }
  for (int rec = 0; rec < 2; rec++) {
    if (rec) {
      pp_config cfg;
      pp_config_init(&cfg);
      cfg.out_path = "/dev/shm/pipeprof-bench-queue.pptrace";
      cfg.install_signals = 0;
      cfg.buffer_kib = 65536;
      if (pp_init(&cfg) != PP_OK) {
        fprintf(stderr, "pipeprof-bench-queue: %s\n", pp_last_error());
        return 1;
      }
    }
    double v[4][2][100];
    for (int r = 0; r < rounds; r++)
      for (int lf = 0; lf < 2; lf++) {
        v[0][lf][r] = throughput(lf, 1, items);
        v[1][lf][r] = throughput(lf, 4, items);
        v[2][lf][r] = pair_ns(lf, items);
      }
    printf("%s (%d rounds, %ld items each, medians)\n",
           rec ? "recording (trace mode)" : "no profiling session", rounds,
           items);
    static const char *const what[] = {"1->1 items/s", "4->4 items/s",
                                       "push+pop pair, one thread"};
    for (int k = 0; k < 3; k++) {
      double lf = median(v[k][1], rounds), mx = median(v[k][0], rounds);
      if (k < 2)
        printf("  %-26s runtime %10.0f  mutex %10.0f  ratio %.2fx\n", what[k],
               lf, mx, lf / mx);
      else
        printf("  %-26s runtime %7.1f ns  mutex %7.1f ns  ratio %.2fx\n",
               what[k], lf, mx, mx / lf);
    }
    if (rec) {
      pp_shutdown();
      remove("/dev/shm/pipeprof-bench-queue.pptrace");
    }
  }
  return 0;
}
