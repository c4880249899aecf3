/* SPDX-License-Identifier: MIT */
/*
 * The text report's layout of a results table (results/doc.h): a title
 * with its note, a header of the columns' labels, a line per row (the
 * columns that share a label in one cell, "a / b"), then under the row
 * its detail columns ("label: value") and its notes. Names are cut at 28
 * bytes with control bytes shown as '?'.
 */
#ifndef PP_EXPORT_DOC_TEXT_H
#define PP_EXPORT_DOC_TEXT_H

#include <stdio.h>

#include "results/doc.h"

void pp_doc_text_table(FILE *out, const pp_table *t);

#endif /* PP_EXPORT_DOC_TEXT_H */
