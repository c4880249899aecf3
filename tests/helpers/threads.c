/* SPDX-License-Identifier: MIT */
/*
 * Test helper for `pipeprof run` (tests/test-run.c): a program that links
 * no pipeprof and burns CPU on named threads. `threads N MS HOLD_MS OUT`
 * starts N threads named "pp-burn-<i>" (prctl PR_SET_NAME), each of which
 * spins until it has used MS ms of its own CPU time (CLOCK_THREAD_CPUTIME:
 * the amount does not depend on how busy the machine is), then waits with
 * the others; the program then keeps every thread alive, idle, for HOLD_MS
 * ms of wall time (so that a sampler sees the final CPU of each) and
 * writes one line per thread to OUT: "<tid> <name> <cpu_ns>", the CPU
 * time each thread measured of itself, then exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 16

typedef struct burner {
  int index;
  long ms;
  pid_t tid;
  int64_t cpu_ns;
  char name[16];
} burner;

static pthread_barrier_t done_burning, may_exit;

static int64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *burn(void *arg) {
  burner *b = arg;
  b->tid = (pid_t)syscall(SYS_gettid);
  snprintf(b->name, sizeof b->name, "pp-burn-%d", b->index);
  prctl(PR_SET_NAME, b->name, 0, 0, 0);
  volatile uint64_t x = 1;
  while (thread_cpu_ns() < (int64_t)b->ms * 1000000)
    for (int i = 0; i < 100000; i++)
      x = x * 6364136223846793005u + 1442695040888963407u;
  b->cpu_ns = thread_cpu_ns();
  pthread_barrier_wait(&done_burning);
  pthread_barrier_wait(&may_exit);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: threads N MS HOLD_MS OUT\n");
    return 2;
  }
  int n = atoi(argv[1]);
  long ms = atol(argv[2]), hold = atol(argv[3]);
  if (n < 1 || n > MAX_THREADS || ms < 0 || hold < 0) {
    fprintf(stderr, "threads: bad arguments\n");
    return 2;
  }
  burner b[MAX_THREADS];
  pthread_t th[MAX_THREADS];
  pthread_barrier_init(&done_burning, NULL, (unsigned)n + 1);
  pthread_barrier_init(&may_exit, NULL, (unsigned)n + 1);
  for (int i = 0; i < n; i++) {
    b[i].index = i;
    b[i].ms = ms;
    if (pthread_create(&th[i], NULL, burn, &b[i]) != 0) {
      fprintf(stderr, "threads: pthread_create failed\n");
      return 1;
    }
  }
  pthread_barrier_wait(&done_burning);
  struct timespec ts = {hold / 1000, (hold % 1000) * 1000000L};
  nanosleep(&ts, NULL);
  FILE *f = fopen(argv[4], "w");
  if (!f) {
    perror(argv[4]);
    return 1;
  }
  for (int i = 0; i < n; i++)
    fprintf(f, "%d %s %lld\n", (int)b[i].tid, b[i].name,
            (long long)b[i].cpu_ns);
  fclose(f);
  pthread_barrier_wait(&may_exit);
  for (int i = 0; i < n; i++)
    pthread_join(th[i], NULL);
  return 0;
}
