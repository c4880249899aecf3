/* SPDX-License-Identifier: MIT */
/*
 * The runtime's last error, per thread (pp_rt_error(), runtime.h): set by
 * a constructor that returns NULL for a reason the caller cannot see.
 */
#ifndef PP_RUNTIME_RT_ERROR_H
#define PP_RUNTIME_RT_ERROR_H

void pp__rt_set_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

#endif /* PP_RUNTIME_RT_ERROR_H */
