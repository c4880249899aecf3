/* SPDX-License-Identifier: MIT */
/*
 * The writer thread (see writer.h): passes over the rings, the sinks of
 * the session's mode, the file's own chunks, flight dumps and the alert
 * callback.
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
 * them (docs/formats/pptrace.md).
 *
 * Slots go to the sinks in blocks of BLOCK_SLOTS, each sink in turn over
 * the same block: the first sink brings the block into the writer's cache
 * from the recording thread's, the second reads it there.
 */
#include "writer.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../collect/cupti.h"
#include "../ring/arena.h"
#include "../format/events.h"
#include "../format/records.h"
#include "../internal.h"
#include "../sink/flight.h"
#include "../sink/out.h"
#include "../sink/sites.h"
#include "../sink/stats_sink.h"
#include "../sink/trace.h"
#include "gpu.h"
#include "meta.h"
#include "recorder.h"
#include "../ring/tally.h"
#include "wake.h"

/* The longest writer period while events trickle (see the top comment). */
#define IDLE_FLUSH_MS 50u
/* Slots each sink takes at a time (256 KiB of ring). */
#define BLOCK_SLOTS 16384u
/* Flight mode keeps the rings of this many threads that exited last (the
 * rest are freed: memory stays bounded when a program keeps starting
 * threads). */
#define FLIGHT_KEEP_EXITED 64u
#define MAX_SINKS 3

typedef struct writer {
  pp_mode mode;
  unsigned flush_ms;
  char out_path[PATH_MAX];
  char process_name[64];
  pid_t pid;
  pthread_t thread;
  _Atomic int stop;
  _Atomic int finished;
  pp__clock_sync sync0, last_sync;
  double ticks_per_ns, event_cost_ns, drop_cost_ns;
  pthread_mutex_t lock;       /* a pass, or a flight dump */
  pp__out out;                /* trace and stats modes */
  pp__sites sites;            /* of out */
  pp__sink *rec;              /* trace or stats sink: writes to out */
  pp__sink *flight;           /* flight mode */
  pp__live *live;             /* the session's; its sink is in sinks */
  pp__sink *sinks[MAX_SINKS]; /* drained slots, GPU zones, threads */
  size_t nsinks;
  uint64_t events_written; /* taken by rec (END's count) */
  uint64_t drops_written;
  pp__tstate **snap;
  size_t nsnap, cap_snap;
  pp__slot *peek; /* flight mode: copy of new ring slots for live */
  size_t cap_peek;
  pp__note notes[64]; /* taken this pass, dispatched after it */
  size_t nnotes;
  pp__gpu_rec *gpu; /* GPU zones resolved this pass */
  size_t ngpu, cap_gpu;
  _Atomic int cuda;         /* CUPTI activity tracing on (trace mode only) */
  int64_t cuda_flush_ns;    /* last periodic CUPTI flush */
  int pass_busy;            /* this pass found a ring >= 1/16 full */
  int exiting;              /* the process is going: the kernel frees */
  uint64_t flight_released; /* exited threads whose rings were freed */
  /* The durable arena (ring/arena.h): its file ("" when none, the reason
   * in durable_off), the passes committed, and the threads drained by
   * this pass whose read index moves once the pass is in the file. */
  char durable_path[PATH_MAX];
  char durable_off[PATH_MAX + 64];
  uint64_t pass_no;
  uint64_t fallbacks_said; /* arena fallbacks written to META */
  uintptr_t sites_seen[32]; /* flight mode: sites recorded lately */
  pp__tstate **pend;
  size_t npend, cap_pend;
  /* Stats mode: threads whose tally sets this pass merged for the last
   * time (dead), freed once the pass is committed; whether the pass
   * changed the aggregate (a checkpoint is due); the checkpoint's bytes. */
  pp__tstate **taken;
  size_t ntaken, cap_taken;
  int ckpt_dirty;
  ppt_buf ckpt;
  char dump_err[PATH_MAX + 160]; /* flight mode: the final dump failed */
} writer;

static writer W;

/* Syncs (pp__writer_sync): callers ask for a pass by raising sync_req and
 * wait for sync_done to reach it. Outside W, which a new session clears:
 * a caller may still wait while one session ends. */
static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sync_cond = PTHREAD_COND_INITIALIZER;
static _Atomic unsigned sync_req;
static unsigned sync_done;        /* under sync_lock */
static int sync_alive;            /* a writer thread runs; under sync_lock */
static pthread_t sync_thread;     /* that thread; under sync_lock */

/* The alert callback (pp_on_alert); kept across sessions. */
static pthread_mutex_t cb_lock = PTHREAD_MUTEX_INITIALIZER;
static pp_alert_fn cb_fn;
static void *cb_user;

unsigned pp__writer_idle_ms(unsigned flush_ms) {
  return flush_ms > IDLE_FLUSH_MS ? flush_ms : IDLE_FLUSH_MS;
}

/* Ticks to ns at the running rate (the first pass: the start-up one). */
static pp__clockmap clock_now(void) {
  return pp__clockmap_make(W.sync0.tick, W.sync0.mono_ns,
                           1.0 / pp__clock_rate(&W.sync0, &W.last_sync));
}

/* ---- the file's own chunks ----------------------------------------------- */

static void put_chunk(pp__out *o, uint16_t type, ppt_buf *b) {
  pp__out_chunk(o, type, b, 0);
  ppt_buf_free(b);
}

static void write_meta(pp__out *o) {
  ppt_buf b = {0};
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  static const char *const modes[] = {"stats", "trace", "flight"};
  char num[6][64];
  snprintf(num[0], sizeof num[0], "%ld", (long)W.pid);
  snprintf(num[1], sizeof num[1], "%lld", (long long)W.sync0.mono_ns);
  snprintf(num[2], sizeof num[2], "%lld", (long long)W.sync0.real_ns);
  snprintf(num[3], sizeof num[3], "%.3f", W.event_cost_ns);
  snprintf(num[4], sizeof num[4], "%.3f", W.drop_cost_ns);
  snprintf(num[5], sizeof num[5], "%.9f", W.ticks_per_ns);
  const char *const kv[][2] = {
      {"process_name", W.process_name},
      {"mode", modes[W.mode]},
      {"hostname", host},
      {"lib_version", PP_VERSION_STRING},
      {"tick_source", pp__clock_source()},
      {"pid", num[0]},
      {"start_mono_ns", num[1]},
      {"start_realtime_ns", num[2]},
      {"event_cost_ns", num[3]},
      {"drop_cost_ns", num[4]},
      {"ticks_per_ns", num[5]},
  };
  ppt_meta_pairs_put(&b, kv, PP__ARRAY_LEN(kv));
  put_chunk(o, PPT_CHUNK_META, &b);
  /* The clock origin. */
  ppt_clock origin = {W.sync0.tick, W.sync0.mono_ns, W.sync0.real_ns};
  ppt_clock_put(&b, &origin);
  put_chunk(o, PPT_CHUNK_CLOCK, &b);
}

static void write_clock(pp__out *o) {
  pp__clock_sync s;
  pp__clock_sync_now(&s);
  W.last_sync = s;
  ppt_buf b = {0};
  ppt_clock r = {s.tick, s.mono_ns, s.real_ns};
  ppt_clock_put(&b, &r);
  put_chunk(o, PPT_CHUNK_CLOCK, &b);
}

static void write_pending_meta(void) {
  ppt_buf b = {0};
  if (pp__meta_take(&b))
    pp__out_chunk(&W.out, PPT_CHUNK_META, &b, 0);
  ppt_buf_free(&b);
}

/* Whole chunks the session's tools handed over (meta.h). */
static void put_waiting(void *ctx, uint16_t type, ppt_buf *b) {
  put_chunk(ctx, type, b);
}

static void write_pending_chunks(void) { pp__chunks_take(put_waiting, &W.out); }

static void write_end(pp__out *o, uint64_t events, uint64_t drops) {
  ppt_buf b = {0};
  ppt_end r = {events, drops};
  ppt_end_put(&b, &r);
  put_chunk(o, PPT_CHUNK_END, &b);
}

/* Anomalies and alerts as one EVENTS chunk of the process-wide pseudo
 * thread 0 (docs/formats/pptrace.md, event types 22 and 23), their times
 * converted back to ticks by clock; not counted among the events. */
static void write_notes(pp__out *o, const pp__note *nt, size_t n,
                        const pp__clockmap *clock) {
  ppt_buf b = {0};
  uint64_t prev = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t tick =
        clock->tick0 + (uint64_t)(int64_t)((double)(nt[i].ns - clock->ns0) /
                                           clock->ns_per_tick);
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
    pp__out_chunk(o, PPT_CHUNK_EVENTS, &b, 0);
  ppt_buf_free(&b);
}

/* META writer_cpu_ns and process_cpu_ns at the end of a session: the CPU
 * time the writer thread has used (measured, not estimated) and the whole
 * process's, so the report can put the profiler's own cost beside the
 * program's. */
/* META of the rings' budget (recorder.h) when rings were made smaller:
 * its pairs into kv, their numbers' text in text; how many (0 or 2). */
static size_t rings_meta(const char *kv[2][2], char text[2][24]) {
  uint64_t smaller = pp__recorder_rings_smaller();
  if (!smaller)
    return 0;
  snprintf(text[0], sizeof text[0], "%llu", (unsigned long long)smaller);
  snprintf(text[1], sizeof text[1], "%llu",
           (unsigned long long)(PP__RING_BUDGET_BYTES >> 20));
  kv[0][0] = "rings_smaller";
  kv[0][1] = text[0];
  kv[1][0] = "rings_budget_mib";
  kv[1][1] = text[1];
  return 2;
}

/* How the session ends (pp__writer_set_end), taken by its last pass. */
static const char *_Atomic end_how;

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
  const char *how = atomic_exchange(&end_how, NULL);
  pp__session_meta("process.end", how ? how : "pp_shutdown");
  char text[2][24];
  const char *kv[2][2];
  for (size_t i = 0, n = rings_meta(kv, text); i < n; i++)
    pp__session_meta(kv[i][0], kv[i][1]);
  write_pending_meta();
}

/* ---- sinks --------------------------------------------------------------- */

#define EACH_SINK(k, op)                                                       \
  for (size_t k##_i = 0; k##_i < W.nsinks; k##_i++)                            \
    for (pp__sink *k = W.sinks[k##_i]; k && k->ops->op; k = NULL)

/* The slots s describes to every sink, block by block (a block never ends
 * between the two slots of an event). Returns the events the recording
 * sink took. */
static uint64_t feed_slots(pp__slots s) {
  uint64_t n = 0, from = s.from, to = s.to;
  while (from < to) {
    uint64_t end =
        pp__slots_block_end(s.ring, s.mask, from, to, BLOCK_SLOTS);
    s.from = from;
    s.to = end;
    s.last = end == to;
    EACH_SINK(k, slots) {
      uint64_t took = k->ops->slots(k, &s);
      if (k == W.rec)
        n += took;
    }
    from = end;
  }
  return n;
}

static void sinks_free(void) {
  for (size_t i = 0; i < W.nsinks; i++) /* the live sink is the session's */
    if (W.sinks[i]->ops->free)
      W.sinks[i]->ops->free(W.sinks[i]);
  W.nsinks = 0;
  W.rec = W.flight = NULL;
}

/* ---- draining rings ------------------------------------------------------ */

/* A pass found n new slots in t's ring, up to w: note whether the ring is
 * filling (the writer's period) and populate it ahead of the producer,
 * unless this is the last pass (nothing will be recorded after it). */
static void pass_saw(pp__tstate *t, uint64_t n, uint64_t w) {
  if (n * 16 > t->capacity)
    W.pass_busy = 1;
  if (!atomic_load(&W.stop))
    pp__ring_prefault(t, w, n);
}

/* The read index moves only once the pass's chunks are in the file
 * (commit_pass): a process killed in between keeps the slots in its ring
 * for a salvager, and the producer cannot overwrite them before. */
static void drain_thread(pp__tstate *t, const pp__clockmap *clock) {
  uint64_t w = atomic_load_explicit(&t->w, memory_order_acquire);
  uint64_t r = atomic_load_explicit(&t->r, memory_order_relaxed);
  if (w == r)
    return;
  pass_saw(t, w - r, w);
  pp__slots s = {t->tid, t->ring, t->mask, r, w, 0, *clock};
  W.events_written += feed_slots(s);
  W.ckpt_dirty = 1;
  t->r_pending = w;
  t->pending_pass = W.pass_no;
  if (pp__grow((void **)&W.pend, &W.cap_pend, W.npend + 1, sizeof *W.pend) ==
      0)
    W.pend[W.npend++] = t;
  else /* no memory to defer it: moved now, as before durable rings */
    atomic_store_explicit(&t->r, w, memory_order_release);
}

/* META durable.fallbacks (and the first reason): threads whose rings
 * the arena could not hold, written when the count moves. */
static void durable_fallbacks(void) {
  if (!W.durable_path[0])
    return;
  char why[160], num[32];
  uint64_t k = pp__arena_fallbacks(why, sizeof why);
  if (k == W.fallbacks_said)
    return;
  W.fallbacks_said = k;
  snprintf(num, sizeof num, "%llu", (unsigned long long)k);
  pp__session_meta("durable.fallbacks", num);
  pp__session_meta("durable.fallback_why", why);
}

/* Stats mode: the aggregate, when the pass changed it, into the arena
 * (the checkpoint a salvager starts from: the rings' events this pass
 * drained and the tally sets it merged are in it). */
static void stats_checkpoint(void) {
  if (!W.ckpt_dirty || !W.rec->ops->checkpoint)
    return;
  W.ckpt.len = 0;
  W.ckpt.oom = 0;
  W.rec->ops->checkpoint(W.rec, &W.ckpt);
  /* no room: the last checkpoint stays, counted as an arena fallback
   * (META durable.fallbacks) */
  if (!W.ckpt.oom && pp__arena_ckpt(W.ckpt.data, W.ckpt.len, W.pass_no) == 0)
    W.ckpt_dirty = 0;
}

/* The pass's chunks are written: say so in the arena (stats mode: with
 * the aggregate's checkpoint), then move the read index of every thread
 * the pass drained and free the tally sets it merged for the last time. */
static void commit_pass(const pp__clockmap *clock) {
  if (W.mode == PP_MODE_STATS && W.durable_path[0]) {
    stats_checkpoint();
    pp__arena_clock(clock->tick0, clock->ns0, clock->mult, clock->ns_per_tick);
  }
  pp__arena_commit(W.out.good_off, W.out.seq, W.events_written,
                   W.drops_written, W.pass_no);
  for (size_t i = 0; i < W.npend; i++)
    atomic_store_explicit(&W.pend[i]->r, W.pend[i]->r_pending,
                          memory_order_release);
  W.npend = 0;
  /* the sets merged into the checkpoint just committed */
  for (size_t i = 0; i < W.ntaken; i++) {
    pp__tstate *t = W.taken[i];
    pp__tallies *g = atomic_load_explicit(&t->tallies, memory_order_relaxed);
    atomic_store_explicit(&t->tallies, NULL, memory_order_release);
    pp__tallies_free(g);
  }
  W.ntaken = 0;
  W.pass_no++;
}

/* Flight mode: the sites of the slots a pass peeked at (a copy the
 * producer can no longer change), recorded in the arena once each: a
 * salvager names the events of the rings with them. */
static void durable_sites(const pp__slots *s) {
  pp__slot_ev e;
  for (uint64_t i = s->from; i < s->to;) {
    int r = pp__slot_read(s, &i, &e);
    if (r < 0)
      break;
    /* most slots repeat a recent site: a small cache in front of the
     * table's lookup */
    uintptr_t a = (uintptr_t)e.loc;
    unsigned k = (unsigned)(a >> 4) & (PP__ARRAY_LEN(W.sites_seen) - 1);
    if (r > 0 && W.sites_seen[k] != a) {
      W.sites_seen[k] = a;
      pp__sites_id(&W.sites, e.loc);
    }
  }
  W.sites.defs.len = 0; /* no file to define them in */
}

/* Flight mode: what was recorded since the last look, to the live sink. */
static void peek_thread(pp__tstate *t, const pp__clockmap *clock) {
  pp__slots s;
  uint64_t seen;
  int got = pp__flight_peek(t, &s, &W.peek, &W.cap_peek, &seen);
  if (seen)
    pass_saw(t, seen, atomic_load_explicit(&t->w, memory_order_relaxed));
  if (got && W.sites.durable)
    durable_sites(&s);
  if (got && W.live) {
    s.clock = *clock;
    feed_slots(s);
  }
}

/* Done with a ring: drained (trace and stats modes), or, in flight mode,
 * fed to the live statistics when they are on. */
static int drained(const pp__tstate *t) {
  return atomic_load(&t->r) == atomic_load(&t->w);
}

static int peeked(const pp__tstate *t) {
  return (!W.live && !W.sites.durable) || t->live_r == atomic_load(&t->w);
}

/* Stats mode, durable: the sites of g's tallies made since the last look,
 * in the file's table and so in the arena, so that a salvager names the
 * zones of a thread killed before it ended. */
static void name_tallies(pp__tallies *g) {
  const pp__tally *head = atomic_load_explicit(&g->head, memory_order_acquire);
  for (const pp__tally *t = head; t && t != g->named; t = t->next) {
    size_t before = W.sites.n;
    uint32_t id = pp__sites_id(&W.sites, t->loc);
    if (id != UINT32_MAX && W.sites.n != before)
      pp__stats_sink_define(W.rec, id, t->loc);
  }
  g->named = head;
}

/* Stats mode: the zones each thread aggregated itself (tally.h), to the
 * sinks that take them: a dead thread's for the last time (then freed),
 * at the session's end every thread's, and to the live engine each time
 * a live interval has ended. In any mode a dead thread's set of an
 * earlier session is freed (the registry keeps a thread until then). */
static void tallies_pass(int final, int sync, int64_t now,
                         const pp__clockmap *clock) {
  unsigned gen = pp__recorder_gen();
  int tick = W.mode == PP_MODE_STATS && !final && W.live &&
             (pp__live_tally_due(W.live, now) || sync);
  for (size_t i = 0; i < W.nsnap; i++) {
    pp__tstate *t = W.snap[i];
    pp__tallies *g = atomic_load_explicit(&t->tallies, memory_order_acquire);
    if (!g)
      continue;
    int dead = atomic_load(&t->dead) != 0;
    int why = dead ? PP__TALLY_EXIT : final ? PP__TALLY_FINAL : PP__TALLY_TICK;
    if (atomic_load_explicit(&g->gen, memory_order_acquire) != gen)
      why = -1; /* an earlier session's, or being reset by its owner */
    else if (W.mode == PP_MODE_STATS && W.sites.durable)
      name_tallies(g);
    if (why == PP__TALLY_TICK && !tick)
      continue;
    if (why == PP__TALLY_EXIT)
      pp__tallies_finish_dead(g);
    if (why >= 0)
      EACH_SINK(k, tallies) { k->ops->tallies(k, t->tid, g, why, clock); }
    if (why == PP__TALLY_EXIT || why == PP__TALLY_FINAL) { /* END's count */
      W.events_written +=
          atomic_load_explicit(&g->events, memory_order_relaxed);
      /* in the aggregate now: a salvager counts the set no more once
       * this pass's checkpoint is committed */
      atomic_store_explicit(&g->taken_pass, W.pass_no, memory_order_release);
      W.ckpt_dirty = 1;
    }
    if (dead) { /* freed once this pass is committed (commit_pass) */
      if (pp__grow((void **)&W.taken, &W.cap_taken, W.ntaken + 1,
                   sizeof *W.taken) == 0) {
        W.taken[W.ntaken++] = t;
      } else {
        atomic_store_explicit(&t->tallies, NULL, memory_order_relaxed);
        pp__tallies_free(g);
      }
    }
  }
}

static void snapshot_threads(ppt_buf *threads) {
  pp__registry_lock();
  W.nsnap = 0;
  for (pp__tstate *t = pp__registry_head(); t; t = t->next) {
    if (pp__grow((void **)&W.snap, &W.cap_snap, W.nsnap + 1, sizeof *W.snap) ==
        0)
      W.snap[W.nsnap++] = t;
    if (t->name_dirty || !t->announced) {
      ppt_thread r = {t->tid, ppt_str_of(t->name)};
      ppt_thread_put(threads, &r);
      EACH_SINK(k, thread) { k->ops->thread(k, t->tid, t->name); }
      W.ckpt_dirty = 1;
      t->name_dirty = 0;
      t->announced = 1;
    }
  }
  pp__registry_unlock();
}

static void write_drops(void) {
  ppt_buf b = {0};
  for (size_t i = 0; i < W.nsnap; i++) {
    pp__tstate *t = W.snap[i];
    uint64_t d = atomic_load_explicit(&t->dropped, memory_order_relaxed);
    if (d != t->written_dropped) {
      ppt_drops r = {t->tid, d - t->written_dropped};
      ppt_drops_put(&b, &r);
      EACH_SINK(k, drops) { k->ops->drops(k, t->tid, d - t->written_dropped); }
      W.drops_written += d - t->written_dropped;
      t->written_dropped = d;
    }
  }
  if (b.len)
    pp__out_chunk(&W.out, PPT_CHUNK_DROPS, &b, 0);
  ppt_buf_free(&b);
}

/* ---- GPU zones (resolved by pp__gpu_poll in the writer thread) ---------- */

static void gpu_collect(const pp__gpu_rec *r, void *arg) {
  (void)arg;
  if (pp__grow((void **)&W.gpu, &W.cap_gpu, W.ngpu + 1, sizeof *W.gpu) == 0)
    W.gpu[W.ngpu++] = *r;
}

/* The rate zones are placed with: the running rate once 100 ms of clock
 * points exist, else the start-up estimate. */
static double gpu_rate(void) {
  if (W.last_sync.mono_ns - W.sync0.mono_ns >= 100000000)
    return pp__clock_rate(&W.sync0, &W.last_sync);
  return W.ticks_per_ns > 0 ? W.ticks_per_ns : 1.0;
}

static void gpu_pass(int final) {
  double rate = gpu_rate();
  pp__gpu_poll(rate, final, gpu_collect, NULL);
  if (!W.ngpu)
    return;
  pp__clockmap clock =
      pp__clockmap_make(W.sync0.tick, W.sync0.mono_ns, 1.0 / rate);
  EACH_SINK(k, gpu) { k->ops->gpu(k, W.gpu, W.ngpu, &clock); }
  if (W.rec)
    W.events_written += W.ngpu;
  W.ckpt_dirty = 1;
  W.ngpu = 0;
}

/* ---- CUPTI ----------------------------------------------------------------
 */

/* CUPTI records encoded since the last pass go out as one CUDA chunk;
 * every 500 ms the writer also asks CUPTI for its completed buffers (CUPTI
 * hands them over on its own only when they fill up or at its own pace). */
static void write_cuda(int final) {
  int64_t now = pp__mono_ns();
  if (!final && now - W.cuda_flush_ns >= 500000000) {
    pp__cupti_flush(0);
    W.cuda_flush_ns = now;
  }
  ppt_buf b = {0};
  pp__cupti_take(&b);
  if (b.len)
    pp__out_chunk(&W.out, PPT_CHUNK_CUDA, &b, 0);
  ppt_buf_free(&b);
}

void pp__writer_cuda_on(int on) {
  if (on)
    W.cuda_flush_ns = pp__mono_ns();
  atomic_store(&W.cuda, on);
}

int pp__writer_cuda(void) { return atomic_load(&W.cuda); }

/* ---- alerts ---------------------------------------------------------------
 */

/* Call the alert callback for the notes of the last pass. Writer thread,
 * its lock not held: the callback may call pp_flight_dump(). */
static void dispatch_notes(void) {
  size_t n = W.nnotes;
  W.nnotes = 0;
  if (!n)
    return;
  pthread_mutex_lock(&cb_lock);
  pp_alert_fn fn = cb_fn;
  void *user = cb_user;
  pthread_mutex_unlock(&cb_lock);
  if (!fn)
    return;
  for (size_t i = 0; i < n; i++) {
    const pp__note *nt = &W.notes[i];
    pp_alert a = pp__note_alert(nt);
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

/* ---- a pass ---------------------------------------------------------------
 */

/* One writer pass. Caller holds W.lock. sync: a caller of
 * pp__writer_sync waits for this pass, so stats mode's tallies are
 * looked at whether or not a live interval has ended, and the live
 * session window is published as of the pass's time (taken before the
 * rings were drained). */
static void writer_pass(int final, int sync) {
  gpu_pass(final); /* may add META */
  durable_fallbacks();
  write_pending_meta();
  write_pending_chunks();
  ppt_buf threads = {0};
  snapshot_threads(&threads);
  if (threads.len)
    pp__out_chunk(&W.out, PPT_CHUNK_THREAD, &threads, 0);
  ppt_buf_free(&threads);
  int64_t now = pp__mono_ns();
  if (final || now - W.last_sync.mono_ns >= 1000000000 ||
      W.last_sync.mono_ns == W.sync0.mono_ns)
    write_clock(&W.out);
  pp__clockmap clock = clock_now();
  pp__tally_set_rate(clock.mult);
  if (W.mode != PP_MODE_FLIGHT)
    for (size_t i = 0; i < W.nsnap; i++)
      drain_thread(W.snap[i], &clock);
  else if (W.live || W.sites.durable)
    for (size_t i = 0; i < W.nsnap; i++)
      peek_thread(W.snap[i], &clock);
  tallies_pass(final, sync, now, &clock); /* also frees other sessions' */
  write_drops();
  if (atomic_load(&W.cuda))
    write_cuda(final);
  if (W.live && !final) {
    pp__live_tick(W.live, now);
    W.nnotes = pp__live_take(W.live, W.notes, PP__ARRAY_LEN(W.notes));
    if (W.nnotes && W.mode != PP_MODE_FLIGHT) {
      pp__clockmap nc = clock_now();
      write_notes(&W.out, W.notes, W.nnotes, &nc);
    }
  }
  EACH_SINK(k, pass_end) { k->ops->pass_end(k, now, final); }
  pp__out_flush(&W.out);
  commit_pass(&clock);
  pp__registry_lock();
  if (final && W.exiting)
    ; /* unmapping rings now costs TLB shootdowns on every CPU the program
         runs on; the process's exit unmaps everything at once */
  else if (W.mode != PP_MODE_FLIGHT)
    pp__registry_reap(drained, 0);
  else
    W.flight_released += pp__registry_reap(peeked, FLIGHT_KEEP_EXITED);
  pp__registry_unlock();
  W.nsnap = 0; /* the snapshot may point at reaped threads now */
  if (final || sync)
    pp__live_publish_now(W.live, now); /* the session's window as of now */
}

/* ---- flight dumps -------------------------------------------------------- */

static int dump_locked(const char *path, char *err, size_t errlen) {
  pp__out o;
  if (pp__out_open(&o, path, (uint32_t)W.pid, err, errlen) != 0)
    return PP_EIO;
  o.quiet = 1;
  pp__sites sites = {0};
  pp__sink *trace = pp__trace_sink_new(&o, &sites);
  if (!trace) {
    pp__out_close(&o);
    pp__out_free(&o);
    snprintf(err, errlen, "cannot write %s: out of memory", path);
    return PP_EIO;
  }
  write_meta(&o);
  pp__out_flush(&o);
  if (W.flight_released) {
    char num[32];
    ppt_buf m = {0};
    snprintf(num, sizeof num, "%llu", (unsigned long long)W.flight_released);
    const char *const kv[][2] = {{"flight_threads_released", num}};
    ppt_meta_pairs_put(&m, kv, 1);
    put_chunk(&o, PPT_CHUNK_META, &m);
  }
  char text[2][24];
  const char *kv[2][2];
  size_t nkv = rings_meta(kv, text);
  if (nkv) {
    ppt_buf m = {0};
    ppt_meta_pairs_put(&m, (const char *const(*)[2])kv, nkv);
    put_chunk(&o, PPT_CHUNK_META, &m);
  }
  ppt_buf threads = {0};
  pp__registry_lock();
  for (pp__tstate *t = pp__registry_head(); t; t = t->next) {
    ppt_thread r = {t->tid, ppt_str_of(t->name)};
    ppt_thread_put(&threads, &r);
  }
  pp__registry_unlock();
  put_chunk(&o, PPT_CHUNK_THREAD, &threads);
  write_clock(&o);
  uint64_t events = 0;
  pp__clockmap clock = clock_now();
  pp__registry_lock();
  for (pp__tstate *t = pp__registry_head(); t; t = t->next) {
    pp__slots s;
    pp__slot *copy;
    if (!pp__flight_copy_ring(t, &s, &copy))
      continue;
    s.clock = clock;
    events += trace->ops->slots(trace, &s);
    pp__free(copy);
  }
  pp__registry_unlock();
  if (W.live) {
    pp__note recent[PP__LIVE_KEEP];
    size_t nr = pp__live_recent(W.live, recent, PP__LIVE_KEEP);
    write_notes(&o, recent, nr, &clock);
  }
  pp__gpu_rec *g;
  size_t ng = pp__flight_sink_gpu(W.flight, &g);
  if (ng) {
    trace->ops->gpu(trace, g, ng, &clock);
    events += ng;
  }
  pp__free(g);
  trace->ops->pass_end(trace, pp__mono_ns(), 1);
  write_end(&o, events, 0);
  int failed = pp__out_close(&o) != 0 || o.err;
  int e = o.err;
  trace->ops->free(trace);
  pp__sites_free(&sites);
  pp__out_free(&o);
  if (failed) {
    snprintf(err, errlen, "writing %s failed: %s (the dump is cut short%s)",
             path, strerror(e ? e : EIO),
             e ? "; it says so in META write_error" : "");
    return PP_EIO;
  }
  return PP_OK;
}

int pp__writer_dump(const char *path, char *err, size_t n) {
  pthread_mutex_lock(&W.lock);
  int rc = dump_locked(path && *path ? path : W.out_path, err, n);
  pthread_mutex_unlock(&W.lock);
  return rc;
}

/* ---- the durable arena --------------------------------------------------- */

/* Trace mode: the rings in the process's durable arena (ring/arena.h),
 * which names the trace file by its absolute path. */
static void durable_begin(void) {
  char abs[PATH_MAX];
  const char *trace = realpath(W.out_path, abs) ? abs : W.out_path;
  if (pp__arena_session_begin(trace, (unsigned)W.mode, W.durable_path,
                              sizeof W.durable_path, W.durable_off,
                              sizeof W.durable_off) != 0)
    W.durable_path[0] = 0;
  else
    pp__recorder_name_interned();
}

static void write_durable_meta(pp__out *o);

/* Flight mode: the head of a dump (META, the clock's origin) kept in the
 * arena, for a salvager to write the dump the process could not. Its
 * chunks are staged in an out with no file and copied from the stage. */
static void durable_flight_blob(void) {
  pp__out head;
  memset(&head, 0, sizeof head);
  head.fd = -1;
  head.memory = 1;
  write_meta(&head);
  write_durable_meta(&head);
  if (!head.stage.oom)
    pp__arena_blob(head.stage.data, head.stage.len, head.seq);
  pp__out_free(&head);
}

/* META: where the rings are (durable.rings, durable.token: a reader of
 * an unfinished trace salvages from there), or why they are not durable
 * (unavailable.durable). */
static void write_durable_meta(pp__out *o) {
  ppt_buf b = {0};
  char tok[32];
  snprintf(tok, sizeof tok, "%016llx",
           (unsigned long long)pp__arena_token());
  const char *const on[][2] = {{"durable.rings", W.durable_path},
                               {"durable.token", tok}};
  const char *const off[][2] = {{"unavailable.durable", W.durable_off}};
  if (W.durable_path[0])
    ppt_meta_pairs_put(&b, on, PP__ARRAY_LEN(on));
  else
    ppt_meta_pairs_put(&b, off, PP__ARRAY_LEN(off));
  put_chunk(o, PPT_CHUNK_META, &b);
}

/* ---- the thread ---------------------------------------------------------- */

static void finish_file(void) {
  /* A write failed: try once more to finish the file (the space may be
   * back), with the final count of lost events. */
  pp__out_retry_after_failure(&W.out);
  write_cost_meta();
  int64_t end = pp__mono_ns();
  EACH_SINK(k, finish) { k->ops->finish(k, end); }
  write_end(&W.out, W.events_written, W.drops_written);
}

static void *writer_main(void *arg) {
  (void)arg;
  pp__name_own_thread("pp-writer");
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  /* A durable session's first pass comes after 1 ms, then the period
   * doubles up to flush_ms as in any quiet stretch: a process meets most
   * of its sites as it starts, and a site the writer has met is named in
   * the rings, so a process killed soon after it started keeps its
   * zones' names (docs/internals/durable.md, the site-name bound). */
  unsigned idle = pp__writer_idle_ms(W.flush_ms);
  unsigned period = W.durable_path[0] && W.flush_ms > 1 ? 1 : W.flush_ms;
  uint32_t seen = pp__wake_word();
  while (!atomic_load(&W.stop)) {
    pp__wake_wait(seen, period);
    if (atomic_load(&W.stop))
      break;
    /* Take wake-ups again before the pass, and note the word: a producer
     * that asks during the pass bumps it, and the next sleep returns at
     * once, as if it had asked one system call per ring crossing. */
    uint32_t now = pp__wake_rearm();
    unsigned want = atomic_load(&sync_req);
    pthread_mutex_lock(&W.lock);
    W.pass_busy = now != seen; /* woken: a ring half full or full */
    seen = now;
    writer_pass(0, want != sync_done);
    /* busy: flush_ms (while ramping up from the first 1 ms, doubling
     * to it); quiet: doubling to idle */
    unsigned twice = period * 2;
    period = W.pass_busy ? (twice < W.flush_ms ? twice : W.flush_ms)
                         : (twice < idle ? twice : idle);
    pthread_mutex_unlock(&W.lock);
    if (want != sync_done) {
      pthread_mutex_lock(&sync_lock);
      sync_done = want;
      pthread_cond_broadcast(&sync_cond);
      pthread_mutex_unlock(&sync_lock);
    }
    dispatch_notes();
  }
  /* Final drain. */
  pthread_mutex_lock(&W.lock);
  writer_pass(1, 0);
  int finished = 1;
  if (W.mode == PP_MODE_FLIGHT &&
      dump_locked(W.out_path, W.dump_err, sizeof W.dump_err) != PP_OK) {
    /* said, and the rings kept for `pipeprof recover` to write the dump
     * again (a disk with room by then) */
    finished = !W.durable_path[0];
    fprintf(stderr,
            "pipeprof: the flight recorder's dump at the end: %s%s%s\n",
            W.dump_err, finished ? "" : "; its rings stay in ",
            finished ? "" : W.durable_path);
  } else if (W.mode != PP_MODE_FLIGHT) {
    finish_file();
  }
  pp__out_close(&W.out);
  if (W.durable_path[0] && finished) /* finished: nothing to salvage */
    pp__arena_session_end(W.exiting);
  pthread_mutex_unlock(&W.lock);
  atomic_store(&W.finished, 1);
  pthread_mutex_lock(&sync_lock); /* no pass any more: waiters return */
  sync_alive = 0;
  sync_done = atomic_load(&sync_req);
  pthread_cond_broadcast(&sync_cond);
  pthread_mutex_unlock(&sync_lock);
  return NULL;
}

int pp__writer_sync(unsigned timeout_ms) {
  pthread_mutex_lock(&sync_lock);
  if (!sync_alive || pthread_equal(sync_thread, pthread_self())) {
    pthread_mutex_unlock(&sync_lock); /* none, or the caller is the writer */
    return -1;
  }
  unsigned want = atomic_fetch_add(&sync_req, 1) + 1;
  pp__wake_force();
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += timeout_ms / 1000;
  until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
  if (until.tv_nsec >= 1000000000) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000;
  }
  int rc = 0;
  while ((int)(sync_done - want) < 0 && rc == 0)
    rc = pthread_cond_timedwait(&sync_cond, &sync_lock, &until);
  int done = (int)(sync_done - want) >= 0;
  pthread_mutex_unlock(&sync_lock);
  return done ? 0 : -1;
}

/* ---- control ------------------------------------------------------------- */

int pp__writer_open(const pp__writer_cfg *c) {
  /* W is zero before the first session: clearing it again would fault in
   * its pages, which it may never use (10 us a page on some VMs). */
  static int used;
  if (used)
    memset(&W, 0, sizeof W);
  used = 1;
  W.mode = c->mode;
  W.flush_ms = c->flush_ms;
  snprintf(W.out_path, sizeof W.out_path, "%s", c->out_path);
  snprintf(W.process_name, sizeof W.process_name, "%s", c->process_name);
  W.pid = c->pid;
  W.sync0 = W.last_sync = c->sync0;
  W.ticks_per_ns = c->ticks_per_ns;
  W.event_cost_ns = c->event_cost_ns;
  W.drop_cost_ns = c->drop_cost_ns;
  W.live = c->live;
  W.out.fd = -1;
  /* stats mode's zones convert their durations at the start-up rate
   * until the first pass has a better one */
  pp__tally_set_rate(
      pp__clockmap_make(0, 0, W.ticks_per_ns > 0 ? 1.0 / W.ticks_per_ns : 1.0)
          .mult);
  pthread_mutex_init(&W.lock, NULL);
  if (W.mode != PP_MODE_FLIGHT) {
    if (pp__out_open(&W.out, W.out_path, (uint32_t)W.pid, c->why,
                     c->why_n) != 0)
      return PP_EIO;
    W.out.count_lost = W.mode == PP_MODE_TRACE;
    W.rec = W.mode == PP_MODE_TRACE ? pp__trace_sink_new(&W.out, &W.sites)
                                    : pp__stats_sink_new(&W.out, &W.sites);
    if (!W.rec)
      goto oom;
    W.sinks[W.nsinks++] = W.rec;
  } else {
    W.flight = pp__flight_sink_new();
    if (!W.flight)
      goto oom;
    W.sinks[W.nsinks++] = W.flight;
  }
  if (W.live)
    W.sinks[W.nsinks++] = pp__live_sink(W.live);
  pp__arena_init_once();
  durable_begin();
  W.sites.durable = W.durable_path[0] != 0;
  if (W.mode == PP_MODE_FLIGHT && W.durable_path[0])
    durable_flight_blob();
  if (W.out.fd >= 0) { /* in the file at once, before any event */
    write_meta(&W.out);
    write_durable_meta(&W.out);
    pp__out_flush(&W.out);
    /* whole up to here: a process killed before the first pass is
     * salvaged from its head */
    if (W.durable_path[0]) {
      pp__clockmap cm = /* the start-up estimate: one clock point */
          pp__clockmap_make(W.sync0.tick, W.sync0.mono_ns, 1.0 / gpu_rate());
      pp__arena_clock(cm.tick0, cm.ns0, cm.mult, cm.ns_per_tick);
      pp__arena_commit(W.out.good_off, W.out.seq, 0, 0, 0);
    }
  }
  W.pass_no = 1;
  return PP_OK;
oom:
  pp__out_close(&W.out);
  pp__writer_free(NULL, 0);
  errno = ENOMEM;
  return PP_ENOMEM;
}

int pp__writer_start(void) {
  pthread_mutex_lock(&sync_lock); /* before the thread can end */
  sync_done = atomic_load(&sync_req);
  if (pthread_create(&W.thread, NULL, writer_main, NULL) != 0) {
    pthread_mutex_unlock(&sync_lock);
    pp__out_close(&W.out);
    pp__writer_free(NULL, 0);
    return PP_ENOMEM;
  }
  sync_thread = W.thread;
  sync_alive = 1;
  pthread_mutex_unlock(&sync_lock);
  return PP_OK;
}

void pp__writer_stop(void) {
  atomic_store(&W.stop, 1);
  pp__wake_force();
  pthread_join(W.thread, NULL);
  pp__wake_close();
  dispatch_notes(); /* from the writer's last regular pass */
  atomic_store(&W.cuda, 0);
}

int pp__writer_free(char *why, size_t n) {
  int failed = W.out.failed || W.out.err || W.dump_err[0];
  if (why && n)
    snprintf(why, n, "%s", W.dump_err);
  W.dump_err[0] = 0;
  sinks_free();
  pp__out_free(&W.out);
  pp__sites_free(&W.sites);
  pp__free(W.peek);
  W.peek = NULL;
  W.cap_peek = 0;
  pp__free(W.gpu);
  W.gpu = NULL;
  W.ngpu = W.cap_gpu = 0;
  pp__free(W.snap);
  W.snap = NULL;
  W.nsnap = W.cap_snap = 0;
  pp__free(W.pend);
  W.pend = NULL;
  W.npend = W.cap_pend = 0;
  pp__free(W.taken);
  W.taken = NULL;
  W.ntaken = W.cap_taken = 0;
  ppt_buf_free(&W.ckpt);
  W.ckpt_dirty = 0;
  W.live = NULL;
  return failed ? -1 : 0;
}

void pp__writer_stop_async(void) {
  atomic_store(&W.stop, 1);
  pp__wake_force();
}

int pp__writer_finished(void) { return atomic_load(&W.finished); }

void pp__writer_set_exiting(int exiting) { W.exiting = exiting; }

void pp__writer_set_end(const char *how) { atomic_store(&end_how, how); }

/* Around fork: let the writer finish its pass first, so the child does not
 * inherit it halfway through (holding the allocator's or our locks). The
 * order matches the writer's: its lock, then the registry. */
void pp__writer_fork_prepare(void) {
  pthread_mutex_lock(&W.lock);
  pp__registry_lock();
}

void pp__writer_fork_parent(void) {
  pp__registry_unlock();
  pthread_mutex_unlock(&W.lock);
}

/* The child does not own the parent's trace: what the writer holds is the
 * parent's and is leaked in the child on purpose. */
void pp__writer_fork_child(void) {
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t fresh_cond = PTHREAD_COND_INITIALIZER;
  memcpy(&W.lock, &fresh, sizeof fresh);
  memcpy(&cb_lock, &fresh, sizeof fresh);
  memcpy(&sync_lock, &fresh, sizeof fresh);
  memcpy(&sync_cond, &fresh_cond, sizeof fresh_cond);
  sync_alive = 0; /* the writer thread does not exist in the child */
  memset(&W.out, 0, sizeof W.out);
  W.out.fd = -1;
  memset(&W.sites, 0, sizeof W.sites);
  W.nsinks = 0;
  W.rec = W.flight = NULL;
  W.live = NULL;
  W.peek = NULL;
  W.cap_peek = 0;
  W.nnotes = 0;
  W.snap = NULL;
  W.nsnap = W.cap_snap = 0;
  W.pend = NULL;
  W.npend = W.cap_pend = 0;
  W.taken = NULL;
  W.ntaken = W.cap_taken = 0;
  memset(&W.ckpt, 0, sizeof W.ckpt);
  W.ckpt_dirty = 0;
  W.durable_path[0] = 0;
  W.gpu = NULL;
  W.ngpu = W.cap_gpu = 0;
  atomic_store(&W.cuda, 0);
}
