/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the run-history database reader of `pipeprof
 * history` (src/cli/history_db.c): the input is written to a scratch file
 * and read as a history database, as `pipeprof history list` and `show`
 * read one: the runs (pp_history_list), whether a metric exists
 * (pp_history_has_metric) and its series (pp_history_series), the metric
 * one of five picked by the input's last byte, the series then searched
 * for change points
 * (pp_history_changepoints). Whatever the file holds (not SQLite, a foreign
 * or newer schema, NULLs, text or huge values where numbers belong, rows
 * without their run), the reader must fail with a message or return what
 * is there, and never crash. The input's bytes read as doubles (at most
 * 512, NaN and infinities included) are also a series for the change-point
 * search. Seeds: fuzz/corpus/history/; replayed by ctest
 * fuzz_replay_history. Without SQLite at build time every call fails with
 * a message, which is checked too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/history.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_POINTS 512

static char db_path[4096];

static void remove_db(void) {
  static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
  char p[4200];
  for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
    snprintf(p, sizeof p, "%s%s", db_path, suffix[i]);
    unlink(p);
  }
}

static void check_err(int rc, const char *err) {
  /* A failure always comes with a one-line reason. */
  if (rc < 0 && (!err[0] || strchr(err, '\n')))
    abort();
}

static void series(const char *name, const char *stat) {
  char err[512] = "";
  pp_history_point *pts = NULL;
  size_t n = 0;
  int rc = pp_history_series(db_path, name, stat, &pts, &n, err, sizeof err);
  check_err(rc, err);
  if (rc == 0 && n > 0) {
    size_t m = n < MAX_POINTS ? n : MAX_POINTS;
    int cp = pp_history_changepoints(pts, m);
    if (cp > (int)m)
      abort();
  }
  pp_history_points_free(pts, n);
}

static void changepoints_of_bytes(const uint8_t *data, size_t size) {
  size_t n = size / sizeof(double);
  if (n > MAX_POINTS)
    n = MAX_POINTS;
  if (n == 0)
    return;
  pp_history_point *pts = calloc(n, sizeof *pts);
  if (!pts)
    return;
  for (size_t i = 0; i < n; i++) {
    memcpy(&pts[i].value, data + i * sizeof(double), sizeof(double));
    pts[i].run_id = (int64_t)i + 1;
  }
  int cp = pp_history_changepoints(pts, n);
  if (cp > (int)n)
    abort();
  free(pts); /* no labels were set */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!db_path[0]) { /* in memory when it can: a file per input */
    const char *tmp = getenv("TMPDIR");
    snprintf(db_path, sizeof db_path, "%s/pp-fuzz-history-%ld.db",
             tmp && *tmp                  ? tmp
             : access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                                             : "/tmp",
             (long)getpid());
  }
  remove_db();
  FILE *f = fopen(db_path, "wb");
  if (!f)
    return 0;
  int bad = size && fwrite(data, 1, size, f) != size;
  if (fclose(f) != 0 || bad) {
    remove_db();
    return 0;
  }

  char err[512] = "";
  pp_history_run *runs = NULL;
  size_t n = 0;
  int rc = pp_history_list(db_path, &runs, &n, err, sizeof err);
  check_err(rc, err);
  for (size_t i = 0; i < n; i++)
    if (!runs[i].label || !runs[i].process || !runs[i].command)
      abort();
  pp_history_runs_free(runs, n);

  /* one metric per input, picked by its last byte (each read opens the
   * database: five per input held the target to 40 inputs/s) */
  static const char *const metrics[][2] = {
      {"wall", "ns"},          {"zone:stage", "p50"},
      {"zone:stage", "count"}, {"counter:depth", "mean"},
      {"counter:depth", "last"}};
  size_t i = size ? data[size - 1] % (sizeof metrics / sizeof metrics[0]) : 0;
  err[0] = 0;
  rc = pp_history_has_metric(db_path, metrics[i][0], err, sizeof err);
  check_err(rc, err);
  series(metrics[i][0], metrics[i][1]);
  remove_db();

  changepoints_of_bytes(data, size);
  return 0;
}
