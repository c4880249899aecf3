/* SPDX-License-Identifier: MIT */
/*
 * NVTX injection (src/nvtx/nvtx.c): builds tests/helpers/nvtx_app.c and
 * the shared library tests/helpers/nvtx_lib.c against the header-only
 * NVTX v3 of the CUDA toolkit, runs the program with
 * NVTX_INJECTION64_PATH pointing at the build's libpipeprof.so, and checks
 * the trace: every callback kind lands under the right name (ASCII, wide
 * and registered messages, categories, domains, payload counters, marks,
 * start/end across threads), nesting, thread names, the push/pop levels
 * the program saw, and both modules (program and library) hooked. Also
 * that the program runs unchanged without the tool and with the tool but
 * no session. Skipped when the NVTX headers are not installed.
 *
 * The helpers are compiled with the build's C compiler and sanitizer flags
 * (read from CMakeCache.txt): an instrumented libpipeprof.so cannot be
 * loaded into an uninstrumented program.
 */
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "format/pptrace.h"
#include "model/reader.h"
#include "runner.h"
#include "trace_builder.h"

#define NVTX_INCLUDE "/usr/local/cuda/include"

/* snprintf that fails the test instead of truncating. */
static void fmt(char *buf, size_t size, const char *f, ...)
    __attribute__((format(printf, 3, 4)));
static void fmt(char *buf, size_t size, const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  int n = vsnprintf(buf, size, f, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= size)
    PP_FAIL("string too long: %s", buf);
}

static char *cache_get(const char *key) {
  return pp_test_cmake_cache(key, 0);
}

typedef struct nvtx_env {
  char app[4096]; /* the compiled program */
  char lib[4096]; /* libpipeprof.so under test */
  char dir[4096]; /* scratch directory */
} nvtx_env;

/* Build the helpers; 0 when the NVTX headers are missing (skip). */
static int build_helpers(nvtx_env *e) {
  struct stat st;
  if (stat(NVTX_INCLUDE "/nvtx3/nvToolsExt.h", &st) != 0) {
    printf("# skipped: no NVTX headers\n");
    return 0;
  }
  fmt(e->dir, sizeof e->dir, "%s", pp_test_tmpdir());
  fmt(e->app, sizeof e->app, "%s/nvtx_app", e->dir);
  fmt(e->lib, sizeof e->lib, "%s/libpipeprof.so", pp_test_bindir());
  if (stat(e->lib, &st) != 0)
    PP_FAIL("no %s", e->lib);

  char *cc = cache_get("CMAKE_C_COMPILER");
  char *san = cache_get("PP_SANITIZE");
  char flags[1024];
  if (*san)
    fmt(flags, sizeof flags, "-fsanitize=%s -fno-omit-frame-pointer", san);
  else
    flags[0] = 0;
  const char *src = pp_test_srcdir();
  char *out = NULL;
  int rc = pp_test_run(
      &out,
      "'%s' -std=c11 -D_GNU_SOURCE -O1 -g %s -I'%s' -fPIC -shared "
      "-o '%s/libnvtx_lib.so' '%s/tests/helpers/nvtx_lib.c' -ldl && "
      "'%s' -std=c11 -D_GNU_SOURCE -O1 -g %s -I'%s' -o '%s' "
      "'%s/tests/helpers/nvtx_app.c' -L'%s' -lnvtx_lib -Wl,-rpath,'%s' "
      "-ldl -lpthread",
      *cc ? cc : "cc", flags, NVTX_INCLUDE, e->dir, src, *cc ? cc : "cc", flags,
      NVTX_INCLUDE, e->app, src, e->dir, e->dir);
  if (rc != 0)
    PP_FAIL("cannot build the NVTX helpers (exit %d):\n%s", rc, out ? out : "");
  free(out);
  free(cc);
  free(san);
  return 1;
}

/* The line of out starting with "key " (up to its newline), or fail. */
static void line_of(const char *out, const char *key, char *buf, size_t size) {
  size_t kl = strlen(key);
  for (const char *p = out; p && *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    if (len > kl && strncmp(p, key, kl) == 0 && p[kl] == ' ') {
      fmt(buf, size, "%.*s", (int)len, p);
      return;
    }
    p = nl ? nl + 1 : NULL;
  }
  PP_FAIL("no line \"%s ...\" in the program's output:\n%s", key, out);
}

#define CHECK_LINE(out, key, expect)                                           \
  do {                                                                         \
    char pp_line_[256];                                                        \
    line_of((out), (key), pp_line_, sizeof pp_line_);                          \
    CHECK_STR(pp_line_, expect);                                               \
  } while (0)

/* ---- trace lookups ------------------------------------------------------ */

static const pp_zone_stats *zone_named(const pp_analysis *a, const char *name) {
  const pp_trace *t = a->trace;
  for (size_t i = 0; i < a->prof.nzones; i++)
    if (strcmp(pp_trace_loc_name(t, a->prof.zones[i].loc), name) == 0)
      return &a->prof.zones[i];
  PP_FAIL("no zone \"%s\" in the trace", name);
}

static const pp_counter_stats *counter_named(const pp_analysis *a,
                                             const char *name) {
  const pp_trace *t = a->trace;
  for (size_t i = 0; i < a->prof.ncounters; i++)
    if (strcmp(pp_trace_loc_name(t, a->prof.counters[i].loc), name) == 0)
      return &a->prof.counters[i];
  PP_FAIL("no counter \"%s\" in the trace", name);
}

static size_t marks_named(const pp_trace *t, const char *name) {
  size_t n = 0;
  for (size_t i = 0; i < t->nthreads; i++)
    for (size_t j = 0; j < t->threads[i].nev; j++) {
      const pp_event *e = &t->threads[i].ev[j];
      if (e->type == PPT_EV_MARK &&
          strcmp(pp_trace_loc_name(t, e->loc), name) == 0)
        n++;
    }
  return n;
}

/* The thread that has a zone instance called name. */
static const pp_thread *thread_with_zone(const pp_analysis *a,
                                         const char *name) {
  const pp_trace *t = a->trace;
  for (size_t i = 0; i < t->nthreads; i++)
    for (size_t j = 0; j < a->threads[i].nzones; j++)
      if (strcmp(pp_trace_loc_name(t, a->threads[i].zones[j].loc), name) == 0)
        return &t->threads[i];
  PP_FAIL("no thread has a zone \"%s\"", name);
}

static const pp_zone_inst *zone_inst(const pp_analysis *a, const pp_thread *th,
                                     const char *name) {
  const pp_thread_figures *f = tb_fig(a, th);
  for (size_t j = 0; j < f->nzones; j++)
    if (strcmp(pp_trace_loc_name(a->trace, f->zones[j].loc), name) == 0)
      return &f->zones[j];
  PP_FAIL("no zone \"%s\" on thread %llu", name, (unsigned long long)th->tid);
}

static const pp_range *range_named(const pp_analysis *a, const char *name) {
  const pp_trace *t = a->trace;
  for (size_t i = 0; i < a->nranges; i++)
    if (strcmp(pp_trace_loc_name(t, a->ranges[i].loc), name) == 0)
      return &a->ranges[i];
  PP_FAIL("no range \"%s\" in the trace", name);
}

/* ---- tests -------------------------------------------------------------- */

PP_TEST_T(nvtx_injection_trace, 120) {
  nvtx_env e;
  if (!build_helpers(&e))
    return;
  char trace[4096];
  fmt(trace, sizeof trace, "%s/app.pptrace", e.dir);
  char *out = NULL;
  int rc = pp_test_run(&out,
                       "env PIPEPROF=1 PIPEPROF_OUT='%s' "
                       "NVTX_INJECTION64_PATH='%s' '%s'",
                       trace, e.lib, e.app);
  if (rc != 0)
    PP_FAIL("nvtx_app exit %d:\n%s", rc, out ? out : "");

  if (strstr(out, "push -2 -2 -2"))
    printf("# NVTX found no tool: %s lacks InitializeInjectionNvtx2 or "
           "could not be loaded (static TLS?)\n",
           e.lib);
  /* what NVTX returned to the program: levels per thread and domain */
  CHECK_LINE(out, "push", "push 0 1 2");
  CHECK_LINE(out, "pop", "pop 2 1 0 -1");
  CHECK_LINE(out, "dedup", "dedup 1");
  CHECK_LINE(out, "dompush", "dompush 0 0 1 1");
  CHECK_LINE(out, "dompop", "dompop 1 1 0 0");
  CHECK_LINE(out, "start_id_nonzero", "start_id_nonzero 1");
  /* the library's module was initialised too: it saw a tool */
  CHECK_LINE(out, "lib", "lib 0 0 0 0");
  CHECK_CONTAINS(out, "done");
  free(out);

  pp_trace t;

  pp_analysis a = {0};
  char err[256];
  CHECK_EQ(pp_trace_read_file(trace, &t, err, sizeof err), 0);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK(t.diag.clean_end);
  CHECK_EQ_U(a.prof.dropped, 0);
  CHECK_EQ_U(a.prof.unclosed, 0);
  CHECK_EQ_U(a.prof.unmatched_ends, 0);
  CHECK_STR(pp_trace_meta(&t, "nvtx.injection"), "1");

  /* push/pop: ASCII, wide (UTF-8 in the trace), Ex with a category and a
   * payload, registered strings, domains, domain categories */
  static const char *const zones[] = {"outer",
                                      "wide_\xc3\xa9\xe4\xb8\xad",
                                      "io/inner",
                                      "reg_default",
                                      "dom::reg_msg",
                                      "dom::second",
                                      "plain_in_dom",
                                      "wdom::cat3/wmsg",
                                      "nine/cat_nine",
                                      "in_pworker",
                                      "in_nvtx_self",
                                      "t3_work",
                                      "t3_after",
                                      "lib_outer",
                                      "libdom::lib_inner"};
  for (size_t i = 0; i < sizeof zones / sizeof zones[0]; i++)
    CHECK_EQ_U(zone_named(&a, zones[i])->count, 1);
  CHECK_EQ_U(zone_named(&a, "dom::reg_wide")->count, 3);
  CHECK_GE(zone_named(&a, "io/inner")->total_ns, 900000); /* 1 ms sleep */

  /* nesting on the main thread */
  const pp_thread *main_th = thread_with_zone(&a, "outer");
  const pp_thread_figures *main_thf = tb_fig(&a, main_th);
  CHECK_EQ_U(main_th->tid, t.pid);
  const pp_zone_inst *outer = zone_inst(&a, main_th, "outer");
  const pp_zone_inst *mid = zone_inst(&a, main_th, "wide_\xc3\xa9\xe4\xb8\xad");
  const pp_zone_inst *inner = zone_inst(&a, main_th, "io/inner");
  CHECK_EQ(outer->depth, 0);
  CHECK_EQ(mid->depth, 1);
  CHECK_EQ(inner->depth, 2);
  CHECK_EQ(mid->parent, outer - main_thf->zones);
  CHECK_EQ(inner->parent, mid - main_thf->zones);
  CHECK(inner->start >= mid->start && inner->end <= mid->end);
  /* a default-domain push inside two domain pushes nests under them */
  const pp_zone_inst *second = zone_inst(&a, main_th, "dom::second");
  const pp_zone_inst *plain = zone_inst(&a, main_th, "plain_in_dom");
  CHECK_EQ(plain->parent, second - main_thf->zones);
  CHECK_EQ(plain->depth, 3);
  /* the library's zones are on the main thread too, nested */
  const pp_zone_inst *lo = zone_inst(&a, main_th, "lib_outer");
  const pp_zone_inst *li = zone_inst(&a, main_th, "libdom::lib_inner");
  CHECK_EQ(li->parent, lo - main_thf->zones);

  /* payloads become counters named after the event */
  const pp_counter_stats *c = counter_named(&a, "io/inner.payload");
  CHECK_EQ_U(c->samples, 1);
  CHECK_NEAR(c->last, 42.0, 0);
  CHECK_NEAR(counter_named(&a, "wdom::cat3/wmsg.payload")->last, 1.5, 0);
  CHECK_NEAR(counter_named(&a, "markEx.payload")->last, 2.5, 0);
  CHECK_NEAR(counter_named(&a, "dom::dstart.payload")->last, 7.0, 0);

  /* marks */
  CHECK_EQ_U(marks_named(&t, "markA"), 1);
  CHECK_EQ_U(marks_named(&t, "markW"), 1);
  CHECK_EQ_U(marks_named(&t, "markEx"), 1);
  CHECK_EQ_U(marks_named(&t, "dom::dmark"), 1);

  /* start/end: in a domain, and across threads both ways */
  const pp_thread *pw = thread_with_zone(&a, "in_pworker");
  CHECK_STR(pw->name, "pworker"); /* pthread_setname_np */
  const pp_range *r = range_named(&a, "async_req");
  CHECK_EQ(r->unclosed, 0);
  CHECK_EQ_U(r->tid_start, main_th->tid);
  CHECK_EQ_U(r->tid_end, pw->tid);
  CHECK_GE(r->end - r->start, 1500000); /* the worker waits 2 ms */
  r = range_named(&a, "async_w");
  CHECK_EQ(r->unclosed, 0);
  CHECK_EQ_U(r->tid_start, pw->tid);
  CHECK_EQ_U(r->tid_end, main_th->tid);
  r = range_named(&a, "dom::dstart");
  CHECK_EQ(r->unclosed, 0);
  CHECK_EQ_U(r->tid_start, r->tid_end);
  CHECK_EQ_U(a.prof.ranges_unclosed, 0);
  CHECK_EQ_U(zone_named(&a, "async_req")->count, 1);

  /* thread names given through NVTX: by the thread itself, by another */
  CHECK_STR(thread_with_zone(&a, "in_nvtx_self")->name, "nvtx_self");
  CHECK_STR(thread_with_zone(&a, "t3_work")->name, "named_by_main");
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST_T(nvtx_without_tool_or_session, 120) {
  nvtx_env e;
  if (!build_helpers(&e))
    return;
  /* no tool: NVTX calls are no-ops (push/pop report no tracking) */
  char *out = NULL;
  int rc =
      pp_test_run(&out, "env -u NVTX_INJECTION64_PATH -u PIPEPROF '%s'", e.app);
  if (rc != 0)
    PP_FAIL("nvtx_app without the tool: exit %d:\n%s", rc, out ? out : "");
  CHECK_LINE(out, "push", "push -2 -2 -2");
  CHECK_LINE(out, "start_id_nonzero", "start_id_nonzero 0");
  CHECK_CONTAINS(out, "done");
  free(out);

  /* the tool but no session: nothing recorded, levels still tracked */
  char trace[4096];
  fmt(trace, sizeof trace, "%s/none.pptrace", e.dir);
  rc = pp_test_run(&out,
                   "env -u PIPEPROF PIPEPROF_OUT='%s' "
                   "NVTX_INJECTION64_PATH='%s' '%s'",
                   trace, e.lib, e.app);
  if (rc != 0)
    PP_FAIL("nvtx_app with the tool, no session: exit %d:\n%s", rc,
            out ? out : "");
  CHECK_LINE(out, "push", "push 0 1 2");
  CHECK_LINE(out, "pop", "pop 2 1 0 -1");
  CHECK_LINE(out, "dompush", "dompush 0 0 1 1");
  CHECK_LINE(out, "dompop", "dompop 1 1 0 0");
  CHECK_LINE(out, "start_id_nonzero", "start_id_nonzero 0");
  CHECK_LINE(out, "lib", "lib 0 0 0 0");
  CHECK_CONTAINS(out, "done");
  free(out);
  struct stat st;
  CHECK(stat(trace, &st) != 0);
}
