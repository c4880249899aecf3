/* SPDX-License-Identifier: MIT */
/*
 * Merging traces of one run: the profiled program's trace, the traces of
 * programs it started, and the sampler trace of `pipeprof run`. All hold
 * CLOCK_MONOTONIC nanoseconds of the same host once read, so merging is a
 * matter of renumbering sites and appending threads; no clock alignment is
 * needed (pipeprof merge across hosts will use the wall-clock anchors).
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "model/model.h"
#include "model/sites.h"
#include "format/stats_payload.h"

/* n elements of elem bytes from s after the *dn of d (d may be NULL when
 * nothing is added). */
static void append(void *d, size_t *dn, const void *s, size_t n, size_t elem) {
  if (n)
    memcpy((char *)d + *dn * elem, s, n * elem);
  *dn += n;
}

/* CUDA records: appended, src's names renumbered after dst's. */
static int merge_cuda(pp_cuda_trace *d, pp_cuda_trace *s) {
  if (!s->chunks)
    return 0;
  if (!d->chunks) {
    *d = *s;
    memset(s, 0, sizeof *s);
    return 0;
  }
  size_t base = d->nnames, cap = d->nnames;
  if (pp__grow((void **)&d->names, &cap, base + s->nnames, sizeof(char *)) ||
      pp__grow((void **)&d->kernels, &d->cap_kernels, d->nkernels + s->nkernels,
               sizeof *d->kernels) ||
      pp__grow((void **)&d->memcpys, &d->cap_memcpys, d->nmemcpys + s->nmemcpys,
               sizeof *d->memcpys) ||
      pp__grow((void **)&d->memsets, &d->cap_memsets, d->nmemsets + s->nmemsets,
               sizeof *d->memsets) ||
      pp__grow((void **)&d->syncs, &d->cap_syncs, d->nsyncs + s->nsyncs,
               sizeof *d->syncs) ||
      pp__grow((void **)&d->apis, &d->cap_apis, d->napis + s->napis,
               sizeof *d->apis))
    return -1;
  append(d->names, &d->nnames, s->names, s->nnames, sizeof(char *));
  s->nnames = 0;
  for (size_t i = 0; i < s->nkernels; i++) {
    d->kernels[d->nkernels] = s->kernels[i];
    d->kernels[d->nkernels++].name += (uint32_t)base;
  }
  for (size_t i = 0; i < s->napis; i++) {
    d->apis[d->napis] = s->apis[i];
    d->apis[d->napis++].name += (uint32_t)base;
  }
  append(d->memcpys, &d->nmemcpys, s->memcpys, s->nmemcpys, sizeof *s->memcpys);
  append(d->memsets, &d->nmemsets, s->memsets, s->nmemsets, sizeof *s->memsets);
  append(d->syncs, &d->nsyncs, s->syncs, s->nsyncs, sizeof *s->syncs);
  d->dropped = pp__add_sat_u64(d->dropped, s->dropped);
  d->chunks += s->chunks;
  /* Correlation ids are per process: merged processes may reuse them. A
   * kernel of one process could then be joined to another's API call; the
   * thread ids keep the zone attribution apart in practice. */
  return 0;
}

/* Where t's stored events end (INT64_MAX: every event is stored). */
static int64_t window_end(const pp_trace *t) {
  return t->diag.events_kept < t->diag.events ? t->diag.first_unkept_ns
                                              : INT64_MAX;
}

static int merge_rest(pp_trace *dst, pp_trace *src, const uint32_t *map,
                      size_t nsrc);

static void note_unfinished(pp_read_diag *d, uint32_t pid) {
  size_t k = pp_unfinished_listed(d);
  if (k < PP_UNFINISHED_LISTED)
    d->unfinished_pid[k] = pid;
  d->parts_unfinished++;
}

int pp_trace_merge(pp_trace *dst, pp_trace *src) {
  return pp_trace_merge_ex(dst, src, 0, NULL);
}

int pp_trace_merge_process(pp_trace *dst, pp_trace *src) {
  return pp_trace_merge_ex(dst, src, 1, NULL);
}

/* src's site i as the id map[i] of dst: one dst already had (share, a
 * zone or mark site of the run's processes, model/sites.h), else the next
 * new one, in src's order. */
static int site_map(pp_trace *dst, pp_trace *src, int share, uint32_t *map) {
  size_t base = dst->nlocs;
  pp_site_index *x = share ? pp_site_index_new(dst->locs, base) : NULL;
  if (share && !x)
    return -1;
  size_t next = base;
  for (size_t i = 0; i < src->nlocs; i++) {
    long k = pp_site_index_find(x, &src->locs[i]);
    if (k >= 0) {
      map[i] = (uint32_t)k;
      pp__free(src->locs[i].name); /* dst's copy stands for it */
      pp__free(src->locs[i].function);
      pp__free(src->locs[i].file);
      continue;
    }
    map[i] = (uint32_t)next;
    dst->locs[next] = src->locs[i];
    dst->locs[next].id = (uint32_t)next;
    next++;
  }
  pp_site_index_free(x);
  dst->nlocs = next;
  src->nlocs = 0;
  return 0;
}

/* A copy of n bytes (NULL when n is 0 or out of memory: *ok cleared). */
static void *dup_bytes(const void *p, size_t n, int *ok) {
  void *q = n ? pp__malloc(n) : NULL;
  if (n && !q)
    *ok = 0;
  else if (n)
    memcpy(q, p, n);
  return q;
}

/* Stats mode: each process's payload kept beside the sum (model.h's
 * stats_parts): dst's own before its first merge, then src's (or the
 * parts src holds), its sites as map renumbers them. */
static int keep_parts(pp_trace *dst, pp_trace *src, const uint32_t *map,
                      size_t nsrc) {
  size_t add = src->nstats_parts ? src->nstats_parts : 1;
  size_t have = dst->nstats_parts ? dst->nstats_parts : 1, cap = have;
  struct pp_stats_part *v = dst->stats_parts;
  if (pp__grow((void **)&v, &cap, have + add, sizeof *v) != 0)
    return -1;
  dst->stats_parts = v;
  int ok = 1;
  if (!dst->nstats_parts) {
    struct pp_stats_part own = {dst->pid, dup_bytes(dst->stats, dst->nstats, &ok),
                                dst->nstats, NULL, 0};
    v[0] = own;
    dst->nstats_parts = 1;
  }
  for (size_t k = 0; k < add && ok; k++) {
    /* src's payload, or (a merged trace) each of its parts, maps
     * composed */
    const struct pp_stats_part *sp =
        src->nstats_parts ? &src->stats_parts[k] : NULL;
    const uint32_t *inner = sp ? sp->map : NULL;
    size_t ninner = inner ? sp->nmap : nsrc;
    struct pp_stats_part p = {
        sp ? sp->pid : src->pid,
        dup_bytes(sp ? sp->stats : src->stats, sp ? sp->nstats : src->nstats,
                  &ok),
        sp ? sp->nstats : src->nstats, NULL, ninner};
    p.map = ninner ? pp__malloc(ninner * sizeof *p.map) : NULL;
    if (ninner && !p.map)
      ok = 0;
    for (size_t i = 0; i < ninner && p.map; i++) {
      uint32_t l = inner ? inner[i] : (uint32_t)i;
      p.map[i] = l < nsrc ? map[l] : l;
    }
    v[dst->nstats_parts++] = p; /* freed with dst, whole or not */
  }
  return ok ? 0 : -1;
}

/* src's CPU stack samples into dst's: moved when dst has none, else
 * appended with their frames renamed into dst's table. */
static int merge_stacks(pp_trace *dst, pp_trace *src) {
  pp_stack_set *d = &dst->stacks, *s = &src->stacks;
  if (!s->nsamples && !s->lost)
    return 0;
  if (!d->nsamples && !d->nframes && !d->lost) {
    pp_stack_set_free(d);
    *d = *s;
    memset(s, 0, sizeof *s);
    return 0;
  }
  int32_t *ids = pp__malloc((s->nframes ? s->nframes : 1) * sizeof *ids);
  if (!ids)
    return -1;
  for (size_t i = 0; i < s->nframes; i++)
    if ((ids[i] = pp_stack_frame_id(d, s->frames[i].name,
                                    s->frames[i].module)) < 0) {
      pp__free(ids);
      return -1;
    }
  int32_t chain[256];
  for (size_t i = 0; i < s->nsamples; i++) {
    const pp_stack_rec *r = &s->samples[i];
    uint32_t n = r->n < 256 ? r->n : 256;
    for (uint32_t k = 0; k < n; k++)
      chain[k] = ids[s->ids[r->first + k]];
    if (pp_stack_add(d, r->pid, r->tid, r->t, chain, n)) {
      pp__free(ids);
      return -1;
    }
  }
  pp__free(ids);
  d->lost += s->lost;
  d->broken += s->broken;
  if (!d->hz)
    d->hz = s->hz;
  return 0;
}

int pp_trace_merge_ex(pp_trace *dst, pp_trace *src, int share,
                      uint32_t **map_out) {
  if (map_out)
    *map_out = NULL;
  if (dst->from_stats != src->from_stats)
    return -2; /* an aggregated file holds no events to merge with */
  uint32_t *map = pp__calloc(src->nlocs ? src->nlocs : 1, sizeof *map);
  if (!map ||
      pp__grow((void **)&dst->locs, &dst->cap_locs, dst->nlocs + src->nlocs,
               sizeof(pp_loc)) != 0 ||
      pp__grow((void **)&dst->threads, &dst->cap_threads,
               dst->nthreads + src->nthreads, sizeof(pp_thread)) != 0) {
    pp__free(map);
    return -1;
  }
  /* Sites: moved, renumbered after dst's (or shared with dst's). */
  size_t nsrc = src->nlocs;
  if (site_map(dst, src, share, map) != 0) {
    pp__free(map);
    return -1;
  }
  int rc = merge_rest(dst, src, map, nsrc);
  if (rc == 0 && dst->from_stats)
    rc = keep_parts(dst, src, map, nsrc);
  if (rc == 0 && dst->from_stats) { /* two stats-mode files: one payload */
    ppt_buf out = {0};
    rc = ppt_stats_merge(dst->stats, dst->nstats, src->stats, src->nstats, map,
                         nsrc, &out);
    if (rc == 0) {
      pp__free(dst->stats);
      dst->stats = out.data;
      dst->nstats = out.len;
    } else {
      ppt_buf_free(&out);
    }
  }
  if (rc == 0)
    rc = merge_stacks(dst, src);
  if (rc == 0 && map_out)
    *map_out = map;
  else
    pp__free(map);
  return rc;
}

/* The rest of src (threads, notes, GPU zones, CUDA, shapes, ...), its
 * sites renumbered by map (nsrc of them). */
static int merge_rest(pp_trace *dst, pp_trace *src, const uint32_t *map,
                      size_t nsrc) {
#define REMAP(l) ((size_t)(l) < nsrc ? map[(l)] : (uint32_t)(l))
  /* Threads: moved with their events, whose sites are renumbered, each
   * marked with the process that recorded it. */
  for (size_t i = 0; i < dst->nthreads; i++)
    dst->threads[i].pid = pp_thread_pid(dst, &dst->threads[i]);
  for (size_t i = 0; i < src->nthreads; i++) {
    pp_thread *th = &src->threads[i];
    for (size_t j = 0; j < th->nev; j++)
      th->ev[j].loc = REMAP(th->ev[j].loc);
    th->pid = pp_thread_pid(src, th);
    dst->threads[dst->nthreads++] = *th;
  }
  src->nthreads = 0;
  /* Anomalies and alerts: moved, kept in time order. */
  if (src->nnotes) {
    if (pp__grow((void **)&dst->notes, &dst->cap_notes,
                 dst->nnotes + src->nnotes, sizeof(pp_note)) != 0)
      return -1;
    for (size_t i = 0; i < src->nnotes; i++) {
      size_t j = dst->nnotes++;
      while (j > 0 && dst->notes[j - 1].ts > src->notes[i].ts) {
        dst->notes[j] = dst->notes[j - 1];
        j--;
      }
      dst->notes[j] = src->notes[i];
    }
    src->nnotes = 0;
  }
  /* GPU zones: appended, sites renumbered. */
  if (src->ngpu) {
    if (pp__grow((void **)&dst->gpu, &dst->cap_gpu, dst->ngpu + src->ngpu,
                 sizeof(pp_gpu_zone_rec)) != 0)
      return -1;
    for (size_t i = 0; i < src->ngpu; i++) {
      dst->gpu[dst->ngpu] = src->gpu[i];
      dst->gpu[dst->ngpu].loc = REMAP(dst->gpu[dst->ngpu].loc);
      dst->ngpu++;
    }
    src->ngpu = 0;
    pp__trace_sort_gpu(dst);
  }
  if (merge_cuda(&dst->cuda, &src->cuda) != 0)
    return -1;
  /* Operators by input shape (imported profiles): moved, sites
   * renumbered. */
  if (src->nshapes) {
    if (pp__grow((void **)&dst->shapes, &dst->cap_shapes,
                 dst->nshapes + src->nshapes, sizeof(pp_op_shape)) != 0)
      return -1;
    for (size_t i = 0; i < src->nshapes; i++) {
      dst->shapes[dst->nshapes] = src->shapes[i];
      dst->shapes[dst->nshapes].loc = REMAP(dst->shapes[dst->nshapes].loc);
      dst->nshapes++;
    }
    src->nshapes = 0;
  }
  /* Meta: src's keys that dst lacks (dst names the run's main process),
   * and src's process name as process_name.<pid>. */
  const char *pname = pp_trace_meta(src, "process_name");
  char key[40];
  snprintf(key, sizeof key, "process_name.%u", (unsigned)src->pid);
  if (pname && src->pid != dst->pid && !pp_trace_meta(dst, key) &&
      pp__meta_add(dst, key, pname) != 0)
    return -1;
  for (size_t i = 0; i < src->nmeta; i++) {
    const char *k = src->meta[i].key;
    if (k && strncmp(k, "process.", 8) == 0) {
      /* the process's own (process.parent_pid, process.fork_ns): as
       * <key>.<pid> */
      char pk[96];
      snprintf(pk, sizeof pk, "%s.%u", k, (unsigned)src->pid);
      if (src->pid != dst->pid && !pp_trace_meta(dst, pk) &&
          pp__meta_add(dst, pk, src->meta[i].value) != 0)
        return -1;
      continue;
    }
    if (pp_trace_meta(dst, k))
      continue;
    if (pp__meta_add(dst, k, src->meta[i].value) != 0)
      return -1;
  }
  if (src->format_minor < dst->format_minor)
    dst->format_minor = src->format_minor;
  /* the processes that did not finish their files: src, and those
   * merged into it before (past the listed ones, counted) */
  if (src->diag.file_bytes && !src->diag.clean_end)
    note_unfinished(&dst->diag, src->pid);
  for (size_t k = 0; k < pp_unfinished_listed(&src->diag); k++)
    note_unfinished(&dst->diag, src->diag.unfinished_pid[k]);
  dst->diag.parts_unfinished +=
      src->diag.parts_unfinished - pp_unfinished_listed(&src->diag);
  dst->diag.file_bytes += src->diag.file_bytes;
  dst->diag.chunks_ok += src->diag.chunks_ok;
  dst->diag.chunks_bad += src->diag.chunks_bad;
  dst->diag.bytes_skipped += src->diag.bytes_skipped;
  dst->diag.events_bad += src->diag.events_bad;
  int64_t cut = window_end(dst), src_cut = window_end(src);
  if (src_cut < cut)
    cut = src_cut;
  dst->diag.events += src->diag.events; /* decoded, stored or not */
  dst->diag.events_kept += src->diag.events_kept;
  dst->diag.truncated |= src->diag.truncated;
  if (src_cut < dst->diag.first_unkept_ns)
    dst->diag.first_unkept_ns = src_cut;
  /* Each read stored a window of its own (every event before its cut):
   * the merged trace's window ends at the earlier cut, on every thread. */
  if (cut != INT64_MAX)
    pp__trace_window(dst, cut, UINT64_MAX);
  return 0;
#undef REMAP
}
