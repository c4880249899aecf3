// SPDX-License-Identifier: MIT
//
// GPU test of pipeprof's GPU zones on real hardware: launches a known
// kernel (a fixed number of dependent multiply-adds per thread, about a
// millisecond on current GPUs) in a loop, each launch between
// pp_gpu_zone_begin and pp_gpu_zone_end and between a pair of the
// program's own CUDA events, then checks that the durations pipeprof
// wrote agree with cudaEventElapsedTime within 5% and prints the
// agreement. It also checks the device memory pipeprof sampled with
// cuMemGetInfo (counter cuda<dev>.mem_used_bytes, last sample) against
// cudaMemGetInfo called by the program itself after pipeprof's last
// sample, within 8 MiB (another process allocating meanwhile on a shared
// GPU would break that), and the total exactly. Without a GPU it prints
// "skipped: no GPU" and exits 0.
//
// Usage: pp-gpu-zones [OUT.pptrace]
#include <cuda_runtime.h>
#include <pipeprof.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "gpu_check.h"

__global__ void spin(float *x, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  for (int k = 0; k < iters; k++)
    v = v * 0.999999f + 1e-6f;
  x[i] = v;
}

#define CK(call)                                                          \
  do {                                                                    \
    cudaError_t e_ = (call);                                              \
    if (e_ != cudaSuccess) {                                              \
      std::fprintf(stderr, "gpu_zones: %s: %s\n", #call,                  \
                   cudaGetErrorString(e_));                               \
      return 1;                                                           \
    }                                                                     \
  } while (0)

int main(int argc, char **argv) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("skipped: no GPU\n");
    return 0;
  }
  const char *out = argc > 1 ? argv[1] : "gpu_zones.pptrace";
  enum { N = 50, BLOCKS = 256, THREADS = 256 };
  CK(cudaSetDevice(0));
  float *x;
  CK(cudaMalloc(&x, sizeof(float) * BLOCKS * THREADS));
  CK(cudaMemset(x, 0, sizeof(float) * BLOCKS * THREADS));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  cudaEvent_t e0[N], e1[N];
  for (int i = 0; i < N; i++) {
    CK(cudaEventCreate(&e0[i]));
    CK(cudaEventCreate(&e1[i]));
  }
  spin<<<BLOCKS, THREADS, 0, s>>>(x, 1000); // warm up (module load)
  CK(cudaStreamSynchronize(s));

  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = out;
  cfg.process_name = "gpu_zones";
  int rc = pp_init(&cfg);
  if (rc != PP_OK) {
    std::fprintf(stderr, "gpu_zones: pp_init: %s\n", pp_last_error());
    return 1;
  }
  for (int i = 0; i < N; i++) {
    PP_ZONE("launch");
    // Iterations vary so that the durations differ from zone to zone.
    int iters = 20000 + 4000 * (i % 5);
    CK(cudaEventRecord(e0[i], s));
    PP_GPU_ZONE_BEGIN(z, s, "spin");
    spin<<<BLOCKS, THREADS, 0, s>>>(x, iters);
    PP_GPU_ZONE_END(z);
    CK(cudaEventRecord(e1[i], s));
  }
  CK(cudaStreamSynchronize(s));
  double ref[N];
  for (int i = 0; i < N; i++) {
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0[i], e1[i]));
    ref[i] = ms;
  }
  // Nothing allocates device memory from here on: wait for a sample of the
  // writer's (one about every second), then read the figure ourselves.
  struct timespec nap = {1, 200000000};
  nanosleep(&nap, NULL);
  int dev = 0;
  size_t free_b = 0, total_b = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaMemGetInfo(&free_b, &total_b));
  if (pp_shutdown() != PP_OK) {
    std::fprintf(stderr, "gpu_zones: pp_shutdown: %s\n", pp_last_error());
    return 1;
  }
  rc = pp_gpu_check(out, ref, N, 0.05);
  if (pp_gpu_mem_check(out, dev, (double)(total_b - free_b), (double)total_b,
                       8.0 * 1024 * 1024) != 0)
    rc = 1;
  return rc;
}
