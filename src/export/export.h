/* SPDX-License-Identifier: MIT */
/*
 * Exporters and the text report: each renders an analysis (a pp_analysis
 * from pp_analyze, analyze/analysis.h, with the trace it was made from,
 * model/model.h) into one output format on a FILE*. Each exporter
 * declares its entry points in its own marked block below. Exporters
 * compute nothing and change neither; they return 0, or -1 when the
 * output could not be written, memory ran out, or a was not analysed.
 */
#ifndef PP_EXPORT_H
#define PP_EXPORT_H

#include <stddef.h>
#include <stdio.h>

#include "analyze/analysis.h"
#include "internal.h" /* pp_format_ns, pp__fmt_bytes */

struct pp_jsonw; /* src/export/jsonw.h */

/* ==== text report (src/export/report_text.c) ============================ */

/* Options of pp_report_text(); a zero-initialised struct means defaults. */
typedef struct pp_report_opts {
  int width_hint; /* terminal width in columns; 0: unknown. Only narrows
                     the zone name column (never below 12 columns). */
  int top_n;      /* bottlenecks listed; 0: 3; negative: none */
} pp_report_opts;

/* Print the human-readable report of an analysed trace: header (process,
 * mode, wall time, threads, events, dropped events, damage found by the
 * reader), zone table, top bottlenecks by self time, per-thread busy time,
 * frames, counters and an estimate of the profiler's own overhead. opts may
 * be NULL. Returns 0, or -1 when t was not analysed or writing failed. */
int pp_report_text(FILE *out, const pp_analysis *a, const pp_report_opts *opts);

/* 1 when a counter name is one the sampler records ("sys.", "proc.",
 * "perf.", "power.", "energy."): reported in the system sections, not in
 * the table of program counters. */
int pp_counter_is_sampled(const char *name);

/* ==== end of text report ================================================= */

/* ==== pipeline report (src/export/report_pipeline.c) ==================== */

/* Print the sections "queues" (per queue: capacity, items, throughput,
 * time-weighted depth, time full and empty, wait percentiles, recorded
 * producer and consumer waits) and "pipeline bottlenecks" (stages, the
 * bounding stage, efficiency, longest stalls, flow critical paths), each
 * starting with a blank line and printed only with data (docs/analysis.md).
 * Returns 0, or -1 when t was not analysed or writing failed. */
int pp_report_pipeline(FILE *out, const pp_analysis *a);
/* Print the "recommendations" section: each with its evidence and rule,
 * or "none: ..." when no rule fired. Returns 0 or -1 as above. */
int pp_report_advice(FILE *out, const pp_analysis *a);
/* Write the members "queues" (array), "pipeline" (object) and
 * "recommendations" (array) into the JSON object open in w
 * (docs/formats/summary-json.md). Returns 0, or -1 when w is in the error
 * state. */
int pp_summary_pipeline_json(struct pp_jsonw *w, const pp_analysis *a);
/* Write member k, h's coarse histogram (analyze/series.h pp_hist_coarse):
 * {"le_ns": [...], "counts": [...]} (schema_minor 13). */
void pp_summary_hist_json(struct pp_jsonw *w, const char *k, const pp_hist *h);

/* ==== end of pipeline report ============================================= */

/* ==== JSON and CSV exporters (src/export/{chrome,summary_json,csv}.c) == */

/* Chrome / Perfetto trace JSON (object form) of an analysed trace: zones as
 * X events, counters as C, marks and frame marks as instants, flows (v2
 * bind ids, v1 events as a fallback), process/thread names, and metadata
 * (version, t0 and wall-clock anchor, dropped events, reader diagnostics).
 * Opens in ui.perfetto.dev and chrome://tracing. Returns 0, or -1 when t
 * was not analysed, memory ran out or writing failed. */
int pp_export_chrome(FILE *out, const pp_analysis *a);

/* The same document written as a read streams the events by, in memory
 * bounded whatever the trace's length (docs/internals/streaming.md):
 *
 *   c = pp_chrome_stream_new(out);
 *   pp_read_opts o = {0, pp_chrome_stream_event, c, 1};  (scan_first: the
 *                         times are written relative to the earliest)
 *   read; pp_analyze; pp_chrome_stream_finish(c, &t); pp_chrome_stream_free(c);
 *
 * The events pass through a reorder buffer into the order of model/feed.h
 * and are written as they come (zones as they close, ranges as they pair,
 * flow chains as they end); the finish writes what needs the whole trace
 * (zones and ranges still open, GPU zones and pools, CUDA, anomalies) and
 * the metadata. pp_export_chrome feeds a model in memory to the same
 * writer, so both give the same events. Bounds hit are counted in
 * pp_chrome_limits and written to metadata.reader. */
#define PP_CHROME_CHAINS_MAX (1u << 16)  /* flow chains open at once */
#define PP_CHROME_POINTS_MAX (1u << 19)  /* points of open chains */
#define PP_CHROME_RANGES_MAX (1u << 18)  /* range halves waiting */
#define PP_CHROME_REORDER_CAP (1u << 20) /* events in the reorder buffer */

typedef struct pp_chrome pp_chrome;
typedef struct pp_chrome_limits {
  uint64_t events;          /* events of defined sites taken */
  uint64_t events_late;     /* handed on out of time order: the reorder
                               buffer was full (counters and flow chains
                               then see them late) */
  uint64_t zones_too_deep;  /* begins past PP_PAIR_MAX_DEPTH: not drawn */
  uint64_t flow_chains_cut; /* chains ended early: too many open at once */
  uint64_t ranges_lost;     /* range begins not kept: too many open */
  uint64_t chains_v1, chains_v2;
} pp_chrome_limits;

pp_chrome *pp_chrome_stream_new(FILE *out);
/* A pp_feed_fn for pp_read_opts.on_event. 0, or -1 when memory ran out or
 * writing failed (the read then stops). */
int pp_chrome_stream_event(void *c, const pp_trace *t, uint32_t thread,
                           const pp_event *e);
/* No event given from now on is earlier than `before` (the reader knows
 * from its first pass): write what waits for no other event, keeping the
 * reorder buffer to what may still be overtaken. 0, or -1 as above. */
int pp_chrome_stream_release(pp_chrome *c, const pp_trace *t, int64_t before);
/* t read and analysed: write the rest. 0, or -1 (memory, writing). The
 * output is flushed, not closed. */
int pp_chrome_stream_finish(pp_chrome *c, const pp_analysis *a);
const pp_chrome_limits *pp_chrome_stream_limits(const pp_chrome *c);
/* The figures' stream of the read was not fed the zone events (their
 * statistics are not in the document): the writer's own pairing, the one
 * pairing of pair/zones.h over the same events of each thread, gives the
 * unclosed zones and unmatched ends, and the trace ends no earlier than
 * last_ns, the latest zone event (have: there was one). Only for a trace
 * whose threads have distinct ids (the figures pair by thread id). Call
 * before pp_chrome_stream_finish. */
void pp_chrome_stream_zones_unfed(pp_chrome *c, int have, int64_t last_ns);
/* Whether a bound cut anything (events_late cuts nothing). */
static inline int pp_chrome_limited(const pp_chrome_limits *l) {
  return l->zones_too_deep || l->flow_chains_cut || l->ranges_lost;
}
void pp_chrome_stream_free(pp_chrome *c);

/* The machine-readable summary (schema "pipeprof.summary", version 1; see
 * docs/formats/summary-json.md): zones with percentiles, top self time,
 * threads, frames, counters, overhead estimate, reader diagnostics.
 * Returns 0 or -1 as above. */
int pp_export_summary_json(FILE *out, const pp_analysis *a);

/* pp_export_summary_json() with extra top-level members: extra (when not
 * NULL) is called with the writer inside the still-open top-level object,
 * after every member the summary itself writes, and adds members with the
 * structured pp_jsonw calls; a non-zero return fails the export. The HTML
 * report (src/export/html.c) adds its "timeline" this way. */
struct pp_jsonw;
typedef int (*pp_summary_extra_fn)(struct pp_jsonw *w, const pp_analysis *a,
                                   void *arg);
int pp_summary_json_write(FILE *out, const pp_analysis *a,
                          pp_summary_extra_fn extra, void *arg);

/* The per-zone table as RFC 4180 CSV (CRLF line ends, header row), one row
 * per zone site in profile order. Returns 0 or -1 as above. */
int pp_export_csv(FILE *out, const pp_analysis *a);

/* ==== end of JSON and CSV exporters ====================================== */

/* ==== HTML report (src/export/html.c, page assets in src/export/html/) === */

/* Options of pp_export_html_opts(); zero-initialised means defaults. */
typedef struct pp_html_opts {
  size_t timeline_max; /* top-level zone instances drawn in the timeline;
                          0: PP_HTML_TIMELINE_MAX */
} pp_html_opts;

#define PP_HTML_TIMELINE_MAX 20000

/* One self-contained HTML page (inline CSS and JavaScript, no external
 * reference, a Content-Security-Policy that forbids network access) that
 * renders the summary JSON embedded in it: header, sortable zone table,
 * bottlenecks, threads, a per-thread timeline of top-level zones, frames,
 * counters, requests, system, and any other section as a generic table.
 * The embedded summary is pp_export_summary_json()'s plus a "timeline"
 * member (docs/formats/summary-json.md#timeline), with every '<', U+2028
 * and U+2029 written as a JSON escape (backslash, 'u', four hex digits) so
 * that no name can end the script element (docs/html-report.md). Returns
 * 0, or -1 when t was not analysed, memory ran out or writing failed. */
int pp_export_html(FILE *out, const pp_analysis *a);

/* The trace's CPU stack samples as collapsed stacks for flamegraph.pl,
 * speedscope and inferno (export/stacks_folded.c): a line per distinct
 * stack, the zones open around it first, then its frames, outermost
 * first, and its sample count. Nothing without samples. */
int pp_export_stacks_folded(FILE *out, const pp_analysis *a);
int pp_export_html_opts(FILE *out, const pp_analysis *a,
                        const pp_html_opts *opts);

/* ==== end of HTML report ================================================= */

/* ==== system report (src/export/report_system.c) ======================= */

struct pp_jsonw; /* src/export/jsonw.h */

/* Print what the run-time sampler and `pipeprof run` recorded (counters
 * named as in src/core/sampler.h, META "run.*", "sampler.hz",
 * "unavailable.<group>", "perf.<event>.running_pct", "carbon.g_per_kwh"):
 * sections "run", "system", "process tree", "hardware counters", "energy"
 * and "other metrics" (reasons of groups the sections do not cover), each
 * starting with a blank line. A metric not measured prints
 * "unavailable: <reason>" when META has a reason for its group and is left
 * out otherwise; nothing is ever printed as 0 or nan for lack of data.
 * Prints nothing when the trace has no sys./proc./perf./power./energy.
 * counter and no "unavailable.*" META (run.* alone is not enough). Returns
 * 0, or -1 when t was not analysed, memory ran out or writing failed. */
int pp_report_system(FILE *out, const pp_analysis *a);

/* Write the member "system" (key and value) into the JSON object open in w:
 * null when pp_report_system would print nothing, else an object with the
 * same facts in base units (bytes, seconds, joules, watts; percentages
 * 0..100 with keys ending _pct): "run", "host", "process_tree", "perf",
 * "energy" (each only when it has data) and "unavailable" {group: reason}
 * (always). Layout in docs/formats/summary-json.md. Returns 0, or -1 when
 * t was not analysed, memory ran out or w is in the error state. */
int pp_summary_system_json(struct pp_jsonw *w, const pp_analysis *a);

/* ==== end of system report =============================================== */

/* ==== CUDA activity (src/export/report_cuda.c, summary_json.c, chrome.c) */

/* Print the "CUDA activity" section (CUPTI records, a->cuda), starting with
 * a blank line: records and dropped records, GPU busy vs idle over the run
 * and per device, transfers by direction, launch latency, attribution
 * counts, the kernel table (calls, total, mean, p50, p99, share of kernel
 * time), GPU work and transfers per stage, synchronization and API calls.
 * When the trace has no CUDA records but META "unavailable.cuda" says why,
 * prints "CUDA tracing: unavailable: <reason>"; otherwise nothing. Returns
 * 0, or -1 when t was not analysed or writing failed. */
int pp_report_cuda(FILE *out, const pp_analysis *a);

/* Write the member "cuda" into the JSON object open in w: null when the
 * trace has no CUDA records and no reason, {"unavailable": reason} when it
 * has only the reason, else the analysis in base units (layout in
 * docs/formats/summary-json.md). Returns 0, or -1 when w is in the error
 * state. */
int pp_summary_cuda_json(struct pp_jsonw *w, const pp_analysis *a);

/* ==== end of CUDA activity =============================================== */

#endif /* PP_EXPORT_H */
