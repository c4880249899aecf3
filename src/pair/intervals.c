/* SPDX-License-Identifier: MIT */
/*
 * Id pairing (see intervals.h): a linear-probing table of halves waiting
 * for their other half, with backward-shift deletion (no tombstones).
 */
#include "intervals.h"

#include "../internal.h"

#define EMPTY UINT32_MAX

static size_t home(uint64_t id, uint32_t space, size_t cap) {
  uint64_t h = (id ^ (uint64_t)space << 59) * 0x9E3779B97F4A7C15ULL;
  h ^= h >> 31;
  return (size_t)h & (cap - 1);
}

void pp__idpairs_init(pp_id_pairs *p, size_t max_open) {
  *p = (pp_id_pairs){0};
  p->max_open = max_open;
}

void pp__idpairs_free(pp_id_pairs *p) {
  pp__free(p->v);
  p->v = NULL;
  p->cap = p->n = 0;
}

static void insert(pp_half *v, size_t cap, const pp_half *h) {
  size_t j = home(h->id, h->space, cap);
  while (v[j].is_end != EMPTY)
    j = (j + 1) & (cap - 1);
  v[j] = *h;
}

static int grow(pp_id_pairs *p) {
  size_t cap = p->cap ? p->cap * 2 : 64;
  pp_half *v = pp__malloc(cap * sizeof *v);
  if (!v)
    return -1;
  for (size_t i = 0; i < cap; i++)
    v[i].is_end = EMPTY;
  for (size_t i = 0; i < p->cap; i++)
    if (p->v[i].is_end != EMPTY)
      insert(v, cap, &p->v[i]);
  pp__free(p->v);
  p->v = v;
  p->cap = cap;
  return 0;
}

/* Remove slot j, shifting later members of its probe run back. */
static void erase(pp_id_pairs *p, size_t j) {
  size_t mask = p->cap - 1;
  p->v[j].is_end = EMPTY;
  for (size_t k = (j + 1) & mask; p->v[k].is_end != EMPTY;
       k = (k + 1) & mask) {
    size_t h = home(p->v[k].id, p->v[k].space, p->cap);
    /* k may move to j when its home is not in (j, k] cyclically */
    if ((j <= k) ? (h <= j || h > k) : (h <= j && h > k)) {
      p->v[j] = p->v[k];
      p->v[k].is_end = EMPTY;
      j = k;
    }
  }
  p->n--;
}

/* Slot of the kept half h pairs with (the policy in intervals.h; oldest:
 * the farthest in time on the right side, for pp__idpairs_match), or
 * SIZE_MAX. */
static size_t partner(const pp_id_pairs *p, const pp_half *h, int oldest) {
  size_t best = SIZE_MAX;
  int best_wrong = 2;
  uint64_t best_gap = UINT64_MAX;
  if (p->cap) {
    for (size_t j = home(h->id, h->space, p->cap); p->v[j].is_end != EMPTY;
         j = (j + 1) & (p->cap - 1)) {
      const pp_half *o = &p->v[j];
      if (o->id != h->id || o->space != h->space || !o->is_end == !h->is_end)
        continue;
      int64_t b = h->is_end ? o->ts : h->ts, e = h->is_end ? h->ts : o->ts;
      int wrong = b > e;
      uint64_t gap = wrong ? (uint64_t)b - (uint64_t)e
                           : (uint64_t)e - (uint64_t)b;
      if (oldest && !wrong)
        gap = UINT64_MAX - gap;
      if (wrong < best_wrong || (wrong == best_wrong && gap < best_gap)) {
        best = j;
        best_wrong = wrong;
        best_gap = gap;
      }
    }
  }
  return best;
}

int pp__idpairs_match(pp_id_pairs *p, const pp_half *h, pp_half *begin,
                      pp_half *end) {
  if (h->id == 0)
    return -1;
  size_t best = partner(p, h, 1);
  if (best == SIZE_MAX)
    return 0;
  *begin = h->is_end ? p->v[best] : *h;
  *end = h->is_end ? *h : p->v[best];
  erase(p, best);
  p->c.paired++;
  return 1;
}

int pp__idpairs_put(pp_id_pairs *p, const pp_half *h, pp_half *begin,
                    pp_half *end) {
  if (h->id == 0)
    return -1;
  size_t best = partner(p, h, 0);
  if (best != SIZE_MAX) {
    *begin = h->is_end ? p->v[best] : *h;
    *end = h->is_end ? *h : p->v[best];
    erase(p, best);
    p->c.paired++;
    return 1;
  }
  if (p->n >= p->max_open ||
      ((p->n + 1) * 4 > p->cap * 3 && grow(p) != 0)) {
    p->c.lost++;
    return -1;
  }
  insert(p->v, p->cap, h);
  p->n++;
  return 0;
}

void pp__idpairs_finish(pp_id_pairs *p, void (*fn)(void *, const pp_half *),
                        void *ctx) {
  for (size_t i = 0; i < p->cap; i++) {
    if (p->v[i].is_end == EMPTY)
      continue;
    if (p->v[i].is_end)
      p->c.unbegun++;
    else
      p->c.unended++;
    if (fn)
      fn(ctx, &p->v[i]);
    p->v[i].is_end = EMPTY;
  }
  p->n = 0;
}

size_t pp__idpairs_expire(pp_id_pairs *p, int64_t ts) {
  size_t n = 0;
  for (size_t i = 0; i < p->cap;) {
    pp_half *h = &p->v[i];
    if (h->is_end == EMPTY || h->ts >= ts) {
      i++;
      continue;
    }
    if (h->is_end)
      p->c.unbegun++;
    else
      p->c.unended++;
    erase(p, i); /* a later half may move into slot i: look at it again */
    n++;
  }
  return n;
}
