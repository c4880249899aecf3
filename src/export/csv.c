/* SPDX-License-Identifier: MIT */
/*
 * The per-zone table as CSV: the results document's zones table
 * (results/zones.c) through the CSV walker (doc_csv.h), one row per zone
 * site in profile order (total time, descending), its first column
 * headed "zone" as it always was. Durations are integer nanoseconds;
 * mean_ns, std_ns, wall_pct and rate_per_s are decimals; a figure with no
 * value (wall_pct without a wall time, the percentiles of a zone never
 * closed) is an empty field.
 */
#include "export/doc_csv.h"
#include "export/export.h"

int pp_export_csv(FILE *out, const pp_analysis *a) {
  if (!out || !a->trace || !a->analyzed)
    return -1;
  const pp_table *t = pp_doc_find(a->doc, "zones");
  if (!t)
    return -1;
  return pp_doc_csv(out, t, "zone");
}
