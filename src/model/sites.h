/* SPDX-License-Identifier: MIT */
/*
 * The sites of one run's processes as one set (sites.c): when the traces
 * of a run's processes merge (a program and its forked or exec'd
 * children), a zone or mark site of a child that is the same as one of
 * the traces merged so far (same kind, name, function, file and line) is
 * that site, so the report counts a zone all the processes recorded
 * together; its threads still say which process recorded what. Other
 * kinds stay apart: a counter or frame stream of two processes would
 * interleave two series into one.
 *
 * Both roads of a merge use it the same way, so that a site gets the same
 * id in the streamed figures and in the merged trace: the site index is
 * made of the sites merged so far; the new file's sites, in their order,
 * each map to a shared site or to the next new id.
 */
#ifndef PP_MODEL_SITES_H
#define PP_MODEL_SITES_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

typedef struct pp_site_index pp_site_index;

/* An index of the n sites at locs (pointers kept: locs must outlive it,
 * or be grown only by pp_site_index_add). NULL when out of memory. */
pp_site_index *pp_site_index_new(const pp_loc *locs, size_t n);
void pp_site_index_free(pp_site_index *x);
/* The id of the indexed site that l is shared with, or -1 (a kind that is
 * never shared, or no such site). */
long pp_site_index_find(const pp_site_index *x, const pp_loc *l);

#endif /* PP_MODEL_SITES_H */
