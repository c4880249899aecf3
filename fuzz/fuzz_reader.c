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
 * Every chunk carries CRC-32C checksums, so random mutations nearly always
 * end in "bad chunk" and never reach the payload decoders. A custom
 * mutator therefore re-seals the checksums of every chunk after half of
 * the mutations, letting the fuzzer explore malformed payloads too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/stream.h"
#include "format/pptrace.h"
#include "internal.h"
#include "model/reader.h"

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
