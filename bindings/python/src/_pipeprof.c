/* SPDX-License-Identifier: MIT */
/*
 * pipeprof._pipeprof: the CPython extension under `import pipeprof`.
 *
 * It does not link libpipeprof: _load() opens the library with dlopen and
 * resolves every function it uses into one table (`api`), so that the
 * Python package can look for the library in several places and say where
 * it looked when none works (pipeprof/_library.py). Calls through the
 * table cost what a call through the PLT costs.
 *
 * The hot path is `with pipeprof.zone(name):`. zone() returns one cached
 * Zone object per name (a dict lookup, no allocation); the Zone owns a
 * pp_srcloc built once, so __enter__ is pp_zone_begin(loc) with no string
 * hashing, and __exit__ pp_zone_end. The token each begin returns (the
 * site, or NULL when nothing was recorded) is kept on a per-thread stack
 * in C, not in the shared Zone object, so one Zone may be entered on many
 * threads and recursively. Decorated plain functions are called through a
 * C wrapper (Wrapped) with vectorcall, without a Python frame of ours.
 *
 * Alerts (pp_on_alert) run on the library's writer thread, which must
 * never wait for the GIL: the C callback copies each alert into a bounded
 * queue under a mutex, and a Python thread takes them with alerts_wait(),
 * which blocks with the GIL released. See docs/internals/python.md.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pipeprof.h"
#include "runtime.h"

#if defined(__GNUC__)
#define PY_LIKELY(x) __builtin_expect(!!(x), 1)
#define PY_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TLS_IE __attribute__((tls_model("initial-exec")))
#else
#define PY_LIKELY(x) (x)
#define PY_UNLIKELY(x) (x)
#define TLS_IE
#endif

/* Where the build found libpipeprof, as a Python tuple literal of
 * ("what", "directory") pairs: set by setup.py and CMake. */
#ifndef PP_PY_LIBDIRS
#define PP_PY_LIBDIRS ""
#endif

/* ---- the library's functions --------------------------------------------- */

#define PP_PY_SYMBOLS(X)                                                       \
  X(pp_version_number)                                                         \
  X(pp_version_string)                                                         \
  X(pp_strerror)                                                               \
  X(pp_err_name)                                                               \
  X(pp_last_error)                                                             \
  X(pp_config_init)                                                            \
  X(pp_init)                                                                   \
  X(pp_shutdown)                                                               \
  X(pp_is_running)                                                             \
  X(pp_set_enabled)                                                            \
  X(pp_is_enabled)                                                             \
  X(pp_flight_dump)                                                            \
  X(pp_output_path)                                                            \
  X(pp_metadata)                                                               \
  X(pp_zone_begin)                                                             \
  X(pp_zone_end)                                                               \
  X(pp_zone_begin_name)                                                        \
  X(pp_range_start)                                                            \
  X(pp_range_end)                                                              \
  X(pp_request_begin)                                                          \
  X(pp_request_first_token)                                                    \
  X(pp_request_tokens)                                                         \
  X(pp_request_end)                                                            \
  X(pp_batch)                                                                  \
  X(pp_counter_set)                                                            \
  X(pp_counter_add)                                                            \
  X(pp_counter_setf)                                                           \
  X(pp_mark)                                                                   \
  X(pp_frame_mark)                                                             \
  X(pp_flow_begin)                                                             \
  X(pp_flow_step)                                                              \
  X(pp_flow_end)                                                               \
  X(pp_queue_declare)                                                          \
  X(pp_queue_push)                                                             \
  X(pp_queue_pop)                                                              \
  X(pp_queue_wait_begin)                                                       \
  X(pp_queue_wait_end)                                                         \
  X(pp_queue_depth)                                                            \
  X(pp_thread_name)                                                            \
  X(pp_on_alert)                                                               \
  X(pp_live_zone)                                                              \
  X(pp_live_zone_name)                                                         \
  X(pp_live_request)                                                           \
  X(pp_live_zone_slo)                                                          \
  X(pp_gpu_zone_begin)                                                         \
  X(pp_gpu_zone_end)

static struct {
  int loaded;
  void *handle;
#define PP_PY_FIELD(name) __typeof__(&name) name;
  PP_PY_SYMBOLS(PP_PY_FIELD)
#undef PP_PY_FIELD
} api;

/* Optional symbols: NULL in an older library. */
static void (*site_declare)(const pp_srcloc *); /* pp_site_declare */

/* pp__active of the loaded library; a zero of our own before. */
static int not_loaded;
static int *active = &not_loaded;

static inline int recording(void) {
  return __atomic_load_n(active, __ATOMIC_RELAXED) & 1;
}

static PyObject *Error; /* _pipeprof.Error, raised for library failures */

static int need_library(void) {
  if (PY_LIKELY(api.loaded))
    return 0;
  PyErr_SetString(PyExc_RuntimeError,
                  "pipeprof: libpipeprof is not loaded (import pipeprof, "
                  "not pipeprof._pipeprof)");
  return -1;
}

/* _load(path, noload=False): dlopen path and resolve the table. With
 * noload, only a library already in the process is taken (None when
 * there is none). Returns the file the library was loaded from. */
static PyObject *loaded_file(void) {
  Dl_info info;
  void *addr;
  memcpy(&addr, &api.pp_version_number, sizeof addr);
  if (dladdr(addr, &info) && info.dli_fname)
    return PyUnicode_DecodeFSDefault(info.dli_fname);
  Py_RETURN_NONE;
}

static PyObject *mod_load(PyObject *m, PyObject *args) {
  PyObject *path_obj;
  int noload = 0;
  if (!PyArg_ParseTuple(args, "O&|p:_load", PyUnicode_FSConverter, &path_obj,
                        &noload))
    return NULL;
  if (api.loaded) {
    Py_DECREF(path_obj);
    return loaded_file();
  }
  const char *path = PyBytes_AS_STRING(path_obj);
  void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL | (noload ? RTLD_NOLOAD : 0));
  if (!h) {
    const char *e = dlerror();
    Py_DECREF(path_obj);
    if (noload)
      Py_RETURN_NONE;
    PyErr_SetString(PyExc_OSError, e ? e : "dlopen failed");
    return NULL;
  }
  void *sym;
#define PP_PY_RESOLVE(name)                                                    \
  sym = dlsym(h, #name);                                                       \
  if (!sym)                                                                    \
    goto missing;                                                              \
  memcpy(&api.name, &sym, sizeof sym);
  PP_PY_SYMBOLS(PP_PY_RESOLVE)
#undef PP_PY_RESOLVE
  if (!(sym = dlsym(h, "pp__active")))
    goto missing;
  active = sym;
  if ((sym = dlsym(h, "pp_site_declare")) != NULL)
    memcpy(&site_declare, &sym, sizeof sym);
  unsigned v = api.pp_version_number();
  if (v / 10000 != PP_VERSION_MAJOR) {
    PyErr_Format(PyExc_OSError,
                 "%s is libpipeprof %s; this binding was built for %s "
                 "(major versions differ)",
                 path, api.pp_version_string(), PP_VERSION_STRING);
    goto fail;
  }
  api.handle = h;
  api.loaded = 1;
  pp_py_runtime_load(h); /* none in an older library: its types say so */
  Py_DECREF(path_obj);
  return loaded_file();
missing:
  PyErr_Format(PyExc_OSError,
               "%s lacks the symbols this binding needs (%s); is it an "
               "older libpipeprof than %s?",
               path, dlerror(), PP_VERSION_STRING);
fail:
  memset(&api, 0, sizeof api);
  site_declare = NULL;
  active = &not_loaded;
  dlclose(h);
  Py_DECREF(path_obj);
  return NULL;
}

/* ---- arguments ----------------------------------------------------------- */

/* A str without NUL characters as UTF-8 (owned by name, no copy). */
static const char *utf8_arg(PyObject *o, const char *fn, const char *what) {
  if (!PyUnicode_Check(o)) {
    PyErr_Format(PyExc_TypeError, "pipeprof.%s: %s must be a str, not %.80s",
                 fn, what, Py_TYPE(o)->tp_name);
    return NULL;
  }
  Py_ssize_t n;
  const char *s = PyUnicode_AsUTF8AndSize(o, &n);
  if (s && memchr(s, 0, (size_t)n)) {
    PyErr_Format(PyExc_ValueError,
                 "pipeprof.%s: %s must not contain NUL characters", fn, what);
    return NULL;
  }
  return s;
}

/* An int in [0, 2^64) (ids). */
static int u64_arg(PyObject *o, const char *fn, const char *what,
                   uint64_t *out) {
  if (!PyLong_Check(o) && !PyIndex_Check(o)) {
    PyErr_Format(PyExc_TypeError, "pipeprof.%s: %s must be an int, not %.80s",
                 fn, what, Py_TYPE(o)->tp_name);
    return -1;
  }
  PyObject *i = PyNumber_Index(o);
  if (!i)
    return -1;
  int overflow;
  long long sv = PyLong_AsLongLongAndOverflow(i, &overflow);
  unsigned long long v = (unsigned long long)sv;
  if (sv == -1 && !overflow && PyErr_Occurred()) {
    Py_DECREF(i);
    return -1;
  }
  int bad = overflow < 0 || (!overflow && sv < 0);
  if (overflow > 0) {
    v = PyLong_AsUnsignedLongLong(i);
    bad = v == (unsigned long long)-1 && PyErr_Occurred();
  }
  Py_DECREF(i);
  if (bad) {
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "pipeprof.%s: %s must be in 0..2**64-1", fn,
                 what);
    return -1;
  }
  *out = v;
  return 0;
}

static int i64_arg(PyObject *o, const char *fn, const char *what, int64_t lo,
                   int64_t hi, int64_t *out) {
  if (!PyLong_Check(o) && !PyIndex_Check(o)) {
    PyErr_Format(PyExc_TypeError, "pipeprof.%s: %s must be an int, not %.80s",
                 fn, what, Py_TYPE(o)->tp_name);
    return -1;
  }
  PyObject *i = PyNumber_Index(o);
  if (!i)
    return -1;
  int overflow;
  long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
  Py_DECREF(i);
  if (v == -1 && PyErr_Occurred())
    return -1;
  if (overflow || v < lo || v > hi) {
    PyErr_Format(PyExc_ValueError, "pipeprof.%s: %s must be in %lld..%lld", fn,
                 what, (long long)lo, (long long)hi);
    return -1;
  }
  *out = v;
  return 0;
}

/* Match positional and keyword arguments of a METH_FASTCALL|METH_KEYWORDS
 * call to names; out[i] stays NULL for an absent optional argument. */
static int parse(const char *fn, PyObject *const *args, Py_ssize_t nargs,
                 PyObject *kwnames, const char *const *names, int nreq,
                 int nmax, PyObject **out) {
  for (int i = 0; i < nmax; i++)
    out[i] = NULL;
  if (nargs > nmax) {
    PyErr_Format(PyExc_TypeError,
                 "pipeprof.%s() takes at most %d arguments (%zd given)", fn,
                 nmax, nargs);
    return -1;
  }
  for (Py_ssize_t i = 0; i < nargs; i++)
    out[i] = args[i];
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nk; k++) {
    PyObject *key = PyTuple_GET_ITEM(kwnames, k);
    int j = 0;
    while (j < nmax && PyUnicode_CompareWithASCIIString(key, names[j]) != 0)
      j++;
    if (j == nmax) {
      PyErr_Format(PyExc_TypeError,
                   "pipeprof.%s() got an unexpected keyword argument '%U'", fn,
                   key);
      return -1;
    }
    if (out[j]) {
      PyErr_Format(PyExc_TypeError,
                   "pipeprof.%s() got multiple values for argument '%s'", fn,
                   names[j]);
      return -1;
    }
    out[j] = args[nargs + k];
  }
  for (int i = 0; i < nreq; i++)
    if (!out[i]) {
      PyErr_Format(PyExc_TypeError,
                   "pipeprof.%s() missing required argument '%s'", fn,
                   names[i]);
      return -1;
    }
  return 0;
}

/* ---- per-thread state: zone tokens and the thread's name ---------------- */

#define STACK_MIN 32u
#define STACK_MAX 65536u

typedef struct tstack {
  uint32_t n, cap;
  uint64_t lost; /* enters past STACK_MAX (or out of memory), unpaired */
  int named;     /* the thread's name was given to the library */
  const pp_srcloc **v;
} tstack;

static __thread tstack *tls_stack TLS_IE;
static pthread_key_t stack_key;  /* frees a thread's stack at its exit */
static PyObject *current_thread; /* threading.current_thread */

static void stack_free(void *p) {
  tstack *t = p;
  if (t) {
    free(t->v);
    free(t);
  }
  tls_stack = NULL;
}

/* Give the library the name Python knows the calling thread by. Once per
 * thread, on its first event while recording. */
static void name_thread(tstack *t) {
  t->named = 1;
  PyObject *exc_type, *exc_value, *exc_tb;
  PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
  PyObject *th = current_thread ? PyObject_CallNoArgs(current_thread) : NULL;
  PyObject *name = th ? PyObject_GetAttrString(th, "name") : NULL;
  const char *s = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
  if (s)
    api.pp_thread_name(s);
  Py_XDECREF(name);
  Py_XDECREF(th);
  PyErr_Clear(); /* a name is a nicety: never fail the caller for it */
  PyErr_Restore(exc_type, exc_value, exc_tb);
}

static tstack *stack_new(void) {
  tstack *t = calloc(1, sizeof *t);
  if (!t)
    return NULL;
  t->v = malloc(STACK_MIN * sizeof *t->v);
  if (!t->v) {
    free(t);
    return NULL;
  }
  t->cap = STACK_MIN;
  tls_stack = t;
  pthread_setspecific(stack_key, t);
  return t;
}

/* The thread's stack, created on first use; NULL when out of memory. When
 * recording, also names the thread once. */
static inline tstack *thread_ready(void) {
  tstack *t = tls_stack;
  if (PY_UNLIKELY(!t) && !(t = stack_new()))
    return NULL;
  if (PY_UNLIKELY(!t->named) && recording())
    name_thread(t);
  return t;
}

/* Zone events recorded through this layer since the count was last
 * reset (under the GIL): the overhead estimate prices them at the Python
 * layer's measured cost (pipeprof/__init__.py, _price_python_zones). */
static uint64_t py_events;

/* Push the token of a zone begun now (NULL: nothing recorded). */
static inline void zone_push(const pp_srcloc *loc, const char *name) {
  tstack *t = tls_stack;
  if (PY_UNLIKELY(!t) && !(t = stack_new()))
    return; /* nothing recorded, nothing to pop: the exit finds no stack */
  if (PY_UNLIKELY(t->n == t->cap)) {
    uint32_t cap = t->cap * 2;
    const pp_srcloc **v;
    if (t->lost || cap > STACK_MAX || !(v = realloc(t->v, cap * sizeof *v))) {
      t->lost++;
      return;
    }
    t->v = v;
    t->cap = cap;
  }
  const pp_srcloc *tok = NULL;
  if (recording()) {
    if (PY_UNLIKELY(!t->named))
      name_thread(t);
    tok = loc ? api.pp_zone_begin(loc).loc : api.pp_zone_begin_name(name).loc;
    py_events += tok != NULL;
  }
  t->v[t->n++] = tok;
}

static inline void zone_pop(void) {
  tstack *t = tls_stack;
  if (PY_UNLIKELY(!t))
    return;
  if (PY_UNLIKELY(t->lost)) {
    t->lost--;
    return;
  }
  if (PY_LIKELY(t->n)) {
    const pp_srcloc *tok = t->v[--t->n];
    if (tok) {
      pp_zone z = {tok};
      api.pp_zone_end(z);
      py_events++;
    }
  }
}

/* ---- Zone ---------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD const pp_srcloc
      *loc;          /* never freed: the library keeps the address */
  const char *cname; /* loc NULL: name for pp_zone_begin_name */
  PyObject *name;    /* str */
} ZoneObject;

static PyTypeObject Zone_Type;
static PyObject *zone_cache;    /* name -> Zone */
static PyObject *site_cache;    /* (name, function, file, line) -> Zone */
static PyObject *decorate_hook; /* pipeprof._decorate.decorate */
/* Distinct names cached; later names use the library's interning (which
 * has a bound of its own). */
#define ZONE_CACHE_MAX 65536

static char *dup_utf8(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d)
    memcpy(d, s, n);
  return d;
}

/* A new Zone for name with a site of its own (function, file may be NULL);
 * with_site 0: no site, the name is interned by the library per call. */
static ZoneObject *zone_new(PyObject *name, const char *function,
                            const char *file, uint32_t line, int with_site) {
  const char *s = utf8_arg(name, "zone", "name");
  if (!s)
    return NULL;
  ZoneObject *z = PyObject_New(ZoneObject, &Zone_Type);
  if (!z)
    return NULL;
  z->loc = NULL;
  z->cname = s;
  Py_INCREF(name);
  z->name = name;
  if (!with_site)
    return z;
  pp_srcloc *loc = calloc(1, sizeof *loc);
  char *n = dup_utf8(s);
  char *fn = function ? dup_utf8(function) : NULL;
  char *fl = file ? dup_utf8(file) : NULL;
  if (!loc || !n || (function && !fn) || (file && !fl)) {
    free(loc);
    free(n);
    free(fn);
    free(fl);
    Py_DECREF(z);
    return (ZoneObject *)PyErr_NoMemory();
  }
  loc->name = n;
  loc->function = fn;
  loc->file = fl;
  loc->line = line;
  loc->kind = PP_KIND_ZONE;
  z->loc = loc;
  if (site_declare) /* named in the durable rings at once */
    site_declare(loc);
  return z;
}

static void zone_dealloc(ZoneObject *z) {
  /* z->loc stays allocated: the library may still refer to it */
  Py_XDECREF(z->name);
  PyObject_Free(z);
}

static PyObject *zone_repr(ZoneObject *z) {
  return PyUnicode_FromFormat("pipeprof.zone(%R)", z->name);
}

static PyObject *zone_enter(ZoneObject *z, PyObject *unused) {
  zone_push(z->loc, z->cname);
  Py_INCREF(z);
  return (PyObject *)z;
}

static PyObject *zone_exit(ZoneObject *z, PyObject *const *args,
                           Py_ssize_t nargs) {
  zone_pop();
  Py_RETURN_NONE;
}

/* Used as a decorator: pipeprof._decorate does the work (it tells plain
 * functions from generators and coroutines). */
static PyObject *zone_call(ZoneObject *z, PyObject *args, PyObject *kw) {
  if (kw || PyTuple_GET_SIZE(args) != 1 ||
      !PyCallable_Check(PyTuple_GET_ITEM(args, 0))) {
    PyErr_SetString(PyExc_TypeError,
                    "pipeprof.zone(name) decorates one callable: "
                    "@pipeprof.zone(\"name\")");
    return NULL;
  }
  if (!decorate_hook) {
    PyErr_SetString(PyExc_RuntimeError, "pipeprof: decorator not set up");
    return NULL;
  }
  return PyObject_CallFunctionObjArgs(decorate_hook, (PyObject *)z,
                                      PyTuple_GET_ITEM(args, 0), NULL);
}

static PyObject *zone_get_name(ZoneObject *z, void *c) {
  Py_INCREF(z->name);
  return z->name;
}

static PyMethodDef zone_methods[] = {
    {"__enter__", (PyCFunction)zone_enter, METH_NOARGS,
     "Begin the zone on the calling thread."},
    {"__exit__", (PyCFunction)(void (*)(void))zone_exit, METH_FASTCALL,
     "End the zone begun last on the calling thread."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef zone_getset[] = {
    {"name", (getter)zone_get_name, NULL, "the zone's name", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject Zone_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pipeprof.Zone",
    .tp_basicsize = sizeof(ZoneObject),
    .tp_dealloc = (destructor)zone_dealloc,
    .tp_repr = (reprfunc)zone_repr,
    .tp_call = (ternaryfunc)zone_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A named zone: `with zone:` times the block on the calling "
              "thread; `@zone` times each call of a function.",
    .tp_methods = zone_methods,
    .tp_getset = zone_getset,
};

/* zone(name): the cached Zone of that name. */
static PyObject *mod_zone(PyObject *m, PyObject *name) {
  if (PY_UNLIKELY(!PyUnicode_Check(name)))
    return (PyObject *)zone_new(name, NULL, NULL, 0, 0); /* raises */
  PyObject *z = PyDict_GetItemWithError(zone_cache, name);
  if (PY_LIKELY(z != NULL)) {
    Py_INCREF(z);
    return z;
  }
  if (PyErr_Occurred() || need_library() < 0)
    return NULL;
  int cache = PyDict_GET_SIZE(zone_cache) < ZONE_CACHE_MAX;
  ZoneObject *nz = zone_new(name, NULL, NULL, 0, cache);
  if (!nz)
    return NULL;
  if (cache && PyDict_SetItem(zone_cache, name, (PyObject *)nz) < 0) {
    Py_DECREF(nz);
    return NULL;
  }
  return (PyObject *)nz;
}

/* _site(name, function, file, line): a Zone whose site also names the
 * function, file and line (the profile decorator); one per distinct key. */
static PyObject *mod_site(PyObject *m, PyObject *args) {
  PyObject *name, *function, *file;
  unsigned int line;
  if (!PyArg_ParseTuple(args, "UUUI:_site", &name, &function, &file, &line))
    return NULL;
  if (need_library() < 0)
    return NULL;
  PyObject *z = PyDict_GetItemWithError(site_cache, args);
  if (z) {
    Py_INCREF(z);
    return z;
  }
  if (PyErr_Occurred())
    return NULL;
  const char *fn = utf8_arg(function, "profile", "function");
  const char *fl = fn ? utf8_arg(file, "profile", "file") : NULL;
  if (!fl)
    return NULL;
  int cache = PyDict_GET_SIZE(site_cache) < ZONE_CACHE_MAX;
  ZoneObject *nz = zone_new(name, fn, fl, line, cache);
  if (!nz)
    return NULL;
  if (cache && PyDict_SetItem(site_cache, args, (PyObject *)nz) < 0) {
    Py_DECREF(nz);
    return NULL;
  }
  return (PyObject *)nz;
}

/* ---- Wrapped: a plain function timed as a zone --------------------------- */

typedef struct {
  PyObject_HEAD ZoneObject *zone;
  PyObject *fn;
  PyObject *dict;
  vectorcallfunc vectorcall;
} WrappedObject;

static PyObject *wrapped_vectorcall(PyObject *self, PyObject *const *args,
                                    size_t nargsf, PyObject *kwnames) {
  WrappedObject *w = (WrappedObject *)self;
  zone_push(w->zone->loc, w->zone->cname);
  PyObject *r = PyObject_Vectorcall(w->fn, args, nargsf, kwnames);
  zone_pop();
  return r;
}

static PyObject *wrapped_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *zone, *fn;
  if (kw && PyDict_GET_SIZE(kw)) {
    PyErr_SetString(PyExc_TypeError, "Wrapped(zone, fn) takes no keywords");
    return NULL;
  }
  if (!PyArg_ParseTuple(args, "O!O:Wrapped", &Zone_Type, &zone, &fn))
    return NULL;
  if (!PyCallable_Check(fn)) {
    PyErr_SetString(PyExc_TypeError, "Wrapped: fn must be callable");
    return NULL;
  }
  WrappedObject *w = (WrappedObject *)type->tp_alloc(type, 0);
  if (!w)
    return NULL;
  Py_INCREF(zone);
  w->zone = (ZoneObject *)zone;
  Py_INCREF(fn);
  w->fn = fn;
  w->vectorcall = wrapped_vectorcall;
  return (PyObject *)w;
}

static int wrapped_traverse(WrappedObject *w, visitproc visit, void *arg) {
  Py_VISIT(w->zone);
  Py_VISIT(w->fn);
  Py_VISIT(w->dict);
  return 0;
}

static int wrapped_clear(WrappedObject *w) {
  Py_CLEAR(w->zone);
  Py_CLEAR(w->fn);
  Py_CLEAR(w->dict);
  return 0;
}

static void wrapped_dealloc(WrappedObject *w) {
  PyObject_GC_UnTrack(w);
  wrapped_clear(w);
  Py_TYPE(w)->tp_free((PyObject *)w);
}

/* A method: bind like a function does. */
static PyObject *wrapped_get(PyObject *self, PyObject *obj, PyObject *type) {
  if (obj == NULL || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

static PyObject *wrapped_repr(WrappedObject *w) {
  return PyUnicode_FromFormat("<pipeprof zone %R around %R>", w->zone->name,
                              w->fn);
}

static PyObject *wrapped_get_zone(WrappedObject *w, void *c) {
  Py_INCREF(w->zone);
  return (PyObject *)w->zone;
}

/* Pickled by reference, as the function it replaces is: the name under
 * which its module holds it (pickle checks that it is this object). */
static PyObject *wrapped_reduce(PyObject *self, PyObject *unused) {
  return PyObject_GetAttrString(self, "__qualname__");
}

static PyMethodDef wrapped_methods[] = {
    {"__reduce__", wrapped_reduce, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};

static PyGetSetDef wrapped_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"zone", (getter)wrapped_get_zone, NULL, "the zone of each call", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject Wrapped_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pipeprof.Wrapped",
    .tp_basicsize = sizeof(WrappedObject),
    .tp_dealloc = (destructor)wrapped_dealloc,
    .tp_vectorcall_offset = offsetof(WrappedObject, vectorcall),
    .tp_repr = (reprfunc)wrapped_repr,
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
                Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "Wrapped(zone, fn): calls fn inside the zone.",
    .tp_traverse = (traverseproc)wrapped_traverse,
    .tp_clear = (inquiry)wrapped_clear,
    .tp_methods = wrapped_methods,
    .tp_getset = wrapped_getset,
    .tp_descr_get = wrapped_get,
    .tp_dictoffset = offsetof(WrappedObject, dict),
    .tp_new = wrapped_new,
};

/* ---- recording calls ----------------------------------------------------- */

/* Recording calls check their arguments first, whether recording or not,
 * so that a program that runs unprofiled runs the same profiled; then
 * they return at once while not recording. */

static PyObject *mod_counter(PyObject *m, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames) {
  static const char *const names[] = {"name", "value"};
  PyObject *a[2];
  if (parse("counter", args, nargs, kwnames, names, 2, 2, a) < 0)
    return NULL;
  const char *s = utf8_arg(a[0], "counter", "name");
  if (!s)
    return NULL;
  PyObject *v = a[1];
  int is_int = 0;
  int64_t i = 0;
  double d = 0;
  if (PyFloat_Check(v)) {
    d = PyFloat_AS_DOUBLE(v);
  } else if (PyLong_Check(v) || PyIndex_Check(v)) {
    if (i64_arg(v, "counter", "value", INT64_MIN, INT64_MAX, &i) < 0)
      return NULL;
    is_int = 1;
  } else {
    d = PyFloat_AsDouble(v); /* numbers with __float__ */
    if (d == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError,
                   "pipeprof.counter: value must be an int or a float, not "
                   "%.80s",
                   Py_TYPE(v)->tp_name);
      return NULL;
    }
  }
  if (!recording())
    Py_RETURN_NONE;
  thread_ready();
  if (is_int)
    api.pp_counter_set(s, i);
  else
    api.pp_counter_setf(s, d);
  Py_RETURN_NONE;
}

static PyObject *mod_counter_add(PyObject *m, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames) {
  static const char *const names[] = {"name", "delta"};
  PyObject *a[2];
  if (parse("counter_add", args, nargs, kwnames, names, 2, 2, a) < 0)
    return NULL;
  const char *s = utf8_arg(a[0], "counter_add", "name");
  int64_t d;
  if (!s || i64_arg(a[1], "counter_add", "delta", INT64_MIN, INT64_MAX, &d) < 0)
    return NULL;
  if (!recording())
    Py_RETURN_NONE;
  thread_ready();
  api.pp_counter_add(s, d);
  Py_RETURN_NONE;
}

typedef void (*named_fn)(const char *);
typedef void (*named_id_fn)(const char *, uint64_t);

static PyObject *named_call(const char *fn, PyObject *name, named_fn call) {
  const char *s = utf8_arg(name, fn, "name");
  if (!s)
    return NULL;
  if (!recording())
    Py_RETURN_NONE;
  thread_ready();
  call(s);
  Py_RETURN_NONE;
}

static PyObject *mod_mark(PyObject *m, PyObject *name) {
  return named_call("mark", name, api.pp_mark);
}

static PyObject *mod_frame_mark(PyObject *m, PyObject *const *args,
                                Py_ssize_t nargs, PyObject *kwnames) {
  static const char *const names[] = {"stream"};
  PyObject *a[1];
  if (parse("frame_mark", args, nargs, kwnames, names, 0, 1, a) < 0)
    return NULL;
  if (!a[0]) {
    if (recording() && thread_ready())
      api.pp_frame_mark("frame");
    Py_RETURN_NONE;
  }
  return named_call("frame_mark", a[0], api.pp_frame_mark);
}

static PyObject *named_id_call(const char *fn, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames,
                               named_id_fn call) {
  static const char *const names[] = {"name", "id"};
  PyObject *a[2];
  if (parse(fn, args, nargs, kwnames, names, 2, 2, a) < 0)
    return NULL;
  const char *s = utf8_arg(a[0], fn, "name");
  uint64_t id;
  if (!s || u64_arg(a[1], fn, "id", &id) < 0)
    return NULL;
  if (!recording())
    Py_RETURN_NONE;
  thread_ready();
  call(s, id);
  Py_RETURN_NONE;
}

static PyObject *mod_flow_begin(PyObject *m, PyObject *const *args,
                                Py_ssize_t nargs, PyObject *kwnames) {
  return named_id_call("flow_begin", args, nargs, kwnames, api.pp_flow_begin);
}
static PyObject *mod_flow_step(PyObject *m, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames) {
  return named_id_call("flow_step", args, nargs, kwnames, api.pp_flow_step);
}
static PyObject *mod_flow_end(PyObject *m, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames) {
  return named_id_call("flow_end", args, nargs, kwnames, api.pp_flow_end);
}

static PyObject *mod_range_start(PyObject *m, PyObject *name) {
  const char *s = utf8_arg(name, "range_start", "name");
  if (!s)
    return NULL;
  if (!recording())
    return PyLong_FromLong(0);
  thread_ready();
  return PyLong_FromUnsignedLongLong(api.pp_range_start(s));
}

static PyObject *mod_range_end(PyObject *m, PyObject *id_obj) {
  uint64_t id;
  if (u64_arg(id_obj, "range_end", "id", &id) < 0)
    return NULL;
  if (id && api.loaded) { /* recorded whenever its start was */
    thread_ready();
    api.pp_range_end(id);
  }
  Py_RETURN_NONE;
}

/* request_begin(id), request_first_token(id) */
static PyObject *id_call(const char *fn, PyObject *id_obj,
                         void (*call)(uint64_t)) {
  uint64_t id;
  if (u64_arg(id_obj, fn, "id", &id) < 0)
    return NULL;
  if (!recording())
    Py_RETURN_NONE;
  thread_ready();
  call(id);
  Py_RETURN_NONE;
}

static PyObject *mod_request_begin(PyObject *m, PyObject *id) {
  return id_call("request_begin", id, api.pp_request_begin);
}
static PyObject *mod_request_first_token(PyObject *m, PyObject *id) {
  return id_call("request_first_token", id, api.pp_request_first_token);
}

static PyObject *mod_request_tokens(PyObject *m, PyObject *const *args,
                                    Py_ssize_t nargs, PyObject *kwnames) {
  static const char *const names[] = {"id", "n"};
  PyObject *a[2];
  if (parse("request_tokens", args, nargs, kwnames, names, 1, 2, a) < 0)
    return NULL;
  uint64_t id;
  int64_t n = 1;
  if (u64_arg(a[0], "request_tokens", "id", &id) < 0 ||
      (a[1] && i64_arg(a[1], "request_tokens", "n", 0, UINT32_MAX, &n) < 0))
    return NULL;
  if (!recording())
    Py_RETURN_NONE;
  thread_ready();
  api.pp_request_tokens(id, (uint32_t)n);
  Py_RETURN_NONE;
}

static PyObject *mod_request_end(PyObject *m, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames) {
  static const char *const names[] = {"id", "status"};
  PyObject *a[2];
  if (parse("request_end", args, nargs, kwnames, names, 1, 2, a) < 0)
    return NULL;
  uint64_t id;
  int64_t status = 0;
  if (u64_arg(a[0], "request_end", "id", &id) < 0 ||
      (a[1] && i64_arg(a[1], "request_end", "status", INT32_MIN, INT32_MAX,
                       &status) < 0))
    return NULL;
  if (!recording())
    Py_RETURN_NONE;
  thread_ready();
  api.pp_request_end(id, (int)status);
  Py_RETURN_NONE;
}

static PyObject *mod_batch(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  static const char *const names[] = {"size", "padded_size"};
  PyObject *a[2];
  if (parse("batch", args, nargs, kwnames, names, 1, 2, a) < 0)
    return NULL;
  int64_t size, padded = 0;
  if (i64_arg(a[0], "batch", "size", 0, UINT32_MAX, &size) < 0 ||
      (a[1] &&
       i64_arg(a[1], "batch", "padded_size", 0, UINT32_MAX, &padded) < 0))
    return NULL;
  if (!recording())
    Py_RETURN_NONE;
  thread_ready();
  api.pp_batch((uint32_t)size, (uint32_t)padded);
  Py_RETURN_NONE;
}

static PyObject *mod_thread_name(PyObject *m, PyObject *name) {
  if (need_library() < 0)
    return NULL;
  const char *s = utf8_arg(name, "thread_name", "name");
  if (!s)
    return NULL;
  tstack *t = thread_ready();
  if (t)
    t->named = 1; /* the program's name wins over Python's */
  api.pp_thread_name(s);
  Py_RETURN_NONE;
}

/* ---- GPU zones ----------------------------------------------------------- */

/* A begun GPU zone travels to Python as a capsule around the library's
 * slot (PP_GPU_CAPSULE); ending it renames the capsule, so that a second
 * end raises instead of ending a slot the library may have reused. */
#define PP_GPU_CAPSULE "pipeprof.gpu_zone"
#define PP_GPU_CAPSULE_ENDED "pipeprof.gpu_zone(ended)"

/* gpu_zone_begin(stream, name) -> capsule, or None when nothing was
 * recorded (not recording, no CUDA driver or context, pool full: the
 * library counts why). stream: a cudaStream_t as an int (0: legacy
 * default stream). */
static PyObject *mod_gpu_zone_begin(PyObject *m, PyObject *const *args,
                                    Py_ssize_t nargs, PyObject *kwnames) {
  static const char *const names[] = {"stream", "name"};
  PyObject *a[2];
  if (parse("gpu_zone_begin", args, nargs, kwnames, names, 2, 2, a) < 0)
    return NULL;
  uint64_t stream;
  if (u64_arg(a[0], "gpu_zone_begin", "stream", &stream) < 0)
    return NULL;
  const char *s = utf8_arg(a[1], "gpu_zone_begin", "name");
  if (!s)
    return NULL;
  if (!recording())
    Py_RETURN_NONE;
  thread_ready();
  pp_gpu_zone z = api.pp_gpu_zone_begin((void *)(uintptr_t)stream, s);
  if (!z.slot)
    Py_RETURN_NONE;
  PyObject *cap = PyCapsule_New(z.slot, PP_GPU_CAPSULE, NULL);
  if (!cap)
    api.pp_gpu_zone_end(z); /* do not leave the slot open */
  return cap;
}

/* gpu_zone_end(token): None is accepted (nothing was recorded). */
static PyObject *mod_gpu_zone_end(PyObject *m, PyObject *token) {
  if (token == Py_None)
    Py_RETURN_NONE;
  if (!PyCapsule_CheckExact(token)) {
    PyErr_Format(PyExc_TypeError,
                 "pipeprof.gpu_zone_end: token must be what gpu_zone_begin "
                 "returned, not %.80s",
                 Py_TYPE(token)->tp_name);
    return NULL;
  }
  const char *n = PyCapsule_GetName(token);
  if (n && strcmp(n, PP_GPU_CAPSULE_ENDED) == 0) {
    PyErr_SetString(PyExc_ValueError,
                    "pipeprof.gpu_zone_end: this GPU zone has already ended");
    return NULL;
  }
  void *slot = PyCapsule_GetPointer(token, PP_GPU_CAPSULE);
  if (!slot)
    return NULL;
  if (PyCapsule_SetName(token, PP_GPU_CAPSULE_ENDED) < 0)
    return NULL;
  pp_gpu_zone z = {slot};
  api.pp_gpu_zone_end(z);
  Py_RETURN_NONE;
}

/* ---- QueueHandle --------------------------------------------------------- */

typedef struct {
  PyObject_HEAD pp_queue *q;
  PyObject *name;
} QueueObject;

static int queue_init(QueueObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"name", "from_stage", "to_stage", "capacity", NULL};
  PyObject *name, *from = Py_None, *to = Py_None;
  long long cap = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "U|OOL:queue_declare", kwlist,
                                   &name, &from, &to, &cap))
    return -1;
  if (need_library() < 0)
    return -1;
  const char *n = utf8_arg(name, "queue_declare", "name");
  const char *f =
      from == Py_None ? NULL : utf8_arg(from, "queue_declare", "from_stage");
  if (!n || (from != Py_None && !f))
    return -1;
  const char *t =
      to == Py_None ? NULL : utf8_arg(to, "queue_declare", "to_stage");
  if (to != Py_None && !t)
    return -1;
  pp_queue *q = api.pp_queue_declare(n, f, t, (int64_t)cap);
  if (!q) {
    PyErr_NoMemory();
    return -1;
  }
  self->q = q;
  Py_INCREF(name);
  Py_XSETREF(self->name, name);
  return 0;
}

static void queue_dealloc(QueueObject *self) {
  Py_XDECREF(self->name);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static int queue_ready(QueueObject *self) {
  if (PY_LIKELY(self->q != NULL))
    return 0;
  PyErr_SetString(PyExc_RuntimeError, "pipeprof: queue not declared");
  return -1;
}

static PyObject *queue_push(QueueObject *self, PyObject *id_obj) {
  uint64_t id;
  if (queue_ready(self) < 0 || u64_arg(id_obj, "push", "item_id", &id) < 0)
    return NULL;
  thread_ready();
  api.pp_queue_push(self->q, id); /* counts depth also when not recording */
  Py_RETURN_NONE;
}

static PyObject *queue_pop(QueueObject *self, PyObject *id_obj) {
  uint64_t id;
  if (queue_ready(self) < 0 || u64_arg(id_obj, "pop", "item_id", &id) < 0)
    return NULL;
  thread_ready();
  api.pp_queue_pop(self->q, id);
  Py_RETURN_NONE;
}

static int why_arg(PyObject *o, const char *fn, int *why) {
  int64_t w;
  if (i64_arg(o, fn, "why", INT32_MIN, INT32_MAX, &w) < 0)
    return -1;
  if (w != PP_QUEUE_FULL && w != PP_QUEUE_EMPTY) {
    PyErr_Format(PyExc_ValueError,
                 "pipeprof.%s: why must be pipeprof.FULL (%d) or "
                 "pipeprof.EMPTY (%d), not %lld",
                 fn, PP_QUEUE_FULL, PP_QUEUE_EMPTY, (long long)w);
    return -1;
  }
  *why = (int)w;
  return 0;
}

static PyObject *queue_wait_begin(QueueObject *self, PyObject *o) {
  int why;
  if (queue_ready(self) < 0 || why_arg(o, "wait_begin", &why) < 0)
    return NULL;
  thread_ready();
  api.pp_queue_wait_begin(self->q, why);
  Py_RETURN_NONE;
}

static PyObject *queue_wait_end(QueueObject *self, PyObject *o) {
  int why;
  if (queue_ready(self) < 0 || why_arg(o, "wait_end", &why) < 0)
    return NULL;
  thread_ready();
  api.pp_queue_wait_end(self->q, why);
  Py_RETURN_NONE;
}

static PyObject *queue_get_depth(QueueObject *self, void *c) {
  if (queue_ready(self) < 0)
    return NULL;
  return PyLong_FromLongLong(api.pp_queue_depth(self->q));
}

static PyObject *queue_get_name(QueueObject *self, void *c) {
  if (!self->name)
    Py_RETURN_NONE;
  Py_INCREF(self->name);
  return self->name;
}

static PyMethodDef queue_methods[] = {
    {"push", (PyCFunction)queue_push, METH_O,
     "push(item_id): item_id entered the queue now."},
    {"pop", (PyCFunction)queue_pop, METH_O,
     "pop(item_id): item_id left the queue now."},
    {"wait_begin", (PyCFunction)queue_wait_begin, METH_O,
     "wait_begin(why): the calling thread starts waiting (FULL/EMPTY)."},
    {"wait_end", (PyCFunction)queue_wait_end, METH_O,
     "wait_end(why): the calling thread stops waiting."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef queue_getset[] = {
    {"depth", (getter)queue_get_depth, NULL,
     "pushes minus pops since the declaration", NULL},
    {"name", (getter)queue_get_name, NULL, "the queue's name", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject Queue_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pipeprof.QueueHandle",
    .tp_basicsize = sizeof(QueueObject),
    .tp_dealloc = (destructor)queue_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "QueueHandle(name, from_stage=None, to_stage=None, "
              "capacity=0): a queue between two stages (pp_queue_declare).",
    .tp_methods = queue_methods,
    .tp_getset = queue_getset,
    .tp_init = (initproc)queue_init,
    .tp_new = PyType_GenericNew,
};

/* ---- session control ----------------------------------------------------- */

static PyObject *mod_init(PyObject *m, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {
      "mode",     "out",       "process_name",    "buffer_kib",
      "flush_ms", "sample_hz", "install_signals", "enabled",
      "http",     "live",      "alerts",          "gpu_slots",
      "cuda",     NULL};
  int mode = PP_MODE_TRACE, install_signals = 1, enabled = 1, cuda = 0;
  PyObject *out = Py_None, *pname = Py_None, *http = Py_None;
  PyObject *live = Py_None, *alerts = Py_None;
  unsigned int buffer_kib = 0, flush_ms = 10, sample_hz = 0, gpu_slots = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|iOOIIIppOOOIp:init", kwlist,
                                   &mode, &out, &pname, &buffer_kib,
                                   &flush_ms, &sample_hz, &install_signals,
                                   &enabled, &http, &live, &alerts,
                                   &gpu_slots, &cuda))
    return NULL;
  if (need_library() < 0)
    return NULL;
  PyObject *out_b = NULL;
  if (out != Py_None && !PyUnicode_FSConverter(out, &out_b))
    return NULL;
  const char *pn =
      pname == Py_None ? NULL : utf8_arg(pname, "start", "process_name");
  if (pname != Py_None && !pn) {
    Py_XDECREF(out_b);
    return NULL;
  }
  const char *http_addr =
      http == Py_None ? NULL : utf8_arg(http, "start", "http");
  if (http != Py_None && !http_addr) {
    Py_XDECREF(out_b);
    return NULL;
  }
  const char *live_spec =
      live == Py_None ? NULL : utf8_arg(live, "start", "live");
  const char *alerts_spec =
      alerts == Py_None ? NULL : utf8_arg(alerts, "start", "alerts");
  if ((live != Py_None && !live_spec) || (alerts != Py_None && !alerts_spec)) {
    Py_XDECREF(out_b);
    return NULL;
  }
  /* The library's pp_config may be larger than this header's: give its
   * pp_config_init room, then say which fields we know. */
  union {
    pp_config cfg;
    unsigned char room[4096];
  } u;
  memset(&u, 0, sizeof u);
  api.pp_config_init(&u.cfg);
  u.cfg.struct_size = sizeof u.cfg;
  u.cfg.mode = (pp_mode)mode;
  u.cfg.out_path = out_b ? PyBytes_AS_STRING(out_b) : NULL;
  u.cfg.process_name = pn;
  u.cfg.buffer_kib = buffer_kib;
  u.cfg.flush_ms = flush_ms;
  u.cfg.sample_hz = sample_hz;
  u.cfg.install_signals = install_signals;
  u.cfg.start_enabled = enabled;
  u.cfg.http_addr = http_addr;
  u.cfg.live = live_spec;
  u.cfg.alerts = alerts_spec;
  u.cfg.gpu_slots = gpu_slots;
  u.cfg.cuda = cuda;
  PyThreadState *ts = PyEval_SaveThread();
  int rc = api.pp_init(&u.cfg);
  PyEval_RestoreThread(ts);
  Py_XDECREF(out_b);
  return PyLong_FromLong(rc);
}

static PyObject *mod_shutdown(PyObject *m, PyObject *unused) {
  if (need_library() < 0)
    return NULL;
  PyThreadState *ts = PyEval_SaveThread();
  int rc = api.pp_shutdown();
  PyEval_RestoreThread(ts);
  return PyLong_FromLong(rc);
}

static PyObject *mod_flight_dump(PyObject *m, PyObject *path) {
  if (need_library() < 0)
    return NULL;
  PyObject *b = NULL;
  if (path != Py_None && !PyUnicode_FSConverter(path, &b))
    return NULL;
  const char *p = b ? PyBytes_AS_STRING(b) : NULL;
  PyThreadState *ts = PyEval_SaveThread();
  int rc = api.pp_flight_dump(p);
  PyEval_RestoreThread(ts);
  Py_XDECREF(b);
  return PyLong_FromLong(rc);
}

static PyObject *mod_is_running(PyObject *m, PyObject *unused) {
  if (need_library() < 0)
    return NULL;
  return PyBool_FromLong(api.pp_is_running());
}

static PyObject *mod_is_enabled(PyObject *m, PyObject *unused) {
  if (need_library() < 0)
    return NULL;
  return PyBool_FromLong(api.pp_is_enabled());
}

static PyObject *mod_set_enabled(PyObject *m, PyObject *on) {
  if (need_library() < 0)
    return NULL;
  int v = PyObject_IsTrue(on);
  if (v < 0)
    return NULL;
  api.pp_set_enabled(v);
  Py_RETURN_NONE;
}

static PyObject *mod_zone_events(PyObject *m, PyObject *reset) {
  unsigned long long n = py_events;
  int r = PyObject_IsTrue(reset);
  if (r < 0)
    return NULL;
  if (r)
    py_events = 0;
  return PyLong_FromUnsignedLongLong(n);
}

static PyObject *mod_metadata(PyObject *m, PyObject *args) {
  const char *key, *value;
  if (!PyArg_ParseTuple(args, "ss:metadata", &key, &value))
    return NULL;
  if (need_library() < 0)
    return NULL;
  return PyLong_FromLong(api.pp_metadata(key, value));
}

static PyObject *mod_output_path(PyObject *m, PyObject *unused) {
  if (need_library() < 0)
    return NULL;
  const char *p = api.pp_output_path();
  if (!p || !*p)
    Py_RETURN_NONE;
  return PyUnicode_DecodeFSDefault(p);
}

static PyObject *mod_version(PyObject *m, PyObject *unused) {
  if (need_library() < 0)
    return NULL;
  return PyUnicode_FromString(api.pp_version_string());
}

/* strerror(code) -> (name, text, last_error) */
static PyObject *mod_strerror(PyObject *m, PyObject *code) {
  if (need_library() < 0)
    return NULL;
  long c = PyLong_AsLong(code);
  if (c == -1 && PyErr_Occurred())
    return NULL;
  return Py_BuildValue("(sss)", api.pp_err_name((int)c),
                       api.pp_strerror((int)c), api.pp_last_error());
}

/* ---- live statistics ----------------------------------------------------- */

static PyObject *stats_dict(const pp_live_stats *s) {
  return Py_BuildValue(
      "{s:I,s:d,s:K,s:d,s:d,s:d,s:K,s:K,s:K,s:K,s:L}", "window",
      (unsigned)s->window_s, "seconds", s->seconds, "count",
      (unsigned long long)s->count, "rate", s->rate, "ewma_rate", s->ewma_rate,
      "mean_ns", s->mean_ns, "p50_ns", (unsigned long long)s->p50_ns, "p90_ns",
      (unsigned long long)s->p90_ns, "p99_ns", (unsigned long long)s->p99_ns,
      "max_ns", (unsigned long long)s->max_ns, "as_of_ns",
      (long long)s->as_of_ns);
}

/* A live query's result: the dict, None for PP_EINVAL (no such series),
 * else the status as an int. */
static PyObject *live_result(int rc, const pp_live_stats *s) {
  if (rc == PP_OK)
    return stats_dict(s);
  if (rc == PP_EINVAL)
    Py_RETURN_NONE;
  return PyLong_FromLong(rc);
}

static PyObject *mod_live_zone(PyObject *m, PyObject *args) {
  PyObject *name;
  int window;
  if (!PyArg_ParseTuple(args, "Ui:live_zone", &name, &window) ||
      need_library() < 0)
    return NULL;
  const char *s = utf8_arg(name, "live_zone", "name");
  if (!s)
    return NULL;
  pp_live_stats st;
  memset(&st, 0, sizeof st);
  /* window 0 waits for the writer's pass (milliseconds): let other Python
   * threads run meanwhile (s stays valid: args holds name) */
  PyThreadState *ts = PyEval_SaveThread();
  int rc = api.pp_live_zone(s, window, &st);
  PyEval_RestoreThread(ts);
  return live_result(rc, &st);
}

static PyObject *mod_live_request(PyObject *m, PyObject *args) {
  int metric, window;
  if (!PyArg_ParseTuple(args, "ii:live_request", &metric, &window) ||
      need_library() < 0)
    return NULL;
  pp_live_stats st;
  memset(&st, 0, sizeof st);
  PyThreadState *ts = PyEval_SaveThread();
  int rc = api.pp_live_request(metric, window, &st);
  PyEval_RestoreThread(ts);
  return live_result(rc, &st);
}

/* live_zone_slo(name, limit_ns) -> (count, met, uncertain), None for a
 * name not seen, or the status as an int */
static PyObject *mod_live_zone_slo(PyObject *m, PyObject *args) {
  PyObject *name;
  unsigned long long limit;
  if (!PyArg_ParseTuple(args, "UK:live_zone_slo", &name, &limit) ||
      need_library() < 0)
    return NULL;
  const char *s = utf8_arg(name, "live_zone_slo", "name");
  if (!s)
    return NULL;
  uint64_t n = 0, met = 0, unc = 0;
  PyThreadState *ts = PyEval_SaveThread();
  int rc = api.pp_live_zone_slo(s, (uint64_t)limit, &n, &met, &unc);
  PyEval_RestoreThread(ts);
  if (rc == PP_EINVAL)
    Py_RETURN_NONE;
  if (rc != PP_OK)
    return PyLong_FromLong(rc);
  return Py_BuildValue("(KKK)", (unsigned long long)n, (unsigned long long)met,
                       (unsigned long long)unc);
}

/* live_zone_names() -> list of str, or the status as an int */
static PyObject *mod_live_zone_names(PyObject *m, PyObject *unused) {
  if (need_library() < 0)
    return NULL;
  PyObject *list = PyList_New(0);
  if (!list)
    return NULL;
  char buf[1024];
  for (size_t i = 0;; i++) {
    int rc = api.pp_live_zone_name(i, buf, sizeof buf);
    if (rc == PP_EINVAL)
      break;
    if (rc != PP_OK) {
      Py_DECREF(list);
      return PyLong_FromLong(rc);
    }
    PyObject *s = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)strlen(buf), "replace");
    if (!s || PyList_Append(list, s) < 0) {
      Py_XDECREF(s);
      Py_DECREF(list);
      return NULL;
    }
    Py_DECREF(s);
  }
  return list;
}

/* ---- alerts: queued on the writer thread, taken on a Python thread ------- */

#define ALERT_QUEUE 256u

typedef struct alert_copy {
  int kind;
  char what[32], which[128], message[512];
  double value, baseline, spread, threshold;
  int64_t ts_ns;
} alert_copy;

static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  alert_copy q[ALERT_QUEUE];
  size_t head, n;
  uint64_t dropped;
} aq = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* On the writer thread: copy and signal; never touches Python. */
static void on_alert(const pp_alert *a, void *user) {
  pthread_mutex_lock(&aq.mu);
  if (aq.n == ALERT_QUEUE) {
    aq.dropped++;
  } else {
    alert_copy *c = &aq.q[(aq.head + aq.n++) % ALERT_QUEUE];
    c->kind = a->kind;
    snprintf(c->what, sizeof c->what, "%s", a->what ? a->what : "");
    snprintf(c->which, sizeof c->which, "%s", a->which ? a->which : "");
    snprintf(c->message, sizeof c->message, "%s", a->message ? a->message : "");
    c->value = a->value;
    c->baseline = a->baseline;
    c->spread = a->spread;
    c->threshold = a->threshold;
    c->ts_ns = a->ts_ns;
    pthread_cond_signal(&aq.cv);
  }
  pthread_mutex_unlock(&aq.mu);
}

static PyObject *mod_alerts_enable(PyObject *m, PyObject *on) {
  if (need_library() < 0)
    return NULL;
  int v = PyObject_IsTrue(on);
  if (v < 0)
    return NULL;
  api.pp_on_alert(v ? on_alert : NULL, NULL);
  Py_RETURN_NONE;
}

/* alerts_wait(timeout_s) -> list of dicts (empty on timeout). Blocks with
 * the GIL released. */
static PyObject *mod_alerts_wait(PyObject *m, PyObject *arg) {
  double timeout = PyFloat_AsDouble(arg);
  if (timeout == -1.0 && PyErr_Occurred())
    return NULL;
  if (!(timeout >= 0))
    timeout = 0;
  if (timeout > 3600)
    timeout = 3600;
  alert_copy *got = NULL;
  size_t n = 0;
  int nomem = 0;
  PyThreadState *tstate = PyEval_SaveThread();
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  int64_t until =
      (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + (int64_t)(timeout * 1e9);
  ts.tv_sec = (time_t)(until / 1000000000);
  ts.tv_nsec = (long)(until % 1000000000);
  pthread_mutex_lock(&aq.mu);
  while (aq.n == 0 && pthread_cond_timedwait(&aq.cv, &aq.mu, &ts) == 0) {
  }
  if (aq.n && !(got = malloc(aq.n * sizeof *got)))
    nomem = 1;
  for (; got && aq.n; aq.n--, aq.head = (aq.head + 1) % ALERT_QUEUE)
    got[n++] = aq.q[aq.head];
  pthread_mutex_unlock(&aq.mu);
  PyEval_RestoreThread(tstate);
  if (nomem)
    return PyErr_NoMemory();
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; i++) {
    const alert_copy *c = &got[i];
    PyObject *d = Py_BuildValue(
        "{s:s,s:s,s:s,s:s,s:d,s:d,s:d,s:d,s:L}", "kind",
        c->kind == PP_ALERT_ANOMALY ? "anomaly" : "resource", "what", c->what,
        "which", c->which, "message", c->message, "value", c->value, "baseline",
        c->baseline, "spread", c->spread, "threshold", c->threshold, "ts_ns",
        (long long)c->ts_ns);
    if (!d)
      Py_CLEAR(list);
    else
      PyList_SET_ITEM(list, (Py_ssize_t)i, d);
  }
  free(got);
  return list;
}

static PyObject *mod_alerts_dropped(PyObject *m, PyObject *unused) {
  pthread_mutex_lock(&aq.mu);
  unsigned long long d = aq.dropped;
  pthread_mutex_unlock(&aq.mu);
  return PyLong_FromUnsignedLongLong(d);
}

/* ---- module -------------------------------------------------------------- */

static PyObject *mod_set_decorator(PyObject *m, PyObject *fn) {
  if (!PyCallable_Check(fn)) {
    PyErr_SetString(PyExc_TypeError, "_set_decorator: not callable");
    return NULL;
  }
  Py_INCREF(fn);
  Py_XSETREF(decorate_hook, fn);
  Py_RETURN_NONE;
}

static PyObject *mod_library_path(PyObject *m, PyObject *unused) {
  if (!api.loaded)
    Py_RETURN_NONE;
  return loaded_file();
}

#define FASTKW (METH_FASTCALL | METH_KEYWORDS)
#define CF(f) ((PyCFunction)(void (*)(void))(f))

static PyMethodDef mod_methods[] = {
    {"_load", mod_load, METH_VARARGS,
     "_load(path, noload=False): open libpipeprof."},
    {"_set_decorator", mod_set_decorator, METH_O, NULL},
    {"_site", mod_site, METH_VARARGS,
     "_site(name, function, file, line): a Zone with a full site."},
    {"library_path", mod_library_path, METH_NOARGS,
     "library_path(): the file libpipeprof was loaded from."},
    {"zone", mod_zone, METH_O,
     "zone(name): the zone called name, a context manager and decorator."},
    {"counter", CF(mod_counter), FASTKW,
     "counter(name, value): set the counter name to value (int or float)."},
    {"counter_add", CF(mod_counter_add), FASTKW,
     "counter_add(name, delta): add delta (an int) to the counter name."},
    {"mark", mod_mark, METH_O, "mark(name): an instant event."},
    {"frame_mark", CF(mod_frame_mark), FASTKW,
     "frame_mark(stream='frame'): one frame of stream ended now."},
    {"flow_begin", CF(mod_flow_begin), FASTKW,
     "flow_begin(name, id): flow id starts here."},
    {"flow_step", CF(mod_flow_step), FASTKW,
     "flow_step(name, id): flow id passes here."},
    {"flow_end", CF(mod_flow_end), FASTKW,
     "flow_end(name, id): flow id ends here."},
    {"range_start", mod_range_start, METH_O,
     "range_start(name) -> id: a range that may end on another thread."},
    {"range_end", mod_range_end, METH_O, "range_end(id): end a range."},
    {"request_begin", mod_request_begin, METH_O,
     "request_begin(id): request id arrives."},
    {"request_first_token", mod_request_first_token, METH_O,
     "request_first_token(id): its first output token is ready."},
    {"request_tokens", CF(mod_request_tokens), FASTKW,
     "request_tokens(id, n=1): n output tokens were produced now."},
    {"request_end", CF(mod_request_end), FASTKW,
     "request_end(id, status=0): the request finished (0: success)."},
    {"batch", CF(mod_batch), FASTKW,
     "batch(size, padded_size=0): one batch of size items ran."},
    {"gpu_zone_begin", CF(mod_gpu_zone_begin), FASTKW,
     "gpu_zone_begin(stream, name) -> token or None: pp_gpu_zone_begin."},
    {"gpu_zone_end", mod_gpu_zone_end, METH_O,
     "gpu_zone_end(token): pp_gpu_zone_end; None does nothing."},
    {"thread_name", mod_thread_name, METH_O,
     "thread_name(name): name the calling thread in traces."},
    {"init", (PyCFunction)(void (*)(void))mod_init,
     METH_VARARGS | METH_KEYWORDS, "init(...) -> status: pp_init."},
    {"shutdown", mod_shutdown, METH_NOARGS, "shutdown() -> status."},
    {"flight_dump", mod_flight_dump, METH_O, "flight_dump(path) -> status."},
    {"is_running", mod_is_running, METH_NOARGS, NULL},
    {"is_enabled", mod_is_enabled, METH_NOARGS, NULL},
    {"_zone_events", mod_zone_events, METH_O,
     "_zone_events(reset): zone events recorded through the binding since "
     "the last reset."},
    {"metadata", mod_metadata, METH_VARARGS,
     "metadata(key, value): pp_metadata; returns its code."},
    {"set_enabled", mod_set_enabled, METH_O, NULL},
    {"output_path", mod_output_path, METH_NOARGS, NULL},
    {"version", mod_version, METH_NOARGS,
     "version(): the loaded library's version."},
    {"strerror", mod_strerror, METH_O,
     "strerror(code) -> (name, text, last_error)."},
    {"live_zone", mod_live_zone, METH_VARARGS, NULL},
    {"live_request", mod_live_request, METH_VARARGS, NULL},
    {"live_zone_names", mod_live_zone_names, METH_NOARGS, NULL},
    {"live_zone_slo", mod_live_zone_slo, METH_VARARGS, NULL},
    {"alerts_enable", mod_alerts_enable, METH_O, NULL},
    {"alerts_wait", mod_alerts_wait, METH_O, NULL},
    {"alerts_dropped", mod_alerts_dropped, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "pipeprof._pipeprof",
    .m_doc = "The C part of pipeprof: calls into libpipeprof.",
    .m_size = -1,
    .m_methods = mod_methods,
};

PyMODINIT_FUNC PyInit__pipeprof(void);

PyMODINIT_FUNC PyInit__pipeprof(void) {
  if (pthread_key_create(&stack_key, stack_free) != 0)
    return PyErr_NoMemory();
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&aq.cv, &ca);
  pthread_condattr_destroy(&ca);
  if (PyType_Ready(&Zone_Type) < 0 || PyType_Ready(&Wrapped_Type) < 0 ||
      PyType_Ready(&Queue_Type) < 0)
    return NULL;
  PyObject *m = PyModule_Create(&module);
  if (!m)
    return NULL;
  zone_cache = PyDict_New();
  site_cache = PyDict_New();
  Error = PyErr_NewException("pipeprof.Error", PyExc_RuntimeError, NULL);
  PyObject *threading = PyImport_ImportModule("threading");
  if (threading) {
    current_thread = PyObject_GetAttrString(threading, "current_thread");
    Py_DECREF(threading);
  }
  if (!zone_cache || !site_cache || !Error || !current_thread)
    goto fail;
  Py_INCREF(Error);
  if (PyModule_AddObject(m, "Error", Error) < 0)
    goto fail;
  Py_INCREF(&Zone_Type);
  Py_INCREF(&Wrapped_Type);
  Py_INCREF(&Queue_Type);
  if (PyModule_AddObject(m, "Zone", (PyObject *)&Zone_Type) < 0 ||
      PyModule_AddObject(m, "Wrapped", (PyObject *)&Wrapped_Type) < 0 ||
      PyModule_AddObject(m, "QueueHandle", (PyObject *)&Queue_Type) < 0 ||
      PyModule_AddIntConstant(m, "FULL", PP_QUEUE_FULL) < 0 ||
      PyModule_AddIntConstant(m, "EMPTY", PP_QUEUE_EMPTY) < 0 ||
      PyModule_AddIntConstant(m, "MODE_STATS", PP_MODE_STATS) < 0 ||
      PyModule_AddIntConstant(m, "MODE_TRACE", PP_MODE_TRACE) < 0 ||
      PyModule_AddIntConstant(m, "MODE_FLIGHT", PP_MODE_FLIGHT) < 0 ||
      PyModule_AddIntConstant(m, "LIVE_E2E", PP_LIVE_E2E) < 0 ||
      PyModule_AddIntConstant(m, "LIVE_TTFT", PP_LIVE_TTFT) < 0 ||
      PyModule_AddIntConstant(m, "LIVE_TPOT", PP_LIVE_TPOT) < 0 ||
      PyModule_AddIntConstant(m, "LIVE_ITL", PP_LIVE_ITL) < 0 ||
      PyModule_AddIntConstant(m, "OK", PP_OK) < 0 ||
      PyModule_AddIntConstant(m, "EBUSY", PP_EBUSY) < 0 ||
      PyModule_AddIntConstant(m, "ENOTRUNNING", PP_ENOTRUNNING) < 0 ||
      PyModule_AddIntConstant(m, "ENOTSUP", PP_ENOTSUP) < 0 ||
      PyModule_AddIntConstant(m, "EINVAL", PP_EINVAL) < 0 ||
      PyModule_AddStringConstant(m, "HEADER_VERSION", PP_VERSION_STRING) < 0 ||
      PyModule_AddStringConstant(m, "BUILD_LIBDIRS", PP_PY_LIBDIRS) < 0 ||
      pp_py_runtime_add(m) != 0)
    goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
