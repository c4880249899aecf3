/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the salvager (src/salvage/): the input is a rings
 * file (ring/arena.h), written to a private folder beside a small trace
 * whose META names it (with the token the input's header holds, so that
 * checks past the token are reached), then salvaged with pp_salvage() and
 * the result read back with the trace reader; then salvaged again through
 * pp_salvage_arena() from a fresh copy. Any crash, sanitizer report or
 * leak is a bug: a salvager reads files other processes left.
 *
 * Seeds: fuzz/corpus/salvage/ (real arenas of processes killed while they
 * recorded in trace and stats mode, 16 KiB rings, their commits moved to
 * the end of the file header so that the harness's trace takes them; one
 * cut to its header; made by fuzz/salvage-seeds.sh; and inputs that found
 * bugs); replayed by ctest fuzz_replay_salvage. PP_FUZZ_VERBOSE=1 prints what
 * each input's salvage said.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/records.h"
#include "model/reader.h"
#include "ring/arena.h"
#include "salvage/salvage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[256];

static int put_file(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  int ok = fwrite(p, 1, n, f) == n;
  return fclose(f) == 0 && ok ? 0 : -1;
}

static void chunk(FILE *f, uint16_t type, ppt_buf *b, uint32_t *seq) {
  unsigned char h[PPT_CHUNK_HEADER_SIZE];
  ppt_chunk_header(h, type, b->data, (uint32_t)b->len, (*seq)++);
  fwrite(h, 1, sizeof h, f);
  fwrite(b->data, 1, b->len, f);
  ppt_buf_free(b);
}

/* A trace of process pid naming the rings at arena with token tok: META,
 * CLOCK, one site, one thread, and no END. */
static int put_trace(const char *path, const char *arena, uint64_t tok) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  unsigned char fh[PPT_FILE_HEADER_SIZE];
  ppt_file_header(fh, 4242);
  fwrite(fh, 1, sizeof fh, f);
  uint32_t seq = 0;
  ppt_buf b = {0};
  char t[32];
  snprintf(t, sizeof t, "%016llx", (unsigned long long)tok);
  const char *const kv[][2] = {{"mode", "trace"},
                               {"ticks_per_ns", "1.0"},
                               {"durable.rings", arena},
                               {"durable.token", t}};
  ppt_meta_pairs_put(&b, kv, 4);
  chunk(f, PPT_CHUNK_META, &b, &seq);
  ppt_clock c = {1000, 1000, 1000};
  ppt_clock_put(&b, &c);
  chunk(f, PPT_CHUNK_CLOCK, &b, &seq);
  ppt_srcloc s = {0, 1, ppt_str_of("z"), ppt_str_of(NULL), ppt_str_of(NULL), 0};
  ppt_srcloc_put(&b, &s);
  chunk(f, PPT_CHUNK_SRCLOC, &b, &seq);
  ppt_thread th = {1, ppt_str_of("main")};
  ppt_thread_put(&b, &th);
  chunk(f, PPT_CHUNK_THREAD, &b, &seq);
  return fclose(f);
}

static void read_back(const char *path) {
  pp_trace t;
  char err[512];
  if (pp_trace_read_file(path, &t, err, sizeof err) == 0)
    pp_trace_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!dir[0]) {
    /* in memory when it can: files are written for every input */
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/pp-fuzz-salvage-XXXXXX",
             tmp && *tmp                  ? tmp
             : access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                                             : "/tmp");
    if (!mkdtemp(dir))
      abort();
  }
  if (size > (8u << 20))
    return 0;
  char arena[512], trace[512], msg[8192];
  snprintf(arena, sizeof arena, "%s/pipeprof-1-0.rings", dir);
  snprintf(trace, sizeof trace, "%s/t.pptrace", dir);
  uint64_t tok = 0;
  if (size >= offsetof(pp__arena_hdr, token) + sizeof tok)
    memcpy(&tok, data + offsetof(pp__arena_hdr, token), sizeof tok);
  pp_salvage_result r;
  if (put_file(arena, data, size) == 0 && put_trace(trace, arena, tok) == 0) {
    pp_salvage(trace, "signal SIGKILL", &r, msg, sizeof msg);
    if (getenv("PP_FUZZ_VERBOSE")) /* to check what a seed reaches */
      fprintf(stderr, "salvage: %s\n", msg);
    read_back(trace);
  }
  if (put_file(arena, data, size) == 0 && put_trace(trace, arena, tok) == 0) {
    pp_salvage_arena(arena, NULL, &r, msg, sizeof msg);
    read_back(trace);
  }
  unlink(arena);
  unlink(trace);
  return 0;
}
