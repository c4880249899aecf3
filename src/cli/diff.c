/* SPDX-License-Identifier: MIT */
/*
 * `pipeprof diff [options] BASE... -- NEW...`: compare two sets of runs and
 * decide, per zone, request range and sampled system metric, whether the
 * new runs are worse, better, unchanged, or too few to tell. Each input is
 * a .pptrace file, a `pipeprof run` directory or a summary JSON; several
 * inputs on one side are repetitions of the same experiment.
 *
 * From traces the samples are the raw values (every zone instance's
 * duration, every closed range, every sys.* / proc.* counter sample) pooled
 * over the side's runs. When any input has no raw values (a summary JSON,
 * a stats-mode trace) every input contributes one value per run instead:
 * its p50 for the median tests and its p99 for the p99 column. The
 * statistics are in src/analyze/stat_tests.c; the verdict rules, exit codes
 * and the JSON schema are specified in docs/diff.md.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef PP_HAVE_JANSSON
#include <jansson.h>
#endif

#include "analyze/model.h"
#include "analyze/stat_tests.h"
#include "cli.h"
#include "export/jsonw.h"
#include "format/pptrace.h"
#include "internal.h"
#include "pipeprof.h"

int pp_cli_diff(int argc, char **argv);

enum { EXIT_OK = 0, EXIT_REGRESSION = 1, EXIT_USAGE = 2 };

static const char diff_usage[] =
    "usage: pipeprof diff [options] BASE NEW\n"
    "       pipeprof diff [options] BASE... -- NEW...\n"
    "\n"
    "Compare runs: per zone, request range and sampled system metric\n"
    "(sys.*, proc.*), the median and p99 of base and new, their relative\n"
    "change, the Hodges-Lehmann shift of the median with its confidence\n"
    "interval, Mann-Whitney and Kolmogorov-Smirnov p-values, and a verdict:\n"
    "worse, better, no change or need more samples. Each input is a\n"
    ".pptrace file, a `pipeprof run` directory or a summary JSON; several\n"
    "inputs per side are repetitions. Summary JSON carries no raw samples:\n"
    "then each run counts as one sample (its p50 and p99).\n"
    "\n"
    "  --threshold T   smallest relative change that matters: 5% or 0.05\n"
    "                  (default 5%)\n"
    "  --alpha A       significance level, 0 < A <= 0.5 (default 0.05)\n"
    "  --format F      table (default), markdown (for a PR comment) or json\n"
    "  --metric NAME   only rows whose name contains NAME (repeatable)\n"
    "  --per-run       one sample per run (its p50 and p99) even from\n"
    "                  traces: judges run-to-run variation (needs >= 4\n"
    "                  runs per side at alpha 0.05)\n"
    "  -o, --output F  write to F instead of standard output\n"
    "\n"
    "Exit status: 0 no regression, 1 at least one row is worse, 2 usage or\n"
    "input error.\n";

/* ---- options ---------------------------------------------------------- */

typedef enum out_format { FMT_TABLE, FMT_MARKDOWN, FMT_JSON } out_format;

typedef struct diff_opts {
  double threshold, alpha;
  out_format format;
  const char **metrics;
  size_t nmetrics;
  const char *out;
  int per_run;              /* --per-run */
  const char **base, **cur; /* input paths */
  size_t nbase, ncur;
} diff_opts;

static int usage(const char *fmt, const char *arg) {
  fputs("pipeprof diff: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs(" (see 'pipeprof diff --help')\n", stderr);
  return EXIT_USAGE;
}

/* "5%" -> 0.05, "0.05" -> 0.05; -1 when malformed or out of [0, 1). */
static int parse_threshold(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s)
    return -1;
  if (*end == '%' && end[1] == 0)
    v /= 100;
  else if (*end)
    return -1;
  if (!(v >= 0 && v < 1))
    return -1;
  *out = v;
  return 0;
}

static int parse_alpha(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v > 0 && v <= 0.5))
    return -1;
  *out = v;
  return 0;
}

/* The value of option `name` at argv[*i]: "--name V" or "--name=V". NULL
 * when argv[*i] is not that option; *missing set when V is absent. */
static const char *opt_value(int argc, char **argv, int *i, const char *name,
                             const char *alias, int *missing) {
  const char *a = argv[*i];
  size_t len = strlen(name);
  if (strcmp(a, name) == 0 || (alias && strcmp(a, alias) == 0)) {
    if (*i + 1 >= argc) {
      *missing = 1;
      return a;
    }
    return argv[++*i];
  }
  if (strncmp(a, name, len) == 0 && a[len] == '=')
    return a + len + 1;
  return NULL;
}

/* Returns -1 to continue, or an exit code (help, usage error). */
static int parse_args(int argc, char **argv, diff_opts *o) {
  const char **pos = pp__calloc((size_t)argc, sizeof *pos);
  if (!pos) {
    fputs("pipeprof diff: out of memory\n", stderr);
    return EXIT_USAGE;
  }
  size_t npos = 0, sep = (size_t)-1;
  o->metrics = pp__calloc((size_t)argc, sizeof *o->metrics);
  if (!o->metrics) {
    pp__free(pos);
    fputs("pipeprof diff: out of memory\n", stderr);
    return EXIT_USAGE;
  }
  int rc = -1;
  for (int i = 1; i < argc && rc < 0; i++) {
    const char *a = argv[i], *v;
    int missing = 0;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(diff_usage, stdout);
      rc = EXIT_OK;
    } else if (strcmp(a, "--") == 0) {
      if (sep != (size_t)-1)
        rc = usage("'--' given twice%s", "");
      sep = npos;
    } else if ((v = opt_value(argc, argv, &i, "--threshold", NULL, &missing))) {
      if (missing)
        rc = usage("%s needs a value (e.g. 5%%)", a);
      else if (parse_threshold(v, &o->threshold) != 0)
        rc = usage("bad --threshold '%s' (a percentage like 5%% or a "
                   "fraction like 0.05)",
                   v);
    } else if ((v = opt_value(argc, argv, &i, "--alpha", NULL, &missing))) {
      if (missing)
        rc = usage("%s needs a value", a);
      else if (parse_alpha(v, &o->alpha) != 0)
        rc = usage("bad --alpha '%s' (expected 0 < alpha <= 0.5)", v);
    } else if ((v = opt_value(argc, argv, &i, "--format", "-f", &missing))) {
      if (missing)
        rc = usage("%s needs a value", a);
      else if (strcmp(v, "table") == 0)
        o->format = FMT_TABLE;
      else if (strcmp(v, "markdown") == 0 || strcmp(v, "md") == 0)
        o->format = FMT_MARKDOWN;
      else if (strcmp(v, "json") == 0)
        o->format = FMT_JSON;
      else
        rc = usage("unknown format '%s' (expected table, markdown or json)", v);
    } else if ((v = opt_value(argc, argv, &i, "--metric", NULL, &missing))) {
      if (missing)
        rc = usage("%s needs a name", a);
      else
        o->metrics[o->nmetrics++] = v;
    } else if ((v = opt_value(argc, argv, &i, "--output", "-o", &missing))) {
      if (missing)
        rc = usage("%s needs a file", a);
      else
        o->out = v;
    } else if (strcmp(a, "--per-run") == 0) {
      o->per_run = 1;
    } else if (a[0] == '-' && a[1]) {
      rc = usage("unknown option '%s'", a);
    } else {
      pos[npos++] = a;
    }
  }
  if (rc < 0) {
    if (sep == (size_t)-1) {
      if (npos != 2)
        rc = npos < 2 ? usage("expected BASE and NEW inputs%s", "")
                      : usage("several inputs per side need '--' between "
                              "BASE... and NEW...%s",
                              "");
      sep = 1;
    } else if (sep == 0 || sep == npos) {
      rc = usage("missing %s inputs", sep == 0 ? "BASE" : "NEW");
    }
  }
  if (rc >= 0) {
    pp__free(pos);
    return rc;
  }
  o->base = pos;
  o->nbase = sep;
  o->cur = pos + sep;
  o->ncur = npos - sep;
  return -1;
}

/* ---- samples ------------------------------------------------------------ */

typedef enum row_kind { K_ZONE, K_RANGE, K_SAMPLED } row_kind;
static const char *const kind_names[] = {"zone", "range", "sampled"};

/* The values of one metric on one side. */
typedef struct series {
  char *name;
  row_kind kind;
  double *v; /* raw values, or per-run p50 */
  size_t n, cap;
  double *p99; /* per-run p99 (per-run mode) */
  size_t np99, cap99;
  size_t last_run;     /* per-run mode: run that gave the last value, +1 */
  uint64_t last_count; /* its instance count (sites sharing a name) */
} series;

typedef struct series_set {
  series *s;
  size_t n, cap;
} series_set;

typedef struct side {
  series_set raw, run; /* raw samples; one value per run */
  size_t runs;
  int no_raw; /* an input had no raw samples */
} side;

static void set_free(series_set *set) {
  for (size_t i = 0; i < set->n; i++) {
    pp__free(set->s[i].name);
    pp__free(set->s[i].v);
    pp__free(set->s[i].p99);
  }
  pp__free(set->s);
  memset(set, 0, sizeof *set);
}

static series *set_find(const series_set *set, row_kind k, const char *name) {
  for (size_t i = 0; i < set->n; i++)
    if (set->s[i].kind == k && strcmp(set->s[i].name, name) == 0)
      return &set->s[i];
  return NULL;
}

/* Index of (k, name) in set, added when absent; -1 when out of memory. */
static long set_get(series_set *set, row_kind k, const char *name) {
  series *s = set_find(set, k, name);
  if (s)
    return (long)(s - set->s);
  if (pp__grow((void **)&set->s, &set->cap, set->n + 1, sizeof *set->s))
    return -1;
  s = &set->s[set->n];
  memset(s, 0, sizeof *s);
  s->kind = k;
  s->name = pp__strdup(name);
  if (!s->name)
    return -1;
  return (long)set->n++;
}

static int push(double **v, size_t *n, size_t *cap, double x) {
  if (pp__grow((void **)v, cap, *n + 1, sizeof **v))
    return -1;
  (*v)[(*n)++] = x;
  return 0;
}

/* One run's p50 and p99 of a metric; of the sites sharing a name within a
 * run, the one with the most instances. */
static int add_run_value(series_set *set, size_t run, const char *name,
                         uint64_t count, double p50, double p99) {
  long i = set_get(set, K_ZONE, name);
  if (i < 0)
    return -1;
  series *s = &set->s[i];
  if (s->last_run == run + 1) {
    if (count > s->last_count && s->n && s->np99) {
      s->v[s->n - 1] = p50;
      s->p99[s->np99 - 1] = p99;
      s->last_count = count;
    }
    return 0;
  }
  if (push(&s->v, &s->n, &s->cap, p50) ||
      push(&s->p99, &s->np99, &s->cap99, p99))
    return -1;
  s->last_run = run + 1;
  s->last_count = count;
  return 0;
}

static int is_sampled_name(const char *n) {
  return strncmp(n, "sys.", 4) == 0 || strncmp(n, "proc.", 5) == 0;
}

/* Per loc: its series index for each kind (-1 unknown, -2 not wanted), and
 * the running value of a counter. */
typedef struct loc_state {
  long zone, range, sampled;
  int64_t iv;
  double fv;
  int is_float;
} loc_state;

static long loc_series(series_set *set, const pp_trace *t, uint32_t loc,
                       long *slot, row_kind k) {
  if (*slot == -1) {
    const char *name = pp_trace_loc_name(t, loc);
    if (k == K_SAMPLED && !is_sampled_name(name))
      *slot = -2;
    else
      *slot = set_get(set, k, name);
    if (*slot == -1)
      return -3; /* out of memory */
  }
  return *slot;
}

static int collect_raw(series_set *set, const pp_trace *t) {
  loc_state *ls = pp__malloc((t->nlocs ? t->nlocs : 1) * sizeof *ls);
  if (!ls)
    return -1;
  for (size_t i = 0; i < t->nlocs; i++)
    ls[i] = (loc_state){-1, -1, -1, 0, 0, 0};
  int rc = -1;
  for (size_t ti = 0; ti < t->nthreads; ti++) {
    const pp_thread *th = &t->threads[ti];
    for (size_t z = 0; z < th->nzones; z++) {
      const pp_zone_inst *zi = &th->zones[z];
      if (zi->unclosed || zi->loc >= t->nlocs)
        continue;
      long s = loc_series(set, t, zi->loc, &ls[zi->loc].zone, K_ZONE);
      if (s == -3)
        goto out;
      series *se = &set->s[s];
      if (push(&se->v, &se->n, &se->cap, (double)(zi->end - zi->start)))
        goto out;
    }
    /* Counters: followed per thread in recording order (the sampler
     * records sys.* and proc.* from one thread). */
    for (size_t e = 0; e < th->nev; e++) {
      const pp_event *ev = &th->ev[e];
      if ((ev->type != PPT_EV_COUNTER_SET && ev->type != PPT_EV_COUNTER_ADD &&
           ev->type != PPT_EV_COUNTER_SETF) ||
          ev->loc >= t->nlocs)
        continue;
      loc_state *l = &ls[ev->loc];
      long s = loc_series(set, t, ev->loc, &l->sampled, K_SAMPLED);
      if (s == -3)
        goto out;
      if (s < 0)
        continue;
      if (ev->type == PPT_EV_COUNTER_SET) {
        l->iv = ev->v.i;
        l->is_float = 0;
      } else if (ev->type == PPT_EV_COUNTER_ADD) {
        if (l->is_float)
          l->fv += (double)ev->v.i;
        else
          l->iv = (int64_t)((uint64_t)l->iv + (uint64_t)ev->v.i);
      } else {
        l->fv = ev->v.f;
        l->is_float = 1;
      }
      double val = l->is_float ? l->fv : (double)l->iv;
      if (!isfinite(val))
        continue;
      series *se = &set->s[s];
      if (push(&se->v, &se->n, &se->cap, val))
        goto out;
    }
  }
  for (size_t r = 0; r < t->nranges; r++) {
    const pp_range *rg = &t->ranges[r];
    if (rg->unclosed || rg->loc >= t->nlocs)
      continue;
    long s = loc_series(set, t, rg->loc, &ls[rg->loc].range, K_RANGE);
    if (s == -3)
      goto out;
    series *se = &set->s[s];
    if (push(&se->v, &se->n, &se->cap, (double)(rg->end - rg->start)))
      goto out;
  }
  rc = 0;
out:
  pp__free(ls);
  return rc;
}

static int collect_runs_trace(series_set *set, size_t run, const pp_trace *t) {
  for (size_t i = 0; i < t->prof.nzones; i++) {
    const pp_zone_stats *z = &t->prof.zones[i];
    if (!z->count)
      continue;
    if (add_run_value(set, run, pp_trace_loc_name(t, z->loc), z->count,
                      (double)pp_hist_percentile(&z->hist, 50),
                      (double)pp_hist_percentile(&z->hist, 99)))
      return -1;
  }
  return 0;
}

/* Does the file start (after white space) with '{'? */
static int looks_like_json(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return 0;
  int c;
  while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\r' || c == '\t') {
  }
  fclose(f);
  return c == '{';
}

static int load_summary(series_set *set, size_t run, const char *path) {
#ifdef PP_HAVE_JANSSON
  json_error_t jerr;
  json_t *root = json_load_file(path, 0, &jerr);
  if (!root) {
    fprintf(stderr, "pipeprof diff: %s: not valid JSON (line %d: %s)\n", path,
            jerr.line, jerr.text);
    return -1;
  }
  int rc = -1;
  const char *schema = json_string_value(json_object_get(root, "schema"));
  json_t *ver = json_object_get(root, "schema_version");
  json_t *zones = json_object_get(root, "zones");
  if (!schema || strcmp(schema, "pipeprof.summary") != 0) {
    fprintf(stderr,
            "pipeprof diff: %s: not a pipeprof summary JSON "
            "(schema is not \"pipeprof.summary\")\n",
            path);
  } else if (!json_is_integer(ver) || json_integer_value(ver) < 1 ||
             json_integer_value(ver) > 1) {
    fprintf(stderr,
            "pipeprof diff: %s: unsupported summary "
            "schema_version (this pipeprof reads version 1)\n",
            path);
  } else if (!json_is_array(zones)) {
    fprintf(stderr, "pipeprof diff: %s: summary JSON has no zones array\n",
            path);
  } else {
    rc = 0;
    for (size_t i = 0; i < json_array_size(zones) && rc == 0; i++) {
      json_t *z = json_array_get(zones, i);
      const char *name = json_string_value(json_object_get(z, "name"));
      json_t *c = json_object_get(z, "count");
      json_t *p50 = json_object_get(z, "p50_ns");
      json_t *p99 = json_object_get(z, "p99_ns");
      if (!name || !json_is_integer(c) || !json_is_number(p50) ||
          !json_is_number(p99)) {
        fprintf(stderr,
                "pipeprof diff: %s: zones[%zu] lacks name, count, "
                "p50_ns or p99_ns\n",
                path, i);
        rc = -1;
      } else if (json_integer_value(c) > 0 &&
                 add_run_value(set, run, name, (uint64_t)json_integer_value(c),
                               json_number_value(p50),
                               json_number_value(p99))) {
        fprintf(stderr, "pipeprof diff: out of memory\n");
        rc = -1;
      }
    }
  }
  json_decref(root);
  return rc;
#else
  (void)set;
  (void)run;
  fprintf(stderr,
          "pipeprof diff: %s: reading summary JSON needs a pipeprof "
          "built with jansson; give the .pptrace or run directory\n",
          path);
  return -1;
#endif
}

static int load_input(side *sd, const char *path, int need_raw) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "pipeprof diff: cannot open %s: %s\n", path,
            strerror(errno));
    return -1;
  }
  size_t run = sd->runs++;
  if (!S_ISDIR(st.st_mode) && looks_like_json(path)) {
    sd->no_raw = 1;
    return load_summary(&sd->run, run, path);
  }
  pp_trace t;
  if (pp_cli_load(path, &t) != 0)
    return -1;
  int rc = collect_runs_trace(&sd->run, run, &t);
  if (rc == 0) {
    if (t.from_stats)
      sd->no_raw = 1;
    else if (need_raw)
      rc = collect_raw(&sd->raw, &t);
  }
  pp_trace_free(&t);
  if (rc != 0)
    fprintf(stderr, "pipeprof diff: out of memory while reading %s\n", path);
  return rc;
}

/* ---- rows and verdicts ----------------------------------------------------
 */

typedef enum verdict {
  V_WORSE,
  V_BETTER,
  V_HIGHER,
  V_LOWER,
  V_NO_CHANGE,
  V_NEED_MORE,
  V_ONLY_BASE,
  V_ONLY_NEW,
  V_COUNT_
} verdict;
static const char *const verdict_names[] = {"worse",        "better",
                                            "higher",       "lower",
                                            "no change",    "need more samples",
                                            "only in base", "only in new"};
static const char *const verdict_keys[] = {
    "worse",     "better",  "higher", "lower", "no_change", "need_more_samples",
    "only_base", "only_new"};

typedef struct row {
  const char *name;
  row_kind kind;
  size_t nb, nn;
  pp_compare c; /* filled when both sides have values */
  double base_med, new_med, base_p99, new_p99; /* also for one side */
  verdict v;
} row;

static void side_stats(series *s, int per_run, double *med, double *p99) {
  *med = *p99 = NAN;
  if (!s || !s->n)
    return;
  pp_stat_sort(s->v, s->n);
  *med = pp_stat_median(s->v, s->n);
  if (per_run) {
    pp_stat_sort(s->p99, s->np99);
    *p99 = pp_stat_median(s->p99, s->np99);
  } else {
    *p99 = pp_stat_quantile(s->v, s->n, 0.99);
  }
}

static int compute_row(row *r, series *b, series *c, int per_run,
                       const diff_opts *o) {
  series *any = b ? b : c;
  memset(r, 0, sizeof *r);
  r->name = any->name;
  r->kind = any->kind;
  r->nb = b ? b->n : 0;
  r->nn = c ? c->n : 0;
  side_stats(b, per_run, &r->base_med, &r->base_p99);
  side_stats(c, per_run, &r->new_med, &r->new_p99);
  if (!r->nb || !r->nn) {
    r->v = r->nb ? V_ONLY_BASE : V_ONLY_NEW;
    r->c.rel_med = r->c.rel_p99 = r->c.p = NAN;
    return 0;
  }
  if (pp_stat_compare(b->v, b->n, c->v, c->n, per_run ? b->p99 : NULL, b->np99,
                      per_run ? c->p99 : NULL, c->np99, o->threshold, o->alpha,
                      &r->c) != 0)
    return -1;
  switch (r->c.verdict) {
  case PP_VERDICT_WORSE:
    r->v = r->kind == K_SAMPLED ? V_HIGHER : V_WORSE;
    break;
  case PP_VERDICT_BETTER:
    r->v = r->kind == K_SAMPLED ? V_LOWER : V_BETTER;
    break;
  case PP_VERDICT_NO_CHANGE:
    r->v = V_NO_CHANGE;
    break;
  default:
    r->v = V_NEED_MORE;
    break;
  }
  return 0;
}

static int wanted(const diff_opts *o, const char *name) {
  if (!o->nmetrics)
    return 1;
  for (size_t i = 0; i < o->nmetrics; i++)
    if (strstr(name, o->metrics[i]))
      return 1;
  return 0;
}

static int cmp_row(const void *a, const void *b) {
  const row *x = a, *y = b;
  if (x->kind != y->kind)
    return (int)x->kind - (int)y->kind;
  return strcmp(x->name, y->name);
}

/* Rows for the union of the two sides' metrics, sorted by kind and name. */
static int build_rows(side *sb, side *sn, int per_run, const diff_opts *o,
                      row **out, size_t *nout) {
  series_set *b = per_run ? &sb->run : &sb->raw;
  series_set *c = per_run ? &sn->run : &sn->raw;
  row *rows = pp__calloc(b->n + c->n, sizeof *rows);
  if (!rows)
    return -1;
  size_t n = 0;
  for (size_t i = 0; i < b->n; i++) {
    series *s = &b->s[i];
    if (wanted(o, s->name) &&
        compute_row(&rows[n++], s, set_find(c, s->kind, s->name), per_run, o) !=
            0)
      goto oom;
  }
  for (size_t i = 0; i < c->n; i++) {
    series *s = &c->s[i];
    if (wanted(o, s->name) && !set_find(b, s->kind, s->name) &&
        compute_row(&rows[n++], NULL, s, per_run, o) != 0)
      goto oom;
  }
  if (n > 1)
    qsort(rows, n, sizeof *rows, cmp_row);
  *out = rows;
  *nout = n;
  return 0;
oom:
  pp__free(rows);
  return -1;
}

/* ---- output ------------------------------------------------------------- */

typedef struct diff_result {
  const diff_opts *o;
  row *rows;
  size_t nrows;
  int per_run;
  size_t runs_base, runs_new;
  size_t count[V_COUNT_];
} diff_result;

/* A value for humans: durations in ns/us/ms/s with three significant
 * digits, other metrics with four. sign: prefix '+' on positives. */
static void fmt_value(char *buf, size_t len, double v, row_kind k, int sign) {
  if (!isfinite(v)) {
    snprintf(buf, len, "%s", isnan(v) ? "n/a" : v > 0 ? "+inf" : "-inf");
    return;
  }
  const char *plus = sign && v > 0 ? "+" : "";
  if (k == K_SAMPLED) {
    snprintf(buf, len, "%s%.4g", plus, v);
    return;
  }
  static const struct {
    double scale;
    const char *unit;
  } units[] = {{1, "ns"}, {1e3, "us"}, {1e6, "ms"}, {1e9, "s"}};
  size_t u = 0;
  double a = fabs(v);
  while (u + 1 < sizeof units / sizeof units[0] && a / units[u].scale >= 999.5)
    u++;
  double x = v / units[u].scale, ax = fabs(x);
  int dec = u == 0 ? 0 : ax < 9.995 ? 2 : ax < 99.95 ? 1 : 0;
  snprintf(buf, len, "%s%.*f %s", plus, dec, x, units[u].unit);
}

static void fmt_pct(char *buf, size_t len, double r) {
  if (!isfinite(r))
    snprintf(buf, len, "n/a");
  else if (fabs(r * 100) < 0.05)
    snprintf(buf, len, "0.0%%"); /* no "-0.0%" */
  else
    snprintf(buf, len, "%+.1f%%", r * 100);
}

static void fmt_p(char *buf, size_t len, double p) {
  if (!isfinite(p))
    snprintf(buf, len, "n/a");
  else if (p < 1e-4)
    snprintf(buf, len, "<1e-4");
  else
    snprintf(buf, len, "%.3g", p);
}

/* "+60.1% [+59.8%, +60.5%]" relative to the base median. */
static void fmt_shift(char *buf, size_t len, const row *r) {
  char a[32], lo[32], hi[32];
  if (!r->nb || !r->nn) {
    snprintf(buf, len, "n/a");
    return;
  }
  if (!isfinite(r->c.rel_shift)) {
    fmt_value(a, sizeof a, r->c.hl.shift, r->kind, 1);
    fmt_value(lo, sizeof lo, r->c.hl.lo, r->kind, 1);
    fmt_value(hi, sizeof hi, r->c.hl.hi, r->kind, 1);
  } else {
    fmt_pct(a, sizeof a, r->c.rel_shift);
    if (isfinite(r->c.rel_lo))
      fmt_pct(lo, sizeof lo, r->c.rel_lo);
    else
      snprintf(lo, sizeof lo, "-inf");
    if (isfinite(r->c.rel_hi))
      fmt_pct(hi, sizeof hi, r->c.rel_hi);
    else
      snprintf(hi, sizeof hi, "+inf");
  }
  snprintf(buf, len, "%s [%s, %s]", a, lo, hi);
}

static void fmt_verdict(char *buf, size_t len, const row *r, int per_run) {
  if (r->v == V_NEED_MORE)
    snprintf(buf, len, "need more samples (%zu %s per side)", r->c.need,
             per_run ? "runs" : "values");
  else
    snprintf(buf, len, "%s%s", verdict_names[r->v],
             r->c.by_p99 ? " (p99)" : "");
}

static void fmt_conf(char *buf, size_t len, const diff_opts *o) {
  snprintf(buf, len, "%.3g%%", (1 - o->alpha) * 100);
}

static void print_inputs(FILE *f, const char *label, const char **paths,
                         size_t n) {
  fprintf(f, "%s (%zu run%s):", label, n, n == 1 ? "" : "s");
  for (size_t i = 0; i < n; i++)
    fprintf(f, " %s", paths[i]);
  fputc('\n', f);
}

static void print_counts(FILE *f, const diff_result *d) {
  const char *sep = "";
  for (int v = 0; v < V_COUNT_; v++)
    if (d->count[v]) {
      fprintf(f, "%s%zu %s", sep, d->count[v], verdict_names[v]);
      sep = ", ";
    }
  fputc('\n', f);
}

static void print_mode_note(FILE *f, const diff_result *d) {
  if (d->per_run)
    fprintf(f,
            "note: %s: each run counts as one sample (its p50 and p99), "
            "so decisions need several runs per side\n",
            d->o->per_run ? "--per-run"
                          : "a summary JSON or stats-mode input has no "
                            "raw samples");
}

#define NCOLS 10

static int write_table(FILE *f, const diff_result *d) {
  const diff_opts *o = d->o;
  char conf[16];
  fmt_conf(conf, sizeof conf, o);
  print_inputs(f, "base", o->base, o->nbase);
  print_inputs(f, "new ", o->cur, o->ncur);
  fprintf(f,
          "threshold %.3g%%, alpha %.3g; p = min(Mann-Whitney, "
          "Kolmogorov-Smirnov); shift = Hodges-Lehmann, %s CI\n",
          o->threshold * 100, o->alpha, conf);
  print_mode_note(f, d);
  fputc('\n', f);
  static const char *const head[NCOLS] = {
      "metric",   "n base/new", "median base", "median new", "change",
      "p99 base", "p99 new",    "change",      "shift [CI]", "p"};
  char(*cells)[NCOLS][96] = pp__calloc(d->nrows + 1, sizeof *cells);
  char(*verd)[64] = pp__calloc(d->nrows + 1, sizeof *verd);
  if (!cells || !verd) {
    pp__free(cells);
    pp__free(verd);
    return -1;
  }
  for (int c = 0; c < NCOLS; c++)
    snprintf(cells[0][c], sizeof cells[0][c], "%s", head[c]);
  snprintf(verd[0], sizeof verd[0], "verdict");
  for (size_t i = 0; i < d->nrows; i++) {
    const row *r = &d->rows[i];
    char(*c)[96] = cells[i + 1];
    const char *pre = r->kind == K_RANGE ? "range " : "";
    snprintf(c[0], sizeof c[0], "%s%.60s", pre, r->name);
    snprintf(c[1], sizeof c[1], "%zu/%zu", r->nb, r->nn);
    fmt_value(c[2], sizeof c[2], r->base_med, r->kind, 0);
    fmt_value(c[3], sizeof c[3], r->new_med, r->kind, 0);
    fmt_pct(c[4], sizeof c[4], r->c.rel_med);
    fmt_value(c[5], sizeof c[5], r->base_p99, r->kind, 0);
    fmt_value(c[6], sizeof c[6], r->new_p99, r->kind, 0);
    fmt_pct(c[7], sizeof c[7], r->c.rel_p99);
    fmt_shift(c[8], sizeof c[8], r);
    fmt_p(c[9], sizeof c[9], r->c.p);
    fmt_verdict(verd[i + 1], sizeof verd[i + 1], r, d->per_run);
  }
  int width[NCOLS];
  for (int c = 0; c < NCOLS; c++) {
    width[c] = 0;
    for (size_t i = 0; i <= d->nrows; i++) {
      int w = (int)strlen(cells[i][c]);
      if (w > width[c])
        width[c] = w;
    }
  }
  for (size_t i = 0; i <= d->nrows; i++) {
    for (int c = 0; c < NCOLS; c++)
      fprintf(f, c == 0 ? "%-*s" : "  %*s", width[c], cells[i][c]);
    fprintf(f, "  %s\n", verd[i]);
  }
  pp__free(cells);
  pp__free(verd);
  fputc('\n', f);
  print_counts(f, d);
  return 0;
}

/* A metric name inside a Markdown table cell: code span, '|' escaped,
 * backticks and control characters replaced. */
static void md_name(FILE *f, const char *s) {
  fputc('`', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '|')
      fputs("\\|", f);
    else if (c == '`' || c < 0x20 || c == 0x7f)
      fputc('?', f);
    else
      fputc(c, f);
  }
  fputc('`', f);
}

static int write_markdown(FILE *f, const diff_result *d) {
  const diff_opts *o = d->o;
  char conf[16];
  fmt_conf(conf, sizeof conf, o);
  size_t worse = d->count[V_WORSE];
  if (worse)
    fprintf(f, "### pipeprof diff: %zu regression%s\n\n", worse,
            worse == 1 ? "" : "s");
  else
    fprintf(f, "### pipeprof diff: no regression\n\n");
  fprintf(f,
          "Base: %zu run%s, new: %zu run%s. Threshold %.3g%%, alpha "
          "%.3g; p = min(Mann-Whitney, Kolmogorov-Smirnov); shift = "
          "Hodges-Lehmann estimate with its %s confidence interval, "
          "relative to the base median.\n\n",
          o->nbase, o->nbase == 1 ? "" : "s", o->ncur, o->ncur == 1 ? "" : "s",
          o->threshold * 100, o->alpha, conf);
  if (d->per_run) {
    fputc('>', f);
    fputc(' ', f);
    print_mode_note(f, d);
    fputc('\n', f);
  }
  fprintf(f, "| metric | n base / new | median base → new | change | "
             "p99 base → new | change | shift [CI] | p | verdict |\n"
             "|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
  for (size_t i = 0; i < d->nrows; i++) {
    const row *r = &d->rows[i];
    char b[32], n[32], pm[32], b9[32], n9[32], p9[32], sh[128], p[32];
    char v[64];
    fmt_value(b, sizeof b, r->base_med, r->kind, 0);
    fmt_value(n, sizeof n, r->new_med, r->kind, 0);
    fmt_pct(pm, sizeof pm, r->c.rel_med);
    fmt_value(b9, sizeof b9, r->base_p99, r->kind, 0);
    fmt_value(n9, sizeof n9, r->new_p99, r->kind, 0);
    fmt_pct(p9, sizeof p9, r->c.rel_p99);
    fmt_shift(sh, sizeof sh, r);
    fmt_p(p, sizeof p, r->c.p);
    fmt_verdict(v, sizeof v, r, d->per_run);
    fputs("| ", f);
    if (r->kind == K_RANGE)
      fputs("range ", f);
    md_name(f, r->name);
    int bold = r->v == V_WORSE || r->v == V_BETTER;
    fprintf(f,
            " | %zu / %zu | %s → %s | %s | %s → %s | %s | %s | %s | "
            "%s%s%s |\n",
            r->nb, r->nn, b, n, pm, b9, n9, p9, sh, p, bold ? "**" : "", v,
            bold ? "**" : "");
  }
  fputc('\n', f);
  print_counts(f, d);
  return 0;
}

static void kv_num(pp_jsonw *w, const char *k, double v) {
  pp_jsonw_key(w, k);
  pp_jsonw_double(w, v); /* NaN and infinities become null */
}

static void json_side(pp_jsonw *w, const char *k, const char **paths,
                      size_t n) {
  pp_jsonw_key(w, k);
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_uint(w, "runs", n);
  pp_jsonw_key(w, "inputs");
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < n; i++)
    pp_jsonw_str(w, paths[i]);
  pp_jsonw_arr_end(w);
  pp_jsonw_obj_end(w);
}

static void json_stats(pp_jsonw *w, const char *k, size_t n, double med,
                       double p99) {
  pp_jsonw_key(w, k);
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_uint(w, "n", n);
  kv_num(w, "median", med);
  kv_num(w, "p99", p99);
  pp_jsonw_obj_end(w);
}

static int write_json(FILE *f, const diff_result *d) {
  const diff_opts *o = d->o;
  pp_jsonw w;
  pp_jsonw_init(&w, f);
  pp_jsonw_obj_begin(&w);
  pp_jsonw_kv_str(&w, "schema", "pipeprof.diff");
  pp_jsonw_kv_int(&w, "schema_version", 1);
  pp_jsonw_key(&w, "generator");
  pp_jsonw_obj_begin(&w);
  pp_jsonw_kv_str(&w, "name", "pipeprof");
  pp_jsonw_kv_str(&w, "version", pp_version_string());
  pp_jsonw_obj_end(&w);
  kv_num(&w, "threshold", o->threshold);
  kv_num(&w, "alpha", o->alpha);
  pp_jsonw_kv_str(&w, "mode", d->per_run ? "per_run" : "samples");
  json_side(&w, "base", o->base, o->nbase);
  json_side(&w, "new", o->cur, o->ncur);
  pp_jsonw_kv_bool(&w, "regression", d->count[V_WORSE] > 0);
  pp_jsonw_key(&w, "counts");
  pp_jsonw_obj_begin(&w);
  for (int v = 0; v < V_COUNT_; v++)
    pp_jsonw_kv_uint(&w, verdict_keys[v], d->count[v]);
  pp_jsonw_obj_end(&w);
  pp_jsonw_key(&w, "rows");
  pp_jsonw_arr_begin_lines(&w);
  for (size_t i = 0; i < d->nrows; i++) {
    const row *r = &d->rows[i];
    int both = r->nb && r->nn;
    pp_jsonw_obj_begin(&w);
    pp_jsonw_kv_str(&w, "name", r->name);
    pp_jsonw_kv_str(&w, "kind", kind_names[r->kind]);
    pp_jsonw_kv_str(&w, "unit", r->kind == K_SAMPLED ? "" : "ns");
    json_stats(&w, "base", r->nb, r->base_med, r->base_p99);
    json_stats(&w, "new", r->nn, r->new_med, r->new_p99);
    kv_num(&w, "median_change", r->c.rel_med);
    kv_num(&w, "p99_change", r->c.rel_p99);
    pp_jsonw_key(&w, "shift");
    if (both) {
      pp_jsonw_obj_begin(&w);
      kv_num(&w, "estimate", r->c.hl.shift);
      kv_num(&w, "lo", r->c.hl.lo);
      kv_num(&w, "hi", r->c.hl.hi);
      kv_num(&w, "confidence", r->c.hl.confidence);
      kv_num(&w, "relative", r->c.rel_shift);
      kv_num(&w, "relative_lo", r->c.rel_lo);
      kv_num(&w, "relative_hi", r->c.rel_hi);
      pp_jsonw_obj_end(&w);
    } else {
      pp_jsonw_null(&w);
    }
    pp_jsonw_key(&w, "mann_whitney");
    if (both) {
      pp_jsonw_obj_begin(&w);
      kv_num(&w, "u", r->c.mw.u);
      kv_num(&w, "p", r->c.mw.p);
      pp_jsonw_kv_bool(&w, "exact", r->c.mw.exact);
      pp_jsonw_obj_end(&w);
    } else {
      pp_jsonw_null(&w);
    }
    pp_jsonw_key(&w, "ks");
    if (both) {
      pp_jsonw_obj_begin(&w);
      kv_num(&w, "d", r->c.ks_d);
      kv_num(&w, "p", r->c.p_ks);
      pp_jsonw_obj_end(&w);
    } else {
      pp_jsonw_null(&w);
    }
    kv_num(&w, "p", r->c.p);
    pp_jsonw_kv_str(&w, "verdict", verdict_keys[r->v]);
    pp_jsonw_key(&w, "verdict_basis");
    if (r->v == V_WORSE || r->v == V_BETTER || r->v == V_HIGHER ||
        r->v == V_LOWER)
      pp_jsonw_str(&w, r->c.by_p99 ? "p99" : "median");
    else
      pp_jsonw_null(&w);
    pp_jsonw_key(&w, "need_per_side");
    if (r->v == V_NEED_MORE)
      pp_jsonw_uint(&w, r->c.need);
    else
      pp_jsonw_null(&w);
    pp_jsonw_obj_end(&w);
  }
  pp_jsonw_arr_end(&w);
  pp_jsonw_obj_end(&w);
  pp_jsonw_putc(&w, '\n');
  return pp_jsonw_finish(&w);
}

static int write_result(const diff_result *d) {
  const char *out = d->o->out;
  int to_stdout = !out || strcmp(out, "-") == 0;
  FILE *f = to_stdout ? stdout : fopen(out, "w");
  if (!f) {
    fprintf(stderr, "pipeprof diff: cannot create %s: %s\n", out,
            strerror(errno));
    return -1;
  }
  int rc;
  switch (d->o->format) {
  case FMT_JSON:
    rc = write_json(f, d);
    break;
  case FMT_MARKDOWN:
    rc = write_markdown(f, d);
    break;
  default:
    rc = write_table(f, d);
    break;
  }
  if (fflush(f) != 0 || ferror(f))
    rc = -1;
  if (!to_stdout && fclose(f) != 0)
    rc = -1;
  if (rc != 0) {
    fprintf(stderr, "pipeprof diff: cannot write %s\n",
            to_stdout ? "standard output" : out);
    return -1;
  }
  return 0;
}

/* ---- the command -------------------------------------------------------- */

int pp_cli_diff(int argc, char **argv) {
  diff_opts o = {.threshold = 0.05, .alpha = 0.05, .format = FMT_TABLE};
  int rc = parse_args(argc, argv, &o);
  if (rc >= 0) {
    pp__free(o.metrics);
    return rc;
  }
  side sb = {0}, sn = {0};
  row *rows = NULL;
  size_t nrows = 0;
  rc = EXIT_USAGE;
  for (size_t i = 0; i < o.nbase; i++)
    if (load_input(&sb, o.base[i], !o.per_run) != 0)
      goto done;
  for (size_t i = 0; i < o.ncur; i++)
    if (load_input(&sn, o.cur[i], !o.per_run) != 0)
      goto done;
  int per_run = o.per_run || sb.no_raw || sn.no_raw;
  if (build_rows(&sb, &sn, per_run, &o, &rows, &nrows) != 0) {
    fputs("pipeprof diff: out of memory\n", stderr);
    goto done;
  }
  if (!nrows) {
    if (o.nmetrics)
      fprintf(stderr,
              "pipeprof diff: nothing to compare: no zone, range "
              "or sampled metric matches --metric '%s'\n",
              o.metrics[0]);
    else
      fputs("pipeprof diff: nothing to compare: the inputs hold no zones, "
            "ranges or sys.*/proc.* samples\n",
            stderr);
    goto done;
  }
  diff_result d = {.o = &o,
                   .rows = rows,
                   .nrows = nrows,
                   .per_run = per_run,
                   .runs_base = sb.runs,
                   .runs_new = sn.runs};
  for (size_t i = 0; i < nrows; i++)
    d.count[rows[i].v]++;
  if (write_result(&d) != 0)
    goto done;
  rc = d.count[V_WORSE] ? EXIT_REGRESSION : EXIT_OK;
done:
  pp__free(rows);
  set_free(&sb.raw);
  set_free(&sb.run);
  set_free(&sn.raw);
  set_free(&sn.run);
  pp__free(o.base);
  pp__free(o.metrics);
  return rc;
}
