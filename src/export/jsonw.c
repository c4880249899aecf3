/* SPDX-License-Identifier: MIT */
/*
 * The buffered JSON writer declared in jsonw.h: hand-rolled integer and
 * fixed-point formatting, string escaping with strict UTF-8 validation
 * (ill-formed bytes become U+FFFD), and comma/nesting bookkeeping. All
 * output goes through one 64 KiB buffer flushed with fwrite.
 */
#include "jsonw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- buffer ---- */

/* Write out the buffer. A memory writer (no FILE) has nowhere to flush:
 * running out of room there is an error. */
void pp__jsonw_flush(pp_jsonw *w) {
  if (w->len && !w->err) {
    if (!w->out || fwrite(w->buf, 1, w->len, w->out) != w->len)
      w->err = 1;
  }
  w->len = 0;
}

/* Make room for n more bytes in the buffer (n <= w->cap). */
static inline int reserve(pp_jsonw *w, size_t n) {
  if (pp__unlikely(w->len + n > w->cap))
    pp__jsonw_flush(w);
  return !w->err;
}

void pp_jsonw_put(pp_jsonw *w, const char *s, size_t n) {
  if (pp__unlikely(w->err))
    return;
  if (pp__likely(w->len + n <= w->cap)) {
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    return;
  }
  pp__jsonw_flush(w);
  if (n <= w->cap / 2) {
    memcpy(w->buf, s, n);
    w->len = n;
  } else if (!w->err && fwrite(s, 1, n, w->out) != n) {
    w->err = 1;
  }
}

void pp_jsonw_puts(pp_jsonw *w, const char *s) {
  pp_jsonw_put(w, s, strlen(s));
}

void pp_jsonw_putc(pp_jsonw *w, char c) {
  if (reserve(w, 1))
    w->buf[w->len++] = c;
}

int pp_jsonw_init(pp_jsonw *w, FILE *out) {
  memset(w, 0, sizeof *w);
  w->out = out;
  w->lvl[0] = 1;
  w->buf = pp__malloc(PP_JSONW_BUF_SIZE);
  if (!w->buf) {
    w->err = 1;
    return -1;
  }
  w->cap = PP_JSONW_BUF_SIZE;
  return 0;
}

int pp_jsonw_finish(pp_jsonw *w) {
  if (w->buf)
    pp__jsonw_flush(w);
  pp__free(w->buf);
  w->buf = NULL;
  if (w->out && fflush(w->out) != 0)
    w->err = 1;
  if (w->out && ferror(w->out))
    w->err = 1;
  return w->err ? -1 : 0;
}

/* ---- numbers ---- */

const uint64_t pp__jsonw_pow10[20] = {
    UINT64_C(1),
    UINT64_C(10),
    UINT64_C(100),
    UINT64_C(1000),
    UINT64_C(10000),
    UINT64_C(100000),
    UINT64_C(1000000),
    UINT64_C(10000000),
    UINT64_C(100000000),
    UINT64_C(1000000000),
    UINT64_C(10000000000),
    UINT64_C(100000000000),
    UINT64_C(1000000000000),
    UINT64_C(10000000000000),
    UINT64_C(100000000000000),
    UINT64_C(1000000000000000),
    UINT64_C(10000000000000000),
    UINT64_C(100000000000000000),
    UINT64_C(1000000000000000000),
    UINT64_C(10000000000000000000)};

const char pp__jsonw_digits[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "6869707172737475767778798081828384858687888990919293949596979899";

size_t pp_jsonw_fmt_uint(char *buf, uint64_t v) {
  return (size_t)(pp_jsonw_w_uint(buf, v) - buf);
}

size_t pp_jsonw_fmt_int(char *buf, int64_t v) {
  return (size_t)(pp_jsonw_w_int(buf, v) - buf);
}

size_t pp_jsonw_fmt_us(char *buf, int64_t ns) {
  return (size_t)(pp_jsonw_w_us(buf, ns) - buf);
}

size_t pp_jsonw_fmt_double(char *buf, double v) {
  buf[0] = '\0';
  if (!isfinite(v))
    return 0;
  /* Whole numbers below 10^15 (counts, byte sizes, most samples) are
   * written as "%.15g" writes them, without its cost (the end of a run
   * formats tens of thousands of series points); -0 keeps its sign. */
  if (v > -1e15 && v < 1e15 && v == (double)(int64_t)v &&
      !(v == 0 && signbit(v)))
    return pp_jsonw_fmt_int(buf, (int64_t)v);
  static const char *const fmts[] = {"%.15g", "%.16g", "%.17g"};
  int n = 0;
  for (size_t i = 0; i < PP__ARRAY_LEN(fmts); i++) {
    n = snprintf(buf, 32, fmts[i], v);
    if (n <= 0 || n >= 32) {
      buf[0] = '\0';
      return 0;
    }
    if (i + 1 == PP__ARRAY_LEN(fmts) || strtod(buf, NULL) == v)
      break;
  }
  return (size_t)n;
}

void pp_jsonw_put_uint(pp_jsonw *w, uint64_t v) {
  if (reserve(w, 24))
    w->len += pp_jsonw_fmt_uint(w->buf + w->len, v);
}

void pp_jsonw_put_int(pp_jsonw *w, int64_t v) {
  if (reserve(w, 24))
    w->len += pp_jsonw_fmt_int(w->buf + w->len, v);
}

void pp_jsonw_put_us(pp_jsonw *w, int64_t ns) {
  if (reserve(w, 32))
    w->len += pp_jsonw_fmt_us(w->buf + w->len, ns);
}

void pp_jsonw_put_double(pp_jsonw *w, double v) {
  char tmp[32];
  size_t n = pp_jsonw_fmt_double(tmp, v);
  if (n)
    pp_jsonw_put(w, tmp, n);
  else
    pp_jsonw_put(w, "null", 4);
}

/* ---- strings ---- */

/* 1 for bytes copied verbatim inside a JSON string: printable ASCII other
 * than '"' and '\\'. */
/* clang-format off */
static const unsigned char plain_byte[256] = {
    ['\x20'] = 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x20 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,            /* 0x30 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,            /* 0x40 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,            /* 0x50 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,            /* 0x60 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,            /* 0x70 */
};
/* clang-format on */

/* Length of the well-formed UTF-8 sequence (2..4 bytes) starting at s, a
 * byte >= 0x80, or 0 when it is ill-formed; then *bad is the length of its
 * maximal ill-formed subpart (1..3), to be replaced by one U+FFFD. */
static size_t utf8_seq(const unsigned char *s, size_t n, size_t *bad) {
  unsigned char b = s[0], lo = 0x80, hi = 0xBF;
  size_t need;
  if (b >= 0xC2 && b <= 0xDF) {
    need = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    need = 3;
    if (b == 0xE0)
      lo = 0xA0; /* no overlongs */
    else if (b == 0xED)
      hi = 0x9F; /* no surrogates */
  } else if (b >= 0xF0 && b <= 0xF4) {
    need = 4;
    if (b == 0xF0)
      lo = 0x90; /* no overlongs */
    else if (b == 0xF4)
      hi = 0x8F; /* nothing above U+10FFFF */
  } else {
    *bad = 1; /* continuation byte, C0/C1, F5..FF */
    return 0;
  }
  if (n < 2 || s[1] < lo || s[1] > hi) {
    *bad = 1;
    return 0;
  }
  for (size_t i = 2; i < need; i++) {
    if (i >= n || (s[i] & 0xC0) != 0x80) {
      *bad = i;
      return 0;
    }
  }
  return need;
}

static const char hex_digits[] = "0123456789abcdef";

/* Escape n bytes of s into w (no quotes). */
static void put_escaped(pp_jsonw *w, const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    size_t j = i, bad = 1;
    for (;;) {
      while (j < n && plain_byte[s[j]])
        j++;
      if (j < n && s[j] >= 0x80) {
        size_t k = utf8_seq(s + j, n - j, &bad);
        if (k) {
          j += k;
          continue;
        }
      }
      break;
    }
    if (j > i)
      pp_jsonw_put(w, (const char *)s + i, j - i);
    if (j >= n)
      return;
    unsigned char c = s[j];
    if (!reserve(w, 6))
      return;
    char *o = w->buf + w->len;
    if (c >= 0x80) {
      /* ill-formed UTF-8: one U+FFFD for the maximal subpart */
      memcpy(o, "\xEF\xBF\xBD", 3);
      w->len += 3;
      i = j + bad;
    } else if (c == '"' || c == '\\') {
      o[0] = '\\';
      o[1] = (char)c;
      w->len += 2;
      i = j + 1;
    } else {
      memcpy(o, "\\u00", 4);
      o[4] = hex_digits[c >> 4];
      o[5] = hex_digits[c & 15];
      w->len += 6;
      i = j + 1;
    }
  }
}

void pp_jsonw_put_str(pp_jsonw *w, const char *s, size_t n) {
  pp_jsonw_putc(w, '"');
  put_escaped(w, (const unsigned char *)s, n);
  pp_jsonw_putc(w, '"');
}

char *pp_jsonw_quote(const char *s, size_t n, size_t *outlen) {
  /* A writer over a buffer big enough for the worst case (6 output bytes
   * per input byte, the quotes and a NUL), so it never needs to flush. */
  if (n > (SIZE_MAX - 3) / 6)
    return NULL;
  pp_jsonw w;
  memset(&w, 0, sizeof w);
  w.cap = 6 * n + 2;
  w.buf = pp__malloc(w.cap + 1);
  if (!w.buf)
    return NULL;
  pp_jsonw_put_str(&w, s, n);
  if (w.err) {
    pp__free(w.buf);
    return NULL;
  }
  w.buf[w.len] = '\0';
  if (outlen)
    *outlen = w.len;
  return w.buf;
}

/* ---- structure ---- */

static inline void sep(pp_jsonw *w) {
  if (w->after_key) {
    w->after_key = 0;
    return;
  }
  if (w->depth == 0)
    return;
  unsigned char *l = &w->lvl[w->depth];
  if (*l & 1) {
    *l &= (unsigned char)~1u;
    if (*l & 2)
      pp_jsonw_putc(w, '\n');
  } else if (*l & 2) {
    pp_jsonw_put(w, ",\n", 2);
  } else {
    pp_jsonw_putc(w, ',');
  }
}

static void open_level(pp_jsonw *w, char c, unsigned char flags) {
  sep(w);
  pp_jsonw_putc(w, c);
  if (w->depth >= PP_JSONW_MAX_DEPTH) {
    w->err = 1; /* a bug in the caller; refuse to write garbage */
    return;
  }
  w->lvl[++w->depth] = flags;
}

static void close_level(pp_jsonw *w, char c) {
  if (w->depth <= 0) {
    w->err = 1;
    return;
  }
  unsigned char l = w->lvl[w->depth--];
  if ((l & 2) && !(l & 1))
    pp_jsonw_putc(w, '\n');
  w->after_key = 0;
  pp_jsonw_putc(w, c);
}

void pp_jsonw_obj_begin(pp_jsonw *w) { open_level(w, '{', 1); }
void pp_jsonw_obj_end(pp_jsonw *w) { close_level(w, '}'); }
void pp_jsonw_arr_begin(pp_jsonw *w) { open_level(w, '[', 1); }
void pp_jsonw_arr_begin_lines(pp_jsonw *w) { open_level(w, '[', 3); }
void pp_jsonw_arr_end(pp_jsonw *w) { close_level(w, ']'); }

void pp_jsonw_key(pp_jsonw *w, const char *k) {
  sep(w);
  pp_jsonw_put_str(w, k, strlen(k));
  pp_jsonw_putc(w, ':');
  w->after_key = 1;
}

void pp_jsonw_strn(pp_jsonw *w, const char *s, size_t n) {
  sep(w);
  pp_jsonw_put_str(w, s, n);
}

void pp_jsonw_str(pp_jsonw *w, const char *s) {
  if (!s) {
    pp_jsonw_null(w);
    return;
  }
  pp_jsonw_strn(w, s, strlen(s));
}

void pp_jsonw_int(pp_jsonw *w, int64_t v) {
  sep(w);
  pp_jsonw_put_int(w, v);
}

void pp_jsonw_uint(pp_jsonw *w, uint64_t v) {
  sep(w);
  pp_jsonw_put_uint(w, v);
}

void pp_jsonw_double(pp_jsonw *w, double v) {
  sep(w);
  pp_jsonw_put_double(w, v);
}

void pp_jsonw_us(pp_jsonw *w, int64_t ns) {
  sep(w);
  pp_jsonw_put_us(w, ns);
}

void pp_jsonw_bool(pp_jsonw *w, int v) {
  sep(w);
  if (v)
    pp_jsonw_put(w, "true", 4);
  else
    pp_jsonw_put(w, "false", 5);
}

void pp_jsonw_null(pp_jsonw *w) {
  sep(w);
  pp_jsonw_put(w, "null", 4);
}

void pp_jsonw_elem(pp_jsonw *w) { sep(w); }

void pp_jsonw_value_raw(pp_jsonw *w, const char *json, size_t n) {
  sep(w);
  pp_jsonw_put(w, json, n);
}

void pp_jsonw_kv_str(pp_jsonw *w, const char *k, const char *s) {
  pp_jsonw_key(w, k);
  pp_jsonw_str(w, s);
}

void pp_jsonw_kv_int(pp_jsonw *w, const char *k, int64_t v) {
  pp_jsonw_key(w, k);
  pp_jsonw_int(w, v);
}

void pp_jsonw_kv_uint(pp_jsonw *w, const char *k, uint64_t v) {
  pp_jsonw_key(w, k);
  pp_jsonw_uint(w, v);
}

void pp_jsonw_kv_double(pp_jsonw *w, const char *k, double v) {
  pp_jsonw_key(w, k);
  pp_jsonw_double(w, v);
}

void pp_jsonw_kv_bool(pp_jsonw *w, const char *k, int v) {
  pp_jsonw_key(w, k);
  pp_jsonw_bool(w, v);
}
