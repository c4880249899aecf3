/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the pipeprof subcommands (the files of src/cli).
 */
#ifndef PP_CLI_H
#define PP_CLI_H

#include <stdio.h>

#include "analyze/model.h"

/* Load and analyse a trace file, or a run directory written by `pipeprof
 * run` (its app.pptrace, the app.pptrace.<pid> files of programs it
 * started, and system.pptrace, merged). Prints one line on stderr and
 * returns -1 on failure. */
int pp_cli_load(const char *path, pp_trace *t);

/* Write t with an exporter to a file ("-" or NULL: stdout). Returns the exit
 * code: 0, or 1 after printing one line. */
int pp_cli_export_to(const pp_trace *t, int (*fn)(FILE *, const pp_trace *),
                     const char *out);

/* Remove DIR/app.pptrace.<pid> files left by an earlier run. */
void pp_cli_remove_children(const char *dir);

int pp_cli_run(int argc, char **argv);
int pp_cli_diff(int argc, char **argv);
/* diff's argument parsing alone (for a fuzz target): its exit code (0
 * --help, 2 usage error), or -1 when the arguments are valid. */
int pp_cli_diff_check_args(int argc, char **argv);
int pp_cli_history(int argc, char **argv);

#endif /* PP_CLI_H */
