/* SPDX-License-Identifier: MIT */
/*
 * The field codings of the .pptrace payloads and the machinery that turns
 * a layout table into a record struct, its encoders and its decoder. A
 * layout is an X-macro listing the fields of one record in file order:
 *
 *   #define PPT_REC_CLOCK(F) F(UV, tick, PPT_ANY) F(SV, mono_ns, ) F(SV,
 * real_ns, )
 *
 * F(coding, member, max): the coding of the field in the file, the member
 * of the record struct that holds it, and for UV the largest value a
 * reader accepts (PPT_ANY: any; a larger one makes the record bad; other
 * codings leave the column empty). Codings:
 *
 *   UV   uint64_t   unsigned LEB128 varint
 *   U32  uint64_t   varint, at most UINT32_MAX
 *   SV   int64_t    zigzag varint
 *   S32  int64_t    zigzag varint, within int32_t
 *   F64  double     8 bytes, IEEE-754 binary64 bit pattern, little-endian
 *   X64  uint64_t   8 bytes little-endian (a double's bits carried raw)
 *   STR  ppt_str    varint length, then the bytes (no NUL)
 *   HIST ppt_hist   varint length, then pp_hist_encode's bytes
 *
 * Writer and reader expand the same table (events.h, records.h), so the
 * two ends cannot disagree on a field's order or coding. docs/internals/
 * format.md says how to add a record or an event type.
 */
#ifndef PP_FORMAT_CODEC_H
#define PP_FORMAT_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../stats/histogram.h"
#include "pptrace.h"

/* A string field: the writer's text or, decoded, a pointer into the
 * payload (not NUL-terminated). */
typedef struct ppt_str {
  const char *s;
  size_t n;
} ppt_str;

/* Longest string the writer puts in a record. */
#define PPT_STR_MAX 65535u

/* A C string as a field (NULL is the empty string; longer than
 * PPT_STR_MAX is cut). */
static inline ppt_str ppt_str_of(const char *s) {
  ppt_str r = {s ? s : "", s ? strlen(s) : 0};
  if (r.n > PPT_STR_MAX)
    r.n = PPT_STR_MAX;
  return r;
}

/* A histogram field: the writer encodes `in`; the reader decodes into
 * `out` (a pp_hist it initialised and frees; NULL makes the record bad). */
typedef struct ppt_hist {
  const pp_hist *in;
  pp_hist *out;
} ppt_hist;

typedef uint64_t ppt__ctype_UV;
typedef uint64_t ppt__ctype_U32;
typedef int64_t ppt__ctype_SV;
typedef int64_t ppt__ctype_S32;
typedef double ppt__ctype_F64;
typedef uint64_t ppt__ctype_X64;
typedef ppt_str ppt__ctype_STR;
typedef ppt_hist ppt__ctype_HIST;

/* ---- bytes a field takes at most ---- */
static inline size_t ppt__bound_UV(uint64_t v) { return (void)v, 10; }
static inline size_t ppt__bound_U32(uint64_t v) { return (void)v, 10; }
static inline size_t ppt__bound_SV(int64_t v) { return (void)v, 10; }
static inline size_t ppt__bound_S32(int64_t v) { return (void)v, 10; }
static inline size_t ppt__bound_F64(double v) { return (void)v, 8; }
static inline size_t ppt__bound_X64(uint64_t v) { return (void)v, 8; }
static inline size_t ppt__bound_STR(ppt_str v) { return 10 + v.n; }
static inline size_t ppt__bound_HIST(ppt_hist v) {
  return 10 + (v.in ? pp_hist_encode(v.in, NULL, 0) : 0);
}

/* ---- encoders: write at p (room for the bound), return bytes ---- */
static inline size_t ppt__enc_UV(unsigned char *p, uint64_t v) {
  return ppt_put_uv(p, v);
}
static inline size_t ppt__enc_U32(unsigned char *p, uint64_t v) {
  return ppt_put_uv(p, v);
}
static inline size_t ppt__enc_SV(unsigned char *p, int64_t v) {
  return ppt_put_uv(p, ppt_zigzag(v));
}
static inline size_t ppt__enc_S32(unsigned char *p, int64_t v) {
  return ppt_put_uv(p, ppt_zigzag(v));
}
static inline size_t ppt__enc_X64(unsigned char *p, uint64_t v) {
  ppt_put_u64(p, v);
  return 8;
}
static inline size_t ppt__enc_F64(unsigned char *p, double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  return ppt__enc_X64(p, u);
}
static inline size_t ppt__enc_STR(unsigned char *p, ppt_str v) {
  size_t k = ppt_put_uv(p, v.n);
  if (v.n)
    memcpy(p + k, v.s, v.n);
  return k + v.n;
}
static inline size_t ppt__enc_HIST(unsigned char *p, ppt_hist v) {
  size_t n = v.in ? pp_hist_encode(v.in, NULL, 0) : 0;
  size_t k = ppt_put_uv(p, n);
  if (n)
    pp_hist_encode(v.in, p + k, n);
  return k + n;
}

/* ---- decoders: an overrun or a value out of range sets c->err ---- */
static inline int ppt__over(uint64_t v, uint64_t max) { return v > max; }
static inline uint64_t ppt__dec_UV(ppt_cursor *c, uint64_t max) {
  uint64_t v = ppt_get_uv(c);
  if (ppt__over(v, max))
    c->err = 1;
  return v;
}
static inline uint64_t ppt__dec_U32(ppt_cursor *c, uint64_t max) {
  (void)max;
  return ppt__dec_UV(c, UINT32_MAX);
}
static inline int64_t ppt__dec_SV(ppt_cursor *c, uint64_t max) {
  (void)max;
  return ppt_get_sv(c);
}
static inline int64_t ppt__dec_S32(ppt_cursor *c, uint64_t max) {
  (void)max;
  int64_t v = ppt_get_sv(c);
  if (v > INT32_MAX || v < INT32_MIN)
    c->err = 1;
  return v;
}
static inline double ppt__dec_F64(ppt_cursor *c, uint64_t max) {
  (void)max;
  return ppt_get_f64(c);
}
static inline uint64_t ppt__dec_X64(ppt_cursor *c, uint64_t max) {
  (void)max;
  if (c->end - c->p < 8) {
    c->err = 1;
    c->p = c->end;
    return 0;
  }
  uint64_t v = ppt_get_u64(c->p);
  c->p += 8;
  return v;
}
static inline ppt_str ppt__dec_STR(ppt_cursor *c, uint64_t max) {
  (void)max;
  ppt_str r;
  r.s = ppt_get_str(c, &r.n);
  return r;
}
static inline ppt_hist ppt__dec_HIST(ppt_cursor *c, ppt_hist into) {
  uint64_t n = ppt_get_uv(c);
  if (c->err || n > (uint64_t)(c->end - c->p) || !into.out) {
    c->err = 1;
    return into;
  }
  if (pp_hist_decode(into.out, c->p, (size_t)n) < 0)
    c->err = 1;
  c->p += n;
  return into;
}

/* The max column of a UV field that takes any value. */
#define PPT_ANY UINT64_MAX

/* ---- expanding a layout ---- */
#define PPT__FIELD(coding, member, max) ppt__ctype_##coding member;
#define PPT__BOUND(coding, member, max) n += ppt__bound_##coding(r->member);
#define PPT__ENC(coding, member, max) q += ppt__enc_##coding(q, r->member);
#define PPT__DEC(coding, member, max) PPT__DEC_##coding(member, max)
#define PPT__DEC_UV(member, max) r->member = ppt__dec_UV(c, (max));
#define PPT__DEC_U32(member, max) r->member = ppt__dec_U32(c, 0);
#define PPT__DEC_SV(member, max) r->member = ppt__dec_SV(c, 0);
#define PPT__DEC_S32(member, max) r->member = ppt__dec_S32(c, 0);
#define PPT__DEC_F64(member, max) r->member = ppt__dec_F64(c, 0);
#define PPT__DEC_X64(member, max) r->member = ppt__dec_X64(c, 0);
#define PPT__DEC_STR(member, max) r->member = ppt__dec_STR(c, 0);
#define PPT__DEC_HIST(member, max) r->member = ppt__dec_HIST(c, r->member);

#endif /* PP_FORMAT_CODEC_H */
