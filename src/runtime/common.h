/* SPDX-License-Identifier: MIT */
/*
 * What the runtime's parts share (pipeprof/runtime.h): the last error per
 * thread (pp_rt_error), the clock, and waits with a timeout under a
 * mutex and condition (the batcher's and the pools'; conditions made with
 * pp__rt_cond_init use CLOCK_MONOTONIC).
 */
#ifndef PP_RUNTIME_COMMON_H
#define PP_RUNTIME_COMMON_H

#include <pthread.h>
#include <stdint.h>

void pp__rt_set_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* CLOCK_MONOTONIC in ns. */
int64_t pp__rt_now_ns(void);

/* A condition variable on CLOCK_MONOTONIC. */
void pp__rt_cond_init(pthread_cond_t *c);

/* The deadline of a call's timeout_ns (>0: now + timeout_ns; else -1:
 * none). */
int64_t pp__rt_deadline(int64_t timeout_ns);

/* Whether a call that would wait must not: PP_EAGAIN for timeout_ns 0,
 * PP_ETIMEDOUT past the deadline, else 0 (wait). */
int pp__rt_no_wait(int64_t timeout_ns, int64_t deadline);

/* Wait on c (m held) until woken or abs_ns (-1: no limit). */
void pp__rt_wait(pthread_cond_t *c, pthread_mutex_t *m, int64_t abs_ns);

#endif /* PP_RUNTIME_COMMON_H */
