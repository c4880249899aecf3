/* SPDX-License-Identifier: MIT */
/*
 * The results document (doc.h): tables in one arena.
 */
#include "doc.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../internal.h"
#include "../units.h"

/* Arena blocks; a block holds at least the largest string asked for. */
typedef struct block {
  struct block *next;
  size_t used, size;
  _Alignas(16) char data[];
} block;

#define BLOCK_MIN 8192u
#define TABLES_MAX 64u

struct pp_doc {
  block *blocks;
  pp_table tables[TABLES_MAX];
  size_t ntables;
  int oom;
};

static void *arena(pp_doc *d, size_t n) {
  n = (n + 15) & ~(size_t)15;
  block *b = d->blocks;
  if (!b || b->size - b->used < n) {
    size_t size = n > BLOCK_MIN ? n : BLOCK_MIN;
    block *nb = pp__malloc(sizeof *nb + size);
    if (!nb) {
      d->oom = 1;
      return NULL;
    }
    nb->next = d->blocks;
    nb->used = 0;
    nb->size = size;
    d->blocks = b = nb;
  }
  void *p = b->data + b->used;
  b->used += n;
  return p;
}

static const char *copy(pp_doc *d, const char *s) {
  size_t n = strlen(s) + 1;
  char *c = arena(d, n);
  if (c)
    memcpy(c, s, n);
  return c;
}

const char *pp_value_unit_name(pp_value_unit u) {
  static const char *const names[] = {
      "text",   "count",   "number",  "ns", "bytes", "rate",   "pct",
      "bytes/s", "joules", "seconds", "ms", "MHz",   "W",      "celsius",
      "fraction", "bool", "row"};
  return (unsigned)u < sizeof names / sizeof *names ? names[u] : "number";
}

pp_doc *pp_doc_new(void) { return pp__calloc(1, sizeof(pp_doc)); }

void pp_doc_free(pp_doc *d) {
  if (!d)
    return;
  for (size_t i = 0; i < d->ntables; i++) {
    pp__free(d->tables[i].cells);
    pp__free(d->tables[i].notes);
    pp__free(d->tables[i].row_info);
    pp__free(d->tables[i].remarks);
    pp__free(d->tables[i].warnings);
  }
  for (block *b = d->blocks; b;) {
    block *n = b->next;
    pp__free(b);
    b = n;
  }
  pp__free(d);
}

int pp_doc_ok(const pp_doc *d) { return d && !d->oom; }

pp_table *pp_doc_table(pp_doc *d, const char *id, const char *title,
                       const char *note, const pp_col *cols, size_t ncols) {
  if (!d || d->oom)
    return NULL;
  if (d->ntables >= TABLES_MAX) {
    d->oom = 1;
    return NULL;
  }
  /* the texts first: a table is added whole or not at all */
  const char *cid = copy(d, id), *ctitle = copy(d, title);
  const char *cnote = note ? copy(d, note) : NULL;
  if (d->oom)
    return NULL;
  pp_table *t = &d->tables[d->ntables++];
  memset(t, 0, sizeof *t);
  t->id = cid;
  t->title = ctitle;
  t->note = cnote;
  t->cols = cols;
  t->ncols = ncols;
  t->doc = d;
  return t;
}

static const pp_col fact_cols[] = {
    {"key", "key", PP_VALUE_TEXT, 0, NULL},
    {"label", "label", PP_VALUE_TEXT, 0, NULL},
    {"value", "value", PP_VALUE_ROW, 0, NULL},
    {"json_only", "JSON only", PP_VALUE_NUMBER,
     PP_COL_BOOL | PP_COL_JSON_ONLY | PP_COL_HIDES_ROW, NULL},
};

pp_table *pp_doc_facts(pp_doc *d, const char *id, const char *title,
                       const char *note) {
  pp_table *t = pp_doc_table(d, id, title, note, fact_cols,
                             sizeof fact_cols / sizeof *fact_cols);
  if (t)
    t->facts = 1;
  return t;
}

static pp_cell *cell(pp_table *t, long row, const char *key);

/* A new fact's row with its key and label, or -1. */
static long fact(pp_table *t, const char *key, const char *label) {
  if (!t || !t->facts)
    return -1;
  long r = pp_table_row(t);
  if (r >= 0) {
    pp_cell_text(t, r, "key", key);
    pp_cell_text(t, r, "label", label);
  }
  return r;
}

long pp_fact_num(pp_table *t, const char *key, const char *label, double v,
                 pp_value_unit unit) {
  long r = fact(t, key, label);
  pp_cell_num_unit(t, r, "value", v, unit);
  return r;
}

long pp_fact_int(pp_table *t, const char *key, const char *label, int64_t v,
                 pp_value_unit unit) {
  long r = fact(t, key, label);
  pp_cell_int(t, r, "value", v);
  pp_cell *c = cell(t, r, "value");
  if (c)
    c->unit = unit;
  return r;
}

long pp_fact_text(pp_table *t, const char *key, const char *label,
                  const char *s) {
  long r = fact(t, key, label);
  pp_cell_text(t, r, "value", s);
  return r;
}

void pp_facts_flush(pp_table *t) {
  if (t && t->facts)
    t->flush = 1;
}

void pp_fact_json_only(pp_table *t, long row) {
  if (t && t->facts && row >= 0)
    pp_cell_num(t, row, "json_only", 1);
}

const pp_cell *pp_fact_find(const pp_table *t, const char *key) {
  long kk = pp_table_col(t, "key"), kv = pp_table_col(t, "value");
  for (size_t r = 0; t && t->facts && kk >= 0 && kv >= 0 && r < t->nrows;
       r++) {
    const pp_cell *k = pp_table_cell(t, r, (size_t)kk);
    if (k->kind == PP_CELL_TEXT && strcmp(k->text, key) == 0)
      return pp_table_cell(t, r, (size_t)kv);
  }
  return NULL;
}

long pp_fact_bool(pp_table *t, const char *key, const char *label, int v) {
  return pp_fact_num(t, key, label, v ? 1 : 0, PP_VALUE_BOOL);
}

long pp_fact_unavailable(pp_table *t, const char *key, const char *label,
                         const char *why) {
  long r = fact(t, key, label);
  pp_cell_unavailable(t, r, "value", why);
  return r;
}

size_t pp_doc_ntables(const pp_doc *d) { return d ? d->ntables : 0; }

const pp_table *pp_doc_table_at(const pp_doc *d, size_t i) {
  return d && i < d->ntables ? &d->tables[i] : NULL;
}

const pp_table *pp_doc_find(const pp_doc *d, const char *id) {
  for (size_t i = 0; d && i < d->ntables; i++)
    if (d->tables[i].id && strcmp(d->tables[i].id, id) == 0)
      return &d->tables[i];
  return NULL;
}

void pp_table_unavailable(pp_table *t, const char *why) {
  if (t)
    t->why = copy(t->doc, why ? why : "not measured");
}

void pp_table_empty(pp_table *t, const char *text) {
  if (t)
    t->empty = text ? copy(t->doc, text) : NULL;
}

/* Append the text fmt, ap makes to the list *list of *n. */
static void add_text(pp_table *t, const char ***list, size_t *n,
                     const char *fmt, va_list ap) {
  if (!t || t->doc->oom)
    return;
  char add[512];
  vsnprintf(add, sizeof add, fmt, ap);
  const char **r = pp__realloc(*list, (*n + 1) * sizeof **list);
  if (!r) {
    t->doc->oom = 1;
    return;
  }
  *list = r;
  if ((r[*n] = copy(t->doc, add)))
    (*n)++;
}

void pp_table_remark(pp_table *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (t)
    add_text(t, &t->remarks, &t->nremarks, fmt, ap);
  va_end(ap);
}

void pp_table_warning(pp_table *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (t)
    add_text(t, &t->warnings, &t->nwarnings, fmt, ap);
  va_end(ap);
}

long pp_table_row(pp_table *t) {
  if (!t || t->doc->oom)
    return -1;
  if (t->nrows == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 8;
    pp_cell *c = pp__realloc(t->cells, cap * t->ncols * sizeof *c);
    if (!c) {
      t->doc->oom = 1;
      return -1;
    }
    t->cells = c;
    const char **n = pp__realloc(t->notes, cap * sizeof *n);
    if (!n) {
      t->doc->oom = 1;
      return -1;
    }
    t->notes = n;
    pp_row_info *ri = pp__realloc(t->row_info, cap * sizeof *ri);
    if (!ri) {
      t->doc->oom = 1;
      return -1;
    }
    t->row_info = ri;
    t->cap = cap;
  }
  memset(&t->cells[t->nrows * t->ncols], 0, t->ncols * sizeof *t->cells);
  t->notes[t->nrows] = NULL;
  t->row_info[t->nrows] = (pp_row_info){0, 0};
  return (long)t->nrows++;
}

void pp_cell_share(pp_table *t, long row, const char *key, double part,
                   double whole) {
  if (whole > 0)
    pp_cell_num(t, row, key, part / whole * 100.0);
}

void pp_row_group(pp_table *t, long row, uint32_t group) {
  if (t && row >= 0 && (size_t)row < t->nrows)
    t->row_info[row].group = group;
}

void pp_row_view_only(pp_table *t, long row) {
  if (t && row >= 0 && (size_t)row < t->nrows)
    t->row_info[row].view_only = 1;
}

int pp_table_row_in_json(const pp_table *t, size_t r) {
  return t && r < t->nrows && !t->row_info[r].view_only;
}

int pp_table_row_shown(const pp_table *t, size_t r) {
  for (size_t c = 0; c < t->ncols; c++)
    if (t->cols[c].flags & PP_COL_HIDES_ROW) {
      const pp_cell *v = pp_table_cell(t, r, c);
      if (v->kind == PP_CELL_NUM && v->num != 0)
        return 0;
    }
  return 1;
}

size_t pp_table_rows_shown(const pp_table *t) {
  size_t n = 0;
  for (size_t r = 0; t && r < t->nrows; r++)
    n += (size_t)pp_table_row_shown(t, r);
  return n;
}

long pp_table_col(const pp_table *t, const char *key) {
  for (size_t c = 0; t && c < t->ncols; c++)
    if (strcmp(t->cols[c].key, key) == 0)
      return (long)c;
  return -1;
}

static pp_cell *cell(pp_table *t, long row, const char *key) {
  long c = pp_table_col(t, key);
  if (!t || row < 0 || (size_t)row >= t->nrows || c < 0)
    return NULL;
  return &t->cells[(size_t)row * t->ncols + (size_t)c];
}

void pp_cell_num(pp_table *t, long row, const char *key, double v) {
  pp_cell *c = cell(t, row, key);
  if (c && !isnan(v)) {
    c->kind = PP_CELL_NUM;
    c->num = v;
    c->is_whole = 0;
  }
}

void pp_cell_int(pp_table *t, long row, const char *key, int64_t v) {
  pp_cell *c = cell(t, row, key);
  if (c) {
    c->kind = PP_CELL_NUM;
    c->num = (double)v;
    c->whole = v;
    c->is_whole = 1;
  }
}

void pp_cell_whole(pp_table *t, long row, const char *key, double v) {
  if (v == floor(v) && fabs(v) < 9.2e18) /* NAN fails both */
    pp_cell_int(t, row, key, (int64_t)v);
  else
    pp_cell_num(t, row, key, v);
}

void pp_cell_count(pp_table *t, long row, const char *key, uint64_t v) {
  if (v <= (uint64_t)INT64_MAX)
    pp_cell_int(t, row, key, (int64_t)v);
  else
    pp_cell_num(t, row, key, (double)v);
}

void pp_cell_num_unit(pp_table *t, long row, const char *key, double v,
                      pp_value_unit unit) {
  pp_cell *c = cell(t, row, key);
  if (c && !isnan(v)) {
    c->kind = PP_CELL_NUM;
    c->num = v;
    c->is_whole = 0;
    c->unit = unit;
  }
}

void pp_cell_text(pp_table *t, long row, const char *key, const char *s) {
  pp_cell *c = cell(t, row, key);
  if (c && s && (c->text = copy(t->doc, s)))
    c->kind = PP_CELL_TEXT;
}

void pp_cell_unavailable(pp_table *t, long row, const char *key,
                         const char *why) {
  pp_cell *c = cell(t, row, key);
  if (c && (c->text = copy(t->doc, why ? why : "not measured")))
    c->kind = PP_CELL_UNAVAILABLE;
}

void pp_row_note(pp_table *t, long row, const char *fmt, ...) {
  if (!t || row < 0 || (size_t)row >= t->nrows || t->doc->oom)
    return;
  char add[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(add, sizeof add, fmt, ap);
  va_end(ap);
  const char *old = t->notes[row];
  size_t n = (old ? strlen(old) + 2 : 0) + strlen(add) + 1;
  char *s = arena(t->doc, n);
  if (!s)
    return;
  snprintf(s, n, "%s%s%s", old ? old : "", old ? "; " : "", add);
  t->notes[row] = s;
}

char *pp_cell_format(const pp_col *c, const pp_cell *v, char *buf,
                     size_t len) {
  switch (v->kind) {
  case PP_CELL_NONE:
    snprintf(buf, len, "%s", c->none ? c->none : "-");
    return buf;
  case PP_CELL_TEXT:
    snprintf(buf, len, "%s", v->text);
    return buf;
  case PP_CELL_UNAVAILABLE:
    snprintf(buf, len, "unavailable: %s", v->text);
    return buf;
  case PP_CELL_NUM:
    break;
  }
  pp_value_unit u = c->unit == PP_VALUE_ROW ? v->unit : c->unit;
  if ((c->flags & PP_COL_BOOL) || u == PP_VALUE_BOOL) {
    /* "yes", or the column's none ("no") */
    snprintf(buf, len, "%s", v->num != 0 ? "yes" : c->none ? c->none : "no");
    return buf;
  }
  double x = v->num;
  char num[40];
  switch (u) {
  case PP_VALUE_COUNT:
    if (v->is_whole)
      snprintf(buf, len, "%" PRId64, v->whole);
    else if (fabs(x) < 9.2e18 && x == floor(x))
      snprintf(buf, len, "%" PRId64, (int64_t)x);
    else
      pp_format_sig3(buf, len, x);
    return buf;
  case PP_VALUE_NS:
    return pp_format_ns(buf, len, x);
  case PP_VALUE_BYTES:
    return pp__fmt_bytes(buf, len, x);
  case PP_VALUE_RATE:
    return pp_format_rate(buf, len, x);
  case PP_VALUE_PCT:
    return pp_format_pct(buf, len, x);
  case PP_VALUE_FRACTION:
    return pp_format_pct(buf, len, x * 100);
  case PP_VALUE_BYTE_RATE:
    return pp_format_byte_rate(buf, len, x);
  case PP_VALUE_JOULES:
    return pp_format_joules(buf, len, x);
  case PP_VALUE_SECONDS:
    return pp_format_ns(buf, len, x * 1e9);
  case PP_VALUE_MS:
    return pp_format_ns(buf, len, x * 1e6);
  case PP_VALUE_MHZ:
  case PP_VALUE_WATTS:
  case PP_VALUE_CELSIUS:
    pp_format_sig3(num, sizeof num, x);
    snprintf(buf, len, "%s %s", num,
             u == PP_VALUE_MHZ     ? "MHz"
             : u == PP_VALUE_WATTS ? "W"
                                   : "\u00b0C");
    return buf;
  case PP_VALUE_TEXT:
  case PP_VALUE_NUMBER:
  case PP_VALUE_BOOL:
  case PP_VALUE_ROW:
  default:
    return pp_format_sig3(buf, len, x);
  }
}
