/* SPDX-License-Identifier: MIT */
/*
 * The profiler's own cost, as the analysis estimates it (analyze.h:
 * pp_profile_overhead, pp_profile_events_cost).
 */
#include <string.h>

#include "analyze.h"
#include "internal.h"
#include "model/trace.h"

/* The profiler's own cost (issue 12). Measured where the library can
 * measure it: the writer's and the sampler's CPU time (META writer_cpu_ns,
 * sampler_cpu_ns). Estimated on the recording threads, whose CPU time
 * holds the program's work too: each recorded event at the cost the
 * session measured at start (META event_cost_ns) and each dropped event
 * (a begin that found its ring full) at the measured cost of a drop (META
 * drop_cost_ns). */
double pp_profile_events_cost(const pp_profile *p, uint64_t events) {
  uint64_t py = p->python_events < events ? p->python_events : events;
  return (double)events * p->event_cost_ns + (double)py * p->python_overhead_ns;
}

void pp_profile_overhead(const pp_analysis *a, pp_overhead *o) {
  const pp_trace *t = a->trace;
  const pp_profile *p = &a->prof;
  memset(o, 0, sizeof *o);
  o->total_ns = -1;
  if (!(p->event_cost_ns > 0))
    return;
  o->known = 1;
  o->events_ns = pp_profile_events_cost(p, p->events);
  if (p->dropped > 0) {
    double c;
    o->dropped_ns = pp_trace_meta_num(t, "drop_cost_ns", &c) && c > 0
                        ? (double)p->dropped * c
                        : -1;
  }
  o->recording_ns = o->events_ns + (o->dropped_ns > 0 ? o->dropped_ns : 0);
  for (size_t i = 0; i < a->nthreads; i++)
    o->busy_ns += (double)a->threads[i].busy_ns;
  if (p->writer_cpu_ns >= 0)
    o->total_ns = o->recording_ns + (double)p->writer_cpu_ns +
                  (p->sampler_cpu_ns > 0 ? (double)p->sampler_cpu_ns : 0);
}
