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

/* PSNR of two w x h planes, dB (99 when equal). */
static double psnr_plane(const uint8_t *a, int as, const uint8_t *b, int bs,
                         int w, int h) {
  double se = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      double d = (double)a[(size_t)y * (size_t)as + (size_t)x] -
                 (double)b[(size_t)y * (size_t)bs + (size_t)x];
      se += d * d;
    }
  double mse = se / ((double)w * (double)h);
  return mse > 0 ? 10 * log10(255.0 * 255.0 / mse) : 99.0;
}

/* PSNR of the luma planes of a and b, dB. */
static double psnr_y(const vio_frame *a, const vio_frame *b) {
  return psnr_plane(a->y, a->y_stride, b->y, b->y_stride, a->w, a->h);
}

/* The lower PSNR of the two chroma planes of a and b, dB. */
static double psnr_uv(const vio_frame *a, const vio_frame *b) {
  int cw = (a->w + 1) / 2, ch = (a->h + 1) / 2;
  double u = psnr_plane(a->u, a->u_stride, b->u, b->u_stride, cw, ch);
  double v = psnr_plane(a->v, a->v_stride, b->v, b->v_stride, cw, ch);
  return u < v ? u : v;
}

/* The decoder's name for what vio_writer_open encodes w x h with. */
static const char *decoder_for(int w, int h) {
  const char *enc = vio_encoder_name(w, h);
  return strcmp(enc, "libx264") == 0 ? "h264" : "mpeg4";
}

/* Read every frame of path (w x h, decoded by codec): indices in order,
 * luma within min_y dB of the generator's frame and, when min_uv > 0,
 * chroma within min_uv; the end stays the end, and a frame count the
 * file gives is the one read. Returns the count. */
static int read_checked(const char *path, int w, int h, const char *codec_want,
                        double min_y, double min_uv) {
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
  CHECK_STR(codec, codec_want);
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
    double dy = psnr_y(&f, &g), duv = min_uv > 0 ? psnr_uv(&f, &g) : 99.0;
    if (dy < min_y || duv < min_uv)
      PP_FAIL("%s frame %d: PSNR Y %.1f dB, UV %.1f dB < %.1f, %.1f", path, k,
              dy, duv, min_y, min_uv);
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

/* A clip of vio_make_clip or vio_writer: luma within min_db. */
static int read_all(const char *path, int w, int h, double min_db) {
  return read_checked(path, w, h, decoder_for(w, h), min_db, 0);
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
   * not; never crashes. MP4 keeps its index at the end (a cut one does
   * not open), Matroska at the start: a cut one reads as a shorter video,
   * its frames in order and intact, more of them the longer the cut. */
  static const char *const ext[] = {"mp4", "mkv"};
  void *b = malloc(vio_frame_bytes(128, 64)),
       *want = malloc(vio_frame_bytes(128, 64));
  CHECK(b && want);
  vio_frame fr, g;
  vio_frame_layout(&fr, b, 128, 64);
  vio_frame_layout(&g, want, 128, 64);
  for (int e = 0; e < 2; e++) {
    snprintf(path, sizeof path, "%s/cut.%s", pp_test_tmpdir(), ext[e]);
    CHECK_EQ(vio_make_clip(path, 128, 64, 25, 20, err, sizeof err), 0);
    size_t len;
    char *whole = pp_test_slurp(path, &len);
    CHECK(whole != NULL);
    int last = 0;
    for (int cut = 1; cut < 10; cut++) {
      f = fopen(path, "wb");
      CHECK(f != NULL);
      fwrite(whole, 1, len * (size_t)cut / 10, f);
      fclose(f);
      r = vio_open(path, 1, err, sizeof err);
      if (!r) {
        CHECK_CONTAINS(err, path);
        CHECK(strchr(err, '\n') == NULL);
        continue;
      }
      /* every frame but the last intact (the last may be decoded from
       * the packet the cut went through: 20 dB measured) */
      int n = 0, rc;
      double prev_db = 99.0;
      while ((rc = vio_read(r, &fr, err, sizeof err)) == 1) {
        CHECK_EQ(fr.index, n);
        if (prev_db < 30.0)
          PP_FAIL("%s cut at %d/10, frame %d: PSNR %.1f dB", path, cut, n - 1,
                  prev_db);
        vio_clip_frame(&g, n);
        prev_db = psnr_y(&fr, &g);
        n++;
      }
      CHECK(n < 20);
      CHECK_GE(n, last);
      last = n;
      if (rc < 0)
        CHECK_CONTAINS(err, path);
      else
        CHECK_EQ(rc, 0);
      vio_close(r);
    }
    if (e == 1) /* nine tenths of a Matroska file hold frames */
      CHECK_GT(last, 0);
    free(whole);
  }
  free(b);
  free(want);
  /* a writer into a directory that does not exist */
  CHECK(vio_writer_open("/nonexistent/dir/out.mp4", 64, 64, 25, err,
                        sizeof err) == NULL);
  CHECK_CONTAINS(err, "/nonexistent/dir/out.mp4");
  /* sizes and rates no encoder takes */
  CHECK(vio_writer_open(path, 1, 64, 25, err, sizeof err) == NULL);
  CHECK_CONTAINS(err, path);
  CHECK(vio_writer_open(path, 64, 64, 0, err, sizeof err) == NULL);
  CHECK_CONTAINS(err, "fps");
}

/* Write frames generator frames of w x h into a YUV4MPEG2 file (raw
 * planes behind a text header, which FFmpeg's y4m demuxer reads): 4:2:0
 * as vio_frame has it, or 4:4:4 with each chroma sample repeated 2 x 2
 * (cropped at an odd edge), so that the reader has to convert. */
static void write_y4m(const char *path, int w, int h, int frames, int c444) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  fprintf(f, "YUV4MPEG2 W%d H%d F25:1 Ip A1:1 %s\n", w, h,
          c444 ? "C444" : "C420jpeg");
  void *b = malloc(vio_frame_bytes(w, h));
  uint8_t *row = malloc((size_t)w);
  CHECK(b && row);
  vio_frame g;
  vio_frame_layout(&g, b, w, h);
  for (int i = 0; i < frames; i++) {
    vio_clip_frame(&g, i);
    fputs("FRAME\n", f);
    if (!c444) {
      fwrite(b, 1, vio_frame_bytes(w, h), f);
      continue;
    }
    fwrite(g.y, 1, (size_t)w * (size_t)h, f);
    for (int p = 0; p < 2; p++) {
      const uint8_t *c = p ? g.v : g.u;
      for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++)
          row[x] = c[(size_t)(y / 2) * (size_t)g.u_stride + (size_t)(x / 2)];
        fwrite(row, 1, (size_t)w, f);
      }
    }
  }
  free(row);
  free(b);
  CHECK_EQ(fclose(f), 0);
}

/* Read the y4m file of write_y4m: every frame of w x h in order, luma and
 * chroma each at least min_y / min_uv dB from the generator's. */
static void read_y4m(const char *path, int w, int h, int frames, double min_y,
                     double min_uv) {
  CHECK_EQ(read_checked(path, w, h, "rawvideo", min_y, min_uv), frames);
}

PP_TEST_T(video_io_odd_sizes, 120) {
  char path[4200], err[256];
  /* an odd size is encoded (MPEG-4 Part 2: libx264 refuses odd 4:2:0
   * sizes) and decoded back to the same size, chroma (w + 1) / 2 */
  CHECK_STR(vio_encoder_name(161, 97), "mpeg4");
  snprintf(path, sizeof path, "%s/odd.mp4", pp_test_tmpdir());
  CHECK_EQ(vio_make_clip(path, 161, 97, 25, 20, err, sizeof err), 0);
  CHECK_EQ(read_all(path, 161, 97, 30.0), 20);
  /* 4:2:0 raw frames of an odd size come back exactly (the copy path) */
  snprintf(path, sizeof path, "%s/odd420.y4m", pp_test_tmpdir());
  write_y4m(path, 161, 97, 6, 0);
  read_y4m(path, 161, 97, 6, 99.0, 99.0);
  /* 4:4:4 goes through libswscale: luma kept (exact with FFmpeg 5.1;
   * 50 dB leaves room for a rounding step elsewhere), chroma filtered
   * back to 4:2:0 (36 dB measured: the discs' edges) */
  snprintf(path, sizeof path, "%s/odd444.y4m", pp_test_tmpdir());
  write_y4m(path, 161, 97, 6, 1);
  read_y4m(path, 161, 97, 6, 50.0, 30.0);
}

#else

PP_TEST(video_io_needs_ffmpeg) {
  const char *req = getenv("PP_REQUIRE_VIDEO");
  if (req && strcmp(req, "1") == 0)
    PP_FAIL("PP_REQUIRE_VIDEO=1 but this build has no FFmpeg libraries");
  printf("# skipped: no FFmpeg libraries in this build\n");
}

#endif
