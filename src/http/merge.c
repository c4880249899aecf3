/* SPDX-License-Identifier: MIT */
/*
 * The summary of `pipeprof run --http` (merge.h): the program's live
 * summary with the run's own merged in, read with yajl's tree parser and
 * written back with the exporters' JSON writer.
 */
#include "merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../export/jsonw.h"

#ifdef PP_HAVE_YAJL
#include <yajl/yajl_tree.h>

/* A member of object o by key, or NULL. */
static yajl_val member(yajl_val o, const char *key) {
  if (!YAJL_IS_OBJECT(o))
    return NULL;
  for (size_t i = 0; i < o->u.object.len; i++)
    if (strcmp(o->u.object.keys[i], key) == 0)
      return o->u.object.values[i];
  return NULL;
}

static int64_t int_member(yajl_val o, const char *key) {
  yajl_val v = member(o, key);
  return YAJL_IS_INTEGER(v) ? (int64_t)YAJL_GET_INTEGER(v) : 0;
}

/* v as JSON, as it was read (numbers in their own text). */
static void put(pp_jsonw *w, yajl_val v) {
  if (YAJL_IS_OBJECT(v)) {
    pp_jsonw_obj_begin(w);
    for (size_t i = 0; i < v->u.object.len; i++) {
      pp_jsonw_key(w, v->u.object.keys[i]);
      put(w, v->u.object.values[i]);
    }
    pp_jsonw_obj_end(w);
  } else if (YAJL_IS_ARRAY(v)) {
    pp_jsonw_arr_begin(w);
    for (size_t i = 0; i < v->u.array.len; i++)
      put(w, v->u.array.values[i]);
    pp_jsonw_arr_end(w);
  } else if (YAJL_IS_STRING(v)) {
    pp_jsonw_str(w, YAJL_GET_STRING(v));
  } else if (YAJL_IS_NUMBER(v)) {
    const char *r = v->u.number.r;
    pp_jsonw_value_raw(w, r, strlen(r));
  } else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
    pp_jsonw_bool(w, YAJL_IS_TRUE(v));
  } else {
    pp_jsonw_null(w);
  }
}

/* The elements of arrays a and b, a's first (either may be NULL). */
static void put_both(pp_jsonw *w, yajl_val a, yajl_val b) {
  pp_jsonw_arr_begin_lines(w);
  for (int k = 0; k < 2; k++) {
    yajl_val x = k ? b : a;
    if (YAJL_IS_ARRAY(x))
      for (size_t i = 0; i < x->u.array.len; i++)
        put(w, x->u.array.values[i]);
  }
  pp_jsonw_arr_end(w);
}

/* The members of objects a and b, a's where both have one ("layout": the
 * tables of both documents). */
static void put_union(pp_jsonw *w, yajl_val a, yajl_val b) {
  pp_jsonw_obj_begin(w);
  for (int k = 0; k < 2; k++) {
    yajl_val o = k ? b : a;
    if (!YAJL_IS_OBJECT(o))
      continue;
    for (size_t i = 0; i < o->u.object.len; i++) {
      if (k && member(a, o->u.object.keys[i]))
        continue;
      pp_jsonw_key(w, o->u.object.keys[i]);
      put(w, o->u.object.values[i]);
    }
  }
  pp_jsonw_obj_end(w);
}

/* One history of the run's series (an object of equal-length arrays,
 * "t_ns" among them, times from the run's t0), its times moved by shift
 * to count from the program's t0; the points before it are left out, as
 * the program's own are. */
static void put_rebased(pp_jsonw *w, yajl_val h, int64_t shift) {
  yajl_val t = member(h, "t_ns");
  if (!YAJL_IS_ARRAY(t)) {
    put(w, h);
    return;
  }
  size_t n = t->u.array.len;
  pp_jsonw_obj_begin(w);
  for (size_t k = 0; k < h->u.object.len; k++) {
    yajl_val col = h->u.object.values[k];
    pp_jsonw_key(w, h->u.object.keys[k]);
    if (!YAJL_IS_ARRAY(col) || col->u.array.len != n) {
      put(w, col);
      continue;
    }
    pp_jsonw_arr_begin(w);
    for (size_t i = 0; i < n; i++) {
      yajl_val ti = t->u.array.values[i];
      int64_t at = YAJL_IS_INTEGER(ti) ? (int64_t)YAJL_GET_INTEGER(ti) : 0;
      if (at + shift <= 0)
        continue;
      if (col == t)
        pp_jsonw_int(w, at + shift);
      else
        put(w, col->u.array.values[i]);
    }
    pp_jsonw_arr_end(w);
  }
  pp_jsonw_obj_end(w);
}

/* "series": the program's groups, each followed by the run's histories
 * of the same group (rebased); the run's other groups after. */
static void put_series(pp_jsonw *w, yajl_val ps, yajl_val rs, int64_t shift) {
  yajl_val base = YAJL_IS_OBJECT(ps) ? ps : rs;
  pp_jsonw_obj_begin(w);
  for (int pass = 0; pass < 2; pass++) {
    yajl_val o = pass ? rs : base;
    if (!YAJL_IS_OBJECT(o) || (pass && o == base))
      continue;
    for (size_t i = 0; i < o->u.object.len; i++) {
      const char *key = o->u.object.keys[i];
      yajl_val v = o->u.object.values[i];
      if (pass && member(base, key))
        continue; /* written with the program's */
      pp_jsonw_key(w, key);
      if (!YAJL_IS_ARRAY(v)) {
        put(w, v);
        continue;
      }
      pp_jsonw_arr_begin_lines(w);
      for (size_t j = 0; j < v->u.array.len; j++)
        if (o == rs)
          put_rebased(w, v->u.array.values[j], shift);
        else
          put(w, v->u.array.values[j]);
      yajl_val more = o == rs ? NULL : member(rs, key);
      if (YAJL_IS_ARRAY(more))
        for (size_t j = 0; j < more->u.array.len; j++)
          put_rebased(w, more->u.array.values[j], shift);
      pp_jsonw_arr_end(w);
    }
  }
  pp_jsonw_obj_end(w);
}

char *pp_merge_run_summary(const char *program, const char *run, size_t *len,
                           char *err, size_t errlen) {
  char why[256] = "";
  yajl_val p = yajl_tree_parse(program, why, sizeof why);
  if (!p || !YAJL_IS_OBJECT(p)) {
    snprintf(err, errlen, "the program's summary is not a JSON object%s%s",
             why[0] ? ": " : "", why);
    yajl_tree_free(p);
    return NULL;
  }
  yajl_val r = yajl_tree_parse(run, why, sizeof why);
  if (!r || !YAJL_IS_OBJECT(r)) {
    snprintf(err, errlen, "the run's summary is not a JSON object");
    yajl_tree_free(p);
    yajl_tree_free(r);
    return NULL;
  }
  int64_t p_t0 = int_member(p, "t0_ns"), r_t0 = int_member(r, "t0_ns");
  int64_t t1 = int_member(p, "t1_ns");
  if (int_member(r, "t1_ns") > t1)
    t1 = int_member(r, "t1_ns");
  int64_t as_of = int_member(member(p, "live"), "as_of_ns");
  if (int_member(member(r, "live"), "as_of_ns") > as_of)
    as_of = int_member(member(r, "live"), "as_of_ns");

  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  pp_jsonw w;
  int ok = f && pp_jsonw_init(&w, f) == 0;
  if (ok) {
    pp_jsonw_obj_begin(&w);
    for (size_t i = 0; i < p->u.object.len; i++) {
      const char *key = p->u.object.keys[i];
      yajl_val v = p->u.object.values[i];
      pp_jsonw_key(&w, key);
      if (strcmp(key, "t1_ns") == 0)
        pp_jsonw_int(&w, t1);
      else if (strcmp(key, "wall_ns") == 0)
        pp_jsonw_int(&w, t1 - p_t0);
      else if (strcmp(key, "live") == 0 && YAJL_IS_OBJECT(v)) {
        pp_jsonw_obj_begin(&w);
        for (size_t k = 0; k < v->u.object.len; k++) {
          pp_jsonw_key(&w, v->u.object.keys[k]);
          if (strcmp(v->u.object.keys[k], "as_of_ns") == 0)
            pp_jsonw_int(&w, as_of);
          else
            put(&w, v->u.object.values[k]);
        }
        pp_jsonw_obj_end(&w);
      } else if (strcmp(key, "counters") == 0 || strcmp(key, "alerts") == 0)
        put_both(&w, v, member(r, key));
      else if (strcmp(key, "series") == 0)
        put_series(&w, v, member(r, key), r_t0 - p_t0);
      else if (strcmp(key, "layout") == 0)
        put_union(&w, v, member(r, key));
      else
        put(&w, v);
    }
    /* the run's members the program's summary lacks: the profiler, the
     * samples' series when the program keeps none */
    for (size_t i = 0; i < r->u.object.len; i++) {
      const char *key = r->u.object.keys[i];
      if (member(p, key))
        continue;
      pp_jsonw_key(&w, key);
      if (strcmp(key, "series") == 0)
        put_series(&w, NULL, r->u.object.values[i], r_t0 - p_t0);
      else
        put(&w, r->u.object.values[i]);
    }
    pp_jsonw_obj_end(&w);
    ok = pp_jsonw_finish(&w) == 0;
  }
  if (f && fclose(f) != 0)
    ok = 0;
  yajl_tree_free(p);
  yajl_tree_free(r);
  if (!ok) {
    free(buf);
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  *len = n;
  return buf;
}

#else

char *pp_merge_run_summary(const char *program, const char *run, size_t *len,
                           char *err, size_t errlen) {
  (void)program;
  (void)run;
  (void)len;
  snprintf(err, errlen, "this build has no yajl (libyajl-dev) to merge the "
                        "program's summary");
  return NULL;
}

#endif
