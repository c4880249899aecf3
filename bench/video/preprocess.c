/* SPDX-License-Identifier: MIT */
/*
 * pipeprof-bench-preprocess [ROUNDS]: the video demo's preprocessing, the
 * fused pass against the three separate passes (and the scalar reference)
 * in the same run, per frame, on a deterministic frame: 1280x720 and
 * 640x360 sources to 224x224 and 128x128. Prints the median time of each
 * over ROUNDS rounds (default 7; each round times enough frames for 0.2
 * s), frames per second, the ratio separate / fused, and the bytes each
 * moves (the model of preprocess.h). The CUDA kernel too where it runs,
 * else the line saying why not. A figure, never a test.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../examples/video/preprocess.h"
#include "timing.h"

enum { ONE_REF, ONE_SEP, ONE_FUSED, ONE_CUDA };

typedef struct job {
  const vp_yuv420 *src;
  int ow, oh;
  float *out;
  void *scratch;
} job;

static int run_one(int which, const job *j) {
  char err[200];
  switch (which) {
  case ONE_REF:
    vp_prep_reference(j->src, j->ow, j->oh, &vp_norm_imagenet, j->out);
    return 0;
  case ONE_SEP:
    vp_prep_separate(j->src, j->ow, j->oh, &vp_norm_imagenet, j->out,
                     j->scratch);
    return 0;
  case ONE_FUSED:
    vp_prep_fused(j->src, j->ow, j->oh, &vp_norm_imagenet, j->out);
    return 0;
  default:
    return vp_cuda_prep(j->src, j->ow, j->oh, &vp_norm_imagenet, j->out, err,
                        sizeof err);
  }
}

/* Median seconds per frame over rounds rounds of >= 0.2 s each. */
static double per_frame(int which, const job *j, int rounds) {
  double *v = malloc(sizeof *v * (size_t)rounds);
  if (!v)
    return 0;
  for (int r = 0; r < rounds; r++) {
    int n = 0;
    double t0 = bench_now_s(), t;
    do {
      if (run_one(which, j) != 0) {
        free(v);
        return -1;
      }
      n++;
    } while ((t = bench_now_s() - t0) < 0.2);
    v[r] = t / n;
  }
  double m = bench_median(v, rounds);
  free(v);
  return m;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 7;
  if (rounds < 1 || rounds > 1000) {
    fprintf(stderr, "usage: pipeprof-bench-preprocess [ROUNDS 1..1000]\n");
    return 2;
  }
  char why[200] = "";
  int cuda = vp_cuda_open(why, sizeof why) == 0;
  static const int cases[][4] = {{1280, 720, 224, 224},
                                 {640, 360, 224, 224},
                                 {1280, 720, 128, 128},
                                 {640, 360, 128, 128}};
  printf("preprocessing per frame, median of %d rounds (YUV 4:2:0 to "
         "normalised planar float RGB)\n",
         rounds);
  printf("%-22s %10s %10s %10s %9s %12s %12s %7s\n", "source -> input",
         "reference", "separate", "fused", "sep/fused", "bytes sep",
         "bytes fused", "ratio");
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    int w = cases[k][0], h = cases[k][1], ow = cases[k][2], oh = cases[k][3];
    int cw = (w + 1) / 2, ch = (h + 1) / 2;
    uint8_t *mem = malloc((size_t)w * (size_t)h + 2 * (size_t)cw * ch);
    float *out = malloc(sizeof(float) * 3 * (size_t)ow * (size_t)oh);
    void *scratch = malloc(vp_prep_separate_scratch_bytes(w, h, ow, oh));
    if (!mem || !out || !scratch)
      return 1;
    uint32_t s = 7;
    for (size_t i = 0; i < (size_t)w * (size_t)h + 2 * (size_t)cw * ch; i++) {
      s = s * 1664525u + 1013904223u;
      mem[i] = (uint8_t)(s >> 24);
    }
    vp_yuv420 src = {
        w, h,  mem, mem + (size_t)w * h, mem + (size_t)w * h + (size_t)cw * ch,
        w, cw, cw};
    job j = {&src, ow, oh, out, scratch};
    double ref = per_frame(ONE_REF, &j, rounds < 3 ? rounds : 3);
    double sep = per_frame(ONE_SEP, &j, rounds);
    double fus = per_frame(ONE_FUSED, &j, rounds);
    uint64_t bs = vp_prep_bytes_separate(w, h, ow, oh);
    uint64_t bf = vp_prep_bytes_fused(w, h, ow, oh);
    char label[64];
    snprintf(label, sizeof label, "%dx%d -> %dx%d", w, h, ow, oh);
    printf("%-22s %8.3f ms %7.3f ms %7.3f ms %8.2fx %12llu %12llu %6.2fx\n",
           label, ref * 1e3, sep * 1e3, fus * 1e3, sep / fus,
           (unsigned long long)bs, (unsigned long long)bf,
           (double)bs / (double)bf);
    if (cuda) {
      double cu = per_frame(ONE_CUDA, &j, rounds);
      printf("%-22s CUDA kernel (copies in and out included) %.3f ms\n", "",
             cu * 1e3);
    }
    free(scratch);
    free(out);
    free(mem);
  }
  if (!cuda)
    printf("CUDA kernel: %s\n", why);
  return 0;
}
