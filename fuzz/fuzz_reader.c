/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the .pptrace reader and everything downstream of
 * it: the input is parsed with pp_trace_read_mem(), analysed with
 * pp_analyze(), then printed by one of the text report and the exporters
 * (Chrome JSON, summary JSON, CSV, HTML; fuzz/render.h) into /dev/null in
 * one of the passes below, both picked by the input's bytes, and freed;
 * then the same
 * again for the trace merged with a copy of itself as from another process
 * (pp_trace_merge); and once more read as the CLI reads it: every event
 * streamed through the figures (analyze/stream.h) and only a few stored
 * (the stored window's cut moves as the budget fills). Any crash, sanitizer report or leak is a bug: the
 * reader promises to survive any input.
 * Seeds live in fuzz/corpus/reader/; fuzz/replay.c replays them as a
 * regression test (ctest fuzz_replay_reader).
 *
 * Every chunk carries CRC-32C checksums, so random mutations nearly always
 * end in "bad chunk" and never reach the payload decoders. A custom
 * mutator therefore re-seals the checksums of every chunk after half of
 * the mutations, letting the fuzzer explore malformed payloads too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/analysis.h"
#include "analyze/stream.h"
#include "export/export.h"
#include "format/pptrace.h"
#include "model/reader.h"
#include "internal.h"
#include "render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed);
/* Provided by libFuzzer; absent (NULL) in the corpus replay driver, which
 * never calls the custom mutator. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size)
    __attribute__((weak));

/* Recompute the payload and header checksums of every chunk whose header
 * magic is in place and whose payload fits in the buffer. */
static void reseal(uint8_t *d, size_t size) {
  size_t pos = PPT_FILE_HEADER_SIZE;
  while (pos + PPT_CHUNK_HEADER_SIZE <= size) {
    if (ppt_get_u32(d + pos) != PPT_CHUNK_MAGIC) {
      pos++;
      continue;
    }
    uint32_t plen = ppt_get_u32(d + pos + 8);
    if (plen > size - pos - PPT_CHUNK_HEADER_SIZE)
      break;
    ppt_put_u32(d + pos + 12,
                pp__crc32c(0, d + pos + PPT_CHUNK_HEADER_SIZE, plen));
    ppt_put_u32(d + pos + 20, pp__crc32c(0, d + pos, 20));
    pos += PPT_CHUNK_HEADER_SIZE + plen;
  }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed) {
  if (!LLVMFuzzerMutate)
    return size;
  size = LLVMFuzzerMutate(data, size, max_size);
  if (seed & 1)
    reseal(data, size);
  return size;
}

/* Analyse; render with renderer k (pp_fuzz_render_one) when this is the
 * pass that renders. */
static void print_all(pp_trace *t, pp_analysis *a, int render, unsigned k) {
  if (pp_analyze(t, a) == 0 && render)
    pp_fuzz_render_one(a, k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pp_trace t, u;
  pp_analysis a = {0};
  char err[256];
  /* one pass of the three renders, with one renderer */
  unsigned k = pp_fuzz_pick(data, size), pass = (k / 5) % 3;
  if (pp_trace_read_mem(data, size, &t, err, sizeof err) != 0)
    return 0;
  print_all(&t, &a, pass == 0, k);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  /* The trace merged with a copy of itself recorded by another process, as
   * `pipeprof report DIR` merges a run's traces: equal thread, flow and
   * request ids in two processes. */
  if (pp_trace_read_mem(data, size, &t, err, sizeof err) != 0)
    return 0;
  if (pp_trace_read_mem(data, size, &u, err, sizeof err) == 0) {
    u.pid ^= 1;
    if (pp_trace_merge(&t, &u) == 0)
      print_all(&t, &a, pass == 1, k);
    pp_trace_free(&u);
  }
  pp_analysis_free(&a);
  pp_trace_free(&t);
  /* Streamed, with a budget of 7 stored events. */
  pp_stream *s = pp__stream_new();
  if (!s)
    return 0;
  pp_read_opts o = {7, pp__stream_event, s, 0};
  if (pp_trace_read_mem_opts(data, size, &t, &o, err, sizeof err) != 0) {
    pp__stream_free(s);
    return 0;
  }
  a.stream = s;
  print_all(&t, &a, pass == 2, k);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  return 0;
}
