/* SPDX-License-Identifier: MIT */
/*
 * pipeprof-bench --sampler: the sampler's own CPU use. Placeholder until the
 * measurement lands: reports that it was not measured.
 */
#include <stdio.h>

int pp_bench_sampler(int json, int quick);

int pp_bench_sampler(int json, int quick) {
  (void)quick;
  if (json)
    printf("{\"sampler\": \"unavailable: not measured yet\"}\n");
  else
    printf("sampler cost: unavailable: not measured yet\n");
  return 0;
}
