/* SPDX-License-Identifier: MIT */
/*
 * A batch "model" for the `pipeprof sweep` tests: serves --items requests
 * in batches of --batch, each batch a zone "infer" that sleeps 2 ms + 0.2
 * ms per item; each request begins with its batch and ends with it, and
 * each batch is recorded with pp_batch. --fail-on B exits with status 3
 * when the batch size is B. Records when PIPEPROF=1 is set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pipeprof.h"

int main(int argc, char **argv) {
  long batch = 1, items = 100, fail_on = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--batch") == 0)
      batch = atol(argv[i + 1]);
    else if (strcmp(argv[i], "--items") == 0)
      items = atol(argv[i + 1]);
    else if (strcmp(argv[i], "--fail-on") == 0)
      fail_on = atol(argv[i + 1]);
  }
  const char *env = getenv("PIPEPROF_SWEEP_BATCH");
  if (batch < 1 && env)
    batch = atol(env);
  if (batch < 1 || items < 1) {
    fprintf(stderr, "batch_worker: bad --batch or --items\n");
    return 2;
  }
  if (batch == fail_on) {
    fprintf(stderr, "batch_worker: out of memory at batch %ld\n", batch);
    return 3;
  }
  pp_init_from_env();
  for (long done = 0; done < items; done += batch) {
    long n = items - done < batch ? items - done : batch;
    for (long k = 0; k < n; k++)
      pp_request_begin((uint64_t)(done + k + 1));
    PP_ZONE_BEGIN(z, "infer");
    long us = 2000 + 200 * n;
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
    PP_ZONE_END(z);
    pp_batch((uint32_t)n, (uint32_t)n);
    for (long k = 0; k < n; k++)
      pp_request_end((uint64_t)(done + k + 1), 0);
  }
  pp_shutdown();
  printf("served %ld items in batches of %ld\n", items, batch);
  return 0;
}
