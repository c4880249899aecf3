/* SPDX-License-Identifier: MIT */
/*
 * Salvage (see salvage.h): scan the trace for where it is whole and what
 * it says of its arena, check the arena, then append the rings' undrained
 * slots through the library's own trace sink, so that the salvaged part
 * is encoded exactly as the writer would have.
 */
#include "salvage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../format/records.h"
#include "../internal.h"
#include "../ring/arena.h"
#include "../ring/ring.h"
#include "../sink/flight.h"
#include "../sink/out.h"
#include "../sink/sink.h"
#include "../ring/tally.h"
#include "../sink/sites.h"
#include "../sink/stats_sink.h"
#include "../sink/trace.h"

/* ---- the trace ----------------------------------------------------------- */

typedef struct chunk_end {
  uint64_t end;   /* a whole chunk ends here */
  uint64_t sites; /* site definitions in the chunks up to here */
} chunk_end;

typedef struct trace_scan {
  uint64_t size;
  int finished;   /* an END chunk */
  uint64_t whole; /* the last whole chunk ends here */
  char rings[PATH_MAX];
  char token[32];
  char off_why[512]; /* unavailable.durable */
  double ticks_per_ns;
  chunk_end *ends; /* every whole chunk's (a commit must be one) */
  size_t nends, cap_ends;
} trace_scan;

static void copy_str(char *dst, size_t n, ppt_str v) {
  size_t k = v.n < n - 1 ? v.n : n - 1;
  memcpy(dst, v.s, k);
  dst[k] = 0;
}

static int scan_meta(trace_scan *ts, const unsigned char *p, size_t len) {
  ppt_cursor c = {p, p + len, 0};
  ppt_count cnt;
  if (ppt_count_get(&c, &cnt) != 0 || cnt.n > len)
    return -1;
  for (uint64_t i = 0; i < cnt.n; i++) {
    ppt_meta m;
    if (ppt_meta_get(&c, &m) != 0)
      return -1;
    char key[64];
    copy_str(key, sizeof key, m.key);
    if (!strcmp(key, "durable.rings"))
      copy_str(ts->rings, sizeof ts->rings, m.value);
    else if (!strcmp(key, "durable.token"))
      copy_str(ts->token, sizeof ts->token, m.value);
    else if (!strcmp(key, "unavailable.durable"))
      copy_str(ts->off_why, sizeof ts->off_why, m.value);
    else if (!strcmp(key, "ticks_per_ns")) {
      char num[64];
      copy_str(num, sizeof num, m.value);
      ts->ticks_per_ns = strtod(num, NULL);
    }
  }
  return 0;
}

static int scan_srcloc(const unsigned char *p, size_t len, uint64_t *n) {
  ppt_cursor c = {p, p + len, 0};
  while (c.p < c.end) {
    ppt_srcloc r;
    if (ppt_srcloc_get(&c, &r) != 0)
      return -1;
    ++*n;
  }
  return 0;
}

static int read_at(int fd, void *buf, size_t n, uint64_t off) {
  size_t got = 0;
  while (got < n) {
    ssize_t k = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return -1;
    got += (size_t)k;
  }
  return 0;
}

/* Walk the chunks up to the first one that is not whole. */
static int scan_trace(int fd, trace_scan *ts, char *msg, size_t n) {
  struct stat st;
  unsigned char fh[PPT_FILE_HEADER_SIZE];
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    snprintf(msg, n, "not a regular file");
    return -1;
  }
  ts->size = (uint64_t)st.st_size;
  if (read_at(fd, fh, sizeof fh, 0) != 0 ||
      memcmp(fh, PPT_FILE_MAGIC, 8) != 0 ||
      ppt_get_u32(fh + 60) != pp__crc32c(0, fh, 60)) {
    snprintf(msg, n, "not a pipeprof trace (bad file header)");
    return -1;
  }
  uint64_t off = PPT_FILE_HEADER_SIZE, sites = 0;
  unsigned char *payload = NULL;
  int rc = 0;
  while (off + PPT_CHUNK_HEADER_SIZE <= ts->size) {
    unsigned char h[PPT_CHUNK_HEADER_SIZE];
    if (read_at(fd, h, sizeof h, off) != 0 || !ppt_chunk_header_ok(h))
      break;
    uint16_t type = ppt_get_u16(h + 4);
    uint32_t len = ppt_get_u32(h + 8);
    if (off + PPT_CHUNK_HEADER_SIZE + len > ts->size)
      break;
    if (type == PPT_CHUNK_META || type == PPT_CHUNK_SRCLOC ||
        type == PPT_CHUNK_END) {
      unsigned char *q = realloc(payload, len ? len : 1);
      if (!q) {
        snprintf(msg, n, "out of memory");
        rc = -1;
        break;
      }
      payload = q;
      if (read_at(fd, payload, len, off + PPT_CHUNK_HEADER_SIZE) != 0 ||
          ppt_get_u32(h + 12) != pp__crc32c(0, payload, len))
        break;
      int bad = 0;
      if (type == PPT_CHUNK_META)
        bad = scan_meta(ts, payload, len);
      else if (type == PPT_CHUNK_SRCLOC)
        bad = scan_srcloc(payload, len, &sites);
      else
        ts->finished = 1;
      if (bad)
        break;
    }
    off += PPT_CHUNK_HEADER_SIZE + len;
    if (pp__grow((void **)&ts->ends, &ts->cap_ends, ts->nends + 1,
                 sizeof *ts->ends) != 0) {
      snprintf(msg, n, "out of memory");
      rc = -1;
      break;
    }
    ts->ends[ts->nends++] = (chunk_end){off, sites};
  }
  free(payload);
  ts->whole = off;
  return rc;
}

/* Whether the trace's chunks are whole up to off, and then in *sites
 * the site definitions before it. */
static int whole_at(const trace_scan *ts, uint64_t off, uint64_t *sites) {
  *sites = 0;
  if (off == PPT_FILE_HEADER_SIZE)
    return 1;
  for (size_t i = 0; i < ts->nends; i++)
    if (ts->ends[i].end == off) {
      *sites = ts->ends[i].sites;
      return 1;
    }
  return 0;
}

/* ---- the arena ----------------------------------------------------------- */

typedef struct arena_map {
  const unsigned char *base;
  uint64_t size;
  const pp__arena_hdr *h;
  const pp__arena_seg *seg;
  uint32_t nseg;
} arena_map;

static int seg_ok(const arena_map *a, const pp__arena_seg *s) {
  return s->len && s->off >= PP__ARENA_HDR_BYTES && s->off <= a->size &&
         s->len <= a->size - s->off && s->off % 8 == 0;
}

/* The segment of kind at process address addr with len bytes. */
static const void *translate(const arena_map *a, uint64_t addr, uint64_t len,
                             unsigned kind) {
  for (uint32_t i = 0; i < a->nseg; i++) {
    const pp__arena_seg *s = &a->seg[i];
    if (s->kind == kind && s->addr == addr && s->len == len && seg_ok(a, s))
      return a->base + s->off;
  }
  return NULL;
}

/* Open and check the arena at path. 0, or -1 with msg (-2: there is no
 * such file). */
static int arena_open(const char *path, arena_map *a, char *msg, size_t n) {
  memset(a, 0, sizeof *a);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int gone = errno == ENOENT;
    snprintf(msg, n, "cannot open the rings %s: %s", path, strerror(errno));
    return gone ? -2 : -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    snprintf(msg, n, "the rings %s are not a regular file", path);
    return -1;
  }
  if (st.st_uid != geteuid() && geteuid() != 0) {
    close(fd);
    snprintf(msg, n, "the rings %s belong to another user", path);
    return -1;
  }
  if ((uint64_t)st.st_size < PP__ARENA_HDR_BYTES) {
    close(fd);
    snprintf(msg, n, "the rings %s are cut short (%lld bytes)", path,
             (long long)st.st_size);
    return -1;
  }
  void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) {
    snprintf(msg, n, "cannot map the rings %s: %s", path, strerror(errno));
    return -1;
  }
  a->base = m;
  a->size = (uint64_t)st.st_size;
  a->h = m;
  a->seg = (const pp__arena_seg *)(a->base + PP__ARENA_SEG_OFF);
  const pp__arena_hdr *h = a->h;
  const char *bad = NULL;
  if (memcmp(h->magic, PP__ARENA_MAGIC, 8) != 0)
    bad = "not pipeprof rings (bad magic)";
  else if (h->version != PP__ARENA_VERSION)
    bad = "rings of another pipeprof version";
  else if (h->hdr_bytes != PP__ARENA_HDR_BYTES ||
           h->slot_bytes != sizeof(pp__slot))
    bad = "rings of another layout";
  else if (h->nseg > PP__ARENA_SEG_MAX)
    bad = "a segment count past the table";
  if (bad) {
    snprintf(msg, n, "%s: %s", path, bad);
    munmap(m, (size_t)a->size);
    a->base = NULL;
    return -1;
  }
  a->nseg = h->nseg;
  return 0;
}

static void arena_close(arena_map *a) {
  if (a->base)
    munmap((void *)a->base, (size_t)a->size);
  a->base = NULL;
}

/* ---- salvage ------------------------------------------------------------- */

/* One thread's slots to salvage: s.ring is the arena's ring (trace mode)
 * or a copy of it (flight mode, pp__flight_copy_ring). */
typedef struct thread_part {
  pp__slots s;
  uint64_t drops;
  char name[64];
  pp__slot *copy;  /* freed with the part */
  pp__tallies *g;  /* stats mode: the zones its tally set counted that no
                      checkpoint holds, rebuilt here; freed with the part */
} thread_part;

typedef struct part_set {
  thread_part *v;
  size_t n, cap;
} part_set;

static void parts_free(part_set *ps) {
  for (size_t i = 0; i < ps->n; i++) {
    pp__free(ps->v[i].copy);
    pp__tallies_free(ps->v[i].g);
  }
  free(ps->v);
  memset(ps, 0, sizeof *ps);
}

/* Each site record of this session's blocks, checked, handed to fn (a
 * non-zero return stops the walk and is returned). */
typedef int (*site_fn)(void *arg, const pp__arena_site_rec *r,
                       const pp_srcloc *def);

static int each_site(const arena_map *a, site_fn fn, void *arg) {
  const size_t room = PP__ARENA_SITES_BYTES - sizeof(pp__arena_sites);
  for (uint32_t i = 0; i < a->nseg; i++) {
    const pp__arena_seg *s = &a->seg[i];
    if (s->kind != PP__SEG_SITES || !seg_ok(a, s) ||
        s->len != PP__ARENA_SITES_BYTES)
      continue;
    const pp__arena_sites *blk = (const void *)(a->base + s->off);
    if (blk->token != a->h->token)
      continue; /* an earlier session's */
    uint64_t used = blk->used < room ? blk->used : room;
    const unsigned char *p = (const unsigned char *)(blk + 1);
    for (uint64_t pos = 0; pos + sizeof(pp__arena_site_rec) <= used;) {
      pp__arena_site_rec r;
      memcpy(&r, p + pos, sizeof r);
      uint64_t size = sizeof r + (uint64_t)r.len[0] + r.len[1] + r.len[2];
      size = (size + 7) & ~(uint64_t)7;
      if (pos + size > used)
        break;
      const char *str[3] = {NULL, NULL, NULL};
      const char *q = (const char *)p + pos + sizeof r;
      int ok = 1;
      for (int k = 0; k < 3; k++) {
        if (r.len[k]) {
          ok &= q[r.len[k] - 1u] == 0;
          str[k] = q;
        }
        q += r.len[k];
      }
      pos += size;
      pp_srcloc def = {str[0], str[1], str[2], r.line, r.kind};
      int rc = ok && str[0] ? fn(arg, &r, &def) : 0;
      if (rc)
        return rc;
    }
  }
  return 0;
}

typedef struct site_load {
  pp__sites *sites;
  uint64_t defined; /* ids the trace defines: 0 .. defined - 1 */
} site_load;

/* A site the trace defines keeps its id (its events there name it). */
static int keep_defined(void *arg, const pp__arena_site_rec *r,
                        const pp_srcloc *def) {
  (void)def;
  site_load *l = arg;
  if (r->id < l->defined)
    pp__sites_keep(l->sites, (const void *)(uintptr_t)r->addr, r->id);
  return 0;
}

/* Any other gets the next id and its definition: its SRCLOC and events
 * were cut with the trace's tail, or it was named before a writer met it
 * (a run-time name, a declared site). */
static int add_undefined(void *arg, const pp__arena_site_rec *r,
                         const pp_srcloc *def) {
  site_load *l = arg;
  const void *key = (const void *)(uintptr_t)r->addr;
  if (!key || r->id < l->defined ||
      pp__sites_find(l->sites, key) != UINT32_MAX)
    return 0;
  return pp__sites_add(l->sites, key, def) == UINT32_MAX ? -1 : 0;
}

/* The table of the arena's sites: the trace's ids first, so that the
 * others take ids past them. */
static int load_sites(const arena_map *a, pp__sites *sites, uint64_t defined,
                      char *msg, size_t n) {
  site_load l = {sites, defined};
  each_site(a, keep_defined, &l);
  if (sites->n < defined)
    sites->n = (size_t)defined;
  if (each_site(a, add_undefined, &l) != 0) {
    snprintf(msg, n, "out of memory");
    return -1;
  }
  return 0;
}

static uint32_t kind_of_event(unsigned type) {
  switch (type) {
  case PPT_EV_COUNTER_SET:
  case PPT_EV_COUNTER_ADD:
  case PPT_EV_COUNTER_SETF:
    return PP_KIND_COUNTER;
  case PPT_EV_MARK:
    return PP_KIND_MARK;
  case PPT_EV_FRAME:
    return PP_KIND_FRAME;
  case PPT_EV_FLOW_BEGIN:
  case PPT_EV_FLOW_STEP:
  case PPT_EV_FLOW_END:
    return PP_KIND_FLOW;
  case PPT_EV_QUEUE_PUSH:
  case PPT_EV_QUEUE_POP:
  case PPT_EV_QUEUE_WAIT_BEGIN:
  case PPT_EV_QUEUE_WAIT_END:
    return PP_KIND_QUEUE;
  case PPT_EV_MEM_ALLOC:
  case PPT_EV_MEM_FREE:
  case PPT_EV_MEM_RESERVE:
    return PP_KIND_POOL;
  default:
    return PP_KIND_ZONE;
  }
}

/* A site the table lacks: named by its address (a tally's site first met
 * after the writer's last pass). */
static int name_site(pp__sites *sites, const void *key, uint32_t kind,
                     uint64_t *unnamed) {
  if (pp__sites_find(sites, key) != UINT32_MAX)
    return 0;
  char name[96];
  snprintf(name, sizeof name,
           "(site %#" PRIx64 ", first met after the last drain)",
           (uint64_t)(uintptr_t)key);
  pp_srcloc def = {name, NULL, NULL, 0, kind};
  if (pp__sites_add(sites, key, &def) == UINT32_MAX)
    return -1;
  ++*unnamed;
  return 0;
}

/* Give every site the slots of s name and the table lacks a definition
 * of its own. */
static int name_unknown(pp__sites *sites, const pp__slots *s,
                        uint64_t *unnamed) {
  for (uint64_t i = s->from; i < s->to;) {
    pp__slot_ev e;
    int r = pp__slot_read(s, &i, &e);
    if (r < 0)
      break;
    if (r > 0 && e.loc &&
        name_site(sites, e.loc, kind_of_event(e.type), unnamed) != 0)
      return -1;
  }
  return 0;
}

/* Segment i when it is a whole thread state, else NULL. */
static const pp__tstate *tstate_at(const arena_map *a, uint32_t i) {
  const pp__arena_seg *sg = &a->seg[i];
  if (sg->kind != PP__SEG_TSTATE || !seg_ok(a, sg) ||
      sg->len < sizeof(pp__tstate))
    return NULL;
  return (const void *)(a->base + sg->off);
}

/* The newest blob of kind (a flight head, a stats checkpoint) of this
 * session, whole, whose seq is at most max_seq; NULL when none. */
static const pp__arena_blob_hdr *newest_blob(const arena_map *a, unsigned kind,
                                             uint64_t max_seq) {
  const pp__arena_blob_hdr *best = NULL;
  for (uint32_t i = 0; i < a->nseg; i++) {
    const pp__arena_seg *sg = &a->seg[i];
    if (sg->kind != kind || !seg_ok(a, sg) ||
        sg->len < sizeof(pp__arena_blob_hdr))
      continue;
    const pp__arena_blob_hdr *b = (const void *)(a->base + sg->off);
    uint64_t len = b->len;
    if (b->token == a->h->token && len && len <= sg->len - sizeof *b &&
        b->seq <= max_seq && (!best || b->seq > best->seq))
      best = b;
  }
  return best;
}

/* The thread states of the arena that left something: in trace mode the
 * slots the writer had not drained, in flight mode a copy of the newest
 * ring's worth. */
static int collect_threads(const arena_map *a, int flight, part_set *ps,
                           char *msg, size_t n) {
  uint64_t pass = a->h->commit_pass;
  for (uint32_t i = 0; i < a->nseg; i++) {
    const pp__tstate *t = tstate_at(a, i);
    if (!t)
      continue;
    uint64_t cap_slots = t->capacity;
    if (!t->ring || !cap_slots || (cap_slots & (cap_slots - 1)) ||
        t->mask != cap_slots - 1 || cap_slots > a->size / sizeof(pp__slot))
      continue;
    const pp__slot *ring =
        translate(a, (uint64_t)(uintptr_t)t->ring, cap_slots * sizeof(pp__slot),
                  PP__SEG_RING);
    if (!ring)
      continue;
    thread_part p;
    memset(&p, 0, sizeof p);
    if (flight) {
      pp__tstate local;
      memcpy(&local, t, sizeof local);
      local.ring = (pp__slot *)ring;
      if (!pp__flight_copy_ring(&local, &p.s, &p.copy))
        continue;
    } else {
      uint64_t w = t->w, r = t->r;
      if (t->pending_pass && t->pending_pass <= pass && t->r_pending > r)
        r = t->r_pending;
      if (r > w)
        continue; /* not a ring this writer left */
      if (w - r > cap_slots)
        r = w - cap_slots;
      p.drops =
          t->dropped > t->written_dropped ? t->dropped - t->written_dropped : 0;
      if (r == w && !p.drops)
        continue;
      p.s.tid = t->tid;
      p.s.ring = ring;
      p.s.mask = t->mask;
      p.s.from = r;
      p.s.to = w;
      p.s.last = 1;
    }
    memcpy(p.name, t->name, sizeof p.name);
    p.name[sizeof p.name - 1] = 0;
    if (pp__grow((void **)&ps->v, &ps->cap, ps->n + 1, sizeof *ps->v) != 0) {
      pp__free(p.copy);
      snprintf(msg, n, "out of memory");
      return -1;
    }
    ps->v[ps->n++] = p;
  }
  return 0;
}

/* The time of the event at slot i of s (a value slot: the one before). */
static uint64_t slot_time(const pp__slots *s, uint64_t i) {
  const pp__slot *q = &s->ring[i & s->mask];
  if (atomic_load_explicit(&q->a, memory_order_relaxed) >> PP__TAG_SHIFT ==
          PPT_SLOT_CONT &&
      i > s->from)
    q = &s->ring[(i - 1) & s->mask];
  return atomic_load_explicit(&q->ts, memory_order_relaxed);
}

/* Name every unknown site of the parts; first and last: the times of
 * their first and last slots (first UINT64_MAX: none). */
static int parts_scan(pp__sites *sites, part_set *ps, pp_salvage_result *res,
                      uint64_t *first, uint64_t *last) {
  for (size_t i = 0; i < ps->n; i++) {
    const pp__slots *s = &ps->v[i].s;
    if (name_unknown(sites, s, &res->unnamed_sites) != 0)
      return -1;
    if (s->to > s->from) {
      uint64_t ft = slot_time(s, s->from), lt = slot_time(s, s->to - 1);
      *first = ft < *first ? ft : *first;
      *last = lt > *last ? lt : *last;
    }
  }
  return 0;
}

/* A THREAD chunk naming the parts' threads (to the sink as well). */
static void write_threads(pp__out *o, pp__sink *sink, const part_set *ps) {
  ppt_buf b = {0};
  for (size_t i = 0; i < ps->n; i++) {
    ppt_thread r = {ps->v[i].s.tid, ppt_str_of(ps->v[i].name)};
    ppt_thread_put(&b, &r);
    if (sink->ops->thread)
      sink->ops->thread(sink, ps->v[i].s.tid, ps->v[i].name);
  }
  if (b.len)
    pp__out_chunk(o, PPT_CHUNK_THREAD, &b, 0);
  ppt_buf_free(&b);
}

/* The parts' drops, how the process ended, what was recovered (events
 * salvaged, their first and last ticks) and END (base_events and
 * base_drops: what the file counted before). */
static void write_tail(pp__out *o, const part_set *ps, const char *how,
                       uint64_t events, uint64_t first, uint64_t last,
                       double ticks_per_ns, uint64_t base_events,
                       uint64_t base_drops, pp_salvage_result *res) {
  ppt_buf b = {0};
  uint64_t drops = 0;
  for (size_t i = 0; i < ps->n; i++)
    if (ps->v[i].drops) {
      ppt_drops r = {ps->v[i].s.tid, ps->v[i].drops};
      ppt_drops_put(&b, &r);
      drops += ps->v[i].drops;
    }
  if (b.len)
    pp__out_chunk(o, PPT_CHUNK_DROPS, &b, 0);
  ppt_buf_free(&b);
  res->events = events;
  res->drops = drops;
  res->span_ms = first <= last && ticks_per_ns > 0
                     ? (double)(last - first) / ticks_per_ns / 1e6
                     : 0;
  char end[128], nev[32], nth[32], nun[32], span[32];
  snprintf(end, sizeof end, "%s%ssalvaged", how ? how : "", how ? ", " : "");
  snprintf(nev, sizeof nev, "%" PRIu64, events);
  snprintf(nth, sizeof nth, "%" PRIu64, res->threads);
  snprintf(nun, sizeof nun, "%" PRIu64, res->unnamed_sites);
  snprintf(span, sizeof span, "%.3f", res->span_ms);
  const char *const kv[][2] = {{"process.end", end},
                               {"process.salvaged_events", nev},
                               {"process.salvaged_threads", nth},
                               {"process.salvaged_unnamed_sites", nun},
                               {"process.salvaged_span_ms", span}};
  /* stats mode: what could not be read is said, not passed over */
  char nunr[32];
  snprintf(nunr, sizeof nunr, "%" PRIu64, res->unreadable);
  const char *const unr[][2] = {{"process.salvage_unreadable", nunr}};
  ppt_meta_pairs_put(&b, kv, PP__ARRAY_LEN(kv));
  pp__out_chunk(o, PPT_CHUNK_META, &b, 0);
  if (res->unreadable) {
    ppt_meta_pairs_put(&b, unr, 1);
    pp__out_chunk(o, PPT_CHUNK_META, &b, 0);
  }
  ppt_end er = {base_events + events, base_drops + drops};
  ppt_end_put(&b, &er);
  pp__out_chunk(o, PPT_CHUNK_END, &b, 0);
  ppt_buf_free(&b);
}

/* Write the parts to o through a trace sink over sites (named first),
 * then the tail. 0, or -1 with msg. */
static int emit(pp__out *o, pp__sites *sites, part_set *ps, const char *how,
                double ticks_per_ns, uint64_t base_events, uint64_t base_drops,
                pp_salvage_result *res, char *msg, size_t n) {
  uint64_t first = UINT64_MAX, last = 0;
  pp__sink *sink = NULL;
  if (parts_scan(sites, ps, res, &first, &last) != 0 ||
      !(sink = pp__trace_sink_new(o, sites))) {
    snprintf(msg, n, "out of memory");
    return -1;
  }
  write_threads(o, sink, ps);
  uint64_t events = 0;
  for (size_t i = 0; i < ps->n; i++) {
    if (ps->v[i].s.to == ps->v[i].s.from)
      continue;
    events += sink->ops->slots(sink, &ps->v[i].s);
    res->threads++;
  }
  sink->ops->pass_end(sink, 0, 1);
  sink->ops->free(sink);
  write_tail(o, ps, how, events, first, last, ticks_per_ns, base_events,
             base_drops, res);
  return 0;
}

/* ---- stats mode ---------------------------------------------------------- */

/* Where [addr, addr + len) of the process lies in a segment of kind. */
static const void *translate_in(const arena_map *a, uint64_t addr,
                                uint64_t len, unsigned kind) {
  for (uint32_t i = 0; i < a->nseg; i++) {
    const pp__arena_seg *s = &a->seg[i];
    if (s->kind == kind && seg_ok(a, s) && addr >= s->addr && len <= s->len &&
        addr - s->addr <= s->len - len)
      return a->base + s->off + (addr - s->addr);
  }
  return NULL;
}

/* The most tallies a salvaged set may hold (a set has one per site). */
#define SET_TALLIES_MAX (1u << 16)

/* The counters of the arena's tally rt into lt (a fresh one). */
static void copy_tally(const arena_map *a, const pp__tally *rt, pp__tally *lt,
                       uint64_t *unreadable) {
  pp__tally_put(&lt->min, pp__tally_get(&rt->min));
  pp__tally_put(&lt->max, pp__tally_get(&rt->max));
  pp__tally_put(&lt->sum_lo, pp__tally_get(&rt->sum_lo));
  pp__tally_put(&lt->sum_hi, pp__tally_get(&rt->sum_hi));
  for (int i = 0; i < 3; i++)
    pp__tally_put(&lt->sq[i], pp__tally_get(&rt->sq[i]));
  pp__tally_put(&lt->self_ns, pp__tally_get(&rt->self_ns));
  pp__tally_put(&lt->lost, pp__tally_get(&rt->lost));
  for (unsigned s = 0; s < PP_HIST_SLOTS; s++) {
    uint64_t addr = (uint64_t)(uintptr_t)atomic_load(&rt->block[s]);
    if (!addr)
      continue;
    const unsigned char *b =
        translate_in(a, addr, PP_HIST_HALF * sizeof(uint64_t), PP__SEG_TALLY);
    _Atomic uint64_t *lb = b ? pp__tally_block_new(lt, s) : NULL;
    if (!lb) {
      ++*unreadable;
      continue;
    }
    for (unsigned i = 0; i < PP_HIST_HALF; i++) {
      uint64_t v;
      memcpy(&v, b + i * sizeof v, sizeof v);
      pp__tally_put(&lb[i], v);
    }
  }
}

/* The set at addr of the process, rebuilt here: NULL when it is not this
 * session's, is in the committed checkpoint, or cannot be read (counted
 * in res->unreadable); -1 in *oom when out of memory. */
static pp__tallies *rebuild_set(const arena_map *a, uint64_t addr,
                                pp__sites *sites, pp_salvage_result *res,
                                int *oom) {
  const void *p = translate_in(a, addr, sizeof(pp__tallies), PP__SEG_TALLY);
  if (!p) {
    res->unreadable++;
    return NULL;
  }
  pp__tallies rs;
  memcpy(&rs, p, sizeof rs);
  uint64_t taken = rs.taken_pass;
  if (rs.token != a->h->token || !rs.gen || (taken && taken <= a->h->commit_pass))
    return NULL; /* another session's, being reset, or checkpointed */
  pp__tallies *g = pp__tallies_new(1, 0);
  if (!g) {
    *oom = 1;
    return NULL;
  }
  _Atomic uint64_t *const dst[] = {
      &g->events,    &g->busy_ticks, &g->first_tick, &g->last_tick,
      &g->open,      &g->lost_ends,  &g->stray_ends, &g->too_deep,
      &g->backwards, &g->no_memory,  &g->no_tally,   &g->pend_dur,
      &g->pend_self};
  const _Atomic uint64_t *const src[] = {
      &rs.events,    &rs.busy_ticks, &rs.first_tick, &rs.last_tick,
      &rs.open,      &rs.lost_ends,  &rs.stray_ends, &rs.too_deep,
      &rs.backwards, &rs.no_memory,  &rs.no_tally,   &rs.pend_dur,
      &rs.pend_self};
  for (size_t i = 0; i < PP__ARRAY_LEN(dst); i++)
    pp__tally_put(dst[i], pp__tally_get(src[i]));
  uint64_t pend = (uint64_t)(uintptr_t)atomic_load(&rs.pend);
  uint64_t next = (uint64_t)(uintptr_t)atomic_load(&rs.head);
  for (unsigned k = 0; next && k < SET_TALLIES_MAX; k++) {
    const void *tp = translate_in(a, next, sizeof(pp__tally), PP__SEG_TALLY);
    if (!tp) {
      res->unreadable++;
      break;
    }
    pp__tally rt;
    memcpy(&rt, tp, sizeof rt);
    uint64_t here = next;
    next = (uint64_t)(uintptr_t)rt.next;
    if (!rt.loc)
      continue;
    if (name_site(sites, rt.loc, PP_KIND_ZONE, &res->unnamed_sites) != 0) {
      *oom = 1;
      break;
    }
    uint32_t had = g->n;
    pp__tally *lt = pp__tally_of_slow(g, rt.loc);
    if (!lt) {
      *oom = 1;
      break;
    }
    if (g->n == had)
      break; /* a site met twice: the list loops */
    copy_tally(a, &rt, lt, &res->unreadable);
    if (here == pend)
      atomic_store_explicit(&g->pend, lt, memory_order_relaxed);
  }
  if (*oom) {
    pp__tallies_free(g);
    return NULL;
  }
  return g;
}

/* Every thread's set that holds zones no committed checkpoint has, given
 * to its thread's part (a new part when its ring left nothing). */
static int collect_sets(const arena_map *a, pp__sites *sites,
                        pp_salvage_result *res, part_set *ps, char *msg,
                        size_t n) {
  for (uint32_t i = 0; i < a->nseg; i++) {
    const pp__tstate *t = tstate_at(a, i);
    uint64_t addr = t ? (uint64_t)(uintptr_t)atomic_load(&t->tallies) : 0;
    if (!addr)
      continue;
    int oom = 0;
    pp__tallies *g = rebuild_set(a, addr, sites, res, &oom);
    if (!g && !oom)
      continue;
    size_t k = 0;
    while (k < ps->n && ps->v[k].s.tid != t->tid)
      k++;
    if (!g || (k == ps->n && pp__grow((void **)&ps->v, &ps->cap, ps->n + 1,
                                      sizeof *ps->v) != 0)) {
      pp__tallies_free(g);
      snprintf(msg, n, "out of memory");
      return -1;
    }
    if (k == ps->n) {
      memset(&ps->v[k], 0, sizeof ps->v[k]);
      ps->v[k].s.tid = t->tid;
      memcpy(ps->v[k].name, t->name, sizeof ps->v[k].name);
      ps->v[k].name[sizeof ps->v[k].name - 1] = 0;
      ps->n++;
    }
    ps->v[k].g = g;
  }
  return 0;
}

typedef struct stats_define {
  pp__sites *sites;
  pp__sink *sink;
} stats_define;

/* A site of the arena's records into the aggregate, for its name. */
static int define_site(void *arg, const pp__arena_site_rec *r,
                       const pp_srcloc *def) {
  stats_define *d = arg;
  uint32_t id = pp__sites_find(d->sites, (const void *)(uintptr_t)r->addr);
  if (id != UINT32_MAX)
    pp__stats_sink_define(d->sink, id, def);
  return 0;
}

/* Stats mode: the STATS chunk the process could not write, from the
 * writer's last checkpoint, the sets of zones its threads counted since
 * and the rings' undrained events; then the tail. 0, or -1 with msg. */
static int emit_stats(pp__out *o, const arena_map *a, pp__sites *sites,
                      part_set *ps, const char *how, double ticks_per_ns,
                      pp_salvage_result *res, char *msg, size_t n) {
  const pp__arena_hdr *h = a->h;
  if (!h->clock_mult) {
    snprintf(msg, n, "the rings hold no clock to read their times with");
    return -1;
  }
  pp__clockmap clock = {h->clock_tick0, h->clock_ns0, h->clock_ns_per_tick,
                        h->clock_mult};
  uint64_t first = UINT64_MAX, last = 0;
  pp__sink *sink = NULL;
  int rc = -1;
  if (parts_scan(sites, ps, res, &first, &last) != 0 ||
      collect_sets(a, sites, res, ps, msg, n) != 0 ||
      !(sink = pp__stats_sink_new(o, sites))) {
    snprintf(msg, n, "out of memory");
    goto out;
  }
  stats_define d = {sites, sink};
  each_site(a, define_site, &d);
  /* the newest checkpoint the commit has reached (none: none written) */
  const pp__arena_blob_hdr *ck = newest_blob(a, PP__SEG_CKPT, h->commit_pass);
  if (ck && pp__stats_sink_restore(sink, (const unsigned char *)(ck + 1),
                                   (size_t)ck->len) != 0) {
    snprintf(msg, n, "the rings' checkpoint of pass %" PRIu64 " is damaged",
             ck->seq);
    goto out;
  }
  write_threads(o, sink, ps);
  uint64_t events = 0;
  for (size_t i = 0; i < ps->n; i++) {
    ps->v[i].s.clock = clock;
    if (ps->v[i].s.to == ps->v[i].s.from)
      continue;
    events += sink->ops->slots(sink, &ps->v[i].s);
  }
  /* a set's durations are ns already; its pending zone's are ticks */
  uint64_t mult = atomic_load(&pp__tally_mult);
  pp__tally_set_rate(h->clock_mult);
  for (size_t i = 0; i < ps->n; i++) {
    pp__tallies *g = ps->v[i].g;
    if (!g)
      continue;
    sink->ops->tallies(sink, ps->v[i].s.tid, g, PP__TALLY_FINAL, &clock);
    events += pp__tally_get(&g->events);
    uint64_t ft = pp__tally_get(&g->first_tick),
             lt = pp__tally_get(&g->last_tick);
    if (ft) {
      first = ft < first ? ft : first;
      last = lt > last ? lt : last;
    }
  }
  pp__tally_set_rate(mult);
  res->threads = ps->n;
  sink->ops->pass_end(sink, 0, 1);
  sink->ops->finish(sink, INT64_MAX);
  write_tail(o, ps, how, events, first, last, ticks_per_ns, h->commit_events,
             h->commit_drops, res);
  rc = 0;
out:
  if (sink)
    sink->ops->free(sink);
  return rc;
}

/* Close o (and its fd); -1 with msg when a write failed. */
static int finish(pp__out *o, const char *path, int ok, char *msg, size_t n) {
  int failed = pp__out_close(o) != 0;
  int err = o->err;
  pp__out_free(o);
  if (ok && failed)
    snprintf(msg, n, "write to %s failed: %s", path, strerror(err));
  return ok && !failed ? 0 : -1;
}

/* Trace mode: append the salvaged part to the trace fd, cut back to the
 * commit. fd is closed either way. */
static int append(int fd, const char *path, const arena_map *a,
                  const trace_scan *ts, const char *how, pp_salvage_result *res,
                  char *msg, size_t n) {
  const pp__arena_hdr *h = a->h;
  uint64_t off = h->commit_off, defined;
  if (!whole_at(ts, off, &defined) || h->commit_seq > UINT32_MAX) {
    snprintf(msg, n,
             "the rings' commit (offset %" PRIu64 ") is not a chunk boundary "
             "of the trace (whole up to %" PRIu64 ")",
             off, ts->whole);
    close(fd);
    return -1;
  }
  pp__sites sites = {0};
  part_set ps = {0};
  pp__out o;
  int rc = -1;
  if (load_sites(a, &sites, defined, msg, n) != 0 ||
      collect_threads(a, 0, &ps, msg, n) != 0) {
    close(fd);
  } else if (pp__out_attach(&o, fd, path, off, (uint32_t)h->commit_seq) != 0) {
    snprintf(msg, n, "cannot cut %s back to its last pass: %s", path,
             strerror(errno));
    close(fd);
  } else {
    int ok = (h->mode == PP_MODE_STATS
                  ? emit_stats(&o, a, &sites, &ps, how, ts->ticks_per_ns, res,
                               msg, n)
                  : emit(&o, &sites, &ps, how, ts->ticks_per_ns,
                         h->commit_events, h->commit_drops, res, msg, n)) == 0;
    rc = finish(&o, path, ok, msg, n);
  }
  pp__sites_free(&sites);
  parts_free(&ps);
  return rc;
}

static void scan_meta_chunks(trace_scan *ts, const unsigned char *p,
                             uint64_t len);

/* Flight mode: the dump the process could not write, made from its rings:
 * the head the writer kept (META, the clock's origin), then the newest
 * events of every ring. path is written anew, as a dump would be. */
static int write_flight(const char *path, const arena_map *a, const char *how,
                        pp_salvage_result *res, char *msg, size_t n) {
  const pp__arena_blob_hdr *blob =
      newest_blob(a, PP__SEG_BLOB, UINT32_MAX - 1);
  if (!blob) {
    snprintf(msg, n, "the rings hold no head for the dump (META)");
    return -1;
  }
  pp__sites sites = {0};
  part_set ps = {0};
  int rc = -1;
  if (load_sites(a, &sites, 0, msg, n) != 0 ||
      collect_threads(a, 1, &ps, msg, n) != 0)
    goto out;
  int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
    snprintf(msg, n, "another pipeprof is salvaging %s", path);
    close(fd);
    goto out;
  }
  unsigned char fh[PPT_FILE_HEADER_SIZE];
  ppt_file_header(fh, a->h->pid);
  if (fd < 0 || ftruncate(fd, 0) != 0 ||
      write(fd, fh, sizeof fh) != (ssize_t)sizeof fh ||
      write(fd, blob + 1, (size_t)blob->len) != (ssize_t)blob->len) {
    snprintf(msg, n, "cannot write %s: %s", path, strerror(errno));
    if (fd >= 0)
      close(fd);
    goto out;
  }
  pp__out o;
  if (pp__out_attach(&o, fd, path, PPT_FILE_HEADER_SIZE + blob->len,
                     (uint32_t)blob->seq) != 0) {
    snprintf(msg, n, "cannot write %s: %s", path, strerror(errno));
    close(fd);
    goto out;
  }
  /* the rate the head says, for the span */
  trace_scan head;
  memset(&head, 0, sizeof head);
  scan_meta_chunks(&head, (const unsigned char *)(blob + 1), blob->len);
  int ok =
      emit(&o, &sites, &ps, how, head.ticks_per_ns, 0, 0, res, msg, n) == 0;
  rc = finish(&o, path, ok, msg, n);
out:
  pp__sites_free(&sites);
  parts_free(&ps);
  return rc;
}

/* The META chunks among whole chunks in memory (a flight head). */
static void scan_meta_chunks(trace_scan *ts, const unsigned char *p,
                             uint64_t len) {
  uint64_t off = 0;
  while (off + PPT_CHUNK_HEADER_SIZE <= len) {
    uint16_t type = ppt_get_u16(p + off + 4);
    uint32_t plen = ppt_get_u32(p + off + 8);
    if (plen > len - off - PPT_CHUNK_HEADER_SIZE)
      break;
    if (type == PPT_CHUNK_META)
      scan_meta(ts, p + off + PPT_CHUNK_HEADER_SIZE, plen);
    off += PPT_CHUNK_HEADER_SIZE + plen;
  }
}

/* A flight-mode arena of a dead process that names the trace at path
 * (its dump target: the file itself does not name its rings), in arena. */
static int find_flight_arena(const char *path, char *arena, size_t n) {
  char abs[PATH_MAX];
  if (!realpath(path, abs))
    return 0;
  const char *env = getenv("PIPEPROF_RINGS_DIR");
  char here[PATH_MAX];
  snprintf(here, sizeof here, "%s", abs);
  char *slash = strrchr(here, '/');
  if (slash)
    *slash = 0;
  const char *dirs[3] = {env && *env && strcmp(env, "off") ? env : NULL,
                         "/dev/shm", slash ? here : NULL};
  for (int d = 0; d < 3; d++) {
    if (!dirs[d])
      continue;
    DIR *dir = opendir(dirs[d]);
    if (!dir)
      continue;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(dir)) != NULL) {
      size_t len = strlen(e->d_name);
      if (strncmp(e->d_name, "pipeprof-", 9) != 0 || len < 6 ||
          strcmp(e->d_name + len - 6, ".rings") != 0)
        continue;
      snprintf(arena, n, "%s/%s", dirs[d], e->d_name);
      int fd = open(arena, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        continue;
      pp__arena_hdr h;
      struct stat st;
      found = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
              st.st_uid == geteuid() && read_at(fd, &h, sizeof h, 0) == 0 &&
              !memcmp(h.magic, PP__ARENA_MAGIC, 8) &&
              h.version == PP__ARENA_VERSION && h.state == PP__ARENA_ACTIVE &&
              h.mode == 2 /* flight */ &&
              !strncmp(h.trace_path, abs, sizeof h.trace_path) &&
              !pp__arena_owner_alive(&h);
      close(fd);
    }
    closedir(dir);
    if (found)
      return 1;
  }
  return 0;
}

static int salvage_flight(const char *arena, const char *path, const char *how,
                          pp_salvage_result *res, char *msg, size_t n) {
  snprintf(res->arena, sizeof res->arena, "%s", arena);
  arena_map a;
  if (arena_open(arena, &a, msg, n) != 0)
    return PP_SALVAGE_ERROR;
  int rc = PP_SALVAGE_ERROR;
  if (write_flight(path, &a, how, res, msg, n) == 0) {
    unlink(arena);
    snprintf(msg, n,
             "salvaged the flight recorder of process %" PRIu32 ": %" PRIu64
             " events of %" PRIu64 " thread%s (its last %.1f "
             "ms) into %s",
             a.h->pid, res->events, res->threads, res->threads == 1 ? "" : "s",
             res->span_ms, path);
    rc = PP_SALVAGE_DONE;
  }
  arena_close(&a);
  return rc;
}

/* The trace, read-only until now, for appending: the same file (not one
 * put in its place since), locked; -1 with msg, or -2 when another
 * salvager holds it; fd is closed either way. */
static int reopen_rw(int fd, const char *path, char *msg, size_t n) {
  struct stat a, b;
  int w = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  int same = w >= 0 && fstat(fd, &a) == 0 && fstat(w, &b) == 0 &&
             a.st_dev == b.st_dev && a.st_ino == b.st_ino;
  if (w < 0)
    snprintf(msg, n, "cannot write %s: %s", path, strerror(errno));
  else if (!same)
    snprintf(msg, n, "%s was replaced while it was salvaged", path);
  close(fd);
  if (w >= 0 && !same) {
    close(w);
    w = -1;
  }
  /* one salvager at a time: two appending would interleave */
  if (w >= 0 && flock(w, LOCK_EX | LOCK_NB) != 0) {
    snprintf(msg, n, "another pipeprof is salvaging %s", path);
    close(w);
    w = -2;
  }
  return w;
}

/* Under the lock: scan the trace again (another salvager may have
 * finished it since the first scan). 1 when it is still unfinished (ts
 * is the new scan), else 0 with msg. */
static int rescan_unfinished(int fd, trace_scan *ts, const char *path,
                             char *msg, size_t n) {
  trace_scan again;
  memset(&again, 0, sizeof again);
  char why[256];
  int ok = scan_trace(fd, &again, why, sizeof why) == 0 && !again.finished &&
           !strcmp(again.rings, ts->rings);
  if (ok) {
    free(ts->ends);
    *ts = again;
  } else {
    snprintf(msg, n, "%s was finished by another pipeprof meanwhile", path);
    free(again.ends);
  }
  return ok;
}

static int salvage_with(int fd, const char *path, trace_scan *ts,
                        const char *how, pp_salvage_result *res, char *msg,
                        size_t n) {
  if (ts->finished) {
    close(fd);
    snprintf(msg, n, "%s is finished: nothing to salvage", path);
    return PP_SALVAGE_NOTHING;
  }
  if (!ts->rings[0]) {
    close(fd);
    if (ts->off_why[0])
      snprintf(msg, n, "%s is unfinished, and its rings were not durable: %s",
               path, ts->off_why);
    else
      snprintf(msg, n, "%s is unfinished and names no durable rings", path);
    return PP_SALVAGE_NOTHING;
  }
  snprintf(res->arena, sizeof res->arena, "%s", ts->rings);
  arena_map a;
  int open_rc = arena_open(ts->rings, &a, msg, n);
  if (open_rc != 0) {
    close(fd);
    if (open_rc == -2)
      snprintf(msg, n,
               "%s is unfinished and its rings %s are gone (salvaged "
               "already, or removed)",
               path, ts->rings);
    return open_rc == -2 ? PP_SALVAGE_NOTHING : PP_SALVAGE_ERROR;
  }
  const pp__arena_hdr *h = a.h;
  char tok[32];
  snprintf(tok, sizeof tok, "%016" PRIx64, h->token);
  int rc = PP_SALVAGE_ERROR;
  if (strcmp(tok, ts->token) != 0 || h->state != PP__ARENA_ACTIVE) {
    snprintf(msg, n, "the rings %s belong to another session than %s",
             ts->rings, path);
  } else if (pp__arena_owner_alive(h)) {
    snprintf(msg, n, "process %" PRIu32 " still records into %s", h->pid, path);
    rc = PP_SALVAGE_NOTHING;
  } else if ((fd = reopen_rw(fd, path, msg, n)) < 0) {
    if (fd == -2)
      rc = PP_SALVAGE_NOTHING;
  } else if (!rescan_unfinished(fd, ts, path, msg, n)) {
    rc = PP_SALVAGE_NOTHING; /* another salvager finished it meanwhile */
  } else if (append(fd, path, &a, ts, how, res, msg, n) == 0) {
    fd = -1;
    unlink(ts->rings);
    snprintf(msg, n,
             "salvaged %" PRIu64 " events of %" PRIu64
             " thread%s (the last %.1f ms before process %" PRIu32
             " died) into %s",
             res->events, res->threads, res->threads == 1 ? "" : "s",
             res->span_ms, h->pid, path);
    rc = PP_SALVAGE_DONE;
  } else {
    fd = -1; /* append closed it */
  }
  if (fd >= 0)
    close(fd);
  arena_close(&a);
  return rc;
}

int pp_salvage(const char *path, const char *how, pp_salvage_result *res,
               char *msg, size_t n) {
  memset(res, 0, sizeof *res);
  /* only a regular file: opening a FIFO would block, and reading it would
   * take what its reader is meant to get */
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
    snprintf(msg, n, "%s is not a regular file", path);
    return PP_SALVAGE_NOT_TRACE;
  }
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    snprintf(msg, n, "cannot open %s: %s", path, strerror(errno));
    return PP_SALVAGE_NOT_TRACE;
  }
  trace_scan ts;
  memset(&ts, 0, sizeof ts);
  char why[256];
  int rc;
  int scanned = scan_trace(fd, &ts, why, sizeof why) == 0;
  char arena[PATH_MAX];
  /* only a flight target: empty (made at the session's start) or a
   * trace (an earlier dump) */
  if (((!scanned && ts.size == 0) || (scanned && !ts.rings[0])) &&
      find_flight_arena(path, arena, sizeof arena)) {
    close(fd); /* a flight recorder's dump target: written anew */
    rc = salvage_flight(arena, path, how, res, msg, n);
  } else if (!scanned) {
    snprintf(msg, n, "%s: %s", path, why);
    close(fd);
    rc = PP_SALVAGE_NOT_TRACE;
  } else {
    rc = salvage_with(fd, path, &ts, how, res, msg, n);
  }
  free(ts.ends);
  return rc;
}

int pp_salvage_arena(const char *arena, const char *how, pp_salvage_result *res,
                     char *msg, size_t n) {
  memset(res, 0, sizeof *res);
  arena_map a;
  if (arena_open(arena, &a, msg, n) != 0)
    return PP_SALVAGE_ERROR;
  char trace[PP__ARENA_PATH_MAX];
  memcpy(trace, a.h->trace_path, sizeof trace);
  trace[sizeof trace - 1] = 0;
  int idle = a.h->state != PP__ARENA_ACTIVE;
  int alive = pp__arena_owner_alive(a.h);
  uint32_t pid = a.h->pid;
  arena_close(&a);
  if (idle && alive) {
    snprintf(msg, n, "%s: process %" PRIu32 " runs, with no session", arena,
             pid);
    return PP_SALVAGE_NOTHING;
  }
  if (idle) { /* its last session was finished: a leftover */
    unlink(arena);
    snprintf(msg, n,
             "%s held nothing to salvage (process %" PRIu32
             " had finished its trace): removed",
             arena, pid);
    return PP_SALVAGE_NOTHING;
  }
  return pp_salvage(trace, how, res, msg, n);
}
