/* SPDX-License-Identifier: MIT */
/*
 * The pipeline part of the text report: "queues" (depth, per-item wait,
 * time full and empty, producer and consumer waits), "pipeline
 * bottlenecks" (stages, the bounding stage, efficiency, longest stalls,
 * the critical path of flows) and "recommendations" (each with its
 * evidence), from a->prof.pipe (src/analyze/pipeline.h). Definitions are
 * in docs/analysis.md.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze/analyze.h"
#include "analyze/pipeline.h"
#include "export/doc_text.h"
#include "export/export.h"

#define COL_NAME_MAX 28

/* A program's name: control bytes as '?', cut at max bytes, padded to
 * width when width > 0. */
static void put_safe(FILE *out, const char *s, int width, int max) {
  int n = 0;
  for (; s[n] && n < max; n++) {
    unsigned char c = (unsigned char)s[n];
    fputc(c < 0x20 || c == 0x7f ? '?' : c, out);
  }
  for (; n < width; n++)
    fputc(' ', out);
}

static char *dur(char *b, size_t n, double ns) {
  return pp_format_ns(b, n, ns);
}

/* The segments of a path, joined by sep. */
static void put_path(FILE *out, const pp_flow_path *fp, const char *sep) {
  char b[32];
  for (size_t i = 0; i < fp->nsegs; i++) {
    const pp_path_seg *s = &fp->segs[i];
    if (i)
      fputs(sep, out);
    if (s->wait) {
      fputc('[', out);
      put_safe(out, s->name ? s->name : "between stages", 0, COL_NAME_MAX);
      fprintf(out, " %s]", dur(b, sizeof b, (double)s->ns));
    } else {
      put_safe(out, s->name, 0, COL_NAME_MAX);
      fprintf(out, " %s", dur(b, sizeof b, (double)s->ns));
    }
  }
  fputc('\n', out);
}

/* The flows' table (analyze/doc_flows.c), then each flow's median and
 * slowest item and where all items' time went, segment by segment. */
static void flow_paths(FILE *out, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  const pp_pipeline *p = &a->prof.pipe;
  pp_doc_text_table(out, pp_doc_find(a->doc, "flows"), 0);
  for (size_t i = 0; i < p->nflows; i++) {
    const pp_flow_stats *f = &p->flows[i];
    if (!f->items)
      continue;
    char b[32];
    fputs("critical path of flow \"", out);
    put_safe(out, pp_trace_loc_name(t, f->loc), 0, COL_NAME_MAX);
    fprintf(out, "\"\n  median item %" PRIu64 " (%s): ", f->median.id,
            dur(b, sizeof b, (double)f->median.total_ns));
    put_path(out, &f->median, " > ");
    fprintf(out, "  slowest item %" PRIu64 " (%s): ", f->slowest.id,
            dur(b, sizeof b, (double)f->slowest.total_ns));
    put_path(out, &f->slowest, " > ");
    fputs("  where the time goes (all items, largest first): ", out);
    pp_flow_path all = {.segs = f->where,
                        .nsegs = f->nwhere < 6 ? f->nwhere : 6};
    put_path(out, &all, ", ");
  }
}

static void bottleneck_section(FILE *out, const pp_analysis *a) {
  const pp_pipeline *p = &a->prof.pipe;
  if (!p->nstages && !p->nflows)
    return;
  pp_doc_text_table(out, pp_doc_find(a->doc, "stages"), 0);
  if (p->nstages) {
    pp_doc_text_table(out, pp_doc_find(a->doc, "pipeline_facts"), 0);
    /* the 5 longest (the summary JSON has them all) */
    pp_doc_text_table_n(out, pp_doc_find(a->doc, "stalls"), 0, 5);
  }
  flow_paths(out, a);
}

int pp_report_pipeline(FILE *out, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  if (!out || !t || !a->analyzed)
    return -1;
  pp_doc_text_table(out, pp_doc_find(a->doc, "queues"), 0);
  bottleneck_section(out, a);
  return ferror(out) ? -1 : 0;
}

int pp_report_advice(FILE *out, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  if (!out || !t || !a->analyzed)
    return -1;
  pp_doc_text_table(out, pp_doc_find(a->doc, "recommendations"), 0);
  return ferror(out) ? -1 : 0;
}
