/* SPDX-License-Identifier: MIT */
/*
 * One way to print each kind of figure, for every view: durations, bytes,
 * plain numbers, rates, percentages and energy. The text report, the
 * system and GPU sections, advice, alerts and the CLI's tables call these;
 * the HTML page's report.js has the same rules (window.ppUnits), and both
 * are checked against one table, tests/fixtures/units.tsv (tests/
 * test-units.c here, the Chromium test of test-html.c there).
 *
 * Rules: three significant digits and never an exponent below 1e15 ("999.7
 * us" is "1.00 ms", never "1e+03 us"); a unit scales up when the rounded
 * value would reach 1000 of it; NaN and infinities print "-". Each
 * function writes at most len bytes, always NUL-terminated when len > 0,
 * and returns buf. No state: safe from any thread, the library's writer
 * included.
 */
#ifndef PP_UNITS_H
#define PP_UNITS_H

#include <stddef.h>

/* A figure's text by value, for use within one expression:
 * pp_unit_text_of(pp_format_ns, v).s */
typedef struct pp_unit_text {
  char s[48];
} pp_unit_text;
typedef char *(*pp_unit_fn)(char *buf, size_t len, double v);
static inline pp_unit_text pp_unit_text_of(pp_unit_fn fn, double v) {
  pp_unit_text t;
  fn(t.s, sizeof t.s, v);
  return t;
}

/* "850 ns", "12.3 us", "1.00 ms", "1.50 s" */
char *pp_format_ns(char *buf, size_t len, double ns);
/* Binary units: "512 B", "0.977 MiB" (1000 KiB and up), "16.0 GiB" */
char *pp__fmt_bytes(char *buf, size_t len, double bytes);
/* Three significant digits, no exponent: "0.00123", "12.3", "1235" */
char *pp_format_sig3(char *buf, size_t len, double v);
/* Per second with SI steps: "0.500/s", "12.3/s", "1.50 k/s", "2.00 M/s" */
char *pp_format_rate(char *buf, size_t len, double per_s);
/* Percent, three significant digits with at most two decimals: "0.05%",
 * "3.32%", "66.5%", "100%", "250%" */
char *pp_format_pct(char *buf, size_t len, double pct);
/* Binary units per second: "512 B/s", "12.3 MiB/s" */
char *pp_format_byte_rate(char *buf, size_t len, double bytes_per_s);
/* Joules: "850 mJ", "12.3 J", "1.50 kJ" */
char *pp_format_joules(char *buf, size_t len, double joules);

#endif /* PP_UNITS_H */
