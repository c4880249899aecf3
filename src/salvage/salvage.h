/* SPDX-License-Identifier: MIT */
/*
 * Salvage: finish the trace of a process that died before its writer
 * did (kill -9, the OOM killer, a crash its signal handlers could not
 * finish) from the process's durable arena (ring/arena.h): the events
 * its threads recorded but the writer had not drained are appended to
 * the trace, with the threads' drop counts, how the process ended, what
 * was recovered, and the END chunk; then the arena's file is removed.
 * docs/internals/durable.md gives the protocol and its bounds.
 *
 * The arena is input like any file: every offset, pointer, index and
 * length in it is checked before use; a file that fails a check is
 * refused with one line, the trace untouched.
 */
#ifndef PP_SALVAGE_SALVAGE_H
#define PP_SALVAGE_SALVAGE_H

#include <stddef.h>
#include <stdint.h>

typedef struct pp_salvage_result {
  uint64_t events;        /* events recovered from the rings */
  uint64_t threads;       /* threads they came from */
  uint64_t drops;         /* events the threads dropped, not yet counted */
  uint64_t unnamed_sites; /* sites first met after the writer's last pass:
                             their names died with the process */
  uint64_t unreadable;    /* stats mode: tallies or histogram blocks whose
                             pointers lead nowhere in the rings (their
                             zones are not recovered) */
  double span_ms;         /* from the first recovered event to the last */
  char arena[4096];       /* the arena's file */
} pp_salvage_result;

enum {
  PP_SALVAGE_DONE = 1,      /* salvaged: the trace is finished */
  PP_SALVAGE_NOTHING = 0,   /* nothing to do (msg says why): the trace is
                               finished, names no arena, or its process
                               still runs */
  PP_SALVAGE_ERROR = -1,    /* msg says why; the trace is as it was */
  PP_SALVAGE_NOT_TRACE = -2 /* path cannot be read as a pipeprof trace
                               (msg says why): a reader will say so too */
};

/* Salvage the trace at path. how: the process's end for META
 * process.end ("signal SIGKILL", when the caller saw it die), NULL when
 * unknown. Returns a PP_SALVAGE_* with a one-line message in msg. */
int pp_salvage(const char *path, const char *how, pp_salvage_result *r,
               char *msg, size_t n);

/* Salvage from an arena file directly (pipeprof recover ARENA): the trace
 * is the one the arena names. */
int pp_salvage_arena(const char *arena, const char *how, pp_salvage_result *r,
                     char *msg, size_t n);

#endif /* PP_SALVAGE_SALVAGE_H */
