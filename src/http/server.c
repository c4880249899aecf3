/* SPDX-License-Identifier: MIT */
/*
 * libpipeprof-http: the HTTP endpoint of a profiled process (docs/http.md),
 * on libmicrohttpd. GET and HEAD of /metrics; anything else is refused.
 * Bounded: 16 connections (4 per client address), 16 KiB of memory per
 * connection (a larger request head is refused by the library with 431 or
 * by closing), 10 s per connection; one thread, the library's. Loaded by
 * libpipeprof only when PIPEPROF_HTTP is set (src/core/http.c).
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "metrics.h"

#define PP_HTTP_API __attribute__((visibility("default")))

static struct MHD_Daemon *daemon_;
static pp_http_host host;

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
                             const char *type, char *body, size_t len,
                             enum MHD_ResponseMemoryMode mode) {
  struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
  if (!r) {
    if (mode == MHD_RESPMEM_MUST_FREE)
      free(body);
    return MHD_NO;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
    MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  enum MHD_Result ok = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **state) {
  (void)cls;
  (void)version;
  (void)upload;
  (void)state;
  *upload_size = 0; /* a body is read and ignored */
  static const char text[] = "text/plain; charset=utf-8";
  if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
      strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
    static char msg[] = "only GET and HEAD\n";
    return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, text, msg, sizeof msg - 1,
                 MHD_RESPMEM_PERSISTENT);
  }
  if (strcmp(url, "/metrics") != 0) {
    static char msg[] = "not found: this endpoint serves /metrics\n";
    return reply(c, MHD_HTTP_NOT_FOUND, text, msg, sizeof msg - 1,
                 MHD_RESPMEM_PERSISTENT);
  }
  size_t len = 0;
  char *page = pp_metrics_page(&host, &len);
  if (!page) {
    static char msg[] = "out of memory\n";
    return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, text, msg, sizeof msg - 1,
                 MHD_RESPMEM_PERSISTENT);
  }
  return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", page,
               len, MHD_RESPMEM_MUST_FREE);
}

/* "HOST:PORT" into sa (HOST an IPv4 address). */
static int parse_addr(const char *addr, struct sockaddr_in *sa) {
  const char *colon = strrchr(addr, ':');
  char hostpart[64];
  if (!colon || (size_t)(colon - addr) >= sizeof hostpart)
    return -1;
  memcpy(hostpart, addr, (size_t)(colon - addr));
  hostpart[colon - addr] = 0;
  char *end;
  unsigned long port = strtoul(colon + 1, &end, 10);
  if (!colon[1] || *end || port > 65535)
    return -1;
  memset(sa, 0, sizeof *sa);
  sa->sin_family = AF_INET;
  sa->sin_port = htons((uint16_t)port);
  return inet_pton(AF_INET, hostpart, &sa->sin_addr) == 1 ? 0 : -1;
}

PP_HTTP_API int pp_http_start(const pp_http_host *h, const char *addr,
                              char *err, size_t errlen) {
  struct sockaddr_in sa;
  if (daemon_) {
    snprintf(err, errlen, "already serving");
    return -1;
  }
  if (!h || h->size < sizeof host || !addr || parse_addr(addr, &sa) != 0) {
    snprintf(err, errlen, "bad address '%s' (expected IPV4:PORT)",
             addr ? addr : "");
    return -1;
  }
  host = *h;
  daemon_ = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD, ntohs(sa.sin_port), NULL, NULL,
      on_request, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned)16,
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)4,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(16 * 1024),
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
  if (!daemon_) {
    snprintf(err, errlen,
             "cannot listen on %s (in use, or not an address "
             "of this machine)",
             addr);
    return -1;
  }
  return 0;
}

PP_HTTP_API void pp_http_stop(void) {
  if (daemon_)
    MHD_stop_daemon(daemon_);
  daemon_ = NULL;
}
