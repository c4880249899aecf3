/* SPDX-License-Identifier: MIT */
/*
 * Seeds of fuzz_salvage.c (fuzz/salvage-seeds.sh builds and runs this):
 * for each mode, a child records zones, a counter and a thread that ends
 * into 16 KiB rings, and is killed with SIGKILL; its arena is copied to
 * OUT/killed-MODE.rings with its commit moved to the end of the file
 * header, so that the harness's trace (a header and four chunks) takes
 * it; and OUT/header-only.rings is the first arena cut to its header.
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format/pptrace.h"
#include "pipeprof.h"
#include "ring/arena.h"

static void *ends(void *arg) {
  (void)arg;
  for (int i = 0; i < 50; i++) {
    PP_ZONE("helper");
  }
  return NULL;
}

static void child(const char *trace, pp_mode mode, _Atomic int *ready) {
  pp_config c;
  pp_config_init(&c);
  c.out_path = trace;
  c.mode = mode;
  c.buffer_kib = 16;
  if (pp_init(&c) != PP_OK)
    _exit(1);
  pp_thread_name("seed-main");
  pthread_t t;
  pthread_create(&t, NULL, ends, NULL);
  pthread_join(t, NULL);
  for (unsigned i = 0;; i++) {
    {
      PP_ZONE("work");
      PP_COUNTER_ADD("count", 1);
      PP_FRAME_MARK("frames");
    }
    if (i == 2000)
      *ready = 1;
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
  }
}

static int copy_patched(const char *from, const char *to, size_t cut) {
  FILE *f = fopen(from, "rb");
  if (!f)
    return -1;
  struct stat st;
  fstat(fileno(f), &st);
  size_t n = cut ? cut : (size_t)st.st_size;
  unsigned char *b = malloc(n);
  int ok = b && fread(b, 1, n, f) == n;
  fclose(f);
  if (!ok)
    return -1;
  pp__arena_hdr *h = (pp__arena_hdr *)b;
  h->commit_off = PPT_FILE_HEADER_SIZE; /* the harness's trace is not his */
  h->commit_seq = 0;
  FILE *o = fopen(to, "wb");
  ok = o && fwrite(b, 1, n, o) == n;
  free(b);
  return o && fclose(o) == 0 && ok ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: salvage_seeds RINGS_DIR OUT_DIR\n");
    return 2;
  }
  setenv("PIPEPROF_RINGS_DIR", argv[1], 1);
  static const pp_mode modes[] = {PP_MODE_TRACE, PP_MODE_STATS};
  static const char *const names[] = {"trace", "stats"};
  for (int m = 0; m < 2; m++) {
    char trace[4096], out[4096];
    snprintf(trace, sizeof trace, "%s/seed-%s.pptrace", argv[1], names[m]);
    _Atomic int *ready = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    *ready = 0;
    pid_t pid = fork();
    if (pid == 0)
      child(trace, modes[m], ready);
    while (!*ready)
      usleep(1000);
    usleep(30000);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    DIR *d = opendir(argv[1]);
    struct dirent *e;
    char arena[4096] = "";
    while (d && (e = readdir(d)))
      if (strstr(e->d_name, ".rings"))
        snprintf(arena, sizeof arena, "%s/%s", argv[1], e->d_name);
    if (d)
      closedir(d);
    snprintf(out, sizeof out, "%s/killed-%s.rings", argv[2], names[m]);
    if (!arena[0] || copy_patched(arena, out, 0) != 0)
      return 1;
    if (m == 0) {
      snprintf(out, sizeof out, "%s/header-only.rings", argv[2]);
      if (copy_patched(arena, out, PP__ARENA_HDR_BYTES) != 0)
        return 1;
    }
    unlink(arena);
    unlink(trace);
  }
  return 0;
}
