/* SPDX-License-Identifier: MIT */
/*
 * The results document's frame of the system part: the facts "system"
 * (there when the trace has anything of the system to report: a library
 * metric of the machine, the process tree, perf or power, or a reason why
 * one was not measured; the sampler's rate and sample count, JSON-only,
 * when the machine was sampled) and the facts "system_unavailable" (every
 * group a collector said it could not measure, with its reason, and the
 * analysis's own findings: energy counters that did not move, a nominal
 * clock). The groups that another section explains (the machine, the
 * process tree, perf, power, GPU) are JSON-only there: the text report
 * and the page list the others under "other metrics".
 */
#include <string.h>

#include "analyze.h"
#include "internal.h"
#include "analyze/system.h"
#include "results/doc.h"

static int has_prefix(const char *s, const char *p) {
  return strncmp(s, p, strlen(p)) == 0;
}

/* Groups a section of their own explains; keys starting "perf" belong to
 * the perf section, "gpu" to the GPU section. */
static int explained_elsewhere(const char *g) {
  static const char *const groups[] = {
      "sys",    "cpu",       "loadavg",     "meminfo", "psi_cpu", "psi_memory",
      "psi_io", "cpufreq",   "throttle",    "hwmon",   "thermal", "numa",
      "proc",   "proc_stat", "proc_status", "proc_io", "power",   "energy",
      "rapl",   "threads",   NULL};
  if (has_prefix(g, "perf") || has_prefix(g, "gpu"))
    return 1;
  for (size_t i = 0; groups[i]; i++)
    if (strcmp(g, groups[i]) == 0)
      return 1;
  return 0;
}

/* True when meta[i] is the last entry with its key (the one that counts). */
static int meta_is_last(const pp_trace *t, size_t i) {
  for (size_t j = i + 1; j < t->nmeta; j++)
    if (t->meta[j].key && strcmp(t->meta[j].key, t->meta[i].key) == 0)
      return 0;
  return 1;
}

static int unavailable(const pp_analysis *a, const pp_system *s, pp_doc *d) {
  const pp_trace *t = a->trace;
  pp_table *u = pp_doc_facts(d, "system_unavailable", "other metrics",
                             NULL);
  if (!u)
    return -1;
  static const char prefix[] = "unavailable.";
  for (size_t i = 0; i < t->nmeta; i++) {
    const pp_meta *m = &t->meta[i];
    if (!m->key || !has_prefix(m->key, prefix) || !meta_is_last(t, i))
      continue;
    const char *g = m->key + strlen(prefix);
    long r = pp_fact_unavailable(u, g, g,
                                 pp_reason_strip(m->value ? m->value : ""));
    if (explained_elsewhere(g))
      pp_fact_json_only(u, r);
  }
  /* the analysis's own findings, which the energy and machine sections
   * say */
  if (!s->has_power && s->power_why == s->power_stuck)
    pp_fact_json_only(u, pp_fact_unavailable(u, "power", "power",
                                             s->power_stuck));
  if (s->core_freq.why == s->freq_nominal)
    pp_fact_json_only(u, pp_fact_unavailable(u, "cpufreq", "cpufreq",
                                             s->freq_nominal));
  return pp_doc_ok(d) ? 0 : -1;
}

int pp__system_facts(const pp_analysis *a, const pp_system *s, pp_doc *d) {
  if (!s->any)
    return 0;
  pp_table *t = pp_doc_facts(d, "system", "", NULL);
  if (!t)
    return -1;
  if (s->has_host) {
    if (s->has_hz)
      pp_fact_json_only(t, pp_fact_num(t, "sampler_hz", "sampler rate",
                                       s->hz, PP_VALUE_RATE));
    pp_fact_json_only(t, pp_fact_int(t, "samples", "samples",
                                     (int64_t)s->samples, PP_VALUE_COUNT));
  }
  return pp_doc_ok(d) ? unavailable(a, s, d) : -1;
}
