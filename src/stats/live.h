/* SPDX-License-Identifier: MIT */
/*
 * Building blocks of the live statistics (docs/live.md): a compact
 * log-linear histogram for one interval, a rolling window of such
 * histograms (a ring of per-interval histograms merged on query), an
 * exponentially weighted moving average with time-constant semantics, and
 * a robust anomaly detector (rolling median and MAD).
 *
 * Plain data structures with no session state and no locking: the
 * session's writer thread owns them (src/sink/live.c).
 *
 * Invariants: pp_lhist counts equal the sum of its counters; a pp_roll
 * slot holds the interval number it was last reset for (-1: never), and a
 * value is only ever added to the slot of its own interval.
 */
#ifndef PP_STATS_LIVE_H
#define PP_STATS_LIVE_H

#include <stddef.h>
#include <stdint.h>

/* ---- compact histogram ---------------------------------------------------
 * 32 linear sub-buckets per power of two (values below 32 exact): any
 * reported percentile is within 1/32 (3.1%) of a recorded value. Counters
 * cover only the powers of two touched (one 128-byte group each, grown on
 * demand), so a zone whose durations span three decades costs about 1.3 KiB
 * per interval. Recording allocates only when a value falls outside the
 * groups held; when that fails the value is counted in lost. */
#define PP_LHIST_SUB 32u
#define PP_LHIST_GROUPS 60u /* group g >= 1 holds [2^(g+4), 2^(g+5)) */

typedef struct pp_lhist {
  uint32_t *c;        /* counters of groups [glo, ghi] */
  uint16_t glo, ghi;  /* valid when c != NULL */
  uint64_t count, lost;
  uint64_t min, max;  /* min UINT64_MAX, max 0 when empty */
  double sum;
} pp_lhist;

void pp_lhist_init(pp_lhist *h);
void pp_lhist_free(pp_lhist *h);
/* Empty h, keeping its counters' memory. */
void pp_lhist_reset(pp_lhist *h);
void pp__lhist_record_slow(pp_lhist *h, uint64_t v);
static inline unsigned pp_lhist_index(uint64_t v);
/* Count v. Inline: the live sink records a value per zone; the slow path
 * (a group not held yet, or a full counter) is out of line. */
static inline void pp_lhist_record(pp_lhist *h, uint64_t v) {
  unsigned ix = pp_lhist_index(v), g = ix / PP_LHIST_SUB;
  if (__builtin_expect(!h->c || g < h->glo || g > h->ghi, 0)) {
    pp__lhist_record_slow(h, v);
    return;
  }
  uint32_t *c = &h->c[ix - (unsigned)h->glo * PP_LHIST_SUB];
  if (__builtin_expect(*c == UINT32_MAX, 0)) {
    h->lost++;
    return;
  }
  ++*c;
  h->count++;
  h->sum += (double)v;
  if (v < h->min)
    h->min = v;
  if (v > h->max)
    h->max = v;
}
/* Count n values in bucket index (counts only: min, max and sum are the
 * caller's). Returns 0, or -1 when out of memory (n goes to lost). */
int pp_lhist_add_n(pp_lhist *h, unsigned index, uint64_t n);
/* out = what cur counts beyond prev, two cumulative histograms of one
 * source (prev an earlier look at it; a bucket where prev holds more, a
 * look that saw a value twice, counts nothing). out->min and
 * max are the bounds of its lowest and highest non-empty buckets, its sum
 * 0. Returns 0 or -1 (out of memory). */
int pp_lhist_delta(pp_lhist *out, const pp_lhist *cur, const pp_lhist *prev);
/* dst += src. Returns 0, or -1 when out of memory (src's count then goes to
 * dst->lost). */
int pp_lhist_merge(pp_lhist *dst, const pp_lhist *src);
/* Value at percentile p (0..100): the highest value of the bucket holding
 * the ceil(p/100 * count)-th smallest value (at least the first), clamped
 * to [min, max]. 0 when empty. */
uint64_t pp_lhist_percentile(const pp_lhist *h, double p);
/* Bucket geometry: index of v's bucket and its highest value. */
static inline unsigned pp_lhist_index(uint64_t v) {
  if (v < PP_LHIST_SUB)
    return (unsigned)v;
  unsigned o = 63u - (unsigned)__builtin_clzll(v); /* 5..63 */
  unsigned sub = (unsigned)(v >> (o - 5u)) & (PP_LHIST_SUB - 1u);
  return (o - 4u) * PP_LHIST_SUB + sub;
}
uint64_t pp_lhist_highest(unsigned index);
/* Values of h at or below v, by bucket: *below those in buckets wholly at
 * or below v, *at those in v's own bucket when it reaches above v (they may
 * be either side); the rest are above. Exact where the extremes decide
 * (max <= v: all below; min > v: none). */
void pp_lhist_split(const pp_lhist *h, uint64_t v, uint64_t *below,
                    uint64_t *at);
uint64_t pp_lhist_lowest(unsigned index);

/* ---- rolling window ------------------------------------------------------
 * A ring of PP_ROLL_SLOTS per-interval histograms keyed by interval number.
 * Windows of up to PP_ROLL_MAX_WINDOW intervals ending at any of the last
 * few intervals can be merged; the spare slots hold the interval being
 * filled and late values of recent ones. */
#define PP_ROLL_SLOTS 64u
#define PP_ROLL_MAX_WINDOW 60u

typedef struct pp_roll {
  pp_lhist slot[PP_ROLL_SLOTS];
  int64_t ix[PP_ROLL_SLOTS]; /* interval each slot holds, -1 none */
} pp_roll;

void pp_roll_init(pp_roll *r);
void pp_roll_free(pp_roll *r);
/* Record v in interval i (>= 0). Returns 0, or -1 when interval i has
 * left the ring (older than PP_ROLL_SLOTS - 1 intervals before a newer one
 * recorded in its slot): the value is not recorded. */
/* The histogram of interval i, emptied when its slot held an older one;
 * NULL when i < 0 or a newer interval owns the slot. */
static inline pp_lhist *pp__roll_slot(pp_roll *r, int64_t i) {
  if (i < 0)
    return NULL;
  unsigned s = (unsigned)(i % PP_ROLL_SLOTS);
  if (r->ix[s] != i) {
    if (r->ix[s] > i)
      return NULL; /* a newer interval owns the slot */
    pp_lhist_reset(&r->slot[s]);
    r->ix[s] = i;
  }
  return &r->slot[s];
}

static inline int pp_roll_record(pp_roll *r, int64_t i, uint64_t v) {
  pp_lhist *h = pp__roll_slot(r, i);
  if (!h)
    return -1;
  pp_lhist_record(h, v);
  return 0;
}
/* Merge h into interval i (as pp_roll_record does a value). Returns 0, or
 * -1 when interval i has left the ring or memory ran out. */
int pp_roll_merge(pp_roll *r, int64_t i, const pp_lhist *h);
/* Merge intervals [last - n + 1, last] (n in 1..PP_ROLL_MAX_WINDOW) into
 * out (reset first). Intervals with no value count as empty. Returns 0 or
 * -1 (out of memory). */
int pp_roll_window(const pp_roll *r, int64_t last, unsigned n, pp_lhist *out);
/* Values recorded in interval i (0 when not held). */
uint64_t pp_roll_count(const pp_roll *r, int64_t i);

/* ---- EWMA ----------------------------------------------------------------
 * x is folded in with weight 1 - exp(-dt / tau), so that after a step the
 * average has moved 63% of the way in tau seconds whatever the spacing of
 * the updates (irregular intervals are handled by their dt). The first
 * update sets the value. */
typedef struct pp_ewma {
  double tau_s;
  double value;
  int have;
} pp_ewma;

void pp_ewma_init(pp_ewma *e, double tau_s);
void pp_ewma_update(pp_ewma *e, double x, double dt_s);

/* ---- robust detector -----------------------------------------------------
 * Keeps the last `history` values. A value x is anomalous when at least
 * min_values are held and |x - median| > k * 1.4826 * MAD', where MAD' is
 * the median absolute deviation raised to a floor: at least floor_rel *
 * |median|, floor_abs, and (poisson_t > 0, for rates measured over
 * poisson_t seconds) sqrt(max(|median| * poisson_t, 1)) / poisson_t, the
 * Poisson noise of a count (at least that of one event). 1.4826 * MAD estimates the standard deviation of normal data, so
 * k = 5 is a 5-sigma test that outliers in the history cannot inflate.
 *
 * Episodes: the first anomalous value starts an episode (PP_DETECT_START);
 * while values stay anomalous in the same direction it continues; the
 * first normal value ends it (PP_DETECT_END). Every value, anomalous or
 * not, joins the history afterwards, so a lasting new level becomes the
 * baseline once it fills half the history. */
#define PP_DETECT_MAX_HISTORY 256u

enum {
  PP_DETECT_BOTH = 0, /* flag values above and below */
  PP_DETECT_UP = 1,   /* only above (latencies) */
  PP_DETECT_DOWN = 2
};

typedef enum pp_detect_result {
  PP_DETECT_NONE = 0,     /* normal, no episode */
  PP_DETECT_START = 1,    /* anomalous: an episode begins */
  PP_DETECT_ONGOING = 2,  /* anomalous, episode already running */
  PP_DETECT_END = 3       /* normal again: the episode is over */
} pp_detect_result;

typedef struct pp_detector_cfg {
  double k;           /* default 5 */
  unsigned history;   /* values kept, 1..PP_DETECT_MAX_HISTORY; default 60 */
  unsigned min_values;/* values needed before any flag; default 10 */
  double floor_rel;   /* default 0.05 */
  double floor_abs;   /* default 0 */
  double poisson_t;   /* seconds per value for rate series, else 0 */
  int direction;      /* PP_DETECT_* */
} pp_detector_cfg;

typedef struct pp_detector {
  pp_detector_cfg cfg;
  double *hist;       /* ring of cfg.history values */
  unsigned n, head;   /* values held, next write position */
  int active;         /* episode direction: 0 none, 1 up, -1 down */
  /* figures of the last step, for messages */
  double median, mad, threshold;
} pp_detector;

void pp_detector_cfg_default(pp_detector_cfg *c);
/* Returns 0, or -1 when out of memory or the configuration is invalid. */
int pp_detector_init(pp_detector *d, const pp_detector_cfg *c);
void pp_detector_free(pp_detector *d);
/* Judge x against the history, then add it. Fills d->median, d->mad (the
 * floored MAD) and d->threshold (the bound x was compared with: median +
 * or - k * 1.4826 * MAD'; the upper one when x is at the median). */
pp_detect_result pp_detector_step(pp_detector *d, double x);

/* Median of n values (n >= 1); reorders v. */
double pp_median(double *v, size_t n);

#endif /* PP_STATS_LIVE_H */
