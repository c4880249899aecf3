/* SPDX-License-Identifier: MIT */
/*
 * The streamed Chrome export (export.h pp_chrome_stream_*): a trace read
 * once, its events written as they stream by, gives the same document,
 * event for event and in the same order, as the export of the whole trace
 * held in memory (what `--details all` wrote): hostile zones (lost ends,
 * stray ends, nesting past the cap, a clock going backwards), flows bound
 * v2 and v1 across threads, ranges across threads and one never ended,
 * counters of one name on several threads, marks, frames, queues and a
 * pool. The CLI writes every event with bounded state, says in metadata
 * that it did, and fails bad input with one line and no output file. A
 * run directory streams too, its files' events merged in time order: the
 * same document as its files merged in memory.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/stream.h"
#include "core/recorder.h"
#include "export/export.h"
#include "format/pptrace.h"
#include "model/reader.h"
#include "pair/zones.h"
#include "pipeprof.h"
#include "runner.h"
#include "trace_builder.h"

#define NTHREADS 6
#define REPS 40

static const pp_srcloc L_OUTER = {"c-outer", NULL, NULL, 0, PP_KIND_ZONE};
static const pp_srcloc L_INNER = {"c-inner", NULL, NULL, 0, PP_KIND_ZONE};
static const pp_srcloc L_DEEP = {"c-deep", NULL, NULL, 0, PP_KIND_ZONE};
static const pp_srcloc L_FLOW = {"c-flow", NULL, NULL, 0, PP_KIND_FLOW};
static const pp_srcloc L_RANGE = {"c-range", NULL, NULL, 0, PP_KIND_MARK};
static const pp_srcloc L_LEVEL = {"c-level", NULL, NULL, 0, PP_KIND_COUNTER};
static const pp_srcloc L_MARK = {"c-mark", NULL, NULL, 0, PP_KIND_MARK};
static const pp_srcloc L_FRAME = {"c-frame", NULL, NULL, 0, PP_KIND_FRAME};
static const pp_srcloc L_QUEUE = {"c-queue", NULL, NULL, 0, PP_KIND_QUEUE};
static const pp_srcloc L_POOL = {"c-pool", NULL, NULL, 0, PP_KIND_POOL};

typedef tb_worker worker;


/* Thread k, iteration i, at t = base + 1000 * (i * NTHREADS + k): an
 * outer zone with an inner one; a flow begins in the outer zone when g
 * is a multiple of 3, steps in the next thread's and ends in the one
 * after (v2), flow g + 1e6 steps outside any zone and ends in it (v1); range g
 * begins here and ends on the next thread; a counter of one name on every
 * thread; marks, frames, a queue, a pool. Thread 0 also nests 300 deep once,
 * loses an end, ends a zone never begun and steps its clock back. */
static void *work(void *arg) {
  worker *w = arg;
  for (int i = 0; i < REPS; i++) {
    uint64_t g = (uint64_t)(i * NTHREADS + w->k);
    int64_t t = w->base + 1000 * (int64_t)g;
    tb_rec(PPT_EV_ZONE_BEGIN, &L_OUTER, t, 0, 0);
    if (g % 3 == 0) /* one chain's point per zone: bound v2 */
      tb_rec(PPT_EV_FLOW_BEGIN, &L_FLOW, t + 1, g, 0);
    else
      tb_rec(g % 3 == 1 ? PPT_EV_FLOW_STEP : PPT_EV_FLOW_END, &L_FLOW, t + 1,
          g - g % 3, 0);
    tb_rec(PPT_EV_ZONE_BEGIN, &L_INNER, t + 10, 0, 0);
    tb_rec(PPT_EV_COUNTER_ADD, &L_LEVEL, t + 11, 3, 0);
    tb_rec(PPT_EV_MARK, &L_MARK, t + 12, 0, 0);
    tb_rec(PPT_EV_RANGE_BEGIN, &L_RANGE, t + 13, g + 1, 0);
    if (g >= 1)
      tb_rec(PPT_EV_RANGE_END, &L_RANGE, t + 14, g, 0);
    tb_rec(PPT_EV_QUEUE_PUSH, &L_QUEUE, t + 15, g + 1, (uint64_t)(i % 5) << 1);
    tb_rec(PPT_EV_MEM_ALLOC, &L_POOL, t + 16, 0x1000 + g, 64ull << 8);
    tb_rec(PPT_EV_ZONE_END, &L_INNER, t + 200 + w->k, 0, 0);
    tb_rec(PPT_EV_FRAME, &L_FRAME, t + 300, 0, 0);
    tb_rec(PPT_EV_MEM_FREE, &L_POOL, t + 301, 0x1000 + g, 0);
    tb_rec(PPT_EV_FLOW_STEP, &L_FLOW, t + 302, g + 1000000, 0); /* no zone */
    tb_rec(PPT_EV_ZONE_END, &L_OUTER, t + 900 + w->k, 0, 0);
    tb_rec(PPT_EV_FLOW_END, &L_FLOW, t + 901, g + 1000000, 0);
  }
  if (w->k == 0) {
    int64_t t = w->base + 1000 * (REPS * NTHREADS + 10);
    for (int d = 0; d < 300; d++)
      tb_rec(PPT_EV_ZONE_BEGIN, &L_DEEP, t + d, 0, 0);
    for (int d = 0; d < 300; d++)
      tb_rec(PPT_EV_ZONE_END, &L_DEEP, t + 400 + d, 0, 0);
    tb_rec(PPT_EV_ZONE_BEGIN, &L_OUTER, t + 800, 0, 0);
    tb_rec(PPT_EV_ZONE_BEGIN, &L_INNER, t + 801, 0, 0);
    tb_rec(PPT_EV_ZONE_END, &L_OUTER, t + 850, 0, 0); /* inner lost its end */
    tb_rec(PPT_EV_ZONE_END, &L_DEEP, t + 860, 0, 0);  /* never begun */
    tb_rec(PPT_EV_COUNTER_SETF, &L_LEVEL, t + 870, 0, 0);
    tb_rec(PPT_EV_ZONE_BEGIN, &L_OUTER, t + 700, 0, 0);      /* clock back */
    tb_rec(PPT_EV_RANGE_BEGIN, &L_RANGE, t + 880, 99999, 0); /* never ends */
    tb_rec(PPT_EV_ZONE_END, &L_OUTER, t + 890, 0, 0);
    tb_rec(PPT_EV_ZONE_BEGIN, &L_INNER, t + 900, 0, 0); /* open at the end */
  }
  return NULL;
}

static void record_trace_at(const char *path, int64_t base) {
  setenv("PIPEPROF_CLOCK", "monotonic", 1);
  tb_record_threads(path, NTHREADS, work, base);
}

static void record_trace(const char *path) {
  record_trace_at(path, 1000000000);
}

/* The export of the whole trace in memory. */
static char *export_in_memory(const char *path, size_t *len) {
  pp_trace t;
  pp_analysis a = {0};
  char err[512];
  if (pp_trace_read_file(path, &t, err, sizeof err) != 0)
    PP_FAIL("%s", err);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  CHECK(f != NULL);
  CHECK_EQ(pp_export_chrome(f, &a), 0);
  CHECK_EQ(fclose(f), 0);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  return buf;
}

/* The export written while the read streams, as the CLI does it. */
typedef struct tee {
  pp_stream *s;
  pp_chrome *c;
} tee;

static int tee_event(void *arg, const pp_trace *t, uint32_t th,
                     const pp_event *e) {
  tee *x = arg;
  if (pp__stream_event(x->s, t, th, e) != 0)
    return -1;
  return pp_chrome_stream_event(x->c, t, th, e);
}

static char *export_streamed(const char *path, size_t *len,
                             pp_chrome_limits *lim) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  CHECK(f != NULL);
  tee x = {pp__stream_new(), pp_chrome_stream_new(f)};
  CHECK(x.s && x.c);
  CHECK_EQ(pp__stream_pools(x.s), 0);
  pp_read_opts o = {0, tee_event, &x, 1};
  pp_trace t;
  pp_analysis a = {0};
  char err[512];
  if (pp_trace_read_file_opts(path, &t, &o, err, sizeof err) != 0)
    PP_FAIL("%s", err);
  CHECK_EQ_U(t.diag.events_kept, 0); /* nothing stored */
  a.stream = x.s;
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK_EQ(t.diag.have_first, 1);
  CHECK_EQ(t.diag.first_ns, a.prof.t0);
  CHECK_EQ(pp_chrome_stream_finish(x.c, &a), 0);
  *lim = *pp_chrome_stream_limits(x.c);
  pp_chrome_stream_free(x.c);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  CHECK_EQ(fclose(f), 0);
  return buf;
}

/* Line n (0-based) of s, or NULL; *len its length. */
static const char *nth_line(const char *s, size_t n, size_t *len) {
  for (; n && s; n--) {
    s = strchr(s, '\n');
    if (s)
      s++;
  }
  if (!s || !*s)
    return NULL;
  const char *e = strchr(s, '\n');
  *len = e ? (size_t)(e - s) : strlen(s);
  return s;
}

static size_t count(const char *s, const char *what) {
  size_t n = 0;
  for (const char *p = s; (p = strstr(p, what)) != NULL; p++)
    n++;
  return n;
}

PP_TEST_T(chrome_stream_equals_in_memory_export_event_for_event, 60) {
  char path[4096];
  snprintf(path, sizeof path, "%s/chrome.pptrace", pp_test_tmpdir());
  record_trace(path);
  size_t na, nb;
  char *mem = export_in_memory(path, &na);
  pp_chrome_limits lim;
  char *str = export_streamed(path, &nb, &lim);

  /* Every line up to the metadata: the same events in the same order. */
  size_t i = 0, la, lb;
  const char *a, *b;
  for (;; i++) {
    a = nth_line(mem, i, &la);
    b = nth_line(str, i, &lb);
    if (!a || !b || a[0] == ']') /* ],"displayTimeUnit":...,"metadata" */
      break;
    if (la != lb || memcmp(a, b, la) != 0)
      PP_FAIL("line %zu differs:\n  memory:   %.*s\n  streamed: %.*s", i,
              (int)la, a, (int)lb, b);
  }
  CHECK(a && b);
  CHECK(i > (size_t)NTHREADS * REPS * 10); /* the events were compared */
  /* The metadata: the same but for how the events came. */
  CHECK_CONTAINS(a, "\"streamed\":false");
  CHECK_CONTAINS(b, "\"streamed\":true");
  const char *ma = strstr(a, "\"streamed\""), *mb = strstr(b, "\"streamed\"");
  CHECK_EQ((int)(ma - a), (int)(mb - b));
  CHECK(memcmp(a, b, (size_t)(ma - a)) == 0);
  CHECK_STR(strstr(ma, "\"events_kept\""), strstr(mb, "\"events_kept\""));

  /* What it holds: flows of both kinds, the deep zones counted, not lost
   * silently, the hostile zones drawn as the pairing policy says. */
  CHECK_EQ_U(lim.zones_too_deep, 300 - PP_PAIR_MAX_DEPTH);
  CHECK_CONTAINS(str, "\"zones_too_deep\":44");
  CHECK_CONTAINS(str, "\"complete\":false");
  CHECK_EQ_U(lim.events_late, 0);
  CHECK(lim.chains_v2 > 0 && lim.chains_v1 > 0);
  CHECK_EQ_U(count(str, "\"name\":\"c-deep\""), PP_PAIR_MAX_DEPTH);
  CHECK(count(str, "\"flow_out\":true") > 0);
  CHECK(count(str, "\"flow_in\":true") > 0);
  CHECK(count(str, "{\"ph\":\"s\",\"name\":\"c-flow\"") > 0);
  /* two zones (a lost end, one open at the end), two ranges (99999 and
   * the last thread's, whose end nobody records) */
  CHECK_EQ_U(count(str, "\"unclosed\":true"), 2 + 2);
  CHECK_EQ_U(count(str, "{\"ph\":\"b\",\"name\":\"c-range\""),
             (uint64_t)NTHREADS * REPS + 1);
  CHECK_CONTAINS(str, "\"name\":\"pool c-pool (GPU 0) bytes\"");
  CHECK_CONTAINS(str, "\"name\":\"c-queue depth\"");
  free(mem);
  free(str);
}

PP_TEST_T(chrome_stream_cli_every_event_and_bad_input, 60) {
  char path[4096], out[4096], bad[4096];
  snprintf(path, sizeof path, "%s/cli.pptrace", pp_test_tmpdir());
  snprintf(out, sizeof out, "%s/cli.json", pp_test_tmpdir());
  snprintf(bad, sizeof bad, "%s/bad.pptrace", pp_test_tmpdir());
  record_trace(path);
  /* --details limits nothing any more: every event, said in metadata. */
  pp_cli_result r = pp_test_cli(
      "export '%s' --format chrome --details 10 -o '%s'", path, out);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.err, "zones nested deeper than 256");
  pp_cli_result_free(&r);
  char *j = pp_test_slurp(out, NULL);
  CHECK(j != NULL);
  CHECK_CONTAINS(j, "\"streamed\":true");
  CHECK_CONTAINS(j, "\"details_complete_until_ns\":null");
  const char *read = strstr(j, "\"events_read\":");
  const char *kept = strstr(j, "\"events_kept\":");
  CHECK(read && kept);
  CHECK_EQ(atoll(read + 14), atoll(kept + 14));
  CHECK(atoll(read + 14) > NTHREADS * REPS * 10);
  free(j);

  /* Not a trace: one line, exit 1, no output file left. */
  FILE *f = fopen(bad, "w");
  CHECK(f != NULL);
  fputs("this is not a pipeprof trace\n", f);
  CHECK_EQ(fclose(f), 0);
  unlink(out);
  r = pp_test_cli("export '%s' --format chrome -o '%s'", bad, out);
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "pipeprof:");
  CHECK_CONTAINS(r.err, "not a pipeprof trace");
  CHECK(access(out, F_OK) != 0);
  pp_cli_result_free(&r);
  /* An output that cannot be created: one line, exit 1. */
  r = pp_test_cli("export '%s' --format chrome -o '%s/no/such/dir.json'", path,
                  pp_test_tmpdir());
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "cannot create");
  pp_cli_result_free(&r);
}

/* The document of `export DIR --format chrome [extra]`; *err its stderr. */
static char *export_cli(const char *dir, const char *extra, const char *out,
                        char **err) {
  unlink(out);
  pp_cli_result r =
      pp_test_cli("export '%s' --format chrome %s -o '%s'", dir, extra, out);
  CHECK_EQ(r.rc, 0);
  *err = strdup(r.err ? r.err : "");
  pp_cli_result_free(&r);
  char *j = pp_test_slurp(out, NULL);
  CHECK(j != NULL);
  return j;
}

/* Two documents the same line for line but for metadata.reader.streamed. */
static void check_same_but_streamed(const char *mem, const char *str,
                                    size_t min_lines) {
  size_t i = 0, la, lb;
  const char *a, *b;
  for (;; i++) {
    a = nth_line(mem, i, &la);
    b = nth_line(str, i, &lb);
    if (!a || !b || a[0] == ']')
      break;
    if (la != lb || memcmp(a, b, la) != 0)
      PP_FAIL("line %zu differs:\n  memory:   %.*s\n  streamed: %.*s", i,
              (int)la, a, (int)lb, b);
  }
  CHECK(a && b);
  CHECK(i > min_lines);
  CHECK_CONTAINS(a, "\"streamed\":false");
  CHECK_CONTAINS(b, "\"streamed\":true");
  const char *ma = strstr(a, "\"streamed\""), *mb = strstr(b, "\"streamed\"");
  CHECK_EQ((int)(ma - a), (int)(mb - b));
  CHECK(memcmp(a, b, (size_t)(ma - a)) == 0);
  CHECK_STR(strstr(ma, "\"streamed\":false") + 16,
            strstr(mb, "\"streamed\":true") + 15);
}

/* The files of a run directory merged in memory, every event kept (what
 * the export of a run directory did before it streamed), exported. */
static char *export_merged_in_memory(const char *const *paths, size_t n,
                                     size_t *len) {
  pp_trace t, part;
  pp_analysis a = {0};
  char err[512];
  for (size_t i = 0; i < n; i++) {
    if (pp_trace_read_file(paths[i], i ? &part : &t, err, sizeof err) != 0)
      PP_FAIL("%s", err);
    if (i) {
      CHECK_EQ(pp_trace_merge(&t, &part), 0);
      pp_trace_free(&part);
    }
  }
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  CHECK(f != NULL);
  CHECK_EQ(pp_export_chrome(f, &a), 0);
  CHECK_EQ(fclose(f), 0);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  return buf;
}

PP_TEST_T(chrome_stream_run_directory_equals_merge_in_memory, 90) {
  char dir[4096], p[4200], out[4200];
  snprintf(dir, sizeof dir, "%s/rundir", pp_test_tmpdir());
  CHECK_EQ(mkdir(dir, 0755), 0);
  /* Two files whose events interleave in time (a counter of one name runs
   * across both), a child file that is no trace (skipped, said). */
  snprintf(p, sizeof p, "%s/app.pptrace", dir);
  record_trace_at(p, 1000000000);
  snprintf(p, sizeof p, "%s/app.pptrace.4242", dir);
  record_trace_at(p, 1000000500);
  snprintf(p, sizeof p, "%s/app.pptrace.99", dir);
  FILE *f = fopen(p, "w");
  CHECK(f != NULL);
  fputs("not a trace\n", f);
  CHECK_EQ(fclose(f), 0);
  snprintf(out, sizeof out, "%s/dir.json", pp_test_tmpdir());
  char app[4200], child[4200];
  snprintf(app, sizeof app, "%s/app.pptrace", dir);
  snprintf(child, sizeof child, "%s/app.pptrace.4242", dir);
  const char *files[] = {app, child};
  size_t nmem;
  char *mem = export_merged_in_memory(files, 2, &nmem);
  char *estr;
  char *str = export_cli(dir, "", out, &estr);
  CHECK_CONTAINS(estr, "app.pptrace.99: not a pipeprof trace");
  CHECK_CONTAINS(estr, "zones nested deeper than 256");
  check_same_but_streamed(mem, str, (size_t)2 * NTHREADS * REPS * 10);
  CHECK_CONTAINS(str, "\"events_late\":0");
  CHECK_CONTAINS(str, "\"zones_too_deep\":88");
  CHECK_EQ_U(count(str, "\"name\":\"c-deep\""), 2 * PP_PAIR_MAX_DEPTH);
  free(mem);
  free(str);
  free(estr);

  /* An app.pptrace that is no trace fails the directory: one line, exit 1,
   * no output file. */
  snprintf(p, sizeof p, "%s/app.pptrace", dir);
  f = fopen(p, "w");
  CHECK(f != NULL);
  fputs("not a trace either\n", f);
  CHECK_EQ(fclose(f), 0);
  unlink(out);
  pp_cli_result r =
      pp_test_cli("export '%s' --format chrome -o '%s'", dir, out);
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "pipeprof:");
  CHECK_CONTAINS(r.err, "not a pipeprof trace");
  CHECK(access(out, F_OK) != 0);
  pp_cli_result_free(&r);
}

/* The CLI's export of a file, and of a run directory of one file, leave
 * the zone events out of the figures (the writer's pairing counts them):
 * the hostile trace (lost ends, stray ends, nesting past the cap, a clock
 * going back, a zone open at the end) gives the document of the trace in
 * memory all the same. */
PP_TEST_T(chrome_stream_cli_equals_in_memory, 60) {
  char dir[4096], path[4200], out[4200];
  snprintf(dir, sizeof dir, "%s/one", pp_test_tmpdir());
  CHECK_EQ(mkdir(dir, 0755), 0);
  snprintf(path, sizeof path, "%s/app.pptrace", dir);
  snprintf(out, sizeof out, "%s/one.json", pp_test_tmpdir());
  record_trace(path);
  size_t n;
  char *mem = export_in_memory(path, &n);
  CHECK_CONTAINS(mem, "\"unclosed_zones\":2,\"unmatched_zone_ends\":1");
  for (int k = 0; k < 2; k++) {
    char *err;
    char *str = export_cli(k ? dir : path, "", out, &err);
    check_same_but_streamed(mem, str, (size_t)NTHREADS * REPS * 10);
    free(str);
    free(err);
  }
  free(mem);
}
