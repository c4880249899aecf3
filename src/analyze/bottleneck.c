/* SPDX-License-Identifier: MIT */
/*
 * Bottleneck analysis: the pipeline's stages (the names its queues use as
 * producer and consumer), each stage's busy time, utilisation and
 * capacity, the stage that bounds throughput and the pipeline efficiency;
 * and the critical path of every item followed by a flow
 * (FLOW_BEGIN/STEP/END by id): where its time went, in stage zones and
 * between them, for the median and the slowest item. Definitions in
 * docs/analysis.md.
 *
 * Matching rule: a stage's work is the zones named exactly like the stage.
 * Only outermost instances count (a "decode" zone inside another "decode"
 * zone adds nothing), so busy time never exceeds the threads' wall time.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "format/pptrace.h"
#include "internal.h"
#include "pipeline.h"

#define WHERE_MAX 64

int pp__stage_find(const pp_pipeline *p, const char *name) {
  for (size_t i = 0; i < p->nstages; i++)
    if (strcmp(p->stages[i].name, name) == 0)
      return (int)i;
  return -1;
}

int pp__queue_between(const pp_pipeline *p, const char *from,
                      const char *to) {
  for (size_t i = 0; i < p->nqueues; i++)
    if (strcmp(p->queues[i].from, from) == 0 &&
        strcmp(p->queues[i].to, to) == 0)
      return (int)i;
  return -1;
}

/* ---- stages ------------------------------------------------------------- */

static int add_stage(pp_pipeline *p, size_t *cap, const char *name) {
  if (!name[0] || pp__stage_find(p, name) >= 0)
    return 0;
  if (pp__grow((void **)&p->stages, cap, p->nstages + 1, sizeof *p->stages))
    return -1;
  pp_stage_stats *s = &p->stages[p->nstages++];
  memset(s, 0, sizeof *s);
  s->name = name;
  s->in_queue = s->out_queue = -1;
  return 0;
}

typedef struct ranked {
  pp_stage_stats s;
  size_t rank;
} ranked;

static int cmp_ranked(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->rank != y->rank)
    return x->rank < y->rank ? -1 : 1;
  return strcmp(x->s.name, y->s.name);
}

/* Pipeline order: by the longest chain of queues from a source (a stage
 * no queue feeds), then by name. Cycles stop growing after n rounds. */
static int order_stages(pp_pipeline *p) {
  size_t n = p->nstages;
  if (n < 2)
    return 0;
  ranked *r = pp__calloc(n, sizeof *r);
  if (!r)
    return -1;
  for (size_t i = 0; i < n; i++)
    r[i].s = p->stages[i];
  for (size_t round = 0; round < n; round++) {
    int changed = 0;
    for (size_t q = 0; q < p->nqueues; q++) {
      int a = pp__stage_find(p, p->queues[q].from);
      int b = pp__stage_find(p, p->queues[q].to);
      if (a >= 0 && b >= 0 && r[b].rank < r[a].rank + 1 && r[a].rank < n) {
        r[b].rank = r[a].rank + 1;
        changed = 1;
      }
    }
    if (!changed)
      break;
  }
  pp__sort(r, n, sizeof *r, cmp_ranked);
  for (size_t i = 0; i < n; i++)
    p->stages[i] = r[i].s;
  pp__free(r);
  return 0;
}

/* stage_of[loc]: the stage a zone site belongs to, -1 when none. */
static int32_t *stage_map(const pp_analysis *a) {
  const pp_trace *t = a->trace;
  const pp_pipeline *p = &a->prof.pipe;
  int32_t *m = pp__malloc((t->nlocs ? t->nlocs : 1) * sizeof *m);
  if (!m)
    return NULL;
  for (size_t i = 0; i < t->nlocs; i++)
    m[i] = t->locs[i].kind == PP_KIND_QUEUE || !p->nstages
               ? -1
               : pp__stage_find(p, pp_trace_loc_name(t, (uint32_t)i));
  return m;
}

/* 1 when an ancestor of zone z belongs to the same stage. */
static int nested_in_same(const pp_thread_figures *th, const int32_t *stage_of,
                          const pp_zone_inst *z) {
  int32_t s = stage_of[z->loc];
  for (int32_t up = z->parent; up >= 0; up = th->zones[up].parent)
    if (stage_of[th->zones[up].loc] == s)
      return 1;
  return 0;
}

int pp__stages_analyze(pp_analysis *a) {
  const pp_trace *t = a->trace;
  pp_pipeline *p = &a->prof.pipe;
  size_t cap = 0;
  for (size_t i = 0; i < p->nqueues; i++)
    if (add_stage(p, &cap, p->queues[i].from) ||
        add_stage(p, &cap, p->queues[i].to))
      return -1;
  if (!p->nstages || order_stages(p))
    return p->nstages ? -1 : 0;
  for (size_t i = 0; i < p->nqueues; i++) {
    int from = pp__stage_find(p, p->queues[i].from);
    int b = pp__stage_find(p, p->queues[i].to);
    if (from >= 0 && p->stages[from].out_queue < 0)
      p->stages[from].out_queue = (int32_t)i;
    if (b >= 0 && p->stages[b].in_queue < 0)
      p->stages[b].in_queue = (int32_t)i;
  }
  int32_t *stage_of = stage_map(a);
  int64_t *per_thread = pp__calloc(p->nstages, sizeof *per_thread);
  if (!stage_of || !per_thread) {
    pp__free(stage_of);
    pp__free(per_thread);
    return -1;
  }
  int any = 0;
  for (size_t i = 0; i < t->nthreads; i++) {
    const pp_thread_figures *thf = &a->threads[i];
    for (size_t s = 0; s < p->nstages; s++)
      per_thread[s] = -1; /* no instance on this thread yet */
    for (size_t j = 0; j < thf->nzones; j++) {
      const pp_zone_inst *z = &thf->zones[j];
      int32_t s = z->loc < t->nlocs ? stage_of[z->loc] : -1;
      if (s < 0 || nested_in_same(thf, stage_of, z))
        continue;
      pp_stage_stats *st = &p->stages[s];
      int64_t d = pp__span(z->start, z->end);
      st->busy_ns = pp__add_sat(st->busy_ns, d);
      st->items++;
      if (per_thread[s] < 0)
        per_thread[s] = 0;
      per_thread[s] = pp__add_sat(per_thread[s], d);
      if (!any || z->start < p->win_start)
        p->win_start = z->start;
      if (!any || z->end > p->win_end)
        p->win_end = z->end;
      any = 1;
    }
    for (size_t s = 0; s < p->nstages; s++)
      if (per_thread[s] >= 0)
        p->stages[s].workers++;
  }
  /* Max per-thread share needs the window: a second pass. */
  if (!any) {
    for (size_t i = 0; i < p->nqueues; i++) {
      const pp_queue_stats *q = &p->queues[i];
      if (i == 0 || q->t_first < p->win_start)
        p->win_start = q->t_first;
      if (i == 0 || q->t_last > p->win_end)
        p->win_end = q->t_last;
    }
  }
  int64_t win = pp__span(p->win_start, p->win_end);
  if (any && win > 0) {
    for (size_t i = 0; i < t->nthreads; i++) {
      const pp_thread_figures *thf = &a->threads[i];
      memset(per_thread, 0, p->nstages * sizeof *per_thread);
      for (size_t j = 0; j < thf->nzones; j++) {
        const pp_zone_inst *z = &thf->zones[j];
        int32_t s = z->loc < t->nlocs ? stage_of[z->loc] : -1;
        if (s >= 0 && !nested_in_same(thf, stage_of, z))
          per_thread[s] = pp__add_sat(per_thread[s], pp__span(z->start, z->end));
      }
      for (size_t s = 0; s < p->nstages; s++) {
        double u = (double)per_thread[s] / (double)win;
        if (u > p->stages[s].max_thread_util)
          p->stages[s].max_thread_util = u;
      }
    }
  }
  pp__free(stage_of);
  pp__free(per_thread);

  /* A stage that takes several items from its queue per call (a batch)
   * handles what its queue delivered: per item figures and the bound are
   * per item, not per call. */
  for (size_t s = 0; s < p->nstages; s++) {
    pp_stage_stats *st = &p->stages[s];
    st->calls = st->items;
    if (st->items && st->in_queue >= 0 &&
        p->queues[st->in_queue].pops > st->items)
      st->items = p->queues[st->in_queue].pops;
  }
  double sink_items = 0, best = 0;
  for (size_t s = 0; s < p->nstages; s++) {
    pp_stage_stats *st = &p->stages[s];
    if (st->items && st->busy_ns > 0) {
      st->service_ns = (double)st->busy_ns / (double)st->items;
      st->capacity_per_s = (double)st->workers * 1e9 / st->service_ns;
      if (win > 0)
        st->util = (double)st->busy_ns / ((double)st->workers * (double)win);
      if (p->bound < 0 || st->capacity_per_s < best) {
        best = st->capacity_per_s;
        p->bound = (int32_t)s;
      }
    }
    if (st->out_queue < 0)
      sink_items += (double)st->items;
  }
  if (sink_items == 0) /* sinks without zones: what their queues deliver */
    for (size_t i = 0; i < p->nqueues; i++) {
      int b = pp__stage_find(p, p->queues[i].to);
      if (b >= 0 && p->stages[b].out_queue < 0)
        sink_items += (double)p->queues[i].pops;
    }
  if (win > 0)
    p->achieved_per_s = sink_items / ((double)win * 1e-9);
  if (p->bound >= 0) {
    p->bound_per_s = best;
    if (p->achieved_per_s > 0)
      p->efficiency = p->achieved_per_s / best;
  }
  return 0;
}

/* ---- flows: critical paths ---------------------------------------------- */

typedef struct fpt {
  int64_t ts;
  uint64_t id;
  uint32_t key; /* canonical flow site */
  uint32_t th;
  uint32_t pid; /* ids are per process in merged traces */
  size_t seq;
  uint8_t type;
} fpt;

static int cmp_fpt(const void *a, const void *b) {
  const fpt *x = a, *y = b;
  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  if (x->id != y->id)
    return x->id < y->id ? -1 : 1;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  if (x->type != y->type) /* begin, step, end */
    return x->type < y->type ? -1 : 1;
  if (x->th != y->th)
    return x->th < y->th ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

typedef struct flow_ctx {
  const pp_trace *t;
  const pp_analysis *a;
  const pp_pipeline *p;
  const int32_t *stage_of; /* NULL without stages */
  pp_path_seg *segs;       /* scratch */
  size_t cap_segs;
} flow_ctx;

/* The zone a flow point belongs to: the outermost enclosing instance of a
 * stage, else the outermost enclosing instance; -1 when none. */
static int point_zone(const flow_ctx *c, const fpt *f) {
  const pp_thread_figures *th = &c->a->threads[f->th];
  int z = pp_zone_enclosing(c->a, f->th, f->ts);
  int top = z, stage = -1;
  for (int up = z; up >= 0; up = th->zones[up].parent) {
    top = up;
    if (c->stage_of && c->stage_of[th->zones[up].loc] >= 0)
      stage = up;
  }
  return stage >= 0 ? stage : top;
}

/* Build the path of one item (points f[0..n)) into c->segs. */
static int item_path(flow_ctx *c, const fpt *f, size_t n, pp_flow_path *out,
                     size_t *nsegs) {
  if (pp__grow((void **)&c->segs, &c->cap_segs, 2 * n + 1,
               sizeof *c->segs))
    return -1;
  size_t k = 0;
  int64_t cursor = 0, first = 0;
  const char *prev_name = NULL;
  uint32_t prev_th = UINT32_MAX;
  int prev_z = -2;
  out->zone_ns = out->wait_ns = 0;
  for (size_t i = 0; i < n; i++) {
    const pp_thread_figures *th = &c->a->threads[f[i].th];
    int z = point_zone(c, &f[i]);
    if (z >= 0 && f[i].th == prev_th && z == prev_z)
      continue; /* another point in the same zone */
    int64_t zs = z >= 0 ? th->zones[z].start : f[i].ts;
    int64_t ze = z >= 0 ? th->zones[z].end : f[i].ts;
    const char *name =
        z >= 0 ? pp_trace_loc_name(c->t, th->zones[z].loc) : "(no zone)";
    if (!prev_name) {
      cursor = first = zs;
    } else if (zs > cursor) {
      int q = pp__queue_between(c->p, prev_name, name);
      if (q < 0 && prev_z < 0 && z >= 0) {
        /* from outside any zone (the item began between zones): the
         * stage's input queue, when it has one */
        int si = pp__stage_find(c->p, name);
        if (si >= 0)
          q = c->p->stages[si].in_queue;
      }
      c->segs[k++] = (pp_path_seg){q >= 0 ? c->p->queues[q].name : NULL,
                                   prev_name, name, pp__span(cursor, zs), 1};
      out->wait_ns = pp__add_sat(out->wait_ns, pp__span(cursor, zs));
      cursor = zs;
    }
    int64_t d = pp__span(cursor, ze);
    /* a point outside any zone (an item begun or ended between zones) is
     * an instant: no segment of 0 ns named "(no zone)" */
    if (z >= 0 || d > 0)
      c->segs[k++] = (pp_path_seg){name, NULL, NULL, d, 0};
    out->zone_ns = pp__add_sat(out->zone_ns, d);
    if (ze > cursor)
      cursor = ze;
    prev_name = name;
    prev_th = f[i].th;
    prev_z = z;
  }
  out->start = first;
  out->total_ns = pp__span(first, cursor);
  *nsegs = k;
  return 0;
}

static int keep_path(flow_ctx *c, const fpt *f, size_t n, pp_flow_path *dst) {
  size_t ns;
  if (item_path(c, f, n, dst, &ns))
    return -1;
  dst->id = f[0].id;
  dst->segs = pp__malloc((ns ? ns : 1) * sizeof *dst->segs);
  if (!dst->segs)
    return -1;
  memcpy(dst->segs, c->segs, ns * sizeof *dst->segs);
  dst->nsegs = ns;
  return 0;
}

static int same_seg(const pp_path_seg *a, const pp_path_seg *b) {
  if (a->wait != b->wait)
    return 0;
  if (a->name && b->name)
    return strcmp(a->name, b->name) == 0;
  if (a->name || b->name)
    return 0;
  return strcmp(a->from, b->from) == 0 && strcmp(a->to, b->to) == 0;
}

static int cmp_where(const void *a, const void *b) {
  const pp_path_seg *x = a, *y = b;
  if (x->ns != y->ns)
    return x->ns > y->ns ? -1 : 1;
  return x->wait - y->wait;
}

/* An item: n points from `from` of the flow's points, or (joined) of the
 * points of items that crossed processes. */
typedef struct item {
  size_t from, n;
  int joined;
  int64_t total;
} item;

static int cmp_item_total(const void *a, const void *b) {
  const item *x = a, *y = b;
  if (x->total != y->total)
    return x->total < y->total ? -1 : 1;
  if (x->joined != y->joined)
    return x->joined - y->joined;
  return x->from < y->from ? -1 : x->from > y->from;
}

/* What one process left of an id: its points [a, b), the start of an
 * item it began and did not end (tail, SIZE_MAX: none) and the end of
 * the points it continued without beginning them (head: its first END
 * before any BEGIN, SIZE_MAX: none). */
typedef struct id_part {
  size_t a, b, tail, head;
} id_part;

/* The items of one process's points of one id, split at each BEGIN. */
static id_part split_items(const fpt *f, size_t a, size_t b, item *items,
                           size_t *ni, pp_flow_stats *fs) {
  id_part pt = {a, b, SIZE_MAX, SIZE_MAX};
  size_t start = SIZE_MAX;
  int begun = 0;
  for (size_t x = a; x < b; x++) {
    if (f[x].type == PPT_EV_FLOW_BEGIN) {
      if (start != SIZE_MAX)
        fs->incomplete++;
      start = x;
      begun = 1;
    } else if (start == SIZE_MAX) {
      if (f[x].type == PPT_EV_FLOW_END) {
        fs->incomplete++;
        if (!begun && pt.head == SIZE_MAX)
          pt.head = x;
      }
    } else if (f[x].type == PPT_EV_FLOW_END) {
      items[(*ni)++] = (item){start, x - start + 1, 0, 0};
      start = SIZE_MAX;
    }
  }
  if (start != SIZE_MAX) {
    fs->incomplete++;
    pt.tail = start;
  }
  return pt;
}

/* Flows across processes: an item one process began and did not end,
 * and one another process ended without beginning it, of one id, are one
 * item when they are the only such halves of the id (a forked worker
 * continuing what its parent began; two workers that number their own
 * items from 1 end each of theirs themselves and are never joined), and
 * in time order. Its points go to *joined. 0, 1 when joined, -1 when out
 * of memory. */
static int join_across(const fpt *f, const id_part *parts, size_t np,
                       fpt **joined, size_t *nj, size_t *cap_j, item *out) {
  size_t tails = 0, heads = 0, t = 0, h = 0;
  for (size_t k = 0; k < np; k++) {
    if (parts[k].tail != SIZE_MAX) {
      tails++;
      t = k;
    }
    if (parts[k].head != SIZE_MAX) {
      heads++;
      h = k;
    }
  }
  if (tails != 1 || heads != 1 || t == h ||
      f[parts[t].tail].ts > f[parts[h].a].ts)
    return 0;
  size_t nt = parts[t].b - parts[t].tail, nh = parts[h].head - parts[h].a + 1;
  if (pp__grow((void **)joined, cap_j, *nj + nt + nh, sizeof **joined))
    return -1;
  *out = (item){*nj, nt + nh, 1, 0};
  memcpy(*joined + *nj, f + parts[t].tail, nt * sizeof **joined);
  memcpy(*joined + *nj + nt, f + parts[h].a, nh * sizeof **joined);
  *nj += nt + nh;
  return 1;
}

/* One flow name: points f[0..n) sorted by id, process, then time. */
static int one_flow(flow_ctx *c, pp_flow_stats *fs, const fpt *f, size_t n) {
  item *items = pp__malloc(n * sizeof *items);
  id_part *parts = NULL;
  size_t cap_parts = 0, nj = 0, cap_j = 0;
  fpt *joined = NULL;
  if (!items)
    return -1;
  size_t ni = 0;
  fs->loc = f[0].key;
  pp_hist_init(&fs->latency);
  for (size_t i = 0; i < n;) {
    size_t np = 0, j = i;
    while (j < n && f[j].id == f[i].id) { /* each process's points */
      size_t b = j;
      while (b < n && f[b].id == f[i].id && f[b].pid == f[j].pid)
        b++;
      if (pp__grow((void **)&parts, &cap_parts, np + 1, sizeof *parts))
        goto oom;
      parts[np++] = split_items(f, j, b, items, &ni, fs);
      j = b;
    }
    if (np > 1) {
      int r = join_across(f, parts, np, &joined, &nj, &cap_j, &items[ni]);
      if (r < 0)
        goto oom;
      if (r) { /* its two halves are one item, not two incomplete ones */
        ni++;
        fs->incomplete -= 2;
        fs->crossed++;
      }
    }
    i = j;
  }
  pp__free(parts);
  parts = NULL;
  for (size_t i = 0; i < ni; i++) {
    pp_flow_path path;
    size_t ns;
    const fpt *base = items[i].joined ? joined : f;
    if (item_path(c, base + items[i].from, items[i].n, &path, &ns))
      goto oom;
    items[i].total = path.total_ns;
    pp_hist_record(&fs->latency, (uint64_t)path.total_ns);
    fs->zone_ns = pp__add_sat(fs->zone_ns, path.zone_ns);
    fs->wait_ns = pp__add_sat(fs->wait_ns, path.wait_ns);
    for (size_t s = 0; s < ns; s++) {
      size_t w = 0;
      while (w < fs->nwhere && !same_seg(&fs->where[w], &c->segs[s]))
        w++;
      if (w == fs->nwhere) {
        if (w == WHERE_MAX)
          continue;
        size_t cap = fs->nwhere;
        if (pp__grow((void **)&fs->where, &cap, w + 1, sizeof *fs->where))
          goto oom;
        fs->where[w] = c->segs[s];
        fs->where[w].ns = 0;
        fs->nwhere++;
      }
      fs->where[w].ns = pp__add_sat(fs->where[w].ns, c->segs[s].ns);
    }
  }
  fs->items = ni;
  if (fs->nwhere > 1)
    pp__sort(fs->where, fs->nwhere, sizeof *fs->where, cmp_where);
  int rc = 0;
  if (ni) {
    pp__sort(items, ni, sizeof *items, cmp_item_total);
    const item *med = &items[(ni - 1) / 2], *slow = &items[ni - 1];
    rc = keep_path(c, (med->joined ? joined : f) + med->from, med->n,
                   &fs->median) ||
         keep_path(c, (slow->joined ? joined : f) + slow->from, slow->n,
                   &fs->slowest);
  }
  pp__free(items);
  pp__free(joined);
  return rc ? -1 : 0;
oom:
  pp__free(items);
  pp__free(parts);
  pp__free(joined);
  return -1;
}

int pp__flows_analyze(pp_analysis *a) {
  const pp_trace *t = a->trace;
  pp_pipeline *p = &a->prof.pipe;
  if (t->from_stats)
    return 0;
  size_t n = 0;
  for (size_t i = 0; i < t->nthreads; i++)
    for (size_t j = 0; j < t->threads[i].nev; j++) {
      const pp_event *e = &t->threads[i].ev[j];
      n += e->type >= PPT_EV_FLOW_BEGIN && e->type <= PPT_EV_FLOW_END &&
           e->loc < t->nlocs;
    }
  if (!n)
    return 0;
  uint32_t *canon = NULL;
  fpt *f = pp__malloc(n * sizeof *f);
  flow_ctx c = {t, a, p, NULL, NULL, 0};
  int32_t *stage_of = p->nstages ? stage_map(a) : NULL;
  int rc = -1;
  if (!f || pp_loc_canon(t, &canon) || (p->nstages && !stage_of))
    goto done;
  c.stage_of = stage_of;
  size_t k = 0;
  for (size_t i = 0; i < t->nthreads; i++)
    for (size_t j = 0; j < t->threads[i].nev; j++) {
      const pp_event *e = &t->threads[i].ev[j];
      if (e->type >= PPT_EV_FLOW_BEGIN && e->type <= PPT_EV_FLOW_END &&
          e->loc < t->nlocs)
        f[k++] = (fpt){e->ts,
                       e->v.id,
                       canon[e->loc],
                       (uint32_t)i,
                       pp_thread_pid(t, &t->threads[i]),
                       j,
                       e->type};
    }
  pp__sort(f, n, sizeof *f, cmp_fpt);
  size_t groups = 0;
  for (size_t i = 0; i < n; i++)
    groups += i == 0 || f[i].key != f[i - 1].key;
  p->flows = pp__calloc(groups, sizeof *p->flows);
  if (!p->flows)
    goto done;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && f[j].key == f[i].key)
      j++;
    pp_flow_stats *fs = &p->flows[p->nflows++];
    if (one_flow(&c, fs, f + i, j - i))
      goto done;
    i = j;
  }
  rc = 0;
done:
  pp__free(c.segs);
  pp__free(stage_of);
  pp__free(canon);
  pp__free(f);
  return rc;
}
