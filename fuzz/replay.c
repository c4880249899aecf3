/* SPDX-License-Identifier: MIT */
/*
 * Corpus replay driver: links with one fuzz/fuzz_<name>.c in place of
 * libFuzzer and calls its LLVMFuzzerTestOneInput once per file named on the
 * command line, or per regular file inside each directory named there (one
 * level, in name order). Every input sits in a buffer of exactly its size,
 * so a sanitizer build catches reads past the end. Used by ctest
 * (fuzz_replay_<name>) with any compiler; see cmake/fuzz.cmake.
 *
 *   fuzz-replay-<name> [-v] PATH...
 *
 * Exit status: 0 when every input ran, 1 when a path could not be read, 2
 * for misuse. A crash in the target ends the run with the crash.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int verbose;

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "fuzz-replay: cannot open %s: %s\n", path, strerror(errno));
    return -1;
  }
  size_t cap = 4096, len = 0;
  uint8_t *buf = malloc(cap);
  while (buf) {
    if (len == cap) {
      uint8_t *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
    size_t n = fread(buf + len, 1, cap - len, f);
    len += n;
    if (n == 0)
      break;
  }
  int bad = ferror(f);
  fclose(f);
  if (!buf || bad) {
    fprintf(stderr, "fuzz-replay: cannot read %s\n", path);
    free(buf);
    return -1;
  }
  /* Exact-size copy: the byte after the input is outside the allocation. */
  uint8_t *exact = malloc(len ? len : 1);
  if (!exact) {
    free(buf);
    return -1;
  }
  if (len)
    memcpy(exact, buf, len);
  free(buf);
  if (verbose)
    fprintf(stderr, "fuzz-replay: %s (%zu bytes)\n", path, len);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  return 0;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Returns the number of inputs run, or -1 on a read error. */
static long run_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "fuzz-replay: cannot open %s: %s\n", dir, strerror(errno));
    return -1;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue; /* ., .., and hidden files such as .gitkeep */
    if (n == cap) {
      size_t nc = cap ? cap * 2 : 64;
      char **nn = realloc(names, nc * sizeof *names);
      if (!nn)
        break;
      names = nn;
      cap = nc;
    }
    size_t l = strlen(dir) + strlen(e->d_name) + 2;
    char *p = malloc(l);
    if (!p)
      break;
    snprintf(p, l, "%s/%s", dir, e->d_name);
    names[n++] = p;
  }
  closedir(d);
  if (n > 1)
    qsort(names, n, sizeof *names, cmp_names);
  long count = 0;
  int failed = 0;
  for (size_t i = 0; i < n; i++) {
    struct stat st;
    if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
      if (run_file(names[i]) == 0)
        count++;
      else
        failed = 1;
    }
    free(names[i]);
  }
  free(names);
  return failed ? -1 : count;
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  int first = 1;
  if (argc > 1 && strcmp(argv[1], "-v") == 0) {
    verbose = 1;
    first = 2;
  }
  if (first >= argc) {
    fprintf(stderr, "usage: %s [-v] FILE|DIR...\n", argv[0]);
    return 2;
  }
  long total = 0;
  int status = 0;
  for (int i = first; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "fuzz-replay: %s: %s\n", argv[i], strerror(errno));
      status = 1;
    } else if (S_ISDIR(st.st_mode)) {
      long c = run_dir(argv[i]);
      if (c < 0)
        status = 1;
      else
        total += c;
    } else if (run_file(argv[i]) == 0) {
      total++;
    } else {
      status = 1;
    }
  }
  printf("fuzz-replay: ran %ld input%s\n", total, total == 1 ? "" : "s");
  return status;
}
