/* SPDX-License-Identifier: MIT */
/*
 * The live summary of `pipeprof run --http` (docs/http.md): one document
 * about the profiled program, made of the program's own summary (what it
 * recorded: zones, queues, requests, its counters and alerts; from its
 * endpoint) and the run's (the samples of its process tree and of the
 * system, the profiler). The program's members come first and win; the
 * run's counters, alerts and series histories are added to the
 * program's (the histories' times moved to count from the program's
 * start), its tables' layouts to the program's, and its members the
 * program's lacks are added as they are.
 */
#ifndef PP_HTTP_MERGE_H
#define PP_HTTP_MERGE_H

#include <stddef.h>

/* The merged document (malloc'd, *len bytes), or NULL with a one-line
 * reason in err (a summary that is not a JSON object, out of memory, a
 * build without yajl). */
char *pp_merge_run_summary(const char *program, const char *run, size_t *len,
                           char *err, size_t errlen);

#endif /* PP_HTTP_MERGE_H */
