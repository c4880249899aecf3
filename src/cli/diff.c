/* SPDX-License-Identifier: MIT */
/*
 * `pipeprof diff [options] BASE... -- NEW...`: compare two sets of runs and
 * decide, for the run's wall time, CPU time and max RSS, per zone, request
 * range, sampled system metric and cumulative counter, whether the new runs
 * are worse, better, unchanged, or too few to tell. Each input is a
 * .pptrace file, a `pipeprof run` directory or a summary JSON; several
 * inputs on one side are repetitions (runs) of the same experiment.
 *
 * With two or more runs on each side (or an input without raw samples, or
 * --per-run) every row compares one figure per run: a zone's median and
 * p99 in that run, a gauge's median sample, the run figures and counter
 * totals as they are; the exact Mann-Whitney test then accounts for the
 * variation between runs. With one run on a side, zones, ranges and gauges
 * are compared on their raw values pooled over the side's runs (tests that
 * ignore between-run variation, and the output says so), and the per-run
 * rows have one value on that side: no test, the minimum effect alone
 * decides. The statistics are in src/analyze/stat_tests.c; the verdict
 * rules, exit codes and the JSON schema are specified in docs/diff.md.
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

#include "analyze/analysis.h"
#include "analyze/reservoir.h"
#include "analyze/run_tree.h"
#include "analyze/stat_tests.h"
#include "analyze/system.h"
#include "cli.h"
#include "units.h"
#include "export/jsonw.h"
#include "format/pptrace.h"
#include "internal.h"
#include "metrics/registry.h"
#include "model/trace.h"
#include "pair/intervals.h"
#include "pair/zones.h"
#include "pipeprof.h"

int pp_cli_diff(int argc, char **argv);
int pp_cli_diff_check_args(int argc, char **argv);

enum { EXIT_OK = 0, EXIT_REGRESSION = 1, EXIT_USAGE = 2 };

static const char diff_usage[] =
    "usage: pipeprof diff [options] BASE NEW\n"
    "       pipeprof diff [options] BASE... -- NEW...\n"
    "\n"
    "Compare runs and gate CI. Rows: the run's wall time, CPU time (user +\n"
    "system) and max RSS; per zone and request range the median and p99;\n"
    "sampled system metrics (sys.*, proc.*); cumulative counters (*_total,\n"
    "proc.cpu_*_s) as totals and rates per second. Each input is a\n"
    ".pptrace file, a `pipeprof run` directory or a summary JSON; several\n"
    "inputs per side are repetitions (runs).\n"
    "\n"
    "Verdicts: worse, better, no change, need more samples (sampled\n"
    "metrics and counters: higher, lower). With several runs per side\n"
    "(2 or more on each) every row compares per-run figures (a zone's\n"
    "per-run median) with the exact Mann-Whitney test: decisions need 4\n"
    "runs per side at alpha 0.05, 5 are recommended. With one run on a\n"
    "side, zone and range rows test that run's instances, which ignores\n"
    "run-to-run variation, and run figures get no test at all: the\n"
    "minimum effect alone decides. Either way a row is worse only when it\n"
    "grew by at least the minimum effect, and, for memory, by 1 MiB at\n"
    "least, for a run's wall or CPU time by 1 ms at least. Host-wide\n"
    "metrics (sys.*) are not the program's and are left out unless --host\n"
    "(or --metric) asks for them; per-thread series pair by thread name.\n"
    "\n"
    "  --min-effect PCT  smallest change that counts, in percent: 5 or 5%\n"
    "                    (default 5)\n"
    "  --threshold T     the same as a fraction or percentage: 0.05 or 5%\n"
    "  --alpha A         significance level, 0 < A <= 0.5 (default 0.05)\n"
    "  --format F        table (default), markdown (for a PR comment) or\n"
    "                    json\n"
    "  --metric NAME     only rows whose name contains NAME (repeatable)\n"
    "  --host            also compare host-wide metrics (sys.*)\n"
    "  --per-run         one figure per run (median and p99) even with one\n"
    "                    run on a side; decisions need >= 4 runs per side\n"
    "                    at alpha 0.05 (one run per side: the minimum\n"
    "                    effect alone decides)\n"
    "  -o, --output F    write to F instead of standard output\n"
    "\n"
    "Exit status: 0 no row is worse, 1 at least one row (wall time, CPU\n"
    "time, max RSS, a zone or a range) is worse, 2 usage or input error.\n";

/* ---- options ---------------------------------------------------------- */

typedef enum out_format { FMT_TABLE, FMT_MARKDOWN, FMT_JSON } out_format;

typedef struct diff_opts {
  double threshold, alpha;
  out_format format;
  const char **metrics;
  size_t nmetrics;
  const char *out;
  int per_run;              /* --per-run */
  int host;                 /* --host: compare host-wide metrics too */
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

/* "5", "5%" or "2.5" (percent) -> 0.05, 0.05, 0.025; -1 when malformed,
 * negative, not finite or above 1000%. */
static int parse_min_effect(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s)
    return -1;
  if (*end == '%')
    end++;
  if (*end || !(v >= 0 && v <= 1000))
    return -1;
  *out = v / 100;
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
    } else if ((v = opt_value(argc, argv, &i, "--min-effect", NULL,
                              &missing))) {
      if (missing)
        rc = usage("%s needs a value (e.g. 5 for 5%%)", a);
      else if (parse_min_effect(v, &o->threshold) != 0)
        rc = usage("bad --min-effect '%s' (a percentage from 0 to 1000, "
                   "like 5 or 5%%)",
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
    } else if (strcmp(a, "--host") == 0) {
      o->host = 1;
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

/* Row kinds, in table order. Run figures, zones and ranges gate (worse /
 * better); sampled metrics and cumulative counters only read higher /
 * lower, since their direction has no fixed meaning. */
typedef enum row_kind {
  K_RUN,     /* wall time, CPU time, max RSS: one value per run */
  K_ZONE,    /* zone durations */
  K_RANGE,   /* closed range durations */
  K_SAMPLED, /* sys.* / proc.* gauges: their sample values */
  K_TOTAL,   /* cumulative sys.* / proc.* counters: the run's total */
  K_RATE     /* the same per second of the run's wall time */
} row_kind;
static const char *const kind_names[] = {"run",     "zone",  "range",
                                         "sampled", "total", "rate"};

static int kind_gates(row_kind k) {
  return k == K_RUN || k == K_ZONE || k == K_RANGE;
}

/* Kinds with one value per run whatever the mode. */
static int kind_per_run(row_kind k) {
  return k == K_RUN || k == K_TOTAL || k == K_RATE;
}

/* The run figures, in table order. */
static const char *const run_fig_names[] = {"wall time", "CPU time", "max RSS"};
static const char *const run_fig_missing[] = {
    "the inputs hold neither run.wall_ns (pipeprof run) nor timed events",
    "the inputs hold no rusage (pipeprof run), proc.cpu_*_s samples or "
    "process_cpu_ns",
    "the inputs hold neither run.maxrss_bytes (pipeprof run) nor proc.rss_* "
    "samples (PIPEPROF_SAMPLE_HZ)"};
#define N_RUN_FIGS 3

/* Values kept of one zone, range or gauge per run and per side: a uniform
 * sample of at most this many (analyze/reservoir.h), every value while
 * there are no more (docs/diff.md). 128 KiB each. */
#define DIFF_SAMPLE_CAP 16384
/* Ranges open at once that one input's read follows (pair/intervals.h):
 * 48 bytes each, the table at most 3/4 full: 16 MiB at most. */
#define DIFF_RANGES_OPEN 262144

/* The values of one metric on one side. */
typedef struct series {
  char *name;
  row_kind kind;
  const char *unit; /* "ns", "bytes", "s", "" (static) */
  const char *src;  /* run figures: where the first value came from */
  double *v;        /* raw values (from res), or per-run median */
  size_t n, cap;
  pp_reservoir res; /* raw values while collected (cap 0: none) */
  uint64_t seen;    /* raw values: how many the sample stands for */
  int sampled;      /* per-run values: one came from a sample */
  double *p99;      /* per-run p99 (per-run values) */
  size_t np99, cap99;
  size_t last_run;     /* per-run values: run that gave the last value, +1 */
  uint64_t last_count; /* its instance count (sites sharing a name) */
} series;

typedef struct series_set {
  series *s;
  size_t n, cap;
} series_set;

typedef struct side {
  series_set raw, run; /* raw samples pooled over runs; values per run */
  size_t runs;
  int no_raw; /* an input had no raw samples */
} side;

static void set_free(series_set *set) {
  for (size_t i = 0; i < set->n; i++) {
    pp_reservoir_free(&set->s[i].res);
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

static const char *default_unit(row_kind k) {
  return k == K_ZONE || k == K_RANGE ? "ns" : "";
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
  s->unit = default_unit(k);
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

/* One run's median (or only value) and p99 of a metric; of the sites
 * sharing a name within a run, the one with the most instances. Returns
 * the series, or NULL when out of memory. */
static series *add_run_value(series_set *set, row_kind k, size_t run,
                             const char *name, uint64_t count, double p50,
                             double p99) {
  long i = set_get(set, k, name);
  if (i < 0)
    return NULL;
  series *s = &set->s[i];
  if (s->last_run == run + 1) {
    if (count > s->last_count && s->n && s->np99) {
      s->v[s->n - 1] = p50;
      s->p99[s->np99 - 1] = p99;
      s->last_count = count;
    }
    return s;
  }
  if (push(&s->v, &s->n, &s->cap, p50) ||
      push(&s->p99, &s->np99, &s->cap99, p99))
    return NULL;
  s->last_run = run + 1;
  s->last_count = count;
  return s;
}

/* The registry row of site loc when it is a library metric of the machine
 * or the process tree (the sys.* and proc.* rows), the sampled metrics
 * diff compares; else PP_METRIC_NONE. The site's kind decides
 * (analyze/system.h): a user counter named "sys.cpu.busy_pct" is a user
 * counter, and user counters are not compared. */
static pp_metric_id sampled_metric(const pp_trace *t, uint32_t mkind,
                                   uint32_t loc) {
  pp_metric_id id = pp_loc_metric(t, loc, mkind, NULL, NULL, NULL);
  if (id == PP_METRIC_NONE)
    return id;
  pp_metric_group g = pp_metric_def_of(id)->group;
  return pp_metric_group_is_host(g) || g == PP_GROUP_PROCESS ? id
                                                             : PP_METRIC_NONE;
}

/* Is a library metric a running total (registry kind total: page faults,
 * context switches, disk bytes, throttle events, the tree's CPU seconds)
 * rather than a level? */
static int is_total(pp_metric_id id) {
  return pp_metric_def_of(id)->kind == PP_METRIC_TOTAL;
}

/* A seed for the sample of (k, name): the same input gives the same
 * sample every time (FNV-1a of the name, mixed with the kind and salt). */
static uint64_t seed_of(row_kind k, const char *name, uint64_t salt) {
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    h = (h ^ *p) * UINT64_C(0x100000001b3);
  return h ^ ((uint64_t)k << 56) ^ (salt * UINT64_C(0x9E3779B97F4A7C15));
}

/* ---- the read: samples taken as events stream by -------------------------
 * The tap (pp_cli_load_tap) sees every event of every file of an input,
 * sites and threads numbered as in the loaded trace: zones are paired per
 * thread by pair/zones.h (a zone closed without its end has no duration
 * and is left out, as the report leaves it out), ranges across threads by
 * pair/intervals.h, and library counters are followed per site in the
 * order the events come (each thread's in recording order). Each site
 * keeps a bounded sample of its values; nothing else grows with the
 * trace. */

typedef struct loc_acc {
  pp_reservoir zone, range, sampled;
  int64_t iv;
  double fv;
  int is_float;
  int named; /* counters: -1 not looked at, 0 no library metric's name */
} loc_acc;

typedef struct diff_tap {
  loc_acc *locs;
  size_t nlocs, cap_locs;
  pp_zone_stack *stacks; /* by thread index */
  size_t nstacks, cap_stacks;
  pp_pair_counts pc;
  pp_id_pairs ranges;
  uint64_t salt;
  int oom;
} diff_tap;

static void tap_init(diff_tap *tp, uint64_t salt) {
  memset(tp, 0, sizeof *tp);
  pp__idpairs_init(&tp->ranges, DIFF_RANGES_OPEN);
  tp->salt = salt;
}

static void tap_free(diff_tap *tp) {
  for (size_t i = 0; i < tp->nlocs; i++) {
    pp_reservoir_free(&tp->locs[i].zone);
    pp_reservoir_free(&tp->locs[i].range);
    pp_reservoir_free(&tp->locs[i].sampled);
  }
  for (size_t i = 0; i < tp->nstacks; i++)
    pp__zstack_free(&tp->stacks[i]);
  pp__free(tp->locs);
  pp__free(tp->stacks);
  pp__idpairs_free(&tp->ranges);
}

static loc_acc *tap_loc(diff_tap *tp, uint32_t loc) {
  if (loc >= tp->nlocs) {
    if (pp__grow((void **)&tp->locs, &tp->cap_locs, (size_t)loc + 1,
                 sizeof *tp->locs))
      return NULL;
    for (size_t i = tp->nlocs; i <= loc; i++) {
      loc_acc *l = &tp->locs[i];
      memset(l, 0, sizeof *l);
      uint64_t seed = tp->salt * 3 + i * UINT64_C(0x2545F4914F6CDD1D);
      pp_reservoir_init(&l->zone, DIFF_SAMPLE_CAP, seed);
      pp_reservoir_init(&l->range, DIFF_SAMPLE_CAP, seed + 1);
      pp_reservoir_init(&l->sampled, DIFF_SAMPLE_CAP, seed + 2);
      l->named = -1;
    }
    tp->nlocs = (size_t)loc + 1;
  }
  return &tp->locs[loc];
}

static void tap_zone_closed(void *ctx, const pp_zone_closed *z) {
  diff_tap *tp = ctx;
  if (!pp__zone_counts(z))
    return;
  loc_acc *l = tap_loc(tp, (uint32_t)z->site);
  if (!l || pp_reservoir_add(&l->zone, (double)z->dur) != 0)
    tp->oom = 1;
}

static void tap_zone(diff_tap *tp, uint32_t thread, const pp_event *e) {
  if (thread >= tp->nstacks) {
    if (pp__grow((void **)&tp->stacks, &tp->cap_stacks, (size_t)thread + 1,
                 sizeof *tp->stacks)) {
      tp->oom = 1;
      return;
    }
    for (size_t i = tp->nstacks; i <= thread; i++)
      pp__zstack_init(&tp->stacks[i]);
    tp->nstacks = (size_t)thread + 1;
  }
  pp_zone_stack *st = &tp->stacks[thread];
  if (e->type == PPT_EV_ZONE_BEGIN) {
    if (pp__zstack_begin_fast(st, e->loc, e->ts, 0) != 0)
      (void)pp__zstack_begin(st, e->loc, e->ts, 0, &tp->pc);
    return;
  }
  pp_zone_closed z;
  if (pp__zstack_end_fast(st, e->loc, e->ts, &tp->pc, &z) == 0)
    tap_zone_closed(tp, &z);
  else
    pp__zstack_end(st, e->loc, e->ts, &tp->pc, tap_zone_closed, tp);
  pp__zstack_trim(st);
}

static void tap_range(diff_tap *tp, const pp_trace *t, uint32_t thread,
                      const pp_event *e) {
  pp_half h = {e->v.id, e->ts,
               e->loc,  t->threads[thread].tid,
               0,       e->type == PPT_EV_RANGE_END},
          b, x;
  if (pp__idpairs_put(&tp->ranges, &h, &b, &x) != 1)
    return; /* kept, id 0, or no room (counted in lost) */
  loc_acc *l = tap_loc(tp, (uint32_t)b.cookie);
  double d = x.ts < b.ts ? 0 : (double)(x.ts - b.ts);
  if (!l || pp_reservoir_add(&l->range, d) != 0)
    tp->oom = 1;
}

/* A counter's value after each event, for sites named like a library
 * metric (whether the site is one, its kind says once the whole input is
 * read: collect_samples). */
static void tap_counter(diff_tap *tp, const pp_trace *t, const pp_event *e) {
  loc_acc *l = tap_loc(tp, e->loc);
  if (!l) {
    tp->oom = 1;
    return;
  }
  if (l->named < 0)
    l->named = pp_metric_lookup(pp_trace_loc_name(t, e->loc), NULL, NULL,
                                NULL) != PP_METRIC_NONE;
  if (!l->named)
    return;
  if (e->type == PPT_EV_COUNTER_SET) {
    l->iv = e->v.i;
    l->is_float = 0;
  } else if (e->type == PPT_EV_COUNTER_ADD) {
    if (l->is_float)
      l->fv += (double)e->v.i;
    else
      l->iv = (int64_t)((uint64_t)l->iv + (uint64_t)e->v.i);
  } else {
    l->fv = e->v.f;
    l->is_float = 1;
  }
  double val = l->is_float ? l->fv : (double)l->iv;
  if (isfinite(val) && pp_reservoir_add(&l->sampled, val) != 0)
    tp->oom = 1;
}

static int tap_event(void *arg, const pp_trace *t, uint32_t thread,
                     const pp_event *e) {
  diff_tap *tp = arg;
  if (e->loc >= t->nlocs)
    return 0;
  switch (e->type) {
  case PPT_EV_ZONE_BEGIN:
  case PPT_EV_ZONE_END:
    tap_zone(tp, thread, e);
    break;
  case PPT_EV_RANGE_BEGIN:
  case PPT_EV_RANGE_END:
    tap_range(tp, t, thread, e);
    break;
  case PPT_EV_COUNTER_SET:
  case PPT_EV_COUNTER_ADD:
  case PPT_EV_COUNTER_SETF:
    tap_counter(tp, t, e);
    break;
  default:
    break;
  }
  return tp->oom ? -1 : 0;
}

/* The samples of one input by name (sites sharing a name pooled into one
 * sample), from the tap, into set. */
static int collect_samples(series_set *set, const pp_analysis *a,
                           diff_tap *tp) {
  const pp_trace *t = a->trace;
  uint32_t mkind = pp_trace_metric_kind(t);
  /* thread ids differ from run to run: per-thread series pair by the
   * thread's name (threads of one name pooled) */
  pp_run_tree rt;
  int have_rt = pp_run_tree_get(t, a, &rt) == 0;
  char tname[PP_SLO_NAME_MAX + 32];
  int rc = 0;
  for (size_t i = 0; i < tp->nlocs && i < t->nlocs && !rc; i++) {
    loc_acc *l = &tp->locs[i];
    const char *name = pp_trace_loc_name(t, (uint32_t)i);
    long tid;
    if (have_rt && pp_metric_lookup(name, &tid, NULL, NULL) ==
                       PP_METRIC_PROC_THREAD_CPU) {
      const pp_run_ent *e = pp_run_tree_thread(&rt, (uint32_t)tid);
      if (e && e->comm[0]) {
        snprintf(tname, sizeof tname, "proc.thread.%.100s.cpu_pct", e->comm);
        name = tname;
      }
    }
    struct {
      pp_reservoir *r;
      row_kind k;
    } parts[3] = {
        {&l->zone, K_ZONE}, {&l->range, K_RANGE}, {&l->sampled, K_SAMPLED}};
    for (int j = 0; j < 3; j++) {
      if (!parts[j].r->seen)
        continue;
      const char *unit = default_unit(parts[j].k);
      if (parts[j].k == K_SAMPLED) {
        pp_metric_id id = sampled_metric(t, mkind, (uint32_t)i);
        if (id == PP_METRIC_NONE || is_total(id))
          continue; /* a user counter, or a running total */
        if (pp_metric_def_of(id)->unit == PP_UNIT_BYTES)
          unit = "bytes";
      }
      long k = set_get(set, parts[j].k, name);
      if (k < 0) {
        rc = -1;
        break;
      }
      series *s = &set->s[k];
      s->unit = unit;
      if (!s->res.cap)
        pp_reservoir_init(&s->res, DIFF_SAMPLE_CAP,
                          seed_of(parts[j].k, name, tp->salt));
      if (pp_reservoir_merge(&s->res, parts[j].r) != 0) {
        rc = -1;
        break;
      }
    }
  }
  if (have_rt)
    pp_run_tree_free(&rt);
  return rc;
}

/* One input's samples: pooled into sd->raw (when keep_raw), and its median
 * and p99 per metric (of the sample: exact while it holds every value)
 * into sd->run. */
static int collect_trace_raw(side *sd, size_t run, series_set *one,
                             int keep_raw) {
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < one->n; i++) {
    series *s = &one->s[i];
    if (!s->res.n)
      continue;
    if (keep_raw) {
      long k = set_get(&sd->raw, s->kind, s->name);
      if (k < 0) {
        rc = -1;
        break;
      }
      series *d = &sd->raw.s[k];
      d->unit = s->unit;
      if (!d->res.cap)
        pp_reservoir_init(&d->res, DIFF_SAMPLE_CAP,
                          seed_of(s->kind, s->name, 0));
      if (pp_reservoir_merge(&d->res, &s->res) != 0) {
        rc = -1;
        break;
      }
    }
    pp_stat_sort(s->res.v, s->res.n);
    series *r = add_run_value(&sd->run, s->kind, run, s->name, s->res.seen,
                              pp_stat_median(s->res.v, s->res.n),
                              pp_stat_quantile(s->res.v, s->res.n, 0.99));
    if (r) {
      r->unit = s->unit;
      r->sampled |= !pp_reservoir_complete(&s->res);
    } else
      rc = -1;
  }
  return rc;
}

/* The pooled samples become the series' values (sorted later). */
static void raw_values(series_set *set) {
  for (size_t i = 0; i < set->n; i++) {
    series *s = &set->s[i];
    if (!s->res.cap || s->v)
      continue;
    s->v = s->res.v;
    s->n = s->cap = s->res.n;
    s->seen = s->res.seen;
    s->res.v = NULL;
    pp_reservoir_free(&s->res);
  }
}

/* Zones of a trace without raw samples (stats mode): the histograms'
 * p50 and p99. */
static int collect_runs_trace(series_set *set, size_t run,
                              const pp_analysis *a) {
  const pp_trace *t = a->trace;
  for (size_t i = 0; i < a->prof.nzones; i++) {
    const pp_zone_stats *z = &a->prof.zones[i];
    if (!z->count)
      continue;
    if (!add_run_value(set, K_ZONE, run, pp_trace_loc_name(t, z->loc), z->count,
                       (double)pp_hist_percentile(&z->hist, 50),
                       (double)pp_hist_percentile(&z->hist, 99)))
      return -1;
  }
  return 0;
}

/* A run figure or counter total: one value for this run. */
static int add_fig(series_set *set, row_kind k, size_t run, const char *name,
                   double v, const char *unit, const char *src) {
  if (!isfinite(v))
    return 0;
  series *s = add_run_value(set, k, run, name, 1, v, v);
  if (!s)
    return -1;
  s->unit = unit;
  if (!s->src)
    s->src = src;
  else if (src && strcmp(s->src, src) != 0)
    s->src = "mixed";
  return 0;
}

static int meta_num(const pp_trace *t, const char *key, double *out) {
  double v;
  if (!pp_trace_meta_num(t, key, &v) || v < 0)
    return 0;
  *out = v;
  return 1;
}

/* The series of library metric id, or NULL. */
static const pp_counter_stats *metric(const pp_analysis *a, uint32_t mkind,
                                      pp_metric_id id) {
  const pp_trace *t = a->trace;
  for (size_t i = 0; i < a->prof.ncounters; i++)
    if (a->prof.counters[i].samples &&
        pp_loc_metric(t, a->prof.counters[i].loc, mkind, NULL, NULL, NULL) ==
            id)
      return &a->prof.counters[i];
  return NULL;
}

/* Units of a running total, from the registry. */
static const char *total_unit(pp_metric_id id) {
  switch (pp_metric_def_of(id)->unit) {
  case PP_UNIT_BYTES:
    return "bytes";
  case PP_UNIT_SECONDS:
    return "s";
  case PP_UNIT_MILLISECONDS:
    return "ms";
  default:
    return "";
  }
}

/* The run's wall time, CPU time, max RSS and cumulative counters (as
 * totals and rates per second of wall time); docs/diff.md says where each
 * comes from. */
static int collect_run_figs(series_set *set, size_t run, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  double wall = NAN, v, u, sy;
  if (meta_num(t, "run.wall_ns", &v)) {
    wall = v;
    if (add_fig(set, K_RUN, run, "wall time", v, "ns", "pipeprof run"))
      return -1;
  } else if (a->prof.wall_ns > 0) {
    wall = (double)a->prof.wall_ns;
    if (add_fig(set, K_RUN, run, "wall time", wall, "ns",
                "trace span (first to last event)"))
      return -1;
  }
  uint32_t mkind = pp_trace_metric_kind(t);
  const pp_counter_stats *cu = metric(a, mkind, PP_METRIC_PROC_CPU_USER_S);
  const pp_counter_stats *cs = metric(a, mkind, PP_METRIC_PROC_CPU_SYSTEM_S);
  int rc = 0;
  if (meta_num(t, "run.user_ns", &u) && meta_num(t, "run.system_ns", &sy))
    rc = add_fig(set, K_RUN, run, "CPU time", u + sy, "ns",
                 "rusage of the run (user + system)");
  else if (cu && cs)
    rc = add_fig(set, K_RUN, run, "CPU time", (cu->last + cs->last) * 1e9, "ns",
                 "sampled from /proc (user + system)");
  else if (a->prof.process_cpu_ns >= 0)
    rc = add_fig(set, K_RUN, run, "CPU time", (double)a->prof.process_cpu_ns,
                 "ns", "the profiled process at session end (rusage)");
  if (rc)
    return -1;
  const pp_counter_stats *pk = metric(a, mkind, PP_METRIC_PROC_RSS_PEAK);
  const pp_counter_stats *rss = metric(a, mkind, PP_METRIC_PROC_RSS);
  if (meta_num(t, "run.maxrss_bytes", &v))
    rc = add_fig(set, K_RUN, run, "max RSS", v, "bytes",
                 "rusage of the run (largest process)");
  else if (pk)
    rc = add_fig(set, K_RUN, run, "max RSS", pk->max, "bytes",
                 "sampled (process tree peak)");
  else if (rss)
    rc = add_fig(set, K_RUN, run, "max RSS", rss->max, "bytes",
                 "sampled (process tree)");
  if (rc)
    return -1;
  /* Cumulative counters: the process tree's counters start with the tree,
   * so the last value is the run's total; host-wide ones (sys.*) count
   * since boot, so the run's total is their increase. */
  for (size_t i = 0; i < a->prof.ncounters; i++) {
    const pp_counter_stats *c = &a->prof.counters[i];
    const char *name = pp_trace_loc_name(t, c->loc);
    pp_metric_id id = sampled_metric(t, mkind, c->loc);
    if (!c->samples || id == PP_METRIC_NONE || !is_total(id))
      continue;
    int tree = pp_metric_def_of(id)->group == PP_GROUP_PROCESS;
    double total = tree ? c->last : c->last - c->min;
    if (add_fig(set, K_TOTAL, run, name, total, total_unit(id), NULL))
      return -1;
    if (wall > 0) {
      char rname[512];
      snprintf(rname, sizeof rname, "%s per s", name);
      if (add_fig(set, K_RATE, run, rname, total / (wall * 1e-9),
                  total_unit(id), NULL))
        return -1;
    }
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

#ifdef PP_HAVE_JANSSON
/* A non-negative number at obj.key, else NAN. */
static double jnum(json_t *obj, const char *key) {
  json_t *v = json_object_get(obj, key);
  double d = json_is_number(v) ? json_number_value(v) : NAN;
  return isfinite(d) && d >= 0 ? d : NAN;
}

/* Wall time, CPU time and max RSS of a summary JSON (docs/diff.md). */
static int summary_run_figs(series_set *set, size_t run, json_t *root) {
  json_t *sys = json_object_get(root, "system");
  json_t *r = json_object_get(sys, "run");
  json_t *tree = json_object_get(sys, "process_tree");
  double w = jnum(r, "wall_s") * 1e9;
  const char *wsrc = "pipeprof run";
  if (!isfinite(w)) {
    w = jnum(root, "wall_ns");
    wsrc = "trace span (first to last event)";
  }
  if (w > 0 && add_fig(set, K_RUN, run, "wall time", w, "ns", wsrc))
    return -1;
  double cpu = (jnum(r, "user_s") + jnum(r, "system_s")) * 1e9;
  const char *csrc = "rusage of the run (user + system)";
  if (!isfinite(cpu)) {
    cpu = (jnum(tree, "cpu_user_s") + jnum(tree, "cpu_system_s")) * 1e9;
    csrc = "sampled from /proc (user + system)";
  }
  if (add_fig(set, K_RUN, run, "CPU time", cpu, "ns", csrc))
    return -1;
  double rss = jnum(r, "maxrss_bytes");
  if (!isfinite(rss))
    rss = jnum(tree, "maxrss_bytes");
  return add_fig(set, K_RUN, run, "max RSS", rss, "bytes",
                 "rusage of the run (largest process)");
}
#endif

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
                 !add_run_value(
                     set, K_ZONE, run, name, (uint64_t)json_integer_value(c),
                     json_number_value(p50), json_number_value(p99))) {
        fprintf(stderr, "pipeprof diff: out of memory\n");
        rc = -1;
      }
    }
    if (rc == 0 && summary_run_figs(set, run, root) != 0) {
      fprintf(stderr, "pipeprof diff: out of memory\n");
      rc = -1;
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

/* Load one input (a run) into sd: its per-run figures, and its raw
 * samples pooled with the side's other runs when keep_raw. */
static int load_input(side *sd, const char *path, int keep_raw) {
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
  /* Every event streams (no details kept); the tap takes the samples. */
  pp_trace t;
  pp_analysis a;
  diff_tap tp;
  tap_init(&tp, (uint64_t)run + 1);
  if (pp_cli_load_tap(path, &t, &a, 0, tap_event, &tp) != 0) {
    tap_free(&tp);
    return -1;
  }
  int rc, tapped = 1;
  series_set one = {0};
  if (t.from_stats) {
    sd->no_raw = 1;
    rc = collect_runs_trace(&sd->run, run, &a);
  } else {
    rc = collect_samples(&one, &a, &tp);
    uint64_t lost = tp.ranges.c.lost;
    tap_free(&tp); /* before the pooling: one sample at a time */
    tapped = 0;
    if (lost)
      fprintf(stderr,
              "pipeprof diff: note: %s: %llu range begins or ends found "
              "more than %d ranges open at once: those ranges are not "
              "compared\n",
              path, (unsigned long long)lost, DIFF_RANGES_OPEN);
    if (rc == 0)
      rc = collect_trace_raw(sd, run, &one, keep_raw);
  }
  if (rc == 0)
    rc = collect_run_figs(&sd->run, run, &a);
  set_free(&one);
  if (tapped)
    tap_free(&tp);
  pp_analysis_free(&a);
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
  const char *unit, *src;
  size_t nb, nn;   /* values tested (runs for run-level rows) */
  uint64_t ib, in; /* instances they stand for */
  int sampled;     /* values from a sample of the instances */
  pp_compare c;    /* filled when both sides have values */
  double base_med, new_med, base_p99, new_p99; /* also for one side */
  verdict v;
  int runs;    /* the values are one per run */
  int no_test; /* one run on a side: the minimum effect alone decided */
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

/* (n - b) / |b|, also from a zero base (+-inf, or 0 when both are 0). */
static double rel_from(double b, double n) {
  if (!isfinite(b) || !isfinite(n))
    return NAN;
  if (b == n)
    return 0;
  if (b == 0)
    return n > 0 ? INFINITY : -INFINITY;
  return (n - b) / fabs(b);
}

static verdict dir_verdict(row_kind k, int up) {
  if (kind_gates(k))
    return up ? V_WORSE : V_BETTER;
  return up ? V_HIGHER : V_LOWER;
}

/* The smallest absolute change that counts for a row, beside the
 * relative minimum effect: a few percent of a small process's memory or of
 * a short run's times is noise (identical builds of a 4.4 MiB program
 * moved max RSS by 7-9%). 0: none. */
static double min_abs_effect(const row *r) {
  if (strcmp(r->unit, "bytes") == 0)
    return 1048576.0;
  if (r->kind == K_RUN && strcmp(r->unit, "ns") == 0)
    return 1e6;
  return 0;
}

/* Every value of s is 0 (none: 0). */
static int all_zero(const series *s) {
  for (size_t i = 0; s && i < s->n; i++)
    if (s->v[i] != 0)
      return 0;
  return s && s->n;
}

/* A worse or better verdict whose change is below the row's minimum
 * absolute effect is no change. */
static void apply_min_abs(row *r) {
  double m = min_abs_effect(r);
  if (m > 0 && (r->v == V_WORSE || r->v == V_BETTER || r->v == V_HIGHER ||
                r->v == V_LOWER) &&
      fabs(r->new_med - r->base_med) < m)
    r->v = V_NO_CHANGE;
}

static int compute_row(row *r, series *b, series *c, int runs,
                       const diff_opts *o) {
  series *any = b ? b : c;
  memset(r, 0, sizeof *r);
  r->name = any->name;
  r->kind = any->kind;
  r->unit = any->unit;
  r->src = any->src;
  r->runs = runs;
  r->nb = b ? b->n : 0;
  r->nn = c ? c->n : 0;
  r->ib = b && b->seen > b->n ? b->seen : r->nb;
  r->in = c && c->seen > c->n ? c->seen : r->nn;
  r->sampled =
      r->ib > r->nb || r->in > r->nn || (b && b->sampled) || (c && c->sampled);
  side_stats(b, runs, &r->base_med, &r->base_p99);
  side_stats(c, runs, &r->new_med, &r->new_p99);
  if (!r->nb || !r->nn) {
    r->v = r->nb ? V_ONLY_BASE : V_ONLY_NEW;
    r->c.rel_med = r->c.rel_p99 = r->c.p = NAN;
    return 0;
  }
  if (all_zero(b) && all_zero(c)) { /* nothing to test: the same */
    r->v = V_NO_CHANGE;
    r->c.nb = r->nb;
    r->c.nn = r->nn;
    r->c.rel_med = r->c.rel_p99 = 0;
    r->c.p = r->c.rel_shift = r->c.rel_lo = r->c.rel_hi = NAN;
    r->c.hl.shift = r->c.hl.lo = r->c.hl.hi = NAN;
    return 0;
  }
  if (runs && (r->nb == 1 || r->nn == 1)) {
    /* One run on a side: nothing estimates the run-to-run variation, so
     * no test; the change of the median (or only value) against the
     * minimum effect decides. */
    r->no_test = 1;
    r->c.nb = r->nb;
    r->c.nn = r->nn;
    r->c.base_med = r->base_med;
    r->c.new_med = r->new_med;
    r->c.rel_med = rel_from(r->base_med, r->new_med);
    r->c.rel_p99 = rel_from(r->base_p99, r->new_p99);
    r->c.p = r->c.rel_shift = r->c.rel_lo = r->c.rel_hi = NAN;
    r->c.hl.shift = r->c.hl.lo = r->c.hl.hi = NAN;
    double e = r->c.rel_med;
    if (!isnan(e) && e != 0 && fabs(e) >= o->threshold)
      r->v = dir_verdict(r->kind, e > 0);
    else
      r->v = V_NO_CHANGE;
    /* The wall time of one run measures the machine's load as much as
     * the program (40% of identical single-run pairs beside a CPU hog
     * moved it past 5%, docs/diff.md): with one run per side it is shown
     * as higher or lower, and the CPU time and the zones gate. */
    if (r->kind == K_RUN && strcmp(r->name, "wall time") == 0 &&
        (r->v == V_WORSE || r->v == V_BETTER))
      r->v = r->v == V_WORSE ? V_HIGHER : V_LOWER;
    apply_min_abs(r);
    return 0;
  }
  if (pp_stat_compare(b->v, b->n, c->v, c->n, runs ? b->p99 : NULL, b->np99,
                      runs ? c->p99 : NULL, c->np99, o->threshold, o->alpha,
                      &r->c) != 0)
    return -1;
  switch (r->c.verdict) {
  case PP_VERDICT_WORSE:
    r->v = dir_verdict(r->kind, 1);
    break;
  case PP_VERDICT_BETTER:
    r->v = dir_verdict(r->kind, 0);
    break;
  case PP_VERDICT_NO_CHANGE:
    r->v = V_NO_CHANGE;
    break;
  default:
    r->v = V_NEED_MORE;
    /* Runs: the exact test cannot decide with fewer than min per side,
     * so below that the answer is min, not an extrapolation from an
     * interval that is unbounded anyway. */
    if (runs) {
      size_t min = pp_stat_mw_min_n(o->alpha);
      if (r->c.need < min || (r->nb < min || r->nn < min))
        r->c.need = min;
    }
    break;
  }
  apply_min_abs(r);
  return 0;
}

static int wanted(const diff_opts *o, const char *name) {
  /* the machine's series (sys.*: available memory, load, other programs'
   * CPU) are not the program's: only when asked */
  if (!o->nmetrics)
    return o->host || strncmp(name, "sys.", 4) != 0;
  for (size_t i = 0; i < o->nmetrics; i++)
    if (strstr(name, o->metrics[i]))
      return 1;
  return 0;
}

static int run_fig_index(const char *name) {
  for (int i = 0; i < N_RUN_FIGS; i++)
    if (strcmp(name, run_fig_names[i]) == 0)
      return i;
  return N_RUN_FIGS;
}

static int cmp_row(const void *a, const void *b) {
  const row *x = a, *y = b;
  if (x->kind != y->kind)
    return (int)x->kind - (int)y->kind;
  if (x->kind == K_RUN)
    return run_fig_index(x->name) - run_fig_index(y->name);
  return strcmp(x->name, y->name);
}

/* Rows of the kinds that per_run_kinds selects, from sets b and c. */
static int rows_from(series_set *b, series_set *c, int per_run_kinds, int runs,
                     const diff_opts *o, row *rows, size_t *n) {
  for (size_t i = 0; i < b->n; i++) {
    series *s = &b->s[i];
    if (kind_per_run(s->kind) != per_run_kinds || !wanted(o, s->name))
      continue;
    if (compute_row(&rows[(*n)++], s, set_find(c, s->kind, s->name), runs, o) !=
        0)
      return -1;
  }
  for (size_t i = 0; i < c->n; i++) {
    series *s = &c->s[i];
    if (kind_per_run(s->kind) != per_run_kinds || !wanted(o, s->name) ||
        set_find(b, s->kind, s->name))
      continue;
    if (compute_row(&rows[(*n)++], NULL, s, runs, o) != 0)
      return -1;
  }
  return 0;
}

/* Rows for the union of the two sides' metrics, sorted by kind and name:
 * zones, ranges and gauges from the pooled samples (one run on a side) or
 * the per-run figures (run_level); run figures and counter totals always
 * per run. */
static int build_rows(side *sb, side *sn, int run_level, const diff_opts *o,
                      row **out, size_t *nout) {
  series_set *b = run_level ? &sb->run : &sb->raw;
  series_set *c = run_level ? &sn->run : &sn->raw;
  row *rows = pp__calloc(b->n + c->n + sb->run.n + sn->run.n + 1, sizeof *rows);
  if (!rows)
    return -1;
  size_t n = 0;
  if (rows_from(b, c, 0, run_level, o, rows, &n) != 0 ||
      rows_from(&sb->run, &sn->run, 1, 1, o, rows, &n) != 0) {
    pp__free(rows);
    return -1;
  }
  if (n > 1)
    qsort(rows, n, sizeof *rows, cmp_row);
  *out = rows;
  *nout = n;
  return 0;
}

/* ---- output ------------------------------------------------------------- */

typedef struct diff_result {
  const diff_opts *o;
  row *rows;
  size_t nrows;
  int per_run; /* run-level: rows compare per-run figures */
  int no_raw;  /* because an input had no raw samples */
  size_t runs_base, runs_new;
  size_t count[V_COUNT_];
  const char *unavailable[N_RUN_FIGS]; /* reason, or NULL */
} diff_result;

/* A value for humans: durations ("ns" unit) in ns/us/ms/s with three
 * significant digits, bytes in B/KiB/MiB/GiB, other metrics with four
 * digits and their unit. sign: prefix '+' on positives. */
static void fmt_value(char *buf, size_t len, double v, const char *unit,
                      int sign) {
  if (!isfinite(v)) {
    snprintf(buf, len, "%s", isnan(v) ? "n/a" : v > 0 ? "+inf" : "-inf");
    return;
  }
  const char *plus = sign && v > 0 ? "+" : "";
  char n[48];
  if (strncmp(unit, "bytes", 5) == 0) { /* "bytes", "bytes/s" */
    snprintf(buf, len, "%s%s%s", plus, pp__fmt_bytes(n, sizeof n, v),
             unit + 5);
    return;
  }
  if (strcmp(unit, "ns") == 0) {
    snprintf(buf, len, "%s%s", plus, pp_format_ns(n, sizeof n, v));
    return;
  }
  snprintf(buf, len, "%s%.4g%s%s", plus, v, *unit && *unit != '/' ? " " : "",
           unit);
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
  if (r->no_test) {
    snprintf(buf, len, "no test");
    return;
  }
  if (!isfinite(r->c.rel_shift)) {
    fmt_value(a, sizeof a, r->c.hl.shift, r->unit, 1);
    fmt_value(lo, sizeof lo, r->c.hl.lo, r->unit, 1);
    fmt_value(hi, sizeof hi, r->c.hl.hi, r->unit, 1);
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

static void fmt_verdict(char *buf, size_t len, const row *r) {
  if (r->v == V_NEED_MORE)
    snprintf(buf, len, "need more samples (%zu %s per side)", r->c.need,
             r->runs ? "runs" : "values");
  else
    snprintf(buf, len, "%s%s", verdict_names[r->v],
             r->no_test    ? " (no test)"
             : r->c.by_p99 ? " (p99)"
                           : "");
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

/* How the rows were judged; pre starts each line ("" or "> "). */
static void print_mode_note(FILE *f, const diff_result *d, const char *pre) {
  const diff_opts *o = d->o;
  size_t min = pp_stat_mw_min_n(o->alpha);
  int one_b = d->runs_base == 1, one_n = d->runs_new == 1;
  if (d->per_run)
    fprintf(f,
            "%snote: %s: every row compares one figure per run (zones: the "
            "run's median and p99), each run counting as one sample, with "
            "the exact Mann-Whitney test; a decision needs >= %zu runs per "
            "side at alpha %.3g\n",
            pre,
            o->per_run  ? "--per-run"
            : d->no_raw ? "a summary JSON or stats-mode input has no raw "
                          "samples"
                        : "several runs per side",
            min, o->alpha);
  else
    fprintf(
        f,
        "%snote: one run on a side: zone, range and sampled rows test "
        "that run's instances, which treats them as independent and "
        "ignores run-to-run variation (CPU frequency, placement, other "
        "load); a regression needs p <= alpha and a change >= %.3g%%; for a "
        "run-level test give each side >= %zu runs (5 recommended)\n",
        pre, o->threshold * 100, min);
  if (one_b || one_n)
    fprintf(f,
            "%snote: %s: no significance test possible; threshold %.3g%% "
            "(wall time, CPU time, max RSS, counter totals and rates%s)\n",
            pre,
            one_b && one_n ? "one run per side"
            : one_b        ? "one run on the base side"
                           : "one run on the new side",
            o->threshold * 100, d->per_run ? ", zones" : "");
}

/* Rows whose values are a sample (more instances than DIFF_SAMPLE_CAP on a
 * side): marked '*' in the n column, and said once. */
static void print_sampled(FILE *f, const diff_result *d, const char *star) {
  for (size_t i = 0; i < d->nrows; i++)
    if (d->rows[i].sampled) {
      fprintf(f,
              "%s more instances in a run than the %d values kept per "
              "metric: that row's figures and tests come from a uniform "
              "random sample of %d of them (docs/diff.md)\n",
              star, DIFF_SAMPLE_CAP, DIFF_SAMPLE_CAP);
      return;
    }
}

static void print_unavailable(FILE *f, const diff_result *d, const char *pre) {
  for (int i = 0; i < N_RUN_FIGS; i++)
    if (d->unavailable[i])
      fprintf(f, "%s%s: unavailable: %s\n", pre, run_fig_names[i],
              d->unavailable[i]);
}

#define NCOLS 10

/* The answer first: "verdict: worse (2 of 17 rows: CPU time, decode)" or
 * "verdict: no regression (17 rows; 1 better)". */
static void print_verdict(FILE *f, const diff_result *d) {
  size_t worse = d->count[V_WORSE], better = d->count[V_BETTER];
  if (!worse) {
    fprintf(f, "verdict: no regression (%zu rows", d->nrows);
    if (better)
      fprintf(f, "; %zu better", better);
    fputs(")\n", f);
    return;
  }
  fprintf(f, "verdict: worse (%zu of %zu rows:", worse, d->nrows);
  size_t shown = 0;
  for (size_t i = 0; i < d->nrows && shown < 5; i++)
    if (d->rows[i].v == V_WORSE)
      fprintf(f, "%s %.60s", shown++ ? "," : "", d->rows[i].name);
  fputs(worse > shown ? ", ...)\n" : ")\n", f);
}

static int write_table(FILE *f, const diff_result *d) {
  const diff_opts *o = d->o;
  char conf[16];
  fmt_conf(conf, sizeof conf, o);
  print_verdict(f, d);
  print_inputs(f, "base", o->base, o->nbase);
  print_inputs(f, "new ", o->cur, o->ncur);
  fprintf(f,
          "min effect %.3g%%, alpha %.3g; p = min(Mann-Whitney, "
          "Kolmogorov-Smirnov); shift = Hodges-Lehmann, %s CI\n",
          o->threshold * 100, o->alpha, conf);
  print_mode_note(f, d, "");
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
    snprintf(c[1], sizeof c[1], "%llu/%llu%s", (unsigned long long)r->ib,
             (unsigned long long)r->in, r->sampled ? "*" : "");
    fmt_value(c[2], sizeof c[2], r->base_med, r->unit, 0);
    fmt_value(c[3], sizeof c[3], r->new_med, r->unit, 0);
    fmt_pct(c[4], sizeof c[4], r->c.rel_med);
    fmt_value(c[5], sizeof c[5], r->base_p99, r->unit, 0);
    fmt_value(c[6], sizeof c[6], r->new_p99, r->unit, 0);
    fmt_pct(c[7], sizeof c[7], r->c.rel_p99);
    fmt_shift(c[8], sizeof c[8], r);
    fmt_p(c[9], sizeof c[9], r->c.p);
    fmt_verdict(verd[i + 1], sizeof verd[i + 1], r);
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
  print_sampled(f, d, "*");
  print_unavailable(f, d, "");
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
          "Base: %zu run%s, new: %zu run%s. Min effect %.3g%%, alpha "
          "%.3g; p = min(Mann-Whitney, Kolmogorov-Smirnov); shift = "
          "Hodges-Lehmann estimate with its %s confidence interval, "
          "relative to the base median.\n\n",
          o->nbase, o->nbase == 1 ? "" : "s", o->ncur, o->ncur == 1 ? "" : "s",
          o->threshold * 100, o->alpha, conf);
  print_mode_note(f, d, "> ");
  fputc('\n', f);
  fprintf(f, "| metric | n base / new | median base → new | change | "
             "p99 base → new | change | shift [CI] | p | verdict |\n"
             "|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
  for (size_t i = 0; i < d->nrows; i++) {
    const row *r = &d->rows[i];
    char b[32], n[32], pm[32], b9[32], n9[32], p9[32], sh[128], p[32];
    char v[64];
    fmt_value(b, sizeof b, r->base_med, r->unit, 0);
    fmt_value(n, sizeof n, r->new_med, r->unit, 0);
    fmt_pct(pm, sizeof pm, r->c.rel_med);
    fmt_value(b9, sizeof b9, r->base_p99, r->unit, 0);
    fmt_value(n9, sizeof n9, r->new_p99, r->unit, 0);
    fmt_pct(p9, sizeof p9, r->c.rel_p99);
    fmt_shift(sh, sizeof sh, r);
    fmt_p(p, sizeof p, r->c.p);
    fmt_verdict(v, sizeof v, r);
    fputs("| ", f);
    if (r->kind == K_RANGE)
      fputs("range ", f);
    md_name(f, r->name);
    int bold = r->v == V_WORSE || r->v == V_BETTER;
    fprintf(f,
            " | %llu / %llu%s | %s → %s | %s | %s → %s | %s | %s | %s | "
            "%s%s%s |\n",
            (unsigned long long)r->ib, (unsigned long long)r->in,
            r->sampled ? "\\*" : "", b, n, pm, b9, n9, p9, sh, p,
            bold ? "**" : "", v, bold ? "**" : "");
  }
  fputc('\n', f);
  print_sampled(f, d, "\\*");
  if (d->unavailable[0] || d->unavailable[1] || d->unavailable[2]) {
    print_unavailable(f, d, "- ");
    fputc('\n', f);
  }
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

static void json_stats(pp_jsonw *w, const char *k, size_t n, uint64_t instances,
                       double med, double p99) {
  pp_jsonw_key(w, k);
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_uint(w, "n", n);
  kv_num(w, "median", med);
  kv_num(w, "p99", p99);
  pp_jsonw_kv_uint(w, "instances", instances);
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
  kv_num(&w, "min_effect", o->threshold);
  kv_num(&w, "alpha", o->alpha);
  pp_jsonw_kv_str(&w, "mode", d->per_run ? "per_run" : "samples");
  pp_jsonw_kv_uint(&w, "min_runs_per_side", pp_stat_mw_min_n(o->alpha));
  pp_jsonw_kv_uint(&w, "sample_cap", DIFF_SAMPLE_CAP);
  pp_jsonw_key(&w, "unavailable");
  pp_jsonw_obj_begin(&w);
  for (int i = 0; i < N_RUN_FIGS; i++)
    if (d->unavailable[i])
      pp_jsonw_kv_str(&w, run_fig_names[i], d->unavailable[i]);
  pp_jsonw_obj_end(&w);
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
    int both = r->nb && r->nn && !r->no_test;
    pp_jsonw_obj_begin(&w);
    pp_jsonw_kv_str(&w, "name", r->name);
    pp_jsonw_kv_str(&w, "kind", kind_names[r->kind]);
    pp_jsonw_kv_str(&w, "unit", r->unit);
    if (r->src)
      pp_jsonw_kv_str(&w, "source", r->src);
    pp_jsonw_kv_str(&w, "test",
                    !r->nb || !r->nn ? "none"
                    : r->no_test     ? "none (one run on a side)"
                    : r->runs        ? "runs"
                                     : "within_run");
    json_stats(&w, "base", r->nb, r->ib, r->base_med, r->base_p99);
    json_stats(&w, "new", r->nn, r->in, r->new_med, r->new_p99);
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
      pp_jsonw_str(&w, r->no_test    ? "threshold"
                       : r->c.by_p99 ? "p99"
                                     : "median");
    else
      pp_jsonw_null(&w);
    pp_jsonw_key(&w, "need_per_side");
    if (r->v == V_NEED_MORE)
      pp_jsonw_uint(&w, r->c.need);
    else
      pp_jsonw_null(&w);
    pp_jsonw_kv_bool(&w, "sampled", r->sampled);
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

/* Parse diff's arguments and nothing else (for the CLI-arguments fuzz
 * target): the exit code parsing alone gives (0 for --help, 2 for a usage
 * error, printed as the command prints them), or -1 when they are valid. */
int pp_cli_diff_check_args(int argc, char **argv) {
  diff_opts o = {.threshold = 0.05, .alpha = 0.05, .format = FMT_TABLE};
  int rc = parse_args(argc, argv, &o);
  if (rc < 0)
    pp__free(o.base);
  pp__free(o.metrics);
  return rc;
}

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
  /* Several runs on each side: rows compare per-run figures, and the
   * pooled samples are not needed. */
  int run_level = o.per_run || (o.nbase >= 2 && o.ncur >= 2);
  for (size_t i = 0; i < o.nbase; i++)
    if (load_input(&sb, o.base[i], !run_level) != 0)
      goto done;
  for (size_t i = 0; i < o.ncur; i++)
    if (load_input(&sn, o.cur[i], !run_level) != 0)
      goto done;
  int no_raw = sb.no_raw || sn.no_raw;
  run_level = run_level || no_raw;
  raw_values(&sb.raw);
  raw_values(&sn.raw);
  if (build_rows(&sb, &sn, run_level, &o, &rows, &nrows) != 0) {
    fputs("pipeprof diff: out of memory\n", stderr);
    goto done;
  }
  if (!nrows) {
    if (o.nmetrics)
      fprintf(stderr,
              "pipeprof diff: nothing to compare: no metric matches "
              "--metric '%s'\n",
              o.metrics[0]);
    else
      fputs("pipeprof diff: nothing to compare: the inputs hold no run "
            "figures, zones, ranges or sys.*/proc.* samples\n",
            stderr);
    goto done;
  }
  diff_result d = {.o = &o,
                   .rows = rows,
                   .nrows = nrows,
                   .per_run = run_level,
                   .no_raw = no_raw,
                   .runs_base = sb.runs,
                   .runs_new = sn.runs};
  for (size_t i = 0; i < nrows; i++)
    d.count[rows[i].v]++;
  for (int k = 0; k < N_RUN_FIGS; k++) {
    int have = 0;
    for (size_t i = 0; i < nrows && !have; i++)
      have =
          rows[i].kind == K_RUN && strcmp(rows[i].name, run_fig_names[k]) == 0;
    if (!have && wanted(&o, run_fig_names[k]))
      d.unavailable[k] = run_fig_missing[k];
  }
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
