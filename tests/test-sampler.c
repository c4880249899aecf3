/* SPDX-License-Identifier: MIT */
/*
 * The in-process sampler (pp_config.sample_hz, PIPEPROF_SAMPLE_HZ): samples
 * land as counter tracks of the program's own trace, on a thread of their
 * own, and unavailable groups are recorded as metadata with a reason.
 */
#include <dirent.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>

#include "analyze/analysis.h"
#include "model/reader.h"
#include "pipeprof.h"
#include "runner.h"

static const pp_counter_stats *counter(const pp_analysis *a, const char *name) {
  const pp_trace *t = a->trace;
  for (size_t i = 0; i < a->prof.ncounters; i++)
    if (strcmp(pp_trace_loc_name(t, a->prof.counters[i].loc), name) == 0)
      return &a->prof.counters[i];
  return NULL;
}

/* Whether a thread of this process has the kernel name comm. */
static int has_thread_named(const char *comm) {
  DIR *d = opendir("/proc/self/task");
  if (!d)
    return 0;
  int found = 0;
  struct dirent *e;
  while (!found && (e = readdir(d))) {
    char path[300], name[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f)
      continue;
    if (fgets(name, sizeof name, f))
      name[strcspn(name, "\n")] = 0;
    fclose(f);
    found = strcmp(name, comm) == 0;
  }
  closedir(d);
  return found;
}

/* Burn ms milliseconds of this thread's CPU time (not wall time: on a
 * loaded machine wall time passes without the thread running). */
static void burn_cpu(long ms) {
  struct timespec a, b;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  volatile unsigned long x = 0;
  do {
    for (int i = 0; i < 100000; i++)
      x += (unsigned long)i;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  } while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 <
           ms);
}

/* voluntary_ctxt_switches of the thread of this process named comm, or -1.
 * The sampler thread sleeps once after each sample, so this counts its
 * completed samples whatever the load on the machine. */
static long voluntary_switches(const char *comm) {
  DIR *d = opendir("/proc/self/task");
  if (!d)
    return -1;
  long n = -1;
  struct dirent *e;
  while (n < 0 && (e = readdir(d))) {
    char path[300], line[128] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f)
      continue;
    int match = fgets(line, sizeof line, f) &&
                strncmp(line, comm, strlen(comm)) == 0 &&
                line[strlen(comm)] == '\n';
    fclose(f);
    if (!match)
      continue;
    snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
    f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
      if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
        break;
    if (f)
      fclose(f);
  }
  closedir(d);
  return n;
}

/* Samples of the counter name in the trace at path as far as its writer
 * has written it (a session still recording). */
static uint64_t samples_in_file(const char *path, const char *name) {
  pp_trace t;
  pp_analysis a = {0};
  char err[256];
  if (pp_trace_read_file(path, &t, err, sizeof err) != 0)
    return 0; /* not written yet */
  CHECK_EQ(pp_analyze(&t, &a), 0);
  const pp_counter_stats *c = counter(&a, name);
  uint64_t n = c ? c->samples : 0;
  pp_analysis_free(&a);
  pp_trace_free(&t);
  return n;
}

static double timeval_s(struct timeval tv) {
  return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

PP_TEST(sampler_in_process_env) {
  char path[4200], err[256];
  snprintf(path, sizeof path, "%s/s.pptrace", pp_test_tmpdir());
  setenv("PIPEPROF", "1", 1);
  setenv("PIPEPROF_OUT", path, 1);
  setenv("PIPEPROF_SAMPLE_HZ", "50", 1);
  unsetenv("PIPEPROF_OWNER_PID");
  CHECK_EQ(pp_init_from_env(), PP_OK);
  {
    PP_ZONE("work");
    burn_cpu(250);
  }
  /* Wait for five samples however long the machine takes: counted in the
   * trace as the writer flushes it (a deadline only a broken sampler
   * reaches). */
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  time_t deadline = now.tv_sec + 30;
  uint64_t in_file;
  while ((in_file = samples_in_file(path, "proc.cpu_user_s")) < 5) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > deadline)
      PP_FAIL("after 30 s the trace holds %llu samples of proc.cpu_user_s",
              (unsigned long long)in_file);
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  /* pipeprof's own threads carry their names in the kernel (top -H) */
  CHECK(has_thread_named("pp-writer"));
  CHECK(has_thread_named("pp-sampler"));
  CHECK_EQ(pp_shutdown(), PP_OK);
  CHECK(!has_thread_named("pp-writer"));
  struct rusage ru;
  CHECK_EQ(getrusage(RUSAGE_SELF, &ru), 0);
  double user_s = timeval_s(ru.ru_utime);
  pp_trace t;
  pp_analysis a = {0};
  CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  const pp_counter_stats *cpu = counter(&a, "proc.cpu_user_s");
  const pp_counter_stats *rss = counter(&a, "proc.rss_bytes");
  const pp_counter_stats *busy = counter(&a, "sys.cpu.busy_pct");
  CHECK(cpu && rss && busy);
  CHECK_GE(cpu->samples, 6); /* waited for five, plus the last one */
  CHECK_GT(rss->last, 0);
  /* The burn was 0.25 s of CPU time, nearly all of it user time; the last
   * sample, taken at shutdown, holds at least most of it and no more than
   * the kernel's count after shutdown (clock ticks: 10 ms steps). */
  printf("# proc.cpu_user_s last %.3f, getrusage user %.3f\n", cpu->last,
         user_s);
  if (!(cpu->last >= 0.1 && cpu->last <= user_s + 0.02))
    PP_FAIL("proc.cpu_user_s %.3f s: expected in [0.1, %.3f]", cpu->last,
            user_s + 0.02);
  CHECK(busy->max >= 0 && busy->max <= 100);
  CHECK_STR(pp_trace_meta(&t, "sampler.hz"), "50");
  /* the sampler thread is named */
  int named = 0;
  for (size_t i = 0; i < t.nthreads; i++)
    named |= strcmp(t.threads[i].name, "pipeprof sampler") == 0;
  CHECK(named);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(sampler_bad_env_value) {
  setenv("PIPEPROF", "1", 1);
  setenv("PIPEPROF_SAMPLE_HZ", "fast", 1);
  CHECK_EQ(pp_init_from_env(), PP_EENV);
  CHECK_EQ(pp_is_running(), 0);
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.sample_hz = 1001;
  CHECK_EQ(pp_init(&cfg), PP_EINVAL);
}

/* A session sampling at 20 Hz on the sysroot root for ms milliseconds,
 * its trace read into t. */
static void sample_sysroot(const char *root, const char *name, long ms,
                           pp_trace *t) {
  char path[4200], err[256];
  snprintf(path, sizeof path, "%s/%s", pp_test_tmpdir(), name);
  setenv("PIPEPROF_SYSROOT", root, 1);
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.sample_hz = 20;
  cfg.install_signals = 0;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
  CHECK_EQ(pp_shutdown(), PP_OK);
  unsetenv("PIPEPROF_SYSROOT");
  CHECK_EQ(pp_trace_read_file(path, t, err, sizeof err), 0);
}

PP_TEST(sampler_fixture_sysroot_reasons) {
  /* A sysroot without /sys: every sensor group says why it is missing. */
  char root[4200];
  snprintf(root, sizeof root, "%s/tests/fixtures/sysroot/minimal",
           pp_test_srcdir());
  pp_trace t;
  sample_sysroot(root, "f.pptrace", 120, &t);
  const char *hw = pp_trace_meta(&t, "unavailable.hwmon");
  CHECK(hw != NULL);
  CHECK_CONTAINS(hw, "unavailable");
  pp_trace_free(&t);
}

/* A PIPEPROF_SYSROOT with no /proc under it (a mistyped path) samples
 * nothing: the trace says why (META unavailable.proc, every process
 * figure of the report shows it) where it said nothing. */
PP_TEST(sampler_bad_sysroot_is_said) {
  char root[4200];
  snprintf(root, sizeof root, "%s/no-such-root", pp_test_tmpdir());
  pp_trace t;
  sample_sysroot(root, "nothing.pptrace", 0, &t);
  const char *why = pp_trace_meta(&t, "unavailable.proc");
  CHECK(why != NULL);
  CHECK_CONTAINS(why, "no-such-root/proc/stat (No such file or directory)");
  CHECK_CONTAINS(why, "(PIPEPROF_SYSROOT)");
  pp_trace_free(&t);
}

/* Run a session sampling at 50 Hz on the sysroot PIPEPROF_SYSROOT names
 * until the sampler has slept n times, writing energy_uj of intel-rapl:0
 * under it before each wait when step_uj > 0; leaves the trace in path. */
static void sample_fixture_power(const char *path, int n, long step_uj) {
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.sample_hz = 50;
  cfg.install_signals = 0;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  long uj = 100000000; /* the fixture's value */
  long slept = voluntary_switches("pp-sampler");
  for (int i = 0; i < n; i++) {
    if (step_uj > 0) {
      char f[4300];
      uj += step_uj;
      snprintf(f, sizeof f, "%s/sys/class/powercap/intel-rapl:0/energy_uj",
               getenv("PIPEPROF_SYSROOT"));
      FILE *w = fopen(f, "w"); /* same inode: the collector keeps it open */
      CHECK(w != NULL);
      fprintf(w, "%ld\n", uj);
      CHECK_EQ(fclose(w), 0);
    }
    while (voluntary_switches("pp-sampler") <= slept) {
      struct timespec ts = {0, 2000000};
      nanosleep(&ts, NULL);
    }
    slept = voluntary_switches("pp-sampler");
  }
  CHECK_EQ(pp_shutdown(), PP_OK);
}

/* An energy counter that stays put while the program works is not a
 * measurement: nothing recorded, and a reason that says so; one that moves
 * is recorded. */
PP_TEST(sampler_stuck_energy_counter) {
  char src[4200], path[4300], err[256];
  snprintf(src, sizeof src, "%s/tests/fixtures/powercap/two-packages",
           pp_test_srcdir());
  char *out = NULL;
  if (pp_test_run(&out, "cp -R '%s/.' '%s/'", src, pp_test_tmpdir()) != 0)
    PP_FAIL("cp failed: %s", out ? out : "");
  free(out);
  setenv("PIPEPROF_SYSROOT", pp_test_tmpdir(), 1);
  snprintf(path, sizeof path, "%s/stuck.pptrace", pp_test_tmpdir());
  burn_cpu(20);
  sample_fixture_power(path, 4, 0);
  pp_trace t;
  pp_analysis a = {0};
  CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK(counter(&a, "energy.package_j") == NULL);
  CHECK(counter(&a, "power.package_w") == NULL);
  CHECK(counter(&a, "energy.package-0_j") == NULL);
  const char *why = pp_trace_meta(&t, "unavailable.power");
  CHECK(why != NULL);
  CHECK_CONTAINS(why, "intel-rapl:0 and the other energy counters did not "
                      "advance in ");
  pp_energy e;
  CHECK_EQ(pp_run_energy(&a, &e), 0);
  pp_analysis_free(&a);
  pp_trace_free(&t);

  /* The same tree with package-0 moving 1 J per sample. */
  snprintf(path, sizeof path, "%s/moving.pptrace", pp_test_tmpdir());
  sample_fixture_power(path, 4, 1000000);
  CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  const pp_counter_stats *pkg = counter(&a, "energy.package_j");
  CHECK(pkg != NULL);
  CHECK_NEAR(pkg->last, 4.0, 1e-9); /* every write was read by the end */
  CHECK(counter(&a, "energy.package-0_j") != NULL);
  CHECK(counter(&a, "energy.package-1_j") == NULL); /* stayed put */
  CHECK(pp_trace_meta(&t, "unavailable.power") == NULL);
  CHECK_EQ(pp_run_energy(&a, &e), 1);
  CHECK_NEAR(e.cpu_j, 4.0, 1e-9);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  unsetenv("PIPEPROF_SYSROOT");
}
