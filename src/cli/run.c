/* SPDX-License-Identifier: MIT */
/*
 * `pipeprof run [options] -- CMD ARGS...`: launch a program with profiling
 * switched on through the environment, sample its process tree and the
 * system while it runs, and print one report for the whole run.
 *
 * The child waits on a pipe until the sampler has opened its perf_event
 * counters (enabled when the child execs), so the profiler's own setup is
 * not counted. A second, close-on-exec pipe tells the parent whether exec
 * worked. Signals sent to pipeprof are forwarded to the child; Ctrl-C from
 * the terminal already reaches both, so it is not sent twice. The exit
 * status is the child's (128 + N when killed by signal N).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "core/clock.h"
#include "core/http.h"
#include "core/meta.h"
#include "core/recorder.h"
#include "core/sampler.h"
#include "export/export.h"
#include "internal.h"
#include "pipeprof.h"

/* Processes and threads of CMD's tree tracked one by one; later ones are
 * counted (the report says how many were left out). */
#define RUN_MAX_THREADS 256

typedef pp_cli_run_args run_opts;

static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t got_signal;

static void forward(int sig, siginfo_t *si, void *ctx) {
  (void)ctx;
  got_signal = sig;
  /* A terminal's Ctrl-C or Ctrl-\ reached the whole foreground group,
   * the child included: do not deliver it twice. */
  if ((sig == SIGINT || sig == SIGQUIT) && si && si->si_code == SI_KERNEL)
    return;
  if (child_pid > 0)
    kill((pid_t)child_pid, sig);
}

/* Find cmd as execvp would; 0 with the path in out, or -1. */
static int resolve(const char *cmd, char *out, size_t len) {
  if (strchr(cmd, '/')) {
    snprintf(out, len, "%s", cmd);
    struct stat st;
    return stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
                   access(out, X_OK) == 0
               ? 0
               : -1;
  }
  const char *path = getenv("PATH");
  if (!path || !*path)
    path = "/usr/local/bin:/usr/bin:/bin";
  while (*path) {
    const char *colon = strchr(path, ':');
    size_t n = colon ? (size_t)(colon - path) : strlen(path);
    int k = snprintf(out, len, "%.*s%s%s", (int)n, n ? path : ".",
                     n ? "/" : "/", cmd);
    struct stat st;
    if (k > 0 && (size_t)k < len && stat(out, &st) == 0 &&
        S_ISREG(st.st_mode) && access(out, X_OK) == 0)
      return 0;
    path += n + (colon ? 1 : 0);
  }
  return -1;
}

static int make_dir(const char *dir) {
  char buf[PATH_MAX];
  snprintf(buf, sizeof buf, "%s", dir);
  for (char *p = buf + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return -1;
      *p = '/';
    }
  return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int check_writable(const char *dir) {
  char probe[PATH_MAX];
  snprintf(probe, sizeof probe, "%s/.pipeprof-probe", dir);
  int fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return -1;
  close(fd);
  unlink(probe);
  return 0;
}

static void status_line(pp__sampler *s, double elapsed) {
  pp__sampler_status st;
  pp__sampler_status_get(s, &st);
  char cpu[32] = "cpu -", rss[48] = "rss -", sys[32] = "";
  if (st.cpu_pct >= 0)
    snprintf(cpu, sizeof cpu, "cpu %.0f%%", st.cpu_pct);
  if (st.rss_bytes >= 0) {
    char b[32];
    pp__fmt_bytes(b, sizeof b, st.rss_bytes);
    snprintf(rss, sizeof rss, "rss %s", b);
  }
  if (st.sys_busy_pct >= 0)
    snprintf(sys, sizeof sys, "  system %.0f%%", st.sys_busy_pct);
  fprintf(stderr, "\r\033[K[pipeprof] %.1f s  %s  %s%s", elapsed, cpu, rss,
          sys);
  fflush(stderr);
}

/* libpipeprof.so beside this binary (build tree) or in ../lib (install):
 * NVTX loads it to capture nvtx* calls. "" when not found. */
static void find_library(char *out, size_t len) {
  char self[PATH_MAX];
  out[0] = 0;
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return;
  self[n] = 0;
  char *slash = strrchr(self, '/');
  if (!slash)
    return;
  *slash = 0;
  static const char *const rel[] = {"libpipeprof.so", "../lib/libpipeprof.so",
                                    "../lib64/libpipeprof.so",
                                    "../lib/x86_64-linux-gnu/libpipeprof.so"};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    int k = snprintf(out, len, "%s/%s", self, rel[i]);
    if (k > 0 && (size_t)k < len && access(out, R_OK) == 0)
      return;
  }
  out[0] = 0;
}

static void describe_exit(int st, char *buf, size_t len, int *code) {
  if (WIFEXITED(st)) {
    *code = WEXITSTATUS(st);
    snprintf(buf, len, "exit %d", *code);
  } else if (WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    *code = 128 + sig;
    snprintf(buf, len, "killed by signal %d (SIG%s)%s", sig,
             sigabbrev_np(sig) ? sigabbrev_np(sig) : "?",
             WCOREDUMP(st) ? ", core dumped" : "");
  } else {
    *code = 1;
    snprintf(buf, len, "ended with status %d", st);
  }
}

static void meta_num(const char *key, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.0f", v);
  pp__session_meta(key, buf);
}

static void remove_old(const char *dir) {
  static const char *const names[] = {"app.pptrace", "system.pptrace",
                                      "trace.json", "summary.json",
                                      "report.html", "stacks.folded"};
  char p[PATH_MAX];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, names[i]);
    unlink(p);
  }
  pp_cli_remove_children(dir);
}

/* The run's CPU stack samples into its own session's file (STACKS
 * chunks), or why there are none (META unavailable.stacks). */
static void save_stacks(const pp_stack_set *s, const char *why) {
  if (why) {
    pp__session_meta("unavailable.stacks", why);
    return;
  }
  ppt_buf *chunks;
  size_t n;
  if (pp_stack_set_encode(s, &chunks, &n) != 0) {
    pp__session_meta("unavailable.stacks", "out of memory writing the samples");
    return;
  }
  for (size_t i = 0; i < n; i++) {
    if (pp__session_chunk(PPT_CHUNK_STACKS, chunks[i].data, chunks[i].len))
      pp__session_meta("unavailable.stacks",
                       "the samples could not be written to the trace");
    ppt_buf_free(&chunks[i]);
  }
  pp__free(chunks);
}

/* "wrote DIR/{a,b}": the files of the run that exist now (checked after
 * the run: CMD writes app.pptrace only when it links libpipeprof). */
static void print_written(const char *dir) {
  static const char *const names[] = {"app.pptrace", "system.pptrace",
                                      "trace.json", "summary.json",
                                      "report.html", "stacks.folded"};
  char p[PATH_MAX];
  const char *have[sizeof names / sizeof names[0]];
  size_t n = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, names[i]);
    if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
      have[n++] = names[i];
  }
  size_t extra = 0; /* app.pptrace.<pid> of CMD's children */
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL)
    if (strncmp(e->d_name, "app.pptrace.", 12) == 0)
      extra++;
  if (d)
    closedir(d);
  if (!n && !extra) {
    printf("\nwrote nothing to %s\n", dir);
    return;
  }
  if (!n) {
    printf("\nwrote %zu app.pptrace.<pid> file%s in %s\n", extra,
           extra == 1 ? "" : "s", dir);
    return;
  }
  printf("\nwrote %s/", dir);
  if (n == 1) {
    fputs(have[0], stdout);
  } else {
    putchar('{');
    for (size_t i = 0; i < n; i++)
      printf("%s%s", i ? "," : "", have[i]);
    putchar('}');
  }
  if (extra)
    printf(" and %zu app.pptrace.<pid> file%s", extra, extra == 1 ? "" : "s");
  putchar('\n');
}

/* Where CMD's own endpoint will be: the user's PIPEPROF_HTTP (PORT and
 * :PORT on loopback), else a port free now on 127.0.0.1. 0, or -1 with
 * the reason in out. */
static int program_endpoint(char *out, size_t len) {
  const char *env = getenv("PIPEPROF_HTTP");
  if (env && *env) {
    pp__http_full_addr(env, out, len);
    return 0;
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa;
  socklen_t sl = sizeof sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
      getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
    snprintf(out, len, "no free port: %s", strerror(errno));
    if (fd >= 0)
      close(fd);
    return -1;
  }
  close(fd);
  snprintf(out, len, "127.0.0.1:%u", (unsigned)ntohs(sa.sin_port));
  return 0;
}

int pp_cli_run(int argc, char **argv) {
  run_opts o;
  int rc = pp_cli_parse_run(argc, argv, &o);
  if (rc != PP_CLI_PARSED)
    return rc;
  char exe[PATH_MAX];
  if (resolve(o.cmd[0], exe, sizeof exe) != 0) {
    fprintf(stderr, "pipeprof run: command not found: %s\n", o.cmd[0]);
    return 127;
  }
  if (make_dir(o.out) != 0 || check_writable(o.out) != 0) {
    fprintf(stderr, "pipeprof run: cannot write to %s: %s\n", o.out,
            strerror(errno));
    return 1;
  }
  remove_old(o.out);
  char app[PATH_MAX], sys_path[PATH_MAX];
  snprintf(app, sizeof app, "%s/app.pptrace", o.out);
  snprintf(sys_path, sizeof sys_path, "%s/system.pptrace", o.out);

  char nvtx_lib[PATH_MAX];
  find_library(nvtx_lib, sizeof nvtx_lib);
  /* --http: CMD's own endpoint (if it links libpipeprof) on a free
   * loopback port, which ours merges (docs/http.md) */
  char program_http[64] = "";
  if (o.http && program_endpoint(program_http, sizeof program_http) != 0)
    fprintf(stderr, "pipeprof run: --http serves the samples only: %s\n",
            program_http);
  int go[2], err[2];
  if (pipe2(go, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    fprintf(stderr, "pipeprof run: pipe: %s\n", strerror(errno));
    return 1;
  }
  fflush(NULL);
  int64_t t0 = pp__mono_ns();
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "pipeprof run: fork: %s\n", strerror(errno));
    return 1;
  }
  if (pid == 0) {
    close(go[1]);
    close(err[0]);
    /* A pipeprof started with SIGINT ignored (nohup, `&` in a script) must
     * not pass that on: --duration and forwarding rely on the default. */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    setenv("PIPEPROF", "1", 1);
    setenv("PIPEPROF_OUT", app, 1);
    setenv("PIPEPROF_MODE", o.mode, 1);
    /* CMD itself writes app.pptrace; every process it starts, siblings
     * included, writes app.pptrace.<pid> (CMD may be a shell that records
     * nothing). */
    char me[32];
    snprintf(me, sizeof me, "%ld", (long)getpid());
    setenv("PIPEPROF_OWNER_PID", me, 1);
    if (nvtx_lib[0])
      setenv("NVTX_INJECTION64_PATH", nvtx_lib, 0); /* the user's wins */
    if (program_http[0])
      setenv("PIPEPROF_HTTP", program_http, 0); /* the user's wins */
    if (o.cuda) {
      /* The library starts CUPTI from its constructor (PIPEPROF_CUDA) in
       * programs that load it, and from InitializeInjection() in those the
       * CUDA driver loads it into. */
      setenv("PIPEPROF_CUDA", "1", 1);
      if (nvtx_lib[0])
        setenv("CUDA_INJECTION64_PATH", nvtx_lib, 0);
    }
    char c;
    while (read(go[0], &c, 1) < 0 && errno == EINTR) {
    }
    execv(exe, o.cmd);
    int e = errno;
    ssize_t w = write(err[1], &e, sizeof e);
    (void)w;
    _exit(127);
  }
  close(go[0]);
  close(err[1]);
  child_pid = pid;

  /* The sampler's own session records into system.pptrace. */
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = sys_path;
  cfg.install_signals = 0;
  cfg.flush_ms = 100; /* samples arrive at --hz; no need to wake often */
  /* This session is pipeprof's own: its process is the profiler, not CMD
   * (CMD's pid, command line and tree are in the run.* and tree.* META). */
  cfg.process_name = "pipeprof";
  /* A PIPEPROF_HTTP in the environment is CMD's: this session serves only
   * with --http */
  unsetenv("PIPEPROF_HTTP");
  cfg.http_addr = o.http; /* --http: this session's samples, served live */
  if (program_http[0])    /* ... with what CMD records, from its endpoint */
    setenv("PIPEPROF_HTTP_UPSTREAM", program_http, 1);
  int have_session = pp_init(&cfg) == PP_OK;
  if (!have_session)
    fprintf(stderr, "pipeprof run: sampling off: %s\n", pp_last_error());
  else /* what --http serves is about CMD, not about pipeprof */
    pp__http_subject((long)pid, strrchr(exe, '/') ? strrchr(exe, '/') + 1
                                                  : exe);
  pp__sampler_cfg sc = {pid, o.hz, getenv("PIPEPROF_SYSROOT"), o.system, 1,
                        1, o.system, 256, 1};
  pp__sampler *sampler = have_session ? pp__sampler_open(&sc) : NULL;
  if (sampler)
    pp__sampler_track_threads(sampler, RUN_MAX_THREADS);

  struct sigaction sa, old[4];
  static const int sigs[4] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 4; i++)
    sigaction(sigs[i], &sa, &old[i]);

  /* CPU stack samples: opened on the child now, enabled by its execve() */
  pp_cli_stacks *stacks = NULL;
  char stacks_why[200] = "";
  if (o.stacks_hz > 0) {
    stacks =
        pp_cli_stacks_start(pid, o.stacks_hz, stacks_why, sizeof stacks_why);
    if (!stacks)
      fprintf(stderr, "pipeprof run: no CPU stack samples: %s\n", stacks_why);
  }

  ssize_t w = write(go[1], "g", 1); /* let the child exec */
  (void)w;
  close(go[1]);
  int exec_errno = 0;
  ssize_t n;
  while ((n = read(err[0], &exec_errno, sizeof exec_errno)) < 0 &&
         errno == EINTR) {
  }
  close(err[0]);
  if (n == (ssize_t)sizeof exec_errno) {
    int st;
    waitpid(pid, &st, 0);
    pp_stack_set none;
    pp_cli_stacks_finish(stacks, &none);
    pp_stack_set_free(&none);
    pp__sampler_stop(sampler);
    if (have_session)
      pp_shutdown();
    fprintf(stderr, "pipeprof run: cannot run %s: %s\n", exe,
            strerror(exec_errno));
    return 127;
  }
  if (sampler)
    pp__sampler_start(sampler);

  int tty = !o.quiet && !o.json && isatty(STDERR_FILENO);
  int st = 0, sent_stop = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  int64_t last_status = 0;
  /* Wait on a pidfd (Linux 5.3+) until CMD ends, the --duration deadline
   * or the next status line, rather than waking every 10 ms: at 10 Hz
   * sampling those wake-ups cost more than the sampler. */
  int pidfd = -1;
#ifdef SYS_pidfd_open
  pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
  for (;;) {
    pid_t r = wait4(pid, &st, WNOHANG, &ru);
    if (r == pid)
      break;
    if (r < 0 && errno != EINTR) {
      fprintf(stderr, "pipeprof run: wait: %s\n", strerror(errno));
      break;
    }
    int64_t now = pp__mono_ns();
    double elapsed = (double)(now - t0) * 1e-9;
    if (o.duration > 0 && elapsed >= o.duration && !sent_stop) {
      kill(pid, SIGINT);
      sent_stop = 1;
    }
    if (tty && sampler && now - last_status >= 250000000) {
      status_line(sampler, elapsed);
      last_status = now;
    }
    if (pidfd < 0) {
      struct timespec ts = {0, 10000000};
      nanosleep(&ts, NULL);
      continue;
    }
    int wait_ms = tty && sampler ? 250 : -1;
    if (o.duration > 0 && !sent_stop) {
      double left = (o.duration - elapsed) * 1e3 + 1;
      if (left > 60000)
        left = 60000;
      if (wait_ms < 0 || left < wait_ms)
        wait_ms = left > 1 ? (int)left : 1;
    }
    struct pollfd pf = {pidfd, POLLIN, 0};
    poll(&pf, 1, wait_ms); /* EINTR: a forwarded signal; look again */
  }
  if (pidfd >= 0)
    close(pidfd);
  int64_t wall = pp__mono_ns() - t0;
  child_pid = 0;
  for (int i = 0; i < 4; i++)
    sigaction(sigs[i], &old[i], NULL);
  if (tty)
    fprintf(stderr, "\r\033[K");

  char how[96];
  int code;
  describe_exit(st, how, sizeof how, &code);
  /* the CPU stack samples go into system.pptrace, as STACKS chunks */
  pp_stack_set samples;
  pp_cli_stacks_finish(stacks, &samples);
  if (have_session && o.stacks_hz > 0)
    save_stacks(&samples, stacks ? NULL : stacks_why);
  pp_stack_set_free(&samples);
  if (have_session) {
    pp__sampler_stop(sampler);
    char cmdline[1024] = "";
    size_t len = 0;
    for (char **a = o.cmd; *a && len + 2 < sizeof cmdline; a++) {
      int k = snprintf(cmdline + len, sizeof cmdline - len, "%s%s",
                       len ? " " : "", *a);
      if (k < 0)
        break;
      len += (size_t)k;
      if (len >= sizeof cmdline)
        len = sizeof cmdline - 1;
    }
    pp__session_meta("run.command", cmdline);
    pp__session_meta("run.exit", how);
    if (sent_stop)
      pp__session_meta("run.stopped", "--duration reached: sent SIGINT");
    meta_num("run.wall_ns", (double)wall);
    meta_num("run.user_ns", (double)ru.ru_utime.tv_sec * 1e9 +
                                (double)ru.ru_utime.tv_usec * 1e3);
    meta_num("run.system_ns", (double)ru.ru_stime.tv_sec * 1e9 +
                                  (double)ru.ru_stime.tv_usec * 1e3);
    meta_num("run.maxrss_bytes", (double)ru.ru_maxrss * 1024.0);
    /* the tree's totals: wait4's rusage counts every process of it that
     * was waited for, however short-lived (the sampler misses those) */
    meta_num("run.minflt", (double)ru.ru_minflt);
    meta_num("run.majflt", (double)ru.ru_majflt);
    meta_num("run.nvcsw", (double)ru.ru_nvcsw);
    meta_num("run.nivcsw", (double)ru.ru_nivcsw);
    meta_num("run.pid", (double)pid);
    meta_num("run.profiler_pid", (double)getpid());
    meta_num("run.start_mono_ns", (double)t0);
    /* pipeprof's own CPU (sampler thread, trace writer, this loop) up to
     * now, to set against the tree's: RUSAGE_SELF leaves children out. */
    struct rusage self;
    if (getrusage(RUSAGE_SELF, &self) == 0)
      meta_num(
          "run.profiler_cpu_ns",
          ((double)self.ru_utime.tv_sec + (double)self.ru_stime.tv_sec) * 1e9 +
              ((double)self.ru_utime.tv_usec + (double)self.ru_stime.tv_usec) *
                  1e3);
    char grid[32];
    snprintf(grid, sizeof grid, "%g", o.grid);
    pp__session_meta("carbon.g_per_kwh", grid);
    pp_shutdown();
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    fprintf(stderr, "pipeprof run: %s %s\n", o.cmd[0], how);

  if (WIFSIGNALED(st)) { /* a signal it could not finish the trace on */
    char end[64];
    snprintf(end, sizeof end, "signal SIG%s",
             sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?");
    pp_cli_salvage(app, end);
  }
  pp_trace t;
  pp_analysis a;
  if (pp_cli_load(o.out, &t, &a) != 0)
    return code ? code : 1;
  char out[PATH_MAX];
  snprintf(out, sizeof out, "%s/trace.json", o.out);
  pp_cli_export_to(&a, pp_export_chrome, out);
  snprintf(out, sizeof out, "%s/summary.json", o.out);
  pp_cli_export_to(&a, pp_export_summary_json, out);
  snprintf(out, sizeof out, "%s/report.html", o.out);
  pp_cli_export_to(&a, pp_export_html, out);
  if (t.stacks.nsamples) { /* --stacks: for flamegraph.pl, speedscope */
    snprintf(out, sizeof out, "%s/stacks.folded", o.out);
    pp_cli_export_to(&a, pp_export_stacks_folded, out);
  }
  if (o.json) {
    pp_export_summary_json(stdout, &a);
  } else {
    pp_report_text(stdout, &a, NULL);
    print_written(o.out);
  }
  fflush(stdout);
  pp_analysis_free(&a);
  pp_trace_free(&t);
  return code;
}
