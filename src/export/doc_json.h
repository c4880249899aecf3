/* SPDX-License-Identifier: MIT */
/*
 * A results table (results/doc.h) in JSON: its rows for the summary JSON
 * and /api/v1 (the columns' keys, dotted ones as nested objects; no value
 * null, unavailable {"unavailable": why}; a row's notes as "notes"), and
 * its layout, which the HTML page draws every table with
 * (docs/formats/summary-json.md, "layout").
 */
#ifndef PP_EXPORT_DOC_JSON_H
#define PP_EXPORT_DOC_JSON_H

#include <stddef.h>

#include "export/jsonw.h"
#include "results/doc.h"

/* More members of row r, written after the table's (NULL: none). */
typedef void (*pp_doc_row_fn)(pp_jsonw *w, size_t r, void *ctx);

/* The rows of t as an array of objects (the value of a member the caller
 * opened; [] when t is NULL: a section with nothing in it); a table
 * unavailable as {"available": false, "reason": why}. */
void pp_doc_json_rows(pp_jsonw *w, const pp_table *t, pp_doc_row_fn extra,
                      void *ctx);
/* The first max_rows rows of t, as pp_doc_json_rows writes them (a view
 * that lists the top few of a ranked table). */
void pp_doc_json_rows_n(pp_jsonw *w, const pp_table *t, size_t max_rows,
                        pp_doc_row_fn extra, void *ctx);
/* The rows of t as objects, as elements of an array the caller opened
 * (several tables in one array). */
void pp_doc_json_objects(pp_jsonw *w, const pp_table *t, pp_doc_row_fn extra,
                         void *ctx);
/* The rows of t as members of the object the caller opened, each named
 * by its text in the column keyed key (which the object leaves out):
 * "e2e": {...} (a table of a few named rows kept in a JSON shape older
 * than the document). */
void pp_doc_json_keyed(pp_jsonw *w, const pp_table *t, const char *key,
                       pp_doc_row_fn extra, void *ctx);
/* A table of facts (pp_doc_facts) as "key": value members of the object
 * the caller opened: a number, a boolean, a text, null for no value,
 * {"unavailable": why}. */
void pp_doc_json_facts(pp_jsonw *w, const pp_table *t);
/* Row r of t as an object, without column skip (the member's key; -1:
 * none), extra adding members of its own. */
void pp_doc_json_row(pp_jsonw *w, const pp_table *t, size_t r, long skip,
                     pp_doc_row_fn extra, void *ctx);
/* The rows of group (pp_row_group) of t that are in the JSON, as an
 * array of objects (a stage's nested zones). */
void pp_doc_json_group(pp_jsonw *w, const pp_table *t, uint32_t group);
/* t's layout: {"title", "note", "columns": [{"key", "label", "unit"[,
 * "bar": true][, "none": text][, "detail": true]}]} (the columns the
 * tables show; key the JSON path of the value); a table of facts:
 * {"title", "note", "kind": "facts", "facts": [{"key", "label", "unit"[,
 * "notes"]}]}. */
void pp_doc_json_layout(pp_jsonw *w, const pp_table *t);
/* The member "layout": {id: layout} for every table of d (none when d
 * has none). */
void pp_doc_json_layouts(pp_jsonw *w, const pp_doc *d);

#endif /* PP_EXPORT_DOC_JSON_H */
