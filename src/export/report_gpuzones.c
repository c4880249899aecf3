/* SPDX-License-Identifier: MIT */
/*
 * The "GPU zones", "device memory" and "memory pools" sections of the text
 * report and their summary JSON members (see report_gpuzones.h). Figures
 * come from the analysis (prof.gpu, prof.pools, and the counters the
 * library samples through cuMemGetInfo, src/core/gpu.h); the library's
 * counts that a trace does not carry are left out rather than printed as 0.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/doc_json.h"
#include "export/doc_text.h"
#include "export/export.h"
#include "export/jsonw.h"
#include "export/report_gpuzones.h"
#include "format/pptrace.h"
#include "internal.h"
#include "pipeprof.h"

void pp_gpu_track_name(char *buf, size_t len, const pp_gpu_track *k) {
  snprintf(buf, len, "GPU %" PRIu32 " stream 0x%" PRIx64, k->device,
           k->stream);
}

/* The name of thread tid ("" when unknown or unnamed). */
static const char *thread_name(const pp_trace *t, uint64_t tid) {
  size_t i = pp_trace_thread_index(t, tid);
  return i < t->nthreads && t->threads[i].name ? t->threads[i].name : "";
}

static void gpu_section(FILE *out, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  const pp_gpu_stats *g = &a->prof.gpu;
  if (!g->nzones) {
    if (g->unavailable)
      fprintf(out, "\nGPU zones: unavailable: %s\n", g->unavailable);
    else
      fputs("\nGPU zones: none resolved\n", out);
  } else {
    pp_doc_text_table(out, pp_doc_find(a->doc, "gpu_zones"), 0);
    for (size_t i = 0; i < g->ntracks; i++) {
      char name[64];
      pp_gpu_track_name(name, sizeof name, &g->tracks[i]);
      fprintf(out, "  track %s: %" PRIu64 " zones, launched by thread %" PRIu64
                   " %s\n",
              name, g->tracks[i].zones, g->tracks[i].tid,
              thread_name(t, g->tracks[i].tid));
    }
    if (g->unavailable)
      fprintf(out, "  note: %s\n", g->unavailable);
  }
  if (g->not_aggregated > 0)
    fprintf(out,
            "  note: %" PRId64 " resolved zones are not in the statistics "
            "(stats mode keeps at most %u site/device/stream keys)\n",
            g->not_aggregated, PPT_STATS_GPU_MAX);
  if (g->resolved < 0)
    return; /* the trace carries no counts (cut short, or flight mode) */
  fprintf(out, "  resolved %" PRId64 ", unresolved at shutdown %" PRId64,
          g->resolved, g->unresolved < 0 ? 0 : g->unresolved);
  struct {
    const char *what;
    int64_t n;
  } drops[] = {{"pool exhausted", g->pool_exhausted},
               {"no CUDA context", g->no_context},
               {"record failed", g->record_failed},
               {"CUDA unavailable", g->unavailable_calls},
               {"query failed", g->query_failed}};
  int any = 0;
  for (size_t i = 0; i < sizeof drops / sizeof drops[0]; i++)
    if (drops[i].n > 0) {
      fprintf(out, "%s%s %" PRId64, any ? ", " : "; dropped: ", drops[i].what,
              drops[i].n);
      any = 1;
    }
  fputc('\n', out);
  if (g->calib_error_ns >= 0 && g->nzones) {
    char b[64];
    fprintf(out, "  GPU-to-CPU clock calibration error: at most %s\n",
            pp_format_ns(b, sizeof b, (double)g->calib_error_ns));
  }
}

/* ---- device memory sampled with cuMemGetInfo --------------------------- */

#define MAX_MEM_DEVS 64

typedef struct cuda_mem_dev {
  uint32_t device;
  const pp_counter_stats *used, *total;
  const char *why; /* META cuda_mem.<dev>.unavailable: the first failure */
  int64_t failed;  /* META cuda_mem.<dev>.failed; 0 when absent */
} cuda_mem_dev;

/* "cuda<dev>.<what>": the device, else -1. */
static int64_t cuda_counter(const char *name, const char *what) {
  const char *rest;
  long d = pp__name_index(name, "cuda", &rest);
  if (d < 0 || rest[0] != '.' || strcmp(rest + 1, what) != 0)
    return -1;
  return d;
}

int pp_counter_is_cuda_mem(const char *name) {
  return name && (cuda_counter(name, "mem_used_bytes") >= 0 ||
                  cuda_counter(name, "mem_total_bytes") >= 0);
}

static cuda_mem_dev *mem_dev(cuda_mem_dev *d, size_t *n, int64_t device) {
  for (size_t i = 0; i < *n; i++)
    if (d[i].device == (uint32_t)device)
      return &d[i];
  if (*n == MAX_MEM_DEVS)
    return NULL;
  size_t i = (*n)++;
  memset(&d[i], 0, sizeof d[i]);
  d[i].device = (uint32_t)device;
  return &d[i];
}

static int cmp_mem_dev(const void *a, const void *b) {
  const cuda_mem_dev *x = a, *y = b;
  return x->device < y->device ? -1 : x->device > y->device;
}

/* The devices the trace has device memory samples or reasons for, by
 * device; returns how many. */
static size_t cuda_mem_devs(const pp_analysis *a, cuda_mem_dev *d) {
  const pp_trace *t = a->trace;
  size_t n = 0;
  for (size_t i = 0; i < a->prof.ncounters; i++) {
    const pp_counter_stats *c = &a->prof.counters[i];
    const char *name = pp_trace_loc_name(t, c->loc);
    int64_t u = cuda_counter(name, "mem_used_bytes");
    int64_t k = cuda_counter(name, "mem_total_bytes");
    cuda_mem_dev *m = c->samples && (u >= 0 || k >= 0)
                          ? mem_dev(d, &n, u >= 0 ? u : k)
                          : NULL;
    if (m && u >= 0)
      m->used = c;
    else if (m)
      m->total = c;
  }
  for (size_t i = 0; i < t->nmeta; i++) {
    const char *key = t->meta[i].key, *rest;
    long dev = pp__name_index(key, "cuda_mem.", &rest);
    int why = dev >= 0 && strcmp(rest, ".unavailable") == 0;
    int failed = dev >= 0 && strcmp(rest, ".failed") == 0;
    cuda_mem_dev *m = why || failed ? mem_dev(d, &n, dev) : NULL;
    if (m && why)
      m->why = t->meta[i].value;
    else if (m && t->meta[i].value)
      m->failed = strtoll(t->meta[i].value, NULL, 10);
  }
  qsort(d, n, sizeof *d, cmp_mem_dev);
  return n;
}

static void cuda_mem_section(FILE *out, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  cuda_mem_dev d[MAX_MEM_DEVS];
  size_t n = cuda_mem_devs(a, d);
  const char *none = pp_trace_meta(t, "cuda_mem.unavailable");
  if (!n) {
    if (none)
      fprintf(out, "\ndevice memory (cuMemGetInfo): unavailable: %s\n", none);
    return;
  }
  fputs("\ndevice memory (cuMemGetInfo about once a second; used = total - "
        "free, by every process on the device)\n",
        out);
  for (size_t i = 0; i < n; i++) {
    const cuda_mem_dev *m = &d[i];
    fprintf(out, "  CUDA device %" PRIu32 ": ", m->device);
    if (!m->used) {
      fprintf(out, "unavailable: %s\n",
              m->why ? m->why : "no sample in the trace");
      continue;
    }
    char b[5][32];
    pp__fmt_bytes(b[0], sizeof b[0], m->used->min);
    pp__fmt_bytes(b[1], sizeof b[1], m->used->mean);
    pp__fmt_bytes(b[2], sizeof b[2], m->used->max);
    pp__fmt_bytes(b[3], sizeof b[3], m->used->last);
    fprintf(out, "used min %s, mean %s, max %s, last %s", b[0], b[1], b[2],
            b[3]);
    if (m->total)
      fprintf(out, " of %s", pp__fmt_bytes(b[4], sizeof b[4], m->total->last));
    fprintf(out, " (%" PRIu64 " samples)\n", m->used->samples);
    if (m->why && m->failed > 0)
      fprintf(out, "    %" PRId64 " failed calls (the first: %s)\n", m->failed,
              m->why);
    else if (m->why)
      fprintf(out, "    some samples missing: %s\n", m->why);
  }
}

static void cuda_mem_json(struct pp_jsonw *w, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  cuda_mem_dev d[MAX_MEM_DEVS];
  size_t n = cuda_mem_devs(a, d);
  const char *none = pp_trace_meta(t, "cuda_mem.unavailable");
  pp_jsonw_key(w, "device_memory");
  if (!n && !none) {
    pp_jsonw_null(w);
    return;
  }
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_str(w, "source", "cuMemGetInfo");
  pp_jsonw_kv_str(w, "unavailable", n ? NULL : none);
  pp_jsonw_key(w, "devices");
  pp_jsonw_arr_begin_lines(w);
  for (size_t i = 0; i < n; i++) {
    const cuda_mem_dev *m = &d[i];
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_uint(w, "device", m->device);
    pp_jsonw_key(w, "used_bytes");
    if (m->used) {
      pp_jsonw_obj_begin(w);
      pp_jsonw_kv_double(w, "mean", m->used->mean);
      pp_jsonw_kv_double(w, "min", m->used->min);
      pp_jsonw_kv_double(w, "max", m->used->max);
      pp_jsonw_kv_double(w, "last", m->used->last);
      pp_jsonw_kv_uint(w, "samples", m->used->samples);
      pp_jsonw_obj_end(w);
    } else {
      pp_jsonw_null(w);
    }
    pp_jsonw_key(w, "total_bytes");
    if (m->total)
      pp_jsonw_double(w, m->total->last);
    else
      pp_jsonw_null(w);
    pp_jsonw_kv_str(w, "unavailable", m->why);
    pp_jsonw_kv_int(w, "failed_calls", m->failed > 0 ? m->failed : 0);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
  pp_jsonw_obj_end(w);
}

/* Why a trace with pool sites has no pool figures, or NULL. */
static const char *pools_unavailable(const pp_analysis *a) {
  const pp_trace *t = a->trace;
  if (a->prof.npools || !t->from_stats)
    return NULL;
  for (size_t i = 0; i < t->nlocs; i++)
    if (t->locs[i].kind == PP_KIND_POOL)
      return "stats mode keeps no memory pool events (use trace mode)";
  return NULL;
}

/* Reserved-but-unused is reserved - in use; a pool whose program reported
 * a reservation smaller than what it had allocated gives a negative
 * figure, which is no fragmentation but inconsistent input. Which of the
 * two figures is negative: bit 0 at the watermark, bit 1 the mean. */
static int pool_inconsistent(const pp_mem_pool_stats *s) {
  if (!s->has_reserve)
    return 0;
  return (s->unused_at_peak < 0 ? 1 : 0) | (s->mean_unused < 0 ? 2 : 0);
}

/* The one-line explanation of pool_inconsistent(s) != 0. */
static void pool_inconsistent_why(const pp_mem_pool_stats *s, char *buf,
                                  size_t len) {
  char in_use[32], rsv[32];
  if (s->unused_at_peak < 0) {
    pp__fmt_bytes(in_use, sizeof in_use, (double)s->peak);
    pp__fmt_bytes(rsv, sizeof rsv, (double)s->reserved_at_peak);
    snprintf(buf, len,
             "inconsistent input: in use (%s) exceeded the reservation "
             "(%s) at the watermark",
             in_use, rsv);
  } else {
    snprintf(buf, len,
             "inconsistent input: in use exceeded the reservation for "
             "most of the time (mean reserved - in use is negative)");
  }
}

static void pool_section(FILE *out, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  const pp_profile *p = &a->prof;
  const char *why = pools_unavailable(a);
  if (why) {
    fprintf(out, "\nmemory pools: unavailable: %s\n", why);
    return;
  }
  if (!p->npools)
    return;
  fputs("\nmemory pools (in use = allocated, not freed; steady = "
        "time-weighted median in use over the second half of the run; "
        "unused = reserved - in use)\n",
        out);
  int nw = 4;
  for (size_t i = 0; i < p->npools; i++) {
    int k = (int)strlen(pp_trace_loc_name(t, p->pools[i].loc));
    nw = k > nw ? k : nw;
  }
  nw = nw > 32 ? 32 : nw;
  fprintf(out, "%-*s %4s %8s %8s %11s %11s %11s %11s %12s %12s %6s %11s\n", nw,
          "pool", "dev", "allocs", "frees", "peak", "steady", "mean",
          "rsv@peak", "unused@pk", "mean unused", "leaks", "leaked");
  for (size_t i = 0; i < p->npools; i++) {
    const pp_mem_pool_stats *s = &p->pools[i];
    char b[8][32];
    pp__fmt_bytes(b[0], sizeof b[0], (double)s->peak);
    pp__fmt_bytes(b[1], sizeof b[1], (double)s->steady);
    pp__fmt_bytes(b[2], sizeof b[2], s->mean_in_use);
    int bad = pool_inconsistent(s);
    if (s->has_reserve) {
      pp__fmt_bytes(b[3], sizeof b[3], (double)s->reserved_at_peak);
      if (bad & 1)
        snprintf(b[4], sizeof b[4], "inconsistent");
      else
        pp__fmt_bytes(b[4], sizeof b[4], (double)s->unused_at_peak);
      if (bad & 2)
        snprintf(b[5], sizeof b[5], "inconsistent");
      else
        pp__fmt_bytes(b[5], sizeof b[5], s->mean_unused);
    } else {
      for (int k = 3; k < 6; k++)
        snprintf(b[k], sizeof b[k], "-");
    }
    pp__fmt_bytes(b[6], sizeof b[6], (double)s->leaked_bytes);
    char dev[8]; /* PP_MEM_HOST: a host pool of the runtime */
    if (s->device == PP_MEM_HOST)
      snprintf(dev, sizeof dev, "host");
    else
      snprintf(dev, sizeof dev, "%" PRIu32, s->device);
    fprintf(out,
            "%-*.*s %4s %8" PRIu64 " %8" PRIu64
            " %11s %11s %11s %11s %12s %12s %6" PRIu64 " %11s\n",
            nw, nw, pp_trace_loc_name(t, s->loc), dev, s->allocs, s->frees,
            b[0], b[1], b[2], b[3], b[4], b[5], s->leaks, b[6]);
    if (s->unmatched_frees)
      fprintf(out, "  note: %" PRIu64 " frees of pointers not allocated "
                   "from this pool were ignored\n",
              s->unmatched_frees);
    /* Past the analysis's bound on live pointers: said, never silent. */
    if (s->untracked_allocs)
      fprintf(out,
              "  note: %" PRIu64 " allocations untracked (live-pointer "
              "table full), %" PRIu64 " frees taken as theirs: in-use "
              "figures are upper bounds\n",
              s->untracked_allocs, s->untracked_frees);
    if (bad) {
      char note[160];
      pool_inconsistent_why(s, note, sizeof note);
      fprintf(out, "  note: %s (pp_mem_reserve reported less than was "
                   "allocated): %s left out\n",
              note,
              bad == 3   ? "unused@pk and mean unused"
              : bad == 1 ? "unused@pk"
                         : "mean unused");
    }
  }
  for (size_t i = 0; i < p->npools; i++)
    if (!p->pools[i].has_reserve) {
      fputs("  (-: the pool never called pp_mem_reserve)\n", out);
      break;
    }
}

int pp_report_gpu_zones(FILE *out, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  if (!out || !t || !a->analyzed)
    return -1;
  if (a->prof.gpu.used)
    gpu_section(out, a);
  cuda_mem_section(out, a);
  pool_section(out, a);
  return ferror(out) ? -1 : 0;
}

/* ---- summary JSON ------------------------------------------------------- */

static void kv_count(struct pp_jsonw *w, const char *k, int64_t v) {
  pp_jsonw_key(w, k);
  if (v < 0)
    pp_jsonw_null(w);
  else
    pp_jsonw_int(w, v);
}

int pp_summary_gpu_zones_json(struct pp_jsonw *w, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  if (!w || !t || !a->analyzed)
    return -1;
  const pp_gpu_stats *g = &a->prof.gpu;
  pp_jsonw_key(w, "gpu_zones");
  if (!g->used) {
    pp_jsonw_null(w);
  } else {
    pp_jsonw_obj_begin(w);
    pp_jsonw_key(w, "unavailable");
    if (g->unavailable)
      pp_jsonw_str(w, g->unavailable);
    else
      pp_jsonw_null(w);
    pp_jsonw_key(w, "zones");
    pp_doc_json_rows(w, pp_doc_find(a->doc, "gpu_zones"), NULL, NULL);
    pp_jsonw_key(w, "tracks");
    pp_jsonw_arr_begin(w);
    for (size_t i = 0; i < g->ntracks; i++) {
      char hex[24];
      snprintf(hex, sizeof hex, "0x%" PRIx64, g->tracks[i].stream);
      pp_jsonw_obj_begin(w);
      pp_jsonw_kv_uint(w, "device", g->tracks[i].device);
      pp_jsonw_kv_str(w, "stream", hex);
      pp_jsonw_kv_uint(w, "tid", g->tracks[i].tid);
      pp_jsonw_kv_uint(w, "zones", g->tracks[i].zones);
      pp_jsonw_obj_end(w);
    }
    pp_jsonw_arr_end(w);
    kv_count(w, "resolved", g->resolved);
    kv_count(w, "unresolved", g->unresolved);
    pp_jsonw_key(w, "dropped");
    pp_jsonw_obj_begin(w);
    kv_count(w, "pool_exhausted", g->pool_exhausted);
    kv_count(w, "no_context", g->no_context);
    kv_count(w, "record_failed", g->record_failed);
    kv_count(w, "unavailable", g->unavailable_calls);
    kv_count(w, "query_failed", g->query_failed);
    pp_jsonw_obj_end(w);
    kv_count(w, "calib_error_ns", g->calib_error_ns);
    pp_jsonw_obj_end(w);
  }
  cuda_mem_json(w, a);
  pp_jsonw_key(w, "memory_pools");
  const char *why = pools_unavailable(a);
  if (why) {
    char b[160];
    snprintf(b, sizeof b, "unavailable: %s", why);
    pp_jsonw_str(w, b);
    return w->err ? -1 : 0;
  }
  pp_jsonw_arr_begin_lines(w);
  for (size_t i = 0; i < a->prof.npools; i++) {
    const pp_mem_pool_stats *s = &a->prof.pools[i];
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "name", pp_trace_loc_name(t, s->loc));
    /* a host pool of the runtime has no device (schema_minor 15: it read
     * "device 255") */
    pp_jsonw_key(w, "device");
    if (s->device == PP_MEM_HOST)
      pp_jsonw_null(w);
    else
      pp_jsonw_uint(w, s->device);
    pp_jsonw_kv_bool(w, "host", s->device == PP_MEM_HOST);
    pp_jsonw_kv_uint(w, "allocs", s->allocs);
    pp_jsonw_kv_uint(w, "frees", s->frees);
    pp_jsonw_kv_uint(w, "unmatched_frees", s->unmatched_frees);
    pp_jsonw_kv_uint(w, "peak_bytes", s->peak);
    pp_jsonw_kv_int(w, "peak_ns", s->peak_ts);
    pp_jsonw_kv_uint(w, "steady_bytes", s->steady);
    pp_jsonw_kv_double(w, "mean_in_use_bytes", s->mean_in_use);
    pp_jsonw_kv_uint(w, "final_in_use_bytes", s->final_in_use);
    pp_jsonw_key(w, "reserved_at_peak_bytes");
    if (s->has_reserve)
      pp_jsonw_uint(w, s->reserved_at_peak);
    else
      pp_jsonw_null(w);
    int bad = pool_inconsistent(s);
    pp_jsonw_key(w, "unused_at_peak_bytes");
    if (s->has_reserve && !(bad & 1))
      pp_jsonw_int(w, s->unused_at_peak);
    else
      pp_jsonw_null(w);
    pp_jsonw_key(w, "mean_unused_bytes");
    if (s->has_reserve && !(bad & 2))
      pp_jsonw_double(w, s->mean_unused);
    else
      pp_jsonw_null(w);
    pp_jsonw_kv_uint(w, "leaks", s->leaks);
    pp_jsonw_kv_uint(w, "leaked_bytes", s->leaked_bytes);
    pp_jsonw_kv_uint(w, "untracked_allocs", s->untracked_allocs);
    pp_jsonw_kv_uint(w, "untracked_frees", s->untracked_frees);
    pp_jsonw_key(w, "inconsistent");
    if (bad) {
      char note[160];
      pool_inconsistent_why(s, note, sizeof note);
      pp_jsonw_str(w, note);
    } else {
      pp_jsonw_null(w);
    }
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
  return w->err ? -1 : 0;
}
