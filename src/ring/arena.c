/* SPDX-License-Identifier: MIT */
/*
 * The durable arena (see arena.h): one file per process, its header and
 * segment table mapped at the start, each segment mapped on its own.
 *
 * Every segment's file range is reserved with posix_fallocate before it
 * is mapped, so that a store to a mapped page never meets a full file
 * system (on tmpfs that would be a SIGBUS in the recording thread): when
 * the reservation fails, the caller gets NULL and uses anonymous memory.
 * A freed segment's range is punched out (its memory goes back) and given
 * again to the next request of the same size, so that a program that
 * keeps starting threads does not grow the file.
 */
#include "arena.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../internal.h"
#include "ring.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fd = -1;
static pp__arena_hdr *hdr; /* NULL: no arena in this process */
static char file_path[PATH_MAX];
static pp__arena_sites *sites_blk; /* the session's block being filled */
static pp__arena_blob_hdr *ckpt[2]; /* stats mode's checkpoints */
static int ckpt_last;               /* the one written last */
static int atfork_done;
/* Requests the arena could not serve this session (the caller used plain
 * memory), and the first reason. */
static _Atomic uint64_t fallbacks;
static char fallback_why[160];
static uint32_t seg_limit = PP__ARENA_SEG_MAX; /* tests lower it */

static pp__arena_seg *segs(void) {
  return (pp__arena_seg *)((char *)hdr + PP__ARENA_SEG_OFF);
}

static size_t page_bytes(void) {
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? (size_t)p : 4096;
}

/* Field 22 of /proc/PID/stat (0: this process): the start time, in clock
 * ticks since boot, and in *zombie whether it has ended unreaped; 0 when
 * unreadable. */
static uint64_t start_time_of(uint32_t pid, int *zombie) {
  char path[64], buf[1024];
  if (pid)
    snprintf(path, sizeof path, "/proc/%u/stat", (unsigned)pid);
  else
    snprintf(path, sizeof path, "/proc/self/stat");
  *zombie = 0;
  int f = open(path, O_RDONLY | O_CLOEXEC);
  if (f < 0)
    return 0;
  ssize_t n = read(f, buf, sizeof buf - 1);
  close(f);
  if (n <= 0)
    return 0;
  buf[n] = 0;
  const char *p = strrchr(buf, ')'); /* the name may hold spaces */
  if (!p || !p[1] || !p[2])
    return 0;
  *zombie = p[2] == 'Z' || p[2] == 'X';
  /* after ") " come fields 3, 4, ...: skip to field 22 */
  for (int field = 2; field < 22 && p; field++)
    p = strchr(p + 1, ' ');
  return p ? strtoull(p + 1, NULL, 10) : 0;
}

static void read_boot_id(char out[40]) {
  memset(out, 0, 40);
  int f = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (f < 0)
    return;
  ssize_t n = read(f, out, 39);
  close(f);
  for (ssize_t i = 0; i < n; i++)
    if (out[i] == '\n')
      out[i] = 0;
}

int pp__arena_owner_alive(const pp__arena_hdr *h) {
  char boot[40];
  read_boot_id(boot);
  int zombie = 0;
  uint64_t started = start_time_of(h->pid, &zombie);
  return started && !zombie && started == h->proc_start &&
         !strncmp(boot, h->boot_id, sizeof boot);
}

static uint64_t fresh_token(void) {
  uint64_t t = 0;
  if (getrandom(&t, sizeof t, GRND_NONBLOCK) != (ssize_t)sizeof t || !t) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    t = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^
        ((uint64_t)getpid() << 32);
  }
  return t ? t : 1;
}

static int is_dir(const char *d) {
  struct stat st;
  return stat(d, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The folder for the file: PIPEPROF_RINGS_DIR, /dev/shm when it can be
 * written, else the trace's folder. 0, or -1 with the reason. */
static int pick_dir(const char *trace_path, char *out, size_t n, char *why,
                    size_t wn) {
  const char *dir = getenv("PIPEPROF_RINGS_DIR");
  if (dir && !strcmp(dir, "off")) {
    snprintf(why, wn, "turned off (PIPEPROF_RINGS_DIR=off)");
    return -1;
  }
  if (dir && *dir) {
    if (!is_dir(dir)) {
      snprintf(why, wn, "PIPEPROF_RINGS_DIR %s is not a folder", dir);
      return -1;
    }
    snprintf(out, n, "%s", dir);
    return 0;
  }
  if (is_dir("/dev/shm") && access("/dev/shm", W_OK | X_OK) == 0) {
    snprintf(out, n, "/dev/shm");
    return 0;
  }
  const char *slash = strrchr(trace_path, '/');
  if (!slash)
    snprintf(out, n, ".");
  else if (slash == trace_path)
    snprintf(out, n, "/");
  else
    snprintf(out, n, "%.*s", (int)(slash - trace_path), trace_path);
  return 0;
}

void pp__arena_process_end(void) {
  pp__arena_hdr *h = hdr;
  if (h && atomic_load(&h->state) == PP__ARENA_IDLE && file_path[0] &&
      h->pid == (uint32_t)syscall(SYS_getpid)) /* not a vfork child */
    unlink(file_path);
}

static void fork_prepare(void) { pthread_mutex_lock(&lock); }
static void fork_parent(void) { pthread_mutex_unlock(&lock); }
static void fork_child(void) {
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  memcpy(&lock, &fresh, sizeof fresh);
  pp__arena_after_fork_child();
}

/* Create the file and map its header. Caller holds the lock. */
static int create(const char *trace_path, char *why, size_t wn) {
  char d[PATH_MAX];
  if (pick_dir(trace_path, d, sizeof d, why, wn) != 0)
    return -1;
  uint64_t tag = fresh_token();
  int n = snprintf(file_path, sizeof file_path, "%s/pipeprof-%ld-%016llx.rings",
                   d, (long)getpid(), (unsigned long long)tag);
  if (n < 0 || (size_t)n >= sizeof file_path) {
    snprintf(why, wn, "the folder's name is too long: %s", d);
    return -1;
  }
  int f =
      open(file_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (f < 0) {
    snprintf(why, wn, "cannot create %s: %s", file_path, strerror(errno));
    return -1;
  }
  int e = posix_fallocate(f, 0, PP__ARENA_HDR_BYTES);
  void *h = MAP_FAILED;
  if (e == 0)
    h = mmap(NULL, PP__ARENA_HDR_BYTES, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_POPULATE, f, 0);
  else
    errno = e;
  if (h == MAP_FAILED) {
    snprintf(why, wn, "cannot reserve %s: %s", file_path, strerror(errno));
    close(f);
    unlink(file_path);
    return -1;
  }
  fd = f;
  hdr = h;
  memcpy(hdr->magic, PP__ARENA_MAGIC, 8);
  hdr->version = PP__ARENA_VERSION;
  hdr->hdr_bytes = PP__ARENA_HDR_BYTES;
  hdr->pid = (uint32_t)getpid();
  hdr->uid = (uint32_t)getuid();
  hdr->page = (uint32_t)page_bytes();
  hdr->slot_bytes = (uint32_t)sizeof(pp__slot);
  hdr->tstate_bytes = (uint32_t)sizeof(pp__tstate);
  int zombie;
  hdr->proc_start = start_time_of(0, &zombie);
  read_boot_id(hdr->boot_id);
  hdr->file_bytes = PP__ARENA_HDR_BYTES;
  return 0;
}

void pp__arena_init_once(void) {
  pthread_mutex_lock(&lock);
  if (!atfork_done) {
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    /* at exit the session's handler (registered after this one) has
     * finished its trace: nothing is left to salvage */
    atexit(pp__arena_process_end);
    atfork_done = 1;
  }
  pthread_mutex_unlock(&lock);
}

static void free_kind_locked(unsigned kind);

int pp__arena_session_begin(const char *trace_path, unsigned mode, char *path,
                            size_t n, char *why, size_t wn) {
  pthread_mutex_lock(&lock);
  int rc = 0;
  if (!hdr)
    rc = create(trace_path, why, wn);
  if (rc == 0) {
    atomic_store(&hdr->state, PP__ARENA_IDLE);
    atomic_store(&fallbacks, 0);
    fallback_why[0] = 0;
    free_kind_locked(PP__SEG_SITES); /* the last session's ids */
    sites_blk = NULL;
    free_kind_locked(PP__SEG_CKPT);
    ckpt[0] = ckpt[1] = NULL;
    hdr->clock_mult = 0;
    hdr->mode = mode;
    hdr->token = fresh_token();
    snprintf(hdr->trace_path, sizeof hdr->trace_path, "%s", trace_path);
    atomic_store(&hdr->commit_off, 0);
    atomic_store(&hdr->commit_seq, 0);
    atomic_store(&hdr->commit_events, 0);
    atomic_store(&hdr->commit_drops, 0);
    atomic_store(&hdr->commit_pass, 0);
    atomic_store(&hdr->state, PP__ARENA_ACTIVE);
    snprintf(path, n, "%s", file_path);
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

uint64_t pp__arena_token(void) {
  pthread_mutex_lock(&lock);
  uint64_t t = hdr ? hdr->token : 0;
  pthread_mutex_unlock(&lock);
  return t;
}

void pp__arena_session_end(int exiting) {
  pthread_mutex_lock(&lock);
  if (hdr) {
    atomic_store(&hdr->state, PP__ARENA_IDLE);
    if (exiting) /* the mappings go with the process */
      unlink(file_path);
  }
  pthread_mutex_unlock(&lock);
}

/* ---- segments ------------------------------------------------------------ */

/* LeakSanitizer, when the host program runs under it (weak: absent
 * otherwise): a tally set's chunks hold the only pointers to heap memory
 * of the set's (its pairing stack, the live engine's state per tally), in
 * a file mapping LSan does not scan by itself; registered, that memory is
 * not reported as leaked at exit. */
extern void __lsan_register_root_region(const void *p, size_t size)
    __attribute__((weak));
extern void __lsan_unregister_root_region(const void *p, size_t size)
    __attribute__((weak));

static void lsan_root(const void *p, size_t size, int on) {
  if (on && __lsan_register_root_region)
    __lsan_register_root_region(p, size);
  else if (!on && __lsan_unregister_root_region)
    __lsan_unregister_root_region(p, size);
}

static void *fallback(const char *why, int err) {
  if (!atomic_fetch_add(&fallbacks, 1))
    snprintf(fallback_why, sizeof fallback_why, "%s%s%s", why, err ? ": " : "",
             err ? strerror(err) : "");
  return NULL;
}

static void *alloc_locked(size_t bytes, unsigned kind, int populate) {
  if (!hdr || !bytes || bytes % page_bytes())
    return NULL;
  pp__arena_seg *sg = segs();
  uint32_t nseg = atomic_load(&hdr->nseg);
  uint32_t i = nseg;
  for (uint32_t k = 0; k < nseg; k++)
    if (atomic_load(&sg[k].kind) == PP__SEG_FREE && sg[k].len == bytes) {
      i = k;
      break;
    }
  uint64_t off;
  if (i < nseg) {
    off = sg[i].off;
  } else {
    if (nseg >= seg_limit)
      return fallback("the rings file's segment table is full", 0);
    off = hdr->file_bytes;
  }
  int e = posix_fallocate(fd, (off_t)off, (off_t)bytes);
  if (e != 0)
    return fallback("no room for the rings file", e);
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                 MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, (off_t)off);
  if (p == MAP_FAILED) /* a new range stays past file_bytes: taken again */
    return fallback("cannot map the rings file", errno);
  if (i < nseg && (kind == PP__SEG_TSTATE || kind == PP__SEG_TALLY))
    memset(p, 0, bytes); /* its range may not have been punched out */
  sg[i].addr = (uint64_t)(uintptr_t)p;
  sg[i].off = off;
  sg[i].len = bytes;
  if (kind == PP__SEG_TALLY)
    lsan_root(p, bytes, 1);
  atomic_store_explicit(&sg[i].kind, kind, memory_order_release);
  if (i == nseg) {
    hdr->file_bytes = off + bytes;
    atomic_store_explicit(&hdr->nseg, nseg + 1, memory_order_release);
  }
  return p;
}

void *pp__arena_alloc(size_t bytes, unsigned kind, int populate) {
  pthread_mutex_lock(&lock);
  void *p = alloc_locked(bytes, kind, populate);
  pthread_mutex_unlock(&lock);
  return p;
}

static pp__arena_seg *find_locked(const void *p) {
  if (!hdr)
    return NULL;
  uint64_t a = (uint64_t)(uintptr_t)p;
  pp__arena_seg *sg = segs();
  uint32_t nseg = atomic_load(&hdr->nseg);
  for (uint32_t k = 0; k < nseg; k++) {
    unsigned kind = atomic_load(&sg[k].kind);
    if (kind != PP__SEG_FREE && sg[k].addr == a)
      return &sg[k];
  }
  return NULL;
}

int pp__arena_owns(const void *p) {
  pthread_mutex_lock(&lock);
  int yes = find_locked(p) != NULL;
  pthread_mutex_unlock(&lock);
  return yes;
}

static void free_seg_locked(pp__arena_seg *s) {
  if (atomic_exchange(&s->kind, PP__SEG_FREE) == PP__SEG_TALLY)
    lsan_root((const void *)(uintptr_t)s->addr, s->len, 0);
  munmap((void *)(uintptr_t)s->addr, s->len);
  s->addr = 0;
  fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)s->off,
            (off_t)s->len); /* not supported: the memory stays */
}

int pp__arena_free(void *p) {
  pthread_mutex_lock(&lock);
  pp__arena_seg *s = find_locked(p);
  if (s)
    free_seg_locked(s);
  pthread_mutex_unlock(&lock);
  return s != NULL;
}

void pp__arena_leak(void *p) {
  pthread_mutex_lock(&lock);
  pp__arena_seg *s = find_locked(p);
  if (s)
    atomic_store(&s->kind, PP__SEG_LEAKED);
  pthread_mutex_unlock(&lock);
}

/* ---- sites --------------------------------------------------------------- */

/* Free every segment of kind. */
static void free_kind_locked(unsigned kind) {
  pp__arena_seg *sg = segs();
  uint32_t nseg = atomic_load(&hdr->nseg);
  for (uint32_t k = 0; k < nseg; k++)
    if (atomic_load(&sg[k].kind) == kind)
      free_seg_locked(&sg[k]);
}

/* Longest string kept of a site's name, function or file. */
#define SITE_STR_MAX 4095u

static uint16_t str_len(const char *s) {
  if (!s)
    return 0;
  size_t n = strnlen(s, SITE_STR_MAX);
  return (uint16_t)(n + 1);
}

void pp__arena_site(const pp_srcloc *p, uint32_t id) {
  pthread_mutex_lock(&lock);
  if (!hdr || atomic_load(&hdr->state) != PP__ARENA_ACTIVE) {
    pthread_mutex_unlock(&lock);
    return;
  }
  pp__arena_site_rec r;
  memset(&r, 0, sizeof r);
  r.addr = (uint64_t)(uintptr_t)p;
  r.id = id;
  r.kind = p->kind;
  r.line = p->line;
  const char *str[3] = {p->name, p->function, p->file};
  size_t size = sizeof r;
  for (int k = 0; k < 3; k++) {
    r.len[k] = str_len(str[k]);
    size += r.len[k];
  }
  size = (size + 7) & ~(size_t)7;
  const size_t room = PP__ARENA_SITES_BYTES - sizeof(pp__arena_sites);
  uint64_t used = sites_blk ? atomic_load(&sites_blk->used) : room;
  if (used + size > room) {
    sites_blk = alloc_locked(PP__ARENA_SITES_BYTES, PP__SEG_SITES, 0);
    if (sites_blk)
      sites_blk->token = hdr->token;
    used = 0;
  }
  if (sites_blk) {
    char *q = (char *)(sites_blk + 1) + used;
    memcpy(q, &r, sizeof r);
    q += sizeof r;
    for (int k = 0; k < 3; k++) {
      if (r.len[k]) {
        memcpy(q, str[k], r.len[k] - 1u);
        q[r.len[k] - 1u] = 0;
      }
      q += r.len[k];
    }
    atomic_store_explicit(&sites_blk->used, used + size, memory_order_release);
  }
  pthread_mutex_unlock(&lock);
}

/* Write a blob: its length 0 first (a process killed meanwhile leaves a
 * blob no salvager takes), then the bytes, token and seq, the length
 * last. Caller holds the lock. */
static void blob_fill(pp__arena_blob_hdr *b, const void *data, size_t len,
                      uint64_t seq) {
  atomic_store_explicit(&b->len, 0, memory_order_release);
  memcpy(b + 1, data, len);
  b->token = hdr->token;
  b->seq = seq;
  atomic_store_explicit(&b->len, len, memory_order_release);
}

void pp__arena_blob(const void *chunks, size_t len, uint32_t seq) {
  pthread_mutex_lock(&lock);
  if (hdr) {
    free_kind_locked(PP__SEG_BLOB);
    size_t page = page_bytes();
    size_t bytes = (sizeof(pp__arena_blob_hdr) + len + page - 1) / page * page;
    pp__arena_blob_hdr *b = alloc_locked(bytes, PP__SEG_BLOB, 0);
    if (b)
      blob_fill(b, chunks, len, seq);
  }
  pthread_mutex_unlock(&lock);
}

int pp__arena_ckpt(const void *data, size_t len, uint64_t pass) {
  pthread_mutex_lock(&lock);
  int rc = -1, k = !ckpt_last;
  if (!hdr)
    goto out;
  size_t need = sizeof(pp__arena_blob_hdr) + len;
  pp__arena_blob_hdr *b = ckpt[k];
  if (b) {
    pp__arena_seg *sg = find_locked(b);
    if (!sg || sg->len < need) {
      if (sg)
        free_seg_locked(sg);
      b = ckpt[k] = NULL;
    }
  }
  if (!b) {
    size_t page = page_bytes(), bytes = 4 * page;
    while (bytes < need)
      bytes *= 2;
    if (!(b = ckpt[k] = alloc_locked(bytes, PP__SEG_CKPT, 0)))
      goto out;
  }
  blob_fill(b, data, len, pass); /* a kill meanwhile leaves the other */
  ckpt_last = k;
  rc = 0;
out:
  pthread_mutex_unlock(&lock);
  return rc;
}

void pp__arena_clock(uint64_t tick0, int64_t ns0, uint64_t mult,
                     double ns_per_tick) {
  pp__arena_hdr *h = hdr; /* the writer's session holds the arena */
  if (!h)
    return;
  h->clock_tick0 = tick0;
  h->clock_ns0 = ns0;
  h->clock_mult = mult;
  h->clock_ns_per_tick = ns_per_tick;
}

uint64_t pp__arena_fallbacks(char *why, size_t n) {
  pthread_mutex_lock(&lock);
  uint64_t k = atomic_load(&fallbacks);
  snprintf(why, n, "%s", fallback_why);
  pthread_mutex_unlock(&lock);
  return k;
}

#ifdef PP_TESTING
void pp__arena_test_seg_limit(uint32_t n) {
  pthread_mutex_lock(&lock);
  seg_limit = n && n < PP__ARENA_SEG_MAX ? n : PP__ARENA_SEG_MAX;
  pthread_mutex_unlock(&lock);
}
#endif

void pp__arena_commit(uint64_t off, uint64_t seq, uint64_t events,
                      uint64_t drops, uint64_t pass) {
  pp__arena_hdr *h = hdr; /* the writer's session holds the arena */
  if (!h)
    return;
  atomic_store_explicit(&h->commit_off, off, memory_order_relaxed);
  atomic_store_explicit(&h->commit_seq, seq, memory_order_relaxed);
  atomic_store_explicit(&h->commit_events, events, memory_order_relaxed);
  atomic_store_explicit(&h->commit_drops, drops, memory_order_relaxed);
  atomic_store_explicit(&h->commit_pass, pass, memory_order_release);
}

void pp__arena_after_fork_child(void) {
  /* The parent's segments stay mapped, unused (the recorder forgets the
   * parent's threads); only the header goes, and the file is the
   * parent's. */
  if (hdr)
    munmap(hdr, PP__ARENA_HDR_BYTES);
  hdr = NULL;
  sites_blk = NULL;
  ckpt[0] = ckpt[1] = NULL;
  if (fd >= 0)
    close(fd);
  fd = -1;
  file_path[0] = 0;
}
