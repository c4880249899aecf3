/* SPDX-License-Identifier: MIT */
/*
 * The pipeprof command: a table of subcommands (report, export, demo,
 * version, help). Usage errors print one line on stderr and exit 2;
 * failures print one line and exit 1; --help prints to stdout and exits 0.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "cli.h"
#include "core/options.h"
#include "export/export.h"
#include "model/trace.h"
#include "pipeprof.h"

/* The command runs sessions of its own (`pipeprof run`): PIPEPROF=1 in its
 * environment is meant for the program it profiles. */
const int pp__no_autostart = 1;

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

typedef struct command {
  const char *name;
  int (*fn)(int argc, char **argv);
  const char *summary;
  const char *usage;
} command;

/* ---- report ------------------------------------------------------------- */

static int cmd_report(int argc, char **argv) {
  pp_cli_report_args a;
  int prc = pp_cli_parse_report(argc, argv, &a);
  if (prc != PP_CLI_PARSED)
    return prc;
  const char *file = a.file, *html = a.html;
  pp_slo slo = a.slo;
  long warmup = a.warmup;
  pp_report_opts opts = {0};
  opts.top_n = a.top_n;
  pp_trace t;
  pp_analysis an;
  if (pp_cli_load_with(file, &t, &an, a.details, (uint64_t)warmup, &slo,
                       &a.with) != 0)
    return EXIT_FAIL;
  /* The HTML file first: a failure to create it then leaves nothing but
   * its one error line. */
  int rc = html ? pp_cli_export_to(&an, pp_export_html, html) : EXIT_OK;
  if (rc == EXIT_OK)
    rc = pp_report_text(stdout, &an, &opts) == 0 ? EXIT_OK : -1;
  pp_analysis_free(&an);
  pp_trace_free(&t);
  if (rc == EXIT_FAIL)
    return EXIT_FAIL;
  if (rc != 0 || fflush(stdout) != 0) {
    fprintf(stderr, "pipeprof: cannot write the report\n");
    return EXIT_FAIL;
  }
  return EXIT_OK;
}

/* ---- export ------------------------------------------------------------- */

static int cmd_export(int argc, char **argv) {
  pp_cli_export_args a;
  int prc = pp_cli_parse_export(argc, argv, &a);
  if (prc != PP_CLI_PARSED)
    return prc;
  const char *file = a.file, *out = a.out;
  pp_cli_export_fn fn = a.fn;
  if (fn == pp_export_chrome) /* every event; --details: a run dir only */
    return pp_cli_export_chrome_with(
        file, out, a.details_set ? a.details : UINT64_MAX, &a.with);
  pp_trace t;
  pp_analysis an;
  if (pp_cli_load_with(file, &t, &an, a.details, 0, &a.slo, &a.with) != 0)
    return EXIT_FAIL;
  int rc = pp_cli_export_to(&an, fn, out);
  pp_analysis_free(&an);
  pp_trace_free(&t);
  return rc;
}

/* ---- demo ----------------------------------------------------------------- */

static int find_example(char *out, size_t len) {
  const char *env = getenv("PIPEPROF_EXAMPLE");
  if (env && *env) {
    snprintf(out, len, "%s", env);
    return access(out, X_OK) == 0 ? 0 : -1;
  }
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return -1;
  self[n] = 0;
  char *dir = dirname(self);
  static const char *const rel[] = {
      "pipeprof-example-pipeline",
      "../libexec/pipeprof/pipeprof-example-pipeline"};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    snprintf(out, len, "%s/%s", dir, rel[i]);
    if (access(out, X_OK) == 0)
      return 0;
  }
  return -1;
}

static int cmd_demo(int argc, char **argv) {
  pp_cli_demo_args a;
  int prc = pp_cli_parse_demo(argc, argv, &a);
  if (prc != PP_CLI_PARSED)
    return prc;
  const char *dir = a.dir, *mode = a.mode;
  long frames = a.frames;
  char exe[PATH_MAX];
  if (find_example(exe, sizeof exe) != 0) {
    fprintf(stderr, "pipeprof: cannot find the example pipeline "
                    "(pipeprof-example-pipeline); set PIPEPROF_EXAMPLE\n");
    return EXIT_FAIL;
  }
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "pipeprof: cannot create %s: %s\n", dir, strerror(errno));
    return EXIT_FAIL;
  }
  char trace[PATH_MAX], chrome[PATH_MAX], summary[PATH_MAX], html[PATH_MAX];
  char nframes[32];
  snprintf(trace, sizeof trace, "%s/demo.pptrace", dir);
  snprintf(chrome, sizeof chrome, "%s/demo.chrome.json", dir);
  snprintf(summary, sizeof summary, "%s/demo.summary.json", dir);
  snprintf(html, sizeof html, "%s/demo.html", dir);
  snprintf(nframes, sizeof nframes, "%ld", frames);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "pipeprof: fork failed: %s\n", strerror(errno));
    return EXIT_FAIL;
  }
  if (pid == 0) {
    setenv("PIPEPROF", "1", 1);
    setenv("PIPEPROF_OUT", trace, 1);
    setenv("PIPEPROF_MODE", mode, 1);
    unsetenv("PIPEPROF_OWNER_PID");
    execl(exe, exe, "--frames", nframes, (char *)NULL);
    fprintf(stderr, "pipeprof: cannot run %s: %s\n", exe, strerror(errno));
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    fprintf(stderr, "pipeprof: the example pipeline failed (%s %d)\n",
            WIFEXITED(st) ? "exit" : "signal",
            WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    return EXIT_FAIL;
  }
  pp_trace t;
  pp_analysis an;
  if (pp_cli_load_keep(trace, &t, &an, UINT64_MAX) != 0)
    return EXIT_FAIL;
  int rc = pp_cli_export_to(&an, pp_export_chrome, chrome);
  if (rc == EXIT_OK)
    rc = pp_cli_export_to(&an, pp_export_summary_json, summary);
  if (rc == EXIT_OK)
    rc = pp_cli_export_to(&an, pp_export_html, html);
  if (rc == EXIT_OK) {
    printf("\n");
    pp_report_text(stdout, &an, NULL);
    printf("\nwrote %s\n      %s (open in https://ui.perfetto.dev)\n"
           "      %s\n      %s (open in a web browser)\n",
           trace, chrome, summary, html);
  }
  pp_analysis_free(&an);
  pp_trace_free(&t);
  return rc;
}

/* ---- version, help ----------------------------------------------------- */

static const char version_usage[] =
    "usage: pipeprof version\n"
    "\n"
    "Print the version of pipeprof and the trace format it reads.\n";

static const char help_usage[] =
    "usage: pipeprof help [COMMAND | env [--markdown]]\n"
    "\n"
    "Without COMMAND, list the commands; with one, print its usage. 'env'\n"
    "lists the PIPEPROF_* variables of programs linked with libpipeprof\n"
    "(--markdown: as the table of docs/api.md).\n";

static int cmd_version(int argc, char **argv) {
  if (argc > 1 && pp_cli_is_help(argv[1])) {
    fputs(version_usage, stdout);
    return EXIT_OK;
  }
  printf("pipeprof %s (trace format %u)\n", pp_version_string(), 1u);
  return EXIT_OK;
}

static int cmd_help(int argc, char **argv);

static const command commands[] = {
    {"report", cmd_report, "print the report of a trace", pp_cli_report_usage},
    {"export", cmd_export,
     "convert a trace to Chrome JSON, summary JSON, "
     "CSV or HTML",
     pp_cli_export_usage},
    {"run", pp_cli_run, "run a command under the profiler and report",
     "usage: pipeprof run [options] -- CMD [ARGS...] (see --help)\n"},
    {"diff", pp_cli_diff, "compare runs and flag regressions (exit 1)",
     "usage: pipeprof diff [options] BASE... -- NEW... (see --help)\n"},
    {"history", pp_cli_history, "record runs and show metric trends",
     "usage: pipeprof history [--db PATH] add|list|show ... (see --help)\n"},
    {"sweep", pp_cli_sweep, "run a command per parameter value and compare",
     pp_cli_sweep_usage},
    {"serve", pp_cli_serve,
     "serve a trace's report, /metrics and JSON over "
     "HTTP",
     pp_cli_serve_usage},
    {"recover", pp_cli_recover,
     "finish the traces of processes killed while recording",
     "usage: pipeprof recover [--list] [PATH...] (see --help)\n"},
    {"demo", cmd_demo, "profile the bundled example pipeline",
     pp_cli_demo_usage},
    {"version", cmd_version, "print the version", version_usage},
    {"help", cmd_help, "show help for a command", help_usage},
};

static void main_usage(FILE *f) {
  fprintf(f, "usage: pipeprof [--version] [--help] COMMAND [ARGS]\n\n"
             "pipeprof %s: a low-overhead profiler for GPU and ML inference "
             "pipelines.\n\ncommands:\n",
          pp_version_string());
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\nRun 'pipeprof COMMAND --help' for a command's options.\n"
             "Programs linked with libpipeprof record when PIPEPROF=1 is set "
             "('pipeprof help env').\n");
}

static int cmd_help(int argc, char **argv) {
  if (argc < 2) {
    main_usage(stdout);
    return EXIT_OK;
  }
  if (pp_cli_is_help(argv[1])) {
    fputs(help_usage, stdout);
    return EXIT_OK;
  }
  if (strcmp(argv[1], "env") == 0) {
    int md = argc > 2 && strcmp(argv[2], "--markdown") == 0;
    if (argc > 2 + md)
      return pp_cli_usage_error("help", "unknown option '%s'", argv[2 + md]);
    pp__options_print(stdout, md);
    return EXIT_OK;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(argv[1], commands[i].name) == 0) {
      fputs(commands[i].usage, stdout);
      return EXIT_OK;
    }
  return pp_cli_usage_error("help", "unknown command '%s'", argv[1]);
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_DFL);
  if (argc < 2) {
    main_usage(stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (pp_cli_is_help(cmd)) {
    main_usage(stdout);
    return EXIT_OK;
  }
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0)
    return cmd_version(argc - 1, argv + 1);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(cmd, commands[i].name) == 0)
      return commands[i].fn(argc - 1, argv + 1);
  fprintf(stderr, "pipeprof: unknown command '%s' (see 'pipeprof --help')\n",
          cmd);
  return EXIT_USAGE;
}
