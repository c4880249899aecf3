/* SPDX-License-Identifier: MIT */
/*
 * The analysis of a trace: everything derived from the read-only trace
 * model (model/model.h) lives in a pp_analysis, which pp_analyze fills
 * and pp_analysis_free releases; the trace is never changed by it. The
 * figures of each report section are computed here once and only rendered
 * by the text, JSON and HTML writers (export/).
 *
 * Invariants (after pp_analyze): per thread, zones[] is in start order
 * (pre-order: a parent precedes its children, siblings are in time order)
 * and properly nested; every instance's loc is < t->nlocs. prof.zones is
 * sorted by total_ns descending (ties by name, then loc), one entry per
 * zone site. Frame streams and counters are identified by name, since
 * several call sites may feed one: each prof.frames / prof.counters entry
 * merges every loc of that name and carries the lowest such loc id; they
 * are sorted by name. Zones closed forcibly (by the end of the trace, or
 * by the end of an enclosing zone) have unclosed = 1 and are counted in
 * prof.unclosed.
 */
#ifndef PP_ANALYZE_ANALYSIS_H
#define PP_ANALYZE_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "pair/zones.h"
#include "stats/depth.h"
#include "stats/histogram.h"

/* GPU zones of one site on one track (device, stream) as a stats-mode file
 * aggregates them (STATS chunk, since format 1.3): what pp_analyze_gpu
 * needs to give the statistics of trace mode without the zones. */
typedef struct pp_gpu_zone_agg {
  uint32_t loc;
  uint32_t device;
  uint64_t stream;
  uint64_t tid; /* launcher of the zone that started first */
  uint64_t count;
  int64_t total_ns;  /* sum of durations */
  int64_t launch_ns; /* earliest pp_gpu_zone_begin call */
  int64_t start_ns;  /* earliest start */
  int64_t end_ns;    /* latest end */
  pp_hist hist;      /* durations, ns */
} pp_gpu_zone_agg;

/* A completed (or forcibly closed) zone on one thread. */
typedef struct pp_zone_inst {
  int64_t start, end; /* ns */
  int64_t self;       /* end - start - sum of direct children */
  uint32_t loc;
  uint32_t depth;    /* 0 = top level on its thread */
  int32_t parent;    /* index in the thread's zones, -1 at top level */
  uint32_t unclosed; /* 1 if the trace ended before the zone did */
} pp_zone_inst;

/* A range that may start and end on different threads (pp_range_start,
 * nvtxRangeStart); filled by pp_analyze. */
typedef struct pp_range {
  int64_t start, end; /* ns; end is the trace end when unclosed */
  uint64_t id;        /* the recorder's range id */
  uint64_t tid_start, tid_end;
  uint32_t loc;
  uint32_t unclosed; /* 1 if no end was recorded */
} pp_range;

struct pp_gpu_activity; /* src/analyze/gpu_activity.h */

/* Aggregates ------------------------------------------------------------ */

typedef struct pp_zone_stats {
  uint32_t loc;
  uint64_t count;
  int64_t total_ns, self_ns, min_ns, max_ns;
  double mean_ns, std_ns;
  pp_hist hist; /* durations, ns */
} pp_zone_stats;

typedef struct pp_frame_stats {
  uint32_t loc;
  uint64_t frames;        /* frame marks seen */
  double fps;             /* (frames - 1) / (last - first) */
  double mean_ns, std_ns; /* frame time (gap between marks) */
  double jitter_ns;       /* mean |dt_i - dt_{i-1}| */
  pp_hist hist;           /* frame times, ns */
} pp_frame_stats;

typedef struct pp_counter_stats {
  uint32_t loc;
  uint64_t samples;
  double min, max, mean, last;
  int is_float;
} pp_counter_stats;

/* Service-level objectives (pp_slo_parse): limits in ns, 0 when not set.
 * A request meets them when it succeeded and each set limit holds (TPOT
 * only for requests with more than one token). A zone (a stage) meets
 * its own when it lasts no longer than the limit (pp_zone_slo_get). */
#define PP_SLO_ZONES_MAX 16
#define PP_SLO_NAME_MAX 128
typedef struct pp_slo_zone {
  char name[PP_SLO_NAME_MAX]; /* the zone's name */
  int64_t limit_ns;
} pp_slo_zone;
typedef struct pp_slo {
  int64_t ttft_ns, tpot_ns, e2e_ns;
  size_t nzones;
  pp_slo_zone zone[PP_SLO_ZONES_MAX];
} pp_slo;

/* Batches of one size (pp_batch). */
typedef struct pp_batch_size {
  uint32_t size;
  uint64_t batches;
} pp_batch_size;

/* Requests and batches (pp_request_*, pp_batch), paired by id across
 * threads. Latencies are of successful requests after the warm-up. */
typedef struct pp_request_stats {
  uint64_t requests;            /* begun, after the warm-up */
  uint64_t warmup;              /* first requests (by begin time) left out */
  uint64_t completed;           /* ended with status 0 */
  uint64_t failed;              /* ended with another status */
  uint64_t unfinished;          /* no end in the trace */
  uint64_t orphans;             /* request events of no begun request */
  uint64_t lost;                /* requests not analysed: the pairing table
                                   (pair/requests.h) had no room for them */
  uint64_t output_tokens;       /* sum over completed requests */
  int64_t span_ns;              /* first begin to last end (counted requests) */
  double req_per_s;             /* completed / span */
  double tokens_per_s;          /* output_tokens / span */
  pp_hist e2e, ttft, tpot, itl; /* ns; ITL pooled over requests */
  int slo_set;                  /* slo holds at least one limit */
  pp_slo slo;
  uint64_t good;        /* completed requests meeting every limit */
  double goodput_per_s; /* good / span */
  double compliance;    /* good / (completed + failed) */
  uint64_t batches;     /* pp_batch calls */
  uint64_t batch_items, batch_padded; /* sums of size and padded size */
  double batch_mean;                  /* batch_items / batches */
  double padding_waste;               /* 1 - batch_items / batch_padded */
  pp_batch_size *sizes;               /* by size, ascending */
  size_t nsizes;
} pp_request_stats;

/* Queues, stages, flows and recommendations ------------------------------
 * Filled by pp_analyze_pipeline() (src/analyze/queues.c, bottleneck.c,
 * advice.c); definitions in docs/analysis.md. Strings point into the
 * trace's locs unless marked owned. */

/* One queue between stages (pp_queue_*). The window is the queue's first
 * to last event; depth is the library's count recorded with each event. */
typedef struct pp_queue_stats {
  uint32_t loc;                 /* the queue's site (PP_KIND_QUEUE) */
  const char *name, *from, *to; /* from/to: "" when not declared */
  int64_t t_first, t_last;      /* window, ns */
  uint64_t pushes, pops;
  uint64_t matched;         /* items whose push and pop were both seen */
  uint64_t unmatched_pops;  /* pops of no earlier push of that id */
  uint64_t items_untracked; /* pushes the analysis's item table had no
                               room for (PP_QUEUE_ITEMS_MAX_OPEN items in
                               flight): no wait measured for them */
  uint64_t waits_full, waits_empty; /* recorded waits */
  int64_t blocked_full_ns, blocked_empty_ns; /* their summed time */
  uint32_t waiters_full, waiters_empty; /* threads that recorded them:
                                           several may wait at once */
  uint64_t waits_unclosed;    /* begins without an end (closed at the
                                 queue's last event) */
  /* Shares of the window in percent, the one computation every view and
   * recommendation shows; NAN where it does not apply: */
  double full_pct;             /* full_ns / window; NAN when unbounded */
  double empty_pct;            /* empty_ns / window */
  double producer_blocked_pct; /* blocked_full_ns / window, over the
                                  threads that waited (their mean); NAN
                                  when no wait was recorded */
  double consumer_waiting_pct; /* likewise of blocked_empty_ns */
  pp_hist wait;                /* per item push -> pop, ns */
  pp_depth depth;              /* capacity (0: unbounded), the depth's
                                  range, time-weighted mean, full and
                                  empty time (stats/depth.h): one copy */
} pp_queue_stats;

/* A stage: a name used by a queue as producer or consumer. Its busy time
 * is the time inside zones named exactly like it (outermost instances). */
typedef struct pp_stage_stats {
  const char *name;
  int64_t busy_ns;
  uint64_t items;              /* items handled: calls, or for a stage
                                  whose calls take batches from its
                                  in-queue, what that queue delivered */
  uint64_t calls;              /* such zone instances */
  uint32_t workers;            /* threads with at least one */
  double util;                 /* busy / (workers * pipeline window), 0..1 */
  double max_thread_util;      /* busiest worker's share of the window */
  double service_ns;           /* busy / items */
  double capacity_per_s;       /* workers * items / busy; 0 when no items */
  int32_t in_queue, out_queue; /* first queue into / out of it, -1 none */
} pp_stage_stats;

/* A period a queue was stalled: full (its producer cannot go on) or empty
 * (its consumer starves). From recorded waits when the queue has any, else
 * from its depth. */
typedef struct pp_stall {
  uint32_t queue;     /* index in pipe.queues */
  uint8_t full;       /* 1 full, 0 empty */
  uint8_t recorded;   /* 1 from pp_queue_wait_* events */
  int64_t start, end; /* ns */
} pp_stall;

/* One stretch of an item's path: in a stage's zone, or between two. */
typedef struct pp_path_seg {
  const char *name;      /* zone name; for a wait the queue's name or
                            NULL when no queue joins the two stages */
  const char *from, *to; /* waits: the stages on either side */
  int64_t ns;
  uint8_t wait;
} pp_path_seg;

typedef struct pp_flow_path {
  uint64_t id;
  int64_t start, total_ns, zone_ns, wait_ns;
  pp_path_seg *segs; /* owned */
  size_t nsegs;
} pp_flow_path;

/* Per flow name: items followed from FLOW_BEGIN to FLOW_END. */
typedef struct pp_flow_stats {
  uint32_t loc;             /* canonical flow site */
  uint64_t items;           /* complete items */
  uint64_t incomplete;      /* begun and not ended, or ended unbegun */
  uint64_t crossed;         /* complete items begun in one process and
                               ended in another (bottleneck.c) */
  int64_t zone_ns, wait_ns; /* summed over items */
  pp_hist latency;          /* first stage zone start -> last end, ns */
  pp_flow_path median, slowest;
  pp_path_seg *where; /* owned: time per segment name summed over
                         items, largest first */
  size_t nwhere;
} pp_flow_stats;

/* A recommendation and the measured facts that triggered it. */
typedef struct pp_advice {
  const char *rule; /* rule id (static), docs/analysis.md */
  int severity;     /* 2 high, 1 medium, 0 low */
  char *text;       /* owned */
  char *evidence;   /* owned */
  char *stage;      /* the stage it tells to speed up (owned), or NULL */
} pp_advice;

#define PP_STALLS_MAX 16

typedef struct pp_pipeline {
  pp_queue_stats *queues; /* by name */
  size_t nqueues;
  int queues_unavailable; /* stats-mode file with queue sites */
  pp_stage_stats *stages; /* in pipeline order where known */
  size_t nstages;
  int64_t win_start, win_end;     /* pipeline window, ns */
  int32_t bound;                  /* stage with the lowest capacity, -1 */
  double achieved_per_s;          /* items out of the last stage / window */
  double bound_per_s;             /* capacity of the bounding stage */
  double efficiency;              /* achieved / bound; < 0 when unavailable */
  pp_stall stalls[PP_STALLS_MAX]; /* longest first */
  size_t nstalls;
  uint64_t stall_periods; /* all stall periods found */
  pp_flow_stats *flows;
  size_t nflows;
  pp_advice *advice; /* by severity, then rule order */
  size_t nadvice;
} pp_pipeline;
/* A GPU track: one device and stream, and the thread that launched its
 * first zone (exporters show the track beside it). */
typedef struct pp_gpu_track {
  uint32_t device;
  uint64_t stream;
  uint64_t tid;
  uint64_t zones;
  int64_t first_ns; /* start of its first zone */
} pp_gpu_track;

/* GPU zones (src/analyze/gpu.c). The library's counts come from META
 * gpu_zones.*; each is -1 when the trace does not say. */
typedef struct pp_gpu_stats {
  int used;                /* the program called pp_gpu_zone_begin (or
                              there are GPU zones) */
  const char *unavailable; /* META gpu_zones.unavailable, or NULL; points
                              into the trace */
  pp_zone_stats *zones;    /* per site, by total_ns descending (self = total;
                              no nesting on the GPU) */
  size_t nzones;
  pp_gpu_track *tracks; /* by device, then stream */
  size_t ntracks;
  int64_t resolved, unresolved, pool_exhausted, no_context, record_failed,
      unavailable_calls, query_failed, calib_error_ns;
  int64_t not_aggregated; /* stats mode: resolved zones left out of the
                             statistics (too many site/device/stream
                             keys); -1 when the trace does not say */
} pp_gpu_stats;

/* One device memory pool on one device (pp_mem_*). Levels are bytes;
 * "in use" is allocated and not yet freed, "reserved" the pool's last
 * pp_mem_reserve figure. Time averages run from the pool's first event to
 * the end of the trace. */
typedef struct pp_mem_pool_stats {
  uint32_t loc; /* the pool's name */
  uint32_t device;
  uint64_t allocs, frees;
  uint64_t unmatched_frees;  /* frees of a pointer not allocated (or twice) */
  uint64_t untracked_allocs; /* allocations the analysis's live-pointer
                               table had no room for (PP_POOL_LIVE_MAX live
                               pointers, all pools): they add to in use and
                               are never taken off, so in use, peak, means,
                               steady and final are upper bounds */
  uint64_t untracked_frees;  /* frees of unknown pointers taken as frees of
                                those (not in unmatched_frees) */
  uint64_t peak;             /* high watermark of in-use bytes */
  int64_t peak_ts;           /* first time it was reached, ns */
  int has_reserve;           /* pp_mem_reserve was called */
  uint64_t reserved_at_peak; /* reserved bytes at the watermark */
  int64_t unused_at_peak;    /* reserved - in use at the watermark; negative
                                when more was allocated than reserved */
  double mean_in_use;        /* time-weighted mean */
  double mean_unused;        /* time-weighted mean of reserved - in use,
                                over the time a reservation was known */
  uint64_t steady;           /* steady-state level: time-weighted median of
                                in use over the second half of the trace */
  uint64_t final_in_use;
  uint64_t leaks; /* allocations never freed */
  uint64_t leaked_bytes;
  struct pp_mem_level *levels; /* in use and reserved after each event, at
                               most PP_POOL_LEVELS_MAX points: past that,
                               each point covers levels_stride events and
                               holds the highest of their levels */
  size_t nlevels;
  uint64_t levels_stride; /* events per point of levels (1: every event) */
} pp_mem_pool_stats;

typedef struct pp_mem_level {
  int64_t ts;
  uint64_t in_use, reserved; /* reserved: 0 before any pp_mem_reserve */
} pp_mem_level;

/* Where a top-level zone's time goes (analyze/breakdown.c): the zones
 * nested in its instances, per site, by self time. From the zone
 * instances of the stored events (the details window); empty for a
 * stats-mode file. */
typedef struct pp_breakdown_op {
  uint32_t loc;
  uint64_t count;   /* instances inside the stage's instances */
  int64_t total_ns; /* their durations (nested ones counted again) */
  int64_t self_ns;  /* their self times: adds up to the stage's time */
} pp_breakdown_op;

typedef struct pp_breakdown_stage {
  uint32_t loc;         /* the top-level zone's site */
  uint64_t count;       /* its top-level instances */
  int64_t total_ns;     /* their durations */
  int64_t self_ns;      /* of which outside any nested zone */
  pp_breakdown_op *ops; /* by self_ns descending (ties: name, site) */
  size_t nops;
  uint64_t ops_more; /* sites past PP_BREAKDOWN_OPS_MAX, not listed */
} pp_breakdown_stage;

#define PP_BREAKDOWN_STAGES_MAX 64u
#define PP_BREAKDOWN_OPS_MAX 256u

typedef struct pp_breakdown {
  pp_breakdown_stage *stages; /* by total_ns descending; only stages with
                                 nested zones */
  size_t nstages;
  uint64_t stages_more; /* past PP_BREAKDOWN_STAGES_MAX */
} pp_breakdown;

/* Operators by input shape (analyze/shapes.c): an imported profile's
 * table (pp_trace.shapes, from every event of the profile, as torch's
 * key_averages(group_by_input_shape=True) groups them) per zone site,
 * each site's shapes by total time, the first PP_SHAPES_LISTED listed
 * and the rest summed as "other shapes". Empty for a pipeprof trace. */
typedef struct pp_shape_row {
  const char *shape; /* the shapes as text (docs/import.md); points into
                        the trace */
  uint64_t count;
  int64_t total_ns, self_ns;
} pp_shape_row;

typedef struct pp_op_shapes {
  uint32_t loc;
  uint64_t count;            /* its calls that gave shapes */
  int64_t total_ns, self_ns; /* their durations and self times */
  pp_shape_row *rows;        /* by total_ns descending (ties: count, text) */
  size_t nrows;
  uint64_t other_shapes; /* distinct shapes past the listed ones */
  uint64_t other_count;  /* their calls, and the untold ones */
  int64_t other_total_ns, other_self_ns;
  uint64_t untold; /* calls whose shapes the importer had no room to
                      tell apart (META import.shapes_past_bound), in
                      other_count */
} pp_op_shapes;

#define PP_SHAPES_LISTED 16u
#define PP_SHAPE_OPS_MAX 256u

typedef struct pp_shapes {
  pp_op_shapes *ops; /* by total_ns descending (ties: name, site) */
  size_t nops;
  uint64_t ops_more; /* sites with shapes past PP_SHAPE_OPS_MAX */
} pp_shapes;

/* Time series for charts (analyze/series.c, docs/formats/summary-json.md
 * "series"): every series on one grid of buckets of bucket_ns (a power of
 * two; bucket starts are its multiples), at most PP_SERIES_POINTS_MAX
 * buckets from the earliest value to the latest, the width doubling
 * (neighbours merged two by two) whenever the trace outgrows them. A line
 * has a point per bucket that holds a value (queues: also one the depth
 * only held through); times are the bucket's start less prof.t0 (the
 * first bucket's start clamped to 0). Which arrays are set depends on the
 * kind: frames mean (mean frame time) and max; counters mean, min, max;
 * queues mean (time-weighted depth) and max; zones count, p50 and max. */
typedef struct pp_series_line {
  uint32_t loc;  /* the site (frames, counters: the series' first) */
  size_t n;      /* points */
  int64_t *t_ns; /* owned, as every array below */
  double *mean, *min, *max;
  uint64_t *count, *p50;
  int downsampled; /* some point holds more than one raw value */
} pp_series_line;

typedef struct pp_series {
  int available;     /* 0: a stats-mode file (no events to follow) */
  int64_t bucket_ns; /* the grid's width; 0 when nothing was followed */
  pp_series_line *frames, *counters, *queues, *zones;
  size_t nframes, ncounters, nqueues, nzones;
  /* series not drawn, each kind's count and why (a static string, NULL
   * when none) */
  uint64_t frames_left, counters_left, queues_left, zones_left;
  const char *frames_why, *counters_why, *queues_why, *zones_why;
  uint64_t values_lost; /* values not followed: out of memory, or a
                        * site of a damaged trace with two kinds */
} pp_series;

typedef struct pp_profile {
  int64_t t0, t1;       /* first and last timestamp, ns */
  int64_t wall_ns;      /* t1 - t0 */
  pp_zone_stats *zones; /* sorted by total_ns, descending */
  size_t nzones;
  pp_frame_stats *frames;
  size_t nframes;
  pp_counter_stats *counters;
  size_t ncounters;
  uint64_t events;          /* events recorded */
  uint64_t dropped;         /* events dropped, all threads */
  uint64_t unclosed;        /* zones that lost their end (closed by an outer
                               zone's end or the end of the trace) */
  uint64_t unmatched_ends;  /* zone ends with no begin (dropped begins, flight
                               ring start) */
  pp_pair_counts pairing;   /* trace mode: everything the zone pairing saw
                               (pair/zones.h); stats mode: zeros but for
                               what the STATS chunk holds */
  uint64_t ranges_unclosed; /* ranges with no end in the trace */
  uint64_t ranges_unbegun;  /* range ends with no begin in the trace */
  uint64_t ranges_lost;     /* stats mode: range halves the bounded table
                               had no room for (pair/intervals.h) */
  double event_cost_ns;     /* measured cost of one event, from META; 0 if
                               unknown */
  /* Events a language binding recorded through its own layer and that
   * layer's measured cost per event on top of event_cost_ns (META
   * binding.python.events, binding.python.zone_overhead_ns: Python
   * zones); 0 when none */
  uint64_t python_events;
  double python_overhead_ns;
  /* CPU time measured at the end of the session (META), -1 when not
   * recorded: the writer thread's, the sampler thread's and the whole
   * process's (which includes both). */
  int64_t writer_cpu_ns, sampler_cpu_ns, process_cpu_ns;
  /* An imported ONNX Runtime profile (META import.ort.*, import/profile.h):
   * changes of execution provider between a thread's consecutive nodes,
   * the Memcpy nodes between providers and their time; -1 each for any
   * other trace. */
  int64_t provider_transitions, provider_copies, provider_copy_ns;
  pp_request_stats req;     /* requests and batches (pp_analyze_requests) */
  pp_pipeline pipe;         /* queues, stages, flows, advice
                               (pp_analyze_pipeline) */
  pp_gpu_stats gpu;         /* GPU zones (pp_analyze_gpu) */
  pp_breakdown breakdown;   /* inside each top-level zone
                               (pp_analyze_breakdown) */
  pp_shapes shapes;         /* operators by input shape
                               (pp_analyze_shapes) */
  pp_mem_pool_stats *pools; /* device memory pools, by name then device */
  size_t npools;
  pp_series series; /* time series for charts (analyze/series.h) */
} pp_profile;

/* What a read's stream computed beyond the STATS payload
 * (analyze/stream.h), from every event rather than the stored window:
 * requests, finished with the stream; queues and memory pools, fed and
 * finished by the first pp_analyze (their figures need the trace's final
 * times), which then copies them into the profile as every later analysis
 * does. Owned by the trace; pp__stream_results_free releases it. */
struct pp_queue_stream;
struct pp_pool_stream;
typedef struct pp_stream_results {
  int have_requests;
  pp_request_stats req;
  struct pp_queue_stream *queues_open; /* fed, not yet finished */
  int have_queues;
  pp_pipeline queues;                /* only queues, nqueues, stalls, nstalls,
                                        stall_periods */
  struct pp_pool_stream *pools_open; /* fed, not yet finished */
  int have_pools;
  pp_mem_pool_stats *pools;
  size_t npools;
} pp_stream_results;

/* What the analysis found on one thread of the trace. */
typedef struct pp_thread_figures {
  pp_zone_inst *zones; /* zone instances of the stored events */
  size_t nzones, cap_zones;
  int64_t busy_ns;         /* time covered by top-level zones */
  uint64_t events;         /* events recorded, stored or not */
  uint64_t zones_measured; /* zones with a measured duration */
} pp_thread_figures;

/* Where the analysis placed one GPU zone of the trace. */
typedef struct pp_gpu_zone_place {
  uint32_t track;   /* index into prof.gpu.tracks */
  int32_t cpu_zone; /* index in the launching thread's zones of the
                       innermost zone open at launch, or -1 */
} pp_gpu_zone_place;

struct pp_stream;

/* The analysis of one trace. Zero it, set the options, then pp_analyze;
 * pp_analyze may run again (after changing the options or the trace) and
 * pp_analysis_free releases it. */
typedef struct pp_analysis {
  /* options */
  uint64_t req_warmup; /* requests left out as warm-up */
  pp_slo req_slo;      /* SLOs for goodput */
  /* results */
  const pp_trace *trace; /* the trace analysed (not owned) */
  int analyzed;
  pp_profile prof;
  pp_thread_figures *threads; /* one per trace thread, same index */
  size_t nthreads;
  pp_range *ranges; /* in start order */
  size_t nranges;
  pp_gpu_zone_place *gpu;   /* one per trace GPU zone, same index */
  pp_gpu_zone_agg *gpu_agg; /* stats-mode file since 1.3: GPU zones per
                             site and track, by site, device, stream */
  size_t ngpu_agg;
  int64_t gpu_agg_lost;         /* zones the writer could not aggregate; -1
                                   when the STATS payload has no GPU part */
  struct pp_gpu_activity *cuda; /* CUDA activity (NULL when the trace has
                                   no CUDA chunk) */
  struct pp_doc *doc;           /* the results document (results/doc.h):
                                   the tables the views lay out */
  uint64_t events_late;         /* events the streamed figures took out of time
                                   order: the reorder buffer was full. Series
                                   spread over threads (frame marks, counters)
                                   may then be off by them */
  /* a read's stream (analyze/stream.h) */
  struct pp_stream *stream; /* trace mode: the streaming figures while
                               events are fed */
  unsigned char *streamed;  /* ... and once finished, as a STATS payload
                               (owned) */
  size_t nstreamed;
  int streamed_by_read;         /* 1: from a read's stream, kept; 0: recomputed
                                   from the stored events at each pp_analyze */
  pp_stream_results *streamres; /* a read's stream: the figures beyond
                                   STATS, from every event */
  struct pp_series_rec *series_rec; /* the chart series the stream
                                       followed (analyze/series.h); kept
                                       with streamed */
} pp_analysis;

/* Analyse t into a (src/analyze/analyze.c): zone instances per thread,
 * the profile, requests, pipeline, GPU. a's options stay; what an
 * earlier pp_analyze of a computed is replaced; a read's stream in a is
 * finished and kept. Returns 0, or -1 when out of memory (a then holds
 * no results). t must outlive a's use. */
int pp_analyze(const pp_trace *t, pp_analysis *a);
/* Release everything a holds and zero it (options too). Safe on a zeroed
 * analysis, and twice. */
void pp_analysis_free(pp_analysis *a);
/* Free the results only (pp_analyze does it before it starts), keeping
 * the options and the read's stream. */
void pp__analysis_results_free(pp_analysis *a);

/* Requests (src/analyze/requests.c). Rebuild a->prof.req from the events
 * with the options a->req_warmup and a->req_slo (pp_analyze calls it;
 * call it again after changing them). Returns 0, or -1 when out of
 * memory. */
int pp_analyze_requests(pp_analysis *a);
/* Its figures alone, without rebuilding the document (requests.c). */
int pp__requests_figures(pp_analysis *a);
/* GPU zones and memory pools (src/analyze/gpu.c): fill prof.gpu,
 * prof.pools and a->gpu (pp_analyze calls it after the zones). Returns 0,
 * or -1 when out of memory. */
int pp_analyze_gpu(pp_analysis *a);
/* Release prof.gpu and prof.pools and zero them. */
void pp_gpu_stats_free(pp_profile *p);
/* Release what prof.req holds and zero it. */
void pp_request_stats_free(pp_request_stats *r);
/* Where each top-level zone's time goes (src/analyze/breakdown.c): fill
 * a->prof.breakdown from the zone instances (pp_analyze calls it after
 * them). Returns 0, or -1 when out of memory. */
int pp_analyze_breakdown(pp_analysis *a);
void pp_breakdown_free(pp_breakdown *b);
/* Operators by input shape (src/analyze/shapes.c): fill a->prof.shapes
 * from the trace's table. Returns 0, or -1 when out of memory. */
int pp_analyze_shapes(pp_analysis *a);
void pp_shapes_free(pp_shapes *s);
/* Free the per-site figures of a profile (zones, frames, counters: what a
 * STATS payload decodes into) and zero their counts. */
void pp_profile_figures_free(pp_profile *p);

/* Decode a STATS payload into a's profile, threads' figures and GPU
 * aggregates (src/analyze/figures.c): a stats-mode file's, or the
 * streamed figures of a trace-mode file. 0, or -1 when it is malformed or
 * memory ran out. */
int pp__figures_apply(pp_analysis *a, const unsigned char *p, size_t n);

/* Index in a's zones of thread `thread` of the innermost zone instance
 * with start <= ts <= end, or -1 when none. At a boundary shared by two
 * adjacent zones, the later one wins. O(log n + depth). */
int pp_zone_enclosing(const pp_analysis *a, size_t thread, int64_t ts);

/* Energy the run used (src/analyze/energy.c), the numerator of energy per
 * frame, per request and per output token: the CPU package energy (RAPL
 * counter "energy.package_j") plus the GPU energy of the run's GPUs
 * ("gpu.run_energy_j", else all GPUs' "gpu.energy_j"), each where the
 * trace measured it. Each is its counter's last value: the whole sampled
 * run, warm-up and idle time included, so a figure per frame or per request
 * is that run's energy divided by a count, not the energy of one frame. */
typedef struct pp_energy {
  double joules;           /* cpu_j + platform_j + gpu_j */
  double cpu_j;            /* CPU package energy, 0 unless has_cpu */
  double platform_j;       /* the platform's (RAPL psys: SoC and more, not
                              a sum of the other domains), counted only
                              when no CPU package energy was measured;
                              0 unless has_platform */
  double gpu_j;            /* GPU energy, 0 unless has_gpu */
  int has_cpu, has_platform, has_gpu; /* which sources the trace measured */
  const char *gpu_counter; /* "gpu.run_energy_j", "gpu.energy_j" or NULL */
  /* "CPU package", "platform (psys)", "GPU", "CPU package + GPU",
   * "platform (psys) + GPU", or the reason there is no
   * figure: a static string, or the sampler's reason in the trace's META
   * (valid while the trace is: copy it to keep it longer). */
  const char *sources;
} pp_energy;
/* Fill *e from a's counters. Returns 1 when some source was measured, else
 * 0 with every figure 0 and the reason in e->sources. */
int pp_run_energy(const pp_analysis *a, pp_energy *e);
/* Parse "ttft=200ms,tpot=40ms,e2e=2s,infer=5ms" (units ns, us, ms, s;
 * any subset, comma-separated) into *slo: ttft, tpot and e2e are the
 * requests', any other name a zone's (up to PP_SLO_ZONES_MAX, names of
 * printable characters without ',' or '='). Returns 0, or -1 with a
 * one-line reason in err. */
int pp_slo_parse(const char *spec, pp_slo *slo, char *err, size_t errlen);
/* How the zones named like zone SLO i of a->req_slo met it: every
 * instance of every site of that name, from the zone histograms (stats
 * and trace mode alike), so an instance within the histogram's 0.1% of
 * the limit may be either (uncertain; met + violations + uncertain =
 * count). */
typedef struct pp_zone_slo {
  const char *name;
  int64_t limit_ns;
  int found;            /* a zone of that name was recorded */
  uint64_t count, met, violations, uncertain;
  double compliance_pct; /* met / count * 100; NAN when count is 0 */
  double compliance_hi_pct; /* (met + uncertain) / count * 100 */
} pp_zone_slo;
/* Fill *o for zone SLO i (< a->req_slo.nzones). 0, or -1 (i out of
 * range, a not analysed, out of memory). */
int pp_zone_slo_get(const pp_analysis *a, size_t i, pp_zone_slo *o);
/* MLPerf-style early-stopping minimum: the smallest number of requests n
 * for which P[Binomial(n, 1 - pct/100) <= over + 1] <= 1 - confidence,
 * over being the over-latency requests seen (64 for p90 and 662 for p99
 * at confidence 0.99 with none over). 0 for invalid arguments. */
uint64_t pp_request_min_count(double pct, double confidence, uint64_t over);

/* Queues, stage bottlenecks, flow critical paths and recommendations
 * (src/analyze/queues.c, bottleneck.c, advice.c) into a->prof.pipe;
 * pp_analyze calls it. Needs zone instances (run after them). Returns 0,
 * or -1 when out of memory. */
int pp_analyze_pipeline(pp_analysis *a);
/* Release what prof.pipe holds and zero it. */
void pp_pipeline_free(pp_pipeline *p);

#endif /* PP_ANALYZE_ANALYSIS_H */
