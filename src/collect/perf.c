/* SPDX-License-Identifier: MIT */
/*
 * perf_event_open(2) counters for a process tree: the event table (generic
 * hardware, hardware-cache and software events under the names perf
 * prints), opening each event on its own with inherit = 1 and the
 * TOTAL_TIME_ENABLED/RUNNING read format, the retry with the kernel
 * excluded when the paranoid level refuses it, errno-to-words reasons, and
 * reads with multiplexing scaling and derived ratios. Also the syscall hook
 * that tests use to inject failures.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collect/perf.h"
#include "internal.h"

#define PP_PERF_REASON_LEN 128

typedef struct event_def {
  const char *name;
  const char *unit;
  uint32_t type;
  uint64_t config;
  int hardware;
  int kernel_side; /* happens only in kernel mode: 0 when it is excluded */
} event_def;

#define HW_CACHE(id, op, res)                                               \
  ((uint64_t)(id) | ((uint64_t)(op) << 8) | ((uint64_t)(res) << 16))

static const event_def events[PP_PERF_NEVENTS] = {
    [PP_PERF_CYCLES] = {"cycles", "", PERF_TYPE_HARDWARE,
                        PERF_COUNT_HW_CPU_CYCLES, 1},
    [PP_PERF_INSTRUCTIONS] = {"instructions", "", PERF_TYPE_HARDWARE,
                              PERF_COUNT_HW_INSTRUCTIONS, 1},
    [PP_PERF_CACHE_REFERENCES] = {"cache-references", "", PERF_TYPE_HARDWARE,
                                  PERF_COUNT_HW_CACHE_REFERENCES, 1},
    [PP_PERF_CACHE_MISSES] = {"cache-misses", "", PERF_TYPE_HARDWARE,
                              PERF_COUNT_HW_CACHE_MISSES, 1},
    [PP_PERF_BRANCHES] = {"branches", "", PERF_TYPE_HARDWARE,
                          PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 1},
    [PP_PERF_BRANCH_MISSES] = {"branch-misses", "", PERF_TYPE_HARDWARE,
                               PERF_COUNT_HW_BRANCH_MISSES, 1},
    [PP_PERF_L1D_LOAD_MISSES] = {"L1-dcache-load-misses", "",
                                 PERF_TYPE_HW_CACHE,
                                 HW_CACHE(PERF_COUNT_HW_CACHE_L1D,
                                          PERF_COUNT_HW_CACHE_OP_READ,
                                          PERF_COUNT_HW_CACHE_RESULT_MISS),
                                 1},
    [PP_PERF_LLC_LOAD_MISSES] = {"LLC-load-misses", "", PERF_TYPE_HW_CACHE,
                                 HW_CACHE(PERF_COUNT_HW_CACHE_LL,
                                          PERF_COUNT_HW_CACHE_OP_READ,
                                          PERF_COUNT_HW_CACHE_RESULT_MISS),
                                 1},
    [PP_PERF_TASK_CLOCK] = {"task-clock", "msec", PERF_TYPE_SOFTWARE,
                            PERF_COUNT_SW_TASK_CLOCK, 0},
    [PP_PERF_CONTEXT_SWITCHES] = {"context-switches", "", PERF_TYPE_SOFTWARE,
                                  PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 1},
    [PP_PERF_CPU_MIGRATIONS] = {"cpu-migrations", "", PERF_TYPE_SOFTWARE,
                                PERF_COUNT_SW_CPU_MIGRATIONS, 0, 1},
    [PP_PERF_PAGE_FAULTS] = {"page-faults", "", PERF_TYPE_SOFTWARE,
                             PERF_COUNT_SW_PAGE_FAULTS, 0},
};

struct pp_collect_perf {
  pid_t pid;
  int fd[PP_PERF_NEVENTS];
  int user_only[PP_PERF_NEVENTS];
  char reason[PP_PERF_NEVENTS][PP_PERF_REASON_LEN];
  char hw_reason[PP_PERF_REASON_LEN + 48];
  int navailable;
};

static pp_collect_perf_open_fn open_hook;

void pp_collect_perf_set_open_hook(pp_collect_perf_open_fn fn) {
  open_hook = fn;
}

int pp_collect_perf_event_open(struct perf_event_attr *attr, pid_t pid,
                               int cpu, int group_fd, unsigned long flags) {
  if (open_hook)
    return open_hook(attr, pid, cpu, group_fd, flags);
#ifdef SYS_perf_event_open
  long r = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
  return (int)r;
#else
  errno = ENOSYS;
  return -1;
#endif
}

const char *pp_collect_perf_event_name(int id) {
  if (id < 0 || id >= PP_PERF_NEVENTS)
    return NULL;
  return events[id].name;
}

int pp_collect_perf_paranoid(void) {
  int v = 2;
  FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
  if (f) {
    if (fscanf(f, "%d", &v) != 1)
      v = 2;
    fclose(f);
  }
  return v;
}

const char *pp_collect_perf_strerror(int err, int paranoid, char *buf,
                                     size_t len) {
  switch (err) {
  case ENOENT:
  case EOPNOTSUPP:
    return "not supported by this CPU or virtual machine";
  case EACCES:
  case EPERM:
    if (buf && len) {
      snprintf(buf, len,
               "permission denied (perf_event_paranoid=%d; run as root or "
               "lower it)",
               paranoid);
      return buf;
    }
    return "permission denied (perf_event_paranoid; run as root or lower "
           "it)";
  case ENODEV:
    return "not supported: no such PMU on this system";
  case EINVAL:
    return "invalid event for this kernel or CPU (EINVAL)";
  case EMFILE:
    return "too many open files (raise the limit: ulimit -n)";
  case ENFILE:
    return "system file table full (ENFILE)";
  case ESRCH:
    return "target process not found";
  case EBUSY:
    return "counters busy (in use by another tool or the hypervisor)";
  case ENOSPC:
    return "no free hardware counter (ENOSPC)";
  case ENOSYS:
    return "perf_event_open not available (kernel without perf events, or "
           "blocked by seccomp)";
  case E2BIG:
    return "perf_event_attr not understood by this kernel (E2BIG)";
  default:
    if (buf && len) {
      snprintf(buf, len, "perf_event_open failed (errno %d)", err);
      return buf;
    }
    return "perf_event_open failed";
  }
}

static void set_reason(pp_collect_perf *p, int i, int err, int paranoid) {
  char tmp[PP_PERF_REASON_LEN];
  const char *s = pp_collect_perf_strerror(err, paranoid, tmp, sizeof tmp);
  snprintf(p->reason[i], sizeof p->reason[i], "%s", s);
}

/* Open event i; on EACCES/EPERM with the kernel still counted, retry with
 * it excluded as perf does. Returns the fd or -1 (errno set). */
static int open_event(pp_collect_perf *p, int i, int flags, int exclude,
                      int *user_only) {
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = events[i].type;
  attr.config = events[i].config;
  attr.read_format =
      PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  attr.inherit = 1;
  if (flags & PP_PERF_ENABLE_ON_EXEC) {
    attr.disabled = 1;
    attr.enable_on_exec = 1;
  }
  attr.exclude_kernel = exclude ? 1 : 0;
  attr.exclude_hv = exclude ? 1 : 0;
  int fd = pp_collect_perf_event_open(&attr, p->pid, -1, -1,
                                      PERF_FLAG_FD_CLOEXEC);
  if (fd < 0 && !exclude && (errno == EACCES || errno == EPERM)) {
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    fd = pp_collect_perf_event_open(&attr, p->pid, -1, -1,
                                    PERF_FLAG_FD_CLOEXEC);
    if (fd >= 0)
      exclude = 1;
  }
  *user_only = fd >= 0 && exclude;
  return fd;
}

pp_collect_perf *pp_collect_perf_open(pid_t pid, int flags) {
  if (pid < 0) {
    errno = EINVAL;
    return NULL;
  }
  pp_collect_perf *p = pp__calloc(1, sizeof *p);
  if (!p) {
    errno = ENOMEM;
    return NULL;
  }
  p->pid = pid;
  int paranoid = pp_collect_perf_paranoid();
  /* Unprivileged at paranoid >= 2: only user space may be counted, so ask
   * for that up front instead of failing each event once. */
  int exclude = paranoid >= 2 && geteuid() != 0;
  int first_hw_err = 0;
  for (int i = 0; i < PP_PERF_NEVENTS; i++) {
    p->fd[i] = open_event(p, i, flags, exclude, &p->user_only[i]);
    if (p->fd[i] >= 0) {
      p->navailable++;
      if (p->user_only[i] && events[i].kernel_side)
        snprintf(p->reason[i], sizeof p->reason[i],
                 "not counted with the kernel excluded "
                 "(perf_event_paranoid=%d; run as root or lower it)",
                 paranoid);
      continue;
    }
    int err = errno;
    set_reason(p, i, err, paranoid);
    if (events[i].hardware && !first_hw_err)
      first_hw_err = i + 1;
  }
  int any_hw = 0;
  for (int i = 0; i < PP_PERF_NEVENTS; i++)
    if (events[i].hardware && p->fd[i] >= 0)
      any_hw = 1;
  if (!any_hw && first_hw_err)
    snprintf(p->hw_reason, sizeof p->hw_reason,
             "hardware counters unavailable: %s",
             p->reason[first_hw_err - 1]);
  return p;
}

int pp_collect_perf_navailable(const pp_collect_perf *p) {
  return p ? p->navailable : 0;
}

const char *pp_collect_perf_hw_reason(const pp_collect_perf *p) {
  return p && p->hw_reason[0] ? p->hw_reason : NULL;
}

static int read_event(int fd, uint64_t v[3]) {
  for (;;) {
    ssize_t n = read(fd, v, 3 * sizeof v[0]);
    if (n == (ssize_t)(3 * sizeof v[0]))
      return 0;
    if (n < 0 && errno == EINTR)
      continue;
    return -1;
  }
}

static void ratio(const pp_perf_sample *s, int num, int den, int *has,
                  double *out) {
  const pp_perf_value *a = &s->ev[num], *b = &s->ev[den];
  *has = 0;
  *out = 0;
  if (a->counted && b->counted && b->value > 0) {
    *has = 1;
    *out = a->value / b->value;
  }
}

int pp_collect_perf_read(pp_collect_perf *p, pp_perf_sample *out) {
  if (!p || !out) {
    errno = EINVAL;
    return -1;
  }
  memset(out, 0, sizeof *out);
  for (int i = 0; i < PP_PERF_NEVENTS; i++) {
    pp_perf_value *v = &out->ev[i];
    v->name = events[i].name;
    v->unit = events[i].unit;
    v->hardware = events[i].hardware;
    if (p->fd[i] < 0) {
      v->reason = p->reason[i];
      continue;
    }
    v->available = 1;
    v->user_only = p->user_only[i];
    out->navailable++;
    uint64_t r[3];
    if (read_event(p->fd[i], r) != 0) {
      v->reason = "read failed";
      continue;
    }
    v->raw = r[0];
    v->time_enabled = r[1];
    v->time_running = r[2];
    if (v->user_only && events[i].kernel_side) {
      /* The kernel records these in kernel mode only: always 0 here. */
      v->reason = p->reason[i];
      continue;
    }
    if (r[2] == 0) {
      v->reason = r[1] == 0 ? "not counted (not enabled yet)"
                            : "not counted (multiplexed out)";
      continue;
    }
    double scaled = (double)r[0];
    if (r[1] > r[2])
      scaled = scaled * (double)r[1] / (double)r[2];
    v->running_share = r[1] > r[2] ? (double)r[2] / (double)r[1] : 1.0;
    if (i == PP_PERF_TASK_CLOCK)
      scaled /= 1e6; /* ns -> msec, as perf prints it */
    v->value = scaled;
    v->counted = 1;
    out->ncounted++;
  }
  ratio(out, PP_PERF_INSTRUCTIONS, PP_PERF_CYCLES, &out->has_ipc, &out->ipc);
  ratio(out, PP_PERF_CACHE_MISSES, PP_PERF_CACHE_REFERENCES,
        &out->has_cache_miss_ratio, &out->cache_miss_ratio);
  ratio(out, PP_PERF_BRANCH_MISSES, PP_PERF_BRANCHES,
        &out->has_branch_miss_ratio, &out->branch_miss_ratio);
  return out->ncounted;
}

void pp_collect_perf_close(pp_collect_perf *p) {
  if (!p)
    return;
  for (int i = 0; i < PP_PERF_NEVENTS; i++)
    if (p->fd[i] >= 0)
      close(p->fd[i]);
  pp__free(p);
}
