/* SPDX-License-Identifier: MIT */
/*
 * Minimal test harness: tests register themselves with PP_TEST(name), the
 * runner (tests/runner.c) forks each one with a timeout and prints TAP.
 * Assertions print both values and fail only the running test.
 */
#ifndef PP_TEST_RUNNER_H
#define PP_TEST_RUNNER_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*pp_test_fn)(void);
void pp_test_register(const char *name, const char *file, pp_test_fn fn,
                      int timeout_s);
/* A scratch directory private to the running test, removed afterwards. */
const char *pp_test_tmpdir(void);
/* Path of the build directory's binaries (for CLI tests): $PP_BUILD_DIR or
 * the directory holding the test binary. */
const char *pp_test_bindir(void);
/* Path of the source tree: $PP_SOURCE_DIR or the compiled-in default. */
const char *pp_test_srcdir(void);

#define PP_TEST_T(name, timeout_s)                                          \
  static void pp_test_##name(void);                                         \
  __attribute__((constructor)) static void pp_test_reg_##name(void) {       \
    pp_test_register(#name, __FILE__, pp_test_##name, timeout_s);           \
  }                                                                         \
  static void pp_test_##name(void)
#define PP_TEST(name) PP_TEST_T(name, 60)

#define PP_FAIL(...)                                                        \
  do {                                                                      \
    fprintf(stderr, "# %s:%d: ", __FILE__, __LINE__);                       \
    fprintf(stderr, __VA_ARGS__);                                           \
    fprintf(stderr, "\n");                                                  \
    exit(1);                                                                \
  } while (0)

#define CHECK(cond)                                                         \
  do {                                                                      \
    if (!(cond))                                                            \
      PP_FAIL("check failed: %s", #cond);                                   \
  } while (0)

#define CHECK_OP_I(a, op, b)                                                \
  do {                                                                      \
    long long pp_a_ = (long long)(a), pp_b_ = (long long)(b);               \
    if (!(pp_a_ op pp_b_))                                                  \
      PP_FAIL("check failed: %s %s %s (%lld vs %lld)", #a, #op, #b, pp_a_,  \
              pp_b_);                                                       \
  } while (0)
#define CHECK_EQ(a, b) CHECK_OP_I(a, ==, b)
#define CHECK_NE(a, b) CHECK_OP_I(a, !=, b)
#define CHECK_LT(a, b) CHECK_OP_I(a, <, b)
#define CHECK_LE(a, b) CHECK_OP_I(a, <=, b)
#define CHECK_GT(a, b) CHECK_OP_I(a, >, b)
#define CHECK_GE(a, b) CHECK_OP_I(a, >=, b)

#define CHECK_EQ_U(a, b)                                                    \
  do {                                                                      \
    unsigned long long pp_a_ = (a), pp_b_ = (b);                            \
    if (pp_a_ != pp_b_)                                                     \
      PP_FAIL("check failed: %s == %s (%llu vs %llu)", #a, #b, pp_a_,       \
              pp_b_);                                                       \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                               \
  do {                                                                      \
    double pp_a_ = (double)(a), pp_b_ = (double)(b);                        \
    if (!(fabs(pp_a_ - pp_b_) <= (tol)))                                    \
      PP_FAIL("check failed: %s ~= %s (%.9g vs %.9g, tol %g)", #a, #b,      \
              pp_a_, pp_b_, (double)(tol));                                 \
  } while (0)

#define CHECK_STR(a, b)                                                     \
  do {                                                                      \
    const char *pp_a_ = (a), *pp_b_ = (b);                                  \
    if (!pp_a_ || !pp_b_ || strcmp(pp_a_, pp_b_) != 0)                      \
      PP_FAIL("check failed: %s == %s (\"%s\" vs \"%s\")", #a, #b,          \
              pp_a_ ? pp_a_ : "(null)", pp_b_ ? pp_b_ : "(null)");          \
  } while (0)

#define CHECK_CONTAINS(hay, needle)                                         \
  do {                                                                      \
    const char *pp_h_ = (hay), *pp_n_ = (needle);                           \
    if (!pp_h_ || !strstr(pp_h_, pp_n_))                                    \
      PP_FAIL("check failed: \"%s\" not found in %s:\n%s", pp_n_, #hay,     \
              pp_h_ ? pp_h_ : "(null)");                                    \
  } while (0)

/* Helpers for CLI tests: run a shell command, capture stdout+stderr into a
 * malloc'ed string (*out, may be NULL) and return the exit status (or 128 +
 * signal). */
int pp_test_run(char **out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* What a run of the pipeprof command printed, stdout and stderr apart. */
typedef struct pp_cli_result {
  int rc;
  char *out; /* standard output */
  char *err; /* standard error */
} pp_cli_result;

/* Run `<build dir>/pipeprof ARGS` (ARGS is shell text: quote paths
 * yourself). Fails the test if the output cannot be captured. */
pp_cli_result pp_test_cli(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
void pp_cli_result_free(pp_cli_result *r);
int pp_test_count_lines(const char *s);

/* Exit status, nothing on stdout, exactly one line on stderr naming who. */
#define CHECK_ONE_LINE_ERROR_FROM(r, status, who)                           \
  do {                                                                      \
    CHECK_EQ((r).rc, status);                                               \
    CHECK_STR((r).out, "");                                                 \
    if (pp_test_count_lines((r).err) != 1)                                  \
      PP_FAIL("expected one line on stderr, got:\n%s", (r).err);            \
    CHECK_CONTAINS((r).err, who);                                           \
  } while (0)

/* Value of KEY in the build directory's CMakeCache.txt (malloc'ed; "" when
 * the key is absent). Without a cache file: "" when required is 0, else
 * the test fails. Tests that compile programs use it to match the build's
 * compiler and sanitizer flags. */
char *pp_test_cmake_cache(const char *key, int required);

/* Headless Chromium for the pages' tests: its path ($PP_CHROMIUM or the
 * usual places), or NULL with a "# skipped" line (the test fails instead
 * when PP_REQUIRE_CHROMIUM=1). */
const char *pp_test_chromium(void);
/* The DOM Chromium holds after loading url and running its scripts
 * (flags: more command-line flags, or ""); fails the test when Chromium
 * fails. */
char *pp_test_chromium_dom(const char *chromium, const char *url,
                           const char *flags);

/* Read a whole file into a malloc'ed NUL-terminated string; NULL if absent. */
char *pp_test_slurp(const char *path, size_t *len);

/* The sanitizer this runner was built with. ThreadSanitizer cannot start
 * threads in the child of a multi-threaded fork (it kills the child);
 * GCC 12's AddressSanitizer does not make its allocator fork-safe: a
 * child of a threaded process that allocates much (a new session does)
 * can block forever on a size-class lock another thread held at fork
 * time. */
#if defined(__SANITIZE_THREAD__)
#define PP_T_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PP_T_TSAN 1
#endif
#endif
#ifndef PP_T_TSAN
#define PP_T_TSAN 0
#endif
#if defined(__SANITIZE_ADDRESS__)
#define PP_T_ASAN 1
#else
#define PP_T_ASAN 0
#endif

/* Tests whose forked children start a session (a writer thread) while
 * their parent's threads run: not under the sanitizers (above); 1 when
 * skipped, with a "# skipped" line saying why. */
int pp_test_skip_forked_sessions(void);

#endif /* PP_TEST_RUNNER_H */
