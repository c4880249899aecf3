/* SPDX-License-Identifier: MIT */
/*
 * The fake CUDA driver as the GPU tests use it (fake_cuda_harness.h).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze/analyze.h"
#include "fake_cuda_harness.h"
#include "model/reader.h"
#include "runner.h"

char fcu_trace_path[512], fcu_log_path[512];

const char *fcu_lib(void) {
#ifdef PP_FAKE_CUDA_PATH
  return PP_FAKE_CUDA_PATH;
#else
  static char p[512];
  snprintf(p, sizeof p, "%s/fakes/libcuda.so.1", pp_test_bindir());
  return p;
#endif
}

const char *fcu_lib_nomem(void) {
#ifdef PP_FAKE_CUDA_NOMEM_PATH
  return PP_FAKE_CUDA_NOMEM_PATH;
#else
  static char p[512];
  snprintf(p, sizeof p, "%s/fakes/nomem/libcuda.so.1", pp_test_bindir());
  return p;
#endif
}

void fcu_script(const char *lib, const char *script) {
  char sp[512];
  snprintf(sp, sizeof sp, "%s/cuda.txt", pp_test_tmpdir());
  FILE *f = fopen(sp, "w");
  if (!f)
    PP_FAIL("cannot write %s", sp);
  fputs(script, f);
  fclose(f);
  snprintf(fcu_log_path, sizeof fcu_log_path, "%s/cuda.log", pp_test_tmpdir());
  remove(fcu_log_path);
  setenv("PP_FAKE_CUDA", sp, 1);
  setenv("PP_FAKE_CUDA_LOG", fcu_log_path, 1);
  setenv("PIPEPROF_LIBCUDA", lib, 1);
}

void *fcu_program_stream(const char *lib) {
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    PP_FAIL("cannot load the fake libcuda at %s", lib);
  int (*init)(unsigned);
  int (*ctx_create)(void **, unsigned, int);
  int (*stream_create)(void **, unsigned);
  *(void **)&init = dlsym(h, "cuInit");
  *(void **)&ctx_create = dlsym(h, "cuCtxCreate_v2");
  *(void **)&stream_create = dlsym(h, "cuStreamCreate");
  void *ctx, *stream = NULL;
  CHECK(init && ctx_create && stream_create);
  CHECK_EQ(init(0), 0);
  CHECK_EQ(ctx_create(&ctx, 0, 0), 0);
  CHECK_EQ(stream_create(&stream, 0), 0);
  return stream;
}

void fcu_session(const char *name, pp_mode mode) {
  snprintf(fcu_trace_path, sizeof fcu_trace_path, "%s/%s", pp_test_tmpdir(),
           name);
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = fcu_trace_path;
  cfg.mode = mode;
  cfg.install_signals = 0;
  CHECK_EQ(pp_init(&cfg), PP_OK);
}

void fcu_finish(pp_trace *t, pp_analysis *a) {
  CHECK_EQ(pp_shutdown(), PP_OK);
  char err[256];
  CHECK_EQ(pp_trace_read_file(fcu_trace_path, t, err, sizeof err), 0);
  CHECK_EQ(pp_analyze(t, a), 0);
}
