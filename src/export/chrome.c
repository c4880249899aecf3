/* SPDX-License-Identifier: MIT */
/*
 * Chrome / Perfetto JSON export (the Trace Event Format, object form): one
 * `X` event per zone instance, `C` events for counters, `i` events for
 * marks (thread scope) and frame marks (process scope), `M` events naming
 * the process and threads, and flows. Timestamps are microseconds with
 * three decimals (exact nanoseconds), relative to the trace's first event
 * (t0, given in metadata with the wall-clock anchor).
 *
 * One writer, fed events in the order of model/feed.h (time order across
 * threads, recording order within one): by a streamed read through a
 * reorder buffer (pp_chrome_stream_*), or by a model in memory
 * (pp_export_chrome). Each event is written as it comes, or when what it
 * belongs to is complete: a zone when it closes (pair/zones.h, the one
 * pairing policy), a range when its halves pair (pair/intervals.h), a flow
 * chain when it ends. The state kept is bounded (export.h PP_CHROME_*):
 * a zone stack per thread, the ranges and flow chains open, one counter
 * value per counter name; a bound hit is counted (pp_chrome_limits).
 *
 * Flows: the points of one flow (same flow name, process and id) from a
 * FLOW_BEGIN to its FLOW_END (or to the point before the next FLOW_BEGIN,
 * or the end of the trace) form a chain, in feed order. A chain is written
 * with flows v2 (bind_id + flow_out/flow_in on the X events of the zones
 * enclosing its points: the first zone flow_out, the last flow_in, those
 * between both) when every point has an enclosing zone (the innermost open
 * on its thread), the zones start in strictly increasing order (Perfetto
 * binds v2 flows while it walks slices by start time) and no other chain
 * claimed one of them first. Consecutive points in the same zone count
 * once. Otherwise the whole chain is written as flow v1 events (`s`, `t`,
 * `f` with "bp":"e"), which bind at the points' own timestamps. The
 * bind_id / id is a string of 16 hex digits: a 64-bit hash of the flow
 * name, the id and the chain's ordinal among all chains (Perfetto reads
 * string ids as hex; chrome://tracing compares them as strings).
 *
 * Counters follow pp_analyze(): per counter name (call sites sharing a
 * name feed one counter), events of all threads in time order (ties by
 * thread, then recording order); ADD events emit the running value;
 * non-finite values are skipped (JSON cannot hold them).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "analyze/gpu_activity.h"
#include "analyze/pipeline.h"
#include "export/export.h"
#include "export/jsonw.h"
#include "export/report_gpuzones.h"
#include "analyze/run_tree.h"
#include "format/pptrace.h"
#include "internal.h"
#include "model/feed.h"
#include "pair/intervals.h"
#include "pair/zones.h"
#include "pipeprof/version.h"

#define FLOW_OUT 1u
#define FLOW_IN 2u

/* Bounds of the streaming state (export.h, docs/internals/streaming.md). */
#define CHAINS_MAX PP_CHROME_CHAINS_MAX
#define POINTS_MAX PP_CHROME_POINTS_MAX
#define RANGES_MAX ((size_t)PP_CHROME_RANGES_MAX)
#define REORDER_CAP ((size_t)PP_CHROME_REORDER_CAP)

/* The flow binding of a thread's open zone at one depth. */
enum { ZB_NONE, ZB_PENDING, ZB_BOUND };
typedef struct zbind {
  uint64_t serial; /* the zone's (its stack cookie) */
  uint64_t key;    /* ZB_BOUND: the chain's bind id */
  uint32_t chain;  /* ZB_PENDING: the undecided chain's slot */
  uint32_t pt;     /* ZB_PENDING: the point of that chain that claimed it */
  uint8_t state, flags;
} zbind;

typedef struct cthread {
  pp_zone_stack zs;
  zbind *zb;    /* PP_PAIR_MAX_DEPTH entries from its first flow point */
  char pre[64]; /* ,"pid":P,"tid":T,"ts": */
  uint8_t npre;
  uint8_t ready;
} cthread;

/* One point of a flow chain; a point that claimed a zone for the chain
 * also holds that zone's figures once it closed (parked) while the chain
 * was undecided. */
typedef struct fpoint {
  int64_t ts;
  uint64_t zone; /* serial of the enclosing zone; 0: none */
  int64_t zstart, zend;
  uint32_t th, loc, zloc, depth;
  uint8_t type, claimed, parked, zunclosed;
} fpoint;

/* A chain: the points of one (flow name, process, id) from a FLOW_BEGIN
 * to its FLOW_END (or the next FLOW_BEGIN, or the end of the stream). */
typedef struct chain {
  uint64_t id, key;
  uint32_t cls, pid;
  fpoint *pt;
  uint32_t n, cap;
  uint32_t ndistinct;
  int64_t prev_start;
  int v1;   /* cannot be bound as v2 */
  int used; /* the slot holds an open chain */
} chain;

/* A counter series (by canonical site). */
typedef struct cseries {
  int64_t iv;
  double fv;
  uint8_t is_f, label; /* label: 0 not looked up, 1 none, 2 in text */
  char *text;
} cseries;

struct pp_chrome {
  const pp_trace *t; /* the trace of the current call */
  const pp_analysis *a; /* its analysis: at the finish (NULL before) */
  FILE *out;
  pp_jsonw w;
  int started, streamed, failed;
  int64_t t0;
  char **qname; /* per loc: quoted, escaped name (NULL: not made yet) */
  size_t *qlen;
  size_t nnames;
  uint32_t *canon; /* per loc, see pp_loc_canon() */
  size_t ncanon;
  cthread *th;
  size_t nth;
  cseries *ctr;
  size_t nctr;
  pp_run_tree rt;
  int have_rt;
  pp_id_pairs ranges;
  pp_order *order; /* streamed: the reorder buffer */
  /* flows */
  chain *ch;
  uint32_t nch, nopen;
  uint32_t *hash; /* open chains by key: slot + 1, 0 empty */
  uint32_t hcap;
  uint64_t npoints, chains_started;
  uint64_t serial; /* zones begun */
  pp_pair_counts pc;
  pp_chrome_limits lim;
  size_t last_tid_th; /* tid_pid's last answer */
  int zones_unfed;    /* pp_chrome_stream_zones_unfed */
  int have_zone_last;
  int64_t zone_last;
};

typedef pp_chrome chrome_ctx;
static const char unknown_q[] = "\"(unknown)\"";

/* ---- helpers ------------------------------------------------------------ */

/* a - b, saturated (damaged traces may span anything). */
static int64_t diff_sat(int64_t a, int64_t b) {
  int64_t d;
  if (__builtin_sub_overflow(a, b, &d))
    return a > b ? INT64_MAX : INT64_MIN;
  return d;
}

/* ts relative to t0 in ns. */
static int64_t rel_ns(const chrome_ctx *c, int64_t ts) {
  return diff_sat(ts, c->t0);
}

/* Quoted names shorter than this are stored in this many bytes, so that
 * they are copied in one fixed-size move. */
#define QNAME_PAD 32

/* The quoted name of site loc, made at its first use (a streamed read
 * adds placeholder sites as it meets them). NULL when out of memory. */
static const char *qname_of(chrome_ctx *c, uint32_t loc, size_t *len) {
  const pp_trace *t = c->t;
  if (loc >= c->nnames) {
    size_t n = c->nnames, m = t->nlocs > loc ? t->nlocs : (size_t)loc + 1;
    if (pp__grow((void **)&c->qname, &n, m, sizeof *c->qname))
      return NULL;
    n = c->nnames;
    if (pp__grow((void **)&c->qlen, &n, m, sizeof *c->qlen))
      return NULL;
    for (size_t i = c->nnames; i < n; i++)
      c->qname[i] = NULL;
    c->nnames = n;
  }
  if (!c->qname[loc]) {
    const char *s = pp_trace_loc_name(t, loc);
    char *q = pp_jsonw_quote(s, strlen(s), &c->qlen[loc]);
    if (!q)
      return NULL;
    if (c->qlen[loc] < QNAME_PAD) { /* room for one fixed-size copy */
      char *r = pp__realloc(q, QNAME_PAD);
      if (!r) {
        pp__free(q);
        return NULL;
      }
      q = r;
    }
    c->qname[loc] = q;
  }
  *len = c->qlen[loc];
  return c->qname[loc];
}

static void put_name(chrome_ctx *c, uint32_t loc) {
  size_t n;
  if (loc < c->nnames && c->qname[loc] && loc < c->t->nlocs) {
    n = c->qlen[loc];
    char *p;
    if (n < QNAME_PAD && (p = pp_jsonw_room(&c->w, QNAME_PAD))) {
      memcpy(p, c->qname[loc], QNAME_PAD);
      pp_jsonw_commit(&c->w, p + n);
    } else {
      pp_jsonw_put(&c->w, c->qname[loc], n);
    }
    return;
  }
  const char *q = loc < c->t->nlocs ? qname_of(c, loc, &n) : NULL;
  if (q)
    pp_jsonw_put(&c->w, q, n);
  else
    pp_jsonw_put(&c->w, unknown_q, sizeof unknown_q - 1);
}

/* The process of thread tid (merged traces hold several); the trace's
 * when tid is unknown. */
static uint32_t tid_pid(chrome_ctx *c, uint64_t tid) {
  const pp_trace *t = c->t;
  size_t i = c->last_tid_th; /* events come in runs of one thread */
  if (i >= t->nthreads || t->threads[i].tid != tid)
    for (i = 0; i < t->nthreads && t->threads[i].tid != tid; i++)
      ;
  if (i == t->nthreads)
    return t->pid;
  c->last_tid_th = i;
  return pp_thread_pid(t, &t->threads[i]);
}

/* Thread i's state, made at its first use. NULL when out of memory. */
static cthread *thread_of(chrome_ctx *c, size_t i) {
  if (i >= c->nth) {
    size_t n = c->nth;
    if (pp__grow((void **)&c->th, &n, i + 1, sizeof *c->th))
      return NULL;
    memset(c->th + c->nth, 0, (n - c->nth) * sizeof *c->th);
    c->nth = n;
  }
  cthread *h = &c->th[i];
  if (!h->ready) {
    const pp_trace *t = c->t;
    const pp_thread *th = &t->threads[i];
    char *p = h->pre;
    size_t n = 0;
    memcpy(p + n, ",\"pid\":", 7);
    n += 7;
    n += pp_jsonw_fmt_uint(p + n, pp_thread_pid(t, th));
    memcpy(p + n, ",\"tid\":", 7);
    n += 7;
    n += pp_jsonw_fmt_uint(p + n, th->tid);
    memcpy(p + n, ",\"ts\":", 6);
    n += 6;
    h->npre = (uint8_t)n;
    pp__zstack_init(&h->zs);
    h->ready = 1;
  }
  return h;
}

/* Writes ,"pid":P,"tid":T,"ts":<rel ts> for thread i at p (at most
 * PRE_TS_MAX bytes); returns the end (p when out of memory). */
#define PRE_TS_MAX (64 + 26)
static char *w_thread_ts(chrome_ctx *c, char *p, size_t i, int64_t ts) {
  cthread *h = i < c->nth && c->th[i].ready ? &c->th[i]
               : i < c->t->nthreads       ? thread_of(c, i)
                                          : NULL;
  if (!h) {
    c->failed = 1;
    return p;
  }
  memcpy(p, h->pre, sizeof h->pre); /* one fixed-size copy */
  return pp_jsonw_w_us(p + h->npre, rel_ns(c, ts));
}

/* Writes ,"pid":P,"tid":T,"ts":<rel ts> for thread i. */
static void put_thread_ts(chrome_ctx *c, size_t i, int64_t ts) {
  char *p = pp_jsonw_room(&c->w, PRE_TS_MAX);
  if (p)
    pp_jsonw_commit(&c->w, w_thread_ts(c, p, i, ts));
}

/* v as a string of 16 hex digits at p (18 bytes); returns the end. */
static char *w_hex64(char *p, uint64_t v) {
  static const char hx[] = "0123456789abcdef";
  p[0] = '"';
  for (int i = 0; i < 16; i++)
    p[1 + i] = hx[(v >> (60 - 4 * i)) & 15];
  p[17] = '"';
  return p + 18;
}

static void put_hex64(pp_jsonw *w, uint64_t v) {
  char b[18];
  pp_jsonw_put(w, b, (size_t)(w_hex64(b, v) - b));
}

static uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= UINT64_C(0xbf58476d1ce4e5b9);
  x ^= x >> 27;
  x *= UINT64_C(0x94d049bb133111eb);
  x ^= x >> 31;
  return x;
}

static uint64_t chain_key(const char *name, uint64_t id, uint64_t gen) {
  uint64_t h = UINT64_C(0xcbf29ce484222325); /* FNV-1a */
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
    h ^= *p;
    h *= UINT64_C(0x100000001b3);
  }
  h = mix64(h ^ mix64(id + UINT64_C(0x9e3779b97f4a7c15)));
  h = mix64(h ^ gen);
  return h ? h : 1;
}

/* ---- events ------------------------------------------------------------- */

static void write_names(chrome_ctx *c) {
  const pp_trace *t = c->t;
  pp_jsonw *w = &c->w;
  uint32_t *pids = NULL;
  size_t npids = pp_trace_pids(t, &pids);
  if (!npids) { /* out of memory: the trace's own process at least */
    pids = NULL;
    npids = 1;
  }
  for (size_t k = 0; k < npids; k++) {
    uint32_t pid = pids ? pids[k] : t->pid;
    const char *pname = pp_trace_process_name(t, pid);
    char fallback[48];
    if (!pname || !pname[0]) {
      snprintf(fallback, sizeof fallback, "pid %u", (unsigned)pid);
      pname = fallback;
    }
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "ph", "M");
    pp_jsonw_kv_str(w, "name", "process_name");
    pp_jsonw_kv_uint(w, "pid", pid);
    pp_jsonw_kv_uint(w, "tid", 0);
    pp_jsonw_key(w, "args");
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "name", pname);
    pp_jsonw_obj_end(w);
    pp_jsonw_obj_end(w);
  }
  pp__free(pids);
  for (size_t i = 0; i < t->nthreads; i++) {
    const pp_thread *th = &t->threads[i];
    char tname[48];
    const char *name = th->name;
    if (!name || !name[0]) {
      snprintf(tname, sizeof tname, "thread %llu", (unsigned long long)th->tid);
      name = tname;
    }
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "ph", "M");
    pp_jsonw_kv_str(w, "name", "thread_name");
    pp_jsonw_kv_uint(w, "pid", pp_thread_pid(t, th));
    pp_jsonw_kv_uint(w, "tid", th->tid);
    pp_jsonw_key(w, "args");
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "name", name);
    pp_jsonw_obj_end(w);
    pp_jsonw_obj_end(w);

    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "ph", "M");
    pp_jsonw_kv_str(w, "name", "thread_sort_index");
    pp_jsonw_kv_uint(w, "pid", pp_thread_pid(t, th));
    pp_jsonw_kv_uint(w, "tid", th->tid);
    pp_jsonw_key(w, "args");
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_uint(w, "sort_index", 2 * i); /* GPU tracks go at 2i+1 */
    pp_jsonw_obj_end(w);
    pp_jsonw_obj_end(w);
  }
}

#define S(lit) lit, sizeof(lit) - 1

/* ---- GPU zones and memory pools ----------------------------------------- */

/* Chrome tid of GPU track k: above any Linux thread id (at most 2^22). */
#define GPU_TID_BASE 1000000000ull

static size_t thread_index(const pp_trace *t, uint64_t tid);

/* GPU tracks as threads of their own ("GPU 0 stream 0x.."), sorted right
 * after the thread that launched their first zone; zones as X events; a
 * flow (v1 s/f) from the CPU zone open at launch to each GPU zone. */
static void write_gpu(chrome_ctx *c) {
  const pp_trace *t = c->t;
  const pp_gpu_stats *g = &c->a->prof.gpu;
  pp_jsonw *w = &c->w;
  for (size_t k = 0; k < g->ntracks; k++) {
    char name[64];
    pp_gpu_track_name(name, sizeof name, &g->tracks[k]);
    for (int m = 0; m < 2; m++) {
      pp_jsonw_obj_begin(w);
      pp_jsonw_kv_str(w, "ph", "M");
      pp_jsonw_kv_str(w, "name", m ? "thread_sort_index" : "thread_name");
      pp_jsonw_kv_uint(w, "pid", tid_pid(c, g->tracks[k].tid));
      pp_jsonw_kv_uint(w, "tid", GPU_TID_BASE + k);
      pp_jsonw_key(w, "args");
      pp_jsonw_obj_begin(w);
      if (m)
        pp_jsonw_kv_uint(w, "sort_index",
                         2 * thread_index(t, g->tracks[k].tid) + 1);
      else
        pp_jsonw_kv_str(w, "name", name);
      pp_jsonw_obj_end(w);
      pp_jsonw_obj_end(w);
    }
  }
  /* placed GPU zones (none placed when the trace's figures came
   * aggregated: a crafted file may carry both) */
  for (size_t i = 0; c->a->gpu && i < t->ngpu; i++) {
    const pp_gpu_zone_rec *z = &t->gpu[i];
    uint32_t track = c->a->gpu[i].track;
    int64_t dur;
    if (__builtin_sub_overflow(z->end, z->start, &dur) || dur < 0)
      dur = dur < 0 ? 0 : INT64_MAX;
    pp_jsonw_elem(w);
    pp_jsonw_put(w, S("{\"ph\":\"X\",\"name\":"));
    put_name(c, z->loc);
    pp_jsonw_put(w, S(",\"cat\":\"gpu\",\"pid\":"));
    pp_jsonw_put_uint(w, tid_pid(c, g->tracks[track].tid));
    pp_jsonw_put(w, S(",\"tid\":"));
    pp_jsonw_put_uint(w, GPU_TID_BASE + track);
    pp_jsonw_put(w, S(",\"ts\":"));
    pp_jsonw_put_us(w, rel_ns(c, z->start));
    pp_jsonw_put(w, S(",\"dur\":"));
    pp_jsonw_put_us(w, dur);
    pp_jsonw_put(w, S(",\"args\":{\"launch_delay_us\":"));
    pp_jsonw_put_us(w, diff_sat(z->start, z->launch));
    pp_jsonw_put(w, S("}}"));
    size_t ti = thread_index(t, z->tid);
    if (ti >= t->nthreads || t->threads[ti].tid != z->tid)
      continue; /* no launching thread to start from */
    /* The flow: starts in the launching CPU zone at the begin call, ends
     * in this GPU zone at its start ("bp":"e": the enclosing slice). */
    uint64_t id = mix64(0x6770757ull ^ mix64(i + 1));
    for (int m = 0; m < 2; m++) {
      pp_jsonw_elem(w);
      if (m)
        pp_jsonw_put(w, S("{\"ph\":\"f\",\"bp\":\"e\",\"name\":"));
      else
        pp_jsonw_put(w, S("{\"ph\":\"s\",\"name\":"));
      put_name(c, z->loc);
      pp_jsonw_put(w, S(",\"cat\":\"gpu_launch\",\"id\":"));
      put_hex64(w, id);
      if (m) {
        pp_jsonw_put(w, S(",\"pid\":"));
        pp_jsonw_put_uint(w, tid_pid(c, g->tracks[track].tid));
        pp_jsonw_put(w, S(",\"tid\":"));
        pp_jsonw_put_uint(w, GPU_TID_BASE + track);
        pp_jsonw_put(w, S(",\"ts\":"));
        pp_jsonw_put_us(w, rel_ns(c, z->start));
      } else {
        put_thread_ts(c, ti, z->launch);
      }
      pp_jsonw_putc(w, '}');
    }
  }
  /* Memory pools: one counter track per pool and device. */
  for (size_t i = 0; i < c->a->prof.npools; i++) {
    const pp_mem_pool_stats *ps = &c->a->prof.pools[i];
    char name[160];
    snprintf(name, sizeof name, "pool %s (GPU %u) bytes",
             pp_trace_loc_name(t, ps->loc), (unsigned)ps->device);
    for (size_t j = 0; j < ps->nlevels; j++) {
      const pp_mem_level *l = &ps->levels[j];
      if (j + 1 < ps->nlevels && ps->levels[j + 1].ts == l->ts)
        continue; /* only the last level at one instant */
      pp_jsonw_elem(w);
      pp_jsonw_put(w, S("{\"ph\":\"C\",\"name\":"));
      pp_jsonw_put_str(w, name, strlen(name));
      pp_jsonw_put(w, S(",\"pid\":"));
      pp_jsonw_put_uint(w, t->pid);
      pp_jsonw_put(w, S(",\"ts\":"));
      pp_jsonw_put_us(w, rel_ns(c, l->ts));
      pp_jsonw_put(w, S(",\"args\":{\"in_use\":"));
      pp_jsonw_put_uint(w, l->in_use);
      if (ps->has_reserve) {
        pp_jsonw_put(w, S(",\"reserved\":"));
        pp_jsonw_put_uint(w, l->reserved);
      }
      pp_jsonw_put(w, S("}}"));
    }
  }
}

/* Anomalies and alerts: global instant events (a line across every track
 * in Perfetto and chrome://tracing), with their figures as args. */
static void write_notes(chrome_ctx *c) {
  const pp_trace *t = c->t;
  pp_jsonw *w = &c->w;
  for (size_t i = 0; i < t->nnotes; i++) {
    const pp_note *n = &t->notes[i];
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "ph", "i");
    pp_jsonw_kv_str(w, "s", "g");
    pp_jsonw_kv_str(w, "name", n->message);
    pp_jsonw_kv_str(w, "cat", n->type == PPT_EV_ANOMALY ? "anomaly"
                                                        : "alert");
    pp_jsonw_kv_uint(w, "pid", t->pid);
    pp_jsonw_kv_uint(w, "tid", 0);
    pp_jsonw_key(w, "ts");
    pp_jsonw_us(w, rel_ns(c, n->ts));
    pp_jsonw_key(w, "args");
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "what", n->what);
    pp_jsonw_kv_str(w, "which", n->which);
    pp_jsonw_kv_double(w, "value", n->value);
    pp_jsonw_kv_double(w, "baseline", n->baseline);
    pp_jsonw_kv_double(w, "spread", n->spread);
    pp_jsonw_kv_double(w, "threshold", n->threshold);
    pp_jsonw_obj_end(w);
    pp_jsonw_obj_end(w);
  }
}

/* The thread of tid, or the first thread when none has it. */
static size_t thread_index(const pp_trace *t, uint64_t tid) {
  size_t i = pp_trace_thread_index(t, tid);
  return i < t->nthreads ? i : 0;
}

/* The track of a sampled thread of the profiled tree,
 * "proc.thread.<tid>.cpu_pct", is shown as "CPU % <name> (tid <tid>)"
 * when the sampler's thread table names it. Returns 1 with the label. */
static int thread_track_label(const pp_trace *t, const pp_run_tree *rt,
                              uint32_t loc, char *buf, size_t len) {
  const char *rest;
  long tid = pp__name_index(pp_trace_loc_name(t, loc), "proc.thread.", &rest);
  if (tid < 0 || strcmp(rest, ".cpu_pct") != 0)
    return 0;
  const pp_run_ent *e = pp_run_tree_thread(rt, (uint32_t)tid);
  if (!e || !e->comm[0])
    return 0;
  int k = snprintf(buf, len, "CPU %% %.60s (tid %ld)", e->comm, tid);
  return k > 0 && (size_t)k < len;
}

/* ---- zones ------------------------------------------------------------- */

static void write_x(chrome_ctx *c, size_t ti, uint32_t loc, int64_t start,
                    int64_t end, int unclosed, uint64_t key,
                    unsigned flags) {
  pp_jsonw *w = &c->w;
  pp_jsonw_elem(w);
  char *p = pp_jsonw_room(w, 17);
  if (!p)
    return;
  pp_jsonw_commit(w, pp_jsonw_w_lit(p, S("{\"ph\":\"X\",\"name\":")));
  put_name(c, loc);
  int64_t dur;
  if (__builtin_sub_overflow(end, start, &dur) || dur < 0)
    dur = dur < 0 ? 0 : INT64_MAX;
  /* the rest: at most 13 + PRE_TS_MAX + 7 + 25 + 20 + 25 + 16 + 2 + 11 + 18
   * + 16 + 15 + 1 bytes */
  if (!(p = pp_jsonw_room(w, 300)))
    return;
  p = pp_jsonw_w_lit(p, S(",\"cat\":\"zone\""));
  p = w_thread_ts(c, p, ti, start);
  p = pp_jsonw_w_lit(p, S(",\"dur\":"));
  p = pp_jsonw_w_us(p, dur);
  /* No per-call arguments such as the self time: it differs call by
   * call, and speedscope's sandwich view made each call a symbol of its
   * own (the self times are in the report and the summary). */
  if (unclosed)
    p = pp_jsonw_w_lit(p, S(",\"args\":{\"unclosed\":true}"));
  if (key) {
    p = pp_jsonw_w_lit(p, S(",\"bind_id\":"));
    p = w_hex64(p, key);
    if (flags & FLOW_OUT)
      p = pp_jsonw_w_lit(p, S(",\"flow_out\":true"));
    if (flags & FLOW_IN)
      p = pp_jsonw_w_lit(p, S(",\"flow_in\":true"));
  }
  *p++ = '}';
  pp_jsonw_commit(w, p);
}

/* The callback of a thread's zone stack: the zone is written, or parked
 * in the point of the undecided flow chain that claimed it. */
typedef struct zclose_ctx {
  chrome_ctx *c;
  size_t ti;
} zclose_ctx;

static void zone_closed(void *arg, const pp_zone_closed *z) {
  zclose_ctx *x = arg;
  chrome_ctx *c = x->c;
  cthread *h = &c->th[x->ti];
  zbind *b = h->zb && z->depth < PP_PAIR_MAX_DEPTH ? &h->zb[z->depth] : NULL;
  if (b && b->serial == z->cookie && b->state == ZB_PENDING) {
    fpoint *p = &c->ch[b->chain].pt[b->pt];
    p->zstart = z->start;
    p->zend = z->end;
    p->zloc = (uint32_t)z->site;
    p->zunclosed = (uint8_t)z->lost_end;
    p->parked = 1;
    b->state = ZB_NONE;
    return;
  }
  int bound = b && b->serial == z->cookie && b->state == ZB_BOUND;
  write_x(c, x->ti, (uint32_t)z->site, z->start, z->end, z->lost_end,
          bound ? b->key : 0, bound ? b->flags : 0);
  if (b && b->serial == z->cookie)
    b->state = ZB_NONE;
}

static void zone_event(chrome_ctx *c, size_t ti, cthread *h,
                       const pp_event *e) {
  zclose_ctx x = {c, ti};
  if (e->type == PPT_EV_ZONE_END) {
    pp_zone_closed z;
    if (pp__zstack_end_fast(&h->zs, e->loc, e->ts, &c->pc, &z) == 0)
      zone_closed(&x, &z);
    else
      pp__zstack_end(&h->zs, e->loc, e->ts, &c->pc, zone_closed, &x);
    return;
  }
  uint64_t serial = ++c->serial;
  if (pp__zstack_begin_fast(&h->zs, e->loc, e->ts, serial) != 0)
    pp__zstack_begin(&h->zs, e->loc, e->ts, serial, &c->pc);
}

/* ---- flows --------------------------------------------------------------
 * A chain is decided when it ends: at its FLOW_END, at the next FLOW_BEGIN
 * of its name, process and id, or at the end of the stream. It is bound
 * with flows v2 when every point lies in a zone, consecutive points in one
 * zone counting once, the zones start in strictly increasing order and
 * none of them was claimed by another chain first; otherwise it is written
 * as v1 events. Until then the zones it claimed wait: open on their
 * thread's stack, or parked in the claiming point once closed. */

static uint32_t chain_hash(uint32_t cls, uint32_t pid, uint64_t id) {
  return (uint32_t)mix64(id ^ ((uint64_t)cls << 32 | pid));
}

static int chain_is(const chain *k, uint32_t cls, uint32_t pid, uint64_t id) {
  return k->cls == cls && k->pid == pid && k->id == id;
}

/* The open chain's slot, or UINT32_MAX. */
static uint32_t chain_find(chrome_ctx *c, uint32_t cls, uint32_t pid,
                           uint64_t id) {
  if (!c->hcap)
    return UINT32_MAX;
  uint32_t m = c->hcap - 1;
  for (uint32_t i = chain_hash(cls, pid, id) & m;; i = (i + 1) & m) {
    uint32_t v = c->hash[i];
    if (!v)
      return UINT32_MAX;
    if (chain_is(&c->ch[v - 1], cls, pid, id))
      return v - 1;
  }
}

/* Remove slot k from the hash (backward-shift deletion). */
static void chain_unhash(chrome_ctx *c, uint32_t k) {
  const chain *x = &c->ch[k];
  uint32_t m = c->hcap - 1;
  uint32_t i = chain_hash(x->cls, x->pid, x->id) & m;
  while (c->hash[i] != k + 1)
    i = (i + 1) & m;
  for (uint32_t j = (i + 1) & m; c->hash[j]; j = (j + 1) & m) {
    const chain *y = &c->ch[c->hash[j] - 1];
    uint32_t h = chain_hash(y->cls, y->pid, y->id) & m;
    /* j's entry may move to i when its home is not in (i, j] */
    if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
      c->hash[i] = c->hash[j];
      i = j;
    }
  }
  c->hash[i] = 0;
}

/* A free slot for a new chain (the table sized for CHAINS_MAX open). */
static uint32_t chain_new(chrome_ctx *c, uint32_t cls, uint32_t pid,
                          uint64_t id, uint32_t loc) {
  if (!c->hcap) {
    c->hash = pp__calloc(2 * CHAINS_MAX, sizeof *c->hash);
    c->ch = pp__calloc(CHAINS_MAX, sizeof *c->ch);
    if (!c->hash || !c->ch)
      return UINT32_MAX;
    c->hcap = 2 * CHAINS_MAX;
  }
  uint32_t k = c->nch < CHAINS_MAX ? c->nch++ : UINT32_MAX;
  if (k == UINT32_MAX)
    for (k = 0; c->ch[k].used; k++) /* a slot freed earlier */
      ;
  chain *x = &c->ch[k];
  fpoint *keep = x->pt;
  uint32_t cap = x->cap;
  memset(x, 0, sizeof *x);
  x->pt = keep;
  x->cap = cap;
  x->id = id;
  x->cls = cls;
  x->pid = pid;
  x->used = 1;
  x->key = chain_key(pp_trace_loc_name(c->t, loc), id, c->chains_started++);
  if (pid != c->t->pid) /* another process's chain of the same id */
    x->key = mix64(x->key ^ pid);
  uint32_t m = c->hcap - 1;
  uint32_t i = chain_hash(cls, pid, id) & m;
  while (c->hash[i])
    i = (i + 1) & m;
  c->hash[i] = k + 1;
  c->nopen++;
  return k;
}

/* The claimed zone of point p: its binding on its thread's stack. */
static zbind *claim_of(chrome_ctx *c, const fpoint *p) {
  cthread *h = &c->th[p->th];
  zbind *b = &h->zb[p->depth];
  return b->serial == p->zone && b->state == ZB_PENDING ? b : NULL;
}

/* The chain cannot be bound: give back the zones it claimed. */
static void chain_fail(chrome_ctx *c, chain *x) {
  x->v1 = 1;
  for (uint32_t i = 0; i < x->n; i++) {
    fpoint *p = &x->pt[i];
    if (!p->claimed)
      continue;
    if (p->parked)
      write_x(c, p->th, p->zloc, p->zstart, p->zend, p->zunclosed, 0, 0);
    else {
      zbind *b = claim_of(c, p);
      if (b)
        b->state = ZB_NONE;
    }
    p->claimed = p->parked = 0;
  }
}

static void write_v1(chrome_ctx *c, const chain *x) {
  pp_jsonw *w = &c->w;
  for (uint32_t i = 0; i < x->n; i++) {
    const fpoint *p = &x->pt[i];
    char ph[] = "{\"ph\":\"?\",\"name\":";
    if (x->n == 1)
      ph[7] = p->type == PPT_EV_FLOW_BEGIN ? 's'
              : p->type == PPT_EV_FLOW_END ? 'f'
                                           : 't';
    else
      ph[7] = i == 0 ? 's' : i + 1 == x->n ? 'f' : 't';
    pp_jsonw_elem(w);
    pp_jsonw_put(w, ph, sizeof ph - 1);
    put_name(c, p->loc);
    pp_jsonw_put(w, S(",\"cat\":\"flow\",\"id\":"));
    put_hex64(w, x->key);
    if (ph[7] == 'f')
      pp_jsonw_put(w, S(",\"bp\":\"e\""));
    put_thread_ts(c, p->th, p->ts);
    pp_jsonw_putc(w, '}');
  }
}

/* The chain in slot k ends: bind or write it, and free the slot. */
static void chain_decide(chrome_ctx *c, uint32_t k) {
  chain *x = &c->ch[k];
  if (x->v1) {
    write_v1(c, x);
    c->lim.chains_v1++;
  } else {
    uint32_t n = x->ndistinct, j = 0;
    for (uint32_t i = 0; i < x->n; i++) {
      fpoint *p = &x->pt[i];
      if (!p->claimed)
        continue;
      uint8_t f;
      if (n == 1)
        f = p->type == PPT_EV_FLOW_BEGIN ? FLOW_OUT
            : p->type == PPT_EV_FLOW_END ? FLOW_IN
                                         : FLOW_IN | FLOW_OUT;
      else
        f = (uint8_t)((j > 0 ? FLOW_IN : 0) | (j + 1 < n ? FLOW_OUT : 0));
      j++;
      if (p->parked) {
        write_x(c, p->th, p->zloc, p->zstart, p->zend, p->zunclosed, x->key,
                f);
      } else {
        zbind *b = claim_of(c, p);
        if (b) {
          b->state = ZB_BOUND;
          b->key = x->key;
          b->flags = f;
        }
      }
    }
    c->lim.chains_v2++;
  }
  chain_unhash(c, k);
  c->npoints -= x->n;
  x->n = 0;
  x->used = 0;
  if (x->cap > 64) { /* a long chain gives its room back */
    pp__free(x->pt);
    x->pt = NULL;
    x->cap = 0;
  }
  c->nopen--;
}

/* A bound was reached: every open chain ends here (counted). */
static void chains_cut(chrome_ctx *c) {
  for (uint32_t k = 0; k < c->nch; k++)
    if (c->ch[k].used) {
      c->lim.flow_chains_cut++;
      chain_decide(c, k);
    }
}

static int flow_event(chrome_ctx *c, size_t ti, cthread *h, const pp_event *e) {
  const pp_trace *t = c->t;
  uint32_t cls = e->loc < c->ncanon ? c->canon[e->loc] : e->loc;
  uint32_t pid = pp_thread_pid(t, &t->threads[ti]);
  uint32_t k = chain_find(c, cls, pid, e->v.id);
  if (k != UINT32_MAX && e->type == PPT_EV_FLOW_BEGIN) {
    chain_decide(c, k);
    k = UINT32_MAX;
  }
  if (c->npoints >= POINTS_MAX || (k == UINT32_MAX && c->nopen >= CHAINS_MAX)) {
    chains_cut(c);
    k = UINT32_MAX;
  }
  if (k == UINT32_MAX &&
      (k = chain_new(c, cls, pid, e->v.id, e->loc)) == UINT32_MAX)
    return -1;
  chain *x = &c->ch[k];
  if (x->n == x->cap) {
    size_t cap = x->cap;
    if (pp__grow((void **)&x->pt, &cap, (size_t)x->n + 1, sizeof *x->pt))
      return -1;
    x->cap = (uint32_t)cap;
  }
  fpoint *p = &x->pt[x->n];
  memset(p, 0, sizeof *p);
  p->ts = e->ts;
  p->th = (uint32_t)ti;
  p->loc = e->loc;
  p->type = e->type;
  const pp_zone_stack *zs = &h->zs;
  if (zs->n) {
    p->zone = zs->v[zs->n - 1].cookie;
    p->depth = zs->n - 1;
  }
  if (!x->v1) {
    const fpoint *last = x->n ? &x->pt[x->n - 1] : NULL;
    if (!p->zone) {
      chain_fail(c, x);
    } else if (last && last->th == p->th && last->zone == p->zone) {
      /* the same zone as the point before: counts once */
    } else {
      if (!h->zb && !(h->zb = pp__calloc(PP_PAIR_MAX_DEPTH, sizeof *h->zb)))
        return -1;
      zbind *b = &h->zb[p->depth];
      int64_t start = zs->v[zs->n - 1].start;
      if ((b->serial == p->zone && b->state != ZB_NONE) ||
          (x->ndistinct && start <= x->prev_start)) {
        chain_fail(c, x);
      } else {
        *b = (zbind){p->zone, 0, k, x->n, ZB_PENDING, 0};
        p->claimed = 1;
        x->ndistinct++;
        x->prev_start = start;
      }
    }
  }
  x->n++;
  c->npoints++;
  if (e->type == PPT_EV_FLOW_END)
    chain_decide(c, k);
  return 0;
}

/* ---- ranges: async slices ("b"/"e", one id each), so that they never
 * break the per-thread nesting of X events; paired as the analysis pairs
 * them (pair/intervals.h). */

static size_t thread_index(const pp_trace *t, uint64_t tid);

static void write_range(chrome_ctx *c, uint32_t loc, uint64_t id, int64_t start,
                        uint64_t tid_start, int64_t end, uint64_t tid_end,
                        int unclosed) {
  pp_jsonw *w = &c->w;
  const pp_trace *t = c->t;
  for (int k = 0; k < 2; k++) {
    pp_jsonw_elem(w);
    if (k)
      pp_jsonw_put(w, S("{\"ph\":\"e\",\"name\":"));
    else
      pp_jsonw_put(w, S("{\"ph\":\"b\",\"name\":"));
    put_name(c, loc);
    pp_jsonw_put(w, S(",\"cat\":\"range\",\"id\":"));
    put_hex64(w, id);
    if (k && unclosed)
      pp_jsonw_put(w, S(",\"args\":{\"unclosed\":true}"));
    put_thread_ts(c, thread_index(t, k ? tid_end : tid_start), k ? end : start);
    pp_jsonw_putc(w, '}');
  }
}

static void range_event(chrome_ctx *c, size_t ti, const pp_event *e) {
  pp_half h = {e->v.id, e->ts,
               e->loc,  c->t->threads[ti].tid,
               0,       e->type == PPT_EV_RANGE_END},
          b, x;
  if (pp__idpairs_put(&c->ranges, &h, &b, &x) == 1)
    write_range(c, (uint32_t)b.cookie, b.id, b.ts, b.tid,
                x.ts < b.ts ? b.ts : x.ts, x.tid, 0);
}

typedef struct unended_ctx {
  chrome_ctx *c;
  int64_t end;
} unended_ctx;

static void range_unended(void *arg, const pp_half *h) {
  unended_ctx *u = arg;
  if (!h->is_end)
    write_range(u->c, (uint32_t)h->cookie, h->id, h->ts, h->tid,
                u->end < h->ts ? h->ts : u->end, h->tid, 1);
}

/* ---- counters, instants, queue depths ------------------------------------
 * Counters: per counter name (call sites sharing a name feed one counter),
 * events of all threads in the feed's time order; ADD events emit the
 * running value; non-finite values are skipped (JSON cannot hold them). */

static int counter_event(chrome_ctx *c, size_t ti, const pp_event *e) {
  uint32_t key = e->loc < c->ncanon ? c->canon[e->loc] : e->loc;
  if (key >= c->nctr) {
    size_t n = c->nctr;
    if (pp__grow((void **)&c->ctr, &n, (size_t)key + 1, sizeof *c->ctr))
      return -1;
    memset(c->ctr + c->nctr, 0, (n - c->nctr) * sizeof *c->ctr);
    c->nctr = n;
  }
  cseries *s = &c->ctr[key];
  if (!s->label) {
    char label[128];
    s->label = 1;
    if (c->have_rt &&
        thread_track_label(c->t, &c->rt, key, label, sizeof label)) {
      if (!(s->text = pp__strdup(label)))
        return -1;
      s->label = 2;
    }
  }
  if (e->type == PPT_EV_COUNTER_SET) {
    s->iv = e->v.i;
    s->is_f = 0;
  } else if (e->type == PPT_EV_COUNTER_ADD) {
    if (s->is_f)
      s->fv += (double)e->v.i;
    else /* wraps like the analysis does */
      s->iv = (int64_t)((uint64_t)s->iv + (uint64_t)e->v.i);
  } else {
    s->fv = e->v.f;
    s->is_f = 1;
  }
  if (s->is_f && !isfinite(s->fv))
    return 0;
  pp_jsonw *w = &c->w;
  pp_jsonw_elem(w);
  pp_jsonw_put(w, S("{\"ph\":\"C\",\"name\":"));
  if (s->label == 2)
    pp_jsonw_put_str(w, s->text, strlen(s->text));
  else
    put_name(c, e->loc);
  char *p = pp_jsonw_room(w, PRE_TS_MAX + 36);
  if (!p)
    return 0;
  p = w_thread_ts(c, p, ti, e->ts);
  p = pp_jsonw_w_lit(p, S(",\"args\":{\"value\":"));
  if (s->is_f) {
    pp_jsonw_commit(w, p);
    pp_jsonw_put_double(w, s->fv);
    pp_jsonw_put(w, S("}}"));
  } else {
    p = pp_jsonw_w_int(p, s->iv);
    pp_jsonw_commit(w, pp_jsonw_w_lit(p, S("}}")));
  }
  return 0;
}

static void instant_event(chrome_ctx *c, size_t ti, const pp_event *e) {
  pp_jsonw *w = &c->w;
  pp_jsonw_elem(w);
  if (e->type == PPT_EV_MARK) {
    pp_jsonw_put(w, S("{\"ph\":\"i\",\"s\":\"t\",\"name\":"));
    put_name(c, e->loc);
    pp_jsonw_put(w, S(",\"cat\":\"mark\""));
  } else {
    pp_jsonw_put(w, S("{\"ph\":\"i\",\"s\":\"p\",\"name\":"));
    put_name(c, e->loc);
    pp_jsonw_put(w, S(",\"cat\":\"frame\""));
  }
  put_thread_ts(c, ti, e->ts);
  pp_jsonw_putc(w, '}');
}

/* Queue depth as a counter track per queue ("<queue> depth", series
 * "depth"): the depth the library recorded with each push and pop. */
static void queue_event(chrome_ctx *c, size_t ti, const pp_event *e) {
  size_t n;
  const char *q = qname_of(c, e->loc, &n);
  if (!q || n < 2)
    return;
  int64_t d = ppt_unzigzag(e->v2);
  pp_jsonw *w = &c->w;
  pp_jsonw_elem(w);
  pp_jsonw_put(w, S("{\"ph\":\"C\",\"name\":"));
  /* the quoted name without its closing quote, then " depth" */
  pp_jsonw_put(w, q, n - 1);
  pp_jsonw_put(w, S(" depth\""));
  put_thread_ts(c, ti, e->ts);
  pp_jsonw_put(w, S(",\"args\":{\"depth\":"));
  pp_jsonw_put_int(w, d > 0 ? d : 0);
  pp_jsonw_put(w, S("}}"));
}

/* ---- requests and queue items: async slices ------------------------------
 * A request from its begin to its end (with an instant at its first
 * token), an item from its push to its pop in each queue: async slices
 * ("b"/"e" by category, name and id), each on a track of its own in
 * Perfetto, so a request's or an item's path through the stages shows on
 * the timeline. Written as the events come; an end whose begin the trace
 * lacks has nothing to close, and a begin never ended stays open to the
 * end of the trace. */

/* The start of an async event of phase ph, up to its name. */
static void async_head(chrome_ctx *c, char ph) {
  pp_jsonw *w = &c->w;
  pp_jsonw_elem(w);
  pp_jsonw_put(w, S("{\"ph\":\""));
  pp_jsonw_putc(w, ph);
  pp_jsonw_put(w, S("\",\"name\":"));
}

static void request_event(chrome_ctx *c, size_t ti, const pp_event *e) {
  pp_jsonw *w = &c->w;
  char ph = e->type == PPT_EV_REQ_BEGIN ? 'b'
            : e->type == PPT_EV_REQ_END ? 'e'
                                        : 'n';
  async_head(c, ph);
  if (ph == 'n')
    pp_jsonw_put(w, S("\"first token\""));
  else
    pp_jsonw_put(w, S("\"request\""));
  pp_jsonw_put(w, S(",\"cat\":\"request\",\"id\":"));
  put_hex64(w, e->v.id);
  if (ph == 'e') {
    int64_t st = ppt_unzigzag(e->v2);
    pp_jsonw_put(w, S(",\"args\":{\"status\":"));
    pp_jsonw_put_int(w, st);
    pp_jsonw_putc(w, '}');
  }
  put_thread_ts(c, ti, e->ts);
  pp_jsonw_putc(w, '}');
}

static void item_event(chrome_ctx *c, size_t ti, const pp_event *e) {
  size_t n;
  const char *q = qname_of(c, e->loc, &n);
  if (!q)
    return;
  pp_jsonw *w = &c->w;
  async_head(c, e->type == PPT_EV_QUEUE_PUSH ? 'b' : 'e');
  pp_jsonw_put(w, q, n);
  pp_jsonw_put(w, S(",\"cat\":\"queue item\",\"id\":"));
  put_hex64(w, e->v.id);
  put_thread_ts(c, ti, e->ts);
  pp_jsonw_putc(w, '}');
}

/* ---- the stream ---------------------------------------------------------- */

static void write_names(chrome_ctx *c);

/* The document's head and the names, at the first event (or the finish):
 * a streamed read knows its threads and sites from its first pass. */
static int start(chrome_ctx *c) {
  const pp_trace *t = c->t;
  if (c->started)
    return 0;
  c->started = 1;
  c->t0 = c->streamed && t->diag.have_first ? t->diag.first_ns
          : c->a                            ? c->a->prof.t0
                                            : 0;
  if (t->nlocs && pp_loc_canon(t, &c->canon) != 0)
    return -1;
  c->ncanon = t->nlocs;
  c->have_rt = pp_run_tree_get(t, c->a, &c->rt) == 0;
  if (pp_jsonw_init(&c->w, c->out) != 0)
    return -1;
  pp_jsonw *w = &c->w;
  pp_jsonw_obj_begin(w);
  pp_jsonw_key(w, "traceEvents");
  pp_jsonw_arr_begin_lines(w);
  write_names(c);
  return 0;
}

/* One event, in the order of model/feed.h. */
static int ordered_event(void *arg, const pp_trace *t, uint32_t thread,
                         const pp_event *e) {
  chrome_ctx *c = arg;
  c->t = t;
  if (c->failed || (!c->started && start(c) != 0)) {
    c->failed = 1;
    return -1;
  }
  if (e->loc >= t->nlocs || thread >= t->nthreads)
    return 0;
  cthread *h = thread_of(c, thread);
  if (!h)
    return c->failed = 1, -1;
  c->lim.events++;
  switch (e->type) {
  case PPT_EV_ZONE_BEGIN:
  case PPT_EV_ZONE_END:
    zone_event(c, thread, h, e);
    break;
  case PPT_EV_MARK:
  case PPT_EV_FRAME:
    instant_event(c, thread, e);
    break;
  case PPT_EV_FLOW_BEGIN:
  case PPT_EV_FLOW_STEP:
  case PPT_EV_FLOW_END:
    if (flow_event(c, thread, h, e) != 0)
      c->failed = 1;
    break;
  case PPT_EV_RANGE_BEGIN:
  case PPT_EV_RANGE_END:
    range_event(c, thread, e);
    break;
  case PPT_EV_COUNTER_SET:
  case PPT_EV_COUNTER_ADD:
  case PPT_EV_COUNTER_SETF:
    if (counter_event(c, thread, e) != 0)
      c->failed = 1;
    break;
  case PPT_EV_QUEUE_PUSH:
  case PPT_EV_QUEUE_POP:
    queue_event(c, thread, e);
    item_event(c, thread, e);
    break;
  case PPT_EV_REQ_BEGIN:
  case PPT_EV_REQ_FIRST:
  case PPT_EV_REQ_END:
    request_event(c, thread, e);
    break;
  default:
    break;
  }
  return c->failed || c->w.err ? -1 : 0;
}

/* ---- metadata ----------------------------------------------------------- */

/* A META value as a JSON integer when it is one, else as a string. */
static void kv_meta_num(pp_jsonw *w, const pp_trace *t, const char *key,
                        int64_t *out, int *ok) {
  const char *v = pp_trace_meta(t, key);
  *ok = 0;
  if (!v)
    return;
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  pp_jsonw_key(w, key);
  if (end != v && !*end && errno == 0) {
    pp_jsonw_int(w, x);
    *out = x;
    *ok = 1;
  } else {
    pp_jsonw_str(w, v);
  }
}

static void write_metadata(chrome_ctx *c) {
  const pp_trace *t = c->t;
  const pp_profile *p = &c->a->prof;
  pp_jsonw *w = &c->w;
  pp_jsonw_key(w, "metadata");
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_str(w, "pipeprof_version", PP_VERSION_STRING);
  pp_jsonw_kv_uint(w, "pid", t->pid);
  const char *pname = pp_trace_meta(t, "process_name");
  if (pname)
    pp_jsonw_kv_str(w, "process_name", pname);
  const char *mode = pp_trace_meta(t, "mode");
  if (mode)
    pp_jsonw_kv_str(w, "mode", mode);
  pp_jsonw_kv_str(w, "clock", "monotonic");
  pp_jsonw_kv_int(w, "t0_ns", c->t0);
  int64_t smono = 0, sreal = 0;
  int has_mono, has_real;
  kv_meta_num(w, t, "start_mono_ns", &smono, &has_mono);
  kv_meta_num(w, t, "start_realtime_ns", &sreal, &has_real);
  /* Wall-clock time of ts 0: from the first clock sync point, else from
   * the start anchor. */
  int64_t mono = 0, real = 0, d, r;
  int have = 0;
  if (t->nclock) {
    mono = t->clock[0].mono_ns;
    real = t->clock[0].real_ns;
    have = 1;
  } else if (has_mono && has_real) {
    mono = smono;
    real = sreal;
    have = 1;
  }
  if (have && !__builtin_sub_overflow(c->t0, mono, &d) &&
      !__builtin_add_overflow(real, d, &r))
    pp_jsonw_kv_int(w, "t0_realtime_ns", r);
  pp_jsonw_kv_uint(w, "dropped_events", p->dropped);
  pp_jsonw_key(w, "dropped_by_thread");
  pp_jsonw_obj_begin(w);
  for (size_t i = 0; i < t->nthreads; i++) {
    char k[24];
    k[pp_jsonw_fmt_uint(k, t->threads[i].tid)] = '\0';
    pp_jsonw_kv_uint(w, k, t->threads[i].dropped);
  }
  pp_jsonw_obj_end(w);
  pp_jsonw_kv_uint(w, "unclosed_zones",
                   c->zones_unfed ? c->pc.lost_ends : p->unclosed);
  pp_jsonw_kv_uint(w, "unmatched_zone_ends",
                   c->zones_unfed ? c->pc.stray_ends : p->unmatched_ends);
  pp_jsonw_kv_uint(w, "flow_chains_v2", c->lim.chains_v2);
  pp_jsonw_kv_uint(w, "flow_chains_v1", c->lim.chains_v1);
  pp_jsonw_key(w, "reader");
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_uint(w, "chunks_ok", t->diag.chunks_ok);
  pp_jsonw_kv_uint(w, "chunks_bad", t->diag.chunks_bad);
  pp_jsonw_kv_uint(w, "bytes_skipped", t->diag.bytes_skipped);
  pp_jsonw_kv_uint(w, "events_bad", t->diag.events_bad);
  pp_jsonw_kv_bool(w, "truncated", t->diag.truncated);
  pp_jsonw_kv_bool(w, "clean_end", t->diag.clean_end);
  /* The events written: every one (streamed from the read, or all kept
   * in memory), or the window a read kept (every event before
   * details_complete_until_ns after t0; --details of a run directory). */
  pp_jsonw_kv_uint(w, "events_read", t->diag.events);
  pp_jsonw_kv_bool(w, "streamed", c->streamed);
  pp_jsonw_kv_uint(w, "events_kept",
                   c->streamed ? t->diag.events : t->diag.events_kept);
  pp_jsonw_key(w, "details_complete_until_ns");
  int64_t window = c->streamed ? -1 : pp_details_window_ns(c->a);
  if (window >= 0)
    pp_jsonw_int(w, window);
  else
    pp_jsonw_null(w);
  /* Bounds of the export's own state; any non-zero figure means the file
   * is less than the trace says (docs/cli.md). */
  const pp_chrome_limits *l = &c->lim;
  pp_jsonw_kv_bool(w, "complete", window < 0 && !pp_chrome_limited(l));
  pp_jsonw_kv_uint(w, "events_late", l->events_late);
  pp_jsonw_kv_uint(w, "zones_too_deep", l->zones_too_deep);
  pp_jsonw_kv_uint(w, "flow_chains_cut", l->flow_chains_cut);
  pp_jsonw_kv_uint(w, "ranges_lost", l->ranges_lost);
  pp_jsonw_obj_end(w);
  pp_jsonw_obj_end(w);
}

/* ---- entry point -------------------------------------------------------- */

/* ---- CUDA activity: GPU tracks --------------------------------------------
 * Kernels, copies and memsets go on one process per device (pid
 * GPU_PID_BASE + device, above any Linux pid) and one thread per stream, as
 * X events; the API calls that launched them go on the calling thread's
 * track, tied to the GPU work by a v2 flow (bind_id from the correlation
 * id). Runtime API calls are all written, driver API calls only when they
 * launched something (the driver makes many calls of its own). */
#define GPU_PID_BASE 1000000000u

static void put_cuda_bind(pp_jsonw *w, uint32_t correlation) {
  uint64_t v = mix64(0xC0DA000000000000ULL ^ correlation);
  static const char hx[] = "0123456789abcdef";
  char b[17];
  for (int i = 0; i < 16; i++)
    b[i] = hx[(v >> (60 - 4 * i)) & 15];
  b[16] = 0;
  pp_jsonw_key(w, "bind_id");
  pp_jsonw_str(w, b);
}

static void gpu_event_head(chrome_ctx *c, const char *name, const char *cat,
                           uint32_t device, uint32_t stream, int64_t start,
                           int64_t end) {
  pp_jsonw *w = &c->w;
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_str(w, "ph", "X");
  pp_jsonw_kv_str(w, "name", name);
  pp_jsonw_kv_str(w, "cat", cat);
  pp_jsonw_kv_uint(w, "pid", (uint64_t)GPU_PID_BASE + device);
  pp_jsonw_kv_uint(w, "tid", stream);
  pp_jsonw_key(w, "ts");
  pp_jsonw_us(w, rel_ns(c, start));
  pp_jsonw_key(w, "dur");
  pp_jsonw_us(w, pp__span(start, end));
}

static void flow_in(chrome_ctx *c, const pp_gpu_attr *a,
                    uint32_t correlation) {
  if (a->api < 0)
    return;
  put_cuda_bind(&c->w, correlation);
  pp_jsonw_kv_bool(&c->w, "flow_in", 1);
}

static void gpu_track_names(chrome_ctx *c, uint32_t device, uint32_t stream,
                            int *seen_device) {
  pp_jsonw *w = &c->w;
  char name[48];
  if (!*seen_device) {
    snprintf(name, sizeof name, "GPU %u", (unsigned)device);
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "ph", "M");
    pp_jsonw_kv_str(w, "name", "process_name");
    pp_jsonw_kv_uint(w, "pid", (uint64_t)GPU_PID_BASE + device);
    pp_jsonw_kv_uint(w, "tid", 0);
    pp_jsonw_key(w, "args");
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "name", name);
    pp_jsonw_obj_end(w);
    pp_jsonw_obj_end(w);
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "ph", "M");
    pp_jsonw_kv_str(w, "name", "process_sort_index");
    pp_jsonw_kv_uint(w, "pid", (uint64_t)GPU_PID_BASE + device);
    pp_jsonw_kv_uint(w, "tid", 0);
    pp_jsonw_key(w, "args");
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_uint(w, "sort_index", 1000 + device);
    pp_jsonw_obj_end(w);
    pp_jsonw_obj_end(w);
    *seen_device = 1;
  }
  snprintf(name, sizeof name, "stream %u", (unsigned)stream);
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_str(w, "ph", "M");
  pp_jsonw_kv_str(w, "name", "thread_name");
  pp_jsonw_kv_uint(w, "pid", (uint64_t)GPU_PID_BASE + device);
  pp_jsonw_kv_uint(w, "tid", stream);
  pp_jsonw_key(w, "args");
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_str(w, "name", name);
  pp_jsonw_obj_end(w);
  pp_jsonw_obj_end(w);
}

typedef struct dev_stream {
  uint32_t device, stream;
} dev_stream;

static int cmp_dev_stream(const void *a, const void *b) {
  const dev_stream *x = a, *y = b;
  if (x->device != y->device)
    return x->device < y->device ? -1 : 1;
  return x->stream < y->stream ? -1 : x->stream > y->stream;
}

static int write_cuda(chrome_ctx *c) {
  const pp_trace *t = c->t;
  const pp_gpu_activity *g = c->a->cuda;
  if (!g)
    return 0;
  const pp_cuda_trace *cu = &t->cuda;
  pp_jsonw *w = &c->w;
  size_t nops = cu->nkernels + cu->nmemcpys + cu->nmemsets;
  dev_stream *ds = pp__malloc((nops ? nops : 1) * sizeof *ds);
  unsigned char *launched = pp__calloc(cu->napis ? cu->napis : 1, 1);
  if (!ds || !launched) {
    pp__free(ds);
    pp__free(launched);
    return -1;
  }
  size_t n = 0;
  for (size_t i = 0; i < cu->nkernels; i++)
    ds[n++] = (dev_stream){cu->kernels[i].device, cu->kernels[i].stream};
  for (size_t i = 0; i < cu->nmemcpys; i++)
    ds[n++] = (dev_stream){cu->memcpys[i].device, cu->memcpys[i].stream};
  for (size_t i = 0; i < cu->nmemsets; i++)
    ds[n++] = (dev_stream){cu->memsets[i].device, cu->memsets[i].stream};
  qsort(ds, n, sizeof *ds, cmp_dev_stream);
  for (size_t i = 0; i < n; i++) {
    if (i && !cmp_dev_stream(&ds[i], &ds[i - 1]))
      continue;
    int seen = i && ds[i - 1].device == ds[i].device;
    gpu_track_names(c, ds[i].device, ds[i].stream, &seen);
  }
  pp__free(ds);
  for (size_t i = 0; i < cu->nkernels && !w->err; i++) {
    const pp_cuda_kernel *k = &cu->kernels[i];
    const pp_gpu_attr *a = &g->kernel_attr[i];
    gpu_event_head(c, pp_cuda_name(cu, k->name), "kernel", k->device,
                   k->stream, k->start, k->end);
    flow_in(c, a, k->correlation);
    pp_jsonw_key(w, "args");
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_uint(w, "device", k->device);
    pp_jsonw_kv_uint(w, "context", k->context);
    pp_jsonw_kv_uint(w, "stream", k->stream);
    pp_jsonw_kv_uint(w, "correlation", k->correlation);
    pp_jsonw_key(w, "grid");
    pp_jsonw_arr_begin(w);
    for (int d = 0; d < 3; d++)
      pp_jsonw_int(w, k->grid[d]);
    pp_jsonw_arr_end(w);
    pp_jsonw_key(w, "block");
    pp_jsonw_arr_begin(w);
    for (int d = 0; d < 3; d++)
      pp_jsonw_int(w, k->block[d]);
    pp_jsonw_arr_end(w);
    pp_jsonw_kv_uint(w, "registers per thread", k->registers);
    pp_jsonw_kv_int(w, "shared memory",
                    (int64_t)k->static_smem + k->dynamic_smem);
    if (k->queued > 0 && k->start >= k->queued) {
      pp_jsonw_key(w, "queued_us");
      pp_jsonw_us(w, pp__span(k->queued, k->start));
    }
    pp_jsonw_obj_end(w);
    pp_jsonw_obj_end(w);
    if (a->api >= 0)
      launched[a->api] = 1;
  }
  for (size_t i = 0; i < cu->nmemcpys && !w->err; i++) {
    const pp_cuda_memcpy *m = &cu->memcpys[i];
    const pp_gpu_attr *a = &g->memcpy_attr[i];
    int dir = pp_gpu_xfer_dir(m->copy_kind);
    char name[80];
    snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", pp_gpu_xfer_label(dir),
             pp_gpu_memory_kind(m->src_kind), pp_gpu_memory_kind(m->dst_kind));
    gpu_event_head(c, name, "gpu_memcpy", m->device, m->stream, m->start,
                   m->end);
    flow_in(c, a, m->correlation);
    pp_jsonw_key(w, "args");
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_uint(w, "device", m->device);
    pp_jsonw_kv_uint(w, "context", m->context);
    pp_jsonw_kv_uint(w, "stream", m->stream);
    pp_jsonw_kv_uint(w, "correlation", m->correlation);
    pp_jsonw_kv_uint(w, "bytes", m->bytes);
    if (m->end > m->start)
      pp_jsonw_kv_double(w, "memory bandwidth (GB/s)",
                         (double)m->bytes / (double)((uint64_t)m->end - (uint64_t)m->start));
    pp_jsonw_obj_end(w);
    pp_jsonw_obj_end(w);
    if (a->api >= 0)
      launched[a->api] = 1;
  }
  for (size_t i = 0; i < cu->nmemsets && !w->err; i++) {
    const pp_cuda_memset *m = &cu->memsets[i];
    const pp_gpu_attr *a = &g->memset_attr[i];
    gpu_event_head(c, "Memset", "gpu_memset", m->device, m->stream, m->start,
                   m->end);
    flow_in(c, a, m->correlation);
    pp_jsonw_key(w, "args");
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_uint(w, "device", m->device);
    pp_jsonw_kv_uint(w, "stream", m->stream);
    pp_jsonw_kv_uint(w, "correlation", m->correlation);
    pp_jsonw_kv_uint(w, "bytes", m->bytes);
    pp_jsonw_obj_end(w);
    pp_jsonw_obj_end(w);
    if (a->api >= 0)
      launched[a->api] = 1;
  }
  for (size_t i = 0; i < cu->napis && !w->err; i++) {
    const pp_cuda_api *p = &cu->apis[i];
    if (p->domain != 2 && !launched[i])
      continue;
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "ph", "X");
    pp_jsonw_kv_str(w, "name", pp_cuda_name(cu, p->name));
    pp_jsonw_kv_str(w, "cat", p->domain == 1 ? "cuda_driver" : "cuda_runtime");
    pp_jsonw_kv_uint(w, "pid", tid_pid(c, p->tid));
    pp_jsonw_kv_uint(w, "tid", p->tid);
    pp_jsonw_key(w, "ts");
    pp_jsonw_us(w, rel_ns(c, p->start));
    pp_jsonw_key(w, "dur");
    pp_jsonw_us(w, pp__span(p->start, p->end));
    if (launched[i]) {
      put_cuda_bind(w, p->correlation);
      pp_jsonw_kv_bool(w, "flow_out", 1);
    }
    pp_jsonw_key(w, "args");
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_uint(w, "cbid", p->cbid);
    pp_jsonw_kv_uint(w, "correlation", p->correlation);
    pp_jsonw_obj_end(w);
    pp_jsonw_obj_end(w);
  }
  pp__free(launched);
  return w->err ? -1 : 0;
}

static pp_chrome *chrome_new(FILE *out, int streamed) {
  pp_chrome *c = pp__calloc(1, sizeof *c);
  if (!c)
    return NULL;
  c->out = out;
  c->streamed = streamed;
  pp__idpairs_init(&c->ranges, streamed ? RANGES_MAX : SIZE_MAX);
  if (streamed && !(c->order = pp_order_new(REORDER_CAP, ordered_event, c))) {
    pp__free(c);
    return NULL;
  }
  return c;
}

pp_chrome *pp_chrome_stream_new(FILE *out) { return chrome_new(out, 1); }

int pp_chrome_stream_event(void *arg, const pp_trace *t, uint32_t thread,
                           const pp_event *e) {
  pp_chrome *c = arg;
  return pp_order_put(c->order, t, thread, e) == 0 && !c->failed ? 0 : -1;
}

int pp_chrome_stream_release(pp_chrome *c, const pp_trace *t, int64_t before) {
  if (c->order && pp_order_release(c->order, t, before) != 0)
    c->failed = 1;
  return c->failed ? -1 : 0;
}

void pp_chrome_stream_zones_unfed(pp_chrome *c, int have, int64_t last_ns) {
  c->zones_unfed = 1;
  c->have_zone_last = have;
  c->zone_last = last_ns;
}

const pp_chrome_limits *pp_chrome_stream_limits(const pp_chrome *c) {
  return &c->lim;
}

void pp_chrome_stream_free(pp_chrome *c) {
  if (!c)
    return;
  if (c->started)
    pp_jsonw_finish(&c->w); /* abandoned: release the buffer */
  for (size_t i = 0; i < c->nnames; i++)
    pp__free(c->qname[i]);
  pp__free(c->qname);
  pp__free(c->qlen);
  pp__free(c->canon);
  for (size_t i = 0; i < c->nth; i++) {
    pp__zstack_free(&c->th[i].zs);
    pp__free(c->th[i].zb);
  }
  pp__free(c->th);
  for (size_t i = 0; i < c->nctr; i++)
    pp__free(c->ctr[i].text);
  pp__free(c->ctr);
  if (c->have_rt)
    pp_run_tree_free(&c->rt);
  pp__idpairs_free(&c->ranges);
  pp_order_free(c->order);
  for (uint32_t i = 0; i < c->nch; i++)
    pp__free(c->ch[i].pt);
  pp__free(c->ch);
  pp__free(c->hash);
  pp__free(c);
}

int pp_chrome_stream_finish(pp_chrome *c, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  c->t = t;
  c->a = a;
  if (!a->analyzed || (c->order && pp_order_flush(c->order, t) != 0) ||
      c->failed || (!c->started && start(c) != 0)) {
    c->failed = 1;
    return -1;
  }
  if (c->order)
    c->lim.events_late = pp_order_late(c->order);
  /* What is open at the end is drawn to it: the trace's end, or the end
   * of the window of events a read stored. */
  const pp_profile *p = &a->prof;
  int64_t t1 = c->zones_unfed && c->have_zone_last && c->zone_last > p->t1
                   ? c->zone_last
                   : p->t1;
  int64_t end = !c->streamed && pp_details_window_ns(a) >= 0 &&
                        t->diag.first_unkept_ns < t1
                    ? t->diag.first_unkept_ns
                    : t1;
  for (size_t i = 0; i < c->nth; i++) {
    zclose_ctx x = {c, i};
    if (c->th[i].ready)
      pp__zstack_finish(&c->th[i].zs, end, &c->pc, zone_closed, &x);
  }
  for (uint32_t k = 0; k < c->nch; k++)
    if (c->ch[k].used)
      chain_decide(c, k);
  unended_ctx u = {c, end};
  pp__idpairs_finish(&c->ranges, range_unended, &u);
  c->lim.ranges_lost = c->ranges.c.lost;
  c->lim.zones_too_deep = c->pc.too_deep;
  pp_jsonw *w = &c->w;
  write_notes(c);
  write_gpu(c);
  if (write_cuda(c) != 0 || c->failed) {
    c->failed = 1;
    return -1;
  }
  pp_jsonw_arr_end(w);
  pp_jsonw_kv_str(w, "displayTimeUnit", "ns");
  write_metadata(c);
  pp_jsonw_obj_end(w);
  pp_jsonw_putc(w, '\n');
  c->started = 0; /* the writer is finished here */
  return pp_jsonw_finish(w) == 0 && !c->failed ? 0 : -1;
}

int pp_export_chrome(FILE *out, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  if (!out || !t || !a->analyzed)
    return -1;
  pp_chrome *c = chrome_new(out, 0);
  if (!c)
    return -1;
  c->t = t;
  c->a = a;
  int rc = -1;
  if (start(c) == 0 &&
      pp_feed_in_time_order(t, PP_FEED_ALL, ordered_event, c) == 0)
    rc = pp_chrome_stream_finish(c, a);
  pp_chrome_stream_free(c);
  return rc;
}
