/* SPDX-License-Identifier: MIT */
/*
 * The recording hot path: per-thread rings, the thread registry, run-time
 * name interning, and every pp_zone/pp_counter/pp_mark/pp_flow entry point.
 * See recorder.h for the ring protocol. The library constructor at the end
 * starts a session from the environment so that linked programs need no
 * init call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../format/pptrace.h"
#include "../internal.h"
#include "clock.h"
#include "recorder.h"
#include "../ring/arena.h"
#include "../ring/tally.h"
#include "wake.h"

/* Generation 1, recording off: no word ever carries generation 0, the
 * generation of a thread's zeroed view, so a view that was never made (or
 * was cleared at thread exit) never passes for a valid one. */
PP_API int pp__active = 1 << PP__GEN_SHIFT;

/* Acquire: pairs with the session's release store, so a thread that sees a
 * new generation also sees the session's ring set-up. */
static inline int word_now(void) {
  return __atomic_load_n(&pp__active, __ATOMIC_ACQUIRE);
}
#define ACTIVE() (word_now() & PP__ON)
_Atomic int pp__overwrite_mode = 0;
static _Atomic unsigned generation = 1; /* of pp__active; never 0 */

/* The producer's private view of its ring: what the hot path needs, in the
 * thread's own static TLS block, which sits beside the thread's stack and
 * is seldom cold. The shared thread state (pp__tstate) is only written
 * (the published write index), never read, on the hot path: after a few
 * hundred microseconds of other work, loading it cost a cache and a TLB
 * miss in the chain of dependent loads before the slot store (about 270
 * of the 600 ns a cold begin took on the development VM). The view is
 * valid for one generation of pp__active; a new session (which may resize
 * or reposition rings) starts a new one, and the thread's next event
 * refreshes its view (refresh()). */
typedef struct pp__prod {
  _Alignas(64) pp__slot *ring; /* one cache line for all of it */
  uint64_t mask;
  uint64_t w;     /* == t->w: this thread is the only writer of both */
  uint64_t limit; /* room_slow's bound; 0 forces the slow path */
  pp__tstate *t;  /* the shared state; NULL before attach and after exit */
  unsigned gen;   /* generation the view is valid for; 0: none */
} pp__prod;

static __thread pp__prod tls_prod __attribute__((tls_model("initial-exec")));
/* Stats mode: the zones this thread aggregates (tally.h); NULL before its
 * first zone and after the thread's exit. */
static __thread pp__tallies *tls_tallies
    __attribute__((tls_model("initial-exec")));
static _Atomic int tally_mode; /* PP__AGG in the word */

void pp__recorder_publish(int on) {
  unsigned g = atomic_load_explicit(&generation, memory_order_relaxed);
  int word = (int)(g << PP__GEN_SHIFT) | (pp__tick_is_tsc ? PP__TSC : 0) |
             (atomic_load(&tally_mode) ? PP__AGG : 0) | (on ? PP__ON : 0);
  __atomic_store_n(&pp__active, word, __ATOMIC_RELEASE);
}

/* Every thread's view is stale from now on (never generation 0). */
static void next_generation(void) {
  unsigned g = atomic_load(&generation) + 1;
  atomic_store(&generation, g > PP__GEN_MAX ? 1 : g);
}

unsigned pp__recorder_gen(void) {
  return atomic_load_explicit(&generation, memory_order_relaxed);
}

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static pp__tstate *reg_head;
static _Atomic uint64_t exit_count; /* threads that have exited */
static _Atomic uint64_t reaped_dropped;    /* drops of threads freed */
static _Atomic uint64_t cfg_slots = 65536; /* 1 MiB */
/* The default ring size adapts to the number of threads: while the rings
 * mapped stay within ring_budget bytes (0: no budget, a size the user
 * chose), a new ring is cfg_slots; past it, half as large as fits, down
 * to PP__RING_MIN_SLOTS. rings_smaller counts the rings made smaller. */
static _Atomic uint64_t ring_budget, ring_bytes_live, rings_smaller;
static pthread_key_t thread_key;
static int thread_key_made; /* thread_key exists */
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
/* In a forked child of a recording process: the session's restart,
 * called by the child's first event (pp__recorder_restart_on_first_event),
 * once. */
static void (*_Atomic fork_restart)(void);

void pp__registry_lock(void) { pthread_mutex_lock(&reg_lock); }
void pp__registry_unlock(void) { pthread_mutex_unlock(&reg_lock); }
pp__tstate *pp__registry_head(void) { return reg_head; }

uint64_t pp__dropped_total(void) {
  pp__registry_lock();
  uint64_t n = atomic_load(&reaped_dropped);
  for (pp__tstate *t = reg_head; t; t = t->next)
    n += atomic_load(&t->dropped);
  pp__registry_unlock();
  return n;
}

void pp__recorder_configure(uint64_t slots, int overwrite, int tally) {
  atomic_store(&cfg_slots, slots);
  atomic_store(&rings_smaller, 0);
  atomic_store(&pp__overwrite_mode, overwrite);
  atomic_store(&tally_mode, tally);
}

/* Page faults are the hidden cost of recording: a first touch of a page
 * costs about 1 us on bare metal and 10 us on some VMs (measured on the
 * development machines: 10.4 us a fault, 0.65 us a page with
 * MAP_POPULATE), i.e. up to 40 ns per 16-byte event for a ring filled by
 * faults. So memory the recorder is sure to touch is populated in bulk:
 * the thread state with MAP_POPULATE, the head of each ring when it is
 * mapped, and the rest of the ring by the writer, ahead of the producer
 * (pp__ring_prefault), never by the recording thread. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels: EINVAL */
#endif
/* The writer keeps at least RING_AHEAD_MIN bytes of populated ring ahead
 * of the producer, more for a thread that writes fast: twice what it wrote
 * since the writer's last look (up to an eighth of the ring), so that the
 * next look (the writer's period at most doubles from one pass to the
 * next) still finds the producer on populated pages. A ring is mapped
 * with 2 x RING_AHEAD_MIN populated. A slow thread thus costs a few pages,
 * not a fixed 128 KiB: populating and later unmapping a page costs about
 * 2 us on the development VM, and the example pipeline's threads write
 * under 64 KiB each in a 200-frame run. */
#define RING_AHEAD_MIN (8u * 1024u)

static size_t page_bytes(void) {
  long p = sysconf(_SC_PAGESIZE); /* read from the auxiliary vector */
  return p > 0 ? (size_t)p : 4096;
}

/* A thread state gets a page of its own: its producer line must not share
 * a cache line with the consumer's fields or with another allocation. */
static size_t tstate_bytes(void) {
  size_t page = page_bytes();
  return (sizeof(pp__tstate) + page - 1) / page * page;
}

/* Zeroed and populated; NULL when out of memory. In the session's
 * durable arena (ring/arena.h) when there is one and durable, so that the
 * thread's indices outlive the process; else anonymous memory. */
static pp__tstate *alloc_tstate(int durable) {
  void *p = durable ? pp__arena_alloc(tstate_bytes(), PP__SEG_TSTATE, 1)
                    : NULL;
  if (!p)
    p = mmap(NULL, tstate_bytes(), PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static uint64_t ring_bytes(const pp__tstate *t) {
  return t->capacity * sizeof(pp__slot);
}

/* Unmap what alloc_tstate or map_ring gave. */
static void unmap(void *p, size_t bytes) {
  if (!pp__arena_free(p))
    munmap(p, bytes);
}

void pp__recorder_ring_budget(uint64_t bytes) {
  atomic_store(&ring_budget, bytes);
}

uint64_t pp__recorder_rings_smaller(void) {
  return atomic_load(&rings_smaller);
}

/* The slots of a new ring: the session's size, or less past the budget
 * (reserved in ring_bytes_live). */
static uint64_t ring_slots_new(void) {
  uint64_t slots = atomic_load(&cfg_slots), budget = atomic_load(&ring_budget);
  if (!budget) {
    atomic_fetch_add(&ring_bytes_live, slots * sizeof(pp__slot));
    return slots;
  }
  uint64_t want = slots;
  for (;;) {
    uint64_t bytes = slots * sizeof(pp__slot);
    uint64_t had = atomic_fetch_add(&ring_bytes_live, bytes);
    if (had + bytes <= budget || slots <= PP__RING_MIN_SLOTS)
      break;
    atomic_fetch_sub(&ring_bytes_live, bytes);
    slots /= 2;
  }
  if (slots < want)
    atomic_fetch_add(&rings_smaller, 1);
  return slots;
}

static void free_state(pp__tstate *t) {
  if (t->ring) {
    atomic_fetch_sub(&ring_bytes_live, ring_bytes(t));
    unmap(t->ring, ring_bytes(t));
  }
  unmap(t, tstate_bytes());
}

/* Populate t's ring up to byte end (one call); a kernel without
 * MADV_POPULATE_WRITE leaves the rest to page faults. */
static void populate_to(pp__tstate *t, uint64_t end) {
  if (end > ring_bytes(t))
    end = ring_bytes(t);
  if (end <= t->prefaulted)
    return;
  if (madvise((char *)t->ring + t->prefaulted, (size_t)(end - t->prefaulted),
              MADV_POPULATE_WRITE) != 0)
    end = ring_bytes(t); /* not supported: stop trying */
  t->prefaulted = end;
}

/* Map a ring of slots for t (what becomes of an old one is the caller's
 * business) with its first 2 x RING_AHEAD_MIN bytes populated. -1: out of
 * memory. */
static int map_ring(pp__tstate *t, uint64_t slots) {
  /* in the arena with its thread state (the salvager reads them both) */
  void *ring = pp__arena_owns(t)
                   ? pp__arena_alloc(slots * sizeof(pp__slot), PP__SEG_RING, 0)
                   : NULL;
  if (!ring)
    ring = mmap(NULL, slots * sizeof(pp__slot), PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (ring == MAP_FAILED)
    return -1;
  t->ring = ring;
  t->capacity = slots;
  t->mask = slots - 1;
  t->prefaulted = 0;
  populate_to(t, 2 * (uint64_t)RING_AHEAD_MIN);
  return 0;
}

/* Map t a ring of the session's size, smaller past the rings' budget
 * (ring_slots_new). -1: out of memory (the reservation given back). */
static int map_new_ring(pp__tstate *t) {
  uint64_t slots = ring_slots_new();
  if (map_ring(t, slots) == 0)
    return 0;
  atomic_fetch_sub(&ring_bytes_live, slots * sizeof(pp__slot));
  return -1;
}

void pp__ring_prefault(pp__tstate *t, uint64_t w, uint64_t n) {
  /* Before the first wrap, slot w lives at byte 16 w. Pages behind w were
   * written by the producer already, so skip them (populating present
   * pages is not free: 12 us a page on the development VM); after a wrap
   * every page has been written. When less than `ahead` bytes are
   * populated past w, populate up to twice that, so a steady producer
   * costs one call every few passes. */
  if (!t->ring)
    return;
  uint64_t pos = w * sizeof(pp__slot), page = page_bytes();
  uint64_t ahead = n * sizeof(pp__slot) * 2;
  if (ahead > ring_bytes(t) / 8)
    ahead = ring_bytes(t) / 8;
  if (ahead < RING_AHEAD_MIN)
    ahead = RING_AHEAD_MIN;
  if (pos / page * page > t->prefaulted)
    t->prefaulted = pos >= ring_bytes(t) ? ring_bytes(t) : pos / page * page;
  if (pos + ahead > t->prefaulted)
    populate_to(t, (pos + 2 * ahead + page - 1) / page * page);
}

void pp__recorder_reset_positions(void) {
  pp__registry_lock();
  uint64_t slots = atomic_load(&cfg_slots);
  for (pp__tstate *t = reg_head; t; t = t->next) {
    /* A thread from an earlier session gets a ring of this session's size.
     * Recording is off between sessions, but a zone end may still arrive
     * through a view of the old generation (a zone open across the
     * sessions' boundary) until the new generation is published below:
     * the old ring stays mapped, its memory given back, so such a late
     * store lands in a zero page, not in unmapped memory (and room_slow
     * never takes a ring from the shared state for a view that has one). */
    if (t->ring && t->capacity != slots && !atomic_load(&t->dead)) {
      pp__slot *old = t->ring;
      uint64_t old_bytes = ring_bytes(t);
      atomic_fetch_sub(&ring_bytes_live, old_bytes);
      if (map_new_ring(t) == 0) {
        pp__arena_leak(old); /* still mapped: never given again */
        madvise(old, (size_t)old_bytes, MADV_DONTNEED);
      } else {
        atomic_fetch_add(&ring_bytes_live, old_bytes);
      }
    }
    atomic_store(&t->r, atomic_load(&t->w));
    t->r_pending = atomic_load(&t->w);
    t->pending_pass = 0;
    t->live_r = atomic_load(&t->w);
    t->written_dropped = atomic_load(&t->dropped);
    t->announced = 0;
    t->name_dirty = 1;
  }
  pp__registry_unlock();
  /* A new generation, published (recording still off) once every ring is
   * in place: each thread's next event refreshes its view from them. */
  next_generation();
  pp__recorder_publish(0);
}

static int reapable(const pp__tstate *t, int (*done)(const pp__tstate *)) {
  /* Its last name (a thread may name itself just before it exits) and drop
   * count must be written too, and its zone tallies taken (tally.h); else
   * a later pass does that first. */
  return atomic_load(&t->dead) && t->announced && !t->name_dirty &&
         atomic_load(&t->dropped) == t->written_dropped &&
         !atomic_load(&t->tallies) /* stats mode: taken by the writer */ &&
         done(t);
}

size_t pp__registry_reap(int (*done)(const pp__tstate *t), unsigned keep) {
  size_t n = 0, freed = 0;
  uint64_t last_kept = 0; /* exit order of the oldest thread kept */
  if (keep) {
    for (pp__tstate *t = reg_head; t; t = t->next)
      n += reapable(t, done);
    if (n <= keep)
      return 0;
    /* The keep-th latest exit: bisect over the exit order (unique). */
    uint64_t lo = 1, hi = atomic_load(&exit_count);
    while (lo < hi) {
      uint64_t mid = lo + (hi - lo + 1) / 2, above = 0;
      for (pp__tstate *t = reg_head; t; t = t->next)
        above += reapable(t, done) && atomic_load(&t->dead) >= mid;
      if (above >= keep)
        lo = mid;
      else
        hi = mid - 1;
    }
    last_kept = lo;
  }
  pp__tstate **pp = &reg_head;
  while (*pp) {
    pp__tstate *t = *pp;
    if (reapable(t, done) && (!keep || atomic_load(&t->dead) < last_kept)) {
      *pp = t->next;
      atomic_fetch_add(&reaped_dropped, atomic_load(&t->dropped));
      free_state(t);
      freed++;
    } else {
      pp = &t->next;
    }
  }
  return freed;
}

void pp__recorder_after_fork_child(void) {
  /* The child has one thread. Forget the parent's registry (its memory is a
   * copy we may not free safely: another thread may have held the lock) and
   * let the calling thread attach afresh if the child starts a session. */
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  memcpy(&reg_lock, &fresh, sizeof fresh);
  memcpy(&intern_lock, &fresh, sizeof fresh); /* interned names stay valid */
  reg_head = NULL;
  memset(&tls_prod, 0, sizeof tls_prod);
  atomic_store(&ring_bytes_live, 0); /* the parent's rings are forgotten */
  tls_tallies = NULL; /* the parent's writer's to free (the copy leaks) */
  /* The thread's state may be in the parent's durable arena, a shared
   * mapping: its exit must not mark it dead there. */
  if (thread_key_made)
    pthread_setspecific(thread_key, NULL);
  atomic_store(&fork_restart, NULL);
  pp__queue_after_fork_child();
}

static void thread_exit(void *arg) {
  pp__tstate *t = arg;
  if (tls_prod.t == t) {
    memset(&tls_prod, 0, sizeof tls_prod);
    tls_tallies = NULL; /* the writer frees it */
  }
  atomic_store(&t->dead, atomic_fetch_add(&exit_count, 1) + 1);
}

static void make_key(void) {
  if (pthread_key_create(&thread_key, thread_exit) != 0)
    thread_key = (pthread_key_t)-1;
  else
    thread_key_made = 1;
}

/* In a forked child whose session starts with its first event: start it
 * now, once (any thread), so that what follows is recorded in the
 * child's session and its durable arena. 1 when it ran here. */
static int fork_restart_now(void) {
  void (*restart)(void) = atomic_load(&fork_restart);
  if (pp__likely(restart == NULL) ||
      atomic_exchange(&fork_restart, NULL) != restart)
    return 0;
  restart();
  return 1;
}

static pp__tstate *attach(void) {
  pthread_once(&key_once, make_key);
  /* a forked child's thread attaches into the child's arena, made by the
   * session its first event starts (naming a thread comes before) */
  fork_restart_now();
  pp__tstate *t = alloc_tstate(1);
  if (!t)
    return NULL;
  /* The ring comes with the thread's first event (room_slow), so naming a
   * thread or touching the API while recording is off allocates no ring. */
  t->tid = (uint64_t)syscall(SYS_gettid);
  char nm[16] = "";
  if (pthread_getname_np(pthread_self(), nm, sizeof nm) == 0)
    snprintf(t->name, sizeof t->name, "%s", nm);
  t->name_dirty = 1;
  pp__registry_lock();
  t->next = reg_head;
  reg_head = t;
  pp__registry_unlock();
  memset(&tls_prod, 0, sizeof tls_prod); /* gen 0: refreshed before use */
  tls_prod.t = t;
  if (thread_key != (pthread_key_t)-1)
    pthread_setspecific(thread_key, t);
  return t;
}

pp__tstate *pp__thread_get(void) {
  pp__tstate *t = tls_prod.t;
  if (pp__unlikely(!t))
    t = attach();
  return t;
}

void pp__recorder_restart_on_first_event(void (*restart)(void)) {
  atomic_store(&fork_restart, restart);
  next_generation();
  pp__recorder_publish(1); /* every view is stale: the next event is slow */
}

void pp__recorder_cancel_restart(void) { atomic_store(&fork_restart, NULL); }

/* Slow path: the calling thread's view for word's generation (attaching
 * the thread first when may_attach), or NULL. The view's bound is 0, so
 * the next push goes through room_slow, which maps the ring if there is
 * none yet and computes the bound. In a forked child the first event
 * starts the child's session first, and the view is for its generation. */
static __attribute__((noinline)) pp__prod *refresh(int word,
                                                   int may_attach) {
  if (pp__unlikely(fork_restart_now())) {
    word = __atomic_load_n(&pp__active, __ATOMIC_ACQUIRE);
    if (!(word & PP__ON))
      return NULL;
  }
  pp__prod *p = &tls_prod;
  pp__tstate *t = p->t;
  if (!t && (!may_attach || !(t = attach())))
    return NULL;
  p->t = t;
  p->ring = t->ring;
  p->mask = t->mask;
  p->w = atomic_load_explicit(&t->w, memory_order_relaxed);
  p->limit = 0;
  p->gen = PP__GEN(word);
  return p;
}

/* The calling thread's view, valid for word's generation, or NULL. */
static inline pp__prod *view(int word, int may_attach) {
  pp__prod *p = &tls_prod;
  if (pp__unlikely(p->gen != PP__GEN(word)))
    return refresh(word, may_attach);
  return p;
}

static inline uint64_t ticks_of(int word) {
#ifdef PP__HAVE_RDTSC
  if (__builtin_expect(word & PP__TSC, 1))
    return __rdtsc();
#endif
  (void)word;
  return (uint64_t)pp__mono_ns();
}

/* Slow path: is there room for n slots at w? Recomputes the cached limit.
 * A begin keeps PP__END_RESERVE slots free for ends. The thread's first
 * event maps its ring, published to the writer by the release store of w
 * that follows: the writer touches the ring only once it sees w > 0. */
static __attribute__((noinline)) int room_slow(pp__prod *p, uint64_t w,
                                               unsigned n, int is_begin) {
  pp__tstate *t = p->t;
  if (pp__unlikely(!p->ring)) { /* the thread's first event */
    if (!t->ring && map_new_ring(t) != 0)
      return 0;
    p->ring = t->ring;
    p->mask = t->mask;
  }
  if (atomic_load_explicit(&pp__overwrite_mode, memory_order_relaxed)) {
    p->limit = UINT64_MAX;
    return 1;
  }
  uint64_t cap = t->capacity;
  uint64_t reserve = cap / 4 < PP__END_RESERVE ? cap / 4 : PP__END_RESERVE;
  uint64_t r = atomic_load_explicit(&t->r, memory_order_acquire);
  uint64_t need = w - r + n + (is_begin ? reserve : 0);
  if (need > cap) {
    pp__wake_writer();
    p->limit = 0;
    return 0;
  }
  uint64_t half = r + cap / 2;
  if (w + n > half) {
    pp__wake_writer();
    p->limit = r + cap - reserve;
  } else {
    p->limit = half;
  }
  return 1;
}

static inline void count_drop(pp__tstate *t) {
  atomic_store_explicit(
      &t->dropped,
      atomic_load_explicit(&t->dropped, memory_order_relaxed) + 1,
      memory_order_relaxed);
}

/* Ask for write ownership of the ring line PF_AHEAD slots (8 cache lines)
 * ahead of the one being written. The writer reads the ring on another
 * core, so when the producer comes round again a line may still be shared
 * with the writer's cache and a store to it must first invalidate that
 * copy: a stall of about 100 ns per line that made a zone cost 2-3x its
 * usual cost while the writer drained beside it. PREFETCHW starts that
 * invalidation early; CPUs without it execute the instruction as a NOP. */
#define PF_AHEAD 32u
#if defined(__x86_64__) || defined(__i386__)
#define prefetch_for_write(p) __asm__ volatile("prefetchw %0" ::"m"(*(p)))
#else
#define prefetch_for_write(p) __builtin_prefetch((p), 1, 3)
#endif

static inline void put_slot(pp__prod *p, uint64_t i, uint64_t ts,
                            uint64_t a) {
  pp__slot *s = &p->ring[i & p->mask];
  atomic_store_explicit(&s->ts, ts, memory_order_relaxed);
  atomic_store_explicit(&s->a, a, memory_order_relaxed);
}

/* The slots below w are written: publish w to the writer. */
static inline void publish(pp__prod *p, uint64_t w) {
  p->w = w;
  atomic_store_explicit(&p->t->w, w, memory_order_release);
}

/* Write one slot at w (there is room) and publish w + 1. */
static inline void write1(pp__prod *p, uint64_t w, uint64_t ts, uint64_t a) {
  prefetch_for_write(&p->ring[(w + PF_AHEAD) & p->mask]);
  put_slot(p, w, ts, a);
  publish(p, w + 1);
}

/* Record a one-slot event; returns 1 when recorded. */
static inline int push1(pp__prod *p, uint64_t ts, uint64_t a, int is_begin) {
  uint64_t w = p->w;
  if (pp__unlikely(w + 1 > p->limit) && !room_slow(p, w, 1, is_begin)) {
    count_drop(p->t);
    return 0;
  }
  write1(p, w, ts, a);
  return 1;
}

/* Record a two-slot event (the second slot carries a 64-bit value and, in
 * the low 56 bits of its `a`, an extra number). */
static inline void push2x(pp__prod *p, uint64_t ts, uint64_t a,
                          uint64_t value, uint64_t extra) {
  uint64_t w = p->w;
  if (pp__unlikely(w + 2 > p->limit) && !room_slow(p, w, 2, 1)) {
    count_drop(p->t);
    return;
  }
  prefetch_for_write(&p->ring[(w + PF_AHEAD) & p->mask]); /* once an event */
  put_slot(p, w, ts, a);
  put_slot(p, w + 1, value,
           (uint64_t)PPT_SLOT_CONT << PP__TAG_SHIFT | (extra & PP__PTR_MASK));
  publish(p, w + 2);
}

/* ---- public hot path ---------------------------------------------------- */

/* Zone begin and end: a fast path with no call in it, so that it needs no
 * saved registers and fits in two cache lines (a cold event pays for every
 * line of code it runs), and everything else out of line. */

/* One slot into a valid view with room, or 0 (nothing written) for the
 * slow path to do it. */
static inline int push1_fast(pp__prod *p, int word, uint64_t ts,
                             uint64_t a) {
  uint64_t w = p->w;
  if (pp__unlikely(p->gen != PP__GEN(word)) || pp__unlikely(w + 1 > p->limit))
    return 0;
  write1(p, w, ts, a);
  return 1;
}

static __attribute__((noinline, cold)) pp_zone
zone_begin_slow(const pp_srcloc *loc, int word) {
  pp_zone z = {NULL};
  pp__prod *p = view(word, 1);
  if (p && push1(p, ticks_of(word), pp__slot_tag(PPT_EV_ZONE_BEGIN, loc), 1))
    z.loc = loc;
  return z;
}

/* ---- stats mode: zones aggregated on their thread (tally.h) ------------- */

/* The calling thread's tally set for word's generation: made (attaching
 * the thread) or emptied for a new session. NULL when out of memory. */
static __attribute__((noinline)) pp__tallies *tallies_slow(int word) {
  pp__prod *p = view(word, 1);
  if (!p)
    return NULL;
  pp__tallies *g = tls_tallies;
  if (g) { /* the view's generation: a forked child's first event
              started a session of its own */
    pp__tallies_reset(g, p->gen);
    return g;
  }
  if (!(g = pp__tallies_new(p->gen, 1)))
    return NULL;
  atomic_store_explicit(&p->t->tallies, g, memory_order_release);
  return tls_tallies = g;
}

static inline pp__tallies *tallies_of(int word) {
  pp__tallies *g = tls_tallies;
  if (pp__likely(g != NULL) &&
      pp__likely(atomic_load_explicit(&g->gen, memory_order_relaxed) ==
                 PP__GEN(word)))
    return g;
  return NULL;
}

static __attribute__((noinline)) pp_zone agg_begin(const pp_srcloc *loc,
                                                   int word, uint64_t ts) {
  pp_zone z = {NULL};
  pp__tallies *g = tallies_of(word);
  if (pp__unlikely(!g) && !(g = tallies_slow(word)))
    return z;
  pp__tally_begin(g, loc, ts);
  z.loc = loc;
  return z;
}

/* An end with no set of this session: its begin was in another. */
static __attribute__((noinline)) void agg_end(const pp_srcloc *loc, int word,
                                              uint64_t ts) {
  pp__tallies *g = tallies_of(word);
  if (pp__likely(g != NULL))
    pp__tally_end(g, loc, ts);
}

static __attribute__((noinline, cold)) void
zone_end_slow(const pp_srcloc *loc, int word, uint64_t ts, int have_ts) {
  if (!have_ts)
    ts = ticks_of(word);
  pp__prod *p = view(word, 0);
  if (p) /* else the thread state is gone (exit destructors) */
    push1(p, ts, pp__slot_tag(PPT_EV_ZONE_END, loc), 0);
}

/* Zone begins and ends off the ring's fast path: stats mode's (aggregated
 * on the thread), or the ring's slow path. Out of line and reached by a
 * tail call, so that the fast path saves no register for them. */
static __attribute__((noinline)) pp_zone zone_begin_other(const pp_srcloc *loc,
                                                          int word) {
  if (word & PP__AGG)
    return agg_begin(loc, word, ticks_of(word));
  return zone_begin_slow(loc, word);
}

static __attribute__((noinline)) void zone_end_other(const pp_srcloc *loc,
                                                     int word) {
  if (word & PP__AGG)
    agg_end(loc, word, ticks_of(word));
  else
    zone_end_slow(loc, word, 0, 0);
}

pp_zone pp_zone_begin(const pp_srcloc *loc) {
  pp_zone z = {NULL};
  int word = word_now();
  if (pp__unlikely(!(word & PP__ON)) || !loc)
    return z;
#ifdef PP__HAVE_RDTSC
  if (pp__likely((word & (PP__TSC | PP__AGG)) == PP__TSC) &&
      pp__likely(push1_fast(&tls_prod, word, __rdtsc(),
                            pp__slot_tag(PPT_EV_ZONE_BEGIN, loc)))) {
    z.loc = loc;
    return z;
  }
#endif
  return zone_begin_other(loc, word);
}

void pp_zone_end(pp_zone zone) {
  if (pp__unlikely(!zone.loc))
    return;
  int word = word_now();
#ifdef PP__HAVE_RDTSC
  if (pp__likely((word & (PP__TSC | PP__AGG)) == PP__TSC)) {
    uint64_t ts = __rdtsc();
    if (pp__unlikely(!push1_fast(&tls_prod, word, ts,
                                 pp__slot_tag(PPT_EV_ZONE_END, zone.loc))))
      zone_end_slow(zone.loc, word, ts, 1);
    return;
  }
#endif
  zone_end_other(zone.loc, word);
}

#ifdef PP_TESTING
/* Tests only (built into pp-tests, never into the library): record one
 * event of type at loc on the calling thread with the tick ts, through
 * the same ring code as the hot path, so a test can give events times of
 * its choosing (a clock that runs backwards). Two-slot types carry value
 * and extra. Returns 1 when recorded. */
int pp__test_record(unsigned type, const pp_srcloc *loc, uint64_t ts,
                    uint64_t value, uint64_t extra) {
  int word = word_now();
  if (!(word & PP__ON) && type != PPT_EV_ZONE_END)
    return 0;
  if (loc && (word & PP__AGG) && type == PPT_EV_ZONE_BEGIN)
    return agg_begin(loc, word, ts).loc != NULL;
  if (loc && (word & PP__AGG) && type == PPT_EV_ZONE_END) {
    agg_end(loc, word, ts);
    return tallies_of(word) != NULL;
  }
  pp__prod *p = view(word, 1);
  if (!p || !loc)
    return 0;
  switch (type) {
  case PPT_EV_ZONE_BEGIN:
  case PPT_EV_ZONE_END:
  case PPT_EV_MARK:
  case PPT_EV_FRAME:
    return push1(p, ts, pp__slot_tag(type, loc), type != PPT_EV_ZONE_END);
  default: {
    uint64_t before = atomic_load(&p->t->dropped);
    push2x(p, ts, pp__slot_tag(type, loc), value, extra);
    return atomic_load(&p->t->dropped) == before;
  }
  }
}
#endif

pp_zone pp_zone_begin_name(const char *name) {
  pp_zone z = {NULL};
  if (!ACTIVE())
    return z;
  const pp_srcloc *loc = pp__intern(name ? name : "", PP_KIND_ZONE);
  return loc ? pp_zone_begin(loc) : z;
}

/* A two-slot event at loc (the second slot: value, and extra in the low
 * 56 bits of its tag word). */
static inline void record2(const pp_srcloc *loc, unsigned type, uint64_t v,
                           uint64_t extra) {
  int word = word_now();
  if (pp__unlikely(!(word & PP__ON)) || !loc)
    return;
  pp__prod *p = view(word, 1);
  if (p)
    push2x(p, ticks_of(word), pp__slot_tag(type, loc), v, extra);
}

static inline void record_value(const pp_srcloc *loc, unsigned type,
                                uint64_t v) {
  record2(loc, type, v, 0);
}

static inline void record_plain(const pp_srcloc *loc, unsigned type) {
  int word = word_now();
  if (pp__unlikely(!(word & PP__ON)) || !loc)
    return;
  pp__prod *p = view(word, 1);
  if (p)
    push1(p, ticks_of(word), pp__slot_tag(type, loc), 1);
}

static uint64_t f64_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

void pp_counter_set_loc(const pp_srcloc *loc, int64_t value) {
  record_value(loc, PPT_EV_COUNTER_SET, (uint64_t)value);
}
void pp_counter_add_loc(const pp_srcloc *loc, int64_t delta) {
  record_value(loc, PPT_EV_COUNTER_ADD, (uint64_t)delta);
}
void pp_counter_setf_loc(const pp_srcloc *loc, double value) {
  record_value(loc, PPT_EV_COUNTER_SETF, f64_bits(value));
}
void pp_mark_loc(const pp_srcloc *loc) { record_plain(loc, PPT_EV_MARK); }
void pp_frame_mark_loc(const pp_srcloc *loc) {
  record_plain(loc, PPT_EV_FRAME);
}
void pp_flow_begin_loc(const pp_srcloc *loc, uint64_t id) {
  record_value(loc, PPT_EV_FLOW_BEGIN, id);
}
void pp_flow_step_loc(const pp_srcloc *loc, uint64_t id) {
  record_value(loc, PPT_EV_FLOW_STEP, id);
}
void pp_flow_end_loc(const pp_srcloc *loc, uint64_t id) {
  record_value(loc, PPT_EV_FLOW_END, id);
}

#define PP__NAMED(call, kind, ...)                                          \
  do {                                                                      \
    if (!ACTIVE() || !name)                                               \
      return;                                                               \
    call(pp__intern(name, kind), __VA_ARGS__);                              \
  } while (0)

void pp_counter_set(const char *name, int64_t value) {
  PP__NAMED(pp_counter_set_loc, PP_KIND_COUNTER, value);
}
void pp_counter_add(const char *name, int64_t delta) {
  PP__NAMED(pp_counter_add_loc, PP_KIND_COUNTER, delta);
}
void pp_counter_setf(const char *name, double value) {
  PP__NAMED(pp_counter_setf_loc, PP_KIND_COUNTER, value);
}
void pp_flow_begin(const char *name, uint64_t id) {
  PP__NAMED(pp_flow_begin_loc, PP_KIND_FLOW, id);
}
void pp_flow_step(const char *name, uint64_t id) {
  PP__NAMED(pp_flow_step_loc, PP_KIND_FLOW, id);
}
void pp_flow_end(const char *name, uint64_t id) {
  PP__NAMED(pp_flow_end_loc, PP_KIND_FLOW, id);
}
static _Atomic uint64_t next_range_id = 1;
static const pp_srcloc range_end_loc = {"(range end)", NULL, NULL, 0, 0};

uint64_t pp_range_start(const char *name) {
  if (!ACTIVE() || !name)
    return 0;
  uint64_t id = atomic_fetch_add_explicit(&next_range_id, 1,
                                          memory_order_relaxed);
  record_value(pp__intern(name, PP_KIND_ZONE), PPT_EV_RANGE_BEGIN, id);
  return id;
}

void pp_range_end(uint64_t id) {
  if (id)
    record_value(&range_end_loc, PPT_EV_RANGE_END, id);
}

/* Requests and batches: fixed sites, the caller's id in the value. */
static const pp_srcloc request_loc = {"(request)", NULL, NULL, 0, 0};
static const pp_srcloc batch_loc = {"(batch)", NULL, NULL, 0, 0};

void pp_request_begin(uint64_t id) {
  record2(&request_loc, PPT_EV_REQ_BEGIN, id, 0);
}
void pp_request_first_token(uint64_t id) {
  record2(&request_loc, PPT_EV_REQ_FIRST, id, 0);
}
void pp_request_tokens(uint64_t id, uint32_t n) {
  record2(&request_loc, PPT_EV_REQ_TOKENS, id, n);
}
void pp_request_end(uint64_t id, int status) {
  record2(&request_loc, PPT_EV_REQ_END, id,
               ppt_zigzag((int64_t)status));
}
void pp_batch(uint32_t size, uint32_t padded_size) {
  record2(&batch_loc, PPT_EV_BATCH, size, padded_size);
}

/* Queues: the queue's own site, the item id (or why) in the value and the
 * depth after the call, zigzag-coded, in the extra number. */
static inline void record_queue(pp_queue *q, unsigned type, uint64_t v,
                                int64_t depth) {
  record2(&q->loc, type, v, ppt_zigzag(depth));
}

void pp_queue_push(pp_queue *q, uint64_t item_id) {
  if (!q)
    return;
  int64_t d = atomic_fetch_add_explicit(&q->depth, 1,
                                        memory_order_relaxed) + 1;
  record_queue(q, PPT_EV_QUEUE_PUSH, item_id, d);
}

void pp_queue_pop(pp_queue *q, uint64_t item_id) {
  if (!q)
    return;
  int64_t d = atomic_fetch_sub_explicit(&q->depth, 1,
                                        memory_order_relaxed) - 1;
  record_queue(q, PPT_EV_QUEUE_POP, item_id, d);
}

void pp_queue_wait_begin(pp_queue *q, int why) {
  if (q && (why == PP_QUEUE_FULL || why == PP_QUEUE_EMPTY))
    record_queue(q, PPT_EV_QUEUE_WAIT_BEGIN, (uint64_t)why,
                 atomic_load_explicit(&q->depth, memory_order_relaxed));
}

void pp_queue_wait_end(pp_queue *q, int why) {
  if (q && (why == PP_QUEUE_FULL || why == PP_QUEUE_EMPTY))
    record_queue(q, PPT_EV_QUEUE_WAIT_END, (uint64_t)why,
                 atomic_load_explicit(&q->depth, memory_order_relaxed));
}

int64_t pp_queue_depth(const pp_queue *q) {
  return q ? atomic_load_explicit(&((pp_queue *)q)->depth,
                                  memory_order_relaxed)
           : 0;
}

/* Device memory pools: the pool is an interned name of kind POOL; the
 * continuation slot carries bytes << 8 | device (pptrace.h). */
static inline void record_mem(unsigned type, uint64_t value, uint64_t bytes,
                              const char *pool, int device) {
  if (pp__unlikely(!ACTIVE()) || !pool || device < 0 || device > 255)
    return;
  if (bytes > PPT_MEM_MAX_BYTES)
    bytes = PPT_MEM_MAX_BYTES;
  record2(pp__intern(pool, PP_KIND_POOL), type, value,
          bytes << 8 | (uint64_t)device);
}

void pp_mem_alloc(const void *ptr, uint64_t bytes, const char *pool,
                  int device) {
  record_mem(PPT_EV_MEM_ALLOC, (uint64_t)(uintptr_t)ptr, bytes, pool,
             device);
}
void pp_mem_free(const void *ptr, const char *pool, int device) {
  record_mem(PPT_EV_MEM_FREE, (uint64_t)(uintptr_t)ptr, 0, pool, device);
}
void pp_mem_reserve(const char *pool, uint64_t bytes, int device) {
  record_mem(PPT_EV_MEM_RESERVE, 0, bytes, pool, device);
}

void pp_mark(const char *name) {
  if (ACTIVE() && name)
    pp_mark_loc(pp__intern(name, PP_KIND_MARK));
}
void pp_frame_mark(const char *name) {
  if (ACTIVE() && name)
    pp_frame_mark_loc(pp__intern(name, PP_KIND_FRAME));
}

void pp_thread_name(const char *name) {
  pp__tstate *t = pp__thread_get();
  if (!t || !name)
    return;
  pp__registry_lock();
  snprintf(t->name, sizeof t->name, "%s", name);
  t->name_dirty = 1;
  pp__registry_unlock();
}

void pp__thread_name_tid(uint64_t tid, const char *name) {
  if (!name)
    return;
  if (tid == (uint64_t)syscall(SYS_gettid)) {
    pp_thread_name(name);
    return;
  }
  /* Another thread: name it if it has recorded (or been named) already. */
  pp__registry_lock();
  for (pp__tstate *t = reg_head; t; t = t->next)
    if (t->tid == tid && !atomic_load(&t->dead)) {
      snprintf(t->name, sizeof t->name, "%s", name);
      t->name_dirty = 1;
      break;
    }
  pp__registry_unlock();
}

/* ---- run-time name interning ------------------------------------------- */

#define INTERN_MAX 65536u
#define INTERN_SLOTS (INTERN_MAX * 2u)

typedef struct interned {
  pp_srcloc loc;
  uint64_t hash;
  char name[]; /* NUL-terminated copy */
} interned;

static _Atomic(interned *) intern_tab[INTERN_SLOTS];
static unsigned intern_count;
static const pp_srcloc overflow_locs[PP_KIND_METRIC + 1] = {
    {"(overflow)", NULL, NULL, 0, 0},
    {"(overflow)", NULL, NULL, 0, PP_KIND_ZONE},
    {"(overflow)", NULL, NULL, 0, PP_KIND_COUNTER},
    {"(overflow)", NULL, NULL, 0, PP_KIND_MARK},
    {"(overflow)", NULL, NULL, 0, PP_KIND_FRAME},
    {"(overflow)", NULL, NULL, 0, PP_KIND_FLOW},
    {"(overflow)", NULL, NULL, 0, PP_KIND_QUEUE},
    {"(overflow)", NULL, NULL, 0, PP_KIND_POOL},
    {"(overflow)", NULL, NULL, 0, PP_KIND_METRIC}};

static uint64_t name_hash(const char *s, uint32_t kind, size_t *len) {
  uint64_t h = 1469598103934665603ULL ^ kind;
  const unsigned char *p = (const unsigned char *)s;
  size_t n = 0;
  for (; p[n]; n++)
    h = (h ^ p[n]) * 1099511628211ULL;
  *len = n;
  return h ^ (h >> 29);
}

const pp_srcloc *pp__intern(const char *name, uint32_t kind) {
  size_t len;
  uint64_t h = name_hash(name, kind, &len);
  uint32_t i = (uint32_t)h & (INTERN_SLOTS - 1);
  for (;;) {
    interned *e = atomic_load_explicit(&intern_tab[i], memory_order_acquire);
    if (!e)
      break;
    if (e->hash == h && e->loc.kind == kind && strcmp(e->name, name) == 0)
      return &e->loc;
    i = (i + 1) & (INTERN_SLOTS - 1);
  }
  /* Not found: insert under the lock (re-probing, another thread may have
   * inserted it meanwhile). */
  const pp_srcloc *res = NULL;
  pthread_mutex_lock(&intern_lock);
  i = (uint32_t)h & (INTERN_SLOTS - 1);
  for (;;) {
    interned *e = atomic_load_explicit(&intern_tab[i], memory_order_acquire);
    if (!e)
      break;
    if (e->hash == h && e->loc.kind == kind && strcmp(e->name, name) == 0) {
      res = &e->loc;
      break;
    }
    i = (i + 1) & (INTERN_SLOTS - 1);
  }
  if (!res) {
    interned *e = intern_count < INTERN_MAX
                      ? pp__malloc(sizeof *e + len + 1)
                      : NULL;
    if (e) {
      memcpy(e->name, name, len + 1);
      e->hash = h;
      e->loc = (pp_srcloc){e->name, NULL, NULL, 0, kind};
      intern_count++;
      atomic_store_explicit(&intern_tab[i], e, memory_order_release);
      res = &e->loc;
      /* named in the durable arena at once: a salvager names the events
       * of a site first met after the writer's last pass (Python's zones
       * are all run-time names) */
      pp__arena_site(res, UINT32_MAX);
    } else {
      res = &overflow_locs[kind <= PP_KIND_METRIC ? kind : 0];
    }
  }
  pthread_mutex_unlock(&intern_lock);
  return res;
}

/* Sites declared with pp_site_declare, under intern_lock. */
static const pp_srcloc **declared;
static size_t ndeclared, cap_declared;

void pp_site_declare(const pp_srcloc *loc) {
  if (!loc)
    return;
  pthread_mutex_lock(&intern_lock);
  int kept = ndeclared < INTERN_MAX &&
             pp__grow((void **)&declared, &cap_declared, ndeclared + 1,
                      sizeof *declared) == 0;
  if (kept)
    declared[ndeclared++] = loc;
  pthread_mutex_unlock(&intern_lock);
  if (kept)
    pp__arena_site(loc, UINT32_MAX);
}

void pp__recorder_name_interned(void) {
  pthread_mutex_lock(&intern_lock);
  for (uint32_t i = 0; i < INTERN_SLOTS; i++) {
    interned *e = atomic_load_explicit(&intern_tab[i], memory_order_acquire);
    if (e)
      pp__arena_site(&e->loc, UINT32_MAX);
  }
  for (size_t i = 0; i < ndeclared; i++)
    pp__arena_site(declared[i], UINT32_MAX);
  pthread_mutex_unlock(&intern_lock);
}

/* ---- overhead calibration ---------------------------------------------- */

/* The calibration's zone begin and end: pp_zone_begin and pp_zone_end's
 * fast path (a call, the recording word's load, the clock, a slot) on the
 * scratch view p instead of the thread's own, called through pointers the
 * compiler cannot see through, so that a calibrated event pays for a call
 * like a real one (an inlined loop over push1 measured 12 ns an event
 * where the program's zones cost it 20-25). */
static __attribute__((noinline)) pp_zone calib_begin(pp__prod *p,
                                                     const pp_srcloc *loc) {
  pp_zone z = {NULL};
  int word = word_now() | (pp__tick_is_tsc ? PP__TSC : 0);
  if (push1(p, ticks_of(word), pp__slot_tag(PPT_EV_ZONE_BEGIN, loc), 1))
    z.loc = loc;
  return z;
}

static __attribute__((noinline)) void calib_end(pp__prod *p, pp_zone z) {
  if (!z.loc)
    return;
  int word = word_now() | (pp__tick_is_tsc ? PP__TSC : 0);
  push1(p, ticks_of(word), pp__slot_tag(PPT_EV_ZONE_END, z.loc), 0);
}

static pp_zone (*volatile calib_begin_fn)(pp__prod *,
                                          const pp_srcloc *) = calib_begin;
static void (*volatile calib_end_fn)(pp__prod *, pp_zone) = calib_end;

/* Stats mode's zone begin and end (agg_begin, agg_end) on a scratch tally
 * set, the same way. */
static __attribute__((noinline)) pp_zone calib_tbegin(pp__tallies *g,
                                                      const pp_srcloc *loc) {
  pp_zone z = {NULL};
  int word = word_now() | (pp__tick_is_tsc ? PP__TSC : 0);
  if (pp__likely(atomic_load_explicit(&g->gen, memory_order_relaxed))) {
    pp__tally_begin(g, loc, ticks_of(word));
    z.loc = loc;
  }
  return z;
}

static __attribute__((noinline)) void calib_tend(pp__tallies *g, pp_zone z) {
  if (!z.loc)
    return;
  int word = word_now() | (pp__tick_is_tsc ? PP__TSC : 0);
  if (pp__likely(atomic_load_explicit(&g->gen, memory_order_relaxed)))
    pp__tally_end(g, z.loc, ticks_of(word));
}

static pp_zone (*volatile calib_tbegin_fn)(pp__tallies *,
                                           const pp_srcloc *) = calib_tbegin;
static void (*volatile calib_tend_fn)(pp__tallies *, pp_zone) = calib_tend;

enum { CALIB_PAIRS = 256, CALIB_ROUNDS = 7 };

/* Stats mode: the fastest round of CALIB_PAIRS zones on a scratch set. */
static double tally_event_cost(const pp_srcloc *loc) {
  pp__tallies *g = pp__tallies_new(1, 0);
  double best = 0;
  pp_zone (*begin)(pp__tallies *, const pp_srcloc *) = calib_tbegin_fn;
  void (*end)(pp__tallies *, pp_zone) = calib_tend_fn;
  for (int r = 0; g && r < CALIB_ROUNDS; r++) {
    int64_t t0 = pp__mono_ns();
    for (int i = 0; i < CALIB_PAIRS; i++)
      end(g, begin(g, loc));
    double per = (double)(pp__mono_ns() - t0) / (2.0 * CALIB_PAIRS);
    if (r == 0 || per < best)
      best = per;
  }
  pp__tallies_free(g);
  return best;
}

double pp__measure_event_cost(int tally, double *drop_cost_ns) {
  /* The scratch ring is the part of a ring map_ring populates (faulting
   * pages in one by one cost more than the measurement: 10 us a page on
   * some VMs). Rounds of 512 events, about 6 us each: the fastest round
   * is the figure (the first warms the caches; an interrupt spoils one).
   * The whole measurement runs in pp_init, so it is kept short: 7 rounds
   * of 2000 events cost 0.17 ms of every profiled process's start-up.
   *
   * Then the cost of a drop (issue 12): a zone whose begin finds its ring
   * full costs its thread the slow path (room_slow's look at the reader's
   * position, the writer's wake-up check, the drop count), and a thread
   * that outruns the writer drops most of its zones: in a tight loop of
   * empty zones two thirds were dropped, and leaving them out made the
   * printed overhead a third short of the measured. The scratch ring is
   * made to look full (reader at 0, writer at its capacity), so every
   * begin takes the drop path; nothing is written to the ring. 4 rounds
   * of 256 drops, the fastest round is the figure.
   *
   * Stats mode aggregates zones on their thread instead (tally.h): its
   * event is a tally begin or end, and nothing is dropped. */
  enum {
    SLOTS = 2 * RING_AHEAD_MIN / sizeof(pp__slot),
    PAIRS = CALIB_PAIRS,
    ROUNDS = CALIB_ROUNDS,
    DROPS = 256,
    DROP_ROUNDS = 4
  };
  static const pp_srcloc loc = {"calibrate", NULL, NULL, 0, PP_KIND_ZONE};
  if (tally) {
    if (drop_cost_ns)
      *drop_cost_ns = 0;
    return tally_event_cost(&loc);
  }
  pp__tstate *t = alloc_tstate(0); /* scratch: never salvaged */
  double best = 0, best_drop = 0;
  if (t && map_ring(t, SLOTS) == 0) {
    pp__prod v = {t->ring, t->mask, 0, UINT64_MAX, t, 1};
    pp_zone (*begin)(pp__prod *, const pp_srcloc *) = calib_begin_fn;
    void (*end)(pp__prod *, pp_zone) = calib_end_fn;
    for (int r = 0; r < ROUNDS; r++) {
      int64_t t0 = pp__mono_ns();
      for (int i = 0; i < PAIRS; i++)
        end(&v, begin(&v, &loc));
      double per = (double)(pp__mono_ns() - t0) / (2.0 * PAIRS);
      if (r == 0 || per < best)
        best = per;
    }
    /* A full ring: need = w - r + 1 + reserve > capacity. In overwrite
     * (flight) mode nothing is ever dropped: no figure. */
    atomic_store(&t->r, 0);
    v.w = t->capacity;
    v.limit = 0;
    for (int r = 0;
         drop_cost_ns && r < DROP_ROUNDS && !atomic_load(&pp__overwrite_mode);
         r++) {
      int64_t t0 = pp__mono_ns();
      for (int i = 0; i < DROPS; i++)
        end(&v, begin(&v, &loc));
      double per = (double)(pp__mono_ns() - t0) / DROPS;
      if (r == 0 || per < best_drop)
        best_drop = per;
    }
  }
  if (t)
    free_state(t);
  if (drop_cost_ns)
    *drop_cost_ns = best_drop;
  return best;
}
