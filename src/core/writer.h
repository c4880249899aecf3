/* SPDX-License-Identifier: MIT */
/*
 * The writer thread of a session: every flush_ms (longer while events
 * trickle, see writer.c) it drains the threads' rings into the session's
 * sinks (sink/sink.h: trace or stats, and live), writes the file's own
 * chunks (META, THREAD, CLOCK, DROPS, CUDA, END), resolves GPU zones and
 * hands anomalies and alerts to the alert callback. In flight mode it
 * drains nothing and writes a dump on request and at the end.
 *
 * Threads: pp__writer_open/start/stop/free from the session's control
 * path (session.c, under its lock); pp__writer_dump from any thread;
 * pp__writer_stop_async from a signal handler.
 */
#ifndef PP_CORE_WRITER_H
#define PP_CORE_WRITER_H

#include <sys/types.h>

#include "../sink/live.h"
#include "clock.h"
#include "pipeprof.h"

typedef struct pp__writer_cfg {
  pp_mode mode;
  unsigned flush_ms;
  const char *out_path; /* the session's file, or the flight dump's */
  const char *process_name;
  pid_t pid;
  pp__clock_sync sync0; /* the session's first clock point */
  double ticks_per_ns;  /* first estimate, for files with one sync point */
  double event_cost_ns, drop_cost_ns;
  pp__live *live; /* the session's; NULL when off */
  char *why;      /* the file cannot be created: one line here */
  size_t why_n;
} pp__writer_cfg;

/* The writer's longest period while events trickle, for a period of
 * flush_ms (docs/formats/pptrace.md: what a kill -9 can lose). */
unsigned pp__writer_idle_ms(unsigned flush_ms);

/* Open the output (trace and stats modes: create the file and write its
 * META and first CLOCK) and the sinks. PP_OK; PP_EIO (errno set, the
 * reason in c->why) when the file cannot be created; PP_ENOMEM. */
int pp__writer_open(const pp__writer_cfg *c);
/* Start the thread. PP_OK or PP_ENOMEM (then everything is freed). */
int pp__writer_start(void);
/* Stop: the thread's last pass drains every ring, finishes the sinks and
 * the file (flight mode: writes the dump); then the anomalies of its last
 * regular pass go to the alert callback. */
void pp__writer_stop(void);
/* Any thread but the writer's: ask the writer for a pass now and wait
 * for it, at most timeout_ms: every ring drained up to the call, stats
 * mode's tallies looked at, and the live session window published as of
 * the pass (pp__live_publish_now). 0, or -1 when no writer runs, the
 * caller is the writer thread (an alert callback), or the time ran out. */
int pp__writer_sync(unsigned timeout_ms);
/* Free what the writer holds. 0, or -1 when a write to the file failed
 * (why, when not NULL: a flight dump's failure, else ""). */
int pp__writer_free(char *why, size_t n);
/* From a signal handler: ask the thread to finish; pp__writer_finished()
 * tells when it has. */
void pp__writer_stop_async(void);
int pp__writer_finished(void);
/* Tell the last pass that the process is exiting (rings are then left to
 * the process's exit). */
void pp__writer_set_exiting(int exiting);
/* How the session ends, for META process.end ("exit", "_exit", "signal
 * SIGSEGV"; a static string; async-signal-safe). Unset: "pp_shutdown"
 * (the program ended the session and ran on). */
void pp__writer_set_end(const char *how);
/* Flight mode: dump the rings to path. PP_OK, PP_EIO (pp_last_error's
 * text in err). */
int pp__writer_dump(const char *path, char *err, size_t n);
/* CUDA activity tracing started (CUPTI chunks from now on). */
void pp__writer_cuda_on(int on);
int pp__writer_cuda(void);
/* Around fork (the writer's lock, then the registry). */
void pp__writer_fork_prepare(void);
void pp__writer_fork_parent(void);
void pp__writer_fork_child(void);

#endif /* PP_CORE_WRITER_H */
