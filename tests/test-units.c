/* SPDX-License-Identifier: MIT */
/*
 * The units module (src/units.h) against its table,
 * tests/fixtures/units.tsv: every kind of figure printed one way. The
 * HTML page's report.js is checked against the same table in
 * test-html.c (html_chromium_units_table).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "units.h"

typedef char *(*unit_fn)(char *buf, size_t len, double v);

static unit_fn unit_of(const char *kind) {
  static const struct {
    const char *kind;
    unit_fn fn;
  } kinds[] = {{"ns", pp_format_ns},         {"bytes", pp__fmt_bytes},
               {"sig3", pp_format_sig3},     {"rate", pp_format_rate},
               {"pct", pp_format_pct},       {"joules", pp_format_joules},
               {"byte_rate", pp_format_byte_rate}};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (strcmp(kinds[i].kind, kind) == 0)
      return kinds[i].fn;
  return NULL;
}

PP_TEST(units_table) {
  char path[4200];
  snprintf(path, sizeof path, "%s/tests/fixtures/units.tsv",
           pp_test_srcdir());
  char *text = pp_test_slurp(path, NULL);
  CHECK(text != NULL);
  size_t rows = 0, kinds_seen = 0;
  char seen[8][16] = {{0}};
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#' || !line[0])
      continue;
    char *in = strchr(line, '\t');
    CHECK(in != NULL);
    *in++ = 0;
    char *want = strchr(in, '\t');
    CHECK(want != NULL);
    *want++ = 0;
    unit_fn fn = unit_of(line);
    if (!fn)
      PP_FAIL("units.tsv: unknown kind %s", line);
    double v = strtod(in, NULL);
    char got[64];
    fn(got, sizeof got, v);
    if (strcmp(got, want) != 0)
      PP_FAIL("units.tsv: %s(%s) is \"%s\", the table says \"%s\"", line,
              in, got, want);
    rows++;
    size_t k = 0;
    while (k < kinds_seen && strcmp(seen[k], line) != 0)
      k++;
    if (k == kinds_seen && kinds_seen < 8)
      snprintf(seen[kinds_seen++], sizeof seen[0], "%s", line);
  }
  free(text);
  printf("# %zu rows, %zu kinds\n", rows, kinds_seen);
  CHECK_GE(rows, 100);
  CHECK_EQ(kinds_seen, 7);
}

/* The buffer bounds: cut, always terminated; no exponent below 1e15. */
PP_TEST(units_small_buffers_and_no_exponent) {
  char b[6];
  CHECK_STR(pp_format_ns(b, sizeof b, 12345), "12.3 ");
  CHECK_STR(pp__fmt_bytes(b, 1, 5), "");
  CHECK(pp_format_pct(NULL, 4, 1) == NULL);
  char big[64];
  for (double v = 0.000123; v < 1e15; v *= 7.3) {
    pp_format_sig3(big, sizeof big, v);
    CHECK(strchr(big, 'e') == NULL);
    pp_format_ns(big, sizeof big, v);
    CHECK(strchr(big, 'e') == NULL);
    pp_format_rate(big, sizeof big, v);
    CHECK(strchr(big, 'e') == NULL);
  }
  /* the alert that read "1e+03 us" */
  CHECK_STR(pp_format_ns(big, sizeof big, 999.7e3), "1.00 ms");
}
