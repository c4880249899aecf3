/* SPDX-License-Identifier: MIT */
/*
 * How producers wake the session's writer (wake.c): a futex word the
 * writer sleeps on, and a flag so that producers make one system call per
 * writer sleep, not one per event of a full ring. Below both the recorder
 * (producers) and the session (the writer), which share it.
 *
 * Threads: pp__wake_writer from any recording thread; the rest from the
 * session's control path and writer thread.
 */
#ifndef PP_CORE_WAKE_H
#define PP_CORE_WAKE_H

#include <stdint.h>

/* A ring passed half full or is full: wake the writer unless a wake is
 * already pending (or no writer listens: see pp__wake_close). */
void pp__wake_writer(void);
/* Writer, before each pass: take wake-ups again and return the word; a
 * producer that asks during the pass changes it, and pp__wake_wait on the
 * returned value then comes back at once. */
uint32_t pp__wake_rearm(void);
/* The word as it is now (the writer's first wait). */
uint32_t pp__wake_word(void);
/* Sleep up to ms while the word still equals seen. */
void pp__wake_wait(uint32_t seen, unsigned ms);
/* Wake the writer whatever is pending (stop, flush, signal handler:
 * async-signal-safe). */
void pp__wake_force(void);
/* No writer listens any more: producers stop making system calls until the
 * next writer's first pp__wake_rearm. */
void pp__wake_close(void);

#endif /* PP_CORE_WAKE_H */
