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

#endif /* PP_CORE_META_H */
