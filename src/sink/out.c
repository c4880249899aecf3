/* SPDX-License-Identifier: MIT */
/*
 * The library's .pptrace output: staged chunks, one write() per writer
 * pass, and write failures (see out.h).
 */
#include "out.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../format/records.h"

/* The stage is written when it would pass this size. */
#define STAGE_MAX (1u << 20)

static int write_all(int fd, struct iovec *iov, int n) {
  while (n > 0) {
    ssize_t k = writev(fd, iov, n);
    if (k < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    while (n > 0 && (size_t)k >= iov->iov_len) {
      k -= (ssize_t)iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0) {
      iov->iov_base = (char *)iov->iov_base + k;
      iov->iov_len -= (size_t)k;
    }
  }
  return 0;
}

int pp__out_create(const char *path, int truncate, char *why, size_t n) {
  /* never through a symlink; never blocked by a FIFO with no reader */
  int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                0644);
  if (fd < 0) {
    int e = errno;
    if (e == ELOOP)
      snprintf(why, n,
               "%s is a symbolic link: refused (pipeprof writes only to a "
               "file of its own)",
               path);
    else if (e == ENXIO)
      snprintf(why, n, "%s is a FIFO with no reader: refused", path);
    else
      snprintf(why, n, "cannot create %s: %s", path, strerror(e));
    errno = e;
    return -1;
  }
  struct stat st;
  const char *bad = NULL;
  if (fstat(fd, &st) != 0)
    bad = "cannot be examined";
  else if (S_ISREG(st.st_mode) && st.st_uid != geteuid())
    bad = "belongs to another user: refused";
  else if (S_ISREG(st.st_mode) && st.st_nlink > 1)
    bad = "has other hard links: refused (writing it would change them)";
  else if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) /* /dev/null */
    bad = "is not a regular file: refused";
  int flags = bad ? 0 : fcntl(fd, F_GETFL);
  if (!bad && (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0))
    bad = "cannot be written in blocking mode";
  if (!bad && truncate && S_ISREG(st.st_mode) && ftruncate(fd, 0) != 0)
    bad = "cannot be emptied";
  if (bad) {
    snprintf(why, n, "%s %s", path, bad);
    close(fd);
    errno = EPERM;
    return -1;
  }
  return fd;
}

int pp__out_open(pp__out *o, const char *path, uint32_t pid, char *why,
                 size_t n) {
  memset(o, 0, sizeof *o);
  o->path = path;
  o->fd = pp__out_create(path, 1, why, n);
  if (o->fd < 0)
    return -1;
  unsigned char hdr[PPT_FILE_HEADER_SIZE];
  ppt_file_header(hdr, pid);
  struct iovec iov = {hdr, sizeof hdr};
  if (write_all(o->fd, &iov, 1) != 0) {
    int e = errno;
    snprintf(why, n, "cannot write %s: %s", path, strerror(e));
    close(o->fd);
    o->fd = -1;
    errno = e;
    return -1;
  }
  o->good_off = PPT_FILE_HEADER_SIZE;
  return 0;
}

int pp__out_attach(pp__out *o, int fd, const char *path, uint64_t off,
                   uint32_t seq) {
  memset(o, 0, sizeof *o);
  o->fd = -1;
  o->path = path;
  if (ftruncate(fd, (off_t)off) != 0 ||
      lseek(fd, (off_t)off, SEEK_SET) != (off_t)off)
    return -1;
  o->fd = fd;
  o->good_off = off;
  o->seq = seq;
  return 0;
}

/* Write one chunk now, past the stage. 0 when it reached the file. */
static int write_direct(pp__out *o, uint16_t type, const ppt_buf *b) {
  unsigned char hdr[PPT_CHUNK_HEADER_SIZE];
  ppt_chunk_header(hdr, type, b->data, (uint32_t)b->len, o->seq++);
  struct iovec iov[2] = {{hdr, sizeof hdr}, {b->data, b->len}};
  if (write_all(o->fd, iov, b->len ? 2 : 1) != 0)
    return -1;
  o->good_off += sizeof hdr + b->len;
  return 0;
}

/* The META chunk that records a failed write: its errno as text and, in
 * trace mode, the events not in the file so far. 0 when written whole. */
static int write_loss_meta(pp__out *o) {
  char what[PATH_MAX + 128], num[32];
  snprintf(what, sizeof what, "write to %s failed: %s", o->path,
           strerror(o->err));
  snprintf(num, sizeof num, "%llu",
           (unsigned long long)(o->events_in - o->events_flushed));
  ppt_buf m = {0};
  const char *const kv[][2] = {{"write_error", what}, {"events_lost", num}};
  ppt_meta_pairs_put(&m, kv, o->count_lost ? 2 : 1);
  int rc = m.oom ? -1 : write_direct(o, PPT_CHUNK_META, &m);
  ppt_buf_free(&m);
  return rc;
}

/* The first failed write: say so once on stderr, cut the file back to its
 * last whole chunk (which also frees the space a partial write took) and
 * record the failure there while a small chunk still fits. Recording goes
 * on; what is handed over from now on is counted as lost. */
static void fail(pp__out *o, int err) {
  if (o->failed)
    return;
  o->failed = 1;
  if (o->err)
    return;
  o->err = err ? err : EIO;
  if (!o->quiet) /* a flight dump's caller says it */
    fprintf(stderr,
            "pipeprof: writing %s failed: %s; the program runs on, events "
            "from now on are counted as lost\n",
            o->path, strerror(o->err));
  if (ftruncate(o->fd, (off_t)o->good_off) == 0 &&
      lseek(o->fd, (off_t)o->good_off, SEEK_SET) == (off_t)o->good_off)
    write_loss_meta(o);
}

/* The file was removed while recording (its folder deleted, say): what
 * is written from now on could never be read. Said once; nothing more is
 * written, and the program runs on. */
static int removed(pp__out *o) {
  struct stat st;
  if (o->quiet || fstat(o->fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_nlink > 0)
    return 0;
  o->failed = 1;
  o->err = ENOENT;
  fprintf(stderr,
          "pipeprof: %s was removed while the program recorded into it: "
          "what it records from now on is lost (the program runs on)\n",
          o->path);
  return 1;
}

void pp__out_flush(pp__out *o) {
  if (!o->stage.len)
    return;
  if (o->fd >= 0 && !o->failed && !removed(o)) {
    struct iovec iov = {o->stage.data, o->stage.len};
    if (write_all(o->fd, &iov, 1) != 0) {
      fail(o, errno);
    } else {
      o->good_off += o->stage.len;
      o->events_flushed += o->stage_events;
    }
  }
  o->stage_events = 0;
  o->stage.len = 0;
}

void pp__out_chunk(pp__out *o, uint16_t type, ppt_buf *b, uint64_t events) {
  o->events_in += events;
  if (o->failed || (o->fd < 0 && !o->memory) || b->oom) {
    b->len = 0; /* lost: counted by events_in - events_flushed */
    b->oom = 0;
    return;
  }
  size_t need = PPT_CHUNK_HEADER_SIZE + b->len;
  if (o->stage.len + need > STAGE_MAX && !o->memory)
    pp__out_flush(o);
  if (ppt_buf_reserve(&o->stage, need) != 0) { /* out of memory: direct */
    o->stage.oom = 0;
    pp__out_flush(o);
    if (!o->failed) {
      if (write_direct(o, type, b) != 0)
        fail(o, errno);
      else
        o->events_flushed += events;
    }
    b->len = 0;
    return;
  }
  unsigned char *hdr = o->stage.data + o->stage.len;
  ppt_chunk_header(hdr, type, b->data, (uint32_t)b->len, o->seq++);
  if (b->len)
    memcpy(hdr + PPT_CHUNK_HEADER_SIZE, b->data, b->len);
  o->stage.len += need;
  o->stage_events += events;
  b->len = 0;
}

void pp__out_retry_after_failure(pp__out *o) {
  if (!o->err || o->fd < 0)
    return;
  o->stage.len = 0;
  o->stage_events = 0;
  if (ftruncate(o->fd, (off_t)o->good_off) == 0 &&
      lseek(o->fd, (off_t)o->good_off, SEEK_SET) == (off_t)o->good_off)
    o->failed = write_loss_meta(o) != 0;
}

int pp__out_close(pp__out *o) {
  pp__out_flush(o);
  int failed = o->failed || o->err;
  if (o->fd >= 0) {
    if (o->err) /* no partial chunk after the last whole one */
      (void)!ftruncate(o->fd, (off_t)o->good_off);
    close(o->fd);
  }
  o->fd = -1;
  return failed ? -1 : 0;
}

void pp__out_free(pp__out *o) { ppt_buf_free(&o->stage); }
