/* SPDX-License-Identifier: MIT */
/*
 * Events of several threads in one time order (feed.h): a k-way merge of
 * the threads' event arrays for a model in memory, and a bounded reorder
 * buffer (per-thread queues under a heap of their heads) for a trace read
 * as a stream. Both use the same order: time, then thread index; a
 * thread's own events never overtake each other.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model/feed.h"

/* A thread's next event: the heap entry of both merges. */
typedef struct head {
  int64_t ts;
  uint32_t thread;
} head;

static int head_before(const head *a, const head *b) {
  if (a->ts != b->ts)
    return a->ts < b->ts;
  return a->thread < b->thread;
}

static void heap_up(head *h, size_t i) {
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!head_before(&h[i], &h[p]))
      break;
    head x = h[i];
    h[i] = h[p];
    h[p] = x;
    i = p;
  }
}

static void heap_down(head *h, size_t n, size_t i) {
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && head_before(&h[l], &h[m]))
      m = l;
    if (r < n && head_before(&h[r], &h[m]))
      m = r;
    if (m == i)
      return;
    head x = h[i];
    h[i] = h[m];
    h[m] = x;
    i = m;
  }
}

static int wanted(const pp_trace *t, uint32_t types, const pp_event *e) {
  return e->loc < t->nlocs && e->type < 32 &&
         (types & PP_FEED_TYPE(e->type)) != 0;
}

/* ---- a model in memory ----------------------------------------------------
 */

/* Index of th's next wanted event at or after i, or th->nev. */
static size_t next_wanted(const pp_trace *t, const pp_thread *th, size_t i,
                          uint32_t types) {
  while (i < th->nev && !wanted(t, types, &th->ev[i]))
    i++;
  return i;
}

int pp_feed_in_time_order(const pp_trace *t, uint32_t types, pp_feed_fn fn,
                          void *arg) {
  return pp_feed_threads_in_time_order(t, 0, types, fn, arg);
}

int pp_feed_threads_in_time_order(const pp_trace *t, size_t first,
                                  uint32_t types, pp_feed_fn fn, void *arg) {
  if (first >= t->nthreads)
    return 0;
  head *h = pp__malloc(t->nthreads * sizeof *h);
  size_t *pos = pp__malloc(t->nthreads * sizeof *pos);
  if (!h || !pos) {
    pp__free(h);
    pp__free(pos);
    return -1;
  }
  size_t n = 0;
  for (size_t i = first; i < t->nthreads; i++) {
    const pp_thread *th = &t->threads[i];
    pos[i] = next_wanted(t, th, 0, types);
    if (pos[i] < th->nev) {
      h[n] = (head){th->ev[pos[i]].ts, (uint32_t)i};
      heap_up(h, n++);
    }
  }
  int rc = 0;
  while (n > 0 && rc == 0) {
    uint32_t k = h[0].thread;
    const pp_thread *th = &t->threads[k];
    rc = fn(arg, t, k, &th->ev[pos[k]]);
    pos[k] = next_wanted(t, th, pos[k] + 1, types);
    if (pos[k] < th->nev)
      h[0].ts = th->ev[pos[k]].ts;
    else
      h[0] = h[--n];
    heap_down(h, n, 0);
  }
  pp__free(h);
  pp__free(pos);
  return rc;
}

/* ---- a stream: the bounded reorder buffer -------------------------------- */

typedef struct tqueue {
  pp_event *ev; /* ring */
  size_t first, n, cap; /* cap: 0 or a power of two */
} tqueue;

struct pp_order {
  pp_feed_fn fn;
  void *arg;
  size_t cap, waiting;
  size_t room; /* events the queues' rings hold room for */
  tqueue *q; /* by thread index */
  size_t nq;
  head *heap; /* threads with waiting events, by their first one */
  size_t nheap, cap_heap;
  int64_t handed; /* time of the last event handed over */
  int any_handed;
  uint64_t late;
};

pp_order *pp_order_new(size_t cap, pp_feed_fn fn, void *arg) {
  pp_order *o = pp__calloc(1, sizeof *o);
  if (!o)
    return NULL;
  o->cap = cap ? cap : 1;
  o->fn = fn;
  o->arg = arg;
  return o;
}

void pp_order_free(pp_order *o) {
  if (!o)
    return;
  for (size_t i = 0; i < o->nq; i++)
    pp__free(o->q[i].ev);
  pp__free(o->q);
  pp__free(o->heap);
  pp__free(o);
}

uint64_t pp_order_late(const pp_order *o) { return o->late; }

void pp_order_drop(pp_order *o) {
  for (size_t i = 0; i < o->nq; i++) {
    pp__free(o->q[i].ev);
    memset(&o->q[i], 0, sizeof o->q[i]);
  }
  o->room = 0;
  o->nheap = 0;
  o->waiting = 0;
  o->any_handed = 0;
}

static int hand_over(pp_order *o, const pp_trace *t, uint32_t thread,
                     const pp_event *e) {
  o->handed = e->ts;
  o->any_handed = 1;
  return o->fn(o->arg, t, thread, e);
}

/* Hand over the earliest waiting event. */
static int pop_one(pp_order *o, const pp_trace *t) {
  uint32_t k = o->heap[0].thread;
  tqueue *q = &o->q[k];
  pp_event e = q->ev[q->first];
  q->first = (q->first + 1) & (q->cap - 1);
  q->n--;
  o->waiting--;
  if (q->n) {
    head *h = o->heap;
    h[0].ts = q->ev[q->first].ts;
    /* mostly the same thread stays first: two compares, no call */
    if ((o->nheap < 2 || head_before(&h[0], &h[1])) &&
        (o->nheap < 3 || head_before(&h[0], &h[2])))
      return hand_over(o, t, k, &e);
  } else {
    o->heap[0] = o->heap[--o->nheap];
    /* A burst is over: give its room back once the rings hold room for
     * more than the buffer's bound (a queue emptied often, as when the
     * caller releases events, keeps its ring while they fit in it). */
    if (q->cap > 4096 && o->room > o->cap) {
      o->room -= q->cap;
      pp__free(q->ev);
      q->ev = NULL;
      q->cap = q->first = 0;
    }
  }
  heap_down(o->heap, o->nheap, 0);
  return hand_over(o, t, k, &e);
}

static int queue_push(pp_order *o, tqueue *q, const pp_event *e) {
  if (q->n == q->cap) {
    size_t cap = q->cap ? q->cap * 2 : 64;
    pp_event *nb = pp__malloc(cap * sizeof *nb);
    if (!nb)
      return -1;
    for (size_t i = 0; i < q->n; i++)
      nb[i] = q->ev[(q->first + i) & (q->cap - 1)];
    pp__free(q->ev);
    o->room += cap - q->cap;
    q->ev = nb;
    q->cap = cap;
    q->first = 0;
  }
  q->ev[(q->first + q->n) & (q->cap - 1)] = *e;
  q->n++;
  return 0;
}

int pp_order_put(pp_order *o, const pp_trace *t, uint32_t thread,
                 const pp_event *e) {
  if (thread >= o->nq) {
    size_t cap = o->nq;
    if (pp__grow((void **)&o->q, &cap, (size_t)thread + 1, sizeof *o->q))
      return -1;
    memset(o->q + o->nq, 0, (cap - o->nq) * sizeof *o->q);
    o->nq = cap;
  }
  tqueue *q = &o->q[thread];
  if (!q->n && o->any_handed && e->ts < o->handed) {
    o->late++; /* its place has passed: late, but never lost */
    return hand_over(o, t, thread, e);
  }
  if (!q->n) {
    if (pp__grow((void **)&o->heap, &o->cap_heap, o->nheap + 1,
                 sizeof *o->heap))
      return -1;
    o->heap[o->nheap] = (head){e->ts, thread};
    heap_up(o->heap, o->nheap++);
  }
  if (queue_push(o, q, e) != 0)
    return -1;
  o->waiting++;
  int rc = 0;
  while (rc == 0 && o->waiting > o->cap)
    rc = pop_one(o, t);
  return rc;
}

int pp_order_release(pp_order *o, const pp_trace *t, int64_t before) {
  int rc = 0;
  while (rc == 0 && o->nheap > 0 && o->heap[0].ts < before)
    rc = pop_one(o, t);
  return rc;
}

int pp_order_flush(pp_order *o, const pp_trace *t) {
  int rc = 0;
  while (rc == 0 && o->nheap > 0)
    rc = pop_one(o, t);
  o->any_handed = 0; /* a new sequence: nothing put later is late */
  return rc;
}
