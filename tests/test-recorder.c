/* SPDX-License-Identifier: MIT */
/*
 * End-to-end tests of the recorder and the session (src/core/) through the
 * public API: every test records in-process (or in a forked child), then
 * reads the file back with pp_trace_read_file() + pp_analyze() and checks
 * what it holds. Covered: the trace-mode round trip of every event kind,
 * many threads without loss, drop accounting, stats mode against trace
 * mode, flight dumps, run-time enable/disable, pp_init errors and status
 * strings, the environment, fork, threads that exit early, programs that
 * never call pp_shutdown, and kill -9 / SIGINT / SIGTERM during recording.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "analyze/analyze.h"
#include "core/recorder.h"
#include "export/export.h"
#include "format/pptrace.h"
#include "model/reader.h"
#include "pipeprof.h"
#include "ring/arena.h"
#include "runner.h"
#include "sink/sink.h"
#include "trace_builder.h"

/* ---- helpers --------------------------------------------------------------
 */

static void tpath(char *buf, size_t len, const char *name) {
  snprintf(buf, len, "%s/%s", pp_test_tmpdir(), name);
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static void start_session(pp_mode mode, const char *path, uint32_t kib) {
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.mode = mode;
  cfg.out_path = path;
  cfg.buffer_kib = kib;
  int rc = pp_init(&cfg);
  if (rc != PP_OK)
    PP_FAIL("pp_init: %s (%s)", pp_err_name(rc), pp_last_error());
  CHECK(pp_is_running());
}

static void load_trace(const char *path, pp_trace *t, pp_analysis *a) {
  char err[512] = "";
  if (pp_trace_read_file(path, t, err, sizeof err) != 0)
    PP_FAIL("cannot read %s: %s", path, err);
  CHECK_EQ(pp_analyze(t, a), 0);
}

/* The file was finished properly and nothing in it is damaged. */
static void check_clean(const pp_trace *t) {
  CHECK_EQ(t->diag.clean_end, 1);
  CHECK_EQ(t->diag.chunks_bad, 0);
  CHECK_EQ(t->diag.bytes_skipped, 0);
  CHECK_EQ(t->diag.truncated, 0);
  CHECK_EQ(t->diag.events_bad, 0);
}

static int loc_is(const pp_trace *t, uint32_t loc, const char *name) {
  return loc < t->nlocs && t->locs[loc].name &&
         strcmp(t->locs[loc].name, name) == 0;
}

static const pp_thread *thread_named(const pp_trace *t, const char *name) {
  for (size_t i = 0; i < t->nthreads; i++)
    if (t->threads[i].name && strcmp(t->threads[i].name, name) == 0)
      return &t->threads[i];
  return NULL;
}

/* Zone instances called name on th (every thread when th is NULL); closed
 * ones only when closed_only. */
static uint64_t zones_named(const pp_analysis *a, const pp_thread *th,
                            const char *name, int closed_only) {
  const pp_trace *t = a->trace;
  uint64_t n = 0;
  for (size_t i = 0; i < t->nthreads; i++) {
    const pp_thread_figures *x = &a->threads[i];
    if (th && &t->threads[i] != th)
      continue;
    for (size_t j = 0; j < x->nzones; j++)
      if (loc_is(t, x->zones[j].loc, name) &&
          (!closed_only || !x->zones[j].unclosed))
        n++;
  }
  return n;
}

/* The busy time of the thread called name, -1 when there is none. */
static int64_t thread_busy(const pp_analysis *a, const char *name) {
  const pp_trace *t = a->trace;
  for (size_t i = 0; i < t->nthreads; i++)
    if (t->threads[i].name && strcmp(t->threads[i].name, name) == 0)
      return a->threads[i].busy_ns;
  return -1;
}

/* Events of a type (0: any) called name on th (NULL: every thread). */
static uint64_t events_named(const pp_trace *t, const pp_thread *th,
                             unsigned type, const char *name) {
  uint64_t n = 0;
  for (size_t i = 0; i < t->nthreads; i++) {
    const pp_thread *x = &t->threads[i];
    if (th && x != th)
      continue;
    for (size_t j = 0; j < x->nev; j++)
      if ((!type || x->ev[j].type == type) && loc_is(t, x->ev[j].loc, name))
        n++;
  }
  return n;
}

static const pp_zone_stats *zstats(const pp_analysis *a, const char *name) {
  const pp_trace *t = a->trace;
  for (size_t i = 0; i < a->prof.nzones; i++)
    if (loc_is(t, a->prof.zones[i].loc, name))
      return &a->prof.zones[i];
  return NULL;
}

static const pp_counter_stats *cstats(const pp_analysis *a, const char *name) {
  const pp_trace *t = a->trace;
  for (size_t i = 0; i < a->prof.ncounters; i++)
    if (loc_is(t, a->prof.counters[i].loc, name))
      return &a->prof.counters[i];
  return NULL;
}

static const pp_frame_stats *fstats(const pp_analysis *a, const char *name) {
  const pp_trace *t = a->trace;
  for (size_t i = 0; i < a->prof.nframes; i++)
    if (loc_is(t, a->prof.frames[i].loc, name))
      return &a->prof.frames[i];
  return NULL;
}

static uint64_t total_dropped(const pp_trace *t) {
  uint64_t d = 0;
  for (size_t i = 0; i < t->nthreads; i++)
    d += t->threads[i].dropped;
  return d;
}

static uint64_t total_events(const pp_trace *t) {
  uint64_t n = 0;
  for (size_t i = 0; i < t->nthreads; i++)
    n += t->threads[i].nev;
  return n;
}

/* Name of the zone enclosing ts on th, or "" when none. */
static const char *enclosing_name(const pp_analysis *a, const pp_thread *th,
                                  int64_t ts) {
  size_t i = (size_t)(th - a->trace->threads);
  int k = pp_zone_enclosing(a, i, ts);
  return k < 0 ? "" : pp_trace_loc_name(a->trace, a->threads[i].zones[k].loc);
}

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* ---- trace-mode round trip ---------------------------------------------- */

static void rt_leaf(void) { PP_FUNC(); }

static void rt_nested(void) {
  PP_ZONE("rt-outer");
  {
    PP_ZONE_BEGIN(mid, "rt-mid");
    rt_leaf();
    PP_ZONE_END(mid);
  }
}

#define RT_FLOWS 5

static void *rt_worker(void *arg) {
  (void)arg;
  pp_thread_name("rt-worker");
  for (uint64_t id = 1; id <= RT_FLOWS; id++) {
    {
      PP_ZONE("rt-consume");
      pp_flow_step("rt-item", 1000 + id);
    }
    {
      PP_ZONE("rt-finish");
      PP_FLOW_END("rt-item", 1000 + id);
    }
  }
  return NULL;
}

PP_TEST(recorder_trace_round_trip) {
  char path[4096];
  tpath(path, sizeof path, "rt.pptrace");
  pp_thread_name("rt-main"); /* before pp_init: allowed */
  start_session(PP_MODE_TRACE, path, 0);
  CHECK_STR(pp_output_path(), path);
  CHECK(pp_is_enabled());

  for (int i = 0; i < 3; i++)
    rt_nested();

  /* A run-time name from a stack buffer that is overwritten afterwards. */
  char buf[32];
  snprintf(buf, sizeof buf, "rt-dyn-%d", 42);
  pp_zone dz = pp_zone_begin_name(buf);
  memset(buf, 'X', sizeof buf - 1);
  buf[sizeof buf - 1] = 0;
  pp_zone dz2 = pp_zone_begin_name(buf);
  pp_zone_end(dz2);
  pp_zone_end(dz);
  snprintf(buf, sizeof buf, "rt-dyn-%d", 42);
  pp_zone dz3 = pp_zone_begin_name(buf);
  buf[0] = 0;
  pp_zone_end(dz3);

  PP_COUNTER_SET("rt-queue", 5);
  PP_COUNTER_ADD("rt-queue", 3);
  PP_COUNTER_ADD("rt-queue", -2);
  PP_COUNTER_SETF("rt-temp", 36.5);
  pp_counter_set("rt-named", -42);
  pp_counter_add("rt-named", 7);
  pp_counter_setf("rt-namedf", 0.25);
  PP_MARK("rt-mark");
  pp_mark("rt-mark-named");
  for (int i = 0; i < 4; i++)
    PP_FRAME_MARK("rt-cam");
  pp_frame_mark("rt-cam");
  pp_frame_mark("rt-cam");

  for (uint64_t id = 1; id <= RT_FLOWS; id++) {
    PP_ZONE("rt-produce");
    PP_FLOW_BEGIN("rt-item", 1000 + id);
  }
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, rt_worker, NULL), 0);
  CHECK_EQ(pthread_join(th, NULL), 0);
  uint64_t main_tid = (uint64_t)syscall(SYS_gettid);
  CHECK_EQ(pp_shutdown(), PP_OK);
  CHECK(!pp_is_running());
  CHECK_STR(pp_output_path(), "");

  pp_trace t;

  pp_analysis a = {0};
  load_trace(path, &t, &a);
  check_clean(&t);
  CHECK(!t.from_stats);
  CHECK_EQ(t.pid, getpid());
  CHECK_STR(pp_trace_meta(&t, "mode"), "trace");
  CHECK_EQ(total_dropped(&t), 0);
  CHECK_EQ(a.prof.unclosed, 0);
  CHECK_EQ(a.prof.unmatched_ends, 0);

  const pp_thread *mt = thread_named(&t, "rt-main");
  const pp_thread_figures *mtf = tb_fig(&a, mt);
  const pp_thread *wt = thread_named(&t, "rt-worker");
  CHECK(mt != NULL);
  CHECK(wt != NULL);
  CHECK(mt != wt);
  CHECK_EQ_U(mt->tid, main_tid);
  CHECK_NE(wt->tid, main_tid);

  /* Nesting: rt-outer > rt-mid > rt_leaf, three times, on the main thread. */
  CHECK_EQ(zones_named(&a, mt, "rt-outer", 1), 3);
  CHECK_EQ(zones_named(&a, mt, "rt-mid", 1), 3);
  CHECK_EQ(zones_named(&a, mt, "rt_leaf", 1), 3);
  CHECK_EQ(zones_named(&a, wt, "rt-outer", 0), 0);
  int leaves = 0;
  for (size_t j = 0; j < mtf->nzones; j++) {
    const pp_zone_inst *z = &mtf->zones[j];
    if (loc_is(&t, z->loc, "rt-outer")) {
      CHECK_EQ(z->depth, 0);
      CHECK_EQ(z->parent, -1);
    } else if (loc_is(&t, z->loc, "rt-mid")) {
      CHECK_EQ(z->depth, 1);
      CHECK(z->parent >= 0);
      CHECK(loc_is(&t, mtf->zones[z->parent].loc, "rt-outer"));
    } else if (loc_is(&t, z->loc, "rt_leaf")) {
      CHECK_EQ(z->depth, 2);
      CHECK(loc_is(&t, mtf->zones[z->parent].loc, "rt-mid"));
      const pp_zone_inst *p = &mtf->zones[z->parent];
      CHECK(z->start >= p->start && z->end <= p->end);
      leaves++;
    }
  }
  CHECK_EQ(leaves, 3);
  /* Site metadata of a macro zone. */
  const pp_zone_stats *outer = zstats(&a, "rt-outer");
  CHECK(outer != NULL);
  CHECK_EQ(outer->count, 3);
  CHECK_CONTAINS(t.locs[outer->loc].file, "test-recorder.c");
  CHECK_STR(t.locs[outer->loc].function, "rt_nested");
  CHECK_GT(t.locs[outer->loc].line, 0);
  CHECK_EQ(t.locs[outer->loc].kind, PP_KIND_ZONE);

  /* Run-time names: copied at the call, one interned site per name. */
  CHECK_EQ(zones_named(&a, mt, "rt-dyn-42", 1), 2);
  char xs[32];
  memset(xs, 'X', sizeof xs - 1);
  xs[sizeof xs - 1] = 0;
  CHECK_EQ(zones_named(&a, mt, xs, 1), 1);
  int dyn_sites = 0;
  for (size_t i = 0; i < t.nlocs; i++)
    dyn_sites += loc_is(&t, (uint32_t)i, "rt-dyn-42");
  CHECK_EQ(dyn_sites, 1);
  for (size_t j = 0; j < mtf->nzones; j++)
    if (loc_is(&t, mtf->zones[j].loc, xs)) {
      CHECK_EQ(mtf->zones[j].depth, 1);
      CHECK(loc_is(&t, mtf->zones[mtf->zones[j].parent].loc, "rt-dyn-42"));
    }

  /* Counters, in recording order, with their values. */
  struct {
    unsigned type;
    const char *name;
    int64_t i;
    double f;
  } want[] = {{PPT_EV_COUNTER_SET, "rt-queue", 5, 0},
              {PPT_EV_COUNTER_ADD, "rt-queue", 3, 0},
              {PPT_EV_COUNTER_ADD, "rt-queue", -2, 0},
              {PPT_EV_COUNTER_SETF, "rt-temp", 0, 36.5},
              {PPT_EV_COUNTER_SET, "rt-named", -42, 0},
              {PPT_EV_COUNTER_ADD, "rt-named", 7, 0},
              {PPT_EV_COUNTER_SETF, "rt-namedf", 0, 0.25}};
  size_t k = 0;
  for (size_t j = 0; j < mt->nev; j++) {
    const pp_event *e = &mt->ev[j];
    if (e->type < PPT_EV_COUNTER_SET || e->type > PPT_EV_COUNTER_SETF)
      continue;
    CHECK_LT(k, sizeof want / sizeof want[0]);
    CHECK_EQ(e->type, want[k].type);
    CHECK_STR(pp_trace_loc_name(&t, e->loc), want[k].name);
    CHECK_EQ(t.locs[e->loc].kind, PP_KIND_COUNTER);
    if (e->type == PPT_EV_COUNTER_SETF)
      CHECK(e->v.f == want[k].f);
    else
      CHECK_EQ(e->v.i, want[k].i);
    k++;
  }
  CHECK_EQ(k, sizeof want / sizeof want[0]);
  const pp_counter_stats *q = cstats(&a, "rt-queue");
  CHECK(q != NULL);
  CHECK_EQ(q->samples, 3);
  CHECK(q->min == 5 && q->max == 8 && q->last == 6 && !q->is_float);
  const pp_counter_stats *nm = cstats(&a, "rt-named");
  CHECK(nm != NULL);
  CHECK(nm->min == -42 && nm->last == -35);
  const pp_counter_stats *tf = cstats(&a, "rt-temp");
  CHECK(tf != NULL && tf->is_float && tf->last == 36.5);

  /* Marks and frame marks (the two "rt-cam" sites are one stream). */
  CHECK_EQ(events_named(&t, mt, PPT_EV_MARK, "rt-mark"), 1);
  CHECK_EQ(events_named(&t, mt, PPT_EV_MARK, "rt-mark-named"), 1);
  CHECK_EQ(events_named(&t, mt, PPT_EV_FRAME, "rt-cam"), 6);
  const pp_frame_stats *cam = fstats(&a, "rt-cam");
  CHECK(cam != NULL);
  CHECK_EQ(cam->frames, 6);

  /* Flows: begun on the main thread inside rt-produce, stepped and ended
   * on the worker inside rt-consume / rt-finish, ids in order. */
  uint64_t nb = 0, ns = 0, ne = 0;
  for (size_t j = 0; j < mt->nev; j++) {
    const pp_event *e = &mt->ev[j];
    if (e->type == PPT_EV_FLOW_BEGIN) {
      CHECK(loc_is(&t, e->loc, "rt-item"));
      CHECK_EQ_U(e->v.id, 1000 + ++nb);
      CHECK_STR(enclosing_name(&a, mt, e->ts), "rt-produce");
    }
    CHECK(e->type != PPT_EV_FLOW_STEP && e->type != PPT_EV_FLOW_END);
  }
  for (size_t j = 0; j < wt->nev; j++) {
    const pp_event *e = &wt->ev[j];
    CHECK(e->type != PPT_EV_FLOW_BEGIN);
    if (e->type == PPT_EV_FLOW_STEP) {
      CHECK(loc_is(&t, e->loc, "rt-item"));
      CHECK_EQ_U(e->v.id, 1000 + ++ns);
      CHECK_STR(enclosing_name(&a, wt, e->ts), "rt-consume");
    } else if (e->type == PPT_EV_FLOW_END) {
      CHECK(loc_is(&t, e->loc, "rt-item"));
      CHECK_EQ_U(e->v.id, 1000 + ++ne);
      CHECK_STR(enclosing_name(&a, wt, e->ts), "rt-finish");
    }
  }
  CHECK_EQ(nb, RT_FLOWS);
  CHECK_EQ(ns, RT_FLOWS);
  CHECK_EQ(ne, RT_FLOWS);
  CHECK_EQ(zones_named(&a, wt, "rt-consume", 1), RT_FLOWS);
  CHECK_EQ(zones_named(&a, wt, "rt-finish", 1), RT_FLOWS);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* ---- many threads ---------------------------------------------------------
 */

#define MT_THREADS 8
#define MT_ZONES 100000

static const pp_srcloc mt_locs[MT_THREADS] = {
    {"mt-zone-0", "mt_worker", __FILE__, 1, PP_KIND_ZONE},
    {"mt-zone-1", "mt_worker", __FILE__, 1, PP_KIND_ZONE},
    {"mt-zone-2", "mt_worker", __FILE__, 1, PP_KIND_ZONE},
    {"mt-zone-3", "mt_worker", __FILE__, 1, PP_KIND_ZONE},
    {"mt-zone-4", "mt_worker", __FILE__, 1, PP_KIND_ZONE},
    {"mt-zone-5", "mt_worker", __FILE__, 1, PP_KIND_ZONE},
    {"mt-zone-6", "mt_worker", __FILE__, 1, PP_KIND_ZONE},
    {"mt-zone-7", "mt_worker", __FILE__, 1, PP_KIND_ZONE}};

static pthread_barrier_t mt_barrier;

static void *mt_worker(void *arg) {
  int i = (int)(intptr_t)arg;
  char name[32];
  snprintf(name, sizeof name, "mt-worker-%d", i);
  pp_thread_name(name);
  pthread_barrier_wait(&mt_barrier);
  for (int k = 0; k < MT_ZONES; k++) {
    pp_zone z = pp_zone_begin(&mt_locs[i]);
    pp_zone_end(z);
  }
  return NULL;
}

PP_TEST_T(recorder_many_threads_no_loss, 240) {
  char path[4096];
  tpath(path, sizeof path, "mt.pptrace");
  /* 4 MiB rings hold a whole thread's 200k events: no drop is possible
   * even if the writer never ran. */
  start_session(PP_MODE_TRACE, path, 4096);
  pthread_t th[MT_THREADS];
  CHECK_EQ(pthread_barrier_init(&mt_barrier, NULL, MT_THREADS), 0);
  for (int i = 0; i < MT_THREADS; i++)
    CHECK_EQ(pthread_create(&th[i], NULL, mt_worker, (void *)(intptr_t)i), 0);
  for (int i = 0; i < MT_THREADS; i++)
    CHECK_EQ(pthread_join(th[i], NULL), 0);
  pthread_barrier_destroy(&mt_barrier);
  CHECK_EQ(pp_shutdown(), PP_OK);

  pp_trace t;

  pp_analysis a = {0};
  load_trace(path, &t, &a);
  check_clean(&t);
  CHECK_EQ(total_dropped(&t), 0);
  CHECK_EQ(a.prof.unclosed, 0);
  CHECK_EQ(a.prof.unmatched_ends, 0);
  for (int i = 0; i < MT_THREADS; i++) {
    char name[32], zname[32];
    snprintf(name, sizeof name, "mt-worker-%d", i);
    snprintf(zname, sizeof zname, "mt-zone-%d", i);
    const pp_thread *x = thread_named(&t, name);
    const pp_thread_figures *xf = tb_fig(&a, x);
    if (!x)
      PP_FAIL("thread %s missing", name);
    CHECK_EQ(x->nev, 2 * MT_ZONES);
    CHECK_EQ(xf->nzones, MT_ZONES);
    int64_t prev = INT64_MIN;
    for (size_t j = 0; j < x->nev; j++) {
      const pp_event *e = &x->ev[j];
      if (!loc_is(&t, e->loc, zname))
        PP_FAIL("thread %s event %zu is %s", name, j,
                pp_trace_loc_name(&t, e->loc));
      CHECK_EQ(e->type, j % 2 ? PPT_EV_ZONE_END : PPT_EV_ZONE_BEGIN);
      if (e->ts < prev)
        PP_FAIL("thread %s: time goes back at event %zu (%lld < %lld)", name, j,
                (long long)e->ts, (long long)prev);
      prev = e->ts;
    }
    for (size_t j = 0; j < xf->nzones; j++) {
      CHECK_EQ(xf->zones[j].depth, 0);
      CHECK_EQ(xf->zones[j].unclosed, 0);
    }
    const pp_zone_stats *zs = zstats(&a, zname);
    CHECK(zs != NULL);
    CHECK_EQ(zs->count, MT_ZONES);
  }
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* ---- drop accounting ---------------------------------------------------- */

static const pp_srcloc burst_loc = {"burst", "burst", __FILE__, 1,
                                    PP_KIND_ZONE};

PP_TEST_T(recorder_drop_accounting, 120) {
  char path[4096];
  tpath(path, sizeof path, "drop.pptrace");
  start_session(PP_MODE_TRACE, path, 16); /* 1024 slots */
  pp__tstate *ts = pp__thread_get();
  CHECK(ts != NULL);
  /* Bursts far larger than the ring, until some begin was dropped (the
   * first one nearly always suffices). */
  uint64_t attempted = 0;
  do {
    for (int i = 0; i < 1000000; i++) {
      pp_zone z = pp_zone_begin(&burst_loc);
      pp_zone_end(z);
    }
    attempted += 1000000;
  } while (atomic_load(&ts->dropped) == 0 && attempted < 20000000);
  uint64_t dropped = atomic_load(&ts->dropped);
  CHECK_GT(dropped, 0);
  CHECK_EQ(pp_shutdown(), PP_OK);

  pp_trace t;

  pp_analysis a = {0};
  load_trace(path, &t, &a);
  check_clean(&t);
  /* The file reports exactly the drops the thread counted. */
  CHECK_EQ_U(total_dropped(&t), dropped);
  CHECK_EQ_U(a.prof.dropped, dropped);
  /* Only begins are dropped (ends keep a reserve): every attempted zone is
   * either recorded whole or counted as one drop. */
  uint64_t recorded = zones_named(&a, NULL, "burst", 1);
  CHECK_EQ_U(recorded + dropped, attempted);
  CHECK_EQ_U(zones_named(&a, NULL, "burst", 0), recorded);
  CHECK_EQ(a.prof.unclosed, 0);
  CHECK_EQ(a.prof.unmatched_ends, 0);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* ---- stats mode ------------------------------------------------------------
 */

static void spin_ns(long ns) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do
    clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

#define SM_FRAMES 50
#define SM_SLEEP_NS 200000L

static void sm_work(void) {
  pp_thread_name("sm-main");
  for (int i = 0; i < SM_FRAMES; i++) {
    PP_ZONE("sm-frame");
    for (int j = 0; j < 4; j++) {
      PP_ZONE("sm-stage");
      spin_ns(2000);
    }
    {
      PP_ZONE("sm-sleep");
      struct timespec ts = {0, SM_SLEEP_NS};
      nanosleep(&ts, NULL);
    }
    PP_COUNTER_SET("sm-depth", i % 7);
    PP_COUNTER_SETF("sm-load", i * 0.5);
    PP_FRAME_MARK("sm-cam");
  }
}

PP_TEST(recorder_stats_mode_matches_trace) {
  char spath[4096], tpath_[4096];
  tpath(spath, sizeof spath, "stats.pptrace");
  tpath(tpath_, sizeof tpath_, "trace.pptrace");
  start_session(PP_MODE_STATS, spath, 0);
  sm_work();
  CHECK_EQ(pp_shutdown(), PP_OK);
  start_session(PP_MODE_TRACE, tpath_, 0);
  sm_work();
  CHECK_EQ(pp_shutdown(), PP_OK);

  pp_trace s, t;

  pp_analysis a = {0};

  pp_analysis s_a = {0};
  load_trace(spath, &s, &s_a);
  load_trace(tpath_, &t, &a);
  check_clean(&s);
  check_clean(&t);
  CHECK_EQ(s.from_stats, 1);
  CHECK_EQ(t.from_stats, 0);
  CHECK_STR(pp_trace_meta(&s, "mode"), "stats");
  const pp_analysis *both[2] = {&s_a, &a};
  /* Durations differ between two runs, so totals are compared with what
   * the work guarantees (sleeps are lower bounds, parents contain their
   * children) and with each file's own histogram; counts, counters and
   * frames are deterministic and must be equal. */
  for (int m = 0; m < 2; m++) {
    const pp_analysis *x = both[m];
    const pp_zone_stats *fr = zstats(x, "sm-frame");
    const pp_zone_stats *st = zstats(x, "sm-stage");
    const pp_zone_stats *sl = zstats(x, "sm-sleep");
    CHECK(fr && st && sl);
    CHECK_EQ(fr->count, SM_FRAMES);
    CHECK_EQ(st->count, 4 * SM_FRAMES);
    CHECK_EQ(sl->count, SM_FRAMES);
    CHECK_GE(sl->total_ns, SM_FRAMES * SM_SLEEP_NS);
    CHECK_GE(st->total_ns, 4 * SM_FRAMES * 2000L);
    CHECK_GE(fr->total_ns + SM_FRAMES * 1000L, st->total_ns + sl->total_ns);
    CHECK_NEAR(fr->self_ns, fr->total_ns - st->total_ns - sl->total_ns,
               SM_FRAMES * 1000.0);
    CHECK_NEAR(sl->self_ns, sl->total_ns, 1.0);
    const pp_zone_stats *zs[3] = {fr, st, sl};
    for (int k = 0; k < 3; k++) {
      CHECK_EQ_U(zs[k]->hist.count, zs[k]->count);
      CHECK_NEAR(zs[k]->mean_ns * (double)zs[k]->count, (double)zs[k]->total_ns,
                 0.02 * (double)zs[k]->total_ns);
      CHECK_LE(zs[k]->min_ns, zs[k]->max_ns);
      CHECK_GE(zs[k]->min_ns, 0);
    }
    const pp_counter_stats *d = cstats(x, "sm-depth");
    const pp_counter_stats *l = cstats(x, "sm-load");
    CHECK(d && l);
    CHECK_EQ(d->samples, SM_FRAMES);
    CHECK(d->min == 0 && d->max == 6 && d->last == (SM_FRAMES - 1) % 7);
    CHECK(!d->is_float);
    CHECK_EQ(l->samples, SM_FRAMES);
    CHECK(l->min == 0 && l->max == (SM_FRAMES - 1) * 0.5 &&
          l->last == (SM_FRAMES - 1) * 0.5);
    CHECK(l->is_float);
    const pp_frame_stats *cam = fstats(x, "sm-cam");
    CHECK(cam != NULL);
    CHECK_EQ(cam->frames, SM_FRAMES);
    CHECK_GT(cam->fps, 0);
    CHECK_EQ(x->prof.unclosed, 0);
    CHECK_EQ(x->prof.unmatched_ends, 0);
    CHECK_EQ(x->prof.dropped, 0);
    CHECK_GT(thread_busy(x, "sm-main"), 0);
  }
  CHECK_EQ_U(s_a.prof.events, a.prof.events);
  CHECK_EQ_U(a.prof.events, total_events(&t));
  CHECK_EQ(total_events(&s), 0); /* stats files carry no events */
  pp_analysis_free(&s_a);
  pp_trace_free(&s);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* ---- flight mode -------------------------------------------------------- */

#define FL_ZONES 20000

PP_TEST_T(recorder_flight_dump, 120) {
  char path[4096], dump[4096], bad[4096];
  tpath(path, sizeof path, "flight.pptrace");
  tpath(dump, sizeof dump, "dump.pptrace");
  tpath(bad, sizeof bad, "no-such-dir/dump.pptrace");
  start_session(PP_MODE_FLIGHT, path, 64); /* 4096 slots: 2048 zones */
  char name[32];
  for (int i = 0; i < FL_ZONES; i++) {
    snprintf(name, sizeof name, "fl-%d", i);
    pp_zone z = pp_zone_begin_name(name);
    pp_zone_end(z);
  }
  CHECK_EQ(pp_flight_dump(dump), PP_OK);
  CHECK_EQ(pp_flight_dump(bad), PP_EIO);
  CHECK_CONTAINS(pp_last_error(), bad);
  for (int i = 0; i < 100; i++) {
    snprintf(name, sizeof name, "fl-after-%d", i);
    pp_zone z = pp_zone_begin_name(name);
    pp_zone_end(z);
  }
  CHECK_EQ(pp_shutdown(), PP_OK);

  pp_trace t;

  pp_analysis a = {0};
  load_trace(dump, &t, &a);
  check_clean(&t);
  CHECK_STR(pp_trace_meta(&t, "mode"), "flight");
  uint64_t closed = 0;
  int lowest = FL_ZONES;
  for (size_t i = 0; i < t.nthreads; i++)
    for (size_t j = 0; j < a.threads[i].nzones; j++) {
      const pp_zone_inst *z = &a.threads[i].zones[j];
      const char *n = pp_trace_loc_name(&t, z->loc);
      CHECK(strncmp(n, "fl-after-", 9) != 0);
      int k = -1;
      CHECK_EQ(sscanf(n, "fl-%d", &k), 1);
      if (k < lowest)
        lowest = k;
      closed += !z->unclosed;
    }
  /* The newest zones are there, the oldest were overwritten. */
  CHECK_EQ(zones_named(&a, NULL, "fl-19999", 1), 1);
  CHECK_EQ(zones_named(&a, NULL, "fl-18500", 1), 1);
  CHECK_EQ(zones_named(&a, NULL, "fl-0", 0), 0);
  CHECK_GE(lowest, FL_ZONES - 2048 - 1);
  CHECK_LE(closed, 2048);
  CHECK_GE(closed, 1500);
  CHECK_EQ(a.prof.unclosed, 0);
  pp_analysis_free(&a);
  pp_trace_free(&t);

  /* The shutdown dump holds the later zones too. */
  load_trace(path, &t, &a);
  check_clean(&t);
  for (int i = 0; i < 100; i++) {
    snprintf(name, sizeof name, "fl-after-%d", i);
    CHECK_EQ(zones_named(&a, NULL, name, 1), 1);
  }
  CHECK_EQ(zones_named(&a, NULL, "fl-19999", 1), 1);
  CHECK_EQ(zones_named(&a, NULL, "fl-0", 0), 0);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* Flight mode keeps the rings of the 64 threads that exited last and frees
 * the rest, so a program that keeps starting threads does not grow without
 * bound; a dump says how many exited threads it lacks. */
static void *flight_worker(void *arg) {
  char name[32];
  snprintf(name, sizeof name, "ex-%d", (int)(intptr_t)arg);
  pp_zone z = pp_zone_begin_name(name);
  pp_zone_end(z);
  return NULL;
}

PP_TEST_T(recorder_flight_exited_threads_bounded, 60) {
  enum { THREADS = 100, KEEP = 64 };
  char path[4096], dump[4096];
  tpath(path, sizeof path, "exited.pptrace");
  tpath(dump, sizeof dump, "exited-dump.pptrace");
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.mode = PP_MODE_FLIGHT;
  cfg.out_path = path;
  cfg.buffer_kib = 64;
  cfg.flush_ms = 2;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  for (int i = 0; i < THREADS; i++) { /* one after another: exit order i */
    pthread_t th;
    CHECK_EQ(pthread_create(&th, NULL, flight_worker, (void *)(intptr_t)i), 0);
    CHECK_EQ(pthread_join(th, NULL), 0);
  }
  /* The writer frees what it has finished with on its next passes. */
  pp_trace t;
  pp_analysis a = {0};
  const char *rel = NULL;
  for (int tries = 0; tries < 400; tries++) {
    CHECK_EQ(pp_flight_dump(dump), PP_OK);
    load_trace(dump, &t, &a);
    rel = pp_trace_meta(&t, "flight_threads_released");
    if (rel && atoi(rel) == THREADS - KEEP)
      break;
    pp_analysis_free(&a);
    pp_trace_free(&t);
    rel = NULL;
    sleep_ms(5);
  }
  CHECK(rel != NULL);
  check_clean(&t);
  char name[32];
  for (int i = 0; i < THREADS; i++) {
    snprintf(name, sizeof name, "ex-%d", i);
    CHECK_EQ(zones_named(&a, NULL, name, 1), (uint64_t)(i >= THREADS - KEEP));
  }
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  CHECK(f != NULL);
  CHECK_EQ(pp_report_text(f, &a, NULL), 0);
  fclose(f);
  CHECK_CONTAINS(text,
                 "note: the events of 36 exited threads are not in this dump");
  free(text);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  CHECK_EQ(pp_shutdown(), PP_OK);
}

PP_TEST(recorder_flight_dump_modes) {
  char path[4096], dump[4096];
  tpath(path, sizeof path, "trace.pptrace");
  tpath(dump, sizeof dump, "dump.pptrace");
  CHECK_EQ(pp_flight_dump(dump), PP_ENOTRUNNING);
  start_session(PP_MODE_TRACE, path, 0);
  CHECK_EQ(pp_flight_dump(dump), PP_EMODE);
  CHECK_EQ(pp_flight_dump(NULL), PP_EMODE);
  CHECK_EQ(pp_shutdown(), PP_OK);
  start_session(PP_MODE_STATS, path, 0);
  CHECK_EQ(pp_flight_dump(dump), PP_EMODE);
  CHECK_EQ(pp_shutdown(), PP_OK);
  CHECK(!file_exists(dump));
  /* NULL dumps to the session's own path. */
  start_session(PP_MODE_FLIGHT, path, 64);
  { PP_ZONE("fd-zone"); }
  CHECK_EQ(pp_flight_dump(NULL), PP_OK);
  pp_trace t;
  pp_analysis a = {0};
  load_trace(path, &t, &a);
  check_clean(&t);
  CHECK_EQ(zones_named(&a, NULL, "fd-zone", 1), 1);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  CHECK_EQ(pp_shutdown(), PP_OK);
}

/* ---- enable / disable ------------------------------------------------------
 */

PP_TEST(recorder_set_enabled) {
  char path[4096];
  tpath(path, sizeof path, "en.pptrace");
  start_session(PP_MODE_TRACE, path, 0);
  CHECK(pp_is_enabled());
  { PP_ZONE("en-before"); }
  PP_ZONE_BEGIN(span, "en-spanning"); /* begun on, ended off */
  pp_set_enabled(0);
  CHECK(!pp_is_enabled());
  CHECK(pp_is_running());
  PP_ZONE_END(span);
  for (int i = 0; i < 10; i++) {
    PP_ZONE("en-hidden");
    PP_MARK("en-hidden-mark");
    PP_COUNTER_SET("en-hidden-counter", i);
    pp_zone z = pp_zone_begin_name("en-hidden-dyn");
    pp_zone_end(z);
  }
  PP_ZONE_BEGIN(straddle, "en-straddle"); /* begun off, ended on */
  pp_zone dyn = pp_zone_begin_name("en-straddle-dyn");
  pp_set_enabled(1);
  CHECK(pp_is_enabled());
  pp_zone_end(dyn);
  PP_ZONE_END(straddle);
  { PP_ZONE("en-after"); }
  CHECK_EQ(pp_shutdown(), PP_OK);
  CHECK(!pp_is_enabled());

  pp_trace t;

  pp_analysis a = {0};
  load_trace(path, &t, &a);
  check_clean(&t);
  CHECK_EQ(zones_named(&a, NULL, "en-before", 1), 1);
  CHECK_EQ(zones_named(&a, NULL, "en-after", 1), 1);
  CHECK_EQ(zones_named(&a, NULL, "en-spanning", 1), 1);
  CHECK_EQ(events_named(&t, NULL, 0, "en-hidden"), 0);
  CHECK_EQ(events_named(&t, NULL, 0, "en-hidden-mark"), 0);
  CHECK_EQ(events_named(&t, NULL, 0, "en-hidden-counter"), 0);
  CHECK_EQ(events_named(&t, NULL, 0, "en-hidden-dyn"), 0);
  CHECK_EQ(events_named(&t, NULL, 0, "en-straddle"), 0);
  CHECK_EQ(events_named(&t, NULL, 0, "en-straddle-dyn"), 0);
  CHECK_EQ(a.prof.unmatched_ends, 0);
  CHECK_EQ(a.prof.unclosed, 0);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* Each session starts a new generation of pp__active, and a thread's
 * private view of its ring (recorder.c) is refreshed by its next event:
 * a session with a bigger ring than the last one uses it (6000 slots in a
 * burst, with no drop, where the old ring held 1024), and a zone open
 * across the two sessions ends in the new ring (an end without its
 * begin), not in the old one. */
PP_TEST(recorder_new_session_refreshes_thread_views) {
  char p1[4096], p2[4096];
  tpath(p1, sizeof p1, "gen1.pptrace");
  tpath(p2, sizeof p2, "gen2.pptrace");
  start_session(PP_MODE_TRACE, p1, 16); /* 1024 slots */
  int word1 = __atomic_load_n(&pp__active, __ATOMIC_RELAXED);
  { PP_ZONE("gen-first"); }
  pp__tstate *t = pp__thread_get();
  CHECK(t != NULL);
  CHECK_EQ(t->capacity, 1024);
  PP_ZONE_BEGIN(across, "gen-across");
  CHECK_EQ(pp_shutdown(), PP_OK);
  start_session(PP_MODE_TRACE, p2, 256); /* 16384 slots */
  int word2 = __atomic_load_n(&pp__active, __ATOMIC_RELAXED);
  CHECK(PP__GEN(word2) != PP__GEN(word1));
  CHECK_EQ(word2 & PP__ON, PP__ON);
  PP_ZONE_END(across);
  for (int i = 0; i < 3000; i++) {
    PP_ZONE("gen-second");
  }
  CHECK_EQ(t->capacity, 16384);
  CHECK_EQ(pp_shutdown(), PP_OK);

  pp_trace t1, t2;

  pp_analysis t1_a = {0};

  pp_analysis t2_a = {0};
  load_trace(p1, &t1, &t1_a);
  check_clean(&t1);
  CHECK_EQ(zones_named(&t1_a, NULL, "gen-first", 1), 1);
  CHECK_EQ(events_named(&t1, NULL, PPT_EV_ZONE_BEGIN, "gen-across"), 1);
  CHECK_EQ(events_named(&t1, NULL, PPT_EV_ZONE_END, "gen-across"), 0);
  pp_analysis_free(&t1_a);
  pp_trace_free(&t1);
  load_trace(p2, &t2, &t2_a);
  check_clean(&t2);
  CHECK_EQ(zones_named(&t2_a, NULL, "gen-second", 1), 3000);
  CHECK_EQ(t2_a.prof.dropped, 0);
  CHECK_EQ(events_named(&t2, NULL, PPT_EV_ZONE_END, "gen-across"), 1);
  CHECK_EQ(t2_a.prof.unmatched_ends, 1);
  pp_analysis_free(&t2_a);
  pp_trace_free(&t2);
}

/* A zone end the program makes up (a pp_zone it did not get from a
 * begin) is harmless: before any session and in a thread that has not
 * recorded (nothing to close: nothing recorded), and in a thread that has
 * (an end without a begin). */
PP_TEST(recorder_end_without_begin_is_harmless) {
  static const pp_srcloc loc = {"made-up", NULL, NULL, 0, PP_KIND_ZONE};
  pp_zone z = {&loc};
  CHECK_EQ(__atomic_load_n(&pp__active, __ATOMIC_RELAXED) & PP__ON, 0);
  pp_zone_end(z); /* no session yet */
  char path[4096];
  tpath(path, sizeof path, "madeup.pptrace");
  start_session(PP_MODE_TRACE, path, 0);
  pp_zone_end(z); /* this thread has recorded nothing */
  { PP_ZONE("real"); }
  pp_zone_end(z);
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_zone_end(z); /* after it */
  pp_trace t;
  pp_analysis a = {0};
  load_trace(path, &t, &a);
  check_clean(&t);
  CHECK_EQ(events_named(&t, NULL, PPT_EV_ZONE_END, "made-up"), 1);
  CHECK_EQ(a.prof.unmatched_ends, 1);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(recorder_start_disabled) {
  char path[4096];
  tpath(path, sizeof path, "sd.pptrace");
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.start_enabled = 0;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  CHECK(!pp_is_enabled());
  { PP_ZONE("sd-off"); }
  pp_set_enabled(1);
  { PP_ZONE("sd-on"); }
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis a = {0};
  load_trace(path, &t, &a);
  check_clean(&t);
  CHECK_EQ(zones_named(&a, NULL, "sd-off", 0), 0);
  CHECK_EQ(zones_named(&a, NULL, "sd-on", 1), 1);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* ---- pp_init errors, status strings ------------------------------------ */

PP_TEST(recorder_init_errors) {
  char path[4096], bad[4096];
  tpath(path, sizeof path, "ok.pptrace");
  tpath(bad, sizeof bad, "missing-dir/x.pptrace");
  pp_config cfg;

  pp_config_init(&cfg);
  CHECK_EQ(cfg.struct_size, sizeof cfg);
  CHECK_EQ(cfg.mode, PP_MODE_TRACE);
  CHECK_EQ(cfg.install_signals, 1);
  CHECK_EQ(cfg.start_enabled, 1);
  cfg.out_path = path;
  cfg.struct_size = 0;
  CHECK_EQ(pp_init(&cfg), PP_EINVAL);
  CHECK_CONTAINS(pp_last_error(), "struct_size");
  cfg.struct_size = sizeof cfg + 8;
  CHECK_EQ(pp_init(&cfg), PP_EINVAL);
  CHECK(!pp_is_running());

  static const uint32_t bad_kib[] = {1000, 8, 24, 2097152, 3};
  for (size_t i = 0; i < sizeof bad_kib / sizeof bad_kib[0]; i++) {
    pp_config_init(&cfg);
    cfg.out_path = path;
    cfg.buffer_kib = bad_kib[i];
    CHECK_EQ(pp_init(&cfg), PP_EINVAL);
    CHECK_CONTAINS(pp_last_error(), "buffer_kib");
    CHECK(!pp_is_running());
  }
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.flush_ms = 0;
  CHECK_EQ(pp_init(&cfg), PP_EINVAL);
  cfg.flush_ms = 1001;
  CHECK_EQ(pp_init(&cfg), PP_EINVAL);
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.mode = (pp_mode)7;
  CHECK_EQ(pp_init(&cfg), PP_EINVAL);
  CHECK(!file_exists(path));

  static const pp_mode modes[] = {PP_MODE_TRACE, PP_MODE_STATS, PP_MODE_FLIGHT};
  for (size_t i = 0; i < 3; i++) {
    pp_config_init(&cfg);
    cfg.out_path = bad;
    cfg.mode = modes[i];
    CHECK_EQ(pp_init(&cfg), PP_EIO);
    CHECK_CONTAINS(pp_last_error(), bad);
    CHECK(!pp_is_running());
  }

  CHECK_EQ(pp_shutdown(), PP_ENOTRUNNING);
  pp_config_init(&cfg);
  cfg.out_path = path;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  CHECK_STR(pp_last_error(), "");
  CHECK_EQ(pp_init(&cfg), PP_EBUSY);
  CHECK_EQ(pp_init(NULL), PP_EBUSY);
  CHECK(pp_is_running());
  CHECK_STR(pp_output_path(), path);
  CHECK_EQ(pp_shutdown(), PP_OK);
  CHECK_EQ(pp_shutdown(), PP_ENOTRUNNING);
  CHECK(!pp_is_running());
  pp_trace t;
  pp_analysis a = {0};
  load_trace(path, &t, &a);
  check_clean(&t);
  pp_analysis_free(&a);
  pp_trace_free(&t);

  /* A second session after the first ended. */
  CHECK_EQ(pp_init(&cfg), PP_OK);
  CHECK_EQ(pp_shutdown(), PP_OK);

  /* pp_init(NULL): defaults, pipeprof-<pid>.pptrace in the working dir. */
  CHECK_EQ(chdir(pp_test_tmpdir()), 0);
  CHECK_EQ(pp_init(NULL), PP_OK);
  char def[64];
  snprintf(def, sizeof def, "pipeprof-%ld.pptrace", (long)getpid());
  CHECK_STR(pp_output_path(), def);
  CHECK_EQ(pp_shutdown(), PP_OK);
  CHECK(file_exists(def));
}

PP_TEST(recorder_status_strings) {
  static const struct {
    int value;
    const char *name, *text;
  } codes[] = {
#define PP_T_CODE(nm, v, txt) {v, "PP_" #nm, txt},
      PP_STATUS_MAP(PP_T_CODE)
#undef PP_T_CODE
  };
  CHECK_EQ(sizeof codes / sizeof codes[0], 14);
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    CHECK_STR(pp_strerror(codes[i].value), codes[i].text);
    CHECK_STR(pp_err_name(codes[i].value), codes[i].name);
    CHECK_EQ(codes[i].value, -(int)i); /* pinned values 0, -1, ... */
  }
  CHECK_STR(pp_strerror(PP_EENV), "invalid environment variable");
  CHECK_STR(pp_err_name(PP_EFORKED), "PP_EFORKED");
  CHECK_STR(pp_err_name(PP_ECLOSED), "PP_ECLOSED");
  static const int unknown[] = {1, -14, -1000, 12345};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    CHECK_STR(pp_strerror(unknown[i]), "unknown error");
    CHECK(pp_err_name(unknown[i]) != NULL);
    CHECK_GT(strlen(pp_err_name(unknown[i])), 0);
  }
  CHECK_STR(pp_version_string(), PP_VERSION_STRING);
  CHECK_EQ(pp_version_number(), PP_VERSION_NUMBER);
}

/* ---- environment ----------------------------------------------------------
 */

static void env_clear(void) {
  static const char *const vars[] = {"PIPEPROF",
                                     "PIPEPROF_OUT",
                                     "PIPEPROF_MODE",
                                     "PIPEPROF_BUFFER_KIB",
                                     "PIPEPROF_FLUSH_MS",
                                     "PIPEPROF_SIGNALS",
                                     "PIPEPROF_PROCESS_NAME",
                                     "PIPEPROF_OWNER_PID",
                                     "PIPEPROF_CLOCK"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    unsetenv(vars[i]);
}

/* pp_init_from_env() with stderr captured into *err (malloc'ed). */
static int init_env_capture(char **err) {
  char path[4096];
  tpath(path, sizeof path, "stderr.txt");
  fflush(stderr);
  int saved = dup(2);
  CHECK(saved >= 0);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  CHECK(dup2(fd, 2) == 2);
  close(fd);
  int rc = pp_init_from_env();
  fflush(stderr);
  CHECK(dup2(saved, 2) == 2);
  close(saved);
  *err = pp_test_slurp(path, NULL);
  CHECK(*err != NULL);
  return rc;
}

static int count_lines(const char *s) {
  int n = 0;
  for (; *s; s++)
    n += *s == '\n';
  return n;
}

PP_TEST(recorder_env_invalid) {
  char out[4096];
  tpath(out, sizeof out, "env.pptrace");
  static const char *const cases[][2] = {{"PIPEPROF", "maybe"},
                                         {"PIPEPROF_MODE", "fast"},
                                         {"PIPEPROF_BUFFER_KIB", "1000"},
                                         {"PIPEPROF_BUFFER_KIB", "abc"},
                                         {"PIPEPROF_BUFFER_KIB", "-5"},
                                         {"PIPEPROF_BUFFER_KIB", "8"},
                                         {"PIPEPROF_FLUSH_MS", "0"},
                                         {"PIPEPROF_FLUSH_MS", "5000"},
                                         {"PIPEPROF_SIGNALS", "sometimes"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    env_clear();
    setenv("PIPEPROF", "1", 1);
    setenv("PIPEPROF_OUT", out, 1);
    setenv(cases[i][0], cases[i][1], 1);
    char *err = NULL;
    int rc = init_env_capture(&err);
    if (rc != PP_EENV)
      PP_FAIL("%s=%s: got %s", cases[i][0], cases[i][1], pp_err_name(rc));
    if (count_lines(err) != 1)
      PP_FAIL("%s=%s: expected one line on stderr, got:\n%s", cases[i][0],
              cases[i][1], err);
    char want[128];
    snprintf(want, sizeof want, "%s=\"%s\"", cases[i][0], cases[i][1]);
    CHECK_CONTAINS(err, want);
    free(err);
    CHECK(!pp_is_running());
    CHECK(!pp_is_enabled());
    CHECK(!file_exists(out));
  }
}

PP_TEST(recorder_env_valid) {
  char out[4096];
  tpath(out, sizeof out, "env.pptrace");
  char *err = NULL;

  env_clear();
  CHECK_EQ(init_env_capture(&err), PP_OK);
  CHECK_STR(err, "");
  free(err);
  CHECK(!pp_is_running());

  setenv("PIPEPROF", "0", 1);
  setenv("PIPEPROF_OUT", out, 1);
  CHECK_EQ(init_env_capture(&err), PP_OK);
  CHECK_STR(err, "");
  free(err);
  CHECK(!pp_is_running());
  CHECK(!file_exists(out));

  setenv("PIPEPROF", "1", 1);
  setenv("PIPEPROF_PROCESS_NAME", "env-proc", 1);
  CHECK_EQ(init_env_capture(&err), PP_OK);
  CHECK_STR(err, "");
  free(err);
  CHECK(pp_is_running());
  CHECK_STR(pp_output_path(), out);
  { PP_ZONE("env-zone"); }
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis a = {0};
  load_trace(out, &t, &a);
  check_clean(&t);
  CHECK_EQ(zones_named(&a, NULL, "env-zone", 1), 1);
  CHECK_STR(pp_trace_meta(&t, "process_name"), "env-proc");
  CHECK_STR(pp_trace_meta(&t, "mode"), "trace");
  pp_analysis_free(&a);
  pp_trace_free(&t);

  /* Stats mode from the environment. */
  setenv("PIPEPROF_MODE", "stats", 1);
  setenv("PIPEPROF_BUFFER_KIB", "64", 1);
  setenv("PIPEPROF_FLUSH_MS", "5", 1);
  CHECK_EQ(init_env_capture(&err), PP_OK);
  free(err);
  { PP_ZONE("env-stats-zone"); }
  CHECK_EQ(pp_shutdown(), PP_OK);
  load_trace(out, &t, &a);
  CHECK_EQ(t.from_stats, 1);
  CHECK(zstats(&a, "env-stats-zone") != NULL);
  CHECK_EQ(zstats(&a, "env-stats-zone")->count, 1);
  pp_analysis_free(&a);
  pp_trace_free(&t);

  /* An output that cannot be created: one line naming it, not running. */
  char bad[4096];
  tpath(bad, sizeof bad, "no-such-dir/env.pptrace");
  env_clear();
  setenv("PIPEPROF", "1", 1);
  setenv("PIPEPROF_OUT", bad, 1);
  CHECK_EQ(init_env_capture(&err), PP_EIO);
  CHECK_EQ(count_lines(err), 1);
  CHECK_CONTAINS(err, bad);
  free(err);
  CHECK(!pp_is_running());

  /* A process other than the owner gets OUT.<pid>. */
  env_clear();
  setenv("PIPEPROF", "on", 1);
  setenv("PIPEPROF_OUT", out, 1);
  setenv("PIPEPROF_OWNER_PID", "1", 1);
  CHECK_EQ(init_env_capture(&err), PP_OK);
  free(err);
  char other[4200];
  snprintf(other, sizeof other, "%s.%ld", out, (long)getpid());
  CHECK_STR(pp_output_path(), other);
  CHECK_EQ(pp_shutdown(), PP_OK);
  CHECK(file_exists(other));
}

/* ---- fork --------------------------------------------------------------- */


/*
 * What the library does on fork (fork_child() in src/core/session.c, run
 * through pthread_atfork in the child): the child does not own the
 * parent's trace, whose file descriptor and buffers it forgets without
 * touching them, and it drops the parent's thread registry
 * (pp__recorder_after_fork_child). A child of a recording session records
 * on: its first event starts a session of its own, OUT.<pid> beside the
 * parent's file, with the parent's pid and the fork's time in META; its
 * atexit handler finishes the file. A child that records nothing makes no
 * file (fork and exec).
 */
PP_TEST(recorder_fork_child_records_in_its_own_file) {
  if (pp_test_skip_forked_sessions())
    return;
  char path[4096], cpath[4200], quiet[4200];
  tpath(path, sizeof path, "parent.pptrace");
  start_session(PP_MODE_TRACE, path, 0);
  pp_thread_name("fork-parent");
  for (int i = 0; i < 100; i++) {
    PP_ZONE("fork-before");
  }
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int bad = 0;
    bad |= pp_is_running() != 0; /* until its first event */
    for (int i = 0; i < 100; i++) {
      PP_ZONE("fork-child");
      pp_zone z = pp_zone_begin_name("fork-child-dyn");
      pp_zone_end(z);
    }
    bad |= pp_is_running() != 1;
    exit(bad ? 3 : 0); /* atexit handlers run */
  }
  /* a child that records nothing and ends: no file */
  fflush(NULL);
  pid_t silent = fork();
  CHECK(silent >= 0);
  if (silent == 0)
    exit(0);
  int st = 0;
  CHECK_EQ(waitpid(pid, &st, 0), pid);
  CHECK(WIFEXITED(st));
  CHECK_EQ(WEXITSTATUS(st), 0);
  CHECK_EQ(waitpid(silent, &st, 0), silent);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  snprintf(quiet, sizeof quiet, "%s.%ld", path, (long)silent);
  CHECK(!file_exists(quiet));
  CHECK(pp_is_running());
  for (int i = 0; i < 100; i++) {
    PP_ZONE("fork-after");
  }
  CHECK_EQ(pp_shutdown(), PP_OK);

  pp_trace t;
  pp_analysis a = {0};
  load_trace(path, &t, &a);
  check_clean(&t);
  CHECK_EQ(t.pid, getpid());
  CHECK_EQ(zones_named(&a, NULL, "fork-before", 1), 100);
  CHECK_EQ(zones_named(&a, NULL, "fork-after", 1), 100);
  CHECK_EQ(events_named(&t, NULL, 0, "fork-child"), 0);
  CHECK_EQ(events_named(&t, NULL, 0, "fork-child-dyn"), 0);
  CHECK_EQ(a.prof.unclosed, 0);
  CHECK_EQ(a.prof.unmatched_ends, 0);
  pp_analysis_free(&a);
  pp_trace_free(&t);

  /* the child's own file: every zone, and where it came from */
  snprintf(cpath, sizeof cpath, "%s.%ld", path, (long)pid);
  load_trace(cpath, &t, &a);
  check_clean(&t);
  CHECK_EQ(t.pid, pid);
  CHECK_EQ(zones_named(&a, NULL, "fork-child", 1), 100);
  CHECK_EQ(zones_named(&a, NULL, "fork-child-dyn", 1), 100);
  CHECK_EQ(events_named(&t, NULL, 0, "fork-before"), 0);
  char ppid[32];
  snprintf(ppid, sizeof ppid, "%ld", (long)getpid());
  CHECK_STR(pp_trace_meta(&t, "process.parent_pid"), ppid);
  CHECK(pp_trace_meta(&t, "process.fork_ns") != NULL);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* Many short-lived forked children, each recording 1,000 zones and
 * ending with exit(): every zone of every child is in its file. */
/* n zones at one site, in whichever process calls it. */
static void shared_zones(int n) {
  for (int i = 0; i < n; i++) {
    PP_ZONE("shared");
  }
}

/* A zone the program and its forked children record at one site is one
 * zone of the run: `pipeprof report` of the directory shows one row with
 * every process's calls, the summary JSON one zone, and the streamed
 * Chrome export every call; the threads still say which process. */
PP_TEST_T(recorder_fork_zones_of_all_processes_are_one_zone, 120) {
  if (pp_test_skip_forked_sessions())
    return;
  char dir[4096], path[4200];
  tpath(dir, sizeof dir, "run");
  CHECK_EQ(mkdir(dir, 0755), 0);
  snprintf(path, sizeof path, "%s/app.pptrace", dir);
  start_session(PP_MODE_TRACE, path, 0);
  pid_t kids[3];
  for (int k = 0; k < 3; k++) {
    fflush(NULL);
    kids[k] = fork();
    CHECK(kids[k] >= 0);
    if (kids[k] == 0) {
      shared_zones(100);
      exit(0);
    }
  }
  for (int k = 0; k < 3; k++) {
    int st = 0;
    CHECK_EQ(waitpid(kids[k], &st, 0), kids[k]);
  }
  shared_zones(50);
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_cli_result r = pp_test_cli("report '%s'", dir);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "\nshared    350 ");
  /* one row in the zones table; each process's part in zones by process */
  const char *again = strstr(r.out, "\nshared ");
  const char *pz = strstr(r.out, "\nzones by process (");
  CHECK(again && pz && again < pz);
  const char *next = strstr(again + 1, "\nshared ");
  CHECK(next && next > pz);
  int parts = 0;
  for (; next; next = strstr(next + 1, "\nshared "))
    parts++;
  CHECK_EQ(parts, 4);
  pp_cli_result_free(&r);
  r = pp_test_cli("export --format json '%s'", dir);
  CHECK_EQ(r.rc, 0);
  const char *zs = strstr(r.out, "\"zones\":[");
  CHECK(zs != NULL);
  CHECK_CONTAINS(zs, "{\"name\":\"shared\",");
  CHECK_CONTAINS(zs, "\"count\":350,"); /* not 300 + 50 */
  CHECK(strstr(zs, "\"count\":300,") == NULL);
  CHECK(strstr(zs, "\"count\":50,") == NULL);
  /* and each process's part */
  const char *pzj = strstr(r.out, "\"zones_by_process\":[");
  CHECK(pzj != NULL && pzj < zs);
  CHECK_CONTAINS(pzj, "\"zone\":\"shared\"");
  CHECK_CONTAINS(pzj, "\"count\":50,");
  pp_cli_result_free(&r);
  char chrome[4300];
  snprintf(chrome, sizeof chrome, "%s/t.json", dir);
  r = pp_test_cli("export --format chrome '%s' -o '%s'", dir, chrome);
  CHECK_EQ(r.rc, 0);
  pp_cli_result_free(&r);
  char *js = pp_test_slurp(chrome, NULL);
  CHECK(js != NULL);
  int n = 0;
  for (const char *p = js; (p = strstr(p, "\"name\":\"shared\"")); p++)
    n++;
  CHECK_EQ(n, 350);
  free(js);
}

/* A child that ends with _exit() finishes its file first (the library's
 * _exit); one killed (SIGKILL) cannot, and its durable rings are salvaged
 * by the report (tests/test-durable.c); one killed with its rings off
 * (PIPEPROF_RINGS_DIR=off) loses what its writer had not drained: the
 * report of the run says which process did not finish its file, never
 * nothing. */
PP_TEST_T(recorder_fork_children_exit_and_kill, 120) {
  if (pp_test_skip_forked_sessions())
    return;
  char dir[4096], path[4200];
  tpath(dir, sizeof dir, "run");
  CHECK_EQ(mkdir(dir, 0755), 0);
  snprintf(path, sizeof path, "%s/app.pptrace", dir);
  start_session(PP_MODE_TRACE, path, 0);
  pid_t kids[3];
  for (int k = 0; k < 3; k++) {
    fflush(NULL);
    kids[k] = fork();
    CHECK(kids[k] >= 0);
    if (kids[k] == 0) {
      if (k == 2) /* read when the child's session starts */
        setenv("PIPEPROF_RINGS_DIR", "off", 1);
      shared_zones(100);
      if (k == 0)
        _exit(0); /* no atexit handler: the library's _exit finishes */
      raise(SIGKILL);
    }
  }
  for (int k = 0; k < 3; k++) {
    int st = 0;
    CHECK_EQ(waitpid(kids[k], &st, 0), kids[k]);
  }
  CHECK_EQ(pp_shutdown(), PP_OK);
  char cpath[4300];
  snprintf(cpath, sizeof cpath, "%s.%ld", path, (long)kids[0]);
  pp_trace t;
  pp_analysis a = {0};
  load_trace(cpath, &t, &a);
  check_clean(&t); /* an END chunk: finished */
  CHECK_EQ(zones_named(&a, NULL, "shared", 1), 100);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  pp_cli_result r = pp_test_cli("report '%s'", dir);
  CHECK_EQ(r.rc, 0);
  char want[200];
  snprintf(want, sizeof want, "\nwarning: 1 of the run's processes did not "
                              "finish their files (pid %ld: killed, or ended "
                              "with _exit)",
           (long)kids[2]);
  CHECK_CONTAINS(r.out, want);
  snprintf(want, sizeof want, "note: process %ld ended before finishing its "
                              "trace (salvaged)",
           (long)kids[1]);
  CHECK_CONTAINS(r.out, want);
  /* how each process ended, in the header's list of them */
  snprintf(want, sizeof want, "%ld pp-tests (pp_shutdown)", (long)getpid());
  CHECK_CONTAINS(r.out, want);
  snprintf(want, sizeof want, "%ld pp-tests (_exit)", (long)kids[0]);
  CHECK_CONTAINS(r.out, want);
  snprintf(want, sizeof want, "%ld pp-tests (salvaged)", (long)kids[1]);
  CHECK_CONTAINS(r.out, want);
  snprintf(want, sizeof want, "%ld pp-tests (did not finish its file)",
           (long)kids[2]);
  CHECK_CONTAINS(r.out, want);
  /* the processes' table: each, how it ended, its zones */
  CHECK_CONTAINS(r.out, "\nprocesses (each process that recorded");
  const char *tab = strstr(r.out, "\nprocesses (each process that recorded");
  snprintf(want, sizeof want, "\n%ld ", (long)kids[0]);
  const char *row = tab ? strstr(tab, want) : NULL;
  const char *eol = row ? strchr(row + 1, '\n') : NULL;
  CHECK(row && eol && memmem(row, (size_t)(eol - row), " pp-tests ", 10) &&
        memmem(row, (size_t)(eol - row), " _exit ", 7));
  pp_cli_result_free(&r);
  r = pp_test_cli("export --format json '%s'", dir);
  CHECK_EQ(r.rc, 0);
  snprintf(want, sizeof want, "{\"pid\":%ld,\"name\":\"pp-tests\",\"ended\":"
                              "\"_exit\",\"threads\":1,\"zones\":100,",
           (long)kids[0]);
  CHECK_CONTAINS(r.out, want);
  /* the killed one's zones, every one, salvaged */
  snprintf(want, sizeof want, "{\"pid\":%ld,\"name\":\"pp-tests\",\"ended\":"
                              "\"salvaged\",\"threads\":1,\"zones\":100,",
           (long)kids[1]);
  CHECK_CONTAINS(r.out, want);
  /* (its events may or may not have been drained before the kill) */
  snprintf(want, sizeof want, "{\"pid\":%ld,\"name\":\"pp-tests\",\"ended\":"
                              "\"did not finish its file\",",
           (long)kids[2]);
  CHECK_CONTAINS(r.out, want);
  pp_cli_result_free(&r);
}

/* A crash (abort, a fault) or SIGTERM in a recording process: the
 * library's handler finishes the file first, then the process dies of
 * the signal as it would have. */
PP_TEST_T(recorder_crash_signals_finish_the_file, 120) {
  if (pp_test_skip_forked_sessions())
    return;
  static const int sigs[] = {SIGABRT, SIGSEGV, SIGTERM};
  for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++) {
    char path[4096], name[64];
    snprintf(name, sizeof name, "crash-%d.pptrace", sigs[k]);
    tpath(path, sizeof path, name);
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      pp_config cfg;
      pp_config_init(&cfg);
      cfg.out_path = path;
      if (pp_init(&cfg) != PP_OK)
        _exit(3);
      shared_zones(500);
      volatile uintptr_t bad = 8; /* an address nothing maps */
      if (sigs[k] == SIGSEGV)
        *(volatile int *)bad = 1; /* a fault */
      else if (sigs[k] == SIGABRT)
        abort();
      else
        raise(SIGTERM);
      _exit(4);
    }
    int st = 0;
    CHECK_EQ(waitpid(pid, &st, 0), pid);
    CHECK(WIFSIGNALED(st));
    CHECK_EQ(WTERMSIG(st), sigs[k]);
    pp_trace t;
    pp_analysis a = {0};
    load_trace(path, &t, &a);
    check_clean(&t);
    CHECK_EQ(zones_named(&a, NULL, "shared", 1), 500);
    const char *how = pp_trace_meta(&t, "process.end");
    CHECK(how && strncmp(how, "signal SIG", 10) == 0);
    CHECK_STR(how + 7, sigs[k] == SIGABRT   ? "SIGABRT"
                       : sigs[k] == SIGSEGV ? "SIGSEGV"
                                            : "SIGTERM");
    pp_analysis_free(&a);
    pp_trace_free(&t);
  }
}

PP_TEST_T(recorder_fork_many_children_all_counted, 120) {
  if (pp_test_skip_forked_sessions())
    return;
  enum { KIDS = 50, ZONES = 1000 };
  char path[4096];
  tpath(path, sizeof path, "many.pptrace");
  start_session(PP_MODE_TRACE, path, 0);
  pid_t kids[KIDS];
  for (int k = 0; k < KIDS; k++) {
    fflush(NULL);
    kids[k] = fork();
    CHECK(kids[k] >= 0);
    if (kids[k] == 0) {
      for (int i = 0; i < ZONES; i++) {
        PP_ZONE("short-lived");
      }
      exit(0);
    }
  }
  for (int k = 0; k < KIDS; k++) {
    int st = 0;
    CHECK_EQ(waitpid(kids[k], &st, 0), kids[k]);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  CHECK_EQ(pp_shutdown(), PP_OK);
  uint64_t total = 0;
  for (int k = 0; k < KIDS; k++) {
    char cpath[4200];
    snprintf(cpath, sizeof cpath, "%s.%ld", path, (long)kids[k]);
    pp_trace t;
    pp_analysis a = {0};
    load_trace(cpath, &t, &a);
    check_clean(&t);
    total += (uint64_t)zones_named(&a, NULL, "short-lived", 1);
    pp_analysis_free(&a);
    pp_trace_free(&t);
  }
  CHECK_EQ_U(total, (uint64_t)KIDS * ZONES);
}

PP_TEST(recorder_fork_child_own_session) {
  if (pp_test_skip_forked_sessions())
    return;
  char path[4096], cpath[4096];
  tpath(path, sizeof path, "parent.pptrace");
  tpath(cpath, sizeof cpath, "child.pptrace");
  start_session(PP_MODE_TRACE, path, 0);
  for (int i = 0; i < 50; i++) {
    PP_ZONE("own-parent");
  }
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    pp_config cfg;
    pp_config_init(&cfg);
    cfg.out_path = cpath;
    if (pp_init(&cfg) != PP_OK)
      _exit(3);
    for (int i = 0; i < 70; i++) {
      PP_ZONE("own-child");
    }
    _exit(pp_shutdown() == PP_OK ? 0 : 4);
  }
  int st = 0;
  CHECK_EQ(waitpid(pid, &st, 0), pid);
  CHECK(WIFEXITED(st));
  CHECK_EQ(WEXITSTATUS(st), 0);
  CHECK_EQ(pp_shutdown(), PP_OK);

  pp_trace t;

  pp_analysis a = {0};
  load_trace(cpath, &t, &a);
  check_clean(&t);
  CHECK_EQ(t.pid, pid);
  CHECK_EQ(zones_named(&a, NULL, "own-child", 1), 70);
  CHECK_EQ(events_named(&t, NULL, 0, "own-parent"), 0);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  load_trace(path, &t, &a);
  check_clean(&t);
  CHECK_EQ(zones_named(&a, NULL, "own-parent", 1), 50);
  CHECK_EQ(events_named(&t, NULL, 0, "own-child"), 0);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* Processes that share PIPEPROF_OUT and run at the same time (siblings: no
 * owner rule between them) each get a file: the one holding the file keeps
 * it, the other writes OUT.<pid>. */
PP_TEST_T(recorder_env_out_claimed_by_running_session, 60) {
  char path[4096], exe[4096], cpath[4200];
  tpath(path, sizeof path, "claimed.pptrace");
  snprintf(exe, sizeof exe, "%s/pipeprof-example-pipeline", pp_test_bindir());
  setenv("PIPEPROF", "1", 1);
  setenv("PIPEPROF_OUT", path, 1);
  unsetenv("PIPEPROF_OWNER_PID");
  CHECK_EQ(pp_init_from_env(), PP_OK);
  CHECK_EQ(pp_init_from_env(), PP_EBUSY); /* keeps its claim */
  for (int i = 0; i < 20; i++) {
    PP_ZONE("holder");
  }
  unsetenv("PIPEPROF_OWNER_PID"); /* the next process is no descendant */
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0)
      dup2(null, STDOUT_FILENO);
    execl(exe, exe, "--frames", "3", "--quiet", (char *)NULL);
    _exit(127);
  }
  int st = 0;
  CHECK_EQ(waitpid(pid, &st, 0), pid);
  CHECK(WIFEXITED(st));
  CHECK_EQ(WEXITSTATUS(st), 0);
  CHECK_EQ(pp_shutdown(), PP_OK);
  unsetenv("PIPEPROF");
  unsetenv("PIPEPROF_OUT");

  pp_trace t;

  pp_analysis a = {0};
  load_trace(path, &t, &a);
  check_clean(&t);
  CHECK_EQ(t.pid, getpid());
  CHECK_EQ(zones_named(&a, NULL, "holder", 1), 20);
  CHECK_EQ(events_named(&t, NULL, 0, "detect"), 0);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  snprintf(cpath, sizeof cpath, "%s.%ld", path, (long)pid);
  load_trace(cpath, &t, &a);
  check_clean(&t);
  CHECK_EQ(t.pid, pid);
  CHECK_EQ(zones_named(&a, NULL, "detect", 1), 3);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* ---- threads that exit before shutdown ------------------------------------
 */

#define EX_THREADS 6
#define EX_ZONES 1000

static const pp_srcloc ex_locs[EX_THREADS] = {
    {"ex-zone-0", NULL, NULL, 0, PP_KIND_ZONE},
    {"ex-zone-1", NULL, NULL, 0, PP_KIND_ZONE},
    {"ex-zone-2", NULL, NULL, 0, PP_KIND_ZONE},
    {"ex-zone-3", NULL, NULL, 0, PP_KIND_ZONE},
    {"ex-zone-4", NULL, NULL, 0, PP_KIND_ZONE},
    {"ex-zone-5", NULL, NULL, 0, PP_KIND_ZONE}};

static void *ex_worker(void *arg) {
  int i = (int)(intptr_t)arg;
  char name[32];
  snprintf(name, sizeof name, "ex-thread-%d", i);
  if (i % 2 == 0)
    pp_thread_name(name); /* named before recording */
  for (int k = 0; k < EX_ZONES; k++) {
    pp_zone z = pp_zone_begin(&ex_locs[i]);
    PP_COUNTER_ADD("ex-count", 1);
    pp_zone_end(z);
  }
  if (i % 2 == 1)
    pp_thread_name(name); /* named after recording, just before exit */
  return NULL;
}

PP_TEST(recorder_threads_exit_early) {
  char path[4096];
  tpath(path, sizeof path, "ex.pptrace");
  start_session(PP_MODE_TRACE, path, 0);
  pthread_t th[EX_THREADS];
  /* First half: joined, then a few flush periods so that the writer drains
   * and reaps them while the session runs. */
  for (int i = 0; i < EX_THREADS / 2; i++)
    CHECK_EQ(pthread_create(&th[i], NULL, ex_worker, (void *)(intptr_t)i), 0);
  for (int i = 0; i < EX_THREADS / 2; i++)
    CHECK_EQ(pthread_join(th[i], NULL), 0);
  sleep_ms(50);
  /* Second half: exit right before shutdown. */
  for (int i = EX_THREADS / 2; i < EX_THREADS; i++)
    CHECK_EQ(pthread_create(&th[i], NULL, ex_worker, (void *)(intptr_t)i), 0);
  for (int i = EX_THREADS / 2; i < EX_THREADS; i++)
    CHECK_EQ(pthread_join(th[i], NULL), 0);
  CHECK_EQ(pp_shutdown(), PP_OK);

  pp_trace t;

  pp_analysis a = {0};
  load_trace(path, &t, &a);
  check_clean(&t);
  CHECK_EQ(total_dropped(&t), 0);
  for (int i = 0; i < EX_THREADS; i++) {
    char name[32], zname[32];
    snprintf(name, sizeof name, "ex-thread-%d", i);
    snprintf(zname, sizeof zname, "ex-zone-%d", i);
    const pp_thread *x = thread_named(&t, name);
    const pp_thread_figures *xf = tb_fig(&a, x);
    if (!x)
      PP_FAIL("thread %s missing from the trace", name);
    CHECK_EQ(zones_named(&a, x, zname, 1), EX_ZONES);
    CHECK_EQ(xf->nzones, EX_ZONES);
    CHECK_EQ(events_named(&t, x, PPT_EV_COUNTER_ADD, "ex-count"), EX_ZONES);
  }
  const pp_counter_stats *c = cstats(&a, "ex-count");
  CHECK(c != NULL);
  CHECK_EQ(c->samples, EX_THREADS * EX_ZONES);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* ---- a program that never calls pp_shutdown ---------------------------- */

static void *ns_worker(void *arg) {
  (void)arg;
  pp_thread_name("ns-worker");
  for (int i = 0; i < 500; i++) {
    PP_ZONE("ns-worker-zone");
  }
  return NULL;
}

PP_TEST(recorder_exit_without_shutdown) {
  char path[4096];
  tpath(path, sizeof path, "ns.pptrace");
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    pp_config cfg;
    pp_config_init(&cfg);
    cfg.out_path = path;
    if (pp_init(&cfg) != PP_OK)
      _exit(3);
    pthread_t th;
    if (pthread_create(&th, NULL, ns_worker, NULL) != 0)
      _exit(4);
    for (int i = 0; i < 1000; i++) {
      PP_ZONE("ns-zone");
      PP_COUNTER_SET("ns-i", i);
    }
    pthread_join(th, NULL);
    exit(0); /* no pp_shutdown: the library's atexit handler finishes */
  }
  int st = 0;
  CHECK_EQ(waitpid(pid, &st, 0), pid);
  CHECK(WIFEXITED(st));
  CHECK_EQ(WEXITSTATUS(st), 0);
  pp_trace t;
  pp_analysis a = {0};
  load_trace(path, &t, &a);
  check_clean(&t);
  CHECK_EQ(zones_named(&a, NULL, "ns-zone", 1), 1000);
  CHECK_EQ(zones_named(&a, NULL, "ns-worker-zone", 1), 500);
  CHECK(thread_named(&t, "ns-worker") != NULL);
  CHECK_EQ(events_named(&t, NULL, PPT_EV_COUNTER_SET, "ns-i"), 1000);
  CHECK_EQ(a.prof.unclosed, 0);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* ---- kill -9, SIGINT, SIGTERM ---------------------------------------------
 */

typedef struct crash_shared {
  _Atomic uint64_t done; /* zones completed by the child */
  _Atomic int ready;
} crash_shared;

/* Fork a child that records zones until it is killed, publishing the count
 * of completed zones after each one. */
static pid_t crash_child(const char *path, crash_shared *sh) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid != 0)
    return pid;
  /* The test may run with SIGINT ignored (a background job); the library
   * only installs its handler over the default action. */
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  if (pp_init(&cfg) != PP_OK)
    _exit(3);
  pp_thread_name("crash-main");
  atomic_store(&sh->ready, 1);
  for (;;) {
    {
      PP_ZONE("crash-work");
      PP_COUNTER_ADD("crash-count", 1);
      struct timespec ts = {0, 50000};
      nanosleep(&ts, NULL);
    }
    atomic_fetch_add(&sh->done, 1);
  }
}

static crash_shared *crash_map(void) {
  void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                 -1, 0);
  CHECK(p != MAP_FAILED);
  memset(p, 0, sizeof(crash_shared));
  return p;
}

static void crash_wait_ready(pid_t pid, crash_shared *sh) {
  for (int i = 0; i < 10000 && !atomic_load(&sh->ready); i++) {
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid)
      PP_FAIL("recording child ended early (status 0x%x)", st);
    sleep_ms(1);
  }
  CHECK(atomic_load(&sh->ready));
}

static time_t mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec;
}

/* The arena of the running trace at path (META durable.rings), into
 * arena; 0 while the file does not say it yet. */
static int trace_arena(const char *path, char *arena, size_t n) {
  pp_trace t;
  char err[512];
  if (pp_trace_read_file(path, &t, err, sizeof err) != 0)
    return 0;
  const char *rings = pp_trace_meta(&t, "durable.rings");
  if (rings)
    snprintf(arena, n, "%s", rings);
  pp_trace_free(&t);
  return rings != NULL;
}

/* Closed zones called name in what the writer of the trace at path has
 * committed: the file up to the commit offset in its arena's header
 * (docs/internals/durable.md: whole chunks, written before the offset
 * moves), copied to copy and read from there. */
static uint64_t committed_zones(const char *path, const char *arena,
                                const char *copy, const char *name) {
  int fd = open(arena, O_RDONLY);
  CHECK(fd >= 0);
  void *m = mmap(NULL, sizeof(pp__arena_hdr), PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  CHECK(m != MAP_FAILED);
  pp__arena_hdr *h = m;
  (void)atomic_load_explicit(&h->commit_pass, memory_order_acquire);
  uint64_t off = atomic_load_explicit(&h->commit_off, memory_order_relaxed);
  munmap(m, sizeof(pp__arena_hdr));
  if (off == 0)
    return 0;
  char *bytes = malloc(off);
  CHECK(bytes != NULL);
  FILE *in = fopen(path, "rb");
  CHECK(in != NULL);
  CHECK_EQ(fread(bytes, 1, off, in), off); /* the file holds it whole */
  fclose(in);
  FILE *out = fopen(copy, "wb");
  CHECK(out != NULL);
  CHECK_EQ(fwrite(bytes, 1, off, out), off);
  CHECK_EQ(fclose(out), 0);
  free(bytes);
  pp_trace t;
  pp_analysis a = {0};
  load_trace(copy, &t, &a);
  CHECK_EQ(t.diag.chunks_bad, 0);
  uint64_t n = zones_named(&a, NULL, name, 1);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  return n;
}

/* kill -9 loses nothing the writer committed: the child is killed once
 * its writer has provably committed the zones it had completed at some
 * instant (n_before), however long the machine takes to get there; the
 * file then still holds every committed zone, and the salvage adds the
 * rest from the durable rings (every zone the child completed). */
PP_TEST(recorder_kill9_recovery) {
  char path[4096], arena[4096], copy[4200];
  tpath(path, sizeof path, "kill9.pptrace");
  tpath(copy, sizeof copy, "committed.pptrace");
  crash_shared *sh = crash_map();
  pid_t pid = crash_child(path, sh);
  CHECK(pid > 0);
  crash_wait_ready(pid, sh);
  /* deadlines only a broken recorder reaches */
  time_t deadline = mono_s() + 30;
  while (atomic_load(&sh->done) < 100 ||
         !trace_arena(path, arena, sizeof arena)) {
    if (mono_s() > deadline)
      PP_FAIL("after 30 s: %llu zones completed, the trace names its "
              "rings: %s",
              (unsigned long long)atomic_load(&sh->done),
              trace_arena(path, arena, sizeof arena) ? "yes" : "no");
    sleep_ms(5);
  }
  uint64_t n_before = atomic_load(&sh->done), committed = 0;
  deadline = mono_s() + 30;
  while ((committed = committed_zones(path, arena, copy, "crash-work")) <
         n_before) {
    if (mono_s() > deadline)
      PP_FAIL("after 30 s the writer had committed %llu of the %llu zones "
              "completed before",
              (unsigned long long)committed, (unsigned long long)n_before);
    sleep_ms(5);
  }
  CHECK_EQ(kill(pid, SIGKILL), 0);
  int st = 0;
  CHECK_EQ(waitpid(pid, &st, 0), pid);
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  uint64_t done = atomic_load(&sh->done); /* all it completed */
  CHECK_GE(done, committed);

  pp_trace t;

  pp_analysis a = {0};
  load_trace(path, &t, &a);
  CHECK_EQ(t.diag.clean_end, 0);
  CHECK_EQ(t.diag.chunks_bad, 0);
  uint64_t got = zones_named(&a, NULL, "crash-work", 1);
  printf("# %llu zones completed, %llu committed before the kill, %llu in "
         "the file, %llu completed in all\n",
         (unsigned long long)n_before, (unsigned long long)committed,
         (unsigned long long)got, (unsigned long long)done);
  if (got < committed)
    PP_FAIL("only %llu of the %llu zones committed before the kill are in "
            "the file",
            (unsigned long long)got, (unsigned long long)committed);
  CHECK(thread_named(&t, "crash-main") != NULL);
  FILE *devnull = fopen("/dev/null", "w");
  CHECK(devnull != NULL);
  CHECK_EQ(pp_report_text(devnull, &a, NULL), 0);
  fclose(devnull);
  pp_analysis_free(&a);
  pp_trace_free(&t);

  char *out = NULL;
  int rc =
      pp_test_run(&out, "'%s/pipeprof' report '%s'", pp_test_bindir(), path);
  if (rc != 0)
    PP_FAIL("pipeprof report exit %d:\n%s", rc, out ? out : "");
  CHECK_CONTAINS(out, "crash-work");
  /* the report salvaged the rest from the durable rings (test-durable.c) */
  CHECK_CONTAINS(out, "recovered from its durable rings");
  free(out);
  /* into the file: every zone the child completed is there now */
  load_trace(path, &t, &a);
  got = zones_named(&a, NULL, "crash-work", 1);
  if (got < done)
    PP_FAIL("after the salvage %llu zones are in the file, the child "
            "completed %llu",
            (unsigned long long)got, (unsigned long long)done);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  munmap(sh, 4096);
}

static void signal_case(int sig) {
  char path[4096];
  tpath(path, sizeof path, "sig.pptrace");
  crash_shared *sh = crash_map();
  pid_t pid = crash_child(path, sh);
  CHECK(pid > 0);
  crash_wait_ready(pid, sh);
  sleep_ms(300);
  CHECK_EQ(kill(pid, sig), 0);
  int st = 0;
  CHECK_EQ(waitpid(pid, &st, 0), pid);
  if (!WIFSIGNALED(st) || WTERMSIG(st) != sig)
    PP_FAIL("child status 0x%x, expected death by signal %d", st, sig);
  /* After the handler ran the child recorded nothing more: every zone it
   * completed is in the file (plus possibly one whose end was recorded
   * just before the count was published). */
  uint64_t done = atomic_load(&sh->done);
  CHECK_GT(done, 0);

  pp_trace t;

  pp_analysis a = {0};
  load_trace(path, &t, &a);
  check_clean(&t);
  uint64_t got = zones_named(&a, NULL, "crash-work", 1);
  if (got < done || got > done + 1)
    PP_FAIL("%llu closed zones in the file, the child completed %llu",
            (unsigned long long)got, (unsigned long long)done);
  CHECK_LE(zones_named(&a, NULL, "crash-work", 0), got + 1);
  CHECK_EQ(total_dropped(&t), 0);
  pp_analysis_free(&a);
  pp_trace_free(&t);

  char *out = NULL;
  int rc =
      pp_test_run(&out, "'%s/pipeprof' report '%s'", pp_test_bindir(), path);
  if (rc != 0)
    PP_FAIL("pipeprof report exit %d:\n%s", rc, out ? out : "");
  CHECK_CONTAINS(out, "crash-work");
  CHECK(strstr(out, "without END chunk") == NULL);
  CHECK(strstr(out, "truncated") == NULL);
  free(out);
  munmap(sh, 4096);
}

PP_TEST(recorder_sigint_flushes) { signal_case(SIGINT); }

PP_TEST(recorder_sigterm_flushes) { signal_case(SIGTERM); }

/* A program with a SIGTERM handler of its own keeps it. */
static volatile sig_atomic_t own_handler_hit;
static void own_handler(int sig) {
  (void)sig;
  own_handler_hit = 1;
}

PP_TEST(recorder_keeps_program_signal_handler) {
  char path[4096];
  tpath(path, sizeof path, "own.pptrace");
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = own_handler;
  sigemptyset(&sa.sa_mask);
  CHECK_EQ(sigaction(SIGTERM, &sa, NULL), 0);
  start_session(PP_MODE_TRACE, path, 0);
  struct sigaction cur;
  CHECK_EQ(sigaction(SIGTERM, NULL, &cur), 0);
  CHECK(cur.sa_handler == own_handler);
  raise(SIGTERM);
  CHECK_EQ(own_handler_hit, 1);
  CHECK(pp_is_running());
  CHECK_EQ(pp_shutdown(), PP_OK);
  CHECK_EQ(sigaction(SIGTERM, NULL, &cur), 0);
  CHECK(cur.sa_handler == own_handler);
}

/* Counters and frame streams are identified by name, whichever call site
 * records them (see canon_locs in src/analyze/analyze.c): a stats-mode file
 * must report them as a trace-mode file does. */
static void dup_work(void) {
  for (int i = 0; i < 10; i++) {
    PP_COUNTER_SET("dup-counter", i); /* site 1 */
    PP_FRAME_MARK("dup-frames");      /* site 1 */
  }
  for (int i = 0; i < 10; i++) {
    PP_COUNTER_SET("dup-counter", 100 + i); /* site 2 */
    pp_frame_mark("dup-frames");            /* site 3 (interned) */
  }
}

static size_t count_named_counters(const pp_analysis *a, const char *name) {
  const pp_trace *t = a->trace;
  size_t n = 0;
  for (size_t i = 0; i < a->prof.ncounters; i++)
    n += loc_is(t, a->prof.counters[i].loc, name);
  return n;
}

static size_t count_named_frames(const pp_analysis *a, const char *name) {
  const pp_trace *t = a->trace;
  size_t n = 0;
  for (size_t i = 0; i < a->prof.nframes; i++)
    n += loc_is(t, a->prof.frames[i].loc, name);
  return n;
}

PP_TEST(recorder_stats_mode_shared_names) {
  char spath[4096], tp[4096];
  tpath(spath, sizeof spath, "stats.pptrace");
  tpath(tp, sizeof tp, "trace.pptrace");
  start_session(PP_MODE_STATS, spath, 0);
  dup_work();
  CHECK_EQ(pp_shutdown(), PP_OK);
  start_session(PP_MODE_TRACE, tp, 0);
  dup_work();
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace s, t;
  pp_analysis a = {0};
  pp_analysis s_a = {0};
  load_trace(spath, &s, &s_a);
  load_trace(tp, &t, &a);
  const pp_analysis *both[2] = {&a, &s_a};
  for (int m = 0; m < 2; m++) {
    const pp_analysis *x = both[m];
    if (count_named_counters(x, "dup-counter") != 1 ||
        count_named_frames(x, "dup-frames") != 1)
      PP_FAIL("%s mode: %zu counter rows and %zu frame rows named "
              "dup-counter / dup-frames, expected one each",
              m ? "stats" : "trace", count_named_counters(x, "dup-counter"),
              count_named_frames(x, "dup-frames"));
    const pp_counter_stats *c = cstats(x, "dup-counter");
    CHECK_EQ(c->samples, 20);
    CHECK(c->min == 0 && c->max == 109 && c->last == 109);
    CHECK_EQ(fstats(x, "dup-frames")->frames, 20);
  }
  pp_analysis_free(&s_a);
  pp_trace_free(&s);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* Flight dumps taken while other threads keep overwriting their rings:
 * every dump is a complete, undamaged file holding recent zones of every
 * thread (under TSan this also checks the dumper's reads). */
#define FC_THREADS 4

static _Atomic int fc_stop, fc_pause;
static _Atomic int fc_parked[FC_THREADS];
static _Atomic uint64_t fc_done[FC_THREADS];

static const pp_srcloc fc_locs[FC_THREADS] = {
    {"fc-zone-0", NULL, NULL, 0, PP_KIND_ZONE},
    {"fc-zone-1", NULL, NULL, 0, PP_KIND_ZONE},
    {"fc-zone-2", NULL, NULL, 0, PP_KIND_ZONE},
    {"fc-zone-3", NULL, NULL, 0, PP_KIND_ZONE}};

static void *fc_worker(void *arg) {
  int i = (int)(intptr_t)arg;
  char name[32];
  snprintf(name, sizeof name, "fc-thread-%d", i);
  pp_thread_name(name);
  while (!atomic_load(&fc_stop)) {
    if (atomic_load(&fc_pause)) {
      atomic_store(&fc_parked[i], 1);
      while (atomic_load(&fc_pause) && !atomic_load(&fc_stop))
        sleep_ms(1);
      atomic_store(&fc_parked[i], 0);
      continue;
    }
    pp_zone z = pp_zone_begin(&fc_locs[i]);
    PP_COUNTER_ADD("fc-count", 1);
    pp_zone_end(z);
    atomic_fetch_add(&fc_done[i], 1);
  }
  return NULL;
}

PP_TEST_T(recorder_flight_dump_concurrent, 120) {
  char path[4096];
  tpath(path, sizeof path, "fc.pptrace");
  start_session(PP_MODE_FLIGHT, path, 64);
  pthread_t th[FC_THREADS];
  for (int i = 0; i < FC_THREADS; i++)
    CHECK_EQ(pthread_create(&th[i], NULL, fc_worker, (void *)(intptr_t)i), 0);
  /* Every ring has wrapped at least once before the first dump. */
  for (int i = 0; i < FC_THREADS; i++)
    while (atomic_load(&fc_done[i]) < 5000)
      sleep_ms(1);
  for (int k = 0; k < 8; k++) {
    char dump[4200];
    snprintf(dump, sizeof dump, "%s.%d", path, k);
    CHECK_EQ(pp_flight_dump(dump), PP_OK);
    pp_trace t;
    pp_analysis a = {0};
    load_trace(dump, &t, &a);
    check_clean(&t);
    for (int i = 0; i < FC_THREADS; i++) {
      char name[32], zname[32];
      snprintf(name, sizeof name, "fc-thread-%d", i);
      snprintf(zname, sizeof zname, "fc-zone-%d", i);
      const pp_thread *x = thread_named(&t, name);
      const pp_thread_figures *xf = tb_fig(&a, x);
      if (!x)
        PP_FAIL("dump %d: thread %s missing", k, name);
      /* Ring of 4096 slots, 4 per iteration. */
      CHECK_LE(x->nev, 4096);
      for (size_t j = 0; j < xf->nzones; j++)
        CHECK(loc_is(&t, xf->zones[j].loc, zname));
    }
    pp_analysis_free(&a);
    pp_trace_free(&t);
  }
  /* A dump keeps only the slots no producer overwrote while it copied, so
   * when the dumping thread is descheduled mid-copy (sanitizer builds,
   * loaded machines) a busy thread can be missing from a dump taken while
   * it records. With the producers parked, a dump holds each full ring:
   * 1024 iterations of 4 slots. */
  atomic_store(&fc_pause, 1);
  for (int i = 0; i < FC_THREADS; i++)
    while (!atomic_load(&fc_parked[i]))
      sleep_ms(1);
  char dump[4200];
  snprintf(dump, sizeof dump, "%s.parked", path);
  CHECK_EQ(pp_flight_dump(dump), PP_OK);
  pp_trace q;
  pp_analysis q_a = {0};
  load_trace(dump, &q, &q_a);
  check_clean(&q);
  for (int i = 0; i < FC_THREADS; i++) {
    char name[32], zname[32];
    snprintf(name, sizeof name, "fc-thread-%d", i);
    snprintf(zname, sizeof zname, "fc-zone-%d", i);
    const pp_thread *x = thread_named(&q, name);
    CHECK(x != NULL);
    CHECK_GE(zones_named(&q_a, x, zname, 1), 1023);
    CHECK_GE(events_named(&q, x, PPT_EV_COUNTER_ADD, "fc-count"), 1023);
  }
  pp_analysis_free(&q_a);
  pp_trace_free(&q);
  atomic_store(&fc_stop, 1);
  for (int i = 0; i < FC_THREADS; i++)
    CHECK_EQ(pthread_join(th[i], NULL), 0);
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis a = {0};
  load_trace(path, &t, &a);
  check_clean(&t);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* The writer records its own CPU time and the process's at the end of a
 * session; the report puts them beside the estimated recording cost. The
 * writer does real work here (several passes over a busy thread), so its
 * CPU time is positive and cannot exceed the process's. */
PP_TEST(recorder_measured_costs) {
  char path[4096];
  tpath(path, sizeof path, "costs.pptrace");
  start_session(PP_MODE_TRACE, path, 0);
  for (int round = 0; round < 5; round++) {
    for (int i = 0; i < 20000; i++) {
      PP_ZONE("cost-zone");
    }
    sleep_ms(15); /* at least one periodic writer pass per round */
  }
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t = {0};
  pp_analysis a = {0};
  load_trace(path, &t, &a);
  check_clean(&t);
  const pp_profile *p = &a.prof;
  CHECK(p->writer_cpu_ns > 0);
  CHECK(p->process_cpu_ns > 0);
  CHECK(p->writer_cpu_ns <= p->process_cpu_ns);
  CHECK_EQ(p->sampler_cpu_ns, -1); /* no sampler in this session */
  CHECK(p->event_cost_ns > 0);
  const char *drop = pp_trace_meta(&t, "drop_cost_ns"); /* issue 12 */
  CHECK(drop != NULL && strtod(drop, NULL) > 0);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* The writer populates a thread's ring ahead of its write index, so the
 * recording thread does not take the page faults: after a pass, every page
 * from the ring's start to past the write index is resident (mincore), and
 * the populated mark is ahead of the write index. */
PP_TEST(recorder_ring_populated_ahead) {
  char path[4096];
  tpath(path, sizeof path, "prefault.pptrace");
  start_session(PP_MODE_TRACE, path, 4096); /* 4 MiB: 256K slots */
  for (int i = 0; i < 20000; i++) {
    PP_ZONE("prefault-zone");
  }
  pp__tstate *t = pp__thread_get();
  CHECK(t != NULL && t->ring != NULL);
  uint64_t w = atomic_load(&t->w);
  CHECK_GE(w, 40000);
  /* Wait for a writer pass to drain (and populate) this ring. */
  for (int i = 0; i < 400 && atomic_load(&t->r) < w; i++)
    sleep_ms(5);
  CHECK_EQ(atomic_load(&t->r), w);
  uint64_t ring_bytes = t->capacity * sizeof(pp__slot);
  uint64_t used = w * sizeof(pp__slot);
  CHECK(t->prefaulted > used);
  CHECK(t->prefaulted < ring_bytes); /* ahead, not the whole 4 MiB */
  long page = sysconf(_SC_PAGESIZE);
  size_t npages = (size_t)(t->prefaulted / (uint64_t)page);
  unsigned char *vec = malloc(npages);
  CHECK(vec != NULL);
  CHECK_EQ(mincore(t->ring, npages * (size_t)page, vec), 0);
  size_t resident = 0;
  for (size_t i = 0; i < npages; i++)
    resident += vec[i] & 1;
  CHECK_EQ(resident, npages);
  free(vec);
  CHECK_EQ(pp_shutdown(), PP_OK);
}

/* The writer hands a ring to its sinks in blocks; a block never ends
 * between the two slots of an event (pp__slots_block_end), and the values
 * of 40,001 slots of counter updates all arrive, in trace and stats
 * mode. */
PP_TEST(recorder_two_slot_event_across_sink_blocks) {
  for (int mode = 0; mode < 2; mode++) {
    char path[4096];
    tpath(path, sizeof path, mode ? "blocks-stats.pptrace" : "blocks.pptrace");
    pp_config cfg;
    pp_config_init(&cfg);
    cfg.mode = mode ? PP_MODE_STATS : PP_MODE_TRACE;
    cfg.out_path = path;
    cfg.buffer_kib = 4096; /* 262,144 slots: half is far above 40,001 */
    cfg.flush_ms = 1000;
    CHECK_EQ(pp_init(&cfg), PP_OK);
    {
      PP_ZONE("blocks-first");
    }
    for (int i = 0; i < 20000; i++)
      PP_COUNTER_SET("blocks-counter", i);
    CHECK_EQ(pp_shutdown(), PP_OK);
    pp_trace t;
    pp_analysis a = {0};
    load_trace(path, &t, &a);
    CHECK_EQ(total_dropped(&t), 0);
    const pp_counter_stats *c = cstats(&a, "blocks-counter");
    CHECK(c != NULL);
    CHECK_EQ(c->samples, 20000);
    CHECK(c->min == 0 && c->max == 19999 && c->last == 19999);
    CHECK(c->mean == 9999.5);
    pp_analysis_free(&a);
    pp_trace_free(&t);
  }
  /* A ring of a zone begin (one slot), then counter updates (two slots):
   * blocks of 4 end at 4 or 5 as the slot before the cut is a head or a
   * value slot. */
  pp__slot ring[16];
  uint64_t tag1 = (uint64_t)PPT_EV_ZONE_BEGIN << PP__TAG_SHIFT;
  uint64_t tag2 = (uint64_t)PPT_EV_COUNTER_SET << PP__TAG_SHIFT;
  uint64_t cont = (uint64_t)PPT_SLOT_CONT << PP__TAG_SHIFT;
  atomic_init(&ring[0].a, tag1);
  for (int i = 1; i < 16; i++)
    atomic_init(&ring[i].a, i % 2 ? tag2 : cont);
  for (int i = 0; i < 16; i++)
    atomic_init(&ring[i].ts, 0);
  CHECK_EQ(pp__slots_block_end(ring, 15, 0, 16, 4), 5); /* [3] is a head */
  CHECK_EQ(pp__slots_block_end(ring, 15, 1, 16, 4), 5); /* [4] is a value */
  CHECK_EQ(pp__slots_block_end(ring, 15, 1, 16, 3), 5); /* [3]: head */
  CHECK_EQ(pp__slots_block_end(ring, 15, 12, 16, 4), 16); /* the rest */
  /* indices wrap with the mask */
  CHECK_EQ(pp__slots_block_end(ring, 15, 16, 32, 4), 21);
}

/* A file that stops accepting writes mid-session (RLIMIT_FSIZE: writes
 * past 4 KiB fail with EFBIG; this test runs in a child process of its
 * own): the program records and runs on, nothing blocks, and pp_shutdown
 * reports the failure. */
PP_TEST(recorder_write_failure) {
  char path[4096];
  tpath(path, sizeof path, "full.pptrace");
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim = {4096, 4096};
  CHECK_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
  start_session(PP_MODE_TRACE, path, 0);
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 5000; i++) {
      PP_ZONE("full-zone");
    }
    sleep_ms(15); /* writer passes that fail */
  }
  CHECK_EQ(pp_shutdown(), PP_EIO);
  CHECK_CONTAINS(pp_last_error(), "full.pptrace");
  CHECK(!pp_is_running());
  struct stat st;
  CHECK_EQ(stat(path, &st), 0);
  CHECK(st.st_size <= 4096);
  /* What reached the file reads back, the cut chunk reported. */
  pp_trace t = {0};
  char err[256] = "";
  CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
  /* The file is cut back to its last whole chunk and, space permitting,
   * finished with the failure recorded (write_error) and an END. */
  CHECK_EQ(t.diag.truncated, 0);
  CHECK_CONTAINS(pp_trace_meta(&t, "write_error"), "File too large");
  CHECK_STR(pp_trace_meta(&t, "mode"), "trace");
  pp_trace_free(&t);
}

/* A flight session does not truncate an earlier dump at its start
 * (docs/formats/pptrace.md, Durability): the old file stays whole and
 * readable until the new session dumps. Before the fix pp_init opened the
 * path with O_TRUNC and a kill -9 then left an empty file. */
PP_TEST(recorder_flight_start_keeps_earlier_dump) {
  char path[4200];
  tpath(path, sizeof path, "flight-keep.pptrace");
  start_session(PP_MODE_FLIGHT, path, 64);
  {
    PP_ZONE("first-session");
  }
  CHECK_EQ(pp_shutdown(), PP_OK);
  size_t len1;
  char *first = pp_test_slurp(path, &len1);
  CHECK(first != NULL);
  CHECK_GT(len1, PPT_FILE_HEADER_SIZE);
  start_session(PP_MODE_FLIGHT, path, 64);
  size_t len2;
  char *during = pp_test_slurp(path, &len2);
  CHECK(during != NULL);
  CHECK_EQ(len2, len1);
  CHECK(memcmp(first, during, len1) == 0);
  {
    PP_ZONE("second-session");
  }
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis a = {0};
  load_trace(path, &t, &a);
  check_clean(&t);
  int second = 0;
  for (size_t i = 0; i < t.nlocs; i++)
    second |= loc_is(&t, (uint32_t)i, "second-session");
  CHECK(second);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  free(first);
  free(during);
}

/* A write to the trace fails (here EFBIG from RLIMIT_FSIZE, with SIGXFSZ
 * ignored: the same boundary as a full disk, ENOSPC): the program runs on,
 * the library says so in one stderr line (once, not per write), counts
 * the events it could not write, cuts the file back to its last whole
 * chunk and records the failure there, and the report states it instead
 * of "process killed?". Every recorded event is either in the file,
 * counted lost or counted dropped. Before: nothing said, "0 dropped". */
PP_TEST_T(recorder_write_failure_is_counted_and_reported, 120) {
  char path[4200], errp[4200];
  tpath(path, sizeof path, "full.pptrace");
  tpath(errp, sizeof errp, "full-stderr.txt");
  enum { N = 300000, LIMIT = 256 << 10 };
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(e, 2);
    close(e);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {LIMIT, LIMIT};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
      _exit(3);
    start_session(PP_MODE_TRACE, path, 65536);
    for (int i = 0; i < N; i++) {
      PP_ZONE("wf-zone");
    }
    int rc = pp_shutdown();
    _exit(rc == PP_EIO ? 0 : 4);
  }
  int st;
  CHECK_EQ(waitpid(pid, &st, 0), pid);
  CHECK(WIFEXITED(st));
  CHECK_EQ(WEXITSTATUS(st), 0);
  char *err = pp_test_slurp(errp, NULL);
  CHECK(err != NULL);
  if (count_lines(err) != 1)
    PP_FAIL("expected one line on stderr, got:\n%s", err);
  CHECK_CONTAINS(err, path);
  CHECK_CONTAINS(err, "File too large");
  free(err);
  pp_trace t;
  pp_analysis a = {0};
  load_trace(path, &t, &a);
  CHECK_LE(t.diag.file_bytes, LIMIT);
  CHECK_EQ(t.diag.chunks_bad, 0);
  CHECK_EQ(t.diag.truncated, 0); /* cut back to a whole chunk */
  const char *werr = pp_trace_meta(&t, "write_error");
  const char *lost = pp_trace_meta(&t, "events_lost");
  CHECK(werr != NULL && lost != NULL);
  CHECK_CONTAINS(werr, "File too large");
  uint64_t in_file = 0, dropped = 0;
  for (size_t i = 0; i < t.nthreads; i++) {
    in_file += t.threads[i].nev;
    dropped += t.threads[i].dropped;
  }
  uint64_t nlost = strtoull(lost, NULL, 10);
  char lost_s[32];
  snprintf(lost_s, sizeof lost_s, "%s", lost);
  CHECK_GT(nlost, 0);
  CHECK_EQ_U(in_file + nlost + dropped, 2 * (uint64_t)N);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  pp_cli_result r = pp_test_cli("report '%s'", path);
  CHECK_EQ(r.rc, 0);
  char want[4400];
  snprintf(want, sizeof want, "%s events lost: write to %s failed: File "
           "too large", lost_s, path);
  CHECK_CONTAINS(r.out, want);
  CHECK(strstr(r.out, "process killed?") == NULL);
  pp_cli_result_free(&r);
}

/* Stats mode's zones are counted by their own threads (ring/tally.h) and
 * read by the writer while they run: threads that exit mid-session (their
 * counts taken when the writer sees them dead), threads still recording
 * while the session ends, and the live windows looking every 20 ms. The
 * exited threads' counts are exact; a running thread's lie between what it
 * had finished when pp_shutdown was called and what it finished in all
 * (also under TSan: every shared figure is read with atomic loads). */
#define TST_N 20000

typedef struct tally_worker {
  int forever;
  _Atomic int *stop;
  _Atomic uint64_t done;
} tally_worker;

static void *tally_work(void *arg) {
  tally_worker *w = arg;
  pp_thread_name(w->forever ? "tst-run" : "tst-exit");
  for (uint64_t i = 0; w->forever ? !atomic_load(w->stop) : i < TST_N; i++) {
    {
      PP_ZONE("tst-outer");
      PP_ZONE("tst-inner");
    }
    atomic_store(&w->done, i + 1);
  }
  return NULL;
}

PP_TEST_T(recorder_stats_mode_threads_counted_while_running, 120) {
  char path[4096];
  tpath(path, sizeof path, "tally.pptrace");
  setenv("PIPEPROF_LIVE", "interval=20ms", 1);
  start_session(PP_MODE_STATS, path, 0);
  _Atomic int stop = 0;
  tally_worker w[4];
  pthread_t th[4];
  for (int k = 0; k < 4; k++) {
    w[k].forever = k >= 2;
    w[k].stop = &stop;
    atomic_init(&w[k].done, 0);
    CHECK_EQ(pthread_create(&th[k], NULL, tally_work, &w[k]), 0);
  }
  CHECK_EQ(pthread_join(th[0], NULL), 0);
  CHECK_EQ(pthread_join(th[1], NULL), 0);
  /* the running threads keep going through a few live intervals */
  pp_live_stats st;
  for (int tries = 0; tries < 3000; tries++) {
    if (pp_live_zone("tst-outer", 60, &st) == PP_OK && st.count >= 2 * TST_N)
      break;
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }
  uint64_t before = atomic_load(&w[2].done) + atomic_load(&w[3].done);
  CHECK_EQ(pp_shutdown(), PP_OK);
  atomic_store(&stop, 1);
  CHECK_EQ(pthread_join(th[2], NULL), 0);
  CHECK_EQ(pthread_join(th[3], NULL), 0);
  uint64_t all = atomic_load(&w[2].done) + atomic_load(&w[3].done);
  unsetenv("PIPEPROF_LIVE");
  CHECK_GE(st.count, 2 * TST_N);
  pp_trace t;
  pp_analysis a = {0};
  load_trace(path, &t, &a);
  check_clean(&t);
  CHECK(t.from_stats);
  const pp_zone_stats *o = zstats(&a, "tst-outer");
  const pp_zone_stats *in = zstats(&a, "tst-inner");
  CHECK(o && in);
  CHECK_GE(o->count, 2 * TST_N + before);
  CHECK_LE(o->count, 2 * TST_N + all);
  /* each tally of a running thread is read at its own moment: the inner
   * zones obey the same bounds (one more per running thread, whose last
   * inner zone closed before its outer one) */
  CHECK_GE(in->count, 2 * TST_N + before);
  CHECK_LE(in->count, 2 * TST_N + all + 2);
  CHECK_EQ_U(o->hist.count, o->count);
  CHECK_LE(o->min_ns, o->max_ns);
  /* the threads that exited: every zone and event, exactly */
  int exited = 0;
  for (size_t i = 0; i < t.nthreads; i++) {
    if (!t.threads[i].name || strcmp(t.threads[i].name, "tst-exit"))
      continue;
    exited++;
    CHECK_EQ_U(a.threads[i].zones_measured, 2 * TST_N);
    CHECK_EQ_U(a.threads[i].events, 4 * TST_N);
    CHECK_GT(a.threads[i].busy_ns, 0);
  }
  CHECK_EQ(exited, 2);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* pp_last_error is the calling thread's: two threads whose pp_init fail
 * at once for different reasons each read their own reason (it was one
 * buffer, written before pp_init took its lock: a race TSan reported). */
static void *bad_init_loop(void *arg) {
  int which = *(int *)arg;
  for (int i = 0; i < 2000; i++) {
    pp_config cfg;
    pp_config_init(&cfg);
    if (which)
      cfg.mode = (pp_mode)99;
    else
      cfg.struct_size = 3;
    if (pp_init(&cfg) != PP_EINVAL)
      return (void *)1;
    const char *e = pp_last_error();
    if (which ? !strstr(e, "unknown mode 99")
              : !strstr(e, "pp_config.struct_size 3"))
      return (void *)2;
  }
  return NULL;
}

PP_TEST(recorder_last_error_is_the_threads) {
  pthread_t a, b;
  int wa = 0, wb = 1;
  CHECK_EQ(pthread_create(&a, NULL, bad_init_loop, &wa), 0);
  CHECK_EQ(pthread_create(&b, NULL, bad_init_loop, &wb), 0);
  void *ra, *rb;
  pthread_join(a, &ra);
  pthread_join(b, &rb);
  CHECK(ra == NULL);
  CHECK(rb == NULL);
  CHECK(!pp_is_running());
}

/* A flight recorder whose dump at the end cannot be written whole (here
 * `ulimit -f`): pp_shutdown says so (PP_EIO, the reason in
 * pp_last_error), stderr too, and the cut dump says why in META
 * write_error, where a report used to guess "process killed?". */
PP_TEST(recorder_flight_dump_failure_is_said) {
  char path[4096];
  tpath(path, sizeof path, "cut-dump.pptrace");
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim = {64 << 10, 64 << 10};
  CHECK_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
  start_session(PP_MODE_FLIGHT, path, 1024);
  for (int i = 0; i < 100000; i++) {
    PP_ZONE("flight-zone");
  }
  CHECK_EQ(pp_shutdown(), PP_EIO);
  CHECK_CONTAINS(pp_last_error(), "cut-dump.pptrace failed: File too large");
  CHECK_CONTAINS(pp_last_error(), "the dump is cut short");
  pp_trace t = {0};
  char err[256] = "";
  CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
  CHECK_CONTAINS(pp_trace_meta(&t, "write_error"), "File too large");
  pp_analysis a = {0};
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *rep = tb_report_text(&a);
  CHECK(rep != NULL);
  CHECK(strstr(rep, "killed") == NULL);
  CHECK_CONTAINS(rep, "File too large");
  free(rep);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* Issue 26: a program that loads libpipeprof as a plugin, records on 4
 * threads and unloads it while they live (after pp_shutdown, or with the
 * session still running) survives the threads' exit: the library is
 * linked -z nodelete, so dlclose leaves it mapped and its thread-key
 * destructor still there (before, the process died of SIGSEGV). Every
 * zone is in the trace either way: the running session ends at exit. */
PP_TEST(recorder_survives_dlclose_with_threads_alive) {
  static const char *const how[] = {"shutdown", "live"};
  for (int i = 0; i < 2; i++) {
    char path[4096];
    tpath(path, sizeof path, how[i]);
    strcat(path, "-plugin.pptrace");
    char *out = NULL;
    int rc = pp_test_run(&out,
                         "'%s/pipeprof-test-dlclose-host' "
                         "'%s/libpipeprof.so.0' '%s' %s",
                         pp_test_bindir(), pp_test_bindir(), path, how[i]);
    if (rc != 0)
      PP_FAIL("%s: exit %d: %s", how[i], rc, out ? out : "");
    CHECK_CONTAINS(out, "threads exited after the unload");
    free(out);
    pp_trace t;
    pp_analysis a = {0};
    load_trace(path, &t, &a);
    CHECK_EQ(t.diag.clean_end, 1);
    CHECK_EQ_U(zones_named(&a, NULL, "plugin-work", 1), 4000);
    pp_analysis_free(&a);
    pp_trace_free(&t);
  }
}

/* Issue 26: LeakSanitizer finds nothing left allocated at the exit of a
 * program profiled in each mode (it found 1.3-2.3 MB of stats-mode
 * tallies per process): the example pipeline, built with the suite's
 * sanitizers, run with leak detection on (the runner itself turns it
 * off). Only an AddressSanitizer build can look. */
PP_TEST_T(recorder_no_leaks_at_exit_in_any_mode, 240) {
  if (!PP_T_ASAN) {
    printf("# skipped: not an AddressSanitizer build (make test "
           "SAN=address,undefined runs it)\n");
    return;
  }
  static const char *const modes[] = {"trace", "stats", "flight"};
  static const char *const rings[] = {"", "PIPEPROF_RINGS_DIR=off "};
  for (int m = 0; m < 3; m++)
    for (int r = 0; r < 2; r++) {
      char path[4096];
      tpath(path, sizeof path, modes[m]);
      strcat(path, r ? "-plain-lsan.pptrace" : "-lsan.pptrace");
      char *out = NULL;
      int rc = pp_test_run(
          &out,
          "ASAN_OPTIONS=detect_leaks=1 PIPEPROF=1 PIPEPROF_MODE=%s %s"
          "PIPEPROF_OUT='%s' '%s/pipeprof-example-pipeline' --frames 200 "
          "--quiet 2>&1",
          modes[m], rings[r], path, pp_test_bindir());
      if (rc != 0 || strstr(out ? out : "", "LeakSanitizer"))
        PP_FAIL("%s mode%s: exit %d:\n%s", modes[m],
                r ? " (rings in plain memory)" : "", rc, out ? out : "");
      free(out);
    }
}

/* Issue 26: the default ring size adapts to the number of threads: the
 * rings of all threads together stay within 256 MiB, so 300 threads
 * alive at once get 256 rings of 1 MiB and 44 of 64 KiB (before, 300
 * MiB: a program of thousands of threads could fill /dev/shm). Said in
 * META rings_smaller and in the report's header; every zone is there. */
enum { RING_THREADS = 300 };
static pthread_barrier_t ring_barrier;
static void *ring_thread(void *arg) {
  (void)arg;
  {
    PP_ZONE("ring-budget");
  }
  pthread_barrier_wait(&ring_barrier); /* every thread's ring at once */
  return NULL;
}

PP_TEST_T(recorder_default_rings_within_a_budget, 120) {
  if (pp_test_skip_forked_sessions())
    return;
  char path[4096];
  tpath(path, sizeof path, "rings-budget.pptrace");
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    setenv("PIPEPROF_RINGS_DIR", "off", 1);
    pp_config cfg;
    pp_config_init(&cfg);
    cfg.out_path = path;
    cfg.install_signals = 0;
    if (pp_init(&cfg) != PP_OK)
      _exit(2);
    pthread_barrier_init(&ring_barrier, NULL, RING_THREADS);
    pthread_t th[RING_THREADS];
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 256 * 1024);
    for (int i = 0; i < RING_THREADS; i++)
      if (pthread_create(&th[i], &at, ring_thread, NULL) != 0)
        _exit(3);
    for (int i = 0; i < RING_THREADS; i++)
      pthread_join(th[i], NULL);
    _exit(pp_shutdown() == PP_OK ? 0 : 4);
  }
  int st = 0;
  CHECK_EQ(waitpid(pid, &st, 0), pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  pp_trace t;
  pp_analysis a = {0};
  load_trace(path, &t, &a);
  CHECK_EQ_U(zones_named(&a, NULL, "ring-budget", 1), RING_THREADS);
  CHECK_STR(pp_trace_meta(&t, "rings_smaller"), "44");
  CHECK_STR(pp_trace_meta(&t, "rings_budget_mib"), "256");
  char *text = tb_report_text(&a);
  CHECK_CONTAINS(text, "44 threads got rings smaller than the default: the "
                       "rings of all threads together stay within 256 MiB");
  free(text);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}
