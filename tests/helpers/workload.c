/* SPDX-License-Identifier: MIT */
/*
 * A deterministic workload for tests/test-run.c, compiled at test time with
 * the system's cc: it maps and touches MIB MiB of anonymous memory (4 KiB
 * pages, transparent huge pages refused, so the number of page faults is
 * fixed), makes NWRITES one-byte write()s to /dev/null (system time), then
 * burns user-space CPU until the process has used CPU_MS milliseconds of
 * CPU in all. Because it stops on its own CPU clock, separate runs use the
 * same CPU time however busy the machine is, and the figures of different
 * tools can be compared. Prints nothing on success.
 *
 * Usage: workload MIB CPU_MS NWRITES [SHORT_KIDS]
 *
 * With SHORT_KIDS, the process forks three children that each do the
 * work above and SHORT_KIDS children that each touch 4 MiB and exit at
 * once (shorter than a sampling interval), waits for all of them and does
 * nothing else: a process tree whose totals only the run's rusage sees.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Touch mib MiB of fresh anonymous memory, one fault a page. */
static unsigned char *touch(size_t mib) {
  size_t len = mib << 20;
  unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("workload: mmap");
    exit(1);
  }
#ifdef MADV_NOHUGEPAGE
  madvise(p, len, MADV_NOHUGEPAGE);
#endif
  for (size_t i = 0; i < len; i += 4096)
    p[i] = (unsigned char)i;
  return p;
}

static int work(size_t mib, double target, long nwrites);

int main(int argc, char **argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: workload MIB CPU_MS NWRITES [SHORT_KIDS]\n");
    return 2;
  }
  size_t mib = strtoul(argv[1], NULL, 10);
  double target = strtod(argv[2], NULL);
  long nwrites = strtol(argv[3], NULL, 10);
  if (argc == 4)
    return work(mib, target, nwrites);
  long kids = strtol(argv[4], NULL, 10);
  for (long k = 0; k < 3 + kids; k++) {
    pid_t c = fork();
    if (c < 0) {
      perror("workload: fork");
      return 1;
    }
    if (c == 0) {
      if (k < 3)
        _exit(work(mib, target, nwrites));
      touch(4);
      _exit(0);
    }
    if (k >= 3) /* one short child at a time, between samples */
      waitpid(c, NULL, 0);
  }
  int st, rc = 0;
  while (wait(&st) > 0)
    rc |= !WIFEXITED(st) || WEXITSTATUS(st);
  return rc;
}

static int work(size_t mib, double target, long nwrites) {
  size_t len = mib << 20;
  unsigned char *p = len ? touch(mib) : NULL;

  int fd = open("/dev/null", O_WRONLY);
  if (fd < 0) {
    perror("workload: /dev/null");
    return 1;
  }
  for (long i = 0; i < nwrites; i++)
    if (write(fd, "x", 1) != 1) {
      perror("workload: write");
      return 1;
    }
  close(fd);

  /* xorshift over the buffer: real work the compiler cannot drop */
  volatile uint64_t sink = 0;
  uint64_t x = 88172645463325252ull;
  /* Short rounds between clock reads: each round's random reads over the
   * buffer miss the caches, more so beside other work, so a long round
   * (100000 reads: 20 ms and more on a busy machine) would overshoot the
   * target by a varying amount; 5000 reads overshoot by about 1 ms. */
  while (cpu_ms() < target) {
    for (int i = 0; i < 5000; i++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      if (p)
        x += p[(x >> 20) % len];
    }
    sink = x;
  }
  (void)sink;
  return 0;
}
