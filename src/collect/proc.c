/* SPDX-License-Identifier: MIT */
/*
 * Linux /proc and /sys reader (contracts in proc.h): discovery of what the
 * machine exposes, system samples (CPU times, memory, load, PSI, cpufreq,
 * thermal throttling, temperatures, NUMA), process-tree samples with a
 * departed accumulator, and the rate functions. All paths are relative to
 * the reader's root directory fd; numbers are parsed by hand (no locale, no
 * strtod) with overflow checks; every failure turns into an "unavailable:"
 * reason for its group instead of an error of the whole sample.
 */
#include "collect/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define PP__READ_MAX ((size_t)64 << 20) /* cap of the scratch buffer */
#define PP__NFAULTS 8
#define PP__REASON_LEN 512
#define PP__EPARSE (-1) /* pseudo errno: file present but not understood */

/* ---- read-only tables ---------------------------------------------------- */

static const char *const group_names[PP_COLLECT_NGROUPS] = {
    [PP_COLLECT_CPU] = "cpu",
    [PP_COLLECT_LOADAVG] = "loadavg",
    [PP_COLLECT_MEMINFO] = "meminfo",
    [PP_COLLECT_PSI_CPU] = "psi_cpu",
    [PP_COLLECT_PSI_MEMORY] = "psi_memory",
    [PP_COLLECT_PSI_IO] = "psi_io",
    [PP_COLLECT_PSI_IRQ] = "psi_irq",
    [PP_COLLECT_CPUFREQ] = "cpufreq",
    [PP_COLLECT_THROTTLE] = "throttle",
    [PP_COLLECT_HWMON] = "hwmon",
    [PP_COLLECT_THERMAL] = "thermal",
    [PP_COLLECT_NUMA] = "numa",
    [PP_COLLECT_PROC_STAT] = "proc_stat",
    [PP_COLLECT_PROC_STATUS] = "proc_status",
    [PP_COLLECT_PROC_IO] = "proc_io",
};

/* Said after "no such file PATH" to explain the usual cause. */
static const char *const group_hints[PP_COLLECT_NGROUPS] = {
    [PP_COLLECT_PSI_CPU] = "kernel without PSI: needs 4.20+ and psi=1",
    [PP_COLLECT_PSI_MEMORY] = "kernel without PSI: needs 4.20+ and psi=1",
    [PP_COLLECT_PSI_IO] = "kernel without PSI: needs 4.20+ and psi=1",
    [PP_COLLECT_PSI_IRQ] = "needs kernel 6.1+ with IRQ time accounting",
    [PP_COLLECT_CPUFREQ] = "no cpufreq driver, common in VMs",
    [PP_COLLECT_THROTTLE] = "Intel only",
    [PP_COLLECT_HWMON] = "no sensors exposed",
    [PP_COLLECT_THERMAL] = "no thermal zones",
    [PP_COLLECT_NUMA] = "kernel without NUMA support",
    [PP_COLLECT_PROC_IO] = "kernel without task I/O accounting",
};

/* System files kept open and re-read with pread(). */
enum {
  FH_STAT,
  FH_MEMINFO,
  FH_LOADAVG,
  FH_PSI_CPU,
  FH_PSI_MEMORY,
  FH_PSI_IO,
  FH_PSI_IRQ,
  FH_N
};
static const char *const fh_rel[FH_N] = {
    "proc/stat",         "proc/meminfo",         "proc/loadavg",
    "proc/pressure/cpu", "proc/pressure/memory", "proc/pressure/io",
    "proc/pressure/irq",
};
static const pp_collect_group fh_group[FH_N] = {
    PP_COLLECT_CPU,     PP_COLLECT_MEMINFO,    PP_COLLECT_LOADAVG,
    PP_COLLECT_PSI_CPU, PP_COLLECT_PSI_MEMORY, PP_COLLECT_PSI_IO,
    PP_COLLECT_PSI_IRQ,
};

typedef struct key_off {
  const char *key; /* including the colon */
  size_t len;
  size_t off; /* of a uint64_t field */
} key_off;

#define KEY(k, type, field)                                                    \
  { k, sizeof(k) - 1, offsetof(type, field) }
static const key_off meminfo_keys[] = {
    KEY("MemTotal:", pp_system_sample, mem_total),
    KEY("MemFree:", pp_system_sample, mem_free),
    KEY("MemAvailable:", pp_system_sample, mem_available),
    KEY("Buffers:", pp_system_sample, buffers),
    KEY("Cached:", pp_system_sample, cached),
    KEY("SwapTotal:", pp_system_sample, swap_total),
    KEY("SwapFree:", pp_system_sample, swap_free),
    KEY("Shmem:", pp_system_sample, shmem),
};
static const key_off numa_keys[] = {
    KEY("MemTotal:", pp_numa_sample, mem_total),
    KEY("MemFree:", pp_numa_sample, mem_free),
    KEY("MemUsed:", pp_numa_sample, mem_used),
};
static const key_off status_keys[] = {
    KEY("VmHWM:", pp_proc_sample, hwm_bytes),
    KEY("VmRSS:", pp_proc_sample, rss_bytes),
    KEY("voluntary_ctxt_switches:", pp_proc_sample, c.vol_ctxt),
    KEY("nonvoluntary_ctxt_switches:", pp_proc_sample, c.nonvol_ctxt),
};
static const key_off io_keys[] = {
    KEY("rchar:", pp_proc_counters, rchar),
    KEY("wchar:", pp_proc_counters, wchar),
    KEY("read_bytes:", pp_proc_counters, read_bytes),
    KEY("write_bytes:", pp_proc_counters, write_bytes),
};
#undef KEY

static const size_t counter_offs[] = {
    offsetof(pp_proc_counters, utime_ns),
    offsetof(pp_proc_counters, stime_ns),
    offsetof(pp_proc_counters, minflt),
    offsetof(pp_proc_counters, majflt),
    offsetof(pp_proc_counters, vol_ctxt),
    offsetof(pp_proc_counters, nonvol_ctxt),
    offsetof(pp_proc_counters, rchar),
    offsetof(pp_proc_counters, wchar),
    offsetof(pp_proc_counters, read_bytes),
    offsetof(pp_proc_counters, write_bytes),
};

/* ---- reader state -------------------------------------------------------- */

typedef struct fault {
  char rel[128];
  int err;
} fault;

typedef struct policy {
  char rel[96]; /* .../policyN/scaling_cur_freq */
  int *cpus;
  size_t ncpus;
} policy;

typedef struct sensor {
  pp_temp_kind kind;
  int k1, k2; /* sort keys: hwmonN / zone N, tempM */
  char *rel;
  char *chip;
  char *label;
} sensor;

/* MARK_GONE: in the tree, but exited between its stat and status reads. */
enum { MARK_UNKNOWN = 0, MARK_VISITING, MARK_IN, MARK_OUT, MARK_GONE };

/* Parsed /proc/[pid]/stat of one process of the scan. */
typedef struct scan_ent {
  pid_t pid, ppid;
  char state;
  unsigned char mark;
  char comm[64];
  uint64_t start, minflt, majflt, utime, stime, cutime, cstime;
  uint64_t threads, vsize, rss_pages;
  uint64_t kids_clk; /* CPU clock when its children were read; NONE */
} scan_ent;

typedef struct prev_ent {
  pid_t pid;
  uint64_t start;
  pp_proc_counters c;
  uint64_t kids_clk; /* CPU clock when its children were read; NONE */
} prev_ent;

/* A process whose threads the last pp_collect_threads read: its CPU clock
 * then, and where its threads are in r->tprev. */
typedef struct thr_proc {
  pid_t pid;
  clockid_t clock; /* its CPU-time clock */
  uint64_t start;
  uint64_t clk; /* the clock before its threads were read; NONE */
  size_t first, n;
} thr_proc;

/* Files read at every sample stay open and are re-read with pread: in a
 * virtual machine each open/close pair costs more than the read. Keys are
 * paths relative to the root; an entry whose read fails (the process
 * exited) is closed and dropped. When the cache is full, files are opened
 * and closed as before. */
#define FD_CACHE 256
typedef struct fd_cache_ent {
  char key[56];
  int fd; /* -1: free */
} fd_cache_ent;

struct pp_collect_proc {
  fd_cache_ent fdc[FD_CACHE];
  int fd_cache;  /* keep files open (real /proc and /sys only) */
  DIR *procdir;  /* /proc, kept open with fd_cache (proc_dir) */
  int fd_budget; /* at most this many kept open (inside a host program the
                    reader must not eat its file descriptors) */
  int fd_kept;
  int rootfd;
  char root[PATH_MAX]; /* display prefix without trailing slash */
  uint64_t clk_tck, page_size;
  int fh[FH_N];
  int fh_err[FH_N];
  char *buf;
  size_t bufcap;

  size_t ncpu_slots;
  uint8_t *thr; /* per CPU: bit 0 core, bit 1 package throttle counter */
  size_t nthr;
  policy *pol;
  size_t npol, pol_cap;
  bool cpuinfo_mhz;
  sensor *sens;
  size_t nsens, sens_cap;
  int *nodes;
  size_t nnodes, nodes_cap;
  /* CPU frequency, throttle counts, temperatures and NUMA nodes: read at
   * most once per slow_every_ns (0: every call); when last read */
  uint64_t slow_every_ns, slow_last_ns;

  bool gavail[PP_COLLECT_NGROUPS];
  int gerr[PP_COLLECT_NGROUPS];
  char reason[PP_COLLECT_NGROUPS][PP__REASON_LEN];

  fault faults[PP__NFAULTS];
  int nfaults;

  /* process tree */
  pid_t troot;
  uint64_t troot_start; /* 0: not seen yet */
  uint64_t last_pid;    /* /proc/loadavg's last pid at the last full scan */
  int last_pid_valid;
  uint64_t last_full_ns; /* when the last full scan of /proc ran */
  scan_ent *scan;
  size_t nscan, scan_cap;
  int32_t *hash;
  size_t hash_cap;
  int32_t *stack;
  size_t stack_cap;
  prev_ent *prev, *cur;
  size_t nprev, prev_cap, cur_cap;
  pp_proc_counters departed;
  uint64_t ndeparted, rss_peak, hwm_max;

  /* threads: what the last pp_collect_threads read, reused for processes
   * whose CPU clock has not moved since (cpu_clocks: real /proc only) */
  int cpu_clocks;
  pp_thread_sample *tprev;
  size_t ntprev, tprev_cap;
  thr_proc *tproc, *tproc_new;
  size_t ntproc, tproc_cap, tproc_new_cap;
  size_t nthreads_reused; /* by the last pp_collect_threads */
};

/* ---- small helpers ------------------------------------------------------- */

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t ticks_to_ns(uint64_t t, uint64_t tck) {
  return t / tck * 1000000000u + t % tck * 1000000000u / tck;
}

static uint64_t *u64_at(void *base, size_t off) {
  return (uint64_t *)(void *)((char *)base + off);
}

static uint64_t u64_get(const void *base, size_t off) {
  uint64_t v;
  memcpy(&v, (const char *)base + off, sizeof v);
  return v;
}

static void err_words(int e, char *buf, size_t n) {
  if (e == PP__EPARSE) {
    snprintf(buf, n, "cannot parse");
    return;
  }
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  const char *s = strerror_r(e, buf, n);
  if (s != buf)
    snprintf(buf, n, "%s", s);
#else
  if (strerror_r(e, buf, n) != 0)
    snprintf(buf, n, "error %d", e);
#endif
  if (buf[0] >= 'A' && buf[0] <= 'Z')
    buf[0] = (char)(buf[0] - 'A' + 'a');
}

/* snprintf for human text, where cutting a long path short is acceptable. */
__attribute__((format(printf, 3, 4))) static void
text_fmt(char *dst, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dst, n, fmt, ap);
  va_end(ap);
}

static void group_ok(pp_collect_proc *r, pp_collect_group g) {
  r->gavail[g] = true;
  r->gerr[g] = 0;
  r->reason[g][0] = '\0';
}

/* Mark g unavailable because reading rel failed with err. The text is only
 * formatted again when the error changes, so a file that fails at every
 * sample costs no snprintf. */
static void group_fail(pp_collect_proc *r, pp_collect_group g, int err,
                       const char *rel) {
  r->gavail[g] = false;
  if (r->gerr[g] == err && r->reason[g][0])
    return;
  r->gerr[g] = err;
  const char *hint = group_hints[g];
  if (err == ENOENT) {
    text_fmt(r->reason[g], PP__REASON_LEN,
             "unavailable: no such file %s/%s%s%s%s", r->root, rel,
             hint ? " (" : "", hint ? hint : "", hint ? ")" : "");
  } else {
    char words[128];
    err_words(err, words, sizeof words);
    text_fmt(r->reason[g], PP__REASON_LEN, "unavailable: %s reading %s/%s",
             words, r->root, rel);
  }
}

/* Mark g unavailable with a free-form reason (after "unavailable: "). */
__attribute__((format(printf, 3, 4))) static void
group_failf(pp_collect_proc *r, pp_collect_group g, const char *fmt, ...) {
  r->gavail[g] = false;
  r->gerr[g] = INT_MIN;
  int n = snprintf(r->reason[g], PP__REASON_LEN, "unavailable: ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->reason[g] + n, PP__REASON_LEN - (size_t)n, fmt, ap);
  va_end(ap);
}

static int fault_err(const pp_collect_proc *r, const char *rel) {
  for (int i = 0; i < r->nfaults; i++)
    if (strcmp(r->faults[i].rel, rel) == 0)
      return r->faults[i].err;
  return 0;
}

/* openat relative to dirfd; fault_rel is the root-relative name checked
 * against injected faults (NULL: rel itself). O_NONBLOCK so that a FIFO in
 * a bad tree cannot block the sampler. */
static int open_at(const pp_collect_proc *r, int dirfd, const char *rel,
                   const char *fault_rel, int flags, int *err) {
  if (r->nfaults) {
    int e = fault_err(r, fault_rel ? fault_rel : rel);
    if (e) {
      *err = e;
      return -1;
    }
  }
  int fd = openat(dirfd, rel, flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    *err = errno;
  return fd;
}

static bool exists_rel(const pp_collect_proc *r, const char *rel) {
  if (r->nfaults && fault_err(r, rel))
    return false;
  return faccessat(r->rootfd, rel, F_OK, 0) == 0;
}

/* Read a whole file from offset 0 into r->buf (NUL-terminated). One pread
 * when the buffer is large enough; a full buffer means the file may be
 * longer, so the buffer doubles and the read starts over (a consistent
 * snapshot of /proc files that are generated on read). Returns 0 or an
 * errno value. */
static int read_fd(pp_collect_proc *r, int fd, size_t *len) {
  for (;;) {
    ssize_t n = pread(fd, r->buf, r->bufcap - 1, 0);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return errno;
    }
    if ((size_t)n < r->bufcap - 1 || r->bufcap >= PP__READ_MAX) {
      r->buf[n] = '\0';
      *len = (size_t)n;
      return 0;
    }
    char *nb = pp__realloc(r->buf, r->bufcap * 2);
    if (!nb)
      return ENOMEM;
    r->buf = nb;
    r->bufcap *= 2;
  }
}

static fd_cache_ent *fdc_find(pp_collect_proc *r, const char *key,
                              fd_cache_ent **free_ent) {
  *free_ent = NULL;
  for (size_t i = 0; i < FD_CACHE; i++) {
    fd_cache_ent *e = &r->fdc[i];
    if (e->fd < 0) {
      if (!*free_ent)
        *free_ent = e;
    } else if (strcmp(e->key, key) == 0) {
      return e;
    }
  }
  return NULL;
}

static void fdc_close_all(pp_collect_proc *r) {
  for (size_t i = 0; i < FD_CACHE; i++) {
    if (r->fdc[i].fd >= 0)
      close(r->fdc[i].fd);
    r->fdc[i].fd = -1;
  }
  r->fd_kept = 0;
}

void pp_collect_proc_set_fd_budget(pp_collect_proc *r, int n) {
  if (!r)
    return;
  r->fd_budget = n < 0 ? 0 : n > (int)FD_CACHE ? (int)FD_CACHE : n;
}

static int read_at(pp_collect_proc *r, int dirfd, const char *rel,
                   const char *fault_rel, size_t *len) {
  const char *key = fault_rel ? fault_rel : rel;
  int err = 0;
  if (r->nfaults && (err = fault_err(r, key)) != 0)
    return err;
  fd_cache_ent *free_ent = NULL;
  fd_cache_ent *e = r->fd_cache && strlen(key) < sizeof e->key
                         ? fdc_find(r, key, &free_ent)
                         : NULL;
  if (e) {
    err = read_fd(r, e->fd, len);
    if (err) { /* gone (ESRCH) or changed: forget it */
      close(e->fd);
      e->fd = -1;
      r->fd_kept--;
    }
    return err;
  }
  int fd = open_at(r, dirfd, rel, fault_rel, O_RDONLY, &err);
  if (fd < 0)
    return err;
  err = read_fd(r, fd, len);
  if (!err && free_ent && r->fd_kept < r->fd_budget &&
      strlen(key) < sizeof free_ent->key) {
    memcpy(free_ent->key, key, strlen(key) + 1);
    free_ent->fd = fd;
    r->fd_kept++;
  } else {
    close(fd);
  }
  return err;
}

static int read_rel(pp_collect_proc *r, const char *rel, size_t *len) {
  return read_at(r, r->rootfd, rel, NULL, len);
}

static DIR *opendir_rel(pp_collect_proc *r, const char *rel, int *err) {
  int fd = open_at(r, r->rootfd, rel, NULL, O_RDONLY | O_DIRECTORY, err);
  if (fd < 0)
    return NULL;
  DIR *d = fdopendir(fd);
  if (!d) {
    *err = errno;
    close(fd);
  }
  return d;
}

/* /proc as a directory stream, kept open when files are (the real /proc):
 * opening it anew each sample cost as much as reading a process's stat.
 * proc_dir_done closes only a stream that is not kept. */
static DIR *proc_dir(pp_collect_proc *r, int *err) {
  if (r->procdir)
    return r->procdir;
  DIR *d = opendir_rel(r, "proc", err);
  if (d && r->fd_cache && r->fd_budget > 0)
    r->procdir = d;
  return d;
}

static void proc_dir_done(pp_collect_proc *r, DIR *d) {
  if (d != r->procdir)
    closedir(d);
}

/* ---- parsing ------------------------------------------------------------- */

static const char *skip_blank(const char *p) {
  while (*p == ' ' || *p == '\t')
    p++;
  return p;
}

static const char *next_line(const char *p) {
  const char *nl = strchr(p, '\n');
  return nl ? nl + 1 : p + strlen(p);
}

/* Unsigned decimal after optional blanks; false on no digits or overflow. */
static bool parse_u64(const char **pp, uint64_t *v) {
  const char *p = skip_blank(*pp);
  if (*p < '0' || *p > '9')
    return false;
  uint64_t x = 0;
  for (; *p >= '0' && *p <= '9'; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (x > (UINT64_MAX - d) / 10)
      return false;
    x = x * 10 + d;
  }
  *pp = p;
  *v = x;
  return true;
}

static bool parse_i64(const char **pp, int64_t *v) {
  const char *p = skip_blank(*pp);
  bool neg = *p == '-';
  if (neg || *p == '+')
    p++;
  uint64_t x;
  if (!parse_u64(&p, &x) || x > (uint64_t)INT64_MAX)
    return false;
  *pp = p;
  *v = neg ? -(int64_t)x : (int64_t)x;
  return true;
}

/* [-]digits[.digits], locale-independent. */
static bool parse_dec(const char **pp, double *v) {
  const char *p = skip_blank(*pp);
  bool neg = *p == '-';
  if (neg)
    p++;
  if (*p < '0' || *p > '9')
    return false;
  double x = 0;
  for (; *p >= '0' && *p <= '9'; p++)
    x = x * 10 + (*p - '0');
  if (*p == '.') {
    double scale = 0.1;
    for (p++; *p >= '0' && *p <= '9'; p++, scale *= 0.1)
      x += (*p - '0') * scale;
  }
  *pp = p;
  *v = neg ? -x : x;
  return true;
}

/* The same, from a position that need not be kept. */
static bool parse_u64_at(const char *p, uint64_t *v) {
  return parse_u64(&p, v);
}

static bool parse_dec_at(const char *p, double *v) { return parse_dec(&p, v); }

/* "<prefix><digits><suffix>" exactly; n in [0, 1<<24). */
static bool name_num(const char *name, const char *prefix, const char *suffix,
                     int *n) {
  size_t pl = strlen(prefix);
  if (strncmp(name, prefix, pl) != 0)
    return false;
  const char *p = name + pl;
  if (*p < '0' || *p > '9')
    return false;
  long x = 0;
  for (; *p >= '0' && *p <= '9'; p++) {
    x = x * 10 + (*p - '0');
    if (x >= (1L << 24))
      return false;
  }
  if (strcmp(p, suffix) != 0)
    return false;
  *n = (int)x;
  return true;
}

/* Lines "Key: number [kB]" into fields of base; kB become bytes. */
static void parse_keyed(const char *s, const key_off *keys, size_t nkeys,
                        void *base) {
  for (const char *line = s; *line; line = next_line(line)) {
    const char *p = line;
    for (size_t k = 0; k < nkeys; k++) {
      if (p[0] != keys[k].key[0] || strncmp(p, keys[k].key, keys[k].len))
        continue;
      p += keys[k].len;
      uint64_t v;
      if (parse_u64(&p, &v)) {
        p = skip_blank(p);
        if (p[0] == 'k' && p[1] == 'B')
          v = v > UINT64_MAX / 1024 ? UINT64_MAX - 1 : v * 1024;
        *u64_at(base, keys[k].off) = v;
      }
      break;
    }
  }
}

static void trim(char *s) {
  size_t n = strlen(s);
  while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
    s[--n] = '\0';
}

/* A CPU list "0-3,8 10" (sysfs list or space-separated) into a new array. */
static int parse_cpulist(const char *s, int **out, size_t *n) {
  int *a = NULL;
  size_t cap = 0, len = 0;
  const char *p = s;
  for (;;) {
    while (*p == ' ' || *p == ',' || *p == '\t')
      p++;
    uint64_t lo, hi;
    if (!parse_u64(&p, &lo))
      break;
    hi = lo;
    if (*p == '-') {
      p++;
      if (!parse_u64(&p, &hi))
        break;
    }
    if (lo > hi || hi >= (1u << 16))
      break;
    for (uint64_t c = lo; c <= hi; c++) {
      if (pp__grow((void **)&a, &cap, len + 1, sizeof *a)) {
        pp__free(a);
        return -1;
      }
      a[len++] = (int)c;
    }
  }
  *out = a;
  *n = len;
  return 0;
}

/* ---- discovery ----------------------------------------------------------- */

static void close_fhs(pp_collect_proc *r) {
  for (int i = 0; i < FH_N; i++) {
    if (r->fh[i] >= 0)
      close(r->fh[i]);
    r->fh[i] = -1;
  }
}

static void discover_fhs(pp_collect_proc *r) {
  close_fhs(r);
  for (int i = 0; i < FH_N; i++) {
    int err = 0;
    r->fh[i] = open_at(r, r->rootfd, fh_rel[i], NULL, O_RDONLY, &err);
    r->fh_err[i] = r->fh[i] < 0 ? err : 0;
    if (r->fh[i] < 0)
      group_fail(r, fh_group[i], err, fh_rel[i]);
    else
      group_ok(r, fh_group[i]);
  }
}

/* Highest CPU number + 1 from /proc/stat and /sys/devices/system/cpu; the
 * thermal_throttle counters each CPU has. */
static int discover_cpus(pp_collect_proc *r) {
  int maxid = -1;
  size_t len;
  if (read_rel(r, "proc/stat", &len) == 0) {
    for (const char *l = r->buf; *l; l = next_line(l)) {
      uint64_t id;
      if (strncmp(l, "cpu", 3) != 0 || l[3] < '0' || l[3] > '9')
        continue;
      const char *p = l + 3;
      if (parse_u64(&p, &id) && id < (1u << 16) && (int)id > maxid)
        maxid = (int)id;
    }
  }
  int err = 0;
  DIR *d = opendir_rel(r, "sys/devices/system/cpu", &err);
  struct dirent *de;
  while (d && (de = readdir(d))) {
    int n;
    if (name_num(de->d_name, "cpu", "", &n) && n < (1 << 16) && n > maxid)
      maxid = n;
  }
  if (d)
    closedir(d);
  size_t slots = maxid < 0 ? 1 : (size_t)maxid + 1;
  uint8_t *thr = pp__calloc(slots, 1);
  if (!thr)
    return PP_ENOMEM;
  pp__free(r->thr);
  r->thr = thr;
  r->nthr = slots;
  if (slots > r->ncpu_slots)
    r->ncpu_slots = slots;

  size_t nthr = 0;
  char rel[128];
  for (size_t c = 0; c < slots; c++) {
    snprintf(rel, sizeof rel,
             "sys/devices/system/cpu/cpu%zu/thermal_throttle/"
             "core_throttle_count",
             c);
    if (exists_rel(r, rel))
      thr[c] |= 1;
    snprintf(rel, sizeof rel,
             "sys/devices/system/cpu/cpu%zu/thermal_throttle/"
             "package_throttle_count",
             c);
    if (exists_rel(r, rel))
      thr[c] |= 2;
    nthr += thr[c] != 0;
  }
  if (nthr)
    group_ok(r, PP_COLLECT_THROTTLE);
  else if (!d)
    group_fail(r, PP_COLLECT_THROTTLE, err, "sys/devices/system/cpu");
  else
    group_fail(r, PP_COLLECT_THROTTLE, ENOENT,
               "sys/devices/system/cpu/cpu0/thermal_throttle");
  return PP_OK;
}

static void free_policies(pp_collect_proc *r) {
  for (size_t i = 0; i < r->npol; i++)
    pp__free(r->pol[i].cpus);
  r->npol = 0;
}

static int discover_cpufreq(pp_collect_proc *r) {
  static const char base[] = "sys/devices/system/cpu/cpufreq";
  free_policies(r);
  r->cpuinfo_mhz = false;
  int err = 0;
  DIR *d = opendir_rel(r, base, &err);
  struct dirent *de;
  while (d && (de = readdir(d))) {
    int n;
    if (!name_num(de->d_name, "policy", "", &n))
      continue;
    if (pp__grow((void **)&r->pol, &r->pol_cap, r->npol + 1, sizeof *r->pol)) {
      closedir(d);
      return PP_ENOMEM;
    }
    policy *p = &r->pol[r->npol];
    memset(p, 0, sizeof *p);
    char rel[128];
    size_t len;
    snprintf(rel, sizeof rel, "%s/policy%d/affected_cpus", base, n);
    int e = read_rel(r, rel, &len);
    if (e) {
      snprintf(rel, sizeof rel, "%s/policy%d/related_cpus", base, n);
      e = read_rel(r, rel, &len);
    }
    if (e == 0) {
      if (parse_cpulist(r->buf, &p->cpus, &p->ncpus)) {
        closedir(d);
        return PP_ENOMEM;
      }
    }
    if (!p->ncpus) { /* policyN serves CPU N when nothing says otherwise */
      pp__free(p->cpus);
      p->cpus = pp__malloc(sizeof *p->cpus);
      if (!p->cpus) {
        closedir(d);
        return PP_ENOMEM;
      }
      p->cpus[0] = n;
      p->ncpus = 1;
    }
    snprintf(p->rel, sizeof p->rel, "%s/policy%d/scaling_cur_freq", base, n);
    r->npol++;
  }
  if (d)
    closedir(d);
  if (r->npol) {
    group_ok(r, PP_COLLECT_CPUFREQ);
    return PP_OK;
  }
  size_t len;
  if (read_rel(r, "proc/cpuinfo", &len) == 0 && strstr(r->buf, "cpu MHz")) {
    r->cpuinfo_mhz = true;
    group_ok(r, PP_COLLECT_CPUFREQ);
    return PP_OK;
  }
  char words[PP__REASON_LEN];
  if (d)
    text_fmt(words, sizeof words, "no policy* in %s/%s", r->root, base);
  else if (err == ENOENT)
    text_fmt(words, sizeof words, "no such file %s/%s (%s)", r->root, base,
             group_hints[PP_COLLECT_CPUFREQ]);
  else {
    char e[64];
    err_words(err, e, sizeof e);
    text_fmt(words, sizeof words, "%s reading %s/%s", e, r->root, base);
  }
  group_failf(r, PP_COLLECT_CPUFREQ,
              "%s, and no \"cpu MHz\" in %s/proc/cpuinfo", words, r->root);
  return PP_OK;
}

static void free_sensors(pp_collect_proc *r) {
  for (size_t i = 0; i < r->nsens; i++) {
    pp__free(r->sens[i].rel);
    pp__free(r->sens[i].chip);
    pp__free(r->sens[i].label);
  }
  r->nsens = 0;
}

/* Read a small text attribute, trimmed, as a new string (NULL if absent). */
static char *read_text(pp_collect_proc *r, const char *rel) {
  size_t len;
  if (read_rel(r, rel, &len))
    return NULL;
  trim(r->buf);
  return pp__strdup(r->buf);
}

static int add_sensor(pp_collect_proc *r, pp_temp_kind kind, int k1, int k2,
                      const char *rel, const char *chip, const char *label) {
  if (pp__grow((void **)&r->sens, &r->sens_cap, r->nsens + 1, sizeof *r->sens))
    return PP_ENOMEM;
  sensor *s = &r->sens[r->nsens];
  s->kind = kind;
  s->k1 = k1;
  s->k2 = k2;
  s->rel = pp__strdup(rel);
  s->chip = pp__strdup(chip);
  s->label = pp__strdup(label);
  if (!s->rel || !s->chip || !s->label) {
    pp__free(s->rel);
    pp__free(s->chip);
    pp__free(s->label);
    return PP_ENOMEM;
  }
  r->nsens++;
  return PP_OK;
}

/* temp*_input files of one hwmon directory (dir = root-relative). */
static int scan_hwmon_dir(pp_collect_proc *r, const char *dir, int hw,
                          const char *chip, size_t *found) {
  int err = 0;
  DIR *d = opendir_rel(r, dir, &err);
  if (!d)
    return PP_OK;
  struct dirent *de;
  int rc = PP_OK;
  while (rc == PP_OK && (de = readdir(d))) {
    int t;
    if (!name_num(de->d_name, "temp", "_input", &t))
      continue;
    char rel[PATH_MAX], lrel[PATH_MAX], deflabel[32];
    snprintf(rel, sizeof rel, "%s/%s", dir, de->d_name);
    snprintf(lrel, sizeof lrel, "%s/temp%d_label", dir, t);
    snprintf(deflabel, sizeof deflabel, "temp%d", t);
    char *label = read_text(r, lrel);
    rc = add_sensor(r, PP_TEMP_HWMON, hw, t, rel, chip,
                    label && *label ? label : deflabel);
    pp__free(label);
    if (rc == PP_OK)
      (*found)++;
  }
  closedir(d);
  return rc;
}

static int discover_hwmon(pp_collect_proc *r) {
  static const char base[] = "sys/class/hwmon";
  int err = 0;
  DIR *d = opendir_rel(r, base, &err);
  if (!d) {
    group_fail(r, PP_COLLECT_HWMON, err, base);
    return PP_OK;
  }
  size_t found = 0;
  int rc = PP_OK;
  struct dirent *de;
  while (rc == PP_OK && (de = readdir(d))) {
    int hw;
    if (!name_num(de->d_name, "hwmon", "", &hw))
      continue;
    char dir[128], rel[160];
    snprintf(dir, sizeof dir, "%s/hwmon%d", base, hw);
    snprintf(rel, sizeof rel, "%s/name", dir);
    char *chip = read_text(r, rel);
    if (!chip) { /* old drivers keep attributes under device/ */
      snprintf(dir, sizeof dir, "%s/hwmon%d/device", base, hw);
      snprintf(rel, sizeof rel, "%s/name", dir);
      chip = read_text(r, rel);
    }
    rc = scan_hwmon_dir(r, dir, hw, chip ? chip : de->d_name, &found);
    pp__free(chip);
  }
  closedir(d);
  if (found)
    group_ok(r, PP_COLLECT_HWMON);
  else
    group_failf(r, PP_COLLECT_HWMON, "no temp*_input under %s/%s (%s)", r->root,
                base, group_hints[PP_COLLECT_HWMON]);
  return rc;
}

static int discover_thermal(pp_collect_proc *r) {
  static const char base[] = "sys/class/thermal";
  int err = 0;
  DIR *d = opendir_rel(r, base, &err);
  if (!d) {
    group_fail(r, PP_COLLECT_THERMAL, err, base);
    return PP_OK;
  }
  size_t found = 0;
  int rc = PP_OK;
  struct dirent *de;
  while (rc == PP_OK && (de = readdir(d))) {
    int z;
    if (!name_num(de->d_name, "thermal_zone", "", &z))
      continue;
    char rel[160], label[32];
    snprintf(rel, sizeof rel, "%s/thermal_zone%d/type", base, z);
    char *type = read_text(r, rel);
    snprintf(rel, sizeof rel, "%s/thermal_zone%d/temp", base, z);
    snprintf(label, sizeof label, "thermal_zone%d", z);
    if (exists_rel(r, rel)) {
      rc = add_sensor(r, PP_TEMP_THERMAL, z, 0, rel,
                      type && *type ? type : "unknown", label);
      found += rc == PP_OK;
    }
    pp__free(type);
  }
  closedir(d);
  if (found)
    group_ok(r, PP_COLLECT_THERMAL);
  else
    group_failf(r, PP_COLLECT_THERMAL, "no thermal_zone* under %s/%s (%s)",
                r->root, base, group_hints[PP_COLLECT_THERMAL]);
  return rc;
}

static int cmp_sensor(const void *pa, const void *pb) {
  const sensor *a = pa, *b = pb;
  if (a->kind != b->kind)
    return (int)a->kind - (int)b->kind;
  if (a->k1 != b->k1)
    return a->k1 < b->k1 ? -1 : 1;
  return a->k2 < b->k2 ? -1 : a->k2 > b->k2;
}

static int cmp_int(const void *pa, const void *pb) {
  int a = *(const int *)pa, b = *(const int *)pb;
  return a < b ? -1 : a > b;
}

static int discover_numa(pp_collect_proc *r) {
  static const char base[] = "sys/devices/system/node";
  r->nnodes = 0;
  int err = 0;
  DIR *d = opendir_rel(r, base, &err);
  if (!d) {
    group_fail(r, PP_COLLECT_NUMA, err, base);
    return PP_OK;
  }
  struct dirent *de;
  while ((de = readdir(d))) {
    int n;
    if (!name_num(de->d_name, "node", "", &n))
      continue;
    if (pp__grow((void **)&r->nodes, &r->nodes_cap, r->nnodes + 1,
                 sizeof *r->nodes)) {
      closedir(d);
      return PP_ENOMEM;
    }
    r->nodes[r->nnodes++] = n;
  }
  closedir(d);
  if (r->nnodes)
    qsort(r->nodes, r->nnodes, sizeof *r->nodes, cmp_int);
  if (r->nnodes)
    group_ok(r, PP_COLLECT_NUMA);
  else
    group_failf(r, PP_COLLECT_NUMA, "no node* under %s/%s", r->root, base);
  return PP_OK;
}

int pp_collect_proc_rescan(pp_collect_proc *r) {
  if (!r)
    return PP_EINVAL;
  fdc_close_all(r);
  discover_fhs(r);
  int rc = discover_cpus(r);
  if (rc == PP_OK)
    rc = discover_cpufreq(r);
  if (rc == PP_OK) {
    free_sensors(r);
    rc = discover_hwmon(r);
    if (rc == PP_OK)
      rc = discover_thermal(r);
    if (r->nsens)
      qsort(r->sens, r->nsens, sizeof *r->sens, cmp_sensor);
  }
  if (rc == PP_OK)
    rc = discover_numa(r);
  /* The process groups are decided per sample; start optimistic. */
  group_ok(r, PP_COLLECT_PROC_STAT);
  group_ok(r, PP_COLLECT_PROC_STATUS);
  group_ok(r, PP_COLLECT_PROC_IO);
  return rc;
}

pp_collect_proc *pp_collect_proc_open(const char *sysroot) {
  if (!sysroot || !*sysroot)
    sysroot = "/";
  pp_collect_proc *r = pp__calloc(1, sizeof *r);
  if (!r) {
    errno = ENOMEM;
    return NULL;
  }
  for (int i = 0; i < FH_N; i++)
    r->fh[i] = -1;
  for (size_t i = 0; i < FD_CACHE; i++)
    r->fdc[i].fd = -1;
  r->rootfd = -1;
  size_t n = strlen(sysroot);
  while (n > 1 && sysroot[n - 1] == '/')
    n--;
  if (n >= sizeof r->root) {
    pp__free(r);
    errno = ENAMETOOLONG;
    return NULL;
  }
  if (!(n == 1 && sysroot[0] == '/'))
    memcpy(r->root, sysroot, n); /* "/" displays as "" + "/proc/..." */
  /* Only procfs makes a kept file fail once its process is gone; a fixture
   * tree's files would keep returning what they held when opened. */
  r->fd_cache = n == 1 && sysroot[0] == '/';
  /* The same for the CPU-time clocks of processes: they are this
   * machine's, not a fixture's. */
  r->cpu_clocks = r->fd_cache;
  r->fd_budget = 32;
  r->rootfd = open(sysroot, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  r->bufcap = 4096;
  r->buf = pp__malloc(r->bufcap);
  if (r->rootfd < 0 || !r->buf) {
    int e = r->rootfd < 0 ? errno : ENOMEM;
    pp_collect_proc_close(r);
    errno = e;
    return NULL;
  }
  long tck = sysconf(_SC_CLK_TCK);
  long pg = sysconf(_SC_PAGESIZE);
  r->clk_tck = tck > 0 ? (uint64_t)tck : 100;
  r->page_size = pg > 0 ? (uint64_t)pg : 4096;
  if (pp_collect_proc_rescan(r) != PP_OK) {
    pp_collect_proc_close(r);
    errno = ENOMEM;
    return NULL;
  }
  return r;
}

void pp_collect_proc_close(pp_collect_proc *r) {
  if (!r)
    return;
  fdc_close_all(r);
  close_fhs(r);
  if (r->procdir)
    closedir(r->procdir);
  if (r->rootfd >= 0)
    close(r->rootfd);
  free_policies(r);
  free_sensors(r);
  pp__free(r->pol);
  pp__free(r->sens);
  pp__free(r->nodes);
  pp__free(r->thr);
  pp__free(r->buf);
  pp__free(r->scan);
  pp__free(r->hash);
  pp__free(r->stack);
  pp__free(r->prev);
  pp__free(r->cur);
  pp__free(r->tprev);
  pp__free(r->tproc);
  pp__free(r->tproc_new);
  pp__free(r);
}

void pp_collect_proc_set_slow_period(pp_collect_proc *r, uint64_t ns) {
  if (r)
    r->slow_every_ns = ns;
}

void pp_collect_proc_set_cpu_clocks(pp_collect_proc *r, int on) {
  if (r)
    r->cpu_clocks = on && r->fd_cache;
}

const char *pp_collect_proc_reason(const pp_collect_proc *r,
                                   pp_collect_group g) {
  if (!r || (unsigned)g >= PP_COLLECT_NGROUPS)
    return "unavailable: invalid argument";
  return r->gavail[g] ? NULL : r->reason[g];
}

const char *pp_collect_group_name(pp_collect_group g) {
  return (unsigned)g < PP_COLLECT_NGROUPS ? group_names[g] : "unknown";
}

size_t pp_collect_proc_cpu_slots(const pp_collect_proc *r) {
  return r ? r->ncpu_slots : 0;
}

int pp_collect_proc_inject(pp_collect_proc *r, const char *relpath, int err) {
  if (!r || !relpath || strlen(relpath) >= sizeof r->faults[0].rel)
    return PP_EINVAL;
  for (int i = 0; i < r->nfaults; i++) {
    if (strcmp(r->faults[i].rel, relpath) != 0)
      continue;
    if (err) {
      r->faults[i].err = err;
    } else {
      r->faults[i] = r->faults[--r->nfaults];
    }
    return PP_OK;
  }
  if (!err)
    return PP_OK;
  if (r->nfaults >= PP__NFAULTS)
    return PP_EINVAL;
  snprintf(r->faults[r->nfaults].rel, sizeof r->faults[0].rel, "%s", relpath);
  r->faults[r->nfaults++].err = err;
  return PP_OK;
}

/* ---- system sample ------------------------------------------------------- */

static int ensure_cpu_slots(pp_collect_proc *r, pp_system_sample *o, size_t n) {
  if (pp__grow((void **)&o->cpu, &o->cpu_cap_, n, sizeof *o->cpu))
    return PP_ENOMEM;
  for (size_t i = o->ncpu_slots; i < n; i++) {
    memset(&o->cpu[i], 0, sizeof o->cpu[i]);
    o->cpu[i].freq_khz = PP_COLLECT_NONE;
    o->cpu[i].throttle_core = PP_COLLECT_NONE;
    o->cpu[i].throttle_package = PP_COLLECT_NONE;
  }
  if (n > o->ncpu_slots)
    o->ncpu_slots = n;
  if (n > r->ncpu_slots)
    r->ncpu_slots = n;
  return PP_OK;
}

static bool parse_times(const char **pp, pp_cpu_times *t) {
  uint64_t *f[8] = {&t->user,   &t->nice, &t->system,  &t->idle,
                    &t->iowait, &t->irq,  &t->softirq, &t->steal};
  memset(t, 0, sizeof *t);
  for (int i = 0; i < 8; i++)
    if (!parse_u64(pp, f[i]))
      return i >= 4; /* old kernels stop after idle */
  return true;
}

/* Returns PP_OK, PP_ENOMEM, or PP__EPARSE when there is no "cpu " line. */
static int parse_proc_stat(pp_collect_proc *r, pp_system_sample *o) {
  bool have_total = false;
  for (const char *l = r->buf; *l; l = next_line(l)) {
    const char *p = l;
    uint64_t v;
    if (l[0] == 'c' && strncmp(l, "cpu", 3) == 0) {
      p = l + 3;
      if (*p == ' ') {
        have_total = parse_times(&p, &o->total);
        continue;
      }
      uint64_t id;
      if (!parse_u64(&p, &id) || id >= (1u << 16))
        continue;
      if (id >= o->ncpu_slots && ensure_cpu_slots(r, o, (size_t)id + 1))
        return PP_ENOMEM;
      pp_cpu_sample *c = &o->cpu[id];
      if (parse_times(&p, &c->times) && !c->online) {
        c->online = true;
        o->ncpu++;
      }
    } else if (strncmp(l, "ctxt ", 5) == 0) {
      p += 5;
      if (parse_u64(&p, &v))
        o->ctxt = v;
    } else if (strncmp(l, "intr ", 5) == 0) {
      p += 5;
      if (parse_u64(&p, &v))
        o->intr = v;
    } else if (strncmp(l, "btime ", 6) == 0) {
      p += 6;
      if (parse_u64(&p, &v))
        o->boot_time_s = v;
    } else if (strncmp(l, "processes ", 10) == 0) {
      p += 10;
      if (parse_u64(&p, &v))
        o->processes = v;
    } else if (strncmp(l, "procs_running ", 14) == 0) {
      p += 14;
      if (parse_u64(&p, &v))
        o->procs_running = v;
    } else if (strncmp(l, "procs_blocked ", 14) == 0) {
      p += 14;
      if (parse_u64(&p, &v))
        o->procs_blocked = v;
    }
  }
  return have_total ? PP_OK : PP__EPARSE;
}

static void parse_psi(const char *s, pp_psi *p) {
  for (const char *l = s; *l; l = next_line(l)) {
    bool full = strncmp(l, "full ", 5) == 0;
    if (!full && strncmp(l, "some ", 5) != 0)
      continue;
    double a10 = NAN, a60 = NAN, a300 = NAN;
    uint64_t tot = PP_COLLECT_NONE;
    const char *q = l + 5;
    while (*q && *q != '\n') {
      q = skip_blank(q);
      if (strncmp(q, "avg10=", 6) == 0) {
        q += 6;
        parse_dec(&q, &a10);
      } else if (strncmp(q, "avg60=", 6) == 0) {
        q += 6;
        parse_dec(&q, &a60);
      } else if (strncmp(q, "avg300=", 7) == 0) {
        q += 7;
        parse_dec(&q, &a300);
      } else if (strncmp(q, "total=", 6) == 0) {
        q += 6;
        parse_u64(&q, &tot);
      }
      while (*q && *q != ' ' && *q != '\n')
        q++;
    }
    if (full) {
      p->has_full = true;
      p->full_avg10 = a10;
      p->full_avg60 = a60;
      p->full_avg300 = a300;
      p->full_total_us = tot;
    } else {
      p->has_some = true;
      p->some_avg10 = a10;
      p->some_avg60 = a60;
      p->some_avg300 = a300;
      p->some_total_us = tot;
    }
  }
}

/* Read one kept-open system file into r->buf; failures set the reason. */
static int read_fh(pp_collect_proc *r, int i, size_t *len) {
  int e = r->nfaults ? fault_err(r, fh_rel[i]) : 0;
  if (!e)
    e = r->fh[i] < 0 ? r->fh_err[i] : read_fd(r, r->fh[i], len);
  if (e)
    group_fail(r, fh_group[i], e, fh_rel[i]);
  return e;
}

static void reset_system(pp_system_sample *o) {
  o->ncpu = 0;
  for (size_t i = 0; i < o->ncpu_slots; i++) {
    pp_cpu_sample *c = &o->cpu[i];
    c->online = false;
    memset(&c->times, 0, sizeof c->times);
    c->freq_khz = c->throttle_core = c->throttle_package = PP_COLLECT_NONE;
  }
  memset(&o->total, 0, sizeof o->total);
  o->ctxt = o->intr = o->processes = PP_COLLECT_NONE;
  o->procs_running = o->procs_blocked = o->boot_time_s = PP_COLLECT_NONE;
  o->load1 = o->load5 = o->load15 = NAN;
  for (size_t k = 0; k < PP__ARRAY_LEN(meminfo_keys); k++)
    *u64_at(o, meminfo_keys[k].off) = PP_COLLECT_NONE;
  for (int i = 0; i < PP_PSI_N; i++) {
    pp_psi *p = &o->psi[i];
    p->has_some = p->has_full = false;
    p->some_avg10 = p->some_avg60 = p->some_avg300 = NAN;
    p->full_avg10 = p->full_avg60 = p->full_avg300 = NAN;
    p->some_total_us = p->full_total_us = PP_COLLECT_NONE;
  }
  o->freq_source = PP_FREQ_NONE;
}

static void sample_cpufreq(pp_collect_proc *r, pp_system_sample *o) {
  size_t len;
  int err = 0;
  const char *rel = NULL;
  bool any = false;
  if (r->npol) {
    for (size_t i = 0; i < r->npol; i++) {
      const policy *p = &r->pol[i];
      uint64_t khz;
      int e = read_rel(r, p->rel, &len);
      const char *q = r->buf;
      if (e || !parse_u64(&q, &khz)) {
        err = e ? e : PP__EPARSE;
        rel = p->rel;
        continue;
      }
      any = true;
      for (size_t k = 0; k < p->ncpus; k++)
        if ((size_t)p->cpus[k] < o->ncpu_slots)
          o->cpu[p->cpus[k]].freq_khz = khz;
    }
    o->freq_source = any ? PP_FREQ_CPUFREQ : PP_FREQ_NONE;
  } else if (r->cpuinfo_mhz) {
    rel = "proc/cpuinfo";
    err = read_rel(r, rel, &len);
    if (!err) {
      uint64_t cur = UINT64_MAX;
      for (const char *l = r->buf; *l; l = next_line(l)) {
        const char *q;
        if (strncmp(l, "processor", 9) == 0) {
          q = skip_blank(l + 9);
          if (*q != ':' || !parse_u64_at(q + 1, &cur))
            cur = UINT64_MAX;
        } else if (strncmp(l, "cpu MHz", 7) == 0) {
          double mhz;
          q = skip_blank(l + 7);
          if (*q == ':' && parse_dec_at(q + 1, &mhz) && mhz >= 0 &&
              cur < o->ncpu_slots) {
            o->cpu[cur].freq_khz = (uint64_t)(mhz * 1000.0 + 0.5);
            any = true;
          }
        }
      }
      if (!any)
        err = PP__EPARSE;
    }
    o->freq_source = any ? PP_FREQ_CPUINFO : PP_FREQ_NONE;
  } else {
    return; /* reason set by discovery */
  }
  if (any) {
    o->avail |= 1u << PP_COLLECT_CPUFREQ;
    group_ok(r, PP_COLLECT_CPUFREQ);
  } else {
    group_fail(r, PP_COLLECT_CPUFREQ, err, rel);
  }
}

static void sample_throttle(pp_collect_proc *r, pp_system_sample *o) {
  static const char *const names[2] = {"core_throttle_count",
                                       "package_throttle_count"};
  bool any = false, tried = false;
  int err = 0;
  char rel[128], bad[128] = "";
  for (size_t c = 0; c < r->nthr && c < o->ncpu_slots; c++) {
    for (int k = 0; k < 2; k++) {
      if (!(r->thr[c] & (1u << k)))
        continue;
      tried = true;
      snprintf(rel, sizeof rel,
               "sys/devices/system/cpu/cpu%zu/thermal_throttle/%s", c,
               names[k]);
      size_t len;
      uint64_t v;
      int e = read_rel(r, rel, &len);
      const char *q = r->buf;
      if (e || !parse_u64(&q, &v)) {
        err = e ? e : PP__EPARSE;
        snprintf(bad, sizeof bad, "%s", rel);
        continue;
      }
      any = true;
      if (k == 0)
        o->cpu[c].throttle_core = v;
      else
        o->cpu[c].throttle_package = v;
    }
  }
  if (any) {
    o->avail |= 1u << PP_COLLECT_THROTTLE;
    group_ok(r, PP_COLLECT_THROTTLE);
  } else if (tried) {
    group_fail(r, PP_COLLECT_THROTTLE, err, bad);
  }
}

static int sample_temps(pp_collect_proc *r, pp_system_sample *o) {
  if (pp__grow((void **)&o->temps, &o->temps_cap_, r->nsens, sizeof *o->temps))
    return PP_ENOMEM;
  o->ntemps = r->nsens;
  bool any[2] = {false, false}, tried[2] = {false, false};
  int err[2] = {0, 0};
  const char *bad[2] = {NULL, NULL};
  for (size_t i = 0; i < r->nsens; i++) {
    const sensor *s = &r->sens[i];
    pp_temp_sample *t = &o->temps[i];
    int k = s->kind == PP_TEMP_THERMAL;
    t->kind = s->kind;
    t->chip = s->chip;
    t->label = s->label;
    t->celsius = NAN;
    tried[k] = true;
    size_t len;
    int64_t mc;
    int e = read_rel(r, s->rel, &len);
    const char *q = r->buf;
    if (e || !parse_i64(&q, &mc)) {
      err[k] = e ? e : PP__EPARSE;
      bad[k] = s->rel;
      continue;
    }
    t->celsius = (double)mc / 1000.0;
    any[k] = true;
  }
  static const pp_collect_group groups[2] = {PP_COLLECT_HWMON,
                                             PP_COLLECT_THERMAL};
  for (int k = 0; k < 2; k++) {
    if (any[k]) {
      o->avail |= 1u << groups[k];
      group_ok(r, groups[k]);
    } else if (tried[k]) {
      group_fail(r, groups[k], err[k], bad[k]);
    }
  }
  return PP_OK;
}

static int sample_numa(pp_collect_proc *r, pp_system_sample *o) {
  if (pp__grow((void **)&o->nodes, &o->nodes_cap_, r->nnodes, sizeof *o->nodes))
    return PP_ENOMEM;
  o->nnodes = r->nnodes;
  bool any = false;
  int err = 0;
  char rel[96], bad[96] = "";
  for (size_t i = 0; i < r->nnodes; i++) {
    pp_numa_sample *n = &o->nodes[i];
    n->node = r->nodes[i];
    n->mem_total = n->mem_free = n->mem_used = PP_COLLECT_NONE;
    snprintf(rel, sizeof rel, "sys/devices/system/node/node%d/meminfo",
             r->nodes[i]);
    size_t len;
    int e = read_rel(r, rel, &len);
    if (e) {
      err = e;
      snprintf(bad, sizeof bad, "%s", rel);
      continue;
    }
    /* "Node 0 MemTotal: 123 kB": drop the "Node N " prefix per line. */
    for (char *l = r->buf; *l;) {
      char *nl = strchr(l, '\n');
      if (nl)
        *nl = '\0';
      uint64_t id;
      if (strncmp(l, "Node ", 5) == 0) {
        const char *p = l + 5;
        if (parse_u64(&p, &id))
          parse_keyed(skip_blank(p), numa_keys, PP__ARRAY_LEN(numa_keys), n);
      }
      if (!nl)
        break;
      l = nl + 1;
    }
    any = true;
  }
  if (any) {
    o->avail |= 1u << PP_COLLECT_NUMA;
    group_ok(r, PP_COLLECT_NUMA);
  } else if (r->nnodes) {
    group_fail(r, PP_COLLECT_NUMA, err, bad);
  }
  return PP_OK;
}

int pp_collect_system(pp_collect_proc *r, pp_system_sample *o) {
  if (!r || !o)
    return PP_EINVAL;
  o->t_ns = mono_ns();
  o->avail = 0;
  o->clk_tck = r->clk_tck;
  if (ensure_cpu_slots(r, o, r->ncpu_slots))
    return PP_ENOMEM;
  reset_system(o);

  size_t len;
  if (read_fh(r, FH_STAT, &len) == 0) {
    int rc = parse_proc_stat(r, o);
    if (rc == PP_ENOMEM)
      return rc;
    if (rc == PP_OK) {
      o->avail |= 1u << PP_COLLECT_CPU;
      group_ok(r, PP_COLLECT_CPU);
    } else {
      group_fail(r, PP_COLLECT_CPU, PP__EPARSE, fh_rel[FH_STAT]);
    }
  }
  if (read_fh(r, FH_MEMINFO, &len) == 0) {
    parse_keyed(r->buf, meminfo_keys, PP__ARRAY_LEN(meminfo_keys), o);
    if (o->mem_total != PP_COLLECT_NONE) {
      o->avail |= 1u << PP_COLLECT_MEMINFO;
      group_ok(r, PP_COLLECT_MEMINFO);
    } else {
      group_fail(r, PP_COLLECT_MEMINFO, PP__EPARSE, fh_rel[FH_MEMINFO]);
    }
  }
  if (read_fh(r, FH_LOADAVG, &len) == 0) {
    const char *p = r->buf;
    double l1, l5, l15;
    if (parse_dec(&p, &l1) && parse_dec(&p, &l5) && parse_dec(&p, &l15)) {
      o->load1 = l1;
      o->load5 = l5;
      o->load15 = l15;
      o->avail |= 1u << PP_COLLECT_LOADAVG;
      group_ok(r, PP_COLLECT_LOADAVG);
    } else {
      group_fail(r, PP_COLLECT_LOADAVG, PP__EPARSE, fh_rel[FH_LOADAVG]);
    }
  }
  for (int i = 0; i < PP_PSI_N; i++) {
    int fh = FH_PSI_CPU + i;
    if (read_fh(r, fh, &len) != 0)
      continue;
    parse_psi(r->buf, &o->psi[i]);
    if (o->psi[i].has_some || o->psi[i].has_full) {
      o->avail |= 1u << fh_group[fh];
      group_ok(r, fh_group[fh]);
    } else {
      group_fail(r, fh_group[fh], PP__EPARSE, fh_rel[fh]);
    }
  }
  uint64_t now = (uint64_t)o->t_ns;
  if (r->slow_every_ns && r->slow_last_ns &&
      now - r->slow_last_ns < r->slow_every_ns) {
    o->ntemps = o->nnodes = 0; /* not read this time: absent, not 0 */
    return PP_OK;
  }
  r->slow_last_ns = now;
  sample_cpufreq(r, o);
  sample_throttle(r, o);
  if (sample_temps(r, o) || sample_numa(r, o))
    return PP_ENOMEM;
  return PP_OK;
}

void pp_system_sample_free(pp_system_sample *s) {
  if (!s)
    return;
  pp__free(s->cpu);
  pp__free(s->temps);
  pp__free(s->nodes);
  memset(s, 0, sizeof *s);
}

/* ---- system rates -------------------------------------------------------- */

static void cpu_util(const pp_cpu_times *a, const pp_cpu_times *b,
                     pp_cpu_util *u) {
  u->valid = false;
  u->user = u->system = u->iowait = u->steal = u->idle = u->busy = NAN;
  if (b->user < a->user || b->nice < a->nice || b->system < a->system ||
      b->idle < a->idle || b->irq < a->irq || b->softirq < a->softirq ||
      b->steal < a->steal)
    return;
  /* iowait may step back by a little on NO_HZ kernels: count it as 0. */
  double iow = b->iowait >= a->iowait ? (double)(b->iowait - a->iowait) : 0;
  double usr = (double)(b->user - a->user) + (double)(b->nice - a->nice);
  double sys = (double)(b->system - a->system) + (double)(b->irq - a->irq) +
               (double)(b->softirq - a->softirq);
  double idl = (double)(b->idle - a->idle);
  double stl = (double)(b->steal - a->steal);
  double tot = usr + sys + idl + stl + iow;
  if (tot <= 0)
    return;
  u->valid = true;
  u->user = usr / tot;
  u->system = sys / tot;
  u->iowait = iow / tot;
  u->steal = stl / tot;
  u->idle = idl / tot;
  u->busy = (usr + sys + stl) / tot;
}

static double counter_rate(uint64_t a, uint64_t b, double dt) {
  if (a == PP_COLLECT_NONE || b == PP_COLLECT_NONE || b < a)
    return NAN;
  return (double)(b - a) / dt;
}

int pp_collect_system_rates(const pp_system_sample *a,
                            const pp_system_sample *b, pp_system_rates *out) {
  if (!a || !b || !out || b->t_ns <= a->t_ns)
    return PP_EINVAL;
  size_t n = PP__MAX(a->ncpu_slots, b->ncpu_slots);
  if (pp__grow((void **)&out->cpu, &out->cpu_cap_, n, sizeof *out->cpu))
    return PP_ENOMEM;
  out->ncpu_slots = n;
  double dt = (double)(b->t_ns - a->t_ns) / 1e9;
  out->dt_s = dt;
  uint32_t both = a->avail & b->avail;
  bool cpu_ok = both & (1u << PP_COLLECT_CPU);
  cpu_util(&a->total, &b->total, &out->total);
  if (!cpu_ok)
    out->total.valid = false;
  for (size_t i = 0; i < n; i++) {
    pp_cpu_util *u = &out->cpu[i];
    if (cpu_ok && i < a->ncpu_slots && i < b->ncpu_slots && a->cpu[i].online &&
        b->cpu[i].online) {
      cpu_util(&a->cpu[i].times, &b->cpu[i].times, u);
    } else {
      u->valid = false;
      u->user = u->system = u->iowait = u->steal = u->idle = u->busy = NAN;
    }
  }
  if (cpu_ok) {
    out->ctxt_per_s = counter_rate(a->ctxt, b->ctxt, dt);
    out->intr_per_s = counter_rate(a->intr, b->intr, dt);
    out->forks_per_s = counter_rate(a->processes, b->processes, dt);
  } else {
    out->ctxt_per_s = out->intr_per_s = out->forks_per_s = NAN;
  }
  for (int i = 0; i < PP_PSI_N; i++) {
    const pp_psi *pa = &a->psi[i], *pb = &b->psi[i];
    double us = dt * 1e6;
    out->psi_some[i] =
        pa->has_some && pb->has_some
            ? counter_rate(pa->some_total_us, pb->some_total_us, us)
            : NAN;
    out->psi_full[i] =
        pa->has_full && pb->has_full
            ? counter_rate(pa->full_total_us, pb->full_total_us, us)
            : NAN;
  }
  return PP_OK;
}

void pp_system_rates_free(pp_system_rates *x) {
  if (!x)
    return;
  pp__free(x->cpu);
  memset(x, 0, sizeof *x);
}

/* ---- process tree -------------------------------------------------------- */

/* /proc/[pid]/stat: the comm field sits in parentheses and may itself hold
 * spaces and parentheses, so the fields are parsed after the LAST ')'. */
static bool parse_pid_stat(const char *s, scan_ent *e) {
  const char *open = strchr(s, '(');
  const char *close = strrchr(s, ')');
  if (!open || !close || close < open)
    return false;
  size_t cl = (size_t)(close - open - 1);
  if (cl >= sizeof e->comm)
    cl = sizeof e->comm - 1;
  memcpy(e->comm, open + 1, cl);
  e->comm[cl] = '\0';
  const char *p = skip_blank(close + 1);
  if (!*p)
    return false;
  e->state = *p++;
  /* Fields 4.. after the state; field numbers as in proc(5). */
  int64_t f[25];
  for (int i = 4; i <= 24; i++)
    if (!parse_i64(&p, &f[i]))
      return false;
#define NN(x) ((x) < 0 ? 0 : (uint64_t)(x))
  e->ppid = (pid_t)f[4];
  e->minflt = NN(f[10]);
  e->majflt = NN(f[12]);
  e->utime = NN(f[14]);
  e->stime = NN(f[15]);
  e->cutime = NN(f[16]);
  e->cstime = NN(f[17]);
  e->threads = NN(f[20]);
  e->start = NN(f[22]);
  e->vsize = NN(f[23]);
  e->rss_pages = NN(f[24]);
#undef NN
  return true;
}

/* Read /proc/<pid>/<name> through the /proc directory fd. */
static int read_pid_file(pp_collect_proc *r, int procfd, pid_t pid,
                         const char *name, char *relbuf, size_t relsz,
                         size_t *len) {
  char rel[48];
  snprintf(rel, sizeof rel, "%d/%s", (int)pid, name);
  snprintf(relbuf, relsz, "proc/%s", rel);
  return read_at(r, procfd, rel, relbuf, len);
}

static int32_t hash_find(const pp_collect_proc *r, pid_t pid) {
  size_t mask = r->hash_cap - 1;
  size_t h = ((uint32_t)pid * 2654435761u) & mask;
  for (;;) {
    int32_t i = r->hash[h];
    if (i < 0 || r->scan[i].pid == pid)
      return i;
    h = (h + 1) & mask;
  }
}

static int build_hash(pp_collect_proc *r) {
  size_t need = 64;
  while (need < r->nscan * 2)
    need *= 2;
  if (need > r->hash_cap) {
    int32_t *h = pp__realloc(r->hash, need * sizeof *h);
    if (!h)
      return PP_ENOMEM;
    r->hash = h;
    r->hash_cap = need;
  }
  memset(r->hash, 0xff, r->hash_cap * sizeof *r->hash);
  size_t mask = r->hash_cap - 1;
  for (size_t i = 0; i < r->nscan; i++) {
    size_t h = ((uint32_t)r->scan[i].pid * 2654435761u) & mask;
    while (r->hash[h] >= 0 && r->scan[r->hash[h]].pid != r->scan[i].pid)
      h = (h + 1) & mask;
    if (r->hash[h] < 0)
      r->hash[h] = (int32_t)i;
  }
  return PP_OK;
}

/* Decide membership of scan entry i by walking up the ppid chain until a
 * decided entry; a cycle or an unknown parent means "not in the tree". */
static void resolve(pp_collect_proc *r, size_t i) {
  size_t depth = 0;
  int32_t j = (int32_t)i;
  unsigned char res;
  for (;;) {
    scan_ent *e = &r->scan[j];
    if (e->mark == MARK_IN || e->mark == MARK_OUT) {
      res = e->mark;
      break;
    }
    if (e->mark == MARK_VISITING) {
      res = MARK_OUT;
      break;
    }
    e->mark = MARK_VISITING;
    r->stack[depth++] = j;
    int32_t k = e->ppid > 0 ? hash_find(r, e->ppid) : -1;
    if (k < 0) {
      res = MARK_OUT;
      break;
    }
    j = k;
  }
  while (depth)
    r->scan[r->stack[--depth]].mark = res;
}

static void add_counters(pp_proc_counters *dst, const pp_proc_counters *src) {
  for (size_t k = 0; k < PP__ARRAY_LEN(counter_offs); k++) {
    uint64_t *d = u64_at(dst, counter_offs[k]);
    uint64_t v = u64_get(src, counter_offs[k]);
    if (v != PP_COLLECT_NONE && *d != PP_COLLECT_NONE)
      *d += v;
  }
}

static int cmp_proc(const void *pa, const void *pb) {
  const pp_proc_sample *a = pa, *b = pb;
  return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static void reset_tree_state(pp_collect_proc *r, pid_t root) {
  r->troot = root;
  r->troot_start = 0;
  r->nprev = 0;
  memset(&r->departed, 0, sizeof r->departed);
  r->ndeparted = r->rss_peak = r->hwm_max = 0;
  r->last_pid_valid = 0;
  r->last_full_ns = 0;
}

/* Fill a member's pp_proc_sample from the scan plus status and io. Returns
 * false when the process exited after its stat was read (status gone). */
static bool fill_member(pp_collect_proc *r, int procfd, const scan_ent *e,
                        pp_proc_sample *p, pp_tree_sample *o) {
  uint64_t tck = r->clk_tck;
  memset(p, 0, sizeof *p);
  p->pid = e->pid;
  p->ppid = e->ppid;
  p->state = e->state;
  memcpy(p->comm, e->comm, sizeof p->comm);
  p->start_ticks = e->start;
  p->c.utime_ns = ticks_to_ns(e->utime, tck);
  p->c.stime_ns = ticks_to_ns(e->stime, tck);
  p->c.minflt = e->minflt;
  p->c.majflt = e->majflt;
  p->cutime_ns = ticks_to_ns(e->cutime, tck);
  p->cstime_ns = ticks_to_ns(e->cstime, tck);
  p->num_threads = e->threads;
  p->vsize_bytes = e->vsize;
  p->rss_bytes = e->rss_pages * r->page_size;
  p->hwm_bytes = PP_COLLECT_NONE;
  p->c.vol_ctxt = p->c.nonvol_ctxt = PP_COLLECT_NONE;
  p->c.rchar = p->c.wchar = PP_COLLECT_NONE;
  p->c.read_bytes = p->c.write_bytes = PP_COLLECT_NONE;
  /* A zombie has exited: its CPU time counts (departed), its memory, threads
   * and membership do not. */
  if (e->state == 'Z')
    return false;

  char rel[64];
  size_t len;
  int err = read_pid_file(r, procfd, e->pid, "status", rel, sizeof rel, &len);
  if (err == 0) {
    /* No VmHWM/VmRSS lines: no address space (kernel thread, zombie);
     * rss then stays the stat value (0 there too). */
    p->hwm_bytes = 0;
    parse_keyed(r->buf, status_keys, PP__ARRAY_LEN(status_keys), p);
    p->flags |= PP_PROC_HAS_STATUS;
  } else if (err == ENOENT || err == ESRCH) {
    return false;
  } else {
    o->nstatus_missing++;
    group_fail(r, PP_COLLECT_PROC_STATUS, err, rel);
  }
  err = read_pid_file(r, procfd, e->pid, "io", rel, sizeof rel, &len);
  if (err == 0) {
    pp_proc_counters io;
    io.rchar = io.wchar = io.read_bytes = io.write_bytes = PP_COLLECT_NONE;
    parse_keyed(r->buf, io_keys, PP__ARRAY_LEN(io_keys), &io);
    if (io.rchar != PP_COLLECT_NONE) {
      p->c.rchar = io.rchar;
      p->c.wchar = io.wchar;
      p->c.read_bytes = io.read_bytes;
      p->c.write_bytes = io.write_bytes;
      p->flags |= PP_PROC_HAS_IO;
    } else {
      err = PP__EPARSE;
    }
  }
  if (err) {
    o->nio_missing++;
    group_fail(r, PP_COLLECT_PROC_IO, err, rel);
  }
  return true;
}

static const prev_ent *find_prev(const pp_collect_proc *r, pid_t pid,
                                 uint64_t start) {
  size_t lo = 0, hi = r->nprev;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->prev[mid].pid == pid)
      return r->prev[mid].start == start ? &r->prev[mid] : NULL;
    if (r->prev[mid].pid < pid)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

/* The CPU time of process pid, all its threads together (ended ones too),
 * in ns, from its CPU-time clock (clock_getcpuclockid(3); *clock caches
 * the id, 0 when not made yet). It moves whenever any thread of the
 * process runs: an unchanged value says no thread ran in between, so none
 * was created, ended, renamed itself or forked a child, and every thread's
 * utime and stime in /proc are what they were. Returns false when it
 * cannot be read (then nothing may be inferred). */
static bool proc_cpu_clock(const pp_collect_proc *r, pid_t pid,
                           clockid_t *clock, uint64_t *ns) {
  if (!r->cpu_clocks)
    return false;
  if (!*clock && clock_getcpuclockid(pid, clock) != 0) {
    *clock = 0;
    return false;
  }
  struct timespec ts;
  if (clock_gettime(*clock, &ts) != 0)
    return false;
  *ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  return true;
}

/* A member that exited during this scan: its freshest known counters (stat
 * now, the rest from the last sample) go to the departed accumulator. */
static void depart_now(pp_collect_proc *r, const pp_proc_sample *p) {
  pp_proc_counters c = p->c;
  const prev_ent *pe = find_prev(r, p->pid, p->start_ticks);
  for (size_t k = 0; pe && k < PP__ARRAY_LEN(counter_offs); k++)
    if (u64_get(&c, counter_offs[k]) == PP_COLLECT_NONE)
      *u64_at(&c, counter_offs[k]) = u64_get(&pe->c, counter_offs[k]);
  add_counters(&r->departed, &c);
  r->ndeparted++;
}

/* The most recently created pid, from /proc/loadavg ("0.1 0.2 0.3 1/99
 * 12345"). Returns 1 when read. */
static int read_last_pid(pp_collect_proc *r, uint64_t *out) {
  size_t len;
  if (read_fd(r, r->fh[FH_LOADAVG], &len) != 0)
    return 0;
  const char *p = strrchr(r->buf, ' ');
  if (!p)
    return 0;
  p++;
  return parse_u64(&p, out) ? 1 : 0;
}

/* Read one pid's stat into the scan list. Returns 1 when added, 0 when the
 * process is gone or unreadable, -1 when out of memory. */
static int scan_one(pp_collect_proc *r, int procfd, pid_t pid, pid_t root,
                    int *stat_err) {
  if (pp__grow((void **)&r->scan, &r->scan_cap, r->nscan + 1,
               sizeof *r->scan))
    return -1;
  char rel[64];
  size_t len;
  int e = read_pid_file(r, procfd, pid, "stat", rel, sizeof rel, &len);
  if (e) { /* gone since readdir, or hidden */
    if (e != ENOENT && e != ESRCH && pid == root)
      *stat_err = e;
    return 0;
  }
  scan_ent *s = &r->scan[r->nscan];
  if (!parse_pid_stat(r->buf, s))
    return 0;
  s->pid = pid;
  s->mark = MARK_UNKNOWN;
  s->kids_clk = PP_COLLECT_NONE;
  r->nscan++;
  return 1;
}

static bool scanned(const pp_collect_proc *r, pid_t pid) {
  for (size_t i = 0; i < r->nscan; i++)
    if (r->scan[i].pid == pid)
      return true;
  return false;
}

/* Between full scans of /proc: the children of the members read so far,
 * from /proc/PID/task/TID/children (Linux 3.5+ with CONFIG_PROC_CHILDREN;
 * nothing is found without it), so that a process that joined the tree
 * since the last full scan is seen at once. Children of children are
 * found too: the loop runs over the members as they are appended. */
static int scan_children(pp_collect_proc *r, int procfd, pid_t root,
                         int *stat_err) {
  char rel[64];
  for (size_t i = 0; i < r->nscan && i < 4096; i++) {
    pid_t pid = r->scan[i].pid;
    /* A process that has not run since its children were last read has
     * forked none: they are members already (read through r->prev). */
    clockid_t clock = 0;
    uint64_t clk = PP_COLLECT_NONE;
    bool have_clk = proc_cpu_clock(r, pid, &clock, &clk);
    if (have_clk) {
      const prev_ent *pe = find_prev(r, pid, r->scan[i].start);
      if (pe && pe->kids_clk == clk) {
        r->scan[i].kids_clk = clk;
        continue;
      }
    }
    snprintf(rel, sizeof rel, "proc/%d/task", (int)pid);
    int err = 0;
    DIR *d = opendir_rel(r, rel, &err);
    if (!d)
      continue;
    bool all = true; /* every thread's children file read in full */
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      uint64_t tid;
      const char *p = e->d_name;
      if (*p < '1' || *p > '9' || !parse_u64(&p, &tid) || *p || tid > INT_MAX)
        continue;
      char crel[96];
      snprintf(crel, sizeof crel, "proc/%d/task/%d/children", (int)pid,
               (int)tid);
      size_t len;
      int fd = open_at(r, r->rootfd, crel, NULL, O_RDONLY, &err);
      if (fd < 0) {
        all = false;
        continue;
      }
      err = read_fd(r, fd, &len);
      close(fd);
      if (err) {
        all = false;
        continue;
      }
      /* the buffer is reused by scan_one: copy the pids out first */
      pid_t kids[64];
      size_t nk = 0;
      for (const char *q = r->buf; nk < 64;) {
        uint64_t c;
        q = skip_blank(q);
        if (!parse_u64(&q, &c))
          break;
        if (c > 0 && c <= INT_MAX)
          kids[nk++] = (pid_t)c;
      }
      all = all && nk < 64;
      for (size_t k = 0; k < nk; k++)
        if (!scanned(r, kids[k]) &&
            scan_one(r, procfd, kids[k], root, stat_err) < 0) {
          closedir(d);
          return -1;
        }
    }
    closedir(d);
    if (have_clk && all)
      r->scan[i].kids_clk = clk;
  }
  return 0;
}

int pp_collect_tree(pp_collect_proc *r, pid_t root, pp_tree_sample *o) {
  if (!r || !o || root <= 0)
    return PP_EINVAL;
  if (root != r->troot)
    reset_tree_state(r, root);
  o->t_ns = mono_ns();
  o->clk_tck = r->clk_tck;
  o->root = root;
  o->root_alive = false;
  o->nproc = 0;
  o->nstatus_missing = o->nio_missing = 0;

  int err = 0;
  DIR *d = proc_dir(r, &err);
  if (!d) {
    group_fail(r, PP_COLLECT_PROC_STAT, err, "proc");
    return PP_EIO;
  }
  int procfd = dirfd(d);
  char rel[64];
  int stat_err = 0;
  r->nscan = 0;
  /* A scan of all of /proc finds the processes that joined the tree. None
   * can have joined when no process was created since the last scan (the
   * last pid in /proc/loadavg is unchanged): then only the members known
   * from the last sample are read again. This keeps a sample's cost
   * proportional to the tree, not to the machine's process count. */
  uint64_t last_pid = 0;
  int have_last = r->fh[FH_LOADAVG] >= 0 && read_last_pid(r, &last_pid);
  /* On a busy machine processes are created all the time: then the full
   * scan runs at most once a second, so a process that joins the tree is
   * seen within a second (its CPU time is in the run's totals anyway). */
  uint64_t now = mono_ns();
  int recent = r->last_full_ns && now - r->last_full_ns < 1000000000ull;
  int quick = r->nprev > 0 && ((have_last && r->last_pid_valid &&
                                last_pid == r->last_pid) ||
                               recent);
  if (!quick)
    r->last_full_ns = now;
  if (quick) {
    for (size_t i = 0; i < r->nprev; i++)
      if (scan_one(r, procfd, r->prev[i].pid, root, &stat_err) < 0) {
        proc_dir_done(r, d);
        return PP_ENOMEM;
      }
    if (scan_children(r, procfd, root, &stat_err) < 0) {
      proc_dir_done(r, d);
      return PP_ENOMEM;
    }
  } else {
    struct dirent *de;
    rewinddir(d);
    while ((de = readdir(d))) {
      const char *p = de->d_name;
      uint64_t pid;
      if (*p < '1' || *p > '9' || !parse_u64(&p, &pid) || *p ||
          pid > INT_MAX)
        continue;
      if (scan_one(r, procfd, (pid_t)pid, root, &stat_err) < 0) {
        proc_dir_done(r, d);
        return PP_ENOMEM;
      }
    }
  }
  if (!quick) {
    r->last_pid = last_pid;
    r->last_pid_valid = have_last;
  }
  if (build_hash(r) || pp__grow((void **)&r->stack, &r->stack_cap, r->nscan + 1,
                                sizeof *r->stack)) {
    proc_dir_done(r, d);
    return PP_ENOMEM;
  }
  if (stat_err) {
    snprintf(rel, sizeof rel, "proc/%d/stat", (int)root);
    group_fail(r, PP_COLLECT_PROC_STAT, stat_err, rel);
  } else {
    group_ok(r, PP_COLLECT_PROC_STAT);
  }

  /* Seeds: the root (same start time as first seen) and every process
   * tracked last time that still lives (re-parented orphans stay in). */
  int32_t ri = hash_find(r, root);
  if (ri >= 0 && (!r->troot_start || r->scan[ri].start == r->troot_start)) {
    r->troot_start = r->scan[ri].start;
    r->scan[ri].mark = MARK_IN;
    o->root_alive = true;
  }
  for (size_t i = 0; i < r->nprev; i++) {
    int32_t k = hash_find(r, r->prev[i].pid);
    if (k >= 0 && r->scan[k].start == r->prev[i].start)
      r->scan[k].mark = MARK_IN;
  }
  size_t nmem = 0;
  for (size_t i = 0; i < r->nscan; i++) {
    resolve(r, i);
    nmem += r->scan[i].mark == MARK_IN;
  }

  if (pp__grow((void **)&o->procs, &o->procs_cap_, nmem, sizeof *o->procs) ||
      pp__grow((void **)&r->cur, &r->cur_cap, nmem, sizeof *r->cur)) {
    proc_dir_done(r, d);
    return PP_ENOMEM;
  }
  for (size_t i = 0; i < r->nscan; i++) {
    if (r->scan[i].mark != MARK_IN)
      continue;
    pp_proc_sample *p = &o->procs[o->nproc];
    if (fill_member(r, procfd, &r->scan[i], p, o)) {
      o->nproc++;
    } else {
      r->scan[i].mark = MARK_GONE;
      depart_now(r, p);
    }
  }
  proc_dir_done(r, d);
  if (o->nproc)
    qsort(o->procs, o->nproc, sizeof *o->procs, cmp_proc);
  if (!o->nio_missing)
    group_ok(r, PP_COLLECT_PROC_IO);
  if (!o->nstatus_missing)
    group_ok(r, PP_COLLECT_PROC_STATUS);

  /* Processes tracked last time and gone now leave their last counters. */
  for (size_t i = 0; i < r->nprev; i++) {
    int32_t k = hash_find(r, r->prev[i].pid);
    if (k >= 0 && r->scan[k].start == r->prev[i].start &&
        (r->scan[k].mark == MARK_IN || r->scan[k].mark == MARK_GONE))
      continue; /* alive, or already departed by depart_now() */
    add_counters(&r->departed, &r->prev[i].c);
    r->ndeparted++;
  }

  memset(&o->alive, 0, sizeof o->alive);
  o->num_threads = o->rss_bytes = o->vsize_bytes = 0;
  for (size_t i = 0; i < o->nproc; i++) {
    const pp_proc_sample *p = &o->procs[i];
    add_counters(&o->alive, &p->c);
    o->num_threads += p->num_threads;
    o->rss_bytes += p->rss_bytes;
    o->vsize_bytes += p->vsize_bytes;
    if (p->hwm_bytes != PP_COLLECT_NONE && p->hwm_bytes > r->hwm_max)
      r->hwm_max = p->hwm_bytes;
    r->cur[i].pid = p->pid;
    r->cur[i].start = p->start_ticks;
    r->cur[i].c = p->c;
    int32_t k = hash_find(r, p->pid);
    r->cur[i].kids_clk = k >= 0 && r->scan[k].start == p->start_ticks
                             ? r->scan[k].kids_clk
                             : PP_COLLECT_NONE;
  }
  if (o->nproc && o->nio_missing == o->nproc)
    o->alive.rchar = o->alive.wchar = o->alive.read_bytes =
        o->alive.write_bytes = PP_COLLECT_NONE;
  if (o->nproc && o->nstatus_missing == o->nproc)
    o->alive.vol_ctxt = o->alive.nonvol_ctxt = PP_COLLECT_NONE;
  if (o->rss_bytes > r->rss_peak)
    r->rss_peak = o->rss_bytes;

  o->departed = r->departed;
  o->ndeparted = r->ndeparted;
  o->total = o->departed;
  add_counters(&o->total, &o->alive);
  if (o->alive.rchar == PP_COLLECT_NONE && !o->departed.rchar)
    o->total.rchar = o->total.wchar = o->total.read_bytes =
        o->total.write_bytes = PP_COLLECT_NONE;
  if (o->alive.vol_ctxt == PP_COLLECT_NONE && !o->departed.vol_ctxt)
    o->total.vol_ctxt = o->total.nonvol_ctxt = PP_COLLECT_NONE;
  o->rss_peak_bytes = r->rss_peak;
  o->hwm_max_bytes = r->hwm_max;

  prev_ent *t = r->prev;
  size_t tc = r->prev_cap;
  r->prev = r->cur;
  r->prev_cap = r->cur_cap;
  r->cur = t;
  r->cur_cap = tc;
  r->nprev = o->nproc;
  return PP_OK;
}

void pp_tree_sample_free(pp_tree_sample *s) {
  if (!s)
    return;
  pp__free(s->procs);
  memset(s, 0, sizeof *s);
}

const pp_proc_sample *pp_tree_sample_find(const pp_tree_sample *s, pid_t pid) {
  if (!s)
    return NULL;
  size_t lo = 0, hi = s->nproc;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->procs[mid].pid == pid)
      return &s->procs[mid];
    if (s->procs[mid].pid < pid)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

int pp_collect_tree_rates(const pp_tree_sample *a, const pp_tree_sample *b,
                          pp_tree_rates *out) {
  if (!a || !b || !out || a->root != b->root || b->t_ns <= a->t_ns)
    return PP_EINVAL;
  double dt = (double)(b->t_ns - a->t_ns) / 1e9;
  const pp_proc_counters *x = &a->total, *y = &b->total;
  out->dt_s = dt;
  out->cpu_user_pct = counter_rate(x->utime_ns, y->utime_ns, dt) / 1e7;
  out->cpu_system_pct = counter_rate(x->stime_ns, y->stime_ns, dt) / 1e7;
  out->cpu_pct = out->cpu_user_pct + out->cpu_system_pct;
  out->minflt_per_s = counter_rate(x->minflt, y->minflt, dt);
  out->majflt_per_s = counter_rate(x->majflt, y->majflt, dt);
  bool st = !a->nstatus_missing && !b->nstatus_missing;
  out->vol_ctxt_per_s = st ? counter_rate(x->vol_ctxt, y->vol_ctxt, dt) : NAN;
  out->nonvol_ctxt_per_s =
      st ? counter_rate(x->nonvol_ctxt, y->nonvol_ctxt, dt) : NAN;
  bool io = !a->nio_missing && !b->nio_missing;
  out->rchar_per_s = io ? counter_rate(x->rchar, y->rchar, dt) : NAN;
  out->wchar_per_s = io ? counter_rate(x->wchar, y->wchar, dt) : NAN;
  out->read_bytes_per_s =
      io ? counter_rate(x->read_bytes, y->read_bytes, dt) : NAN;
  out->write_bytes_per_s =
      io ? counter_rate(x->write_bytes, y->write_bytes, dt) : NAN;
  return PP_OK;
}

/* ---- threads of the tree ------------------------------------------------- */

static int cmp_tid(const void *pa, const void *pb) {
  const pp_thread_sample *a = pa, *b = pb;
  if (a->pid != b->pid)
    return a->pid < b->pid ? -1 : 1;
  return (a->tid > b->tid) - (a->tid < b->tid);
}

/* Threads of one process: read each task's stat, append to out. *whole
 * says that every thread listed was read (none past max, none failed). */
static int threads_of(pp_collect_proc *r, pid_t pid, size_t max,
                      pp_thread_list *out, bool *whole) {
  char rel[64];
  snprintf(rel, sizeof rel, "proc/%d/task", (int)pid);
  int err = 0;
  *whole = false;
  DIR *d = opendir_rel(r, rel, &err);
  if (!d)
    return PP_OK; /* exited since the tree was read, or unreadable */
  struct dirent *e;
  int rc = PP_OK;
  size_t first = out->n;
  *whole = true;
  while ((e = readdir(d)) != NULL) {
    uint64_t tid;
    const char *p = e->d_name;
    if (*p < '0' || *p > '9' || !parse_u64(&p, &tid) || *p ||
        tid > (uint64_t)INT_MAX)
      continue;
    if (out->n >= max) {
      out->nmore++;
      *whole = false;
      continue;
    }
    char srel[96];
    snprintf(srel, sizeof srel, "proc/%d/task/%d/stat", (int)pid, (int)tid);
    size_t len;
    scan_ent s;
    memset(&s, 0, sizeof s);
    if (read_rel(r, srel, &len) != 0 || !parse_pid_stat(r->buf, &s)) {
      *whole = false;
      continue; /* the thread ended between readdir and read */
    }
    if (out->n >= out->cap_) {
      void *a = out->threads;
      if (pp__grow(&a, &out->cap_, out->n + 1, sizeof *out->threads) != 0) {
        rc = PP_ENOMEM;
        break;
      }
      out->threads = a;
    }
    pp_thread_sample *t = &out->threads[out->n++];
    t->tid = (pid_t)tid;
    t->pid = pid;
    memcpy(t->comm, s.comm, sizeof t->comm);
    t->start_ticks = s.start;
    t->utime_ns = ticks_to_ns(s.utime, r->clk_tck);
    t->stime_ns = ticks_to_ns(s.stime, r->clk_tck);
  }
  closedir(d);
  if (out->n - first > 1)
    qsort(out->threads + first, out->n - first, sizeof *out->threads, cmp_tid);
  return rc;
}

/* The last call's entry of process (pid, start), or NULL. r->tproc is in
 * the tree's order, by pid. */
static const thr_proc *find_tproc(const pp_collect_proc *r, pid_t pid,
                                  uint64_t start) {
  size_t lo = 0, hi = r->ntproc;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->tproc[mid].pid == pid)
      return r->tproc[mid].start == start ? &r->tproc[mid] : NULL;
    if (r->tproc[mid].pid < pid)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

/* Append the threads of process i of the tree to out: the last call's,
 * when the process's CPU clock has not moved since it read them in full
 * (then every figure is what a read would give: see proc_cpu_clock),
 * else read from /proc. Records the process in r->tproc_new[i]. */
static int threads_of_proc(pp_collect_proc *r, const pp_proc_sample *p,
                           size_t max, pp_thread_list *out, size_t i) {
  const thr_proc *old = find_tproc(r, p->pid, p->start_ticks);
  thr_proc *now = &r->tproc_new[i];
  now->pid = p->pid;
  now->start = p->start_ticks;
  now->clock = old ? old->clock : 0;
  now->clk = PP_COLLECT_NONE;
  now->first = out->n;
  uint64_t clk = PP_COLLECT_NONE;
  bool have_clk = proc_cpu_clock(r, p->pid, &now->clock, &clk);
  if (have_clk && old && old->clk == clk && out->n + old->n <= max) {
    if (pp__grow((void **)&out->threads, &out->cap_, out->n + old->n,
                 sizeof *out->threads) != 0)
      return PP_ENOMEM;
    memcpy(out->threads + out->n, r->tprev + old->first,
           old->n * sizeof *out->threads);
    out->n += old->n;
    now->n = old->n;
    now->clk = clk;
    r->nthreads_reused += old->n;
    return PP_OK;
  }
  bool whole;
  int rc = threads_of(r, p->pid, max, out, &whole);
  now->n = out->n - now->first;
  if (have_clk && whole && rc == PP_OK)
    now->clk = clk;
  return rc;
}

int pp_collect_threads(pp_collect_proc *r, const pp_tree_sample *tree,
                       size_t max, pp_thread_list *out) {
  if (!r || !tree || !out)
    return PP_EINVAL;
  out->t_ns = mono_ns();
  out->n = out->nmore = 0;
  r->nthreads_reused = 0;
  if (pp__grow((void **)&r->tproc_new, &r->tproc_new_cap, tree->nproc + 1,
               sizeof *r->tproc_new) != 0) {
    r->ntproc = 0; /* nothing reused from a call that failed */
    return PP_ENOMEM;
  }
  int rc = PP_OK;
  size_t i;
  for (i = 0; i < tree->nproc && rc == PP_OK; i++)
    rc = threads_of_proc(r, &tree->procs[i], max, out, i);
  if (rc == PP_OK && pp__grow((void **)&r->tprev, &r->tprev_cap, out->n + 1,
                              sizeof *r->tprev) != 0)
    rc = PP_ENOMEM;
  if (rc != PP_OK) {
    r->ntproc = 0;
    return rc;
  }
  if (out->n)
    memcpy(r->tprev, out->threads, out->n * sizeof *out->threads);
  r->ntprev = out->n;
  thr_proc *t = r->tproc;
  size_t tc = r->tproc_cap;
  r->tproc = r->tproc_new;
  r->tproc_cap = r->tproc_new_cap;
  r->ntproc = i;
  r->tproc_new = t;
  r->tproc_new_cap = tc;
  return PP_OK;
}

size_t pp_collect_threads_reused(const pp_collect_proc *r) {
  return r ? r->nthreads_reused : 0;
}

void pp_thread_list_free(pp_thread_list *l) {
  if (!l)
    return;
  pp__free(l->threads);
  memset(l, 0, sizeof *l);
}

int pp_collect_proc_freq_from_cpuinfo(const pp_collect_proc *r) {
  return r && r->cpuinfo_mhz;
}
