/* SPDX-License-Identifier: MIT */
/*
 * The sites of one output file: each pp_srcloc met gets the next small id
 * (0, 1, 2...) and a SRCLOC definition, gathered until the owner writes
 * them (pp__sites_write) before any chunk that uses the ids. A flight dump
 * starts a table of its own, so that its file defines every site it uses.
 *
 * Not thread-safe: the writer thread owns it.
 */
#ifndef PP_SINK_SITES_H
#define PP_SINK_SITES_H

#include <stddef.h>
#include <stdint.h>

#include "../format/pptrace.h"
#include "out.h"
#include "pipeprof.h"

typedef struct pp__site_entry {
  const pp_srcloc *p;
  uint32_t id;
} pp__site_entry;

typedef struct pp__sites {
  pp__site_entry *map; /* open addressing, power-of-two capacity */
  size_t cap, n;       /* n: ids given, 0..n-1 */
  ppt_buf defs;        /* SRCLOC records of ids not yet written */
  int durable;         /* the session's: each new site is also recorded in
                          the durable arena (ring/arena.h) */
} pp__sites;

/* A salvager's table (src/salvage/), keyed by the sites' addresses in
 * a dead process (never dereferenced; NULL is no site's). keep: the file defines key as id
 * already (ids past every id given move the next one on); add: key gets
 * the next id and def's definition. keep returns 0, or -1 when out of
 * memory or key is there already; add the id, or UINT32_MAX then. */
int pp__sites_keep(pp__sites *s, const void *key, uint32_t id);
uint32_t pp__sites_add(pp__sites *s, const void *key, const pp_srcloc *def);
/* The id of key, or UINT32_MAX when it has none. */
uint32_t pp__sites_find(const pp__sites *s, const void *key);

/* The id of site p, defining it when new. UINT32_MAX when out of memory,
 * or p is NULL. */
uint32_t pp__sites_id(pp__sites *s, const pp_srcloc *p);
/* Write the pending definitions as a SRCLOC chunk (none: nothing). */
void pp__sites_write(pp__sites *s, pp__out *o);
/* Forget every site (ids start again at 0) and free the memory. */
void pp__sites_free(pp__sites *s);

#endif /* PP_SINK_SITES_H */
