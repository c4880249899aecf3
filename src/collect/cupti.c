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
#include "format/records.h"
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

/* A record's start and duration on our clock, as the format has them
 * (the duration 0 when CUPTI reports an end before the start). */
static void span(uint64_t start, uint64_t end, uint64_t *s, uint64_t *dur) {
  uint64_t e = conv(end);
  *s = conv(start);
  *dur = e > *s ? e - *s : 0;
}

/* Append one record, its body encoded by the format's table
 * (format/records.h) at body; when the writer has fallen PENDING_CAP
 * behind, the record is counted as dropped instead. */
static void emit(unsigned kind, const unsigned char *body, size_t blen) {
  if (pending.len + blen + 11 > PENDING_CAP ||
      ppt_buf_reserve(&pending, blen + 11) != 0) {
    pending.oom = 0;
    pending_dropped++;
    return;
  }
  unsigned char *p = pending.data + pending.len;
  p += ppt_cuda_head_enc(p, kind, blen);
  memcpy(p, body, blen);
  pending.len = (size_t)(p + blen - pending.data);
}

/* Encode record r of a table into a stack buffer and emit it. */
#define EMIT(kind, name, r)                                                    \
  do {                                                                         \
    unsigned char body_[256];                                                  \
    emit(kind, body_, ppt_##name##_enc(body_, r));                             \
  } while (0)

/* The drops counted since the last DROPPED record, as one (kept for later
 * when even that record finds no room). */
static void emit_dropped(void) {
  ppt_cuda_dropped r = {pending_dropped};
  size_t before = pending.len;
  EMIT(PPT_CUDA_DROPPED, cuda_dropped, &r);
  if (pending.len != before)
    pending_dropped = 0;
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
  size_t len = strlen(text);
  ppt_cuda_string r = {id, {text, len > NAME_CAP ? NAME_CAP : len}};
  unsigned char body[NAME_CAP + 20];
  emit(PPT_CUDA_STRING, body, ppt_cuda_string_enc(body, &r));
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
  switch (a->kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
    const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)a;
    ppt_cuda_kernel r;
    r.name = kernel_name(k->name);
    span(k->start, k->end, &r.start, &r.dur);
    r.queued = conv(k->queued); /* 0: not collected */
    r.device = k->deviceId;
    r.context = k->contextId;
    r.stream = k->streamId;
    r.correlation = k->correlationId;
    r.grid_x = k->gridX;
    r.grid_y = k->gridY;
    r.grid_z = k->gridZ;
    r.block_x = k->blockX;
    r.block_y = k->blockY;
    r.block_z = k->blockZ;
    r.static_smem = k->staticSharedMemory;
    r.dynamic_smem = k->dynamicSharedMemory;
    r.registers = k->registersPerThread;
    EMIT(PPT_CUDA_KERNEL, cuda_kernel, &r);
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY: {
    const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)a;
    ppt_cuda_memcpy r;
    span(m->start, m->end, &r.start, &r.dur);
    r.bytes = m->bytes;
    r.copy_kind = m->copyKind;
    r.src_kind = m->srcKind;
    r.dst_kind = m->dstKind;
    r.flags = m->flags;
    r.device = m->deviceId;
    r.context = m->contextId;
    r.stream = m->streamId;
    r.correlation = m->correlationId;
    EMIT(PPT_CUDA_MEMCPY, cuda_memcpy, &r);
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMSET: {
    const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)a;
    ppt_cuda_memset r;
    span(m->start, m->end, &r.start, &r.dur);
    r.bytes = m->bytes;
    r.value = m->value;
    r.memory_kind = m->memoryKind;
    r.device = m->deviceId;
    r.context = m->contextId;
    r.stream = m->streamId;
    r.correlation = m->correlationId;
    EMIT(PPT_CUDA_MEMSET, cuda_memset, &r);
    break;
  }
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
    const CUpti_ActivitySynchronization2 *y =
        (const CUpti_ActivitySynchronization2 *)a;
    ppt_cuda_sync r;
    span(y->start, y->end, &r.start, &r.dur);
    r.type = (uint64_t)y->type;
    r.context = y->contextId;
    r.stream = y->streamId;
    r.correlation = y->correlationId;
    r.event = y->cudaEventId;
    EMIT(PPT_CUDA_SYNC, cuda_sync, &r);
    break;
  }
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER: {
    const CUpti_ActivityAPI *p = (const CUpti_ActivityAPI *)a;
    CUpti_CallbackDomain dom = a->kind == CUPTI_ACTIVITY_KIND_DRIVER
                                   ? CUPTI_CB_DOMAIN_DRIVER_API
                                   : CUPTI_CB_DOMAIN_RUNTIME_API;
    ppt_cuda_api r;
    r.name = api_name(dom, p->cbid);
    span(p->start, p->end, &r.start, &r.dur);
    r.domain = (uint64_t)dom;
    r.cbid = p->cbid;
    r.tid = p->threadId;
    r.correlation = p->correlationId;
    r.result = p->returnValue;
    EMIT(PPT_CUDA_API, cuda_api, &r);
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
    emit_dropped();
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
    emit_dropped();
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
    emit_dropped();
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
