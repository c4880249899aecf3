/* SPDX-License-Identifier: MIT */
/*
 * The trace model: what one profiled process recorded, as decoded. The
 * reader (model/reader.h) fills a pp_trace from a .pptrace file; the
 * analysis (analyze/analysis.h) and every exporter read it and never
 * change it: what they derive lives in a pp_analysis of its own.
 *
 * Invariants: all times are nanoseconds on the process's monotonic clock
 * (CLOCK_MONOTONIC), already converted from ticks; per thread, events are
 * in recording order; GPU zones are in (device, stream, start, site)
 * order. Strings are owned by the model and NUL-terminated (they may hold
 * any bytes, exporters must escape).
 */
#ifndef PP_MODEL_MODEL_H
#define PP_MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "stacks.h"

/* A static site as read from the trace (SRCLOC chunk). */
typedef struct pp_loc {
  uint32_t id;
  uint32_t kind; /* pp_kind */
  char *name, *function, *file;
  uint32_t line;
} pp_loc;

/* One decoded event. */
typedef struct pp_event {
  int64_t ts;   /* ns, monotonic clock */
  uint32_t loc; /* index into pp_trace.locs */
  uint8_t type; /* enum ppt_event_type */
  union {
    int64_t i;   /* COUNTER_SET / COUNTER_ADD */
    double f;    /* COUNTER_SETF */
    uint64_t id; /* FLOW_*, RANGE_*, REQ_* (the caller's id), BATCH
                    (the batch size), MEM_ALLOC / MEM_FREE (the pointer) */
  } v;
  uint64_t v2; /* since 1.1, REQ_* and BATCH: REQ_TOKENS tokens,
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
} pp_gpu_zone_rec;

typedef struct pp_thread {
  uint64_t tid;
  uint32_t pid; /* the process that recorded it (merged traces);
                   0: the trace's pid (pp_thread_pid) */
  char *name;   /* "" when unnamed */
  pp_event *ev;
  size_t nev, cap_ev;
  uint64_t dropped; /* events this thread could not record */
} pp_thread;

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

/* The pids of unfinished processes a merged trace lists (the rest are
 * counted). */
#define PP_UNFINISHED_LISTED 8u

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
  /* merged traces (pp_trace_merge): the processes whose file had no END
   * chunk (killed, or ended with _exit before the writer's last pass),
   * the first of their pids */
  uint64_t parts_unfinished;
  uint32_t unfinished_pid[PP_UNFINISHED_LISTED];
} pp_read_diag;

/* How many of d's unfinished processes have their pid listed. */
static inline size_t pp_unfinished_listed(const pp_read_diag *d) {
  return d->parts_unfinished < PP_UNFINISHED_LISTED
             ? (size_t)d->parts_unfinished
             : PP_UNFINISHED_LISTED;
}

/* An anomaly or alert raised by the live statistics inside the profiled
 * process (since format 1.2; event types 22 and 23). */
typedef struct pp_note {
  int64_t ts;    /* ns, monotonic clock */
  uint8_t type;  /* PPT_EV_ANOMALY or PPT_EV_ALERT */
  char *what;    /* "p99", "rate", "mem", "swap", "psi.cpu", ... */
  char *which;   /* zone name, "request e2e", "system", "gpu0", ... */
  char *message; /* one line for people */
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
  int64_t queued; /* 0: not collected */
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
  uint64_t tid; /* OS thread id (gettid) of the caller */
  uint32_t domain, cbid, name, correlation, result;
} pp_cuda_api;

typedef struct pp_cuda_trace {
  char **names; /* kernel and API names by id (NULL: undefined) */
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
  uint64_t dropped; /* records CUPTI or the collector dropped */
  uint64_t chunks;  /* CUDA chunks read */
} pp_cuda_trace;

/* Name of a kernel or API call (never NULL). */
const char *pp_cuda_name(const pp_cuda_trace *c, uint32_t id);
/* Release what c holds and zero it. */
void pp_cuda_trace_free(pp_cuda_trace *c);

/* The zones of one site whose inputs had one shape, as an imported
 * profile gives them (torch's "Input Dims", ONNX Runtime's
 * input_type_shape: import/profile.h), over every event of the profile
 * (not only the stored ones). Self time is the zones' duration less their
 * direct children's, as the analysis counts it. */
typedef struct pp_op_shape {
  uint32_t loc;
  char *shape; /* the shapes as text (docs/import.md); NULL: shapes the
                  importer had no room to tell apart, counted together */
  uint64_t count;
  int64_t total_ns, self_ns;
} pp_op_shape;

typedef struct pp_trace {
  pp_meta *meta;
  size_t nmeta, cap_meta;
  pp_loc *locs; /* index = loc id as used by events */
  size_t nlocs, cap_locs;
  pp_thread *threads;
  size_t nthreads, cap_threads;
  /* The reader's index of threads by tid (open addressing, index + 1; 0
   * empty), covering threads[0 .. tid_index_n): looked up while
   * tid_index_n == nthreads, else a search (a merge or a builder added
   * threads after it). */
  uint32_t *tid_index;
  size_t tid_index_cap, tid_index_n;
  pp_clock_sync *clock;
  size_t nclock, cap_clock;
  uint32_t pid;
  pp_read_diag diag;
  pp_gpu_zone_rec *gpu; /* GPU zones, in the order above */
  size_t ngpu, cap_gpu;
  pp_note *notes; /* anomalies and alerts, in time order */
  size_t nnotes, cap_notes;
  pp_cuda_trace cuda;    /* CUPTI activity records */
  uint16_t format_minor; /* the file's minor format version (a merge
                            keeps the lower); 0 for a model built in
                            memory */
  int from_stats;        /* stats-mode file: its figures are the STATS
                            payload below; there are no zone events */
  unsigned char *stats;  /* ... that payload, checked by the reader
                            (every site and thread it names exists);
                            the analysis decodes it */
  size_t nstats;
  /* A merged run of stats-mode files: each process's own payload (the
   * one above is their sum), its sites renumbered by map (nmap of them;
   * NULL: as they are), for the figures per process. */
  struct pp_stats_part {
    uint32_t pid;
    unsigned char *stats;
    size_t nstats;
    uint32_t *map;
    size_t nmap;
  } *stats_parts;
  size_t nstats_parts;
  pp_op_shape *shapes; /* an imported profile's operators by input
                          shape, in no particular order */
  size_t nshapes, cap_shapes;
  pp_stack_set stacks; /* CPU stack samples (stacks.h) */
} pp_trace;

/* Look up a META value; NULL when absent. */
const char *pp_trace_meta(const pp_trace *t, const char *key);
/* A META value (or any text s) as a number: the whole text one finite
 * decimal number, with an exponent or not ("12", "-3.5", "1e+20"); no
 * space, no sign "+", no hexadecimal, no unit.
 * 1 with *out set, else 0 (absent, empty, or not such a number). */
int pp_meta_number(const char *s, double *out);
/* pp_meta_number of the META value of key. */
int pp_trace_meta_num(const pp_trace *t, const char *key, double *out);
/* The reason META gives for the first group of groups (NULL-terminated)
 * that has one ("unavailable.<group>"), its "unavailable: " prefix
 * stripped; NULL when none has. */
const char *pp_trace_unavailable(const pp_trace *t, const char *const *groups);
/* A reason text without the "unavailable: " (or "hardware counters
 * unavailable: ") its producer may have put in front. */
const char *pp_reason_strip(const char *r);
/* Add a META pair (copies; NULL is taken as ""). A later pair of the same
 * key overrides an earlier one. 0, or -1 when out of memory. */
int pp__meta_add(pp_trace *t, const char *key, const char *value);
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
/* The slot of tid in a thread index of cap slots (a power of two). */
static inline size_t pp__tid_slot(uint64_t tid, size_t cap) {
  uint64_t h = tid * UINT64_C(0x9E3779B97F4A7C15);
  return (size_t)(h >> 32) & (cap - 1);
}

/* The index in t->threads of the first thread with this tid, or
 * t->nthreads when there is none. */
size_t pp_trace_thread_index(const pp_trace *t, uint64_t tid);
/* Name of a loc (never NULL). */
const char *pp_trace_loc_name(const pp_trace *t, uint32_t loc);

/* One event handed to a streaming consumer: thread is the index in
 * t->threads (stable while the read or feed runs; the array itself may
 * move between calls), e->loc < t->nlocs. Returns 0 to go on; anything
 * else stops the read or feed, which fails. (src/model/feed.h says in
 * what order each producer hands events over.) */
typedef int (*pp_feed_fn)(void *arg, const pp_trace *t, uint32_t thread,
                          const pp_event *e);

/* Release everything t holds (the reader's allocations) and zero it. */
void pp_trace_free(pp_trace *t);

/* Move src's sites, threads and events into dst (model/merge.c); both
 * must be traces of the same host (monotonic ns). src keeps only what is
 * left to free with pp_trace_free. Returns 0, -1 when out of memory, -2
 * when either is a stats-mode file. clean_end stays dst's: a run is
 * complete when its main process is. */
int pp_trace_merge(pp_trace *dst, pp_trace *src);
/* The same for the traces of one run's processes (a program and its
 * children): a zone or mark site of src that dst has (model/sites.h) is
 * dst's, so a zone every process recorded is one zone. */
int pp_trace_merge_process(pp_trace *dst, pp_trace *src);
/* Either (share: as pp_trace_merge_process), and *map_out (when not NULL)
 * the id in dst of each of src's sites as they were before the merge
 * (pp__free it; NULL on failure). */
int pp_trace_merge_ex(pp_trace *dst, pp_trace *src, int share,
                      uint32_t **map_out);

/* Make t's stored events a window of the trace again after traces with
 * windows of their own were merged into it (pp_trace_merge): every stored
 * event at or after cut is dropped (diag.first_unkept_ns, events_kept
 * follow), then, while more than keep are stored, the cut moves earlier
 * as pp__trace_lower_cut does. What stays is every event before the cut,
 * on every thread. cut INT64_MAX: only the keep bound (model/window.c). */
void pp__trace_window(pp_trace *t, int64_t cut, uint64_t keep);
/* More events are stored than keep allows: move the cut (*cut, set when
 * *cut_set) earlier, to the time below which about three quarters of the
 * stored events lie, and drop every thread's stored events at or after
 * it (the reader calls it as events are stored). */
void pp__trace_lower_cut(pp_trace *t, uint64_t keep, int64_t *cut,
                         int *cut_set);

/* Sort t's GPU zones into the model's order (the reader and the merge
 * call it). */
void pp__trace_sort_gpu(pp_trace *t);

#endif /* PP_MODEL_MODEL_H */
