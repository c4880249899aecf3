/* SPDX-License-Identifier: MIT */
/*
 * The fake CUDA driver (tests/fakes/fake_cuda.c) as the GPU tests use it:
 * where it is, the script that drives it, a context and stream made the way
 * a CUDA program makes them, and a session around it. One session at a time
 * per test process; the paths below belong to the running test.
 */
#ifndef PP_FAKE_CUDA_HARNESS_H
#define PP_FAKE_CUDA_HARNESS_H

#include "analyze/analysis.h"
#include "pipeprof.h"

/* The session's trace and the fake's log of calls (fcu_script,
 * fcu_session). */
extern char fcu_trace_path[512], fcu_log_path[512];

/* The fake libcuda.so.1, and its build without cuMemGetInfo_v2. */
const char *fcu_lib(void);
const char *fcu_lib_nomem(void);

/* Write script for the fake at lib and point the fake (PP_FAKE_CUDA,
 * PP_FAKE_CUDA_LOG, a fresh log) and pipeprof (PIPEPROF_LIBCUDA) at it. */
void fcu_script(const char *lib, const char *script);
/* Make a context current on this thread and create a stream in it, as a
 * CUDA program would; returns the stream. */
void *fcu_program_stream(const char *lib);
/* Start a session in mode recording to name in the test's directory. */
void fcu_session(const char *name, pp_mode mode);
/* End the session; read and analyse its trace into t. */
void fcu_finish(pp_trace *t, pp_analysis *a);

#endif /* PP_FAKE_CUDA_HARNESS_H */
