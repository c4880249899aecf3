/* SPDX-License-Identifier: MIT */
/*
 * CPU stack samples through perf_event_open(2) (stacks.h): one
 * cpu-clock sampling event per online CPU, inherited, each with its own
 * ring, read from user space without system calls.
 */
#include "stacks.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../internal.h"
#include "perf.h"

/* perf's x86-64 user registers AX..IP (0-8) and R8..R15 (16-23): what
 * DWARF call frame information refers to. */
#define REGS_MASK (0x1ffull | (0xffull << 16))

/* Data pages of one CPU's ring (a power of two): 256 KiB with 4 KiB
 * pages, about 1,600 samples of 20 frames, drained 10 times a second;
 * 2 MiB with stack copies (about 250 samples). */
#define RING_PAGES 64u
#define RING_PAGES_USER_STACK 512u

typedef struct ring {
  int fd;
  void *base;       /* the header page, then the data pages */
  size_t page;      /* bytes of the header page */
  size_t data_size; /* bytes of the data pages, a power of two */
} ring;

struct pp_collect_stacks {
  ring *rings;
  size_t nrings;
  uint64_t lost;
  uint64_t ips[PP_STACKS_MAX_FRAMES];
  int user_stack; /* PP_STACKS_USER_STACK */
  uint64_t regs[PP_STACK_NREGS];
  unsigned char *rec; /* one record copied out when it wraps */
  size_t rec_cap;
};

pp_collect_stacks *pp_collect_stacks_open(pid_t pid, int hz, int flags,
                                          char *why, size_t why_len) {
  if (why && why_len)
    why[0] = '\0';
  if (pid <= 0 || hz < 1 || hz > 10000) {
    if (why && why_len)
      snprintf(why, why_len, "invalid argument (pid %d, %d Hz)", (int)pid, hz);
    errno = EINVAL;
    return NULL;
  }
  long ncpu = sysconf(_SC_NPROCESSORS_CONF);
  if (ncpu < 1)
    ncpu = 1;
  pp_collect_stacks *s = pp__calloc(1, sizeof *s);
  if (!s)
    return NULL;
  s->user_stack = (flags & PP_STACKS_USER_STACK) != 0;
  s->rings = pp__calloc((size_t)ncpu, sizeof *s->rings);
  if (!s->rings) {
    pp__free(s);
    return NULL;
  }
  long page = sysconf(_SC_PAGESIZE);
  if (page <= 0)
    page = 4096;
  int first_err = 0;
  for (long cpu = 0; cpu < ncpu; cpu++) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.freq = 1;
    a.sample_freq = (uint64_t)hz;
    a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
    if (flags & PP_STACKS_USER_STACK) {
      a.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
      a.sample_regs_user = REGS_MASK;
      a.sample_stack_user = PP_STACKS_STACK_BYTES;
    }
    a.inherit = 1;
    a.mmap = 1;
    a.comm = 1;
    a.comm_exec = 1;
    a.task = 1;
    a.sample_id_all = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.exclude_callchain_kernel = 1;
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    if (flags & PP_STACKS_ENABLE_ON_EXEC) {
      a.disabled = 1;
      a.enable_on_exec = 1;
    }
    int fd =
        pp_collect_perf_event_open(&a, pid, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
      if (errno == ENODEV || errno == EINVAL) /* an offline CPU */
        continue;
      if (!first_err)
        first_err = errno;
      continue;
    }
    size_t pages = s->user_stack ? RING_PAGES_USER_STACK : RING_PAGES;
    size_t len = (size_t)page * (1 + pages);
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
      if (!first_err)
        first_err = errno;
      close(fd);
      continue;
    }
    ring *r = &s->rings[s->nrings++];
    r->fd = fd;
    r->base = m;
    r->page = (size_t)page;
    r->data_size = (size_t)page * pages;
  }
  if (!s->nrings) {
    if (why && why_len) {
      char tmp[160];
      int err = first_err ? first_err : ENODEV;
      snprintf(why, why_len, "CPU stack samples: %s",
               pp_collect_perf_strerror(err, pp_collect_perf_paranoid(), tmp,
                                        sizeof tmp));
    }
    pp__free(s->rings);
    pp__free(s);
    errno = first_err ? first_err : ENODEV;
    return NULL;
  }
  return s;
}

/* The record at offset off of r's data, whole: in place, or copied into
 * s->rec when it wraps around the end. NULL when out of memory. */
static const unsigned char *record_at(pp_collect_stacks *s, const ring *r,
                                      uint64_t off, size_t size) {
  const unsigned char *data = (const unsigned char *)r->base + r->page;
  size_t at = (size_t)(off & (r->data_size - 1));
  if (at + size <= r->data_size)
    return data + at;
  if (size > s->rec_cap) {
    unsigned char *n = pp__realloc(s->rec, size);
    if (!n)
      return NULL;
    s->rec = n;
    s->rec_cap = size;
  }
  size_t first = r->data_size - at;
  memcpy(s->rec, data + at, first);
  memcpy(s->rec + first, data, size - first);
  return s->rec;
}

static uint64_t u64_at(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static uint32_t u32_at(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* PERF_SAMPLE_TID | TIME | CALLCHAIN: pid, tid, time, nr, ips[nr]. */
static void on_sample(pp_collect_stacks *s, const unsigned char *p, size_t size,
                      const pp_stacks_cb *cb) {
  if (size < 8 + 24)
    return;
  pp_stack_sample ss;
  ss.pid = u32_at(p + 8);
  ss.tid = u32_at(p + 12);
  ss.time_ns = u64_at(p + 16);
  uint64_t nr = u64_at(p + 24);
  if (nr > (size - 32) / 8)
    return; /* malformed: never from this kernel */
  uint32_t n = 0;
  int user = 1;
  for (uint64_t i = 0; i < nr && n < PP_STACKS_MAX_FRAMES; i++) {
    uint64_t ip = u64_at(p + 32 + 8 * i);
    if (ip >= (uint64_t)PERF_CONTEXT_MAX) { /* a context marker */
      user = ip == (uint64_t)PERF_CONTEXT_USER;
      continue;
    }
    if (user && ip)
      s->ips[n++] = ip;
  }
  ss.regs = NULL;
  ss.stack = NULL;
  ss.stack_len = 0;
  if (s->user_stack) {
    /* REGS_USER: abi, then the registers (none when abi is 0, a kernel
     * thread); STACK_USER: size, the bytes, the size actually copied */
    size_t at = 32 + 8 * (size_t)nr;
    if (at + 8 > size)
      return;
    uint64_t abi = u64_at(p + at);
    at += 8;
    if (abi) {
      if (at + 8 * PP_STACK_NREGS > size)
        return;
      for (int i = 0; i < PP_STACK_NREGS; i++)
        s->regs[i] = u64_at(p + at + 8 * (size_t)i);
      at += 8 * PP_STACK_NREGS;
      ss.regs = s->regs;
    }
    if (at + 8 <= size) {
      uint64_t len = u64_at(p + at);
      at += 8;
      if (len && len <= size - at && size - at - len >= 8) {
        uint64_t dyn = u64_at(p + at + len);
        ss.stack = p + at;
        ss.stack_len = (size_t)(dyn < len ? dyn : len);
      }
    }
  }
  if (!n || !cb->sample)
    return;
  ss.nips = n;
  ss.ips = s->ips;
  cb->sample(cb->ctx, &ss);
}

/* PERF_RECORD_MMAP: pid, tid, addr, len, pgoff, filename, then the 16
 * bytes of sample_id (pid/tid, time). */
static void on_mmap(const unsigned char *p, size_t size,
                    const pp_stacks_cb *cb) {
  if (!cb->map || size < 8 + 32 + 16 + 1)
    return;
  pp_stack_map m;
  m.pid = u32_at(p + 8);
  m.start = u64_at(p + 16);
  m.len = u64_at(p + 24);
  m.pgoff = u64_at(p + 32);
  char path[4096];
  size_t max = size - 40 - 16;
  if (max >= sizeof path)
    max = sizeof path - 1;
  memcpy(path, p + 40, max);
  path[max] = '\0';
  m.path = path;
  m.time_ns = u64_at(p + size - 8);
  cb->map(cb->ctx, &m);
}

/* PERF_RECORD_COMM: pid, tid, comm, then sample_id. */
static void on_comm(const unsigned char *p, size_t size, uint16_t misc,
                    const pp_stacks_cb *cb) {
  if (!cb->comm || size < 8 + 8 + 16 + 1)
    return;
  char comm[32];
  size_t max = size - 16 - 16;
  if (max >= sizeof comm)
    max = sizeof comm - 1;
  memcpy(comm, p + 16, max);
  comm[max] = '\0';
  cb->comm(cb->ctx, u32_at(p + 8), u32_at(p + 12), comm,
           (misc & PERF_RECORD_MISC_COMM_EXEC) != 0, u64_at(p + size - 8));
}

/* PERF_RECORD_FORK: pid, ppid, tid, ptid, time, then sample_id. */
static void on_fork(const unsigned char *p, size_t size,
                    const pp_stacks_cb *cb) {
  if (!cb->fork || size < 8 + 24)
    return;
  uint32_t pid = u32_at(p + 8), ppid = u32_at(p + 12);
  if (pid != ppid)
    cb->fork(cb->ctx, pid, ppid, u64_at(p + 24));
}

static size_t drain_ring(pp_collect_stacks *s, ring *r,
                         const pp_stacks_cb *cb) {
  struct perf_event_mmap_page *h = r->base;
  uint64_t head = atomic_load_explicit(
      (_Atomic uint64_t *)(void *)&h->data_head, memory_order_acquire);
  uint64_t tail = h->data_tail;
  size_t n = 0;
  while (tail < head) {
    struct perf_event_header eh;
    const unsigned char *p = record_at(s, r, tail, sizeof eh);
    if (!p)
      break;
    memcpy(&eh, p, sizeof eh);
    if (eh.size < sizeof eh || eh.size > head - tail)
      break; /* never from the kernel: stop rather than loop */
    p = record_at(s, r, tail, eh.size);
    if (!p)
      break;
    switch (eh.type) {
    case PERF_RECORD_SAMPLE:
      on_sample(s, p, eh.size, cb);
      break;
    case PERF_RECORD_MMAP:
      on_mmap(p, eh.size, cb);
      break;
    case PERF_RECORD_COMM:
      on_comm(p, eh.size, eh.misc, cb);
      break;
    case PERF_RECORD_FORK:
      on_fork(p, eh.size, cb);
      break;
    case PERF_RECORD_LOST:
      if (eh.size >= 8 + 16)
        s->lost += u64_at(p + 16);
      break;
    default:
      break;
    }
    tail += eh.size;
    n++;
  }
  atomic_store_explicit((_Atomic uint64_t *)(void *)&h->data_tail, tail,
                        memory_order_release);
  return n;
}

size_t pp_collect_stacks_drain(pp_collect_stacks *s, const pp_stacks_cb *cb) {
  if (!s || !cb)
    return 0;
  size_t n = 0;
  for (size_t i = 0; i < s->nrings; i++)
    n += drain_ring(s, &s->rings[i], cb);
  return n;
}

uint64_t pp_collect_stacks_lost(const pp_collect_stacks *s) {
  return s ? s->lost : 0;
}

void pp_collect_stacks_close(pp_collect_stacks *s) {
  if (!s)
    return;
  for (size_t i = 0; i < s->nrings; i++) {
    munmap(s->rings[i].base, s->rings[i].page + s->rings[i].data_size);
    close(s->rings[i].fd);
  }
  pp__free(s->rings);
  pp__free(s->rec);
  pp__free(s);
}
