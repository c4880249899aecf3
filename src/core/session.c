/* SPDX-License-Identifier: MIT */
/*
 * The profiling session: configuration (pp_config and the environment), the
 * background writer thread that drains every thread's ring into the .pptrace
 * file (trace mode) or into in-process statistics (stats mode), flight-mode
 * dumps, signal and fork handling, and shutdown at exit.
 *
 * Durability: in trace mode the writer drains rings every flush_ms (10 ms by
 * default), partial rings included, and hands each pass's chunks to the
 * kernel with one write(); what reached the kernel survives the process
 * being killed, so after kill -9 everything recorded more than one writer
 * period earlier is in the file. While events trickle (every ring found
 * less than 1/16 full) the period doubles pass after pass up to
 * IDLE_FLUSH_MS (50 ms, or flush_ms if larger), and falls back to flush_ms
 * at the first busier pass or producer wake-up: each pass costs the
 * program CPU and evicts some of its cache, whatever it carries (without
 * the backoff, at flush_ms 10 the writer used 3.1 ms of CPU per second
 * with no events and 6.6 ms/s at 1000 zones/s, against 1.7 ms/s with it),
 * so a kill -9 of a program whose events trickle loses up to 50 ms of
 * them (docs/formats/pptrace.md). SIGINT and SIGTERM (when the program has
 * no handler of its own) make the writer drain everything and finish the
 * file before the signal's default action runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../collect/cupti.h"
#include "../format/pptrace.h"
#include "../format/records.h"
#include "../internal.h"
#include "sink/stats.h"
#include "clock.h"
#include "env.h"
#include "gpu.h"
#include "live.h"
#include "meta.h"
#include "recorder.h"
#include "sampler.h"
#include "wake.h"

typedef struct locmap_entry {
  const pp_srcloc *p;
  uint32_t id;
} locmap_entry;

typedef struct session {
  pp_config cfg;
  char out_path[PATH_MAX];
  char process_name[64];
  int fd;
  uint32_t seq;
  pid_t pid;
  pthread_t writer;
  _Atomic int stop;
  _Atomic int finished;
  pp__clock_sync sync0, last_sync;
  locmap_entry *locmap;
  size_t locmap_cap, nlocs;
  ppt_buf defs, evbuf;
  ppt_buf stage;     /* whole chunks for fd, written once per pass */
  uint64_t events_written;
  uint64_t drops_written;
  int io_failed;
  /* Disk full and other write failures (trace and stats modes): the file
   * offset up to which every chunk is whole, the events in it, and the
   * errno of the first failed write (0: none). */
  uint64_t good_off;
  uint64_t pending_events; /* in evbuf, not yet in a staged chunk */
  uint64_t stage_events;   /* in stage's EVENTS chunks */
  uint64_t events_flushed;
  int io_errno;
  int in_dump; /* a flight dump has swapped its own descriptor into fd */
  double event_cost_ns;
  double drop_cost_ns; /* of a dropped event; 0: not measured */
  double ticks_per_ns; /* first estimate, for files with one sync point */
  pthread_mutex_t write_lock;
  pp__aggregate *agg; /* stats mode */
  pp__tstate **snap;
  size_t nsnap, cap_snap;
  pp__sampler *sampler; /* sample_hz > 0 */
  pp__live *live;       /* live statistics; NULL when off. Touched by the
                           writer (and flight dumps) under write_lock; its
                           lifetime is guarded by live_lock */
  pp__live_cfg live_cfg;
  pp__slot *peek;       /* flight mode: copy of new ring slots for live */
  size_t cap_peek;
  pp__live_note notes[64]; /* taken this pass, dispatched after it */
  size_t nnotes;
  pp__gpu_rec *gpu; /* resolved GPU zones: this pass's (trace mode) or
                       the newest GPU_FLIGHT_MAX (flight); stats mode
                       aggregates them instead */
  size_t ngpu, cap_gpu;
  uint64_t gpu_total;   /* flight: records ever added to the ring */
  _Atomic int cuda;      /* CUPTI activity tracing on (trace mode only) */
  int64_t cuda_flush_ns; /* writer: last periodic CUPTI flush */
  int pass_busy;         /* writer: this pass found a ring >= 1/16 full */
  int exiting;           /* pp_shutdown from the atexit handler: the
                            process is going, the kernel frees its memory */
  uint64_t flight_released; /* flight: exited threads whose rings were freed */
} session;

/* Flight mode keeps the rings of this many threads that exited last (the
 * rest are freed: memory stays bounded when a program keeps starting
 * threads), and this many resolved GPU zones, for a dump. */
#define FLIGHT_KEEP_EXITED 64u
#define GPU_FLIGHT_MAX 8192u

static session S;

/* PIPEPROF_OUT claimed by this process (pp_init_from_env): a descriptor
 * holding flock(LOCK_EX) on it for the session's life; -1 when none. */
static int claim_fd = -1;
static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int running;
static _Atomic int enabled_flag = 1;
static char last_error[256];
static int atexit_registered, atfork_registered;
static int signals_installed;
static struct sigaction old_int, old_term;
/* Guards S.live's lifetime against pp_live_zone() from other threads. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
/* The alert callback (pp_on_alert); kept across sessions. */
static pthread_mutex_t cb_lock = PTHREAD_MUTEX_INITIALIZER;
static pp_alert_fn cb_fn;
static void *cb_user;

static void set_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static void set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
}

const char *pp_last_error(void) { return last_error; }

void pp_config_init(pp_config *cfg) {
  if (!cfg)
    return;
  memset(cfg, 0, sizeof *cfg);
  cfg->struct_size = sizeof *cfg;
  cfg->mode = PP_MODE_TRACE;
  cfg->buffer_kib = 0; /* mode default */
  cfg->flush_ms = 10;
  cfg->install_signals = 1;
  cfg->start_enabled = 1;
}

int pp_is_running(void) { return atomic_load(&running); }

static void update_active(void) {
  pp__recorder_publish(atomic_load(&running) && atomic_load(&enabled_flag));
}

void pp_set_enabled(int on) {
  atomic_store(&enabled_flag, on ? 1 : 0);
  update_active();
}

int pp_is_enabled(void) {
  return (__atomic_load_n(&pp__active, __ATOMIC_RELAXED) & PP__ON) ? 1 : 0;
}

const char *pp_output_path(void) {
  return atomic_load(&running) ? S.out_path : "";
}

/* ---- writer wake-up (futex: the only call producers make, once per half
 * ring) -------------------------------------------------------------------- */

/* ---- file output --------------------------------------------------------- */

static int write_all(int fd, struct iovec *iov, int n) {
  while (n > 0) {
    ssize_t k = writev(fd, iov, n);
    if (k < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    while (n > 0 && (size_t)k >= iov->iov_len) {
      k -= (ssize_t)iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0) {
      iov->iov_base = (char *)iov->iov_base + k;
      iov->iov_len -= (size_t)k;
    }
  }
  return 0;
}

/* The META chunk that records a failed write: its errno as text and the
 * events not in the file (so far). */
static int write_loss_meta(int fd, uint32_t *seq);

/* The first write to the session's file failed (ENOSPC, EFBIG, EIO...):
 * say so once on stderr, cut the file back to its last whole chunk (which
 * also frees the space a partial write took) and record the failure there
 * while a small chunk still fits. Recording goes on; what is drained from
 * now on is counted as lost (events_written - events_flushed). */
static void io_fail(int err) {
  if (S.io_failed)
    return;
  S.io_failed = 1;
  if (S.io_errno || S.in_dump) /* a dump reports its own failure */
    return;
  S.io_errno = err ? err : EIO;
  fprintf(stderr,
          "pipeprof: writing %s failed: %s; the program runs on, events "
          "from now on are counted as lost\n",
          S.out_path, strerror(S.io_errno));
  if (S.fd >= 0 && ftruncate(S.fd, (off_t)S.good_off) == 0 &&
      lseek(S.fd, (off_t)S.good_off, SEEK_SET) == (off_t)S.good_off)
    write_loss_meta(S.fd, &S.seq);
}

static void write_chunk_fd(int fd, uint32_t *seq, uint16_t type,
                           ppt_buf *b) {
  if (b->oom || fd < 0) {
    b->len = 0;
    b->oom = 0;
    return;
  }
  unsigned char hdr[PPT_CHUNK_HEADER_SIZE];
  ppt_chunk_header(hdr, type, b->data, (uint32_t)b->len, (*seq)++);
  struct iovec iov[2] = {{hdr, sizeof hdr}, {b->data, b->len}};
  if (write_all(fd, iov, b->len ? 2 : 1) != 0) {
    if (fd == S.fd)
      io_fail(errno);
    else
      S.io_failed = 1;
  } else if (fd == S.fd) {
    S.good_off += sizeof hdr + b->len;
    if (type == PPT_CHUNK_EVENTS)
      S.events_flushed += S.pending_events;
  }
  if (type == PPT_CHUNK_EVENTS)
    S.pending_events = 0;
  b->len = 0;
}

/* Chunks for the session's file are gathered in S.stage and written with
 * one system call per writer pass (stage_flush): a pass writes one EVENTS
 * chunk per thread with new events, and on a small VM each write costs
 * several microseconds, which made the writer's fixed cost per pass the
 * larger part of the profiler's overhead on a lightly loaded program. A
 * chunk is whole before it is written, so a kill loses at most the pass in
 * progress, as before. */
static void stage_flush(void) {
  if (!S.stage.len)
    return;
  if (S.fd >= 0 && !S.io_failed) {
    struct iovec iov = {S.stage.data, S.stage.len};
    if (write_all(S.fd, &iov, 1) != 0) {
      io_fail(errno);
    } else {
      S.good_off += S.stage.len;
      S.events_flushed += S.stage_events;
    }
  }
  S.stage_events = 0;
  S.stage.len = 0;
}

static void write_chunk(uint16_t type, ppt_buf *b) {
  if (S.io_failed || S.fd < 0 || b->oom) {
    if (type == PPT_CHUNK_EVENTS)
      S.pending_events = 0; /* lost: counted by events_flushed */
    b->len = 0;
    b->oom = 0;
    return;
  }
  size_t need = PPT_CHUNK_HEADER_SIZE + b->len;
  if (S.stage.len + need > (1u << 20))
    stage_flush();
  if (ppt_buf_reserve(&S.stage, need) != 0) { /* out of memory: direct */
    S.stage.oom = 0;
    stage_flush();
    write_chunk_fd(S.fd, &S.seq, type, b);
    return;
  }
  unsigned char *hdr = S.stage.data + S.stage.len;
  ppt_chunk_header(hdr, type, b->data, (uint32_t)b->len, S.seq++);
  if (b->len)
    memcpy(hdr + PPT_CHUNK_HEADER_SIZE, b->data, b->len);
  S.stage.len += need;
  if (type == PPT_CHUNK_EVENTS) {
    S.stage_events += S.pending_events;
    S.pending_events = 0;
  }
  b->len = 0;
}

/* 0 when the chunk was written whole. */
static int write_loss_meta(int fd, uint32_t *seq) {
  char what[PATH_MAX + 128], num[32];
  snprintf(what, sizeof what, "write to %s failed: %s", S.out_path,
           strerror(S.io_errno));
  /* Stats mode keeps its events in memory for the STATS chunk: a failed
   * write loses them only if that chunk cannot be written at the end. */
  int trace = S.cfg.mode == PP_MODE_TRACE;
  uint64_t lost = S.events_written - S.events_flushed;
  snprintf(num, sizeof num, "%llu", (unsigned long long)lost);
  ppt_buf m = {0};
  ppt_count_put_n(&m, trace ? 2 : 1);
  ppt_meta kv = {ppt_str_of("write_error"), ppt_str_of(what)};
  ppt_meta_put(&m, &kv);
  if (trace) {
    kv = (ppt_meta){ppt_str_of("events_lost"), ppt_str_of(num)};
    ppt_meta_put(&m, &kv);
  }
  uint64_t before = S.good_off;
  int failed = S.io_failed;
  S.io_failed = 1; /* io_fail() returns at once if this write fails too */
  write_chunk_fd(fd, seq, PPT_CHUNK_META, &m);
  S.io_failed = failed;
  ppt_buf_free(&m);
  return S.good_off > before ? 0 : -1;
}

/* ---- loc ids ------------------------------------------------------------- */

static void locmap_clear(void) {
  pp__free(S.locmap);
  S.locmap = NULL;
  S.locmap_cap = S.nlocs = 0;
}

static int locmap_grow(void) {
  size_t ncap = S.locmap_cap ? S.locmap_cap * 2 : 1024;
  locmap_entry *n = pp__calloc(ncap, sizeof *n);
  if (!n)
    return -1;
  for (size_t i = 0; i < S.locmap_cap; i++) {
    if (!S.locmap[i].p)
      continue;
    size_t j = ((uintptr_t)S.locmap[i].p >> 4) * 0x9E3779B97F4A7C15ULL;
    for (j &= ncap - 1; n[j].p; j = (j + 1) & (ncap - 1)) {
    }
    n[j] = S.locmap[i];
  }
  pp__free(S.locmap);
  S.locmap = n;
  S.locmap_cap = ncap;
  return 0;
}

static void def_loc(ppt_buf *defs, uint32_t id, const pp_srcloc *p) {
  ppt_srcloc r = {id,
                  p->kind,
                  ppt_str_of(p->name),
                  ppt_str_of(p->function),
                  ppt_str_of(p->file),
                  p->line};
  ppt_srcloc_put(defs, &r);
}

/* Id of a site; new sites get a definition appended to S.defs. Returns
 * UINT32_MAX when out of memory. */
static uint32_t loc_id(const pp_srcloc *p) {
  if ((S.nlocs + 1) * 2 > S.locmap_cap && locmap_grow() != 0)
    return UINT32_MAX;
  size_t j = ((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ULL;
  for (j &= S.locmap_cap - 1; S.locmap[j].p;
       j = (j + 1) & (S.locmap_cap - 1))
    if (S.locmap[j].p == p)
      return S.locmap[j].id;
  uint32_t id = (uint32_t)S.nlocs++;
  S.locmap[j].p = p;
  S.locmap[j].id = id;
  def_loc(&S.defs, id, p);
  if (S.agg)
    pp__aggregate_define(S.agg, id, p);
  return id;
}

/* ---- draining rings ---------------------------------------------------- */

static unsigned slot_type(uint64_t a) { return (unsigned)(a >> PP__TAG_SHIFT); }

static void flush_events(void) {
  if (S.defs.len)
    write_chunk(PPT_CHUNK_SRCLOC, &S.defs);
  if (S.evbuf.len)
    write_chunk(PPT_CHUNK_EVENTS, &S.evbuf);
}

/* Encode slots [from, to) of thread t into EVENTS chunks (trace file) or
 * into the aggregate (stats mode, when there is one), and with feed_live
 * into the live statistics. Slots are read with relaxed loads. */
/* CLOCK_MONOTONIC ns of tick ts, from the session's first clock point at
 * ns_per_tick (the writer's running estimate; the reader interpolates
 * between clock points instead). */
static int64_t tick_ns(uint64_t ts, double ns_per_tick) {
  return S.sync0.mono_ns +
         (int64_t)((double)(int64_t)(ts - S.sync0.tick) * ns_per_tick);
}

static uint64_t encode_range(const pp__slot *ring, uint64_t mask,
                             uint64_t tid, uint64_t from, uint64_t to,
                             ppt_buf *out, int to_file, int feed_live) {
  uint64_t prev = 0, n = 0;
  int started = 0;
  /* ticks to ns by a multiply: a divide per event cost the writer more */
  double ns_per_tick = 1.0 / pp__clock_rate(&S.sync0, &S.last_sync);
  const pp_srcloc *last_loc = NULL; /* one-entry cache in front of loc_id */
  uint32_t last_id = 0;
  for (uint64_t i = from; i < to; i++) {
    const pp__slot *s = &ring[i & mask];
    uint64_t ts = atomic_load_explicit(&s->ts, memory_order_relaxed);
    uint64_t a = atomic_load_explicit(&s->a, memory_order_relaxed);
    unsigned type = slot_type(a);
    if (type == PPT_SLOT_CONT || !ppt_type_known(type))
      continue;
    uint64_t value = 0, extra = 0;
    if (ppt_has_value(type)) {
      if (i + 1 >= to)
        break;
      const pp__slot *v = &ring[(i + 1) & mask];
      value = atomic_load_explicit(&v->ts, memory_order_relaxed);
      extra = atomic_load_explicit(&v->a, memory_order_relaxed) &
              PP__PTR_MASK;
      i++;
    }
    const pp_srcloc *loc = (const pp_srcloc *)(uintptr_t)(a & PP__PTR_MASK);
    if (feed_live && S.live) {
      int64_t ns = tick_ns(ts, ns_per_tick);
      pp__live_event(S.live, tid, type, loc, ns, value, extra);
    }
    if (!to_file && !S.agg)
      continue; /* flight mode: live statistics only */
    uint32_t id = last_id;
    if (loc != last_loc) {
      id = loc_id(loc);
      if (id == UINT32_MAX)
        continue;
      last_loc = loc;
      last_id = id;
    }
    if (!to_file) {
      int64_t ns = tick_ns(ts, ns_per_tick);
      pp__aggregate_event(S.agg, tid, type, id, ns, value);
      n++;
      continue;
    }
    if (!started || out->len > (256u << 10)) {
      if (started)
        flush_events();
      ppt_events_base base = {tid, ts};
      ppt_events_base_put(out, &base);
      prev = ts;
      started = 1;
    }
    if (ppt_buf_reserve(out, PPT_EV_MAX_FIXED) != 0)
      continue;
    /* The ring keeps a memory event's bytes << 8 | device in the extra
     * number; the file has them as two fields (format/events.h). */
    ppt_ev e;
    e.type = type;
    e.delta = (int64_t)(ts - prev);
    e.loc = id;
    e.value = value;
    e.extra = extra;
    if (ppt_is_mem(type)) {
      e.extra = extra >> 8;
      e.device = extra & 0xff;
    }
    prev = ts;
    out->len += ppt_ev_put_fixed(out->data + out->len, &e);
    n++;
    S.pending_events++;
  }
  if (to_file && started)
    flush_events();
  return n;
}

/* A pass found n new slots in t's ring, up to w: note whether the ring is
 * filling (the writer's period) and populate it ahead of the producer,
 * unless this is the last pass (nothing will be recorded after it). */
static void pass_saw(pp__tstate *t, uint64_t n, uint64_t w) {
  if (n * 16 > t->capacity)
    S.pass_busy = 1;
  if (!atomic_load(&S.stop))
    pp__ring_prefault(t, w, n);
}

/* Done with a ring: drained (trace and stats modes), or, in flight mode,
 * fed to the live statistics when they are on. */
static int drained(const pp__tstate *t) {
  return atomic_load(&t->r) == atomic_load(&t->w);
}

static int peeked(const pp__tstate *t) {
  return !S.live || t->live_r == atomic_load(&t->w);
}

static void drain_thread(pp__tstate *t) {
  uint64_t w = atomic_load_explicit(&t->w, memory_order_acquire);
  uint64_t r = atomic_load_explicit(&t->r, memory_order_relaxed);
  if (w == r)
    return;
  pass_saw(t, w - r, w);
  int to_file = S.cfg.mode == PP_MODE_TRACE;
  S.events_written +=
      encode_range(t->ring, t->mask, t->tid, r, w, &S.evbuf, to_file, 1);
  atomic_store_explicit(&t->r, w, memory_order_release);
}

/* ---- GPU zones (resolved by pp__gpu_poll in the writer thread) ---------- */

/* Stats mode: a resolved zone goes to the aggregate, its ticks converted
 * from the session's first clock point at the rate the resolver placed it
 * with (ns_per_tick: *arg; the first pass runs before any other clock
 * point is taken). */
static void gpu_aggregate(const pp__gpu_rec *r, double ns_per_tick) {
  uint32_t id = loc_id(r->loc);
  if (id == UINT32_MAX)
    return;
  pp__aggregate_gpu(S.agg, id, r->device, r->stream, r->tid,
                    tick_ns(r->launch_tick, ns_per_tick),
                    tick_ns(r->start_tick, ns_per_tick), r->dur_ns);
  S.events_written++;
}

static void gpu_emit(const pp__gpu_rec *r, void *arg) {
  if (S.cfg.mode == PP_MODE_STATS) {
    if (S.agg)
      gpu_aggregate(r, *(const double *)arg);
    return;
  }
  if (S.cfg.mode == PP_MODE_FLIGHT) {
    if (!S.gpu && !(S.gpu = pp__calloc(GPU_FLIGHT_MAX, sizeof *S.gpu)))
      return;
    S.gpu[S.gpu_total++ % GPU_FLIGHT_MAX] = *r;
    return;
  }
  if (pp__grow((void **)&S.gpu, &S.cap_gpu, S.ngpu + 1, sizeof *S.gpu) == 0)
    S.gpu[S.ngpu++] = *r;
}

static int cmp_gpu_rec(const void *a, const void *b) {
  const pp__gpu_rec *x = a, *y = b;
  if (x->tid != y->tid)
    return x->tid < y->tid ? -1 : 1;
  return x->start_tick < y->start_tick ? -1 : x->start_tick > y->start_tick;
}

/* GPU_ZONE events (docs/formats/pptrace.md) in one EVENTS chunk per
 * launching thread. Sorts recs. */
static void write_gpu_events(pp__gpu_rec *recs, size_t n) {
  qsort(recs, n, sizeof *recs, cmp_gpu_rec);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    ppt_buf *out = &S.evbuf;
    ppt_events_base base = {recs[i].tid, recs[i].start_tick};
    ppt_events_base_put(out, &base);
    uint64_t prev = recs[i].start_tick;
    for (; j < n && recs[j].tid == recs[i].tid && out->len < (256u << 10);
         j++) {
      const pp__gpu_rec *r = &recs[j];
      uint32_t id = loc_id(r->loc);
      if (id == UINT32_MAX || ppt_buf_reserve(out, PPT_EV_MAX_FIXED) != 0)
        continue;
      ppt_ev e;
      e.type = PPT_EV_GPU_ZONE;
      e.delta = (int64_t)(r->start_tick - prev);
      e.loc = id;
      e.device = r->device;
      e.extra = r->stream;
      e.launch = (int64_t)(r->launch_tick - r->start_tick);
      e.dur = r->dur_ns;
      prev = r->start_tick;
      out->len += ppt_ev_put_fixed(out->data + out->len, &e);
      S.events_written++;
      S.pending_events++;
    }
    flush_events();
    i = j;
  }
}

static double gpu_rate(void) {
  if (S.last_sync.mono_ns - S.sync0.mono_ns >= 100000000)
    return pp__clock_rate(&S.sync0, &S.last_sync);
  return S.ticks_per_ns > 0 ? S.ticks_per_ns : 1.0;
}

/* Resolve GPU zones: trace mode writes them as GPU_ZONE events, stats mode
 * aggregates them (no events: its memory does not grow with the zones),
 * flight mode keeps the newest in S.gpu for the next dump. */
static void gpu_pass(int final) {
  double rate = gpu_rate(), ns_per_tick = 1.0 / rate;
  pp__gpu_poll(rate, final, gpu_emit, &ns_per_tick);
  if (S.cfg.mode == PP_MODE_TRACE && S.ngpu) {
    write_gpu_events(S.gpu, S.ngpu);
    S.ngpu = 0;
  }
}

static void snapshot_threads(ppt_buf *threads) {
  pp__registry_lock();
  S.nsnap = 0;
  for (pp__tstate *t = pp__registry_head(); t; t = t->next) {
    if (pp__grow((void **)&S.snap, &S.cap_snap, S.nsnap + 1,
                 sizeof *S.snap) == 0)
      S.snap[S.nsnap++] = t;
    if (t->name_dirty || !t->announced) {
      ppt_thread r = {t->tid, ppt_str_of(t->name)};
      ppt_thread_put(threads, &r);
      if (S.agg)
        pp__aggregate_thread(S.agg, t->tid, t->name);
      t->name_dirty = 0;
      t->announced = 1;
    }
  }
  pp__registry_unlock();
}

static void write_clock(void) {
  pp__clock_sync s;
  pp__clock_sync_now(&s);
  S.last_sync = s;
  ppt_buf b = {0};
  ppt_clock r = {s.tick, s.mono_ns, s.real_ns};
  ppt_clock_put(&b, &r);
  write_chunk(PPT_CHUNK_CLOCK, &b);
  ppt_buf_free(&b);
}

static void write_drops(void) {
  ppt_buf b = {0};
  for (size_t i = 0; i < S.nsnap; i++) {
    pp__tstate *t = S.snap[i];
    uint64_t d = atomic_load_explicit(&t->dropped, memory_order_relaxed);
    if (d != t->written_dropped) {
      ppt_drops r = {t->tid, d - t->written_dropped};
      ppt_drops_put(&b, &r);
      if (S.agg)
        pp__aggregate_drops(S.agg, t->tid, d - t->written_dropped);
      S.drops_written += d - t->written_dropped;
      t->written_dropped = d;
    }
  }
  if (b.len)
    write_chunk(PPT_CHUNK_DROPS, &b);
  ppt_buf_free(&b);
}

static void write_pending_meta(void) {
  ppt_buf b = {0};
  if (pp__meta_take(&b))
    write_chunk(PPT_CHUNK_META, &b);
  ppt_buf_free(&b);
}

/* ---- live statistics ----------------------------------------------------- */

/* Flight mode: the rings are not drained, so the writer reads what was
 * recorded since its last look without consuming it. Producers may be
 * overwriting those slots meanwhile: copy first, then keep only the slots
 * the write index shows were not overwritten during the copy (as a dump
 * does). */
static void live_peek_thread(pp__tstate *t) {
  uint64_t w = atomic_load_explicit(&t->w, memory_order_acquire);
  uint64_t from = t->live_r;
  if (w == 0 || w <= from)
    return;
  if (w - from > t->capacity)
    from = w - t->capacity;
  size_t n = (size_t)(w - from);
  pass_saw(t, n, w);
  if (pp__grow((void **)&S.peek, &S.cap_peek, n, sizeof *S.peek) != 0)
    return;
  for (uint64_t i = from; i < w; i++) {
    const pp__slot *src = &t->ring[i & t->mask];
    atomic_init(&S.peek[i - from].ts,
                atomic_load_explicit(&src->ts, memory_order_relaxed));
    atomic_init(&S.peek[i - from].a,
                atomic_load_explicit(&src->a, memory_order_relaxed));
  }
  uint64_t w2 = atomic_load_explicit(&t->w, memory_order_acquire);
  uint64_t safe = w2 > t->capacity ? w2 - t->capacity : 0;
  uint64_t start = from < safe ? safe : from;
  if (start < w)
    encode_range(S.peek, UINT64_MAX, t->tid, start - from, n, NULL, 0, 1);
  t->live_r = w;
}

/* Anomalies and alerts as one EVENTS chunk of the process-wide pseudo
 * thread 0 (docs/formats/pptrace.md, event types 22 and 23). */
static void write_notes(const pp__live_note *nt, size_t n) {
  double rate = pp__clock_rate(&S.sync0, &S.last_sync);
  ppt_buf b = {0};
  uint64_t prev = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t tick = S.sync0.tick +
                    (uint64_t)(int64_t)((double)(nt[i].ns - S.sync0.mono_ns) *
                                        rate);
    if (i == 0) {
      ppt_events_base base = {0, tick};
      ppt_events_base_put(&b, &base);
      prev = tick;
    }
    ppt_ev e;
    e.type = (unsigned char)nt[i].type;
    e.delta = (int64_t)(tick - prev);
    e.what = ppt_str_of(nt[i].what);
    e.which = ppt_str_of(nt[i].which);
    e.message = ppt_str_of(nt[i].message);
    e.nvalue = nt[i].value;
    e.baseline = nt[i].baseline;
    e.spread = nt[i].spread;
    e.threshold = nt[i].threshold;
    prev = tick;
    ppt_buf_ev(&b, &e);
  }
  if (b.len)
    write_chunk(PPT_CHUNK_EVENTS, &b);
  ppt_buf_free(&b);
}

/* Call the alert callback for the notes of the last pass. Writer thread,
 * write_lock not held: the callback may call pp_flight_dump(). */
static void dispatch_notes(void) {
  size_t n = S.nnotes;
  S.nnotes = 0;
  if (!n)
    return;
  pthread_mutex_lock(&cb_lock);
  pp_alert_fn fn = cb_fn;
  void *user = cb_user;
  pthread_mutex_unlock(&cb_lock);
  if (!fn)
    return;
  for (size_t i = 0; i < n; i++) {
    const pp__live_note *nt = &S.notes[i];
    pp_alert a = {sizeof a,
                  nt->type == PPT_EV_ANOMALY ? PP_ALERT_ANOMALY
                                             : PP_ALERT_RESOURCE,
                  nt->what,
                  nt->which,
                  nt->message,
                  nt->value,
                  nt->baseline,
                  nt->spread,
                  nt->threshold,
                  nt->ns};
    fn(&a, user);
  }
}

int pp_on_alert(pp_alert_fn fn, void *user) {
  pthread_mutex_lock(&cb_lock);
  cb_fn = fn;
  cb_user = fn ? user : NULL;
  pthread_mutex_unlock(&cb_lock);
  return PP_OK;
}

static int live_query(int kind, const char *name, int window_s,
                      pp_live_stats *out) {
  pthread_mutex_lock(&live_lock);
  int rc;
  if (!atomic_load(&running) || S.pid != getpid())
    rc = PP_ENOTRUNNING;
  else
    rc = pp__live_query(S.live, kind, name, window_s, out);
  pthread_mutex_unlock(&live_lock);
  return rc;
}

int pp_live_zone(const char *name, int window_s, pp_live_stats *out) {
  if (!name || !out)
    return PP_EINVAL;
  return live_query(0, name, window_s, out);
}

int pp_live_request(int metric, int window_s, pp_live_stats *out) {
  if (!out || (metric != PP_LIVE_E2E && metric != PP_LIVE_TTFT))
    return PP_EINVAL;
  return live_query(metric == PP_LIVE_E2E ? 1 : 2, NULL, window_s, out);
}

/* CUPTI records encoded since the last pass go out as one CUDA chunk;
 * every 500 ms the writer also asks CUPTI for its completed buffers (CUPTI
 * hands them over on its own only when they fill up or at its own pace). */
static void write_cuda(int final) {
  int64_t now = pp__mono_ns();
  if (!final && now - S.cuda_flush_ns >= 500000000) {
    pp__cupti_flush(0);
    S.cuda_flush_ns = now;
  }
  ppt_buf b = {0};
  pp__cupti_take(&b);
  if (b.len)
    write_chunk(PPT_CHUNK_CUDA, &b);
  ppt_buf_free(&b);
}

/* One writer pass. Caller holds write_lock. */
static void writer_pass(int final) {
  gpu_pass(final); /* may add META */
  write_pending_meta();
  ppt_buf threads = {0};
  snapshot_threads(&threads);
  if (threads.len)
    write_chunk(PPT_CHUNK_THREAD, &threads);
  ppt_buf_free(&threads);
  int64_t now = pp__mono_ns();
  if (final || now - S.last_sync.mono_ns >= 1000000000 ||
      S.last_sync.mono_ns == S.sync0.mono_ns)
    write_clock();
  if (S.cfg.mode != PP_MODE_FLIGHT)
    for (size_t i = 0; i < S.nsnap; i++)
      drain_thread(S.snap[i]);
  else if (S.live)
    for (size_t i = 0; i < S.nsnap; i++)
      live_peek_thread(S.snap[i]);
  if (S.defs.len) /* stats mode: sites met while aggregating */
    write_chunk(PPT_CHUNK_SRCLOC, &S.defs);
  write_drops();
  if (atomic_load(&S.cuda))
    write_cuda(final);
  pp__registry_lock();
  if (final && S.exiting)
    ; /* unmapping rings now costs TLB shootdowns on every CPU the program
         runs on; the process's exit unmaps everything at once */
  else if (S.cfg.mode != PP_MODE_FLIGHT)
    pp__registry_reap(drained, 0);
  else
    S.flight_released += pp__registry_reap(peeked, FLIGHT_KEEP_EXITED);
  pp__registry_unlock();
  S.nsnap = 0; /* the snapshot may point at reaped threads now */
  if (S.live && !final) {
    pp__live_tick(S.live, now);
    S.nnotes = pp__live_take(S.live, S.notes, PP__ARRAY_LEN(S.notes));
    if (S.nnotes && S.cfg.mode != PP_MODE_FLIGHT)
      write_notes(S.notes, S.nnotes);
  }
  stage_flush();
}

/* META writer_cpu_ns and process_cpu_ns at the end of a session: the CPU
 * time the writer thread has used (measured, not estimated) and the whole
 * process's, so the report can put the profiler's own cost beside the
 * program's. */
static void write_cost_meta(void) {
  struct timespec ts;
  struct rusage ru;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0 ||
      getrusage(RUSAGE_SELF, &ru) != 0)
    return;
  char num[32];
  snprintf(num, sizeof num, "%lld",
           (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
  pp__session_meta("writer_cpu_ns", num);
  snprintf(num, sizeof num, "%lld",
           (((long long)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL +
            ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) *
               1000LL);
  pp__session_meta("process_cpu_ns", num);
  write_pending_meta();
}

static void write_meta(int fd, uint32_t *seq) {
  ppt_buf b = {0};
  char num[64];
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  static const char *const modes[] = {"stats", "trace", "flight"};
  const char *kv[][2] = {
      {"process_name", S.process_name},
      {"mode", modes[S.cfg.mode]},
      {"hostname", host},
      {"lib_version", PP_VERSION_STRING},
      {"tick_source", pp__clock_source()},
  };
  size_t nkv = PP__ARRAY_LEN(kv);
  ppt_count_put_n(&b, nkv + 6);
  for (size_t i = 0; i < nkv; i++) {
    ppt_meta m = {ppt_str_of(kv[i][0]), ppt_str_of(kv[i][1])};
    ppt_meta_put(&b, &m);
  }
#define PUT_NUM(key, ...)                                                      \
  do {                                                                         \
    snprintf(num, sizeof num, __VA_ARGS__);                                    \
    ppt_meta m = {ppt_str_of(key), ppt_str_of(num)};                           \
    ppt_meta_put(&b, &m);                                                      \
  } while (0)
  PUT_NUM("pid", "%ld", (long)S.pid);
  PUT_NUM("start_mono_ns", "%lld", (long long)S.sync0.mono_ns);
  PUT_NUM("start_realtime_ns", "%lld", (long long)S.sync0.real_ns);
  PUT_NUM("event_cost_ns", "%.3f", S.event_cost_ns);
  PUT_NUM("drop_cost_ns", "%.3f", S.drop_cost_ns);
  PUT_NUM("ticks_per_ns", "%.9f", S.ticks_per_ns);
#undef PUT_NUM
  write_chunk_fd(fd, seq, PPT_CHUNK_META, &b);
  ppt_buf_free(&b);
  /* The clock origin. */
  ppt_clock origin = {S.sync0.tick, S.sync0.mono_ns, S.sync0.real_ns};
  ppt_clock_put(&b, &origin);
  write_chunk_fd(fd, seq, PPT_CHUNK_CLOCK, &b);
  ppt_buf_free(&b);
}

static void write_end(void) {
  ppt_buf b = {0};
  ppt_end r = {S.events_written, S.drops_written};
  ppt_end_put(&b, &r);
  write_chunk(PPT_CHUNK_END, &b);
  ppt_buf_free(&b);
}

static int open_output(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return -1;
  unsigned char hdr[PPT_FILE_HEADER_SIZE];
  ppt_file_header(hdr, (uint32_t)S.pid);
  struct iovec iov = {hdr, sizeof hdr};
  if (write_all(fd, &iov, 1) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* ---- flight dumps -------------------------------------------------------- */

static int flight_dump_locked(const char *path) {
  int fd = open_output(path);
  if (fd < 0) {
    set_error("cannot write %s: %s", path, strerror(errno));
    return PP_EIO;
  }
  uint32_t seq = 0;
  write_meta(fd, &seq);
  if (S.flight_released) {
    char num[32];
    ppt_buf m = {0};
    snprintf(num, sizeof num, "%llu", (unsigned long long)S.flight_released);
    ppt_count_put_n(&m, 1);
    ppt_meta kv = {ppt_str_of("flight_threads_released"), ppt_str_of(num)};
    ppt_meta_put(&m, &kv);
    write_chunk_fd(fd, &seq, PPT_CHUNK_META, &m);
    ppt_buf_free(&m);
  }
  uint64_t saved_events = S.events_written, saved_drops = S.drops_written;
  S.events_written = 0; /* END counts what this dump holds */
  S.drops_written = 0;
  stage_flush(); /* the session file's chunks go before the swap */
  int saved_fd = S.fd;
  uint32_t saved_seq = S.seq;
  int saved_failed = S.io_failed;
  uint64_t saved_off = S.good_off, saved_flushed = S.events_flushed;
  S.pending_events = S.stage_events = 0;
  S.in_dump = 1;
  S.fd = fd;
  S.seq = seq;
  S.io_failed = 0;
  /* Every site must be defined in this file: start a fresh map. */
  locmap_clear();
  S.defs.len = 0;
  ppt_buf threads = {0};
  pp__registry_lock();
  for (pp__tstate *t = pp__registry_head(); t; t = t->next) {
    ppt_thread r = {t->tid, ppt_str_of(t->name)};
    ppt_thread_put(&threads, &r);
  }
  pp__registry_unlock();
  write_chunk(PPT_CHUNK_THREAD, &threads);
  ppt_buf_free(&threads);
  write_clock();
  pp__registry_lock();
  for (pp__tstate *t = pp__registry_head(); t; t = t->next) {
    uint64_t w = atomic_load_explicit(&t->w, memory_order_acquire);
    if (w == 0)
      continue; /* no event yet (and maybe no ring) */
    uint64_t from = w > t->capacity ? w - t->capacity : 0;
    /* Copy the ring newest first, in blocks; after each block re-read the
     * write index: slots older than (write index now) - capacity may have
     * been overwritten while we copied, so the copy stops there and keeps
     * the newest events of even a thread that records flat out. */
    size_t n = (size_t)(w - from);
    pp__slot *copy = n ? pp__malloc(n * sizeof *copy) : NULL;
    if (!copy)
      continue;
    uint64_t start = w; /* oldest slot copied and still valid */
    while (start > from) {
      uint64_t b0 = start - from > 4096 ? start - 4096 : from;
      for (uint64_t i = b0; i < start; i++) {
        const pp__slot *src = &t->ring[i & t->mask];
        pp__slot *dst = &copy[i - from];
        atomic_init(&dst->ts,
                    atomic_load_explicit(&src->ts, memory_order_relaxed));
        atomic_init(&dst->a,
                    atomic_load_explicit(&src->a, memory_order_relaxed));
      }
      uint64_t w2 = atomic_load_explicit(&t->w, memory_order_acquire);
      uint64_t safe = w2 > t->capacity ? w2 - t->capacity : 0;
      if (b0 < safe) {
        start = safe < start ? safe : start;
        break;
      }
      start = b0;
    }
    if (start < w)
      S.events_written += encode_range(copy, UINT64_MAX, t->tid, start - from,
                                       n, &S.evbuf, 1, 0);
    pp__free(copy);
  }
  pp__registry_unlock();
  if (S.live) {
    pp__live_note recent[PP__LIVE_KEEP];
    size_t nr = pp__live_recent(S.live, recent, PP__LIVE_KEEP);
    if (nr)
      write_notes(recent, nr);
  }
  if (S.gpu_total) {
    size_t ng = S.gpu_total < GPU_FLIGHT_MAX ? (size_t)S.gpu_total
                                             : GPU_FLIGHT_MAX;
    pp__gpu_rec *g = pp__malloc(ng * sizeof *g);
    if (g) { /* write_gpu_events sorts: work on a copy */
      memcpy(g, S.gpu, ng * sizeof *g);
      write_gpu_events(g, ng);
      pp__free(g);
    }
  }
  write_end();
  stage_flush();
  int failed = S.io_failed;
  close(fd);
  S.fd = saved_fd;
  S.seq = saved_seq;
  S.events_written = saved_events;
  S.drops_written = saved_drops;
  S.io_failed = saved_failed;
  S.good_off = saved_off;
  S.events_flushed = saved_flushed;
  S.pending_events = S.stage_events = 0;
  S.in_dump = 0;
  locmap_clear();
  S.defs.len = 0;
  if (failed) {
    set_error("write to %s failed", path);
    return PP_EIO;
  }
  return PP_OK;
}

int pp_flight_dump(const char *path) {
  if (!atomic_load(&running))
    return PP_ENOTRUNNING;
  if (S.cfg.mode != PP_MODE_FLIGHT)
    return PP_EMODE;
  pthread_mutex_lock(&S.write_lock);
  int rc = flight_dump_locked(path && *path ? path : S.out_path);
  pthread_mutex_unlock(&S.write_lock);
  return rc;
}

/* ---- writer thread ------------------------------------------------------- */

/* The longest writer period while events trickle (see the top comment). */
#define IDLE_FLUSH_MS 50u

static unsigned idle_flush_ms(unsigned flush_ms) {
  return flush_ms > IDLE_FLUSH_MS ? flush_ms : IDLE_FLUSH_MS;
}

static void *writer_main(void *arg) {
  (void)arg;
  pp__name_own_thread("pp-writer");
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  unsigned period = S.cfg.flush_ms, idle = idle_flush_ms(S.cfg.flush_ms);
  uint32_t seen = pp__wake_word();
  while (!atomic_load(&S.stop)) {
    pp__wake_wait(seen, period);
    if (atomic_load(&S.stop))
      break;
    /* Take wake-ups again before the pass, and note the word: a producer
     * that asks during the pass bumps it, and the next sleep returns at
     * once, as if it had asked one system call per ring crossing. */
    uint32_t now = pp__wake_rearm();
    pthread_mutex_lock(&S.write_lock);
    S.pass_busy = now != seen; /* woken: a ring half full or full */
    seen = now;
    writer_pass(0);
    period = S.pass_busy ? S.cfg.flush_ms
                         : period * 2 < idle ? period * 2 : idle;
    pthread_mutex_unlock(&S.write_lock);
    dispatch_notes();
  }
  /* Final drain. */
  pthread_mutex_lock(&S.write_lock);
  writer_pass(1);
  if (S.cfg.mode == PP_MODE_FLIGHT) {
    flight_dump_locked(S.out_path);
  } else {
    if (S.io_errno && S.fd >= 0 &&
        ftruncate(S.fd, (off_t)S.good_off) == 0 &&
        lseek(S.fd, (off_t)S.good_off, SEEK_SET) == (off_t)S.good_off) {
      /* A write failed: try once more to finish the file (the space may
       * be back), with the final count of lost events. */
      S.io_failed = write_loss_meta(S.fd, &S.seq) != 0;
    }
    write_cost_meta();
    if (S.agg) {
      pp__aggregate_finish(S.agg, pp__mono_ns());
      ppt_buf b = {0};
      pp__aggregate_encode(S.agg, &b);
      write_chunk(PPT_CHUNK_STATS, &b);
      ppt_buf_free(&b);
    }
    write_end();
  }
  stage_flush();
  if (S.io_errno && S.fd >= 0) /* no partial chunk after the last whole */
    (void)!ftruncate(S.fd, (off_t)S.good_off);
  if (S.fd >= 0)
    close(S.fd);
  S.fd = -1;
  pthread_mutex_unlock(&S.write_lock);
  atomic_store(&S.finished, 1);
  return NULL;
}

/* ---- signals, fork, exit ------------------------------------------------- */

static void on_signal(int sig) {
  int saved = errno;
  if (atomic_load(&running) && S.pid == getpid()) {
    pp__recorder_publish(0);
    atomic_store(&S.stop, 1);
    pp__wake_force();
    struct timespec ts = {0, 2000000}; /* wait up to 3 s for the writer */
    for (int i = 0; i < 1500 && !atomic_load(&S.finished); i++)
      nanosleep(&ts, NULL);
  }
  sigaction(sig, sig == SIGINT ? &old_int : &old_term, NULL);
  errno = saved;
  raise(sig);
}

static void install_signals(void) {
  struct sigaction cur;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  signals_installed = 0;
  if (sigaction(SIGINT, NULL, &cur) == 0 && cur.sa_handler == SIG_DFL &&
      sigaction(SIGINT, &sa, &old_int) == 0)
    signals_installed |= 1;
  if (sigaction(SIGTERM, NULL, &cur) == 0 && cur.sa_handler == SIG_DFL &&
      sigaction(SIGTERM, &sa, &old_term) == 0)
    signals_installed |= 2;
}

static void restore_signals(void) {
  struct sigaction cur;
  if ((signals_installed & 1) && sigaction(SIGINT, NULL, &cur) == 0 &&
      cur.sa_handler == on_signal)
    sigaction(SIGINT, &old_int, NULL);
  if ((signals_installed & 2) && sigaction(SIGTERM, NULL, &cur) == 0 &&
      cur.sa_handler == on_signal)
    sigaction(SIGTERM, &old_term, NULL);
  signals_installed = 0;
}

static void at_exit(void) {
  S.exiting = 1; /* read by the writer's final pass, after the join's
                    synchronisation in pp_shutdown's wake-up */
  pp_shutdown();
  S.exiting = 0;
}

/* Around fork: let the writer finish its pass first, so the child does not
 * inherit it halfway through (holding the allocator's or our locks). The
 * order matches the writer's: write_lock, then the registry. */
static void fork_prepare(void) {
  if (atomic_load(&running) && S.pid == getpid()) {
    pthread_mutex_lock(&S.write_lock);
    pp__registry_lock();
  }
}

static void fork_parent(void) {
  if (atomic_load(&running) && S.pid == getpid()) {
    pp__registry_unlock();
    pthread_mutex_unlock(&S.write_lock);
  }
}

static void fork_child(void) {
  /* The child does not own the parent's trace: profiling stops in the
   * child, the parent's file is never touched, and the child may start a
   * session of its own with pp_init(). */
  pp__recorder_publish(0);
  atomic_store(&running, 0);
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  memcpy(&ctl_lock, &fresh, sizeof fresh);
  memcpy(&S.write_lock, &fresh, sizeof fresh);
  memcpy(&live_lock, &fresh, sizeof fresh);
  memcpy(&cb_lock, &fresh, sizeof fresh);
  S.live = NULL; /* the parent's; leaked in the child on purpose */
  S.peek = NULL;
  S.cap_peek = 0;
  S.nnotes = 0;
  pp__meta_after_fork();
  pp__wake_close();
  S.fd = -1;
  S.agg = NULL; /* the parent's copy; leaked in the child on purpose */
  S.snap = NULL;
  S.nsnap = S.cap_snap = 0;
  S.locmap = NULL;
  S.locmap_cap = S.nlocs = 0;
  memset(&S.defs, 0, sizeof S.defs);
  memset(&S.evbuf, 0, sizeof S.evbuf);
  memset(&S.stage, 0, sizeof S.stage);
  S.sampler = NULL; /* its thread does not exist in the child */
  S.gpu = NULL;
  S.ngpu = S.cap_gpu = S.gpu_total = 0;
  atomic_store(&S.cuda, 0);
  pp__cupti_after_fork_child(); /* CUPTI does not trace the child */
  pp__recorder_after_fork_child();
  if (claim_fd >= 0) { /* the parent's lock stays: it has its own copy */
    close(claim_fd);
    claim_fd = -1;
  }
}

/* ---- init / shutdown ----------------------------------------------------- */

/* META "live": what the live statistics watch, for the report. */
static void live_meta(const pp__live_cfg *c) {
  char b[384], alerts[160];
  if (!S.live) {
    pp__session_meta("live", c->on ? "off: out of memory" : "off");
    return;
  }
  size_t n = 0;
  alerts[0] = 0;
  if (c->mem_pct > 0)
    n += (size_t)snprintf(alerts + n, sizeof alerts - n, ", mem %g%%",
                          c->mem_pct);
  if (c->swap && n < sizeof alerts)
    n += (size_t)snprintf(alerts + n, sizeof alerts - n, ", swap");
  if (c->psi_pct > 0 && n < sizeof alerts)
    n += (size_t)snprintf(alerts + n, sizeof alerts - n, ", psi %g%%",
                          c->psi_pct);
  if (c->throttle && n < sizeof alerts)
    n += (size_t)snprintf(alerts + n, sizeof alerts - n, ", throttle");
  if (c->gpu_mem_pct > 0 && n < sizeof alerts)
    snprintf(alerts + n, sizeof alerts - n, ", gpu_mem %g%%",
             c->gpu_mem_pct);
  snprintf(b, sizeof b,
           "interval %g ms, k %g, history %u, min %u, floor %g%%; alerts: "
           "%s%s",
           (double)c->interval_ns * 1e-6, c->k, c->history, c->min_values,
           c->floor_rel * 100, alerts[0] ? alerts + 2 : "none",
           S.cfg.sample_hz ? "" : " (no sampler)");
  pp__session_meta("live", b);
}

static void default_process_name(char *buf, size_t len) {
  /* The executable's file name: /proc/self/comm is cut at 15 bytes. */
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  buf[0] = 0;
  if (n > 0) {
    exe[n] = 0;
    const char *base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    size_t k = strlen(base);
    if (k >= len)
      k = len - 1;
    memcpy(buf, base, k);
    buf[k] = 0;
  }
  if (!buf[0])
    snprintf(buf, len, "pid %ld", (long)getpid());
}

int pp_init(const pp_config *user) {
  pp_config cfg;
  pp_config_init(&cfg);
  if (user) {
    if (user->struct_size < offsetof(pp_config, reserved) ||
        user->struct_size > sizeof cfg) {
      set_error("pp_config.struct_size %u is not a known size "
                "(call pp_config_init)",
                user->struct_size);
      return PP_EINVAL;
    }
    memcpy(&cfg, user, user->struct_size);
  }
  if (cfg.mode != PP_MODE_STATS && cfg.mode != PP_MODE_TRACE &&
      cfg.mode != PP_MODE_FLIGHT) {
    set_error("unknown mode %d", (int)cfg.mode);
    return PP_EINVAL;
  }
  if (cfg.buffer_kib == 0)
    cfg.buffer_kib = cfg.mode == PP_MODE_FLIGHT ? 4096 : 1024;
  if (cfg.buffer_kib < 16 || cfg.buffer_kib > 1048576 ||
      (cfg.buffer_kib & (cfg.buffer_kib - 1))) {
    set_error("buffer_kib %u: expected a power of two from 16 to 1048576",
              cfg.buffer_kib);
    return PP_EINVAL;
  }
  if (cfg.sample_hz > 1000) {
    set_error("sample_hz %u: expected 0 (off) or 1 to 1000", cfg.sample_hz);
    return PP_EINVAL;
  }
  if (cfg.flush_ms < 1 || cfg.flush_ms > 1000) {
    set_error("flush_ms %u: expected 1 to 1000", cfg.flush_ms);
    return PP_EINVAL;
  }
  pp__live_cfg live_cfg;
  pp__live_cfg_default(&live_cfg);
  char lerr[sizeof last_error];
  if (pp__live_parse(getenv("PIPEPROF_LIVE"), &live_cfg, lerr,
                     sizeof lerr) != 0 ||
      pp__alerts_parse(getenv("PIPEPROF_ALERTS"), &live_cfg, lerr,
                       sizeof lerr) != 0) {
    set_error("%s", lerr);
    return PP_EENV;
  }
  /* An interval closes a grace period after its end, when the events of
   * its last moments have been drained. */
  live_cfg.grace_ns =
      2 * (int64_t)idle_flush_ms(cfg.flush_ms) * 1000000 + 10000000;
  pthread_mutex_lock(&ctl_lock);
  if (atomic_load(&running)) {
    pthread_mutex_unlock(&ctl_lock);
    set_error("a session is already running");
    return PP_EBUSY;
  }
  pp__clock_init();
  /* S is zero before the first session: clearing it again would fault in
   * its ~30 KB, pages it may never use (10 us a page on some VMs). */
  static int s_used;
  if (s_used)
    memset(&S, 0, sizeof S);
  s_used = 1;
  S.cfg = cfg;
  S.pid = getpid();
  S.fd = -1;
  pthread_mutex_init(&S.write_lock, NULL);
  if (cfg.out_path && *cfg.out_path)
    snprintf(S.out_path, sizeof S.out_path, "%s", cfg.out_path);
  else
    snprintf(S.out_path, sizeof S.out_path, "pipeprof-%ld.pptrace",
             (long)S.pid);
  if (cfg.process_name && *cfg.process_name)
    pp__env_cut_utf8(S.process_name, sizeof S.process_name,
                     cfg.process_name);
  else
    default_process_name(S.process_name, sizeof S.process_name);
  S.cfg.out_path = S.out_path;
  S.cfg.process_name = S.process_name;
  if (cfg.mode != PP_MODE_FLIGHT) {
    S.fd = open_output(S.out_path);
    S.good_off = PPT_FILE_HEADER_SIZE;
    if (S.fd < 0) {
      set_error("cannot create %s: %s", S.out_path, strerror(errno));
      pthread_mutex_unlock(&ctl_lock);
      return PP_EIO;
    }
  } else {
    /* Check now that the dump target can be written; an earlier dump
     * there stays whole until this session writes one (no O_TRUNC). */
    int fd = open(S.out_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      set_error("cannot create %s: %s", S.out_path, strerror(errno));
      pthread_mutex_unlock(&ctl_lock);
      return PP_EIO;
    }
    close(fd);
  }
  if (cfg.mode == PP_MODE_STATS) {
    S.agg = pp__aggregate_new();
    if (!S.agg) {
      close(S.fd);
      set_error("out of memory");
      pthread_mutex_unlock(&ctl_lock);
      return PP_ENOMEM;
    }
  }
  pp__clock_sync before;
  pp__clock_sync_now(&before);
  S.event_cost_ns = pp__measure_event_cost(&S.drop_cost_ns);
  pp__clock_sync_now(&S.sync0);
  S.ticks_per_ns = pp__clock_rate(&before, &S.sync0);
  S.last_sync = S.sync0;
  S.live_cfg = live_cfg;
  pthread_mutex_lock(&live_lock);
  S.live = pp__live_new(&live_cfg, S.sync0.mono_ns); /* NULL: off or OOM */
  pthread_mutex_unlock(&live_lock);
  if (S.fd >= 0)
    write_meta(S.fd, &S.seq);
  pp__recorder_configure((uint64_t)cfg.buffer_kib * 1024 / sizeof(pp__slot),
                         cfg.mode == PP_MODE_FLIGHT);
  pp__recorder_reset_positions();
  pp__gpu_session_start();
  atomic_store(&running, 1);
  pp__meta_open(1);
  if (pthread_create(&S.writer, NULL, writer_main, NULL) != 0) {
    atomic_store(&running, 0);
    pp__meta_open(0);
    if (S.fd >= 0)
      close(S.fd);
    pp__aggregate_free(S.agg);
    S.agg = NULL;
    pthread_mutex_lock(&live_lock);
    pp__live_free(S.live);
    S.live = NULL;
    pthread_mutex_unlock(&live_lock);
    set_error("cannot start the writer thread");
    pthread_mutex_unlock(&ctl_lock);
    return PP_ENOMEM;
  }
  if (!atexit_registered) {
    atexit(at_exit);
    atexit_registered = 1;
  }
  if (!atfork_registered) {
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    atfork_registered = 1;
  }
  if (cfg.install_signals)
    install_signals();
  atomic_store(&enabled_flag, cfg.start_enabled ? 1 : 0);
  update_active();
  if (cfg.sample_hz) {
    const char *root = getenv("PIPEPROF_SYSROOT");
    pp__sampler_cfg sc = {getpid(), cfg.sample_hz, root, 1, 0, 0, 1, 0, 1};
    S.sampler = pp__sampler_open(&sc);
    if (S.sampler && pp__sampler_start(S.sampler) != 0) {
      pp__sampler_stop(S.sampler);
      S.sampler = NULL;
    }
  }
  live_meta(&live_cfg);
  last_error[0] = 0;
  pthread_mutex_unlock(&ctl_lock);
  return PP_OK;
}

/* Claim path, shared through PIPEPROF_OUT by processes that may run at the
 * same time (`sh -c "a & b"`), for this one: an exclusive flock, which
 * fails while another live process holds it. 1: claimed (claim_fd); 0:
 * not claimed but usable (locks do not work there, or pp_init will report
 * that the path cannot be created); -1: taken. */
static int claim_output(const char *path, int *created) {
  *created = 0;
  if (claim_fd >= 0)
    return 0; /* a session of ours holds one already */
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd >= 0)
    *created = 1;
  else if (errno == EEXIST)
    fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int taken = errno == EWOULDBLOCK;
    close(fd);
    if (*created) /* locks do not work there: pp_init creates it */
      unlink(path);
    *created = 0;
    return taken ? -1 : 0;
  }
  claim_fd = fd;
  return 1;
}

static void release_claim(void) {
  if (claim_fd >= 0)
    close(claim_fd); /* drops the lock */
  claim_fd = -1;
}

int pp_shutdown(void) {
  pthread_mutex_lock(&ctl_lock);
  if (!atomic_load(&running) || S.pid != getpid()) {
    pthread_mutex_unlock(&ctl_lock);
    return PP_ENOTRUNNING;
  }
  if (S.sampler) { /* its last sample must still be recorded */
    pp__sampler_stop(S.sampler);
    S.sampler = NULL;
  }
  if (atomic_load(&S.cuda)) /* forced flush: the final pass writes it */
    pp__cupti_stop();
  pp__recorder_publish(0);
  atomic_store(&S.stop, 1);
  pp__wake_force();
  pthread_join(S.writer, NULL);
  pp__wake_close();
  dispatch_notes(); /* from the writer's last regular pass */
  atomic_store(&S.cuda, 0);
  restore_signals();
  int failed = S.io_failed || S.io_errno;
  pthread_mutex_lock(&live_lock);
  atomic_store(&running, 0);
  pp__meta_open(0);
  pp__live_free(S.live);
  S.live = NULL;
  pthread_mutex_unlock(&live_lock);
  pp__free(S.peek);
  S.peek = NULL;
  S.cap_peek = 0;
  pp__aggregate_free(S.agg);
  S.agg = NULL;
  locmap_clear();
  ppt_buf_free(&S.defs);
  ppt_buf_free(&S.evbuf);
  ppt_buf_free(&S.stage);
  pp__free(S.gpu);
  S.gpu = NULL;
  S.ngpu = S.cap_gpu = S.gpu_total = 0;
  pp__free(S.snap);
  S.snap = NULL;
  S.nsnap = S.cap_snap = 0;
  release_claim();
  pthread_mutex_unlock(&ctl_lock);
  if (failed) {
    set_error("writing %s failed", S.out_path);
    return PP_EIO;
  }
  return PP_OK;
}

/* ---- CUDA activity tracing ------------------------------------------------
 */

int pp__session_cuda_start(void) {
  pthread_mutex_lock(&ctl_lock);
  if (!atomic_load(&running) || S.pid != getpid()) {
    pthread_mutex_unlock(&ctl_lock);
    return -1;
  }
  if (atomic_load(&S.cuda)) {
    pthread_mutex_unlock(&ctl_lock);
    return 0;
  }
  char why[400];
  int rc = -1;
  if (S.cfg.mode != PP_MODE_TRACE)
    snprintf(why, sizeof why,
             "CUDA tracing needs trace mode (PIPEPROF_MODE=trace)");
  else
    rc = pp__cupti_start(why, sizeof why);
  if (rc != 0) {
    pp__session_meta("unavailable.cuda", why);
  } else {
    S.cuda_flush_ns = pp__mono_ns();
    atomic_store(&S.cuda, 1);
    pp__session_meta("cuda.tracing", "cupti");
    pp__session_meta("cuda.clock", pp__cupti_info("clock"));
    pp__session_meta("cuda.libcupti", pp__cupti_info("library"));
    pp__session_meta("cuda.cupti_version", pp__cupti_info("version"));
    const char *miss = pp__cupti_info("missing");
    if (*miss)
      pp__session_meta("unavailable.cuda.kinds", miss);
  }
  pp__wake_writer();
  pthread_mutex_unlock(&ctl_lock);
  return rc;
}

/* ---- environment ----------------------------------------------------------
 */

/* Every PIPEPROF_* value goes through env.c, one rule for all (see env.h
 * and docs/api.md): nothing trimmed, numbers are plain digits, keywords
 * ignore case, an invalid value prints one line and leaves profiling off. */

static int env_bool(const char *name, const char *v, int *out) {
  if (pp__env_bool(v, out) == 0)
    return 0;
  pp__env_invalid(name, v, "expected 1 or 0 (on/off, true/false, yes/no)");
  return -1;
}

static int env_uint(const char *name, const char *v, unsigned lo,
                    unsigned hi, unsigned *out) {
  uint64_t x;
  if (pp__env_uint(v, lo, hi, &x) == 0) {
    *out = (unsigned)x;
    return 0;
  }
  char want[96];
  snprintf(want, sizeof want, "expected a number from %u to %u", lo, hi);
  pp__env_invalid(name, v, want);
  return -1;
}

int pp_init_from_env(void) {
  const char *on = getenv("PIPEPROF");
  int enable = 0;
  if (!on)
    return PP_OK;
  if (atomic_load(&running))
    return PP_EBUSY;
  if (env_bool("PIPEPROF", on, &enable) != 0)
    return PP_EENV;
  if (!enable)
    return PP_OK;
  pp_config cfg;
  pp_config_init(&cfg);
  const char *v;
  if ((v = getenv("PIPEPROF_MODE")) != NULL) {
    static const char *const modes[] = {"stats", "trace", "flight"};
    static const pp_mode mv[] = {PP_MODE_STATS, PP_MODE_TRACE,
                                 PP_MODE_FLIGHT};
    int i = pp__env_enum(v, modes, PP__ARRAY_LEN(modes));
    if (i < 0) {
      pp__env_invalid("PIPEPROF_MODE", v, "expected stats, trace or flight");
      return PP_EENV;
    }
    cfg.mode = mv[i];
  }
  unsigned u;
  if ((v = getenv("PIPEPROF_BUFFER_KIB")) != NULL) {
    uint64_t x;
    if (pp__env_uint(v, 16, 1048576, &x) != 0 || (x & (x - 1))) {
      pp__env_invalid("PIPEPROF_BUFFER_KIB", v,
                      "expected a power of two from 16 to 1048576");
      return PP_EENV;
    }
    cfg.buffer_kib = (unsigned)x;
  }
  if ((v = getenv("PIPEPROF_FLUSH_MS")) != NULL) {
    if (env_uint("PIPEPROF_FLUSH_MS", v, 1, 1000, &u) != 0)
      return PP_EENV;
    cfg.flush_ms = u;
  }
  if ((v = getenv("PIPEPROF_SIGNALS")) != NULL) {
    int b;
    if (env_bool("PIPEPROF_SIGNALS", v, &b) != 0)
      return PP_EENV;
    cfg.install_signals = b;
  }
  if ((v = getenv("PIPEPROF_CLOCK")) != NULL &&
      pp__env_enum(v, pp__clock_names, 2) < 0) {
    pp__env_invalid("PIPEPROF_CLOCK", v, "expected tsc or monotonic");
    return PP_EENV;
  }
  if ((v = getenv("PIPEPROF_SAMPLE_HZ")) != NULL) {
    if (env_uint("PIPEPROF_SAMPLE_HZ", v, 0, 1000, &u) != 0)
      return PP_EENV;
    cfg.sample_hz = u;
  }
  if ((v = getenv("PIPEPROF_GPU_SLOTS")) != NULL &&
      pp__gpu_parse_slots(v) == 0) {
    pp__env_invalid("PIPEPROF_GPU_SLOTS", v,
                    "expected a number from 2 to 65536");
    return PP_EENV;
  }
  /* An invalid PIPEPROF_CUDA is invalid like any other value: profiling
   * stays off (it used to leave only CUDA tracing off). */
  int cuda = 0;
  if ((v = getenv("PIPEPROF_CUDA")) != NULL &&
      env_bool("PIPEPROF_CUDA", v, &cuda) != 0)
    return PP_EENV;
  if ((v = getenv("PIPEPROF_PROCESS_NAME")) != NULL) {
    if (pp__env_name(v) != 0) {
      pp__env_invalid("PIPEPROF_PROCESS_NAME", v,
                      "expected a name without control characters");
      return PP_EENV;
    }
    cfg.process_name = v; /* pp_init cuts it at a UTF-8 boundary */
  }
  const char *specs[] = {"PIPEPROF_LIVE", "PIPEPROF_ALERTS"};
  for (size_t i = 0; i < PP__ARRAY_LEN(specs); i++)
    if ((v = getenv(specs[i])) != NULL && pp__env_spec(v) != 0) {
      pp__env_invalid(specs[i], v,
                      "expected no whitespace or control characters");
      return PP_EENV;
    }
  const char *out = getenv("PIPEPROF_OUT");
  if (out && strlen(out) + 24 > sizeof S.out_path) { /* room for .<pid> */
    char want[64];
    snprintf(want, sizeof want, "expected a path shorter than %zu bytes",
             sizeof S.out_path - 24);
    pp__env_invalid("PIPEPROF_OUT", out, want);
    return PP_EENV;
  }
  /* All of the configuration is checked before any file is created:
   * pp_init reads these two again. */
  {
    pp__live_cfg lc;
    char lerr[sizeof last_error];
    pp__live_cfg_default(&lc);
    if (pp__live_parse(getenv("PIPEPROF_LIVE"), &lc, lerr, sizeof lerr) !=
            0 ||
        pp__alerts_parse(getenv("PIPEPROF_ALERTS"), &lc, lerr,
                         sizeof lerr) != 0) {
      /* No control character can be in it: checked above. */
      fprintf(stderr, "pipeprof: %s; profiling is off\n", lerr);
      return PP_EENV;
    }
  }
  /* A program exec'd by the profiled one inherits PIPEPROF_OUT; give it a
   * file of its own instead of clobbering its parent's. */
  char path[PATH_MAX];
  const char *owner = getenv("PIPEPROF_OWNER_PID");
  char me[32];
  snprintf(me, sizeof me, "%ld", (long)getpid());
  int claimed = 0, created = 0;
  if (out && *out) {
    /* Descendants of the owner, and processes that find the file claimed
     * by another live one (a sibling), write OUT.<pid>. */
    if ((owner && *owner && strcmp(owner, me) != 0) ||
        (claimed = claim_output(out, &created)) < 0)
      snprintf(path, sizeof path, "%s.%s", out, me);
    else
      snprintf(path, sizeof path, "%s", out);
    cfg.out_path = path;
  }
  if (!owner || !*owner)
    setenv("PIPEPROF_OWNER_PID", me, 1);
  int rc = pp_init(&cfg);
  if (rc != PP_OK) {
    if (claimed > 0) {
      pthread_mutex_lock(&ctl_lock);
      if (created) /* no session: leave no empty file behind */
        unlink(out);
      release_claim();
      pthread_mutex_unlock(&ctl_lock);
    }
    fprintf(stderr, "pipeprof: %s; profiling is off\n", pp_last_error());
  }
  else if (cuda)
    pp__session_cuda_start();
  return rc;
}

/* ---- start from the environment when the library is loaded ------------- */

/* A program that runs sessions of its own (the pipeprof command) defines
 * this as nonzero so that PIPEPROF=1 in its environment, meant for the
 * program it profiles, does not start one at load time. */
extern const int pp__no_autostart __attribute__((weak));

__attribute__((constructor)) static void pp__autostart(void) {
  if (&pp__no_autostart && pp__no_autostart)
    return;
  pp_init_from_env();
}
