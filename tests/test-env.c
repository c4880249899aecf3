/* SPDX-License-Identifier: MIT */
/*
 * Configuration by environment: what pp_init_from_env() does with invalid
 * PIPEPROF_* values (one line on stderr, profiling off, no file created,
 * the program runs on).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "core/env.h"
#include "model/reader.h"
#include "internal.h"
#include "pipeprof.h"
#include "runner.h"

typedef struct env_run {
  int rc;
  int running;
  char *err; /* what it printed on stderr (malloc'ed) */
} env_run;

/* pp_init_from_env() with stderr captured; the session, if any, is shut
 * down. */
static env_run init_from_env(void) {
  char p[4200];
  snprintf(p, sizeof p, "%s/stderr.txt", pp_test_tmpdir());
  fflush(stderr);
  int saved = dup(2);
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(saved >= 0 && fd >= 0);
  dup2(fd, 2);
  close(fd);
  env_run r;
  r.rc = pp_init_from_env();
  r.running = pp_is_running();
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  if (r.running)
    CHECK_EQ(pp_shutdown(), PP_OK);
  r.err = pp_test_slurp(p, NULL);
  CHECK(r.err != NULL);
  return r;
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static void env_out(char *path, size_t len) {
  snprintf(path, len, "%s/env.pptrace", pp_test_tmpdir());
  setenv("PIPEPROF", "1", 1);
  setenv("PIPEPROF_OUT", path, 1);
  unsetenv("PIPEPROF_OWNER_PID");
}

/* An invalid PIPEPROF_LIVE or PIPEPROF_ALERTS: one line, profiling off,
 * and no output file (before the fix a 0-byte one was left behind). */
PP_TEST(env_invalid_live_or_alerts_creates_no_file) {
  char path[4200];
  env_out(path, sizeof path);
  const char *vars[] = {"PIPEPROF_LIVE", "PIPEPROF_ALERTS"};
  for (int i = 0; i < 2; i++) {
    unsetenv("PIPEPROF_LIVE");
    unsetenv("PIPEPROF_ALERTS");
    setenv(vars[i], "bogus=1", 1);
    env_run r = init_from_env();
    CHECK_EQ(r.rc, PP_EENV);
    CHECK(!r.running);
    CHECK_EQ(pp_test_count_lines(r.err), 1);
    CHECK_CONTAINS(r.err, "profiling is off");
    CHECK(!exists(path));
    free(r.err);
  }
  /* A valid value then records to the file. */
  unsetenv("PIPEPROF_LIVE");
  setenv("PIPEPROF_ALERTS", "off", 1);
  env_run r = init_from_env();
  CHECK_EQ(r.rc, PP_OK);
  CHECK(r.running);
  CHECK_STR(r.err, "");
  CHECK(exists(path));
  free(r.err);
}

/* A session already running: the second pp_init_from_env fails without
 * creating (or truncating) anything either. */
PP_TEST(env_failed_init_leaves_existing_file_alone) {
  char path[4200];
  env_out(path, sizeof path);
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  fputs("earlier", f);
  fclose(f);
  setenv("PIPEPROF_LIVE", "bogus=1", 1);
  env_run r = init_from_env();
  CHECK_EQ(r.rc, PP_EENV);
  free(r.err);
  size_t len;
  char *d = pp_test_slurp(path, &len);
  CHECK(d != NULL);
  CHECK_STR(d, "earlier");
  free(d);
}

/* ---- the parser's edges (src/core/env.c) -------------------------------- */

PP_TEST(env_parse_numbers_one_rule) {
  uint64_t x = 7;
  CHECK_EQ(pp__env_uint("16", 16, 1048576, &x), 0);
  CHECK_EQ_U(x, 16);
  CHECK_EQ(pp__env_uint("0016", 0, 100, &x), 0);
  CHECK_EQ_U(x, 16);
  CHECK_EQ(pp__env_uint("18446744073709551615", 0, UINT64_MAX, &x), 0);
  CHECK_EQ_U(x, UINT64_MAX);
  static const char *const bad[] = {
      "",   " 16", "16 ", "\t16", "16\n", "+16", "-16", "0x10", "1e3",
      "16k", "1 6", "18446744073709551616", "99999999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    x = 7;
    if (pp__env_uint(bad[i], 0, UINT64_MAX, &x) != -1)
      PP_FAIL("\"%s\" accepted", bad[i]);
    CHECK_EQ_U(x, 7);
  }
  CHECK_EQ(pp__env_uint("15", 16, 32, &x), -1);
  CHECK_EQ(pp__env_uint("33", 16, 32, &x), -1);
  CHECK_EQ(pp__env_uint("32", 16, 32, &x), 0);
}

PP_TEST(env_parse_keywords) {
  int b = -1;
  static const char *const yes[] = {"1", "on", "ON", "True", "yes"};
  static const char *const no[] = {"0", "off", "FALSE", "No", ""};
  for (size_t i = 0; i < 5; i++) {
    CHECK_EQ(pp__env_bool(yes[i], &b), 0);
    CHECK_EQ(b, 1);
    CHECK_EQ(pp__env_bool(no[i], &b), 0);
    CHECK_EQ(b, 0);
  }
  CHECK_EQ(pp__env_bool(" 1", &b), -1);
  CHECK_EQ(pp__env_bool("1 ", &b), -1);
  CHECK_EQ(pp__env_bool("2", &b), -1);
  CHECK_EQ(pp__env_bool("yess", &b), -1);
  static const char *const modes[] = {"stats", "trace", "flight"};
  CHECK_EQ(pp__env_enum("Flight", modes, 3), 2);
  CHECK_EQ(pp__env_enum("trace ", modes, 3), -1);
  CHECK_EQ(pp__env_enum("", modes, 3), -1);
  CHECK_EQ(pp__env_spec("interval=1s,k=5"), 0);
  CHECK_EQ(pp__env_spec("interval=1s, k=5"), -1);
  CHECK_EQ(pp__env_spec("k=5\n"), -1);
  CHECK_EQ(pp__env_name("my service 1"), 0);
  CHECK_EQ(pp__env_name("my\nservice"), -1);
  CHECK_EQ(pp__env_name("x\x7f"), -1);
}

PP_TEST(env_cut_at_utf8_boundary) {
  char out[8];
  /* "aé€😀": 1 + 2 + 3 + 4 bytes. */
  const char *s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
  CHECK_EQ(pp__env_cut_utf8(out, 1, s), 0);
  CHECK_STR(out, "");
  CHECK_EQ(pp__env_cut_utf8(out, 2, s), 1);
  CHECK_EQ(pp__env_cut_utf8(out, 3, s), 1); /* é would be cut */
  CHECK_EQ(pp__env_cut_utf8(out, 4, s), 3);
  CHECK_EQ(pp__env_cut_utf8(out, 6, s), 3); /* € would be cut */
  CHECK_EQ(pp__env_cut_utf8(out, 7, s), 6);
  CHECK_STR(out, "a\xc3\xa9\xe2\x82\xac");
  CHECK_EQ(pp__env_cut_utf8(out, 8, s), 6); /* the emoji needs 4 */
  /* Bytes that are not UTF-8 count one each. */
  CHECK_EQ(pp__env_cut_utf8(out, 4, "\xff\xfe\xc3\xa9"), 2);
  CHECK_EQ(pp__env_cut_utf8(out, 8, "ab\xe2\x82"), 4);
}

PP_TEST(env_escape_control_characters) {
  char out[64];
  pp__env_escape(out, sizeof out, "a\nb\tc\"d\\e\x01\x7f\xff");
  CHECK_STR(out, "a\\nb\\tc\\\"d\\\\e\\x01\\x7f\\xff");
  pp__env_escape(out, sizeof out, "caf\xc3\xa9");
  CHECK_STR(out, "caf\xc3\xa9"); /* valid UTF-8 stays */
  char lng[300];
  memset(lng, '\n', sizeof lng - 1);
  lng[sizeof lng - 1] = 0;
  pp__env_escape(out, 16, lng);
  CHECK_STR(out, "\\n\\n\\n\\n\\n\\n...");
  pp__env_escape(out, 8, "abcdefg");
  CHECK_STR(out, "abcdefg");
  pp__env_escape(out, 8, "abcdefgh");
  CHECK_STR(out, "abcd...");
}

/* ---- every PIPEPROF_* variable follows it -------------------------------- */

static void env_clear_all(void) {
  static const char *const vars[] = {
      "PIPEPROF_MODE",    "PIPEPROF_BUFFER_KIB", "PIPEPROF_FLUSH_MS",
      "PIPEPROF_SIGNALS", "PIPEPROF_CLOCK",      "PIPEPROF_SAMPLE_HZ",
      "PIPEPROF_GPU_SLOTS", "PIPEPROF_CUDA",     "PIPEPROF_PROCESS_NAME",
      "PIPEPROF_LIVE",    "PIPEPROF_ALERTS",     "PIPEPROF_OWNER_PID"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
    unsetenv(vars[i]);
}

/* Surrounding whitespace is refused by every numeric variable (" 16" was
 * accepted by some and refused by others), an invalid PIPEPROF_CUDA leaves
 * profiling off (it used to leave it on), and a value with a newline is
 * printed escaped on one line (it was echoed raw over several). */
PP_TEST(env_every_variable_one_rule) {
  char path[4200];
  static const char *const cases[][2] = {
      {"PIPEPROF_BUFFER_KIB", " 1024"}, {"PIPEPROF_BUFFER_KIB", "1024 "},
      {"PIPEPROF_FLUSH_MS", " 16"},     {"PIPEPROF_SAMPLE_HZ", " 16"},
      {"PIPEPROF_GPU_SLOTS", " 16"},    {"PIPEPROF_GPU_SLOTS", "+16"},
      {"PIPEPROF_SIGNALS", " 1"},       {"PIPEPROF_MODE", "trace "},
      {"PIPEPROF_CLOCK", " tsc"},       {"PIPEPROF_CUDA", "maybe"},
      {"PIPEPROF_CUDA", " 1"},          {"PIPEPROF_MODE", "trace\nx"},
      {"PIPEPROF_PROCESS_NAME", "a\nb"}, {"PIPEPROF_LIVE", "k=5\nx"},
      {"PIPEPROF_LIVE", "k= 5"},        {"PIPEPROF_ALERTS", "mem=\t90%"},
      {"PIPEPROF", " 1"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    env_clear_all();
    env_out(path, sizeof path);
    setenv(cases[i][0], cases[i][1], 1);
    env_run r = init_from_env();
    if (r.rc != PP_EENV || r.running)
      PP_FAIL("%s=\"%s\": rc %d, running %d", cases[i][0], cases[i][1], r.rc,
              r.running);
    if (pp_test_count_lines(r.err) != 1)
      PP_FAIL("%s: expected one line, got:\n%s", cases[i][0], r.err);
    CHECK_CONTAINS(r.err, "profiling is off");
    CHECK_CONTAINS(r.err, cases[i][0]);
    if (strchr(cases[i][1], '\n'))
      CHECK_CONTAINS(r.err, "\\n");
    CHECK(!exists(path));
    free(r.err);
  }
  /* Keywords ignore case everywhere. */
  env_clear_all();
  env_out(path, sizeof path);
  setenv("PIPEPROF_MODE", "Stats", 1);
  setenv("PIPEPROF_CLOCK", "MONOTONIC", 1);
  setenv("PIPEPROF_SIGNALS", "Off", 1);
  env_run r = init_from_env();
  CHECK_EQ(r.rc, PP_OK);
  CHECK_STR(r.err, "");
  free(r.err);
  pp_trace t;
  char err[512];
  CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
  CHECK_STR(pp_trace_meta(&t, "mode"), "stats");
  CHECK_STR(pp_trace_meta(&t, "tick_source"), "monotonic");
  pp_trace_free(&t);
}

/* PIPEPROF_PROCESS_NAME longer than the 63 bytes kept is cut before a
 * UTF-8 character that would not fit (it was cut inside one). */
PP_TEST(env_process_name_cut_at_character) {
  char path[4200], name[128] = "";
  env_clear_all();
  env_out(path, sizeof path);
  for (int i = 0; i < 40; i++)
    strcat(name, "\xc3\xa9"); /* é: 80 bytes */
  setenv("PIPEPROF_PROCESS_NAME", name, 1);
  env_run r = init_from_env();
  CHECK_EQ(r.rc, PP_OK);
  free(r.err);
  pp_trace t;
  char err[512];
  CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
  const char *got = pp_trace_meta(&t, "process_name");
  CHECK(got != NULL);
  CHECK_EQ(strlen(got), 62); /* 31 whole characters */
  CHECK(strncmp(got, name, 62) == 0);
  pp_trace_free(&t);
}

/* One duration rule for PIPEPROF_LIVE/_ALERTS windows, SLOs and `sweep
 * --latency-bound`: digits with an optional fraction, then exactly one
 * unit; callers needing a positive value check it themselves. */
PP_TEST(env_parse_duration_one_rule) {
  static const struct {
    const char *s;
    int rc;
    int64_t ns;
  } cases[] = {{"1s", 0, 1000000000},
               {"1.5ms", 0, 1500000},
               {"250us", 0, 250000},
               {"5000ns", 0, 5000},
               {"0ms", 0, 0},
               {"0.4ns", 0, 0},
               {"0.6ns", 0, 1},
               {"9000000000s", 0, 9000000000000000000},
               {"9000000001s", -1, 0},
               {"1", -1, 0},
               {"ms", -1, 0},
               {"-1ms", -1, 0},
               {"1e3ms", -1, 0},
               {"1 ms", -1, 0},
               {"1msx", -1, 0},
               {"1MS", -1, 0},
               {"", -1, 0},
               {".", -1, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int64_t ns = -7;
    int rc = pp__parse_duration(cases[i].s, strlen(cases[i].s), &ns);
    if (rc != cases[i].rc)
      PP_FAIL("'%s': rc %d, want %d", cases[i].s, rc, cases[i].rc);
    if (rc == 0 && ns != cases[i].ns)
      PP_FAIL("'%s': %lld ns, want %lld", cases[i].s, (long long)ns,
              (long long)cases[i].ns);
  }
  /* the length bounds it: "20ms" read as its first 3 bytes is "20m" */
  int64_t ns;
  CHECK_EQ(pp__parse_duration("20ms", 3, &ns), -1);
  CHECK_EQ(pp__parse_duration("2s0", 2, &ns), 0);
  CHECK_EQ(ns, 2000000000);
}
