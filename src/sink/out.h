/* SPDX-License-Identifier: MIT */
/*
 * A .pptrace file being written by the library: the file header, chunks
 * gathered in a stage and handed to the kernel with one write() per
 * writer pass, and what happens when a write fails (disk full, EFBIG,
 * EIO). The session's file and each flight dump are one pp__out each.
 *
 * Invariants: good_off is the offset up to which every chunk in the file
 * is whole; events_flushed counts the events of EVENTS chunks below
 * good_off; events_in counts every event handed over with a chunk, so
 * events_in - events_flushed were lost or are still staged. After the
 * first failed write nothing more is written to the file except the META
 * chunk that records the failure (pp__out_record_loss).
 *
 * Not thread-safe: the writer thread (or a flight dump under the writer's
 * lock) owns it.
 */
#ifndef PP_SINK_OUT_H
#define PP_SINK_OUT_H

#include <stdint.h>

#include "../format/pptrace.h"

typedef struct pp__out {
  int fd;           /* -1: closed or never opened */
  const char *path; /* for messages; the caller's, must outlive the out */
  uint32_t seq;     /* next chunk's sequence number */
  ppt_buf stage;    /* whole chunks not yet written */
  uint64_t stage_events;
  uint64_t good_off;
  uint64_t events_in, events_flushed;
  int failed; /* a write failed: chunks are dropped (and their events lost) */
  int err;    /* errno of the first failure; 0: none */
  int quiet;  /* a flight dump: its caller reports a failure, no stderr line
                 and no loss META */
  int count_lost; /* the loss META counts lost events (trace mode; stats
                     mode keeps its figures in memory until the end) */
  int memory;     /* no file (fd -1): chunks stay in the stage, for the
                     owner to copy (a flight recorder's head, ring/arena.h) */
} pp__out;

/* Open path for writing a trace, safely in a shared folder: created when
 * absent; never through a symbolic link (O_NOFOLLOW), never blocked by a
 * FIFO (O_NONBLOCK, then refused: only a regular file, or a character
 * device such as /dev/null); an existing regular file only when it is
 * this user's and has no other hard link (emptied when truncate). The
 * descriptor, or -1 with errno set and one line in why. */
int pp__out_create(const char *path, int truncate, char *why, size_t n);
/* Create path (pp__out_create, emptying it) and write the file header
 * with pid. 0, or -1 with errno set and the reason in why; o is then
 * closed. */
int pp__out_open(pp__out *o, const char *path, uint32_t pid, char *why,
                 size_t n);
/* Append to the existing .pptrace fd (a salvager, src/salvage/): the
 * file is cut back to off, where its chunks were whole, and the next
 * chunk is number seq. 0, or -1 with errno set (fd is not closed then). */
int pp__out_attach(pp__out *o, int fd, const char *path, uint64_t off,
                   uint32_t seq);
/* Append chunk type with payload b (emptied; a payload whose building ran
 * out of memory is dropped) to the stage; events: the events in it (EVENTS
 * chunks). The stage is written when it passes 1 MiB. */
void pp__out_chunk(pp__out *o, uint16_t type, ppt_buf *b, uint64_t events);
/* Write the stage (end of a writer pass). */
void pp__out_flush(pp__out *o);
/* At the end of a session whose write failed: cut the file back to its
 * last whole chunk and try once more to record the failure with the
 * final count of lost events (the space may be back). Then chunks can be
 * written again. No-op when nothing failed. */
void pp__out_retry_after_failure(pp__out *o);
/* Flush, cut a partial chunk after a failure, close. 0, or -1 when a write
 * failed at any time. */
int pp__out_close(pp__out *o);
/* Free the stage (after close; the fd is not touched). */
void pp__out_free(pp__out *o);

#endif /* PP_SINK_OUT_H */
