/* SPDX-License-Identifier: MIT */
/*
 * pipeprof-test-dlclose-host: a program that loads libpipeprof as a
 * plugin does (tests/test-recorder.c, issue 26): it dlopens the library,
 * starts a session writing OUT, has 4 threads record zones, then unloads
 * the library (after pp_shutdown with "shutdown", without it with
 * "live") while the threads still live, lets them record nothing more and
 * exit, and exits 0. Before libpipeprof was linked with -z nodelete, the
 * threads' exit ran the library's thread-key destructor in unmapped
 * memory.
 *
 *   pipeprof-test-dlclose-host LIBPATH OUT shutdown|live
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "pipeprof.h"

static pthread_barrier_t recorded, unloaded;
static pp_zone (*zone_begin)(const char *);
static void (*zone_end)(pp_zone);

static void *worker(void *arg) {
  (void)arg;
  for (int i = 0; i < 1000; i++)
    zone_end(zone_begin("plugin-work"));
  pthread_barrier_wait(&recorded);
  pthread_barrier_wait(&unloaded);
  return NULL; /* the thread exits after the unload */
}

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[3], "shutdown") && strcmp(argv[3], "live"))) {
    fprintf(stderr, "usage: %s LIBPATH OUT shutdown|live\n", argv[0]);
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  void (*config_init)(pp_config *);
  int (*init)(const pp_config *);
  int (*shutdown)(void);
  *(void **)&config_init = dlsym(lib, "pp_config_init");
  *(void **)&init = dlsym(lib, "pp_init");
  *(void **)&shutdown = dlsym(lib, "pp_shutdown");
  *(void **)&zone_begin = dlsym(lib, "pp_zone_begin_name");
  *(void **)&zone_end = dlsym(lib, "pp_zone_end");
  if (!config_init || !init || !shutdown || !zone_begin || !zone_end) {
    fprintf(stderr, "dlsym: %s\n", dlerror());
    return 1;
  }
  pp_config cfg;
  config_init(&cfg);
  cfg.out_path = argv[2];
  cfg.install_signals = 0;
  if (init(&cfg) != PP_OK) {
    fprintf(stderr, "pp_init failed\n");
    return 1;
  }
  enum { N = 4 };
  pthread_t t[N];
  pthread_barrier_init(&recorded, NULL, N + 1);
  pthread_barrier_init(&unloaded, NULL, N + 1);
  for (int i = 0; i < N; i++)
    pthread_create(&t[i], NULL, worker, NULL);
  pthread_barrier_wait(&recorded);
  if (!strcmp(argv[3], "shutdown") && shutdown() != PP_OK) {
    fprintf(stderr, "pp_shutdown failed\n");
    return 1;
  }
  if (dlclose(lib) != 0) {
    fprintf(stderr, "dlclose: %s\n", dlerror());
    return 1;
  }
  pthread_barrier_wait(&unloaded);
  for (int i = 0; i < N; i++)
    pthread_join(t[i], NULL);
  printf("threads exited after the unload\n");
  return 0;
}
