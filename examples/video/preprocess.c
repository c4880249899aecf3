/* SPDX-License-Identifier: MIT */
/*
 * The demo's preprocessing (preprocess.h): the reference, the three
 * separate passes and the fused pass. The fused pass works on chunks of
 * up to CHUNK output pixels of a row: a gather loop loads the 12 source
 * samples of each output pixel (2 x 2 luma taps, the chroma of each) into
 * small contiguous arrays, then a straight-line loop over the chunk
 * converts, clamps, blends and normalises; GCC vectorises that loop
 * (-O3; checked with -fopt-info-vec, docs/internals/preprocess.md).
 */
#include "preprocess.h"

#include <stdlib.h>
#include <string.h>

#define KY 1.164383
#define KRV 1.596027
#define KGU 0.391762
#define KGV 0.812968
#define KBU 2.017232

enum { CHUNK = 256, TAPS = 2048 }; /* TAPS: columns whose taps are kept */

const vp_norm vp_norm_imagenet = {{0.485f, 0.456f, 0.406f},
                                  {0.229f, 0.224f, 0.225f}};

double vp_separate_tolerance(const vp_norm *n) {
  double s = n->std[0];
  for (int c = 1; c < 3; c++)
    s = n->std[c] < s ? n->std[c] : s;
  return 1.0 / 255.0 / s + 1e-5;
}

/* The taps of output o of n_out over n_src: i0, i1 and the weight of i1. */
static void taps(int n_src, int n_out, int o, int *i0, int *i1, double *f) {
  double s = ((double)o + 0.5) * (double)n_src / (double)n_out - 0.5;
  if (s < 0)
    s = 0;
  if (s > n_src - 1)
    s = n_src - 1;
  *i0 = (int)s;
  *i1 = *i0 + 1 < n_src ? *i0 + 1 : n_src - 1;
  *f = s - *i0;
}

static double clampd(double v) { return v < 0 ? 0 : v > 255 ? 255 : v; }

/* ---- the reference ---------------------------------------------------- */

static void rgb_at(const vp_yuv420 *s, int x, int y, double rgb[3]) {
  double Y = s->y[(size_t)y * (size_t)s->y_stride + (size_t)x] - 16.0;
  double U =
      s->u[(size_t)(y / 2) * (size_t)s->u_stride + (size_t)(x / 2)] - 128.0;
  double V =
      s->v[(size_t)(y / 2) * (size_t)s->v_stride + (size_t)(x / 2)] - 128.0;
  rgb[0] = clampd(KY * Y + KRV * V);
  rgb[1] = clampd(KY * Y - KGU * U - KGV * V);
  rgb[2] = clampd(KY * Y + KBU * U);
}

void vp_prep_reference(const vp_yuv420 *src, int out_w, int out_h,
                       const vp_norm *n, float *out) {
  size_t plane = (size_t)out_w * (size_t)out_h;
  for (int oy = 0; oy < out_h; oy++) {
    int y0, y1;
    double fy;
    taps(src->h, out_h, oy, &y0, &y1, &fy);
    for (int ox = 0; ox < out_w; ox++) {
      int x0, x1;
      double fx;
      taps(src->w, out_w, ox, &x0, &x1, &fx);
      double p00[3], p01[3], p10[3], p11[3];
      rgb_at(src, x0, y0, p00);
      rgb_at(src, x1, y0, p01);
      rgb_at(src, x0, y1, p10);
      rgb_at(src, x1, y1, p11);
      for (int c = 0; c < 3; c++) {
        double top = p00[c] + fx * (p01[c] - p00[c]);
        double bot = p10[c] + fx * (p11[c] - p10[c]);
        double v = (top + fy * (bot - top)) / 255.0;
        out[c * plane + (size_t)oy * (size_t)out_w + (size_t)ox] =
            (float)((v - n->mean[c]) / n->std[c]);
      }
    }
  }
}

/* ---- the fused pass ------------------------------------------------------ */

/* The 12 samples of each output pixel of a chunk, as floats. */
typedef struct gathered {
  float y00[CHUNK], y01[CHUNK], y10[CHUNK], y11[CHUNK];
  float u00[CHUNK], u01[CHUNK], u10[CHUNK], u11[CHUNK];
  float v00[CHUNK], v01[CHUNK], v10[CHUNK], v11[CHUNK];
} gathered;

static inline float clampf(float v) {
  v = v < 0.0f ? 0.0f : v;
  return v > 255.0f ? 255.0f : v;
}

/* Convert, clamp, blend and normalise n pixels (vectorised). */
static void fused_chunk(const gathered *restrict g, const float *restrict fx,
                        float fy, const float *restrict scale,
                        const float *restrict bias, float *restrict r,
                        float *restrict gr, float *restrict b, int n) {
  const float ky = (float)KY, krv = (float)KRV, kgu = (float)KGU,
              kgv = (float)KGV, kbu = (float)KBU;
  for (int j = 0; j < n; j++) {
    float Y00 = ky * (g->y00[j] - 16.0f), Y01 = ky * (g->y01[j] - 16.0f);
    float Y10 = ky * (g->y10[j] - 16.0f), Y11 = ky * (g->y11[j] - 16.0f);
    float U00 = g->u00[j] - 128.0f, U01 = g->u01[j] - 128.0f;
    float U10 = g->u10[j] - 128.0f, U11 = g->u11[j] - 128.0f;
    float V00 = g->v00[j] - 128.0f, V01 = g->v01[j] - 128.0f;
    float V10 = g->v10[j] - 128.0f, V11 = g->v11[j] - 128.0f;
    float r00 = clampf(Y00 + krv * V00), r01 = clampf(Y01 + krv * V01);
    float r10 = clampf(Y10 + krv * V10), r11 = clampf(Y11 + krv * V11);
    float g00 = clampf(Y00 - kgu * U00 - kgv * V00);
    float g01 = clampf(Y01 - kgu * U01 - kgv * V01);
    float g10 = clampf(Y10 - kgu * U10 - kgv * V10);
    float g11 = clampf(Y11 - kgu * U11 - kgv * V11);
    float b00 = clampf(Y00 + kbu * U00), b01 = clampf(Y01 + kbu * U01);
    float b10 = clampf(Y10 + kbu * U10), b11 = clampf(Y11 + kbu * U11);
    float w = fx[j];
    float rt = r00 + w * (r01 - r00), rb = r10 + w * (r11 - r10);
    float gt = g00 + w * (g01 - g00), gb = g10 + w * (g11 - g10);
    float bt = b00 + w * (b01 - b00), bb = b10 + w * (b11 - b10);
    r[j] = (rt + fy * (rb - rt)) * scale[0] + bias[0];
    gr[j] = (gt + fy * (gb - gt)) * scale[1] + bias[1];
    b[j] = (bt + fy * (bb - bt)) * scale[2] + bias[2];
  }
}

/* Columns c0 .. c0 + n - 1 of every output row (n <= TAPS). */
static void fused_columns(const vp_yuv420 *src, int out_w, int out_h, int c0,
                          int n, const float *scale, const float *bias,
                          float *out) {
  int x0[TAPS], x1[TAPS];
  float fx[TAPS];
  for (int j = 0; j < n; j++) {
    double f;
    taps(src->w, out_w, c0 + j, &x0[j], &x1[j], &f);
    fx[j] = (float)f;
  }
  gathered g;
  size_t plane = (size_t)out_w * (size_t)out_h;
  for (int oy = 0; oy < out_h; oy++) {
    int y0, y1;
    double fyd;
    taps(src->h, out_h, oy, &y0, &y1, &fyd);
    const uint8_t *Y0 = src->y + (size_t)y0 * (size_t)src->y_stride;
    const uint8_t *Y1 = src->y + (size_t)y1 * (size_t)src->y_stride;
    const uint8_t *U0 = src->u + (size_t)(y0 / 2) * (size_t)src->u_stride;
    const uint8_t *U1 = src->u + (size_t)(y1 / 2) * (size_t)src->u_stride;
    const uint8_t *V0 = src->v + (size_t)(y0 / 2) * (size_t)src->v_stride;
    const uint8_t *V1 = src->v + (size_t)(y1 / 2) * (size_t)src->v_stride;
    float *ro = out + (size_t)oy * (size_t)out_w + (size_t)c0;
    for (int cs = 0; cs < n; cs += CHUNK) {
      int cn = n - cs < CHUNK ? n - cs : CHUNK;
      for (int j = 0; j < cn; j++) {
        int a = x0[cs + j], b = x1[cs + j], ca = a / 2, cb = b / 2;
        g.y00[j] = Y0[a];
        g.y01[j] = Y0[b];
        g.y10[j] = Y1[a];
        g.y11[j] = Y1[b];
        g.u00[j] = U0[ca];
        g.u01[j] = U0[cb];
        g.u10[j] = U1[ca];
        g.u11[j] = U1[cb];
        g.v00[j] = V0[ca];
        g.v01[j] = V0[cb];
        g.v10[j] = V1[ca];
        g.v11[j] = V1[cb];
      }
      fused_chunk(&g, fx + cs, (float)fyd, scale, bias, ro + cs,
                  ro + plane + cs, ro + 2 * plane + cs, cn);
    }
  }
}

void vp_prep_fused(const vp_yuv420 *src, int out_w, int out_h, const vp_norm *n,
                   float *out) {
  float scale[3], bias[3];
  for (int c = 0; c < 3; c++) {
    scale[c] = (float)(1.0 / (255.0 * n->std[c]));
    bias[c] = (float)(-n->mean[c] / n->std[c]);
  }
  /* the column taps of TAPS columns at a time: any width, no allocation */
  for (int c0 = 0; c0 < out_w; c0 += TAPS)
    fused_columns(src, out_w, out_h, c0, out_w - c0 < TAPS ? out_w - c0 : TAPS,
                  scale, bias, out);
}

/* ---- three separate passes ---------------------------------------------- */

/* The two images, then the resize's column taps (x0, x1, weight). */
static size_t images_bytes(int w, int h, int out_w, int out_h) {
  size_t b = 3 * ((size_t)w * (size_t)h + (size_t)out_w * (size_t)out_h);
  return (b + 7) / 8 * 8;
}

size_t vp_prep_separate_scratch_bytes(int w, int h, int out_w, int out_h) {
  return images_bytes(w, h, out_w, out_h) +
         (size_t)out_w * (2 * sizeof(int) + sizeof(float));
}

static uint8_t round8(float v) { return (uint8_t)(clampf(v) + 0.5f); }

void vp_prep_separate(const vp_yuv420 *src, int out_w, int out_h,
                      const vp_norm *n, float *out, void *scratch) {
  uint8_t *rgb = scratch;
  uint8_t *small = rgb + 3 * (size_t)src->w * (size_t)src->h;
  int *x0 = (int *)(void *)(rgb + images_bytes(src->w, src->h, out_w, out_h));
  int *x1 = x0 + out_w;
  float *fx = (float *)(void *)(x1 + out_w);
  /* 1: colour conversion, full size, RGB24 */
  for (int y = 0; y < src->h; y++) {
    const uint8_t *Yr = src->y + (size_t)y * (size_t)src->y_stride;
    const uint8_t *Ur = src->u + (size_t)(y / 2) * (size_t)src->u_stride;
    const uint8_t *Vr = src->v + (size_t)(y / 2) * (size_t)src->v_stride;
    uint8_t *o = rgb + 3 * (size_t)y * (size_t)src->w;
    for (int x = 0; x < src->w; x++) {
      float Y = (float)KY * ((float)Yr[x] - 16.0f);
      float U = (float)Ur[x / 2] - 128.0f, V = (float)Vr[x / 2] - 128.0f;
      o[3 * x] = round8(Y + (float)KRV * V);
      o[3 * x + 1] = round8(Y - (float)KGU * U - (float)KGV * V);
      o[3 * x + 2] = round8(Y + (float)KBU * U);
    }
  }
  /* 2: bilinear resize, RGB24 (the column taps computed once) */
  for (int ox = 0; ox < out_w; ox++) {
    double f;
    taps(src->w, out_w, ox, &x0[ox], &x1[ox], &f);
    fx[ox] = (float)f;
  }
  for (int oy = 0; oy < out_h; oy++) {
    int y0, y1;
    double fy;
    taps(src->h, out_h, oy, &y0, &y1, &fy);
    const uint8_t *r0 = rgb + 3 * (size_t)y0 * (size_t)src->w;
    const uint8_t *r1 = rgb + 3 * (size_t)y1 * (size_t)src->w;
    for (int ox = 0; ox < out_w; ox++) {
      int a = 3 * x0[ox], z = 3 * x1[ox];
      for (int c = 0; c < 3; c++) {
        float t = r0[a + c] + fx[ox] * (r0[z + c] - r0[a + c]);
        float b = r1[a + c] + fx[ox] * (r1[z + c] - r1[a + c]);
        small[3 * ((size_t)oy * (size_t)out_w + (size_t)ox) + (size_t)c] =
            round8(t + (float)fy * (b - t));
      }
    }
  }
  /* 3: normalise into planar floats */
  size_t plane = (size_t)out_w * (size_t)out_h;
  for (int c = 0; c < 3; c++) {
    float scale = 1.0f / (255.0f * n->std[c]), bias = -n->mean[c] / n->std[c];
    for (size_t i = 0; i < plane; i++)
      out[(size_t)c * plane + i] = small[3 * i + (size_t)c] * scale + bias;
  }
}

/* ---- bytes moved ------------------------------------------------------- */

uint64_t vp_prep_bytes_separate(int w, int h, int out_w, int out_h) {
  uint64_t src = (uint64_t)w * (uint64_t)h +
                 2 * (uint64_t)((w + 1) / 2) * (uint64_t)((h + 1) / 2);
  uint64_t rgb = 3 * (uint64_t)w * (uint64_t)h;
  uint64_t small = 3 * (uint64_t)out_w * (uint64_t)out_h;
  uint64_t tensor = 4 * small;
  return (src + rgb) + (rgb + small) + (small + tensor);
}

uint64_t vp_prep_bytes_fused(int w, int h, int out_w, int out_h) {
  /* the taps' rows only move down from one output row to the next: a row
   * is new when it is past the last one counted */
  uint64_t nl = 0, nc = 0;
  int last = -1, clast = -1;
  for (int oy = 0; oy < out_h; oy++) {
    int y0, y1;
    double f;
    taps(h, out_h, oy, &y0, &y1, &f);
    int ys[2] = {y0, y1};
    for (int k = 0; k < 2; k++) {
      if (ys[k] > last) {
        nl++;
        last = ys[k];
      }
      if (ys[k] / 2 > clast) {
        nc++;
        clast = ys[k] / 2;
      }
    }
  }
  return nl * (uint64_t)w + 2 * nc * (uint64_t)((w + 1) / 2) +
         12 * (uint64_t)out_w * (uint64_t)out_h;
}
