/* SPDX-License-Identifier: MIT */
/*
 * Internal helpers shared by the library and the tools: likely/unlikely,
 * allocation wrappers, and small utilities. Nothing here is API.
 *
 * Invariants: pp__ names are private to the project; every allocation goes
 * through pp__malloc/pp__calloc/pp__realloc/pp__free so that a later
 * per-session allocator can replace them in one place.
 */
#ifndef PP_INTERNAL_H
#define PP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "pipeprof.h"

#define pp__likely(x) __builtin_expect(!!(x), 1)
#define pp__unlikely(x) __builtin_expect(!!(x), 0)

#define PP__ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define PP__MIN(a, b) ((a) < (b) ? (a) : (b))
#define PP__MAX(a, b) ((a) > (b) ? (a) : (b))

/* CLOCK_MONOTONIC and CLOCK_REALTIME in nanoseconds (the recording hot
 * path's ticks are core/clock.h's). */
static inline int64_t pp__mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t pp__real_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void *pp__malloc(size_t n) { return malloc(n ? n : 1); }
static inline void *pp__calloc(size_t n, size_t m) {
  return calloc(n ? n : 1, m ? m : 1);
}
static inline void *pp__realloc(void *p, size_t n) {
  return realloc(p, n ? n : 1);
}
static inline void pp__free(void *p) { free(p); }

/* qsort for arrays that may be empty: qsort's base must not be NULL even
 * for 0 elements, and an empty or one-element array is sorted already. */
static inline void pp__sort(void *base, size_t n, size_t elem,
                            int (*cmp)(const void *, const void *)) {
  if (n > 1)
    qsort(base, n, elem, cmp);
}

/* Saturating arithmetic, for figures from traces that may hold any value:
 * b - a when b > a, else 0, at most INT64_MAX; a + b at most INT64_MAX
 * (for a, b >= 0); a + b at most UINT64_MAX. */
static inline int64_t pp__span(int64_t a, int64_t b) {
  int64_t d;
  if (b <= a)
    return 0;
  return __builtin_sub_overflow(b, a, &d) ? INT64_MAX : d;
}
static inline int64_t pp__add_sat(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}
static inline uint64_t pp__add_sat_u64(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Grow *arr (of *cap elements of size elem) to hold at least need elements.
 * Returns 0 on success, -1 when out of memory (the array is unchanged). */
int pp__grow(void **arr, size_t *cap, size_t need, size_t elem);

/* A duration with its unit, "1.5s", "100ms", "250us", "5000ns", in the
 * first len bytes of s (all of them: nothing may follow the unit), into
 * *ns (rounded). 0, or -1 when it is not one, negative or above 9e18 ns.
 * Zero is accepted: callers that need a positive duration check. */
int pp__parse_duration(const char *s, size_t len, int64_t *ns);

/* Format a one-line reason into err (errlen bytes, always NUL-terminated;
 * nothing when err is NULL or errlen 0). */
void pp__err_set(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Names of numbered series, "gpu3.mem_used_bytes", "cuda_mem.0.failed":
 * when name is pre followed by decimal digits, the number (below 2^31)
 * with *rest after the digits, else -1. */
long pp__name_index(const char *name, const char *pre, const char **rest);

/* Duplicate a string (NULL gives NULL). */
char *pp__strdup(const char *s);

/* pp_format_ns, pp__fmt_bytes and the other units: one formatting
 * module for every view. */
#include "units.h"

/* Give the calling thread, one of pipeprof's own (writer, sampler), its
 * name in the kernel (at most 15 bytes), so that top -H, perf and /proc
 * tell it from the host program's threads. */
void pp__name_own_thread(const char *name);

/* CRC-32C (Castagnoli) of len bytes, continuing from crc (start with 0). */
uint32_t pp__crc32c(uint32_t crc, const void *data, size_t len);
/* CPU features the library asks about (x86; 0 elsewhere). */
typedef enum pp__cpu_feature {
  PP_CPU_SSE42,        /* the CRC32 instruction */
  PP_CPU_INVARIANT_TSC /* a TSC at a constant rate in every C-state */
} pp__cpu_feature;
int pp__cpu_has(pp__cpu_feature f);
/* The two implementations pp__crc32c chooses from, for tests: the portable
 * tables, and the CPU's instruction (NULL when the CPU has none). */
typedef uint32_t (*pp__crc32c_fn)(uint32_t crc, const void *data, size_t len);
uint32_t pp__crc32c_sw(uint32_t crc, const void *data, size_t len);
pp__crc32c_fn pp__crc32c_hw(void);

#endif /* PP_INTERNAL_H */
