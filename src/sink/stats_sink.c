/* SPDX-License-Identifier: MIT */
/*
 * The stats sink (see stats_sink.h) over the aggregate the tools share.
 */
#include "stats_sink.h"

#include "../ring/tally.h"
#include "../internal.h"
#include "stats.h"

typedef struct stats_sink {
  pp__sink sink;
  pp__out *out;
  pp__sites *sites;
  pp__aggregate *agg;
} stats_sink;

/* The id of site p; a site new to the file is defined in the aggregate
 * too. UINT32_MAX when out of memory. */
static uint32_t site_id(stats_sink *st, const pp_srcloc *p) {
  size_t before = st->sites->n;
  uint32_t id = pp__sites_id(st->sites, p);
  if (id != UINT32_MAX && st->sites->n != before)
    pp__aggregate_define(st->agg, id, p);
  return id;
}

static void stats_thread(pp__sink *k, uint64_t tid, const char *name) {
  pp__aggregate_thread(((stats_sink *)k)->agg, tid, name);
}

/* Events go to the aggregate in batches of this many (one thread's, in
 * recording order): the thread is looked up once a batch. */
#define BATCH 256

static uint64_t stats_slots(pp__sink *k, const pp__slots *s) {
  stats_sink *st = (stats_sink *)k;
  const pp_srcloc *last_loc = NULL;
  uint32_t last_id = 0;
  uint64_t n = 0;
  pp__agg_ev batch[BATCH];
  size_t nb = 0;
  const pp__clockmap clock = s->clock;
  pp__slot_ev e;
  for (uint64_t i = s->from; i < s->to;) {
    int r = pp__slot_read(s, &i, &e);
    if (r < 0)
      break;
    if (r == 0)
      continue;
    if (e.loc != last_loc) {
      uint32_t id = site_id(st, e.loc);
      if (id == UINT32_MAX)
        continue;
      last_loc = e.loc;
      last_id = id;
    }
    batch[nb].type = e.type;
    batch[nb].id = last_id;
    batch[nb].ns = pp__clockmap_ns(&clock, e.ts);
    batch[nb].value = e.value;
    if (++nb == BATCH) {
      pp__aggregate_events(st->agg, s->tid, batch, nb);
      nb = 0;
    }
    n++;
  }
  pp__aggregate_events(st->agg, s->tid, batch, nb);
  return n;
}

static void stats_drops(pp__sink *k, uint64_t tid, uint64_t n) {
  pp__aggregate_drops(((stats_sink *)k)->agg, tid, n);
}

static void stats_gpu(pp__sink *k, pp__gpu_rec *recs, size_t n,
                      const pp__clockmap *clock) {
  stats_sink *st = (stats_sink *)k;
  for (size_t i = 0; i < n; i++) {
    const pp__gpu_rec *r = &recs[i];
    uint32_t id = site_id(st, r->loc);
    if (id == UINT32_MAX)
      continue;
    pp__aggregate_gpu(st->agg, id, r->device, r->stream, r->tid,
                      pp__clockmap_ns(clock, r->launch_tick),
                      pp__clockmap_ns(clock, r->start_tick), r->dur_ns);
  }
}

/* Ticks to ns at the clock's rate, for sums of durations. */
static uint64_t ticks_ns(const pp__clockmap *clock, uint64_t ticks) {
  __extension__ unsigned __int128 ns = (unsigned __int128)ticks * clock->mult;
  ns >>= PP__CLOCKMAP_SHIFT;
  return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

/* A thread's own zones, when it exits or the session ends: into the
 * aggregate as if the sink had paired them (tally.h). */
static void stats_tallies(pp__sink *k, uint64_t tid, pp__tallies *g, int why,
                          const pp__clockmap *clock) {
  stats_sink *st = (stats_sink *)k;
  if (why == PP__TALLY_TICK)
    return;
  /* a running thread's last zone, not counted by it yet */
  uint64_t pend_ns = 0, pend_self = 0;
  const pp__tally *pend = why == PP__TALLY_FINAL
                              ? pp__tallies_pending(g, &pend_ns, &pend_self)
                              : NULL;
  pp_hist h;
  pp_hist_init(&h);
  for (const pp__tally *t =
           atomic_load_explicit(&g->head, memory_order_acquire);
       t; t = t->next) {
    uint32_t id = site_id(st, t->loc);
    if (id == UINT32_MAX)
      continue;
    pp__tally_read r;
    pp__tally_read_now(t, &r);
    pp_hist_reset(&h);
    pp__tally_merge_into(t, &r, &h);
    if (t == pend) {
      pp_hist_record(&h, pend_ns);
      r.self_ns += pend_self;
    }
    pp__aggregate_zones(st->agg, tid, id, &h, r.self_ns);
  }
  pp_hist_free(&h);
  pp__agg_thread x = {0};
  x.busy_ns = ticks_ns(clock, pp__tally_get(&g->busy_ticks));
  x.events = pp__tally_get(&g->events);
  uint64_t first = pp__tally_get(&g->first_tick);
  x.first_ns = pp__clockmap_ns(clock, first);
  x.last_ns = pp__clockmap_ns(clock, pp__tally_get(&g->last_tick));
  if (!first)
    x.events = 0; /* nothing taken */
  x.pc.lost_ends = pp__tally_get(&g->lost_ends);
  x.pc.stray_ends = pp__tally_get(&g->stray_ends);
  x.pc.too_deep = pp__tally_get(&g->too_deep);
  x.pc.backwards = pp__tally_get(&g->backwards);
  x.pc.no_memory = pp__tally_get(&g->no_memory);
  /* Zones still open on a running thread end with the session: closed
   * without their end, as the pairing's finish closes them (their
   * children's time is not added to the busy time: the owner's stack
   * is not read while it may change). */
  if (why == PP__TALLY_FINAL)
    x.pc.lost_ends += pp__tally_get(&g->open);
  pp__aggregate_thread_zones(st->agg, tid, &x);
}

static void stats_pass_end(pp__sink *k, int64_t now_ns, int final) {
  (void)now_ns;
  (void) final;
  stats_sink *st = (stats_sink *)k;
  pp__sites_write(st->sites, st->out);
}

static void stats_finish(pp__sink *k, int64_t end_ns) {
  stats_sink *st = (stats_sink *)k;
  pp__aggregate_finish(st->agg, end_ns);
  ppt_buf b = {0};
  pp__aggregate_encode(st->agg, &b);
  pp__out_chunk(st->out, PPT_CHUNK_STATS, &b, 0);
  ppt_buf_free(&b);
}

static void stats_checkpoint(pp__sink *k, ppt_buf *out) {
  pp__aggregate_save(((stats_sink *)k)->agg, out);
}

void pp__stats_sink_define(pp__sink *k, uint32_t id, const pp_srcloc *def) {
  pp__aggregate_define(((stats_sink *)k)->agg, id, def);
}

int pp__stats_sink_restore(pp__sink *k, const unsigned char *p, size_t n) {
  return pp__aggregate_load(((stats_sink *)k)->agg, p, n);
}

static void stats_free(pp__sink *k) {
  stats_sink *st = (stats_sink *)k;
  if (!st)
    return;
  pp__aggregate_free(st->agg);
  pp__free(st);
}

static const pp__sink_ops stats_ops = {.name = "stats",
                                       .thread = stats_thread,
                                       .slots = stats_slots,
                                       .drops = stats_drops,
                                       .gpu = stats_gpu,
                                       .tallies = stats_tallies,
                                       .pass_end = stats_pass_end,
                                       .checkpoint = stats_checkpoint,
                                       .finish = stats_finish,
                                       .free = stats_free};

pp__sink *pp__stats_sink_new(pp__out *out, pp__sites *sites) {
  stats_sink *st = pp__calloc(1, sizeof *st);
  if (!st)
    return NULL;
  st->agg = pp__aggregate_new();
  if (!st->agg) {
    pp__free(st);
    return NULL;
  }
  st->sink.ops = &stats_ops;
  st->out = out;
  st->sites = sites;
  return &st->sink;
}
