/* SPDX-License-Identifier: MIT */
/*
 * pipeprof-bench-video-io [ROUNDS [FRAMES]]: the video demo's FFmpeg input
 * and output (examples/video/video_io.c) at 640x360 and 1280x720. Per
 * size, FRAMES generator frames (default 120) are made in memory once;
 * each of ROUNDS rounds (default 3) then encodes them into an MP4 in a
 * temporary directory (vio_writer: encode + mux), demuxes that file
 * alone (libavformat's av_read_frame, no decoding) and decodes it with
 * vio_read, with one decoder thread and with FFmpeg's choice. Prints the
 * median frames per second of each, the file's bit rate and the decoded
 * luma's PSNR against the generator. A figure, never a test.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libavformat/avformat.h>

#include "../../examples/video/video_io.h"
#include "timing.h"

/* Squared luma error of a against b, summed. */
static double luma_se(const vio_frame *a, const vio_frame *b) {
  double se = 0;
  for (int y = 0; y < a->h; y++)
    for (int x = 0; x < a->w; x++) {
      double d = (double)a->y[(size_t)y * (size_t)a->y_stride + (size_t)x] -
                 (double)b->y[(size_t)y * (size_t)b->y_stride + (size_t)x];
      se += d * d;
    }
  return se;
}

/* Encode frames frames of the w x h blocks into path; seconds, or -1. */
static double encode(const char *path, uint8_t *frames, int n, int w, int h) {
  char err[512];
  size_t fb = vio_frame_bytes(w, h);
  double t0 = bench_now_s();
  vio_writer *wr = vio_writer_open(path, w, h, 30, err, sizeof err);
  if (!wr) {
    fprintf(stderr, "%s\n", err);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    vio_frame f;
    vio_frame_layout(&f, frames + (size_t)i * fb, w, h);
    f.index = i;
    if (vio_write(wr, &f, err, sizeof err) != 0) {
      fprintf(stderr, "%s\n", err);
      vio_writer_close(wr, NULL, 0);
      return -1;
    }
  }
  if (vio_writer_close(wr, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return -1;
  }
  return bench_now_s() - t0;
}

/* Read path's packets without decoding them; seconds, or -1. */
static double demux(const char *path, int *packets) {
  double t0 = bench_now_s();
  AVFormatContext *ic = NULL;
  if (avformat_open_input(&ic, path, NULL, NULL) < 0)
    return -1;
  AVPacket *pkt = av_packet_alloc();
  *packets = 0;
  while (pkt && av_read_frame(ic, pkt) >= 0) {
    (*packets)++;
    av_packet_unref(pkt);
  }
  av_packet_free(&pkt);
  avformat_close_input(&ic);
  return bench_now_s() - t0;
}

/* Decode path with threads decoder threads; seconds, or -1. With frames
 * (the encoded ones), also the luma's squared error summed into *se. */
static double decode(const char *path, int threads, const uint8_t *frames,
                     int w, int h, int *got, double *se) {
  char err[512];
  size_t fb = vio_frame_bytes(w, h);
  void *block = malloc(fb);
  if (!block)
    return -1;
  double t0 = bench_now_s(), t = 0;
  vio_reader *r = vio_open(path, threads, err, sizeof err);
  if (!r) {
    fprintf(stderr, "%s\n", err);
    free(block);
    return -1;
  }
  vio_frame f;
  vio_frame_layout(&f, block, w, h);
  int rc;
  *got = 0;
  while ((rc = vio_read(r, &f, err, sizeof err)) == 1) {
    if (se) {
      /* not timed: the comparison is not the decoder's work */
      t += bench_now_s() - t0;
      vio_frame g;
      vio_frame_layout(&g, (void *)(frames + (size_t)f.index * fb), w, h);
      *se += luma_se(&f, &g);
      t0 = bench_now_s();
    }
    (*got)++;
  }
  vio_close(r);
  t += bench_now_s() - t0;
  free(block);
  if (rc < 0) {
    fprintf(stderr, "%s\n", err);
    return -1;
  }
  return t;
}

static int bench_size(const char *dir, int w, int h, int n, int rounds) {
  size_t fb = vio_frame_bytes(w, h);
  uint8_t *frames = malloc(fb * (size_t)n);
  double *enc = malloc(sizeof(double) * (size_t)rounds),
         *dmx = malloc(sizeof(double) * (size_t)rounds),
         *dec1 = malloc(sizeof(double) * (size_t)rounds),
         *dec0 = malloc(sizeof(double) * (size_t)rounds);
  if (!frames || !enc || !dmx || !dec1 || !dec0)
    return -1;
  double g0 = bench_now_s();
  for (int i = 0; i < n; i++) {
    vio_frame f;
    vio_frame_layout(&f, frames + (size_t)i * fb, w, h);
    vio_clip_frame(&f, i);
  }
  double gen = bench_now_s() - g0;
  char path[4200];
  snprintf(path, sizeof path, "%s/clip-%dx%d.mp4", dir, w, h);
  int got = 0, packets = 0;
  double se = 0;
  for (int r = 0; r < rounds; r++) {
    if ((enc[r] = encode(path, frames, n, w, h)) < 0 ||
        (dmx[r] = demux(path, &packets)) < 0 ||
        (dec1[r] = decode(path, 1, r == 0 ? frames : NULL, w, h, &got,
                          r == 0 ? &se : NULL)) < 0 ||
        (dec0[r] = decode(path, 0, NULL, w, h, &got, NULL)) < 0)
      return -1;
    if (got != n) {
      fprintf(stderr, "%s: %d frames decoded of %d\n", path, got, n);
      return -1;
    }
  }
  FILE *fp = fopen(path, "rb");
  long bytes = -1;
  if (fp && fseek(fp, 0, SEEK_END) == 0)
    bytes = ftell(fp);
  if (fp)
    fclose(fp);
  unlink(path);
  double mse = se / ((double)w * h * n);
  printf("%dx%d, %d frames at 30 fps, %s, %.0f kbit/s, luma PSNR %.1f dB "
         "(mean over frames' squared error)\n",
         w, h, n, vio_encoder_name(w, h),
         bytes > 0 ? (double)bytes * 8 * 30 / n / 1000 : -1.0,
         mse > 0 ? 10 * log10(255.0 * 255.0 / mse) : 99.0);
  printf("  generate    %8.1f frames/s\n", n / gen);
  printf("  encode+mux  %8.1f frames/s\n", n / bench_median(enc, rounds));
  printf("  demux only  %8.1f frames/s (%d packets)\n",
         n / bench_median(dmx, rounds), packets);
  printf("  decode, 1 thread        %8.1f frames/s\n",
         n / bench_median(dec1, rounds));
  printf("  decode, FFmpeg's choice %8.1f frames/s\n",
         n / bench_median(dec0, rounds));
  free(frames);
  free(enc);
  free(dmx);
  free(dec1);
  free(dec0);
  return 0;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  int n = argc > 2 ? atoi(argv[2]) : 120;
  if (rounds < 1 || n < 1) {
    fprintf(stderr, "usage: pipeprof-bench-video-io [ROUNDS [FRAMES]]\n");
    return 2;
  }
  const char *tmp = getenv("TMPDIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/pp-bench-vio-XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror(dir);
    return 1;
  }
  printf("pipeprof-bench-video-io: median of %d rounds, %ld CPUs online\n",
         rounds, sysconf(_SC_NPROCESSORS_ONLN));
  int rc = bench_size(dir, 640, 360, n, rounds) ||
           bench_size(dir, 1280, 720, n, rounds);
  rmdir(dir);
  return rc ? 1 : 0;
}
