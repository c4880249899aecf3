/* SPDX-License-Identifier: MIT */
/*
 * Queue analysis: turns the QUEUE_PUSH, QUEUE_POP and QUEUE_WAIT_* events
 * of pp_queue_*() into per-queue statistics (pp_queue_stats): depth over
 * time, each item's wait from push to pop (paired by item id), the time
 * the queue spent full and empty, the recorded producer and consumer
 * waits, throughput; and the stall periods of all queues. Also the entry
 * point pp_analyze_pipeline() and its release.
 *
 * Definitions (docs/analysis.md): a queue's window runs from its first to
 * its last event. The depth is the one the library recorded with each
 * event (pushes minus pops it counted); it holds from that event to the
 * next one. A negative depth (a pop recorded before its push, when the
 * calls are made outside the queue's lock) counts as 0.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "format/pptrace.h"
#include "internal.h"
#include "pipeline.h"

static int is_queue_ev(uint8_t type) {
  return type >= PPT_EV_QUEUE_PUSH && type <= PPT_EV_QUEUE_WAIT_END;
}

/* One queue event, for sorting. */
typedef struct qev {
  int64_t ts;
  uint64_t v;     /* item id, or why for waits */
  int64_t depth;  /* recorded depth, clamped at 0 */
  uint32_t q;     /* queue index */
  uint32_t th;    /* thread index */
  size_t seq;     /* index in the thread */
  uint8_t type;
} qev;

static int cmp_time(const void *a, const void *b) {
  const qev *x = a, *y = b;
  if (x->q != y->q)
    return x->q < y->q ? -1 : 1;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  if (x->th != y->th)
    return x->th < y->th ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Items: by id, then time, a push before a pop at the same time. */
static int cmp_item(const void *a, const void *b) {
  const qev *x = a, *y = b;
  if (x->v != y->v)
    return x->v < y->v ? -1 : 1;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  if (x->type != y->type)
    return x->type < y->type ? -1 : 1;
  return cmp_time(a, b);
}

/* Waits: by thread, why, then time. */
static int cmp_wait(const void *a, const void *b) {
  const qev *x = a, *y = b;
  if (x->th != y->th)
    return x->th < y->th ? -1 : 1;
  if (x->v != y->v)
    return x->v < y->v ? -1 : 1;
  return cmp_time(a, b);
}

void pp__stall_offer(pp_pipeline *p, uint32_t queue, int full, int recorded,
                     int64_t start, int64_t end) {
  p->stall_periods++;
  int64_t d = pp__span(start, end);
  size_t n = p->nstalls;
  if (n == PP_STALLS_MAX &&
      d <= pp__span(p->stalls[n - 1].start, p->stalls[n - 1].end))
    return;
  if (n < PP_STALLS_MAX)
    n++;
  size_t i = n - 1;
  /* Insertion: longest first, earlier first among equals. */
  while (i > 0 && pp__span(p->stalls[i - 1].start, p->stalls[i - 1].end) < d) {
    p->stalls[i] = p->stalls[i - 1];
    i--;
  }
  p->stalls[i] = (pp_stall){queue, (uint8_t)(full != 0),
                            (uint8_t)(recorded != 0), start, end};
  p->nstalls = n;
}

/* Depth over time, full and empty time, depth-derived stall periods. */
static void depth_stats(pp_pipeline *p, pp_queue_stats *q, uint32_t qi,
                        const qev *e, size_t n, int stalls_from_depth) {
  q->t_first = e[0].ts;
  q->t_last = e[n - 1].ts;
  int64_t win = pp__span(q->t_first, q->t_last);
  double weighted = 0;
  int64_t run_start = 0;
  int run = 0; /* 0 none, 1 full, 2 empty */
  q->depth_min = q->depth_max = e[0].depth;
  for (size_t i = 0; i < n; i++) {
    int64_t d = e[i].depth;
    if (d < q->depth_min)
      q->depth_min = d;
    if (d > q->depth_max)
      q->depth_max = d;
    int64_t held = i + 1 < n ? pp__span(e[i].ts, e[i + 1].ts) : 0;
    weighted += (double)d * (double)held;
    int full = q->capacity > 0 && d >= q->capacity;
    int empty = d <= 0;
    if (full)
      q->full_ns = pp__add_sat(q->full_ns, held);
    if (empty)
      q->empty_ns = pp__add_sat(q->empty_ns, held);
    int now = full ? 1 : empty ? 2 : 0;
    if (now != run) {
      if (run && stalls_from_depth)
        pp__stall_offer(p, qi, run == 1, 0, run_start, e[i].ts);
      run = now;
      run_start = e[i].ts;
    }
  }
  if (run && stalls_from_depth && pp__span(run_start, q->t_last) > 0)
    pp__stall_offer(p, qi, run == 1, 0, run_start, q->t_last);
  q->depth_last = e[n - 1].depth;
  q->depth_mean = win > 0 ? weighted / (double)win : (double)q->depth_last;
}

/* Push -> pop per item id; e is scratch (sorted in place). */
static void item_waits(pp_queue_stats *q, qev *e, size_t n, int64_t *pend) {
  pp__sort(e, n, sizeof *e, cmp_item);
  for (size_t i = 0; i < n;) {
    size_t j = i, head = 0, npend = 0;
    for (; j < n && e[j].v == e[i].v; j++) {
      if (e[j].type == PPT_EV_QUEUE_PUSH) {
        pend[npend++] = e[j].ts;
      } else if (head < npend) {
        pp_hist_record(&q->wait, (uint64_t)pp__span(pend[head++], e[j].ts));
        q->matched++;
      } else {
        q->unmatched_pops++;
      }
    }
    i = j;
  }
}

/* Recorded waits: begin/end pairs per thread and why. Returns whether the
 * queue has any. */
static int recorded_waits(pp_pipeline *p, pp_queue_stats *q, uint32_t qi,
                          qev *e, size_t n, int64_t q_end) {
  if (!n)
    return 0;
  pp__sort(e, n, sizeof *e, cmp_wait);
  for (size_t i = 0; i < n; i++) {
    if (e[i].type != PPT_EV_QUEUE_WAIT_BEGIN)
      continue;
    int full = e[i].v == PP_QUEUE_FULL;
    int64_t begin = e[i].ts, end;
    if (i + 1 < n && e[i + 1].th == e[i].th && e[i + 1].v == e[i].v &&
        e[i + 1].type == PPT_EV_QUEUE_WAIT_END) {
      end = e[++i].ts;
    } else {
      end = q_end > begin ? q_end : begin;
      q->waits_unclosed++;
    }
    int64_t d = pp__span(begin, end);
    if (full) {
      q->waits_full++;
      q->blocked_full_ns = pp__add_sat(q->blocked_full_ns, d);
    } else {
      q->waits_empty++;
      q->blocked_empty_ns = pp__add_sat(q->blocked_empty_ns, d);
    }
    pp__stall_offer(p, qi, full, 1, d ? begin : end, end);
  }
  return 1;
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

int pp__queues_analyze(pp_trace *t) {
  pp_pipeline *p = &t->prof.pipe;
  if (t->from_stats) {
    for (size_t i = 0; i < t->nlocs; i++)
      if (t->locs[i].kind == PP_KIND_QUEUE)
        p->queues_unavailable = 1;
    return 0;
  }
  /* Queue sites with events, by name. */
  size_t nev = 0;
  uint32_t *qidx = NULL;
  for (size_t i = 0; i < t->nthreads; i++)
    for (size_t j = 0; j < t->threads[i].nev; j++) {
      const pp_event *e = &t->threads[i].ev[j];
      nev += is_queue_ev(e->type) && e->loc < t->nlocs;
    }
  if (!nev)
    return 0;
  qidx = pp__malloc(t->nlocs * sizeof *qidx);
  if (!qidx)
    return -1;
  for (size_t i = 0; i < t->nlocs; i++)
    qidx[i] = UINT32_MAX;
  size_t nq = 0;
  for (size_t i = 0; i < t->nthreads; i++)
    for (size_t j = 0; j < t->threads[i].nev; j++) {
      const pp_event *e = &t->threads[i].ev[j];
      if (is_queue_ev(e->type) && e->loc < t->nlocs &&
          qidx[e->loc] == UINT32_MAX)
        qidx[e->loc] = (uint32_t)nq++;
    }
  p->queues = pp__calloc(nq, sizeof *p->queues);
  if (!p->queues) {
    pp__free(qidx);
    return -1;
  }
  p->nqueues = nq;
  for (size_t i = 0; i < t->nlocs; i++) {
    if (qidx[i] == UINT32_MAX)
      continue;
    pp_queue_stats *q = &p->queues[qidx[i]];
    const pp_loc *l = &t->locs[i];
    q->loc = (uint32_t)i;
    q->name = pp_trace_loc_name(t, (uint32_t)i);
    q->from = l->function ? l->function : "";
    q->to = l->file ? l->file : "";
    q->capacity = l->line;
    pp_hist_init(&q->wait);
  }
  /* Pipeline order, then renumber. */
  order_queues(p->queues, nq);
  for (size_t k = 0; k < nq; k++)
    qidx[p->queues[k].loc] = (uint32_t)k;

  qev *ev = pp__malloc(nev * sizeof *ev);
  qev *scratch = pp__malloc(nev * sizeof *scratch);
  int64_t *pend = pp__malloc(nev * sizeof *pend);
  if (!ev || !scratch || !pend) {
    pp__free(ev);
    pp__free(scratch);
    pp__free(pend);
    pp__free(qidx);
    return -1;
  }
  size_t k = 0;
  for (size_t i = 0; i < t->nthreads; i++)
    for (size_t j = 0; j < t->threads[i].nev; j++) {
      const pp_event *e = &t->threads[i].ev[j];
      if (!is_queue_ev(e->type) || e->loc >= t->nlocs)
        continue;
      int64_t d = ppt_unzigzag(e->v2);
      ev[k++] = (qev){e->ts, e->v.id, d > 0 ? d : 0, qidx[e->loc],
                      (uint32_t)i, j, e->type};
    }
  pp__free(qidx);
  pp__sort(ev, nev, sizeof *ev, cmp_time);

  for (size_t i = 0; i < nev;) {
    size_t j = i;
    while (j < nev && ev[j].q == ev[i].q)
      j++;
    uint32_t qi = ev[i].q;
    pp_queue_stats *q = &p->queues[qi];
    /* Waits first: they decide where stall periods come from. */
    size_t nw = 0, ni = 0;
    for (size_t x = i; x < j; x++)
      if (ev[x].type >= PPT_EV_QUEUE_WAIT_BEGIN)
        scratch[nw++] = ev[x];
    int have_waits = recorded_waits(p, q, qi, scratch, nw, ev[j - 1].ts);
    depth_stats(p, q, qi, ev + i, j - i, !have_waits);
    for (size_t x = i; x < j; x++) {
      if (ev[x].type == PPT_EV_QUEUE_PUSH) {
        q->pushes++;
        scratch[ni++] = ev[x];
      } else if (ev[x].type == PPT_EV_QUEUE_POP) {
        q->pops++;
        scratch[ni++] = ev[x];
      }
    }
    item_waits(q, scratch, ni, pend);
    int64_t win = pp__span(q->t_first, q->t_last);
    if (win > 0) {
      q->in_per_s = (double)q->pushes / ((double)win * 1e-9);
      q->out_per_s = (double)q->pops / ((double)win * 1e-9);
    }
    i = j;
  }
  pp__free(ev);
  pp__free(scratch);
  pp__free(pend);
  return 0;
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
  }
  pp__free(p->advice);
  memset(p, 0, sizeof *p);
  p->bound = -1;
  p->efficiency = -1;
}

int pp_analyze_pipeline(pp_trace *t) {
  if (!t)
    return -1;
  pp_pipeline *p = &t->prof.pipe;
  pp_pipeline_free(p);
  if (pp__queues_analyze(t) || pp__stages_analyze(t) ||
      pp__flows_analyze(t) || pp__advice_build(t)) {
    pp_pipeline_free(p);
    return -1;
  }
  return 0;
}
