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

static int name_len(const char *s, int max) {
  int n = (int)strlen(s);
  return n < max ? n : max;
}

static char *dur(char *b, size_t n, double ns) {
  return pp_format_ns(b, n, ns);
}

static void put_path(FILE *out, const pp_flow_path *fp) {
  char b[32];
  for (size_t i = 0; i < fp->nsegs; i++) {
    const pp_path_seg *s = &fp->segs[i];
    if (i)
      fputs(" > ", out);
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

static void flow_paths(FILE *out, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  const pp_pipeline *p = &a->prof.pipe;
  for (size_t i = 0; i < p->nflows; i++) {
    const pp_flow_stats *f = &p->flows[i];
    char b[32];
    fputs("critical path of flow \"", out);
    put_safe(out, pp_trace_loc_name(t, f->loc), 0, COL_NAME_MAX);
    fprintf(out, "\": %" PRIu64 " items", f->items);
    if (f->incomplete)
      fprintf(out, " (+%" PRIu64 " incomplete)", f->incomplete);
    if (!f->items) {
      fputs("; none followed from begin to end\n", out);
      continue;
    }
    double total = (double)f->zone_ns + (double)f->wait_ns;
    fprintf(out, "; %.0f%% of latency in stage zones, %.0f%% between "
            "stages\n", total > 0 ? (double)f->zone_ns / total * 100 : 0,
            total > 0 ? (double)f->wait_ns / total * 100 : 0);
    fprintf(out, "  median item %" PRIu64 " (%s): ", f->median.id,
            dur(b, sizeof b, (double)f->median.total_ns));
    put_path(out, &f->median);
    fprintf(out, "  slowest item %" PRIu64 " (%s): ", f->slowest.id,
            dur(b, sizeof b, (double)f->slowest.total_ns));
    put_path(out, &f->slowest);
    fputs("  where the time goes (all items):", out);
    size_t shown = f->nwhere < 6 ? f->nwhere : 6;
    for (size_t k = 0; k < shown; k++) {
      const pp_path_seg *s = &f->where[k];
      fputs(k ? ", " : " ", out);
      if (s->wait) {
        fputc('[', out);
        put_safe(out, s->name ? s->name : "between stages", 0, COL_NAME_MAX);
        fputc(']', out);
      } else {
        put_safe(out, s->name, 0, COL_NAME_MAX);
      }
      fprintf(out, " %.0f%%", total > 0 ? (double)s->ns / total * 100 : 0);
    }
    fputc('\n', out);
  }
}

static void bottleneck_section(FILE *out, const pp_analysis *a) {
  const pp_pipeline *p = &a->prof.pipe;
  if (!p->nstages && !p->nflows)
    return;
  char b1[32], b2[32];
  fputs("\npipeline bottlenecks (stage busy = time in zones named like the "
        "stage)\n", out);
  if (p->nstages) {
    int nw = 5;
    for (size_t i = 0; i < p->nstages; i++)
      if (name_len(p->stages[i].name, COL_NAME_MAX) > nw)
        nw = name_len(p->stages[i].name, COL_NAME_MAX);
    put_safe(out, "stage", nw, nw);
    fprintf(out, " %7s %8s %9s %7s %9s %11s\n", "workers", "items", "busy",
            "util", "per item", "capacity/s");
    for (size_t i = 0; i < p->nstages; i++) {
      const pp_stage_stats *s = &p->stages[i];
      put_safe(out, s->name, nw, COL_NAME_MAX);
      if (!s->items) {
        fprintf(out, " %7s %8s %9s %7s %9s %11s  (no zone named like it)\n",
                "-", "0", "-", "-", "-", "-");
        continue;
      }
      fprintf(out, " %7u %8" PRIu64 " %9s %6.1f%% %9s %11.1f%s\n",
              s->workers, s->items, dur(b1, sizeof b1, (double)s->busy_ns),
              s->util * 100, dur(b2, sizeof b2, s->service_ns),
              s->capacity_per_s, (int32_t)i == p->bound ? "  <- bound" : "");
    }
    if (p->bound >= 0) {
      const pp_stage_stats *s = &p->stages[p->bound];
      fputs("bound: ", out);
      put_safe(out, s->name, 0, COL_NAME_MAX);
      fprintf(out, " (lowest capacity, %.1f items/s; busy %.1f%%%s)\n",
              s->capacity_per_s, s->util * 100,
              s->util >= 0.9 ? ", saturated" : ", not saturated");
      if (p->efficiency >= 0)
        fprintf(out, "throughput: %.1f items/s achieved; pipeline "
                "efficiency %.1f%% (achieved / capacity of the bound)\n",
                p->achieved_per_s, p->efficiency * 100);
      else
        fputs("pipeline efficiency: unavailable: no items left the last "
              "stage\n", out);
    } else {
      fputs("bound: unavailable: no stage has zones named like it\n", out);
    }
    if (p->nstalls) {
      fprintf(out, "longest stalls (%" PRIu64 " periods in all):\n",
              p->stall_periods);
      size_t n = p->nstalls < 5 ? p->nstalls : 5;
      for (size_t i = 0; i < n; i++) {
        const pp_stall *s = &p->stalls[i];
        const pp_queue_stats *q = &p->queues[s->queue];
        fprintf(out, "  %s for %s at +%s: ", s->full ? "full " : "empty",
                dur(b1, sizeof b1, (double)s->end - (double)s->start),
                dur(b2, sizeof b2, (double)s->start - (double)a->prof.t0));
        put_safe(out, q->name, 0, COL_NAME_MAX);
        fputs(s->full ? " (producer " : " (consumer ", out);
        put_safe(out, s->full ? q->from : q->to, 0, COL_NAME_MAX);
        fputs(s->recorded ? " waiting)\n" : " held up)\n", out);
      }
    }
  } else {
    fputs("stages: none (declare queues with pp_queue_declare to name the "
          "stages)\n", out);
  }
  flow_paths(out, a);
}

static void advice_section(FILE *out, const pp_analysis *a) {
  const pp_pipeline *p = &a->prof.pipe;
  static const char *const sev[] = {"low", "medium", "high"};
  fputs("\nrecommendations\n", out);
  if (!p->nadvice) {
    fputs("none: no rule found evidence of a problem (rules in "
          "docs/analysis.md)\n", out);
    return;
  }
  for (size_t i = 0; i < p->nadvice; i++) {
    const pp_advice *adv = &p->advice[i];
    fprintf(out, "%2zu. [%s] ", i + 1,
            sev[adv->severity >= 0 && adv->severity <= 2 ? adv->severity : 0]);
    put_safe(out, adv->text, 0, 1024);
    fputs("\n    evidence: ", out);
    put_safe(out, adv->evidence, 0, 1024);
    fprintf(out, " (rule %s)\n", adv->rule);
  }
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
  advice_section(out, a);
  return ferror(out) ? -1 : 0;
}
