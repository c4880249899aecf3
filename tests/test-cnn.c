/* SPDX-License-Identifier: MIT */
/*
 * The video demo's CNN (examples/video/cnn.c): the vectorised forward pass
 * against its double-precision direct-convolution definition on odd and
 * even sizes, batch independence, determinism by seed, the operation count
 * by hand, and the top class.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../examples/video/cnn.h"
#include "runner.h"

static void random_input(float *v, size_t n, uint32_t seed) {
  uint32_t s = seed;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    v[i] = (float)((double)(s >> 8) / 16777216.0 * 4.0 - 2.0);
  }
}

/* cnn_forward equals the reference to fp32 rounding: at most 1e-4 of the
 * largest score's magnitude (plus 1e-5), for n images of w x h. */
static void check_against_reference(int w, int h, int n) {
  cnn *net = cnn_new(w, h, 42);
  CHECK(net != NULL);
  size_t per = (size_t)3 * (size_t)w * (size_t)h;
  float *in = malloc(sizeof(float) * per * (size_t)n);
  const float **imgs = malloc(sizeof *imgs * (size_t)n);
  float *logits = malloc(sizeof(float) * CNN_CLASSES * (size_t)n);
  void *scratch = aligned_alloc(64, (cnn_scratch_bytes(net) + 63) / 64 * 64);
  CHECK(in && imgs && logits && scratch);
  for (int i = 0; i < n; i++) {
    random_input(in + per * (size_t)i, per, 7u + (uint32_t)i);
    imgs[i] = in + per * (size_t)i;
  }
  cnn_forward(net, imgs, n, logits, scratch);
  for (int i = 0; i < n; i++) {
    double ref[CNN_CLASSES], big = 0;
    CHECK_EQ(cnn_forward_reference(net, imgs[i], ref), 0);
    for (int k = 0; k < CNN_CLASSES; k++)
      big = fabs(ref[k]) > big ? fabs(ref[k]) : big;
    CHECK(big > 0);
    for (int k = 0; k < CNN_CLASSES; k++)
      CHECK_NEAR(logits[i * CNN_CLASSES + k], ref[k], 1e-4 * big + 1e-5);
  }
  free(scratch);
  free(logits);
  free(imgs);
  free(in);
  cnn_free(net);
}

PP_TEST(cnn_forward_equals_its_definition) {
  check_against_reference(37, 29, 3); /* odd: partial blocks, edges */
  check_against_reference(64, 48, 2);
  check_against_reference(8, 8, 1); /* the smallest */
  CHECK(cnn_new(7, 64, 1) == NULL);
  CHECK(cnn_new(64, 0, 1) == NULL);
}

/* An image's scores do not depend on the batch around it; the same seed
 * gives the same network, another seed another. */
PP_TEST(cnn_batch_independent_and_seeded) {
  int w = 40, h = 24;
  size_t per = (size_t)3 * (size_t)w * (size_t)h;
  cnn *net = cnn_new(w, h, 5), *same = cnn_new(w, h, 5);
  cnn *other = cnn_new(w, h, 6);
  CHECK(net && same && other);
  float *in = malloc(sizeof(float) * per * 2);
  void *scratch = aligned_alloc(64, (cnn_scratch_bytes(net) + 63) / 64 * 64);
  CHECK(in && scratch);
  random_input(in, per, 1);
  random_input(in + per, per, 2);
  const float *both[2] = {in, in + per}, *second[1] = {in + per};
  float l2[2 * CNN_CLASSES], l1[CNN_CLASSES], ls[CNN_CLASSES];
  float lo[CNN_CLASSES];
  cnn_forward(net, both, 2, l2, scratch);
  cnn_forward(net, second, 1, l1, scratch);
  CHECK(memcmp(l1, l2 + CNN_CLASSES, sizeof l1) == 0);
  cnn_forward(same, second, 1, ls, scratch);
  CHECK(memcmp(l1, ls, sizeof l1) == 0);
  cnn_forward(other, second, 1, lo, scratch);
  CHECK(memcmp(l1, lo, sizeof l1) != 0);
  free(scratch);
  free(in);
  cnn_free(net);
  cnn_free(same);
  cnn_free(other);
}

/* Operations of a 128 x 128 input, by hand: 2 x out_c x in_c x 9 x the
 * outputs of each convolution, plus the linear layer. */
PP_TEST(cnn_flops_by_hand) {
  cnn *net = cnn_new(128, 128, 1);
  CHECK(net != NULL);
  uint64_t want = 2ull * 16 * 3 * 9 * 64 * 64     /* 3,538,944 */
                  + 2ull * 32 * 16 * 9 * 32 * 32  /* 9,437,184 */
                  + 2ull * 64 * 32 * 9 * 16 * 16  /* 9,437,184 */
                  + 2ull * 64 * 64 * 9 * 16 * 16  /* 18,874,368 */
                  + 2ull * CNN_CLASSES * 64;      /* 1,280 */
  CHECK_EQ_U(cnn_flops(net), want);
  CHECK_EQ_U(want, 41288960);
  cnn_free(net);
}

PP_TEST(cnn_top_class_and_probability) {
  float l[CNN_CLASSES] = {0};
  l[3] = logf(9.0f * 4.0f); /* e^l3 = 36; nine others at e^0 = 1 */
  float p = 0;
  CHECK_EQ(cnn_top(l, &p), 3);
  CHECK_NEAR(p, 0.8, 1e-6);
  float flat[CNN_CLASSES] = {0};
  CHECK_EQ(cnn_top(flat, &p), 0); /* a tie: the first */
  CHECK_NEAR(p, 0.1, 1e-6);
}
