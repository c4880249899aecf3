/* SPDX-License-Identifier: MIT */
/*
 * The results document's "overhead" facts: what profiling cost, from the
 * figures of pp_profile_overhead (a session) and pp_run_overhead_get (a
 * `pipeprof run`). The figures a reader looks at are shown facts, each
 * with its parts in a note; the parts are JSON-only facts, so the summary
 * keeps every member it always had (docs/formats/summary-json.md
 * "overhead").
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "internal.h"
#include "analyze/run_tree.h"
#include "results/doc.h"

/* "13 events x 20.0 ns, of them 4 Python zone events x 310 ns more": the
 * events behind an estimate, the binding's at its layer's cost on top. */
static void events_note(char *b, size_t len, const pp_profile *p,
                        uint64_t events) {
  char c[32], d[32];
  int n = snprintf(b, len, "%" PRIu64 " events x %s", events,
                   pp_format_ns(c, sizeof c, p->event_cost_ns));
  if (n < 0 || (size_t)n >= len || !p->python_events || !events)
    return;
  snprintf(b + n, len - (size_t)n,
           ", of them %" PRIu64 " Python zone events x %s more",
           p->python_events < events ? p->python_events : events,
           pp_format_ns(d, sizeof d, p->python_overhead_ns));
}

/* The estimate of the session's recording, shown or (in a run, where the
 * run's figures are the overhead) JSON-only. */
static void estimate(pp_table *t, const pp_analysis *a, const pp_overhead *o,
                     int shown) {
  const pp_profile *p = &a->prof;
  long r = pp_fact_num(t, "event_cost_ns", "cost of an event",
                       p->event_cost_ns, PP_VALUE_NS);
  pp_fact_json_only(t, r);
  r = pp_fact_int(t, "python_events", "Python zone events",
                  (int64_t)p->python_events, PP_VALUE_COUNT);
  pp_fact_json_only(t, r);
  r = pp_fact_num(t, "python_event_overhead_ns", "cost of a Python event",
                  p->python_events ? p->python_overhead_ns : NAN,
                  PP_VALUE_NS);
  pp_fact_json_only(t, r);
  r = pp_fact_num(t, "events_estimated_ns", "events, estimated", o->events_ns,
                  PP_VALUE_NS);
  pp_fact_json_only(t, r);
  r = pp_fact_int(t, "dropped_events", "dropped events", (int64_t)p->dropped,
                  PP_VALUE_COUNT);
  pp_fact_json_only(t, r);
  r = pp_fact_num(t, "dropped_estimated_ns", "dropped events, estimated",
                  o->dropped_ns >= 0 ? o->dropped_ns : NAN, PP_VALUE_NS);
  pp_fact_json_only(t, r);

  char note[256], c[32];
  events_note(note, sizeof note, p, p->events);
  size_t n = strlen(note);
  if (o->dropped_ns > 0)
    snprintf(note + n, sizeof note - n, " + %" PRIu64 " dropped x %s",
             p->dropped,
             pp_format_ns(c, sizeof c, o->dropped_ns / (double)p->dropped));
  else if (o->dropped_ns < 0)
    snprintf(note + n, sizeof note - n,
             "; %" PRIu64 " dropped not counted: drop cost not recorded",
             p->dropped);
  r = pp_fact_num(t, "estimated_ns", "recording (estimated)", o->recording_ns,
                  PP_VALUE_NS);
  if (shown)
    pp_row_note(t, r, "%s", note);
  else
    pp_fact_json_only(t, r);
  r = pp_fact_num(t, "estimated_pct", "recording / busy thread time",
                  o->busy_ns > 0 ? o->recording_ns / o->busy_ns * 100.0 : NAN,
                  PP_VALUE_PCT);
  if (!shown)
    pp_fact_json_only(t, r);
}

/* The writer and sampler threads' measured CPU, over the process's. */
static void measured(pp_table *t, const pp_analysis *a, const pp_overhead *o) {
  const pp_profile *p = &a->prof;
  char c[32];
  long r = pp_fact_num(t, "total_ns", "total", o->total_ns, PP_VALUE_NS);
  pp_row_note(t, r, "%s",
              p->sampler_cpu_ns >= 0
                  ? "writer and sampler threads measured, recording estimated"
                  : "writer thread measured, recording estimated");
  if (p->process_cpu_ns > 0) {
    r = pp_fact_num(t, "total_pct_of_process_cpu", "share of the process's CPU",
                    o->total_ns / (double)p->process_cpu_ns * 100.0,
                    PP_VALUE_PCT);
    pp_row_note(t, r, "of %s",
                pp_format_ns(c, sizeof c, (double)p->process_cpu_ns));
  } else {
    pp_fact_unavailable(t, "total_pct_of_process_cpu",
                        "share of the process's CPU",
                        "the process's CPU time was not recorded");
  }
  if (p->process_cpu_ns >= 0)
    pp_fact_json_only(t, pp_fact_int(t, "process_cpu_ns", "process CPU",
                                     p->process_cpu_ns, PP_VALUE_NS));
  pp_fact_int(t, "writer_cpu_ns", "writer thread (measured)", p->writer_cpu_ns,
              PP_VALUE_NS);
  if (p->sampler_cpu_ns >= 0)
    pp_fact_int(t, "sampler_cpu_ns", "sampler thread (measured)",
                p->sampler_cpu_ns, PP_VALUE_NS);
}

/* A `pipeprof run`: pipeprof's own CPU over the profiled programs', and
 * what the programs spent recording when they link libpipeprof. */
static void run(pp_table *t, const pp_analysis *a, const pp_run_tree *rt) {
  pp_run_overhead o;
  pp_run_overhead_get(a, rt, &o);
  int share = o.state == PP_RUN_OH_SHARE;
  const char *why = o.why[0] ? o.why : "the programs' CPU time is unknown";
  char b[32], c[32], note[320];
  long r;
  if (o.app_known) {
    r = share ? pp_fact_num(t, "run_total_pct_of_tree_cpu",
                            "share of the programs' CPU", o.total_pct,
                            PP_VALUE_PCT)
              : pp_fact_unavailable(t, "run_total_pct_of_tree_cpu",
                                    "share of the programs' CPU", why);
    if (share)
      pp_row_note(t, r, "pipeprof's own CPU and the recording inside the "
                        "programs, over the programs' CPU");
  }
  r = share ? pp_fact_num(t, "run_profiler_pct_of_tree_cpu",
                          o.app_known ? "pipeprof's own share"
                                      : "share of the programs' CPU",
                          o.pct, PP_VALUE_PCT)
            : pp_fact_unavailable(t, "run_profiler_pct_of_tree_cpu",
                                  o.app_known ? "pipeprof's own share"
                                              : "share of the programs' CPU",
                                  why);
  if (!o.app_known && share)
    pp_row_note(t, r, "pipeprof's own CPU over the programs' CPU");
  if (!share)
    pp_fact_json_only(t, pp_fact_text(t, "run_pct_unavailable", "why", why));
  pp_fact_num(t, "run_profiler_cpu_ns", "pipeprof's own CPU", o.profiler_ns,
              PP_VALUE_NS);
  r = pp_fact_num(t, "run_tree_cpu_ns", "the programs' CPU",
                  o.tree_src ? o.tree_ns : NAN, PP_VALUE_NS);
  if (o.tree_src)
    pp_row_note(t, r, "%s",
                strcmp(o.tree_src, "rusage") == 0 ? "rusage of the run"
                                                  : "sampled from /proc");
  pp_fact_json_only(t, pp_fact_text(t, "run_tree_cpu_source", "source",
                                    o.tree_src));
  if (o.app_known) {
    pp_fact_json_only(t, pp_fact_int(t, "run_program_events",
                                     "the programs' events",
                                     (int64_t)o.app_events, PP_VALUE_COUNT));
    events_note(note, sizeof note, &a->prof, o.app_events);
    r = pp_fact_num(t, "run_in_program_ns", "inside the programs",
                    o.app_in_ns, PP_VALUE_NS);
    if (o.app_writer_ns >= 0)
      pp_row_note(t, r, "recording %s, estimated: %s; writer thread %s, "
                        "measured",
                  pp_format_ns(b, sizeof b, o.app_recording_ns), note,
                  pp_format_ns(c, sizeof c, o.app_writer_ns));
    else
      pp_row_note(t, r, "recording, estimated: %s", note);
  } else if (o.has_app) {
    pp_fact_unavailable(t, "run_in_program_ns", "inside the programs",
                        "event cost not recorded");
  }
}

int pp__overhead_facts(const pp_analysis *a, const pp_run_tree *rt,
                       pp_doc *d) {
  pp_overhead o;
  pp_profile_overhead(a, &o);
  int is_run = rt->is_run && isfinite(rt->profiler_cpu_s);
  pp_table *t = pp_doc_facts(d, "overhead",
                             is_run || o.total_ns >= 0 || !o.known
                                 ? "profiler overhead"
                                 : "profiler overhead (estimated)",
                             NULL);
  const char *source = pp_trace_meta(a->trace, "import.source");
  char why[200];
  if (source)
    snprintf(why, sizeof why,
             "imported from %s, whose profile records no cost of its own",
             source);
  else
    snprintf(why, sizeof why, "event cost not recorded");
  if (!o.known && !is_run) {
    pp_table_unavailable(t, why); /* nothing to say but why */
  } else if (is_run) {
    run(t, a, rt);
    if (o.known)
      estimate(t, a, &o, 0);
    else
      pp_fact_json_only(t, pp_fact_text(t, "unavailable", "session", why));
  } else {
    if (o.total_ns >= 0)
      measured(t, a, &o);
    estimate(t, a, &o, 1);
  }
  return pp_doc_ok(d) ? 0 : -1;
}
