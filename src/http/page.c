/* SPDX-License-Identifier: MIT */
/* A growing text buffer (page.h). */
#include "page.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pp_page_init(pp_page *p) {
  p->len = 0;
  p->oom = 0;
  p->cap = 4096;
  p->b = malloc(p->cap);
  if (!p->b) {
    p->oom = 1;
    return -1;
  }
  p->b[0] = 0;
  return 0;
}

static int reserve(pp_page *p, size_t more) {
  if (p->oom)
    return -1;
  if (p->cap - p->len > more)
    return 0;
  size_t cap = (p->cap + more + 1) * 2;
  char *b = realloc(p->b, cap);
  if (!b) {
    p->oom = 1;
    return -1;
  }
  p->b = b;
  p->cap = cap;
  return 0;
}

void pp_page_put(pp_page *p, const char *fmt, ...) {
  for (int tries = 0; tries < 2 && !p->oom; tries++) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p->b + p->len, p->cap - p->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
      p->oom = 1;
      return;
    }
    if ((size_t)n < p->cap - p->len) {
      p->len += (size_t)n;
      return;
    }
    reserve(p, (size_t)n);
  }
}

void pp_page_putn(pp_page *p, const char *s, size_t n) {
  if (reserve(p, n) != 0)
    return;
  memcpy(p->b + p->len, s, n);
  p->len += n;
  p->b[p->len] = 0;
}

char *pp_page_finish(pp_page *p, size_t *len) {
  if (p->oom) {
    free(p->b);
    p->b = NULL;
    return NULL;
  }
  *len = p->len;
  return p->b;
}
