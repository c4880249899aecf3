/* SPDX-License-Identifier: MIT */
/*
 * The streamed read (analyze/stream.h, model/reader.c's second pass):
 * many threads whose frame marks and counter updates of one series
 * interleave in time, recorded with fixed times, give the same zones,
 * frames and counters whether every event is stored or only a window of
 * a few hundred, and the window holds every event before its cut; and a
 * run directory's second file streams into the first one's figures.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/analyze.h"
#include "analyze/stream.h"
#include "core/clock.h"
#include "core/recorder.h"
#include "format/events.h"
#include "format/pptrace.h"
#include "model/reader.h"
#include "format/records.h"
#include "pipeprof.h"
#include "runner.h"
#include "trace_builder.h"

#define NTHREADS 40
#define REPS 60
#define KEEP 300

static const pp_srcloc L_WORK = {"s-work", NULL, NULL, 0, PP_KIND_ZONE};
static const pp_srcloc L_FRAME = {"s-frame", NULL, NULL, 0, PP_KIND_FRAME};
static const pp_srcloc L_LEVEL = {"s-level", NULL, NULL, 0,
                                  PP_KIND_COUNTER};
static const pp_srcloc L_REQ = {"s-req", NULL, NULL, 0, PP_KIND_MARK};
static const pp_srcloc L_QUEUE = {"s-queue", NULL, NULL, 0, PP_KIND_QUEUE};
static const pp_srcloc L_POOL = {"s-pool", NULL, NULL, 0, PP_KIND_POOL};

typedef tb_worker worker;


/* Thread k marks frame i at base + 1000 * g, g = i * NTHREADS + k: the
 * marks of all threads form one stream, 1000 ns apart, only in time
 * order. It also begins request g and ends request g - 1 (begun by
 * another thread), pushes item g and pops item g - 1, and allocates and
 * frees a block: pairs whose halves are on two threads. Each thread's
 * own times only go forward. */
static void *work(void *arg) {
  worker *w = arg;
  for (int i = 0; i < REPS; i++) {
    uint64_t g = (uint64_t)(i * NTHREADS + w->k);
    int64_t t = w->base + 1000 * (int64_t)g;
    CHECK_EQ(pp__test_record(PPT_EV_ZONE_BEGIN, &L_WORK, (uint64_t)t, 0, 0),
             1);
    tb_rec(PPT_EV_FRAME, &L_FRAME, t + 1, 0, 0);
    tb_rec(PPT_EV_COUNTER_SET, &L_LEVEL, t + 2, g, 0);
    tb_rec(PPT_EV_REQ_BEGIN, &L_REQ, t + 3, g + 1, 0);
    tb_rec(PPT_EV_QUEUE_PUSH, &L_QUEUE, t + 4, g + 1, 2);
    tb_rec(PPT_EV_MEM_ALLOC, &L_POOL, t + 5, 0x1000 + g,
        (uint64_t)(1000 + w->k) << 8);
    tb_rec(PPT_EV_REQ_FIRST, &L_REQ, t + 10 + w->k, g + 1, 0);
    if (g > 0) {
      tb_rec(PPT_EV_REQ_END, &L_REQ, t + 20 + w->k, g, 0);
      tb_rec(PPT_EV_QUEUE_POP, &L_QUEUE, t + 60, g, 0);
    }
    tb_rec(PPT_EV_MEM_FREE, &L_POOL, t + 70, 0x1000 + g, 0);
    CHECK_EQ(pp__test_record(PPT_EV_ZONE_END, &L_WORK,
                             (uint64_t)(t + 100 + 7 * w->k + i), 0, 0),
             1);
  }
  return NULL;
}

static const pp_zone_stats *zone(const pp_analysis *a, const char *name) {
  for (size_t i = 0; i < a->prof.nzones; i++)
    if (!strcmp(pp_trace_loc_name(a->trace, a->prof.zones[i].loc), name))
      return &a->prof.zones[i];
  return NULL;
}

PP_TEST_T(stream_window_and_cross_thread_series_same_figures, 60) {
  setenv("PIPEPROF_CLOCK", "monotonic", 1);
  char path[4096];
  snprintf(path, sizeof path, "%s/stream.pptrace", pp_test_tmpdir());
  tb_record_threads(path, NTHREADS, work, pp__mono_ns() + 1000000);

  pp_trace all, win;

  pp_analysis win_a = {0};

  pp_analysis all_a = {0};
  char err[512];
  if (pp_trace_read_file(path, &all, err, sizeof err) != 0)
    PP_FAIL("%s", err);
  CHECK_EQ(pp_analyze(&all, &all_a), 0);
  pp_stream *s = pp__stream_new();
  CHECK(s != NULL);
  CHECK_EQ(pp__stream_details(s, 0, NULL), 0); /* as pp_cli_load does */
  pp_read_opts o = {KEEP, pp__stream_event, s, 0};
  if (pp_trace_read_file_opts(path, &win, &o, err, sizeof err) != 0)
    PP_FAIL("%s", err);
  win_a.stream = s;
  CHECK_EQ(pp_analyze(&win, &win_a), 0);

  /* The window: at most KEEP stored, and every event before the cut. */
  CHECK_EQ_U(win.diag.events, (uint64_t)NTHREADS * REPS * 11 - 2);
  CHECK(win.diag.events_kept <= KEEP && win.diag.events_kept > 0);
  uint64_t before = 0, kept_before = 0;
  for (size_t i = 0; i < all.nthreads; i++)
    for (size_t j = 0; j < all.threads[i].nev; j++)
      before += all.threads[i].ev[j].ts < win.diag.first_unkept_ns;
  for (size_t i = 0; i < win.nthreads; i++)
    for (size_t j = 0; j < win.threads[i].nev; j++)
      kept_before += win.threads[i].ev[j].ts < win.diag.first_unkept_ns;
  CHECK(before > 0);
  CHECK_EQ_U(kept_before, before);
  CHECK_EQ_U(kept_before, win.diag.events_kept);

  /* The figures: equal, and right. */
  const pp_zone_stats *za = zone(&all_a, "s-work"),
                      *zw = zone(&win_a, "s-work");
  CHECK(za && zw);
  CHECK_EQ_U(za->count, (uint64_t)NTHREADS * REPS);
  CHECK_EQ_U(zw->count, za->count);
  CHECK_EQ(zw->total_ns, za->total_ns);
  CHECK_EQ(zw->max_ns, za->max_ns);
  CHECK_EQ(zw->min_ns, za->min_ns);
  CHECK_EQ_U(all_a.prof.nframes, 1);
  CHECK_EQ_U(win_a.prof.nframes, 1);
  const pp_frame_stats *fa = &all_a.prof.frames[0], *fw = &win_a.prof.frames[0];
  CHECK_EQ_U(fa->frames, (uint64_t)NTHREADS * REPS);
  CHECK_EQ_U(fw->frames, fa->frames);
  /* every gap 1000 ns: taken in time order across the threads */
  CHECK_EQ_U(fa->hist.min, 1000);
  CHECK_EQ_U(fa->hist.max, 1000);
  CHECK_EQ_U(fw->hist.min, 1000);
  CHECK_EQ_U(fw->hist.max, 1000);
  CHECK_NEAR(fw->jitter_ns, 0, 1e-9);
  CHECK_EQ_U(all_a.prof.ncounters, 1);
  CHECK_EQ_U(win_a.prof.ncounters, 1);
  /* the last value set, in time order, is the highest */
  CHECK_NEAR(all_a.prof.counters[0].last, NTHREADS * REPS - 1, 0);
  CHECK_NEAR(win_a.prof.counters[0].last, NTHREADS * REPS - 1, 0);
  CHECK_NEAR(win_a.prof.counters[0].mean, all_a.prof.counters[0].mean, 1e-9);
  /* per-thread figures from the stream */
  for (size_t i = 0; i < win.nthreads; i++) {
    /* 11 events an iteration; thread 0's first ends nothing */
    CHECK(win_a.threads[i].events == (uint64_t)REPS * 11 ||
          win_a.threads[i].events == (uint64_t)REPS * 11 - 2);
    CHECK_EQ_U(win_a.threads[i].zones_measured, (uint64_t)REPS);
  }
  /* requests, queues and pools: from every event, not the window */
  const pp_request_stats *ra = &all_a.prof.req, *rw = &win_a.prof.req;
  CHECK_EQ_U(ra->completed, (uint64_t)NTHREADS * REPS - 1); /* not the last */
  CHECK_EQ_U(ra->unfinished, 1);
  CHECK_EQ_U(rw->requests, ra->requests);
  CHECK_EQ_U(rw->completed, ra->completed);
  CHECK_EQ_U(rw->unfinished, ra->unfinished);
  CHECK_EQ_U(rw->orphans, ra->orphans);
  CHECK_EQ_U(rw->e2e.count, ra->e2e.count);
  CHECK_EQ_U(rw->e2e.max, ra->e2e.max);
  CHECK_EQ_U(rw->ttft.max, ra->ttft.max);
  CHECK_EQ_U(all_a.prof.pipe.nqueues, 1);
  CHECK_EQ_U(win_a.prof.pipe.nqueues, 1);
  const pp_queue_stats *qa = &all_a.prof.pipe.queues[0],
                       *qw = &win_a.prof.pipe.queues[0];
  CHECK_EQ_U(qa->matched, (uint64_t)NTHREADS * REPS - 1);
  CHECK_EQ_U(qw->pushes, qa->pushes);
  CHECK_EQ_U(qw->pops, qa->pops);
  CHECK_EQ_U(qw->matched, qa->matched);
  CHECK_EQ_U(qw->wait.count, qa->wait.count);
  CHECK_EQ_U(qw->wait.max, qa->wait.max);
  CHECK_EQ_U(all_a.prof.npools, 1);
  CHECK_EQ_U(win_a.prof.npools, 1);
  const pp_mem_pool_stats *pa = &all_a.prof.pools[0],
                          *pw = &win_a.prof.pools[0];
  CHECK_EQ_U(pa->allocs, (uint64_t)NTHREADS * REPS);
  CHECK_EQ_U(pw->allocs, pa->allocs);
  CHECK_EQ_U(pw->frees, pa->frees);
  CHECK_EQ_U(pw->peak, pa->peak);
  CHECK_EQ_U(pw->leaks, pa->leaks);
  CHECK_NEAR(pw->mean_in_use, pa->mean_in_use, 1e-9 * pa->mean_in_use);
  /* analysing again gives the same (the streamed results are kept) */
  CHECK_EQ(pp_analyze(&win, &win_a), 0);
  CHECK_EQ_U(win_a.prof.req.completed, ra->completed);
  CHECK_EQ_U(win_a.prof.pipe.queues[0].matched, qa->matched);
  CHECK_EQ_U(win_a.prof.pools[0].allocs, pa->allocs);
  pp_analysis_free(&all_a);
  pp_trace_free(&all);
  pp_analysis_free(&win_a);
  pp_trace_free(&win);
}

/* ---- a run directory: the merged file streams too ------------------------ */

#define M_THREADS 8
#define M_REPS 300

static const pp_srcloc M_WORK = {"m-work", NULL, NULL, 0, PP_KIND_ZONE};
static const pp_srcloc M_FRAME = {"m-frame", NULL, NULL, 0, PP_KIND_FRAME};
static const pp_srcloc M_LEVEL = {"m-level", NULL, NULL, 0, PP_KIND_COUNTER};
static const pp_srcloc M_QUEUE = {"m-queue", NULL, NULL, 0, PP_KIND_QUEUE};
static const pp_srcloc M_POOL = {"m-pool", NULL, NULL, 0, PP_KIND_POOL};

/* The merged file's threads: their own sites (a pool or a series of the
 * same name in two files would be one, fed file after file), the same
 * shape of cross-thread pairs as work(), 8 events an iteration, starting
 * before the main file's threads and ending after them. */
static void *merged_work(void *arg) {
  worker *w = arg;
  for (int i = 0; i < M_REPS; i++) {
    uint64_t g = (uint64_t)(i * M_THREADS + w->k);
    int64_t t = w->base + 700 * (int64_t)g;
    CHECK_EQ(pp__test_record(PPT_EV_ZONE_BEGIN, &M_WORK, (uint64_t)t, 0, 0), 1);
    tb_rec(PPT_EV_FRAME, &M_FRAME, t + 1, 0, 0);
    tb_rec(PPT_EV_COUNTER_SET, &M_LEVEL, t + 2, g, 0);
    tb_rec(PPT_EV_QUEUE_PUSH, &M_QUEUE, t + 4, g + 1, 1);
    tb_rec(PPT_EV_MEM_ALLOC, &M_POOL, t + 5, 0x1000 + g,
        (uint64_t)(500 + w->k) << 8);
    if (g > 0)
      tb_rec(PPT_EV_QUEUE_POP, &M_QUEUE, t + 60, g, 0);
    tb_rec(PPT_EV_MEM_FREE, &M_POOL, t + 90, 0x1000 + g, 0);
    CHECK_EQ(pp__test_record(PPT_EV_ZONE_END, &M_WORK,
                             (uint64_t)(t + 200 + 11 * w->k + i), 0, 0),
             1);
  }
  return NULL;
}


/* The lines of report section `title` (from its heading to the blank line
 * after it), malloc'ed; fails the test when absent. */
static char *section(const char *report, const char *title) {
  char head[64];
  snprintf(head, sizeof head, "\n%s", title);
  const char *s = strstr(report, head);
  if (!s)
    PP_FAIL("no section '%s' in:\n%s", title, report);
  const char *e = strstr(s + 1, "\n\n");
  size_t n = e ? (size_t)(e - s) : strlen(s);
  char *out = malloc(n + 1);
  CHECK(out != NULL);
  memcpy(out, s, n);
  out[n] = 0;
  return out;
}

/* A run directory whose second file is large next to a small details
 * window: read as `pipeprof report` reads it (the second file streamed
 * into the first one's stream, numbered as merged, then merged and its
 * window made one), every figure equals the road that stores every event,
 * the stored events are at most the window's budget, and the report's
 * sections are the same line for line. */
PP_TEST_T(stream_run_directory_merged_file_streams, 120) {
  setenv("PIPEPROF_CLOCK", "monotonic", 1);
  char dir[4096], app[4200], sys[4200];
  snprintf(dir, sizeof dir, "%s/run", pp_test_tmpdir());
  CHECK_EQ(mkdir(dir, 0700), 0);
  snprintf(app, sizeof app, "%s/app.pptrace", dir);
  snprintf(sys, sizeof sys, "%s/system.pptrace", dir);
  int64_t base = pp__mono_ns() + 1000000;
  tb_record_threads(app, NTHREADS, work, base);
  tb_record_threads(sys, M_THREADS, merged_work, base - 500000);

  /* The API road of cli/load.c, with a budget of KEEP events. */
  pp_trace all, win, part;
  pp_analysis win_a = {0};
  pp_analysis all_a = {0};
  char err[512];
  if (pp_trace_read_file(app, &all, err, sizeof err) != 0 ||
      pp_trace_read_file(sys, &part, err, sizeof err) != 0)
    PP_FAIL("%s", err);
  uint64_t sys_events = part.diag.events;
  CHECK_EQ(pp_trace_merge_process(&all, &part), 0);
  pp_trace_free(&part);
  CHECK_EQ(pp_analyze(&all, &all_a), 0);
  pp_stream *s = pp__stream_new();
  CHECK(s != NULL);
  CHECK_EQ(pp__stream_details(s, 0, NULL), 0);
  pp_read_opts o = {KEEP, pp__stream_event, s, 0};
  if (pp_trace_read_file_opts(app, &win, &o, err, sizeof err) != 0)
    PP_FAIL("%s", err);
  win_a.stream = s;
  CHECK_EQ(pp__stream_part_begin(s, &win, 1), 0);
  pp_read_opts po = {KEEP, pp__stream_part_event, s, 0};
  if (pp_trace_read_file_opts(sys, &part, &po, err, sizeof err) != 0)
    PP_FAIL("%s", err);
  CHECK_EQ(pp__stream_part_end(s, 0), 0);
  CHECK_EQ_U(part.diag.events, sys_events);
  CHECK(part.diag.events_kept <= KEEP); /* never stored whole */
  CHECK_EQ(pp_trace_merge_process(&win, &part), 0);
  pp_trace_free(&part);
  pp__trace_window(&win, INT64_MAX, KEEP);
  CHECK_EQ(pp_analyze(&win, &win_a), 0);

  /* The window: at most KEEP stored, every event before the cut of both
   * files, nothing at or after it. */
  CHECK_EQ_U(win.diag.events, all.diag.events);
  CHECK(win.diag.events_kept <= KEEP && win.diag.events_kept > 0);
  uint64_t before = 0, kept = 0;
  for (size_t i = 0; i < all.nthreads; i++)
    for (size_t j = 0; j < all.threads[i].nev; j++)
      before += all.threads[i].ev[j].ts < win.diag.first_unkept_ns;
  for (size_t i = 0; i < win.nthreads; i++)
    for (size_t j = 0; j < win.threads[i].nev; j++) {
      CHECK_LT(win.threads[i].ev[j].ts, win.diag.first_unkept_ns);
      kept++;
    }
  CHECK_EQ_U(kept, win.diag.events_kept);
  CHECK_EQ_U(kept, before);

  /* Every figure of both files, from every event. */
  CHECK_EQ_U(win_a.prof.events, all_a.prof.events);
  CHECK_EQ_U(win_a.prof.nzones, all_a.prof.nzones);
  for (size_t i = 0; i < all_a.prof.nzones; i++) {
    const pp_zone_stats *za = &all_a.prof.zones[i], *zw = &win_a.prof.zones[i];
    CHECK_STR(pp_trace_loc_name(&win, zw->loc),
              pp_trace_loc_name(&all, za->loc));
    CHECK_EQ_U(zw->count, za->count);
    CHECK_EQ(zw->total_ns, za->total_ns);
    CHECK_EQ(zw->self_ns, za->self_ns);
    CHECK_EQ(zw->max_ns, za->max_ns);
    CHECK_EQ_U(pp_hist_percentile(&zw->hist, 99),
               pp_hist_percentile(&za->hist, 99));
  }
  const pp_zone_stats *mz = zone(&win_a, "m-work");
  CHECK(mz != NULL);
  CHECK_EQ_U(mz->count, (uint64_t)M_THREADS * M_REPS);
  CHECK_EQ_U(win_a.prof.nframes, 2);
  CHECK_EQ_U(all_a.prof.nframes, 2);
  for (size_t i = 0; i < 2; i++) {
    CHECK_EQ_U(win_a.prof.frames[i].frames, all_a.prof.frames[i].frames);
    CHECK_EQ_U(win_a.prof.frames[i].hist.min, all_a.prof.frames[i].hist.min);
    CHECK_EQ_U(win_a.prof.frames[i].hist.max, all_a.prof.frames[i].hist.max);
  }
  CHECK_EQ_U(win_a.prof.ncounters, 2);
  CHECK_EQ_U(all_a.prof.ncounters, 2);
  for (size_t i = 0; i < 2; i++) {
    CHECK_NEAR(win_a.prof.counters[i].last, all_a.prof.counters[i].last, 0);
    CHECK_NEAR(win_a.prof.counters[i].mean, all_a.prof.counters[i].mean, 1e-9);
    CHECK_EQ_U(win_a.prof.counters[i].samples, all_a.prof.counters[i].samples);
  }
  CHECK_EQ_U(win_a.prof.pipe.nqueues, 2);
  CHECK_EQ_U(all_a.prof.pipe.nqueues, 2);
  for (size_t i = 0; i < 2; i++) {
    const pp_queue_stats *qa = &all_a.prof.pipe.queues[i],
                         *qw = &win_a.prof.pipe.queues[i];
    CHECK_EQ_U(qw->pushes, qa->pushes);
    CHECK_EQ_U(qw->matched, qa->matched);
    CHECK_EQ_U(qw->wait.count, qa->wait.count);
    CHECK_EQ_U(qw->wait.max, qa->wait.max);
  }
  CHECK_EQ_U(win_a.prof.npools, 2);
  CHECK_EQ_U(all_a.prof.npools, 2);
  for (size_t i = 0; i < 2; i++) {
    const pp_mem_pool_stats *pa = &all_a.prof.pools[i],
                            *pw = &win_a.prof.pools[i];
    CHECK_EQ_U(pw->allocs, pa->allocs);
    CHECK_EQ_U(pw->frees, pa->frees);
    CHECK_EQ_U(pw->peak, pa->peak);
    CHECK_NEAR(pw->mean_in_use, pa->mean_in_use, 1e-9 * pa->mean_in_use);
  }
  CHECK_EQ_U(win_a.prof.req.completed, all_a.prof.req.completed);
  CHECK_EQ_U(win_a.prof.req.e2e.max, all_a.prof.req.e2e.max);
  for (size_t i = 0; i < win.nthreads; i++) {
    CHECK_EQ_U(win_a.threads[i].events, all_a.threads[i].events);
    CHECK_EQ_U(win_a.threads[i].zones_measured,
               all_a.threads[i].zones_measured);
  }
  pp_analysis_free(&all_a);
  pp_trace_free(&all);
  pp_analysis_free(&win_a);
  pp_trace_free(&win);

  /* The command: the same sections with a window of 10 events. */
  pp_cli_result a = pp_test_cli("report --details all '%s'", dir);
  pp_cli_result w = pp_test_cli("report --details 10 '%s'", dir);
  CHECK_EQ(a.rc, 0);
  CHECK_EQ(w.rc, 0);
  CHECK_CONTAINS(w.out, "note: the statistics count all ");
  static const char *const titles[] = {"zones (",  "threads (", "frames",
                                       "counters", "queues",    "memory pools",
                                       "requests"};
  for (size_t i = 0; i < sizeof titles / sizeof *titles; i++) {
    char *sa = section(a.out, titles[i]), *sw = section(w.out, titles[i]);
    if (strcmp(sa, sw) != 0)
      PP_FAIL("section '%s' differs:\n%s\n--- with --details 10:\n%s",
              titles[i], sa, sw);
    free(sa);
    free(sw);
  }
  pp_cli_result_free(&a);
  pp_cli_result_free(&w);
  /* ... storing at most the 10 events asked for, of both files */
  pp_cli_result j = pp_test_cli("export --format json --details 10 '%s'", dir);
  CHECK_EQ(j.rc, 0);
  const char *k = strstr(j.out, "\"events_kept\":");
  CHECK(k != NULL);
  CHECK_LE(strtoull(k + strlen("\"events_kept\":"), NULL, 10), 10);
  pp_cli_result_free(&j);
}

/* A file whose first EVENTS chunk holds more counter updates of one thread
 * than the reorder buffer takes (2^20), all later than the next chunk's,
 * another thread's: one of those reaches the figures out of time order.
 * The read loses no event, and the report and the summary JSON say how
 * many came late. */
PP_TEST(stream_late_events_are_reported) {
  enum { MANY = (1 << 20) + 5000, FEW = 10 };
  ppt_buf file = {0}, b = {0};
  uint32_t seq = 0;
  unsigned char hdr[PPT_FILE_HEADER_SIZE];
  ppt_file_header(hdr, 4242);
  ppt_buf_bytes(&file, hdr, sizeof hdr);
#define CHUNK(type)                                                            \
  do {                                                                         \
    unsigned char ch[PPT_CHUNK_HEADER_SIZE];                                   \
    ppt_chunk_header(ch, type, b.data, (uint32_t)b.len, seq++);                \
    ppt_buf_bytes(&file, ch, sizeof ch);                                       \
    ppt_buf_bytes(&file, b.data, b.len);                                       \
    b.len = 0;                                                                 \
  } while (0)
  ppt_count_put_n(&b, 1);
  ppt_meta m = {ppt_str_of("tick_source"), ppt_str_of("monotonic")};
  ppt_meta_put(&b, &m);
  CHUNK(PPT_CHUNK_META);
  ppt_clock c = {0, 0, 0};
  ppt_clock_put(&b, &c);
  CHUNK(PPT_CHUNK_CLOCK);
  ppt_srcloc site = {0, PP_KIND_COUNTER, ppt_str_of("late-level"),
                     ppt_str_of(NULL), ppt_str_of(NULL), 0};
  ppt_srcloc_put(&b, &site);
  CHUNK(PPT_CHUNK_SRCLOC);
  ppt_thread ta = {1, ppt_str_of("first")}, tb = {2, ppt_str_of("second")};
  ppt_thread_put(&b, &ta);
  ppt_thread_put(&b, &tb);
  CHUNK(PPT_CHUNK_THREAD);
  for (int th = 0; th < 2; th++) {
    /* thread 1: times 1,000,000 on; thread 2: 0..FEW-1, in a later chunk */
    ppt_events_base base = {th ? 2u : 1u, th ? 0u : 1000000u};
    ppt_events_base_put(&b, &base);
    int n = th ? FEW : MANY;
    for (int i = 0; i < n; i++) {
      ppt_ev e;
      memset(&e, 0, sizeof e);
      e.type = PPT_EV_COUNTER_SET;
      e.delta = i ? 1 : 0;
      e.loc = 0;
      e.value = (uint64_t)i;
      ppt_buf_ev(&b, &e);
    }
    CHUNK(PPT_CHUNK_EVENTS);
  }
  ppt_end end = {(uint64_t)MANY + FEW, 0};
  ppt_end_put(&b, &end);
  CHUNK(PPT_CHUNK_END);
#undef CHUNK
  CHECK(!file.oom && !b.oom);
  char path[4096], *out = NULL;
  snprintf(path, sizeof path, "%s/late.pptrace", pp_test_tmpdir());
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  CHECK_EQ(fwrite(file.data, 1, file.len, f), file.len);
  CHECK_EQ(fclose(f), 0);
  ppt_buf_free(&file);
  ppt_buf_free(&b);

  CHECK_EQ(pp_test_run(&out, "'%s/pipeprof' report '%s' 2>&1",
                       pp_test_bindir(), path),
           0);
  /* The second thread's first update comes after 2^20 of the first's
   * were queued and one handed over: it is earlier, so it goes at once,
   * late; its others then precede the queued ones, in order. */
  CHECK_CONTAINS(out, "warning: 1 events reached the figures out of time "
                      "order");
  CHECK_CONTAINS(out, "events:         1053586\n");
  CHECK_CONTAINS(out, "late-level");
  free(out);
  CHECK_EQ(pp_test_run(&out, "'%s/pipeprof' export --format json '%s'",
                       pp_test_bindir(), path),
           0);
  CHECK_CONTAINS(out, "\"events_late\":1,");
  CHECK_CONTAINS(out, "\"events_read\":1053586,");
  free(out);
}
