/* SPDX-License-Identifier: MIT */
/*
 * The live board (board.h): a table of entries keyed by site, written by
 * the writer thread, and a published copy that readers walk.
 */
#include "board.h"

#include <pthread.h>
#include <string.h>

#include "../format/pptrace.h"
#include "../internal.h"

#define SLOTS (2 * PP__BOARD_MAX) /* open addressing, power of two */

struct pp__board {
  const pp_srcloc *keys[SLOTS]; /* site -> entry index + 1 in idx */
  uint32_t idx[SLOTS];
  pp__board_entry *cur; /* the writer's, PP__BOARD_MAX */
  size_t n;
  uint64_t left_out;
  pthread_mutex_t lock; /* pub, npub, pub_left_out */
  pp__board_entry *pub;
  size_t npub;
  uint64_t pub_left_out;
  /* history (pp__board_history_on): per entry a ring of points, allocated
   * with the entry's first publish; under the lock */
  int history;
  pp__board_point **pts;
  unsigned *npts, *head;
};

pp__board *pp__board_new(void) {
  pp__board *b = pp__calloc(1, sizeof *b);
  if (!b)
    return NULL;
  b->cur = pp__calloc(PP__BOARD_MAX, sizeof *b->cur);
  b->pub = pp__calloc(PP__BOARD_MAX, sizeof *b->pub);
  if (!b->cur || !b->pub) {
    pp__board_free(b);
    return NULL;
  }
  pthread_mutex_init(&b->lock, NULL);
  return b;
}

void pp__board_free(pp__board *b) {
  if (!b)
    return;
  if (b->cur && b->pub)
    pthread_mutex_destroy(&b->lock);
  for (size_t i = 0; b->pts && i < PP__BOARD_MAX; i++)
    pp__free(b->pts[i]);
  pp__free(b->pts);
  pp__free(b->npts);
  pp__free(b->head);
  pp__free(b->cur);
  pp__free(b->pub);
  pp__free(b);
}

/* The slot of loc: where it is, or the empty one it would take; SLOTS
 * when the table is full. */
static size_t slot(const pp__board *b, const pp_srcloc *loc) {
  uintptr_t h = ((uintptr_t)loc >> 4) * (uintptr_t)0x9E3779B97F4A7C15ULL;
  for (size_t k = 0; k < SLOTS; k++) {
    size_t j = (h + k) & (SLOTS - 1);
    if (b->keys[j] == loc || !b->keys[j])
      return j;
  }
  return SLOTS;
}

/* loc's entry when it has one. */
static pp__board_entry *find(pp__board *b, const pp_srcloc *loc) {
  size_t j = slot(b, loc);
  return j < SLOTS && b->keys[j] == loc ? &b->cur[b->idx[j] - 1] : NULL;
}

static pp__board_entry *entry(pp__board *b, const pp_srcloc *loc, int kind,
                              int64_t ns) {
  size_t j = slot(b, loc);
  if (j == SLOTS)
    return NULL;
  if (b->keys[j] == loc)
    return &b->cur[b->idx[j] - 1];
  if (b->n >= PP__BOARD_MAX) {
    b->left_out++;
    return NULL;
  }
  pp__board_entry *e = &b->cur[b->n];
  memset(e, 0, sizeof *e);
  e->name = loc->name ? loc->name : "";
  e->kind = kind;
  e->first_ns = ns;
  if (kind == PP__BOARD_QUEUE) {
    /* a queue's stages and capacity travel in its site (core/queue.c) */
    e->from = loc->function ? loc->function : "";
    e->to = loc->file ? loc->file : "";
    e->depth = pp_depth_make(loc->line);
  }
  b->keys[j] = loc;
  b->idx[j] = (uint32_t)++b->n;
  return e;
}

static int64_t unzigzag(uint64_t v) {
  return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

int64_t pp__board_event(pp__board *b, unsigned type, const pp_srcloc *loc,
                        int64_t ns, uint64_t value, uint64_t extra) {
  int kind;
  switch (type) {
  case PPT_EV_COUNTER_SET:
  case PPT_EV_COUNTER_ADD:
  case PPT_EV_COUNTER_SETF:
    kind = loc->kind == PP_KIND_METRIC ? PP__BOARD_METRIC : PP__BOARD_COUNTER;
    break;
  case PPT_EV_FRAME:
    kind = PP__BOARD_FRAME;
    break;
  case PPT_EV_QUEUE_PUSH:
  case PPT_EV_QUEUE_POP:
  case PPT_EV_QUEUE_WAIT_BEGIN:
    kind = PP__BOARD_QUEUE;
    break;
  default:
    return 0;
  }
  pp__board_entry *e = entry(b, loc, kind, ns);
  if (!e)
    return 0;
  int64_t prev = e->events || e->pops ? e->last_ns : 0;
  if (ns > e->last_ns)
    e->last_ns = ns;
  switch (type) {
  case PPT_EV_COUNTER_SET:
    e->value = (double)(int64_t)value;
    e->not_total = 1;
    e->events++;
    break;
  case PPT_EV_COUNTER_ADD:
    e->value += (double)(int64_t)value;
    e->not_total |= (int64_t)value < 0;
    e->events++;
    break;
  case PPT_EV_COUNTER_SETF: {
    double v;
    memcpy(&v, &value, sizeof v);
    e->value = v;
    e->is_float = 1;
    e->not_total = 1;
    e->events++;
    break;
  }
  case PPT_EV_FRAME:
    e->events++;
    break;
  case PPT_EV_QUEUE_PUSH:
  case PPT_EV_QUEUE_POP: {
    int64_t d = unzigzag(extra);
    e->value = d < 0 ? 0 : (double)d;
    pp_depth_step(&e->depth, ns, d < 0 ? 0 : d);
    if (type == PPT_EV_QUEUE_PUSH)
      e->events++;
    else
      e->pops++;
    break;
  }
  default: /* a wait begins: value is why (1 full, 2 empty) */
    if (value == 1 || value == 2)
      e->waits[value - 1]++;
    break;
  }
  if (type == PPT_EV_COUNTER_SET || type == PPT_EV_COUNTER_ADD ||
      type == PPT_EV_COUNTER_SETF) {
    if (e->events == 1 || e->value < e->vmin)
      e->vmin = e->value;
    if (e->events == 1 || e->value > e->vmax)
      e->vmax = e->value;
    e->vsum += e->value;
  }
  if (e->value < e->lo || !(e->events + e->pops > 1))
    e->lo = e->value;
  if (e->value > e->hi || !(e->events + e->pops > 1))
    e->hi = e->value;
  return prev;
}

void pp__board_wait(pp__board *b, const pp_srcloc *loc, int why,
                    int64_t open_since, int64_t ns, int ended,
                    int new_waiter) {
  if (!b || !loc || (why != 1 && why != 2) || ns < 0)
    return;
  pp__board_entry *e = find(b, loc); /* its wait began: it has one */
  if (!e || e->kind != PP__BOARD_QUEUE)
    return;
  int k = why - 1;
  if (!ended && e->depth.steps && open_since > e->depth.t_last)
    ns = 0; /* began after the queue's last event */
  else if (!ended && e->depth.steps && open_since + ns > e->depth.t_last)
    ns = e->depth.t_last - open_since; /* as the analysis closes an open
                                          wait: at the queue's last event,
                                          the end of the share's window */
  int64_t *sum = ended ? &e->wait_ns[k] : &e->open_ns[k];
  *sum = ns > INT64_MAX - *sum ? INT64_MAX : *sum + ns;
  e->waiters[k] += new_waiter ? 1u : 0u;
}

void pp__board_history_on(pp__board *b) {
  if (!b || b->history)
    return;
  b->pts = pp__calloc(PP__BOARD_MAX, sizeof *b->pts);
  b->npts = pp__calloc(PP__BOARD_MAX, sizeof *b->npts);
  b->head = pp__calloc(PP__BOARD_MAX, sizeof *b->head);
  b->history = b->pts && b->npts && b->head;
}

void pp__board_publish(pp__board *b, int64_t at_ns) {
  pthread_mutex_lock(&b->lock);
  memcpy(b->pub, b->cur, b->n * sizeof *b->cur);
  b->npub = b->n;
  for (size_t i = 0; i < b->n; i++) /* the open waits: as of this publish */
    b->cur[i].open_ns[0] = b->cur[i].open_ns[1] = 0;
  b->pub_left_out = b->left_out;
  for (size_t i = 0; b->history && i < b->n; i++) {
    pp__board_entry *e = &b->cur[i];
    if (!b->pts[i] &&
        !(b->pts[i] = pp__calloc(PP__BOARD_POINTS, sizeof **b->pts)))
      continue;
    pp__board_point *pt = &b->pts[i][b->head[i]];
    pt->t_ns = at_ns;
    pt->value = e->value;
    pt->lo = e->lo;
    pt->hi = e->hi;
    b->head[i] = (b->head[i] + 1) % PP__BOARD_POINTS;
    if (b->npts[i] < PP__BOARD_POINTS)
      b->npts[i]++;
    e->lo = e->hi = e->value; /* the next range starts at the value */
  }
  pthread_mutex_unlock(&b->lock);
}

void pp__board_history(pp__board *b,
                       void (*fn)(void *ctx, const pp__board_entry *e,
                                  const pp__board_point *pts, size_t n),
                       void *ctx) {
  pp__board_point pts[PP__BOARD_POINTS];
  pthread_mutex_lock(&b->lock);
  for (size_t i = 0; b->history && i < b->npub; i++) {
    unsigned n = b->npts[i];
    if (!n)
      continue;
    unsigned start = (b->head[i] + PP__BOARD_POINTS - n) % PP__BOARD_POINTS;
    for (unsigned k = 0; k < n; k++)
      pts[k] = b->pts[i][(start + k) % PP__BOARD_POINTS];
    fn(ctx, &b->pub[i], pts, n);
  }
  pthread_mutex_unlock(&b->lock);
}

uint64_t pp__board_visit(pp__board *b,
                         void (*fn)(void *ctx, const pp__board_entry *e),
                         void *ctx) {
  pthread_mutex_lock(&b->lock);
  for (size_t i = 0; i < b->npub; i++)
    fn(ctx, &b->pub[i]);
  uint64_t lost = b->pub_left_out;
  pthread_mutex_unlock(&b->lock);
  return lost;
}
