/* SPDX-License-Identifier: MIT */
/*
 * A program with known hot functions, for the CPU stack sampler's tests
 * (tests/test-stacks.c): for SECONDS of CPU time (argument, default 1.5)
 * it calls work(), which spends 70% of its CPU time in hot_a and 30% in
 * hot_b, checked by the program itself against its thread's CPU clock;
 * its innermost loop calls libm's sin(). Built twice: with frame
 * pointers, as the kernel's user call-chain walk needs, and without
 * (-fomit-frame-pointer -O2, as Debian builds its libraries), for the
 * unwinding from a copied stack.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void hot_a(double s);
void hot_b(double s);
void work(void);

static volatile double sink;
static volatile int calls; /* a store after each call: no tail calls */

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Spin for s seconds of this thread's CPU time. */
__attribute__((noinline)) static void spin(double s) {
  double end = cpu_s() + s;
  double x = 1.0;
  while (cpu_s() < end)
    for (int i = 0; i < 2000; i++)
      x = x * 1.0000001 + sin(x) * 1e-12;
  sink = x;
}

__attribute__((noinline)) void hot_a(double s) {
  spin(s);
  calls++;
}
__attribute__((noinline)) void hot_b(double s) {
  spin(s);
  calls++;
}

/* 7 ms in hot_a, then 3 ms in hot_b. */
__attribute__((noinline)) void work(void) {
  hot_a(0.007);
  hot_b(0.003);
  calls++;
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 1.5;
  if (!(seconds > 0 && seconds < 60))
    seconds = 1.5;
  double end = cpu_s() + seconds;
  while (cpu_s() < end)
    work();
  calls++;
  printf("done\n");
  return 0;
}
