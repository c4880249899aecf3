/* SPDX-License-Identifier: MIT */
/*
 * The results document's cells (src/results/doc.h) as the JSON and text
 * views write them: whole numbers exactly to the last digit, numbers no
 * integer can hold as doubles (a crafted trace's 2^63 once made the JSON
 * writer convert an out-of-range double), none and unavailable as states
 * of their own.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/doc_json.h"
#include "export/text_cells.h"
#include "results/doc.h"
#include "runner.h"

static const pp_col cols[] = {
    {"n", "n", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"cap", "capacity", PP_VALUE_COUNT, PP_COL_INT, "unbounded"},
    {"t_ns", "time", PP_VALUE_NS, PP_COL_INT, NULL},
};

/* The rows of t in JSON, malloc'd. */
static char *rows_json(const pp_table *t) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return NULL;
  pp_jsonw w;
  pp_jsonw_init(&w, f);
  pp_doc_json_rows(&w, t, NULL, NULL);
  int rc = pp_jsonw_finish(&w);
  fclose(f);
  if (rc != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

PP_TEST(results_cells_whole_numbers_exact) {
  pp_doc *d = pp_doc_new();
  CHECK(d != NULL);
  pp_table *t = pp_doc_table(d, "t", "t", NULL, cols, 3);
  CHECK(t != NULL);
  long r0 = pp_table_row(t), r1 = pp_table_row(t), r2 = pp_table_row(t);
  CHECK(r0 == 0 && r1 == 1 && r2 == 2);
  /* exact past 2^53, where a double would round */
  pp_cell_int(t, r0, "n", INT64_MAX);
  pp_cell_count(t, r0, "cap", 9007199254740993ull); /* 2^53 + 1 */
  pp_cell_int(t, r0, "t_ns", INT64_MIN);
  /* above INT64_MAX: a double, never a converted integer */
  pp_cell_count(t, r1, "n", UINT64_MAX);
  pp_cell_num(t, r1, "t_ns", 1e300);
  /* none and unavailable */
  pp_cell_unavailable(t, r2, "t_ns", "no clock");
  CHECK(pp_doc_ok(d));

  char *js = rows_json(t);
  CHECK(js != NULL);
  CHECK(strstr(js, "\"n\":9223372036854775807") != NULL);
  CHECK(strstr(js, "\"cap\":9007199254740993") != NULL);
  CHECK(strstr(js, "\"t_ns\":-9223372036854775808") != NULL);
  CHECK(strstr(js, "\"n\":1.8446744073709552e+19") != NULL ||
        strstr(js, "\"n\":1.84467440737096e+19") != NULL);
  CHECK(strstr(js, "\"t_ns\":1e+300") != NULL ||
        strstr(js, "\"t_ns\":1.0000000000000001e+300") != NULL);
  CHECK(strstr(js, "\"cap\":null") != NULL);
  CHECK(strstr(js, "{\"unavailable\":\"no clock\"}") != NULL);
  free(js);

  char buf[64];
  CHECK_STR(pp_cell_format(&cols[0], pp_table_cell(t, 0, 0), buf,
                             sizeof buf),
              "9223372036854775807");
  CHECK_STR(pp_cell_format(&cols[1], pp_table_cell(t, 0, 1), buf,
                             sizeof buf),
              "9007199254740993");
  CHECK_STR(pp_cell_format(&cols[1], pp_table_cell(t, 2, 1), buf,
                             sizeof buf),
              "unbounded");
  CHECK_STR(pp_cell_format(&cols[2], pp_table_cell(t, 2, 2), buf,
                             sizeof buf),
              "unavailable: no clock");
  /* a number set after a whole one is that number */
  pp_cell_num(t, r0, "n", 2.5);
  CHECK(!pp_table_cell(t, 0, 0)->is_whole);
  pp_doc_free(d);
}

/* A program's names in the text report: a well-formed UTF-8 character is
 * one cell, any other byte a '?' of its own (overlong forms, surrogates
 * and code points past U+10FFFF are not well-formed), and a long name is
 * cut with "..." at a character boundary. */
PP_TEST(results_text_cells_utf8) {
  char b[64];
  CHECK_EQ(pp_text_clean(b, sizeof b, "caf\xc3\xa9", 0), 4);
  CHECK_STR(b, "caf\xc3\xa9");
  CHECK_EQ(pp_text_clean(b, sizeof b, "\xe0\x80\x80", 0), 3); /* overlong */
  CHECK_STR(b, "???");
  CHECK_EQ(pp_text_clean(b, sizeof b, "\xed\xa0\x80", 0), 3); /* surrogate */
  CHECK_STR(b, "???");
  CHECK_EQ(pp_text_clean(b, sizeof b, "\xf4\x90\x80\x80", 0), 4);
  CHECK_STR(b, "????");
  CHECK_EQ(pp_text_clean(b, sizeof b, "\xf0\x9f\x98\x80!", 0), 2); /* U+1F600 */
  CHECK_STR(b, "\xf0\x9f\x98\x80!");
  CHECK_EQ(pp_text_clean(b, sizeof b, "a\x1b[31mb", 0), 7); /* ESC */
  CHECK_STR(b, "a?[31mb");
  CHECK_EQ(pp_text_clean(b, sizeof b, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 4),
           4);
  CHECK_STR(b, "\xc3\xa9...");
  CHECK_EQ(pp_text_cols("\xc3\xa9t\xc3\xa9"), 3);
}

