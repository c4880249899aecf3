/* SPDX-License-Identifier: MIT */
/*
 * The system part of the report and of the summary JSON: what the run-time
 * sampler (src/core/sampler.h, whose header fixes the counter names and
 * META keys) and `pipeprof run` recorded about the machine, the process
 * tree, the perf_event counters and the energy, read back from an analysed
 * pp_trace. Counters come from t->prof.counters by name; run facts
 * ("run.*"), the sampler rate and the reasons a metric group could not be
 * measured ("unavailable.<group>") from META.
 *
 * Rules: a metric that was not measured is never printed as 0. It prints
 * "unavailable: <reason>" when META gives a reason for its group and is
 * left out otherwise. Non-finite values print as "-" (text) or null (JSON),
 * never "nan" or "inf". Names from the machine (sensors, energy domains)
 * and reasons are shown with control characters replaced by '?'.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "export/export.h"
#include "export/jsonw.h"
#include "export/run_tree.h"
#include "internal.h"

#define LABEL_W 25          /* values start in this column */
#define MAX_CORES_LISTED 16 /* per-core line only up to this many cores */
#define MAX_SENSORS 32      /* temperature lines printed */
#define DEFAULT_G_PER_KWH 475.0
#define THREADS_LISTED 15 /* rows of the tree's thread table */
#define THREAD_NAME_W 20

/* ---- small lookups ------------------------------------------------------- */

static int has_prefix(const char *s, const char *p) {
  return strncmp(s, p, strlen(p)) == 0;
}

static int has_suffix(const char *s, const char *x) {
  size_t n = strlen(s), m = strlen(x);
  return n >= m && memcmp(s + n - m, x, m) == 0;
}

static const char *cname(const pp_trace *t, const pp_counter_stats *c) {
  return pp_trace_loc_name(t, c->loc);
}

/* The library metric named `name`, or NULL (never a user counter). */
static const pp_counter_stats *ctr(const pp_trace *t, const char *name) {
  return pp_profile_metric(t, name);
}

/* A finite number from META key, or 0 when absent or not a number. */
static int meta_num(const pp_trace *t, const char *key, double *out) {
  const char *s = pp_trace_meta(t, key);
  if (!s || !*s)
    return 0;
  char *end;
  double v = strtod(s, &end);
  if (end == s || !isfinite(v))
    return 0;
  *out = v;
  return 1;
}

/* A reason text without the "unavailable: " its producer may have put in
 * front (the report adds its own). Never NULL for a non-NULL input. */
static const char *strip_reason(const char *r) {
  static const char *const pre[] = {"hardware counters unavailable: ",
                                    "unavailable: "};
  for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
    if (has_prefix(r, pre[i]))
      return r + strlen(pre[i]);
  return r;
}

/* The reason of the first group (NULL-terminated list) that has one. */
static const char *reason_v(const pp_trace *t, const char *const *groups) {
  char key[128];
  for (; *groups; groups++) {
    int n = snprintf(key, sizeof key, "unavailable.%s", *groups);
    if (n < 0 || (size_t)n >= sizeof key)
      continue;
    const char *r = pp_trace_meta(t, key);
    if (r)
      return strip_reason(r);
  }
  return NULL;
}

#define REASON(t, ...) reason_v((t), (const char *const[]){__VA_ARGS__, NULL})

/* Groups the sections below explain; other "unavailable.*" keys go to a
 * section of their own. Keys starting "perf" belong to the perf section. */
static const char *const known_groups[] = {
    "sys",    "cpu",       "loadavg",     "meminfo", "psi_cpu", "psi_memory",
    "psi_io", "cpufreq",   "throttle",    "hwmon",   "thermal", "numa",
    "proc",   "proc_stat", "proc_status", "proc_io", "power",   "energy",
    "rapl",   "threads",   NULL};

static int known_group(const char *g) {
  if (has_prefix(g, "perf") || has_prefix(g, "gpu")) /* GPU: report_gpu.c */
    return 1;
  for (size_t i = 0; known_groups[i]; i++)
    if (strcmp(g, known_groups[i]) == 0)
      return 1;
  return 0;
}

/* True when meta[i] is the last entry with its key (the one that counts). */
static int meta_is_last(const pp_trace *t, size_t i) {
  for (size_t j = i + 1; j < t->nmeta; j++)
    if (t->meta[j].key && strcmp(t->meta[j].key, t->meta[i].key) == 0)
      return 0;
  return 1;
}

static int any_counter(const pp_trace *t, const char *const *prefixes) {
  for (size_t i = 0; i < t->prof.ncounters; i++) {
    const char *n = cname(t, &t->prof.counters[i]);
    for (size_t k = 0; prefixes[k]; k++)
      if (has_prefix(n, prefixes[k]))
        return 1;
  }
  return 0;
}

static int any_meta(const pp_trace *t, const char *prefix) {
  for (size_t i = 0; i < t->nmeta; i++)
    if (t->meta[i].key && has_prefix(t->meta[i].key, prefix))
      return 1;
  return 0;
}

static int has_system_data(const pp_trace *t) {
  static const char *const pre[] = {"sys.",   "proc.",   "perf.",
                                    "power.", "energy.", NULL};
  return any_counter(t, pre) || any_meta(t, "unavailable.");
}

/* ---- indexed families: sys.cpu<N>.busy_pct, sys.numa<N>.used_bytes -------- */

typedef struct idx_ctr {
  unsigned long n;
  const pp_counter_stats *c;
} idx_ctr;

static int cmp_idx(const void *a, const void *b) {
  const idx_ctr *x = a, *y = b;
  return x->n < y->n ? -1 : x->n > y->n;
}

/* N when name is exactly <pre><digits><suf>; -1 otherwise. */
static long family_index(const char *name, const char *pre, const char *suf) {
  const char *rest;
  long n = pp__name_index(name, pre, &rest);
  return n >= 0 && strcmp(rest, suf) == 0 ? n : -1;
}

/* The counters <pre>N<suf> in order of N into *out (malloc'ed; NULL when
 * there are none). Returns their number, or -1 when out of memory. */
static long family(const pp_trace *t, const char *pre, const char *suf,
                   idx_ctr **out) {
  *out = NULL;
  size_t n = 0;
  for (size_t i = 0; i < t->prof.ncounters; i++)
    if (family_index(cname(t, &t->prof.counters[i]), pre, suf) >= 0)
      n++;
  if (!n)
    return 0;
  idx_ctr *v = pp__malloc(n * sizeof *v);
  if (!v)
    return -1;
  size_t k = 0;
  for (size_t i = 0; i < t->prof.ncounters; i++) {
    long ix = family_index(cname(t, &t->prof.counters[i]), pre, suf);
    if (ix >= 0)
      v[k++] = (idx_ctr){(unsigned long)ix, &t->prof.counters[i]};
  }
  qsort(v, n, sizeof *v, cmp_idx);
  *out = v;
  return (long)n;
}

/* ---- energy domains -------------------------------------------------------- */

typedef struct domain {
  const char *name; /* points into a counter name; len bytes */
  size_t len;
  const pp_counter_stats *w, *j; /* power.<d>_w, energy.<d>_j */
} domain;

static domain *find_domain(domain *d, size_t n, const char *s, size_t len) {
  for (size_t i = 0; i < n; i++)
    if (d[i].len == len && memcmp(d[i].name, s, len) == 0)
      return &d[i];
  return NULL;
}

static int cmp_domain(const void *a, const void *b) {
  const domain *x = a, *y = b;
  int c = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);
  if (c)
    return c;
  return x->len < y->len ? -1 : x->len > y->len;
}

/* Energy domains other than the "package" total, in name order, into *out
 * (malloc'ed; NULL when none). Returns their number or -1 (no memory). */
static long domains(const pp_trace *t, domain **out) {
  *out = NULL;
  size_t cap = t->prof.ncounters, n = 0;
  if (!cap)
    return 0;
  domain *d = pp__malloc(cap * sizeof *d);
  if (!d)
    return -1;
  for (size_t i = 0; i < t->prof.ncounters; i++) {
    const pp_counter_stats *c = &t->prof.counters[i];
    const char *nm = cname(t, c);
    int is_w = has_prefix(nm, "power.") && has_suffix(nm, "_w");
    int is_j = has_prefix(nm, "energy.") && has_suffix(nm, "_j");
    if (!is_w && !is_j)
      continue;
    const char *s = nm + (is_w ? 6 : 7);
    size_t len = strlen(s);
    if (len <= 2)
      continue;
    len -= 2;
    if (len == 7 && memcmp(s, "package", 7) == 0)
      continue;
    domain *e = find_domain(d, n, s, len);
    if (!e) {
      e = &d[n++];
      *e = (domain){s, len, NULL, NULL};
    }
    if (is_w)
      e->w = c;
    else
      e->j = c;
  }
  if (!n) {
    pp__free(d);
    return 0;
  }
  qsort(d, n, sizeof *d, cmp_domain);
  *out = d;
  return (long)n;
}

/* ---- number formatting -------------------------------------------------- */

/* A formatted number; used as fmt_x(v).s within one full expression. */
typedef struct num {
  char s[48];
} num;

static num numf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static num numf(const char *fmt, ...) {
  num n;
  va_list ap;
  va_start(ap, fmt);
  int r = vsnprintf(n.s, sizeof n.s, fmt, ap);
  va_end(ap);
  if (r < 0)
    n.s[0] = '\0';
  return n;
}

/* Decimals that give 3 significant digits for a >= 0. */
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

/* 3 significant digits, no exponent. */
static num fmt_sig3(double v) {
  if (!isfinite(v))
    return numf("-");
  if (fabs(v) >= 1e15)
    return numf("%.3g", v);
  return numf("%.*f", sig3_decimals(fabs(v)), v);
}

/* v in units[0], scaled by base while it reaches base (3 significant digits;
 * units[0] is printed as an integer when int0). Units carry their leading
 * space, if any. */
static num fmt_scaled(double v, double base, const char *const *units,
                      size_t nu, int int0) {
  if (!isfinite(v))
    return numf("-");
  const char *sign = v < 0 ? "-" : "";
  double a = fabs(v);
  size_t u = 0;
  while (u + 1 < nu && a >= base) {
    a /= base;
    u++;
  }
  /* 3 digits at most: 1000 KiB and up are shown as 0.977 MiB. */
  if (a >= 999.5 && u + 1 < nu && !(u == 0 && int0)) {
    a /= base;
    u++;
  }
  if (u == 0 && int0)
    return numf("%s%.0f%s", sign, a, units[0]);
  return numf("%s%.*f%s", sign, sig3_decimals(a), a, units[u]);
}

static num fmt_bytes(double v) {
  static const char *const u[] = {" B",   " KiB", " MiB",
                                  " GiB", " TiB", " PiB"};
  return fmt_scaled(v, 1024.0, u, sizeof u / sizeof u[0], 1);
}

static num fmt_rate(double v) {
  static const char *const u[] = {"/s", " k/s", " M/s", " G/s", " T/s"};
  return fmt_scaled(v, 1000.0, u, sizeof u / sizeof u[0], 0);
}

static num fmt_joules(double v) {
  static const char *const u[] = {" J", " kJ", " MJ", " GJ"};
  if (isfinite(v) && v != 0 && fabs(v) < 1)
    return numf("%s mJ", fmt_sig3(v * 1000.0).s);
  return fmt_scaled(v, 1000.0, u, sizeof u / sizeof u[0], 0);
}

/* v with a fixed number of decimals. */
static num fmt_fixed(double v, int decimals) {
  if (!isfinite(v))
    return numf("-");
  if (fabs(v) >= 1e15)
    return numf("%.3g", v);
  return numf("%.*f", decimals, v);
}

static num fmt_pct(double v) {
  if (!isfinite(v))
    return numf("-");
  return numf("%.1f%%", v);
}

static num fmt_secs(double s) {
  if (!isfinite(s))
    return numf("-");
  num n;
  pp_format_ns(n.s, sizeof n.s, s * 1e9);
  return n;
}

/* An exact count with thousands separators: 12,345,678. */
static num fmt_count(double v) {
  if (!isfinite(v))
    return numf("-");
  if (fabs(v) >= 9e18)
    return numf("%.3g", v);
  long long x = llround(v);
  unsigned long long a = x < 0 ? 0ull - (unsigned long long)x
                               : (unsigned long long)x;
  char digits[32];
  int nd = snprintf(digits, sizeof digits, "%llu", a);
  if (nd <= 0 || (size_t)nd >= sizeof digits)
    return numf("-");
  num n;
  size_t k = 0;
  if (x < 0)
    n.s[k++] = '-';
  for (int i = 0; i < nd && k + 2 < sizeof n.s; i++) {
    if (i && (nd - i) % 3 == 0)
      n.s[k++] = ',';
    n.s[k++] = digits[i];
  }
  n.s[k] = '\0';
  return n;
}

/* ---- text output ---------------------------------------------------------- */

/* s with control characters shown as '?'. */
static void put_clean(FILE *out, const char *s, size_t len) {
  for (size_t i = 0; i < len && s[i]; i++) {
    unsigned char c = (unsigned char)s[i];
    fputc(c < 0x20 || c == 0x7f ? '?' : (int)c, out);
  }
}

/* indent spaces, "label:", padding to column LABEL_W (at least one space
 * after the colon). */
static void put_label_at(FILE *out, int indent, const char *l, size_t len) {
  fprintf(out, "%*s", indent, "");
  put_clean(out, l, len);
  fputc(':', out);
  int pad = LABEL_W - indent - 1 - (int)len;
  fprintf(out, "%*s", pad > 1 ? pad : 1, "");
}

static void put_labeln(FILE *out, const char *l, size_t len) {
  put_label_at(out, 2, l, len);
}

static void put_label(FILE *out, const char *l) {
  put_labeln(out, l, strlen(l));
}

static void line(FILE *out, const char *l, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void line(FILE *out, const char *l, const char *fmt, ...) {
  put_label(out, l);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(out, fmt, ap);
  va_end(ap);
  fputc('\n', out);
}

static void reason_line(FILE *out, const char *l, const char *reason) {
  put_label(out, l);
  fputs("unavailable: ", out);
  put_clean(out, reason, strlen(reason));
  fputc('\n', out);
}

/* ", " between the parts of one line. */
typedef struct sep {
  FILE *out;
  int n;
} sep;

static void part(sep *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void part(sep *s, const char *fmt, ...) {
  if (s->n++)
    fputs(", ", s->out);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(s->out, fmt, ap);
  va_end(ap);
}

/* ---- run ------------------------------------------------------------------ */

static void section_run(FILE *out, const pp_trace *t) {
  const char *cmd = pp_trace_meta(t, "run.command");
  const char *ex = pp_trace_meta(t, "run.exit");
  double wall = 0, user = 0, sys = 0;
  int has_wall = meta_num(t, "run.wall_ns", &wall);
  int has_user = meta_num(t, "run.user_ns", &user);
  int has_sys = meta_num(t, "run.system_ns", &sys);
  if (!cmd && !ex && !has_wall && !has_user && !has_sys)
    return;
  fputs("\nrun\n", out);
  if (cmd) {
    put_label(out, "command");
    put_clean(out, cmd, strlen(cmd));
    fputc('\n', out);
  }
  if (ex) {
    put_label(out, "exit");
    put_clean(out, ex, strlen(ex));
    fputc('\n', out);
  }
  if (has_wall)
    line(out, "wall time", "%s", fmt_secs(wall / 1e9).s);
  if (has_user || has_sys) {
    put_label(out, "CPU time");
    sep s = {out, 0};
    if (has_user)
      part(&s, "user %s", fmt_secs(user / 1e9).s);
    if (has_sys)
      part(&s, "system %s", fmt_secs(sys / 1e9).s);
    fputs(" (rusage)\n", out);
  }
}

/* ---- system --------------------------------------------------------------- */

static const char *const system_groups[] = {
    "sys",      "cpu",      "loadavg", "meminfo", "psi_cpu", "psi_memory",
    "psi_io",   "cpufreq",  "throttle", "hwmon",  "thermal", "numa", NULL};

static int any_reason(const pp_trace *t, const char *const *groups) {
  return reason_v(t, groups) != NULL;
}

/* Samples of the system sampler: those of sys.cpu.busy_pct, else the most
 * of any sys.* counter. */
static uint64_t system_samples(const pp_trace *t) {
  const pp_counter_stats *c = ctr(t, "sys.cpu.busy_pct");
  if (c)
    return c->samples;
  uint64_t n = 0;
  for (size_t i = 0; i < t->prof.ncounters; i++) {
    const pp_counter_stats *x = &t->prof.counters[i];
    if (has_prefix(cname(t, x), "sys.") && x->samples > n)
      n = x->samples;
  }
  return n;
}

static void sys_cpu(FILE *out, const pp_trace *t) {
  const pp_counter_stats *busy = ctr(t, "sys.cpu.busy_pct");
  static const char *const parts[][2] = {{"user", "sys.cpu.user_pct"},
                                         {"system", "sys.cpu.system_pct"},
                                         {"iowait", "sys.cpu.iowait_pct"},
                                         {"steal", "sys.cpu.steal_pct"}};
  const pp_counter_stats *pc[4];
  int nparts = 0;
  for (size_t i = 0; i < 4; i++)
    nparts += (pc[i] = ctr(t, parts[i][1])) != NULL;
  if (!busy && !nparts) {
    const char *r = REASON(t, "cpu", "sys");
    if (r)
      reason_line(out, "CPU busy", r);
    return;
  }
  put_label(out, "CPU busy");
  sep s = {out, 0};
  if (busy) {
    part(&s, "mean %s", fmt_pct(busy->mean).s);
    part(&s, "max %s", fmt_pct(busy->max).s);
  }
  if (nparts) {
    fputs(busy ? " (means: " : "means: ", out);
    sep s2 = {out, 0};
    for (size_t i = 0; i < 4; i++)
      if (pc[i])
        part(&s2, "%s %s", parts[i][0], fmt_pct(pc[i]->mean).s);
    if (busy)
      fputc(')', out);
  }
  fputc('\n', out);
}

static int sys_per_core(FILE *out, const pp_trace *t) {
  idx_ctr *v;
  long n = family(t, "sys.cpu", ".busy_pct", &v);
  if (n < 0)
    return -1;
  if (n > 0 && n <= MAX_CORES_LISTED) {
    put_label(out, "per core busy max");
    for (long i = 0; i < n; i++)
      fprintf(out, "%s%s", i ? " " : "", fmt_fixed(v[i].c->max, 0).s);
    fputc('\n', out);
  }
  pp__free(v);
  return 0;
}

static void sys_load_mem(FILE *out, const pp_trace *t) {
  const pp_counter_stats *c = ctr(t, "sys.load1");
  const char *r;
  if (c)
    line(out, "load1", "max %s, mean %s", fmt_fixed(c->max, 2).s,
         fmt_fixed(c->mean, 2).s);
  else if ((r = REASON(t, "loadavg", "sys")))
    reason_line(out, "load1", r);

  const pp_counter_stats *used = ctr(t, "sys.mem.used_bytes");
  const pp_counter_stats *total = ctr(t, "sys.mem.total_bytes");
  const pp_counter_stats *avail = ctr(t, "sys.mem.available_bytes");
  const pp_counter_stats *swap = ctr(t, "sys.swap.used_bytes");
  const char *mr = REASON(t, "meminfo", "sys");
  if (used || avail || total) {
    put_label(out, "memory");
    sep s = {out, 0};
    if (used) {
      part(&s, "used mean %s", fmt_bytes(used->mean).s);
      part(&s, "max %s", fmt_bytes(used->max).s);
      if (total)
        fprintf(out, " of %s total", fmt_bytes(total->max).s);
    } else if (total) {
      part(&s, "total %s", fmt_bytes(total->max).s);
    }
    if (avail)
      part(&s, "available min %s", fmt_bytes(avail->min).s);
    fputc('\n', out);
  } else if (mr) {
    reason_line(out, "memory", mr);
  }
  if (swap)
    line(out, "swap used", "max %s", fmt_bytes(swap->max).s);
  else if (mr)
    reason_line(out, "swap used", mr);
}

static void sys_psi(FILE *out, const pp_trace *t) {
  static const char *const res[] = {"cpu", "memory", "io"};
  for (size_t i = 0; i < 3; i++) {
    char some[64], full[64], lbl[32], grp[32];
    snprintf(some, sizeof some, "sys.psi.%s.some_pct", res[i]);
    snprintf(full, sizeof full, "sys.psi.%s.full_pct", res[i]);
    snprintf(lbl, sizeof lbl, "pressure %s", res[i]);
    snprintf(grp, sizeof grp, "psi_%s", res[i]);
    const pp_counter_stats *cs = ctr(t, some), *cf = ctr(t, full);
    if (!cs && !cf) {
      const char *r = REASON(t, grp, "sys");
      if (r)
        reason_line(out, lbl, r);
      continue;
    }
    put_label(out, lbl);
    sep s = {out, 0};
    if (cs)
      part(&s, "some %s", fmt_pct(cs->mean).s);
    if (cf)
      part(&s, "full %s", fmt_pct(cf->mean).s);
    fputs(" (mean)\n", out);
  }
}

static void sys_rates(FILE *out, const pp_trace *t) {
  const pp_counter_stats *cx = ctr(t, "sys.ctxt_per_s");
  const pp_counter_stats *in = ctr(t, "sys.intr_per_s");
  const char *r = REASON(t, "cpu", "sys");
  if (cx)
    line(out, "context switches", "mean %s, max %s", fmt_rate(cx->mean).s,
         fmt_rate(cx->max).s);
  else if (r)
    reason_line(out, "context switches", r);
  if (in)
    line(out, "interrupts", "mean %s, max %s", fmt_rate(in->mean).s,
         fmt_rate(in->max).s);
  else if (r)
    reason_line(out, "interrupts", r);
}

static int sys_freq_throttle(FILE *out, const pp_trace *t) {
  idx_ctr *v;
  long n = family(t, "sys.cpu", ".freq_mhz", &v);
  if (n < 0)
    return -1;
  const char *r;
  if (n > 0) {
    double lo = INFINITY, hi = -INFINITY;
    for (long i = 0; i < n; i++) {
      double m = v[i].c->mean;
      if (isfinite(m)) {
        lo = m < lo ? m : lo;
        hi = m > hi ? m : hi;
      }
    }
    if (lo <= hi)
      line(out, "CPU frequency", "mean per core %.0f..%.0f MHz (%ld cores)",
           lo, hi, n);
    else
      line(out, "CPU frequency", "-");
  } else if ((r = REASON(t, "cpufreq", "sys"))) {
    reason_line(out, "CPU frequency", r);
  }
  pp__free(v);

  n = family(t, "sys.cpu", ".throttle_total", &v);
  if (n < 0)
    return -1;
  if (n > 0) {
    /* A sum over the cores; NaN (printed "-") when a core has no value. */
    double last = 0, grew = 0;
    for (long i = 0; i < n; i++) {
      last += v[i].c->last;
      grew += v[i].c->last - v[i].c->min;
    }
    put_label(out, "thermal throttling");
    fprintf(out, "%s events (counter total, %ld cores), %s while sampled",
            fmt_count(last).s, n, fmt_count(grew).s);
    if (n <= MAX_CORES_LISTED && grew > 0) {
      fputs(":", out);
      for (long i = 0; i < n; i++) {
        double d = v[i].c->last - v[i].c->min;
        if (isfinite(d) && d > 0)
          fprintf(out, " cpu%lu +%s", v[i].n, fmt_count(d).s);
      }
    }
    fputc('\n', out);
  } else if ((r = REASON(t, "throttle", "sys"))) {
    reason_line(out, "thermal throttling", r);
  }
  pp__free(v);
  return 0;
}

/* sys.temp.<chip>.<label>_c -> "<chip>.<label>" (pointer and length). */
static int temp_sensor(const char *name, const char **s, size_t *len) {
  static const char pre[] = "sys.temp.";
  if (!has_prefix(name, pre) || !has_suffix(name, "_c"))
    return 0;
  size_t n = strlen(name);
  if (n <= sizeof pre - 1 + 2)
    return 0;
  *s = name + sizeof pre - 1;
  *len = n - (sizeof pre - 1) - 2;
  return 1;
}

static void sys_temps(FILE *out, const pp_trace *t) {
  size_t n = 0, shown = 0;
  for (size_t i = 0; i < t->prof.ncounters; i++) {
    const pp_counter_stats *c = &t->prof.counters[i];
    const char *s;
    size_t len;
    if (!temp_sensor(cname(t, c), &s, &len))
      continue;
    if (!n++)
      fputs("  temperatures (max):\n", out);
    if (shown >= MAX_SENSORS)
      continue;
    shown++;
    put_label_at(out, 4, s, len);
    fprintf(out, "%s C\n", fmt_fixed(c->max, 1).s);
  }
  if (n > shown)
    fprintf(out, "    ... %zu more sensors\n", n - shown);
  if (n)
    return;
  const char *h = REASON(t, "hwmon"), *th = REASON(t, "thermal");
  if (!h && !th)
    h = REASON(t, "sys");
  if (!h && !th)
    return;
  put_label(out, "temperatures");
  fputs("unavailable: ", out);
  if (h)
    put_clean(out, h, strlen(h));
  if (h && th)
    fputs("; ", out);
  if (th)
    put_clean(out, th, strlen(th));
  fputc('\n', out);
}

static int sys_numa(FILE *out, const pp_trace *t) {
  idx_ctr *v;
  long n = family(t, "sys.numa", ".used_bytes", &v);
  if (n < 0)
    return -1;
  const char *r;
  if (n > 0) {
    put_label(out, "NUMA used max");
    sep s = {out, 0};
    for (long i = 0; i < n; i++)
      part(&s, "node%lu %s", v[i].n, fmt_bytes(v[i].c->max).s);
    fputc('\n', out);
  } else if ((r = REASON(t, "numa"))) {
    reason_line(out, "NUMA", r);
  }
  pp__free(v);
  return 0;
}

static int section_system(FILE *out, const pp_trace *t) {
  static const char *const pre[] = {"sys.", NULL};
  if (!any_counter(t, pre) && !any_reason(t, system_groups))
    return 0;
  double hz;
  uint64_t ns = system_samples(t);
  int has_hz = meta_num(t, "sampler.hz", &hz) && hz > 0;
  fputs("\nsystem", out);
  if (has_hz && ns)
    fprintf(out, " (sampled at %s Hz, %s samples)", numf("%.6g", hz).s,
            fmt_count((double)ns).s);
  else if (has_hz)
    fprintf(out, " (sampled at %s Hz)", numf("%.6g", hz).s);
  else if (ns)
    fprintf(out, " (%s samples)", fmt_count((double)ns).s);
  fputc('\n', out);
  sys_cpu(out, t);
  if (sys_per_core(out, t))
    return -1;
  sys_load_mem(out, t);
  sys_psi(out, t);
  sys_rates(out, t);
  if (sys_freq_throttle(out, t))
    return -1;
  sys_temps(out, t);
  return sys_numa(out, t);
}

/* ---- process tree ------------------------------------------------------- */

/* CPU seconds of the tree: rusage when `pipeprof run` recorded it, else the
 * last sample. Returns 1 (rusage), 2 (sampled) or 0 (neither). */
static int tree_cpu_time(const pp_trace *t, double *user, double *sys) {
  double u, s;
  int hu = meta_num(t, "run.user_ns", &u);
  int hs = meta_num(t, "run.system_ns", &s);
  *user = *sys = NAN;
  if (hu || hs) {
    if (hu)
      *user = u / 1e9;
    if (hs)
      *sys = s / 1e9;
    return 1;
  }
  const pp_counter_stats *cu = ctr(t, "proc.cpu_user_s");
  const pp_counter_stats *cs = ctr(t, "proc.cpu_system_s");
  if (cu)
    *user = cu->last;
  if (cs)
    *sys = cs->last;
  return cu || cs ? 2 : 0;
}

static const char *const tree_groups[] = {"proc", "proc_stat", "proc_status",
                                          "proc_io", NULL};

static void tree_line_max(FILE *out, const pp_trace *t, const char *label,
                          const char *name, int bytes, const char *grp) {
  const pp_counter_stats *c = ctr(t, name);
  const char *r;
  if (c)
    line(out, label, "max %s",
         bytes ? fmt_bytes(c->max).s : fmt_count(c->max).s);
  else if ((r = REASON(t, grp, "proc")))
    reason_line(out, label, r);
}

/* Two cumulative totals on one line, e.g. "minor 12, major 0". */
static void tree_pair(FILE *out, const pp_trace *t, const char *label,
                      const char *k1, const char *n1, const char *k2,
                      const char *n2, int bytes, const char *grp) {
  const pp_counter_stats *a = ctr(t, n1), *b = ctr(t, n2);
  const char *r;
  if (!a && !b) {
    if ((r = REASON(t, grp, "proc")))
      reason_line(out, label, r);
    return;
  }
  put_label(out, label);
  sep s = {out, 0};
  if (a)
    part(&s, "%s %s", k1, bytes ? fmt_bytes(a->last).s : fmt_count(a->last).s);
  if (b)
    part(&s, "%s %s", k2, bytes ? fmt_bytes(b->last).s : fmt_count(b->last).s);
  fputc('\n', out);
}

static void section_tree(FILE *out, const pp_trace *t) {
  static const char *const pre[] = {"proc.", NULL};
  double maxrss = 0;
  int has_maxrss = meta_num(t, "run.maxrss_bytes", &maxrss);
  if (!any_counter(t, pre) && !any_reason(t, tree_groups) && !has_maxrss)
    return;
  fputs("\nprocess tree\n", out);
  const char *r;
  double user, sys;
  int src = tree_cpu_time(t, &user, &sys);
  if (src) {
    put_label(out, "CPU time");
    sep s = {out, 0};
    if (isfinite(user))
      part(&s, "user %s", fmt_secs(user).s);
    if (isfinite(sys))
      part(&s, "system %s", fmt_secs(sys).s);
    fputs(src == 1 ? " (rusage of the run)\n" : " (sampled from /proc)\n",
          out);
  } else if ((r = REASON(t, "proc_stat", "proc"))) {
    reason_line(out, "CPU time", r);
  }
  const pp_counter_stats *c = ctr(t, "proc.cpu_pct");
  if (c)
    line(out, "CPU", "mean %s, max %s (100%% = one core)", fmt_pct(c->mean).s,
         fmt_pct(c->max).s);
  else if ((r = REASON(t, "proc_stat", "proc")))
    reason_line(out, "CPU", r);
  tree_line_max(out, t, "threads", "proc.threads", 0, "proc_stat");
  tree_line_max(out, t, "processes", "proc.procs", 0, "proc_stat");

  const pp_counter_stats *pk = ctr(t, "proc.rss_peak_bytes");
  const pp_counter_stats *rss = ctr(t, "proc.rss_bytes");
  if (pk || has_maxrss) {
    put_label(out, "RSS peak");
    sep s = {out, 0};
    if (pk)
      part(&s, "%s (tree total, sampled)", fmt_bytes(pk->last).s);
    if (has_maxrss)
      part(&s, "%s (largest process, rusage)", fmt_bytes(maxrss).s);
    fputc('\n', out);
  } else if ((r = REASON(t, "proc_status", "proc_stat", "proc"))) {
    reason_line(out, "RSS peak", r);
  }
  if (rss)
    line(out, "RSS", "mean %s, max %s", fmt_bytes(rss->mean).s,
         fmt_bytes(rss->max).s);
  tree_line_max(out, t, "VmHWM", "proc.hwm_bytes", 1, "proc_status");
  tree_line_max(out, t, "virtual memory", "proc.vsize_bytes", 1,
                "proc_stat");
  tree_pair(out, t, "page faults", "minor", "proc.minflt_total", "major",
            "proc.majflt_total", 0, "proc_stat");
  /* /proc/PID/status counts the main thread of each process only; the
   * perf_event section counts every thread */
  tree_pair(out, t, "ctx sw (main thr)", "voluntary", "proc.vol_ctxt_total",
            "involuntary", "proc.nonvol_ctxt_total", 0, "proc_status");
  tree_pair(out, t, "disk I/O", "read", "proc.read_bytes_total", "write",
            "proc.write_bytes_total", 1, "proc_io");
}

/* ---- threads of the profiled programs ------------------------------------ */

/* s cut to at most max bytes without splitting a UTF-8 sequence, shown
 * with control characters as '?', padded with spaces to width w. */
static void put_cell(FILE *out, const char *s, size_t max, int w) {
  size_t n = strlen(s);
  if (n > max) {
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
      n--;
  }
  put_clean(out, s, n);
  fprintf(out, "%*s", w - (int)n > 0 ? w - (int)n : 0, "");
}

static void thread_row_cells(FILE *out, double user, double sys, double cpu,
                             double whole) {
  fprintf(out, " %9s %9s %9s %7s", fmt_secs(user).s, fmt_secs(sys).s,
          fmt_secs(cpu).s, fmt_pct(cpu / whole * 100.0).s);
}

/* CPU per thread of the profiled tree, from the sampler's thread table:
 * the top THREADS_LISTED by CPU, the rest summed in one row, and the CPU
 * no sampled thread accounts for (threads that ended between samples or
 * past the bound), so that the shares add up to the tree's CPU. */
static int section_tree_threads(FILE *out, const pp_trace *t) {
  pp_run_tree rt;
  if (pp_run_tree_get(t, &rt) != 0)
    return -1;
  double whole = pp_run_tree_cpu_whole(&rt);
  if (!rt.nthreads) {
    const char *r = REASON(t, "threads", "proc_stat", "proc");
    if (rt.is_run && r) {
      fputs("\nthreads of the profiled programs\n", out);
      reason_line(out, "threads", r);
    }
    pp_run_tree_free(&rt);
    return 0;
  }
  fputs("\nthreads of the profiled programs (CPU as last sampled", out);
  double hz;
  if (meta_num(t, "sampler.hz", &hz))
    fprintf(out, " at %g Hz", hz);
  fprintf(out, "; share of the tree's CPU time, %s", fmt_secs(whole).s);
  if (rt.tree_cpu_src && whole == rt.tree_cpu_s)
    fprintf(out, " %s",
            strcmp(rt.tree_cpu_src, "rusage") == 0 ? "from the run's rusage"
                                                   : "sampled from /proc");
  else
    fputs(" summed over the threads", out);
  fputs(")\n", out);
  fprintf(out, "  %-*s %8s %8s %9s %9s %9s %7s  %s\n", THREAD_NAME_W, "thread",
          "tid", "pid", "user", "system", "CPU", "share", "seen");
  size_t shown = rt.nthreads < THREADS_LISTED ? rt.nthreads : THREADS_LISTED;
  for (size_t i = 0; i < shown; i++) {
    const pp_run_ent *e = &rt.threads[i];
    fputs("  ", out);
    put_cell(out, e->comm[0] ? e->comm : "?", THREAD_NAME_W, THREAD_NAME_W);
    fprintf(out, " %8" PRIu32 " %8" PRIu32, e->id, e->owner);
    thread_row_cells(out, e->user_s, e->system_s, e->cpu_s, whole);
    fprintf(out, "  %s..%s s\n", fmt_fixed(e->first_s, 2).s,
            fmt_fixed(e->last_s, 2).s);
  }
  if (rt.nthreads > shown) {
    double u = 0, y = 0, c = 0;
    for (size_t i = shown; i < rt.nthreads; i++) {
      const pp_run_ent *e = &rt.threads[i];
      u += isfinite(e->user_s) ? e->user_s : 0;
      y += isfinite(e->system_s) ? e->system_s : 0;
      c += isfinite(e->cpu_s) ? e->cpu_s : 0;
    }
    char lbl[48];
    snprintf(lbl, sizeof lbl, "(%zu more threads)", rt.nthreads - shown);
    fprintf(out, "  %-*s %8s %8s", THREAD_NAME_W, lbl, "", "");
    thread_row_cells(out, u, y, c, whole);
    fputc('\n', out);
  }
  double rest = whole - rt.threads_cpu_s;
  if (isfinite(rest) && rest > 0) {
    fprintf(out, "  %-*s %8s %8s %9s %9s", THREAD_NAME_W, "(not attributed)",
            "", "", "", "");
    fprintf(out,
            " %9s %7s  CPU of threads that ended between samples or "
            "were not tracked\n",
            fmt_secs(rest).s, fmt_pct(rest / whole * 100.0).s);
  }
  if (rt.threads_untracked_max > 0 || rt.threads_dropped)
    fprintf(out,
            "  note: the bound of %s threads tracked one by one was "
            "reached: up to %s more at once were not tracked (their CPU "
            "is in \"not attributed\")\n",
            fmt_count(rt.threads_max).s,
            fmt_count(rt.threads_untracked_max + (double)rt.threads_dropped).s);
  pp_run_tree_free(&rt);
  return 0;
}

/* ---- perf_event ------------------------------------------------------------ */

typedef struct perf_ev {
  const char *name;
  int hardware;
} perf_ev;

/* The events the perf collector opens, in its table order. */
static const perf_ev perf_events[] = {
    {"cycles", 1},           {"instructions", 1},
    {"cache-references", 1}, {"cache-misses", 1},
    {"branches", 1},         {"branch-misses", 1},
    {"L1-dcache-load-misses", 1}, {"LLC-load-misses", 1},
    {"task-clock", 0},       {"context-switches", 0},
    {"cpu-migrations", 0},   {"page-faults", 0}};
#define N_PERF_EVENTS (sizeof perf_events / sizeof perf_events[0])

static int perf_ratio_name(const char *n) {
  return strcmp(n, "perf.ipc") == 0 ||
         strcmp(n, "perf.cache_miss_ratio") == 0 ||
         strcmp(n, "perf.branch_miss_ratio") == 0;
}

/* Why perf event `ev` has no value: "unavailable.perf.<event>", then the
 * hardware or software group, then "perf". */
static const char *perf_reason(const pp_trace *t, const char *ev, int hw) {
  char g[96];
  int n = snprintf(g, sizeof g, "perf.%s", ev);
  const char *r = NULL;
  if (n > 0 && (size_t)n < sizeof g)
    r = REASON(t, g);
  if (!r)
    r = hw ? REASON(t, "perf_hw", "perf") : REASON(t, "perf_sw", "perf");
  return r;
}

/* META perf.<event>.running_pct, when below 100. */
static int perf_running(const pp_trace *t, const char *ev, double *pct) {
  char k[128];
  int n = snprintf(k, sizeof k, "%s.running_pct", ev);
  return n > 0 && (size_t)n < sizeof k && meta_num(t, k, pct) && *pct < 100;
}

static const pp_counter_stats *perf_ctr(const pp_trace *t, const char *ev) {
  char k[96];
  int n = snprintf(k, sizeof k, "perf.%s", ev);
  return n > 0 && (size_t)n < sizeof k ? ctr(t, k) : NULL;
}

/* A ratio from its counter, else from two events' last values. */
static int perf_ratio(const pp_trace *t, const char *name, const char *num_ev,
                      const char *den_ev, double *out) {
  const pp_counter_stats *c = ctr(t, name);
  if (c && isfinite(c->last)) {
    *out = c->last;
    return 1;
  }
  const pp_counter_stats *a = perf_ctr(t, num_ev), *b = perf_ctr(t, den_ev);
  if (a && b && b->last > 0 && isfinite(a->last) && isfinite(b->last)) {
    *out = a->last / b->last;
    return 1;
  }
  return 0;
}

static void perf_value_line(FILE *out, const pp_trace *t, const char *ev,
                            const pp_counter_stats *c) {
  char full[96];
  int n = snprintf(full, sizeof full, "perf.%s", ev);
  put_label(out, ev);
  if (strcmp(ev, "task-clock") == 0)
    fprintf(out, "%s ms", fmt_fixed(c->last, 2).s);
  else
    fputs(fmt_count(c->last).s, out);
  double run;
  if (n > 0 && (size_t)n < sizeof full && perf_running(t, full, &run))
    fprintf(out, " (running %s%%)", run >= 1 ? numf("%.0f", run).s : "<1");
  fputc('\n', out);
}

static void section_perf(FILE *out, const pp_trace *t) {
  static const char *const pre[] = {"perf.", NULL};
  if (!any_counter(t, pre) && !any_meta(t, "unavailable.perf"))
    return;
  fputs("\nhardware counters (perf_event, whole process tree)\n", out);
  for (size_t i = 0; i < N_PERF_EVENTS; i++) {
    const pp_counter_stats *c = perf_ctr(t, perf_events[i].name);
    const char *r;
    if (c)
      perf_value_line(out, t, perf_events[i].name, c);
    else if ((r = perf_reason(t, perf_events[i].name, perf_events[i].hardware)))
      reason_line(out, perf_events[i].name, r);
  }
  /* Events this report does not know by name, as recorded. */
  for (size_t i = 0; i < t->prof.ncounters; i++) {
    const pp_counter_stats *c = &t->prof.counters[i];
    const char *n = cname(t, c);
    if (!has_prefix(n, "perf.") || perf_ratio_name(n))
      continue;
    int known = 0;
    for (size_t k = 0; k < N_PERF_EVENTS && !known; k++)
      known = strcmp(n + 5, perf_events[k].name) == 0;
    if (!known)
      perf_value_line(out, t, n + 5, c);
  }
  double v;
  if (perf_ratio(t, "perf.ipc", "instructions", "cycles", &v))
    line(out, "IPC", "%s instructions per cycle", fmt_fixed(v, 2).s);
  if (perf_ratio(t, "perf.cache_miss_ratio", "cache-misses",
                 "cache-references", &v))
    line(out, "cache miss ratio", "%s of cache references",
         fmt_pct(v * 100.0).s);
  if (perf_ratio(t, "perf.branch_miss_ratio", "branch-misses", "branches",
                 &v))
    line(out, "branch miss ratio", "%s of branches", fmt_pct(v * 100.0).s);
}

/* ---- energy ----------------------------------------------------------------- */

/* Grid intensity in gCO2eq/kWh: META carbon.g_per_kwh when a positive
 * number, else the default (*is_default set). */
static double carbon_intensity(const pp_trace *t, int *is_default) {
  double g;
  *is_default = !(meta_num(t, "carbon.g_per_kwh", &g) && g > 0);
  return *is_default ? DEFAULT_G_PER_KWH : g;
}

static void power_energy(FILE *out, const char *lbl, size_t len,
                         const pp_counter_stats *w,
                         const pp_counter_stats *j) {
  put_labeln(out, lbl, len);
  sep s = {out, 0};
  if (w) {
    part(&s, "mean %s W", fmt_sig3(w->mean).s);
    part(&s, "max %s W", fmt_sig3(w->max).s);
  }
  if (j)
    part(&s, "energy %s", fmt_joules(j->last).s);
  fputc('\n', out);
}

static int section_energy(FILE *out, const pp_trace *t) {
  static const char *const pre[] = {"power.", "energy.", NULL};
  const char *r = REASON(t, "power", "energy", "rapl");
  if (!any_counter(t, pre)) {
    if (r) {
      fputs("\nenergy\n", out);
      reason_line(out, "energy", r);
    }
    return 0;
  }
  fputs("\nenergy (RAPL, whole host)\n", out);
  domain *d;
  long nd = domains(t, &d);
  if (nd < 0)
    return -1;
  for (long i = 0; i < nd; i++)
    power_energy(out, d[i].name, d[i].len, d[i].w, d[i].j);
  pp__free(d);
  const pp_counter_stats *pw = ctr(t, "power.package_w");
  const pp_counter_stats *pj = ctr(t, "energy.package_j");
  if (pw || pj)
    power_energy(out, "package total", strlen("package total"), pw, pj);
  if (!pj || !isfinite(pj->last))
    return 0;
  double joules = pj->last;
  const pp_profile *p = &t->prof;
  if (p->nframes && p->frames[0].frames) {
    const char *fn = pp_trace_loc_name(t, p->frames[0].loc);
    put_label(out, "per frame (estimate)");
    fprintf(out, "%s (package energy / %s frames of \"",
            fmt_joules(joules / (double)p->frames[0].frames).s,
            fmt_count((double)p->frames[0].frames).s);
    put_clean(out, fn, strlen(fn));
    fputs("\")\n", out);
  }
  if (p->nzones && p->zones[0].count) {
    const char *zn = pp_trace_loc_name(t, p->zones[0].loc);
    put_label(out, "per call (estimate)");
    fprintf(out, "%s (package energy / %s calls of zone \"",
            fmt_joules(joules / (double)p->zones[0].count).s,
            fmt_count((double)p->zones[0].count).s);
    put_clean(out, zn, strlen(zn));
    fputs("\")\n", out);
  }
  int dflt;
  double g_kwh = carbon_intensity(t, &dflt);
  line(out, "carbon (estimate)", "%s gCO2eq at %s gCO2eq/kWh%s",
       fmt_sig3(joules / 3.6e6 * g_kwh).s, fmt_sig3(g_kwh).s,
       dflt ? " (default: world average)" : "");
  return 0;
}

/* ---- other reasons -------------------------------------------------------- */

static void section_other(FILE *out, const pp_trace *t) {
  int any = 0;
  for (size_t i = 0; i < t->nmeta; i++) {
    const pp_meta *m = &t->meta[i];
    if (!m->key || !has_prefix(m->key, "unavailable."))
      continue;
    const char *g = m->key + strlen("unavailable.");
    if (known_group(g) || !meta_is_last(t, i))
      continue;
    if (!any++)
      fputs("\nother metrics\n", out);
    reason_line(out, g, strip_reason(m->value ? m->value : ""));
  }
}

int pp_report_system(FILE *out, const pp_trace *t) {
  if (!out || !t || !t->analyzed)
    return -1;
  if (!has_system_data(t))
    return 0;
  section_run(out, t);
  if (section_system(out, t))
    return -1;
  section_tree(out, t);
  if (section_tree_threads(out, t))
    return -1;
  section_perf(out, t);
  if (section_energy(out, t))
    return -1;
  section_other(out, t);
  return ferror(out) ? -1 : 0;
}

/* ---- JSON ------------------------------------------------------------------- */

/* "key": {"mean","min","max","last","samples"} of a sampled gauge. */
static void j_stats(pp_jsonw *w, const char *key, const pp_counter_stats *c) {
  if (!c)
    return;
  pp_jsonw_key(w, key);
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_double(w, "mean", c->mean);
  pp_jsonw_kv_double(w, "min", c->min);
  pp_jsonw_kv_double(w, "max", c->max);
  pp_jsonw_kv_double(w, "last", c->last);
  pp_jsonw_kv_uint(w, "samples", c->samples);
  pp_jsonw_obj_end(w);
}

/* "key": the last value of a cumulative counter. */
static void j_last(pp_jsonw *w, const char *key, const pp_counter_stats *c) {
  if (c)
    pp_jsonw_kv_double(w, key, c->last);
}

/* Gauges of a list {json key, counter name}. */
static void j_stats_list(pp_jsonw *w, const pp_trace *t,
                         const char *const (*list)[2], size_t n) {
  for (size_t i = 0; i < n; i++)
    j_stats(w, list[i][0], ctr(t, list[i][1]));
}

static void j_run(pp_jsonw *w, const pp_trace *t) {
  const char *cmd = pp_trace_meta(t, "run.command");
  const char *ex = pp_trace_meta(t, "run.exit");
  double v[4];
  static const char *const keys[4][2] = {{"run.wall_ns", "wall_s"},
                                         {"run.user_ns", "user_s"},
                                         {"run.system_ns", "system_s"},
                                         {"run.maxrss_bytes", "maxrss_bytes"}};
  int has[4], any = cmd || ex;
  for (size_t i = 0; i < 4; i++)
    any |= has[i] = meta_num(t, keys[i][0], &v[i]);
  if (!any)
    return;
  pp_jsonw_key(w, "run");
  pp_jsonw_obj_begin(w);
  if (cmd)
    pp_jsonw_kv_str(w, "command", cmd);
  if (ex)
    pp_jsonw_kv_str(w, "exit", ex);
  pp_run_tree rt;
  if (pp_run_tree_get(t, &rt) == 0) { /* no tables needed: cannot fail */
    if (rt.has_pid)
      pp_jsonw_kv_uint(w, "pid", rt.pid);
    if (rt.has_profiler_pid)
      pp_jsonw_kv_uint(w, "profiler_pid", rt.profiler_pid);
    if (isfinite(rt.profiler_cpu_s))
      pp_jsonw_kv_double(w, "profiler_cpu_s", rt.profiler_cpu_s);
    pp_run_tree_free(&rt);
  }
  for (size_t i = 0; i < 4; i++)
    if (has[i])
      pp_jsonw_kv_double(w, keys[i][1], i < 3 ? v[i] / 1e9 : v[i]);
  pp_jsonw_obj_end(w);
}

/* "key": [{"<idx>": N, "<field>": value}, ...] of a family. */
static int j_family(pp_jsonw *w, const pp_trace *t, const char *key,
                    const char *pre, const char *suf, const char *idx,
                    const char *field, int use_max) {
  idx_ctr *v;
  long n = family(t, pre, suf, &v);
  if (n <= 0)
    return (int)n;
  pp_jsonw_key(w, key);
  pp_jsonw_arr_begin(w);
  for (long i = 0; i < n; i++) {
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_uint(w, idx, v[i].n);
    pp_jsonw_kv_double(w, field, use_max == 1   ? v[i].c->max
                                 : use_max == 0 ? v[i].c->mean
                                                : v[i].c->last);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
  pp__free(v);
  return 0;
}

static int j_host(pp_jsonw *w, const pp_trace *t) {
  static const char *const gauges[][2] = {
      {"cpu_busy_pct", "sys.cpu.busy_pct"},
      {"cpu_user_pct", "sys.cpu.user_pct"},
      {"cpu_system_pct", "sys.cpu.system_pct"},
      {"cpu_iowait_pct", "sys.cpu.iowait_pct"},
      {"cpu_steal_pct", "sys.cpu.steal_pct"},
      {"load1", "sys.load1"},
      {"mem_used_bytes", "sys.mem.used_bytes"},
      {"mem_available_bytes", "sys.mem.available_bytes"},
      {"mem_total_bytes", "sys.mem.total_bytes"},
      {"swap_used_bytes", "sys.swap.used_bytes"},
      {"psi_cpu_some_pct", "sys.psi.cpu.some_pct"},
      {"psi_cpu_full_pct", "sys.psi.cpu.full_pct"},
      {"psi_memory_some_pct", "sys.psi.memory.some_pct"},
      {"psi_memory_full_pct", "sys.psi.memory.full_pct"},
      {"psi_io_some_pct", "sys.psi.io.some_pct"},
      {"psi_io_full_pct", "sys.psi.io.full_pct"},
      {"ctxt_per_s", "sys.ctxt_per_s"},
      {"intr_per_s", "sys.intr_per_s"}};
  static const char *const pre[] = {"sys.", NULL};
  if (!any_counter(t, pre))
    return 0;
  pp_jsonw_key(w, "host");
  pp_jsonw_obj_begin(w);
  double hz;
  if (meta_num(t, "sampler.hz", &hz))
    pp_jsonw_kv_double(w, "sampler_hz", hz);
  pp_jsonw_kv_uint(w, "samples", system_samples(t));
  j_stats_list(w, t, gauges, sizeof gauges / sizeof gauges[0]);
  int rc = j_family(w, t, "cpu_busy_max_pct", "sys.cpu", ".busy_pct", "cpu",
                    "max_pct", 1);
  if (!rc)
    rc = j_family(w, t, "cpu_freq_mean_mhz", "sys.cpu", ".freq_mhz", "cpu",
                  "mean_mhz", 0);
  if (!rc)
    rc = j_family(w, t, "cpu_throttle_total", "sys.cpu", ".throttle_total",
                  "cpu", "total", 2);
  if (!rc)
    rc = j_family(w, t, "numa_used_max_bytes", "sys.numa", ".used_bytes",
                  "node", "max_bytes", 1);
  int any = 0;
  for (size_t i = 0; i < t->prof.ncounters; i++) {
    const pp_counter_stats *c = &t->prof.counters[i];
    const char *s;
    size_t len;
    if (!temp_sensor(cname(t, c), &s, &len))
      continue;
    if (!any++) {
      pp_jsonw_key(w, "temperatures");
      pp_jsonw_arr_begin(w);
    }
    pp_jsonw_obj_begin(w);
    pp_jsonw_key(w, "sensor");
    pp_jsonw_strn(w, s, len);
    pp_jsonw_kv_double(w, "max_c", c->max);
    pp_jsonw_kv_double(w, "mean_c", c->mean);
    pp_jsonw_obj_end(w);
  }
  if (any)
    pp_jsonw_arr_end(w);
  pp_jsonw_obj_end(w);
  return rc;
}

/* A double, or null when not finite. */
static void j_num(pp_jsonw *w, const char *key, double v) {
  pp_jsonw_key(w, key);
  if (isfinite(v))
    pp_jsonw_double(w, v);
  else
    pp_jsonw_null(w);
}

/* The sampler's process and thread tables (schema_minor 7). */
static int j_tree_tables(pp_jsonw *w, const pp_trace *t) {
  pp_run_tree rt;
  if (pp_run_tree_get(t, &rt) != 0)
    return -1;
  if (!rt.nprocs && !rt.nthreads) {
    pp_run_tree_free(&rt);
    return 0;
  }
  double whole = pp_run_tree_cpu_whole(&rt);
  pp_jsonw_key(w, "processes");
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < rt.nprocs; i++) {
    const pp_run_ent *e = &rt.procs[i];
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_uint(w, "pid", e->id);
    pp_jsonw_kv_uint(w, "ppid", e->owner);
    pp_jsonw_kv_str(w, "name", e->comm);
    j_num(w, "first_seen_s", e->first_s);
    j_num(w, "last_seen_s", e->last_s);
    j_num(w, "cpu_s", e->cpu_s);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
  pp_jsonw_key(w, "threads");
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < rt.nthreads; i++) {
    const pp_run_ent *e = &rt.threads[i];
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_uint(w, "tid", e->id);
    pp_jsonw_kv_uint(w, "pid", e->owner);
    pp_jsonw_kv_str(w, "name", e->comm);
    j_num(w, "user_s", e->user_s);
    j_num(w, "system_s", e->system_s);
    j_num(w, "cpu_s", e->cpu_s);
    j_num(w, "share_pct", e->cpu_s / whole * 100.0);
    j_num(w, "first_seen_s", e->first_s);
    j_num(w, "last_seen_s", e->last_s);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
  j_num(w, "threads_cpu_s", rt.threads_cpu_s);
  j_num(w, "threads_whole_cpu_s", whole);
  double rest = whole - rt.threads_cpu_s;
  j_num(w, "unattributed_cpu_s", isfinite(rest) && rest > 0 ? rest : 0);
  j_num(w, "threads_max", rt.threads_max);
  pp_jsonw_kv_double(w, "threads_untracked_max",
                     rt.threads_untracked_max + (double)rt.threads_dropped);
  pp_jsonw_kv_double(w, "procs_untracked_max",
                     rt.procs_untracked_max + (double)rt.procs_dropped);
  pp_run_tree_free(&rt);
  return 0;
}

static int j_tree(pp_jsonw *w, const pp_trace *t) {
  static const char *const gauges[][2] = {
      {"cpu_pct", "proc.cpu_pct"},
      {"user_pct", "proc.user_pct"},
      {"system_pct", "proc.system_pct"},
      {"threads", "proc.threads"},
      {"procs", "proc.procs"},
      {"rss_bytes", "proc.rss_bytes"},
      {"hwm_bytes", "proc.hwm_bytes"},
      {"vsize_bytes", "proc.vsize_bytes"},
      {"minflt_per_s", "proc.minflt_per_s"},
      {"majflt_per_s", "proc.majflt_per_s"},
      {"read_bytes_per_s", "proc.read_bytes_per_s"},
      {"write_bytes_per_s", "proc.write_bytes_per_s"}};
  static const char *const totals[][2] = {
      {"rss_peak_bytes", "proc.rss_peak_bytes"},
      {"minflt_total", "proc.minflt_total"},
      {"majflt_total", "proc.majflt_total"},
      {"vol_ctxt_total", "proc.vol_ctxt_total"},
      {"nonvol_ctxt_total", "proc.nonvol_ctxt_total"},
      {"read_bytes_total", "proc.read_bytes_total"},
      {"write_bytes_total", "proc.write_bytes_total"}};
  static const char *const pre[] = {"proc.", NULL};
  double user, sys, maxrss;
  int src = tree_cpu_time(t, &user, &sys);
  int has_maxrss = meta_num(t, "run.maxrss_bytes", &maxrss);
  if (!any_counter(t, pre) && !src && !has_maxrss)
    return 0;
  int rc;
  pp_jsonw_key(w, "process_tree");
  pp_jsonw_obj_begin(w);
  if (src) {
    if (isfinite(user))
      pp_jsonw_kv_double(w, "cpu_user_s", user);
    if (isfinite(sys))
      pp_jsonw_kv_double(w, "cpu_system_s", sys);
    pp_jsonw_kv_str(w, "cpu_time_source", src == 1 ? "rusage" : "sampled");
  }
  if (has_maxrss)
    pp_jsonw_kv_double(w, "maxrss_bytes", maxrss);
  j_stats_list(w, t, gauges, sizeof gauges / sizeof gauges[0]);
  for (size_t i = 0; i < sizeof totals / sizeof totals[0]; i++)
    j_last(w, totals[i][0], ctr(t, totals[i][1]));
  rc = j_tree_tables(w, t);
  pp_jsonw_obj_end(w);
  return rc;
}

static void j_perf(pp_jsonw *w, const pp_trace *t) {
  static const char *const pre[] = {"perf.", NULL};
  if (!any_counter(t, pre))
    return;
  pp_jsonw_key(w, "perf");
  pp_jsonw_obj_begin(w);
  pp_jsonw_key(w, "events");
  pp_jsonw_obj_begin(w);
  for (size_t i = 0; i < t->prof.ncounters; i++) {
    const pp_counter_stats *c = &t->prof.counters[i];
    const char *n = cname(t, c);
    if (!has_prefix(n, "perf.") || perf_ratio_name(n))
      continue;
    pp_jsonw_key(w, n + 5);
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_double(w, "value", c->last);
    if (strcmp(n + 5, "task-clock") == 0)
      pp_jsonw_kv_double(w, "seconds", c->last / 1e3);
    double run;
    char k[128];
    int kn = snprintf(k, sizeof k, "%s.running_pct", n);
    if (kn > 0 && (size_t)kn < sizeof k && meta_num(t, k, &run))
      pp_jsonw_kv_double(w, "running_pct", run);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_obj_end(w);
  double v;
  if (perf_ratio(t, "perf.ipc", "instructions", "cycles", &v))
    pp_jsonw_kv_double(w, "ipc", v);
  if (perf_ratio(t, "perf.cache_miss_ratio", "cache-misses",
                 "cache-references", &v))
    pp_jsonw_kv_double(w, "cache_miss_pct", v * 100.0);
  if (perf_ratio(t, "perf.branch_miss_ratio", "branch-misses", "branches",
                 &v))
    pp_jsonw_kv_double(w, "branch_miss_pct", v * 100.0);
  pp_jsonw_obj_end(w);
}

static void j_power(pp_jsonw *w, const char *pw_key, const char *j_key,
                    const pp_counter_stats *pw, const pp_counter_stats *j) {
  if (pw) {
    char k[48];
    snprintf(k, sizeof k, "%s_mean_w", pw_key);
    pp_jsonw_kv_double(w, k, pw->mean);
    snprintf(k, sizeof k, "%s_max_w", pw_key);
    pp_jsonw_kv_double(w, k, pw->max);
  }
  if (j)
    pp_jsonw_kv_double(w, j_key, j->last);
}

static int j_energy(pp_jsonw *w, const pp_trace *t) {
  static const char *const pre[] = {"power.", "energy.", NULL};
  if (!any_counter(t, pre))
    return 0;
  domain *d;
  long nd = domains(t, &d);
  if (nd < 0)
    return -1;
  pp_jsonw_key(w, "energy");
  pp_jsonw_obj_begin(w);
  pp_jsonw_key(w, "domains");
  pp_jsonw_arr_begin(w);
  for (long i = 0; i < nd; i++) {
    pp_jsonw_obj_begin(w);
    pp_jsonw_key(w, "name");
    pp_jsonw_strn(w, d[i].name, d[i].len);
    j_power(w, "power", "energy_j", d[i].w, d[i].j);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
  pp__free(d);
  const pp_counter_stats *pw = ctr(t, "power.package_w");
  const pp_counter_stats *pj = ctr(t, "energy.package_j");
  j_power(w, "package_power", "package_energy_j", pw, pj);
  if (pj && isfinite(pj->last)) {
    const pp_profile *p = &t->prof;
    if (p->nframes && p->frames[0].frames) {
      pp_jsonw_kv_str(w, "frame_stream",
                      pp_trace_loc_name(t, p->frames[0].loc));
      pp_jsonw_kv_double(w, "joules_per_frame_estimate",
                         pj->last / (double)p->frames[0].frames);
    }
    if (p->nzones && p->zones[0].count) {
      pp_jsonw_kv_str(w, "top_zone", pp_trace_loc_name(t, p->zones[0].loc));
      pp_jsonw_kv_double(w, "joules_per_zone_call_estimate",
                         pj->last / (double)p->zones[0].count);
    }
    int dflt;
    double g = carbon_intensity(t, &dflt);
    pp_jsonw_kv_double(w, "carbon_g_estimate", pj->last / 3.6e6 * g);
    pp_jsonw_kv_double(w, "carbon_g_per_kwh", g);
    pp_jsonw_kv_bool(w, "carbon_g_per_kwh_default", dflt);
  }
  pp_jsonw_obj_end(w);
  return 0;
}

static void j_unavailable(pp_jsonw *w, const pp_trace *t) {
  pp_jsonw_key(w, "unavailable");
  pp_jsonw_obj_begin(w);
  for (size_t i = 0; i < t->nmeta; i++) {
    const pp_meta *m = &t->meta[i];
    if (!m->key || !has_prefix(m->key, "unavailable.") || !meta_is_last(t, i))
      continue;
    pp_jsonw_kv_str(w, m->key + strlen("unavailable."),
                    strip_reason(m->value ? m->value : ""));
  }
  pp_jsonw_obj_end(w);
}

int pp_summary_system_json(struct pp_jsonw *w, const pp_trace *t) {
  if (!w || !t || !t->analyzed)
    return -1;
  pp_jsonw_key(w, "system");
  if (!has_system_data(t)) {
    pp_jsonw_null(w);
    return w->err ? -1 : 0;
  }
  pp_jsonw_obj_begin(w);
  j_run(w, t);
  int rc = j_host(w, t);
  if (!rc)
    rc = j_tree(w, t);
  if (!rc) {
    j_perf(w, t);
    rc = j_energy(w, t);
  }
  if (!rc)
    j_unavailable(w, t);
  pp_jsonw_obj_end(w);
  return rc || w->err ? -1 : 0;
}
