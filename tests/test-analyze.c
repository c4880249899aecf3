/* SPDX-License-Identifier: MIT */
/*
 * Tests of the analysis (src/analyze/analyze.c) and the text report
 * (src/export/report_text.c) on traces built by hand: zone nesting and self
 * time, recovery from unmatched, unclosed and mismatched zone events, frame
 * and counter statistics, profile ordering and lookups, the report's rows
 * and numbers, empty traces, and idempotence of pp_analyze().
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "export/export.h"
#include "format/pptrace.h"
#include "pipeprof.h"
#include "runner.h"
#include "trace_builder.h"

#define MS 1000000LL

/* ---- trace builder ---------------------------------------------------------
 * Everything is malloc'ed as the reader would (plain malloc, which is what
 * pp__malloc is) so that pp_trace_free() releases it; it also calls
 * pp__analysis_free(). Allocation failures fail the test. */


static void tb_begin(pp_trace *t, size_t th, int64_t ts, uint32_t loc) {
  tb_ev(t, th, ts, loc, PPT_EV_ZONE_BEGIN);
}
static void tb_end(pp_trace *t, size_t th, int64_t ts, uint32_t loc) {
  tb_ev(t, th, ts, loc, PPT_EV_ZONE_END);
}
static void tb_frame(pp_trace *t, size_t th, int64_t ts, uint32_t loc) {
  tb_ev(t, th, ts, loc, PPT_EV_FRAME);
}
static void tb_counter(pp_trace *t, size_t th, int64_t ts, uint32_t loc,
                       uint8_t type, int64_t i, double f) {
  pp_event *e = tb_ev(t, th, ts, loc, type);
  if (type == PPT_EV_COUNTER_SETF)
    e->v.f = f;
  else
    e->v.i = i;
}


static void tb_free(pp_trace *t) { pp_trace_free(t); }

/* Render the report into a malloc'ed string. */
static char *render(const pp_analysis *a, const pp_report_opts *o) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK(f != NULL);
  CHECK_EQ(pp_report_text(f, a, o), 0);
  CHECK_EQ(fclose(f), 0);
  CHECK(buf != NULL);
  return buf;
}

/* A 3-level example on one thread:
 *   A [0,100]  >  B [10,60]  >  C [20,30]
 *             >  B [70,90]
 */
static void build_nested(pp_trace *t, uint32_t *a, uint32_t *b,
                         uint32_t *c) {
  *a = tb_loc(t, "A", PP_KIND_ZONE);
  *b = tb_loc(t, "B", PP_KIND_ZONE);
  *c = tb_loc(t, "C", PP_KIND_ZONE);
  size_t th = tb_thread(t, 7, "main");
  tb_begin(t, th, 0, *a);
  tb_begin(t, th, 10, *b);
  tb_begin(t, th, 20, *c);
  tb_end(t, th, 30, *c);
  tb_end(t, th, 60, *b);
  tb_begin(t, th, 70, *b);
  tb_end(t, th, 90, *b);
  tb_end(t, th, 100, *a);
}

static void check_zone(const pp_zone_inst *z, int64_t start, int64_t end,
                       int64_t self, uint32_t loc, uint32_t depth,
                       int32_t parent, uint32_t unclosed) {
  CHECK_EQ(z->start, start);
  CHECK_EQ(z->end, end);
  CHECK_EQ(z->self, self);
  CHECK_EQ(z->loc, loc);
  CHECK_EQ(z->depth, depth);
  CHECK_EQ(z->parent, parent);
  CHECK_EQ(z->unclosed, unclosed);
}

/* ---- zone instances ------------------------------------------------------ */

PP_TEST(analyze_nesting_self) {
  pp_trace t = {0};
  pp_analysis an = {0};
  uint32_t a, b, c;
  build_nested(&t, &a, &b, &c);
  CHECK_EQ(pp_analyze(&t, &an), 0);
  CHECK_EQ(an.analyzed, 1);
  const pp_thread_figures *thf = &an.threads[0];
  CHECK_EQ(thf->nzones, 4);
  check_zone(&thf->zones[0], 0, 100, 30, a, 0, -1, 0);
  check_zone(&thf->zones[1], 10, 60, 40, b, 1, 0, 0);
  check_zone(&thf->zones[2], 20, 30, 10, c, 2, 1, 0);
  check_zone(&thf->zones[3], 70, 90, 20, b, 1, 0, 0);
  CHECK_EQ(thf->busy_ns, 100);

  const pp_profile *p = &an.prof;
  CHECK_EQ(p->t0, 0);
  CHECK_EQ(p->t1, 100);
  CHECK_EQ(p->wall_ns, 100);
  CHECK_EQ(p->events, 8);
  CHECK_EQ(p->unclosed, 0);
  CHECK_EQ(p->unmatched_ends, 0);
  CHECK_EQ(p->nzones, 3);
  CHECK_EQ(p->zones[0].loc, a);
  CHECK_EQ(p->zones[1].loc, b);
  CHECK_EQ(p->zones[2].loc, c);

  const pp_zone_stats *zb = &p->zones[1];
  CHECK_EQ(zb->count, 2);
  CHECK_EQ(zb->total_ns, 70);
  CHECK_EQ(zb->self_ns, 60);
  CHECK_EQ(zb->min_ns, 20);
  CHECK_EQ(zb->max_ns, 50);
  CHECK_NEAR(zb->mean_ns, 35.0, 1e-9);
  CHECK_NEAR(zb->std_ns, 15.0, 1e-9);
  CHECK_EQ(zb->hist.count, 2);
  CHECK_EQ(pp_hist_percentile(&zb->hist, 100.0), 50);
  CHECK_EQ(p->zones[0].self_ns, 30);
  CHECK_EQ(p->zones[0].std_ns, 0);
  CHECK_EQ(p->zones[2].total_ns, 10);
  /* Self times add up to the busy time. */
  CHECK_EQ(p->zones[0].self_ns + p->zones[1].self_ns + p->zones[2].self_ns,
           thf->busy_ns);
  pp_analysis_free(&an);
  tb_free(&t);
}

PP_TEST(analyze_two_threads) {
  pp_trace t = {0};
  pp_analysis an = {0};
  uint32_t a = tb_loc(&t, "A", PP_KIND_ZONE);
  uint32_t b = tb_loc(&t, "B", PP_KIND_ZONE);
  size_t t0 = tb_thread(&t, 1, "main");
  size_t t1 = tb_thread(&t, 2, "");
  tb_begin(&t, t0, 0, a);
  tb_end(&t, t0, 100, a);
  tb_begin(&t, t1, 50, a);
  tb_begin(&t, t1, 60, b);
  tb_end(&t, t1, 80, b);
  tb_end(&t, t1, 250, a);
  t.threads[t0].dropped = 3;
  t.threads[t1].dropped = 4;
  CHECK_EQ(pp_analyze(&t, &an), 0);
  CHECK_EQ(an.prof.wall_ns, 250);
  CHECK_EQ(an.prof.events, 6);
  CHECK_EQ(an.prof.dropped, 7);
  CHECK_EQ(an.threads[t0].nzones, 1);
  CHECK_EQ(an.threads[t1].nzones, 2);
  CHECK_EQ(an.threads[t0].busy_ns, 100);
  CHECK_EQ(an.threads[t1].busy_ns, 200);
  check_zone(&an.threads[t1].zones[0], 50, 250, 180, a, 0, -1, 0);
  check_zone(&an.threads[t1].zones[1], 60, 80, 20, b, 1, 0, 0);
  const pp_zone_stats *za = pp_profile_zone(&an, a);
  CHECK(za != NULL);
  CHECK_EQ(za->count, 2);
  CHECK_EQ(za->total_ns, 300);
  CHECK_EQ(za->self_ns, 280);
  CHECK_EQ(za->min_ns, 100);
  CHECK_EQ(za->max_ns, 200);
  CHECK_NEAR(za->mean_ns, 150.0, 1e-9);
  CHECK_NEAR(za->std_ns, 50.0, 1e-9);
  pp_analysis_free(&an);
  tb_free(&t);
}

PP_TEST(analyze_unmatched_end) {
  pp_trace t = {0};
  pp_analysis an = {0};
  uint32_t a = tb_loc(&t, "A", PP_KIND_ZONE);
  uint32_t b = tb_loc(&t, "B", PP_KIND_ZONE);
  size_t th = tb_thread(&t, 1, "main");
  tb_end(&t, th, 5, b); /* its begin was lost (flight ring start) */
  tb_begin(&t, th, 10, a);
  tb_end(&t, th, 15, b); /* matches nothing open */
  tb_end(&t, th, 20, a);
  CHECK_EQ(pp_analyze(&t, &an), 0);
  CHECK_EQ(an.prof.unmatched_ends, 2);
  CHECK_EQ(an.prof.unclosed, 0);
  CHECK_EQ(an.threads[0].nzones, 1);
  check_zone(&an.threads[0].zones[0], 10, 20, 10, a, 0, -1, 0);
  CHECK_EQ(an.prof.nzones, 1);
  CHECK(pp_profile_zone(&an, b) == NULL);
  pp_analysis_free(&an);
  tb_free(&t);
}

PP_TEST(analyze_unclosed_at_end) {
  pp_trace t = {0};
  pp_analysis an = {0};
  uint32_t a = tb_loc(&t, "A", PP_KIND_ZONE);
  uint32_t b = tb_loc(&t, "B", PP_KIND_ZONE);
  uint32_t f = tb_loc(&t, "F", PP_KIND_FRAME);
  size_t t0 = tb_thread(&t, 1, "main");
  size_t t1 = tb_thread(&t, 2, "other");
  tb_begin(&t, t0, 0, a);
  tb_begin(&t, t0, 10, b);
  tb_end(&t, t0, 20, b);
  tb_begin(&t, t0, 30, b); /* neither B nor A ever ends */
  tb_frame(&t, t1, 500, f); /* the trace ends at 500 */
  CHECK_EQ(pp_analyze(&t, &an), 0);
  CHECK_EQ(an.prof.t1, 500);
  CHECK_EQ(an.prof.unclosed, 2);
  const pp_thread_figures *thf = &an.threads[t0];
  CHECK_EQ(thf->nzones, 3);
  /* Zones that lost their end are shown but have no measured duration:
   * only the measured B counts, in A's child time and in the busy time. */
  check_zone(&thf->zones[0], 0, 500, 490, a, 0, -1, 1);
  check_zone(&thf->zones[1], 10, 20, 10, b, 1, 0, 0);
  check_zone(&thf->zones[2], 30, 500, 470, b, 1, 0, 1);
  CHECK_EQ(thf->busy_ns, 10);
  CHECK(pp_profile_zone(&an, a) == NULL);
  const pp_zone_stats *zb = pp_profile_zone(&an, b);
  CHECK(zb != NULL);
  CHECK_EQ(zb->count, 1);
  CHECK_EQ(zb->max_ns, 10);
  pp_analysis_free(&an);
  tb_free(&t);
}

PP_TEST(analyze_mismatched_end_closes_intermediates) {
  pp_trace t = {0};
  pp_analysis an = {0};
  uint32_t a = tb_loc(&t, "A", PP_KIND_ZONE);
  uint32_t b = tb_loc(&t, "B", PP_KIND_ZONE);
  uint32_t c = tb_loc(&t, "C", PP_KIND_ZONE);
  size_t th = tb_thread(&t, 1, "main");
  tb_begin(&t, th, 0, a);
  tb_begin(&t, th, 10, b);
  tb_begin(&t, th, 20, c);
  tb_end(&t, th, 50, a); /* the ends of C and B were lost */
  tb_end(&t, th, 60, b); /* late: nothing open matches any more */
  tb_begin(&t, th, 70, c);
  tb_end(&t, th, 80, c);
  CHECK_EQ(pp_analyze(&t, &an), 0);
  const pp_thread_figures *zf = &an.threads[0];
  CHECK_EQ(zf->nzones, 4);
  /* B and C have no measured duration: A's self time is all of it. */
  check_zone(&zf->zones[0], 0, 50, 50, a, 0, -1, 0);
  check_zone(&zf->zones[1], 10, 50, 40, b, 1, 0, 1);
  check_zone(&zf->zones[2], 20, 50, 30, c, 2, 1, 1);
  check_zone(&zf->zones[3], 70, 80, 10, c, 0, -1, 0);
  CHECK_EQ(an.prof.unclosed, 2);
  CHECK_EQ(an.prof.unmatched_ends, 1);
  CHECK_EQ(zf->busy_ns, 60);
  const pp_zone_stats *zc = pp_profile_zone(&an, c);
  CHECK(zc != NULL);
  CHECK_EQ(zc->count, 1); /* only the measured one */
  CHECK_EQ(zc->total_ns, 10);
  CHECK(pp_profile_zone(&an, b) == NULL);
  pp_analysis_free(&an);
  tb_free(&t);
}

PP_TEST(analyze_clock_glitch_and_bad_loc) {
  pp_trace t = {0};
  pp_analysis an = {0};
  uint32_t a = tb_loc(&t, "A", PP_KIND_ZONE);
  uint32_t b = tb_loc(&t, "B", PP_KIND_ZONE);
  size_t th = tb_thread(&t, 1, "main");
  tb_begin(&t, th, 100, a);
  tb_begin(&t, th, 90, b); /* clock stepped back: raised to 100 */
  tb_end(&t, th, 95, b);
  tb_end(&t, th, 200, a);
  tb_begin(&t, th, 210, 99); /* loc out of range: ignored */
  tb_end(&t, th, 220, 99);
  CHECK_EQ(pp_analyze(&t, &an), 0);
  const pp_thread_figures *zf = &an.threads[0];
  CHECK_EQ(zf->nzones, 2);
  check_zone(&zf->zones[0], 100, 200, 100, a, 0, -1, 0);
  check_zone(&zf->zones[1], 100, 100, 0, b, 1, 0, 0);
  CHECK_EQ(an.prof.t0, 90);
  CHECK_EQ(an.prof.t1, 220);
  CHECK_EQ(an.prof.events, 6);
  CHECK_EQ(an.prof.unmatched_ends, 0);
  pp_analysis_free(&an);
  tb_free(&t);
}

/* ---- frames and counters ------------------------------------------------- */

PP_TEST(analyze_frames) {
  pp_trace t = {0};
  pp_analysis a = {0};
  uint32_t disp = tb_loc(&t, "disp", PP_KIND_FRAME);
  uint32_t cam = tb_loc(&t, "cam", PP_KIND_FRAME);
  size_t t0 = tb_thread(&t, 1, "a");
  size_t t1 = tb_thread(&t, 2, "b");
  /* cam marks at 0, 10, 30, 40 ms, alternating threads. */
  tb_frame(&t, t0, 0, cam);
  tb_frame(&t, t0, 30 * MS, cam);
  tb_frame(&t, t1, 10 * MS, cam);
  tb_frame(&t, t1, 40 * MS, cam);
  tb_frame(&t, t1, 5 * MS, disp);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK_EQ(a.prof.nframes, 2);
  const pp_frame_stats *f = &a.prof.frames[0]; /* sorted by name */
  CHECK_EQ(f->loc, cam);
  CHECK_EQ(f->frames, 4);
  CHECK_NEAR(f->fps, 75.0, 1e-9);              /* 3 gaps in 40 ms */
  CHECK_NEAR(f->mean_ns, 40.0 * MS / 3, 1e-3); /* 10, 20, 10 ms */
  CHECK_NEAR(f->std_ns, sqrt(200.0 / 9) * MS, 1e-3);
  CHECK_NEAR(f->jitter_ns, 10.0 * MS, 1e-6);   /* |20-10|, |10-20| */
  CHECK_EQ(f->hist.count, 3);
  CHECK_EQ(f->hist.min, 10 * MS);
  CHECK_EQ(f->hist.max, 20 * MS);
  const pp_frame_stats *g = &a.prof.frames[1];
  CHECK_EQ(g->loc, disp);
  CHECK_EQ(g->frames, 1);
  CHECK_NEAR(g->fps, 0.0, 0);
  CHECK_NEAR(g->jitter_ns, 0.0, 0);
  CHECK_EQ(g->hist.count, 0);
  CHECK_EQ(a.prof.nzones, 0);
  pp_analysis_free(&a);
  tb_free(&t);
}

PP_TEST(analyze_counters) {
  pp_trace t = {0};
  pp_analysis a = {0};
  uint32_t queue = tb_loc(&t, "queue", PP_KIND_COUNTER);
  uint32_t temp = tb_loc(&t, "temp", PP_KIND_COUNTER);
  uint32_t acc = tb_loc(&t, "acc", PP_KIND_COUNTER);
  size_t t0 = tb_thread(&t, 1, "a");
  size_t t1 = tb_thread(&t, 2, "b");
  /* queue: merged in time order SET 5, ADD -2, ADD 3, ADD 4. */
  tb_counter(&t, t0, 0, queue, PPT_EV_COUNTER_SET, 5, 0);
  tb_counter(&t, t0, 20, queue, PPT_EV_COUNTER_ADD, 3, 0);
  tb_counter(&t, t1, 10, queue, PPT_EV_COUNTER_ADD, -2, 0);
  tb_counter(&t, t1, 30, queue, PPT_EV_COUNTER_ADD, 4, 0);
  /* temp: SETF 1.5, ADD 2 -> 3.5, SET 7. */
  tb_counter(&t, t0, 0, temp, PPT_EV_COUNTER_SETF, 0, 1.5);
  tb_counter(&t, t0, 1, temp, PPT_EV_COUNTER_ADD, 2, 0);
  tb_counter(&t, t0, 2, temp, PPT_EV_COUNTER_SET, 7, 0);
  /* acc: ADDs start from 0. */
  tb_counter(&t, t1, 0, acc, PPT_EV_COUNTER_ADD, 1, 0);
  tb_counter(&t, t1, 5, acc, PPT_EV_COUNTER_ADD, 1, 0);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK_EQ(a.prof.ncounters, 3);
  const pp_counter_stats *c = a.prof.counters;
  CHECK_EQ(c[0].loc, acc);
  CHECK_EQ(c[1].loc, queue);
  CHECK_EQ(c[2].loc, temp);

  CHECK_EQ(c[0].samples, 2);
  CHECK_NEAR(c[0].min, 1, 0);
  CHECK_NEAR(c[0].max, 2, 0);
  CHECK_NEAR(c[0].last, 2, 0);
  CHECK_EQ(c[0].is_float, 0);

  CHECK_EQ(c[1].samples, 4);
  CHECK_NEAR(c[1].min, 3, 0);
  CHECK_NEAR(c[1].max, 10, 0);
  CHECK_NEAR(c[1].mean, 6, 1e-12); /* (5 + 3 + 6 + 10) / 4 */
  CHECK_NEAR(c[1].last, 10, 0);
  CHECK_EQ(c[1].is_float, 0);

  CHECK_EQ(c[2].samples, 3);
  CHECK_NEAR(c[2].min, 1.5, 0);
  CHECK_NEAR(c[2].max, 7, 0);
  CHECK_NEAR(c[2].mean, 4, 1e-12); /* (1.5 + 3.5 + 7) / 3 */
  CHECK_NEAR(c[2].last, 7, 0);
  CHECK_EQ(c[2].is_float, 1);
  pp_analysis_free(&a);
  tb_free(&t);
}

PP_TEST(analyze_counters_and_frames_merge_by_name) {
  pp_trace t = {0};
  pp_analysis a = {0};
  uint32_t push = tb_loc(&t, "queue", PP_KIND_COUNTER);
  uint32_t other = tb_loc(&t, "other", PP_KIND_COUNTER);
  uint32_t pop = tb_loc(&t, "queue", PP_KIND_COUNTER);
  uint32_t f1 = tb_loc(&t, "cam", PP_KIND_FRAME);
  uint32_t f2 = tb_loc(&t, "cam", PP_KIND_FRAME);
  size_t t0 = tb_thread(&t, 1, "producer");
  size_t t1 = tb_thread(&t, 2, "consumer");
  tb_counter(&t, t0, 10, push, PPT_EV_COUNTER_ADD, 1, 0);
  tb_counter(&t, t0, 20, push, PPT_EV_COUNTER_ADD, 1, 0);
  tb_counter(&t, t1, 15, pop, PPT_EV_COUNTER_ADD, -1, 0);
  tb_counter(&t, t1, 30, pop, PPT_EV_COUNTER_ADD, -1, 0);
  tb_counter(&t, t1, 30, other, PPT_EV_COUNTER_SET, 9, 0);
  tb_frame(&t, t0, 0, f1);
  tb_frame(&t, t1, 10, f2);
  tb_frame(&t, t0, 20, f1);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK_EQ(a.prof.ncounters, 2);
  const pp_counter_stats *q = &a.prof.counters[1];
  CHECK_EQ(q->loc, push); /* the lowest loc of the name */
  CHECK_EQ(q->samples, 4);  /* 1, 0, 1, 0 */
  CHECK_NEAR(q->min, 0, 0);
  CHECK_NEAR(q->max, 1, 0);
  CHECK_NEAR(q->mean, 0.5, 1e-12);
  CHECK_NEAR(q->last, 0, 0);
  CHECK_EQ(a.prof.counters[0].loc, other);
  CHECK_EQ(a.prof.nframes, 1);
  CHECK_EQ(a.prof.frames[0].loc, f1);
  CHECK_EQ(a.prof.frames[0].frames, 3);
  CHECK_NEAR(a.prof.frames[0].mean_ns, 10, 1e-9);
  pp_analysis_free(&a);
  tb_free(&t);
}

/* ---- profile ordering and lookups ---------------------------------------- */

PP_TEST(analyze_profile_sorted_by_total) {
  pp_trace t = {0};
  pp_analysis a = {0};
  uint32_t small = tb_loc(&t, "small", PP_KIND_ZONE);
  uint32_t zb = tb_loc(&t, "tie_b", PP_KIND_ZONE);
  uint32_t big = tb_loc(&t, "big", PP_KIND_ZONE);
  uint32_t za = tb_loc(&t, "tie_a", PP_KIND_ZONE);
  size_t th = tb_thread(&t, 1, "main");
  int64_t ts = 0;
  const struct {
    uint32_t loc;
    int64_t d;
  } seq[] = {{small, 5}, {zb, 30}, {big, 100}, {za, 10}, {za, 20}};
  for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
    tb_begin(&t, th, ts, seq[i].loc);
    ts += seq[i].d;
    tb_end(&t, th, ts, seq[i].loc);
  }
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK_EQ(a.prof.nzones, 4);
  CHECK_EQ(a.prof.zones[0].loc, big);
  CHECK_EQ(a.prof.zones[1].loc, za); /* 30 each: by name */
  CHECK_EQ(a.prof.zones[2].loc, zb);
  CHECK_EQ(a.prof.zones[3].loc, small);
  for (size_t i = 0; i < a.prof.nzones; i++)
    CHECK(pp_profile_zone(&a, a.prof.zones[i].loc) == &a.prof.zones[i]);
  CHECK_EQ(pp_profile_zone(&a, za)->count, 2);
  CHECK(pp_profile_zone(&a, 12345) == NULL);
  CHECK_EQ(a.threads[0].busy_ns, 165);
  pp_analysis_free(&a);
  tb_free(&t);
}

PP_TEST(analyze_zone_enclosing) {
  pp_trace t = {0};
  pp_analysis an = {0};
  uint32_t a, b, c;
  build_nested(&t, &a, &b, &c);
  CHECK_EQ(pp_zone_enclosing(&an, 0, 25), -1); /* not analysed: no zones */
  CHECK_EQ(pp_analyze(&t, &an), 0);
  CHECK_EQ(pp_zone_enclosing(&an, 0, -1), -1);
  CHECK_EQ(pp_zone_enclosing(&an, 0, 0), 0);
  CHECK_EQ(pp_zone_enclosing(&an, 0, 5), 0);
  CHECK_EQ(pp_zone_enclosing(&an, 0, 10), 1);
  CHECK_EQ(pp_zone_enclosing(&an, 0, 25), 2);
  CHECK_EQ(pp_zone_enclosing(&an, 0, 30), 2);
  CHECK_EQ(pp_zone_enclosing(&an, 0, 31), 1);
  CHECK_EQ(pp_zone_enclosing(&an, 0, 60), 1);
  CHECK_EQ(pp_zone_enclosing(&an, 0, 65), 0);
  CHECK_EQ(pp_zone_enclosing(&an, 0, 75), 3);
  CHECK_EQ(pp_zone_enclosing(&an, 0, 95), 0);
  CHECK_EQ(pp_zone_enclosing(&an, 0, 100), 0);
  CHECK_EQ(pp_zone_enclosing(&an, 0, 101), -1);
  pp_analysis_free(&an);
  tb_free(&t);
}

PP_TEST(analyze_meta_and_names) {
  pp_trace t = {0};
  tb_meta(&t, "mode", "stats");
  tb_meta(&t, "mode", "trace");
  uint32_t a = tb_loc(&t, "decode", PP_KIND_ZONE);
  uint32_t e = tb_loc(&t, "", PP_KIND_ZONE);
  CHECK_STR(pp_trace_meta(&t, "mode"), "trace");
  CHECK(pp_trace_meta(&t, "pid") == NULL);
  CHECK_STR(pp_trace_loc_name(&t, a), "decode");
  CHECK_STR(pp_trace_loc_name(&t, e), "(unnamed)");
  CHECK_STR(pp_trace_loc_name(&t, 77), "(unknown)");
  tb_free(&t);
}

PP_TEST(analyze_idempotent) {
  pp_trace t = {0};
  pp_analysis an = {0};
  uint32_t a, b, c;
  build_nested(&t, &a, &b, &c);
  uint32_t q = tb_loc(&t, "q", PP_KIND_COUNTER);
  uint32_t f = tb_loc(&t, "f", PP_KIND_FRAME);
  tb_counter(&t, 0, 5, q, PPT_EV_COUNTER_ADD, 2, 0);
  tb_frame(&t, 0, 50, f);
  tb_frame(&t, 0, 60, f);
  tb_end(&t, 0, 110, b); /* unmatched */
  tb_meta(&t, "event_cost_ns", "12.5");
  for (int round = 0; round < 3; round++) {
    CHECK_EQ(pp_analyze(&t, &an), 0);
    CHECK_EQ(an.threads[0].nzones, 4);
    CHECK_EQ(an.threads[0].busy_ns, 100);
    CHECK_EQ(an.prof.nzones, 3);
    CHECK_EQ(pp_profile_zone(&an, b)->count, 2);
    CHECK_EQ(pp_profile_zone(&an, b)->hist.count, 2);
    CHECK_EQ(an.prof.ncounters, 1);
    CHECK_NEAR(an.prof.counters[0].last, 2, 0);
    CHECK_EQ(an.prof.nframes, 1);
    CHECK_EQ(an.prof.frames[0].hist.count, 1);
    CHECK_EQ(an.prof.events, 12);
    CHECK_EQ(an.prof.unmatched_ends, 1);
    CHECK_NEAR(an.prof.event_cost_ns, 12.5, 0);
  }
  pp_analysis_free(&an);
  CHECK_EQ(an.analyzed, 0);
  CHECK_EQ(an.prof.nzones, 0);
  CHECK(an.threads == NULL && an.nthreads == 0);
  pp_analysis_free(&an); /* twice is fine */
  tb_free(&t);
}

/* ---- text report --------------------------------------------------------- */

PP_TEST(report_format_ns) {
  char b[32];
  CHECK_STR(pp_format_ns(b, sizeof b, 0), "0 ns");
  CHECK_STR(pp_format_ns(b, sizeof b, 5), "5 ns");
  CHECK_STR(pp_format_ns(b, sizeof b, 850), "850 ns");
  CHECK_STR(pp_format_ns(b, sizeof b, 12.5), "12.5 ns");
  CHECK_STR(pp_format_ns(b, sizeof b, 1000), "1.00 us");
  CHECK_STR(pp_format_ns(b, sizeof b, 12345), "12.3 us");
  CHECK_STR(pp_format_ns(b, sizeof b, 999.7e3), "1.00 ms");
  CHECK_STR(pp_format_ns(b, sizeof b, 12.3e6), "12.3 ms");
  CHECK_STR(pp_format_ns(b, sizeof b, 612e6), "612 ms");
  CHECK_STR(pp_format_ns(b, sizeof b, 1.5e9), "1.50 s");
  CHECK_STR(pp_format_ns(b, sizeof b, 3600e9), "3600 s");
  CHECK_STR(pp_format_ns(b, sizeof b, -2500), "-2.50 us");
  CHECK_STR(pp_format_ns(b, sizeof b, NAN), "-");
  CHECK_STR(pp_format_ns(b, 4, 612e6), "612");
}

/* main: infer [0, 1 s] > detect [100, 712 ms]; thread 2: preprocess
 * [0, 300 ms]; a camera at 25 fps; a queue counter. */
static void build_report_trace(pp_trace *t) {
  tb_meta(t, "process_name", "demo");
  tb_meta(t, "pid", "4242");
  tb_meta(t, "mode", "trace");
  tb_meta(t, "event_cost_ns", "20");
  uint32_t infer = tb_loc(t, "infer", PP_KIND_ZONE);
  uint32_t detect = tb_loc(t, "detect", PP_KIND_ZONE);
  uint32_t pre = tb_loc(t, "preprocess", PP_KIND_ZONE);
  uint32_t cam = tb_loc(t, "camera0", PP_KIND_FRAME);
  uint32_t q = tb_loc(t, "queue_depth", PP_KIND_COUNTER);
  size_t m = tb_thread(t, 1, "main");
  size_t w = tb_thread(t, 2, "");
  tb_begin(t, m, 0, infer);
  tb_begin(t, m, 100 * MS, detect);
  tb_end(t, m, 712 * MS, detect);
  tb_end(t, m, 1000 * MS, infer);
  tb_begin(t, w, 0, pre);
  tb_end(t, w, 300 * MS, pre);
  for (int i = 0; i < 5; i++)
    tb_frame(t, w, (int64_t)i * 40 * MS, cam);
  tb_counter(t, w, 1, q, PPT_EV_COUNTER_SET, 3, 0);
  tb_counter(t, w, 2, q, PPT_EV_COUNTER_ADD, 5, 0);
}

PP_TEST(report_rows_and_numbers) {
  pp_trace t = {0};
  pp_analysis a = {0};
  build_report_trace(&t);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = render(&a, NULL);
  CHECK_CONTAINS(s, "process:        demo (pid 4242)\n");
  CHECK_CONTAINS(s, "mode:           trace\n");
  CHECK_CONTAINS(s, "wall time:      1.00 s (first to last recorded event: "
                    "the zones' %wall window)\n");
  CHECK_CONTAINS(s, "threads:        2\n");
  CHECK_CONTAINS(s, "events:         13\n");
  CHECK_CONTAINS(s, "dropped events: 0\n");
  CHECK(strstr(s, "warning") == NULL);
  /* Zone table: header, then rows by total time. */
  CHECK_CONTAINS(s, "zone        count   total    self    mean     p50     p90"
                    "     p99   p99.9     max  %wall\n");
  CHECK_CONTAINS(s, "infer           1  1.00 s  388 ms  1.00 s  1.00 s");
  CHECK_CONTAINS(s, "detect          1  612 ms  612 ms  612 ms  612 ms  612 ms"
                    "  612 ms  612 ms  612 ms  61.2%\n");
  CHECK_CONTAINS(s, "preprocess      1  300 ms  300 ms");
  CHECK(strstr(s, "infer ") < strstr(s, "detect "));
  CHECK(strstr(s, "detect ") < strstr(s, "preprocess "));
  /* Bottlenecks: self 612 + 388 + 300 = 1300 ms of zone time. */
  CHECK_CONTAINS(s, "top bottlenecks by self time\n");
  CHECK_CONTAINS(s, " 1. detect      612 ms self (47.1% of zone time)\n");
  CHECK_CONTAINS(s, " 2. infer       388 ms self (29.8% of zone time)\n");
  CHECK_CONTAINS(s, " 3. preprocess  300 ms self (23.1% of zone time)\n");
  /* Threads. */
  CHECK_CONTAINS(s, "thread    tid    busy  %wall  zones  events  dropped\n"
                    "main        1  1.00 s   100%      2       4        0\n"
                    "thread 2    2  300 ms  30.0%      1       9        0\n");
  /* Frames: 4 gaps of 40 ms in 160 ms. */
  CHECK_CONTAINS(s, "\ncamera0       5  25.0  40.0 ms / 40.0 ms / 40.0 ms / "
                    "40.0 ms    0 ns\n  frame time mean / std dev: 40.0 ms / "
                    "0 ns\n");
  /* Counters: 3, then 8. */
  CHECK_CONTAINS(s, "\ncounters\ncounter      samples  min  max  mean  last\n"
                    "queue_depth        2    3    8  5.50     8\n");
  /* Overhead: 13 events x 20 ns = 260 ns of 1.3 s busy. */
  CHECK_CONTAINS(s, "\nprofiler overhead (estimated)\n"
                    "  recording (estimated):        260 ns (13 events x "
                    "20 ns)\n  recording / busy thread time: 0.00%\n");
  free(s);

  pp_report_opts o = {0, 1};
  s = render(&a, &o);
  CHECK_CONTAINS(s, " 1. detect  612 ms self (47.1% of zone time)\n");
  CHECK(strstr(s, " 2. ") == NULL);
  free(s);
  o.top_n = -1;
  s = render(&a, &o);
  CHECK(strstr(s, "top bottlenecks") == NULL);
  free(s);
  pp_analysis_free(&a);
  tb_free(&t);
}

/* Measured costs (META writer_cpu_ns, sampler_cpu_ns, process_cpu_ns) turn
 * the overhead line into measured threads + estimated recording, as a
 * share of the process's CPU time. */
PP_TEST(report_measured_overhead) {
  pp_trace t = {0};
  pp_analysis a = {0};
  build_report_trace(&t);
  tb_meta(&t, "writer_cpu_ns", "3000000");
  tb_meta(&t, "sampler_cpu_ns", "1000000");
  tb_meta(&t, "process_cpu_ns", "400026000");
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK_EQ(a.prof.writer_cpu_ns, 3000000);
  CHECK_EQ(a.prof.sampler_cpu_ns, 1000000);
  CHECK_EQ(a.prof.process_cpu_ns, 400026000);
  char *s = render(&a, NULL);
  /* 13 events x 20 ns + 3 ms + 1 ms = 4000260 ns of 400.026 ms. */
  CHECK_CONTAINS(s, "\nprofiler overhead\n"
                    "  total:                        4.00 ms (writer and "
                    "sampler threads measured, recording estimated)\n"
                    "  share of the process's CPU:   1.00% (of 400 ms)\n"
                    "  writer thread (measured):     3.00 ms\n"
                    "  sampler thread (measured):    1.00 ms\n"
                    "  recording (estimated):        260 ns (13 events x "
                    "20 ns)\n");
  free(s);
  /* Without a sampler, and with a malformed process figure. */
  tb_meta(&t, "sampler_cpu_ns", "");
  tb_meta(&t, "process_cpu_ns", "12x");
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK_EQ(a.prof.sampler_cpu_ns, -1);
  CHECK_EQ(a.prof.process_cpu_ns, -1);
  s = render(&a, NULL);
  CHECK_CONTAINS(s, "\nprofiler overhead\n"
                    "  total:                        3.00 ms (writer thread "
                    "measured, recording estimated)\n"
                    "  share of the process's CPU:   unavailable: the "
                    "process's CPU time was not recorded\n"
                    "  writer thread (measured):     3.00 ms\n"
                    "  recording (estimated):        260 ns (13 events x "
                    "20 ns)\n");
  CHECK(strstr(s, "sampler thread") == NULL);
  free(s);
  /* A malformed writer figure: back to the estimate alone. */
  tb_meta(&t, "writer_cpu_ns", "-5");
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK_EQ(a.prof.writer_cpu_ns, -1);
  s = render(&a, NULL);
  CHECK_CONTAINS(s, "\nprofiler overhead (estimated)\n"
                    "  recording (estimated):        260 ns (13 events x ");
  free(s);
  pp_analysis_free(&a);
  tb_free(&t);
}

/* A drop in many threads: the warning names those that fit, then how
 * many more there are, never a list cut mid-entry (64 threads were cut at
 * 400 bytes unsaid). */
PP_TEST(report_dropped_in_many_threads_says_how_many_more) {
  pp_trace t = {0};
  pp_analysis a = {0};
  build_report_trace(&t);
  for (uint64_t i = 0; i < 60; i++) {
    size_t k = tb_thread(&t, 1000 + i, "worker");
    t.threads[k].dropped = 100000 + i;
  }
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = render(&a, NULL);
  const char *w = strstr(s, "events were dropped");
  CHECK(w != NULL);
  const char *end = strchr(w, '\n');
  CHECK(end != NULL);
  CHECK_CONTAINS(s, "worker (tid 1000) 100000, worker (tid 1001) 100001");
  /* the last entry is whole, then the count of the rest */
  const char *more = strstr(w, " more threads (the threads table has each)\n");
  CHECK(more != NULL && more < end + 1);
  const char *and = strstr(w, ", and ");
  CHECK(and != NULL && and < more);
  unsigned long n = strtoul(and + 6, NULL, 10);
  size_t shown = 0;
  for (const char *p = w; p < and; p++)
    shown += strncmp(p, "worker (tid ", 12) == 0;
  CHECK_EQ(shown + n, 60);
  CHECK_GT(shown, 3);
  free(s);
  pp_analysis_free(&a);
  tb_free(&t);
}

PP_TEST(report_dropped_and_damage) {
  pp_trace t = {0};
  pp_analysis a = {0};
  build_report_trace(&t);
  t.threads[0].dropped = 7;
  t.threads[1].dropped = 2;
  t.diag.file_bytes = 4096;
  t.diag.chunks_bad = 2;
  t.diag.bytes_skipped = 48;
  t.diag.truncated = 1;
  t.diag.clean_end = 0;
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = render(&a, NULL);
  CHECK_CONTAINS(s, "dropped events: 9\n");
  CHECK_CONTAINS(s, "warning: 9 events were dropped");
  CHECK_CONTAINS(s, ": main (tid 1) 7, thread (tid 2) 2\n");
  CHECK_CONTAINS(s, "2 bad chunks, 48 bytes skipped");
  CHECK_CONTAINS(s, "trace truncated inside a chunk");
  CHECK_CONTAINS(s, "trace ended without END chunk (process killed?)\n");
  free(s);

  /* the warnings are the analysis's: analysed again */
  t.diag.clean_end = 1;
  CHECK_EQ(pp_analyze(&t, &a), 0);
  s = render(&a, NULL);
  CHECK(strstr(s, "without END chunk") == NULL);
  free(s);
  pp_analysis_free(&a);
  tb_free(&t);
}

PP_TEST(report_empty_trace) {
  pp_trace t = {0};
  pp_analysis a = {0};
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = render(&a, NULL);
  CHECK_CONTAINS(s, "process:        (unknown)\n");
  CHECK_CONTAINS(s, "wall time:      0 ns (first to last recorded event: "
                    "the zones' %wall window)\n");
  CHECK_CONTAINS(s, "threads:        0\n");
  CHECK_CONTAINS(s, "events:         0\n");
  CHECK_CONTAINS(s, "dropped events: 0\n");
  CHECK_CONTAINS(s, "no zones recorded\n");
  CHECK_CONTAINS(s, "no threads recorded\n");
  CHECK_CONTAINS(s, "\nprofiler overhead\nunavailable: event cost not "
                    "recorded\n");
  CHECK(strstr(s, "bottlenecks") == NULL);
  CHECK(strstr(s, "nan") == NULL);
  CHECK(strstr(s, "inf") == NULL);
  free(s);

  /* A thread with counters but no zones. */
  uint32_t q = tb_loc(&t, "q", PP_KIND_COUNTER);
  size_t th = tb_thread(&t, 9, "");
  tb_counter(&t, th, 100, q, PPT_EV_COUNTER_SET, 1, 0);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  s = render(&a, NULL);
  CHECK_CONTAINS(s, "no zones recorded\n");
  /* no %wall without a wall time: the column says nothing, left out */
  CHECK_CONTAINS(s, "thread    tid  busy  zones  events  dropped\n"
                    "thread 9    9  0 ns      0       1        0\n");
  CHECK(strstr(s, "nan") == NULL);
  free(s);

  /* Not analysed: refused. */
  pp_analysis_free(&a);
  FILE *f = fopen("/dev/null", "w");
  CHECK(f != NULL);
  CHECK_EQ(pp_report_text(f, &a, NULL), -1);
  fclose(f);
  pp_analysis_free(&a);
  tb_free(&t);
}

PP_TEST(report_long_and_odd_names) {
  pp_trace t = {0};
  pp_analysis a = {0};
  char longname[64];
  memset(longname, 'x', 60);
  longname[60] = 0;
  uint32_t l = tb_loc(&t, longname, PP_KIND_ZONE);
  uint32_t odd = tb_loc(&t, "bad\x1b[2Jname\xff", PP_KIND_ZONE);
  uint32_t utf = tb_loc(&t, "d\xc3\xa9" "codage", PP_KIND_ZONE);
  size_t th = tb_thread(&t, 1, "main");
  tb_begin(&t, th, 0, l);
  tb_end(&t, th, 10, l);
  tb_begin(&t, th, 10, odd);
  tb_end(&t, th, 15, odd);
  tb_begin(&t, th, 15, utf);
  tb_end(&t, th, 17, utf);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = render(&a, NULL);
  char cut[64];
  memset(cut, 'x', 37);
  memcpy(cut + 37, "...", 4);
  CHECK_CONTAINS(s, cut);
  CHECK(strstr(s, longname) == NULL);
  CHECK_CONTAINS(s, "bad?[2Jname?");
  CHECK(strchr(s, '\x1b') == NULL);
  CHECK_CONTAINS(s, "d\xc3\xa9" "codage");
  free(s);

  pp_report_opts o = {100, 0}; /* a narrow terminal: names cut shorter */
  s = render(&a, &o);
  memset(cut, 'x', 9);
  memcpy(cut + 9, "... ", 5);
  CHECK_CONTAINS(s, cut);
  free(s);
  pp_analysis_free(&a);
  tb_free(&t);
}

/* The one reader of META numbers (model/model.h): the whole text one
 * finite number, or nothing. */
PP_TEST(meta_number_is_the_whole_text_one_finite_number) {
  static const struct {
    const char *s;
    int ok;
    double v;
  } c[] = {{"12", 1, 12},        {"-3.5", 1, -3.5}, {"1e+20", 1, 1e20},
           {".5", 1, 0.5},       {"", 0, 0},        {" 1", 0, 0},
           {"1 ", 0, 0},         {"1x", 0, 0},      {"nan", 0, 0},
           {"inf", 0, 0},        {"1e999", 0, 0},   {"0x10", 0, 0},
           {"+1", 0, 0},         {"-", 0, 0}};
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    double v = -1;
    int ok = pp_meta_number(c[i].s, &v);
    if (ok != c[i].ok || (ok && v != c[i].v))
      PP_FAIL("\"%s\": %d %g, expected %d %g", c[i].s, ok, v, c[i].ok,
              c[i].v);
  }
  CHECK_EQ(pp_meta_number(NULL, NULL), 0);
}
