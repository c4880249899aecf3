/* SPDX-License-Identifier: MIT */
/*
 * Other tools' profiles merged into a pipeprof trace of the same process
 * by wall clock (`report` and `export` --with PROFILE [--offset NS];
 * docs/import.md, "With a pipeprof trace"). Each profile is imported
 * whole (import/profile.h), its times moved onto the trace's monotonic
 * clock, its threads named after the tool, and merged in as a run
 * directory's files are (model/merge.c): its sites and threads after the
 * trace's, its events through the figures' stream when the load streams.
 *
 * Where the profile's time 0 is on the trace's clock, in this order:
 * - the profile carries a wall clock (Kineto's baseTimeNanoseconds, or
 *   absolute microseconds): realtime ns, mapped through the trace's clock
 *   sync (the synchronisation point nearest in wall time, else META
 *   start_mono_ns / start_realtime_ns);
 * - an anchor in the trace: a counter "pipeprof.profile_start.realtime_ns
 *   TAG" (or ".monotonic_ns TAG") whose value is the profile's time 0,
 *   recorded by the Python binding (pipeprof.profile_start,
 *   pipeprof.torch.export_chrome_trace); TAG is the profile file's name,
 *   or the trace's only anchor is taken;
 * - with --offset and neither: the trace's start (META start_mono_ns, else
 *   its first stored event).
 * --offset NS is then added in every case.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/stream.h"
#include "cli.h"
#include "format/pptrace.h"
#include "import/profile.h"
#include "internal.h"
#include "pipeprof.h"

#define ANCHOR_REAL "pipeprof.profile_start.realtime_ns "
#define ANCHOR_MONO "pipeprof.profile_start.monotonic_ns "

void pp_cli_anchors_free(pp_cli_anchors *an) {
  for (size_t i = 0; i < an->n; i++)
    pp__free(an->v[i].tag);
  pp__free(an->v);
  memset(an, 0, sizeof *an);
}

int pp_cli_anchor_tap(void *arg, const pp_trace *t, uint32_t thread,
                      const pp_event *e) {
  pp_cli_anchors *an = arg;
  (void)thread;
  if (e->type != PPT_EV_COUNTER_SET || e->loc >= t->nlocs)
    return 0;
  const char *name = pp_trace_loc_name(t, e->loc);
  int real = strncmp(name, ANCHOR_REAL, sizeof ANCHOR_REAL - 1) == 0;
  if (!real && strncmp(name, ANCHOR_MONO, sizeof ANCHOR_MONO - 1) != 0)
    return 0;
  const char *tag = name + (real ? sizeof ANCHOR_REAL : sizeof ANCHOR_MONO) - 1;
  for (size_t i = 0; i < an->n; i++)
    if (an->v[i].real == real && strcmp(an->v[i].tag, tag) == 0) {
      an->v[i].value = e->v.i; /* the latest of one name */
      an->v[i].at_ns = e->ts;
      return 0;
    }
  if (an->n >= PP_CLI_ANCHORS_MAX) {
    an->more++;
    return 0;
  }
  if (pp__grow((void **)&an->v, &an->cap, an->n + 1, sizeof *an->v) != 0)
    return -1;
  pp_cli_anchor *a = &an->v[an->n];
  if (!(a->tag = pp__strdup(tag)))
    return -1;
  a->real = real;
  a->value = e->v.i;
  a->at_ns = e->ts;
  an->n++;
  return 0;
}

int pp_cli_anchors_scan(pp_cli_anchors *an, const pp_trace *t) {
  for (size_t i = 0; i < t->nthreads; i++)
    for (size_t j = 0; j < t->threads[i].nev; j++)
      if (pp_cli_anchor_tap(an, t, (uint32_t)i, &t->threads[i].ev[j]) != 0)
        return -1;
  return 0;
}

/* ---- the trace's clocks ------------------------------------------------- */

static int meta_i64(const pp_trace *t, const char *key, int64_t *out) {
  const char *v = pp_trace_meta(t, key);
  char *end;
  if (!v || !*v)
    return -1;
  long long x = strtoll(v, &end, 10);
  if (*end)
    return -1;
  *out = x;
  return 0;
}

/* A (monotonic, realtime) pair of t's clock: the synchronisation point
 * nearest to realtime near, else the session's start. 0, or -1 when t
 * has neither. */
static int clock_pair(const pp_trace *t, int64_t near, int64_t *mono,
                      int64_t *real) {
  if (t->nclock) {
    size_t best = 0;
    for (size_t i = 1; i < t->nclock; i++)
      if (llabs(t->clock[i].real_ns - near) <
          llabs(t->clock[best].real_ns - near))
        best = i;
    *mono = t->clock[best].mono_ns;
    *real = t->clock[best].real_ns;
    return 0;
  }
  if (meta_i64(t, "start_mono_ns", mono) == 0 &&
      meta_i64(t, "start_realtime_ns", real) == 0)
    return 0;
  return -1;
}

/* The trace's start on its clock: the session's, else its first stored
 * event's. 0, or -1 when it has neither. */
static int trace_start(const pp_trace *t, int64_t *out) {
  if (meta_i64(t, "start_mono_ns", out) == 0)
    return 0;
  int have = 0;
  for (size_t i = 0; i < t->nthreads; i++)
    if (t->threads[i].nev && (!have || t->threads[i].ev[0].ts < *out)) {
      *out = t->threads[i].ev[0].ts;
      have = 1;
    }
  return have ? 0 : -1;
}

/* The earliest time of the profile (its events are in time order on each
 * thread), or 0 when it has none. */
static int64_t profile_first(const pp_trace *p) {
  int64_t first = INT64_MAX;
  for (size_t i = 0; i < p->nthreads; i++)
    if (p->threads[i].nev && p->threads[i].ev[0].ts < first)
      first = p->threads[i].ev[0].ts;
  for (size_t i = 0; i < p->ngpu; i++)
    if (p->gpu[i].start < first)
      first = p->gpu[i].start;
  return first == INT64_MAX ? 0 : first;
}

/* ---- one profile -------------------------------------------------------- */

/* How far to move profile p (read from path) onto t's clock: *shift, and
 * how it was found in how (size bytes). 0, or -1 with a line said. */
static int align(const pp_trace *t, const pp_trace *p, const char *path,
                 const pp_cli_with *w, const pp_cli_anchors *an, int64_t *shift,
                 char *how, size_t size) {
  const char *clock = pp_trace_meta(p, "import.clock");
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  int64_t mono, real;
  if (clock && strncmp(clock, "realtime", 8) == 0) {
    if (clock_pair(t, profile_first(p), &mono, &real) != 0) {
      fprintf(stderr,
              "pipeprof: %s: the trace has no wall clock to align the "
              "profile by (no clock sync, no start_realtime_ns)\n",
              path);
      return -1;
    }
    *shift = mono - real;
    snprintf(how, size, "wall clock (the profile's and the trace's)");
  } else {
    const pp_cli_anchor *a = NULL;
    for (size_t i = 0; i < an->n && !a; i++)
      if (strcmp(an->v[i].tag, base) == 0)
        a = &an->v[i];
    if (!a && an->n == 1)
      a = &an->v[0];
    if (!a && an->n > 1 && !w->offset_set) {
      fprintf(stderr,
              "pipeprof: %s: %zu anchors in the trace and none named "
              "\"%s\" (the first: \"%s\"): give --offset NS\n",
              path, an->n, base, an->v[0].tag);
      return -1;
    }
    if (a && a->real) {
      if (clock_pair(t, a->value, &mono, &real) != 0) {
        fprintf(stderr,
                "pipeprof: %s: the trace has no wall clock to map its "
                "anchor by (no clock sync, no start_realtime_ns)\n",
                path);
        return -1;
      }
      *shift = a->value + (mono - real);
    } else if (a) {
      *shift = a->value;
    }
    if (a) {
      snprintf(how, size, "anchor \"%s%s\"",
               a->real ? ANCHOR_REAL : ANCHOR_MONO, a->tag);
    } else if (w->offset_set && trace_start(t, shift) == 0) {
      snprintf(how, size, "the trace's start (no clock to align by)");
    } else {
      fprintf(stderr,
              "pipeprof: %s: no clock to align the profile by (it counts "
              "from its own start, and the trace holds no anchor): "
              "record one with pipeprof.torch.export_chrome_trace or "
              "pipeprof.profile_start, or give --offset NS\n",
              path);
      return -1;
    }
  }
  if (w->offset_set) {
    *shift = pp__add_sat(*shift, w->offset_ns);
    size_t n = strlen(how);
    snprintf(how + n, size - n, ", --offset %" PRId64 " ns", w->offset_ns);
  }
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* p's threads named after the tool (tool: name), their ids kept apart
 * from t's; its zone sites that share a name with one of t's named
 * "name [tool]"; its META replaced by with.K.* keys in t. 0, or -1 when
 * out of memory. */
static int relabel(pp_trace *t, pp_trace *p, const char *tool) {
  char buf[600];
  for (size_t i = 0; i < p->nthreads; i++) {
    pp_thread *th = &p->threads[i];
    if (th->name && th->name[0])
      snprintf(buf, sizeof buf, "%s: %.500s", tool, th->name);
    else
      snprintf(buf, sizeof buf, "%s: thread %" PRIu64, tool, th->tid);
    char *s = pp__strdup(buf);
    if (!s)
      return -1;
    pp__free(th->name);
    th->name = s;
    /* one id per thread (the Chrome export's tracks): past any Linux
     * thread id and the GPU tracks' ids, within 32 bits */
    if (pp_trace_thread_index(t, th->tid) < t->nthreads ||
        pp_trace_thread_index(p, th->tid) < i)
      th->tid = UINT64_C(2000000000) + t->nthreads + i;
  }
  size_t nz = 0;
  char **names = pp__malloc((t->nlocs ? t->nlocs : 1) * sizeof *names);
  if (!names)
    return -1;
  for (size_t i = 0; i < t->nlocs; i++)
    if (t->locs[i].kind == PP_KIND_ZONE)
      names[nz++] = t->locs[i].name ? t->locs[i].name : (char *)"";
  qsort(names, nz, sizeof *names, cmp_str);
  int rc = 0;
  for (size_t i = 0; i < p->nlocs && rc == 0; i++) {
    pp_loc *l = &p->locs[i];
    const char *key = l->name ? l->name : "";
    if (l->kind != PP_KIND_ZONE ||
        !bsearch(&key, names, nz, sizeof *names, cmp_str))
      continue;
    snprintf(buf, sizeof buf, "%.500s [%s]", key, tool);
    char *s = pp__strdup(buf);
    if (!s)
      rc = -1;
    else {
      pp__free(l->name);
      l->name = s;
    }
  }
  pp__free(names);
  return rc;
}

/* Move p's times by shift (ns). */
static void move(pp_trace *p, int64_t shift) {
  for (size_t i = 0; i < p->nthreads; i++)
    for (size_t j = 0; j < p->threads[i].nev; j++)
      p->threads[i].ev[j].ts = pp__add_sat(p->threads[i].ev[j].ts, shift);
  for (size_t i = 0; i < p->ngpu; i++) {
    p->gpu[i].start = pp__add_sat(p->gpu[i].start, shift);
    p->gpu[i].end = pp__add_sat(p->gpu[i].end, shift);
    p->gpu[i].launch = pp__add_sat(p->gpu[i].launch, shift);
  }
}

/* What the merged trace says of profile k (META with.K.*, and the ONNX
 * Runtime provider figures the analysis reads), then p's META dropped so
 * that the merge adds none of it. 0, or -1 when out of memory. */
static int describe(pp_trace *t, pp_trace *p, size_t k, const char *path,
                    const char *how, int64_t shift) {
  char key[64], num[32];
  const char *source = pp_trace_meta(p, "import.source");
  snprintf(num, sizeof num, "%" PRId64, shift);
  int rc = 0;
#define WITH(field, value)                                                     \
  (snprintf(key, sizeof key, "with.%zu." field, k),                            \
   rc = rc ? rc : pp__meta_add(t, key, value))
  WITH("file", path);
  WITH("source", source ? source : "");
  WITH("aligned_by", how);
  WITH("shift_ns", num);
#undef WITH
  for (size_t i = 0; i < p->nmeta && rc == 0; i++)
    if (strncmp(p->meta[i].key, "import.ort.", 11) == 0 &&
        !pp_trace_meta(t, p->meta[i].key))
      rc = pp__meta_add(t, p->meta[i].key, p->meta[i].value);
  for (size_t i = 0; i < p->nmeta; i++) {
    pp__free(p->meta[i].key);
    pp__free(p->meta[i].value);
  }
  p->nmeta = 0;
  return rc;
}

/* The profile's events into the figures, numbered as after the merge. */
static int stream_part(pp_stream *s, const pp_trace *t, const pp_trace *p) {
  if (pp__stream_part_begin(s, t, 0) != 0)
    return -1;
  int rc = 0;
  for (size_t i = 0; i < p->nthreads && rc == 0; i++)
    for (size_t j = 0; j < p->threads[i].nev && rc == 0; j++)
      rc = pp__stream_part_event(s, p, (uint32_t)i, &p->threads[i].ev[j]);
  return pp__stream_part_end(s, rc != 0) != 0 || rc != 0 ? -1 : 0;
}

int pp_cli_merge_with(pp_trace *t, pp_analysis *a, const pp_cli_with *w,
                      const pp_cli_anchors *an, uint64_t keep) {
  if (w->n && t->from_stats) {
    fprintf(stderr, "pipeprof: --with needs a trace-mode trace: a "
                    "stats-mode file holds no events to merge with\n");
    return -1;
  }
  for (size_t k = 0; k < w->n; k++) {
    const char *path = w->files[k];
    char err[512], how[256];
    unsigned char head[256];
    size_t nh = 0;
    FILE *f = fopen(path, "rb");
    if (f) {
      nh = fread(head, 1, sizeof head, f);
      fclose(f);
    }
    if (!f || !pp_import_looks_json(head, nh)) {
      fprintf(stderr,
              "pipeprof: %s: %s: --with takes a torch.profiler or ONNX "
              "Runtime profile (JSON)\n",
              path, f ? "not JSON" : strerror(errno));
      return -1;
    }
    pp_trace p;
    int rc = pp_import_file(path, &p, err, sizeof err);
    if (rc != 0) {
      fprintf(stderr, "pipeprof: %s: %s\n", path, err);
      return -1;
    }
    int64_t shift = 0;
    if (align(t, &p, path, w, an, &shift, how, sizeof how) != 0) {
      pp_trace_free(&p);
      return -1;
    }
    move(&p, shift);
    const char *source = pp_trace_meta(&p, "import.source");
    const char *tool = source && strncmp(source, "ONNX", 4) == 0
                           ? "onnxruntime"
                           : "torch.profiler";
    if (relabel(t, &p, tool) != 0 ||
        describe(t, &p, k + 1, path, how, shift) != 0 ||
        (a->stream && stream_part(a->stream, t, &p) != 0) ||
        pp_trace_merge(t, &p) != 0) {
      pp_trace_free(&p);
      fprintf(stderr, "pipeprof: out of memory merging %s\n", path);
      return -1;
    }
    pp_trace_free(&p);
    if (keep != UINT64_MAX)
      pp__trace_window(t, INT64_MAX, keep);
  }
  return 0;
}
