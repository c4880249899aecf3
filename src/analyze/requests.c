/* SPDX-License-Identifier: MIT */
/*
 * Request and batch analysis: pairs the REQ_BEGIN, REQ_FIRST, REQ_TOKENS
 * and REQ_END events of pp_request_*() by the caller's id across threads
 * and derives E2E latency, TTFT, TPOT and inter-token latency histograms,
 * request and token throughput, goodput against SLOs and batch statistics
 * (BATCH events) into pp_profile.req. Also the SLO parser and the
 * MLPerf-style early-stopping minimum request counts.
 *
 * Definitions (docs/formats/summary-json.md repeats them): E2E = begin to
 * end; TTFT = begin to the explicit first token, else to the first token
 * chunk; TPOT = (E2E - TTFT) / (tokens - 1) for requests with more than one
 * token; ITL = gaps between consecutive token chunks of a request, pooled.
 * Only successful requests (status 0) enter the latency figures. An id may
 * be reused: a REQ_BEGIN starts a new request, and one still open is then
 * counted unfinished.
 *
 * It is a streaming analysis (requests.h): the events come one at a time
 * in time order (model/feed.h), are gathered into requests by the one
 * request pairing table (pair/requests.h, whose policy says what is
 * unfinished, orphan or lost), and each request's figures are taken when
 * it leaves the table. pp_analyze_requests() feeds it a model in memory.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "format/pptrace.h"
#include "internal.h"
#include "model/feed.h"
#include "model/trace.h"
#include "pair/requests.h"
#include "pipeline.h"
#include "requests.h"

/* Inter-token gaps of an open request wait in chunks until its outcome is
 * known (only successful requests enter ITL). */
#define GAPS_PER_CHUNK 6
#define MAX_CHUNKS (UINT32_C(1) << 19)

typedef struct gap_chunk {
  uint64_t g[GAPS_PER_CHUNK];
  uint32_t next; /* index + 1, 0 none */
  uint32_t n;
} gap_chunk;

struct pp_req_stream {
  pp_req_table tab;
  uint64_t warmup;
  pp_request_stats r;
  int64_t first, last; /* begins and ends of the counted requests */
  int any;
  size_t cap_sizes;
  gap_chunk *chunk;
  size_t nchunk, cap_chunk;
  uint32_t free_chunk; /* index + 1 of the first free chunk, 0 none */
  int err;
};

/* A request's user fields: user[0] = first chunk + 1 | (last chunk + 1)
 * << 32, user[1] = gaps that found no room. */
static uint32_t chunk_head(const pp_req *q) { return (uint32_t)q->user[0]; }
static uint32_t chunk_tail(const pp_req *q) {
  return (uint32_t)(q->user[0] >> 32);
}

static uint32_t chunk_new(pp_req_stream *s) {
  uint32_t k = s->free_chunk;
  if (k) {
    s->free_chunk = s->chunk[k - 1].next;
  } else {
    if (s->nchunk >= MAX_CHUNKS ||
        pp__grow((void **)&s->chunk, &s->cap_chunk, s->nchunk + 1,
                 sizeof *s->chunk) != 0)
      return 0;
    k = (uint32_t)++s->nchunk;
  }
  s->chunk[k - 1].next = 0;
  s->chunk[k - 1].n = 0;
  return k;
}

static void gap_push(pp_req_stream *s, pp_req *q, uint64_t gap) {
  uint32_t tail = chunk_tail(q);
  if (!tail || s->chunk[tail - 1].n == GAPS_PER_CHUNK) {
    uint32_t k = chunk_new(s);
    if (!k) {
      q->user[1]++;
      return;
    }
    if (tail)
      s->chunk[tail - 1].next = k;
    else
      q->user[0] = k;
    q->user[0] = (q->user[0] & UINT32_MAX) | (uint64_t)k << 32;
    tail = k;
  }
  gap_chunk *c = &s->chunk[tail - 1];
  c->g[c->n++] = gap;
}

/* Hand q's gaps to itl (when itl is not NULL) and free their chunks. */
static void gaps_release(pp_req_stream *s, const pp_req *q, pp_hist *itl) {
  for (uint32_t k = chunk_head(q); k;) {
    gap_chunk *c = &s->chunk[k - 1];
    if (itl)
      for (uint32_t i = 0; i < c->n; i++)
        pp_hist_record(itl, c->g[i]);
    uint32_t next = c->next;
    c->next = s->free_chunk;
    s->free_chunk = k;
    k = next;
  }
  if (itl)
    itl->lost += q->user[1];
}

static int cmp_size(const void *a, const void *b) {
  const pp_batch_size *x = a, *y = b;
  return x->size < y->size ? -1 : x->size > y->size;
}

void pp_request_stats_free(pp_request_stats *r) {
  if (!r)
    return;
  pp_hist_free(&r->e2e);
  pp_hist_free(&r->ttft);
  pp_hist_free(&r->tpot);
  pp_hist_free(&r->itl);
  pp__free(r->sizes);
  memset(r, 0, sizeof *r);
}

/* b - a when positive, else 0 (saturated: a damaged trace holds any time). */
static uint64_t pos_ns(int64_t a, int64_t b) {
  return (uint64_t)pp__span(a, b);
}

static int batch_add(pp_req_stream *s, const pp_event *e) {
  pp_request_stats *r = &s->r;
  uint64_t size = e->v.id, padded = e->v2 < size ? size : e->v2;
  r->batches++;
  r->batch_items += size;
  r->batch_padded += padded;
  uint32_t s32 = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
  size_t k = 0;
  while (k < r->nsizes && r->sizes[k].size != s32)
    k++;
  if (k == r->nsizes) {
    if (pp__grow((void **)&r->sizes, &s->cap_sizes, r->nsizes + 1,
                 sizeof *r->sizes) != 0)
      return -1;
    r->sizes[r->nsizes++] = (pp_batch_size){s32, 0};
  }
  r->sizes[k].batches++;
  return 0;
}

static int meets_slo(const pp_slo *s, const pp_req *q, uint64_t tokens) {
  int has_first = (q->flags & PP_REQ_FIRST) != 0;
  int64_t e2e = pp__span(q->begin, q->end);
  if (s->e2e_ns && e2e > s->e2e_ns)
    return 0;
  if (s->ttft_ns && (!has_first || pp__span(q->begin, q->first) > s->ttft_ns))
    return 0;
  if (s->tpot_ns && has_first && tokens > 1) {
    double tpot = (double)pp__span(q->first, q->end) / (double)(tokens - 1);
    if (tpot > (double)s->tpot_ns)
      return 0;
  }
  return 1;
}

/* A request leaves the pairing table: its figures. */
static void settle(void *ctx, const pp_req *q, int outcome) {
  pp_req_stream *s = ctx;
  pp_request_stats *r = &s->r;
  if (outcome == PP_REQ_ORPHANED) { /* counted by the table */
    gaps_release(s, q, NULL);
    return;
  }
  if (q->seq < s->warmup) {
    gaps_release(s, q, NULL);
    return;
  }
  r->requests++;
  if (!s->any || q->begin < s->first)
    s->first = q->begin;
  if (!s->any || q->begin > s->last)
    s->last = q->begin;
  s->any = 1;
  if (outcome != PP_REQ_DONE) {
    r->unfinished++;
    gaps_release(s, q, NULL);
    return;
  }
  if (q->end > s->last)
    s->last = q->end;
  if (q->status != 0) {
    r->failed++;
    gaps_release(s, q, NULL);
    return;
  }
  r->completed++;
  int has_first = (q->flags & PP_REQ_FIRST) != 0;
  /* An explicit first token with no chunk counts one token. */
  uint64_t tokens = q->chunks ? q->tokens : has_first ? 1 : 0;
  r->output_tokens += tokens;
  pp_hist_record(&r->e2e, pos_ns(q->begin, q->end));
  if (has_first)
    pp_hist_record(&r->ttft, pos_ns(q->begin, q->first));
  if (has_first && tokens > 1) {
    double tpot = (double)pos_ns(q->first, q->end) / (double)(tokens - 1);
    pp_hist_record(&r->tpot, (uint64_t)llround(tpot));
  }
  gaps_release(s, q, &r->itl);
  if (r->slo_set && meets_slo(&r->slo, q, tokens))
    r->good++;
}

pp_req_stream *pp__req_stream_new(uint64_t warmup, const pp_slo *slo,
                                  size_t max_open) {
  pp_req_stream *s = pp__calloc(1, sizeof *s);
  if (!s)
    return NULL;
  s->warmup = warmup;
  pp_request_stats *r = &s->r;
  pp_hist_init(&r->e2e);
  pp_hist_init(&r->ttft);
  pp_hist_init(&r->tpot);
  pp_hist_init(&r->itl);
  if (slo)
    r->slo = *slo;
  r->slo_set = r->slo.ttft_ns || r->slo.tpot_ns || r->slo.e2e_ns;
  pp__reqs_init(&s->tab, max_open, settle, s);
  return s;
}

int pp__req_stream_event(void *arg, const pp_trace *t, uint32_t thread,
                         const pp_event *e) {
  pp_req_stream *s = arg;
  if (e->type == PPT_EV_BATCH) {
    if (batch_add(s, e) != 0)
      s->err = 1;
    return s->err ? -1 : 0;
  }
  if (e->type < PPT_EV_REQ_BEGIN || e->type > PPT_EV_REQ_END)
    return 0;
  /* Ids are per process in merged traces. */
  uint32_t pid =
      thread < t->nthreads ? pp_thread_pid(t, &t->threads[thread]) : 0;
  /* Requests that ended before this event are settled: no event of
   * theirs can follow in a stream in time order. */
  pp__reqs_settle_before(&s->tab, e->ts);
  pp_req *q = pp__reqs_put(&s->tab, pid, e->v.id, e->type, e->v2, e->ts);
  /* ITL: the gap to the request's previous chunk, in stream order (time
   * order); warm-up requests need none. */
  if (q && e->type == PPT_EV_REQ_TOKENS && q->chunks > 1 &&
      !((q->flags & PP_REQ_BEGUN) && q->seq < s->warmup))
    gap_push(s, q, pos_ns(q->prev_tok, q->last_tok));
  return 0;
}

int pp__req_stream_finish(pp_req_stream *s, int64_t t_end,
                          pp_request_stats *out) {
  (void)t_end;
  pp__reqs_finish(&s->tab);
  pp_request_stats *r = &s->r;
  r->warmup = s->warmup < s->tab.c.begins ? s->warmup : s->tab.c.begins;
  r->lost = s->tab.c.lost;
  r->orphans = s->tab.c.orphans;
  r->span_ns = s->any && s->last > s->first ? s->last - s->first : 0;
  if (r->span_ns > 0) {
    double sec = (double)r->span_ns / 1e9;
    r->req_per_s = (double)r->completed / sec;
    r->tokens_per_s = (double)r->output_tokens / sec;
    r->goodput_per_s = (double)r->good / sec;
  }
  if (r->completed + r->failed)
    r->compliance = (double)r->good / (double)(r->completed + r->failed);
  if (r->nsizes > 1)
    qsort(r->sizes, r->nsizes, sizeof *r->sizes, cmp_size);
  if (r->batches)
    r->batch_mean = (double)r->batch_items / (double)r->batches;
  if (r->batch_padded)
    r->padding_waste = 1.0 - (double)r->batch_items / (double)r->batch_padded;
  *out = *r;
  memset(r, 0, sizeof *r);
  pp_hist_init(&r->e2e);
  pp_hist_init(&r->ttft);
  pp_hist_init(&r->tpot);
  pp_hist_init(&r->itl);
  return s->err ? -1 : 0;
}

void pp__req_stream_free(pp_req_stream *s) {
  if (!s)
    return;
  pp__reqs_free(&s->tab);
  pp_request_stats_free(&s->r);
  pp__free(s->chunk);
  pp__free(s);
}

int pp__requests_figures(pp_analysis *a) {
  const pp_trace *t = a->trace;
  if (!t)
    return -1;
  pp_request_stats_free(&a->prof.req);
  pp_req_stream *s = pp__req_stream_new(a->req_warmup, &a->req_slo, 0);
  if (!s)
    return -1;
  int rc =
      pp_feed_in_time_order(t, PP_REQ_STREAM_TYPES, pp__req_stream_event, s);
  if (pp__req_stream_finish(s, 0, &a->prof.req) != 0 || rc != 0)
    rc = -1;
  pp__req_stream_free(s);
  return rc;
}

/* ---- SLO parsing ---------------------------------------------------------- */

/* A positive duration of at least 1 ns. */
static int parse_dur(const char *s, size_t len, int64_t *out) {
  int64_t ns;
  if (pp__parse_duration(s, len, &ns) != 0 || ns < 1)
    return -1;
  *out = ns;
  return 0;
}

/* A zone name in an SLO: printable, no space at either end. */
static int zone_name_ok(const char *p, size_t n) {
  if (p[0] == ' ' || p[n - 1] == ' ')
    return 0;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
      return 0;
  return 1;
}

int pp_slo_parse(const char *spec, pp_slo *slo, char *err, size_t errlen) {
  pp_slo s;
  memset(&s, 0, sizeof s);
  if (err && errlen)
    err[0] = '\0';
  if (!spec || !slo || !*spec) {
    if (err && errlen)
      snprintf(err, errlen, "empty SLO specification");
    return -1;
  }
  const char *p = spec;
  while (*p) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    const char *eq = memchr(p, '=', len);
    int64_t *dst = NULL;
    size_t kl = eq ? (size_t)(eq - p) : 0;
    if (eq && kl == 4 && memcmp(p, "ttft", 4) == 0)
      dst = &s.ttft_ns;
    else if (eq && kl == 4 && memcmp(p, "tpot", 4) == 0)
      dst = &s.tpot_ns;
    else if (eq && kl == 3 && memcmp(p, "e2e", 3) == 0)
      dst = &s.e2e_ns;
    else if (eq && kl > 0 && kl < PP_SLO_NAME_MAX && zone_name_ok(p, kl)) {
      if (s.nzones == PP_SLO_ZONES_MAX) {
        if (err && errlen)
          snprintf(err, errlen, "more than %d zone SLOs", PP_SLO_ZONES_MAX);
        return -1;
      }
      pp_slo_zone *z = &s.zone[s.nzones++];
      memcpy(z->name, p, kl);
      z->name[kl] = 0;
      dst = &z->limit_ns;
    }
    if (!dst) {
      if (err && errlen)
        snprintf(err, errlen, "bad SLO item '%.*s': expected ttft=, "
                              "tpot=, e2e= or ZONE= with a duration",
                 (int)(len > 64 ? 64 : len), p);
      return -1;
    }
    if (parse_dur(eq + 1, len - kl - 1, dst) != 0) {
      if (err && errlen)
        snprintf(err, errlen, "bad SLO duration '%.*s': expected a "
                              "positive number with ns, us, ms or s",
                 (int)(len - kl - 1 > 64 ? 64 : len - kl - 1), eq + 1);
      return -1;
    }
    if (!comma)
      break;
    p = comma + 1;
    if (!*p) {
      if (err && errlen)
        snprintf(err, errlen, "bad SLO specification: trailing ','");
      return -1;
    }
  }
  *slo = s;
  return 0;
}

/* ---- MLPerf-style minimum counts ------------------------------------------ */

/* log of the binomial probability P[X = k], X ~ Binomial(n, q). */
static double log_binom_pmf(uint64_t n, uint64_t k, double q) {
  return lgamma((double)n + 1) - lgamma((double)k + 1) -
         lgamma((double)(n - k) + 1) + (double)k * log(q) +
         (double)(n - k) * log1p(-q);
}

static double binom_cdf(uint64_t n, uint64_t h, double q) {
  double cdf = 0;
  for (uint64_t k = 0; k <= h && k <= n; k++)
    cdf += exp(log_binom_pmf(n, k, q));
  return cdf;
}

uint64_t pp_request_min_count(double pct, double confidence, uint64_t over) {
  if (!(pct > 0 && pct < 100) || !(confidence > 0 && confidence < 1) ||
      over > 100000)
    return 0;
  double q = 1.0 - pct / 100.0, alpha = 1.0 - confidence;
  uint64_t h = over + 1;
  /* The tail probability falls as n grows: double, then bisect. */
  uint64_t lo = h, hi = h + 1;
  while (binom_cdf(hi, h, q) > alpha) {
    lo = hi;
    if (hi > (UINT64_C(1) << 40))
      return 0;
    hi *= 2;
  }
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (binom_cdf(mid, h, q) > alpha)
      lo = mid;
    else
      hi = mid;
  }
  return hi;
}

/* ---- zone SLOs ------------------------------------------------------------ */

int pp_zone_slo_get(const pp_analysis *a, size_t i, pp_zone_slo *o) {
  memset(o, 0, sizeof *o);
  o->compliance_pct = o->compliance_hi_pct = NAN;
  if (!a || !a->analyzed || i >= a->req_slo.nzones)
    return -1;
  const pp_slo_zone *z = &a->req_slo.zone[i];
  o->name = z->name;
  o->limit_ns = z->limit_ns;
  const pp_trace *t = a->trace;
  pp_hist h;
  pp_hist_init(&h);
  int rc = 0;
  for (size_t k = 0; k < a->prof.nzones && !rc; k++) {
    const pp_zone_stats *zs = &a->prof.zones[k];
    if (strcmp(pp_trace_loc_name(t, zs->loc), z->name) != 0)
      continue;
    o->found = 1;
    rc = pp_hist_merge(&h, &zs->hist);
  }
  if (!rc && h.count) {
    uint64_t lim = (uint64_t)z->limit_ns;
    uint64_t lo = pp_hist_lowest_equivalent(lim);
    uint64_t hi = pp_hist_highest_equivalent(lim);
    /* buckets wholly at or below the limit, and wholly above it; the
     * limit's own bucket is met up to the limit only where it ends there
     * or the recorded extremes decide */
    uint64_t surely = lo ? pp_hist_count_le(&h, lo - 1) : 0;
    uint64_t upto_hi = pp_hist_count_le(&h, hi);
    o->count = h.count;
    if (h.max <= lim) {
      o->met = h.count;
    } else if (h.min > lim) {
      o->violations = h.count;
    } else {
      o->met = hi == lim ? upto_hi : surely;
      o->uncertain = hi == lim ? 0 : upto_hi - surely;
      o->violations = h.count - o->met - o->uncertain;
    }
    o->compliance_pct = (double)o->met / (double)h.count * 100.0;
    o->compliance_hi_pct =
        (double)(o->met + o->uncertain) / (double)h.count * 100.0;
  }
  pp_hist_free(&h);
  return rc ? -1 : 0;
}
