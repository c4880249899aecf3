/* SPDX-License-Identifier: MIT */
/*
 * The one parser of PIPEPROF_* environment values (see env.h for the
 * rule): booleans, bounded decimal numbers, keywords, specs, names cut at
 * a UTF-8 boundary, and the escaping of values in error messages.
 */
#include "env.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

int pp__env_bool(const char *v, int *out) {
  static const char *const names[] = {"1",   "on",    "true", "yes", "0",
                                      "off", "false", "no",   ""};
  int i = pp__env_enum(v, names, sizeof names / sizeof *names);
  if (i < 0)
    return -1;
  *out = i < 4;
  return 0;
}

int pp__env_uint(const char *v, uint64_t lo, uint64_t hi, uint64_t *out) {
  if (!v || !*v)
    return -1;
  uint64_t x = 0;
  for (const char *p = v; *p; p++) {
    if (*p < '0' || *p > '9')
      return -1;
    unsigned d = (unsigned)(*p - '0');
    if (x > (UINT64_MAX - d) / 10)
      return -1;
    x = x * 10 + d;
  }
  if (x < lo || x > hi)
    return -1;
  *out = x;
  return 0;
}

int pp__env_enum(const char *v, const char *const *names, size_t n) {
  if (!v)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (strcasecmp(v, names[i]) == 0)
      return (int)i;
  return -1;
}

static int is_ctl(unsigned char c) { return (c > 0 && c < 0x20) || c == 0x7f; }

int pp__env_spec(const char *v) {
  if (!v)
    return -1;
  for (const unsigned char *p = (const unsigned char *)v; *p; p++)
    if (is_ctl(*p) || *p == ' ')
      return -1;
  return 0;
}

int pp__env_name(const char *v) {
  if (!v)
    return -1;
  for (const unsigned char *p = (const unsigned char *)v; *p; p++)
    if (is_ctl(*p))
      return -1;
  return 0;
}

/* Length of the well-formed UTF-8 character at p (1..4), or 0 when the
 * bytes there are not one (a stray continuation byte, an overlong or
 * surrogate form, a cut sequence). */
static size_t utf8_len(const unsigned char *p) {
  unsigned char c = p[0];
  if (c < 0x80)
    return 1;
  size_t n;
  uint32_t cp;
  if (c >= 0xc2 && c <= 0xdf)
    n = 2, cp = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3, cp = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4, cp = c & 0x07;
  else
    return 0;
  for (size_t i = 1; i < n; i++) {
    if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
      return 0;
    cp = cp << 6 | (p[i] & 0x3f);
  }
  if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
      (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
    return 0;
  return n;
}

size_t pp__env_cut_utf8(char *dst, size_t cap, const char *v) {
  if (!cap)
    return 0;
  const unsigned char *s = (const unsigned char *)(v ? v : "");
  size_t k = 0;
  while (s[k]) {
    size_t n = utf8_len(s + k);
    if (!n)
      n = 1; /* not UTF-8: a byte is a character */
    if (k + n > cap - 1)
      break;
    k += n;
  }
  memcpy(dst, s, k);
  dst[k] = 0;
  return k;
}

/* The escaped form of the character at s into tmp (at least 5 bytes);
 * returns its length and sets *n to the bytes of s it stands for. */
static size_t escape_one(const unsigned char *s, char tmp[8], size_t *n) {
  size_t k = utf8_len(s);
  /* Valid UTF-8 stays, except C1 controls (U+0080..U+009F). */
  if (k > 1 && !(s[0] == 0xc2 && s[1] < 0xa0)) {
    memcpy(tmp, s, k);
    *n = k;
    return k;
  }
  unsigned char c = *s;
  *n = 1;
  if (c == '"' || c == '\\')
    return (size_t)snprintf(tmp, 8, "\\%c", c);
  if (c == '\n')
    return (size_t)snprintf(tmp, 8, "\\n");
  if (c == '\r')
    return (size_t)snprintf(tmp, 8, "\\r");
  if (c == '\t')
    return (size_t)snprintf(tmp, 8, "\\t");
  if (c < 0x20 || c >= 0x7f)
    return (size_t)snprintf(tmp, 8, "\\x%02x", c);
  tmp[0] = (char)c;
  return 1;
}

void pp__env_escape(char *dst, size_t cap, const char *v) {
  const unsigned char *s = (const unsigned char *)(v ? v : "");
  char tmp[8];
  size_t n, total = 0;
  for (const unsigned char *p = s; *p && total < cap; p += n)
    total += escape_one(p, tmp, &n);
  /* All of it when it fits, else what fits before "...". */
  size_t lim = total <= cap - 1 ? cap - 1 : cap - 4, k = 0;
  for (; *s; s += n) {
    size_t len = escape_one(s, tmp, &n);
    if (k + len > lim)
      break;
    memcpy(dst + k, tmp, len);
    k += len;
  }
  if (*s)
    memcpy(dst + k, "...", 4);
  else
    dst[k] = 0;
}

void pp__env_invalid(const char *name, const char *v, const char *expected) {
  char esc[160];
  pp__env_escape(esc, sizeof esc, v);
  fprintf(stderr, "pipeprof: invalid %s=\"%s\": %s; profiling is off\n",
          name, esc, expected);
}
