/* SPDX-License-Identifier: MIT */
/*
 * Queue declarations (pp_queue_declare): a process-wide registry of queue
 * handles, looked up by name so that declaring a queue twice returns the
 * same handle. Handles live until exit (events in rings and traces point
 * at their sites). The recording calls (pp_queue_push, ...) are on the hot
 * path in recorder.c.
 */
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include "../internal.h"
#include "recorder.h"

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pp_queue *queue_head; /* guarded by queue_lock */

pp_queue *pp_queue_declare(const char *name, const char *from_stage,
                           const char *to_stage, int64_t capacity) {
  if (!name)
    return NULL;
  const char *from = from_stage ? from_stage : "";
  const char *to = to_stage ? to_stage : "";
  pthread_mutex_lock(&queue_lock);
  pp_queue *q = queue_head;
  while (q && strcmp(q->loc.name, name) != 0)
    q = q->next;
  if (!q) {
    size_t nl = strlen(name), fl = strlen(from), tl = strlen(to);
    q = pp__calloc(1, sizeof *q + nl + fl + tl + 3);
    if (q) {
      char *p = q->text;
      memcpy(p, name, nl + 1);
      memcpy(p + nl + 1, from, fl + 1);
      memcpy(p + nl + fl + 2, to, tl + 1);
      /* The capacity travels as the site's line (docs/formats/pptrace.md):
       * 0 unbounded, at most 2^32 - 1. */
      uint32_t cap = capacity <= 0 ? 0
                     : capacity > (int64_t)UINT32_MAX ? UINT32_MAX
                                                      : (uint32_t)capacity;
      q->loc = (pp_srcloc){p, p + nl + 1, p + nl + fl + 2, cap,
                           PP_KIND_QUEUE};
      atomic_init(&q->depth, 0);
      q->next = queue_head;
      queue_head = q;
    }
  }
  pthread_mutex_unlock(&queue_lock);
  return q;
}

void pp__queue_after_fork_child(void) {
  /* Another thread may have held the lock at fork; handles stay valid. */
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  memcpy(&queue_lock, &fresh, sizeof fresh);
}
