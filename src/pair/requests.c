/* SPDX-License-Identifier: MIT */
/*
 * Request pairing (requests.h): a dense array of the requests kept and an
 * open-addressing index over it (linear probing, deletion by backward
 * shift, so no tombstones pile up in a long-running process).
 */
#include "requests.h"

#include <string.h>

#include "../format/pptrace.h"
#include "../internal.h"

#define REQS_DEFAULT 1000000u
#define REQS_MAX (UINT32_C(1) << 30)
#define SLOTS_MIN 1024u

static size_t hash_of(uint32_t space, uint64_t id) {
  uint64_t h = (id ^ ((uint64_t)space << 32 | space)) * 0x9E3779B97F4A7C15ULL;
  return (size_t)(h ^ (h >> 29));
}

void pp__reqs_init(pp_req_table *t, size_t max_open, pp_req_settle_fn settle,
                   void *ctx) {
  memset(t, 0, sizeof *t);
  t->max_open = !max_open             ? REQS_DEFAULT
                : max_open < REQS_MAX ? max_open
                                      : REQS_MAX;
  t->settle = settle;
  t->ctx = ctx;
}

void pp__reqs_free(pp_req_table *t) {
  pp__free(t->v);
  pp__free(t->slot);
  pp__free(t->done);
  t->v = NULL;
  t->slot = NULL;
  t->done = NULL;
  t->n = t->cap = t->nslots = 0;
  t->ndone = t->done_head = t->cap_done = 0;
}

static int complete(const pp_req *r) {
  return (r->flags & (PP_REQ_BEGUN | PP_REQ_ENDED)) ==
         (PP_REQ_BEGUN | PP_REQ_ENDED);
}

/* The slot holding (space, id), or the empty slot where it would go. */
static size_t slot_find(const pp_req_table *t, uint32_t space, uint64_t id) {
  size_t mask = t->nslots - 1, s = hash_of(space, id) & mask;
  while (t->slot[s]) {
    const pp_req *r = &t->v[t->slot[s] - 1];
    if (r->id == id && r->space == space)
      return s;
    s = (s + 1) & mask;
  }
  return s;
}

static int rehash(pp_req_table *t, size_t nslots) {
  uint32_t *ns = pp__calloc(nslots, sizeof *ns);
  if (!ns)
    return -1;
  pp__free(t->slot);
  t->slot = ns;
  t->nslots = nslots;
  for (size_t i = 0; i < t->n; i++)
    t->slot[slot_find(t, t->v[i].space, t->v[i].id)] = (uint32_t)(i + 1);
  return 0;
}

/* Remove the request at slot s: backward-shift the probe chain behind it,
 * and move the last request of v into its place. */
static void remove_at(pp_req_table *t, size_t s) {
  size_t mask = t->nslots - 1, idx = t->slot[s] - 1;
  size_t hole = s, j = s;
  for (;;) {
    j = (j + 1) & mask;
    if (!t->slot[j])
      break;
    const pp_req *r = &t->v[t->slot[j] - 1];
    size_t home = hash_of(r->space, r->id) & mask;
    /* r may move to the hole when its home is not in (hole, j]. */
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      t->slot[hole] = t->slot[j];
      hole = j;
    }
  }
  t->slot[hole] = 0;
  size_t last = t->n - 1;
  if (idx != last) {
    t->v[idx] = t->v[last];
    t->slot[slot_find(t, t->v[idx].space, t->v[idx].id)] = (uint32_t)(idx + 1);
  }
  t->n--;
}

static void settle(pp_req_table *t, const pp_req *r, int outcome) {
  switch (outcome) {
  case PP_REQ_DONE:
    t->c.done++;
    break;
  case PP_REQ_UNFINISHED:
    t->c.unfinished++;
    break;
  default:
    t->c.orphans += r->held;
    break;
  }
  if (t->settle)
    t->settle(t->ctx, r, outcome);
}

/* Settle the complete request a queue entry names, if it is still held
 * (it may have been settled since: a new begin of its id, expiry). */
static int release(pp_req_table *t, const pp_req_done *d) {
  if (!t->nslots)
    return 0;
  size_t s = slot_find(t, d->space, d->id);
  if (!t->slot[s])
    return 0;
  pp_req *r = &t->v[t->slot[s] - 1];
  if (!complete(r) || r->end != d->end)
    return 0;
  settle(t, r, PP_REQ_DONE);
  remove_at(t, s);
  return 1;
}

static pp_req_done done_pop(pp_req_table *t) {
  pp_req_done d = t->done[t->done_head];
  t->done_head = (t->done_head + 1) % t->cap_done;
  t->ndone--;
  return d;
}

/* Make room: settle the oldest complete request held. */
static int release_oldest(pp_req_table *t) {
  while (t->ndone) {
    pp_req_done d = done_pop(t);
    if (release(t, &d))
      return 1;
  }
  return 0;
}

/* Queue r, just completed: 0. The queue holds at most max_open entries:
 * past that, its oldest is settled first (entries of requests settled
 * another way are what fills it), which may be r itself: 1. -1 when out
 * of memory. */
static int done_push(pp_req_table *t, const pp_req *r) {
  pp_req_done d = {r->id, r->space, r->end};
  if (t->ndone == t->cap_done) {
    if (t->ndone >= t->max_open) {
      pp_req_done old = done_pop(t);
      int self = old.id == d.id && old.space == d.space && old.end == d.end;
      release(t, &old);
      if (self)
        return 1;
    } else {
      /* grow, unrolling the ring */
      size_t ncap = t->cap_done ? t->cap_done * 2 : 256;
      if (ncap > t->max_open)
        ncap = t->max_open;
      pp_req_done *n = pp__malloc(ncap * sizeof *n);
      if (!n)
        return -1;
      for (size_t i = 0; i < t->ndone; i++)
        n[i] = t->done[(t->done_head + i) % t->cap_done];
      pp__free(t->done);
      t->done = n;
      t->cap_done = ncap;
      t->done_head = 0;
    }
  }
  t->done[(t->done_head + t->ndone) % t->cap_done] = d;
  t->ndone++;
  return 0;
}

size_t pp__reqs_settle_before(pp_req_table *t, int64_t ts) {
  size_t k = 0;
  while (t->ndone && t->done[t->done_head].end < ts) {
    pp_req_done d = done_pop(t);
    k += (size_t)release(t, &d);
  }
  return k;
}

/* A fresh request (space, id) at the empty slot s, or NULL when there is
 * no room. */
static pp_req *add_at(pp_req_table *t, size_t s, uint32_t space, uint64_t id) {
  if (t->n >= t->max_open) {
    if (!release_oldest(t))
      return NULL;
    s = slot_find(t, space, id); /* the index moved */
  }
  if (t->n + 1 > t->cap &&
      pp__grow((void **)&t->v, &t->cap, t->n + 1, sizeof *t->v) != 0)
    return NULL;
  if (!t->nslots || (t->n + 1) * 2 > t->nslots) {
    if (rehash(t, t->nslots ? t->nslots * 2 : SLOTS_MIN) != 0)
      return NULL;
    s = slot_find(t, space, id);
  }
  pp_req *r = &t->v[t->n];
  memset(r, 0, sizeof *r);
  r->id = id;
  r->space = space;
  t->slot[s] = (uint32_t)(++t->n);
  return r;
}

static void take_half(pp_req *r, unsigned type, uint64_t extra, int64_t ts) {
  if (!(r->flags & PP_REQ_BEGUN)) {
    if (!r->held || ts < r->held_from)
      r->held_from = ts;
  }
  r->held++;
  if (type == PPT_EV_REQ_END) {
    r->flags |= PP_REQ_ENDED;
    r->end = ts;
    r->status = (int32_t)ppt_unzigzag(extra);
    return;
  }
  if (type == PPT_EV_REQ_TOKENS) {
    r->tokens += extra;
    r->chunks++;
    r->prev_tok = r->last_tok;
    r->last_tok = ts;
  }
  /* REQ_FIRST, and a token chunk is a first token too */
  if (!(r->flags & PP_REQ_FIRST) || ts < r->first) {
    r->flags |= PP_REQ_FIRST;
    r->first = ts;
  }
}

/* Restart the request r at slot s as one holding nothing (its user fields
 * zeroed: what they held was settled with it). */
static void restart(pp_req *r) {
  uint64_t id = r->id;
  uint32_t space = r->space;
  memset(r, 0, sizeof *r);
  r->id = id;
  r->space = space;
}

pp_req *pp__reqs_put(pp_req_table *t, uint32_t space, uint64_t id,
                     unsigned type, uint64_t extra, int64_t ts) {
  if (type < PPT_EV_REQ_BEGIN || type > PPT_EV_REQ_END)
    return NULL;
  int begin = type == PPT_EV_REQ_BEGIN;
  uint64_t seq = 0;
  if (begin)
    seq = t->c.begins++;
  size_t s = t->nslots ? slot_find(t, space, id) : 0;
  pp_req *r = t->nslots && t->slot[s] ? &t->v[t->slot[s] - 1] : NULL;
  if (!r) {
    r = add_at(t, s, space, id);
    if (!r) {
      if (begin)
        t->c.lost++;
      else
        t->c.orphans++;
      return NULL;
    }
    s = slot_find(t, space, id);
  }
  if (complete(r)) {
    /* held complete: a new begin settles it; an event after its end, or
     * a second end, is an orphan */
    if (begin) {
      settle(t, r, PP_REQ_DONE);
      restart(r);
    } else if (type == PPT_EV_REQ_END || ts > r->end) {
      t->c.orphans++;
      return NULL;
    } else {
      take_half(r, type, extra, ts);
      return r;
    }
  }
  if (begin) {
    if (r->flags & PP_REQ_BEGUN) {
      settle(t, r, PP_REQ_UNFINISHED);
      restart(r);
    } else if (r->held && r->held_from < ts) {
      settle(t, r, PP_REQ_ORPHANED);
      restart(r);
    }
    r->flags |= PP_REQ_BEGUN;
    r->begin = ts;
    r->seq = seq;
  } else {
    if (type == PPT_EV_REQ_END && (r->flags & PP_REQ_ENDED)) {
      /* A second end with no begin between: the held halves were not
       * this end's request. (A begun request never holds an end: it
       * completed when the end came.) */
      settle(t, r, PP_REQ_ORPHANED);
      restart(r);
    }
    take_half(r, type, extra, ts);
  }
  if (complete(r)) {
    int rc = done_push(t, r);
    if (rc > 0)
      return NULL; /* settled already */
    /* done_push may have settled another request, moving r in v */
    r = &t->v[t->slot[slot_find(t, space, id)] - 1];
    if (rc < 0) { /* no memory to queue it: settled now */
      settle(t, r, PP_REQ_DONE);
      remove_at(t, slot_find(t, space, id));
      return NULL;
    }
  }
  return r;
}

/* How a request still kept leaves at the end or by expiry. */
static int outcome_of(const pp_req *r) {
  if (complete(r))
    return PP_REQ_DONE;
  return r->flags & PP_REQ_BEGUN ? PP_REQ_UNFINISHED : PP_REQ_ORPHANED;
}

static int64_t heard(const pp_req *r) {
  return r->flags & PP_REQ_BEGUN ? r->begin : r->held_from;
}

size_t pp__reqs_expire(pp_req_table *t, int64_t ts) {
  size_t k = 0;
  for (size_t i = t->n; i-- > 0;) {
    pp_req *r = &t->v[i];
    if (heard(r) >= ts)
      continue;
    settle(t, r, outcome_of(r));
    /* remove_at moves the last request into i: already looked at, as
     * the walk goes down. */
    remove_at(t, slot_find(t, r->space, r->id));
    k++;
  }
  return k;
}

void pp__reqs_finish(pp_req_table *t) {
  for (size_t i = 0; i < t->n; i++) {
    settle(t, &t->v[i], outcome_of(&t->v[i]));
  }
  t->n = 0;
  t->ndone = t->done_head = 0;
  if (t->slot)
    memset(t->slot, 0, t->nslots * sizeof *t->slot);
}
