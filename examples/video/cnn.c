/* SPDX-License-Identifier: MIT */
/*
 * The demo's small CNN (cnn.h): im2col + a blocked matrix product per
 * convolution, fp32. The product keeps an 8 x 64 block of outputs in a
 * local array and runs its innermost loop over 64 contiguous outputs, a
 * loop GCC vectorises (the demo's targets build with -O3).
 */
#include "cnn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { OB = 8, PT = 64 }; /* output channels x outputs per block */

typedef struct layer {
  int in_c, out_c, stride;
  int in_h, in_w, out_h, out_w;
  float *w; /* out_c x (in_c * 9) */
  float *b; /* out_c */
} layer;

struct cnn {
  int in_w, in_h;
  layer conv[CNN_LAYERS];
  float *fc_w; /* CNN_CLASSES x last out_c */
  float *fc_b;
  size_t act_floats; /* the largest activation */
  size_t col_floats; /* the largest im2col matrix */
};

/* ---- weights ------------------------------------------------------------ */

static uint32_t next_u32(uint64_t *s) {
  /* xorshift64*, upper half */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return (uint32_t)((*s * UINT64_C(2685821657736338717)) >> 32);
}

/* A standard normal draw (Box-Muller). */
static double normal(uint64_t *s) {
  double u1 = ((double)next_u32(s) + 1.0) / 4294967297.0;
  double u2 = (double)next_u32(s) / 4294967296.0;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static void fill(float *v, size_t n, double sd, uint64_t *s) {
  for (size_t i = 0; i < n; i++)
    v[i] = (float)(normal(s) * sd);
}

cnn *cnn_new(int in_w, int in_h, uint32_t seed) {
  if (in_w < 8 || in_h < 8 || in_w > 8192 || in_h > 8192)
    return NULL;
  static const int chans[CNN_LAYERS + 1] = {3, 16, 32, 64, 64};
  static const int strides[CNN_LAYERS] = {2, 2, 2, 1};
  cnn *net = calloc(1, sizeof *net);
  if (!net)
    return NULL;
  net->in_w = in_w;
  net->in_h = in_h;
  uint64_t s = UINT64_C(0x9E3779B97F4A7C15) ^ seed;
  int h = in_h, w = in_w;
  net->act_floats = (size_t)3 * (size_t)h * (size_t)w;
  for (int i = 0; i < CNN_LAYERS; i++) {
    layer *l = &net->conv[i];
    l->in_c = chans[i];
    l->out_c = chans[i + 1];
    l->stride = strides[i];
    l->in_h = h;
    l->in_w = w;
    l->out_h = (h + 2 - 3) / l->stride + 1;
    l->out_w = (w + 2 - 3) / l->stride + 1;
    size_t k = (size_t)l->in_c * 9, p = (size_t)l->out_h * (size_t)l->out_w;
    l->w = malloc(sizeof(float) * k * (size_t)l->out_c);
    l->b = malloc(sizeof(float) * (size_t)l->out_c);
    if (!l->w || !l->b) {
      cnn_free(net);
      return NULL;
    }
    fill(l->w, k * (size_t)l->out_c, sqrt(2.0 / (double)k), &s);
    fill(l->b, (size_t)l->out_c, 0.01, &s);
    if (k * p > net->col_floats)
      net->col_floats = k * p;
    if ((size_t)l->out_c * p > net->act_floats)
      net->act_floats = (size_t)l->out_c * p;
    h = l->out_h;
    w = l->out_w;
  }
  int last = chans[CNN_LAYERS];
  net->fc_w = malloc(sizeof(float) * CNN_CLASSES * (size_t)last);
  net->fc_b = calloc(CNN_CLASSES, sizeof(float));
  if (!net->fc_w || !net->fc_b) {
    cnn_free(net);
    return NULL;
  }
  fill(net->fc_w, CNN_CLASSES * (size_t)last, sqrt(1.0 / last), &s);
  return net;
}

void cnn_free(cnn *net) {
  if (!net)
    return;
  for (int i = 0; i < CNN_LAYERS; i++) {
    free(net->conv[i].w);
    free(net->conv[i].b);
  }
  free(net->fc_w);
  free(net->fc_b);
  free(net);
}

/* Rounded up to whole 64-byte lines, in floats. */
static size_t lines(size_t floats) { return (floats + 15) / 16 * 16; }

size_t cnn_scratch_bytes(const cnn *net) {
  return sizeof(float) *
         (2 * lines(net->act_floats) + lines(net->col_floats));
}

uint64_t cnn_flops(const cnn *net) {
  uint64_t f = 0;
  for (int i = 0; i < CNN_LAYERS; i++) {
    const layer *l = &net->conv[i];
    f += 2ull * (uint64_t)l->out_c * (uint64_t)l->in_c * 9 *
         (uint64_t)l->out_h * (uint64_t)l->out_w;
  }
  return f + 2ull * CNN_CLASSES * (uint64_t)net->conv[CNN_LAYERS - 1].out_c;
}

/* ---- the forward pass ---------------------------------------------------- */

/* col (in_c * 9 rows of out_h * out_w) of input in (in_c x in_h x in_w). */
static void im2col(const layer *l, const float *in, float *col) {
  size_t p = (size_t)l->out_h * (size_t)l->out_w;
  for (int c = 0; c < l->in_c; c++) {
    const float *plane = in + (size_t)c * (size_t)l->in_h * (size_t)l->in_w;
    for (int ky = 0; ky < 3; ky++) {
      for (int kx = 0; kx < 3; kx++) {
        float *row = col + ((size_t)c * 9 + (size_t)(ky * 3 + kx)) * p;
        for (int oy = 0; oy < l->out_h; oy++) {
          int iy = oy * l->stride - 1 + ky;
          float *dst = row + (size_t)oy * (size_t)l->out_w;
          if (iy < 0 || iy >= l->in_h) {
            memset(dst, 0, sizeof(float) * (size_t)l->out_w);
            continue;
          }
          const float *src = plane + (size_t)iy * (size_t)l->in_w;
          for (int ox = 0; ox < l->out_w; ox++) {
            int ix = ox * l->stride - 1 + kx;
            dst[ox] = ix >= 0 && ix < l->in_w ? src[ix] : 0.0f;
          }
        }
      }
    }
  }
}

/* out (out_c x p) = relu(w x col + b), in blocks of OB channels x PT
 * outputs held in acc. */
static void gemm_relu(const layer *l, const float *col, float *out) {
  size_t k = (size_t)l->in_c * 9, p = (size_t)l->out_h * (size_t)l->out_w;
  float acc[OB][PT];
  for (size_t p0 = 0; p0 < p; p0 += PT) {
    size_t pt = p - p0 < PT ? p - p0 : PT;
    for (int o0 = 0; o0 < l->out_c; o0 += OB) {
      int ob = l->out_c - o0 < OB ? l->out_c - o0 : OB;
      for (int j = 0; j < ob; j++)
        for (size_t q = 0; q < PT; q++)
          acc[j][q] = l->b[o0 + j];
      for (size_t kk = 0; kk < k; kk++) {
        const float *c = col + kk * p + p0;
        if (pt == PT) {
          for (int j = 0; j < ob; j++) {
            float wv = l->w[(size_t)(o0 + j) * k + kk];
            for (size_t q = 0; q < PT; q++)
              acc[j][q] += wv * c[q];
          }
        } else {
          for (int j = 0; j < ob; j++) {
            float wv = l->w[(size_t)(o0 + j) * k + kk];
            for (size_t q = 0; q < pt; q++)
              acc[j][q] += wv * c[q];
          }
        }
      }
      for (int j = 0; j < ob; j++) {
        float *dst = out + (size_t)(o0 + j) * p + p0;
        for (size_t q = 0; q < pt; q++)
          dst[q] = acc[j][q] > 0.0f ? acc[j][q] : 0.0f;
      }
    }
  }
}

static void head(const cnn *net, const float *act, float *logits) {
  const layer *l = &net->conv[CNN_LAYERS - 1];
  size_t p = (size_t)l->out_h * (size_t)l->out_w;
  float pooled[64];
  for (int c = 0; c < l->out_c; c++) {
    const float *v = act + (size_t)c * p;
    double sum = 0;
    for (size_t q = 0; q < p; q++)
      sum += v[q];
    pooled[c] = (float)(sum / (double)p);
  }
  for (int k = 0; k < CNN_CLASSES; k++) {
    float z = net->fc_b[k];
    for (int c = 0; c < l->out_c; c++)
      z += net->fc_w[k * l->out_c + c] * pooled[c];
    logits[k] = z;
  }
}

void cnn_forward(const cnn *net, const float *const *imgs, int n,
                 float *logits, void *scratch) {
  float *a = scratch;
  float *b = a + lines(net->act_floats);
  float *col = b + lines(net->act_floats);
  for (int i = 0; i < n; i++) {
    const float *in = imgs[i];
    float *out = a;
    for (int li = 0; li < CNN_LAYERS; li++) {
      const layer *l = &net->conv[li];
      im2col(l, in, col);
      gemm_relu(l, col, out);
      in = out;
      out = out == a ? b : a;
    }
    head(net, in, logits + (size_t)i * CNN_CLASSES);
  }
}

/* ---- the reference ------------------------------------------------------- */

int cnn_forward_reference(const cnn *net, const float *img, double *logits) {
  size_t n0 = (size_t)3 * (size_t)net->in_h * (size_t)net->in_w;
  double *in = malloc(sizeof(double) * n0);
  if (!in)
    return -1;
  for (size_t i = 0; i < n0; i++)
    in[i] = img[i];
  for (int li = 0; li < CNN_LAYERS; li++) {
    const layer *l = &net->conv[li];
    size_t np = (size_t)l->out_c * (size_t)l->out_h * (size_t)l->out_w;
    double *out = malloc(sizeof(double) * np);
    if (!out) {
      free(in);
      return -1;
    }
    for (int o = 0; o < l->out_c; o++)
      for (int oy = 0; oy < l->out_h; oy++)
        for (int ox = 0; ox < l->out_w; ox++) {
          double z = l->b[o];
          for (int c = 0; c < l->in_c; c++)
            for (int ky = 0; ky < 3; ky++)
              for (int kx = 0; kx < 3; kx++) {
                int iy = oy * l->stride - 1 + ky;
                int ix = ox * l->stride - 1 + kx;
                if (iy < 0 || iy >= l->in_h || ix < 0 || ix >= l->in_w)
                  continue;
                z += (double)l->w[(size_t)o * (size_t)l->in_c * 9 +
                                  (size_t)c * 9 + (size_t)(ky * 3 + kx)] *
                     in[((size_t)c * (size_t)l->in_h + (size_t)iy) *
                            (size_t)l->in_w +
                        (size_t)ix];
              }
          out[((size_t)o * (size_t)l->out_h + (size_t)oy) * (size_t)l->out_w +
              (size_t)ox] = z > 0 ? z : 0;
        }
    free(in);
    in = out;
  }
  const layer *l = &net->conv[CNN_LAYERS - 1];
  size_t p = (size_t)l->out_h * (size_t)l->out_w;
  for (int k = 0; k < CNN_CLASSES; k++) {
    double z = net->fc_b[k];
    for (int c = 0; c < l->out_c; c++) {
      double sum = 0;
      for (size_t q = 0; q < p; q++)
        sum += in[(size_t)c * p + q];
      z += (double)net->fc_w[k * l->out_c + c] * (sum / (double)p);
    }
    logits[k] = z;
  }
  free(in);
  return 0;
}

int cnn_top(const float *logits, float *prob) {
  int best = 0;
  for (int k = 1; k < CNN_CLASSES; k++)
    if (logits[k] > logits[best])
      best = k;
  double sum = 0;
  for (int k = 0; k < CNN_CLASSES; k++)
    sum += exp((double)logits[k] - (double)logits[best]);
  if (prob)
    *prob = (float)(1.0 / sum);
  return best;
}
