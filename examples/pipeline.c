/* SPDX-License-Identifier: MIT */
/*
 * The example that `make demo` profiles: a six-stage video-analytics
 * pipeline that does real work on synthetic frames. One thread per stage,
 * joined by bounded queues (capacity 4; a producer blocks while its queue is
 * full):
 *
 *   source -> preprocess -> detect -> motion -> match -> visualize
 *
 * source renders grayscale frames with textured objects moving over a noisy
 * background; preprocess resizes them to half size (bilinear) and normalises
 * to float; detect runs an 11x11 convolution, Sobel edges and a flood fill
 * into bounding boxes; motion does 8x8 block matching (+-4 px, SAD, both
 * ways with a consistency check) against the previous frame; match
 * associates detections with tracks by IoU after motion compensation;
 * visualize draws everything into an RGB buffer and folds it into a
 * checksum. Each frame is a flow ("frame") followed across the six
 * threads. The five queues between stages are declared to the profiler
 * (PP_QUEUE_DECLARE, named "<producer>-><consumer>") with their stages and
 * capacity; pushes, pops and the time a producer waits on a full queue or
 * a consumer on an empty one are recorded inside the queue's lock, so
 * `pipeprof report` shows queue depths and waits, the stage that bounds
 * throughput and recommendations. Stage zones are named like the stages.
 *
 * Everything is deterministic for given flags, whatever the thread timing,
 * so the profiled and the PP_DISABLE builds print the same checksum. Frame
 * buffers come from a fixed pool allocated up front and returned by the
 * last stage, so the run allocates nothing after start-up.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pipeprof.h>

/* Direct calls into the library vanish with the macros under PP_DISABLE:
 * the unprofiled build is not linked with libpipeprof at all. */
#if defined(PP_DISABLE)
#define THREAD_NAME(name) ((void)0)
#else
#define THREAD_NAME(name) pp_thread_name(name)
#endif

enum {
  N_STAGES = 6,
  QUEUE_CAP = 4,
  /* Most frames ever in flight: every queue full plus one per stage. */
  POOL_MAX = (N_STAGES - 1) * QUEUE_CAP + N_STAGES,
  N_OBJECTS = 7,   /* object slots in the synthetic scene */
  KSIZE = 11,      /* blur kernel size */
  KRAD = KSIZE / 2,
  BLOCK = 8,       /* motion block size, half-resolution pixels */
  SEARCH = 4,      /* motion search range, +-pixels */
  MIN_AREA = 30,   /* smallest blob kept, half-resolution pixels */
  MAX_CANDS = 256, /* blobs considered per frame */
  MAX_DETS = 64,   /* detections kept per frame */
  MAX_TRACKS = 64,
  MAX_MISSED = 5, /* frames a track survives without a detection */
  MIN_DIM = 32,
  MAX_DIM = 4096,
  MAX_PIXELS = 3840 * 2160,
  MAX_FRAMES = 100000000
};

/* Squared Sobel magnitude above which a pixel is an edge, in normalised
 * units (the frame has mean 0 and standard deviation 1). */
#define EDGE_THRESHOLD2 1.0f
/* Smallest IoU that links a detection to a track. */
#define MIN_IOU 0.1

/* ------------------------------------------------------------------------ */
/* Frames and queues                                                        */
/* ------------------------------------------------------------------------ */

/* Half-resolution box: x0, y0 inclusive, x1, y1 exclusive. */
typedef struct box {
  int x0, y0, x1, y1;
} box;

typedef struct detection {
  box b;
  int area;     /* pixels in the blob */
  int mvx, mvy; /* mean motion inside the box, set by match */
  int track;    /* track id, set by match; 0 = none */
} detection;

typedef struct frame {
  uint64_t id;   /* 1-based frame number, also the flow id */
  uint8_t *gray; /* full resolution, width * height */
  float *norm;   /* half resolution, normalised */
  int8_t *mv;    /* motion per block: (dx, dy) pairs, since last frame */
  int ndet;
  detection det[MAX_DETS];
} frame;

typedef struct queue {
  pthread_mutex_t mu;
  pthread_cond_t not_empty;
  pthread_cond_t not_full;
  frame *items[POOL_MAX];
  int cap;
  int head;
  int count;
  int closed;
  pp_queue *prof; /* the profiler's handle; NULL: not profiled */
} queue;

/* name, from and to are string literals (or NULL for a queue the profiler
 * does not see). */
static void queue_init(queue *q, int cap, const char *name, const char *from,
                       const char *to) {
  memset(q, 0, sizeof *q);
  pthread_mutex_init(&q->mu, NULL);
  pthread_cond_init(&q->not_empty, NULL);
  pthread_cond_init(&q->not_full, NULL);
  q->cap = cap;
  q->prof = name ? PP_QUEUE_DECLARE(name, from, to, cap) : NULL;
  (void)from;
  (void)to;
}

static void queue_destroy(queue *q) {
  pthread_cond_destroy(&q->not_full);
  pthread_cond_destroy(&q->not_empty);
  pthread_mutex_destroy(&q->mu);
}

/* Append f, blocking while the queue is full. Stores the depth after the
 * push in *depth; returns 1 when the caller had to wait, else 0. Never
 * called on a closed queue: only the producer closes it. */
static int queue_push(queue *q, frame *f, int *depth) {
  int waited = 0;
  pthread_mutex_lock(&q->mu);
  if (q->count == q->cap)
    PP_QUEUE_WAIT_BEGIN(q->prof, PP_QUEUE_FULL);
  while (q->count == q->cap) {
    waited = 1;
    pthread_cond_wait(&q->not_full, &q->mu);
  }
  if (waited)
    PP_QUEUE_WAIT_END(q->prof, PP_QUEUE_FULL);
  q->items[(q->head + q->count) % q->cap] = f;
  q->count++;
  PP_QUEUE_PUSH(q->prof, f->id);
  *depth = q->count;
  pthread_cond_signal(&q->not_empty);
  pthread_mutex_unlock(&q->mu);
  return waited;
}

/* Remove the oldest frame, blocking while the queue is empty. Returns NULL
 * once the queue is closed and drained. Stores the depth after the pop. */
static frame *queue_pop(queue *q, int *depth) {
  frame *f = NULL;
  int waited = 0;
  pthread_mutex_lock(&q->mu);
  if (q->count == 0 && !q->closed) {
    PP_QUEUE_WAIT_BEGIN(q->prof, PP_QUEUE_EMPTY);
    waited = 1;
  }
  while (q->count == 0 && !q->closed)
    pthread_cond_wait(&q->not_empty, &q->mu);
  if (waited)
    PP_QUEUE_WAIT_END(q->prof, PP_QUEUE_EMPTY);
  if (q->count > 0) {
    f = q->items[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    PP_QUEUE_POP(q->prof, f->id);
    pthread_cond_signal(&q->not_full);
  }
  *depth = q->count;
  pthread_mutex_unlock(&q->mu);
  return f;
}

/* No more pushes: consumers drain what is left, then get NULL. */
static void queue_close(queue *q) {
  pthread_mutex_lock(&q->mu);
  q->closed = 1;
  pthread_cond_broadcast(&q->not_empty);
  pthread_mutex_unlock(&q->mu);
}

/* Queue operations between stages; the profiler sees them through the
 * queue's handle (queue_push, queue_pop). Waiting is deliberately outside
 * any zone, so a stage's zone time is its real work. */
#define PUSH(q, f)                                                          \
  do {                                                                      \
    int depth_;                                                             \
    queue_push((q), (f), &depth_);                                          \
  } while (0)

#define POP(q, out)                                                         \
  do {                                                                      \
    int depth_;                                                             \
    (out) = queue_pop((q), &depth_);                                        \
  } while (0)

/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct options {
  int frames;
  int width;
  int height;
  double fps; /* 0: unlimited */
  int quiet;
} options;

static const char usage_text[] =
    "usage: pipeline [options]\n"
    "\n"
    "Run a six-stage video-analytics pipeline (source, preprocess, detect,\n"
    "motion, match, visualize; one thread each) on synthetic frames and\n"
    "print one summary line. Profile it with PIPEPROF=1 in the environment,\n"
    "under `pipeprof run -- PROGRAM`, or with `pipeprof demo`.\n"
    "\n"
    "options:\n"
    "  --frames N   frames to process, 0..100000000 (default 300)\n"
    "  --width W    frame width in pixels, 32..4096 (default 640)\n"
    "  --height H   frame height in pixels, 32..4096 (default 360)\n"
    "               width * height at most 3840 * 2160\n"
    "  --fps F      limit the source to F frames per second, 0 = unlimited\n"
    "               (default 0)\n"
    "  --quiet      no progress lines on stderr\n"
    "  --help       print this help and exit\n";

/* Print "pipeline: <reason>" and exit 2 (misuse). */
static void die_usage(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
static void die_usage(const char *fmt, ...) {
  va_list ap;
  fputs("pipeline: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(2);
}

static int parse_int(const char *flag, const char *s, long lo, long hi) {
  char *end;
  long v;
  if (s[0] < '0' || s[0] > '9')
    die_usage("invalid value for %s: '%s'", flag, s);
  errno = 0;
  v = strtol(s, &end, 10);
  if (*end != '\0')
    die_usage("invalid value for %s: '%s'", flag, s);
  if (errno == ERANGE || v < lo || v > hi)
    die_usage("value for %s out of range: '%s'", flag, s);
  return (int)v;
}

static double parse_fps(const char *flag, const char *s) {
  char *end;
  double v;
  if ((s[0] < '0' || s[0] > '9') && s[0] != '.')
    die_usage("invalid value for %s: '%s'", flag, s);
  errno = 0;
  v = strtod(s, &end);
  if (*end != '\0' || end == s)
    die_usage("invalid value for %s: '%s'", flag, s);
  if (errno == ERANGE || !isfinite(v) || v < 0.0 || v > 1e6)
    die_usage("value for %s out of range: '%s'", flag, s);
  return v;
}

static void parse_args(int argc, char **argv, options *o) {
  o->frames = 300;
  o->width = 640;
  o->height = 360;
  o->fps = 0.0;
  o->quiet = 0;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char *val = NULL;
    char flag[32];
    size_t len;
    const char *eq;
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      fputs(usage_text, stdout);
      exit(0);
    }
    if (strcmp(arg, "--quiet") == 0) {
      o->quiet = 1;
      continue;
    }
    if (strncmp(arg, "--", 2) != 0)
      die_usage("unexpected argument '%s'", arg);
    /* --flag value or --flag=value */
    eq = strchr(arg, '=');
    len = eq ? (size_t)(eq - arg) : strlen(arg);
    if (len >= sizeof flag)
      die_usage("unknown option '%s'", arg);
    memcpy(flag, arg, len);
    flag[len] = '\0';
    if (strcmp(flag, "--quiet") == 0 || strcmp(flag, "--help") == 0)
      die_usage("%s takes no value", flag);
    if (strcmp(flag, "--frames") != 0 && strcmp(flag, "--width") != 0 &&
        strcmp(flag, "--height") != 0 && strcmp(flag, "--fps") != 0)
      die_usage("unknown option '%s'", flag);
    if (eq) {
      val = eq + 1;
    } else {
      if (i + 1 >= argc)
        die_usage("%s needs a value", flag);
      val = argv[++i];
    }
    if (strcmp(flag, "--frames") == 0)
      o->frames = parse_int(flag, val, 0, MAX_FRAMES);
    else if (strcmp(flag, "--width") == 0)
      o->width = parse_int(flag, val, MIN_DIM, MAX_DIM);
    else if (strcmp(flag, "--height") == 0)
      o->height = parse_int(flag, val, MIN_DIM, MAX_DIM);
    else
      o->fps = parse_fps(flag, val);
  }
  if ((long)o->width * o->height > MAX_PIXELS)
    die_usage("frame too large: %dx%d (at most 3840 * 2160 pixels)",
              o->width, o->height);
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9u;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebu;
  x ^= x >> 31;
  return x;
}

/* splitmix64 step: a small, fast deterministic generator. */
static uint64_t rng_next(uint64_t *s) {
  *s += 0x9e3779b97f4a7c15u;
  return mix64(*s);
}

static int rng_range(uint64_t *s, int lo, int hi) {
  if (hi <= lo)
    return lo;
  return lo + (int)(rng_next(s) % (uint64_t)(hi - lo + 1));
}

static int clamp_int(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------------ */
/* Stage state: each stage's buffers, touched only by its own thread        */
/* ------------------------------------------------------------------------ */

typedef struct source_state {
  uint8_t *background; /* static scene, width * height */
} source_state;

typedef struct preprocess_state {
  int *x0, *x1; /* source columns per output column */
  float *fx;    /* weight of x1 */
  int *y0, *y1;
  float *fy;
} preprocess_state;

typedef struct detect_state {
  float *padded; /* (hw + 2 * KRAD) * (hh + 2 * KRAD) */
  float *blur;   /* hw * hh */
  uint8_t *mask; /* hw * hh: 0 background, 1 edge, 2 visited */
  int *stack;    /* flood fill, hw * hh */
  float kernel[KSIZE * KSIZE];
  int ncand;
  detection cand[MAX_CANDS];
} detect_state;

typedef struct motion_state {
  float *prev;      /* previous normalised frame */
  int8_t *backward; /* motion found searching from prev, like frame.mv */
  int have_prev;
} motion_state;

typedef struct track {
  int id;
  box b;
  int missed;
} track;

typedef struct match_state {
  int ntracks;
  int next_id;
  track tracks[MAX_TRACKS];
} match_state;

typedef struct visualize_state {
  uint8_t *rgb; /* width * height * 3 */
  uint64_t checksum;
  int frames_out;
} visualize_state;

typedef struct pipeline {
  options opt;
  int w, h;   /* full resolution */
  int hw, hh; /* half resolution */
  int bw, bh; /* motion blocks */
  int npool;
  frame *pool;
  queue free_frames; /* visualize -> source */
  queue q_preprocess;
  queue q_detect;
  queue q_motion;
  queue q_match;
  queue q_visualize;
  source_state src;
  preprocess_state pre;
  detect_state det;
  motion_state mot;
  match_state mat;
  visualize_state vis;
} pipeline;

/* ------------------------------------------------------------------------ */
/* 1. source                                                                */
/* ------------------------------------------------------------------------ */

typedef struct object {
  int x, y, w, h; /* full-resolution position (top left) and size */
  int base;       /* brightness */
  int ellipse;
  uint64_t texture;
} object;

/* Reflect p into [0, len], so objects bounce off the frame edges. */
/* Compute kernels hold no zone and stay out of line, unspecialised and
 * cache-line aligned, in the profiled and the PP_DISABLE builds alike: the
 * functions that call them hold the zones, so a zone's calls never share a
 * function (and its registers) with a hot inner loop, and both builds run
 * the same machine code for the work itself. That is what makes the
 * with/without comparison of pipeprof-bench measure the instrumentation
 * and not a difference in code generation (GCC once specialised a kernel
 * in one build only: 6% on that kernel). See docs/api.md, "Where to put
 * zones". */
#if defined(__GNUC__) && !defined(__clang__)
#define KERNEL __attribute__((noinline, noclone, aligned(64)))
#else
#define KERNEL __attribute__((noinline, aligned(64)))
#endif

static int64_t bounce(int64_t p, int64_t len) {
  int64_t m;
  if (len <= 0)
    return 0;
  m = p % (2 * len);
  if (m < 0)
    m += 2 * len;
  return m > len ? 2 * len - m : m;
}

/* Object slot k at frame id. Each slot lives for a period, then respawns
 * elsewhere with a new look: that is what creates and ends tracks. */
static void object_at(const pipeline *p, int k, uint64_t id, object *o) {
  uint64_t period = 80 + 29 * (uint64_t)k;
  uint64_t t = id + 41 * (uint64_t)k;
  uint64_t gen = t / period;
  int64_t age = (int64_t)(t % period);
  uint64_t s = mix64(((uint64_t)k << 40) ^ gen ^ 0x5eedu);
  int vx, vy, x0, y0;
  o->w = rng_range(&s, p->w / 16, p->w / 7);
  o->h = rng_range(&s, p->h / 12, p->h / 5);
  x0 = rng_range(&s, 0, p->w - o->w);
  y0 = rng_range(&s, 0, p->h - o->h);
  vx = rng_range(&s, -20, 20); /* quarter pixels per frame */
  vy = rng_range(&s, -12, 12);
  if (vx > -4 && vx < 4)
    vx = vx < 0 ? -4 : 4;
  o->base = rng_range(&s, 150, 205);
  o->ellipse = (int)(rng_next(&s) & 1);
  o->texture = rng_next(&s);
  o->x = (int)(bounce(4 * (int64_t)x0 + vx * age,
                      4 * (int64_t)(p->w - o->w)) / 4);
  o->y = (int)(bounce(4 * (int64_t)y0 + vy * age,
                      4 * (int64_t)(p->h - o->h)) / 4);
}

static void draw_object(const pipeline *p, const object *o, uint8_t *img) {
  int64_t hw2 = (int64_t)o->w * o->w, hh2 = (int64_t)o->h * o->h;
  for (int y = 0; y < o->h; y++) {
    uint8_t *row = img + (size_t)(o->y + y) * p->w + o->x;
    int64_t dy = 2 * y + 1 - o->h;
    for (int x = 0; x < o->w; x++) {
      uint64_t cell;
      if (o->ellipse) {
        int64_t dx = 2 * x + 1 - o->w;
        if (dx * dx * hh2 + dy * dy * hw2 > hw2 * hh2)
          continue;
      }
      /* 8x8 cells of random brightness: texture for the block matcher */
      cell = mix64(o->texture ^ ((uint64_t)(x >> 3) << 20) ^
                   (uint64_t)(y >> 3));
      row[x] = (uint8_t)(o->base + (int)(cell & 63) - 32);
    }
  }
}

KERNEL static void render_objects(pipeline *p, frame *f) {
  memcpy(f->gray, p->src.background, (size_t)p->w * p->h);
  for (int k = 0; k < N_OBJECTS; k++) {
    object o;
    object_at(p, k, f->id, &o);
    draw_object(p, &o, f->gray);
  }
}

KERNEL static void add_noise(pipeline *p, frame *f) {
  size_t n = (size_t)p->w * p->h;
  uint64_t s = mix64(f->id * 0x2545f4914f6cdd1du);
  /* sensor noise: sum of two uniform bytes, about +-16 levels */
  for (size_t i = 0; i < n; i += 4) {
    uint64_t r = rng_next(&s);
    for (size_t j = i; j < i + 4 && j < n; j++) {
      int v = f->gray[j] + (int)((r & 0xff) + ((r >> 8) & 0xff)) / 16 - 16;
      f->gray[j] = (uint8_t)clamp_int(v, 0, 255);
      r >>= 16;
    }
  }
}

static void source_render(pipeline *p, frame *f) {
  {
    PP_ZONE("objects");
    render_objects(p, f);
  }
  {
    PP_ZONE("noise");
    add_noise(p, f);
  }
}

/* Sleep until frame i is due when --fps is set. */
static void pace(const struct timespec *start, int i, double fps) {
  double due = (double)i / fps;
  struct timespec ts = *start;
  double whole = floor(due);
  ts.tv_sec += (time_t)whole;
  ts.tv_nsec += (long)((due - whole) * 1e9);
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
         EINTR) {
  }
}

static void *source_main(void *arg) {
  pipeline *p = arg;
  struct timespec start;
  THREAD_NAME("source");
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (int i = 0; i < p->opt.frames; i++) {
    frame *f;
    int depth;
    if (p->opt.fps > 0.0)
      pace(&start, i, p->opt.fps);
    f = queue_pop(&p->free_frames, &depth); /* never empty: see POOL_MAX */
    {
      PP_ZONE("source");
      f->id = (uint64_t)i + 1;
      f->ndet = 0;
      PP_FLOW_BEGIN("frame", f->id);
      source_render(p, f);
    }
    PUSH(&p->q_preprocess, f);
  }
  queue_close(&p->q_preprocess);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* 2. preprocess                                                            */
/* ------------------------------------------------------------------------ */

/* Bilinear sample positions, pixel centres aligned. */
static void resize_table(int src, int dst, int *i0, int *i1, float *frac) {
  double scale = (double)src / dst;
  for (int i = 0; i < dst; i++) {
    double s = (i + 0.5) * scale - 0.5;
    int a;
    if (s < 0.0)
      s = 0.0;
    a = (int)s;
    if (a > src - 1)
      a = src - 1;
    i0[i] = a;
    i1[i] = a + 1 < src ? a + 1 : src - 1;
    frac[i] = (float)(s - a);
  }
}

KERNEL static void resize(pipeline *p, frame *f) {
  const preprocess_state *st = &p->pre;
  for (int y = 0; y < p->hh; y++) {
    const uint8_t *r0 = f->gray + (size_t)st->y0[y] * p->w;
    const uint8_t *r1 = f->gray + (size_t)st->y1[y] * p->w;
    float fy = st->fy[y];
    float *out = f->norm + (size_t)y * p->hw;
    for (int x = 0; x < p->hw; x++) {
      float fx = st->fx[x];
      float top = r0[st->x0[x]] + fx * (r0[st->x1[x]] - r0[st->x0[x]]);
      float bot = r1[st->x0[x]] + fx * (r1[st->x1[x]] - r1[st->x0[x]]);
      out[x] = top + fy * (bot - top);
    }
  }
}

KERNEL static void normalize(pipeline *p, frame *f) {
  size_t n = (size_t)p->hw * p->hh;
  double sum = 0.0, sum2 = 0.0, mean, var;
  float m, inv;
  for (size_t i = 0; i < n; i++) {
    double v = f->norm[i];
    sum += v;
    sum2 += v * v;
  }
  mean = sum / (double)n;
  var = sum2 / (double)n - mean * mean;
  m = (float)mean;
  inv = (float)(1.0 / sqrt(var > 1e-6 ? var : 1e-6));
  for (size_t i = 0; i < n; i++)
    f->norm[i] = (f->norm[i] - m) * inv;
}

static void preprocess_frame(pipeline *p, frame *f) {
  {
    PP_ZONE("resize");
    resize(p, f);
  }
  {
    PP_ZONE("normalize");
    normalize(p, f);
  }
}

static void *preprocess_main(void *arg) {
  pipeline *p = arg;
  frame *f;
  THREAD_NAME("preprocess");
  for (;;) {
    POP(&p->q_preprocess, f);
    if (!f)
      break;
    {
      PP_ZONE("preprocess");
      PP_FLOW_STEP("frame", f->id);
      preprocess_frame(p, f);
    }
    PUSH(&p->q_detect, f);
  }
  queue_close(&p->q_detect);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* 3. detect                                                                */
/* ------------------------------------------------------------------------ */

/* 11x11 binomial kernel (rows of Pascal's triangle, 1 10 45 ... 1)^2 /
 * 2^20, applied as one direct 2-D convolution the way a detector's first
 * layer would be: 121 multiply-adds per pixel. */
static void detect_init_kernel(detect_state *st) {
  int b[KSIZE];
  b[0] = 1;
  for (int i = 1; i < KSIZE; i++)
    b[i] = b[i - 1] * (KSIZE - i) / i;
  for (int i = 0; i < KSIZE; i++)
    for (int j = 0; j < KSIZE; j++)
      st->kernel[i * KSIZE + j] =
          (float)(b[i] * b[j]) / (float)(1 << (2 * (KSIZE - 1)));
}

KERNEL static void convolve(pipeline *p, const frame *f) {
  detect_state *st = &p->det;
  int pw = p->hw + 2 * KRAD, ph = p->hh + 2 * KRAD;
  /* replicate the border into the padded copy */
  for (int y = 0; y < ph; y++) {
    int sy = clamp_int(y - KRAD, 0, p->hh - 1);
    const float *src = f->norm + (size_t)sy * p->hw;
    float *dst = st->padded + (size_t)y * pw;
    for (int x = 0; x < KRAD; x++) {
      dst[x] = src[0];
      dst[KRAD + p->hw + x] = src[p->hw - 1];
    }
    memcpy(dst + KRAD, src, (size_t)p->hw * sizeof *src);
  }
  for (int y = 0; y < p->hh; y++) {
    /* restrict: blur and padded never overlap; this lets the compiler
     * vectorise the same way in the profiled and PP_DISABLE builds */
    float *restrict out = st->blur + (size_t)y * p->hw;
    for (int x = 0; x < p->hw; x++)
      out[x] = 0.0f;
    for (int ky = 0; ky < KSIZE; ky++) {
      const float *row = st->padded + (size_t)(y + ky) * pw;
      for (int kx = 0; kx < KSIZE; kx++) {
        float k = st->kernel[ky * KSIZE + kx];
        const float *restrict in = row + kx;
        for (int x = 0; x < p->hw; x++)
          out[x] += k * in[x];
      }
    }
  }
}

KERNEL static void edges(pipeline *p) {
  detect_state *st = &p->det;
  int w = p->hw, h = p->hh;
  memset(st->mask, 0, (size_t)w * h);
  for (int y = 1; y < h - 1; y++) {
    const float *a = st->blur + (size_t)(y - 1) * w;
    const float *b = a + w;
    const float *c = b + w;
    uint8_t *m = st->mask + (size_t)y * w;
    for (int x = 1; x < w - 1; x++) {
      float gx = (a[x + 1] + 2.0f * b[x + 1] + c[x + 1]) -
                 (a[x - 1] + 2.0f * b[x - 1] + c[x - 1]);
      float gy = (c[x - 1] + 2.0f * c[x] + c[x + 1]) -
                 (a[x - 1] + 2.0f * a[x] + a[x + 1]);
      m[x] = (uint8_t)(gx * gx + gy * gy > EDGE_THRESHOLD2);
    }
  }
}

static int box_contains(const box *outer, const box *inner) {
  return inner->x0 >= outer->x0 && inner->y0 >= outer->y0 &&
         inner->x1 <= outer->x1 && inner->y1 <= outer->y1;
}

/* Flood-fill 8-connected edge pixels into blobs, keep the large ones and
 * drop those nested inside another (texture edges inside an object). */
KERNEL static void blobs(pipeline *p, frame *f) {
  detect_state *st = &p->det;
  int w = p->hw, h = p->hh;
  st->ncand = 0;
  for (int y = 0; y < h; y++) {
    for (int x = 0; x < w; x++) {
      int top = 0, area = 0;
      box b = {x, y, x + 1, y + 1};
      if (st->mask[(size_t)y * w + x] != 1)
        continue;
      st->mask[(size_t)y * w + x] = 2;
      st->stack[top++] = y * w + x;
      while (top > 0) {
        int i = st->stack[--top], cx = i % w, cy = i / w;
        area++;
        if (cx < b.x0)
          b.x0 = cx;
        if (cx >= b.x1)
          b.x1 = cx + 1;
        if (cy >= b.y1)
          b.y1 = cy + 1;
        for (int dy = -1; dy <= 1; dy++) {
          int ny = cy + dy;
          if (ny < 0 || ny >= h)
            continue;
          for (int dx = -1; dx <= 1; dx++) {
            int nx = cx + dx;
            uint8_t *m;
            if (nx < 0 || nx >= w)
              continue;
            m = st->mask + (size_t)ny * w + nx;
            if (*m == 1) {
              *m = 2;
              st->stack[top++] = ny * w + nx;
            }
          }
        }
      }
      if (area >= MIN_AREA && st->ncand < MAX_CANDS) {
        detection *d = &st->cand[st->ncand++];
        memset(d, 0, sizeof *d);
        d->b = b;
        d->area = area;
      }
    }
  }
  f->ndet = 0;
  for (int i = 0; i < st->ncand && f->ndet < MAX_DETS; i++) {
    int nested = 0;
    for (int j = 0; j < st->ncand && !nested; j++) {
      if (j == i || !box_contains(&st->cand[j].b, &st->cand[i].b))
        continue;
      /* identical boxes: the first one found survives */
      nested = !box_contains(&st->cand[i].b, &st->cand[j].b) || j < i;
    }
    if (!nested)
      f->det[f->ndet++] = st->cand[i];
  }
}

static void *detect_main(void *arg) {
  pipeline *p = arg;
  frame *f;
  THREAD_NAME("detect");
  for (;;) {
    POP(&p->q_detect, f);
    if (!f)
      break;
    {
      PP_ZONE("detect");
      PP_FLOW_STEP("frame", f->id);
      {
        PP_ZONE("convolve");
        convolve(p, f);
      }
      {
        PP_ZONE("edges");
        edges(p);
      }
      {
        PP_ZONE("blobs");
        blobs(p, f);
      }
      PP_COUNTER_SET("detections", f->ndet);
    }
    PUSH(&p->q_motion, f);
  }
  queue_close(&p->q_motion);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* 4. motion                                                                */
/* ------------------------------------------------------------------------ */

/* Sum of absolute differences of one block; per-column partial sums keep
 * the order of additions fixed (and let the compiler vectorise). */
static float block_sad(const float *a, const float *b, int stride) {
  float acc[BLOCK] = {0};
  float s = 0.0f;
  for (int r = 0; r < BLOCK; r++)
    for (int c = 0; c < BLOCK; c++)
      acc[c] += fabsf(a[r * stride + c] - b[r * stride + c]);
  for (int c = 0; c < BLOCK; c++)
    s += acc[c];
  return s;
}

/* Best offset (dx, dy) within +-SEARCH at which the block of a at (x, y)
 * appears in b; ties go to the smaller displacement. */
static void block_search(const pipeline *p, const float *a, const float *b,
                         int x, int y, int *out_dx, int *out_dy) {
  int w = p->hw, h = p->hh, bdx = 0, bdy = 0;
  const float *blk = a + (size_t)y * w + x;
  float best = block_sad(blk, b + (size_t)y * w + x, w);
  for (int dy = -SEARCH; dy <= SEARCH; dy++) {
    if (y + dy < 0 || y + dy + BLOCK > h)
      continue;
    for (int dx = -SEARCH; dx <= SEARCH; dx++) {
      float sad;
      if (x + dx < 0 || x + dx + BLOCK > w || (dx == 0 && dy == 0))
        continue;
      sad = block_sad(blk, b + (size_t)(y + dy) * w + x + dx, w);
      if (sad < best ||
          (sad == best && abs(dx) + abs(dy) < abs(bdx) + abs(bdy))) {
        best = sad;
        bdx = dx;
        bdy = dy;
      }
    }
  }
  *out_dx = bdx;
  *out_dy = bdy;
}

/* Motion per block from the previous frame to this one, searched both
 * ways: a block of this frame found at +d in the previous one moved by -d;
 * a block of the previous frame found at +d in this one moved by +d. */
KERNEL static void block_match(pipeline *p, frame *f) {
  int8_t *fwd = f->mv, *bwd = p->mot.backward;
  for (int by = 0; by < p->bh; by++) {
    for (int bx = 0; bx < p->bw; bx++) {
      int i = 2 * (by * p->bw + bx), dx, dy;
      block_search(p, f->norm, p->mot.prev, bx * BLOCK, by * BLOCK, &dx,
                   &dy);
      fwd[i] = (int8_t)-dx;
      fwd[i + 1] = (int8_t)-dy;
      block_search(p, p->mot.prev, f->norm, bx * BLOCK, by * BLOCK, &dx,
                   &dy);
      bwd[i] = (int8_t)dx;
      bwd[i + 1] = (int8_t)dy;
    }
  }
}

/* Keep the vectors both searches agree on (within a pixel), zero the rest:
 * in flat or noisy areas the two directions pick unrelated minima. */
KERNEL static void consistency_check(pipeline *p, frame *f) {
  int n = p->bw * p->bh;
  const int8_t *bwd = p->mot.backward;
  for (int i = 0; i < 2 * n; i += 2) {
    if (abs(f->mv[i] - bwd[i]) > 1 || abs(f->mv[i + 1] - bwd[i + 1]) > 1) {
      f->mv[i] = 0;
      f->mv[i + 1] = 0;
    }
  }
}

static void *motion_main(void *arg) {
  pipeline *p = arg;
  size_t n = (size_t)p->hw * p->hh;
  frame *f;
  THREAD_NAME("motion");
  for (;;) {
    POP(&p->q_motion, f);
    if (!f)
      break;
    {
      PP_ZONE("motion");
      PP_FLOW_STEP("frame", f->id);
      if (p->mot.have_prev) {
        {
          PP_ZONE("block_match");
          block_match(p, f);
        }
        {
          PP_ZONE("consistency");
          consistency_check(p, f);
        }
      } else {
        memset(f->mv, 0, (size_t)p->bw * p->bh * 2);
      }
      memcpy(p->mot.prev, f->norm, n * sizeof *f->norm);
      p->mot.have_prev = 1;
    }
    PUSH(&p->q_match, f);
  }
  queue_close(&p->q_match);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* 5. match                                                                 */
/* ------------------------------------------------------------------------ */

static double box_iou(const box *a, const box *b) {
  int ix = (a->x1 < b->x1 ? a->x1 : b->x1) - (a->x0 > b->x0 ? a->x0 : b->x0);
  int iy = (a->y1 < b->y1 ? a->y1 : b->y1) - (a->y0 > b->y0 ? a->y0 : b->y0);
  double inter, uni;
  if (ix <= 0 || iy <= 0)
    return 0.0;
  inter = (double)ix * iy;
  uni = (double)(a->x1 - a->x0) * (a->y1 - a->y0) +
        (double)(b->x1 - b->x0) * (b->y1 - b->y0) - inter;
  return inter / uni;
}

/* Mean of the nonzero motion vectors of the blocks whose centre lies inside
 * the detection. */
static void detection_motion(const pipeline *p, const frame *f,
                             detection *d) {
  int sx = 0, sy = 0, n = 0;
  for (int by = 0; by < p->bh; by++) {
    int cy = by * BLOCK + BLOCK / 2;
    if (cy < d->b.y0 || cy >= d->b.y1)
      continue;
    for (int bx = 0; bx < p->bw; bx++) {
      int cx = bx * BLOCK + BLOCK / 2;
      if (cx < d->b.x0 || cx >= d->b.x1)
        continue;
      const int8_t *mv = f->mv + 2 * (by * p->bw + bx);
      if (mv[0] == 0 && mv[1] == 0)
        continue; /* static, or rejected by the consistency check */
      sx += mv[0];
      sy += mv[1];
      n++;
    }
  }
  d->mvx = n ? sx / n : 0;
  d->mvy = n ? sy / n : 0;
}

/* Light bookkeeping with zones of its own, so not a KERNEL. */
static void match_frame(pipeline *p, frame *f) {
  match_state *st = &p->mat;
  box prev[MAX_DETS];
  int track_used[MAX_TRACKS] = {0};
  {
    PP_ZONE("associate");
    for (int i = 0; i < f->ndet; i++) {
      detection *d = &f->det[i];
      detection_motion(p, f, d);
      d->track = 0;
      /* where this detection was one frame ago */
      prev[i].x0 = d->b.x0 - d->mvx;
      prev[i].x1 = d->b.x1 - d->mvx;
      prev[i].y0 = d->b.y0 - d->mvy;
      prev[i].y1 = d->b.y1 - d->mvy;
    }
    /* greedy: take the best remaining pair until none reaches MIN_IOU */
    for (;;) {
      double best = MIN_IOU;
      int bt = -1, bd = -1;
      for (int t = 0; t < st->ntracks; t++) {
        if (track_used[t])
          continue;
        for (int i = 0; i < f->ndet; i++) {
          double iou;
          if (f->det[i].track)
            continue;
          iou = box_iou(&st->tracks[t].b, &prev[i]);
          if (iou > best) {
            best = iou;
            bt = t;
            bd = i;
          }
        }
      }
      if (bt < 0)
        break;
      track_used[bt] = 1;
      f->det[bd].track = st->tracks[bt].id;
      st->tracks[bt].b = f->det[bd].b;
      st->tracks[bt].missed = 0;
    }
  }
  {
    PP_ZONE("update_tracks");
    int kept = 0;
    for (int t = 0; t < st->ntracks; t++) {
      if (!track_used[t] && ++st->tracks[t].missed > MAX_MISSED)
        continue;
      st->tracks[kept++] = st->tracks[t];
    }
    st->ntracks = kept;
    for (int i = 0; i < f->ndet && st->ntracks < MAX_TRACKS; i++) {
      track *t;
      if (f->det[i].track)
        continue;
      t = &st->tracks[st->ntracks++];
      t->id = st->next_id++;
      t->b = f->det[i].b;
      t->missed = 0;
      f->det[i].track = t->id;
    }
  }
}

static void *match_main(void *arg) {
  pipeline *p = arg;
  frame *f;
  THREAD_NAME("match");
  for (;;) {
    POP(&p->q_match, f);
    if (!f)
      break;
    {
      PP_ZONE("match");
      PP_FLOW_STEP("frame", f->id);
      match_frame(p, f);
      PP_COUNTER_SET("tracks", p->mat.ntracks);
    }
    PUSH(&p->q_visualize, f);
  }
  queue_close(&p->q_visualize);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* 6. visualize                                                             */
/* ------------------------------------------------------------------------ */

/* 3x5 digits, one row per 3 bits, top row first. */
static const uint16_t digit_font[10] = {
    075557, 026227, 071747, 071717, 055711,
    074717, 074757, 071111, 075757, 075717};

static void put_pixel(pipeline *p, int x, int y, const uint8_t *c) {
  uint8_t *px;
  if (x < 0 || y < 0 || x >= p->w || y >= p->h)
    return;
  px = p->vis.rgb + ((size_t)y * p->w + x) * 3;
  px[0] = c[0];
  px[1] = c[1];
  px[2] = c[2];
}

static void fill_rect(pipeline *p, int x0, int y0, int x1, int y1,
                      const uint8_t *c) {
  x0 = clamp_int(x0, 0, p->w);
  x1 = clamp_int(x1, 0, p->w);
  y0 = clamp_int(y0, 0, p->h);
  y1 = clamp_int(y1, 0, p->h);
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      put_pixel(p, x, y, c);
}

static void draw_number(pipeline *p, int x, int y, int v, const uint8_t *c) {
  char digits[12];
  int n = snprintf(digits, sizeof digits, "%d", v);
  for (int i = 0; i < n; i++) {
    uint16_t g = digit_font[digits[i] - '0'];
    for (int r = 0; r < 5; r++)
      for (int col = 0; col < 3; col++)
        if ((g >> ((4 - r) * 3 + (2 - col))) & 1)
          fill_rect(p, x + i * 8 + col * 2, y + r * 2,
                    x + i * 8 + col * 2 + 2, y + r * 2 + 2, c);
  }
}

/* Gray to RGB; blocks that moved get a red tint. */
KERNEL static void compose(pipeline *p, const frame *f) {
  for (int y = 0; y < p->h; y++) {
    const uint8_t *g = f->gray + (size_t)y * p->w;
    uint8_t *o = p->vis.rgb + (size_t)y * p->w * 3;
    int by = y / (2 * BLOCK);
    for (int x = 0; x < p->w; x++) {
      int bx = x / (2 * BLOCK), tint = 0;
      if (by < p->bh && bx < p->bw) {
        const int8_t *mv = f->mv + 2 * (by * p->bw + bx);
        tint = (mv[0] | mv[1]) != 0;
      }
      o[3 * x] = (uint8_t)(tint ? (g[x] + 255) / 2 : g[x]);
      o[3 * x + 1] = g[x];
      o[3 * x + 2] = g[x];
    }
  }
}

KERNEL static void draw_tracks(pipeline *p, const frame *f) {
  for (int i = 0; i < f->ndet; i++) {
    const detection *d = &f->det[i];
    uint64_t h = mix64((uint64_t)d->track);
    uint8_t c[3] = {(uint8_t)(64 | h), (uint8_t)(64 | h >> 8),
                    (uint8_t)(64 | h >> 16)};
    int x0 = 2 * d->b.x0, y0 = 2 * d->b.y0;
    int x1 = 2 * d->b.x1, y1 = 2 * d->b.y1;
    fill_rect(p, x0, y0, x1, y0 + 2, c);
    fill_rect(p, x0, y1 - 2, x1, y1, c);
    fill_rect(p, x0, y0, x0 + 2, y1, c);
    fill_rect(p, x1 - 2, y0, x1, y1, c);
    draw_number(p, x0 + 1, y0 >= 12 ? y0 - 12 : y0 + 3, d->track, c);
  }
}

/* FNV-1a over 64-bit words, folded into the running checksum in frame
 * order. */
KERNEL static void checksum(pipeline *p) {
  size_t n = (size_t)p->w * p->h * 3, i = 0;
  uint64_t h = 0xcbf29ce484222325u;
  for (; i + 8 <= n; i += 8) {
    uint64_t v;
    memcpy(&v, p->vis.rgb + i, 8);
    h = (h ^ v) * 0x100000001b3u;
  }
  for (; i < n; i++)
    h = (h ^ p->vis.rgb[i]) * 0x100000001b3u;
  p->vis.checksum = mix64(p->vis.checksum ^ h);
}

static void *visualize_main(void *arg) {
  pipeline *p = arg;
  frame *f;
  THREAD_NAME("visualize");
  for (;;) {
    int depth;
    POP(&p->q_visualize, f);
    if (!f)
      break;
    {
      PP_ZONE("visualize");
      {
        PP_ZONE("compose");
        compose(p, f);
      }
      {
        PP_ZONE("draw");
        draw_tracks(p, f);
      }
      {
        PP_ZONE("checksum");
        checksum(p);
      }
      PP_FLOW_END("frame", f->id);
      PP_FRAME_MARK("output");
    }
    p->vis.frames_out++;
    if (!p->opt.quiet && p->vis.frames_out % 100 == 0)
      fprintf(stderr, "pipeline: %d/%d frames\n", p->vis.frames_out,
              p->opt.frames);
    queue_push(&p->free_frames, f, &depth); /* never full */
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Set-up and tear-down                                                     */
/* ------------------------------------------------------------------------ */

static void pipeline_free(pipeline *p) {
  for (int i = 0; i < p->npool; i++) {
    free(p->pool[i].gray);
    free(p->pool[i].norm);
    free(p->pool[i].mv);
  }
  free(p->pool);
  free(p->src.background);
  free(p->pre.x0);
  free(p->pre.x1);
  free(p->pre.fx);
  free(p->pre.y0);
  free(p->pre.y1);
  free(p->pre.fy);
  free(p->det.padded);
  free(p->det.blur);
  free(p->det.mask);
  free(p->det.stack);
  free(p->mot.prev);
  free(p->mot.backward);
  free(p->vis.rgb);
  queue_destroy(&p->free_frames);
  queue_destroy(&p->q_preprocess);
  queue_destroy(&p->q_detect);
  queue_destroy(&p->q_motion);
  queue_destroy(&p->q_match);
  queue_destroy(&p->q_visualize);
}

/* Static scene: a gentle gradient and faint 40-pixel tiles, too weak to
 * register as edges, strong enough to give the block matcher texture. */
static void make_background(pipeline *p) {
  for (int y = 0; y < p->h; y++)
    for (int x = 0; x < p->w; x++)
      p->src.background[(size_t)y * p->w + x] =
          (uint8_t)(48 + 24 * x / p->w + 16 * y / p->h +
                    (((x / 40) + (y / 40)) & 1) * 6);
}

/* Returns 0, or -1 when out of memory (p is then freed). */
static int pipeline_init(pipeline *p, const options *opt) {
  size_t n, hn, nb;
  int ok = 1;
  memset(p, 0, sizeof *p);
  p->opt = *opt;
  p->w = opt->width;
  p->h = opt->height;
  p->hw = p->w / 2;
  p->hh = p->h / 2;
  p->bw = p->hw / BLOCK;
  p->bh = p->hh / BLOCK;
  n = (size_t)p->w * p->h;
  hn = (size_t)p->hw * p->hh;
  nb = (size_t)p->bw * p->bh * 2;
  p->npool = opt->frames < POOL_MAX ? (opt->frames > 0 ? opt->frames : 1)
                                    : POOL_MAX;

  /* The pool of free frames is bookkeeping, not a stage boundary. */
  queue_init(&p->free_frames, p->npool, NULL, NULL, NULL);
  queue_init(&p->q_preprocess, QUEUE_CAP, "source->preprocess", "source",
             "preprocess");
  queue_init(&p->q_detect, QUEUE_CAP, "preprocess->detect", "preprocess",
             "detect");
  queue_init(&p->q_motion, QUEUE_CAP, "detect->motion", "detect", "motion");
  queue_init(&p->q_match, QUEUE_CAP, "motion->match", "motion", "match");
  queue_init(&p->q_visualize, QUEUE_CAP, "match->visualize", "match",
             "visualize");

  p->pool = calloc((size_t)p->npool, sizeof *p->pool);
  if (!p->pool) {
    p->npool = 0;
    ok = 0;
  }
  for (int i = 0; ok && i < p->npool; i++) {
    frame *f = &p->pool[i];
    int depth;
    f->gray = malloc(n);
    f->norm = malloc(hn * sizeof *f->norm);
    f->mv = calloc(nb ? nb : 1, 1);
    ok = f->gray && f->norm && f->mv;
    queue_push(&p->free_frames, f, &depth);
  }
  p->src.background = malloc(n);
  p->pre.x0 = malloc((size_t)p->hw * sizeof(int));
  p->pre.x1 = malloc((size_t)p->hw * sizeof(int));
  p->pre.fx = malloc((size_t)p->hw * sizeof(float));
  p->pre.y0 = malloc((size_t)p->hh * sizeof(int));
  p->pre.y1 = malloc((size_t)p->hh * sizeof(int));
  p->pre.fy = malloc((size_t)p->hh * sizeof(float));
  p->det.padded =
      malloc((size_t)(p->hw + 2 * KRAD) * (p->hh + 2 * KRAD) * sizeof(float));
  p->det.blur = malloc(hn * sizeof(float));
  p->det.mask = malloc(hn);
  p->det.stack = malloc(hn * sizeof(int));
  p->mot.prev = malloc(hn * sizeof(float));
  p->mot.backward = malloc(nb ? nb : 1);
  p->vis.rgb = malloc(n * 3);
  ok = ok && p->src.background && p->pre.x0 && p->pre.x1 && p->pre.fx &&
       p->pre.y0 && p->pre.y1 && p->pre.fy && p->det.padded &&
       p->det.blur && p->det.mask && p->det.stack && p->mot.prev &&
       p->mot.backward && p->vis.rgb;
  if (!ok) {
    pipeline_free(p);
    return -1;
  }
  make_background(p);
  resize_table(p->w, p->hw, p->pre.x0, p->pre.x1, p->pre.fx);
  resize_table(p->h, p->hh, p->pre.y0, p->pre.y1, p->pre.fy);
  detect_init_kernel(&p->det);
  p->mat.next_id = 1;
  p->vis.checksum = 0x70697065u; /* "pipe" */
  return 0;
}

int main(int argc, char **argv) {
  /* Started last to first, so that each stage's consumer already runs. */
  static void *(*const stage_main[N_STAGES])(void *) = {
      source_main, preprocess_main, detect_main,
      motion_main, match_main,      visualize_main};
  pipeline *p;
  options opt;
  pthread_t threads[N_STAGES];
  int started = 0, err = 0;
  double t0, elapsed;

  parse_args(argc, argv, &opt);
  THREAD_NAME("main");
  p = malloc(sizeof *p);
  if (!p || pipeline_init(p, &opt) != 0) {
    free(p);
    fputs("pipeline: out of memory\n", stderr);
    return 1;
  }
  queue *inputs[N_STAGES] = {NULL,          &p->q_preprocess, &p->q_detect,
                             &p->q_motion,  &p->q_match,      &p->q_visualize};

  t0 = now_s();
  for (int s = N_STAGES - 1; s >= 0; s--) {
    err = pthread_create(&threads[s], NULL, stage_main[s], p);
    if (err) {
      /* let the stages already running drain and stop */
      if (started > 0)
        queue_close(inputs[s + 1]);
      break;
    }
    started++;
  }
  for (int s = N_STAGES - started; s < N_STAGES; s++)
    pthread_join(threads[s], NULL);
  elapsed = now_s() - t0;

  if (err) {
    fprintf(stderr, "pipeline: cannot start thread: %s\n", strerror(err));
  } else {
    printf("pipeline: %d frames in %.3f s (%.1f fps), tracks %d, "
           "checksum 0x%016" PRIx64 "\n",
           p->vis.frames_out, elapsed,
           elapsed > 0.0 ? p->vis.frames_out / elapsed : 0.0,
           p->mat.next_id - 1, p->vis.checksum);
  }
  pipeline_free(p);
  free(p);
  return err ? 1 : 0;
}
