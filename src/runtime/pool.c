/* SPDX-License-Identifier: MIT */
/*
 * Memory pools of fixed-size blocks (pipeprof/runtime.h,
 * docs/runtime.md): one allocation cut into blocks, a stack of free
 * blocks under a mutex, and a condition for threads waiting for one.
 * Pinned and device memory come from the CUDA runtime, loaded with dlopen
 * on first use.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../internal.h"
#include "common.h"
#include "pipeprof/runtime.h"

#define ALIGN 256

/* ---- the CUDA runtime, loaded at run time -------------------------------- */

typedef int (*cuda_host_alloc_fn)(void **p, size_t n, unsigned flags);
typedef int (*cuda_free_fn)(void *p);
typedef int (*cuda_malloc_fn)(void **p, size_t n);
typedef int (*cuda_set_device_fn)(int dev);
typedef const char *(*cuda_error_string_fn)(int err);

static struct {
  pthread_once_t once;
  void *lib;
  char why[128];
  cuda_host_alloc_fn host_alloc;
  cuda_free_fn free_host, free_dev;
  cuda_malloc_fn malloc_dev;
  cuda_set_device_fn set_device;
  cuda_error_string_fn error_string;
} rt = {PTHREAD_ONCE_INIT};

static void load_cudart(void) {
  const char *env = getenv("PIPEPROF_LIBCUDART");
  static const char *const names[] = {"libcudart.so", "libcudart.so.13",
                                      "libcudart.so.12", "libcudart.so.11.0"};
  if (env && *env)
    rt.lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
  for (size_t i = 0; !rt.lib && !(env && *env) && i < 4; i++)
    rt.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!rt.lib) {
    snprintf(rt.why, sizeof rt.why, "no CUDA runtime (libcudart: %.80s)",
             dlerror());
    return;
  }
  *(void **)&rt.host_alloc = dlsym(rt.lib, "cudaHostAlloc");
  *(void **)&rt.free_host = dlsym(rt.lib, "cudaFreeHost");
  *(void **)&rt.malloc_dev = dlsym(rt.lib, "cudaMalloc");
  *(void **)&rt.free_dev = dlsym(rt.lib, "cudaFree");
  *(void **)&rt.set_device = dlsym(rt.lib, "cudaSetDevice");
  *(void **)&rt.error_string = dlsym(rt.lib, "cudaGetErrorString");
  if (!rt.host_alloc || !rt.free_host || !rt.malloc_dev || !rt.free_dev ||
      !rt.set_device) {
    snprintf(rt.why, sizeof rt.why,
             "libcudart lacks cudaHostAlloc, "
             "cudaMalloc or cudaSetDevice");
    rt.host_alloc = NULL;
  }
}

/* The CUDA runtime's allocation: 0, or -1 with a reason in why. */
static int cuda_alloc(pp_rt_mem kind, int device, size_t n, void **out,
                      char *why, size_t wn) {
  pthread_once(&rt.once, load_cudart);
  if (!rt.host_alloc) {
    snprintf(why, wn, "%s", rt.why);
    return -1;
  }
  int e = rt.set_device(kind == PP_RT_MEM_DEVICE ? device : 0);
  if (e == 0)
    e = kind == PP_RT_MEM_DEVICE ? rt.malloc_dev(out, n)
                                 : rt.host_alloc(out, n, 0);
  if (e != 0) {
    snprintf(why, wn, "%s failed: CUDA error %d (%.80s)",
             kind == PP_RT_MEM_DEVICE ? "cudaMalloc" : "cudaHostAlloc", e,
             rt.error_string ? rt.error_string(e) : "?");
    return -1;
  }
  return 0;
}

/* ---- the pool ------------------------------------------------------------ */

struct pp_rt_pool {
  char name[64];
  pp_rt_mem kind;
  int device; /* for the report: PP_MEM_HOST for host memory */
  unsigned char *base;
  size_t block_size, blocks;
  void **free_stack;
  size_t nfree, high_water;
  uint64_t gets, waits;
  char reason[160];
  pthread_mutex_t m;
  pthread_cond_t freed;
};

pp_rt_pool *pp_rt_pool_new(const char *name, pp_rt_mem kind, int device,
                           size_t block_size, size_t blocks) {
  if (block_size < 1 || blocks < 1 || (unsigned)kind > PP_RT_MEM_DEVICE ||
      block_size > ((size_t)1 << 40) / blocks ||
      (kind == PP_RT_MEM_DEVICE && (device < 0 || device > 254)))
    return NULL;
  size_t stride = (block_size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
  size_t total = stride * blocks;
  pp_rt_pool *p = calloc(1, sizeof *p);
  if (!p || !(p->free_stack = malloc(blocks * sizeof(void *)))) {
    free(p);
    return NULL;
  }
  snprintf(p->name, sizeof p->name, "%s", name ? name : "pool");
  p->kind = kind;
  p->device = kind == PP_RT_MEM_DEVICE ? device : PP_MEM_HOST;
  void *mem = NULL;
  if (kind != PP_RT_MEM_HOST &&
      cuda_alloc(kind, device, total, &mem, p->reason, sizeof p->reason)) {
    if (kind == PP_RT_MEM_DEVICE) {
      pp__rt_set_error("pool %s: %s", p->name, p->reason);
      free(p->free_stack);
      free(p);
      return NULL;
    }
    p->kind = PP_RT_MEM_HOST; /* pinned asked for: pageable, and why */
  }
  if (p->kind == PP_RT_MEM_HOST && !(mem = aligned_alloc(ALIGN, total))) {
    free(p->free_stack);
    free(p);
    return NULL;
  }
  p->base = mem;
  p->block_size = stride;
  p->blocks = blocks;
  for (size_t i = 0; i < blocks; i++)
    p->free_stack[i] = p->base + (blocks - 1 - i) * stride;
  p->nfree = blocks;
  pthread_mutex_init(&p->m, NULL);
  pp__rt_cond_init(&p->freed);
  pp_mem_reserve(p->name, (uint64_t)total, p->device);
  return p;
}

int pp_rt_pool_get(pp_rt_pool *p, void **block, int64_t timeout_ns) {
  if (!p || !block)
    return PP_EINVAL;
  int64_t deadline = pp__rt_deadline(timeout_ns);
  pthread_mutex_lock(&p->m);
  p->gets++;
  int rc = PP_OK;
  if (!p->nfree) {
    p->waits++;
    while (!p->nfree && !(rc = pp__rt_no_wait(timeout_ns, deadline)))
      pp__rt_wait(&p->freed, &p->m, deadline);
  }
  if (rc == PP_OK) {
    *block = p->free_stack[--p->nfree];
    size_t used = p->blocks - p->nfree;
    if (used > p->high_water)
      p->high_water = used;
    pp_mem_alloc(*block, p->block_size, p->name, p->device);
  }
  pthread_mutex_unlock(&p->m);
  return rc;
}

void pp_rt_pool_put(pp_rt_pool *p, void *block) {
  if (!p || !block)
    return;
  pthread_mutex_lock(&p->m);
  pp_mem_free(block, p->name, p->device);
  if (p->nfree < p->blocks)
    p->free_stack[p->nfree++] = block;
  pthread_cond_signal(&p->freed);
  pthread_mutex_unlock(&p->m);
}

void pp_rt_pool_info_get(pp_rt_pool *p, pp_rt_pool_info *o) {
  memset(o, 0, sizeof *o);
  if (!p)
    return;
  pthread_mutex_lock(&p->m);
  o->kind = p->kind;
  o->block_size = p->block_size;
  o->blocks = p->blocks;
  o->in_use = p->blocks - p->nfree;
  o->high_water = p->high_water;
  o->gets = p->gets;
  o->waits = p->waits;
  snprintf(o->reason, sizeof o->reason, "%s", p->reason);
  pthread_mutex_unlock(&p->m);
}

void pp_rt_pool_free(pp_rt_pool *p) {
  if (!p)
    return;
  if (p->kind == PP_RT_MEM_HOST)
    free(p->base);
  else if (p->kind == PP_RT_MEM_PINNED)
    rt.free_host(p->base);
  else
    rt.free_dev(p->base);
  pp_mem_reserve(p->name, 0, p->device);
  pthread_mutex_destroy(&p->m);
  pthread_cond_destroy(&p->freed);
  free(p->free_stack);
  free(p);
}
