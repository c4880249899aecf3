/* SPDX-License-Identifier: MIT */
/*
 * Sites shared by a run's processes (sites.h): an open-addressing hash of
 * the shareable sites by kind, line, name, function and file.
 */
#include "model/sites.h"

#include <string.h>

#include "internal.h"

struct pp_site_index {
  const pp_loc *locs;
  uint32_t *slot; /* loc index + 1; 0: empty */
  size_t mask;
};

static int shared_kind(uint32_t kind) {
  return kind == PP_KIND_ZONE || kind == PP_KIND_MARK;
}

static uint64_t mix(uint64_t h, const char *s) {
  for (; s && *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return (h ^ 0xff) * 1099511628211ull; /* a NULL and "" differ from "x" */
}

static uint64_t hash_of(const pp_loc *l) {
  uint64_t h = 1469598103934665603ull ^ ((uint64_t)l->kind << 32 | l->line);
  h = mix(h, l->name);
  h = mix(h, l->function);
  return mix(h, l->file);
}

static int same_str(const char *a, const char *b) {
  return (!a || !b) ? a == b : strcmp(a, b) == 0;
}

static int same(const pp_loc *a, const pp_loc *b) {
  return a->kind == b->kind && a->line == b->line &&
         same_str(a->name, b->name) && same_str(a->function, b->function) &&
         same_str(a->file, b->file);
}

pp_site_index *pp_site_index_new(const pp_loc *locs, size_t n) {
  pp_site_index *x = pp__calloc(1, sizeof *x);
  if (!x)
    return NULL;
  size_t cap = 16;
  while (cap < 2 * n + 2)
    cap *= 2;
  if (!(x->slot = pp__calloc(cap, sizeof *x->slot))) {
    pp__free(x);
    return NULL;
  }
  x->locs = locs;
  x->mask = cap - 1;
  for (size_t i = 0; i < n && i < UINT32_MAX - 1; i++) {
    if (!shared_kind(locs[i].kind))
      continue;
    size_t k = (size_t)hash_of(&locs[i]) & x->mask;
    while (x->slot[k] && !same(&locs[x->slot[k] - 1], &locs[i]))
      k = (k + 1) & x->mask;
    if (!x->slot[k]) /* the first of equal sites in one trace stays */
      x->slot[k] = (uint32_t)i + 1;
  }
  return x;
}

void pp_site_index_free(pp_site_index *x) {
  if (!x)
    return;
  pp__free(x->slot);
  pp__free(x);
}

long pp_site_index_find(const pp_site_index *x, const pp_loc *l) {
  if (!x || !shared_kind(l->kind))
    return -1;
  size_t k = (size_t)hash_of(l) & x->mask;
  while (x->slot[k]) {
    if (same(&x->locs[x->slot[k] - 1], l))
      return (long)x->slot[k] - 1;
    k = (k + 1) & x->mask;
  }
  return -1;
}
