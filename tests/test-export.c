/* SPDX-License-Identifier: MIT */
/*
 * Tests of the JSON writer and the Chrome/Perfetto JSON, summary JSON and
 * CSV exporters. Traces are built by hand (locs, threads, events), run
 * through pp_analyze() and exported to memory. With jansson (PP_HAVE_JANSSON)
 * every JSON output is parsed by it and checked field by field; without it
 * a small strict validator in this file checks the syntax (and UTF-8) and
 * the checks fall back to substring tests.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "export/export.h"
#include "export/jsonw.h"
#include "format/pptrace.h"
#include "internal.h"
#include "runner.h"
#include "trace_builder.h"

#ifdef PP_HAVE_JANSSON
#include <jansson.h>
#endif

/* ---- trace builder ------------------------------------------------------ */

/* Trace building (tests/trace_builder.c) with this file's sites: function
 * fn_main in src/pipe.c, lines from 10. */
static uint32_t add_loc(pp_trace *t, const char *name, uint32_t kind) {
  uint32_t id = tb_loc(t, name, kind);
  pp_loc *l = &t->locs[id];
  free(l->function);
  free(l->file);
  l->function = tb_strdup("fn_main");
  l->file = tb_strdup("src/pipe.c");
  l->line = 10 + id;
  return id;
}

static size_t add_thread(pp_trace *t, uint64_t tid, const char *name,
                         uint64_t dropped) {
  size_t i = tb_thread(t, tid, name);
  t->threads[i].dropped = dropped;
  return i;
}

#define add_ev tb_ev
#define add_meta tb_meta
#define dup_str tb_strdup

static void add_i(pp_trace *t, size_t ti, int64_t ts, uint32_t loc,
                  uint8_t type, int64_t v) {
  add_ev(t, ti, ts, loc, type)->v.i = v;
}

static void add_id(pp_trace *t, size_t ti, int64_t ts, uint32_t loc,
                   uint8_t type, uint64_t id) {
  add_ev(t, ti, ts, loc, type)->v.id = id;
}


static void zone(pp_trace *t, size_t ti, uint32_t loc, int64_t b, int64_t e) {
  add_ev(t, ti, b, loc, PPT_EV_ZONE_BEGIN);
  add_ev(t, ti, e, loc, PPT_EV_ZONE_END);
}

#define free_trace pp_trace_free

/* Locs of the main test trace. */
enum {
  L_LOOP,
  L_DECODE,
  L_INFER,
  L_DEPTH,
  L_TEMP,
  L_TICK,
  L_FRAME,
  L_REQ_OUT,
  L_REQ_IN,
  L_DEPTH_B
};

/* Two threads: nested zones, counters (SET/ADD across threads and across
 * two sites sharing the counter's name, SETF), a mark, frame marks, one
 * flow between threads (begin and end at different sites with the same
 * name), an unclosed zone and dropped events. */
static void build_main(pp_trace *t) {
  memset(t, 0, sizeof *t);
  t->pid = 4242;
  add_loc(t, "frame_loop", PP_KIND_ZONE);
  add_loc(t, "decode", PP_KIND_ZONE);
  add_loc(t, "infer", PP_KIND_ZONE);
  add_loc(t, "queue_depth", PP_KIND_COUNTER);
  add_loc(t, "temp", PP_KIND_COUNTER);
  add_loc(t, "tick", PP_KIND_MARK);
  add_loc(t, "frame", PP_KIND_FRAME);
  add_loc(t, "req", PP_KIND_FLOW);
  add_loc(t, "req", PP_KIND_FLOW);
  add_loc(t, "queue_depth", PP_KIND_COUNTER); /* a second site, same name */
  size_t a = add_thread(t, 101, "producer", 3);
  size_t b = add_thread(t, 202, "", 1);
  add_ev(t, a, 1000, L_LOOP, PPT_EV_ZONE_BEGIN);
  add_ev(t, a, 1100, L_DECODE, PPT_EV_ZONE_BEGIN);
  add_id(t, a, 1150, L_REQ_OUT, PPT_EV_FLOW_BEGIN, 7);
  add_i(t, a, 1200, L_DEPTH, PPT_EV_COUNTER_SET, 5);
  add_ev(t, a, 1300, L_DECODE, PPT_EV_ZONE_END);
  add_ev(t, a, 1400, L_TICK, PPT_EV_MARK);
  add_i(t, a, 1500, L_DEPTH, PPT_EV_COUNTER_ADD, 2);
  add_ev(t, a, 2000, L_LOOP, PPT_EV_ZONE_END);
  add_ev(t, a, 2100, L_FRAME, PPT_EV_FRAME);
  add_ev(t, a, 3100, L_FRAME, PPT_EV_FRAME);
  add_ev(t, a, 3200, L_DECODE, PPT_EV_ZONE_BEGIN); /* never ends */
  add_ev(t, b, 1600, L_INFER, PPT_EV_ZONE_BEGIN);
  add_id(t, b, 1700, L_REQ_IN, PPT_EV_FLOW_END, 7);
  add_i(t, b, 1800, L_DEPTH_B, PPT_EV_COUNTER_ADD, -1);
  add_ev(t, b, 1900, L_TEMP, PPT_EV_COUNTER_SETF)->v.f = 36.5;
  add_ev(t, b, 2500, L_INFER, PPT_EV_ZONE_END);
}

/* Export with fn into a malloc'ed string. */
static char *export_mem(int (*fn)(FILE *, const pp_analysis *),
                        const pp_analysis *t, size_t *len) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  CHECK(f != NULL);
  CHECK_EQ(fn(f, t), 0);
  CHECK_EQ(fclose(f), 0);
  if (len)
    *len = n;
  return buf;
}

/* ---- a strict JSON syntax checker (used with and without jansson) ------- */

typedef struct jcur {
  const unsigned char *p, *end;
  int depth;
} jcur;

static void j_ws(jcur *c) {
  while (c->p < c->end &&
         (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
    c->p++;
}

static int j_lit(jcur *c, const char *lit) {
  size_t n = strlen(lit);
  if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n) != 0)
    return 0;
  c->p += n;
  return 1;
}

static int j_utf8(jcur *c) {
  unsigned char b = *c->p;
  int need;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b >= 0xC2 && b <= 0xDF)
    need = 1;
  else if (b >= 0xE0 && b <= 0xEF) {
    need = 2;
    if (b == 0xE0)
      lo = 0xA0;
    if (b == 0xED)
      hi = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    need = 3;
    if (b == 0xF0)
      lo = 0x90;
    if (b == 0xF4)
      hi = 0x8F;
  } else {
    return 0;
  }
  if (c->end - c->p <= need || c->p[1] < lo || c->p[1] > hi)
    return 0;
  for (int i = 2; i <= need; i++)
    if ((c->p[i] & 0xC0) != 0x80)
      return 0;
  c->p += need + 1;
  return 1;
}

static int j_string(jcur *c) {
  if (c->p >= c->end || *c->p != '"')
    return 0;
  c->p++;
  while (c->p < c->end) {
    unsigned char b = *c->p;
    if (b == '"') {
      c->p++;
      return 1;
    }
    if (b < 0x20)
      return 0;
    if (b == '\\') {
      c->p++;
      if (c->p >= c->end)
        return 0;
      if (*c->p == 'u') {
        for (int i = 1; i <= 4; i++)
          if (c->p + i >= c->end ||
              !strchr("0123456789abcdefABCDEF", c->p[i]) || !c->p[i])
            return 0;
        c->p += 5;
      } else if (strchr("\"\\/bfnrt", *c->p) && *c->p) {
        c->p++;
      } else {
        return 0;
      }
    } else if (b >= 0x80) {
      if (!j_utf8(c))
        return 0;
    } else {
      c->p++;
    }
  }
  return 0;
}

static int j_digits(jcur *c) {
  const unsigned char *s = c->p;
  while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
    c->p++;
  return c->p > s;
}

static int j_number(jcur *c) {
  if (c->p < c->end && *c->p == '-')
    c->p++;
  if (c->p < c->end && *c->p == '0')
    c->p++;
  else if (!j_digits(c))
    return 0;
  if (c->p < c->end && *c->p == '.') {
    c->p++;
    if (!j_digits(c))
      return 0;
  }
  if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
    c->p++;
    if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
      c->p++;
    if (!j_digits(c))
      return 0;
  }
  return 1;
}

static int j_value(jcur *c) {
  j_ws(c);
  if (c->p >= c->end || ++c->depth > 64)
    return 0;
  int ok = 0;
  unsigned char b = *c->p;
  if (b == '{' || b == '[') {
    char close = b == '{' ? '}' : ']';
    c->p++;
    j_ws(c);
    if (c->p < c->end && *c->p == close) {
      c->p++;
      ok = 1;
    } else {
      for (;;) {
        if (b == '{') {
          j_ws(c);
          if (!j_string(c))
            break;
          j_ws(c);
          if (c->p >= c->end || *c->p++ != ':')
            break;
        }
        if (!j_value(c))
          break;
        j_ws(c);
        if (c->p < c->end && *c->p == ',') {
          c->p++;
          continue;
        }
        if (c->p < c->end && *c->p == close) {
          c->p++;
          ok = 1;
        }
        break;
      }
    }
  } else if (b == '"') {
    ok = j_string(c);
  } else if (b == 't') {
    ok = j_lit(c, "true");
  } else if (b == 'f') {
    ok = j_lit(c, "false");
  } else if (b == 'n') {
    ok = j_lit(c, "null");
  } else {
    ok = j_number(c);
  }
  c->depth--;
  return ok;
}

/* 1 when s (n bytes) is exactly one valid JSON document. */
static int json_valid(const char *s, size_t n) {
  jcur c = {(const unsigned char *)s, (const unsigned char *)s + n, 0};
  if (!j_value(&c))
    return 0;
  j_ws(&c);
  return c.p == c.end;
}

#define JV(lit) json_valid(lit, sizeof(lit) - 1)

PP_TEST(export_json_validator_self_test) {
  CHECK(JV("{\"a\":[1,2.5e3,-0.1,true,null,\"x\\u00e9\"]}"));
  CHECK(JV(" [ {} , [] ] "));
  CHECK(!JV("{\"a\":1,}"));
  CHECK(!JV("[1 2]"));
  CHECK(!JV("[01]"));
  CHECK(!JV("[1.]"));
  CHECK(!JV("\"\x01\""));
  CHECK(!JV("\"\\x\""));
  CHECK(!JV("\"\xC0\xAF\""));
  CHECK(!JV("\"\xED\xA0\x80\""));
  CHECK(!JV("\"\xE2\x82\""));
  CHECK(JV("\"\xF0\x9F\x98\x80\""));
  CHECK(!JV("[1] x"));
  CHECK(!JV("{\"a\" 1}"));
}

/* ---- jsonw -------------------------------------------------------------- */

static void check_us(int64_t ns, const char *want) {
  char b[40];
  b[pp_jsonw_fmt_us(b, ns)] = '\0';
  CHECK_STR(b, want);
}

PP_TEST(export_jsonw_numbers) {
  check_us(1234567, "1234.567");
  check_us(0, "0.000");
  check_us(999, "0.999");
  check_us(1000, "1.000");
  check_us(-5, "-0.005");
  check_us(-1234567, "-1234.567");
  check_us(INT64_MAX, "9223372036854775.807");
  check_us(INT64_MIN, "-9223372036854775.808");
  char b[40];
  b[pp_jsonw_fmt_int(b, INT64_MIN)] = '\0';
  CHECK_STR(b, "-9223372036854775808");
  b[pp_jsonw_fmt_uint(b, UINT64_MAX)] = '\0';
  CHECK_STR(b, "18446744073709551615");
  for (uint64_t v = 0; v < 100000; v += 7) {
    char ref[32];
    b[pp_jsonw_fmt_uint(b, v)] = '\0';
    snprintf(ref, sizeof ref, "%" PRIu64, v);
    CHECK_STR(b, ref);
  }
  CHECK_EQ(pp_jsonw_fmt_double(b, 0.1), 3);
  CHECK_STR(b, "0.1");
  pp_jsonw_fmt_double(b, 36.5);
  CHECK_STR(b, "36.5");
  pp_jsonw_fmt_double(b, 1e300);
  CHECK_STR(b, "1e+300");
  pp_jsonw_fmt_double(b, 1.0 / 3.0);
  CHECK(strtod(b, NULL) == 1.0 / 3.0);
  CHECK_EQ(pp_jsonw_fmt_double(b, NAN), 0);
  CHECK_EQ(pp_jsonw_fmt_double(b, INFINITY), 0);
  CHECK_EQ(pp_jsonw_fmt_double(b, -INFINITY), 0);
  /* whole numbers take a shorter path and come out as "%.15g" writes
   * them, at the bound and past it too */
  const double whole[] = {0.0, -0.0, 1, -1, 106, 1e6, -123456789, 4.5e14,
                          999999999999999.0, -999999999999999.0, 1e15,
                          -1e15, 1e15 + 2, 9007199254740992.0, 1e19,
                          -1e300, 2.5, -0.5};
  for (size_t i = 0; i < sizeof whole / sizeof *whole; i++) {
    char ref[40];
    snprintf(ref, sizeof ref, "%.15g", whole[i]);
    if (strtod(ref, NULL) != whole[i])
      snprintf(ref, sizeof ref, "%.17g", whole[i]);
    b[pp_jsonw_fmt_double(b, whole[i])] = '\0';
    CHECK_STR(b, ref);
  }
}

static void check_quote(const char *in, size_t n, const char *want) {
  size_t len = 0;
  char *q = pp_jsonw_quote(in, n, &len);
  CHECK(q != NULL);
  CHECK_EQ(len, strlen(q));
  CHECK_STR(q, want);
  CHECK(json_valid(q, len));
  free(q);
}

#define FFFD "\xEF\xBF\xBD"
#define Q(lit) lit, sizeof(lit) - 1

PP_TEST(export_jsonw_escape_and_utf8) {
  check_quote(Q("plain"), "\"plain\"");
  check_quote(Q("a\"b\\c\n\t\x01\x1f\x7f"),
              "\"a\\\"b\\\\c\\u000a\\u0009\\u0001\\u001f\x7f\"");
  check_quote(Q("\0x"), "\"\\u0000x\"");
  check_quote(Q("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
              "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"");
  /* overlong encodings */
  check_quote(Q("\xC0\xAF"), "\"" FFFD FFFD "\"");
  check_quote(Q("\xC1\xBF"), "\"" FFFD FFFD "\"");
  check_quote(Q("\xE0\x80\xAF"), "\"" FFFD FFFD FFFD "\"");
  check_quote(Q("\xF0\x80\x80\xAF"), "\"" FFFD FFFD FFFD FFFD "\"");
  /* surrogates, beyond U+10FFFF, bytes never valid */
  check_quote(Q("\xED\xA0\x80"), "\"" FFFD FFFD FFFD "\"");
  check_quote(Q("\xED\x9F\xBF"), "\"\xED\x9F\xBF\"");
  check_quote(Q("\xF4\x90\x80\x80"), "\"" FFFD FFFD FFFD FFFD "\"");
  check_quote(Q("\xF4\x8F\xBF\xBF"), "\"\xF4\x8F\xBF\xBF\"");
  check_quote(Q("\xF5\xFF\xFE"), "\"" FFFD FFFD FFFD "\"");
  /* stray continuation bytes; truncated sequences (one U+FFFD each) */
  check_quote(Q("a\x80\xBF"
                "b"),
              "\"a" FFFD FFFD "b\"");
  check_quote(Q("\xE2\x82"), "\"" FFFD "\"");
  check_quote(Q("\xE2\x82"
                "A"),
              "\"" FFFD "A\"");
  check_quote(Q("\xF0\x9F\x98"), "\"" FFFD "\"");
  check_quote(Q("\xF0\x9F\x98\"x"), "\"" FFFD "\\\"x\"");
  check_quote(Q("\xC3"), "\"" FFFD "\"");
  /* a long string crosses the writer's buffer boundary */
  size_t n = 3 * PP_JSONW_BUF_SIZE;
  char *big = malloc(n);
  CHECK(big != NULL);
  for (size_t i = 0; i < n; i++)
    big[i] = (char)(i % 7 == 0 ? '\n' : i % 11 == 0 ? '\xff' : 'a');
  size_t qlen;
  char *q = pp_jsonw_quote(big, n, &qlen);
  CHECK(q != NULL);
  CHECK(json_valid(q, qlen));
  char *mem = NULL;
  size_t mlen = 0;
  FILE *f = open_memstream(&mem, &mlen);
  CHECK(f != NULL);
  pp_jsonw w;
  CHECK_EQ(pp_jsonw_init(&w, f), 0);
  pp_jsonw_strn(&w, big, n);
  CHECK_EQ(pp_jsonw_finish(&w), 0);
  CHECK_EQ(fclose(f), 0);
  CHECK_EQ(mlen, qlen);
  CHECK(memcmp(mem, q, mlen) == 0);
  free(q);
  free(mem);
  free(big);
}

PP_TEST(export_jsonw_structure) {
  char *mem = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&mem, &len);
  CHECK(f != NULL);
  pp_jsonw w;
  CHECK_EQ(pp_jsonw_init(&w, f), 0);
  pp_jsonw_obj_begin(&w);
  pp_jsonw_kv_int(&w, "a", -3);
  pp_jsonw_key(&w, "b");
  pp_jsonw_arr_begin_lines(&w);
  pp_jsonw_uint(&w, 1);
  pp_jsonw_obj_begin(&w);
  pp_jsonw_obj_end(&w);
  pp_jsonw_arr_begin(&w);
  pp_jsonw_arr_end(&w);
  pp_jsonw_double(&w, NAN);
  pp_jsonw_us(&w, 1500);
  pp_jsonw_bool(&w, 1);
  pp_jsonw_str(&w, NULL);
  pp_jsonw_elem(&w);
  pp_jsonw_puts(&w, "{\"raw\":1}");
  pp_jsonw_arr_end(&w);
  pp_jsonw_kv_double(&w, "d", 2.25);
  pp_jsonw_kv_bool(&w, "e", 0);
  pp_jsonw_obj_end(&w);
  CHECK_EQ(pp_jsonw_finish(&w), 0);
  CHECK_EQ(fclose(f), 0);
  CHECK_STR(mem, "{\"a\":-3,\"b\":[\n1,\n{},\n[],\nnull,\n1.500,\ntrue,\n"
                 "null,\n{\"raw\":1}\n],\"d\":2.25,\"e\":false}");
  free(mem);
}

/* A FILE whose writes fail: a file opened read-only. */
static FILE *failing_file(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/ro", pp_test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  CHECK_EQ(fclose(f), 0);
  f = fopen(path, "r");
  CHECK(f != NULL);
  return f;
}

PP_TEST(export_write_errors_reported) {
  pp_trace t;
  pp_analysis a = {0};
  build_main(&t);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  int (*fns[])(FILE *, const pp_analysis *) = {
      pp_export_chrome, pp_export_summary_json, pp_export_csv};
  for (size_t i = 0; i < 3; i++) {
    FILE *f = failing_file();
    CHECK_EQ(fns[i](f, &a), -1);
    fclose(f);
  }
  /* not analysed: refused */
  pp_analysis_free(&a);
  FILE *f = fopen("/dev/null", "w");
  CHECK(f != NULL);
  for (size_t i = 0; i < 3; i++)
    CHECK_EQ(fns[i](f, &a), -1);
  fclose(f);
  pp_analysis_free(&a);
  free_trace(&t);
}

/* ---- chrome ------------------------------------------------------------- */

/* Parsed view of one event (filled with or without jansson). */
typedef struct xev {
  uint64_t tid;
  int64_t start, end; /* ns */
  size_t idx;
} xev;

static int cmp_xev(const void *a, const void *b) {
  const xev *x = a, *y = b;
  if (x->tid != y->tid)
    return x->tid < y->tid ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  if (x->end != y->end)
    return x->end > y->end ? -1 : 1; /* parents first */
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Every X on a thread either lies inside the enclosing one or after it:
 * no partial overlap. Returns the number of violations. */
static int nesting_violations(xev *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_xev);
  xev *stack[256];
  size_t sp = 0;
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    if (i && v[i].tid != v[i - 1].tid)
      sp = 0;
    while (sp && stack[sp - 1]->end <= v[i].start)
      sp--;
    if (sp && v[i].end > stack[sp - 1]->end)
      bad++;
    if (sp < 256)
      stack[sp++] = &v[i];
  }
  return bad;
}

PP_TEST(export_nesting_checker_self_test) {
  xev ok[] = {{1, 0, 100, 0},   {1, 10, 50, 1}, {1, 50, 100, 2},
              {1, 100, 120, 3}, {2, 5, 500, 4}, {2, 5, 5, 5}};
  CHECK_EQ(nesting_violations(ok, 6), 0);
  xev bad[] = {{1, 0, 100, 0}, {1, 50, 150, 1}};
  CHECK_EQ(nesting_violations(bad, 2), 1);
}

/* Flows: x begins outside any zone (v1); a and b begin in the same zone
 * (a, sorted first, gets v2; b falls back to v1); c runs begin -> step
 * (twice in one zone) -> end over three zones, and its id is reused for a
 * second chain. */
static void build_flows(pp_trace *t) {
  memset(t, 0, sizeof *t);
  t->pid = 7;
  uint32_t z = add_loc(t, "z", PP_KIND_ZONE);
  uint32_t fx = add_loc(t, "x", PP_KIND_FLOW);
  uint32_t fa = add_loc(t, "a", PP_KIND_FLOW);
  uint32_t fb = add_loc(t, "b", PP_KIND_FLOW);
  uint32_t fc = add_loc(t, "c", PP_KIND_FLOW);
  size_t a = add_thread(t, 1, "one", 0);
  size_t b = add_thread(t, 2, "two", 0);
  /* x: begins outside any zone -> v1 */
  add_id(t, a, 10, fx, PPT_EV_FLOW_BEGIN, 1);
  zone(t, a, z, 20, 40);
  add_ev(t, b, 25, z, PPT_EV_ZONE_BEGIN);
  add_id(t, b, 30, fx, PPT_EV_FLOW_END, 1);
  add_ev(t, b, 35, z, PPT_EV_ZONE_END);
  /* a and b both begin in the same zone: a (sorted first) gets v2, b v1 */
  add_ev(t, a, 100, z, PPT_EV_ZONE_BEGIN);
  add_id(t, a, 110, fa, PPT_EV_FLOW_BEGIN, 1);
  add_id(t, a, 120, fb, PPT_EV_FLOW_BEGIN, 2);
  add_ev(t, a, 200, z, PPT_EV_ZONE_END);
  add_ev(t, b, 300, z, PPT_EV_ZONE_BEGIN);
  add_id(t, b, 310, fa, PPT_EV_FLOW_END, 1);
  add_id(t, b, 320, fb, PPT_EV_FLOW_END, 2);
  add_ev(t, b, 400, z, PPT_EV_ZONE_END);
  /* c: begin -> step -> end over three zones, then id 9 reused */
  for (int r = 0; r < 2; r++) {
    int64_t o = 1000 + r * 1000;
    add_ev(t, a, o, z, PPT_EV_ZONE_BEGIN);
    add_id(t, a, o + 10, fc, PPT_EV_FLOW_BEGIN, 9);
    add_ev(t, a, o + 100, z, PPT_EV_ZONE_END);
    add_ev(t, b, o + 200, z, PPT_EV_ZONE_BEGIN);
    add_id(t, b, o + 210, fc, PPT_EV_FLOW_STEP, 9);
    add_id(t, b, o + 220, fc, PPT_EV_FLOW_STEP, 9); /* same zone: once */
    add_ev(t, b, o + 300, z, PPT_EV_ZONE_END);
    add_ev(t, a, o + 400, z, PPT_EV_ZONE_BEGIN);
    add_id(t, a, o + 410, fc, PPT_EV_FLOW_END, 9);
    add_ev(t, a, o + 500, z, PPT_EV_ZONE_END);
  }
}

#ifdef PP_HAVE_JANSSON

static json_t *parse_or_die(const char *s) {
  json_error_t e;
  json_t *root = json_loads(s, 0, &e);
  if (!root)
    PP_FAIL("invalid JSON at line %d col %d: %s", e.line, e.column, e.text);
  return root;
}

static int64_t us_to_ns(json_t *v) {
  CHECK(json_is_number(v));
  double d = json_number_value(v) * 1000.0;
  return (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
}

static const char *jstr(json_t *o, const char *k) {
  json_t *v = json_object_get(o, k);
  return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Count events with ph and name (name NULL: any). */
static size_t count_ev(json_t *evs, const char *ph, const char *name) {
  size_t n = 0, i;
  json_t *e;
  json_array_foreach(evs, i, e) {
    const char *p = jstr(e, "ph"), *nm = jstr(e, "name");
    if (p && strcmp(p, ph) == 0 && (!name || (nm && !strcmp(nm, name))))
      n++;
  }
  return n;
}

static json_t *find_ev(json_t *evs, const char *ph, const char *name,
                       size_t nth) {
  size_t i;
  json_t *e;
  json_array_foreach(evs, i, e) {
    const char *p = jstr(e, "ph"), *nm = jstr(e, "name");
    if (p && strcmp(p, ph) == 0 && nm && !strcmp(nm, name) && nth-- == 0)
      return e;
  }
  return NULL;
}

/* Generic structural checks of a chrome trace; returns traceEvents. */
static json_t *check_chrome_common(json_t *root, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  CHECK(json_is_object(root));
  json_t *evs = json_object_get(root, "traceEvents");
  CHECK(json_is_array(evs));
  CHECK_STR(jstr(root, "displayTimeUnit"), "ns");
  json_t *md = json_object_get(root, "metadata");
  CHECK(json_is_object(md));
  CHECK_EQ_U(json_integer_value(json_object_get(md, "dropped_events")),
             a->prof.dropped);
  CHECK_EQ(json_integer_value(json_object_get(md, "t0_ns")), a->prof.t0);
  CHECK_STR(jstr(md, "clock"), "monotonic");
  CHECK(jstr(md, "pipeprof_version") != NULL);
  json_t *rd = json_object_get(md, "reader");
  CHECK(json_is_object(rd));
  CHECK(json_is_boolean(json_object_get(rd, "truncated")));
  CHECK(json_is_boolean(json_object_get(rd, "clean_end")));
  CHECK(json_is_integer(json_object_get(rd, "chunks_bad")));
  CHECK(json_is_integer(json_object_get(rd, "bytes_skipped")));

  size_t n = json_array_size(evs), nx = 0, i;
  xev *xs = calloc(n ? n : 1, sizeof *xs);
  CHECK(xs != NULL);
  json_t *e;
  json_array_foreach(evs, i, e) {
    const char *ph = jstr(e, "ph");
    CHECK(ph != NULL);
    CHECK(json_is_integer(json_object_get(e, "pid")));
    /* each thread's events carry its process (merged traces hold several) */
    json_t *jt = json_object_get(e, "tid");
    uint64_t pid = t->pid, got = json_integer_value(json_object_get(e, "pid"));
    int thread_ev = 0;
    for (size_t k = 0; json_is_integer(jt) && k < t->nthreads; k++)
      if (t->threads[k].tid == (uint64_t)json_integer_value(jt)) {
        pid = pp_thread_pid(t, &t->threads[k]);
        thread_ev = 1;
      }
    if (!thread_ev) /* process-wide: one of the trace's processes */
      for (size_t k = 0; k < t->nthreads && got != pid; k++)
        if (pp_thread_pid(t, &t->threads[k]) == got)
          pid = got;
    CHECK_EQ_U(got, pid);
    CHECK(json_is_string(json_object_get(e, "name")));
    if (strcmp(ph, "M") != 0)
      CHECK(json_is_number(json_object_get(e, "ts")));
    if (!strcmp(ph, "X")) {
      CHECK(json_is_integer(json_object_get(e, "tid")));
      CHECK(json_is_number(json_object_get(e, "dur")));
      CHECK_STR(jstr(e, "cat"), "zone");
      /* no per-call arguments (speedscope made each call a symbol of its
       * own): at most the unclosed flag */
      json_t *args = json_object_get(e, "args");
      CHECK(!args || (json_object_size(args) == 1 &&
                      json_is_true(json_object_get(args, "unclosed"))));
      xs[nx].tid = (uint64_t)json_integer_value(json_object_get(e, "tid"));
      xs[nx].start = us_to_ns(json_object_get(e, "ts"));
      xs[nx].end = xs[nx].start + us_to_ns(json_object_get(e, "dur"));
      CHECK_GE(xs[nx].end, xs[nx].start);
      xs[nx].idx = nx;
      nx++;
    } else if (!strcmp(ph, "C")) {
      json_t *args = json_object_get(e, "args");
      CHECK(json_is_object(args));
      CHECK_GT(json_object_size(args), 0);
      const char *k;
      json_t *v;
      json_object_foreach(args, k, v) CHECK(json_is_number(v));
    } else if (!strcmp(ph, "i")) {
      const char *s = jstr(e, "s");
      CHECK(s && (!strcmp(s, "t") || !strcmp(s, "p")));
    }
  }
  CHECK_EQ(nesting_violations(xs, nx), 0);
  size_t want_x = 0;
  for (size_t k = 0; k < t->nthreads; k++)
    want_x += a->threads[k].nzones;
  CHECK_EQ(nx, want_x);
  free(xs);

  /* a thread_name for every thread */
  for (size_t k = 0; k < t->nthreads; k++) {
    int found = 0;
    json_array_foreach(evs, i, e) {
      if (!strcmp(jstr(e, "ph"), "M") &&
          !strcmp(jstr(e, "name"), "thread_name") &&
          (uint64_t)json_integer_value(json_object_get(e, "tid")) ==
              t->threads[k].tid) {
        CHECK(jstr(json_object_get(e, "args"), "name") != NULL);
        found++;
      }
    }
    CHECK_EQ(found, 1);
  }
  uint32_t *pids = NULL;
  size_t npids = pp_trace_pids(t, &pids);
  free(pids);
  CHECK_EQ(count_ev(evs, "M", "process_name"), npids);
  return evs;
}

PP_TEST(export_chrome_main) {
  pp_trace t;
  pp_analysis a = {0};
  build_main(&t);
  add_meta(&t, "process_name", "pipeline");
  add_meta(&t, "start_mono_ns", "500");
  add_meta(&t, "start_realtime_ns", "1700000000000000000");
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = export_mem(pp_export_chrome, &a, NULL);
  CHECK(json_valid(s, strlen(s)));
  json_t *root = parse_or_die(s);
  json_t *evs = check_chrome_common(root, &a);
  json_t *md = json_object_get(root, "metadata");
  CHECK_EQ(json_integer_value(json_object_get(md, "dropped_events")), 4);
  json_t *dbt = json_object_get(md, "dropped_by_thread");
  CHECK_EQ(json_integer_value(json_object_get(dbt, "101")), 3);
  CHECK_EQ(json_integer_value(json_object_get(dbt, "202")), 1);
  CHECK_EQ(json_integer_value(json_object_get(md, "unclosed_zones")), 1);
  CHECK_EQ(json_integer_value(json_object_get(md, "start_mono_ns")), 500);
  /* t0 = 1000 ns mono = 500 ns after the start anchor */
  CHECK_EQ(json_integer_value(json_object_get(md, "t0_realtime_ns")),
           1700000000000000500LL);
  CHECK_STR(jstr(md, "process_name"), "pipeline");

  /* zones: exact times relative to t0 = 1000 ns */
  json_t *loop = find_ev(evs, "X", "frame_loop", 0);
  CHECK(loop != NULL);
  CHECK_EQ(us_to_ns(json_object_get(loop, "ts")), 0);
  CHECK_EQ(us_to_ns(json_object_get(loop, "dur")), 1000);
  CHECK(json_object_get(loop, "args") == NULL);
  CHECK_EQ(json_integer_value(json_object_get(loop, "tid")), 101);
  CHECK(strstr(s, "\"ts\":0.000,\"dur\":1.000") != NULL);
  json_t *dec = find_ev(evs, "X", "decode", 0);
  CHECK_EQ(us_to_ns(json_object_get(dec, "ts")), 100);
  CHECK_EQ(us_to_ns(json_object_get(dec, "dur")), 200);
  CHECK(json_object_get(json_object_get(dec, "args"), "unclosed") == NULL);
  json_t *dec2 = find_ev(evs, "X", "decode", 1);
  CHECK(dec2 != NULL);
  CHECK(
      json_is_true(json_object_get(json_object_get(dec2, "args"), "unclosed")));
  json_t *inf = find_ev(evs, "X", "infer", 0);
  CHECK_EQ(json_integer_value(json_object_get(inf, "tid")), 202);
  CHECK_EQ(us_to_ns(json_object_get(inf, "ts")), 600);
  CHECK_EQ(us_to_ns(json_object_get(inf, "dur")), 900);

  /* flow v2: decode (begin) -> infer (end), same bind id */
  const char *out_id = jstr(dec, "bind_id");
  const char *in_id = jstr(inf, "bind_id");
  CHECK(out_id != NULL && in_id != NULL);
  CHECK_STR(out_id, in_id);
  CHECK(json_is_true(json_object_get(dec, "flow_out")));
  CHECK(json_object_get(dec, "flow_in") == NULL);
  CHECK(json_is_true(json_object_get(inf, "flow_in")));
  CHECK(json_object_get(inf, "flow_out") == NULL);
  CHECK_EQ(strlen(out_id), 16);
  CHECK_EQ(count_ev(evs, "s", NULL) + count_ev(evs, "f", NULL), 0);

  /* counters: running values in time order across threads */
  CHECK_EQ(count_ev(evs, "C", "queue_depth"), 3);
  int64_t want[] = {5, 7, 6};
  for (size_t k = 0; k < 3; k++) {
    json_t *c = find_ev(evs, "C", "queue_depth", k);
    CHECK(
        json_is_integer(json_object_get(json_object_get(c, "args"), "value")));
    CHECK_EQ(json_integer_value(
                 json_object_get(json_object_get(c, "args"), "value")),
             want[k]);
  }
  json_t *temp = find_ev(evs, "C", "temp", 0);
  CHECK_NEAR(json_number_value(
                 json_object_get(json_object_get(temp, "args"), "value")),
             36.5, 0);

  /* instants */
  json_t *tick = find_ev(evs, "i", "tick", 0);
  CHECK_STR(jstr(tick, "s"), "t");
  CHECK_EQ(us_to_ns(json_object_get(tick, "ts")), 400);
  CHECK_EQ(count_ev(evs, "i", "frame"), 2);
  json_t *fr = find_ev(evs, "i", "frame", 1);
  CHECK_STR(jstr(fr, "s"), "p");
  CHECK_STR(jstr(fr, "cat"), "frame");
  CHECK_EQ(us_to_ns(json_object_get(fr, "ts")), 2100);

  /* names: the process from META, unnamed threads get a fallback */
  json_t *pn = find_ev(evs, "M", "process_name", 0);
  CHECK_STR(jstr(json_object_get(pn, "args"), "name"), "pipeline");
  CHECK_EQ(count_ev(evs, "M", "thread_sort_index"), 2);
  json_decref(root);
  free(s);
  pp_analysis_free(&a);
  free_trace(&t);
}

/* Flows: v1 fallback without an enclosing zone or when the zone already
 * carries another flow; reused ids give distinct chains; steps. */
PP_TEST(export_chrome_flows) {
  pp_trace t;
  pp_analysis an = {0};
  build_flows(&t);
  CHECK_EQ(pp_analyze(&t, &an), 0);
  char *s = export_mem(pp_export_chrome, &an, NULL);
  json_t *root = parse_or_die(s);
  json_t *evs = check_chrome_common(root, &an);

  /* v1 events: x and b, each an s and an f with matching ids */
  CHECK_EQ(count_ev(evs, "s", NULL), 2);
  CHECK_EQ(count_ev(evs, "f", NULL), 2);
  CHECK_EQ(count_ev(evs, "t", NULL), 0);
  const char *names[] = {"x", "b"};
  for (size_t k = 0; k < 2; k++) {
    json_t *st = find_ev(evs, "s", names[k], 0);
    json_t *fi = find_ev(evs, "f", names[k], 0);
    CHECK(st != NULL && fi != NULL);
    CHECK_STR(jstr(st, "cat"), "flow");
    CHECK_STR(jstr(fi, "cat"), "flow");
    CHECK_STR(jstr(st, "id"), jstr(fi, "id"));
    CHECK_STR(jstr(fi, "bp"), "e");
    CHECK(jstr(st, "bp") == NULL);
  }
  CHECK_EQ(us_to_ns(json_object_get(find_ev(evs, "s", "x", 0), "ts")), 0);
  CHECK_EQ(us_to_ns(json_object_get(find_ev(evs, "f", "x", 0), "ts")), 20);
  CHECK_EQ(
      json_integer_value(json_object_get(find_ev(evs, "f", "x", 0), "tid")), 2);

  /* v2 binds: walk the X events in time order and pair flow_out with the
   * next flow_in of the same id */
  size_t i;
  json_t *e;
  int outs = 0, ins = 0, steps = 0;
  const char *ids[16];
  int nids = 0;
  json_array_foreach(evs, i, e) {
    const char *id = jstr(e, "bind_id");
    if (!id)
      continue;
    CHECK_STR(jstr(e, "ph"), "X");
    int o = json_is_true(json_object_get(e, "flow_out"));
    int in = json_is_true(json_object_get(e, "flow_in"));
    CHECK(o || in);
    outs += o && !in;
    ins += in && !o;
    steps += in && o;
    int seen = 0;
    for (int k = 0; k < nids; k++)
      seen |= !strcmp(ids[k], id);
    if (!seen && nids < 16)
      ids[nids++] = id;
  }
  /* a: out+in; c twice: out, step, in */
  CHECK_EQ(outs, 3);
  CHECK_EQ(ins, 3);
  CHECK_EQ(steps, 2);
  CHECK_EQ(nids, 3); /* a, and two distinct chains of c/9 */
  for (int k = 0; k < nids; k++) {
    /* each id: flow_out first (earliest ts), flow_in last */
    int64_t out_ts = -1, in_ts = -1;
    int n_on = 0;
    json_array_foreach(evs, i, e) {
      const char *id = jstr(e, "bind_id");
      if (!id || strcmp(id, ids[k]))
        continue;
      n_on++;
      int64_t ts = us_to_ns(json_object_get(e, "ts"));
      int o = json_is_true(json_object_get(e, "flow_out"));
      int in = json_is_true(json_object_get(e, "flow_in"));
      if (o && !in)
        out_ts = ts;
      if (in && !o)
        in_ts = ts;
    }
    CHECK_GE(n_on, 2);
    CHECK_GE(out_ts, 0);
    CHECK_GT(in_ts, out_ts);
  }
  json_t *md = json_object_get(root, "metadata");
  CHECK_EQ(json_integer_value(json_object_get(md, "flow_chains_v2")), 3);
  CHECK_EQ(json_integer_value(json_object_get(md, "flow_chains_v1")), 2);
  json_decref(root);
  free(s);
  pp_analysis_free(&an);
  free_trace(&t);
}

/* One process of a merged run: a zone on each of two threads, joined by
 * flow "frame" 1 (every process numbers its frames from 1). */
static void build_proc(pp_trace *t, uint32_t pid, uint64_t tid0,
                       const char *name) {
  memset(t, 0, sizeof *t);
  t->pid = pid;
  add_meta(t, "process_name", name);
  uint32_t z = add_loc(t, "stage", PP_KIND_ZONE);
  uint32_t f = add_loc(t, "frame", PP_KIND_FLOW);
  size_t a = add_thread(t, tid0 + 1, "source", 0);
  size_t b = add_thread(t, tid0 + 2, "sink", 0);
  add_ev(t, a, 100, z, PPT_EV_ZONE_BEGIN);
  add_id(t, a, 110, f, PPT_EV_FLOW_BEGIN, 1);
  add_ev(t, a, 200, z, PPT_EV_ZONE_END);
  add_ev(t, b, 300, z, PPT_EV_ZONE_BEGIN);
  add_id(t, b, 310, f, PPT_EV_FLOW_END, 1);
  add_ev(t, b, 400, z, PPT_EV_ZONE_END);
  /* and request 1, begun on one thread and ended on the other */
  uint32_t r = add_loc(t, "request", PP_KIND_ZONE);
  add_id(t, a, 120, r, PPT_EV_REQ_BEGIN, 1);
  add_id(t, b, 320, r, PPT_EV_REQ_END, 1);
}

/* The bind_id of the X event of tid (one zone per thread here). */
static const char *bind_of(json_t *evs, uint64_t tid) {
  size_t i;
  json_t *e;
  json_array_foreach(evs, i, e) {
    if (!strcmp(jstr(e, "ph"), "X") &&
        (uint64_t)json_integer_value(json_object_get(e, "tid")) == tid)
      return jstr(e, "bind_id");
  }
  return NULL;
}

/* Traces of two processes merged (pipeprof run of a shell starting two
 * programs): each process keeps its pid and name, and equal flow ids of
 * different processes are different chains. */
PP_TEST(export_chrome_merged_processes) {
  pp_trace t, u;
  pp_analysis a = {0};
  build_proc(&t, 100, 1000, "alpha");
  build_proc(&u, 200, 2000, "beta");
  CHECK_EQ(pp_trace_merge(&t, &u), 0);
  free_trace(&u);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK_EQ(t.nthreads, 4);
  CHECK_EQ(pp_thread_pid(&t, &t.threads[0]), 100);
  CHECK_EQ(pp_thread_pid(&t, &t.threads[3]), 200);
  CHECK_STR(pp_trace_process_name(&t, 100), "alpha");
  CHECK_STR(pp_trace_process_name(&t, 200), "beta");
  /* the pipeline analysis follows each process's frame 1 on its own */
  CHECK_EQ(a.prof.pipe.nflows, 1);
  CHECK_EQ(a.prof.pipe.flows[0].items, 2);
  CHECK_EQ(a.prof.pipe.flows[0].incomplete, 0);
  /* so do the requests */
  CHECK_EQ(a.prof.req.completed + a.prof.req.warmup, 2);
  CHECK_EQ(a.prof.req.orphans, 0);
  CHECK_EQ(a.prof.req.unfinished, 0);
  char *s = export_mem(pp_export_chrome, &a, NULL);
  json_t *root = parse_or_die(s);
  json_t *evs = check_chrome_common(root, &a);
  static const struct {
    uint32_t pid;
    const char *name;
  } procs[] = {{100, "alpha"}, {200, "beta"}};
  for (size_t k = 0; k < 2; k++) {
    size_t i;
    json_t *e;
    int found = 0;
    json_array_foreach(evs, i, e) {
      if (!strcmp(jstr(e, "ph"), "M") &&
          !strcmp(jstr(e, "name"), "process_name") &&
          json_integer_value(json_object_get(e, "pid")) == procs[k].pid) {
        CHECK_STR(jstr(json_object_get(e, "args"), "name"), procs[k].name);
        found++;
      }
    }
    CHECK_EQ(found, 1);
  }
  /* one chain per process, from source to sink */
  const char *a1 = bind_of(evs, 1001), *a2 = bind_of(evs, 1002);
  const char *b1 = bind_of(evs, 2001), *b2 = bind_of(evs, 2002);
  CHECK(a1 && a2 && b1 && b2);
  CHECK_STR(a1, a2);
  CHECK_STR(b1, b2);
  CHECK(strcmp(a1, b1) != 0);
  json_decref(root);
  free(s);
  /* the summary lists both processes and the process of every thread */
  s = export_mem(pp_export_summary_json, &a, NULL);
  root = parse_or_die(s);
  json_t *ps = json_object_get(root, "processes");
  CHECK_EQ(json_array_size(ps), 2);
  for (size_t k = 0; k < 2; k++) {
    json_t *pk = json_array_get(ps, k);
    CHECK_EQ(json_integer_value(json_object_get(pk, "pid")), procs[k].pid);
    CHECK_STR(jstr(pk, "name"), procs[k].name);
  }
  json_t *ths = json_object_get(root, "threads");
  CHECK_EQ(json_array_size(ths), 4);
  for (size_t k = 0; k < 4; k++)
    CHECK_EQ(json_integer_value(
                 json_object_get(json_array_get(ths, k), "pid")),
             k < 2 ? 100 : 200);
  json_decref(root);
  free(s);
  /* the text report names both */
  s = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&s, &n);
  CHECK(f != NULL);
  CHECK_EQ(pp_report_text(f, &a, NULL), 0);
  fclose(f);
  CHECK_CONTAINS(s, "\nprocesses:      2 (100 alpha, 200 beta)\n");
  free(s);
  pp_analysis_free(&a);
  free_trace(&t);
}

PP_TEST(export_chrome_hostile_names) {
  pp_trace t;
  pp_analysis a = {0};
  memset(&t, 0, sizeof t);
  t.pid = 1;
  const char *raw[] = {"quote\"back\\slash", "new\nline\ttab\r",
                       "ctl\x01\x02\x1f",    "bad\xff\xfe utf8",
                       "over\xC0\xAF",       "surr\xED\xA0\x80",
                       "trunc\xE2\x82",      "ok \xC3\xA9\xF0\x9F\x98\x80"};
  const char *want[] = {"quote\"back\\slash", "new\nline\ttab\r",
                        "ctl\x01\x02\x1f",    "bad" FFFD FFFD " utf8",
                        "over" FFFD FFFD,     "surr" FFFD FFFD FFFD,
                        "trunc" FFFD,         "ok \xC3\xA9\xF0\x9F\x98\x80"};
  size_t n = sizeof raw / sizeof raw[0];
  size_t th = add_thread(&t, 9, "thr\"\xff", 0);
  for (size_t k = 0; k < n; k++) {
    uint32_t l = add_loc(&t, raw[k], PP_KIND_ZONE);
    zone(&t, th, l, (int64_t)k * 10, (int64_t)k * 10 + 5);
  }
  uint32_t c = add_loc(&t, "ctr\"\x7f\x80", PP_KIND_COUNTER);
  add_i(&t, th, 100, c, PPT_EV_COUNTER_SET, -12);
  add_meta(&t, "process_name", "proc\\\"\x01\xc3");
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = export_mem(pp_export_chrome, &a, NULL);
  CHECK(json_valid(s, strlen(s)));
  json_t *root = parse_or_die(s);
  json_t *evs = check_chrome_common(root, &a);
  for (size_t k = 0; k < n; k++)
    CHECK(find_ev(evs, "X", want[k], 0) != NULL);
  json_t *ce = find_ev(evs, "C", "ctr\"\x7f" FFFD, 0);
  CHECK(ce != NULL);
  CHECK_EQ(
      json_integer_value(json_object_get(json_object_get(ce, "args"), "value")),
      -12);
  json_t *tn = find_ev(evs, "M", "thread_name", 0);
  CHECK_STR(jstr(json_object_get(tn, "args"), "name"), "thr\"" FFFD);
  json_t *pn = find_ev(evs, "M", "process_name", 0);
  CHECK_STR(jstr(json_object_get(pn, "args"), "name"), "proc\\\"\x01" FFFD);
  json_decref(root);
  free(s);

  /* the summary and the CSV carry the same names */
  s = export_mem(pp_export_summary_json, &a, NULL);
  CHECK(json_valid(s, strlen(s)));
  root = parse_or_die(s);
  json_t *zs = json_object_get(root, "zones");
  CHECK_EQ(json_array_size(zs), n);
  for (size_t k = 0; k < n; k++) {
    int found = 0;
    size_t i;
    json_t *z;
    json_array_foreach(zs, i, z) found += !strcmp(jstr(z, "name"), want[k]);
    CHECK_EQ(found, 1);
  }
  json_decref(root);
  free(s);
  pp_analysis_free(&a);
  free_trace(&t);
}

#else /* !PP_HAVE_JANSSON: the same traces, weaker checks */

static size_t count_str(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
    n++;
  return n;
}

PP_TEST(export_chrome_flows) {
  pp_trace t;
  pp_analysis a = {0};
  build_flows(&t);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = export_mem(pp_export_chrome, &t, NULL);
  CHECK(json_valid(s, strlen(s)));
  CHECK_EQ(count_str(s, "\"ph\":\"s\""), 2);
  CHECK_EQ(count_str(s, "\"ph\":\"f\""), 2);
  CHECK_EQ(count_str(s, "\"bp\":\"e\""), 2);
  CHECK_EQ(count_str(s, "\"flow_out\":true"), 5);
  CHECK_EQ(count_str(s, "\"flow_in\":true"), 5);
  CHECK_EQ(count_str(s, "\"bind_id\":"), 8);
  CHECK_CONTAINS(s, "\"flow_chains_v2\":3,\"flow_chains_v1\":2");
  free(s);
  pp_analysis_free(&a);
  free_trace(&t);
}

PP_TEST(export_chrome_hostile_names) {
  pp_trace t;
  pp_analysis a = {0};
  memset(&t, 0, sizeof t);
  size_t th = add_thread(&t, 9, "thr\"\xff", 0);
  uint32_t l =
      add_loc(&t, "q\"b\\n\nc\x01 bad\xff\xED\xA0\x80 t\xE2\x82", PP_KIND_ZONE);
  zone(&t, th, l, 0, 5);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = export_mem(pp_export_chrome, &t, NULL);
  CHECK(json_valid(s, strlen(s)));
  CHECK_CONTAINS(s,
                 "\"name\":\"q\\\"b\\\\n\\u000ac\\u0001 bad" FFFD FFFD FFFD FFFD
                 " t" FFFD "\"");
  CHECK_CONTAINS(s, "{\"name\":\"thr\\\"" FFFD "\"}");
  free(s);
  s = export_mem(pp_export_summary_json, &t, NULL);
  CHECK(json_valid(s, strlen(s)));
  free(s);
  pp_analysis_free(&a);
  free_trace(&t);
}

#endif /* PP_HAVE_JANSSON */

/* Without jansson, still check that the chrome output is valid JSON and
 * has the expected pieces. With it, this runs too (cheap). */
PP_TEST(export_chrome_syntax_and_pieces) {
  pp_trace t;
  pp_analysis a = {0};
  build_main(&t);
  add_loc(&t, "we\"ird\\\n\x01\xff", PP_KIND_MARK);
  add_ev(&t, 0, 1450, (uint32_t)t.nlocs - 1, PPT_EV_MARK);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = export_mem(pp_export_chrome, &a, NULL);
  CHECK(json_valid(s, strlen(s)));
  CHECK_CONTAINS(s, "\"traceEvents\":[");
  CHECK_CONTAINS(s, "\"displayTimeUnit\":\"ns\"");
  CHECK_CONTAINS(s, "{\"ph\":\"X\",\"name\":\"frame_loop\",\"cat\":\"zone\","
                    "\"pid\":4242,\"tid\":101,\"ts\":0.000,\"dur\":1.000}");
  CHECK_CONTAINS(s, "\"args\":{\"unclosed\":true}");
  CHECK_CONTAINS(s, "\"name\":\"we\\\"ird\\\\\\u000a\\u0001" FFFD "\"");
  CHECK_CONTAINS(s, "\"name\":\"thread_name\",\"pid\":4242,\"tid\":202,"
                    "\"args\":{\"name\":\"thread 202\"}");
  CHECK_CONTAINS(s, "\"name\":\"queue_depth\",\"pid\":4242,\"tid\":202,"
                    "\"ts\":0.800,\"args\":{\"value\":6}");
  CHECK_CONTAINS(s, "\"flow_out\":true");
  CHECK_CONTAINS(s, "\"flow_in\":true");
  CHECK_CONTAINS(s, "\"dropped_events\":4");
  CHECK_CONTAINS(s, "\"dropped_by_thread\":{\"101\":3,\"202\":1}");
  free(s);
  pp_analysis_free(&a);
  free_trace(&t);
}

/* ---- summary ------------------------------------------------------------ */

PP_TEST(export_summary_json) {
  pp_trace t;
  pp_analysis a = {0};
  build_main(&t);
  add_meta(&t, "process_name", "pipe\"line");
  add_meta(&t, "mode", "trace");
  add_meta(&t, "event_cost_ns", "25");
  add_meta(&t, "writer_cpu_ns", "2000000");
  add_meta(&t, "process_cpu_ns", "500000000");
  /* more instances of decode so percentiles differ */
  uint32_t extra = add_loc(&t, "post", PP_KIND_ZONE);
  for (int k = 0; k < 50; k++)
    zone(&t, 1, extra, 3000 + k * 100, 3000 + k * 100 + 10 + k);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = export_mem(pp_export_summary_json, &a, NULL);
  CHECK(json_valid(s, strlen(s)));
  CHECK_CONTAINS(s, "\"schema\":\"pipeprof.summary\"");
  CHECK_CONTAINS(s, "\"schema_version\":1");
#ifdef PP_HAVE_JANSSON
  const pp_profile *p = &a.prof;
  json_t *root = parse_or_die(s);
  CHECK_STR(jstr(root, "schema"), "pipeprof.summary");
  CHECK_EQ(json_integer_value(json_object_get(root, "schema_version")), 1);
  CHECK_STR(jstr(root, "mode"), "trace");
  json_t *proc = json_object_get(root, "process");
  CHECK_EQ(json_integer_value(json_object_get(proc, "pid")), 4242);
  CHECK_STR(jstr(proc, "name"), "pipe\"line");
  CHECK_EQ(json_integer_value(json_object_get(root, "wall_ns")), p->wall_ns);
  CHECK_EQ_U(json_integer_value(json_object_get(root, "events")), p->events);
  json_t *dr = json_object_get(root, "dropped");
  CHECK_EQ(json_integer_value(json_object_get(dr, "total")), 4);
  json_t *bt = json_object_get(dr, "by_thread");
  CHECK_EQ(json_array_size(bt), 2);
  CHECK_EQ(
      json_integer_value(json_object_get(json_array_get(bt, 0), "dropped")), 3);
  CHECK_EQ(json_integer_value(json_object_get(root, "unclosed_zones")), 1);

  json_t *zs = json_object_get(root, "zones");
  CHECK_EQ(json_array_size(zs), p->nzones);
  for (size_t k = 0; k < p->nzones; k++) {
    const pp_zone_stats *z = &p->zones[k];
    json_t *o = json_array_get(zs, k);
    CHECK_STR(jstr(o, "name"), pp_trace_loc_name(&t, z->loc));
    CHECK_STR(jstr(o, "function"), "fn_main");
    CHECK_STR(jstr(o, "file"), "src/pipe.c");
    CHECK_EQ(json_integer_value(json_object_get(o, "line")),
             t.locs[z->loc].line);
    CHECK_EQ_U(json_integer_value(json_object_get(o, "count")), z->count);
    CHECK_EQ(json_integer_value(json_object_get(o, "total_ns")), z->total_ns);
    CHECK_EQ(json_integer_value(json_object_get(o, "self_ns")), z->self_ns);
    CHECK_EQ(json_integer_value(json_object_get(o, "min_ns")), z->min_ns);
    CHECK_EQ(json_integer_value(json_object_get(o, "max_ns")), z->max_ns);
    CHECK(json_number_value(json_object_get(o, "mean_ns")) == z->mean_ns);
    CHECK(json_number_value(json_object_get(o, "std_ns")) == z->std_ns);
    const char *pk[] = {"p50_ns", "p90_ns", "p95_ns", "p99_ns", "p999_ns"};
    double pv[] = {50, 90, 95, 99, 99.9};
    for (size_t q = 0; q < 5; q++)
      CHECK_EQ_U(json_integer_value(json_object_get(o, pk[q])),
                 pp_hist_percentile(&z->hist, pv[q]));
    CHECK_NEAR(json_number_value(json_object_get(o, "wall_pct")),
               (double)z->total_ns / (double)p->wall_ns * 100.0, 1e-9);
    if (k)
      CHECK_LE(z->total_ns, p->zones[k - 1].total_ns);
  }
  /* post: 50 instances of 10..59 ns -> p50 = 34 (exact in this range) */
  json_t *post = NULL;
  size_t i;
  json_t *o;
  json_array_foreach(zs, i, o) if (!strcmp(jstr(o, "name"), "post")) post = o;
  CHECK(post != NULL);
  CHECK_EQ(json_integer_value(json_object_get(post, "count")), 50);
  CHECK_EQ(json_integer_value(json_object_get(post, "min_ns")), 10);
  CHECK_EQ(json_integer_value(json_object_get(post, "max_ns")), 59);
  CHECK_EQ(json_integer_value(json_object_get(post, "p50_ns")), 34);

  json_t *top = json_object_get(root, "top_self");
  CHECK_EQ(json_array_size(top), 3);
  double share = 0;
  int64_t prev = INT64_MAX;
  json_array_foreach(top, i, o) {
    int64_t self = json_integer_value(json_object_get(o, "self_ns"));
    CHECK_LE(self, prev);
    prev = self;
    share += json_number_value(json_object_get(o, "share_pct"));
  }
  /* post leads (50 zones, 1725 ns): decode's instance that never ended
   * has no measured duration and does not count (pair/zones.h), so decode
   * has only its measured 200 ns */
  size_t best = 0;
  for (size_t k = 1; k < p->nzones; k++)
    if (p->zones[k].self_ns > p->zones[best].self_ns)
      best = k;
  CHECK_STR(pp_trace_loc_name(&t, p->zones[best].loc), "post");
  CHECK_STR(jstr(json_array_get(top, 0), "name"), "post");
  CHECK_EQ(
      json_integer_value(json_object_get(json_array_get(top, 0), "self_ns")),
      1725);
  json_t *dec = NULL;
  json_array_foreach(zs, i, o) if (!strcmp(jstr(o, "name"), "decode")) dec = o;
  CHECK(dec != NULL);
  CHECK_EQ(json_integer_value(json_object_get(dec, "count")), 1);
  CHECK_EQ(json_integer_value(json_object_get(dec, "total_ns")), 200);
  CHECK_STR(jstr(json_array_get(top, 1), "name"), "infer"); /* 900 ns */
  CHECK_GT(share, 0);
  CHECK_LE(share, 100.0 + 1e-9);

  json_t *ths = json_object_get(root, "threads");
  CHECK_EQ(json_array_size(ths), 2);
  for (size_t k = 0; k < 2; k++) {
    json_t *th = json_array_get(ths, k);
    CHECK_EQ_U(json_integer_value(json_object_get(th, "tid")),
               t.threads[k].tid);
    CHECK_STR(jstr(th, "name"), t.threads[k].name);
    CHECK_EQ(json_integer_value(json_object_get(th, "busy_ns")),
             a.threads[k].busy_ns);
    /* from every event, as the text report's threads table */
    CHECK_EQ_U(json_integer_value(json_object_get(th, "zones")),
               a.threads[k].zones_measured);
    CHECK_EQ_U(json_integer_value(json_object_get(th, "events")),
               a.threads[k].events);
    CHECK_EQ_U(json_integer_value(json_object_get(th, "dropped")),
               t.threads[k].dropped);
    CHECK_NEAR(json_number_value(json_object_get(th, "busy_pct")),
               (double)a.threads[k].busy_ns / (double)p->wall_ns * 100, 1e-9);
  }
  /* frame_loop; the decode that never ended is not busy time measured */
  CHECK_EQ(
      json_integer_value(json_object_get(json_array_get(ths, 0), "busy_ns")),
      1000);

  json_t *frs = json_object_get(root, "frames");
  CHECK_EQ(json_array_size(frs), p->nframes);
  CHECK_EQ(p->nframes, 1);
  json_t *f = json_array_get(frs, 0);
  CHECK_STR(jstr(f, "name"), "frame");
  CHECK_EQ(json_integer_value(json_object_get(f, "frames")), 2);
  CHECK(json_number_value(json_object_get(f, "fps")) == p->frames[0].fps);
  CHECK_NEAR(json_number_value(json_object_get(f, "fps")), 1e6, 1e-3);
  CHECK_EQ(json_integer_value(json_object_get(f, "p50_ns")), 1000);
  CHECK_EQ(json_integer_value(json_object_get(f, "max_ns")), 1000);
  CHECK(json_is_number(json_object_get(f, "jitter_ns")));

  json_t *cs = json_object_get(root, "counters");
  CHECK_EQ(json_array_size(cs), p->ncounters);
  for (size_t k = 0; k < p->ncounters; k++) {
    json_t *c = json_array_get(cs, k);
    const pp_counter_stats *cc = &p->counters[k];
    CHECK_STR(jstr(c, "name"), pp_trace_loc_name(&t, cc->loc));
    CHECK_EQ_U(json_integer_value(json_object_get(c, "samples")), cc->samples);
    CHECK(json_number_value(json_object_get(c, "min")) == cc->min);
    CHECK(json_number_value(json_object_get(c, "max")) == cc->max);
    CHECK(json_number_value(json_object_get(c, "mean")) == cc->mean);
    CHECK(json_number_value(json_object_get(c, "last")) == cc->last);
  }
  CHECK_EQ(p->ncounters, 2); /* the two queue_depth sites are one */
  json_t *qd = json_array_get(cs, 0);
  CHECK_STR(jstr(qd, "name"), "queue_depth");
  CHECK_STR(jstr(qd, "type"), "int");
  CHECK_NEAR(json_number_value(json_object_get(qd, "last")), 6, 0);
  CHECK_NEAR(json_number_value(json_object_get(qd, "max")), 7, 0);

  json_t *ov = json_object_get(root, "overhead");
  CHECK_NEAR(json_number_value(json_object_get(ov, "event_cost_ns")), 25, 0);
  CHECK_NEAR(json_number_value(json_object_get(ov, "estimated_ns")),
             25.0 * (double)p->events, 1e-6);
  double busy = (double)(a.threads[0].busy_ns + a.threads[1].busy_ns);
  CHECK_NEAR(json_number_value(json_object_get(ov, "estimated_pct")),
             25.0 * (double)p->events / busy * 100, 1e-9);
  CHECK(json_object_get(ov, "unavailable") == NULL);
  /* Measured costs: the writer's CPU time plus the estimate, as a share of
   * the process's CPU time; no sampler ran. */
  CHECK_NEAR(json_number_value(json_object_get(ov, "writer_cpu_ns")), 2e6, 0);
  CHECK_NEAR(json_number_value(json_object_get(ov, "process_cpu_ns")), 5e8,
             0);
  CHECK(json_object_get(ov, "sampler_cpu_ns") == NULL);
  double total = 25.0 * (double)p->events + 2e6;
  CHECK_NEAR(json_number_value(json_object_get(ov, "total_ns")), total,
             1e-6);
  CHECK_NEAR(
      json_number_value(json_object_get(ov, "total_pct_of_process_cpu")),
      total / 5e8 * 100, 1e-9);
  json_t *rd = json_object_get(root, "reader");
  CHECK(json_is_false(json_object_get(rd, "truncated")));
  CHECK(json_is_integer(json_object_get(rd, "chunks_bad")));
  json_decref(root);
#endif
  free(s);
  pp_analysis_free(&a);
  free_trace(&t);

  /* without a measured event cost the overhead says why it is missing */
  build_main(&t);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  s = export_mem(pp_export_summary_json, &a, NULL);
  CHECK(json_valid(s, strlen(s)));
  CHECK_CONTAINS(s, "\"overhead\":{\"unavailable\":\"event cost not "
                    "recorded\"}");
  CHECK_CONTAINS(s, "\"mode\":null");
  free(s);
  pp_analysis_free(&a);
  free_trace(&t);
}

/* ---- CSV ---------------------------------------------------------------- */

static const char csv_head[] =
    "zone,function,file,line,count,total_ns,self_ns,mean_ns,std_ns,min_ns,"
    "p50_ns,p90_ns,p95_ns,p99_ns,p999_ns,max_ns,wall_pct,rate_per_s\r\n";

/* A name holding a terminal escape (ESC, a C1 control, a byte that is
 * not UTF-8): the CSV has none of them, so printing it with `cat` cannot
 * drive the terminal; printable UTF-8 stays. */
PP_TEST(export_csv_names_are_never_escapes) {
  pp_trace t;
  pp_analysis a = {0};
  build_main(&t);
  uint32_t evil = add_loc(&t, "red\x1b[31m\xc2\x9b" "2J\x9b\x07" "bell",
                         PP_KIND_ZONE);
  uint32_t nice = add_loc(&t, "caf\xc3\xa9 \xe2\x9c\x93", PP_KIND_ZONE);
  zone(&t, 1, evil, 2600, 2700);
  zone(&t, 1, nice, 2700, 2800);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  size_t len;
  char *s = export_mem(pp_export_csv, &a, &len);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    CHECK(c != 0x1b && c != 0x07 && c != 0x9b);
    CHECK(!(c == 0xc2 && i + 1 < len && (unsigned char)s[i + 1] < 0xa0 &&
            (unsigned char)s[i + 1] >= 0x80));
  }
  CHECK_CONTAINS(s, "red?[31m??2J??bell,");
  CHECK_CONTAINS(s, "caf\xc3\xa9 \xe2\x9c\x93,");
  free(s);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(export_csv) {
  pp_trace t;
  pp_analysis a = {0};
  build_main(&t);
  uint32_t odd = add_loc(&t, "a,\"b\"", PP_KIND_ZONE);
  free(t.locs[odd].function);
  t.locs[odd].function = dup_str("multi\nline");
  zone(&t, 1, odd, 2600, 2700);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  size_t len;
  char *s = export_mem(pp_export_csv, &a, &len);
  CHECK(strncmp(s, csv_head, sizeof csv_head - 1) == 0);
  /* rows: count CRLF outside quotes */
  size_t rows = 0;
  int inq = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '"')
      inq = !inq;
    else if (!inq && s[i] == '\r') {
      CHECK_EQ(s[i + 1], '\n');
      rows++;
    }
  }
  CHECK_EQ(inq, 0);
  CHECK_EQ(rows, a.prof.nzones + 1);
  CHECK_EQ(s[len - 1], '\n');
  /* a program's text as the text report shows it: a control character
   * (here a newline) is '?' */
  CHECK_CONTAINS(s, "\r\n\"a,\"\"b\"\"\",multi?line,src/pipe.c,20,1,100,"
                    "100,100,0,100,100,100,100,100,100,100,");
  /* first row: the zone with the largest total, with exact numbers */
  const pp_zone_stats *z0 = &a.prof.zones[0];
  CHECK_STR(pp_trace_loc_name(&t, z0->loc), "frame_loop");
  CHECK_EQ(a.prof.wall_ns, 2200);
  char pct[32], rate[32], row[256];
  CHECK_GT(pp_jsonw_fmt_double(pct, 1000.0 / 2200.0 * 100.0), 0);
  CHECK(strtod(pct, NULL) == 1000.0 / 2200.0 * 100.0);
  /* the zones table's rate: count per second of the wall time */
  CHECK_GT(pp_jsonw_fmt_double(rate, 1.0 / 2200e-9), 0);
  snprintf(row, sizeof row,
           "\r\nframe_loop,fn_main,src/pipe.c,10,1,1000,"
           "800,1000,0,1000,1000,1000,1000,1000,1000,1000,%s,%s\r\n",
           pct, rate);
  CHECK_CONTAINS(s, row);
  free(s);
  pp_analysis_free(&a);
  free_trace(&t);
}

/* ---- empty trace -------------------------------------------------------- */

PP_TEST(export_empty_trace) {
  pp_trace t;
  pp_analysis a = {0};
  memset(&t, 0, sizeof t);
  t.pid = 3;
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = export_mem(pp_export_chrome, &a, NULL);
  CHECK(json_valid(s, strlen(s)));
  CHECK_CONTAINS(s, "\"dropped_by_thread\":{}");
#ifdef PP_HAVE_JANSSON
  json_t *root = parse_or_die(s);
  json_t *evs = check_chrome_common(root, &a);
  CHECK_EQ(json_array_size(evs), 1); /* process_name only */
  json_decref(root);
#endif
  free(s);
  s = export_mem(pp_export_summary_json, &a, NULL);
  CHECK(json_valid(s, strlen(s)));
  CHECK_CONTAINS(s, "\"zones\":[]");
  CHECK_CONTAINS(s, "\"threads\":[]");
#ifdef PP_HAVE_JANSSON
  root = parse_or_die(s);
  CHECK_EQ(json_array_size(json_object_get(root, "zones")), 0);
  CHECK_EQ(json_array_size(json_object_get(root, "top_self")), 0);
  CHECK_EQ(json_integer_value(json_object_get(root, "wall_ns")), 0);
  json_decref(root);
#endif
  free(s);
  size_t len;
  s = export_mem(pp_export_csv, &a, &len);
  CHECK_EQ(len, sizeof csv_head - 1);
  CHECK_STR(s, csv_head);
  free(s);
  pp_analysis_free(&a);
  free_trace(&t);
}

/* Requests and queue items are async slices of their own in the Chrome
 * trace: a request from its begin to its end with an instant at its first
 * token, an item from its push to its pop, matched by category, name and
 * id, so Perfetto draws them (they were not in the trace at all). */
PP_TEST(export_chrome_requests_and_queue_items_as_async_slices) {
  pp_trace t;
  pp_analysis a = {0};
  memset(&t, 0, sizeof t);
  t.pid = 7;
  size_t p = tb_thread(&t, 7, "producer"), c = tb_thread(&t, 8, "consumer");
  uint32_t q = tb_loc(&t, "frames", PP_KIND_QUEUE);
  uint32_t rq = tb_loc(&t, "(request)", 0);
  pp_event *e = tb_ev(&t, p, 1000, rq, PPT_EV_REQ_BEGIN);
  e->v.id = 42;
  e = tb_ev(&t, p, 2000, q, PPT_EV_QUEUE_PUSH);
  e->v.id = 5;
  e->v2 = ppt_zigzag(1);
  e = tb_ev(&t, c, 3000, rq, PPT_EV_REQ_FIRST);
  e->v.id = 42;
  e = tb_ev(&t, c, 4000, q, PPT_EV_QUEUE_POP);
  e->v.id = 5;
  e = tb_ev(&t, c, 9000, rq, PPT_EV_REQ_END);
  e->v.id = 42;
  e->v2 = ppt_zigzag(0);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *s = export_mem(pp_export_chrome, &a, NULL);
  CHECK(json_valid(s, strlen(s)));
  CHECK_CONTAINS(s, "{\"ph\":\"b\",\"name\":\"request\",\"cat\":\"request\","
                    "\"id\":\"000000000000002a\",\"pid\":7,\"tid\":7,\"ts\":0.000}");
  CHECK_CONTAINS(s, "{\"ph\":\"n\",\"name\":\"first token\",\"cat\":"
                    "\"request\",\"id\":\"000000000000002a\",\"pid\":7,\"tid\":8,"
                    "\"ts\":2.000}");
  CHECK_CONTAINS(s, "{\"ph\":\"e\",\"name\":\"request\",\"cat\":\"request\","
                    "\"id\":\"000000000000002a\",\"args\":{\"status\":0},\"pid\":7,"
                    "\"tid\":8,\"ts\":8.000}");
  CHECK_CONTAINS(s, "{\"ph\":\"b\",\"name\":\"frames\",\"cat\":\"queue item\","
                    "\"id\":\"0000000000000005\",\"pid\":7,\"tid\":7,\"ts\":1.000}");
  CHECK_CONTAINS(s, "{\"ph\":\"e\",\"name\":\"frames\",\"cat\":\"queue item\","
                    "\"id\":\"0000000000000005\",\"pid\":7,\"tid\":8,\"ts\":3.000}");
  free(s);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}
