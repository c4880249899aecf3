/* SPDX-License-Identifier: MIT */
/*
 * The runtime's bounded MPMC queue (pipeprof/runtime.h, docs/runtime.md).
 *
 * The ring: each slot carries a sequence number. A producer at position
 * pos may fill slot pos & mask when its sequence is pos; it claims the
 * position by moving the shared tail from pos to pos + 1 with a CAS,
 * writes the item, then sets the sequence to pos + 1. A consumer at pos
 * may take the slot when its sequence is pos + 1, claims by moving the
 * head, reads, and sets the sequence to pos + capacity: the slot is then
 * free for the producer one lap later. (The scheme is Dmitry Vyukov's
 * bounded MPMC queue, written here from its description.)
 *
 * Waiting: a producer that finds the ring full, or a consumer that finds
 * it empty, announces itself in a waiter count, reads an epoch word, tries
 * once more, and sleeps on the epoch with futex while it is unchanged.
 * Every pop (push) that sees producers (consumers) waiting bumps the epoch
 * and wakes one. Announce-then-retry on the waiter's side and
 * publish-then-check on the other, each with a full fence between, keep a
 * wake-up from being lost.
 *
 * Closing sets the top bit of the tail: no push can claim a position after
 * that, and the positions claimed before are all published soon. A
 * consumer that finds the ring empty and the tail closed knows where the
 * queue ends, takes what is left, and then reports the close. Closing
 * bumps both epochs and wakes everyone.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../internal.h"
#include "common.h"
#include "pipeprof/runtime.h"

#define SPINS 64   /* tries before yielding */
#define YIELDS 128 /* tries with sched_yield before sleeping */
#define CLOSED ((size_t)1 << (sizeof(size_t) * 8 - 1)) /* in tail */

enum { DONE = 0, WOULD_WAIT = 1, ENDED = 2 };

typedef struct slot {
  _Atomic size_t seq;
  void *item;
  uint64_t id;
} slot;

/* A side that can wait: producers on "not full", consumers on "not
 * empty". Each on its own cache line. */
typedef struct waitq {
  _Alignas(64) _Atomic uint32_t epoch;
  _Atomic uint32_t waiters;
} waitq;

struct pp_rt_queue {
  _Alignas(64) _Atomic size_t tail; /* next position to push; CLOSED */
  _Alignas(64) _Atomic size_t head; /* next position to pop */
  _Alignas(64) slot *ring;
  size_t mask;
  pp_queue *rec; /* the profiler's queue (pipeprof.h) */
  waitq not_full, not_empty;
};

static void fwait(_Atomic uint32_t *w, uint32_t seen, int64_t timeout_ns) {
  struct timespec ts, *tp = NULL;
  if (timeout_ns >= 0) {
    ts.tv_sec = (time_t)(timeout_ns / 1000000000);
    ts.tv_nsec = (long)(timeout_ns % 1000000000);
    tp = &ts;
  }
  syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, seen, tp, NULL, 0);
}

static void fwake(_Atomic uint32_t *w, int n) {
  syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* After a push (pop) the other side may proceed: wake one waiter. */
static void signal_one(waitq *wq) {
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_load_explicit(&wq->waiters, memory_order_relaxed)) {
    atomic_fetch_add_explicit(&wq->epoch, 1, memory_order_release);
    fwake(&wq->epoch, 1);
  }
}

static void signal_all(waitq *wq) {
  atomic_fetch_add_explicit(&wq->epoch, 1, memory_order_seq_cst);
  fwake(&wq->epoch, 1 << 30);
}

static size_t round_pow2(size_t n) {
  size_t c = 1;
  while (c < n)
    c <<= 1;
  return c;
}

pp_rt_queue *pp_rt_queue_new(const char *name, const char *from_stage,
                             const char *to_stage, size_t capacity) {
  if (capacity < 1 || capacity > ((size_t)1 << 30))
    return NULL;
  size_t cap = round_pow2(capacity < 2 ? 2 : capacity);
  pp_rt_queue *q = aligned_alloc(64, sizeof *q);
  if (!q)
    return NULL;
  memset(q, 0, sizeof *q);
  q->ring = aligned_alloc(64, (cap * sizeof *q->ring + 63) & ~(size_t)63);
  if (!q->ring) {
    free(q);
    return NULL;
  }
  for (size_t i = 0; i < cap; i++) {
    atomic_init(&q->ring[i].seq, i);
    q->ring[i].item = NULL;
    q->ring[i].id = 0;
  }
  q->mask = cap - 1;
  q->rec = pp_queue_declare(name ? name : "queue", from_stage, to_stage,
                            (int64_t)cap);
  return q;
}

void pp_rt_queue_free(pp_rt_queue *q) {
  if (!q)
    return;
  free(q->ring);
  free(q);
}

/* One try: DONE; WOULD_WAIT (full); ENDED (closed). */
static int try_push(pp_rt_queue *q, void *item, uint64_t id) {
  size_t pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
  for (;;) {
    if (pos & CLOSED)
      return ENDED;
    slot *s = &q->ring[pos & q->mask];
    size_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
    intptr_t d = (intptr_t)seq - (intptr_t)pos;
    if (d == 0) {
      if (atomic_compare_exchange_weak_explicit(&q->tail, &pos, pos + 1,
                                                memory_order_relaxed,
                                                memory_order_relaxed)) {
        s->item = item;
        s->id = id;
        /* recorded before a consumer can see the item (pipeprof.h) */
        pp_queue_push(q->rec, id);
        atomic_store_explicit(&s->seq, pos + 1, memory_order_release);
        return DONE;
      }
    } else if (d < 0) {
      return WOULD_WAIT;
    } else {
      pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
    }
  }
}

/* One try: DONE; WOULD_WAIT (empty); ENDED (closed and drained). */
static int try_pop(pp_rt_queue *q, void **item, uint64_t *id) {
  size_t pos = atomic_load_explicit(&q->head, memory_order_relaxed);
  for (;;) {
    slot *s = &q->ring[pos & q->mask];
    size_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
    intptr_t d = (intptr_t)seq - (intptr_t)(pos + 1);
    if (d == 0) {
      if (atomic_compare_exchange_weak_explicit(&q->head, &pos, pos + 1,
                                                memory_order_relaxed,
                                                memory_order_relaxed)) {
        void *it = s->item;
        uint64_t i = s->id;
        /* recorded before the slot is free again: a push into it then
         * counts after this pop, so the recorded depth never passes the
         * capacity */
        pp_queue_pop(q->rec, i);
        atomic_store_explicit(&s->seq, pos + q->mask + 1, memory_order_release);
        if (item)
          *item = it;
        if (id)
          *id = i;
        return DONE;
      }
    } else if (d < 0) {
      /* empty, or a push claimed pos and is about to publish it */
      size_t t = atomic_load_explicit(&q->tail, memory_order_acquire);
      if (!(t & CLOSED))
        return WOULD_WAIT;
      if ((t & ~CLOSED) == pos)
        return ENDED;
      sched_yield(); /* closed: the rest is published shortly */
      pos = atomic_load_explicit(&q->head, memory_order_relaxed);
    } else {
      pos = atomic_load_explicit(&q->head, memory_order_relaxed);
    }
  }
}

/* Wait on wq until attempt is DONE or ENDED or the deadline passes. */
static int wait_for(pp_rt_queue *q, waitq *wq, int why, int64_t timeout_ns,
                    int (*attempt)(pp_rt_queue *, void *, void *), void *a,
                    void *b) {
  int r = WOULD_WAIT;
  for (int i = 0; i < SPINS + YIELDS && r == WOULD_WAIT; i++) {
    if (i >= SPINS)
      sched_yield(); /* let the other side run: it may share our CPU */
    r = attempt(q, a, b);
  }
  if (r != WOULD_WAIT)
    return r == DONE ? PP_OK : PP_ECLOSED;
  int64_t deadline = pp__rt_deadline(timeout_ns);
  pp_queue_wait_begin(q->rec, why);
  int rc;
  atomic_fetch_add_explicit(&wq->waiters, 1, memory_order_seq_cst);
  for (;;) {
    uint32_t e = atomic_load_explicit(&wq->epoch, memory_order_seq_cst);
    r = attempt(q, a, b);
    if (r != WOULD_WAIT) {
      rc = r == DONE ? PP_OK : PP_ECLOSED;
      break;
    }
    int64_t left = -1;
    if (timeout_ns > 0) {
      left = deadline - pp__rt_now_ns();
      if (left <= 0) {
        rc = PP_ETIMEDOUT;
        break;
      }
    }
    fwait(&wq->epoch, e, left);
  }
  atomic_fetch_sub_explicit(&wq->waiters, 1, memory_order_relaxed);
  pp_queue_wait_end(q->rec, why);
  return rc;
}

static int attempt_push(pp_rt_queue *q, void *item, void *id) {
  return try_push(q, item, *(uint64_t *)id);
}

static int attempt_pop(pp_rt_queue *q, void *item, void *id) {
  return try_pop(q, item, id);
}

/* A call's status from its first try r, waiting on wq when it would
 * wait; a success wakes a waiter of the other side. */
static int settle(pp_rt_queue *q, int r, int64_t timeout_ns, waitq *wq, int why,
                  int (*attempt)(pp_rt_queue *, void *, void *), void *a,
                  void *b, waitq *other) {
  int rc = r == DONE         ? PP_OK
           : r == ENDED      ? PP_ECLOSED
           : timeout_ns == 0 ? PP_EAGAIN
                             : wait_for(q, wq, why, timeout_ns, attempt, a, b);
  if (rc == PP_OK)
    signal_one(other);
  return rc;
}

int pp_rt_queue_push(pp_rt_queue *q, void *item, uint64_t id,
                     int64_t timeout_ns) {
  if (!q)
    return PP_EINVAL;
  return settle(q, try_push(q, item, id), timeout_ns, &q->not_full,
                PP_QUEUE_FULL, attempt_push, item, &id, &q->not_empty);
}

int pp_rt_queue_pop(pp_rt_queue *q, void **item, uint64_t *id,
                    int64_t timeout_ns) {
  if (!q)
    return PP_EINVAL;
  return settle(q, try_pop(q, item, id), timeout_ns, &q->not_empty,
                PP_QUEUE_EMPTY, attempt_pop, item, id, &q->not_full);
}

void pp_rt_queue_close(pp_rt_queue *q) {
  if (!q)
    return;
  atomic_fetch_or_explicit(&q->tail, CLOSED, memory_order_seq_cst);
  signal_all(&q->not_full);
  signal_all(&q->not_empty);
}

size_t pp_rt_queue_depth(const pp_rt_queue *q) {
  if (!q)
    return 0;
  size_t h =
      atomic_load_explicit(&((pp_rt_queue *)q)->head, memory_order_relaxed);
  size_t t =
      atomic_load_explicit(&((pp_rt_queue *)q)->tail, memory_order_relaxed) &
      ~CLOSED;
  return t > h ? t - h : 0;
}

size_t pp_rt_queue_capacity(const pp_rt_queue *q) {
  return q ? q->mask + 1 : 0;
}
