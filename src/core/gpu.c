/* SPDX-License-Identifier: MIT */
/*
 * GPU zones (see gpu.h): loading the CUDA driver API at run time, the
 * per-context pools of event pairs, the pp_gpu_zone_* entry points, and the
 * resolver with its CPU/GPU clock calibration.
 *
 * Calibration: a reference event is recorded on a private idle stream and
 * polled (cuEventQuery, at most 2 ms) until it completes; its GPU time lies
 * between the CPU ticks read before the record and after the successful
 * query, so the reference is placed at the midpoint with an error of at
 * most half that bracket (typically a few microseconds; up to three tries
 * keep one under 5 us when they can). A zone's start on the CPU clock is
 * then reference + cuEventElapsedTime(reference, begin event); its
 * duration is cuEventElapsedTime(begin, end), which does not depend on the
 * calibration. Each pool re-calibrates once a second into a ring of four
 * reference events and a zone uses the newest reference taken before its
 * launch, which bounds clock drift (tens of ppm between a GPU's and the
 * CPU's oscillators: under ~100 us after one second) and keeps the float
 * milliseconds of cuEventElapsedTime precise (resolution about 0.5 us).
 *
 * Device memory: about once a second the writer also asks the driver for
 * the free and total memory of each device it knows a context of
 * (cuMemGetInfo_v2, with the pool's context current on the writer thread,
 * as for the calibration) and records used = total - free and total as the
 * counters cuda<dev>.mem_used_bytes and cuda<dev>.mem_total_bytes through
 * the ordinary counter path, so the samples reach the trace, the stats
 * aggregate or the flight ring like any counter of the writer thread. A
 * missing symbol or a failing call is written once per device as META
 * cuda_mem.<dev>.unavailable; the program's threads never wait on it.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "clock.h"
#include "env.h"
#include "gpu.h"
#include "meta.h"
#include "recorder.h"

/* ---- the driver API, declared locally ----------------------------------- */

typedef int cu_result;
typedef int cu_device;
typedef struct cu_ctx_st *cu_context;
typedef struct cu_event_st *cu_event;
typedef struct cu_stream_st *cu_stream;

#define CU_SUCCESS 0
#define CU_ERROR_NOT_READY 600
#define CU_STREAM_NON_BLOCKING 0x1u
#define CU_EVENT_DEFAULT 0x0u

static struct {
  void *lib;
  cu_result (*init)(unsigned);
  cu_result (*ctx_get)(cu_context *);
  cu_result (*ctx_set)(cu_context);
  cu_result (*ctx_device)(cu_device *);
  cu_result (*ev_create)(cu_event *, unsigned);
  cu_result (*ev_record)(cu_event, cu_stream);
  cu_result (*ev_query)(cu_event);
  cu_result (*ev_elapsed)(float *, cu_event, cu_event);
  cu_result (*ev_destroy)(cu_event);
  cu_result (*stream_create)(cu_stream *, unsigned);
  cu_result (*err_string)(cu_result, const char **);
  cu_result (*mem_info)(size_t *, size_t *); /* NULL: not exported */
} cu;

enum { LIB_UNTRIED, LIB_LOADING, LIB_READY, LIB_FAILED };
static _Atomic int lib_state;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static char lib_reason[192];

/* ---- pools -------------------------------------------------------------- */

enum { SLOT_FREE, SLOT_CLAIMED, SLOT_OPEN, SLOT_ENDED };
#define MAX_POOLS 8
#define NREF 4
#define CLAIM_PROBES 8
#define CAL_PERIOD_NS 1000000000
#define CAL_SPIN_NS 2000000
#define FINAL_WAIT_NS 200000000
#define DEFAULT_SLOTS 1024u

typedef struct gpu_slot {
  _Atomic uint32_t state;
  cu_event ev[2];
  const pp_srcloc *loc;
  cu_stream stream;
  uint64_t tid;
  uint64_t launch_tick;
} gpu_slot;

typedef struct gpu_pool {
  cu_context ctx;
  uint32_t device;
  uint32_t n;
  gpu_slot *slots;
  _Atomic uint32_t cursor;
  cu_stream cal_stream; /* NULL when it could not be created */
  cu_event ref[NREF];
  uint64_t ref_tick[NREF];
  int ref_valid[NREF];
  int ref_next;
  int64_t last_cal_ns; /* 0: never */
} gpu_pool;

static _Atomic(gpu_pool *) pools[MAX_POOLS];
static _Atomic int npools;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint32_t cfg_slots = DEFAULT_SLOTS;

/* Per-session counters. */
static _Atomic int used;
static _Atomic uint64_t n_unavailable, n_no_context, n_pool_full,
    n_record_failed, n_resolved, n_lost;
static uint64_t n_unresolved, n_calibrations; /* writer thread */
static double max_cal_err_ns;                  /* writer thread */
static _Atomic int pool_reason_set;
static char pool_reason[192];

/* Device memory sampling, per pool (the first pool of each device samples
 * it): writer thread only, cleared when a session starts. */
#define MEM_PERIOD_NS 1000000000
typedef struct mem_state {
  int64_t last_ns;               /* last attempt; 0: none yet */
  uint64_t failed;               /* cuMemGetInfo calls that failed */
  int noted;                     /* reason written to META */
  const pp_srcloc *used, *total; /* the counter sites, interned */
} mem_state;
static mem_state mem[MAX_POOLS];
static _Atomic int64_t mem_period_ns = MEM_PERIOD_NS;
static __thread int writer_named; /* this thread named in the trace */

#define ACTIVE() (__atomic_load_n(&pp__active, __ATOMIC_ACQUIRE) & PP__ON)

static void count(_Atomic uint64_t *c) {
  atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

static const char *cu_err(cu_result r, char *buf, size_t len) {
  const char *s = NULL;
  if (cu.err_string && cu.err_string(r, &s) == CU_SUCCESS && s)
    snprintf(buf, len, "%s (%d)", s, r);
  else
    snprintf(buf, len, "CUDA error %d", r);
  return buf;
}

void pp__gpu_mem_period(int64_t ns) {
  atomic_store(&mem_period_ns, ns > 0 ? ns : MEM_PERIOD_NS);
}

uint32_t pp__gpu_parse_slots(const char *v) {
  if (!v)
    return DEFAULT_SLOTS;
  uint64_t x;
  if (pp__env_uint(v, 2, 65536, &x) != 0) /* the rule of env.h */
    return 0;
  return (uint32_t)x;
}

void pp__gpu_session_start(uint32_t slots) {
  atomic_store(&cfg_slots, slots ? slots : DEFAULT_SLOTS);
  atomic_store(&used, 0);
  atomic_store(&n_unavailable, 0);
  atomic_store(&n_no_context, 0);
  atomic_store(&n_pool_full, 0);
  atomic_store(&n_record_failed, 0);
  atomic_store(&n_resolved, 0);
  atomic_store(&n_lost, 0);
  n_unresolved = n_calibrations = 0;
  max_cal_err_ns = 0;
  memset(mem, 0, sizeof mem);
  /* A library that failed to load says so again in this session's META. */
  if (atomic_load(&lib_state) == LIB_FAILED)
    atomic_store(&pool_reason_set, 0);
}

/* ---- loading ------------------------------------------------------------ */

static int load_sym(void **fn, const char *name, const char *alt) {
  *fn = dlsym(cu.lib, name);
  if (!*fn && alt)
    *fn = dlsym(cu.lib, alt);
  if (*fn)
    return 0;
  snprintf(lib_reason, sizeof lib_reason, "libcuda has no %s", name);
  return -1;
}

static int load_driver(void) {
  const char *path = getenv("PIPEPROF_LIBCUDA");
  if (!path || !*path)
    path = "libcuda.so.1";
  cu.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!cu.lib) {
    snprintf(lib_reason, sizeof lib_reason,
             "cannot load %s (no NVIDIA driver?)", path);
    return -1;
  }
  /* Newer drivers version some entry points (cuda.h maps the names). */
  if (load_sym((void **)&cu.init, "cuInit", NULL) ||
      load_sym((void **)&cu.ctx_get, "cuCtxGetCurrent", NULL) ||
      load_sym((void **)&cu.ctx_set, "cuCtxSetCurrent", NULL) ||
      load_sym((void **)&cu.ctx_device, "cuCtxGetDevice", NULL) ||
      load_sym((void **)&cu.ev_create, "cuEventCreate", NULL) ||
      load_sym((void **)&cu.ev_record, "cuEventRecord", NULL) ||
      load_sym((void **)&cu.ev_query, "cuEventQuery", NULL) ||
      load_sym((void **)&cu.ev_elapsed, "cuEventElapsedTime_v2",
               "cuEventElapsedTime") ||
      load_sym((void **)&cu.ev_destroy, "cuEventDestroy_v2",
               "cuEventDestroy") ||
      load_sym((void **)&cu.stream_create, "cuStreamCreate", NULL))
    return -1;
  *(void **)&cu.err_string = dlsym(cu.lib, "cuGetErrorString"); /* optional */
  /* Optional too: without it only the device memory samples are missing.
   * The unversioned cuMemGetInfo is the old 32-bit one: never use it. */
  *(void **)&cu.mem_info = dlsym(cu.lib, "cuMemGetInfo_v2");
  cu_result r = cu.init(0);
  if (r != CU_SUCCESS) {
    char eb[96];
    snprintf(lib_reason, sizeof lib_reason, "cuInit failed: %s",
             cu_err(r, eb, sizeof eb));
    return -1;
  }
  return 0;
}

/* Once per process; a thread that finds another one loading drops its
 * zone instead of waiting. Returns 1 when the driver is usable. */
static int driver_ready(void) {
  int st = atomic_load_explicit(&lib_state, memory_order_acquire);
  if (pp__likely(st == LIB_READY))
    return 1;
  if (st != LIB_UNTRIED)
    return 0;
  if (pthread_mutex_trylock(&load_lock) != 0)
    return 0;
  if (atomic_load(&lib_state) == LIB_UNTRIED) {
    atomic_store(&lib_state, LIB_LOADING);
    int ok = load_driver() == 0;
    if (!ok && cu.lib) {
      dlclose(cu.lib);
      cu.lib = NULL;
    }
    atomic_store_explicit(&lib_state, ok ? LIB_READY : LIB_FAILED,
                          memory_order_release);
  }
  pthread_mutex_unlock(&load_lock);
  return atomic_load(&lib_state) == LIB_READY;
}

/* First failure of a kind in a session: say why in META (control path). */
static void note_reason(const char *why) {
  if (atomic_exchange(&pool_reason_set, 1))
    return;
  pp__session_meta("gpu_zones.unavailable", why);
}

static void destroy_events(cu_event *ev, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (ev[i])
      cu.ev_destroy(ev[i]);
}

/* Slow path, once per context: the calling thread has ctx current. */
static gpu_pool *pool_create(cu_context ctx) {
  pthread_mutex_lock(&pool_lock);
  gpu_pool *p = NULL;
  int n = atomic_load(&npools);
  for (int i = 0; i < n; i++) {
    gpu_pool *q = atomic_load(&pools[i]);
    if (q->ctx == ctx) {
      pthread_mutex_unlock(&pool_lock);
      return q;
    }
  }
  char eb[96];
  if (n >= MAX_POOLS) {
    snprintf(pool_reason, sizeof pool_reason,
             "more than %d CUDA contexts", MAX_POOLS);
    goto fail;
  }
  p = pp__calloc(1, sizeof *p);
  uint32_t ns = atomic_load(&cfg_slots);
  gpu_slot *slots = p ? pp__calloc(ns, sizeof *slots) : NULL;
  if (!slots) {
    snprintf(pool_reason, sizeof pool_reason, "out of memory");
    goto fail;
  }
  p->slots = slots;
  p->n = ns;
  p->ctx = ctx;
  cu_device dev = 0;
  if (cu.ctx_device(&dev) != CU_SUCCESS || dev < 0)
    dev = 0;
  p->device = (uint32_t)dev;
  cu_result r = CU_SUCCESS;
  for (uint32_t i = 0; i < ns && r == CU_SUCCESS; i++) {
    r = cu.ev_create(&slots[i].ev[0], CU_EVENT_DEFAULT);
    if (r == CU_SUCCESS)
      r = cu.ev_create(&slots[i].ev[1], CU_EVENT_DEFAULT);
  }
  for (int i = 0; i < NREF && r == CU_SUCCESS; i++)
    r = cu.ev_create(&p->ref[i], CU_EVENT_DEFAULT);
  if (r != CU_SUCCESS) {
    snprintf(pool_reason, sizeof pool_reason, "cuEventCreate failed: %s",
             cu_err(r, eb, sizeof eb));
    for (uint32_t i = 0; i < ns; i++)
      destroy_events(slots[i].ev, 2);
    destroy_events(p->ref, NREF);
    goto fail;
  }
  /* A stream of our own, so that calibration never waits behind the
   * program's work; the default stream is the fallback. */
  if (cu.stream_create(&p->cal_stream, CU_STREAM_NON_BLOCKING) !=
      CU_SUCCESS)
    p->cal_stream = NULL;
  atomic_store_explicit(&pools[n], p, memory_order_release);
  atomic_store_explicit(&npools, n + 1, memory_order_release);
  pthread_mutex_unlock(&pool_lock);
  return p;
fail:
  if (p)
    pp__free(p->slots);
  pp__free(p);
  pthread_mutex_unlock(&pool_lock);
  note_reason(pool_reason);
  return NULL;
}

static gpu_pool *pool_for(cu_context ctx) {
  int n = atomic_load_explicit(&npools, memory_order_acquire);
  for (int i = 0; i < n; i++) {
    gpu_pool *p = atomic_load_explicit(&pools[i], memory_order_relaxed);
    if (p->ctx == ctx)
      return p;
  }
  return pool_create(ctx);
}

/* ---- hot path ----------------------------------------------------------- */

pp_gpu_zone pp_gpu_zone_begin_loc(const pp_srcloc *loc, void *stream) {
  pp_gpu_zone z = {NULL};
  if (pp__unlikely(!ACTIVE()) || !loc)
    return z;
  if (pp__unlikely(!atomic_load_explicit(&used, memory_order_relaxed)))
    atomic_store_explicit(&used, 1, memory_order_relaxed);
  if (pp__unlikely(!driver_ready())) {
    count(&n_unavailable);
    if (atomic_load(&lib_state) == LIB_FAILED)
      note_reason(lib_reason);
    return z;
  }
  cu_context ctx = NULL;
  if (cu.ctx_get(&ctx) != CU_SUCCESS || !ctx) {
    count(&n_no_context);
    note_reason("no CUDA context current on the thread that called "
                "pp_gpu_zone_begin");
    return z;
  }
  gpu_pool *p = pool_for(ctx);
  if (pp__unlikely(!p)) {
    count(&n_unavailable);
    return z;
  }
  gpu_slot *s = NULL;
  for (int k = 0; k < CLAIM_PROBES; k++) {
    uint32_t i = atomic_fetch_add_explicit(&p->cursor, 1,
                                           memory_order_relaxed) % p->n;
    uint32_t expect = SLOT_FREE;
    if (atomic_compare_exchange_strong_explicit(
            &p->slots[i].state, &expect, SLOT_CLAIMED, memory_order_acquire,
            memory_order_relaxed)) {
      s = &p->slots[i];
      break;
    }
  }
  if (pp__unlikely(!s)) {
    count(&n_pool_full);
    return z;
  }
  pp__tstate *t = pp__thread_get();
  s->loc = loc;
  s->stream = (cu_stream)stream;
  s->tid = t ? t->tid : 0;
  s->launch_tick = pp__ticks();
  if (pp__unlikely(cu.ev_record(s->ev[0], s->stream) != CU_SUCCESS)) {
    atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
    count(&n_record_failed);
    return z;
  }
  atomic_store_explicit(&s->state, SLOT_OPEN, memory_order_release);
  z.slot = s;
  return z;
}

pp_gpu_zone pp_gpu_zone_begin(void *stream, const char *name) {
  pp_gpu_zone z = {NULL};
  if (!ACTIVE() || !name)
    return z;
  return pp_gpu_zone_begin_loc(pp__intern(name, PP_KIND_ZONE), stream);
}

void pp_gpu_zone_end(pp_gpu_zone zone) {
  gpu_slot *s = zone.slot;
  if (pp__unlikely(!s))
    return;
  /* OPEN -> CLAIMED while we record, so that the resolver's final pass
   * (which frees OPEN slots) cannot free it under us. */
  uint32_t expect = SLOT_OPEN;
  if (!atomic_compare_exchange_strong_explicit(&s->state, &expect,
                                               SLOT_CLAIMED,
                                               memory_order_acquire,
                                               memory_order_relaxed))
    return; /* the session ended meanwhile and counted it */
  if (pp__unlikely(cu.ev_record(s->ev[1], s->stream) != CU_SUCCESS)) {
    atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
    count(&n_record_failed);
    return;
  }
  atomic_store_explicit(&s->state, SLOT_ENDED, memory_order_release);
}

/* ---- resolver (writer thread) ------------------------------------------ */

static void calibrate(gpu_pool *p, double rate) {
  int k = p->ref_next;
  p->ref_valid[k] = 0;
  for (int attempt = 0; attempt < 3; attempt++) {
    uint64_t t0 = pp__ticks();
    if (cu.ev_record(p->ref[k], p->cal_stream) != CU_SUCCESS)
      return;
    int64_t spin0 = pp__mono_ns();
    cu_result q;
    while ((q = cu.ev_query(p->ref[k])) == CU_ERROR_NOT_READY &&
           pp__mono_ns() - spin0 < CAL_SPIN_NS) {
    }
    uint64_t t1 = pp__ticks();
    if (q != CU_SUCCESS)
      return; /* busy or failing device: keep the earlier references */
    double half_ns = (double)(t1 - t0) / 2.0 / rate;
    p->ref_tick[k] = t0 + (t1 - t0) / 2;
    p->ref_valid[k] = 1;
    if (half_ns < 5000.0 || attempt == 2) {
      if (half_ns > max_cal_err_ns)
        max_cal_err_ns = half_ns;
      break;
    }
  }
  n_calibrations++;
  p->ref_next = (k + 1) % NREF;
}

/* The GPU start of slot s in CPU ticks; -1 when no reference can place it
 * yet (not complete, or no calibration so far). */
static int place(gpu_pool *p, const gpu_slot *s, double rate,
                 uint64_t *start) {
  int best = -1, oldest = -1;
  for (int i = 0; i < NREF; i++) {
    if (!p->ref_valid[i])
      continue;
    if (p->ref_tick[i] <= s->launch_tick &&
        (best < 0 || p->ref_tick[i] > p->ref_tick[best]))
      best = i;
    if (oldest < 0 || p->ref_tick[i] < p->ref_tick[oldest])
      oldest = i;
  }
  float ms = 0;
  double off_ns;
  if (best >= 0) {
    if (cu.ev_elapsed(&ms, p->ref[best], s->ev[0]) != CU_SUCCESS)
      return -1;
    off_ns = (double)ms * 1e6;
  } else if (oldest >= 0) {
    /* Launched before every reference we still hold: measure backwards
     * (cuEventElapsedTime's sign for reversed events is not documented). */
    best = oldest;
    if (cu.ev_elapsed(&ms, s->ev[0], p->ref[best]) != CU_SUCCESS)
      return -1;
    off_ns = -(double)ms * 1e6;
  } else {
    return -1;
  }
  double off_ticks = off_ns * rate;
  if (!isfinite(off_ticks) || fabs(off_ticks) > 9e18)
    return -1;
  *start = p->ref_tick[best] + (uint64_t)(int64_t)llround(off_ticks);
  return 0;
}

/* 1: resolved and emitted (slot freed); 0: not yet; -1: lost (freed). */
static int resolve(gpu_pool *p, gpu_slot *s, double rate,
                   pp__gpu_emit_fn emit, void *arg) {
  cu_result q = cu.ev_query(s->ev[1]);
  if (q == CU_ERROR_NOT_READY)
    return 0;
  float ms = 0;
  if (q == CU_SUCCESS)
    q = cu.ev_elapsed(&ms, s->ev[0], s->ev[1]);
  if (q == CU_ERROR_NOT_READY)
    return 0;
  if (q != CU_SUCCESS || !isfinite(ms)) {
    count(&n_lost);
    atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
    return -1;
  }
  uint64_t start;
  if (place(p, s, rate, &start) != 0)
    return 0;
  pp__gpu_rec r;
  r.loc = s->loc;
  r.tid = s->tid;
  r.stream = (uint64_t)(uintptr_t)s->stream;
  r.device = p->device;
  r.launch_tick = s->launch_tick;
  r.start_tick = start;
  double d = (double)ms * 1e6;
  r.dur_ns = d > 0 ? (uint64_t)llround(d) : 0;
  emit(&r, arg);
  count(&n_resolved);
  atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
  return 1;
}

/* Resolve what has completed in pool p; returns slots still ENDED. */
static uint64_t pool_pass(gpu_pool *p, double rate, int calibrate_now,
                          pp__gpu_emit_fn emit, void *arg) {
  cu.ctx_set(p->ctx);
  if (calibrate_now) {
    calibrate(p, rate);
    p->last_cal_ns = pp__mono_ns();
  }
  uint64_t pending = 0;
  for (uint32_t i = 0; i < p->n; i++) {
    gpu_slot *s = &p->slots[i];
    if (atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_ENDED)
      continue;
    if (resolve(p, s, rate, emit, arg) == 0)
      pending++;
  }
  return pending;
}

static void put_meta_u64(const char *key, uint64_t v) {
  char num[32];
  snprintf(num, sizeof num, "%llu", (unsigned long long)v);
  pp__session_meta(key, num);
}

/* ---- device memory (writer thread) -------------------------------------- */

/* Pool i samples its device's memory when no earlier pool has the same
 * device (contexts of one device see the same free and total). */
static int mem_owner(int i, const gpu_pool *p) {
  for (int j = 0; j < i; j++)
    if (atomic_load_explicit(&pools[j], memory_order_relaxed)->device ==
        p->device)
      return 0;
  return 1;
}

static void mem_note(mem_state *m, const gpu_pool *p, const char *why) {
  if (m->noted)
    return;
  m->noted = 1;
  char key[64];
  snprintf(key, sizeof key, "cuda_mem.%" PRIu32 ".unavailable", p->device);
  pp__session_meta(key, why);
}

static const pp_srcloc *mem_site(const gpu_pool *p, const char *what) {
  char name[64];
  snprintf(name, sizeof name, "cuda%" PRIu32 ".%s", p->device, what);
  return pp__intern(name, PP_KIND_METRIC); /* cuda<N>.mem_*: the library's */
}

/* One cuMemGetInfo sample of pool i's device when due (recording on). */
static void mem_sample(int i, gpu_pool *p, int64_t now) {
  mem_state *m = &mem[i];
  if (m->last_ns &&
      now - m->last_ns <
          atomic_load_explicit(&mem_period_ns, memory_order_relaxed))
    return;
  m->last_ns = now;
  if (!mem_owner(i, p))
    return;
  if (!cu.mem_info) {
    mem_note(m, p, "libcuda has no cuMemGetInfo_v2");
    return;
  }
  char why[160], eb[96];
  size_t free_b = 0, total_b = 0;
  cu_result r = cu.ctx_set(p->ctx);
  if (r != CU_SUCCESS) {
    snprintf(why, sizeof why, "cuCtxSetCurrent failed: %s",
             cu_err(r, eb, sizeof eb));
    goto fail;
  }
  r = cu.mem_info(&free_b, &total_b);
  if (r != CU_SUCCESS) {
    snprintf(why, sizeof why, "cuMemGetInfo failed: %s",
             cu_err(r, eb, sizeof eb));
    goto fail;
  }
  if (free_b > total_b || total_b > (size_t)INT64_MAX) {
    snprintf(why, sizeof why, "cuMemGetInfo gave free %zu > total %zu", free_b,
             total_b);
    goto fail;
  }
  if (!m->used) {
    m->used = mem_site(p, "mem_used_bytes");
    m->total = mem_site(p, "mem_total_bytes");
  }
  if (!writer_named) { /* the samples' thread, as the sampler names its own */
    writer_named = 1;
    pp_thread_name("pipeprof writer");
  }
  pp_counter_set_loc(m->used, (int64_t)(total_b - free_b));
  pp_counter_set_loc(m->total, (int64_t)total_b);
  return;
fail:
  m->failed++;
  mem_note(m, p, why);
}

/* Final pass: how many calls failed per device, and why nothing could be
 * sampled when GPU zones were used but no context is known. */
static void mem_final_meta(int n) {
  for (int i = 0; i < n; i++) {
    gpu_pool *p = atomic_load_explicit(&pools[i], memory_order_relaxed);
    if (!mem[i].failed)
      continue;
    char key[64];
    snprintf(key, sizeof key, "cuda_mem.%" PRIu32 ".failed", p->device);
    put_meta_u64(key, mem[i].failed);
  }
  if (n || !atomic_load(&used))
    return;
  pp__session_meta("cuda_mem.unavailable",
                   atomic_load(&lib_state) == LIB_FAILED
                       ? lib_reason
                       : "no CUDA context known (device memory is sampled "
                         "for the contexts that ran GPU zones)");
}

void pp__gpu_poll(double rate, int final, pp__gpu_emit_fn emit, void *arg) {
  if (!(rate > 0) || !isfinite(rate))
    rate = 1.0;
  int n = atomic_load_explicit(&npools, memory_order_acquire);
  int64_t now = pp__mono_ns();
  for (int i = 0; i < n; i++) {
    gpu_pool *p = atomic_load_explicit(&pools[i], memory_order_relaxed);
    int due = p->last_cal_ns == 0 || now - p->last_cal_ns >= CAL_PERIOD_NS;
    uint64_t pending = pool_pass(p, rate, due, emit, arg);
    /* Recording is off in the final pass (pp_shutdown stopped it). */
    if (!final && ACTIVE())
      mem_sample(i, p, now);
    if (!final)
      continue;
    /* Shutdown: give work already ended a bounded time to finish. */
    int64_t t0 = pp__mono_ns();
    while (pending && pp__mono_ns() - t0 < FINAL_WAIT_NS) {
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
      pending = pool_pass(p, rate, 0, emit, arg);
    }
    /* What is left (still running, never ended, or unplaceable) is
     * counted, and the slots return to the pool. */
    for (uint32_t k = 0; k < p->n; k++) {
      gpu_slot *s = &p->slots[k];
      uint32_t st = atomic_load_explicit(&s->state, memory_order_acquire);
      if ((st == SLOT_OPEN || st == SLOT_ENDED) &&
          atomic_compare_exchange_strong(&s->state, &st, SLOT_FREE))
        n_unresolved++;
    }
  }
  if (n)
    cu.ctx_set(NULL);
  if (final)
    mem_final_meta(n);
  if (!final || !atomic_load(&used))
    return;
  put_meta_u64("gpu_zones.resolved", atomic_load(&n_resolved));
  put_meta_u64("gpu_zones.unresolved", n_unresolved);
  put_meta_u64("gpu_zones.dropped.pool_exhausted", atomic_load(&n_pool_full));
  put_meta_u64("gpu_zones.dropped.no_context", atomic_load(&n_no_context));
  put_meta_u64("gpu_zones.dropped.record_failed",
                atomic_load(&n_record_failed));
  put_meta_u64("gpu_zones.dropped.unavailable", atomic_load(&n_unavailable));
  put_meta_u64("gpu_zones.dropped.query_failed", atomic_load(&n_lost));
  put_meta_u64("gpu_zones.calibrations", n_calibrations);
  put_meta_u64("gpu_zones.slots", atomic_load(&cfg_slots));
  char num[32];
  snprintf(num, sizeof num, "%.0f", max_cal_err_ns);
  pp__session_meta("gpu_zones.calib_error_ns", num);
}
