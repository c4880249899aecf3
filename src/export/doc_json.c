/* SPDX-License-Identifier: MIT */
/*
 * Results tables in JSON (doc_json.h).
 */
#include "export/doc_json.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The length of key's prefix before its dot, 0 when it has none. */
static size_t prefix_len(const char *key) {
  const char *dot = strchr(key, '.');
  return dot ? (size_t)(dot - key) : 0;
}

static void objects(pp_jsonw *w, const pp_table *t, size_t max_rows,
                    pp_doc_row_fn extra, void *ctx);

static void value(pp_jsonw *w, const pp_col *c, const pp_cell *v) {
  switch (v->kind) {
  case PP_CELL_NUM:
    if ((c->flags & PP_COL_BOOL) ||
        (c->unit == PP_VALUE_ROW && v->unit == PP_VALUE_BOOL))
      pp_jsonw_bool(w, v->num != 0);
    else if (v->is_whole)
      pp_jsonw_int(w, v->whole);
    else if ((c->flags & PP_COL_INT) && fabs(v->num) < 9.2e18)
      pp_jsonw_int(w, (int64_t)v->num);
    else
      pp_jsonw_double(w, v->num);
    break;
  case PP_CELL_TEXT:
    pp_jsonw_str(w, v->text);
    break;
  case PP_CELL_UNAVAILABLE:
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "unavailable", v->text);
    pp_jsonw_obj_end(w);
    break;
  case PP_CELL_NONE:
  default:
    pp_jsonw_null(w);
    break;
  }
}

void pp_doc_json_rows(pp_jsonw *w, const pp_table *t, pp_doc_row_fn extra,
                      void *ctx) {
  pp_doc_json_rows_n(w, t, SIZE_MAX, extra, ctx);
}

void pp_doc_json_rows_n(pp_jsonw *w, const pp_table *t, size_t max_rows,
                        pp_doc_row_fn extra, void *ctx) {
  if (t && t->why) {
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_bool(w, "available", 0);
    pp_jsonw_kv_str(w, "reason", t->why);
    pp_jsonw_obj_end(w);
    return;
  }
  pp_jsonw_arr_begin_lines(w);
  objects(w, t, max_rows, extra, ctx);
  pp_jsonw_arr_end(w);
}

void pp_doc_json_objects(pp_jsonw *w, const pp_table *t, pp_doc_row_fn extra,
                         void *ctx) {
  objects(w, t, SIZE_MAX, extra, ctx);
}

/* Dotted keys ("a.b": member b of object a), adjacent: the object open
 * and its prefix. */
typedef struct nest {
  const char *open;
  size_t len;
} nest;

/* The key of the next member, key, given: opens or closes the nested
 * object it belongs to, then writes its own key. */
static void nested_key(pp_jsonw *w, nest *x, const char *key) {
  size_t n = prefix_len(key);
  if (x->open && (n != x->len || strncmp(key, x->open, n) != 0)) {
    pp_jsonw_obj_end(w);
    x->open = NULL;
  }
  if (n && !x->open) {
    char k[64];
    size_t m = n < sizeof k - 1 ? n : sizeof k - 1;
    memcpy(k, key, m);
    k[m] = '\0';
    pp_jsonw_key(w, k);
    pp_jsonw_obj_begin(w);
    x->open = key;
    x->len = n;
  }
  pp_jsonw_key(w, n ? key + n + 1 : key);
}

/* The nested object left open, closed. */
static void nest_end(pp_jsonw *w, nest *x) {
  if (x->open)
    pp_jsonw_obj_end(w);
  x->open = NULL;
}

/* Row r as an object, without the column skip (-1: none). */
static void row_object(pp_jsonw *w, const pp_table *t, size_t r, long skip,
                       pp_doc_row_fn extra, void *ctx) {
  pp_jsonw_obj_begin(w);
  nest x = {NULL, 0};
  for (size_t c = 0; c < t->ncols; c++) {
    const pp_col *col = &t->cols[c];
    if ((col->flags & PP_COL_VIEW_ONLY) || (long)c == skip)
      continue;
    nested_key(w, &x, col->key);
    value(w, col, pp_table_cell(t, r, c));
  }
  nest_end(w, &x);
  if (t->notes[r])
    pp_jsonw_kv_str(w, "notes", t->notes[r]);
  if (extra)
    extra(w, r, ctx);
  pp_jsonw_obj_end(w);
}

static void objects(pp_jsonw *w, const pp_table *t, size_t max_rows,
                    pp_doc_row_fn extra, void *ctx) {
  for (size_t r = 0, n = 0; t && r < t->nrows && n < max_rows; r++)
    if (pp_table_row_in_json(t, r)) {
      row_object(w, t, r, -1, extra, ctx);
      n++;
    }
}

void pp_doc_json_row(pp_jsonw *w, const pp_table *t, size_t r, long skip,
                     pp_doc_row_fn extra, void *ctx) {
  if (t && r < t->nrows)
    row_object(w, t, r, skip, extra, ctx);
}

void pp_doc_json_group(pp_jsonw *w, const pp_table *t, uint32_t group) {
  pp_jsonw_arr_begin(w);
  for (size_t r = 0; t && r < t->nrows; r++)
    if (t->row_info[r].group == group && pp_table_row_in_json(t, r))
      row_object(w, t, r, -1, NULL, NULL);
  pp_jsonw_arr_end(w);
}

void pp_doc_json_keyed(pp_jsonw *w, const pp_table *t, const char *key,
                       pp_doc_row_fn extra, void *ctx) {
  long kc = pp_table_col(t, key);
  for (size_t r = 0; t && kc >= 0 && r < t->nrows; r++) {
    const pp_cell *k = pp_table_cell(t, r, (size_t)kc);
    if (k->kind != PP_CELL_TEXT || !pp_table_row_in_json(t, r))
      continue;
    pp_jsonw_key(w, k->text);
    row_object(w, t, r, kc, extra, ctx);
  }
}

void pp_doc_json_facts(pp_jsonw *w, const pp_table *t) {
  long kk = pp_table_col(t, "key"), kv = pp_table_col(t, "value");
  nest x = {NULL, 0}; /* dotted keys, as the rows' dotted columns */
  for (size_t r = 0; t && t->facts && kk >= 0 && kv >= 0 && r < t->nrows;
       r++) {
    const pp_cell *k = pp_table_cell(t, r, (size_t)kk);
    if (k->kind != PP_CELL_TEXT)
      continue;
    nested_key(w, &x, k->text);
    value(w, &t->cols[kv], pp_table_cell(t, r, (size_t)kv));
  }
  nest_end(w, &x);
}

/* A table of facts' layout: each fact's key, label, unit and notes. */
static void facts_layout(pp_jsonw *w, const pp_table *t) {
  long kk = pp_table_col(t, "key"), kl = pp_table_col(t, "label"),
       kv = pp_table_col(t, "value");
  pp_jsonw_kv_str(w, "kind", "facts");
  pp_jsonw_key(w, "facts");
  pp_jsonw_arr_begin_lines(w);
  for (size_t r = 0; kk >= 0 && kl >= 0 && kv >= 0 && r < t->nrows; r++) {
    const pp_cell *k = pp_table_cell(t, r, (size_t)kk),
                  *l = pp_table_cell(t, r, (size_t)kl),
                  *v = pp_table_cell(t, r, (size_t)kv);
    if (k->kind != PP_CELL_TEXT || !pp_table_row_shown(t, r))
      continue;
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "key", k->text);
    pp_jsonw_kv_str(w, "label", l->kind == PP_CELL_TEXT ? l->text : k->text);
    pp_jsonw_kv_str(w, "unit", v->kind == PP_CELL_TEXT
                                   ? "text"
                                   : pp_value_unit_name(v->unit));
    if (t->notes[r])
      pp_jsonw_kv_str(w, "notes", t->notes[r]);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
}

/* "key": [the n texts] when there are any. */
static void texts(pp_jsonw *w, const char *key, const char *const *s,
                  size_t n) {
  if (!n)
    return;
  pp_jsonw_key(w, key);
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < n; i++)
    pp_jsonw_str(w, s[i]);
  pp_jsonw_arr_end(w);
}

void pp_doc_json_layout(pp_jsonw *w, const pp_table *t) {
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_str(w, "title", t->title);
  if (t->note)
    pp_jsonw_kv_str(w, "note", t->note);
  texts(w, "warnings", t->warnings, t->nwarnings);
  texts(w, "remarks", t->remarks, t->nremarks);
  if (t->facts) {
    facts_layout(w, t);
    pp_jsonw_obj_end(w);
    return;
  }
  if (t->empty)
    pp_jsonw_kv_str(w, "empty", t->empty);
  for (size_t c = 0; c < t->ncols; c++)
    if (t->cols[c].flags & PP_COL_HIDES_ROW)
      pp_jsonw_kv_str(w, "hidden_by", t->cols[c].key);
  pp_jsonw_key(w, "columns");
  pp_jsonw_arr_begin_lines(w);
  for (size_t c = 0; c < t->ncols; c++) {
    const pp_col *col = &t->cols[c];
    if (col->flags & PP_COL_JSON_ONLY)
      continue;
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "key", col->key);
    pp_jsonw_kv_str(w, "label", col->label);
    pp_jsonw_kv_str(w, "unit", pp_value_unit_name(col->unit));
    if (col->flags & PP_COL_BAR)
      pp_jsonw_kv_bool(w, "bar", 1);
    if (col->flags & PP_COL_DETAIL)
      pp_jsonw_kv_bool(w, "detail", 1);
    if (col->flags & PP_COL_BOOL)
      pp_jsonw_kv_bool(w, "bool", 1);
    if (col->flags & PP_COL_GROUP)
      pp_jsonw_kv_bool(w, "group", 1);
    if (col->none)
      pp_jsonw_kv_str(w, "none", col->none);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
  pp_jsonw_obj_end(w);
}

void pp_doc_json_layouts(pp_jsonw *w, const pp_doc *d) {
  if (!pp_doc_ntables(d))
    return;
  pp_jsonw_key(w, "layout");
  pp_jsonw_obj_begin(w);
  for (size_t i = 0; i < pp_doc_ntables(d); i++) {
    const pp_table *t = pp_doc_table_at(d, i);
    pp_jsonw_key(w, t->id);
    pp_doc_json_layout(w, t);
  }
  pp_jsonw_obj_end(w);
}
