/* SPDX-License-Identifier: MIT */
/*
 * The units module (units.h): one way to print durations, bytes, plain
 * numbers, rates, percentages and energy, three significant digits and no
 * exponent. report.js mirrors these rules; tests/fixtures/units.tsv holds
 * both to them.
 */
#include "units.h"

#include <math.h>
#include <stdio.h>

/* Decimals that give 3 significant digits for a >= 0 (at most 12). */
static int sig3_decimals(double a) {
  if (a == 0 || a >= 99.95)
    return 0;
  if (a >= 9.995)
    return 1;
  if (a >= 0.9995)
    return 2;
  int d = 2 - (int)floor(log10(a));
  /* 0.09996 rounds to 0.100: one decimal fewer. */
  if (a * pow(10, d) >= 999.5)
    d--;
  return d > 12 ? 12 : d;
}

/* Whether v cannot be printed as a number: "-" written. */
static int not_finite(char *buf, size_t len, double v) {
  if (isfinite(v))
    return 0;
  snprintf(buf, len, "-");
  return 1;
}

/* v in units[0], scaled by base while it reaches base, 3 significant
 * digits (units[0] printed whole when int0). A unit scales up when the
 * rounded value would show 1000 of it. Units carry their leading space. */
static char *scaled(char *buf, size_t len, double v, double base,
                    const char *const *units, size_t nu, int int0) {
  if (!buf || !len || not_finite(buf, len, v))
    return buf;
  const char *sign = v < 0 ? "-" : "";
  double a = fabs(v);
  size_t u = 0;
  while (u + 1 < nu && a >= base) {
    a /= base;
    u++;
  }
  if (a >= 999.5 && u + 1 < nu && !(u == 0 && int0)) {
    a /= base;
    u++;
  }
  if (u == 0 && int0)
    snprintf(buf, len, "%s%.0f%s", sign, a, units[0]);
  else
    snprintf(buf, len, "%s%.*f%s", sign, sig3_decimals(a), a, units[u]);
  return buf;
}

char *pp_format_ns(char *buf, size_t len, double ns) {
  static const struct {
    double div;
    const char *unit;
  } units[] = {{1, "ns"}, {1e3, "us"}, {1e6, "ms"}, {1e9, "s"}};
  if (!buf || !len || not_finite(buf, len, ns))
    return buf;
  const char *sign = ns < 0 ? "-" : "";
  double a = fabs(ns);
  size_t u = 0;
  while (u + 1 < sizeof units / sizeof units[0] && a >= units[u + 1].div)
    u++;
  double v = a / units[u].div;
  /* Rounding may carry into the next unit: 999.7 us is "1.00 ms". */
  if (v >= 999.5 && u + 1 < sizeof units / sizeof units[0]) {
    u++;
    v = a / units[u].div;
  }
  int decimals = v >= 99.95 ? 0 : v >= 9.995 ? 1 : 2;
  if (u == 0 && v == floor(v))
    decimals = 0; /* whole nanoseconds: "850 ns", "5 ns" */
  snprintf(buf, len, "%s%.*f %s", sign, decimals, v, units[u].unit);
  return buf;
}

char *pp__fmt_bytes(char *buf, size_t len, double bytes) {
  static const char *const u[] = {" B",   " KiB", " MiB",
                                  " GiB", " TiB", " PiB"};
  return scaled(buf, len, bytes, 1024.0, u, sizeof u / sizeof u[0], 1);
}

char *pp_format_byte_rate(char *buf, size_t len, double bytes_per_s) {
  static const char *const u[] = {" B/s", " KiB/s", " MiB/s", " GiB/s",
                                  " TiB/s"};
  return scaled(buf, len, bytes_per_s, 1024.0, u, sizeof u / sizeof u[0], 1);
}

char *pp_format_sig3(char *buf, size_t len, double v) {
  if (!buf || !len || not_finite(buf, len, v))
    return buf;
  if (fabs(v) >= 1e15)
    snprintf(buf, len, "%.3g", v);
  else
    snprintf(buf, len, "%.*f", sig3_decimals(fabs(v)), v);
  return buf;
}

char *pp_format_rate(char *buf, size_t len, double per_s) {
  static const char *const u[] = {"/s", " k/s", " M/s", " G/s", " T/s"};
  return scaled(buf, len, per_s, 1000.0, u, sizeof u / sizeof u[0], 0);
}

char *pp_format_pct(char *buf, size_t len, double pct) {
  if (!buf || !len || not_finite(buf, len, pct))
    return buf;
  double a = fabs(pct);
  snprintf(buf, len, "%.*f%%", a >= 99.95 ? 0 : a >= 9.995 ? 1 : 2, pct);
  return buf;
}

char *pp_format_joules(char *buf, size_t len, double joules) {
  static const char *const u[] = {" J", " kJ", " MJ", " GJ"};
  if (buf && len && isfinite(joules) && joules != 0 && fabs(joules) < 0.9995) {
    char n[40];
    snprintf(buf, len, "%s mJ", pp_format_sig3(n, sizeof n, joules * 1e3));
    return buf;
  }
  return scaled(buf, len, joules, 1000.0, u, sizeof u / sizeof u[0], 0);
}
