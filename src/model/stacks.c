/* SPDX-License-Identifier: MIT */
/* CPU stack samples in the trace model (stacks.h). */
#include "stacks.h"

#include <stdio.h>
#include <string.h>

#include "../format/pptrace.h"
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
  pp__free(s->file_ids);
  memset(s, 0, sizeof *s);
}

/* ---- STACKS chunks ----
 * Records: a tag (varint), then
 *   1 settings: hz, lost, broken (varints), mode (string)
 *   2 frame:    name, module (strings; an empty module is none); frames
 *               are numbered 0, 1, ... in the order of the file
 *   3 sample:   pid, tid, time ns (varints), frame count (varint, at most
 *               PP_STACK_FRAMES_MAX), frame numbers (varints), innermost
 *               first
 * A reader stops at a tag it does not know. */
enum { TAG_SETTINGS = 1, TAG_FRAME = 2, TAG_SAMPLE = 3 };
#define PAYLOAD_CUT (8u << 20)
#define PP_STACK_FRAMES_MAX 1024u

static int next_payload(ppt_buf **out, size_t *n, size_t *cap) {
  if (pp__grow((void **)out, cap, *n + 1, sizeof **out))
    return -1;
  memset(&(*out)[*n], 0, sizeof **out);
  (*n)++;
  return 0;
}

int pp_stack_set_encode(const pp_stack_set *s, ppt_buf **out, size_t *n) {
  *out = NULL;
  *n = 0;
  size_t cap = 0;
  /* num[f]: frame f's number in the file + 1, once sent; 0 before */
  uint32_t *num = pp__calloc(s->nframes ? s->nframes : 1, sizeof *num);
  uint32_t sent = 0;
  if (!num || next_payload(out, n, &cap))
    goto oom;
  ppt_buf *b = &(*out)[0];
  ppt_buf_uv(b, TAG_SETTINGS);
  ppt_buf_uv(b, (uint64_t)(s->hz > 0 ? s->hz : 0));
  ppt_buf_uv(b, s->lost);
  ppt_buf_uv(b, s->broken);
  ppt_buf_str(b, s->mode);
  for (size_t i = 0; i < s->nsamples; i++) {
    const pp_stack_rec *r = &s->samples[i];
    if (b->len > PAYLOAD_CUT) {
      if (next_payload(out, n, &cap))
        goto oom;
      b = &(*out)[*n - 1];
    }
    uint32_t nf = r->n < PP_STACK_FRAMES_MAX ? r->n : PP_STACK_FRAMES_MAX;
    for (uint32_t k = 0; k < nf; k++) {
      uint32_t f = s->ids[r->first + k];
      if (num[f])
        continue;
      num[f] = ++sent;
      ppt_buf_uv(b, TAG_FRAME);
      ppt_buf_str(b, s->frames[f].name);
      ppt_buf_str(b, s->frames[f].module ? s->frames[f].module : "");
    }
    ppt_buf_uv(b, TAG_SAMPLE);
    ppt_buf_uv(b, r->pid);
    ppt_buf_uv(b, r->tid);
    ppt_buf_uv(b, (uint64_t)(r->t > 0 ? r->t : 0));
    ppt_buf_uv(b, nf);
    for (uint32_t k = 0; k < nf; k++)
      ppt_buf_uv(b, num[s->ids[r->first + k]] - 1);
    if (b->oom)
      goto oom;
  }
  pp__free(num);
  return 0;
oom:
  pp__free(num);
  for (size_t i = 0; i < *n; i++)
    ppt_buf_free(&(*out)[i]);
  pp__free(*out);
  *out = NULL;
  *n = 0;
  return -1;
}

/* Frames are numbered in the file in the order their records come; the
 * reader maps each number to the frame it became in s (a frame the table
 * had already, from another file, keeps its id). */
int pp_stack_set_decode(pp_stack_set *s, const unsigned char *p, size_t n) {
  ppt_cursor c = {p, p + n, 0};
  int32_t chain[PP_STACK_FRAMES_MAX];
  while (c.p < c.end) {
    uint64_t tag = ppt_get_uv(&c);
    if (c.err)
      return -1;
    if (tag == TAG_SETTINGS) {
      uint64_t hz = ppt_get_uv(&c), lost = ppt_get_uv(&c),
               broken = ppt_get_uv(&c);
      size_t len;
      const char *mode = ppt_get_str(&c, &len);
      if (c.err)
        return -1;
      s->hz = hz <= 100000 ? (int)hz : 0;
      s->lost += lost;
      s->broken += broken;
      snprintf(s->mode, sizeof s->mode, "%.*s",
               (int)(len < sizeof s->mode ? len : sizeof s->mode - 1), mode);
    } else if (tag == TAG_FRAME) {
      size_t nl, ml;
      const char *name = ppt_get_str(&c, &nl);
      const char *mod = ppt_get_str(&c, &ml);
      if (c.err || nl > 4096 || ml > 4096)
        return -1;
      char nb[4097], mb[4097];
      memcpy(nb, name, nl);
      nb[nl] = '\0';
      memcpy(mb, mod, ml);
      mb[ml] = '\0';
      int32_t id = pp_stack_frame_id(s, nb, ml ? mb : NULL);
      if (id < 0 || pp__grow((void **)&s->file_ids, &s->cap_file_ids,
                             s->nfile_ids + 1, sizeof *s->file_ids))
        return -2;
      s->file_ids[s->nfile_ids++] = (uint32_t)id;
    } else if (tag == TAG_SAMPLE) {
      uint64_t pid = ppt_get_uv(&c), tid = ppt_get_uv(&c), t = ppt_get_uv(&c),
               nf = ppt_get_uv(&c);
      if (c.err || pid > UINT32_MAX || t > INT64_MAX ||
          nf > PP_STACK_FRAMES_MAX)
        return -1;
      for (uint64_t k = 0; k < nf; k++) {
        uint64_t f = ppt_get_uv(&c);
        if (c.err || f >= s->nfile_ids)
          return -1;
        chain[k] = (int32_t)s->file_ids[f];
      }
      if (pp_stack_add(s, (uint32_t)pid, tid, (int64_t)t, chain, (uint32_t)nf))
        return -2;
    } else {
      return 0; /* a later writer's record: the rest is skipped */
    }
  }
  return 0;
}

void pp_stack_set_file_done(pp_stack_set *s) {
  pp__free(s->file_ids);
  s->file_ids = NULL;
  s->nfile_ids = s->cap_file_ids = 0;
}
