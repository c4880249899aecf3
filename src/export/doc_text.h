/* SPDX-License-Identifier: MIT */
/*
 * The text report's layout of a results table (results/doc.h): a title
 * with its note, a header of the columns' labels, a line per row (the
 * columns that share a label in one cell, "a / b"), then under the row
 * its detail columns ("label: value") and its notes; after the rows, the
 * table's remarks; without rows, its empty text. Names are cut at
 * name_cap display cells (0: 40) with "...", control bytes shown as '?'.
 */
#ifndef PP_EXPORT_DOC_TEXT_H
#define PP_EXPORT_DOC_TEXT_H

#include <stdio.h>

#include "results/doc.h"

void pp_doc_text_table(FILE *out, const pp_table *t, int name_cap);
/* The same with at most max_rows rows, then a line that says how many
 * more the table has (never a silent cut). */
void pp_doc_text_table_n(FILE *out, const pp_table *t, int name_cap,
                         size_t max_rows);

#endif /* PP_EXPORT_DOC_TEXT_H */
