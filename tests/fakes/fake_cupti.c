/* SPDX-License-Identifier: MIT */
/*
 * A fake libcupti for the CUPTI tracer's tests (src/collect/cupti.c): the
 * activity-API entry points the tracer calls, producing records laid out
 * exactly as the toolkit's cupti_activity.h says (this file includes it),
 * handed to the registered buffer callbacks on flush or when a buffer is
 * full. Tests drive it through the fake_cupti_* functions below, which act
 * like one CUDA runtime call on the calling thread: a RUNTIME API record
 * (the thread id as CUPTI would report it: gettid only after
 * cuptiSetThreadIdType(SYSTEM)) and the GPU record it launched, with the
 * same correlation id and times from the registered timestamp callback
 * (else from "CUPTI's clock", CLOCK_MONOTONIC + clock_offset). Each call
 * also emits one driver API record of its own (cuGetProcAddress-like
 * noise, another correlation id). A kind produces records only while
 * enabled. The text file named in $PP_FAKE_CUPTI scripts it (read once):
 *
 *   version N            cuptiGetVersion reports N (default: the header's)
 *   enable KIND ERR      cuptiActivityEnable(KIND) returns ERR (KIND as in
 *                        CONCURRENT_KERNEL, MEMCPY, MEMSET, RUNTIME, ...)
 *   fail FUNCTION ERR    FUNCTION (cuptiGetVersion,
 *                        cuptiActivityRegisterCallbacks,
 *                        cuptiActivityRegisterTimestampCallback,
 *                        cuptiSetThreadIdType) returns ERR
 *   dropped N            the next cuptiActivityGetNumDroppedRecords says N
 *   clock_offset NS      CUPTI's own clock minus CLOCK_MONOTONIC
 *   buffer_records N     hand a buffer over after N records (default: when
 *                        full)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#define FAKE_API __attribute__((visibility("default")))

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int loaded;
static uint32_t version = CUPTI_API_VERSION;
static int enable_err[64];
static CUptiResult fail_version, fail_register, fail_ts, fail_thread;
static size_t dropped_next;
static int64_t clock_offset = 1000000000000LL;
static size_t buffer_records;

static CUpti_BuffersCallbackRequestFunc req;
static CUpti_BuffersCallbackCompleteFunc comp;
static CUpti_TimestampCallbackFunc ts_cb;
static int system_tids, latency;
static int enabled[64];
static uint8_t *buf;
static size_t buf_size, buf_used, buf_count;
static uint32_t next_corr = 1;

static const char *const kinds[] = {
    [CUPTI_ACTIVITY_KIND_MEMCPY] = "MEMCPY",
    [CUPTI_ACTIVITY_KIND_MEMSET] = "MEMSET",
    [CUPTI_ACTIVITY_KIND_KERNEL] = "KERNEL",
    [CUPTI_ACTIVITY_KIND_DRIVER] = "DRIVER",
    [CUPTI_ACTIVITY_KIND_RUNTIME] = "RUNTIME",
    [CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] = "CONCURRENT_KERNEL",
    [CUPTI_ACTIVITY_KIND_SYNCHRONIZATION] = "SYNCHRONIZATION",
};

static void load(void) {
  if (loaded)
    return;
  loaded = 1;
  const char *path = getenv("PP_FAKE_CUPTI");
  FILE *f = path ? fopen(path, "r") : NULL;
  if (!f)
    return;
  char line[256], a[64], b[64];
  while (fgets(line, sizeof line, f)) {
    long long v;
    if (sscanf(line, "version %lld", &v) == 1)
      version = (uint32_t)v;
    else if (sscanf(line, "dropped %lld", &v) == 1)
      dropped_next = (size_t)v;
    else if (sscanf(line, "clock_offset %lld", &v) == 1)
      clock_offset = v;
    else if (sscanf(line, "buffer_records %lld", &v) == 1)
      buffer_records = (size_t)v;
    else if (sscanf(line, "enable %63s %lld", a, &v) == 2) {
      for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (kinds[k] && strcmp(kinds[k], a) == 0)
          enable_err[k] = (int)v;
    } else if (sscanf(line, "fail %63s %63s", a, b) == 2) {
      CUptiResult r = (CUptiResult)atoi(b);
      if (strcmp(a, "cuptiGetVersion") == 0)
        fail_version = r;
      else if (strcmp(a, "cuptiActivityRegisterCallbacks") == 0)
        fail_register = r;
      else if (strcmp(a, "cuptiActivityRegisterTimestampCallback") == 0)
        fail_ts = r;
      else if (strcmp(a, "cuptiSetThreadIdType") == 0)
        fail_thread = r;
    }
  }
  fclose(f);
}

static uint64_t own_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec +
                    clock_offset);
}

static uint64_t now(void) { return ts_cb ? ts_cb() : own_clock(); }

static size_t record_size(CUpti_ActivityKind k) {
  switch (k) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    return sizeof(CUpti_ActivityKernel10);
  case CUPTI_ACTIVITY_KIND_MEMCPY:
    return sizeof(CUpti_ActivityMemcpy6);
  case CUPTI_ACTIVITY_KIND_MEMSET:
    return sizeof(CUpti_ActivityMemset4);
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
    return sizeof(CUpti_ActivitySynchronization2);
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER:
    return sizeof(CUpti_ActivityAPI);
  default:
    return 0;
  }
}

/* Hand the current buffer to the client (under mu, released around the
 * callback as CUPTI does not hold the client's locks either). */
static void deliver(void) {
  if (!buf)
    return;
  uint8_t *b = buf;
  size_t size = buf_size, used = buf_used;
  buf = NULL;
  buf_used = buf_count = 0;
  pthread_mutex_unlock(&mu);
  comp(NULL, 0, b, size, used);
  pthread_mutex_lock(&mu);
}

/* Room for one record of kind k (zeroed), or NULL when the client gave no
 * buffer (the record is then counted as dropped). */
static void *slot(CUpti_ActivityKind k) {
  size_t n = record_size(k);
  if (buf && (buf_used + n > buf_size ||
              (buffer_records && buf_count >= buffer_records)))
    deliver();
  if (!buf) {
    size_t max = 0;
    uint8_t *b = NULL;
    size_t size = 0;
    pthread_mutex_unlock(&mu);
    req(&b, &size, &max);
    pthread_mutex_lock(&mu);
    if (!b || size < n || ((uintptr_t)b & 7)) {
      dropped_next++;
      return NULL;
    }
    buf = b;
    buf_size = size;
    buf_used = buf_count = 0;
  }
  void *p = buf + buf_used;
  memset(p, 0, n);
  ((CUpti_Activity *)p)->kind = k;
  buf_used += n;
  buf_count++;
  return p;
}

static uint32_t thread_id(void) {
  return system_tids ? (uint32_t)syscall(SYS_gettid)
                     : (uint32_t)(uintptr_t)pthread_self();
}

/* One runtime call [start, end] with a new correlation id, plus a driver
 * call of its own. */
static uint32_t api(uint32_t cbid, uint64_t start, uint64_t end) {
  uint32_t corr = next_corr++;
  if (enabled[CUPTI_ACTIVITY_KIND_RUNTIME]) {
    CUpti_ActivityAPI *a = slot(CUPTI_ACTIVITY_KIND_RUNTIME);
    if (a) {
      a->cbid = cbid;
      a->start = start;
      a->end = end;
      a->processId = (uint32_t)getpid();
      a->threadId = thread_id();
      a->correlationId = corr;
    }
  }
  if (enabled[CUPTI_ACTIVITY_KIND_DRIVER]) {
    CUpti_ActivityAPI *d = slot(CUPTI_ACTIVITY_KIND_DRIVER);
    if (d) {
      d->kind = CUPTI_ACTIVITY_KIND_DRIVER;
      d->cbid = 677; /* cuGetProcAddress_v2 */
      d->start = start;
      d->end = start + 10;
      d->threadId = thread_id();
      d->correlationId = next_corr++;
    }
  }
  return corr;
}

/* ---- test controls -------------------------------------------------------- */

FAKE_API uint32_t fake_cupti_kernel(const char *name, const int grid[3],
                                    const int block[3], uint32_t device,
                                    uint32_t stream, int64_t start_after,
                                    int64_t dur, int64_t queued_after);
FAKE_API uint32_t fake_cupti_memcpy(int copy_kind, int src_kind, int dst_kind,
                                    uint64_t bytes, uint32_t device,
                                    uint32_t stream, int64_t start_after,
                                    int64_t dur);
FAKE_API uint32_t fake_cupti_memset(uint64_t bytes, uint32_t value,
                                    uint32_t device, uint32_t stream,
                                    int64_t start_after, int64_t dur);
FAKE_API uint32_t fake_cupti_sync(int type, uint32_t stream, int64_t dur);

uint32_t fake_cupti_kernel(const char *name, const int grid[3],
                           const int block[3], uint32_t device,
                           uint32_t stream, int64_t start_after, int64_t dur,
                           int64_t queued_after) {
  pthread_mutex_lock(&mu);
  uint64_t t0 = now();
  uint32_t corr = api(211 /* cudaLaunchKernel_v7000 */, t0, now());
  CUpti_ActivityKernel10 *k =
      enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]
          ? slot(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
          : NULL;
  if (k) {
    k->start = t0 + (uint64_t)start_after;
    k->end = k->start + (uint64_t)dur;
    k->queued = latency && queued_after ? t0 + (uint64_t)queued_after : 0;
    k->deviceId = device;
    k->contextId = 1;
    k->streamId = stream;
    k->gridX = grid[0];
    k->gridY = grid[1];
    k->gridZ = grid[2];
    k->blockX = block[0];
    k->blockY = block[1];
    k->blockZ = block[2];
    k->staticSharedMemory = 1024;
    k->dynamicSharedMemory = 256;
    k->registersPerThread = 32;
    k->correlationId = corr;
    k->name = strdup(name); /* lives as long as the process, like CUPTI's */
  }
  pthread_mutex_unlock(&mu);
  return corr;
}

uint32_t fake_cupti_memcpy(int copy_kind, int src_kind, int dst_kind,
                           uint64_t bytes, uint32_t device, uint32_t stream,
                           int64_t start_after, int64_t dur) {
  pthread_mutex_lock(&mu);
  uint64_t t0 = now();
  uint32_t corr = api(41 /* cudaMemcpyAsync_v3020 */, t0, now());
  CUpti_ActivityMemcpy6 *m =
      enabled[CUPTI_ACTIVITY_KIND_MEMCPY] ? slot(CUPTI_ACTIVITY_KIND_MEMCPY)
                                          : NULL;
  if (m) {
    m->copyKind = (uint8_t)copy_kind;
    m->srcKind = (uint8_t)src_kind;
    m->dstKind = (uint8_t)dst_kind;
    m->flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
    m->bytes = bytes;
    m->start = t0 + (uint64_t)start_after;
    m->end = m->start + (uint64_t)dur;
    m->deviceId = device;
    m->contextId = 1;
    m->streamId = stream;
    m->correlationId = corr;
  }
  pthread_mutex_unlock(&mu);
  return corr;
}

uint32_t fake_cupti_memset(uint64_t bytes, uint32_t value, uint32_t device,
                           uint32_t stream, int64_t start_after, int64_t dur) {
  pthread_mutex_lock(&mu);
  uint64_t t0 = now();
  uint32_t corr = api(49 /* cudaMemset_v3020 */, t0, now());
  CUpti_ActivityMemset4 *m =
      enabled[CUPTI_ACTIVITY_KIND_MEMSET] ? slot(CUPTI_ACTIVITY_KIND_MEMSET)
                                          : NULL;
  if (m) {
    m->value = value;
    m->bytes = bytes;
    m->start = t0 + (uint64_t)start_after;
    m->end = m->start + (uint64_t)dur;
    m->deviceId = device;
    m->contextId = 1;
    m->streamId = stream;
    m->correlationId = corr;
    m->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  }
  pthread_mutex_unlock(&mu);
  return corr;
}

uint32_t fake_cupti_sync(int type, uint32_t stream, int64_t dur) {
  pthread_mutex_lock(&mu);
  uint64_t t0 = now();
  uint32_t corr =
      api(131 /* cudaStreamSynchronize_v3020 */, t0, t0 + (uint64_t)dur);
  CUpti_ActivitySynchronization2 *y =
      enabled[CUPTI_ACTIVITY_KIND_SYNCHRONIZATION]
          ? slot(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)
          : NULL;
  if (y) {
    y->type = (CUpti_ActivitySynchronizationType)type;
    y->start = t0;
    y->end = t0 + (uint64_t)dur;
    y->contextId = 1;
    y->streamId = stream;
    y->correlationId = corr;
    y->cudaEventId = 0;
  }
  pthread_mutex_unlock(&mu);
  return corr;
}

/* ---- the CUPTI entry points ----------------------------------------------- */

FAKE_API CUptiResult cuptiGetVersion(uint32_t *v) {
  pthread_mutex_lock(&mu);
  load();
  CUptiResult r = fail_version;
  if (!r)
    *v = version;
  pthread_mutex_unlock(&mu);
  return r;
}

FAKE_API CUptiResult cuptiGetResultString(CUptiResult r, const char **s) {
  switch (r) {
  case CUPTI_SUCCESS:
    *s = "CUPTI_SUCCESS";
    break;
  case CUPTI_ERROR_NOT_SUPPORTED:
    *s = "CUPTI_ERROR_NOT_SUPPORTED";
    break;
  case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    *s = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
    break;
  case CUPTI_ERROR_NOT_INITIALIZED:
    *s = "CUPTI_ERROR_NOT_INITIALIZED";
    break;
  default:
    *s = "CUPTI_ERROR_UNKNOWN";
    break;
  }
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc rq,
                               CUpti_BuffersCallbackCompleteFunc cp) {
  pthread_mutex_lock(&mu);
  load();
  CUptiResult r = fail_register;
  if (!r) {
    req = rq;
    comp = cp;
  }
  pthread_mutex_unlock(&mu);
  return r;
}

FAKE_API CUptiResult
cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f) {
  pthread_mutex_lock(&mu);
  load();
  CUptiResult r = fail_ts;
  if (!r)
    ts_cb = f;
  pthread_mutex_unlock(&mu);
  return r;
}

FAKE_API CUptiResult cuptiGetTimestamp(uint64_t *t) {
  *t = own_clock(); /* CUPTI's own clock, whatever the callback */
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType t) {
  pthread_mutex_lock(&mu);
  load();
  CUptiResult r = fail_thread;
  if (!r)
    system_tids = t == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM;
  pthread_mutex_unlock(&mu);
  return r;
}

FAKE_API CUptiResult cuptiActivityEnable(CUpti_ActivityKind k) {
  pthread_mutex_lock(&mu);
  load();
  CUptiResult r = CUPTI_SUCCESS;
  if ((unsigned)k >= 64)
    r = CUPTI_ERROR_INVALID_KIND;
  else if (enable_err[k])
    r = (CUptiResult)enable_err[k];
  else if (!req || !comp)
    r = CUPTI_ERROR_INVALID_OPERATION; /* callbacks come first */
  else
    enabled[k] = 1;
  pthread_mutex_unlock(&mu);
  return r;
}

FAKE_API CUptiResult cuptiActivityDisable(CUpti_ActivityKind k) {
  pthread_mutex_lock(&mu);
  if ((unsigned)k < 64)
    enabled[k] = 0;
  pthread_mutex_unlock(&mu);
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityEnableLatencyTimestamps(uint8_t on) {
  latency = on;
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityFlushAll(uint32_t flag) {
  (void)flag;
  pthread_mutex_lock(&mu);
  if (buf && buf_used)
    deliver();
  pthread_mutex_unlock(&mu);
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityGetNextRecord(uint8_t *b, size_t valid,
                                                CUpti_Activity **rec) {
  uint8_t *p = *rec ? (uint8_t *)*rec : b;
  if (*rec) {
    size_t n = record_size((*rec)->kind);
    if (!n)
      return CUPTI_ERROR_INVALID_KIND;
    p += n;
  }
  if (((uintptr_t)p & 7) || p < b)
    return CUPTI_ERROR_INVALID_PARAMETER;
  if ((size_t)(p - b) >= valid)
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *rec = (CUpti_Activity *)p;
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx,
                                                       uint32_t stream,
                                                       size_t *n) {
  (void)ctx;
  (void)stream;
  pthread_mutex_lock(&mu);
  *n = dropped_next; /* reset by reading, as CUPTI does */
  dropped_next = 0;
  pthread_mutex_unlock(&mu);
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain d,
                                          uint32_t cbid, const char **name) {
  if (d == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
    case 211:
      *name = "cudaLaunchKernel_v7000";
      return CUPTI_SUCCESS;
    case 41:
      *name = "cudaMemcpyAsync_v3020";
      return CUPTI_SUCCESS;
    case 49:
      *name = "cudaMemset_v3020";
      return CUPTI_SUCCESS;
    case 131:
      *name = "cudaStreamSynchronize_v3020";
      return CUPTI_SUCCESS;
    }
  } else if (d == CUPTI_CB_DOMAIN_DRIVER_API && cbid == 677) {
    *name = "cuGetProcAddress_v2";
    return CUPTI_SUCCESS;
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}
