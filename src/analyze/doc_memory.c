/* SPDX-License-Identifier: MIT */
/*
 * The results document's memory sections:
 * - "memory_pools": per pool (pp_mem_alloc/free/reserve; the runtime's
 *   host pools too) its allocations, frees, peak, steady and mean use, the
 *   reservation and what of it was unused, and what was never freed. The
 *   unused figures of a pool whose program reported a reservation below
 *   what it had allocated are unavailable (inconsistent input, not
 *   fragmentation); a stats-mode trace with pool sites has the table
 *   unavailable (it keeps no pool events).
 * - "device_memory": per CUDA device the used memory the library sampled
 *   with cuMemGetInfo (used = total - free, by every process on it), the
 *   total, and the failures; the whole table unavailable with the first
 *   failure when no device answered.
 * The text report, the summary JSON (memory_pools, device_memory) and
 * the HTML page lay them out.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "internal.h"
#include "results/doc.h"

/* ---- memory pools ------------------------------------------------------- */

static const pp_col pool_cols[] = {
    {"name", "pool", PP_VALUE_TEXT, 0, NULL},
    {"device", "device", PP_VALUE_COUNT, PP_COL_INT, "host"},
    {"host", "host", PP_VALUE_BOOL, PP_COL_BOOL | PP_COL_JSON_ONLY, NULL},
    {"allocs", "allocations", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"frees", "frees", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"unmatched_frees", "", PP_VALUE_COUNT, PP_COL_INT | PP_COL_JSON_ONLY,
     NULL},
    {"peak_bytes", "peak", PP_VALUE_BYTES, PP_COL_INT, NULL},
    {"peak_ns", "", PP_VALUE_NS, PP_COL_INT | PP_COL_JSON_ONLY, NULL},
    {"steady_bytes", "steady", PP_VALUE_BYTES, PP_COL_INT, NULL},
    {"mean_in_use_bytes", "mean in use", PP_VALUE_BYTES, 0, NULL},
    {"final_in_use_bytes", "at the end", PP_VALUE_BYTES, PP_COL_INT, NULL},
    {"reserved_at_peak_bytes", "reserved at peak", PP_VALUE_BYTES,
     PP_COL_INT, NULL},
    {"unused_at_peak_bytes", "unused at peak", PP_VALUE_BYTES, PP_COL_INT,
     NULL},
    {"mean_unused_bytes", "mean unused", PP_VALUE_BYTES, 0, NULL},
    {"leaks", "never freed", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"leaked_bytes", "never freed", PP_VALUE_BYTES, PP_COL_INT, NULL},
    {"untracked_allocs", "", PP_VALUE_COUNT, PP_COL_INT | PP_COL_JSON_ONLY,
     NULL},
    {"untracked_frees", "", PP_VALUE_COUNT, PP_COL_INT | PP_COL_JSON_ONLY,
     NULL},
    {"inconsistent", "", PP_VALUE_TEXT, PP_COL_JSON_ONLY, NULL},
};

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

#define INCONSISTENT "inconsistent input"

static int pools(const pp_analysis *a, pp_doc *d) {
  const pp_trace *t = a->trace;
  const pp_profile *p = &a->prof;
  const char *why = pools_unavailable(a);
  if (!why && !p->npools)
    return 0;
  pp_table *tb = pp_doc_table(
      d, "memory_pools", "memory pools",
      "in use = allocated, not freed; steady = the time-weighted median in "
      "use over the second half of the run; unused = reserved - in use",
      pool_cols, sizeof pool_cols / sizeof *pool_cols);
  if (!tb)
    return -1;
  if (why) {
    pp_table_unavailable(tb, why);
    return pp_doc_ok(d) ? 0 : -1;
  }
  int no_reserve = 0;
  for (size_t i = 0; i < p->npools; i++) {
    const pp_mem_pool_stats *s = &p->pools[i];
    long r = pp_table_row(tb);
    pp_cell_text(tb, r, "name", pp_trace_loc_name(t, s->loc));
    if (s->device != PP_MEM_HOST) /* a host pool of the runtime: none */
      pp_cell_count(tb, r, "device", s->device);
    pp_cell_num(tb, r, "host", s->device == PP_MEM_HOST);
    pp_cell_count(tb, r, "allocs", s->allocs);
    pp_cell_count(tb, r, "frees", s->frees);
    pp_cell_count(tb, r, "unmatched_frees", s->unmatched_frees);
    pp_cell_count(tb, r, "peak_bytes", s->peak);
    pp_cell_int(tb, r, "peak_ns", s->peak_ts);
    pp_cell_count(tb, r, "steady_bytes", s->steady);
    pp_cell_num(tb, r, "mean_in_use_bytes", s->mean_in_use);
    pp_cell_count(tb, r, "final_in_use_bytes", s->final_in_use);
    /* reserved - in use below 0: the program reported a reservation
     * smaller than what it had allocated, which is no fragmentation but
     * inconsistent input */
    char bad[200] = "";
    if (!s->has_reserve) {
      no_reserve = 1; /* no value (said in a remark), not unavailable */
    } else {
      pp_cell_count(tb, r, "reserved_at_peak_bytes", s->reserved_at_peak);
      if (s->unused_at_peak < 0) {
        char in_use[32], rsv[32];
        pp__fmt_bytes(in_use, sizeof in_use, (double)s->peak);
        pp__fmt_bytes(rsv, sizeof rsv, (double)s->reserved_at_peak);
        snprintf(bad, sizeof bad,
                 "inconsistent input: in use (%s) exceeded the reservation "
                 "(%s) at the watermark",
                 in_use, rsv);
      } else if (s->mean_unused < 0) {
        snprintf(bad, sizeof bad,
                 "inconsistent input: in use exceeded the reservation for "
                 "most of the time (mean reserved - in use is negative)");
      }
      if (s->unused_at_peak < 0)
        pp_cell_unavailable(tb, r, "unused_at_peak_bytes", INCONSISTENT);
      else
        pp_cell_int(tb, r, "unused_at_peak_bytes", s->unused_at_peak);
      if (s->mean_unused < 0)
        pp_cell_unavailable(tb, r, "mean_unused_bytes", INCONSISTENT);
      else
        pp_cell_num(tb, r, "mean_unused_bytes", s->mean_unused);
    }
    pp_cell_count(tb, r, "leaks", s->leaks);
    pp_cell_count(tb, r, "leaked_bytes", s->leaked_bytes);
    pp_cell_count(tb, r, "untracked_allocs", s->untracked_allocs);
    pp_cell_count(tb, r, "untracked_frees", s->untracked_frees);
    if (*bad) {
      pp_cell_text(tb, r, "inconsistent", bad);
      pp_row_note(tb, r, "%s (pp_mem_reserve reported less than was "
                         "allocated)",
                  bad);
    }
    if (s->unmatched_frees)
      pp_row_note(tb, r,
                  "%" PRIu64 " frees of pointers not allocated from this "
                  "pool were ignored",
                  s->unmatched_frees);
    /* past the analysis's bound on live pointers: said, never silent */
    if (s->untracked_allocs)
      pp_row_note(tb, r,
                  "%" PRIu64 " allocations untracked (live-pointer table "
                  "full), %" PRIu64 " frees taken as theirs: in-use figures "
                  "are upper bounds",
                  s->untracked_allocs, s->untracked_frees);
  }
  if (no_reserve)
    pp_table_remark(tb, "no reservation, unused: the pool never called "
                        "pp_mem_reserve");
  return pp_doc_ok(d) ? 0 : -1;
}

/* ---- device memory sampled with cuMemGetInfo --------------------------- */

#define MAX_MEM_DEVS 64

typedef struct mem_dev {
  uint32_t device;
  const pp_counter_stats *used, *total;
  const char *why; /* META cuda_mem.<dev>.unavailable: the first failure */
  int64_t failed;  /* META cuda_mem.<dev>.failed; 0 when absent */
} mem_dev;

/* "cuda<dev>.<what>": the device, else -1. */
static int64_t cuda_counter(const char *name, const char *what) {
  const char *rest;
  long d = pp__name_index(name, "cuda", &rest);
  if (d < 0 || rest[0] != '.' || strcmp(rest + 1, what) != 0)
    return -1;
  return d;
}

static mem_dev *dev_of(mem_dev *d, size_t *n, int64_t device) {
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

static int cmp_dev(const void *a, const void *b) {
  const mem_dev *x = a, *y = b;
  return x->device < y->device ? -1 : x->device > y->device;
}

/* The devices the trace has device memory samples or reasons for, by
 * device; returns how many. */
static size_t mem_devs(const pp_analysis *a, mem_dev *d) {
  const pp_trace *t = a->trace;
  size_t n = 0;
  for (size_t i = 0; i < a->prof.ncounters; i++) {
    const pp_counter_stats *c = &a->prof.counters[i];
    const char *name = pp_trace_loc_name(t, c->loc);
    int64_t u = cuda_counter(name, "mem_used_bytes");
    int64_t k = cuda_counter(name, "mem_total_bytes");
    mem_dev *m = c->samples && (u >= 0 || k >= 0)
                     ? dev_of(d, &n, u >= 0 ? u : k)
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
    mem_dev *m = why || failed ? dev_of(d, &n, dev) : NULL;
    if (m && why)
      m->why = t->meta[i].value;
    else if (m && t->meta[i].value)
      m->failed = strtoll(t->meta[i].value, NULL, 10);
  }
  qsort(d, n, sizeof *d, cmp_dev);
  return n;
}

#define USED "used mean / min / max / last"

static const pp_col dev_cols[] = {
    {"device", "CUDA device", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"used_bytes.mean", USED, PP_VALUE_BYTES, 0, NULL},
    {"used_bytes.min", USED, PP_VALUE_BYTES, 0, NULL},
    {"used_bytes.max", USED, PP_VALUE_BYTES, 0, NULL},
    {"used_bytes.last", USED, PP_VALUE_BYTES, 0, NULL},
    {"used_bytes.samples", "samples", PP_VALUE_COUNT, PP_COL_INT, NULL},
    {"total_bytes", "total", PP_VALUE_BYTES, 0, NULL},
    {"unavailable", "", PP_VALUE_TEXT, PP_COL_JSON_ONLY, NULL},
    {"failed_calls", "", PP_VALUE_COUNT, PP_COL_INT | PP_COL_JSON_ONLY, NULL},
};

static int device_memory(const pp_analysis *a, pp_doc *d) {
  mem_dev devs[MAX_MEM_DEVS];
  size_t n = mem_devs(a, devs);
  const char *none = pp_trace_meta(a->trace, "cuda_mem.unavailable");
  if (!n && !none)
    return 0;
  pp_table *t = pp_doc_table(
      d, "device_memory", "device memory",
      "cuMemGetInfo about once a second; used = total - free, by every "
      "process on the device",
      dev_cols, sizeof dev_cols / sizeof *dev_cols);
  if (!t)
    return -1;
  if (!n) {
    pp_table_unavailable(t, none);
    return pp_doc_ok(d) ? 0 : -1;
  }
  static const char *const used[] = {"used_bytes.mean", "used_bytes.min",
                                     "used_bytes.max", "used_bytes.last"};
  for (size_t i = 0; i < n; i++) {
    const mem_dev *m = &devs[i];
    long r = pp_table_row(t);
    pp_cell_count(t, r, "device", m->device);
    if (m->used) {
      const double v[] = {m->used->mean, m->used->min, m->used->max,
                          m->used->last};
      for (size_t k = 0; k < 4; k++)
        pp_cell_num(t, r, used[k], v[k]);
      pp_cell_count(t, r, "used_bytes.samples", m->used->samples);
    } else {
      for (size_t k = 0; k < 4; k++)
        pp_cell_unavailable(t, r, used[k],
                            m->why ? m->why : "no sample in the trace");
    }
    if (m->total)
      pp_cell_num(t, r, "total_bytes", m->total->last);
    if (m->why)
      pp_cell_text(t, r, "unavailable", m->why);
    pp_cell_count(t, r, "failed_calls",
                  m->failed > 0 ? (uint64_t)m->failed : 0);
    if (m->used && m->why && m->failed > 0)
      pp_row_note(t, r, "%" PRId64 " failed calls (the first: %s)",
                  m->failed, m->why);
    else if (m->used && m->why)
      pp_row_note(t, r, "some samples missing: %s", m->why);
  }
  return pp_doc_ok(d) ? 0 : -1;
}

int pp__memory_tables(const pp_analysis *a, pp_doc *d) {
  return pools(a, d) || device_memory(a, d) ? -1 : 0;
}
