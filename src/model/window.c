/* SPDX-License-Identifier: MIT */
/*
 * The window of a trace's stored events: a read (or a merge of reads)
 * that may not store every event keeps every event before a cut time, on
 * every thread, so that what is stored is a complete stretch of the
 * trace. The reader moves the cut as events come; the merge applies the
 * earlier cut of two traces.
 */
#include <stdlib.h>

#include "model/model.h"

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Drop every stored event at or after cut, on every thread, keeping the
 * others in their order. A thread's events are in recording order, which
 * is time order unless its clock stepped back: so every event is looked
 * at, not only a suffix (a crafted trace whose last event is 1 s early
 * made a suffix-only drop drop nothing, and the cut crawl back 1 ns a
 * pass: hours). Returns how many were dropped. */
static uint64_t drop_from(pp_trace *t, int64_t cut) {
  uint64_t dropped = 0;
  for (size_t i = 0; i < t->nthreads; i++) {
    pp_thread *th = &t->threads[i];
    size_t k = 0;
    for (size_t j = 0; j < th->nev; j++) {
      int64_t ts = th->ev[j].ts;
      if (ts < cut) {
        th->ev[k++] = th->ev[j];
        continue;
      }
      if (ts < t->diag.first_unkept_ns)
        t->diag.first_unkept_ns = ts;
      dropped++;
    }
    th->nev = k;
  }
  t->diag.events_kept -= dropped;
  return dropped;
}

/* More events are stored than keep allows: move the cut (*cut, set when
 * *cut_set) earlier, to the time below which about three quarters of the
 * stored events lie, and drop every thread's stored events at or after
 * it. What stays is every event before the cut, on every thread: a window
 * of the trace, complete. */
void pp__trace_lower_cut(pp_trace *t, uint64_t keep, int64_t *cut_at,
                         int *cut_set) {
  enum { SAMPLES = 4096 };
  int64_t sample[SAMPLES];
  while (t->diag.events_kept > keep) {
    uint64_t stride = t->diag.events_kept / SAMPLES + 1;
    size_t n = 0;
    for (size_t i = 0; i < t->nthreads; i++)
      for (size_t j = 0; j < t->threads[i].nev && n < SAMPLES; j += stride)
        sample[n++] = t->threads[i].ev[j].ts;
    qsort(sample, n, sizeof *sample, cmp_i64);
    int64_t cut = n ? sample[n * 3 / 4] : INT64_MIN;
    if (*cut_set && cut >= *cut_at)
      cut = *cut_at == INT64_MIN ? INT64_MIN : *cut_at - 1;
    *cut_at = cut;
    *cut_set = 1;
    /* the sampled events at or past the cut go at least; should none
     * (no event left to sample), nothing is kept */
    if (!drop_from(t, cut)) {
      *cut_at = INT64_MIN;
      drop_from(t, INT64_MIN);
      t->diag.events_kept = 0;
      break;
    }
  }
}

void pp__trace_window(pp_trace *t, int64_t cut, uint64_t keep) {
  int set = cut != INT64_MAX;
  if (set)
    drop_from(t, cut);
  pp__trace_lower_cut(t, keep, &cut, &set);
}
