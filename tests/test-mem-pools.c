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

#include "analyze/analyze.h"
#include "analyze/model.h"
#include "export/export.h"
#include "format/pptrace.h"
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

static const pp_mem_pool_stats *pool(const pp_trace *t, const char *name,
                                     uint32_t dev) {
  for (size_t i = 0; i < t->prof.npools; i++)
    if (t->prof.pools[i].device == dev &&
        strcmp(pp_trace_loc_name(t, t->prof.pools[i].loc), name) == 0)
      return &t->prof.pools[i];
  PP_FAIL("no pool %s on device %u", name, dev);
  return NULL;
}

PP_TEST(mem_pools_match_hand_computed_figures) {
  pp_trace t;
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
  CHECK_EQ(pp_analyze(&t), 0);
  CHECK_EQ(t.prof.npools, 3);
  CHECK_STR(pp_trace_loc_name(&t, t.prof.pools[0].loc), "kv");
  CHECK_EQ(t.prof.pools[0].device, 0);
  CHECK_EQ(t.prof.pools[1].device, 1);

  const pp_mem_pool_stats *p = pool(&t, "kv", 0);
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

  p = pool(&t, "weights", 1);
  CHECK_EQ(p->peak, 64);
  CHECK(!p->has_reserve);
  CHECK_NEAR(p->mean_in_use, 64.0, 1e-9); /* from its first event on */
  CHECK_EQ(p->steady, 64);
  CHECK_EQ(p->leaks, 1);

  p = pool(&t, "kv", 1);
  /* In the second half: 0 for 40 ns before its first event, 7 for 10. */
  CHECK_EQ(p->steady, 0);
  CHECK_EQ(p->peak, 7);

  /* Report, summary and Chrome. */
  char path[512];
  snprintf(path, sizeof path, "%s/out.txt", pp_test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK_EQ(pp_report_text(f, &t, NULL), 0);
  fclose(f);
  char *r = pp_test_slurp(path, NULL);
  CHECK_CONTAINS(r, "\nmemory pools (");
  CHECK_CONTAINS(r, "note: 1 frees of pointers not allocated");
  free(r);
  f = fopen(path, "w");
  CHECK_EQ(pp_export_summary_json(f, &t), 0);
  fclose(f);
  r = pp_test_slurp(path, NULL);
  CHECK_CONTAINS(r, "\"memory_pools\":[");
  CHECK_CONTAINS(r, "\"name\":\"kv\",\"device\":0,\"allocs\":4,\"frees\":3,"
                    "\"unmatched_frees\":1,\"peak_bytes\":800");
  CHECK_CONTAINS(r, "\"reserved_at_peak_bytes\":1000,"
                    "\"unused_at_peak_bytes\":200");
  CHECK_CONTAINS(r, "\"gpu_zones\":null");
  free(r);
  f = fopen(path, "w");
  CHECK_EQ(pp_export_chrome(f, &t), 0);
  fclose(f);
  r = pp_test_slurp(path, NULL);
  CHECK_CONTAINS(r, "{\"ph\":\"C\",\"name\":\"pool kv (GPU 0) bytes\"");
  CHECK_CONTAINS(r, "\"args\":{\"in_use\":800,\"reserved\":1000}");
  free(r);
  pp_trace_free(&t);
}

static void run_session(pp_mode mode, pp_trace *t) {
  char path[512];
  snprintf(path, sizeof path, "%s/mem.pptrace", pp_test_tmpdir());
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.mode = mode;
  cfg.install_signals = 0;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  static char a, b, c;
  uint64_t big = (uint64_t)5 << 40; /* 5 TiB: wider than 32 bits */
  pp_mem_reserve("arena", big + 4096, 2);
  pp_mem_alloc(&a, big, "arena", 2);
  pp_mem_alloc(&b, 1024, "arena", 2);
  PP_MEM_FREE(&a, "arena", 2);
  PP_MEM_ALLOC(&c, 2048, "arena", 2);
  PP_MEM_RESERVE("arena", 8192, 2);
  pp_mem_alloc(&a, 1, "arena", 256); /* bad device: ignored */
  CHECK_EQ(pp_shutdown(), PP_OK);
  char err[256];
  CHECK_EQ(pp_trace_read_file(path, t, err, sizeof err), 0);
  CHECK_EQ(pp_analyze(t), 0);
}

PP_TEST(mem_pools_from_the_library) {
  pp_trace t;
  run_session(PP_MODE_TRACE, &t);
  CHECK_EQ(t.diag.events_bad, 0);
  CHECK_EQ(t.prof.npools, 1);
  const pp_mem_pool_stats *p = pool(&t, "arena", 2);
  CHECK_EQ(p->allocs, 3);
  CHECK_EQ(p->frees, 1);
  CHECK_EQ(p->unmatched_frees, 0);
  CHECK_EQ_U(p->peak, ((uint64_t)5 << 40) + 1024);
  CHECK_EQ_U(p->reserved_at_peak, ((uint64_t)5 << 40) + 4096);
  CHECK_EQ(p->unused_at_peak, 3072);
  CHECK_EQ(p->final_in_use, 3072);
  CHECK_EQ(p->leaks, 2);
  CHECK_EQ(p->leaked_bytes, 3072);
  pp_trace_free(&t);
}

PP_TEST(mem_pools_in_stats_mode_are_unavailable) {
  pp_trace t;
  run_session(PP_MODE_STATS, &t);
  CHECK_EQ(t.prof.npools, 0);
  char path[512];
  snprintf(path, sizeof path, "%s/out.txt", pp_test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK_EQ(pp_report_text(f, &t, NULL), 0);
  fclose(f);
  char *r = pp_test_slurp(path, NULL);
  CHECK_CONTAINS(r, "memory pools: unavailable: stats mode keeps no memory "
                    "pool events");
  free(r);
  pp_trace_free(&t);
}

/* A program that reports a reservation smaller than what it allocated (100
 * MiB reserved, 240 MiB in use) makes reserved - in use negative: that is
 * inconsistent input, not -140 MiB of fragmentation, and the report and
 * the summary say so instead of printing the negative figure. */
PP_TEST(mem_pools_reservation_below_use_is_inconsistent) {
  pp_trace t;
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
  CHECK_EQ(pp_analyze(&t), 0);
  const pp_mem_pool_stats *p = pool(&t, "kv", 0);
  CHECK_EQ(p->unused_at_peak, -140 * (int64_t)MiB); /* the analysis' figure */

  char path[512];
  snprintf(path, sizeof path, "%s/out.txt", pp_test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK_EQ(pp_report_text(f, &t, NULL), 0);
  fclose(f);
  char *r = pp_test_slurp(path, NULL);
  printf("%s", strstr(r, "\nmemory pools ("));
  CHECK(strstr(r, "-140") == NULL);
  CHECK_CONTAINS(r, "inconsistent");
  CHECK_CONTAINS(r, "note: inconsistent input: in use (240 MiB) exceeded "
                    "the reservation (100 MiB) at the watermark "
                    "(pp_mem_reserve reported less than was allocated): "
                    "unused@pk left out\n");
  /* The consistent pool: 400 B unused at its watermark. */
  const char *row = strstr(r, "\nok ");
  CHECK(row != NULL);
  const char *eol = strchr(row + 1, '\n');
  CHECK(eol != NULL);
  CHECK(memmem(row, (size_t)(eol - row), "400 B", 5) != NULL);
  CHECK(memmem(row, (size_t)(eol - row), "inconsistent", 12) == NULL);
  free(r);

  f = fopen(path, "w");
  CHECK_EQ(pp_export_summary_json(f, &t), 0);
  fclose(f);
  r = pp_test_slurp(path, NULL);
  CHECK_CONTAINS(r, "\"name\":\"kv\"");
  CHECK_CONTAINS(r, "\"unused_at_peak_bytes\":null");
  CHECK_CONTAINS(r, "\"inconsistent\":\"inconsistent input: in use (240 MiB) "
                    "exceeded the reservation (100 MiB) at the watermark\"");
  CHECK_CONTAINS(r, "\"unused_at_peak_bytes\":400");
  CHECK_CONTAINS(r, "\"inconsistent\":null");
  CHECK(strstr(r, "-146800640") == NULL); /* -140 MiB in bytes */
  free(r);
  pp_trace_free(&t);
}
