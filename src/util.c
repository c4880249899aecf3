/* SPDX-License-Identifier: MIT */
/*
 * Small utilities shared by the library and the tools: array growth, string
 * duplication, naming pipeprof's own threads, and the CRC-32C that
 * checksums trace chunks.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "internal.h"

void pp__err_set(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || !errlen)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

int pp__parse_duration(const char *s, size_t len, int64_t *ns) {
  char num[64];
  size_t i = 0;
  while (i < len && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
    i++;
  if (i == 0 || i >= sizeof num)
    return -1;
  memcpy(num, s, i);
  num[i] = '\0';
  char *end;
  double x = strtod(num, &end);
  if (*end || !isfinite(x) || x < 0)
    return -1;
  const char *u = s + i;
  size_t ul = len - i;
  double mul;
  if (ul == 2 && memcmp(u, "ns", 2) == 0)
    mul = 1;
  else if (ul == 2 && memcmp(u, "us", 2) == 0)
    mul = 1e3;
  else if (ul == 2 && memcmp(u, "ms", 2) == 0)
    mul = 1e6;
  else if (ul == 1 && u[0] == 's')
    mul = 1e9;
  else
    return -1;
  if (x * mul > 9e18)
    return -1;
  *ns = (int64_t)llround(x * mul);
  return 0;
}

int pp__grow(void **arr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return 0;
  size_t ncap = *cap ? *cap : 16;
  while (ncap < need) {
    if (ncap > SIZE_MAX / 2 / elem)
      return -1;
    ncap *= 2;
  }
  void *p = pp__realloc(*arr, ncap * elem);
  if (!p)
    return -1;
  *arr = p;
  *cap = ncap;
  return 0;
}

long pp__name_index(const char *name, const char *pre, const char **rest) {
  size_t n = strlen(pre);
  if (!name || strncmp(name, pre, n) != 0)
    return -1;
  const char *p = name + n;
  long v = 0;
  if (*p < '0' || *p > '9')
    return -1;
  for (; *p >= '0' && *p <= '9'; p++) {
    int d = *p - '0';
    if (v > (INT32_MAX - d) / 10)
      return -1;
    v = v * 10 + d;
  }
  *rest = p;
  return v;
}

void pp__name_own_thread(const char *name) {
  (void)prctl(PR_SET_NAME, name, 0, 0, 0); /* best effort */
}

char *pp__strdup(const char *s) {
  if (!s)
    return NULL;
  size_t n = strlen(s) + 1;
  char *d = pp__malloc(n);
  if (d)
    memcpy(d, s, n);
  return d;
}

/* Slicing-by-4 tables for the reflected Castagnoli polynomial. */
static uint32_t crc_table[4][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++)
      c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    crc_table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = crc_table[0][i];
    for (int t = 1; t < 4; t++) {
      c = crc_table[0][c & 0xff] ^ (c >> 8);
      crc_table[t][i] = c;
    }
  }
}

uint32_t pp__crc32c_sw(uint32_t crc, const void *data, size_t len) {
  pthread_once(&crc_once, crc_init);
  const unsigned char *p = data;
  crc = ~crc;
  while (len >= 4) {
    uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
                 (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    crc ^= w;
    crc = crc_table[3][crc & 0xff] ^ crc_table[2][(crc >> 8) & 0xff] ^
          crc_table[1][(crc >> 16) & 0xff] ^ crc_table[0][crc >> 24];
    p += 4;
    len -= 4;
  }
  while (len--)
    crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return ~crc;
}

/* SSE4.2 has a CRC32C instruction (9.4 GB/s here against 1.4 for the
 * tables): the writer checksums every chunk it writes, and the tables were
 * 4% of its time at full load (trace writer 70 -> 83 M events/s). */
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#if defined(__GLIBC__) && defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h> /* glibc 2.33 */
#define PP__GLIBC_CPU_FEATURES 1
#endif
#endif

/* glibc ran CPUID when the process started and answers from what it
 * stored; executing CPUID again costs about 14 us on the development VM (a
 * VM exit each), in every profiled process. Without glibc's interface, one
 * CPUID per question. */
int pp__cpu_has(pp__cpu_feature f) {
#ifdef PP__GLIBC_CPU_FEATURES
  if (f == PP_CPU_SSE42)
    return CPU_FEATURE_ACTIVE(SSE4_2) != 0;
  return CPU_FEATURE_PRESENT(INVARIANT_TSC) != 0; /* never "active" */
#else
  unsigned a, b, c, d;
  if (f == PP_CPU_SSE42) {
    __cpuid(1, a, b, c, d); /* every x86-64 CPU has leaf 1 */
    return (c & bit_SSE4_2) != 0;
  }
  if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
    return 0;
  __get_cpuid(0x80000007u, &a, &b, &c, &d);
  return (d >> 8) & 1;
#endif
}
#else
int pp__cpu_has(pp__cpu_feature f) {
  (void)f;
  return 0;
}
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

/* The instruction takes 3 cycles and can start one each cycle, so one
 * stream of data runs at a third of what the unit can do. crc32c_sse42
 * runs three streams of CRC_BLK bytes side by side and joins them: the
 * CRC of A followed by B is the CRC of A moved past |B| zero bytes, xor
 * the CRC of B from 0 (registers without the inversions). Moving a CRC
 * past n zero bytes is linear in its 32 bits: shift_tab holds it for n
 * = CRC_BLK and 2 * CRC_BLK, a byte of the register at a time. */
#define CRC_BLK 1024u

static uint32_t shift_tab[2][4][256];
static pthread_once_t shift_once = PTHREAD_ONCE_INIT;

__attribute__((target("sse4.2"))) static uint32_t crc_zeros(uint32_t c,
                                                            size_t n) {
  uint64_t v = c;
  for (size_t i = 0; i < n / 8; i++)
    v = __builtin_ia32_crc32di(v, 0);
  return (uint32_t)v;
}

static void shift_init(void) {
  for (int t = 0; t < 2; t++) {
    uint32_t bit[32];
    for (int j = 0; j < 32; j++)
      bit[j] = crc_zeros(UINT32_C(1) << j, (size_t)(t + 1) * CRC_BLK);
    for (int k = 0; k < 4; k++)
      for (unsigned b = 0; b < 256; b++) {
        uint32_t v = 0;
        for (int i = 0; i < 8; i++)
          if (b >> i & 1)
            v ^= bit[8 * k + i];
        shift_tab[t][k][b] = v;
      }
  }
}

static inline uint32_t crc_shift(int t, uint32_t c) {
  return shift_tab[t][0][c & 0xff] ^ shift_tab[t][1][(c >> 8) & 0xff] ^
         shift_tab[t][2][(c >> 16) & 0xff] ^ shift_tab[t][3][c >> 24];
}

__attribute__((target("sse4.2"))) static uint32_t
crc32c_sse42(uint32_t crc, const void *data, size_t len) {
  const unsigned char *p = data;
  uint64_t c = ~crc;
  while (len && ((uintptr_t)p & 7)) {
    c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    len--;
  }
  if (len >= 3 * CRC_BLK)
    pthread_once(&shift_once, shift_init);
  while (len >= 3 * CRC_BLK) {
    uint64_t c1 = 0, c2 = 0;
    for (size_t i = 0; i < CRC_BLK; i += 8) {
      uint64_t w0, w1, w2;
      memcpy(&w0, p + i, 8);
      memcpy(&w1, p + CRC_BLK + i, 8);
      memcpy(&w2, p + 2 * CRC_BLK + i, 8);
      c = __builtin_ia32_crc32di(c, w0);
      c1 = __builtin_ia32_crc32di(c1, w1);
      c2 = __builtin_ia32_crc32di(c2, w2);
    }
    c = crc_shift(1, (uint32_t)c) ^ crc_shift(0, (uint32_t)c1) ^ (uint32_t)c2;
    p += 3 * CRC_BLK;
    len -= 3 * CRC_BLK;
  }
  while (len >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    c = __builtin_ia32_crc32di(c, w);
    p += 8;
    len -= 8;
  }
  while (len--)
    c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
  return ~(uint32_t)c;
}

/* Asked on the first checksum (pp__cpu_has): __builtin_cpu_supports would
 * link libgcc's CPU model constructor, which runs a dozen CPUIDs in every
 * process that loads the library. */
pp__crc32c_fn pp__crc32c_hw(void) {
  return pp__cpu_has(PP_CPU_SSE42) ? crc32c_sse42 : NULL;
}
#else
pp__crc32c_fn pp__crc32c_hw(void) { return NULL; }
#endif

static pp__crc32c_fn crc_impl;
static pthread_once_t impl_once = PTHREAD_ONCE_INIT;

static void pick_crc(void) {
  crc_impl = pp__crc32c_hw();
  if (!crc_impl)
    crc_impl = pp__crc32c_sw;
}

uint32_t pp__crc32c(uint32_t crc, const void *data, size_t len) {
  pthread_once(&impl_once, pick_crc);
  return crc_impl(crc, data, len);
}

