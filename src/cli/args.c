/* SPDX-License-Identifier: MIT */
/*
 * Argument parsing of the subcommands defined in main.c (report, export,
 * demo), apart from their execution so that fuzz/fuzz_cli_args.c can run
 * it on any argv: each parser fills a struct, prints --help to stdout or
 * one usage-error line to stderr, and touches no file. See cli.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "export/export.h"

const char pp_cli_report_usage[] =
    "usage: pipeprof report [--top N] [--slo SPEC] [--warmup N]\n"
    "                       [--details N|all] [--html OUT]\n"
    "                       [--with PROFILE [--offset NS]] "
    "FILE.pptrace|RUN_DIR\n"
    "\n"
    "Print the report of a trace: wall time, per-zone table (count, total,\n"
    "self, mean, p50, p90, p99, p99.9, max, % of wall), the top bottlenecks\n"
    "by self time, per-thread busy time, frames, counters, dropped events\n"
    "and the profiler's estimated overhead. FILE may also be a\n"
    "torch.profiler Chrome trace or an ONNX Runtime profile (JSON).\n"
    "\n"
    "  --top N       bottlenecks to list (default 3)\n"
    "  --slo SPEC    SLOs: ttft, tpot and e2e of requests (goodput), any\n"
    "                other name a zone's (each instance within it), e.g.\n"
    "                ttft=200ms,e2e=2s,infer=5ms (default: $PIPEPROF_SLO)\n"
    "  --warmup N    leave the first N requests out of the request figures\n"
    "  --details N   events kept for the details (timeline, zone\n"
    "                instances, flows, stages; default 2000000; all: every\n"
    "                event); every statistic counts every event\n"
    "  --html OUT    also write the HTML report (one self-contained file)\n"
    "                to OUT\n"
    "  --with PROFILE  merge a torch.profiler or ONNX Runtime profile of\n"
    "                the same process, aligned by wall clock (repeatable,\n"
    "                up to 8): its threads and operators join the report\n"
    "  --offset NS   move the profiles by NS ns; for one with no clock to\n"
    "                align by, from the trace's start\n";

const char pp_cli_export_usage[] =
    "usage: pipeprof export FILE.pptrace|RUN_DIR --format "
    "chrome|json|csv|html [-o OUT]\n"
    "                       [--details N|all] [--slo SPEC]\n"
    "                       [--with PROFILE [--offset NS]]\n"
    "\n"
    "  --format chrome  Chrome/Perfetto trace JSON (ui.perfetto.dev)\n"
    "  --format json    summary JSON (schema pipeprof.summary, version 1)\n"
    "  --format csv     per-zone table as CSV\n"
    "  --format html    HTML report: one self-contained file, works "
    "offline\n"
    "  -o, --output OUT output file; '-' or absent: standard output\n"
    "  --details N      as for report; chrome: a run directory only, its\n"
    "                   files merged in memory (without it, or with all,\n"
    "                   every event of every file streams)\n"
    "  --slo SPEC       SLOs of requests and zones (as for report;\n"
    "                   default: $PIPEPROF_SLO): json and html\n"
    "  --with PROFILE   merge a torch.profiler or ONNX Runtime profile of\n"
    "                   the same process by wall clock (as for report)\n"
    "  --offset NS      move the profiles by NS ns (as for report)\n"
    "\n"
    "FILE may also be a torch.profiler Chrome trace or an ONNX Runtime\n"
    "profile (JSON), recognised by content.\n";

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

/* --details N|all: events kept for the details (pp_cli_load_keep). */
static int parse_details(const char *s, uint64_t *out) {
  if (strcmp(s, "all") == 0) {
    *out = UINT64_MAX;
    return 0;
  }
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *end || *s < '0' || *s > '9' ||
      v > UINT64_C(1000000000000))
    return -1;
  *out = (uint64_t)v;
  return 0;
}

/* --with FILE and --offset NS at argv[*i] (report, export): 1 when taken
 * (*i moved past its value), 0 when argv[*i] is neither, or the usage
 * error's exit status. */
static int parse_with(const char *cmd, int argc, char **argv, int *i,
                      pp_cli_with *w) {
  const char *opt = argv[*i];
  if (strcmp(opt, "--with") == 0) {
    if (*i + 1 >= argc)
      return pp_cli_usage_error(cmd, "%s needs a profile file", opt);
    if (w->n >= PP_CLI_WITH_MAX)
      return pp_cli_usage_error(cmd, "at most 8 profiles with --with (%s)",
                                argv[*i + 1]);
    w->files[w->n++] = argv[++*i];
    return 1;
  }
  if (strcmp(opt, "--offset") == 0) {
    if (*i + 1 >= argc)
      return pp_cli_usage_error(cmd, "%s needs a number of ns", opt);
    const char *s = argv[++*i];
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
      return pp_cli_usage_error(cmd, "bad --offset value '%s' (ns)", s);
    w->offset_ns = v;
    w->offset_set = 1;
    return 1;
  }
  return 0;
}

/* --offset without --with is a mistake. */
static int check_with(const char *cmd, const pp_cli_with *w) {
  if (w->offset_set && !w->n)
    return pp_cli_usage_error(cmd, "%s is for a profile given with --with",
                              "--offset");
  return PP_CLI_PARSED;
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

/* The SLO specification spec, given by from (--slo or PIPEPROF_SLO), into
 * *slo: PP_CLI_PARSED, or one error line and PP_CLI_EXIT_USAGE. */
static int parse_slo(const char *cmd, const char *spec, const char *from,
                     pp_slo *slo) {
  if (!spec || !*spec)
    return PP_CLI_PARSED;
  char err[160];
  if (pp_slo_parse(spec, slo, err, sizeof err) != 0) {
    fprintf(stderr, "pipeprof %s: %s: %s\n", cmd, from, err);
    return PP_CLI_EXIT_USAGE;
  }
  return PP_CLI_PARSED;
}

int pp_cli_parse_report(int argc, char **argv, pp_cli_report_args *a) {
  memset(a, 0, sizeof *a);
  a->details = PP_CLI_KEEP_EVENTS;
  const char *slo_spec = getenv("PIPEPROF_SLO");
  const char *slo_from = "PIPEPROF_SLO";
  for (int i = 1; i < argc; i++) {
    int w = parse_with("report", argc, argv, &i, &a->with);
    if (w == 1)
      continue;
    if (w != 0)
      return w;
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
    } else if (strcmp(argv[i], "--details") == 0) {
      if (i + 1 >= argc)
        return pp_cli_usage_error("report", "%s needs a number or all",
                                  "--details");
      if (parse_details(argv[++i], &a->details) != 0)
        return pp_cli_usage_error("report", "bad --details value '%s'",
                                  argv[i]);
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
  if (check_with("report", &a->with) != PP_CLI_PARSED)
    return PP_CLI_EXIT_USAGE;
  return parse_slo("report", slo_spec, slo_from, &a->slo);
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
  a->details = PP_CLI_KEEP_EVENTS;
  const char *format = NULL;
  const char *slo_spec = getenv("PIPEPROF_SLO");
  const char *slo_from = "PIPEPROF_SLO";
  for (int i = 1; i < argc; i++) {
    int w = parse_with("export", argc, argv, &i, &a->with);
    if (w == 1)
      continue;
    if (w != 0)
      return w;
    if (pp_cli_is_help(argv[i])) {
      fputs(pp_cli_export_usage, stdout);
      return PP_CLI_EXIT_OK;
    } else if (strcmp(argv[i], "--format") == 0 || strcmp(argv[i], "-f") == 0) {
      if (i + 1 >= argc)
        return pp_cli_usage_error("export", "%s needs a value", argv[i]);
      format = argv[++i];
    } else if (strncmp(argv[i], "--format=", 9) == 0) {
      format = argv[i] + 9;
    } else if (strcmp(argv[i], "--details") == 0) {
      if (i + 1 >= argc)
        return pp_cli_usage_error("export", "%s needs a number or all",
                                  "--details");
      if (parse_details(argv[++i], &a->details) != 0)
        return pp_cli_usage_error("export", "bad --details value '%s'",
                                  argv[i]);
      a->details_set = 1;
    } else if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
      if (i + 1 >= argc)
        return pp_cli_usage_error("export", "%s needs a file", argv[i]);
      a->out = argv[++i];
    } else if (strcmp(argv[i], "--slo") == 0) {
      if (i + 1 >= argc)
        return pp_cli_usage_error("export", "%s needs a specification",
                                  "--slo");
      slo_spec = argv[++i];
      slo_from = "--slo";
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
  if (check_with("export", &a->with) != PP_CLI_PARSED)
    return PP_CLI_EXIT_USAGE;
  a->fn = find_format(format);
  if (!a->fn)
    return pp_cli_usage_error("export",
                              "unknown format '%s' (expected chrome, json, "
                              "csv or html)",
                              format);
  return parse_slo("export", slo_spec, slo_from, &a->slo);
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

int pp_cli_http_addr_ok(const char *a) {
  const char *colon = strrchr(a, ':');
  const char *port = colon ? colon + 1 : a;
  char *end;
  errno = 0;
  long v = strtol(port, &end, 10);
  if (!*port || *end || errno || v < 0 || v > 65535 || port[0] == '-' ||
      port[0] == '+')
    return 0;
  if (!colon || colon == a)
    return 1;
  char host[64];
  struct in_addr ia;
  if ((size_t)(colon - a) >= sizeof host)
    return 0;
  memcpy(host, a, (size_t)(colon - a));
  host[colon - a] = 0;
  return inet_pton(AF_INET, host, &ia) == 1;
}

/* ---- run ---------------------------------------------------------------- */

const char pp_cli_run_usage[] =
    "usage: pipeprof run [options] -- CMD [ARGS...]\n"
    "\n"
    "Run CMD with profiling on (programs linked with libpipeprof record\n"
    "their zones), sample its process tree and the system, then print one\n"
    "report: CMD and its processes, CPU per thread of the tree, and\n"
    "pipeprof's own CPU time over the tree's as the profiler overhead.\n"
    "The exit status is CMD's.\n"
    "\n"
    "  -o, --out DIR       output directory (default pipeprof-run)\n"
    "      --hz N          samples per second, 1..1000 (default 10)\n"
    "      --mode MODE     recording mode of CMD: trace (default), stats,\n"
    "                      flight\n"
    "      --duration S    after S seconds send SIGINT to CMD (sampling\n"
    "                      ends when it exits)\n"
    "      --no-system     sample only CMD's process tree\n"
    "      --stacks HZ     CPU stack samples of every thread of CMD's tree,\n"
    "                      HZ per thread of CPU time (1..10000; 99 is\n"
    "                      usual), unwound and named during the run and\n"
    "                      placed in the zones open at each (the report's\n"
    "                      \"CPU stack samples\"); off by default\n"
    "      --cuda          trace CMD's CUDA kernels, copies, memsets,\n"
    "                      synchronization and API calls with CUPTI\n"
    "                      (PIPEPROF_CUDA=1; CUDA_INJECTION64_PATH is set\n"
    "                      to libpipeprof.so unless already set)\n"
    "      --http ADDR     serve the samples live while CMD runs:\n"
    "                      /metrics (Prometheus), /api/v1 (JSON), /api/v1/\n"
    "                      stream and the live page on ADDR: PORT (loopback),\n"
    "                      :PORT or IPV4:PORT (docs/http.md)\n"
    "      --grid G        grid carbon intensity in gCO2eq/kWh for the\n"
    "                      energy's carbon estimate (default 475)\n"
    "  -q, --quiet         no live status line\n"
    "      --json          print the summary JSON instead of the report\n"
    "\n"
    "NVTX ranges of CMD (PyTorch, TensorRT, ...) are captured too:\n"
    "NVTX_INJECTION64_PATH is set to libpipeprof.so unless already set.\n"
    "\n"
    "Writes DIR/app.pptrace (CMD's zones, when linked with libpipeprof),\n"
    "DIR/system.pptrace (samples), DIR/trace.json (Chrome/Perfetto) and\n"
    "DIR/summary.json and DIR/report.html (self-contained HTML report).\n";

static int run_usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "pipeprof run: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, " (see 'pipeprof run --help')\n");
  return PP_CLI_EXIT_USAGE;
}

int pp_cli_parse_run(int argc, char **argv, pp_cli_run_args *o) {
  o->out = "pipeprof-run";
  o->hz = 10;
  o->mode = "trace";
  o->duration = 0;
  o->grid = 475.0;
  o->system = 1;
  o->quiet = o->json = o->cuda = 0;
  o->http = NULL;
  o->stacks_hz = 0;
  o->cmd = NULL;
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(pp_cli_run_usage, stdout);
      return PP_CLI_EXIT_OK;
    } else if (strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0) {
      if (!val)
        return run_usage_error("%s needs a directory", a);
      o->out = argv[++i];
    } else if (strcmp(a, "--hz") == 0) {
      char *end;
      errno = 0;
      long v = val ? strtol(val, &end, 10) : 0;
      if (!val || errno || end == val || *end || v < 1 || v > 1000)
        return run_usage_error("bad --hz value '%s' (expected 1 to 1000)",
                               val ? val : "");
      o->hz = (unsigned)v;
      i++;
    } else if (strcmp(a, "--mode") == 0) {
      if (!val || (strcmp(val, "trace") && strcmp(val, "stats") &&
                   strcmp(val, "flight")))
        return run_usage_error(
            "bad --mode '%s' (expected trace, stats or flight)",
            val ? val : "");
      o->mode = argv[++i];
    } else if (strcmp(a, "--duration") == 0) {
      char *end;
      double v = val ? strtod(val, &end) : 0;
      if (!val || end == val || *end || !isfinite(v) || v <= 0 || v > 1e7)
        return run_usage_error("bad --duration value '%s' (seconds > 0)",
                               val ? val : "");
      o->duration = v;
      i++;
    } else if (strcmp(a, "--http") == 0) {
      if (!val || !pp_cli_http_addr_ok(val))
        return run_usage_error("bad --http address '%s' (expected PORT, "
                               ":PORT or IPV4:PORT)",
                               val ? val : "");
      o->http = argv[++i];
    } else if (strcmp(a, "--grid") == 0) {
      char *end;
      double v = val ? strtod(val, &end) : 0;
      if (!val || end == val || *end || !isfinite(v) || v < 0 || v > 1e4)
        return run_usage_error("bad --grid value '%s' (gCO2eq/kWh, 0 to "
                               "10000)",
                               val ? val : "");
      o->grid = v;
      i++;
    } else if (strcmp(a, "--stacks") == 0) {
      long v;
      if (!val || parse_int(val, 0, 10000, &v) != 0)
        return run_usage_error("bad --stacks value '%s' (samples per second "
                               "per thread, 1 to 10000; 0 off)",
                               val ? val : "");
      o->stacks_hz = (int)v;
      i++;
    } else if (strcmp(a, "--cuda") == 0) {
      o->cuda = 1;
    } else if (strcmp(a, "--no-system") == 0) {
      o->system = 0;
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      o->quiet = 1;
    } else if (strcmp(a, "--json") == 0) {
      o->json = 1;
    } else if (a[0] == '-') {
      return run_usage_error("unknown option '%s'", a);
    } else {
      break; /* the command starts here */
    }
  }
  if (i >= argc)
    return run_usage_error("no command given%s", "");
  o->cmd = argv + i;
  return PP_CLI_PARSED;
}

