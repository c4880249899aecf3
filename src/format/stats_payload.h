/* SPDX-License-Identifier: MIT */
/*
 * The STATS payload (stats mode's figures, and the tools' streamed
 * figures of a trace-mode file), decoded once here for every consumer:
 * the reader checks a file's payload and learns the sites and threads it
 * names, the analysis (analyze/figures.c) turns it into a profile. The
 * layout is records.h's (STATS, in order); this walks it and hands each
 * record to a visitor.
 */
#ifndef PP_FORMAT_STATS_PAYLOAD_H
#define PP_FORMAT_STATS_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "records.h"

/* The most records of each section, and of GPU records, a payload may
 * hold: more is a malformed payload. */
#define PPT_STATS_SITES_MAX (UINT64_C(1) << 22)
#define PPT_STATS_THREADS_MAX UINT64_C(65536)

/* Called for each record in payload order; a non-zero return stops the
 * walk, which then fails. A NULL call skips the record (it is still
 * decoded and checked). The histograms of zone, frame and GPU records are
 * decoded into the walker's own: a visitor that keeps one moves it out
 * (copy the struct, then pp_hist_init the source); the walker frees what
 * is left. Sections a payload of an older format lacks get no call (gpu
 * and gpu_lost since 1.3, pairing since 1.4). */
typedef struct ppt_stats_visitor {
  int (*zone)(void *arg, ppt_stats_zone *r);
  int (*thread)(void *arg, const ppt_stats_thread *r);
  int (*frame)(void *arg, ppt_stats_frame *r);
  int (*counter)(void *arg, const ppt_stats_counter *r);
  int (*totals)(void *arg, const ppt_stats_totals *r);
  int (*gpu)(void *arg, ppt_stats_gpu *r);
  int (*gpu_lost)(void *arg, uint64_t zones_lost);
  int (*pairing)(void *arg, const ppt_stats_pairing *r);
} ppt_stats_visitor;

/* Walk the n bytes at p. Returns 0 when the whole payload is good; -1
 * when its first part (the sections up to the totals, format 1.2) is
 * malformed (a record does not decode, a count is past its maximum) or a
 * visitor call failed there; 1 when the first part is good and the GPU
 * part after it is not (a record does not decode, GPU records are not in
 * increasing (site, device, stream) order or have no zones, a visitor
 * call failed). *good (may be NULL) is then the length of the prefix
 * that is a whole payload of its own: the first part. A pairing part cut
 * short is ignored, as a reader of 1.4 files did. */
int ppt_stats_walk(const unsigned char *p, size_t n, const ppt_stats_visitor *v,
                   void *arg, size_t *good);

/* The payloads a and b of two processes of one run as one payload in out
 * (format/stats_merge.c): b's site ids renumbered by map (nmap of them;
 * ids past it as they are), the records of one site added up (zones,
 * frames and counters of one series, GPU zones of one site and track),
 * the threads of both, the totals and pairing counts summed. 0, or -1
 * when a payload is malformed or memory ran out. */
int ppt_stats_merge(const unsigned char *a, size_t na, const unsigned char *b,
                    size_t nb, const uint32_t *map, size_t nmap,
                    ppt_buf *out);

#endif /* PP_FORMAT_STATS_PAYLOAD_H */
