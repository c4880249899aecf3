/* SPDX-License-Identifier: MIT */
/*
 * Where a session writes (sink/out.c, pp__out_create): in a shared folder
 * an attacker may plant the output's name first. A symbolic link, a hard
 * link to someone's file, another user's file or a FIFO is refused with
 * one line naming the path and the reason, leaving what it points to
 * untouched, and a FIFO with no reader never blocks the program; a file of
 * our own is emptied and written, and /dev/null takes a trace.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format/pptrace.h"
#include "pipeprof.h"
#include "runner.h"

static void opath(char *buf, size_t len, const char *name) {
  snprintf(buf, len, "%s/%s", pp_test_tmpdir(), name);
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  fputs(text, f);
  CHECK_EQ(fclose(f), 0);
}

static int init_to(const char *path, pp_mode mode) {
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.mode = mode;
  return pp_init(&cfg);
}

/* What path holds (at most 255 bytes). */
static void slurp(const char *path, char *buf, size_t n) {
  buf[0] = 0;
  FILE *f = fopen(path, "r");
  if (!f)
    return;
  size_t k = fread(buf, 1, n - 1, f);
  buf[k] = 0;
  fclose(f);
}

/* A symbolic link planted at the output's name: refused in every mode,
 * the file it points to unchanged. */
PP_TEST(outfile_symlink_is_refused) {
  static const pp_mode modes[] = {PP_MODE_TRACE, PP_MODE_STATS,
                                  PP_MODE_FLIGHT};
  char victim[4096], lpath[4096], got[256];
  opath(victim, sizeof victim, "victim.txt");
  opath(lpath, sizeof lpath, "planted.pptrace");
  put(victim, "precious\n");
  CHECK_EQ(symlink(victim, lpath), 0);
  for (size_t m = 0; m < 3; m++) {
    CHECK_EQ(init_to(lpath, modes[m]), PP_EIO);
    CHECK(!pp_is_running());
    CHECK_CONTAINS(pp_last_error(), "planted.pptrace is a symbolic link: "
                                    "refused");
    slurp(victim, got, sizeof got);
    CHECK_STR(got, "precious\n");
  }
}

/* A hard link to a file of ours elsewhere: writing would change it. */
PP_TEST(outfile_hard_link_is_refused) {
  char victim[4096], lpath[4096], got[256];
  opath(victim, sizeof victim, "victim2.txt");
  opath(lpath, sizeof lpath, "linked.pptrace");
  put(victim, "precious\n");
  CHECK_EQ(link(victim, lpath), 0);
  CHECK_EQ(init_to(lpath, PP_MODE_TRACE), PP_EIO);
  CHECK_CONTAINS(pp_last_error(), "linked.pptrace has other hard links");
  slurp(victim, got, sizeof got);
  CHECK_STR(got, "precious\n");
}

/* A FIFO with no reader: refused at once, not a program blocked before
 * main(); with a reader it is still no trace file. */
PP_TEST(outfile_fifo_does_not_block) {
  char fifo[4096];
  opath(fifo, sizeof fifo, "pipe.pptrace");
  CHECK_EQ(mkfifo(fifo, 0600), 0);
  CHECK_EQ(init_to(fifo, PP_MODE_TRACE), PP_EIO);
  CHECK_CONTAINS(pp_last_error(), "pipe.pptrace is a FIFO with no reader");
  int r = open(fifo, O_RDONLY | O_NONBLOCK);
  CHECK(r >= 0);
  CHECK_EQ(init_to(fifo, PP_MODE_TRACE), PP_EIO);
  CHECK_CONTAINS(pp_last_error(), "pipe.pptrace is not a regular file");
  close(r);
}

/* Another user's file (root only: the test makes one with chown). */
PP_TEST(outfile_other_users_file_is_refused) {
  if (geteuid() != 0) {
    printf("# skipped: making another user's file needs root\n");
    return;
  }
  char path[4096], got[256];
  opath(path, sizeof path, "nobodys.pptrace");
  put(path, "theirs\n");
  CHECK_EQ(chown(path, 65534, 65534), 0);
  CHECK_EQ(init_to(path, PP_MODE_TRACE), PP_EIO);
  CHECK_CONTAINS(pp_last_error(), "nobodys.pptrace belongs to another user");
  slurp(path, got, sizeof got);
  CHECK_STR(got, "theirs\n");
}

/* A file of our own is emptied and written; /dev/null takes a trace. */
PP_TEST(outfile_own_file_and_dev_null) {
  char path[4096];
  opath(path, sizeof path, "mine.pptrace");
  put(path, "an old file, longer than a trace's header would be............"
            "................................................................"
            "................................................................"
            "................................................................"
            "................................................................"
            "................................................................"
            "................................................................"
            "................................................................");
  CHECK_EQ(init_to(path, PP_MODE_TRACE), PP_OK);
  for (int i = 0; i < 10; i++) {
    PP_ZONE("mine");
  }
  CHECK_EQ(pp_shutdown(), PP_OK);
  char head[8] = "";
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL);
  CHECK_EQ(fread(head, 1, 8, f), 8);
  fclose(f);
  CHECK(memcmp(head, PPT_FILE_MAGIC, 8) == 0); /* a trace, not the old text */
  CHECK_EQ(init_to("/dev/null", PP_MODE_TRACE), PP_OK);
  for (int i = 0; i < 10; i++) {
    PP_ZONE("nowhere");
  }
  CHECK_EQ(pp_shutdown(), PP_OK);
}

/* The same through the environment, before main(): a program profiled
 * with PIPEPROF=1 into a FIFO with no reader runs on, profiling off. */
PP_TEST(outfile_env_fifo_program_runs) {
  char fifo[4096];
  opath(fifo, sizeof fifo, "env-pipe.pptrace");
  CHECK_EQ(mkfifo(fifo, 0600), 0);
  char *out = NULL;
  int rc = pp_test_run(&out,
                       "timeout 60 env PIPEPROF=1 PIPEPROF_OUT='%s' "
                       "'%s/pipeprof-example-pipeline' --frames 3 --quiet 2>&1",
                       fifo, pp_test_bindir());
  CHECK_EQ(rc, 0);
  CHECK_CONTAINS(out, "env-pipe.pptrace is a FIFO with no reader: refused; "
                      "profiling is off");
  CHECK_CONTAINS(out, "pipeline: 3 frames");
  free(out);
}
