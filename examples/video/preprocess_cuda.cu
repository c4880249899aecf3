/* SPDX-License-Identifier: MIT */
/*
 * The demo's preprocessing as a CUDA kernel (preprocess.h defines the
 * function): one thread per output pixel computes its four taps' RGB
 * (BT.601 limited range, nearest 4:2:0 chroma, clamped), blends them
 * bilinearly and normalises, writing the three planes. Host memory in
 * and out; each calling thread keeps its own stream and buffers. Built
 * into libpipeprof-video-cuda.so, loaded by preprocess_cuda_loader.c.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

extern "C" {
#include "preprocess.h"
}

struct taps_t {
  int i0, i1;
  float f;
};

__device__ static taps_t taps(int n_src, int n_out, int o) {
  /* in double, as the reference: float would move the weights by 1e-4 */
  double s = ((double)o + 0.5) * n_src / n_out - 0.5;
  s = fmin(fmax(s, 0.0), (double)(n_src - 1));
  taps_t t;
  t.i0 = (int)s;
  t.i1 = t.i0 + 1 < n_src ? t.i0 + 1 : n_src - 1;
  t.f = (float)(s - t.i0);
  return t;
}

__device__ static float3 rgb_at(const uint8_t *y, const uint8_t *u,
                                const uint8_t *v, int ys, int cs, int px,
                                int py) {
  float Y = 1.164383f * ((float)y[py * ys + px] - 16.0f);
  float U = (float)u[(py / 2) * cs + px / 2] - 128.0f;
  float V = (float)v[(py / 2) * cs + px / 2] - 128.0f;
  float3 c;
  c.x = fminf(fmaxf(Y + 1.596027f * V, 0.0f), 255.0f);
  c.y = fminf(fmaxf(Y - 0.391762f * U - 0.812968f * V, 0.0f), 255.0f);
  c.z = fminf(fmaxf(Y + 2.017232f * U, 0.0f), 255.0f);
  return c;
}

__global__ void prep_kernel(const uint8_t *y, const uint8_t *u,
                            const uint8_t *v, int w, int h, int ow, int oh,
                            float3 scale, float3 bias, float *out) {
  int ox = blockIdx.x * blockDim.x + threadIdx.x;
  int oy = blockIdx.y * blockDim.y + threadIdx.y;
  if (ox >= ow || oy >= oh)
    return;
  int cs = (w + 1) / 2;
  taps_t tx = taps(w, ow, ox), ty = taps(h, oh, oy);
  float3 p00 = rgb_at(y, u, v, w, cs, tx.i0, ty.i0);
  float3 p01 = rgb_at(y, u, v, w, cs, tx.i1, ty.i0);
  float3 p10 = rgb_at(y, u, v, w, cs, tx.i0, ty.i1);
  float3 p11 = rgb_at(y, u, v, w, cs, tx.i1, ty.i1);
  size_t plane = (size_t)ow * oh, at = (size_t)oy * ow + ox;
#define BLEND(c)                                                               \
  ((p00.c + tx.f * (p01.c - p00.c)) +                                          \
   ty.f *                                                                      \
       ((p10.c + tx.f * (p11.c - p10.c)) - (p00.c + tx.f * (p01.c - p00.c))))
  out[at] = BLEND(x) * scale.x + bias.x;
  out[plane + at] = BLEND(y) * scale.y + bias.y;
  out[2 * plane + at] = BLEND(z) * scale.z + bias.z;
#undef BLEND
}

/* A thread's stream and device buffers, grown as needed. */
static thread_local cudaStream_t stream;
static thread_local uint8_t *d_src;
static thread_local float *d_out;
static thread_local size_t src_cap, out_cap;

static int fail(char *err, size_t errlen, const char *what, cudaError_t e) {
  snprintf(err, errlen, "%s: %s", what, cudaGetErrorString(e));
  return -1;
}

extern "C" int vp_cuda_init(char *err, size_t errlen) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    snprintf(err, errlen, "unavailable: no CUDA device (%s)",
             e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return -1;
  }
  return 0;
}

extern "C" int vp_cuda_prep_impl(const vp_yuv420 *src, int ow, int oh,
                                 const vp_norm *n, float *out, char *err,
                                 size_t errlen) {
  cudaError_t e;
  if (!stream &&
      (e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)))
    return fail(err, errlen, "cudaStreamCreate", e);
  int w = src->w, h = src->h, cw = (w + 1) / 2, ch = (h + 1) / 2;
  size_t sb = (size_t)w * h + 2 * (size_t)cw * ch;
  size_t ob = sizeof(float) * 3 * (size_t)ow * oh;
  if (sb > src_cap) {
    cudaFree(d_src);
    if ((e = cudaMalloc((void **)&d_src, sb)))
      return src_cap = 0, fail(err, errlen, "cudaMalloc", e);
    src_cap = sb;
  }
  if (ob > out_cap) {
    cudaFree(d_out);
    if ((e = cudaMalloc((void **)&d_out, ob)))
      return out_cap = 0, fail(err, errlen, "cudaMalloc", e);
    out_cap = ob;
  }
  uint8_t *dy = d_src, *du = dy + (size_t)w * h, *dv = du + (size_t)cw * ch;
  if ((e = cudaMemcpy2DAsync(dy, w, src->y, src->y_stride, w, h,
                             cudaMemcpyHostToDevice, stream)) ||
      (e = cudaMemcpy2DAsync(du, cw, src->u, src->u_stride, cw, ch,
                             cudaMemcpyHostToDevice, stream)) ||
      (e = cudaMemcpy2DAsync(dv, cw, src->v, src->v_stride, cw, ch,
                             cudaMemcpyHostToDevice, stream)))
    return fail(err, errlen, "cudaMemcpy2DAsync", e);
  float3 scale, bias;
  scale.x = 1.0f / (255.0f * n->std[0]);
  scale.y = 1.0f / (255.0f * n->std[1]);
  scale.z = 1.0f / (255.0f * n->std[2]);
  bias.x = -n->mean[0] / n->std[0];
  bias.y = -n->mean[1] / n->std[1];
  bias.z = -n->mean[2] / n->std[2];
  dim3 block(32, 8), grid((ow + 31) / 32, (oh + 7) / 8);
  prep_kernel<<<grid, block, 0, stream>>>(dy, du, dv, w, h, ow, oh, scale, bias,
                                          d_out);
  if ((e = cudaGetLastError()))
    return fail(err, errlen, "kernel launch", e);
  if ((e = cudaMemcpyAsync(out, d_out, ob, cudaMemcpyDeviceToHost, stream)) ||
      (e = cudaStreamSynchronize(stream)))
    return fail(err, errlen, "cudaMemcpyAsync", e);
  return 0;
}
