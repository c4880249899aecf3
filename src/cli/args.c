/* SPDX-License-Identifier: MIT */
/*
 * Argument parsing of the subcommands defined in main.c (report, export,
 * demo), apart from their execution so that fuzz/fuzz_cli_args.c can run
 * it on any argv: each parser fills a struct, prints --help to stdout or
 * one usage-error line to stderr, and touches no file. See cli.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "export/export.h"

const char pp_cli_report_usage[] =
    "usage: pipeprof report [--top N] [--slo SPEC] [--warmup N]\n"
    "                       [--html OUT] FILE.pptrace|RUN_DIR\n"
    "\n"
    "Print the report of a trace: wall time, per-zone table (count, total,\n"
    "self, mean, p50, p90, p99, p99.9, max, % of wall), the top bottlenecks\n"
    "by self time, per-thread busy time, frames, counters, dropped events\n"
    "and the profiler's estimated overhead.\n"
    "\n"
    "  --top N       bottlenecks to list (default 3)\n"
    "  --slo SPEC    request SLOs for goodput, e.g. "
    "ttft=200ms,tpot=40ms,e2e=2s\n"
    "                (default: $PIPEPROF_SLO)\n"
    "  --warmup N    leave the first N requests out of the request figures\n"
    "  --html OUT    also write the HTML report (one self-contained file)\n"
    "                to OUT\n";

const char pp_cli_export_usage[] =
    "usage: pipeprof export FILE.pptrace|RUN_DIR --format "
    "chrome|json|csv|html [-o OUT]\n"
    "\n"
    "  --format chrome  Chrome/Perfetto trace JSON (ui.perfetto.dev)\n"
    "  --format json    summary JSON (schema pipeprof.summary, version 1)\n"
    "  --format csv     per-zone table as CSV\n"
    "  --format html    HTML report: one self-contained file, works "
    "offline\n"
    "  -o, --output OUT output file; '-' or absent: standard output\n";

const char pp_cli_demo_usage[] =
    "usage: pipeprof demo [--out DIR] [--frames N] [--mode stats|trace]\n"
    "\n"
    "Run the bundled example pipeline (source, preprocess, detect, motion,\n"
    "match, visualize) under the profiler, write DIR/demo.pptrace,\n"
    "DIR/demo.chrome.json (open in ui.perfetto.dev), DIR/demo.summary.json\n"
    "and DIR/demo.html (the HTML report), then print the report.\n"
    "\n"
    "  --out DIR     output directory (default pipeprof-demo)\n"
    "  --frames N    frames to process (default 300)\n"
    "  --mode MODE   trace (default) or stats\n";

int pp_cli_usage_error(const char *cmd, const char *fmt, const char *arg) {
  fprintf(stderr, "pipeprof%s%s: ", cmd ? " " : "", cmd ? cmd : "");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, " (see 'pipeprof %s%s--help')\n", cmd ? cmd : "",
          cmd ? " " : "");
  return PP_CLI_EXIT_USAGE;
}

int pp_cli_is_help(const char *a) {
  return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

static int parse_int(const char *s, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi)
    return -1;
  *out = v;
  return 0;
}

int pp_cli_parse_report(int argc, char **argv, pp_cli_report_args *a) {
  memset(a, 0, sizeof *a);
  const char *slo_spec = getenv("PIPEPROF_SLO");
  const char *slo_from = "PIPEPROF_SLO";
  for (int i = 1; i < argc; i++) {
    if (pp_cli_is_help(argv[i])) {
      fputs(pp_cli_report_usage, stdout);
      return PP_CLI_EXIT_OK;
    } else if (strcmp(argv[i], "--top") == 0) {
      long v;
      if (i + 1 >= argc)
        return pp_cli_usage_error("report", "%s needs a number", "--top");
      if (parse_int(argv[++i], 0, 1000, &v) != 0)
        return pp_cli_usage_error("report", "bad --top value '%s'", argv[i]);
      a->top_n = v == 0 ? -1 : (int)v;
    } else if (strcmp(argv[i], "--slo") == 0) {
      if (i + 1 >= argc)
        return pp_cli_usage_error("report", "%s needs a specification",
                                  "--slo");
      slo_spec = argv[++i];
      slo_from = "--slo";
    } else if (strcmp(argv[i], "--warmup") == 0) {
      if (i + 1 >= argc)
        return pp_cli_usage_error("report", "%s needs a number", "--warmup");
      if (parse_int(argv[++i], 0, 1000000000L, &a->warmup) != 0)
        return pp_cli_usage_error("report", "bad --warmup value '%s'", argv[i]);
    } else if (strcmp(argv[i], "--html") == 0) {
      if (i + 1 >= argc)
        return pp_cli_usage_error("report", "%s needs a file", "--html");
      a->html = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return pp_cli_usage_error("report", "unknown option '%s'", argv[i]);
    } else if (a->file) {
      return pp_cli_usage_error("report", "unexpected argument '%s'", argv[i]);
    } else {
      a->file = argv[i];
    }
  }
  if (!a->file)
    return pp_cli_usage_error("report", "missing trace file%s", "");
  if (slo_spec && *slo_spec) {
    char err[160];
    if (pp_slo_parse(slo_spec, &a->slo, err, sizeof err) != 0) {
      fprintf(stderr, "pipeprof report: %s: %s\n", slo_from, err);
      return PP_CLI_EXIT_USAGE;
    }
  }
  return PP_CLI_PARSED;
}

static pp_cli_export_fn find_format(const char *name) {
  if (strcmp(name, "chrome") == 0 || strcmp(name, "perfetto") == 0)
    return pp_export_chrome;
  if (strcmp(name, "json") == 0)
    return pp_export_summary_json;
  if (strcmp(name, "csv") == 0)
    return pp_export_csv;
  if (strcmp(name, "html") == 0)
    return pp_export_html;
  return NULL;
}

int pp_cli_parse_export(int argc, char **argv, pp_cli_export_args *a) {
  memset(a, 0, sizeof *a);
  const char *format = NULL;
  for (int i = 1; i < argc; i++) {
    if (pp_cli_is_help(argv[i])) {
      fputs(pp_cli_export_usage, stdout);
      return PP_CLI_EXIT_OK;
    } else if (strcmp(argv[i], "--format") == 0 || strcmp(argv[i], "-f") == 0) {
      if (i + 1 >= argc)
        return pp_cli_usage_error("export", "%s needs a value", argv[i]);
      format = argv[++i];
    } else if (strncmp(argv[i], "--format=", 9) == 0) {
      format = argv[i] + 9;
    } else if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
      if (i + 1 >= argc)
        return pp_cli_usage_error("export", "%s needs a file", argv[i]);
      a->out = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return pp_cli_usage_error("export", "unknown option '%s'", argv[i]);
    } else if (a->file) {
      return pp_cli_usage_error("export", "unexpected argument '%s'", argv[i]);
    } else {
      a->file = argv[i];
    }
  }
  if (!a->file)
    return pp_cli_usage_error("export", "missing trace file%s", "");
  if (!format)
    return pp_cli_usage_error("export", "missing --format%s", "");
  a->fn = find_format(format);
  if (!a->fn)
    return pp_cli_usage_error("export",
                              "unknown format '%s' (expected chrome, json, "
                              "csv or html)",
                              format);
  return PP_CLI_PARSED;
}

int pp_cli_parse_demo(int argc, char **argv, pp_cli_demo_args *a) {
  a->dir = "pipeprof-demo";
  a->mode = "trace";
  a->frames = 300;
  for (int i = 1; i < argc; i++) {
    if (pp_cli_is_help(argv[i])) {
      fputs(pp_cli_demo_usage, stdout);
      return PP_CLI_EXIT_OK;
    } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      a->dir = argv[++i];
    } else if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc) {
      if (parse_int(argv[++i], 1, 1000000, &a->frames) != 0)
        return pp_cli_usage_error("demo", "bad --frames value '%s'", argv[i]);
    } else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
      a->mode = argv[++i];
      if (strcmp(a->mode, "trace") != 0 && strcmp(a->mode, "stats") != 0)
        return pp_cli_usage_error("demo", "bad --mode '%s' (trace or stats)",
                                  a->mode);
    } else {
      return pp_cli_usage_error("demo", "unknown or incomplete option '%s'",
                                argv[i]);
    }
  }
  return PP_CLI_PARSED;
}
