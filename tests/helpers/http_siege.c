/* SPDX-License-Identifier: MIT */
/*
 * pipeprof-test-http-siege: hostile clients of an HTTP endpoint on
 * loopback, for tests/test-http.c and bench/http/load.sh (docs/http.md
 * "What the server accepts").
 *
 *   pipeprof-test-http-siege PORT [--slow N] [--drip-ms MS] [--flood N]
 *                            [--seconds S] [--path PATH]
 *
 * --slow N: N connections that each send a request head one byte every
 * MS milliseconds (1000 by default) and never finish it (a slowloris);
 * one the server closes is opened again at once. --flood N: N
 * connections that each send a whole GET of PATH (/metrics by default)
 * with "Connection: close", read the reply to its end and start again at
 * once. After S seconds (10 by default), or at SIGTERM or SIGINT, it
 * prints one JSON line of counts and exits 0; 2 on bad arguments. One
 * thread, epoll.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct conn {
  int fd;
  int slow;
  int connected;
  size_t sent;     /* bytes of the request sent */
  int64_t next_ns; /* a slow one's next byte; a refused one's retry */
  char head[16];   /* the first bytes of the reply */
  size_t got;
} conn;

static struct sockaddr_in target;
static char request[512];
static size_t request_len;
static int ep;
static int64_t drip_ns = 1000000000;

static struct {
  uint64_t slow_opened, slow_closed, flood_sent, flood_ok, flood_other,
      flood_cut, refused;
} n;

static volatile sig_atomic_t stop;
static void on_term(int sig) {
  (void)sig;
  stop = 1;
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void dial(conn *c) {
  c->connected = 0;
  c->sent = c->got = 0;
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd < 0) {
    c->next_ns = now_ns() + 10000000;
    return;
  }
  if (connect(c->fd, (struct sockaddr *)&target, sizeof target) != 0 &&
      errno != EINPROGRESS) {
    close(c->fd);
    c->fd = -1;
    n.refused++;
    c->next_ns = now_ns() + 10000000;
    return;
  }
  struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP,
                           .data.ptr = c};
  epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
  c->next_ns = now_ns();
  if (c->slow)
    n.slow_opened++;
}

static void hang_up(conn *c) {
  if (c->fd >= 0)
    close(c->fd);
  c->fd = -1;
}

/* A slow one sends its next byte: the request's head without its end,
 * then header bytes forever. */
static void drip(conn *c) {
  char b = c->sent < request_len - 4 ? request[c->sent] : 'a';
  if (send(c->fd, &b, 1, MSG_NOSIGNAL) == 1)
    c->sent++;
  c->next_ns = now_ns() + drip_ns;
}

static void on_event(conn *c, uint32_t ev) {
  if (!c->connected && (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err) {
      n.refused++;
      hang_up(c);
      c->next_ns = now_ns() + 10000000;
      return;
    }
    c->connected = 1;
    struct epoll_event e = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e);
    if (c->slow) {
      drip(c);
    } else {
      ssize_t k = send(c->fd, request, request_len, MSG_NOSIGNAL);
      if (k == (ssize_t)request_len)
        n.flood_sent++;
    }
  }
  if (!(ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
    return;
  char buf[65536];
  for (;;) {
    ssize_t k = recv(c->fd, buf, sizeof buf, 0);
    if (k > 0) {
      size_t take = (size_t)k < sizeof c->head - c->got
                        ? (size_t)k
                        : sizeof c->head - c->got;
      memcpy(c->head + c->got, buf, take);
      c->got += take;
      continue;
    }
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return;
    break; /* the end, or an error */
  }
  if (c->slow)
    n.slow_closed++;
  else if (c->got >= 12 && memcmp(c->head, "HTTP/1.1 200", 12) == 0)
    n.flood_ok++;
  else if (c->got)
    n.flood_other++;
  else
    n.flood_cut++;
  hang_up(c);
  dial(c);
}

static long arg_num(const char *s, long lo, long hi) {
  char *end;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > hi) {
    fprintf(stderr, "http-siege: bad number '%s'\n", s);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr,
            "usage: %s PORT [--slow N] [--drip-ms MS] [--flood N] "
            "[--seconds S] [--path PATH]\n",
            argv[0]);
    return 2;
  }
  long port = arg_num(argv[1], 1, 65535), slow = 0, flood = 0, secs = 10;
  const char *path = "/metrics";
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--slow"))
      slow = arg_num(argv[i + 1], 0, 100000);
    else if (!strcmp(argv[i], "--flood"))
      flood = arg_num(argv[i + 1], 0, 100000);
    else if (!strcmp(argv[i], "--drip-ms"))
      drip_ns = arg_num(argv[i + 1], 1, 60000) * 1000000;
    else if (!strcmp(argv[i], "--seconds"))
      secs = arg_num(argv[i + 1], 1, 86400);
    else if (!strcmp(argv[i], "--path") && argv[i + 1][0] == '/' &&
             strlen(argv[i + 1]) < 256)
      path = argv[i + 1];
    else {
      fprintf(stderr, "http-siege: bad argument '%s'\n", argv[i]);
      return 2;
    }
  }
  /* a descriptor per client and some */
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
      rl.rlim_cur < (rlim_t)(slow + flood + 64)) {
    rl.rlim_cur = rl.rlim_max < (rlim_t)(slow + flood + 64)
                      ? rl.rlim_max
                      : (rlim_t)(slow + flood + 64);
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  target.sin_family = AF_INET;
  target.sin_port = htons((uint16_t)port);
  target.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  request_len = (size_t)snprintf(request, sizeof request,
                                 "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                 "Connection: close\r\n\r\n",
                                 path);
  ep = epoll_create1(EPOLL_CLOEXEC);
  size_t total = (size_t)(slow + flood);
  conn *cs = calloc(total ? total : 1, sizeof *cs);
  if (ep < 0 || !cs)
    return 1;
  for (size_t i = 0; i < total; i++) {
    cs[i].slow = i < (size_t)slow;
    dial(&cs[i]);
  }
  int64_t end = now_ns() + secs * 1000000000LL;
  struct epoll_event evs[256];
  signal(SIGTERM, on_term);
  signal(SIGINT, on_term);
  for (int64_t t = now_ns(); t < end && !stop; t = now_ns()) {
    int k = epoll_wait(ep, evs, 256, 20);
    for (int i = 0; i < k; i++)
      on_event(evs[i].data.ptr, evs[i].events);
    t = now_ns();
    for (size_t i = 0; i < total; i++) {
      conn *c = &cs[i];
      if (c->fd < 0 && c->next_ns <= t)
        dial(c);
      else if (c->fd >= 0 && c->slow && c->connected && c->next_ns <= t)
        drip(c);
    }
  }
  printf("{\"slow_opened\": %llu, \"slow_closed\": %llu, "
         "\"flood_sent\": %llu, \"flood_ok\": %llu, \"flood_other\": %llu, "
         "\"flood_cut\": %llu, \"refused\": %llu}\n",
         (unsigned long long)n.slow_opened, (unsigned long long)n.slow_closed,
         (unsigned long long)n.flood_sent, (unsigned long long)n.flood_ok,
         (unsigned long long)n.flood_other, (unsigned long long)n.flood_cut,
         (unsigned long long)n.refused);
  for (size_t i = 0; i < total; i++)
    hang_up(&cs[i]);
  free(cs);
  close(ep);
  return 0;
}
