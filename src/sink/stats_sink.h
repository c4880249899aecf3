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

/* A salvager's (src/salvage/): site id of its table is def (its strings
 * outlive the sink), defined before the checkpoint is restored so that
 * counters and frames of one name are one series. */
void pp__stats_sink_define(pp__sink *k, uint32_t id, const pp_srcloc *def);
/* The aggregate of a checkpoint (the checkpoint op's bytes). 0, or -1
 * when they are not a whole checkpoint. */
int pp__stats_sink_restore(pp__sink *k, const unsigned char *p, size_t n);

#endif /* PP_SINK_STATS_SINK_H */
