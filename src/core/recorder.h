/* SPDX-License-Identifier: MIT */
/*
 * Per-thread event rings and the thread registry.
 *
 * Each recording thread owns one ring of 16-byte slots (a power of two).
 * The thread is the only producer and the session's writer the only
 * consumer: the producer writes slots then publishes its write index with a
 * release store; the writer reads up to that index with an acquire load and
 * publishes its read index the same way. Indices grow forever (64-bit), a
 * slot is ring[i & mask]. No lock, system call or allocation on the path.
 *
 * The slot and the ring state are ring/ring.h's (the sinks read them).
 *
 * Invariants: w - r <= capacity (trace and stats modes; the producer drops
 * instead of overwriting); in flight mode the producer overwrites and the
 * dumper discards slots older than w - capacity. A zone begin is dropped
 * when fewer than PP__END_RESERVE slots would remain, so zone ends (which
 * close what was recorded) are almost never dropped.
 */
#ifndef PP_RECORDER_H
#define PP_RECORDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "../ring/ring.h"
#include "pipeprof.h"

#define PP__END_RESERVE 1024u

/* pp__active, the word the instrumentation macros test (bit 0: recording
 * on), also carries what the hot path needs before it touches a ring, so
 * that an event reads one word of shared state:
 *   bit 0      recording on: a session runs and is enabled (PP__ON)
 *   bit 1      ticks are TSC cycles (PP__TSC, = pp__tick_is_tsc)
 *   bit 2      zones are aggregated on their thread (PP__AGG: stats mode,
 *              ring/tally.h), not written to the ring
 *   bits 3-30  the generation: it changes when a session starts (rings may
 *              be resized or repositioned then), and a thread's private
 *              view of its ring is valid for one generation
 * Stored by pp__recorder_publish (release), read with acquire. */
#define PP__ON 1
#define PP__TSC 2
#define PP__AGG 4
#define PP__GEN_SHIFT 3
#define PP__GEN_MAX 0x0FFFFFFFu
#define PP__GEN(word) ((unsigned)(word) >> PP__GEN_SHIFT)

/* Store pp__active: recording on or off, the current generation and tick
 * source. Control path (also async-signal-safe: one atomic store). */
void pp__recorder_publish(int on);

/* The calling thread's state, attaching it on first use (NULL if that
 * failed, e.g. out of memory). */
pp__tstate *pp__thread_get(void);

/* Writer: populate t's ring ahead of write index w (a thread whose w the
 * writer has seen > 0), so the recording thread does not take the page
 * faults; n is how many slots the producer wrote since the writer's last
 * look, which sets how far ahead. */
void pp__ring_prefault(pp__tstate *t, uint64_t w, uint64_t n);

/* Registry access for the writer. */
void pp__registry_lock(void);
void pp__registry_unlock(void);
pp__tstate *pp__registry_head(void); /* under the lock */
/* Events dropped by every thread since the process began (threads whose
 * state was freed included). Takes the registry lock. */
uint64_t pp__dropped_total(void);
/* Unlink and free dead threads the writer is done with: done(t) says the
 * ring's events are consumed, and the thread's name and drop count must be
 * written. Of those, the keep that exited last stay (flight mode: their
 * rings hold the last events of threads a dump must show). Under the lock;
 * returns how many were freed. */
size_t pp__registry_reap(int (*done)(const pp__tstate *t), unsigned keep);

/* Ring size (slots) for threads attached from now on, whether producers
 * overwrite (flight) instead of dropping, and whether zones are
 * aggregated on their thread (stats). Called by the session. */
void pp__recorder_configure(uint64_t slots, int overwrite, int tally);
/* The default ring size adapts to the number of threads: the rings of all
 * threads together stay within bytes (0: no budget, for a size the user
 * set); past it a new thread's ring is halved until it fits, down to
 * PP__RING_MIN_SLOTS (docs/api.md "Full buffers"). */
#define PP__RING_BUDGET_BYTES ((uint64_t)256 << 20)
#define PP__RING_MIN_SLOTS 4096u /* 64 KiB */
void pp__recorder_ring_budget(uint64_t bytes);
/* Rings made smaller than the session's size this session. */
uint64_t pp__recorder_rings_smaller(void);
/* The generation of pp__active now (a tally set counts for one). */
unsigned pp__recorder_gen(void);
/* Bring every existing ring in line with a new session: a new generation
 * (published with recording off), then the consumer index to the current
 * write index (nothing stale is written). */
void pp__recorder_reset_positions(void);
/* Fork handling: forget the parent's threads in the child. */
void pp__recorder_after_fork_child(void);
/* In a forked child of a recording process: recording on, and the first
 * event of the child (any kind, any thread) calls restart, once, before it
 * is recorded; restart starts the child's session (session.c), so that a
 * child that records nothing (fork and exec) makes no file. */
void pp__recorder_restart_on_first_event(void (*restart)(void));
/* The child starts a session of its own (pp_init): no restart. */
void pp__recorder_cancel_restart(void);

/* Name the thread with Linux thread id tid (nvtxNameOsThread). Only a
 * thread known to the registry (it has recorded or named itself) can be
 * named from another thread; control path, takes the registry lock. */
void pp__thread_name_tid(uint64_t tid, const char *name);

/* A queue handle (pp_queue_declare, src/core/queue.c). The site is what
 * events point at; depth is updated by every push and pop (relaxed: it is
 * a statistic, and the queue's own synchronisation orders the calls that
 * matter). Handles are never freed. */
struct pp_queue {
  pp_srcloc loc; /* kind PP_KIND_QUEUE; strings in text[] */
  _Atomic int64_t depth;
  struct pp_queue *next; /* registry list, guarded by its lock */
  char text[];           /* name, from, to, each NUL-terminated */
};

/* Fork handling for the queue registry (queue.c). */
void pp__queue_after_fork_child(void);

/* Interned run-time names: returns a srcloc that lives until exit. Each
 * new one is named in the durable arena (ring/arena.h) with no id. */
const pp_srcloc *pp__intern(const char *name, uint32_t kind);
/* Name every run-time name interned so far, and every site declared
 * (pp_site_declare), in the durable arena (a new session's, whose site
 * records start empty). */
void pp__recorder_name_interned(void);

/* Measure the cost of one recorded event (ns), on a scratch ring (tally:
 * on a scratch tally set, stats mode's zones), and, when drop_cost_ns is
 * not NULL, the cost of one dropped event (a begin that finds its ring
 * full) there; 0 where not measured (a tally drops nothing). */
double pp__measure_event_cost(int tally, double *drop_cost_ns);

/* Session hooks implemented in session.c. */
/* Start CUPTI activity tracing in the running session (PIPEPROF_CUDA=1,
 * CUDA injection). Records META "cuda.*" facts, or "unavailable.cuda" with
 * the reason when it cannot start (no libcupti, not trace mode, ...).
 * Control path. Returns 0 when tracing (also when it already was), -1
 * otherwise. */
int pp__session_cuda_start(void);
extern _Atomic int pp__overwrite_mode;

#ifdef PP_TESTING
/* Tests only: record one event with a tick of the test's choosing
 * (recorder.c). */
int pp__test_record(unsigned type, const pp_srcloc *loc, uint64_t ts,
                    uint64_t value, uint64_t extra);
#endif

#endif /* PP_RECORDER_H */
