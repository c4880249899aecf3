/* SPDX-License-Identifier: MIT */
/*
 * Loading and starting the HTTP companion (see http.h). The companion is
 * looked for, in order: PIPEPROF_HTTP_LIB (a path), beside the object this
 * code is in (libpipeprof.so, or the program that linked the static
 * library), then the loader's search path.
 */
#include "http.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "http_host.h"

#define COMPANION "libpipeprof-http.so.0"

static void *lib;
static pp_http_stop_fn stop_fn;
/* An object of this file: dladdr of it names the object it was linked
 * into (libpipeprof.so, or the program with the static library). */
static const char here;

static void *open_companion(char *tried, size_t n) {
  const char *env = getenv("PIPEPROF_HTTP_LIB");
  if (env && *env) {
    snprintf(tried, n, "%s", env);
    return dlopen(env, RTLD_NOW | RTLD_LOCAL);
  }
  Dl_info info;
  if (dladdr(&here, &info) && info.dli_fname) {
    const char *slash = strrchr(info.dli_fname, '/');
    if (slash) {
      char path[4096];
      snprintf(path, sizeof path, "%.*s/%s", (int)(slash - info.dli_fname),
               info.dli_fname, COMPANION);
      void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (h)
        return h;
      snprintf(tried, n, "%s, then ", path);
    }
  }
  size_t used = strlen(tried);
  snprintf(tried + used, n - used, "%s on the search path", COMPANION);
  return dlopen(COMPANION, RTLD_NOW | RTLD_LOCAL);
}

/* Whether spec is PORT, :PORT or IPV4:PORT with a port of 1 to 65535 in
 * digits alone (no sign, space or control character: " 16" is not 16,
 * and 0, which would listen on a port nobody is told). 0, or -1 with the
 * reason in why. */
static int addr_check(const char *spec, char *why, size_t n) {
  const char *colon = strrchr(spec, ':');
  const char *port = colon ? colon + 1 : spec;
  size_t digits = strspn(port, "0123456789");
  unsigned long p = digits && digits <= 5 ? strtoul(port, NULL, 10) : 0;
  if (!digits || port[digits] || p < 1 || p > 65535) {
    snprintf(why, n, "expected PORT, :PORT or IPV4:PORT, with a port of 1 "
                     "to 65535");
    return -1;
  }
  if (colon && colon != spec) {
    char host[64];
    struct in_addr a;
    size_t h = (size_t)(colon - spec);
    if (h >= sizeof host || (memcpy(host, spec, h), host[h] = 0,
                             inet_pton(AF_INET, host, &a) != 1)) {
      snprintf(why, n, "expected an IPv4 address before the port");
      return -1;
    }
  }
  return 0;
}

void pp__http_full_addr(const char *spec, char *addr, size_t n) {
  if (strchr(spec, ':') == NULL)
    snprintf(addr, n, "127.0.0.1:%s", spec);
  else if (spec[0] == ':')
    snprintf(addr, n, "127.0.0.1%s", spec);
  else
    snprintf(addr, n, "%s", spec);
}

int pp__http_serve(const pp_http_host *host, const char *spec, char *err,
                   size_t n) {
  if (lib) {
    snprintf(err, n, "already serving");
    return -1;
  }
  char addr[128];
  if (addr_check(spec, err, n) != 0)
    return -1;
  pp__http_full_addr(spec, addr, sizeof addr);
  char tried[8400] = "";
  lib = open_companion(tried, sizeof tried);
  if (!lib) {
    snprintf(err, n, "cannot load the HTTP endpoint (%.3000s: %.1000s)", tried,
             dlerror());
    return -1;
  }
  pp_http_start_fn start = NULL;
  *(void **)&start = dlsym(lib, "pp_http_start");
  *(void **)&stop_fn = dlsym(lib, "pp_http_stop");
  char why[256] = "";
  if (!start || !stop_fn || start(host, addr, why, sizeof why) != 0) {
    snprintf(err, n, "%s",
             start && stop_fn ? why : "not a pipeprof HTTP library");
    dlclose(lib);
    lib = NULL;
    stop_fn = NULL;
    return -1;
  }
  return 0;
}

void pp__http_start(const pp_http_host *host, const char *cfg_addr) {
  const char *spec = cfg_addr ? cfg_addr : getenv("PIPEPROF_HTTP");
  const char *what = cfg_addr ? "pp_config.http_addr" : "PIPEPROF_HTTP";
  if (!spec || !*spec || lib)
    return;
  char err[4400], esc[160];
  if (pp__http_serve(host, spec, err, sizeof err) != 0) {
    pp__env_escape(esc, sizeof esc, spec); /* a newline is shown, not sent */
    fprintf(stderr, "pipeprof: %s=\"%s\": %s; running on without it\n", what,
            esc, err);
  }
}

/* pp__http_subject's process: pid 0 when none. */
static pthread_mutex_t subject_lock = PTHREAD_MUTEX_INITIALIZER;
static long subject_pid;
static char subject_name[64];

void pp__http_subject(long pid, const char *name) {
  pthread_mutex_lock(&subject_lock);
  subject_pid = pid;
  snprintf(subject_name, sizeof subject_name, "%s", name ? name : "");
  pthread_mutex_unlock(&subject_lock);
}

int pp__http_subject_get(long *pid, char *name, size_t n) {
  pthread_mutex_lock(&subject_lock);
  int rc = subject_pid > 0 ? 0 : -1;
  if (rc == 0) {
    *pid = subject_pid;
    snprintf(name, n, "%s", subject_name);
  }
  pthread_mutex_unlock(&subject_lock);
  return rc;
}

void pp__http_stop(void) {
  pp__http_subject(0, NULL);
  if (!lib)
    return;
  stop_fn();
  /* the companion stays loaded: unloading libmicrohttpd at run time buys
   * nothing and a later session may serve again */
  stop_fn = NULL;
  lib = NULL;
}
