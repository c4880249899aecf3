/* SPDX-License-Identifier: MIT */
/*
 * Run history: one SQLite database that keeps a summary of every recorded
 * run (its time, label, process, command, wall time and, per zone and per
 * counter, a few statistics) so that `pipeprof history` can list the runs
 * and show a metric's trend with change points. The database layer is in
 * src/cli/history_db.c (no dependency on the rest of the CLI, so the tests
 * link it alone); the command is in src/cli/history.c. The schema and the
 * change-point rule are specified in docs/history.md.
 *
 * Invariants: metric names are "wall", "zone:NAME" or "counter:NAME";
 * zone stats are count, mean, p50, p90, p99 (ns), counter stats mean and
 * last, wall's stat is "ns". Every function opens and closes the database
 * itself, so any number of processes may call them at once (WAL mode, 5 s
 * busy timeout, one transaction per recorded run). Without SQLite at build
 * time (PP_HAVE_SQLITE undefined) every function fails with a message.
 */
#ifndef PP_HISTORY_H
#define PP_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"

/* Schema version kept in PRAGMA user_version, and the application_id
 * ("PPHI") that marks the file as ours. */
#define PP_HISTORY_SCHEMA 1
#define PP_HISTORY_APP_ID 0x50504849

/* Smallest segment, relative and noise thresholds of the change-point rule
 * (the Chromium perf dashboard's). */
#define PP_HISTORY_MIN_SEGMENT 6
#define PP_HISTORY_MIN_REL 0.01
#define PP_HISTORY_MIN_SIGMAS 2.5

/* The default database: $XDG_DATA_HOME/pipeprof/history.db, else
 * $HOME/.local/share/pipeprof/history.db. Returns 0, or -1 with a reason in
 * err when neither variable is set or the path does not fit. Creates no
 * directory. */
int pp_history_default_path(char *buf, size_t len, char *err, size_t errlen);

/* Record the summary of an analysed trace t (pp_analyze done) as one run,
 * labelled label (NULL: none), in the database at db_path (NULL: the default
 * path), creating the file, its directories and the schema when absent.
 * Returns the new run id (> 0), or -1 with a one-line reason in err (always
 * NUL-terminated); a file that is not a history database is refused with
 * "not a pipeprof history database: PATH". */
int64_t pp_history_record(const char *db_path, const pp_analysis *a,
                          const char *label, char *err, size_t errlen);

/* One recorded run. Strings are owned by the array (see
 * pp_history_runs_free). */
typedef struct pp_history_run {
  int64_t id;
  int64_t time_s;  /* Unix time, s: the run's start, else when recorded */
  int64_t wall_ns; /* -1 when unknown */
  char *label;     /* "" when none */
  char *process;   /* "" when unknown */
  char *command;   /* "" when unknown */
} pp_history_run;

/* All runs, oldest first, into *runs (free with pp_history_runs_free) and
 * *n. A database file that does not exist is an error. Returns 0 or -1
 * with a reason in err. */
int pp_history_list(const char *db_path, pp_history_run **runs, size_t *n,
                    char *err, size_t errlen);
void pp_history_runs_free(pp_history_run *runs, size_t n);

/* One value of a metric's trend. */
typedef struct pp_history_point {
  int64_t run_id;
  int64_t time_s;
  char *label;
  double value;
  int change;        /* 1: a change point starts at this run (filled by
                        pp_history_changepoints) */
  double change_rel; /* relative change of the median there */
} pp_history_point;

/* Does the database hold metric name (any stat)? Returns 1, 0, or -1 with a
 * reason in err. */
int pp_history_has_metric(const char *db_path, const char *name, char *err,
                          size_t errlen);

/* The values of (name, stat) over the runs that have it, oldest first.
 * Returns 0 (also with *n == 0) or -1 with a reason in err. */
int pp_history_series(const char *db_path, const char *name, const char *stat,
                      pp_history_point **pts, size_t *n, char *err,
                      size_t errlen);
void pp_history_points_free(pp_history_point *pts, size_t n);

/* Flag the change points of a series (pts[i].change, change_rel) by the
 * Chromium rule: recursively split where the two sides fit their medians
 * best (least total absolute deviation), and keep a split when both sides
 * have >= PP_HISTORY_MIN_SEGMENT points, the medians differ by >=
 * PP_HISTORY_MIN_REL relative to the earlier one, and by >=
 * PP_HISTORY_MIN_SIGMAS times the standard deviation of the shorter side
 * (the smaller std when both are as long). Returns the number of change
 * points, or -1 when out of memory. */
int pp_history_changepoints(pp_history_point *pts, size_t n);

#endif /* PP_HISTORY_H */
