/* SPDX-License-Identifier: MIT */
/*
 * A fake libcuda.so.1 for the GPU zone tests: the driver entry points that
 * src/core/gpu.c calls, plus cuCtxCreate_v2 and cuStreamCreate for the
 * test program itself, with a scripted GPU. The script is the text file
 * named in $PP_FAKE_CUDA, read by cuInit. Lines ('#' starts a comment):
 *
 *   init ERR            cuInit fails with ERR (a number)
 *   device N            device ordinal of contexts (default 0)
 *   offset_ns N         GPU clock = CLOCK_MONOTONIC + N (default 7e9)
 *   steps MS MS ...     GPU time between consecutive records on program
 *                       streams (below): the first record happens at
 *                       now + first step, each later one the next step
 *                       after the previous (the last step repeats)
 *   hold_from K         program-stream records K, K+1, ... (0-based)
 *                       never complete
 *   fail_record K       program-stream record K returns 1 (INVALID_VALUE)
 *   queries N           an event answers NOT_READY to its first N
 *                       queries even when its time has come
 *   mem_total N         cuMemGetInfo_v2: total bytes of the device
 *   mem_used N N ...    used bytes (free = total - used) of consecutive
 *                       cuMemGetInfo_v2 calls (the last value repeats)
 *   mem_error ERR       every cuMemGetInfo_v2 call fails with ERR
 *
 * Without mem_total, cuMemGetInfo_v2 answers NOT_SUPPORTED (801), so that
 * tests about other things see no samples. Built with
 * -DFAKE_CUDA_NO_MEM_INFO (fakes/nomem/libcuda.so.1) it does not export
 * cuMemGetInfo_v2 at all, as a driver too old or too odd for it.
 * $PP_FAKE_CUDA_LOG also gets "mem K USED TOTAL" for each successful
 * call K (0-based) and "mem K error ERR" for a failing one.
 *
 * Streams created with CU_STREAM_NON_BLOCKING (pipeprof's calibration
 * stream) are idle: an event recorded there gets the GPU time of the
 * record call and completes at once. Every other stream (the NULL stream,
 * streams created with flags 0) is a "program stream" that follows the
 * script. An event completes once the GPU clock has reached its time.
 *
 * Checks that make a wrong caller fail: event calls need the event's
 * context current on the calling thread (else INVALID_CONTEXT, 201), as
 * the real driver does for a thread that never made it current;
 * cuEventElapsedTime answers NOT_READY (600) for an incomplete event and
 * INVALID_HANDLE (400) for one never recorded. $PP_FAKE_CUDA_LOG, when
 * set, gets one line per program-stream record: "record K T_CPU_NS", the
 * event's scripted time on CLOCK_MONOTONIC.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAKE_API __attribute__((visibility("default")))

typedef int cu_result;
typedef struct fake_ctx {
  int device;
} fake_ctx;
typedef struct fake_stream {
  unsigned flags;
} fake_stream;
typedef struct fake_event {
  fake_ctx *ctx;
  int recorded;
  int64_t t;      /* GPU time, ns */
  int hold;       /* never completes */
  unsigned queries;
} fake_event;

/* The entry points, declared first (-Wmissing-prototypes). */
FAKE_API cu_result cuInit(unsigned flags);
FAKE_API cu_result cuGetErrorString(cu_result r, const char **s);
FAKE_API cu_result cuCtxCreate_v2(fake_ctx **ctx, unsigned flags, int dev);
FAKE_API cu_result cuCtxGetCurrent(fake_ctx **ctx);
FAKE_API cu_result cuCtxSetCurrent(fake_ctx *ctx);
FAKE_API cu_result cuCtxGetDevice(int *dev);
FAKE_API cu_result cuStreamCreate(fake_stream **s, unsigned flags);
FAKE_API cu_result cuEventCreate(fake_event **e, unsigned flags);
FAKE_API cu_result cuEventDestroy_v2(fake_event *e);
FAKE_API cu_result cuEventRecord(fake_event *e, fake_stream *s);
FAKE_API cu_result cuEventQuery(fake_event *e);
FAKE_API cu_result cuEventSynchronize(fake_event *e);
FAKE_API cu_result cuEventElapsedTime_v2(float *ms, fake_event *a,
                                         fake_event *b);
#ifndef FAKE_CUDA_NO_MEM_INFO
FAKE_API cu_result cuMemGetInfo_v2(size_t *free_b, size_t *total_b);
#endif

#define MAX_STEPS 64
#define MAX_MEM 64

static struct {
  int init_err;
  int device;
  int64_t offset;
  int64_t steps[MAX_STEPS];
  int nsteps;
  long hold_from, fail_record;
  unsigned queries;
  unsigned long long mem_total, mem_used[MAX_MEM];
  int nmem, mem_error;
} sc;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static fake_ctx the_ctx;
static __thread fake_ctx *cur;
static long nrecords;   /* program-stream records so far */
static int64_t last_t;  /* GPU time of the last program-stream record */
#ifndef FAKE_CUDA_NO_MEM_INFO
static long nmeminfo; /* cuMemGetInfo_v2 calls so far */
#endif

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void read_script(void) {
  memset(&sc, 0, sizeof sc);
  sc.offset = 7000000000LL;
  sc.hold_from = -1;
  sc.fail_record = -1;
  const char *path = getenv("PP_FAKE_CUDA");
  FILE *f = path ? fopen(path, "r") : NULL;
  if (!f)
    return;
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    char *p = line, *end;
    if (sscanf(p, "init %d", &sc.init_err) == 1)
      continue;
    if (sscanf(p, "device %d", &sc.device) == 1)
      continue;
    long long v;
    if (sscanf(p, "offset_ns %lld", &v) == 1) {
      sc.offset = v;
      continue;
    }
    if (sscanf(p, "hold_from %ld", &sc.hold_from) == 1)
      continue;
    if (sscanf(p, "fail_record %ld", &sc.fail_record) == 1)
      continue;
    if (sscanf(p, "queries %u", &sc.queries) == 1)
      continue;
    if (sscanf(p, "mem_total %llu", &sc.mem_total) == 1)
      continue;
    if (sscanf(p, "mem_error %d", &sc.mem_error) == 1)
      continue;
    if (strncmp(p, "mem_used", 8) == 0) {
      p += 8;
      for (;;) {
        unsigned long long u = strtoull(p, &end, 10);
        if (end == p || sc.nmem == MAX_MEM)
          break;
        sc.mem_used[sc.nmem++] = u;
        p = end;
      }
      continue;
    }
    if (strncmp(p, "steps", 5) == 0) {
      p += 5;
      for (;;) {
        double ms = strtod(p, &end);
        if (end == p || sc.nsteps == MAX_STEPS)
          break;
        sc.steps[sc.nsteps++] = (int64_t)(ms * 1e6 + 0.5);
        p = end;
      }
    }
  }
  fclose(f);
}

FAKE_API cu_result cuInit(unsigned flags) {
  (void)flags;
  read_script();
  the_ctx.device = sc.device;
  return sc.init_err;
}

FAKE_API cu_result cuGetErrorString(cu_result r, const char **s) {
  *s = r == 600 ? "CUDA_ERROR_NOT_READY" : "fake CUDA error";
  return 0;
}

FAKE_API cu_result cuCtxCreate_v2(fake_ctx **ctx, unsigned flags, int dev) {
  (void)flags;
  (void)dev;
  cur = &the_ctx;
  *ctx = &the_ctx;
  return 0;
}

FAKE_API cu_result cuCtxGetCurrent(fake_ctx **ctx) {
  *ctx = cur;
  return 0;
}

FAKE_API cu_result cuCtxSetCurrent(fake_ctx *ctx) {
  cur = ctx;
  return 0;
}

FAKE_API cu_result cuCtxGetDevice(int *dev) {
  if (!cur)
    return 201;
  *dev = cur->device;
  return 0;
}

FAKE_API cu_result cuStreamCreate(fake_stream **s, unsigned flags) {
  if (!cur)
    return 201;
  *s = calloc(1, sizeof **s);
  if (!*s)
    return 2;
  (*s)->flags = flags;
  return 0;
}

FAKE_API cu_result cuEventCreate(fake_event **e, unsigned flags) {
  (void)flags;
  if (!cur)
    return 201;
  *e = calloc(1, sizeof **e);
  if (!*e)
    return 2;
  (*e)->ctx = cur;
  return 0;
}

FAKE_API cu_result cuEventDestroy_v2(fake_event *e) {
  free(e);
  return 0;
}

FAKE_API cu_result cuEventRecord(fake_event *e, fake_stream *s) {
  if (!e)
    return 400;
  if (cur != e->ctx)
    return 201;
  pthread_mutex_lock(&lock);
  cu_result rc = 0;
  if (s && (s->flags & 1)) { /* idle stream */
    e->t = now_ns() + sc.offset;
    e->hold = 0;
  } else {
    long k = nrecords++;
    if (k == sc.fail_record) {
      rc = 1;
    } else {
      int64_t step = sc.nsteps ? sc.steps[k < sc.nsteps ? k : sc.nsteps - 1]
                               : 100000;
      int64_t base = k == 0 ? now_ns() + sc.offset : last_t;
      e->t = last_t = base + step;
      e->hold = sc.hold_from >= 0 && k >= sc.hold_from;
      const char *log = getenv("PP_FAKE_CUDA_LOG");
      FILE *f = log ? fopen(log, "a") : NULL;
      if (f) {
        fprintf(f, "record %ld %lld\n", k, (long long)(e->t - sc.offset));
        fclose(f);
      }
    }
  }
  if (rc == 0) {
    e->recorded = 1;
    e->queries = 0;
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

static int complete(fake_event *e) {
  return !e->hold && now_ns() + sc.offset >= e->t;
}

FAKE_API cu_result cuEventQuery(fake_event *e) {
  if (!e || !e->recorded)
    return e ? 0 : 400; /* never recorded: complete, as in CUDA */
  if (cur != e->ctx)
    return 201;
  pthread_mutex_lock(&lock);
  int done = complete(e) && e->queries >= sc.queries;
  e->queries++;
  pthread_mutex_unlock(&lock);
  return done ? 0 : 600;
}

FAKE_API cu_result cuEventSynchronize(fake_event *e) {
  while (cuEventQuery(e) == 600) {
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
  return 0;
}

FAKE_API cu_result cuEventElapsedTime_v2(float *ms, fake_event *a,
                                         fake_event *b) {
  if (!a || !b || !a->recorded || !b->recorded)
    return 400;
  if (cur != a->ctx || cur != b->ctx)
    return 201;
  pthread_mutex_lock(&lock);
  int done = complete(a) && complete(b);
  pthread_mutex_unlock(&lock);
  if (!done)
    return 600;
  *ms = (float)((double)(b->t - a->t) / 1e6);
  return 0;
}

#ifndef FAKE_CUDA_NO_MEM_INFO
static void mem_log(const char *line) {
  const char *log = getenv("PP_FAKE_CUDA_LOG");
  FILE *f = log ? fopen(log, "a") : NULL;
  if (f) {
    fputs(line, f);
    fclose(f);
  }
}

FAKE_API cu_result cuMemGetInfo_v2(size_t *free_b, size_t *total_b) {
  if (!free_b || !total_b)
    return 1;
  if (!cur)
    return 201;
  pthread_mutex_lock(&lock);
  long k = nmeminfo++;
  cu_result rc = sc.mem_error ? sc.mem_error : sc.mem_total ? 0 : 801;
  unsigned long long used = 0;
  char line[96];
  if (rc == 0) {
    used = sc.nmem ? sc.mem_used[k < sc.nmem ? k : sc.nmem - 1] : 0;
    if (used > sc.mem_total)
      used = sc.mem_total;
    *total_b = (size_t)sc.mem_total;
    *free_b = (size_t)(sc.mem_total - used);
    snprintf(line, sizeof line, "mem %ld %llu %llu\n", k, used, sc.mem_total);
  } else {
    snprintf(line, sizeof line, "mem %ld error %d\n", k, rc);
  }
  mem_log(line);
  pthread_mutex_unlock(&lock);
  return rc;
}
#endif
