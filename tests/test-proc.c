/* SPDX-License-Identifier: MIT */
/*
 * Tests for the /proc and /sys reader (src/collect/proc.c) on fixture trees
 * under tests/fixtures/sysroot/ (see the README there): known utilisation
 * from a 4-CPU /proc/stat pair, meminfo, loadavg, PSI, cpufreq policies
 * and the /proc/cpuinfo fallback, thermal_throttle, hwmon chips and
 * thermal zones, NUMA nodes, "unavailable:" reasons for missing and
 * unreadable files (EACCES by chmod when not root, by the reader's fault
 * injection when root), counters going backwards on CPU hotplug, a process
 * tree whose comm holds spaces and parentheses, and the departed
 * accumulator when processes exit. One test samples the real /proc of the
 * machine and the test process itself. The threads of a tree
 * (pp_collect_threads) on a fixture (comm with spaces and parentheses, the
 * bound, an unreadable thread) and on the real /proc (named threads of this
 * process), and a child that joins the tree between two samples.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/proc.h"
#include "pipeprof.h"
#include "runner.h"

static const char *fixture(const char *name) {
  static char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/tests/fixtures/sysroot/%s", pp_test_srcdir(),
           name);
  return path;
}

/* Copy a fixture tree into the test's scratch directory; returns its path. */
static const char *copy_fixture(const char *name) {
  static char dst[PATH_MAX];
  snprintf(dst, sizeof dst, "%s/%s", pp_test_tmpdir(), name);
  char *out = NULL;
  int rc = pp_test_run(&out, "cp -R '%s' '%s'", fixture(name), dst);
  if (rc != 0)
    PP_FAIL("cp failed (%d): %s", rc, out ? out : "");
  free(out);
  return dst;
}

static void write_file(const char *root, const char *rel, const char *text) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  FILE *f = fopen(path, "w"); /* truncates in place: kept fds see it */
  if (!f)
    PP_FAIL("cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

static void remove_tree(const char *root, const char *rel) {
  CHECK_EQ(pp_test_run(NULL, "rm -rf '%s/%s'", root, rel), 0);
}

static uint64_t ticks_ns(uint64_t ticks) {
  long tck = sysconf(_SC_CLK_TCK);
  return ticks * (1000000000u / (uint64_t)tck);
}

#define AVAIL(s, g) (((s).avail >> (g)) & 1u)
#define GIB ((uint64_t)1 << 30)

PP_TEST(proc_system_fixture) {
  pp_collect_proc *r = pp_collect_proc_open(fixture("full"));
  CHECK(r != NULL);
  CHECK_EQ(pp_collect_proc_cpu_slots(r), 4);
  pp_system_sample s = {0};
  CHECK_EQ(pp_collect_system(r, &s), PP_OK);
  CHECK(s.t_ns > 0);
  CHECK_EQ(s.clk_tck, sysconf(_SC_CLK_TCK));

  /* /proc/stat */
  CHECK(AVAIL(s, PP_COLLECT_CPU));
  CHECK_EQ(s.ncpu, 4);
  CHECK_EQ(s.ncpu_slots, 4);
  CHECK_EQ_U(s.total.user, 10000);
  CHECK_EQ_U(s.total.steal, 5);
  CHECK(s.cpu[3].online);
  CHECK_EQ_U(s.cpu[3].times.irq, 10);
  CHECK_EQ_U(s.cpu[3].times.softirq, 50);
  CHECK_EQ_U(s.ctxt, 1000000);
  CHECK_EQ_U(s.intr, 500000);
  CHECK_EQ_U(s.processes, 5000);
  CHECK_EQ_U(s.procs_running, 3);
  CHECK_EQ_U(s.procs_blocked, 1);
  CHECK_EQ_U(s.boot_time_s, 1700000000);

  /* /proc/loadavg and /proc/meminfo (bytes; Shmem not ShmemHugePages,
   * Cached not SwapCached) */
  CHECK_NEAR(s.load1, 1.25, 1e-12);
  CHECK_NEAR(s.load5, 0.75, 1e-12);
  CHECK_NEAR(s.load15, 0.50, 1e-12);
  CHECK_EQ_U(s.mem_total, UINT64_C(16314564) * 1024);
  CHECK_EQ_U(s.mem_free, UINT64_C(1234567) * 1024);
  CHECK_EQ_U(s.mem_available, UINT64_C(8000000) * 1024);
  CHECK_EQ_U(s.buffers, UINT64_C(200000) * 1024);
  CHECK_EQ_U(s.cached, UINT64_C(6000000) * 1024);
  CHECK_EQ_U(s.swap_total, UINT64_C(2097148) * 1024);
  CHECK_EQ_U(s.swap_free, UINT64_C(2097000) * 1024);
  CHECK_EQ_U(s.shmem, UINT64_C(300000) * 1024);

  /* PSI: cpu/memory/io present, irq absent with a reason */
  CHECK(AVAIL(s, PP_COLLECT_PSI_CPU));
  CHECK(s.psi[PP_PSI_CPU].has_some && s.psi[PP_PSI_CPU].has_full);
  CHECK_NEAR(s.psi[PP_PSI_CPU].some_avg10, 12.5, 1e-9);
  CHECK_NEAR(s.psi[PP_PSI_CPU].some_avg300, 1.25, 1e-9);
  CHECK_EQ_U(s.psi[PP_PSI_CPU].some_total_us, 1000000);
  CHECK_NEAR(s.psi[PP_PSI_MEMORY].full_avg10, 0.2, 1e-9);
  CHECK_EQ_U(s.psi[PP_PSI_MEMORY].full_total_us, 100000);
  CHECK_EQ_U(s.psi[PP_PSI_IO].some_total_us, 3000000);
  CHECK(!AVAIL(s, PP_COLLECT_PSI_IRQ));
  CHECK(!s.psi[PP_PSI_IRQ].has_some);
  CHECK(isnan(s.psi[PP_PSI_IRQ].some_avg10));
  CHECK_EQ_U(s.psi[PP_PSI_IRQ].some_total_us, PP_COLLECT_NONE);
  CHECK_CONTAINS(pp_collect_proc_reason(r, PP_COLLECT_PSI_IRQ),
                 "unavailable: no such file ");
  CHECK_CONTAINS(pp_collect_proc_reason(r, PP_COLLECT_PSI_IRQ),
                 "/proc/pressure/irq (needs kernel 6.1+");

  /* cpufreq: two policies covering two CPUs each (scaling_cur_freq wins
   * over the cpuinfo fallback) */
  CHECK(AVAIL(s, PP_COLLECT_CPUFREQ));
  CHECK_EQ(s.freq_source, PP_FREQ_CPUFREQ);
  CHECK_EQ_U(s.cpu[0].freq_khz, 2400000);
  CHECK_EQ_U(s.cpu[1].freq_khz, 2400000);
  CHECK_EQ_U(s.cpu[2].freq_khz, 3100000);
  CHECK_EQ_U(s.cpu[3].freq_khz, 3100000);

  /* thermal_throttle */
  CHECK(AVAIL(s, PP_COLLECT_THROTTLE));
  for (int c = 0; c < 4; c++) {
    CHECK_EQ_U(s.cpu[c].throttle_core, (uint64_t)c * 10);
    CHECK_EQ_U(s.cpu[c].throttle_package, 7);
  }

  /* temperatures: hwmon (by chip, then input number), then zones */
  CHECK(AVAIL(s, PP_COLLECT_HWMON));
  CHECK(AVAIL(s, PP_COLLECT_THERMAL));
  CHECK_EQ(s.ntemps, 5);
  CHECK_EQ(s.temps[0].kind, PP_TEMP_HWMON);
  CHECK_STR(s.temps[0].chip, "coretemp");
  CHECK_STR(s.temps[0].label, "Package id 0");
  CHECK_NEAR(s.temps[0].celsius, 45.0, 1e-9);
  CHECK_STR(s.temps[1].label, "Core 0");
  CHECK_NEAR(s.temps[1].celsius, 43.0, 1e-9);
  CHECK_STR(s.temps[2].chip, "nvme");
  CHECK_STR(s.temps[2].label, "temp1"); /* no temp1_label */
  CHECK_NEAR(s.temps[2].celsius, 38.85, 1e-9);
  CHECK_EQ(s.temps[3].kind, PP_TEMP_THERMAL);
  CHECK_STR(s.temps[3].chip, "x86_pkg_temp");
  CHECK_STR(s.temps[3].label, "thermal_zone0");
  CHECK_NEAR(s.temps[3].celsius, 46.0, 1e-9);
  CHECK_STR(s.temps[4].chip, "acpitz");
  CHECK_NEAR(s.temps[4].celsius, -1.5, 1e-9); /* signed millidegrees */

  /* NUMA */
  CHECK(AVAIL(s, PP_COLLECT_NUMA));
  CHECK_EQ(s.nnodes, 2);
  CHECK_EQ(s.nodes[0].node, 0);
  CHECK_EQ(s.nodes[1].node, 1);
  CHECK_EQ_U(s.nodes[0].mem_total, UINT64_C(8157282) * 1024);
  CHECK_EQ_U(s.nodes[0].mem_used, UINT64_C(7557282) * 1024);
  CHECK_EQ_U(s.nodes[1].mem_free, UINT64_C(634567) * 1024);

  for (int g = 0; g < PP_COLLECT_NGROUPS; g++)
    if (g != PP_COLLECT_PSI_IRQ && pp_collect_proc_reason(r, g))
      PP_FAIL("group %s: %s", pp_collect_group_name(g),
              pp_collect_proc_reason(r, g));

  /* A second sample reuses the arrays. */
  pp_cpu_sample *cpu = s.cpu;
  pp_temp_sample *temps = s.temps;
  CHECK_EQ(pp_collect_system(r, &s), PP_OK);
  CHECK(s.cpu == cpu && s.temps == temps);
  CHECK_EQ_U(s.total.user, 10000);

  pp_system_sample_free(&s);
  CHECK(s.cpu == NULL);
  pp_collect_proc_close(r);
  pp_collect_proc_close(NULL);
  pp_system_sample_free(NULL);
}

PP_TEST(proc_system_rates) {
  pp_collect_proc *r0 = pp_collect_proc_open(fixture("full"));
  pp_collect_proc *r1 = pp_collect_proc_open(fixture("later"));
  CHECK(r0 && r1);
  pp_system_sample a = {0}, b = {0};
  CHECK_EQ(pp_collect_system(r0, &a), PP_OK);
  CHECK_EQ(pp_collect_system(r1, &b), PP_OK);
  a.t_ns = 1000000000;
  b.t_ns = 3000000000; /* 2 s later */
  pp_system_rates x = {0};
  CHECK_EQ(pp_collect_system_rates(&a, &b, &x), PP_OK);
  CHECK_NEAR(x.dt_s, 2.0, 1e-12);
  CHECK_EQ(x.ncpu_slots, 4);

  /* total: 400 ticks, user+nice 145, sys+irq+softirq 35, iowait 10,
   * steal 10, idle 200 */
  CHECK(x.total.valid);
  CHECK_NEAR(x.total.user, 145.0 / 400, 1e-12);
  CHECK_NEAR(x.total.system, 35.0 / 400, 1e-12);
  CHECK_NEAR(x.total.iowait, 10.0 / 400, 1e-12);
  CHECK_NEAR(x.total.steal, 10.0 / 400, 1e-12);
  CHECK_NEAR(x.total.idle, 0.5, 1e-12);
  CHECK_NEAR(x.total.busy, 0.475, 1e-12);
  /* per core, 100 ticks each */
  CHECK(x.cpu[0].valid);
  CHECK_NEAR(x.cpu[0].user, 0.5, 1e-12);
  CHECK_NEAR(x.cpu[0].system, 0.1, 1e-12);
  CHECK_NEAR(x.cpu[0].busy, 0.6, 1e-12);
  CHECK_NEAR(x.cpu[1].user, 0.25, 1e-12);
  CHECK_NEAR(x.cpu[1].iowait, 0.1, 1e-12);
  CHECK_NEAR(x.cpu[1].busy, 0.3, 1e-12);
  CHECK_NEAR(x.cpu[2].busy, 0.0, 1e-12);
  CHECK_NEAR(x.cpu[2].idle, 1.0, 1e-12);
  CHECK_NEAR(x.cpu[3].user, 0.7, 1e-12);
  CHECK_NEAR(x.cpu[3].system, 0.2, 1e-12);
  CHECK_NEAR(x.cpu[3].steal, 0.1, 1e-12);
  CHECK_NEAR(x.cpu[3].busy, 1.0, 1e-12);
  for (int c = 0; c < 4; c++)
    CHECK_NEAR(x.cpu[c].busy + x.cpu[c].idle + x.cpu[c].iowait, 1.0, 1e-12);

  CHECK_NEAR(x.ctxt_per_s, 1000.0, 1e-9);
  CHECK_NEAR(x.intr_per_s, 1500.0, 1e-9);
  CHECK_NEAR(x.forks_per_s, 5.0, 1e-9);
  CHECK_NEAR(x.psi_some[PP_PSI_CPU], 0.25, 1e-12);
  CHECK_NEAR(x.psi_full[PP_PSI_CPU], 0.0, 1e-12);
  CHECK_NEAR(x.psi_some[PP_PSI_MEMORY], 0.1, 1e-12);
  CHECK_NEAR(x.psi_full[PP_PSI_MEMORY], 0.025, 1e-12);
  CHECK_NEAR(x.psi_some[PP_PSI_IO], 0.0, 1e-12);
  CHECK(isnan(x.psi_some[PP_PSI_IRQ]));

  /* no time elapsed, or reversed: rejected */
  b.t_ns = a.t_ns;
  CHECK_EQ(pp_collect_system_rates(&a, &b, &x), PP_EINVAL);

  pp_system_rates_free(&x);
  pp_system_sample_free(&a);
  pp_system_sample_free(&b);
  pp_collect_proc_close(r0);
  pp_collect_proc_close(r1);
}

PP_TEST(proc_system_counters_backwards) {
  /* One reader, /proc/stat rewritten in place between samples (later ->
   * hotplug): cpu3 went offline, cpu2's user time went backwards, the
   * "cpu" total and ctxt/intr dropped. Only cpu0 gives a rate. */
  const char *root = copy_fixture("later");
  pp_collect_proc *r = pp_collect_proc_open(root);
  CHECK(r != NULL);
  pp_system_sample a = {0}, b = {0};
  CHECK_EQ(pp_collect_system(r, &a), PP_OK);
  char *text = pp_test_slurp(fixture("hotplug/proc/stat"), NULL);
  CHECK(text != NULL);
  write_file(root, "proc/stat", text);
  free(text);
  CHECK_EQ(pp_collect_system(r, &b), PP_OK);
  CHECK_EQ(b.ncpu, 3);
  CHECK_EQ(b.ncpu_slots, 4);
  CHECK(a.cpu[3].online);
  CHECK(!b.cpu[3].online);
  a.t_ns = 1000000000;
  b.t_ns = 2000000000;
  pp_system_rates x = {0};
  CHECK_EQ(pp_collect_system_rates(&a, &b, &x), PP_OK);
  CHECK(!x.total.valid);
  CHECK(isnan(x.total.busy));
  CHECK(x.cpu[0].valid);
  CHECK_NEAR(x.cpu[0].busy, 0.1, 1e-12);
  CHECK(!x.cpu[1].valid); /* no ticks elapsed */
  CHECK(!x.cpu[2].valid); /* user went backwards */
  CHECK(!x.cpu[3].valid); /* offline */
  CHECK(isnan(x.cpu[3].user));
  CHECK(isnan(x.ctxt_per_s));
  CHECK(isnan(x.intr_per_s));
  CHECK_NEAR(x.forks_per_s, 10.0, 1e-9);
  for (size_t c = 0; c < x.ncpu_slots; c++)
    CHECK(!(x.cpu[c].busy < 0));
  CHECK_NEAR(x.psi_some[PP_PSI_CPU], 0.0, 1e-12);
  CHECK(isnan(x.psi_some[PP_PSI_IRQ])); /* absent: NAN, not 0 */

  /* A sample from a reader with fewer CPU slots still compares. */
  pp_collect_proc *r2 = pp_collect_proc_open(fixture("hotplug"));
  CHECK(r2 != NULL);
  pp_system_sample c = {0};
  CHECK_EQ(pp_collect_system(r2, &c), PP_OK);
  CHECK_EQ(c.ncpu_slots, 3);
  c.t_ns = 2000000000;
  CHECK_EQ(pp_collect_system_rates(&a, &c, &x), PP_OK);
  CHECK_EQ(x.ncpu_slots, 4);
  CHECK(x.cpu[0].valid);
  CHECK(!x.cpu[3].valid);
  pp_system_sample_free(&c);
  pp_collect_proc_close(r2);

  pp_system_rates_free(&x);
  pp_system_sample_free(&a);
  pp_system_sample_free(&b);
  pp_collect_proc_close(r);
}

PP_TEST(proc_system_unavailable) {
  /* A VM-like tree: no /sys at all, no PSI, no MemAvailable. */
  const char *root = fixture("minimal");
  pp_collect_proc *r = pp_collect_proc_open(root);
  CHECK(r != NULL);
  pp_system_sample s = {0};
  CHECK_EQ(pp_collect_system(r, &s), PP_OK);
  CHECK(AVAIL(s, PP_COLLECT_CPU));
  CHECK(AVAIL(s, PP_COLLECT_MEMINFO));
  CHECK(AVAIL(s, PP_COLLECT_LOADAVG));
  CHECK_EQ(s.ncpu, 2);
  CHECK_EQ_U(s.total.idle, 3000);
  CHECK_EQ_U(s.total.iowait, 0); /* 4-field line of an old kernel */
  CHECK_EQ_U(s.mem_total, UINT64_C(2048000) * 1024);
  CHECK_EQ_U(s.mem_available, PP_COLLECT_NONE);
  CHECK_EQ_U(s.shmem, PP_COLLECT_NONE);
  CHECK_EQ_U(s.boot_time_s, PP_COLLECT_NONE);

  /* cpufreq falls back to /proc/cpuinfo "cpu MHz" */
  CHECK(AVAIL(s, PP_COLLECT_CPUFREQ));
  CHECK_EQ(s.freq_source, PP_FREQ_CPUINFO);
  CHECK_EQ_U(s.cpu[0].freq_khz, 2095994);
  CHECK_EQ_U(s.cpu[1].freq_khz, 3000500);

  char want[PATH_MAX + 128];
  snprintf(want, sizeof want,
           "unavailable: no such file %s/sys/class/hwmon (no sensors "
           "exposed)",
           root);
  CHECK_STR(pp_collect_proc_reason(r, PP_COLLECT_HWMON), want);
  CHECK(!AVAIL(s, PP_COLLECT_HWMON));
  CHECK_EQ(s.ntemps, 0);
  CHECK_CONTAINS(pp_collect_proc_reason(r, PP_COLLECT_THERMAL),
                 "/sys/class/thermal (no thermal zones)");
  CHECK_CONTAINS(pp_collect_proc_reason(r, PP_COLLECT_THROTTLE),
                 "unavailable: no such file");
  CHECK_CONTAINS(pp_collect_proc_reason(r, PP_COLLECT_NUMA),
                 "/sys/devices/system/node");
  CHECK_CONTAINS(pp_collect_proc_reason(r, PP_COLLECT_PSI_MEMORY),
                 "/proc/pressure/memory (kernel without PSI");
  CHECK(!AVAIL(s, PP_COLLECT_PSI_CPU));
  CHECK(isnan(s.psi[PP_PSI_CPU].some_avg10));
  CHECK_EQ(s.nnodes, 0);
  CHECK_EQ_U(s.cpu[0].throttle_core, PP_COLLECT_NONE);
  CHECK(pp_collect_proc_reason(r, PP_COLLECT_CPU) == NULL);
  pp_system_sample_free(&s);
  pp_collect_proc_close(r);

  /* A root that does not exist is an error of open, not of sampling. */
  errno = 0;
  CHECK(pp_collect_proc_open("/nonexistent/pipeprof-sysroot") == NULL);
  CHECK_EQ(errno, ENOENT);
}

PP_TEST(proc_system_faults) {
  pp_collect_proc *r = pp_collect_proc_open(fixture("full"));
  CHECK(r != NULL);
  pp_system_sample s = {0};

  /* A kept-open file failing at read time. */
  CHECK_EQ(pp_collect_proc_inject(r, "proc/loadavg", EIO), PP_OK);
  CHECK_EQ(pp_collect_system(r, &s), PP_OK);
  CHECK(!AVAIL(s, PP_COLLECT_LOADAVG));
  CHECK(isnan(s.load1));
  CHECK(AVAIL(s, PP_COLLECT_MEMINFO));
  CHECK_CONTAINS(pp_collect_proc_reason(r, PP_COLLECT_LOADAVG),
                 "unavailable: input/output error reading ");
  CHECK_CONTAINS(pp_collect_proc_reason(r, PP_COLLECT_LOADAVG),
                 "/proc/loadavg");
  CHECK_EQ(pp_collect_proc_inject(r, "proc/loadavg", 0), PP_OK);
  CHECK_EQ(pp_collect_system(r, &s), PP_OK);
  CHECK(AVAIL(s, PP_COLLECT_LOADAVG));
  CHECK(pp_collect_proc_reason(r, PP_COLLECT_LOADAVG) == NULL);

  /* Discovery-time failures take effect at the next rescan. */
  CHECK_EQ(pp_collect_proc_inject(r, "sys/class/hwmon", EACCES), PP_OK);
  CHECK_EQ(pp_collect_proc_rescan(r), PP_OK);
  CHECK_EQ(pp_collect_system(r, &s), PP_OK);
  CHECK(!AVAIL(s, PP_COLLECT_HWMON));
  CHECK(AVAIL(s, PP_COLLECT_THERMAL));
  CHECK_EQ(s.ntemps, 2);
  CHECK_CONTAINS(pp_collect_proc_reason(r, PP_COLLECT_HWMON),
                 "unavailable: permission denied reading ");
  CHECK_CONTAINS(pp_collect_proc_reason(r, PP_COLLECT_HWMON),
                 "/sys/class/hwmon");

  /* One sensor failing: NAN for it, the group stays available. */
  CHECK_EQ(pp_collect_proc_inject(r, "sys/class/hwmon", 0), PP_OK);
  CHECK_EQ(pp_collect_proc_rescan(r), PP_OK);
  CHECK_EQ(
      pp_collect_proc_inject(r, "sys/class/hwmon/hwmon1/temp1_input", ENODATA),
      PP_OK);
  CHECK_EQ(pp_collect_system(r, &s), PP_OK);
  CHECK(AVAIL(s, PP_COLLECT_HWMON));
  CHECK_EQ(s.ntemps, 5);
  CHECK(isnan(s.temps[2].celsius));
  CHECK_NEAR(s.temps[0].celsius, 45.0, 1e-9);

  /* All cpufreq policies failing: unavailable, frequencies NONE. */
  CHECK_EQ(
      pp_collect_proc_inject(
          r, "sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq", EACCES),
      PP_OK);
  CHECK_EQ(
      pp_collect_proc_inject(
          r, "sys/devices/system/cpu/cpufreq/policy2/scaling_cur_freq", EACCES),
      PP_OK);
  CHECK_EQ(pp_collect_system(r, &s), PP_OK);
  CHECK(!AVAIL(s, PP_COLLECT_CPUFREQ));
  CHECK_EQ(s.freq_source, PP_FREQ_NONE);
  CHECK_EQ_U(s.cpu[0].freq_khz, PP_COLLECT_NONE);
  CHECK_CONTAINS(pp_collect_proc_reason(r, PP_COLLECT_CPUFREQ),
                 "permission denied reading");

  CHECK_EQ(pp_collect_proc_inject(r, NULL, EIO), PP_EINVAL);
  CHECK_STR(pp_collect_group_name(PP_COLLECT_PSI_IO), "psi_io");
  pp_system_sample_free(&s);
  pp_collect_proc_close(r);
}

/* Fixture tree: 1 init, 100 pipeline (root), 101 "a) (b c" (child),
 * 102 worker (grandchild), 200 sshd, 300 "x) S 100 1 " (ppid 1). */
PP_TEST(proc_tree_fixture) {
  pp_collect_proc *r = pp_collect_proc_open(fixture("full"));
  CHECK(r != NULL);
  pp_tree_sample t = {0};
  CHECK_EQ(pp_collect_tree(r, 100, &t), PP_OK);
  CHECK(t.root_alive);
  CHECK_EQ(t.root, 100);
  CHECK_EQ(t.nproc, 3);
  CHECK_EQ(t.procs[0].pid, 100);
  CHECK_EQ(t.procs[1].pid, 101);
  CHECK_EQ(t.procs[2].pid, 102);
  CHECK(pp_tree_sample_find(&t, 300) == NULL);
  CHECK(pp_tree_sample_find(&t, 1) == NULL);

  const pp_proc_sample *c = pp_tree_sample_find(&t, 101);
  CHECK(c != NULL);
  CHECK_STR(c->comm, "a) (b c");
  CHECK_EQ(c->ppid, 100);
  CHECK_EQ(c->state, 'R');
  CHECK_EQ_U(c->start_ticks, 10100);
  CHECK_EQ_U(c->c.utime_ns, ticks_ns(150));
  CHECK_EQ_U(c->c.stime_ns, ticks_ns(50));
  CHECK_EQ_U(c->c.minflt, 2000);
  CHECK_EQ_U(c->c.majflt, 2);
  CHECK_EQ_U(c->num_threads, 2);
  CHECK_EQ_U(c->rss_bytes, UINT64_C(51200) * 1024);
  CHECK_EQ_U(c->hwm_bytes, UINT64_C(60000) * 1024);
  CHECK_EQ_U(c->vsize_bytes, UINT64_C(524288) * 1024);
  CHECK_EQ_U(c->c.vol_ctxt, 500);
  CHECK_EQ_U(c->c.nonvol_ctxt, 50);
  CHECK_EQ_U(c->c.rchar, 200000);
  CHECK_EQ_U(c->c.wchar, 100000);
  CHECK_EQ_U(c->c.read_bytes, 40960);
  CHECK_EQ_U(c->c.write_bytes, 20480);
  CHECK_EQ(c->flags, PP_PROC_HAS_STATUS | PP_PROC_HAS_IO);
  CHECK_STR(pp_tree_sample_find(&t, 100)->comm, "pipeline");

  /* sums over the tree */
  CHECK_EQ_U(t.alive.utime_ns, ticks_ns(300 + 150 + 50));
  CHECK_EQ_U(t.alive.stime_ns, ticks_ns(100 + 50 + 25));
  CHECK_EQ_U(t.alive.minflt, 8000);
  CHECK_EQ_U(t.alive.majflt, 13);
  CHECK_EQ_U(t.alive.vol_ctxt, 1700);
  CHECK_EQ_U(t.alive.nonvol_ctxt, 170);
  CHECK_EQ_U(t.alive.rchar, 1230000);
  CHECK_EQ_U(t.alive.read_bytes, 409600 + 40960 + 4096);
  CHECK_EQ_U(t.num_threads, 7);
  CHECK_EQ_U(t.rss_bytes, ((uint64_t)(102400 + 51200 + 25600)) * 1024);
  CHECK_EQ_U(t.vsize_bytes, GIB + GIB / 2 + GIB / 4);
  CHECK_EQ_U(t.rss_peak_bytes, t.rss_bytes);
  CHECK_EQ_U(t.hwm_max_bytes, UINT64_C(150000) * 1024);
  CHECK_EQ_U(t.ndeparted, 0);
  CHECK_EQ_U(t.departed.utime_ns, 0);
  CHECK_EQ_U(t.total.utime_ns, t.alive.utime_ns);
  CHECK_EQ(t.nio_missing, 0);
  CHECK(pp_collect_proc_reason(r, PP_COLLECT_PROC_IO) == NULL);

  /* a subtree, and a root that does not exist */
  CHECK_EQ(pp_collect_tree(r, 101, &t), PP_OK);
  CHECK_EQ(t.nproc, 2);
  CHECK_EQ(pp_collect_tree(r, 4242, &t), PP_OK);
  CHECK(!t.root_alive);
  CHECK_EQ(t.nproc, 0);
  CHECK_EQ(pp_collect_tree(r, 0, &t), PP_EINVAL);
  pp_tree_sample_free(&t);
  pp_tree_sample_free(NULL);
  pp_collect_proc_close(r);
}

PP_TEST(proc_tree_io_unreadable) {
  const char *root = copy_fixture("full");
  pp_collect_proc *r = pp_collect_proc_open(root);
  CHECK(r != NULL);
  char io[PATH_MAX];
  snprintf(io, sizeof io, "%s/proc/102/io", root);
  if (geteuid() != 0) {
    CHECK_EQ(chmod(io, 0), 0);
  } else {
    /* root reads through mode 000: use the reader's fault injection */
    CHECK_EQ(pp_collect_proc_inject(r, "proc/102/io", EACCES), PP_OK);
  }
  pp_tree_sample a = {0}, b = {0};
  CHECK_EQ(pp_collect_tree(r, 100, &a), PP_OK);
  CHECK_EQ(a.nproc, 3);
  CHECK_EQ(a.nio_missing, 1);
  const pp_proc_sample *p = pp_tree_sample_find(&a, 102);
  CHECK(p != NULL);
  CHECK_EQ(p->flags, PP_PROC_HAS_STATUS);
  CHECK_EQ_U(p->c.rchar, PP_COLLECT_NONE);
  CHECK_EQ_U(p->c.write_bytes, PP_COLLECT_NONE);
  CHECK_EQ_U(p->c.utime_ns, ticks_ns(50)); /* the rest still works */
  CHECK_EQ_U(p->c.vol_ctxt, 200);
  CHECK_EQ_U(pp_tree_sample_find(&a, 101)->c.rchar, 200000);
  CHECK_EQ_U(a.alive.rchar, 1200000); /* readable processes only */
  const char *why = pp_collect_proc_reason(r, PP_COLLECT_PROC_IO);
  CHECK_CONTAINS(why, "unavailable: permission denied reading ");
  CHECK_CONTAINS(why, "/proc/102/io");

  CHECK_EQ(pp_collect_tree(r, 100, &b), PP_OK);
  a.t_ns = 1000000000;
  b.t_ns = 2000000000;
  pp_tree_rates x;
  CHECK_EQ(pp_collect_tree_rates(&a, &b, &x), PP_OK);
  CHECK(isnan(x.read_bytes_per_s)); /* partial I/O sums give no rate */
  CHECK(isnan(x.rchar_per_s));
  CHECK_NEAR(x.cpu_pct, 0.0, 1e-12);
  CHECK_NEAR(x.vol_ctxt_per_s, 0.0, 1e-12);

  /* readable again: reason cleared */
  if (geteuid() != 0)
    CHECK_EQ(chmod(io, 0644), 0);
  else
    CHECK_EQ(pp_collect_proc_inject(r, "proc/102/io", 0), PP_OK);
  CHECK_EQ(pp_collect_tree(r, 100, &b), PP_OK);
  CHECK_EQ(b.nio_missing, 0);
  CHECK(pp_collect_proc_reason(r, PP_COLLECT_PROC_IO) == NULL);
  pp_tree_sample_free(&a);
  pp_tree_sample_free(&b);
  pp_collect_proc_close(r);
}

static const char tail[] =
    "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
    "0 0 0 0\n";

PP_TEST(proc_tree_departed) {
  const char *root = copy_fixture("full");
  pp_collect_proc *r = pp_collect_proc_open(root);
  CHECK(r != NULL);
  pp_tree_sample s1 = {0}, s2 = {0};
  CHECK_EQ(pp_collect_tree(r, 100, &s1), PP_OK);
  CHECK_EQ(s1.nproc, 3);
  uint64_t cpu1 = s1.total.utime_ns + s1.total.stime_ns;

  /* The child 101 exits; its child 102 is re-parented to init and keeps
   * running (10 more ticks of user time): 102 stays tracked, 101's last
   * counters go to the departed accumulator. */
  remove_tree(root, "proc/101");
  char line[512];
  snprintf(line, sizeof line,
           "102 (worker) S 1 100 100 0 -1 4194304 1100 0 1 0 60 25 0 0 20 0 "
           "1 0 10200 268435456 6400 %s",
           tail);
  write_file(root, "proc/102/stat", line);
  CHECK_EQ(pp_collect_tree(r, 100, &s2), PP_OK);
  CHECK_EQ(s2.nproc, 2);
  CHECK(pp_tree_sample_find(&s2, 102) != NULL);
  CHECK_EQ(pp_tree_sample_find(&s2, 102)->ppid, 1);
  CHECK_EQ_U(s2.ndeparted, 1);
  CHECK_EQ_U(s2.departed.utime_ns, ticks_ns(150));
  CHECK_EQ_U(s2.departed.stime_ns, ticks_ns(50));
  CHECK_EQ_U(s2.departed.minflt, 2000);
  CHECK_EQ_U(s2.departed.vol_ctxt, 500);
  CHECK_EQ_U(s2.departed.read_bytes, 40960);
  CHECK_EQ_U(s2.total.utime_ns, ticks_ns(300 + 150 + 60));
  CHECK_EQ_U(s2.total.minflt, 8100);
  CHECK_GE(s2.total.utime_ns + s2.total.stime_ns, cpu1);
  CHECK_EQ_U(s2.rss_bytes, ((uint64_t)(102400 + 25600)) * 1024);
  CHECK_EQ_U(s2.rss_peak_bytes, ((uint64_t)(102400 + 51200 + 25600)) * 1024);
  CHECK_EQ_U(s2.hwm_max_bytes, UINT64_C(150000) * 1024);

  s1.t_ns = 1000000000;
  s2.t_ns = 2000000000;
  pp_tree_rates x;
  CHECK_EQ(pp_collect_tree_rates(&s1, &s2, &x), PP_OK);
  CHECK_NEAR(x.cpu_user_pct, 10.0, 1e-9); /* 10 ticks in 1 s */
  CHECK_NEAR(x.cpu_system_pct, 0.0, 1e-9);
  CHECK_NEAR(x.cpu_pct, 10.0, 1e-9);
  CHECK_NEAR(x.minflt_per_s, 100.0, 1e-9);
  CHECK_NEAR(x.read_bytes_per_s, 0.0, 1e-9);

  /* 102 exits too; then the root. Totals never go backwards. */
  remove_tree(root, "proc/102");
  CHECK_EQ(pp_collect_tree(r, 100, &s1), PP_OK);
  CHECK_EQ(s1.nproc, 1);
  CHECK_EQ_U(s1.ndeparted, 2);
  CHECK_EQ_U(s1.total.utime_ns, s2.total.utime_ns);
  CHECK_EQ_U(s1.total.rchar, s2.total.rchar);
  remove_tree(root, "proc/100");
  CHECK_EQ(pp_collect_tree(r, 100, &s2), PP_OK);
  CHECK(!s2.root_alive);
  CHECK_EQ(s2.nproc, 0);
  CHECK_EQ_U(s2.ndeparted, 3);
  CHECK_EQ_U(s2.total.utime_ns, ticks_ns(510));
  CHECK_EQ_U(s2.alive.utime_ns, 0);

  /* Another root resets the accumulator. */
  CHECK_EQ(pp_collect_tree(r, 200, &s2), PP_OK);
  CHECK_EQ_U(s2.ndeparted, 0);
  CHECK_EQ_U(s2.total.utime_ns, ticks_ns(40));
  pp_tree_sample_free(&s1);
  pp_tree_sample_free(&s2);
  pp_collect_proc_close(r);
}

PP_TEST(proc_tree_pid_reuse) {
  /* 102 exits and an unrelated process gets pid 102 (other start time,
   * parent init): the old one departs, the new one is not in the tree. */
  const char *root = copy_fixture("full");
  pp_collect_proc *r = pp_collect_proc_open(root);
  CHECK(r != NULL);
  pp_tree_sample s = {0};
  CHECK_EQ(pp_collect_tree(r, 100, &s), PP_OK);
  CHECK_EQ(s.nproc, 3);
  char line[512];
  snprintf(line, sizeof line,
           "102 (other) S 1 102 102 0 -1 4194304 1 0 0 0 1 1 0 0 20 0 1 0 "
           "99999 1000 10 %s",
           tail);
  write_file(root, "proc/102/stat", line);
  CHECK_EQ(pp_collect_tree(r, 100, &s), PP_OK);
  CHECK_EQ(s.nproc, 2);
  CHECK(pp_tree_sample_find(&s, 102) == NULL);
  CHECK_EQ_U(s.ndeparted, 1);
  CHECK_EQ_U(s.departed.utime_ns, ticks_ns(50));
  pp_tree_sample_free(&s);
  pp_collect_proc_close(r);
}

static uint64_t cpu_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

PP_TEST(proc_real_machine) {
  pp_collect_proc *r = pp_collect_proc_open("/");
  CHECK(r != NULL);
  pp_system_sample s = {0};
  CHECK_EQ(pp_collect_system(r, &s), PP_OK);
  CHECK(AVAIL(s, PP_COLLECT_CPU));
  CHECK(AVAIL(s, PP_COLLECT_MEMINFO));
  CHECK_GT(s.mem_total, 0);
  CHECK(s.mem_total != PP_COLLECT_NONE);
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  CHECK_EQ(s.ncpu, online);
  CHECK_GE(s.ncpu_slots, s.ncpu);
  CHECK_GT(s.total.user + s.total.system + s.total.idle, 0);
  /* Print what this machine provides (informative, TAP comments). */
  for (int g = 0; g < PP_COLLECT_NGROUPS; g++) {
    const char *why = pp_collect_proc_reason(r, g);
    printf("# %-12s %s\n", pp_collect_group_name(g), why ? why : "ok");
  }

  pp_tree_sample a = {0}, b = {0};
  CHECK_EQ(pp_collect_tree(r, getpid(), &a), PP_OK);
  CHECK(a.root_alive);
  CHECK_GE(a.nproc, 1);
  const pp_proc_sample *me = pp_tree_sample_find(&a, getpid());
  CHECK(me != NULL);
  CHECK_EQ(me->ppid, getppid());
  CHECK_GT(me->rss_bytes, 0);
  CHECK_GE(me->num_threads, 1);
  CHECK(me->flags & PP_PROC_HAS_STATUS);
  CHECK(me->hwm_bytes != PP_COLLECT_NONE && me->hwm_bytes >= me->rss_bytes / 2);

  /* burn ~100 ms of CPU */
  uint64_t t0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
  volatile uint64_t sink = 0;
  while (cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - t0 < 100000000u)
    for (int i = 0; i < 10000; i++)
      sink += (uint64_t)i * i;
  (void)sink;

  CHECK_EQ(pp_collect_tree(r, getpid(), &b), PP_OK);
  uint64_t d = (b.total.utime_ns + b.total.stime_ns) -
               (a.total.utime_ns + a.total.stime_ns);
  printf("# tree CPU delta %.1f ms\n", (double)d / 1e6);
  CHECK_GE(d, 80000000u);
  CHECK_LE(d, 1000000000u);
  pp_tree_rates x;
  CHECK_EQ(pp_collect_tree_rates(&a, &b, &x), PP_OK);
  /* The rate is the measured CPU over the measured wall time between the
   * scans: how much of that wall time the burn got depends on how busy
   * the machine is, so the check is against the two deltas, not a floor. */
  double dt = (double)(b.t_ns - a.t_ns) / 1e9;
  printf("# tree CPU %.1f%% over %.1f ms\n", x.cpu_pct, dt * 1e3);
  CHECK_GT(x.cpu_pct, 0.0);
  CHECK_NEAR(x.dt_s, dt, 1e-9);
  CHECK_NEAR(x.cpu_pct, (double)d / 1e9 / dt * 100.0, 1e-6 * x.cpu_pct);

  pp_system_sample s2 = {0};
  CHECK_EQ(pp_collect_system(r, &s2), PP_OK);
  pp_system_rates sr = {0};
  CHECK_EQ(pp_collect_system_rates(&s, &s2, &sr), PP_OK);
  if (sr.total.valid)
    CHECK(sr.total.busy >= 0 && sr.total.busy <= 1.0 + 1e-9);
  pp_system_rates_free(&sr);
  pp_system_sample_free(&s);
  pp_system_sample_free(&s2);
  pp_tree_sample_free(&a);
  pp_tree_sample_free(&b);
  pp_collect_proc_close(r);
}

/* ---- threads of the tree ------------------------------------------------- */

static void put_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f)
    PP_FAIL("cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

static void mkdir_p(const char *root, const char *rel) {
  char *out = NULL;
  int rc = pp_test_run(&out, "mkdir -p '%s/%s'", root, rel);
  if (rc != 0)
    PP_FAIL("mkdir failed (%d): %s", rc, out ? out : "");
  free(out);
}

PP_TEST(proc_threads_fixture) {
  const char *root = copy_fixture("full");
  char p[PATH_MAX];
  mkdir_p(root, "proc/101/task/101");
  mkdir_p(root, "proc/101/task/105");
  mkdir_p(root, "proc/101/task/107");
  mkdir_p(root, "proc/101/task/not-a-tid");
  snprintf(p, sizeof p, "%s/proc/101/task/101/stat", root);
  put_file(p, "101 (main) S 100 100 100 0 -1 0 0 0 0 0 30 10 0 0 20 0 "
              "3 0 10100 0 0\n");
  snprintf(p, sizeof p, "%s/proc/101/task/105/stat", root);
  put_file(p, "105 (worker (x) 1) R 100 100 100 0 -1 0 0 0 0 0 70 20 0 0 "
              "20 0 3 0 10150 0 0\n");
  snprintf(p, sizeof p, "%s/proc/101/task/107/stat", root);
  put_file(p, "107 (io) S 100 100 100 0 -1 0 0 0 0 0 1 2 0 0 20 0 3 0 "
              "10160 0 0\n");
  pp_collect_proc *r = pp_collect_proc_open(root);
  CHECK(r != NULL);
  pp_tree_sample t = {0};
  CHECK_EQ(pp_collect_tree(r, 100, &t), PP_OK);
  CHECK_EQ(t.nproc, 3);

  pp_thread_list l = {0};
  CHECK_EQ(pp_collect_threads(r, &t, 16, &l), PP_OK);
  /* 100 and 102 have no task directory in the fixture: no threads */
  CHECK_EQ(l.n, 3);
  CHECK_EQ(l.nmore, 0);
  CHECK_EQ(l.threads[0].tid, 101);
  CHECK_EQ(l.threads[1].tid, 105);
  CHECK_EQ(l.threads[2].tid, 107);
  for (size_t i = 0; i < l.n; i++)
    CHECK_EQ(l.threads[i].pid, 101);
  CHECK_STR(l.threads[0].comm, "main");
  CHECK_STR(l.threads[1].comm, "worker (x) 1");
  CHECK_EQ_U(l.threads[1].utime_ns, ticks_ns(70));
  CHECK_EQ_U(l.threads[1].stime_ns, ticks_ns(20));
  CHECK_EQ_U(l.threads[1].start_ticks, 10150);
  CHECK_EQ_U(l.threads[2].stime_ns, ticks_ns(2));

  /* the bound: read 2, count the third */
  CHECK_EQ(pp_collect_threads(r, &t, 2, &l), PP_OK);
  CHECK_EQ(l.n, 2);
  CHECK_EQ(l.nmore, 1);

  /* a thread whose stat cannot be read is left out, not an error */
  CHECK_EQ(pp_collect_proc_inject(r, "proc/101/task/105/stat", EACCES), PP_OK);
  CHECK_EQ(pp_collect_threads(r, &t, 16, &l), PP_OK);
  CHECK_EQ(l.n, 2);
  CHECK_EQ(l.threads[0].tid, 101);
  CHECK_EQ(l.threads[1].tid, 107);
  /* a damaged stat file too */
  snprintf(p, sizeof p, "%s/proc/101/task/107/stat", root);
  put_file(p, "107 (io S 1 2\n");
  CHECK_EQ(pp_collect_threads(r, &t, 16, &l), PP_OK);
  CHECK_EQ(l.n, 1);

  CHECK_EQ(pp_collect_threads(NULL, &t, 16, &l), PP_EINVAL);
  CHECK_EQ(pp_collect_threads(r, NULL, 16, &l), PP_EINVAL);
  pp_thread_list_free(&l);
  pp_thread_list_free(NULL);
  pp_tree_sample_free(&t);
  pp_collect_proc_close(r);
}

typedef struct named {
  pthread_barrier_t *ready, *done;
  pid_t tid;
  const char *name;
} named;

static void *named_thread(void *arg) {
  named *n = arg;
  n->tid = (pid_t)syscall(SYS_gettid);
  prctl(PR_SET_NAME, n->name, 0, 0, 0);
  pthread_barrier_wait(n->ready);
  pthread_barrier_wait(n->done);
  return NULL;
}

PP_TEST(proc_threads_real) {
  pthread_barrier_t ready, done;
  pthread_barrier_init(&ready, NULL, 3);
  pthread_barrier_init(&done, NULL, 3);
  named a = {&ready, &done, 0, "pp-test-alpha"};
  named b = {&ready, &done, 0, "pp-test-beta"};
  pthread_t ta, tb;
  CHECK_EQ(pthread_create(&ta, NULL, named_thread, &a), 0);
  CHECK_EQ(pthread_create(&tb, NULL, named_thread, &b), 0);
  pthread_barrier_wait(&ready);

  pp_collect_proc *r = pp_collect_proc_open("/");
  CHECK(r != NULL);
  pp_tree_sample t = {0};
  pp_thread_list l = {0};
  CHECK_EQ(pp_collect_tree(r, getpid(), &t), PP_OK);
  CHECK_EQ(pp_collect_threads(r, &t, 1024, &l), PP_OK);
  int seen_a = 0, seen_b = 0, seen_main = 0;
  for (size_t i = 0; i < l.n; i++) {
    const pp_thread_sample *x = &l.threads[i];
    if (x->pid != getpid())
      continue;
    seen_main += x->tid == getpid();
    if (x->tid == a.tid) {
      CHECK_STR(x->comm, "pp-test-alpha");
      seen_a++;
    }
    if (x->tid == b.tid) {
      CHECK_STR(x->comm, "pp-test-beta");
      seen_b++;
    }
  }
  CHECK_EQ(seen_a, 1);
  CHECK_EQ(seen_b, 1);
  CHECK_EQ(seen_main, 1);
  pthread_barrier_wait(&done);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  pthread_barrier_destroy(&ready);
  pthread_barrier_destroy(&done);

  /* a child started after the first sample is in the next one (found
   * through /proc/PID/task/TID/children between full scans of /proc) */
  pid_t kid = fork();
  CHECK(kid >= 0);
  if (kid == 0) {
    pause();
    _exit(0);
  }
  pp_tree_sample t2 = {0};
  CHECK_EQ(pp_collect_tree(r, getpid(), &t2), PP_OK);
  int found = pp_tree_sample_find(&t2, kid) != NULL;
  kill(kid, SIGKILL);
  waitpid(kid, NULL, 0);
  CHECK(found);
  pp_tree_sample_free(&t2);
  pp_thread_list_free(&l);
  pp_tree_sample_free(&t);
  pp_collect_proc_close(r);
}

/* A child for proc_threads_clock_reuse: 8 threads that sleep; SIGUSR1
 * (taken by the main thread only) renames it and forks a grandchild that
 * sleeps, then acks on the pipe. */
static int clock_kid_ack = -1;

static void clock_kid_usr1(int sig) {
  (void)sig;
  prctl(PR_SET_NAME, "pp-renamed", 0, 0, 0);
  if (fork() == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    for (;;)
      pause();
  }
  ssize_t w = write(clock_kid_ack, "u", 1);
  (void)w;
}

static void *clock_kid_sleeper(void *arg) {
  (void)arg;
  for (;;)
    pause();
  return NULL;
}

static void clock_kid_main(int ack) {
  clock_kid_ack = ack;
  /* gone with the test, even when a check ends it early: left behind, it
   * would hold the runner's output open */
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  setpgid(0, 0);
  signal(SIGUSR1, clock_kid_usr1);
  sigset_t s, old;
  sigemptyset(&s);
  sigaddset(&s, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &s, &old);
  for (int i = 0; i < 8; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, clock_kid_sleeper, NULL) != 0)
      _exit(1);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  ssize_t w = write(ack, "r", 1);
  (void)w;
  for (;;)
    pause();
}

/* The threads /proc lists for a process. */
static size_t count_tasks(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  DIR *d = opendir(path);
  if (d == NULL)
    return 0;
  size_t n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

static int same_threads(const pp_thread_list *a, const pp_thread_list *b) {
  if (a->n != b->n || a->nmore != b->nmore)
    return 0;
  for (size_t i = 0; i < a->n; i++) {
    const pp_thread_sample *x = &a->threads[i], *y = &b->threads[i];
    if (x->tid != y->tid || x->pid != y->pid || strcmp(x->comm, y->comm) ||
        x->start_ticks != y->start_ticks || x->utime_ns != y->utime_ns ||
        x->stime_ns != y->stime_ns)
      return 0;
  }
  return 1;
}

/* The threads of a process that has not run since the last call are the
 * last call's (its CPU-time clock has not moved), and are what a read of
 * /proc gives; once it runs they are read again, and what it forked is
 * found between full scans. */
PP_TEST(proc_threads_clock_reuse) {
  int ack[2];
  CHECK_EQ(pipe(ack), 0);
  pid_t kid = fork();
  CHECK(kid >= 0);
  if (kid == 0) {
    close(ack[0]);
    clock_kid_main(ack[1]);
  }
  close(ack[1]);
  char c = 0;
  CHECK_EQ(read(ack[0], &c, 1), 1);
  CHECK_EQ(c, 'r');

  /* Stopped, it cannot run between the reads below, whatever else the
   * process holds (a sanitizer's runtime adds a thread that wakes on its
   * own): its threads are the 8 sleepers, the main one and any such. */
  CHECK_EQ(kill(kid, SIGSTOP), 0);
  int st = 0;
  while (waitpid(kid, &st, WUNTRACED) < 0 && errno == EINTR) {
  }
  CHECK(WIFSTOPPED(st));
  size_t nthreads = count_tasks(kid);
  CHECK(nthreads >= 9);

  pp_collect_proc *r = pp_collect_proc_open("/");
  CHECK(r != NULL);
  pp_tree_sample t = {0};
  pp_thread_list a = {0}, b = {0};
  CHECK_EQ(pp_collect_tree(r, kid, &t), PP_OK);
  CHECK_EQ(t.nproc, 1);
  CHECK_EQ(pp_collect_threads(r, &t, 64, &a), PP_OK);
  CHECK_EQ(a.n, nthreads);
  CHECK_EQ(pp_collect_threads_reused(r), 0);
  /* nothing ran: all 9 taken over, the same as read */
  CHECK_EQ(pp_collect_tree(r, kid, &t), PP_OK);
  CHECK_EQ(t.nproc, 1);
  CHECK_EQ(pp_collect_threads(r, &t, 64, &b), PP_OK);
  CHECK_EQ(pp_collect_threads_reused(r), nthreads);
  CHECK(b.t_ns > a.t_ns);
  CHECK(same_threads(&a, &b));
  /* the bound is kept: a process that no longer fits is read */
  CHECK_EQ(pp_collect_threads(r, &t, 4, &b), PP_OK);
  CHECK_EQ(pp_collect_threads_reused(r), 0);
  CHECK_EQ(b.n, 4);
  CHECK_EQ(b.nmore, nthreads - 4);
  /* and a partial read is not taken over */
  CHECK_EQ(pp_collect_threads(r, &t, 64, &b), PP_OK);
  CHECK_EQ(pp_collect_threads_reused(r), 0);
  CHECK(same_threads(&a, &b));
  CHECK_EQ(pp_collect_threads(r, &t, 64, &b), PP_OK);
  CHECK_EQ(pp_collect_threads_reused(r), nthreads);
  /* with the clocks off every thread is read, with the same figures */
  pp_collect_proc_set_cpu_clocks(r, 0);
  CHECK_EQ(pp_collect_threads(r, &t, 64, &b), PP_OK);
  CHECK_EQ(pp_collect_threads_reused(r), 0);
  CHECK(same_threads(&a, &b));
  pp_collect_proc_set_cpu_clocks(r, 1);
  CHECK_EQ(pp_collect_threads(r, &t, 64, &b), PP_OK);

  /* it runs: renames itself and forks */
  CHECK_EQ(kill(kid, SIGCONT), 0);
  CHECK_EQ(kill(kid, SIGUSR1), 0);
  CHECK_EQ(read(ack[0], &c, 1), 1);
  CHECK_EQ(c, 'u');
  CHECK_EQ(pp_collect_tree(r, kid, &t), PP_OK);
  int nproc = (int)t.nproc;
  CHECK_EQ(pp_collect_threads(r, &t, 64, &b), PP_OK);
  size_t reused = pp_collect_threads_reused(r);
  int renamed = 0;
  for (size_t i = 0; i < b.n; i++)
    renamed +=
        b.threads[i].tid == kid && strcmp(b.threads[i].comm, "pp-renamed") == 0;
  kill(-kid, SIGKILL);
  while (waitpid(kid, NULL, 0) < 0 && errno == EINTR) {
  }
  close(ack[0]);
  CHECK_EQ(nproc, 2); /* the grandchild, found between full scans */
  CHECK_EQ(renamed, 1);
  CHECK_EQ(reused, 0);
  pp_thread_list_free(&a);
  pp_thread_list_free(&b);
  pp_tree_sample_free(&t);
  pp_collect_proc_close(r);
}
