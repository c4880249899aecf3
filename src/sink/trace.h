/* SPDX-License-Identifier: MIT */
/*
 * The trace sink: what the writer drains, as EVENTS chunks of a .pptrace
 * file (docs/formats/pptrace.md) — ring events, resolved GPU zones
 * (GPU_ZONE) and anomalies and alerts (ANOMALY, ALERT) of the process-wide
 * pseudo thread 0. Trace mode writes the session's file through one; each
 * flight dump writes its file through another.
 */
#ifndef PP_SINK_TRACE_H
#define PP_SINK_TRACE_H

#include "out.h"
#include "sink.h"
#include "sites.h"

/* A trace sink writing to out with the site ids of sites (both the
 * caller's, outliving the sink). NULL when out of memory. Its gpu() may
 * reorder the records it is given. */
pp__sink *pp__trace_sink_new(pp__out *out, pp__sites *sites);

/* Anomalies and alerts as one EVENTS chunk of the process-wide pseudo
 * thread 0 (docs/formats/pptrace.md, event types 22 and 23), written to o
 * with times converted back to ticks by clock. Trace and stats modes both
 * record them. */
void pp__notes_write(pp__out *o, const pp__note *n, size_t count,
                     const pp__clockmap *clock);

#endif /* PP_SINK_TRACE_H */
