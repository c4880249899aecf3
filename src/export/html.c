/* SPDX-License-Identifier: MIT */
/*
 * The HTML report: one self-contained page that works offline. The page
 * shell (html_page.c, shared with the live dashboard) inlines the style and
 * script (src/export/html/, and the chart library uPlot) that render the
 * summary JSON, which is embedded in a <script type="application/json">
 * element: the summary of summary_json.c plus a bounded "timeline" of
 * top-level zone instances (docs/formats/summary-json.md#timeline) written
 * here.
 *
 * Escaping rule (applied by html_page.c): the JSON is UTF-8 text in which
 * every '<' (which can only occur inside strings) is written as the JSON
 * escape \u003c, and U+2028 and U+2029 as \u2028 and \u2029. The element's
 * text then never contains "</script" or "<!--", so no name from the trace
 * can end it or change how the HTML parser reads it, and JSON.parse() gives
 * back the exact strings. Everything else the page shows is inserted by the
 * script as text nodes. Details: docs/html-report.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/pipeline.h"
#include "export/export.h"
#include "export/html_page.h"
#include "export/jsonw.h"
#include "internal.h"

/* ---- timeline ----------------------------------------------------------- */

/* A min-heap of the longest durations seen so far (at most cap). */
typedef struct dur_heap {
  int64_t *v;
  size_t n, cap;
} dur_heap;

static void heap_push(dur_heap *h, int64_t d) {
  if (h->n == h->cap) {
    if (d <= h->v[0])
      return;
    /* Replace the minimum and sift it down. */
    size_t i = 0;
    h->v[0] = d;
    for (;;) {
      size_t l = 2 * i + 1, r = l + 1, m = i;
      if (l < h->n && h->v[l] < h->v[m])
        m = l;
      if (r < h->n && h->v[r] < h->v[m])
        m = r;
      if (m == i)
        break;
      int64_t tmp = h->v[i];
      h->v[i] = h->v[m];
      h->v[m] = tmp;
      i = m;
    }
    return;
  }
  size_t i = h->n++;
  h->v[i] = d;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (h->v[p] <= h->v[i])
      break;
    int64_t tmp = h->v[i];
    h->v[i] = h->v[p];
    h->v[p] = tmp;
    i = p;
  }
}

/* Top-level instances of sites that have zone statistics (all of them, in
 * an analysed trace; the check keeps the zone index valid regardless). */
static int drawable(const pp_zone_inst *z, const int32_t *zidx, size_t nlocs) {
  return z->depth == 0 && z->loc < nlocs && zidx[z->loc] >= 0;
}

/* The "timeline" member: per thread, the top-level zone instances as
 * [start - t0_ns, duration, index into "zones"], in start order. When
 * there are more than max, the max longest are kept (ties: earliest
 * thread, then earliest start) and each thread says how many of its
 * instances, and how much of their time, were left out. */
static int write_timeline(pp_jsonw *w, const pp_analysis *a, void *arg) {
  const pp_trace *t = a->trace;
  size_t max = *(const size_t *)arg;
  pp_jsonw_key(w, "timeline");
  pp_jsonw_obj_begin(w);
  if (t->from_stats) {
    pp_jsonw_kv_bool(w, "available", 0);
    pp_jsonw_kv_str(w, "reason", "stats mode records no zone instances");
    pp_jsonw_obj_end(w);
    return 0;
  }
  const pp_profile *p = &a->prof;
  int32_t *zidx = pp__malloc(t->nlocs * sizeof *zidx);
  dur_heap h = {pp__malloc(max * sizeof(int64_t)), 0, max};
  if (!zidx || !h.v) {
    pp__free(zidx);
    pp__free(h.v);
    return -1;
  }
  for (size_t i = 0; i < t->nlocs; i++)
    zidx[i] = -1;
  for (size_t i = 0; i < p->nzones; i++)
    if (p->zones[i].loc < t->nlocs)
      zidx[p->zones[i].loc] = (int32_t)i;

  uint64_t total = 0;
  for (size_t k = 0; k < t->nthreads; k++) {
    const pp_thread_figures *th = &a->threads[k];
    for (size_t i = 0; i < th->nzones; i++)
      if (drawable(&th->zones[i], zidx, t->nlocs)) {
        total++;
        heap_push(&h, pp__span(th->zones[i].start, th->zones[i].end));
      }
  }
  /* Keep instances longer than thr, and as many equal to it as fit. */
  int64_t thr = INT64_MIN;
  uint64_t ties = 0;
  if (total > max && max > 0) {
    thr = h.v[0];
    uint64_t above = 0;
    for (size_t i = 0; i < h.n; i++)
      above += h.v[i] > thr;
    ties = max - above;
  } else if (total > max) {
    thr = INT64_MAX; /* max 0 keeps nothing */
  }
  pp__free(h.v);

  uint64_t kept = total <= max ? total : max;
  pp_jsonw_kv_bool(w, "available", 1);
  pp_jsonw_kv_uint(w, "max_spans", max);
  pp_jsonw_kv_uint(w, "spans", total);
  pp_jsonw_kv_uint(w, "kept", kept);
  pp_jsonw_kv_uint(w, "omitted", total - kept);
  pp_jsonw_key(w, "threads");
  pp_jsonw_arr_begin_lines(w);
  for (size_t k = 0; k < t->nthreads; k++) {
    const pp_thread *th = &t->threads[k];
    const pp_thread_figures *thf = &a->threads[k];
    uint64_t omitted = 0;
    int64_t omitted_ns = 0;
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_uint(w, "tid", th->tid);
    pp_jsonw_kv_str(w, "name", th->name ? th->name : "");
    pp_jsonw_key(w, "spans");
    pp_jsonw_arr_begin(w);
    for (size_t i = 0; i < thf->nzones; i++) {
      const pp_zone_inst *z = &thf->zones[i];
      if (!drawable(z, zidx, t->nlocs))
        continue;
      int64_t d = pp__span(z->start, z->end);
      int keep = d > thr || (d == thr && ties > 0);
      if (!keep) {
        omitted++;
        omitted_ns = pp__add_sat(omitted_ns, d);
        continue;
      }
      if (d == thr)
        ties--;
      pp_jsonw_elem(w);
      pp_jsonw_putc(w, '[');
      pp_jsonw_put_int(w, pp__span(p->t0, z->start));
      pp_jsonw_putc(w, ',');
      pp_jsonw_put_int(w, d);
      pp_jsonw_putc(w, ',');
      pp_jsonw_put_int(w, zidx[z->loc]);
      pp_jsonw_putc(w, ']');
    }
    pp_jsonw_arr_end(w);
    pp_jsonw_kv_uint(w, "omitted", omitted);
    pp_jsonw_kv_int(w, "omitted_ns", omitted_ns);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
  pp_jsonw_obj_end(w);
  pp__free(zidx);
  return 0;
}

/* ---- page --------------------------------------------------------------- */

int pp_export_html_opts(FILE *out, const pp_analysis *a,
                        const pp_html_opts *opts) {
  const pp_trace *t = a->trace;
  if (!out || !t || !a->analyzed)
    return -1;
  size_t max =
      opts && opts->timeline_max ? opts->timeline_max : PP_HTML_TIMELINE_MAX;
  char *json = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&json, &len);
  if (!mem)
    return -1;
  int rc = pp_summary_json_write(mem, a, write_timeline, &max);
  if (fclose(mem) != 0)
    rc = -1;
  if (rc != 0) {
    free(json); /* open_memstream's buffer comes from malloc */
    return -1;
  }
  /* The page shell escapes the JSON and leaves out its closing newline. */
  rc = pp__html_page(out, "pipeprof report", json, NULL);
  free(json);
  return rc;
}

int pp_export_html(FILE *out, const pp_analysis *a) {
  return pp_export_html_opts(out, a, NULL);
}
