/* SPDX-License-Identifier: MIT */
/*
 * The video demo's preprocessing (examples/video/preprocess.c): known
 * pixels by hand, the fused and the separate passes against the
 * reference on random frames of odd sizes and strides (up- and
 * downscaling) within the tolerances preprocess.h states, the bytes
 * model by hand, and the CUDA loader's "unavailable" path.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../examples/video/preprocess.h"
#include "runner.h"

typedef struct frame {
  vp_yuv420 img;
  uint8_t *mem;
} frame;

/* A w x h frame with strides pad bytes wider than the planes, filled by
 * a generator of seed (0: flat Y = 126, U = V = 128). */
static frame make(int w, int h, int pad, uint32_t seed) {
  frame f;
  int cw = (w + 1) / 2, ch = (h + 1) / 2;
  int ys = w + pad, cs = cw + pad;
  f.mem = malloc((size_t)ys * (size_t)h + 2 * (size_t)cs * (size_t)ch);
  CHECK(f.mem != NULL);
  f.img = (vp_yuv420){w,
                      h,
                      f.mem,
                      f.mem + (size_t)ys * (size_t)h,
                      f.mem + (size_t)ys * (size_t)h + (size_t)cs * (size_t)ch,
                      ys,
                      cs,
                      cs};
  uint32_t s = seed;
  size_t n = (size_t)ys * (size_t)h + 2 * (size_t)cs * (size_t)ch;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    f.mem[i] =
        seed ? (uint8_t)(s >> 24) : (i < (size_t)ys * (size_t)h ? 126 : 128);
  }
  return f;
}

static double max_diff(const float *a, const float *b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - (double)b[i]);
    m = d > m ? d : m;
  }
  return m;
}

/* Grey: Y 126, no colour: every channel (126 - 16) x 1.164383 / 255,
 * normalised, at every output pixel, in all three ways. */
PP_TEST(preprocess_flat_grey_by_hand) {
  frame f = make(33, 17, 3, 0);
  int ow = 8, oh = 5;
  size_t n = 3 * (size_t)ow * (size_t)oh;
  float *ref = malloc(n * sizeof *ref), *fu = malloc(n * sizeof *fu),
        *se = malloc(n * sizeof *se);
  void *scratch = malloc(vp_prep_separate_scratch_bytes(33, 17, ow, oh));
  CHECK(ref && fu && se && scratch);
  vp_prep_reference(&f.img, ow, oh, &vp_norm_imagenet, ref);
  vp_prep_fused(&f.img, ow, oh, &vp_norm_imagenet, fu);
  vp_prep_separate(&f.img, ow, oh, &vp_norm_imagenet, se, scratch);
  double v = 110.0 * 1.164383 / 255.0; /* 0.5023 */
  for (int c = 0; c < 3; c++) {
    double want = (v - vp_norm_imagenet.mean[c]) / vp_norm_imagenet.std[c];
    for (size_t i = 0; i < (size_t)ow * (size_t)oh; i++) {
      CHECK_NEAR(ref[(size_t)c * ow * oh + i], want, 1e-6);
      CHECK_NEAR(fu[(size_t)c * ow * oh + i], want, VP_FUSED_TOLERANCE);
      CHECK_NEAR(se[(size_t)c * ow * oh + i], want,
                 vp_separate_tolerance(&vp_norm_imagenet));
    }
  }
  free(scratch);
  free(se);
  free(fu);
  free(ref);
  free(f.mem);
}

/* 2 x 2 luma (16, 16 / 16, 235 + clamp) to 4 x 4, grey chroma, no
 * normalisation: the half-pixel rule gives source coordinates -0.25
 * (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1) per axis. */
PP_TEST(preprocess_upscale_by_hand) {
  uint8_t mem[4 + 1 + 1] = {16, 16, 16, 235, 128, 128};
  vp_yuv420 img = {2, 2, mem, mem + 4, mem + 5, 2, 1, 1};
  vp_norm id = {{0, 0, 0}, {1, 1, 1}};
  float out[3 * 16];
  vp_prep_reference(&img, 4, 4, &id, out);
  /* Y 235 is RGB (235 - 16) x 1.164383 = 255.0 after the clamp; the
   * weight of the bright corner at (x, y) is wx * wy with w = 0, .25, .75, 1 */
  static const double w[4] = {0, 0.25, 0.75, 1};
  double top = fmin(219 * 1.164383, 255.0) / 255.0;
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 4; x++)
      CHECK_NEAR(out[y * 4 + x], w[x] * w[y] * top, 1e-6);
  float fu[3 * 16];
  vp_prep_fused(&img, 4, 4, &id, fu);
  CHECK(max_diff(out, fu, 48) <= VP_FUSED_TOLERANCE);
}

/* Random frames, odd sizes, padded strides, down- and upscaling: the
 * fused pass within 1e-4 of the reference, the separate passes within
 * their two roundings. The last is wider than the fused pass's block of
 * column taps (2048). */
PP_TEST(preprocess_fused_and_separate_match_the_reference) {
  static const int sizes[][4] = {{641, 359, 224, 224},  {97, 61, 128, 96},
                                 {1280, 720, 224, 224}, {31, 9, 300, 3},
                                 {2, 2, 1, 1},          {64, 4, 4100, 2}};
  double tol_sep = vp_separate_tolerance(&vp_norm_imagenet);
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    int w = sizes[k][0], h = sizes[k][1], ow = sizes[k][2], oh = sizes[k][3];
    frame f = make(w, h, (int)k * 7 + 1, 1234u + (uint32_t)k);
    size_t n = 3 * (size_t)ow * (size_t)oh;
    float *ref = malloc(n * sizeof *ref), *fu = malloc(n * sizeof *fu),
          *se = malloc(n * sizeof *se);
    void *scratch = malloc(vp_prep_separate_scratch_bytes(w, h, ow, oh));
    CHECK(ref && fu && se && scratch);
    vp_prep_reference(&f.img, ow, oh, &vp_norm_imagenet, ref);
    vp_prep_fused(&f.img, ow, oh, &vp_norm_imagenet, fu);
    vp_prep_separate(&f.img, ow, oh, &vp_norm_imagenet, se, scratch);
    double df = max_diff(ref, fu, n), ds = max_diff(ref, se, n);
    if (df > VP_FUSED_TOLERANCE || ds > tol_sep)
      PP_FAIL("%dx%d -> %dx%d: fused %.3g (tolerance %g), separate %.3g "
              "(tolerance %.3g)",
              w, h, ow, oh, df, VP_FUSED_TOLERANCE, ds, tol_sep);
    free(scratch);
    free(se);
    free(fu);
    free(ref);
    free(f.mem);
  }
}

/* 640 x 360 to 128 x 128. Separate: read the frame (230,400 + 2 x 57,600
 * = 345,600), write and read RGB24 (691,200 each way), write and read
 * the small RGB24 (49,152 each way), write the floats (196,608). Fused:
 * the luma rows its taps touch (rows 0..359 in steps of 2.8125, two
 * taps each: all 256 distinct rows it lands on, counted by the model),
 * their chroma rows, and the floats. */
PP_TEST(preprocess_bytes_model_by_hand) {
  CHECK_EQ_U(vp_prep_bytes_separate(640, 360, 128, 128),
             345600ull + 691200 + 691200 + 49152 + 49152 + 196608);
  /* by hand: each output row oy touches source rows floor(s) and
   * floor(s) + 1 with s = (oy + .5) x 2.8125 - .5 */
  uint64_t rows = 0, crows = 0;
  unsigned char seen[360] = {0}, cseen[180] = {0};
  for (int oy = 0; oy < 128; oy++) {
    double s = (oy + 0.5) * 360.0 / 128.0 - 0.5;
    int r0 = (int)s, r1 = r0 + 1 < 360 ? r0 + 1 : 359;
    int rr[2] = {r0, r1};
    for (int i = 0; i < 2; i++) {
      rows += !seen[rr[i]];
      seen[rr[i]] = 1;
      crows += !cseen[rr[i] / 2];
      cseen[rr[i] / 2] = 1;
    }
  }
  CHECK(rows <= 256 && rows > 128);
  CHECK_EQ_U(vp_prep_bytes_fused(640, 360, 128, 128),
             rows * 640 + crows * 2 * 320 + 196608);
  CHECK(vp_prep_bytes_fused(640, 360, 128, 128) <
        vp_prep_bytes_separate(640, 360, 128, 128) / 2);
}

/* Without a CUDA device (or its library), the loader says why, one line,
 * starting "unavailable: ", and the kernel entry refuses. */
PP_TEST(preprocess_cuda_unavailable_says_why) {
  char err[256] = "";
  if (vp_cuda_open(err, sizeof err) == 0) {
    printf("# a CUDA device is here: the kernel is checked by tests/gpu\n");
    return;
  }
  CHECK(strncmp(err, "unavailable: ", 13) == 0);
  CHECK(strchr(err, '\n') == NULL);
  uint8_t mem[6] = {0};
  vp_yuv420 img = {2, 2, mem, mem + 4, mem + 5, 2, 1, 1};
  float out[3];
  err[0] = '\0';
  CHECK_EQ(vp_cuda_prep(&img, 1, 1, &vp_norm_imagenet, out, err, sizeof err),
           -1);
  CHECK(strncmp(err, "unavailable: ", 13) == 0);
  /* a library path that is not one */
  setenv("PIPEPROF_VIDEO_CUDA", "/nonexistent/libx.so", 1);
  CHECK_EQ(vp_cuda_open(err, sizeof err), -1);
  CHECK_CONTAINS(err, "/nonexistent/libx.so");
  unsetenv("PIPEPROF_VIDEO_CUDA");
}
