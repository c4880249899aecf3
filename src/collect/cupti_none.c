/* SPDX-License-Identifier: MIT */
/*
 * CUPTI activity tracing for builds without the CUDA toolkit's CUPTI
 * headers (CMake compiles this file instead of cupti.c): every start fails
 * with the reason, so `--cuda` and PIPEPROF_CUDA=1 report "unavailable:
 * built without CUPTI headers" and the program runs on.
 */
#include <stdio.h>

#include "collect/cupti.h"

int pp__cupti_start(char *why, size_t len) {
  snprintf(why, len, "built without CUPTI headers");
  return -1;
}

int pp__cupti_running(void) { return 0; }

const char *pp__cupti_info(const char *key) {
  (void)key;
  return "";
}

void pp__cupti_flush(int forced) { (void)forced; }

void pp__cupti_take(ppt_buf *out) { (void)out; }

void pp__cupti_stop(void) {}

void pp__cupti_after_fork_child(void) {}
