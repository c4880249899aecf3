/* SPDX-License-Identifier: MIT */
/*
 * The video demo's CUDA preprocessing kernel (examples/video/
 * preprocess_cuda.cu) against the reference on a real GPU: random frames
 * of odd sizes and strides, down- and upscaled, within the fused pass's
 * tolerance (the kernel computes the same float arithmetic). Prints
 * "skipped: no GPU" where the kernel cannot run (no device or driver),
 * and exits 0 then.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "preprocess.h"

int main(void) {
  char err[256];
  if (vp_cuda_open(err, sizeof err) != 0) {
    printf("skipped: no GPU (%s)\n", err);
    return 0;
  }
  static const int sizes[][4] = {{1280, 720, 224, 224}, {641, 359, 224, 224},
                                 {97, 61, 128, 96}, {31, 9, 300, 3}};
  int bad = 0;
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    int w = sizes[k][0], h = sizes[k][1], ow = sizes[k][2], oh = sizes[k][3];
    int cw = (w + 1) / 2, ch = (h + 1) / 2;
    size_t bytes = (size_t)w * h + 2 * (size_t)cw * ch;
    uint8_t *mem = malloc(bytes);
    size_t n = 3 * (size_t)ow * oh;
    float *ref = malloc(n * sizeof *ref), *gpu = malloc(n * sizeof *gpu);
    if (!mem || !ref || !gpu)
      return 1;
    uint32_t s = 99 + (uint32_t)k;
    for (size_t i = 0; i < bytes; i++) {
      s = s * 1664525u + 1013904223u;
      mem[i] = (uint8_t)(s >> 24);
    }
    vp_yuv420 src = {w, h, mem, mem + (size_t)w * h,
                     mem + (size_t)w * h + (size_t)cw * ch, w, cw, cw};
    vp_prep_reference(&src, ow, oh, &vp_norm_imagenet, ref);
    if (vp_cuda_prep(&src, ow, oh, &vp_norm_imagenet, gpu, err,
                     sizeof err) != 0) {
      fprintf(stderr, "prep_cuda: %s\n", err);
      return 1;
    }
    double m = 0;
    for (size_t i = 0; i < n; i++)
      m = fmax(m, fabs((double)ref[i] - (double)gpu[i]));
    printf("%dx%d -> %dx%d: max difference from the reference %.3g "
           "(tolerance %g)\n",
           w, h, ow, oh, m, VP_FUSED_TOLERANCE);
    bad += !(m <= VP_FUSED_TOLERANCE);
    free(gpu);
    free(ref);
    free(mem);
  }
  return bad ? 1 : 0;
}
