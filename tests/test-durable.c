/* SPDX-License-Identifier: MIT */
/*
 * Durable rings (src/ring/arena.c) and salvage (src/salvage/): a process
 * killed with SIGKILL loses nothing it recorded, the arena's file goes
 * away with every clean end, and a salvager refuses rings that do not
 * fit their trace.
 */
#define PP_ENABLE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "analyze/analyze.h"
#include "model/reader.h"
#include "pipeprof.h"
#include "ring/arena.h"
#include "runner.h"
#include "salvage/salvage.h"
#include "sink/stats.h"
#include "format/stats_payload.h"

static void dpath(char *buf, size_t len, const char *name) {
  snprintf(buf, len, "%s/%s", pp_test_tmpdir(), name);
}

static void nap_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

typedef struct shared {
  _Atomic int ready;
  _Atomic uint64_t done; /* zones the child closed */
} shared;

static shared *shared_map(void) {
  void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                 -1, 0);
  CHECK(p != MAP_FAILED);
  memset(p, 0, sizeof(shared));
  return p;
}

/* A child recording zone "work" in a loop (a counter beside it), counting
 * each closed zone in sh->done after its end was recorded; its stderr in
 * the file err and its rings in rings_dir when they are not NULL. */
static pid_t child_logged(const char *path, shared *sh, unsigned sleep_us,
                          pp_mode mode, const char *err,
                          const char *rings_dir) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid != 0)
    return pid;
  if (err) {
    int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, 2) < 0)
      _exit(3);
  }
  if (rings_dir)
    setenv("PIPEPROF_RINGS_DIR", rings_dir, 1);
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.mode = mode;
  if (pp_init(&cfg) != PP_OK)
    _exit(3);
  pp_thread_name("durable-main");
  atomic_store(&sh->ready, 1);
  for (;;) {
    {
      PP_ZONE("work");
      PP_COUNTER_ADD("work-count", 1);
      if (sleep_us)
        nap_us(sleep_us);
      else /* busy: about 500,000 zones a second */
        for (volatile int k = 0; k < 500; k++) {
        }
    }
    atomic_fetch_add(&sh->done, 1);
  }
}

static pid_t child_in_mode(const char *path, shared *sh, unsigned sleep_us,
                           pp_mode mode) {
  return child_logged(path, sh, sleep_us, mode, NULL, NULL);
}

/* What the file err holds once it holds phrase (waiting at most 30 s). */
static void wait_said(const char *err, const char *phrase, char *said,
                      size_t n) {
  said[0] = 0;
  for (int i = 0; i < 30000 && !strstr(said, phrase); i++) {
    nap_us(1000);
    FILE *f = fopen(err, "r");
    if (f) {
      size_t k = fread(said, 1, n - 1, f);
      said[k] = 0;
      fclose(f);
    }
  }
}

/* Whether the child runs on: it closes more zones than n more (within
 * 30 s), and has not ended. */
static int runs_on(pid_t pid, shared *sh, uint64_t n) {
  uint64_t then = atomic_load(&sh->done);
  for (int i = 0; i < 30000; i++) {
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid)
      return 0;
    if (atomic_load(&sh->done) > then + n)
      return 1;
    nap_us(1000);
  }
  return 0;
}

static void wait_ready(pid_t pid, shared *sh) {
  for (int i = 0; i < 10000 && !atomic_load(&sh->ready); i++) {
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid)
      PP_FAIL("recording child ended early (status 0x%x)", st);
    nap_us(1000);
  }
  CHECK(atomic_load(&sh->ready));
}

static void kill9(pid_t pid) {
  CHECK_EQ(kill(pid, SIGKILL), 0);
  int st = 0;
  CHECK_EQ(waitpid(pid, &st, 0), pid);
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

/* A child recording in mode (a zone every sleep_us, or busy), killed
 * with SIGKILL run_us after it started: the zones it closed. */
static uint64_t killed_after(const char *path, pp_mode mode, unsigned sleep_us,
                             long run_us) {
  shared *sh = shared_map();
  pid_t pid = child_in_mode(path, sh, sleep_us, mode);
  CHECK(pid > 0);
  wait_ready(pid, sh);
  nap_us(run_us);
  kill9(pid);
  uint64_t done = atomic_load(&sh->done);
  munmap(sh, 4096);
  return done;
}

static void load(const char *path, pp_trace *t, pp_analysis *a) {
  char err[512] = "";
  if (pp_trace_read_file(path, t, err, sizeof err) != 0)
    PP_FAIL("cannot read %s: %s", path, err);
  memset(a, 0, sizeof *a);
  CHECK_EQ(pp_analyze(t, a), 0);
}

/* Closed zones called name in the trace. */
static uint64_t closed_zones(const pp_analysis *a, const char *name) {
  const pp_trace *t = a->trace;
  uint64_t n = 0;
  for (size_t i = 0; i < t->nthreads; i++) {
    const pp_thread_figures *x = &a->threads[i];
    for (size_t j = 0; j < x->nzones; j++) {
      uint32_t loc = x->zones[j].loc;
      if (loc < t->nlocs && t->locs[loc].name &&
          !strcmp(t->locs[loc].name, name) && !x->zones[j].unclosed)
        n++;
    }
  }
  return n;
}

static void *other_thread(void *arg) {
  (void)arg;
  for (int i = 0; i < 100; i++) {
    PP_ZONE("other");
  }
  return NULL;
}

static uint64_t file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Killed at random times, busy and trickling: after salvage every zone
 * the child closed is in the trace (and at most the one it was closing),
 * the file is finished, says how the process ended, and the rings are
 * gone. */
PP_TEST(durable_kill9_loses_nothing) {
  char path[4096];
  dpath(path, sizeof path, "kill9.pptrace");
  srand((unsigned)getpid());
  uint64_t salvaged = 0;
  for (int trial = 0; trial < 6; trial++) {
    uint64_t done = killed_after(path, PP_MODE_TRACE, trial % 2 ? 200 : 0,
                                 20000 + rand() % 100000);
    CHECK_GT(done, 0);

    pp_trace t;
    pp_analysis a;
    load(path, &t, &a);
    CHECK_EQ(t.diag.clean_end, 0);
    uint64_t before = closed_zones(&a, "work");
    const char *rings = pp_trace_meta(&t, "durable.rings");
    CHECK(rings != NULL);
    char arena[4096];
    snprintf(arena, sizeof arena, "%s", rings);
    pp_analysis_free(&a);
    pp_trace_free(&t);
    CHECK_EQ(access(arena, F_OK), 0);

    pp_salvage_result r;
    char msg[8192];
    int rc = pp_salvage(path, "signal SIGKILL", &r, msg, sizeof msg);
    if (rc != PP_SALVAGE_DONE)
      PP_FAIL("salvage: %d %s", rc, msg);
    CHECK_CONTAINS(msg, "salvaged");
    CHECK(access(arena, F_OK) != 0); /* removed */
    salvaged += r.events;

    load(path, &t, &a);
    CHECK_EQ(t.diag.clean_end, 1);
    CHECK_EQ(t.diag.chunks_bad, 0);
    CHECK_EQ(t.diag.bytes_skipped, 0);
    /* Every zone recorded is there; a begin the ring had no room for
     * (the writer starved of CPU) is dropped and counted, not lost. */
    uint64_t got = closed_zones(&a, "work"), dropped = 0;
    for (size_t i = 0; i < t.nthreads; i++)
      dropped += t.threads[i].dropped;
    if (got > done + 1 || got + dropped < done || got < before)
      PP_FAIL("trial %d: %llu closed zones after salvage (%llu before, %llu "
              "events dropped), the child closed %llu",
              trial, (unsigned long long)got, (unsigned long long)before,
              (unsigned long long)dropped, (unsigned long long)done);
    if (!dropped && got < done)
      PP_FAIL("trial %d: %llu of %llu closed zones, none dropped", trial,
              (unsigned long long)got, (unsigned long long)done);
    CHECK_STR(pp_trace_meta(&t, "process.end"), "signal SIGKILL, salvaged");
    const char *ev = pp_trace_meta(&t, "process.salvaged_events");
    CHECK(ev != NULL);
    CHECK_EQ(strtoull(ev, NULL, 10), r.events);
    pp_analysis_free(&a);
    pp_trace_free(&t);

    /* once only: the trace is finished now */
    CHECK_EQ(pp_salvage(path, NULL, &r, msg, sizeof msg), PP_SALVAGE_NOTHING);
    CHECK_CONTAINS(msg, "finished");
  }
  /* the writer drains every 10 ms; kills land between its passes */
  CHECK_GT(salvaged, 0);
}

/* Stats mode's figures of site name: closed zones (counts of a zone
 * site) or samples (of a counter). */
static uint64_t stats_zones(const pp_analysis *a, const char *name) {
  for (size_t i = 0; i < a->prof.nzones; i++)
    if (!strcmp(pp_trace_loc_name(a->trace, a->prof.zones[i].loc), name))
      return a->prof.zones[i].count;
  return 0;
}

static uint64_t stats_samples(const pp_analysis *a, const char *name) {
  for (size_t i = 0; i < a->prof.ncounters; i++)
    if (!strcmp(pp_trace_loc_name(a->trace, a->prof.counters[i].loc), name))
      return a->prof.counters[i].samples;
  return 0;
}

typedef struct stats_shared {
  _Atomic int ready;
  _Atomic uint64_t done;   /* "work" zones closed by the main thread */
  _Atomic uint64_t joined; /* "helper" zones of threads that ended */
} stats_shared;

static void *helper_thread(void *arg) {
  (void)arg;
  for (int i = 0; i < 100; i++) {
    PP_ZONE("helper");
  }
  return NULL;
}

/* Stats mode, killed at random times: every zone the threads closed is
 * counted (the live thread's from its tally set, the ended threads' from
 * the writer's checkpoint or their sets), and every counter sample (from
 * the checkpoint and the ring). */
PP_TEST(durable_stats_kill9_loses_nothing) {
  char path[4096], msg[8192];
  dpath(path, sizeof path, "stats-kill9.pptrace");
  srand((unsigned)getpid() * 7u);
  for (int trial = 0; trial < 6; trial++) {
    stats_shared *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sh != MAP_FAILED);
    memset(sh, 0, sizeof *sh);
    unsigned sleep_us = trial % 2 ? 100 : 0;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      pp_config cfg;
      pp_config_init(&cfg);
      cfg.out_path = path;
      cfg.mode = PP_MODE_STATS;
      if (pp_init(&cfg) != PP_OK)
        _exit(3);
      pp_thread_name("stats-main");
      atomic_store(&sh->ready, 1);
      for (uint64_t i = 1;; i++) {
        {
          PP_ZONE("work");
          PP_COUNTER_ADD("work-count", 1);
          if (sleep_us)
            nap_us(sleep_us);
        }
        atomic_fetch_add(&sh->done, 1);
        if (i % 2000 == 0) { /* a thread that ends: its set is merged */
          pthread_t th;
          if (pthread_create(&th, NULL, helper_thread, NULL) == 0 &&
              pthread_join(th, NULL) == 0)
            atomic_fetch_add(&sh->joined, 100);
        }
      }
    }
    CHECK(pid > 0);
    for (int i = 0; i < 10000 && !atomic_load(&sh->ready); i++)
      nap_us(1000);
    CHECK(atomic_load(&sh->ready));
    nap_us(20000 + rand() % 150000);
    kill9(pid);
    uint64_t done = atomic_load(&sh->done), joined = atomic_load(&sh->joined);
    munmap(sh, 4096);
    CHECK_GT(done, 0);

    pp_salvage_result r;
    int rc = pp_salvage(path, "signal SIGKILL", &r, msg, sizeof msg);
    if (rc != PP_SALVAGE_DONE)
      PP_FAIL("trial %d: salvage: %d %s", trial, rc, msg);
    CHECK(access(r.arena, F_OK) != 0);
    CHECK_EQ(r.unreadable, 0);
    pp_trace t;
    pp_analysis a;
    load(path, &t, &a);
    CHECK_EQ(t.diag.clean_end, 1);
    CHECK_EQ(t.diag.chunks_bad, 0);
    CHECK_STR(pp_trace_meta(&t, "mode"), "stats");
    CHECK_STR(pp_trace_meta(&t, "process.end"), "signal SIGKILL, salvaged");
    uint64_t work = stats_zones(&a, "work"),
             samples = stats_samples(&a, "work-count"),
             helper = stats_zones(&a, "helper"), dropped = 0;
    for (size_t i = 0; i < t.nthreads; i++)
      dropped += t.threads[i].dropped;
    /* at most the zone it was closing, and the helper it was joining */
    if (work < done || work > done + 1 || samples + dropped < done ||
        samples > done + 1 || helper < joined || helper > joined + 100)
      PP_FAIL("trial %d: %llu work zones, %llu samples (%llu dropped), "
              "%llu helper zones after salvage; the child closed %llu work "
              "zones and joined %llu helper zones",
              trial, (unsigned long long)work, (unsigned long long)samples,
              (unsigned long long)dropped, (unsigned long long)helper,
              (unsigned long long)done, (unsigned long long)joined);
    int named = 0;
    for (size_t i = 0; i < t.nthreads; i++)
      named |= t.threads[i].name && !strcmp(t.threads[i].name, "stats-main");
    CHECK(named);
    pp_analysis_free(&a);
    pp_trace_free(&t);
  }
}

/* `pipeprof report` salvages an unfinished trace by itself and says so. */
PP_TEST(durable_report_salvages) {
  char path[4096];
  dpath(path, sizeof path, "report.pptrace");
  uint64_t done = killed_after(path, PP_MODE_TRACE, 50, 50000);
  pp_cli_result r = pp_test_cli("report '%s'", path);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.err, "salvaged");
  CHECK_CONTAINS(r.out, "recovered from its durable rings");
  CHECK(strstr(r.out, "without END chunk") == NULL);
  pp_cli_result_free(&r);
  pp_trace t;
  pp_analysis a;
  load(path, &t, &a);
  uint64_t got = closed_zones(&a, "work");
  CHECK(got >= done && got <= done + 1);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  /* a second report reads the finished file: no salvage line */
  r = pp_test_cli("report '%s'", path);
  CHECK_EQ(r.rc, 0);
  CHECK(strstr(r.err, "salvaged") == NULL);
  pp_cli_result_free(&r);
}

/* Kill a child, return its arena's path (its trace at path). */
static void killed_child(const char *path, char *arena, size_t n) {
  killed_after(path, PP_MODE_TRACE, 100, 30000);
  pp_trace t;
  char err[512];
  CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
  const char *rings = pp_trace_meta(&t, "durable.rings");
  CHECK(rings != NULL);
  snprintf(arena, n, "%s", rings);
  pp_trace_free(&t);
}

/* Rewrite bytes of the arena at off. */
static void poke(const char *arena, uint64_t off, const void *v, size_t n) {
  int fd = open(arena, O_WRONLY);
  CHECK(fd >= 0);
  CHECK_EQ(pwrite(fd, v, n, (off_t)off), (ssize_t)n);
  close(fd);
}

#define HDR_FIELD(f) ((uint64_t)offsetof(pp__arena_hdr, f))

/* Rings that do not fit their trace are refused with one line, and the
 * trace is left as it was. */
PP_TEST(durable_salvage_refuses_bad_rings) {
  char path[4096], arena[4096], msg[8192];
  pp_salvage_result r;
  dpath(path, sizeof path, "bad.pptrace");
  static const struct {
    const char *what, *expect;
  } cases[] = {{"magic", "bad magic"},
               {"commit", "not a chunk boundary"},
               {"token", "another session"},
               {"short", "cut short"}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    killed_child(path, arena, sizeof arena);
    uint64_t size = file_size(path);
    if (!strcmp(cases[k].what, "magic"))
      poke(arena, 0, "XXXXXXXX", 8);
    else if (!strcmp(cases[k].what, "commit")) {
      uint64_t off = 65; /* inside the first chunk */
      poke(arena, HDR_FIELD(commit_off), &off, sizeof off);
    } else if (!strcmp(cases[k].what, "token")) {
      uint64_t tok = 42;
      poke(arena, HDR_FIELD(token), &tok, sizeof tok);
    } else {
      CHECK_EQ(truncate(arena, 100), 0);
    }
    int rc = pp_salvage(path, NULL, &r, msg, sizeof msg);
    if (rc != PP_SALVAGE_ERROR || !strstr(msg, cases[k].expect))
      PP_FAIL("%s: rc %d, message: %s", cases[k].what, rc, msg);
    CHECK(strchr(msg, '\n') == NULL);
    CHECK_EQ(file_size(path), size); /* untouched */
    unlink(arena);
  }
  /* rings removed: nothing to do, said */
  killed_child(path, arena, sizeof arena);
  unlink(arena);
  CHECK_EQ(pp_salvage(path, NULL, &r, msg, sizeof msg), PP_SALVAGE_NOTHING);
  CHECK_CONTAINS(msg, "gone");
  /* not a trace */
  CHECK_EQ(pp_salvage(arena, NULL, &r, msg, sizeof msg), PP_SALVAGE_NOT_TRACE);
}

/* A process that still records is left alone. */
PP_TEST(durable_salvage_leaves_a_live_process) {
  char path[4096], msg[8192];
  dpath(path, sizeof path, "live.pptrace");
  shared *sh = shared_map();
  pid_t pid = child_in_mode(path, sh, 100, PP_MODE_TRACE);
  CHECK(pid > 0);
  wait_ready(pid, sh);
  nap_us(30000);
  pp_salvage_result r;
  int rc = pp_salvage(path, NULL, &r, msg, sizeof msg);
  CHECK_EQ(rc, PP_SALVAGE_NOTHING);
  CHECK_CONTAINS(msg, "still records");
  kill9(pid);
  CHECK_EQ(pp_salvage(path, NULL, &r, msg, sizeof msg), PP_SALVAGE_DONE);
  munmap(sh, 4096);
}

/* Every clean end removes the rings: exit, _exit, a signal the library
 * finishes the file on, and a session ended by the program. */
PP_TEST(durable_clean_ends_leave_no_rings) {
  static const char *const ends[] = {"exit", "_exit", "sigterm", "shutdown"};
  for (size_t k = 0; k < sizeof ends / sizeof *ends; k++) {
    char path[4096];
    dpath(path, sizeof path, "clean.pptrace");
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      signal(SIGTERM, SIG_DFL);
      pp_config cfg;
      pp_config_init(&cfg);
      cfg.out_path = path;
      if (pp_init(&cfg) != PP_OK)
        _exit(3);
      for (int i = 0; i < 1000; i++) {
        PP_ZONE("clean");
      }
      if (!strcmp(ends[k], "exit"))
        exit(0);
      if (!strcmp(ends[k], "_exit"))
        _exit(0);
      if (!strcmp(ends[k], "sigterm"))
        raise(SIGTERM);
      pp_shutdown();
      exit(0);
    }
    int st;
    CHECK_EQ(waitpid(pid, &st, 0), pid);
    pp_trace t;
    char err[512];
    CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
    CHECK_EQ(t.diag.clean_end, 1);
    const char *rings = pp_trace_meta(&t, "durable.rings");
    CHECK(rings != NULL);
    if (access(rings, F_OK) == 0)
      PP_FAIL("%s: the rings %s are still there", ends[k], rings);
    pp_trace_free(&t);
  }
}

/* PIPEPROF_RINGS_DIR: another folder, or off (said in the trace). */
PP_TEST(durable_rings_dir) {
  char path[4096], dir[4096];
  dpath(path, sizeof path, "dir.pptrace");
  dpath(dir, sizeof dir, "rings");
  CHECK_EQ(mkdir(dir, 0700), 0);
  static const char *const values[] = {NULL, "off", "/no/such/folder", NULL};
  for (size_t k = 0; k < 4; k++) {
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      if (k == 3)
        unsetenv("PIPEPROF_RINGS_DIR"); /* the default: /dev/shm */
      else
        setenv("PIPEPROF_RINGS_DIR", values[k] ? values[k] : dir, 1);
      pp_config cfg;
      pp_config_init(&cfg);
      cfg.out_path = path;
      if (pp_init(&cfg) != PP_OK)
        _exit(3);
      PP_MARK("m");
      exit(0);
    }
    int st;
    CHECK_EQ(waitpid(pid, &st, 0), pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    pp_trace t;
    char err[512];
    CHECK_EQ(pp_trace_read_file(path, &t, err, sizeof err), 0);
    const char *rings = pp_trace_meta(&t, "durable.rings");
    const char *off = pp_trace_meta(&t, "unavailable.durable");
    if (k == 0) {
      CHECK(rings != NULL);
      CHECK(strncmp(rings, dir, strlen(dir)) == 0);
    } else if (k == 3) { /* /dev/shm, else beside the trace */
      CHECK(rings != NULL);
      if (access("/dev/shm", W_OK | X_OK) == 0)
        CHECK(strncmp(rings, "/dev/shm/pipeprof-", 18) == 0);
      else
        CHECK(strncmp(rings, pp_test_tmpdir(), strlen(pp_test_tmpdir())) == 0);
      CHECK(access(rings, F_OK) != 0); /* exit removed it */
    } else {
      CHECK(rings == NULL);
      CHECK(off != NULL);
      CHECK_CONTAINS(off, k == 1 ? "turned off" : "not a folder");
    }
    pp_trace_free(&t);
  }
}

/* Flight mode: the ring is the recording; kill -9 leaves it readable and
 * the salvager writes the dump the process could not, whole. */
PP_TEST(durable_flight_kill9_leaves_the_recording) {
  char path[4096], msg[8192];
  dpath(path, sizeof path, "flight.pptrace");
  uint64_t done = killed_after(path, PP_MODE_FLIGHT, 100, 60000);
  CHECK_GT(done, 0);
  CHECK_EQ(file_size(path), 0); /* no dump was written */
  pp_salvage_result r;
  int rc = pp_salvage(path, "signal SIGKILL", &r, msg, sizeof msg);
  if (rc != PP_SALVAGE_DONE)
    PP_FAIL("salvage: %d %s", rc, msg);
  CHECK(access(r.arena, F_OK) != 0);
  pp_trace t;
  pp_analysis a;
  load(path, &t, &a);
  CHECK_EQ(t.diag.clean_end, 1);
  CHECK_STR(pp_trace_meta(&t, "mode"), "flight");
  CHECK_STR(pp_trace_meta(&t, "process.end"), "signal SIGKILL, salvaged");
  /* a 4 MiB ring holds every zone of these 60 ms */
  uint64_t got = closed_zones(&a, "work");
  if (got < done || got > done + 1)
    PP_FAIL("%llu zones in the dump, the child closed %llu",
            (unsigned long long)got, (unsigned long long)done);
  CHECK(t.nthreads == 1 && t.threads[0].name &&
        !strcmp(t.threads[0].name, "durable-main"));
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* The arena cannot hold every thread (here: its segment table is cut to
 * one thread's state, ring and site block): the others record in plain
 * memory, the trace says how many and why, and the recording is whole. */
PP_TEST(durable_fallback_is_said) {
  char path[4096];
  dpath(path, sizeof path, "fallback.pptrace");
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    pp__arena_test_seg_limit(3);
    pp_config cfg;
    pp_config_init(&cfg);
    cfg.out_path = path;
    if (pp_init(&cfg) != PP_OK)
      _exit(3);
    { PP_ZONE("first"); } /* state, ring; the writer adds the site block */
    nap_us(30000);        /* the writer meets the site: its block */
    pthread_t th;
    if (pthread_create(&th, NULL, other_thread, NULL) != 0)
      _exit(4);
    pthread_join(th, NULL);
    exit(0);
  }
  int st;
  CHECK_EQ(waitpid(pid, &st, 0), pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  pp_trace t;
  pp_analysis a;
  load(path, &t, &a);
  CHECK_EQ(t.diag.clean_end, 1);
  CHECK_EQ(closed_zones(&a, "first"), 1);
  CHECK_EQ(closed_zones(&a, "other"), 100);
  const char *fb = pp_trace_meta(&t, "durable.fallbacks");
  CHECK(fb != NULL && strtoull(fb, NULL, 10) >= 1);
  CHECK_CONTAINS(pp_trace_meta(&t, "durable.fallback_why"),
                 "segment table is full");
  pp_analysis_free(&a);
  pp_trace_free(&t);
  pp_cli_result r = pp_test_cli("report '%s'", path);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "served outside the durable rings");
  pp_cli_result_free(&r);
}

/* `pipeprof recover`: a trace, a rings file, or every rings file of the
 * user in PIPEPROF_RINGS_DIR (the runner sets it to the test's folder). */
PP_TEST(durable_recover_command) {
  char path[4096], arena[4096];
  dpath(path, sizeof path, "recover.pptrace");
  /* by the rings file */
  killed_child(path, arena, sizeof arena);
  pp_cli_result r = pp_test_cli("recover --list '%s'", arena);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, arena);
  pp_cli_result_free(&r);
  CHECK_EQ(access(arena, F_OK), 0); /* --list salvages nothing */
  r = pp_test_cli("recover '%s'", arena);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "salvaged");
  CHECK(access(arena, F_OK) != 0);
  pp_cli_result_free(&r);
  /* again: the trace is finished */
  r = pp_test_cli("recover '%s'", path);
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "finished");
  pp_cli_result_free(&r);
  /* every rings file in PIPEPROF_RINGS_DIR */
  killed_child(path, arena, sizeof arena);
  r = pp_test_cli("recover");
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "salvaged");
  CHECK(access(arena, F_OK) != 0);
  pp_cli_result_free(&r);
  /* rings that do not fit: exit 1, one line, the trace as it was */
  killed_child(path, arena, sizeof arena);
  uint64_t off = 65;
  poke(arena, HDR_FIELD(commit_off), &off, sizeof off);
  uint64_t size = file_size(path);
  r = pp_test_cli("recover '%s'", path);
  CHECK_EQ(r.rc, 1);
  CHECK_CONTAINS(r.out, "not a chunk boundary");
  CHECK_EQ(pp_test_count_lines(r.out), 1);
  CHECK_EQ(file_size(path), size);
  pp_cli_result_free(&r);
  unlink(arena);
  /* nothing left */
  r = pp_test_cli("recover");
  CHECK_EQ(r.rc, 0);
  CHECK_CONTAINS(r.out, "no rings files of yours");
  pp_cli_result_free(&r);
}

/* Salvagers at once (two reports of one killed run): one salvages, the
 * others leave the trace to it, and the trace is whole once. */
PP_TEST(durable_concurrent_salvagers) {
  char path[4096];
  dpath(path, sizeof path, "concurrent.pptrace");
  uint64_t done = killed_after(path, PP_MODE_TRACE, 50, 40000);
  enum { N = 4 };
  pid_t kids[N];
  fflush(NULL);
  for (int k = 0; k < N; k++) {
    kids[k] = fork();
    CHECK(kids[k] >= 0);
    if (kids[k] == 0) {
      pp_salvage_result r;
      char msg[8192];
      int rc = pp_salvage(path, NULL, &r, msg, sizeof msg);
      _exit(rc == PP_SALVAGE_DONE ? 10 : rc == PP_SALVAGE_NOTHING ? 11 : 12);
    }
  }
  int salvaged = 0;
  for (int k = 0; k < N; k++) {
    int st;
    CHECK_EQ(waitpid(kids[k], &st, 0), kids[k]);
    CHECK(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 10 || WEXITSTATUS(st) == 11);
    salvaged += WEXITSTATUS(st) == 10;
  }
  CHECK_EQ(salvaged, 1);
  pp_trace t;
  pp_analysis a;
  load(path, &t, &a);
  CHECK_EQ(t.diag.clean_end, 1);
  CHECK_EQ(t.diag.chunks_bad, 0);
  CHECK_EQ(t.diag.bytes_skipped, 0);
  uint64_t got = closed_zones(&a, "work");
  CHECK(got >= done && got <= done + 1);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* The checkpoint (sink/stats.h) restores the aggregate it saved: the
 * same STATS payload at once, and the same after more events (a frame
 * series's next gap, a counter's next addition, a range's other half);
 * every cut of it is refused whole. */
static void feed_some(pp__aggregate *a, int64_t t0, int first) {
  pp__aggregate_event(a, 7, PPT_EV_FRAME, 1, t0, 0);
  pp__aggregate_event(a, 7, PPT_EV_FRAME, 1, t0 + 16000000, 0);
  pp__aggregate_event(a, 7, PPT_EV_COUNTER_ADD, 2, t0 + 1, 5);
  pp__aggregate_event(a, 8, PPT_EV_COUNTER_SETF, 3, t0 + 2,
                      0x400921FB54442D18ull /* pi */);
  pp__aggregate_event(a, 7, first ? PPT_EV_RANGE_BEGIN : PPT_EV_RANGE_END, 4,
                      t0 + 3, 99);
  pp__aggregate_gpu(a, 0, 0, 11, 7, t0, t0 + 10, 12345);
  pp_hist h;
  pp_hist_init(&h);
  for (uint64_t v = 1000; v < 90000; v += 977)
    pp_hist_record(&h, v);
  pp__aggregate_zones(a, 8, 0, &h, 777);
  pp_hist_free(&h);
  pp__agg_thread x = {123456, 40, t0, t0 + 99, {0}};
  x.pc.lost_ends = 1;
  pp__aggregate_thread_zones(a, 8, &x);
}

static void define_all(pp__aggregate *a) {
  static const pp_srcloc sites[] = {{"z", NULL, NULL, 0, PP_KIND_ZONE},
                                    {"f", NULL, NULL, 0, PP_KIND_FRAME},
                                    {"c", NULL, NULL, 0, PP_KIND_COUNTER},
                                    {"g", NULL, NULL, 0, PP_KIND_COUNTER},
                                    {"r", NULL, NULL, 0, PP_KIND_ZONE}};
  for (uint32_t i = 0; i < 5; i++)
    pp__aggregate_define(a, i, &sites[i]);
}

static void encode_finished(pp__aggregate *a, ppt_buf *out) {
  pp__aggregate_finish(a, INT64_MAX);
  pp__aggregate_encode(a, out);
  CHECK(!out->oom);
}

PP_TEST(durable_checkpoint_restores_the_aggregate) {
  pp__aggregate *a = pp__aggregate_new(), *b = pp__aggregate_new();
  CHECK(a && b);
  define_all(a);
  define_all(b);
  feed_some(a, 1000000000, 1);
  ppt_buf ck = {0};
  pp__aggregate_save(a, &ck);
  CHECK(!ck.oom && ck.len > 0);
  CHECK_EQ(pp__aggregate_load(b, ck.data, ck.len), 0);
  /* more of the same into both: the continuation state came back */
  feed_some(a, 2000000000, 0);
  feed_some(b, 2000000000, 0);
  ppt_buf ea = {0}, eb = {0};
  encode_finished(a, &ea);
  encode_finished(b, &eb);
  CHECK_EQ(ea.len, eb.len);
  CHECK(memcmp(ea.data, eb.data, ea.len) == 0);
  /* cut anywhere: refused */
  for (size_t cut = 0; cut < ck.len; cut++) {
    pp__aggregate *c = pp__aggregate_new();
    CHECK(c != NULL);
    define_all(c);
    CHECK_EQ(pp__aggregate_load(c, ck.data, cut), -1);
    pp__aggregate_free(c);
  }
  ppt_buf_free(&ck);
  ppt_buf_free(&ea);
  ppt_buf_free(&eb);
  pp__aggregate_free(a);
  pp__aggregate_free(b);
}

/* Many processes: a program forks 50 children, each records 1,000 zones
 * and ends its own way (exit, _exit, kill -9, abort, SIGTERM); in trace
 * and stats mode every child's zones are counted, each child's file says
 * how it ended, and the report of the run lists them all. */
static void fifty_children(const char *path, pp_mode mode) {
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = path;
  cfg.mode = mode;
  if (pp_init(&cfg) != PP_OK)
    _exit(3);
  for (int i = 0; i < 10; i++) {
    PP_ZONE("parent");
  }
  pid_t kids[50];
  for (int k = 0; k < 50; k++) {
    fflush(NULL);
    kids[k] = fork();
    if (kids[k] < 0)
      _exit(4);
    if (kids[k] == 0) {
      for (int i = 0; i < 1000; i++) {
        PP_ZONE("child");
      }
      switch (k % 5) { /* the library's handlers finish abort and TERM */
      case 0:
        exit(0);
      case 1:
        _exit(0);
      case 2:
        raise(SIGKILL);
        break;
      case 3:
        abort();
      default:
        raise(SIGTERM);
      }
      _exit(5);
    }
  }
  for (int k = 0; k < 50; k++)
    waitpid(kids[k], NULL, 0);
  exit(0);
}

/* The name the salvager gave a site met after the last drain. */
static const char *unnamed_zone(const pp_trace *t) {
  for (uint32_t i = 0; i < t->nlocs; i++)
    if (t->locs[i].name && !strncmp(t->locs[i].name, "(site 0x", 8))
      return t->locs[i].name;
  return NULL;
}

PP_TEST_T(durable_fifty_children_all_counted, 180) {
  if (pp_test_skip_forked_sessions()) /* a recording process forks them */
    return;
  static const pp_mode modes[] = {PP_MODE_TRACE, PP_MODE_STATS};
  for (int m = 0; m < 2; m++) {
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/fifty-%d", pp_test_tmpdir(), m);
    CHECK_EQ(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/app.pptrace", dir);
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
      fifty_children(path, modes[m]);
    int st = 0;
    CHECK_EQ(waitpid(pid, &st, 0), pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* the killed children's rings wait for a salvager */
    pp_cli_result r = pp_test_cli("recover '%s'", dir);
    if (r.rc != 0)
      PP_FAIL("recover: exit %d\n%s%s", r.rc, r.out, r.err);
    char said[1 << 14];
    snprintf(said, sizeof said, "%s%s", r.out, r.err);
    pp_cli_result_free(&r);
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    struct dirent *e;
    int files = 0, salvaged = 0, unnamed_files = 0, ends[4] = {0, 0, 0, 0};
    uint64_t child = 0;
    while ((e = readdir(d)) != NULL) {
      if (strncmp(e->d_name, "app.pptrace.", 12) != 0)
        continue;
      char p[4400];
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      pp_trace t;
      pp_analysis a;
      load(p, &t, &a);
      CHECK_EQ(t.diag.clean_end, 1);
      /* a child killed before its writer's first pass (about 10 ms) met
       * its site after the last drain: its zones are counted, their name
       * is not known (process.salvaged_unnamed_sites says so) */
      const char *unnamed = pp_trace_meta(&t, "process.salvaged_unnamed_sites");
      const char *name =
          unnamed && atoi(unnamed) == 1 ? unnamed_zone(&t) : "child";
      unnamed_files += unnamed && atoi(unnamed) == 1;
      CHECK(name != NULL);
      uint64_t n = m ? stats_zones(&a, name) : closed_zones(&a, name);
      if (n != 1000)
        PP_FAIL("%s: %llu zones, the child recorded 1000 (ended: %s); "
                "recover said:\n%s",
                p, (unsigned long long)n, pp_trace_meta(&t, "process.end"),
                said);
      child += n;
      const char *end = pp_trace_meta(&t, "process.end");
      CHECK(end != NULL);
      salvaged += strstr(end, "salvaged") != NULL;
      ends[0] += !strcmp(end, "exit");
      ends[1] += !strcmp(end, "_exit");
      ends[2] += !strcmp(end, "signal SIGABRT");
      ends[3] += !strcmp(end, "signal SIGTERM");
      pp_analysis_free(&a);
      pp_trace_free(&t);
      files++;
    }
    closedir(d);
    CHECK_EQ(files, 50);
    CHECK_EQ(child, 50000);
    /* the ten killed with SIGKILL are salvaged; an abort or SIGTERM
     * whose handler could not finish the file in its bounded wait (a
     * loaded machine, a sanitizer's slow exit) is salvaged too, never
     * lost */
    if (ends[0] != 10 || ends[1] != 10 || salvaged < 10 ||
        ends[2] + ends[3] + salvaged != 30)
      PP_FAIL("%d salvaged, ten killed (exit %d, _exit %d, SIGABRT %d, "
              "SIGTERM %d)",
              salvaged, ends[0], ends[1], ends[2], ends[3]);
    r = pp_test_cli("report '%s'", dir);
    CHECK_EQ(r.rc, 0);
    CHECK_CONTAINS(r.out, "51 (");
    CHECK(strstr(r.out, "damaged") == NULL);
    /* each child's part of the zone they share: its 1,000 zones (a
     * killed one's zone may have no name: a zone of its own) */
    const char *pz = strstr(r.out, "\nzones by process (");
    CHECK(pz != NULL);
    const char *pz_end = strstr(pz + 1, "\n\n");
    int rows = 0;
    for (const char *l = strstr(pz, "\nchild "); l && (!pz_end || l < pz_end);
         l = strstr(l + 1, "\nchild ")) {
      CHECK(strstr(l, " 1000 ") != NULL && strstr(l, " 1000 ") < strchr(l + 1, '\n'));
      rows++;
    }
    CHECK_EQ(rows, 50 - unnamed_files);
    printf("# %s mode: %d of the 10 killed children's zones were named\n",
           m ? "stats" : "trace", 10 - unnamed_files);
    pp_cli_result_free(&r);
    const char *chromium = pp_test_chromium();
    if (chromium) { /* the HTML report lays the same table out */
      char page[4300], url[4400];
      snprintf(page, sizeof page, "%s/report.html", dir);
      r = pp_test_cli("export '%s' --format html -o '%s'", dir, page);
      CHECK_EQ(r.rc, 0);
      pp_cli_result_free(&r);
      snprintf(url, sizeof url, "file://%s", page);
      char *dom = pp_test_chromium_dom(chromium, url, "");
      CHECK(dom != NULL);
      CHECK_CONTAINS(dom, ">zones by process<");
      CHECK(strstr(dom, "unavailable: each process") == NULL);
      free(dom);
    }
  }
}

/* Two processes' STATS payloads merged (a stats-mode run's report): a
 * zone site both share adds up, the second's other sites are renumbered
 * and stay apart, both processes' threads, totals and GPU zones are
 * there, in the format's order. */
typedef struct merged_seen {
  uint64_t zone_count[16], zone_total[16], frames[16], samples[16];
  uint64_t threads, events, gpu, gpu_count;
  int64_t t0, t1;
  uint64_t last_gpu_loc;
  int gpu_sorted;
} merged_seen;

static int ms_zone(void *arg, ppt_stats_zone *r) {
  merged_seen *m = arg;
  CHECK(r->loc < 16);
  m->zone_count[r->loc] += r->count;
  m->zone_total[r->loc] += r->total;
  CHECK_EQ(r->hist.out->count, r->count);
  return 0;
}
static int ms_thread(void *arg, const ppt_stats_thread *r) {
  (void)r;
  ((merged_seen *)arg)->threads++;
  return 0;
}
static int ms_frame(void *arg, ppt_stats_frame *r) {
  CHECK(r->loc < 16);
  ((merged_seen *)arg)->frames[r->loc] += r->frames;
  return 0;
}
static int ms_counter(void *arg, const ppt_stats_counter *r) {
  CHECK(r->loc < 16);
  ((merged_seen *)arg)->samples[r->loc] += r->samples;
  return 0;
}
static int ms_totals(void *arg, const ppt_stats_totals *r) {
  merged_seen *m = arg;
  m->events = r->events;
  m->t0 = r->t0;
  m->t1 = r->t1;
  return 0;
}
static int ms_gpu(void *arg, ppt_stats_gpu *r) {
  merged_seen *m = arg;
  m->gpu_sorted &= !m->gpu || r->loc >= m->last_gpu_loc;
  m->last_gpu_loc = r->loc;
  m->gpu++;
  m->gpu_count += r->count;
  return 0;
}

static void payload_of(int64_t t0, ppt_buf *out) {
  pp__aggregate *a = pp__aggregate_new();
  CHECK(a != NULL);
  define_all(a);
  feed_some(a, t0, 1);
  feed_some(a, t0 + 1000000, 0);
  encode_finished(a, out);
  pp__aggregate_free(a);
}

PP_TEST(durable_stats_payloads_merge) {
  ppt_buf pa = {0}, pb = {0}, pm = {0};
  payload_of(1000000000, &pa);
  payload_of(5000000000, &pb);
  merged_seen one, both;
  static const ppt_stats_visitor v = {ms_zone,   ms_thread, ms_frame,
                                      ms_counter, ms_totals, ms_gpu,
                                      NULL,       NULL};
  memset(&one, 0, sizeof one);
  one.gpu_sorted = 1;
  CHECK_EQ(ppt_stats_walk(pa.data, pa.len, &v, &one, NULL), 0);
  /* b's zone sites 0 and 4 are shared (0 and 4), its frame and counter
   * sites 1, 2, 3 are its own (9, 10, 11) */
  static const uint32_t map[] = {0, 9, 10, 11, 4};
  CHECK_EQ(ppt_stats_merge(pa.data, pa.len, pb.data, pb.len, map, 5, &pm), 0);
  memset(&both, 0, sizeof both);
  both.gpu_sorted = 1;
  CHECK_EQ(ppt_stats_walk(pm.data, pm.len, &v, &both, NULL), 0);
  CHECK_GT(one.zone_count[0], 0);
  CHECK_EQ(both.zone_count[0], 2 * one.zone_count[0]);
  CHECK_EQ(both.zone_total[0], 2 * one.zone_total[0]);
  CHECK_GT(one.zone_count[4], 0); /* the range */
  CHECK_EQ(both.zone_count[4], 2 * one.zone_count[4]);
  CHECK_EQ(both.frames[1], one.frames[1]);
  CHECK_EQ(both.frames[9], one.frames[1]);
  CHECK_EQ(both.samples[2], one.samples[2]);
  CHECK_EQ(both.samples[10], one.samples[2]);
  CHECK_EQ(both.samples[11], one.samples[3]);
  CHECK_EQ(both.threads, 2 * one.threads);
  CHECK_EQ(both.events, 2 * one.events);
  CHECK_EQ(both.t0, one.t0);
  CHECK(both.t1 > 5000000000 && one.t1 < 5000000000);
  CHECK_EQ(both.gpu_count, 2 * one.gpu_count);
  CHECK(both.gpu_sorted);
  /* a malformed part: refused */
  ppt_buf bad = {0};
  CHECK_EQ(ppt_stats_merge(pa.data, pa.len, pb.data, pb.len / 2, map, 5, &bad),
           -1);
  ppt_buf_free(&bad);
  ppt_buf_free(&pa);
  ppt_buf_free(&pb);
  ppt_buf_free(&pm);
}

/* ---- the OOM killer ------------------------------------------------------- */

/* A memory cgroup of its own under this process's (cgroup v1's memory
 * controller, else v2's), limited to limit bytes: its folder in dir, and
 * the file a pid is moved in with in procs. 0, or -1 when this machine
 * gives none (not root, no memory controller). */
static int cg_write(const char *dir, const char *file, const char *v) {
  char p[4400];
  snprintf(p, sizeof p, "%s/%s", dir, file);
  FILE *f = fopen(p, "w");
  if (!f)
    return -1;
  int ok = fputs(v, f) >= 0;
  return fclose(f) == 0 && ok ? 0 : -1;
}

static int oom_cgroup(char *dir, size_t n, char *procs, size_t pn,
                      long limit) {
  FILE *f = fopen("/proc/self/cgroup", "r");
  if (!f)
    return -1;
  char line[1024], v1[1024] = "", v2[1024] = "";
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    char *c = strchr(line, ':'), *d = c ? strchr(c + 1, ':') : NULL;
    if (!d)
      continue;
    if (!strncmp(c + 1, "memory:", 7))
      snprintf(v1, sizeof v1, "%s", d + 1);
    else if (c[1] == ':')
      snprintf(v2, sizeof v2, "%s", d + 1);
  }
  fclose(f);
  char lim[32];
  snprintf(lim, sizeof lim, "%ld", limit);
  const char *roots[2] = {"/sys/fs/cgroup/memory", "/sys/fs/cgroup"};
  const char *rel[2] = {v1, v2};
  for (int k = 0; k < 2; k++) {
    if (k == 0 && !v1[0])
      continue;
    snprintf(dir, n, "%s%s/pipeprof-oom-%ld", roots[k], rel[k],
             (long)getpid());
    if (mkdir(dir, 0700) != 0)
      continue;
    int ok = k == 0 ? cg_write(dir, "memory.limit_in_bytes", lim) == 0
                    : cg_write(dir, "memory.max", lim) == 0 &&
                          cg_write(dir, "memory.swap.max", "0") == 0;
    if (ok && k == 0) /* no swap to go to, where it is accounted */
      cg_write(dir, "memory.memsw.limit_in_bytes", lim);
    if (ok) {
      snprintf(procs, pn, "%s", k == 0 ? "tasks" : "cgroup.procs");
      return 0;
    }
    rmdir(dir);
  }
  return -1;
}

/* The OOM killer ends a recording process (a memory cgroup of 96 MB, a
 * program that allocates and touches 1 MB at a time inside a zone): its
 * rings outlive it, and every zone it closed is in the trace. */
PP_TEST(durable_oom_killed_loses_nothing) {
  char cg[4096], procs[32], path[4096], msg[8192];
  if (oom_cgroup(cg, sizeof cg, procs, sizeof procs, 96L << 20) != 0) {
    printf("# skipped: this machine gives no memory cgroup to this user\n");
    return;
  }
  dpath(path, sizeof path, "oom.pptrace");
  shared *sh = shared_map();
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    char me[32];
    snprintf(me, sizeof me, "%ld", (long)getpid());
    if (cg_write(cg, procs, me) != 0)
      _exit(3);
    pp_config cfg;
    pp_config_init(&cfg);
    cfg.out_path = path;
    cfg.mode = PP_MODE_TRACE;
    if (pp_init(&cfg) != PP_OK)
      _exit(4);
    atomic_store(&sh->ready, 1);
    for (;;) {
      {
        PP_ZONE("grow");
        char *p = malloc(1 << 20);
        if (p)
          memset(p, 1, 1 << 20); /* kept: the process grows till killed */
        nap_us(500);
      }
      atomic_fetch_add(&sh->done, 1);
    }
  }
  int st = 0;
  CHECK_EQ(waitpid(pid, &st, 0), pid);
  rmdir(cg);
  uint64_t done = atomic_load(&sh->done);
  munmap(sh, 4096);
  if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
    PP_FAIL("the child was not killed by the OOM killer (status 0x%x)", st);
  CHECK_GT(done, 10);
  pp_salvage_result r;
  int rc = pp_salvage(path, "signal SIGKILL", &r, msg, sizeof msg);
  if (rc != PP_SALVAGE_DONE)
    PP_FAIL("salvage: %d %s", rc, msg);
  pp_trace t;
  pp_analysis a;
  load(path, &t, &a);
  CHECK_EQ(t.diag.clean_end, 1);
  uint64_t got = closed_zones(&a, "grow");
  if (got < done || got > done + 1)
    PP_FAIL("%llu zones in the trace, the child closed %llu before the OOM "
            "killer ended it",
            (unsigned long long)got, (unsigned long long)done);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* The trace's folder is deleted while the program records: it runs on,
 * and says once on stderr that what it records is lost. */
PP_TEST(durable_folder_removed_is_said) {
  char dir[4096], path[4200], err[4200];
  dpath(dir, sizeof dir, "doomed");
  CHECK_EQ(mkdir(dir, 0700), 0);
  snprintf(path, sizeof path, "%s/app.pptrace", dir);
  dpath(err, sizeof err, "doomed.stderr");
  shared *sh = shared_map();
  pid_t pid = child_logged(path, sh, 200, PP_MODE_TRACE, err, NULL);
  CHECK(pid > 0);
  wait_ready(pid, sh);
  CHECK_EQ(unlink(path), 0);
  CHECK_EQ(rmdir(dir), 0);
  /* the next pass that writes says so */
  char said[4096];
  wait_said(err, "was removed", said, sizeof said);
  CHECK_CONTAINS(said, "app.pptrace was removed while the program recorded "
                       "into it: what it records from now on is lost (the "
                       "program runs on)");
  CHECK(runs_on(pid, sh, 50));
  kill9(pid);
  munmap(sh, 4096);
}

/* The disk fills mid-run (a 4 MB tmpfs holding the trace and the rings):
 * the program runs on, says so once, and the trace says how many events
 * were lost. */
PP_TEST(durable_disk_fills) {
  char dir[4096], path[4200], err[4200];
  dpath(dir, sizeof dir, "small");
  CHECK_EQ(mkdir(dir, 0700), 0);
  if (mount("tmpfs", dir, "tmpfs", 0, "size=4m") != 0) {
    printf("# skipped: cannot mount a small tmpfs here: %s\n",
           strerror(errno));
    return;
  }
  snprintf(path, sizeof path, "%s/app.pptrace", dir);
  dpath(err, sizeof err, "small.stderr");
  shared *sh = shared_map();
  /* busy: megabytes of trace a second */
  pid_t pid = child_logged(path, sh, 0, PP_MODE_TRACE, err, dir);
  CHECK(pid > 0);
  wait_ready(pid, sh);
  char said[4096];
  wait_said(err, "failed", said, sizeof said);
  int ran_on = runs_on(pid, sh, 1000);
  CHECK_EQ(kill(pid, SIGTERM), 0); /* its handler finishes the trace */
  int st = 0;
  CHECK_EQ(waitpid(pid, &st, 0), pid);
  munmap(sh, 4096);
  pp_trace t;
  char rerr[512] = "";
  int read_rc = pp_trace_read_file(path, &t, rerr, sizeof rerr);
  const char *lost = read_rc == 0 ? pp_trace_meta(&t, "events_lost") : NULL;
  uint64_t nlost = lost ? strtoull(lost, NULL, 10) : 0;
  const char *werr = read_rc == 0 ? pp_trace_meta(&t, "write_error") : NULL;
  int has_werr = werr && strstr(werr, "No space left on device") != NULL;
  if (read_rc == 0)
    pp_trace_free(&t);
  CHECK_EQ(umount(dir), 0);
  CHECK_CONTAINS(said, "failed: No space left on device; the program runs "
                       "on, events from now on are counted as lost");
  CHECK(ran_on);
  if (read_rc != 0)
    PP_FAIL("cannot read %s: %s", path, rerr);
  CHECK(has_werr);
  CHECK_GT(nlost, 0);
}

/* Flows across processes: a parent begins an item and a forked worker
 * ends it (one item of the run, crossed); two workers that number their
 * own items from 1 and end each themselves stay apart. */
PP_TEST(durable_flows_cross_processes) {
  if (pp_test_skip_forked_sessions()) /* a recording process forks them */
    return;
  char dir[4096], path[4200];
  dpath(dir, sizeof dir, "flows");
  CHECK_EQ(mkdir(dir, 0700), 0);
  snprintf(path, sizeof path, "%s/app.pptrace", dir);
  fflush(NULL);
  pid_t prog = fork();
  CHECK(prog >= 0);
  if (prog == 0) {
    pp_config cfg;
    pp_config_init(&cfg);
    cfg.out_path = path;
    if (pp_init(&cfg) != PP_OK)
      _exit(3);
    pid_t kids[7];
    for (int k = 0; k < 5; k++) { /* item k + 100: begun here */
      {
        PP_ZONE("produce");
        PP_FLOW_BEGIN("item", (uint64_t)k + 100);
        nap_us(200);
      }
      fflush(NULL);
      if ((kids[k] = fork()) == 0) {
        {
          PP_ZONE("consume");
          nap_us(300);
          PP_FLOW_END("item", (uint64_t)k + 100);
        }
        exit(0);
      }
    }
    for (int k = 5; k < 7; k++) { /* its own items 1..3, begun and ended */
      fflush(NULL);
      if ((kids[k] = fork()) == 0) {
        for (uint64_t id = 1; id <= 3; id++) {
          {
            PP_ZONE("produce");
            PP_FLOW_BEGIN("item", id);
            nap_us(100);
          }
          {
            PP_ZONE("consume");
            nap_us(100);
            PP_FLOW_END("item", id);
          }
        }
        exit(0);
      }
    }
    for (int k = 0; k < 7; k++)
      waitpid(kids[k], NULL, 0);
    exit(0);
  }
  int st = 0;
  CHECK_EQ(waitpid(prog, &st, 0), prog);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  pp_cli_result r = pp_test_cli("report '%s'", dir);
  CHECK_EQ(r.rc, 0);
  const char *fl = strstr(r.out, "\nflows (");
  if (!fl)
    PP_FAIL("no flows table:\n%s", r.out);
  const char *row = strstr(fl, "\nitem ");
  CHECK(row != NULL);
  char line[512];
  snprintf(line, sizeof line, "%.*s", (int)(strchr(row + 1, '\n') - row - 1),
           row + 1);
  /* 11 items: 5 crossed, 6 of the two workers' own; none incomplete */
  unsigned items = 0, incomplete = 0, crossed = 0;
  CHECK_EQ(sscanf(line, "item %u %u %u", &items, &incomplete, &crossed), 3);
  if (items != 11 || incomplete != 0 || crossed != 5)
    PP_FAIL("flows row: %s", line);
  pp_cli_result_free(&r);
}
