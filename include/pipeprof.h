/* SPDX-License-Identifier: MIT */
/*
 * pipeprof: low-overhead profiler for GPU and ML inference pipelines.
 *
 * This is the one public header. Anything not declared here is not API.
 * Every call documents its cost, which threads may call it and who owns the
 * memory it touches.
 *
 * Quick use:
 *
 *   #include <pipeprof.h>
 *   void decode(frame *f) {
 *     PP_ZONE("decode");          // timed until the end of the block
 *     ...
 *   }
 *
 * and run the program with PIPEPROF=1 in the environment (or call pp_init).
 * Build with -DPP_DISABLE to compile every instrumentation macro out.
 */
#ifndef PIPEPROF_H
#define PIPEPROF_H

#include <stddef.h>
#include <stdint.h>

#include "pipeprof/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(PP_STATIC_BUILD)
#define PP_API
#elif defined(__GNUC__)
#define PP_API __attribute__((visibility("default")))
#else
#define PP_API
#endif

#if defined(__GNUC__)
#define PP__LIKELY(x) __builtin_expect(!!(x), 1)
#define PP__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define PP__LIKELY(x) (x)
#define PP__UNLIKELY(x) (x)
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                  */
/* ------------------------------------------------------------------------ */

/** Library version as PP_VERSION_NUMBER would give it. Any thread. */
PP_API unsigned pp_version_number(void);
/** Library version as "MAJOR.MINOR.PATCH"; static storage. Any thread. */
PP_API const char *pp_version_string(void);

/* ------------------------------------------------------------------------ */
/* Status codes                                                             */
/* ------------------------------------------------------------------------ */

/* Values are pinned forever; retired codes keep their number. */
#define PP_STATUS_MAP(X)                                                       \
  X(OK, 0, "success")                                                          \
  X(EINVAL, -1, "invalid argument")                                            \
  X(ENOMEM, -2, "out of memory")                                               \
  X(EIO, -3, "input/output error")                                             \
  X(EBUSY, -4, "profiler already running")                                     \
  X(ENOTRUNNING, -5, "profiler not running")                                   \
  X(EENV, -6, "invalid environment variable")                                  \
  X(ENOTSUP, -7, "not supported")                                              \
  X(EFORMAT, -8, "malformed trace data")                                       \
  X(EMODE, -9, "not available in this mode")                                   \
  X(EFORKED, -10, "called in a forked child of the profiled process")          \
  X(EAGAIN, -11, "would block (queue full or empty)")                          \
  X(ETIMEDOUT, -12, "timed out")                                               \
  X(ECLOSED, -13, "closed")

typedef enum pp_status {
#define PP__STATUS_ENUM(name, value, text) PP_##name = value,
  PP_STATUS_MAP(PP__STATUS_ENUM)
#undef PP__STATUS_ENUM
} pp_status;

/** Text for a status code ("success", "invalid argument", ...); static
 * storage; unknown codes give "unknown error". Any thread. */
PP_API const char *pp_strerror(int status);
/** Symbolic name of a status code ("PP_EINVAL"); static storage. */
PP_API const char *pp_err_name(int status);
/** Human detail for the calling thread's last failed control call
 * (pp_init, pp_flight_dump, ...), or "" when there is none: each thread's
 * own, as errno. Valid until that thread's next control call. */
PP_API const char *pp_last_error(void);

/* ------------------------------------------------------------------------ */
/* Session control                                                          */
/* ------------------------------------------------------------------------ */

typedef enum pp_mode {
  /** Per-zone statistics only: fixed memory, summary written at exit. */
  PP_MODE_STATS = 0,
  /** Every event streamed to the trace file by a background writer. */
  PP_MODE_TRACE = 1,
  /** Bounded ring per thread, written at exit, on SIGINT/SIGTERM, or by
   * pp_flight_dump(). */
  PP_MODE_FLIGHT = 2
} pp_mode;

/**
 * Session options. Fill with pp_config_init() first, then change fields:
 * new fields are only ever added at the end and struct_size tells the
 * library which ones the caller knows.
 */
typedef struct pp_config {
  uint32_t struct_size;     /**< sizeof(pp_config), set by pp_config_init */
  pp_mode mode;             /**< default PP_MODE_TRACE */
  const char *out_path;     /**< output file; NULL: pipeprof-<pid>.pptrace.
                                 Copied by pp_init. */
  const char *process_name; /**< name shown in traces; NULL: from /proc.
                                 Copied by pp_init. */
  uint32_t buffer_kib;      /**< per-thread ring in KiB, power of two,
                                 16..1048576; default 1024 (flight: 4096) */
  uint32_t flush_ms;        /**< writer period in ms, 1..1000; default 10 */
  int install_signals;      /**< 1 (default): flush on SIGINT/SIGTERM when
                                 the program has no handler of its own */
  int start_enabled;        /**< 1 (default): record from pp_init on */
  uint32_t sample_hz;       /**< 0 (default): no sampler; 1..1000: sample
                                 this process and the system that often
                                 (counter tracks "sys.*", "proc.*",
                                 "power.*"; see docs/api.md) */
  const char *http_addr;    /**< NULL (default): PIPEPROF_HTTP decides;
                                 else serve /metrics and /api/v1 on
                                 "PORT" (loopback), ":PORT" or
                                 "IPV4:PORT" (docs/http.md). Since
                                 0.1.0 */
  const char *live;         /**< NULL (default): PIPEPROF_LIVE decides;
                                 else the live statistics' spec ("off",
                                 docs/live.md). Read during pp_init only.
                                 Since 0.1.0 */
  const char *alerts;       /**< NULL (default): PIPEPROF_ALERTS decides;
                                 else alert rules (docs/live.md). Since
                                 0.2.0 */
  uint32_t gpu_slots;       /**< 0 (default): PIPEPROF_GPU_SLOTS or 1024;
                                 else 2..65536 CUDA event pairs for GPU
                                 zones. Since 0.1.0 */
  int cuda;                 /**< 1: record CUDA kernels and copies through
                                 CUPTI (trace mode), as PIPEPROF_CUDA=1.
                                 Since 0.1.0 */
  uint64_t reserved[4];     /**< zero */
} pp_config;

/** Fill cfg with defaults. Any thread. */
PP_API void pp_config_init(pp_config *cfg);

/**
 * Start profiling. cfg NULL means defaults. Starts one background writer
 * thread. Returns PP_OK, PP_EBUSY when a session runs, PP_EINVAL for a bad
 * option, PP_EENV for an invalid PIPEPROF_LIVE, PIPEPROF_ALERTS or
 * PIPEPROF_GPU_SLOTS (read when the field is unset, see docs/live.md),
 * PP_EIO when the output cannot be
 * created (see pp_last_error()).
 * Any thread; not concurrently with pp_shutdown().
 */
PP_API int pp_init(const pp_config *cfg);

/**
 * Start profiling from the environment (the PIPEPROF_* variables that
 * `pipeprof help env` lists, docs/api.md). The library calls this itself when
 * it is loaded; programs need not. An invalid value prints one line on
 * stderr and leaves profiling off. Returns PP_OK also when PIPEPROF is unset
 * or 0, and PP_EBUSY (silently) when a session already runs. Note that with
 * PIPEPROF=1 in the environment a session starts at load time, so a later
 * pp_init() of the program's own returns PP_EBUSY.
 */
PP_API int pp_init_from_env(void);

/**
 * Stop profiling: drains every thread's buffer, finishes the output file
 * and joins the writer. Zones still open have no end event in the file;
 * readers close them at the trace's last event and flag them unclosed.
 * Safe to call when not running (returns PP_ENOTRUNNING; also in a forked
 * child, which never owns the parent's session). Called automatically at
 * exit. Any thread; not concurrently with pp_init().
 */
PP_API int pp_shutdown(void);

/** 1 while a session runs (initialised and not shut down), else 0. */
PP_API int pp_is_running(void);

/**
 * Switch recording on or off at run time without ending the session. Zones
 * begun while off are not recorded, nor are their ends. Any thread; takes
 * effect for other threads within a few hundred nanoseconds. Before
 * pp_init() it has no lasting effect: pp_config.start_enabled decides.
 */
PP_API void pp_set_enabled(int on);
/** 1 when events are being recorded now. */
PP_API int pp_is_enabled(void);

/**
 * Flight mode: write the current contents of every thread's ring to path
 * (NULL: the session's out_path) as a complete .pptrace file. The rings go
 * on recording. Returns PP_EMODE outside flight mode. Any thread; blocks
 * the caller for the write (milliseconds), never other threads.
 */
PP_API int pp_flight_dump(const char *path);

/** Path of the session's output file; "" when not running. Valid until
 * pp_shutdown(). */
PP_API const char *pp_output_path(void);

/**
 * Add key = value to the session's metadata (the trace's META, shown by
 * `pipeprof report` and kept in the summary JSON), for example
 * pp_metadata("user.model", "resnet50"). key starts with "user." (the
 * program's) or "binding." (a language binding's figures, such as the
 * Python layer's cost per event), is at most 128 bytes of printable
 * ASCII; value (NULL: "") at most 4096 bytes. A later value of a key
 * replaces an earlier one. Control path: takes a lock, copies both.
 * Returns PP_OK, PP_ENOTRUNNING, PP_EINVAL (a bad key or value) or
 * PP_ENOMEM. Added in 0.1.0.
 */
PP_API int pp_metadata(const char *key, const char *value);

/* ------------------------------------------------------------------------ */
/* Recording                                                                */
/* ------------------------------------------------------------------------ */

/** What a static descriptor names. */
typedef enum pp_kind {
  PP_KIND_ZONE = 1,
  PP_KIND_COUNTER = 2,
  PP_KIND_MARK = 3,
  PP_KIND_FRAME = 4,
  PP_KIND_FLOW = 5,
  /** A queue between two stages (pp_queue_declare): name is the queue's,
   * function the producing stage, file the consuming stage, line the
   * capacity (0: unbounded). Added in 0.1.0. */
  PP_KIND_QUEUE = 6,
  PP_KIND_POOL = 7, /**< a device memory pool (pp_mem_*) */
  /** A metric the library samples itself (sys.*, proc.*, gpuN.*, ...; the
   * table is src/metrics/registry.h). Recorded as counter events, but in a
   * namespace of its own: a user counter with the same name stays a user
   * counter, which no alert or system report reads. */
  PP_KIND_METRIC = 8
} pp_kind;

/**
 * Static per-call-site descriptor. The macros build one per call site as a
 * `static const` object; the library identifies a site by its address and
 * never writes to it. Everything it points to must live as long as the
 * program (string literals do).
 */
typedef struct pp_srcloc {
  const char *name;     /**< zone, counter, frame, mark or flow name */
  const char *function; /**< enclosing function or NULL */
  const char *file;     /**< source file or NULL */
  uint32_t line;        /**< source line or 0 */
  uint32_t kind;        /**< a pp_kind */
} pp_srcloc;

/** Token returned by a zone begin and passed to its end, by value: the
 * site, or NULL when nothing was recorded at begin (then the end records
 * nothing either). One pointer, so that a zone around a hot loop costs the
 * loop at most one register. */
typedef struct pp_zone {
  const pp_srcloc *loc;
} pp_zone;

/**
 * Bit 0 is set while recording is on (the other bits are the library's).
 * Read by the macros so that a disabled profiler costs one load and one
 * branch per call site. Not API to read or write directly.
 */
PP_API extern int pp__active;
#if defined(__GNUC__)
#define PP__ACTIVE() (__atomic_load_n(&pp__active, __ATOMIC_RELAXED) & 1)
#else
#define PP__ACTIVE() (*(volatile int *)&pp__active & 1)
#endif

/*
 * Hot-path calls. Cost: a timestamp read and one or two 16-byte stores into
 * a thread-local ring; no lock, allocation or formatting. A thread's first
 * event allocates its ring (slow path, once per thread). When a ring passes
 * half full the recording thread wakes the writer with one futex call (slow
 * path, once per half ring, e.g. once per 32768 events by default). When a
 * ring is full the event is dropped and counted. Any thread.
 */

/** Begin a zone at a static site. End it exactly once, on the same thread,
 * with pp_zone_end(). */
PP_API pp_zone pp_zone_begin(const pp_srcloc *loc);
/** End a zone begun on this thread. Zones must nest per thread. */
PP_API void pp_zone_end(pp_zone zone);
/**
 * Begin a zone whose name is known only at run time. The name is copied and
 * interned on first use (a lock taken once per distinct name); later calls
 * hash the string (about 10-30 ns for short names) and take no lock. name
 * may be freed after the call. Interned names live until process exit;
 * at most 65536 distinct names, further ones share the name "(overflow)".
 */
PP_API pp_zone pp_zone_begin_name(const char *name);
/**
 * Declare a site made at run time (a language binding's pp_srcloc, which
 * must then live until process exit). Optional: it names the site in the
 * process's durable rings at once, so that a process killed before the
 * writer met the site still has its events named when salvaged (run-time
 * names are declared by interning them; a static site first met after
 * the writer's last pass is salvaged unnamed). Takes a lock; at most
 * 65536 sites are declared, later ones are ignored. NULL is ignored.
 */
PP_API void pp_site_declare(const pp_srcloc *loc);

/**
 * Ranges that may start and end on different threads and need not nest
 * (an asynchronous request, nvtxRangeStart/End). Start returns an id, never
 * 0 while recording (0 when not recording: ending 0 does nothing). The name
 * is interned as for pp_zone_begin_name(). Ranges get the full statistics
 * of zones (self time = duration) and show on their own async tracks. Any
 * thread; one atomic increment more than a zone.
 */
PP_API uint64_t pp_range_start(const char *name);
PP_API void pp_range_end(uint64_t id);

/**
 * Requests and tokens (LLM serving). id is the caller's, unique among the
 * requests in flight; it may be reused once its request has ended. The
 * calls for one request may come from any threads and requests may
 * overlap. `pipeprof report` pairs them by id and prints E2E latency
 * (begin to end), TTFT (begin to first token), TPOT, inter-token latency,
 * throughput, goodput against SLOs and batch statistics. Trace and flight
 * modes only: stats mode records nothing for these calls' statistics.
 * Cost: as a counter update (two slots). Any thread.
 */
/** A request arrives (starts being timed). */
PP_API void pp_request_begin(uint64_t id);
/** The request's first output token is ready. Optional: without it the
 * first pp_request_tokens() marks the first token. Counts no token. */
PP_API void pp_request_first_token(uint64_t id);
/** n output tokens of the request were produced now (one streamed chunk).
 * The output token count of a request is the sum of its n. */
PP_API void pp_request_tokens(uint64_t id, uint32_t n);
/** The request finished: status 0 is success, anything else a failure
 * (failed requests are counted but left out of the latency figures). */
PP_API void pp_request_end(uint64_t id, int status);
/** One batch was run with size real items, padded to padded_size (0 or
 * less than size: no padding). Gives the mean effective batch size, the
 * padding waste 1 - sum(size) / sum(padded_size) and batches per size. */
PP_API void pp_batch(uint32_t size, uint32_t padded_size);

/** Record a counter value or change at a static site. */
PP_API void pp_counter_set_loc(const pp_srcloc *loc, int64_t value);
PP_API void pp_counter_add_loc(const pp_srcloc *loc, int64_t delta);
PP_API void pp_counter_setf_loc(const pp_srcloc *loc, double value);
/** Same with a run-time name, interned as for pp_zone_begin_name(). */
PP_API void pp_counter_set(const char *name, int64_t value);
PP_API void pp_counter_add(const char *name, int64_t delta);
PP_API void pp_counter_setf(const char *name, double value);

/** Instant event ("cache flushed") at a static site or a run-time name. */
PP_API void pp_mark_loc(const pp_srcloc *loc);
PP_API void pp_mark(const char *name);

/** End of one frame of the named stream ("camera0"): gives frame times,
 * FPS and jitter per stream. */
PP_API void pp_frame_mark_loc(const pp_srcloc *loc);
PP_API void pp_frame_mark(const char *name);

/**
 * Flows follow one item (a frame, a request) across threads and stages. id
 * is the caller's, unique among live flows of the same name; begin once,
 * step at each stage, end once. Each point binds to the zone open on the
 * calling thread at that moment.
 */
PP_API void pp_flow_begin_loc(const pp_srcloc *loc, uint64_t id);
PP_API void pp_flow_step_loc(const pp_srcloc *loc, uint64_t id);
PP_API void pp_flow_end_loc(const pp_srcloc *loc, uint64_t id);
PP_API void pp_flow_begin(const char *name, uint64_t id);
PP_API void pp_flow_step(const char *name, uint64_t id);
PP_API void pp_flow_end(const char *name, uint64_t id);

/**
 * Queues between pipeline stages (added in 0.1.0). Declare each queue once
 * with the names of the stage that fills it and the stage that drains it;
 * then record every item put in and taken out. `pipeprof report` derives
 * per queue the depth over time, each item's wait (push to pop, paired by
 * item id), time spent full and empty and throughput, and from all queues
 * the stage that bounds the pipeline's throughput (docs/analysis.md).
 *
 * Stage names are matched against zone names: the time a stage is busy is
 * the time inside zones named exactly like the stage (PP_ZONE("decode")
 * for the stage "decode").
 *
 * The library keeps each queue's depth itself: pushes minus pops since the
 * declaration, counted also while recording is off, and written with every
 * queue event (so depth survives dropped events and flight-mode rings that
 * start mid-stream). Declare a queue while it is empty, and record a push
 * before the consumer can see the item and a pop after taking it: inside
 * the queue's own lock is best (these calls take no lock and make no system
 * call; holding a lock around them costs nothing extra).
 */
typedef struct pp_queue pp_queue;

/** Why a thread waits on a queue (pp_queue_wait_begin/end). */
#define PP_QUEUE_FULL 1  /**< a producer waits: the queue is full */
#define PP_QUEUE_EMPTY 2 /**< a consumer waits: the queue is empty */

/**
 * Declare the queue called name, filled by the stage from_stage and drained
 * by to_stage (either may be NULL or "": unknown), holding at most capacity
 * items (0 or less: unbounded). Strings are copied. Idempotent by name: a
 * second call with the same name returns the first handle and ignores the
 * other arguments. The handle lives until the process exits and is valid
 * across sessions (it may be declared before pp_init()). Returns NULL only
 * when out of memory or name is NULL; the calls below accept NULL and do
 * nothing. Control path: takes a lock and allocates; any thread.
 */
PP_API pp_queue *pp_queue_declare(const char *name, const char *from_stage,
                                  const char *to_stage, int64_t capacity);
/**
 * item_id entered (push) or left (pop) the queue now. item_id is the
 * caller's (a frame number, a request id) and pairs a push with the pop of
 * the same id for the item's wait time; ids may be reused once popped.
 * Cost: one relaxed atomic add on the queue's depth (also when recording is
 * off), plus while recording a two-slot event like a counter. Any thread.
 */
PP_API void pp_queue_push(pp_queue *q, uint64_t item_id);
PP_API void pp_queue_pop(pp_queue *q, uint64_t item_id);
/**
 * The calling thread starts / stops waiting on the queue, why being
 * PP_QUEUE_FULL (a producer blocked on a full queue) or PP_QUEUE_EMPTY (a
 * consumer waiting for an item). Each begin is ended once, on the same
 * thread, with the same why. Cost as a counter update. Any thread.
 */
PP_API void pp_queue_wait_begin(pp_queue *q, int why);
PP_API void pp_queue_wait_end(pp_queue *q, int why);
/** The depth the library counts (pushes minus pops since the declaration);
 * 0 for NULL. Any thread. */
PP_API int64_t pp_queue_depth(const pp_queue *q);

/**
 * Name the calling thread in traces and reports (copied, up to 63 bytes).
 * May be called before pp_init(). Takes a lock; not for hot loops.
 */
PP_API void pp_thread_name(const char *name);

/* ------------------------------------------------------------------------ */
/* Live statistics, anomalies and alerts (docs/live.md)                     */
/* ------------------------------------------------------------------------ */

/*
 * In trace, stats and flight modes the session's writer thread keeps, per
 * zone name (ranges included) and for requests, rolling windows of the last
 * 1, 10 and 60 intervals (an interval is 1 s unless PIPEPROF_LIVE says
 * otherwise), an EWMA of the rate, and a robust anomaly detector on each
 * interval's p99 and rate (rolling median and MAD). With a sampler running
 * (sample_hz > 0) it also raises resource-pressure alerts: memory near
 * full, swap growing, PSI stalls, CPU throttling, GPU memory near full
 * (PIPEPROF_ALERTS). Every anomaly and alert is an instant event in the
 * trace and a line in `pipeprof report`. Nothing of this runs on the
 * recording threads. PIPEPROF_LIVE=off turns it all off.
 */

/** What raised a pp_alert. */
typedef enum pp_alert_kind {
  PP_ALERT_ANOMALY = 1, /**< a zone's or the requests' p99 or rate left
                             its rolling baseline */
  PP_ALERT_RESOURCE = 2 /**< a resource-pressure threshold was crossed */
} pp_alert_kind;

/** One anomaly or alert, as passed to the callback. Strings are valid only
 * during the call. */
typedef struct pp_alert {
  uint32_t struct_size; /**< sizeof(pp_alert) of the library */
  int kind;             /**< a pp_alert_kind */
  const char *what;     /**< "p99", "rate"; "mem", "swap", "psi.cpu",
                             "psi.memory", "psi.io", "throttle",
                             "gpu_mem" */
  const char *which;    /**< the zone name, "request e2e", "request ttft",
                             "system", "cpuN", "gpuN" */
  const char *message;  /**< one line, e.g. "anomaly: decode p99 14.2 ms
                             (median 3.1 ms, MAD 0.2 ms)" */
  double value;         /**< the measured value (ns for p99, events/s for
                             rate, % for mem/psi/gpu_mem, bytes for swap,
                             new throttle events for throttle) */
  double baseline;      /**< anomaly: the rolling median; swap: the
                             previous sample; else 0 */
  double spread;        /**< anomaly: the (floored) MAD; else 0 */
  double threshold;     /**< the bound that was crossed */
  int64_t ts_ns;        /**< when (CLOCK_MONOTONIC ns): the end of the
                             interval judged, or the sample's time */
} pp_alert;

/** Alert callback: see pp_on_alert(). */
typedef void (*pp_alert_fn)(const pp_alert *alert, void *user);

/**
 * Call fn for every anomaly and alert from now on (once per episode: an
 * alert that stays raised is not repeated). One callback at a time: a
 * second call replaces the first; fn NULL removes it. May be called before
 * pp_init() and stays set across sessions. fn runs on the profiler's
 * writer thread, outside its locks: it must return quickly (the writer
 * drains every thread's buffer; while fn runs, buffers fill), must not
 * call pp_shutdown() or pp_on_alert(), and may call pp_flight_dump(),
 * pp_live_zone() and any recording call. Returns PP_OK. Any thread.
 */
PP_API int pp_on_alert(pp_alert_fn fn, void *user);

/** Live figures of one series over one window. */
typedef struct pp_live_stats {
  uint32_t struct_size; /**< set by the library */
  uint32_t window_s;    /**< the window asked for: 1, 10 or 60 intervals,
                             or 0: the session so far */
  double seconds;       /**< length of the window in s (intervals covered
                             so far times the interval length) */
  uint64_t count;       /**< values in the window */
  double rate;          /**< count / seconds (per s) */
  double ewma_rate;     /**< EWMA of the per-interval rate (time constant
                             10 s unless PIPEPROF_LIVE sets tau) */
  double mean_ns;       /**< 0 when count is 0, as the percentiles */
  uint64_t p50_ns, p90_ns, p99_ns, max_ns; /**< within 3.1% */
  int64_t as_of_ns;     /**< CLOCK_MONOTONIC end of the window's last
                             interval; 0 before the first one closed */
} pp_live_stats;

/**
 * Figures of the zones (and ranges) named name over the last window_s
 * complete intervals (1, 10 or 60), updated once per interval by the
 * writer, or, window_s 0, over the session up to the call: the call then
 * asks the writer to drain every thread's events and waits for it (at most
 * 1 s; microseconds to milliseconds), so every zone that ended before the
 * call counts. The call copies the figures under a lock held for
 * microseconds. After pp_shutdown() the figures of the session as it
 * ended stay readable until the next pp_init(). Returns PP_OK; PP_EINVAL
 * for a NULL argument, another window or a name not seen in this session;
 * PP_ENOTRUNNING when no session ran in this process; PP_ENOTSUP when
 * live statistics are off (PIPEPROF_LIVE=off). Any thread; from the
 * alert callback, window 0 gives the last published figures.
 */
PP_API int pp_live_zone(const char *name, int window_s, pp_live_stats *out);

/**
 * The names pp_live_zone() knows: copies the index-th zone (or range) name
 * of this session, 0-based in the order the writer first saw them, into
 * buf (size bytes, NUL-terminated, cut at size - 1 bytes). Names are only
 * ever added during a session, so walking index = 0, 1, ... until
 * PP_EINVAL lists them all (at most 1024); index 0 first has the writer
 * drain every thread (as pp_live_zone's window 0), so the walk lists every
 * name recorded before it. After pp_shutdown(), the ended session's.
 * Returns PP_OK; PP_EINVAL past the last name, for a NULL buf or size 0;
 * PP_ENOTRUNNING; PP_ENOTSUP when live statistics are off. Any thread.
 * Added in 0.1.0.
 */
PP_API int pp_live_zone_name(size_t index, char *buf, size_t size);

/**
 * Cumulative counts of the zones (and ranges) named name over the session
 * so far (every complete interval, as pp_live_zone(name, 0)), for
 * histogram exports such as Prometheus's: counts[i] = zones whose
 * duration's bucket lies at or below le_ns[i] (n bounds, ascending; the
 * buckets are 1/32 of a power of two wide, so bounds that are powers of
 * two are bucket edges), *total all of them, *sum_ns their summed
 * durations; after pp_shutdown(), the ended session's. Returns PP_OK;
 * PP_EINVAL for NULL pointers, unsorted bounds
 * or a name not seen in this session; PP_ENOTRUNNING; PP_ENOTSUP when
 * live statistics are off; PP_ENOMEM. Any thread. Added in 0.1.0.
 */
PP_API int pp_live_zone_cumulative(const char *name, const uint64_t *le_ns,
                                   size_t n, uint64_t *counts, uint64_t *total,
                                   double *sum_ns);

/**
 * How the zones (and ranges) named name met a duration target over the
 * session (window 0 of pp_live_zone(), exact as of the call; after
 * pp_shutdown() the ended session's): *count instances, *met those that
 * lasted no longer than limit_ns, *uncertain those within the live
 * histogram's bucket of the limit (1/32 of a power of two: either side
 * of it); violations are count - met - uncertain. For service-level
 * objectives of a stage (seed 001's SLA: target, violations, compliance).
 * Returns PP_OK; PP_EINVAL for a NULL argument or a name not seen in this
 * session; PP_ENOTRUNNING; PP_ENOTSUP when live statistics are off. Any
 * thread. Added in 0.1.0.
 */
PP_API int pp_live_zone_slo(const char *name, uint64_t limit_ns,
                            uint64_t *count, uint64_t *met,
                            uint64_t *uncertain);

/** Requests series for pp_live_request(). */
typedef enum pp_live_request_metric {
  PP_LIVE_E2E = 0,  /**< begin to end of successful requests */
  PP_LIVE_TTFT = 1, /**< begin to first token */
  PP_LIVE_TPOT = 2, /**< (E2E - TTFT) / (output tokens - 1) of successful
                         requests with more than one token (since 0.1.0) */
  PP_LIVE_ITL = 3   /**< gaps between consecutive token chunks of a
                         request (pp_request_tokens; since 0.1.0) */
} pp_live_request_metric;

/** As pp_live_zone() for request latencies (pp_request_*); PP_EINVAL also
 * when no request has been seen. */
PP_API int pp_live_request(int metric, int window_s, pp_live_stats *out);

/* ------------------------------------------------------------------------ */
/* GPU zones (CUDA) and device memory pools                                 */
/* ------------------------------------------------------------------------ */

/**
 * Token of a GPU zone, returned by pp_gpu_zone_begin*() by value and passed
 * to pp_gpu_zone_end() exactly once: NULL `slot` when nothing was recorded
 * (then the end records nothing either). Not API to read.
 */
typedef struct pp_gpu_zone {
  void *slot;
} pp_gpu_zone;

/**
 * GPU zones time the device work queued on one CUDA stream between begin
 * and end (for instance the kernels of one stage), with CUDA events:
 *
 *   pp_gpu_zone z = pp_gpu_zone_begin(stream, "infer");
 *   kernel<<<grid, block, 0, stream>>>(...);
 *   pp_gpu_zone_end(z);
 *
 * stream is a cudaStream_t / CUstream (0 for the legacy default stream);
 * the CUDA context current on the calling thread must be the stream's.
 * The library loads libcuda.so.1 with dlopen on the first call
 * (PIPEPROF_LIBCUDA names another path) and creates, once per context, a
 * pool of PIPEPROF_GPU_SLOTS (default 1024) event pairs. A background
 * resolver (the session's writer thread) polls the events with
 * cuEventQuery, never blocking the program, and writes each finished zone
 * to a GPU track ("GPU <device> stream <handle>") beside the launching
 * thread, with its device duration (cuEventElapsedTime) placed on the CPU
 * clock by a calibration described in docs/api.md.
 *
 * Cost: begin is one cuCtxGetCurrent (a thread-local read in the driver),
 * one atomic claim of a pool slot, one cuEventRecord (about 1-3 us on
 * current drivers: the driver appends a command to the stream) and a
 * timestamp; end is one cuEventRecord. No lock, allocation or formatting
 * after the first call per context. Zones may nest and overlap; end on a
 * thread where the same context is current (normally the caller of
 * begin). When no slot is free (more than the pool's zones waiting for the
 * GPU), no context is current, libcuda is missing or a record fails, the
 * zone is not recorded and counted by reason; the report gives the counts
 * or "GPU zones: unavailable: <reason>". Any thread.
 */
PP_API pp_gpu_zone pp_gpu_zone_begin_loc(const pp_srcloc *loc, void *stream);
/** Same with a run-time name, interned as for pp_zone_begin_name(). */
PP_API pp_gpu_zone pp_gpu_zone_begin(void *stream, const char *name);
/** End a GPU zone: records its end event on the zone's stream. */
PP_API void pp_gpu_zone_end(pp_gpu_zone zone);

/**
 * Device memory pools (a caching allocator, an arena, a KV cache) by name
 * and device (0..255). The analysis gives per pool and device the high
 * watermark, the steady-state level, reserved-but-unused bytes
 * (fragmentation) at the watermark and on average, alloc/free counts and
 * leaks; see docs/api.md for the definitions. ptr identifies an
 * allocation (any unique non-zero value); bytes is at most 2^48 - 1.
 * Cost: as a counter update (two ring slots) plus interning the pool name
 * (a hash of the string). Trace and flight modes (stats mode keeps no pool
 * figures). Any thread.
 */
/** The device number of host memory pools (the runtime's host and pinned
 * pools, pipeprof/runtime.h); 0..254 are CUDA devices. */
#define PP_MEM_HOST 255
/** bytes were allocated at ptr from pool on device. */
PP_API void pp_mem_alloc(const void *ptr, uint64_t bytes, const char *pool,
                         int device);
/** The allocation at ptr returns to pool: its size is the one given to
 * pp_mem_alloc (looked up when the trace is analysed). */
PP_API void pp_mem_free(const void *ptr, const char *pool, int device);
/** The pool now holds bytes reserved from the device (in use or not):
 * call whenever the reservation changes. */
PP_API void pp_mem_reserve(const char *pool, uint64_t bytes, int device);

/* ------------------------------------------------------------------------ */
/* Instrumentation macros                                                   */
/* ------------------------------------------------------------------------ */

#define PP__CAT2(a, b) a##b
#define PP__CAT(a, b) PP__CAT2(a, b)

#if defined(PP_DISABLE)

#define PP_ZONE(name) ((void)0)
#define PP_FUNC() ((void)0)
#define PP_ZONE_BEGIN(var, name) pp_zone var = {0}
#define PP_ZONE_END(var) ((void)(var))
#define PP_COUNTER_SET(name, v) ((void)0)
#define PP_COUNTER_ADD(name, d) ((void)0)
#define PP_COUNTER_SETF(name, v) ((void)0)
#define PP_MARK(name) ((void)0)
#define PP_FRAME_MARK(name) ((void)0)
#define PP_FLOW_BEGIN(name, id) ((void)0)
#define PP_FLOW_STEP(name, id) ((void)0)
#define PP_FLOW_END(name, id) ((void)0)
#define PP_QUEUE_DECLARE(name, from, to, cap) ((pp_queue *)0)
#define PP_QUEUE_PUSH(q, id) ((void)0)
#define PP_QUEUE_POP(q, id) ((void)0)
#define PP_QUEUE_WAIT_BEGIN(q, why) ((void)0)
#define PP_QUEUE_WAIT_END(q, why) ((void)0)
/* Arguments are named in sizeof only (never evaluated), so that variables
 * used only here raise no unused warnings. */
#define PP_GPU_ZONE_BEGIN(var, stream, name)                                \
  pp_gpu_zone var = {(void *)(0 * sizeof(stream))}
#define PP_GPU_ZONE_END(var) ((void)(var))
#define PP_MEM_ALLOC(ptr, bytes, pool, device)                              \
  ((void)sizeof(ptr), (void)sizeof(bytes), (void)sizeof(pool),              \
   (void)sizeof(device))
#define PP_MEM_FREE(ptr, pool, device)                                      \
  ((void)sizeof(ptr), (void)sizeof(pool), (void)sizeof(device))
#define PP_MEM_RESERVE(pool, bytes, device)                                 \
  ((void)sizeof(pool), (void)sizeof(bytes), (void)sizeof(device))

#else /* !PP_DISABLE */

#define PP__LOC(var, nm, knd)                                               \
  static const pp_srcloc var = {(nm), __func__, __FILE__,                   \
                                (uint32_t)__LINE__, (uint32_t)(knd)}

static inline pp_zone pp__zone_start(const pp_srcloc *loc) {
  if (PP__LIKELY(!PP__ACTIVE())) {
    pp_zone z = {0};
    return z;
  }
  return pp_zone_begin(loc);
}

static inline pp_gpu_zone pp__gpu_zone_start(const pp_srcloc *loc,
                                             void *stream) {
  if (PP__LIKELY(!PP__ACTIVE())) {
    pp_gpu_zone z = {0};
    return z;
  }
  return pp_gpu_zone_begin_loc(loc, stream);
}

static inline void pp__zone_stop(pp_zone z) {
  if (z.loc)
    pp_zone_end(z);
}

#ifdef __cplusplus
} /* extern "C" */
namespace pipeprof {
/* RAII zone for C++: ends the zone when the scope closes. */
class scoped_zone {
public:
  explicit scoped_zone(const pp_srcloc *loc) : z_(pp__zone_start(loc)) {}
  ~scoped_zone() { pp__zone_stop(z_); }
  scoped_zone(const scoped_zone &) = delete;
  scoped_zone &operator=(const scoped_zone &) = delete;

private:
  pp_zone z_;
};
} /* namespace pipeprof */
extern "C" {
#define PP__ZONE_SCOPE(var, nm, knd)                                        \
  PP__LOC(PP__CAT(var, _loc), nm, knd);                                     \
  ::pipeprof::scoped_zone var(&PP__CAT(var, _loc))
#else
static inline void pp__zone_cleanup(pp_zone *z) {
  if (z->loc)
    pp_zone_end(*z);
}
#define PP__ZONE_SCOPE(var, nm, knd)                                        \
  PP__LOC(PP__CAT(var, _loc), nm, knd);                                     \
  __attribute__((cleanup(pp__zone_cleanup), unused)) pp_zone var =          \
      pp__zone_start(&PP__CAT(var, _loc))
#endif

/** Time the rest of the enclosing block as a zone called name (a string
 * literal). */
#define PP_ZONE(name)                                                       \
  PP__ZONE_SCOPE(PP__CAT(pp__zone_, __LINE__), name, PP_KIND_ZONE)
/** Time the rest of the enclosing block as a zone named after the
 * function. */
#define PP_FUNC()                                                           \
  PP__ZONE_SCOPE(PP__CAT(pp__zone_, __LINE__), __func__, PP_KIND_ZONE)

/** Explicit pair: PP_ZONE_BEGIN(z, "load"); ... PP_ZONE_END(z); */
#define PP_ZONE_BEGIN(var, name)                                            \
  PP__LOC(PP__CAT(var, _pp_loc), name, PP_KIND_ZONE);                       \
  pp_zone var = pp__zone_start(&PP__CAT(var, _pp_loc))
#define PP_ZONE_END(var) pp__zone_stop(var)

#define PP__SITE0(call, nm, knd)                                            \
  do {                                                                      \
    PP__LOC(pp__site_loc, nm, knd);                                         \
    if (PP__UNLIKELY(PP__ACTIVE()))                                           \
      call(&pp__site_loc);                                                  \
  } while (0)
#define PP__SITE1(call, nm, knd, arg)                                       \
  do {                                                                      \
    PP__LOC(pp__site_loc, nm, knd);                                         \
    if (PP__UNLIKELY(PP__ACTIVE()))                                           \
      call(&pp__site_loc, arg);                                             \
  } while (0)

/** Counter at a static site: name is a string literal. */
#define PP_COUNTER_SET(name, v)                                             \
  PP__SITE1(pp_counter_set_loc, name, PP_KIND_COUNTER, (int64_t)(v))
#define PP_COUNTER_ADD(name, d)                                             \
  PP__SITE1(pp_counter_add_loc, name, PP_KIND_COUNTER, (int64_t)(d))
#define PP_COUNTER_SETF(name, v)                                            \
  PP__SITE1(pp_counter_setf_loc, name, PP_KIND_COUNTER, (double)(v))
#define PP_MARK(name) PP__SITE0(pp_mark_loc, name, PP_KIND_MARK)
#define PP_FRAME_MARK(name) PP__SITE0(pp_frame_mark_loc, name, PP_KIND_FRAME)
#define PP_FLOW_BEGIN(name, id)                                             \
  PP__SITE1(pp_flow_begin_loc, name, PP_KIND_FLOW, (uint64_t)(id))
#define PP_FLOW_STEP(name, id)                                              \
  PP__SITE1(pp_flow_step_loc, name, PP_KIND_FLOW, (uint64_t)(id))
#define PP_FLOW_END(name, id)                                               \
  PP__SITE1(pp_flow_end_loc, name, PP_KIND_FLOW, (uint64_t)(id))

/** Queue calls that compile out with PP_DISABLE (then a program need not
 * link libpipeprof): PP_QUEUE_DECLARE gives NULL and the others evaluate
 * no argument. Enabled, they call the functions above unconditionally:
 * the library counts a queue's depth also while recording is off. */
#define PP_QUEUE_DECLARE(name, from, to, cap)                               \
  pp_queue_declare((name), (from), (to), (int64_t)(cap))
#define PP_QUEUE_PUSH(q, id) pp_queue_push((q), (uint64_t)(id))
#define PP_QUEUE_POP(q, id) pp_queue_pop((q), (uint64_t)(id))
#define PP_QUEUE_WAIT_BEGIN(q, why) pp_queue_wait_begin((q), (why))
#define PP_QUEUE_WAIT_END(q, why) pp_queue_wait_end((q), (why))
/** GPU zone at a static site: PP_GPU_ZONE_BEGIN(z, stream, "infer");
 * launch work on stream; PP_GPU_ZONE_END(z). Disabled profiler: one load
 * and one branch. */
#define PP_GPU_ZONE_BEGIN(var, stream, name)                                \
  PP__LOC(PP__CAT(var, _pp_loc), name, PP_KIND_ZONE);                       \
  pp_gpu_zone var = pp__gpu_zone_start(&PP__CAT(var, _pp_loc),              \
                                       (void *)(stream))
#define PP_GPU_ZONE_END(var)                                                \
  do {                                                                      \
    if ((var).slot)                                                         \
      pp_gpu_zone_end(var);                                                 \
  } while (0)
#define PP_MEM_ALLOC(ptr, bytes, pool, device)                              \
  do {                                                                      \
    if (PP__UNLIKELY(PP__ACTIVE()))                                         \
      pp_mem_alloc((ptr), (uint64_t)(bytes), (pool), (device));             \
  } while (0)
#define PP_MEM_FREE(ptr, pool, device)                                      \
  do {                                                                      \
    if (PP__UNLIKELY(PP__ACTIVE()))                                         \
      pp_mem_free((ptr), (pool), (device));                                 \
  } while (0)
#define PP_MEM_RESERVE(pool, bytes, device)                                 \
  do {                                                                      \
    if (PP__UNLIKELY(PP__ACTIVE()))                                         \
      pp_mem_reserve((pool), (uint64_t)(bytes), (device));                  \
  } while (0)

#endif /* PP_DISABLE */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PIPEPROF_H */
