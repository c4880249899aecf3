/* SPDX-License-Identifier: MIT */
/*
 * Two STATS payloads as one (stats_payload.h, ppt_stats_merge): the
 * stats-mode files of a run's processes, merged into one trace
 * (model/merge.c). Each payload is walked once; records of one site
 * (after the second payload's sites are renumbered) are added up, and the
 * result is encoded in the order the format asks for.
 */
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "stats_payload.h"

typedef struct zrow {
  uint64_t loc, count, total, self;
  pp_hist h;
} zrow;

typedef struct frow {
  uint64_t loc, frames;
  int64_t first_ns, last_ns;
  double jitter_ns;
  pp_hist h;
} frow;

typedef struct gpu_row {
  ppt_stats_gpu r;
  pp_hist h;
} gpu_row;

/* The rows of one kind by site: idx[loc] is the row + 1 (0: none yet),
 * so that a record finds its site's row at once (a search per record made
 * two payloads of n sites cost n^2). Reader-checked payloads name sites
 * the trace has: the index is bounded by the input. */
typedef struct by_site {
  uint32_t *idx;
  size_t cap;
} by_site;

/* The row of loc among n rows: an existing one, or row n (*fresh set: the
 * caller appends it). -1 when out of memory. */
static int row_of(by_site *b, uint64_t loc, size_t n, size_t *row, int *fresh) {
  if (loc >= UINT32_MAX)
    return -1;
  if (loc >= b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap <= loc)
      cap *= 2;
    uint32_t *v = pp__realloc(b->idx, cap * sizeof *v);
    if (!v)
      return -1;
    memset(v + b->cap, 0, (cap - b->cap) * sizeof *v);
    b->idx = v;
    b->cap = cap;
  }
  *fresh = !b->idx[loc];
  if (*fresh)
    b->idx[loc] = (uint32_t)n + 1;
  *row = b->idx[loc] - 1;
  return 0;
}

typedef struct merged {
  by_site zi, fi, ci; /* zones, frames, counters */
  zrow *z;
  size_t nz, capz;
  ppt_stats_thread *th;
  size_t nth, capth;
  frow *f;
  size_t nf, capf;
  ppt_stats_counter *c;
  size_t nc, capc;
  gpu_row *g;
  size_t ng, capg;
  ppt_stats_totals tot;
  int have_t;
  uint64_t gpu_lost;
  ppt_stats_pairing pr;
  const uint32_t *map; /* the payload being walked: its sites renumbered
                          (NULL: as they are) */
  size_t nmap;
} merged;

static uint64_t remap(const merged *m, uint64_t loc) {
  return m->map && loc < m->nmap ? m->map[loc] : loc;
}

static uint64_t add_sat(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The histogram the walker decoded, into dst (empty: moved; else
 * merged). */
static int take(pp_hist *dst, pp_hist *src, int fresh) {
  if (fresh) {
    *dst = *src;
    pp_hist_init(src);
    return 0;
  }
  return pp_hist_merge(dst, src);
}

static int on_zone(void *arg, ppt_stats_zone *r) {
  merged *m = arg;
  uint64_t loc = remap(m, r->loc);
  size_t i;
  int fresh;
  if (row_of(&m->zi, loc, m->nz, &i, &fresh) != 0)
    return -1;
  if (fresh) {
    if (pp__grow((void **)&m->z, &m->capz, m->nz + 1, sizeof *m->z) != 0)
      return -1;
    memset(&m->z[i], 0, sizeof m->z[i]);
    m->z[i].loc = loc;
    pp_hist_init(&m->z[i].h);
    m->nz++;
  }
  zrow *z = &m->z[i];
  z->count = add_sat(z->count, r->count);
  z->total = add_sat(z->total, r->total);
  z->self = add_sat(z->self, r->self);
  return take(&z->h, r->hist.out, fresh);
}

static int on_thread(void *arg, const ppt_stats_thread *r) {
  merged *m = arg;
  if (pp__grow((void **)&m->th, &m->capth, m->nth + 1, sizeof *m->th) != 0)
    return -1;
  m->th[m->nth++] = *r;
  return 0;
}

static int on_frame(void *arg, ppt_stats_frame *r) {
  merged *m = arg;
  uint64_t loc = remap(m, r->loc);
  size_t i;
  int fresh;
  if (row_of(&m->fi, loc, m->nf, &i, &fresh) != 0)
    return -1;
  if (fresh) {
    if (pp__grow((void **)&m->f, &m->capf, m->nf + 1, sizeof *m->f) != 0)
      return -1;
    frow x = {loc, r->frames, r->first_ns, r->last_ns, r->jitter_ns, {0}};
    m->f[m->nf++] = x;
    pp_hist_init(&m->f[i].h);
    return take(&m->f[i].h, r->hist.out, 1);
  }
  frow *f = &m->f[i]; /* frames of one series in two processes */
  uint64_t n = f->frames + r->frames;
  f->jitter_ns = n ? (f->jitter_ns * (double)f->frames +
                      r->jitter_ns * (double)r->frames) /
                         (double)n
                   : 0;
  f->frames = n;
  f->first_ns = r->first_ns < f->first_ns ? r->first_ns : f->first_ns;
  f->last_ns = r->last_ns > f->last_ns ? r->last_ns : f->last_ns;
  return take(&f->h, r->hist.out, 0);
}

static int on_counter(void *arg, const ppt_stats_counter *r) {
  merged *m = arg;
  uint64_t loc = remap(m, r->loc);
  size_t i;
  int fresh;
  if (row_of(&m->ci, loc, m->nc, &i, &fresh) != 0)
    return -1;
  if (fresh) {
    if (pp__grow((void **)&m->c, &m->capc, m->nc + 1, sizeof *m->c) != 0)
      return -1;
    m->c[m->nc] = *r;
    m->c[m->nc++].loc = loc;
    return 0;
  }
  ppt_stats_counter *c = &m->c[i];
  uint64_t n = c->samples + r->samples;
  c->mean = n ? (c->mean * (double)c->samples + r->mean * (double)r->samples) /
                    (double)n
              : 0;
  c->samples = n;
  c->min = r->min < c->min ? r->min : c->min;
  c->max = r->max > c->max ? r->max : c->max;
  c->last = r->last; /* the later process's */
  c->is_float |= r->is_float;
  return 0;
}

static int on_totals(void *arg, const ppt_stats_totals *r) {
  merged *m = arg;
  if (r->events) {
    if (!m->have_t || r->t0 < m->tot.t0)
      m->tot.t0 = r->t0;
    if (!m->have_t || r->t1 > m->tot.t1)
      m->tot.t1 = r->t1;
    m->have_t = 1;
  }
  m->tot.events = add_sat(m->tot.events, r->events);
  m->tot.unmatched_ends = add_sat(m->tot.unmatched_ends, r->unmatched_ends);
  m->tot.unclosed = add_sat(m->tot.unclosed, r->unclosed);
  return 0;
}

static int on_gpu(void *arg, ppt_stats_gpu *r) {
  merged *m = arg;
  uint64_t loc = remap(m, r->loc);
  size_t i = 0;
  while (i < m->ng && (m->g[i].r.loc != loc || m->g[i].r.device != r->device ||
                       m->g[i].r.stream != r->stream))
    i++;
  int fresh = i == m->ng;
  if (fresh) {
    if (pp__grow((void **)&m->g, &m->capg, m->ng + 1, sizeof *m->g) != 0)
      return -1;
    m->g[i].r = *r;
    m->g[i].r.loc = loc;
    pp_hist_init(&m->g[i].h);
    m->ng++;
    return take(&m->g[i].h, r->hist.out, 1);
  }
  ppt_stats_gpu *g = &m->g[i].r;
  if (r->start_ns < g->start_ns) {
    g->start_ns = r->start_ns;
    g->tid = r->tid;
  }
  g->launch_ns = r->launch_ns < g->launch_ns ? r->launch_ns : g->launch_ns;
  g->end_ns = r->end_ns > g->end_ns ? r->end_ns : g->end_ns;
  g->count = add_sat(g->count, r->count);
  g->total = add_sat(g->total, r->total);
  return take(&m->g[i].h, r->hist.out, 0);
}

static int on_gpu_lost(void *arg, uint64_t lost) {
  merged *m = arg;
  m->gpu_lost = add_sat(m->gpu_lost, lost);
  return 0;
}

static int on_pairing(void *arg, const ppt_stats_pairing *r) {
  ppt_stats_pairing *p = &((merged *)arg)->pr;
  p->too_deep = add_sat(p->too_deep, r->too_deep);
  p->backwards = add_sat(p->backwards, r->backwards);
  p->ranges_unclosed = add_sat(p->ranges_unclosed, r->ranges_unclosed);
  p->ranges_unbegun = add_sat(p->ranges_unbegun, r->ranges_unbegun);
  p->ranges_lost = add_sat(p->ranges_lost, r->ranges_lost);
  return 0;
}

static int cmp_gpu(const void *x, const void *y) {
  const ppt_stats_gpu *a = &((const gpu_row *)x)->r,
                      *b = &((const gpu_row *)y)->r;
  if (a->loc != b->loc)
    return a->loc < b->loc ? -1 : 1;
  if (a->device != b->device)
    return a->device < b->device ? -1 : 1;
  return a->stream < b->stream ? -1 : a->stream > b->stream;
}

static void encode(merged *m, ppt_buf *out) {
  pp_hist none;
  pp_hist_init(&none);
  ppt_count_put_n(out, m->nz);
  for (size_t i = 0; i < m->nz; i++) {
    const zrow *z = &m->z[i];
    ppt_stats_zone r = {z->loc,  z->count,      z->total,
                        z->self, {&z->h, NULL}, {&none, NULL}};
    ppt_stats_zone_put(out, &r);
  }
  ppt_count_put_n(out, m->nth);
  for (size_t i = 0; i < m->nth; i++)
    ppt_stats_thread_put(out, &m->th[i]);
  ppt_count_put_n(out, m->nf);
  for (size_t i = 0; i < m->nf; i++) {
    const frow *f = &m->f[i];
    ppt_stats_frame r = {f->loc,     f->frames,    f->first_ns,
                         f->last_ns, f->jitter_ns, {&f->h, NULL}};
    ppt_stats_frame_put(out, &r);
  }
  ppt_count_put_n(out, m->nc);
  for (size_t i = 0; i < m->nc; i++)
    ppt_stats_counter_put(out, &m->c[i]);
  ppt_stats_totals_put(out, &m->tot);
  if (m->ng > 1)
    qsort(m->g, m->ng, sizeof *m->g, cmp_gpu);
  ppt_count_put_n(out, m->ng);
  for (size_t i = 0; i < m->ng; i++) {
    ppt_stats_gpu r = m->g[i].r;
    r.hist = (ppt_hist){&m->g[i].h, NULL};
    ppt_stats_gpu_put_framed(out, &r);
  }
  ppt_count_put_n(out, m->gpu_lost);
  ppt_stats_pairing_put(out, &m->pr);
}

static void merged_free(merged *m) {
  for (size_t i = 0; i < m->nz; i++)
    pp_hist_free(&m->z[i].h);
  for (size_t i = 0; i < m->nf; i++)
    pp_hist_free(&m->f[i].h);
  for (size_t i = 0; i < m->ng; i++)
    pp_hist_free(&m->g[i].h);
  pp__free(m->zi.idx);
  pp__free(m->fi.idx);
  pp__free(m->ci.idx);
  pp__free(m->z);
  pp__free(m->th);
  pp__free(m->f);
  pp__free(m->c);
  pp__free(m->g);
}

int ppt_stats_merge(const unsigned char *a, size_t na, const unsigned char *b,
                    size_t nb, const uint32_t *map, size_t nmap, ppt_buf *out) {
  static const ppt_stats_visitor collect = {on_zone,     on_thread, on_frame,
                                            on_counter,  on_totals, on_gpu,
                                            on_gpu_lost, on_pairing};
  merged m;
  memset(&m, 0, sizeof m);
  int rc = ppt_stats_walk(a, na, &collect, &m, NULL) == 0 ? 0 : -1;
  m.map = map;
  m.nmap = nmap;
  if (rc == 0 && ppt_stats_walk(b, nb, &collect, &m, NULL) != 0)
    rc = -1;
  if (rc == 0 && m.ng > PPT_STATS_GPU_MAX) /* kept to the format's bound */
    for (; m.ng > PPT_STATS_GPU_MAX; m.ng--) {
      m.gpu_lost = add_sat(m.gpu_lost, m.g[m.ng - 1].r.count);
      pp_hist_free(&m.g[m.ng - 1].h);
    }
  if (rc == 0) {
    encode(&m, out);
    rc = out->oom ? -1 : 0;
  }
  merged_free(&m);
  return rc;
}
