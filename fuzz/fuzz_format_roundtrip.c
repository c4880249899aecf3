/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the trace format's one table: the input bytes
 * drive fuzz/roundtrip.h's generator (which chunks, event types, values,
 * string lengths), the generated records are encoded with the format's
 * encoders into a file, read back with pp_trace_read_mem(), and every
 * decoded field is compared with what was generated. Any difference
 * aborts with it on stderr; a crash, sanitizer report or leak is a bug
 * too. Seeds live in fuzz/corpus/format_roundtrip/; fuzz/replay.c replays
 * them as a regression test (ctest fuzz_replay_format_roundtrip).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "roundtrip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char why[256] = "";
  if (rt_run(data, size, why, sizeof why) < 0) {
    fprintf(stderr, "format round trip: %s\n", why);
    abort();
  }
  return 0;
}
