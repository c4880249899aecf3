/* SPDX-License-Identifier: MIT */
/*
 * A small, fast, buffered JSON writer for the exporters. Output goes to a
 * FILE* through a private 64 KiB buffer; nothing in the per-value path calls
 * printf (integers and fixed-point microseconds are formatted by hand;
 * doubles, which are rare, go through snprintf).
 *
 * Two layers:
 *  - structured calls (pp_jsonw_obj_begin, pp_jsonw_key, pp_jsonw_str, ...)
 *    that track nesting and insert the commas themselves;
 *  - raw calls (pp_jsonw_put*) that append bytes or numbers verbatim, for
 *    hot loops that assemble known-good fragments (and for CSV).
 * Mixing is fine as long as the raw bytes keep the document well formed;
 * raw calls do not update the comma state.
 *
 * Strings are escaped per RFC 8259: '"' and '\\' are backslash-escaped,
 * every control character (U+0000..U+001F) is written as \u00XX, and bytes
 * that are not well-formed UTF-8 (RFC 3629: no overlongs, no surrogates, no
 * code points above U+10FFFF, no truncated sequences) are replaced by
 * U+FFFD, one per maximal ill-formed subpart as the Unicode standard
 * recommends (a truncated but otherwise valid prefix counts once; a stray
 * byte counts once).
 *
 * Errors are sticky: after a failed write every call is a no-op and
 * pp_jsonw_finish() returns -1. Not thread-safe; one writer per FILE.
 */
#ifndef PP_JSONW_H
#define PP_JSONW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PP_JSONW_BUF_SIZE 65536u
#define PP_JSONW_MAX_DEPTH 32

typedef struct pp_jsonw {
  FILE *out;
  char *buf;     /* cap bytes */
  size_t len;    /* bytes pending in buf */
  size_t cap;    /* PP_JSONW_BUF_SIZE */
  int err;       /* sticky: a write (or the allocation) failed */
  int depth;     /* open objects/arrays */
  int after_key; /* a key was written, its value comes next */
  /* per level: bit 0 = no element yet, bit 1 = one element per line */
  unsigned char lvl[PP_JSONW_MAX_DEPTH + 1];
} pp_jsonw;

/* Start writing to out. Returns 0, or -1 when the buffer cannot be
 * allocated (w is then in the error state; pp_jsonw_finish() still frees
 * and returns -1). */
int pp_jsonw_init(pp_jsonw *w, FILE *out);
/* Flush the buffer and the FILE, release the buffer. Returns 0, or -1 if
 * any write failed (ferror(out) or a short fwrite / failed fflush). */
int pp_jsonw_finish(pp_jsonw *w);

/* ---- structured output (commas handled) ---- */
void pp_jsonw_obj_begin(pp_jsonw *w);
void pp_jsonw_obj_end(pp_jsonw *w);
void pp_jsonw_arr_begin(pp_jsonw *w);
/* An array whose elements each start on a new line (readable, and handy for
 * line-oriented tools); otherwise like pp_jsonw_arr_begin. */
void pp_jsonw_arr_begin_lines(pp_jsonw *w);
void pp_jsonw_arr_end(pp_jsonw *w);
/* An object key (escaped like any string). */
void pp_jsonw_key(pp_jsonw *w, const char *k);
void pp_jsonw_str(pp_jsonw *w, const char *s); /* NULL writes null */
void pp_jsonw_strn(pp_jsonw *w, const char *s, size_t n);
void pp_jsonw_int(pp_jsonw *w, int64_t v);
void pp_jsonw_uint(pp_jsonw *w, uint64_t v);
/* Shortest of %.15g/%.16g/%.17g that reads back exactly; NaN and infinities
 * become null (JSON has no such numbers). */
void pp_jsonw_double(pp_jsonw *w, double v);
/* Integer nanoseconds as microseconds with exactly three decimals:
 * 1234567 -> 1234.567, -5 -> -0.005. */
void pp_jsonw_us(pp_jsonw *w, int64_t ns);
void pp_jsonw_bool(pp_jsonw *w, int v);
void pp_jsonw_null(pp_jsonw *w);
/* Start an array element or value whose bytes the caller then writes with
 * the raw calls (writes the separator only). */
void pp_jsonw_elem(pp_jsonw *w);
/* Insert an already-serialized JSON value (comma handled). */
void pp_jsonw_value_raw(pp_jsonw *w, const char *json, size_t n);

/* Key/value shorthands. */
void pp_jsonw_kv_str(pp_jsonw *w, const char *k, const char *s);
void pp_jsonw_kv_int(pp_jsonw *w, const char *k, int64_t v);
void pp_jsonw_kv_uint(pp_jsonw *w, const char *k, uint64_t v);
void pp_jsonw_kv_double(pp_jsonw *w, const char *k, double v);
void pp_jsonw_kv_bool(pp_jsonw *w, const char *k, int v);

/* ---- raw output (no comma handling) ---- */
void pp_jsonw_put(pp_jsonw *w, const char *s, size_t n);
void pp_jsonw_puts(pp_jsonw *w, const char *s);
void pp_jsonw_putc(pp_jsonw *w, char c);
void pp_jsonw_put_int(pp_jsonw *w, int64_t v);
void pp_jsonw_put_uint(pp_jsonw *w, uint64_t v);
void pp_jsonw_put_us(pp_jsonw *w, int64_t ns);
void pp_jsonw_put_double(pp_jsonw *w, double v);
/* A quoted, escaped JSON string. */
void pp_jsonw_put_str(pp_jsonw *w, const char *s, size_t n);

/* ---- direct output: hot loops that know a bound on what they write ----
 *
 *   char *p = pp_jsonw_room(w, 96);   (NULL: the writer has failed)
 *   p = pp_jsonw_w_lit(p, "{\"ts\":", 6);
 *   p = pp_jsonw_w_us(p, ns);
 *   pp_jsonw_commit(w, p);
 *
 * Between room and commit nothing else may write to w, and at most the
 * bytes asked for (at most PP_JSONW_ROOM_MAX) are written. */
#define PP_JSONW_ROOM_MAX 4096u

/* Flushes the buffer (jsonw.c); the inline calls below use it. */
void pp__jsonw_flush(pp_jsonw *w);
extern const char pp__jsonw_digits[201];  /* "00" "01" .. "99" */
extern const uint64_t pp__jsonw_pow10[20]; /* 1, 10, .. 10^19 */

static inline char *pp_jsonw_room(pp_jsonw *w, size_t n) {
  if (w->len + n > w->cap)
    pp__jsonw_flush(w);
  return w->err ? NULL : w->buf + w->len;
}

static inline void pp_jsonw_commit(pp_jsonw *w, char *end) {
  w->len = (size_t)(end - w->buf);
}

/* n bytes of s at p; returns the end. */
static inline char *pp_jsonw_w_lit(char *p, const char *s, size_t n) {
  memcpy(p, s, n);
  return p + n;
}

/* Decimal digits of v at p (at most 20); returns the end. */
static inline char *pp_jsonw_w_uint(char *p, uint64_t v) {
  size_t n = 1;
  while (n < 20 && v >= pp__jsonw_pow10[n])
    n++;
  char *e = p + n, *q = e;
  while (v >= 100) {
    unsigned d = (unsigned)(v % 100) * 2;
    v /= 100;
    *--q = pp__jsonw_digits[d + 1];
    *--q = pp__jsonw_digits[d];
  }
  if (v >= 10) {
    *--q = pp__jsonw_digits[v * 2 + 1];
    *--q = pp__jsonw_digits[v * 2];
  } else {
    *--q = (char)('0' + v);
  }
  return e;
}

static inline char *pp_jsonw_w_int(char *p, int64_t v) {
  if (v < 0) {
    *p++ = '-';
    return pp_jsonw_w_uint(p, 0 - (uint64_t)v);
  }
  return pp_jsonw_w_uint(p, (uint64_t)v);
}

/* Integer nanoseconds as microseconds with three decimals (as
 * pp_jsonw_us), at most 25 bytes; returns the end. */
static inline char *pp_jsonw_w_us(char *p, int64_t ns) {
  uint64_t m = (uint64_t)ns;
  if (ns < 0) {
    *p++ = '-';
    m = 0 - m;
  }
  p = pp_jsonw_w_uint(p, m / 1000);
  unsigned f = (unsigned)(m % 1000);
  p[0] = '.';
  p[1] = (char)('0' + f / 100);
  memcpy(p + 2, pp__jsonw_digits + (f % 100) * 2, 2);
  return p + 4;
}

/* ---- formatting helpers usable without a writer ---- */

/* Decimal digits of v into buf (at least 21 bytes), no NUL; returns the
 * length. */
size_t pp_jsonw_fmt_int(char *buf, int64_t v);
size_t pp_jsonw_fmt_uint(char *buf, uint64_t v);
/* Microseconds with three decimals into buf (at least 32 bytes). */
size_t pp_jsonw_fmt_us(char *buf, int64_t ns);
/* A finite double as the shortest round-tripping %.{15,16,17}g into buf (at
 * least 32 bytes), NUL-terminated; returns the length, or 0 when v is not
 * finite (nothing written but the NUL). */
size_t pp_jsonw_fmt_double(char *buf, double v);
/* Escape s (n bytes) into a malloc'ed, NUL-terminated, quoted JSON string;
 * *outlen gets its length. NULL when out of memory. */
char *pp_jsonw_quote(const char *s, size_t n, size_t *outlen);

#endif /* PP_JSONW_H */
