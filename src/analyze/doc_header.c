/* SPDX-License-Identifier: MIT */
/*
 * The results document's "header" (results/header.h) from an analysed
 * trace: what was profiled and how, and what makes its figures doubtful
 * (events dropped, a damaged or truncated file, events out of time
 * order, a write error) as the table's warnings, with what a reader must
 * know (the details' window, threads flight mode released) as remarks.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "internal.h"
#include "analyze/run_tree.h"
#include "results/header.h"

#define MERGED_MAX 16
#define LISTED_PIDS 8

/* "4242 synthetic, 4243 worker, ..." of the first LISTED_PIDS pids. */
static void pid_list(char *b, size_t len, const pp_trace *t,
                     const uint32_t *pids, size_t n) {
  size_t at = 0;
  b[0] = '\0';
  for (size_t i = 0; i < n && i < LISTED_PIDS && at < len; i++) {
    const char *pn = pp_trace_process_name(t, pids[i]);
    const char *end = pp__process_end(t, pids[i]);
    int k = snprintf(b + at, len - at, "%s%" PRIu32 " %s%s%s%s",
                     i ? ", " : "", pids[i], pn && pn[0] ? pn : "(unknown)",
                     end ? " (" : "", end ? end : "", end ? ")" : "");
    if (k < 0)
      break;
    at += (size_t)k;
  }
  if (n > LISTED_PIDS && at < len)
    snprintf(b + at, len - at, ", ...");
}

/* META process.<key> of the process whose keys end in suffix ("" for
 * the trace's own process, ".PID" for another of a merged run). */
static const char *process_meta(const pp_trace *t, const char *key,
                                const char *suffix) {
  char k[96];
  snprintf(k, sizeof k, "process.%s%s", key, suffix);
  return pp_trace_meta(t, k);
}

/* Processes whose traces a salvager finished (src/salvage/): what it
 * recovered, said once per process, the first PP__SALVAGE_LISTED. */
#define PP__SALVAGE_LISTED 8
static void salvage_remarks(pp_table *h, const pp_trace *t) {
  static const char key[] = "process.salvaged_events";
  size_t listed = 0, more = 0;
  for (size_t i = 0; i < t->nmeta; i++) {
    const pp_meta *m = &t->meta[i];
    if (!m->key || strncmp(m->key, key, sizeof key - 1) != 0 || !m->value)
      continue;
    const char *suffix = m->key + sizeof key - 1;
    if (*suffix && *suffix != '.')
      continue;
    if (listed == PP__SALVAGE_LISTED) {
      more++;
      continue;
    }
    listed++;
    const char *how = process_meta(t, "end", suffix);
    const char *threads = process_meta(t, "salvaged_threads", suffix);
    const char *span = process_meta(t, "salvaged_span_ms", suffix);
    const char *unnamed = process_meta(t, "salvaged_unnamed_sites", suffix);
    char pid[24];
    snprintf(pid, sizeof pid, "%" PRIu32, t->pid);
    const char *unreadable =
        process_meta(t, "salvage_unreadable", suffix);
    char tail[256] = "";
    if (unnamed && strcmp(unnamed, "0"))
      snprintf(tail, sizeof tail,
               " (%.20s site%s first met after the writer's last pass ha%s "
               "no name%s)",
               unnamed, strcmp(unnamed, "1") ? "s" : "",
               strcmp(unnamed, "1") ? "ve" : "s",
               strcmp(unnamed, "1") ? "s" : "");
    if (unreadable && strcmp(unreadable, "0"))
      snprintf(tail + strlen(tail), sizeof tail - strlen(tail),
               "; %.20s pieces of its tallies could not be read: their zones "
               "are not in the figures",
               unreadable);
    pp_table_remark(h,
                    "process %.20s ended before finishing its trace "
                    "(%.80s): %.20s events of %.20s thread%s, spanning the "
                    "last %.20s ms it recorded, were recovered from its "
                    "durable rings%s",
                    *suffix ? suffix + 1 : pid, how ? how : "salvaged",
                    m->value, threads ? threads : "?",
                    threads && !strcmp(threads, "1") ? "" : "s",
                    span ? span : "?", tail);
  }
  if (more)
    pp_table_remark(h, "%zu more processes were salvaged", more);
}

/* The warnings and remarks of the trace the figures come from. */
static void trace_warnings(pp_table *h, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  const pp_profile *p = &a->prof;
  /* an imported profile's events whose times could not be taken */
  const char *bad_times = pp_trace_meta(t, "import.bad_times");
  if (bad_times && strcmp(bad_times, "0") != 0)
    pp_table_warning(h,
                     "%.20s events of the imported profile were left out: "
                     "a time or duration that is not a number, negative "
                     "or past the range of int64 ns",
                     bad_times);
  const char *smaller = pp_trace_meta(t, "rings_smaller");
  const char *budget = pp_trace_meta(t, "rings_budget_mib");
  if (smaller && smaller[0])
    pp_table_remark(h,
                    "%.20s threads got rings smaller than the default: the "
                    "rings of all threads together stay within %.20s MiB "
                    "(PIPEPROF_BUFFER_KIB sets every ring's size instead)",
                    smaller, budget ? budget : "?");
  const char *released = pp_trace_meta(t, "flight_threads_released");
  if (released && released[0])
    pp_table_remark(h,
                    "the events of %.20s exited threads are not in this "
                    "dump (flight mode keeps the rings of the threads that "
                    "exited last)",
                    released);
  if (p->dropped) {
    /* the threads that dropped, as many as fit, then how many more (the
     * threads table has each): never cut short unsaid */
    char list[400] = "";
    size_t at = 0, more = 0;
    for (size_t i = 0; i < t->nthreads; i++) {
      const pp_thread *th = &t->threads[i];
      if (!th->dropped)
        continue;
      char one[128];
      int k = snprintf(one, sizeof one, "%s%.60s (tid %" PRIu64 ") %" PRIu64,
                       at ? ", " : "",
                       th->name && th->name[0] ? th->name : "thread", th->tid,
                       th->dropped);
      if (k < 0 || more || at + (size_t)k >= sizeof list - 64) {
        more++;
        continue;
      }
      memcpy(list + at, one, (size_t)k + 1);
      at += (size_t)k;
    }
    if (more)
      snprintf(list + at, sizeof list - at,
               ", and %zu more threads (the threads table has each)", more);
    pp_table_warning(h,
                     "%" PRIu64 " events were dropped (thread buffers "
                     "full); times and counts are incomplete: %s",
                     p->dropped, list);
  }
  const pp_read_diag *d = &t->diag;
  if (d->chunks_bad || d->bytes_skipped)
    pp_table_warning(h,
                     "trace damaged: %" PRIu64 " bad chunks, %" PRIu64
                     " bytes skipped (intact chunks were recovered)",
                     d->chunks_bad, d->bytes_skipped);
  if (d->events_bad)
    pp_table_warning(h, "%" PRIu64 " undecodable events ignored",
                     d->events_bad);
  if (d->truncated)
    pp_table_warning(h, "trace truncated inside a chunk");
  /* Figures come from every event; the details that need the events
   * themselves from those the reader stored (pp_cli_load). */
  int64_t window = pp_details_window_ns(a);
  if (window >= 0) {
    char win[32];
    pp_format_ns(win, sizeof win, (double)window);
    pp_table_remark(h,
                    "the statistics count all %" PRIu64 " events; the "
                    "details (timeline, zone instances, flows, stages; "
                    "requests, queues and pools count every event) cover "
                    "the first %s (%" PRIu64 " events, every thread; "
                    "--details N keeps more)",
                    d->events, win, d->events_kept);
  }
  /* The reorder buffer overflowed: figures of series spread over threads
   * took some events out of time order (they are counted, not lost). */
  if (a->events_late)
    pp_table_warning(h,
                     "%" PRIu64 " events reached the figures out of time "
                     "order (the reader's reorder buffer was full): frame "
                     "times and counters written from several threads may "
                     "be off by them",
                     a->events_late);
  /* A write failure the library recorded (disk full...): the events it
   * could not write, and why, instead of a guess about a killed process. */
  const char *werr = pp_trace_meta(t, "write_error");
  if (werr) {
    const char *lost = pp_trace_meta(t, "events_lost");
    if (lost)
      pp_table_warning(h, "%.40s events lost: %.300s", lost, werr);
    else
      pp_table_warning(h, "%.300s", werr);
  }
  if (d->file_bytes && !d->clean_end && !werr)
    pp_table_warning(h, "trace ended without END chunk (process killed?)");
  salvage_remarks(h, t);
  const char *fb = pp_trace_meta(t, "durable.fallbacks");
  if (fb) {
    const char *why = pp_trace_meta(t, "durable.fallback_why");
    pp_table_remark(h,
                    "%.20s of the rings' memory requests were served "
                    "outside the durable rings (%.160s): those threads "
                    "would lose what their writer had not written if the "
                    "process were killed",
                    fb, why && *why ? why : "no reason recorded");
  }
  if (d->parts_unfinished) {
    char pids[128] = "";
    size_t n = pp_unfinished_listed(d);
    for (size_t k = 0, len = 0; k < n && len < sizeof pids; k++)
      len += (size_t)snprintf(pids + len, sizeof pids - len, "%s%u",
                              k ? ", " : "", d->unfinished_pid[k]);
    pp_table_warning(h,
                     "%" PRIu64 " of the run's processes did not finish "
                     "their files (pid %s%s: killed, or ended with _exit): "
                     "what each recorded after the writer's last pass is "
                     "lost",
                     d->parts_unfinished, pids,
                     d->parts_unfinished > n ? ", ..." : "");
  }
}

int pp__header_facts(const pp_analysis *a, const pp_run_tree *rt,
                     pp_doc *d) {
  const pp_trace *t = a->trace;
  const pp_profile *p = &a->prof;
  pp_header_figures f = {.provider_transitions = -1};
  if (rt->is_run) {
    f.command = rt->command;
    f.has_pid = rt->has_pid;
    f.pid = rt->pid;
    f.has_profiler_pid = rt->has_profiler_pid;
    f.profiler_pid = rt->profiler_pid;
    f.tree_procs = rt->nprocs;
    f.tree_why = pp_trace_meta(t, "unavailable.proc_stat");
  } else {
    f.process_name = pp_trace_meta(t, "process_name");
    f.process_pid = pp_trace_meta(t, "pid");
  }
  char pidbuf[24];
  if (!rt->is_run && !(f.process_pid && f.process_pid[0]) && t->pid) {
    snprintf(pidbuf, sizeof pidbuf, "%" PRIu32, t->pid);
    f.process_pid = pidbuf;
  }
  f.mode = pp_trace_meta(t, "mode");
  f.imported_from = pp_trace_meta(t, "import.source");
  /* profiles merged in by wall clock (pipeprof report --with) */
  pp_header_merged merged[MERGED_MAX];
  for (unsigned k = 1; k <= MERGED_MAX; k++) {
    char key[48];
    snprintf(key, sizeof key, "with.%u.file", k);
    const char *file = pp_trace_meta(t, key);
    if (!file)
      break;
    pp_header_merged *m = &merged[f.nmerged++];
    m->file = file;
    snprintf(key, sizeof key, "with.%u.source", k);
    m->source = pp_trace_meta(t, key);
    snprintf(key, sizeof key, "with.%u.aligned_by", k);
    m->aligned_by = pp_trace_meta(t, key);
  }
  f.merged = merged;
  f.provider_transitions = p->provider_transitions;
  f.provider_copies = p->provider_copies;
  f.provider_copy_ns = p->provider_copy_ns;
  f.wall_ns = (double)p->wall_ns;
  f.threads_known = 1;
  for (size_t i = 0; i < t->nthreads; i++)
    f.threads += !pp_run_tree_is_profiler(t, rt, &t->threads[i]);
  uint32_t *pids = NULL;
  size_t shown = pp__run_pids(t, rt, &pids);
  char list[512];
  if (shown > 1 || (rt->is_run && shown == 1)) {
    /* merged from several processes (pipeprof run) */
    f.processes_label = rt->is_run ? "recorded by" : "processes";
    f.processes = shown;
    pid_list(list, sizeof list, t, pids, shown);
    f.processes_list = list;
  }
  f.events_known = 1;
  f.events = p->events;
  f.dropped = p->dropped;
  pp_table *h = pp_results_header(d, &f);
  pp__free(pids);
  if (!h)
    return -1;
  trace_warnings(h, a);
  return pp_doc_ok(d) ? 0 : -1;
}
