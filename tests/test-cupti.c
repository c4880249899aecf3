/* SPDX-License-Identifier: MIT */
/*
 * CUPTI activity tracing: the tracer (src/collect/cupti.c) against a fake
 * libcupti (tests/fakes/fake_cupti.c) that hands records laid out as the
 * toolkit's header says to the registered callbacks; the session writes
 * them as CUDA chunks, the reader decodes them, the analysis joins them to
 * API calls and zones. Also the analysis on a hand-built model (busy and
 * idle against a hand computation), the reader's forward compatibility,
 * and the paths where tracing is unavailable.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/gpu_activity.h"
#include "core/recorder.h"
#include "export/export.h"
#include "format/pptrace.h"
#include "model/reader.h"
#include "internal.h"
#include "pipeprof.h"
#include "runner.h"
#include "trace_builder.h"

/* ---- helpers -------------------------------------------------------------- */

static uint32_t loc_named(const pp_trace *t, const char *name) {
  for (size_t i = 0; i < t->nlocs; i++)
    if (t->locs[i].name && strcmp(t->locs[i].name, name) == 0)
      return (uint32_t)i;
  PP_FAIL("no site named %s", name);
  return 0;
}

static void read_trace(const char *path, pp_trace *t, pp_analysis *a) {
  char err[256];
  CHECK_EQ(pp_trace_read_file(path, t, err, sizeof err), 0);
  CHECK_EQ(pp_analyze(t, a), 0);
}

/* Busy/idle against a hand computation, on a model built by hand: thread 7
 * runs stage A [0,100] and stage B [200,400]; device 0 does kernels
 * [10,50] and [40,80] (launched in A), a copy [90,120] (in A) and a kernel
 * [250,300] (in B); device 1 a kernel [300,350] (in B). */
PP_TEST(cupti_busy_idle_by_hand) {
  pp_trace t;
  pp_analysis an = {0};
  memset(&t, 0, sizeof t);
  uint32_t a = tb_loc(&t, "A", PP_KIND_ZONE);
  uint32_t b = tb_loc(&t, "B", PP_KIND_ZONE);
  size_t th = tb_thread(&t, 7, "main");
  tb_ev(&t, th, 0, a, PPT_EV_ZONE_BEGIN);
  tb_ev(&t, th, 100, a, PPT_EV_ZONE_END);
  tb_ev(&t, th, 200, b, PPT_EV_ZONE_BEGIN);
  tb_ev(&t, th, 400, b, PPT_EV_ZONE_END);
  pp_cuda_trace *c = &t.cuda;
  c->chunks = 1;
  c->names = tb_grow(NULL, &c->nnames, 2, sizeof(char *));
  c->names[0] = tb_strdup("k");
  c->names[1] = tb_strdup("cudaLaunchKernel");
  size_t cap = 0;
  static const struct {
    int64_t at;
    uint32_t corr;
  } calls[] = {{5, 1}, {6, 2}, {7, 3}, {210, 4}, {220, 5}};
  c->apis = tb_grow(NULL, &cap, 5, sizeof *c->apis);
  c->cap_apis = cap;
  for (size_t i = 0; i < 5; i++)
    c->apis[c->napis++] = (pp_cuda_api){calls[i].at, calls[i].at + 1, 7, 2,
                                        211, 1, calls[i].corr, 0};
  cap = 0;
  c->kernels = tb_grow(NULL, &cap, 4, sizeof *c->kernels);
  c->cap_kernels = cap;
  static const int64_t kv[4][4] = {
      {10, 50, 0, 1}, {40, 80, 0, 2}, {250, 300, 0, 4}, {300, 350, 1, 5}};
  for (size_t i = 0; i < 4; i++) {
    pp_cuda_kernel *k = &c->kernels[c->nkernels++];
    k->start = kv[i][0];
    k->end = kv[i][1];
    k->device = (uint32_t)kv[i][2];
    k->correlation = (uint32_t)kv[i][3];
    k->name = 0;
  }
  cap = 0;
  c->memcpys = tb_grow(NULL, &cap, 1, sizeof *c->memcpys);
  c->cap_memcpys = cap;
  c->memcpys[c->nmemcpys++] = (pp_cuda_memcpy){
      90, 120, 3000, 1, 2, 3, 1, 0, 1, 0, 3};
  CHECK_EQ(pp_analyze(&t, &an), 0);
  const pp_gpu_activity *g = an.cuda;
  CHECK(g != NULL);
  CHECK_EQ(g->wall_ns, 400);
  /* union: [10,80] + [90,120] + [250,350] */
  CHECK_EQ(g->busy_ns, 70 + 30 + 100);
  CHECK_EQ(g->ndevices, 2);
  CHECK_EQ(g->devices[0].busy_ns, 70 + 30 + 50);
  CHECK_EQ(g->devices[1].busy_ns, 50);
  CHECK_EQ(g->nstages, 2);
  const pp_gpu_stage *sa = g->stages[0].loc == a ? &g->stages[0]
                                                 : &g->stages[1];
  const pp_gpu_stage *sb = sa == &g->stages[0] ? &g->stages[1]
                                               : &g->stages[0];
  CHECK_EQ(sa->loc, a);
  CHECK_EQ(sb->loc, b);
  CHECK_EQ(sa->wall_ns, 100);
  CHECK_EQ(sa->busy_ns, 70 + 10); /* [10,80] and [90,100] */
  CHECK_EQ(sb->wall_ns, 200);
  CHECK_EQ(sb->busy_ns, 100);     /* [250,350] */
  CHECK_EQ(sa->kernels, 2);
  CHECK_EQ(sa->kernel_ns, 80);
  CHECK_EQ(sa->xfer[PP_XFER_H2D].bytes, 3000);
  CHECK_EQ(sa->xfer[PP_XFER_H2D].pinned_bytes, 3000);
  CHECK_EQ(sb->kernels, 2);
  /* stage order: GPU-side time, A (80 + 30) before B (50 + 50)? 110 > 100 */
  CHECK_EQ(g->stages[0].loc, a);
  CHECK_EQ(g->nkernels, 1);
  CHECK_EQ(g->kernels[0].calls, 4);
  CHECK_EQ(g->kernels[0].total_ns, 40 + 40 + 50 + 50);
  CHECK_EQ(g->launch.count, 4);
  CHECK_EQ(g->launch.min, 5);   /* [10] - 5 */
  CHECK_EQ(g->launch.max, 80);  /* [300] - 220 */
  char *rep = tb_report_text(&an);
  CHECK_CONTAINS(rep, "\n  time traced:                 400 ns\n"
                      "  GPU busy:                    200 ns\n"
                      "  GPU idle:                    200 ns\n"
                      "  GPU busy, share:             50.0%\n");
  free(rep);
  pp_analysis_free(&an);
  pp_trace_free(&t);
}

/* ---- the reader: unknown kinds and extra fields are skipped --------------- */

static void put_rec(ppt_buf *p, unsigned kind, const ppt_buf *body) {
  ppt_buf_bytes(p, &(unsigned char){(unsigned char)kind}, 1);
  ppt_buf_uv(p, body->len);
  ppt_buf_bytes(p, body->data, body->len);
}

PP_TEST(cupti_reader_forward_compatible) {
  ppt_buf file = {0}, pay = {0}, body = {0};
  unsigned char hdr[PPT_FILE_HEADER_SIZE], ch[PPT_CHUNK_HEADER_SIZE];
  ppt_file_header(hdr, 42);
  ppt_buf_bytes(&file, hdr, sizeof hdr);
  ppt_buf_uv(&body, 0);
  ppt_buf_str(&body, "my_kernel");
  put_rec(&pay, PPT_CUDA_STRING, &body);
  body.len = 0;
  ppt_buf_uv(&body, 99); /* a kind from the future */
  put_rec(&pay, 77, &body);
  body.len = 0;
  uint64_t f[] = {1000, 500, 0, 1, 2, 3, 4, 0};
  for (size_t i = 0; i < 8; i++)
    ppt_buf_uv(&body, f[i]);
  int64_t dims[] = {2, 1, 1, 64, 1, 1, 0, 0};
  for (size_t i = 0; i < 8; i++)
    ppt_buf_sv(&body, dims[i]);
  ppt_buf_uv(&body, 40);
  ppt_buf_uv(&body, 12345); /* a field appended by a later writer */
  put_rec(&pay, PPT_CUDA_KERNEL, &body);
  body.len = 0;
  ppt_buf_uv(&body, 5);
  put_rec(&pay, PPT_CUDA_DROPPED, &body);
  ppt_chunk_header(ch, PPT_CHUNK_CUDA, pay.data, (uint32_t)pay.len, 0);
  ppt_buf_bytes(&file, ch, sizeof ch);
  ppt_buf_bytes(&file, pay.data, pay.len);
  /* a second chunk whose record claims more body than there is */
  ppt_buf bad = {0};
  ppt_buf_bytes(&bad, &(unsigned char){PPT_CUDA_KERNEL}, 1);
  ppt_buf_uv(&bad, 200);
  ppt_buf_uv(&bad, 1);
  ppt_chunk_header(ch, PPT_CHUNK_CUDA, bad.data, (uint32_t)bad.len, 1);
  ppt_buf_bytes(&file, ch, sizeof ch);
  ppt_buf_bytes(&file, bad.data, bad.len);
  pp_trace t;
  char err[128];
  CHECK_EQ(pp_trace_read_mem(file.data, file.len, &t, err, sizeof err), 0);
  CHECK_EQ(t.cuda.nkernels, 1);
  CHECK_EQ(t.cuda.kernels[0].start, 1000);
  CHECK_EQ(t.cuda.kernels[0].end, 1500);
  CHECK_EQ(t.cuda.kernels[0].device, 1);
  CHECK_EQ(t.cuda.kernels[0].stream, 3);
  CHECK_EQ(t.cuda.kernels[0].correlation, 4);
  CHECK_EQ(t.cuda.kernels[0].grid[0], 2);
  CHECK_EQ(t.cuda.kernels[0].block[0], 64);
  CHECK_EQ(t.cuda.kernels[0].registers, 40);
  CHECK_STR(pp_cuda_name(&t.cuda, t.cuda.kernels[0].name), "my_kernel");
  CHECK_EQ(t.cuda.dropped, 5);
  CHECK_EQ(t.diag.chunks_bad, 1);
  pp_trace_free(&t);
  ppt_buf_free(&file);
  ppt_buf_free(&pay);
  ppt_buf_free(&body);
  ppt_buf_free(&bad);
}

#ifdef PP_HAVE_CUPTI

/* ---- through the fake libcupti --------------------------------------------- */

typedef uint32_t (*kernel_fn)(const char *, const int *, const int *,
                              uint32_t, uint32_t, int64_t, int64_t, int64_t);
typedef uint32_t (*memcpy_fn)(int, int, int, uint64_t, uint32_t, uint32_t,
                              int64_t, int64_t);
typedef uint32_t (*memset_fn)(uint64_t, uint32_t, uint32_t, uint32_t,
                              int64_t, int64_t);
typedef uint32_t (*sync_fn)(int, uint32_t, int64_t);

static struct {
  kernel_fn kernel;
  memcpy_fn memcpy_;
  memset_fn memset_;
  sync_fn sync;
} fake;

static char trace_path[512];

/* Script the fake, point the tracer at it and start a trace session. */
static void start(const char *script) {
  char sp[512];
  snprintf(sp, sizeof sp, "%s/cupti.txt", pp_test_tmpdir());
  FILE *f = fopen(sp, "w");
  CHECK(f != NULL);
  fputs(script, f);
  fclose(f);
  setenv("PP_FAKE_CUPTI", sp, 1);
  setenv("PIPEPROF_LIBCUPTI", PP_FAKE_CUPTI_PATH, 1);
  void *h = dlopen(PP_FAKE_CUPTI_PATH, RTLD_NOW | RTLD_LOCAL);
  CHECK(h != NULL);
  fake.kernel = (kernel_fn)(uintptr_t)dlsym(h, "fake_cupti_kernel");
  fake.memcpy_ = (memcpy_fn)(uintptr_t)dlsym(h, "fake_cupti_memcpy");
  fake.memset_ = (memset_fn)(uintptr_t)dlsym(h, "fake_cupti_memset");
  fake.sync = (sync_fn)(uintptr_t)dlsym(h, "fake_cupti_sync");
  CHECK(fake.kernel && fake.memcpy_ && fake.memset_ && fake.sync);
  snprintf(trace_path, sizeof trace_path, "%s/cuda.pptrace",
           pp_test_tmpdir());
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = trace_path;
  cfg.install_signals = 0;
  CHECK_EQ(pp_init(&cfg), PP_OK);
}

static const int g64[3] = {64, 2, 1}, b256[3] = {256, 1, 1};
static const int g8[3] = {8, 1, 1}, b128[3] = {128, 1, 1};

/* A small pipeline: preprocess copies in (pageable) and clears a buffer;
 * infer runs gemm (in a nested zone) and relu, and copies device to
 * device; post copies out (pinned) and synchronizes; one kernel runs
 * outside any zone. */
static void pipeline(void) {
  PP_ZONE_BEGIN(pre, "preprocess");
  fake.memcpy_(1, 1, 3, 1 << 20, 0, 0, 2000, 100000); /* HtoD pageable */
  fake.memset_(4096, 0, 0, 0, 1000, 3000);
  PP_ZONE_END(pre);
  PP_ZONE_BEGIN(inf, "infer");
  {
    PP_ZONE_BEGIN(gemm, "gemm");
    fake.kernel("gemm_kernel", g64, b256, 0, 0, 5000, 50000, 1000);
    PP_ZONE_END(gemm);
  }
  fake.kernel("relu", g8, b128, 0, 7, 3000, 20000, 500);
  fake.memcpy_(8, 3, 3, 2048, 0, 7, 1000, 1000); /* DtoD */
  PP_ZONE_END(inf);
  PP_ZONE_BEGIN(post, "post");
  fake.memcpy_(2, 3, 2, 4096, 0, 0, 1000, 10000); /* DtoH pinned */
  fake.sync(3, 0, 30000);
  PP_ZONE_END(post);
  fake.kernel("stray", g8, b128, 1, 0, 1000, 7000, 0);
}

static const pp_cuda_kernel *kernel_named(const pp_trace *t,
                                          const char *name, size_t *idx) {
  for (size_t i = 0; i < t->cuda.nkernels; i++)
    if (strcmp(pp_cuda_name(&t->cuda, t->cuda.kernels[i].name), name) == 0) {
      *idx = i;
      return &t->cuda.kernels[i];
    }
  PP_FAIL("no kernel %s", name);
  return NULL;
}

PP_TEST(cupti_records_land_in_the_trace) {
  start("");
  CHECK_EQ(pp__session_cuda_start(), 0);
  pipeline();
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis a = {0};
  read_trace(trace_path, &t, &a);
  CHECK_STR(pp_trace_meta(&t, "cuda.tracing"), "cupti");
  CHECK_STR(pp_trace_meta(&t, "cuda.clock"), "callback");
  CHECK(pp_trace_meta(&t, "unavailable.cuda") == NULL);
  CHECK_EQ(t.cuda.nkernels, 3);
  CHECK_EQ(t.cuda.nmemcpys, 3);
  CHECK_EQ(t.cuda.nmemsets, 1);
  CHECK_EQ(t.cuda.nsyncs, 1);
  CHECK_EQ(t.cuda.napis, 16); /* 8 runtime calls, 8 driver calls */
  size_t gi, ri, si;
  const pp_cuda_kernel *k = kernel_named(&t, "gemm_kernel", &gi);
  CHECK_EQ(k->end - k->start, 50000);
  CHECK_EQ(k->start - k->queued, 4000);
  CHECK_EQ(k->grid[0], 64);
  CHECK_EQ(k->grid[1], 2);
  CHECK_EQ(k->grid[2], 1);
  CHECK_EQ(k->block[0], 256);
  CHECK_EQ(k->stream, 0);
  CHECK_EQ(k->static_smem, 1024);
  CHECK_EQ(k->dynamic_smem, 256);
  CHECK_EQ(k->registers, 32);
  const pp_cuda_kernel *r = kernel_named(&t, "relu", &ri);
  CHECK_EQ(r->stream, 7);
  CHECK_EQ(r->end - r->start, 20000);
  const pp_cuda_kernel *s = kernel_named(&t, "stray", &si);
  CHECK_EQ(s->device, 1);
  CHECK_EQ(s->queued, 0);
  const pp_cuda_memcpy *m = &t.cuda.memcpys[0];
  CHECK_EQ(m->copy_kind, 1);
  CHECK_EQ(m->src_kind, 1);
  CHECK_EQ(m->dst_kind, 3);
  CHECK_EQ(m->bytes, 1 << 20);
  CHECK_EQ(m->end - m->start, 100000);
  CHECK_EQ(m->flags & 1, 1);
  CHECK_EQ(t.cuda.memsets[0].bytes, 4096);
  CHECK_EQ(t.cuda.syncs[0].type, 3);
  CHECK_EQ(t.cuda.syncs[0].end - t.cuda.syncs[0].start, 30000);
  /* runtime calls carry this thread's OS id (cuptiSetThreadIdType) */
  uint64_t me = (uint64_t)syscall(SYS_gettid);
  for (size_t i = 0; i < t.cuda.napis; i++)
    CHECK_EQ(t.cuda.apis[i].tid, me);
  CHECK_STR(pp_cuda_name(&t.cuda, t.cuda.apis[0].name),
            "cudaMemcpyAsync_v3020");

  /* attribution by correlation to the innermost zone and its stage */
  const pp_gpu_activity *g = a.cuda;
  CHECK(g != NULL);
  uint32_t gemm = loc_named(&t, "gemm"), infer = loc_named(&t, "infer");
  uint32_t pre = loc_named(&t, "preprocess"), post = loc_named(&t, "post");
  CHECK_EQ(g->kernel_attr[gi].zone, gemm);
  CHECK_EQ(g->kernel_attr[gi].stage, infer);
  CHECK_EQ(g->kernel_attr[ri].zone, infer);
  CHECK_EQ(g->kernel_attr[ri].stage, infer);
  CHECK(g->kernel_attr[si].api >= 0);
  CHECK_EQ(g->kernel_attr[si].zone, PP_GPU_NO_ZONE);
  CHECK_EQ(g->correlated, 7);
  CHECK_EQ(g->unattributed, 1);
  /* transfers per stage, exact */
  for (size_t i = 0; i < g->nstages; i++) {
    const pp_gpu_stage *st = &g->stages[i];
    if (st->loc == pre) {
      CHECK_EQ(st->xfer[PP_XFER_H2D].bytes, 1 << 20);
      CHECK_EQ(st->xfer[PP_XFER_H2D].pageable_bytes, 1 << 20);
      CHECK_EQ(st->xfer[PP_XFER_H2D].pinned_bytes, 0);
      CHECK_EQ(st->xfer[PP_XFER_H2D].time_ns, 100000);
      CHECK_EQ(st->memsets, 1);
    } else if (st->loc == infer) {
      CHECK_EQ(st->kernels, 2);
      CHECK_EQ(st->kernel_ns, 70000);
      CHECK_EQ(st->xfer[PP_XFER_D2D].bytes, 2048);
      CHECK_EQ(st->xfer[PP_XFER_H2D].count, 0);
    } else if (st->loc == post) {
      CHECK_EQ(st->xfer[PP_XFER_D2H].bytes, 4096);
      CHECK_EQ(st->xfer[PP_XFER_D2H].pinned_bytes, 4096);
    } else {
      CHECK_EQ(st->loc, PP_GPU_NO_ZONE);
      CHECK_EQ(st->kernels, 1);
    }
  }
  CHECK_EQ(g->nstages, 4);
  CHECK_EQ(g->launch.count, 3);
  CHECK_EQ(g->queued.count, 2);
  CHECK_EQ(g->dropped, 0);

  char *rep = tb_report_text(&a);
  CHECK_CONTAINS(rep, "\nCUDA activity (CUPTI)\n"
                      "  clock:                       callback\n");
  CHECK_CONTAINS(rep, "\n  records dropped:             0\n");
  CHECK_CONTAINS(rep, "gemm_kernel");
  CHECK_CONTAINS(rep, "preprocess");
  CHECK_CONTAINS(rep, "\nHtoD            1  1.00 MiB   100 us");
  CHECK_CONTAINS(rep, "\npreprocess  HtoD            1  1.00 MiB   100 us");
  free(rep);
  char *js = tb_summary_json(&a);
  CHECK_CONTAINS(js, "\"cuda\":{\"clock\":\"callback\"");
  CHECK_CONTAINS(js, "\"name\":\"gemm_kernel\",\"calls\":1,\"total_ns\":50000");
  free(js);
  char *cj = NULL;
  size_t cn = 0;
  FILE *cf = open_memstream(&cj, &cn);
  CHECK_EQ(pp_export_chrome(cf, &a), 0);
  fclose(cf);
  CHECK_CONTAINS(cj, "\"name\":\"gemm_kernel\",\"cat\":\"kernel\","
                     "\"pid\":1000000000,\"tid\":0");
  CHECK_CONTAINS(cj, "\"flow_out\":true");
  CHECK_CONTAINS(cj, "\"flow_in\":true");
  CHECK_CONTAINS(cj, "\"name\":\"GPU 1\"");
  free(cj);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* Without the timestamp callback the tracer maps CUPTI's clock (here 1000 s
 * off CLOCK_MONOTONIC) with cuptiGetTimestamp: attribution still holds. */
PP_TEST(cupti_mapped_clock) {
  start("fail cuptiActivityRegisterTimestampCallback 27\n"
        "clock_offset 1000000000000\n");
  CHECK_EQ(pp__session_cuda_start(), 0);
  pipeline();
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis a = {0};
  read_trace(trace_path, &t, &a);
  CHECK_STR(pp_trace_meta(&t, "cuda.clock"), "mapped");
  size_t gi;
  const pp_cuda_kernel *k = kernel_named(&t, "gemm_kernel", &gi);
  CHECK_EQ(k->end - k->start, 50000);
  CHECK_EQ(a.cuda->kernel_attr[gi].zone, loc_named(&t, "gemm"));
  /* within the trace's span, not 1000 s away */
  CHECK_LE(k->start, a.prof.t1 + 1000000);
  CHECK_GE(k->start, a.prof.t0);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(cupti_dropped_records_shown) {
  start("dropped 17\nbuffer_records 4\n");
  CHECK_EQ(pp__session_cuda_start(), 0);
  pipeline();
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis a = {0};
  read_trace(trace_path, &t, &a);
  CHECK_EQ(t.cuda.dropped, 17);
  CHECK_EQ(t.cuda.nkernels, 3); /* several buffers, nothing else lost */
  char *rep = tb_report_text(&a);
  CHECK_CONTAINS(rep, "\nwarning: 17 CUPTI records dropped (buffers full): "
                      "the figures miss them\n");
  free(rep);
  char *js = tb_summary_json(&a);
  CHECK_CONTAINS(js, "\"dropped\":17");
  free(js);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(cupti_kernels_not_supported) {
  start("enable CONCURRENT_KERNEL 27\n");
  CHECK_EQ(pp__session_cuda_start(), -1);
  { PP_ZONE("still-profiled"); }
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis a = {0};
  read_trace(trace_path, &t, &a);
  CHECK(a.cuda == NULL);
  CHECK(pp_profile_zone(&a, loc_named(&t, "still-profiled")) != NULL);
  char *rep = tb_report_text(&a);
  CHECK_CONTAINS(rep, "\nCUDA activity (CUPTI)\nunavailable: "
                      "cuptiActivityEnable(CONCURRENT_KERNEL): "
                      "CUPTI_ERROR_NOT_SUPPORTED\n");
  free(rep);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(cupti_optional_kind_missing) {
  start("enable MEMSET 27\n");
  CHECK_EQ(pp__session_cuda_start(), 0);
  pipeline();
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis a = {0};
  read_trace(trace_path, &t, &a);
  CHECK_EQ(t.cuda.nmemsets, 0);
  CHECK_EQ(t.cuda.nkernels, 3);
  CHECK_CONTAINS(pp_trace_meta(&t, "unavailable.cuda.kinds"),
                 "MEMSET: CUPTI_ERROR_NOT_SUPPORTED");
  char *rep = tb_report_text(&a);
  CHECK_CONTAINS(rep, "  not traced:                  MEMSET: "
                      "CUPTI_ERROR_NOT_SUPPORTED");
  free(rep);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(cupti_version_mismatch_refused) {
  start("version 28\n"); /* CUDA 12.9's API: other record layouts */
  CHECK_EQ(pp__session_cuda_start(), -1);
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis a = {0};
  read_trace(trace_path, &t, &a);
  CHECK_CONTAINS(pp_trace_meta(&t, "unavailable.cuda"),
                 "libcupti API version 28");
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

#endif /* PP_HAVE_CUPTI */

/* ---- unavailable paths (any build) ------------------------------------------ */

/* PIPEPROF_CUDA=1 with no libcupti: the program is profiled, the report
 * says why CUDA tracing is not. */
PP_TEST(cupti_library_missing) {
  char out[512];
  snprintf(out, sizeof out, "%s/env.pptrace", pp_test_tmpdir());
  setenv("PIPEPROF", "1", 1);
  setenv("PIPEPROF_OUT", out, 1);
  setenv("PIPEPROF_CUDA", "1", 1);
  setenv("PIPEPROF_LIBCUPTI", "/nonexistent/libcupti.so", 1);
  unsetenv("PIPEPROF_OWNER_PID");
  CHECK_EQ(pp_init_from_env(), PP_OK);
  { PP_ZONE("work"); }
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis a = {0};
  read_trace(out, &t, &a);
  CHECK(pp_profile_zone(&a, loc_named(&t, "work")) != NULL);
  char *rep = tb_report_text(&a);
#ifdef PP_HAVE_CUPTI
  CHECK_CONTAINS(rep, "\nCUDA activity (CUPTI)\nunavailable: cannot load "
                      "PIPEPROF_LIBCUPTI=/nonexistent/libcupti.so");
#else
  CHECK_CONTAINS(rep, "CUDA tracing: unavailable: built without CUPTI "
                      "headers\n");
#endif
  free(rep);
  char *js = tb_summary_json(&a);
  CHECK_CONTAINS(js, "\"cuda\":{\"unavailable\":");
  free(js);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(cupti_env_invalid_value) {
  char out[512], err[512];
  snprintf(out, sizeof out, "%s/env.pptrace", pp_test_tmpdir());
  snprintf(err, sizeof err, "%s/stderr.txt", pp_test_tmpdir());
  setenv("PIPEPROF", "1", 1);
  setenv("PIPEPROF_OUT", out, 1);
  setenv("PIPEPROF_CUDA", "maybe", 1);
  unsetenv("PIPEPROF_OWNER_PID");
  int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  int saved = dup(2);
  dup2(fd, 2);
  int rc = pp_init_from_env();
  dup2(saved, 2);
  close(fd);
  close(saved);
  /* Invalid like any other PIPEPROF_* value (docs/api.md): profiling is
   * off, one line, no file. */
  CHECK_EQ(rc, PP_EENV);
  CHECK(!pp_is_running());
  char *text = pp_test_slurp(err, NULL);
  CHECK_STR(text, "pipeprof: invalid PIPEPROF_CUDA=\"maybe\": expected 1 or "
                  "0 (on/off, true/false, yes/no); profiling is off\n");
  free(text);
  CHECK(access(out, F_OK) != 0);
}

/* `pipeprof run --cuda` switches tracing on in the child through the
 * environment; with no libcupti the run goes on and the report says why
 * (here the fake-less path: PIPEPROF_LIBCUPTI names nothing). */
PP_TEST_T(cupti_run_flag, 120) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/run", pp_test_tmpdir());
  setenv("PIPEPROF_LIBCUPTI", "/nonexistent/libcupti.so", 1);
  pp_cli_result r =
      pp_test_cli("run -q --cuda -o '%s' --hz 20 -- "
                  "'%s/pipeprof-example-pipeline' --frames 5 --quiet",
                  dir, pp_test_bindir());
  if (r.rc != 0)
    PP_FAIL("exit %d\nstdout:\n%s\nstderr:\n%s", r.rc, r.out, r.err);
  CHECK_CONTAINS(r.out, "\nCUDA activity (CUPTI)\nunavailable: ");
  CHECK_CONTAINS(r.out, "detect"); /* the program's zones are there */
  pp_cli_result_free(&r);
  pp_cli_result h = pp_test_cli("run --help");
  CHECK_CONTAINS(h.out, "--cuda");
  pp_cli_result_free(&h);
}

/* ---- recommendations from CUDA activity ----------------------------------- */

/* One stage "infer" [0, 100) whose call at 5 launches a 40 ns host-to-device
 * copy of 1 MiB from host memory of kind src_kind (1 pageable, 2 pinned). */
static const pp_advice *copy_advice(pp_trace *t, pp_analysis *a,
                                    uint8_t src_kind) {
  memset(t, 0, sizeof *t);
  uint32_t z = tb_loc(t, "infer", PP_KIND_ZONE);
  size_t th = tb_thread(t, 7, "main");
  tb_ev(t, th, 0, z, PPT_EV_ZONE_BEGIN);
  tb_ev(t, th, 100, z, PPT_EV_ZONE_END);
  pp_cuda_trace *c = &t->cuda;
  c->chunks = 1;
  c->names = tb_grow(NULL, &c->nnames, 1, sizeof(char *));
  c->names[0] = tb_strdup("cudaMemcpy");
  size_t cap = 0;
  c->apis = tb_grow(NULL, &cap, 1, sizeof *c->apis);
  c->cap_apis = cap;
  c->apis[c->napis++] = (pp_cuda_api){5, 55, 7, 2, 31, 0, 9, 0};
  cap = 0;
  c->memcpys = tb_grow(NULL, &cap, 1, sizeof *c->memcpys);
  c->cap_memcpys = cap;
  c->memcpys[c->nmemcpys++] =
      (pp_cuda_memcpy){10, 50, 1048576, 1, src_kind, 3, 0, 0, 1, 0, 9};
  CHECK_EQ(pp_analyze(t, a), 0);
  for (size_t i = 0; i < a->prof.pipe.nadvice; i++)
    if (strcmp(a->prof.pipe.advice[i].rule, "pageable-copies") == 0)
      return &a->prof.pipe.advice[i];
  return NULL;
}

PP_TEST(cupti_advice_pageable_copies) {
  pp_trace t;
  pp_analysis a = {0};
  const pp_advice *adv = copy_advice(&t, &a, 1);
  CHECK(adv != NULL);
  CHECK_CONTAINS(adv->evidence, "40.0% of infer is host<->device copy");
  CHECK_CONTAINS(adv->evidence, "100% of the bytes from pageable memory");
  CHECK_CONTAINS(adv->text, "pinned");
  char *rep = tb_report_text(&a);
  CHECK_CONTAINS(rep, "use pinned (page-locked) host buffers for infer");
  free(rep);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  /* The same copy from pinned memory: no evidence, no advice. */
  CHECK(copy_advice(&t, &a, 2) == NULL);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}
