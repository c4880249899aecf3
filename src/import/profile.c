/* SPDX-License-Identifier: MIT */
/*
 * torch.profiler and ONNX Runtime profiles into the trace model
 * (profile.h). The events stream in from import/json_events.c; each
 * thread's intervals and counter samples are kept, then sorted and swept
 * into begin/end events in recording order once the file is read, when
 * the tool that wrote it is known.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/events.h"
#include "format/pptrace.h"
#include "model/reader.h"
#include "import/json_events.h"
#include "import/profile.h"
#include "internal.h"
#include "pipeprof.h"

#define MAX_THREADS 65536u
#define MAX_SITES (1u << 22)
#define NAME_MAX_BYTES 512u /* a site name built from several fields */
/* Operators by input shape: distinct (site, shapes) pairs kept, and the
 * bytes of a shapes text (longer ones are cut, and counted). */
#define MAX_SHAPES 65536u
#define SHAPE_TEXT_MAX 240u
#define NO_SHAPE UINT32_MAX

typedef struct ival {
  int64_t start, end;
  uint32_t loc, seq;
  uint32_t shape; /* index in t->shapes, or NO_SHAPE */
} ival;

typedef struct cpoint {
  int64_t ts;
  double v;
  uint32_t loc;
} cpoint;

/* A "B" event waiting for its "E": its begin. */
typedef struct mark {
  int64_t ts;
  uint32_t loc, shape;
} mark;

/* A zone open in the sweep: its span, and its direct children's summed
 * durations so far (its self time once it closes). */
typedef struct openz {
  int64_t start, end, child;
  uint32_t loc, shape;
} openz;

/* What a thread gathers while the file is read. */
typedef struct ithread {
  ival *iv;
  size_t niv, cap_iv;
  cpoint *cp;
  size_t ncp, cap_cp;
  mark *open; /* "B" events waiting for their "E" */
  size_t nopen, cap_open;
  int64_t last_ts;
  char provider[64]; /* ONNX Runtime: the provider of the thread's last
                        node, "" before the first */
  /* the sweep into begins and ends: open zones by end, innermost last */
  openz *stack;
  size_t depth, cap_stack;
  int64_t last; /* the latest start or sample swept; INT64_MIN first */
} ithread;

/* A map from byte strings to indices: open addressing on a 64-bit hash,
 * the keys kept for the comparison. */
typedef struct strmap {
  uint64_t *hash;
  uint32_t *idx; /* index + 1; 0: empty */
  char **key;
  size_t *klen;
  size_t cap, n; /* slots (a power of two), keys */
} strmap;

static uint64_t hash_bytes(const char *s, size_t n, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)s[i];
    h *= 1099511628211ull;
  }
  return h ^ (h >> 29);
}

/* The index of key, or -1 when absent (*slot: where it would go). */
static long map_find(const strmap *m, const char *k, size_t n, uint64_t h,
                     size_t *slot) {
  if (!m->cap)
    return -1;
  size_t i = (size_t)h & (m->cap - 1);
  while (m->idx[i]) {
    uint32_t x = m->idx[i] - 1;
    if (m->hash[i] == h && m->klen[x] == n && memcmp(m->key[x], k, n) == 0)
      return (long)x;
    i = (i + 1) & (m->cap - 1);
  }
  *slot = i;
  return -1;
}

static int map_grow(strmap *m) {
  size_t cap = m->cap ? m->cap * 2 : 64;
  uint64_t *h = pp__calloc(cap, sizeof *h);
  uint32_t *ix = pp__calloc(cap, sizeof *ix);
  char **k = pp__realloc(m->key, cap / 2 * sizeof *k);
  size_t *kl = k ? pp__realloc(m->klen, cap / 2 * sizeof *kl) : NULL;
  if (k)
    m->key = k;
  if (kl)
    m->klen = kl;
  if (!h || !ix || !k || !kl) {
    pp__free(h);
    pp__free(ix);
    return -1;
  }
  for (size_t i = 0; i < m->cap; i++)
    if (m->idx[i]) {
      size_t j = (size_t)m->hash[i] & (cap - 1);
      while (ix[j])
        j = (j + 1) & (cap - 1);
      h[j] = m->hash[i];
      ix[j] = m->idx[i];
    }
  pp__free(m->hash);
  pp__free(m->idx);
  m->hash = h;
  m->idx = ix;
  m->cap = cap;
  return 0;
}

/* Add key (absent) as index m->n. 0, or -1 when out of memory. */
static int map_add(strmap *m, const char *k, size_t n, uint64_t h) {
  size_t slot = 0;
  if ((m->n + 1) * 2 > m->cap && map_grow(m) != 0)
    return -1;
  (void)map_find(m, k, n, h, &slot);
  char *copy = pp__malloc(n + 1);
  if (!copy)
    return -1;
  memcpy(copy, k, n);
  copy[n] = '\0';
  m->key[m->n] = copy;
  m->klen[m->n] = n;
  m->hash[slot] = h;
  m->idx[slot] = (uint32_t)++m->n;
  return 0;
}

static void map_free(strmap *m) {
  for (size_t i = 0; i < m->n; i++)
    pp__free(m->key[i]);
  pp__free(m->key);
  pp__free(m->klen);
  pp__free(m->hash);
  pp__free(m->idx);
  memset(m, 0, sizeof *m);
}

/* Which tool wrote the file, as far as the events tell. */
typedef struct seen {
  uint64_t ort;       /* cat Session, Node, Kernel or Api */
  uint64_t kineto;    /* cat cpu_op, user_annotation, kernel, ... */
  uint64_t legacy;    /* pid "CPU functions" */
  uint64_t complete;  /* "X" events */
} seen;

typedef struct importer {
  pp_trace *t;
  ithread *th; /* one per t->threads */
  size_t cap_th;
  strmap threads, sites, shapes;
  seen s;
  uint32_t seq;
  int oom;
  const char *fail; /* a bound hit (static text), when set */
  /* counts of what was left out or changed, for META */
  uint64_t skipped_ph, fences, bad_times, clipped, unclosed, stray_ends;
  /* ONNX Runtime: changes of provider between a thread's consecutive
   * nodes, and the Memcpy nodes that move data between them */
  uint64_t transitions, copies;
  int64_t copy_ns;
  /* operators by input shape: texts cut, calls whose shapes were past
   * MAX_SHAPES (counted per site without them) */
  uint64_t shapes_cut, shapes_past;
  /* where the events go */
  const pp_import_opts *o; /* NULL: kept in memory, swept at the end */
  int streaming;           /* swept as they come (a bare array) */
  int unordered;           /* streaming met an event out of time order */
  int64_t base;            /* added to every time (Kineto's base) */
  int64_t cut;             /* the stored window's cut, when cut_set */
  int cut_set;
} importer;

/* ---- fields ---------------------------------------------------------- */

/* A JSON number of microseconds as ns, exactly for plain decimals (up to
 * three fraction digits kept, the fourth rounds). 0, or -1 when it is no
 * number or out of range. */
/* A short field as a C string in buf (size bytes): 0, or -1 when it is
 * absent, empty or too long to be a number. */
static int field_cstr(const pp_jtext *x, char *buf, size_t size) {
  if (!x->present || !x->n || x->n >= size)
    return -1;
  memcpy(buf, x->s, x->n);
  buf[x->n] = '\0';
  return 0;
}

static int us_to_ns(const pp_jtext *x, int64_t *out) {
  char buf[48];
  if (x->is_str || field_cstr(x, buf, sizeof buf) != 0)
    return -1;
  if (strpbrk(buf, "eE")) {
    char *end;
    double v = strtod(buf, &end) * 1000.0;
    if (*end || !isfinite(v) || v >= 9.2e18 || v <= -9.2e18)
      return -1;
    *out = (int64_t)llround(v);
    return 0;
  }
  const char *p = buf;
  int neg = *p == '-';
  p += neg;
  int64_t ip = 0;
  if (*p < '0' || *p > '9')
    return -1;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (ip > (INT64_MAX / 1000 - 9) / 10)
      return -1;
    ip = ip * 10 + (*p - '0');
  }
  int64_t frac = 0;
  int digits = 0, round_up = 0;
  if (*p == '.') {
    for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
      if (digits < 3)
        frac = frac * 10 + (*p - '0');
      else if (digits == 3)
        round_up = *p >= '5';
    }
    if (!digits)
      return -1;
  }
  if (*p)
    return -1;
  for (int d = digits < 3 ? digits : 3; d < 3; d++)
    frac *= 10;
  int64_t ns = ip * 1000 + frac + round_up;
  *out = neg ? -ns : ns;
  return 0;
}

/* A decimal integer field (string or number), or -1 when it is none. */
static int field_int(const pp_jtext *x, int64_t *out) {
  char buf[24];
  if (field_cstr(x, buf, sizeof buf) != 0)
    return -1;
  char *end;
  errno = 0;
  long long v = strtoll(buf, &end, 10);
  if (*end || errno || end == buf)
    return -1;
  *out = v;
  return 0;
}

/* The digits in a text such as "stream 7", or -1. */
static int64_t digits_in(const pp_jtext *x) {
  int64_t v = -1;
  for (size_t i = 0; i < x->n; i++)
    if (x->s[i] >= '0' && x->s[i] <= '9') {
      if (v < 0)
        v = 0;
      if (v > INT64_MAX / 10 - 9)
        return -1;
      v = v * 10 + (x->s[i] - '0');
    } else if (v >= 0) {
      break;
    }
  return v;
}

static const pp_jtext *arg_of(const pp_jev *e, const char *key) {
  for (size_t i = 0; i < e->nargs; i++)
    if (pp_jtext_is(&e->args[i].key, key))
      return &e->args[i].value;
  return NULL;
}

static int ends_with(const pp_jtext *x, const char *suffix) {
  size_t n = strlen(suffix);
  return x->present && x->n >= n && memcmp(x->s + x->n - n, suffix, n) == 0;
}

static int cat_in(const pp_jtext *cat, const char *const *list) {
  for (; *list; list++)
    if (pp_jtext_is(cat, *list))
      return 1;
  return 0;
}

static const char *const ort_cats[] = {"Session", "Node", "Kernel", "Api",
                                       NULL};
static const char *const kineto_cats[] = {"cpu_op",
                                          "user_annotation",
                                          "gpu_user_annotation",
                                          "python_function",
                                          "cuda_runtime",
                                          "cuda_driver",
                                          "kernel",
                                          "gpu_memcpy",
                                          "gpu_memset",
                                          "cpu_instant_event",
                                          "cuda_sync",
                                          "overhead",
                                          "Trace",
                                          NULL};
/* Device-side activity: GPU zones, not CPU zones. */
static const char *const gpu_cats[] = {"kernel", "gpu_memcpy", "gpu_memset",
                                       "Kernel", NULL};

/* ---- threads and sites ------------------------------------------------ */

/* The thread of (pid, tid); created on first sight. NULL when out of
 * memory or past MAX_THREADS (im->fail then says which). */
static size_t thread_of(importer *im, const pp_jtext *pid,
                        const pp_jtext *tid) {
  char key[2 * PP_JEV_TEXT_MAX + 2];
  size_t n = 0;
  if (pid->present)
    memcpy(key, pid->s, pid->n), n = pid->n;
  key[n++] = '\x1f';
  if (tid->present)
    memcpy(key + n, tid->s, tid->n), n += tid->n;
  uint64_t h = hash_bytes(key, n, 0);
  size_t slot;
  long i = map_find(&im->threads, key, n, h, &slot);
  if (i >= 0)
    return (size_t)i;
  pp_trace *t = im->t;
  if (t->nthreads >= MAX_THREADS) {
    im->fail = "more than 65536 threads";
    return SIZE_MAX;
  }
  if (pp__grow((void **)&t->threads, &t->cap_threads, t->nthreads + 1,
               sizeof *t->threads) != 0 ||
      pp__grow((void **)&im->th, &im->cap_th, t->nthreads + 1,
               sizeof *im->th) != 0 ||
      map_add(&im->threads, key, n, h) != 0) {
    im->oom = 1;
    return SIZE_MAX;
  }
  pp_thread *th = &t->threads[t->nthreads];
  memset(th, 0, sizeof *th);
  memset(&im->th[t->nthreads], 0, sizeof *im->th);
  im->th[t->nthreads].last = INT64_MIN;
  int64_t v;
  th->tid = field_int(tid, &v) == 0 ? (uint64_t)v : hash_bytes(key, n, 1);
  th->pid =
      field_int(pid, &v) == 0 && v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
  if (!(th->name = pp__strdup(""))) {
    im->oom = 1;
    return SIZE_MAX;
  }
  return t->nthreads++;
}

/* The site of kind `kind` called name (n bytes); space keeps apart sites
 * of one kind that must not merge (CPU and GPU zones of one name).
 * UINT32_MAX when out of memory or past MAX_SITES. */
static uint32_t site_of(importer *im, uint32_t kind, char space,
                        const char *name, size_t n) {
  char key[NAME_MAX_BYTES + PP_JEV_TEXT_MAX + 2];
  if (n > sizeof key - 2)
    n = sizeof key - 2;
  key[0] = space;
  memcpy(key + 1, name, n);
  uint64_t h = hash_bytes(key, n + 1, 0);
  size_t slot;
  long i = map_find(&im->sites, key, n + 1, h, &slot);
  if (i >= 0)
    return (uint32_t)i;
  pp_trace *t = im->t;
  if (t->nlocs >= MAX_SITES) {
    im->fail = "more than 4194304 distinct names";
    return UINT32_MAX;
  }
  if (pp__grow((void **)&t->locs, &t->cap_locs, t->nlocs + 1,
               sizeof *t->locs) != 0 ||
      map_add(&im->sites, key, n + 1, h) != 0) {
    im->oom = 1;
    return UINT32_MAX;
  }
  pp_loc *l = &t->locs[t->nlocs];
  memset(l, 0, sizeof *l);
  l->id = (uint32_t)t->nlocs;
  l->kind = kind;
  l->name = pp__malloc(n + 1);
  l->function = pp__strdup("");
  l->file = pp__strdup("");
  if (!l->name || !l->function || !l->file) {
    pp__free(l->name);
    pp__free(l->function);
    pp__free(l->file);
    im->oom = 1;
    return UINT32_MAX;
  }
  memcpy(l->name, name, n);
  l->name[n] = '\0';
  return (uint32_t)t->nlocs++;
}

/* An ONNX Runtime node of thread ti: a change of provider from the
 * thread's last node counts as a transition (nodes come in the order they
 * ran on a thread), a Memcpy node as a copy between providers. */
static void ort_node(importer *im, size_t ti, const pp_jev *e, int64_t dur) {
  const pp_jtext *op = arg_of(e, "op_name"), *pv = arg_of(e, "provider");
  if (!op || !pv || !pp_jtext_is(&e->cat, "Node"))
    return;
  if (op->n >= 6 && memcmp(op->s, "Memcpy", 6) == 0) {
    im->copies++;
    im->copy_ns = pp__add_sat(im->copy_ns, dur);
  }
  ithread *x = &im->th[ti];
  size_t n = pv->n < sizeof x->provider - 1 ? pv->n : sizeof x->provider - 1;
  if (x->provider[0] &&
      (strlen(x->provider) != n || memcmp(x->provider, pv->s, n) != 0))
    im->transitions++;
  memcpy(x->provider, pv->s, n);
  x->provider[n] = '\0';
}

/* The zone name of an event: ONNX Runtime's node kernels by operator
 * and provider ("Conv [CPU]"), everything else by its name. */
static uint32_t zone_site(importer *im, const pp_jev *e) {
  const pp_jtext *op = arg_of(e, "op_name");
  if (pp_jtext_is(&e->cat, "Node") && op && op->n) {
    char name[NAME_MAX_BYTES];
    const pp_jtext *pv = arg_of(e, "provider");
    size_t pn = pv ? pv->n : 0;
    const char *suffix = "ExecutionProvider";
    size_t sn = strlen(suffix);
    if (pn > sn && memcmp(pv->s + pn - sn, suffix, sn) == 0)
      pn -= sn;
    int len =
        snprintf(name, sizeof name, "%.*s%s%.*s%s",
                 (int)(op->n < 256 ? op->n : 256), op->s, pn ? " [" : "",
                 (int)(pn < 200 ? pn : 200), pn ? pv->s : "", pn ? "]" : "");
    if (len < 0)
      return UINT32_MAX;
    return site_of(im, PP_KIND_ZONE, 'z', name,
                   (size_t)len < sizeof name ? (size_t)len : sizeof name - 1);
  }
  return site_of(im, PP_KIND_ZONE, 'z', e->name.s ? e->name.s : "", e->name.n);
}

/* ---- input shapes ------------------------------------------------------- */

/* The shapes of an event's inputs as text (docs/import.md), in out
 * (SHAPE_TEXT_MAX + 4 bytes, NUL-terminated): torch's "Input Dims" as
 * torch prints them ("[[1, 3, 32, 32], [8], []]"), ONNX Runtime's
 * input_type_shape as "float[1, 3, 32, 32], float[8]" ("(no inputs)" for
 * none). A longer text is cut at a character's start and ends in "...";
 * *cut says so. Returns its length, or -1 when the event gives no
 * shapes (the value must be JSON, not a string). */
static long shape_text(const pp_jev *e, char *out, int *cut) {
  const pp_jtext *v = NULL;
  int ort = pp_jtext_is(&e->cat, "Node") &&
            (v = arg_of(e, "input_type_shape")) != NULL;
  if (!ort)
    v = arg_of(e, "Input Dims");
  if (!v || v->is_str || !v->n || v->s[0] != '[')
    return -1;
  const char *p = v->s, *end = v->s + v->n;
  if (ort && end[-1] == ']') { /* ONNX Runtime's list: its items */
    p++;
    end--;
  }
  size_t n = 0;
  int in_str = 0;
  *cut = 0;
  for (; p < end; p++) {
    char c = *p ? *p : '?';
    if (c == '"') {
      in_str = !in_str;
      continue;
    }
    if (!in_str && ort && (c == '{' || c == '}' || c == ':'))
      continue; /* {"float":[1,3]} reads float[1,3] */
    size_t k = !in_str && c == ',' ? 2 : 1;
    if (n + k > SHAPE_TEXT_MAX) {
      while (n && ((unsigned char)out[n] & 0xC0) == 0x80)
        n--; /* out[n] continues a UTF-8 character: cut before it */
      memcpy(out + n, "...", 3);
      n += 3;
      *cut = 1;
      break;
    }
    out[n++] = c;
    if (k == 2)
      out[n++] = ' ';
  }
  if (!n && ort) {
    memcpy(out, "(no inputs)", 11);
    n = 11;
  }
  out[n] = '\0';
  return (long)n;
}

/* The index in t->shapes of site loc's entry for the event's input
 * shapes (created empty), NO_SHAPE when the event gives none, or
 * UINT32_MAX - 1 when out of memory. Past MAX_SHAPES distinct pairs, a
 * site's further shapes share one entry without a text (counted). */
static uint32_t shape_of(importer *im, uint32_t loc, const pp_jev *e) {
  char key[5 + SHAPE_TEXT_MAX + 4];
  int cut;
  long n = shape_text(e, key + 5, &cut);
  if (n < 0)
    return NO_SHAPE;
  key[0] = 's';
  memcpy(key + 1, &loc, 4);
  size_t kn = 5 + (size_t)n;
  uint64_t h = hash_bytes(key, kn, 2);
  size_t slot;
  long i = map_find(&im->shapes, key, kn, h, &slot);
  if (i < 0 && im->shapes.n >= MAX_SHAPES) {
    key[0] = 'o'; /* the site's entry for shapes past the bound */
    kn = 5;
    h = hash_bytes(key, kn, 2);
    i = map_find(&im->shapes, key, kn, h, &slot);
    n = -1;
  }
  if (i >= 0)
    return (uint32_t)i;
  pp_trace *t = im->t;
  if (pp__grow((void **)&t->shapes, &t->cap_shapes, t->nshapes + 1,
               sizeof *t->shapes) != 0 ||
      map_add(&im->shapes, key, kn, h) != 0) {
    im->oom = 1;
    return UINT32_MAX - 1;
  }
  pp_op_shape *x = &t->shapes[t->nshapes];
  memset(x, 0, sizeof *x);
  x->loc = loc;
  if (n >= 0 && !(x->shape = pp__strdup(key + 5))) {
    im->oom = 1;
    return UINT32_MAX - 1;
  }
  im->shapes_cut += (uint64_t)(n >= 0 && cut);
  return (uint32_t)t->nshapes++;
}

/* A zone of the sweep closed (self time: its span less its direct
 * children's): its shape's figures, and its parent's children. */
static void zone_closed(importer *im, ithread *x, const openz *z) {
  int64_t dur = pp__span(z->start, z->end);
  if (x->depth)
    x->stack[x->depth - 1].child =
        pp__add_sat(x->stack[x->depth - 1].child, dur);
  if (z->shape == NO_SHAPE)
    return;
  pp_op_shape *s = &im->t->shapes[z->shape];
  s->count++;
  s->total_ns = pp__add_sat(s->total_ns, dur);
  s->self_ns = pp__add_sat(s->self_ns, dur - z->child);
  if (!s->shape)
    im->shapes_past++;
}

/* ---- events ------------------------------------------------------------ */

/* The sweep into begins and ends (below), which a streamed profile's
 * events go through as they come. */
static int sweep_interval(importer *im, size_t ti, int64_t start, int64_t end,
                          uint32_t loc, uint32_t shape);
static int sweep_counter(importer *im, size_t ti, int64_t ts, uint32_t loc,
                         double v);

static int add_interval(importer *im, size_t ti, int64_t start, int64_t end,
                        uint32_t loc, uint32_t shape) {
  ithread *x = &im->th[ti];
  if (pp__grow((void **)&x->iv, &x->cap_iv, x->niv + 1, sizeof *x->iv) != 0)
    return im->oom = 1, -1;
  x->iv[x->niv++] = (ival){start, end, loc, im->seq++, shape};
  if (end > x->last_ts)
    x->last_ts = end;
  return 0;
}

static int add_gpu(importer *im, const pp_jev *e, int64_t ts, int64_t dur) {
  pp_trace *t = im->t;
  uint32_t loc =
      site_of(im, PP_KIND_ZONE, 'g', e->name.s ? e->name.s : "", e->name.n);
  if (loc == UINT32_MAX)
    return -1;
  if (pp__grow((void **)&t->gpu, &t->cap_gpu, t->ngpu + 1, sizeof *t->gpu))
    return im->oom = 1, -1;
  int64_t device = -1, stream = -1;
  const pp_jtext *d = arg_of(e, "device"), *s = arg_of(e, "stream");
  if (!d || field_int(d, &device) != 0)
    (void)field_int(&e->pid, &device);
  if (!s || field_int(s, &stream) != 0)
    stream = digits_in(&e->tid);
  pp_gpu_zone_rec *g = &t->gpu[t->ngpu++];
  memset(g, 0, sizeof *g);
  g->start = g->launch = ts;
  g->end = ts + dur;
  g->device = device >= 0 && device <= UINT32_MAX ? (uint32_t)device : 0;
  g->stream = stream >= 0 ? (uint64_t)stream : 0;
  g->loc = loc;
  return 0;
}

static int add_counters(importer *im, size_t ti, const pp_jev *e, int64_t ts) {
  ithread *x = &im->th[ti];
  for (size_t i = 0; i < e->nargs; i++) {
    const pp_jtext *k = &e->args[i].key, *v = &e->args[i].value;
    char num[48];
    if (v->is_str || field_cstr(v, num, sizeof num) != 0)
      continue;
    char *end;
    double d = strtod(num, &end);
    if (*end || !isfinite(d))
      continue;
    char name[NAME_MAX_BYTES];
    int len = snprintf(name, sizeof name, "%.*s %.*s",
                       (int)(e->name.n < 255 ? e->name.n : 255),
                       e->name.s ? e->name.s : "",
                       (int)(k->n < 200 ? k->n : 200), k->s);
    uint32_t loc = site_of(
        im, PP_KIND_COUNTER, 'c', name,
        len > 0 && (size_t)len < sizeof name ? (size_t)len : sizeof name - 1);
    if (loc == UINT32_MAX)
      return -1;
    if (im->streaming) {
      if (sweep_counter(im, ti, ts, loc, d) != 0)
        return -1;
      continue;
    }
    if (pp__grow((void **)&x->cp, &x->cap_cp, x->ncp + 1, sizeof *x->cp))
      return im->oom = 1, -1;
    x->cp[x->ncp++] = (cpoint){ts, d, loc};
  }
  if (ts > x->last_ts)
    x->last_ts = ts;
  return 0;
}

static int name_meta(importer *im, size_t ti, const pp_jev *e) {
  const pp_jtext *v = arg_of(e, "name");
  if (!v || !v->is_str)
    return 0;
  pp_trace *t = im->t;
  if (pp_jtext_is(&e->name, "thread_name")) {
    char *s = pp__malloc(v->n + 1);
    if (!s)
      return im->oom = 1, -1;
    memcpy(s, v->s, v->n);
    s[v->n] = '\0';
    pp__free(t->threads[ti].name);
    t->threads[ti].name = s;
  } else if (pp_jtext_is(&e->name, "process_name") &&
             !pp_trace_meta(t, "process_name")) {
    char val[NAME_MAX_BYTES];
    snprintf(val, sizeof val, "%.*s", (int)(v->n < 500 ? v->n : 500), v->s);
    if (pp__meta_add(t, "process_name", val) != 0)
      return im->oom = 1, -1;
  }
  return 0;
}

static int on_event(void *arg, const pp_jdoc *doc, const pp_jev *e) {
  importer *im = arg;
  if (cat_in(&e->cat, ort_cats)) {
    im->s.ort++;
  } else if (cat_in(&e->cat, kineto_cats)) {
    im->s.kineto++;
  }
  im->s.legacy += pp_jtext_is(&e->pid, "CPU functions");
  char ph = e->ph.present && e->ph.n == 1 ? e->ph.s[0] : '\0';
  if (ph == 'M') { /* only a thread's name makes the thread exist */
    size_t ti = pp_jtext_is(&e->name, "thread_name")
                    ? thread_of(im, &e->pid, &e->tid)
                    : 0;
    return ti == SIZE_MAX ? -1 : name_meta(im, ti, e);
  }
  if (ph != 'X' && ph != 'B' && ph != 'E' && ph != 'C') {
    im->skipped_ph++;
    return 0;
  }
  if (im->streaming && (!doc->top_is_array || ph == 'B' || ph == 'E')) {
    im->unordered = 1; /* a base time may come last; B/E pair later */
    return -1;
  }
  int64_t ts, dur = 0;
  if (us_to_ns(&e->ts, &ts) != 0 ||
      (ph == 'X' && e->dur.present &&
       (us_to_ns(&e->dur, &dur) != 0 || dur < 0 || ts > INT64_MAX - dur))) {
    im->bad_times++;
    return 0;
  }
  if (ph == 'X') {
    im->s.complete++;
    if (ends_with(&e->name, "_fence_before") ||
        ends_with(&e->name, "_fence_after")) {
      im->fences++; /* ONNX Runtime's barriers around each node */
      return 0;
    }
    if (cat_in(&e->cat, gpu_cats))
      return add_gpu(im, e, ts, dur) != 0 ? -1 : 0;
  }
  size_t ti = thread_of(im, &e->pid, &e->tid);
  if (ti == SIZE_MAX)
    return -1;
  if (ph == 'C')
    return add_counters(im, ti, e, ts) != 0 ? -1 : 0;
  ithread *x = &im->th[ti];
  if (ph == 'E') {
    if (!x->nopen) {
      im->stray_ends++;
      return 0;
    }
    mark o = x->open[--x->nopen];
    return add_interval(im, ti, o.ts, ts < o.ts ? o.ts : ts, o.loc, o.shape);
  }
  uint32_t loc = zone_site(im, e);
  if (loc == UINT32_MAX)
    return -1;
  uint32_t shape = shape_of(im, loc, e);
  if (shape == UINT32_MAX - 1)
    return -1;
  if (ph == 'X')
    ort_node(im, ti, e, dur);
  if (ph == 'B') {
    if (pp__grow((void **)&x->open, &x->cap_open, x->nopen + 1,
                 sizeof *x->open) != 0)
      return im->oom = 1, -1;
    x->open[x->nopen++] = (mark){ts, loc, shape};
    if (ts > x->last_ts)
      x->last_ts = ts;
    return 0;
  }
  if (im->streaming)
    return sweep_interval(im, ti, ts, ts + dur, loc, shape);
  return add_interval(im, ti, ts, ts + dur, loc, shape);
}

/* ---- events in recording order ---------------------------------------- */

static int cmp_ival(const void *a, const void *b) {
  const ival *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  if (x->end != y->end)
    return x->end > y->end ? -1 : 1; /* the outer one first */
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_cpoint(const void *a, const void *b) {
  const cpoint *x = a, *y = b;
  return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* One event into the model: handed to the streaming consumer when there
 * is one, and stored while the window allows (as the .pptrace reader
 * does: every event before the cut, on every thread). */
static int emit(importer *im, size_t ti, int64_t ts, uint8_t type, uint32_t loc,
                double v) {
  pp_trace *t = im->t;
  pp_event e;
  memset(&e, 0, sizeof e);
  e.ts = ts + im->base;
  e.type = type;
  e.loc = loc;
  if (type == PPT_EV_COUNTER_SETF)
    e.v.f = v;
  t->diag.events++;
  if (im->o && im->o->on_event &&
      im->o->on_event(im->o->arg, t, (uint32_t)ti, &e) != 0)
    return im->oom = 1, -1;
  if (im->cut_set && e.ts >= im->cut) {
    if (e.ts < t->diag.first_unkept_ns)
      t->diag.first_unkept_ns = e.ts;
    return 0;
  }
  pp_thread *th = &t->threads[ti];
  if (pp__grow((void **)&th->ev, &th->cap_ev, th->nev + 1, sizeof *th->ev))
    return im->oom = 1, -1;
  th->ev[th->nev++] = e;
  uint64_t keep = im->o ? im->o->keep : UINT64_MAX;
  if (++t->diag.events_kept > keep)
    pp__trace_lower_cut(t, keep, &im->cut, &im->cut_set);
  return 0;
}

/* The ends of the thread's open zones that end by ts, innermost first. */
static int close_until(importer *im, size_t ti, int64_t ts) {
  ithread *x = &im->th[ti];
  while (x->depth && x->stack[x->depth - 1].end <= ts) {
    openz z = x->stack[--x->depth];
    zone_closed(im, x, &z);
    if (emit(im, ti, z.end, PPT_EV_ZONE_END, z.loc, 0) != 0)
      return -1;
  }
  return 0;
}

/* The sweep reaches ts on thread ti: what ended by then closes. Streaming,
 * a time earlier than the thread's last makes the file unordered. */
static int sweep_to(importer *im, size_t ti, int64_t ts) {
  ithread *x = &im->th[ti];
  if (ts < x->last) {
    im->unordered = 1;
    return -1;
  }
  x->last = ts;
  return close_until(im, ti, ts);
}

/* The sweep of a thread's zones in start order into nested begins and
 * ends: what ended by the start closes, a zone that outlasts its parent is
 * clipped to the parent's end (and counted). Streaming, a start earlier
 * than the thread's last makes the file unordered. */
static int sweep_interval(importer *im, size_t ti, int64_t start, int64_t end,
                          uint32_t loc, uint32_t shape) {
  if (sweep_to(im, ti, start) != 0)
    return -1;
  ithread *x = &im->th[ti];
  if (x->depth && end > x->stack[x->depth - 1].end) {
    end = x->stack[x->depth - 1].end;
    im->clipped++;
  }
  if (pp__grow((void **)&x->stack, &x->cap_stack, x->depth + 1,
               sizeof *x->stack) != 0)
    return im->oom = 1, -1;
  if (emit(im, ti, start, PPT_EV_ZONE_BEGIN, loc, 0) != 0)
    return -1;
  x->stack[x->depth++] = (openz){start, end, 0, loc, shape};
  return 0;
}

static int sweep_counter(importer *im, size_t ti, int64_t ts, uint32_t loc,
                         double v) {
  if (sweep_to(im, ti, ts) != 0 ||
      emit(im, ti, ts, PPT_EV_COUNTER_SETF, loc, v) != 0)
    return -1;
  return 0;
}

/* One thread held in memory: its intervals and counter samples sorted,
 * then swept in time order (at equal times a begin before a sample). */
static int thread_events(importer *im, size_t ti) {
  ithread *x = &im->th[ti];
  /* "B" events never ended: they end where the thread's events do */
  for (size_t i = x->nopen; i-- > 0;) {
    im->unclosed++;
    if (add_interval(im, ti, x->open[i].ts, x->last_ts, x->open[i].loc,
                     x->open[i].shape))
      return -1;
  }
  x->nopen = 0;
  pp__sort(x->iv, x->niv, sizeof *x->iv, cmp_ival);
  pp__sort(x->cp, x->ncp, sizeof *x->cp, cmp_cpoint);
  size_t i = 0, k = 0;
  while (i < x->niv || k < x->ncp) {
    int rc;
    if (k == x->ncp || (i < x->niv && x->iv[i].start <= x->cp[k].ts)) {
      rc = sweep_interval(im, ti, x->iv[i].start, x->iv[i].end, x->iv[i].loc,
                          x->iv[i].shape);
      i++;
    } else {
      rc = sweep_counter(im, ti, x->cp[k].ts, x->cp[k].loc, x->cp[k].v);
      k++;
    }
    if (rc != 0)
      return -1;
  }
  return close_until(im, ti, INT64_MAX);
}

/* ---- the whole file ----------------------------------------------------- */

static const char *source_of(const importer *im, const pp_jdoc *doc) {
  if (im->s.ort && !im->s.kineto)
    return "ONNX Runtime";
  if (doc->has_trace_events && im->s.kineto)
    return "torch.profiler (Kineto)";
  if (doc->top_is_array && im->s.legacy)
    return "torch.profiler (legacy autograd export)";
  return NULL;
}

static int meta_u64(pp_trace *t, const char *key, uint64_t v) {
  char num[24];
  snprintf(num, sizeof num, "%" PRIu64, v);
  return pp__meta_add(t, key, num);
}

/* What the file held, in words, for the refusal of a JSON that is no
 * profile of a known tool. */
static void describe(const importer *im, const pp_jdoc *doc, char *err,
                     size_t errlen) {
  snprintf(err, errlen,
           "not a torch.profiler or ONNX Runtime profile: JSON %s with %" PRIu64
           " events (%" PRIu64 " complete), none of them torch's (cat cpu_op, "
           "user_annotation, ... or pid \"CPU functions\") or ONNX Runtime's "
           "(cat Node, Session)",
           doc->top_is_array       ? "array"
           : doc->has_trace_events ? "object with traceEvents"
                                   : "object without traceEvents",
           doc->events, im->s.complete);
}

/* The earliest time of a profile read whole (before the sweep), or
 * INT64_MAX when it holds none. */
static int64_t earliest(const importer *im) {
  int64_t first = INT64_MAX;
  for (size_t i = 0; i < im->t->nthreads; i++) {
    const ithread *x = &im->th[i];
    for (size_t k = 0; k < x->niv; k++)
      first = x->iv[k].start < first ? x->iv[k].start : first;
    for (size_t k = 0; k < x->ncp; k++)
      first = x->cp[k].ts < first ? x->cp[k].ts : first;
    for (size_t k = 0; k < x->nopen; k++)
      first = x->open[k].ts < first ? x->open[k].ts : first;
  }
  for (size_t i = 0; i < im->t->ngpu; i++)
    first = im->t->gpu[i].start < first ? im->t->gpu[i].start : first;
  return first;
}

/* Kineto traces before baseTimeNanoseconds wrote absolute microseconds
 * since the epoch: a time past 2001-09-09 (1e18 ns) is one. */
#define ABSOLUTE_NS INT64_C(1000000000000000000)

static int finish(importer *im, const pp_jdoc *doc, uint64_t bytes, char *err,
                  size_t errlen) {
  pp_trace *t = im->t;
  const char *source = source_of(im, doc);
  if (!source) {
    describe(im, doc, err, errlen);
    return -1;
  }
  int64_t base = 0;
  int have_base = 0;
  for (size_t i = 0; i < doc->ntop; i++)
    if (pp_jtext_is(&doc->top[i].key, "baseTimeNanoseconds"))
      have_base = field_int(&doc->top[i].value, &base) == 0;
  if (!have_base)
    base = 0;
  int absolute =
      !have_base && !im->streaming && doc->has_trace_events && im->s.kineto;
  if (absolute) {
    int64_t first = earliest(im);
    absolute = first != INT64_MAX && first >= ABSOLUTE_NS;
  }
  im->base = im->streaming ? 0 : base; /* a bare array has no base */
  for (size_t i = 0; i < t->nthreads; i++)
    if ((im->streaming ? close_until(im, i, INT64_MAX)
                       : thread_events(im, i)) != 0)
      return -1;
  for (size_t i = 0; i < t->ngpu; i++) {
    t->gpu[i].start += base;
    t->gpu[i].launch += base;
    t->gpu[i].end += base;
  }
  pp__trace_sort_gpu(t);
  for (size_t i = 0; i < t->nthreads && !t->pid; i++)
    t->pid = t->threads[i].pid;
  t->format_minor = PPT_VERSION_MINOR; /* names alone never make metrics */
  t->diag.file_bytes = bytes;
  t->diag.chunks_ok = 1;
  t->diag.clean_end = 1;
  const char *pname =
      strncmp(source, "ONNX", 4) == 0 ? "onnxruntime" : "torch.profiler";
  if (pp__meta_add(t, "import.source", source) != 0 ||
      pp__meta_add(t, "import.clock",
                   have_base ? "realtime (the profile's baseTimeNanoseconds)"
                   : absolute
                       ? "realtime (the profile's absolute times)"
                       : "relative (from the profile's own start)") != 0 ||
      pp__meta_add(t, "mode", "trace (imported)") != 0 ||
      (!pp_trace_meta(t, "process_name") &&
       pp__meta_add(t, "process_name", pname) != 0) ||
      meta_u64(t, "import.events", doc->events) != 0 ||
      meta_u64(t, "import.skipped_phases", im->skipped_ph) != 0 ||
      meta_u64(t, "import.bad_times", im->bad_times) != 0 ||
      meta_u64(t, "import.clipped", im->clipped) != 0 ||
      meta_u64(t, "import.unclosed", im->unclosed) != 0 ||
      meta_u64(t, "import.stray_ends", im->stray_ends) != 0 ||
      meta_u64(t, "import.ort_fences", im->fences) != 0 ||
      meta_u64(t, "import.fields_cut", doc->texts_cut) != 0 ||
      meta_u64(t, "import.args_dropped", doc->args_dropped) != 0 ||
      meta_u64(t, "import.not_objects", doc->not_objects) != 0 ||
      meta_u64(t, "import.shapes", t->nshapes) != 0 ||
      meta_u64(t, "import.shapes_cut", im->shapes_cut) != 0 ||
      meta_u64(t, "import.shapes_past_bound", im->shapes_past) != 0)
    return im->oom = 1, -1;
  if (strncmp(source, "ONNX", 4) == 0 &&
      (meta_u64(t, "import.ort.provider_transitions", im->transitions) ||
       meta_u64(t, "import.ort.copies", im->copies) ||
       meta_u64(t, "import.ort.copy_ns", (uint64_t)im->copy_ns)))
    return im->oom = 1, -1;
  return 0;
}

static void importer_free(importer *im) {
  for (size_t i = 0; i < im->t->nthreads && im->th; i++) {
    pp__free(im->th[i].iv);
    pp__free(im->th[i].cp);
    pp__free(im->th[i].open);
    pp__free(im->th[i].stack);
  }
  pp__free(im->th);
  map_free(&im->threads);
  map_free(&im->sites);
  map_free(&im->shapes);
}

/* The end of either road: the read's result into *t, or a failure. */
static int import_end(importer *im, int rc, const pp_jdoc *doc, uint64_t bytes,
                      char *err, size_t errlen) {
  if (rc == 0)
    rc = finish(im, doc, bytes, err, errlen);
  else if (rc > 0 || rc == -1)
    rc = -1; /* a callback's stop: say why below */
  if (im->oom || rc == PP_JEV_ENOMEM) {
    snprintf(err, errlen, "out of memory importing the profile");
    rc = PP_TRACE_ENOMEM;
  } else if (rc != 0 && im->unordered) {
    snprintf(err, errlen, "events out of time order: cannot stream");
    rc = PP_IMPORT_UNORDERED;
  } else if (rc != 0 && im->fail) {
    snprintf(err, errlen, "cannot import the profile: %s", im->fail);
  }
  importer_free(im);
  if (rc != 0)
    pp_trace_free(im->t);
  return rc;
}

int pp_import_looks_json(const unsigned char *head, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r')
      continue;
    return head[i] == '{' || head[i] == '[';
  }
  return 0;
}

static void importer_init(importer *im, pp_trace *t, const pp_import_opts *o) {
  memset(t, 0, sizeof *t);
  memset(im, 0, sizeof *im);
  im->t = t;
  im->o = o;
  im->streaming = o && o->on_event;
  t->diag.first_unkept_ns = INT64_MAX;
}

int pp_import_mem(const unsigned char *data, size_t n, pp_trace *t, char *err,
                  size_t errlen) {
  return pp_import_mem_opts(data, n, t, NULL, err, errlen);
}

int pp_import_mem_opts(const unsigned char *data, size_t n, pp_trace *t,
                       const pp_import_opts *o, char *err, size_t errlen) {
  importer im;
  importer_init(&im, t, o);
  pp_jdoc doc;
  int rc = pp_jev_read_mem(data, n, on_event, &im, &doc, err, errlen);
  rc = import_end(&im, rc, &doc, n, err, errlen);
  pp_jdoc_free(&doc);
  return rc;
}

int pp_import_file(const char *path, pp_trace *t, char *err, size_t errlen) {
  return pp_import_file_opts(path, t, NULL, err, errlen);
}

int pp_import_file_opts(const char *path, pp_trace *t, const pp_import_opts *o,
                        char *err, size_t errlen) {
  importer im;
  importer_init(&im, t, o);
  pp_jdoc doc;
  int rc = pp_jev_read_file(path, on_event, &im, &doc, err, errlen);
  FILE *f = rc == 0 ? fopen(path, "rb") : NULL;
  uint64_t bytes = 0;
  if (f) {
    if (fseek(f, 0, SEEK_END) == 0 && ftell(f) > 0)
      bytes = (uint64_t)ftell(f);
    fclose(f);
  }
  rc = import_end(&im, rc, &doc, bytes, err, errlen);
  pp_jdoc_free(&doc);
  return rc;
}
