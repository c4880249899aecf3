/* SPDX-License-Identifier: MIT */
/*
 * Device memory pools (pp_mem_alloc/free/reserve; src/analyze/gpu.c):
 * the analysis against figures computed by hand from a scripted
 * alloc/free/reserve sequence, then the library end to end (encoding,
 * reader, report, summary JSON, Chrome counters) and stats mode.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/analyze.h"
#include "analyze/pools.h"
#include "export/export.h"
#include "format/pptrace.h"
#include "model/reader.h"
#include "model/feed.h"
#include "pipeprof.h"
#include "runner.h"
#include "trace_builder.h"

static pp_event *mem(pp_trace *t, size_t th, int64_t ts, uint32_t pool,
                     uint8_t type, uint64_t ptr, uint64_t bytes,
                     uint32_t dev) {
  pp_event *e = tb_ev(t, th, ts, pool, type);
  e->v.id = ptr;
  e->v2 = bytes | (uint64_t)dev << 56;
  return e;
}

static const pp_mem_pool_stats *pool(const pp_analysis *a, const char *name,
                                     uint32_t dev) {
  const pp_trace *t = a->trace;
  for (size_t i = 0; i < a->prof.npools; i++)
    if (a->prof.pools[i].device == dev &&
        strcmp(pp_trace_loc_name(t, a->prof.pools[i].loc), name) == 0)
      return &a->prof.pools[i];
  PP_FAIL("no pool %s on device %u", name, dev);
  return NULL;
}

PP_TEST(mem_pools_match_hand_computed_figures) {
  pp_trace t;
  pp_analysis an = {0};
  memset(&t, 0, sizeof t);
  uint32_t kv = tb_loc(&t, "kv", PP_KIND_POOL);
  uint32_t wt = tb_loc(&t, "weights", PP_KIND_POOL);
  uint32_t mk = tb_loc(&t, "tick", PP_KIND_MARK);
  size_t a = tb_thread(&t, 1, "main"), b = tb_thread(&t, 2, "worker");
  /* Pool kv on device 0 (levels in use / reserved):
   *   [0,10) 100/1000  [10,20) 400/1000  [20,30) 300/1000
   *   [30,40) 800/1000 [40,80) 300/600   [80,100] 500/600 */
  mem(&t, a, 0, kv, PPT_EV_MEM_RESERVE, 0, 1000, 0);
  mem(&t, a, 0, kv, PPT_EV_MEM_ALLOC, 0x1000, 100, 0);
  mem(&t, a, 10, kv, PPT_EV_MEM_ALLOC, 0x2000, 300, 0);
  mem(&t, a, 20, kv, PPT_EV_MEM_FREE, 0x1000, 0, 0);
  mem(&t, b, 30, kv, PPT_EV_MEM_ALLOC, 0x3000, 500, 0);
  mem(&t, b, 40, kv, PPT_EV_MEM_FREE, 0x3000, 0, 0);
  mem(&t, a, 40, kv, PPT_EV_MEM_RESERVE, 0, 600, 0);
  mem(&t, a, 60, kv, PPT_EV_MEM_FREE, 0x9000, 0, 0); /* never allocated */
  mem(&t, b, 80, kv, PPT_EV_MEM_ALLOC, 0x4000, 200, 0);
  /* The same name on device 1 is another pool; "weights" never reserves. */
  mem(&t, b, 90, kv, PPT_EV_MEM_ALLOC, 0x1000, 7, 1);
  mem(&t, a, 50, wt, PPT_EV_MEM_ALLOC, 0x5000, 64, 1);
  tb_ev(&t, a, 100, mk, PPT_EV_MARK);
  CHECK_EQ(pp_analyze(&t, &an), 0);
  CHECK_EQ(an.prof.npools, 3);
  CHECK_STR(pp_trace_loc_name(&t, an.prof.pools[0].loc), "kv");
  CHECK_EQ(an.prof.pools[0].device, 0);
  CHECK_EQ(an.prof.pools[1].device, 1);

  const pp_mem_pool_stats *p = pool(&an, "kv", 0);
  CHECK_EQ(p->allocs, 4);
  CHECK_EQ(p->frees, 3);
  CHECK_EQ(p->unmatched_frees, 1);
  CHECK_EQ(p->peak, 800);
  CHECK_EQ(p->peak_ts, 30);
  CHECK(p->has_reserve);
  CHECK_EQ(p->reserved_at_peak, 1000);
  CHECK_EQ(p->unused_at_peak, 200);
  /* (100*10 + 400*10 + 300*10 + 800*10 + 300*40 + 500*20) / 100 */
  CHECK_NEAR(p->mean_in_use, 380.0, 1e-9);
  /* (900*10 + 600*10 + 700*10 + 200*10 + 300*40 + 100*20) / 100 */
  CHECK_NEAR(p->mean_unused, 380.0, 1e-9);
  /* Second half [50,100]: 300 for 30 ns, 500 for 20 ns. */
  CHECK_EQ(p->steady, 300);
  CHECK_EQ(p->final_in_use, 500);
  CHECK_EQ(p->leaks, 2);
  CHECK_EQ(p->leaked_bytes, 500);

  p = pool(&an, "weights", 1);
  CHECK_EQ(p->peak, 64);
  CHECK(!p->has_reserve);
  CHECK_NEAR(p->mean_in_use, 64.0, 1e-9); /* from its first event on */
  CHECK_EQ(p->steady, 64);
  CHECK_EQ(p->leaks, 1);

  p = pool(&an, "kv", 1);
  /* In the second half: 0 for 40 ns before its first event, 7 for 10. */
  CHECK_EQ(p->steady, 0);
  CHECK_EQ(p->peak, 7);

  /* Report, summary and Chrome. */
  char path[512];
  snprintf(path, sizeof path, "%s/out.txt", pp_test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK_EQ(pp_report_text(f, &an, NULL), 0);
  fclose(f);
  char *r = pp_test_slurp(path, NULL);
  CHECK_CONTAINS(r, "\nmemory pools (");
  CHECK_CONTAINS(r, "note: 1 frees of pointers not allocated");
  free(r);
  f = fopen(path, "w");
  CHECK_EQ(pp_export_summary_json(f, &an), 0);
  fclose(f);
  r = pp_test_slurp(path, NULL);
  CHECK_CONTAINS(r, "\"memory_pools\":[");
  CHECK_CONTAINS(r, "\"name\":\"kv\",\"device\":0,\"host\":false,"
                    "\"allocs\":4,\"frees\":3,"
                    "\"unmatched_frees\":1,\"peak_bytes\":800");
  CHECK_CONTAINS(r, "\"reserved_at_peak_bytes\":1000,"
                    "\"unused_at_peak_bytes\":200");
  CHECK_CONTAINS(r, "\"gpu_zones\":null");
  free(r);
  f = fopen(path, "w");
  CHECK_EQ(pp_export_chrome(f, &an), 0);
  fclose(f);
  r = pp_test_slurp(path, NULL);
  CHECK_CONTAINS(r, "{\"ph\":\"C\",\"name\":\"pool kv (GPU 0) bytes\"");
  CHECK_CONTAINS(r, "\"args\":{\"in_use\":800,\"reserved\":1000}");
  free(r);
  pp_analysis_free(&an);
  pp_trace_free(&t);
}

static void run_session(pp_mode mode, pp_trace *t, pp_analysis *a) {
  char path[512];
  snprintf(path, sizeof path, "%s/mem.pptrace", pp_test_tmpdir());
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.mode = mode;
  cfg.install_signals = 0;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  static char pa, pb, pc;
  uint64_t big = (uint64_t)5 << 40; /* 5 TiB: wider than 32 bits */
  pp_mem_reserve("arena", big + 4096, 2);
  pp_mem_alloc(&pa, big, "arena", 2);
  pp_mem_alloc(&pb, 1024, "arena", 2);
  PP_MEM_FREE(&pa, "arena", 2);
  PP_MEM_ALLOC(&pc, 2048, "arena", 2);
  PP_MEM_RESERVE("arena", 8192, 2);
  pp_mem_alloc(&pa, 1, "arena", 256); /* bad device: ignored */
  CHECK_EQ(pp_shutdown(), PP_OK);
  char err[256];
  CHECK_EQ(pp_trace_read_file(path, t, err, sizeof err), 0);
  CHECK_EQ(pp_analyze(t, a), 0);
}

PP_TEST(mem_pools_from_the_library) {
  pp_trace t;
  pp_analysis a = {0};
  run_session(PP_MODE_TRACE, &t, &a);
  CHECK_EQ(t.diag.events_bad, 0);
  CHECK_EQ(a.prof.npools, 1);
  const pp_mem_pool_stats *p = pool(&a, "arena", 2);
  CHECK_EQ(p->allocs, 3);
  CHECK_EQ(p->frees, 1);
  CHECK_EQ(p->unmatched_frees, 0);
  CHECK_EQ_U(p->peak, ((uint64_t)5 << 40) + 1024);
  CHECK_EQ_U(p->reserved_at_peak, ((uint64_t)5 << 40) + 4096);
  CHECK_EQ(p->unused_at_peak, 3072);
  CHECK_EQ(p->final_in_use, 3072);
  CHECK_EQ(p->leaks, 2);
  CHECK_EQ(p->leaked_bytes, 3072);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(mem_pools_in_stats_mode_are_unavailable) {
  pp_trace t;
  pp_analysis a = {0};
  run_session(PP_MODE_STATS, &t, &a);
  CHECK_EQ(a.prof.npools, 0);
  char path[512];
  snprintf(path, sizeof path, "%s/out.txt", pp_test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK_EQ(pp_report_text(f, &a, NULL), 0);
  fclose(f);
  char *r = pp_test_slurp(path, NULL);
  CHECK_CONTAINS(r, "\nmemory pools\nunavailable: stats mode keeps no "
                    "memory pool events");
  free(r);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* A program that reports a reservation smaller than what it allocated (100
 * MiB reserved, 240 MiB in use) makes reserved - in use negative: that is
 * inconsistent input, not -140 MiB of fragmentation, and the report and
 * the summary say so instead of printing the negative figure. */
PP_TEST(mem_pools_reservation_below_use_is_inconsistent) {
  pp_trace t;
  pp_analysis an = {0};
  memset(&t, 0, sizeof t);
  uint32_t kv = tb_loc(&t, "kv", PP_KIND_POOL);
  uint32_t ok = tb_loc(&t, "ok", PP_KIND_POOL);
  size_t a = tb_thread(&t, 1, "main");
  const uint64_t MiB = 1024 * 1024;
  mem(&t, a, 0, kv, PPT_EV_MEM_RESERVE, 0, 100 * MiB, 0);
  mem(&t, a, 10, kv, PPT_EV_MEM_ALLOC, 0x1000, 240 * MiB, 0);
  mem(&t, a, 20, kv, PPT_EV_MEM_FREE, 0x1000, 0, 0);
  /* A consistent pool beside it keeps its figures. */
  mem(&t, a, 0, ok, PPT_EV_MEM_RESERVE, 0, 1000, 0);
  mem(&t, a, 10, ok, PPT_EV_MEM_ALLOC, 0x2000, 600, 0);
  mem(&t, a, 100, ok, PPT_EV_MEM_FREE, 0x2000, 0, 0);
  CHECK_EQ(pp_analyze(&t, &an), 0);
  const pp_mem_pool_stats *p = pool(&an, "kv", 0);
  CHECK_EQ(p->unused_at_peak, -140 * (int64_t)MiB); /* the analysis' figure */

  char path[512];
  snprintf(path, sizeof path, "%s/out.txt", pp_test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK_EQ(pp_report_text(f, &an, NULL), 0);
  fclose(f);
  char *r = pp_test_slurp(path, NULL);
  printf("%s", strstr(r, "\nmemory pools ("));
  CHECK(strstr(r, "-140") == NULL);
  CHECK_CONTAINS(r, "  unavailable (inconsistent input)  ");
  CHECK_CONTAINS(r, "note: inconsistent input: in use (240 MiB) exceeded "
                    "the reservation (100 MiB) at the watermark "
                    "(pp_mem_reserve reported less than was allocated)\n");
  /* The consistent pool: 400 B unused at its watermark. */
  const char *row = strstr(r, "\nok ");
  CHECK(row != NULL);
  const char *eol = strchr(row + 1, '\n');
  CHECK(eol != NULL);
  CHECK(memmem(row, (size_t)(eol - row), "400 B", 5) != NULL);
  CHECK(memmem(row, (size_t)(eol - row), "inconsistent", 12) == NULL);
  free(r);

  f = fopen(path, "w");
  CHECK_EQ(pp_export_summary_json(f, &an), 0);
  fclose(f);
  r = pp_test_slurp(path, NULL);
  CHECK_CONTAINS(r, "\"name\":\"kv\"");
  CHECK_CONTAINS(r, "\"unused_at_peak_bytes\":{\"unavailable\":"
                    "\"inconsistent input\"}");
  CHECK_CONTAINS(r, "\"inconsistent\":\"inconsistent input: in use (240 MiB) "
                    "exceeded the reservation (100 MiB) at the watermark\"");
  CHECK_CONTAINS(r, "\"unused_at_peak_bytes\":400");
  CHECK_CONTAINS(r, "\"inconsistent\":null");
  CHECK(strstr(r, "-146800640") == NULL); /* -140 MiB in bytes */
  free(r);
  pp_analysis_free(&an);
  pp_trace_free(&t);
}

/* ---- the pool stream (pools.c) ------------------------------------------ */

/* Four threads' MEM_* events, random but in each thread's time order: two
 * sites named "kv" (one pool per device) and "act", pointers shared by the
 * threads (frees of pointers not live, pointers allocated twice), equal
 * times across threads, reservations. */
static void scrambled_pools(pp_trace *t, int nev) {
  memset(t, 0, sizeof *t);
  uint32_t loc[3] = {tb_loc(t, "kv", PP_KIND_POOL),
                     tb_loc(t, "act", PP_KIND_POOL),
                     tb_loc(t, "kv", PP_KIND_POOL)};
  unsigned seed = 99;
  for (int k = 0; k < 4; k++) {
    size_t th = tb_thread(t, (uint64_t)k + 1, "w");
    int64_t ts = k;
    for (int i = 0; i < nev; i++) {
      seed = seed * 1103515245u + 12345u;
      unsigned r = seed >> 8;
      ts += (int64_t)(r % 5) * 4;
      unsigned kind = (r >> 3) % 10;
      uint8_t type = kind < 5   ? PPT_EV_MEM_ALLOC
                     : kind < 9 ? PPT_EV_MEM_FREE
                                : PPT_EV_MEM_RESERVE;
      mem(t, th, ts, loc[(r >> 7) % 3], type, (r >> 9) % 64,
          type == PPT_EV_MEM_FREE ? 0 : 1 + (r >> 15) % 5000, (r >> 6) & 1);
    }
  }
}

static void check_same_pools(const pp_profile *a, const pp_profile *b) {
  CHECK_EQ_U(a->npools, b->npools);
  for (size_t i = 0; i < a->npools && i < b->npools; i++) {
    const pp_mem_pool_stats *x = &a->pools[i], *y = &b->pools[i];
    CHECK_EQ_U(x->loc, y->loc);
    CHECK_EQ_U(x->device, y->device);
    CHECK_EQ_U(x->allocs, y->allocs);
    CHECK_EQ_U(x->frees, y->frees);
    CHECK_EQ_U(x->unmatched_frees, y->unmatched_frees);
    CHECK_EQ_U(x->untracked_allocs, y->untracked_allocs);
    CHECK_EQ_U(x->peak, y->peak);
    CHECK_EQ(x->peak_ts, y->peak_ts);
    CHECK_EQ_U(x->reserved_at_peak, y->reserved_at_peak);
    CHECK_EQ(x->unused_at_peak, y->unused_at_peak);
    CHECK(x->mean_in_use == y->mean_in_use);
    CHECK(x->mean_unused == y->mean_unused);
    CHECK_EQ_U(x->steady, y->steady);
    CHECK_EQ_U(x->final_in_use, y->final_in_use);
    CHECK_EQ_U(x->leaks, y->leaks);
    CHECK_EQ_U(x->leaked_bytes, y->leaked_bytes);
    CHECK_EQ_U(x->nlevels, y->nlevels);
    CHECK_EQ_U(x->levels_stride, y->levels_stride);
    for (size_t j = 0; j < x->nlevels && j < y->nlevels; j++) {
      CHECK_EQ(x->levels[j].ts, y->levels[j].ts);
      CHECK_EQ_U(x->levels[j].in_use, y->levels[j].in_use);
      CHECK_EQ_U(x->levels[j].reserved, y->levels[j].reserved);
    }
  }
}

PP_TEST(mem_pools_stream_scrambled_bursts_give_the_same_stats) {
  pp_trace t;
  pp_analysis a = {0};
  scrambled_pools(&t, 4000);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  /* "kv" twice (devices 0 and 1; two sites of that name are one pool) and
   * "act" twice. */
  CHECK_EQ_U(a.prof.npools, 4);
  for (size_t i = 0; i < a.prof.npools; i++) {
    CHECK_GT(a.prof.pools[i].unmatched_frees, 100);
    CHECK_GT(a.prof.pools[i].leaks, 0);
    CHECK(a.prof.pools[i].has_reserve);
  }
  /* Past 4096 events the series merged: the road must not matter then
   * either. */
  CHECK_GT(pool(&a, "kv", 0)->levels_stride, 1);

  pp_pool_stream *s = pp__pool_stream_new(PP_POOL_LIVE_MAX, PP_POOL_LEVELS_MAX);
  CHECK(s != NULL);
  pp_order *o = pp_order_new(4 * 500, pp__pool_stream_event, s);
  CHECK(o != NULL);
  size_t pos[4] = {0};
  for (int left = 1; left;) {
    left = 0;
    for (uint32_t k = 0; k < 4; k++)
      for (size_t i = 0; i < 50 && pos[k] < t.threads[k].nev; i++) {
        CHECK_EQ(pp_order_put(o, &t, k, &t.threads[k].ev[pos[k]++]), 0);
        left = 1;
      }
  }
  CHECK_EQ(pp_order_flush(o, &t), 0);
  CHECK_EQ_U(pp_order_late(o), 0);
  pp_order_free(o);
  pp_profile got;
  memset(&got, 0, sizeof got);
  CHECK_EQ(pp__pool_stream_finish(s, &t, a.prof.t0, a.prof.t1, &got), 0);
  pp__pool_stream_free(s);
  check_same_pools(&a.prof, &got);
  pp_gpu_stats_free(&got);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(mem_pools_live_bound_counts_and_reports_untracked) {
  pp_trace t;
  pp_analysis an = {0};
  memset(&t, 0, sizeof t);
  uint32_t kv = tb_loc(&t, "kv", PP_KIND_POOL);
  size_t a = tb_thread(&t, 1, "main");
  for (int i = 0; i < 6; i++)
    mem(&t, a, i * 10, kv, PPT_EV_MEM_ALLOC, 0x1000 + (uint64_t)i, 100, 0);
  for (int i = 0; i < 6; i++)
    mem(&t, a, 100 + i * 10, kv, PPT_EV_MEM_FREE, 0x1000 + (uint64_t)i, 0, 0);
  mem(&t, a, 200, kv, PPT_EV_MEM_FREE, 0x9999, 0, 0); /* never allocated */
  CHECK_EQ(pp_analyze(&t, &an), 0);
  const pp_mem_pool_stats *p = pool(&an, "kv", 0);
  CHECK_EQ_U(p->untracked_allocs, 0);
  CHECK_EQ_U(p->unmatched_frees, 1);
  CHECK_EQ_U(p->final_in_use, 0);
  /* The same events through a stream that keeps 4 live pointers. */
  pp_gpu_stats_free(&an.prof);
  pp_pool_stream *s = pp__pool_stream_new(4, PP_POOL_LEVELS_MAX);
  CHECK(s != NULL);
  CHECK_EQ(pp_feed_in_time_order(&t, PP_FEED_ALL, pp__pool_stream_event, s), 0);
  CHECK_EQ_U(pp__pool_stream_live(s), 0);
  CHECK_EQ(pp__pool_stream_finish(s, &t, an.prof.t0, an.prof.t1, &an.prof), 0);
  pp__pool_stream_free(s);
  CHECK_EQ(pp__analysis_document(&an), 0); /* the views' document anew */
  p = pool(&an, "kv", 0);
  CHECK_EQ_U(p->allocs, 6);
  CHECK_EQ_U(p->frees, 7);
  CHECK_EQ_U(p->untracked_allocs, 2);
  CHECK_EQ_U(p->untracked_frees, 2);
  CHECK_EQ_U(p->unmatched_frees, 1);
  CHECK_EQ_U(p->peak, 600);
  /* An upper bound: the untracked bytes are never taken off. */
  CHECK_EQ_U(p->final_in_use, 200);
  char *r = tb_report_text(&an);
  CHECK_CONTAINS(r, "; 2 allocations untracked (live-pointer table "
                    "full), 2 frees taken as theirs: in-use figures are "
                    "upper bounds\n");
  free(r);
  r = tb_summary_json(&an);
  CHECK_CONTAINS(r, "\"untracked_allocs\":2,\"untracked_frees\":2");
  free(r);
  pp_analysis_free(&an);
  pp_trace_free(&t);
}

static int pool_ev(pp_pool_stream *s, const pp_trace *t, int64_t ts,
                   uint8_t type, uint64_t ptr, uint64_t bytes) {
  pp_event e;
  memset(&e, 0, sizeof e);
  e.ts = ts;
  e.type = type;
  e.loc = 0;
  e.v.id = ptr;
  e.v2 = bytes;
  return pp__pool_stream_event(s, t, 0, &e);
}

PP_TEST(mem_pools_level_series_is_bounded_and_keeps_the_peak) {
  /* 10^6 events streamed with none stored: 1000 bytes held all along,
   * 10 more for 1 ns of every 4, one spike of 5000 bytes in the middle. */
  pp_trace t;
  memset(&t, 0, sizeof t);
  tb_loc(&t, "kv", PP_KIND_POOL);
  pp_pool_stream *s = pp__pool_stream_new(PP_POOL_LIVE_MAX, PP_POOL_LEVELS_MAX);
  CHECK(s != NULL);
  CHECK_EQ(pool_ev(s, &t, 0, PPT_EV_MEM_ALLOC, 1, 1000), 0);
  int64_t ts = 0, spike_ts = 0;
  const int n = 500000;
  for (int i = 0; i < n; i++) {
    uint64_t bytes = i == 123457 ? 5000 : 10;
    if (bytes == 5000)
      spike_ts = ts + 3;
    CHECK_EQ(pool_ev(s, &t, ts += 3, PPT_EV_MEM_ALLOC, 2, bytes), 0);
    CHECK_EQ(pool_ev(s, &t, ts += 1, PPT_EV_MEM_FREE, 2, 0), 0);
  }
  CHECK_EQ_U(pp__pool_stream_live(s), 1);
  pp_profile p;
  memset(&p, 0, sizeof p);
  CHECK_EQ(pp__pool_stream_finish(s, &t, 0, ts, &p), 0);
  pp__pool_stream_free(s);
  CHECK_EQ_U(p.npools, 1);
  const pp_mem_pool_stats *ps = &p.pools[0];
  CHECK_EQ_U(ps->allocs, n + 1);
  CHECK_EQ_U(ps->peak, 6000);
  CHECK_EQ(ps->peak_ts, spike_ts);
  CHECK_EQ_U(ps->final_in_use, 1000);
  CHECK_EQ_U(ps->leaks, 1);
  /* Exact whatever the bound: 1000 bytes over [0, 4n] ns, 10 more for
   * 1 ns in each of n - 1 rounds, 5000 more for 1 ns once. */
  double area = 1000.0 * 4 * n + 10.0 * (n - 1) + 5000.0;
  CHECK_NEAR(ps->mean_in_use, area / (4.0 * n), 1e-6);
  /* The series: within its bound, in time order, the spike visible. */
  CHECK_LE(ps->nlevels, PP_POOL_LEVELS_MAX);
  CHECK_GT(ps->nlevels, PP_POOL_LEVELS_MAX / 2);
  /* The power of two that fits 10^6 + 1 events into 4096 points. */
  CHECK_EQ_U(ps->levels_stride, 256);
  uint64_t top = 0;
  for (size_t i = 0; i < ps->nlevels; i++) {
    if (i)
      CHECK_LT(ps->levels[i - 1].ts, ps->levels[i].ts);
    if (ps->levels[i].in_use > top)
      top = ps->levels[i].in_use;
  }
  CHECK_EQ_U(top, 6000);
  /* Steady from merged points: their mean levels, within the levels
   * merged (1000 to 1010; 1000 exactly, time-weighted, the median). */
  CHECK_GE(ps->steady, 1000);
  CHECK_LE(ps->steady, 1010);
  pp_gpu_stats_free(&p);
  pp_trace_free(&t);
}
