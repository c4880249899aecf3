/* SPDX-License-Identifier: MIT */
/*
 * A small convolutional network for the video demo (docs/video-demo.md):
 * four 3x3 convolutions with ReLU (3->16 stride 2, 16->32 stride 2,
 * 32->64 stride 2, 64->64 stride 1, all padded by 1), a global average
 * pool and a linear layer to CNN_CLASSES scores. Plain C, fp32: each
 * convolution is im2col and a matrix product whose inner loops run over
 * contiguous outputs, so the compiler vectorises them.
 *
 * Its weights are drawn from a seeded generator (He initialisation): the
 * arithmetic is a real forward pass of this shape, the classes mean
 * nothing. No trained model ships with the demo and no inference runtime
 * for C is in Debian; what the demo measures is the pipeline around it.
 */
#ifndef PP_VIDEO_CNN_H
#define PP_VIDEO_CNN_H

#include <stddef.h>
#include <stdint.h>

#define CNN_CLASSES 10
#define CNN_LAYERS 4

typedef struct cnn cnn;

/** A network for 3 x in_h x in_w inputs (planar RGB floats), weights drawn
 * from seed. NULL when out of memory or the size is under 8 x 8. */
cnn *cnn_new(int in_w, int in_h, uint32_t seed);
void cnn_free(cnn *net);

/** Scratch bytes cnn_forward needs (for any batch size). */
size_t cnn_scratch_bytes(const cnn *net);

/** The scores of n inputs (imgs[i]: 3 x in_h x in_w floats) into
 * logits (n x CNN_CLASSES). scratch: cnn_scratch_bytes(net) bytes, aligned
 * to 64. */
void cnn_forward(const cnn *net, const float *const *imgs, int n,
                 float *logits, void *scratch);

/** The same scores by direct convolution loops in double precision: the
 * definition cnn_forward is tested against. Slow. 0, or -1 when out of
 * memory. */
int cnn_forward_reference(const cnn *net, const float *img, double *logits);

/** Floating-point operations (2 per multiply-add) of one input. */
uint64_t cnn_flops(const cnn *net);

/** The class with the highest score and its softmax probability. */
int cnn_top(const float *logits, float *prob);

#endif /* PP_VIDEO_CNN_H */
