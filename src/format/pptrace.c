/* SPDX-License-Identifier: MIT */
/*
 * Writer-side helpers of the .pptrace format: the payload buffer and the
 * file and chunk headers.
 */
#include <string.h>

#include "../internal.h"
#include "pptrace.h"

int ppt_buf_grow(ppt_buf *b, size_t extra) {
  if (b->oom)
    return -1;
  if (b->len + extra <= b->cap)
    return 0;
  if (b->len + extra > PPT_MAX_PAYLOAD + 4096) {
    b->oom = 1;
    return -1;
  }
  if (pp__grow((void **)&b->data, &b->cap, b->len + extra, 1) != 0) {
    b->oom = 1;
    return -1;
  }
  return 0;
}

void ppt_buf_free(ppt_buf *b) {
  pp__free(b->data);
  memset(b, 0, sizeof *b);
}

void ppt_buf_uv(ppt_buf *b, uint64_t v) {
  if (ppt_buf_reserve(b, 10) == 0)
    b->len += ppt_put_uv(b->data + b->len, v);
}

void ppt_buf_sv(ppt_buf *b, int64_t v) { ppt_buf_uv(b, ppt_zigzag(v)); }

void ppt_buf_f64(ppt_buf *b, double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  if (ppt_buf_reserve(b, 8) == 0) {
    ppt_put_u64(b->data + b->len, u);
    b->len += 8;
  }
}

void ppt_buf_bytes(ppt_buf *b, const void *p, size_t n) {
  if (ppt_buf_reserve(b, n) == 0) {
    if (n)
      memcpy(b->data + b->len, p, n);
    b->len += n;
  }
}

void ppt_buf_str(ppt_buf *b, const char *s) {
  size_t n = s ? strlen(s) : 0;
  if (n > 65535)
    n = 65535;
  ppt_buf_uv(b, n);
  ppt_buf_bytes(b, s, n);
}

void ppt_chunk_header(unsigned char hdr[PPT_CHUNK_HEADER_SIZE], uint16_t type,
                      const unsigned char *payload, uint32_t len,
                      uint32_t seq) {
  ppt_put_u32(hdr, PPT_CHUNK_MAGIC);
  ppt_put_u16(hdr + 4, type);
  ppt_put_u16(hdr + 6, 0);
  ppt_put_u32(hdr + 8, len);
  ppt_put_u32(hdr + 12, pp__crc32c(0, payload, len));
  ppt_put_u32(hdr + 16, seq);
  ppt_put_u32(hdr + 20, pp__crc32c(0, hdr, 20));
}

int ppt_chunk_header_ok(const unsigned char hdr[PPT_CHUNK_HEADER_SIZE]) {
  return ppt_get_u32(hdr) == PPT_CHUNK_MAGIC &&
         ppt_get_u32(hdr + 20) == pp__crc32c(0, hdr, 20) &&
         ppt_get_u32(hdr + 8) <= PPT_MAX_PAYLOAD;
}

void ppt_file_header(unsigned char hdr[PPT_FILE_HEADER_SIZE], uint32_t pid) {
  memset(hdr, 0, PPT_FILE_HEADER_SIZE);
  memcpy(hdr, PPT_FILE_MAGIC, 8);
  ppt_put_u16(hdr + 8, PPT_VERSION_MAJOR);
  ppt_put_u16(hdr + 10, PPT_VERSION_MINOR);
  ppt_put_u32(hdr + 12, PPT_FILE_HEADER_SIZE);
  ppt_put_u32(hdr + 16, 0);
  ppt_put_u32(hdr + 20, pid);
  ppt_put_u32(hdr + 60, pp__crc32c(0, hdr, 60));
}
