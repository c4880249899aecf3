/* SPDX-License-Identifier: MIT */
/*
 * CUPTI activity tracing through dlopen (built when CMake finds cupti.h;
 * cupti_none.c otherwise). The record layouts are the toolkit's at build
 * time (CUpti_ActivityKernel10, Memcpy6, Memset4, Synchronization2, API in
 * CUDA 13), so a libcupti of another major version is refused rather than
 * misread. Records are copied field by field out of each completed buffer
 * into CUDA-chunk records (src/format/pptrace.h) in a pending buffer that
 * the session's writer takes; buffers come from a small pool, so no
 * allocation happens per record. Timestamps are CLOCK_MONOTONIC ns: CUPTI
 * asks our timestamp callback for them (CUDA 11.6+), or, where that fails,
 * each one is shifted by an offset measured against cuptiGetTimestamp.
 * See docs/internals/cupti.md.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "collect/cupti.h"
#include "core/clock.h"
#include "internal.h"

#define BUF_SIZE (4u << 20)      /* bytes per CUPTI buffer */
#define POOL_MAX 8               /* idle buffers kept for reuse */
#define PENDING_CAP (64u << 20)  /* encoded bytes waiting for the writer */
#define MAX_NAMES 65536u         /* distinct kernel and API names */
#define NAME_CAP 4096u           /* bytes kept of one name */

typedef CUptiResult (*fn_version)(uint32_t *);
typedef CUptiResult (*fn_result_string)(CUptiResult, const char **);
typedef CUptiResult (*fn_register)(CUpti_BuffersCallbackRequestFunc,
                                   CUpti_BuffersCallbackCompleteFunc);
typedef CUptiResult (*fn_register_ts)(CUpti_TimestampCallbackFunc);
typedef CUptiResult (*fn_timestamp)(uint64_t *);
typedef CUptiResult (*fn_thread_type)(CUpti_ActivityThreadIdType);
typedef CUptiResult (*fn_kind)(CUpti_ActivityKind);
typedef CUptiResult (*fn_flush)(uint32_t);
typedef CUptiResult (*fn_next)(uint8_t *, size_t, CUpti_Activity **);
typedef CUptiResult (*fn_dropped)(CUcontext, uint32_t, size_t *);
typedef CUptiResult (*fn_cb_name)(CUpti_CallbackDomain, uint32_t,
                                  const char **);
typedef CUptiResult (*fn_latency)(uint8_t);

static struct {
  fn_version version;
  fn_result_string result_string;
  fn_register register_callbacks;
  fn_register_ts register_timestamp; /* optional (CUDA 11.6+) */
  fn_timestamp timestamp;
  fn_thread_type thread_type;        /* optional */
  fn_kind enable, disable;
  fn_flush flush;
  fn_next next;
  fn_dropped dropped;
  fn_cb_name cb_name;                /* optional */
  fn_latency latency;                /* optional */
} F;

typedef struct name_ent {
  uint64_t key; /* hash of the text (kernels) or domain << 32 | cbid */
  uint32_t id;
  uint32_t used;
} name_ent;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* all below */
static void *lib;               /* never closed: CUPTI threads may run */
static int started;             /* callbacks registered, kinds enabled */
static _Atomic int accepting;   /* buffers are decoded (else counted) */
static int mapped;              /* no timestamp callback: use offset */
static _Atomic int64_t offset;  /* mono ns - CUPTI ns (mapped clock) */
static ppt_buf pending;
static uint64_t pending_dropped; /* not yet written as a DROPPED record */
static uint8_t *pool[POOL_MAX];
static size_t npool;
static name_ent *kernel_names, *api_names;
static size_t kernel_cap, api_cap, kernel_count, api_count;
static uint32_t nnames;
static char lib_path[512], version_str[32], missing[512];

static const char *const kind_names[] = {
    [CUPTI_ACTIVITY_KIND_MEMCPY] = "MEMCPY",
    [CUPTI_ACTIVITY_KIND_MEMSET] = "MEMSET",
    [CUPTI_ACTIVITY_KIND_DRIVER] = "DRIVER",
    [CUPTI_ACTIVITY_KIND_RUNTIME] = "RUNTIME",
    [CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] = "CONCURRENT_KERNEL",
    [CUPTI_ACTIVITY_KIND_SYNCHRONIZATION] = "SYNCHRONIZATION",
};

static const char *kind_name(CUpti_ActivityKind k) {
  if ((size_t)k < PP__ARRAY_LEN(kind_names) && kind_names[k])
    return kind_names[k];
  return "?";
}

static void result_text(CUptiResult r, char *buf, size_t len) {
  const char *s = NULL;
  if (F.result_string && F.result_string(r, &s) == CUPTI_SUCCESS && s)
    snprintf(buf, len, "%s", s);
  else
    snprintf(buf, len, "CUPTI error %d", (int)r);
}

/* ---- clock ------------------------------------------------------------ */

static uint64_t CUPTIAPI timestamp_cb(void) {
  return (uint64_t)pp__mono_ns();
}

/* Offset from CUPTI's own time base to CLOCK_MONOTONIC: the midpoint of
 * two monotonic reads around cuptiGetTimestamp, from the tightest of a few
 * brackets (a thread preempted inside one would shift every GPU record by
 * the time it lost). */
static void measure_offset(void) {
  int64_t best = INT64_MAX, off = 0;
  for (int i = 0; i < 7; i++) {
    uint64_t c = 0;
    int64_t m0 = pp__mono_ns();
    if (F.timestamp(&c) != CUPTI_SUCCESS)
      return;
    int64_t m1 = pp__mono_ns();
    if (m1 - m0 < best) {
      best = m1 - m0;
      off = m0 + (m1 - m0) / 2 - (int64_t)c;
    }
  }
  atomic_store(&offset, off);
}

static uint64_t conv(uint64_t ts) {
  if (!mapped || ts == 0)
    return ts;
  int64_t v = (int64_t)ts + atomic_load_explicit(&offset,
                                                 memory_order_relaxed);
  return v > 0 ? (uint64_t)v : 0;
}

/* ---- encoding (under lock) --------------------------------------------- */

typedef struct rec {
  unsigned char b[256];
  size_t n;
} rec;

static void put(rec *r, uint64_t v) { r->n += ppt_put_uv(r->b + r->n, v); }
static void puts_(rec *r, int64_t v) { put(r, ppt_zigzag(v)); }
/* A record's time span as the reader's get_span() takes it: the start on
 * our clock, then the duration (0 when CUPTI reports an end before it). */
static void put_span(rec *r, uint64_t start, uint64_t end) {
  uint64_t s = conv(start), e = conv(end);
  put(r, s);
  put(r, e > s ? e - s : 0);
}

/* Append one record; when the writer has fallen PENDING_CAP behind, the
 * record is counted as dropped instead. */
static void emit(unsigned kind, const rec *r, const char *str, size_t slen) {
  size_t body = r->n + (str ? 10 + slen : 0);
  if (pending.len + body + 11 > PENDING_CAP ||
      ppt_buf_reserve(&pending, body + 11) != 0) {
    pending.oom = 0;
    pending_dropped++;
    return;
  }
  unsigned char *p = pending.data + pending.len;
  size_t blen = r->n;
  unsigned char lenbuf[10];
  size_t sl = 0;
  if (str) {
    sl = ppt_put_uv(lenbuf, slen);
    blen += sl + slen;
  }
  *p++ = (unsigned char)kind;
  p += ppt_put_uv(p, blen);
  memcpy(p, r->b, r->n);
  p += r->n;
  if (str) {
    memcpy(p, lenbuf, sl);
    p += sl;
    memcpy(p, str, slen);
    p += slen;
  }
  pending.len = (size_t)(p - pending.data);
}

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ULL; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h | 1; /* never 0: 0 marks a free slot */
}

static size_t slot_of(uint64_t key, size_t cap) {
  return (size_t)(key * 0x9E3779B97F4A7C15ULL) & (cap - 1);
}

static uint32_t lookup(const name_ent *tab, size_t cap, uint64_t key) {
  if (!cap)
    return UINT32_MAX;
  for (size_t j = slot_of(key, cap); tab[j].used; j = (j + 1) & (cap - 1))
    if (tab[j].key == key)
      return tab[j].id;
  return UINT32_MAX;
}

/* Give a new name the next id and write its STRING record; UINT32_MAX
 * when MAX_NAMES are defined or memory ran out (records then refer to an
 * undefined name, which the reader shows as unknown). Names are told
 * apart by key alone: a 64-bit hash collision would merge two kernels. */
static uint32_t define(name_ent **tab, size_t *cap, size_t *count,
                       uint64_t key, const char *text) {
  if (nnames >= MAX_NAMES)
    return UINT32_MAX;
  if ((*count + 1) * 2 > *cap) {
    size_t ncap = *cap ? *cap * 2 : 256;
    name_ent *n = pp__calloc(ncap, sizeof *n);
    if (!n)
      return UINT32_MAX;
    for (size_t i = 0; i < *cap; i++) {
      if (!(*tab)[i].used)
        continue;
      size_t j = slot_of((*tab)[i].key, ncap);
      while (n[j].used)
        j = (j + 1) & (ncap - 1);
      n[j] = (*tab)[i];
    }
    pp__free(*tab);
    *tab = n;
    *cap = ncap;
  }
  size_t j = slot_of(key, *cap);
  while ((*tab)[j].used)
    j = (j + 1) & (*cap - 1);
  uint32_t id = nnames++;
  (*tab)[j].key = key;
  (*tab)[j].id = id;
  (*tab)[j].used = 1;
  (*count)++;
  rec r = {.n = 0};
  put(&r, id);
  size_t len = strlen(text);
  emit(PPT_CUDA_STRING, &r, text, len > NAME_CAP ? NAME_CAP : len);
  return id;
}

static uint32_t kernel_name(const char *s) {
  if (!s)
    s = "(unnamed kernel)";
  uint64_t key = hash_str(s);
  uint32_t id = lookup(kernel_names, kernel_cap, key);
  return id != UINT32_MAX
             ? id
             : define(&kernel_names, &kernel_cap, &kernel_count, key, s);
}

static uint32_t api_name(CUpti_CallbackDomain dom, uint32_t cbid) {
  uint64_t key = (uint64_t)dom << 32 | cbid;
  uint32_t id = lookup(api_names, api_cap, key);
  if (id != UINT32_MAX)
    return id;
  const char *s = NULL;
  char fallback[48];
  if (!F.cb_name || F.cb_name(dom, cbid, &s) != CUPTI_SUCCESS || !s) {
    snprintf(fallback, sizeof fallback, "%s api %u",
             dom == CUPTI_CB_DOMAIN_DRIVER_API ? "driver" : "runtime", cbid);
    s = fallback;
  }
  return define(&api_names, &api_cap, &api_count, key, s);
}

static void encode(const CUpti_Activity *a) {
  rec r = {.n = 0};
  switch (a->kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
    const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)a;
    uint32_t name = kernel_name(k->name);
    put_span(&r, k->start, k->end);
    put(&r, conv(k->queued)); /* 0: not collected */
    put(&r, k->deviceId);
    put(&r, k->contextId);
    put(&r, k->streamId);
    put(&r, k->correlationId);
    put(&r, name);
    puts_(&r, k->gridX);
    puts_(&r, k->gridY);
    puts_(&r, k->gridZ);
    puts_(&r, k->blockX);
    puts_(&r, k->blockY);
    puts_(&r, k->blockZ);
    puts_(&r, k->staticSharedMemory);
    puts_(&r, k->dynamicSharedMemory);
    put(&r, k->registersPerThread);
    emit(PPT_CUDA_KERNEL, &r, NULL, 0);
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY: {
    const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)a;
    put_span(&r, m->start, m->end);
    put(&r, m->bytes);
    put(&r, m->copyKind);
    put(&r, m->srcKind);
    put(&r, m->dstKind);
    put(&r, m->flags);
    put(&r, m->deviceId);
    put(&r, m->contextId);
    put(&r, m->streamId);
    put(&r, m->correlationId);
    emit(PPT_CUDA_MEMCPY, &r, NULL, 0);
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMSET: {
    const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)a;
    put_span(&r, m->start, m->end);
    put(&r, m->bytes);
    put(&r, m->value);
    put(&r, m->memoryKind);
    put(&r, m->deviceId);
    put(&r, m->contextId);
    put(&r, m->streamId);
    put(&r, m->correlationId);
    emit(PPT_CUDA_MEMSET, &r, NULL, 0);
    break;
  }
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
    const CUpti_ActivitySynchronization2 *y =
        (const CUpti_ActivitySynchronization2 *)a;
    put_span(&r, y->start, y->end);
    put(&r, (uint64_t)y->type);
    put(&r, y->contextId);
    put(&r, y->streamId);
    put(&r, y->correlationId);
    put(&r, y->cudaEventId);
    emit(PPT_CUDA_SYNC, &r, NULL, 0);
    break;
  }
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER: {
    const CUpti_ActivityAPI *p = (const CUpti_ActivityAPI *)a;
    CUpti_CallbackDomain dom = a->kind == CUPTI_ACTIVITY_KIND_DRIVER
                                   ? CUPTI_CB_DOMAIN_DRIVER_API
                                   : CUPTI_CB_DOMAIN_RUNTIME_API;
    uint32_t name = api_name(dom, p->cbid);
    put_span(&r, p->start, p->end);
    put(&r, (uint64_t)dom);
    put(&r, p->cbid);
    put(&r, name);
    put(&r, p->threadId);
    put(&r, p->correlationId);
    put(&r, p->returnValue);
    emit(PPT_CUDA_API, &r, NULL, 0);
    break;
  }
  default:
    break; /* kinds we did not enable */
  }
}

/* ---- buffer callbacks ----------------------------------------------------
 * CUPTI calls these from its worker thread, from the thread that flushes,
 * and (CUDA 13: one buffer per thread) from application threads. */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size,
                                      size_t *max_records) {
  uint8_t *b = NULL;
  pthread_mutex_lock(&lock);
  if (npool)
    b = pool[--npool];
  pthread_mutex_unlock(&lock);
  if (!b)
    b = aligned_alloc(8, BUF_SIZE);
  *buffer = b;
  *size = b ? BUF_SIZE : 0;
  *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream,
                                      uint8_t *buffer, size_t size,
                                      size_t valid) {
  (void)ctx;
  (void)stream;
  (void)size;
  if (!buffer)
    return;
  pthread_mutex_lock(&lock);
  int take = atomic_load(&accepting);
  CUpti_Activity *a = NULL;
  while (valid && F.next(buffer, valid, &a) == CUPTI_SUCCESS) {
    if (take)
      encode(a);
    else
      pending_dropped++; /* arrived after stop */
  }
  size_t lost = 0;
  if (F.dropped(NULL, 0, &lost) == CUPTI_SUCCESS)
    pending_dropped += lost;
  if (pending_dropped && take) {
    rec r = {.n = 0};
    put(&r, pending_dropped);
    size_t before = pending.len;
    emit(PPT_CUDA_DROPPED, &r, NULL, 0);
    if (pending.len != before)
      pending_dropped = 0;
  }
  if (npool < POOL_MAX) {
    pool[npool++] = buffer;
    buffer = NULL;
  }
  pthread_mutex_unlock(&lock);
  free(buffer);
}

/* ---- loading ------------------------------------------------------------ */

static void *sym(const char *name) { return dlsym(lib, name); }

static unsigned api_major(uint32_t v) {
  if (v >= 100000)
    return v / 10000; /* CUDA 13+: xxyyzz */
  if (v >= 19)
    return 12;
  if (v >= 13)
    return 11;
  return 10;
}

static int open_library(char *why, size_t len) {
  const char *env = getenv("PIPEPROF_LIBCUPTI");
  if (env && *env) {
    lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *e = dlerror();
      snprintf(why, len, "cannot load PIPEPROF_LIBCUPTI=%s: %s", env,
               e ? e : "unknown error");
      return -1;
    }
    snprintf(lib_path, sizeof lib_path, "%s", env);
    return 0;
  }
  char soname[32];
  snprintf(soname, sizeof soname, "libcupti.so.%u",
           api_major(CUPTI_API_VERSION));
  const char *const names[] = {soname, "libcupti.so",
#ifdef PP_CUPTI_TOOLKIT_LIB
                               PP_CUPTI_TOOLKIT_LIB,
#endif
                               "/usr/local/cuda/lib64/libcupti.so",
                               "/usr/local/cuda/extras/CUPTI/lib64/"
                               "libcupti.so"};
  for (size_t i = 0; i < PP__ARRAY_LEN(names); i++) {
    lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      snprintf(lib_path, sizeof lib_path, "%s", names[i]);
      return 0;
    }
  }
  snprintf(why, len,
           "libcupti not found (tried %s, libcupti.so and the CUDA toolkit's "
           "lib64; set PIPEPROF_LIBCUPTI to its path)",
           soname);
  return -1;
}

static int resolve(char *why, size_t len) {
  struct {
    void **slot;
    const char *name;
    int required;
  } t[] = {
      {(void **)&F.version, "cuptiGetVersion", 1},
      {(void **)&F.result_string, "cuptiGetResultString", 0},
      {(void **)&F.register_callbacks, "cuptiActivityRegisterCallbacks", 1},
      {(void **)&F.register_timestamp,
       "cuptiActivityRegisterTimestampCallback", 0},
      {(void **)&F.timestamp, "cuptiGetTimestamp", 1},
      {(void **)&F.thread_type, "cuptiSetThreadIdType", 0},
      {(void **)&F.enable, "cuptiActivityEnable", 1},
      {(void **)&F.disable, "cuptiActivityDisable", 1},
      {(void **)&F.flush, "cuptiActivityFlushAll", 1},
      {(void **)&F.next, "cuptiActivityGetNextRecord", 1},
      {(void **)&F.dropped, "cuptiActivityGetNumDroppedRecords", 1},
      {(void **)&F.cb_name, "cuptiGetCallbackName", 0},
      {(void **)&F.latency, "cuptiActivityEnableLatencyTimestamps", 0},
  };
  for (size_t i = 0; i < PP__ARRAY_LEN(t); i++) {
    *t[i].slot = sym(t[i].name);
    if (!*t[i].slot && t[i].required) {
      snprintf(why, len, "%s: symbol %s missing", lib_path, t[i].name);
      return -1;
    }
  }
  return 0;
}

static void note_missing(const char *what, CUptiResult r) {
  char err[96];
  result_text(r, err, sizeof err);
  size_t n = strlen(missing);
  snprintf(missing + n, sizeof missing - n, "%s%s: %s", n ? "; " : "", what,
           err);
}

static const CUpti_ActivityKind optional_kinds[] = {
    CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER};
static int enabled_optional[PP__ARRAY_LEN(optional_kinds)];

static int start_locked(char *why, size_t len) {
  if (!lib && open_library(why, len) != 0)
    return -1;
  if (resolve(why, len) != 0)
    return -1;
  uint32_t v = 0;
  CUptiResult r = F.version(&v);
  if (r != CUPTI_SUCCESS) {
    char err[96];
    result_text(r, err, sizeof err);
    snprintf(why, len, "cuptiGetVersion: %s", err);
    return -1;
  }
  if (api_major(v) != api_major(CUPTI_API_VERSION)) {
    snprintf(why, len,
             "libcupti API version %u (%s) does not match the version this "
             "build's records are laid out for (%u)",
             v, lib_path, (unsigned)CUPTI_API_VERSION);
    return -1;
  }
  snprintf(version_str, sizeof version_str, "%u", v);
  missing[0] = 0;
  pending_dropped = 0; /* late records of an earlier session */
  /* Attribute API calls to our thread ids (gettid), not pthread_self. */
  if (!F.thread_type)
    note_missing("cuptiSetThreadIdType", CUPTI_ERROR_NOT_SUPPORTED);
  else if ((r = F.thread_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)) !=
           CUPTI_SUCCESS)
    note_missing("cuptiSetThreadIdType", r);
  r = F.register_callbacks(buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS) {
    char err[96];
    result_text(r, err, sizeof err);
    snprintf(why, len, "cuptiActivityRegisterCallbacks: %s", err);
    return -1;
  }
  /* Our clock, registered before any kind is enabled (CUPTI's rule). */
  mapped = !F.register_timestamp ||
           F.register_timestamp(timestamp_cb) != CUPTI_SUCCESS;
  if (mapped)
    measure_offset();
  atomic_store(&accepting, 1);
  r = F.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) {
    char err[96];
    result_text(r, err, sizeof err);
    snprintf(why, len, "cuptiActivityEnable(CONCURRENT_KERNEL): %s", err);
    atomic_store(&accepting, 0);
    return -1;
  }
  for (size_t i = 0; i < PP__ARRAY_LEN(optional_kinds); i++) {
    r = F.enable(optional_kinds[i]);
    enabled_optional[i] = r == CUPTI_SUCCESS;
    if (r != CUPTI_SUCCESS)
      note_missing(kind_name(optional_kinds[i]), r);
  }
  /* Queued and submitted times of kernels (launch latency). */
  if (F.latency && (r = F.latency(1)) != CUPTI_SUCCESS)
    note_missing("latency timestamps", r);
  started = 1;
  return 0;
}

int pp__cupti_start(char *why, size_t len) {
  pthread_mutex_lock(&lock);
  int rc = started ? 0 : start_locked(why, len);
  pthread_mutex_unlock(&lock);
  return rc;
}

int pp__cupti_running(void) { return atomic_load(&accepting); }

const char *pp__cupti_info(const char *key) {
  if (!key)
    return "";
  if (strcmp(key, "clock") == 0)
    return mapped ? "mapped" : "callback";
  if (strcmp(key, "library") == 0)
    return lib_path;
  if (strcmp(key, "version") == 0)
    return version_str;
  if (strcmp(key, "missing") == 0)
    return missing;
  return "";
}

void pp__cupti_flush(int forced) {
  pthread_mutex_lock(&lock);
  int on = started;
  pthread_mutex_unlock(&lock);
  if (!on)
    return;
  if (mapped)
    measure_offset();
  /* Not under our lock: the flush calls buffer_completed on this thread. */
  F.flush(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

void pp__cupti_take(ppt_buf *out) {
  pthread_mutex_lock(&lock);
  if (pending_dropped && atomic_load(&accepting)) {
    rec r = {.n = 0};
    put(&r, pending_dropped);
    size_t before = pending.len;
    emit(PPT_CUDA_DROPPED, &r, NULL, 0);
    if (pending.len != before)
      pending_dropped = 0;
  }
  if (pending.len)
    ppt_buf_bytes(out, pending.data, pending.len);
  pending.len = 0;
  pthread_mutex_unlock(&lock);
}

void pp__cupti_stop(void) {
  pthread_mutex_lock(&lock);
  int on = started;
  pthread_mutex_unlock(&lock);
  if (!on)
    return;
  F.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  F.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  for (size_t i = 0; i < PP__ARRAY_LEN(optional_kinds); i++)
    if (enabled_optional[i])
      F.disable(optional_kinds[i]);
  pthread_mutex_lock(&lock);
  /* The last drops still go out with the records. */
  if (pending_dropped) {
    rec r = {.n = 0};
    put(&r, pending_dropped);
    size_t before = pending.len;
    emit(PPT_CUDA_DROPPED, &r, NULL, 0);
    if (pending.len != before)
      pending_dropped = 0;
  }
  atomic_store(&accepting, 0);
  started = 0;
  /* Names are defined again in the next session's trace. */
  pp__free(kernel_names);
  pp__free(api_names);
  kernel_names = api_names = NULL;
  kernel_cap = api_cap = kernel_count = api_count = 0;
  nnames = 0;
  pthread_mutex_unlock(&lock);
}

void pp__cupti_after_fork_child(void) {
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  memcpy(&lock, &fresh, sizeof fresh);
  started = 0;
  atomic_store(&accepting, 0);
  memset(&pending, 0, sizeof pending); /* the parent's; leaked */
  pending_dropped = 0;
  npool = 0;
  kernel_names = api_names = NULL;
  kernel_cap = api_cap = kernel_count = api_count = 0;
  nnames = 0;
}
