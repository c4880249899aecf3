/* SPDX-License-Identifier: MIT */
/*
 * DevTools protocol over a pipe (cdp.h): a browser target for the page,
 * a flat session attached to it, Runtime.evaluate in that session. The
 * replies are read with jansson; events between them are skipped.
 */
#include "cdp.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner.h"

struct pp_cdp {
  pid_t pid;
  int to, from; /* our ends: commands in, replies out */
  char *buf;    /* bytes read and not yet taken */
  size_t len, cap;
  int next_id;
  char session[128];
};

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void send_msg(pp_cdp *c, const char *msg) {
  size_t n = strlen(msg) + 1, off = 0; /* the NUL ends the message */
  while (off < n) {
    ssize_t w = write(c->to, msg + off, n - off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      PP_FAIL("chromium: the command pipe closed: %s", strerror(errno));
    off += (size_t)w;
  }
}

/* The next message (malloc'd), within deadline (ms on now_ms's clock). */
static char *next_msg(pp_cdp *c, int64_t deadline) {
  for (;;) {
    char *nul = c->buf ? memchr(c->buf, 0, c->len) : NULL;
    if (nul) {
      size_t k = (size_t)(nul - c->buf);
      char *m = strndup(c->buf, k);
      memmove(c->buf, nul + 1, c->len - k - 1);
      c->len -= k + 1;
      CHECK(m != NULL);
      return m;
    }
    int64_t left = deadline - now_ms();
    if (left <= 0)
      PP_FAIL("chromium: no reply within the time allowed");
    struct pollfd p = {c->from, POLLIN, 0};
    int r = poll(&p, 1, (int)left);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      continue;
    if (c->len + 65536 > c->cap) {
      c->cap = c->cap ? c->cap * 2 : 1 << 20;
      c->buf = realloc(c->buf, c->cap);
      CHECK(c->buf != NULL);
    }
    ssize_t got = read(c->from, c->buf + c->len, c->cap - c->len);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      PP_FAIL("chromium: the reply pipe closed (the browser ended)");
    c->len += (size_t)got;
  }
}

/* Send method with params (JSON text) in the page's session (or the
 * browser's when session is 0) and return the reply's "result", or NULL
 * when the reply is an error. */
static json_t *call(pp_cdp *c, int in_session, const char *method,
                    const char *params) {
  int id = ++c->next_id;
  char *msg = NULL;
  int n = in_session
              ? asprintf(&msg,
                         "{\"id\":%d,\"sessionId\":\"%s\",\"method\":\"%s\","
                         "\"params\":%s}",
                         id, c->session, method, params)
              : asprintf(&msg, "{\"id\":%d,\"method\":\"%s\",\"params\":%s}",
                         id, method, params);
  CHECK(n > 0);
  send_msg(c, msg);
  free(msg);
  int64_t deadline = now_ms() + 30000;
  for (;;) {
    char *m = next_msg(c, deadline);
    json_t *j = json_loads(m, 0, NULL);
    free(m);
    if (!j)
      continue;
    if (json_integer_value(json_object_get(j, "id")) != id) {
      json_decref(j); /* an event, or another reply */
      continue;
    }
    json_t *res = json_object_get(j, "result");
    if (res)
      json_incref(res);
    json_decref(j);
    return res;
  }
}

pp_cdp *pp_cdp_open(const char *chromium, const char *url) {
  int in[2], out[2];
  CHECK(pipe2(in, O_CLOEXEC) == 0);  /* commands: we write in[1] */
  CHECK(pipe2(out, O_CLOEXEC) == 0); /* replies: we read out[0] */
  char profile[4200], log[4200];
  /* a profile of its own: a second browser on the same profile hands
   * its page to the first and ends */
  static int opened;
  opened++;
  snprintf(profile, sizeof profile, "--user-data-dir=%.4000s/cdp-profile-%d",
           pp_test_tmpdir(), opened);
  snprintf(log, sizeof log, "%.4000s/cdp-chromium-%d.log", pp_test_tmpdir(),
           opened);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    /* fds 3 and 4 are the protocol's; nothing else is passed on */
    int r = dup2(in[0], 100), w = dup2(out[1], 101);
    if (r < 0 || w < 0 || dup2(r, 3) != 3 || dup2(w, 4) != 4)
      _exit(126);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execl(chromium, chromium, "--headless", "--no-sandbox", "--disable-gpu",
          "--disable-dev-shm-usage", "--no-first-run", "--hide-scrollbars",
          "--window-size=1280,2400", "--remote-debugging-pipe", profile,
          "about:blank", (char *)NULL);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  pp_cdp *c = calloc(1, sizeof *c);
  CHECK(c != NULL);
  c->pid = pid;
  c->to = in[1];
  c->from = out[0];
  signal(SIGPIPE, SIG_IGN);
  char params[4400];
  json_t *u = json_string(url);
  char *quoted = json_dumps(u, JSON_ENCODE_ANY);
  json_decref(u);
  snprintf(params, sizeof params, "{\"url\":%s}", quoted);
  free(quoted);
  json_t *t = call(c, 0, "Target.createTarget", params);
  const char *target = json_string_value(json_object_get(t, "targetId"));
  if (!target)
    PP_FAIL("chromium: no target for %s", url);
  snprintf(params, sizeof params, "{\"targetId\":\"%s\",\"flatten\":true}",
           target);
  json_decref(t);
  json_t *s = call(c, 0, "Target.attachToTarget", params);
  const char *session = json_string_value(json_object_get(s, "sessionId"));
  if (!session)
    PP_FAIL("chromium: could not attach to the page of %s", url);
  snprintf(c->session, sizeof c->session, "%s", session);
  json_decref(s);
  return c;
}

char *pp_cdp_eval(pp_cdp *c, const char *js) {
  json_t *e = json_string(js);
  char *expr = json_dumps(e, JSON_ENCODE_ANY);
  json_decref(e);
  char *params = NULL;
  CHECK(asprintf(&params, "{\"expression\":%s,\"returnByValue\":true}",
                 expr) > 0);
  free(expr);
  json_t *r = call(c, 1, "Runtime.evaluate", params);
  free(params);
  const char *v =
      json_string_value(json_object_get(json_object_get(r, "result"), "value"));
  char *out = v && !json_object_get(r, "exceptionDetails") ? strdup(v) : NULL;
  json_decref(r);
  return out;
}

static int b64(int ch) {
  return ch >= 'A' && ch <= 'Z'   ? ch - 'A'
         : ch >= 'a' && ch <= 'z' ? ch - 'a' + 26
         : ch >= '0' && ch <= '9' ? ch - '0' + 52
         : ch == '+'              ? 62
         : ch == '/'              ? 63
                                  : -1;
}

void pp_cdp_screenshot(pp_cdp *c, const char *path) {
  json_t *r = call(c, 1, "Page.captureScreenshot",
                   "{\"format\":\"png\",\"captureBeyondViewport\":true}");
  const char *data = json_string_value(json_object_get(r, "data"));
  if (!data)
    PP_FAIL("chromium: no screenshot");
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  unsigned acc = 0;
  int bits = 0;
  for (const char *p = data; *p; p++) {
    int v = b64((unsigned char)*p);
    if (v < 0)
      continue; /* padding */
    acc = (acc << 6) | (unsigned)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      fputc((int)((acc >> bits) & 0xff), f);
    }
  }
  CHECK(fclose(f) == 0);
  json_decref(r);
}

void pp_cdp_close(pp_cdp *c) {
  if (!c)
    return;
  close(c->to); /* the browser ends when its pipe closes */
  close(c->from);
  int st;
  for (int i = 0; i < 50 && waitpid(c->pid, &st, WNOHANG) == 0; i++)
    usleep(100000);
  if (waitpid(c->pid, &st, WNOHANG) == 0) {
    kill(c->pid, SIGKILL);
    waitpid(c->pid, &st, 0);
  }
  free(c->buf);
  free(c);
}
