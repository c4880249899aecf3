/* SPDX-License-Identifier: MIT */
/*
 * Metadata waiting for the writer (meta.c): key/value pairs the sampler,
 * the GPU code and the session add at any time, taken by the writer as one
 * META chunk payload on its next pass. Below the session and the modules
 * it starts, which all add to it.
 */
#ifndef PP_CORE_META_H
#define PP_CORE_META_H

#include "../format/pptrace.h"

/* Add a key/value to the trace's metadata (copied). Control path: takes a
 * lock. Returns 0, or -1 when no session takes metadata or out of memory. */
int pp__session_meta(const char *key, const char *value);
/* Session start and stop: whether pp__session_meta is taken. */
void pp__meta_open(int open);
/* Writer: the pending pairs as a META payload appended to out (count, then
 * the pairs); returns how many (0: out untouched). Empties the queue. */
uint64_t pp__meta_take(ppt_buf *out);
/* In a forked child: a fresh lock, nothing pending. */
void pp__meta_after_fork(void);

/* A whole chunk for the trace (payload copied), written by the writer's
 * next pass: what a tool of the session made apart from the recording
 * (`pipeprof run`'s CPU stack samples, PPT_CHUNK_STACKS). Control path.
 * 0, or -1 when no session takes it, the payload is too large or out of
 * memory. */
int pp__session_chunk(uint16_t type, const unsigned char *p, size_t n);
/* Writer: hand each waiting chunk to put (which owns its buffer then),
 * in the order they came. */
void pp__chunks_take(void (*put)(void *ctx, uint16_t type, ppt_buf *b),
                     void *ctx);

#endif /* PP_CORE_META_H */
