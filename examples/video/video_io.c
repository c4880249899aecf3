/* SPDX-License-Identifier: MIT */
/*
 * FFmpeg input and output for the video demo (video_io.h): the send /
 * receive API of libavcodec 5.x on both sides, libavformat for the files.
 */
#include "video_io.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>

static void set_err(char *err, size_t errlen, const char *what,
                    const char *path, int averr) {
  if (!err || !errlen)
    return;
  char why[AV_ERROR_MAX_STRING_SIZE] = "";
  if (averr)
    av_strerror(averr, why, sizeof why);
  snprintf(err, errlen, "%s%s%s%s%s", path ? path : "", path ? ": " : "", what,
           averr ? ": " : "", why);
}

/* FFmpeg's own messages stay quiet: the errors come back as one line.
 * Set once, at the first open, so that a program's own av_log_set_level
 * after that stands; PIPEPROF_VIDEO_LOG=1 lets FFmpeg's errors through. */
static void quiet(void) {
  static atomic_int done;
  if (atomic_exchange(&done, 1))
    return;
  const char *v = getenv("PIPEPROF_VIDEO_LOG");
  av_log_set_level(v && *v == '1' ? AV_LOG_ERROR : AV_LOG_QUIET);
}

/* ---- frames ---------------------------------------------------------------
 */

size_t vio_frame_bytes(int w, int h) {
  size_t cw = (size_t)(w + 1) / 2, ch = (size_t)(h + 1) / 2;
  return (size_t)w * (size_t)h + 2 * cw * ch;
}

void vio_frame_layout(vio_frame *f, void *block, int w, int h) {
  int cw = (w + 1) / 2, ch = (h + 1) / 2;
  f->w = w;
  f->h = h;
  f->index = 0;
  f->y = block;
  f->u = f->y + (size_t)w * (size_t)h;
  f->v = f->u + (size_t)cw * (size_t)ch;
  f->y_stride = w;
  f->u_stride = cw;
  f->v_stride = cw;
}

static uint32_t hash3(uint32_t x, uint32_t y, uint32_t z) {
  uint32_t h = x * 0x9E3779B1u ^ y * 0x85EBCA77u ^ z * 0xC2B2AE3Du;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return h;
}

static uint8_t clamp8(int v) {
  return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

void vio_clip_frame(vio_frame *f, int64_t i) {
  int w = f->w, h = f->h, cw = (w + 1) / 2, ch = (h + 1) / 2;
  /* three discs on Lissajous paths, each with its luma and colour */
  int cx[3], cy[3], r[3];
  static const int dy[3] = {200, 60, 130}, du[3] = {90, 200, 60},
                   dv[3] = {200, 80, 100};
  for (int k = 0; k < 3; k++) {
    double t = (double)i / (40.0 + 17.0 * k);
    cx[k] = (int)(w * (0.5 + 0.35 * __builtin_sin(t * (k + 1) + k)));
    cy[k] = (int)(h * (0.5 + 0.35 * __builtin_cos(t * (k + 2))));
    r[k] = (h / 8) + k * (h / 24);
  }
  for (int y = 0; y < h; y++) {
    uint8_t *row = f->y + (size_t)y * (size_t)f->y_stride;
    for (int x = 0; x < w; x++) {
      int v = 16 + (x * 150 / w + y * 50 / h + (int)(i % 64)) % 200;
      for (int k = 0; k < 3; k++) {
        int ddx = x - cx[k], ddy = y - cy[k];
        if (ddx * ddx + ddy * ddy < r[k] * r[k])
          v = dy[k];
      }
      v += (int)(hash3((uint32_t)x, (uint32_t)y, (uint32_t)i) % 13) - 6;
      row[x] = clamp8(v);
    }
  }
  for (int y = 0; y < ch; y++) {
    uint8_t *ur = f->u + (size_t)y * (size_t)f->u_stride;
    uint8_t *vr = f->v + (size_t)y * (size_t)f->v_stride;
    for (int x = 0; x < cw; x++) {
      int u = 128 + (x * 40 / cw) - 20, v = 128 + (y * 40 / ch) - 20;
      for (int k = 0; k < 3; k++) {
        int ddx = 2 * x - cx[k], ddy = 2 * y - cy[k];
        if (ddx * ddx + ddy * ddy < r[k] * r[k]) {
          u = du[k];
          v = dv[k];
        }
      }
      ur[x] = clamp8(u);
      vr[x] = clamp8(v);
    }
  }
  /* the frame number in binary: 8 blocks along the bottom */
  int bs = w / 32 > 2 ? w / 32 : 2;
  for (int b = 0; b < 8; b++) {
    uint8_t val = (i >> b) & 1 ? 235 : 16;
    for (int y = h - bs; y < h; y++)
      for (int x = b * bs; x < (b + 1) * bs && x < w; x++)
        f->y[(size_t)y * (size_t)f->y_stride + (size_t)x] = val;
  }
  f->index = i;
}

/* ---- the writer ---------------------------------------------------------- */

struct vio_writer {
  AVFormatContext *oc;
  AVCodecContext *enc;
  AVStream *st;
  AVFrame *frame;
  AVPacket *pkt;
  int64_t next_pts;
  int header_done;
  char *path; /* for the error lines */
};

/* libx264 where FFmpeg has it and the size is even (x264 refuses 4:2:0
 * of an odd width or height), else the native MPEG-4 Part 2 encoder,
 * which takes odd sizes. */
static const AVCodec *pick_encoder(int w, int h) {
  const AVCodec *c = NULL;
  if (w % 2 == 0 && h % 2 == 0)
    c = avcodec_find_encoder_by_name("libx264");
  return c ? c : avcodec_find_encoder(AV_CODEC_ID_MPEG4);
}

const char *vio_encoder_name(int w, int h) {
  const AVCodec *c = pick_encoder(w, h);
  return c ? c->name : "none";
}

static void writer_free(vio_writer *wr) {
  if (!wr)
    return;
  if (wr->oc && !(wr->oc->oformat->flags & AVFMT_NOFILE))
    avio_closep(&wr->oc->pb);
  avformat_free_context(wr->oc);
  avcodec_free_context(&wr->enc);
  av_frame_free(&wr->frame);
  av_packet_free(&wr->pkt);
  free(wr->path);
  free(wr);
}

vio_writer *vio_writer_open(const char *path, int w, int h, double fps,
                            char *err, size_t errlen) {
  quiet();
  if (w < 2 || h < 2 || w > 16384 || h > 16384 || !(fps > 0)) {
    set_err(err, errlen,
            "the writer wants 2 to 16384 pixels a side and fps > 0", path, 0);
    return NULL;
  }
  vio_writer *wr = calloc(1, sizeof *wr);
  if (!wr) {
    set_err(err, errlen, "out of memory", path, 0);
    return NULL;
  }
  if (!(wr->path = strdup(path))) {
    set_err(err, errlen, "out of memory", path, 0);
    free(wr);
    return NULL;
  }
  const AVCodec *codec = pick_encoder(w, h);
  int rc = avformat_alloc_output_context2(&wr->oc, NULL, NULL, path);
  if (rc < 0 || !wr->oc) {
    set_err(err, errlen, "no container for this file name", path, rc);
    goto fail;
  }
  if (!codec || !(wr->st = avformat_new_stream(wr->oc, NULL)) ||
      !(wr->enc = avcodec_alloc_context3(codec)) ||
      !(wr->frame = av_frame_alloc()) || !(wr->pkt = av_packet_alloc())) {
    set_err(err, errlen, codec ? "out of memory" : "no video encoder", path, 0);
    goto fail;
  }
  AVRational rate = av_d2q(fps, 100000);
  wr->enc->width = w;
  wr->enc->height = h;
  wr->enc->pix_fmt = AV_PIX_FMT_YUV420P;
  wr->enc->time_base = av_inv_q(rate);
  wr->enc->framerate = rate;
  wr->enc->thread_count = 1;
  if (codec->id == AV_CODEC_ID_H264) {
    av_opt_set(wr->enc->priv_data, "preset", "veryfast", 0);
    av_opt_set(wr->enc->priv_data, "crf", "23", 0);
  } else {
    wr->enc->bit_rate = (int64_t)w * h * 3;
    wr->enc->gop_size = 30;
  }
  if (wr->oc->oformat->flags & AVFMT_GLOBALHEADER)
    wr->enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  if ((rc = avcodec_open2(wr->enc, codec, NULL)) < 0) {
    set_err(err, errlen, "cannot open the encoder", path, rc);
    goto fail;
  }
  wr->st->time_base = wr->enc->time_base;
  if ((rc = avcodec_parameters_from_context(wr->st->codecpar, wr->enc)) < 0) {
    set_err(err, errlen, "encoder parameters", path, rc);
    goto fail;
  }
  if (!(wr->oc->oformat->flags & AVFMT_NOFILE) &&
      (rc = avio_open(&wr->oc->pb, path, AVIO_FLAG_WRITE)) < 0) {
    set_err(err, errlen, "cannot create", path, rc);
    goto fail;
  }
  /* no MP4 edit list: with B-frames it would make readers drop the
   * first frame to hide the encoder's delay */
  AVDictionary *mux = NULL;
  av_dict_set(&mux, "use_editlist", "0", 0);
  rc = avformat_write_header(wr->oc, &mux);
  av_dict_free(&mux);
  if (rc < 0) {
    set_err(err, errlen, "cannot write the header", path, rc);
    goto fail;
  }
  wr->header_done = 1;
  return wr;
fail:
  writer_free(wr);
  return NULL;
}

/* Every packet the encoder has ready into the file. */
static int drain_packets(vio_writer *wr, char *err, size_t errlen) {
  for (;;) {
    int rc = avcodec_receive_packet(wr->enc, wr->pkt);
    if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF)
      return 0;
    if (rc < 0) {
      set_err(err, errlen, "encoding failed", wr->path, rc);
      return -1;
    }
    av_packet_rescale_ts(wr->pkt, wr->enc->time_base, wr->st->time_base);
    wr->pkt->stream_index = wr->st->index;
    rc = av_interleaved_write_frame(wr->oc, wr->pkt);
    av_packet_unref(wr->pkt);
    if (rc < 0) {
      set_err(err, errlen, "cannot write", wr->path, rc);
      return -1;
    }
  }
}

int vio_write(vio_writer *wr, const vio_frame *f, char *err, size_t errlen) {
  if (f->w != wr->enc->width || f->h != wr->enc->height) {
    set_err(err, errlen, "a frame of another size than the video's", wr->path,
            0);
    return -1;
  }
  AVFrame *fr = wr->frame;
  fr->format = AV_PIX_FMT_YUV420P;
  fr->width = f->w;
  fr->height = f->h;
  fr->data[0] = f->y;
  fr->data[1] = f->u;
  fr->data[2] = f->v;
  fr->linesize[0] = f->y_stride;
  fr->linesize[1] = f->u_stride;
  fr->linesize[2] = f->v_stride;
  fr->pts = wr->next_pts++;
  /* not reference-counted: the encoder copies what it keeps */
  int rc = avcodec_send_frame(wr->enc, fr);
  memset(fr->data, 0, sizeof fr->data);
  if (rc < 0) {
    set_err(err, errlen, "encoding failed", wr->path, rc);
    return -1;
  }
  return drain_packets(wr, err, errlen);
}

int vio_writer_close(vio_writer *wr, char *err, size_t errlen) {
  if (!wr)
    return 0;
  int ok = avcodec_send_frame(wr->enc, NULL) >= 0 &&
           drain_packets(wr, err, errlen) == 0;
  if (ok) {
    int rc = av_write_trailer(wr->oc);
    if (rc < 0) {
      set_err(err, errlen, "cannot write the trailer", wr->path, rc);
      ok = 0;
    }
  } else if (err && errlen && !*err) {
    set_err(err, errlen, "cannot flush the encoder", wr->path, 0);
  }
  writer_free(wr);
  return ok ? 0 : -1;
}

int vio_make_clip(const char *path, int w, int h, int fps, int frames,
                  char *err, size_t errlen) {
  vio_writer *wr = vio_writer_open(path, w, h, fps, err, errlen);
  if (!wr)
    return -1;
  void *block = malloc(vio_frame_bytes(w, h));
  if (!block) {
    vio_writer_close(wr, NULL, 0);
    set_err(err, errlen, "out of memory", path, 0);
    return -1;
  }
  vio_frame f;
  vio_frame_layout(&f, block, w, h);
  int rc = 0;
  for (int i = 0; i < frames && rc == 0; i++) {
    vio_clip_frame(&f, i);
    rc = vio_write(wr, &f, err, errlen);
  }
  free(block);
  if (vio_writer_close(wr, rc ? NULL : err, rc ? 0 : errlen) != 0)
    rc = -1;
  return rc;
}

/* ---- the reader ---------------------------------------------------------- */

struct vio_reader {
  AVFormatContext *ic;
  AVCodecContext *dec;
  AVFrame *frame;
  AVPacket *pkt;
  struct SwsContext *sws;
  int stream;
  int w, h;
  double fps;
  int64_t frames, next;
  int flushing, read_error;
  char *path; /* for the error lines */
};

void vio_close(vio_reader *r) {
  if (!r)
    return;
  sws_freeContext(r->sws);
  av_frame_free(&r->frame);
  av_packet_free(&r->pkt);
  avcodec_free_context(&r->dec);
  avformat_close_input(&r->ic);
  free(r->path);
  free(r);
}

vio_reader *vio_open(const char *path, int threads, char *err, size_t errlen) {
  quiet();
  vio_reader *r = calloc(1, sizeof *r);
  if (!r) {
    set_err(err, errlen, "out of memory", path, 0);
    return NULL;
  }
  if (!(r->path = strdup(path))) {
    set_err(err, errlen, "out of memory", path, 0);
    free(r);
    return NULL;
  }
  int rc = avformat_open_input(&r->ic, path, NULL, NULL);
  if (rc < 0) {
    set_err(err, errlen, "cannot open", path, rc);
    goto fail;
  }
  if ((rc = avformat_find_stream_info(r->ic, NULL)) < 0) {
    set_err(err, errlen, "cannot read the streams", path, rc);
    goto fail;
  }
  const AVCodec *codec = NULL;
  rc = av_find_best_stream(r->ic, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
  if (rc < 0 || !codec) {
    set_err(err, errlen, "no video stream with a decoder", path, 0);
    goto fail;
  }
  r->stream = rc;
  AVStream *st = r->ic->streams[r->stream];
  if (!(r->dec = avcodec_alloc_context3(codec)) ||
      !(r->frame = av_frame_alloc()) || !(r->pkt = av_packet_alloc())) {
    set_err(err, errlen, "out of memory", path, 0);
    goto fail;
  }
  if ((rc = avcodec_parameters_to_context(r->dec, st->codecpar)) < 0) {
    set_err(err, errlen, "decoder parameters", path, rc);
    goto fail;
  }
  r->dec->thread_count = threads;
  if ((rc = avcodec_open2(r->dec, codec, NULL)) < 0) {
    set_err(err, errlen, "cannot open the decoder", path, rc);
    goto fail;
  }
  r->w = r->dec->width;
  r->h = r->dec->height;
  if (r->w < 2 || r->h < 2 || r->w > 16384 || r->h > 16384) {
    set_err(err, errlen, "the video has no usable size", path, 0);
    goto fail;
  }
  AVRational fr = st->r_frame_rate.num ? st->r_frame_rate : st->avg_frame_rate;
  r->fps = fr.num && fr.den ? av_q2d(fr) : 0;
  r->frames = st->nb_frames > 0 ? st->nb_frames : -1;
  return r;
fail:
  vio_close(r);
  return NULL;
}

void vio_info(const vio_reader *r, int *w, int *h, double *fps, int64_t *frames,
              const char **codec) {
  if (w)
    *w = r->w;
  if (h)
    *h = r->h;
  if (fps)
    *fps = r->fps;
  if (frames)
    *frames = r->frames;
  if (codec)
    *codec = r->dec->codec->name;
}

static void copy_plane(uint8_t *dst, int dstride, const uint8_t *src,
                       int sstride, int w, int h) {
  for (int y = 0; y < h; y++)
    memcpy(dst + (size_t)y * (size_t)dstride,
           src + (size_t)y * (ptrdiff_t)sstride, (size_t)w);
}

/* The decoded frame into f: copied when it is 4:2:0 of the stream's
 * size, else converted and scaled. */
static int deliver(vio_reader *r, vio_frame *f, char *err, size_t errlen) {
  AVFrame *d = r->frame;
  if (d->format == AV_PIX_FMT_YUV420P && d->width == r->w &&
      d->height == r->h) {
    int cw = (r->w + 1) / 2, ch = (r->h + 1) / 2;
    copy_plane(f->y, f->y_stride, d->data[0], d->linesize[0], r->w, r->h);
    copy_plane(f->u, f->u_stride, d->data[1], d->linesize[1], cw, ch);
    copy_plane(f->v, f->v_stride, d->data[2], d->linesize[2], cw, ch);
  } else {
    r->sws = sws_getCachedContext(r->sws, d->width, d->height, d->format, r->w,
                                  r->h, AV_PIX_FMT_YUV420P, SWS_BILINEAR, NULL,
                                  NULL, NULL);
    if (!r->sws) {
      set_err(err, errlen, "cannot convert the decoded frames", r->path, 0);
      return -1;
    }
    uint8_t *dst[4] = {f->y, f->u, f->v, NULL};
    int ls[4] = {f->y_stride, f->u_stride, f->v_stride, 0};
    sws_scale(r->sws, (const uint8_t *const *)d->data, d->linesize, 0,
              d->height, dst, ls);
  }
  f->index = r->next++;
  av_frame_unref(d);
  return 1;
}

int vio_read(vio_reader *r, vio_frame *f, char *err, size_t errlen) {
  if (f->w != r->w || f->h != r->h) {
    set_err(err, errlen, "a frame laid out for another size", r->path, 0);
    return -1;
  }
  for (;;) {
    int rc = avcodec_receive_frame(r->dec, r->frame);
    if (rc == 0)
      return deliver(r, f, err, errlen);
    if (rc == AVERROR_EOF) {
      if (r->read_error) {
        set_err(err, errlen, "cannot read", r->path, r->read_error);
        return -1;
      }
      return 0;
    }
    if ((rc != AVERROR(EAGAIN) && rc != AVERROR_INVALIDDATA) || r->flushing) {
      /* (a flushed decoder ends with AVERROR_EOF; anything else there is
       * an error too, never a reason to read on) */
      set_err(err, errlen, "decoding failed", r->path, rc);
      return -1;
    }
    rc = av_read_frame(r->ic, r->pkt);
    if (rc < 0) {
      /* the end, or a file cut short: decode what came, then say so */
      if (rc != AVERROR_EOF)
        r->read_error = rc;
      r->flushing = 1;
      avcodec_send_packet(r->dec, NULL);
      continue;
    }
    if (r->pkt->stream_index == r->stream) {
      rc = avcodec_send_packet(r->dec, r->pkt);
      if (rc < 0 && rc != AVERROR_INVALIDDATA && rc != AVERROR(EAGAIN)) {
        av_packet_unref(r->pkt);
        set_err(err, errlen, "decoding failed", r->path, rc);
        return -1;
      }
    }
    av_packet_unref(r->pkt);
  }
}
