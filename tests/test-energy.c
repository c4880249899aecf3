/* SPDX-License-Identifier: MIT */
/*
 * Energy per frame (pp_run_energy, src/analyze/energy.c, and its use in the
 * text report and the summary JSON): traces built by hand with two frame
 * streams and the samplers' running totals (RAPL "energy.package_j", NVML
 * "gpu.run_energy_j" and "gpu.energy_j"). Checked: exact figures per frame
 * with the CPU package and GPU parts, the run's GPUs preferred over all
 * GPUs, CPU only, GPU only (the run's or all GPUs), and no counter (or one
 * with no finite value): "unavailable" with the reason, never a number.
 * Energy per request and per output token is tested in test-requests.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "export/export.h"
#include "format/pptrace.h"
#include "pipeprof.h"
#include "runner.h"
#include "trace_builder.h"

#ifdef PP_HAVE_JANSSON
#include <jansson.h>
#endif

#define MS 1000000LL

/* Which running totals a trace gets, each as (first, last) samples. */
enum {
  E_CPU = 1,
  E_GPU_RUN = 2,
  E_GPU_ALL = 4,
  E_CPU_NAN = 8,
  E_PSYS = 16
};

/* Two frame streams on one thread: "camera0" marked 4 times, "display" 8
 * times, over 700 ms; the requested energy counters on a sampler thread:
 * package 1 -> 6 J, the run's GPUs 0.5 -> 2 J, all GPUs 30 -> 100 J. */
static void build(pp_trace *t, int which) {
  memset(t, 0, sizeof *t);
  tb_meta(t, "mode", "trace");
  uint32_t cam = tb_loc(t, "camera0", PP_KIND_FRAME);
  uint32_t disp = tb_loc(t, "display", PP_KIND_FRAME);
  size_t th = tb_thread(t, 1, "main");
  for (int i = 0; i < 8; i++) {
    if (i % 2 == 0)
      tb_ev(t, th, i * 100 * MS, cam, PPT_EV_FRAME);
    tb_ev(t, th, i * 100 * MS + 1, disp, PPT_EV_FRAME);
  }
  static const struct {
    int bit;
    const char *name;
    double first, last;
  } c[] = {{E_CPU, "energy.package_j", 1.0, 6.0},
           {E_GPU_RUN, "gpu.run_energy_j", 0.5, 2.0},
           {E_GPU_ALL, "gpu.energy_j", 30.0, 100.0},
           {E_CPU_NAN, "energy.package_j", NAN, NAN},
           {E_PSYS, "energy.psys_j", 2.0, 8.0}};
  size_t s = tb_thread(t, 2, "pipeprof-sampler");
  for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
    if (!(which & c[k].bit))
      continue;
    uint32_t loc = tb_loc(t, c[k].name, PP_KIND_COUNTER);
    tb_ev(t, s, 50 * MS, loc, PPT_EV_COUNTER_SETF)->v.f = c[k].first;
    tb_ev(t, s, 650 * MS, loc, PPT_EV_COUNTER_SETF)->v.f = c[k].last;
  }
}

#ifdef PP_HAVE_JANSSON
/* The "energy" object of frames[i] (ordered by name: 0 camera0, 1
 * display); the root is returned through *root for json_decref. */
static json_t *frame_energy(const char *js, size_t i, json_t **root) {
  json_error_t err;
  *root = json_loads(js, 0, &err);
  if (!*root)
    PP_FAIL("bad JSON: %s\n%s", err.text, js);
  CHECK_GE(json_integer_value(json_object_get(*root, "schema_minor")), 5);
  json_t *fr = json_object_get(*root, "frames");
  CHECK_EQ(json_array_size(fr), 2);
  json_t *f = json_array_get(fr, i);
  CHECK_STR(json_string_value(json_object_get(f, "name")),
            i == 0 ? "camera0" : "display");
  json_t *e = json_object_get(f, "energy");
  CHECK(json_is_object(e));
  return e;
}

/* The number at key, failing when it is absent or not a number. */
static double num(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  if (!json_is_number(v))
    PP_FAIL("\"%s\" is not a number", key);
  return json_number_value(v);
}
#endif

/* CPU package + the run's GPUs: all GPUs' larger total is not used. */
PP_TEST(energy_per_frame_cpu_and_gpu) {
  pp_trace t;
  pp_analysis a = {0};
  build(&t, E_CPU | E_GPU_RUN | E_GPU_ALL);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK_EQ(a.prof.nframes, 2);
  pp_energy e;
  CHECK_EQ(pp_run_energy(&a, &e), 1);
  CHECK_NEAR(e.joules, 8.0, 0);
  CHECK_NEAR(e.cpu_j, 6.0, 0);
  CHECK_NEAR(e.gpu_j, 2.0, 0);
  CHECK(e.has_cpu && e.has_gpu);
  CHECK_STR(e.gpu_counter, "gpu.run_energy_j");
  CHECK_STR(e.sources, "CPU package + GPU");

  char *s = tb_report_text(&a);
  CHECK_CONTAINS(s, "\n  energy per frame (camera0): 2 J (CPU package 1.5 J "
                    "+ GPU 0.5 J), 4 frames\n");
  CHECK_CONTAINS(s, "\n  energy per frame (display): 1 J (CPU package 0.75 J "
                    "+ GPU 0.25 J), 8 frames\n");
  CHECK_CONTAINS(s, "\n  (energy of the whole run, warm-up and idle "
                    "included, / the stream's marks)\n");
  /* in the frames section, before the counters */
  const char *fr = strstr(s, "\nframes (");
  CHECK(fr != NULL);
  CHECK(strstr(s, "energy per frame (camera0)") > fr);
  free(s);

  s = tb_summary_json(&a);
#ifdef PP_HAVE_JANSSON
  json_t *root;
  json_t *je = frame_energy(s, 0, &root);
  CHECK_STR(json_string_value(json_object_get(je, "sources")),
            "CPU package + GPU");
  CHECK_STR(json_string_value(json_object_get(je, "gpu_counter")),
            "gpu.run_energy_j");
  CHECK_NEAR(num(je, "joules_per_frame"), 2.0, 0);
  CHECK_NEAR(num(je, "cpu_package_joules_per_frame"), 1.5, 0);
  CHECK_NEAR(num(je, "gpu_joules_per_frame"), 0.5, 0);
  CHECK(json_object_get(je, "unavailable") == NULL);
  json_decref(root);
  je = frame_energy(s, 1, &root);
  CHECK_NEAR(num(je, "joules_per_frame"), 1.0, 0);
  CHECK_NEAR(num(je, "cpu_package_joules_per_frame"), 0.75, 0);
  CHECK_NEAR(num(je, "gpu_joules_per_frame"), 0.25, 0);
  json_decref(root);
#else
  CHECK_CONTAINS(s, "\"joules_per_frame\":2,\"cpu_package_joules_per_frame\":"
                    "1.5,\"gpu_joules_per_frame\":0.5");
#endif
  free(s);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

PP_TEST(energy_per_frame_cpu_only) {
  pp_trace t;
  pp_analysis a = {0};
  build(&t, E_CPU);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  pp_energy e;
  CHECK_EQ(pp_run_energy(&a, &e), 1);
  CHECK(e.has_cpu && !e.has_gpu);
  CHECK(e.gpu_counter == NULL);
  CHECK_STR(e.sources, "CPU package");
  char *s = tb_report_text(&a);
  CHECK_CONTAINS(s, "\n  energy per frame (camera0): 1.5 J (CPU package), "
                    "4 frames\n");
  CHECK_CONTAINS(s, "\n  energy per frame (display): 0.75 J (CPU package), "
                    "8 frames\n");
  CHECK(strstr(s, "GPU") == NULL);
  free(s);
  s = tb_summary_json(&a);
  /* no queue in this trace: an empty list, not an absent member */
  CHECK_CONTAINS(s, "\"queues\":[]");
#ifdef PP_HAVE_JANSSON
  json_t *root;
  json_t *je = frame_energy(s, 0, &root);
  CHECK_STR(json_string_value(json_object_get(je, "sources")), "CPU package");
  CHECK_NEAR(num(je, "joules_per_frame"), 1.5, 0);
  CHECK_NEAR(num(je, "cpu_package_joules_per_frame"), 1.5, 0);
  CHECK(json_object_get(je, "gpu_joules_per_frame") == NULL);
  CHECK(json_object_get(je, "gpu_counter") == NULL);
  json_decref(root);
#else
  CHECK_CONTAINS(s, "\"sources\":\"CPU package\",\"joules_per_frame\":1.5,"
                    "\"cpu_package_joules_per_frame\":1.5}");
#endif
  free(s);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* GPU only: the run's GPUs, then (without them) all GPUs, named so. */
PP_TEST(energy_per_frame_gpu_only) {
  pp_trace t;
  pp_analysis a = {0};
  build(&t, E_GPU_RUN);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  pp_energy e;
  CHECK_EQ(pp_run_energy(&a, &e), 1);
  CHECK(!e.has_cpu && e.has_gpu);
  CHECK_STR(e.sources, "GPU");
  char *s = tb_report_text(&a);
  CHECK_CONTAINS(s, "\n  energy per frame (camera0): 0.5 J (GPU), 4 frames\n");
  CHECK(strstr(s, "CPU package") == NULL);
  free(s);
  s = tb_summary_json(&a);
#ifdef PP_HAVE_JANSSON
  json_t *root;
  json_t *je = frame_energy(s, 1, &root);
  CHECK_STR(json_string_value(json_object_get(je, "sources")), "GPU");
  CHECK_STR(json_string_value(json_object_get(je, "gpu_counter")),
            "gpu.run_energy_j");
  CHECK_NEAR(num(je, "joules_per_frame"), 0.25, 0);
  CHECK_NEAR(num(je, "gpu_joules_per_frame"), 0.25, 0);
  CHECK(json_object_get(je, "cpu_package_joules_per_frame") == NULL);
  json_decref(root);
#else
  CHECK_CONTAINS(s, "\"gpu_counter\":\"gpu.run_energy_j\"");
#endif
  free(s);
  pp_analysis_free(&a);
  pp_trace_free(&t);

  build(&t, E_GPU_ALL);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK_EQ(pp_run_energy(&a, &e), 1);
  CHECK_STR(e.gpu_counter, "gpu.energy_j");
  CHECK_NEAR(e.joules, 100.0, 0);
  s = tb_report_text(&a);
  CHECK_CONTAINS(s, "\n  energy per frame (camera0): 25 J (all GPUs), "
                    "4 frames\n");
  free(s);
  s = tb_summary_json(&a);
#ifdef PP_HAVE_JANSSON
  je = frame_energy(s, 0, &root);
  CHECK_STR(json_string_value(json_object_get(je, "gpu_counter")),
            "gpu.energy_j");
  CHECK_NEAR(num(je, "gpu_joules_per_frame"), 25.0, 0);
  json_decref(root);
#else
  CHECK_CONTAINS(s, "\"gpu_counter\":\"gpu.energy_j\"");
#endif
  free(s);
  pp_analysis_free(&a);
  pp_trace_free(&t);

  /* The split names "all GPUs" next to the CPU package as well. */
  build(&t, E_CPU | E_GPU_ALL);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  s = tb_report_text(&a);
  CHECK_CONTAINS(s, "\n  energy per frame (camera0): 26.5 J (CPU package "
                    "1.5 J + all GPUs 25 J), 4 frames\n");
  free(s);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* No energy counter, or one that never held a finite value: the reason,
 * and no figure at all. */
PP_TEST(energy_per_frame_unavailable) {
  for (int k = 0; k < 2; k++) {
    pp_trace t;
    pp_analysis a = {0};
    build(&t, k == 0 ? 0 : E_CPU_NAN);
    CHECK_EQ(pp_analyze(&t, &a), 0);
    pp_energy e;
    CHECK_EQ(pp_run_energy(&a, &e), 0);
    CHECK(!e.has_cpu && !e.has_gpu);
    CHECK_CONTAINS(e.sources, "no energy counter in this trace");
    char *s = tb_report_text(&a);
    CHECK_CONTAINS(s, "\n  energy per frame: unavailable: no energy counter "
                      "in this trace (RAPL or NVML; run under `pipeprof "
                      "run` or with PIPEPROF_SAMPLE_HZ)\n");
    CHECK(strstr(s, "energy per frame (") == NULL);
    CHECK(strstr(s, " J (") == NULL);
    free(s);
    s = tb_summary_json(&a);
    CHECK(strstr(s, "joules_per_frame") == NULL);
#ifdef PP_HAVE_JANSSON
    json_t *root;
    for (size_t i = 0; i < 2; i++) {
      json_t *je = frame_energy(s, i, &root);
      CHECK_CONTAINS(json_string_value(json_object_get(je, "unavailable")),
                     "no energy counter in this trace");
      CHECK_EQ(json_object_size(je), 1);
      json_decref(root);
    }
#else
    CHECK_CONTAINS(s, "\"energy\":{\"unavailable\":\"no energy counter");
#endif
    free(s);
    pp_analysis_free(&a);
    pp_trace_free(&t);
  }
}

/* No CPU package domain, only the platform's (RAPL psys, as some laptops
 * and VMs have): the run's energy is the platform's, named so in every
 * view; with a package domain, psys (which overlaps it) is not added. */
PP_TEST(energy_per_frame_platform_without_a_package) {
  pp_trace t;
  pp_analysis a = {0};
  build(&t, E_PSYS | E_GPU_RUN);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  pp_energy e;
  CHECK_EQ(pp_run_energy(&a, &e), 1);
  CHECK(!e.has_cpu && e.has_platform && e.has_gpu);
  CHECK_STR(e.sources, "platform (psys) + GPU");
  CHECK_NEAR(e.joules, 10.0, 0);
  char *s = tb_report_text(&a);
  CHECK_CONTAINS(s, "\n  energy per frame (camera0): 2.5 J (platform (psys) "
                    "2 J + GPU 0.5 J), 4 frames\n");
  free(s);
  s = tb_summary_json(&a);
  CHECK_CONTAINS(s, "\"platform_joules_per_frame\":2,");
  CHECK(strstr(s, "cpu_package_joules_per_frame") == NULL);
  free(s);
  pp_analysis_free(&a);
  pp_trace_free(&t);

  build(&t, E_PSYS | E_CPU);
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK_EQ(pp_run_energy(&a, &e), 1);
  CHECK(e.has_cpu && !e.has_platform);
  CHECK_STR(e.sources, "CPU package");
  CHECK_NEAR(e.joules, 6.0, 0);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}
