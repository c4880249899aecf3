/* SPDX-License-Identifier: MIT */
/*
 * The one table of event types of an EVENTS chunk and the codec both ends
 * expand from it: the writer's trace sink (sink/trace.c),
 * its anomaly/alert and GPU zone writers, and the reader's decode_events
 * (model/reader.c). docs/formats/pptrace.md is the spec;
 * docs/internals/format.md says how to add a type.
 *
 * An event is its type (one byte), the time since the previous event of
 * the chunk (zigzag varint, ticks) and the fields of its layout. Each
 * layout is a field list in codec.h's notation; the comment beside each
 * field says where the reader puts it in memory.
 */
#ifndef PP_FORMAT_EVENTS_H
#define PP_FORMAT_EVENTS_H

#include "codec.h"

/* One event, as the writer hands it to ppt_ev_put and the decoder returns
 * it. Members a layout does not name are neither written nor read. */
typedef struct ppt_ev {
  unsigned type;   /* enum ppt_event_type */
  int64_t delta;   /* ticks since the chunk's previous event (or its base) */
  uint64_t loc;    /* site id (every layout but NOTE) */
  uint64_t value;  /* the 64 bits of pp_event.v: .id (UV), .i (SV), .f (X64) */
  uint64_t extra;  /* pp_event.v2; MEM: bytes; GPU: stream */
  uint64_t device; /* MEM, GPU */
  int64_t launch;  /* GPU: launch - start, ticks */
  uint64_t dur;    /* GPU: duration, ns */
  ppt_str what, which, message;               /* NOTE */
  double nvalue, baseline, spread, threshold; /* NOTE */
} ppt_ev;

/* ---- layouts: the fields after (type, delta), in file order ----
 *                                            pp_event / record in memory */
/* zone begin/end, marks, frames: the site only */
#define PPT_LAYOUT_SITE(F) F(UV, loc, UINT32_MAX) /* .loc */
/* integer counters: the value, zigzag */
#define PPT_LAYOUT_SITE_SV(F)                                                  \
  F(UV, loc, UINT32_MAX) /* .loc */                                            \
  F(SV, value, )         /* .v.i */
/* float counters: a double's bits */
#define PPT_LAYOUT_SITE_F64(F)                                                 \
  F(UV, loc, UINT32_MAX) /* .loc */                                            \
  F(X64, value, )        /* .v.f */
/* flows and ranges: an id; ZONE (since 1.5): its duration in ticks, read
 * as a ZONE_BEGIN and a ZONE_END that much later */
#define PPT_LAYOUT_SITE_UV(F)                                                  \
  F(UV, loc, UINT32_MAX) /* .loc */                                            \
  F(UV, value, PPT_ANY)  /* .v.id */
/* ZONES (since 1.5): how many zones; the event goes on with their
 * durations and gaps (ppt_zones_*, below), which the table cannot say */
#define PPT_ZONES_MAX 65535u
#define PPT_LAYOUT_ZONES(F)                                                    \
  F(UV, loc, UINT32_MAX)          /* .loc */                                   \
  F(UV, value, PPT_ZONES_MAX)     /* zones, at least 1 */
/* requests, batches, queues (since 1.1/1.2): an id and an extra number */
#define PPT_LAYOUT_SITE_UV2(F)                                                 \
  F(UV, loc, UINT32_MAX) /* .loc */                                            \
  F(UV, value, PPT_ANY)  /* .v.id */                                           \
  F(UV, extra, PPT_ANY)  /* .v2 */
/* device memory pools (since 1.2): pointer, bytes, device */
#define PPT_LAYOUT_MEM(F)                                                      \
  F(UV, loc, UINT32_MAX)          /* .loc */                                   \
  F(UV, value, PPT_ANY)           /* .v.id */                                  \
  F(UV, extra, PPT_MEM_MAX_BYTES) /* .v2 bits 0-47 */                          \
  F(UV, device, 255)              /* .v2 bits 56-63 */
/* GPU zones (since 1.2): pp_gpu_zone_rec, not a pp_event */
#define PPT_LAYOUT_GPU(F)                                                      \
  F(UV, loc, UINT32_MAX)    /* .loc */                                         \
  F(UV, device, UINT32_MAX) /* .device */                                      \
  F(UV, extra, PPT_ANY)     /* .stream */                                      \
  F(SV, launch, )           /* .launch = start + it */                         \
  F(UV, dur, INT64_MAX)     /* .end = start + it */
/* anomalies and alerts (since 1.2): pp_note, no site */
#define PPT_LAYOUT_NOTE(F)                                                     \
  F(STR, what, )      /* .what */                                              \
  F(STR, which, )     /* .which */                                             \
  F(STR, message, )   /* .message */                                           \
  F(F64, nvalue, )    /* .value */                                             \
  F(F64, baseline, )  /* .baseline */                                          \
  F(F64, spread, )    /* .spread */                                            \
  F(F64, threshold, ) /* .threshold */

/* ---- the table: X(name, type byte, since minor version, layout) ----
 * enum ppt_event_type (pptrace.h) gives each its number; the ring's
 * predicates there (ppt_has_value, ppt_has_extra, ppt_is_mem, ppt_is_note)
 * are checked against this table by tests/test-format.c. */
#define PPT_EVENT_TABLE(X)                                                     \
  X(ZONE_BEGIN, 1, 0, SITE)                                                    \
  X(ZONE_END, 2, 0, SITE)                                                      \
  X(COUNTER_SET, 3, 0, SITE_SV)                                                \
  X(COUNTER_ADD, 4, 0, SITE_SV)                                                \
  X(COUNTER_SETF, 5, 0, SITE_F64)                                              \
  X(MARK, 6, 0, SITE)                                                          \
  X(FRAME, 7, 0, SITE)                                                         \
  X(FLOW_BEGIN, 8, 0, SITE_UV)                                                 \
  X(FLOW_STEP, 9, 0, SITE_UV)                                                  \
  X(FLOW_END, 10, 0, SITE_UV)                                                  \
  X(RANGE_BEGIN, 11, 0, SITE_UV)                                               \
  X(RANGE_END, 12, 0, SITE_UV)                                                 \
  X(REQ_BEGIN, 13, 1, SITE_UV2)                                                \
  X(REQ_FIRST, 14, 1, SITE_UV2)                                                \
  X(REQ_TOKENS, 15, 1, SITE_UV2)                                               \
  X(REQ_END, 16, 1, SITE_UV2)                                                  \
  X(BATCH, 17, 1, SITE_UV2)                                                    \
  X(QUEUE_PUSH, 18, 2, SITE_UV2)                                               \
  X(QUEUE_POP, 19, 2, SITE_UV2)                                                \
  X(QUEUE_WAIT_BEGIN, 20, 2, SITE_UV2)                                         \
  X(QUEUE_WAIT_END, 21, 2, SITE_UV2)                                           \
  X(ANOMALY, 22, 2, NOTE)                                                      \
  X(ALERT, 23, 2, NOTE)                                                        \
  X(GPU_ZONE, 24, 2, GPU)                                                      \
  X(MEM_ALLOC, 25, 2, MEM)                                                     \
  X(MEM_FREE, 26, 2, MEM)                                                      \
  X(MEM_RESERVE, 27, 2, MEM)                                                   \
  X(ZONE, 28, 5, SITE_UV)                                                      \
  X(ZONES, 29, 5, ZONES)

enum ppt_layout {
  PPT_L_NONE = 0, /* not a type this version defines */
  PPT_L_SITE,
  PPT_L_SITE_SV,
  PPT_L_SITE_F64,
  PPT_L_SITE_UV,
  PPT_L_SITE_UV2,
  PPT_L_MEM,
  PPT_L_GPU,
  PPT_L_NOTE,
  PPT_L_ZONES
};

/* Per type byte: layout, name, minor version that introduced it. */
typedef struct ppt_event_info {
  unsigned char layout; /* enum ppt_layout */
  unsigned char since_minor;
  const char *name;
} ppt_event_info;
extern const ppt_event_info ppt_event_infos[256];

static inline unsigned ppt_ev_layout(unsigned type) {
  switch (type) {
#define PPT__LAYOUT_CASE(name, code, since, layout)                            \
  case code:                                                                   \
    return PPT_L_##layout;
    PPT_EVENT_TABLE(PPT__LAYOUT_CASE)
#undef PPT__LAYOUT_CASE
  default:
    return PPT_L_NONE;
  }
}

/* 1 when type has layout: with a constant layout, a test the compiler
 * folds into one bit test of the type. */
__attribute__((always_inline)) static inline int ppt_ev_is(unsigned type,
                                                           unsigned layout) {
#define PPT__IS(name, code, since, lay)                                        \
  || (type == code && layout == PPT_L_##lay)
  return 0 PPT_EVENT_TABLE(PPT__IS);
#undef PPT__IS
}

/* Bytes an event without strings takes at most: type, delta, and the
 * widest layout (GPU: five varints). */
#define PPT_EV_MAX_FIXED (1u + 10u + 5u * 10u)

/* Bytes event e takes at most (any layout; a type with none is written
 * with a site, as ppt_ev_put_fixed does). */
static inline size_t ppt_ev_bound(const ppt_ev *r) {
  size_t n = 1 + 10;
  switch (ppt_ev_layout(r->type)) {
#define PPT__BOUND_CASE(layout)                                                \
  case PPT_L_##layout:                                                         \
    PPT_LAYOUT_##layout(PPT__BOUND) break;
    PPT__BOUND_CASE(SITE)
    PPT__BOUND_CASE(SITE_SV)
    PPT__BOUND_CASE(SITE_F64)
    PPT__BOUND_CASE(SITE_UV)
    PPT__BOUND_CASE(SITE_UV2)
    PPT__BOUND_CASE(MEM)
    PPT__BOUND_CASE(GPU)
    PPT__BOUND_CASE(NOTE)
    PPT__BOUND_CASE(ZONES)
#undef PPT__BOUND_CASE
  default:
    n += 10;
    break;
  }
  return n;
}

/* Encode event r, of any layout but NOTE, at p, which has room for
 * PPT_EV_MAX_FIXED bytes; returns the bytes written. A type with no
 * layout (or NOTE) is written as its type, delta and site, which a reader
 * refuses: callers pass the ring's types. Inline and without the string
 * fields: the writer calls it once per event. */
__attribute__((always_inline)) static inline size_t
ppt_ev_put_fixed(unsigned char *p, const ppt_ev *r) {
  unsigned char *q = p;
  unsigned t = r->type;
  *q++ = (unsigned char)t;
  q += ppt_put_uv(q, ppt_zigzag(r->delta));
  /* Every layout here starts with the site (as ppt_ev_site reads it);
   * then a chain of ppt_ev_is tests, the commonest layout first: each
   * folds to one bit test of the type, where a switch cost the writer a
   * table load and an indirect jump per event. */
  q += ppt_put_uv(q, r->loc);
#define PPT__ENC_REST(coding, member, max)                                     \
  if (offsetof(ppt_ev, member) != offsetof(ppt_ev, loc)) {                     \
    PPT__ENC(coding, member, max)                                              \
  }
#define PPT__ENC_IF(layout)                                                    \
  if (ppt_ev_is(t, PPT_L_##layout)) {                                          \
    PPT_LAYOUT_##layout(PPT__ENC_REST)                                         \
  } else
  PPT__ENC_IF(SITE)
  PPT__ENC_IF(SITE_SV)
  PPT__ENC_IF(SITE_F64)
  PPT__ENC_IF(MEM)
  PPT__ENC_IF(SITE_UV2)
  PPT__ENC_IF(SITE_UV)
  PPT__ENC_IF(ZONES)
  PPT__ENC_IF(GPU) {}
#undef PPT__ENC_IF
#undef PPT__ENC_REST
  return (size_t)(q - p);
}

/* Encode an event of layout SITE (zone begin and end, marks, frames) at
 * p, which has room for PPT_EV_MAX_FIXED bytes; returns the bytes written.
 * The writer's fast path: the same bytes as ppt_ev_put_fixed, without the
 * event struct or the layout tests (tests/test-format.c compares them). */
__attribute__((always_inline)) static inline size_t
ppt_ev_put_site(unsigned char *p, unsigned type, int64_t delta,
                uint64_t loc) {
  struct {
    uint64_t loc;
  } site = {loc}, *r = &site;
  unsigned char *q = p;
  *q++ = (unsigned char)type;
  q += ppt_put_uv(q, ppt_zigzag(delta));
  PPT_LAYOUT_SITE(PPT__ENC)
  return (size_t)(q - p);
}

/* The same for layout SITE_UV: the writer's fast path for ZONE (a zone
 * begin and its end, value the duration in ticks). */
__attribute__((always_inline)) static inline size_t
ppt_ev_put_site_uv(unsigned char *p, unsigned type, int64_t delta,
                   uint64_t loc, uint64_t value) {
  struct {
    uint64_t loc, value;
  } site = {loc, value}, *r = &site;
  unsigned char *q = p;
  *q++ = (unsigned char)type;
  q += ppt_put_uv(q, ppt_zigzag(delta));
  PPT_LAYOUT_SITE_UV(PPT__ENC)
  return (size_t)(q - p);
}

/* A ZONE event (layout SITE_UV) as ppt_ev_put_site_uv writes it, with
 * the commonest case, every field one byte, as one 32-bit store. */
__attribute__((always_inline)) static inline size_t
ppt_ev_put_zone(unsigned char *p, int64_t delta, uint64_t loc, uint64_t dur) {
  uint64_t z = ppt_zigzag(delta);
  if (__builtin_expect((z | loc | dur) < 0x80, 1)) {
    ppt_put_u32(p, PPT_EV_ZONE | (uint32_t)z << 8 | (uint32_t)loc << 16 |
                       (uint32_t)dur << 24);
    return 4;
  }
  return ppt_ev_put_site_uv(p, PPT_EV_ZONE, delta, loc, dur);
}

/* ---- ZONES (since 1.5): after the table's fields (site, count n), the
 * zones one by one as uv ticks: the first one's duration, then for each
 * next one the gap since the one before ended and its duration. The
 * event's delta leads to the first zone's begin; the next event's delta
 * counts from the last one's end. ---- */

/* The most zones the writer puts in one ZONES: n then takes one byte. */
#define PPT_ZONES_RUN 127u

/* Append a zone of a ZONES event at p (room for 20 bytes): its gap (not
 * for the first zone: first != 0) and duration. Returns the bytes. */
static inline size_t ppt_zones_put(unsigned char *p, int first, uint64_t gap,
                                   uint64_t dur) {
  if (first)
    return ppt_put_uv(p, dur);
  if (__builtin_expect((gap | dur) < 0x80, 1)) { /* the commonest */
    p[0] = (unsigned char)gap;
    p[1] = (unsigned char)dur;
    return 2;
  }
  size_t k = ppt_put_uv(p, gap);
  return k + ppt_put_uv(p + k, dur);
}

/* Encode event r of any layout at p, which has room for ppt_ev_bound(r)
 * bytes; returns the bytes written. */
static inline size_t ppt_ev_put(unsigned char *p, const ppt_ev *r) {
  if (ppt_ev_layout(r->type) != PPT_L_NOTE)
    return ppt_ev_put_fixed(p, r);
  unsigned char *q = p;
  *q++ = (unsigned char)r->type;
  q += ppt_put_uv(q, ppt_zigzag(r->delta));
  PPT_LAYOUT_NOTE(PPT__ENC)
  return (size_t)(q - p);
}

/* Append event r to b (grows it; on failure b->oom is set). */
void ppt_buf_ev(ppt_buf *b, const ppt_ev *r);

/* ---- decoding, in the three steps the reader takes ----
 * ppt_ev_head: the type byte and the delta. ppt_ev_site: the site id, for
 * the layouts that start with one. ppt_ev_body: the rest of the layout.
 * Each returns 0, or -1 when the cursor ran out, a field is out of its
 * range or the type is unknown (c->err is then set). ppt_ev_get does all
 * three. Strings point into the cursor's buffer. */
static inline int ppt_ev_head(ppt_cursor *c, ppt_ev *r) {
  /* The numbers only: the reader decodes every event through here, and
   * the strings and doubles of NOTE are set by its body. */
  r->loc = r->value = r->extra = r->device = r->dur = 0;
  r->launch = 0;
  if (c->p >= c->end) {
    c->err = 1;
    return -1;
  }
  r->type = *c->p++;
  r->delta = ppt_get_sv(c);
  return c->err ? -1 : 0;
}

/* 1 for the layouts whose first field is the site (loc). */
static inline int ppt_layout_has_site(unsigned layout) {
  return layout != PPT_L_NONE && layout != PPT_L_NOTE;
}

static inline int ppt_ev_site(ppt_cursor *c, ppt_ev *r) {
  unsigned layout = ppt_ev_layout(r->type);
  if (layout == PPT_L_NONE) {
    c->err = 1;
    return -1;
  }
  if (ppt_layout_has_site(layout))
    r->loc = ppt__dec_UV(c, UINT32_MAX);
  return c->err ? -1 : 0;
}

/* A layout's fields past the site. */
#define PPT__DEC_REST(coding, member, max)                                     \
  if (offsetof(ppt_ev, member) != offsetof(ppt_ev, loc)) {                     \
    PPT__DEC(coding, member, max)                                              \
  }

static inline int ppt_ev_body(ppt_cursor *c, ppt_ev *r) {
  switch (ppt_ev_layout(r->type)) {
#define PPT__DEC_CASE(layout)                                                  \
  case PPT_L_##layout:                                                         \
    PPT_LAYOUT_##layout(PPT__DEC_REST) break;
    PPT__DEC_CASE(SITE)
    PPT__DEC_CASE(SITE_SV)
    PPT__DEC_CASE(SITE_F64)
    PPT__DEC_CASE(SITE_UV)
    PPT__DEC_CASE(SITE_UV2)
    PPT__DEC_CASE(MEM)
    PPT__DEC_CASE(GPU)
    PPT__DEC_CASE(NOTE)
    PPT__DEC_CASE(ZONES)
#undef PPT__DEC_CASE
  default:
    c->err = 1;
    break;
  }
  return c->err ? -1 : 0;
}

/* The next zone of a ZONES event whose body was read: *gap (0 for the
 * first: first != 0) and *dur. Returns 0, or -1 when the cursor ran out. */
static inline int ppt_zones_get(ppt_cursor *c, int first, uint64_t *gap,
                                uint64_t *dur) {
  *gap = first ? 0 : ppt_get_uv(c);
  *dur = ppt_get_uv(c);
  return c->err ? -1 : 0;
}

static inline int ppt_ev_get(ppt_cursor *c, ppt_ev *r) {
  if (ppt_ev_head(c, r) != 0 || ppt_ev_site(c, r) != 0)
    return -1;
  return ppt_ev_body(c, r);
}

/* The EVENTS chunk's base: the thread and the tick the first delta counts
 * from. */
#define PPT_REC_EVENTS_BASE(F) F(UV, tid, PPT_ANY) F(UV, tick, PPT_ANY)

#endif /* PP_FORMAT_EVENTS_H */
