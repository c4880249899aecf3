/* SPDX-License-Identifier: MIT */
/*
 * The one table of the library's options (docs/internals/options.md):
 * every PIPEPROF_* variable, the pp_config field it goes with, its type,
 * bounds, default and help. pp_init_from_env parses the environment
 * through it, pp_init checks a pp_config's fields against it, and
 * `pipeprof help env` prints it (as text, or as the Markdown table of
 * docs/api.md, which a test compares with the command's output).
 */
#ifndef PP_CORE_OPTIONS_H
#define PP_CORE_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../internal.h"

typedef enum pp_opt_type {
  PP_OPT_BOOL, /* 1, on, true, yes / 0, off, false, no, empty */
  PP_OPT_UINT, /* decimal digits within [lo, hi] */
  PP_OPT_POW2, /* a power of two within [lo, hi] */
  PP_OPT_ENUM, /* one of words (ASCII case ignored) */
  PP_OPT_SPEC, /* no whitespace, no control character */
  PP_OPT_NAME, /* no control character; cut at hi bytes (UTF-8 whole) */
  PP_OPT_PATH, /* byte for byte; at most hi bytes */
  PP_OPT_ADDR  /* an address the HTTP endpoint parses when it starts: an
                  invalid one costs a line and the session runs on */
} pp_opt_type;

/* When the library reads the variable. */
typedef enum pp_opt_when {
  PP_OPT_AT_LOAD,    /* pp_init_from_env (PIPEPROF=1 at load) only: a
                        program's own pp_init(cfg) takes the field */
  PP_OPT_EVERY,      /* every session: the field when set, else the
                        variable, else the default */
  PP_OPT_ONCE,       /* once per process, at the first session */
  PP_OPT_INTERNAL    /* set by pipeprof for the programs it runs */
} pp_opt_when;

typedef struct pp_option {
  const char *env;   /* "PIPEPROF_MODE" */
  const char *field; /* "mode" (pp_config), or NULL */
  pp_opt_type type;
  pp_opt_when when;
  uint64_t lo, hi;
  const char *const *words; /* PP_OPT_ENUM: NULL-terminated */
  const char *deflt;        /* the default, in words */
  const char *help;         /* one sentence */
} pp_option;

/* The table, in the order the docs list it; *n its length. */
const pp_option *pp__options(size_t *n);
/* The option of that variable, or NULL. */
const pp_option *pp__option(const char *env);

/* Check v against o's rule: 0, or -1 with what was expected in want
 * ("expected a number from 1 to 1000"). For BOOL, UINT, POW2 and ENUM,
 * *num gets the value (ENUM: the word's index). */
int pp__option_check(const pp_option *o, const char *v, uint64_t *num,
                     char *want, size_t len);
/* Check a number of a UINT or POW2 option against its bounds: 0, or -1
 * with what was expected in want (what pp_init says of a pp_config
 * field, in the variable's words). */
int pp__option_check_num(const pp_option *o, uint64_t x, char *want,
                         size_t len);
/* Check the value of variable env (unset: 0; *v NULL); one line on
 * stderr when invalid (pp__env_invalid). Variables set by pipeprof
 * (PP_OPT_INTERNAL) are not checked. */
int pp__option_env(const char *env, const char **v, uint64_t *num);

/* The table as `pipeprof help env` prints it (markdown: the table of
 * docs/api.md). */
void pp__options_print(FILE *out, int markdown);

#endif /* PP_CORE_OPTIONS_H */
