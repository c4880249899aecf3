/* SPDX-License-Identifier: MIT */
/*
 * The CPU stack samples of `pipeprof run`'s command (cli.h,
 * docs/internals/stacks.md): the sampler (collect/stacks.h) opened on the
 * child before it execs, a thread that drains its rings every 50 ms,
 * applies the mappings, forks and execs they announce to the symbols
 * (symbols/symbols.h), unwinds each sample from its copied registers and
 * stack and names its frames while the files are there, into a
 * pp_stack_set that the run's trace takes before it is analysed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "collect/stacks.h"
#include "internal.h"
#include "model/stacks.h"
#include "symbols/symbols.h"

/* One sample of a drain pass, copied out of the ring. */
typedef struct held {
  uint32_t pid, tid;
  uint64_t t;
  uint32_t nfp;
  uint64_t fp[PP_STACKS_MAX_FRAMES]; /* the kernel's frame-pointer chain */
  int has_regs;
  uint64_t regs[PP_STACK_NREGS];
  size_t stack_len;
  unsigned char stack[PP_STACKS_STACK_BYTES];
} held;

struct pp_cli_stacks {
  pp_collect_stacks *c;
  pp_symbols *y;
  pp_stack_set set;
  held *pass;
  size_t npass, cap_pass;
  int failed; /* out of memory: samples from then on are dropped */
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int stop;
};

static void on_sample(void *ctx, const pp_stack_sample *s) {
  pp_cli_stacks *k = ctx;
  if (pp__grow((void **)&k->pass, &k->cap_pass, k->npass + 1,
               sizeof *k->pass)) {
    k->set.broken++;
    return;
  }
  held *h = &k->pass[k->npass++];
  h->pid = s->pid;
  h->tid = s->tid;
  h->t = s->time_ns;
  h->nfp = s->nips;
  memcpy(h->fp, s->ips, s->nips * sizeof *s->ips);
  h->has_regs = s->regs != NULL;
  if (s->regs)
    memcpy(h->regs, s->regs, sizeof h->regs);
  h->stack_len =
      s->stack_len < sizeof h->stack ? s->stack_len : sizeof h->stack;
  memcpy(h->stack, s->stack, h->stack_len);
}

static void on_map(void *ctx, const pp_stack_map *m) {
  pp_cli_stacks *k = ctx;
  if (pp_symbols_map(k->y, m->pid, m->start, m->len, m->pgoff, m->path))
    k->failed = 1;
}

static void on_comm(void *ctx, uint32_t pid, uint32_t tid, const char *comm,
                    int exec, uint64_t t) {
  (void)tid, (void)comm, (void)t;
  if (exec)
    pp_symbols_exec(((pp_cli_stacks *)ctx)->y, pid);
}

static void on_fork(void *ctx, uint32_t pid, uint32_t ppid, uint64_t t) {
  (void)t;
  pp_cli_stacks *k = ctx;
  if (pp_symbols_fork(k->y, pid, ppid))
    k->failed = 1;
}

/* Name and keep one held sample: the frames unwound from its copy, or the
 * kernel's chain when the copy gives fewer. */
static void keep(pp_cli_stacks *k, held *h) {
  uint64_t ips[PP_STACKS_MAX_FRAMES];
  int n = 0;
  if (h->has_regs && h->stack_len)
    n = pp_symbols_unwind(k->y, h->pid, h->regs, h->stack, h->stack_len, ips,
                          PP_STACKS_MAX_FRAMES);
  const uint64_t *use = ips;
  if ((uint32_t)n < h->nfp && n < 2) {
    use = h->fp;
    n = (int)h->nfp;
  }
  if (n <= 0) {
    k->set.broken++;
    return;
  }
  int32_t ids[PP_STACKS_MAX_FRAMES];
  for (int i = 0; i < n; i++) {
    const char *module = NULL;
    const char *name = pp_symbols_name(k->y, h->pid, use[i], i > 0, &module);
    char buf[96];
    if (!name) {
      snprintf(buf, sizeof buf, "[%s]", module ? module : "unknown");
      name = buf;
    }
    ids[i] = pp_stack_frame_id(&k->set, name, module);
    if (ids[i] < 0) {
      k->failed = 1;
      return;
    }
  }
  if (pp_stack_add(&k->set, h->pid, h->tid, (int64_t)h->t, ids, (uint32_t)n))
    k->failed = 1;
}

static void pass(pp_cli_stacks *k) {
  pp_stacks_cb cb = {on_sample, on_map, on_comm, on_fork, k};
  k->npass = 0;
  pp_collect_stacks_drain(k->c, &cb);
  /* the pass's mappings are in before its samples are walked: records of
   * different CPUs' rings come in no common order */
  for (size_t i = 0; i < k->npass; i++) {
    if (k->failed)
      k->set.broken++;
    else
      keep(k, &k->pass[i]);
  }
}

static void *drain_main(void *arg) {
  pp_cli_stacks *k = arg;
  pthread_mutex_lock(&k->lock);
  while (!k->stop) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 50000000;
    if (ts.tv_nsec >= 1000000000) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&k->cond, &k->lock, &ts);
    pthread_mutex_unlock(&k->lock);
    pass(k);
    pthread_mutex_lock(&k->lock);
  }
  pthread_mutex_unlock(&k->lock);
  return NULL;
}

pp_cli_stacks *pp_cli_stacks_start(pid_t pid, int hz, char *why,
                                   size_t why_len) {
  pp_cli_stacks *k = pp__calloc(1, sizeof *k);
  if (!k) {
    snprintf(why, why_len, "out of memory");
    return NULL;
  }
  k->y = pp_symbols_new(why, why_len);
  if (!k->y) {
    pp__free(k);
    return NULL;
  }
  k->c = pp_collect_stacks_open(
      pid, hz, PP_STACKS_ENABLE_ON_EXEC | PP_STACKS_USER_STACK, why, why_len);
  if (!k->c) {
    pp_symbols_free(k->y);
    pp__free(k);
    return NULL;
  }
  k->set.hz = hz;
  snprintf(k->set.mode, sizeof k->set.mode, "dwarf");
  pthread_mutex_init(&k->lock, NULL);
  pthread_cond_init(&k->cond, NULL);
  if (pthread_create(&k->thread, NULL, drain_main, k) != 0) {
    snprintf(why, why_len, "cannot start a thread");
    pp_collect_stacks_close(k->c);
    pp_symbols_free(k->y);
    pp__free(k);
    return NULL;
  }
  return k;
}

void pp_cli_stacks_finish(pp_cli_stacks *k, pp_stack_set *out) {
  memset(out, 0, sizeof *out);
  if (!k)
    return;
  pthread_mutex_lock(&k->lock);
  k->stop = 1;
  pthread_cond_signal(&k->cond);
  pthread_mutex_unlock(&k->lock);
  pthread_join(k->thread, NULL);
  pass(k); /* what came after the thread's last pass */
  k->set.lost = pp_collect_stacks_lost(k->c);
  pp_collect_stacks_close(k->c);
  pp_symbols_free(k->y);
  pthread_mutex_destroy(&k->lock);
  pthread_cond_destroy(&k->cond);
  *out = k->set;
  pp__free(k->pass);
  pp__free(k);
}
