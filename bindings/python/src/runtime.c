/* SPDX-License-Identifier: MIT */
/*
 * The pipeline runtime (include/pipeprof/runtime.h) for Python:
 * _pipeprof.RtQueue, RtPipeline, RtBatcher and RtSizer, thin types over
 * the C runtime of the loaded libpipeprof (resolved from its handle by
 * pp_py_runtime_load), wrapped by pipeprof/runtime.py.
 *
 * Items are Python objects: a push takes a reference, a pop hands it on.
 * Every call that may wait releases the GIL. A pipeline's stage runs a
 * Python callable on the runtime's worker threads, taking the GIL for the
 * call only; an exception it raises fails the pipeline (kept, and raised
 * again by drain()).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <string.h>

#include "pipeprof.h"
#include "pipeprof/runtime.h"
#include "runtime.h"

#define RT_SYMBOLS(X)                                                          \
  X(pp_rt_error)                                                               \
  X(pp_rt_queue_new)                                                           \
  X(pp_rt_queue_free)                                                          \
  X(pp_rt_queue_push)                                                          \
  X(pp_rt_queue_pop)                                                           \
  X(pp_rt_queue_close)                                                         \
  X(pp_rt_queue_depth)                                                         \
  X(pp_rt_queue_capacity)                                                      \
  X(pp_rt_pipeline_new)                                                        \
  X(pp_rt_pipeline_ends)                                                       \
  X(pp_rt_pipeline_to_batcher)                                                 \
  X(pp_rt_stage_add)                                                           \
  X(pp_rt_pipeline_output)                                                     \
  X(pp_rt_pipeline_start)                                                      \
  X(pp_rt_pipeline_submit)                                                     \
  X(pp_rt_pipeline_take)                                                       \
  X(pp_rt_pipeline_drain)                                                      \
  X(pp_rt_pipeline_cancel)                                                     \
  X(pp_rt_pipeline_stats)                                                      \
  X(pp_rt_pipeline_free)                                                       \
  X(pp_rt_batcher_new)                                                         \
  X(pp_rt_batcher_lane_delay)                                                  \
  X(pp_rt_batcher_stages)                                                      \
  X(pp_rt_batcher_put)                                                         \
  X(pp_rt_batcher_next)                                                        \
  X(pp_rt_batcher_set_max)                                                     \
  X(pp_rt_batcher_close)                                                       \
  X(pp_rt_batcher_free)                                                        \
  X(pp_rt_sizer_new)                                                           \
  X(pp_rt_sizer_size)                                                          \
  X(pp_rt_sizer_observe)                                                       \
  X(pp_rt_sizer_oom)                                                           \
  X(pp_rt_sizer_free)

static struct {
  int loaded;
#define RT_FIELD(name) __typeof__(&name) name;
  RT_SYMBOLS(RT_FIELD)
#undef RT_FIELD
} rt;

int pp_py_runtime_load(void *handle) {
  void *sym;
#define RT_RESOLVE(name)                                                       \
  if (!(sym = dlsym(handle, #name)))                                           \
    return -1;                                                                 \
  memcpy(&rt.name, &sym, sizeof sym);
  RT_SYMBOLS(RT_RESOLVE)
#undef RT_RESOLVE
  rt.loaded = 1;
  return 0;
}

static int need_rt(void) {
  if (rt.loaded)
    return 0;
  PyErr_SetString(PyExc_RuntimeError,
                  "pipeprof: this libpipeprof has no pipeline runtime");
  return -1;
}

/* timeout in seconds (None: wait) as the runtime's ns (-1: wait). */
static int timeout_ns(PyObject *t, int64_t *ns) {
  if (t == Py_None) {
    *ns = -1;
    return 0;
  }
  double s = PyFloat_AsDouble(t);
  if (s == -1.0 && PyErr_Occurred())
    return -1;
  if (!(s >= 0) || s > 1e9) {
    PyErr_SetString(PyExc_ValueError, "timeout must be None or >= 0 s");
    return -1;
  }
  *ns = (int64_t)(s * 1e9);
  return 0;
}

/* ---- RtQueue ------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD pp_rt_queue *q;
} RtQueue;

static int queue_init(RtQueue *self, PyObject *args, PyObject *kw) {
  static char *kwl[] = {"name", "capacity", "from_stage", "to_stage", NULL};
  const char *name, *from = NULL, *to = NULL;
  Py_ssize_t cap;
  if (need_rt() || !PyArg_ParseTupleAndKeywords(args, kw, "sn|zz:RtQueue", kwl,
                                                &name, &cap, &from, &to))
    return -1;
  if (cap < 1 || !(self->q = rt.pp_rt_queue_new(name, from, to, (size_t)cap))) {
    PyErr_SetString(PyExc_ValueError, "capacity must be 1 .. 2**30");
    return -1;
  }
  return 0;
}

static void queue_dealloc(RtQueue *self) {
  if (self->q) {
    rt.pp_rt_queue_close(self->q);
    void *item;
    while (rt.pp_rt_queue_pop(self->q, &item, NULL, 0) == PP_OK)
      Py_DECREF((PyObject *)item);
    rt.pp_rt_queue_free(self->q);
  }
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* push(obj, id, timeout) -> status */
static PyObject *queue_push(RtQueue *self, PyObject *args) {
  PyObject *obj, *t = Py_None;
  unsigned long long id;
  int64_t ns;
  if (!PyArg_ParseTuple(args, "OK|O:push", &obj, &id, &t) || timeout_ns(t, &ns))
    return NULL;
  Py_INCREF(obj);
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = rt.pp_rt_queue_push(self->q, obj, id, ns);
  Py_END_ALLOW_THREADS if (rc != PP_OK) Py_DECREF(obj);
  return PyLong_FromLong(rc);
}

/* pop(timeout) -> (status, obj or None, id) */
static PyObject *queue_pop(RtQueue *self, PyObject *args) {
  PyObject *t = Py_None;
  int64_t ns;
  if (!PyArg_ParseTuple(args, "|O:pop", &t) || timeout_ns(t, &ns))
    return NULL;
  void *item = NULL;
  uint64_t id = 0;
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = rt.pp_rt_queue_pop(self->q, &item, &id, ns);
  Py_END_ALLOW_THREADS if (rc != PP_OK) return Py_BuildValue("iOK", rc, Py_None,
                                                             0ULL);
  PyObject *r =
      Py_BuildValue("iOK", rc, (PyObject *)item, (unsigned long long)id);
  Py_DECREF((PyObject *)item); /* the queue's reference, now the tuple's */
  return r;
}

static PyObject *queue_close(RtQueue *self, PyObject *unused) {
  (void)unused;
  rt.pp_rt_queue_close(self->q);
  Py_RETURN_NONE;
}

static PyObject *queue_depth(RtQueue *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromSize_t(rt.pp_rt_queue_depth(self->q));
}

static PyObject *queue_capacity(RtQueue *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromSize_t(rt.pp_rt_queue_capacity(self->q));
}

static PyMethodDef queue_methods[] = {
    {"push", (PyCFunction)queue_push, METH_VARARGS, NULL},
    {"pop", (PyCFunction)queue_pop, METH_VARARGS, NULL},
    {"close", (PyCFunction)queue_close, METH_NOARGS, NULL},
    {"depth", (PyCFunction)queue_depth, METH_NOARGS, NULL},
    {"capacity", (PyCFunction)queue_capacity, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyTypeObject RtQueue_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pipeprof._pipeprof.RtQueue",
    .tp_basicsize = sizeof(RtQueue),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)queue_dealloc,
    .tp_methods = queue_methods,
    .tp_init = (initproc)queue_init,
    .tp_new = PyType_GenericNew,
};

/* ---- RtPipeline ------------------------------------------------------------
 */

#define MAX_PY_STAGES 64

typedef struct {
  PyObject_HEAD pp_rt_pipeline *p;
  PyObject *fns[MAX_PY_STAGES]; /* the stages' callables */
  int nfns;
  PyObject *error; /* the first exception a stage raised (exc object) */
  PyObject *batcher; /* to_batcher's, kept alive as long as the pipeline */
} RtPipeline;

static PyObject *pipeline_to_batcher(RtPipeline *self, PyObject *args);

typedef struct stage_ctx {
  RtPipeline *owner;
  PyObject *fn;
} stage_ctx;

static int py_stage(void *ctx, void *item, uint64_t id, void **out) {
  stage_ctx *c = ctx;
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *r = PyObject_CallFunction(c->fn, "OK", (PyObject *)item,
                                      (unsigned long long)id);
  Py_DECREF((PyObject *)item);
  int rc = PP_OK;
  if (!r) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && tb)
      PyException_SetTraceback(value, tb);
    if (!c->owner->error && value) {
      c->owner->error = value;
      value = NULL;
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    rc = -1000;
  } else if (r == Py_None) {
    Py_DECREF(r);
    *out = NULL;
  } else {
    *out = r;
  }
  PyGILState_Release(g);
  return rc;
}

static void py_drop(void *ctx, void *item, uint64_t id) {
  (void)ctx;
  (void)id;
  PyGILState_STATE g = PyGILState_Ensure();
  Py_DECREF((PyObject *)item);
  PyGILState_Release(g);
}

static int pipeline_init(RtPipeline *self, PyObject *args, PyObject *kw) {
  static char *kwl[] = {"name", NULL};
  const char *name;
  if (need_rt() ||
      !PyArg_ParseTupleAndKeywords(args, kw, "s:RtPipeline", kwl, &name))
    return -1;
  if (!(self->p = rt.pp_rt_pipeline_new(name, py_drop, NULL))) {
    PyErr_NoMemory();
    return -1;
  }
  return 0;
}

static void pipeline_dealloc(RtPipeline *self) {
  if (self->p) {
    pp_rt_pipeline *p = self->p;
    self->p = NULL;
    Py_BEGIN_ALLOW_THREADS rt.pp_rt_pipeline_free(p);
    Py_END_ALLOW_THREADS
  }
  for (int i = 0; i < self->nfns; i++) {
    stage_ctx *c = PyCapsule_GetPointer(self->fns[i], NULL);
    Py_XDECREF(c ? c->fn : NULL);
    Py_DECREF(self->fns[i]);
  }
  Py_XDECREF(self->error);
  Py_XDECREF(self->batcher);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static void free_ctx(PyObject *cap) {
  PyMem_RawFree(PyCapsule_GetPointer(cap, NULL));
}

/* add_stage(name, fn, workers, capacity) -> status */
static PyObject *pipeline_add_stage(RtPipeline *self, PyObject *args) {
  const char *name;
  PyObject *fn;
  int workers;
  Py_ssize_t cap;
  if (!PyArg_ParseTuple(args, "sOin:add_stage", &name, &fn, &workers, &cap))
    return NULL;
  if (!PyCallable_Check(fn)) {
    PyErr_SetString(PyExc_TypeError, "a stage must be callable");
    return NULL;
  }
  if (self->nfns >= MAX_PY_STAGES || cap < 1)
    return PyLong_FromLong(PP_EINVAL);
  stage_ctx *c = PyMem_RawMalloc(sizeof *c);
  PyObject *capsule = c ? PyCapsule_New(c, NULL, free_ctx) : NULL;
  if (!capsule) {
    PyMem_RawFree(c);
    return PyErr_NoMemory();
  }
  c->owner = self;
  c->fn = fn;
  int rc = rt.pp_rt_stage_add(self->p, name, workers, (size_t)cap, py_stage, c);
  if (rc != PP_OK) {
    Py_DECREF(capsule);
    return PyLong_FromLong(rc);
  }
  Py_INCREF(fn);
  self->fns[self->nfns++] = capsule;
  return PyLong_FromLong(rc);
}

/* ends(source, sink) -> status; None keeps a default */
static PyObject *pipeline_ends(RtPipeline *self, PyObject *args) {
  const char *source, *sink;
  if (!PyArg_ParseTuple(args, "zz:ends", &source, &sink))
    return NULL;
  return PyLong_FromLong(rt.pp_rt_pipeline_ends(self->p, source, sink));
}

static PyObject *pipeline_output(RtPipeline *self, PyObject *args) {
  Py_ssize_t cap;
  if (!PyArg_ParseTuple(args, "n:output", &cap))
    return NULL;
  return PyLong_FromLong(
      cap < 1 ? PP_EINVAL : rt.pp_rt_pipeline_output(self->p, (size_t)cap));
}

static PyObject *pipeline_start(RtPipeline *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromLong(rt.pp_rt_pipeline_start(self->p));
}

static PyObject *pipeline_submit(RtPipeline *self, PyObject *args) {
  PyObject *obj, *t = Py_None;
  unsigned long long id;
  int64_t ns;
  if (!PyArg_ParseTuple(args, "OK|O:submit", &obj, &id, &t) ||
      timeout_ns(t, &ns))
    return NULL;
  Py_INCREF(obj);
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = rt.pp_rt_pipeline_submit(self->p, obj, id, ns);
  Py_END_ALLOW_THREADS if (rc != PP_OK) Py_DECREF(obj);
  return PyLong_FromLong(rc);
}

static PyObject *pipeline_take(RtPipeline *self, PyObject *args) {
  PyObject *t = Py_None;
  int64_t ns;
  if (!PyArg_ParseTuple(args, "|O:take", &t) || timeout_ns(t, &ns))
    return NULL;
  void *item = NULL;
  uint64_t id = 0;
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = rt.pp_rt_pipeline_take(self->p, &item, &id, ns);
  Py_END_ALLOW_THREADS if (rc != PP_OK) return Py_BuildValue("iOK", rc, Py_None,
                                                             0ULL);
  PyObject *r =
      Py_BuildValue("iOK", rc, (PyObject *)item, (unsigned long long)id);
  Py_DECREF((PyObject *)item);
  return r;
}

/* drain() -> (status, the stage's exception or None) */
static PyObject *pipeline_drain(RtPipeline *self, PyObject *unused) {
  (void)unused;
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = rt.pp_rt_pipeline_drain(self->p);
  Py_END_ALLOW_THREADS return Py_BuildValue(
      "iO", rc, self->error ? self->error : Py_None);
}

static PyObject *pipeline_cancel(RtPipeline *self, PyObject *unused) {
  (void)unused;
  rt.pp_rt_pipeline_cancel(self->p);
  Py_RETURN_NONE;
}

static PyObject *pipeline_stats(RtPipeline *self, PyObject *unused) {
  (void)unused;
  pp_rt_stats s;
  rt.pp_rt_pipeline_stats(self->p, &s);
  return Py_BuildValue("{s:K,s:K,s:K,s:K,s:i,s:s,s:K}", "submitted",
                       (unsigned long long)s.submitted, "completed",
                       (unsigned long long)s.completed, "dropped",
                       (unsigned long long)s.dropped, "filtered",
                       (unsigned long long)s.filtered, "error", s.error,
                       "error_stage", s.error_stage, "error_item",
                       (unsigned long long)s.error_item);
}

static PyMethodDef pipeline_methods[] = {
    {"ends", (PyCFunction)pipeline_ends, METH_VARARGS, NULL},
    {"to_batcher", (PyCFunction)pipeline_to_batcher, METH_VARARGS, NULL},
    {"add_stage", (PyCFunction)pipeline_add_stage, METH_VARARGS, NULL},
    {"output", (PyCFunction)pipeline_output, METH_VARARGS, NULL},
    {"start", (PyCFunction)pipeline_start, METH_NOARGS, NULL},
    {"submit", (PyCFunction)pipeline_submit, METH_VARARGS, NULL},
    {"take", (PyCFunction)pipeline_take, METH_VARARGS, NULL},
    {"drain", (PyCFunction)pipeline_drain, METH_NOARGS, NULL},
    {"cancel", (PyCFunction)pipeline_cancel, METH_NOARGS, NULL},
    {"stats", (PyCFunction)pipeline_stats, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyTypeObject RtPipeline_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pipeprof._pipeprof.RtPipeline",
    .tp_basicsize = sizeof(RtPipeline),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)pipeline_dealloc,
    .tp_methods = pipeline_methods,
    .tp_init = (initproc)pipeline_init,
    .tp_new = PyType_GenericNew,
};

/* ---- RtBatcher
 * --------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD pp_rt_batcher *b;
  size_t max_batch;
  void **items;
  uint64_t *ids;
} RtBatcher;

static int batcher_init(RtBatcher *self, PyObject *args, PyObject *kw) {
  static char *kwl[] = {"name",  "max_batch",     "max_delay_ns",
                        "lanes", "lane_capacity", "pad",
                        NULL};
  const char *name;
  Py_ssize_t max_batch, lane_cap = 1024;
  long long delay;
  int lanes = 1, pad = 0;
  if (need_rt() ||
      !PyArg_ParseTupleAndKeywords(args, kw, "snL|ini:RtBatcher", kwl, &name,
                                   &max_batch, &delay, &lanes, &lane_cap, &pad))
    return -1;
  if (max_batch < 1 || lane_cap < 1 ||
      !(self->b = rt.pp_rt_batcher_new(name, (size_t)max_batch, delay, lanes,
                                       (size_t)lane_cap, (pp_rt_pad)pad))) {
    PyErr_SetString(PyExc_ValueError,
                    "max_batch 1..65536, max_delay >= 0, lanes 1..16, "
                    "lane_capacity >= 1, pad none|max|pow2");
    return -1;
  }
  self->max_batch = (size_t)max_batch;
  self->items = PyMem_RawMalloc(self->max_batch * sizeof(void *));
  self->ids = PyMem_RawMalloc(self->max_batch * sizeof(uint64_t));
  if (!self->items || !self->ids) {
    PyErr_NoMemory();
    return -1;
  }
  return 0;
}

static void batcher_dealloc(RtBatcher *self) {
  if (self->b) {
    rt.pp_rt_batcher_close(self->b);
    pp_rt_batch bt = {self->items, self->ids, 0, 0, 0, 0};
    while (self->items && rt.pp_rt_batcher_next(self->b, &bt, 0) == PP_OK)
      for (size_t i = 0; i < bt.n; i++)
        Py_DECREF((PyObject *)self->items[i]);
    rt.pp_rt_batcher_free(self->b);
  }
  PyMem_RawFree(self->items);
  PyMem_RawFree(self->ids);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *batcher_put(RtBatcher *self, PyObject *args) {
  PyObject *obj, *t = Py_None;
  unsigned long long id;
  int lane = 0;
  int64_t ns;
  if (!PyArg_ParseTuple(args, "OK|iO:put", &obj, &id, &lane, &t) ||
      timeout_ns(t, &ns))
    return NULL;
  Py_INCREF(obj);
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = rt.pp_rt_batcher_put(self->b, obj, id, lane, ns);
  Py_END_ALLOW_THREADS if (rc != PP_OK) Py_DECREF(obj);
  return PyLong_FromLong(rc);
}

/* next(timeout) -> (status, [(obj, id)...], padded, waited_ns, full) */
static PyObject *batcher_next(RtBatcher *self, PyObject *args) {
  PyObject *t = Py_None;
  int64_t ns;
  if (!PyArg_ParseTuple(args, "|O:next", &t) || timeout_ns(t, &ns))
    return NULL;
  pp_rt_batch bt = {self->items, self->ids, 0, 0, 0, 0};
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = rt.pp_rt_batcher_next(self->b, &bt, ns);
  Py_END_ALLOW_THREADS if (rc != PP_OK) return Py_BuildValue(
      "iOiLi", rc, Py_None, 0, 0LL, 0);
  PyObject *list = PyList_New((Py_ssize_t)bt.n);
  for (size_t i = 0; i < bt.n; i++) {
    PyObject *pair = Py_BuildValue("OK", (PyObject *)self->items[i],
                                   (unsigned long long)self->ids[i]);
    Py_DECREF((PyObject *)self->items[i]);
    if (list)
      PyList_SET_ITEM(list, (Py_ssize_t)i, pair);
    else
      Py_XDECREF(pair);
  }
  if (!list)
    return NULL;
  return Py_BuildValue("iNnLi", rc, list, (Py_ssize_t)bt.padded,
                       (long long)bt.waited_ns, bt.full);
}

static PyObject *batcher_set_max(RtBatcher *self, PyObject *args) {
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "n:set_max", &n))
    return NULL;
  return PyLong_FromLong(n < 1 ? PP_EINVAL
                               : rt.pp_rt_batcher_set_max(self->b, (size_t)n));
}

static PyObject *batcher_lane_delay(RtBatcher *self, PyObject *args) {
  int lane;
  long long delay;
  if (!PyArg_ParseTuple(args, "iL:lane_delay", &lane, &delay))
    return NULL;
  return PyLong_FromLong(rt.pp_rt_batcher_lane_delay(self->b, lane, delay));
}

/* stages(from, to) -> status */
static PyObject *batcher_stages(RtBatcher *self, PyObject *args) {
  const char *from, *to;
  if (!PyArg_ParseTuple(args, "zz:stages", &from, &to))
    return NULL;
  return PyLong_FromLong(rt.pp_rt_batcher_stages(self->b, from, to));
}

static PyObject *batcher_close(RtBatcher *self, PyObject *unused) {
  (void)unused;
  rt.pp_rt_batcher_close(self->b);
  Py_RETURN_NONE;
}

static PyMethodDef batcher_methods[] = {
    {"put", (PyCFunction)batcher_put, METH_VARARGS, NULL},
    {"next", (PyCFunction)batcher_next, METH_VARARGS, NULL},
    {"set_max", (PyCFunction)batcher_set_max, METH_VARARGS, NULL},
    {"lane_delay", (PyCFunction)batcher_lane_delay, METH_VARARGS, NULL},
    {"stages", (PyCFunction)batcher_stages, METH_VARARGS, NULL},
    {"close", (PyCFunction)batcher_close, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyTypeObject RtBatcher_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pipeprof._pipeprof.RtBatcher",
    .tp_basicsize = sizeof(RtBatcher),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)batcher_dealloc,
    .tp_methods = batcher_methods,
    .tp_init = (initproc)batcher_init,
    .tp_new = PyType_GenericNew,
};

/* to_batcher(batcher, lane) -> status: the last stage's items (owned
 * references) go into the batcher, whose next() hands them out. */
static PyObject *pipeline_to_batcher(RtPipeline *self, PyObject *args) {
  PyObject *b;
  int lane;
  if (!PyArg_ParseTuple(args, "O!i:to_batcher", &RtBatcher_Type, &b, &lane))
    return NULL;
  int rc = rt.pp_rt_pipeline_to_batcher(self->p, ((RtBatcher *)b)->b, lane);
  if (rc == PP_OK) {
    Py_INCREF(b);
    Py_XSETREF(self->batcher, b);
  }
  return PyLong_FromLong(rc);
}

/* ---- RtSizer ---------------------------------------------------------------
 */

typedef struct {
  PyObject_HEAD pp_rt_sizer *s;
} RtSizer;

static int sizer_init(RtSizer *self, PyObject *args, PyObject *kw) {
  static char *kwl[] = {"name",       "min_batch", "max_batch",
                        "slo_p99_ns", "window",    NULL};
  const char *name;
  Py_ssize_t lo, hi;
  long long slo;
  unsigned int window = 32;
  if (need_rt() || !PyArg_ParseTupleAndKeywords(args, kw, "snnL|I:RtSizer", kwl,
                                                &name, &lo, &hi, &slo, &window))
    return -1;
  if (lo < 1 || hi < 1 ||
      !(self->s =
            rt.pp_rt_sizer_new(name, (size_t)lo, (size_t)hi, slo, window))) {
    PyErr_SetString(PyExc_ValueError,
                    "1 <= min_batch <= max_batch <= 65536, slo_p99 > 0, "
                    "window 1..4096");
    return -1;
  }
  return 0;
}

static void sizer_dealloc(RtSizer *self) {
  rt.pp_rt_sizer_free(self->s);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *sizer_size(RtSizer *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromSize_t(rt.pp_rt_sizer_size(self->s));
}

static PyObject *sizer_observe(RtSizer *self, PyObject *arg) {
  long long ns = PyLong_AsLongLong(arg);
  if (ns == -1 && PyErr_Occurred())
    return NULL;
  return PyLong_FromSize_t(rt.pp_rt_sizer_observe(self->s, ns));
}

static PyObject *sizer_oom(RtSizer *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromSize_t(rt.pp_rt_sizer_oom(self->s));
}

static PyMethodDef sizer_methods[] = {
    {"size", (PyCFunction)sizer_size, METH_NOARGS, NULL},
    {"observe", (PyCFunction)sizer_observe, METH_O, NULL},
    {"oom", (PyCFunction)sizer_oom, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyTypeObject RtSizer_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pipeprof._pipeprof.RtSizer",
    .tp_basicsize = sizeof(RtSizer),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)sizer_dealloc,
    .tp_methods = sizer_methods,
    .tp_init = (initproc)sizer_init,
    .tp_new = PyType_GenericNew,
};

int pp_py_runtime_add(PyObject *m) {
  PyTypeObject *types[] = {&RtQueue_Type, &RtPipeline_Type, &RtBatcher_Type,
                           &RtSizer_Type};
  const char *names[] = {"RtQueue", "RtPipeline", "RtBatcher", "RtSizer"};
  for (int i = 0; i < 4; i++) {
    if (PyType_Ready(types[i]) < 0)
      return -1;
    Py_INCREF(types[i]);
    if (PyModule_AddObject(m, names[i], (PyObject *)types[i]) < 0)
      return -1;
  }
  return PyModule_AddIntConstant(m, "EAGAIN", PP_EAGAIN) ||
         PyModule_AddIntConstant(m, "ETIMEDOUT", PP_ETIMEDOUT) ||
         PyModule_AddIntConstant(m, "ECLOSED", PP_ECLOSED) ||
         PyModule_AddIntConstant(m, "EINVAL", PP_EINVAL);
}
