/* SPDX-License-Identifier: MIT */
/*
 * Compile-time version of the pipeprof headers. Compare with
 * pp_version_number() at run time to check that the header and the library
 * a program was linked against agree.
 */
#ifndef PP_VERSION_H
#define PP_VERSION_H

#define PP_VERSION_MAJOR 0
#define PP_VERSION_MINOR 1
#define PP_VERSION_PATCH 0

/* Comparable number: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define PP_VERSION_NUMBER \
  (PP_VERSION_MAJOR * 10000 + PP_VERSION_MINOR * 100 + PP_VERSION_PATCH)

#define PP__STR2(x) #x
#define PP__STR(x) PP__STR2(x)
#define PP_VERSION_STRING                                                  \
  PP__STR(PP_VERSION_MAJOR) "." PP__STR(PP_VERSION_MINOR) "." PP__STR(     \
      PP_VERSION_PATCH)

#endif /* PP_VERSION_H */
