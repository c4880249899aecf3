/* SPDX-License-Identifier: MIT */
/*
 * The program bench/stacks_cost.sh profiles: N threads (default 8) that
 * spin for S seconds (default 10) of wall time in a loop that calls libm,
 * so that their stacks go through a library built without frame pointers.
 * It links nothing of pipeprof.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static volatile double sink;
static double seconds = 10;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *spin(void *arg) {
  (void)arg;
  double end = now() + seconds, x = 1;
  while (now() < end)
    for (int i = 0; i < 1000; i++)
      x = x * 1.0000001 + sin(x) * 1e-12;
  sink = x;
  return NULL;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 8;
  if (argc > 2)
    seconds = atof(argv[2]);
  if (n < 1 || n > 256)
    n = 8;
  if (!(seconds > 0 && seconds < 3600))
    seconds = 10;
  pthread_t t[256];
  for (int i = 0; i < n; i++)
    pthread_create(&t[i], NULL, spin, NULL);
  for (int i = 0; i < n; i++)
    pthread_join(t[i], NULL);
  return 0;
}
