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
                    (the batch size) */
  } v;
  uint64_t v2;   /* since 1.1, REQ_* and BATCH: REQ_TOKENS tokens,
                    REQ_END zigzag(status), BATCH padded size; else 0 */
} pp_event;

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
  char *name;          /* "" when unnamed */
  pp_event *ev;
  size_t nev, cap_ev;
  uint64_t dropped;    /* events this thread could not record */
  pp_zone_inst *zones; /* filled by pp_analyze */
  size_t nzones, cap_zones;
  int64_t busy_ns;     /* time covered by top-level zones */
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
} pp_read_diag;

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
  uint64_t unclosed;      /* zones closed by the end of the trace */
  uint64_t unmatched_ends;/* zone ends with no begin (dropped begins, flight
                             ring start) */
  uint64_t ranges_unclosed; /* ranges with no end in the trace */
  double event_cost_ns;   /* measured cost of one event, from META; 0 if
                             unknown */
  pp_request_stats req;   /* requests and batches (pp_analyze_requests) */
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
  pp_range *ranges;       /* filled by pp_analyze, in start order */
  size_t nranges;
  pp_profile prof;        /* filled by pp_analyze */
  int analyzed;
  uint64_t req_warmup;    /* analysis option: requests left out as warm-up */
  pp_slo req_slo;         /* analysis option: SLOs for goodput */
  pp_cuda_trace cuda;     /* CUPTI activity records (reader) */
  struct pp_gpu_activity *gpu; /* their analysis (pp_analyze; NULL when
                                  the trace has no CUDA chunk) */
  int from_stats;         /* stats-mode file: the reader filled prof (zones,
                             frames, counters, t0/t1, events, unclosed,
                             unmatched_ends) and threads' busy_ns from the
                             STATS chunk; there are no zone events, and
                             pp_analyze keeps those figures */
} pp_trace;

/* Look up a META value; NULL when absent. */
const char *pp_trace_meta(const pp_trace *t, const char *key);
/* Name of a loc (never NULL). */
const char *pp_trace_loc_name(const pp_trace *t, uint32_t loc);

/* Reader (src/format/reader.c). Returns 0 and fills *t, or -1 with a one-line
 * reason in err (which is always NUL-terminated). A damaged file still
 * returns 0 when anything could be recovered; see t->diag. */
int pp_trace_read_file(const char *path, pp_trace *t, char *err,
                       size_t errlen);
int pp_trace_read_mem(const unsigned char *data, size_t len, pp_trace *t,
                      char *err, size_t errlen);
void pp_trace_free(pp_trace *t);

/* Analysis (src/analyze/analyze.c): zone instances per thread and the
 * profile. Returns 0, or -1 when out of memory. */
int pp_analyze(pp_trace *t);

/* Requests (src/analyze/requests.c). Rebuild t->prof.req from the events
 * with the options t->req_warmup and t->req_slo (pp_analyze calls it; call
 * it again after changing them). Returns 0, or -1 when out of memory. */
int pp_analyze_requests(pp_trace *t);
/* Release what prof.req holds and zero it. */
void pp_request_stats_free(pp_request_stats *r);
/* Parse "ttft=200ms,tpot=40ms,e2e=2s" (units ns, us, ms, s; any subset,
 * comma-separated) into *slo. Returns 0, or -1 with a one-line reason in
 * err. */
int pp_slo_parse(const char *spec, pp_slo *slo, char *err, size_t errlen);
/* MLPerf-style early-stopping minimum: the smallest number of requests n
 * for which P[Binomial(n, 1 - pct/100) <= over + 1] <= 1 - confidence,
 * over being the over-latency requests seen (64 for p90 and 662 for p99
 * at confidence 0.99 with none over). 0 for invalid arguments. */
uint64_t pp_request_min_count(double pct, double confidence, uint64_t over);

/* Move src's sites, threads and events into dst (src/analyze/merge.c); both
 * must be traces of the same host (monotonic ns). src keeps only what is
 * left to free with pp_trace_free. Any analysis of either is discarded.
 * Returns 0, -1 when out of memory, -2 when either is a stats-mode file.
 * clean_end stays dst's: a run is complete when its main process is. */
int pp_trace_merge(pp_trace *dst, pp_trace *src);

#endif /* PP_MODEL_H */
