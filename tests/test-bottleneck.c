/* SPDX-License-Identifier: MIT */
/*
 * Bottleneck analysis, flow critical paths and recommendations on
 * synthetic traces whose answers are known by construction: a three-stage
 * pipeline a -> b -> c with a slow middle stage, exact full/empty times,
 * the efficiency computed by hand, and rules that fire only on evidence.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "export/export.h"
#include "format/pptrace.h"
#include "model/reader.h"
#include "pipeprof.h"
#include "results/doc.h"
#include "runner.h"
#include "trace_builder.h"

#define MS 1000000LL
#define US 1000LL

static void zone(pp_trace *t, size_t th, uint32_t loc, int64_t a,
                 int64_t b) {
  tb_ev(t, th, a, loc, PPT_EV_ZONE_BEGIN);
  tb_ev(t, th, b, loc, PPT_EV_ZONE_END);
}

static void qev(pp_trace *t, size_t th, uint32_t q, int64_t ts, uint8_t type,
                uint64_t v, int64_t depth) {
  pp_event *e = tb_ev(t, th, ts, q, type);
  e->v.id = v;
  e->v2 = ppt_zigzag(depth);
}

static void flow(pp_trace *t, size_t th, uint32_t f, int64_t ts,
                 uint8_t type, uint64_t id) {
  tb_ev(t, th, ts, f, type)->v.id = id;
}

static uint32_t queue_loc(pp_trace *t, const char *name, const char *from,
                          const char *to, uint32_t cap) {
  uint32_t q = tb_loc(t, name, PP_KIND_QUEUE);
  free(t->locs[q].function);
  free(t->locs[q].file);
  t->locs[q].function = tb_strdup(from);
  t->locs[q].file = tb_strdup(to);
  t->locs[q].line = cap;
  return q;
}

/* Ten items through a (2 ms each), b (8 ms: the bound) and c (0.5 ms).
 * Item i: a [10i, 10i+2], b [10i+2, 10i+10], c [10i+10.5, 10i+11] except
 * item 7, whose c runs at [81.5, 82]. Queue qa (a -> b, capacity 1): push
 * at 10i+1, pop at 10i+2; a recorded producer wait [5, 7]. Queue qb
 * (b -> c, capacity 2): push at 10i+10, pop when c starts. Flow "item"
 * id i+1: begin in a, step in b, end in c. */
static void build_pipeline(pp_trace *t, pp_analysis *a) {
  memset(t, 0, sizeof *t);
  uint32_t za = tb_loc(t, "a", PP_KIND_ZONE);
  uint32_t zb = tb_loc(t, "b", PP_KIND_ZONE);
  uint32_t zc = tb_loc(t, "c", PP_KIND_ZONE);
  uint32_t qa = queue_loc(t, "qa", "a", "b", 1);
  uint32_t qb = queue_loc(t, "qb", "b", "c", 2);
  uint32_t fl = tb_loc(t, "item", PP_KIND_FLOW);
  size_t ta = tb_thread(t, 1, "a"), tbh = tb_thread(t, 2, "b"),
         tc = tb_thread(t, 3, "c");
  for (int64_t i = 0; i < 10; i++) {
    int64_t b0 = 10 * i * MS;
    uint64_t id = (uint64_t)i + 1;
    int64_t c0 = i == 7 ? b0 + 11500 * US : b0 + 10500 * US;
    tb_ev(t, ta, b0, za, PPT_EV_ZONE_BEGIN);
    flow(t, ta, fl, b0 + 500 * US, PPT_EV_FLOW_BEGIN, id);
    qev(t, ta, qa, b0 + 1 * MS, PPT_EV_QUEUE_PUSH, id, 1);
    tb_ev(t, ta, b0 + 2 * MS, za, PPT_EV_ZONE_END);
    if (i == 0) {
      qev(t, ta, qa, 5 * MS, PPT_EV_QUEUE_WAIT_BEGIN, PP_QUEUE_FULL, 0);
      qev(t, ta, qa, 7 * MS, PPT_EV_QUEUE_WAIT_END, PP_QUEUE_FULL, 0);
    }
    qev(t, tbh, qa, b0 + 2 * MS, PPT_EV_QUEUE_POP, id, 0);
    tb_ev(t, tbh, b0 + 2 * MS, zb, PPT_EV_ZONE_BEGIN);
    flow(t, tbh, fl, b0 + 5 * MS, PPT_EV_FLOW_STEP, id);
    tb_ev(t, tbh, b0 + 10 * MS, zb, PPT_EV_ZONE_END);
    qev(t, tbh, qb, b0 + 10 * MS, PPT_EV_QUEUE_PUSH, id, 1);
    qev(t, tc, qb, c0, PPT_EV_QUEUE_POP, id, 0);
    zone(t, tc, zc, c0, c0 + 500 * US);
    flow(t, tc, fl, c0 + 200 * US, PPT_EV_FLOW_END, id);
  }
  CHECK_EQ(pp_analyze(t, a), 0);
}

static const pp_advice *find_advice(const pp_analysis *a, const char *rule) {
  for (size_t i = 0; i < a->prof.pipe.nadvice; i++)
    if (strcmp(a->prof.pipe.advice[i].rule, rule) == 0)
      return &a->prof.pipe.advice[i];
  return NULL;
}

PP_TEST(bottleneck_slow_middle_stage) {
  pp_trace t;
  pp_analysis a = {0};
  build_pipeline(&t, &a);
  const pp_pipeline *p = &a.prof.pipe;
  CHECK_EQ(p->nstages, 3);
  CHECK_STR(p->stages[0].name, "a");
  CHECK_STR(p->stages[1].name, "b");
  CHECK_STR(p->stages[2].name, "c");
  CHECK_EQ(p->bound, 1);
  CHECK_EQ(p->win_start, 0);
  CHECK_EQ(p->win_end, 101 * MS);
  const pp_stage_stats *b = &p->stages[1];
  CHECK_EQ(b->busy_ns, 80 * MS);
  CHECK_EQ(b->items, 10);
  CHECK_EQ(b->workers, 1);
  CHECK_NEAR(b->util, 80.0 / 101.0, 1e-12);
  CHECK_NEAR(b->capacity_per_s, 125.0, 1e-9);
  CHECK_NEAR(p->stages[0].capacity_per_s, 500.0, 1e-9);
  CHECK_NEAR(p->stages[2].capacity_per_s, 2000.0, 1e-9);
  /* Achieved: 10 items out of c in 101 ms; the bound allows 125/s. */
  CHECK_NEAR(p->achieved_per_s, 10.0 / 0.101, 1e-6);
  CHECK_NEAR(p->efficiency, (10.0 / 0.101) / 125.0, 1e-12);
  CHECK_EQ(p->stages[0].out_queue, 0);
  CHECK_EQ(p->stages[1].in_queue, 0);
  CHECK_EQ(p->stages[1].out_queue, 1);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(bottleneck_queue_full_empty_exact) {
  pp_trace t;
  pp_analysis a = {0};
  build_pipeline(&t, &a);
  const pp_pipeline *p = &a.prof.pipe;
  CHECK_EQ(p->nqueues, 2);
  const pp_queue_stats *qa = &p->queues[0], *qb = &p->queues[1];
  CHECK_STR(qa->name, "qa");
  CHECK_STR(qb->name, "qb");
  /* qa: window [1, 92] ms; depth 1 (= capacity) for 1 ms per item. */
  CHECK_EQ(qa->t_first, 1 * MS);
  CHECK_EQ(qa->t_last, 92 * MS);
  CHECK_EQ(qa->depth.full_ns, 10 * MS);
  CHECK_EQ(qa->depth.empty_ns, 81 * MS);
  CHECK_NEAR(pp_depth_mean(&qa->depth), 10.0 / 91.0, 1e-12);
  CHECK_EQ(qa->depth.max, 1);
  CHECK_EQ(qa->matched, 10);
  CHECK_EQ_U(pp_hist_percentile(&qa->wait, 50), 1 * MS);
  CHECK_EQ_U(pp_hist_percentile(&qa->wait, 99), 1 * MS);
  CHECK_EQ(qa->waits_full, 1);
  CHECK_EQ(qa->blocked_full_ns, 2 * MS);
  /* qb: capacity 2 never reached; waits 0.5 ms, item 8 1.5 ms. */
  CHECK_EQ(qb->depth.full_ns, 0);
  CHECK_EQ(qb->depth.max, 1);
  /* HDR percentiles give the highest value of the bucket (0.1%). */
  CHECK_EQ_U(pp_hist_percentile(&qb->wait, 50),
             pp_hist_highest_equivalent(500 * US));
  CHECK_EQ_U(qb->wait.max, 1500 * US);
  {
    const pp_table *qt = pp_doc_find(a.doc, "queues");
    CHECK(qt != NULL);
    size_t row = (size_t)(qb - a.prof.pipe.queues);
    CHECK_NEAR(pp_table_cell(qt, row, (size_t)pp_table_col(qt, "out_per_s"))
                   ->num,
               10.0 / ((100.5 - 10.0) / 1000.0), 1e-6);
  }
  /* Stall periods: qa has a recorded wait, so its stalls are recorded
   * ones (2 ms); qb's come from its depth: the longest empty stretch is
   * 10.5 ms (pop at 81.5 to push at 90... 9.5, or 71.5 -> 80 = 8.5). */
  CHECK_GE(p->nstalls, 2);
  int saw_recorded = 0;
  for (size_t i = 0; i < p->nstalls; i++) {
    const pp_stall *s = &p->stalls[i];
    if (i)
      CHECK_LE(s->end - s->start,
               p->stalls[i - 1].end - p->stalls[i - 1].start);
    if (s->queue == 0) {
      CHECK(s->recorded);
      CHECK(s->full);
      CHECK_EQ(s->start, 5 * MS);
      CHECK_EQ(s->end, 7 * MS);
      saw_recorded = 1;
    }
  }
  CHECK(saw_recorded);
  /* Longest qb empty period: after the pop at 10i+10.5 to the next push
   * at 10(i+1)+10 = 9.5 ms (after item 8's late pop at 81.5: 8.5 ms). */
  CHECK_EQ(p->stalls[0].queue, 1);
  CHECK_EQ(p->stalls[0].end - p->stalls[0].start, 9500 * US);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(bottleneck_flow_critical_path) {
  pp_trace t;
  pp_analysis a = {0};
  build_pipeline(&t, &a);
  const pp_pipeline *p = &a.prof.pipe;
  CHECK_EQ(p->nflows, 1);
  const pp_flow_stats *f = &p->flows[0];
  CHECK_EQ(f->items, 10);
  CHECK_EQ(f->incomplete, 0);
  /* Each item: a 2 ms, b 8 ms, [qb] 0.5 ms, c 0.5 ms = 11 ms; item 8
   * waits 1.5 ms in qb: 12 ms. */
  CHECK_EQ(f->median.total_ns, 11 * MS);
  CHECK_EQ(f->slowest.id, 8);
  CHECK_EQ(f->slowest.total_ns, 12 * MS);
  CHECK_EQ(f->slowest.nsegs, 4);
  CHECK_STR(f->slowest.segs[0].name, "a");
  CHECK_EQ(f->slowest.segs[0].ns, 2 * MS);
  CHECK_STR(f->slowest.segs[1].name, "b");
  CHECK_EQ(f->slowest.segs[1].ns, 8 * MS);
  CHECK(f->slowest.segs[2].wait);
  CHECK_STR(f->slowest.segs[2].name, "qb");
  CHECK_EQ(f->slowest.segs[2].ns, 1500 * US);
  CHECK_STR(f->slowest.segs[3].name, "c");
  CHECK_EQ(f->zone_ns, 105 * MS);
  CHECK_EQ(f->wait_ns, 6 * MS);
  CHECK_EQ_U(f->latency.max, 12 * MS);
  /* The largest share of time is b. */
  CHECK_STR(f->where[0].name, "b");
  CHECK_EQ(f->where[0].ns, 80 * MS);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* Items begun outside any zone (a source that decodes, then begins each
 * item and pushes it): their path starts with the wait in the queue that
 * feeds the first stage, never with a "(no zone)" segment of 0 ns. */
PP_TEST(bottleneck_flow_begun_outside_zones) {
  pp_trace t;
  pp_analysis a = {0};
  memset(&t, 0, sizeof t);
  uint32_t zb = tb_loc(&t, "b", PP_KIND_ZONE);
  uint32_t qin = queue_loc(&t, "qin", "source", "b", 4);
  uint32_t fl = tb_loc(&t, "item", PP_KIND_FLOW);
  size_t ts = tb_thread(&t, 1, "source"), tbh = tb_thread(&t, 2, "b");
  for (int64_t i = 0; i < 5; i++) {
    int64_t t0 = 10 * i * MS;
    uint64_t id = (uint64_t)i + 1;
    flow(&t, ts, fl, t0, PPT_EV_FLOW_BEGIN, id);
    qev(&t, ts, qin, t0, PPT_EV_QUEUE_PUSH, id, 1);
    qev(&t, tbh, qin, t0 + 3 * MS, PPT_EV_QUEUE_POP, id, 0);
    tb_ev(&t, tbh, t0 + 3 * MS, zb, PPT_EV_ZONE_BEGIN);
    flow(&t, tbh, fl, t0 + 7 * MS, PPT_EV_FLOW_END, id);
    tb_ev(&t, tbh, t0 + 8 * MS, zb, PPT_EV_ZONE_END);
  }
  CHECK_EQ(pp_analyze(&t, &a), 0);
  const pp_flow_stats *f = &a.prof.pipe.flows[0];
  CHECK_EQ(f->items, 5);
  CHECK_EQ(f->slowest.nsegs, 2);
  CHECK(f->slowest.segs[0].wait);
  CHECK_STR(f->slowest.segs[0].name, "qin");
  CHECK_EQ(f->slowest.segs[0].ns, 3 * MS);
  CHECK(!f->slowest.segs[1].wait);
  CHECK_STR(f->slowest.segs[1].name, "b");
  for (size_t k = 0; k < f->nwhere; k++)
    CHECK(f->where[k].name == NULL ||
          strcmp(f->where[k].name, "(no zone)") != 0);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(bottleneck_advice_needs_evidence) {
  pp_trace t;
  pp_analysis a = {0};
  build_pipeline(&t, &a);
  /* b is busy 79%: not saturated (no stage-bound), efficiency 79.2% <=
   * 80 (low-efficiency), qa full 10/91 = 11% (no queue-full), qb empty
   * 93% with its producer b busy (queue-empty), qa empty 89% but its
   * producer a busy only 20% (no queue-empty for qa). */
  CHECK(find_advice(&a, "stage-bound") == NULL);
  CHECK(find_advice(&a, "queue-full") == NULL);
  CHECK(find_advice(&a, "cpu-steal") == NULL);
  const pp_advice *adv = find_advice(&a, "low-efficiency");
  CHECK(adv != NULL);
  CHECK_CONTAINS(adv->text, "79.2%");
  CHECK_CONTAINS(adv->evidence, "b could do 125 items/s");
  adv = find_advice(&a, "queue-empty");
  CHECK(adv != NULL);
  CHECK_CONTAINS(adv->text, "c is starved by its producer b");
  CHECK_CONTAINS(adv->evidence, "queue qb (b -> c): empty 93.4% of the time");
  CHECK_CONTAINS(adv->evidence, "consumer waiting not recorded");
  for (size_t i = 0; i < a.prof.pipe.nadvice; i++)
    CHECK(strstr(a.prof.pipe.advice[i].evidence, "queue qa") == NULL);
  for (size_t i = 0; i < a.prof.pipe.nadvice; i++) {
    CHECK(a.prof.pipe.advice[i].evidence[0] != 0);
    if (i)
      CHECK_LE(a.prof.pipe.advice[i].severity,
               a.prof.pipe.advice[i - 1].severity);
  }
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* An empty trace with stages x and y and the queue x->y (capacity 2)
 * between them. */
static void x_to_y(pp_trace *t, uint32_t *zx, uint32_t *zy, uint32_t *q) {
  memset(t, 0, sizeof *t);
  *zx = tb_loc(t, "x", PP_KIND_ZONE);
  *zy = tb_loc(t, "y", PP_KIND_ZONE);
  *q = queue_loc(t, "x->y", "x", "y", 2);
}

/* Two producers of x -> y blocked on the full queue at the same time, 8
 * ms of every 10 each: the queue is full about 80% of the time, not 160%
 * (their summed wait). */
PP_TEST(bottleneck_queue_full_with_two_producers_blocked_at_once) {
  pp_trace t;
  pp_analysis an = {0};
  uint32_t zx, zy, q;
  x_to_y(&t, &zx, &zy, &q);
  size_t tx[2] = {tb_thread(&t, 1, "x"), tb_thread(&t, 3, "x")};
  size_t ty = tb_thread(&t, 2, "y");
  /* every 10 ms: each producer works 1 ms, then waits 8 ms on the full
   * queue and pushes; y pops them and works 9.5 ms */
  for (int64_t i = 0; i < 20; i++) {
    int64_t t0 = 10 * i * MS;
    for (int k = 0; k < 2; k++) {
      uint64_t id = (uint64_t)(2 * i + k);
      zone(&t, tx[k], zx, t0, t0 + 1 * MS);
      qev(&t, tx[k], q, t0 + 1 * MS, PPT_EV_QUEUE_WAIT_BEGIN, PP_QUEUE_FULL,
          2);
      qev(&t, tx[k], q, t0 + 9 * MS, PPT_EV_QUEUE_WAIT_END, PP_QUEUE_FULL,
          2);
      qev(&t, tx[k], q, t0 + 9 * MS, PPT_EV_QUEUE_PUSH, id, 2);
      qev(&t, ty, q, t0 + 9 * MS + 1, PPT_EV_QUEUE_POP, id, 1);
    }
    zone(&t, ty, zy, t0 + 9 * MS + 2, t0 + 10 * MS);
  }
  CHECK_EQ(pp_analyze(&t, &an), 0);
  const pp_queue_stats *qs = &an.prof.pipe.queues[0];
  CHECK_EQ(qs->waiters_full, 2);
  CHECK_EQ(qs->blocked_full_ns, 2 * 20 * 8 * MS); /* summed: 320 ms */
  const pp_advice *a = find_advice(&an, "queue-full");
  CHECK(a != NULL);
  /* the queue's window, first wait to last pop, [1 ms, 199 ms + 1 ns]:
   * each producer blocked 160 ms of it, 81% (not 162%) */
  CHECK_CONTAINS(a->evidence, "full 80.8% of the time");
  CHECK_CONTAINS(a->evidence, "producer blocked 80.8% on average over 2 "
                              "threads");
  pp_analysis_free(&an);
  pp_trace_free(&t);
}

/* x -> y with y busy 95% and its input queue full; CPU steal sampled. */
PP_TEST(bottleneck_saturated_stage_and_counters) {
  pp_trace t;
  pp_analysis an = {0};
  uint32_t zx, zy, q;
  x_to_y(&t, &zx, &zy, &q);
  uint32_t steal = tb_loc(&t, "sys.cpu.steal_pct", PP_KIND_COUNTER);
  size_t tx = tb_thread(&t, 1, "x"), ty = tb_thread(&t, 2, "y");
  /* y: 20 items of 9.5 ms in [0, 200] ms (busy 190 ms of 200). */
  for (int64_t i = 0; i < 20; i++) {
    zone(&t, tx, zx, 10 * i * MS, 10 * i * MS + 1 * MS);
    qev(&t, tx, q, 10 * i * MS, PPT_EV_QUEUE_PUSH, (uint64_t)i, 2);
    qev(&t, ty, q, 10 * i * MS + 5 * MS, PPT_EV_QUEUE_POP, (uint64_t)i, 1);
    zone(&t, ty, zy, 10 * i * MS + 500 * US, 10 * i * MS + 10 * MS);
  }
  for (int i = 0; i < 4; i++)
    tb_ev(&t, tx, i * MS, steal, PPT_EV_COUNTER_SETF)->v.f = 10 + 2 * i;
  CHECK_EQ(pp_analyze(&t, &an), 0);
  const pp_pipeline *p = &an.prof.pipe;
  CHECK_EQ(p->bound, 1);
  CHECK_NEAR(p->stages[1].util, 190.0 / 200.0, 1e-12);
  const pp_advice *a = find_advice(&an, "stage-bound");
  CHECK(a != NULL);
  CHECK_CONTAINS(a->text, "y bounds throughput");
  CHECK_CONTAINS(a->evidence, "y busy 95.0%");
  CHECK_CONTAINS(a->evidence, "while x busy 10.0%");
  /* Depth 2 = capacity from each push to the pop 5 ms later: 20 x 5 ms
   * of a window [0, 195] ms. */
  CHECK_EQ(p->queues[0].depth.full_ns, 100 * MS);
  a = find_advice(&an, "queue-full");
  CHECK(a != NULL);
  CHECK_CONTAINS(a->evidence, "full 51.3% of the time");
  CHECK_CONTAINS(a->text, "the consumer y is the bottleneck");
  a = find_advice(&an, "cpu-steal");
  CHECK(a != NULL);
  CHECK_CONTAINS(a->evidence, "CPU steal 13.0% on average");

  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK_EQ(pp_report_text(f, &an, NULL), 0);
  fclose(f);
  CHECK_CONTAINS(buf, "\npipeline bottlenecks (");
  CHECK_CONTAINS(buf, "\n  bound:                 y (the stage of lowest "
                      "capacity)\n");
  CHECK_CONTAINS(buf, "\n  bound saturated:       yes (busy at least 90% "
                      "of the window)\n");
  CHECK_CONTAINS(buf, "\n1  high      y bounds throughput");
  CHECK_CONTAINS(buf, "\n  evidence: y busy ");
  CHECK_CONTAINS(buf, "; rule: stage-bound\n");
  free(buf);
  f = open_memstream(&buf, &len);
  CHECK_EQ(pp_export_summary_json(f, &an), 0);
  fclose(f);
  CHECK_CONTAINS(buf, "\"schema_minor\":22");
  CHECK_CONTAINS(buf, "\"bound\":\"y\",\"bound_saturated\":true");
  CHECK_CONTAINS(buf, "{\"severity\":\"high\",\"text\":\"y bounds "
                      "throughput");
  CHECK_CONTAINS(buf, "\"rule\":\"stage-bound\"}");
  free(buf);
  pp_analysis_free(&an);
  pp_trace_free(&t);
}

/* ---- advice from library metrics, never from a user's counter -------- */

static const char *const counter_rules[] = {
    "cpu-steal", "iowait", "swap-growth", "major-faults", "memory-pressure"};

/* Series named like the metrics the counter rules read, on sites of kind
 * `kind`, with values past every threshold. */
static void lookalike_series(pp_trace *t, size_t th, uint32_t kind) {
  static const struct {
    const char *name;
    double v0, step;
  } s[] = {{"sys.cpu.steal_pct", 40, 1},
           {"sys.cpu.iowait_pct", 60, 1},
           {"sys.swap.used_bytes", 0, 512.0 * 1048576},
           {"proc.majflt_per_s", 500, 1},
           {"sys.psi.memory.some_pct", 70, 1}};
  for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
    uint32_t l = tb_loc(t, s[i].name, kind);
    for (int k = 0; k < 4; k++)
      tb_ev(t, th, (k + 1) * MS + (int64_t)i, l, PPT_EV_COUNTER_SETF)->v.f =
          s[i].v0 + s[i].step * k;
  }
}

/* Advice rules on sampled metrics find them by registry id and site kind
 * (as analyze/system.c): the same names on user counters (kind counter)
 * beside a library metric fire none of them; on the library's metric
 * sites every one fires. */
PP_TEST(bottleneck_advice_from_library_metrics_only) {
  pp_trace t;
  pp_analysis an = {0};
  memset(&t, 0, sizeof t);
  size_t th = tb_thread(&t, 1, "w");
  /* a library metric: this trace has PP_KIND_METRIC sites */
  uint32_t threads = tb_loc(&t, "proc.threads", PP_KIND_METRIC);
  tb_ev(&t, th, 0, threads, PPT_EV_COUNTER_SETF)->v.f = 4;
  lookalike_series(&t, th, PP_KIND_COUNTER);
  CHECK_EQ(pp_analyze(&t, &an), 0);
  for (size_t i = 0; i < sizeof counter_rules / sizeof *counter_rules; i++)
    if (find_advice(&an, counter_rules[i]))
      PP_FAIL("a user counter fired rule %s", counter_rules[i]);
  pp_analysis_free(&an);
  pp_trace_free(&t);

  memset(&t, 0, sizeof t);
  th = tb_thread(&t, 1, "w");
  lookalike_series(&t, th, PP_KIND_METRIC);
  CHECK_EQ(pp_analyze(&t, &an), 0);
  for (size_t i = 0; i < sizeof counter_rules / sizeof *counter_rules; i++)
    if (!find_advice(&an, counter_rules[i]))
      PP_FAIL("the library's metric did not fire rule %s", counter_rules[i]);
  const pp_advice *a = find_advice(&an, "memory-pressure");
  CHECK_CONTAINS(a->evidence, "(PSI some) 71.5% on average");
  a = find_advice(&an, "swap-growth");
  CHECK_CONTAINS(a->evidence, "grew by 1.50 GiB");
  pp_analysis_free(&an);
  pp_trace_free(&t);
}

/* A program that samples nothing but sets counters named like library
 * metrics with pp_counter_set: its trace (format 1.4: the library's
 * metrics have their own kind) gives no library advice, though no library
 * metric is there to mark the kind. */
PP_TEST(bottleneck_user_counters_in_a_file_give_no_advice) {
  char path[4096];
  snprintf(path, sizeof path, "%s/user.pptrace", pp_test_tmpdir());
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.mode = PP_MODE_TRACE;
  cfg.out_path = path;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  for (int k = 0; k < 4; k++) {
    PP_COUNTER_SET("sys.cpu.steal_pct", 40 + k);
    PP_COUNTER_SET("sys.cpu.iowait_pct", 60 + k);
    PP_COUNTER_SET("sys.swap.used_bytes", (int64_t)k * 512 * 1048576);
    PP_COUNTER_SET("proc.majflt_per_s", 500 + k);
    PP_COUNTER_SET("sys.psi.memory.some_pct", 70 + k);
  }
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis a = {0};
  char err[256];
  if (pp_trace_read_file(path, &t, err, sizeof err) != 0)
    PP_FAIL("%s", err);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK_EQ_U(a.prof.ncounters, 5);
  for (size_t i = 0; i < sizeof counter_rules / sizeof *counter_rules; i++)
    if (find_advice(&a, counter_rules[i]))
      PP_FAIL("a user counter fired rule %s", counter_rules[i]);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* Without queues: no stages, flows still analysed, no invented advice. */
PP_TEST(bottleneck_without_queues) {
  pp_trace t;
  pp_analysis a = {0};
  memset(&t, 0, sizeof t);
  uint32_t z = tb_loc(&t, "work", PP_KIND_ZONE);
  uint32_t fl = tb_loc(&t, "req", PP_KIND_FLOW);
  size_t th = tb_thread(&t, 1, "w");
  for (int64_t i = 0; i < 5; i++) {
    zone(&t, th, z, 10 * i * MS, 10 * i * MS + 2 * MS);
    flow(&t, th, fl, 10 * i * MS + 1 * MS, PPT_EV_FLOW_BEGIN, (uint64_t)i);
    flow(&t, th, fl, 10 * i * MS + 1 * MS, PPT_EV_FLOW_END, (uint64_t)i);
  }
  flow(&t, th, fl, 60 * MS, PPT_EV_FLOW_BEGIN, 99); /* never ends */
  CHECK_EQ(pp_analyze(&t, &a), 0);
  const pp_pipeline *p = &a.prof.pipe;
  CHECK_EQ(p->nqueues, 0);
  CHECK_EQ(p->nstages, 0);
  CHECK_EQ(p->bound, -1);
  CHECK(p->efficiency < 0);
  CHECK_EQ(p->nflows, 1);
  CHECK_EQ(p->flows[0].items, 5);
  CHECK_EQ(p->flows[0].incomplete, 1);
  CHECK_EQ(p->flows[0].median.total_ns, 2 * MS);
  CHECK_EQ(p->nadvice, 0);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK_EQ(pp_report_text(f, &a, NULL), 0);
  fclose(f);
  CHECK(strstr(buf, "\nqueues (") == NULL);
  CHECK_CONTAINS(buf, "stages: none");
  CHECK_CONTAINS(buf, "none: no rule found evidence");
  free(buf);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}
