/* SPDX-License-Identifier: MIT */
/*
 * GET from the program's endpoint (upstream.h) with libcurl's easy
 * interface: one handle per request (a scrape a second or so needs no
 * connection reuse), no signals (the companion runs in a host program's
 * threads), HTTP only.
 */
#include "upstream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PP_HAVE_CURL
#include <curl/curl.h>
#include <pthread.h>

typedef struct sink {
  char *buf;
  size_t len, cap, max;
  int over;
} sink;

static size_t take(char *data, size_t size, size_t n, void *arg) {
  sink *s = arg;
  size_t k = size * n;
  if (s->len + k > s->max) {
    s->over = 1;
    return 0; /* stops the transfer: CURLE_WRITE_ERROR */
  }
  if (s->len + k + 1 > s->cap) {
    size_t cap = s->cap ? s->cap : 16384;
    while (cap < s->len + k + 1)
      cap *= 2;
    char *b = realloc(s->buf, cap);
    if (!b)
      return 0;
    s->buf = b;
    s->cap = cap;
  }
  memcpy(s->buf + s->len, data, k);
  s->len += k;
  s->buf[s->len] = '\0';
  return k;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_ok;
static void init(void) { init_ok = curl_global_init(CURL_GLOBAL_NOTHING) == 0; }

int pp_upstream_available(char *err, size_t errlen) {
  pthread_once(&once, init);
  if (!init_ok) {
    snprintf(err, errlen, "libcurl did not initialise");
    return -1;
  }
  return 0;
}

int pp_upstream_get(const char *addr, const char *path, const char *accept,
                    long timeout_ms, size_t max_bytes, pp_upstream_reply *out,
                    char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  if (pp_upstream_available(err, errlen) != 0)
    return -1;
  char url[512];
  snprintf(url, sizeof url, "http://%s%s", addr, path);
  CURL *c = curl_easy_init();
  if (!c) {
    snprintf(err, errlen, "libcurl: no handle");
    return -1;
  }
  sink s = {NULL, 0, 0, max_bytes, 0};
  struct curl_slist *hdr = NULL;
  char line[256];
  if (accept) {
    snprintf(line, sizeof line, "Accept: %s", accept);
    hdr = curl_slist_append(NULL, line);
  }
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, take);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
  if (hdr)
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
  CURLcode rc = curl_easy_perform(c);
  int ok = rc == CURLE_OK;
  if (ok) {
    char *type = NULL;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    if (curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type)
      snprintf(out->type, sizeof out->type, "%s", type);
    struct curl_header *h;
    if (curl_easy_header(c, "Pipeprof-Scope", 0, CURLH_HEADER, -1, &h) ==
        CURLHE_OK)
      snprintf(out->scope, sizeof out->scope, "%s", h->value);
    out->body = s.buf ? s.buf : calloc(1, 1);
    out->len = s.len;
    ok = out->body != NULL;
    if (!ok)
      snprintf(err, errlen, "out of memory");
  } else if (s.over) {
    snprintf(err, errlen, "%s: the reply is larger than %zu bytes", url,
             max_bytes);
  } else {
    snprintf(err, errlen, "%s: %s", url, curl_easy_strerror(rc));
  }
  if (!ok)
    free(s.buf);
  curl_slist_free_all(hdr);
  curl_easy_cleanup(c);
  return ok ? 0 : -1;
}

#else

int pp_upstream_available(char *err, size_t errlen) {
  snprintf(err, errlen, "this build has no libcurl (libcurl4-openssl-dev)");
  return -1;
}

int pp_upstream_get(const char *addr, const char *path, const char *accept,
                    long timeout_ms, size_t max_bytes, pp_upstream_reply *out,
                    char *err, size_t errlen) {
  (void)addr;
  (void)path;
  (void)accept;
  (void)timeout_ms;
  (void)max_bytes;
  memset(out, 0, sizeof *out);
  return pp_upstream_available(err, errlen);
}

#endif
