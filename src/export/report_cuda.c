/* SPDX-License-Identifier: MIT */
/*
 * The "CUDA activity" section of the text report, from the CUPTI analysis
 * (src/analyze/gpu_activity.h): GPU busy vs idle, dropped records, launch
 * latency, the kernel table, GPU work and host<->device transfers per
 * stage, synchronization and API call totals. When tracing was asked for
 * but could not run, one line says why.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analyze/gpu_activity.h"
#include "export/export.h"
#include "export/jsonw.h"

#define KERNELS_SHOWN 20
#define APIS_SHOWN 10
#define NAME_W 32

static void dur_cell(FILE *out, int w, double ns) {
  char b[32];
  fprintf(out, " %*s", w, pp_format_ns(b, sizeof b, ns));
}

/* Names may be long C++ signatures: cut to the column, marking the cut. */
static void name_cell(FILE *out, const char *s, int w) {
  size_t n = strlen(s);
  if ((int)n <= w) {
    fprintf(out, "  %-*s", w, s);
    return;
  }
  fprintf(out, "  %.*s~", w - 1, s);
}

static const char *stage_name(const pp_trace *t, uint32_t loc) {
  return loc == PP_GPU_NO_ZONE ? "(no zone)" : pp_trace_loc_name(t, loc);
}

static double pct(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : 0;
}

static void kernels(FILE *out, const pp_trace *t, const pp_gpu_activity *g) {
  if (!g->nkernels)
    return;
  fprintf(out, "\n  %-*s %7s %9s %9s %9s %9s %6s\n", NAME_W, "kernel",
          "calls", "total", "mean", "p50", "p99", "%GPU");
  size_t n = g->nkernels < KERNELS_SHOWN ? g->nkernels : KERNELS_SHOWN;
  for (size_t i = 0; i < n; i++) {
    const pp_gpu_kernel_stats *k = &g->kernels[i];
    name_cell(out, pp_cuda_name(&t->cuda, k->name), NAME_W);
    fprintf(out, " %7" PRIu64, k->calls);
    dur_cell(out, 9, (double)k->total_ns);
    dur_cell(out, 9, k->mean_ns);
    dur_cell(out, 9, (double)pp_hist_percentile(&k->hist, 50));
    dur_cell(out, 9, (double)pp_hist_percentile(&k->hist, 99));
    fprintf(out, " %5.1f%%\n", k->share_pct);
  }
  if (g->nkernels > n)
    fprintf(out, "  (%zu more kernels)\n", g->nkernels - n);
}

static void stages(FILE *out, const pp_trace *t, const pp_gpu_activity *g) {
  if (!g->nstages)
    return;
  fprintf(out, "\n  %-*s %9s %7s %8s %9s %9s %9s\n", NAME_W - 8, "stage",
          "wall", "GPU%", "kernels", "kern time", "copy time", "copy%");
  for (size_t i = 0; i < g->nstages; i++) {
    const pp_gpu_stage *s = &g->stages[i];
    int64_t copy = 0;
    for (int d = 0; d < PP_XFER_N; d++)
      copy += s->xfer[d].time_ns;
    name_cell(out, stage_name(t, s->loc), NAME_W - 8);
    if (s->loc == PP_GPU_NO_ZONE)
      fprintf(out, " %9s %7s", "-", "-");
    else {
      dur_cell(out, 9, (double)s->wall_ns);
      fprintf(out, " %6.1f%%", pct((double)s->busy_ns, (double)s->wall_ns));
    }
    fprintf(out, " %8" PRIu64, s->kernels);
    dur_cell(out, 9, (double)s->kernel_ns);
    dur_cell(out, 9, (double)copy);
    if (s->loc == PP_GPU_NO_ZONE || s->wall_ns <= 0)
      fprintf(out, " %9s\n", "-");
    else
      fprintf(out, " %8.1f%%\n", pct((double)copy, (double)s->wall_ns));
  }
  /* Transfers: one line per stage and direction that moved anything. */
  int header = 0;
  for (size_t i = 0; i < g->nstages; i++)
    for (int d = 0; d < PP_XFER_N; d++) {
      const pp_gpu_xfer *x = &g->stages[i].xfer[d];
      if (!x->count)
        continue;
      if (!header) {
        fprintf(out, "\n  %-*s %-5s %6s %10s %9s %10s %10s %10s\n",
                NAME_W - 8, "transfers", "dir", "copies", "bytes", "time",
                "GB/s", "pageable", "pinned");
        header = 1;
      }
      char b1[32], b2[32], b3[32];
      name_cell(out, stage_name(t, g->stages[i].loc), NAME_W - 8);
      fprintf(out, " %-5s %6" PRIu64 " %10s", pp_gpu_xfer_label(d), x->count,
              pp__fmt_bytes(b1, sizeof b1, (double)x->bytes));
      dur_cell(out, 9, (double)x->time_ns);
      if (x->time_ns > 0)
        fprintf(out, " %10.2f", (double)x->bytes / (double)x->time_ns);
      else
        fprintf(out, " %10s", "-");
      fprintf(out, " %10s %10s\n",
              pp__fmt_bytes(b2, sizeof b2, (double)x->pageable_bytes),
              pp__fmt_bytes(b3, sizeof b3, (double)x->pinned_bytes));
    }
}

static void latency(FILE *out, const char *label, const pp_hist *h,
                    const char *none) {
  if (!h->count) {
    fprintf(out, "  %-26s unavailable: %s\n", label, none);
    return;
  }
  char a[32], b[32], c[32];
  fprintf(out, "  %-26s p50 %s  p90 %s  p99 %s  (%" PRIu64 " kernels)\n",
          label, pp_format_ns(a, sizeof a, (double)pp_hist_percentile(h, 50)),
          pp_format_ns(b, sizeof b, (double)pp_hist_percentile(h, 90)),
          pp_format_ns(c, sizeof c, (double)pp_hist_percentile(h, 99)),
          h->count);
}

int pp_report_cuda(FILE *out, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  if (!out || !t || !a->analyzed)
    return -1;
  const pp_gpu_activity *g = a->cuda;
  const char *why = pp_trace_meta(t, "unavailable.cuda");
  if (!g) {
    if (why)
      fprintf(out, "\nCUDA tracing: unavailable: %s\n", why);
    return ferror(out) ? -1 : 0;
  }
  const pp_cuda_trace *c = &t->cuda;
  const char *clock = pp_trace_meta(t, "cuda.clock");
  fprintf(out, "\nCUDA activity (CUPTI%s%s)\n", clock ? ", clock: " : "",
          clock ? clock : "");
  fprintf(out,
          "  records: %zu kernels, %zu copies, %zu memsets, %zu syncs, "
          "%zu API calls; dropped: %" PRIu64 "%s\n",
          c->nkernels, c->nmemcpys, c->nmemsets, c->nsyncs, c->napis,
          g->dropped,
          g->dropped ? " (CUPTI buffers full: figures below miss them)" : "");
  const char *miss = pp_trace_meta(t, "unavailable.cuda.kinds");
  if (miss)
    fprintf(out, "  not traced: %s\n", miss);
  char x1[32], b[32], idle[32];
  fprintf(out, "  GPU busy: %s of %s (%.1f%%), idle %s\n",
          pp_format_ns(x1, sizeof x1, (double)g->busy_ns),
          pp_format_ns(b, sizeof b, (double)g->wall_ns),
          pct((double)g->busy_ns, (double)g->wall_ns),
          pp_format_ns(idle, sizeof idle, (double)(g->wall_ns - g->busy_ns)));
  for (size_t i = 0; i < g->ndevices; i++) {
    const pp_gpu_device *d = &g->devices[i];
    fprintf(out,
            "    device %" PRIu32 ": busy %.1f%%, %" PRIu64 " kernels, %" PRIu64
            " copies, %" PRIu64 " memsets\n",
            d->device, pct((double)d->busy_ns, (double)g->wall_ns),
            d->kernels, d->copies, d->memsets);
  }
  for (int d = 0; d < PP_XFER_N; d++) {
    const pp_gpu_xfer *x = &g->xfer[d];
    if (!x->count)
      continue;
    char by[32];
    fprintf(out, "  %-5s %" PRIu64 " copies, %s in %s", pp_gpu_xfer_label(d),
            x->count, pp__fmt_bytes(by, sizeof by, (double)x->bytes),
            pp_format_ns(x1, sizeof x1, (double)x->time_ns));
    if (x->time_ns > 0)
      fprintf(out, " (%.2f GB/s)", (double)x->bytes / (double)x->time_ns);
    fputc('\n', out);
  }
  latency(out, "launch (call -> start):", &g->launch,
          "no kernel joined to its API call");
  latency(out, "queued -> start:", &g->queued,
          "queued times not collected");
  fprintf(out,
          "  attribution: %" PRIu64 " GPU operations joined to a call, %" PRIu64
          " without one, %" PRIu64 " outside any zone\n",
          g->correlated, g->uncorrelated, g->unattributed);
  kernels(out, t, g);
  stages(out, t, g);
  if (g->nsyncs) {
    fprintf(out, "\n  %-*s %7s %9s\n", NAME_W, "synchronization", "count",
            "total");
    for (size_t i = 0; i < g->nsyncs; i++) {
      name_cell(out, pp_gpu_sync_type(g->syncs[i].type), NAME_W);
      fprintf(out, " %7" PRIu64, g->syncs[i].count);
      dur_cell(out, 9, (double)g->syncs[i].total_ns);
      fputc('\n', out);
    }
  }
  if (g->napis) {
    fprintf(out, "\n  %-*s %7s %9s %9s\n", NAME_W, "API call", "calls",
            "total", "mean");
    size_t n = g->napis < APIS_SHOWN ? g->napis : APIS_SHOWN;
    for (size_t i = 0; i < n; i++) {
      const pp_gpu_api_stats *s = &g->apis[i];
      name_cell(out, pp_cuda_name(c, s->name), NAME_W);
      fprintf(out, " %7" PRIu64, s->calls);
      dur_cell(out, 9, (double)s->total_ns);
      dur_cell(out, 9, (double)s->total_ns / (double)s->calls);
      fputc('\n', out);
    }
  }
  return ferror(out) ? -1 : 0;
}

/* ---- summary JSON member "cuda" ------------------------------------------ */

static void xfer_json(pp_jsonw *w, const pp_gpu_xfer *x) {
  pp_jsonw_obj_begin(w);
  for (int d = 0; d < PP_XFER_N; d++) {
    if (!x[d].count)
      continue;
    static const char *const key[PP_XFER_N] = {"h2d", "d2h", "d2d", "other"};
    pp_jsonw_key(w, key[d]);
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_uint(w, "count", x[d].count);
    pp_jsonw_kv_uint(w, "bytes", x[d].bytes);
    pp_jsonw_kv_int(w, "time_ns", x[d].time_ns);
    pp_jsonw_key(w, "bandwidth_bytes_per_s");
    if (x[d].time_ns > 0)
      pp_jsonw_double(w, (double)x[d].bytes * 1e9 / (double)x[d].time_ns);
    else
      pp_jsonw_null(w);
    pp_jsonw_kv_uint(w, "pageable_bytes", x[d].pageable_bytes);
    pp_jsonw_kv_uint(w, "pinned_bytes", x[d].pinned_bytes);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_obj_end(w);
}

static void pct_json(pp_jsonw *w, const char *k, double part, double whole) {
  pp_jsonw_key(w, k);
  if (whole > 0)
    pp_jsonw_double(w, 100.0 * part / whole);
  else
    pp_jsonw_null(w);
}

static void hist_json(pp_jsonw *w, const char *k, const pp_hist *h) {
  pp_jsonw_key(w, k);
  if (!h->count) {
    pp_jsonw_null(w);
    return;
  }
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_uint(w, "count", h->count);
  pp_jsonw_kv_uint(w, "p50_ns", pp_hist_percentile(h, 50));
  pp_jsonw_kv_uint(w, "p90_ns", pp_hist_percentile(h, 90));
  pp_jsonw_kv_uint(w, "p99_ns", pp_hist_percentile(h, 99));
  pp_jsonw_kv_uint(w, "max_ns", h->max);
  pp_jsonw_obj_end(w);
}

int pp_summary_cuda_json(pp_jsonw *w, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  const pp_gpu_activity *g = a->cuda;
  const char *why = pp_trace_meta(t, "unavailable.cuda");
  pp_jsonw_key(w, "cuda");
  if (!g) {
    if (why) {
      pp_jsonw_obj_begin(w);
      pp_jsonw_kv_str(w, "unavailable", why);
      pp_jsonw_obj_end(w);
    } else {
      pp_jsonw_null(w);
    }
    return w->err ? -1 : 0;
  }
  const pp_cuda_trace *c = &t->cuda;
  pp_jsonw_obj_begin(w);
  const char *clock = pp_trace_meta(t, "cuda.clock");
  pp_jsonw_key(w, "clock");
  if (clock)
    pp_jsonw_str(w, clock);
  else
    pp_jsonw_null(w);
  const char *miss = pp_trace_meta(t, "unavailable.cuda.kinds");
  if (miss)
    pp_jsonw_kv_str(w, "not_traced", miss);
  pp_jsonw_key(w, "records");
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_uint(w, "kernels", c->nkernels);
  pp_jsonw_kv_uint(w, "memcpys", c->nmemcpys);
  pp_jsonw_kv_uint(w, "memsets", c->nmemsets);
  pp_jsonw_kv_uint(w, "syncs", c->nsyncs);
  pp_jsonw_kv_uint(w, "api_calls", c->napis);
  pp_jsonw_kv_uint(w, "dropped", g->dropped);
  pp_jsonw_obj_end(w);
  pp_jsonw_kv_int(w, "wall_ns", g->wall_ns);
  pp_jsonw_kv_int(w, "busy_ns", g->busy_ns);
  pp_jsonw_kv_int(w, "idle_ns", g->wall_ns - g->busy_ns);
  pct_json(w, "busy_pct", (double)g->busy_ns, (double)g->wall_ns);
  pp_jsonw_key(w, "devices");
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < g->ndevices; i++) {
    const pp_gpu_device *d = &g->devices[i];
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_uint(w, "device", d->device);
    pp_jsonw_kv_int(w, "busy_ns", d->busy_ns);
    pct_json(w, "busy_pct", (double)d->busy_ns, (double)g->wall_ns);
    pp_jsonw_kv_uint(w, "kernels", d->kernels);
    pp_jsonw_kv_int(w, "kernel_ns", d->kernel_ns);
    pp_jsonw_kv_uint(w, "copies", d->copies);
    pp_jsonw_kv_int(w, "copy_ns", d->copy_ns);
    pp_jsonw_kv_uint(w, "memsets", d->memsets);
    pp_jsonw_kv_int(w, "memset_ns", d->memset_ns);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
  pp_jsonw_key(w, "transfers");
  xfer_json(w, g->xfer);
  hist_json(w, "launch_latency", &g->launch);
  hist_json(w, "queued_latency", &g->queued);
  pp_jsonw_kv_uint(w, "correlated", g->correlated);
  pp_jsonw_kv_uint(w, "uncorrelated", g->uncorrelated);
  pp_jsonw_kv_uint(w, "unattributed", g->unattributed);
  pp_jsonw_key(w, "kernels");
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < g->nkernels; i++) {
    const pp_gpu_kernel_stats *k = &g->kernels[i];
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "name", pp_cuda_name(c, k->name));
    pp_jsonw_kv_uint(w, "calls", k->calls);
    pp_jsonw_kv_int(w, "total_ns", k->total_ns);
    pp_jsonw_kv_double(w, "mean_ns", k->mean_ns);
    pp_jsonw_kv_uint(w, "p50_ns", pp_hist_percentile(&k->hist, 50));
    pp_jsonw_kv_uint(w, "p99_ns", pp_hist_percentile(&k->hist, 99));
    pp_jsonw_kv_double(w, "gpu_time_pct", k->share_pct);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
  pp_jsonw_key(w, "stages");
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < g->nstages; i++) {
    const pp_gpu_stage *s = &g->stages[i];
    pp_jsonw_obj_begin(w);
    pp_jsonw_key(w, "name");
    if (s->loc == PP_GPU_NO_ZONE)
      pp_jsonw_null(w);
    else
      pp_jsonw_str(w, pp_trace_loc_name(t, s->loc));
    pp_jsonw_kv_int(w, "wall_ns", s->wall_ns);
    pp_jsonw_kv_int(w, "gpu_busy_ns", s->busy_ns);
    pct_json(w, "gpu_busy_pct", (double)s->busy_ns, (double)s->wall_ns);
    pp_jsonw_kv_uint(w, "kernels", s->kernels);
    pp_jsonw_kv_int(w, "kernel_ns", s->kernel_ns);
    pp_jsonw_kv_uint(w, "memsets", s->memsets);
    pp_jsonw_kv_int(w, "memset_ns", s->memset_ns);
    pp_jsonw_key(w, "transfers");
    xfer_json(w, s->xfer);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
  pp_jsonw_key(w, "syncs");
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < g->nsyncs; i++) {
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "type", pp_gpu_sync_type(g->syncs[i].type));
    pp_jsonw_kv_uint(w, "count", g->syncs[i].count);
    pp_jsonw_kv_int(w, "total_ns", g->syncs[i].total_ns);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
  pp_jsonw_key(w, "api");
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < g->napis; i++) {
    pp_jsonw_obj_begin(w);
    pp_jsonw_kv_str(w, "name", pp_cuda_name(c, g->apis[i].name));
    pp_jsonw_kv_str(w, "domain",
                    g->apis[i].domain == 1 ? "driver" : "runtime");
    pp_jsonw_kv_uint(w, "calls", g->apis[i].calls);
    pp_jsonw_kv_int(w, "total_ns", g->apis[i].total_ns);
    pp_jsonw_obj_end(w);
  }
  pp_jsonw_arr_end(w);
  pp_jsonw_obj_end(w);
  return w->err ? -1 : 0;
}
