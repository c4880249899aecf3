/* SPDX-License-Identifier: MIT */
/*
 * What the pipeprof command's subcommands share: loading a trace file or a
 * run directory (its app.pptrace, the files of the processes it started,
 * system.pptrace) into one trace, writing an export to a file or standard
 * output, emptying a run directory. Failures print one line on stderr.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/model.h"
#include "analyze/stream.h"
#include "cli.h"
#include "export/export.h"
#include "pair/zones.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1 };

/* How a load reads: events kept for the details, and the request
 * analysis's options, which a streamed read needs before the events go by. */
typedef struct load_opts {
  uint64_t keep;
  uint64_t warmup;
  pp_slo slo;
  pp_feed_fn tap; /* every event as read (pp__stream_tap); NULL: none */
  void *tap_arg;
} load_opts;

/* 0, -1 (a one-line reason printed) or PP_TRACE_ENOMEM (printed too: out
 * of memory, or a failure that leaves the figures wrong; fatal to a run
 * directory's load).
 * Unless o->keep is UINT64_MAX the events stream through the figures
 * (analyze/stream.h) and at most o->keep of them are stored for the
 * details; otherwise all are stored. dst: the trace this one will be
 * merged into (NULL for the first file of a load); its stream takes this
 * file's events too, numbered as the merge will number them, so no file
 * of a run directory is stored whole. */
static int read_one(const char *path, pp_trace *t, const load_opts *o,
                    pp_trace *dst) {
  char err[512];
  pp_stream *s = NULL;
  pp_read_opts ro = {UINT64_MAX, NULL, NULL, 0};
  if (dst && dst->from_stats) {
    ro.keep_events = 0; /* not merged (add_trace says so): count only */
  } else if (dst && dst->stream) {
    if (pp__stream_part_begin(dst->stream, dst) != 0) {
      fprintf(stderr, "pipeprof: out of memory reading %s\n", path);
      return PP_TRACE_ENOMEM;
    }
    ro = (pp_read_opts){o->keep, pp__stream_part_event, dst->stream, 0};
  } else if (!dst && o->keep != UINT64_MAX) {
    if (!(s = pp__stream_new()) ||
        pp__stream_details(s, o->warmup, &o->slo) != 0) {
      pp__stream_free(s);
      fprintf(stderr, "pipeprof: out of memory reading %s\n", path);
      return PP_TRACE_ENOMEM;
    }
    pp__stream_tap(s, o->tap, o->tap_arg);
    ro = (pp_read_opts){o->keep, pp__stream_event, s, 0};
  }
  int rc = pp_trace_read_file_opts(path, t, &ro, err, sizeof err);
  /* A part's events waiting in the reorder buffer go before the merge
   * (they name the part's sites). A part whose read failed after some of
   * its events reached the figures (the file shrank while read) fails the
   * whole load, as running out of memory does: the figures would count
   * part of a file the load skips. */
  if (ro.on_event == pp__stream_part_event &&
      pp__stream_part_end(dst->stream, rc != 0) != 0) {
    if (rc == 0) {
      pp_trace_free(t);
      snprintf(err, sizeof err, "out of memory reading %s", path);
    }
    rc = PP_TRACE_ENOMEM;
  }
  if (rc != 0) {
    fprintf(stderr, "pipeprof: %s\n", err);
    pp__stream_free(s);
  } else {
    t->stream = s;
  }
  return rc;
}

void pp_cli_remove_children(const char *dir) {
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  char p[PATH_MAX];
  while ((e = readdir(d)) != NULL)
    if (strncmp(e->d_name, "app.pptrace.", 12) == 0) {
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
  closedir(d);
}

/* Merge src into *have (or make it the first trace); src's events went
 * through t's stream as it was read (read_one). The stored events stay a
 * window of at most o->keep. -1: out of memory (src is freed, *t is kept
 * for the caller to free). */
static int add_trace(pp_trace *t, int *have, pp_trace *src,
                     const load_opts *o) {
  if (!*have) {
    *t = *src;
    *have = 1;
    return 0;
  }
  int rc = pp_trace_merge(t, src);
  pp_trace_free(src);
  if (rc == 0 && o->keep != UINT64_MAX)
    pp__trace_window(t, INT64_MAX, o->keep);
  if (rc == -2)
    fprintf(stderr, "pipeprof: note: a stats-mode trace holds no events; "
                    "samples are not merged into it\n");
  return rc == -1 ? -1 : 0;
}

/* A run directory: app.pptrace, the app.pptrace.<pid> of its children and
 * system.pptrace. A child's unreadable file is skipped (its one line is
 * printed); running out of memory anywhere fails the whole load, never
 * leaving a report of part of the run. */
static int load_dir(const char *dir, pp_trace *t, const load_opts *o) {
  char p[PATH_MAX];
  int have = 0, failed = 0;
  pp_trace part;
  snprintf(p, sizeof p, "%s/app.pptrace", dir);
  if (access(p, F_OK) == 0) {
    if (read_one(p, &part, o, NULL) != 0)
      return -1;
    add_trace(t, &have, &part, o);
  }
  DIR *d = opendir(dir);
  struct dirent *e;
  while (!failed && d && (e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, "app.pptrace.", 12) != 0)
      continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    int rc = read_one(p, &part, o, have ? t : NULL);
    if (rc == PP_TRACE_ENOMEM)
      failed = 1; /* the line is printed */
    else if (rc == 0 && add_trace(t, &have, &part, o) != 0) {
      fprintf(stderr, "pipeprof: out of memory reading %s (while merging "
                      "%s)\n",
              dir, e->d_name);
      failed = 1;
    }
  }
  if (d)
    closedir(d);
  snprintf(p, sizeof p, "%s/system.pptrace", dir);
  if (!failed && access(p, F_OK) == 0) {
    int rc = read_one(p, &part, o, have ? t : NULL);
    if (rc == PP_TRACE_ENOMEM) {
      failed = 1;
    } else if (rc == 0 && add_trace(t, &have, &part, o) != 0) {
      fprintf(stderr, "pipeprof: out of memory reading %s (while merging "
                      "system.pptrace)\n",
              dir);
      failed = 1;
    }
  }
  if (failed) {
    if (have)
      pp_trace_free(t);
    return -1;
  }
  if (!have) {
    fprintf(stderr, "pipeprof: %s: no trace files (app.pptrace, "
                    "system.pptrace) in this directory\n",
            dir);
    return -1;
  }
  return 0;
}

static int load(const char *path, pp_trace *t, const load_opts *o) {
  struct stat st;
  int is_dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
  if (is_dir ? load_dir(path, t, o) != 0 : read_one(path, t, o, NULL) != 0)
    return -1;
  t->req_warmup = o->warmup; /* for requests analysed from stored events */
  t->req_slo = o->slo;
  if (pp_analyze(t) != 0) {
    fprintf(stderr, "pipeprof: out of memory reading %s (while analysing "
                    "it)\n",
            path);
    pp_trace_free(t);
    return -1;
  }
  if (t->nthreads == 0 && !t->from_stats && t->diag.chunks_ok == 0) {
    fprintf(stderr, "pipeprof: %s: no intact chunk found (%llu bytes "
                    "skipped)\n",
            path, (unsigned long long)t->diag.bytes_skipped);
    pp_trace_free(t);
    return -1;
  }
  return 0;
}

int pp_cli_load_requests(const char *path, pp_trace *t, uint64_t keep,
                         uint64_t warmup, const pp_slo *slo) {
  load_opts o = {keep, warmup, *slo, NULL, NULL};
  return load(path, t, &o);
}

int pp_cli_load_tap(const char *path, pp_trace *t, uint64_t keep,
                    pp_feed_fn tap, void *arg) {
  load_opts o = {keep, 0, {0, 0, 0}, tap, arg};
  if (keep == UINT64_MAX) {
    fprintf(stderr, "pipeprof: internal error: a tapped load streams\n");
    return -1;
  }
  return load(path, t, &o);
}

int pp_cli_load_keep(const char *path, pp_trace *t, uint64_t keep) {
  static const pp_slo none;
  return pp_cli_load_requests(path, t, keep, 0, &none);
}

int pp_cli_load(const char *path, pp_trace *t) {
  return pp_cli_load_keep(path, t, PP_CLI_KEEP_EVENTS);
}

int pp_cli_export_to(const pp_trace *t, pp_cli_export_fn fn,
                     const char *out) {
  int to_stdout = !out || strcmp(out, "-") == 0;
  FILE *f = to_stdout ? stdout : fopen(out, "w");
  if (!f) {
    fprintf(stderr, "pipeprof: cannot create %s: %s\n", out, strerror(errno));
    return EXIT_FAIL;
  }
  int rc = fn(f, t);
  if (fflush(f) != 0)
    rc = -1;
  if (!to_stdout && fclose(f) != 0)
    rc = -1;
  if (rc != 0) {
    fprintf(stderr, "pipeprof: cannot write %s\n",
            to_stdout ? "standard output" : out);
    return EXIT_FAIL;
  }
  return EXIT_OK;
}

/* ---- the Chrome export of a trace file, streamed ----------------------- */

/* The read's consumer: the figures' stream and the Chrome writer, which
 * starts with the first event, so that a file that is no trace creates
 * no output. */
typedef struct chrome_tee {
  pp_stream *s;
  pp_chrome *c;
  const char *out;
  FILE *f;
  int open_errno; /* the output could not be created */
} chrome_tee;

static int tee_open(chrome_tee *x) {
  int to_stdout = !x->out || strcmp(x->out, "-") == 0;
  x->f = to_stdout ? stdout : fopen(x->out, "w");
  if (!x->f) {
    x->open_errno = errno ? errno : EIO;
    return -1;
  }
  if (!(x->c = pp_chrome_stream_new(x->f)))
    return -1;
  return 0;
}

static int tee_event(void *arg, const pp_trace *t, uint32_t thread,
                     const pp_event *e) {
  chrome_tee *x = arg;
  if (pp__stream_event(x->s, t, thread, e) != 0 || (!x->c && tee_open(x) != 0))
    return -1;
  return pp_chrome_stream_event(x->c, t, thread, e);
}

static const char *out_name(const char *out) {
  return !out || strcmp(out, "-") == 0 ? "standard output" : out;
}

/* Say what a bound cut from the file (also in its metadata.reader). */
static void chrome_notes(const pp_chrome_limits *l) {
  if (l->zones_too_deep)
    fprintf(stderr,
            "pipeprof: note: the Chrome trace leaves out %llu zones "
            "nested deeper than %u (metadata.reader.zones_too_deep)\n",
            (unsigned long long)l->zones_too_deep, PP_PAIR_MAX_DEPTH);
  if (l->flow_chains_cut)
    fprintf(stderr,
            "pipeprof: note: %llu flow chains were ended early: more "
            "than %u open at once or %u points waiting "
            "(metadata.reader.flow_chains_cut)\n",
            (unsigned long long)l->flow_chains_cut, PP_CHROME_CHAINS_MAX,
            PP_CHROME_POINTS_MAX);
  if (l->ranges_lost)
    fprintf(stderr,
            "pipeprof: note: the Chrome trace leaves out %llu "
            "ranges: more than %u begun and not ended at once "
            "(metadata.reader.ranges_lost)\n",
            (unsigned long long)l->ranges_lost, PP_CHROME_RANGES_MAX);
}

int pp_cli_export_chrome(const char *path, const char *out, uint64_t keep) {
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    /* A run directory's files are merged in memory. */
    pp_trace t;
    if (pp_cli_load_keep(path, &t, keep) != 0)
      return EXIT_FAIL;
    int rc = pp_cli_export_to(&t, pp_export_chrome, out);
    pp_trace_free(&t);
    return rc;
  }
  char err[512];
  chrome_tee x = {pp__stream_new(), NULL, out, NULL, 0};
  if (!x.s || pp__stream_pools(x.s) != 0) {
    pp__stream_free(x.s);
    fprintf(stderr, "pipeprof: out of memory reading %s\n", path);
    return EXIT_FAIL;
  }
  pp_read_opts ro = {0, tee_event, &x, 1};
  pp_trace t;
  int rc = pp_trace_read_file_opts(path, &t, &ro, err, sizeof err);
  if (rc != 0) {
    if (x.open_errno)
      fprintf(stderr, "pipeprof: cannot create %s: %s\n", out,
              strerror(x.open_errno));
    else if (x.f && ferror(x.f))
      fprintf(stderr, "pipeprof: cannot write %s\n", out_name(out));
    else
      fprintf(stderr, "pipeprof: %s\n", err);
    pp__stream_free(x.s);
    goto fail;
  }
  t.stream = x.s;
  if (pp_analyze(&t) != 0) {
    fprintf(stderr,
            "pipeprof: out of memory reading %s (while analysing "
            "it)\n",
            path);
    pp_trace_free(&t);
    goto fail;
  }
  if (t.nthreads == 0 && !t.from_stats && t.diag.chunks_ok == 0) {
    fprintf(stderr,
            "pipeprof: %s: no intact chunk found (%llu bytes "
            "skipped)\n",
            path, (unsigned long long)t.diag.bytes_skipped);
    pp_trace_free(&t);
    goto fail;
  }
  if (!x.c && tee_open(&x) != 0) {
    if (x.open_errno)
      fprintf(stderr, "pipeprof: cannot create %s: %s\n", out,
              strerror(x.open_errno));
    else
      fprintf(stderr, "pipeprof: out of memory writing %s\n", out_name(out));
    pp_trace_free(&t);
    goto fail;
  }
  rc = pp_chrome_stream_finish(x.c, &t);
  pp_trace_free(&t);
  if (fflush(x.f) != 0)
    rc = -1;
  if (x.f != stdout && fclose(x.f) != 0)
    rc = -1;
  x.f = NULL;
  if (rc != 0) {
    fprintf(stderr, "pipeprof: cannot write %s\n", out_name(out));
    pp_chrome_stream_free(x.c);
    if (out && strcmp(out, "-") != 0)
      unlink(out);
    return EXIT_FAIL;
  }
  chrome_notes(pp_chrome_stream_limits(x.c));
  pp_chrome_stream_free(x.c);
  return EXIT_OK;
fail:
  pp_chrome_stream_free(x.c);
  if (x.f && x.f != stdout) { /* no half-written file is left */
    fclose(x.f);
    unlink(out);
  }
  return EXIT_FAIL;
}
