/* SPDX-License-Identifier: MIT */
/*
 * The zone pairing policy (src/pair/zones.h): one rule each for matched
 * ends, lost ends, stray ends, nesting past the cap, clocks running
 * backwards and the end of the stream.
 */
#include <string.h>

#include "pair/intervals.h"
#include "pair/zones.h"
#include "runner.h"

#define MAXZ 600

typedef struct got {
  pp_zone_closed z[MAXZ];
  size_t n;
} got;

static void collect(void *ctx, const pp_zone_closed *z) {
  got *g = ctx;
  if (g->n < MAXZ)
    g->z[g->n++] = *z;
}

static void check_closed(const pp_zone_closed *z, uint64_t site, int64_t start,
                         int64_t end, int64_t self, uint32_t depth,
                         int lost) {
  CHECK_EQ_U(z->site, site);
  CHECK_EQ(z->start, start);
  CHECK_EQ(z->end, end);
  CHECK_EQ(z->dur, end - start);
  CHECK_EQ(z->self, self);
  CHECK_EQ(z->depth, depth);
  CHECK_EQ(z->lost_end, lost);
}

PP_TEST(pair_nested_zones_self_and_order) {
  pp_zone_stack s;
  pp_pair_counts c = {0};
  got g = {0};
  pp__zstack_init(&s);
  CHECK_EQ(pp__zstack_begin(&s, 1, 0, 10, &c), 0);
  CHECK_EQ(pp__zstack_begin(&s, 2, 10, 11, &c), 0);
  pp__zstack_end(&s, 2, 40, &c, collect, &g);
  pp__zstack_end(&s, 1, 100, &c, collect, &g);
  CHECK_EQ(g.n, 2);
  check_closed(&g.z[0], 2, 10, 40, 30, 1, 0);
  CHECK_EQ_U(g.z[0].cookie, 11);
  check_closed(&g.z[1], 1, 0, 100, 70, 0, 0);
  CHECK_EQ(g.z[1].covered, 100);
  CHECK_EQ_U(c.zones, 2);
  CHECK_EQ_U(c.lost_ends + c.stray_ends + c.too_deep + c.backwards, 0);
  /* nothing open: a small stack is kept (no allocation per zone) */
  pp__zstack_trim(&s);
  CHECK(s.v != NULL);
  CHECK_EQ(s.cap, PP_PAIR_KEEP);
  pp__zstack_free(&s);
}

PP_TEST(pair_lost_ends_and_stray_ends) {
  pp_zone_stack s;
  pp_pair_counts c = {0};
  got g = {0};
  pp__zstack_init(&s);
  pp__zstack_begin(&s, 1, 0, 0, &c);  /* A */
  pp__zstack_begin(&s, 2, 10, 0, &c); /* B: its end is lost */
  pp__zstack_begin(&s, 3, 20, 0, &c); /* C */
  pp__zstack_end(&s, 3, 30, &c, collect, &g);
  pp__zstack_end(&s, 1, 50, &c, collect, &g); /* closes B, then A */
  pp__zstack_end(&s, 2, 60, &c, collect, &g); /* B's end, late: stray */
  CHECK_EQ(g.n, 3);
  check_closed(&g.z[0], 3, 20, 30, 10, 2, 0);
  check_closed(&g.z[1], 2, 10, 50, 30, 1, 1);
  CHECK(!pp__zone_counts(&g.z[1]));
  /* B has no measured duration; its measured child C passes up to A */
  CHECK_EQ(g.z[1].covered, 10);
  check_closed(&g.z[2], 1, 0, 50, 40, 0, 0);
  CHECK_EQ_U(c.zones, 2);
  CHECK_EQ_U(c.lost_ends, 1);
  CHECK_EQ_U(c.stray_ends, 1);
  pp__zstack_free(&s);
}

PP_TEST(pair_finish_closes_open_zones_as_lost) {
  pp_zone_stack s;
  pp_pair_counts c = {0};
  got g = {0};
  pp__zstack_init(&s);
  pp__zstack_begin(&s, 1, 100, 0, &c);
  pp__zstack_begin(&s, 2, 150, 0, &c);
  pp__zstack_end(&s, 2, 170, &c, collect, &g);
  pp__zstack_begin(&s, 3, 180, 0, &c);
  pp__zstack_finish(&s, 90, &c, collect, &g); /* before the last event */
  CHECK_EQ(g.n, 3);
  /* closed at the thread's last time, not before it */
  check_closed(&g.z[1], 3, 180, 180, 0, 1, 1);
  check_closed(&g.z[2], 1, 100, 180, 60, 0, 1);
  CHECK_EQ(g.z[2].covered, 20);
  CHECK_EQ_U(c.lost_ends, 2);
  CHECK_EQ(s.n, 0);
  pp__zstack_free(&s);
}

PP_TEST(pair_depth_cap_skips_deep_zones_in_order) {
  pp_zone_stack s;
  pp_pair_counts c = {0};
  got g = {0};
  pp__zstack_init(&s);
  /* 300 nested zones of one site, then their 300 ends */
  for (int64_t i = 0; i < 300; i++)
    pp__zstack_begin(&s, 7, i, (uint64_t)i, &c);
  CHECK_EQ(s.n, PP_PAIR_MAX_DEPTH);
  CHECK_EQ_U(c.too_deep, 300 - PP_PAIR_MAX_DEPTH);
  for (int64_t i = 0; i < 300; i++)
    pp__zstack_end(&s, 7, 1000 + i, &c, collect, &g);
  /* the 44 deepest ends went to the zones past the cap; the 256 paired
   * zones closed innermost first, each with its own end */
  CHECK_EQ(g.n, PP_PAIR_MAX_DEPTH);
  CHECK_EQ_U(c.zones, PP_PAIR_MAX_DEPTH);
  CHECK_EQ_U(c.lost_ends + c.stray_ends, 0);
  check_closed(&g.z[0], 7, 255, 1044, 1044 - 255, 255, 0);
  CHECK_EQ_U(g.z[0].cookie, 255);
  /* the outermost [0, 1299] less its child [1, 1298] */
  check_closed(&g.z[255], 7, 0, 1299, 2, 0, 0);
  /* the deep stack's memory goes back, but for PP_PAIR_KEEP entries */
  CHECK_EQ(s.cap, PP_PAIR_MAX_DEPTH);
  pp__zstack_trim(&s);
  CHECK(s.v == NULL);
  pp__zstack_free(&s);
}

PP_TEST(pair_clock_backwards_is_held) {
  pp_zone_stack s;
  pp_pair_counts c = {0};
  got g = {0};
  pp__zstack_init(&s);
  pp__zstack_begin(&s, 1, 1000, 0, &c);
  pp__zstack_begin(&s, 2, 900, 0, &c); /* earlier than the previous event */
  pp__zstack_end(&s, 2, 950, &c, collect, &g);
  pp__zstack_end(&s, 1, 2000, &c, collect, &g);
  CHECK_EQ_U(c.backwards, 2);
  CHECK_EQ(g.n, 2);
  check_closed(&g.z[0], 2, 1000, 1000, 0, 1, 0);
  check_closed(&g.z[1], 1, 1000, 2000, 1000, 0, 0);
  pp__zstack_free(&s);
}

/* ---- id pairing ---------------------------------------------------------- */

static pp_half half(uint64_t id, int64_t ts, int is_end) {
  return (pp_half){id, ts, 7, 1, 0, (uint32_t)is_end};
}

PP_TEST(pair_ids_in_any_order) {
  pp_id_pairs p;
  pp_half b, e, h;
  pp__idpairs_init(&p, 1000);
  /* end first (the writer drained the ending thread first) */
  h = half(5, 300, 1);
  CHECK_EQ(pp__idpairs_put(&p, &h, &b, &e), 0);
  h = half(5, 100, 0);
  CHECK_EQ(pp__idpairs_put(&p, &h, &b, &e), 1);
  CHECK_EQ(b.ts, 100);
  CHECK_EQ(e.ts, 300);
  CHECK_EQ(b.is_end, 0);
  CHECK_EQ(e.is_end, 1);
  /* id 0 is not an id */
  h = half(0, 1, 0);
  CHECK_EQ(pp__idpairs_put(&p, &h, &b, &e), -1);
  CHECK_EQ(p.n, 0);
  /* a reused id: each end takes the closest begin before it */
  h = half(9, 1000, 0);
  pp__idpairs_put(&p, &h, &b, &e);
  h = half(9, 2000, 0);
  pp__idpairs_put(&p, &h, &b, &e);
  h = half(9, 2500, 1);
  CHECK_EQ(pp__idpairs_put(&p, &h, &b, &e), 1);
  CHECK_EQ(b.ts, 2000);
  h = half(9, 1500, 1);
  CHECK_EQ(pp__idpairs_put(&p, &h, &b, &e), 1);
  CHECK_EQ(b.ts, 1000);
  CHECK_EQ_U(p.c.paired, 3);
  pp__idpairs_free(&p);
}

PP_TEST(pair_ids_many_kept_then_finished) {
  pp_id_pairs p;
  pp_half b, e, h;
  pp__idpairs_init(&p, 5000);
  /* 3000 begins, then the ends of the even ones in reverse order: the
   * table grows, deletes shift entries back, every even pair is found */
  for (uint64_t i = 1; i <= 3000; i++) {
    h = half(i * 7919, (int64_t)i, 0);
    CHECK_EQ(pp__idpairs_put(&p, &h, &b, &e), 0);
  }
  for (uint64_t i = 3000; i >= 1; i--) {
    if (i % 2)
      continue;
    h = half(i * 7919, (int64_t)i + 10, 1);
    CHECK_EQ(pp__idpairs_put(&p, &h, &b, &e), 1);
    CHECK_EQ(b.ts, (int64_t)i);
  }
  CHECK_EQ(p.n, 1500);
  /* one end with no begin */
  h = half(1, 5, 1);
  CHECK_EQ(pp__idpairs_put(&p, &h, &b, &e), 0);
  /* expire the halves before time 1001: begins 1, 3, .. 999 and the end */
  CHECK_EQ(pp__idpairs_expire(&p, 1001), 501);
  CHECK_EQ(p.n, 1000);
  pp__idpairs_finish(&p, NULL, NULL);
  CHECK_EQ_U(p.c.unended, 1500);
  CHECK_EQ_U(p.c.unbegun, 1);
  CHECK_EQ(p.n, 0);
  pp__idpairs_free(&p);
}

PP_TEST(pair_ids_bound_counts_lost) {
  pp_id_pairs p;
  pp_half b, e, h;
  pp__idpairs_init(&p, 10);
  for (uint64_t i = 1; i <= 12; i++) {
    h = half(i, 0, 0);
    CHECK_EQ(pp__idpairs_put(&p, &h, &b, &e), i <= 10 ? 0 : -1);
  }
  CHECK_EQ_U(p.c.lost, 2);
  /* a half that completes a pair needs no room */
  h = half(3, 9, 1);
  CHECK_EQ(pp__idpairs_put(&p, &h, &b, &e), 1);
  pp__idpairs_free(&p);
}

/* The inline fast paths follow the same rules as the general functions:
 * random sequences (backwards steps, stray and lost ends, deep nesting)
 * through both give the same zones and counts. */
PP_TEST(pair_fast_paths_match_general) {
  static got a, b;
  uint64_t rng = 0x9E3779B97F4A7C15ULL;
  for (int round = 0; round < 200; round++) {
    pp_zone_stack sa, sb;
    pp_pair_counts ca = {0}, cb = {0};
    pp__zstack_init(&sa);
    pp__zstack_init(&sb);
    a.n = b.n = 0;
    int64_t ts = 1000;
    for (int i = 0; i < 400 && a.n < MAXZ - 300; i++) {
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      unsigned r = (unsigned)(rng % 100);
      uint64_t site = 1 + rng % 5;
      ts += (int64_t)(rng >> 40) % 50 - (r < 5 ? 80 : 0); /* some go back */
      if (r < 55) {
        pp__zstack_begin(&sa, site, ts, (uint64_t)i, &ca);
        if (pp__zstack_begin_fast(&sb, site, ts, (uint64_t)i) != 0)
          pp__zstack_begin(&sb, site, ts, (uint64_t)i, &cb);
      } else {
        pp__zstack_end(&sa, site, ts, &ca, collect, &a);
        pp_zone_closed z;
        if (pp__zstack_end_fast(&sb, site, ts, &cb, &z) == 0)
          collect(&b, &z);
        else
          pp__zstack_end(&sb, site, ts, &cb, collect, &b);
      }
    }
    pp__zstack_finish(&sa, ts, &ca, collect, &a);
    pp__zstack_finish(&sb, ts, &cb, collect, &b);
    CHECK_EQ(a.n, b.n);
    CHECK(memcmp(a.z, b.z, a.n * sizeof a.z[0]) == 0);
    CHECK(memcmp(&ca, &cb, sizeof ca) == 0);
    pp__zstack_free(&sa);
    pp__zstack_free(&sb);
  }
}
