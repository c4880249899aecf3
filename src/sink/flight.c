/* SPDX-License-Identifier: MIT */
/*
 * Reading flight rings without consuming them, and the flight sink's GPU
 * zones (see flight.h).
 */
#include "flight.h"

#include <string.h>

#include "../internal.h"

typedef struct flight_sink {
  pp__sink sink;
  pp__gpu_rec *gpu; /* ring of the newest PP__FLIGHT_GPU_MAX */
  uint64_t total;   /* records ever added */
} flight_sink;

static void flight_gpu(pp__sink *k, pp__gpu_rec *recs, size_t n,
                       const pp__clockmap *clock) {
  flight_sink *f = (flight_sink *)k;
  (void)clock;
  if (!n)
    return;
  if (!f->gpu && !(f->gpu = pp__calloc(PP__FLIGHT_GPU_MAX, sizeof *f->gpu)))
    return;
  for (size_t i = 0; i < n; i++)
    f->gpu[f->total++ % PP__FLIGHT_GPU_MAX] = recs[i];
}

static void flight_free(pp__sink *k) {
  flight_sink *f = (flight_sink *)k;
  if (!f)
    return;
  pp__free(f->gpu);
  pp__free(f);
}

static const pp__sink_ops flight_ops = {
    .name = "flight", .gpu = flight_gpu, .free = flight_free};

pp__sink *pp__flight_sink_new(void) {
  flight_sink *f = pp__calloc(1, sizeof *f);
  if (!f)
    return NULL;
  f->sink.ops = &flight_ops;
  return &f->sink;
}

size_t pp__flight_sink_gpu(pp__sink *k, pp__gpu_rec **out) {
  flight_sink *f = (flight_sink *)k;
  *out = NULL;
  if (!f || !f->total || !f->gpu)
    return 0;
  size_t n =
      f->total < PP__FLIGHT_GPU_MAX ? (size_t)f->total : PP__FLIGHT_GPU_MAX;
  pp__gpu_rec *g = pp__malloc(n * sizeof *g);
  if (!g)
    return 0;
  /* Oldest first: past a wrap, the oldest sits at total % MAX. */
  size_t start = f->total > PP__FLIGHT_GPU_MAX
                     ? (size_t)(f->total % PP__FLIGHT_GPU_MAX)
                     : 0;
  for (size_t i = 0; i < n; i++)
    g[i] = f->gpu[(start + i) % PP__FLIGHT_GPU_MAX];
  *out = g;
  return n;
}

static void copy_slots(pp__slot *dst, const pp__slot *ring, uint64_t mask,
                       uint64_t from, uint64_t to) {
  for (uint64_t i = from; i < to; i++) {
    const pp__slot *src = &ring[i & mask];
    atomic_init(&dst[i - from].ts,
                atomic_load_explicit(&src->ts, memory_order_relaxed));
    atomic_init(&dst[i - from].a,
                atomic_load_explicit(&src->a, memory_order_relaxed));
  }
}

/* The oldest slot of t not yet overwritten by its producer, now. */
static uint64_t oldest_valid(const pp__tstate *t) {
  uint64_t w = atomic_load_explicit(&t->w, memory_order_acquire);
  return w > t->capacity ? w - t->capacity : 0;
}

/* s: slots [start, from + n) of t, held in copy from slot `from` on. */
static void describe_copy(pp__slots *s, const pp__tstate *t,
                          const pp__slot *copy, uint64_t from, uint64_t start,
                          size_t n) {
  memset(s, 0, sizeof *s);
  s->tid = t->tid;
  s->ring = copy;
  s->mask = UINT64_MAX;
  s->from = start - from;
  s->to = n;
  s->last = 1;
}

int pp__flight_copy_ring(pp__tstate *t, pp__slots *s, pp__slot **buf) {
  *buf = NULL;
  uint64_t w = atomic_load_explicit(&t->w, memory_order_acquire);
  if (w == 0)
    return 0; /* no event yet (and maybe no ring) */
  uint64_t from = w > t->capacity ? w - t->capacity : 0;
  size_t n = (size_t)(w - from);
  pp__slot *copy = n ? pp__malloc(n * sizeof *copy) : NULL;
  if (!copy)
    return 0;
  /* Newest first, in blocks; after each block re-read the write index:
   * slots older than (write index now) - capacity may have been
   * overwritten while we copied, so the copy stops there and keeps the
   * newest events of even a thread that records flat out. */
  uint64_t start = w; /* oldest slot copied and still valid */
  while (start > from) {
    uint64_t b0 = start - from > 4096 ? start - 4096 : from;
    copy_slots(copy + (b0 - from), t->ring, t->mask, b0, start);
    uint64_t safe = oldest_valid(t);
    if (b0 < safe) {
      start = safe < start ? safe : start;
      break;
    }
    start = b0;
  }
  if (start >= w) {
    pp__free(copy);
    return 0;
  }
  describe_copy(s, t, copy, from, start, n);
  *buf = copy;
  return 1;
}

int pp__flight_peek(pp__tstate *t, pp__slots *s, pp__slot **buf, size_t *cap,
                    uint64_t *n_seen) {
  *n_seen = 0;
  uint64_t w = atomic_load_explicit(&t->w, memory_order_acquire);
  uint64_t from = t->live_r;
  if (w == 0 || w <= from)
    return 0;
  if (w - from > t->capacity)
    from = w - t->capacity;
  size_t n = (size_t)(w - from);
  *n_seen = n;
  if (pp__grow((void **)buf, cap, n, sizeof **buf) != 0)
    return 0;
  copy_slots(*buf, t->ring, t->mask, from, w);
  uint64_t safe = oldest_valid(t);
  uint64_t start = from < safe ? safe : from;
  t->live_r = w;
  if (start >= w)
    return 0;
  describe_copy(s, t, *buf, from, start, n);
  return 1;
}
