/* SPDX-License-Identifier: MIT */
/*
 * The video demo's FFmpeg input and output (examples/video/video_io.c)
 * with the real libraries: a clip made, read back frame by frame against
 * the generator's pixels (PSNR), written again and read again; odd
 * sizes through the reader's conversion; bad files give one line and
 * never a crash.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runner.h"

#ifdef PP_HAVE_AV
#include "../examples/video/video_io.h"

/* PSNR of the luma planes of a and b, dB. */
static double psnr_y(const vio_frame *a, const vio_frame *b) {
  double se = 0;
  for (int y = 0; y < a->h; y++)
    for (int x = 0; x < a->w; x++) {
      double d = (double)a->y[(size_t)y * (size_t)a->y_stride + (size_t)x] -
                 (double)b->y[(size_t)y * (size_t)b->y_stride + (size_t)x];
      se += d * d;
    }
  double mse = se / ((double)a->w * (double)a->h);
  return mse > 0 ? 10 * log10(255.0 * 255.0 / mse) : 99.0;
}

/* Read every frame of path (w x h): indices in order, each within
 * min_db of the generator's frame; returns the count. */
static int read_all(const char *path, int w, int h, double min_db) {
  char err[256];
  vio_reader *r = vio_open(path, 1, err, sizeof err);
  if (!r)
    PP_FAIL("%s", err);
  int rw, rh;
  double fps;
  int64_t n;
  const char *codec;
  vio_info(r, &rw, &rh, &fps, &n, &codec);
  CHECK_EQ(rw, w);
  CHECK_EQ(rh, h);
  CHECK_NEAR(fps, 25.0, 0.01);
  CHECK(strcmp(codec, "h264") == 0 || strcmp(codec, "mpeg4") == 0);
  void *got = malloc(vio_frame_bytes(w, h)),
       *want = malloc(vio_frame_bytes(w, h));
  CHECK(got && want);
  vio_frame f, g;
  vio_frame_layout(&f, got, w, h);
  vio_frame_layout(&g, want, w, h);
  int k = 0, rc;
  while ((rc = vio_read(r, &f, err, sizeof err)) == 1) {
    CHECK_EQ(f.index, k);
    vio_clip_frame(&g, k);
    double db = psnr_y(&f, &g);
    if (db < min_db)
      PP_FAIL("%s frame %d: PSNR %.1f dB < %.1f", path, k, db, min_db);
    k++;
  }
  if (rc < 0)
    PP_FAIL("%s", err);
  CHECK_EQ(vio_read(r, &f, err, sizeof err), 0); /* the end stays the end */
  if (n >= 0)
    CHECK_EQ(n, k);
  free(got);
  free(want);
  vio_close(r);
  return k;
}

PP_TEST_T(video_io_clip_read_write_read, 120) {
  char clip[4200], copy[4200], err[256];
  snprintf(clip, sizeof clip, "%s/clip.mp4", pp_test_tmpdir());
  snprintf(copy, sizeof copy, "%s/copy.mkv", pp_test_tmpdir());
  CHECK_EQ(vio_make_clip(clip, 160, 96, 25, 30, err, sizeof err), 0);
  /* every frame back, in order, near the generator's: lossy coding of
   * this content stays above 30 dB */
  CHECK_EQ(read_all(clip, 160, 96, 30.0), 30);
  /* decoded and written again (another container): the same frames. One
   * decoder thread: FFmpeg's frame threads synchronise in ways
   * ThreadSanitizer cannot see in the uninstrumented library (it reports
   * races in av_frame_unref that are not there). */
  vio_reader *r = vio_open(clip, 1, err, sizeof err);
  CHECK(r != NULL);
  vio_writer *wr = vio_writer_open(copy, 160, 96, 25, err, sizeof err);
  if (!wr)
    PP_FAIL("%s", err);
  void *b = malloc(vio_frame_bytes(160, 96));
  vio_frame f;
  vio_frame_layout(&f, b, 160, 96);
  while (vio_read(r, &f, err, sizeof err) == 1)
    CHECK_EQ(vio_write(wr, &f, err, sizeof err), 0);
  CHECK_EQ(vio_writer_close(wr, err, sizeof err), 0);
  vio_close(r);
  CHECK_EQ(read_all(copy, 160, 96, 28.0), 30);
  /* a frame of another size is refused with a line */
  vio_writer *w2 = vio_writer_open(copy, 64, 64, 25, err, sizeof err);
  CHECK(w2 != NULL);
  CHECK_EQ(vio_write(w2, &f, err, sizeof err), -1);
  CHECK_CONTAINS(err, "another size");
  CHECK_EQ(vio_writer_close(w2, err, sizeof err), 0);
  free(b);
}

PP_TEST(video_io_bad_files) {
  char path[4200], err[256];
  vio_reader *r = vio_open("/nonexistent/clip.mp4", 1, err, sizeof err);
  CHECK(r == NULL);
  CHECK_CONTAINS(err, "/nonexistent/clip.mp4");
  CHECK(strchr(err, '\n') == NULL);
  /* text is no video */
  snprintf(path, sizeof path, "%s/text.mp4", pp_test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  fputs("this is not a video file at all\n", f);
  fclose(f);
  CHECK(vio_open(path, 1, err, sizeof err) == NULL);
  CHECK_CONTAINS(err, path);
  /* a clip cut at every tenth: opens and reads what it can, or says why
   * not; never crashes (MP4 keeps its index at the end, Matroska at the
   * start, so both kinds of damage are tried) */
  static const char *const ext[] = {"mp4", "mkv"};
  for (int e = 0; e < 2; e++) {
    snprintf(path, sizeof path, "%s/cut.%s", pp_test_tmpdir(), ext[e]);
    CHECK_EQ(vio_make_clip(path, 128, 64, 25, 20, err, sizeof err), 0);
    size_t len;
    char *whole = pp_test_slurp(path, &len);
    CHECK(whole != NULL);
    for (int cut = 1; cut < 10; cut++) {
      f = fopen(path, "wb");
      CHECK(f != NULL);
      fwrite(whole, 1, len * (size_t)cut / 10, f);
      fclose(f);
      r = vio_open(path, 1, err, sizeof err);
      if (!r) {
        CHECK_GT(strlen(err), 0);
        continue;
      }
      void *b = malloc(vio_frame_bytes(128, 64));
      vio_frame fr;
      vio_frame_layout(&fr, b, 128, 64);
      int n = 0, rc;
      while ((rc = vio_read(r, &fr, err, sizeof err)) == 1)
        n++;
      CHECK(n <= 20);
      CHECK(rc == 0 || (rc == -1 && strlen(err) > 0));
      free(b);
      vio_close(r);
    }
    free(whole);
  }
  /* a writer into a directory that does not exist */
  CHECK(vio_writer_open("/nonexistent/dir/out.mp4", 64, 64, 25, err,
                        sizeof err) == NULL);
  CHECK_CONTAINS(err, "/nonexistent/dir/out.mp4");
  CHECK(vio_writer_open(path, 63, 64, 25, err, sizeof err) == NULL);
}

#else

PP_TEST(video_io_needs_ffmpeg) {
  const char *req = getenv("PP_REQUIRE_VIDEO");
  if (req && strcmp(req, "1") == 0)
    PP_FAIL("PP_REQUIRE_VIDEO=1 but this build has no FFmpeg libraries");
  printf("# skipped: no FFmpeg libraries in this build\n");
}

#endif
