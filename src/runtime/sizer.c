/* SPDX-License-Identifier: MIT */
/*
 * The adaptive batch sizer (pipeprof/runtime.h, docs/runtime.md):
 * additive increase, multiplicative decrease of the batch size on each
 * window's p99 latency against the objective; out of memory halves the
 * size and caps it below the size that failed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "pipeprof/runtime.h"

struct pp_rt_sizer {
  pthread_mutex_t m;
  size_t min, max, cap, size; /* cap: below the smallest size that OOM'd */
  int64_t slo;
  unsigned window, n;
  int64_t *lat; /* the window's latencies */
  char size_name[80], p99_name[80];
};

pp_rt_sizer *pp_rt_sizer_new(const char *name, size_t min_batch,
                             size_t max_batch, int64_t slo_p99_ns,
                             unsigned window) {
  if (min_batch < 1 || min_batch > max_batch || max_batch > 65536 ||
      slo_p99_ns <= 0 || window < 1 || window > 4096)
    return NULL;
  pp_rt_sizer *s = calloc(1, sizeof *s);
  if (!s || !(s->lat = malloc(window * sizeof *s->lat))) {
    free(s);
    return NULL;
  }
  pthread_mutex_init(&s->m, NULL);
  s->min = min_batch;
  s->max = s->cap = max_batch;
  s->size = min_batch;
  s->slo = slo_p99_ns;
  s->window = window;
  const char *nm = name ? name : "batch";
  snprintf(s->size_name, sizeof s->size_name, "%.60s batch size", nm);
  snprintf(s->p99_name, sizeof s->p99_name, "%.60s p99", nm);
  pp_counter_set(s->size_name, (int64_t)s->size);
  return s;
}

size_t pp_rt_sizer_size(pp_rt_sizer *s) {
  if (!s)
    return 1;
  pthread_mutex_lock(&s->m);
  size_t n = s->size;
  pthread_mutex_unlock(&s->m);
  return n;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void set_size(pp_rt_sizer *s, size_t n) {
  if (n < s->min)
    n = s->min;
  if (n > s->cap)
    n = s->cap;
  if (n != s->size) {
    s->size = n;
    pp_counter_set(s->size_name, (int64_t)n);
  }
}

size_t pp_rt_sizer_observe(pp_rt_sizer *s, int64_t latency_ns) {
  if (!s)
    return 1;
  pthread_mutex_lock(&s->m);
  s->lat[s->n++] = latency_ns;
  if (s->n == s->window) {
    /* nearest rank: the ceil(0.99 n)-th smallest */
    qsort(s->lat, s->n, sizeof *s->lat, cmp_i64);
    size_t k = (99 * (size_t)s->n + 99) / 100;
    int64_t p99 = s->lat[k ? k - 1 : 0];
    pp_counter_set(s->p99_name, p99);
    if (p99 > s->slo)
      set_size(s, s->size / 2);
    else if (p99 < s->slo / 10 * 8)
      set_size(s, s->size + 1);
    s->n = 0;
  }
  size_t n = s->size;
  pthread_mutex_unlock(&s->m);
  return n;
}

size_t pp_rt_sizer_oom(pp_rt_sizer *s) {
  if (!s)
    return 1;
  pthread_mutex_lock(&s->m);
  if (s->size > s->min) {
    if (s->size - 1 < s->cap)
      s->cap = s->size - 1;
    set_size(s, s->size / 2);
  }
  s->n = 0; /* the window before the failure says nothing of the new size */
  size_t n = s->size;
  pthread_mutex_unlock(&s->m);
  return n;
}

void pp_rt_sizer_free(pp_rt_sizer *s) {
  if (!s)
    return;
  pthread_mutex_destroy(&s->m);
  free(s->lat);
  free(s);
}
