/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the importer of other tools' profiles
 * (src/import/): the input is read as a torch.profiler or ONNX Runtime
 * JSON profile with pp_import_mem(), and when it imports, analysed and
 * printed by the text report and every exporter into /dev/null. Any
 * crash, sanitizer report or leak is a bug: the importer promises to
 * survive any input, and to refuse what is no profile with a message.
 * Seeds live in fuzz/corpus/import/; fuzz/replay.c replays them as a
 * regression test (ctest fuzz_replay_import).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/analysis.h"
#include "export/export.h"
#include "import/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *sink(void) {
  static FILE *null;
  if (!null) {
    null = fopen("/dev/null", "w");
    if (!null)
      null = tmpfile();
  }
  return null;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pp_trace t;
  char err[512];
  if (pp_import_mem(data, size, &t, err, sizeof err) != 0) {
    if (!err[0])
      __builtin_trap(); /* a refusal always says why */
    return 0;
  }
  pp_analysis a = {0};
  FILE *out = sink();
  if (pp_analyze(&t, &a) == 0 && out) {
    pp_report_opts opts = {0, 5};
    pp_report_text(out, &a, &opts);
    pp_export_chrome(out, &a);
    pp_export_summary_json(out, &a);
    pp_export_csv(out, &a);
    pp_export_html(out, &a);
    fflush(out);
    clearerr(out);
  }
  pp_analysis_free(&a);
  pp_trace_free(&t);
  return 0;
}
