/* SPDX-License-Identifier: MIT */
/*
 * A growing text buffer for the HTTP companion's pages. Out of memory is
 * sticky: later calls do nothing and pp_page_finish() gives NULL.
 */
#ifndef PP_HTTP_PAGE_H
#define PP_HTTP_PAGE_H

#include <stddef.h>

typedef struct pp_page {
  char *b;
  size_t len, cap;
  int oom;
} pp_page;

/* 0, or -1 when out of memory. */
int pp_page_init(pp_page *p);
void pp_page_put(pp_page *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void pp_page_putn(pp_page *p, const char *s, size_t n);
/* The text, malloc'd and NUL-terminated (*len its length), or NULL (and
 * the buffer freed) after an allocation failed. */
char *pp_page_finish(pp_page *p, size_t *len);

#endif /* PP_HTTP_PAGE_H */
