/* SPDX-License-Identifier: MIT */
/*
 * Tests of the pipeprof command (src/cli/main.c) through the real binary in
 * the build directory: help and version, usage errors (exit 2, one line on
 * stderr), failures (exit 1, one line naming the file), report on empty,
 * corrupt, event-less and valid traces, every export format (the JSON ones
 * parsed with jansson when available), and the demo. Standard output and
 * standard error are captured separately.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef PP_HAVE_JANSSON
#include <jansson.h>
#endif

#include "pipeprof.h"
#include "runner.h"

/* Shared CLI helpers from tests/runner.h. */
typedef pp_cli_result cli_result;
#define cli pp_test_cli
#define cli_free pp_cli_result_free
#define count_lines pp_test_count_lines
/* Exit status rc, nothing on stdout, exactly one line on stderr. */
#define CHECK_ONE_LINE_ERROR(r, status)                                        \
  CHECK_ONE_LINE_ERROR_FROM(r, status, "pipeprof")

static void tpath(char *buf, size_t len, const char *name) {
  snprintf(buf, len, "%s/%s", pp_test_tmpdir(), name);
}

static void write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  CHECK_EQ(fwrite(data, 1, len, f), len);
  CHECK_EQ(fclose(f), 0);
}

/* A small valid trace recorded by the library in this process. */
static void make_trace(const char *path, int with_events) {
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  if (with_events) {
    pp_thread_name("cli-main");
    for (int i = 0; i < 20; i++) {
      PP_ZONE("cli-outer");
      {
        PP_ZONE("cli \"quoted\", zone");
        PP_COUNTER_SET("cli-counter", i);
      }
      PP_FLOW_BEGIN("cli-flow", (uint64_t)i);
      PP_FRAME_MARK("cli-frames");
    }
  }
  CHECK_EQ(pp_shutdown(), PP_OK);
}

static int file_size(const char *path, long *size) {
  struct stat st;
  if (stat(path, &st) != 0)
    return -1;
  *size = (long)st.st_size;
  return 0;
}

/* ---- help, version, usage errors ----------------------------------------- */

PP_TEST(cli_help_and_version) {
  cli_result r = cli("--help");
  CHECK_EQ(r.rc, 0);
  CHECK_STR(r.err, "");
  static const char *const cmds[] = {"report", "export", "demo", "version",
                                     "help"};
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    CHECK_CONTAINS(r.out, cmds[i]);
  CHECK_CONTAINS(r.out, "usage: pipeprof");
  cli_free(&r);

  r = cli("-h");
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "usage: pipeprof");
  cli_free(&r);

  r = cli("help");
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "report");
  cli_free(&r);

  static const char *const vforms[] = {"--version", "-V", "version"};
  for (size_t i = 0; i < 3; i++) {
    r = cli("%s", vforms[i]);
    CHECK_EQ(r.rc, 0);
    CHECK_STR(r.err, "");
    CHECK_CONTAINS(r.out, "pipeprof");
    CHECK_CONTAINS(r.out, pp_version_string());
    CHECK_EQ(count_lines(r.out), 1);
    cli_free(&r);
  }

  /* No command: usage on stderr, exit 2. */
  r = cli("%s", "");
  CHECK_EQ(r.rc, 2);
  CHECK_STR(r.out, "");
  CHECK_CONTAINS(r.err, "usage: pipeprof");
  cli_free(&r);
}

PP_TEST(cli_command_help) {
  static const char *const cmds[] = {"report", "export", "demo"};
  for (size_t i = 0; i < 3; i++) {
    char want[64];
    snprintf(want, sizeof want, "usage: pipeprof %s", cmds[i]);
    cli_result r = cli("help %s", cmds[i]);
    CHECK_EQ(r.rc, 0);
    CHECK_STR(r.err, "");
    CHECK_CONTAINS(r.out, want);
    cli_free(&r);
    r = cli("%s --help", cmds[i]);
    CHECK_EQ(r.rc, 0);
    CHECK_CONTAINS(r.out, want);
    cli_free(&r);
  }
  cli_result r = cli("help report");
  CHECK_CONTAINS(r.out, "--top");
  cli_free(&r);
  r = cli("help nosuchcommand");
  CHECK_ONE_LINE_ERROR(r, 2);
  CHECK_CONTAINS(r.err, "nosuchcommand");
  cli_free(&r);
}

PP_TEST(cli_usage_errors) {
  char trace[4096];
  tpath(trace, sizeof trace, "t.pptrace");
  make_trace(trace, 1);

  cli_result r = cli("frobnicate");
  CHECK_ONE_LINE_ERROR(r, 2);
  CHECK_CONTAINS(r.err, "frobnicate");
  cli_free(&r);

  r = cli("report");
  CHECK_ONE_LINE_ERROR(r, 2);
  cli_free(&r);

  r = cli("report --top abc '%s'", trace);
  CHECK_ONE_LINE_ERROR(r, 2);
  CHECK_CONTAINS(r.err, "abc");
  cli_free(&r);

  r = cli("report '%s' --top", trace);
  CHECK_ONE_LINE_ERROR(r, 2);
  cli_free(&r);

  r = cli("report --top -3 '%s'", trace);
  CHECK_ONE_LINE_ERROR(r, 2);
  cli_free(&r);

  r = cli("report --bogus '%s'", trace);
  CHECK_ONE_LINE_ERROR(r, 2);
  CHECK_CONTAINS(r.err, "--bogus");
  cli_free(&r);

  r = cli("report '%s' '%s'", trace, trace);
  CHECK_ONE_LINE_ERROR(r, 2);
  cli_free(&r);

  r = cli("export '%s' --format bogus", trace);
  CHECK_ONE_LINE_ERROR(r, 2);
  CHECK_CONTAINS(r.err, "bogus");
  cli_free(&r);

  r = cli("export '%s'", trace);
  CHECK_ONE_LINE_ERROR(r, 2);
  CHECK_CONTAINS(r.err, "--format");
  cli_free(&r);

  r = cli("export --format csv");
  CHECK_ONE_LINE_ERROR(r, 2);
  cli_free(&r);

  r = cli("export '%s' --format", trace);
  CHECK_ONE_LINE_ERROR(r, 2);
  cli_free(&r);

  r = cli("export '%s' --format csv -o", trace);
  CHECK_ONE_LINE_ERROR(r, 2);
  cli_free(&r);

  r = cli("demo --frames zero");
  CHECK_ONE_LINE_ERROR(r, 2);
  cli_free(&r);

  r = cli("demo --mode fast");
  CHECK_ONE_LINE_ERROR(r, 2);
  cli_free(&r);
}

/* ---- failures on bad input ---------------------------------------------- */

PP_TEST(cli_bad_files) {
  char missing[4096], corrupt[4096], empty[4096], hdr[4096], trace[4096];
  tpath(missing, sizeof missing, "missing.pptrace");
  tpath(corrupt, sizeof corrupt, "corrupt.pptrace");
  tpath(empty, sizeof empty, "empty.pptrace");
  tpath(hdr, sizeof hdr, "hdr.pptrace");
  tpath(trace, sizeof trace, "t.pptrace");

  cli_result r = cli("report '%s'", missing);
  CHECK_ONE_LINE_ERROR(r, 1);
  CHECK_CONTAINS(r.err, missing);
  cli_free(&r);
  r = cli("export '%s' --format chrome", missing);
  CHECK_ONE_LINE_ERROR(r, 1);
  CHECK_CONTAINS(r.err, missing);
  cli_free(&r);

  unsigned char junk[4096];
  uint32_t s = 99;
  for (size_t i = 0; i < sizeof junk; i++) {
    s = s * 1664525u + 1013904223u;
    junk[i] = (unsigned char)(s >> 24);
  }
  write_file(corrupt, junk, sizeof junk);
  r = cli("report '%s'", corrupt);
  CHECK_ONE_LINE_ERROR(r, 1);
  CHECK_CONTAINS(r.err, corrupt);
  cli_free(&r);

  write_file(empty, "", 0);
  r = cli("report '%s'", empty);
  CHECK_ONE_LINE_ERROR(r, 1);
  CHECK_CONTAINS(r.err, empty);
  cli_free(&r);

  /* A real header followed by garbage: no intact chunk. */
  make_trace(trace, 1);
  size_t len;
  char *d = pp_test_slurp(trace, &len);
  CHECK(d != NULL);
  memcpy(junk, d, 64);
  free(d);
  write_file(hdr, junk, sizeof junk);
  r = cli("report '%s'", hdr);
  CHECK_ONE_LINE_ERROR(r, 1);
  CHECK_CONTAINS(r.err, hdr);
  cli_free(&r);

  /* A directory is not a trace. */
  r = cli("report '%s'", pp_test_tmpdir());
  CHECK_ONE_LINE_ERROR(r, 1);
  cli_free(&r);
}

/* ---- report ----------------------------------------------------------------
 */

PP_TEST(cli_report_empty_trace) {
  char trace[4096];
  tpath(trace, sizeof trace, "empty-session.pptrace");
  make_trace(trace, 0);
  cli_result r = cli("report '%s'", trace);
  CHECK_EQ(r.rc, 0);
  CHECK_STR(r.err, "");
  CHECK_CONTAINS(r.out, "no zones recorded");
  CHECK_CONTAINS(r.out, "dropped events: 0");
  cli_free(&r);
  /* Every exporter copes with it. */
  static const char *const fmts[] = {"chrome", "json", "csv"};
  for (size_t i = 0; i < 3; i++) {
    r = cli("export '%s' --format %s", trace, fmts[i]);
    CHECK_EQ(r.rc, 0);
    CHECK_STR(r.err, "");
    CHECK_GT(strlen(r.out), 0);
    cli_free(&r);
  }
}

PP_TEST(cli_report_valid_trace) {
  char trace[4096];
  tpath(trace, sizeof trace, "t.pptrace");
  make_trace(trace, 1);
  cli_result r = cli("report '%s'", trace);
  CHECK_EQ(r.rc, 0);
  CHECK_STR(r.err, "");
  CHECK_CONTAINS(r.out, "cli-outer");
  CHECK_CONTAINS(r.out, "cli-counter");
  CHECK_CONTAINS(r.out, "cli-frames");
  CHECK_CONTAINS(r.out, "cli-main");
  CHECK_CONTAINS(r.out, "dropped events: 0");
  CHECK(strstr(r.out, "no zones recorded") == NULL);
  CHECK(strstr(r.out, "warning") == NULL);
  cli_free(&r);
  r = cli("report --top 1 '%s'", trace);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, " 1. ");
  CHECK(strstr(r.out, " 2. ") == NULL);
  cli_free(&r);
  r = cli("report --top 0 '%s'", trace);
  CHECK_EQ(r.rc, 0);
  CHECK(strstr(r.out, " 1. ") == NULL);
  cli_free(&r);
}

/* ---- export ------------------------------------------------------------- */

PP_TEST(cli_export_formats) {
  char trace[4096], chrome[4096], json[4096], csv[4096];
  tpath(trace, sizeof trace, "t.pptrace");
  tpath(chrome, sizeof chrome, "out.chrome.json");
  tpath(json, sizeof json, "out.summary.json");
  tpath(csv, sizeof csv, "out.csv");
  make_trace(trace, 1);

  cli_result r = cli("export '%s' --format chrome -o '%s'", trace, chrome);
  CHECK_EQ(r.rc, 0);
  CHECK_STR(r.err, "");
  CHECK_STR(r.out, "");
  cli_free(&r);
  r = cli("export --format=json '%s' --output '%s'", trace, json);
  CHECK_EQ(r.rc, 0);
  CHECK_STR(r.err, "");
  cli_free(&r);
  r = cli("export -f csv '%s' -o '%s'", trace, csv);
  CHECK_EQ(r.rc, 0);
  cli_free(&r);

  size_t n;
  char *c = pp_test_slurp(chrome, &n);
  CHECK(c != NULL);
  CHECK_CONTAINS(c, "traceEvents");
  CHECK_CONTAINS(c, "cli-outer");
  /* The same bytes on standard output ("-o -" and no -o). */
  r = cli("export '%s' --format perfetto -o -", trace);
  CHECK_EQ(r.rc, 0);
  CHECK_STR(r.out, c);
  cli_free(&r);
  r = cli("export '%s' --format chrome", trace);
  CHECK_EQ(r.rc, 0);
  CHECK_STR(r.out, c);
  cli_free(&r);
  free(c);

  char *v = pp_test_slurp(csv, &n);
  CHECK(v != NULL);
  CHECK_CONTAINS(v, "\r\n");
  CHECK_CONTAINS(v, "cli-outer");
  CHECK_CONTAINS(v, "\"cli \"\"quoted\"\", zone\""); /* RFC 4180 quoting */
  free(v);

#ifdef PP_HAVE_JANSSON
  json_error_t jerr;
  json_t *root = json_load_file(chrome, 0, &jerr);
  if (!root)
    PP_FAIL("%s: invalid JSON at line %d: %s", chrome, jerr.line, jerr.text);
  json_t *evs = json_object_get(root, "traceEvents");
  CHECK(json_is_array(evs));
  size_t nx = 0, quoted = 0;
  for (size_t i = 0; i < json_array_size(evs); i++) {
    json_t *e = json_array_get(evs, i);
    CHECK(json_is_object(e));
    const char *ph = json_string_value(json_object_get(e, "ph"));
    const char *name = json_string_value(json_object_get(e, "name"));
    CHECK(ph != NULL);
    if (strcmp(ph, "X") == 0 && name) {
      nx += strcmp(name, "cli-outer") == 0;
      quoted += strcmp(name, "cli \"quoted\", zone") == 0;
    }
  }
  CHECK_EQ(nx, 20);
  CHECK_EQ(quoted, 20);
  json_decref(root);

  root = json_load_file(json, 0, &jerr);
  if (!root)
    PP_FAIL("%s: invalid JSON at line %d: %s", json, jerr.line, jerr.text);
  CHECK_STR(json_string_value(json_object_get(root, "schema")),
            "pipeprof.summary");
  CHECK(json_is_array(json_object_get(root, "zones")));
  json_decref(root);
#else
  char *j = pp_test_slurp(json, &n);
  CHECK(j != NULL);
  CHECK_CONTAINS(j, "pipeprof.summary");
  free(j);
#endif
}

PP_TEST(cli_export_unwritable_output) {
  char trace[4096], out[4096];
  tpath(trace, sizeof trace, "t.pptrace");
  tpath(out, sizeof out, "no-such-dir/out.json");
  make_trace(trace, 1);
  cli_result r = cli("export '%s' --format chrome -o '%s'", trace, out);
  CHECK_ONE_LINE_ERROR(r, 1);
  CHECK_CONTAINS(r.err, out);
  cli_free(&r);
  /* A full device: the write error is reported, exit 1. */
  struct stat st;
  if (stat("/dev/full", &st) == 0) {
    r = cli("export '%s' --format json -o /dev/full", trace);
    CHECK_ONE_LINE_ERROR(r, 1);
    cli_free(&r);
  }
}

/* ---- demo ------------------------------------------------------------------
 */

PP_TEST_T(cli_demo, 180) {
  char dir[4096];
  tpath(dir, sizeof dir, "demo");
  cli_result r = cli("demo --out '%s' --frames 30", dir);
  if (r.rc != 0)
    PP_FAIL("demo exit %d:\n%s\n%s", r.rc, r.out, r.err);
  static const char *const files[] = {"demo.pptrace", "demo.chrome.json",
                                      "demo.summary.json"};
  for (size_t i = 0; i < 3; i++) {
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, files[i]);
    long size = 0;
    if (file_size(p, &size) != 0)
      PP_FAIL("demo did not write %s", p);
    CHECK_GT(size, 0);
    CHECK_CONTAINS(r.out, files[i]);
  }
  static const char *const stages[] = {"detect", "motion", "preprocess",
                                       "visualize"};
  for (size_t i = 0; i < 4; i++)
    CHECK_CONTAINS(r.out, stages[i]);
  CHECK_CONTAINS(r.out, "dropped events: 0");
  cli_free(&r);

#ifdef PP_HAVE_JANSSON
  char p[4200];
  snprintf(p, sizeof p, "%s/demo.chrome.json", dir);
  json_error_t jerr;
  json_t *root = json_load_file(p, 0, &jerr);
  if (!root)
    PP_FAIL("%s: invalid JSON at line %d: %s", p, jerr.line, jerr.text);
  CHECK(json_array_size(json_object_get(root, "traceEvents")) > 0);
  json_decref(root);
  snprintf(p, sizeof p, "%s/demo.summary.json", dir);
  root = json_load_file(p, 0, &jerr);
  if (!root)
    PP_FAIL("%s: invalid JSON at line %d: %s", p, jerr.line, jerr.text);
  json_decref(root);
#endif

  /* The written trace reports the same way on its own. */
  r = cli("report '%s/demo.pptrace'", dir);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "detect");
  cli_free(&r);
}
