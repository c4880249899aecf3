/* SPDX-License-Identifier: MIT */
/*
 * CPU stack samples of a process tree through perf_event_open(2): a
 * cpu-clock sampling event per online CPU on the target, inherited by
 * every thread and process it creates, each sample carrying its process,
 * thread, CLOCK_MONOTONIC time and the user call chain the kernel walked
 * by frame pointers. Executable mappings (PERF_RECORD_MMAP) and thread
 * names come with them, so that addresses can be named after the
 * processes are gone (symbols/). The rings are drained by the caller
 * (the sampler thread of `pipeprof run`); nothing runs in the target.
 * Not API. Design: docs/internals/stacks.md.
 *
 * Invariants: callbacks see records in each CPU's ring order; a sample's
 * ips are user addresses only, innermost first, the sampled instruction
 * first; what the rings dropped is counted (pp_collect_stacks_lost).
 */
#ifndef PP_COLLECT_STACKS_H
#define PP_COLLECT_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Flags for pp_collect_stacks_open. */
enum {
  /* Open disabled; the kernel enables the events when the target calls
   * execve() (the `pipeprof run` pattern, as PP_PERF_ENABLE_ON_EXEC). */
  PP_STACKS_ENABLE_ON_EXEC = 1 << 0,
  /* Also copy each sample's user registers and the top of its stack
   * (PP_STACKS_STACK_BYTES), for unwinding code without frame pointers
   * after the fact (pp_symbols_unwind): Debian's libraries have none. */
  PP_STACKS_USER_STACK = 1 << 1
};

/* Bytes of user stack copied per sample with PP_STACKS_USER_STACK. */
#define PP_STACKS_STACK_BYTES 8192u

/* The user registers copied with PP_STACKS_USER_STACK, in this order
 * (x86-64: perf's register numbers 0-8 and 16-23). */
enum {
  PP_STACK_REG_AX,
  PP_STACK_REG_BX,
  PP_STACK_REG_CX,
  PP_STACK_REG_DX,
  PP_STACK_REG_SI,
  PP_STACK_REG_DI,
  PP_STACK_REG_BP,
  PP_STACK_REG_SP,
  PP_STACK_REG_IP,
  PP_STACK_REG_R8,
  PP_STACK_REG_R9,
  PP_STACK_REG_R10,
  PP_STACK_REG_R11,
  PP_STACK_REG_R12,
  PP_STACK_REG_R13,
  PP_STACK_REG_R14,
  PP_STACK_REG_R15,
  PP_STACK_NREGS
};

/* The most frames kept of one sample (the kernel's default limit is 127). */
#define PP_STACKS_MAX_FRAMES 127

/* One sample. ips are valid during the callback only. */
typedef struct pp_stack_sample {
  uint32_t pid, tid;
  uint64_t time_ns; /* CLOCK_MONOTONIC */
  uint32_t nips;
  const uint64_t *ips; /* innermost first; [0] is the sampled instruction */
  /* with PP_STACKS_USER_STACK (else NULL, 0): the registers, and the
   * stack's bytes from regs[PP_STACK_REG_SP] up */
  const uint64_t *regs;
  const unsigned char *stack;
  size_t stack_len;
} pp_stack_sample;

/* An executable mapping of a process. path is valid during the callback. */
typedef struct pp_stack_map {
  uint32_t pid;
  uint64_t time_ns; /* CLOCK_MONOTONIC */
  uint64_t start, len, pgoff;
  const char *path;
} pp_stack_map;

/* What a drain hands over; any callback may be NULL. Records of different
 * CPUs' rings come in no particular order: each has its time. */
typedef struct pp_stacks_cb {
  void (*sample)(void *ctx, const pp_stack_sample *s);
  void (*map)(void *ctx, const pp_stack_map *m);
  /* a thread's name; exec is 1 when it came with an execve(), after which
   * the process's earlier mappings are gone */
  void (*comm)(void *ctx, uint32_t pid, uint32_t tid, const char *comm,
               int exec, uint64_t time_ns);
  /* a new process pid forked by ppid, with ppid's mappings (threads, which
   * share their process's, are not reported) */
  void (*fork)(void *ctx, uint32_t pid, uint32_t ppid, uint64_t time_ns);
  void *ctx;
} pp_stacks_cb;

typedef struct pp_collect_stacks pp_collect_stacks;

/* Sample pid (and what it starts) at hz per thread on CPU time, 1 to
 * 10000. NULL on failure with the reason in words in why (permission,
 * perf_event_paranoid, no perf events): the caller says it and runs on. */
pp_collect_stacks *pp_collect_stacks_open(pid_t pid, int hz, int flags,
                                          char *why, size_t why_len);

/* Read what the rings hold now, in callbacks. Returns the records read. */
size_t pp_collect_stacks_drain(pp_collect_stacks *s, const pp_stacks_cb *cb);

/* Samples the kernel could not write (rings full: PERF_RECORD_LOST). */
uint64_t pp_collect_stacks_lost(const pp_collect_stacks *s);

/* Stop sampling and free (NULL is fine). */
void pp_collect_stacks_close(pp_collect_stacks *s);

#endif
