/* SPDX-License-Identifier: MIT */
/*
 * The in-memory model of one profiled process, shared by the trace reader,
 * the analysis and every exporter. The reader (src/format/reader.c) fills a
 * pp_trace from a .pptrace file; pp_analyze() (src/analyze/analyze.c)
 * derives zone instances and the aggregate pp_profile from it.
 *
 * Invariants: all times are nanoseconds on the process's monotonic clock
 * (CLOCK_MONOTONIC), already converted from ticks; per thread, events are in
 * recording order and zone instances are in start order with proper
 * nesting (a child lies within its parent). Strings are owned by the model
 * and NUL-terminated (they may hold any bytes, exporters must escape).
 */
#ifndef PP_MODEL_H
#define PP_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "../pair/zones.h"
#include "../stats/histogram.h"

/* A static site as read from the trace (SRCLOC chunk). */
typedef struct pp_loc {
  uint32_t id;
  uint32_t kind; /* pp_kind */
  char *name, *function, *file;
  uint32_t line;
} pp_loc;

/* One decoded event. */
typedef struct pp_event {
  int64_t ts;    /* ns, monotonic clock */
  uint32_t loc;  /* index into pp_trace.locs */
  uint8_t type;  /* enum ppt_event_type */
  union {
    int64_t i;   /* COUNTER_SET / COUNTER_ADD */
    double f;    /* COUNTER_SETF */
    uint64_t id; /* FLOW_*, RANGE_*, REQ_* (the caller's id), BATCH
                    (the batch size), MEM_ALLOC / MEM_FREE (the pointer) */
  } v;
  uint64_t v2;   /* since 1.1, REQ_* and BATCH: REQ_TOKENS tokens,
                    REQ_END zigzag(status), BATCH padded size; since 1.2
                    MEM_*: device << 56 | bytes (pp_mem_bytes,
                    pp_mem_device); else 0 */
} pp_event;

/* Bytes (< 2^48; 0 for MEM_FREE) and device of a MEM_* event. */
static inline uint64_t pp_mem_bytes(const pp_event *e) {
  return e->v2 & ((UINT64_C(1) << 48) - 1);
}
static inline uint32_t pp_mem_device(const pp_event *e) {
  return (uint32_t)(e->v2 >> 56);
}

/* One GPU zone (pp_gpu_zone_begin/end, event GPU_ZONE since 1.2): device
 * work on one stream, measured with CUDA events and placed on the CPU
 * clock by the library's calibration. */
typedef struct pp_gpu_zone_rec {
  int64_t start, end; /* ns, monotonic clock */
  int64_t launch;     /* ns: when pp_gpu_zone_begin was called */
  uint64_t tid;       /* launching thread */
  uint64_t stream;    /* CUstream handle */
  uint32_t device;    /* CUDA device ordinal */
  uint32_t loc;
  uint32_t track;     /* index into pp_gpu_stats.tracks (pp_analyze) */
  int32_t cpu_zone;   /* pp_analyze: index in the launching thread's zones
                         of the innermost zone open at launch, or -1 */
} pp_gpu_zone_rec;

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
  int64_t start, end;  /* ns */
  int64_t self;        /* end - start - sum of direct children */
  uint32_t loc;
  uint32_t depth;      /* 0 = top level on its thread */
  int32_t parent;      /* index in the thread's zones, -1 at top level */
  uint32_t unclosed;   /* 1 if the trace ended before the zone did */
} pp_zone_inst;

typedef struct pp_thread {
  uint64_t tid;
  uint32_t pid;        /* the process that recorded it (merged traces);
                          0: the trace's pid (pp_thread_pid) */
  char *name;          /* "" when unnamed */
  pp_event *ev;
  size_t nev, cap_ev;
  uint64_t dropped;    /* events this thread could not record */
  pp_zone_inst *zones; /* filled by pp_analyze */
  size_t nzones, cap_zones;
  int64_t busy_ns;     /* time covered by top-level zones */
  uint64_t events;     /* events recorded, stored in ev or not (from the
                          streamed figures, pp_analyze) */
  uint64_t zones_measured; /* zones with a measured duration (idem) */
} pp_thread;

/* A range that may start and end on different threads (pp_range_start,
 * nvtxRangeStart); filled by pp_analyze. */
typedef struct pp_range {
  int64_t start, end;  /* ns; end is the trace end when unclosed */
  uint64_t id;         /* the recorder's range id */
  uint64_t tid_start, tid_end;
  uint32_t loc;
  uint32_t unclosed;   /* 1 if no end was recorded */
} pp_range;

/* A key/value pair from the META chunk. */
typedef struct pp_meta {
  char *key, *value;
} pp_meta;

/* A tick-to-nanosecond synchronisation point. */
typedef struct pp_clock_sync {
  uint64_t tick;
  int64_t mono_ns;
  int64_t real_ns;
} pp_clock_sync;

/* What the reader found while decoding. */
typedef struct pp_read_diag {
  uint64_t file_bytes;
  uint64_t chunks_ok;
  uint64_t chunks_bad;     /* header or payload checksum failed */
  uint64_t bytes_skipped;  /* bytes not part of any intact chunk */
  uint64_t events_bad;     /* events dropped as undecodable */
  int clean_end;           /* an END chunk was found */
  int truncated;           /* file ends inside a chunk */
  int out_of_memory;       /* an allocation failed: the read was abandoned */
  uint64_t events;         /* thread events decoded, stored or not */
  uint64_t events_kept;    /* of them, stored in the threads' ev */
  int64_t first_unkept_ns; /* the earliest time of an event not stored:
                              the stored events are every event before it;
                              INT64_MAX when every event was stored */
  int64_t first_ns;        /* the earliest event time (GPU zones' launch
                              and start too), when have_first: set by a
                              read with pp_read_opts.scan_first before
                              its first on_event */
  int have_first;
  uint64_t events_late;    /* events the streamed figures took out of time
                              order (set by pp_analyze): the reorder buffer
                              was full. Series spread over threads (frame
                              marks, counters) may then be off by them */
} pp_read_diag;

/* An anomaly or alert raised by the live statistics inside the profiled
 * process (since format 1.2; event types 22 and 23). */
typedef struct pp_note {
  int64_t ts;      /* ns, monotonic clock */
  uint8_t type;    /* PPT_EV_ANOMALY or PPT_EV_ALERT */
  char *what;      /* "p99", "rate", "mem", "swap", "psi.cpu", ... */
  char *which;     /* zone name, "request e2e", "system", "gpu0", ... */
  char *message;   /* one line for people */
  double value, baseline, spread, threshold;
} pp_note;

/* CUDA activity (CUPTI; CUDA chunks, since format 1.2). Times are ns on
 * the monotonic clock like everything else; `name` fields index
 * pp_cuda_trace.names (UINT32_MAX or out of range: unknown). Numeric
 * kinds are CUPTI's: copy_kind CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH,
 * 8 DtoD, ...), src/dst/memory kinds CUpti_ActivityMemoryKind (1 pageable,
 * 2 pinned, 3 device, 5 managed, ...), sync type
 * CUpti_ActivitySynchronizationType, API domain CUpti_CallbackDomain (1
 * driver, 2 runtime). */
typedef struct pp_cuda_kernel {
  int64_t start, end;
  int64_t queued;       /* 0: not collected */
  uint32_t device, context, stream, correlation, name;
  int32_t grid[3], block[3];
  int32_t static_smem, dynamic_smem;
  uint32_t registers;
} pp_cuda_kernel;

typedef struct pp_cuda_memcpy {
  int64_t start, end;
  uint64_t bytes;
  uint8_t copy_kind, src_kind, dst_kind, flags; /* flags bit 0: async */
  uint32_t device, context, stream, correlation;
} pp_cuda_memcpy;

typedef struct pp_cuda_memset {
  int64_t start, end;
  uint64_t bytes;
  uint32_t value, memory_kind;
  uint32_t device, context, stream, correlation;
} pp_cuda_memset;

typedef struct pp_cuda_sync {
  int64_t start, end;
  uint32_t type, context, stream, correlation, event;
} pp_cuda_sync;

typedef struct pp_cuda_api {
  int64_t start, end;
  uint64_t tid;         /* OS thread id (gettid) of the caller */
  uint32_t domain, cbid, name, correlation, result;
} pp_cuda_api;

typedef struct pp_cuda_trace {
  char **names;         /* kernel and API names by id (NULL: undefined) */
  size_t nnames;
  pp_cuda_kernel *kernels;
  size_t nkernels, cap_kernels;
  pp_cuda_memcpy *memcpys;
  size_t nmemcpys, cap_memcpys;
  pp_cuda_memset *memsets;
  size_t nmemsets, cap_memsets;
  pp_cuda_sync *syncs;
  size_t nsyncs, cap_syncs;
  pp_cuda_api *apis;
  size_t napis, cap_apis;
  uint64_t dropped;     /* records CUPTI or the collector dropped */
  uint64_t chunks;      /* CUDA chunks read */
} pp_cuda_trace;

/* Name of a kernel or API call (never NULL). */
const char *pp_cuda_name(const pp_cuda_trace *c, uint32_t id);
/* Release what c holds and zero it. */
void pp_cuda_trace_free(pp_cuda_trace *c);

struct pp_gpu_activity; /* src/analyze/gpu_activity.h */

/* Aggregates ------------------------------------------------------------ */

typedef struct pp_zone_stats {
  uint32_t loc;
  uint64_t count;
  int64_t total_ns, self_ns, min_ns, max_ns;
  double mean_ns, std_ns;
  pp_hist hist;      /* durations, ns */
  pp_hist self_hist; /* self times, ns */
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

/* Service-level objectives for requests (pp_slo_parse): limits in ns, 0
 * when not set. A request meets them when it succeeded and each set limit
 * holds (TPOT only for requests with more than one token). */
typedef struct pp_slo {
  int64_t ttft_ns, tpot_ns, e2e_ns;
} pp_slo;

/* Batches of one size (pp_batch). */
typedef struct pp_batch_size {
  uint32_t size;
  uint64_t batches;
} pp_batch_size;

/* Requests and batches (pp_request_*, pp_batch), paired by id across
 * threads. Latencies are of successful requests after the warm-up. */
typedef struct pp_request_stats {
  uint64_t requests;      /* begun, after the warm-up */
  uint64_t warmup;        /* first requests (by begin time) left out */
  uint64_t completed;     /* ended with status 0 */
  uint64_t failed;        /* ended with another status */
  uint64_t unfinished;    /* no end in the trace */
  uint64_t orphans;       /* request events of no begun request */
  uint64_t lost;          /* requests not analysed: the pairing table
                             (pair/requests.h) had no room for them */
  uint64_t output_tokens; /* sum over completed requests */
  int64_t span_ns;        /* first begin to last end (counted requests) */
  double req_per_s;       /* completed / span */
  double tokens_per_s;    /* output_tokens / span */
  pp_hist e2e, ttft, tpot, itl; /* ns; ITL pooled over requests */
  int slo_set;            /* slo holds at least one limit */
  pp_slo slo;
  uint64_t good;          /* completed requests meeting every limit */
  double goodput_per_s;   /* good / span */
  double compliance;      /* good / (completed + failed) */
  uint64_t batches;       /* pp_batch calls */
  uint64_t batch_items, batch_padded; /* sums of size and padded size */
  double batch_mean;      /* batch_items / batches */
  double padding_waste;   /* 1 - batch_items / batch_padded */
  pp_batch_size *sizes;   /* by size, ascending */
  size_t nsizes;
} pp_request_stats;

/* Queues, stages, flows and recommendations ------------------------------
 * Filled by pp_analyze_pipeline() (src/analyze/queues.c, bottleneck.c,
 * advice.c); definitions in docs/analysis.md. Strings point into the
 * trace's locs unless marked owned. */

/* One queue between stages (pp_queue_*). The window is the queue's first
 * to last event; depth is the library's count recorded with each event. */
typedef struct pp_queue_stats {
  uint32_t loc;              /* the queue's site (PP_KIND_QUEUE) */
  const char *name, *from, *to; /* from/to: "" when not declared */
  int64_t capacity;          /* 0: unbounded */
  int64_t t_first, t_last;   /* window, ns */
  uint64_t pushes, pops;
  uint64_t matched;          /* items whose push and pop were both seen */
  uint64_t unmatched_pops;   /* pops of no earlier push of that id */
  uint64_t items_untracked;  /* pushes the analysis's item table had no
                                room for (PP_QUEUE_ITEMS_MAX_OPEN items in
                                flight): no wait measured for them */
  int64_t depth_min, depth_max, depth_last;
  double depth_mean;         /* time-weighted over the window */
  int64_t full_ns;           /* depth >= capacity (capacity > 0) */
  int64_t empty_ns;          /* depth <= 0 */
  uint64_t waits_full, waits_empty;       /* recorded waits */
  int64_t blocked_full_ns, blocked_empty_ns; /* their summed time */
  uint64_t waits_unclosed;   /* begins without an end (closed at the
                                queue's last event) */
  double in_per_s, out_per_s; /* pushes, pops / window */
  pp_hist wait;              /* per item push -> pop, ns */
} pp_queue_stats;

/* A stage: a name used by a queue as producer or consumer. Its busy time
 * is the time inside zones named exactly like it (outermost instances). */
typedef struct pp_stage_stats {
  const char *name;
  int64_t busy_ns;
  uint64_t items;            /* such zone instances */
  uint32_t workers;          /* threads with at least one */
  double util;               /* busy / (workers * pipeline window), 0..1 */
  double max_thread_util;    /* busiest worker's share of the window */
  double service_ns;         /* busy / items */
  double capacity_per_s;     /* workers * items / busy; 0 when no items */
  int32_t in_queue, out_queue; /* first queue into / out of it, -1 none */
} pp_stage_stats;

/* A period a queue was stalled: full (its producer cannot go on) or empty
 * (its consumer starves). From recorded waits when the queue has any, else
 * from its depth. */
typedef struct pp_stall {
  uint32_t queue;            /* index in pipe.queues */
  uint8_t full;              /* 1 full, 0 empty */
  uint8_t recorded;          /* 1 from pp_queue_wait_* events */
  int64_t start, end;        /* ns */
} pp_stall;

/* One stretch of an item's path: in a stage's zone, or between two. */
typedef struct pp_path_seg {
  const char *name;          /* zone name; for a wait the queue's name or
                                NULL when no queue joins the two stages */
  const char *from, *to;     /* waits: the stages on either side */
  int64_t ns;
  uint8_t wait;
} pp_path_seg;

typedef struct pp_flow_path {
  uint64_t id;
  int64_t start, total_ns, zone_ns, wait_ns;
  pp_path_seg *segs;         /* owned */
  size_t nsegs;
} pp_flow_path;

/* Per flow name: items followed from FLOW_BEGIN to FLOW_END. */
typedef struct pp_flow_stats {
  uint32_t loc;              /* canonical flow site */
  uint64_t items;            /* complete items */
  uint64_t incomplete;       /* begun and not ended, or ended unbegun */
  int64_t zone_ns, wait_ns;  /* summed over items */
  pp_hist latency;           /* first stage zone start -> last end, ns */
  pp_flow_path median, slowest;
  pp_path_seg *where;        /* owned: time per segment name summed over
                                items, largest first */
  size_t nwhere;
} pp_flow_stats;

/* A recommendation and the measured facts that triggered it. */
typedef struct pp_advice {
  const char *rule;          /* rule id (static), docs/analysis.md */
  int severity;              /* 2 high, 1 medium, 0 low */
  char *text;                /* owned */
  char *evidence;            /* owned */
} pp_advice;

#define PP_STALLS_MAX 16

typedef struct pp_pipeline {
  pp_queue_stats *queues;    /* by name */
  size_t nqueues;
  int queues_unavailable;    /* stats-mode file with queue sites */
  pp_stage_stats *stages;    /* in pipeline order where known */
  size_t nstages;
  int64_t win_start, win_end; /* pipeline window, ns */
  int32_t bound;             /* stage with the lowest capacity, -1 */
  double achieved_per_s;     /* items out of the last stage / window */
  double bound_per_s;        /* capacity of the bounding stage */
  double efficiency;         /* achieved / bound; < 0 when unavailable */
  pp_stall stalls[PP_STALLS_MAX]; /* longest first */
  size_t nstalls;
  uint64_t stall_periods;    /* all stall periods found */
  pp_flow_stats *flows;
  size_t nflows;
  pp_advice *advice;         /* by severity, then rule order */
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
  int used;                 /* the program called pp_gpu_zone_begin (or
                               there are GPU zones) */
  const char *unavailable;  /* META gpu_zones.unavailable, or NULL; points
                               into the trace */
  pp_zone_stats *zones;     /* per site, by total_ns descending (self = total;
                               no nesting on the GPU) */
  size_t nzones;
  pp_gpu_track *tracks;     /* by device, then stream */
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
  uint32_t loc;             /* the pool's name */
  uint32_t device;
  uint64_t allocs, frees;
  uint64_t unmatched_frees; /* frees of a pointer not allocated (or twice) */
  uint64_t untracked_allocs; /* allocations the analysis's live-pointer
                               table had no room for (PP_POOL_LIVE_MAX live
                               pointers, all pools): they add to in use and
                               are never taken off, so in use, peak, means,
                               steady and final are upper bounds */
  uint64_t untracked_frees;  /* frees of unknown pointers taken as frees of
                                those (not in unmatched_frees) */
  uint64_t peak;            /* high watermark of in-use bytes */
  int64_t peak_ts;          /* first time it was reached, ns */
  int has_reserve;          /* pp_mem_reserve was called */
  uint64_t reserved_at_peak;/* reserved bytes at the watermark */
  int64_t unused_at_peak;   /* reserved - in use at the watermark; negative
                               when more was allocated than reserved */
  double mean_in_use;       /* time-weighted mean */
  double mean_unused;       /* time-weighted mean of reserved - in use,
                               over the time a reservation was known */
  uint64_t steady;          /* steady-state level: time-weighted median of
                               in use over the second half of the trace */
  uint64_t final_in_use;
  uint64_t leaks;           /* allocations never freed */
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

typedef struct pp_profile {
  int64_t t0, t1;         /* first and last timestamp, ns */
  int64_t wall_ns;        /* t1 - t0 */
  pp_zone_stats *zones;   /* sorted by total_ns, descending */
  size_t nzones;
  pp_frame_stats *frames;
  size_t nframes;
  pp_counter_stats *counters;
  size_t ncounters;
  uint64_t events;        /* events recorded */
  uint64_t dropped;       /* events dropped, all threads */
  uint64_t unclosed;      /* zones that lost their end (closed by an outer
                             zone's end or the end of the trace) */
  uint64_t unmatched_ends;/* zone ends with no begin (dropped begins, flight
                             ring start) */
  pp_pair_counts pairing; /* trace mode: everything the zone pairing saw
                             (pair/zones.h); stats mode: zeros but for
                             what the STATS chunk holds */
  uint64_t ranges_unclosed; /* ranges with no end in the trace */
  uint64_t ranges_unbegun;  /* range ends with no begin in the trace */
  uint64_t ranges_lost;     /* stats mode: range halves the bounded table
                               had no room for (pair/intervals.h) */
  double event_cost_ns;   /* measured cost of one event, from META; 0 if
                             unknown */
  /* CPU time measured at the end of the session (META), -1 when not
   * recorded: the writer thread's, the sampler thread's and the whole
   * process's (which includes both). */
  int64_t writer_cpu_ns, sampler_cpu_ns, process_cpu_ns;
  pp_request_stats req;   /* requests and batches (pp_analyze_requests) */
  pp_pipeline pipe;       /* queues, stages, flows, advice
                             (pp_analyze_pipeline) */
  pp_gpu_stats gpu;       /* GPU zones (pp_analyze_gpu) */
  pp_mem_pool_stats *pools; /* device memory pools, by name then device */
  size_t npools;
} pp_profile;

typedef struct pp_trace {
  pp_meta *meta;
  size_t nmeta, cap_meta;
  pp_loc *locs;           /* index = loc id as used by events */
  size_t nlocs, cap_locs;
  pp_thread *threads;
  size_t nthreads, cap_threads;
  pp_clock_sync *clock;
  size_t nclock, cap_clock;
  uint32_t pid;
  pp_read_diag diag;
  pp_gpu_zone_rec *gpu;   /* GPU zones as read (any order); pp_analyze
                             sorts them by track, then start */
  size_t ngpu, cap_gpu;
  pp_range *ranges;       /* filled by pp_analyze, in start order */
  size_t nranges;
  pp_profile prof;        /* filled by pp_analyze */
  int analyzed;
  uint64_t req_warmup;    /* analysis option: requests left out as warm-up */
  pp_slo req_slo;         /* analysis option: SLOs for goodput */
  pp_note *notes;         /* anomalies and alerts, in time order */
  size_t nnotes, cap_notes;
  pp_cuda_trace cuda;     /* CUPTI activity records (reader) */
  struct pp_gpu_activity *cuda_an; /* their
                                  analysis (pp_analyze; NULL when
                                  the trace has no CUDA chunk) */
  uint16_t format_minor;           /* the file's minor format version (reader; a
                                      merge keeps the lower); 0 for a model built
                                      in memory */
  int from_stats;         /* stats-mode file: the reader filled prof (zones,
                             frames, counters, t0/t1, events, unclosed,
                             unmatched_ends) and threads' busy_ns from the
                             STATS chunk; there are no zone events, and
                             pp_analyze keeps those figures */
  pp_gpu_zone_agg *gpu_agg; /* stats-mode file since 1.3: GPU zones per
                             site and track, by site, device, stream */
  size_t ngpu_agg, cap_gpu_agg;
  int64_t gpu_agg_lost; /* zones the writer could not aggregate; -1 when
                           the STATS chunk has no GPU part */
  struct pp_stream *stream; /* trace mode: the streaming figures
                               (analyze/stream.h) while events are fed */
  unsigned char *streamed;  /* ... and once finished, as a STATS payload
                               that pp_analyze decodes (owned) */
  size_t nstreamed;
  int streamed_by_read; /* 1: from a read's stream, kept; 0: recomputed
                           from the stored events at each pp_analyze */
  struct pp_stream_results *streamres; /* a read's stream: the figures
                           beyond STATS, from every event (below) */
} pp_trace;

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
  pp_pipeline queues; /* only queues, nqueues, stalls, nstalls,
                         stall_periods */
  struct pp_pool_stream *pools_open;   /* fed, not yet finished */
  int have_pools;
  pp_mem_pool_stats *pools;
  size_t npools;
} pp_stream_results;

/* Look up a META value; NULL when absent. */
const char *pp_trace_meta(const pp_trace *t, const char *key);
/* The process that recorded th: a trace merged from several processes
 * (pp_trace_merge) holds threads of each. */
uint32_t pp_thread_pid(const pp_trace *t, const pp_thread *th);
/* The name of process pid of t (META process_name, or process_name.<pid>
 * for processes merged in); NULL when unknown. */
const char *pp_trace_process_name(const pp_trace *t, uint32_t pid);
/* The processes of t: t->pid, then those of its threads in increasing
 * order, each once, in *pids (malloc'd; free it). Returns how many; 0 when
 * out of memory. */
size_t pp_trace_pids(const pp_trace *t, uint32_t **pids);
/* Name of a loc (never NULL). */
const char *pp_trace_loc_name(const pp_trace *t, uint32_t loc);

/* One event handed to a streaming consumer: thread is the index in
 * t->threads (stable while the read or feed runs; the array itself may
 * move between calls), e->loc < t->nlocs. Returns 0 to go on; anything
 * else stops the read or feed, which fails. (src/model/feed.h says in
 * what order each producer hands events over.) */
typedef int (*pp_feed_fn)(void *arg, const pp_trace *t, uint32_t thread,
                          const pp_event *e);

/* How to read: which events to store, and who else sees them. */
typedef struct pp_read_opts {
  uint64_t keep_events; /* most thread events stored in the threads' ev:
                           those before a time chosen so that they fit,
                           on every thread (diag.first_unkept_ns);
                           UINT64_MAX: all */
  pp_feed_fn on_event;  /* each decoded thread event, stored or not, in
                           file order (each thread's in recording order,
                           threads interleaved chunk by chunk), its time
                           already in ns; NULL: none */
  void *arg;
  int scan_first; /* before the first on_event, find the trace's
                     earliest time (diag.first_ns), for a consumer that
                     writes times relative to it as the events go by:
                     the first pass decodes each event chunk it checks
                     (no second read), and every site an event names
                     exists before the first on_event */
} pp_read_opts;

/* Reader (src/format/reader.c). Returns 0 and fills *t, or -1 with a one-line
 * reason in err (which is always NUL-terminated), or PP_TRACE_ENOMEM when
 * memory ran out ("out of memory reading FILE (...)" in err; nothing is
 * kept, a partial trace is never returned). A damaged file still returns 0
 * when anything could be recovered; see t->diag. pp_trace_read_file checks
 * the file header from the first bytes and reads the rest chunk by chunk
 * (one chunk buffered at a time), so a FIFO, /dev/zero or any non-trace
 * input fails at once. */
#define PP_TRACE_ENOMEM (-2)
int pp_trace_read_file(const char *path, pp_trace *t, char *err,
                       size_t errlen);
int pp_trace_read_mem(const unsigned char *data, size_t len, pp_trace *t,
                      char *err, size_t errlen);
/* The same with options (NULL: store everything, as above). A regular
 * file is read in two passes: every chunk but the events first (sites,
 * threads, clock), then the event chunks again by offset, each decoded,
 * handed to o->on_event and stored only while o->keep_events allows, so
 * memory stays bounded whatever the file's length. A pipe or FIFO cannot
 * be read twice: its event chunks are held, still encoded (a few bytes an
 * event), until the second pass. On a failure of on_event the read fails
 * with PP_TRACE_ENOMEM. */
int pp_trace_read_file_opts(const char *path, pp_trace *t,
                            const pp_read_opts *o, char *err, size_t errlen);
int pp_trace_read_mem_opts(const unsigned char *data, size_t len,
                           pp_trace *t, const pp_read_opts *o, char *err,
                           size_t errlen);
/* The same read of a file, its second pass stepped by the caller, chunk
 * by chunk, so that several files can be read side by side (the Chrome
 * export of a run directory merges their events in time order).
 * pp__trace_reader_open reads the header and the first pass: t then holds
 * the sites (with those the events name but none defines), threads, clock
 * and meta, and with o->scan_first diag.first_ns; it returns 0 and *r, or
 * what pp_trace_read_file_opts returns on failure (nothing to free then).
 * pp__trace_reader_next: 1 while an event chunk is left, with the
 * earliest time in it (INT64_MIN when it holds no thread event or
 * o->scan_first is 0); 0 when the pass is over. pp__trace_reader_step
 * decodes that chunk, handing its events to o->on_event: 0, or -1 when the
 * pass is over. pp__trace_reader_finish ends the read, frees r, and
 * returns what pp_trace_read_file_opts would have (t is freed on
 * failure). */
typedef struct pp__trace_reader pp__trace_reader;
int pp__trace_reader_open(const char *path, pp_trace *t,
                          const pp_read_opts *o, pp__trace_reader **r,
                          char *err, size_t errlen);
int pp__trace_reader_next(const pp__trace_reader *r, int64_t *first_ns);
int pp__trace_reader_step(pp__trace_reader *r);
/* With o->scan_first: no event still to be decoded is earlier than this
 * (INT64_MAX: none is left); without: INT64_MIN. */
int64_t pp__trace_reader_horizon(const pp__trace_reader *r);
int pp__trace_reader_finish(pp__trace_reader *r, char *err, size_t errlen);
/* Release everything t holds: the model, and the analysis and streamed
 * figures (src/analyze/analyze.c, above the reader). */
void pp_trace_free(pp_trace *t);
/* The reader's part of it: what reading allocates (src/format/reader.c). */
void pp__trace_model_free(pp_trace *t);
/* Make t's stored events a window of the trace again after traces with
 * windows of their own were merged into it (pp_trace_merge): every stored
 * event at or after cut is dropped (diag.first_unkept_ns, events_kept
 * follow), then, while more than keep are stored, the cut moves earlier
 * as the reader's does. What stays is every event before the cut, on
 * every thread. cut INT64_MAX: only the keep bound. */
void pp__trace_window(pp_trace *t, int64_t cut, uint64_t keep);
/* Decode a STATS payload into t's profile, threads and pairing counts as
 * the reader does for a stats-mode file, without marking t as one
 * (pp_analyze, for the streamed figures of a trace-mode file). 0, or -1
 * when it is malformed or memory ran out. */
int pp__trace_apply_stats(pp_trace *t, const unsigned char *p, size_t n);

/* Analysis (src/analyze/analyze.c): zone instances per thread and the
 * profile. Returns 0, or -1 when out of memory. */
int pp_analyze(pp_trace *t);

/* Requests (src/analyze/requests.c). Rebuild t->prof.req from the events
 * with the options t->req_warmup and t->req_slo (pp_analyze calls it; call
 * it again after changing them). Returns 0, or -1 when out of memory. */
int pp_analyze_requests(pp_trace *t);
/* GPU zones and memory pools (src/analyze/gpu.c): fill prof.gpu,
 * prof.pools and the GPU zones' track and cpu_zone (pp_analyze calls it
 * after the zones). Returns 0, or -1 when out of memory. */
int pp_analyze_gpu(pp_trace *t);
/* Release prof.gpu and prof.pools and zero them. */
void pp_gpu_stats_free(pp_profile *p);

/* Release what prof.req holds and zero it. */
void pp_request_stats_free(pp_request_stats *r);
/* Energy the run used (src/analyze/energy.c), the numerator of energy per
 * frame, per request and per output token: the CPU package energy (RAPL
 * counter "energy.package_j") plus the GPU energy of the run's GPUs
 * ("gpu.run_energy_j", else all GPUs' "gpu.energy_j"), each where the
 * trace measured it. Each is its counter's last value: the whole sampled
 * run, warm-up and idle time included, so a figure per frame or per request
 * is that run's energy divided by a count, not the energy of one frame. */
typedef struct pp_energy {
  double joules;           /* cpu_j + gpu_j */
  double cpu_j;            /* CPU package energy, 0 unless has_cpu */
  double gpu_j;            /* GPU energy, 0 unless has_gpu */
  int has_cpu, has_gpu;    /* which sources the trace measured */
  const char *gpu_counter; /* "gpu.run_energy_j", "gpu.energy_j" or NULL */
  /* "CPU package", "GPU", "CPU package + GPU", or the reason there is no
   * figure; a static string. */
  const char *sources;
} pp_energy;
/* Fill *e from t's counters. Returns 1 when some source was measured, else
 * 0 with every figure 0 and the reason in e->sources. */
int pp_run_energy(const pp_trace *t, pp_energy *e);
/* Parse "ttft=200ms,tpot=40ms,e2e=2s" (units ns, us, ms, s; any subset,
 * comma-separated) into *slo. Returns 0, or -1 with a one-line reason in
 * err. */
int pp_slo_parse(const char *spec, pp_slo *slo, char *err, size_t errlen);
/* MLPerf-style early-stopping minimum: the smallest number of requests n
 * for which P[Binomial(n, 1 - pct/100) <= over + 1] <= 1 - confidence,
 * over being the over-latency requests seen (64 for p90 and 662 for p99
 * at confidence 0.99 with none over). 0 for invalid arguments. */
uint64_t pp_request_min_count(double pct, double confidence, uint64_t over);

/* Queues, stage bottlenecks, flow critical paths and recommendations
 * (src/analyze/queues.c, bottleneck.c, advice.c) into t->prof.pipe;
 * pp_analyze calls it. Needs zone instances (run after them). Returns 0,
 * or -1 when out of memory. */
int pp_analyze_pipeline(pp_trace *t);
/* Release what prof.pipe holds and zero it. */
void pp_pipeline_free(pp_pipeline *p);

/* Move src's sites, threads and events into dst (src/analyze/merge.c); both
 * must be traces of the same host (monotonic ns). src keeps only what is
 * left to free with pp_trace_free. Any analysis of either is discarded.
 * Returns 0, -1 when out of memory, -2 when either is a stats-mode file.
 * clean_end stays dst's: a run is complete when its main process is. */
int pp_trace_merge(pp_trace *dst, pp_trace *src);

#endif /* PP_MODEL_H */
