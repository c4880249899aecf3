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

/* --details: the statistics from every event, the details from a window. */
PP_TEST(cli_report_details_window) {
  char trace[4096];
  tpath(trace, sizeof trace, "t.pptrace");
  make_trace(trace, 1); /* 20 iterations: about 140 events */
  cli_result all = cli("report '%s'", trace);
  CHECK_EQ(all.rc, 0);
  CHECK(strstr(all.out, "note: the statistics count all") == NULL);
  cli_result few = cli("report --details 10 '%s'", trace);
  CHECK_EQ(few.rc, 0);
  CHECK_CONTAINS(few.out, "note: the statistics count all ");
  CHECK_CONTAINS(few.out, "--details N keeps more");
  /* the zone table is the same line for line */
  const char *za = strstr(all.out, "\nzones"), *zf = strstr(few.out, "\nzones");
  CHECK(za && zf);
  const char *ea = strstr(za, "\n\n"), *ef = strstr(zf, "\n\n");
  CHECK(ea && ef);
  CHECK_EQ(ea - za, ef - zf);
  CHECK(memcmp(za, zf, (size_t)(ea - za)) == 0);
  cli_free(&all);
  cli_free(&few);
  cli_result j = cli("export --details 10 --format json '%s'", trace);
  CHECK_EQ(j.rc, 0);
  CHECK_CONTAINS(j.out, "\"events_kept\":");
  CHECK(strstr(j.out, "\"details_complete_until_ns\":null") == NULL);
  cli_free(&j);
  j = cli("export --details all --format json '%s'", trace);
  CHECK_EQ(j.rc, 0);
  CHECK_CONTAINS(j.out, "\"details_complete_until_ns\":null");
  cli_free(&j);
  cli_result bad = cli("report --details lots '%s'", trace);
  CHECK_EQ(bad.rc, 2);
  CHECK_CONTAINS(bad.err, "bad --details value 'lots'");
  cli_free(&bad);
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

/* ---- --help against docs/cli.md --------------------------------------------
 * Every option a command's --help lists must be documented in that
 * command's section of docs/cli.md ("## pipeprof NAME", up to the next
 * "## "), or in a page of docs/ the section links to (diff.md, history.md);
 * and every option the section itself lists, in a fenced block starting
 * with "usage:" or in the first column of a table, must be in --help. The
 * commands come from `pipeprof --help`, the options from the texts, so
 * new commands and options are covered without a change here. */

typedef struct strbuf {
  char *s;
  size_t len, cap;
} strbuf;

static void sb_add(strbuf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1)
      cap *= 2;
    char *p = realloc(b->s, cap);
    CHECK(p != NULL);
    b->s = p;
    b->cap = cap;
  }
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = 0;
}

static void sb_addf(strbuf *b, const char *f, ...)
    __attribute__((format(printf, 2, 3)));
static void sb_addf(strbuf *b, const char *f, ...) {
  char tmp[1024];
  va_list ap;
  va_start(ap, f);
  int n = vsnprintf(tmp, sizeof tmp, f, ap);
  va_end(ap);
  CHECK(n >= 0);
  sb_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static int opt_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* The option starting at s[i] ("--name" or "-x", not inside a word, not
 * "--" alone): its length, else 0. */
static size_t opt_at(const char *s, size_t i) {
  if (s[i] != '-' || (i > 0 && opt_char(s[i - 1])))
    return 0;
  size_t j = i + 1;
  if (s[j] == '-')
    j++;
  if (!((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z')))
    return 0;
  size_t k = j;
  while (opt_char(s[k]))
    k++;
  if (j == i + 1 && k != j + 1) /* a single dash takes one letter */
    return 0;
  while (k > j && s[k - 1] == '-')
    k--;
  return k - i;
}

/* Whether the option opt (length n) occurs in text as a whole token. */
static int has_opt(const char *text, const char *opt, size_t n) {
  for (size_t i = 0; text[i]; i++)
    if (opt_at(text, i) == n && strncmp(text + i, opt, n) == 0)
      return 1;
  return 0;
}

/* The options in text, each once, as "opt\n" lines in *out. */
static void collect_opts(const char *text, size_t len, strbuf *out) {
  char *copy = malloc(len + 1);
  CHECK(copy != NULL);
  memcpy(copy, text, len);
  copy[len] = 0;
  for (size_t i = 0; i < len; i++) {
    size_t n = opt_at(copy, i);
    if (!n)
      continue;
    char o[64];
    snprintf(o, sizeof o, "%.*s", (int)(n < 63 ? n : 63), copy + i);
    if (!out->s || !has_opt(out->s, o, strlen(o))) {
      sb_add(out, o, strlen(o));
      sb_add(out, "\n", 1);
    }
    i += n - 1;
  }
  free(copy);
}

/* Section "## pipeprof NAME" of md: start and length; NULL when absent. */
static const char *md_section(const char *md, const char *name, size_t *len) {
  char head[128];
  snprintf(head, sizeof head, "\n## pipeprof %s\n", name);
  const char *s = strstr(md, head);
  if (!s)
    return NULL;
  s++;
  const char *e = strstr(s + 1, "\n## ");
  *len = e ? (size_t)(e + 1 - s) : strlen(s);
  return s;
}

/* The options a section lists itself: fenced blocks that start with
 * "usage:", and the first cell of table rows. */
static void section_listed_opts(const char *sec, size_t len, strbuf *out) {
  const char *p = sec, *end = sec + len;
  int in_fence = 0, usage_fence = 0;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    size_t n = (size_t)(le - p);
    if (n >= 3 && strncmp(p, "```", 3) == 0) {
      in_fence = !in_fence;
      usage_fence = in_fence && le + 1 < end &&
                    strncmp(le + 1, "usage:", 6) == 0;
    } else if (in_fence && usage_fence) {
      collect_opts(p, n, out);
    } else if (!in_fence && n > 1 && p[0] == '|') {
      const char *cell_end = memchr(p + 1, '|', n - 1);
      if (cell_end)
        collect_opts(p + 1, (size_t)(cell_end - p - 1), out);
    }
    p = le + 1;
  }
}

/* Section text plus the docs/ pages it links to ("](page.md" or
 * "](page.md#anchor"), into *out; the linked names into *pages. */
static void section_with_links(const char *sec, size_t len, strbuf *out,
                               strbuf *pages) {
  sb_add(out, sec, len);
  const char *p = sec, *end = sec + len;
  while ((p = strstr(p, "](")) && p < end) {
    p += 2;
    size_t n = strcspn(p, ")#");
    if (n > 3 && n < 200 && strncmp(p + n - 3, ".md", 3) == 0 &&
        !memchr(p, ':', n) && p + n < end) {
      char path[4400];
      snprintf(path, sizeof path, "%s/docs/%.*s", pp_test_srcdir(), (int)n,
               p);
      char *page = pp_test_slurp(path, NULL);
      if (page) {
        sb_add(out, "\n", 1);
        sb_add(out, page, strlen(page));
        sb_addf(pages, " docs/%.*s", (int)n, p);
        free(page);
      }
    }
  }
}

PP_TEST(cli_help_matches_docs) {
  char path[4200];
  snprintf(path, sizeof path, "%s/docs/cli.md", pp_test_srcdir());
  char *md = pp_test_slurp(path, NULL);
  if (!md)
    PP_FAIL("cannot read %s", path);
  cli_result top = cli("--help");
  CHECK_EQ(top.rc, 0);
  const char *list = strstr(top.out, "\ncommands:\n");
  CHECK(list != NULL);
  list += strlen("\ncommands:\n");

  strbuf problems = {0};
  int ncmds = 0;
  while (list[0] == ' ' && list[1] == ' ' && list[2] != ' ') {
    char name[64];
    if (sscanf(list, " %63s", name) != 1)
      break;
    ncmds++;
    size_t slen;
    const char *sec = md_section(md, name, &slen);
    cli_result r = cli("%s --help", name);
    if (r.rc != 0)
      sb_addf(&problems, "'pipeprof %s --help' exits %d\n", name, r.rc);
    if (!sec) {
      sb_addf(&problems, "docs/cli.md has no section '## pipeprof %s'\n",
              name);
    } else {
      strbuf doc = {0}, pages = {0}, help_opts = {0}, listed = {0};
      section_with_links(sec, slen, &doc, &pages);
      collect_opts(r.out, strlen(r.out), &help_opts);
      for (char *o = help_opts.s; o && *o;) {
        char *nl = strchr(o, '\n');
        *nl = 0;
        if (!has_opt(doc.s, o, strlen(o)))
          sb_addf(&problems,
                  "'pipeprof %s --help' lists %s, which is not documented "
                  "in docs/cli.md section '## pipeprof %s'%s%s\n",
                  name, o, name, pages.s ? " or in the pages it links:" : "",
                  pages.s ? pages.s : "");
        o = nl + 1;
      }
      section_listed_opts(sec, slen, &listed);
      for (char *o = listed.s; o && *o;) {
        char *nl = strchr(o, '\n');
        *nl = 0;
        if (!has_opt(r.out, o, strlen(o)))
          sb_addf(&problems,
                  "docs/cli.md section '## pipeprof %s' lists %s, which "
                  "'pipeprof %s --help' does not\n",
                  name, o, name);
        o = nl + 1;
      }
      free(doc.s);
      free(pages.s);
      free(help_opts.s);
      free(listed.s);
    }
    cli_free(&r);
    const char *nl = strchr(list, '\n');
    if (!nl)
      break;
    list = nl + 1;
  }
  CHECK_GE(ncmds, 5); /* report, export, demo, version, help at least */
  cli_free(&top);
  free(md);
  if (problems.s)
    PP_FAIL("--help and docs/cli.md disagree:\n%s", problems.s);
}
