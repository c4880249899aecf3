/* SPDX-License-Identifier: MIT */
/*
 * The streaming figures of a trace (stream.h): the stats sink fed with a
 * trace's events, zone events directly (in batches of one thread's), the
 * rest through the reorder buffer.
 */
#include <string.h>

#include "analyze/pipeline.h"
#include "analyze/pools.h"
#include "analyze/requests.h"
#include "analyze/series.h"
#include "analyze/stream.h"
#include "format/pptrace.h"
#include "internal.h"
#include "model/sites.h"
#include "model/feed.h"
#include "sink/stats.h"

/* Events of other types waiting for their turn in time order: at 32 bytes
 * each, 32 MiB at most. A writer pass spans milliseconds, so the buffer
 * holds far more than threads lag behind each other in a file. */
#define REORDER_CAP (1u << 20)

/* Zone events wait in a batch of one thread's (pp__aggregate_events) until
 * it is full, another thread's event comes, or anything else reaches the
 * aggregate: the aggregate sees the calls of one event at a time, in the
 * same order. */
#define ZBATCH 256u

struct pp_stream {
  pp__aggregate *agg;
  pp_order *order;
  pp_req_stream *req;      /* NULL: requests not followed */
  pp_queue_stream *queues; /* NULL: queues not followed */
  pp_pool_stream *pools;   /* NULL: pools not followed */
  pp_series_rec *series;   /* NULL: chart series not followed */
  size_t defined;          /* sites 0..defined-1 are defined in agg */
  int failed;
  pp__agg_ev zb[ZBATCH]; /* zone events of thread zb_tid, waiting */
  size_t nzb;
  uint64_t zb_tid;
  pp_feed_fn tap; /* pp__stream_tap */
  void *tap_arg;
  /* A part being read (pp__stream_part_begin): the trace as the merge
   * will number it, its sites and threads after the main trace's. Only
   * the members the consumers read are set: pid, locs, nlocs, threads
   * (tid and pid), nthreads; copies of pointers the traces own. */
  int in_part;
  uint64_t part_fed; /* the part's events handed to pp__stream_event */
  pp_trace view;
  size_t loc_base, thread_base, cap_locs, cap_threads;
  /* share (a part of the run's processes): the main trace's sites a
   * part's zone or mark site is (model/sites.h), and each part site's id
   * in the view, as pp_trace_merge_process will number them */
  pp_site_index *index;
  uint32_t *map;
  size_t nmap, cap_map;
};

static int to_aggregate(void *arg, const pp_trace *t, uint32_t thread,
                        const pp_event *e);

pp_stream *pp__stream_new(void) {
  pp_stream *s = pp__calloc(1, sizeof *s);
  if (!s)
    return NULL;
  s->agg = pp__aggregate_new();
  s->order = pp_order_new(REORDER_CAP, to_aggregate, s);
  if (!s->agg || !s->order) {
    pp__stream_free(s);
    return NULL;
  }
  return s;
}

void pp__stream_free(pp_stream *s) {
  if (!s)
    return;
  (void)pp__stream_part_end(s, 1);
  pp__req_stream_free(s->req);
  pp__queue_stream_free(s->queues);
  pp__pool_stream_free(s->pools);
  pp__series_free(s->series);
  pp__aggregate_free(s->agg);
  pp_order_free(s->order);
  pp__free(s);
}

int pp__stream_details(pp_stream *s, uint64_t warmup, const pp_slo *slo) {
  pp__req_stream_free(s->req);
  pp__queue_stream_free(s->queues);
  pp__pool_stream_free(s->pools);
  s->req = pp__req_stream_new(warmup, slo, 0);
  s->queues = pp__queue_stream_new(PP_QUEUE_ITEMS_MAX_OPEN);
  s->pools = pp__pool_stream_new(PP_POOL_LIVE_MAX, PP_POOL_LEVELS_MAX);
  return s->req && s->queues && s->pools && pp__stream_series(s) == 0 ? 0 : -1;
}

int pp__stream_series(pp_stream *s) {
  if (s->series)
    return 0;
  if (!(s->series = pp__series_new()))
    return -1;
  pp__agg_observer o;
  pp__series_observer(s->series, &o);
  pp__aggregate_observe(s->agg, &o);
  return 0;
}

pp_series_rec *pp__stream_take_series(pp_stream *s) {
  pp_series_rec *r = s->series;
  s->series = NULL;
  pp__aggregate_observe(s->agg, NULL);
  return r;
}

int pp__stream_pools(pp_stream *s) {
  pp__pool_stream_free(s->pools);
  s->pools = pp__pool_stream_new(PP_POOL_LIVE_MAX, PP_POOL_LEVELS_MAX);
  return s->pools ? 0 : -1;
}

void pp__stream_results_free(pp_stream_results *r) {
  if (!r)
    return;
  pp_request_stats_free(&r->req);
  pp__queue_stream_free(r->queues_open);
  pp_pipeline_free(&r->queues);
  pp__pool_stream_free(r->pools_open);
  for (size_t i = 0; i < r->npools; i++)
    pp__free(r->pools[i].levels);
  pp__free(r->pools);
  pp__free(r);
}

int pp__request_stats_copy(pp_request_stats *dst, const pp_request_stats *src) {
  *dst = *src;
  pp_hist *h[4] = {&dst->e2e, &dst->ttft, &dst->tpot, &dst->itl};
  const pp_hist *g[4] = {&src->e2e, &src->ttft, &src->tpot, &src->itl};
  dst->sizes = NULL;
  int rc = 0;
  for (int i = 0; i < 4; i++) {
    pp_hist_init(h[i]);
    if (pp_hist_merge(h[i], g[i]) != 0)
      rc = -1;
  }
  if (src->nsizes) {
    dst->sizes = pp__malloc(src->nsizes * sizeof *dst->sizes);
    if (dst->sizes)
      memcpy(dst->sizes, src->sizes, src->nsizes * sizeof *dst->sizes);
    else
      rc = -1;
  }
  if (rc != 0)
    pp_request_stats_free(dst);
  return rc;
}

/* Counters and frame streams are series by name: the sink learns each
 * site's kind and name before its first event. */
static void define_upto(pp_stream *s, const pp_trace *t, uint32_t loc) {
  for (; s->defined <= loc && s->defined < t->nlocs; s->defined++) {
    const pp_loc *l = &t->locs[s->defined];
    pp_srcloc p = {l->name ? l->name : "", l->function, l->file, l->line,
                   l->kind};
    pp__aggregate_define(s->agg, (uint32_t)s->defined, &p);
  }
}

/* The sink's value word: a counter's bits, a range's id. */
static uint64_t value_of(const pp_event *e) {
  uint64_t v;
  if (e->type == PPT_EV_COUNTER_SETF) {
    memcpy(&v, &e->v.f, sizeof v);
    return v;
  }
  return e->v.id;
}

static void zb_flush(pp_stream *s) {
  if (s->nzb) {
    pp__aggregate_events(s->agg, s->zb_tid, s->zb, s->nzb);
    s->nzb = 0;
  }
}

static int to_aggregate(void *arg, const pp_trace *t, uint32_t thread,
                        const pp_event *e) {
  pp_stream *s = arg;
  zb_flush(s);
  uint64_t tid = t->threads[thread].tid;
  if (e->loc >= t->nlocs) { /* a site never defined: an event at its time,
                               nothing more (a mark carries no figure) */
    pp__aggregate_event(s->agg, tid, PPT_EV_MARK, 0, e->ts, 0);
    return 0;
  }
  if (s->req && e->type < 32 &&
      (PP_REQ_STREAM_TYPES & (UINT32_C(1) << e->type)) &&
      pp__req_stream_event(s->req, t, thread, e) != 0)
    return -1;
  if (e->type >= PPT_EV_QUEUE_PUSH && e->type <= PPT_EV_QUEUE_WAIT_END) {
    if (s->queues && pp__queue_stream_event(s->queues, t, thread, e) != 0)
      return -1;
    if (s->series)
      pp__series_queue(s->series, e->loc, e->ts, ppt_unzigzag(e->v2));
  }
  if (s->pools && ppt_is_mem(e->type) &&
      pp__pool_stream_event(s->pools, t, thread, e) != 0)
    return -1;
  if (e->loc >= s->defined)
    define_upto(s, t, e->loc);
  pp__aggregate_event(s->agg, tid, e->type, e->loc, e->ts, value_of(e));
  return 0;
}

static int is_zone(uint8_t type) {
  return type == PPT_EV_ZONE_BEGIN || type == PPT_EV_ZONE_END;
}

/* A zone event, or one of a site never defined (an event at its time,
 * nothing more, as to_aggregate says), into the batch: what to_aggregate
 * does for them, later. */
static void to_batch(pp_stream *s, const pp_trace *t, uint32_t thread,
                     const pp_event *e) {
  uint64_t tid = t->threads[thread].tid;
  if (s->nzb && (tid != s->zb_tid || s->nzb == ZBATCH))
    zb_flush(s);
  s->zb_tid = tid;
  pp__agg_ev *b = &s->zb[s->nzb++];
  if (e->loc >= t->nlocs) {
    *b = (pp__agg_ev){PPT_EV_MARK, 0, e->ts, 0};
    return;
  }
  if (e->loc >= s->defined)
    define_upto(s, t, e->loc);
  *b = (pp__agg_ev){e->type, e->loc, e->ts, value_of(e)};
}

void pp__stream_tap(pp_stream *s, pp_feed_fn fn, void *arg) {
  s->tap = fn;
  s->tap_arg = arg;
}

int pp__stream_event(void *arg, const pp_trace *t, uint32_t thread,
                     const pp_event *e) {
  pp_stream *s = arg;
  if (s->tap && s->tap(s->tap_arg, t, thread, e) != 0)
    return -1;
  if (is_zone(e->type) || e->loc >= t->nlocs) {
    to_batch(s, t, thread, e);
    return 0;
  }
  return pp_order_put(s->order, t, thread, e);
}

int pp__stream_feed_threads(pp_stream *s, const pp_trace *t, size_t first) {
  if (pp_order_flush(s->order, t) != 0)
    return -1; /* what a read streamed comes first */
  for (size_t i = first; i < t->nthreads; i++) {
    const pp_thread *th = &t->threads[i];
    for (size_t j = 0; j < th->nev; j++)
      if (is_zone(th->ev[j].type) || th->ev[j].loc >= t->nlocs)
        to_batch(s, t, (uint32_t)i, &th->ev[j]);
  }
  zb_flush(s);
  /* The rest in time order: a merge of these threads only. */
  return pp_feed_threads_in_time_order(t, first,
                                       PP_FEED_ALL &
                                           ~(PP_FEED_TYPE(PPT_EV_ZONE_BEGIN) |
                                             PP_FEED_TYPE(PPT_EV_ZONE_END)),
                                       to_aggregate, s) == 0
             ? 0
             : -1;
}

/* The view's copy of the part's sites and threads, from index `from`
 * (the reader adds a site when an event names one never defined). */
static int view_sites(pp_stream *s, const pp_trace *part) {
  pp_trace *v = &s->view;
  if (pp__grow((void **)&v->locs, &s->cap_locs, s->loc_base + part->nlocs,
               sizeof *v->locs) ||
      pp__grow((void **)&s->map, &s->cap_map, part->nlocs, sizeof *s->map))
    return -1;
  for (size_t i = s->nmap; i < part->nlocs; i++) {
    long k = pp_site_index_find(s->index, &part->locs[i]);
    if (k >= 0) {
      s->map[i] = (uint32_t)k;
      continue;
    }
    s->map[i] = (uint32_t)v->nlocs;
    v->locs[v->nlocs] = part->locs[i];
    v->locs[v->nlocs].id = (uint32_t)v->nlocs;
    v->nlocs++;
  }
  s->nmap = part->nlocs;
  return 0;
}

/* The view's entry of thread i of src: its id, process and name (the
 * pointer src owns). */
static void view_thread(pp_thread *th, const pp_trace *src, size_t i) {
  memset(th, 0, sizeof *th);
  th->tid = src->threads[i].tid;
  th->pid = pp_thread_pid(src, &src->threads[i]);
  th->name = src->threads[i].name;
}

static int view_threads(pp_stream *s, const pp_trace *part, size_t from) {
  pp_trace *v = &s->view;
  if (pp__grow((void **)&v->threads, &s->cap_threads,
               s->thread_base + part->nthreads, sizeof *v->threads))
    return -1;
  for (size_t i = from; i < part->nthreads; i++)
    view_thread(&v->threads[s->thread_base + i], part, i);
  v->nthreads = s->thread_base + part->nthreads;
  return 0;
}

int pp__stream_part_begin(pp_stream *s, const pp_trace *t, int share) {
  zb_flush(s);
  if (pp__stream_part_end(s, 0) != 0 || pp_order_flush(s->order, t) != 0)
    return -1; /* what the main read streamed comes first */
  pp_trace *v = &s->view;
  memset(v, 0, sizeof *v);
  v->pid = t->pid;
  s->loc_base = t->nlocs;
  s->thread_base = t->nthreads;
  s->in_part = 1;
  if (pp__grow((void **)&v->locs, &s->cap_locs, t->nlocs + 1,
               sizeof *v->locs) ||
      pp__grow((void **)&v->threads, &s->cap_threads, t->nthreads + 1,
               sizeof *v->threads)) {
    (void)pp__stream_part_end(s, 1);
    return -1;
  }
  if (t->nlocs)
    memcpy(v->locs, t->locs, t->nlocs * sizeof *v->locs);
  for (size_t i = 0; i < t->nthreads; i++)
    view_thread(&v->threads[i], t, i);
  v->nlocs = t->nlocs;
  v->nthreads = t->nthreads;
  s->nmap = 0;
  if (share && !(s->index = pp_site_index_new(t->locs, t->nlocs))) {
    (void)pp__stream_part_end(s, 1);
    return -1;
  }
  return 0;
}

int pp__stream_part_event(void *arg, const pp_trace *part, uint32_t thread,
                          const pp_event *e) {
  pp_stream *s = arg;
  pp_trace *v = &s->view;
  if (!s->in_part)
    return -1;
  if (s->nmap != part->nlocs && view_sites(s, part) != 0)
    return -1;
  if (v->nthreads - s->thread_base != part->nthreads &&
      view_threads(s, part, v->nthreads - s->thread_base) != 0)
    return -1;
  pp_event m = *e;
  m.loc = e->loc < s->nmap ? s->map[e->loc] : e->loc;
  s->part_fed++;
  return pp__stream_event(s, v, (uint32_t)(thread + s->thread_base), &m);
}

int pp__stream_part_end(pp_stream *s, int read_failed) {
  if (!s->in_part)
    return 0;
  zb_flush(s);
  /* The part's events still waiting refer to the view's sites and
   * threads: hand them over while it is valid; after a failed read the
   * part's names are gone, so nothing more is handed over, and figures
   * already fed from it fail the whole read. */
  int rc;
  if (read_failed) {
    pp_order_drop(s->order);
    rc = s->part_fed ? -1 : 0;
  } else {
    rc = pp_order_flush(s->order, &s->view) == 0 ? 0 : -1;
  }
  s->part_fed = 0;
  pp__free(s->view.locs);
  pp__free(s->view.threads);
  memset(&s->view, 0, sizeof s->view);
  s->cap_locs = s->cap_threads = 0;
  pp_site_index_free(s->index);
  s->index = NULL;
  pp__free(s->map);
  s->map = NULL;
  s->nmap = s->cap_map = 0;
  s->in_part = 0;
  return rc;
}

uint64_t pp__stream_late(const pp_stream *s) {
  return pp_order_late(s->order);
}

int pp__stream_finish(pp_stream *s, const pp_trace *t, unsigned char **out,
                      size_t *len, pp_stream_results **res) {
  *out = NULL;
  *len = 0;
  if (res)
    *res = NULL;
  zb_flush(s);
  if (pp_order_flush(s->order, t) != 0)
    return -1;
  if (res && (s->req || s->queues || s->pools)) {
    pp_stream_results *r = pp__calloc(1, sizeof *r);
    if (!r)
      return -1;
    if (s->req) {
      if (pp__req_stream_finish(s->req, INT64_MAX, &r->req) != 0) {
        pp__stream_results_free(r);
        return -1;
      }
      r->have_requests = 1;
    }
    /* finished by the first analysis, which knows the trace's times */
    r->queues_open = s->queues;
    s->queues = NULL;
    r->pools_open = s->pools;
    s->pools = NULL;
    *res = r;
  }
  pp__aggregate_finish(s->agg, INT64_MAX);
  ppt_buf b = {0};
  pp__aggregate_encode(s->agg, &b);
  if (b.oom) {
    ppt_buf_free(&b);
    if (res) {
      pp__stream_results_free(*res);
      *res = NULL;
    }
    return -1;
  }
  *out = b.data;
  *len = b.len;
  return 0;
}
