/* SPDX-License-Identifier: MIT */
/*
 * The dynamic batcher (pipeprof/runtime.h, docs/runtime.md): per lane a
 * ring of items with their arrival times, under one mutex with a
 * condition for consumers (a batch may go) and one for producers (room).
 * Batching is decided on the consumer's side: the batch goes when the
 * lanes hold max_batch items, when the oldest item of some lane has
 * waited that lane's delay, or at the close.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../internal.h"
#include "common.h"
#include "pipeprof/runtime.h"

#define MAX_LANES 16

typedef struct entry {
  void *item;
  uint64_t id;
  int64_t t; /* arrival, CLOCK_MONOTONIC ns */
} entry;

typedef struct lane_q {
  entry *v;
  size_t head, n;
  int64_t delay_ns;
} lane_q;

struct pp_rt_batcher {
  pthread_mutex_t m;
  pthread_cond_t can_batch, has_room;
  lane_q lanes[MAX_LANES];
  int nlanes;
  size_t cap, max_batch, total;
  size_t limit; /* the max_batch given at creation */
  pp_rt_pad pad;
  int closed;
  pp_queue *rec; /* declared at the first put (or pp_rt_batcher_stages) */
  char name[72], from[64], to[64];
  char form_name[80];
};

/* The batcher's queue for the profiler, declared on first use, so that
 * pp_rt_batcher_stages can still name its stages. Under b->m. */
static pp_queue *rec(pp_rt_batcher *b) {
  if (!b->rec)
    b->rec = pp_queue_declare(b->name, b->from[0] ? b->from : NULL,
                              b->to[0] ? b->to : NULL,
                              (int64_t)(b->cap * (size_t)b->nlanes));
  return b->rec;
}

pp_rt_batcher *pp_rt_batcher_new(const char *name, size_t max_batch,
                                 int64_t max_delay_ns, int lanes,
                                 size_t lane_capacity, pp_rt_pad pad) {
  if (max_batch < 1 || max_batch > 65536 || max_delay_ns < 0 || lanes < 1 ||
      lanes > MAX_LANES || lane_capacity < 1 ||
      lane_capacity > ((size_t)1 << 30) || (unsigned)pad > PP_RT_PAD_POW2)
    return NULL;
  pp_rt_batcher *b = calloc(1, sizeof *b);
  if (!b)
    return NULL;
  for (int i = 0; i < lanes; i++) {
    b->lanes[i].v = calloc(lane_capacity, sizeof(entry));
    b->lanes[i].delay_ns = max_delay_ns;
    if (!b->lanes[i].v) {
      for (int k = 0; k <= i; k++)
        free(b->lanes[k].v);
      free(b);
      return NULL;
    }
  }
  b->nlanes = lanes;
  b->cap = lane_capacity;
  b->max_batch = b->limit = max_batch;
  b->pad = pad;
  pthread_mutex_init(&b->m, NULL);
  pp__rt_cond_init(&b->can_batch);
  pp__rt_cond_init(&b->has_room);
  snprintf(b->name, sizeof b->name, "%s", name ? name : "batcher");
  snprintf(b->form_name, sizeof b->form_name, "%s form", b->name);
  return b;
}

int pp_rt_batcher_stages(pp_rt_batcher *b, const char *from_stage,
                         const char *to_stage) {
  if (!b)
    return PP_EINVAL;
  pthread_mutex_lock(&b->m);
  int rc = PP_EBUSY;
  if (!b->rec) {
    snprintf(b->from, sizeof b->from, "%s", from_stage ? from_stage : "");
    snprintf(b->to, sizeof b->to, "%s", to_stage ? to_stage : "");
    rec(b);
    rc = PP_OK;
  }
  pthread_mutex_unlock(&b->m);
  return rc;
}

int pp_rt_batcher_lane_delay(pp_rt_batcher *b, int lane, int64_t max_delay_ns) {
  if (!b || lane < 0 || lane >= b->nlanes || max_delay_ns < 0)
    return PP_EINVAL;
  pthread_mutex_lock(&b->m);
  b->lanes[lane].delay_ns = max_delay_ns;
  pthread_mutex_unlock(&b->m);
  return PP_OK;
}

int pp_rt_batcher_put(pp_rt_batcher *b, void *item, uint64_t id, int lane,
                      int64_t timeout_ns) {
  if (!b || lane < 0 || lane >= b->nlanes)
    return PP_EINVAL;
  int64_t deadline = pp__rt_deadline(timeout_ns);
  pthread_mutex_lock(&b->m);
  rec(b);
  lane_q *l = &b->lanes[lane];
  int rc = PP_OK, waited = 0;
  while (!b->closed && l->n == b->cap) {
    if ((rc = pp__rt_no_wait(timeout_ns, deadline)) != 0)
      break;
    if (!waited++)
      pp_queue_wait_begin(b->rec, PP_QUEUE_FULL);
    pp__rt_wait(&b->has_room, &b->m, deadline);
  }
  if (waited)
    pp_queue_wait_end(b->rec, PP_QUEUE_FULL);
  if (rc == PP_OK && b->closed)
    rc = PP_ECLOSED;
  if (rc == PP_OK) {
    entry *e = &l->v[(l->head + l->n++) % b->cap];
    e->item = item;
    e->id = id;
    e->t = pp__rt_now_ns();
    pp_queue_push(b->rec, id);
    /* the first item starts a delay; max_batch items make a batch */
    if (++b->total == 1 || b->total >= b->max_batch || l->n == 1)
      pthread_cond_signal(&b->can_batch);
  }
  pthread_mutex_unlock(&b->m);
  return rc;
}

/* The earliest time some lane's oldest item has waited its delay. */
static int64_t due(const pp_rt_batcher *b) {
  int64_t d = INT64_MAX;
  for (int i = 0; i < b->nlanes; i++) {
    const lane_q *l = &b->lanes[i];
    if (l->n) {
      int64_t t = l->v[l->head].t + l->delay_ns;
      if (t < d)
        d = t;
    }
  }
  return d;
}

static size_t padded(const pp_rt_batcher *b, size_t n) {
  if (b->pad == PP_RT_PAD_MAX)
    return b->max_batch;
  if (b->pad == PP_RT_PAD_POW2) {
    size_t p = 1;
    while (p < n)
      p <<= 1;
    return p;
  }
  return n;
}

int pp_rt_batcher_next(pp_rt_batcher *b, pp_rt_batch *out, int64_t timeout_ns) {
  if (!b || !out || !out->items)
    return PP_EINVAL;
  int64_t start = pp__rt_now_ns();
  int64_t deadline = timeout_ns > 0 ? start + timeout_ns : -1;
  pp_zone z = pp_zone_begin_name(b->form_name);
  pthread_mutex_lock(&b->m);
  int rc = PP_OK, full = 0;
  for (;;) {
    if (b->total >= b->max_batch) {
      full = 1;
      break;
    }
    if (b->total && (b->closed || pp__rt_now_ns() >= due(b)))
      break;
    if (!b->total && b->closed) {
      rc = PP_ECLOSED;
      break;
    }
    if ((rc = pp__rt_no_wait(timeout_ns, deadline)) != 0)
      break;
    /* wake for the next item, the due time or the deadline */
    int64_t until = b->total ? due(b) : deadline;
    if (deadline >= 0 && (until < 0 || deadline < until))
      until = deadline;
    pp__rt_wait(&b->can_batch, &b->m, until);
  }
  if (rc == PP_OK) {
    size_t n = 0;
    int64_t oldest = INT64_MAX, t = pp__rt_now_ns();
    for (int i = 0; i < b->nlanes && n < b->max_batch; i++) {
      lane_q *l = &b->lanes[i];
      while (l->n && n < b->max_batch) {
        entry *e = &l->v[l->head];
        out->items[n] = e->item;
        if (out->ids)
          out->ids[n] = e->id;
        if (e->t < oldest)
          oldest = e->t;
        pp_queue_pop(b->rec, e->id);
        l->head = (l->head + 1) % b->cap;
        l->n--;
        n++;
      }
    }
    b->total -= n;
    out->n = n;
    out->padded = padded(b, n);
    out->waited_ns = t - oldest;
    out->full = full;
    pthread_cond_broadcast(&b->has_room);
  }
  pthread_mutex_unlock(&b->m);
  pp_zone_end(z);
  if (rc == PP_OK)
    pp_batch((uint32_t)out->n, (uint32_t)out->padded);
  return rc;
}

int pp_rt_batcher_set_max(pp_rt_batcher *b, size_t max_batch) {
  if (!b || max_batch < 1 || max_batch > b->limit)
    return PP_EINVAL;
  pthread_mutex_lock(&b->m);
  b->max_batch = max_batch;
  pthread_cond_broadcast(&b->can_batch); /* a smaller size may be due */
  pthread_mutex_unlock(&b->m);
  return PP_OK;
}

void pp_rt_batcher_close(pp_rt_batcher *b) {
  if (!b)
    return;
  pthread_mutex_lock(&b->m);
  b->closed = 1;
  pthread_cond_broadcast(&b->can_batch);
  pthread_cond_broadcast(&b->has_room);
  pthread_mutex_unlock(&b->m);
}

void pp_rt_batcher_free(pp_rt_batcher *b) {
  if (!b)
    return;
  for (int i = 0; i < b->nlanes; i++)
    free(b->lanes[i].v);
  pthread_mutex_destroy(&b->m);
  pthread_cond_destroy(&b->can_batch);
  pthread_cond_destroy(&b->has_room);
  free(b);
}
