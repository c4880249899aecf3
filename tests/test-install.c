/* SPDX-License-Identifier: MIT */
/*
 * Install tests: `cmake --install` the build directory into a scratch
 * prefix, check the installed layout, then build tests/consumer/consumer.c
 * against that prefix the two ways users do, with find_package(pipeprof)
 * (shared and static targets) and with pkg-config (pipeprof and
 * pipeprof-static), run each result and check the trace file it wrote.
 *
 * The consumer is compiled with the build's own C compiler and sanitizer
 * flags (read from CMakeCache.txt), since an instrumented library cannot be
 * loaded by an uninstrumented program.
 *
 * Every consumer runs without LD_LIBRARY_PATH, as a user's program would:
 * the CMake build finds libpipeprof.so through the RUNPATH CMake gives it,
 * the pkg-config build through the rpath flag README's Linking section
 * documents (-Wl,-rpath,$(pkg-config --variable=libdir pipeprof)), and ldd
 * must show the library of the scratch prefix, not another install.
 */
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeprof/version.h"
#include "runner.h"

/* snprintf that fails the test instead of truncating. */
static void fmt(char *buf, size_t size, const char *f, ...)
    __attribute__((format(printf, 3, 4)));
static void fmt(char *buf, size_t size, const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  int n = vsnprintf(buf, size, f, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= size)
    PP_FAIL("path too long: %s", buf);
}

static char *cache_get(const char *key) {
  return pp_test_cmake_cache(key, 1);
}

typedef struct build_env {
  char cmake[4096];  /* the cmake that configured the build */
  char cc[4096];     /* its C compiler */
  char san[512];     /* "-fsanitize=... " or "" */
  char prefix[4096]; /* scratch install prefix */
  char libdir[4096]; /* prefix + CMAKE_INSTALL_LIBDIR */
  char src[4096];    /* source tree */
} build_env;

/* Run a shell command; on a non-zero exit print its output and fail. */
static char *run_ok(const char *what, const char *f, ...)
    __attribute__((format(printf, 2, 3)));
static char *run_ok(const char *what, const char *f, ...) {
  char cmd[8192];
  va_list ap;
  va_start(ap, f);
  int n = vsnprintf(cmd, sizeof cmd, f, ap);
  va_end(ap);
  CHECK(n > 0 && (size_t)n < sizeof cmd);
  char *out = NULL;
  int rc = pp_test_run(&out, "%s", cmd);
  if (rc != 0) {
    fprintf(stderr, "# %s failed (exit %d): %s\n%s\n", what, rc, cmd,
            out ? out : "");
    PP_FAIL("%s failed", what);
  }
  return out;
}

static void check_nonempty(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0)
    PP_FAIL("missing: %s", path);
  if (st.st_size <= 0)
    PP_FAIL("empty: %s", path);
}

static void check_exists(const char *dir, const char *rel) {
  char path[4096];
  fmt(path, sizeof path, "%s/%s", dir, rel);
  struct stat st;
  if (lstat(path, &st) != 0)
    PP_FAIL("not installed: %s", path);
}

/* Install the build directory into <tmpdir>/prefix and check the layout. */
static void install_to_scratch(build_env *e) {
  /* A make jobserver of ours would confuse the nested builds. */
  unsetenv("MAKEFLAGS");
  unsetenv("MFLAGS");
  unsetenv("MAKELEVEL");

  char *v = cache_get("CMAKE_COMMAND");
  fmt(e->cmake, sizeof e->cmake, "%s", *v ? v : "cmake");
  free(v);
  v = cache_get("CMAKE_C_COMPILER");
  fmt(e->cc, sizeof e->cc, "%s", *v ? v : "cc");
  free(v);
  v = cache_get("PP_SANITIZE");
  if (*v)
    fmt(e->san, sizeof e->san, "-fsanitize=%s -fno-omit-frame-pointer", v);
  else
    e->san[0] = 0;
  free(v);
  fmt(e->prefix, sizeof e->prefix, "%s/prefix", pp_test_tmpdir());
  v = cache_get("CMAKE_INSTALL_LIBDIR");
  if (v[0] == '/')
    fmt(e->libdir, sizeof e->libdir, "%s", v);
  else
    fmt(e->libdir, sizeof e->libdir, "%s/%s", e->prefix, *v ? v : "lib");
  free(v);
  fmt(e->src, sizeof e->src, "%s", pp_test_srcdir());

  free(run_ok("cmake --install", "'%s' --install '%s' --prefix '%s'", e->cmake,
              pp_test_bindir(), e->prefix));

  check_exists(e->prefix, "include/pipeprof.h");
  check_exists(e->prefix, "include/pipeprof/version.h");
  check_exists(e->prefix, "bin/pipeprof");
  check_exists(e->prefix, "libexec/pipeprof/pipeprof-example-pipeline");
  check_exists(e->libdir, "libpipeprof.so");
  check_exists(e->libdir, "libpipeprof.a");
  check_exists(e->libdir, "pkgconfig/pipeprof.pc");
  check_exists(e->libdir, "pkgconfig/pipeprof-static.pc");
  check_exists(e->libdir, "cmake/pipeprof/pipeprofConfig.cmake");
  check_exists(e->libdir, "cmake/pipeprof/pipeprofConfigVersion.cmake");
  check_exists(e->libdir, "cmake/pipeprof/pipeprofTargets.cmake");
}

/* Run a consumer binary without LD_LIBRARY_PATH, expect exit 0 and a
 * non-empty trace; a shared one must load the scratch prefix's library. */
static void run_consumer(const build_env *e, const char *exe, int shared) {
  char trace[4096];
  fmt(trace, sizeof trace, "%s.pptrace", exe);
  if (shared) {
    char *ldd = run_ok("ldd", "env -u LD_LIBRARY_PATH ldd '%s'", exe);
    const char *line = strstr(ldd, "libpipeprof.so");
    if (!line)
      PP_FAIL("%s does not load libpipeprof.so:\n%s", exe, ldd);
    const char *eol = strchr(line, '\n');
    size_t len = eol ? (size_t)(eol - line) : strlen(line);
    char found[4096];
    fmt(found, sizeof found, "%.*s", (int)len, line);
    if (!strstr(found, e->libdir))
      PP_FAIL("%s loads '%s', not the library in %s", exe, found, e->libdir);
    free(ldd);
  }
  char *out =
      run_ok("consumer", "env -u LD_LIBRARY_PATH '%s' '%s'", exe, trace);
  CHECK_CONTAINS(out, "consumer: ok");
  free(out);
  check_nonempty(trace);
}

PP_TEST_T(install_consumer_cmake, 300) {
  build_env e;
  install_to_scratch(&e);
  char bdir[4096];
  fmt(bdir, sizeof bdir, "%s/consumer-build", pp_test_tmpdir());
  free(run_ok("configure consumer",
              "'%s' -S '%s/tests/consumer' -B '%s' -DCMAKE_BUILD_TYPE=Debug "
              "-DCMAKE_PREFIX_PATH='%s' -DCMAKE_C_COMPILER='%s' "
              "-DCMAKE_C_FLAGS='%s'",
              e.cmake, e.src, bdir, e.prefix, e.cc, e.san));
  free(run_ok("build consumer", "'%s' --build '%s'", e.cmake, bdir));

  char exe[4096];
  fmt(exe, sizeof exe, "%s/consumer", bdir);
  run_consumer(&e, exe, 1);
  fmt(exe, sizeof exe, "%s/consumer_static", bdir);
  run_consumer(&e, exe, 0);
}

PP_TEST_T(install_consumer_pkgconfig, 300) {
  build_env e;
  install_to_scratch(&e);
  const char *pcs[] = {"pipeprof", "pipeprof-static"};
  for (int i = 0; i < 2; i++) {
    int is_static = i == 1;
    char *ver = run_ok("pkg-config --modversion",
                       "PKG_CONFIG_PATH='%s/pkgconfig' pkg-config "
                       "--modversion %s",
                       e.libdir, pcs[i]);
    ver[strcspn(ver, "\r\n")] = 0;
    CHECK_STR(ver, PP_VERSION_STRING);
    free(ver);

    char *flags = run_ok("pkg-config --cflags --libs",
                         "PKG_CONFIG_PATH='%s/pkgconfig' pkg-config %s "
                         "--cflags --libs %s",
                         e.libdir, is_static ? "--static" : "", pcs[i]);
    flags[strcspn(flags, "\r\n")] = 0;
    /* The flags must point into the scratch prefix, not an older install. */
    CHECK_CONTAINS(flags, pp_test_tmpdir());
    if (is_static)
      CHECK_CONTAINS(flags, "-DPP_STATIC_BUILD");

    /* The shared library outside the loader's default paths: the rpath
     * flag README's Linking section gives, with pkg-config's libdir. */
    char rpath[4200] = "";
    if (!is_static) {
      char *libdir = run_ok("pkg-config --variable=libdir",
                            "PKG_CONFIG_PATH='%s/pkgconfig' pkg-config "
                            "--variable=libdir %s",
                            e.libdir, pcs[i]);
      libdir[strcspn(libdir, "\r\n")] = 0;
      CHECK_CONTAINS(libdir, pp_test_tmpdir());
      fmt(rpath, sizeof rpath, "-Wl,-rpath,'%s'", libdir);
      free(libdir);
    }

    char exe[4096];
    fmt(exe, sizeof exe, "%s/consumer-pc-%s", pp_test_tmpdir(), pcs[i]);
    free(run_ok("compile consumer",
                "'%s' -std=c11 -Wall -Wextra -Werror %s "
                "'%s/tests/consumer/consumer.c' -o '%s' %s %s",
                e.cc, e.san, e.src, exe, flags, rpath));
    free(flags);
    run_consumer(&e, exe, !is_static);
  }
}

/* pkg-config against the build tree (no install): PKG_CONFIG_PATH=<build>
 * finds pipeprof-uninstalled.pc, whose directories exist (the build's
 * libraries, the source tree's headers), and a program built with its
 * flags runs and records. */
PP_TEST_T(install_pkgconfig_build_tree, 300) {
  build_env e;
  memset(&e, 0, sizeof e);
  char *v = cache_get("CMAKE_C_COMPILER");
  fmt(e.cc, sizeof e.cc, "%s", *v ? v : "cc");
  free(v);
  v = cache_get("PP_SANITIZE");
  if (*v)
    fmt(e.san, sizeof e.san, "-fsanitize=%s -fno-omit-frame-pointer", v);
  free(v);
  fmt(e.src, sizeof e.src, "%s", pp_test_srcdir());
  const char *bin = pp_test_bindir();
  char path[4200];
  fmt(path, sizeof path, "%s/pipeprof.pc", bin);
  struct stat st;
  CHECK(stat(path, &st) != 0); /* install-only files are not in the tree */
  const char *pcs[] = {"pipeprof", "pipeprof-static"};
  for (int i = 0; i < 2; i++) {
    int is_static = i == 1;
    char *dirs = run_ok("pkg-config --variable",
                        "PKG_CONFIG_PATH='%s' pkg-config --variable=libdir "
                        "%s && PKG_CONFIG_PATH='%s' pkg-config "
                        "--variable=includedir %s",
                        bin, pcs[i], bin, pcs[i]);
    char *nl = strchr(dirs, '\n');
    CHECK(nl != NULL);
    *nl = 0;
    nl[1 + strcspn(nl + 1, "\r\n")] = 0;
    char f[4300];
    fmt(f, sizeof f, "%s/%s", dirs, is_static ? "libpipeprof.a"
                                              : "libpipeprof.so");
    check_nonempty(f);
    fmt(f, sizeof f, "%s/pipeprof.h", nl + 1);
    check_nonempty(f);
    char *flags = run_ok("pkg-config --cflags --libs",
                         "PKG_CONFIG_PATH='%s' pkg-config %s --cflags "
                         "--libs %s",
                         bin, is_static ? "--static" : "", pcs[i]);
    flags[strcspn(flags, "\r\n")] = 0;
    CHECK_CONTAINS(flags, bin);
    char rpath[4300] = "";
    if (!is_static)
      fmt(rpath, sizeof rpath, "-Wl,-rpath,'%s'", dirs);
    char exe[4096];
    fmt(exe, sizeof exe, "%s/consumer-tree-%s", pp_test_tmpdir(), pcs[i]);
    free(run_ok("compile consumer",
                "'%s' -std=c11 -Wall -Wextra -Werror %s "
                "'%s/tests/consumer/consumer.c' -o '%s' %s %s",
                e.cc, e.san, e.src, exe, flags, rpath));
    free(flags);
    fmt(e.libdir, sizeof e.libdir, "%s", dirs);
    free(dirs);
    run_consumer(&e, exe, !is_static); /* and loads the build's library */
  }
}
