/* SPDX-License-Identifier: MIT */
/*
 * The trace sink: what the writer drains, as EVENTS chunks of a .pptrace
 * file (docs/formats/pptrace.md) — ring events and resolved GPU zones
 * (GPU_ZONE). Trace mode writes the session's file through one; each
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

#endif /* PP_SINK_TRACE_H */
