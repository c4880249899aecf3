/* SPDX-License-Identifier: MIT */
/*
 * Tests of the NVML reader (src/collect/nvml.c) against the fake
 * libnvidia-ml built from tests/fakes/fake_nvml.c: no library, init
 * failures, every metric and its unit, the memory v2 struct version, the
 * process-list grow-and-retry loop, per-metric reasons, a GPU lost mid-run,
 * MIG, clock-event reasons, XID events, energy deltas and GPM; then the
 * sampler glue (counter and META names) and the report's GPU section, fed
 * from the fake through a hand-built trace.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/system.h"
#include "collect/nvml.h"
#include "export/report_gpu.h"
#include "format/pptrace.h"
#include "internal.h"
#include "runner.h"
#include "trace_builder.h"

#define MS 1000000ull

static char script_path[512], log_path[512], lib_path[512];

static void write_script(const char *text) {
  FILE *f = fopen(script_path, "w");
  if (!f)
    PP_FAIL("cannot write %s", script_path);
  fputs(text, f);
  fclose(f);
}

static void append_script(const char *text) {
  FILE *f = fopen(script_path, "a");
  if (!f)
    PP_FAIL("cannot append to %s", script_path);
  fputs(text, f);
  fclose(f);
}

static const char *fake_lib(void) {
#ifdef PP_FAKE_NVML_PATH
  snprintf(lib_path, sizeof lib_path, "%s", PP_FAKE_NVML_PATH);
#else
  snprintf(lib_path, sizeof lib_path, "%s/fakes/libnvidia-ml.so.1",
           pp_test_bindir());
#endif
  if (access(lib_path, R_OK) != 0)
    PP_FAIL("fake NVML not built at %s", lib_path);
  return lib_path;
}

static pp_collect_gpu *open_fake(const char *text) {
  snprintf(script_path, sizeof script_path, "%s/nvml.txt", pp_test_tmpdir());
  snprintf(log_path, sizeof log_path, "%s/nvml.log", pp_test_tmpdir());
  write_script(text);
  remove(log_path);
  setenv("PP_FAKE_NVML", script_path, 1);
  setenv("PP_FAKE_NVML_LOG", log_path, 1);
  pp_collect_gpu *g = pp_collect_gpu_open(fake_lib());
  CHECK(g != NULL);
  return g;
}

/* Calls logged by the fake as "<function> <gpu>" lines. */
static int count_calls(const char *fn, int gpu) {
  char *log = pp_test_slurp(log_path, NULL);
  char needle[160];
  snprintf(needle, sizeof needle, "%s %d\n", fn, gpu);
  int n = 0;
  for (const char *p = log; p && (p = strstr(p, needle)); p++)
    if (p == log || p[-1] == '\n')
      n++;
  free(log);
  return n;
}

static int count_gpu_calls(int gpu) {
  char *log = pp_test_slurp(log_path, NULL);
  char suffix[16];
  snprintf(suffix, sizeof suffix, " %d", gpu);
  int n = 0;
  for (char *line = log; line && *line;) {
    char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    size_t sl = strlen(suffix);
    if (len > sl && memcmp(line + len - sl, suffix, sl) == 0)
      n++;
    line = nl ? nl + 1 : NULL;
  }
  free(log);
  return n;
}

static pp_gpu_sample *new_sample(void) {
  pp_gpu_sample *s = calloc(1, sizeof *s);
  CHECK(s != NULL);
  return s;
}

#define CHECK_AVAIL(s, i, m)                                                \
  do {                                                                      \
    if (!(s)->gpu[i].available[m])                                          \
      PP_FAIL("gpu %d %s unavailable: %s", i, pp_gpu_metric_name(m),        \
              (s)->gpu[i].reason[m]);                                       \
  } while (0)

#define CHECK_UNAVAIL(s, i, m, why)                                         \
  do {                                                                      \
    CHECK_EQ((s)->gpu[i].available[m], 0);                                  \
    CHECK_CONTAINS((s)->gpu[i].reason[m], why);                             \
  } while (0)

static const char two_gpus[] =
    "count 2\n"
    "gpu 0 name NVIDIA-H100\n"
    "gpu 0 uuid GPU-aaaa\n"
    "gpu 0 pci 00000000:17:00.0\n"
    "gpu 0 util 40 30\n"
    "gpu 0 mem 85899345920 536870912 42949672960 42413211648\n"
    "gpu 0 power 312500\n"
    "gpu 0 energy_mj 1000\n"
    "gpu 0 temp 65\n"
    "gpu 0 clock 1980 2619\n"
    "gpu 0 reasons 0x44\n"
    "gpu 0 pcie 1000 250\n"
    "gpu 1 util 5 1\n"
    "gpu 1 mem 25769803776 0 25769803776 0\n"
    "gpu 1 power 75000\n"
    "gpu 1 energy_mj 5000000\n"
    "gpu 1 temp 40\n"
    "gpu 1 clock 210 405\n"
    "gpu 1 reasons 0x1\n"
    "gpu 1 pcie 0 0\n";

PP_TEST(nvml_no_library) {
  char path[512];
  snprintf(path, sizeof path, "%s/nope/libnvidia-ml.so.1", pp_test_tmpdir());
  pp_collect_gpu *g = pp_collect_gpu_open(path);
  CHECK(g != NULL);
  CHECK_CONTAINS(pp_collect_gpu_reason(g), "unavailable: no NVIDIA driver");
  CHECK_CONTAINS(pp_collect_gpu_reason(g), "not found");
  CHECK_EQ(pp_collect_gpu_count(g), 0);
  pp_gpu_sample *s = new_sample();
  pid_t pid = getpid();
  CHECK_EQ(pp_collect_gpu_read(g, &pid, 1, s), 0);
  CHECK_EQ(s->ngpus, 0);
  CHECK_EQ(pp_collect_gpu_read(NULL, NULL, 0, s), -1);
  CHECK_EQ(errno, EINVAL);
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 1, s), -1);
  pp_collect_gpu_close(g);
  pp_collect_gpu_close(NULL);
  free(s);
}

PP_TEST(nvml_init_failures) {
  pp_collect_gpu *g = open_fake("init DRIVER_NOT_LOADED\n");
  CHECK_CONTAINS(pp_collect_gpu_reason(g), "NVIDIA driver not loaded");
  pp_collect_gpu_close(g);
  CHECK_EQ(count_calls("nvmlShutdown", -1), 0); /* init failed: no pair */

  g = open_fake("count 0\n");
  CHECK_STR(pp_collect_gpu_reason(g), "unavailable: no NVIDIA GPU found");
  pp_collect_gpu_close(g);
  CHECK_EQ(count_calls("nvmlShutdown", -1), 1);

  g = open_fake("no_symbol nvmlInit_v2\n");
  CHECK_CONTAINS(pp_collect_gpu_reason(g), "unavailable: nvmlInit_v2 failed");
  pp_collect_gpu_close(g);

  g = open_fake("count 1\ngpu 0 handle NO_PERMISSION\n");
  CHECK_CONTAINS(pp_collect_gpu_reason(g), "no usable GPU");
  CHECK_CONTAINS(pp_collect_gpu_reason(g), "permission denied");
  pp_gpu_sample *s = new_sample();
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 0);
  CHECK_EQ(s->ngpus, 1);
  CHECK_EQ(s->gpu[0].usable, 0);
  CHECK_UNAVAIL(s, 0, PP_GPU_M_POWER, "GPU not opened");
  pp_collect_gpu_close(g);
  free(s);
}

PP_TEST(nvml_two_gpus_every_metric) {
  pp_collect_gpu *g = open_fake(two_gpus);
  CHECK(pp_collect_gpu_reason(g) == NULL);
  CHECK_EQ(pp_collect_gpu_count(g), 2);
  pp_gpu_sample *s = new_sample();
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_EQ(s->ngpus, 2);
  const pp_gpu_dev *a = &s->gpu[0], *b = &s->gpu[1];
  CHECK_STR(a->name, "NVIDIA-H100");
  CHECK_STR(a->uuid, "GPU-aaaa");
  CHECK_STR(a->pci_bus_id, "00000000:17:00.0");
  CHECK_STR(b->name, "Fake GPU 1");
  CHECK_EQ(a->index, 0);
  CHECK_EQ(b->index, 1);
  for (int i = 0; i < 2; i++)
    for (int m = 0; m <= PP_GPU_M_PCIE; m++)
      CHECK_AVAIL(s, i, (pp_gpu_metric)m);
  CHECK_NEAR(a->util_gpu_pct, 40, 0);
  CHECK_NEAR(a->util_mem_pct, 30, 0);
  /* v2: reserved apart, used without it */
  CHECK_EQ(a->mem_has_reserved, 1);
  CHECK_EQ_U(a->mem_total_bytes, 85899345920ull);
  CHECK_EQ_U(a->mem_reserved_bytes, 536870912ull);
  CHECK_EQ_U(a->mem_free_bytes, 42949672960ull);
  CHECK_EQ_U(a->mem_used_bytes, 42413211648ull);
  CHECK_EQ(count_calls("nvmlDeviceGetMemoryInfo", 0), 0);
  CHECK_NEAR(a->power_w, 312.5, 1e-9); /* mW -> W */
  CHECK_NEAR(b->power_w, 75.0, 1e-9);
  CHECK_NEAR(a->energy_j, 0, 0); /* since open */
  CHECK_NEAR(a->temp_c, 65, 0);
  CHECK_NEAR(a->sm_clock_mhz, 1980, 0);
  CHECK_NEAR(a->mem_clock_mhz, 2619, 0);
  CHECK_NEAR(b->sm_clock_mhz, 210, 0);
  CHECK_EQ_U(a->clock_reasons, 0x44);
  CHECK_STR(a->clock_reasons_words, "sw power cap, hw thermal slowdown");
  CHECK_STR(b->clock_reasons_words, "idle");
  CHECK_NEAR(a->pcie_tx_bytes_per_s, 1000 * 1024.0, 0); /* KB/s -> B/s */
  CHECK_NEAR(a->pcie_rx_bytes_per_s, 250 * 1024.0, 0);
  /* no GPM on the fake unless scripted; no pids given */
  CHECK_UNAVAIL(s, 0, PP_GPU_M_SM_ACTIVE, "not supported on this GPU");
  CHECK_UNAVAIL(s, 0, PP_GPU_M_PROCS, "no process given");
  CHECK_AVAIL(s, 0, PP_GPU_M_XID);
  CHECK_EQ(s->nxids, 0);
  CHECK_GT(s->t_ns, 0);
  pp_collect_gpu_close(g);
  CHECK_EQ(count_calls("nvmlShutdown", -1), 1);
  CHECK_EQ(count_calls("nvmlEventSetFree", -1), 1);
  free(s);
}

PP_TEST(nvml_memory_v1_fallback) {
  char text[sizeof two_gpus + 64];
  snprintf(text, sizeof text, "%sno_symbol nvmlDeviceGetMemoryInfo_v2\n",
           two_gpus);
  pp_collect_gpu *g = open_fake(text);
  pp_gpu_sample *s = new_sample();
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_AVAIL(s, 0, PP_GPU_M_MEM);
  CHECK_EQ(s->gpu[0].mem_has_reserved, 0);
  /* v1 counts reserved memory as used */
  CHECK_EQ_U(s->gpu[0].mem_used_bytes, 42413211648ull + 536870912ull);
  CHECK_EQ_U(s->gpu[0].mem_total_bytes, 85899345920ull);
  /* v2 is not tried again once the driver said it lacks it */
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_EQ(count_calls("nvmlDeviceGetMemoryInfo_v2", 0), 1);
  CHECK_EQ(count_calls("nvmlDeviceGetMemoryInfo", 0), 2);
  pp_collect_gpu_close(g);
  free(s);
}

PP_TEST(nvml_reasons_per_metric) {
  char text[sizeof two_gpus + 256];
  snprintf(text, sizeof text,
           "%sgpu 1 power NOT_SUPPORTED\ngpu 1 temp NO_PERMISSION\n"
           "gpu 1 pcie UNKNOWN\ngpu 1 util NOT_FOUND\n"
           "gpu 0 energy_mj NOT_SUPPORTED\n",
           two_gpus);
  pp_collect_gpu *g = open_fake(text);
  pp_gpu_sample *s = new_sample();
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_UNAVAIL(s, 1, PP_GPU_M_POWER, "not supported on this GPU");
  CHECK_UNAVAIL(s, 1, PP_GPU_M_TEMP, "permission denied");
  CHECK_UNAVAIL(s, 1, PP_GPU_M_PCIE, "nvmlDeviceGetPcieThroughput failed");
  CHECK_UNAVAIL(s, 1, PP_GPU_M_PCIE, "UNKNOWN"); /* nvmlErrorString's */
  CHECK_UNAVAIL(s, 1, PP_GPU_M_UTIL, "not found");
  CHECK_UNAVAIL(s, 0, PP_GPU_M_ENERGY, "not supported on this GPU");
  CHECK_AVAIL(s, 0, PP_GPU_M_POWER);
  CHECK_AVAIL(s, 1, PP_GPU_M_MEM);
  CHECK_AVAIL(s, 1, PP_GPU_M_SM_CLOCK);
  /* a second read: NOT_SUPPORTED is not asked again, the others are */
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_UNAVAIL(s, 1, PP_GPU_M_POWER, "not supported on this GPU");
  CHECK_UNAVAIL(s, 1, PP_GPU_M_TEMP, "permission denied");
  CHECK_EQ(count_calls("nvmlDeviceGetPowerUsage", 1), 1);
  CHECK_EQ(count_calls("nvmlDeviceGetTemperature", 1), 2);
  CHECK_EQ(count_calls("nvmlDeviceGetTotalEnergyConsumption", 0), 1);
  /* the driver's error string missing: our own table */
  append_script("no_symbol nvmlErrorString\n");
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_UNAVAIL(s, 1, PP_GPU_M_PCIE, "Unknown Error (NVML error 999)");
  /* a temperature over 200 C is discarded */
  append_script("gpu 0 temp 4000\n");
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_UNAVAIL(s, 0, PP_GPU_M_TEMP, "implausible");
  pp_collect_gpu_close(g);
  free(s);
}

PP_TEST(nvml_gpu_lost_mid_run) {
  pp_collect_gpu *g = open_fake(two_gpus);
  pp_gpu_sample *s = new_sample();
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_EQ(s->gpu[1].usable, 1);
  CHECK_AVAIL(s, 1, PP_GPU_M_POWER);
  /* falls off the bus in the middle of the second read */
  append_script("gpu 1 fail nvmlDeviceGetTotalEnergyConsumption "
                "GPU_IS_LOST\n");
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 1);
  CHECK_EQ(s->gpu[1].usable, 0);
  CHECK_EQ(s->gpu[1].lost, 1);
  CHECK_CONTAINS(s->gpu[1].reason_gpu, "GPU is lost");
  CHECK_CONTAINS(s->gpu[1].reason_gpu, "nvmlDeviceGetTotalEnergyConsumption");
  for (int m = 0; m < PP_GPU_NMETRICS; m++)
    CHECK_UNAVAIL(s, 1, (pp_gpu_metric)m, "GPU lost");
  CHECK_EQ(s->gpu[0].usable, 1);
  CHECK_AVAIL(s, 0, PP_GPU_M_POWER);
  CHECK_EQ(count_calls("nvmlDeviceGetTemperature", 1), 1); /* stopped */
  /* never queried again, even when the GPU answers */
  int before = count_gpu_calls(1);
  write_script(two_gpus);
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 1);
  CHECK_EQ(s->gpu[1].lost, 1);
  CHECK_NEAR(s->gpu[0].power_w, 312.5, 1e-9);
  CHECK_EQ(count_gpu_calls(1), before);

  /* lost for every call: at once */
  append_script("gpu 0 lost\n");
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 0);
  CHECK_CONTAINS(s->gpu[0].reason_gpu, "nvmlDeviceGetUtilizationRates");
  pp_collect_gpu_close(g);
  free(s);
}

PP_TEST(nvml_mig) {
  char text[sizeof two_gpus + 64];
  snprintf(text, sizeof text, "%sgpu 0 mig on\n", two_gpus);
  pp_collect_gpu *g = open_fake(text);
  pp_gpu_sample *s = new_sample();
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_EQ(s->gpu[0].mig, 1);
  CHECK_UNAVAIL(s, 0, PP_GPU_M_UTIL,
                "MIG enabled: per-instance utilization not available "
                "through NVML");
  CHECK_AVAIL(s, 0, PP_GPU_M_MEM);
  CHECK_AVAIL(s, 0, PP_GPU_M_POWER);
  CHECK_EQ(s->gpu[1].mig, 0);
  CHECK_AVAIL(s, 1, PP_GPU_M_UTIL);
  CHECK_EQ(count_calls("nvmlDeviceGetUtilizationRates", 0), 0);
  pp_collect_gpu_close(g);
  free(s);
}

PP_TEST(nvml_clock_reasons) {
  char buf[PP_GPU_WORDS_LEN];
  CHECK_STR(pp_gpu_clock_reasons_words(0, buf, sizeof buf), "none");
  CHECK_STR(pp_gpu_clock_reasons_words(0x1ff, buf, sizeof buf),
            "sw power cap, hw slowdown, hw thermal slowdown, "
            "sw thermal slowdown, hw power brake, idle, "
            "applications clocks setting, sync boost, display clock setting");
  CHECK_STR(pp_gpu_clock_reasons_words(0x10004, buf, sizeof buf),
            "sw power cap, other 0x10000");
  char small[8];
  pp_gpu_clock_reasons_words(0x1ff, small, sizeof small);
  CHECK_LT(strlen(small), sizeof small);

  /* the old name when the new one is missing */
  char text[sizeof two_gpus + 128];
  snprintf(text, sizeof text,
           "%sno_symbol nvmlDeviceGetCurrentClocksEventReasons\n"
           "gpu 1 reasons 0x88\n",
           two_gpus);
  pp_collect_gpu *g = open_fake(text);
  pp_gpu_sample *s = new_sample();
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_AVAIL(s, 1, PP_GPU_M_CLOCK_REASONS);
  CHECK_STR(s->gpu[1].clock_reasons_words, "hw slowdown, hw power brake");
  CHECK_EQ(count_calls("nvmlDeviceGetCurrentClocksThrottleReasons", 1), 1);
  pp_collect_gpu_close(g);
  free(s);
}

PP_TEST(nvml_processes) {
  /* GPU 0: 12 compute processes, more than the first (empty) buffer;
   * GPU 1: one of ours in both lists, one without a memory figure. */
  char text[sizeof two_gpus + 1024];
  snprintf(text, sizeof text,
           "%sprocs 0 1234:1048576 1:1 2:2 3:3 4:4 5:5 6:6 7:7 8:8 9:9 "
           "10:10 5678:2097152\n"
           "procs 1 5678:1000 42:na\n"
           "gprocs 1 5678:3000 77:77\n",
           two_gpus);
  pp_collect_gpu *g = open_fake(text);
  pp_gpu_sample *s = new_sample();
  pid_t pids[] = {1234, 5678, 42, 99};
  CHECK_EQ(pp_collect_gpu_read(g, pids, 4, s), 2);
  CHECK_AVAIL(s, 0, PP_GPU_M_PROCS);
  CHECK_AVAIL(s, 1, PP_GPU_M_PROCS);
  CHECK_EQ(s->nprocs, 4);
  CHECK_EQ(s->procs[0].gpu, 0);
  CHECK_EQ(s->procs[0].pid, 1234);
  CHECK_EQ_U(s->procs[0].used_bytes, 1048576);
  CHECK_EQ(s->procs[1].gpu, 0);
  CHECK_EQ(s->procs[1].pid, 5678);
  CHECK_EQ_U(s->procs[1].used_bytes, 2097152);
  CHECK_EQ(s->procs[2].gpu, 1);
  CHECK_EQ(s->procs[2].pid, 5678);
  CHECK_EQ_U(s->procs[2].used_bytes, 3000); /* max of compute, graphics */
  CHECK_EQ(s->procs[3].pid, 42);
  CHECK_EQ(s->procs[3].mem_known, 0);
  CHECK_EQ_U(s->gpu[0].proc_mem_bytes, 1048576 + 2097152);
  CHECK_EQ_U(s->gpu[1].proc_mem_bytes, 3000);
  CHECK_EQ(s->gpu[0].used_by_run, 1);
  CHECK_EQ(s->gpu[1].used_by_run, 1);
  /* the retry loop: one short call, then the full list */
  CHECK_EQ(count_calls("nvmlDeviceGetComputeRunningProcesses_v3", 0), 2);

  /* a longer list than the grown buffer, and pids not on GPU 1 */
  char big[8192];
  int k = snprintf(big, sizeof big, "%sprocs 0", two_gpus);
  for (int i = 0; i < 300 && k < (int)sizeof big - 32; i++)
    k += snprintf(big + k, sizeof big - (size_t)k, " %d:%d", 10000 + i, i);
  snprintf(big + k, sizeof big - (size_t)k, " 1234:4096\n");
  write_script(big);
  CHECK_EQ(pp_collect_gpu_read(g, pids, 4, s), 2);
  CHECK_EQ(s->nprocs, 1);
  CHECK_EQ(s->procs[0].pid, 1234);
  CHECK_EQ_U(s->procs[0].used_bytes, 4096);
  CHECK_EQ(s->gpu[0].used_by_run, 1);
  CHECK_EQ(s->gpu[1].used_by_run, 0);
  CHECK_EQ_U(s->gpu[1].proc_mem_bytes, 0);
  pp_collect_gpu_close(g);

  /* _v2 when _v3 is missing; graphics lists unsupported */
  snprintf(text, sizeof text,
           "%sno_symbol nvmlDeviceGetComputeRunningProcesses_v3\n"
           "gpu 0 fail nvmlDeviceGetGraphicsRunningProcesses_v3 "
           "NOT_SUPPORTED\nprocs 0 1234:512\n",
           two_gpus);
  g = open_fake(text);
  CHECK_EQ(pp_collect_gpu_read(g, pids, 4, s), 2);
  CHECK_AVAIL(s, 0, PP_GPU_M_PROCS);
  CHECK_EQ(s->nprocs, 1);
  CHECK_EQ_U(s->procs[0].used_bytes, 512);
  /* a short call then the full list; _v3 is not tried again */
  CHECK_EQ(count_calls("nvmlDeviceGetComputeRunningProcesses_v2", 0), 2);
  CHECK_EQ(pp_collect_gpu_read(g, pids, 4, s), 2);
  CHECK_EQ(count_calls("nvmlDeviceGetComputeRunningProcesses_v3", 0), 1);
  CHECK_EQ(count_calls("nvmlDeviceGetComputeRunningProcesses_v2", 0), 3);
  /* both lists refused: a reason */
  append_script("gpu 1 fail nvmlDeviceGetComputeRunningProcesses_v2 "
                "NO_PERMISSION\n"
                "gpu 1 fail nvmlDeviceGetGraphicsRunningProcesses_v3 "
                "NO_PERMISSION\n");
  CHECK_EQ(pp_collect_gpu_read(g, pids, 4, s), 2);
  CHECK_UNAVAIL(s, 1, PP_GPU_M_PROCS, "permission denied");
  pp_collect_gpu_close(g);
  free(s);
}

PP_TEST(nvml_xid_events) {
  char text[sizeof two_gpus + 64];
  snprintf(text, sizeof text, "%sxid 0 79\n", two_gpus);
  pp_collect_gpu *g = open_fake(text);
  pp_gpu_sample *s = new_sample();
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_EQ(s->nxids, 1);
  CHECK_EQ(s->xids[0].gpu, 0);
  CHECK_EQ_U(s->xids[0].xid, 79);
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2); /* reported once */
  CHECK_EQ(s->nxids, 0);
  append_script("xid 1 48\nxid 0 13\n");
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_EQ(s->nxids, 2);
  CHECK_EQ(s->xids[0].gpu, 1);
  CHECK_EQ_U(s->xids[0].xid, 48);
  CHECK_EQ(s->xids[1].gpu, 0);
  CHECK_EQ_U(s->xids[1].xid, 13);
  pp_collect_gpu_close(g);

  /* a GPU that cannot register; a driver without event sets */
  snprintf(text, sizeof text, "%sgpu 1 register NOT_SUPPORTED\n", two_gpus);
  g = open_fake(text);
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_AVAIL(s, 0, PP_GPU_M_XID);
  CHECK_UNAVAIL(s, 1, PP_GPU_M_XID, "not supported on this GPU");
  pp_collect_gpu_close(g);
  snprintf(text, sizeof text, "%sno_symbol nvmlEventSetCreate\n", two_gpus);
  g = open_fake(text);
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_UNAVAIL(s, 0, PP_GPU_M_XID, "nvmlEventSetCreate");
  pp_collect_gpu_close(g);
  free(s);
}

PP_TEST(nvml_energy_deltas) {
  pp_collect_gpu *g = open_fake(two_gpus); /* gpu 0 at 1000 mJ */
  pp_gpu_sample *s = new_sample();
  write_script("count 2\ngpu 0 energy_mj 4500\ngpu 1 energy_mj 5000250\n");
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_NEAR(s->gpu[0].energy_j, 3.5, 1e-9);
  CHECK_NEAR(s->gpu[1].energy_j, 0.25, 1e-9);
  write_script("count 2\ngpu 0 energy_mj 10000\ngpu 1 energy_mj 5000250\n");
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_NEAR(s->gpu[0].energy_j, 9.0, 1e-9);
  CHECK_NEAR(s->gpu[1].energy_j, 0.25, 1e-9);
  /* counter restarted (driver reload): total kept, counting resumes */
  write_script("count 2\ngpu 0 energy_mj 500\n");
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_NEAR(s->gpu[0].energy_j, 9.0, 1e-9);
  write_script("count 2\ngpu 0 energy_mj 1500\n");
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_NEAR(s->gpu[0].energy_j, 10.0, 1e-9);
  /* a failed read: unavailable this time, total kept */
  write_script("count 2\ngpu 0 energy_mj UNKNOWN\n");
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_UNAVAIL(s, 0, PP_GPU_M_ENERGY, "failed");
  write_script("count 2\ngpu 0 energy_mj 2500\n");
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 2);
  CHECK_NEAR(s->gpu[0].energy_j, 11.0, 1e-9);
  pp_collect_gpu_close(g);
  free(s);
}

PP_TEST(nvml_gpm) {
  char text[sizeof two_gpus + 128];
  snprintf(text, sizeof text,
           "%sgpu 0 gpm 55.5 40 12.25 30\ngpu 0 gpm_metric 10 "
           "NO_PERMISSION\n",
           two_gpus);
  pp_collect_gpu *g = open_fake(text);
  uint64_t t0 = pp_collect_gpu_now_ns();
  pp_gpu_sample *s = new_sample();
  CHECK_EQ(pp_collect_gpu_read_at(g, t0 + 50 * MS, NULL, 0, s), 2);
  CHECK_UNAVAIL(s, 0, PP_GPU_M_SM_ACTIVE, "warming up");
  CHECK_UNAVAIL(s, 1, PP_GPU_M_SM_ACTIVE, "GPM needs Hopper or newer");
  CHECK_EQ(s->t_ns, t0 + 50 * MS);
  CHECK_EQ(pp_collect_gpu_read_at(g, t0 + 200 * MS, NULL, 0, s), 2);
  CHECK_AVAIL(s, 0, PP_GPU_M_SM_ACTIVE);
  CHECK_AVAIL(s, 0, PP_GPU_M_SM_OCCUPANCY);
  CHECK_AVAIL(s, 0, PP_GPU_M_TENSOR_ACTIVE);
  CHECK_NEAR(s->gpu[0].sm_active_pct, 55.5, 1e-9);
  CHECK_NEAR(s->gpu[0].sm_occupancy_pct, 40, 1e-9);
  CHECK_NEAR(s->gpu[0].tensor_active_pct, 12.25, 1e-9);
  CHECK_UNAVAIL(s, 0, PP_GPU_M_DRAM_BW, "permission denied");
  CHECK_EQ(count_calls("nvmlGpmMetricsGet", -1), 1);
  /* less than 100 ms later: the last interval's figures, no new call */
  CHECK_EQ(pp_collect_gpu_read_at(g, t0 + 250 * MS, NULL, 0, s), 2);
  CHECK_NEAR(s->gpu[0].sm_active_pct, 55.5, 1e-9);
  CHECK_EQ(count_calls("nvmlGpmMetricsGet", -1), 1);
  snprintf(text, sizeof text, "%sgpu 0 gpm 90 80 70 60\n", two_gpus);
  write_script(text);
  CHECK_EQ(pp_collect_gpu_read_at(g, t0 + 400 * MS, NULL, 0, s), 2);
  CHECK_NEAR(s->gpu[0].sm_active_pct, 90, 1e-9);
  CHECK_NEAR(s->gpu[0].tensor_active_pct, 70, 1e-9);
  CHECK_AVAIL(s, 0, PP_GPU_M_DRAM_BW);
  CHECK_NEAR(s->gpu[0].dram_bw_pct, 60, 1e-9);
  CHECK_EQ(count_calls("nvmlGpmMetricsGet", -1), 2);
  pp_collect_gpu_close(g);
  CHECK_EQ(count_calls("nvmlGpmSampleAlloc", -1), 2);
  CHECK_EQ(count_calls("nvmlGpmSampleFree", -1), 2);
  free(s);
}

/* ---- sampler glue and the report section ------------------------------- */

typedef struct trace_sink {
  pp_trace *t;
  int64_t ts;
} trace_sink;

static uint32_t loc_of(pp_trace *t, const char *name) {
  for (size_t i = 0; i < t->nlocs; i++)
    if (strcmp(t->locs[i].name, name) == 0)
      return (uint32_t)i;
  return tb_loc(t, name, PP_KIND_COUNTER);
}

static void sink_counter(void *ctx, const char *name, double v) {
  trace_sink *k = ctx;
  uint32_t loc = loc_of(k->t, name);
  tb_ev(k->t, 0, k->ts, loc, PPT_EV_COUNTER_SETF)->v.f = v;
}

static void sink_meta(void *ctx, const char *key, const char *val) {
  tb_meta(((trace_sink *)ctx)->t, key, val);
}

static void trace_init(pp_trace *t) {
  memset(t, 0, sizeof *t);
  t->pid = 77;
  tb_thread(t, 77, "main");
}

#define trace_free pp_trace_free

static char *render_gpu(pp_trace *t, pp_analysis *a) {
  CHECK_EQ(pp_analyze(t, a), 0);
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  CHECK(f != NULL);
  CHECK_EQ(pp_report_gpu(f, a), 0);
  fclose(f);
  return buf;
}

PP_TEST(nvml_report_section) {
  char text[sizeof two_gpus + 256];
  snprintf(text, sizeof text,
           "%sprocs 0 1234:1073741824\ngpu 1 power NOT_SUPPORTED\n"
           "xid 0 79\ngpu 0 reasons 0x4\n",
           two_gpus);
  pp_collect_gpu *g = open_fake(text);
  pp_gpu_sample *s = new_sample();
  pp_trace t;
  pp_analysis a = {0};
  trace_init(&t);
  trace_sink sink = {&t, 1000};
  pid_t pid = 1234;
  CHECK_GT(pp_gpu_sample_meta(g, NULL, sink_meta, &sink), 0);
  CHECK_EQ(pp_collect_gpu_read(g, &pid, 1, s), 2);
  CHECK_GT(pp_gpu_sample_counters(s, sink_counter, &sink), 10);
  snprintf(text, sizeof text,
           "%sprocs 0 1234:2147483648\ngpu 1 power NOT_SUPPORTED\n"
           "gpu 0 energy_mj 1501000\ngpu 0 power 400000\ngpu 0 reasons 0x40\n"
           "gpu 1 energy_mj 5002000\n",
           two_gpus);
  write_script(text);
  sink.ts = 2000;
  CHECK_EQ(pp_collect_gpu_read(g, &pid, 1, s), 2);
  pp_gpu_sample_counters(s, sink_counter, &sink);
  pp_gpu_sample_meta(g, s, sink_meta, &sink);
  CHECK_STR(pp_trace_meta(&t, "gpu0.name"), "NVIDIA-H100");
  CHECK_STR(pp_trace_meta(&t, "gpu0.used_by_run"), "1");
  CHECK_STR(pp_trace_meta(&t, "gpu1.used_by_run"), "0");
  CHECK_STR(pp_trace_meta(&t, "unavailable.gpu1.power"),
            "not supported on this GPU");
  CHECK(pp_trace_meta(&t, "unavailable.gpu0.procs") == NULL);
  CHECK(pp_counter_is_gpu("gpu0.power_w"));
  CHECK(pp_counter_is_gpu("gpu.energy_j"));
  CHECK(!pp_counter_is_gpu("gpux.power_w"));
  CHECK(!pp_counter_is_gpu("power.package_w"));

  char *r = render_gpu(&t, &a);
  CHECK_CONTAINS(r, "\nGPU (NVML)\n");
  /* each GPU a table of measures, titled with what it is */
  CHECK_CONTAINS(r, "\ngpu0: NVIDIA-H100, GPU-aaaa, PCI 00000000:17:00.0, "
                    "used by the run\n");
  CHECK_CONTAINS(r, "\ngpu1: Fake GPU 1, GPU-fake-0001, PCI 00000000:02:00.0,"
                    " not used by the run\n");
  CHECK_CONTAINS(r, "\nutilization                     40.0%        40.0%  "
                    "      40.0%        40.0%\n");
  CHECK_CONTAINS(r, "\nmemory bus                      30.0%");
  CHECK_CONTAINS(r, "\nmemory used                  39.5 GiB");
  CHECK_CONTAINS(r, "\nmemory total                 80.0 GiB");
  CHECK_CONTAINS(r, "\nreserved by the driver        512 MiB");
  CHECK_CONTAINS(r, "\nrun's memory                 1.50 GiB     1.00 GiB  "
                    "   2.00 GiB     2.00 GiB\n");
  CHECK_CONTAINS(r, "\npower                           356 W        312 W  "
                    "      400 W        400 W\n");
  CHECK_CONTAINS(r, "      1.50 kJ      1.50 kJ\n");
  CHECK_CONTAINS(r, "\nnote: power: unavailable: not supported on this "
                    "GPU\n");
  CHECK_CONTAINS(r, "\nnote: clock limits seen: sw power cap, hw thermal "
                    "slowdown\n");
  CHECK_CONTAINS(r, "\nPCIe TX                   0.977 MiB/s");
  CHECK_CONTAINS(r, "\nPCIe RX                     250 KiB/s");
  CHECK_CONTAINS(r, "\nmemory used                    0 B       0 B");
  CHECK_CONTAINS(r, "\nnote: the last XID error: 79\n");
  /* GPM: one remark for the four measures out for one reason */
  CHECK_CONTAINS(r, "\nnote: SM active, SM occupancy, tensor active, DRAM "
                    "bandwidth: unavailable: not supported on this GPU (GPM "
                    "needs Hopper or newer)\n");
  CHECK_CONTAINS(r, "\nGPU\n  energy, the run's GPUs: 1.50 kJ\n"
                    "  energy, all GPUs:       1.50 kJ\n");
  CHECK(strstr(r, "nan") == NULL);
  free(r);
  pp_analysis_free(&a);
  trace_free(&t);
  pp_collect_gpu_close(g);

  /* no NVML: the reason alone; a lost GPU says so */
  trace_init(&t);
  sink.t = &t;
  char path[512];
  snprintf(path, sizeof path, "%s/nope/libnvidia-ml.so.1", pp_test_tmpdir());
  g = pp_collect_gpu_open(path);
  CHECK_EQ(pp_gpu_sample_meta(g, NULL, sink_meta, &sink), 1);
  r = render_gpu(&t, &a);
  CHECK_CONTAINS(r, "\nGPU\n  GPU:                   unavailable: no NVIDIA "
                    "driver");
  free(r);
  pp_analysis_free(&a);
  trace_free(&t);
  pp_collect_gpu_close(g);

  trace_init(&t);
  sink.t = &t;
  g = open_fake(two_gpus);
  append_script("gpu 1 lost\n");
  CHECK_EQ(pp_collect_gpu_read(g, NULL, 0, s), 1);
  pp_gpu_sample_counters(s, sink_counter, &sink);
  pp_gpu_sample_meta(g, s, sink_meta, &sink);
  r = render_gpu(&t, &a);
  CHECK_CONTAINS(r, "\nwarning: lost during the run: GPU is lost");
  free(r);
  pp_analysis_free(&a);
  trace_free(&t);
  pp_collect_gpu_close(g);

  /* an empty trace prints nothing */
  trace_init(&t);
  r = render_gpu(&t, &a);
  CHECK_STR(r, "");
  free(r);
  pp_analysis_free(&a);
  trace_free(&t);
  free(s);
}
