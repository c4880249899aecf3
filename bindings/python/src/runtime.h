/* SPDX-License-Identifier: MIT */
/* The pipeline runtime's Python types (runtime.c), added to _pipeprof. */
#ifndef PP_PY_RUNTIME_H
#define PP_PY_RUNTIME_H

#include <Python.h>

/* Resolve the runtime's functions in the loaded library: 0, or -1 when it
 * has none (the types then raise RuntimeError). */
int pp_py_runtime_load(void *handle);
/* Add RtQueue, RtPipeline, RtBatcher, RtSizer and the status codes. */
int pp_py_runtime_add(PyObject *m);

#endif /* PP_PY_RUNTIME_H */
