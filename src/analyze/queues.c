/* SPDX-License-Identifier: MIT */
/*
 * Queue analysis as a stream: the QUEUE_PUSH, QUEUE_POP and QUEUE_WAIT_*
 * events of pp_queue_*(), handed over one at a time in time order across
 * threads (model/feed.h), become per-queue statistics (pp_queue_stats):
 * depth over time, each item's wait from push to pop (paired by item id
 * through pair/intervals.h), the time the queue spent full and empty, the
 * recorded producer and consumer waits, throughput; and the stall periods
 * of all queues. Also the entry point pp_analyze_pipeline() and its
 * release.
 *
 * Definitions (docs/analysis.md): a queue's window runs from its first to
 * its last event. The depth is the one the library recorded with each
 * event (pushes minus pops it counted); it holds from that event to the
 * next one. A negative depth (a pop recorded before its push, when the
 * calls are made outside the queue's lock) counts as 0.
 *
 * Memory (docs/internals/streaming.md): per queue a fixed record, an open
 * wait slot per thread and kind, and two lists of PP_STALLS_MAX stalls;
 * items in flight in one table of at most max_open pushes (48 bytes
 * each). Nothing grows with the number of events.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "format/pptrace.h"
#include "internal.h"
#include "model/feed.h"
#include "pair/intervals.h"
#include "pipeline.h"
#include "stats/depth.h"

static int is_queue_ev(uint8_t type) {
  return type >= PPT_EV_QUEUE_PUSH && type <= PPT_EV_QUEUE_WAIT_END;
}

static int64_t mul_sat(uint64_t n, int64_t d) {
  if (d <= 0 || n == 0)
    return 0;
  return n > (uint64_t)(INT64_MAX / d) ? INT64_MAX : (int64_t)n * d;
}

/* ---- lists of the longest stalls ---------------------------------------- */

/* Whether a stays before b in a list of the longest stalls: longer first,
 * then earlier; among equals the one already listed. This order does not
 * depend on the order stalls are offered in, so a queue's own list can be
 * kept while its events stream and merged into pipe.stalls at the end. */
static int stall_before(const pp_stall *a, const pp_stall *b) {
  int64_t da = pp__span(a->start, a->end), db = pp__span(b->start, b->end);
  if (da != db)
    return da > db;
  return a->start <= b->start;
}

static void top_offer(pp_stall *v, size_t *n, const pp_stall *s) {
  size_t k = *n;
  if (k == PP_STALLS_MAX && stall_before(&v[k - 1], s))
    return;
  if (k < PP_STALLS_MAX)
    k++;
  size_t i = k - 1;
  while (i > 0 && !stall_before(&v[i - 1], s)) {
    v[i] = v[i - 1];
    i--;
  }
  v[i] = *s;
  *n = k;
}

void pp__stall_offer(pp_pipeline *p, uint32_t queue, int full, int recorded,
                     int64_t start, int64_t end) {
  p->stall_periods++;
  pp_stall s = {queue, (uint8_t)(full != 0), (uint8_t)(recorded != 0), start,
                end};
  top_offer(p->stalls, &p->nstalls, &s);
}

/* A queue's own longest stalls and how many it had. */
typedef struct stall_list {
  pp_stall v[PP_STALLS_MAX];
  size_t n;
  uint64_t periods;
} stall_list;

static void list_offer(stall_list *l, int full, int recorded, int64_t start,
                       int64_t end) {
  l->periods++;
  pp_stall s = {0, (uint8_t)(full != 0), (uint8_t)(recorded != 0), start, end};
  top_offer(l->v, &l->n, &s);
}

/* ---- the stream ---------------------------------------------------------- */

/* A recorded wait begun on one thread and not yet ended. */
typedef struct wait_slot {
  int64_t begin;
  int open;
  int waited; /* the thread recorded a wait of this kind */
} wait_slot;

enum { KIND_FULL, KIND_EMPTY };

typedef struct qstate {
  uint32_t loc;
  uint64_t nev;
  pp_depth depth; /* capacity, range, mean, full and empty time; its
                     t_first and t_last are the queue's earliest and latest
                     event */
  int run; /* 0 none, 1 full, 2 empty */
  int64_t run_start;
  stall_list from_depth; /* used when the queue has no recorded waits */
  uint64_t pushes, pops, matched, unmatched_pops;
  uint64_t untracked, untracked_open; /* pushes the item table had no room
                                         for; of those, not yet popped */
  pp_hist wait;
  int has_waits;
  wait_slot *open; /* [thread * 2 + kind] */
  size_t nopen;
  uint64_t waits[2];
  int64_t blocked[2];
  uint64_t unclosed[2];          /* begins with no end: closed at t_last */
  int64_t unclosed_ns[2];        /* their time up to t_last as it is now */
  pp_stall early[PP_STALLS_MAX]; /* their earliest begins: the longest */
  size_t nearly;
  stall_list recorded;
} qstate;

/* Pops that found no push at the time events are at now: a push of the
 * same id at that same time (another thread, later in the feed's order)
 * still pairs with one, as it did when the events were sorted push first.
 * A few are enough: they are forgotten as soon as the time moves on. */
#define SAME_TS_POPS 16

struct pp_queue_stream {
  qstate *q;
  size_t nq, capq;
  uint32_t *by_loc; /* loc -> queue index + 1, 0: none */
  size_t nby_loc;
  pp_id_pairs items;
  size_t items_high;
  struct {
    uint64_t id;
    uint32_t space;
  } same[SAME_TS_POPS];
  size_t nsame;
  int64_t same_ts;
};

pp_queue_stream *pp__queue_stream_new(size_t max_open_items) {
  pp_queue_stream *s = pp__calloc(1, sizeof *s);
  if (!s)
    return NULL;
  pp__idpairs_init(&s->items, max_open_items);
  return s;
}

void pp__queue_stream_free(pp_queue_stream *s) {
  if (!s)
    return;
  for (size_t i = 0; i < s->nq; i++) {
    pp_hist_free(&s->q[i].wait);
    pp__free(s->q[i].open);
  }
  pp__free(s->q);
  pp__free(s->by_loc);
  pp__idpairs_free(&s->items);
  pp__free(s);
}

size_t pp__queue_stream_items_kept(const pp_queue_stream *s) {
  return s->items.n;
}

size_t pp__queue_stream_items_high(const pp_queue_stream *s) {
  return s->items_high;
}

static qstate *get_queue(pp_queue_stream *s, const pp_trace *t, uint32_t loc,
                         uint32_t *qi) {
  if (loc >= s->nby_loc) {
    size_t cap = s->nby_loc;
    if (pp__grow((void **)&s->by_loc, &cap, (size_t)loc + 1, sizeof *s->by_loc))
      return NULL;
    memset(s->by_loc + s->nby_loc, 0, (cap - s->nby_loc) * sizeof *s->by_loc);
    s->nby_loc = cap;
  }
  if (!s->by_loc[loc]) {
    if (s->nq >= INT32_MAX ||
        pp__grow((void **)&s->q, &s->capq, s->nq + 1, sizeof *s->q))
      return NULL;
    qstate *q = &s->q[s->nq];
    memset(q, 0, sizeof *q);
    q->loc = loc;
    q->depth = pp_depth_make(t->locs[loc].line);
    pp_hist_init(&q->wait);
    s->by_loc[loc] = (uint32_t)++s->nq;
  }
  *qi = s->by_loc[loc] - 1;
  return &s->q[*qi];
}

/* Depth over time, full and empty time, depth-derived stall periods. */
static void depth_step(qstate *q, int64_t ts, int64_t d) {
  int64_t last = q->depth.t_last;
  int later = q->nev && ts > last;
  pp_depth_step(&q->depth, ts, d);
  /* Unclosed waits last until the queue's last event. */
  for (int k = 0; later && k < 2; k++)
    q->unclosed_ns[k] = pp__add_sat(
        q->unclosed_ns[k], mul_sat(q->unclosed[k], pp__span(last, ts)));
  int full = q->depth.capacity > 0 && d >= q->depth.capacity;
  int now = full ? 1 : d <= 0 ? 2 : 0;
  if (now != q->run) {
    if (q->run)
      list_offer(&q->from_depth, q->run == 1, 0, q->run_start, ts);
    q->run = now;
    q->run_start = ts;
  }
  q->nev++;
}

/* A begin that gets no end: counted now, closed at the queue's last event
 * at the finish; only the earliest can be among the longest stalls. */
static void wait_unclosed(qstate *q, int kind, int64_t begin) {
  q->waits[kind]++;
  q->unclosed[kind]++;
  q->unclosed_ns[kind] =
      pp__add_sat(q->unclosed_ns[kind], pp__span(begin, q->depth.t_last));
  q->recorded.periods++;
  size_t n = q->nearly;
  if (n == PP_STALLS_MAX && q->early[n - 1].start <= begin)
    return;
  if (n < PP_STALLS_MAX)
    n++;
  size_t i = n - 1;
  while (i > 0 && q->early[i - 1].start > begin) {
    q->early[i] = q->early[i - 1];
    i--;
  }
  q->early[i] = (pp_stall){0, (uint8_t)(kind == KIND_FULL), 1, begin, begin};
  q->nearly = n;
}

/* Recorded waits: a begin and the next end of its thread and kind. */
static int wait_event(qstate *q, uint32_t thread, const pp_event *e) {
  q->has_waits = 1;
  int kind = e->v.id == PP_QUEUE_FULL ? KIND_FULL : KIND_EMPTY;
  size_t slot = (size_t)thread * 2 + (size_t)kind;
  if (slot >= q->nopen) {
    if (e->type != PPT_EV_QUEUE_WAIT_BEGIN)
      return 0; /* an end with no begin on its thread */
    size_t cap = q->nopen;
    if (pp__grow((void **)&q->open, &cap, slot + 1, sizeof *q->open))
      return -1;
    memset(q->open + q->nopen, 0, (cap - q->nopen) * sizeof *q->open);
    q->nopen = cap;
  }
  wait_slot *w = &q->open[slot];
  if (e->type == PPT_EV_QUEUE_WAIT_BEGIN)
    w->waited = 1;
  if (e->type == PPT_EV_QUEUE_WAIT_BEGIN) {
    if (w->open)
      wait_unclosed(q, kind, w->begin);
    w->open = 1;
    w->begin = e->ts;
  } else if (w->open) {
    int64_t d = pp__span(w->begin, e->ts);
    q->waits[kind]++;
    q->blocked[kind] = pp__add_sat(q->blocked[kind], d);
    list_offer(&q->recorded, kind == KIND_FULL, 1, d ? w->begin : e->ts, e->ts);
    w->open = 0;
  }
  return 0;
}

static pp_half item_half(uint32_t qi, const pp_event *e, int is_end) {
  /* Item id 0 is an id here; the table's space keeps it apart. */
  uint64_t id = e->v.id;
  return (pp_half){.id = id ? id : 1,
                   .ts = e->ts,
                   .cookie = qi,
                   .space = qi << 1 | (id == 0),
                   .is_end = (uint32_t)is_end};
}

static void item_push(pp_queue_stream *s, qstate *q, uint32_t qi,
                      const pp_event *e) {
  q->pushes++;
  pp_half h = item_half(qi, e, 0), b, en;
  if (s->nsame && s->same_ts == e->ts)
    for (size_t i = 0; i < s->nsame; i++)
      if (s->same[i].id == h.id && s->same[i].space == h.space) {
        s->same[i] = s->same[--s->nsame];
        q->unmatched_pops--;
        q->matched++;
        pp_hist_record(&q->wait, 0);
        return;
      }
  if (pp__idpairs_put(&s->items, &h, &b, &en) < 0) {
    q->untracked++;
    q->untracked_open++;
  }
  if (s->items.n > s->items_high)
    s->items_high = s->items.n;
}

static void item_pop(pp_queue_stream *s, qstate *q, uint32_t qi,
                     const pp_event *e) {
  q->pops++;
  pp_half h = item_half(qi, e, 1), b, en;
  if (pp__idpairs_match(&s->items, &h, &b, &en) == 1) {
    q->matched++;
    pp_hist_record(&q->wait, (uint64_t)pp__span(b.ts, en.ts));
    return;
  }
  if (q->untracked_open) {
    /* Taken as the pop of a push the table had no room for. */
    q->untracked_open--;
    return;
  }
  q->unmatched_pops++;
  if (s->nsame < SAME_TS_POPS) {
    s->same[s->nsame].id = h.id;
    s->same[s->nsame++].space = h.space;
  }
}

int pp__queue_stream_event(void *arg, const pp_trace *t, uint32_t thread,
                           const pp_event *e) {
  pp_queue_stream *s = arg;
  if (!is_queue_ev(e->type) || e->loc >= t->nlocs)
    return 0;
  uint32_t qi;
  qstate *q = get_queue(s, t, e->loc, &qi);
  if (!q)
    return -1;
  if (e->ts != s->same_ts) {
    s->nsame = 0;
    s->same_ts = e->ts;
  }
  int64_t d = ppt_unzigzag(e->v2);
  depth_step(q, e->ts, d > 0 ? d : 0);
  switch (e->type) {
  case PPT_EV_QUEUE_PUSH:
    item_push(s, q, qi, e);
    return 0;
  case PPT_EV_QUEUE_POP:
    item_pop(s, q, qi, e);
    return 0;
  default:
    return wait_event(q, thread, e);
  }
}

/* Queues in pipeline order: by the longest chain of queues before them
 * (a queue follows another when it starts at the stage the other ends
 * at), then by name. The rank lives in t_first until the events fill it. */
static int cmp_queue_order(const void *a, const void *b) {
  const pp_queue_stats *x = a, *y = b;
  if (x->t_first != y->t_first)
    return x->t_first < y->t_first ? -1 : 1;
  int c = strcmp(x->name, y->name);
  if (c)
    return c;
  return x->loc < y->loc ? -1 : x->loc > y->loc;
}

static void order_queues(pp_queue_stats *q, size_t n) {
  for (size_t round = 0; round < n; round++) {
    int changed = 0;
    for (size_t a = 0; a < n; a++)
      for (size_t b = 0; b < n; b++)
        if (a != b && q[a].to[0] && strcmp(q[a].to, q[b].from) == 0 &&
            q[b].t_first < q[a].t_first + 1 && q[a].t_first < (int64_t)n) {
          q[b].t_first = q[a].t_first + 1;
          changed = 1;
        }
    if (!changed)
      break;
  }
  pp__sort(q, n, sizeof *q, cmp_queue_order);
  for (size_t i = 0; i < n; i++)
    q[i].t_first = 0;
}

/* The shares of the window (pp_queue_stats's *_pct). */
static void queue_shares(pp_queue_stats *o) {
  o->full_pct = pp_depth_full_pct(&o->depth);
  o->empty_pct = pp_depth_empty_pct(&o->depth);
  o->producer_blocked_pct =
      pp_depth_wait_pct(&o->depth, (double)o->blocked_full_ns, o->waits_full,
                        o->waiters_full);
  o->consumer_waiting_pct =
      pp_depth_wait_pct(&o->depth, (double)o->blocked_empty_ns,
                        o->waits_empty, o->waiters_empty);
}

/* Move a queue's figures into its stats and its stalls into p. */
static void queue_finish(qstate *q, pp_queue_stats *o, pp_pipeline *p,
                         uint32_t qi) {
  o->t_first = q->depth.t_first;
  o->t_last = q->depth.t_last;
  o->pushes = q->pushes;
  o->pops = q->pops;
  o->matched = q->matched;
  o->unmatched_pops = q->unmatched_pops;
  o->items_untracked = q->untracked;
  o->wait = q->wait;
  pp_hist_init(&q->wait);
  o->depth = q->depth;
  stall_list *l = &q->from_depth;
  if (q->has_waits) {
    for (size_t i = 0; i < q->nopen; i++)
      if (q->open[i].open)
        wait_unclosed(q, (int)(i % 2), q->open[i].begin);
    for (size_t i = 0; i < q->nearly; i++) {
      int64_t b = q->early[i].start, end = q->depth.t_last > b ? q->depth.t_last : b;
      pp_stall s = q->early[i];
      s.start = pp__span(b, end) ? b : end;
      s.end = end;
      top_offer(q->recorded.v, &q->recorded.n, &s);
    }
    for (int k = 0; k < 2; k++)
      q->blocked[k] = pp__add_sat(q->blocked[k], q->unclosed_ns[k]);
    o->waits_full = q->waits[KIND_FULL];
    o->waits_empty = q->waits[KIND_EMPTY];
    o->blocked_full_ns = q->blocked[KIND_FULL];
    o->blocked_empty_ns = q->blocked[KIND_EMPTY];
    for (size_t i = 0; i < q->nopen; i++)
      if (q->open[i].waited)
        ++*(i % 2 == KIND_FULL ? &o->waiters_full : &o->waiters_empty);
    o->waits_unclosed = q->unclosed[KIND_FULL] + q->unclosed[KIND_EMPTY];
    l = &q->recorded;
  } else if (q->run && pp__span(q->run_start, q->depth.t_last) > 0) {
    list_offer(l, q->run == 1, 0, q->run_start, q->depth.t_last);
  }
  queue_shares(o);
  p->stall_periods += l->periods;
  for (size_t i = 0; i < l->n; i++) {
    pp_stall s = l->v[i];
    s.queue = qi;
    top_offer(p->stalls, &p->nstalls, &s);
  }
}

int pp__queue_stream_finish(pp_queue_stream *s, const pp_trace *t,
                            int64_t t_end, pp_pipeline *p) {
  (void)t_end; /* a queue's window ends at its own last event */
  if (!s->nq)
    return 0;
  p->queues = pp__calloc(s->nq, sizeof *p->queues);
  if (!p->queues)
    return -1;
  p->nqueues = s->nq;
  for (size_t i = 0; i < s->nq; i++) {
    pp_queue_stats *o = &p->queues[i];
    uint32_t loc = s->q[i].loc;
    const pp_loc *l = &t->locs[loc];
    o->loc = loc;
    o->name = pp_trace_loc_name(t, loc);
    o->from = l->function ? l->function : "";
    o->to = l->file ? l->file : "";
  }
  order_queues(p->queues, s->nq);
  for (size_t k = 0; k < s->nq; k++)
    queue_finish(&s->q[s->by_loc[p->queues[k].loc] - 1], &p->queues[k], p,
                 (uint32_t)k);
  return 0;
}

/* Queues of a model in memory: its events through the stream. */
/* The queue figures a read's stream computed from every event
 * (pp_stream_results): finished at the first analysis, copied at each. */
static int streamed_queues(pp_analysis *a, pp_pipeline *p) {
  const pp_trace *t = a->trace;
  pp_stream_results *sr = a->streamres;
  if (sr->queues_open) {
    int rc =
        pp__queue_stream_finish(sr->queues_open, t, a->prof.t1, &sr->queues);
    pp__queue_stream_free(sr->queues_open);
    sr->queues_open = NULL;
    if (rc != 0) {
      pp_pipeline_free(&sr->queues);
      return -1;
    }
    sr->have_queues = 1;
  }
  const pp_pipeline *q = &sr->queues;
  memcpy(p->stalls, q->stalls, sizeof p->stalls);
  p->nstalls = q->nstalls;
  p->stall_periods = q->stall_periods;
  if (!q->nqueues)
    return 0;
  p->queues = pp__calloc(q->nqueues, sizeof *p->queues);
  if (!p->queues)
    return -1;
  for (size_t i = 0; i < q->nqueues; i++) {
    p->queues[i] = q->queues[i];
    pp_hist_init(&p->queues[i].wait);
    p->nqueues = i + 1;
    if (pp_hist_merge(&p->queues[i].wait, &q->queues[i].wait) != 0)
      return -1;
  }
  return 0;
}

int pp__queues_analyze(pp_analysis *a) {
  const pp_trace *t = a->trace;
  pp_pipeline *p = &a->prof.pipe;
  if (t->from_stats) {
    for (size_t i = 0; i < t->nlocs; i++)
      if (t->locs[i].kind == PP_KIND_QUEUE)
        p->queues_unavailable = 1;
    return 0;
  }
  if (a->streamres && (a->streamres->queues_open || a->streamres->have_queues))
    return streamed_queues(a, p);
  pp_queue_stream *s = pp__queue_stream_new(PP_QUEUE_ITEMS_MAX_OPEN);
  if (!s)
    return -1;
  uint32_t types = PP_FEED_TYPE(PPT_EV_QUEUE_PUSH) |
                   PP_FEED_TYPE(PPT_EV_QUEUE_POP) |
                   PP_FEED_TYPE(PPT_EV_QUEUE_WAIT_BEGIN) |
                   PP_FEED_TYPE(PPT_EV_QUEUE_WAIT_END);
  int rc = pp_feed_in_time_order(t, types, pp__queue_stream_event, s);
  if (rc == 0)
    rc = pp__queue_stream_finish(s, t, a->prof.t1, p);
  pp__queue_stream_free(s);
  return rc ? -1 : 0;
}

void pp_pipeline_free(pp_pipeline *p) {
  if (!p)
    return;
  for (size_t i = 0; i < p->nqueues; i++)
    pp_hist_free(&p->queues[i].wait);
  pp__free(p->queues);
  pp__free(p->stages);
  for (size_t i = 0; i < p->nflows; i++) {
    pp_flow_stats *f = &p->flows[i];
    pp_hist_free(&f->latency);
    pp__free(f->median.segs);
    pp__free(f->slowest.segs);
    pp__free(f->where);
  }
  pp__free(p->flows);
  for (size_t i = 0; i < p->nadvice; i++) {
    pp__free(p->advice[i].text);
    pp__free(p->advice[i].evidence);
    pp__free(p->advice[i].stage);
  }
  pp__free(p->advice);
  memset(p, 0, sizeof *p);
  p->bound = -1;
  p->efficiency = -1;
}

int pp_analyze_pipeline(pp_analysis *a) {
  const pp_trace *t = a->trace;
  if (!t)
    return -1;
  pp_pipeline *p = &a->prof.pipe;
  pp_pipeline_free(p);
  if (pp__queues_analyze(a) || pp__stages_analyze(a) || pp__flows_analyze(a) ||
      pp__advice_build(a)) {
    pp_pipeline_free(p);
    return -1;
  }
  return 0;
}
