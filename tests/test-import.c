/* SPDX-License-Identifier: MIT */
/*
 * Importing other tools' profiles (src/import/): the streaming JSON reader
 * and the mapping of torch.profiler (legacy and Kineto) and ONNX Runtime
 * events into the trace model, then through the analysis as any trace.
 * The real torch test records a profile with Debian's python3-torch at test
 * time and compares pipeprof's figures with torch's own key_averages (it
 * skips without torch unless PP_REQUIRE_TORCH=1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze/analyze.h"
#include "model/reader.h"
#include "import/json_events.h"
#include "import/profile.h"
#include "pipeprof.h"
#include "runner.h"
#include "trace_builder.h"

#ifdef PP_HAVE_JANSSON
#include <jansson.h>
#endif

/* Import text into t and analyse it into a (both to free). */
static void import_text(const char *json, pp_trace *t, pp_analysis *a) {
  char err[512] = "";
  if (pp_import_mem((const unsigned char *)json, strlen(json), t, err,
                    sizeof err) != 0)
    PP_FAIL("import failed: %s", err);
  memset(a, 0, sizeof *a);
  CHECK_EQ(pp_analyze(t, a), 0);
}

#ifdef PP_HAVE_JANSSON
/* Import the file at path into t and analyse it into a (both to free);
 * the tests against the tools' own figures (read with jansson). */
static void import_path(const char *path, pp_trace *t, pp_analysis *a) {
  char err[512] = "";
  if (pp_import_file(path, t, err, sizeof err) != 0)
    PP_FAIL("import of %s failed: %s", path, err);
  memset(a, 0, sizeof *a);
  CHECK_EQ(pp_analyze(t, a), 0);
}
#endif

/* The import's error line for text (which must fail). */
static char *import_error(const char *json, int want_rc) {
  pp_trace t;
  static char err[512];
  err[0] = '\0';
  CHECK_EQ(pp_import_mem((const unsigned char *)json, strlen(json), &t, err,
                         sizeof err),
           want_rc);
  return err;
}

static const pp_zone_stats *zone_named(const pp_analysis *a, const char *name) {
  for (size_t i = 0; i < a->prof.nzones; i++)
    if (strcmp(pp_trace_loc_name(a->trace, a->prof.zones[i].loc), name) == 0)
      return &a->prof.zones[i];
  PP_FAIL("no zone \"%s\"", name);
}

/* The shapes of operator name (an imported profile's), or NULL. */
static const pp_op_shapes *shapes_of(const pp_analysis *a, const char *name) {
  const pp_shapes *sh = &a->prof.shapes;
  for (size_t i = 0; i < sh->nops; i++)
    if (strcmp(pp_trace_loc_name(a->trace, sh->ops[i].loc), name) == 0)
      return &sh->ops[i];
  return NULL;
}

/* The row of shapes text shape of op; fails when there is none. */
static const pp_shape_row *shape_row(const pp_op_shapes *op,
                                     const char *shape) {
  for (size_t i = 0; i < op->nrows; i++)
    if (strcmp(op->rows[i].shape, shape) == 0)
      return &op->rows[i];
  PP_FAIL("no input shapes \"%s\"", shape);
}

static int count_event(void *arg, const pp_trace *t, uint32_t thread,
                       const pp_event *e) {
  (void)t, (void)thread, (void)e;
  (*(uint64_t *)arg)++;
  return 0;
}

static void done(pp_trace *t, pp_analysis *a) {
  pp_analysis_free(a);
  pp_trace_free(t);
}

/* What Debian's CPU-only torch writes: a bare array, pid "CPU functions",
 * integer microseconds; nesting comes from time containment only. */
PP_TEST(import_torch_legacy_nesting_and_self_time) {
  const char *json =
      "[{\"name\": \"infer\", \"ph\": \"X\", \"ts\": 100, \"dur\": 50, "
      "\"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}}, "
      "{\"name\": \"aten::conv2d\", \"ph\": \"X\", \"ts\": 100, \"dur\": 30, "
      "\"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}}, "
      "{\"name\": \"aten::empty\", \"ph\": \"X\", \"ts\": 110, \"dur\": 0, "
      "\"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}}, "
      "{\"name\": \"aten::relu\", \"ph\": \"X\", \"ts\": 135, \"dur\": 10, "
      "\"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}}, "
      "{\"name\": \"infer\", \"ph\": \"X\", \"ts\": 200, \"dur\": 20, "
      "\"tid\": 2, \"pid\": \"CPU functions\", \"args\": {}}]";
  pp_trace t;
  pp_analysis a;
  import_text(json, &t, &a);
  CHECK_STR(pp_trace_meta(&t, "import.source"),
            "torch.profiler (legacy autograd export)");
  CHECK_EQ(t.nthreads, 2);
  CHECK_EQ(t.threads[0].tid, 1);
  CHECK_EQ(t.threads[1].tid, 2);
  const pp_zone_stats *infer = zone_named(&a, "infer");
  CHECK_EQ(infer->count, 2);
  CHECK_EQ(infer->total_ns, 70000);
  CHECK_EQ(infer->self_ns, 50000 - 30000 - 10000 + 20000);
  CHECK_EQ(zone_named(&a, "aten::conv2d")->self_ns, 30000);
  CHECK_EQ(zone_named(&a, "aten::empty")->count, 1);
  CHECK_EQ(zone_named(&a, "aten::empty")->total_ns, 0);
  /* the instances nest: conv2d and relu are children of infer */
  const pp_thread_figures *f = &a.threads[0];
  CHECK_EQ(f->nzones, 4);
  CHECK_EQ(f->zones[0].depth, 0);
  CHECK_EQ(f->zones[1].depth, 1);
  CHECK_EQ(f->zones[2].depth, 2); /* empty inside conv2d */
  CHECK_EQ(f->zones[3].depth, 1);
  CHECK_EQ(a.prof.unclosed, 0);
  CHECK_STR(pp_trace_meta(&t, "import.clipped"), "0");
  /* where infer's time goes: the nested zones by self time, and what is
   * left in infer itself; together its total */
  const pp_breakdown *bd = &a.prof.breakdown;
  CHECK_EQ(bd->nstages, 1); /* the only top-level zone with nested ones */
  const pp_breakdown_stage *st = &bd->stages[0];
  CHECK_STR(pp_trace_loc_name(&t, st->loc), "infer");
  CHECK_EQ(st->count, 2);
  CHECK_EQ(st->total_ns, 70000);
  CHECK_EQ(st->self_ns, 30000);
  CHECK_EQ(st->nops, 3);
  CHECK_STR(pp_trace_loc_name(&t, st->ops[0].loc), "aten::conv2d");
  CHECK_EQ(st->ops[0].self_ns, 30000);
  CHECK_EQ(st->ops[0].total_ns, 30000);
  CHECK_STR(pp_trace_loc_name(&t, st->ops[1].loc), "aten::relu");
  CHECK_EQ(st->ops[1].self_ns, 10000);
  CHECK_STR(pp_trace_loc_name(&t, st->ops[2].loc), "aten::empty");
  CHECK_EQ(st->ops[2].count, 1);
  int64_t sum = st->self_ns;
  for (size_t k = 0; k < st->nops; k++)
    sum += st->ops[k].self_ns;
  CHECK_EQ(sum, st->total_ns);
  char *rep = tb_report_text(&a);
  CHECK_CONTAINS(rep, "inside the top-level zones");
  CHECK_CONTAINS(rep, "\ninfer               2  70.0 us     30.0 us / "
                      "42.9%\n");
  /* the nested zones, their top-level zone said once */
  CHECK_CONTAINS(rep, "\ninfer           aten::conv2d      1  30.0 us  "
                      "42.9%  30.0 us\n                aten::relu        1  "
                      "10.0 us  14.3%  10.0 us\n");
  free(rep);
  char *js = tb_summary_json(&a);
  CHECK_CONTAINS(js, "\"breakdown\":{\"stages\":[");
  CHECK_CONTAINS(js, "\"nested\":[{\"name\":\"aten::conv2d\",\"count\":1,"
                     "\"self_ns\":30000,\"self_pct\":42.857142857142854,"
                     "\"total_ns\":30000}");
  free(js);
  done(&t, &a);
}

/* Kineto's JSON: an object whose base time comes after the events,
 * fractional microseconds, thread names, GPU kernels on (device, stream),
 * counters, and phases that are no zones. */
PP_TEST(import_torch_kineto_times_names_gpu_counters) {
  const char *json =
      "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0}],"
      " \"traceEvents\": ["
      "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\","
      " \"pid\": 42, \"tid\": 7, \"ts\": 10.5, \"dur\": 2.25,"
      " \"args\": {\"External id\": 3, \"Input Dims\": [[2, 3], [3, 4]]}},"
      "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"step\","
      " \"pid\": 42, \"tid\": 7, \"ts\": 10, \"dur\": 5},"
      "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm_kernel\","
      " \"pid\": 0, \"tid\": \"stream 7\", \"ts\": 11.0005, \"dur\": 1,"
      " \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 9}},"
      "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 42, \"tid\": 7,"
      " \"args\": {\"name\": \"main\"}},"
      "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 42,"
      " \"args\": {\"name\": \"python3\"}},"
      "{\"ph\": \"C\", \"name\": \"mem\", \"pid\": 42, \"tid\": 7,"
      " \"ts\": 12, \"args\": {\"bytes\": 4096}},"
      "{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"name\": \"x\","
      " \"pid\": 42, \"tid\": 7, \"ts\": 13},"
      "{\"ph\": \"s\", \"cat\": \"ac2g\", \"id\": 9, \"pid\": 42, \"tid\": 7,"
      " \"ts\": 10.5}],"
      " \"traceName\": \"x.json\", \"baseTimeNanoseconds\": 1000000000}";
  pp_trace t;
  pp_analysis a;
  import_text(json, &t, &a);
  CHECK_STR(pp_trace_meta(&t, "import.source"), "torch.profiler (Kineto)");
  CHECK_STR(pp_trace_meta(&t, "process_name"), "python3");
  CHECK_STR(pp_trace_meta(&t, "import.skipped_phases"), "2");
  CHECK_EQ(t.nthreads, 1);
  CHECK_STR(t.threads[0].name, "main");
  CHECK_EQ(t.threads[0].tid, 7);
  CHECK_EQ(t.pid, 42);
  const pp_zone_stats *mm = zone_named(&a, "aten::mm");
  CHECK_EQ(mm->total_ns, 2250);
  CHECK_EQ(zone_named(&a, "step")->self_ns, 5000 - 2250);
  CHECK_EQ(a.prof.t0, 1000000000 + 10000); /* base + 10 us */
  /* the kernel: a GPU zone on device 0, stream 7 (11.0005 us: rounded) */
  CHECK_EQ(t.ngpu, 1);
  CHECK_EQ(t.gpu[0].device, 0);
  CHECK_EQ(t.gpu[0].stream, 7);
  CHECK_EQ(t.gpu[0].start, 1000000000 + 11001);
  CHECK_EQ(t.gpu[0].end - t.gpu[0].start, 1000);
  CHECK_EQ(a.prof.gpu.nzones, 1);
  /* the counter: series "mem bytes" */
  CHECK_EQ(a.prof.ncounters, 1);
  CHECK_STR(pp_trace_loc_name(&t, a.prof.counters[0].loc), "mem bytes");
  CHECK_NEAR(a.prof.counters[0].last, 4096, 0);
  done(&t, &a);
}

/* Kineto with record_shapes: each cpu_op's "Input Dims" groups its calls
 * (as key_averages(group_by_input_shape=True) does), with total and self
 * time per shape; an operator with more shapes than are listed sums the
 * rest as other shapes; the report and the summary JSON show them. */
PP_TEST(import_torch_kineto_input_shapes) {
  char *json = malloc(64 * 1024);
  CHECK(json != NULL);
  size_t n = 0;
#define OP(name, ts, dur, dims)                                                \
  n += (size_t)snprintf(                                                       \
      json + n, 64 * 1024 - n,                                                 \
      "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\","                 \
      " \"pid\": 5, \"tid\": 5, \"ts\": %d, \"dur\": %d,"                      \
      " \"args\": {\"External id\": 1, \"Input Dims\": %s,"                    \
      " \"Input type\": [\"float\"]}},",                                       \
      name, ts, dur, dims)
  n += (size_t)snprintf(json + n, 64 * 1024 - n, "{\"traceEvents\": [");
  /* linear [[2, 8], [4, 8], [4]] twice (30 and 10 us, an addmm of 20 and
   * 6 us inside), once with batch 1 (5 us) */
  OP("aten::linear", 0, 30, "[[2, 8], [4, 8], [4]]");
  OP("aten::addmm", 2, 20, "[[4], [2, 8], [8, 4], [], []]");
  OP("aten::linear", 100, 10, "[[2, 8], [4, 8], [4]]");
  OP("aten::addmm", 101, 6, "[[4], [2, 8], [8, 4], [], []]");
  OP("aten::linear", 200, 5, "[[1, 8], [4, 8], [4]]");
  /* relu with 20 shapes: 16 listed, 4 summed as other shapes */
  for (int i = 0; i < 20; i++) {
    char dims[32];
    snprintf(dims, sizeof dims, "[[%d, 4]]", i + 1);
    OP("aten::relu", 300 + 30 * i, 1 + i, dims);
  }
  /* an op without shapes: not in the table */
  n += (size_t)snprintf(json + n, 64 * 1024 - n,
                        "{\"ph\": \"X\", \"cat\": \"user_annotation\","
                        " \"name\": \"step\", \"pid\": 5, \"tid\": 5,"
                        " \"ts\": 0, \"dur\": 1000}],"
                        " \"baseTimeNanoseconds\": 5000}");
#undef OP
  pp_trace t;
  pp_analysis a;
  import_text(json, &t, &a);
  free(json);
  CHECK_STR(pp_trace_meta(&t, "import.shapes"), "23");
  CHECK_STR(pp_trace_meta(&t, "import.shapes_cut"), "0");
  const pp_shapes *sh = &a.prof.shapes;
  CHECK_EQ(sh->nops, 3);
  CHECK(shapes_of(&a, "step") == NULL);
  /* by total time: linear 45 us, relu 210 us, addmm 26 us */
  CHECK_STR(pp_trace_loc_name(&t, sh->ops[0].loc), "aten::relu");
  CHECK_STR(pp_trace_loc_name(&t, sh->ops[1].loc), "aten::linear");
  CHECK_STR(pp_trace_loc_name(&t, sh->ops[2].loc), "aten::addmm");
  const pp_op_shapes *lin = shapes_of(&a, "aten::linear");
  CHECK_EQ(lin->count, 3);
  CHECK_EQ(lin->total_ns, 45000);
  CHECK_EQ(lin->self_ns, 45000 - 26000);
  CHECK_EQ(lin->nrows, 2);
  /* torch prints input shapes this way */
  CHECK_STR(lin->rows[0].shape, "[[2, 8], [4, 8], [4]]");
  CHECK_EQ(lin->rows[0].count, 2);
  CHECK_EQ(lin->rows[0].total_ns, 40000);
  CHECK_EQ(lin->rows[0].self_ns, 40000 - 26000);
  const pp_shape_row *b1 = shape_row(lin, "[[1, 8], [4, 8], [4]]");
  CHECK_EQ(b1->count, 1);
  CHECK_EQ(b1->self_ns, 5000);
  CHECK_EQ(lin->other_shapes, 0);
  CHECK_EQ(lin->other_count, 0);
  /* the table's self time is the zone table's */
  CHECK_EQ(zone_named(&a, "aten::linear")->self_ns, lin->self_ns);
  const pp_op_shapes *relu = shapes_of(&a, "aten::relu");
  CHECK_EQ(relu->count, 20);
  CHECK_EQ(relu->total_ns, 210000);
  CHECK_EQ(relu->nrows, PP_SHAPES_LISTED);
  CHECK_STR(relu->rows[0].shape, "[[20, 4]]"); /* the longest first */
  CHECK_EQ(relu->other_shapes, 4);
  CHECK_EQ(relu->other_count, 4);
  CHECK_EQ(relu->other_total_ns, (1 + 2 + 3 + 4) * 1000);
  CHECK_EQ(relu->untold, 0);
  char *rep = tb_report_text(&a);
  CHECK_CONTAINS(rep, "operators by input shape");
  CHECK_CONTAINS(rep, "\naten::linear      3  45.0 us  19.0 us       2\n");
  CHECK_CONTAINS(rep, "\naten::linear  [[2, 8], [4, 8], [4]]              2  "
                      "40.0 us  14.0 us  88.9%\n");
  CHECK_CONTAINS(rep, "\naten::relu       20   210 us   210 us      20\n");
  /* relu's 16 listed shapes, then the other 4 summed */
  CHECK_CONTAINS(rep, "\n              [[5, 4]]                           1  "
                      "5.00 us  5.00 us  2.38%\n"
                      "              (4 other shapes)                   4  "
                      "10.0 us  10.0 us  4.76%\n");
  free(rep);
  char *js = tb_summary_json(&a);
  CHECK_CONTAINS(js, "{\"name\":\"aten::linear\",\"count\":3,"
                     "\"total_ns\":45000,\"self_ns\":19000,\"shapes\":2,");
  CHECK_CONTAINS(js, "\"by_shape\":"
                     "[{\"input_shapes\":\"[[2, 8], [4, 8], [4]]\","
                     "\"count\":2,\"total_ns\":40000,\"self_ns\":14000,");
  CHECK_CONTAINS(js, "\"other_shapes\":{\"shapes\":4,\"untold\":0,"
                     "\"count\":4,\"total_ns\":10000,\"self_ns\":10000,");
  /* the other shapes' row of the tables is not one of by_shape's */
  CHECK(strstr(js, "other shapes)") == NULL);
  CHECK_CONTAINS(js, "\"operators_more\":0}");
  free(js);
  done(&t, &a);
}

/* A profile streamed (in time order) and read whole give one shapes
 * table, from every event, whatever the window keeps. */
PP_TEST(import_shapes_same_streamed_or_whole) {
  char path[4096];
  snprintf(path, sizeof path, "%s/shapes-stream.json", pp_test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  fputs("[", f);
  for (int i = 0; i < 400; i++)
    fprintf(f,
            "%s{\"name\": \"infer\", \"ph\": \"X\", \"ts\": %d, "
            "\"dur\": 50, \"tid\": 1, \"pid\": \"CPU functions\"},"
            "{\"name\": \"aten::conv2d\", \"ph\": \"X\", \"ts\": %d, "
            "\"dur\": %d, \"tid\": 1, \"pid\": \"CPU functions\", "
            "\"args\": {\"Input Dims\": [[%d, 3, 8, 8]]}}",
            i ? "," : "", i * 100, i * 100 + 5, 10 + i % 3, 1 + i % 2);
  fputs("]", f);
  fclose(f);
  pp_trace whole, win;
  char err[512];
  CHECK_EQ(pp_import_file(path, &whole, err, sizeof err), 0);
  uint64_t seen = 0;
  pp_import_opts o = {50, count_event, &seen};
  CHECK_EQ(pp_import_file_opts(path, &win, &o, err, sizeof err), 0);
  CHECK_EQ_U(seen, 1600);
  CHECK_LE(win.diag.events_kept, 50);
  CHECK_EQ(whole.nshapes, 2);
  CHECK_EQ(win.nshapes, whole.nshapes);
  for (size_t i = 0; i < whole.nshapes; i++) {
    CHECK_STR(win.shapes[i].shape, whole.shapes[i].shape);
    CHECK_EQ(win.shapes[i].count, whole.shapes[i].count);
    CHECK_EQ(win.shapes[i].total_ns, whole.shapes[i].total_ns);
    CHECK_EQ(win.shapes[i].self_ns, whole.shapes[i].self_ns);
  }
  CHECK_STR(whole.shapes[0].shape, "[[1, 3, 8, 8]]");
  CHECK_EQ(whole.shapes[0].count, 200);
  CHECK_EQ(whole.shapes[0].total_ns + whole.shapes[1].total_ns,
           (int64_t)(134 * 10 + 133 * 11 + 133 * 12) * 1000);
  pp_trace_free(&whole);
  pp_trace_free(&win);
}

/* ONNX Runtime: operators named with their provider, fences left out,
 * nested args (shapes) read as text. */
PP_TEST(import_ort_operators_and_providers) {
  const char *json =
      "[{\"cat\": \"Session\", \"pid\": 9, \"tid\": 9, \"dur\": 100,"
      " \"ts\": 0, \"ph\": \"X\", \"name\": \"model_run\", \"args\": {}},"
      "{\"cat\": \"Node\", \"pid\": 9, \"tid\": 9, \"dur\": 1, \"ts\": 5,"
      " \"ph\": \"X\", \"name\": \"conv1_fence_before\","
      " \"args\": {\"op_name\": \"Conv\"}},"
      "{\"cat\": \"Node\", \"pid\": 9, \"tid\": 9, \"dur\": 40, \"ts\": 6,"
      " \"ph\": \"X\", \"name\": \"conv1_kernel_time\","
      " \"args\": {\"op_name\": \"Conv\", \"provider\":"
      " \"CPUExecutionProvider\", \"input_type_shape\":"
      " [{\"float\": [1, 3, 8, 8]}, {\"float\": [4, 3, 3, 3]}],"
      " \"node_index\": \"0\"}},"
      "{\"cat\": \"Node\", \"pid\": 9, \"tid\": 9, \"dur\": 1, \"ts\": 46,"
      " \"ph\": \"X\", \"name\": \"conv1_fence_after\","
      " \"args\": {\"op_name\": \"Conv\"}},"
      "{\"cat\": \"Node\", \"pid\": 9, \"tid\": 9, \"dur\": 20, \"ts\": 50,"
      " \"ph\": \"X\", \"name\": \"relu_kernel_time\","
      " \"args\": {\"op_name\": \"Relu\", \"provider\":"
      " \"CUDAExecutionProvider\"}}]";
  pp_trace t;
  pp_analysis a;
  import_text(json, &t, &a);
  CHECK_STR(pp_trace_meta(&t, "import.source"), "ONNX Runtime");
  CHECK_STR(pp_trace_meta(&t, "process_name"), "onnxruntime");
  CHECK_STR(pp_trace_meta(&t, "import.ort_fences"), "2");
  CHECK_EQ(zone_named(&a, "Conv [CPU]")->total_ns, 40000);
  CHECK_EQ(zone_named(&a, "Relu [CUDA]")->count, 1);
  CHECK_EQ(zone_named(&a, "model_run")->self_ns, 100000 - 60000);
  CHECK_EQ(a.prof.nzones, 3);
  CHECK_STR(pp_trace_meta(&t, "import.ort.provider_transitions"), "1");
  /* input_type_shape as type[dims] */
  const pp_op_shapes *conv = shapes_of(&a, "Conv [CPU]");
  CHECK(conv != NULL);
  CHECK_EQ(conv->nrows, 1);
  CHECK_STR(conv->rows[0].shape, "float[1, 3, 8, 8], float[4, 3, 3, 3]");
  CHECK_EQ(conv->rows[0].total_ns, 40000);
  CHECK(shapes_of(&a, "Relu [CUDA]") == NULL); /* gave none */
  done(&t, &a);
}

/* Provider transitions and the copies between providers: a made-up
 * profile (no GPU here) as ONNX Runtime writes one for a model split
 * between the CUDA and CPU providers, Memcpy nodes at the borders. */
PP_TEST(import_ort_provider_transitions_and_copies) {
#define NODE(op, pv, ts, dur)                                                  \
  "{\"cat\": \"Node\", \"pid\": 9, \"tid\": 9, \"ph\": \"X\","                 \
  " \"name\": \"" op "_kernel_time\", \"ts\": " #ts ", \"dur\": " #dur         \
  ", \"args\": {\"op_name\": \"" op "\", \"provider\": \"" pv "\"}}"
  const char *json = "[" NODE("Conv", "CPUExecutionProvider", 0, 10) "," NODE(
      "MemcpyFromHost", "CUDAExecutionProvider", 10,
      5) "," NODE("Relu", "CUDAExecutionProvider", 15,
                  3) "," NODE("MemcpyToHost", "CUDAExecutionProvider", 18,
                              7) "," NODE("Softmax", "CPUExecutionProvider", 25,
                                          2) "]";
#undef NODE
  pp_trace t;
  pp_analysis a;
  import_text(json, &t, &a);
  CHECK_STR(pp_trace_meta(&t, "import.ort.provider_transitions"), "2");
  CHECK_STR(pp_trace_meta(&t, "import.ort.copies"), "2");
  CHECK_STR(pp_trace_meta(&t, "import.ort.copy_ns"), "12000");
  CHECK_EQ(zone_named(&a, "MemcpyToHost [CUDA]")->total_ns, 7000);
  char *rep = tb_report_text(&a);
  CHECK_CONTAINS(rep, "providers:      2 (transitions between execution "
                      "providers; 2 copies (Memcpy nodes) taking 12.0 us)\n");
  free(rep);
  char *js = tb_summary_json(&a);
  CHECK_CONTAINS(js, "\"providers\":{\"transitions\":2,\"copies\":2,"
                     "\"copy_ns\":12000}");
  free(js);
  done(&t, &a);
}

/* The first three args of an event as "key=value" lines. */
static int cap_args(void *arg, const pp_jdoc *doc, const pp_jev *e) {
  (void)doc;
  char(*got)[128] = arg;
  for (size_t i = 0; i < e->nargs && i < 3; i++)
    snprintf(got[i], 128, "%.*s=%.*s", (int)e->args[i].key.n, e->args[i].key.s,
             (int)e->args[i].value.n, e->args[i].value.s);
  return 0;
}

PP_TEST(import_json_reader_keeps_nested_args_as_text) {
  const char *json = "[{\"ph\": \"X\", \"name\": \"n\", \"args\": {\"a\":"
                     " [{\"float\": [1, 3]}, {\"k\": \"v\"}], \"b\": 2,"
                     " \"c\": {\"d\": {\"e\": [true, null]}}}}]";
  pp_jdoc doc;
  char err[256];
  char got[3][128] = {"", "", ""};
  CHECK_EQ(pp_jev_read_mem((const unsigned char *)json, strlen(json), cap_args,
                           got, &doc, err, sizeof err),
           0);
  CHECK_EQ(doc.events, 1);
  pp_jdoc_free(&doc);
  CHECK_STR(got[0], "a=[{\"float\":[1,3]},{\"k\":\"v\"}]");
  CHECK_STR(got[1], "b=2");
  CHECK_STR(got[2], "c={\"d\":{\"e\":[true,null]}}");
}

/* Begin/end pairs, one never ended, an end with no begin, and an event
 * that overlaps its parent without nesting. */
PP_TEST(import_begin_end_unclosed_and_overlap) {
  const char *json =
      "[{\"ph\": \"B\", \"name\": \"outer\", \"pid\": \"CPU functions\","
      " \"tid\": 1, \"ts\": 0},"
      "{\"ph\": \"X\", \"name\": \"a\", \"pid\": \"CPU functions\","
      " \"tid\": 1, \"ts\": 10, \"dur\": 20},"
      "{\"ph\": \"X\", \"name\": \"b\", \"pid\": \"CPU functions\","
      " \"tid\": 1, \"ts\": 20, \"dur\": 30},"
      "{\"ph\": \"E\", \"pid\": \"CPU functions\", \"tid\": 1, \"ts\": 60},"
      "{\"ph\": \"E\", \"pid\": \"CPU functions\", \"tid\": 1, \"ts\": 61},"
      "{\"ph\": \"B\", \"name\": \"open\", \"pid\": \"CPU functions\","
      " \"tid\": 1, \"ts\": 70},"
      "{\"ph\": \"X\", \"name\": \"c\", \"pid\": \"CPU functions\","
      " \"tid\": 1, \"ts\": 80, \"dur\": 5}]";
  pp_trace t;
  pp_analysis a;
  import_text(json, &t, &a);
  CHECK_STR(pp_trace_meta(&t, "import.stray_ends"), "1");
  CHECK_STR(pp_trace_meta(&t, "import.unclosed"), "1");
  CHECK_STR(pp_trace_meta(&t, "import.clipped"), "1");
  CHECK_EQ(zone_named(&a, "outer")->total_ns, 60000);
  CHECK_EQ(zone_named(&a, "b")->total_ns, 10000);    /* clipped to a's end */
  CHECK_EQ(zone_named(&a, "open")->total_ns, 15000); /* to the last event */
  CHECK_EQ(a.prof.unclosed, 0);
  CHECK_EQ(a.prof.unmatched_ends, 0);
  done(&t, &a);
}

PP_TEST(import_refuses_what_is_no_profile) {
  CHECK_CONTAINS(import_error("{\"traceEvents\": [{\"ph\": \"X\", \"name\":"
                              " \"a\", \"ts\": 1, \"dur\": 2, \"pid\": 1,"
                              " \"tid\": 1}]}",
                              -1),
                 "not a torch.profiler or ONNX Runtime profile");
  CHECK_CONTAINS(import_error("[{\"ph\": \"X\",", -1), "malformed JSON");
  CHECK_CONTAINS(import_error("", -1), "malformed JSON");
  CHECK_CONTAINS(import_error("5", -1), "not a torch.profiler");
  CHECK_CONTAINS(import_error("[1, 2] 3", -1), "malformed JSON");
  CHECK_CONTAINS(import_error("[{\"ph\": \"X\", \"name\": \"\xff\"}]", -1),
                 "malformed JSON");
  /* bad times are left out and counted, the rest imports */
  pp_trace t;
  pp_analysis a;
  import_text("[{\"ph\": \"X\", \"name\": \"a\", \"ts\": \"x\","
              " \"pid\": \"CPU functions\", \"tid\": 1},"
              "{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1e3, \"dur\": 1,"
              " \"pid\": \"CPU functions\", \"tid\": 1}]",
              &t, &a);
  CHECK_STR(pp_trace_meta(&t, "import.bad_times"), "1");
  CHECK_EQ(zone_named(&a, "a")->count, 1);
  CHECK_EQ(a.prof.t0, 1000000);
  done(&t, &a);
  /* a name past the field bound is cut, and the cut is counted */
  size_t big = PP_JEV_TEXT_MAX + 100;
  char *json = malloc(big + 200);
  CHECK(json != NULL);
  int n = sprintf(json, "[{\"ph\": \"X\", \"pid\": \"CPU functions\","
                        " \"tid\": 1, \"ts\": 1, \"dur\": 1, \"name\": \"");
  memset(json + n, 'x', big);
  strcpy(json + n + big, "\"}]");
  import_text(json, &t, &a);
  CHECK_STR(pp_trace_meta(&t, "import.fields_cut"), "1");
  CHECK_EQ(strlen(pp_trace_loc_name(&t, a.prof.zones[0].loc)), PP_JEV_TEXT_MAX);
  done(&t, &a);
  free(json);
}

PP_TEST(import_cli_errors_are_one_line) {
  char path[4096];
  snprintf(path, sizeof path, "%s/other.json", pp_test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  fputs("{\"traceEvents\": []}\n", f);
  fclose(f);
  pp_cli_result r = pp_test_cli("report '%s'", path);
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "not a torch.profiler or ONNX Runtime");
  pp_cli_result_free(&r);
  r = pp_test_cli("export --format chrome '%s' -o -", path);
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "not a torch.profiler or ONNX Runtime");
  pp_cli_result_free(&r);
}

/* ---- a real torch.profiler trace ---------------------------------------- */

/* Record a trace of tests/import/torch/make_trace.py's loop (4
 * iterations) with Debian's torch, and torch's own key_averages beside
 * it: 0, or 1 when torch is missing (then the test skips, or fails with
 * PP_REQUIRE_TORCH=1). */
static int record_torch(const char *trace, const char *expect) {
  const char *py = getenv("PP_PYTHON");
  if (!py || !*py)
    py = "/usr/bin/python3";
  char *out = NULL;
  if (pp_test_run(&out, "'%s' -c 'import torch' 2>&1", py) != 0) {
    const char *req = getenv("PP_REQUIRE_TORCH");
    if (req && strcmp(req, "1") == 0)
      PP_FAIL("torch is needed and PP_REQUIRE_TORCH=1 (apt-get install "
              "python3-torch): %s",
              out ? out : "");
    printf("# skipped: torch unavailable\n");
    free(out);
    return 1;
  }
  free(out);
  out = NULL;
  int rc = pp_test_run(&out,
                       "'%s' '%s/tests/import/torch/make_trace.py' '%s' "
                       "--iters 4 --expect '%s' 2>&1",
                       py, pp_test_srcdir(), trace, expect);
  if (rc != 0)
    PP_FAIL("make_trace.py exit %d:\n%s", rc, out ? out : "");
  free(out);
  return 0;
}

#ifdef PP_HAVE_JANSSON
/* The imported trace's figures are torch's own (expect: key_averages
 * grouped by input shape): per operator name, the calls and total CPU time
 * of its rows add up to the zone's count and total (both whole
 * microseconds; 1 us per clipped child apart), and every name is a zone.
 * Self time is not compared: torch's own (self_cpu_time_total) goes
 * negative when its whole-microsecond rounding lets children outlast
 * their parent, and it assigns children differently at equal times.
 * pipeprof's nests by time containment: never negative, and the self
 * times add up to the threads' busy time. */
static void check_torch(const char *trace, const char *expect,
                        pp_trace *t, pp_analysis *a) {
  json_error_t jerr;
  json_t *root = json_load_file(expect, 0, &jerr);
  if (!root)
    PP_FAIL("%s: %s", expect, jerr.text);
  import_path(trace, t, a);
  json_t *rows = json_object_get(root, "key_averages");
  CHECK_GT(json_array_size(rows), 10);
  size_t i;
  json_t *row;
  json_array_foreach(rows, i, row)
      zone_named(a, json_string_value(json_object_get(row, "name")));
  int64_t self_sum = 0, busy = 0;
  for (size_t z = 0; z < a->prof.nzones; z++) {
    const pp_zone_stats *zs = &a->prof.zones[z];
    const char *name = pp_trace_loc_name(t, zs->loc);
    int64_t calls = 0;
    double total = 0;
    json_array_foreach(rows, i, row) {
      if (strcmp(json_string_value(json_object_get(row, "name")), name))
        continue;
      calls += json_integer_value(json_object_get(row, "calls"));
      total += json_number_value(json_object_get(row, "cpu_time_total_us"));
    }
    CHECK_EQ(zs->count, (uint64_t)calls);
    CHECK_NEAR((double)zs->total_ns, total * 1000.0, 1000.0 * (double)calls);
    CHECK_GE(zs->self_ns, 0);
    self_sum += zs->self_ns;
  }
  CHECK_GT(a->prof.nzones, 10);
  for (size_t k = 0; k < a->nthreads; k++)
    busy += a->threads[k].busy_ns;
  CHECK_EQ(self_sum, busy);
  json_decref(root);
}
#endif

/* A trace recorded now by Debian's torch: its figures are torch's own,
 * and the CLI names the source. */
PP_TEST_T(import_real_torch_trace_matches_key_averages, 120) {
  char trace[4096], expect[4096];
  snprintf(trace, sizeof trace, "%s/torch.json", pp_test_tmpdir());
  snprintf(expect, sizeof expect, "%s/torch-expect.json", pp_test_tmpdir());
  if (record_torch(trace, expect))
    return;
#ifdef PP_HAVE_JANSSON
  pp_trace t;
  pp_analysis a;
  check_torch(trace, expect, &t, &a);
  CHECK_EQ(zone_named(&a, "infer")->count, 4);
  CHECK_EQ(zone_named(&a, "postprocess")->count, 4);
  done(&t, &a);
#endif
  /* the CLI names the source in the report and the summary JSON */
  pp_cli_result r = pp_test_cli("report '%s'", trace);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "imported from:  torch.profiler (legacy autograd "
                        "export)");
  CHECK_CONTAINS(r.out, "aten::conv2d");
  pp_cli_result_free(&r);
  r = pp_test_cli("export --format json '%s' -o -", trace);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "\"source\":\"torch.profiler (legacy autograd "
                        "export)\"");
  pp_cli_result_free(&r);
  r = pp_test_cli("export --format chrome '%s' -o -", trace);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "\"name\":\"infer\"");
  pp_cli_result_free(&r);
  r = pp_test_cli("diff '%s' '%s'", trace, trace);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "aten::conv2d");
  pp_cli_result_free(&r);
}

/* ---- real ONNX Runtime profiles -------------------------------------------
 */

#ifdef PP_HAVE_JANSSON
/* ONNX Runtime's input_type_shape ([{"float": [1, 3]}, ...]) written as
 * the importer shows it ("float[1, 3], ..."), from the parsed JSON. */
static void ort_shape_text(json_t *its, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  size_t i;
  json_t *in;
  json_array_foreach(its, i, in) {
    const char *type;
    json_t *dims;
    json_object_foreach(in, type, dims) {
      n += (size_t)snprintf(buf + n, len - n, "%s%s[", i ? ", " : "", type);
      size_t k;
      json_t *d;
      json_array_foreach(dims, k, d) {
        n += (size_t)snprintf(buf + n, len - n, "%s%lld", k ? ", " : "",
                              (long long)json_integer_value(d));
      }
      n += (size_t)snprintf(buf + n, len - n, "]");
    }
  }
  if (!n)
    snprintf(buf, len, "(no inputs)");
}

/* The operator figures of an ONNX Runtime profile, computed here from its
 * JSON (jansson) as the importer should: per "<op_name> [<provider less
 * ExecutionProvider>]", the count and summed dur of the Node events, and
 * the count of model_run events; per operator and input shapes, the count
 * and summed dur. Then the import's zones and shapes must be those. */
static void check_ort_profile(const char *path) {
  json_error_t jerr;
  json_t *root = json_load_file(path, 0, &jerr);
  if (!root)
    PP_FAIL("%s: %s", path, jerr.text);
  CHECK(json_is_array(root));
  typedef struct op {
    char name[160];
    uint64_t count;
    int64_t total_ns;
  } op;
  op ops[64];
  size_t nops = 0;
  typedef struct shp {
    char op[160], shape[512];
    uint64_t count;
    int64_t total_ns;
  } shp;
  static shp shps[256];
  size_t nshps = 0;
  uint64_t runs = 0;
  size_t i;
  json_t *e;
  json_array_foreach(root, i, e) {
    const char *cat = json_string_value(json_object_get(e, "cat"));
    const char *name = json_string_value(json_object_get(e, "name"));
    int64_t dur = json_integer_value(json_object_get(e, "dur"));
    if (cat && name && !strcmp(cat, "Session") && !strcmp(name, "model_run"))
      runs++;
    json_t *args = json_object_get(e, "args");
    const char *opn = json_string_value(json_object_get(args, "op_name"));
    const char *pv = json_string_value(json_object_get(args, "provider"));
    if (!cat || strcmp(cat, "Node") != 0 || !opn || !pv)
      continue;
    char key[160];
    size_t pn = strlen(pv);
    if (pn > 17 && !strcmp(pv + pn - 17, "ExecutionProvider"))
      pn -= 17;
    snprintf(key, sizeof key, "%s [%.*s]", opn, (int)pn, pv);
    size_t k = 0;
    while (k < nops && strcmp(ops[k].name, key) != 0)
      k++;
    if (k == nops) {
      CHECK_LT(nops, 64);
      snprintf(ops[nops].name, sizeof ops[nops].name, "%s", key);
      ops[nops].count = 0;
      ops[nops++].total_ns = 0;
    }
    ops[k].count++;
    ops[k].total_ns += dur * 1000;
    char text[512];
    ort_shape_text(json_object_get(args, "input_type_shape"), text,
                   sizeof text);
    size_t m = 0;
    while (m < nshps &&
           (strcmp(shps[m].op, key) != 0 || strcmp(shps[m].shape, text) != 0))
      m++;
    if (m == nshps) {
      CHECK_LT(nshps, 256);
      snprintf(shps[m].op, sizeof shps[m].op, "%s", key);
      snprintf(shps[m].shape, sizeof shps[m].shape, "%s", text);
      shps[m].count = 0;
      shps[m].total_ns = 0;
      nshps++;
    }
    shps[m].count++;
    shps[m].total_ns += dur * 1000;
  }
  json_decref(root);
  CHECK_GT(nops, 3);
  CHECK_GT(runs, 0);
  pp_trace t;
  pp_analysis a;
  import_path(path, &t, &a);
  CHECK_STR(pp_trace_meta(&t, "import.source"), "ONNX Runtime");
  for (size_t k = 0; k < nops; k++) {
    const pp_zone_stats *z = zone_named(&a, ops[k].name);
    CHECK_EQ(z->count, ops[k].count);
    CHECK_EQ(z->total_ns, ops[k].total_ns);
  }
  CHECK_EQ(zone_named(&a, "model_run")->count, runs);
  CHECK_STR(pp_trace_meta(&t, "import.clipped"), "0");
  /* every (operator, input shapes) with its calls and time; the shapes
   * of an operator add up to its zone (every node gives shapes) */
  CHECK_GT(nshps, nops);
  size_t rows = 0;
  for (size_t k = 0; k < nshps; k++) {
    const pp_op_shapes *o = shapes_of(&a, shps[k].op);
    if (!o)
      PP_FAIL("no shapes for %s", shps[k].op);
    const pp_shape_row *r = shape_row(o, shps[k].shape);
    CHECK_EQ(r->count, shps[k].count);
    CHECK_EQ(r->total_ns, shps[k].total_ns);
  }
  for (size_t k = 0; k < a.prof.shapes.nops; k++) {
    const pp_op_shapes *o = &a.prof.shapes.ops[k];
    const pp_zone_stats *z = pp_profile_zone(&a, o->loc);
    CHECK_EQ(o->other_shapes, 0);
    CHECK_EQ(o->count, z->count);
    CHECK_EQ(o->total_ns, z->total_ns);
    CHECK_EQ(o->self_ns, z->self_ns);
    rows += o->nrows;
  }
  CHECK_EQ(rows, nshps);
  CHECK_EQ(a.prof.shapes.nops, nops);
  done(&t, &a);
}
#endif

/* The golden profiles written by onnxruntime-node (tests/fixtures/ort). */
PP_TEST(import_ort_golden_profiles) {
#ifdef PP_HAVE_JANSSON
  static const char *const files[] = {"cnn-basic-seq.json",
                                      "attn-all-parallel.json",
                                      "cnn-basic-seq-ort1.24.3.json"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/ort/%s", pp_test_srcdir(),
             files[i]);
    check_ort_profile(path);
  }
#else
  printf("# skipped: built without jansson\n");
#endif
}

/* A profile written now by a real ONNX Runtime (the npm package
 * onnxruntime-node, installed into the build folder) over a model exported
 * with torch.onnx.export: tests/import/ort/make_profile.sh. Skipped when
 * node, npm, the registry or torch is missing, unless PP_REQUIRE_ORT=1. */
PP_TEST_T(import_real_ort_profile, 300) {
#ifdef PP_HAVE_JANSSON
  const char *req = getenv("PP_REQUIRE_ORT");
  int required = req && strcmp(req, "1") == 0;
  char out[4096], work[4096];
  snprintf(out, sizeof out, "%s/ort-profile.json", pp_test_tmpdir());
  snprintf(work, sizeof work, "%s/ort-work", pp_test_bindir());
  char *log = NULL;
  int rc =
      pp_test_run(&log,
                  "'%s/tests/import/ort/make_profile.sh' %s --runs 3 "
                  "'%s' '%s' 2>&1",
                  pp_test_srcdir(), required ? "" : "--allow-skip", out, work);
  if (rc != 0)
    PP_FAIL("make_profile.sh exit %d:\n%s", rc, log ? log : "");
  if (log && strstr(log, "skipped:")) {
    printf("# %s", strstr(log, "skipped:"));
    free(log);
    return;
  }
  free(log);
  check_ort_profile(out);
  pp_cli_result r = pp_test_cli("report '%s'", out);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "imported from:  ONNX Runtime");
  CHECK_CONTAINS(r.out, "Conv [CPU]");
  pp_cli_result_free(&r);
#else
  printf("# skipped: built without jansson\n");
#endif
}

/* The golden torch 1.13 trace (tests/fixtures/torch), against the
 * key_averages torch printed in the same run, grouped there by input
 * shapes: per operator name, the calls and total CPU time add up to the
 * zone's count and total (1 us per clipped child apart). */
PP_TEST(import_torch_golden_trace) {
#ifdef PP_HAVE_JANSSON
  char path[4096], ka[4096];
  snprintf(path, sizeof path,
           "%s/tests/fixtures/torch/cnn-legacy-torch1.13.json",
           pp_test_srcdir());
  snprintf(ka, sizeof ka,
           "%s/tests/fixtures/torch/cnn-legacy-torch1.13.key_averages.json",
           pp_test_srcdir());
  pp_trace t;
  pp_analysis a;
  check_torch(path, ka, &t, &a);
  /* recorded with record_shapes=True, but torch 1.13's legacy export
   * writes no args: no shapes to show, and no section says otherwise */
  CHECK_EQ(a.prof.shapes.nops, 0);
  CHECK_STR(pp_trace_meta(&t, "import.shapes"), "0");
  char *rep = tb_report_text(&a);
  CHECK(strstr(rep, "operators by input shape") == NULL);
  free(rep);
  done(&t, &a);
#else
  printf("# skipped: built without jansson\n");
#endif
}

/* A profile whose events come in time order streams through the figures
 * as the CLI reads it, keeping a window of events for the details: the
 * figures are those of the whole import, the events stored are bounded. */
PP_TEST(import_streams_with_a_window_and_same_figures) {
  char path[4096];
  snprintf(path, sizeof path, "%s/stream-torch.json", pp_test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  fputs("[", f);
  for (int i = 0; i < 3000; i++) {
    long ts = i * 100L;
    fprintf(f,
            "%s{\"name\": \"infer\", \"ph\": \"X\", \"ts\": %ld, "
            "\"dur\": 60, \"tid\": %d, \"pid\": \"CPU functions\"},",
            i ? " " : "", ts, 1 + i % 2);
    fprintf(f,
            "{\"name\": \"aten::conv2d\", \"ph\": \"X\", \"ts\": %ld, "
            "\"dur\": %d, \"tid\": %d, \"pid\": \"CPU functions\"},",
            ts + 5, 10 + i % 7, 1 + i % 2);
    fprintf(f,
            "{\"name\": \"aten::relu\", \"ph\": \"X\", \"ts\": %ld, "
            "\"dur\": 3, \"tid\": %d, \"pid\": \"CPU functions\"}",
            ts + 30, 1 + i % 2);
    fputs(i + 1 < 3000 ? "," : "]", f);
  }
  fclose(f);
  pp_cli_result all = pp_test_cli("export --format json --details all '%s' "
                                  "-o -",
                                  path);
  pp_cli_result win = pp_test_cli("export --format json --details 500 '%s' "
                                  "-o -",
                                  path);
  CHECK_EQ(all.rc, 0);
  CHECK_EQ(win.rc, 0);
  /* the zones' figures are the same, from every event */
  const char *za = strstr(all.out, "\"zones\":["),
             *zw = strstr(win.out, "\"zones\":[");
  const char *ea = za ? strstr(za, "\"top_self\"") : NULL,
             *ew = zw ? strstr(zw, "\"top_self\"") : NULL;
  CHECK(za && zw && ea && ew);
  CHECK_EQ(ea - za, ew - zw);
  CHECK(memcmp(za, zw, (size_t)(ea - za)) == 0);
  CHECK_CONTAINS(za, "\"name\":\"infer\"");
  CHECK_CONTAINS(all.out, "\"events_read\":18000,\"events_kept\":18000");
  CHECK_CONTAINS(win.out, "\"events_read\":18000,\"events_kept\":");
  CHECK(strstr(win.out, "\"events_kept\":18000") == NULL);
  pp_cli_result_free(&all);
  pp_cli_result_free(&win);
  /* the same through the library: every event handed over, at most the
   * window stored */
  pp_trace t;
  char err[512];
  uint64_t seen = 0;
  pp_import_opts o = {500, count_event, &seen};
  CHECK_EQ(pp_import_file_opts(path, &t, &o, err, sizeof err), 0);
  CHECK_EQ_U(seen, 18000);
  CHECK_EQ_U(t.diag.events, 18000);
  CHECK(t.diag.events_kept <= 500 && t.diag.events_kept > 0);
  CHECK(t.diag.first_unkept_ns < INT64_MAX);
  pp_trace_free(&t);
  /* events out of time order on a thread cannot stream: refused, and
   * read whole they import */
  snprintf(path, sizeof path, "%s/unordered.json", pp_test_tmpdir());
  f = fopen(path, "w");
  CHECK(f != NULL);
  fputs("[{\"name\": \"b\", \"ph\": \"X\", \"ts\": 50, \"dur\": 1,"
        " \"tid\": 1, \"pid\": \"CPU functions\"},"
        " {\"name\": \"a\", \"ph\": \"X\", \"ts\": 10, \"dur\": 1,"
        " \"tid\": 1, \"pid\": \"CPU functions\"}]",
        f);
  fclose(f);
  CHECK_EQ(pp_import_file_opts(path, &t, &o, err, sizeof err),
           PP_IMPORT_UNORDERED);
  CHECK_EQ(pp_import_file(path, &t, err, sizeof err), 0);
  CHECK_EQ(t.threads[0].nev, 4);
  CHECK_EQ(t.threads[0].ev[0].ts, 10000);
  pp_trace_free(&t);
  pp_cli_result r = pp_test_cli("report '%s'", path);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "events:         4\n");
  pp_cli_result_free(&r);
}

/* ---- merging a profile into a pipeprof trace (--with) ----------------- */

static int64_t clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A pipeprof trace at path recorded here: zone "outer" around a
 * realtime anchor tagged rtag (if not NULL) and a monotonic one tagged
 * mtag, taken at its start, then 20 ms of sleep. *real and *mono: the
 * anchors' values (the clocks just before they were recorded). */
static void record_with_anchor(const char *path, const char *rtag,
                               const char *mtag, int64_t *real, int64_t *mono) {
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  CHECK_EQ(pp_init(&cfg), PP_OK);
  pp_thread_name("main");
  pp_zone z = pp_zone_begin_name("outer");
  char name[256];
  *real = clock_ns(CLOCK_REALTIME);
  *mono = clock_ns(CLOCK_MONOTONIC);
  if (rtag) {
    snprintf(name, sizeof name, "pipeprof.profile_start.realtime_ns %s", rtag);
    pp_counter_set(name, *real);
  }
  if (mtag) {
    snprintf(name, sizeof name, "pipeprof.profile_start.monotonic_ns %s", mtag);
    pp_counter_set(name, *mono);
  }
  struct timespec nap = {0, 20 * 1000000};
  while (nanosleep(&nap, &nap) != 0)
    ;
  pp_zone_end(z);
  CHECK_EQ(pp_shutdown(), PP_OK);
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  fputs(text, f);
  CHECK_EQ(fclose(f), 0);
}

/* A legacy torch profile counting from its own start: "step" 100..500
 * us holding aten::mm (with shapes) and a zone named like the trace's. */
static const char legacy_profile[] =
    "[{\"name\": \"step\", \"ph\": \"X\", \"ts\": 100, \"dur\": 400,"
    " \"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}},"
    "{\"name\": \"aten::mm\", \"ph\": \"X\", \"ts\": 150, \"dur\": 100,"
    " \"tid\": 1, \"pid\": \"CPU functions\","
    " \"args\": {\"Input Dims\": [[2, 3], [3, 4]]}},"
    "{\"name\": \"outer\", \"ph\": \"X\", \"ts\": 300, \"dur\": 10,"
    " \"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}}]";

#ifdef PP_HAVE_JANSSON
/* The X event named name in a Chrome export (fails when absent). */
static json_t *chrome_event(json_t *doc, const char *name) {
  json_t *ev = json_object_get(doc, "traceEvents");
  size_t i;
  json_t *e;
  json_array_foreach(ev, i, e) {
    const char *n = json_string_value(json_object_get(e, "name"));
    const char *ph = json_string_value(json_object_get(e, "ph"));
    if (n && ph && !strcmp(n, name) && !strcmp(ph, "X"))
      return e;
  }
  PP_FAIL("no X event \"%s\" in the Chrome export", name);
}

/* Does X event in lie within X event out (Chrome's us, 3 decimals)? */
static void check_inside(json_t *in, json_t *out) {
  double its = json_number_value(json_object_get(in, "ts"));
  double idur = json_number_value(json_object_get(in, "dur"));
  double ots = json_number_value(json_object_get(out, "ts"));
  double odur = json_number_value(json_object_get(out, "dur"));
  CHECK_GE(its, ots);
  CHECK_LE(its + idur, ots + odur);
}

static json_t *cli_json(const char *fmt, const char *a, const char *b,
                        const char *extra) {
  pp_cli_result r = pp_test_cli(fmt, a, b, extra);
  if (r.rc != 0)
    PP_FAIL("pipeprof exit %d: %s", r.rc, r.err);
  json_error_t jerr;
  json_t *doc = json_loads(r.out, 0, &jerr);
  if (!doc)
    PP_FAIL("not JSON: %s", jerr.text);
  pp_cli_result_free(&r);
  return doc;
}
#endif

/* A profile counting from its own start lands where the trace's anchor
 * says (the one named like the file), inside the zone that enclosed it;
 * its threads are named after the tool, a zone named like one of the
 * trace's is told apart, and the figures count both. */
PP_TEST_T(import_with_aligns_by_anchor, 120) {
  char trace[4096], prof[4096];
  snprintf(trace, sizeof trace, "%s/app.pptrace", pp_test_tmpdir());
  snprintf(prof, sizeof prof, "%s/legacy.json", pp_test_tmpdir());
  int64_t real, mono;
  record_with_anchor(trace, "legacy.json", "other.json", &real, &mono);
  write_file(prof, legacy_profile);
  pp_cli_result r = pp_test_cli("report '%s' --with '%s'", trace, prof);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "(torch.profiler (legacy autograd export), aligned "
                        "by anchor \"pipeprof.profile_start.realtime_ns "
                        "legacy.json\")\n");
  CHECK_CONTAINS(r.out, "\nouter [torch.profiler] ");
  CHECK_CONTAINS(r.out, "\naten::mm ");
  CHECK_CONTAINS(r.out, "torch.profiler: thread 1");
  CHECK_CONTAINS(r.out, "operators by input shape");
  pp_cli_result_free(&r);
#ifdef PP_HAVE_JANSSON
  json_t *c = cli_json("export --format chrome '%s' --with '%s' -o -%s", trace,
                       prof, "");
  json_t *outer = chrome_event(c, "outer");
  check_inside(chrome_event(c, "step"), outer);
  check_inside(chrome_event(c, "aten::mm"), outer);
  check_inside(chrome_event(c, "outer [torch.profiler]"), outer);
  /* step starts 100 us after the anchor; outer began before it */
  double step_us =
      json_number_value(json_object_get(chrome_event(c, "step"), "ts")) -
      json_number_value(json_object_get(outer, "ts"));
  CHECK_GE(step_us, 100.0);
  json_decref(c);
  /* by the monotonic anchor (named like --with's file): exact */
  char prof2[4096];
  snprintf(prof2, sizeof prof2, "%s/other.json", pp_test_tmpdir());
  write_file(prof2, legacy_profile);
  json_t *s = cli_json("export --format json '%s' --with '%s' -o -%s", trace,
                       prof2, " --offset 1000");
  json_t *m = json_array_get(json_object_get(s, "merged_profiles"), 0);
  CHECK_STR(json_string_value(json_object_get(m, "aligned_by")),
            "anchor \"pipeprof.profile_start.monotonic_ns other.json\", "
            "--offset 1000 ns");
  CHECK_EQ(json_integer_value(json_object_get(m, "shift_ns")), mono + 1000);
  json_decref(s);
#endif
}

/* Kineto's base time is wall clock: the profile needs no anchor. A
 * profile with no clock and no anchor is refused unless --offset places
 * it from the trace's start. */
PP_TEST_T(import_with_wall_clock_offset_and_refusals, 120) {
  char trace[4096], prof[4096], json[1024];
  snprintf(trace, sizeof trace, "%s/app.pptrace", pp_test_tmpdir());
  snprintf(prof, sizeof prof, "%s/kineto.json", pp_test_tmpdir());
  int64_t real, mono;
  record_with_anchor(trace, NULL, NULL, &real, &mono);
  snprintf(json, sizeof json,
           "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\","
           " \"name\": \"aten::add\", \"pid\": 7, \"tid\": 7, \"ts\": 1000,"
           " \"dur\": 50}], \"baseTimeNanoseconds\": %lld}",
           (long long)real);
  write_file(prof, json);
  pp_cli_result r = pp_test_cli("report '%s' --with '%s'", trace, prof);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "(torch.profiler (Kineto), aligned by wall clock");
  CHECK_CONTAINS(r.out, "torch.profiler: thread 7");
  pp_cli_result_free(&r);
#ifdef PP_HAVE_JANSSON
  json_t *c = cli_json("export --format chrome '%s' --with '%s' -o -%s", trace,
                       prof, "");
  check_inside(chrome_event(c, "aten::add"), chrome_event(c, "outer"));
  json_decref(c);
#endif
  /* no clock, no anchor */
  char legacy[4096];
  snprintf(legacy, sizeof legacy, "%s/legacy.json", pp_test_tmpdir());
  write_file(legacy, legacy_profile);
  r = pp_test_cli("report '%s' --with '%s'", trace, legacy);
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "no clock to align the profile by");
  pp_cli_result_free(&r);
  r = pp_test_cli("export --format chrome '%s' --with '%s' -o -", trace,
                  legacy);
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "give --offset NS");
  pp_cli_result_free(&r);
  /* --offset: from the trace's start (its session's) */
  r = pp_test_cli("report '%s' --with '%s' --offset 2000000", trace, legacy);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "aligned by the trace's start (no clock to align "
                        "by), --offset 2000000 ns");
  pp_cli_result_free(&r);
  /* an ONNX Runtime profile (golden): its threads and operators join */
  r = pp_test_cli("report '%s' --with "
                  "'%s/tests/fixtures/ort/cnn-basic-seq.json' --offset 0",
                  trace, pp_test_srcdir());
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "(ONNX Runtime, aligned by the trace's start");
  CHECK_CONTAINS(r.out, "onnxruntime: thread ");
  CHECK_CONTAINS(r.out, "\nConv [CPU] ");
  CHECK_CONTAINS(r.out, "providers:      0 (transitions");
  pp_cli_result_free(&r);
  /* usage: --offset alone; a profile as FILE; a bad profile */
  r = pp_test_cli("report '%s' --offset 5", trace);
  CHECK_ONE_LINE_ERROR_FROM(r, 2, "--offset is for a profile given with");
  pp_cli_result_free(&r);
  r = pp_test_cli("report '%s' --with '%s'", legacy, prof);
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "--with merges profiles into a pipeprof");
  pp_cli_result_free(&r);
  r = pp_test_cli("report '%s' --with '%s'", trace, trace);
  CHECK_ONE_LINE_ERROR_FROM(r, 1, "not JSON");
  pp_cli_result_free(&r);
}

/* Events whose times cannot be taken (not a number, out of range, a
 * negative duration) are left out, counted, and the report says so where
 * it said nothing. */
PP_TEST(import_bad_times_are_said) {
  const char *json =
      "[{\"ph\": \"X\", \"name\": \"ok\", \"pid\": \"CPU functions\","
      " \"tid\": 1, \"ts\": 10, \"dur\": 20},"
      "{\"ph\": \"X\", \"name\": \"huge\", \"pid\": \"CPU functions\","
      " \"tid\": 1, \"ts\": 1e30, \"dur\": 1},"
      "{\"ph\": \"X\", \"name\": \"neg\", \"pid\": \"CPU functions\","
      " \"tid\": 1, \"ts\": 40, \"dur\": -5},"
      "{\"ph\": \"X\", \"name\": \"text\", \"pid\": \"CPU functions\","
      " \"tid\": 1, \"ts\": \"soon\", \"dur\": 1}]";
  pp_trace t;
  pp_analysis a;
  import_text(json, &t, &a);
  CHECK_STR(pp_trace_meta(&t, "import.bad_times"), "3");
  CHECK(zone_named(&a, "ok") != NULL);
  char *rep = tb_report_text(&a);
  CHECK(rep != NULL);
  CHECK_CONTAINS(rep, "3 events of the imported profile were left out: a "
                      "time or duration that is not a number");
  free(rep);
  done(&t, &a);
}

/* ---- long values (issue 26) ---------------------------------------------- */

/* A torch.profiler trace file of about bytes: one cpu_op whose name is a
 * string of name_len bytes, then short cpu_ops until the size is
 * reached. */
static void long_value_file(const char *path, size_t name_len, size_t bytes) {
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  fputs("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"",
        f);
  for (size_t i = 0; i < name_len; i++)
    fputc('a' + (int)(i % 26), f);
  fputs("\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}", f);
  long at = ftell(f);
  for (long k = 0; at < (long)bytes; k++) {
    at += fprintf(f,
                  ",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": "
                  "\"aten::op%ld\", \"pid\": 1, \"tid\": 1, \"ts\": %ld, "
                  "\"dur\": 1}",
                  k % 50, 10 + 2 * k);
  }
  fputs("]}\n", f);
  CHECK_EQ(fclose(f), 0);
}

static double import_seconds(const char *path, int *rc, char *err,
                             size_t errlen) {
  pp_trace t;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  *rc = pp_import_file(path, &t, err, errlen);
  clock_gettime(CLOCK_MONOTONIC, &b);
  if (*rc == 0)
    pp_trace_free(&t);
  return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
}

/* A file whose one name is a 12 MB string imports in about the time of a
 * file of as many bytes of short events (yajl lexes a value that spans
 * reads again from its start at each read: reads now double while one
 * value lasts; a 64 MB string took 20 s); a value over 16 MiB is refused
 * in one line, without reading on (a 1 GB string ran for minutes). */
PP_TEST_T(import_long_values_linear_and_bounded, 120) {
  char longp[4200], normp[4200], hugep[4200], err[512];
  snprintf(longp, sizeof longp, "%s/long-name.json", pp_test_tmpdir());
  snprintf(normp, sizeof normp, "%s/short-names.json", pp_test_tmpdir());
  snprintf(hugep, sizeof hugep, "%s/huge-name.json", pp_test_tmpdir());
  size_t bytes = 12u << 20;
  long_value_file(longp, bytes - 4096, bytes);
  long_value_file(normp, 10, bytes);
  long_value_file(hugep, 20u << 20, 20u << 20);
  int rc1, rc2, rc3;
  double tl = import_seconds(longp, &rc1, err, sizeof err);
  CHECK_EQ(rc1, 0);
  double tn = import_seconds(normp, &rc2, err, sizeof err);
  CHECK_EQ(rc2, 0);
  printf("# 12 MiB: one name of 12 MiB %.3f s, short events %.3f s\n", tl,
         tn);
  CHECK(tl < 3 * tn + 0.2);
  double th = import_seconds(hugep, &rc3, err, sizeof err);
  CHECK(rc3 != 0);
  CHECK_CONTAINS(err, "a JSON value longer than 16 MiB before byte");
  CHECK(strchr(err, '\n') == NULL);
  printf("# a 20 MiB name: refused in %.3f s: %s\n", th, err);
  CHECK(th < 3 * tn + 0.2);
}
