/* SPDX-License-Identifier: MIT */
/*
 * The video demo's preprocessing (docs/internals/preprocess.md): a decoded
 * 4:2:0 frame into a CNN's input, planar float RGB, resized and
 * normalised. The function, which vp_prep_reference defines:
 *
 *  1. each source pixel to RGB, BT.601 limited range, its chroma the
 *     4:2:0 sample (x / 2, y / 2) (nearest, as libswscale's and OpenCV's
 *     I420 conversions):  Y' = Y - 16, U' = U - 128, V' = V - 128,
 *       R = 1.164383 Y' + 1.596027 V'
 *       G = 1.164383 Y' - 0.391762 U' - 0.812968 V'
 *       B = 1.164383 Y' + 2.017232 U'
 *     each clamped to [0, 255];
 *  2. a bilinear resize of that RGB image to out_w x out_h with half-pixel
 *     centres (align_corners false, as torch and OpenCV): the source
 *     coordinate of output x is (x + 0.5) w / out_w - 0.5, clamped to
 *     [0, w - 1], its two taps floor() and floor() + 1 (clamped);
 *  3. v / 255, then (v - mean[c]) / std[c].
 *
 * Three implementations: the reference (scalar, double); the usual three
 * passes through uint8 images (convert, resize, normalise: what a
 * cvtColor + resize + numpy program does); and one fused pass that never
 * builds an intermediate image, vectorised. Tolerances against the
 * reference, tested: fused 1e-4 absolute (float rounding); separate
 * 1 / 255 / min(std) + 1e-5 (two roundings to uint8 of at most 0.5 each).
 */
#ifndef PP_VIDEO_PREPROCESS_H
#define PP_VIDEO_PREPROCESS_H

#include <stddef.h>
#include <stdint.h>

/* An 8-bit 4:2:0 planar image; chroma (w + 1) / 2 x (h + 1) / 2. */
typedef struct vp_yuv420 {
  int w, h;
  const uint8_t *y, *u, *v;
  int y_stride, u_stride, v_stride;
} vp_yuv420;

/* Per channel (R, G, B), in [0, 1] units. */
typedef struct vp_norm {
  float mean[3], std[3];
} vp_norm;

/* mean .485 .456 .406, std .229 .224 .225 */
extern const vp_norm vp_norm_imagenet;

/* Tolerances against the reference (see above). */
#define VP_FUSED_TOLERANCE 1e-4
double vp_separate_tolerance(const vp_norm *n);

/** out: 3 x out_h x out_w floats, planes R, G, B. */
void vp_prep_reference(const vp_yuv420 *src, int out_w, int out_h,
                       const vp_norm *n, float *out);
/** One pass, no intermediate image, no allocation. */
void vp_prep_fused(const vp_yuv420 *src, int out_w, int out_h, const vp_norm *n,
                   float *out);
/** Three passes through uint8 RGB images in scratch
 * (vp_prep_separate_scratch_bytes). */
void vp_prep_separate(const vp_yuv420 *src, int out_w, int out_h,
                      const vp_norm *n, float *out, void *scratch);
size_t vp_prep_separate_scratch_bytes(int w, int h, int out_w, int out_h);

/** Bytes each way moves through memory, a model: every pass reads the
 * whole of what it reads and writes the whole of what it writes; the
 * fused pass reads only the source rows its taps touch (whole rows). */
uint64_t vp_prep_bytes_fused(int w, int h, int out_w, int out_h);
uint64_t vp_prep_bytes_separate(int w, int h, int out_w, int out_h);

/** The CUDA kernel (preprocess_cuda.cu), loaded at run time from
 * libpipeprof-video-cuda.so beside the program or $PIPEPROF_VIDEO_CUDA:
 * 0, or -1 with err "unavailable: <reason>" (no library, no device). */
int vp_cuda_open(char *err, size_t errlen);
/** The same function on the GPU, host memory in and out. 0, or -1 with
 * err. vp_cuda_open first. */
int vp_cuda_prep(const vp_yuv420 *src, int out_w, int out_h, const vp_norm *n,
                 float *out, char *err, size_t errlen);

#endif /* PP_VIDEO_PREPROCESS_H */
