/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the .pptrace reader: the input is parsed with
 * pp_trace_read_mem() and freed; then read twice and merged as from two
 * processes (pp_trace_merge); and once more read as the CLI reads it:
 * every event streamed through the figures' engine (analyze/stream.h),
 * whose payload is then made, and only a few stored (the stored window's
 * cut moves as the budget fills). The analysis and the renderers are
 * fuzz_analyze.c's: split so that this target runs above 1,000 inputs a
 * second (issue 26). Any crash, sanitizer report or leak is a bug: the
 * reader promises to survive any input.
 * Seeds live in fuzz/corpus/reader/; fuzz/replay.c replays them as a
 * regression test (ctest fuzz_replay_reader).
 *
 * The custom mutator re-seals chunks' checksums (pptrace_mutator.h).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/stream.h"
#include "format/pptrace.h"
#include "internal.h"
#include "model/reader.h"
#include "pptrace_mutator.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pp_trace t, u;
  char err[256];
  if (pp_trace_read_mem(data, size, &t, err, sizeof err) != 0)
    return 0;
  pp_trace_free(&t);
  /* The trace merged with a copy of itself recorded by another process, as
   * `pipeprof report DIR` merges a run's traces: equal thread, flow and
   * request ids in two processes. */
  if (pp_trace_read_mem(data, size, &t, err, sizeof err) != 0)
    return 0;
  if (pp_trace_read_mem(data, size, &u, err, sizeof err) == 0) {
    u.pid ^= 1;
    (void)pp_trace_merge(&t, &u);
    pp_trace_free(&u);
  }
  pp_trace_free(&t);
  /* Streamed, with a budget of 7 stored events: every event through the
   * figures' engine, whose payload is then made. */
  pp_stream *s = pp__stream_new();
  if (!s)
    return 0;
  pp_read_opts o = {7, pp__stream_event, s, 0};
  if (pp_trace_read_mem_opts(data, size, &t, &o, err, sizeof err) == 0) {
    unsigned char *payload = NULL;
    size_t len = 0;
    pp_stream_results *res = NULL;
    if (pp__stream_finish(s, &t, &payload, &len, &res) == 0)
      pp__free(payload);
    pp__stream_results_free(res);
    pp_trace_free(&t);
  }
  pp__stream_free(s);
  return 0;
}
