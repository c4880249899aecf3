/* SPDX-License-Identifier: MIT */
/*
 * A program's names in the text report: split into display cells (a
 * valid UTF-8 sequence of a printable character is one cell, any other
 * byte one cell shown as '?'), cut to a width with "..." and padded by
 * cells, not bytes, so that columns line up under any name.
 */
#ifndef PP_EXPORT_TEXT_CELLS_H
#define PP_EXPORT_TEXT_CELLS_H

#include <stddef.h>
#include <stdio.h>

/* The display cells of s. */
int pp_text_cols(const char *s);
/* s as shown in at most width cells (width <= 0: whole; cut with "..."
 * when longer) into dst; the cells written. */
int pp_text_clean(char *dst, size_t len, const char *s, int width);
/* Print s in at most width cells, padded with spaces to width when pad
 * is set (on the left when right is set). */
void pp_text_put(FILE *out, const char *s, int width, int pad, int right);

#endif /* PP_EXPORT_TEXT_CELLS_H */
