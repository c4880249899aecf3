/* SPDX-License-Identifier: MIT */
/*
 * pipeprof-diff-workload: the synthetic program bench/diff_rates.sh runs to
 * measure `pipeprof diff` as a CI gate. Each of --iters iterations is one
 * zone "infer" doing a fixed amount of floating-point work (--work inner
 * steps); DIFF_SLOWDOWN=0.10 in the environment multiplies that work by
 * 1.10, an exact injected slowdown of the code, not of the machine.
 * Profile it with PIPEPROF=1 PIPEPROF_OUT=FILE in the environment.
 *
 * --hog SECONDS turns it into the noise beside the runs: a CPU hog that
 * alternates busy and idle stretches of 20..200 ms (each drawn at random)
 * for SECONDS, so that runs see different amounts of contention, as on a
 * shared CI machine. It prints nothing and records nothing.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pipeprof.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int parse_pos(const char *s, double max, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v > 0 && v <= max))
    return -1;
  *out = v;
  return 0;
}

static volatile double sink;

static void hog(double seconds) {
  uint64_t x = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
  double end = now_s() + seconds;
  while (now_s() < end) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    double busy = 0.020 + 0.180 * (double)(x >> 40) / 16777216.0;
    x = x * 6364136223846793005u + 1442695040888963407u;
    double idle = 0.020 + 0.180 * (double)(x >> 40) / 16777216.0;
    double t = now_s() + busy;
    double a = 1.0001;
    while (now_s() < t)
      for (int i = 0; i < 10000; i++)
        a = a * 1.0000001 + 1e-9;
    sink = a;
    struct timespec ts = {0, (long)(idle * 1e9)};
    nanosleep(&ts, NULL);
  }
}

int main(int argc, char **argv) {
  double iters = 200, work = 20000;
  for (int i = 1; i < argc; i++) {
    double v;
    if (strcmp(argv[i], "--hog") == 0 && i + 1 < argc &&
        parse_pos(argv[i + 1], 86400, &v) == 0) {
      hog(v);
      return 0;
    } else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc &&
               parse_pos(argv[i + 1], 1e7, &v) == 0) {
      iters = v;
      i++;
    } else if (strcmp(argv[i], "--work") == 0 && i + 1 < argc &&
               parse_pos(argv[i + 1], 1e9, &v) == 0) {
      work = v;
      i++;
    } else {
      fprintf(stderr, "usage: pipeprof-diff-workload [--iters N] [--work N] "
                      "| --hog SECONDS (DIFF_SLOWDOWN=0.1 adds 10%% work)\n");
      return 2;
    }
  }
  const char *sd = getenv("DIFF_SLOWDOWN");
  double slow = 0;
  if (sd && *sd) {
    char *end;
    slow = strtod(sd, &end);
    if (*end || !(slow >= 0 && slow <= 10)) {
      fprintf(stderr, "pipeprof-diff-workload: bad DIFF_SLOWDOWN '%s'\n", sd);
      return 2;
    }
  }
  long steps = (long)(work * (1 + slow) + 0.5);
  double acc = 0;
  for (long k = 0; k < (long)iters; k++) {
    PP_ZONE("infer");
    double a = 1.0 + (double)k * 1e-9;
    for (long i = 0; i < steps; i++)
      a = a * 0.9999999 + 1e-7;
    acc += a;
  }
  sink = acc;
  return 0;
}
