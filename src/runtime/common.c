/* SPDX-License-Identifier: MIT */
/* What the runtime's parts share (common.h). */
#include "common.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "pipeprof/runtime.h"

static _Thread_local char last[256];

void pp__rt_set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last, sizeof last, fmt, ap);
  va_end(ap);
}

const char *pp_rt_error(void) { return last; }

int64_t pp__rt_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void pp__rt_cond_init(pthread_cond_t *c) {
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(c, &ca);
  pthread_condattr_destroy(&ca);
}

int64_t pp__rt_deadline(int64_t timeout_ns) {
  return timeout_ns > 0 ? pp__rt_now_ns() + timeout_ns : -1;
}

int pp__rt_no_wait(int64_t timeout_ns, int64_t deadline) {
  if (timeout_ns == 0)
    return PP_EAGAIN;
  if (deadline >= 0 && pp__rt_now_ns() >= deadline)
    return PP_ETIMEDOUT;
  return 0;
}

void pp__rt_wait(pthread_cond_t *c, pthread_mutex_t *m, int64_t abs_ns) {
  if (abs_ns < 0) {
    pthread_cond_wait(c, m);
    return;
  }
  struct timespec ts = {(time_t)(abs_ns / 1000000000),
                        (long)(abs_ns % 1000000000)};
  pthread_cond_timedwait(c, m, &ts);
}
