/* SPDX-License-Identifier: MIT */
/*
 * The results document's energy: the RAPL domains' power and energy
 * ("energy_domains") and the run's totals and estimates ("energy": the
 * package's power and energy, what the run's energy is made of, per
 * frame, per call of the top zone, carbon). Energy counters that did not
 * move while the machine worked are no measurement: the table is then
 * unavailable with that reason (pp_system's power_why). The text report,
 * the summary JSON (system.energy) and the HTML page lay them out.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "internal.h"
#include "analyze/system.h"
#include "results/doc.h"

#define M(s, id) (&(s)->m[PP_METRIC_##id])

static const pp_col domain_cols[] = {
    {"name", "domain", PP_VALUE_TEXT, 0, NULL},
    {"power_mean_w", "power, mean / max", PP_VALUE_WATTS, 0, NULL},
    {"power_max_w", "power, mean / max", PP_VALUE_WATTS, 0, NULL},
    {"energy_j", "energy", PP_VALUE_JOULES, 0, NULL},
};

/* The figures of one domain: NAN (no cell) for what was not measured. */
static void domain_row(pp_table *t, const char *name, size_t len,
                       const pp_sys_fig *w, const pp_sys_fig *j) {
  long r = pp_table_row(t);
  char n[128];
  snprintf(n, sizeof n, "%.*s", (int)(len < sizeof n ? len : sizeof n - 1),
           name);
  pp_cell_text(t, r, "name", n);
  if (w->ok) {
    pp_cell_num(t, r, "power_mean_w", w->mean);
    pp_cell_num(t, r, "power_max_w", w->max);
  }
  if (j->ok)
    pp_cell_num(t, r, "energy_j", j->last);
}

/* "per frame (estimate)": the run's energy over a count of work. */
static void per(pp_table *t, const pp_system *s, const char *key,
                const char *what_key, const char *label,
                const pp_sys_energy_per *p, const char *unit) {
  if (!p->ok)
    return;
  pp_fact_json_only(t, pp_fact_text(t, what_key, "of", p->what));
  pp_row_note(t, pp_fact_num(t, key, label, p->joules, PP_VALUE_JOULES),
              "%s energy / %llu %s \"%s\"", s->energy.sources,
              (unsigned long long)p->n, unit, p->what);
}

int pp__energy_tables(const struct pp_system *s, pp_doc *d) {
  if (!s->has_power) {
    if (!s->power_why)
      return 0;
    pp_table *t = pp_doc_facts(d, "energy", "energy", NULL);
    pp_table_unavailable(t, s->power_why);
    return pp_doc_ok(d) ? 0 : -1;
  }
  pp_table *t = NULL;
  if (s->ndomains) {
    t = pp_doc_table(d, "energy_domains", "energy", "RAPL, whole host",
                     domain_cols, sizeof domain_cols / sizeof *domain_cols);
    if (!t)
      return -1;
    for (size_t i = 0; i < s->ndomains; i++)
      domain_row(t, s->domains[i].name, s->domains[i].len, &s->domains[i].w,
                 &s->domains[i].j);
  }
  /* the heading is the domains' table's when there is one */
  t = pp_doc_facts(d, "energy", s->ndomains ? "" : "energy",
                   s->ndomains ? NULL : "RAPL, whole host");
  if (!t)
    return -1;
  const pp_sys_fig *pw = M(s, POWER_PACKAGE), *pj = M(s, ENERGY_PACKAGE);
  if (pw->ok) {
    pp_fact_num(t, "package_power_mean_w", "package power, mean", pw->mean,
                PP_VALUE_WATTS);
    pp_fact_num(t, "package_power_max_w", "package power, max", pw->max,
                PP_VALUE_WATTS);
  }
  if (pj->ok)
    pp_fact_num(t, "package_energy_j", "package energy", pj->last,
                PP_VALUE_JOULES);
  if (s->has_carbon)
    pp_fact_json_only(t, pp_fact_text(t, "run_energy_sources",
                                      "the run's energy", s->energy.sources));
  per(t, s, "joules_per_frame_estimate", "frame_stream",
      "per frame (estimate)", &s->per_frame, "frames of");
  per(t, s, "joules_per_zone_call_estimate", "top_zone",
      "per call (estimate)", &s->per_call, "calls of zone");
  if (s->has_carbon) {
    pp_row_note(t,
                pp_fact_num(t, "carbon_g_estimate", "gCO2eq (estimate)",
                            s->carbon_g, PP_VALUE_NUMBER),
                "of the %s energy at %.3g gCO2eq/kWh%s", s->energy.sources,
                s->g_per_kwh,
                s->g_per_kwh_default ? ", the world average (the default)"
                                     : "");
    pp_fact_json_only(t, pp_fact_num(t, "carbon_g_per_kwh", "per kWh",
                                     s->g_per_kwh, PP_VALUE_NUMBER));
    pp_fact_json_only(t, pp_fact_bool(t, "carbon_g_per_kwh_default",
                                      "default", s->g_per_kwh_default));
  }
  return pp_doc_ok(d) ? 0 : -1;
}
