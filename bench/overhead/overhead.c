/* SPDX-License-Identifier: MIT */
/*
 * pipeprof-overhead: the profiler's overhead measured with and without
 * recording, set against the overhead the report prints (issue 12).
 *
 * For each workload the same program runs uninstrumented (PIPEPROF unset:
 * the instrumentation is compiled in, recording is off) and profiled
 * (PIPEPROF=1 in trace or stats mode), alternating, --pairs times. A run
 * is a child process; its CPU time (user + system, from wait4) is the
 * whole process's, start-up and the final flush included. The measured
 * overhead of a pair is the profiled run's CPU time minus the
 * uninstrumented one's. The printed figure is what `pipeprof report`
 * prints for the profiled run's trace (pp_profile_overhead: total_ns).
 *
 * Workloads: empty (ZONES empty PP_ZONEs in a tight loop), work (zones
 * around about 2 us of integer work each) and the example pipeline. Per
 * workload and mode: the median over the pairs of the measured difference
 * with a distribution-free 95% interval, the median of the printed figure, and
 * their ratio (printed over measured; 1.00 is exact). The measured difference
 * is noisy on a loaded machine (other processes steal cache and cores):
 * alternate, use many pairs, and read the interval.
 *
 * It also times the start-up calibration (pp__measure_event_cost) that
 * every profiled process runs in pp_init.
 *
 * Usage: pipeprof-overhead [--pairs N] [--zones N] [--work-zones N]
 *        [--work-ns NS] [--frames N] [--dir DIR] [--only NAME]
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "analyze/analyze.h"
#include "analyze/stat_tests.h"
#include "core/clock.h"
#include "core/recorder.h"
#include "model/reader.h"

enum { MAX_PAIRS = 200 };

static char dir[256], bindir[PATH_MAX];

static double cpu_of(const struct rusage *ru) {
  return ((double)ru->ru_utime.tv_sec + (double)ru->ru_stime.tv_sec) * 1e9 +
         ((double)ru->ru_utime.tv_usec + (double)ru->ru_stime.tv_usec) * 1e3;
}

/* The median of v and its distribution-free 95% interval
 * (analyze/stat_tests.h). */
static void median_interval(const double *v, int n, double *lo, double *hi) {
  double s[MAX_PAIRS];
  memcpy(s, v, (size_t)n * sizeof *v);
  pp_stat_sort(s, (size_t)n);
  pp_stat_median_interval(s, (size_t)n, lo, hi);
}

static double median(const double *v, int n) {
  double s[MAX_PAIRS];
  memcpy(s, v, (size_t)n * sizeof *v);
  pp_stat_sort(s, (size_t)n);
  return pp_stat_median(s, (size_t)n);
}

/* Run argv (NULL-terminated) as a child; mode NULL: PIPEPROF unset, else
 * profiled in that mode writing to trace. Its CPU time in *cpu; stdout to
 * out_buf when given (one line), else to /dev/null. -1 on failure. */
static int run(char *const argv[], const char *mode, const char *trace,
               double *cpu, char *out_buf, size_t out_len) {
  int fds[2] = {-1, -1};
  if (out_buf && pipe(fds) != 0)
    return -1;
  pid_t pid = fork();
  if (pid == 0) {
    if (mode) {
      setenv("PIPEPROF", "1", 1);
      setenv("PIPEPROF_MODE", mode, 1);
      setenv("PIPEPROF_OUT", trace, 1);
    } else {
      unsetenv("PIPEPROF");
    }
    unsetenv("PIPEPROF_OWNER_PID");
    int fd = out_buf ? fds[1] : open("/dev/null", O_WRONLY);
    if (fd >= 0)
      dup2(fd, STDOUT_FILENO);
    execv(argv[0], argv);
    _exit(127);
  }
  if (out_buf) {
    close(fds[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < out_len &&
           (r = read(fds[0], out_buf + n, out_len - 1 - n)) > 0)
      n += (size_t)r;
    out_buf[n] = 0;
    close(fds[0]);
  }
  int st;
  struct rusage ru;
  if (pid < 0 || wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) ||
      WEXITSTATUS(st) != 0)
    return -1;
  *cpu = cpu_of(&ru);
  return 0;
}

typedef struct printed {
  double total_ns, recording_ns, dropped, threads_ns;
} printed;

/* The overhead the report prints for the trace at path. */
static int read_printed(const char *path, printed *pr) {
  char err[256];
  pp_trace t;
  pp_analysis a = {0};
  if (pp_trace_read_file(path, &t, err, sizeof err) != 0) {
    fprintf(stderr, "pipeprof-overhead: %s: %s\n", path, err);
    return -1;
  }
  int rc = -1;
  if (pp_analyze(&t, &a) == 0) {
    pp_overhead o;
    pp_profile_overhead(&a, &o);
    if (o.total_ns >= 0) {
      pr->total_ns = o.total_ns;
      pr->recording_ns = o.recording_ns;
      pr->dropped = (double)a.prof.dropped;
      pr->threads_ns = (double)a.prof.writer_cpu_ns +
                       (a.prof.sampler_cpu_ns > 0 ? a.prof.sampler_cpu_ns : 0);
      rc = 0;
    }
  }
  pp_analysis_free(&a);
  pp_trace_free(&t);
  return rc;
}

typedef struct workload {
  const char *name, *mode;
  char *argv[8];
  double units; /* zones (or frames) per run, for the per-unit figures */
  const char *unit;
} workload;

static void measure(const workload *w, int pairs) {
  double meas[MAX_PAIRS], pri[MAX_PAIRS], rec[MAX_PAIRS], drop[MAX_PAIRS],
      thr[MAX_PAIRS], off_cpu[MAX_PAIRS];
  char trace[512];
  snprintf(trace, sizeof trace, "%s/overhead-%s-%s.pptrace", dir, w->name,
           w->mode);
  int n = 0;
  for (int i = 0; i < pairs; i++) {
    double off = 0, on = 0;
    int bad = 0;
    for (int k = 0; k < 2; k++) { /* alternate the order of the pair */
      int profiled = (k == 0) == (i % 2 == 1);
      if (profiled) {
        unlink(trace);
        bad |= run(w->argv, w->mode, trace, &on, NULL, 0);
      } else {
        bad |= run(w->argv, NULL, NULL, &off, NULL, 0);
      }
    }
    printed pr;
    if (bad || read_printed(trace, &pr) != 0) {
      fprintf(stderr, "pipeprof-overhead: %s %s: run %d failed\n", w->name,
              w->mode, i);
      continue;
    }
    meas[n] = on - off;
    off_cpu[n] = off;
    pri[n] = pr.total_ns;
    rec[n] = pr.recording_ns;
    drop[n] = pr.dropped;
    thr[n] = pr.threads_ns;
    n++;
  }
  unlink(trace);
  if (n == 0) {
    printf("%-9s %-5s unavailable: no run succeeded\n", w->name, w->mode);
    return;
  }
  double m = median(meas, n), p = median(pri, n), lo, hi;
  median_interval(meas, n, &lo, &hi);
  printf("%-9s %-5s %3d %9.1f %9.1f %9.1f %9.1f %6.2f %8.1f %8.1f %9.0f "
         "%8.1f %8.1f\n",
         w->name, w->mode, n, median(off_cpu, n) / 1e6, m / 1e6, lo / 1e6,
         hi / 1e6, m > 0 ? p / m : 0.0, m / w->units, p / w->units,
         median(drop, n), median(rec, n) / 1e6, median(thr, n) / 1e6);
  /* Within 20%: the printed figure over the measured median. Where the
   * measured median's 95% interval is wider than that, the pairs cannot
   * tell: say whether the printed figure lies inside the interval. */
  double r = m > 0 ? p / m : 0;
  printf("%-9s %-5s    verdict: %s\n", "", "",
         r >= 0.8 && r <= 1.2 ? "printed within 20% of measured"
         : (lo > 0 && (p < 0.8 * lo || p > 1.2 * hi)) ||
                 (lo <= 0 && p > 1.2 * hi)
             ? "printed off by more than 20% (outside the 95% interval)"
             : "not resolved: printed outside 20% of the median but inside "
               "the measured 95% interval");
  printf("%-9s %-5s    per-pair ms measured/printed:", "", "");
  for (int i = 0; i < n; i++)
    printf(" %.1f/%.1f", meas[i] / 1e6, pri[i] / 1e6);
  printf("\n");
  fflush(stdout);
}

static long opt_long(const char *flag, const char *v, long lo, long hi) {
  char *end;
  errno = 0;
  long x = v ? strtol(v, &end, 10) : 0;
  if (!v || end == v || *end || errno || x < lo || x > hi) {
    fprintf(stderr, "pipeprof-overhead: %s expects a number in %ld..%ld\n",
            flag, lo, hi);
    exit(2);
  }
  return x;
}

/* The start-up calibration's cost: the median of 21 calls, with the drop
 * measurement (what pp_init runs) and without it (the calibration before
 * drops were measured), interleaved. */
static void time_calibration(void) {
  pp__clock_init(); /* the clock pp_init picks, as in a session */
  double with[21], without[21], cost = 0, drop = 0;
  for (int i = 0; i < 21; i++) {
    struct timespec a, b, c;
    clock_gettime(CLOCK_MONOTONIC, &a);
    cost = pp__measure_event_cost(0, &drop);
    clock_gettime(CLOCK_MONOTONIC, &b);
    pp__measure_event_cost(0, NULL);
    clock_gettime(CLOCK_MONOTONIC, &c);
    with[i] =
        (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    without[i] =
        (double)(c.tv_sec - b.tv_sec) * 1e9 + (double)(c.tv_nsec - b.tv_nsec);
  }
  printf("calibration run in pp_init (pp__measure_event_cost): %.1f us per "
         "call (median of 21; %.1f us without the drop measurement), last "
         "result %.2f ns per event, %.2f ns per drop\n",
         median(with, 21) / 1e3, median(without, 21) / 1e3, cost, drop);
}

int main(int argc, char **argv) {
  int pairs = 5;
  long zones = 2000000, work_zones = 200000, work_ns = 2000, frames = 300;
  const char *only = NULL;
  snprintf(dir, sizeof dir, "%s",
           access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--pairs") == 0)
      pairs = (int)opt_long(a, v, 1, MAX_PAIRS);
    else if (strcmp(a, "--zones") == 0)
      zones = opt_long(a, v, 1, 1000000000L);
    else if (strcmp(a, "--work-zones") == 0)
      work_zones = opt_long(a, v, 1, 1000000000L);
    else if (strcmp(a, "--work-ns") == 0)
      work_ns = opt_long(a, v, 1, 1000000000L);
    else if (strcmp(a, "--frames") == 0)
      frames = opt_long(a, v, 1, 100000000L);
    else if (strcmp(a, "--dir") == 0 && v)
      snprintf(dir, sizeof dir, "%s", v);
    else if (strcmp(a, "--only") == 0 && v)
      only = v;
    else if (strcmp(a, "--help") == 0) {
      puts("usage: pipeprof-overhead [--pairs N] [--zones N] [--work-zones "
           "N] [--work-ns NS] [--frames N] [--dir DIR] [--only NAME]");
      return 0;
    } else {
      fprintf(stderr, "pipeprof-overhead: unknown option %s\n", a);
      return 2;
    }
    i++;
  }
  ssize_t len = readlink("/proc/self/exe", bindir, sizeof bindir - 1);
  if (len <= 0) {
    fputs("pipeprof-overhead: cannot find its own directory\n", stderr);
    return 1;
  }
  bindir[len] = 0;
  char *slash = strrchr(bindir, '/');
  if (slash)
    *slash = 0;
  char worker[PATH_MAX + 64], example[PATH_MAX + 64];
  snprintf(worker, sizeof worker, "%s/pipeprof-overhead-work", bindir);
  snprintf(example, sizeof example, "%s/pipeprof-example-pipeline", bindir);

  /* Steps of work for about work_ns per zone, timed once. */
  char out[256], steps_s[32], zones_s[32], wz_s[32], frames_s[32];
  char *spin_argv[] = {worker, "spin", "20000000", NULL};
  double spin_cpu, ns_per_step = 0;
  if (run(spin_argv, NULL, NULL, &spin_cpu, out, sizeof out) != 0 ||
      sscanf(out, "%lf", &ns_per_step) != 1 || !(ns_per_step > 0)) {
    fprintf(stderr, "pipeprof-overhead: cannot run %s\n", worker);
    return 1;
  }
  long steps = (long)((double)work_ns / ns_per_step + 0.5);
  snprintf(steps_s, sizeof steps_s, "%ld", steps < 1 ? 1 : steps);
  snprintf(zones_s, sizeof zones_s, "%ld", zones);
  snprintf(wz_s, sizeof wz_s, "%ld", work_zones);
  snprintf(frames_s, sizeof frames_s, "%ld", frames);

  time_calibration();
  printf("pairs %d, traces in %s, work: %s steps of %.3f ns (about %ld ns) "
         "per zone\n",
         pairs, dir, steps_s, ns_per_step, work_ns);
  printf("measured = profiled run's process CPU - uninstrumented run's "
         "(wait4 rusage); printed = the report's overhead figure\n");
  printf("%-9s %-5s %3s %9s %9s %9s %9s %6s %8s %8s %9s %8s %8s\n", "workload",
         "mode", "n", "off_ms", "meas_ms", "ci95_lo", "ci95_hi", "ratio",
         "meas/u", "prnt/u", "dropped", "rec_ms", "thr_ms");
  printf("%-9s %-5s %3s %9s %9s %9s %9s %6s %8s %8s %9s %8s %8s\n", "", "", "",
         "median", "median", "", "", "pr/ms", "ns", "ns", "median", "median",
         "median");
  const workload ws[] = {
      {"empty",
       "trace",
       {worker, "empty", zones_s, NULL},
       (double)zones,
       "zone"},
      {"empty",
       "stats",
       {worker, "empty", zones_s, NULL},
       (double)zones,
       "zone"},
      {"work",
       "trace",
       {worker, "work", wz_s, steps_s, NULL},
       (double)work_zones,
       "zone"},
      {"work",
       "stats",
       {worker, "work", wz_s, steps_s, NULL},
       (double)work_zones,
       "zone"},
      {"pipeline",
       "trace",
       {example, "--frames", frames_s, "--quiet", NULL},
       (double)frames,
       "frame"},
      {"pipeline",
       "stats",
       {example, "--frames", frames_s, "--quiet", NULL},
       (double)frames,
       "frame"},
  };
  for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++)
    if (!only || strcmp(only, ws[i].name) == 0)
      measure(&ws[i], pairs);
  printf("(meas/u, prnt/u: per zone, or per frame for the pipeline)\n");
  return 0;
}
