/* SPDX-License-Identifier: MIT */
/*
 * Tests of the HTML report (src/export/html.c, src/export/html/): the page
 * is one file with no external reference; the summary embedded in it parses
 * and equals the summary JSON export (plus the timeline); names that try to
 * end the script element, or hold quotes, ampersands, newlines, U+2028 and
 * U+2029, cannot break out and round-trip exactly; the timeline keeps the
 * longest top-level instances when bounded; the CLI writes it (export,
 * report --html, demo) and fails with one line on bad input; the asset
 * generator refuses assets that would end their element. A real headless
 * Chromium opens the page and the rendered DOM is checked (zone rows,
 * hostile names as text, timeline bars, the script's success marker);
 * without Chromium that test is skipped unless PP_REQUIRE_CHROMIUM=1.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "export/export.h"
#include "export/html_page.h"
#include "format/pptrace.h"
#include "model/reader.h"
#include "pipeprof.h"
#include "runner.h"
#include "trace_builder.h"

#ifdef PP_HAVE_JANSSON
#include <jansson.h>
#endif

#define DATA_OPEN "<script type=\"application/json\" id=\"pp-data\">"
#define SVG_NS "http://www.w3.org/2000/svg"

/* ---- helpers ------------------------------------------------------------ */

static void tpath(char *buf, size_t len, const char *name) {
  snprintf(buf, len, "%s/%s", pp_test_tmpdir(), name);
}

static void zone(pp_trace *t, size_t th, uint32_t loc, int64_t b, int64_t e) {
  tb_ev(t, th, b, loc, PPT_EV_ZONE_BEGIN);
  tb_ev(t, th, e, loc, PPT_EV_ZONE_END);
}

static char *export_html(const pp_analysis *t, const pp_html_opts *o,
                         size_t *len) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  CHECK(f != NULL);
  CHECK_EQ(pp_export_html_opts(f, t, o), 0);
  CHECK_EQ(fclose(f), 0);
  if (len)
    *len = n;
  return buf;
}

static void write_text(const char *path, const char *s, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  CHECK_EQ(fwrite(s, 1, n, f), n);
  CHECK_EQ(fclose(f), 0);
}

/* The text of the embedded data element (malloc'ed). */
static char *data_json(const char *html) {
  const char *a = strstr(html, DATA_OPEN);
  CHECK(a != NULL);
  a += strlen(DATA_OPEN);
  const char *b = strstr(a, "</script>");
  CHECK(b != NULL);
  char *s = malloc((size_t)(b - a) + 1);
  CHECK(s != NULL);
  memcpy(s, a, (size_t)(b - a));
  s[b - a] = 0;
  return s;
}

/* Whether the build bundled uPlot into the page (the pp-build element
 * says so; cmake/uplot.cmake). */
static int page_has_uplot(const char *html) {
  return strstr(html, "id=\"pp-build\">{\"uplot\":") != NULL;
}

/* Script elements of a page: data, config, build status, report.js, and
 * uPlot when bundled. */
static size_t page_scripts(const char *html) {
  return page_has_uplot(html) ? 5 : 4;
}

static size_t count_ci(const char *hay, const char *needle) {
  size_t n = 0, k = strlen(needle);
  for (const char *p = hay; *p; p++)
    if (strncasecmp(p, needle, k) == 0)
      n++;
  return n;
}

static int has_bytes(const char *s, size_t n, const char *b, size_t k) {
  for (size_t i = 0; i + k <= n; i++)
    if (memcmp(s + i, b, k) == 0)
      return 1;
  return 0;
}

/* A pipeline-like trace: three stage threads with nested zones (a top-level
 * zone per frame and two children), an idle thread, frame marks and a
 * counter. Zone names are the given ones (hostile names in some tests). */
static void build_pipeline(pp_trace *t, const char *const names[3]) {
  memset(t, 0, sizeof *t);
  t->pid = 777;
  tb_meta(t, "process_name", "html-test");
  tb_meta(t, "mode", "trace");
  uint32_t stage[3], child = tb_loc(t, "child", PP_KIND_ZONE);
  for (int i = 0; i < 3; i++)
    stage[i] = tb_loc(t, names[i], PP_KIND_ZONE);
  uint32_t frame = tb_loc(t, "frame", PP_KIND_FRAME);
  uint32_t depth = tb_loc(t, "queue", PP_KIND_COUNTER);
  tb_thread(t, 1, "main"); /* records nothing but a counter */
  tb_ev(t, 0, 100, depth, PPT_EV_COUNTER_SET)->v.i = 3;
  for (int s = 0; s < 3; s++) {
    size_t th = tb_thread(t, 10 + (uint64_t)s, s == 0 ? "source" : "stage");
    for (int f = 0; f < 12; f++) {
      int64_t b = 1000 + f * 1000 + s * 100, e = b + 300 + s * 50 + f;
      tb_ev(t, th, b, stage[s], PPT_EV_ZONE_BEGIN);
      zone(t, th, child, b + 10, b + 60);
      zone(t, th, child, b + 100, b + 150);
      tb_ev(t, th, e, stage[s], PPT_EV_ZONE_END);
      if (s == 2)
        tb_ev(t, th, e + 1, frame, PPT_EV_FRAME);
    }
  }
}

static const char *const plain_names[3] = {"decode", "infer", "encode"};
/* Each tries something else: end the script element (in two spellings),
 * open a comment, quotes and ampersands, control characters, and the two
 * separators JavaScript string literals could not hold before ES2019. */
static const char *const hostile_names[3] = {"</script><b>x",
                                             "a\"b'c&amp;<!--d</SCRIPT >",
                                             "line\nbreak\t\xe2\x80\xa8"
                                             "sep\xe2\x80\xa9"
                                             "end"};

/* ---- the page ------------------------------------------------------------ */

PP_TEST(html_self_contained) {
  pp_trace t;
  pp_analysis a = {0};
  build_pipeline(&t, plain_names);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  size_t n;
  char *html = export_html(&a, NULL, &n);
  CHECK_EQ(strlen(html), n);
  CHECK(strncmp(html, "<!DOCTYPE html>", 15) == 0);
  CHECK_CONTAINS(html, "</html>\n");
  CHECK_CONTAINS(html, "<meta charset=\"utf-8\">");
  /* No network, no other file: nothing is loaded, and the policy says so. */
  CHECK_CONTAINS(html, "Content-Security-Policy");
  CHECK_CONTAINS(html, "default-src 'none'");
  CHECK(strstr(html, "connect-src") == NULL);
  CHECK_EQ(count_ci(html, "src="), 0);
  CHECK_EQ(count_ci(html, "href="), 0);
  CHECK_EQ(count_ci(html, "url("), 0);
  CHECK_EQ(count_ci(html, "@import"), 0);
  CHECK_EQ(count_ci(html, "<link"), 0);
  CHECK_EQ(count_ci(html, "<iframe"), 0);
  /* The only URLs in the page are the SVG namespace name, which names and
   * does not fetch anything, and uPlot's home in its licence comment. */
  size_t uplot_home = count_ci(html, "https://github.com/leeoniya/uPlot");
  CHECK(uplot_home <= (size_t)page_has_uplot(html));
  CHECK_EQ(count_ci(html, "http://") + count_ci(html, "https://"),
           count_ci(html, SVG_NS) + uplot_home);
  CHECK_EQ(count_ci(html, SVG_NS), 1);
  /* Two styles (uPlot's, the report's), the data, configuration and build
   * status, uPlot and the script: each element ends exactly once. */
  CHECK_EQ(count_ci(html, "<style"), 2);
  CHECK_EQ(count_ci(html, "</style"), 2);
  CHECK_EQ(count_ci(html, "<script"), page_scripts(html));
  CHECK_EQ(count_ci(html, "</script"), page_scripts(html));
  CHECK_EQ(count_ci(html, "<!--"), 0);
  CHECK_CONTAINS(html, DATA_OPEN);
  CHECK_CONTAINS(html, "pp-render-ok"); /* the script's success marker */
  free(html);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(html_embedded_json_is_the_summary) {
  pp_trace t;
  pp_analysis a = {0};
  build_pipeline(&t, plain_names);
  tb_meta(&t, "event_cost_ns", "12.5");
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *html = export_html(&a, NULL, NULL);
  char *data = data_json(html);
  char *summary = tb_summary_json(&a);
#ifdef PP_HAVE_JANSSON
  json_error_t jerr;
  json_t *got = json_loads(data, 0, &jerr);
  if (!got)
    PP_FAIL("embedded JSON invalid at %d: %s", jerr.position, jerr.text);
  json_t *want = json_loads(summary, 0, &jerr);
  CHECK(want != NULL);
  /* The timeline is the one member the page adds. */
  json_t *tl = json_incref(json_object_get(got, "timeline"));
  CHECK(json_is_object(tl));
  CHECK_EQ(json_object_del(got, "timeline"), 0);
  CHECK(json_object_get(want, "timeline") == NULL);
  if (!json_equal(got, want))
    PP_FAIL("embedded summary differs from the export:\n%s\n%s", data, summary);

  /* Every top-level instance is there, in start order, with its zone. */
  CHECK(json_is_true(json_object_get(tl, "available")));
  CHECK_EQ(json_integer_value(json_object_get(tl, "spans")), 36);
  CHECK_EQ(json_integer_value(json_object_get(tl, "kept")), 36);
  CHECK_EQ(json_integer_value(json_object_get(tl, "omitted")), 0);
  CHECK_EQ(json_integer_value(json_object_get(tl, "max_spans")),
           PP_HTML_TIMELINE_MAX);
  json_t *ths = json_object_get(tl, "threads");
  CHECK_EQ(json_array_size(ths), t.nthreads);
  json_t *zs = json_object_get(want, "zones");
  for (size_t k = 0; k < t.nthreads; k++) {
    json_t *th = json_array_get(ths, k);
    CHECK_EQ_U(json_integer_value(json_object_get(th, "tid")),
               t.threads[k].tid);
    CHECK_STR(json_string_value(json_object_get(th, "name")),
              t.threads[k].name);
    CHECK_EQ(json_integer_value(json_object_get(th, "omitted")), 0);
    json_t *sp = json_object_get(th, "spans");
    size_t top = 0;
    for (size_t i = 0; i < a.threads[k].nzones; i++) {
      const pp_zone_inst *z = &a.threads[k].zones[i];
      if (z->depth != 0)
        continue;
      json_t *s = json_array_get(sp, top++);
      CHECK_EQ(json_array_size(s), 3);
      CHECK_EQ(json_integer_value(json_array_get(s, 0)), z->start - a.prof.t0);
      CHECK_EQ(json_integer_value(json_array_get(s, 1)), z->end - z->start);
      json_t *zo =
          json_array_get(zs, (size_t)json_integer_value(json_array_get(s, 2)));
      CHECK_STR(json_string_value(json_object_get(zo, "name")),
                pp_trace_loc_name(&t, z->loc));
    }
    CHECK_EQ(json_array_size(sp), top);
    CHECK_EQ(top, k == 0 ? 0 : 12);
  }
  json_decref(tl);
  json_decref(got);
  json_decref(want);
#else
  /* Without jansson: the summary's text is there, byte for byte, up to
   * the added timeline. */
  size_t sl = strlen(summary);
  while (sl && (summary[sl - 1] == '\n' || summary[sl - 1] == '}'))
    sl--;
  CHECK(strncmp(data, summary, sl) == 0);
  CHECK_CONTAINS(data + sl, "\"timeline\"");
#endif
  free(summary);
  free(data);
  free(html);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(html_hostile_names_stay_inside_the_data) {
  pp_trace t;
  pp_analysis a = {0};
  build_pipeline(&t, hostile_names);
  /* Also in the process, thread and META values the header shows. */
  free(t.threads[1].name);
  t.threads[1].name = tb_strdup("</script><script>alert(1)</script>");
  free(t.meta[0].value);
  t.meta[0].value = tb_strdup("proc</script>&\"x\"");
  CHECK_EQ(pp_analyze(&t, &a), 0);
  size_t n;
  char *html = export_html(&a, NULL, &n);
  /* The element ends where the page ends it and nowhere else. */
  CHECK_EQ(count_ci(html, "</script"), page_scripts(html));
  CHECK_EQ(count_ci(html, "<script"), page_scripts(html));
  CHECK_EQ(count_ci(html, "<!--"), 0);
  CHECK(!has_bytes(html, n, "\xe2\x80\xa8", 3));
  CHECK(!has_bytes(html, n, "\xe2\x80\xa9", 3));
  char *data = data_json(html);
  CHECK(strchr(data, '<') == NULL);
  CHECK_CONTAINS(data, "\\u003c/script>\\u003cb>x");
  CHECK_CONTAINS(data, "\\u2028sep\\u2029end");
  CHECK_CONTAINS(data, "line\\u000abreak\\u0009\\u2028");
#ifdef PP_HAVE_JANSSON
  /* JSON.parse gives back exactly the recorded names. */
  json_error_t jerr;
  json_t *root = json_loads(data, 0, &jerr);
  if (!root)
    PP_FAIL("embedded JSON invalid at %d: %s", jerr.position, jerr.text);
  json_t *zs = json_object_get(root, "zones");
  int found[3] = {0, 0, 0};
  for (size_t i = 0; i < json_array_size(zs); i++) {
    const char *nm =
        json_string_value(json_object_get(json_array_get(zs, i), "name"));
    for (int k = 0; k < 3; k++)
      found[k] += strcmp(nm, hostile_names[k]) == 0;
  }
  CHECK(found[0] == 1 && found[1] == 1 && found[2] == 1);
  CHECK_STR(json_string_value(
                json_object_get(json_object_get(root, "process"), "name")),
            "proc</script>&\"x\"");
  CHECK_STR(json_string_value(json_object_get(
                json_array_get(json_object_get(root, "threads"), 1), "name")),
            "</script><script>alert(1)</script>");
  json_decref(root);
#endif
  free(data);
  free(html);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

#ifdef PP_HAVE_JANSSON
/* Thread A: top-level zones of 10..50 ns, each with a child (children are
 * never drawn); thread B: 50, 50 and 5 ns. */
static void build_durations(pp_trace *t) {
  memset(t, 0, sizeof *t);
  uint32_t top = tb_loc(t, "top", PP_KIND_ZONE);
  uint32_t kid = tb_loc(t, "kid", PP_KIND_ZONE);
  size_t a = tb_thread(t, 1, "a"), b = tb_thread(t, 2, "b");
  for (int i = 0; i < 5; i++) {
    int64_t s = 1000 + i * 100;
    tb_ev(t, a, s, top, PPT_EV_ZONE_BEGIN);
    zone(t, a, kid, s + 1, s + 2);
    tb_ev(t, a, s + 10 * (i + 1), top, PPT_EV_ZONE_END);
  }
  zone(t, b, top, 1000, 1050);
  zone(t, b, top, 1100, 1150);
  zone(t, b, top, 1200, 1205);
}

/* The timeline of an export with at most max spans. */
static json_t *timeline_of(const pp_analysis *t, size_t max) {
  pp_html_opts o = {.timeline_max = max};
  char *html = export_html(t, &o, NULL);
  char *data = data_json(html);
  json_error_t jerr;
  json_t *root = json_loads(data, 0, &jerr);
  if (!root)
    PP_FAIL("embedded JSON invalid at %d: %s", jerr.position, jerr.text);
  json_t *tl = json_incref(json_object_get(root, "timeline"));
  json_decref(root);
  free(data);
  free(html);
  return tl;
}

/* "dur,dur,..|dur,..": the kept durations per thread, and the omitted
 * counts and times. */
static void check_kept(json_t *tl, const char *want, long om_a, long om_a_ns,
                       long om_b, long om_b_ns) {
  char got[256] = "";
  json_t *ths = json_object_get(tl, "threads");
  CHECK_EQ(json_array_size(ths), 2);
  for (size_t k = 0; k < 2; k++) {
    json_t *sp = json_object_get(json_array_get(ths, k), "spans");
    int64_t prev = -1;
    for (size_t i = 0; i < json_array_size(sp); i++) {
      json_t *s = json_array_get(sp, i);
      int64_t start = json_integer_value(json_array_get(s, 0));
      CHECK_GT(start, prev); /* start order */
      prev = start;
      size_t l = strlen(got);
      snprintf(got + l, sizeof got - l, "%s%lld", i ? "," : "",
               (long long)json_integer_value(json_array_get(s, 1)));
    }
    if (k == 0)
      strcat(got, "|");
  }
  CHECK_STR(got, want);
  json_t *a = json_array_get(ths, 0), *b = json_array_get(ths, 1);
  CHECK_EQ(json_integer_value(json_object_get(a, "omitted")), om_a);
  CHECK_EQ(json_integer_value(json_object_get(a, "omitted_ns")), om_a_ns);
  CHECK_EQ(json_integer_value(json_object_get(b, "omitted")), om_b);
  CHECK_EQ(json_integer_value(json_object_get(b, "omitted_ns")), om_b_ns);
  CHECK_EQ(json_integer_value(json_object_get(tl, "spans")), 8);
  CHECK_EQ(json_integer_value(json_object_get(tl, "omitted")), om_a + om_b);
  CHECK_EQ(json_integer_value(json_object_get(tl, "kept")), 8 - om_a - om_b);
}
#endif

PP_TEST(html_timeline_keeps_the_longest) {
#ifdef PP_HAVE_JANSSON
  pp_trace t;
  pp_analysis a = {0};
  build_durations(&t);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  json_t *tl = timeline_of(&a, 100);
  check_kept(tl, "10,20,30,40,50|50,50,5", 0, 0, 0, 0);
  json_decref(tl);
  tl = timeline_of(&a, 8); /* exactly enough */
  check_kept(tl, "10,20,30,40,50|50,50,5", 0, 0, 0, 0);
  json_decref(tl);
  /* The four longest: 50, 50, 50 and 40. */
  tl = timeline_of(&a, 4);
  check_kept(tl, "40,50|50,50", 3, 60, 1, 5);
  CHECK_EQ(json_integer_value(json_object_get(tl, "max_spans")), 4);
  json_decref(tl);
  /* Ties at the cut: the earlier thread, then the earlier start. */
  tl = timeline_of(&a, 3);
  check_kept(tl, "50|50,50", 4, 100, 1, 5);
  json_decref(tl);
  tl = timeline_of(&a, 2);
  check_kept(tl, "50|50", 4, 100, 2, 55);
  json_decref(tl);
  tl = timeline_of(&a, 1);
  check_kept(tl, "50|", 4, 100, 3, 105);
  json_decref(tl);
  pp_analysis_free(&a);
  pp_trace_free(&t);
#else
  printf("# skipped: built without jansson\n");
#endif
}

PP_TEST(html_stats_mode_and_empty_traces) {
  char path[4096];
  tpath(path, sizeof path, "stats.pptrace");
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.mode = PP_MODE_STATS;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  for (int i = 0; i < 10; i++) {
    PP_ZONE("stats-zone");
  }
  CHECK_EQ(pp_shutdown(), PP_OK);
  pp_trace t;
  pp_analysis a = {0};
  char err[256];
  CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK(t.from_stats);
  char *html = export_html(&a, NULL, NULL);
  char *data = data_json(html);
  CHECK_CONTAINS(data, "stats-zone");
  CHECK_CONTAINS(data, "\"timeline\":{\"available\":false,\"reason\":"
                       "\"stats mode records no zone instances\"}");
  free(data);
  free(html);
  pp_analysis_free(&a);
  pp_trace_free(&t);

  /* A trace with nothing in it still makes a page. */
  memset(&t, 0, sizeof t);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  html = export_html(&a, NULL, NULL);
  data = data_json(html);
  CHECK_CONTAINS(data, "\"timeline\":{\"available\":true,");
  CHECK_CONTAINS(data, "\"spans\":0");
  free(data);
  free(html);
  pp_analysis_free(&a);
  pp_trace_free(&t);

  /* Not analysed: refused. */
  memset(&t, 0, sizeof t);
  FILE *f = fopen("/dev/null", "w");
  CHECK(f != NULL);
  CHECK_EQ(pp_export_html(f, &a), -1);
  fclose(f);
}

/* ---- the asset generator ------------------------------------------------- */

PP_TEST(html_asset_generator) {
  char *cmake = pp_test_cmake_cache("CMAKE_COMMAND", 0);
  if (!cmake || !*cmake) {
    free(cmake);
    printf("# skipped: no CMakeCache.txt in the build directory\n");
    return;
  }
  char good[4096], bad[4096], out[4096];
  tpath(good, sizeof good, "good.js");
  tpath(bad, sizeof bad, "bad.js");
  tpath(out, sizeof out, "assets.c");
  write_text(good, "AB\n", 3);
  write_text(bad, "x = '</SCRIPT>';\n", 17);
  char *log = NULL;
  int rc = pp_test_run(&log,
                       "'%s' -DPP_EMBED_OUT='%s' -DPP_EMBED_HEADER=h.h "
                       "-DPP_EMBED_FILES='%s' -DPP_EMBED_NAMES=pp_x "
                       "-P '%s/cmake/embed.cmake'",
                       cmake, out, good, pp_test_srcdir());
  if (rc != 0)
    PP_FAIL("embed.cmake failed (%d):\n%s", rc, log);
  free(log);
  char *c = pp_test_slurp(out, NULL);
  CHECK(c != NULL);
  CHECK_CONTAINS(c, "#include \"h.h\"");
  CHECK_CONTAINS(c, "const unsigned char pp_x[] = {\n0x41,0x42,0x0a,0x00};");
  CHECK_CONTAINS(c, "const size_t pp_x_len = 3;");
  free(c);
  rc = pp_test_run(&log,
                   "'%s' -DPP_EMBED_OUT='%s' -DPP_EMBED_HEADER=h.h "
                   "-DPP_EMBED_FILES='%s' -DPP_EMBED_NAMES=pp_x "
                   "-P '%s/cmake/embed.cmake'",
                   cmake, out, bad, pp_test_srcdir());
  CHECK_NE(rc, 0);
  CHECK_CONTAINS(log, "</script");
  free(log);
  free(cmake);
}

/* The page shell alone, as the live page uses it: no data element, the
 * configuration escaped like the data, the title as text. */
PP_TEST(html_page_shell_live) {
  char *html = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&html, &n);
  CHECK(f != NULL);
  CHECK_EQ(pp__html_page(f, "a<b>&c", NULL,
                         "{\"live\": {\"summary\": \"/api/v1/summary\", "
                         "\"stream\": \"/api/v1/stream\"}, \"x\": "
                         "\"</script><!--\xe2\x80\xa8\"}\n"),
           0);
  CHECK_EQ(fclose(f), 0);
  CHECK_CONTAINS(html, "<title>a&lt;b&gt;&amp;c</title>");
  CHECK(strstr(html, DATA_OPEN) == NULL);
  /* It may fetch from its own server, and from nowhere else. */
  CHECK_CONTAINS(html, "default-src 'none'; script-src 'unsafe-inline'; "
                       "style-src 'unsafe-inline'; connect-src 'self'\">");
  CHECK_CONTAINS(html, "<script type=\"application/json\" id=\"pp-config\">"
                       "{\"live\": {\"summary\": \"/api/v1/summary\", "
                       "\"stream\": \"/api/v1/stream\"}, \"x\": "
                       "\"\\u003c/script>\\u003c!--\\u2028\"}</script>");
  CHECK_EQ(count_ci(html, "<!--"), 0);
  CHECK_EQ(count_ci(html, "<script"), page_scripts(html) - 1);
  CHECK_EQ(count_ci(html, "</script"), page_scripts(html) - 1);
  CHECK(!has_bytes(html, n, "\xe2\x80\xa8", 3));
  CHECK_CONTAINS(html, "id=\"pp-build\">{\"");
  free(html);
}

/* cmake/uplot.cmake never fails the build: without npm, switched off, or
 * with a dist file that cannot be inlined, the assets are empty and the
 * status says why; with a usable package, its files and version. A fake
 * npm stands in for the registry. */
PP_TEST(html_uplot_fetch_script) {
  char *cmake = pp_test_cmake_cache("CMAKE_COMMAND", 0);
  if (!cmake || !*cmake) {
    free(cmake);
    printf("# skipped: no CMakeCache.txt in the build directory\n");
    return;
  }
  char dir[4096], npm[4200], st[4200], js[4200];
  tpath(dir, sizeof dir, "uplot");
  snprintf(npm, sizeof npm, "%s/fake-npm", pp_test_tmpdir());
  snprintf(st, sizeof st, "%s/status.json", dir);
  snprintf(js, sizeof js, "%s/uplot.js", dir);
  static const char *const cases[][3] = {
      /* npm, PP_UPLOT_OFF, expected status */
      {"", "",
       "{\"unavailable\": \"npm was not found when the build was "
       "configured (scripts/deps.sh --browser installs it)\"}"},
      {"FAKE", "switched \"off\"",
       "{\"unavailable\": \"switched \\\"off\\\"\"}"},
      {"FAKE-FAIL", "",
       "{\"unavailable\": \"npm ci failed (exit 3: no network or "
       "registry?), "
       "see "},
      {"FAKE-BAD", "",
       "{\"unavailable\": \"uplot/dist/uPlot.iife.min.js contains '<!--'"},
      {"FAKE", "", "{\"uplot\": \"9.8.7\"}"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const char *mode = cases[k][0];
    char script[2048];
    snprintf(script, sizeof script,
             "#!/bin/sh\n"
             "[ \"%s\" = FAKE-FAIL ] && exit 3\n"
             "d=node_modules/uplot/dist; mkdir -p $d\n"
             "echo '{\"name\": \"uplot\", \"version\": \"9.8.7\"}' "
             "> node_modules/uplot/package.json\n"
             "if [ \"%s\" = FAKE-BAD ]; then echo 'a=\"<!--\"' > "
             "$d/uPlot.iife.min.js; else echo 'var uPlot=1;' > "
             "$d/uPlot.iife.min.js; fi\n"
             "echo '.u{}' > $d/uPlot.min.css\n",
             mode, mode);
    write_text(npm, script, strlen(script));
    CHECK_EQ(chmod(npm, 0755), 0);
    char *log = NULL;
    int rc = pp_test_run(&log,
                         "rm -rf '%s' && '%s' '-DPP_NPM=%s' "
                         "'-DPP_WEB_DIR=%s/web' '-DPP_UPLOT_DIR=%s' "
                         "'-DPP_UPLOT_OFF=%s' -P '%s/cmake/uplot.cmake'",
                         dir, cmake, *mode ? npm : "", pp_test_srcdir(), dir,
                         cases[k][1], pp_test_srcdir());
    if (rc != 0)
      PP_FAIL("uplot.cmake case %zu failed (%d):\n%s", k, rc, log);
    free(log);
    char *status = pp_test_slurp(st, NULL);
    CHECK(status != NULL);
    if (strncmp(status, cases[k][2], strlen(cases[k][2])) != 0)
      PP_FAIL("case %zu: status %s, want %s...", k, status, cases[k][2]);
    free(status);
    size_t jn = 0;
    char *j = pp_test_slurp(js, &jn);
    CHECK(j != NULL);
    if (k + 1 < sizeof cases / sizeof cases[0])
      CHECK_EQ(jn, 0);
    else
      CHECK_STR(j, "var uPlot=1;\n");
    free(j);
  }
  free(cmake);
}

/* ---- the command --------------------------------------------------------- */

/* A small trace recorded by the library in this process. */
static void record_trace(const char *path) {
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  pp_thread_name("html-main");
  for (int i = 0; i < 20; i++) {
    PP_ZONE("html-outer");
    PP_ZONE("html <inner> & \"more\"");
    PP_COUNTER_SET("html-counter", i);
  }
  CHECK_EQ(pp_shutdown(), PP_OK);
}

PP_TEST(html_cli) {
  char trace[4096], out[4096], out2[4096], dir[4096], app[4200];
  tpath(trace, sizeof trace, "t.pptrace");
  tpath(out, sizeof out, "report.html");
  tpath(out2, sizeof out2, "report2.html");
  tpath(dir, sizeof dir, "run");
  record_trace(trace);

  pp_cli_result r =
      pp_test_cli("export '%s' --format html -o '%s'", trace, out);
  CHECK_EQ(r.rc, 0);
  CHECK_STR(r.out, "");
  CHECK_STR(r.err, "");
  pp_cli_result_free(&r);
  char *html = pp_test_slurp(out, NULL);
  CHECK(html != NULL);
  CHECK(strncmp(html, "<!DOCTYPE html>", 15) == 0);
  CHECK_CONTAINS(html, "html-outer");
  CHECK_CONTAINS(html, "html \\u003cinner> & \\\"more\\\"");
  /* Standard output gives the same bytes. */
  r = pp_test_cli("export -f html '%s'", trace);
  CHECK_EQ(r.rc, 0);
  CHECK_STR(r.out, html);
  pp_cli_result_free(&r);

  /* A run directory, like the other formats. */
  CHECK_EQ(mkdir(dir, 0755), 0);
  snprintf(app, sizeof app, "%s/app.pptrace", dir);
  CHECK_EQ(link(trace, app), 0);
  r = pp_test_cli("export '%s' --format=html", dir);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "html-outer");
  CHECK_CONTAINS(r.out, "\"timeline\"");
  pp_cli_result_free(&r);

  /* report --html: the text report on stdout and the same page on disk. */
  r = pp_test_cli("report --html '%s' '%s'", out2, trace);
  CHECK_EQ(r.rc, 0);
  CHECK_STR(r.err, "");
  CHECK_CONTAINS(r.out, "html-outer");
  CHECK_CONTAINS(r.out, "dropped events: 0");
  pp_cli_result_free(&r);
  char *html2 = pp_test_slurp(out2, NULL);
  CHECK(html2 != NULL);
  CHECK_STR(html2, html);
  free(html2);
  free(html);

  r = pp_test_cli("help export");
  CHECK_CONTAINS(r.out, "--format html");
  pp_cli_result_free(&r);
  r = pp_test_cli("report --help");
  CHECK_CONTAINS(r.out, "--html OUT");
  pp_cli_result_free(&r);
}

PP_TEST(html_cli_bad_input) {
  char trace[4096], missing[4096], corrupt[4096], out[4096], nodir[4096];
  tpath(trace, sizeof trace, "t.pptrace");
  tpath(missing, sizeof missing, "missing.pptrace");
  tpath(corrupt, sizeof corrupt, "corrupt.pptrace");
  tpath(out, sizeof out, "out.html");
  tpath(nodir, sizeof nodir, "no-such-dir/out.html");
  record_trace(trace);

  pp_cli_result r =
      pp_test_cli("export '%s' --format html -o '%s'", missing, out);
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "pipeprof");
  CHECK_CONTAINS(r.err, missing);
  pp_cli_result_free(&r);
  struct stat st;
  CHECK(stat(out, &st) != 0); /* nothing written */

  /* A real header followed by garbage: no intact chunk. */
  size_t len;
  char *d = pp_test_slurp(trace, &len);
  CHECK(d != NULL && len > 64);
  for (size_t i = 64; i < len; i++)
    d[i] = (char)(d[i] ^ 0x5a);
  write_text(corrupt, d, len);
  free(d);
  r = pp_test_cli("export '%s' --format html -o '%s'", corrupt, out);
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "pipeprof");
  CHECK_CONTAINS(r.err, corrupt);
  pp_cli_result_free(&r);
  r = pp_test_cli("report --html '%s' '%s'", out, corrupt);
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "pipeprof");
  pp_cli_result_free(&r);
  CHECK(stat(out, &st) != 0);

  /* An output that cannot be created: one line naming it, no report. */
  r = pp_test_cli("export '%s' --format html -o '%s'", trace, nodir);
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "pipeprof");
  CHECK_CONTAINS(r.err, nodir);
  pp_cli_result_free(&r);
  r = pp_test_cli("report --html '%s' '%s'", nodir, trace);
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "pipeprof");
  CHECK_CONTAINS(r.err, nodir);
  pp_cli_result_free(&r);
  if (stat("/dev/full", &st) == 0) {
    r = pp_test_cli("export '%s' --format html -o /dev/full", trace);
    CHECK_ONE_LINE_ERROR_FROM(r, 1, "pipeprof");
    pp_cli_result_free(&r);
  }

  /* Usage errors: exit 2. */
  r = pp_test_cli("report '%s' --html", trace);
  CHECK_ONE_LINE_ERROR_FROM(r, 2, "--html");
  pp_cli_result_free(&r);
  r = pp_test_cli("export '%s' --format htm", trace);
  CHECK_ONE_LINE_ERROR_FROM(r, 2, "htm");
  CHECK_CONTAINS(r.err, "html");
  pp_cli_result_free(&r);
}

/* ---- a real browser -------------------------------------------------------
 */

/* Path of a Chromium binary, or NULL (the test then skips, or fails with
 * PP_REQUIRE_CHROMIUM=1). */
/* The DOM Chromium holds after loading the file at path (runner.h). */
static char *dump_dom(const char *chromium, const char *path) {
  char url[4200];
  snprintf(url, sizeof url, "file://%.4100s", path);
  return pp_test_chromium_dom(chromium, url, "");
}

/* The text of a DOM text node as the serializer writes it. */
static void html_text(char *buf, size_t len, const char *s) {
  size_t o = 0;
  for (; *s && o + 8 < len; s++) {
    const char *e = *s == '&'   ? "&amp;"
                    : *s == '<' ? "&lt;"
                    : *s == '>' ? "&gt;"
                                : NULL;
    if (e) {
      memcpy(buf + o, e, strlen(e));
      o += strlen(e);
    } else {
      buf[o++] = *s;
    }
  }
  buf[o] = 0;
}

/* The rendered zone table has a row with this name and count. */
static void check_zone_row(const char *dom, const char *name,
                           unsigned long long count) {
  char esc[512], cell[700], want[128];
  html_text(esc, sizeof esc, name);
  snprintf(cell, sizeof cell,
           "<td class=\"pp-t pp-name\" data-k=\"name\">%s</td>", esc);
  const char *table = strstr(dom, "id=\"pp-zone-table\"");
  CHECK(table != NULL);
  const char *row = strstr(table, cell);
  if (!row)
    PP_FAIL("no rendered row for zone '%s' (%s)", name, cell);
  const char *end = strstr(row, "</tr>");
  CHECK(end != NULL);
  snprintf(want, sizeof want, "<td class=\"pp-n\" data-k=\"count\">%llu</td>",
           count);
  const char *c = strstr(row, want);
  if (!c || c > end)
    PP_FAIL("row of zone '%s' lacks %s", name, want);
}

static void check_rendered_ok(const char *dom) {
  CHECK_CONTAINS(dom, "<body data-rendered=\"ok\"");
  CHECK_CONTAINS(dom, "<div id=\"pp-render-ok\" hidden=\"\"></div>");
  const char *e = strstr(dom, "id=\"pp-render-error\"");
  if (e)
    PP_FAIL("the page reported an error: %.2000s", e);
}

/* Chromium's path; NULL when the test is to be skipped (runner.h). */
static const char *chromium_or_skip(void) { return pp_test_chromium(); }

/* ---- charts, live updates, screenshots ------------------------------------
 * The summary's chart data (zones[].hist, series; schema_minor 13) comes
 * from another change; until a trace carries it, these tests add a small
 * hand-made FIXTURE of that format to the page's own document in the
 * browser (the figures are made up, not results) and render it with the
 * page's test hook window.ppRender(doc). */

/* JavaScript: d (the page's document) gains a histogram per zone, frame
 * stream and queue, and series for frames, counters (plus a system and a
 * GPU metric), queues and zones. */
#define FIXTURE_JS                                                             \
  "var d = JSON.parse(document.getElementById('pp-data').textContent);\n"      \
  "var H = {le_ns: [1000, 4000, 16000, 64000, 256000, 1024000], "              \
  "counts: [1, 2, 4, 8, 4, 1]};\n"                                             \
  "d.zones.forEach(function (z) { z.hist = H; });\n"                           \
  "d.frames.forEach(function (f) { f.hist = H; });\n"                          \
  "(Array.isArray(d.queues) ? d.queues : []).forEach(function (q) {\n"         \
  "  q.wait.hist = H; });\n"                                                   \
  "var t = [0, 1e5, 2e5, 3e5, 4e5], v = [1, 3, 2, 5, 4];\n"                    \
  "function ser(name, o) { o.name = name; o.t_ns = t;\n"                       \
  "  o.downsampled = false; return o; }\n"                                     \
  "function times(k) { return v.map(function (x) { return x * k; }); }\n"      \
  "d.series = {points_max: 600,\n"                                             \
  " frames: d.frames.map(function (f) { return ser(f.name,\n"                  \
  "   {frame_ns: times(1e6), frame_max_ns: times(2e6)}); }),\n"                \
  " counters: d.counters.map(function (c) { return ser(c.name,\n"              \
  "   {library_metric: c.library_metric, value: v, min: v, max: v}); })\n"     \
  "   .concat([ser('sys.cpu.busy_pct', {library_metric: true,\n"               \
  "     value: times(10), min: v, max: v}), ser('gpu0.util_pct',\n"            \
  "     {library_metric: true, value: times(10), min: v, max: v})]),\n"        \
  " queues: (Array.isArray(d.queues) ? d.queues : []).map(function (q) {\n"    \
  "   return ser(q.name, {depth: v, depth_max: v}); }),\n"                     \
  " zones: d.zones.slice(0, 8).map(function (z) { return ser(z.name,\n"        \
  "   {count: v, p50_ns: times(1e5), max_ns: times(2e5)}); })};\n"

/* Write html to path with a script run after the page's own (before
 * </body>). */
static void write_with_script(const char *path, const char *html,
                              const char *js) {
  const char *at = strstr(html, "</body>");
  CHECK(at != NULL);
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  fwrite(html, 1, (size_t)(at - html), f);
  fprintf(f, "<script>\n(function () {\n%s})();\n</script>\n", js);
  fputs(at, f);
  CHECK_EQ(fclose(f), 0);
}

/* An attribute of the element with data-chart="id" as a number; -1 when
 * the element or the attribute is missing. */
static long chart_attr(const char *dom, const char *id, const char *attr) {
  char key[256], a[64];
  snprintf(key, sizeof key, "data-chart=\"%s\"", id);
  const char *at = strstr(dom, key);
  if (!at)
    return -1;
  const char *open = at;
  while (open > dom && *open != '<')
    open--;
  const char *end = strchr(at, '>');
  snprintf(a, sizeof a, " %s=\"", attr);
  const char *v = strstr(open, a);
  if (!v || !end || v > end)
    return -1;
  return strtol(v + strlen(a), NULL, 10);
}

/* Whether charts must be drawn (PP_REQUIRE_CHARTS=1, as in CI). */
static int charts_required(void) {
  const char *e = getenv("PP_REQUIRE_CHARTS");
  return e && strcmp(e, "1") == 0;
}

/* The uPlot charts have drawn data: points handed over and coloured
 * pixels in the plot area; without uPlot each says why. */
static void check_uplot_charts(const char *dom, const char *html,
                               const char *const *ids, size_t n) {
  int bundled = page_has_uplot(html);
  if (!bundled && charts_required())
    PP_FAIL("uPlot was not bundled at build time and PP_REQUIRE_CHARTS=1: "
            "see <build>/generated/uplot/status.json");
  for (size_t i = 0; i < n; i++) {
    long pts = chart_attr(dom, ids[i], "data-points");
    if (bundled) {
      long ink = chart_attr(dom, ids[i], "data-ink");
      if (pts <= 0 || ink <= 0)
        PP_FAIL("chart %s: data-points %ld, data-ink %ld", ids[i], pts, ink);
    } else {
      CHECK_EQ(pts, 0);
    }
  }
  if (!bundled) {
    CHECK_EQ(count_ci(dom, "chart unavailable: uPlot was not bundled at "
                           "build time ("),
             n);
    printf("# uPlot not bundled: checked the 'chart unavailable' lines\n");
  }
}

static const char *const fixture_charts[] = {
    "zone-cdf",   "zone-hist",  "zone-p50",           "zone-count",
    "frame-time", "frame-hist", "queue-depth",        "queue-wait-cdf",
    "counter-0",  "counter-1",  "sys-host CPU-pct-0", "gpu-GPU-pct-0"};

/* Write html with text inserted into the embedded data just before the
 * "timeline" member, as a later version of the summary could add it. */
static void write_spliced(const char *path, const char *html,
                          const char *insert) {
  const char *at = strstr(html, "\"timeline\":");
  CHECK(at != NULL);
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  fwrite(html, 1, (size_t)(at - html), f);
  fputs(insert, f);
  fputs(at, f);
  CHECK_EQ(fclose(f), 0);
}

/* The demo: the pipeline runs, its page opens, every zone has its row. */
PP_TEST_T(html_chromium_demo, 120) {
  const char *chromium = chromium_or_skip();
  if (!chromium)
    return;
  char dir[4096], page[4200], summary[4200];
  tpath(dir, sizeof dir, "demo");
  pp_cli_result r = pp_test_cli("demo --out '%s' --frames 20", dir);
  if (r.rc != 0)
    PP_FAIL("demo exit %d:\n%s\n%s", r.rc, r.out, r.err);
  CHECK_CONTAINS(r.out, "demo.html");
  pp_cli_result_free(&r);
  snprintf(page, sizeof page, "%s/demo.html", dir);
  snprintf(summary, sizeof summary, "%s/demo.summary.json", dir);
  char *dom = dump_dom(chromium, page);
  /* every chart's y axis is wider than its widest label (a fixed 70 px
   * clipped "1.50 GiB/s") */
  int axes = 0;
  for (const char *p = strstr(dom, "data-y-axis-px=\""); p;
       p = strstr(p + 1, "data-y-axis-px=\"")) {
    long axis = atol(p + strlen("data-y-axis-px=\""));
    const char *l = strstr(p, "data-y-label-px=\"");
    CHECK(l != NULL);
    long label = atol(l + strlen("data-y-label-px=\""));
    CHECK_GT(label, 0);
    CHECK_GT(axis, label);
    axes++;
  }
  printf("# %d charts: every y axis wider than its labels\n", axes);
  CHECK_GT(axes, 5);

  check_rendered_ok(dom);
  CHECK_CONTAINS(dom, "<h1>pipeprof report: ");
  CHECK_CONTAINS(dom, "id=\"pp-timeline\"");
  CHECK_CONTAINS(dom, "<rect ");
  /* Charts: drawn from the summary's chart data when it has them
   * (schema_minor 13), else each says why it has none. */
  char *sj = pp_test_slurp(summary, NULL);
  CHECK(sj != NULL);
  static const char *const demo_charts[] = {
      "zone-cdf",   "zone-hist",  "zone-p50",    "zone-count",
      "frame-time", "frame-hist", "queue-depth", "queue-wait-cdf"};
  size_t ncharts = sizeof demo_charts / sizeof demo_charts[0];
  char *html = pp_test_slurp(page, NULL);
  CHECK(html != NULL);
  if (strstr(sj, "\"series\":") && strstr(sj, "\"hist\":")) {
    check_uplot_charts(dom, html, demo_charts, ncharts);
  } else {
    printf("# the summary has no chart data yet: checked the reasons\n");
    for (size_t i = 0; i < ncharts; i++)
      CHECK_EQ(chart_attr(dom, demo_charts[i], "data-points"), 0);
    /* and the program counters' chart */
    CHECK_EQ(chart_attr(dom, "counters", "data-points"), 0);
    CHECK_EQ(count_ci(dom, "<p class=\"pp-nodata\">no data for this chart: "),
             ncharts + 1);
  }
  free(html);
  free(sj);
  CHECK_GT(chart_attr(dom, "stage-bars", "data-points"), 0);
  CHECK_GT(chart_attr(dom, "timeline", "data-points"), 0);
  /* The measured overhead (a real session records the writer's CPU). */
  CHECK_CONTAINS(dom, ">share of the process's CPU<");
  CHECK_CONTAINS(dom, ">writer thread (measured)<");
#ifdef PP_HAVE_JANSSON
  json_error_t jerr;
  json_t *root = json_load_file(summary, 0, &jerr);
  if (!root)
    PP_FAIL("%s: %s", summary, jerr.text);
  json_t *zs = json_object_get(root, "zones");
  CHECK_GT(json_array_size(zs), 5);
  for (size_t i = 0; i < json_array_size(zs); i++) {
    json_t *z = json_array_get(zs, i);
    check_zone_row(
        dom, json_string_value(json_object_get(z, "name")),
        (unsigned long long)json_integer_value(json_object_get(z, "count")));
  }
  json_decref(root);
#else
  CHECK_CONTAINS(dom, "<td class=\"pp-t pp-name\" data-k=\"name\">detect</td>");
#endif
  free(dom);
}

/* Hostile names: shown as text, no element made from them, and one
 * timeline bar per top-level instance. */
PP_TEST_T(html_chromium_hostile_names, 120) {
  const char *chromium = chromium_or_skip();
  if (!chromium)
    return;
  pp_trace t;
  pp_analysis a = {0};
  build_pipeline(&t, hostile_names);
  free(t.threads[1].name);
  t.threads[1].name = tb_strdup("<img src=x onerror=alert(1)>");
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *html = export_html(&a, NULL, NULL);
  char page[4096];
  tpath(page, sizeof page, "hostile.html");
  /* With chart data (the fixture), so that the names are in chart
   * legends and the histogram's zone menu too. */
  write_with_script(page, html, FIXTURE_JS "window.ppRender(d);\n");
  char *dom = dump_dom(chromium, page);
  check_rendered_ok(dom);
  for (int k = 0; k < 3; k++)
    check_zone_row(dom, hostile_names[k], 12);
  check_zone_row(dom, "child", 72);
  CHECK(strstr(dom, "<b>x") == NULL);
  CHECK(strstr(dom, "<img") == NULL);
  CHECK_CONTAINS(dom, "&lt;img src=x onerror=alert(1)&gt;");
  CHECK_EQ(count_ci(dom, "<rect "), 36);
  CHECK_CONTAINS(dom, "\">&lt;/script&gt;&lt;b&gt;x</option>");
  if (page_has_uplot(html))
    CHECK_CONTAINS(dom, "<div class=\"u-label\">&lt;/script&gt;&lt;b&gt;x"
                        "</div>");
  free(html);
  free(dom);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* Sections the page has no layout for are shown by the generic renderer,
 * "unavailable" reasons as such; a section that throws is reported and the
 * others are still drawn. */
PP_TEST_T(html_chromium_generic_sections, 120) {
  const char *chromium = chromium_or_skip();
  if (!chromium)
    return;
  pp_trace t;
  pp_analysis a = {0};
  build_pipeline(&t, plain_names);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *html = export_html(&a, NULL, NULL);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  char page[4096];
  tpath(page, sizeof page, "generic.html");
  write_spliced(page, html,
                "\"queues_x\":{\"unavailable\":\"no queue events\","
                "\"items\":[{\"name\":\"q\\u003cone>\",\"depth_max\":4,"
                "\"wait_ns\":1500}],\"stats\":{\"depth\":{\"mean\":2.5,"
                "\"max\":4},\"latency_ns\":{\"mean\":2000000,\"max\":3e9}}},"
                "\"gpu_x\":{\"available\":false,\"reason\":\"no NVIDIA "
                "driver\"},\"answer_x\":42,");
  char *dom = dump_dom(chromium, page);
  check_rendered_ok(dom);
  CHECK_CONTAINS(dom, "data-key=\"queues_x\"");
  CHECK_CONTAINS(dom, "unavailable: no queue events");
  CHECK_CONTAINS(dom, "<td class=\"pp-t\" data-k=\"name\">q&lt;one&gt;</td>");
  CHECK_CONTAINS(dom, "<td class=\"pp-n\" data-k=\"wait_ns\">1.50 us</td>");
  CHECK_CONTAINS(dom, "<td class=\"pp-n\" data-k=\"mean\">2.00 ms</td>");
  CHECK_CONTAINS(dom, "<td class=\"pp-n\" data-k=\"max\">3.00 s</td>");
  CHECK_CONTAINS(dom, "data-key=\"gpu_x\"");
  CHECK_CONTAINS(dom, "unavailable: no NVIDIA driver");
  CHECK_CONTAINS(dom, "answer_x");
  free(dom);

  /* A zones member the page cannot draw: the error is shown, the other
   * sections are there. */
  tpath(page, sizeof page, "broken.html");
  char *z = strstr(html, "\"zones\":[");
  CHECK(z != NULL);
  memcpy(z, "\"zonez\"", 7); /* the real zones now read as a generic one */
  write_spliced(page, html, "\"zones\":[null],");
  dom = dump_dom(chromium, page);
  CHECK_CONTAINS(dom, "<body data-rendered=\"error\">");
  CHECK_CONTAINS(dom, "id=\"pp-render-error\"");
  CHECK_CONTAINS(dom, "report rendering failed:");
  CHECK(strstr(dom, "id=\"pp-render-ok\"") == NULL);
  CHECK_CONTAINS(dom, "id=\"pp-threads\"");
  CHECK_CONTAINS(dom, "data-key=\"zonez\"");
  free(dom);
  free(html);
}

/* What the reader says in the page: a write failure (not "process
 * killed?") and a details window shorter than the trace. */
PP_TEST_T(html_chromium_write_error_and_window, 120) {
  const char *chromium = chromium_or_skip();
  if (!chromium)
    return;
  pp_trace t;
  pp_analysis a = {0};
  build_pipeline(&t, plain_names);
  tb_meta(&t, "write_error", "write to app.pptrace failed: No space left");
  tb_meta(&t, "events_lost", "4242");
  CHECK_EQ(pp_analyze(&t, &a), 0);
  t.diag.file_bytes = 1000; /* read from a file with no END chunk */
  t.diag.clean_end = 0;
  t.diag.events = 5000;
  t.diag.events_kept = 120;
  t.diag.first_unkept_ns = a.prof.t0 + 2500000;
  a.events_late = 7;
  /* the reader's figures changed: the document is built again */
  CHECK_EQ(pp__analysis_document(&a), 0);
  char *html = export_html(&a, NULL, NULL);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  char page[4096];
  tpath(page, sizeof page, "window.html");
  write_spliced(page, html, "");
  char *dom = dump_dom(chromium, page);
  check_rendered_ok(dom);
  CHECK_CONTAINS(dom, "<p class=\"pp-warn\">4242 events lost: write to "
                      "app.pptrace failed: No space left</p>");
  CHECK(strstr(dom, "<p class=\"pp-warn\">trace ended without END chunk") ==
        NULL);
  CHECK_CONTAINS(dom, "<p class=\"pp-dim\">the statistics count all 5000 "
                      "events; the details (timeline, zone instances, flows, "
                      "stages; requests, queues and pools count every event) "
                      "cover the first 2.50 ms (120 events");
  CHECK_CONTAINS(dom, "<p class=\"pp-warn\">7 events reached the figures "
                      "out of time order");
  free(dom);
  free(html);
}

/* Energy per frame (frames[].energy): a column per part with its unit and
 * what the figure means; without an energy counter, the reason. */
PP_TEST_T(html_chromium_frame_energy, 120) {
  const char *chromium = chromium_or_skip();
  if (!chromium)
    return;
  for (int k = 0; k < 2; k++) {
    pp_trace t;
    pp_analysis a = {0};
    build_pipeline(&t, plain_names); /* 12 frames */
    if (k == 0) {
      uint32_t cpu = tb_loc(&t, "energy.package_j", PP_KIND_COUNTER);
      uint32_t gpu = tb_loc(&t, "gpu.run_energy_j", PP_KIND_COUNTER);
      tb_ev(&t, 0, 200, cpu, PPT_EV_COUNTER_SETF)->v.f = 6.0;
      tb_ev(&t, 0, 200, gpu, PPT_EV_COUNTER_SETF)->v.f = 3.0;
    }
    CHECK_EQ(pp_analyze(&t, &a), 0);
    size_t n;
    char *html = export_html(&a, NULL, &n);
    pp_analysis_free(&a);
    pp_trace_free(&t);
    char page[4096];
    tpath(page, sizeof page, "energy.html");
    write_text(page, html, n);
    free(html);
    char *dom = dump_dom(chromium, page);
    check_rendered_ok(dom);
    CHECK_CONTAINS(dom, "id=\"pp-frames\"");
    if (k == 0) {
      CHECK_CONTAINS(dom, "<td class=\"pp-n\" data-k=\"joules_per_frame\">"
                          "0.75 J</td>");
      CHECK_CONTAINS(dom, "<td class=\"pp-n\" data-k=\""
                          "cpu_package_joules_per_frame\">0.5 J</td>");
      CHECK_CONTAINS(dom, "<td class=\"pp-n\" data-k=\"gpu_joules_per_frame\">"
                          "0.25 J</td>");
      CHECK_CONTAINS(dom, "energy per frame: energy of the whole run (CPU "
                          "package + GPU), warm-up and idle included");
    } else {
      CHECK(strstr(dom, "data-k=\"joules_per_frame\"") == NULL);
      CHECK_CONTAINS(dom, "<p class=\"pp-unavail\">energy per frame: "
                          "unavailable: no energy counter in this trace");
    }
    free(dom);
  }
}

/* Counters: the program's, and the library's sampled series apart (in a
 * <details>), told apart by the summary's library_metric, not by name: a
 * program counter named "sys.cpu.busy_pct" is the program's. */
PP_TEST_T(html_chromium_user_counter_named_like_a_metric, 120) {
  const char *chromium = chromium_or_skip();
  if (!chromium)
    return;
  pp_trace t;
  pp_analysis a = {0};
  build_pipeline(&t, plain_names);
  uint32_t lib = tb_loc(&t, "sys.load1", PP_KIND_METRIC);
  uint32_t user = tb_loc(&t, "sys.cpu.busy_pct", PP_KIND_COUNTER);
  tb_ev(&t, 0, 200, lib, PPT_EV_COUNTER_SETF)->v.f = 1.5;
  tb_ev(&t, 0, 200, user, PPT_EV_COUNTER_SETF)->v.f = 42.0;
  CHECK_EQ(pp_analyze(&t, &a), 0);
  size_t n;
  char *html = export_html(&a, NULL, &n);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  CHECK_CONTAINS(html, "\"name\":\"sys.cpu.busy_pct\",\"library_metric\":"
                       "false");
  CHECK_CONTAINS(html, "\"name\":\"sys.load1\",\"library_metric\":true");
  char page[4096];
  tpath(page, sizeof page, "counters.html");
  write_text(page, html, n);
  free(html);
  char *dom = dump_dom(chromium, page);
  check_rendered_ok(dom);
  const char *sampled = strstr(dom, "sampled counters (1)");
  const char *u = strstr(dom, "data-k=\"name\">sys.cpu.busy_pct</td>");
  const char *l = strstr(dom, "data-k=\"name\">sys.load1</td>");
  CHECK(sampled != NULL);
  CHECK(u != NULL && u < sampled); /* in the program's table */
  CHECK(l != NULL && l > sampled); /* in the sampled ones */
  free(dom);
}

/* The machine's sections are the results document's: the perf counters
 * (a row per counted event in its unit, the events not counted said once
 * per reason), their ratios, the RAPL domains and the run's energy, and
 * the process tree's facts, each drawn from the layout, none from guessed
 * key names. */
PP_TEST_T(html_chromium_system_sections_from_the_document, 120) {
  const char *chromium = chromium_or_skip();
  if (!chromium)
    return;
  pp_trace t;
  pp_analysis a = {0};
  build_pipeline(&t, plain_names);
  static const struct {
    const char *name;
    double v0, v1;
  } m[] = {{"perf.task-clock", 600.0, 1234.5},
           {"perf.cycles", 1e9, 2e9},
           {"perf.instructions", 1.5e9, 3e9},
           {"power.package-0_w", 20.0, 40.0},
           {"energy.package-0_j", 100.0, 600.0},
           {"power.package_w", 20.0, 40.0},
           {"energy.package_j", 100.0, 600.0},
           {"proc.cpu_user_s", 0.5, 2.5},
           {"proc.cpu_system_s", 0.1, 0.4},
           {"sys.cpu.busy_pct", 40.0, 60.0},
           {"sys.cpu1.busy_pct", 35.0, 97.0},
           {"sys.temp.coretemp.Package_id_0_c", 55.0, 71.5}};
  for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
    uint32_t loc = tb_loc(&t, m[i].name, PP_KIND_METRIC);
    tb_ev(&t, 0, 100, loc, PPT_EV_COUNTER_SETF)->v.f = m[i].v0;
    tb_ev(&t, 0, 200, loc, PPT_EV_COUNTER_SETF)->v.f = m[i].v1;
  }
  tb_meta(&t, "unavailable.perf.LLC-load-misses", "not supported by the CPU");
  tb_meta(&t, "unavailable.cpufreq", "no cpufreq driver");
  CHECK_EQ(pp_analyze(&t, &a), 0);
  size_t n;
  char *html = export_html(&a, NULL, &n);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  char page[4096];
  tpath(page, sizeof page, "system.html");
  write_text(page, html, n);
  free(html);
  char *dom = dump_dom(chromium, page);
  check_rendered_ok(dom);
  /* perf: the task clock in its unit, a count as a count */
  CHECK_CONTAINS(dom, "data-k=\"name\">task-clock</td><td class=\"pp-n\" "
                      "data-k=\"value\">1.23 s</td>");
  CHECK_CONTAINS(dom, "data-k=\"name\">cycles</td><td class=\"pp-n\" "
                      "data-k=\"value\">2000000000</td>");
  CHECK_CONTAINS(dom, "LLC-load-misses: unavailable: not supported by the "
                      "CPU");
  CHECK_CONTAINS(dom, "data-k=\"ipc\"><div class=\"pp-fact-k\">IPC</div>"
                      "<div class=\"pp-fact-v\">1.50</div>");
  /* energy: the domain's power and energy, the package's facts */
  CHECK_CONTAINS(dom, "data-k=\"name\">package-0</td>");
  CHECK_CONTAINS(dom, "data-k=\"energy_j\">600 J</td>");
  CHECK_CONTAINS(dom, "data-k=\"package_energy_j\"><div class=\"pp-fact-k\">"
                      "package energy</div><div class=\"pp-fact-v\">600 J"
                      "</div>");
  /* the machine's per-core and per-sensor tables */
  CHECK_CONTAINS(dom, "data-k=\"cpu\">1</td><td class=\"pp-n pp-barcell\" "
                      "data-k=\"busy_max_pct\"><span class=\"pp-bar\" "
                      "style=\"width: 97%;\"></span><span class=\"pp-val\">"
                      "97.0%</span>");
  CHECK_CONTAINS(dom, "data-k=\"sensor\">coretemp.Package_id_0</td><td "
                      "class=\"pp-n\" data-k=\"max_c\">71.5 \u00b0C</td>");
  /* a fact not measured: the word, and its reason under it */
  CHECK_CONTAINS(dom, "data-k=\"cpu_freq\"><div class=\"pp-fact-k\">CPU "
                      "frequency</div><div class=\"pp-fact-v pp-fact-unavail\">"
                      "unavailable</div><div class=\"pp-fact-n\">no cpufreq "
                      "driver</div>");
  /* the process tree's facts */
  CHECK_CONTAINS(dom, "data-k=\"cpu_user_s\"><div class=\"pp-fact-k\">CPU "
                      "time, user</div><div class=\"pp-fact-v\">2.50 s</div>");
  /* no key of the JSON shown as a label */
  char *app = strstr(dom, "<div id=\"pp-app\">");
  char *app_end = strstr(dom, DATA_OPEN);
  CHECK(app != NULL && app_end != NULL && app < app_end);
  *app_end = 0;
  CHECK(strstr(app, ">package_energy_j<") == NULL);
  CHECK(strstr(app, ">running_pct<") == NULL);
  CHECK(strstr(app, ">max_pct<") == NULL);
  CHECK(strstr(app, ">cpu_busy_max_pct<") == NULL);
  CHECK(strstr(app, "pp-generic") == NULL);
  free(dom);
}

/* An imported ONNX Runtime profile (the golden tests/fixtures/ort one):
 * its header names the tool, and each operator's input shapes have a
 * table, with every (operator, shapes) row the profile holds. */
PP_TEST_T(html_chromium_imported_shapes, 120) {
  const char *chromium = chromium_or_skip();
  if (!chromium)
    return;
  char page[4096];
  tpath(page, sizeof page, "ort.html");
  pp_cli_result r = pp_test_cli(
      "export --format html '%s/tests/fixtures/ort/cnn-basic-seq.json' "
      "-o '%s'",
      pp_test_srcdir(), page);
  if (r.rc != 0)
    PP_FAIL("export exit %d:\n%s", r.rc, r.err);
  pp_cli_result_free(&r);
  char *dom = dump_dom(chromium, page);
  check_rendered_ok(dom);
  CHECK_CONTAINS(dom, "ONNX Runtime");
  CHECK_CONTAINS(dom, "id=\"pp-shapes\"");
  /* the operators, then their calls by shape: the document's tables */
  CHECK_CONTAINS(dom, "<td class=\"pp-t pp-name\" data-k=\"name\">Conv [CPU]"
                      "</td><td class=\"pp-n\" data-k=\"count\">8</td><td "
                      "class=\"pp-n\" data-k=\"total_ns\">1.03 ms</td>");
  CHECK_CONTAINS(dom, "data-table=\"shapes_by_shape\"");
  /* inside model_run: its nested zones, each row naming it */
  CHECK_CONTAINS(dom, "<td class=\"pp-t pp-name\" data-k=\"stage\">"
                      "model_run</td><td class=\"pp-t pp-nw\" data-k=\"name\">"
                      "Conv [CPU]</td><td class=\"pp-n\" data-k=\"count\">8"
                      "</td><td class=\"pp-n\" data-k=\"self_ns\">1.03 ms"
                      "</td>");
  const char *row = strstr(dom, "<td class=\"pp-t pp-nw\" "
                                "data-k=\"input_shapes\">float[4, 3, 32, "
                                "32], float[8, 3, 3, 3], float[8]</td>");
  CHECK(row != NULL);
  const char *end = strstr(row, "</tr>");
  const char *calls = strstr(row, "<td class=\"pp-n\" data-k=\"count\">2</td>");
  CHECK(end != NULL && calls != NULL && calls < end);
  /* 16 (operator, shapes) pairs in the profile, a row each */
  CHECK_EQ(count_ci(dom, "data-k=\"input_shapes\""), 16);
  free(dom);
}

/* The demo's report with the fixture's chart data: every chart draws,
 * the page's own bars (stages, critical paths, timeline) too. */
PP_TEST_T(html_chromium_charts_draw, 150) {
  const char *chromium = chromium_or_skip();
  if (!chromium)
    return;
  char dir[4096], page[4200], fx[4200];
  tpath(dir, sizeof dir, "demo");
  pp_cli_result r = pp_test_cli("demo --out '%s' --frames 20", dir);
  if (r.rc != 0)
    PP_FAIL("demo exit %d:\n%s\n%s", r.rc, r.out, r.err);
  pp_cli_result_free(&r);
  snprintf(page, sizeof page, "%s/demo.html", dir);
  snprintf(fx, sizeof fx, "%s/fixture.html", dir);
  char *html = pp_test_slurp(page, NULL);
  CHECK(html != NULL);
  write_with_script(fx, html, FIXTURE_JS "window.ppRender(d);\n");
  char *dom = dump_dom(chromium, fx);
  check_rendered_ok(dom);
  check_uplot_charts(dom, html, fixture_charts,
                     sizeof fixture_charts / sizeof fixture_charts[0]);
  CHECK_GT(chart_attr(dom, "stage-bars", "data-points"), 0);
  CHECK_GT(chart_attr(dom, "flow-0-where", "data-points"), 0);
  CHECK_GT(chart_attr(dom, "timeline", "data-points"), 0);
  /* Designed sections, no field dumps: words, durations, offsets (in
   * what the page drew, not in its data or scripts). */
  char *app = strstr(dom, "<div id=\"pp-app\">");
  char *app_end = strstr(dom, DATA_OPEN);
  CHECK(app != NULL && app_end != NULL && app < app_end);
  *app_end = 0;
  CHECK_CONTAINS(app, "id=\"pp-pipeline\"");
  /* the pipeline's facts, drawn from the layout (a grid of facts) */
  CHECK_CONTAINS(app, "data-facts=\"pipeline_facts\"");
  CHECK_CONTAINS(app, ">capacity of the bound<");
  CHECK_CONTAINS(app, ">busy at least 90% of the window<");
  /* the profiler's cost, the document's facts: shown ones only */
  CHECK_CONTAINS(app, "data-facts=\"overhead\"");
  /* the flows' table, the document's: latency and working / queued */
  CHECK_CONTAINS(app, "data-table=\"flows\"");
  CHECK_CONTAINS(app, "data-k=\"zone_pct\">");
  CHECK_CONTAINS(app, ">recording (estimated)<");
  CHECK(strstr(app, "data-k=\"events_estimated_ns\"") == NULL);
  /* which stalls a run has depends on its timing: one of the kinds */
  CHECK(strstr(app, "queue full: producer blocked") ||
        strstr(app, "queue empty: consumer starved"));
  CHECK_CONTAINS(app, "data-k=\"duration_ns\">");
  CHECK_CONTAINS(app, "id=\"pp-queues\"");
  CHECK_CONTAINS(app, "id=\"pp-advice\"");
  /* no raw field names as text (a key in a data-k attribute is fine) */
  CHECK(strstr(app, ">window_ns") == NULL);
  CHECK_CONTAINS(app, "data-k=\"window_ns\"");
  CHECK(strstr(app, "waits_unclosed") == NULL);
  CHECK(strstr(app, "schema_minor") == NULL);
  CHECK(strstr(app, "pp-generic") == NULL);
  free(dom);

  /* Without uPlot (its script removed, the build status saying why):
   * each chart says so where it would be, and the page still renders. */
  char *b = strstr(html, "id=\"pp-build\">");
  CHECK(b != NULL);
  b += strlen("id=\"pp-build\">");
  char *e = strstr(b, "</script>");
  CHECK(e != NULL);
  char *next = e + strlen("</script>\n");
  if (page_has_uplot(html)) {
    CHECK(strncmp(next, "<script>\n", 9) == 0);
    next = strstr(next, "</script>\n");
    CHECK(next != NULL);
    next += strlen("</script>\n");
  }
  FILE *f = fopen(fx, "wb");
  CHECK(f != NULL);
  fwrite(html, 1, (size_t)(b - html), f);
  fputs("{\"unavailable\": \"taken out by the test\"}</script>\n", f);
  fputs(next, f);
  CHECK_EQ(fclose(f), 0);
  free(html);
  html = pp_test_slurp(fx, NULL);
  write_with_script(fx, html, FIXTURE_JS "window.ppRender(d);\n");
  dom = dump_dom(chromium, fx);
  check_rendered_ok(dom);
  CHECK_EQ(count_ci(dom, "chart unavailable: uPlot was not bundled at "
                         "build time (taken out by the test)"),
           sizeof fixture_charts / sizeof fixture_charts[0]);
  free(dom);
  free(html);
}

/* Live mode's renderer: two snapshots fed through window.ppRender; the
 * second one's figures are shown, a chart is updated in place (the same
 * canvas), and the user's sort order survives. */
PP_TEST_T(html_chromium_live_rerender, 120) {
  const char *chromium = chromium_or_skip();
  if (!chromium)
    return;
  pp_trace t;
  pp_analysis a = {0};
  build_pipeline(&t, plain_names);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *html = export_html(&a, NULL, NULL);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  char page[4096];
  tpath(page, sizeof page, "live.html");
  write_with_script(
      page, html,
      FIXTURE_JS
      "window.ppRender(d);\n"
      "var cv = document.querySelector('[data-chart=\"zone-p50\"] canvas');\n"
      "if (cv) cv.setAttribute('data-test-mark', 'kept');\n"
      "var th = document.querySelectorAll("
      "'table[data-table=\"zones\"] th')[2];\n"
      "th.click(); th.click();\n"
      "var d2 = JSON.parse(JSON.stringify(d));\n"
      "d2.zones.forEach(function (z) { z.count += 1000; });\n"
      "d2.series.zones.forEach(function (s) {\n"
      "  s.p50_ns = s.p50_ns.map(function (x) { return x * 3; }); });\n"
      "d2.live = {interval_s: 1, as_of_ns: d.t0_ns + 5e8, window_s: 0};\n"
      "var r = window.ppRender(d2);\n"
      "document.body.setAttribute('data-test', r);\n");
  char *dom = dump_dom(chromium, page);
  check_rendered_ok(dom);
  CHECK_CONTAINS(dom, "data-test=\"ok\"");
  check_zone_row(dom, "child", 1072);
  check_zone_row(dom, "decode", 1012);
  CHECK_CONTAINS(dom, "a snapshot every 1 s, this one as of +");
  /* The count column, sorted ascending by the user, stays so. */
  const char *tb = strstr(dom, "data-table=\"zones\"");
  CHECK(tb != NULL);
  const char *asc = strstr(tb, "aria-sort=\"ascending\">count</th>");
  const char *tend = strstr(tb, "</thead>");
  CHECK(asc != NULL && tend != NULL && asc < tend);
  if (page_has_uplot(html))
    CHECK_CONTAINS(dom, "data-test-mark=\"kept\"");
  else if (charts_required())
    PP_FAIL("uPlot was not bundled and PP_REQUIRE_CHARTS=1");
  free(dom);
  free(html);
}

/* Height of the page (its document's scrollHeight) as Chromium lays it
 * out 1280 pixels wide, after js (may be empty) ran. */
static long page_height(const char *chromium, const char *html, const char *js,
                        const char *tmp) {
  char script[4096];
  snprintf(script, sizeof script,
           "%s\ndocument.body.setAttribute('data-height', String("
           "document.documentElement.scrollHeight));\n",
           js);
  write_with_script(tmp, html, script);
  char profile[4096], log[4096];
  tpath(profile, sizeof profile, "chromium-profile");
  tpath(log, sizeof log, "chromium.log");
  char *dom = NULL;
  int rc = pp_test_run(&dom,
                       "timeout 90 '%s' --headless --no-sandbox --disable-gpu "
                       "--disable-dev-shm-usage --no-first-run "
                       "--hide-scrollbars --window-size=1280,900 "
                       "--user-data-dir='%s' --dump-dom 'file://%s' 2>'%s'",
                       chromium, profile, tmp, log);
  CHECK_EQ(rc, 0);
  const char *h = strstr(dom, "data-height=\"");
  CHECK(h != NULL);
  long v = strtol(h + 13, NULL, 10);
  free(dom);
  return v;
}

/* A PNG of path at 1280 x height (capped; the cap is said). */
static void screenshot(const char *chromium, const char *path, const char *png,
                       long height) {
  char profile[4096], log[4096];
  tpath(profile, sizeof profile, "chromium-profile");
  tpath(log, sizeof log, "chromium.log");
  if (height > 16000) {
    printf("# %s: page is %ld px tall, the screenshot shows the first "
           "16000\n",
           png, height);
    height = 16000;
  }
  char *out = NULL;
  int rc = pp_test_run(&out,
                       "timeout 90 '%s' --headless --no-sandbox --disable-gpu "
                       "--disable-dev-shm-usage --no-first-run "
                       "--hide-scrollbars --window-size=1280,%ld "
                       "--user-data-dir='%s' --screenshot='%s' 'file://%s' "
                       "2>'%s'",
                       chromium, height, profile, png, path, log);
  free(out);
  CHECK_EQ(rc, 0);
  struct stat st;
  CHECK_EQ(stat(png, &st), 0);
  CHECK_GT(st.st_size, 1000);
  printf("# screenshot: %s\n", png);
}

/* Screenshots of the demo's report (whole page and major sections), and
 * of the same report with the fixture's chart data, as test artifacts in
 * <build>/test-artifacts/html/. */
PP_TEST_T(html_chromium_screenshots, 300) {
  const char *chromium = chromium_or_skip();
  if (!chromium)
    return;
  char dir[4096], page[4200], tmp[4200], shot[8400], art[4200];
  tpath(dir, sizeof dir, "demo");
  pp_cli_result r = pp_test_cli("demo --out '%s'", dir);
  if (r.rc != 0)
    PP_FAIL("demo exit %d:\n%s\n%s", r.rc, r.out, r.err);
  pp_cli_result_free(&r);
  snprintf(page, sizeof page, "%s/demo.html", dir);
  snprintf(tmp, sizeof tmp, "%s/measure.html", dir);
  snprintf(art, sizeof art, "%s/test-artifacts/html", pp_test_bindir());
  char *out = NULL;
  CHECK_EQ(pp_test_run(&out, "mkdir -p '%s'", art), 0);
  free(out);
  char *html = pp_test_slurp(page, NULL);
  CHECK(html != NULL);

  snprintf(shot, sizeof shot, "%s/demo-report.png", art);
  screenshot(chromium, page, shot, page_height(chromium, html, "", tmp));

  /* One per major section: the others hidden after rendering. */
  static const char *const secs[] = {"pp-zones",  "pp-timeline", "pp-pipeline",
                                     "pp-queues", "pp-frames",   "pp-advice"};
  for (size_t i = 0; i < sizeof secs / sizeof secs[0]; i++) {
    char js[1024], one[4200];
    snprintf(js, sizeof js,
             "Array.prototype.forEach.call(document.querySelectorAll("
             "'#pp-app .pp-page > *'), function (e) {\n"
             "  if (e.id !== '%s') e.style.display = 'none'; });\n",
             secs[i]);
    snprintf(one, sizeof one, "%s/section.html", dir);
    write_with_script(one, html, js);
    char *sec = pp_test_slurp(one, NULL);
    CHECK(sec != NULL);
    long hgt = page_height(chromium, sec, "", tmp);
    free(sec);
    snprintf(shot, sizeof shot, "%s/demo-%s.png", art, secs[i] + 3);
    screenshot(chromium, one, shot, hgt);
  }

  /* The fixture's chart data drawn into the demo's report. */
  snprintf(tmp, sizeof tmp, "%s/fixture.html", dir);
  write_with_script(tmp, html, FIXTURE_JS "window.ppRender(d);\n");
  char *fx = pp_test_slurp(tmp, NULL);
  char meas[4200];
  snprintf(meas, sizeof meas, "%s/measure2.html", dir);
  long hgt = page_height(chromium, fx, "", meas);
  free(fx);
  snprintf(shot, sizeof shot, "%s/demo-report-fixture-charts.png", art);
  screenshot(chromium, tmp, shot, hgt);
  free(html);
}

/* report.js formats each kind of figure as src/units.c does: the same
 * table (tests/fixtures/units.tsv), read by the page's formatters
 * (window.ppUnits) in Chromium. A missing figure is the page's dash. */
PP_TEST_T(html_chromium_units_table, 120) {
  const char *chromium = chromium_or_skip();
  if (!chromium)
    return;
  char src[4200];
  snprintf(src, sizeof src, "%s/tests/fixtures/units.tsv", pp_test_srcdir());
  char *tsv = pp_test_slurp(src, NULL);
  CHECK(tsv != NULL);
  /* the table as a JavaScript string */
  size_t n = strlen(tsv);
  char *lit = malloc(n * 6 + 1), *o = lit;
  CHECK(lit != NULL);
  for (const char *p = tsv; *p; p++) {
    if (*p == '\t')
      o += sprintf(o, "\\t");
    else if (*p == '\n')
      o += sprintf(o, "\\n");
    else if (*p == '\'' || *p == '\\' || *p == '<')
      o += sprintf(o, "\\u%04x", (unsigned char)*p);
    else
      *o++ = *p;
  }
  *o = 0;
  char *js = malloc(strlen(lit) + 2048);
  CHECK(js != NULL);
  sprintf(js,
          "var rows = '%s'.split('\\n'), n = 0, wrong = [];\n"
          "rows.forEach(function (r) {\n"
          "  if (!r || r[0] === '#') return;\n"
          "  var f = r.split('\\t'), v = f[1] === 'nan' ? NaN :\n"
          "    f[1] === 'inf' ? Infinity : f[1] === '-inf' ? -Infinity :\n"
          "    Number(f[1]);\n"
          "  var got = window.ppUnits[f[0]](v);\n"
          "  if (got === '\\u2013') got = '-';\n"
          "  n++;\n"
          "  if (got !== f[2]) wrong.push(f[0] + '(' + f[1] + ') = ' + got);\n"
          "});\n"
          "var pre = document.createElement('pre');\n"
          "pre.id = 'units-result';\n"
          "pre.textContent = 'units: ' + n + ' rows, ' + wrong.length +\n"
          "  ' wrong' + (wrong.length ? ': ' + wrong.join('; ') : '');\n"
          "document.body.appendChild(pre);\n",
          lit);
  pp_trace t;
  pp_analysis a = {0};
  build_pipeline(&t, plain_names);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *html = export_html(&a, NULL, NULL);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  char page[4096];
  tpath(page, sizeof page, "units.html");
  write_with_script(page, html, js);
  char *dom = dump_dom(chromium, page);
  check_rendered_ok(dom);
  size_t rows = 0;
  for (const char *p = tsv; *p; p++)
    rows += *p == '\n' && p[1] && p[1] != '#';
  rows += tsv[0] != '#';
  char want[64];
  snprintf(want, sizeof want, "units: %zu rows, 0 wrong</pre>", rows);
  if (!strstr(dom, want)) {
    const char *at = strstr(dom, "units:");
    PP_FAIL("want \"%s\", the page says: %.2000s", want, at ? at : "(none)");
  }
  free(dom);
  free(html);
  free(js);
  free(lit);
  free(tsv);
}

/* Requests with no token events: the page shows no TTFT, TPOT or ITL
 * figure (it showed rows of "0 ns"), says why, and lays out every
 * member of the requests object (no raw "more" table). */
PP_TEST_T(html_chromium_requests_without_tokens, 120) {
  const char *chromium = chromium_or_skip();
  if (!chromium)
    return;
  pp_trace t;
  pp_analysis a = {0};
  memset(&t, 0, sizeof t);
  t.pid = 5;
  size_t th = tb_thread(&t, 5, "main");
  uint32_t rq = tb_loc(&t, "(request)", 0);
  for (int i = 0; i < 4; i++) {
    tb_ev(&t, th, 1000 * i, rq, PPT_EV_REQ_BEGIN)->v.id = (uint64_t)i;
    tb_ev(&t, th, 1000 * i + 700, rq, PPT_EV_REQ_END)->v.id = (uint64_t)i;
  }
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *html = export_html(&a, NULL, NULL);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  char page[4096];
  tpath(page, sizeof page, "requests.html");
  write_text(page, html, strlen(html));
  char *dom = dump_dom(chromium, page);
  check_rendered_ok(dom);
  CHECK_CONTAINS(dom, "TTFT, TPOT, ITL: no token events");
  const char *ttft = strstr(dom, ">TTFT</td>");
  CHECK(ttft != NULL);
  const char *end = strstr(ttft, "</tr>");
  CHECK(end != NULL);
  char row[2048];
  snprintf(row, sizeof row, "%.*s", (int)(end - ttft), ttft);
  CHECK(strstr(row, " ns<") == NULL); /* no "0 ns" for no value */
  CHECK_CONTAINS(row, "\xe2\x80\x93"); /* the page's dash */
  CHECK_CONTAINS(dom, "energy per request: unavailable: no energy counter");
  CHECK(strstr(dom, "<h3>more</h3>") == NULL);
  free(dom);
  free(html);
}

/* The CPU stack samples of `pipeprof run --stacks` (the results document's
 * "stacks" table) on the page: drawn by the generic renderer from the
 * summary's rows and layout, each zone's functions under it. */
PP_TEST_T(html_chromium_stack_samples, 120) {
  const char *chromium = chromium_or_skip();
  if (!chromium)
    return;
  pp_cli_result r = pp_test_cli(
      "run -q --stacks 499 -o '%s/st' -- '%s/pipeprof-example-pipeline' "
      "--frames 40 --quiet",
      pp_test_tmpdir(), pp_test_bindir());
  if (r.rc != 0)
    PP_FAIL("run exit %d:\n%s", r.rc, r.err);
  pp_cli_result_free(&r);
  char page[4096];
  snprintf(page, sizeof page, "%s/st/report.html", pp_test_tmpdir());
  char *dom = dump_dom(chromium, page);
  check_rendered_ok(dom);
  CHECK_CONTAINS(dom, "id=\"pp-stacks\"");
  CHECK_CONTAINS(dom, "CPU stack samples");
  CHECK_CONTAINS(dom, "data-table=\"stacks\"");
  CHECK_CONTAINS(dom, "data-k=\"function\">convolve</td>");
  CHECK_CONTAINS(dom, "(whole program)");
  CHECK_CONTAINS(dom, "Hz per thread of CPU time (dwarf)"); /* a remark */
  free(dom);
}
