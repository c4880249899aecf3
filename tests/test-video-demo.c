/* SPDX-License-Identifier: MIT */
/*
 * The video pipeline demo (examples/video/video_demo.c) run as users run
 * it, under `pipeprof run`: the run's summary.json has the pipeline the
 * runtime recorded (its five stages with every frame, the four queues
 * between them, the batches, the pools, a request per frame), and the
 * annotated video it wrote decodes to the same frames with the verdict
 * drawn on them. Nothing here depends on which stage is slowest. Bad
 * options get one line and exit 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

#if defined(PP_HAVE_JANSSON) && defined(PP_HAVE_AV)
#include <jansson.h>

#include "../examples/video/video_io.h"

static const char *demo_bin(void) {
  static char path[4200];
  snprintf(path, sizeof path, "%s/pipeprof-example-video", pp_test_bindir());
  return path;
}

static json_t *named(json_t *arr, const char *name) {
  for (size_t i = 0; i < json_array_size(arr); i++) {
    json_t *e = json_array_get(arr, i);
    const char *n = json_string_value(json_object_get(e, "name"));
    if (n && strcmp(n, name) == 0)
      return e;
  }
  return NULL;
}

static json_int_t int_of(json_t *o, const char *key) {
  return json_integer_value(json_object_get(o, key));
}

enum { FRAMES = 40, BATCH = 4 };

PP_TEST_T(video_demo_pipeline_recorded_and_video_written, 300) {
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/video", pp_test_tmpdir());
  pp_cli_result r = pp_test_cli(
      "run -o '%s/run' -- '%s' --dir '%s' --width 320 --height 180 "
      "--frames %d --size 64 --batch %d --delay-ms 2",
      dir, demo_bin(), dir, FRAMES, BATCH);
  if (r.rc != 0)
    PP_FAIL("exit %d\n%s\n%s", r.rc, r.out, r.err);
  CHECK_CONTAINS(r.out, "40 frames in");
  CHECK_CONTAINS(r.out, "wrote ");

  char path[4300];
  snprintf(path, sizeof path, "%s/run/summary.json", dir);
  json_error_t jerr;
  json_t *s = json_load_file(path, 0, &jerr);
  if (!s)
    PP_FAIL("%s: %s", path, jerr.text);
  json_t *pipe = json_object_get(s, "pipeline");
  json_t *stages = json_object_get(pipe, "stages");
  static const char *const names[] = {"decode", "preprocess", "infer",
                                      "postprocess", "encode"};
  for (size_t i = 0; i < 5; i++) {
    json_t *st = named(stages, names[i]);
    if (!st)
      PP_FAIL("no stage %s in the pipeline", names[i]);
    /* every frame through every stage but infer, which runs batches; decode
     * also times the read that finds the end */
    json_int_t items = int_of(st, "items");
    if (!strcmp(names[i], "infer"))
      CHECK(items >= FRAMES / BATCH && items <= FRAMES);
    else if (!strcmp(names[i], "decode"))
      CHECK_EQ(items, FRAMES + 1);
    else
      CHECK_EQ(items, FRAMES);
  }
  CHECK_EQ(int_of(named(stages, "preprocess"), "workers"), 2);
  CHECK(json_is_string(json_object_get(pipe, "bound")));

  /* the queues between the stages, each with every frame */
  static const char *const queues[][3] = {
      {"preprocess in", "decode", "preprocess"},
      {"batches", "preprocess", "infer"},
      {"postprocess in", "infer", "postprocess"},
      {"encode in", "postprocess", "encode"}};
  for (size_t i = 0; i < 4; i++) {
    json_t *q = named(json_object_get(s, "queues"), queues[i][0]);
    if (!q)
      PP_FAIL("no queue %s", queues[i][0]);
    CHECK_STR(json_string_value(json_object_get(q, "from")), queues[i][1]);
    CHECK_STR(json_string_value(json_object_get(q, "to")), queues[i][2]);
    CHECK_EQ(int_of(q, "pushes"), FRAMES);
    CHECK_EQ(int_of(q, "pops"), FRAMES);
  }

  /* a request per frame, all completed; batches of at most BATCH */
  json_t *req = json_object_get(s, "requests");
  CHECK_EQ(int_of(req, "completed"), FRAMES);
  CHECK_EQ(int_of(req, "failed"), 0);
  json_t *b = json_object_get(req, "batches");
  CHECK_EQ(int_of(b, "items"), FRAMES);
  CHECK(int_of(b, "count") >= FRAMES / BATCH);
  json_t *sizes = json_object_get(b, "by_size");
  for (size_t i = 0; i < json_array_size(sizes); i++)
    CHECK(int_of(json_array_get(sizes, i), "size") <= BATCH);

  /* the pools: frames (24 + 2 x batch blocks, each rounded up to 256
   * bytes) and tensors, all returned */
  json_t *pools = json_object_get(s, "memory_pools");
  json_t *fp = named(pools, "frames"), *tp = named(pools, "tensors");
  CHECK(fp != NULL && tp != NULL);
  json_int_t stride =
      (json_int_t)((vio_frame_bytes(320, 180) + 255) / 256 * 256);
  CHECK(int_of(fp, "peak_bytes") >= stride);
  CHECK(int_of(fp, "peak_bytes") <= (24 + 2 * BATCH) * stride);
  CHECK_EQ(int_of(fp, "peak_bytes") % stride, 0);
  CHECK_EQ(int_of(fp, "final_in_use_bytes"), 0);
  CHECK_EQ(int_of(tp, "final_in_use_bytes"), 0);
  CHECK_EQ(int_of(tp, "allocs"), FRAMES);
  json_decref(s);

  /* the annotated video: the same number of frames, the bar drawn */
  snprintf(path, sizeof path, "%s/annotated.mp4", dir);
  char err[256];
  vio_reader *rd = vio_open(path, 1, err, sizeof err);
  if (!rd)
    PP_FAIL("%s", err);
  int w = 0, h = 0;
  double fps = 0;
  int64_t n = 0;
  const char *codec = NULL;
  vio_info(rd, &w, &h, &fps, &n, &codec);
  CHECK_EQ(w, 320);
  CHECK_EQ(h, 180);
  void *block = malloc(vio_frame_bytes(w, h));
  CHECK(block != NULL);
  vio_frame f;
  vio_frame_layout(&f, block, w, h);
  int got = 0;
  while (vio_read(rd, &f, err, sizeof err) == 1) {
    /* the bar: near-white luma at the top left (its length is the
     * probability, at least a tenth of the width) */
    int bright = 0;
    for (int x = 0; x < w / 10; x++)
      bright += f.y[x] > 200;
    CHECK(bright > w / 20);
    got++;
  }
  CHECK_EQ(got, FRAMES);
  free(block);
  vio_close(rd);
  pp_cli_result_free(&r);
}

PP_TEST(video_demo_bad_options) {
  char *out = NULL;
  static const char *const bad[] = {"--batch 0", "--batch x", "--size 9",
                                    "--prep gpu", "--width 321", "--frobnicate",
                                    "--delay-ms -1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int rc = pp_test_run(&out, "'%s' %s --dir '%s'", demo_bin(), bad[i],
                         pp_test_tmpdir());
    CHECK_EQ(rc, 2);
    CHECK_EQ(pp_test_count_lines(out), 1);
    CHECK_CONTAINS(out, "pipeprof-example-video: ");
    free(out);
  }
}

#else

PP_TEST(video_demo_needs_ffmpeg) {
  if (getenv("PP_REQUIRE_VIDEO") && strcmp(getenv("PP_REQUIRE_VIDEO"), "1") == 0)
    PP_FAIL("PP_REQUIRE_VIDEO=1 but this build has no video demo (FFmpeg's "
            "libraries or jansson missing)");
  printf("# skipped: no video demo in this build\n");
}

#endif
