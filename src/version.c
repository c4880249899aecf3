/* SPDX-License-Identifier: MIT */
/*
 * Version getters and status code strings, generated from the one
 * PP_STATUS_MAP list in the public header.
 */
#include "pipeprof.h"

unsigned pp_version_number(void) { return PP_VERSION_NUMBER; }

const char *pp_version_string(void) { return PP_VERSION_STRING; }

const char *pp_strerror(int status) {
  switch (status) {
#define PP__STATUS_TEXT(name, value, text)                                  \
  case value:                                                               \
    return text;
    PP_STATUS_MAP(PP__STATUS_TEXT)
#undef PP__STATUS_TEXT
  }
  return "unknown error";
}

const char *pp_err_name(int status) {
  switch (status) {
#define PP__STATUS_NAME(name, value, text)                                  \
  case value:                                                               \
    return "PP_" #name;
    PP_STATUS_MAP(PP__STATUS_NAME)
#undef PP__STATUS_NAME
  }
  return "PP_UNKNOWN";
}
