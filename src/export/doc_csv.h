/* SPDX-License-Identifier: MIT */
/*
 * A results table as CSV (RFC 4180): a header of the columns' JSON keys
 * (the first renamed when first_key is given), then a row per row of the
 * table, CRLF line ends. A text with a comma, a double quote, CR or LF is
 * quoted, its quotes doubled; whole numbers are written exactly, others
 * in their shortest exact decimal form; no value and an unavailable value
 * are empty fields (the summary JSON says why). The columns only a view
 * shows are left out, as in the JSON.
 */
#ifndef PP_EXPORT_DOC_CSV_H
#define PP_EXPORT_DOC_CSV_H

#include <stdio.h>

#include "results/doc.h"

/* 0, or -1 on a write error. */
int pp_doc_csv(FILE *out, const pp_table *t, const char *first_key);

#endif /* PP_EXPORT_DOC_CSV_H */
