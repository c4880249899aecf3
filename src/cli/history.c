/* SPDX-License-Identifier: MIT */
/*
 * `pipeprof history`: keep a summary of every run in an SQLite database and
 * look at trends. `add` records a trace or run directory, `list` prints the
 * runs, `show` prints one metric's value per run with the change points
 * found by the Chromium perf dashboard's rule. The database layer is in
 * history_db.c; the command's behaviour is specified in docs/history.md.
 * Usage errors print one line and exit 2, failures one line and exit 1.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze/analysis.h"
#include "cli.h"
#include "history.h"
#include "units.h"

int pp_cli_history(int argc, char **argv);

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

static const char history_usage[] =
    "usage: pipeprof history [--db PATH] add FILE.pptrace|RUN_DIR "
    "[--label L]\n"
    "       pipeprof history [--db PATH] list\n"
    "       pipeprof history [--db PATH] show METRIC [--stat S] "
    "[--zone NAME]\n"
    "\n"
    "Keep a summary of every run (time, label, process, command, wall time,\n"
    "per zone count/mean/p50/p90/p99, per counter mean/last) in an SQLite\n"
    "database and show how a metric moves from run to run.\n"
    "\n"
    "  add       record a trace file or `pipeprof run` directory\n"
    "  list      print the runs: id, time (UTC), label, wall time\n"
    "  show      print METRIC per run, flagging change points (segments of\n"
    "            >= 6 runs whose medians differ by >= 1% and by >= 2.5x\n"
    "            the shorter segment's standard deviation)\n"
    "\n"
    "  METRIC        wall, a zone name or a counter name (zone:NAME and\n"
    "                counter:NAME when a name is both)\n"
    "  --db PATH     database (default $XDG_DATA_HOME/pipeprof/history.db,\n"
    "                else ~/.local/share/pipeprof/history.db)\n"
    "  --label L     label of the recorded run (add)\n"
    "  --stat S      zones: p50 (default), p90, p99, mean or count;\n"
    "                counters: mean (default) or last (show)\n"
    "  --zone NAME   show the zone NAME (then METRIC may be left out)\n";

static int usage(const char *fmt, const char *arg) {
  fputs("pipeprof history: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs(" (see 'pipeprof history --help')\n", stderr);
  return EXIT_USAGE;
}

static int fail(const char *msg) {
  fprintf(stderr, "pipeprof history: %s\n", msg);
  return EXIT_FAIL;
}

static void fmt_time(int64_t t, char *buf, size_t len) {
  time_t tt = (time_t)t;
  struct tm tm;
  if (!gmtime_r(&tt, &tm) || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
    snprintf(buf, len, "%lld", (long long)t);
}

/* Nanoseconds as every view prints them (units.h); "-" for none (< 0). */
static void fmt_ns(double ns, char *buf, size_t len) {
  if (ns < 0)
    snprintf(buf, len, "-");
  else
    pp_format_ns(buf, len, ns);
}

static void fmt_value(double v, char *buf, size_t len) {
  if (v == floor(v) && fabs(v) < 1e15)
    snprintf(buf, len, "%.0f", v);
  else
    snprintf(buf, len, "%.6g", v);
}

/* ---- add ----------------------------------------------------------------- */

static int cmd_add(const char *db, const char *file, const char *label) {
  pp_trace t;
  pp_analysis a;
  if (pp_cli_load(file, &t, &a) != 0)
    return EXIT_FAIL;
  char err[PATH_MAX + 256];
  int64_t id = pp_history_record(db, &a, label, err, sizeof err);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  if (id < 0)
    return fail(err);
  char def[PATH_MAX];
  if (!db && pp_history_default_path(def, sizeof def, NULL, 0) == 0)
    db = def;
  printf("recorded run %lld in %s\n", (long long)id, db ? db : "history");
  return EXIT_OK;
}

/* ---- list ---------------------------------------------------------------- */

static int cmd_list(const char *db) {
  char err[PATH_MAX + 256];
  pp_history_run *runs;
  size_t n;
  if (pp_history_list(db, &runs, &n, err, sizeof err) != 0)
    return fail(err);
  printf("%6s  %-20s  %-12s  %s\n", "id", "time (UTC)", "wall", "label");
  for (size_t i = 0; i < n; i++) {
    char when[64], wall[32];
    fmt_time(runs[i].time_s, when, sizeof when);
    fmt_ns((double)runs[i].wall_ns, wall, sizeof wall);
    if (*runs[i].label)
      printf("%6lld  %-20s  %-12s  %s\n", (long long)runs[i].id, when, wall,
             runs[i].label);
    else
      printf("%6lld  %-20s  %s\n", (long long)runs[i].id, when, wall);
  }
  pp_history_runs_free(runs, n);
  return fflush(stdout) == 0 ? EXIT_OK : fail("cannot write the list");
}

/* ---- show ---------------------------------------------------------------- */

static int is_zone_stat(const char *s) {
  static const char *const ok[] = {"p50", "p90", "p99", "mean", "count"};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    if (strcmp(s, ok[i]) == 0)
      return 1;
  return 0;
}

static int is_counter_stat(const char *s) {
  return strcmp(s, "mean") == 0 || strcmp(s, "last") == 0;
}

static int cmd_show(const char *db, const char *metric, const char *stat,
                    const char *zone) {
  char name[1024], err[PATH_MAX + 256];
  int guessed = 0; /* METRIC is no zone: maybe a counter */
  if (zone) {
    if (metric && !stat && is_zone_stat(metric))
      stat = metric; /* `show p99 --zone detect` */
    else if (metric && strcmp(metric, zone) != 0)
      return usage("give either METRIC or --zone, not both ('%s')", metric);
    snprintf(name, sizeof name, "zone:%s", zone);
  } else if (!metric) {
    return usage("missing METRIC%s", "");
  } else if (strcmp(metric, "wall") == 0) {
    if (stat)
      return usage("'wall' has one value per run; drop --stat%s", "");
    snprintf(name, sizeof name, "wall");
    stat = "ns";
  } else if (strncmp(metric, "zone:", 5) == 0 ||
             strncmp(metric, "counter:", 8) == 0) {
    snprintf(name, sizeof name, "%s", metric);
  } else {
    snprintf(name, sizeof name, "zone:%s", metric);
    int has = pp_history_has_metric(db, name, err, sizeof err);
    if (has < 0)
      return fail(err);
    if (!has) {
      snprintf(name, sizeof name, "counter:%s", metric);
      guessed = 1;
    }
  }
  int is_zone = strncmp(name, "zone:", 5) == 0;
  int is_counter = strncmp(name, "counter:", 8) == 0;
  if (!stat)
    stat = is_zone ? "p50" : "mean";
  if ((is_zone && !is_zone_stat(stat)) ||
      (is_counter && !is_counter_stat(stat)))
    return usage(is_zone ? "bad --stat '%s' for a zone (p50, p90, p99, mean "
                           "or count)"
                         : "bad --stat '%s' for a counter (mean or last)",
                 stat);
  pp_history_point *pts;
  size_t n;
  if (pp_history_series(db, name, stat, &pts, &n, err, sizeof err) != 0)
    return fail(err);
  if (n == 0) {
    char msg[1200 + PATH_MAX], def[PATH_MAX];
    if (!db && pp_history_default_path(def, sizeof def, NULL, 0) == 0)
      db = def;
    if (is_zone || is_counter)
      snprintf(msg, sizeof msg, "no %s named '%s' in %s",
               is_zone   ? "zone"
               : guessed ? "zone or counter"
                         : "counter",
               strchr(name, ':') + 1, db ? db : "the history");
    else
      snprintf(msg, sizeof msg, "no runs in %s", db ? db : "the history");
    pp_history_points_free(pts, n);
    return fail(msg);
  }
  int changes = pp_history_changepoints(pts, n);
  if (changes < 0) {
    pp_history_points_free(pts, n);
    return fail("out of memory");
  }
  /* Durations print as `list` prints the wall time (ns, us, ms or s);
   * counts and counter values as plain numbers. */
  int ns = strcmp(stat, "count") != 0 && !is_counter;
  int is_wall = strcmp(name, "wall") == 0;
  printf("# %s%s%s%s: %zu run%s, %d change point%s\n", name, is_wall ? "" : " ",
         is_wall ? "" : stat, ns ? " (durations)" : "", n, n == 1 ? "" : "s",
         changes, changes == 1 ? "" : "s");
  printf("%6s  %-20s  %-16s  %14s  %s\n", "id", "time (UTC)", "label", "value",
         "flag");
  for (size_t i = 0; i < n; i++) {
    char when[64], val[64];
    fmt_time(pts[i].time_s, when, sizeof when);
    if (ns)
      fmt_ns(pts[i].value, val, sizeof val);
    else
      fmt_value(pts[i].value, val, sizeof val);
    printf("%6lld  %-20s  %-16s  %14s", (long long)pts[i].run_id, when,
           pts[i].label, val);
    if (pts[i].change)
      printf("  change %+.1f%%", 100 * pts[i].change_rel);
    putchar('\n');
  }
  pp_history_points_free(pts, n);
  return fflush(stdout) == 0 ? EXIT_OK : fail("cannot write the series");
}

/* ---- arguments ----------------------------------------------------------- */

int pp_cli_history(int argc, char **argv) {
  const char *db = NULL, *label = NULL, *stat = NULL, *zone = NULL;
  const char *pos[3] = {NULL, NULL, NULL};
  int npos = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char **dst = NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(history_usage, stdout);
      return EXIT_OK;
    } else if (strcmp(a, "--db") == 0) {
      dst = &db;
    } else if (strcmp(a, "--label") == 0) {
      dst = &label;
    } else if (strcmp(a, "--stat") == 0) {
      dst = &stat;
    } else if (strcmp(a, "--zone") == 0) {
      dst = &zone;
    } else if (a[0] == '-' && a[1]) {
      return usage("unknown option '%s'", a);
    } else if (npos == 3) {
      return usage("unexpected argument '%s'", a);
    } else {
      pos[npos++] = a;
      continue;
    }
    if (i + 1 >= argc)
      return usage("%s needs a value", a);
    *dst = argv[++i];
  }
  if (npos == 0)
    return usage("missing subcommand (add, list or show)%s", "");
  const char *sub = pos[0];
  int is_add = strcmp(sub, "add") == 0, is_list = strcmp(sub, "list") == 0;
  int is_show = strcmp(sub, "show") == 0;
  if (!is_add && !is_list && !is_show)
    return usage("unknown subcommand '%s' (add, list or show)", sub);
  if (label && !is_add)
    return usage("--label goes with add, not %s", sub);
  if ((stat || zone) && !is_show)
    return usage("--stat and --zone go with show, not %s", sub);
  if (db && !*db)
    return usage("empty --db path%s", "");
  if (is_list) {
    if (npos > 1)
      return usage("unexpected argument '%s'", pos[1]);
    return cmd_list(db);
  }
  if (npos > 2)
    return usage("unexpected argument '%s'", pos[2]);
  if (is_add) {
    if (npos < 2)
      return usage("missing trace file or run directory%s", "");
    return cmd_add(db, pos[1], label);
  }
  if (stat && !is_zone_stat(stat) && !is_counter_stat(stat))
    return usage("bad --stat '%s' (p50, p90, p99, mean, count or last)", stat);
  return cmd_show(db, npos > 1 ? pos[1] : NULL, stat, zone);
}
