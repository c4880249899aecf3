/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the argument parsing of the pipeprof command's
 * report, export, demo, run (src/cli/args.c) and diff (src/cli/diff.c)
 * subcommands, run without executing the command: no file is read or
 * written.
 *
 * Input: lines ('\n' or NUL separated). The first line names the
 * subcommand (report, export, demo, run or diff; anything else: all in
 * turn),
 * the others are its arguments, at most 64. A line "PIPEPROF_SLO=SPEC"
 * sets that variable for report (its default SLOs) instead of being an
 * argument. After a successful parse the filled struct must keep the
 * promises of cli.h (a file for report and export, an exporter, the demo's
 * frame count in range, its mode trace or stats); otherwise the target
 * aborts. Usage errors go to stderr and --help to stdout, as in the CLI.
 * Seeds: fuzz/corpus/cli_args/; replayed by ctest fuzz_replay_cli_args.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 64

static void check_report(int argc, char **argv) {
  pp_cli_report_args a;
  int rc = pp_cli_parse_report(argc, argv, &a);
  if (rc == PP_CLI_PARSED) {
    if (!a.file || a.warmup < 0 || a.top_n < -1 || a.top_n > 1000 ||
        a.slo.ttft_ns < 0 || a.slo.tpot_ns < 0 || a.slo.e2e_ns < 0)
      abort();
  } else if (rc != PP_CLI_EXIT_OK && rc != PP_CLI_EXIT_USAGE) {
    abort();
  }
}

static void check_export(int argc, char **argv) {
  pp_cli_export_args a;
  int rc = pp_cli_parse_export(argc, argv, &a);
  if (rc == PP_CLI_PARSED) {
    if (!a.file || !a.fn)
      abort();
  } else if (rc != PP_CLI_EXIT_OK && rc != PP_CLI_EXIT_USAGE) {
    abort();
  }
}

static void check_demo(int argc, char **argv) {
  pp_cli_demo_args a;
  int rc = pp_cli_parse_demo(argc, argv, &a);
  if (rc == PP_CLI_PARSED) {
    if (!a.dir || !a.mode || a.frames < 1 || a.frames > 1000000 ||
        (strcmp(a.mode, "trace") != 0 && strcmp(a.mode, "stats") != 0))
      abort();
  } else if (rc != PP_CLI_EXIT_OK && rc != PP_CLI_EXIT_USAGE) {
    abort();
  }
}

static void check_run(int argc, char **argv) {
  pp_cli_run_args a;
  int rc = pp_cli_parse_run(argc, argv, &a);
  if (rc == PP_CLI_PARSED) {
    if (!a.out || !a.mode || !a.cmd || !a.cmd[0] || a.hz < 1 ||
        a.hz > 1000 || !(a.duration >= 0) || !(a.grid >= 0))
      abort();
  } else if (rc != PP_CLI_EXIT_OK && rc != PP_CLI_EXIT_USAGE) {
    abort();
  }
}

/* diff: -1 valid, 0 --help, 2 usage error; anything else is a bug. */
static void check_diff(int argc, char **argv) {
  int rc = pp_cli_diff_check_args(argc, argv);
  if (rc != -1 && rc != PP_CLI_EXIT_OK && rc != PP_CLI_EXIT_USAGE)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* A NUL-terminated copy cut into lines in place. */
  char *buf = malloc(size + 1);
  if (!buf)
    return 0;
  memcpy(buf, data, size);
  buf[size] = 0;
  char *argv[MAX_ARGS + 2];
  int argc = 0;
  char *slo = NULL;
  size_t start = 0;
  for (size_t i = 0; i <= size && argc < MAX_ARGS + 1; i++) {
    if (i < size && buf[i] != '\n' && buf[i] != 0)
      continue;
    buf[i] = 0;
    char *line = buf + start;
    start = i + 1;
    if (argc > 0 && strncmp(line, "PIPEPROF_SLO=", 13) == 0)
      slo = line + 13;
    else
      argv[argc++] = line;
  }
  argv[argc] = NULL;
  if (argc == 0) {
    free(buf);
    return 0;
  }
  if (slo)
    setenv("PIPEPROF_SLO", slo, 1);
  else
    unsetenv("PIPEPROF_SLO");
  const char *cmd = argv[0];
  int all = strcmp(cmd, "report") && strcmp(cmd, "export") &&
            strcmp(cmd, "demo") && strcmp(cmd, "diff") && strcmp(cmd, "run");
  if (all || strcmp(cmd, "report") == 0)
    check_report(argc, argv);
  if (all || strcmp(cmd, "export") == 0)
    check_export(argc, argv);
  if (all || strcmp(cmd, "demo") == 0)
    check_demo(argc, argv);
  if (all || strcmp(cmd, "diff") == 0)
    check_diff(argc, argv);
  if (all || strcmp(cmd, "run") == 0)
    check_run(argc, argv);
  fflush(stdout);
  unsetenv("PIPEPROF_SLO");
  free(buf);
  return 0;
}
