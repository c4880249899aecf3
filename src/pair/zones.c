/* SPDX-License-Identifier: MIT */
/*
 * Zone pairing (see zones.h for the policy): a stack of open zones per
 * thread, closed by ends that match their site.
 */
#include "zones.h"

#include "../internal.h"

void pp__zstack_init(pp_zone_stack *s) { *s = (pp_zone_stack){0}; }

void pp__zstack_free(pp_zone_stack *s) {
  pp__free(s->v);
  pp__zstack_init(s);
}

void pp__zstack_trim_slow(pp_zone_stack *s) {
  if (s->n || s->deep || s->cap <= PP_PAIR_KEEP)
    return;
  pp__free(s->v);
  s->v = NULL;
  s->cap = 0;
}

int64_t pp__zstack_time(pp_zone_stack *s, int64_t ts, pp_pair_counts *c) {
  if (s->have_last && ts < s->last) {
    c->backwards++;
    return s->last;
  }
  s->last = ts;
  s->have_last = 1;
  return ts;
}

int pp__zstack_begin(pp_zone_stack *s, uint64_t site, int64_t ts,
                     uint64_t cookie, pp_pair_counts *c) {
  ts = pp__zstack_time(s, ts, c);
  if (s->n >= PP_PAIR_MAX_DEPTH || s->deep) {
    s->deep++;
    c->too_deep++;
    return 1;
  }
  if (s->n == s->cap) {
    uint32_t cap = s->cap ? s->cap * 2 : PP_PAIR_KEEP;
    if (cap > PP_PAIR_MAX_DEPTH)
      cap = PP_PAIR_MAX_DEPTH;
    pp_zone_open *v = pp__realloc(s->v, (size_t)cap * sizeof *v);
    if (!v) {
      /* Paired like a begin too deep: its end is skipped in order. */
      s->deep++;
      c->no_memory++;
      return 1;
    }
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = (pp_zone_open){site, cookie, ts, 0};
  return 0;
}

static void close_top(pp_zone_stack *s, int64_t ts, int lost,
                      pp_pair_counts *c, pp_zone_closed_fn fn, void *ctx) {
  const pp_zone_open *o = &s->v[--s->n];
  pp_zone_closed z;
  z.site = o->site;
  z.cookie = o->cookie;
  z.start = o->start;
  z.end = ts < o->start ? o->start : ts;
  z.dur = pp__span(z.start, z.end);
  z.self = z.dur - o->child;
  if (z.self < 0)
    z.self = 0;
  z.depth = s->n;
  z.lost_end = lost;
  z.covered = lost ? o->child : z.dur;
  if (lost)
    c->lost_ends++;
  else
    c->zones++;
  if (s->n)
    s->v[s->n - 1].child = pp__add_sat(s->v[s->n - 1].child, z.covered);
  if (fn)
    fn(ctx, &z);
}

void pp__zstack_end(pp_zone_stack *s, uint64_t site, int64_t ts,
                    pp_pair_counts *c, pp_zone_closed_fn fn, void *ctx) {
  ts = pp__zstack_time(s, ts, c);
  if (s->deep) {
    s->deep--;
    return;
  }
  uint32_t k = s->n;
  while (k > 0 && s->v[k - 1].site != site)
    k--;
  if (k == 0) {
    c->stray_ends++;
    return;
  }
  while (s->n > k)
    close_top(s, ts, 1, c, fn, ctx);
  close_top(s, ts, 0, c, fn, ctx);
}

void pp__zstack_finish(pp_zone_stack *s, int64_t end_ns, pp_pair_counts *c,
                       pp_zone_closed_fn fn, void *ctx) {
  int64_t end = s->have_last && s->last > end_ns ? s->last : end_ns;
  while (s->n > 0)
    close_top(s, end, 1, c, fn, ctx);
  s->deep = 0; /* begins too deep, counted there, whose ends never came */
}
