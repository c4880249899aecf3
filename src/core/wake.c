/* SPDX-License-Identifier: MIT */
/*
 * The writer's wake-up word (wake.h).
 */
#include "wake.h"

#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Atomic uint32_t word;
/* 1: a wake is pending, or no writer listens (the start state) */
static _Atomic int pending = 1;

void pp__wake_writer(void) {
  if (atomic_load_explicit(&pending, memory_order_relaxed) ||
      atomic_exchange(&pending, 1))
    return;
  pp__wake_force();
}

uint32_t pp__wake_rearm(void) {
  atomic_store(&pending, 0);
  return atomic_load(&word);
}

uint32_t pp__wake_word(void) { return atomic_load(&word); }

void pp__wake_wait(uint32_t seen, unsigned ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
}

void pp__wake_force(void) {
  atomic_fetch_add(&word, 1);
  syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void pp__wake_close(void) { atomic_store(&pending, 1); }
