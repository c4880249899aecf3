/* SPDX-License-Identifier: MIT */
/* The runtime's last error, per thread (rt_error.h). */
#include "rt_error.h"

#include <stdarg.h>
#include <stdio.h>

#include "pipeprof/runtime.h"

static _Thread_local char last[256];

void pp__rt_set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last, sizeof last, fmt, ap);
  va_end(ap);
}

const char *pp_rt_error(void) { return last; }
