/* SPDX-License-Identifier: MIT */
/*
 * The per-zone table as CSV (RFC 4180): a header row, then one row per zone
 * site in profile order (total time, descending), CRLF line ends. A field
 * holding a comma, a double quote, CR or LF is quoted, its quotes doubled;
 * other bytes pass through unchanged. Durations are integer nanoseconds;
 * mean_ns, std_ns and wall_pct are decimals (shortest exact form), and
 * wall_pct is empty when the trace has no wall time. Output is buffered
 * through the JSON writer's raw calls.
 */
#include <string.h>

#include "export/export.h"
#include "export/jsonw.h"
#include "internal.h"

static const char csv_header[] =
    "zone,function,file,line,count,total_ns,self_ns,mean_ns,std_ns,min_ns,"
    "p50_ns,p90_ns,p95_ns,p99_ns,p999_ns,max_ns,wall_pct\r\n";

static void put_field(pp_jsonw *w, const char *s) {
  if (!s)
    s = "";
  size_t n = strlen(s);
  if (strcspn(s, ",\"\r\n") == n) {
    pp_jsonw_put(w, s, n);
    return;
  }
  pp_jsonw_putc(w, '"');
  for (const char *q; (q = strchr(s, '"')) != NULL; s = q + 1) {
    pp_jsonw_put(w, s, (size_t)(q - s) + 1);
    pp_jsonw_putc(w, '"');
  }
  pp_jsonw_puts(w, s);
  pp_jsonw_putc(w, '"');
}

static void put_double(pp_jsonw *w, double v) {
  char b[32];
  size_t n = pp_jsonw_fmt_double(b, v);
  pp_jsonw_put(w, b, n); /* empty when not finite */
}

int pp_export_csv(FILE *out, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  if (!out || !t || !a->analyzed)
    return -1;
  const pp_profile *p = &a->prof;
  pp_jsonw w;
  if (pp_jsonw_init(&w, out) != 0) {
    pp_jsonw_finish(&w);
    return -1;
  }
  pp_jsonw_put(&w, csv_header, sizeof csv_header - 1);
  for (size_t i = 0; i < p->nzones; i++) {
    const pp_zone_stats *z = &p->zones[i];
    const pp_loc *l = z->loc < t->nlocs ? &t->locs[z->loc] : NULL;
    put_field(&w, pp_trace_loc_name(t, z->loc));
    pp_jsonw_putc(&w, ',');
    put_field(&w, l ? l->function : "");
    pp_jsonw_putc(&w, ',');
    put_field(&w, l ? l->file : "");
    pp_jsonw_putc(&w, ',');
    pp_jsonw_put_uint(&w, l ? l->line : 0);
    pp_jsonw_putc(&w, ',');
    pp_jsonw_put_uint(&w, z->count);
    pp_jsonw_putc(&w, ',');
    pp_jsonw_put_int(&w, z->total_ns);
    pp_jsonw_putc(&w, ',');
    pp_jsonw_put_int(&w, z->self_ns);
    pp_jsonw_putc(&w, ',');
    put_double(&w, z->mean_ns);
    pp_jsonw_putc(&w, ',');
    put_double(&w, z->std_ns);
    pp_jsonw_putc(&w, ',');
    pp_jsonw_put_int(&w, z->count ? z->min_ns : 0);
    static const double pcts[] = {50.0, 90.0, 95.0, 99.0, 99.9};
    for (size_t k = 0; k < PP__ARRAY_LEN(pcts); k++) {
      pp_jsonw_putc(&w, ',');
      pp_jsonw_put_uint(&w, pp_hist_percentile(&z->hist, pcts[k]));
    }
    pp_jsonw_putc(&w, ',');
    pp_jsonw_put_int(&w, z->count ? z->max_ns : 0);
    pp_jsonw_putc(&w, ',');
    if (p->wall_ns > 0)
      put_double(&w, (double)z->total_ns / (double)p->wall_ns * 100.0);
    pp_jsonw_put(&w, "\r\n", 2);
  }
  return pp_jsonw_finish(&w);
}
