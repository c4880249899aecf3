/* SPDX-License-Identifier: MIT */
/*
 * Smallest real user of an installed pipeprof: includes <pipeprof.h>,
 * records a few zones into the trace file named by argv[1], shuts down and
 * checks that the header and the library agree on the version. Exit 0 on
 * success. Built by tests/test-install.c with CMake and with pkg-config.
 */
#include <pipeprof.h>
#include <stdio.h>

static unsigned long work(unsigned n) {
  PP_ZONE("work");
  unsigned long acc = 0;
  for (unsigned i = 0; i < n; i++) {
    PP_ZONE("step");
    acc = acc * 31u + i;
  }
  return acc;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: consumer OUT.pptrace\n");
    return 2;
  }
  if (pp_version_number() != PP_VERSION_NUMBER) {
    fprintf(stderr, "consumer: header %u, library %u (%s)\n",
            (unsigned)PP_VERSION_NUMBER, pp_version_number(),
            pp_version_string());
    return 1;
  }
  pp_config cfg;
  pp_config_init(&cfg);
  cfg.out_path = argv[1];
  cfg.process_name = "consumer";
  int rc = pp_init(&cfg);
  if (rc != PP_OK) {
    fprintf(stderr, "consumer: pp_init: %s: %s\n", pp_strerror(rc),
            pp_last_error());
    return 1;
  }
  unsigned long acc = work(1000);
  rc = pp_shutdown();
  if (rc != PP_OK) {
    fprintf(stderr, "consumer: pp_shutdown: %s: %s\n", pp_strerror(rc),
            pp_last_error());
    return 1;
  }
  printf("consumer: ok (%lu)\n", acc);
  return 0;
}
