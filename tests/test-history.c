/* SPDX-License-Identifier: MIT */
/*
 * Tests of the run history (src/cli/history_db.c, src/cli/history.c):
 * recording traces built by hand into a temporary database and reading the
 * runs and series back, the default path, change points (a step after 10
 * runs is flagged at run 11, a flat or short series is not), two processes
 * recording at once, corrupt and foreign files, and the `pipeprof history`
 * command end to end.
 *
 * The history code and SQLite are linked into the test binary only when
 * the build has SQLite; their symbols are weak here so that the binary
 * links either way, and the tests skip when they are absent. The command
 * tests skip while `pipeprof history` is not a command of the build.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "cli/history.h"
#include "format/pptrace.h"
#include "pipeprof.h"
#include "runner.h"
#include "trace_builder.h"

#pragma weak pp_history_record
#pragma weak pp_history_list
#pragma weak pp_history_runs_free
#pragma weak pp_history_series
#pragma weak pp_history_points_free
#pragma weak pp_history_changepoints
#pragma weak pp_history_default_path

/* The few SQLite calls used to make foreign databases (weak as above). */
#ifdef PP_HAVE_SQLITE
#include <sqlite3.h>
#else
typedef struct sqlite3 sqlite3;
int sqlite3_open(const char *filename, sqlite3 **db);
int sqlite3_exec(sqlite3 *db, const char *sql,
                 int (*cb)(void *, int, char **, char **), void *arg,
                 char **errmsg);
int sqlite3_close(sqlite3 *db);
#endif
#pragma weak sqlite3_open
#pragma weak sqlite3_exec
#pragma weak sqlite3_close

#define MS 1000000LL

/* 1 when the history code is linked and built with SQLite; else prints the
 * skip line. */
static int have_history(void) {
  if (!pp_history_record || !pp_history_changepoints) {
    printf("# skipped: history code not linked into the tests\n");
    return 0;
  }
  if (!sqlite3_open) {
    printf("# skipped: built without SQLite\n");
    return 0;
  }
  return 1;
}

static char *tpath(const char *name) {
  static char buf[8][512];
  static int k;
  char *p = buf[k++ % 8];
  snprintf(p, sizeof buf[0], "%s/%s", pp_test_tmpdir(), name);
  return p;
}

/* ---- trace builder (as in test-analyze.c) -------------------------------- */



/* A run: 21 instances of "work" lasting work_ns * (1 + jitter_i) with
 * jitter in [-spread, spread], then a "queue" counter set to 1..5. */
static void make_run(pp_trace *t, pp_analysis *a, int64_t work_ns,
                     double spread, unsigned seed) {
  memset(t, 0, sizeof *t);
  t->pid = 42;
  tb_meta(t, "process_name", "infer");
  tb_meta(t, "run.command", "infer --model m.onnx");
  tb_meta(t, "start_realtime_ns", "1700000000000000000");
  uint32_t work = tb_loc(t, "work", PP_KIND_ZONE);
  uint32_t queue = tb_loc(t, "queue", PP_KIND_COUNTER);
  size_t th = tb_thread(t, 1, "main");
  int64_t ts = 1000;
  for (int i = 0; i < 21; i++) {
    seed = seed * 1103515245u + 12345u;
    double j = ((double)((seed >> 8) % 2001) / 1000.0 - 1.0) * spread;
    tb_ev(t, th, ts, work, PPT_EV_ZONE_BEGIN);
    ts += (int64_t)((double)work_ns * (1 + j));
    tb_ev(t, th, ts, work, PPT_EV_ZONE_END);
    ts += 1000;
  }
  for (int i = 1; i <= 5; i++)
    tb_ev(t, th, ts + i, queue, PPT_EV_COUNTER_SET)->v.i = i;
  CHECK_EQ(pp_analyze(t, a), 0);
}

static int64_t record(const char *db, int64_t work_ns, double spread,
                      unsigned seed, const char *label) {
  pp_trace t;
  pp_analysis a = {0};
  make_run(&t, &a, work_ns, spread, seed);
  char err[1024];
  int64_t id = pp_history_record(db, &a, label, err, sizeof err);
  if (id <= 0)
    PP_FAIL("pp_history_record: %s", err);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  return id;
}

/* ---- the database -------------------------------------------------------- */

PP_TEST(history_record_list) {
  if (!have_history())
    return;
  char *db = tpath("a/b/history.db"); /* directories are created */
  CHECK_EQ(record(db, 1 * MS, 0, 1, "first"), 1);
  CHECK_EQ(record(db, 2 * MS, 0, 2, NULL), 2);
  CHECK_EQ(record(db, 3 * MS, 0, 3, "third"), 3);

  pp_history_run *runs;
  size_t n;
  char err[1024];
  CHECK_EQ(pp_history_list(db, &runs, &n, err, sizeof err), 0);
  CHECK_EQ(n, 3);
  CHECK_EQ(runs[0].id, 1);
  CHECK_STR(runs[0].label, "first");
  CHECK_STR(runs[1].label, "");
  CHECK_STR(runs[2].label, "third");
  CHECK_STR(runs[0].process, "infer");
  CHECK_STR(runs[0].command, "infer --model m.onnx");
  CHECK_EQ(runs[0].time_s, 1700000000);
  /* 21 zones of 1 ms each followed by 1 us, then the counter 5 ns later */
  CHECK_EQ(runs[0].wall_ns, 21 * MS + 21 * 1000 + 5);
  pp_history_runs_free(runs, n);

  pp_history_point *p;
  CHECK_EQ(pp_history_series(db, "zone:work", "p50", &p, &n, err, sizeof err),
           0);
  CHECK_EQ(n, 3);
  for (size_t i = 0; i < n; i++) {
    CHECK_EQ(p[i].run_id, (int64_t)i + 1);
    CHECK_NEAR(p[i].value, (double)(i + 1) * MS, (double)(i + 1) * MS / 1e3);
  }
  CHECK_STR(p[0].label, "first");
  pp_history_points_free(p, n);
  static const char *const zstats[] = {"count", "mean", "p90", "p99"};
  for (size_t k = 0; k < 4; k++) {
    CHECK_EQ(
        pp_history_series(db, "zone:work", zstats[k], &p, &n, err, sizeof err),
        0);
    CHECK_EQ(n, 3);
    CHECK_NEAR(p[0].value, k == 0 ? 21 : MS, k == 0 ? 0 : MS / 1e3);
    pp_history_points_free(p, n);
  }
  CHECK_EQ(
      pp_history_series(db, "counter:queue", "mean", &p, &n, err, sizeof err),
      0);
  CHECK_EQ(n, 3);
  CHECK_NEAR(p[0].value, 3, 1e-9);
  pp_history_points_free(p, n);
  CHECK_EQ(
      pp_history_series(db, "counter:queue", "last", &p, &n, err, sizeof err),
      0);
  CHECK_NEAR(p[2].value, 5, 1e-9);
  pp_history_points_free(p, n);
  CHECK_EQ(pp_history_series(db, "wall", "ns", &p, &n, err, sizeof err), 0);
  CHECK_EQ(n, 3);
  pp_history_points_free(p, n);
  /* an unknown metric is an empty series, not an error */
  CHECK_EQ(pp_history_series(db, "zone:nope", "p50", &p, &n, err, sizeof err),
           0);
  CHECK_EQ(n, 0);
  pp_history_points_free(p, n);
  /* a missing database is an error for readers */
  CHECK_EQ(pp_history_list(tpath("none.db"), &runs, &n, err, sizeof err), -1);
  CHECK_CONTAINS(err, "none.db");
  CHECK(access(tpath("none.db"), F_OK) != 0);
}

PP_TEST(history_default_path) {
  if (!have_history())
    return;
  char xdg[600], want[700];
  snprintf(xdg, sizeof xdg, "%s/xdg", pp_test_tmpdir());
  setenv("XDG_DATA_HOME", xdg, 1);
  snprintf(want, sizeof want, "%s/pipeprof/history.db", xdg);
  char got[700], err[1024];
  CHECK_EQ(pp_history_default_path(got, sizeof got, err, sizeof err), 0);
  CHECK_STR(got, want);
  CHECK_EQ(record(NULL, MS, 0, 1, "x"), 1);
  CHECK(access(want, F_OK) == 0);

  unsetenv("XDG_DATA_HOME");
  char home[600];
  snprintf(home, sizeof home, "%s/home", pp_test_tmpdir());
  setenv("HOME", home, 1);
  snprintf(want, sizeof want, "%s/.local/share/pipeprof/history.db", home);
  CHECK_EQ(pp_history_default_path(got, sizeof got, err, sizeof err), 0);
  CHECK_STR(got, want);
  CHECK_EQ(record(NULL, MS, 0, 1, "y"), 1);
  CHECK(access(want, F_OK) == 0);
}

/* ---- change points ------------------------------------------------------- */

static pp_history_point *series_of(const double *v, size_t n) {
  pp_history_point *p = calloc(n, sizeof *p);
  CHECK(p != NULL);
  for (size_t i = 0; i < n; i++) {
    p[i].run_id = (int64_t)i + 1;
    p[i].value = v[i];
  }
  return p;
}

PP_TEST(history_changepoint_rule) {
  if (!have_history())
    return;
  /* 10 runs around 100, then 10 around 110: one change at index 10 */
  double v[24];
  for (int i = 0; i < 20; i++)
    v[i] = (i < 10 ? 100 : 110) + (i % 3 - 1) * 0.5;
  pp_history_point *p = series_of(v, 20);
  CHECK_EQ(pp_history_changepoints(p, 20), 1);
  for (int i = 0; i < 20; i++)
    CHECK_EQ(p[i].change, i == 10);
  CHECK_NEAR(p[10].change_rel, 0.10, 0.01);
  free(p);
  /* flat with noise: none */
  for (int i = 0; i < 20; i++)
    v[i] = 100 + (i * 7 % 5 - 2) * 0.8;
  p = series_of(v, 20);
  CHECK_EQ(pp_history_changepoints(p, 20), 0);
  free(p);
  /* a change below 1% is not one, however clean */
  for (int i = 0; i < 20; i++)
    v[i] = i < 10 ? 1000 : 1005;
  p = series_of(v, 20);
  CHECK_EQ(pp_history_changepoints(p, 20), 0);
  free(p);
  /* a 5% shift buried in +-10% noise is not one (< 2.5 std) */
  for (int i = 0; i < 20; i++)
    v[i] = (i < 10 ? 100 : 105) + (i % 2 ? 10 : -10);
  p = series_of(v, 20);
  CHECK_EQ(pp_history_changepoints(p, 20), 0);
  free(p);
  /* the step needs 6 runs on each side: after 5 runs it is not flagged */
  for (int i = 0; i < 11; i++)
    v[i] = i < 5 ? 100 : 200;
  p = series_of(v, 11);
  CHECK_EQ(pp_history_changepoints(p, 11), 0);
  free(p);
  /* two steps, each segment >= 6: both */
  for (int i = 0; i < 24; i++)
    v[i] = i < 8 ? 100 : i < 16 ? 150 : 120;
  p = series_of(v, 24);
  CHECK_EQ(pp_history_changepoints(p, 24), 2);
  CHECK(p[8].change && p[16].change);
  CHECK_NEAR(p[8].change_rel, 0.5, 1e-9);
  CHECK_NEAR(p[16].change_rel, -0.2, 1e-9);
  free(p);
}

PP_TEST(history_changepoint_recorded) {
  if (!have_history())
    return;
  char *db = tpath("step.db");
  for (unsigned i = 0; i < 20; i++)
    record(db, i < 10 ? 2 * MS : 3 * MS, 0.02, i + 1, i < 10 ? "old" : "new");
  char *flat = tpath("flat.db");
  for (unsigned i = 0; i < 20; i++)
    record(flat, 2 * MS, 0.02, i + 100, "same");
  static const char *const stats[] = {"p50", "p99", "mean"};
  for (size_t k = 0; k < 3; k++) {
    pp_history_point *p;
    size_t n;
    char err[1024];
    CHECK_EQ(
        pp_history_series(db, "zone:work", stats[k], &p, &n, err, sizeof err),
        0);
    CHECK_EQ(n, 20);
    CHECK_EQ(pp_history_changepoints(p, n), 1);
    for (size_t i = 0; i < n; i++)
      CHECK_EQ(p[i].change, p[i].run_id == 11);
    CHECK(p[10].change_rel > 0.3);
    pp_history_points_free(p, n);
    CHECK_EQ(
        pp_history_series(flat, "zone:work", stats[k], &p, &n, err, sizeof err),
        0);
    CHECK_EQ(n, 20);
    CHECK_EQ(pp_history_changepoints(p, n), 0);
    pp_history_points_free(p, n);
  }
}

/* ---- concurrency, corrupt and foreign files -------------------------------
 */

PP_TEST_T(history_concurrent_writers, 120) {
  if (!have_history())
    return;
  char *db = tpath("conc.db");
  pid_t kids[2];
  for (int k = 0; k < 2; k++) {
    fflush(NULL);
    kids[k] = fork();
    CHECK(kids[k] >= 0);
    if (kids[k] == 0) {
      for (unsigned i = 0; i < 20; i++) {
        pp_trace t;
        pp_analysis a = {0};
        make_run(&t, &a, MS, 0.01, i + 1 + 100u * (unsigned)k);
        char err[1024];
        if (pp_history_record(db, &a, k ? "b" : "a", err, sizeof err) <= 0) {
          fprintf(stderr, "# writer %d run %u: %s\n", k, i, err);
          _exit(1);
        }
        pp_analysis_free(&a);
        pp_trace_free(&t);
      }
      _exit(0);
    }
  }
  for (int k = 0; k < 2; k++) {
    int st;
    CHECK_EQ(waitpid(kids[k], &st, 0), kids[k]);
    CHECK(WIFEXITED(st));
    CHECK_EQ(WEXITSTATUS(st), 0);
  }
  pp_history_run *runs;
  size_t n;
  char err[1024];
  CHECK_EQ(pp_history_list(db, &runs, &n, err, sizeof err), 0);
  CHECK_EQ(n, 40);
  int a = 0, b = 0;
  for (size_t i = 0; i < n; i++) {
    a += strcmp(runs[i].label, "a") == 0;
    b += strcmp(runs[i].label, "b") == 0;
  }
  CHECK_EQ(a, 20);
  CHECK_EQ(b, 20);
  pp_history_runs_free(runs, n);
  pp_history_point *p;
  CHECK_EQ(pp_history_series(db, "zone:work", "count", &p, &n, err, sizeof err),
           0);
  CHECK_EQ(n, 40);
  pp_history_points_free(p, n);
}

static void write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  CHECK_EQ(fwrite(data, 1, len, f), len);
  CHECK_EQ(fclose(f), 0);
}

/* Every entry point refuses path with "not a pipeprof history database". */
static void check_refused(const char *path) {
  char err[1024], want[700];
  snprintf(want, sizeof want, "not a pipeprof history database: %s", path);
  pp_trace t;
  pp_analysis a = {0};
  make_run(&t, &a, MS, 0, 1);
  err[0] = 'x';
  CHECK_EQ(pp_history_record(path, &a, "l", err, sizeof err), -1);
  CHECK_CONTAINS(err, want);
  CHECK(strchr(err, '\n') == NULL);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  pp_history_run *runs;
  size_t n;
  CHECK_EQ(pp_history_list(path, &runs, &n, err, sizeof err), -1);
  CHECK_CONTAINS(err, want);
  CHECK(runs == NULL && n == 0);
  pp_history_point *p;
  CHECK_EQ(pp_history_series(path, "wall", "ns", &p, &n, err, sizeof err), -1);
  CHECK_CONTAINS(err, want);
}

PP_TEST(history_corrupt_file) {
  if (!have_history())
    return;
  unsigned char junk[8192];
  unsigned s = 7;
  for (size_t i = 0; i < sizeof junk; i++) {
    s = s * 1103515245u + 12345u;
    junk[i] = (unsigned char)(s >> 16);
  }
  char *path = tpath("junk.db");
  write_file(path, junk, sizeof junk);
  check_refused(path);
  /* the file is left as it was */
  size_t len;
  char *back = pp_test_slurp(path, &len);
  CHECK(back != NULL);
  CHECK_EQ(len, sizeof junk);
  CHECK(memcmp(back, junk, len) == 0);
  free(back);
  /* a real history whose pages were overwritten after the header */
  char *hist = tpath("damaged.db");
  for (unsigned i = 0; i < 3; i++)
    record(hist, MS, 0, i, "x");
  int fd = open(hist, O_WRONLY);
  CHECK(fd >= 0);
  CHECK_EQ(pwrite(fd, junk, 4096, 100), 4096);
  CHECK_EQ(close(fd), 0);
  char *wal = tpath("damaged.db-wal");
  unlink(wal);
  char err[1024];
  pp_history_run *runs;
  size_t n;
  int rc = pp_history_list(hist, &runs, &n, err, sizeof err);
  if (rc == 0)
    pp_history_runs_free(runs, n); /* survived; a crash is what matters */
  else
    CHECK_CONTAINS(err, "damaged.db");
  /* a short text file */
  char *txt = tpath("notes.db");
  write_file(txt, "hello\n", 6);
  check_refused(txt);
}

PP_TEST(history_foreign_db) {
  if (!have_history())
    return;
  /* an SQLite database of another program */
  char *other = tpath("other.db");
  sqlite3 *db;
  CHECK_EQ(sqlite3_open(other, &db), 0);
  CHECK_EQ(sqlite3_exec(db,
                        "CREATE TABLE runs (x); CREATE TABLE metrics (y);"
                        "CREATE TABLE cookies (z);",
                        NULL, NULL, NULL),
           0);
  sqlite3_close(db);
  check_refused(other);
  /* a history written by a newer pipeprof */
  char *newer = tpath("newer.db");
  record(newer, MS, 0, 1, "x");
  CHECK_EQ(sqlite3_open(newer, &db), 0);
  CHECK_EQ(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), 0);
  sqlite3_close(db);
  check_refused(newer);
  /* an empty file is a new, empty history */
  char *empty = tpath("empty.db");
  write_file(empty, "", 0);
  pp_history_run *runs;
  size_t n;
  char err[1024];
  CHECK_EQ(pp_history_list(empty, &runs, &n, err, sizeof err), 0);
  CHECK_EQ(n, 0);
  pp_history_runs_free(runs, n);
  CHECK_EQ(record(empty, MS, 0, 1, "x"), 1);
}

/* ---- the command --------------------------------------------------------- */

/* 1 when this build has the history command, else prints the skip line. */
static int have_command(void) {
  pp_cli_result r = pp_test_cli("history --help");
  int unwired = r.rc == 2 && strstr(r.err, "unknown command");
  int ok = r.rc == 0 && strstr(r.out, "usage: pipeprof history");
  pp_cli_result_free(&r);
  if (unwired) {
    printf("# skipped: history command not wired\n");
    return 0;
  }
  CHECK(ok);
  return 1;
}

static void spin_ns(int64_t ns) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do
    clock_gettime(CLOCK_MONOTONIC, &t);
  while ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) < ns);
}

static void make_trace_file(const char *path) {
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  for (int i = 0; i < 50; i++) {
    PP_ZONE("stage");
    spin_ns(20000);
  }
  CHECK_EQ(pp_shutdown(), PP_OK);
}

/* The line of out whose first field is id, or NULL. */
static const char *line_of_run(const char *out, long id) {
  for (const char *l = out; l && *l;
       l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    char *end;
    long v = strtol(l, &end, 10);
    if (end != l && v == id)
      return l;
  }
  return NULL;
}

static int line_has(const char *line, const char *needle) {
  const char *end = strchr(line, '\n');
  size_t n = end ? (size_t)(end - line) : strlen(line);
  const char *hit = strstr(line, needle);
  return hit && hit + strlen(needle) <= line + n;
}

PP_TEST_T(history_cli, 120) {
  if (!have_command())
    return;
  char *trace = tpath("t.pptrace"), *db = tpath("cli/h.db");
  make_trace_file(trace);
  pp_cli_result r =
      pp_test_cli("history --db '%s' add '%s' --label base", db, trace);
  if (r.rc == 1 && strstr(r.err, "needs SQLite")) {
    printf("# skipped: pipeprof built without SQLite\n");
    pp_cli_result_free(&r);
    return;
  }
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "recorded run 1");
  pp_cli_result_free(&r);
  r = pp_test_cli("history add '%s' --db '%s'", trace, db);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "recorded run 2");
  pp_cli_result_free(&r);

  r = pp_test_cli("history --db '%s' list", db);
  CHECK_EQ(r.rc, 0);
  CHECK_STR(r.err, "");
  CHECK_EQ(pp_test_count_lines(r.out), 3);
  CHECK(line_of_run(r.out, 1) && line_has(line_of_run(r.out, 1), "base"));
  CHECK(line_of_run(r.out, 2) != NULL);
  pp_cli_result_free(&r);

  r = pp_test_cli("history --db '%s' show stage --stat p99", db);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "zone:stage p99");
  CHECK_EQ(pp_test_count_lines(r.out), 4);
  pp_cli_result_free(&r);
  r = pp_test_cli("history --db '%s' show --zone stage", db);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "zone:stage p50");
  pp_cli_result_free(&r);
  r = pp_test_cli("history --db '%s' show wall", db);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "# wall (durations)");
  /* values carry units, as `list` prints the wall time */
  CHECK(line_of_run(r.out, 1) != NULL);
  CHECK(line_has(line_of_run(r.out, 1), " s") ||
        line_has(line_of_run(r.out, 1), " ms") ||
        line_has(line_of_run(r.out, 1), " us") ||
        line_has(line_of_run(r.out, 1), " ns"));
  pp_cli_result_free(&r);

  /* usage errors: exit 2, one line */
  static const char *const bad[] = {"history",
                                    "history frobnicate",
                                    "history list extra",
                                    "history --db",
                                    "history show",
                                    "history add",
                                    "history --bogus list",
                                    "history list --label x",
                                    "history show stage --stat p42"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    r = pp_test_cli("%s", bad[i]);
    CHECK_ONE_LINE_ERROR_FROM(r, 2, "pipeprof history");
    pp_cli_result_free(&r);
  }
  /* failures: exit 1, one line */
  r = pp_test_cli("history --db '%s' show nosuchzone", db);
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "nosuchzone");
  pp_cli_result_free(&r);
  r = pp_test_cli("history --db '%s' list", tpath("missing.db"));
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "missing.db");
  pp_cli_result_free(&r);
  r = pp_test_cli("history --db '%s' add '%s'", db, tpath("none.pptrace"));
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "none.pptrace");
  pp_cli_result_free(&r);
  char *junk = tpath("junk.db");
  write_file(junk, "not a database at all, not even close....", 41);
  r = pp_test_cli("history --db '%s' add '%s'", junk, trace);
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "not a pipeprof history database");
  pp_cli_result_free(&r);
  r = pp_test_cli("history --db '%s' list", junk);
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "not a pipeprof history database");
  pp_cli_result_free(&r);
}

/* A step recorded through the library shows as a flag on the right line. */
PP_TEST(history_cli_trend) {
  if (!have_history() || !have_command())
    return;
  char *db = tpath("trend.db");
  for (unsigned i = 0; i < 20; i++)
    record(db, i < 10 ? 2 * MS : 3 * MS, 0.02, i + 1, i < 10 ? "old" : "new");
  pp_cli_result r = pp_test_cli("history --db '%s' show work --stat p50", db);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "1 change point");
  CHECK_CONTAINS(r.out, "zone:work p50 (durations)");
  for (long id = 1; id <= 20; id++) {
    const char *l = line_of_run(r.out, id);
    CHECK(l != NULL);
    CHECK_EQ(line_has(l, "change +"), id == 11);
    /* 2 ms then 3 ms (+-2%): printed in ms, never as raw nanoseconds */
    CHECK(line_has(l, id <= 10 ? "  1.9" : "  2.9") ||
          line_has(l, id <= 10 ? "  2.0" : "  3.0"));
    CHECK(line_has(l, " ms"));
    CHECK(!line_has(l, "000000"));
  }
  /* a count stays a plain number */
  pp_cli_result_free(&r);
  r = pp_test_cli("history --db '%s' show work --stat count", db);
  CHECK_EQ(r.rc, 0);
  CHECK(!strstr(r.out, "(durations)"));
  CHECK(!line_has(line_of_run(r.out, 1), " ms"));
  pp_cli_result_free(&r);
  r = pp_test_cli("history --db '%s' show queue --stat last", db);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "counter:queue last");
  CHECK_CONTAINS(r.out, "0 change points");
  pp_cli_result_free(&r);
  r = pp_test_cli("history --db '%s' show queue --stat p99", db);
  CHECK_ONE_LINE_ERROR_FROM(r, 2, "counter");
  pp_cli_result_free(&r);
}

/* ---- the change-point search against its definition (issue 26) ---------- */

static int ref_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The cost of one side as defined: absolute deviations from its median,
 * by sorting. */
static double ref_side(const double *v, size_t n) {
  double *s = malloc(n * sizeof *s);
  CHECK(s != NULL);
  memcpy(s, v, n * sizeof *s);
  qsort(s, n, sizeof *s, ref_cmp);
  double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2, c = 0;
  for (size_t i = 0; i < n; i++)
    c += fabs(v[i] - m);
  free(s);
  return c;
}

/* Every series' first split as the definition finds it (every candidate
 * by sorting both sides) is the search's first change, when the search
 * finds one: 200 random series of steps in noise. */
PP_TEST(history_changepoint_search_matches_its_definition) {
  if (!have_history())
    return;
  uint64_t seed = 42;
  int compared = 0;
  for (int r = 0; r < 200; r++) {
    size_t n = 12 + (size_t)(r % 40);
    double v[64];
    size_t step = 6 + (size_t)(r % (int)(n - 11));
    for (size_t i = 0; i < n; i++) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      double noise = (double)(seed >> 40) / (double)(1 << 24) - 0.5;
      v[i] = (i < step ? 100 : 100 + (double)(r % 7) * 5) + noise * 4;
    }
    size_t best = 0;
    double best_cost = INFINITY;
    for (size_t k = PP_HISTORY_MIN_SEGMENT; k + PP_HISTORY_MIN_SEGMENT <= n;
         k++) {
      double c = ref_side(v, k) + ref_side(v + k, n - k);
      if (!best || c < best_cost - 1e-9 * fabs(best_cost)) {
        best_cost = c;
        best = k;
      }
    }
    pp_history_point *p = series_of(v, n);
    int found = pp_history_changepoints(p, n);
    if (found > 0) {
      /* the first split is the one of least cost: flagged */
      if (!p[best].change) {
        for (size_t k = 0; k < n; k++)
          if (p[k].change)
            printf("# flagged %zu cost %.9f\n", k,
                   ref_side(v, k) + ref_side(v + k, n - k));
        PP_FAIL("series %d (n %zu): least cost at %zu (%.9f) not flagged", r,
                n, best, best_cost);
      }
      compared++;
    }
    free(p);
  }
  printf("# %d series with a change compared\n", compared);
  CHECK_GT(compared, 50);
}

/* 20,000 runs of a metric search in about ten times the time of 2,000 (n
 * log n a level; sorting both sides of every candidate made it n^2 log n:
 * 100 times). Ratios in one run. */
PP_TEST_T(history_changepoint_search_scales, 120) {
  if (!have_history())
    return;
  double secs[2];
  size_t sizes[2] = {2000, 20000};
  for (int t = 0; t < 2; t++) {
    size_t n = sizes[t];
    double *v = malloc(n * sizeof *v);
    CHECK(v != NULL);
    for (size_t i = 0; i < n; i++)
      v[i] = 100 + (double)(i * 7919 % 13) * 0.1;
    pp_history_point *p = series_of(v, n);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    CHECK_EQ(pp_history_changepoints(p, n), 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    secs[t] =
        (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    free(p);
    free(v);
  }
  printf("# change points of 2,000 runs %.4f s, of 20,000 %.4f s\n", secs[0],
         secs[1]);
  CHECK(secs[1] < 30 * secs[0] + 0.05);
}
