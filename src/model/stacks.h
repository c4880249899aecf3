/* SPDX-License-Identifier: MIT */
/*
 * CPU stack samples in the trace model: a table of frames (function and
 * file, named when the samples were taken) and samples, each a thread, a
 * time on the trace's clock and its frames, innermost first. Filled by
 * `pipeprof run` from collect/stacks.h and symbols/ (and, later, by the
 * reader); read by the analysis (analyze/stacks.c), which places each
 * sample in the zones open on its thread at its time. Design:
 * docs/internals/stacks.md.
 *
 * Invariants: a frame is one (name, module) pair, stored once; frame ids
 * index frames; a sample's frames are ids[first .. first + n).
 */
#ifndef PP_MODEL_STACKS_H
#define PP_MODEL_STACKS_H

#include <stddef.h>
#include <stdint.h>

typedef struct pp_stack_frame {
  char *name;   /* the function; "[file+0xOFFSET]" or "[unknown]" if none */
  char *module; /* the file's base name, or NULL */
} pp_stack_frame;

typedef struct pp_stack_rec {
  uint64_t tid;
  uint32_t pid;
  int64_t t; /* ns, CLOCK_MONOTONIC as the trace's events */
  uint32_t first, n;
} pp_stack_rec;

typedef struct pp_stack_set {
  pp_stack_frame *frames;
  size_t nframes, cap_frames;
  uint32_t *ids;
  size_t nids, cap_ids;
  pp_stack_rec *samples;
  size_t nsamples, cap_samples;
  int32_t *hash; /* frames by (name, module): open addressing, -1 empty */
  size_t hcap;
  int hz;          /* the rate asked for, per thread on CPU time */
  uint64_t lost;   /* samples the kernel could not write */
  uint64_t broken; /* samples whose frames could not be walked */
  char mode[16];   /* "frame pointers" or "dwarf" */
  uint32_t *file_ids; /* while reading a file: its frame numbers' ids */
  size_t nfile_ids, cap_file_ids;
} pp_stack_set;

struct ppt_buf;

/* s as STACKS chunk payloads (docs/formats/pptrace.md): records of a
 * settings record, then each frame before the first sample that uses it,
 * cut into payloads of at most about 8 MiB; *out (n of them) to free with
 * ppt_buf_free each and pp__free. 0, or -1 out of memory. */
int pp_stack_set_encode(const pp_stack_set *s, struct ppt_buf **out,
                        size_t *n);

/* Add one STACKS chunk payload of a file to s (a file's chunks in order:
 * frame numbers run on from one chunk to the next). 0; -1 damaged (what
 * came before the damage is kept); -2 out of memory. */
int pp_stack_set_decode(pp_stack_set *s, const unsigned char *p, size_t n);

/* A file is read: its frame numbers are forgotten. */
void pp_stack_set_file_done(pp_stack_set *s);

/* The id of frame (name, module), added when new; -1 out of memory. */
int32_t pp_stack_frame_id(pp_stack_set *s, const char *name,
                          const char *module);

/* Add a sample of n frame ids (innermost first); 0, or -1 out of memory. */
int pp_stack_add(pp_stack_set *s, uint32_t pid, uint64_t tid, int64_t t,
                 const int32_t *ids, uint32_t n);

void pp_stack_set_free(pp_stack_set *s);

#endif
