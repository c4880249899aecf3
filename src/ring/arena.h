/* SPDX-License-Identifier: MIT */
/*
 * The durable arena: the recording buffers of a process in one
 * file-backed shared mapping, so that what a thread recorded outlives the
 * process (kill -9, the OOM killer, a crash the signal handlers cannot
 * finish). Each thread's state (ring/ring.h: its indices, name and drop
 * count) and ring live in the file; the writer drains them as before and
 * says in the file's header how far the trace file is whole. When the
 * process dies without finishing its trace, a salvager (src/salvage/)
 * reads the file, appends what was recorded but not drained to the trace
 * and removes the file (docs/internals/durable.md).
 *
 * Layout (all little-endian, this machine's): a header of
 * PP__ARENA_HDR_BYTES holding pp__arena_hdr and, from
 * PP__ARENA_SEG_OFF, the table of segments; then the segments. A segment
 * is a page-aligned range of the file mapped at one address of the
 * process: a thread state, a ring, or a block of site records. The table
 * keeps each segment's address in the process, so that the salvager can
 * translate the pointers the thread states hold (t->ring).
 *
 * One arena per process, kept across its sessions (a thread's state and
 * ring outlive a session); its header says whether a session records
 * (state ACTIVE, with the trace file's path) or none (IDLE). A forked
 * child forgets its parent's arena and makes its own.
 *
 * Threads: allocation, freeing and site records take the arena's lock
 * (control paths and the writer); the header's commit fields are the
 * writer's alone.
 */
#ifndef PP_RING_ARENA_H
#define PP_RING_ARENA_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeprof.h"

#define PP__ARENA_MAGIC "PPRINGS\0"
#define PP__ARENA_VERSION 2u
#define PP__ARENA_HDR_BYTES (64u << 10)
#define PP__ARENA_SEG_OFF (8u << 10)
#define PP__ARENA_SEG_MAX                                                      \
  ((PP__ARENA_HDR_BYTES - PP__ARENA_SEG_OFF) / sizeof(pp__arena_seg))
#define PP__ARENA_PATH_MAX 4096u
/* A block of site records. */
#define PP__ARENA_SITES_BYTES (64u << 10)

enum pp__arena_kind {
  PP__SEG_FREE = 0,   /* its file range may be given again */
  PP__SEG_TSTATE = 1, /* a pp__tstate (ring/ring.h) */
  PP__SEG_RING = 2,   /* a ring of pp__slot */
  PP__SEG_SITES = 3,  /* site records (pp__arena_sites) */
  PP__SEG_LEAKED = 4, /* a ring replaced while still mapped: never given
                         again, never read */
  PP__SEG_BLOB = 5,   /* pp__arena_blob: pp__arena_blob_hdr, then bytes */
  PP__SEG_TALLY = 6,  /* a chunk of a stats-mode tally set (ring/tally.h) */
  PP__SEG_CKPT = 7    /* a stats-mode checkpoint (pp__arena_ckpt):
                         pp__arena_blob_hdr, then bytes */
};

typedef struct pp__arena_blob_hdr {
  _Atomic uint64_t len; /* bytes after this header (stored last) */
  uint64_t token; /* the session's */
  uint64_t seq;   /* the chunk number after them */
  uint64_t spare;
} pp__arena_blob_hdr;

enum pp__arena_state {
  PP__ARENA_IDLE = 0,   /* no session: nothing to salvage */
  PP__ARENA_ACTIVE = 1, /* a session records into trace_path */
};

typedef struct pp__arena_seg {
  uint64_t addr;         /* where the process maps it */
  uint64_t off, len;     /* in the file; page multiples */
  _Atomic uint32_t kind; /* stored last */
  uint32_t spare;
} pp__arena_seg;

typedef struct pp__arena_hdr {
  char magic[8];
  uint32_t version, hdr_bytes;
  uint32_t pid, uid;
  uint32_t page, tstate_bytes; /* the process's page and thread state size */
  uint32_t slot_bytes, mode;   /* sizeof(pp__slot); the session's pp_mode */
  uint64_t proc_start;         /* the process's start time (/proc/PID/stat field
                                  22), so that a reused pid is told apart */
  char boot_id[40];            /* /proc/sys/kernel/random/boot_id */
  _Atomic uint32_t state;      /* pp__arena_state */
  _Atomic uint32_t nseg;       /* table entries in use */
  uint64_t token;              /* the session's (META durable.token) */
  /* The writer's commit after each pass: the trace file is whole up to
   * commit_off, its next chunk is number commit_seq, and the rings of
   * every thread whose pending_pass <= commit_pass were drained into it
   * up to their r_pending (ring/ring.h). */
  _Atomic uint64_t commit_off, commit_seq, commit_events, commit_drops;
  _Atomic uint64_t commit_pass;
  /* Stats mode, stored by the writer at the start and before each
   * commit: its clock (ticks to CLOCK_MONOTONIC ns, sink/sink.h's
   * pp__clockmap), for the salvager to convert what it finds. */
  uint64_t clock_tick0, clock_mult;
  int64_t clock_ns0;
  double clock_ns_per_tick;
  uint64_t file_bytes; /* the file's size: segments end there */
  char trace_path[PP__ARENA_PATH_MAX];
} pp__arena_hdr;

/* A block of site records: used is the bytes of records written whole
 * (release). A record: pp__arena_site_rec, then the name, function and file
 * with their NULs, padded to 8 bytes. */
typedef struct pp__arena_sites {
  _Atomic uint64_t used;
  uint64_t token; /* the session whose ids these are */
} pp__arena_sites;

typedef struct pp__arena_site_rec {
  uint64_t addr; /* the pp_srcloc's address in the process */
  uint32_t id;   /* its id in the trace file */
  uint32_t kind, line;
  uint16_t len[3]; /* name, function, file (with NULs; 0: NULL) */
} pp__arena_site_rec;

/* Register the arena's fork and exit handlers, once per process. Called
 * by every session's start, before the session registers its own, so
 * that around fork the arena's lock is taken last (after the writer's and
 * the registry's, the order a writer pass takes them in) and, at exit,
 * the arena's handler runs after the session's. */
void pp__arena_init_once(void);

/* Open the process's arena for a session writing trace_path in mode
 * (creating the file the first time, in PIPEPROF_RINGS_DIR, else /dev/shm,
 * else trace_path's folder; PIPEPROF_RINGS_DIR=off: none), with a fresh
 * token. 0 and the file's path in path; -1 with the reason in why (then
 * the session records in anonymous memory). */
int pp__arena_session_begin(const char *trace_path, unsigned mode, char *path,
                            size_t n, char *why, size_t wn);
/* The session's token (0: no arena). */
uint64_t pp__arena_token(void);
/* The session ended with its trace finished: nothing to salvage. When the
 * process is exiting, the file is removed (its mappings go with the
 * process); else it stays for the next session. */
void pp__arena_session_end(int exiting);

/* The process ends (at exit, and where no atexit handler runs: _exit, a
 * fatal signal), after its session's last pass: the file is removed
 * unless a session still records (its trace unfinished: a salvager needs
 * it). Async-signal-safe, lock-free. */
void pp__arena_process_end(void);

/* bytes (a page multiple) of zeroed memory in the arena, populated when
 * populate; NULL when there is no arena or no room (the caller uses
 * anonymous memory). */
void *pp__arena_alloc(size_t bytes, unsigned kind, int populate);
/* Requests of this session the arena could not serve (full file system,
 * full segment table): their threads record in plain memory, not
 * durable. The first reason in why. */
uint64_t pp__arena_fallbacks(char *why, size_t n);
#ifdef PP_TESTING
/* Tests: at most n segments (0: the table's size). */
void pp__arena_test_seg_limit(uint32_t n);
#endif

/* Whether p was given by pp__arena_alloc. */
int pp__arena_owns(const void *p);
/* Give back what pp__arena_alloc gave (its memory is released): 1, or 0
 * when p is not the arena's (the caller unmaps it). */
int pp__arena_free(void *p);
/* A segment replaced while still mapped (a ring swapped between
 * sessions): never read by a salvager, never given again. */
void pp__arena_leak(void *p);

/* Flight mode: the chunks a salvager writes at the head of the dump it
 * makes of the rings (META, the clock's origin), whole as in a file, the
 * next chunk number seq. Replaces an earlier blob. */
void pp__arena_blob(const void *chunks, size_t len, uint32_t seq);

/* Stats mode: the writer's checkpoint of its aggregate after pass (the
 * stats sink's checkpoint bytes), in one of two segments taken in turn:
 * the one the last commit names is never written over, and one written
 * for a pass past the commit is not taken. The salvager takes the newest
 * whose pass the commit has reached. 0, or -1 when the arena has no room
 * (then the pass must not be committed). */
int pp__arena_ckpt(const void *data, size_t len, uint64_t pass);
/* Stats mode: what the writer stores before a commit (see
 * pp__arena_hdr). */
void pp__arena_clock(uint64_t tick0, int64_t ns0, uint64_t mult,
                     double ns_per_tick);

/* Record site p: the writer met it, id in its trace file, or it was
 * named (an interned name, before any writer met it), id UINT32_MAX. */
void pp__arena_site(const pp_srcloc *p, uint32_t id);

/* The writer's commit after a pass (see pp__arena_hdr). */
void pp__arena_commit(uint64_t off, uint64_t seq, uint64_t events,
                      uint64_t drops, uint64_t pass);

/* Whether the process that made the arena h heads still runs: its pid
 * with the same start time, on the same boot, not a zombie. */
int pp__arena_owner_alive(const pp__arena_hdr *h);

/* In a forked child: forget the parent's arena (unmapped; the parent's
 * file is never touched). */
void pp__arena_after_fork_child(void);

#endif /* PP_RING_ARENA_H */
