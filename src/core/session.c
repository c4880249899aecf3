/* SPDX-License-Identifier: MIT */
/*
 * The profiling session's lifecycle: configuration (pp_config and the
 * environment), pp_init and pp_shutdown, enabling and disabling, signal,
 * fork and exit handling, the claim on PIPEPROF_OUT, the live-statistics
 * engine's lifetime and the start of CUDA tracing. The writer thread and
 * what it writes are core/writer.c and the sinks (sink/sink.h).
 *
 * SIGINT and SIGTERM (when the program has no handler of its own) make the
 * writer drain everything and finish the file before the signal's default
 * action runs.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../collect/cupti.h"
#include "http_host.h"
#include "../internal.h"
#include "../sink/live.h"
#include "../sink/out.h"
#include "clock.h"
#include "options.h"
#include "env.h"
#include "gpu.h"
#include "http.h"
#include "meta.h"
#include "../ring/arena.h"
#include "recorder.h"
#include "sampler.h"
#include "wake.h"
#include "writer.h"

typedef struct session {
  pp_config cfg;
  char out_path[PATH_MAX];
  char process_name[64];
  pid_t pid;
  pp__sampler *sampler; /* sample_hz > 0 */
  pp__live *live;       /* live statistics; NULL when off. Fed by the
                           writer; its lifetime is guarded by live_lock */
} session;

static session S;

/* PIPEPROF_OUT claimed by this process (pp_init_from_env): a descriptor
 * holding flock(LOCK_EX) on it for the session's life; -1 when none. */
static int claim_fd = -1;
static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int running;
static _Atomic int enabled_flag = 1;
/* The calling thread's (as errno is): two threads calling pp_init at
 * once each read their own, and a failing call never writes what
 * another thread is reading. */
static __thread char last_error[256];
static int atexit_registered, atfork_registered;
static int signals_installed;
/* Guards S.live's lifetime against pp_live_zone() from other threads. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
/* The live engine of this process's last session, kept by pp_shutdown
 * after the writer's final pass (so its figures are those as the session
 * ended) and read by the same queries until the next pp_init; under
 * live_lock. */
static pp__live *ended_live;
static pid_t ended_pid;

/* How long a query for the session window waits for the writer's pass
 * (pp__writer_sync): a pass takes microseconds to milliseconds; a stalled
 * writer must not stall the caller longer than this. */
#define LIVE_SYNC_MS 1000u

static void set_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static void set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
}

const char *pp_last_error(void) { return last_error; }

void pp_config_init(pp_config *cfg) {
  if (!cfg)
    return;
  memset(cfg, 0, sizeof *cfg);
  cfg->struct_size = sizeof *cfg;
  cfg->mode = PP_MODE_TRACE;
  cfg->buffer_kib = 0; /* mode default */
  cfg->flush_ms = 10;
  cfg->install_signals = 1;
  cfg->start_enabled = 1;
}

int pp_is_running(void) { return atomic_load(&running); }

static void update_active(void) {
  pp__recorder_publish(atomic_load(&running) && atomic_load(&enabled_flag));
}

void pp_set_enabled(int on) {
  atomic_store(&enabled_flag, on ? 1 : 0);
  update_active();
}

int pp_is_enabled(void) {
  return (__atomic_load_n(&pp__active, __ATOMIC_RELAXED) & PP__ON) ? 1 : 0;
}

const char *pp_output_path(void) {
  return atomic_load(&running) ? S.out_path : "";
}

int pp_metadata(const char *key, const char *value) {
  if (!key || (strncmp(key, "user.", 5) != 0 && strncmp(key, "binding.", 8)))
    return PP_EINVAL;
  size_t n = strlen(key);
  if (n > 128 || key[n - 1] == '.')
    return PP_EINVAL;
  for (size_t i = 0; i < n; i++)
    if (key[i] <= ' ' || key[i] > '~')
      return PP_EINVAL;
  if (value && strlen(value) > 4096)
    return PP_EINVAL;
  if (!atomic_load(&running) || S.pid != getpid())
    return PP_ENOTRUNNING;
  if (strcmp(key, "binding.process_end") == 0) {
    /* how the session is about to end, said by a binding (META
     * process.end: the binding's multiprocessing hook) */
    static char how[64];
    snprintf(how, sizeof how, "%s", value ? value : "");
    pp__writer_set_end(how);
    /* the process ends next (os._exit, which no library sees): the
     * session's end removes its durable rings, as an exit's does */
    pp__writer_set_exiting(1);
    return PP_OK;
  }
  return pp__session_meta(key, value ? value : "") == 0 ? PP_OK : PP_ENOMEM;
}

/* The live statistics of this process's running session, else of its
 * last one as it ended, in *l with live_lock held (release it with
 * pthread_mutex_unlock): PP_OK, or PP_ENOTRUNNING with the lock released
 * when this process has had no session. */
static int live_acquire(pp__live **l) {
  pthread_mutex_lock(&live_lock);
  if (atomic_load(&running) && S.pid == getpid()) {
    *l = S.live;
    return PP_OK;
  }
  if (ended_live && ended_pid == getpid()) {
    *l = ended_live;
    return PP_OK;
  }
  pthread_mutex_unlock(&live_lock);
  return PP_ENOTRUNNING;
}

/* A query of the session window is exact as of the call: the writer of a
 * running session drains every ring (and stats mode's tallies) first. */
static void sync_if_running(void) {
  if (atomic_load(&running) && S.pid == getpid())
    pp__writer_sync(LIVE_SYNC_MS);
}

static int live_query(int kind, const char *name, int window_s,
                      pp_live_stats *out) {
  if (window_s == 0)
    sync_if_running();
  pp__live *l;
  int rc = live_acquire(&l);
  if (rc != PP_OK)
    return rc;
  rc = pp__live_query(l, kind, name, window_s, out);
  pthread_mutex_unlock(&live_lock);
  return rc;
}

int pp_live_zone(const char *name, int window_s, pp_live_stats *out) {
  if (!name || !out)
    return PP_EINVAL;
  return live_query(0, name, window_s, out);
}

int pp_live_zone_slo(const char *name, uint64_t limit_ns, uint64_t *count,
                     uint64_t *met, uint64_t *uncertain) {
  if (!name || !count || !met || !uncertain)
    return PP_EINVAL;
  sync_if_running(); /* as window 0: exact as of the call */
  pp__live *l;
  int rc = live_acquire(&l);
  if (rc != PP_OK)
    return rc;
  rc = pp__live_split(l, PP__LIVE_ZONE, name, limit_ns, count, met, uncertain);
  pthread_mutex_unlock(&live_lock);
  return rc;
}

/* Cumulative counts of a series of any kind (live.h's PP__LIVE_*). */
static int live_cumulative(int kind, const char *name, const uint64_t *le_ns,
                           size_t n, uint64_t *counts, uint64_t *total,
                           double *sum_ns) {
  if ((n && (!le_ns || !counts)) || !total || !sum_ns)
    return PP_EINVAL;
  for (size_t i = 1; i < n; i++)
    if (le_ns[i] < le_ns[i - 1])
      return PP_EINVAL;
  pp_lhist h;
  pp_lhist_init(&h);
  pp__live *l;
  int rc = live_acquire(&l);
  if (rc != PP_OK)
    return rc;
  rc = pp__live_hist(l, kind, name, &h);
  pthread_mutex_unlock(&live_lock);
  if (rc == PP_OK) {
    /* buckets in ascending order: each adds to every bound at or above its
     * highest value */
    if (n)
      memset(counts, 0, n * sizeof *counts);
    size_t nb = h.c ? (size_t)(h.ghi - h.glo + 1u) * PP_LHIST_SUB : 0, k = 0;
    uint64_t below = 0;
    for (size_t b = 0; b < nb; b++) {
      uint64_t hi = pp_lhist_highest((unsigned)(h.glo * PP_LHIST_SUB + b));
      while (k < n && le_ns[k] < hi)
        counts[k++] = below;
      below += h.c[b];
    }
    while (k < n)
      counts[k++] = below;
    *total = h.count;
    *sum_ns = h.sum;
  }
  pp_lhist_free(&h);
  return rc;
}

int pp_live_zone_cumulative(const char *name, const uint64_t *le_ns, size_t n,
                            uint64_t *counts, uint64_t *total, double *sum_ns) {
  if (!name)
    return PP_EINVAL;
  return live_cumulative(PP__LIVE_ZONE, name, le_ns, n, counts, total, sum_ns);
}

int pp_live_zone_name(size_t index, char *buf, size_t size) {
  if (!buf || size == 0)
    return PP_EINVAL;
  /* a walk starts at 0: every name recorded up to the call is listed */
  if (index == 0)
    sync_if_running();
  pp__live *l;
  int rc = live_acquire(&l);
  if (rc != PP_OK)
    return rc;
  rc = pp__live_zone_name(l, index, buf, size);
  pthread_mutex_unlock(&live_lock);
  return rc;
}

int pp_live_request(int metric, int window_s, pp_live_stats *out) {
  if (!out || metric < PP_LIVE_E2E || metric > PP_LIVE_ITL)
    return PP_EINVAL;
  return live_query(PP__LIVE_E2E + metric, NULL, window_s, out);
}

/* ---- the HTTP companion's view (core/http_host.h) ----------------------------- */

static int64_t origin_ns; /* the live engine's origin: the session start */
static int64_t interval_ns;

static int http_info(pp_http_info *o) {
  pp__live *l;
  int rc = live_acquire(&l);
  if (rc != PP_OK)
    return rc;
  static const char *const modes[] = {"stats", "trace", "flight"};
  o->mode = (unsigned)S.cfg.mode < 3 ? modes[S.cfg.mode] : "";
  o->process_name = S.process_name;
  o->pid = (long)S.pid;
  o->t0_ns = origin_ns;
  o->now_ns = pp__mono_ns();
  o->interval_ns = interval_ns;
  pthread_mutex_unlock(&live_lock);
  return l ? PP_OK : PP_ENOTSUP;
}

static int http_series(pp_http_series_fn fn, void *ctx) {
  pp__live *l;
  int rc = live_acquire(&l);
  if (rc != PP_OK)
    return rc;
  pp__live_visit(l, fn, ctx);
  pthread_mutex_unlock(&live_lock);
  return l ? PP_OK : PP_ENOTSUP;
}

static int http_board(pp_http_board_fn fn, void *ctx, uint64_t *left_out) {
  pp__live *l;
  int rc = live_acquire(&l);
  if (rc != PP_OK)
    return rc;
  *left_out = pp__live_board(l, fn, ctx);
  pthread_mutex_unlock(&live_lock);
  return l ? PP_OK : PP_ENOTSUP;
}

static int http_history(pp_http_series_history_fn sfn,
                        pp_http_board_history_fn bfn, void *ctx) {
  pp__live *l;
  int rc = live_acquire(&l);
  if (rc != PP_OK)
    return rc;
  pp__live_history(l, sfn, ctx);
  pp__live_board_history(l, bfn, ctx);
  pthread_mutex_unlock(&live_lock);
  return l ? PP_OK : PP_ENOTSUP;
}

static int http_alerts(pp_http_alert_fn fn, void *ctx) {
  pp__note notes[PP__LIVE_KEEP];
  pp__live *l;
  int rc = live_acquire(&l);
  if (rc != PP_OK)
    return rc;
  size_t n = pp__live_alerts(l, notes, PP__LIVE_KEEP);
  pthread_mutex_unlock(&live_lock);
  for (size_t i = 0; i < n; i++) {
    const pp__note *nt = &notes[i];
    pp_alert a = pp__note_alert(nt);
    fn(ctx, &a);
  }
  return l ? PP_OK : PP_ENOTSUP;
}

int pp_flight_dump(const char *path) {
  if (!atomic_load(&running))
    return PP_ENOTRUNNING;
  if (S.cfg.mode != PP_MODE_FLIGHT)
    return PP_EMODE;
  char err[sizeof last_error];
  int rc = pp__writer_dump(path, err, sizeof err);
  if (rc != PP_OK)
    set_error("%s", err);
  return rc;
}

/* ---- signals, fork, exit ------------------------------------------------- */

/* The session's last pass from where no atexit handler will run (a
 * signal's handler, _exit): recording stops and the writer drains every
 * ring and finishes the file, waited for up to max_ms. Only in the
 * process that owns the session: a vfork child shares its memory and has
 * a pid of its own. */
static void final_pass(int max_ms, const char *how) {
  if (!atomic_load(&running) || S.pid != (pid_t)syscall(SYS_getpid))
    return;
  pp__writer_set_end(how);
  pp__recorder_publish(0);
  pp__writer_stop_async();
  struct timespec ts = {0, 2000000};
  for (int i = 0; i < max_ms / 2 && !pp__writer_finished(); i++)
    nanosleep(&ts, NULL);
}

/* The fatal signals the session finishes its file on (when their
 * disposition is SIG_DFL at pp_init): SIGINT and SIGTERM, then the
 * crashes (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT). */
static const int fatal_sigs[] = {SIGINT,  SIGTERM, SIGSEGV, SIGBUS,
                                 SIGFPE,  SIGILL,  SIGABRT};
static const char *const fatal_names[] = {
    "signal SIGINT", "signal SIGTERM", "signal SIGSEGV", "signal SIGBUS",
    "signal SIGFPE", "signal SIGILL",  "signal SIGABRT"};
#define NFATAL (sizeof fatal_sigs / sizeof *fatal_sigs)
static struct sigaction old_fatal[NFATAL];

static void on_signal(int sig) {
  int saved = errno;
  size_t k = 0;
  while (k < NFATAL && fatal_sigs[k] != sig)
    k++;
  final_pass(3000, k < NFATAL ? fatal_names[k] : "signal");
  pp__arena_process_end();
  if (k < NFATAL)
    sigaction(sig, &old_fatal[k], NULL);
  errno = saved;
  /* a crash's fault comes again when the handler returns, now with the
   * old disposition; a signal sent is sent again */
  raise(sig);
}

/* The _exit after ours in the lookup order (libc's, or a sanitizer's
 * interceptor that must see the process end), found at load time: never
 * looked up on the way out, where a vfork child shares our memory. */
static void (*next_exit)(int);

__attribute__((constructor)) static void find_next_exit(void) {
  void *f = dlsym(RTLD_NEXT, "_exit");
  void (*g)(int) = NULL;
  memcpy(&g, &f, sizeof g);
  if (g && g != _exit)
    next_exit = g;
}

/* _exit and _Exit end the process without atexit handlers: a process
 * that records finishes its file first (multiprocessing's children, a
 * C program's forked children). Then the process ends as asked. */
__attribute__((visibility("default"))) void _exit(int status) {
  final_pass(1000, "_exit");
  pp__arena_process_end();
  if (next_exit)
    next_exit(status);
  for (;;)
    syscall(SYS_exit_group, status);
}

__attribute__((visibility("default"))) void _Exit(int status) {
  _exit(status);
}

static void install_signals(void) {
  struct sigaction cur;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  signals_installed = 0;
  for (size_t i = 0; i < NFATAL; i++)
    if (sigaction(fatal_sigs[i], NULL, &cur) == 0 &&
        cur.sa_handler == SIG_DFL &&
        sigaction(fatal_sigs[i], &sa, &old_fatal[i]) == 0)
      signals_installed |= 1 << i;
}

static void restore_signals(void) {
  struct sigaction cur;
  for (size_t i = 0; i < NFATAL; i++)
    if ((signals_installed & (1 << i)) &&
        sigaction(fatal_sigs[i], NULL, &cur) == 0 &&
        cur.sa_handler == on_signal)
      sigaction(fatal_sigs[i], &old_fatal[i], NULL);
  signals_installed = 0;
}

static void at_exit(void) {
  /* read by the writer's final pass, after the join's synchronisation in
   * pp_shutdown's wake-up */
  pp__writer_set_exiting(1);
  if (atomic_load(&running) && S.pid == getpid())
    pp__writer_set_end("exit");
  pp_shutdown();
  pp__writer_set_exiting(0);
}

/* Around fork: let the writer finish its pass first, so the child does not
 * inherit it halfway through (holding the allocator's or our locks). */
static void fork_prepare(void) {
  if (atomic_load(&running) && S.pid == getpid())
    pp__writer_fork_prepare();
}

static void fork_parent(void) {
  if (atomic_load(&running) && S.pid == getpid())
    pp__writer_fork_parent();
}

/* A forked child of a recording process records on in a session of its
 * own (fork_child): its configuration, made at the fork, and started by
 * the child's first event (restart_in_child). */
static struct {
  pp_config cfg;
  char out_path[PATH_MAX + 32];
  pid_t parent;
  int64_t fork_ns; /* the fork's time on the trace clock (monotonic) */
  int active;      /* a child session runs: no HTTP endpoint, no CUDA */
} child;

static void restart_in_child(void) {
  child.active = 1;
  if (pp_init(&child.cfg) != PP_OK) {
    fprintf(stderr, "pipeprof: the forked process %ld records nothing: %s\n",
            (long)getpid(), pp_last_error());
    return;
  }
  char v[32];
  snprintf(v, sizeof v, "%ld", (long)child.parent);
  pp__session_meta("process.parent_pid", v);
  snprintf(v, sizeof v, "%lld", (long long)child.fork_ns);
  pp__session_meta("process.fork_ns", v);
}

static void fork_child(void) {
  /* The child does not own the parent's trace: the parent's file is never
   * touched. A child of a recording session records on in a file of its
   * own, OUT.<pid> beside the parent's (the name a program exec'd by the
   * profiled one takes), started by its first event: a child that records
   * nothing (fork and exec) makes no file. */
  int was = atomic_load(&running) && atomic_load(&enabled_flag);
  if (was) {
    const char *base = getenv("PIPEPROF_OUT");
    child.cfg = S.cfg;
    int n = snprintf(child.out_path, sizeof child.out_path, "%s.%ld",
                     base && *base ? base : S.out_path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof child.out_path)
      was = 0; /* no room for the name: the child records nothing */
    child.cfg.out_path = child.out_path;
    child.cfg.process_name = NULL; /* the child's own */
    child.cfg.http_addr = NULL;
    child.cfg.cuda = 0; /* CUPTI does not trace the child */
    child.cfg.sample_hz = 0; /* the parent's sampler (or pipeprof run's)
                                sees the child's figures */
    child.parent = S.pid;
    child.fork_ns = pp__mono_ns();
  }
  pp__recorder_publish(0);
  atomic_store(&running, 0);
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  memcpy(&ctl_lock, &fresh, sizeof fresh);
  memcpy(&live_lock, &fresh, sizeof fresh);
  S.live = NULL; /* the parent's; leaked in the child on purpose */
  ended_live = NULL; /* likewise */
  pp__writer_fork_child();
  pp__meta_after_fork();
  pp__wake_close();
  S.sampler = NULL; /* its thread does not exist in the child */
  pp__cupti_after_fork_child(); /* CUPTI does not trace the child */
  pp__recorder_after_fork_child();
  if (claim_fd >= 0) { /* the parent's lock stays: it has its own copy */
    close(claim_fd);
    claim_fd = -1;
  }
  if (was)
    pp__recorder_restart_on_first_event(restart_in_child);
}

/* ---- init / shutdown ----------------------------------------------------- */

/* META "live": what the live statistics watch, for the report. */
static void live_meta(const pp__live_cfg *c) {
  char b[384], alerts[160];
  if (!S.live) {
    pp__session_meta("live", c->on ? "off: out of memory" : "off");
    return;
  }
  size_t n = 0;
  alerts[0] = 0;
  if (c->mem_pct > 0)
    n += (size_t)snprintf(alerts + n, sizeof alerts - n, ", mem %g%%",
                          c->mem_pct);
  if (c->swap && n < sizeof alerts)
    n += (size_t)snprintf(alerts + n, sizeof alerts - n, ", swap");
  if (c->psi_pct > 0 && n < sizeof alerts)
    n += (size_t)snprintf(alerts + n, sizeof alerts - n, ", psi %g%%",
                          c->psi_pct);
  if (c->throttle && n < sizeof alerts)
    n += (size_t)snprintf(alerts + n, sizeof alerts - n, ", throttle");
  if (c->gpu_mem_pct > 0 && n < sizeof alerts)
    snprintf(alerts + n, sizeof alerts - n, ", gpu_mem %g%%",
             c->gpu_mem_pct);
  snprintf(b, sizeof b,
           "interval %g ms, k %g, history %u, min %u, floor %g%%; alerts: "
           "%s%s",
           (double)c->interval_ns * 1e-6, c->k, c->history, c->min_values,
           c->floor_rel * 100, alerts[0] ? alerts + 2 : "none",
           S.cfg.sample_hz ? "" : " (no sampler)");
  pp__session_meta("live", b);
}

static void default_process_name(char *buf, size_t len) {
  /* The executable's file name: /proc/self/comm is cut at 15 bytes. */
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  buf[0] = 0;
  if (n > 0) {
    exe[n] = 0;
    const char *base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    size_t k = strlen(base);
    if (k >= len)
      k = len - 1;
    memcpy(buf, base, k);
    buf[k] = 0;
  }
  if (!buf[0])
    snprintf(buf, len, "pid %ld", (long)getpid());
}

int pp_init(const pp_config *user) {
  pp_config cfg;
  pp_config_init(&cfg);
  if (user) {
    /* the fields of 0.1.0's first release end at http_addr */
    if (user->struct_size < offsetof(pp_config, live) ||
        user->struct_size > sizeof cfg) {
      set_error("pp_config.struct_size %u is not a known size "
                "(call pp_config_init)",
                user->struct_size);
      return PP_EINVAL;
    }
    memcpy(&cfg, user, user->struct_size);
  }
  if (cfg.mode != PP_MODE_STATS && cfg.mode != PP_MODE_TRACE &&
      cfg.mode != PP_MODE_FLIGHT) {
    set_error("unknown mode %d", (int)cfg.mode);
    return PP_EINVAL;
  }
  int ring_default = cfg.buffer_kib == 0; /* then within a budget */
  if (cfg.buffer_kib == 0)
    cfg.buffer_kib = cfg.mode == PP_MODE_FLIGHT ? 4096 : 1024;
  /* the numbers against the options' table (options.h), as the
   * environment's */
  const struct {
    const char *env;
    uint32_t v;
    int zero_ok; /* 0: the default */
  } nums[] = {{"PIPEPROF_BUFFER_KIB", cfg.buffer_kib, 0},
              {"PIPEPROF_SAMPLE_HZ", cfg.sample_hz, 0},
              {"PIPEPROF_FLUSH_MS", cfg.flush_ms, 0},
              {"PIPEPROF_GPU_SLOTS", cfg.gpu_slots, 1}};
  for (size_t i = 0; i < PP__ARRAY_LEN(nums); i++) {
    const pp_option *o = pp__option(nums[i].env);
    char want[160];
    if ((nums[i].v || !nums[i].zero_ok) &&
        pp__option_check_num(o, nums[i].v, want, sizeof want) != 0) {
      set_error("%s %u: %s", o->field, nums[i].v, want);
      return PP_EINVAL;
    }
  }
  /* the fields that take the environment's value when unset (options.h:
   * read by every session) */
  const char *live_spec = cfg.live ? cfg.live : getenv("PIPEPROF_LIVE");
  const char *alerts_spec =
      cfg.alerts ? cfg.alerts : getenv("PIPEPROF_ALERTS");
  uint64_t slots = cfg.gpu_slots;
  const char *slots_env = getenv("PIPEPROF_GPU_SLOTS");
  if (!slots && slots_env) {
    char want[160];
    if (pp__option_check(pp__option("PIPEPROF_GPU_SLOTS"), slots_env, &slots,
                         want, sizeof want) != 0) {
      set_error("PIPEPROF_GPU_SLOTS: %s", want);
      return PP_EENV;
    }
  }
  pp__live_cfg live_cfg;
  pp__live_cfg_default(&live_cfg);
  char lerr[sizeof last_error];
  int bad_live = pp__live_parse(live_spec, &live_cfg, lerr, sizeof lerr) != 0;
  if (bad_live ||
      pp__alerts_parse(alerts_spec, &live_cfg, lerr, sizeof lerr) != 0) {
    /* the field's value is the program's option: say so by its name */
    int field = bad_live ? cfg.live != NULL : cfg.alerts != NULL;
    const char *var =
        bad_live ? "invalid PIPEPROF_LIVE" : "invalid PIPEPROF_ALERTS";
    if (field && strncmp(lerr, var, strlen(var)) == 0)
      set_error("invalid pp_config.%s%s", bad_live ? "live" : "alerts",
                lerr + strlen(var));
    else
      set_error("%s", lerr);
    return field ? PP_EINVAL : PP_EENV;
  }
  /* An interval closes a grace period after its end, when the events of
   * its last moments have been drained. */
  live_cfg.grace_ns =
      2 * (int64_t)pp__writer_idle_ms(cfg.flush_ms) * 1000000 + 10000000;
  pthread_mutex_lock(&ctl_lock);
  /* a forked child that starts a session itself: not the parent's too */
  pp__recorder_cancel_restart();
  if (atomic_load(&running)) {
    pthread_mutex_unlock(&ctl_lock);
    set_error("a session is already running");
    return PP_EBUSY;
  }
  pp__clock_init();
  /* S is zero before the first session: clearing it again would fault in
   * its pages, which it may never use (10 us a page on some VMs). */
  static int s_used;
  if (s_used)
    memset(&S, 0, sizeof S);
  s_used = 1;
  S.cfg = cfg;
  S.pid = getpid();
  if (cfg.out_path && *cfg.out_path)
    snprintf(S.out_path, sizeof S.out_path, "%s", cfg.out_path);
  else
    snprintf(S.out_path, sizeof S.out_path, "pipeprof-%ld.pptrace",
             (long)S.pid);
  if (cfg.process_name && *cfg.process_name)
    pp__env_cut_utf8(S.process_name, sizeof S.process_name,
                     cfg.process_name);
  else
    default_process_name(S.process_name, sizeof S.process_name);
  S.cfg.out_path = S.out_path;
  S.cfg.process_name = S.process_name;
  if (cfg.mode == PP_MODE_FLIGHT) {
    /* Check now that the dump target can be written; an earlier dump
     * there stays whole until this session writes one (no O_TRUNC). */
    char why[PATH_MAX + 160];
    int fd = pp__out_create(S.out_path, 0, why, sizeof why);
    if (fd < 0) {
      set_error("%s", why);
      pthread_mutex_unlock(&ctl_lock);
      return PP_EIO;
    }
    close(fd);
  }
  char open_why[PATH_MAX + 160] = "";
  pp__writer_cfg wc;
  memset(&wc, 0, sizeof wc);
  wc.why = open_why;
  wc.why_n = sizeof open_why;
  wc.mode = cfg.mode;
  wc.flush_ms = cfg.flush_ms;
  wc.out_path = S.out_path;
  wc.process_name = S.process_name;
  wc.pid = S.pid;
  pp__clock_sync before;
  pp__clock_sync_now(&before);
  wc.event_cost_ns =
      pp__measure_event_cost(cfg.mode == PP_MODE_STATS, &wc.drop_cost_ns);
  pp__clock_sync_now(&wc.sync0);
  wc.ticks_per_ns = pp__clock_rate(&before, &wc.sync0);
  pthread_mutex_lock(&live_lock);
  pp__live_free(ended_live); /* the last session's: replaced now */
  ended_live = NULL;
  S.live = pp__live_new(&live_cfg, wc.sync0.mono_ns); /* NULL: off or OOM */
  /* the HTTP endpoint's charts: the engine keeps recent intervals */
  const char *http_env = getenv("PIPEPROF_HTTP");
  if ((cfg.http_addr && *cfg.http_addr) || (http_env && *http_env))
    pp__live_history_on(S.live);
  pthread_mutex_unlock(&live_lock);
  wc.live = S.live;
  int rc = pp__writer_open(&wc);
  const char *why = rc == PP_ENOMEM ? "out of memory" : NULL;
  if (rc == PP_OK) {
    pp__recorder_configure((uint64_t)cfg.buffer_kib * 1024 / sizeof(pp__slot),
                           cfg.mode == PP_MODE_FLIGHT,
                           cfg.mode == PP_MODE_STATS);
    pp__recorder_ring_budget(ring_default ? PP__RING_BUDGET_BYTES : 0);
    pp__recorder_reset_positions();
    pp__gpu_session_start((uint32_t)slots);
    atomic_store(&running, 1);
    pp__meta_open(1);
    rc = pp__writer_start();
    if (rc != PP_OK) {
      atomic_store(&running, 0);
      pp__meta_open(0);
      why = "cannot start the writer thread";
    }
  }
  if (rc != PP_OK) {
    if (rc == PP_EIO) /* only the output's creation says PP_EIO */
      set_error("%s", open_why);
    else
      set_error("%s", why);
    pthread_mutex_lock(&live_lock);
    pp__live_free(S.live);
    S.live = NULL;
    pthread_mutex_unlock(&live_lock);
    pthread_mutex_unlock(&ctl_lock);
    return rc;
  }
  if (!atexit_registered) {
    atexit(at_exit);
    atexit_registered = 1;
  }
  if (!atfork_registered) {
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    atfork_registered = 1;
  }
  if (cfg.install_signals)
    install_signals();
  atomic_store(&enabled_flag, cfg.start_enabled ? 1 : 0);
  update_active();
  if (cfg.sample_hz) {
    const char *root = getenv("PIPEPROF_SYSROOT");
    pp__sampler_cfg sc = {getpid(), cfg.sample_hz, root, 1, 0, 0, 1, 0, 1};
    S.sampler = pp__sampler_open(&sc);
    if (S.sampler && pp__sampler_start(S.sampler) != 0) {
      pp__sampler_stop(S.sampler);
      S.sampler = NULL;
    }
  }
  live_meta(&live_cfg);
  /* PIPEPROF_HTTP: one line when it cannot serve */
  static pp_http_host http_host = {sizeof(pp_http_host),
                                   NULL,
                                   pp_live_zone_name,
                                   pp_live_zone_cumulative,
                                   pp_live_zone,
                                   pp__dropped_total,
                                   http_info,
                                   http_series,
                                   http_board,
                                   http_alerts,
                                   live_cumulative,
                                   NULL,
                                   http_history,
                                   pp__http_subject_get,
                                   sizeof(pp__board_entry)};
  http_host.version = pp_version_string();
  origin_ns = wc.sync0.mono_ns;
  interval_ns = live_cfg.interval_ns;
  if (!child.active) /* a forked child's: the parent serves */
    pp__http_start(&http_host,
                   cfg.http_addr && *cfg.http_addr ? cfg.http_addr : NULL);
  last_error[0] = 0;
  pthread_mutex_unlock(&ctl_lock);
  if (cfg.cuda) /* unavailable: said in the trace's META */
    pp__session_cuda_start();
  return PP_OK;
}

/* Claim path, shared through PIPEPROF_OUT by processes that may run at the
 * same time (`sh -c "a & b"`), for this one: an exclusive flock, which
 * fails while another live process holds it. 1: claimed (claim_fd); 0:
 * not claimed but usable (locks do not work there, or pp_init will report
 * that the path cannot be created); -1: taken. */
static int claim_output(const char *path, int *created) {
  *created = 0;
  if (claim_fd >= 0)
    return 0; /* a session of ours holds one already */
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd >= 0)
    *created = 1;
  else if (errno == EEXIST) /* never through a symlink, never blocked by a
                               FIFO: pp_init refuses those, saying why */
    fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd >= 0 && !*created && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
    close(fd);
    fd = -1;
  }
  if (fd < 0)
    return 0;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int taken = errno == EWOULDBLOCK;
    close(fd);
    if (*created) /* locks do not work there: pp_init creates it */
      unlink(path);
    *created = 0;
    return taken ? -1 : 0;
  }
  claim_fd = fd;
  return 1;
}

static void release_claim(void) {
  if (claim_fd >= 0)
    close(claim_fd); /* drops the lock */
  claim_fd = -1;
}

int pp_shutdown(void) {
  pthread_mutex_lock(&ctl_lock);
  if (!atomic_load(&running) || S.pid != getpid()) {
    pthread_mutex_unlock(&ctl_lock);
    return PP_ENOTRUNNING;
  }
  pp__http_stop(); /* it reads the live statistics freed below */
  if (S.sampler) { /* its last sample must still be recorded */
    pp__sampler_stop(S.sampler);
    S.sampler = NULL;
  }
  if (pp__writer_cuda()) /* forced flush: the final pass writes it */
    pp__cupti_stop();
  pp__recorder_publish(0);
  pp__writer_stop();
  restore_signals();
  char why[PATH_MAX + 160] = "";
  int failed = pp__writer_free(why, sizeof why) != 0;
  pthread_mutex_lock(&live_lock);
  atomic_store(&running, 0);
  pp__meta_open(0);
  pp__live_free(ended_live); /* kept readable: the figures as it ended */
  ended_live = S.live;
  ended_pid = getpid();
  S.live = NULL;
  pthread_mutex_unlock(&live_lock);
  release_claim();
  pthread_mutex_unlock(&ctl_lock);
  if (failed) {
    if (why[0])
      set_error("%s", why);
    else
      set_error("writing %s failed", S.out_path);
    return PP_EIO;
  }
  return PP_OK;
}

/* ---- CUDA activity tracing ------------------------------------------------
 */

int pp__session_cuda_start(void) {
  pthread_mutex_lock(&ctl_lock);
  if (!atomic_load(&running) || S.pid != getpid()) {
    pthread_mutex_unlock(&ctl_lock);
    return -1;
  }
  if (pp__writer_cuda()) {
    pthread_mutex_unlock(&ctl_lock);
    return 0;
  }
  char why[400];
  int rc = -1;
  if (S.cfg.mode != PP_MODE_TRACE)
    snprintf(why, sizeof why,
             "CUDA tracing needs trace mode (PIPEPROF_MODE=trace)");
  else
    rc = pp__cupti_start(why, sizeof why);
  if (rc != 0) {
    pp__session_meta("unavailable.cuda", why);
  } else {
    pp__writer_cuda_on(1);
    pp__session_meta("cuda.tracing", "cupti");
    pp__session_meta("cuda.clock", pp__cupti_info("clock"));
    pp__session_meta("cuda.libcupti", pp__cupti_info("library"));
    pp__session_meta("cuda.cupti_version", pp__cupti_info("version"));
    const char *miss = pp__cupti_info("missing");
    if (*miss)
      pp__session_meta("unavailable.cuda.kinds", miss);
  }
  pp__wake_writer();
  pthread_mutex_unlock(&ctl_lock);
  return rc;
}

/* ---- environment ----------------------------------------------------------
 */

/* Every PIPEPROF_* value goes through env.c, one rule for all (see env.h
 * and docs/api.md): nothing trimmed, numbers are plain digits, keywords
 * ignore case, an invalid value prints one line and leaves profiling off. */

int pp_init_from_env(void) {
  const char *on = getenv("PIPEPROF");
  uint64_t enable = 0;
  if (!on)
    return PP_OK;
  if (atomic_load(&running))
    return PP_EBUSY;
  if (pp__option_env("PIPEPROF", &on, &enable) != 0)
    return PP_EENV;
  if (!enable)
    return PP_OK;
  pp_config cfg;
  pp_config_init(&cfg);
  /* Every variable of the options' table is checked by its rule, the
   * ones read later too (PIPEPROF_CLOCK, the library paths), so that an
   * invalid one leaves profiling off before any file is created. */
  size_t nopt;
  const pp_option *opt = pp__options(&nopt);
  const char *out = NULL;
  for (size_t i = 0; i < nopt; i++) {
    const char *v;
    uint64_t x = 0;
    if (pp__option_env(opt[i].env, &v, &x) != 0)
      return PP_EENV;
    if (!v || !opt[i].field)
      continue;
    const char *f = opt[i].field;
    if (strcmp(f, "mode") == 0) {
      static const pp_mode mv[] = {PP_MODE_STATS, PP_MODE_TRACE,
                                   PP_MODE_FLIGHT};
      cfg.mode = mv[x];
    } else if (strcmp(f, "buffer_kib") == 0) {
      cfg.buffer_kib = (uint32_t)x;
    } else if (strcmp(f, "flush_ms") == 0) {
      cfg.flush_ms = (uint32_t)x;
    } else if (strcmp(f, "install_signals") == 0) {
      cfg.install_signals = (int)x;
    } else if (strcmp(f, "sample_hz") == 0) {
      cfg.sample_hz = (uint32_t)x;
    } else if (strcmp(f, "process_name") == 0) {
      cfg.process_name = v; /* pp_init cuts it at a UTF-8 boundary */
    } else if (strcmp(f, "cuda") == 0) {
      cfg.cuda = (int)x;
    } else if (strcmp(f, "out_path") == 0) {
      out = v;
    }
    /* http_addr, live, alerts, gpu_slots: pp_init reads the variable
     * when the field is unset */
  }
  /* All of the configuration is checked before any file is created:
   * pp_init reads these two again. */
  {
    pp__live_cfg lc;
    char lerr[sizeof last_error];
    pp__live_cfg_default(&lc);
    if (pp__live_parse(getenv("PIPEPROF_LIVE"), &lc, lerr, sizeof lerr) !=
            0 ||
        pp__alerts_parse(getenv("PIPEPROF_ALERTS"), &lc, lerr,
                         sizeof lerr) != 0) {
      /* No control character can be in it: checked above. */
      fprintf(stderr, "pipeprof: %s; profiling is off\n", lerr);
      return PP_EENV;
    }
  }
  /* A program exec'd by the profiled one inherits PIPEPROF_OUT; give it a
   * file of its own instead of clobbering its parent's. */
  char path[PATH_MAX];
  const char *owner = getenv("PIPEPROF_OWNER_PID");
  char me[32];
  snprintf(me, sizeof me, "%ld", (long)getpid());
  int claimed = 0, created = 0;
  if (out && *out) {
    /* Descendants of the owner, and processes that find the file claimed
     * by another live one (a sibling), write OUT.<pid>. */
    if ((owner && *owner && strcmp(owner, me) != 0) ||
        (claimed = claim_output(out, &created)) < 0)
      snprintf(path, sizeof path, "%s.%s", out, me);
    else
      snprintf(path, sizeof path, "%s", out);
    cfg.out_path = path;
  }
  if (!owner || !*owner)
    setenv("PIPEPROF_OWNER_PID", me, 1);
  int rc = pp_init(&cfg);
  if (rc != PP_OK) {
    if (claimed > 0) {
      pthread_mutex_lock(&ctl_lock);
      if (created) /* no session: leave no empty file behind */
        unlink(out);
      release_claim();
      pthread_mutex_unlock(&ctl_lock);
    }
    fprintf(stderr, "pipeprof: %s; profiling is off\n", pp_last_error());
  }
  return rc;
}

/* ---- start from the environment when the library is loaded ------------- */

/* A program that runs sessions of its own (the pipeprof command) defines
 * this as nonzero so that PIPEPROF=1 in its environment, meant for the
 * program it profiles, does not start one at load time. */
extern const int pp__no_autostart __attribute__((weak));

__attribute__((constructor)) static void pp__autostart(void) {
  if (&pp__no_autostart && pp__no_autostart)
    return;
  pp_init_from_env();
}
