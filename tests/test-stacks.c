/* SPDX-License-Identifier: MIT */
/*
 * CPU stack samples (collect/stacks.h) named by libdw (symbols/symbols.h)
 * on a real program with known hot functions (tests/helpers/hot_funcs.c):
 * the shares of its functions in the samples, the call chains up to main,
 * and what an unusable sampler says.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "collect/stacks.h"
#include "export/export.h"
#include "format/pptrace.h"
#include "internal.h"
#include "results/doc.h"
#include "runner.h"
#include "symbols/symbols.h"
#include "trace_builder.h"

/* What a drain gave, copied. */
typedef struct got {
  struct {
    uint32_t pid, tid;
    uint64_t t;
    uint32_t n;
    uint64_t ips[PP_STACKS_MAX_FRAMES];
    int has_regs;
    uint64_t regs[PP_STACK_NREGS];
    unsigned char *stack; /* with PP_STACKS_USER_STACK */
    size_t stack_len;
  } * s;
  size_t ns, cap;
  pp_symbols *y;
  size_t nmaps, nexec;
} got;

static void on_sample(void *ctx, const pp_stack_sample *s) {
  got *g = ctx;
  if (pp__grow((void **)&g->s, &g->cap, g->ns + 1, sizeof *g->s))
    return;
  memset(&g->s[g->ns], 0, sizeof g->s[g->ns]);
  g->s[g->ns].pid = s->pid;
  g->s[g->ns].tid = s->tid;
  g->s[g->ns].t = s->time_ns;
  g->s[g->ns].n = s->nips;
  memcpy(g->s[g->ns].ips, s->ips, s->nips * sizeof *s->ips);
  if (s->regs) {
    g->s[g->ns].has_regs = 1;
    memcpy(g->s[g->ns].regs, s->regs, sizeof g->s[g->ns].regs);
  }
  if (s->stack_len) {
    g->s[g->ns].stack = malloc(s->stack_len);
    if (g->s[g->ns].stack) {
      memcpy(g->s[g->ns].stack, s->stack, s->stack_len);
      g->s[g->ns].stack_len = s->stack_len;
    }
  }
  g->ns++;
}

static void got_free(got *g) {
  for (size_t i = 0; i < g->ns; i++)
    free(g->s[i].stack);
  pp__free(g->s);
  pp_symbols_free(g->y);
}

static void on_map(void *ctx, const pp_stack_map *m) {
  got *g = ctx;
  g->nmaps++;
  pp_symbols_map(g->y, m->pid, m->start, m->len, m->pgoff, m->path);
}

static void on_comm(void *ctx, uint32_t pid, uint32_t tid, const char *comm,
                    int exec, uint64_t t) {
  (void)pid, (void)tid, (void)comm, (void)t;
  ((got *)ctx)->nexec += exec != 0;
}

/* Run the helper hot_funcs for `seconds` of CPU time under the sampler
 * at hz, as `pipeprof run` starts a program: forked, sampled from its
 * execve(). */
static void sample_hot_funcs(got *g, const char *program, int flags, int hz,
                             const char *seconds) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", pp_test_bindir(), program);
  int go[2];
  CHECK_EQ(pipe(go), 0);
  pid_t kid = fork();
  CHECK(kid >= 0);
  if (kid == 0) {
    close(go[1]);
    char c;
    if (read(go[0], &c, 1) != 1)
      _exit(126);
    int null = open("/dev/null", 1);
    if (null >= 0)
      dup2(null, 1);
    execl(path, path, seconds, (char *)NULL);
    _exit(127);
  }
  close(go[0]);
  char why[256];
  pp_collect_stacks *s = pp_collect_stacks_open(
      kid, hz, PP_STACKS_ENABLE_ON_EXEC | flags, why, sizeof why);
  if (!s) {
    kill(kid, SIGKILL);
    waitpid(kid, NULL, 0);
    PP_FAIL("%s", why);
  }
  CHECK_EQ(write(go[1], "g", 1), 1);
  close(go[1]);
  pp_stacks_cb cb = {on_sample, on_map, on_comm, NULL, g};
  int st = 0;
  for (;;) {
    pp_collect_stacks_drain(s, &cb);
    pid_t w = waitpid(kid, &st, WNOHANG);
    if (w == kid)
      break;
    usleep(20000);
  }
  pp_collect_stacks_drain(s, &cb);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  printf("# %zu samples, %zu mappings, %" PRIu64 " lost\n", g->ns, g->nmaps,
         pp_collect_stacks_lost(s));
  /* the rings hold 240 ms of this program's samples: some are lost only
   * when this thread was kept off the CPU that long */
  CHECK(pp_collect_stacks_lost(s) * 10 < g->ns);
  pp_collect_stacks_close(s);
}

/* Does the sample's chain hold a frame named fn? */
static int has_fn(got *g, size_t i, const char *fn) {
  for (uint32_t k = 0; k < g->s[i].n; k++) {
    const char *name =
        pp_symbols_name(g->y, g->s[i].pid, g->s[i].ips[k], k > 0, NULL);
    if (name && strcmp(name, fn) == 0)
      return 1;
  }
  return 0;
}

PP_TEST(stacks_hot_functions_shares) {
  got g = {0};
  char why[200];
  g.y = pp_symbols_new(why, sizeof why);
  if (!g.y)
    PP_FAIL("%s", why);
  sample_hot_funcs(&g, "pipeprof-test-hot-funcs", 0, 999, "1.5");
  CHECK_EQ(g.nexec, 1);
  CHECK_GT(g.nmaps, 2); /* the program, ld.so, libc at least */
  /* 999 Hz of CPU time over 1.5 s of it: about 1,500, however busy the
   * machine (the clock runs only while the program does) */
  CHECK_GT(g.ns, 1000);
  size_t in_work = 0, in_a = 0, in_b = 0, to_main = 0;
  for (size_t i = 0; i < g.ns; i++) {
    int w = has_fn(&g, i, "work");
    in_work += w;
    in_a += w && has_fn(&g, i, "hot_a");
    in_b += w && has_fn(&g, i, "hot_b");
    to_main += has_fn(&g, i, "main");
  }
  double share_a = (double)in_a / (double)in_work;
  double share_b = (double)in_b / (double)in_work;
  printf("# in work %zu of %zu: hot_a %.1f%%, hot_b %.1f%%; reaching "
         "main %zu\n",
         in_work, g.ns, 100 * share_a, 100 * share_b, to_main);
  CHECK_GT(in_work, g.ns * 9 / 10);
  CHECK_GT(to_main, g.ns * 9 / 10);
  CHECK(share_a > 0.65 && share_a < 0.75);
  CHECK(share_b > 0.25 && share_b < 0.35);
  got_free(&g);
}

/* Without frame pointers the kernel's chains break; unwinding the copied
 * stacks with the DWARF call frame information walks up to main again,
 * through libm (Debian's, built without frame pointers) too. */
PP_TEST(stacks_unwound_without_frame_pointers) {
  got g = {0};
  char why[200];
  g.y = pp_symbols_new(why, sizeof why);
  if (!g.y)
    PP_FAIL("%s", why);
  sample_hot_funcs(&g, "pipeprof-test-hot-funcs-nofp", PP_STACKS_USER_STACK,
                   999, "1.5");
  CHECK_GT(g.ns, 1000);
  size_t fp_main = 0, dw_main = 0, in_work = 0, in_a = 0, in_b = 0, in_m = 0,
         copied = 0;
  for (size_t i = 0; i < g.ns; i++) {
    fp_main += has_fn(&g, i, "main");
    copied += g.s[i].has_regs && g.s[i].stack_len > 0;
    /* the chain from the copy replaces the kernel's */
    g.s[i].n = (uint32_t)pp_symbols_unwind(g.y, g.s[i].pid, g.s[i].regs,
                                           g.s[i].stack, g.s[i].stack_len,
                                           g.s[i].ips, PP_STACKS_MAX_FRAMES);
    int w = has_fn(&g, i, "work");
    dw_main += has_fn(&g, i, "main");
    in_work += w;
    in_a += w && has_fn(&g, i, "hot_a");
    in_b += w && has_fn(&g, i, "hot_b");
    in_m += has_fn(&g, i, "sin") || has_fn(&g, i, "__sin_fma") ||
            has_fn(&g, i, "__sin");
  }
  double share_a = (double)in_a / (double)(in_work ? in_work : 1);
  printf("# %zu samples, %zu with registers and stack\n", g.ns, copied);
  printf("# %zu samples: frame-pointer chains reaching main %zu, unwound "
         "%zu; in work %zu: hot_a %.1f%%, hot_b %.1f%%; in libm's sin %zu\n",
         g.ns, fp_main, dw_main, in_work, 100 * share_a,
         100.0 * (double)in_b / (double)(in_work ? in_work : 1), in_m);
  CHECK_GT(copied, g.ns * 9 / 10);
  CHECK_GT(dw_main, g.ns * 9 / 10);
  CHECK_GT(in_work, g.ns * 9 / 10);
  CHECK(share_a > 0.65 && share_a < 0.75);
  CHECK_GT(in_m, 0);
  got_free(&g);
}

PP_TEST(stacks_bad_arguments_say_why) {
  char why[200];
  CHECK(pp_collect_stacks_open(0, 99, 0, why, sizeof why) == NULL);
  CHECK_CONTAINS(why, "invalid argument");
  CHECK(pp_collect_stacks_open(getpid(), 0, 0, why, sizeof why) == NULL);
  CHECK(pp_collect_stacks_open(getpid(), 10001, 0, why, sizeof why) == NULL);
  /* a process that is not there: the kernel's reason, in words */
  CHECK(pp_collect_stacks_open(0x7ffffff0, 99, 0, why, sizeof why) == NULL);
  CHECK_CONTAINS(why, "CPU stack samples: ");
  CHECK_CONTAINS(why, "not found");
  pp_collect_stacks_close(NULL);
  CHECK_EQ(pp_collect_stacks_drain(NULL, NULL), 0);
}

/* The analysis places samples in the zones open on their thread: a stage
 * "infer" with a nested "conv" zone, samples in conv (under infer too),
 * in infer outside conv, between zones, and on a thread with no zones. */
PP_TEST(stacks_placed_in_zones) {
  pp_trace t = {0};
  uint32_t infer = tb_loc(&t, "infer", PP_KIND_ZONE);
  uint32_t conv = tb_loc(&t, "conv", PP_KIND_ZONE);
  size_t th = tb_thread(&t, 101, "worker");
  tb_ev(&t, th, 1000, infer, PPT_EV_ZONE_BEGIN);
  tb_ev(&t, th, 2000, conv, PPT_EV_ZONE_BEGIN);
  tb_ev(&t, th, 5000, conv, PPT_EV_ZONE_END);
  tb_ev(&t, th, 6000, infer, PPT_EV_ZONE_END);
  tb_ev(&t, th, 9000, infer, PPT_EV_MARK);
  pp_stack_set *s = &t.stacks;
  s->hz = 99;
  snprintf(s->mode, sizeof s->mode, "dwarf");
  int32_t main_ = pp_stack_frame_id(s, "main", "prog");
  int32_t run = pp_stack_frame_id(s, "run", "prog");
  int32_t gemm = pp_stack_frame_id(s, "sgemm_kernel", "libblas.so.3");
  int32_t im2col = pp_stack_frame_id(s, "im2col", "libtorch.so");
  int32_t idle = pp_stack_frame_id(s, "poll", "libc.so.6");
  CHECK(main_ >= 0 && run >= 0 && gemm >= 0 && im2col >= 0 && idle >= 0);
  CHECK_EQ(pp_stack_frame_id(s, "run", "prog"), run); /* stored once */
  CHECK(pp_stack_frame_id(s, "run", NULL) != run);
  int32_t in_gemm[] = {gemm, run, main_}, in_im2col[] = {im2col, run, main_},
          in_run[] = {run, main_}, polling[] = {idle, main_};
  /* in conv: 6 in sgemm, 2 in im2col; in infer only: 2 in run */
  for (int i = 0; i < 6; i++)
    CHECK_EQ(pp_stack_add(s, 7, 101, 2100 + 100 * i, in_gemm, 3), 0);
  for (int i = 0; i < 2; i++)
    CHECK_EQ(pp_stack_add(s, 7, 101, 3000 + 100 * i, in_im2col, 3), 0);
  for (int i = 0; i < 2; i++)
    CHECK_EQ(pp_stack_add(s, 7, 101, 5500 + 100 * i, in_run, 2), 0);
  /* between zones, and a thread that recorded nothing */
  CHECK_EQ(pp_stack_add(s, 7, 101, 7000, polling, 2), 0);
  CHECK_EQ(pp_stack_add(s, 7, 555, 3000, polling, 2), 0);
  CHECK_EQ(pp_stack_add(s, 7, 101, 7000, (int32_t[]){99}, 1), -1);
  pp_analysis a = {0};
  CHECK_EQ(pp_analyze(&t, &a), 0);
  const pp_table *tab = pp_doc_find(a.doc, "stacks");
  CHECK(tab != NULL);
  char *text = tb_report_text(&a);
  printf("%s", strstr(text, "CPU stack samples"));
  /* conv: 6 of 8 in sgemm (75%), 2 in im2col; infer holds conv's 8 and
   * its own 2: sgemm 60%, run 20% self and 100% total; whole program 12
   * samples; between zones 2 */
  CHECK_CONTAINS(text, "CPU stack samples");
  CHECK_CONTAINS(text, "12 samples at 99 Hz per thread of CPU time (dwarf), "
                       "10 inside zones");
  const char *c = strstr(text, "conv");
  CHECK(c != NULL);
  CHECK_CONTAINS(c, "sgemm_kernel");
  CHECK_CONTAINS(c, "75.0%");
  CHECK_CONTAINS(text, "(between zones)");
  CHECK_CONTAINS(text, "(whole program)");
  CHECK_CONTAINS(strstr(text, "infer"), "60.0%");
  free(text);
  /* collapsed stacks: zones first, then frames outermost first, counts;
   * a ';' in a name is not a separator, a line break not a line */
  int32_t odd = pp_stack_frame_id(s, "odd;name\nx", NULL);
  CHECK(odd >= 0);
  CHECK_EQ(pp_stack_add(s, 7, 555, 3100, (int32_t[]){odd, main_}, 2), 0);
  char *folded = NULL;
  size_t flen = 0;
  FILE *f = open_memstream(&folded, &flen);
  CHECK(f != NULL);
  CHECK_EQ(pp_export_stacks_folded(f, &a), 0);
  fclose(f);
  printf("%s", folded);
  CHECK_CONTAINS(folded, "infer;conv;main;run;sgemm_kernel 6\n");
  CHECK_CONTAINS(folded, "infer;conv;main;run;im2col 2\n");
  CHECK_CONTAINS(folded, "infer;main;run 2\n");
  CHECK_CONTAINS(folded, "main;poll 2\n"); /* between zones, two threads */
  CHECK_CONTAINS(folded, "main;odd:name x 1\n");
  CHECK_EQ(pp_test_count_lines(folded), 5);
  free(folded);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* The total share of function fn in zone's rows of the stacks table's
 * text ("<zone>  <function>  <file>  <self>  <total>  <samples>", the
 * zone said on its first row only), or -1 when it has no such row. */
static double zone_fn_total(const char *table, const char *zone,
                            const char *fn) {
  char group[128] = "";
  for (const char *l = table; l && *l;) {
    const char *nl = strchr(l, '\n');
    if (nl == l) /* the table's end */
      break;
    char line[512];
    size_t len = nl ? (size_t)(nl - l) : strlen(l);
    if (len >= sizeof line)
      len = sizeof line - 1;
    memcpy(line, l, len);
    line[len] = '\0';
    char *p = line;
    if (*p != ' ') { /* a zone's first row */
      char *e = p;
      while (*e && !(e[0] == ' ' && e[1] == ' '))
        e++;
      snprintf(group, sizeof group, "%.*s", (int)(e - p), p);
      p = e;
    }
    while (*p == ' ')
      p++;
    size_t fl = strlen(fn);
    if (strcmp(group, zone) == 0 && strncmp(p, fn, fl) == 0 && p[fl] == ' ') {
      p += fl;
      while (*p == ' ')
        p++;
      while (*p && *p != ' ') /* the file */
        p++;
      while (*p == ' ')
        p++;
      while (*p && *p != ' ') /* self, "75.0%" */
        p++;
      return strtod(p, NULL);
    }
    l = nl ? nl + 1 : NULL;
  }
  return -1;
}

/* `pipeprof run --stacks` on the example pipeline, unchanged: its
 * "convolve" zone runs the function convolve, "block_match" block_sad
 * and block_search, so the samples placed there must have them on their
 * stacks (the innermost frame may be a sanitizer's check). */
PP_TEST(stacks_run_places_samples_in_zones) {
  pp_cli_result r = pp_test_cli(
      "run -q --stacks 999 -o '%s/st' -- '%s/pipeprof-example-pipeline' "
      "--frames 40 --quiet",
      pp_test_tmpdir(), pp_test_bindir());
  CHECK_EQ(r.rc, 0);
  const char *t = strstr(r.out, "CPU stack samples");
  CHECK(t != NULL);
  double conv = zone_fn_total(t, "convolve", "convolve");
  double search = zone_fn_total(t, "block_match", "block_search.isra.0");
  if (search < 0)
    search = zone_fn_total(t, "block_match", "block_search");
  printf("# convolve on the stack of the convolve zone's samples: %.1f%%; "
         "block_search of block_match's: %.1f%%\n",
         conv, search);
  CHECK(conv > 90);
  CHECK(search > 90);
  /* stored in the run's trace: reading the directory again gives the
   * same table */
  pp_cli_result again = pp_test_cli("report '%s/st'", pp_test_tmpdir());
  CHECK_EQ(again.rc, 0);
  const char *t2 = strstr(again.out, "CPU stack samples");
  CHECK(t2 != NULL);
  const char *e1 = strstr(t, "\n\n"), *e2 = strstr(t2, "\n\n");
  CHECK(e1 != NULL && e2 != NULL);
  CHECK_EQ(e1 - t, e2 - t2);
  CHECK(memcmp(t, t2, (size_t)(e1 - t)) == 0);
  pp_cli_result_free(&again);
  /* the collapsed stacks beside the report */
  char path[4096], *folded = NULL;
  snprintf(path, sizeof path, "%s/st/stacks.folded", pp_test_tmpdir());
  CHECK_EQ(pp_test_run(&folded, "cat '%s'", path), 0);
  CHECK(strstr(folded, "detect;convolve;") != NULL);
  CHECK_CONTAINS(folded, ";convolve ");
  free(folded);
  CHECK(zone_fn_total(t, "convolve", "block_sad") < 0);
  CHECK_CONTAINS(t, "Hz per thread of CPU time (dwarf)");
  pp_cli_result_free(&r);
  r = pp_test_cli("run -q --stacks 20000 -- true");
  CHECK_EQ(r.rc, 2);
  CHECK_CONTAINS(r.err, "bad --stacks value '20000'");
  pp_cli_result_free(&r);
}

/* Sampling asked for and not possible: `pipeprof run` says why in the
 * trace's metadata, and the table says it. */
PP_TEST(stacks_unavailable_is_said) {
  pp_trace t = {0};
  uint32_t z = tb_loc(&t, "work", PP_KIND_ZONE);
  size_t th = tb_thread(&t, 1, "main");
  tb_ev(&t, th, 1000, z, PPT_EV_ZONE_BEGIN);
  tb_ev(&t, th, 2000, z, PPT_EV_ZONE_END);
  tb_meta(&t, "unavailable.stacks",
          "CPU stack samples: permission denied (perf_event_paranoid=3)");
  pp_analysis a = {0};
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *text = tb_report_text(&a);
  CHECK_CONTAINS(text, "CPU stack samples");
  CHECK_CONTAINS(text, "unavailable: CPU stack samples: permission denied "
                       "(perf_event_paranoid=3)");
  free(text);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* The STACKS chunk: a set encoded and decoded is the same set, frame
 * numbers running on across payloads; damage is refused. */
PP_TEST(stacks_chunk_roundtrip) {
  pp_stack_set s = {0};
  s.hz = 99;
  s.lost = 3;
  snprintf(s.mode, sizeof s.mode, "dwarf");
  int32_t f[3] = {pp_stack_frame_id(&s, "leaf", "a.so"),
                  pp_stack_frame_id(&s, "mid", NULL),
                  pp_stack_frame_id(&s, "main", "prog")};
  for (int i = 0; i < 1000; i++) {
    int32_t chain[3] = {f[i % 3], f[(i + 1) % 3], f[2]};
    CHECK_EQ(pp_stack_add(&s, 7, 100 + (uint64_t)(i % 4), 1000 + i, chain,
                          1 + (uint32_t)(i % 3)),
             0);
  }
  ppt_buf *chunks;
  size_t n;
  CHECK_EQ(pp_stack_set_encode(&s, &chunks, &n), 0);
  CHECK_EQ(n, 1);
  pp_stack_set d = {0};
  /* a frame the reading side had already keeps its id */
  CHECK_EQ(pp_stack_frame_id(&d, "main", "prog"), 0);
  CHECK_EQ(pp_stack_set_decode(&d, chunks[0].data, chunks[0].len), 0);
  pp_stack_set_file_done(&d);
  CHECK_EQ(d.nsamples, s.nsamples);
  CHECK_EQ(d.hz, 99);
  CHECK_EQ(d.lost, 3);
  CHECK_STR(d.mode, "dwarf");
  CHECK_EQ(d.nframes, 3);
  for (size_t i = 0; i < s.nsamples; i++) {
    CHECK_EQ(d.samples[i].n, s.samples[i].n);
    CHECK_EQ(d.samples[i].t, s.samples[i].t);
    CHECK_EQ(d.samples[i].tid, s.samples[i].tid);
    for (uint32_t k = 0; k < s.samples[i].n; k++) {
      const pp_stack_frame *a = &s.frames[s.ids[s.samples[i].first + k]];
      const pp_stack_frame *b = &d.frames[d.ids[d.samples[i].first + k]];
      CHECK_STR(a->name, b->name);
      CHECK((a->module == NULL) == (b->module == NULL));
    }
  }
  /* a sample naming a frame not defined before it, a cut record */
  pp_stack_set bad = {0};
  static const unsigned char undefined[] = {3, 7, 100, 10, 1, 5};
  CHECK_EQ(pp_stack_set_decode(&bad, undefined, sizeof undefined), -1);
  CHECK_EQ(pp_stack_set_decode(&bad, chunks[0].data, chunks[0].len / 2), -1);
  pp_stack_set_free(&bad);
  ppt_buf_free(&chunks[0]);
  pp__free(chunks);
  pp_stack_set_free(&d);
  pp_stack_set_free(&s);
}

/* C++ functions are named as their source says, not as the linker does
 * (the C++ runtime's demangler). */
PP_TEST(stacks_cpp_names_demangled) {
  pp_cli_result r = pp_test_cli(
      "run -q --stacks 999 -o '%s/cpp' -- '%s/pipeprof-test-hot-cpp' 0.4",
      pp_test_tmpdir(), pp_test_bindir());
  CHECK_EQ(r.rc, 0);
  const char *t = strstr(r.out, "CPU stack samples");
  CHECK(t != NULL);
  CHECK_CONTAINS(t, "pp_demo::Kernel<float>::run(double)");
  CHECK(strstr(t, "_ZN7pp_demo") == NULL);
  pp_cli_result_free(&r);
}

/* The advice that names a stage to speed up says where its CPU time
 * goes: x -> y, y busy 95% with its input queue full, and stack samples
 * inside y's zones mostly in one function. */
PP_TEST(stacks_in_the_advice) {
  pp_trace t = {0};
  uint32_t zx = tb_loc(&t, "x", PP_KIND_ZONE);
  uint32_t zy = tb_loc(&t, "y", PP_KIND_ZONE);
  uint32_t q = tb_loc(&t, "x->y", PP_KIND_QUEUE); /* from x to y, 2 slots */
  free(t.locs[q].function);
  free(t.locs[q].file);
  t.locs[q].function = tb_strdup("x");
  t.locs[q].file = tb_strdup("y");
  t.locs[q].line = 2;
  size_t tx = tb_thread(&t, 1, "x"), ty = tb_thread(&t, 2, "y");
  const int64_t ms = 1000000;
  pp_stack_set *s = &t.stacks;
  s->hz = 999;
  int32_t conv = pp_stack_frame_id(s, "im2col", "libtorch.so");
  int32_t main_ = pp_stack_frame_id(s, "main", "prog");
  int32_t other = pp_stack_frame_id(s, "memcpy", "libc.so.6");
  for (int64_t i = 0; i < 20; i++) {
    tb_ev(&t, tx, 10 * i * ms, zx, PPT_EV_ZONE_BEGIN);
    tb_ev(&t, tx, 10 * i * ms + ms, zx, PPT_EV_ZONE_END);
    pp_event *e = tb_ev(&t, tx, 10 * i * ms, q, PPT_EV_QUEUE_PUSH);
    e->v.id = (uint64_t)i;
    e->v2 = ppt_zigzag(2);
    e = tb_ev(&t, ty, 10 * i * ms + 5 * ms, q, PPT_EV_QUEUE_POP);
    e->v.id = (uint64_t)i;
    e->v2 = ppt_zigzag(1);
    tb_ev(&t, ty, 10 * i * ms + ms / 2, zy, PPT_EV_ZONE_BEGIN);
    tb_ev(&t, ty, 10 * i * ms + 10 * ms, zy, PPT_EV_ZONE_END);
    /* in y: 3 samples in im2col, 1 in memcpy, per item */
    for (int k = 0; k < 4; k++) {
      int32_t chain[2] = {k < 3 ? conv : other, main_};
      CHECK_EQ(pp_stack_add(s, 9, 2, 10 * i * ms + 2 * ms + k * ms, chain, 2),
               0);
    }
  }
  pp_analysis a = {0};
  CHECK_EQ(pp_analyze(&t, &a), 0);
  char *text = tb_report_text(&a);
  const char *r = strstr(text, "y bounds throughput");
  CHECK(r != NULL);
  CHECK_CONTAINS(r, "; 75.0% of its CPU stack samples in im2col "
                    "(libtorch.so); rule: stage-bound");
  free(text);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}
