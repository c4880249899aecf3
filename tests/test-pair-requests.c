/* SPDX-License-Identifier: MIT */
/*
 * The request pairing policy (src/pair/requests.h), one case at a time:
 * halves in any order, halves earlier than their begin, duplicate begins,
 * tokens before the first-token event, events after the end, a second
 * end, the bound, expiry, spaces, the end of the stream; and a scrambled
 * stream of many requests that must pair as the ordered one does.
 */
#include <string.h>

#include "format/pptrace.h"
#include "pair/requests.h"
#include "runner.h"

#define MAXS 4096

typedef struct settled {
  pp_req r[MAXS];
  int outcome[MAXS];
  size_t n;
} settled;

static void collect(void *ctx, const pp_req *r, int outcome) {
  settled *s = ctx;
  if (s->n < MAXS) {
    s->r[s->n] = *r;
    s->outcome[s->n++] = outcome;
  }
}

static pp_req *put(pp_req_table *t, uint64_t id, unsigned type, uint64_t extra,
                   int64_t ts) {
  return pp__reqs_put(t, 0, id, type, extra, ts);
}

PP_TEST(pair_requests_complete_in_order) {
  static settled s;
  memset(&s, 0, sizeof s);
  pp_req_table t;
  pp__reqs_init(&t, 0, collect, &s);
  CHECK(put(&t, 1, PPT_EV_REQ_BEGIN, 0, 100) != NULL);
  pp_req *q = put(&t, 1, PPT_EV_REQ_FIRST, 0, 130);
  CHECK(q != NULL && (q->flags & PP_REQ_FIRST) && q->first == 130);
  q = put(&t, 1, PPT_EV_REQ_TOKENS, 2, 150);
  CHECK(q != NULL);
  CHECK_EQ_U(q->chunks, 1);
  q = put(&t, 1, PPT_EV_REQ_TOKENS, 3, 190);
  CHECK(q != NULL);
  CHECK_EQ(q->prev_tok, 150);
  CHECK_EQ(q->last_tok, 190);
  q = put(&t, 1, PPT_EV_REQ_END, ppt_zigzag(-3), 200);
  /* complete, and held until the stream passes its end */
  CHECK(q != NULL && (q->flags & PP_REQ_ENDED));
  CHECK_EQ_U(s.n, 0);
  /* a token at the end's time from another thread still joins; a later
   * one is an orphan */
  CHECK(put(&t, 1, PPT_EV_REQ_TOKENS, 1, 200) != NULL);
  CHECK(put(&t, 1, PPT_EV_REQ_TOKENS, 1, 201) == NULL);
  CHECK_EQ_U(t.c.orphans, 1);
  CHECK_EQ_U(pp__reqs_settle_before(&t, 200), 0);
  CHECK_EQ_U(pp__reqs_settle_before(&t, 201), 1);
  CHECK_EQ_U(s.n, 1);
  CHECK_EQ(s.outcome[0], PP_REQ_DONE);
  CHECK_EQ(s.r[0].begin, 100);
  CHECK_EQ(s.r[0].first, 130);
  CHECK_EQ(s.r[0].end, 200);
  CHECK_EQ(s.r[0].status, -3);
  CHECK_EQ_U(s.r[0].tokens, 6);
  CHECK_EQ_U(s.r[0].chunks, 3);
  CHECK_EQ_U(s.r[0].seq, 0);
  CHECK_EQ_U(t.n, 0);
  CHECK_EQ_U(t.c.done, 1);
  CHECK_EQ_U(t.c.begins, 1);
  pp__reqs_finish(&t);
  CHECK_EQ_U(s.n, 1);
  pp__reqs_free(&t);
}

PP_TEST(pair_requests_end_and_tokens_before_their_begin) {
  static settled s;
  memset(&s, 0, sizeof s);
  pp_req_table t;
  pp__reqs_init(&t, 0, collect, &s);
  /* drained thread after thread: the end and a token first */
  CHECK(put(&t, 5, PPT_EV_REQ_END, 0, 300) != NULL);
  CHECK(put(&t, 5, PPT_EV_REQ_TOKENS, 3, 150) != NULL);
  CHECK_EQ_U(s.n, 0);
  CHECK(put(&t, 5, PPT_EV_REQ_BEGIN, 0, 100) != NULL);
  CHECK_EQ_U(pp__reqs_settle_before(&t, 301), 1);
  CHECK_EQ_U(s.n, 1);
  CHECK_EQ(s.outcome[0], PP_REQ_DONE);
  CHECK_EQ(s.r[0].begin, 100);
  CHECK_EQ(s.r[0].first, 150);
  CHECK_EQ(s.r[0].end, 300);
  CHECK_EQ_U(s.r[0].tokens, 3);
  CHECK_EQ_U(t.c.orphans, 0);
  pp__reqs_free(&t);
}

PP_TEST(pair_requests_halves_earlier_than_the_begin_are_orphans) {
  static settled s;
  memset(&s, 0, sizeof s);
  pp_req_table t;
  pp__reqs_init(&t, 0, collect, &s);
  /* strays of an earlier request of id 9, then a new request 9 */
  put(&t, 9, PPT_EV_REQ_TOKENS, 1, 40);
  put(&t, 9, PPT_EV_REQ_END, 0, 50);
  put(&t, 9, PPT_EV_REQ_BEGIN, 0, 60);
  CHECK_EQ_U(s.n, 1);
  CHECK_EQ(s.outcome[0], PP_REQ_ORPHANED);
  CHECK_EQ_U(s.r[0].held, 2);
  CHECK_EQ_U(t.c.orphans, 2);
  /* an event at the begin's very time is its own */
  put(&t, 10, PPT_EV_REQ_FIRST, 0, 70);
  put(&t, 10, PPT_EV_REQ_BEGIN, 0, 70);
  put(&t, 9, PPT_EV_REQ_END, 0, 90);
  put(&t, 10, PPT_EV_REQ_END, 0, 95);
  CHECK_EQ_U(s.n, 1);
  CHECK_EQ_U(pp__reqs_settle_before(&t, 96), 2);
  CHECK_EQ_U(s.n, 3);
  CHECK_EQ(s.outcome[1], PP_REQ_DONE);
  CHECK_EQ(s.r[1].begin, 60);
  CHECK_EQ(s.r[1].end, 90);
  CHECK_EQ((int)(s.r[1].flags & PP_REQ_FIRST), 0);
  CHECK_EQ(s.outcome[2], PP_REQ_DONE);
  CHECK_EQ(s.r[2].first, 70);
  CHECK_EQ_U(t.c.orphans, 2);
  pp__reqs_free(&t);
}

PP_TEST(pair_requests_duplicate_begin_leaves_the_first_unfinished) {
  static settled s;
  memset(&s, 0, sizeof s);
  pp_req_table t;
  pp__reqs_init(&t, 0, collect, &s);
  put(&t, 7, PPT_EV_REQ_BEGIN, 0, 10);
  put(&t, 7, PPT_EV_REQ_TOKENS, 1, 15);
  put(&t, 7, PPT_EV_REQ_BEGIN, 0, 20);
  CHECK_EQ_U(s.n, 1);
  CHECK_EQ(s.outcome[0], PP_REQ_UNFINISHED);
  CHECK_EQ(s.r[0].begin, 10);
  CHECK_EQ_U(s.r[0].chunks, 1);
  pp_req *q = put(&t, 7, PPT_EV_REQ_TOKENS, 2, 25);
  CHECK(q != NULL);
  CHECK_EQ_U(q->chunks, 1); /* the new request starts afresh */
  CHECK_EQ_U(q->seq, 1);
  put(&t, 7, PPT_EV_REQ_END, 0, 30);
  pp__reqs_settle_before(&t, 31);
  CHECK_EQ_U(s.n, 2);
  CHECK_EQ(s.outcome[1], PP_REQ_DONE);
  CHECK_EQ(s.r[1].begin, 20);
  CHECK_EQ(s.r[1].first, 25);
  CHECK_EQ_U(t.c.unfinished, 1);
  CHECK_EQ_U(t.c.done, 1);
  pp__reqs_free(&t);
}

PP_TEST(pair_requests_first_token_is_the_earliest_of_either_kind) {
  static settled s;
  memset(&s, 0, sizeof s);
  pp_req_table t;
  pp__reqs_init(&t, 0, collect, &s);
  /* tokens before the first-token event */
  put(&t, 1, PPT_EV_REQ_BEGIN, 0, 0);
  put(&t, 1, PPT_EV_REQ_TOKENS, 1, 20);
  put(&t, 1, PPT_EV_REQ_FIRST, 0, 30);
  put(&t, 1, PPT_EV_REQ_END, 0, 40);
  /* an earlier first token that arrives later */
  put(&t, 2, PPT_EV_REQ_BEGIN, 0, 0);
  put(&t, 2, PPT_EV_REQ_TOKENS, 1, 20);
  put(&t, 2, PPT_EV_REQ_FIRST, 0, 10);
  put(&t, 2, PPT_EV_REQ_END, 0, 40);
  pp__reqs_finish(&t); /* complete requests held are settled done */
  CHECK_EQ_U(s.n, 2);
  CHECK_EQ(s.outcome[0], PP_REQ_DONE);
  CHECK_EQ(s.outcome[1], PP_REQ_DONE);
  CHECK_EQ(s.r[0].first, 20);
  CHECK_EQ(s.r[1].first, 10);
  pp__reqs_free(&t);
}

PP_TEST(pair_requests_events_after_the_end_and_second_ends_are_orphans) {
  static settled s;
  memset(&s, 0, sizeof s);
  pp_req_table t;
  pp__reqs_init(&t, 0, collect, &s);
  put(&t, 3, PPT_EV_REQ_BEGIN, 0, 0);
  put(&t, 3, PPT_EV_REQ_END, 0, 10);
  /* held: a first token after its end, or a second end, is an orphan */
  CHECK(put(&t, 3, PPT_EV_REQ_FIRST, 0, 12) == NULL);
  CHECK(put(&t, 3, PPT_EV_REQ_END, 0, 10) == NULL);
  CHECK_EQ_U(t.c.orphans, 2);
  CHECK_EQ_U(pp__reqs_settle_before(&t, 13), 1);
  CHECK_EQ_U(s.n, 1);
  CHECK_EQ((int)(s.r[0].flags & PP_REQ_FIRST), 0);
  /* settled: a first token finds no request, held, then an orphan */
  CHECK(put(&t, 3, PPT_EV_REQ_FIRST, 0, 14) != NULL);
  /* two ends with no begin between: the first is settled at the second */
  put(&t, 4, PPT_EV_REQ_END, 0, 20);
  put(&t, 4, PPT_EV_REQ_END, 0, 30);
  CHECK_EQ_U(s.n, 2);
  CHECK_EQ(s.outcome[1], PP_REQ_ORPHANED);
  CHECK_EQ(s.r[1].end, 20);
  CHECK_EQ_U(t.c.orphans, 3);
  pp__reqs_finish(&t);
  CHECK_EQ_U(s.n, 4);
  CHECK_EQ(s.outcome[2], PP_REQ_ORPHANED);
  CHECK_EQ(s.outcome[3], PP_REQ_ORPHANED);
  CHECK_EQ_U(t.c.orphans, 5);
  CHECK_EQ_U(t.c.done, 1);
  CHECK_EQ_U(t.n, 0);
  pp__reqs_free(&t);
}

PP_TEST(pair_requests_bound_counts_lost_begins) {
  static settled s;
  memset(&s, 0, sizeof s);
  pp_req_table t;
  pp__reqs_init(&t, 4, collect, &s);
  for (uint64_t id = 1; id <= 6; id++)
    put(&t, id, PPT_EV_REQ_BEGIN, 0, (int64_t)id);
  CHECK_EQ_U(t.n, 4);
  CHECK_EQ_U(t.c.lost, 2);
  CHECK_EQ_U(t.c.begins, 6);
  /* the ends of the lost requests find no room: orphans at once */
  CHECK(put(&t, 6, PPT_EV_REQ_END, 0, 10) == NULL);
  CHECK(put(&t, 5, PPT_EV_REQ_END, 0, 11) == NULL);
  CHECK_EQ_U(t.c.orphans, 2);
  for (uint64_t id = 1; id <= 4; id++)
    put(&t, id, PPT_EV_REQ_END, 0, 20 + (int64_t)id);
  CHECK_EQ_U(s.n, 0); /* complete, held */
  /* a new begin makes room by settling the oldest complete one */
  CHECK(put(&t, 8, PPT_EV_REQ_BEGIN, 0, 30) != NULL);
  CHECK_EQ_U(t.c.lost, 2);
  CHECK_EQ_U(s.n, 1);
  CHECK_EQ(s.outcome[0], PP_REQ_DONE);
  CHECK_EQ_U(s.r[0].id, 1);
  pp__reqs_finish(&t);
  CHECK_EQ_U(s.n, 5);
  CHECK_EQ_U(t.c.done, 4);
  CHECK_EQ_U(t.c.unfinished, 1);
  CHECK_EQ_U(t.c.lost, 2);
  CHECK_EQ_U(t.c.orphans, 2);
  pp__reqs_free(&t);
}

PP_TEST(pair_requests_expiry_and_spaces) {
  static settled s;
  memset(&s, 0, sizeof s);
  pp_req_table t;
  pp__reqs_init(&t, 0, collect, &s);
  put(&t, 1, PPT_EV_REQ_BEGIN, 0, 0);
  put(&t, 2, PPT_EV_REQ_TOKENS, 1, 5);
  put(&t, 3, PPT_EV_REQ_BEGIN, 0, 100);
  /* the same id in another space (process) is another request */
  CHECK(pp__reqs_put(&t, 1, 3, PPT_EV_REQ_END, 0, 120) != NULL);
  CHECK_EQ_U(t.n, 4);
  CHECK_EQ_U(pp__reqs_expire(&t, 50), 2);
  CHECK_EQ_U(s.n, 2);
  int unfinished = 0, orphaned = 0;
  for (size_t i = 0; i < s.n; i++) {
    unfinished += s.outcome[i] == PP_REQ_UNFINISHED && s.r[i].id == 1;
    orphaned += s.outcome[i] == PP_REQ_ORPHANED && s.r[i].id == 2;
  }
  CHECK_EQ(unfinished, 1);
  CHECK_EQ(orphaned, 1);
  CHECK_EQ_U(t.n, 2);
  CHECK(put(&t, 3, PPT_EV_REQ_END, 0, 130) != NULL);
  CHECK(pp__reqs_put(&t, 1, 3, PPT_EV_REQ_BEGIN, 0, 110) != NULL);
  CHECK_EQ_U(pp__reqs_settle_before(&t, 200), 2);
  CHECK_EQ(s.outcome[2], PP_REQ_DONE);
  CHECK_EQ(s.r[2].end, 130);
  CHECK_EQ_U(s.r[2].space, 0);
  CHECK_EQ(s.outcome[3], PP_REQ_DONE);
  CHECK_EQ_U(s.r[3].space, 1);
  CHECK_EQ(s.r[3].end, 120);
  CHECK_EQ_U(t.n, 0);
  pp__reqs_free(&t);
}

/* Many requests, their events offered in order and then scrambled: every
 * request pairs the same. Exercises the index's growth and deletion. */
#define NREQ 3000

typedef struct rq_ev {
  uint64_t id;
  unsigned type;
  uint64_t extra;
  int64_t ts;
} rq_ev;

static size_t make_events(rq_ev *ev) {
  size_t n = 0;
  for (uint64_t i = 0; i < NREQ; i++) {
    uint64_t id = i * 2654435761u + 1; /* spread over the hash */
    int64_t b = (int64_t)i * 10;
    ev[n++] = (rq_ev){id, PPT_EV_REQ_BEGIN, 0, b};
    ev[n++] =
        (rq_ev){id, PPT_EV_REQ_TOKENS, 1 + i % 3, b + 5 + (int64_t)(i % 7)};
    ev[n++] = (rq_ev){id, PPT_EV_REQ_TOKENS, 2, b + 20 + (int64_t)(i % 11)};
    ev[n++] = (rq_ev){id, PPT_EV_REQ_END, ppt_zigzag((int64_t)(i % 5 == 0)),
                      b + 40 + (int64_t)i};
  }
  return n;
}

static int by_id(const pp_req *a, const pp_req *b) {
  return a->id < b->id ? -1 : a->id > b->id;
}

static void sort_settled(settled *s) {
  for (size_t i = 1; i < s->n; i++) /* insertion sort: nearly sorted */
    for (size_t j = i; j > 0 && by_id(&s->r[j - 1], &s->r[j]) > 0; j--) {
      pp_req r = s->r[j];
      s->r[j] = s->r[j - 1];
      s->r[j - 1] = r;
    }
}

PP_TEST(pair_requests_scrambled_order_pairs_the_same) {
  static rq_ev ev[NREQ * 4];
  static settled a, b;
  size_t n = make_events(ev);
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  pp_req_table t;
  pp__reqs_init(&t, 0, collect, &a);
  for (size_t i = 0; i < n; i++)
    put(&t, ev[i].id, ev[i].type, ev[i].extra, ev[i].ts);
  pp__reqs_finish(&t);
  pp__reqs_free(&t);
  /* Scrambled: a fixed shuffle, as threads drained in any order. */
  unsigned seed = 12345;
  for (size_t i = n - 1; i > 0; i--) {
    seed = seed * 1103515245u + 12345u;
    size_t j = (seed >> 8) % (i + 1);
    rq_ev x = ev[i];
    ev[i] = ev[j];
    ev[j] = x;
  }
  pp__reqs_init(&t, 0, collect, &b);
  size_t most = 0;
  for (size_t i = 0; i < n; i++) {
    put(&t, ev[i].id, ev[i].type, ev[i].extra, ev[i].ts);
    if (t.n > most)
      most = t.n;
  }
  pp__reqs_finish(&t);
  CHECK(most > 1000); /* many kept at once: the index grew */
  CHECK_EQ_U(t.c.done, NREQ);
  CHECK_EQ_U(t.c.orphans + t.c.unfinished + t.c.lost, 0);
  pp__reqs_free(&t);
  CHECK_EQ_U(a.n, NREQ);
  CHECK_EQ_U(b.n, NREQ);
  sort_settled(&a);
  sort_settled(&b);
  for (size_t i = 0; i < NREQ; i++) {
    CHECK_EQ(a.outcome[i], PP_REQ_DONE);
    CHECK_EQ(b.outcome[i], PP_REQ_DONE);
    CHECK_EQ_U(a.r[i].id, b.r[i].id);
    CHECK_EQ(a.r[i].begin, b.r[i].begin);
    CHECK_EQ(a.r[i].first, b.r[i].first);
    CHECK_EQ(a.r[i].end, b.r[i].end);
    CHECK_EQ(a.r[i].status, b.r[i].status);
    CHECK_EQ_U(a.r[i].tokens, b.r[i].tokens);
    CHECK_EQ_U(a.r[i].chunks, b.r[i].chunks);
  }
}
