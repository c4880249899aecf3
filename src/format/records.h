/* SPDX-License-Identifier: MIT */
/*
 * The records of every chunk but EVENTS (events.h): one layout table each,
 * in codec.h's notation, from which records.c generates for each record
 * ppt_<name> (the struct), ppt_<name>_bound (bytes at most),
 * ppt_<name>_enc (into raw memory), ppt_<name>_put (onto a ppt_buf) and
 * ppt_<name>_get (0, or -1 with c->err set). The writer (core/writer.c,
 * core/meta.c, the sinks of sink/, collect/cupti.c) encodes with them and
 * the reader (model/reader.c) decodes with them. The order of records in
 * a chunk is docs/formats/pptrace.md's; the helpers below the tables
 * handle the framing that is not a flat record.
 */
#ifndef PP_FORMAT_RECORDS_H
#define PP_FORMAT_RECORDS_H

#include "codec.h"
#include "events.h"

/* A count before a run of records (META pairs, STATS sections). */
#define PPT_REC_COUNT(F) F(UV, n, PPT_ANY)

/* META: a count, then that many key/value pairs. */
#define PPT_REC_META(F) F(STR, key, ) F(STR, value, )
/* CLOCK: records until the end of the payload. */
#define PPT_REC_CLOCK(F) F(UV, tick, PPT_ANY) F(SV, mono_ns, ) F(SV, real_ns, )
/* SRCLOC: records until the end. A reader takes a kind past 255 or a line
 * past UINT32_MAX as 0. */
#define PPT_REC_SRCLOC(F)                                                      \
  F(UV, id, PPT_ANY)                                                           \
  F(UV, kind, PPT_ANY)                                                         \
  F(STR, name, ) F(STR, function, ) F(STR, file, ) F(UV, line, PPT_ANY)
/* THREAD: records until the end. */
#define PPT_REC_THREAD(F) F(UV, tid, PPT_ANY) F(STR, name, )
/* DROPS: records until the end; n events lost since the last DROPS. */
#define PPT_REC_DROPS(F) F(UV, tid, PPT_ANY) F(UV, n, PPT_ANY)
/* END: one record. */
#define PPT_REC_END(F) F(UV, events, PPT_ANY) F(UV, drops, PPT_ANY)

/* STATS, in order: COUNT + STATS_ZONE records, COUNT + STATS_THREAD,
 * COUNT + STATS_FRAME, COUNT + STATS_COUNTER, STATS_TOTALS; since 1.3
 * COUNT + STATS_GPU records each framed by its length
 * (ppt_stats_gpu_put/get), COUNT (zones lost); since 1.4
 * STATS_PAIRING. */
#define PPT_REC_STATS_ZONE(F)                                                  \
  F(UV, loc, PPT_ANY)                                                          \
  F(UV, count, PPT_ANY)                                                        \
  F(UV, total, PPT_ANY)                                                        \
  F(UV, self, PPT_ANY) F(HIST, hist, ) F(HIST, self_hist, )
#define PPT_REC_STATS_THREAD(F)                                                \
  F(UV, tid, PPT_ANY)                                                          \
  F(UV, busy, PPT_ANY) F(UV, events, PPT_ANY) F(UV, zones, PPT_ANY)
#define PPT_REC_STATS_FRAME(F)                                                 \
  F(UV, loc, PPT_ANY)                                                          \
  F(UV, frames, PPT_ANY)                                                       \
  F(SV, first_ns, ) F(SV, last_ns, ) F(F64, jitter_ns, ) F(HIST, hist, )
#define PPT_REC_STATS_COUNTER(F)                                               \
  F(UV, loc, PPT_ANY)                                                          \
  F(UV, samples, PPT_ANY)                                                      \
  F(F64, min, )                                                                \
  F(F64, max, ) F(F64, mean, ) F(F64, last, ) F(UV, is_float, PPT_ANY)
#define PPT_REC_STATS_TOTALS(F)                                                \
  F(SV, t0, )                                                                  \
  F(SV, t1, )                                                                  \
  F(UV, events, PPT_ANY) F(UV, unmatched_ends, PPT_ANY) F(UV, unclosed, PPT_ANY)
#define PPT_REC_STATS_GPU(F)                                                   \
  F(UV, loc, PPT_ANY)                                                          \
  F(UV, device, UINT32_MAX)                                                    \
  F(UV, stream, PPT_ANY)                                                       \
  F(UV, tid, PPT_ANY) F(UV, count, PPT_ANY) F(UV, total, PPT_ANY)              \
      F(SV, launch_ns, ) F(SV, start_ns, ) F(SV, end_ns, ) F(HIST, hist, )
#define PPT_REC_STATS_PAIRING(F)                                               \
  F(UV, too_deep, PPT_ANY)                                                     \
  F(UV, backwards, PPT_ANY)                                                    \
  F(UV, ranges_unclosed, PPT_ANY)                                              \
  F(UV, ranges_unbegun, PPT_ANY) F(UV, ranges_lost, PPT_ANY)

/* The durable arena's checkpoint of a stats-mode aggregate (sink/stats.c,
 * docs/internals/durable.md), kept in the arena, never in a file: COUNT +
 * CKPT_SITE, COUNT + CKPT_THREAD, CKPT_TOTALS, COUNT + CKPT_HALF (range
 * halves waiting for their other half), COUNT + CKPT_GPU. A histogram's
 * exact integer moments follow it (exact 1), so a restored aggregate is
 * the one saved. */
#define PPT_REC_CKPT_MOMENTS(F)                                                \
  F(UV, exact, 1)                                                              \
  F(UV, sum_lo, PPT_ANY)                                                       \
  F(UV, sum_hi, PPT_ANY)                                                       \
  F(UV, sq0, PPT_ANY) F(UV, sq1, PPT_ANY) F(UV, sq2, PPT_ANY)
#define PPT_REC_CKPT_SITE(F)                                                   \
  F(UV, id, UINT32_MAX - 1)                                                    \
  F(UV, kind, UINT32_MAX)                                                      \
  F(UV, defined, 1)                                                            \
  F(UV, alias, UINT32_MAX - 1)                                                 \
  F(UV, count, PPT_ANY)                                                        \
  F(UV, total, PPT_ANY)                                                        \
  F(UV, self, PPT_ANY)                                                         \
  F(HIST, dur, ) PPT_REC_CKPT_MOMENTS(F) F(UV, frames, PPT_ANY)                \
      F(SV, first_ns, ) F(SV, last_ns, ) F(SV, prev_dt, )                      \
          F(F64, jitter_sum, ) F(UV, jitter_n, PPT_ANY)                        \
              F(UV, samples, PPT_ANY) F(F64, cmin, ) F(F64, cmax, )            \
                  F(F64, csum, ) F(F64, cur, ) F(UV, is_float, 1)
#define PPT_REC_CKPT_THREAD(F)                                                 \
  F(UV, tid, PPT_ANY)                                                          \
  F(UV, busy, PPT_ANY) F(UV, events, PPT_ANY) F(UV, zones, PPT_ANY)
#define PPT_REC_CKPT_TOTALS(F)                                                 \
  F(SV, t0, )                                                                  \
  F(SV, t1, )                                                                  \
  F(UV, have_t, 1)                                                             \
  F(UV, events, PPT_ANY)                                                       \
  F(UV, lost_ends, PPT_ANY)                                                    \
  F(UV, stray_ends, PPT_ANY)                                                   \
  F(UV, too_deep, PPT_ANY)                                                     \
  F(UV, backwards, PPT_ANY)                                                    \
  F(UV, no_memory, PPT_ANY)                                                    \
  F(UV, gpu_lost, PPT_ANY)                                                     \
  F(UV, paired, PPT_ANY)                                                       \
  F(UV, unended, PPT_ANY) F(UV, unbegun, PPT_ANY) F(UV, lost, PPT_ANY)
#define PPT_REC_CKPT_HALF(F)                                                   \
  F(UV, id, PPT_ANY)                                                           \
  F(SV, ts, )                                                                  \
  F(UV, cookie, PPT_ANY)                                                       \
  F(UV, tid, PPT_ANY) F(UV, space, UINT32_MAX - 1) F(UV, is_end, 1)
#define PPT_REC_CKPT_GPU(F)                                                    \
  F(UV, loc, UINT32_MAX - 1)                                                   \
  F(UV, device, UINT32_MAX)                                                    \
  F(UV, stream, PPT_ANY)                                                       \
  F(UV, tid, PPT_ANY) F(UV, count, PPT_ANY) F(UV, total, PPT_ANY)              \
      F(SV, launch, ) F(SV, start, ) F(SV, end, ) F(HIST, dur, )               \
          PPT_REC_CKPT_MOMENTS(F)

/* CUDA: records of kind (one byte), body length (varint), body
 * (ppt_cuda_head_enc/get). A reader skips unknown kinds and fields past
 * the known ones. Times are CLOCK_MONOTONIC ns; a reader refuses a span
 * whose start + dur passes INT64_MAX. */
#define PPT_REC_CUDA_STRING(F) F(UV, id, PPT_ANY) F(STR, text, )
#define PPT_REC_CUDA_KERNEL(F)                                                 \
  F(UV, start, INT64_MAX)                                                      \
  F(UV, dur, PPT_ANY)                                                          \
  F(UV, queued, PPT_ANY)                                                       \
  F(U32, device, ) F(U32, context, ) F(U32, stream, ) F(U32, correlation, )    \
      F(U32, name, ) F(S32, grid_x, ) F(S32, grid_y, ) F(S32, grid_z, )        \
          F(S32, block_x, ) F(S32, block_y, ) F(S32, block_z, )                \
              F(S32, static_smem, ) F(S32, dynamic_smem, ) F(U32, registers, )
#define PPT_REC_CUDA_MEMCPY(F)                                                 \
  F(UV, start, INT64_MAX)                                                      \
  F(UV, dur, PPT_ANY)                                                          \
  F(UV, bytes, PPT_ANY)                                                        \
  F(U32, copy_kind, ) F(U32, src_kind, ) F(U32, dst_kind, ) F(U32, flags, )    \
      F(U32, device, ) F(U32, context, ) F(U32, stream, )                      \
          F(U32, correlation, )
#define PPT_REC_CUDA_MEMSET(F)                                                 \
  F(UV, start, INT64_MAX)                                                      \
  F(UV, dur, PPT_ANY)                                                          \
  F(UV, bytes, PPT_ANY)                                                        \
  F(U32, value, ) F(U32, memory_kind, ) F(U32, device, ) F(U32, context, )     \
      F(U32, stream, ) F(U32, correlation, )
#define PPT_REC_CUDA_SYNC(F)                                                   \
  F(UV, start, INT64_MAX)                                                      \
  F(UV, dur, PPT_ANY)                                                          \
  F(U32, type, )                                                               \
  F(U32, context, ) F(U32, stream, ) F(U32, correlation, ) F(U32, event, )
#define PPT_REC_CUDA_API(F)                                                    \
  F(UV, start, INT64_MAX)                                                      \
  F(UV, dur, PPT_ANY)                                                          \
  F(U32, domain, )                                                             \
  F(U32, cbid, ) F(U32, name, ) F(UV, tid, PPT_ANY) F(U32, correlation, )      \
      F(U32, result, )
#define PPT_REC_CUDA_DROPPED(F) F(UV, count, PPT_ANY)

/* Every record: X(name, layout). */
#define PPT_RECORD_TABLE(X)                                                    \
  X(count, PPT_REC_COUNT)                                                      \
  X(meta, PPT_REC_META)                                                        \
  X(clock, PPT_REC_CLOCK)                                                      \
  X(srcloc, PPT_REC_SRCLOC)                                                    \
  X(thread, PPT_REC_THREAD)                                                    \
  X(drops, PPT_REC_DROPS)                                                      \
  X(end, PPT_REC_END)                                                          \
  X(events_base, PPT_REC_EVENTS_BASE)                                          \
  X(stats_zone, PPT_REC_STATS_ZONE)                                            \
  X(stats_thread, PPT_REC_STATS_THREAD)                                        \
  X(stats_frame, PPT_REC_STATS_FRAME)                                          \
  X(stats_counter, PPT_REC_STATS_COUNTER)                                      \
  X(stats_totals, PPT_REC_STATS_TOTALS)                                        \
  X(stats_gpu, PPT_REC_STATS_GPU)                                              \
  X(stats_pairing, PPT_REC_STATS_PAIRING)                                      \
  X(ckpt_site, PPT_REC_CKPT_SITE)                                              \
  X(ckpt_thread, PPT_REC_CKPT_THREAD)                                          \
  X(ckpt_totals, PPT_REC_CKPT_TOTALS)                                          \
  X(ckpt_half, PPT_REC_CKPT_HALF)                                              \
  X(ckpt_gpu, PPT_REC_CKPT_GPU)                                                \
  X(cuda_string, PPT_REC_CUDA_STRING)                                          \
  X(cuda_kernel, PPT_REC_CUDA_KERNEL)                                          \
  X(cuda_memcpy, PPT_REC_CUDA_MEMCPY)                                          \
  X(cuda_memset, PPT_REC_CUDA_MEMSET)                                          \
  X(cuda_sync, PPT_REC_CUDA_SYNC)                                              \
  X(cuda_api, PPT_REC_CUDA_API)                                                \
  X(cuda_dropped, PPT_REC_CUDA_DROPPED)

#define PPT__RECORD_DECLARE(name, LAYOUT)                                      \
  typedef struct ppt_##name {                                                  \
    LAYOUT(PPT__FIELD)                                                         \
  } ppt_##name;                                                                \
  size_t ppt_##name##_bound(const ppt_##name *r);                              \
  size_t ppt_##name##_enc(unsigned char *p, const ppt_##name *r);              \
  void ppt_##name##_put(ppt_buf *b, const ppt_##name *r);                      \
  int ppt_##name##_get(ppt_cursor *c, ppt_##name *r);
PPT_RECORD_TABLE(PPT__RECORD_DECLARE)

/* A count record (shorthand for the writer). */
static inline void ppt_count_put_n(ppt_buf *b, uint64_t n) {
  ppt_count r = {n};
  ppt_count_put(b, &r);
}

/* A META payload: the count, then the n key/value pairs of kv. */
void ppt_meta_pairs_put(ppt_buf *b, const char *const (*kv)[2], size_t n);

/* A STATS_GPU record with its length in front. The writer discards the
 * chunk when b->oom is set. */
void ppt_stats_gpu_put_framed(ppt_buf *b, const ppt_stats_gpu *r);
/* The framed record: fields past the known ones are skipped. 0 or -1. */
int ppt_stats_gpu_get_framed(ppt_cursor *c, ppt_stats_gpu *r);

/* CUDA record framing: kind byte and body length at p (room for 11
 * bytes); returns bytes written. */
size_t ppt_cuda_head_enc(unsigned char *p, unsigned kind, uint64_t blen);
/* The next record's kind and its body as a cursor of its own (c moves
 * past it). 0, or -1 when the record is cut. */
int ppt_cuda_head_get(ppt_cursor *c, unsigned *kind, ppt_cursor *body);

#endif /* PP_FORMAT_RECORDS_H */
