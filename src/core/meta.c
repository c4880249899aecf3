/* SPDX-License-Identifier: MIT */
/*
 * Metadata waiting for the writer (meta.h).
 */
#include "meta.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "../format/records.h"
#include "../internal.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ppt_buf pending; /* key/value pairs */
static uint64_t count;
static _Atomic int open_;

void pp__meta_open(int open) { atomic_store(&open_, open); }

int pp__session_meta(const char *key, const char *value) {
  if (!atomic_load(&open_) || !key || !value)
    return -1;
  pthread_mutex_lock(&lock);
  ppt_meta kv = {ppt_str_of(key), ppt_str_of(value)};
  ppt_meta_put(&pending, &kv);
  count++;
  int rc = pending.oom ? -1 : 0;
  pthread_mutex_unlock(&lock);
  return rc;
}

uint64_t pp__meta_take(ppt_buf *out) {
  pthread_mutex_lock(&lock);
  uint64_t n = pending.oom ? 0 : count;
  if (n) {
    ppt_count_put_n(out, n);
    ppt_buf_bytes(out, pending.data, pending.len);
  }
  pending.len = 0;
  pending.oom = 0;
  count = 0;
  pthread_mutex_unlock(&lock);
  return n;
}

typedef struct waiting {
  uint16_t type;
  ppt_buf b;
} waiting;
static waiting *chunks; /* under lock */
static size_t nchunks, cap_chunks;

int pp__session_chunk(uint16_t type, const unsigned char *p, size_t n) {
  if (!atomic_load(&open_) || (!p && n) || n > PPT_MAX_PAYLOAD)
    return -1;
  pthread_mutex_lock(&lock);
  int rc = -1;
  if (!pp__grow((void **)&chunks, &cap_chunks, nchunks + 1, sizeof *chunks)) {
    waiting *w = &chunks[nchunks];
    memset(w, 0, sizeof *w);
    w->type = type;
    ppt_buf_bytes(&w->b, p, n);
    if (w->b.oom) {
      ppt_buf_free(&w->b);
    } else {
      nchunks++;
      rc = 0;
    }
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

void pp__chunks_take(void (*put)(void *ctx, uint16_t type, ppt_buf *b),
                     void *ctx) {
  pthread_mutex_lock(&lock);
  waiting *w = chunks;
  size_t n = nchunks;
  chunks = NULL;
  nchunks = cap_chunks = 0;
  pthread_mutex_unlock(&lock);
  for (size_t i = 0; i < n; i++)
    put(ctx, w[i].type, &w[i].b);
  pp__free(w);
}

void pp__meta_after_fork(void) {
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  memcpy(&lock, &fresh, sizeof fresh);
  pending.len = 0;
  pending.oom = 0;
  count = 0;
  chunks = NULL; /* the parent's: left to it */
  nchunks = cap_chunks = 0;
  atomic_store(&open_, 0);
}
