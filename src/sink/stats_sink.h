/* SPDX-License-Identifier: MIT */
/*
 * The stats sink: the writer's view of the aggregate of sink/stats.h in
 * stats mode. Events, threads, drops and GPU zones go to the aggregate;
 * the sites it meets are defined in the file at each pass's end; finish()
 * writes the one STATS chunk.
 */
#ifndef PP_SINK_STATS_SINK_H
#define PP_SINK_STATS_SINK_H

#include "out.h"
#include "sink.h"
#include "sites.h"

/* NULL when out of memory. out and sites are the caller's and outlive it. */
pp__sink *pp__stats_sink_new(pp__out *out, pp__sites *sites);

#endif /* PP_SINK_STATS_SINK_H */
