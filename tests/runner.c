/* SPDX-License-Identifier: MIT */
/*
 * Test runner: runs every registered test (or those whose name contains one
 * of the arguments) in a forked child with a timeout, prints TAP, and ends
 * with a "N passed, N failed" line. A hung or crashing test fails alone.
 */

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner.h"

typedef struct test {
  const char *name, *file;
  pp_test_fn fn;
  int timeout_s;
} test;

static test tests[1024];
static int ntests;
static char tmpdir[PATH_MAX];
static char bindir[PATH_MAX];

void pp_test_register(const char *name, const char *file, pp_test_fn fn,
                      int timeout_s) {
  if (ntests < (int)(sizeof tests / sizeof tests[0]))
    tests[ntests++] = (test){name, file, fn, timeout_s};
}

const char *pp_test_tmpdir(void) { return tmpdir; }

const char *pp_test_bindir(void) {
  const char *e = getenv("PP_BUILD_DIR");
  return e && *e ? e : bindir;
}

const char *pp_test_srcdir(void) {
  const char *e = getenv("PP_SOURCE_DIR");
#ifdef PP_SOURCE_DIR_DEFAULT
  return e && *e ? e : PP_SOURCE_DIR_DEFAULT;
#else
  return e && *e ? e : ".";
#endif
}

int pp_test_run(char **out, const char *fmt, ...) {
  char cmd[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  char full[8400];
  snprintf(full, sizeof full, "( %s ) 2>&1", cmd);
  FILE *p = popen(full, "r");
  if (!p)
    return -1;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  size_t n;
  while (buf && (n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
    len += n;
    if (cap - len < 1024) {
      cap *= 2;
      char *nb = realloc(buf, cap);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
    }
  }
  if (buf)
    buf[len] = 0;
  int st = pclose(p);
  if (out)
    *out = buf;
  else
    free(buf);
  if (st == -1)
    return -1;
  if (WIFEXITED(st))
    return WEXITSTATUS(st);
  if (WIFSIGNALED(st))
    return 128 + WTERMSIG(st);
  return -1;
}

char *pp_test_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  size_t r;
  while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += r;
    if (cap - n < 2) {
      cap *= 2;
      char *nb = realloc(buf, cap);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
    }
  }
  fclose(f);
  if (buf)
    buf[n] = 0;
  if (len)
    *len = n;
  return buf;
}

pp_cli_result pp_test_cli(const char *fmt, ...) {
  char args[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  char errpath[PATH_MAX + 32];
  snprintf(errpath, sizeof errpath, "%s/cli-stderr.txt", pp_test_tmpdir());
  pp_cli_result r;
  r.rc = pp_test_run(&r.out, "'%s/pipeprof' %s 2>'%s'", pp_test_bindir(),
                     args, errpath);
  if (!r.out)
    PP_FAIL("cannot capture the output of pipeprof %s", args);
  r.err = pp_test_slurp(errpath, NULL);
  if (!r.err)
    PP_FAIL("cannot read the stderr of pipeprof %s", args);
  return r;
}

void pp_cli_result_free(pp_cli_result *r) {
  free(r->out);
  free(r->err);
  r->out = r->err = NULL;
}

int pp_test_count_lines(const char *s) {
  int n = 0;
  for (; *s; s++)
    n += *s == '\n';
  return n;
}

/* Under ASan, no leak check at exit: the runner ends every test with
 * _exit (so it would check nothing), and the fork tests' children call
 * exit() in a child of a threaded process, where GCC 12's LeakSanitizer can
 * deadlock on an allocator lock held by another thread at fork time. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }

char *pp_test_cmake_cache(const char *key, int required) {
  char path[PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/CMakeCache.txt", pp_test_bindir());
  char *text = pp_test_slurp(path, NULL);
  if (!text && required)
    PP_FAIL("cannot read %s", path);
  char *val = NULL;
  size_t kl = strlen(key);
  for (char *line = text; line && *line;) {
    char *nl = strchr(line, '\n');
    if (nl)
      *nl = 0;
    if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
      char *eq = strchr(line + kl, '=');
      if (eq) {
        val = strdup(eq + 1);
        break;
      }
    }
    line = nl ? nl + 1 : NULL;
  }
  free(text);
  if (!val)
    val = strdup("");
  if (!val)
    PP_FAIL("out of memory");
  return val;
}

static int matches(const char *name, int argc, char **argv) {
  if (argc <= 1)
    return 1;
  for (int i = 1; i < argc; i++)
    if (strstr(name, argv[i]))
      return 1;
  return 0;
}

static void rm_rf(const char *path) {
  char cmd[PATH_MAX + 32];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  if (system(cmd) != 0) {
    /* best effort */
  }
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  char self[PATH_MAX];
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  if (sl > 0) {
    self[sl] = 0;
    snprintf(bindir, sizeof bindir, "%s", dirname(self));
  } else {
    snprintf(bindir, sizeof bindir, ".");
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  int selected = 0;
  for (int i = 0; i < ntests; i++)
    selected += matches(tests[i].name, argc, argv);
  printf("TAP version 13\n1..%d\n", selected);
  int passed = 0, failed = 0, k = 0;
  for (int i = 0; i < ntests; i++) {
    test *t = &tests[i];
    if (!matches(t->name, argc, argv))
      continue;
    k++;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/pptest-%s-XXXXXX",
             base && *base ? base : "/tmp", t->name);
    if (!mkdtemp(tmpdir)) {
      printf("not ok %d - %s # cannot create temp dir: %s\n", k, t->name,
             strerror(errno));
      failed++;
      continue;
    }
    double t0 = now_s();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      setpgid(0, 0);
      /* the durable rings of processes a test kills go with its folder
       * (test-durable.c tests the default place) */
      setenv("PIPEPROF_RINGS_DIR", tmpdir, 1);
      alarm((unsigned)t->timeout_s);
      t->fn();
      fflush(NULL);
      _exit(0);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    kill(-pid, SIGKILL); /* leftovers of the test's own children */
    double dt = now_s() - t0;
    rm_rf(tmpdir);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
      printf("ok %d - %s # %.2fs\n", k, t->name, dt);
      passed++;
    } else if (WIFSIGNALED(st)) {
      printf("not ok %d - %s # %s%s\n", k, t->name,
             WTERMSIG(st) == SIGALRM ? "timeout after " : "killed by signal ",
             WTERMSIG(st) == SIGALRM ? "limit" : strsignal(WTERMSIG(st)));
      failed++;
    } else {
      printf("not ok %d - %s # exit %d (%s)\n", k, t->name,
             WIFEXITED(st) ? WEXITSTATUS(st) : -1, t->file);
      failed++;
    }
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

/* ---- headless Chromium ---------------------------------------------------- */

static const char *find_chromium(void) {
  static const char *const cands[] = {
      "/usr/bin/chromium", "/usr/bin/chromium-browser", "/snap/bin/chromium"};
  const char *env = getenv("PP_CHROMIUM");
  if (env && *env)
    return access(env, X_OK) == 0 ? env : NULL;
  for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++)
    if (access(cands[i], X_OK) == 0)
      return cands[i];
  return NULL;
}

const char *pp_test_chromium(void) {
  const char *chromium = find_chromium();
  if (!chromium) {
    const char *req = getenv("PP_REQUIRE_CHROMIUM");
    if (req && strcmp(req, "1") == 0)
      PP_FAIL("chromium not installed and PP_REQUIRE_CHROMIUM=1 (apt-get "
              "install chromium)");
    printf("# skipped: chromium not installed\n");
  }
  return chromium;
}

char *pp_test_chromium_dom(const char *chromium, const char *url,
                           const char *flags) {
  char profile[4200], log[4200];
  snprintf(profile, sizeof profile, "%.4000s/chromium-profile",
           pp_test_tmpdir());
  snprintf(log, sizeof log, "%.4000s/chromium.log", pp_test_tmpdir());
  char *dom = NULL;
  int rc = pp_test_run(&dom,
                       "timeout 90 '%s' --headless --no-sandbox --disable-gpu "
                       "--disable-dev-shm-usage --no-first-run "
                       "--user-data-dir='%s' %s --dump-dom '%s' 2>'%s'",
                       chromium, profile, flags, url, log);
  if (rc != 0) {
    char *l = pp_test_slurp(log, NULL);
    PP_FAIL("chromium exit %d:\n%s", rc, l ? l : "");
  }
  CHECK(dom != NULL);
  return dom;
}

int pp_test_skip_forked_sessions(void) {
  if (!PP_T_TSAN && !PP_T_ASAN)
    return 0;
  printf("# skipped: %s\n",
         PP_T_TSAN ? "TSan cannot start threads after a threaded fork"
                   : "GCC 12 ASan's allocator is not fork-safe");
  return 1;
}
