/* SPDX-License-Identifier: MIT */
/*
 * The video pipeline that `make demo` profiles (docs/video-demo.md): a
 * real H.264 clip decoded with FFmpeg, preprocessed by a fused resize +
 * colour conversion + normalisation pass, batched by the runtime's dynamic
 * batcher into a small CNN, its verdict drawn onto each frame, and the
 * frames encoded again with libavcodec. Built on the pipeline runtime
 * (pipeprof/runtime.h), so every stage, queue, batch, pool and frame is
 * recorded with no profiling code here beyond two zones, a frame mark
 * and the per-frame request.
 *
 *   decode (main thread) -> preprocess (2 threads) -> batcher
 *     -> infer (1 thread) -> postprocess -> encode
 *
 * Frames live in a pool of page-locked blocks (pageable when there is no
 * CUDA runtime, which the report says), taken by decode and given back by
 * encode, so the pool bounds the frames in flight and an empty pool holds
 * the decoder (backpressure). Each frame is a request from decoded to
 * encoded: the report's end-to-end latency per frame.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <pipeprof.h>
#include <pipeprof/runtime.h>

#include "cnn.h"
#include "preprocess.h"
#include "video_io.h"

typedef struct options {
  const char *input;   /* NULL: make a clip in dir */
  const char *dir;     /* where the clip and the output go */
  const char *output;  /* NULL: dir/annotated.mp4 */
  int width, height, frames, fps; /* the clip made */
  int batch;           /* the batcher's max batch */
  double delay_ms;     /* its max delay */
  double slo_ms;       /* > 0: adaptive batch size for this p99 */
  int size;            /* the CNN's input, size x size */
  int prep_threads;
  int decode_threads;
  const char *prep;    /* fused, separate, cuda */
} options;

typedef struct item {
  void *block; /* the frame's pool block */
  vio_frame f; /* f.index: 0, 1, ... as decoded (its id is f.index + 1) */
  float *tensor; /* from the tensor pool, until infer is done */
  int cls;
  float prob;
} item;

typedef struct demo {
  options o;
  vp_norm norm;
  int use_cuda, use_separate;
  pp_rt_pool *frames, *tensors, *scratch;
  pp_rt_batcher *batcher;
  pp_rt_sizer *sizer;
  pp_rt_pipeline *front, *back;
  cnn *net;
  vio_writer *wr;
  /* encode's reorder buffer: frames that came before their turn */
  item **pending;
  size_t npending;
  int64_t next_out;
  uint64_t class_count[CNN_CLASSES];
  uint64_t batches, batched, encoded;
  atomic_int failed;
  char err[256];
} demo;

static void fail(demo *d, const char *fmt, const char *what) {
  int expect = 0;
  if (atomic_compare_exchange_strong(&d->failed, &expect, 1))
    snprintf(d->err, sizeof d->err, fmt, what);
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- options ------------------------------------------------------------- */

static const char usage[] =
    "usage: pipeprof-example-video [options]\n"
    "\n"
    "Decode a video, preprocess, batch through a small CNN, annotate and\n"
    "encode it again, on the pipeline runtime. Run it under pipeprof:\n"
    "  pipeprof run -o DIR -- pipeprof-example-video\n"
    "\n"
    "  --input FILE      the video to process (default: make a clip)\n"
    "  --dir DIR         where the clip and the output go (default .)\n"
    "  --output FILE     the annotated video (default DIR/annotated.mp4)\n"
    "  --width W --height H --frames N --fps F\n"
    "                    the clip made without --input (640 360 240 30)\n"
    "  --batch N         the batcher's max batch, 1..64 (default 8)\n"
    "  --delay-ms D      its max delay (default 4)\n"
    "  --slo-ms D        adapt the batch size to hold this p99 of a\n"
    "                    batch's inference (default: fixed size)\n"
    "  --size S          the CNN's input, S x S, 16..512 (default 224)\n"
    "  --prep fused|separate|cuda\n"
    "                    the preprocessing (default fused; cuda falls back\n"
    "                    to fused with a line when there is no GPU)\n"
    "  --prep-threads N  preprocessing threads, 1..16 (default 2)\n"
    "  --decode-threads N  FFmpeg's decoder threads, 0..16 (default 1)\n";

static int int_arg(const char *flag, const char *v, long lo, long hi,
                   int *out) {
  char *end;
  errno = 0;
  long x = v ? strtol(v, &end, 10) : 0;
  if (!v || errno || end == v || *end || x < lo || x > hi) {
    fprintf(stderr,
            "pipeprof-example-video: %s wants a whole number from %ld to "
            "%ld, not '%s'\n",
            flag, lo, hi, v ? v : "");
    return -1;
  }
  *out = (int)x;
  return 0;
}

static int real_arg(const char *flag, const char *v, double lo, double hi,
                    double *out) {
  char *end;
  errno = 0;
  double x = v ? strtod(v, &end) : 0;
  if (!v || errno || end == v || *end || !(x >= lo && x <= hi)) {
    fprintf(stderr,
            "pipeprof-example-video: %s wants a number from %g to %g, not "
            "'%s'\n",
            flag, lo, hi, v ? v : "");
    return -1;
  }
  *out = x;
  return 0;
}

/* 0, 1 for --help, -1 after a message. */
static int parse(int argc, char **argv, options *o) {
  *o = (options){NULL, ".", NULL, 640, 360, 240, 30, 8, 4.0, 0.0, 224,
                 2, 1, "fused"};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int rc = 0;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(usage, stdout);
      return 1;
    } else if (!strcmp(a, "--input") && v)
      o->input = v;
    else if (!strcmp(a, "--dir") && v)
      o->dir = v;
    else if (!strcmp(a, "--output") && v)
      o->output = v;
    else if (!strcmp(a, "--width"))
      rc = int_arg(a, v, 16, 3840, &o->width);
    else if (!strcmp(a, "--height"))
      rc = int_arg(a, v, 16, 2160, &o->height);
    else if (!strcmp(a, "--frames"))
      rc = int_arg(a, v, 1, 100000, &o->frames);
    else if (!strcmp(a, "--fps"))
      rc = int_arg(a, v, 1, 240, &o->fps);
    else if (!strcmp(a, "--batch"))
      rc = int_arg(a, v, 1, 64, &o->batch);
    else if (!strcmp(a, "--delay-ms"))
      rc = real_arg(a, v, 0, 10000, &o->delay_ms);
    else if (!strcmp(a, "--slo-ms"))
      rc = real_arg(a, v, 0.001, 100000, &o->slo_ms);
    else if (!strcmp(a, "--size"))
      rc = int_arg(a, v, 16, 512, &o->size);
    else if (!strcmp(a, "--prep-threads"))
      rc = int_arg(a, v, 1, 16, &o->prep_threads);
    else if (!strcmp(a, "--decode-threads"))
      rc = int_arg(a, v, 0, 16, &o->decode_threads);
    else if (!strcmp(a, "--prep") && v &&
             (!strcmp(v, "fused") || !strcmp(v, "separate") ||
              !strcmp(v, "cuda")))
      o->prep = v;
    else {
      fprintf(stderr,
              "pipeprof-example-video: unknown option or missing value: "
              "'%s' (see --help)\n",
              a);
      return -1;
    }
    if (rc)
      return -1;
    i++;
  }
  if (o->width % 2 || o->height % 2) {
    fprintf(stderr, "pipeprof-example-video: --width and --height must be "
                    "even (4:2:0 video)\n");
    return -1;
  }
  return 0;
}

/* ---- stages -------------------------------------------------------------- */

/* preprocess (front pipeline): the frame into the CNN's input tensor; the
 * runtime then puts the item into the batcher (pp_rt_pipeline_to_batcher),
 * outside this stage's zone. */
static int preprocess(void *ctx, void *p, uint64_t id, void **out) {
  demo *d = ctx;
  item *it = p;
  (void)id;
  *out = NULL;
  void *t;
  if (pp_rt_pool_get(d->tensors, &t, -1) != PP_OK)
    return PP_ECLOSED;
  it->tensor = t;
  vp_yuv420 src = {it->f.w,        it->f.h,        it->f.y,
                   it->f.u,        it->f.v,        it->f.y_stride,
                   it->f.u_stride, it->f.v_stride};
  int n = d->o.size;
  if (d->use_cuda) {
    char err[160];
    if (vp_cuda_prep(&src, n, n, &d->norm, it->tensor, err, sizeof err) != 0) {
      fail(d, "preprocess on CUDA: %s", err);
      return -1;
    }
  } else if (d->use_separate) {
    void *scratch;
    if (pp_rt_pool_get(d->scratch, &scratch, -1) != PP_OK)
      return PP_ECLOSED;
    vp_prep_separate(&src, n, n, &d->norm, it->tensor, scratch);
    pp_rt_pool_put(d->scratch, scratch);
  } else {
    vp_prep_fused(&src, n, n, &d->norm, it->tensor);
  }
  *out = it;
  return PP_OK;
}

/* Draw the verdict into the frame: a bar across the top as long as the
 * probability, in a colour per class, and a class-coloured box. */
static void annotate(vio_frame *f, int cls, float prob) {
  int bar_h = f->h / 24 > 4 ? f->h / 24 : 4;
  int len = (int)((float)f->w * prob);
  uint8_t u = (uint8_t)(64 + cls * 13), v = (uint8_t)(200 - cls * 11);
  for (int y = 0; y < bar_h && y < f->h; y++)
    memset(f->y + (size_t)y * (size_t)f->y_stride, 235,
           (size_t)(len < f->w ? len : f->w));
  for (int y = 0; y < (bar_h + 1) / 2; y++) {
    int cl = (len + 1) / 2;
    memset(f->u + (size_t)y * (size_t)f->u_stride, u, (size_t)cl);
    memset(f->v + (size_t)y * (size_t)f->v_stride, v, (size_t)cl);
  }
  int bx = f->w - 3 * bar_h, by = 2 * bar_h;
  for (int y = by; y < by + 2 * bar_h && y < f->h; y++)
    for (int x = bx; x < bx + 2 * bar_h && x < f->w; x++)
      f->y[(size_t)y * (size_t)f->y_stride + (size_t)x] =
          (uint8_t)(40 + cls * 20);
}

static int postprocess(void *ctx, void *p, uint64_t id, void **out) {
  (void)ctx;
  (void)id;
  item *it = p;
  annotate(&it->f, it->cls, it->prob);
  *out = it;
  return PP_OK;
}

static void finish(demo *d, item *it) {
  pp_rt_pool_put(d->frames, it->block);
  pp_request_end((uint64_t)it->f.index + 1, 0);
  PP_FRAME_MARK("output");
  d->class_count[it->cls]++;
  d->encoded++;
  free(it);
}

/* encode (back pipeline, one thread): frames in order; one that comes
 * early waits in the reorder buffer (the preprocessing threads may swap
 * neighbours). */
static int encode(void *ctx, void *p, uint64_t id, void **out) {
  demo *d = ctx;
  item *it = p;
  (void)id;
  *out = NULL;
  d->pending[d->npending++] = it;
  for (;;) {
    size_t k = 0;
    while (k < d->npending && d->pending[k]->f.index != d->next_out)
      k++;
    if (k == d->npending)
      return PP_OK;
    item *next = d->pending[k];
    d->pending[k] = d->pending[--d->npending];
    char err[256];
    if (vio_write(d->wr, &next->f, err, sizeof err) != 0) {
      fail(d, "%s", err);
      finish(d, next);
      return -1;
    }
    d->next_out++;
    finish(d, next);
  }
}

static void drop(void *ctx, void *p, uint64_t id) {
  demo *d = ctx;
  item *it = p;
  (void)id;
  if (it->tensor)
    pp_rt_pool_put(d->tensors, it->tensor);
  pp_rt_pool_put(d->frames, it->block);
  pp_request_end((uint64_t)it->f.index + 1, 1);
  free(it);
}

/* infer (its own thread): batches from the batcher through the CNN, then
 * each item on to the back pipeline. */
static void *infer_thread(void *arg) {
  demo *d = arg;
  pp_thread_name("infer 0");
  size_t max = (size_t)d->o.batch;
  void **items = malloc(sizeof *items * max);
  uint64_t *ids = malloc(sizeof *ids * max);
  const float **imgs = malloc(sizeof *imgs * max);
  float *logits = malloc(sizeof(float) * CNN_CLASSES * max);
  size_t sb = (cnn_scratch_bytes(d->net) + 63) / 64 * 64;
  void *scratch = aligned_alloc(64, sb);
  if (!items || !ids || !imgs || !logits || !scratch) {
    fail(d, "%s", "infer: out of memory");
    pp_rt_batcher_close(d->batcher);
  }
  pp_rt_batch bt = {items, ids, 0, 0, 0, 0};
  while (scratch && pp_rt_batcher_next(d->batcher, &bt, -1) == PP_OK) {
    for (size_t i = 0; i < bt.n; i++)
      imgs[i] = ((item *)items[i])->tensor;
    int64_t t0 = now_ns();
    PP_ZONE_BEGIN(z, "infer");
    cnn_forward(d->net, imgs, (int)bt.n, logits, scratch);
    PP_ZONE_END(z);
    if (d->sizer)
      pp_rt_batcher_set_max(d->batcher,
                            pp_rt_sizer_observe(d->sizer, now_ns() - t0));
    d->batches++;
    d->batched += bt.n;
    for (size_t i = 0; i < bt.n; i++) {
      item *it = items[i];
      it->cls = cnn_top(logits + i * CNN_CLASSES, &it->prob);
      pp_rt_pool_put(d->tensors, it->tensor);
      it->tensor = NULL;
      if (pp_rt_pipeline_submit(d->back, it, ids[i], -1) != PP_OK)
        drop(d, it, ids[i]);
    }
  }
  free(scratch);
  free(logits);
  free(imgs);
  free(ids);
  free(items);
  return NULL;
}

/* ---- set-up and the decode loop ----------------------------------------- */

static int setup(demo *d, int w, int h, double fps, const char *out_path) {
  options *o = &d->o;
  d->norm = vp_norm_imagenet;
  d->use_separate = !strcmp(o->prep, "separate");
  if (!strcmp(o->prep, "cuda")) {
    char err[200];
    if (vp_cuda_open(err, sizeof err) == 0)
      d->use_cuda = 1;
    else
      printf("preprocess on CUDA: %s; using the fused CPU pass\n", err);
  }
  /* frames in flight: every queue's worth and two batches */
  size_t nframes = 24 + 2 * (size_t)o->batch;
  d->frames = pp_rt_pool_new("frames", PP_RT_MEM_PINNED, 0,
                             vio_frame_bytes(w, h), nframes);
  size_t tensor = sizeof(float) * 3 * (size_t)o->size * (size_t)o->size;
  /* tensors in flight: a full batcher (2 batches), the batch in infer and
   * one per preprocessing thread, so that a full batcher, not an empty
   * pool, holds the preprocessing (outside its zone) */
  d->tensors =
      pp_rt_pool_new("tensors", PP_RT_MEM_HOST, 0, tensor,
                     3 * (size_t)o->batch + (size_t)o->prep_threads + 1);
  if (d->use_separate)
    d->scratch = pp_rt_pool_new(
        "separate scratch", PP_RT_MEM_HOST, 0,
        vp_prep_separate_scratch_bytes(w, h, o->size, o->size),
        (size_t)o->prep_threads);
  if (!d->frames || !d->tensors || (d->use_separate && !d->scratch)) {
    fail(d, "memory pools: %s", *pp_rt_error() ? pp_rt_error() : "no memory");
    return -1;
  }
  pp_rt_pool_info pi;
  pp_rt_pool_info_get(d->frames, &pi);
  if (pi.reason[0])
    printf("frame pool: page-locked memory unavailable: %s; pageable "
           "memory instead\n",
           pi.reason);
  d->pending = calloc(nframes, sizeof *d->pending);
  d->net = cnn_new(o->size, o->size, 2026);
  d->batcher = pp_rt_batcher_new("batches", (size_t)o->batch,
                                 (int64_t)(o->delay_ms * 1e6), 1,
                                 (size_t)o->batch * 2, PP_RT_PAD_NONE);
  if (!d->pending || !d->net || !d->batcher) {
    fail(d, "%s", "out of memory");
    return -1;
  }
  pp_rt_batcher_stages(d->batcher, "preprocess", "infer");
  if (o->slo_ms > 0) {
    d->sizer = pp_rt_sizer_new("infer", 1, (size_t)o->batch,
                               (int64_t)(o->slo_ms * 1e6), 16);
    if (!d->sizer) {
      fail(d, "%s", "out of memory");
      return -1;
    }
    pp_rt_batcher_set_max(d->batcher, pp_rt_sizer_size(d->sizer));
  }
  char err[256];
  d->wr = vio_writer_open(out_path, w, h, fps, err, sizeof err);
  if (!d->wr) {
    fail(d, "%s", err);
    return -1;
  }
  d->front = pp_rt_pipeline_new("frames", drop, d);
  d->back = pp_rt_pipeline_new("results", drop, d);
  if (!d->front || !d->back ||
      pp_rt_pipeline_ends(d->front, "decode", NULL) != PP_OK ||
      pp_rt_stage_add(d->front, "preprocess", o->prep_threads, 8, preprocess,
                      d) != PP_OK ||
      pp_rt_pipeline_to_batcher(d->front, d->batcher, 0) != PP_OK ||
      pp_rt_pipeline_ends(d->back, "infer", NULL) != PP_OK ||
      pp_rt_stage_add(d->back, "postprocess", 1, (size_t)o->batch * 2,
                      postprocess, d) != PP_OK ||
      pp_rt_stage_add(d->back, "encode", 1, 8, encode, d) != PP_OK ||
      pp_rt_pipeline_start(d->front) != PP_OK ||
      pp_rt_pipeline_start(d->back) != PP_OK) {
    fail(d, "%s", "cannot start the pipelines");
    return -1;
  }
  return 0;
}

/* Decode every frame into a pool block and submit it; 0, or -1. */
static int decode_all(demo *d, vio_reader *r, int w, int h) {
  for (;;) {
    void *block;
    if (atomic_load(&d->failed) ||
        pp_rt_pool_get(d->frames, &block, -1) != PP_OK)
      return -1;
    item *it = calloc(1, sizeof *it);
    if (!it) {
      pp_rt_pool_put(d->frames, block);
      fail(d, "%s", "out of memory");
      return -1;
    }
    it->block = block;
    vio_frame_layout(&it->f, block, w, h);
    char err[256];
    PP_ZONE_BEGIN(z, "decode");
    int rc = vio_read(r, &it->f, err, sizeof err);
    PP_ZONE_END(z);
    if (rc <= 0) {
      pp_rt_pool_put(d->frames, block);
      free(it);
      if (rc < 0)
        fail(d, "%s", err);
      return rc;
    }
    /* a frame's request: decoded to encoded (the read that finds the end
     * is no frame, so the request begins once the frame is there) */
    uint64_t id = (uint64_t)it->f.index + 1;
    pp_request_begin(id);
    if (pp_rt_pipeline_submit(d->front, it, id, -1) != PP_OK) {
      drop(d, it, 0);
      return -1;
    }
  }
}

static void teardown(demo *d) {
  pp_rt_pipeline_free(d->front);
  pp_rt_pipeline_free(d->back);
  for (size_t i = 0; i < d->npending; i++)
    drop(d, d->pending[i], 0);
  char err[256];
  if (d->wr && vio_writer_close(d->wr, err, sizeof err) != 0)
    fail(d, "%s", err);
  pp_rt_batcher_free(d->batcher);
  pp_rt_sizer_free(d->sizer);
  pp_rt_pool_free(d->frames);
  pp_rt_pool_free(d->tensors);
  pp_rt_pool_free(d->scratch);
  cnn_free(d->net);
  free(d->pending);
}

int main(int argc, char **argv) {
  demo d;
  memset(&d, 0, sizeof d);
  int prc = parse(argc, argv, &d.o);
  if (prc)
    return prc > 0 ? 0 : 2;
  options *o = &d.o;
  if (mkdir(o->dir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "pipeprof-example-video: cannot create %s: %s\n", o->dir,
            strerror(errno));
    return 1;
  }
  char clip[PATH_MAX], out_path[PATH_MAX], err[256];
  const char *in_path = o->input;
  if (!in_path) {
    snprintf(clip, sizeof clip, "%s/clip-%dx%d-%d.mp4", o->dir, o->width,
             o->height, o->frames);
    if (access(clip, R_OK) != 0) {
      PP_ZONE_BEGIN(z, "make clip");
      int rc = vio_make_clip(clip, o->width, o->height, o->fps, o->frames, err,
                             sizeof err);
      PP_ZONE_END(z);
      if (rc != 0) {
        fprintf(stderr, "pipeprof-example-video: %s\n", err);
        return 1;
      }
    }
    in_path = clip;
  }
  snprintf(out_path, sizeof out_path, "%s",
           o->output ? o->output : "annotated.mp4");
  if (!o->output)
    snprintf(out_path, sizeof out_path, "%s/annotated.mp4", o->dir);
  vio_reader *r = vio_open(in_path, o->decode_threads, err, sizeof err);
  if (!r) {
    fprintf(stderr, "pipeprof-example-video: %s\n", err);
    return 1;
  }
  int w, h;
  double fps;
  int64_t nframes;
  const char *codec;
  vio_info(r, &w, &h, &fps, &nframes, &codec);
  pp_thread_name("decode");
  int64_t t0 = now_ns();
  int rc = setup(&d, w, h, fps > 0 ? fps : 30, out_path);
  pthread_t infer;
  int have_infer = 0;
  if (rc == 0) {
    have_infer = pthread_create(&infer, NULL, infer_thread, &d) == 0;
    if (!have_infer)
      fail(&d, "%s", "cannot start the infer thread");
  }
  if (rc == 0 && have_infer) {
    rc = decode_all(&d, r, w, h);
    if (rc != 0)
      pp_rt_pipeline_cancel(d.front);
    /* the frames in flight finish, stage by stage */
    if (pp_rt_pipeline_drain(d.front) != PP_OK)
      rc = -1;
    pp_rt_batcher_close(d.batcher);
    pthread_join(infer, NULL);
    if (pp_rt_pipeline_drain(d.back) != PP_OK)
      rc = -1;
  }
  double secs = (double)(now_ns() - t0) / 1e9;
  double mflop = d.net ? (double)cnn_flops(d.net) / 1e6 : 0;
  vio_close(r);
  teardown(&d);
  if (atomic_load(&d.failed) || rc != 0) {
    fprintf(stderr, "pipeprof-example-video: %s\n",
            d.err[0] ? d.err : "the pipeline failed");
    return 1;
  }
  printf("video: %s, %dx%d %s, %" PRIu64 " frames in %.2f s (%.1f frames/s)\n",
         in_path, w, h, codec, d.encoded, secs, (double)d.encoded / secs);
  printf("preprocess: %s to %dx%d; CNN: %.1f MFLOP a frame; %" PRIu64
         " batches, %.2f frames a batch (max %d)\n",
         d.use_cuda ? "CUDA" : o->prep, o->size, o->size,
         mflop, d.batches,
         d.batches ? (double)d.batched / (double)d.batches : 0.0, o->batch);
  printf("classes:");
  for (int k = 0; k < CNN_CLASSES; k++)
    printf(" %" PRIu64, d.class_count[k]);
  printf("\nwrote %s\n", out_path);
  return 0;
}
