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

#include "analyze/analysis.h"
#include "analyze/stream.h"
#include "cli.h"
#include "export/export.h"
#include "format/pptrace.h"
#include "model/reader.h"
#include "import/profile.h"
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
  const pp_cli_with *with; /* profiles to merge in; NULL: none */
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
/* Is the file at path JSON (another tool's profile, import/profile.h)?
 * Only a regular file is looked at: a pipe's first bytes would be gone
 * (a profile through a pipe is read as a .pptrace, and refused as one). */
static int is_json_file(const char *path) {
  unsigned char head[256];
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
    return 0;
  FILE *f = fopen(path, "rb");
  if (!f)
    return 0;
  size_t n = fread(head, 1, sizeof head, f);
  fclose(f);
  return pp_import_looks_json(head, n);
}

/* A torch.profiler or ONNX Runtime profile. Streamed through the
 * figures when the load keeps a window and the profile's events come in
 * time order (import/profile.h; the tap sees them through the stream);
 * else imported whole, every event stored (the figures come from them at
 * the analysis), the tap seeing every event thread by thread. */
static int import_one(const char *path, pp_trace *t, pp_analysis *a,
                      const load_opts *o) {
  char err[512];
  if (o->keep != UINT64_MAX) {
    pp_stream *s = pp__stream_new();
    if (!s || pp__stream_details(s, o->warmup, &o->slo) != 0) {
      pp__stream_free(s);
      fprintf(stderr, "pipeprof: out of memory reading %s\n", path);
      return PP_TRACE_ENOMEM;
    }
    pp__stream_tap(s, o->tap, o->tap_arg);
    pp_import_opts io = {o->keep, pp__stream_event, s};
    int rc = pp_import_file_opts(path, t, &io, err, sizeof err);
    if (rc == 0) {
      a->stream = s;
      return 0;
    }
    pp__stream_free(s); /* it took events of a read that is redone */
    if (rc != PP_IMPORT_UNORDERED) {
      fprintf(stderr, "pipeprof: %s: %s\n", path, err);
      return rc;
    }
  }
  int rc = pp_import_file(path, t, err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "pipeprof: %s: %s\n", path, err);
    return rc;
  }
  for (size_t i = 0; o->tap && i < t->nthreads; i++)
    for (size_t j = 0; j < t->threads[i].nev; j++)
      if (o->tap(o->tap_arg, t, (uint32_t)i, &t->threads[i].ev[j]) != 0) {
        fprintf(stderr, "pipeprof: out of memory reading %s\n", path);
        pp_trace_free(t);
        return PP_TRACE_ENOMEM;
      }
  return 0;
}

static int read_one(const char *path, pp_trace *t, pp_analysis *a,
                    const load_opts *o, pp_trace *dst) {
  if (!dst && is_json_file(path))
    return import_one(path, t, a, o);
  pp_cli_salvage(path, NULL); /* its process died before finishing it */
  char err[512];
  pp_stream *s = NULL;
  pp_read_opts ro = {UINT64_MAX, NULL, NULL, 0};
  if (dst && dst->from_stats) {
    ro.keep_events = 0; /* not merged (add_trace says so): count only */
  } else if (dst && a->stream) {
    if (pp__stream_part_begin(a->stream, dst, 1) != 0) {
      fprintf(stderr, "pipeprof: out of memory reading %s\n", path);
      return PP_TRACE_ENOMEM;
    }
    ro = (pp_read_opts){o->keep, pp__stream_part_event, a->stream, 0};
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
      pp__stream_part_end(a->stream, rc != 0) != 0) {
    if (rc == 0) {
      pp_trace_free(t);
      snprintf(err, sizeof err, "out of memory reading %s", path);
    }
    rc = PP_TRACE_ENOMEM;
  }
  if (rc != 0) {
    fprintf(stderr, "pipeprof: %s\n", err);
    pp__stream_free(s);
  } else if (s) {
    a->stream = s;
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
 * through the analysis's stream as it was read (read_one). The stored events
 * stay a window of at most o->keep. -1: out of memory (src is freed, *t is kept
 * for the caller to free). */
static int add_trace(pp_trace *t, int *have, pp_trace *src,
                     const load_opts *o) {
  if (!*have) {
    *t = *src;
    *have = 1;
    return 0;
  }
  int rc = pp_trace_merge_process(t, src);
  pp_trace_free(src);
  if (rc == 0 && o->keep != UINT64_MAX)
    pp__trace_window(t, INT64_MAX, o->keep);
  if (rc == -2)
    fprintf(stderr, "pipeprof: note: a stats-mode trace holds no events; "
                    "samples are not merged into it\n");
  return rc == -1 ? -1 : 0;
}

typedef char run_path[PATH_MAX];

/* The files of run directory dir in the order they merge: app.pptrace,
 * the app.pptrace.<pid> of its children, system.pptrace (those present).
 * *out is malloc'd (NULL when there are none); returns how many, or -1
 * when out of memory (said). */
static long run_files(const char *dir, run_path **out) {
  run_path *v = NULL;
  size_t n = 0, cap = 0;
  DIR *d = NULL;
  *out = NULL;
  for (int pass = 0; pass < 3; pass++) {
    if (pass == 1 && !(d = opendir(dir)))
      continue;
    struct dirent *e = NULL;
    while (pass != 1 || (e = readdir(d)) != NULL) {
      if (pass == 1 && strncmp(e->d_name, "app.pptrace.", 12) != 0)
        continue;
      char p[PATH_MAX];
      snprintf(p, sizeof p, "%s/%s", dir,
               pass == 1 ? e->d_name
                         : pass ? "system.pptrace" : "app.pptrace");
      if (pass != 1 && access(p, F_OK) != 0)
        break;
      if (pp__grow((void **)&v, &cap, n + 1, sizeof *v) != 0) {
        if (d)
          closedir(d);
        pp__free(v);
        fprintf(stderr, "pipeprof: out of memory reading %s\n", dir);
        return -1;
      }
      memcpy(v[n++], p, sizeof p);
      if (pass != 1)
        break;
    }
    if (d)
      closedir(d);
    d = NULL;
  }
  *out = v;
  return (long)n;
}

static int is_main_file(const char *path) {
  const char *base = strrchr(path, '/');
  return strcmp(base ? base + 1 : path, "app.pptrace") == 0;
}

/* A run directory (run_files). An unreadable app.pptrace fails the load;
 * another unreadable file is skipped (its one line is printed); running
 * out of memory anywhere fails the whole load, never leaving a report of
 * part of the run. */
static int load_dir(const char *dir, pp_trace *t, pp_analysis *a,
                    const load_opts *o) {
  run_path *files;
  long nf = run_files(dir, &files);
  if (nf < 0)
    return -1;
  int have = 0, failed = 0;
  pp_trace part;
  for (long i = 0; i < nf && !failed; i++) {
    int rc = read_one(files[i], &part, a, o, have ? t : NULL);
    if (rc != 0) {
      /* the line is printed; a child or sampler file is skipped */
      failed = rc == PP_TRACE_ENOMEM || (i == 0 && is_main_file(files[i]));
      continue;
    }
    if (add_trace(t, &have, &part, o) != 0) {
      fprintf(stderr, "pipeprof: out of memory reading %s (while merging "
                      "%s)\n",
              dir, strrchr(files[i], '/') + 1);
      failed = 1;
    }
  }
  pp__free(files);
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

static int load(const char *path, pp_trace *t, pp_analysis *a,
                const load_opts *opts) {
  struct stat st;
  int is_dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
  memset(a, 0, sizeof *a);
  load_opts wo = *opts;
  const load_opts *o = &wo;
  pp_cli_anchors anchors = {0};
  int with = opts->with && opts->with->n;
  if (with && !is_dir && is_json_file(path)) {
    fprintf(stderr,
            "pipeprof: %s: --with merges profiles into a pipeprof "
            "trace: give the .pptrace (or run directory) first\n",
            path);
    return -1;
  }
  if (with && !wo.tap) { /* the anchors, as the events go by */
    wo.tap = pp_cli_anchor_tap;
    wo.tap_arg = &anchors;
  }
  if (is_dir ? load_dir(path, t, a, o) != 0
             : read_one(path, t, a, o, NULL) != 0) {
    pp_cli_anchors_free(&anchors);
    pp_analysis_free(a);
    return -1;
  }
  if (with && ((!a->stream && pp_cli_anchors_scan(&anchors, t) != 0) ||
               pp_cli_merge_with(t, a, opts->with, &anchors, o->keep) != 0)) {
    pp_cli_anchors_free(&anchors);
    pp_analysis_free(a);
    pp_trace_free(t);
    return -1;
  }
  pp_cli_anchors_free(&anchors);
  a->req_warmup = o->warmup; /* for requests analysed from stored events */
  a->req_slo = o->slo;
  if (pp_analyze(t, a) != 0) {
    fprintf(stderr, "pipeprof: out of memory reading %s (while analysing "
                    "it)\n",
            path);
    pp_analysis_free(a);
    pp_trace_free(t);
    return -1;
  }
  if (t->nthreads == 0 && !t->from_stats && t->diag.chunks_ok == 0) {
    fprintf(stderr, "pipeprof: %s: no intact chunk found (%llu bytes "
                    "skipped)\n",
            path, (unsigned long long)t->diag.bytes_skipped);
    pp_analysis_free(a);
    pp_trace_free(t);
    return -1;
  }
  return 0;
}

int pp_cli_load_requests(const char *path, pp_trace *t, pp_analysis *a,
                         uint64_t keep, uint64_t warmup, const pp_slo *slo) {
  load_opts o = {keep, warmup, *slo, NULL, NULL, NULL};
  return load(path, t, a, &o);
}

int pp_cli_load_with(const char *path, pp_trace *t, pp_analysis *a,
                     uint64_t keep, uint64_t warmup, const pp_slo *slo,
                     const pp_cli_with *w) {
  load_opts o = {keep, warmup, *slo, NULL, NULL, w};
  return load(path, t, a, &o);
}

int pp_cli_load_tap(const char *path, pp_trace *t, pp_analysis *a,
                    uint64_t keep, pp_feed_fn tap, void *arg) {
  static const pp_slo none;
  load_opts o = {keep, 0, none, tap, arg, NULL};
  if (keep == UINT64_MAX) {
    fprintf(stderr, "pipeprof: internal error: a tapped load streams\n");
    return -1;
  }
  return load(path, t, a, &o);
}

int pp_cli_load_keep(const char *path, pp_trace *t, pp_analysis *a,
                     uint64_t keep) {
  static const pp_slo none;
  return pp_cli_load_requests(path, t, a, keep, 0, &none);
}

int pp_cli_load(const char *path, pp_trace *t, pp_analysis *a) {
  return pp_cli_load_keep(path, t, a, PP_CLI_KEEP_EVENTS);
}

int pp_cli_export_to(const pp_analysis *a, pp_cli_export_fn fn,
                     const char *out) {
  int to_stdout = !out || strcmp(out, "-") == 0;
  FILE *f = to_stdout ? stdout : fopen(out, "w");
  if (!f) {
    fprintf(stderr, "pipeprof: cannot create %s: %s\n", out, strerror(errno));
    return EXIT_FAIL;
  }
  int rc = fn(f, a);
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
  /* The figures need no zone statistics here (the document has none):
   * zone events skip them, and the writer's pairing gives their counts
   * (pp_chrome_stream_zones_unfed); the latest zone event's time. */
  int zones_unfed;
  int have_zone_last;
  int64_t zone_last;
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
  if (x->zones_unfed &&
      (e->type == PPT_EV_ZONE_BEGIN || e->type == PPT_EV_ZONE_END) &&
      e->loc < t->nlocs) {
    if (!x->have_zone_last || e->ts > x->zone_last)
      x->zone_last = e->ts;
    x->have_zone_last = 1;
  } else if (pp__stream_event(x->s, t, thread, e) != 0) {
    return -1;
  }
  if (!x->c && tee_open(x) != 0)
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

static int chrome_fail(chrome_tee *x, const char *out);

/* The export's end once every event went by: t read whole (its stream
 * x->s taken), analysed, the document finished. EXIT_OK, or EXIT_FAIL
 * with one line said and no output file left. t is freed. */
static int chrome_end(chrome_tee *x, pp_trace *t, const char *path,
                      const char *out) {
  pp_analysis a = {0};
  a.stream = x->s;
  x->s = NULL;
  int rc = pp_analyze(t, &a);
  if (rc != 0) {
    fprintf(stderr,
            "pipeprof: out of memory reading %s (while analysing "
            "it)\n",
            path);
    pp_analysis_free(&a);
    pp_trace_free(t);
    return chrome_fail(x, out);
  }
  if (t->nthreads == 0 && !t->from_stats && t->diag.chunks_ok == 0) {
    fprintf(stderr,
            "pipeprof: %s: no intact chunk found (%llu bytes "
            "skipped)\n",
            path, (unsigned long long)t->diag.bytes_skipped);
    pp_analysis_free(&a);
    pp_trace_free(t);
    return chrome_fail(x, out);
  }
  if (!x->c && tee_open(x) != 0) {
    if (x->open_errno)
      fprintf(stderr, "pipeprof: cannot create %s: %s\n", out,
              strerror(x->open_errno));
    else
      fprintf(stderr, "pipeprof: out of memory writing %s\n", out_name(out));
    pp_analysis_free(&a);
    pp_trace_free(t);
    return chrome_fail(x, out);
  }
  if (x->zones_unfed)
    pp_chrome_stream_zones_unfed(x->c, x->have_zone_last, x->zone_last);
  rc = pp_chrome_stream_finish(x->c, &a);
  pp_analysis_free(&a);
  pp_trace_free(t);
  if (fflush(x->f) != 0)
    rc = -1;
  if (x->f != stdout && fclose(x->f) != 0)
    rc = -1;
  x->f = NULL;
  if (rc != 0) {
    fprintf(stderr, "pipeprof: cannot write %s\n", out_name(out));
    pp_chrome_stream_free(x->c);
    x->c = NULL;
    if (out && strcmp(out, "-") != 0)
      unlink(out);
    return EXIT_FAIL;
  }
  chrome_notes(pp_chrome_stream_limits(x->c));
  pp_chrome_stream_free(x->c);
  x->c = NULL;
  return EXIT_OK;
}

/* What failed was said: free the writer, leave no half-written file. */
static int chrome_fail(chrome_tee *x, const char *out) {
  pp__stream_free(x->s);
  x->s = NULL;
  pp_chrome_stream_free(x->c);
  x->c = NULL;
  if (x->f && x->f != stdout) {
    fclose(x->f);
    unlink(out);
  }
  x->f = NULL;
  return EXIT_FAIL;
}

/* A read's failure, as the single file's road says it. */
static void chrome_read_error(const chrome_tee *x, const char *out,
                              const char *err) {
  if (x->open_errno)
    fprintf(stderr, "pipeprof: cannot create %s: %s\n", out,
            strerror(x->open_errno));
  else if (x->f && ferror(x->f))
    fprintf(stderr, "pipeprof: cannot write %s\n", out_name(out));
  else
    fprintf(stderr, "pipeprof: %s\n", err);
}

/* ---- the Chrome export of a run directory, streamed --------------------
 *
 * Every file is read side by side (model/reader pp__trace_reader): the
 * first passes give each file's sites and threads, numbered as
 * pp_trace_merge will number them in the merged trace (a view, made of
 * copies of their headers merged in load_dir's order); then the files'
 * event chunks are decoded earliest first (the chunks' earliest times
 * from the first pass), each event renumbered into the view and handed
 * to the figures' stream and the Chrome writer, whose reorder buffer
 * puts them in time order across every file, as the export of the merged
 * trace in memory does. Once every chunk is read the files are merged
 * (no event is stored) and the document is finished from that trace. */

typedef struct dir_part {
  pp_trace t;
  pp__trace_reader *r; /* NULL once finished, or when it failed to open */
  uint32_t *map;       /* its sites' ids in the view (the first: none) */
  size_t nmap, thread_base;
  int opened;
  struct chrome_dir *d;
  char path[PATH_MAX];
} dir_part;

typedef struct chrome_dir {
  chrome_tee x;
  pp_trace view;
  dir_part *p;
  size_t n;
} chrome_dir;

static int part_event(void *arg, const pp_trace *t, uint32_t thread,
                      const pp_event *e) {
  dir_part *p = arg;
  (void)t;
  pp_event m = *e;
  m.loc = e->loc < p->nmap ? p->map[e->loc] : e->loc;
  return tee_event(&p->d->x, &p->d->view,
                   (uint32_t)(thread + p->thread_base), &m);
}

/* A copy of t's header (meta, sites, threads without events, pid) that
 * pp_trace_merge can consume. 0, or -1 when out of memory. */
static int header_copy(const pp_trace *t, pp_trace *h) {
  memset(h, 0, sizeof *h);
  h->pid = t->pid;
  h->format_minor = t->format_minor;
  h->meta = pp__calloc(t->nmeta ? t->nmeta : 1, sizeof *h->meta);
  h->locs = pp__calloc(t->nlocs ? t->nlocs : 1, sizeof *h->locs);
  h->threads = pp__calloc(t->nthreads ? t->nthreads : 1, sizeof *h->threads);
  if (!h->meta || !h->locs || !h->threads)
    return -1;
  h->cap_meta = t->nmeta ? t->nmeta : 1;
  h->cap_locs = t->nlocs ? t->nlocs : 1;
  h->cap_threads = t->nthreads ? t->nthreads : 1;
  for (size_t i = 0; i < t->nmeta; i++, h->nmeta++) {
    h->meta[i].key = pp__strdup(t->meta[i].key);
    h->meta[i].value = pp__strdup(t->meta[i].value);
    if (!h->meta[i].key || !h->meta[i].value)
      return h->nmeta++, -1;
  }
  for (size_t i = 0; i < t->nlocs; i++, h->nlocs++) {
    const pp_loc *l = &t->locs[i];
    h->locs[i] = *l;
    h->locs[i].name = pp__strdup(l->name);
    h->locs[i].function = pp__strdup(l->function);
    h->locs[i].file = pp__strdup(l->file);
    if ((l->name && !h->locs[i].name) ||
        (l->function && !h->locs[i].function) ||
        (l->file && !h->locs[i].file))
      return h->nlocs++, -1;
  }
  for (size_t i = 0; i < t->nthreads; i++, h->nthreads++) {
    const pp_thread *th = &t->threads[i];
    pp_thread *d = &h->threads[i];
    d->tid = th->tid;
    d->pid = th->pid;
    d->dropped = th->dropped;
    d->name = pp__strdup(th->name);
    if (th->name && !d->name)
      return h->nthreads++, -1;
  }
  return 0;
}

/* Open every file of the directory, as load_dir would read them: an
 * unreadable app.pptrace fails, another unreadable file is skipped (its
 * line said). 0; 1 when a file is a stats-mode one (the merge in memory
 * says what it does with it); -1 (said). */
static int dir_open(chrome_dir *d, const char *dir) {
  run_path *files;
  long nf = run_files(dir, &files);
  if (nf < 0)
    return -1;
  if (nf && !(d->p = pp__calloc((size_t)nf, sizeof *d->p))) {
    pp__free(files);
    fprintf(stderr, "pipeprof: out of memory reading %s\n", dir);
    return -1;
  }
  for (long i = 0; i < nf; i++)
    memcpy(d->p[i].path, files[i], sizeof files[i]);
  d->n = (size_t)nf;
  pp__free(files);
  int have = 0;
  for (size_t i = 0; i < d->n; i++) {
    dir_part *q = &d->p[i];
    char err[512];
    q->d = d;
    pp_read_opts ro = {0, part_event, q, 1};
    int rc = pp__trace_reader_open(q->path, &q->t, &ro, &q->r, err,
                                   sizeof err);
    if (rc != 0) {
      fprintf(stderr, "pipeprof: %s\n", err);
      if (rc == PP_TRACE_ENOMEM || (i == 0 && is_main_file(q->path)))
        return -1;
      continue;
    }
    q->opened = 1;
    have = 1;
    if (q->t.from_stats)
      return 1;
  }
  if (!have) {
    fprintf(stderr, "pipeprof: %s: no trace files (app.pptrace, "
                    "system.pptrace) in this directory\n",
            dir);
    return -1;
  }
  /* The view: the headers merged as the files will be. */
  int first = 1;
  for (size_t i = 0; i < d->n; i++) {
    dir_part *q = &d->p[i];
    if (!q->opened)
      continue;
    pp_trace h;
    int rc = header_copy(&q->t, &h);
    q->thread_base = first ? 0 : d->view.nthreads;
    q->nmap = first ? 0 : h.nlocs;
    if (rc == 0 && first)
      d->view = h;
    else if (rc == 0)
      rc = pp_trace_merge_ex(&d->view, &h, 1, &q->map);
    if (!first || rc != 0)
      pp_trace_free(&h);
    first = 0;
    if (rc != 0) {
      fprintf(stderr, "pipeprof: out of memory reading %s\n", dir);
      return -1;
    }
    if (q->t.diag.have_first &&
        (!d->view.diag.have_first ||
         q->t.diag.first_ns < d->view.diag.first_ns)) {
      d->view.diag.first_ns = q->t.diag.first_ns;
      d->view.diag.have_first = 1;
    }
  }
  return 0;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* 1 when no two threads of t share an id (processes of a run may reuse
 * one); 0 otherwise or when out of memory. */
static int distinct_tids(const pp_trace *t) {
  uint64_t *v = pp__malloc((t->nthreads ? t->nthreads : 1) * sizeof *v);
  if (!v)
    return 0;
  for (size_t i = 0; i < t->nthreads; i++)
    v[i] = t->threads[i].tid;
  qsort(v, t->nthreads, sizeof *v, cmp_u64);
  int ok = 1;
  for (size_t i = 1; i < t->nthreads && ok; i++)
    ok = v[i] != v[i - 1];
  pp__free(v);
  return ok;
}

static void dir_free(chrome_dir *d) {
  for (size_t i = 0; i < d->n; i++)
    pp__free(d->p[i].map);
  for (size_t i = 0; i < d->n; i++)
    if (d->p[i].r) {
      char err[512];
      (void)pp__trace_reader_finish(d->p[i].r, err, sizeof err);
      d->p[i].r = NULL;
      pp_trace_free(&d->p[i].t);
    } else if (d->p[i].opened) {
      pp_trace_free(&d->p[i].t);
    }
  pp__free(d->p);
  d->p = NULL;
  d->n = 0;
}

/* The Chrome export of path loaded in memory, keep events kept (a run
 * directory's merge, or an imported profile): EXIT_OK or EXIT_FAIL. */
static int export_chrome_loaded(const char *path, const char *out,
                                uint64_t keep, const pp_cli_with *w) {
  static const pp_slo none;
  pp_trace t;
  pp_analysis a;
  if (pp_cli_load_with(path, &t, &a, keep, 0, &none, w) != 0)
    return EXIT_FAIL;
  int rc = pp_cli_export_to(&a, pp_export_chrome, out);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  return rc;
}

static int export_chrome_dir(const char *dir, const char *out,
                             uint64_t keep) {
  chrome_dir d;
  memset(&d, 0, sizeof d);
  d.x = (chrome_tee){pp__stream_new(), NULL, out, NULL, 0, 0, 0, 0};
  if (!d.x.s || pp__stream_pools(d.x.s) != 0) {
    pp__stream_free(d.x.s);
    fprintf(stderr, "pipeprof: out of memory reading %s\n", dir);
    return EXIT_FAIL;
  }
  int rc = dir_open(&d, dir);
  if (rc == 1) { /* a stats-mode file: merged in memory */
    dir_free(&d);
    pp_trace_free(&d.view);
    pp__stream_free(d.x.s);
    return export_chrome_loaded(dir, out, keep, NULL);
  }
  if (rc != 0)
    goto fail;
  d.x.zones_unfed = distinct_tids(&d.view);
  /* The chunks, earliest first across the files. */
  for (;;) {
    dir_part *best = NULL;
    int64_t best_ns = 0, ns;
    for (size_t i = 0; i < d.n; i++)
      if (d.p[i].r && pp__trace_reader_next(d.p[i].r, &ns) &&
          (!best || ns < best_ns)) {
        best = &d.p[i];
        best_ns = ns;
      }
    if (!best)
      break;
    (void)pp__trace_reader_step(best->r);
    /* What no event still to be decoded can precede is written. */
    int64_t horizon = INT64_MAX;
    for (size_t i = 0; i < d.n; i++)
      if (d.p[i].r && (ns = pp__trace_reader_horizon(d.p[i].r)) < horizon)
        horizon = ns;
    if (d.x.c)
      (void)pp_chrome_stream_release(d.x.c, &d.view, horizon);
  }
  /* Each file's read ends; they merge as load_dir merges them. */
  pp_trace t;
  int have = 0;
  for (size_t i = 0; i < d.n; i++) {
    dir_part *q = &d.p[i];
    if (!q->r)
      continue;
    char err[512];
    int frc = pp__trace_reader_finish(q->r, err, sizeof err);
    q->r = NULL;
    q->opened = 0;
    if (frc != 0) { /* its events went out: the document would lack some */
      chrome_read_error(&d.x, out, err);
      goto fail_merged;
    }
    int mrc = have ? pp_trace_merge_process(&t, &q->t) : 0;
    if (!have)
      t = q->t;
    else
      pp_trace_free(&q->t);
    have = 1;
    if (mrc == -1) {
      fprintf(stderr, "pipeprof: out of memory reading %s (while merging "
                      "%s)\n",
              dir, q->path);
      goto fail_merged;
    }
  }
  dir_free(&d);
  rc = chrome_end(&d.x, &t, dir, out);
  pp_trace_free(&d.view);
  return rc;
fail_merged:
  if (have)
    pp_trace_free(&t);
fail:
  dir_free(&d);
  rc = chrome_fail(&d.x, out);
  pp_trace_free(&d.view);
  return rc;
}

int pp_cli_export_chrome_with(const char *path, const char *out, uint64_t keep,
                              const pp_cli_with *w) {
  if (w && w->n) /* profiles merged in: in memory, every event */
    return export_chrome_loaded(path, out, keep, w);
  return pp_cli_export_chrome(path, out, keep);
}

int pp_cli_export_chrome(const char *path, const char *out, uint64_t keep) {
  struct stat st;
  int is_dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
  if (!is_dir && is_json_file(path)) /* an imported profile: in memory */
    return export_chrome_loaded(path, out, UINT64_MAX, NULL);
  if (is_dir) {
    if (keep == UINT64_MAX) /* every event: streamed */
      return export_chrome_dir(path, out, keep);
    /* --details N: the window of a merge in memory */
    return export_chrome_loaded(path, out, keep, NULL);
  }
  char err[512];
  chrome_tee x = {pp__stream_new(), NULL, out, NULL, 0, 1, 0, 0};
  if (!x.s || pp__stream_pools(x.s) != 0) {
    pp__stream_free(x.s);
    fprintf(stderr, "pipeprof: out of memory reading %s\n", path);
    return EXIT_FAIL;
  }
  pp_read_opts ro = {0, tee_event, &x, 1}; /* a file: one thread per id */
  pp_trace t;
  pp__trace_reader *r;
  if (pp__trace_reader_open(path, &t, &ro, &r, err, sizeof err) != 0) {
    chrome_read_error(&x, out, err);
    return chrome_fail(&x, out);
  }
  /* Chunk by chunk: what no later event can precede is written at once
   * (the first pass knows each chunk's earliest time). */
  int64_t ns;
  while (pp__trace_reader_next(r, &ns) && pp__trace_reader_step(r) == 0)
    if (x.c)
      (void)pp_chrome_stream_release(x.c, &t, pp__trace_reader_horizon(r));
  if (pp__trace_reader_finish(r, err, sizeof err) != 0) {
    chrome_read_error(&x, out, err);
    return chrome_fail(&x, out);
  }
  return chrome_end(&x, &t, path, out);
}
