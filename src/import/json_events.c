/* SPDX-License-Identifier: MIT */
/*
 * The streaming trace-event JSON reader (json_events.h) over yajl's
 * callbacks: a small state machine that knows where the events are (the
 * top-level array, or a top-level object's "traceEvents"), collects each
 * event's fields as text in fixed slots, and hands the event over when
 * its object closes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "import/json_events.h"
#include "internal.h"

#ifdef PP_HAVE_YAJL
#include <yajl/yajl_parse.h>
#endif

void pp_jdoc_free(pp_jdoc *doc) {
  pp__free(doc->store);
  memset(doc, 0, sizeof *doc);
}

int pp_jtext_is(const pp_jtext *t, const char *s) {
  size_t n = strlen(s);
  return t->present && t->n == n && memcmp(t->s, s, n) == 0;
}

#ifdef PP_HAVE_YAJL

/* A slot of text: PP_JEV_TEXT_MAX bytes of storage. */
typedef struct slot {
  char *buf;
  pp_jtext *t; /* the field it fills */
} slot;

enum field {
  F_NONE = -1,
  F_NAME,
  F_PH,
  F_CAT,
  F_TS,
  F_DUR,
  F_PID,
  F_TID,
  F_ID,
  F_ARGS,
  F_NFIXED = F_ARGS
};

static const char *const field_names[] = {"name", "ph",  "cat", "ts",
                                          "dur",  "pid", "tid", "id"};

#define NEST_MAX 64 /* depth of a nested args value kept as text */

typedef struct reader {
  pp_jev_fn fn;
  void *arg;
  pp_jdoc *doc;
  int rc;             /* the callback's non-zero value */
  int depth;          /* open containers */
  int ev_depth;       /* depth of the events' container, 0: not found yet */
  int top_key_events; /* the last top-level key was "traceEvents" */
  int top_key_slot;   /* a top-level scalar is awaited: its top[] index,
                         -1: none */
  int skip;           /* depth of a value being skipped, 0: none */
  pp_jev ev;
  enum field key; /* the event member whose value comes next */
  int in_args;    /* inside the event's "args" object */
  int arg_slot;   /* args[] index awaiting a value, -1: none (skipped) */
  int nest;       /* depth inside a nested args value kept as text */
  int nest_first[NEST_MAX];
  char *store;     /* the event's slots */
  char *top_store; /* the top-level members' slots */
  uint64_t calls;  /* parser callbacks so far (feed_chunk's progress) */
} reader;

/* The slot of the event's fixed field f, or of args member k's key (2k)
 * or value (2k + 1) after the fixed ones. */
static char *ev_slot(reader *r, size_t i) {
  return r->store + i * PP_JEV_TEXT_MAX;
}

static void put(reader *r, pp_jtext *t, char *buf, const char *s, size_t n) {
  size_t room = PP_JEV_TEXT_MAX - t->n;
  if (n > room) {
    n = room;
    r->doc->texts_cut++;
  }
  if (!t->present) {
    t->present = 1;
    t->s = buf;
    t->n = 0;
  }
  memcpy(buf + t->n, s, n);
  t->n += n;
}

static pp_jtext *arg_value(reader *r, char **buf) {
  *buf = ev_slot(r, F_NFIXED + 2u * (size_t)r->arg_slot + 1u);
  return &r->ev.args[r->arg_slot].value;
}

/* A scalar (or a container's punctuation) inside a nested args value. */
static void nest_put(reader *r, const char *s, size_t n, int is_value) {
  if (r->arg_slot < 0)
    return;
  char *buf;
  pp_jtext *t = arg_value(r, &buf);
  int lvl = r->nest - 1;
  if (is_value && lvl >= 0 && lvl < NEST_MAX) {
    if (!r->nest_first[lvl])
      put(r, t, buf, ",", 1);
    r->nest_first[lvl] = 0;
  }
  put(r, t, buf, s, n);
}

/* A scalar value: where does it go? */
static int scalar(reader *r, const char *s, size_t n, int is_str) {
  if (r->skip)
    return 1;
  if (r->depth == 1 && r->ev_depth <= 0 && r->top_key_slot >= 0) {
    pp_jarg *a = &r->doc->top[r->top_key_slot];
    put(r, &a->value,
        r->top_store + (2u * (size_t)r->top_key_slot + 1u) * PP_JEV_TEXT_MAX, s,
        n);
    a->value.is_str = is_str;
    r->top_key_slot = -1;
    return 1;
  }
  if (r->ev_depth <= 0)
    return 1;
  if (r->depth == r->ev_depth) { /* an element that is no object */
    r->doc->not_objects++;
    return 1;
  }
  if (r->nest) {
    if (is_str) {
      nest_put(r, "\"", 1, 1);
      nest_put(r, s, n, 0); /* kept unescaped: enough to read shapes */
      nest_put(r, "\"", 1, 0);
    } else {
      nest_put(r, s, n, 1);
    }
    return 1;
  }
  if (r->in_args && r->depth == r->ev_depth + 2) {
    if (r->arg_slot >= 0) {
      char *buf;
      pp_jtext *t = arg_value(r, &buf);
      put(r, t, buf, s, n);
      t->is_str = is_str;
    }
    return 1;
  }
  if (r->depth == r->ev_depth + 1 && r->key != F_NONE && r->key != F_ARGS) {
    pp_jtext *f = &(&r->ev.name)[r->key];
    put(r, f, ev_slot(r, (size_t)r->key), s, n);
    f->is_str = is_str;
  }
  return 1;
}

static int on_null(void *ctx) {
  ((reader *)ctx)->calls++;
  return scalar(ctx, "null", 4, 0);
}
static int on_bool(void *ctx, int b) {
  ((reader *)ctx)->calls++;
  return scalar(ctx, b ? "true" : "false", b ? 4 : 5, 0);
}
static int on_number(void *ctx, const char *s, size_t n) {
  ((reader *)ctx)->calls++;
  return scalar(ctx, s, n, 0);
}
static int on_string(void *ctx, const unsigned char *s, size_t n) {
  ((reader *)ctx)->calls++;
  return scalar(ctx, (const char *)s, n, 1);
}

static int open_container(reader *r, int is_map) {
  r->depth++;
  if (r->skip)
    return 1;
  if (!r->ev_depth) {
    if (r->depth == 1) {
      r->doc->top_is_array = !is_map;
      if (!is_map)
        r->ev_depth = 1;
      return 1;
    }
    if (r->depth == 2 && r->top_key_events && !is_map) {
      r->doc->has_trace_events = 1;
      r->ev_depth = 2;
      return 1;
    }
    r->top_key_slot = -1;
    r->skip = r->depth; /* a nested top-level value */
    return 1;
  }
  if (r->depth == r->ev_depth + 1) {
    if (!is_map) {
      r->doc->not_objects++;
      r->skip = r->depth;
      return 1;
    }
    memset(&r->ev, 0, sizeof r->ev);
    r->key = F_NONE;
    r->in_args = 0;
    r->arg_slot = -1;
    r->nest = 0;
    return 1;
  }
  if (r->depth == r->ev_depth + 2 && r->key == F_ARGS && is_map &&
      !r->in_args) {
    r->in_args = 1;
    return 1;
  }
  if (r->in_args && r->depth >= r->ev_depth + 3) {
    /* a nested args value: kept as compact JSON text */
    nest_put(r, is_map ? "{" : "[", 1, r->nest > 0);
    if (r->nest < NEST_MAX)
      r->nest_first[r->nest] = 1;
    r->nest++;
    return 1;
  }
  r->skip = r->depth; /* any other nested value */
  return 1;
}

static int close_container(reader *r, int is_map) {
  int d = r->depth--;
  if (r->skip) {
    if (d == r->skip)
      r->skip = 0;
    return 1;
  }
  if (r->ev_depth && d == r->ev_depth) {
    r->ev_depth = -1; /* the events' container ended: no more events */
    return 1;
  }
  if (r->ev_depth > 0 && d == r->ev_depth + 1) {
    r->doc->events++;
    int rc = r->fn(r->arg, r->doc, &r->ev);
    if (rc) {
      r->rc = rc;
      return 0;
    }
    return 1;
  }
  if (r->in_args && d == r->ev_depth + 2) {
    r->in_args = 0;
    r->key = F_NONE;
    return 1;
  }
  if (r->nest) {
    r->nest--;
    nest_put(r, is_map ? "}" : "]", 1, 0);
  }
  return 1;
}

static int on_start_map(void *ctx) {
  ((reader *)ctx)->calls++;
  return open_container(ctx, 1);
}
static int on_end_map(void *ctx) {
  ((reader *)ctx)->calls++;
  return close_container(ctx, 1);
}
static int on_start_array(void *ctx) {
  ((reader *)ctx)->calls++;
  return open_container(ctx, 0);
}
static int on_end_array(void *ctx) {
  ((reader *)ctx)->calls++;
  return close_container(ctx, 0);
}

static int on_key(void *ctx, const unsigned char *k, size_t n) {
  reader *r = ctx;
  r->calls++;
  if (r->skip)
    return 1;
  if (r->depth == 1 && r->ev_depth <= 0) { /* a top-level member */
    r->top_key_events = n == 11 && memcmp(k, "traceEvents", 11) == 0;
    r->top_key_slot = -1;
    if (!r->top_key_events && r->doc->ntop < PP_JEV_ARGS_MAX) {
      size_t i = r->doc->ntop++;
      pp_jarg *a = &r->doc->top[i];
      memset(a, 0, sizeof *a);
      put(r, &a->key, r->top_store + 2u * i * PP_JEV_TEXT_MAX, (const char *)k,
          n);
      r->top_key_slot = (int)i;
    }
    return 1;
  }
  if (r->ev_depth <= 0)
    return 1;
  if (r->depth == r->ev_depth + 1) {
    r->key = F_NONE;
    r->in_args = 0;
    if (n == 4 && memcmp(k, "args", 4) == 0) {
      r->key = F_ARGS;
      return 1;
    }
    for (int f = 0; f < F_NFIXED; f++)
      if (strlen(field_names[f]) == n && memcmp(field_names[f], k, n) == 0)
        r->key = (enum field)f;
    return 1;
  }
  if (r->in_args && r->depth == r->ev_depth + 2) {
    if (r->ev.nargs >= PP_JEV_ARGS_MAX) {
      r->doc->args_dropped++;
      r->arg_slot = -1;
      return 1;
    }
    r->arg_slot = (int)r->ev.nargs++;
    put(r, &r->ev.args[r->arg_slot].key,
        ev_slot(r, F_NFIXED + 2u * (size_t)r->arg_slot), (const char *)k, n);
    r->ev.args[r->arg_slot].key.is_str = 1;
    return 1;
  }
  if (r->nest) {
    nest_put(r, "\"", 1, 1);
    nest_put(r, (const char *)k, n, 0);
    nest_put(r, "\":", 2, 0);
    if (r->nest - 1 < NEST_MAX)
      r->nest_first[r->nest - 1] = 1; /* the value needs no comma */
  }
  return 1;
}

static const yajl_callbacks callbacks = {
    on_null,      on_bool, NULL,       NULL,           on_number,   on_string,
    on_start_map, on_key,  on_end_map, on_start_array, on_end_array};

typedef struct feed {
  yajl_handle h;
  reader r;
  uint64_t offset; /* bytes parsed before the current chunk */
} feed;

static int feed_open(feed *f, pp_jev_fn fn, void *arg, pp_jdoc *doc) {
  memset(f, 0, sizeof *f);
  memset(doc, 0, sizeof *doc);
  f->r.fn = fn;
  f->r.arg = arg;
  f->r.doc = doc;
  f->r.top_key_slot = -1;
  f->r.arg_slot = -1;
  f->r.key = F_NONE;
  f->r.store =
      pp__malloc((F_NFIXED + 2u * PP_JEV_ARGS_MAX) * (size_t)PP_JEV_TEXT_MAX);
  f->r.top_store = doc->store =
      pp__malloc(2u * PP_JEV_ARGS_MAX * (size_t)PP_JEV_TEXT_MAX);
  f->h =
      f->r.store && f->r.top_store ? yajl_alloc(&callbacks, NULL, &f->r) : NULL;
  return f->h ? 0 : -1;
}

static void feed_close(feed *f) {
  if (f->h)
    yajl_free(f->h);
  pp__free(f->r.store); /* the top-level texts stay in the doc */
}

/* One chunk (n == 0: the end). 0, the callback's value, or -1 with err. */
static int feed_chunk(feed *f, const unsigned char *p, size_t n, char *err,
                      size_t errlen) {
  yajl_status st = n ? yajl_parse(f->h, p, n) : yajl_complete_parse(f->h);
  if (st == yajl_status_ok) {
    f->offset += n;
    return 0;
  }
  if (f->r.rc)
    return f->r.rc;
  size_t at = yajl_get_bytes_consumed(f->h);
  unsigned char *msg = yajl_get_error(f->h, 0, p, n);
  pp__err_set(err, errlen, "malformed JSON at byte %llu: %s",
          (unsigned long long)(f->offset + (n ? at : 0)),
          msg ? (const char *)msg : "parse error");
  if (msg)
    yajl_free_error(f->h, msg);
  return -1;
}

int pp_jev_read_mem(const unsigned char *data, size_t n, pp_jev_fn fn,
                    void *arg, pp_jdoc *doc, char *err, size_t errlen) {
  feed f;
  if (feed_open(&f, fn, arg, doc) != 0) {
    feed_close(&f);
    pp__err_set(err, errlen, "out of memory");
    return PP_JEV_ENOMEM;
  }
  int rc = n ? feed_chunk(&f, data, n, err, errlen) : 0;
  if (rc == 0)
    rc = feed_chunk(&f, NULL, 0, err, errlen);
  feed_close(&f);
  return rc;
}

int pp_jev_read_file(const char *path, pp_jev_fn fn, void *arg, pp_jdoc *doc,
                     char *err, size_t errlen) {
  memset(doc, 0, sizeof *doc);
  FILE *in = fopen(path, "rb");
  if (!in) {
    pp__err_set(err, errlen, "cannot open %s: %s", path, strerror(errno));
    return -1;
  }
  feed f;
  if (feed_open(&f, fn, arg, doc) != 0) {
    feed_close(&f);
    fclose(in);
    pp__err_set(err, errlen, "out of memory reading %s", path);
    return PP_JEV_ENOMEM;
  }
  /* yajl lexes a token that spans chunks again from its start at each
   * chunk: while a chunk ends inside one value (no callback came), the
   * next is twice as large, so a long string costs O(n), not O(n^2)
   * (a 64 MB string took 20 s); one value over PP_JEV_VALUE_MAX is
   * refused (its bytes are buffered whole) */
  enum { CHUNK = 1 << 16 };
  size_t chunk = CHUNK, cap = CHUNK;
  unsigned char *buf = pp__malloc(cap);
  int rc = buf ? 0 : PP_JEV_ENOMEM;
  size_t got;
  uint64_t calls = 0, quiet = 0; /* bytes fed since the last callback */
  while (rc == 0) {
    /* a read never takes a quiet stretch past the bound by more than a
     * byte, so that a longer value is seen */
    size_t want = chunk;
    if (quiet && want > (size_t)PP_JEV_VALUE_MAX + 1 - quiet)
      want = (size_t)PP_JEV_VALUE_MAX + 1 - quiet;
    if ((got = fread(buf, 1, want, in)) == 0)
      break;
    rc = feed_chunk(&f, buf, got, err, errlen);
    quiet = f.r.calls != calls ? 0 : quiet + got;
    calls = f.r.calls;
    if (rc == 0 && quiet > PP_JEV_VALUE_MAX) {
      pp__err_set(err, errlen,
                  "a JSON value longer than %d MiB before byte %llu (a "
                  "profile's names and arguments are short): not read",
                  PP_JEV_VALUE_MAX >> 20,
                  (unsigned long long)f.offset);
      rc = -1;
    }
    chunk = quiet ? chunk * 2 : CHUNK;
    if (rc == 0 && chunk > cap) {
      unsigned char *b = pp__realloc(buf, chunk);
      if (!b)
        rc = PP_JEV_ENOMEM;
      else
        buf = b, cap = chunk;
    }
  }
  if (rc == 0 && ferror(in)) {
    pp__err_set(err, errlen, "cannot read %s: %s", path, strerror(errno));
    rc = -1;
  }
  if (rc == 0)
    rc = feed_chunk(&f, NULL, 0, err, errlen);
  if (rc == PP_JEV_ENOMEM)
    pp__err_set(err, errlen, "out of memory reading %s", path);
  pp__free(buf);
  feed_close(&f);
  fclose(in);
  return rc;
}

#else /* !PP_HAVE_YAJL */

int pp_jev_read_mem(const unsigned char *data, size_t n, pp_jev_fn fn,
                    void *arg, pp_jdoc *doc, char *err, size_t errlen) {
  (void)data, (void)n, (void)fn, (void)arg;
  memset(doc, 0, sizeof *doc);
  pp__err_set(err, errlen,
          "this pipeprof was built without yajl, which reading "
          "JSON profiles needs (install libyajl-dev and "
          "rebuild)");
  return -1;
}

int pp_jev_read_file(const char *path, pp_jev_fn fn, void *arg, pp_jdoc *doc,
                     char *err, size_t errlen) {
  (void)path;
  return pp_jev_read_mem(NULL, 0, fn, arg, doc, err, errlen);
}

#endif
