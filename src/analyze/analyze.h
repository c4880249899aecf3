/* SPDX-License-Identifier: MIT */
/*
 * Helpers around pp_analyze() (src/analyze/analyze.c) for the exporters
 * and the text report: looking up the figures of one zone site or library
 * metric, the zone instance that encloses a time, and the profiler's own
 * cost. The invariants of the results are analysis.h's.
 */
#ifndef PP_ANALYZE_H
#define PP_ANALYZE_H

#include <stdint.h>

#include "analysis.h"
#include "model/trace.h"

/* Aggregate statistics of the zone site loc, or NULL when that site has no
 * instance (or a was not analysed). O(number of zone sites). */
const pp_zone_stats *pp_profile_zone(const pp_analysis *a, uint32_t loc);
/* The statistics of the library metric named name (metrics/registry.h),
 * or NULL: a series recorded as PP_KIND_METRIC; in a trace written before
 * that kind existed (no metric site at all), a counter of that name. A
 * user counter that shares the name is never returned. */
const pp_counter_stats *pp_profile_metric(const pp_analysis *a,
                                          const char *name);

/* How much of the trace its stored events cover (pp_read_opts.keep_events):
 * ns from the first event (prof.t0) to the earliest event not stored, or
 * -1 when every event was stored. */
int64_t pp_details_window_ns(const pp_analysis *a);

/* Per-site zone statistics, shared by CPU zones and GPU zones: init n
 * entries (empty histograms, min/max sentinels), add one instance of d ns
 * with self ns of it, and finish n entries (mean, std) once all are in. */
/* Build a->doc, the results document, from the figures (document.c):
 * 0, or -1 when out of memory. */
int pp__analysis_document(pp_analysis *a);
/* The builders of the document's sections in files of their own, called
 * by pp__analysis_document; rt is what `pipeprof run` recorded of its
 * command (pp_run_tree_get), read once for all of them. Each returns 0, or
 * -1 when out of memory. */
struct pp_run_tree;
struct pp_system;
/* "header": what was profiled and how (doc_header.c). */
int pp__header_facts(const pp_analysis *a, const struct pp_run_tree *rt,
                     struct pp_doc *d);
/* "overhead": the profiler's cost (doc_overhead.c). */
int pp__overhead_facts(const pp_analysis *a, const struct pp_run_tree *rt,
                       struct pp_doc *d);
/* the process tree's facts, measures and the sampler's process and thread
 * tables (doc_tree.c). */
int pp__tree_tables(const pp_analysis *a, const struct pp_run_tree *rt,
                    const struct pp_system *s, struct pp_doc *d);
/* "system" and "system_unavailable": whether the trace has a system part,
 * the sampler's rate, and what the collectors could not measure
 * (doc_system.c). */
int pp__system_facts(const pp_analysis *a, const struct pp_system *s,
                     struct pp_doc *d);
/* inside the top-level zones and an imported profile's operators by
 * input shape (doc_breakdown.c). */
int pp__breakdown_tables(const pp_analysis *a, struct pp_doc *d);
/* "gpu_tracks" and the facts "gpu_zone_counts" of the GPU zones
 * (doc_gpu.c). */
int pp__gpu_zone_facts(const pp_analysis *a, struct pp_doc *d);
/* "gpuN" (each GPU NVML read) and the facts "gpu" (doc_nvml.c). */
int pp__nvml_tables(const pp_analysis *a, struct pp_doc *d);
/* the CUDA activity CUPTI traced: facts "cuda" and its tables
 * (doc_cuda.c). */
int pp__cuda_tables(const pp_analysis *a, struct pp_doc *d);
/* "queue_waits" and "flow_latencies", the summary's histogram figures
 * (doc_hists.c). */
int pp__hist_tables(const pp_analysis *a, struct pp_doc *d);
/* "memory_pools" and "device_memory" (doc_memory.c). */
int pp__memory_tables(const pp_analysis *a, struct pp_doc *d);
/* "process_table": each process that recorded (doc_processes.c), and
 * how process pid of t ended: META process.end, "did not finish its
 * file" for a file without END, or NULL when the trace does not say. */
int pp__process_table(const pp_analysis *a, const struct pp_run_tree *rt,
                      struct pp_doc *d);
const char *pp__process_end(const pp_trace *t, uint32_t pid);
/* "zones_by_process" (doc_processes.c): each zone several processes of a
 * run recorded, each process's part of it. */
int pp__process_zones(const pp_analysis *a, struct pp_doc *d);
/* The pids of the processes that recorded (`pipeprof run`'s own left
 * out), and those whose file did not finish before they wrote an event,
 * into *out (pp__free it); returns how many. */
size_t pp__run_pids(const pp_trace *t, const struct pp_run_tree *rt,
                    uint32_t **out);
/* "stacks" (doc_stacks.c): the CPU stack samples by zone and function. */
int pp__stack_tables(const pp_analysis *a, struct pp_doc *d);
/* "flows" (doc_flows.c). */
int pp__flow_table(const pp_analysis *a, struct pp_doc *d);
/* the machine's and the process tree's sampled measures (doc_measures.c),
 * the per-core, temperature and NUMA figures (doc_machine.c), the
 * perf_event counts and ratios (doc_perf.c), the energy (doc_energy.c). */
int pp__measure_tables(const struct pp_system *s, struct pp_doc *d);
int pp__machine_tables(const struct pp_system *s, struct pp_doc *d);
int pp__perf_tables(const struct pp_system *s, struct pp_doc *d);
int pp__energy_tables(const struct pp_system *s, struct pp_doc *d);
void pp__zone_stats_init(pp_zone_stats *zs, size_t n);
void pp__zone_stats_add(pp_zone_stats *zs, int64_t d, int64_t self);
void pp__zone_stats_finish(pp_zone_stats *zs, size_t n);

/* The profiler's own cost in an analysed trace, for the report and the
 * summary JSON. */
typedef struct pp_overhead {
  int known;           /* 0: no event cost recorded, nothing below is set */
  double recording_ns; /* estimated, all threads: events x event cost
                          + dropped_ns */
  double events_ns;    /* events x event cost (META event_cost_ns), the
                          binding's events at their own (pp_profile) */
  double dropped_ns;   /* dropped events x drop cost (META drop_cost_ns);
                          0 when nothing was dropped or -1 when events were
                          dropped and the trace has no drop cost (older
                          traces), which recording_ns then leaves out */
  double busy_ns;      /* summed busy time of all threads */
  double total_ns;     /* recording + the writer's and sampler's measured
                          CPU time; -1 when the writer's is not recorded */
} pp_overhead;
void pp_profile_overhead(const pp_analysis *a, pp_overhead *o);
/* The estimated recording cost of events of the trace: each at the
 * measured event cost, the binding's events (at most events of them) at
 * that plus its layer's measured cost. */
double pp_profile_events_cost(const pp_profile *p, uint64_t events);

#endif /* PP_ANALYZE_H */
