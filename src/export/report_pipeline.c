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

/* A share the analysis computed (NAN: "-"), in 8 columns. */
static void pct_cell(FILE *out, double pct) {
  char b[32];
  fprintf(out, " %7s", pp_format_pct(b, sizeof b, pct));
}

/* ", 80.8% of the time" (", ... on average over 2 threads"): the share of
 * the queue's window its producers or consumers waited, as the
 * recommendations quote it. */
static void waiters_share(FILE *out, double pct, uint32_t threads) {
  char b[32];
  if (isnan(pct))
    return;
  fprintf(out, ", %s of the time", pp_format_pct(b, sizeof b, pct));
  if (threads > 1)
    fprintf(out, " on average over %" PRIu32 " threads", threads);
}

static void queue_table(FILE *out, const pp_analysis *a) {
  const pp_pipeline *p = &a->prof.pipe;
  if (p->queues_unavailable) {
    fputs("\nqueues\nunavailable: stats mode keeps no queue statistics "
          "(record in trace mode)\n", out);
    return;
  }
  if (!p->nqueues)
    return;
  int nw = 5;
  for (size_t i = 0; i < p->nqueues; i++)
    if (name_len(p->queues[i].name, COL_NAME_MAX) > nw)
      nw = name_len(p->queues[i].name, COL_NAME_MAX);
  fputs("\nqueues (depth = items in the queue; wait = push to pop of an "
        "item)\n", out);
  put_safe(out, "queue", nw, nw);
  fprintf(out, " %5s %8s %8s %6s %5s %8s %8s %9s %9s %9s %9s\n", "cap",
          "items", "items/s", "depth", "max", "full", "empty", "wait p50",
          "p90", "p99", "max");
  for (size_t i = 0; i < p->nqueues; i++) {
    const pp_queue_stats *q = &p->queues[i];
    char b1[32], b2[32], b3[32], b4[32];
    put_safe(out, q->name, nw, COL_NAME_MAX);
    if (q->capacity > 0)
      fprintf(out, " %5" PRId64, q->capacity);
    else
      fprintf(out, " %5s", "-");
    fprintf(out, " %8" PRIu64 " %8.1f %6.2f %5" PRId64, q->pops,
            q->out_per_s, q->depth_mean, q->depth_max);
    pct_cell(out, q->full_pct);
    pct_cell(out, q->empty_pct);
    if (q->wait.count)
      fprintf(out, " %9s %9s %9s %9s\n",
              dur(b1, sizeof b1, (double)pp_hist_percentile(&q->wait, 50)),
              dur(b2, sizeof b2, (double)pp_hist_percentile(&q->wait, 90)),
              dur(b3, sizeof b3, (double)pp_hist_percentile(&q->wait, 99)),
              dur(b4, sizeof b4, (double)q->wait.max));
    else
      fprintf(out, " %9s %9s %9s %9s\n", "-", "-", "-", "-");
    fputs("  ", out);
    put_safe(out, q->from[0] ? q->from : "?", 0, COL_NAME_MAX);
    fputs(" -> ", out);
    put_safe(out, q->to[0] ? q->to : "?", 0, COL_NAME_MAX);
    fprintf(out, ": %" PRIu64 " in, %" PRIu64 " out", q->pushes, q->pops);
    if (q->waits_full || q->waits_empty) {
      fprintf(out, "; producer blocked %s (%" PRIu64 " waits",
              dur(b1, sizeof b1, (double)q->blocked_full_ns), q->waits_full);
      waiters_share(out, q->producer_blocked_pct, q->waiters_full);
      fprintf(out, "), consumer waited %s (%" PRIu64 " waits",
              dur(b2, sizeof b2, (double)q->blocked_empty_ns),
              q->waits_empty);
      waiters_share(out, q->consumer_waiting_pct, q->waiters_empty);
      fputc(')', out);
    }
    /* Pushes still queued at the end have no pop: not a pairing failure. */
    uint64_t queued = q->depth_last > 0 ? (uint64_t)q->depth_last : 0;
    uint64_t unpaired = q->unmatched_pops;
    uint64_t known = q->matched + queued + q->items_untracked;
    if (q->pushes > known)
      unpaired += q->pushes - known;
    if (unpaired)
      fprintf(out, "; %" PRIu64 " items not paired by id", unpaired);
    /* Items in flight past the analysis's bound: said, never silent. */
    if (q->items_untracked)
      fprintf(out,
              "; %" PRIu64 " items untracked (item table full), no "
              "wait measured",
              q->items_untracked);
    fputc('\n', out);
  }
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
  queue_table(out, a);
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
