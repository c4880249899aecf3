/* SPDX-License-Identifier: MIT */
/*
 * pipeprof-tracegen: records a trace of about N events in trace mode for
 * bench/report_scale.sh: THREADS threads of nested zones ("outer", and
 * "inner" in one of four), a counter every 100 iterations and a frame mark
 * every 1000, pausing now and then so that the writer keeps up and nothing
 * is dropped (the report says so if anything is).
 *
 * Usage: pipeprof-tracegen FILE EVENTS [THREADS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pipeprof.h"

static long iterations; /* per thread */

static void *work(void *arg) {
  (void)arg;
  for (long i = 0; i < iterations; i++) {
    PP_ZONE("outer");
    if (i % 4 == 0) {
      PP_ZONE("inner");
    }
    if (i % 100 == 0)
      pp_counter_set("depth", i % 17);
    if (i % 1000 == 999)
      PP_FRAME_MARK("frame");
    if (i % 10000 == 9999) { /* about 20 M events/s from 4 threads */
      struct timespec ts = {0, 8000000};
      nanosleep(&ts, NULL);
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: pipeprof-tracegen FILE EVENTS [THREADS]\n");
    return 2;
  }
  long events = atol(argv[2]);
  int threads = argc > 3 ? atoi(argv[3]) : 4;
  if (events <= 0 || threads < 1 || threads > 64) {
    fprintf(stderr, "pipeprof-tracegen: bad EVENTS or THREADS\n");
    return 2;
  }
  /* 2.5 zone events and 0.011 others per iteration */
  iterations = (long)((double)events / threads / 2.511);
  pp_config c;
  pp_config_init(&c);
  c.mode = PP_MODE_TRACE;
  c.out_path = argv[1];
  c.buffer_kib = 65536;
  if (pp_init(&c) != PP_OK) {
    fprintf(stderr, "pipeprof-tracegen: %s\n", pp_last_error());
    return 1;
  }
  pthread_t th[64];
  for (int i = 0; i < threads; i++)
    if (pthread_create(&th[i], NULL, work, NULL) != 0)
      return 1;
  for (int i = 0; i < threads; i++)
    pthread_join(th[i], NULL);
  return pp_shutdown() == PP_OK ? 0 : 1;
}
