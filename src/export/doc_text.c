/* SPDX-License-Identifier: MIT */
/*
 * Results tables as text (doc_text.h).
 */
#include "export/doc_text.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define NAME_MAX_BYTES 28
#define CELL 160

/* s as the report prints a program's text: control bytes as '?', cut at
 * max bytes (0: whole). */
static void clean(char *dst, size_t len, const char *s, size_t max) {
  size_t n = 0;
  for (; s[n] && n + 1 < len && (!max || n < max); n++) {
    unsigned char c = (unsigned char)s[n];
    dst[n] = c < 0x20 || c == 0x7f ? '?' : (char)c;
  }
  dst[n] = '\0';
}

/* Columns [c0, c1) are one group: adjacent, shown, one label. */
static size_t group_end(const pp_table *t, size_t c0, unsigned want_detail) {
  size_t c1 = c0 + 1;
  while (c1 < t->ncols && !(t->cols[c1].flags & PP_COL_JSON_ONLY) &&
         (t->cols[c1].flags & PP_COL_DETAIL) == want_detail &&
         strcmp(t->cols[c1].label, t->cols[c0].label) == 0)
    c1++;
  return c1;
}

static int shown(const pp_col *c, unsigned detail) {
  return !(c->flags & PP_COL_JSON_ONLY) && (c->flags & PP_COL_DETAIL) == detail;
}

/* The text of row r's group [c0, c1): its cells joined by " / "; 0 when
 * it says nothing (every cell a zero, or no value and no text for it). */
static int group_text(const pp_table *t, size_t r, size_t c0, size_t c1,
                      char *out, size_t len, size_t name_max) {
  int any = 0;
  const char *why = NULL; /* said once, after the group's values */
  out[0] = '\0';
  for (size_t c = c0; c < c1; c++) {
    char b[CELL], safe[CELL];
    const pp_cell *v = pp_table_cell(t, r, c);
    any |= (v->kind == PP_CELL_NUM && v->num != 0) ||
           v->kind == PP_CELL_TEXT || v->kind == PP_CELL_UNAVAILABLE ||
           (v->kind == PP_CELL_NONE && t->cols[c].none);
    if (v->kind == PP_CELL_UNAVAILABLE) {
      snprintf(b, sizeof b, "unavailable");
      if (!why)
        why = v->text;
    } else {
      pp_cell_format(&t->cols[c], v, b, sizeof b);
    }
    clean(safe, sizeof safe, b, t->cols[c].unit == PP_VALUE_TEXT ? name_max : 0);
    size_t n = strlen(out);
    snprintf(out + n, len - n, "%s%s", c > c0 ? " / " : "", safe);
  }
  if (why) {
    char safe[CELL * 2];
    clean(safe, sizeof safe, why, 0);
    size_t n = strlen(out);
    snprintf(out + n, len - n, " (%s)", safe);
  }
  return any;
}

void pp_doc_text_table(FILE *out, const pp_table *t) {
  if (t && t->why) {
    char s[512];
    clean(s, sizeof s, t->why, 0);
    fprintf(out, "\n%s\nunavailable: %s\n", t->title, s);
    return;
  }
  if (!t || !t->nrows)
    return;
  fprintf(out, "\n%s", t->title);
  if (t->note)
    fprintf(out, " (%s)", t->note);
  fputc('\n', out);
  /* the groups of the row line and their widths */
  size_t g0[64], g1[64], ng = 0;
  int width[64];
  for (size_t c = 0; c < t->ncols && ng < 64;) {
    if (!shown(&t->cols[c], 0)) {
      c++;
      continue;
    }
    g0[ng] = c;
    g1[ng] = group_end(t, c, 0);
    width[ng] = (int)strlen(t->cols[c].label);
    c = g1[ng++];
  }
  char *cells = malloc(t->nrows * ng * CELL);
  if (!cells)
    return;
  for (size_t r = 0; r < t->nrows; r++)
    for (size_t g = 0; g < ng; g++) {
      char *s = cells + (r * ng + g) * CELL;
      group_text(t, r, g0[g], g1[g], s, CELL,
                 g == 0 ? NAME_MAX_BYTES : 0);
      if ((int)strlen(s) > width[g])
        width[g] = (int)strlen(s);
    }
  for (size_t g = 0; g < ng; g++)
    fprintf(out, g ? "  %*s" : "%-*s", width[g], t->cols[g0[g]].label);
  fputc('\n', out);
  for (size_t r = 0; r < t->nrows; r++) {
    for (size_t g = 0; g < ng; g++)
      fprintf(out, g ? "  %*s" : "%-*s", width[g],
              cells + (r * ng + g) * CELL);
    fputc('\n', out);
    /* the row's detail groups, then its notes */
    int first = 1;
    for (size_t c = 0; c < t->ncols;) {
      if (!shown(&t->cols[c], PP_COL_DETAIL)) {
        c++;
        continue;
      }
      size_t e = group_end(t, c, PP_COL_DETAIL);
      char s[CELL * 3];
      if (group_text(t, r, c, e, s, sizeof s, 0)) {
        const char *label = t->cols[c].label;
        fprintf(out, "%s%s%s%s", first ? "  " : "; ", label,
                strchr(label, ':') ? " " : ": ", s);
        first = 0;
      }
      c = e;
    }
    if (!first)
      fputc('\n', out);
    if (t->notes[r]) {
      char s[1024];
      clean(s, sizeof s, t->notes[r], 0);
      fprintf(out, "  note: %s\n", s);
    }
  }
  free(cells);
}
