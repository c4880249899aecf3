/* SPDX-License-Identifier: MIT */
/*
 * The trace sink's fast loop (sink/trace.c: runs of zone begins and ends
 * at one site, written as ZONE and ZONES events where a begin's end comes
 * next) against what it was given: ring slots of a random sequence go
 * through the sink into a file, the reader reads the file back, and the
 * events must be the slots' events one for one, with their times. The
 * sequence breaks the loop in every way it may break: other sites, site
 * ids past one byte, counters with their value slot, nesting, ends of
 * zones not on top, gaps and durations past one byte, the clock stepping
 * back (durations that wrap), runs longer than a ZONES event holds, the
 * ring's wrap and blocks of every size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/recorder.h"
#include "format/events.h"
#include "model/reader.h"
#include "format/records.h"
#include "pipeprof.h"
#include "ring_slots.h"
#include "runner.h"
#include "sink/out.h"
#include "sink/sink.h"
#include "sink/sites.h"
#include "sink/trace.h"

#define RING 4096u
#define EVENTS 50000u
#define NSITES 200 /* ids past 127 take two bytes */

static uint64_t rng = 0x2545F4914F6CDD1DULL;
static double urand(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (double)((rng * 2685821657736338717ULL) >> 11) * 0x1.0p-53;
}

typedef struct want {
  unsigned type;
  const pp_srcloc *loc;
  uint64_t ts;
} want;

static pp_srcloc sites[NSITES];
static char names[NSITES][16];
static want wanted[EVENTS + 8];
static size_t nwant;

static void put(pp__slot *ring, uint64_t *w, unsigned type,
                const pp_srcloc *loc, uint64_t ts) {
  pp_test_ring_put(ring, RING, w, type, loc, ts);
  wanted[nwant++] = (want){type, loc, ts};
}

PP_TEST(trace_sink_fast_loop_writes_every_event) {
  static pp__slot ring[RING];
  for (int i = 0; i < NSITES; i++) {
    snprintf(names[i], sizeof names[i], "s%d", i);
    sites[i] = (pp_srcloc){names[i], "f", "x.c", (uint32_t)i,
                           i == 5 ? PP_KIND_COUNTER : PP_KIND_ZONE};
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/trace-sink.pptrace", pp_test_tmpdir());
  pp__out out;
  memset(&out, 0, sizeof out);
  char why[512];
  CHECK_EQ(pp__out_open(&out, path, 1, why, sizeof why), 0);
  ppt_buf b = {0};
  ppt_count_put_n(&b, 1);
  ppt_meta m = {ppt_str_of("tick_source"), ppt_str_of("monotonic")};
  ppt_meta_put(&b, &m);
  pp__out_chunk(&out, PPT_CHUNK_META, &b, 0);
  ppt_buf_free(&b);
  pp__sites ids = {0};
  pp__sink *k = pp__trace_sink_new(&out, &ids);
  CHECK(k != NULL);
  uint64_t tick = 1000000, w = 3000, r = w;
  const pp_srcloc *open[64];
  size_t depth = 0;
  /* site 0 (id 0: one byte) is the run site most of the time; sometimes
   * a site whose id has two bytes runs */
  const pp_srcloc *run = &sites[0];
  while (nwant < EVENTS) {
    while (w - r < RING / 2 - 2 && nwant < EVENTS) {
      double u = urand();
      tick += 1 + (uint64_t)(urand() * 100);
      if (urand() < 0.01)
        tick += (uint64_t)(urand() * 1e6); /* gaps past one byte */
      if (urand() < 0.003)
        tick -= 500; /* the clock steps back */
      if (urand() < 0.002)
        run = &sites[urand() < 0.5 ? 0 : 150 + (int)(urand() * 40)];
      if (u < 0.01) {
        put(ring, &w, PPT_EV_COUNTER_SET, &sites[5], tick);
      } else if (u < 0.015 && depth) {
        put(ring, &w, PPT_EV_ZONE_END, &sites[3], tick); /* not on top */
      } else if (depth < 40 && (depth == 0 || u < 0.55)) {
        const pp_srcloc *s =
            urand() < 0.95 ? run : &sites[1 + (int)(urand() * 190)];
        put(ring, &w, PPT_EV_ZONE_BEGIN, s, tick);
        open[depth++] = s;
      } else {
        put(ring, &w, PPT_EV_ZONE_END, open[--depth], tick);
      }
    }
    while (r < w) {
      uint64_t max = 1 + (uint64_t)(urand() * 900);
      uint64_t end = pp__slots_block_end(ring, RING - 1, r, w, max);
      pp__slots s = {9, ring, RING - 1, r, end, end == w,
                     pp__clockmap_make(0, 0, 1.0)};
      k->ops->slots(k, &s);
      r = end;
    }
    k->ops->pass_end(k, 0, 0);
    pp__out_flush(&out);
  }
  k->ops->free(k);
  pp__sites_free(&ids);
  CHECK_EQ(pp__out_close(&out), 0);
  pp__out_free(&out);

  pp_trace t;
  char err[512] = "";
  if (pp_trace_read_file(path, &t, err, sizeof err) != 0)
    PP_FAIL("cannot read %s: %s", path, err);
  CHECK_EQ_U(t.diag.events_bad, 0);
  CHECK_EQ(t.nthreads, 1);
  const pp_thread *th = &t.threads[0];
  CHECK_EQ_U(th->nev, nwant);
  for (size_t i = 0; i < nwant && i < th->nev; i++) {
    const pp_event *e = &th->ev[i];
    if (e->type != wanted[i].type || e->ts != (int64_t)wanted[i].ts ||
        strcmp(pp_trace_loc_name(&t, e->loc), wanted[i].loc->name) != 0)
      PP_FAIL("event %zu: type %u at %lld, %s; wanted type %u at %llu, %s",
              i, (unsigned)e->type, (long long)e->ts,
              pp_trace_loc_name(&t, e->loc), wanted[i].type,
              (unsigned long long)wanted[i].ts, wanted[i].loc->name);
  }
  pp_trace_free(&t);
  /* and the loop wrote the short forms (the file's bytes per event are
   * what the encodings are for) */
  size_t len;
  unsigned char *d = (unsigned char *)pp_test_slurp(path, &len);
  CHECK(d != NULL);
  CHECK_LT(len, nwant * 3);
  free(d);
}
