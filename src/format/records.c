/* SPDX-License-Identifier: MIT */
/*
 * The encoders and decoders of records.h, generated from its tables, the
 * framing of STATS_GPU and CUDA records, and the one out-of-line event
 * encoder of events.h.
 */
#include "records.h"

#define PPT__RECORD_DEFINE(name, LAYOUT)                                       \
  size_t ppt_##name##_bound(const ppt_##name *r) {                             \
    size_t n = 0;                                                              \
    LAYOUT(PPT__BOUND)                                                         \
    return n;                                                                  \
  }                                                                            \
  size_t ppt_##name##_enc(unsigned char *p, const ppt_##name *r) {             \
    unsigned char *q = p;                                                      \
    LAYOUT(PPT__ENC)                                                           \
    return (size_t)(q - p);                                                    \
  }                                                                            \
  void ppt_##name##_put(ppt_buf *b, const ppt_##name *r) {                     \
    if (ppt_buf_reserve(b, ppt_##name##_bound(r)) == 0)                        \
      b->len += ppt_##name##_enc(b->data + b->len, r);                         \
  }                                                                            \
  int ppt_##name##_get(ppt_cursor *c, ppt_##name *r) {                         \
    LAYOUT(PPT__DEC)                                                           \
    return c->err ? -1 : 0;                                                    \
  }
PPT_RECORD_TABLE(PPT__RECORD_DEFINE)

void ppt_buf_ev(ppt_buf *b, const ppt_ev *r) {
  if (ppt_buf_reserve(b, ppt_ev_bound(r)) == 0)
    b->len += ppt_ev_put(b->data + b->len, r);
}

void ppt_meta_pairs_put(ppt_buf *b, const char *const (*kv)[2], size_t n) {
  ppt_count_put_n(b, n);
  for (size_t i = 0; i < n; i++) {
    ppt_meta m = {ppt_str_of(kv[i][0]), ppt_str_of(kv[i][1])};
    ppt_meta_put(b, &m);
  }
}

void ppt_stats_gpu_put_framed(ppt_buf *b, const ppt_stats_gpu *r) {
  size_t bound = ppt_stats_gpu_bound(r);
  if (ppt_buf_reserve(b, 10 + bound) != 0)
    return;
  /* The body first, at its largest possible offset, then moved down
   * behind its length: one pass, no second buffer. */
  unsigned char *body = b->data + b->len + 10;
  size_t n = ppt_stats_gpu_enc(body, r);
  unsigned char len[10];
  size_t k = ppt_put_uv(len, n);
  memmove(b->data + b->len + k, body, n);
  memcpy(b->data + b->len, len, k);
  b->len += k + n;
}

int ppt_stats_gpu_get_framed(ppt_cursor *c, ppt_stats_gpu *r) {
  uint64_t len = ppt_get_uv(c);
  if (c->err || len > (uint64_t)(c->end - c->p)) {
    c->err = 1;
    return -1;
  }
  ppt_cursor body = {c->p, c->p + len, 0};
  c->p += len;
  return ppt_stats_gpu_get(&body, r);
}

size_t ppt_cuda_head_enc(unsigned char *p, unsigned kind, uint64_t blen) {
  p[0] = (unsigned char)kind;
  return 1 + ppt_put_uv(p + 1, blen);
}

int ppt_cuda_head_get(ppt_cursor *c, unsigned *kind, ppt_cursor *body) {
  if (c->p >= c->end) {
    c->err = 1;
    return -1;
  }
  *kind = *c->p++;
  uint64_t len = ppt_get_uv(c);
  if (c->err || len > (uint64_t)(c->end - c->p)) {
    c->err = 1;
    return -1;
  }
  body->p = c->p;
  body->end = c->p + len;
  body->err = 0;
  c->p += len;
  return 0;
}
