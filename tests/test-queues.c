/* SPDX-License-Identifier: MIT */
/*
 * Queues between stages (pp_queue_*): recorded through the real library
 * into a trace file, read back and analysed, with depth, wait times and
 * recorded waits checked against figures the test computes itself from the
 * events it read; stats mode; reader robustness for the queue events; and
 * `pipeprof report` on the example pipeline's trace.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze/analyze.h"
#include "export/export.h"
#include "format/pptrace.h"
#include "internal.h"
#include "pipeprof.h"
#include "runner.h"

static void tpath(char *buf, size_t len, const char *name) {
  snprintf(buf, len, "%s/%s", pp_test_tmpdir(), name);
}

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

static const pp_queue_stats *find_queue(const pp_trace *t, const char *n) {
  for (size_t i = 0; i < t->prof.pipe.nqueues; i++)
    if (strcmp(t->prof.pipe.queues[i].name, n) == 0)
      return &t->prof.pipe.queues[i];
  return NULL;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

typedef struct consumer_arg {
  pp_queue *q;
  int from, to;
} consumer_arg;

static void *consumer(void *p) {
  consumer_arg *a = p;
  pp_thread_name("consumer");
  for (int i = a->from; i < a->to; i++) {
    pp_queue_pop(a->q, (uint64_t)i);
    sleep_us(200);
  }
  return NULL;
}

PP_TEST(queue_declare_is_idempotent) {
  pp_queue *a = pp_queue_declare("qd", "x", "y", 3);
  pp_queue *b = pp_queue_declare("qd", "other", "stages", 99);
  CHECK(a != NULL);
  CHECK(a == b);
  CHECK(pp_queue_declare(NULL, "x", "y", 1) == NULL);
  CHECK(pp_queue_declare("qd2", NULL, NULL, -5) != a);
  /* Depth is counted with no session running, NULL is harmless. */
  pp_queue_push(a, 1);
  pp_queue_push(a, 2);
  pp_queue_pop(a, 1);
  CHECK_EQ(pp_queue_depth(a), 1);
  pp_queue_push(NULL, 1);
  pp_queue_wait_begin(NULL, PP_QUEUE_FULL);
  CHECK_EQ(pp_queue_depth(NULL), 0);
}

PP_TEST_T(queue_roundtrip, 30) {
  char path[4096];
  tpath(path, sizeof path, "q.pptrace");
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  pp_queue *q = pp_queue_declare("rt", "make", "use", 8);
  CHECK(q != NULL);
  /* Depth 1..5, down to 2, up to 6, then drained by another thread. */
  for (int i = 0; i < 5; i++) {
    pp_queue_push(q, (uint64_t)i);
    sleep_us(300);
  }
  for (int i = 0; i < 3; i++) {
    pp_queue_pop(q, (uint64_t)i);
    sleep_us(100);
  }
  for (int i = 5; i < 9; i++)
    pp_queue_push(q, (uint64_t)i);
  pp_queue_wait_begin(q, PP_QUEUE_FULL);
  sleep_us(3000);
  pp_queue_wait_end(q, PP_QUEUE_FULL);
  consumer_arg ca = {q, 3, 9};
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, consumer, &ca), 0);
  pthread_join(th, NULL);
  CHECK_EQ(pp_queue_depth(q), 0);
  CHECK_EQ(pp_shutdown(), PP_OK);

  pp_trace t;
  char err[256];
  if (pp_trace_read_file(path, &t, err, sizeof err) != 0)
    PP_FAIL("%s", err);
  CHECK_EQ(t.diag.events_bad, 0);
  CHECK_EQ(pp_analyze(&t), 0);
  const pp_queue_stats *s = find_queue(&t, "rt");
  CHECK(s != NULL);
  CHECK_STR(s->from, "make");
  CHECK_STR(s->to, "use");
  CHECK_EQ(s->capacity, 8);
  CHECK_EQ(t.locs[s->loc].kind, PP_KIND_QUEUE);
  CHECK_EQ(s->pushes, 9);
  CHECK_EQ(s->pops, 9);
  CHECK_EQ(s->matched, 9);
  CHECK_EQ(s->depth_max, 6);
  CHECK_EQ(s->depth_last, 0);
  CHECK_EQ(s->waits_full, 1);

  /* Independently from the events read back: waits by naive pairing,
   * the recorded wait, and the time-weighted depth. */
  int64_t push_ts[9] = {0}, pop_ts[9] = {0}, wb = 0, we = 0;
  int64_t first = INT64_MAX, last = INT64_MIN;
  typedef struct {
    int64_t ts, depth;
  } dpt;
  dpt pts[64];
  size_t np = 0;
  for (size_t i = 0; i < t.nthreads; i++)
    for (size_t j = 0; j < t.threads[i].nev; j++) {
      const pp_event *e = &t.threads[i].ev[j];
      if (e->loc != s->loc)
        continue;
      if (e->ts < first)
        first = e->ts;
      if (e->ts > last)
        last = e->ts;
      if (np < 64)
        pts[np++] = (dpt){e->ts, ppt_unzigzag(e->v2)};
      if (e->type == PPT_EV_QUEUE_PUSH)
        push_ts[e->v.id] = e->ts;
      else if (e->type == PPT_EV_QUEUE_POP)
        pop_ts[e->v.id] = e->ts;
      else if (e->type == PPT_EV_QUEUE_WAIT_BEGIN)
        wb = e->ts;
      else
        we = e->ts;
    }
  CHECK_EQ(np, 20); /* 18 pushes and pops, 2 waits */
  int64_t w[9];
  for (int i = 0; i < 9; i++)
    w[i] = pop_ts[i] - push_ts[i];
  qsort(w, 9, sizeof w[0], cmp_i64);
  /* Nearest rank: p50 of 9 is the 5th, p90 the 9th (ceil(8.1)). */
  CHECK_NEAR((double)pp_hist_percentile(&s->wait, 50), (double)w[4],
             (double)w[4] * 0.001 + 1);
  CHECK_NEAR((double)pp_hist_percentile(&s->wait, 90), (double)w[8],
             (double)w[8] * 0.001 + 1);
  CHECK_EQ_U(s->wait.min, (uint64_t)w[0]);
  CHECK_EQ_U(s->wait.max, (uint64_t)w[8]);
  CHECK_EQ(s->blocked_full_ns, we - wb);
  CHECK_GE(s->blocked_full_ns, 3000000);
  /* Events of two threads: sort by time for the depth timeline. */
  for (size_t i = 1; i < np; i++)
    for (size_t k = i; k > 0 && pts[k - 1].ts > pts[k].ts; k--) {
      dpt x = pts[k];
      pts[k] = pts[k - 1];
      pts[k - 1] = x;
    }
  double weighted = 0;
  int64_t empty = 0;
  for (size_t i = 0; i + 1 < np; i++) {
    weighted += (double)pts[i].depth * (double)(pts[i + 1].ts - pts[i].ts);
    if (pts[i].depth == 0)
      empty += pts[i + 1].ts - pts[i].ts;
  }
  CHECK_EQ(s->t_first, first);
  CHECK_EQ(s->t_last, last);
  CHECK_NEAR(s->depth_mean, weighted / (double)(last - first), 1e-9);
  CHECK_EQ(s->empty_ns, empty);
  CHECK_EQ(s->full_ns, 0); /* never 8 deep */

  /* The report, summary and Chrome export show the queue. */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK_EQ(pp_report_text(f, &t, NULL), 0);
  fclose(f);
  CHECK_CONTAINS(buf, "\nqueues (");
  CHECK_CONTAINS(buf, "make -> use: 9 in, 9 out");
  CHECK_CONTAINS(buf, "\nrecommendations\n");
  free(buf);
  f = open_memstream(&buf, &len);
  CHECK_EQ(pp_export_chrome(f, &t), 0);
  fclose(f);
  CHECK_CONTAINS(buf, "\"name\":\"rt depth\"");
  free(buf);
  f = open_memstream(&buf, &len);
  CHECK_EQ(pp_export_summary_json(f, &t), 0);
  fclose(f);
  CHECK_CONTAINS(buf, "\"queues\":[");
  CHECK_CONTAINS(buf, "\"name\":\"rt\",\"from\":\"make\",\"to\":\"use\"");
  free(buf);
  pp_trace_free(&t);
}

PP_TEST(queue_stats_mode_unavailable) {
  char path[4096];
  tpath(path, sizeof path, "qs.pptrace");
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.mode = PP_MODE_STATS;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  pp_queue *q = pp_queue_declare("sq", "a", "b", 2);
  for (int i = 0; i < 100; i++) {
    PP_ZONE("a");
    pp_queue_push(q, (uint64_t)i);
    pp_queue_wait_begin(q, PP_QUEUE_EMPTY);
    pp_queue_wait_end(q, PP_QUEUE_EMPTY);
    pp_queue_pop(q, (uint64_t)i);
  }
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  char err[256];
  if (pp_trace_read_file(path, &t, err, sizeof err) != 0)
    PP_FAIL("%s", err);
  CHECK_EQ(pp_analyze(&t), 0);
  CHECK(t.from_stats);
  CHECK(t.prof.pipe.queues_unavailable);
  CHECK_EQ(t.prof.nzones, 1);
  CHECK_EQ(t.prof.zones[0].count, 100);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK_EQ(pp_report_text(f, &t, NULL), 0);
  fclose(f);
  CHECK_CONTAINS(buf, "unavailable: stats mode keeps no queue statistics");
  free(buf);
  pp_trace_free(&t);
}

/* A hand-made file: one SRCLOC (a queue site) and one EVENTS chunk whose
 * last QUEUE_PUSH lacks its extra number. */
static size_t put_chunk(unsigned char *dst, uint16_t type, ppt_buf *b,
                        uint32_t seq) {
  ppt_chunk_header(dst, type, b->data, (uint32_t)b->len, seq);
  memcpy(dst + PPT_CHUNK_HEADER_SIZE, b->data, b->len);
  size_t n = PPT_CHUNK_HEADER_SIZE + b->len;
  b->len = 0;
  return n;
}

static size_t truncated_queue_file(unsigned char *out) {
  ppt_buf b = {0};
  size_t n = 0;
  ppt_file_header(out, 1234);
  n += PPT_FILE_HEADER_SIZE;
  ppt_buf_uv(&b, 0);
  ppt_buf_uv(&b, PP_KIND_QUEUE);
  ppt_buf_str(&b, "q");
  ppt_buf_str(&b, "a");
  ppt_buf_str(&b, "b");
  ppt_buf_uv(&b, 4);
  n += put_chunk(out + n, PPT_CHUNK_SRCLOC, &b, 0);
  ppt_buf_uv(&b, 7);    /* tid */
  ppt_buf_uv(&b, 1000); /* base tick */
  unsigned char ev[] = {PPT_EV_QUEUE_PUSH, 0, 0, 5, 2, /* id 5, depth 1 */
                        PPT_EV_QUEUE_POP, 4, 0, 5, 0,  /* depth 0 */
                        PPT_EV_QUEUE_PUSH, 4, 0, 6};   /* no extra */
  ppt_buf_bytes(&b, ev, sizeof ev);
  n += put_chunk(out + n, PPT_CHUNK_EVENTS, &b, 1);
  ppt_buf_free(&b);
  return n;
}

PP_TEST(queue_reader_truncated_event) {
  unsigned char file[512];
  size_t n = truncated_queue_file(file);
  pp_trace t;
  char err[256];
  CHECK_EQ(pp_trace_read_mem(file, n, &t, err, sizeof err), 0);
  CHECK_EQ(t.diag.events_bad, 1);
  CHECK_EQ(t.nthreads, 1);
  CHECK_EQ(t.threads[0].nev, 2); /* the two complete events are kept */
  CHECK_EQ(pp_analyze(&t), 0);
  const pp_queue_stats *s = find_queue(&t, "q");
  CHECK(s != NULL);
  CHECK_EQ(s->pushes, 1);
  CHECK_EQ(s->matched, 1);
  CHECK_EQ(s->capacity, 4);
  /* Exporters survive the damaged trace. */
  FILE *f = fopen("/dev/null", "w");
  CHECK_EQ(pp_report_text(f, &t, NULL), 0);
  CHECK_EQ(pp_export_summary_json(f, &t), 0);
  CHECK_EQ(pp_export_chrome(f, &t), 0);
  fclose(f);
  pp_trace_free(&t);
  /* Every cut of the file reads without a crash. */
  for (size_t cut = 0; cut <= n; cut++) {
    if (pp_trace_read_mem(file, cut, &t, err, sizeof err) == 0) {
      CHECK_EQ(pp_analyze(&t), 0);
      pp_trace_free(&t);
    }
  }
}

/* ---- the example pipeline through the CLI ------------------------------ */

PP_TEST_T(queue_cli_report_example, 180) {
  char dir[4096], trace[4200];
  tpath(dir, sizeof dir, "demo");
  pp_cli_result r = pp_test_cli("demo --out '%s' --frames 24", dir);
  if (r.rc != 0)
    PP_FAIL("demo exit %d:\n%s\n%s", r.rc, r.out, r.err);
  pp_cli_result_free(&r);
  snprintf(trace, sizeof trace, "%s/demo.pptrace", dir);
  r = pp_test_cli("report '%s'", trace);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "\nqueues (");
  CHECK_CONTAINS(r.out, "source->preprocess");
  CHECK_CONTAINS(r.out, "match->visualize");
  CHECK_CONTAINS(r.out, "\npipeline bottlenecks (");
  CHECK_CONTAINS(r.out, "\nbound: ");
  CHECK_CONTAINS(r.out, "<- bound");
  CHECK_CONTAINS(r.out, "critical path of flow \"frame\": 24 items");
  CHECK_CONTAINS(r.out, "\nrecommendations\n");
  pp_cli_result_free(&r);
}
