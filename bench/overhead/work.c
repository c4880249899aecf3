/* SPDX-License-Identifier: MIT */
/*
 * pipeprof-overhead-work: the workloads pipeprof-overhead measures, run
 * in a child process of their own with or without PIPEPROF in the
 * environment. Linked to libpipeprof like any instrumented program; the
 * instrumentation is the same in both runs, only recording differs.
 *
 *   pipeprof-overhead-work empty ZONES        ZONES empty PP_ZONEs in a loop
 *   pipeprof-overhead-work work ZONES SPIN    ZONES zones, each around SPIN
 *                                             steps of integer work
 *   pipeprof-overhead-work spin SPIN          time SPIN steps (no zones):
 *                                             prints nanoseconds per step
 *
 * The work is a dependent chain of integer operations whose result is
 * printed, so the compiler can neither drop nor shorten it, and it is the
 * same number of steps in every run (a time-based loop would do less work
 * where instrumentation made the machine slower).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pipeprof.h"

static uint64_t work(uint64_t x, long steps) {
  for (long i = 0; i < steps; i++)
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

static long arg_long(const char *s, long lo, long hi) {
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || *end || v < lo || v > hi) {
    fprintf(stderr, "pipeprof-overhead-work: bad number \"%s\"\n", s);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "spin") == 0) {
    long steps = arg_long(argv[2], 1, 1000000000L);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    uint64_t x = work(1, steps);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns =
        (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    printf("%.6f %llu\n", ns / (double)steps, (unsigned long long)(x & 1));
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "empty") == 0) {
    long zones = arg_long(argv[2], 0, 1000000000L);
    for (long i = 0; i < zones; i++) {
      PP_ZONE("empty");
      __asm__ volatile("" ::: "memory"); /* keep the loop a loop */
    }
    return 0;
  }
  if (argc == 4 && strcmp(argv[1], "work") == 0) {
    long zones = arg_long(argv[2], 0, 1000000000L);
    long steps = arg_long(argv[3], 0, 1000000000L);
    uint64_t x = 1;
    for (long i = 0; i < zones; i++) {
      PP_ZONE("work");
      x = work(x, steps);
    }
    printf("%llu\n", (unsigned long long)(x & 1));
    return 0;
  }
  fputs("usage: pipeprof-overhead-work empty ZONES | work ZONES SPIN | "
        "spin SPIN\n",
        stderr);
  return 2;
}
