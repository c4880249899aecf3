/* SPDX-License-Identifier: MIT */
/*
 * Site ids of an output file (see sites.h).
 */
#include "sites.h"

#include "../format/records.h"
#include "../ring/arena.h"
#include "../internal.h"

static size_t slot_of(const pp_srcloc *p, size_t cap) {
  return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ULL) & (cap - 1);
}

static int grow(pp__sites *s) {
  size_t ncap = s->cap ? s->cap * 2 : 1024;
  pp__site_entry *n = pp__calloc(ncap, sizeof *n);
  if (!n)
    return -1;
  for (size_t i = 0; i < s->cap; i++) {
    if (!s->map[i].p)
      continue;
    size_t j = slot_of(s->map[i].p, ncap);
    while (n[j].p)
      j = (j + 1) & (ncap - 1);
    n[j] = s->map[i];
  }
  pp__free(s->map);
  s->map = n;
  s->cap = ncap;
  return 0;
}

/* The slot of key: its entry, or the empty slot where it goes (the table
 * has room: cap > 0 and not full). */
static size_t probe(const pp__sites *s, const void *key) {
  size_t j = slot_of(key, s->cap);
  while (s->map[j].p && s->map[j].p != key)
    j = (j + 1) & (s->cap - 1);
  return j;
}

/* Room for one more entry. 0, or -1 when out of memory. */
static int room(pp__sites *s) {
  return (s->n + 1) * 2 > s->cap ? grow(s) : 0;
}

/* key takes slot j and the next id, defined as def. */
static uint32_t add_at(pp__sites *s, size_t j, const void *key,
                       const pp_srcloc *def) {
  uint32_t id = (uint32_t)s->n++;
  s->map[j].p = key;
  s->map[j].id = id;
  ppt_srcloc r = {id,
                  def->kind,
                  ppt_str_of(def->name),
                  ppt_str_of(def->function),
                  ppt_str_of(def->file),
                  def->line};
  ppt_srcloc_put(&s->defs, &r);
  return id;
}

uint32_t pp__sites_id(pp__sites *s, const pp_srcloc *p) {
  if (!p || room(s) != 0) /* NULL: no site (a slot a salvager read) */
    return UINT32_MAX;
  size_t j = probe(s, p);
  if (s->map[j].p)
    return s->map[j].id;
  uint32_t id = add_at(s, j, p, p);
  if (s->durable)
    pp__arena_site(p, id);
  return id;
}

int pp__sites_keep(pp__sites *s, const void *key, uint32_t id) {
  if (!key || id == UINT32_MAX || room(s) != 0)
    return -1;
  size_t j = probe(s, key);
  if (s->map[j].p)
    return -1; /* twice */
  s->map[j].p = key;
  s->map[j].id = id;
  if (id >= s->n)
    s->n = (size_t)id + 1;
  return 0;
}

uint32_t pp__sites_add(pp__sites *s, const void *key, const pp_srcloc *def) {
  if (!key || room(s) != 0)
    return UINT32_MAX;
  size_t j = probe(s, key);
  return s->map[j].p ? UINT32_MAX : add_at(s, j, key, def);
}

uint32_t pp__sites_find(const pp__sites *s, const void *key) {
  if (!s->cap)
    return UINT32_MAX;
  size_t j = probe(s, key);
  return s->map[j].p ? s->map[j].id : UINT32_MAX;
}

void pp__sites_write(pp__sites *s, pp__out *o) {
  if (s->defs.len || s->defs.oom)
    pp__out_chunk(o, PPT_CHUNK_SRCLOC, &s->defs, 0);
}

void pp__sites_free(pp__sites *s) {
  pp__free(s->map);
  ppt_buf_free(&s->defs);
  s->map = NULL;
  s->cap = s->n = 0;
}
