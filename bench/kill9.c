/* SPDX-License-Identifier: MIT */
/*
 * pipeprof-bench --kill9 FLUSH_MS [--trials N]: what a kill -9 loses, per
 * mode, with the rings in plain memory (PIPEPROF_RINGS_DIR=off: what every
 * mode did before durable rings) and durable with the salvage that
 * `pipeprof report` runs (docs/internals/durable.md).
 *
 * A child records zone "k9" once every 200 us and, after each zone's end,
 * stores the time in a shared array and counts it; the parent kills it
 * with SIGKILL 300 to 700 ms in, salvages (durable rows), reads the
 * trace and counts the k9 zones in it. Lost zones = closed by the child,
 * not in the file; lost ms = from the end of the newest zone in the file
 * (the start, when none) to the kill. Printed as min / median / max over
 * the trials, never asserted: the durable rows are asserted by
 * tests/test-durable.c, which needs no timing.
 */
#define PP_ENABLE 1
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "analyze/analyze.h"
#include "model/reader.h"
#include "pipeprof.h"
#include "salvage/salvage.h"

int pp_bench_kill9(const char *dir, unsigned flush_ms, int trials);
int pp_bench_salvage(const char *dir, unsigned threads);

static int64_t k9_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int k9_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

enum { K9_MAX_TRIALS = 100, K9_MAX_ZONES = 1 << 16 };

typedef struct k9_shared {
  _Atomic int64_t start;
  _Atomic uint64_t done;
  int64_t end_ns[K9_MAX_ZONES]; /* end_ns[i]: zone i + 1 closed */
} k9_shared;

static void k9_child(const char *path, pp_mode mode, unsigned flush_ms,
                     int durable, k9_shared *sh) {
  if (!durable)
    setenv("PIPEPROF_RINGS_DIR", "off", 1);
  pp_config c;
  pp_config_init(&c);
  c.out_path = path;
  c.flush_ms = flush_ms;
  c.mode = mode;
  if (pp_init(&c) != PP_OK)
    _exit(1);
  atomic_store(&sh->start, k9_now());
  for (uint64_t i = 0; i < K9_MAX_ZONES; i++) {
    {
      PP_ZONE("k9");
      struct timespec ts = {0, 200000};
      nanosleep(&ts, NULL);
    }
    sh->end_ns[i] = k9_now();
    atomic_store(&sh->done, i + 1);
  }
  for (;;)
    pause();
}

/* Zones called k9 in the trace (0 when it cannot be read). */
static uint64_t k9_zones(const char *path) {
  pp_trace t;
  char err[512];
  if (pp_trace_read_file(path, &t, err, sizeof err) != 0)
    return 0;
  pp_analysis a;
  memset(&a, 0, sizeof a);
  uint64_t n = 0;
  if (pp_analyze(&t, &a) == 0)
    for (size_t i = 0; i < a.prof.nzones; i++) {
      uint32_t loc = a.prof.zones[i].loc;
      if (loc < t.nlocs && t.locs[loc].name && !strcmp(t.locs[loc].name, "k9"))
        n += a.prof.zones[i].count;
    }
  pp_analysis_free(&a);
  pp_trace_free(&t);
  return n;
}

static void k9_print(const char *what, double *v, int n, const char *unit) {
  qsort(v, (size_t)n, sizeof *v, k9_cmp);
  printf("  %-5s %9.1f / %9.1f / %9.1f %s", what, v[0], v[n / 2], v[n - 1],
         unit);
}

static int k9_row(const char *dir, pp_mode mode, unsigned flush_ms, int durable,
                  int trials) {
  static const char *const names[] = {"stats", "trace", "flight"};
  char path[4200];
  snprintf(path, sizeof path, "%s/pipeprof-bench-kill9.pptrace", dir);
  k9_shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED)
    return 1;
  double zones[K9_MAX_TRIALS], ms[K9_MAX_TRIALS];
  uint64_t salvaged = 0;
  int n = 0;
  for (int k = 0; k < trials; k++) {
    memset(sh, 0, sizeof *sh);
    unlink(path);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
      break;
    if (pid == 0)
      k9_child(path, mode, flush_ms, durable, sh);
    while (!atomic_load(&sh->start))
      usleep(1000);
    usleep((useconds_t)(300000 + rand() % 400000));
    int64_t tk = k9_now();
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    uint64_t done = atomic_load(&sh->done);
    if (durable) {
      pp_salvage_result r;
      char msg[8192];
      if (pp_salvage(path, "signal SIGKILL", &r, msg, sizeof msg) ==
          PP_SALVAGE_DONE)
        salvaged += r.events;
    }
    uint64_t got = k9_zones(path);
    if (got > done)
      got = done; /* the zone it was closing */
    zones[n] = (double)(done - got);
    /* the kill's clock read may precede the newest zone's by a hair */
    int64_t since = tk - (got ? sh->end_ns[got - 1] : sh->start);
    ms[n] = since > 0 ? (double)since / 1e6 : 0;
    n++;
  }
  unlink(path);
  munmap(sh, sizeof *sh);
  if (!n)
    return 1;
  printf("kill9: %-6s %-7s", names[mode], durable ? "durable" : "memory");
  k9_print("zones lost", zones, n, "");
  k9_print("ms lost", ms, n, "");
  printf("  (%d kills", n);
  if (durable)
    printf(", %llu events salvaged", (unsigned long long)salvaged);
  printf(")\n");
  return 0;
}

int pp_bench_kill9(const char *dir, unsigned flush_ms, int trials) {
  if (trials < 1 || trials > K9_MAX_TRIALS)
    trials = 20;
  srand((unsigned)k9_now());
  printf("kill9: flush_ms %u; min / median / max over each row's kills\n",
         flush_ms);
  int rc = 0;
  static const pp_mode modes[] = {PP_MODE_TRACE, PP_MODE_STATS, PP_MODE_FLIGHT};
  for (size_t m = 0; m < sizeof modes / sizeof *modes; m++)
    for (int durable = 0; durable < 2; durable++)
      rc |= k9_row(dir, modes[m], flush_ms, durable, trials);
  return rc;
}

/* pipeprof-bench --salvage N: salvage speed. A child records in flight
 * mode with N threads of 16 MiB rings, each filled (1.1 M zones), then is
 * killed; the salvager writes the dump from N x 16 MiB of rings (N = 64:
 * 1 GiB). Printed: the rings' bytes, the salvage's wall time and MB/s. */
enum { SV_RING_KIB = 16384, SV_ZONES = 1100000 };

typedef struct sv_shared {
  _Atomic int done;
} sv_shared;

static sv_shared *sv_sh;

static void *sv_thread(void *arg) {
  (void)arg;
  for (int i = 0; i < SV_ZONES; i++) {
    PP_ZONE("salvaged");
  }
  atomic_fetch_add(&sv_sh->done, 1);
  return NULL;
}

int pp_bench_salvage(const char *dir, unsigned threads) {
  char path[4200];
  snprintf(path, sizeof path, "%s/pipeprof-bench-salvage.pptrace", dir);
  sv_sh = mmap(NULL, sizeof *sv_sh, PROT_READ | PROT_WRITE,
               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sv_sh == MAP_FAILED)
    return 1;
  atomic_store(&sv_sh->done, 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0)
    return 1;
  if (pid == 0) {
    pp_config c;
    pp_config_init(&c);
    c.out_path = path;
    c.mode = PP_MODE_FLIGHT;
    c.buffer_kib = SV_RING_KIB;
    if (pp_init(&c) != PP_OK)
      _exit(1);
    pthread_t th[256];
    for (unsigned i = 0; i < threads; i++)
      pthread_create(&th[i], NULL, sv_thread, NULL);
    for (;;)
      pause();
  }
  while (atomic_load(&sv_sh->done) < (int)threads)
    usleep(10000);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  pp_salvage_result r;
  char msg[8192];
  int64_t t0 = k9_now();
  int rc = pp_salvage(path, "signal SIGKILL", &r, msg, sizeof msg);
  double s = (double)(k9_now() - t0) / 1e9;
  double bytes = (double)threads * SV_RING_KIB * 1024.0;
  if (rc == PP_SALVAGE_DONE)
    printf("salvage: %u rings of %u MiB (%.2f GiB): %llu events in %.2f s, "
           "%.0f MB/s of rings\n",
           threads, SV_RING_KIB / 1024, bytes / (1 << 30),
           (unsigned long long)r.events, s, bytes / s / 1e6);
  else
    printf("salvage: failed: %s\n", msg);
  unlink(path);
  munmap(sv_sh, sizeof *sv_sh);
  return rc == PP_SALVAGE_DONE ? 0 : 1;
}
