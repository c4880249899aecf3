/* SPDX-License-Identifier: MIT */
/*
 * Chrome / Perfetto JSON export (the Trace Event Format, object form): one
 * `X` event per zone instance, `C` events for counters, `i` events for
 * marks (thread scope) and frame marks (process scope), `M` events naming
 * the process and threads, and flows. Timestamps are microseconds with
 * three decimals (exact nanoseconds), relative to the trace's first event
 * (prof.t0, given in metadata with the wall-clock anchor).
 *
 * Flows: the points of one flow (same flow name and id, from a FLOW_BEGIN
 * to the point before the next FLOW_BEGIN) form a chain, ordered by time.
 * A chain is written with flows v2 (bind_id + flow_out/flow_in on the X
 * events of the zones enclosing its points: the first zone flow_out, the
 * last flow_in, those between both) when every point has an enclosing zone,
 * none of those zones carries another chain, and the zones start in
 * strictly increasing order (Perfetto binds v2 flows while it walks slices
 * by start time). Consecutive points in the same zone count once.
 * Otherwise the whole chain is written as flow v1 events (`s`, `t`, `f`
 * with "bp":"e"), which bind at the points' own timestamps. The bind_id /
 * id is a string of 16 hex digits: a 64-bit hash of the flow name, the id
 * and the chain's ordinal among chains with that name and id (Perfetto
 * reads string ids as hex; chrome://tracing compares them as strings).
 *
 * Counters follow pp_analyze(): per counter name (call sites sharing a
 * name feed one counter), events of all threads in time order (ties by thread,
 * then recording order); ADD events emit the running value; non-finite values
 * are skipped (JSON cannot hold them).
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
#include "export/run_tree.h"
#include "format/pptrace.h"
#include "internal.h"
#include "pipeprof/version.h"

#define FLOW_OUT 1u
#define FLOW_IN 2u

/* One flow event, for building chains. */
typedef struct flow_pt {
  int64_t ts;
  uint64_t id;
  uint64_t key; /* the chain's bind id */
  uint32_t cls; /* flow name class (locs with equal names share one) */
  uint32_t th;  /* thread index */
  uint32_t pid; /* its process: ids are per process in merged traces */
  size_t seq;   /* event index in the thread */
  int32_t zone; /* enclosing zone instance, -1 when none */
  uint8_t type; /* PPT_EV_FLOW_* */
  char v1;      /* phase when written as a v1 event, 0 when bound v2 */
} flow_pt;

/* A counter event reference, for the time-ordered merge. */
typedef struct ctr_ref {
  const pp_event *ev;
  uint32_t key; /* canonical loc */
  uint32_t th;
  size_t seq;
} ctr_ref;

/* Per-thread flow bindings (arrays of nzones, NULL without flows). */
typedef struct thread_binds {
  uint64_t *key;
  uint8_t *flags;
} thread_binds;

typedef struct chrome_ctx {
  const pp_trace *t;
  pp_jsonw w;
  char **qname; /* per loc: quoted, escaped name */
  size_t *qlen;
  char *thr; /* per thread: ,"pid":P,"tid":T,"ts": */
  size_t *thr_off, *thr_len;
  uint32_t *canon; /* per loc, see pp_loc_canon() */
  thread_binds *binds;
  flow_pt *flows;
  size_t nflows;
  uint64_t chains_v1, chains_v2;
  size_t last_tid_th; /* tid_pid's last answer */
} chrome_ctx;

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
  return diff_sat(ts, c->t->prof.t0);
}

static void put_name(chrome_ctx *c, uint32_t loc) {
  if (loc < c->t->nlocs && c->qname[loc])
    pp_jsonw_put(&c->w, c->qname[loc], c->qlen[loc]);
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

/* Writes ,"pid":P,"tid":T,"ts":<rel ts> for thread i. */
static void put_thread_ts(chrome_ctx *c, size_t i, int64_t ts) {
  pp_jsonw_put(&c->w, c->thr + c->thr_off[i], c->thr_len[i]);
  pp_jsonw_put_us(&c->w, rel_ns(c, ts));
}

static void put_hex64(pp_jsonw *w, uint64_t v) {
  static const char hx[] = "0123456789abcdef";
  char b[18];
  b[0] = '"';
  for (int i = 0; i < 16; i++)
    b[1 + i] = hx[(v >> (60 - 4 * i)) & 15];
  b[17] = '"';
  pp_jsonw_put(w, b, sizeof b);
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

/* ---- setup -------------------------------------------------------------- */

static int build_names(chrome_ctx *c) {
  const pp_trace *t = c->t;
  if (!t->nlocs)
    return 0;
  c->qname = pp__calloc(t->nlocs, sizeof *c->qname);
  c->qlen = pp__calloc(t->nlocs, sizeof *c->qlen);
  if (!c->qname || !c->qlen)
    return -1;
  for (size_t i = 0; i < t->nlocs; i++) {
    const char *n = pp_trace_loc_name(t, (uint32_t)i);
    c->qname[i] = pp_jsonw_quote(n, strlen(n), &c->qlen[i]);
    if (!c->qname[i])
      return -1;
  }
  return 0;
}

static int build_threads(chrome_ctx *c) {
  const pp_trace *t = c->t;
  if (!t->nthreads)
    return 0;
  size_t per = 64;
  if (t->nthreads > SIZE_MAX / per)
    return -1;
  c->thr = pp__malloc(t->nthreads * per);
  c->thr_off = pp__malloc(t->nthreads * sizeof *c->thr_off);
  c->thr_len = pp__malloc(t->nthreads * sizeof *c->thr_len);
  if (!c->thr || !c->thr_off || !c->thr_len)
    return -1;
  for (size_t i = 0; i < t->nthreads; i++) {
    char *p = c->thr + i * per;
    size_t n = 0;
    memcpy(p + n, ",\"pid\":", 7);
    n += 7;
    n += pp_jsonw_fmt_uint(p + n, pp_thread_pid(t, &t->threads[i]));
    memcpy(p + n, ",\"tid\":", 7);
    n += 7;
    n += pp_jsonw_fmt_uint(p + n, t->threads[i].tid);
    memcpy(p + n, ",\"ts\":", 6);
    n += 6;
    c->thr_off[i] = i * per;
    c->thr_len[i] = n;
  }
  return 0;
}


static int is_flow(uint8_t type) {
  return type == PPT_EV_FLOW_BEGIN || type == PPT_EV_FLOW_STEP ||
         type == PPT_EV_FLOW_END;
}

static int cmp_flow(const void *a, const void *b) {
  const flow_pt *x = a, *y = b;
  if (x->cls != y->cls)
    return x->cls < y->cls ? -1 : 1;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  if (x->id != y->id)
    return x->id < y->id ? -1 : 1;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  if (x->th != y->th)
    return x->th < y->th ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Try to bind chain p[0..n-1] with flows v2; returns 1 when done. */
static int bind_v2(chrome_ctx *c, flow_pt *p, size_t n) {
  const pp_trace *t = c->t;
  int64_t prev_start = 0;
  size_t distinct = 0;
  for (size_t i = 0; i < n; i++) {
    if (p[i].zone < 0)
      return 0;
    if (i && p[i].th == p[i - 1].th && p[i].zone == p[i - 1].zone)
      continue;
    const pp_zone_inst *z = &t->threads[p[i].th].zones[p[i].zone];
    if (c->binds[p[i].th].key[p[i].zone] != 0)
      return 0;
    if (distinct && z->start <= prev_start)
      return 0;
    prev_start = z->start;
    distinct++;
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    p[i].v1 = 0;
    if (i && p[i].th == p[i - 1].th && p[i].zone == p[i - 1].zone)
      continue;
    uint8_t f;
    if (distinct == 1)
      f = p[i].type == PPT_EV_FLOW_BEGIN ? FLOW_OUT
          : p[i].type == PPT_EV_FLOW_END ? FLOW_IN
                                         : FLOW_IN | FLOW_OUT;
    else
      f = (uint8_t)((k > 0 ? FLOW_IN : 0) | (k + 1 < distinct ? FLOW_OUT : 0));
    c->binds[p[i].th].key[p[i].zone] = p[i].key;
    c->binds[p[i].th].flags[p[i].zone] = f;
    k++;
  }
  return 1;
}

static void mark_v1(flow_pt *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (n == 1)
      p[i].v1 = p[i].type == PPT_EV_FLOW_BEGIN ? 's'
                : p[i].type == PPT_EV_FLOW_END ? 'f'
                                               : 't';
    else
      p[i].v1 = i == 0 ? 's' : i + 1 == n ? 'f' : 't';
  }
}

static int plan_flows(chrome_ctx *c) {
  const pp_trace *t = c->t;
  size_t n = 0;
  for (size_t i = 0; i < t->nthreads; i++)
    for (size_t j = 0; j < t->threads[i].nev; j++) {
      const pp_event *e = &t->threads[i].ev[j];
      if (is_flow(e->type) && e->loc < t->nlocs)
        n++;
    }
  if (!n)
    return 0;
  if (n > SIZE_MAX / sizeof(flow_pt))
    return -1;
  c->flows = pp__malloc(n * sizeof *c->flows);
  c->binds = pp__calloc(t->nthreads, sizeof *c->binds);
  if (!c->flows || !c->binds)
    return -1;
  for (size_t i = 0; i < t->nthreads; i++) {
    size_t nz = t->threads[i].nzones;
    if (!nz)
      continue;
    c->binds[i].key = pp__calloc(nz, sizeof(uint64_t));
    c->binds[i].flags = pp__calloc(nz, 1);
    if (!c->binds[i].key || !c->binds[i].flags)
      return -1;
  }
  size_t k = 0;
  for (size_t i = 0; i < t->nthreads; i++) {
    const pp_thread *th = &t->threads[i];
    for (size_t j = 0; j < th->nev; j++) {
      const pp_event *e = &th->ev[j];
      if (!is_flow(e->type) || e->loc >= t->nlocs)
        continue;
      c->flows[k++] = (flow_pt){
          .ts = e->ts,
          .id = e->v.id,
          .cls = c->canon[e->loc],
          .th = (uint32_t)i,
          .pid = pp_thread_pid(t, th),
          .seq = j,
          .zone = (int32_t)pp_zone_enclosing(th, e->ts),
          .type = e->type,
      };
    }
  }
  c->nflows = n;
  qsort(c->flows, n, sizeof *c->flows, cmp_flow);

  /* Split into chains: a group is one (name, process, id); a FLOW_BEGIN
   * starts a new chain within it. */
  uint64_t gen = 0;
  for (size_t i = 0; i < n;) {
    flow_pt *p = &c->flows[i];
    if (i == 0 || p->cls != p[-1].cls || p->pid != p[-1].pid ||
        p->id != p[-1].id)
      gen = 0;
    else
      gen++;
    size_t j = i + 1;
    while (j < n && c->flows[j].cls == p->cls && c->flows[j].pid == p->pid &&
           c->flows[j].id == p->id && c->flows[j].type != PPT_EV_FLOW_BEGIN)
      j++;
    /* the name of the class: every point's loc has it */
    const char *name = pp_trace_loc_name(t, t->threads[p->th].ev[p->seq].loc);
    uint64_t key = chain_key(name, p->id, gen);
    if (p->pid != t->pid) /* another process's chain of the same id */
      key = mix64(key ^ p->pid);
    for (size_t m = i; m < j; m++)
      c->flows[m].key = key;
    if (bind_v2(c, p, j - i)) {
      c->chains_v2++;
    } else {
      mark_v1(p, j - i);
      c->chains_v1++;
    }
    i = j;
  }
  return 0;
}

static void free_ctx(chrome_ctx *c) {
  const pp_trace *t = c->t;
  if (c->qname)
    for (size_t i = 0; i < t->nlocs; i++)
      pp__free(c->qname[i]);
  pp__free(c->qname);
  pp__free(c->qlen);
  pp__free(c->thr);
  pp__free(c->thr_off);
  pp__free(c->thr_len);
  if (c->binds)
    for (size_t i = 0; i < t->nthreads; i++) {
      pp__free(c->binds[i].key);
      pp__free(c->binds[i].flags);
    }
  pp__free(c->binds);
  pp__free(c->flows);
  pp__free(c->canon);
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
  const pp_gpu_stats *g = &t->prof.gpu;
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
  for (size_t i = 0; i < t->ngpu; i++) {
    const pp_gpu_zone_rec *z = &t->gpu[i];
    int64_t dur;
    if (__builtin_sub_overflow(z->end, z->start, &dur) || dur < 0)
      dur = dur < 0 ? 0 : INT64_MAX;
    pp_jsonw_elem(w);
    pp_jsonw_put(w, S("{\"ph\":\"X\",\"name\":"));
    put_name(c, z->loc);
    pp_jsonw_put(w, S(",\"cat\":\"gpu\",\"pid\":"));
    pp_jsonw_put_uint(w, tid_pid(c, g->tracks[z->track].tid));
    pp_jsonw_put(w, S(",\"tid\":"));
    pp_jsonw_put_uint(w, GPU_TID_BASE + z->track);
    pp_jsonw_put(w, S(",\"ts\":"));
    pp_jsonw_put_us(w, rel_ns(c, z->start));
    pp_jsonw_put(w, S(",\"dur\":"));
    pp_jsonw_put_us(w, dur);
    pp_jsonw_put(w, S(",\"args\":{\"launch_delay_us\":"));
    pp_jsonw_put_us(w, diff_sat(z->start, z->launch));
    pp_jsonw_put(w, S("}}"));
    if (z->cpu_zone < 0)
      continue;
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
        pp_jsonw_put_uint(w, tid_pid(c, g->tracks[z->track].tid));
        pp_jsonw_put(w, S(",\"tid\":"));
        pp_jsonw_put_uint(w, GPU_TID_BASE + z->track);
        pp_jsonw_put(w, S(",\"ts\":"));
        pp_jsonw_put_us(w, rel_ns(c, z->start));
      } else {
        put_thread_ts(c, thread_index(t, z->tid), z->launch);
      }
      pp_jsonw_putc(w, '}');
    }
  }
  /* Memory pools: one counter track per pool and device. */
  for (size_t i = 0; i < t->prof.npools; i++) {
    const pp_mem_pool_stats *ps = &t->prof.pools[i];
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

static void write_zones(chrome_ctx *c, size_t ti) {
  const pp_thread *th = &c->t->threads[ti];
  pp_jsonw *w = &c->w;
  const thread_binds *b = c->binds ? &c->binds[ti] : NULL;
  for (size_t i = 0; i < th->nzones; i++) {
    const pp_zone_inst *z = &th->zones[i];
    pp_jsonw_elem(w);
    pp_jsonw_put(w, S("{\"ph\":\"X\",\"name\":"));
    put_name(c, z->loc);
    pp_jsonw_put(w, S(",\"cat\":\"zone\""));
    put_thread_ts(c, ti, z->start);
    pp_jsonw_put(w, S(",\"dur\":"));
    int64_t dur;
    if (__builtin_sub_overflow(z->end, z->start, &dur) || dur < 0)
      dur = dur < 0 ? 0 : INT64_MAX;
    pp_jsonw_put_us(w, dur);
    pp_jsonw_put(w, S(",\"args\":{\"self_us\":"));
    pp_jsonw_put_us(w, z->self);
    if (z->unclosed)
      pp_jsonw_put(w, S(",\"unclosed\":true"));
    pp_jsonw_putc(w, '}');
    if (b && b->key && b->key[i]) {
      pp_jsonw_put(w, S(",\"bind_id\":"));
      put_hex64(w, b->key[i]);
      if (b->flags[i] & FLOW_OUT)
        pp_jsonw_put(w, S(",\"flow_out\":true"));
      if (b->flags[i] & FLOW_IN)
        pp_jsonw_put(w, S(",\"flow_in\":true"));
    }
    pp_jsonw_putc(w, '}');
  }
}

static void write_instants(chrome_ctx *c, size_t ti) {
  const pp_thread *th = &c->t->threads[ti];
  pp_jsonw *w = &c->w;
  for (size_t i = 0; i < th->nev; i++) {
    const pp_event *e = &th->ev[i];
    if (e->loc >= c->t->nlocs)
      continue;
    if (e->type == PPT_EV_MARK) {
      pp_jsonw_elem(w);
      pp_jsonw_put(w, S("{\"ph\":\"i\",\"s\":\"t\",\"name\":"));
      put_name(c, e->loc);
      pp_jsonw_put(w, S(",\"cat\":\"mark\""));
    } else if (e->type == PPT_EV_FRAME) {
      pp_jsonw_elem(w);
      pp_jsonw_put(w, S("{\"ph\":\"i\",\"s\":\"p\",\"name\":"));
      put_name(c, e->loc);
      pp_jsonw_put(w, S(",\"cat\":\"frame\""));
    } else {
      continue;
    }
    put_thread_ts(c, ti, e->ts);
    pp_jsonw_putc(w, '}');
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

static void write_flows_v1(chrome_ctx *c) {
  pp_jsonw *w = &c->w;
  for (size_t i = 0; i < c->nflows; i++) {
    const flow_pt *p = &c->flows[i];
    if (!p->v1)
      continue;
    const pp_event *e = &c->t->threads[p->th].ev[p->seq];
    char ph[] = "{\"ph\":\"?\",\"name\":";
    ph[7] = p->v1;
    pp_jsonw_elem(w);
    pp_jsonw_put(w, ph, sizeof ph - 1);
    put_name(c, e->loc);
    pp_jsonw_put(w, S(",\"cat\":\"flow\",\"id\":"));
    put_hex64(w, p->key);
    if (p->v1 == 'f')
      pp_jsonw_put(w, S(",\"bp\":\"e\""));
    put_thread_ts(c, p->th, p->ts);
    pp_jsonw_putc(w, '}');
  }
}

static size_t thread_index(const pp_trace *t, uint64_t tid) {
  for (size_t i = 0; i < t->nthreads; i++)
    if (t->threads[i].tid == tid)
      return i;
  return 0;
}

/* Ranges that may cross threads: async slices ("b"/"e", one id each), so
 * they never break the per-thread nesting of X events. */
static void write_ranges(chrome_ctx *c) {
  const pp_trace *t = c->t;
  pp_jsonw *w = &c->w;
  if (!t->nthreads)
    return;
  for (size_t i = 0; i < t->nranges; i++) {
    const pp_range *r = &t->ranges[i];
    for (int end = 0; end < 2; end++) {
      pp_jsonw_elem(w);
      if (end)
        pp_jsonw_put(w, S("{\"ph\":\"e\",\"name\":"));
      else
        pp_jsonw_put(w, S("{\"ph\":\"b\",\"name\":"));
      put_name(c, r->loc);
      pp_jsonw_put(w, S(",\"cat\":\"range\",\"id\":"));
      put_hex64(w, r->id);
      if (end && r->unclosed)
        pp_jsonw_put(w, S(",\"args\":{\"unclosed\":true}"));
      put_thread_ts(c, thread_index(t, end ? r->tid_end : r->tid_start),
                    end ? r->end : r->start);
      pp_jsonw_putc(w, '}');
    }
  }
}

static int is_counter(uint8_t type) {
  return type == PPT_EV_COUNTER_SET || type == PPT_EV_COUNTER_ADD ||
         type == PPT_EV_COUNTER_SETF;
}

static int cmp_ctr(const void *a, const void *b) {
  const ctr_ref *x = a, *y = b;
  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  if (x->ev->ts != y->ev->ts)
    return x->ev->ts < y->ev->ts ? -1 : 1;
  if (x->th != y->th)
    return x->th < y->th ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
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

static int write_counters(chrome_ctx *c) {
  const pp_trace *t = c->t;
  pp_jsonw *w = &c->w;
  size_t n = 0;
  for (size_t i = 0; i < t->nthreads; i++)
    for (size_t j = 0; j < t->threads[i].nev; j++) {
      const pp_event *e = &t->threads[i].ev[j];
      if (is_counter(e->type) && e->loc < t->nlocs)
        n++;
    }
  if (!n)
    return 0;
  if (n > SIZE_MAX / sizeof(ctr_ref))
    return -1;
  ctr_ref *r = pp__malloc(n * sizeof *r);
  if (!r)
    return -1;
  size_t k = 0;
  for (size_t i = 0; i < t->nthreads; i++)
    for (size_t j = 0; j < t->threads[i].nev; j++) {
      const pp_event *e = &t->threads[i].ev[j];
      if (is_counter(e->type) && e->loc < t->nlocs)
        r[k++] = (ctr_ref){e, c->canon[e->loc], (uint32_t)i, j};
    }
  qsort(r, n, sizeof *r, cmp_ctr);
  pp_run_tree rt;
  int have_rt = pp_run_tree_get(t, &rt) == 0;
  char label[128];
  int has_label = 0;
  int64_t iv = 0;
  double fv = 0;
  int is_f = 0;
  for (size_t i = 0; i < n; i++) {
    const pp_event *e = r[i].ev;
    if (i == 0 || r[i].key != r[i - 1].key) {
      iv = 0;
      fv = 0;
      is_f = 0;
      has_label =
          have_rt && thread_track_label(t, &rt, e->loc, label, sizeof label);
    }
    if (e->type == PPT_EV_COUNTER_SET) {
      iv = e->v.i;
      is_f = 0;
    } else if (e->type == PPT_EV_COUNTER_ADD) {
      if (is_f)
        fv += (double)e->v.i;
      else /* wraps like the analysis does */
        iv = (int64_t)((uint64_t)iv + (uint64_t)e->v.i);
    } else {
      fv = e->v.f;
      is_f = 1;
    }
    if (is_f && !isfinite(fv))
      continue;
    pp_jsonw_elem(w);
    pp_jsonw_put(w, S("{\"ph\":\"C\",\"name\":"));
    if (has_label)
      pp_jsonw_put_str(w, label, strlen(label));
    else
      put_name(c, e->loc);
    put_thread_ts(c, r[i].th, e->ts);
    pp_jsonw_put(w, S(",\"args\":{\"value\":"));
    if (is_f)
      pp_jsonw_put_double(w, fv);
    else
      pp_jsonw_put_int(w, iv);
    pp_jsonw_put(w, S("}}"));
  }
  pp__free(r);
  if (have_rt)
    pp_run_tree_free(&rt);
  return 0;
}

/* Queue depth as a counter track per queue ("<queue> depth", series
 * "depth"): the depth the library recorded with each push and pop. */
static void write_queue_depths(chrome_ctx *c) {
  const pp_trace *t = c->t;
  pp_jsonw *w = &c->w;
  for (size_t i = 0; i < t->nthreads; i++)
    for (size_t j = 0; j < t->threads[i].nev; j++) {
      const pp_event *e = &t->threads[i].ev[j];
      if ((e->type != PPT_EV_QUEUE_PUSH && e->type != PPT_EV_QUEUE_POP) ||
          e->loc >= t->nlocs || !c->qname[e->loc] || c->qlen[e->loc] < 2)
        continue;
      int64_t d = ppt_unzigzag(e->v2);
      pp_jsonw_elem(w);
      pp_jsonw_put(w, S("{\"ph\":\"C\",\"name\":"));
      /* the quoted name without its closing quote, then " depth" */
      pp_jsonw_put(w, c->qname[e->loc], c->qlen[e->loc] - 1);
      pp_jsonw_put(w, S(" depth\""));
      put_thread_ts(c, i, e->ts);
      pp_jsonw_put(w, S(",\"args\":{\"depth\":"));
      pp_jsonw_put_int(w, d > 0 ? d : 0);
      pp_jsonw_put(w, S("}}"));
    }
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
  const pp_profile *p = &t->prof;
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
  pp_jsonw_kv_int(w, "t0_ns", p->t0);
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
  if (have && !__builtin_sub_overflow(p->t0, mono, &d) &&
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
  pp_jsonw_kv_uint(w, "unclosed_zones", p->unclosed);
  pp_jsonw_kv_uint(w, "unmatched_zone_ends", p->unmatched_ends);
  pp_jsonw_kv_uint(w, "flow_chains_v2", c->chains_v2);
  pp_jsonw_kv_uint(w, "flow_chains_v1", c->chains_v1);
  pp_jsonw_key(w, "reader");
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_uint(w, "chunks_ok", t->diag.chunks_ok);
  pp_jsonw_kv_uint(w, "chunks_bad", t->diag.chunks_bad);
  pp_jsonw_kv_uint(w, "bytes_skipped", t->diag.bytes_skipped);
  pp_jsonw_kv_uint(w, "events_bad", t->diag.events_bad);
  pp_jsonw_kv_bool(w, "truncated", t->diag.truncated);
  pp_jsonw_kv_bool(w, "clean_end", t->diag.clean_end);
  /* The events written: every one, or the window the reader kept (every
   * event before details_complete_until_ns after t0; --details). */
  pp_jsonw_kv_uint(w, "events_read", t->diag.events);
  pp_jsonw_kv_uint(w, "events_kept", t->diag.events_kept);
  pp_jsonw_key(w, "details_complete_until_ns");
  int64_t window = pp_details_window_ns(t);
  if (window >= 0)
    pp_jsonw_int(w, window);
  else
    pp_jsonw_null(w);
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
  const pp_gpu_activity *g = t->cuda_an;
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
                         (double)m->bytes / (double)(m->end - m->start));
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

int pp_export_chrome(FILE *out, const pp_trace *t) {
  if (!out || !t || !t->analyzed)
    return -1;
  chrome_ctx c;
  memset(&c, 0, sizeof c);
  c.t = t;
  int rc = -1;
  if (t->nlocs && pp_loc_canon(t, &c.canon) != 0)
    goto done;
  if (pp_jsonw_init(&c.w, out) != 0 || build_names(&c) != 0 ||
      build_threads(&c) != 0 || plan_flows(&c) != 0)
    goto done;
  pp_jsonw *w = &c.w;
  pp_jsonw_obj_begin(w);
  pp_jsonw_key(w, "traceEvents");
  pp_jsonw_arr_begin_lines(w);
  write_names(&c);
  for (size_t i = 0; i < t->nthreads && !w->err; i++) {
    write_zones(&c, i);
    write_instants(&c, i);
  }
  write_flows_v1(&c);
  write_ranges(&c);
  write_notes(&c);
  write_gpu(&c);
  if (write_counters(&c) != 0 || write_cuda(&c) != 0)
    goto done;
  write_queue_depths(&c);
  pp_jsonw_arr_end(w);
  pp_jsonw_kv_str(w, "displayTimeUnit", "ns");
  write_metadata(&c);
  pp_jsonw_obj_end(w);
  pp_jsonw_putc(w, '\n');
  rc = 0;
done:
  if (pp_jsonw_finish(&c.w) != 0)
    rc = -1;
  free_ctx(&c);
  return rc;
}
