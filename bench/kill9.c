/* SPDX-License-Identifier: MIT */
/*
 * pipeprof-bench --kill9 FLUSH_MS: what a kill -9 loses in trace mode.
 * A child records, once every 200 us, a zone and a counter set to i, then
 * writes (i, CLOCK_MONOTONIC now) to a pipe; the parent kills it with
 * SIGKILL after 300 to 700 ms, reads the trace and takes the newest i the
 * file holds: the loss is the kill time minus the time that i was
 * recorded. Printed as min / median / max over 10 kills, never asserted:
 * on a loaded machine the writer thread may wait for a CPU, and no bound a
 * test could check holds then (docs/formats/pptrace.md, Durability, states
 * the bound: one writer period, up to 50 ms while events trickle).
 */
#define PP_ENABLE 1
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "format/pptrace.h"
#include "model/reader.h"
#include "pipeprof.h"

int pp_bench_kill9(const char *dir, unsigned flush_ms);

static int64_t k9_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int k9_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

enum { K9_RUNS = 10, K9_MAX_RECS = 1 << 16 };

int pp_bench_kill9(const char *dir, unsigned flush_ms) {
  char path[4200];
  snprintf(path, sizeof path, "%s/pipeprof-bench-kill9.pptrace", dir);
  static int64_t recs[K9_MAX_RECS][2];
  double loss[K9_RUNS];
  int nloss = 0;
  srand((unsigned)k9_now());
  for (int k = 0; k < K9_RUNS; k++) {
    int p[2];
    if (pipe(p) != 0)
      return 1;
    fcntl(p[0], F_SETPIPE_SZ, 1 << 20);
    pid_t pid = fork();
    if (pid < 0)
      return 1;
    if (pid == 0) {
      close(p[0]);
      pp_config c;
      pp_config_init(&c);
      c.out_path = path;
      c.flush_ms = flush_ms;
      if (pp_init(&c) != PP_OK)
        _exit(1);
      for (int64_t i = 1;; i++) {
        {
          PP_ZONE("k9");
        }
        PP_COUNTER_SET("k9.i", i);
        int64_t r[2] = {i, k9_now()};
        if (write(p[1], r, sizeof r) != (ssize_t)sizeof r)
          _exit(2);
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
      }
    }
    close(p[1]);
    usleep((useconds_t)(300000 + rand() % 400000));
    int64_t tk = k9_now();
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    size_t nr = 0;
    while (nr < K9_MAX_RECS &&
           read(p[0], recs[nr], sizeof recs[0]) == (ssize_t)sizeof recs[0])
      nr++;
    close(p[0]);
    pp_trace t;
    char err[512];
    if (pp_trace_read_file(path, &t, err, sizeof err) != 0) {
      fprintf(stderr, "pipeprof-bench: %s\n", err);
      continue;
    }
    int64_t maxi = 0;
    for (size_t a = 0; a < t.nthreads; a++)
      for (size_t b = 0; b < t.threads[a].nev; b++) {
        const pp_event *e = &t.threads[a].ev[b];
        if (e->type == PPT_EV_COUNTER_SET && e->v.i > maxi)
          maxi = e->v.i;
      }
    pp_trace_free(&t);
    for (size_t q = 0; q < nr; q++)
      if (recs[q][0] == maxi)
        loss[nloss++] = (double)(tk - recs[q][1]) / 1e6;
  }
  unlink(path);
  if (!nloss) {
    printf("kill9: unavailable: no run produced a readable trace\n");
    return 1;
  }
  qsort(loss, (size_t)nloss, sizeof *loss, k9_cmp);
  printf("kill9: flush_ms %u: lost the last %.1f / %.1f / %.1f ms "
         "(min / median / max of %d kills)\n",
         flush_ms, loss[0], loss[nloss / 2], loss[nloss - 1], nloss);
  return 0;
}
