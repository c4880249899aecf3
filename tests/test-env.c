/* SPDX-License-Identifier: MIT */
/*
 * Configuration by environment: what pp_init_from_env() does with invalid
 * PIPEPROF_* values (one line on stderr, profiling off, no file created,
 * the program runs on).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "pipeprof.h"
#include "runner.h"

typedef struct env_run {
  int rc;
  int running;
  char *err; /* what it printed on stderr (malloc'ed) */
} env_run;

/* pp_init_from_env() with stderr captured; the session, if any, is shut
 * down. */
static env_run init_from_env(void) {
  char p[4200];
  snprintf(p, sizeof p, "%s/stderr.txt", pp_test_tmpdir());
  fflush(stderr);
  int saved = dup(2);
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(saved >= 0 && fd >= 0);
  dup2(fd, 2);
  close(fd);
  env_run r;
  r.rc = pp_init_from_env();
  r.running = pp_is_running();
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  if (r.running)
    CHECK_EQ(pp_shutdown(), PP_OK);
  r.err = pp_test_slurp(p, NULL);
  CHECK(r.err != NULL);
  return r;
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static void env_out(char *path, size_t len) {
  snprintf(path, len, "%s/env.pptrace", pp_test_tmpdir());
  setenv("PIPEPROF", "1", 1);
  setenv("PIPEPROF_OUT", path, 1);
  unsetenv("PIPEPROF_OWNER_PID");
}

/* An invalid PIPEPROF_LIVE or PIPEPROF_ALERTS: one line, profiling off,
 * and no output file (before the fix a 0-byte one was left behind). */
PP_TEST(env_invalid_live_or_alerts_creates_no_file) {
  char path[4200];
  env_out(path, sizeof path);
  const char *vars[] = {"PIPEPROF_LIVE", "PIPEPROF_ALERTS"};
  for (int i = 0; i < 2; i++) {
    unsetenv("PIPEPROF_LIVE");
    unsetenv("PIPEPROF_ALERTS");
    setenv(vars[i], "bogus=1", 1);
    env_run r = init_from_env();
    CHECK_EQ(r.rc, PP_EENV);
    CHECK(!r.running);
    CHECK_EQ(pp_test_count_lines(r.err), 1);
    CHECK_CONTAINS(r.err, "profiling is off");
    CHECK(!exists(path));
    free(r.err);
  }
  /* A valid value then records to the file. */
  unsetenv("PIPEPROF_LIVE");
  setenv("PIPEPROF_ALERTS", "off", 1);
  env_run r = init_from_env();
  CHECK_EQ(r.rc, PP_OK);
  CHECK(r.running);
  CHECK_STR(r.err, "");
  CHECK(exists(path));
  free(r.err);
}

/* A session already running: the second pp_init_from_env fails without
 * creating (or truncating) anything either. */
PP_TEST(env_failed_init_leaves_existing_file_alone) {
  char path[4200];
  env_out(path, sizeof path);
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  fputs("earlier", f);
  fclose(f);
  setenv("PIPEPROF_LIVE", "bogus=1", 1);
  env_run r = init_from_env();
  CHECK_EQ(r.rc, PP_EENV);
  free(r.err);
  size_t len;
  char *d = pp_test_slurp(path, &len);
  CHECK(d != NULL);
  CHECK_STR(d, "earlier");
  free(d);
}
