/* SPDX-License-Identifier: MIT */
/*
 * The CUDA injection entry point: with CUDA_INJECTION64_PATH naming
 * libpipeprof.so (as `pipeprof run --cuda` sets it), the CUDA driver loads
 * the library during cuInit and calls InitializeInjection(). The library's
 * constructor has already started the session from the environment
 * (PIPEPROF=1); here CUPTI activity tracing is started in it, so a program
 * that does not link pipeprof gets its kernels and copies traced.
 */
#include "core/recorder.h"
#include "pipeprof.h"

PP_API int InitializeInjection(void);

int InitializeInjection(void) {
  if (pp_is_running())
    pp__session_cuda_start();
  return 1; /* never fail the program's cuInit */
}
