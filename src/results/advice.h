/* SPDX-License-Identifier: MIT */
/*
 * The "recommendations" table of the results document (doc.h): what the
 * analysis's rules (docs/analysis.md) advise, each with its severity,
 * the measured evidence that fired it and the rule's id, in the order
 * the analysis ranked them. Filled by analyze/document.c; the text
 * report, the summary JSON (recommendations) and the HTML page lay it
 * out.
 */
#ifndef PP_RESULTS_ADVICE_H
#define PP_RESULTS_ADVICE_H

#include <stddef.h>

#include "doc.h"

typedef struct pp_advice_figures {
  const char *rule;     /* the rule's id */
  int severity;         /* 2 high, 1 medium, 0 low */
  const char *text;     /* what to do */
  const char *evidence; /* the figures that fired the rule */
} pp_advice_figures;

pp_table *pp_results_advice(pp_doc *d, const pp_advice_figures *a, size_t n);

#endif /* PP_RESULTS_ADVICE_H */
