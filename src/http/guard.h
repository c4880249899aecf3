/* SPDX-License-Identifier: MIT */
/*
 * Admission for the HTTP endpoint (docs/http.md "What the server
 * accepts"): which connections it keeps when clients hold more than it
 * will serve, and which Host names it answers. Plain libmicrohttpd
 * callbacks and a table of the open connections; server.c installs them.
 *
 * Connections: at most PP_GUARD_CONNECTIONS open; more wait in the
 * kernel's listen queue (libmicrohttpd stops accepting at its limit).
 * While PP_GUARD_KEEP or more are open, every connection that has not
 * sent a whole request in the PP_GUARD_GRACE_MS since it opened (a slow
 * or idle client that has asked nothing: what a slowloris holds) is shut
 * down by pp_guard_make_room, which the server calls every
 * PP_GUARD_TICK_MS (its stream ticker, server.c), making room
 * for the clients queued behind it. The grace bounds the churn: at most
 * PP_GUARD_CONNECTIONS connections displaced per PP_GUARD_GRACE_MS. A
 * connection that has been answered, or is being answered, keeps its place
 * until the idle timeout: a scraper that keeps its connection open (Prometheus
 * does) is never displaced by new clients.
 *
 * Host names: a browser page from another site can reach a loopback
 * endpoint through DNS rebinding, naming its own host in the Host header.
 * The endpoint answers a Host that is an IP address, "localhost" or a
 * name under ".localhost", or a name listed in PIPEPROF_HTTP_HOSTS
 * (comma-separated; "*" for any); a request without Host (HTTP/1.0) is
 * answered; any other gets 403.
 */
#ifndef PP_HTTP_GUARD_H
#define PP_HTTP_GUARD_H

#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics.h"

#define PP_GUARD_CONNECTIONS 64u
#define PP_GUARD_KEEP 48u
#define PP_GUARD_GRACE_MS 200
#define PP_GUARD_TICK_MS 50

/* Resets the table and reads PIPEPROF_HTTP_HOSTS: 0, or -1 with a
 * one-line err naming the bad entry. */
int pp_guard_init(char *err, size_t errlen);

/* Shuts down every connection that gives way, when the endpoint is
 * crowded (PP_GUARD_KEEP or more open). */
void pp_guard_make_room(void);

/* MHD_OPTION_NOTIFY_CONNECTION: a connection opened or closed. */
void pp_guard_connection(void *cls, struct MHD_Connection *c,
                         void **socket_context,
                         enum MHD_ConnectionNotificationCode code);

/* A whole request arrived on c (the request handler's first call). */
void pp_guard_request(struct MHD_Connection *c);

/* MHD_OPTION_NOTIFY_COMPLETED: the request on c was answered or ended. */
void pp_guard_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                        enum MHD_RequestTerminationCode toe);

/* Whether the request's Host header (NULL when none) is answered; when
 * not, it is counted. */
int pp_guard_host_ok(const char *host);

/* What the guard did since pp_guard_init, for /metrics. */
void pp_guard_counts(pp_metrics_server *out);

#endif /* PP_HTTP_GUARD_H */
