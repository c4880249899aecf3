// SPDX-License-Identifier: MIT
// GPU check of CUPTI activity tracing (run where a GPU is present): known
// kernels on two streams, pinned and pageable copies in both directions,
// traced by pipeprof in-process (PIPEPROF_CUDA path) and compared with
// cudaEvent timings (kernel durations within 5%) and with what was asked
// for (copy bytes and directions exact). Then the overhead of tracing on a
// loop of small kernels, with vs without, printed. Without a GPU it prints
// "skipped: no GPU" and exits 0.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern "C" {
#include "analyze/gpu_activity.h"
#include "model/reader.h"
}
#include "pipeprof.h"

__global__ void spin_kernel(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__global__ void tiny_kernel(float *p) { p[threadIdx.x] += 1.0f; }

static int fails;
#define EXPECT(c, ...)                                                        \
  do {                                                                        \
    if (!(c)) {                                                               \
      fails++;                                                                \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                             \
      printf(__VA_ARGS__);                                                    \
      printf("\n");                                                           \
    }                                                                         \
  } while (0)

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double small_loop(float *d, int n) {
  double t0 = now_s();
  for (int i = 0; i < n; i++)
    tiny_kernel<<<1, 32>>>(d);
  cudaDeviceSynchronize();
  return (now_s() - t0) / n * 1e9;
}

int main(void) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("skipped: no GPU\n");
    return 0;
  }
  float *d = NULL;
  cudaMalloc(&d, 1 << 24);
  double base = small_loop(d, 20000); // warm and untraced

  char path[256];
  snprintf(path, sizeof path, "/tmp/pp-gpu-cupti-%d.pptrace", (int)getpid());
  // The in-process path users take: PIPEPROF=1 PIPEPROF_CUDA=1.
  setenv("PIPEPROF", "1", 1);
  setenv("PIPEPROF_OUT", path, 1);
  setenv("PIPEPROF_CUDA", "1", 1);
  if (pp_init_from_env() != PP_OK) {
    printf("FAIL: profiling did not start: %s\n", pp_last_error());
    return 1;
  }
  cudaStream_t s[2];
  cudaStreamCreate(&s[0]);
  cudaStreamCreate(&s[1]);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  const long long cycles[2] = {20000000LL, 5000000LL};
  float ev_ms[2][5];
  for (int r = 0; r < 5; r++)
    for (int k = 0; k < 2; k++) {
      cudaEventRecord(e0, s[k]);
      spin_kernel<<<1, 1, 0, s[k]>>>(cycles[k]);
      cudaEventRecord(e1, s[k]);
      cudaEventSynchronize(e1);
      cudaEventElapsedTime(&ev_ms[k][r], e0, e1);
    }
  const size_t nb = 8 << 20;
  void *pinned = NULL, *pageable = malloc(nb);
  cudaMallocHost(&pinned, nb);
  memset(pageable, 1, nb);
  cudaMemcpy(d, pinned, nb, cudaMemcpyHostToDevice);
  cudaMemcpy(d, pageable, nb, cudaMemcpyHostToDevice);
  cudaMemcpy(pinned, d, nb / 2, cudaMemcpyDeviceToHost);
  cudaMemcpy(pageable, d, nb / 4, cudaMemcpyDeviceToHost);
  cudaDeviceSynchronize();
  double traced = small_loop(d, 20000);
  pp_shutdown();

  pp_trace t;
  pp_analysis a = {};
  char err[256];
  if (pp_trace_read_file(path, &t, err, sizeof err) != 0 || pp_analyze(&t, &a)) {
    printf("FAIL: %s\n", err);
    return 1;
  }
  if (!pp_trace_meta(&t, "cuda.tracing")) {
    const char *why = pp_trace_meta(&t, "unavailable.cuda");
    printf("FAIL: CUDA tracing unavailable: %s\n", why ? why : "?");
    return 1;
  }
  // kernel durations vs cudaEvent (events bracket the kernel: slightly longer)
  for (int k = 0; k < 2; k++) {
    double ev = 0, cu = 0;
    int n = 0;
    for (int r = 0; r < 5; r++)
      ev += ev_ms[k][r] * 1e6 / 5;
    // match by duration class: the k-th kernel of each (stream) pair
    size_t seen = 0;
    for (size_t i = 0; i < t.cuda.nkernels; i++) {
      const pp_cuda_kernel *kk = &t.cuda.kernels[i];
      if (!strstr(pp_cuda_name(&t.cuda, kk->name), "spin_kernel"))
        continue;
      if ((seen++ % 2) == (size_t)k) {
        cu += (double)(kk->end - kk->start);
        n++;
      }
    }
    EXPECT(n == 5, "kernel %d: %d records", k, n);
    cu /= n ? n : 1;
    printf("spin kernel %d: cupti %.0f ns, cudaEvent %.0f ns (%.2f%%)\n", k,
           cu, ev, 100.0 * (cu - ev) / ev);
    EXPECT(cu > ev * 0.95 && cu < ev * 1.05, "kernel %d off by > 5%%", k);
  }
  // copies: bytes, direction and host memory kind exact
  static const struct {
    unsigned kind, host;
    size_t bytes;
  } want[4] = {{1, 2, nb}, {1, 1, nb}, {2, 2, nb / 2}, {2, 1, nb / 4}};
  size_t got = 0;
  for (size_t i = 0; i < t.cuda.nmemcpys && got < 4; i++) {
    const pp_cuda_memcpy *m = &t.cuda.memcpys[i];
    if (m->bytes < nb / 4)
      continue; // pageable copies may be staged in chunks on some drivers
    unsigned host = m->copy_kind == 1 ? m->src_kind : m->dst_kind;
    EXPECT(m->copy_kind == want[got].kind && host == want[got].host &&
               m->bytes == want[got].bytes,
           "copy %zu: kind %u host %u bytes %llu", got, m->copy_kind, host,
           (unsigned long long)m->bytes);
    got++;
  }
  EXPECT(got == 4, "%zu of 4 copies found", got);
  EXPECT(a.cuda && a.cuda->dropped == 0, "dropped records");
  printf("tracing overhead, small kernel loop: %.0f ns/launch untraced, %.0f "
         "ns/launch traced (%+.1f%%)\n",
         base, traced, 100.0 * (traced - base) / base);
  printf("kernels %zu, copies %zu, API calls %zu, dropped %llu\n",
         t.cuda.nkernels, t.cuda.nmemcpys, t.cuda.napis,
         (unsigned long long)t.cuda.dropped);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  remove(path);
  printf(fails ? "FAILED\n" : "ok\n");
  return fails ? 1 : 0;
}
