/* SPDX-License-Identifier: MIT */
/*
 * Zone pairing: the one place where a thread's zone begins and ends become
 * zones. The stats sink and the live engine in the recording library and
 * the reader's analysis all pair through it, so a zone is counted, timed
 * and excused the same way whichever road its events took
 * (docs/internals/pairing.md has the policy and why).
 *
 * One pp_zone_stack per thread; the caller feeds it that thread's zone
 * events in the order the thread recorded them and gets every zone back
 * through a callback when it closes. The policy:
 *
 *   clock        a timestamp earlier than the thread's previous one is
 *                taken at the previous one (the thread's time never runs
 *                backwards); counted in `backwards`.
 *   nesting      at most PP_PAIR_MAX_DEPTH open zones; a begin beyond that
 *                is not paired, and the next end is taken as its end
 *                (recursion unwinds in order); counted in `too_deep`.
 *   lost end     an end whose site is open deeper in the stack closes the
 *                zones above it at its time, each flagged lost_end; zones
 *                still open when the stream finishes are closed at the
 *                finish time, flagged the same; counted in `lost_ends`.
 *   stray end    an end whose site is not open is ignored; counted in
 *                `stray_ends`.
 *   statistics   a zone with a lost end has no measured duration: it is
 *                delivered (timelines show it, flagged) but sinks leave it
 *                out of counts and histograms (pp__zone_counts()). Its
 *                measured children still count: their time passes up to
 *                its parent (`covered`), so the self times of counted
 *                zones add up to the thread's busy time.
 *   drops        the recorder drops a zone's begin with its end (the end
 *                is skipped too), so a drop never unbalances a stack; a
 *                dropped end, which the recorder's reserve makes rare,
 *                shows up as a lost end above.
 *
 * Not thread-safe: a stack belongs to whoever feeds its thread's events.
 * Memory: nothing until the first begin; then the open entries (32 bytes
 * each), grown by doubling up to PP_PAIR_MAX_DEPTH. pp__zstack_trim(),
 * when the thread has nothing open, frees a stack that grew past
 * PP_PAIR_KEEP entries (a thread that went deep once does not keep 8 KiB)
 * and keeps a small one (a thread that opens and closes zones in a loop
 * does not allocate every time).
 */
#ifndef PP_PAIR_ZONES_H
#define PP_PAIR_ZONES_H

#include <stddef.h>
#include <stdint.h>

#define PP_PAIR_MAX_DEPTH 256u
#define PP_PAIR_KEEP 8u /* entries a stack keeps when trimmed */

/* Anomalies seen while pairing, summed over the stacks that share them. */
typedef struct pp_pair_counts {
  uint64_t zones;      /* zones closed by their own end */
  uint64_t lost_ends;  /* zones closed without their end */
  uint64_t stray_ends; /* ends whose site was not open */
  uint64_t too_deep;   /* begins beyond PP_PAIR_MAX_DEPTH */
  uint64_t backwards;  /* timestamps earlier than the previous one */
  uint64_t no_memory;  /* begins not paired for lack of memory */
} pp_pair_counts;

/* A zone as it closes. */
typedef struct pp_zone_closed {
  uint64_t site;   /* as given to pp__zstack_begin */
  uint64_t cookie; /* as given to pp__zstack_begin */
  int64_t start, end;
  int64_t dur;     /* end - start, saturated */
  int64_t self;    /* dur less its children's covered time */
  int64_t covered; /* what it adds to its parent's child time, or to the
                      thread's busy time when outermost: dur, or with a
                      lost end only its children's covered time */
  uint32_t depth;  /* 0: outermost */
  int lost_end;    /* closed without its end: not a measured duration */
} pp_zone_closed;

typedef void (*pp_zone_closed_fn)(void *ctx, const pp_zone_closed *z);

typedef struct pp_zone_open {
  uint64_t site, cookie;
  int64_t start;
  int64_t child; /* summed durations of counted direct children */
} pp_zone_open;

typedef struct pp_zone_stack {
  pp_zone_open *v;
  uint32_t n, cap;
  uint32_t deep;   /* begins beyond the cap still waiting for their end */
  int have_last;
  int64_t last;    /* the thread's latest timestamp */
} pp_zone_stack;

void pp__zstack_init(pp_zone_stack *s);
void pp__zstack_free(pp_zone_stack *s);
void pp__zstack_trim_slow(pp_zone_stack *s);
/* Give back the entries' memory when nothing is open (see Memory above). */
static inline void pp__zstack_trim(pp_zone_stack *s) {
  if (s->cap > PP_PAIR_KEEP && !s->n && !s->deep)
    pp__zstack_trim_slow(s);
}

/* The thread's clock, made monotonic: ts, or the previous time when ts is
 * earlier (counted). Every begin and end goes through it; callers that
 * see other events of the thread may pass them too. */
int64_t pp__zstack_time(pp_zone_stack *s, int64_t ts, pp_pair_counts *c);

/* A begin of site at ts. cookie comes back with the zone. Returns 0, or 1
 * when the begin is not paired (too deep, or no memory: counted). */
int pp__zstack_begin(pp_zone_stack *s, uint64_t site, int64_t ts,
                     uint64_t cookie, pp_pair_counts *c);
/* An end of site at ts: fn gets every zone it closes, innermost first. */
void pp__zstack_end(pp_zone_stack *s, uint64_t site, int64_t ts,
                    pp_pair_counts *c, pp_zone_closed_fn fn, void *ctx);
/* The stream ends at end_ns (later of it and the thread's last time): fn
 * gets every zone still open, innermost first, flagged lost_end. */
void pp__zstack_finish(pp_zone_stack *s, int64_t end_ns, pp_pair_counts *c,
                       pp_zone_closed_fn fn, void *ctx);

/* Fast paths for the common case, inline for the writer's per-event loop
 * (the general functions above were a tenth of its time): the same rules,
 * for a begin with room and no clock step back, and for an end that
 * closes the top zone. They return 0 when they did the work (the end's
 * zone in *z, for the caller to take as pp__zstack_end's fn would), and
 * -1 when the caller must call the general function instead. */
static inline int pp__zstack_begin_fast(pp_zone_stack *s, uint64_t site,
                                        int64_t ts, uint64_t cookie) {
  if (s->deep || s->n >= s->cap || (s->have_last && ts < s->last))
    return -1;
  s->last = ts;
  s->have_last = 1;
  pp_zone_open *o = &s->v[s->n++];
  o->site = site;
  o->cookie = cookie;
  o->start = ts;
  o->child = 0;
  return 0;
}

static inline int pp__zstack_end_fast(pp_zone_stack *s, uint64_t site,
                                      int64_t ts, pp_pair_counts *c,
                                      pp_zone_closed *z) {
  if (s->deep || !s->n || s->v[s->n - 1].site != site ||
      (s->have_last && ts < s->last))
    return -1;
  s->last = ts;
  const pp_zone_open *o = &s->v[--s->n];
  z->site = site;
  z->cookie = o->cookie;
  z->start = o->start;
  z->end = ts; /* >= start: the thread's time never runs backwards */
  if (__builtin_sub_overflow(ts, o->start, &z->dur))
    z->dur = INT64_MAX;
  z->self = z->dur - o->child;
  if (z->self < 0)
    z->self = 0;
  z->depth = s->n;
  z->lost_end = 0;
  z->covered = z->dur;
  c->zones++;
  if (s->n) {
    int64_t *ch = &s->v[s->n - 1].child;
    if (__builtin_add_overflow(*ch, z->dur, ch))
      *ch = INT64_MAX;
  }
  return 0;
}

/* Whether a closed zone belongs in counts and latency statistics. */
static inline int pp__zone_counts(const pp_zone_closed *z) {
  return !z->lost_end;
}

#endif /* PP_PAIR_ZONES_H */
