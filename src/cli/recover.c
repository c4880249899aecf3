/* SPDX-License-Identifier: MIT */
/*
 * `pipeprof recover`: salvage the traces of processes that died before
 * their writer finished (src/salvage/), and the same salvage done by every
 * command that reads a trace (pp_cli_salvage).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "salvage/salvage.h"

void pp_cli_salvage(const char *path, const char *how) {
  pp_salvage_result r;
  char msg[PATH_MAX + 256];
  int rc = pp_salvage(path, how, &r, msg, sizeof msg);
  if (rc == PP_SALVAGE_DONE || rc == PP_SALVAGE_ERROR)
    fprintf(stderr, "pipeprof: %s%s\n",
            rc == PP_SALVAGE_ERROR ? "cannot salvage: " : "", msg);
}

static int ends_with(const char *s, const char *tail) {
  size_t a = strlen(s), b = strlen(tail);
  return a >= b && !strcmp(s + a - b, tail);
}

/* One path: an arena (*.rings), a run directory, or a trace. Returns 1
 * when something was salvaged, 0 when nothing was to do, -1 on an error. */
static int recover_one(const char *path, int list) {
  pp_salvage_result r;
  char msg[PATH_MAX + 256];
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    if (!d) {
      fprintf(stderr, "pipeprof recover: %s: %s\n", path, strerror(errno));
      return -1;
    }
    int worst = 0, any = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (strncmp(e->d_name, "app.pptrace", 11) != 0 &&
          !ends_with(e->d_name, ".pptrace"))
        continue;
      char p[PATH_MAX];
      snprintf(p, sizeof p, "%s/%s", path, e->d_name);
      int rc = recover_one(p, list);
      any |= rc > 0;
      worst = rc < worst ? rc : worst;
    }
    closedir(d);
    return worst < 0 ? -1 : any;
  }
  if (list) {
    printf("%s\n", path);
    return 0;
  }
  int rc = ends_with(path, ".rings")
               ? pp_salvage_arena(path, NULL, &r, msg, sizeof msg)
               : pp_salvage(path, NULL, &r, msg, sizeof msg);
  printf("%s\n", msg);
  return rc == PP_SALVAGE_DONE ? 1 : rc == PP_SALVAGE_NOTHING ? 0 : -1;
}

/* This user's arenas in dir. */
static int recover_dir_rings(const char *dir, int list, int *found) {
  DIR *d = opendir(dir);
  if (!d)
    return 0;
  int worst = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, "pipeprof-", 9) != 0 ||
        !ends_with(e->d_name, ".rings"))
      continue;
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    struct stat st;
    if (lstat(p, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
      continue;
    ++*found;
    int rc = recover_one(p, list);
    worst = rc < worst ? rc : worst;
  }
  closedir(d);
  return worst;
}

static const char usage[] =
    "usage: pipeprof recover [--list] [PATH...]\n"
    "\n"
    "Finish the traces of processes that died before pipeprof could (kill "
    "-9,\nthe OOM killer, a crash): what their threads recorded but had not "
    "written\nyet is read from their durable rings and appended, with how "
    "much was\nrecovered. PATH: a trace, a run directory, or a rings file "
    "(*.rings);\nnone: every rings file of yours in PIPEPROF_RINGS_DIR (when "
    "set) or\n/dev/shm.\n`pipeprof report`, `export` and `run` do this by "
    "themselves.\n"
    "\n"
    "  --list   list the rings files (or traces) instead of salvaging\n";

int pp_cli_recover(int argc, char **argv) {
  int list = 0, i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(usage, stdout);
      return PP_CLI_EXIT_OK;
    }
    if (!strcmp(argv[i], "--list"))
      list = 1;
    else if (!strcmp(argv[i], "--"))
      break;
    else
      return pp_cli_usage_error("recover", "unknown option '%s'", argv[i]);
  }
  if (i < argc && !strcmp(argv[i], "--"))
    i++;
  int worst = 0;
  if (i == argc) {
    int found = 0;
    const char *env = getenv("PIPEPROF_RINGS_DIR");
    const char *where =
        env && *env && strcmp(env, "off") != 0 ? env : "/dev/shm";
    worst = recover_dir_rings(where, list, &found);
    if (!found)
      printf("no rings files of yours to recover in %s\n", where);
  }
  for (; i < argc; i++) {
    int rc = recover_one(argv[i], list);
    worst = rc < worst ? rc : worst;
  }
  return worst < 0 ? 1 : 0;
}
