/* SPDX-License-Identifier: MIT */
/*
 * The STATS payload walker (stats_payload.h): each section's count, then
 * its records decoded with records.h's layouts and handed to a visitor.
 */
#include <string.h>

#include "pptrace.h"
#include "stats_payload.h"

/* A section's count, refused past max. */
static int section(ppt_cursor *c, uint64_t max, uint64_t *n) {
  ppt_count k;
  if (ppt_count_get(c, &k) != 0 || k.n > max)
    return -1;
  *n = k.n;
  return 0;
}

static int zones(ppt_cursor *c, const ppt_stats_visitor *v, void *arg) {
  uint64_t n;
  if (section(c, PPT_STATS_SITES_MAX, &n) != 0)
    return -1;
  for (uint64_t i = 0; i < n; i++) {
    pp_hist h, sh;
    pp_hist_init(&h);
    pp_hist_init(&sh);
    ppt_stats_zone r;
    r.hist = (ppt_hist){NULL, &h};
    r.self_hist = (ppt_hist){NULL, &sh};
    int rc = ppt_stats_zone_get(c, &r) != 0 || (v->zone && v->zone(arg, &r));
    pp_hist_free(&h);
    pp_hist_free(&sh);
    if (rc)
      return -1;
  }
  return 0;
}

static int threads(ppt_cursor *c, const ppt_stats_visitor *v, void *arg) {
  uint64_t n;
  if (section(c, PPT_STATS_THREADS_MAX, &n) != 0)
    return -1;
  for (uint64_t i = 0; i < n; i++) {
    ppt_stats_thread r;
    if (ppt_stats_thread_get(c, &r) != 0 || (v->thread && v->thread(arg, &r)))
      return -1;
  }
  return 0;
}

static int frames(ppt_cursor *c, const ppt_stats_visitor *v, void *arg) {
  uint64_t n;
  if (section(c, PPT_STATS_SITES_MAX, &n) != 0)
    return -1;
  for (uint64_t i = 0; i < n; i++) {
    pp_hist h;
    pp_hist_init(&h);
    ppt_stats_frame r;
    r.hist = (ppt_hist){NULL, &h};
    int rc = ppt_stats_frame_get(c, &r) != 0 || (v->frame && v->frame(arg, &r));
    pp_hist_free(&h);
    if (rc)
      return -1;
  }
  return 0;
}

static int counters(ppt_cursor *c, const ppt_stats_visitor *v, void *arg) {
  uint64_t n;
  if (section(c, PPT_STATS_SITES_MAX, &n) != 0)
    return -1;
  for (uint64_t i = 0; i < n; i++) {
    ppt_stats_counter r;
    if (ppt_stats_counter_get(c, &r) != 0 ||
        (v->counter && v->counter(arg, &r)))
      return -1;
  }
  return 0;
}

/* Since 1.3: GPU zone records, each framed by its length, in increasing
 * (site, device, stream) order, each with zones; then the zones lost. */
static int gpu(ppt_cursor *c, const ppt_stats_visitor *v, void *arg) {
  uint64_t n;
  if (section(c, PPT_STATS_GPU_MAX, &n) != 0)
    return -1;
  uint64_t loc = 0, device = 0, stream = 0;
  for (uint64_t i = 0; i < n; i++) {
    pp_hist h;
    pp_hist_init(&h);
    ppt_stats_gpu r;
    r.hist = (ppt_hist){NULL, &h};
    int bad = ppt_stats_gpu_get_framed(c, &r) != 0 || !r.count;
    int ordered = i == 0 || r.loc > loc ||
                  (r.loc == loc && (r.device > device ||
                                    (r.device == device && r.stream > stream)));
    bad = bad || !ordered || (v->gpu && v->gpu(arg, &r));
    loc = r.loc;
    device = r.device;
    stream = r.stream;
    pp_hist_free(&h);
    if (bad)
      return -1;
  }
  ppt_count lost;
  if (ppt_count_get(c, &lost) != 0 || (v->gpu_lost && v->gpu_lost(arg, lost.n)))
    return -1;
  return 0;
}

int ppt_stats_walk(const unsigned char *p, size_t n, const ppt_stats_visitor *v,
                   void *arg, size_t *good) {
  ppt_cursor c = {p, p + n, 0};
  ppt_stats_totals tot;
  if (zones(&c, v, arg) != 0 || threads(&c, v, arg) != 0 ||
      frames(&c, v, arg) != 0 || counters(&c, v, arg) != 0 ||
      ppt_stats_totals_get(&c, &tot) != 0 ||
      (v->totals && v->totals(arg, &tot)))
    return -1;
  if (good)
    *good = (size_t)(c.p - p);
  if (c.p == c.end)
    return 0;
  if (gpu(&c, v, arg) != 0) /* 1.3 */
    return 1;
  if (c.p == c.end)
    return 0;
  /* 1.4: the rest of the pairing's counts; a part cut short is ignored */
  ppt_stats_pairing pr;
  if (ppt_stats_pairing_get(&c, &pr) != 0)
    return 0;
  return v->pairing && v->pairing(arg, &pr) ? -1 : 0;
}
