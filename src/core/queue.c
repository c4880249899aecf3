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

/* At most QUEUE_MAX queues, as the run-time names (recorder.c): a
 * program declaring more (a name per item, say) gets one shared handle,
 * the queue "(queues past 65536)", so that its events are still counted
 * and the limit is said by the name the report shows. Found by name in
 * a hash table (a list made 100,000 declarations take 41 s). */
#define QUEUE_MAX 65536u
#define QUEUE_SLOTS (QUEUE_MAX * 2u)

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pp_queue *queue_head;      /* guarded by queue_lock */
static pp_queue **queue_tab;      /* QUEUE_SLOTS, open addressing */
static unsigned queue_count;      /* guarded by queue_lock */
static pp_queue *queue_overflow;  /* the shared handle past QUEUE_MAX */

static uint32_t queue_slot(const char *name) {
  uint64_t h = 1469598103934665603ULL;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    h = (h ^ *p) * 1099511628211ULL;
  return (uint32_t)(h ^ (h >> 32)) & (QUEUE_SLOTS - 1);
}

static pp_queue *queue_new(const char *name, const char *from, const char *to,
                           int64_t capacity) {
  size_t nl = strlen(name), fl = strlen(from), tl = strlen(to);
  pp_queue *q = pp__calloc(1, sizeof *q + nl + fl + tl + 3);
  if (!q)
    return NULL;
  char *p = q->text;
  memcpy(p, name, nl + 1);
  memcpy(p + nl + 1, from, fl + 1);
  memcpy(p + nl + fl + 2, to, tl + 1);
  /* The capacity travels as the site's line (docs/formats/pptrace.md):
   * 0 unbounded, at most 2^32 - 1. */
  uint32_t cap = capacity <= 0                   ? 0
                 : capacity > (int64_t)UINT32_MAX ? UINT32_MAX
                                                  : (uint32_t)capacity;
  q->loc = (pp_srcloc){p, p + nl + 1, p + nl + fl + 2, cap, PP_KIND_QUEUE};
  atomic_init(&q->depth, 0);
  q->next = queue_head;
  queue_head = q;
  return q;
}

pp_queue *pp_queue_declare(const char *name, const char *from_stage,
                           const char *to_stage, int64_t capacity) {
  if (!name)
    return NULL;
  const char *from = from_stage ? from_stage : "";
  const char *to = to_stage ? to_stage : "";
  pthread_mutex_lock(&queue_lock);
  pp_queue *q = NULL;
  if (!queue_tab)
    queue_tab = pp__calloc(QUEUE_SLOTS, sizeof *queue_tab);
  uint32_t i = queue_slot(name);
  while (queue_tab && queue_tab[i] && strcmp(queue_tab[i]->loc.name, name))
    i = (i + 1) & (QUEUE_SLOTS - 1);
  if (queue_tab && queue_tab[i]) {
    q = queue_tab[i];
  } else if (queue_tab && queue_count < QUEUE_MAX) {
    if ((q = queue_new(name, from, to, capacity)) != NULL) {
      queue_tab[i] = q;
      queue_count++;
    }
  } else { /* past the limit, or no memory for the table */
    if (!queue_overflow)
      queue_overflow = queue_new("(queues past 65536)", "", "", 0);
    q = queue_overflow;
  }
  pthread_mutex_unlock(&queue_lock);
  return q;
}

void pp__queue_after_fork_child(void) {
  /* Another thread may have held the lock at fork; handles stay valid. */
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  memcpy(&queue_lock, &fresh, sizeof fresh);
}
