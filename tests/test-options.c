/* SPDX-License-Identifier: MIT */
/*
 * The options' table (src/core/options.c): docs/api.md's table of
 * variables is `pipeprof help env --markdown`; a pp_config field and its
 * variable take the same values and say the same words; the fields that
 * read the environment when unset (live, gpu_slots) win over it when set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/options.h"
#include "pipeprof.h"
#include "runner.h"

/* The table between the markers of a doc is `help env --markdown`. */
static void check_doc_table(const char *rel, const char *md) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", pp_test_srcdir(), rel);
  char *doc = pp_test_slurp(path, NULL);
  CHECK(doc != NULL);
  const char *b = strstr(doc, "<!-- options:begin -->\n");
  const char *e = strstr(doc, "<!-- options:end -->");
  CHECK(b && e && e > b);
  b += strlen("<!-- options:begin -->\n");
  size_t n = (size_t)(e - b);
  if (strlen(md) != n || memcmp(md, b, n) != 0)
    PP_FAIL("%s's options table differs from `pipeprof help env "
            "--markdown`; put its output between the markers:\n%s",
            rel, md);
  free(doc);
}

PP_TEST(options_docs_table_is_generated) {
  pp_cli_result r = pp_test_cli("help env --markdown");
  CHECK_EQ(r.rc, 0);
  check_doc_table("docs/api.md", r.out);
  check_doc_table("README.md", r.out);
  /* every variable, and the text form too */
  size_t nopt;
  const pp_option *o = pp__options(&nopt);
  CHECK_GE(nopt, 15);
  pp_cli_result t = pp_test_cli("help env");
  CHECK_EQ(t.rc, 0);
  for (size_t i = 0; i < nopt; i++) {
    CHECK_CONTAINS(r.out, o[i].env);
    CHECK_CONTAINS(t.out, o[i].env);
  }
  pp_cli_result_free(&t);
  pp_cli_result_free(&r);
}

/* A variable's rule and its field's: the same bounds, the same words. */
PP_TEST(options_field_and_variable_one_rule) {
  char want[160];
  const pp_option *slots = pp__option("PIPEPROF_GPU_SLOTS");
  CHECK(slots != NULL);
  uint64_t x = 0;
  CHECK_EQ(pp__option_check(slots, "2", &x, want, sizeof want), 0);
  CHECK_EQ(x, 2);
  CHECK_EQ(pp__option_check(slots, "1", &x, want, sizeof want), -1);
  CHECK_STR(want, "expected a number from 2 to 65536");
  CHECK_EQ(pp__option_check(slots, " 2", &x, want, sizeof want), -1);
  const pp_option *kib = pp__option("PIPEPROF_BUFFER_KIB");
  CHECK_EQ(pp__option_check(kib, "48", &x, want, sizeof want), -1);
  CHECK_STR(want, "expected a power of two from 16 to 1048576");
  const pp_option *mode = pp__option("PIPEPROF_MODE");
  CHECK_EQ(pp__option_check(mode, "FLIGHT", &x, want, sizeof want), 0);
  CHECK_EQ(x, 2);
  CHECK_EQ(pp__option_check(mode, "fast", &x, want, sizeof want), -1);
  CHECK_STR(want, "expected stats, trace or flight");

  /* the field: pp_init says the variable's words */
  pp_config cfg;
  pp_config_init(&cfg);
  char out[4200];
  snprintf(out, sizeof out, "%s/o.pptrace", pp_test_tmpdir());
  cfg.out_path = out;
  cfg.gpu_slots = 1;
  CHECK_EQ(pp_init(&cfg), PP_EINVAL);
  CHECK_CONTAINS(pp_last_error(), "gpu_slots 1: expected a number from 2 "
                                  "to 65536");
  cfg.gpu_slots = 0;
  cfg.buffer_kib = 48;
  CHECK_EQ(pp_init(&cfg), PP_EINVAL);
  CHECK_CONTAINS(pp_last_error(), "buffer_kib 48: expected a power of two "
                                  "from 16 to 1048576");
}

/* live: the field when set, else PIPEPROF_LIVE. */
PP_TEST(options_field_wins_over_variable) {
  char out[4200];
  snprintf(out, sizeof out, "%s/o.pptrace", pp_test_tmpdir());
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = out;
  cfg.mode = PP_MODE_STATS;
  pp_live_stats st;
  /* the variable: off */
  setenv("PIPEPROF_LIVE", "off", 1);
  CHECK_EQ(pp_init(&cfg), PP_OK);
  CHECK_EQ(pp_live_zone("z", 0, &st), PP_ENOTSUP);
  CHECK_EQ(pp_shutdown(), PP_OK);
  /* the field says on: it wins */
  cfg.live = "interval=1s";
  CHECK_EQ(pp_init(&cfg), PP_OK);
  CHECK_NE(pp_live_zone("z", 0, &st), PP_ENOTSUP);
  CHECK_EQ(pp_shutdown(), PP_OK);
  /* an invalid variable is not read when the field is set */
  setenv("PIPEPROF_LIVE", "bogus=1", 1);
  CHECK_EQ(pp_init(&cfg), PP_OK);
  CHECK_EQ(pp_shutdown(), PP_OK);
  cfg.live = NULL;
  CHECK_EQ(pp_init(&cfg), PP_EENV);
  /* an invalid field is the program's bad option */
  cfg.live = "bogus=1";
  CHECK_EQ(pp_init(&cfg), PP_EINVAL);
  CHECK_CONTAINS(pp_last_error(), "invalid pp_config.live=\"bogus=1\"");
  unsetenv("PIPEPROF_LIVE");
}
