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

/* Drop every stored event at or after cut, on every thread (from the end
 * of each: they are in recording order). */
static void drop_from(pp_trace *t, int64_t cut) {
  for (size_t i = 0; i < t->nthreads; i++) {
    pp_thread *th = &t->threads[i];
    while (th->nev > 0 && th->ev[th->nev - 1].ts >= cut) {
      int64_t ts = th->ev[--th->nev].ts;
      if (ts < t->diag.first_unkept_ns)
        t->diag.first_unkept_ns = ts;
      t->diag.events_kept--;
    }
  }
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
    drop_from(t, cut);
  }
}

void pp__trace_window(pp_trace *t, int64_t cut, uint64_t keep) {
  int set = cut != INT64_MAX;
  if (set)
    drop_from(t, cut);
  pp__trace_lower_cut(t, keep, &cut, &set);
}
