/* SPDX-License-Identifier: MIT */
/*
 * The HTTP endpoint of a session (docs/http.md): when PIPEPROF_HTTP or
 * pp_config.http_addr is set, load the companion libpipeprof-http (src/http/)
 * and start it; stop it before the session's live statistics go. Control path
 * (session.c, under its lock). A bad address, a missing companion or a port in
 * use cost one stderr line; the program and its profiling run on.
 */
#ifndef PP_CORE_HTTP_H
#define PP_CORE_HTTP_H

#include <stddef.h>

struct pp_http_host;

/* host: the session's figures as the companion reads them (session.c
 * fills it with the library's functions). cfg_addr: pp_config.http_addr,
 * which wins over PIPEPROF_HTTP; NULL: PIPEPROF_HTTP decides. */
void pp__http_start(const struct pp_http_host *host, const char *cfg_addr);
/* Load the companion and serve host on spec ("PORT", ":PORT",
 * "IPV4:PORT") without a word on stderr: 0, or -1 with a one-line reason
 * in err (`pipeprof serve`). */
int pp__http_serve(const struct pp_http_host *host, const char *spec, char *err,
                   size_t n);
void pp__http_stop(void);
/* The process the session's served figures are about, when not this one
 * (`pipeprof run` serves its command's samples): the endpoint names it
 * as the document's process and this one as the profiler. Until the
 * session ends; any thread. */
void pp__http_subject(long pid, const char *name);
/* The host table's subject (core/http_host.h): 0 with it, or -1 when none. */
int pp__http_subject_get(long *pid, char *name, size_t n);
/* The address spec ("PORT", ":PORT", "IPV4:PORT") names: "PORT" and
 * ":PORT" are on loopback, any other address only when given; into addr
 * (n bytes) as IPV4:PORT. */
void pp__http_full_addr(const char *spec, char *addr, size_t n);

#endif /* PP_CORE_HTTP_H */
