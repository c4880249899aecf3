/* SPDX-License-Identifier: MIT */
/*
 * Video input and output for the demo (docs/video-demo.md) on FFmpeg's
 * libraries: a test clip made with libavcodec, a reader (libavformat
 * demuxing, libavcodec decoding, libswscale for frames not in 4:2:0) and
 * a writer (libavcodec encoding, libavformat muxing). H.264 through
 * libx264 when FFmpeg has it and the size is even, else MPEG-4 Part 2.
 * Errors are one line naming the file and FFmpeg's reason. No profiling
 * calls: the demo records around these (docs/internals/video-io.md).
 */
#ifndef PP_VIDEO_IO_H
#define PP_VIDEO_IO_H

#include <stddef.h>
#include <stdint.h>

/* One frame, 8-bit 4:2:0 planar, in memory the caller owns. */
typedef struct vio_frame {
  int w, h;      /* luma; chroma (w + 1) / 2 x (h + 1) / 2 */
  int64_t index; /* 0, 1, ... in presentation order (set by vio_read) */
  uint8_t *y, *u, *v;
  int y_stride, u_stride, v_stride;
} vio_frame;

/** Bytes of one w x h frame laid out by vio_frame_layout. */
size_t vio_frame_bytes(int w, int h);
/** Point f's planes into block (vio_frame_bytes(w, h) bytes): Y, U, V one
 * after the other, strides the plane widths. */
void vio_frame_layout(vio_frame *f, void *block, int w, int h);

/** The test clip's frame i (what vio_make_clip encodes): a gradient, three
 * moving discs, fine texture and a counter block. f laid out already. */
void vio_clip_frame(vio_frame *f, int64_t i);
/** Encode frames clip frames of w x h at fps into path (the container
 * from the extension, MP4 for the demo). 0, or -1 with err. */
int vio_make_clip(const char *path, int w, int h, int fps, int frames,
                  char *err, size_t errlen);

typedef struct vio_reader vio_reader;
/** Open path's best video stream for decoding with threads threads (0:
 * FFmpeg chooses). NULL with err. */
vio_reader *vio_open(const char *path, int threads, char *err, size_t errlen);
/** The stream: size, frame rate (0 unknown), frames (-1 unknown), codec. */
void vio_info(const vio_reader *r, int *w, int *h, double *fps, int64_t *frames,
              const char **codec);
/** Decode the next frame into f (laid out for the stream's size). 1 a
 * frame, 0 the end, -1 an error (err). A damaged packet is skipped. */
int vio_read(vio_reader *r, vio_frame *f, char *err, size_t errlen);
void vio_close(vio_reader *r);

typedef struct vio_writer vio_writer;
/** An encoder and muxer for w x h frames at fps into path (the container
 * from the extension). NULL with err. */
vio_writer *vio_writer_open(const char *path, int w, int h, double fps,
                            char *err, size_t errlen);
/** Encode f (frames in order). 0, or -1 with err. */
int vio_write(vio_writer *wr, const vio_frame *f, char *err, size_t errlen);
/** Flush, write the trailer, free. 0, or -1 with err; NULL is fine. */
int vio_writer_close(vio_writer *wr, char *err, size_t errlen);

/** The name of the encoder vio_make_clip and vio_writer_open use for
 * w x h frames: "libx264", "mpeg4" or "none". */
const char *vio_encoder_name(int w, int h);

#endif /* PP_VIDEO_IO_H */
