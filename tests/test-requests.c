/* SPDX-License-Identifier: MIT */
/*
 * Requests, tokens and batches (pp_request_*, pp_batch): exact E2E, TTFT,
 * TPOT and ITL on a trace built by hand, a live recording across two
 * threads through the file format, warm-up exclusion, SLO parsing, goodput,
 * the MLPerf-style minimum counts, padding waste, the report section and
 * the CLI's --slo / PIPEPROF_SLO handling.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze/model.h"
#include "export/export.h"
#include "format/pptrace.h"
#include "pipeprof.h"
#include "runner.h"
#include "trace_builder.h"

#define MS 1000000LL

/* An event with its id and extra number (REQ_*, BATCH), on the shared
 * builder (tests/trace_builder.c). */
static void tb_ev7(pp_trace *t, size_t thi, int64_t ts, uint32_t loc,
                   uint8_t type, uint64_t v, uint64_t v2) {
  pp_event *e = tb_ev(t, thi, ts, loc, type);
  e->v.id = v;
  e->v2 = v2;
}

/* Thread A begins requests, thread B produces tokens and ends them.
 *   1: begin 0, tokens 100 (1), 130 (2), 170 (1), end 200 ok
 *      E2E 200, TTFT 100, TPOT (200 - 100) / 3, ITL 30 and 40
 *   2: begin 50, first 60, tokens 90 (1), 110 (1), end 150 ok
 *      E2E 100, TTFT 10, TPOT 90, ITL 20
 *   3: begin 10, end 20 with status 5 (failed)
 *   4: begin 300, never ends (unfinished)
 *   99: tokens with no begin (orphan)
 * Batches (size, padded): (8, 8) (6, 8) (4, 8) (4, 0). */
static void build(pp_trace *t) {
  memset(t, 0, sizeof *t);
  uint32_t rq = tb_loc(t, "(request)", 0), bt = tb_loc(t, "(batch)", 0);
  size_t a = tb_thread(t, 1, ""), b = tb_thread(t, 2, "");
  tb_ev7(t, a, 0, rq, PPT_EV_REQ_BEGIN, 1, 0);
  tb_ev7(t, a, 10 * MS, rq, PPT_EV_REQ_BEGIN, 3, 0);
  tb_ev7(t, a, 50 * MS, rq, PPT_EV_REQ_BEGIN, 2, 0);
  tb_ev7(t, a, 300 * MS, rq, PPT_EV_REQ_BEGIN, 4, 0);
  tb_ev7(t, b, 20 * MS, rq, PPT_EV_REQ_END, 3, ppt_zigzag(5));
  tb_ev7(t, b, 60 * MS, rq, PPT_EV_REQ_FIRST, 2, 0);
  tb_ev7(t, b, 90 * MS, rq, PPT_EV_REQ_TOKENS, 2, 1);
  tb_ev7(t, b, 100 * MS, rq, PPT_EV_REQ_TOKENS, 1, 1);
  tb_ev7(t, b, 110 * MS, rq, PPT_EV_REQ_TOKENS, 2, 1);
  tb_ev7(t, b, 130 * MS, rq, PPT_EV_REQ_TOKENS, 1, 2);
  tb_ev7(t, b, 150 * MS, rq, PPT_EV_REQ_END, 2, 0);
  tb_ev7(t, b, 170 * MS, rq, PPT_EV_REQ_TOKENS, 1, 1);
  tb_ev7(t, b, 200 * MS, rq, PPT_EV_REQ_END, 1, 0);
  tb_ev7(t, b, 210 * MS, rq, PPT_EV_REQ_TOKENS, 99, 3);
  tb_ev7(t, a, 5 * MS, bt, PPT_EV_BATCH, 8, 8);
  tb_ev7(t, a, 6 * MS, bt, PPT_EV_BATCH, 6, 8);
  tb_ev7(t, a, 7 * MS, bt, PPT_EV_BATCH, 4, 8);
  tb_ev7(t, a, 8 * MS, bt, PPT_EV_BATCH, 4, 0);
}

PP_TEST(requests_exact_metrics) {
  pp_trace t;
  build(&t);
  CHECK_EQ(pp_analyze(&t), 0);
  const pp_request_stats *r = &t.prof.req;
  CHECK_EQ(r->requests, 4);
  CHECK_EQ(r->completed, 2);
  CHECK_EQ(r->failed, 1);
  CHECK_EQ(r->unfinished, 1);
  CHECK_EQ(r->orphans, 1);
  CHECK_EQ(r->output_tokens, 6);
  CHECK_EQ(r->span_ns, 300 * MS);
  CHECK_NEAR(r->req_per_s, 2 / 0.3, 1e-9);
  CHECK_NEAR(r->tokens_per_s, 6 / 0.3, 1e-9);
  CHECK_EQ(r->e2e.count, 2);
  CHECK_EQ(r->e2e.min, 100 * MS);
  CHECK_EQ(r->e2e.max, 200 * MS);
  CHECK_NEAR(pp_hist_mean(&r->e2e), 150.0 * MS, 1e-3);
  CHECK_EQ(r->ttft.count, 2);
  CHECK_EQ(r->ttft.min, 10 * MS);
  CHECK_EQ(r->ttft.max, 100 * MS);
  CHECK_EQ(r->tpot.count, 2);
  CHECK_EQ(r->tpot.min, 33333333);
  CHECK_EQ(r->tpot.max, 90 * MS);
  CHECK_EQ(r->itl.count, 3);
  CHECK_EQ(r->itl.min, 20 * MS);
  CHECK_EQ(r->itl.max, 40 * MS);
  CHECK_NEAR(pp_hist_mean(&r->itl), 30.0 * MS, 1e-3);
  CHECK_EQ(pp_hist_percentile(&r->e2e, 99.0), 200 * MS);
  CHECK_EQ(r->slo_set, 0);
  /* batches and padding waste */
  CHECK_EQ(r->batches, 4);
  CHECK_EQ(r->batch_items, 22);
  CHECK_EQ(r->batch_padded, 28);
  CHECK_NEAR(r->batch_mean, 5.5, 1e-12);
  CHECK_NEAR(r->padding_waste, 1.0 - 22.0 / 28.0, 1e-12);
  CHECK_EQ(r->nsizes, 3);
  CHECK_EQ(r->sizes[0].size, 4);
  CHECK_EQ(r->sizes[0].batches, 2);
  CHECK_EQ(r->sizes[2].size, 8);

  /* goodput: only request 2 meets ttft <= 50 ms */
  CHECK_EQ(pp_slo_parse("ttft=50ms", &t.req_slo, NULL, 0), 0);
  CHECK_EQ(pp_analyze_requests(&t), 0);
  CHECK_EQ(r->slo_set, 1);
  CHECK_EQ(r->good, 1);
  CHECK_NEAR(r->goodput_per_s, 1 / 0.3, 1e-9);
  CHECK_NEAR(r->compliance, 1.0 / 3.0, 1e-12);
  /* tpot <= 40 ms fails request 2 (90 ms), e2e <= 150 ms fails request 1 */
  CHECK_EQ(pp_slo_parse("tpot=40ms", &t.req_slo, NULL, 0), 0);
  CHECK_EQ(pp_analyze_requests(&t), 0);
  CHECK_EQ(r->good, 1);
  CHECK_EQ(pp_slo_parse("tpot=40ms,e2e=150ms", &t.req_slo, NULL, 0), 0);
  CHECK_EQ(pp_analyze_requests(&t), 0);
  CHECK_EQ(r->good, 0);

  /* warm-up: the earliest request (1) is left out */
  memset(&t.req_slo, 0, sizeof t.req_slo);
  t.req_warmup = 1;
  CHECK_EQ(pp_analyze_requests(&t), 0);
  CHECK_EQ(r->warmup, 1);
  CHECK_EQ(r->requests, 3);
  CHECK_EQ(r->completed, 1);
  CHECK_EQ(r->e2e.count, 1);
  CHECK_EQ(r->e2e.min, 100 * MS);

  /* report and summary sections */
  char *txt = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&txt, &len);
  CHECK_EQ(pp_report_text(f, &t, NULL), 0);
  fclose(f);
  CHECK_CONTAINS(txt, "\nrequests (E2E: begin to end; TTFT:");
  CHECK_CONTAINS(txt, "warm-up excluded 1");
  CHECK_CONTAINS(txt, "TPOT");
  CHECK_CONTAINS(txt, "padding waste 21.4%");
  CHECK_CONTAINS(txt, "p90 needs 64 requests, need 63 more");
  free(txt);
  f = open_memstream(&txt, &len);
  CHECK_EQ(pp_export_summary_json(f, &t), 0);
  fclose(f);
  CHECK_CONTAINS(txt, "\"requests\":");
  CHECK_CONTAINS(txt, "\"min_requests_p99\":662");
  free(txt);
  pp_trace_free(&t);
}

PP_TEST(requests_reused_id) {
  pp_trace t;
  memset(&t, 0, sizeof t);
  uint32_t rq = tb_loc(&t, "(request)", 0);
  size_t a = tb_thread(&t, 1, "");
  /* id 7 twice in a row, then begun again while still open */
  tb_ev7(&t, a, 0, rq, PPT_EV_REQ_BEGIN, 7, 0);
  tb_ev7(&t, a, 5 * MS, rq, PPT_EV_REQ_END, 7, 0);
  tb_ev7(&t, a, 10 * MS, rq, PPT_EV_REQ_BEGIN, 7, 0);
  tb_ev7(&t, a, 12 * MS, rq, PPT_EV_REQ_TOKENS, 7, 1);
  tb_ev7(&t, a, 30 * MS, rq, PPT_EV_REQ_END, 7, 0);
  tb_ev7(&t, a, 40 * MS, rq, PPT_EV_REQ_BEGIN, 7, 0);
  tb_ev7(&t, a, 50 * MS, rq, PPT_EV_REQ_BEGIN, 7, 0);
  tb_ev7(&t, a, 51 * MS, rq, PPT_EV_REQ_END, 7, 0);
  CHECK_EQ(pp_analyze(&t), 0);
  const pp_request_stats *r = &t.prof.req;
  CHECK_EQ(r->requests, 4);
  CHECK_EQ(r->completed, 3);
  CHECK_EQ(r->unfinished, 1);
  CHECK_EQ(r->e2e.min, 1 * MS);
  CHECK_EQ(r->e2e.max, 20 * MS);
  CHECK_EQ(r->ttft.count, 1);
  CHECK_EQ(r->ttft.min, 2 * MS);
  CHECK_EQ(r->tpot.count, 0); /* one token */
  pp_trace_free(&t);
}

PP_TEST(requests_slo_parse) {
  pp_slo s;
  char err[160];
  CHECK_EQ(pp_slo_parse("ttft=200ms,tpot=40ms,e2e=2s", &s, err, sizeof err),
           0);
  CHECK_EQ(s.ttft_ns, 200 * MS);
  CHECK_EQ(s.tpot_ns, 40 * MS);
  CHECK_EQ(s.e2e_ns, 2000 * MS);
  CHECK_EQ(pp_slo_parse("e2e=1.5s", &s, err, sizeof err), 0);
  CHECK_EQ(s.e2e_ns, 1500 * MS);
  CHECK_EQ(s.ttft_ns, 0);
  CHECK_EQ(pp_slo_parse("tpot=250us,ttft=900ns", &s, err, sizeof err), 0);
  CHECK_EQ(s.tpot_ns, 250000);
  CHECK_EQ(s.ttft_ns, 900);
  static const char *const bad[] = {"",          "ttft",      "ttft=",
                                    "ttft=200",  "ttft=-1ms", "ttft=0ms",
                                    "foo=1ms",   "ttft=1ms,", "ttft=1xs",
                                    "e2e=1e3ms", ",ttft=1ms"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    s.ttft_ns = 123;
    err[0] = '\0';
    if (pp_slo_parse(bad[i], &s, err, sizeof err) != -1)
      PP_FAIL("'%s' accepted", bad[i]);
    CHECK(err[0] != '\0');
    CHECK(strchr(err, '\n') == NULL);
    CHECK_EQ(s.ttft_ns, 123); /* untouched on error */
  }
}

PP_TEST(requests_min_counts) {
  CHECK_EQ(pp_request_min_count(90, 0.99, 0), 64);
  CHECK_EQ(pp_request_min_count(99, 0.99, 0), 662);
  CHECK_GT(pp_request_min_count(99, 0.99, 5), 662);
  CHECK_GT(pp_request_min_count(90, 0.99, 1), 64);
  CHECK_EQ(pp_request_min_count(0, 0.99, 0), 0);
  CHECK_EQ(pp_request_min_count(90, 1.0, 0), 0);
}

/* ---- live recording across two threads --------------------------------- */

#define NREQ 40

static void *worker(void *arg) {
  (void)arg;
  struct timespec ts = {0, 50000};
  for (uint64_t id = 1; id <= NREQ; id++) {
    if (id % 2)
      pp_request_first_token(id * 1000);
    for (int k = 0; k < 3; k++) {
      nanosleep(&ts, NULL);
      pp_request_tokens(id * 1000, 2);
    }
    pp_request_end(id * 1000, id == NREQ ? -3 : 0);
  }
  pp_batch(4, 8);
  pp_batch(8, 8);
  return NULL;
}

static void record_live(pp_mode mode, const char *path) {
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.mode = mode;
  cfg.out_path = path;
  cfg.install_signals = 0;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  for (uint64_t id = 1; id <= NREQ; id++)
    pp_request_begin(id * 1000);
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, worker, NULL), 0);
  pthread_join(th, NULL);
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_request_begin(1); /* not running: nothing happens */
}

PP_TEST(requests_live_two_threads) {
  char path[4200], err[256];
  snprintf(path, sizeof path, "%s/req.pptrace", pp_test_tmpdir());
  record_live(PP_MODE_TRACE, path);
  pp_trace t;
  CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
  CHECK_EQ(pp_analyze(&t), 0);
  const pp_request_stats *r = &t.prof.req;
  CHECK_EQ(r->requests, NREQ);
  CHECK_EQ(r->completed, NREQ - 1);
  CHECK_EQ(r->failed, 1);
  CHECK_EQ(r->unfinished, 0);
  CHECK_EQ(r->orphans, 0);
  CHECK_EQ(r->output_tokens, 6 * (NREQ - 1));
  CHECK_EQ(r->e2e.count, NREQ - 1);
  CHECK_EQ(r->ttft.count, NREQ - 1);
  CHECK_EQ(r->tpot.count, NREQ - 1);
  CHECK_EQ(r->itl.count, 2 * (NREQ - 1));
  CHECK_GE(r->itl.min, 50000);
  CHECK(r->e2e.max <= (uint64_t)r->span_ns);
  CHECK_EQ(r->batches, 2);
  CHECK_NEAR(r->padding_waste, 0.25, 1e-12);
  pp_trace_free(&t);

  /* the CLI: --slo, PIPEPROF_SLO, --warmup and bad values */
  pp_cli_result c = pp_test_cli("report --slo ttft=10s,e2e=10s --warmup 4 "
                                "'%s'", path);
  CHECK_EQ(c.rc, 0);
  CHECK_CONTAINS(c.out, "\nrequests (");
  CHECK_CONTAINS(c.out, "warm-up excluded 4");
  CHECK_CONTAINS(c.out, "goodput ");
  CHECK_CONTAINS(c.out, "35 of 36 finished requests");
  pp_cli_result_free(&c);
  c = pp_test_cli("report --slo ttft=fast '%s'", path);
  CHECK_ONE_LINE_ERROR_FROM(c, 2, "--slo");
  pp_cli_result_free(&c);
  c = pp_test_cli("report --warmup -1 '%s'", path);
  CHECK_EQ(c.rc, 2);
  pp_cli_result_free(&c);
  setenv("PIPEPROF_SLO", "tpot=", 1);
  c = pp_test_cli("report '%s'", path);
  unsetenv("PIPEPROF_SLO");
  CHECK_ONE_LINE_ERROR_FROM(c, 2, "PIPEPROF_SLO");
  pp_cli_result_free(&c);
}

PP_TEST(requests_stats_mode_unavailable) {
  char path[4200], err[256];
  snprintf(path, sizeof path, "%s/reqs.pptrace", pp_test_tmpdir());
  record_live(PP_MODE_STATS, path);
  pp_trace t;
  CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
  CHECK_EQ(pp_analyze(&t), 0);
  CHECK_EQ(t.from_stats, 1);
  char *txt = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&txt, &len);
  CHECK_EQ(pp_report_text(f, &t, NULL), 0);
  fclose(f);
  CHECK_CONTAINS(txt, "requests: unavailable in stats mode");
  free(txt);
  pp_trace_free(&t);
}

/* Energy per request and per token: CPU package plus the run's GPUs, from
 * the last value of each running total, with both parts shown. */
PP_TEST(requests_energy_per_request_and_token) {
  pp_trace t;
  build(&t);
  char *out = NULL;
  size_t len = 0;
  CHECK_EQ(pp_analyze(&t), 0);
  FILE *f = open_memstream(&out, &len);
  CHECK_EQ(pp_report_text(f, &t, NULL), 0);
  fclose(f);
  CHECK_CONTAINS(out, "  energy per request: unavailable: no energy counter "
                      "in this trace (RAPL or NVML;");
  CHECK(strstr(out, " J (") == NULL);
  free(out);
  f = open_memstream(&out, &len);
  CHECK_EQ(pp_export_summary_json(f, &t), 0);
  fclose(f);
  CHECK_CONTAINS(out, "\"energy\":{\"unavailable\":\"no energy counter");
  CHECK(strstr(out, "joules") == NULL);
  free(out);
  pp_trace_free(&t);

  build(&t);
  uint32_t cpu = tb_loc(&t, "energy.package_j", 0);
  uint32_t gpu = tb_loc(&t, "gpu.run_energy_j", 0);
  size_t th = tb_thread(&t, 99, "");
  static const double cpu_j[] = {1.0, 4.0}, gpu_j[] = {2.0, 8.0};
  for (int i = 0; i < 2; i++) {
    tb_ev7(&t, th, i * 100 * MS, cpu, PPT_EV_COUNTER_SETF, 0, 0);
    t.threads[th].ev[t.threads[th].nev - 1].v.f = cpu_j[i];
    tb_ev7(&t, th, i * 100 * MS, gpu, PPT_EV_COUNTER_SETF, 0, 0);
    t.threads[th].ev[t.threads[th].nev - 1].v.f = gpu_j[i];
  }
  CHECK_EQ(pp_analyze(&t), 0);
  pp_energy e;
  CHECK_EQ(pp_run_energy(&t, &e), 1);
  CHECK_NEAR(e.joules, 12.0, 1e-12);
  CHECK_NEAR(e.cpu_j, 4.0, 0);
  CHECK_NEAR(e.gpu_j, 8.0, 0);
  CHECK_STR(e.sources, "CPU package + GPU");
  /* 2 completed requests, 6 output tokens */
  f = open_memstream(&out, &len);
  CHECK_EQ(pp_report_text(f, &t, NULL), 0);
  fclose(f);
  CHECK_CONTAINS(out, "\n  energy per completed request: 6 J (CPU package "
                      "2 J + GPU 4 J), 2 requests\n"
                      "  energy per output token: 2 J (CPU package 0.6667 J "
                      "+ GPU 1.333 J), 6 tokens\n"
                      "  (energy of the whole run, warm-up included, / "
                      "completed requests or tokens)\n");
  free(out);
  f = open_memstream(&out, &len);
  CHECK_EQ(pp_export_summary_json(f, &t), 0);
  fclose(f);
  CHECK_CONTAINS(out, "\"energy\":{\"sources\":\"CPU package + GPU\","
                      "\"gpu_counter\":\"gpu.run_energy_j\",\"joules\":12,"
                      "\"cpu_package_joules\":4,\"gpu_joules\":8,"
                      "\"joules_per_request\":6,"
                      "\"cpu_package_joules_per_request\":2,"
                      "\"gpu_joules_per_request\":4,"
                      "\"joules_per_output_token\":2,");
  free(out);
  pp_trace_free(&t);

  /* Only the GPU, and no completed request: the reason, not a figure. */
  memset(&t, 0, sizeof t);
  uint32_t rq = tb_loc(&t, "(request)", 0);
  gpu = tb_loc(&t, "gpu.run_energy_j", 0);
  th = tb_thread(&t, 1, "");
  tb_ev7(&t, th, 0, rq, PPT_EV_REQ_BEGIN, 1, 0);
  tb_ev7(&t, th, 10 * MS, gpu, PPT_EV_COUNTER_SETF, 0, 0);
  t.threads[th].ev[t.threads[th].nev - 1].v.f = 3.0;
  CHECK_EQ(pp_analyze(&t), 0);
  f = open_memstream(&out, &len);
  CHECK_EQ(pp_report_text(f, &t, NULL), 0);
  fclose(f);
  CHECK_CONTAINS(out, "  energy per request: unavailable: no completed "
                      "request\n");
  CHECK(strstr(out, "energy per output token") == NULL);
  free(out);
  f = open_memstream(&out, &len);
  CHECK_EQ(pp_export_summary_json(f, &t), 0);
  fclose(f);
  CHECK_CONTAINS(out, "\"energy\":{\"sources\":\"GPU\",\"gpu_counter\":"
                      "\"gpu.run_energy_j\",\"joules\":3,\"gpu_joules\":3}");
  free(out);
  pp_trace_free(&t);
}
