/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for what follows the .pptrace reader: the input is
 * read one of three ways, picked by its bytes: whole (pp_trace_read_mem),
 * merged with a copy of itself as from another process (pp_trace_merge),
 * or streamed as the CLI reads it, every event through the figures
 * (analyze/stream.h) and a window of 7 stored. It is then analysed with
 * pp_analyze() and printed by one of the text report and the exporters
 * (fuzz/render.h), also picked by its bytes, into /dev/null. The reader's
 * own paths are fuzz_reader.c's. Seeds live in fuzz/corpus/analyze/
 * (the reader's); fuzz/replay.c replays them (ctest fuzz_replay_analyze).
 *
 * The custom mutator re-seals chunks' checksums (pptrace_mutator.h).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/analysis.h"
#include "analyze/stream.h"
#include "export/export.h"
#include "format/pptrace.h"
#include "internal.h"
#include "model/reader.h"
#include "pptrace_mutator.h"
#include "render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pp_trace t, u;
  pp_analysis a = {0};
  char err[256];
  unsigned k = pp_fuzz_pick(data, size), way = (k / 5) % 3;
  if (way == 0) {
    if (pp_trace_read_mem(data, size, &t, err, sizeof err) != 0)
      return 0;
  } else if (way == 1) {
    if (pp_trace_read_mem(data, size, &t, err, sizeof err) != 0)
      return 0;
    if (pp_trace_read_mem(data, size, &u, err, sizeof err) == 0) {
      u.pid ^= 1;
      int rc = pp_trace_merge(&t, &u);
      pp_trace_free(&u);
      if (rc != 0) {
        pp_trace_free(&t);
        return 0;
      }
    }
  } else {
    pp_stream *s = pp__stream_new();
    if (!s)
      return 0;
    pp_read_opts o = {7, pp__stream_event, s, 0};
    if (pp_trace_read_mem_opts(data, size, &t, &o, err, sizeof err) != 0) {
      pp__stream_free(s);
      return 0;
    }
    a.stream = s;
  }
  if (pp_analyze(&t, &a) == 0)
    pp_fuzz_render_one(&a, k);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  return 0;
}
