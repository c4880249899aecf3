/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the PIPEPROF_* value parser (src/core/env.c): the
 * input, cut at its first NUL, is handed to every parser, to the UTF-8 cut
 * at caps 1 to 80 and to the escaping at caps 8 to 200, and the results
 * are checked against the rule in env.h: a number is accepted only when
 * it is plain digits and prints back the same, a cut is a prefix that
 * never ends inside a well-formed UTF-8 character, an escaped value fits
 * its cap and holds no control byte. A failed check aborts.
 * Seeds live in fuzz/corpus/env/; fuzz/replay.c replays them as a
 * regression test (ctest fuzz_replay_env).
 *
 * env.c is compiled into this target (it is part of libpipeprof, which
 * the tools library the other targets link does not hold).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/env.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MUST(c)                                                              \
  do {                                                                       \
    if (!(c)) {                                                              \
      fprintf(stderr, "fuzz_env: check failed: %s\n", #c);                  \
      abort();                                                               \
    }                                                                        \
  } while (0)

static void check_cut(const char *v, size_t len) {
  char out[81];
  for (size_t cap = 1; cap <= sizeof out; cap++) {
    size_t k = pp__env_cut_utf8(out, cap, v);
    MUST(k < cap && k <= len && out[k] == 0 && memcmp(out, v, k) == 0);
    /* Stopped at the end, or before a character that does not fit. */
    if (k < len) {
      size_t n = utf8_len((const unsigned char *)v + k);
      MUST(k + (n ? n : 1) > cap - 1);
    }
    /* Never inside a well-formed character: walk the cut from its start. */
    size_t i = 0;
    while (i < k) {
      size_t n = utf8_len((const unsigned char *)v + i);
      i += n ? n : 1;
    }
    MUST(i == k);
  }
}

static void check_escape(const char *v) {
  char out[200];
  for (size_t cap = 8; cap <= sizeof out; cap += 7) {
    memset(out, 'Z', sizeof out);
    pp__env_escape(out, cap, v);
    size_t n = strnlen(out, cap);
    MUST(n < cap);
    for (size_t i = 0; i < n; i++) {
      unsigned char c = (unsigned char)out[i];
      MUST(c >= 0x20 && c != 0x7f);
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *v = malloc(size + 1);
  if (!v)
    return 0;
  memcpy(v, data, size);
  v[size] = 0;
  size_t len = strlen(v);

  int b = -1;
  if (pp__env_bool(v, &b) == 0)
    MUST(b == 0 || b == 1);
  uint64_t x;
  if (pp__env_uint(v, 0, UINT64_MAX, &x) == 0) {
    MUST(len > 0 && strspn(v, "0123456789") == len);
    char back[32];
    snprintf(back, sizeof back, "%llu", (unsigned long long)x);
    const char *digits = v + strspn(v, "0");
    MUST(strcmp(back, *digits ? digits : "0") == 0);
  }
  if (pp__env_uint(v, 16, 1048576, &x) == 0)
    MUST(x >= 16 && x <= 1048576);
  static const char *const modes[] = {"stats", "trace", "flight"};
  int m = pp__env_enum(v, modes, 3);
  MUST(m >= -1 && m < 3);
  if (pp__env_spec(v) == 0)
    MUST(strpbrk(v, " \t\n\r") == NULL);
  if (pp__env_name(v) == 0)
    MUST(strpbrk(v, "\t\n\r") == NULL);
  check_cut(v, len);
  check_escape(v);
  free(v);
  return 0;
}
