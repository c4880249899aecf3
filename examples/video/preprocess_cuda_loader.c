/* SPDX-License-Identifier: MIT */
/*
 * Loading the CUDA preprocessing kernel (preprocess_cuda.cu, built by nvcc
 * into libpipeprof-video-cuda.so when the toolkit is there) at run time,
 * so that the demo links no CUDA library and runs where there is none.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preprocess.h"

#define CUDA_LIB "libpipeprof-video-cuda.so"

typedef int (*init_fn)(char *err, size_t errlen);
typedef int (*prep_fn)(const vp_yuv420 *src, int out_w, int out_h,
                       const vp_norm *n, float *out, char *err, size_t errlen);

static prep_fn prep;

int vp_cuda_open(char *err, size_t errlen) {
  char path[PATH_MAX];
  const char *env = getenv("PIPEPROF_VIDEO_CUDA");
  if (env && *env) {
    snprintf(path, sizeof path, "%s", env);
  } else {
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
      snprintf(err, errlen,
               "unavailable: cannot find this program's "
               "directory");
      return -1;
    }
    self[n] = '\0';
    snprintf(path, sizeof path, "%s/" CUDA_LIB, dirname(self));
  }
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    snprintf(err, errlen, "unavailable: %s", why ? why : path);
    return -1;
  }
  init_fn init;
  *(void **)&init = dlsym(lib, "vp_cuda_init");
  *(void **)&prep = dlsym(lib, "vp_cuda_prep_impl");
  if (!init || !prep) {
    snprintf(err, errlen, "unavailable: %s lacks its entry points", path);
    prep = NULL;
    dlclose(lib);
    return -1;
  }
  if (init(err, errlen) != 0) {
    prep = NULL;
    return -1; /* the library stays loaded: the CUDA runtime in it may
                  have started threads */
  }
  return 0;
}

int vp_cuda_prep(const vp_yuv420 *src, int out_w, int out_h, const vp_norm *n,
                 float *out, char *err, size_t errlen) {
  if (!prep) {
    snprintf(err, errlen, "unavailable: vp_cuda_open did not succeed");
    return -1;
  }
  return prep(src, out_w, out_h, n, out, err, errlen);
}
