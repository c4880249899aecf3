/* SPDX-License-Identifier: MIT */
/*
 * Test helpers that build pp_trace objects by hand (see trace_builder.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/recorder.h"
#include "export/export.h"
#include "format/pptrace.h"
#include "pipeprof.h"
#include "runner.h"
#include "trace_builder.h"

char *tb_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  CHECK(d != NULL);
  memcpy(d, s, n);
  return d;
}

void *tb_grow(void *p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return p;
  size_t nc = *cap ? *cap * 2 : 8;
  while (nc < need)
    nc *= 2;
  void *q = realloc(p, nc * elem);
  CHECK(q != NULL);
  memset((char *)q + *cap * elem, 0, (nc - *cap) * elem);
  *cap = nc;
  return q;
}

uint32_t tb_loc(pp_trace *t, const char *name, uint32_t kind) {
  t->locs = tb_grow(t->locs, &t->cap_locs, t->nlocs + 1, sizeof *t->locs);
  pp_loc *l = &t->locs[t->nlocs];
  l->id = (uint32_t)t->nlocs;
  l->kind = kind;
  l->name = tb_strdup(name);
  l->function = tb_strdup("fn");
  l->file = tb_strdup("file.c");
  l->line = 1;
  return (uint32_t)t->nlocs++;
}

size_t tb_thread(pp_trace *t, uint64_t tid, const char *name) {
  t->threads =
      tb_grow(t->threads, &t->cap_threads, t->nthreads + 1, sizeof *t->threads);
  pp_thread *th = &t->threads[t->nthreads];
  th->tid = tid;
  th->name = tb_strdup(name);
  return t->nthreads++;
}

pp_event *tb_ev(pp_trace *t, size_t thi, int64_t ts, uint32_t loc,
                uint8_t type) {
  pp_thread *th = &t->threads[thi];
  th->ev = tb_grow(th->ev, &th->cap_ev, th->nev + 1, sizeof *th->ev);
  pp_event *e = &th->ev[th->nev++];
  e->ts = ts;
  e->loc = loc;
  e->type = type;
  return e;
}

void tb_meta(pp_trace *t, const char *key, const char *value) {
  t->meta = tb_grow(t->meta, &t->cap_meta, t->nmeta + 1, sizeof *t->meta);
  t->meta[t->nmeta].key = tb_strdup(key);
  t->meta[t->nmeta].value = tb_strdup(value);
  t->nmeta++;
}

char *tb_report_text(const pp_analysis *a) {
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  CHECK(f != NULL);
  CHECK_EQ(pp_report_text(f, a, NULL), 0);
  CHECK_EQ(fclose(f), 0);
  return out;
}

char *tb_summary_json(const pp_analysis *a) {
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  CHECK(f != NULL);
  CHECK_EQ(pp_export_summary_json(f, a), 0);
  CHECK_EQ(fclose(f), 0);
  return out;
}

void tb_record_threads(const char *path, int n, void *(*fn)(void *),
                       int64_t base) {
  CHECK(n >= 1 && n <= TB_MAX_WORKERS);
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.mode = PP_MODE_TRACE;
  cfg.out_path = path;
  cfg.buffer_kib = 1024;
  if (pp_init(&cfg) != PP_OK)
    PP_FAIL("pp_init: %s", pp_last_error());
  tb_worker w[TB_MAX_WORKERS];
  pthread_t th[TB_MAX_WORKERS];
  for (int k = 0; k < n; k++) {
    w[k] = (tb_worker){k, base};
    CHECK_EQ(pthread_create(&th[k], NULL, fn, &w[k]), 0);
  }
  for (int k = 0; k < n; k++)
    CHECK_EQ(pthread_join(th[k], NULL), 0);
  CHECK_EQ(pp_shutdown(), PP_OK);
}

void tb_rec(unsigned type, const pp_srcloc *loc, int64_t ts, uint64_t value,
            uint64_t extra) {
  CHECK_EQ(pp__test_record(type, loc, (uint64_t)ts, value, extra), 1);
}

/* ---- trace files written byte by byte (tw_write) ------------------------ */

static void tw_chunk(FILE *f, uint16_t type, ppt_buf *p, uint32_t *seq) {
  unsigned char h[PPT_CHUNK_HEADER_SIZE];
  CHECK(!p->oom);
  ppt_chunk_header(h, type, p->data, (uint32_t)p->len, (*seq)++);
  CHECK_EQ(fwrite(h, 1, sizeof h, f), sizeof h);
  if (p->len)
    CHECK_EQ(fwrite(p->data, 1, p->len, f), p->len);
  p->len = 0;
}

void tw_write(const char *path, const tw_spec *sp) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  unsigned char fh[PPT_FILE_HEADER_SIZE];
  ppt_file_header(fh, 4242);
  CHECK_EQ(fwrite(fh, 1, sizeof fh, f), sizeof fh);
  uint32_t seq = 0;
  ppt_buf p = {0};
  size_t nmeta = 0;
  while (nmeta < 8 && sp->meta[nmeta][0])
    nmeta++;
  ppt_buf_uv(&p, 4 + nmeta);
  static const char *const fixed[4][2] = {{"process_name", "synthetic"},
                                          {"mode", "trace"},
                                          {"tick_source", "monotonic"},
                                          {"ticks_per_ns", "1.000000000"}};
  for (int i = 0; i < 4; i++) {
    ppt_buf_str(&p, fixed[i][0]);
    ppt_buf_str(&p, fixed[i][1]);
  }
  for (size_t i = 0; i < nmeta; i++) {
    ppt_buf_str(&p, sp->meta[i][0]);
    ppt_buf_str(&p, sp->meta[i][1]);
  }
  tw_chunk(f, PPT_CHUNK_META, &p, &seq);
  int nz = 0, nc = 0;
  while (nz < 4 && sp->zones[nz].name)
    nz++;
  while (nc < 4 && sp->counters[nc].name)
    nc++;
  for (int i = 0; i < nz; i++) {
    ppt_buf_uv(&p, (uint64_t)i);
    ppt_buf_uv(&p, PP_KIND_ZONE);
    ppt_buf_str(&p, sp->zones[i].name);
    ppt_buf_str(&p, "fn");
    ppt_buf_str(&p, "synthetic.c");
    ppt_buf_uv(&p, (uint64_t)i + 1);
  }
  for (int i = 0; i < nc; i++) { /* the library's metrics, as sampled */
    ppt_buf_uv(&p, (uint64_t)(nz + i));
    ppt_buf_uv(&p, PP_KIND_METRIC);
    ppt_buf_str(&p, sp->counters[i].name);
    ppt_buf_str(&p, "");
    ppt_buf_str(&p, "");
    ppt_buf_uv(&p, 0);
  }
  const tw_queue *q = &sp->queue;
  uint32_t qloc = (uint32_t)(nz + nc);
  if (q->name) {
    CHECK(q->capacity > 0);
    ppt_buf_uv(&p, qloc);
    ppt_buf_uv(&p, PP_KIND_QUEUE);
    ppt_buf_str(&p, q->name);
    ppt_buf_str(&p, q->from);
    ppt_buf_str(&p, q->to);
    ppt_buf_uv(&p, (uint64_t)q->capacity);
  }
  tw_chunk(f, PPT_CHUNK_SRCLOC, &p, &seq);
  uint64_t events = 0;
  if (nz) {
    ppt_buf_uv(&p, 1);    /* tid */
    ppt_buf_uv(&p, 1000); /* base tick */
    int most = 0;
    for (int i = 0; i < nz; i++)
      if (sp->zones[i].n > most)
        most = sp->zones[i].n;
    unsigned seed = sp->seed * 2654435761u + 1;
    for (int k = 0; k < most; k++)
      for (int i = 0; i < nz; i++) {
        const tw_zone *z = &sp->zones[i];
        if (k >= z->n)
          continue;
        seed = seed * 1103515245u + 12345u;
        double u = (double)((seed >> 8) % 2001) / 1000.0 - 1.0;
        int64_t dur = (int64_t)(z->median_ns * (1 + z->spread * u) + 0.5);
        unsigned char b = PPT_EV_ZONE_BEGIN, e = PPT_EV_ZONE_END;
        ppt_buf_bytes(&p, &b, 1);
        ppt_buf_sv(&p, k || i ? 1000 : 0); /* a gap between instances */
        ppt_buf_uv(&p, (uint64_t)i);
        ppt_buf_bytes(&p, &e, 1);
        ppt_buf_sv(&p, dur);
        ppt_buf_uv(&p, (uint64_t)i);
        events += 2;
      }
    tw_chunk(f, PPT_CHUNK_EVENTS, &p, &seq);
  }
  for (int i = 0; i < nc; i++) {
    ppt_buf_uv(&p, 2);
    ppt_buf_uv(&p, 1000);
    for (int k = 0; k < sp->counters[i].n; k++) {
      unsigned char t = PPT_EV_COUNTER_SETF;
      ppt_buf_bytes(&p, &t, 1);
      ppt_buf_sv(&p, k ? 1000000 : 0);
      ppt_buf_uv(&p, (uint64_t)(nz + i));
      ppt_buf_f64(&p, sp->counters[i].v[k]);
      events++;
    }
    tw_chunk(f, PPT_CHUNK_EVENTS, &p, &seq);
  }
  if (q->name) {
    ppt_buf_uv(&p, 3);
    ppt_buf_uv(&p, 1000);
    uint64_t pushed = 0, popped = 0;
    for (int k = 0; k < q->cycles; k++)
      for (int i = 0; i < 2 * q->capacity; i++) {
        int push = i < q->capacity;
        int depth = push ? i + 1 : 2 * q->capacity - i - 1;
        unsigned char t = push ? PPT_EV_QUEUE_PUSH : PPT_EV_QUEUE_POP;
        ppt_buf_bytes(&p, &t, 1);
        ppt_buf_sv(&p, k || i ? 1000000 : 0);
        ppt_buf_uv(&p, qloc);
        ppt_buf_uv(&p, push ? pushed++ : popped++);
        ppt_buf_uv(&p, ppt_zigzag(depth));
        events++;
      }
    tw_chunk(f, PPT_CHUNK_EVENTS, &p, &seq);
  }
  ppt_buf_uv(&p, events);
  ppt_buf_uv(&p, 0);
  tw_chunk(f, PPT_CHUNK_END, &p, &seq);
  ppt_buf_free(&p);
  CHECK_EQ(fclose(f), 0);
}
