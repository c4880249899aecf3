/* SPDX-License-Identifier: MIT */
/*
 * Admission for the HTTP endpoint: the table of open connections, the
 * choice of the one that gives way, and the Host names answered
 * (guard.h).
 *
 * A connection that gives way is shut down (shutdown(2)), not closed:
 * libmicrohttpd owns the descriptor, sees the end of its stream and
 * closes the connection itself. The table's lock is held from the
 * connection's start to its close notification, which libmicrohttpd
 * sends before it closes the descriptor, so a descriptor in the table is
 * always still the connection's and never one the program has since
 * reused.
 */
#include "guard.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../core/env.h"
#include "internal.h"

typedef struct slot {
  int used;
  int displaced; /* shut down, its close not yet notified */
  int busy;      /* a request arrived and is not yet answered */
  int answered;  /* a request was answered */
  int fd;
  int64_t opened_ns; /* CLOCK_MONOTONIC */
} slot;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static slot slots[PP_GUARD_CONNECTIONS];
static pp_metrics_server counts;

#define MAX_HOSTS 16
#define MAX_HOST_LEN 253
static char hosts[MAX_HOSTS][MAX_HOST_LEN + 1];
static int n_hosts, any_host;

/* One PIPEPROF_HTTP_HOSTS entry of n bytes at s: "*", a name, or ".name"
 * (the name and every name under it). */
static int host_entry(const char *s, size_t n, char *err, size_t errlen) {
  if (n == 1 && s[0] == '*') {
    any_host = 1;
    return 0;
  }
  int ok = n > 0 && n <= MAX_HOST_LEN && n_hosts < MAX_HOSTS;
  for (size_t i = 0; ok && i < n; i++)
    ok = isalnum((unsigned char)s[i]) || s[i] == '-' || s[i] == '.';
  if (!ok) {
    char entry[80], shown[80];
    snprintf(entry, sizeof entry, "%.*s", (int)(n < 79 ? n : 79), s);
    pp__env_escape(shown, sizeof shown, entry);
    if (n_hosts >= MAX_HOSTS)
      snprintf(err, errlen, "PIPEPROF_HTTP_HOSTS: more than %d names",
               MAX_HOSTS);
    else
      snprintf(err, errlen,
               "PIPEPROF_HTTP_HOSTS: bad name \"%s\" (expected names of "
               "letters, digits, '-' and '.', comma-separated, or *)",
               shown);
    return -1;
  }
  for (size_t i = 0; i < n; i++)
    hosts[n_hosts][i] = (char)tolower((unsigned char)s[i]);
  hosts[n_hosts][n] = '\0';
  n_hosts++;
  return 0;
}

int pp_guard_init(char *err, size_t errlen) {
  pthread_mutex_lock(&lock);
  memset(slots, 0, sizeof slots);
  memset(&counts, 0, sizeof counts);
  pthread_mutex_unlock(&lock);
  n_hosts = any_host = 0;
  const char *v = getenv("PIPEPROF_HTTP_HOSTS");
  if (!v)
    return 0;
  while (*v) {
    const char *comma = strchr(v, ',');
    size_t n = comma ? (size_t)(comma - v) : strlen(v);
    if (host_entry(v, n, err, errlen) != 0)
      return -1;
    v += n + (comma != NULL);
  }
  return 0;
}

void pp_guard_make_room(void) {
  pthread_mutex_lock(&lock);
  unsigned live = 0;
  for (unsigned i = 0; i < PP_GUARD_CONNECTIONS; i++)
    live += slots[i].used && !slots[i].displaced;
  int64_t before = pp__mono_ns() - (int64_t)PP_GUARD_GRACE_MS * 1000000;
  for (unsigned i = 0; live >= PP_GUARD_KEEP && i < PP_GUARD_CONNECTIONS; i++) {
    slot *s = &slots[i];
    if (s->used && !s->displaced && !s->busy && !s->answered &&
        s->opened_ns <= before) {
      shutdown(s->fd, SHUT_RDWR);
      s->displaced = 1;
      counts.displaced++;
    }
  }
  pthread_mutex_unlock(&lock);
}

void pp_guard_connection(void *cls, struct MHD_Connection *c,
                         void **socket_context,
                         enum MHD_ConnectionNotificationCode code) {
  (void)cls;
  pthread_mutex_lock(&lock);
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    const union MHD_ConnectionInfo *fd =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    *socket_context = NULL;
    for (unsigned i = 0; fd && i < PP_GUARD_CONNECTIONS; i++)
      if (!slots[i].used) {
        slots[i] =
            (slot){.used = 1, .fd = fd->connect_fd, .opened_ns = pp__mono_ns()};
        *socket_context = &slots[i];
        break;
      }
  } else if (*socket_context) {
    ((slot *)*socket_context)->used = 0;
    *socket_context = NULL;
  }
  pthread_mutex_unlock(&lock);
}

static slot *slot_of(struct MHD_Connection *c) {
  const union MHD_ConnectionInfo *i =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return i ? i->socket_context : NULL;
}

void pp_guard_request(struct MHD_Connection *c) {
  pthread_mutex_lock(&lock);
  slot *s = slot_of(c);
  if (s)
    s->busy = 1;
  pthread_mutex_unlock(&lock);
}

void pp_guard_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                        enum MHD_RequestTerminationCode toe) {
  (void)cls;
  (void)req_cls;
  (void)toe;
  pthread_mutex_lock(&lock);
  slot *s = slot_of(c);
  if (s) {
    s->busy = 0;
    s->answered = 1;
  }
  pthread_mutex_unlock(&lock);
}

/* Whether name (n bytes, lower case) is allowed by the list. */
static int listed(const char *name, size_t n) {
  for (int i = 0; i < n_hosts; i++) {
    const char *h = hosts[i];
    size_t k = strlen(h);
    if (h[0] == '.' && (n + 1 == k ? memcmp(name, h + 1, n) == 0
                                   : n > k && memcmp(name + n - k, h, k) == 0))
      return 1;
    if (h[0] != '.' && n == k && memcmp(name, h, n) == 0)
      return 1;
  }
  return 0;
}

static int host_allowed(const char *host) {
  if (!host || any_host)
    return 1;
  char name[MAX_HOST_LEN + 2];
  size_t n = strlen(host);
  if (host[0] == '[') { /* [IPv6]:port */
    const char *end = strchr(host, ']');
    struct in6_addr a6;
    if (!end || (end[1] && end[1] != ':') ||
        (size_t)(end - host - 1) >= sizeof name)
      return 0;
    memcpy(name, host + 1, (size_t)(end - host - 1));
    name[end - host - 1] = '\0';
    return inet_pton(AF_INET6, name, &a6) == 1;
  }
  const char *colon = strchr(host, ':');
  if (colon) {
    if (strchr(colon + 1, ':'))
      return 0;
    n = (size_t)(colon - host);
  }
  if (n == 0 || n > MAX_HOST_LEN + 1)
    return 0;
  for (size_t i = 0; i < n; i++)
    name[i] = (char)tolower((unsigned char)host[i]);
  if (name[n - 1] == '.') /* the root's dot */
    n--;
  name[n] = '\0';
  struct in_addr a4;
  if (n == 0)
    return 0;
  if (inet_pton(AF_INET, name, &a4) == 1 || strcmp(name, "localhost") == 0)
    return 1;
  static const char local[] = ".localhost";
  if (n > sizeof local - 1 && strcmp(name + n - (sizeof local - 1), local) == 0)
    return 1;
  return listed(name, n);
}

int pp_guard_host_ok(const char *host) {
  if (host_allowed(host))
    return 1;
  pthread_mutex_lock(&lock);
  counts.refused_host++;
  pthread_mutex_unlock(&lock);
  return 0;
}

void pp_guard_counts(pp_metrics_server *out) {
  pthread_mutex_lock(&lock);
  *out = counts;
  pthread_mutex_unlock(&lock);
}
