/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the pipeprof subcommands (the files of src/cli).
 */
#ifndef PP_CLI_H
#define PP_CLI_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "analyze/analysis.h"

/* Load a trace file, or a run directory written by `pipeprof run` (its
 * app.pptrace, the app.pptrace.<pid> files of programs it started, and
 * system.pptrace, merged), into t, and analyse it into a (zeroed by the
 * caller; free both afterwards, a first). Prints one line on stderr and
 * returns -1 on failure.
 *
 * Every figure comes from all events, streamed (analyze/stream.h); the
 * details that need the events themselves (zone instances for timelines,
 * flows, stages; requests, queues and pools stream too) come from the
 * events stored:
 * every event before a time at which at most `keep` of them fit, on every
 * thread of every file of a run directory (UINT64_MAX: all; the other
 * files of a run directory stream into the first one's figures as they
 * are read). pp_cli_load keeps PP_CLI_KEEP_EVENTS:
 * about 64 MiB of events and 40 MiB of zone instances at most. */
#define PP_CLI_KEEP_EVENTS UINT64_C(2000000)
int pp_cli_load_keep(const char *path, pp_trace *t, pp_analysis *a,
                     uint64_t keep);
/* The same with the request analysis's options (pp_analysis.req_warmup,
 * req_slo), which the stream needs before the events go by. */
int pp_cli_load_requests(const char *path, pp_trace *t, pp_analysis *a,
                         uint64_t keep, uint64_t warmup, const pp_slo *slo);
int pp_cli_load(const char *path, pp_trace *t, pp_analysis *a);


/* Other tools' profiles to merge into the trace by wall clock (--with,
 * --offset; with.c). */
#define PP_CLI_WITH_MAX 8
typedef struct pp_cli_with {
  const char *files[PP_CLI_WITH_MAX];
  size_t n;
  int64_t offset_ns; /* --offset: added to every profile's times */
  int offset_set;
} pp_cli_with;
/* pp_cli_load_requests, then w's profiles merged in (pp_cli_merge_with)
 * before the analysis. path must be a pipeprof trace or run directory. */
int pp_cli_load_with(const char *path, pp_trace *t, pp_analysis *a,
                     uint64_t keep, uint64_t warmup, const pp_slo *slo,
                     const pp_cli_with *w);

/* The anchors a trace holds (counters "pipeprof.profile_start.realtime_ns
 * TAG" and ".monotonic_ns TAG": where another tool's profile starts),
 * the latest value of each, at most PP_CLI_ANCHORS_MAX (more counted). */
#define PP_CLI_ANCHORS_MAX 64
typedef struct pp_cli_anchor {
  char *tag;
  int real;      /* value is realtime ns; else monotonic ns */
  int64_t value; /* the profile's time 0 */
  int64_t at_ns; /* when it was recorded (the trace's clock) */
} pp_cli_anchor;
typedef struct pp_cli_anchors {
  pp_cli_anchor *v;
  size_t n, cap;
  uint64_t more;
} pp_cli_anchors;
/* A pp_feed_fn (arg: a pp_cli_anchors) keeping the anchors among the
 * events it is handed; pp_cli_anchors_scan hands it t's stored events. */
int pp_cli_anchor_tap(void *arg, const pp_trace *t, uint32_t thread,
                      const pp_event *e);
int pp_cli_anchors_scan(pp_cli_anchors *an, const pp_trace *t);
void pp_cli_anchors_free(pp_cli_anchors *an);
/* Import each profile of w, move it onto t's clock (its own wall clock,
 * else an anchor of an, else --offset from t's start), name its threads
 * after the tool and merge it into t (its events through a's stream when
 * the load streams; at most keep stored). 0, or -1 with one line said. */
int pp_cli_merge_with(pp_trace *t, pp_analysis *a, const pp_cli_with *w,
                      const pp_cli_anchors *an, uint64_t keep);
/* The same, streamed (keep < UINT64_MAX), also handing every event of
 * every file to tap as it is read (analyze/stream.h pp__stream_tap: sites
 * and threads numbered as in the loaded trace; zone events of a thread in
 * its recording order). */
int pp_cli_load_tap(const char *path, pp_trace *t, pp_analysis *a,
                    uint64_t keep, pp_feed_fn tap, void *arg);

/* Write analysis a with an exporter to a file ("-" or NULL: stdout).
 * Returns the exit code: 0, or 1 after printing one line. */
int pp_cli_export_to(const pp_analysis *a,
                     int (*fn)(FILE *, const pp_analysis *), const char *out);

/* `export --format chrome`: a trace file streams every event into the
 * Chrome JSON as it is read, in bounded memory (export.h
 * pp_chrome_stream_new); a run directory is merged in memory, keep events
 * kept (UINT64_MAX: all). Returns the exit code: 0, or 1 after printing one
 * line (no output file is left behind then). Bounds hit are said on stderr. */
int pp_cli_export_chrome(const char *path, const char *out, uint64_t keep);
/* The same with w's profiles merged in (in memory, every event kept). */
int pp_cli_export_chrome_with(const char *path, const char *out, uint64_t keep,
                              const pp_cli_with *w);

/* Remove DIR/app.pptrace.<pid> files left by an earlier run. */
void pp_cli_remove_children(const char *dir);

/* ---- argument parsing (args.c) --------------------------------------------
 * The parsers of the commands in main.c, apart from their execution (for
 * fuzz/fuzz_cli_args.c). argv[0] is the command's name. Each returns
 * PP_CLI_PARSED when the command should run with the filled struct, or the
 * exit status to return: PP_CLI_EXIT_OK after printing --help to stdout,
 * PP_CLI_EXIT_USAGE after one usage-error line on stderr. Strings point
 * into argv (or are static). */
enum { PP_CLI_PARSED = -1, PP_CLI_EXIT_OK = 0, PP_CLI_EXIT_USAGE = 2 };

typedef int (*pp_cli_export_fn)(FILE *, const pp_analysis *);

typedef struct pp_cli_report_args {
  const char *file, *html; /* html: NULL when not asked for */
  int top_n;               /* pp_report_opts.top_n */
  long warmup;
  pp_slo slo; /* from --slo, else $PIPEPROF_SLO; zeros: none */
  uint64_t details; /* --details: events kept (pp_cli_load_keep) */
  pp_cli_with with; /* --with, --offset */
} pp_cli_report_args;

typedef struct pp_cli_export_args {
  const char *file, *out; /* out: NULL or "-" for standard output */
  pp_cli_export_fn fn;
  uint64_t details; /* --details (chrome: a run directory only) */
  int details_set;  /* --details was given */
  pp_cli_with with; /* --with, --offset */
  pp_slo slo;       /* --slo, else $PIPEPROF_SLO */
} pp_cli_export_args;

typedef struct pp_cli_demo_args {
  const char *dir, *mode;
  long frames;
} pp_cli_demo_args;

typedef struct pp_cli_run_args {
  const char *out; /* the run directory */
  double grid;     /* gCO2eq/kWh */
  unsigned hz;
  const char *mode;
  double duration; /* s; 0: until CMD exits */
  int system, quiet, json, cuda;
  const char *http; /* --http ADDR, or NULL */
  int stacks_hz;    /* --stacks HZ: CPU stack samples; 0 off */
  char **cmd;       /* CMD and its arguments, in argv */
} pp_cli_run_args;

/* The CPU stack samples of `pipeprof run`'s command (cli/stacks.c):
 * started on the child before it execs (sampling begins at its execve()),
 * drained, unwound and named while it runs, handed over once it ended.
 * NULL with the reason in why when they cannot be taken. */
typedef struct pp_cli_stacks pp_cli_stacks;
struct pp_stack_set;
pp_cli_stacks *pp_cli_stacks_start(pid_t pid, int hz, char *why,
                                   size_t why_len);
/* Stop, take what is left and move the samples into *out (NULL k: an
 * empty set). */
void pp_cli_stacks_finish(pp_cli_stacks *k, struct pp_stack_set *out);

extern const char pp_cli_run_usage[];
extern const char pp_cli_report_usage[];
extern const char pp_cli_export_usage[];
extern const char pp_cli_demo_usage[];

int pp_cli_parse_report(int argc, char **argv, pp_cli_report_args *a);
int pp_cli_parse_export(int argc, char **argv, pp_cli_export_args *a);
int pp_cli_parse_demo(int argc, char **argv, pp_cli_demo_args *a);
int pp_cli_parse_run(int argc, char **argv, pp_cli_run_args *a);
/* "pipeprof CMD: <fmt with arg> (see 'pipeprof CMD --help')" on stderr;
 * returns PP_CLI_EXIT_USAGE. cmd NULL: the top level. */
int pp_cli_usage_error(const char *cmd, const char *fmt, const char *arg);
int pp_cli_is_help(const char *a);
/* Is a an address the HTTP endpoint takes: "PORT", ":PORT" or
 * "IPV4:PORT" (docs/http.md)? */
int pp_cli_http_addr_ok(const char *a);
/* `pipeprof sweep` (src/cli/sweep.c). */
extern const char pp_cli_sweep_usage[];
int pp_cli_sweep(int argc, char **argv);
/* `pipeprof serve` (src/cli/serve.c). */
extern const char pp_cli_serve_usage[];
int pp_cli_serve(int argc, char **argv);

/* `pipeprof recover` (recover.c). */
int pp_cli_recover(int argc, char **argv);
/* Salvage the trace at path if its process died before finishing it
 * (src/salvage/); how: how it died when the caller saw it (META
 * process.end), else NULL. Says what it did in one line on stderr; says
 * nothing when there was nothing to do. */
void pp_cli_salvage(const char *path, const char *how);
int pp_cli_run(int argc, char **argv);
int pp_cli_diff(int argc, char **argv);
/* diff's argument parsing alone (for a fuzz target): its exit code (0
 * --help, 2 usage error), or -1 when the arguments are valid. */
int pp_cli_diff_check_args(int argc, char **argv);
int pp_cli_history(int argc, char **argv);

#endif /* PP_CLI_H */
