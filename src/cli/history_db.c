/* SPDX-License-Identifier: MIT */
/*
 * The run-history database of `pipeprof history` (see history.h and
 * docs/history.md): opening and validating the SQLite file, creating the
 * schema, recording one run's summary in one transaction, reading the runs
 * and a metric's series back, and the change-point search over a series.
 * Built only when SQLite is available (PP_HAVE_SQLITE); otherwise every
 * call fails with a message saying so.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef PP_HAVE_SQLITE
#include <sqlite3.h>
#endif

#include "analyze/analysis.h"
#include "history.h"
#include "internal.h"

int pp_history_default_path(char *buf, size_t len, char *err, size_t errlen) {
  const char *xdg = getenv("XDG_DATA_HOME");
  const char *home = getenv("HOME");
  int n;
  if (xdg && xdg[0] == '/')
    n = snprintf(buf, len, "%s/pipeprof/history.db", xdg);
  else if (home && *home)
    n = snprintf(buf, len, "%s/.local/share/pipeprof/history.db", home);
  else {
    pp__err_set(err, errlen,
            "no history database: set XDG_DATA_HOME or HOME, "
            "or pass --db PATH");
    return -1;
  }
  if (n < 0 || (size_t)n >= len) {
    pp__err_set(err, errlen, "history database path too long");
    return -1;
  }
  return 0;
}

/* ---- change points (no SQLite needed) ------------------------------------ */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median of v[0..n) using scratch s (n elements). */
static double median(const double *v, size_t n, double *s) {
  memcpy(s, v, n * sizeof *s);
  qsort(s, n, sizeof *s, cmp_double);
  return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static double stddev(const double *v, size_t n) {
  if (n < 2)
    return 0;
  double mean = 0, m2 = 0;
  for (size_t i = 0; i < n; i++) {
    double d = v[i] - mean;
    mean += d / (double)(i + 1);
    m2 += d * (v[i] - mean);
  }
  return sqrt(m2 / (double)(n - 1));
}

/* A running median and the sum of absolute deviations from it, as values
 * come: a max-heap of the lower half (its top the median, the lower one
 * of an even count: the sum is the same from either middle value) and a
 * min-heap of the upper half, with their sums. O(log n) a value. */
typedef struct halves {
  double *lo, *hi; /* heaps, n elements of room each */
  size_t nlo, nhi;
  double slo, shi;
} halves;

static int before(double a, double b, int max) { return max ? a > b : a < b; }

static void heap_push(double *h, size_t *n, double x, int max) {
  size_t i = (*n)++;
  while (i && before(x, h[(i - 1) / 2], max)) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = x;
}

static double heap_pop(double *h, size_t *n, int max) {
  double top = h[0], x = h[--*n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= *n)
      break;
    if (c + 1 < *n && before(h[c + 1], h[c], max))
      c++;
    if (!before(h[c], x, max))
      break;
    h[i] = h[c];
    i = c;
  }
  if (*n)
    h[i] = x;
  return top;
}

static void halves_add(halves *q, double x) {
  if (!q->nlo || x <= q->lo[0]) {
    heap_push(q->lo, &q->nlo, x, 1);
    q->slo += x;
  } else {
    heap_push(q->hi, &q->nhi, x, 0);
    q->shi += x;
  }
  if (q->nlo > q->nhi + 1) {
    double y = heap_pop(q->lo, &q->nlo, 1);
    q->slo -= y;
    heap_push(q->hi, &q->nhi, y, 0);
    q->shi += y;
  } else if (q->nhi > q->nlo) {
    double y = heap_pop(q->hi, &q->nhi, 0);
    q->shi -= y;
    heap_push(q->lo, &q->nlo, y, 1);
    q->slo += y;
  }
}

static double halves_cost(const halves *q) {
  double m = q->lo[0];
  return (m * (double)q->nlo - q->slo) + (q->shi - m * (double)q->nhi);
}

/* Search v[lo..hi) for its best split and recurse on both sides: each
 * candidate's cost (the absolute deviations of both sides from their
 * medians) from running medians, the left sides' in one pass, the right
 * sides' in one pass back: O(n log n) a search where sorting both sides
 * of every candidate was O(n^2 log n). w: 3n doubles of room. */
static int split(pp_history_point *pts, const double *v, size_t lo, size_t hi,
                 double *s, double *w) {
  const size_t m = PP_HISTORY_MIN_SEGMENT;
  if (hi - lo < 2 * m)
    return 0;
  size_t n = hi - lo;
  double *left = w + 2 * n; /* left[k - lo]: the cost of v[lo..k) */
  halves q = {w, w + n, 0, 0, 0, 0};
  for (size_t k = lo + 1; k + m <= hi; k++) {
    halves_add(&q, v[k - 1]);
    if (k - lo >= m)
      left[k - lo] = halves_cost(&q);
  }
  size_t best = 0;
  double best_cost = INFINITY;
  q = (halves){w, w + n, 0, 0, 0, 0};
  for (size_t k = hi; k-- > lo + m;) {
    halves_add(&q, v[k]);
    if (hi - k < m)
      continue;
    double cost = left[k - lo] + halves_cost(&q);
    if (cost <= best_cost) { /* the first of equal ones, going back */
      best_cost = cost;
      best = k;
    }
  }
  if (best == 0)
    return 0;
  size_t nl = best - lo, nr = hi - best;
  double ml = median(v + lo, nl, s), mr = median(v + best, nr, s);
  double sl = stddev(v + lo, nl), sr = stddev(v + best, nr);
  double noise = nl < nr ? sl : nr < nl ? sr : fmin(sl, sr);
  double diff = fabs(mr - ml);
  double rel = ml != 0 ? diff / fabs(ml) : (diff > 0 ? INFINITY : 0);
  if (!(rel >= PP_HISTORY_MIN_REL && diff >= PP_HISTORY_MIN_SIGMAS * noise))
    return 0;
  pts[best].change = 1;
  return 1 + split(pts, v, lo, best, s, w) + split(pts, v, best, hi, s, w);
}

int pp_history_changepoints(pp_history_point *pts, size_t n) {
  for (size_t i = 0; i < n; i++) {
    pts[i].change = 0;
    pts[i].change_rel = 0;
  }
  if (n < 2 * PP_HISTORY_MIN_SEGMENT)
    return 0;
  double *v = pp__malloc(5 * n * sizeof *v);
  if (!v)
    return -1;
  for (size_t i = 0; i < n; i++)
    v[i] = pts[i].value;
  int found = split(pts, v, 0, n, v + n, v + 2 * n);
  /* Report each change between the medians of its neighbouring segments
   * (the final ones, not those of the split that found it). */
  size_t prev = 0;
  for (size_t i = 1; i <= n; i++) {
    if (i < n && !pts[i].change)
      continue;
    if (prev > 0) {
      size_t start = prev;
      size_t before = start - 1;
      while (before > 0 && !pts[before].change)
        before--;
      double ml = median(v + before, start - before, v + n);
      double mr = median(v + start, i - start, v + n);
      pts[start].change_rel = ml != 0 ? (mr - ml) / fabs(ml) : 0;
    }
    prev = i;
  }
  pp__free(v);
  return found;
}

void pp_history_runs_free(pp_history_run *runs, size_t n) {
  for (size_t i = 0; runs && i < n; i++) {
    pp__free(runs[i].label);
    pp__free(runs[i].process);
    pp__free(runs[i].command);
  }
  pp__free(runs);
}

void pp_history_points_free(pp_history_point *pts, size_t n) {
  for (size_t i = 0; pts && i < n; i++)
    pp__free(pts[i].label);
  pp__free(pts);
}

#ifdef PP_HAVE_SQLITE

/* ---- opening ------------------------------------------------------------- */

static const char schema_sql[] =
    "CREATE TABLE runs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " time INTEGER NOT NULL,"     /* Unix s: run start, else recording */
    " recorded INTEGER NOT NULL," /* Unix s: when recorded */
    " label TEXT NOT NULL DEFAULT '',"
    " process TEXT NOT NULL DEFAULT '',"
    " command TEXT NOT NULL DEFAULT '',"
    " wall_ns INTEGER);"
    "CREATE TABLE metrics ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " name TEXT NOT NULL,"
    " stat TEXT NOT NULL,"
    " value REAL NOT NULL,"
    " PRIMARY KEY (run_id, name, stat)) WITHOUT ROWID;"
    "CREATE INDEX metrics_by_name ON metrics(name, stat, run_id);";

static int not_ours(const char *path, char *err, size_t errlen,
                    const char *why) {
  pp__err_set(err, errlen, "not a pipeprof history database: %s%s%s%s", path,
          why ? " (" : "", why ? why : "", why ? ")" : "");
  return -1;
}

static int db_fail(sqlite3 *db, const char *path, const char *what, char *err,
                   size_t errlen) {
  int code = sqlite3_errcode(db);
  if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT)
    return not_ours(path, err, errlen, NULL);
  pp__err_set(err, errlen, "%s: %s: %s", path, what, sqlite3_errmsg(db));
  return -1;
}

/* Read one integer with a single-row query; -1 on error. */
static int query_int(sqlite3 *db, const char *sql, int64_t *out) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
    return -1;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    *out = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? 0 : -1;
}

/* Does the file start like an SQLite database (or is it empty)? */
static int looks_like_sqlite(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return 1; /* let SQLite report the open error */
  char head[16];
  size_t n = fread(head, 1, sizeof head, f);
  fclose(f);
  return n == 0 || (n == sizeof head &&
                    memcmp(head, "SQLite format 3", sizeof head) == 0);
}

/* mkdir -p of the directory part of path. */
static int make_parents(const char *path, char *err, size_t errlen) {
  char dir[PATH_MAX];
  if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) {
    pp__err_set(err, errlen, "%s: path too long", path);
    return -1;
  }
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir)
    return 0;
  *slash = 0;
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = 0;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
      pp__err_set(err, errlen, "cannot create %s: %s", dir, strerror(errno));
      return -1;
    }
    *p = '/';
  }
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    pp__err_set(err, errlen, "cannot create %s: %s", dir, strerror(errno));
    return -1;
  }
  return 0;
}

/* Validate (and with create, initialise) the schema. Runs inside an
 * IMMEDIATE transaction when creating so that two first writers do not
 * both create it. */
static int check_schema(sqlite3 *db, const char *path, int create, char *err,
                        size_t errlen) {
  if (create &&
      sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
    return db_fail(db, path, "cannot lock", err, errlen);
  int64_t app = 0, ver = 0, tables = 0;
  int rc = -1;
  if (query_int(db, "PRAGMA application_id", &app) != 0 ||
      query_int(db, "PRAGMA user_version", &ver) != 0 ||
      query_int(db, "SELECT count(*) FROM sqlite_master", &tables) != 0) {
    rc = db_fail(db, path, "cannot read", err, errlen);
  } else if (app == 0 && ver == 0 && tables == 0) {
    if (!create) {
      rc = 0; /* empty file: no runs yet */
    } else {
      char sql[160];
      snprintf(sql, sizeof sql,
               "PRAGMA application_id = %d; PRAGMA user_version = %d;",
               PP_HISTORY_APP_ID, PP_HISTORY_SCHEMA);
      if (sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
          sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        rc = db_fail(db, path, "cannot create the schema", err, errlen);
      else
        rc = 0;
    }
  } else if (app != PP_HISTORY_APP_ID) {
    rc = not_ours(path, err, errlen, NULL);
  } else if (ver > PP_HISTORY_SCHEMA) {
    char why[96];
    snprintf(why, sizeof why,
             "schema version %lld is newer than this pipeprof's %d",
             (long long)ver, PP_HISTORY_SCHEMA);
    rc = not_ours(path, err, errlen, why);
  } else if (ver < 1) {
    rc = not_ours(path, err, errlen, "no schema version");
  } else {
    int64_t ours = 0;
    if (query_int(db,
                  "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                  "AND name IN ('runs', 'metrics')",
                  &ours) != 0 ||
        ours != 2)
      rc = not_ours(path, err, errlen, "tables runs and metrics missing");
    else
      rc = 0;
  }
  if (create)
    sqlite3_exec(db, rc == 0 ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
  return rc;
}

/* Put the database in WAL mode. Changing the journal mode needs an
 * exclusive lock, and when another connection holds one SQLite keeps the
 * old mode without an error: retry for up to the busy timeout. The old
 * (rollback) mode is still correct, only slower, so giving up is no error.
 * Returns -1 only on a real error. */
static int switch_to_wal(sqlite3 *db) {
  for (int tries = 0; tries < 500; tries++) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "PRAGMA journal_mode = WAL", -1, &st, NULL) !=
        SQLITE_OK)
      return -1;
    int rc = sqlite3_step(st);
    const unsigned char *mode =
        rc == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
    int wal = mode && strcmp((const char *)mode, "wal") == 0;
    sqlite3_finalize(st);
    if (wal)
      return 0;
    if (rc != SQLITE_ROW && rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
      return -1;
    usleep(10000);
  }
  return 0;
}

/* Open db_path (NULL: default). With create, make the file, directories
 * and schema as needed and switch to WAL; without, the file must exist.
 * Returns the handle, or NULL with err set. *empty is set when the file
 * holds no schema yet (only without create). */
static sqlite3 *open_db(const char *db_path, int create, int *empty, char *err,
                        size_t errlen) {
  char def[PATH_MAX];
  if (!db_path) {
    if (pp_history_default_path(def, sizeof def, err, errlen) != 0)
      return NULL;
    db_path = def;
  }
  struct stat st;
  int exists = stat(db_path, &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    pp__err_set(err, errlen, "%s is a directory", db_path);
    return NULL;
  }
  if (!exists && !create) {
    pp__err_set(err, errlen,
            "no history database at %s (record a run with "
            "'pipeprof history add')",
            db_path);
    return NULL;
  }
  if (exists && !looks_like_sqlite(db_path)) {
    not_ours(db_path, err, errlen, NULL);
    return NULL;
  }
  if (!exists && make_parents(db_path, err, errlen) != 0)
    return NULL;
  sqlite3 *db = NULL;
  int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(db_path, &db, flags, NULL) != SQLITE_OK) {
    pp__err_set(err, errlen, "cannot open %s: %s", db_path,
            db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    return NULL;
  }
  sqlite3_extended_result_codes(db, 0);
  sqlite3_busy_timeout(db, 5000);
  if (check_schema(db, db_path, create, err, errlen) != 0) {
    sqlite3_close(db);
    return NULL;
  }
  int64_t tables = 1;
  if (!create && empty)
    *empty =
        query_int(db, "SELECT count(*) FROM sqlite_master", &tables) == 0 &&
        tables == 0;
  if (create && switch_to_wal(db) != 0) {
    db_fail(db, db_path, "cannot switch to WAL", err, errlen);
    sqlite3_close(db);
    return NULL;
  }
  sqlite3_exec(db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
  return db;
}

/* ---- recording ----------------------------------------------------------- */

static int meta_i64(const pp_trace *t, const char *key, int64_t *out) {
  const char *s = pp_trace_meta(t, key);
  if (!s || !*s)
    return 0;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end)
    return 0;
  *out = v;
  return 1;
}

static int put_metric(sqlite3_stmt *st, int64_t run, const char *name,
                      const char *stat, double value) {
  if (!isfinite(value))
    return 0;
  sqlite3_reset(st);
  sqlite3_bind_int64(st, 1, run);
  sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 3, stat, -1, SQLITE_STATIC);
  sqlite3_bind_double(st, 4, value);
  int rc = sqlite3_step(st);
  /* a second zone or counter of the same name: the first (the larger
   * total) is kept */
  return rc == SQLITE_DONE || rc == SQLITE_CONSTRAINT ? 0 : -1;
}

static int put_run(sqlite3 *db, const pp_analysis *a, const char *label,
                   int64_t *run) {
  const pp_trace *t = a->trace;
  time_t now = time(NULL);
  int64_t start_ns = 0, wall = a->prof.wall_ns;
  int64_t when = meta_i64(t, "start_realtime_ns", &start_ns) && start_ns > 0
                     ? start_ns / 1000000000
                     : (int64_t)now;
  int64_t w;
  if (meta_i64(t, "run.wall_ns", &w) && w >= 0)
    wall = w;
  const char *proc = pp_trace_meta(t, "process_name");
  const char *cmd = pp_trace_meta(t, "run.command");
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db,
                         "INSERT INTO runs (time, recorded, label, process, "
                         "command, wall_ns) VALUES (?, ?, ?, ?, ?, ?)",
                         -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_int64(st, 1, when);
  sqlite3_bind_int64(st, 2, (int64_t)now);
  sqlite3_bind_text(st, 3, label ? label : "", -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 4, proc ? proc : "", -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 5, cmd ? cmd : "", -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 6, wall);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE)
    return -1;
  *run = sqlite3_last_insert_rowid(db);
  return 0;
}

static int put_metrics(sqlite3 *db, const pp_analysis *a, int64_t run) {
  const pp_trace *t = a->trace;
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db,
                         "INSERT OR IGNORE INTO metrics (run_id, name, stat, "
                         "value) VALUES (?, ?, ?, ?)",
                         -1, &st, NULL) != SQLITE_OK)
    return -1;
  const pp_profile *p = &a->prof;
  int64_t wall = 0;
  if (!meta_i64(t, "run.wall_ns", &wall) || wall < 0)
    wall = p->wall_ns;
  int rc = put_metric(st, run, "wall", "ns", (double)wall);
  char name[1024];
  for (size_t i = 0; rc == 0 && i < p->nzones; i++) {
    const pp_zone_stats *z = &p->zones[i];
    snprintf(name, sizeof name, "zone:%s", pp_trace_loc_name(t, z->loc));
    rc = put_metric(st, run, name, "count", (double)z->count);
    if (rc == 0)
      rc = put_metric(st, run, name, "mean", z->mean_ns);
    static const struct {
      const char *stat;
      double p;
    } pct[] = {{"p50", 50}, {"p90", 90}, {"p99", 99}};
    for (size_t k = 0; rc == 0 && z->hist.count && k < PP__ARRAY_LEN(pct); k++)
      rc = put_metric(st, run, name, pct[k].stat,
                      (double)pp_hist_percentile(&z->hist, pct[k].p));
  }
  for (size_t i = 0; rc == 0 && i < p->ncounters; i++) {
    const pp_counter_stats *c = &p->counters[i];
    if (c->samples == 0)
      continue;
    snprintf(name, sizeof name, "counter:%s", pp_trace_loc_name(t, c->loc));
    rc = put_metric(st, run, name, "mean", c->mean);
    if (rc == 0)
      rc = put_metric(st, run, name, "last", c->last);
  }
  sqlite3_finalize(st);
  return rc;
}

int64_t pp_history_record(const char *db_path, const pp_analysis *a,
                          const char *label, char *err, size_t errlen) {
  pp__err_set(err, errlen, "%s", "");
  char def[PATH_MAX];
  if (!db_path) {
    if (pp_history_default_path(def, sizeof def, err, errlen) != 0)
      return -1;
    db_path = def;
  }
  sqlite3 *db = open_db(db_path, 1, NULL, err, errlen);
  if (!db)
    return -1;
  int64_t run = -1;
  if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
    db_fail(db, db_path, "cannot lock", err, errlen);
    sqlite3_close(db);
    return -1;
  }
  if (put_run(db, a, label, &run) != 0 || put_metrics(db, a, run) != 0 ||
      sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
    db_fail(db, db_path, "cannot record the run", err, errlen);
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    run = -1;
  }
  sqlite3_close(db);
  return run;
}

/* ---- reading ------------------------------------------------------------- */

static char *col_text(sqlite3_stmt *st, int col) {
  const unsigned char *s = sqlite3_column_text(st, col);
  return pp__strdup(s ? (const char *)s : "");
}

/* Open for reading. NULL with *rc -1 on error (err set) or 0 when the
 * history is empty (nothing to read); else the connection. */
static sqlite3 *open_reader(const char *db_path, int *rc, char *err,
                            size_t errlen) {
  int empty = 0;
  sqlite3 *db = open_db(db_path, 0, &empty, err, errlen);
  *rc = db ? 0 : -1;
  if (db && empty) {
    sqlite3_close(db);
    db = NULL;
  }
  return db;
}

int pp_history_list(const char *db_path, pp_history_run **runs, size_t *n,
                    char *err, size_t errlen) {
  *runs = NULL;
  *n = 0;
  char def[PATH_MAX];
  if (!db_path) {
    if (pp_history_default_path(def, sizeof def, err, errlen) != 0)
      return -1;
    db_path = def;
  }
  int rc_open;
  sqlite3 *db = open_reader(db_path, &rc_open, err, errlen);
  if (!db)
    return rc_open;
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db,
                         "SELECT id, time, wall_ns, label, process, command "
                         "FROM runs ORDER BY id",
                         -1, &st, NULL) != SQLITE_OK) {
    int r = db_fail(db, db_path, "cannot read", err, errlen);
    sqlite3_close(db);
    return r;
  }
  size_t cap = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (pp__grow((void **)runs, &cap, *n + 1, sizeof **runs) != 0)
      break;
    pp_history_run *r = &(*runs)[*n];
    r->id = sqlite3_column_int64(st, 0);
    r->time_s = sqlite3_column_int64(st, 1);
    r->wall_ns = sqlite3_column_type(st, 2) == SQLITE_NULL
                     ? -1
                     : sqlite3_column_int64(st, 2);
    r->label = col_text(st, 3);
    r->process = col_text(st, 4);
    r->command = col_text(st, 5);
    (*n)++;
    if (!r->label || !r->process || !r->command)
      break;
  }
  int ok = rc == SQLITE_DONE;
  if (!ok)
    pp__err_set(err, errlen, "%s: %s", db_path,
            rc == SQLITE_ROW ? "out of memory" : sqlite3_errmsg(db));
  sqlite3_finalize(st);
  sqlite3_close(db);
  if (!ok) {
    pp_history_runs_free(*runs, *n);
    *runs = NULL;
    *n = 0;
    return -1;
  }
  return 0;
}

int pp_history_has_metric(const char *db_path, const char *name, char *err,
                          size_t errlen) {
  int rc_open;
  sqlite3 *db = open_reader(db_path, &rc_open, err, errlen);
  if (!db)
    return rc_open;
  sqlite3_stmt *st;
  int found = -1;
  if (sqlite3_prepare_v2(db, "SELECT 1 FROM metrics WHERE name = ? LIMIT 1", -1,
                         &st, NULL) == SQLITE_OK) {
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    found = rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
  }
  if (found < 0)
    pp__err_set(err, errlen, "%s: %s", db_path ? db_path : "history",
            sqlite3_errmsg(db));
  sqlite3_close(db);
  return found;
}

int pp_history_series(const char *db_path, const char *name, const char *stat,
                      pp_history_point **pts, size_t *n, char *err,
                      size_t errlen) {
  *pts = NULL;
  *n = 0;
  int rc_open;
  sqlite3 *db = open_reader(db_path, &rc_open, err, errlen);
  if (!db)
    return rc_open;
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db,
                         "SELECT r.id, r.time, r.label, m.value FROM metrics m "
                         "JOIN runs r ON r.id = m.run_id "
                         "WHERE m.name = ? AND m.stat = ? ORDER BY r.id",
                         -1, &st, NULL) != SQLITE_OK) {
    pp__err_set(err, errlen, "%s: %s", db_path ? db_path : "history",
            sqlite3_errmsg(db));
    sqlite3_close(db);
    return -1;
  }
  sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, stat, -1, SQLITE_STATIC);
  size_t cap = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (pp__grow((void **)pts, &cap, *n + 1, sizeof **pts) != 0)
      break;
    pp_history_point *p = &(*pts)[*n];
    memset(p, 0, sizeof *p);
    p->run_id = sqlite3_column_int64(st, 0);
    p->time_s = sqlite3_column_int64(st, 1);
    p->label = col_text(st, 2);
    p->value = sqlite3_column_double(st, 3);
    (*n)++;
    if (!p->label)
      break;
  }
  int ok = rc == SQLITE_DONE;
  if (!ok)
    pp__err_set(err, errlen, "%s: %s", db_path ? db_path : "history",
            rc == SQLITE_ROW ? "out of memory" : sqlite3_errmsg(db));
  sqlite3_finalize(st);
  sqlite3_close(db);
  if (!ok) {
    pp_history_points_free(*pts, *n);
    *pts = NULL;
    *n = 0;
    return -1;
  }
  return 0;
}

#else /* !PP_HAVE_SQLITE */

static int no_sqlite(char *err, size_t errlen) {
  pp__err_set(err, errlen,
          "run history needs SQLite; this pipeprof was built "
          "without it (install libsqlite3-dev and rebuild)");
  return -1;
}

int64_t pp_history_record(const char *db_path, const pp_analysis *a,
                          const char *label, char *err, size_t errlen) {
  return no_sqlite(err, errlen);
}

int pp_history_list(const char *db_path, pp_history_run **runs, size_t *n,
                    char *err, size_t errlen) {
  *runs = NULL;
  *n = 0;
  return no_sqlite(err, errlen);
}

int pp_history_has_metric(const char *db_path, const char *name, char *err,
                          size_t errlen) {
  return no_sqlite(err, errlen);
}

int pp_history_series(const char *db_path, const char *name, const char *stat,
                      pp_history_point **pts, size_t *n, char *err,
                      size_t errlen) {
  *pts = NULL;
  *n = 0;
  return no_sqlite(err, errlen);
}

#endif /* PP_HAVE_SQLITE */
