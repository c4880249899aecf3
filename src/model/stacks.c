/* SPDX-License-Identifier: MIT */
/* CPU stack samples in the trace model (stacks.h). */
#include "stacks.h"

#include <string.h>

#include "../internal.h"

static uint64_t frame_hash(const char *name, const char *module) {
  uint64_t h = 1469598103934665603ULL;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    h = (h ^ *p) * 1099511628211ULL;
  h = (h ^ 0xff) * 1099511628211ULL;
  if (module)
    for (const unsigned char *p = (const unsigned char *)module; *p; p++)
      h = (h ^ *p) * 1099511628211ULL;
  return h ^ (h >> 31);
}

static int same(const pp_stack_frame *f, const char *name, const char *module) {
  return strcmp(f->name, name) == 0 &&
         (f->module && module ? strcmp(f->module, module) == 0
                              : f->module == module);
}

static int rehash(pp_stack_set *s, size_t cap) {
  int32_t *h = pp__malloc(cap * sizeof *h);
  if (!h)
    return -1;
  memset(h, 0xff, cap * sizeof *h);
  for (size_t i = 0; i < s->nframes; i++) {
    size_t k = frame_hash(s->frames[i].name, s->frames[i].module) & (cap - 1);
    while (h[k] >= 0)
      k = (k + 1) & (cap - 1);
    h[k] = (int32_t)i;
  }
  pp__free(s->hash);
  s->hash = h;
  s->hcap = cap;
  return 0;
}

int32_t pp_stack_frame_id(pp_stack_set *s, const char *name,
                          const char *module) {
  if (!s || !name || s->nframes >= INT32_MAX / 2)
    return -1;
  if ((s->nframes + 1) * 2 > s->hcap && rehash(s, s->hcap ? s->hcap * 2 : 256))
    return -1;
  size_t k = frame_hash(name, module) & (s->hcap - 1);
  for (; s->hash[k] >= 0; k = (k + 1) & (s->hcap - 1))
    if (same(&s->frames[s->hash[k]], name, module))
      return s->hash[k];
  if (pp__grow((void **)&s->frames, &s->cap_frames, s->nframes + 1,
               sizeof *s->frames))
    return -1;
  pp_stack_frame *f = &s->frames[s->nframes];
  f->name = pp__strdup(name);
  f->module = module ? pp__strdup(module) : NULL;
  if (!f->name || (module && !f->module)) {
    pp__free(f->name);
    pp__free(f->module);
    return -1;
  }
  s->hash[k] = (int32_t)s->nframes;
  return (int32_t)s->nframes++;
}

int pp_stack_add(pp_stack_set *s, uint32_t pid, uint64_t tid, int64_t t,
                 const int32_t *ids, uint32_t n) {
  if (!s || (n && !ids) || s->nids + n > UINT32_MAX)
    return -1;
  if (pp__grow((void **)&s->ids, &s->cap_ids, s->nids + n, sizeof *s->ids) ||
      pp__grow((void **)&s->samples, &s->cap_samples, s->nsamples + 1,
               sizeof *s->samples))
    return -1;
  for (uint32_t i = 0; i < n; i++) {
    if (ids[i] < 0 || (size_t)ids[i] >= s->nframes)
      return -1;
    s->ids[s->nids + i] = (uint32_t)ids[i];
  }
  pp_stack_rec *r = &s->samples[s->nsamples++];
  r->tid = tid;
  r->pid = pid;
  r->t = t;
  r->first = (uint32_t)s->nids;
  r->n = n;
  s->nids += n;
  return 0;
}

void pp_stack_set_free(pp_stack_set *s) {
  if (!s)
    return;
  for (size_t i = 0; i < s->nframes; i++) {
    pp__free(s->frames[i].name);
    pp__free(s->frames[i].module);
  }
  pp__free(s->frames);
  pp__free(s->ids);
  pp__free(s->samples);
  pp__free(s->hash);
  memset(s, 0, sizeof *s);
}
