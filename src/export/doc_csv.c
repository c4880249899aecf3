/* SPDX-License-Identifier: MIT */
/*
 * Results tables as CSV (doc_csv.h). Output is buffered through the JSON
 * writer's raw calls.
 */
#include "export/doc_csv.h"

#include <string.h>

#include "export/jsonw.h"
#include "export/text_cells.h"
#include "internal.h"

static void put_field(pp_jsonw *w, const char *raw) {
  /* a program's text as the text report shows it: control characters
   * and bytes that are not UTF-8 as '?', so that no name is a terminal
   * escape when the file is printed */
  size_t len = strlen(raw) + 1;
  char small[256], *buf = len <= sizeof small ? small : pp__malloc(len);
  if (buf)
    pp_text_clean(buf, len, raw, 0);
  else /* no memory for the whole: cut, with "..." */
    pp_text_clean(buf = small, sizeof small, raw, 200);
  const char *s = buf;
  size_t n = strlen(s);
  if (strcspn(s, ",\"\r\n") == n) {
    pp_jsonw_put(w, s, n);
    if (buf != small)
      pp__free(buf);
    return;
  }
  pp_jsonw_putc(w, '"');
  for (const char *q; (q = strchr(s, '"')) != NULL; s = q + 1) {
    pp_jsonw_put(w, s, (size_t)(q - s) + 1);
    pp_jsonw_putc(w, '"');
  }
  pp_jsonw_puts(w, s);
  pp_jsonw_putc(w, '"');
  if (buf != small)
    pp__free(buf);
}

static void put_cell(pp_jsonw *w, const pp_col *c, const pp_cell *v) {
  if (v->kind == PP_CELL_TEXT) {
    put_field(w, v->text);
  } else if (v->kind == PP_CELL_NUM) {
    if ((c->flags & PP_COL_BOOL) ||
        (c->unit == PP_VALUE_ROW && v->unit == PP_VALUE_BOOL)) {
      pp_jsonw_puts(w, v->num != 0 ? "true" : "false");
    } else if (v->is_whole) {
      pp_jsonw_put_int(w, v->whole);
    } else {
      char b[32];
      pp_jsonw_put(w, b, pp_jsonw_fmt_double(b, v->num)); /* "" if not finite */
    }
  }
}

int pp_doc_csv(FILE *out, const pp_table *t, const char *first_key) {
  pp_jsonw w;
  if (!out || !t)
    return -1;
  if (pp_jsonw_init(&w, out) != 0) {
    pp_jsonw_finish(&w);
    return -1;
  }
  int first = 1;
  for (size_t c = 0; c < t->ncols; c++) {
    if (t->cols[c].flags & PP_COL_VIEW_ONLY)
      continue;
    if (!first)
      pp_jsonw_putc(&w, ',');
    put_field(&w, first && first_key ? first_key : t->cols[c].key);
    first = 0;
  }
  pp_jsonw_put(&w, "\r\n", 2);
  for (size_t r = 0; r < t->nrows; r++) {
    first = 1;
    for (size_t c = 0; c < t->ncols; c++) {
      if (t->cols[c].flags & PP_COL_VIEW_ONLY)
        continue;
      if (!first)
        pp_jsonw_putc(&w, ',');
      put_cell(&w, &t->cols[c], pp_table_cell(t, r, c));
      first = 0;
    }
    pp_jsonw_put(&w, "\r\n", 2);
  }
  return pp_jsonw_finish(&w);
}
