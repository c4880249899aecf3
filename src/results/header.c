/* SPDX-License-Identifier: MIT */
/*
 * The "header" facts (header.h).
 */
#include "header.h"

#include <inttypes.h>
#include <stdio.h>

#include "../units.h"

pp_table *pp_results_header(pp_doc *d, const pp_header_figures *f) {
  pp_table *t = pp_doc_facts(d, "header", "", NULL);
  if (!t)
    return NULL;
  pp_facts_flush(t);
  long r;
  char b[64];
  if (f->command) {
    r = pp_fact_text(t, "command", "command", f->command);
    if (f->has_pid) {
      pp_row_note(t, r, "pid %" PRIu32, f->pid);
      pp_fact_json_only(t, pp_fact_int(t, "pid", "pid", f->pid,
                                       PP_VALUE_COUNT));
    }
  } else {
    r = pp_fact_text(t, "process", "process",
                     f->process_name && f->process_name[0] ? f->process_name
                                                            : "(unknown)");
    if (f->process_pid && f->process_pid[0])
      pp_row_note(t, r, "pid %s", f->process_pid);
  }
  /* pipeprof as the profiler of a `pipeprof run` */
  if (f->command || f->has_profiler_pid) {
    r = pp_fact_text(t, "profiler", "profiler", "pipeprof");
    if (f->has_profiler_pid) {
      pp_row_note(t, r, "pid %" PRIu32 ", not part of the profiled "
                        "programs: its threads are left out of the tables "
                        "below",
                  f->profiler_pid);
      pp_fact_json_only(t, pp_fact_int(t, "profiler_pid", "profiler pid",
                                       f->profiler_pid, PP_VALUE_COUNT));
    } else {
      pp_row_note(t, r, "pid not recorded: a trace of an older pipeprof, "
                        "whose threads may be in the tables below");
    }
  }
  if (f->command) {
    if (f->tree_procs) {
      r = pp_fact_int(t, "processes_seen", "processes seen",
                      (int64_t)f->tree_procs, PP_VALUE_COUNT);
      pp_row_note(t, r, "in the process tree: \"processes of the tree\" "
                        "below");
    } else if (f->tree_why) {
      pp_fact_unavailable(t, "processes_seen", "processes seen",
                          f->tree_why);
    } else {
      pp_fact_text(t, "processes_seen", "processes seen", "not sampled");
    }
  }
  pp_fact_text(t, "mode", "mode", f->mode && f->mode[0] ? f->mode : "unknown");
  if (f->imported_from)
    pp_fact_text(t, "imported_from", "imported from", f->imported_from);
  for (size_t i = 0; i < f->nmerged; i++) {
    char key[32];
    snprintf(key, sizeof key, "merged_%zu", i + 1);
    r = pp_fact_text(t, key, "merged with", f->merged[i].file);
    pp_row_note(t, r, "%s, aligned by %s",
                f->merged[i].source ? f->merged[i].source : "",
                f->merged[i].aligned_by ? f->merged[i].aligned_by : "");
  }
  if (f->provider_transitions >= 0) {
    r = pp_fact_int(t, "provider_transitions", "providers",
                    f->provider_transitions, PP_VALUE_COUNT);
    pp_row_note(t, r,
                "transitions between execution providers; %" PRId64
                " copies (Memcpy nodes) taking %s",
                f->provider_copies > 0 ? f->provider_copies : 0,
                pp_format_ns(b, sizeof b,
                             (double)(f->provider_copy_ns > 0
                                          ? f->provider_copy_ns
                                          : 0)));
  }
  r = pp_fact_num(t, "wall_ns", "wall time", f->wall_ns, PP_VALUE_NS);
  pp_row_note(t, r, "first to last recorded event: the zones' %%wall "
                    "window");
  if (f->threads_known) {
    r = pp_fact_int(t, "threads", "threads", (int64_t)f->threads,
                    PP_VALUE_COUNT);
    if (f->command)
      pp_row_note(t, r, "recorded zones or counters: threads of the "
                        "profiled programs that link libpipeprof");
  }
  if (f->processes_label) {
    r = pp_fact_int(t, "processes", f->processes_label,
                    (int64_t)f->processes, PP_VALUE_COUNT);
    if (f->processes_list)
      pp_row_note(t, r, "%s", f->processes_list);
  }
  if (f->events_known)
    pp_fact_int(t, "events", "events", (int64_t)f->events, PP_VALUE_COUNT);
  else
    pp_fact_unavailable(t, "events", "events",
                        f->events_why ? f->events_why : "not counted");
  pp_fact_int(t, "dropped_events", "dropped events", (int64_t)f->dropped,
              PP_VALUE_COUNT);
  return pp_doc_ok(d) ? t : NULL;
}
