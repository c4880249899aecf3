/* SPDX-License-Identifier: MIT */
/*
 * The native trace format (.pptrace): constants, the varint codec and the
 * chunk builder used by the writer. The layouts of every record and event
 * are tables in codec.h's notation (events.h, records.h), expanded into
 * both ends' encoders and decoders. docs/formats/pptrace.md is the spec;
 * keep the two in step (docs/internals/format.md).
 *
 * A file is a 64-byte file header followed by chunks. Each chunk has a
 * 24-byte header (magic, type, flags, payload length, payload CRC-32C,
 * sequence number, header CRC-32C) and a payload of varint-coded records.
 * Chunks are self-contained so that a reader can recover every intact chunk
 * of a cut or damaged file.
 */
#ifndef PP_PPTRACE_H
#define PP_PPTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PPT_FILE_MAGIC "PPTRACE\0"
#define PPT_FILE_HEADER_SIZE 64u
#define PPT_VERSION_MAJOR 1u
/* Minor versions: 1.1 REQ_* and BATCH; 1.2 QUEUE_*, ANOMALY, ALERT,
 * GPU_ZONE and MEM_* events, CUDA chunks (CUPTI activity); 1.3 GPU zone
 * statistics at the end of STATS; 1.4 the zone and range pairing's counts
 * at the end of STATS, and PP_KIND_METRIC sites (library metrics); 1.5
 * the ZONE and ZONES events (a begin and its end in one, and runs of
 * them). */
#define PPT_VERSION_MINOR 5u
/* Reserved:
 *   event types 30-31  (unused: CUPTI records travel in CUDA chunks)
 *   chunk type 10      GPU records that do not fit an event */
/* Most GPU zone records in a STATS chunk (since 1.3): the writer keeps at
 * most this many (site, device, stream) keys and counts the zones of
 * others; a reader refuses more. */
#define PPT_STATS_GPU_MAX 4096u
#define PPT_CHUNK_MAGIC 0x4B435050u /* "PPCK" little-endian */
#define PPT_CHUNK_HEADER_SIZE 24u
#define PPT_MAX_PAYLOAD (16u << 20)

enum ppt_chunk_type {
  PPT_CHUNK_META = 1,
  PPT_CHUNK_CLOCK = 2,
  PPT_CHUNK_SRCLOC = 3,
  PPT_CHUNK_THREAD = 4,
  PPT_CHUNK_EVENTS = 5,
  PPT_CHUNK_DROPS = 6,
  PPT_CHUNK_STATS = 7,
  PPT_CHUNK_END = 8,
  PPT_CHUNK_CUDA = 9,  /* since 1.2: CUPTI activity records */
  PPT_CHUNK_STACKS = 10 /* CPU stack samples (model/stacks.h) */
};

/* Records of a CUDA chunk: kind (one byte), body length (varint), body.
 * A reader skips kinds it does not know and fields past the ones it knows
 * (later writers only append fields). Times are CLOCK_MONOTONIC ns. Field
 * lists: docs/formats/pptrace.md. */
enum ppt_cuda_kind {
  PPT_CUDA_STRING = 1,  /* id, string (kernel and API names) */
  PPT_CUDA_KERNEL = 2,
  PPT_CUDA_MEMCPY = 3,
  PPT_CUDA_MEMSET = 4,
  PPT_CUDA_SYNC = 5,
  PPT_CUDA_API = 6,
  PPT_CUDA_DROPPED = 7  /* records CUPTI (or the collector) dropped */
};

/* Event types, shared by the in-memory ring and the EVENTS payload. Their
 * payload layouts are the table of format/events.h (PPT_EVENT_TABLE),
 * which checks these numbers at build time; the predicates below serve
 * the ring's hot path and tests/test-format.c checks them against the
 * table. */
enum ppt_event_type {
  PPT_EV_ZONE_BEGIN = 1,
  PPT_EV_ZONE_END = 2,
  PPT_EV_COUNTER_SET = 3,  /* int64 value */
  PPT_EV_COUNTER_ADD = 4,  /* int64 delta */
  PPT_EV_COUNTER_SETF = 5, /* double value */
  PPT_EV_MARK = 6,
  PPT_EV_FRAME = 7,
  PPT_EV_FLOW_BEGIN = 8, /* uint64 id */
  PPT_EV_FLOW_STEP = 9,
  PPT_EV_FLOW_END = 10,
  PPT_EV_RANGE_BEGIN = 11, /* uint64 range id; may end on another thread */
  PPT_EV_RANGE_END = 12,   /* uint64 range id */
  /* Since 1.1: requests and batches; two varints, the caller's id (BATCH:
   * the batch size) and an extra number (the ring keeps it in the low 56
   * bits of the continuation slot's `a`). */
  PPT_EV_REQ_BEGIN = 13,  /* id, 0 */
  PPT_EV_REQ_FIRST = 14,  /* id, 0: first output token */
  PPT_EV_REQ_TOKENS = 15, /* id, tokens produced now */
  PPT_EV_REQ_END = 16,    /* id, zigzag(status), 0 = ok */
  PPT_EV_BATCH = 17,      /* size, padded size */
  /* Since 1.2: queues between stages (pp_queue_*), at the queue's site
   * (kind PP_KIND_QUEUE); the extra number is zigzag(depth after the
   * call), the depth the library counts. */
  PPT_EV_QUEUE_PUSH = 18,       /* item id, zigzag(depth) */
  PPT_EV_QUEUE_POP = 19,        /* item id, zigzag(depth) */
  PPT_EV_QUEUE_WAIT_BEGIN = 20, /* why (1 full, 2 empty), zigzag(depth) */
  PPT_EV_QUEUE_WAIT_END = 21,   /* why, zigzag(depth) */
  /* Since 1.2: written by the writer itself (never in a ring) in EVENTS
   * chunks of thread 0, with their own layout after type and time delta:
   * str what, str which, str message, f64 value, baseline, spread,
   * threshold (docs/formats/pptrace.md). */
  PPT_EV_ANOMALY = 22, /* a live statistic left its rolling baseline */
  PPT_EV_ALERT = 23,   /* a resource-pressure threshold was crossed */
  /* Since 1.2: GPU zones (written by the library's resolver straight into
   * the EVENTS chunk of the launching thread, never in a ring) and device
   * memory pools (ring events with a value and an extra number; the ring
   * keeps bytes << 8 | device in the extra). File layout of each in
   * docs/formats/pptrace.md. */
  PPT_EV_GPU_ZONE = 24,    /* device, stream, launch delta, duration ns */
  PPT_EV_MEM_ALLOC = 25,   /* ptr, bytes, device */
  PPT_EV_MEM_FREE = 26,    /* ptr, 0, device */
  PPT_EV_MEM_RESERVE = 27, /* 0, reserved bytes now, device */
  /* Since 1.5: a zone begin and its end in one event, written by the
   * trace sink for a zone with no other event of its thread inside (never
   * in a ring): the value is the duration in ticks, and the next event's
   * delta counts from the end. Readers give the begin and the end. */
  PPT_EV_ZONE = 28,
  /* Since 1.5: a run of such zones at one site, one after the other (never
   * in a ring): the value is how many, and the event ends with each one's
   * duration, each after the first preceded by the gap since the one
   * before ended (docs/formats/pptrace.md). */
  PPT_EV_ZONES = 29,
  PPT_EV_MAX_ = 29 /* the last type defined; 22-24, 28 and 29 never sit in
                      a ring */
};

/* 1 for the event types with the anomaly/alert layout (since 1.2). */
static inline int ppt_is_note(unsigned type) {
  return type == PPT_EV_ANOMALY || type == PPT_EV_ALERT;
}

/* 1 for the event types this version defines. */
static inline int ppt_type_known(unsigned type) {
  return type >= PPT_EV_ZONE_BEGIN && type <= PPT_EV_MAX_;
}

/* 1 for the memory pool events (since 1.2). */
static inline int ppt_is_mem(unsigned type) {
  return type >= PPT_EV_MEM_ALLOC && type <= PPT_EV_MEM_RESERVE;
}

/* Ring packing of a memory event's extra number: bytes (< 2^48) and the
 * device (0..255). */
#define PPT_MEM_MAX_BYTES ((UINT64_C(1) << 48) - 1)

/* 1 for the event types that carry a 64-bit value (a second ring slot,
 * one more field in the EVENTS payload): all but zone begin/end, marks and
 * frame marks. */
static inline int ppt_has_value(unsigned type) {
  return ppt_type_known(type) && type >= PPT_EV_COUNTER_SET &&
         type != PPT_EV_MARK && type != PPT_EV_FRAME &&
         type != PPT_EV_GPU_ZONE && !ppt_is_note(type);
}

/* 1 for the event types that carry an extra number (since 1.1; queue
 * and memory events since 1.2). */
static inline int ppt_has_extra(unsigned type) {
  return (type >= PPT_EV_REQ_BEGIN && type <= PPT_EV_QUEUE_WAIT_END) ||
         ppt_is_mem(type);
}

/* ---- little-endian fixed-width helpers ---- */
static inline void ppt_put_u16(unsigned char *p, uint16_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}
static inline void ppt_put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}
static inline void ppt_put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}
static inline uint16_t ppt_get_u16(const unsigned char *p) {
  return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t ppt_get_u32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}
static inline uint64_t ppt_get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

/* ---- varints (LEB128) ---- */

/* Write v at p (room for 10 bytes needed); returns bytes written. */
static inline size_t ppt_put_uv(unsigned char *p, uint64_t v) {
  if (__builtin_expect(v < 0x80, 1)) { /* most deltas and ids */
    *p = (unsigned char)v;
    return 1;
  }
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  p[n++] = (unsigned char)v;
  return n;
}
static inline uint64_t ppt_zigzag(int64_t v) {
  return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t ppt_unzigzag(uint64_t v) {
  return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Bounded reader cursor: every get checks the end; an overrun sets err and
 * returns 0, so decoders can read a whole record and check err once. */
typedef struct ppt_cursor {
  const unsigned char *p, *end;
  int err;
} ppt_cursor;

static inline uint64_t ppt_get_uv(ppt_cursor *c) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (c->p >= c->end) {
      c->err = 1;
      return 0;
    }
    unsigned char b = *c->p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      return v;
  }
  c->err = 1;
  return 0;
}
static inline int64_t ppt_get_sv(ppt_cursor *c) {
  return ppt_unzigzag(ppt_get_uv(c));
}
static inline double ppt_get_f64(ppt_cursor *c) {
  double d = 0;
  if (c->end - c->p < 8) {
    c->err = 1;
    c->p = c->end;
    return 0;
  }
  uint64_t u = ppt_get_u64(c->p);
  memcpy(&d, &u, 8);
  c->p += 8;
  return d;
}
/* A string: varint length then bytes (not NUL-terminated in the file).
 * Returns a pointer into the buffer and its length in *len. */
static inline const char *ppt_get_str(ppt_cursor *c, size_t *len) {
  uint64_t n = ppt_get_uv(c);
  if (c->err || n > (uint64_t)(c->end - c->p)) {
    c->err = 1;
    *len = 0;
    return "";
  }
  const char *s = (const char *)c->p;
  c->p += n;
  *len = (size_t)n;
  return s;
}

/* ---- chunk builder (writer side) ---- */

/* A growable byte buffer with a hard cap; the writer builds one chunk
 * payload at a time in it. */
typedef struct ppt_buf {
  unsigned char *data;
  size_t len, cap;
  int oom; /* set when a reserve failed; the chunk is then discarded */
} ppt_buf;

/* Make room for extra more bytes: 0, or -1 (and b->oom set) when out of
 * memory or past the largest chunk. Inline where there is room already:
 * the writer calls it once per event. */
int ppt_buf_grow(ppt_buf *b, size_t extra);
static inline int ppt_buf_reserve(ppt_buf *b, size_t extra) {
  if (!b->oom && b->len + extra <= b->cap)
    return 0;
  return ppt_buf_grow(b, extra);
}
void ppt_buf_free(ppt_buf *b);
void ppt_buf_uv(ppt_buf *b, uint64_t v);
void ppt_buf_sv(ppt_buf *b, int64_t v);
void ppt_buf_f64(ppt_buf *b, double d);
void ppt_buf_str(ppt_buf *b, const char *s);
void ppt_buf_bytes(ppt_buf *b, const void *p, size_t n);

/* Fill the 24-byte chunk header for a payload. */
void ppt_chunk_header(unsigned char hdr[PPT_CHUNK_HEADER_SIZE], uint16_t type,
                      const unsigned char *payload, uint32_t len,
                      uint32_t seq);
/* Whether a 24-byte chunk header is whole: its magic, its own CRC-32C
 * and a payload length a reader takes (at most PPT_MAX_PAYLOAD). */
int ppt_chunk_header_ok(const unsigned char hdr[PPT_CHUNK_HEADER_SIZE]);
/* Fill the 64-byte file header. */
void ppt_file_header(unsigned char hdr[PPT_FILE_HEADER_SIZE], uint32_t pid);

#endif /* PP_PPTRACE_H */
