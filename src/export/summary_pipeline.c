/* SPDX-License-Identifier: MIT */
/*
 * The pipeline members of the summary JSON: "queues", "pipeline" (stages,
 * bound, efficiency, stalls, flow critical paths) and "recommendations",
 * from a->prof.pipe. Specified in docs/formats/summary-json.md; keep the
 * two in step.
 */
#include "analyze/pipeline.h"
#include "export/doc_json.h"
#include "export/export.h"
#include "export/jsonw.h"

typedef struct hist_ctx {
  const pp_pipeline *p;
  const pp_table *figures; /* queue_waits or flow_latencies */
} hist_ctx;

/* The histogram of queue r's waits (schema_minor 13). */
static void wait_hist(pp_jsonw *w, size_t r, void *ctx) {
  pp_summary_hist_json(w, "hist", &((const pp_pipeline *)ctx)->queues[r].wait);
}

/* A queue row's "wait": its items' push-to-pop figures (analyze/
 * doc_hists.c) and histogram. */
static void queue_wait(pp_jsonw *w, size_t r, void *ctx) {
  const hist_ctx *c = ctx;
  if (r >= c->p->nqueues)
    return;
  pp_jsonw_key(w, "wait");
  pp_doc_json_row(w, c->figures, r, -1, wait_hist, (void *)c->p);
}

/* "queues": the results document's table (analyze/document.c), each row
 * with its wait histogram. */
static void write_queues(pp_jsonw *w, const pp_analysis *a) {
  hist_ctx c = {&a->prof.pipe, pp_doc_find(a->doc, "queue_waits")};
  pp_jsonw_key(w, "queues"); /* [] without queues */
  pp_doc_json_rows(w, pp_doc_find(a->doc, "queues"), queue_wait, &c);
}

/* One segment of a path: a zone, or a wait (with the stages it joins). */
static void write_seg(pp_jsonw *w, const pp_path_seg *s) {
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_str(w, "kind", s->wait ? "wait" : "zone");
  pp_jsonw_kv_str(w, "name", s->name); /* null: no queue joins them */
  if (s->wait) {
    pp_jsonw_kv_str(w, "from", s->from);
    pp_jsonw_kv_str(w, "to", s->to);
  }
  pp_jsonw_kv_int(w, "ns", s->ns);
  pp_jsonw_obj_end(w);
}

static void write_path(pp_jsonw *w, const char *k, const pp_flow_path *fp) {
  pp_jsonw_key(w, k);
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_uint(w, "id", fp->id);
  pp_jsonw_kv_int(w, "start_ns", fp->start);
  pp_jsonw_kv_int(w, "total_ns", fp->total_ns);
  pp_jsonw_kv_int(w, "zone_ns", fp->zone_ns);
  pp_jsonw_kv_int(w, "wait_ns", fp->wait_ns);
  pp_jsonw_key(w, "segments");
  pp_jsonw_arr_begin(w);
  for (size_t i = 0; i < fp->nsegs; i++)
    write_seg(w, &fp->segs[i]);
  pp_jsonw_arr_end(w);
  pp_jsonw_obj_end(w);
}

/* A flows row's latency histogram, its median and slowest items' paths
 * and where all items' time went (the document's rows are the flows, in
 * their order). */
static void flow_extra(pp_jsonw *w, size_t r, void *ctx) {
  const hist_ctx *c = ctx;
  if (r >= c->p->nflows)
    return;
  const pp_flow_stats *f = &c->p->flows[r];
  pp_jsonw_key(w, "latency");
  pp_doc_json_row(w, c->figures, r, -1, NULL, NULL);
  if (f->items) {
    write_path(w, "median", &f->median);
    write_path(w, "slowest", &f->slowest);
  }
  pp_jsonw_key(w, "where");
  pp_jsonw_arr_begin(w);
  for (size_t k = 0; k < f->nwhere; k++)
    write_seg(w, &f->where[k]);
  pp_jsonw_arr_end(w);
}

static void write_pipeline(pp_jsonw *w, const pp_analysis *a) {
  const pp_pipeline *p = &a->prof.pipe;
  pp_jsonw_key(w, "pipeline");
  pp_jsonw_obj_begin(w);
  pp_jsonw_kv_int(w, "window_start_ns", p->win_start);
  pp_jsonw_kv_int(w, "window_end_ns", p->win_end);
  pp_jsonw_key(w, "stages");
  pp_doc_json_rows(w, pp_doc_find(a->doc, "stages"), NULL, NULL);
  pp_doc_json_facts(w, pp_doc_find(a->doc, "pipeline_facts"));
  pp_jsonw_key(w, "longest_stalls");
  pp_doc_json_rows(w, pp_doc_find(a->doc, "stalls"), NULL, NULL);
  hist_ctx c = {p, pp_doc_find(a->doc, "flow_latencies")};
  pp_jsonw_key(w, "flows"); /* [] without flows */
  pp_doc_json_rows(w, pp_doc_find(a->doc, "flows"), flow_extra, &c);
  pp_jsonw_obj_end(w);
}

int pp_summary_pipeline_json(pp_jsonw *w, const pp_analysis *a) {
  write_queues(w, a);
  write_pipeline(w, a);
  pp_jsonw_key(w, "recommendations");
  pp_doc_json_rows(w, pp_doc_find(a->doc, "recommendations"), NULL, NULL);
  return w->err ? -1 : 0;
}
