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
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "format/pptrace.h"
#include "internal.h"
#include "pipeline.h"

typedef struct req_ev {
  int64_t ts;
  uint64_t id;
  uint64_t extra;
  uint64_t seq; /* input order, for a stable sort */
  uint32_t pid; /* ids are per process in merged traces */
  uint8_t type;
} req_ev;

/* One request as rebuilt from its events. */
typedef struct req {
  int64_t begin, first, end, last_tok;
  uint64_t tokens, chunks;
  size_t ev_from, ev_to; /* its events in the sorted array */
  int status, ended, has_first;
} req;

static int type_rank(uint8_t type) {
  switch (type) {
  case PPT_EV_REQ_BEGIN:
    return 0;
  case PPT_EV_REQ_FIRST:
    return 1;
  case PPT_EV_REQ_TOKENS:
    return 2;
  default:
    return 3;
  }
}

static int cmp_ev(const void *a, const void *b) {
  const req_ev *x = a, *y = b;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  if (x->id != y->id)
    return x->id < y->id ? -1 : 1;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  int rx = type_rank(x->type), ry = type_rank(y->type);
  if (rx != ry)
    return rx < ry ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_req_begin(const void *a, const void *b) {
  const req *x = a, *y = b;
  if (x->begin != y->begin)
    return x->begin < y->begin ? -1 : 1;
  return x->ev_from < y->ev_from ? -1 : x->ev_from > y->ev_from;
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

static int batch_stats(const pp_trace *t, pp_request_stats *r) {
  size_t cap = 0;
  for (size_t i = 0; i < t->nthreads; i++) {
    const pp_thread *th = &t->threads[i];
    for (size_t j = 0; j < th->nev; j++) {
      const pp_event *e = &th->ev[j];
      if (e->type != PPT_EV_BATCH)
        continue;
      uint64_t size = e->v.id, padded = e->v2 < size ? size : e->v2;
      r->batches++;
      r->batch_items += size;
      r->batch_padded += padded;
      uint32_t s32 = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
      size_t k = 0;
      while (k < r->nsizes && r->sizes[k].size != s32)
        k++;
      if (k == r->nsizes) {
        if (pp__grow((void **)&r->sizes, &cap, r->nsizes + 1,
                     sizeof *r->sizes) != 0)
          return -1;
        r->sizes[r->nsizes++] = (pp_batch_size){s32, 0};
      }
      r->sizes[k].batches++;
    }
  }
  if (r->nsizes > 1)
    qsort(r->sizes, r->nsizes, sizeof *r->sizes, cmp_size);
  if (r->batches)
    r->batch_mean = (double)r->batch_items / (double)r->batches;
  if (r->batch_padded)
    r->padding_waste =
        1.0 - (double)r->batch_items / (double)r->batch_padded;
  return 0;
}

static int meets_slo(const pp_slo *s, const req *q) {
  int64_t e2e = pp__span(q->begin, q->end);
  if (s->e2e_ns && e2e > s->e2e_ns)
    return 0;
  if (s->ttft_ns &&
      (!q->has_first || pp__span(q->begin, q->first) > s->ttft_ns))
    return 0;
  if (s->tpot_ns && q->has_first && q->tokens > 1) {
    double tpot =
        (double)pp__span(q->first, q->end) / (double)(q->tokens - 1);
    if (tpot > (double)s->tpot_ns)
      return 0;
  }
  return 1;
}

int pp_analyze_requests(pp_trace *t) {
  if (!t)
    return -1;
  pp_request_stats *r = &t->prof.req;
  pp_request_stats_free(r);
  pp_hist_init(&r->e2e);
  pp_hist_init(&r->ttft);
  pp_hist_init(&r->tpot);
  pp_hist_init(&r->itl);
  r->slo = t->req_slo;
  r->slo_set = r->slo.ttft_ns || r->slo.tpot_ns || r->slo.e2e_ns;
  if (batch_stats(t, r) != 0)
    return -1;

  size_t n = 0;
  for (size_t i = 0; i < t->nthreads; i++)
    for (size_t j = 0; j < t->threads[i].nev; j++) {
      uint8_t ty = t->threads[i].ev[j].type;
      n += ty >= PPT_EV_REQ_BEGIN && ty <= PPT_EV_REQ_END;
    }
  if (!n)
    return 0;
  req_ev *ev = pp__malloc(n * sizeof *ev);
  req *q = pp__malloc(n * sizeof *q);
  if (!ev || !q) {
    pp__free(ev);
    pp__free(q);
    return -1;
  }
  size_t k = 0;
  for (size_t i = 0; i < t->nthreads; i++)
    for (size_t j = 0; j < t->threads[i].nev; j++) {
      const pp_event *e = &t->threads[i].ev[j];
      if (e->type < PPT_EV_REQ_BEGIN || e->type > PPT_EV_REQ_END)
        continue;
      ev[k] = (req_ev){e->ts, e->v.id, e->v2, k,
                       pp_thread_pid(t, &t->threads[i]), e->type};
      k++;
    }
  qsort(ev, n, sizeof *ev, cmp_ev);

  /* Rebuild requests: per id, in time order. */
  size_t nq = 0;
  req *cur = NULL;
  for (size_t i = 0; i < n; i++) {
    const req_ev *e = &ev[i];
    if (cur &&
        (i == 0 || ev[i - 1].id != e->id || ev[i - 1].pid != e->pid)) {
      cur = NULL;
    }
    if (e->type == PPT_EV_REQ_BEGIN) {
      cur = &q[nq++];
      memset(cur, 0, sizeof *cur);
      cur->begin = e->ts;
      cur->ev_from = cur->ev_to = i;
      continue;
    }
    if (!cur || cur->ended) {
      r->orphans++;
      continue;
    }
    cur->ev_to = i;
    switch (e->type) {
    case PPT_EV_REQ_FIRST:
      if (!cur->has_first) {
        cur->has_first = 1;
        cur->first = e->ts;
      }
      break;
    case PPT_EV_REQ_TOKENS:
      if (!cur->has_first) {
        cur->has_first = 1;
        cur->first = e->ts;
      }
      cur->tokens += e->extra;
      cur->chunks++;
      cur->last_tok = e->ts;
      break;
    default: /* REQ_END */
      cur->ended = 1;
      cur->end = e->ts;
      cur->status = (int)ppt_unzigzag(e->extra);
      break;
    }
  }
  qsort(q, nq, sizeof *q, cmp_req_begin);

  uint64_t warm = t->req_warmup < nq ? t->req_warmup : nq;
  r->warmup = warm;
  int64_t first = 0, last = 0;
  int any = 0;
  for (size_t i = warm; i < nq; i++) {
    req *x = &q[i];
    r->requests++;
    if (!any || x->begin < first)
      first = x->begin;
    if (!any || x->begin > last)
      last = x->begin;
    any = 1;
    if (!x->ended) {
      r->unfinished++;
      continue;
    }
    if (x->end > last)
      last = x->end;
    if (x->status != 0) {
      r->failed++;
      continue;
    }
    r->completed++;
    /* An explicit first token with no chunk counts one token. */
    uint64_t tokens = x->chunks ? x->tokens : x->has_first ? 1 : 0;
    x->tokens = tokens;
    r->output_tokens += tokens;
    pp_hist_record(&r->e2e, pos_ns(x->begin, x->end));
    if (x->has_first)
      pp_hist_record(&r->ttft, pos_ns(x->begin, x->first));
    if (x->has_first && tokens > 1) {
      double tpot =
          (double)pos_ns(x->first, x->end) / (double)(tokens - 1);
      pp_hist_record(&r->tpot, (uint64_t)llround(tpot));
    }
    int64_t prev = 0;
    int have_prev = 0;
    for (size_t j = x->ev_from; j <= x->ev_to; j++) {
      if (ev[j].type != PPT_EV_REQ_TOKENS)
        continue;
      if (have_prev)
        pp_hist_record(&r->itl, pos_ns(prev, ev[j].ts));
      prev = ev[j].ts;
      have_prev = 1;
    }
    if (r->slo_set && meets_slo(&r->slo, x))
      r->good++;
  }
  r->span_ns = any && last > first ? last - first : 0;
  if (r->span_ns > 0) {
    double s = (double)r->span_ns / 1e9;
    r->req_per_s = (double)r->completed / s;
    r->tokens_per_s = (double)r->output_tokens / s;
    r->goodput_per_s = (double)r->good / s;
  }
  if (r->completed + r->failed)
    r->compliance = (double)r->good / (double)(r->completed + r->failed);
  pp__free(ev);
  pp__free(q);
  return 0;
}

/* ---- SLO parsing ---------------------------------------------------------- */

static int parse_dur(const char *s, size_t len, int64_t *out) {
  char num[64];
  size_t i = 0;
  while (i < len && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
    i++;
  if (i == 0 || i >= sizeof num)
    return -1;
  memcpy(num, s, i);
  num[i] = '\0';
  char *end;
  double v = strtod(num, &end);
  if (*end || !isfinite(v) || v <= 0)
    return -1;
  const char *u = s + i;
  size_t ul = len - i;
  double mul;
  if (ul == 2 && memcmp(u, "ns", 2) == 0)
    mul = 1;
  else if (ul == 2 && memcmp(u, "us", 2) == 0)
    mul = 1e3;
  else if (ul == 2 && memcmp(u, "ms", 2) == 0)
    mul = 1e6;
  else if (ul == 1 && u[0] == 's')
    mul = 1e9;
  else
    return -1;
  double ns = v * mul;
  if (ns < 1 || ns > 9e18)
    return -1;
  *out = (int64_t)llround(ns);
  return 0;
}

int pp_slo_parse(const char *spec, pp_slo *slo, char *err, size_t errlen) {
  pp_slo s = {0, 0, 0};
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
    if (!dst) {
      if (err && errlen)
        snprintf(err, errlen, "bad SLO item '%.*s': expected ttft=, "
                              "tpot= or e2e= with a duration",
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
