/* SPDX-License-Identifier: MIT */
/*
 * `pipeprof sweep`: run a command once per value of a parameter (and
 * --repeat times each), profile every run, and compare them: throughput,
 * latency percentiles, energy per item and peak memory per value; the
 * best value under a latency bound; the knee of the throughput curve
 * (docs/cli.md#pipeprof-sweep). What perf_analyzer and model_analyzer do
 * for Triton, for any program that records its work with pipeprof.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "cli.h"
#include "export/html_page.h"
#include "export/jsonw.h"
#include "internal.h"
#include "model/trace.h"
#include "pipeprof/version.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

#define MAX_VALUES 64
#define MAX_REPEAT 100

const char pp_cli_sweep_usage[] =
    "usage: pipeprof sweep --param NAME=V1,V2,... [options] -- CMD [ARGS...]\n"
    "\n"
    "Run CMD once per value (and --repeat times each) with {NAME} in its\n"
    "arguments replaced by the value and PIPEPROF_SWEEP_NAME=value in its\n"
    "environment, profile each run (CMD must record with libpipeprof or\n"
    "the Python binding: PIPEPROF=1 is set), and print per value the\n"
    "throughput, latency percentiles, energy per item and peak memory,\n"
    "the best value under the latency bound, and the knee of the curve.\n"
    "\n"
    "      --param NAME=LIST  the parameter and its values, comma-separated\n"
    "      --latency-bound D  p99 latency bound (ns, us, ms, s; e.g. 50ms)\n"
    "      --repeat N         runs per value, 1..100 (default 1; medians)\n"
    "      --warmup S         leave out the first S seconds of each run\n"
    "      --zone NAME        the zone whose instances are the items and\n"
    "                         whose durations are the latency\n"
    "      --env              CMD has no {NAME}: it reads the variable\n"
    "  -o, --out DIR          where the runs go (default pipeprof-sweep)\n"
    "      --json             print the JSON (DIR/sweep.json) instead\n"
    "\n"
    "Items: completed requests (pp_request_*) when the runs have them, else\n"
    "batched items (pp_batch), else --zone's instances, else frames\n"
    "(PP_FRAME_MARK), else the zone with the most instances.\n";

typedef struct sweep_args {
  char name[64], env[96];
  char *values[MAX_VALUES];
  int nvalues;
  int64_t bound_ns; /* 0: none */
  int repeat;
  double warmup_s;
  const char *zone, *out;
  int json, env_only;
  char **cmd;
  char *list; /* owns values */
} sweep_args;

/* One run's figures. */
typedef struct run_fig {
  int ok;
  char why[512];
  const char *item; /* what an item is */
  const char *latency_of;
  double items, per_s;
  int has_lat;
  double p50, p90, p99; /* ns */
  int has_energy;
  double j_per_item;
  char energy_why[200]; /* a copy: the reason may live in the run's trace,
                           freed after its figures are taken */
  double rss_bytes;
} run_fig;

/* One value's figures: the medians of its runs. */
typedef struct value_fig {
  const char *value;
  int runs_ok, runs;
  run_fig med;
  double per_s_min, per_s_max;
} value_fig;

static int usage(const char *fmt, const char *arg) {
  return pp_cli_usage_error("sweep", fmt, arg);
}

/* "50ms" and the like into ns, above 0. */
static int parse_dur(const char *v, int64_t *ns) {
  return pp__parse_duration(v, strlen(v), ns) == 0 && *ns > 0 ? 0 : -1;
}

static int parse(int argc, char **argv, sweep_args *a) {
  memset(a, 0, sizeof *a);
  a->repeat = 1;
  a->out = "pipeprof-sweep";
  int i = 1;
  for (; i < argc; i++) {
    const char *s = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(s, "--") == 0) {
      i++;
      break;
    } else if (pp_cli_is_help(s)) {
      fputs(pp_cli_sweep_usage, stdout);
      return EXIT_OK;
    } else if (strcmp(s, "--param") == 0) {
      const char *eq = v ? strchr(v, '=') : NULL;
      if (!v || !eq || eq == v || (size_t)(eq - v) >= sizeof a->name)
        return usage("bad --param '%s' (expected NAME=V1,V2,...)", v ? v : "");
      if (a->list)
        return usage("one --param only (got also '%s')", v);
      snprintf(a->name, sizeof a->name, "%.*s", (int)(eq - v), v);
      for (const char *c = a->name; *c; c++)
        if (!(*c == '_' || (*c >= 'a' && *c <= 'z') ||
              (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
          return usage("bad --param name in '%s' (letters, digits, _)", v);
      if (!(a->list = strdup(eq + 1)))
        return EXIT_FAIL;
      char *save = NULL;
      for (char *t = strtok_r(a->list, ",", &save); t;
           t = strtok_r(NULL, ",", &save)) {
        if (a->nvalues == MAX_VALUES)
          return usage("more than 64 values in --param '%s'", v);
        a->values[a->nvalues++] = t;
      }
      if (!a->nvalues)
        return usage("--param '%s' has no values", v);
      i++;
    } else if (strcmp(s, "--latency-bound") == 0) {
      if (!v || parse_dur(v, &a->bound_ns))
        return usage("bad --latency-bound '%s' (e.g. 50ms)", v ? v : "");
      i++;
    } else if (strcmp(s, "--repeat") == 0) {
      char *end;
      long n = v ? strtol(v, &end, 10) : 0;
      if (!v || *end || end == v || n < 1 || n > MAX_REPEAT)
        return usage("bad --repeat '%s' (1 to 100)", v ? v : "");
      a->repeat = (int)n;
      i++;
    } else if (strcmp(s, "--warmup") == 0) {
      char *end;
      double x = v ? strtod(v, &end) : -1;
      if (!v || *end || end == v || !isfinite(x) || x < 0 || x > 86400)
        return usage("bad --warmup '%s' (seconds, 0 or more)", v ? v : "");
      a->warmup_s = x;
      i++;
    } else if (strcmp(s, "--zone") == 0) {
      if (!v || !*v)
        return usage("--zone needs a name%s", "");
      a->zone = argv[++i];
    } else if (strcmp(s, "-o") == 0 || strcmp(s, "--out") == 0) {
      if (!v)
        return usage("%s needs a directory", s);
      a->out = argv[++i];
    } else if (strcmp(s, "--json") == 0) {
      a->json = 1;
    } else if (strcmp(s, "--env") == 0) {
      a->env_only = 1;
    } else {
      return usage("unknown option '%s'", s);
    }
  }
  if (!a->list)
    return usage("--param NAME=V1,V2,... is required%s", "");
  if (i >= argc)
    return usage("missing -- CMD%s", "");
  a->cmd = argv + i;
  char mark[80];
  snprintf(mark, sizeof mark, "{%s}", a->name);
  int uses = 0;
  for (char **c = a->cmd; *c; c++)
    uses |= strstr(*c, mark) != NULL;
  snprintf(a->env, sizeof a->env, "PIPEPROF_SWEEP_%s", a->name);
  for (char *c = a->env; *c; c++)
    if (*c >= 'a' && *c <= 'z')
      *c = (char)(*c - 'a' + 'A');
  if (!uses && !a->env_only) {
    fprintf(stderr,
            "pipeprof sweep: CMD has no %s: every run would be the same "
            "unless CMD reads %s; pass --env if it does\n",
            mark, a->env);
    return EXIT_USAGE;
  }
  return -1;
}

/* ---- one run ---------------------------------------------------------------
 */

/* arg with every {NAME} replaced by value (malloc'd). */
static char *substitute(const char *arg, const char *mark, const char *value) {
  size_t ml = strlen(mark), vl = strlen(value), n = 0;
  for (const char *p = strstr(arg, mark); p; p = strstr(p + ml, mark))
    n++;
  char *out = malloc(strlen(arg) + n * vl + 1), *o = out;
  if (!out)
    return NULL;
  for (const char *p = arg;;) {
    const char *q = strstr(p, mark);
    if (!q) {
      strcpy(o, p);
      break;
    }
    memcpy(o, p, (size_t)(q - p));
    o += q - p;
    memcpy(o, value, vl);
    o += vl;
    p = q + ml;
  }
  return out;
}

/* Run CMD for value; its exit status in *status (-1: not run), its peak
 * RSS in *rss. 0, or -1 with a reason in why. */
static int run_cmd(const sweep_args *a, const char *value, const char *trace,
                   const char *log, int *status, double *rss, char *why,
                   size_t wn) {
  char mark[80];
  snprintf(mark, sizeof mark, "{%s}", a->name);
  int argc = 0;
  while (a->cmd[argc])
    argc++;
  char **argv = calloc((size_t)argc + 1, sizeof *argv);
  for (int i = 0; argv && i < argc; i++)
    if (!(argv[i] = substitute(a->cmd[i], mark, value)))
      break;
  fflush(NULL);
  pid_t pid = argv ? fork() : -1;
  if (pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    setenv("PIPEPROF", "1", 1);
    setenv("PIPEPROF_OUT", trace, 1);
    setenv("PIPEPROF_MODE", "trace", 1);
    setenv("PIPEPROF_SWEEP_PARAM", a->name, 1);
    setenv("PIPEPROF_SWEEP_VALUE", value, 1);
    setenv(a->env, value, 1);
    if (!getenv("PIPEPROF_SAMPLE_HZ"))
      setenv("PIPEPROF_SAMPLE_HZ", "10", 1); /* energy, where measured */
    execvp(argv[0], argv);
    fprintf(stderr, "pipeprof sweep: cannot run %s: %s\n", argv[0],
            strerror(errno));
    _exit(127);
  }
  for (int i = 0; argv && i < argc; i++)
    free(argv[i]);
  free(argv);
  *status = -1;
  if (pid < 0) {
    snprintf(why, wn, "cannot start CMD: %s", strerror(errno));
    return -1;
  }
  int st;
  struct rusage ru;
  while (wait4(pid, &st, 0, &ru) < 0)
    if (errno != EINTR) {
      snprintf(why, wn, "wait: %s", strerror(errno));
      return -1;
    }
  *rss = (double)ru.ru_maxrss * 1024.0;
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  if (*status != 0) {
    snprintf(why, wn, "CMD exited with status %d (its output: %.400s)", *status,
             log);
    return -1;
  }
  return 0;
}

/* Leave out each thread's events before t_first + warm_ns. */
static void trim(pp_trace *t, int64_t warm_ns) {
  int64_t first = INT64_MAX;
  for (size_t i = 0; i < t->nthreads; i++)
    if (t->threads[i].nev && t->threads[i].ev[0].ts < first)
      first = t->threads[i].ev[0].ts;
  if (first == INT64_MAX)
    return;
  int64_t cut = first + warm_ns;
  for (size_t i = 0; i < t->nthreads; i++) {
    pp_thread *th = &t->threads[i];
    size_t k = 0;
    while (k < th->nev && th->ev[k].ts < cut)
      k++;
    memmove(th->ev, th->ev + k, (th->nev - k) * sizeof *th->ev);
    th->nev -= k;
  }
}

static void zone_hist(const pp_analysis *an, const char *name, pp_hist *h,
                      double *count) {
  *count = 0;
  for (size_t i = 0; i < an->prof.nzones; i++)
    if (strcmp(pp_trace_loc_name(an->trace, an->prof.zones[i].loc), name) ==
        0) {
      pp_hist_merge(h, &an->prof.zones[i].hist);
      *count += (double)an->prof.zones[i].count;
    }
}

static void set_lat(run_fig *f, const pp_hist *h, const char *of) {
  if (!h->count)
    return;
  f->has_lat = 1;
  f->latency_of = of;
  f->p50 = (double)pp_hist_percentile(h, 50);
  f->p90 = (double)pp_hist_percentile(h, 90);
  f->p99 = (double)pp_hist_percentile(h, 99);
}

/* The figures of one analysed run (see the usage text for items). */
static void figures(const sweep_args *a, const pp_analysis *an,
                    const pp_analysis *whole, run_fig *f) {
  const pp_profile *p = &an->prof;
  const pp_request_stats *r = &p->req;
  double wall_s = (double)p->wall_ns * 1e-9;
  static char zlabel[96], llabel[96];
  pp_hist h;
  pp_hist_init(&h);
  double zcount = 0;
  const char *zname = a->zone;
  if (!zname) { /* the zone with the most instances */
    uint64_t best = 0;
    for (size_t i = 0; i < p->nzones; i++)
      if (p->zones[i].count > best) {
        best = p->zones[i].count;
        zname = pp_trace_loc_name(an->trace, p->zones[i].loc);
      }
  }
  if (zname) {
    zone_hist(an, zname, &h, &zcount);
    snprintf(zlabel, sizeof zlabel, "zone %.80s", zname);
    snprintf(llabel, sizeof llabel, "zone %.80s", zname);
  }
  if (r->completed) {
    f->item = "request";
    f->items = (double)r->completed;
    f->per_s = r->req_per_s;
    set_lat(f, &r->e2e, "request E2E");
  } else if (r->batches) {
    f->item = "batched item";
    f->items = (double)r->batch_items;
    f->per_s = wall_s > 0 ? f->items / wall_s : 0;
    set_lat(f, &h, llabel);
  } else if (a->zone && zcount > 0) {
    f->item = zlabel;
    f->items = zcount;
    f->per_s = wall_s > 0 ? zcount / wall_s : 0;
    set_lat(f, &h, llabel);
  } else if (p->nframes && p->frames[0].frames > 1) {
    f->item = "frame";
    f->items = (double)p->frames[0].frames;
    f->per_s = p->frames[0].fps;
    set_lat(f, &p->frames[0].hist, "frame time");
  } else if (zcount > 0) {
    f->item = zlabel;
    f->items = zcount;
    f->per_s = wall_s > 0 ? zcount / wall_s : 0;
    set_lat(f, &h, llabel);
  }
  pp_hist_free(&h);
  if (!f->item || f->items <= 0) {
    f->ok = 0;
    snprintf(f->why, sizeof f->why,
             "no items recorded (is CMD linked with libpipeprof, or using "
             "the Python binding?)");
    return;
  }
  if (a->zone && zcount <= 0)
    snprintf(f->why, sizeof f->why, "no zone %.80s", a->zone);
  /* energy of the whole run over the whole run's items */
  pp_energy e;
  if (pp_run_energy(whole, &e)) {
    const pp_request_stats *wr = &whole->prof.req;
    double n = wr->completed ? (double)wr->completed
               : wr->batches ? (double)wr->batch_items
                             : f->items;
    f->has_energy = n > 0;
    f->j_per_item = n > 0 ? e.joules / n : 0;
  } else {
    snprintf(f->energy_why, sizeof f->energy_why, "%s", e.sources);
  }
  f->ok = 1;
}

static int one_run(const sweep_args *a, const char *value, int k, run_fig *f) {
  memset(f, 0, sizeof *f);
  char trace[4096], log[4096];
  snprintf(trace, sizeof trace, "%s/%s-%s.r%d.pptrace", a->out, a->name, value,
           k);
  snprintf(log, sizeof log, "%s/%s-%s.r%d.log", a->out, a->name, value, k);
  remove(trace);
  int status;
  if (run_cmd(a, value, trace, log, &status, &f->rss_bytes, f->why,
              sizeof f->why) != 0)
    return -1;
  pp_trace t, tw;
  pp_analysis an, whole;
  if (pp_cli_load_keep(trace, &tw, &whole, UINT64_MAX) != 0) {
    snprintf(f->why, sizeof f->why, "no readable trace %.400s", trace);
    return -1;
  }
  int rc = 0;
  if (a->warmup_s > 0) {
    if (pp_cli_load_keep(trace, &t, &an, UINT64_MAX) != 0) {
      snprintf(f->why, sizeof f->why, "no readable trace %.400s", trace);
      pp_analysis_free(&whole);
      pp_trace_free(&tw);
      return -1;
    }
    pp_analysis_free(&an);
    memset(&an, 0, sizeof an);
    trim(&t, (int64_t)(a->warmup_s * 1e9));
    if (pp_analyze(&t, &an) != 0) {
      snprintf(f->why, sizeof f->why, "out of memory analysing %.400s", trace);
      rc = -1;
    } else {
      figures(a, &an, &whole, f);
    }
    pp_analysis_free(&an);
    pp_trace_free(&t);
  } else {
    figures(a, &whole, &whole, f);
  }
  pp_analysis_free(&whole);
  pp_trace_free(&tw);
  return rc == 0 && f->ok ? 0 : -1;
}

/* A whole file, NUL-terminated (malloc'd), or NULL. */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n + 4096 + 1 > cap) {
      char *b = realloc(buf, cap = cap * 2 + 8192);
      if (!b) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = b;
    }
    size_t k = fread(buf + n, 1, 4096, f);
    n += k;
    if (k < 4096)
      break;
  }
  fclose(f);
  buf[n] = 0;
  return buf;
}

/* ---- across runs and values -----------------------------------------------
 */

static int cmp_d(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static double med(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void combine(run_fig *runs, int n, value_fig *v) {
  run_fig ok[MAX_REPEAT];
  int m = 0;
  for (int i = 0; i < n; i++)
    if (runs[i].ok)
      ok[m++] = runs[i];
  v->runs = n;
  v->runs_ok = m;
  if (!m) {
    v->med = runs[n - 1];
    return;
  }
  v->med = ok[0];
  double x[MAX_REPEAT];
#define MEDIAN_OF(field)                                                       \
  do {                                                                         \
    for (int i = 0; i < m; i++)                                                \
      x[i] = ok[i].field;                                                      \
    v->med.field = med(x, m);                                                  \
  } while (0)
  MEDIAN_OF(items);
  MEDIAN_OF(per_s);
  MEDIAN_OF(p50);
  MEDIAN_OF(p90);
  MEDIAN_OF(p99);
  MEDIAN_OF(j_per_item);
  MEDIAN_OF(rss_bytes);
#undef MEDIAN_OF
  v->per_s_min = v->per_s_max = ok[0].per_s;
  for (int i = 1; i < m; i++) {
    if (ok[i].per_s < v->per_s_min)
      v->per_s_min = ok[i].per_s;
    if (ok[i].per_s > v->per_s_max)
      v->per_s_max = ok[i].per_s;
  }
}

/* The best value: the most throughput among values whose p99 is within
 * the bound (all with a p99, without a bound); -1 when none. */
static int best_value(const sweep_args *a, const value_fig *v) {
  int best = -1;
  for (int i = 0; i < a->nvalues; i++) {
    if (!v[i].runs_ok)
      continue;
    if (a->bound_ns &&
        (!v[i].med.has_lat || v[i].med.p99 > (double)a->bound_ns))
      continue;
    if (best < 0 || v[i].med.per_s > v[best].med.per_s)
      best = i;
  }
  return best;
}

/* The knee: in the order given, the first value whose throughput reaches
 * 90% of the highest; -1 when none. */
static int knee_value(const sweep_args *a, const value_fig *v) {
  double top = 0;
  for (int i = 0; i < a->nvalues; i++)
    if (v[i].runs_ok && v[i].med.per_s > top)
      top = v[i].med.per_s;
  for (int i = 0; i < a->nvalues; i++)
    if (v[i].runs_ok && top > 0 && v[i].med.per_s >= 0.9 * top)
      return i;
  return -1;
}

static void fmt_ms(char *b, size_t n, int have, double ns) {
  if (have)
    snprintf(b, n, "%.3f", ns * 1e-6);
  else
    snprintf(b, n, "-");
}

static void table(FILE *out, const sweep_args *a, const value_fig *v, int best,
                  int knee) {
  const char *item = NULL, *lat = NULL;
  for (int i = 0; i < a->nvalues && !item; i++)
    if (v[i].runs_ok) {
      item = v[i].med.item;
      lat = v[i].med.latency_of;
    }
  fprintf(out, "pipeprof sweep: %s over %d value%s, %d run%s each%s\n", a->name,
          a->nvalues, a->nvalues == 1 ? "" : "s", a->repeat,
          a->repeat == 1 ? "" : "s", a->repeat > 1 ? " (medians)" : "");
  fprintf(out, "items: %ss; latency: %s%s\n", item ? item : "-",
          lat ? lat : "-",
          a->warmup_s > 0 ? "; first seconds left out (--warmup)" : "");
  fprintf(out, "%-12s %12s %10s %10s %10s %12s %10s  %s\n", a->name, "items/s",
          "p50 ms", "p90 ms", "p99 ms", "J/item", "peak RSS", "");
  for (int i = 0; i < a->nvalues; i++) {
    const run_fig *f = &v[i].med;
    if (!v[i].runs_ok) {
      fprintf(out, "%-12s failed: %s\n", v[i].value, f->why);
      continue;
    }
    char p50[32], p90[32], p99[32], j[32], rss[32];
    fmt_ms(p50, sizeof p50, f->has_lat, f->p50);
    fmt_ms(p90, sizeof p90, f->has_lat, f->p90);
    fmt_ms(p99, sizeof p99, f->has_lat, f->p99);
    if (f->has_energy)
      snprintf(j, sizeof j, "%.4g", f->j_per_item);
    else
      snprintf(j, sizeof j, "-");
    pp__fmt_bytes(rss, sizeof rss, f->rss_bytes);
    char note[96] = "";
    if (i == best && i == knee)
      snprintf(note, sizeof note, "<- best, knee");
    else if (i == best)
      snprintf(note, sizeof note, "<- best");
    else if (i == knee)
      snprintf(note, sizeof note, "<- knee");
    if (a->bound_ns && (!f->has_lat || f->p99 > (double)a->bound_ns))
      snprintf(note + strlen(note), sizeof note - strlen(note),
               "%sover the "
               "bound",
               *note ? ", " : "");
    fprintf(out, "%-12s %12.1f %10s %10s %10s %12s %10s  %s\n", v[i].value,
            f->per_s, p50, p90, p99, j, rss, note);
  }
  int any_energy = 0;
  const char *ewhy = NULL;
  for (int i = 0; i < a->nvalues; i++) {
    any_energy |= v[i].runs_ok && v[i].med.has_energy;
    if (v[i].runs_ok && v[i].med.energy_why[0])
      ewhy = v[i].med.energy_why;
  }
  if (!any_energy)
    fprintf(out, "energy per item: unavailable: %s\n",
            ewhy ? ewhy : "no energy counter");
  if (best >= 0)
    fprintf(out, "best %s: %s (%.1f items/s%s)\n", a->name, v[best].value,
            v[best].med.per_s, a->bound_ns ? " with p99 within the bound" : "");
  else
    fprintf(out, "best %s: none%s\n", a->name,
            a->bound_ns ? " meets the latency bound" : "");
  if (knee >= 0)
    fprintf(out, "knee: %s=%s reaches 90%% of the highest throughput\n",
            a->name, v[knee].value);
}

static int write_json(const char *path, const sweep_args *a, const value_fig *v,
                      int best, int knee) {
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  pp_jsonw w;
  pp_jsonw_init(&w, f);
  pp_jsonw_obj_begin(&w);
  pp_jsonw_kv_str(&w, "schema", "pipeprof.sweep");
  pp_jsonw_kv_int(&w, "schema_version", 1);
  pp_jsonw_kv_str(&w, "param", a->name);
  pp_jsonw_kv_int(&w, "repeat", a->repeat);
  pp_jsonw_kv_double(&w, "warmup_s", a->warmup_s);
  if (a->bound_ns)
    pp_jsonw_kv_int(&w, "latency_bound_ns", a->bound_ns);
  else {
    pp_jsonw_key(&w, "latency_bound_ns");
    pp_jsonw_null(&w);
  }
  pp_jsonw_key(&w, "values");
  pp_jsonw_arr_begin_lines(&w);
  for (int i = 0; i < a->nvalues; i++) {
    const run_fig *r = &v[i].med;
    pp_jsonw_obj_begin(&w);
    pp_jsonw_kv_str(&w, "value", v[i].value);
    pp_jsonw_kv_int(&w, "runs", v[i].runs);
    pp_jsonw_kv_int(&w, "runs_ok", v[i].runs_ok);
    if (!v[i].runs_ok) {
      pp_jsonw_kv_str(&w, "failed", r->why);
      pp_jsonw_obj_end(&w);
      continue;
    }
    pp_jsonw_kv_str(&w, "item", r->item);
    pp_jsonw_kv_double(&w, "items", r->items);
    pp_jsonw_kv_double(&w, "items_per_s", r->per_s);
    pp_jsonw_kv_double(&w, "items_per_s_min", v[i].per_s_min);
    pp_jsonw_kv_double(&w, "items_per_s_max", v[i].per_s_max);
    if (r->has_lat) {
      pp_jsonw_kv_str(&w, "latency_of", r->latency_of);
      pp_jsonw_kv_double(&w, "p50_ns", r->p50);
      pp_jsonw_kv_double(&w, "p90_ns", r->p90);
      pp_jsonw_kv_double(&w, "p99_ns", r->p99);
    }
    if (r->has_energy)
      pp_jsonw_kv_double(&w, "joules_per_item", r->j_per_item);
    else
      pp_jsonw_kv_str(&w, "joules_per_item",
                      r->energy_why[0] ? r->energy_why : "unavailable");
    pp_jsonw_kv_double(&w, "peak_rss_bytes", r->rss_bytes);
    pp_jsonw_obj_end(&w);
  }
  pp_jsonw_arr_end(&w);
  if (best >= 0)
    pp_jsonw_kv_str(&w, "best", v[best].value);
  else {
    pp_jsonw_key(&w, "best");
    pp_jsonw_null(&w);
  }
  if (knee >= 0)
    pp_jsonw_kv_str(&w, "knee", v[knee].value);
  else {
    pp_jsonw_key(&w, "knee");
    pp_jsonw_null(&w);
  }
  pp_jsonw_obj_end(&w);
  pp_jsonw_putc(&w, '\n');
  int rc = pp_jsonw_finish(&w);
  if (fclose(f) != 0)
    rc = -1;
  return rc;
}

/* DIR/sweep.html: the HTML report's page with the sweep's JSON (its
 * renderer draws throughput and latency per value). 0, or -1 said. */
static int write_html(const char *dir, const char *json_path) {
  char *json = slurp(json_path);
  char path[4200];
  snprintf(path, sizeof path, "%s/sweep.html", dir);
  FILE *f = json ? fopen(path, "w") : NULL;
  int rc = f ? pp__html_page(f, "pipeprof sweep", json, NULL) : -1;
  if (f && fclose(f) != 0)
    rc = -1;
  free(json);
  if (rc != 0)
    fprintf(stderr, "pipeprof sweep: cannot write %s\n", path);
  return rc;
}

int pp_cli_sweep(int argc, char **argv) {
  sweep_args a;
  int prc = parse(argc, argv, &a);
  if (prc != -1) {
    free(a.list);
    return prc;
  }
  if (mkdir(a.out, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "pipeprof sweep: cannot create %s: %s\n", a.out,
            strerror(errno));
    free(a.list);
    return EXIT_FAIL;
  }
  value_fig *v = calloc((size_t)a.nvalues, sizeof *v);
  run_fig *runs = calloc((size_t)a.repeat, sizeof *runs);
  if (!v || !runs) {
    free(v);
    free(runs);
    free(a.list);
    return EXIT_FAIL;
  }
  int failed = 0;
  for (int i = 0; i < a.nvalues; i++) {
    v[i].value = a.values[i];
    for (int k = 0; k < a.repeat; k++) {
      if (!a.json)
        fprintf(stderr, "pipeprof sweep: %s=%s, run %d of %d\n", a.name,
                a.values[i], k + 1, a.repeat);
      if (one_run(&a, a.values[i], k + 1, &runs[k]) != 0)
        fprintf(stderr, "pipeprof sweep: %s=%s: %s\n", a.name, a.values[i],
                runs[k].why);
    }
    combine(runs, a.repeat, &v[i]);
    failed |= v[i].runs_ok < v[i].runs;
  }
  int best = best_value(&a, v), knee = knee_value(&a, v);
  char path[4200];
  snprintf(path, sizeof path, "%s/sweep.json", a.out);
  int rc = write_json(path, &a, v, best, knee);
  if (rc != 0)
    fprintf(stderr, "pipeprof sweep: cannot write %s\n", path);
  else if (write_html(a.out, path) != 0)
    rc = -1;
  if (a.json) {
    FILE *f = fopen(path, "r");
    char buf[8192];
    size_t n;
    while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
      fwrite(buf, 1, n, stdout);
    if (f)
      fclose(f);
  } else {
    table(stdout, &a, v, best, knee);
  }
  free(v);
  free(runs);
  free(a.list);
  return rc != 0 || failed ? EXIT_FAIL : EXIT_OK;
}
