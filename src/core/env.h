/* SPDX-License-Identifier: MIT */
/*
 * Parsing of PIPEPROF_* environment values: one rule for all of them.
 *
 * A value is taken exactly as written; nothing is trimmed.
 *   - booleans: 1, on, true, yes / 0, off, false, no, and the empty value
 *     (off); keywords match without regard to ASCII case;
 *   - numbers: decimal digits only, within a stated range: no sign, no
 *     whitespace, no "0x", no unit;
 *   - keywords (enums): one of a list, without regard to ASCII case;
 *   - specs (PIPEPROF_LIVE, PIPEPROF_ALERTS): no whitespace and no control
 *     character anywhere;
 *   - names (PIPEPROF_PROCESS_NAME): no control character; longer than
 *     the cap, cut at a UTF-8 character boundary;
 *   - paths: used byte for byte; longer than the cap is invalid.
 * An invalid value prints one line on stderr, with the value escaped
 * (control characters as \n, \t, \xNN; long values cut with "..."), and
 * leaves profiling off.
 *
 * No state, no allocation: usable from any thread and from fuzz targets.
 */
#ifndef PP_CORE_ENV_H
#define PP_CORE_ENV_H

#include <stddef.h>
#include <stdint.h>

/* 0 and *out set, or -1. */
int pp__env_bool(const char *v, int *out);
int pp__env_uint(const char *v, uint64_t lo, uint64_t hi, uint64_t *out);
/* Index of v in names[0..n) (ASCII case-insensitive) or -1. */
int pp__env_enum(const char *v, const char *const *names, size_t n);
/* 0 when v holds no whitespace and no control character, else -1. */
int pp__env_spec(const char *v);
/* 0 when v holds no control character (bytes 0x01..0x1f, 0x7f), else -1. */
int pp__env_name(const char *v);
/* Copy at most cap - 1 bytes of v into dst (cap >= 1), cut before a
 * UTF-8 character that would not fit whole; always NUL-terminated.
 * Returns the bytes copied. */
size_t pp__env_cut_utf8(char *dst, size_t cap, const char *v);
/* v printable in one line: '"' and '\\' escaped, control characters and
 * bytes >= 0x80 that are not part of valid UTF-8 as \n \r \t or \xNN; at
 * most cap - 1 bytes, ending in "..." when v did not fit. cap >= 8. */
void pp__env_escape(char *dst, size_t cap, const char *v);
/* "pipeprof: invalid NAME="VALUE": EXPECTED; profiling is off" on stderr,
 * one line, VALUE escaped. */
void pp__env_invalid(const char *name, const char *v, const char *expected);

#endif /* PP_CORE_ENV_H */
