/* SPDX-License-Identifier: MIT */
/*
 * pipeprof-bench --sampler: the sampler's own CPU use, as `pipeprof run`
 * pays it. For each rate a child process waits on a pipe until the bench
 * has opened the sampler (perf_event counters inherit into threads created
 * afterwards, as they do into a program `pipeprof run` launches), then
 * starts 100 threads that sleep. The bench runs a session (mode trace, no
 * signal handlers) and a sampler on that tree with system, perf and power
 * readers and per-thread CPU (pp__sampler_track_threads, bound 256) on, at
 * 10 Hz and then 100 Hz, for 10 s each (1 s with --quick).
 * It measures its own process CPU time (CLOCK_PROCESS_CPUTIME_ID: the
 * sampler thread, the session's writer encoding the samples, the bench's
 * idle main thread) from just before the sampler starts to just after it
 * stopped. Figures: that CPU time as a percentage of one core over the
 * wall time of the window, and per sample taken (the first sample, the
 * last one taken at stop, and every 1/hz in between). Both include the
 * session's writer waking every flush period; session_idle_cpu_pct is
 * that alone (session running, no sampler), to subtract.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/sampler.h"
#include "pipeprof.h"

int pp_bench_sampler(int json, int quick);

enum { TREE_THREADS = 100 };

static double clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *sleeper(void *arg) {
  (void)arg;
  for (;;)
    pause();
  return NULL;
}

/* The child: wait for "go", start the threads, say "ready", sleep. */
static void child_main(int go_fd, int ready_fd) {
  char c;
  while (read(go_fd, &c, 1) < 0 && errno == EINTR) {
  }
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setstacksize(&a, 64 * 1024);
  int started = 0;
  for (int i = 0; i < TREE_THREADS; i++) {
    pthread_t t;
    if (pthread_create(&t, &a, sleeper, NULL) == 0)
      started++;
  }
  pthread_attr_destroy(&a);
  ssize_t w = write(ready_fd, &started, sizeof started);
  (void)w;
  for (;;)
    pause();
}

static int count_tasks(pid_t pid) {
  char p[64];
  snprintf(p, sizeof p, "/proc/%d/task", (int)pid);
  DIR *d = opendir(p);
  if (!d)
    return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

typedef struct sampler_cost {
  double cpu_pct;       /* of one core */
  double us_per_sample; /* process CPU per sample */
  unsigned long samples;
} sampler_cost;

static void sleep_for(double secs) {
  double end = clock_ns(CLOCK_MONOTONIC) + secs * 1e9;
  for (double now = clock_ns(CLOCK_MONOTONIC); now < end;
       now = clock_ns(CLOCK_MONOTONIC)) {
    long long left = (long long)(end - now);
    struct timespec ts = {(time_t)(left / 1000000000LL),
                          (long)(left % 1000000000LL)};
    nanosleep(&ts, NULL);
  }
}

/* CPU use of the process with the session running and no sampler: the
 * writer's periodic wake-ups, part of every figure below. */
static double idle_cpu_pct(double secs) {
  double c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
  double w0 = clock_ns(CLOCK_MONOTONIC);
  sleep_for(secs);
  double c1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
  double w1 = clock_ns(CLOCK_MONOTONIC);
  return (c1 - c0) / (w1 - w0) * 100.0;
}

/* Start a tree, sample it at `hz` for `secs` (the session runs already),
 * end the tree. */
static int measure(unsigned hz, double secs, int *threads,
                   sampler_cost *out) {
  int go[2], ready[2];
  if (pipe(go) != 0)
    return -1;
  if (pipe(ready) != 0) {
    close(go[0]);
    close(go[1]);
    return -1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(go[1]);
    close(ready[0]);
    child_main(go[0], ready[1]);
    _exit(0);
  }
  close(go[0]);
  close(ready[1]);
  int rc = -1;
  pp__sampler *s = NULL;
  if (pid < 0)
    goto done;
  pp__sampler_cfg cfg = {pid, hz, NULL, 1, 1, 0, 1, 256, 1}; /* as pipeprof run */
  s = pp__sampler_open(&cfg);
  if (!s)
    goto done;
  pp__sampler_track_threads(s, 256); /* per-thread CPU, as pipeprof run */
  /* The threads start under the counters, as in a launched program. */
  ssize_t w = write(go[1], "g", 1);
  (void)w;
  int started = 0;
  while (read(ready[0], &started, sizeof started) < 0 && errno == EINTR) {
  }
  *threads = count_tasks(pid);

  double c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
  double w0 = clock_ns(CLOCK_MONOTONIC);
  if (pp__sampler_start(s) != 0)
    goto done;
  sleep_for(secs);
  pp__sampler_status st;
  pp__sampler_status_get(s, &st);
  pp__sampler_stop(s); /* takes the last sample */
  s = NULL;
  double c1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
  double w1 = clock_ns(CLOCK_MONOTONIC);
  out->samples = st.samples + 1;
  out->cpu_pct = (c1 - c0) / (w1 - w0) * 100.0;
  out->us_per_sample = (c1 - c0) / 1e3 / (double)out->samples;
  rc = 0;
done:
  pp__sampler_stop(s);
  close(go[1]);
  close(ready[0]);
  if (pid > 0) {
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
  }
  return rc;
}

int pp_bench_sampler(int json, int quick) {
  /* steady state: the first full scan of /proc is amortised */
  double secs = quick ? 1.0 : 10.0;
  char dir[256];
  const char *base = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/pipeprof-bench-sampler-XXXXXX",
           base && *base ? base : "/tmp");
  if (!mkdtemp(dir)) {
    perror("pipeprof-bench: mkdtemp");
    return 1;
  }
  char path[320];
  snprintf(path, sizeof path, "%s/sampler.pptrace", dir);

  int rc = 0, threads = -1;
  sampler_cost c10 = {0}, c100 = {0};
  double idle = 0;
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.mode = PP_MODE_TRACE;
  cfg.install_signals = 0;
  cfg.flush_ms = 100; /* as `pipeprof run` configures its sampler session */
  if (pp_init(&cfg) != PP_OK) {
    fprintf(stderr, "pipeprof-bench: pp_init: %s\n", pp_last_error());
    rc = 1;
  } else {
    idle = idle_cpu_pct(secs);
    if (measure(10, secs, &threads, &c10) != 0 ||
        measure(100, secs, &threads, &c100) != 0) {
      fprintf(stderr, "pipeprof-bench: cannot run the sampler: %s\n",
              strerror(errno));
      rc = 1;
    }
    pp_shutdown();
  }
  unlink(path);
  rmdir(dir);
  if (rc != 0)
    return rc;

  if (json) {
    printf("{\n");
    printf("  \"sampler_tree_threads\": %d,\n", threads);
    printf("  \"sampler_seconds\": %.1f,\n", secs);
    printf("  \"session_idle_cpu_pct\": %.4f,\n", idle);
    printf("  \"sampler_10hz_cpu_pct\": %.4f,\n", c10.cpu_pct);
    printf("  \"sampler_10hz_us_per_sample\": %.1f,\n", c10.us_per_sample);
    printf("  \"sampler_10hz_samples\": %lu,\n", c10.samples);
    printf("  \"sampler_100hz_cpu_pct\": %.4f,\n", c100.cpu_pct);
    printf("  \"sampler_100hz_us_per_sample\": %.1f,\n", c100.us_per_sample);
    printf("  \"sampler_100hz_samples\": %lu\n", c100.samples);
    printf("}\n");
  } else {
    printf("sampler on a tree of %d threads, %.1f s per rate "
           "(system, perf, power, per-thread CPU on)\n",
           threads, secs);
    printf("  session alone %.3f %% of one core (included below)\n", idle);
    printf("  10 Hz   %7.3f %% of one core  %8.1f us/sample  (%lu samples)\n",
           c10.cpu_pct, c10.us_per_sample, c10.samples);
    printf("  100 Hz  %7.3f %% of one core  %8.1f us/sample  (%lu samples)\n",
           c100.cpu_pct, c100.us_per_sample, c100.samples);
  }
  return 0;
}
