/* SPDX-License-Identifier: MIT */
/*
 * Names as display cells (text_cells.h).
 */
#include "export/text_cells.h"

#include <string.h>

/* Length in bytes of the cell at s (s[0] != 0); *ok is 0 when it must be
 * shown as '?'. */
static size_t cell_len(const unsigned char *s, int *ok) {
  unsigned char c = s[0];
  size_t n;
  *ok = 1;
  if (c < 0x80) {
    *ok = c >= 0x20 && c != 0x7f;
    return 1;
  }
  if (c >= 0xc2 && c <= 0xdf)
    n = 2;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4;
  else {
    *ok = 0;
    return 1;
  }
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80) {
      *ok = 0;
      return 1;
    }
  if (c == 0xc2 && s[1] < 0xa0) /* C1 control characters */
    *ok = 0;
  /* not well-formed (RFC 3629): overlong 3- and 4-byte forms, UTF-16
   * surrogates, code points above U+10FFFF */
  if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) ||
      (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
    *ok = 0;
  return *ok ? n : 1;
}

int pp_text_cols(const char *s) {
  int cols = 0;
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    int ok;
    p += cell_len(p, &ok);
    cols++;
  }
  return cols;
}

int pp_text_clean(char *dst, size_t len, const char *s, int width) {
  if (!len)
    return 0;
  int cols = pp_text_cols(s);
  if (width <= 0)
    width = cols;
  int keep = cols <= width ? cols : width > 3 ? width - 3 : width;
  const unsigned char *p = (const unsigned char *)s;
  size_t o = 0;
  int shown = 0;
  for (; shown < keep; shown++) {
    int ok;
    size_t n = cell_len(p, &ok);
    size_t put = ok ? n : 1;
    if (o + put >= len)
      break;
    if (ok)
      memcpy(dst + o, p, n);
    else
      dst[o] = '?';
    o += put;
    p += n;
  }
  for (; keep < cols && shown < width && o + 1 < len; shown++)
    dst[o++] = '.';
  dst[o] = '\0';
  return shown;
}

void pp_text_put(FILE *out, const char *s, int width, int pad, int right) {
  char buf[1024];
  int shown = pp_text_clean(buf, sizeof buf, s, width);
  if (pad && right)
    for (int i = shown; i < width; i++)
      fputc(' ', out);
  fputs(buf, out);
  if (pad && !right)
    for (int i = shown; i < width; i++)
      fputc(' ', out);
}
