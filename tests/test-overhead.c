/* SPDX-License-Identifier: MIT */
/*
 * The profiler's overhead figure (pp_profile_overhead, the report's
 * overhead line, the summary JSON's overhead object): its arithmetic from
 * the trace's META costs, dropped events included (issue 12). Hand-built
 * traces with fixed figures; nothing here is timed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "export/export.h"
#include "format/pptrace.h"
#include "pipeprof.h"
#include "runner.h"
#include "trace_builder.h"

/* One thread with n empty zones (2 n events) and dropped events, costs
 * from META as a session writes them. */
static void build(pp_trace *t, int n, uint64_t dropped, const char *drop_cost) {
  memset(t, 0, sizeof *t);
  tb_meta(t, "mode", "trace");
  tb_meta(t, "event_cost_ns", "20");
  if (drop_cost)
    tb_meta(t, "drop_cost_ns", drop_cost);
  tb_meta(t, "writer_cpu_ns", "3000000");
  tb_meta(t, "sampler_cpu_ns", "1000000");
  tb_meta(t, "process_cpu_ns", "50000000");
  uint32_t z = tb_loc(t, "z", PP_KIND_ZONE);
  size_t th = tb_thread(t, 1, "main");
  for (int i = 0; i < n; i++) {
    tb_ev(t, th, i * 100, z, PPT_EV_ZONE_BEGIN);
    tb_ev(t, th, i * 100 + 50, z, PPT_EV_ZONE_END);
  }
  t->threads[th].dropped = dropped;
}

static char *render(const pp_analysis *t) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK(f != NULL);
  CHECK_EQ(pp_report_text(f, t, NULL), 0);
  CHECK_EQ(fclose(f), 0);
  CHECK(buf != NULL);
  return buf;
}

/* Dropped events count at the measured cost of a drop: 1000 events x 20 ns
 * + 500 dropped x 30 ns + 3 ms writer + 1 ms sampler. */
PP_TEST(overhead_counts_dropped_events) {
  pp_trace t;
  pp_analysis a = {0};
  build(&t, 500, 500, "30");
  CHECK_EQ(pp_analyze(&t, &a), 0);
  CHECK_EQ_U(a.prof.events, 1000);
  CHECK_EQ_U(a.prof.dropped, 500);
  pp_overhead o;
  pp_profile_overhead(&a, &o);
  CHECK_EQ(o.known, 1);
  CHECK_NEAR(o.events_ns, 20000, 1e-6);
  CHECK_NEAR(o.dropped_ns, 15000, 1e-6);
  CHECK_NEAR(o.recording_ns, 35000, 1e-6);
  CHECK_NEAR(o.total_ns, 4035000, 1e-6);
  char *s = render(&a);
  CHECK_CONTAINS(s, "\nprofiler overhead\n"
                    "  total:                        4.04 ms (writer and "
                    "sampler threads measured, recording estimated)\n"
                    "  share of the process's CPU:   8.07% (of 50.0 ms)\n"
                    "  writer thread (measured):     3.00 ms\n"
                    "  sampler thread (measured):    1.00 ms\n"
                    "  recording (estimated):        35.0 us (1000 events x "
                    "20 ns + 500 dropped x 30 ns)\n");
  free(s);
  s = tb_summary_json(&a);
  CHECK_CONTAINS(s, "\"estimated_ns\":35000");
  CHECK_CONTAINS(s, "\"events_estimated_ns\":20000");
  CHECK_CONTAINS(s, "\"dropped_events\":500");
  CHECK_CONTAINS(s, "\"dropped_estimated_ns\":15000");
  CHECK_CONTAINS(s, "\"total_ns\":4035000");
  free(s);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* No drops: the drop cost plays no part and the line does not mention it. */
PP_TEST(overhead_without_drops) {
  pp_trace t;
  pp_analysis a = {0};
  build(&t, 500, 0, "30");
  CHECK_EQ(pp_analyze(&t, &a), 0);
  pp_overhead o;
  pp_profile_overhead(&a, &o);
  CHECK_NEAR(o.dropped_ns, 0, 0);
  CHECK_NEAR(o.recording_ns, 20000, 1e-6);
  CHECK_NEAR(o.total_ns, 4020000, 1e-6);
  char *s = render(&a);
  CHECK_CONTAINS(s, "  recording (estimated):        20.0 us (1000 events x "
                    "20 ns)\n");
  CHECK(strstr(s, "dropped x") == NULL);
  free(s);
  s = tb_summary_json(&a);
  CHECK_CONTAINS(s, "\"dropped_estimated_ns\":0");
  free(s);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}

/* A trace with drops but no (or a malformed) drop cost, as older sessions
 * wrote: the drops are left out of the figure and the line says so. */
PP_TEST(overhead_drops_without_drop_cost) {
  static const char *const bad[] = {NULL, "", "abc", "-3", "nan", "7x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    pp_trace t;
    pp_analysis a = {0};
    build(&t, 500, 40, bad[i]);
    CHECK_EQ(pp_analyze(&t, &a), 0);
    pp_overhead o;
    pp_profile_overhead(&a, &o);
    CHECK_NEAR(o.dropped_ns, -1, 0);
    CHECK_NEAR(o.recording_ns, 20000, 1e-6);
    CHECK_NEAR(o.total_ns, 4020000, 1e-6);
    char *s = render(&a);
    CHECK_CONTAINS(s, "(1000 events x 20 ns; 40 dropped not counted: drop "
                      "cost not recorded)\n");
    free(s);
    s = tb_summary_json(&a);
    CHECK_CONTAINS(s, "\"dropped_estimated_ns\":null");
    free(s);
    pp_analysis_free(&a);
    pp_trace_free(&t);
  }
}

/* Without the writer's CPU time the figure is the estimate alone, drops
 * included. */
PP_TEST(overhead_estimate_only_counts_drops) {
  pp_trace t;
  pp_analysis a = {0};
  build(&t, 500, 100, "30");
  tb_meta(&t, "writer_cpu_ns", "");
  CHECK_EQ(pp_analyze(&t, &a), 0);
  pp_overhead o;
  pp_profile_overhead(&a, &o);
  CHECK_NEAR(o.total_ns, -1, 0);
  CHECK_NEAR(o.recording_ns, 23000, 1e-6);
  char *s = render(&a);
  CHECK_CONTAINS(s, "\nprofiler overhead (estimated)\n"
                    "  recording (estimated):        23.0 us (1000 events x "
                    "20 ns + 100 dropped x 30 ns)\n");
  CHECK(strstr(s, "  total:") == NULL);
  free(s);
  pp_analysis_free(&a);
  pp_trace_free(&t);
}
