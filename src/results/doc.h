/* SPDX-License-Identifier: MIT */
/*
 * The results document (docs/internals/results.md): what an analysis
 * found, as typed tables that every view lays out and none computes.
 * A table has columns (a key for the JSON document, a label for the text
 * and HTML tables, a unit that says how every view formats the value)
 * and rows of cells; a cell holds a number, a text, nothing (the
 * column's text for "no value", such as "unbounded"), or "unavailable"
 * with its reason, a state of its own, never a 0. Per row, notes say
 * what a reader must know about it (items not paired, waits never
 * closed).
 *
 * Producers: the analysis of a trace (analyze/) and the live engine's
 * endpoint (http/api.c) fill the same tables through the same builders
 * (results/queues.h, ...). Views: export/doc_text.c (the text report),
 * export/doc_json.c (the summary JSON and /api/v1, with the tables'
 * layout for the HTML page, which draws them with one renderer).
 *
 * A document owns everything in it (one arena): strings given to it are
 * copied. Out of memory is sticky: the builders do nothing more and
 * pp_doc_ok() says 0.
 */
#ifndef PP_RESULTS_DOC_H
#define PP_RESULTS_DOC_H

#include <stddef.h>
#include <stdint.h>

/* How a value is shown: units.h in C, fmtUnit in report.js, both checked
 * against tests/fixtures/units.tsv. */
typedef enum pp_value_unit {
  PP_VALUE_TEXT = 0,   /* a name or a phrase */
  PP_VALUE_COUNT,      /* a whole number, shown exactly */
  PP_VALUE_NUMBER,     /* three significant digits */
  PP_VALUE_NS,         /* a duration in nanoseconds */
  PP_VALUE_BYTES,
  PP_VALUE_RATE,       /* per second */
  PP_VALUE_PCT,        /* a percentage (0..100) */
  PP_VALUE_BYTE_RATE,  /* bytes per second */
  PP_VALUE_JOULES,
  PP_VALUE_SECONDS,    /* a duration in seconds (shown as ns are) */
  PP_VALUE_MS,         /* a duration in milliseconds */
  PP_VALUE_MHZ,        /* three significant digits and the unit */
  PP_VALUE_WATTS,
  PP_VALUE_CELSIUS,
  PP_VALUE_FRACTION, /* a share as a fraction (0..1) in JSON, shown as a
                        percentage (efficiency) */
  PP_VALUE_BOOL,     /* true or false in JSON, "yes" or "no" in the views */
  PP_VALUE_ROW /* a column whose rows differ: each cell says its unit
                  (pp_cell_num_unit); in JSON the row's "unit" member */
} pp_value_unit;

/* The unit's name in the JSON layout and report.js ("ns", "pct", ...). */
const char *pp_value_unit_name(pp_value_unit u);

/* Column flags. */
enum {
  PP_COL_INT = 1u,       /* a whole number in JSON (else a double) */
  PP_COL_JSON_ONLY = 2u, /* in the document, not in the tables */
  PP_COL_VIEW_ONLY = 4u, /* in the tables, not in the JSON (which has the
                            figure in a member of its own) */
  PP_COL_BAR = 8u,       /* a share drawn as a bar (HTML) */
  PP_COL_DETAIL = 16u,   /* the text report shows it on a line under the
                            row ("label: value"); HTML as a column */
  PP_COL_BOOL = 32u,     /* true or false in JSON (a number: non-zero) */
  PP_COL_HIDES_ROW = 64u, /* a BOOL column: a row where it is true is in
                             the JSON document, not in the tables (the
                             profiler's own threads); the layout's
                             "hidden_by" */
  PP_COL_GROUP = 128u /* the rows' group (pp_row_group): the text report
                         says it on the group's first row only; the
                         layout's "group" */
};

/* What the views need to know of a row besides its cells. */
typedef struct pp_row_info {
  uint32_t group;     /* the group of rows it belongs to (pp_row_group: a
                         stage's nested zones), 0 none */
  unsigned view_only; /* in the tables, not in the JSON, which has its
                         figures in members of their own (an operator's
                         other shapes) */
} pp_row_info;

typedef struct pp_col {
  const char *key;   /* JSON member; dotted ("depth.mean") for a member of
                        a nested object, whose columns are adjacent */
  const char *label; /* header; adjacent columns with one label are one
                        cell, their values joined by " / " */
  pp_value_unit unit;
  unsigned flags;
  const char *none; /* the text of "no value" (NULL: "-", null in JSON) */
} pp_col;

typedef enum pp_cell_kind {
  PP_CELL_NONE = 0, /* no value: the column's none */
  PP_CELL_NUM,
  PP_CELL_TEXT,
  PP_CELL_UNAVAILABLE /* text: why */
} pp_cell_kind;

typedef struct pp_cell {
  pp_cell_kind kind;
  double num;
  int64_t whole; /* exact, when is_whole (pp_cell_int): num rounds it */
  int is_whole;
  const char *text;
  pp_value_unit unit; /* a PP_VALUE_ROW column's cell: its own unit */
} pp_cell;

typedef struct pp_table {
  const char *id;    /* the JSON member and the HTML section ("queues") */
  const char *title; /* "queues" */
  const char *note;  /* what the figures are, one sentence or NULL */
  const pp_col *cols; /* static: the producer's table definition */
  size_t ncols;
  pp_cell *cells; /* nrows * ncols, row-major */
  const char **notes; /* per row: "; "-joined notes, or NULL */
  pp_row_info *row_info; /* per row */
  size_t nrows, cap;
  const char *why; /* the whole table is unavailable: why (no rows) */
  const char *empty; /* what the views say when it has no rows (NULL:
                        nothing, the section is left out) */
  const char **remarks; /* what a reader must know about the whole table,
                           said after it: nremarks of them */
  size_t nremarks;
  const char **warnings; /* what makes its figures doubtful (events
                            dropped, a damaged file), said before the
                            remarks as warnings: nwarnings of them */
  size_t nwarnings;
  int facts; /* a table of facts (pp_doc_facts) */
  int flush; /* facts laid out flush left, as a report's header
                (pp_facts_flush) */
  struct pp_doc *doc;
} pp_table;

typedef struct pp_doc pp_doc;

pp_doc *pp_doc_new(void);
void pp_doc_free(pp_doc *d);
/* 1 while no allocation failed. */
int pp_doc_ok(const pp_doc *d);

/* A new, empty table of d (cols static), or NULL when out of memory. */
pp_table *pp_doc_table(pp_doc *d, const char *id, const char *title,
                       const char *note, const pp_col *cols, size_t ncols);
/* A new, empty table of facts: each row one figure with a key (its JSON
 * member), a label and a value in its own unit, laid out as "label:
 * value" lines in the text, as members of the object the caller opened in
 * JSON (pp_doc_json_facts) and as a grid of facts on the page (the
 * layout's "kind": "facts"). NULL when out of memory. */
pp_table *pp_doc_facts(pp_doc *d, const char *id, const char *title,
                       const char *note);
/* Add a fact to t (pp_doc_facts): a number in unit (NAN: no value, shown
 * "-" and null), a whole number kept exactly, a text (NULL: no value), a
 * boolean, unavailable with why. Each returns the fact's row (for
 * pp_row_note: what a reader must know about it) or -1. */
long pp_fact_num(pp_table *t, const char *key, const char *label, double v,
                 pp_value_unit unit);
long pp_fact_int(pp_table *t, const char *key, const char *label, int64_t v,
                 pp_value_unit unit);
long pp_fact_text(pp_table *t, const char *key, const char *label,
                  const char *s);
long pp_fact_bool(pp_table *t, const char *key, const char *label, int v);
long pp_fact_unavailable(pp_table *t, const char *key, const char *label,
                         const char *why);
/* Lay the facts t out flush left with the values from column 17, as the
 * header of a report (the text view; the others lay facts out alike). */
void pp_facts_flush(pp_table *t);
/* Fact row of t is a member of the JSON document only: a part that the
 * views say in a shown fact's note (the events behind an estimate). */
void pp_fact_json_only(pp_table *t, long row);
/* The value of fact key in t (pp_doc_facts), or NULL when t is NULL or
 * has no such fact. */
const pp_cell *pp_fact_find(const pp_table *t, const char *key);

/* The tables of d in the order made: n of them, each by index. */
size_t pp_doc_ntables(const pp_doc *d);
const pp_table *pp_doc_table_at(const pp_doc *d, size_t i);
/* The table with that id, or NULL. */
const pp_table *pp_doc_find(const pp_doc *d, const char *id);

/* The whole table is unavailable (the producer cannot measure it): why
 * (copied), said by every view in place of the rows. */
void pp_table_unavailable(pp_table *t, const char *why);
/* What the views say in place of rows when t has none (copied). */
void pp_table_empty(pp_table *t, const char *text);
/* Add a warning on the whole table (printf-style): what makes its
 * figures doubtful, said after its rows as a warning. */
void pp_table_warning(pp_table *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Add a remark on the whole table (printf-style), said after its rows. */
void pp_table_remark(pp_table *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Append a row (every cell NONE); its index, or -1 when out of memory. */
long pp_table_row(pp_table *t);
/* Fill cell (row, the column keyed key): a number (NAN: none), a text
 * (copied; NULL: none), unavailable with why (copied). Unknown keys and
 * rows are ignored (a producer's bug, not a crash). */
void pp_cell_num(pp_table *t, long row, const char *key, double v);
void pp_cell_text(pp_table *t, long row, const char *key, const char *s);
/* A whole number, kept exactly (num is its nearest double): what counts,
 * capacities and nanosecond totals use, so JSON and text print every
 * digit of a crafted 2^63 - 1 and never convert an out-of-range double. */
void pp_cell_int(pp_table *t, long row, const char *key, int64_t v);
/* A figure that is a whole number when it is one (a duration from a
 * histogram, a saturated sum): kept exactly when whole and within int64,
 * else as the double it is (NAN: none); never converted out of range. */
void pp_cell_whole(pp_table *t, long row, const char *key, double v);
/* An unsigned count: exact up to INT64_MAX, a double above. */
void pp_cell_count(pp_table *t, long row, const char *key, uint64_t v);
/* part of whole in percent (0..100); no value when whole <= 0. */
void pp_cell_share(pp_table *t, long row, const char *key, double part,
                   double whole);
/* A number in a PP_VALUE_ROW column, shown in unit. */
void pp_cell_num_unit(pp_table *t, long row, const char *key, double v,
                      pp_value_unit unit);
void pp_cell_unavailable(pp_table *t, long row, const char *key,
                         const char *why);
/* Add a note to a row (printf-style; joined with "; "). */
void pp_row_note(pp_table *t, long row, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Row row of t belongs to group (1, 2, ...: the rows of one group are
 * made together, groups in order), and the JSON writers can list a
 * group's rows apart (pp_doc_json_group). */
void pp_row_group(pp_table *t, long row, uint32_t group);
/* Row row of t is in the tables only (the JSON has its figures in
 * members of their own). */
void pp_row_view_only(pp_table *t, long row);
/* 0 when row r is in the tables only (pp_row_view_only). */
int pp_table_row_in_json(const pp_table *t, size_t r);
/* 0 when row r is hidden from the tables (PP_COL_HIDES_ROW). */
int pp_table_row_shown(const pp_table *t, size_t r);
/* The rows the tables show. */
size_t pp_table_rows_shown(const pp_table *t);

/* The index of the column keyed key, or -1. */
long pp_table_col(const pp_table *t, const char *key);

/* The cell at (row, col). */
static inline const pp_cell *pp_table_cell(const pp_table *t, size_t row,
                                           size_t col) {
  return &t->cells[row * t->ncols + col];
}

/* The text of a cell as every view shows it (units.h; "-" for none
 * without a none text, "unavailable: why"), into buf. */
char *pp_cell_format(const pp_col *c, const pp_cell *v, char *buf,
                     size_t len);

#endif /* PP_RESULTS_DOC_H */
