/* SPDX-License-Identifier: MIT */
/*
 * The library's options (options.h).
 */
#include "options.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"

static const char *const modes[] = {"stats", "trace", "flight", NULL};
static const char *const clocks[] = {"tsc", "monotonic", NULL};

static const pp_option table[] = {
    {"PIPEPROF", NULL, PP_OPT_BOOL, PP_OPT_AT_LOAD, 0, 1, NULL, "off",
     "start a session when the library is loaded"},
    {"PIPEPROF_OUT", "out_path", PP_OPT_PATH, PP_OPT_AT_LOAD, 0,
     PATH_MAX - 24, NULL, "pipeprof-<pid>.pptrace",
     "the output file; a program exec'd by the profiled one, or started "
     "beside it while it runs, writes OUT.<its pid> instead"},
    {"PIPEPROF_MODE", "mode", PP_OPT_ENUM, PP_OPT_AT_LOAD, 0, 0, modes,
     "trace", "trace: every event streamed to the file; stats: per-zone "
     "statistics only, counted by each thread; flight: the last events "
     "kept in memory, written at exit, on SIGINT/SIGTERM or by "
     "pp_flight_dump"},
    {"PIPEPROF_BUFFER_KIB", "buffer_kib", PP_OPT_POW2, PP_OPT_AT_LOAD, 16,
     1048576, NULL, "1024 (flight: 4096)", "per-thread ring in KiB; "
     "unset, rings past 256 MiB for all threads together are smaller "
     "(down to 64 KiB)"},
    {"PIPEPROF_FLUSH_MS", "flush_ms", PP_OPT_UINT, PP_OPT_AT_LOAD, 1, 1000,
     NULL, "10", "writer period in ms while events flow; it backs off to "
     "50 ms (or this value if larger) while every ring stays under 1/16 "
     "full. What kill -9 leaves undrained stays in the durable rings "
     "(PIPEPROF_RINGS_DIR) for pipeprof to salvage"},
    {"PIPEPROF_SIGNALS", "install_signals", PP_OPT_BOOL, PP_OPT_AT_LOAD, 0,
     1, NULL, "on",
     "flush on SIGINT/SIGTERM when the program has no handler of its own"},
    {"PIPEPROF_SAMPLE_HZ", "sample_hz", PP_OPT_UINT, PP_OPT_AT_LOAD, 0, 1000,
     NULL, "0 (off)", "sample this process and the system that often, as "
     "counter tracks (sys.*, proc.*, power.*)"},
    {"PIPEPROF_PROCESS_NAME", "process_name", PP_OPT_NAME, PP_OPT_AT_LOAD, 0,
     63, NULL, "the executable's name", "the name shown in traces"},
    {"PIPEPROF_CUDA", "cuda", PP_OPT_BOOL, PP_OPT_AT_LOAD, 0, 1, NULL, "off",
     "trace CUDA kernels, copies, memsets, synchronization and API calls "
     "with CUPTI (trace mode)"},
    {"PIPEPROF_HTTP", "http_addr", PP_OPT_ADDR, PP_OPT_EVERY, 0, 0, NULL,
     "none", "serve /metrics for Prometheus, the /api/v1 JSON documents, "
     "the live page and an event stream while the program runs "
     "(docs/http.md)"},
    {"PIPEPROF_HTTP_HOSTS", NULL, PP_OPT_SPEC, PP_OPT_EVERY, 0, 0, NULL,
     "IP addresses, localhost", "other Host names the HTTP endpoint "
     "answers, comma-separated (.NAME: and the names under it; *: any); "
     "others get 403, so that a web page cannot reach it by DNS rebinding "
     "(docs/http.md)"},
    {"PIPEPROF_LIVE", "live", PP_OPT_SPEC, PP_OPT_EVERY, 0, 0, NULL, "on",
     "the live statistics: off, or settings (interval, anomaly threshold "
     "k, history; docs/live.md)"},
    {"PIPEPROF_ALERTS", "alerts", PP_OPT_SPEC, PP_OPT_EVERY, 0, 0, NULL,
     "defaults", "resource-pressure alert thresholds, e.g. "
     "mem=90%,psi=10%,gpu_mem=95% (each may be off; docs/live.md)"},
    {"PIPEPROF_GPU_SLOTS", "gpu_slots", PP_OPT_UINT, PP_OPT_EVERY, 2, 65536,
     NULL, "1024", "CUDA event pairs per context for GPU zones"},
    {"PIPEPROF_CLOCK", NULL, PP_OPT_ENUM, PP_OPT_ONCE, 0, 0, clocks,
     "tsc", "tsc: the CPU's TSC when it is invariant, else "
     "CLOCK_MONOTONIC; monotonic: always CLOCK_MONOTONIC"},
    {"PIPEPROF_LIBCUDA", NULL, PP_OPT_PATH, PP_OPT_EVERY, 0, PATH_MAX - 1,
     NULL, "libcuda.so.1", "the CUDA driver library GPU zones load"},
    {"PIPEPROF_LIBCUPTI", NULL, PP_OPT_PATH, PP_OPT_EVERY, 0, PATH_MAX - 1,
     NULL, "(search)", "the libcupti to load instead of searching for it"},
    {"PIPEPROF_LIBCUDART", NULL, PP_OPT_PATH, PP_OPT_EVERY, 0, PATH_MAX - 1,
     NULL, "libcudart.so", "the CUDA runtime the device memory pools load"},
    {"PIPEPROF_HTTP_LIB", NULL, PP_OPT_PATH, PP_OPT_EVERY, 0, PATH_MAX - 1,
     NULL, "libpipeprof-http beside the library",
     "the HTTP companion library"},
    {"PIPEPROF_SYSROOT", NULL, PP_OPT_PATH, PP_OPT_EVERY, 0, PATH_MAX - 1,
     NULL, "/", "the root under which /proc and /sys are read (tests use "
     "fixture trees)"},
    {"PIPEPROF_RINGS_DIR", NULL, PP_OPT_PATH, PP_OPT_EVERY, 0, PATH_MAX - 1,
     NULL, "/dev/shm, else the trace's folder", "where each process keeps "
     "its durable rings (and stats mode its tallies and checkpoint; off: in "
     "plain memory, lost with the process)"},
    {"PIPEPROF_OWNER_PID", NULL, PP_OPT_UINT, PP_OPT_INTERNAL, 1, INT_MAX,
     NULL, "-", "the process that owns PIPEPROF_OUT (set by the library)"},
    {"PIPEPROF_HTTP_UPSTREAM", NULL, PP_OPT_SPEC, PP_OPT_INTERNAL, 0, 0,
     NULL, "-", "the program's own endpoint (set by pipeprof run --http)"},
};

const pp_option *pp__options(size_t *n) {
  *n = sizeof table / sizeof *table;
  return table;
}

const pp_option *pp__option(const char *env) {
  for (size_t i = 0; i < sizeof table / sizeof *table; i++)
    if (strcmp(table[i].env, env) == 0)
      return &table[i];
  return NULL;
}

/* "stats, trace or flight" */
static void words_text(const pp_option *o, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (size_t i = 0; o->words[i]; i++)
    n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s",
                          i == 0 ? ""
                          : o->words[i + 1] ? ", "
                                            : " or ",
                          o->words[i]);
}

int pp__option_check_num(const pp_option *o, uint64_t x, char *want,
                         size_t len) {
  int pow2 = o->type == PP_OPT_POW2;
  snprintf(want, len, "expected a %s from %" PRIu64 " to %" PRIu64,
           pow2 ? "power of two" : "number", o->lo, o->hi);
  return x >= o->lo && x <= o->hi && (!pow2 || !(x & (x - 1))) ? 0 : -1;
}

int pp__option_check(const pp_option *o, const char *v, uint64_t *num,
                     char *want, size_t len) {
  uint64_t x = 0;
  int ok = 0;
  char w[160];
  switch (o->type) {
  case PP_OPT_BOOL: {
    int b;
    ok = pp__env_bool(v, &b) == 0;
    x = (uint64_t)b;
    snprintf(want, len, "expected 1 or 0 (on/off, true/false, yes/no)");
    break;
  }
  case PP_OPT_UINT:
  case PP_OPT_POW2: /* digits, then the number's rule */
    ok = pp__env_uint(v, 0, UINT64_MAX, &x) == 0;
    ok = pp__option_check_num(o, x, want, len) == 0 && ok; /* want too */
    break;
  case PP_OPT_ENUM: {
    size_t n = 0;
    while (o->words[n])
      n++;
    int i = pp__env_enum(v, o->words, n);
    ok = i >= 0;
    x = (uint64_t)(ok ? i : 0);
    words_text(o, w, sizeof w);
    snprintf(want, len, "expected %s", w);
    break;
  }
  case PP_OPT_SPEC:
    ok = pp__env_spec(v) == 0;
    snprintf(want, len, "expected no whitespace or control characters");
    break;
  case PP_OPT_NAME:
    ok = pp__env_name(v) == 0;
    snprintf(want, len, "expected a name without control characters");
    break;
  case PP_OPT_PATH:
    ok = strlen(v) <= o->hi;
    snprintf(want, len, "expected a path shorter than %" PRIu64 " bytes",
             o->hi + 1);
    break;
  case PP_OPT_ADDR:
    ok = 1; /* the endpoint's own parser says what is wrong */
    snprintf(want, len, "expected PORT, :PORT or IPV4:PORT");
    break;
  }
  if (ok && num)
    *num = x;
  return ok ? 0 : -1;
}

int pp__option_env(const char *env, const char **v, uint64_t *num) {
  const pp_option *o = pp__option(env);
  *v = getenv(env);
  if (!o || !*v || o->when == PP_OPT_INTERNAL)
    return 0;
  char want[160];
  if (pp__option_check(o, *v, num, want, sizeof want) == 0)
    return 0;
  pp__env_invalid(env, *v, want);
  return -1;
}

/* The rule of o's values, in words. */
static void rule(const pp_option *o, char *buf, size_t len) {
  char w[160];
  switch (o->type) {
  case PP_OPT_BOOL:
    snprintf(buf, len, "on/off");
    break;
  case PP_OPT_UINT:
    snprintf(buf, len, "%" PRIu64 "..%" PRIu64, o->lo, o->hi);
    break;
  case PP_OPT_POW2:
    snprintf(buf, len, "power of two, %" PRIu64 "..%" PRIu64, o->lo, o->hi);
    break;
  case PP_OPT_ENUM:
    words_text(o, w, sizeof w);
    snprintf(buf, len, "%s", w);
    break;
  case PP_OPT_SPEC:
    snprintf(buf, len, "spec");
    break;
  case PP_OPT_NAME:
    snprintf(buf, len, "name, up to %" PRIu64 " bytes", o->hi);
    break;
  case PP_OPT_PATH:
    snprintf(buf, len, "path");
    break;
  case PP_OPT_ADDR:
    snprintf(buf, len, "PORT, :PORT or IPV4:PORT");
    break;
  }
}

static const char *when_text(pp_opt_when w) {
  switch (w) {
  case PP_OPT_AT_LOAD:
    return "at load";
  case PP_OPT_EVERY:
    return "every session";
  case PP_OPT_ONCE:
    return "first session";
  case PP_OPT_INTERNAL:
  default:
    return "set by pipeprof";
  }
}

void pp__options_print(FILE *out, int markdown) {
  char r[200];
  if (markdown) {
    fputs("| variable | `pp_config` field | values | default | read | "
          "meaning |\n|---|---|---|---|---|---|\n", out);
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
      const pp_option *o = &table[i];
      rule(o, r, sizeof r);
      fprintf(out, "| `%s` | %s%s%s | %s | %s | %s | %s |\n", o->env,
              o->field ? "`" : "", o->field ? o->field : "-",
              o->field ? "`" : "", r, o->deflt, when_text(o->when), o->help);
    }
    return;
  }
  fputs("The environment of programs linked with libpipeprof "
        "(docs/api.md).\n"
        "at load: read when PIPEPROF=1 starts a session as the library "
        "loads;\n"
        "  a program's own pp_init(cfg) takes its pp_config instead.\n"
        "every session: the pp_config field when the program set it, else "
        "the\n"
        "  variable, else the default.\n\n",
        out);
  for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
    const pp_option *o = &table[i];
    rule(o, r, sizeof r);
    fprintf(out, "  %-22s %s\n  %-22s %s; default %s; %s%s%s\n", o->env,
            o->help, "", r, o->deflt, when_text(o->when),
            o->field ? "; pp_config." : "", o->field ? o->field : "");
  }
}
