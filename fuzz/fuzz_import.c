/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the importer of other tools' profiles
 * (src/import/): the input is read as a torch.profiler or ONNX Runtime
 * JSON profile with pp_import_mem(), and when it imports, analysed; then
 * imported again streamed, as the CLI reads it: every event through the
 * figures (analyze/stream.h), a window of 7 stored. One of the two
 * analyses is printed by one of the text report and the exporters
 * (fuzz/render.h), both picked by the input's bytes. The operators-by-
 * shape table must hold zone sites and self times within [0, total]. Any
 * crash, sanitizer report or leak is a bug: the importer promises to
 * survive any input, and to refuse what is no profile with a message.
 * Seeds live in fuzz/corpus/import/; fuzz/replay.c replays them as a
 * regression test (ctest fuzz_replay_import).
 */
#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"
#include "analyze/stream.h"
#include "export/export.h"
#include "import/profile.h"
#include "render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Analyse t (with a's stream, if any) and, when asked, render it with
 * renderer k (fuzz/render.h); free both. */
static void render(pp_trace *t, pp_analysis *a, int rendered, unsigned k) {
  if (pp_analyze(t, a) == 0 && rendered)
    pp_fuzz_render_one(a, k);
  pp_analysis_free(a);
  pp_trace_free(t);
}

/* The operators-by-shape table holds zone sites, and times that can be:
 * self within [0, total]. */
static void check_shapes(const pp_trace *t) {
  for (size_t i = 0; i < t->nshapes; i++) {
    const pp_op_shape *s = &t->shapes[i];
    if (s->loc >= t->nlocs || t->locs[s->loc].kind != PP_KIND_ZONE ||
        s->self_ns < 0 || s->self_ns > s->total_ns)
      __builtin_trap();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pp_trace t;
  char err[512];
  if (pp_import_mem(data, size, &t, err, sizeof err) != 0) {
    if (!err[0])
      __builtin_trap(); /* a refusal always says why */
    return 0;
  }
  check_shapes(&t);
  /* one of the two reads renders, with one renderer */
  unsigned k = pp_fuzz_pick(data, size);
  pp_analysis a = {0};
  render(&t, &a, (k / 5) % 2 == 0, k);
  /* Streamed: what reads whole must stream or say it cannot. */
  pp_analysis s = {0};
  if (!(s.stream = pp__stream_new()))
    return 0;
  pp_import_opts o = {7, pp__stream_event, s.stream};
  int rc = pp_import_mem_opts(data, size, &t, &o, err, sizeof err);
  if (rc == 0) {
    check_shapes(&t);
    render(&t, &s, (k / 5) % 2 == 1, k);
  } else {
    if (!err[0])
      __builtin_trap();
    pp_analysis_free(&s);
  }
  return 0;
}
