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
  t->threads = tb_grow(t->threads, &t->cap_threads, t->nthreads + 1,
                       sizeof *t->threads);
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
