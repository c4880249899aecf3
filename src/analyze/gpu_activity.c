/* SPDX-License-Identifier: MIT */
/*
 * CUDA activity analysis (see gpu_activity.h): correlation of GPU work to
 * API calls, attribution to zones and stages, the kernel table, busy/idle
 * as unions of intervals, transfers per stage and launch latency. Also the
 * model helpers for pp_trace.cuda (names, freeing).
 */
#include <stdlib.h>
#include <string.h>

#include "model/trace.h"
#include "pipeline.h"
#include "gpu_activity.h"
#include "internal.h"

/* ---- model helpers ------------------------------------------------------ */

int pp_gpu_xfer_dir(unsigned k) {
  switch (k) {
  case 1: /* HTOD */
  case 3: /* HTOA */
    return PP_XFER_H2D;
  case 2: /* DTOH */
  case 4: /* ATOH */
    return PP_XFER_D2H;
  case 5: /* ATOA */
  case 6: /* ATOD */
  case 7: /* DTOA */
  case 8: /* DTOD */
  case 10: /* PTOP */
    return PP_XFER_D2D;
  default:
    return PP_XFER_OTHER; /* HTOH, unknown */
  }
}

const char *pp_gpu_xfer_label(int dir) {
  static const char *const l[PP_XFER_N] = {"HtoD", "DtoH", "DtoD", "other"};
  return dir >= 0 && dir < PP_XFER_N ? l[dir] : "other";
}

const char *pp_gpu_memory_kind(unsigned k) {
  static const char *const l[] = {"unknown", "pageable", "pinned",
                                  "device",  "array",    "managed",
                                  "device static", "managed static"};
  return k < PP__ARRAY_LEN(l) ? l[k] : "unknown";
}

const char *pp_gpu_sync_type(unsigned t) {
  static const char *const l[] = {"unknown", "event synchronize",
                                  "stream wait event", "stream synchronize",
                                  "context synchronize"};
  return t < PP__ARRAY_LEN(l) ? l[t] : "unknown";
}

/* ---- intervals ----------------------------------------------------------- */

typedef struct iv {
  int64_t s, e;
} iv;

static int cmp_iv(const void *a, const void *b) {
  const iv *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s;
}

/* Sort and merge v in place; returns the merged count, *len the covered
 * length. */
static size_t merge_iv(iv *v, size_t n, int64_t *len) {
  *len = 0;
  if (!n)
    return 0;
  pp__sort(v, n, sizeof *v, cmp_iv);
  size_t k = 0;
  for (size_t i = 1; i < n; i++) {
    if (v[i].s <= v[k].e) {
      if (v[i].e > v[k].e)
        v[k].e = v[i].e;
    } else {
      v[++k] = v[i];
    }
  }
  for (size_t i = 0; i <= k; i++)
    *len = pp__add_sat(*len, pp__span(v[i].s, v[i].e));
  return k + 1;
}

/* Length of the intersection of two merged lists. */
static int64_t overlap_iv(const iv *a, size_t na, const iv *b, size_t nb) {
  int64_t sum = 0;
  size_t i = 0, j = 0;
  while (i < na && j < nb) {
    int64_t s = a[i].s > b[j].s ? a[i].s : b[j].s;
    int64_t e = a[i].e < b[j].e ? a[i].e : b[j].e;
    if (e > s)
      sum = pp__add_sat(sum, pp__span(s, e));
    if (a[i].e < b[j].e)
      i++;
    else
      j++;
  }
  return sum;
}

static int64_t dur(int64_t s, int64_t e) { return pp__span(s, e); }

/* ---- correlation and attribution -------------------------------------- */

typedef struct corr {
  uint32_t id;
  uint32_t runtime; /* 1 for a runtime API call */
  int32_t api;
} corr;

static int cmp_corr(const void *a, const void *b) {
  const corr *x = a, *y = b;
  if (x->id != y->id)
    return x->id < y->id ? -1 : 1;
  if (x->runtime != y->runtime)
    return x->runtime > y->runtime ? -1 : 1; /* runtime first */
  return x->api < y->api ? -1 : x->api > y->api;
}

static int32_t find_api(const corr *c, size_t n, uint32_t id) {
  if (!id)
    return -1;
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (c[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && c[lo].id == id ? c[lo].api : -1;
}

static pp_gpu_attr attribute(const pp_analysis *an, const corr *c, size_t nc,
                             uint32_t correlation) {
  const pp_trace *t = an->trace;
  pp_gpu_attr a = {find_api(c, nc, correlation), PP_GPU_NO_ZONE,
                   PP_GPU_NO_ZONE};
  if (a.api < 0)
    return a;
  const pp_cuda_api *api = &t->cuda.apis[a.api];
  size_t ti = pp_trace_thread_index(t, api->tid);
  int z = pp_zone_enclosing(an, ti, api->start);
  if (z < 0)
    return a;
  const pp_thread_figures *th = &an->threads[ti];
  a.zone = th->zones[z].loc;
  while (th->zones[z].parent >= 0)
    z = th->zones[z].parent;
  a.stage = th->zones[z].loc;
  return a;
}

/* ---- tables ------------------------------------------------------------- */

static pp_gpu_stage *stage_for(pp_gpu_activity *g, uint32_t loc,
                               size_t *cap) {
  for (size_t i = 0; i < g->nstages; i++)
    if (g->stages[i].loc == loc)
      return &g->stages[i];
  if (pp__grow((void **)&g->stages, cap, g->nstages + 1, sizeof *g->stages))
    return NULL;
  pp_gpu_stage *s = &g->stages[g->nstages++];
  memset(s, 0, sizeof *s);
  s->loc = loc;
  return s;
}

static pp_gpu_device *device_for(pp_gpu_activity *g, uint32_t dev,
                                 size_t *cap) {
  for (size_t i = 0; i < g->ndevices; i++)
    if (g->devices[i].device == dev)
      return &g->devices[i];
  if (pp__grow((void **)&g->devices, cap, g->ndevices + 1,
               sizeof *g->devices))
    return NULL;
  pp_gpu_device *d = &g->devices[g->ndevices++];
  memset(d, 0, sizeof *d);
  d->device = dev;
  return d;
}

static void add_xfer(pp_gpu_xfer *x, const pp_cuda_memcpy *m) {
  int dir = pp_gpu_xfer_dir(m->copy_kind);
  unsigned host = dir == PP_XFER_H2D   ? m->src_kind
                  : dir == PP_XFER_D2H ? m->dst_kind
                                       : 0;
  pp_gpu_xfer *d = &x[dir];
  d->count++;
  d->bytes += m->bytes;
  d->time_ns = pp__add_sat(d->time_ns, dur(m->start, m->end));
  if (host == 1)
    d->pageable_bytes += m->bytes;
  else if (host == 2)
    d->pinned_bytes += m->bytes;
}

static const pp_trace *sort_trace; /* qsort has no context argument */

static int cmp_kernel(const void *a, const void *b) {
  const pp_gpu_kernel_stats *x = a, *y = b;
  if (x->total_ns != y->total_ns)
    return x->total_ns > y->total_ns ? -1 : 1;
  return strcmp(pp_cuda_name(&sort_trace->cuda, x->name),
                pp_cuda_name(&sort_trace->cuda, y->name));
}

static int64_t stage_gpu_ns(const pp_gpu_stage *s) {
  int64_t v = pp__add_sat(s->kernel_ns, s->memset_ns);
  for (int d = 0; d < PP_XFER_N; d++)
    v = pp__add_sat(v, s->xfer[d].time_ns);
  return v;
}

static int cmp_stage(const void *a, const void *b) {
  const pp_gpu_stage *x = a, *y = b;
  int64_t gx = stage_gpu_ns(x), gy = stage_gpu_ns(y);
  if (gx != gy)
    return gx > gy ? -1 : 1;
  return x->loc < y->loc ? -1 : x->loc > y->loc;
}

static int cmp_api(const void *a, const void *b) {
  const pp_gpu_api_stats *x = a, *y = b;
  if (x->total_ns != y->total_ns)
    return x->total_ns > y->total_ns ? -1 : 1;
  return x->name < y->name ? -1 : x->name > y->name;
}

static int cmp_device(const void *a, const void *b) {
  const pp_gpu_device *x = a, *y = b;
  return x->device < y->device ? -1 : x->device > y->device;
}

void pp_gpu_activity_free(pp_gpu_activity *g) {
  if (!g)
    return;
  for (size_t i = 0; i < g->nkernels; i++)
    pp_hist_free(&g->kernels[i].hist);
  pp_hist_free(&g->launch);
  pp_hist_free(&g->queued);
  pp__free(g->kernels);
  pp__free(g->stages);
  pp__free(g->devices);
  pp__free(g->apis);
  pp__free(g->syncs);
  pp__free(g->kernel_attr);
  pp__free(g->memcpy_attr);
  pp__free(g->memset_attr);
  pp__free(g);
}

/* Busy time of each stage: its instances (top-level zones of its site on
 * every thread, merged) intersected with all devices' merged work. */
static int stage_busy(const pp_analysis *an, pp_gpu_activity *g, const iv *work,
                      size_t nwork) {
  for (size_t s = 0; s < g->nstages; s++) {
    pp_gpu_stage *st = &g->stages[s];
    if (st->loc == PP_GPU_NO_ZONE)
      continue;
    iv *v = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < an->nthreads; i++) {
      const pp_thread_figures *th = &an->threads[i];
      for (size_t j = 0; j < th->nzones; j++) {
        const pp_zone_inst *z = &th->zones[j];
        if (z->depth != 0 || z->loc != st->loc)
          continue;
        if (pp__grow((void **)&v, &cap, n + 1, sizeof *v)) {
          pp__free(v);
          return -1;
        }
        v[n++] = (iv){z->start, z->end};
      }
    }
    n = merge_iv(v, n, &st->wall_ns);
    st->busy_ns = overlap_iv(v, n, work, nwork);
    pp__free(v);
  }
  return 0;
}

int pp_analyze_cuda(pp_analysis *an) {
  const pp_trace *t = an->trace;
  const pp_cuda_trace *c = &t->cuda;
  if (!c->chunks)
    return 0;
  pp_gpu_activity *g = pp__calloc(1, sizeof *g);
  corr *cr = NULL;
  iv *work = NULL;
  size_t *kmap = NULL, *amap = NULL; /* name id -> table index + 1 */
  if (!g)
    return -1;
  pp_hist_init(&g->launch);
  pp_hist_init(&g->queued);
  g->dropped = c->dropped;
  size_t nwork = c->nkernels + c->nmemcpys + c->nmemsets;
  cr = pp__malloc((c->napis ? c->napis : 1) * sizeof *cr);
  work = pp__malloc((nwork ? nwork : 1) * sizeof *work);
  g->kernel_attr = pp__calloc(c->nkernels, sizeof *g->kernel_attr);
  g->memcpy_attr = pp__calloc(c->nmemcpys, sizeof *g->memcpy_attr);
  g->memset_attr = pp__calloc(c->nmemsets, sizeof *g->memset_attr);
  kmap = pp__calloc(c->nnames + 1, sizeof *kmap);
  amap = pp__calloc(c->nnames + 1, sizeof *amap);
  if (!cr || !work || !kmap || !amap || !g->kernel_attr || !g->memcpy_attr ||
      !g->memset_attr)
    goto oom;
  for (size_t i = 0; i < c->napis; i++)
    cr[i] = (corr){c->apis[i].correlation, c->apis[i].domain == 2,
                   (int32_t)i};
  pp__sort(cr, c->napis, sizeof *cr, cmp_corr);

  /* The run's window: the zones' span widened by the GPU work. */
  int any = an->prof.wall_ns > 0 || an->prof.t0 || an->prof.t1;
  g->t0 = an->prof.t0;
  g->t1 = an->prof.t1;
  size_t cap_stages = 0, cap_devices = 0, cap_kernels = 0, cap_apis = 0,
         cap_syncs = 0, w = 0;
#define WIDEN(s, e)                                                            \
  do {                                                                         \
    if (!any || (s) < g->t0)                                                   \
      g->t0 = (s);                                                             \
    if (!any || (e) > g->t1)                                                   \
      g->t1 = (e);                                                             \
    any = 1;                                                                   \
  } while (0)

  for (size_t i = 0; i < c->nkernels; i++) {
    const pp_cuda_kernel *k = &c->kernels[i];
    int64_t d = dur(k->start, k->end);
    WIDEN(k->start, k->end);
    work[w++] = (iv){k->start, k->start + d};
    pp_gpu_attr a = attribute(an, cr, c->napis, k->correlation);
    g->kernel_attr[i] = a;
    pp_gpu_stage *st = stage_for(g, a.stage, &cap_stages);
    pp_gpu_device *dv = device_for(g, k->device, &cap_devices);
    if (!st || !dv)
      goto oom;
    st->kernels++;
    st->kernel_ns = pp__add_sat(st->kernel_ns, d);
    dv->kernels++;
    dv->kernel_ns = pp__add_sat(dv->kernel_ns, d);
    g->kernel_ns = pp__add_sat(g->kernel_ns, d);
    if (a.api >= 0 && k->start >= c->apis[a.api].start)
      pp_hist_record(&g->launch,
                     (uint64_t)pp__span(c->apis[a.api].start, k->start));
    if (k->queued > 0 && k->start >= k->queued)
      pp_hist_record(&g->queued, (uint64_t)pp__span(k->queued, k->start));
    /* names are dense ids: one slot each, one more for undefined ones */
    size_t slot = k->name < c->nnames ? k->name : c->nnames;
    pp_gpu_kernel_stats *ks =
        kmap[slot] ? &g->kernels[kmap[slot] - 1] : NULL;
    if (!ks) {
      if (pp__grow((void **)&g->kernels, &cap_kernels, g->nkernels + 1,
                   sizeof *g->kernels))
        goto oom;
      ks = &g->kernels[g->nkernels++];
      kmap[slot] = g->nkernels;
      memset(ks, 0, sizeof *ks);
      ks->name = k->name;
      pp_hist_init(&ks->hist);
    }
    ks->calls++;
    ks->total_ns = pp__add_sat(ks->total_ns, d);
    pp_hist_record(&ks->hist, (uint64_t)d);
  }
  for (size_t i = 0; i < c->nmemcpys; i++) {
    const pp_cuda_memcpy *m = &c->memcpys[i];
    int64_t d = dur(m->start, m->end);
    WIDEN(m->start, m->end);
    work[w++] = (iv){m->start, m->start + d};
    pp_gpu_attr a = attribute(an, cr, c->napis, m->correlation);
    g->memcpy_attr[i] = a;
    pp_gpu_stage *st = stage_for(g, a.stage, &cap_stages);
    pp_gpu_device *dv = device_for(g, m->device, &cap_devices);
    if (!st || !dv)
      goto oom;
    add_xfer(st->xfer, m);
    add_xfer(g->xfer, m);
    dv->copies++;
    dv->copy_ns = pp__add_sat(dv->copy_ns, d);
  }
  for (size_t i = 0; i < c->nmemsets; i++) {
    const pp_cuda_memset *m = &c->memsets[i];
    int64_t d = dur(m->start, m->end);
    WIDEN(m->start, m->end);
    work[w++] = (iv){m->start, m->start + d};
    pp_gpu_attr a = attribute(an, cr, c->napis, m->correlation);
    g->memset_attr[i] = a;
    pp_gpu_stage *st = stage_for(g, a.stage, &cap_stages);
    pp_gpu_device *dv = device_for(g, m->device, &cap_devices);
    if (!st || !dv)
      goto oom;
    st->memsets++;
    st->memset_ns = pp__add_sat(st->memset_ns, d);
    dv->memsets++;
    dv->memset_ns = pp__add_sat(dv->memset_ns, d);
  }
#undef WIDEN
  g->wall_ns = dur(g->t0, g->t1);
  const pp_gpu_attr *all[3] = {g->kernel_attr, g->memcpy_attr,
                               g->memset_attr};
  size_t counts[3] = {c->nkernels, c->nmemcpys, c->nmemsets};
  for (int k = 0; k < 3; k++)
    for (size_t i = 0; i < counts[k]; i++) {
      if (all[k][i].api < 0)
        g->uncorrelated++;
      else
        g->correlated++;
      if (all[k][i].api >= 0 && all[k][i].zone == PP_GPU_NO_ZONE)
        g->unattributed++;
    }

  /* Busy time per device: each device's own work, merged. */
  for (size_t d = 0; d < g->ndevices; d++) {
    size_t n = 0;
    iv *v = pp__malloc((nwork ? nwork : 1) * sizeof *v);
    if (!v)
      goto oom;
    uint32_t dev = g->devices[d].device;
    for (size_t i = 0; i < c->nkernels; i++)
      if (c->kernels[i].device == dev)
        v[n++] = (iv){c->kernels[i].start,
                      c->kernels[i].start +
                          dur(c->kernels[i].start, c->kernels[i].end)};
    for (size_t i = 0; i < c->nmemcpys; i++)
      if (c->memcpys[i].device == dev)
        v[n++] = (iv){c->memcpys[i].start,
                      c->memcpys[i].start +
                          dur(c->memcpys[i].start, c->memcpys[i].end)};
    for (size_t i = 0; i < c->nmemsets; i++)
      if (c->memsets[i].device == dev)
        v[n++] = (iv){c->memsets[i].start,
                      c->memsets[i].start +
                          dur(c->memsets[i].start, c->memsets[i].end)};
    merge_iv(v, n, &g->devices[d].busy_ns);
    pp__free(v);
  }
  pp__sort(g->devices, g->ndevices, sizeof *g->devices, cmp_device);
  nwork = merge_iv(work, w, &g->busy_ns);
  if (stage_busy(an, g, work, nwork) != 0)
    goto oom;

  for (size_t i = 0; i < g->nkernels; i++) {
    pp_gpu_kernel_stats *ks = &g->kernels[i];
    ks->mean_ns = (double)ks->total_ns / (double)ks->calls;
    ks->share_pct = g->kernel_ns > 0 ? 100.0 * (double)ks->total_ns /
                                           (double)g->kernel_ns
                                     : 0;
  }
  sort_trace = t;
  pp__sort(g->kernels, g->nkernels, sizeof *g->kernels, cmp_kernel);
  sort_trace = NULL;
  pp__sort(g->stages, g->nstages, sizeof *g->stages, cmp_stage);

  for (size_t i = 0; i < c->napis; i++) {
    const pp_cuda_api *a = &c->apis[i];
    /* an API name id stands for one (domain, callback id) */
    size_t slot = a->name < c->nnames ? a->name : c->nnames;
    pp_gpu_api_stats *s = amap[slot] ? &g->apis[amap[slot] - 1] : NULL;
    if (!s) {
      if (pp__grow((void **)&g->apis, &cap_apis, g->napis + 1,
                   sizeof *g->apis))
        goto oom;
      s = &g->apis[g->napis++];
      amap[slot] = g->napis;
      memset(s, 0, sizeof *s);
      s->name = a->name;
      s->domain = a->domain;
    }
    s->calls++;
    s->total_ns = pp__add_sat(s->total_ns, dur(a->start, a->end));
  }
  pp__sort(g->apis, g->napis, sizeof *g->apis, cmp_api);
  for (size_t i = 0; i < c->nsyncs; i++) {
    const pp_cuda_sync *y = &c->syncs[i];
    pp_gpu_sync_stats *s = NULL;
    for (size_t j = 0; j < g->nsyncs; j++)
      if (g->syncs[j].type == y->type)
        s = &g->syncs[j];
    if (!s) {
      if (pp__grow((void **)&g->syncs, &cap_syncs, g->nsyncs + 1,
                   sizeof *g->syncs))
        goto oom;
      s = &g->syncs[g->nsyncs++];
      memset(s, 0, sizeof *s);
      s->type = y->type;
    }
    s->count++;
    s->total_ns = pp__add_sat(s->total_ns, dur(y->start, y->end));
  }
  pp__free(cr);
  pp__free(work);
  pp__free(kmap);
  pp__free(amap);
  an->cuda = g;
  return 0;
oom:
  pp__free(cr);
  pp__free(work);
  pp__free(kmap);
  pp__free(amap);
  pp_gpu_activity_free(g);
  return -1;
}
