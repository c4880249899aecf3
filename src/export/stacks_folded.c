/* SPDX-License-Identifier: MIT */
/*
 * CPU stack samples as collapsed stacks (export.h), the text that
 * flamegraph.pl, speedscope and inferno read: one line per distinct
 * stack, its frames from the outermost to the innermost separated by
 * ';', then a space and how many samples had it. Each stack starts with
 * the zones open on the sample's thread at its time, outermost first, so
 * that a flame graph splits by zone; a sample outside zones starts at its
 * outermost function. In a name, ';' becomes ':' and line breaks spaces.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "export.h"
#include "internal.h"

typedef struct buf {
  char *s;
  size_t n, cap;
} buf;

static int put(buf *b, const char *s) {
  size_t len = strlen(s);
  if (pp__grow((void **)&b->s, &b->cap, b->n + len + 2, 1))
    return -1;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    b->s[b->n++] = c == ';' ? ':' : c == '\n' || c == '\r' ? ' ' : c;
  }
  b->s[b->n] = '\0';
  return 0;
}

static int sep(buf *b) {
  if (pp__grow((void **)&b->s, &b->cap, b->n + 2, 1))
    return -1;
  b->s[b->n++] = ';';
  b->s[b->n] = '\0';
  return 0;
}

static int by_text(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int pp_export_stacks_folded(FILE *out, const pp_analysis *a) {
  const pp_trace *t = a->trace;
  const pp_stack_set *s = &t->stacks;
  char **lines = pp__calloc(s->nsamples ? s->nsamples : 1, sizeof *lines);
  if (!lines)
    return -1;
  int rc = 0;
  buf b = {0};
  for (size_t i = 0; rc == 0 && i < s->nsamples; i++) {
    const pp_stack_rec *r = &s->samples[i];
    b.n = 0;
    rc = put(&b, "");
    /* the zones around it, outermost first */
    size_t ti = pp_trace_thread_index(t, r->tid);
    int z = ti < a->nthreads ? pp_zone_enclosing(a, ti, r->t) : -1;
    int chain[64], nz = 0;
    for (int k = z; k >= 0 && nz < 64; k = a->threads[ti].zones[k].parent)
      chain[nz++] = k;
    for (int k = nz - 1; rc == 0 && k >= 0; k--) {
      uint32_t loc = a->threads[ti].zones[chain[k]].loc;
      const char *name =
          loc < t->nlocs && t->locs[loc].name ? t->locs[loc].name : "?";
      rc = put(&b, name) || sep(&b);
    }
    for (uint32_t k = r->n; rc == 0 && k > 0; k--) {
      const pp_stack_frame *f = &s->frames[s->ids[r->first + k - 1]];
      rc = put(&b, f->name) || (k > 1 && sep(&b));
    }
    if (rc == 0 && !(lines[i] = pp__strdup(b.s)))
      rc = -1;
  }
  pp__free(b.s);
  if (rc == 0) {
    qsort(lines, s->nsamples, sizeof *lines, by_text);
    for (size_t i = 0; i < s->nsamples;) {
      size_t j = i + 1;
      while (j < s->nsamples && strcmp(lines[j], lines[i]) == 0)
        j++;
      if (lines[i][0])
        fprintf(out, "%s %zu\n", lines[i], j - i);
      i = j;
    }
  }
  for (size_t i = 0; i < s->nsamples; i++)
    pp__free(lines[i]);
  pp__free(lines);
  return rc == 0 && !ferror(out) ? 0 : -1;
}
