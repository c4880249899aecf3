/* SPDX-License-Identifier: MIT */
/*
 * Pipelines of stages on the runtime's queues (pipeprof/runtime.h,
 * docs/runtime.md). Each stage owns its input queue and worker threads; a
 * worker pops an item, runs the stage's function inside a zone named
 * like the stage, and pushes the result into the next stage's queue. The
 * last worker of a stage to finish closes the next queue, so a drain
 * flows down the line. A failure or a cancel closes every queue; workers
 * then drop what they pop.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "pipeprof/runtime.h"

#define MAX_STAGES 64
#define MAX_WORKERS 256

typedef struct stage stage;
typedef struct worker {
  stage *st;
  int n;
  pthread_t th;
  int started;
} worker;

struct stage {
  pp_rt_pipeline *p;
  int index;
  char name[64];
  pp_rt_stage_fn fn;
  void *ctx;
  int nworkers;
  worker *w;
  pp_rt_queue *in;
  _Atomic int live; /* workers still running */
};

struct pp_rt_pipeline {
  char name[64];
  char source[64], sink[64]; /* who submits and who takes, for the report */
  pp_rt_drop_fn drop;
  void *drop_ctx;
  stage *st[MAX_STAGES];
  int nst;
  pp_rt_queue *out; /* pp_rt_pipeline_output, or NULL */
  pp_rt_batcher *to_batcher; /* pp_rt_pipeline_to_batcher, or NULL */
  int to_lane;
  size_t out_cap;
  int started, joined;
  _Atomic int stopping; /* cancelled or failed: drop what is popped */
  _Atomic uint64_t submitted, completed, dropped, filtered;
  pthread_mutex_t err_lock;
  int error;
  char error_stage[64];
  uint64_t error_item;
};

pp_rt_pipeline *pp_rt_pipeline_new(const char *name, pp_rt_drop_fn drop,
                                   void *drop_ctx) {
  pp_rt_pipeline *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  snprintf(p->name, sizeof p->name, "%s", name ? name : "pipeline");
  snprintf(p->source, sizeof p->source, "submit");
  snprintf(p->sink, sizeof p->sink, "take");
  p->drop = drop;
  p->drop_ctx = drop_ctx;
  pthread_mutex_init(&p->err_lock, NULL);
  return p;
}

int pp_rt_pipeline_ends(pp_rt_pipeline *p, const char *source,
                        const char *sink) {
  if (!p)
    return PP_EINVAL;
  if (p->nst || p->started)
    return PP_EBUSY;
  if (source && *source)
    snprintf(p->source, sizeof p->source, "%s", source);
  if (sink && *sink)
    snprintf(p->sink, sizeof p->sink, "%s", sink);
  return PP_OK;
}

int pp_rt_stage_add(pp_rt_pipeline *p, const char *name, int workers,
                    size_t queue_capacity, pp_rt_stage_fn fn, void *ctx) {
  if (!p || !name || !*name || !fn || workers < 1 || workers > MAX_WORKERS ||
      queue_capacity < 1)
    return PP_EINVAL;
  if (p->started)
    return PP_EBUSY;
  if (p->nst >= MAX_STAGES)
    return PP_EINVAL;
  stage *s = calloc(1, sizeof *s);
  if (!s)
    return PP_ENOMEM;
  s->p = p;
  s->index = p->nst;
  snprintf(s->name, sizeof s->name, "%s", name);
  s->fn = fn;
  s->ctx = ctx;
  s->nworkers = workers;
  s->w = calloc((size_t)workers, sizeof *s->w);
  char qname[80];
  snprintf(qname, sizeof qname, "%s in", s->name);
  s->in =
      s->w ? pp_rt_queue_new(qname, p->nst ? p->st[p->nst - 1]->name : p->source,
                             s->name, queue_capacity)
           : NULL;
  if (!s->in) {
    free(s->w);
    free(s);
    return queue_capacity > ((size_t)1 << 30) ? PP_EINVAL : PP_ENOMEM;
  }
  p->st[p->nst++] = s;
  return PP_OK;
}

int pp_rt_pipeline_output(pp_rt_pipeline *p, size_t capacity) {
  if (!p || capacity < 1 || capacity > ((size_t)1 << 30))
    return PP_EINVAL;
  if (p->started || p->out_cap || p->to_batcher)
    return PP_EBUSY;
  p->out_cap = capacity;
  return PP_OK;
}

int pp_rt_pipeline_to_batcher(pp_rt_pipeline *p, pp_rt_batcher *b, int lane) {
  if (!p || !b || lane < 0)
    return PP_EINVAL;
  if (p->started || p->out_cap || p->to_batcher)
    return PP_EBUSY;
  p->to_batcher = b;
  p->to_lane = lane;
  return PP_OK;
}

/* The first failure wins; every queue closes so that every thread ends. */
static void fail(pp_rt_pipeline *p, const stage *s, uint64_t id, int rc) {
  pthread_mutex_lock(&p->err_lock);
  if (p->error == PP_OK) {
    p->error = rc;
    snprintf(p->error_stage, sizeof p->error_stage, "%s", s->name);
    p->error_item = id;
  }
  pthread_mutex_unlock(&p->err_lock);
  pp_rt_pipeline_cancel(p);
}

static void drop(pp_rt_pipeline *p, void *item, uint64_t id) {
  atomic_fetch_add(&p->dropped, 1);
  if (p->drop)
    p->drop(p->drop_ctx, item, id);
}

static void *work(void *arg) {
  worker *w = arg;
  stage *s = w->st;
  pp_rt_pipeline *p = s->p;
  char tname[80];
  snprintf(tname, sizeof tname, "%s %d", s->name, w->n);
  pp_thread_name(tname);
  int last = s->index == p->nst - 1;
  pp_rt_queue *next = last ? p->out : p->st[s->index + 1]->in;
  for (;;) {
    void *item;
    uint64_t id;
    if (pp_rt_queue_pop(s->in, &item, &id, -1) != PP_OK)
      break; /* closed and drained */
    if (atomic_load(&p->stopping)) {
      drop(p, item, id);
      continue;
    }
    void *out = NULL;
    /* the item's flow steps and ends inside the stage's zone, so that its
     * critical path finds the stage */
    pp_zone z = pp_zone_begin_name(s->name);
    pp_flow_step(p->name, id);
    int rc = s->fn(s->ctx, item, id, &out);
    if (rc == PP_OK && (!out || last))
      pp_flow_end(p->name, id);
    pp_zone_end(z);
    if (rc != PP_OK) {
      fail(p, s, id, rc);
      continue;
    }
    if (!out) {
      atomic_fetch_add(&p->filtered, 1);
      continue;
    }
    if (last) {
      atomic_fetch_add(&p->completed, 1);
      if (p->to_batcher) {
        if (pp_rt_batcher_put(p->to_batcher, out, id, p->to_lane, -1) != PP_OK)
          drop(p, out, id);
      } else if (next && pp_rt_queue_push(next, out, id, -1) != PP_OK) {
        drop(p, out, id);
      }
      continue;
    }
    if (pp_rt_queue_push(next, out, id, -1) != PP_OK)
      drop(p, out, id); /* the next stage closed: cancelled or failed */
  }
  /* the last worker of the stage closes the way on */
  if (atomic_fetch_sub(&s->live, 1) == 1 && next)
    pp_rt_queue_close(next);
  return NULL;
}

int pp_rt_pipeline_start(pp_rt_pipeline *p) {
  if (!p || p->nst == 0)
    return PP_EINVAL;
  if (p->started)
    return PP_EBUSY;
  if (p->out_cap &&
      !(p->out = pp_rt_queue_new("output", p->st[p->nst - 1]->name, p->sink,
                                 p->out_cap)))
    return PP_ENOMEM;
  p->started = 1;
  for (int i = 0; i < p->nst; i++) {
    stage *s = p->st[i];
    atomic_store(&s->live, s->nworkers);
    for (int k = 0; k < s->nworkers; k++) {
      s->w[k].st = s;
      s->w[k].n = k;
      if (pthread_create(&s->w[k].th, NULL, work, &s->w[k]) != 0) {
        /* the workers that did start carry the pipeline: count the rest
         * as finished, and fail it */
        atomic_fetch_sub(&s->live, s->nworkers - k);
        fail(p, s, 0, PP_ENOMEM);
        if (atomic_load(&s->live) == 0)
          pp_rt_queue_close(i + 1 < p->nst ? p->st[i + 1]->in : p->out);
        for (int j = i + 1; j < p->nst; j++)
          atomic_store(&p->st[j]->live, 0);
        return PP_ENOMEM;
      }
      s->w[k].started = 1;
    }
  }
  return PP_OK;
}

int pp_rt_pipeline_submit(pp_rt_pipeline *p, void *item, uint64_t id,
                          int64_t timeout_ns) {
  if (!p || !p->started)
    return PP_EINVAL;
  pp_flow_begin(p->name, id);
  int rc = pp_rt_queue_push(p->st[0]->in, item, id, timeout_ns);
  if (rc == PP_OK)
    atomic_fetch_add(&p->submitted, 1);
  return rc;
}

int pp_rt_pipeline_take(pp_rt_pipeline *p, void **item, uint64_t *id,
                        int64_t timeout_ns) {
  if (!p || !p->out)
    return PP_EINVAL;
  return pp_rt_queue_pop(p->out, item, id, timeout_ns);
}

static void join(pp_rt_pipeline *p) {
  if (p->joined)
    return;
  for (int i = 0; i < p->nst; i++)
    for (int k = 0; k < p->st[i]->nworkers; k++)
      if (p->st[i]->w[k].started)
        pthread_join(p->st[i]->w[k].th, NULL);
  p->joined = 1;
}

int pp_rt_pipeline_drain(pp_rt_pipeline *p) {
  if (!p || !p->started)
    return PP_EINVAL;
  pp_rt_queue_close(p->st[0]->in);
  join(p);
  pthread_mutex_lock(&p->err_lock);
  int rc = p->error;
  pthread_mutex_unlock(&p->err_lock);
  return rc;
}

void pp_rt_pipeline_cancel(pp_rt_pipeline *p) {
  if (!p)
    return;
  atomic_store(&p->stopping, 1);
  for (int i = 0; i < p->nst; i++)
    pp_rt_queue_close(p->st[i]->in);
  pp_rt_queue_close(p->out); /* a full one would hold the last stage */
}

void pp_rt_pipeline_stats(pp_rt_pipeline *p, pp_rt_stats *o) {
  memset(o, 0, sizeof *o);
  if (!p)
    return;
  o->submitted = atomic_load(&p->submitted);
  o->completed = atomic_load(&p->completed);
  o->dropped = atomic_load(&p->dropped);
  o->filtered = atomic_load(&p->filtered);
  pthread_mutex_lock(&p->err_lock);
  o->error = p->error;
  snprintf(o->error_stage, sizeof o->error_stage, "%s", p->error_stage);
  o->error_item = p->error_item;
  pthread_mutex_unlock(&p->err_lock);
}

void pp_rt_pipeline_free(pp_rt_pipeline *p) {
  if (!p)
    return;
  if (p->started) {
    pp_rt_pipeline_cancel(p);
    join(p);
    /* what is left in the output queue is the caller's: dropped */
    void *item;
    uint64_t id;
    while (p->out && pp_rt_queue_pop(p->out, &item, &id, 0) == PP_OK)
      drop(p, item, id);
  }
  for (int i = 0; i < p->nst; i++) {
    pp_rt_queue_free(p->st[i]->in);
    free(p->st[i]->w);
    free(p->st[i]);
  }
  pp_rt_queue_free(p->out);
  pthread_mutex_destroy(&p->err_lock);
  free(p);
}
