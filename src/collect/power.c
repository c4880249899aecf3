/* SPDX-License-Identifier: MIT */
/*
 * RAPL energy: discovery of powercap zones (and of perf's power PMU as the
 * fallback), baseline and cumulative reads with counter wraparound, power
 * between reads, the carbon conversion and the CPU-share attribution
 * estimate. Files are opened through a fault hook so that tests can make
 * energy_uj unreadable even when they run as root.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/perf.h"
#include "collect/power.h"
#include "internal.h"

#define REASON_LEN 160
#define MAX_PMU_CPUS 16
#define PMU_DEFAULT_SCALE 2.3283064365386962890625e-10 /* 2^-32 J */

typedef struct domain {
  pp_power_domain pub; /* label, zone, kind, package, available */
  char reason[REASON_LEN];
  int fd;          /* energy_uj (powercap) or perf event fd */
  int is_perf;     /* reads are raw u64 counts from perf */
  uint64_t max_uj; /* powercap wrap range, 0 when unknown */
  double scale;    /* joules per raw unit */
  uint64_t last_raw;
  uint64_t total_raw; /* raw units since open */
  double prev_j;      /* energy at the previous good read */
  uint64_t prev_ns;   /* its time (open's for the first) */
  uint64_t nwraps;
} domain;

struct pp_collect_power {
  pp_power_source source;
  int n;
  domain d[PP_POWER_MAX_DOMAINS];
  char reason[2 * REASON_LEN + 32]; /* "unavailable: " + two reasons */
};

static pp_collect_power_fault_fn fault_hook;

void pp_collect_power_set_fault_hook(pp_collect_power_fault_fn fn) {
  fault_hook = fn;
}

uint64_t pp_collect_power_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double pp_carbon_grams(double joules, double g_per_kwh) {
  if (!(g_per_kwh > 0)) /* also NaN */
    g_per_kwh = PP_CARBON_DEFAULT_G_PER_KWH;
  return joules / 3.6e6 * g_per_kwh;
}

double pp_collect_power_attribute(double host_joules, double cpu_share) {
  if (!(cpu_share > 0))
    return 0;
  if (cpu_share > 1)
    cpu_share = 1;
  return host_joules * cpu_share;
}

static int open_file(const char *path) {
  if (fault_hook) {
    int err = fault_hook(path);
    if (err) {
      errno = err;
      return -1;
    }
  }
  return open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
}

/* Read up to len-1 bytes at offset 0 of fd, NUL-terminated, trailing
 * whitespace removed. Returns 0 or -1 (errno set). */
static int pread_text(int fd, char *buf, size_t len) {
  ssize_t n;
  do
    n = pread(fd, buf, len - 1, 0);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -1;
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ' ||
                   buf[n - 1] == '\t' || buf[n - 1] == '\r'))
    n--;
  buf[n] = 0;
  return 0;
}

static int read_text(const char *path, char *buf, size_t len) {
  int fd = open_file(path);
  if (fd < 0)
    return -1;
  int r = pread_text(fd, buf, len);
  int err = errno;
  close(fd);
  errno = err;
  return r;
}

static int parse_u64(const char *s, uint64_t *out) {
  if (!*s || *s == '-')
    return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end)
    return -1;
  *out = v;
  return 0;
}

static int read_u64_fd(int fd, uint64_t *out) {
  char buf[32];
  if (pread_text(fd, buf, sizeof buf) != 0)
    return -1;
  if (parse_u64(buf, out) != 0) {
    errno = EINVAL;
    return -1;
  }
  return 0;
}

/* out = a + b [+ "/" + c]; -1 when it does not fit. */
static int path_join(char *out, size_t len, const char *a, const char *b,
                     const char *c) {
  int n = c ? snprintf(out, len, "%s%s/%s", a, b, c)
            : snprintf(out, len, "%s%s", a, b);
  return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Copy src into dst[len], truncating. */
static void set_str(char *dst, size_t len, const char *src) {
  size_t n = strlen(src);
  if (n >= len)
    n = len - 1;
  memcpy(dst, src, n);
  dst[n] = 0;
}

/* ---- powercap --------------------------------------------------------- */

typedef struct zone_id {
  char dir[48]; /* fits pp_power_domain.zone */
  int pkg, sub; /* sub -1 for a top-level zone */
} zone_id;

/* "intel-rapl:N" or "intel-rapl:N:M" (likewise "amd-rapl:"); not
 * "intel-rapl" (the control type) nor "intel-rapl-mmio:N" (a second view
 * of package energy on some laptops, which would count it twice). */
static int parse_zone(const char *name, zone_id *z) {
  static const char *const prefixes[] = {"intel-rapl:", "amd-rapl:"};
  const char *s = NULL;
  for (size_t i = 0; i < PP__ARRAY_LEN(prefixes); i++)
    if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
      s = name + strlen(prefixes[i]);
  if (!s || strlen(name) >= sizeof z->dir)
    return -1;
  char *end;
  if (*s < '0' || *s > '9')
    return -1;
  long a = strtol(s, &end, 10), b = -1;
  if (*end == ':') {
    s = end + 1;
    if (*s < '0' || *s > '9')
      return -1;
    b = strtol(s, &end, 10);
  }
  if (*end || a > 1 << 20 || b > 1 << 20)
    return -1;
  set_str(z->dir, sizeof z->dir, name);
  z->pkg = (int)a;
  z->sub = (int)b;
  return 0;
}

static int zone_cmp(const void *x, const void *y) {
  const zone_id *a = x, *b = y;
  if (a->pkg != b->pkg)
    return a->pkg < b->pkg ? -1 : 1;
  if (a->sub != b->sub)
    return a->sub < b->sub ? -1 : 1;
  return strcmp(a->dir, b->dir);
}

static pp_power_kind kind_of(const char *name, int *package) {
  *package = -1;
  if (strncmp(name, "package-", 8) == 0) {
    char *end;
    long v = strtol(name + 8, &end, 10);
    if (end != name + 8 && !*end && v >= 0 && v < 1 << 20)
      *package = (int)v;
    return PP_POWER_PACKAGE;
  }
  if (strcmp(name, "core") == 0)
    return PP_POWER_CORE;
  if (strcmp(name, "uncore") == 0)
    return PP_POWER_UNCORE;
  if (strcmp(name, "dram") == 0)
    return PP_POWER_DRAM;
  if (strcmp(name, "psys") == 0)
    return PP_POWER_PSYS;
  return PP_POWER_OTHER;
}

static void domain_init(domain *d) {
  memset(d, 0, sizeof *d);
  d->fd = -1;
  d->pub.package = -1;
}

static void domain_fail(domain *d, const char *reason) {
  snprintf(d->reason, sizeof d->reason, "%s", reason);
  d->pub.available = 0;
  d->pub.reason = d->reason;
  if (d->fd >= 0)
    close(d->fd);
  d->fd = -1;
}

static void energy_uj_fail(domain *d, int err) {
  char tmp[REASON_LEN];
  if (err == EACCES || err == EPERM) {
    domain_fail(d, "permission denied reading energy_uj (RAPL is root-only "
                   "on this kernel)");
  } else if (err == ENOENT) {
    domain_fail(d, "no energy_uj file");
  } else {
    snprintf(tmp, sizeof tmp, "cannot read energy_uj (errno %d)", err);
    domain_fail(d, tmp);
  }
}

/* Returns the number of zones found (available or not). */
static int discover_powercap(pp_collect_power *p, const char *root) {
  char dirpath[4096];
  if (path_join(dirpath, sizeof dirpath, root, "/sys/class/powercap",
                NULL) != 0)
    return 0;
  DIR *dir = opendir(dirpath);
  if (!dir)
    return 0;
  zone_id zones[PP_POWER_MAX_DOMAINS];
  int nz = 0;
  struct dirent *de;
  while ((de = readdir(dir)) != NULL && nz < PP_POWER_MAX_DOMAINS)
    if (parse_zone(de->d_name, &zones[nz]) == 0)
      nz++;
  closedir(dir);
  qsort(zones, (size_t)nz, sizeof zones[0], zone_cmp);

  for (int i = 0; i < nz; i++) {
    domain *d = &p->d[p->n++];
    domain_init(d);
    d->scale = 1e-6;
    set_str(d->pub.zone, sizeof d->pub.zone, zones[i].dir);
    char zdir[4200], path[4300], name[24] = "";
    if (path_join(zdir, sizeof zdir, dirpath, "", zones[i].dir) != 0 ||
        path_join(path, sizeof path, zdir, "/name", NULL) != 0 ||
        read_text(path, name, sizeof name) != 0)
      name[0] = 0;
    const char *shown = name[0] ? name : zones[i].dir;
    int pkg = -1;
    d->pub.kind = kind_of(name, &pkg);
    if (zones[i].sub < 0) {
      d->pub.package = pkg;
      set_str(d->pub.label, sizeof d->pub.label, shown);
    } else {
      /* A sub-zone: name it after its parent, listed just before. */
      const domain *parent = NULL;
      for (int j = i - 1; j >= 0; j--) /* p->d[j] is zones[j] */
        if (zones[j].pkg == zones[i].pkg && zones[j].sub < 0) {
          parent = &p->d[j];
          break;
        }
      char label[sizeof d->pub.label] = "";
      if (parent) {
        d->pub.package = parent->pub.package;
        set_str(label, 24, parent->pub.label);
        size_t n = strlen(label);
        label[n++] = '/';
        set_str(label + n, sizeof label - n, shown);
      } else {
        set_str(label, sizeof label, shown);
      }
      memcpy(d->pub.label, label, sizeof label);
    }
    char buf[32];
    if (path_join(path, sizeof path, zdir, "/max_energy_range_uj", NULL) ||
        read_text(path, buf, sizeof buf) != 0 ||
        parse_u64(buf, &d->max_uj) != 0)
      d->max_uj = 0;
    if (path_join(path, sizeof path, zdir, "/energy_uj", NULL) != 0) {
      energy_uj_fail(d, ENAMETOOLONG);
      continue;
    }
    d->fd = open_file(path);
    if (d->fd < 0) {
      energy_uj_fail(d, errno);
      continue;
    }
    if (read_u64_fd(d->fd, &d->last_raw) != 0) {
      energy_uj_fail(d, errno);
      continue;
    }
    d->pub.available = 1;
    d->prev_ns = pp_collect_power_now_ns();
  }
  return nz;
}

/* ---- perf power PMU ---------------------------------------------------- */

static const struct {
  const char *event;
  const char *suffix; /* label after "package-K" */
  pp_power_kind kind;
} pmu_events[] = {
    {"energy-pkg", "", PP_POWER_PACKAGE},
    {"energy-cores", "/core", PP_POWER_CORE},
    {"energy-gpu", "/uncore", PP_POWER_UNCORE},
    {"energy-ram", "/dram", PP_POWER_DRAM},
    {"energy-psys", NULL, PP_POWER_PSYS},
};

/* "0", "0,28", "0-1": up to max CPUs; returns the count (>= 1). */
static int parse_cpulist(const char *s, int *cpus, int max) {
  int n = 0;
  while (*s && n < max) {
    char *end;
    long a = strtol(s, &end, 10);
    if (end == s || a < 0)
      break;
    long b = a;
    if (*end == '-') {
      const char *t = end + 1;
      b = strtol(t, &end, 10);
      if (end == t || b < a)
        break;
    }
    for (long c = a; c <= b && n < max; c++)
      cpus[n++] = (int)c;
    s = *end == ',' ? end + 1 : end;
    if (*end != ',')
      break;
  }
  if (n == 0)
    cpus[n++] = 0;
  return n;
}

/* Fills p with PMU domains. Returns the number of available ones; -1 when
 * there is no power PMU. *why gets the first failure reason. */
static int discover_pmu(pp_collect_power *p, const char *root, char *why,
                        size_t whylen) {
  char base[4096], path[4300], buf[128];
  uint64_t type;
  if (path_join(base, sizeof base, root,
                "/sys/bus/event_source/devices/power", NULL) != 0 ||
      path_join(path, sizeof path, base, "/type", NULL) != 0 ||
      read_text(path, buf, sizeof buf) != 0 || parse_u64(buf, &type) != 0 ||
      type > UINT32_MAX)
    return -1;
  int cpus[MAX_PMU_CPUS];
  int have_mask = path_join(path, sizeof path, base, "/cpumask", NULL) == 0 &&
                  read_text(path, buf, sizeof buf) == 0;
  int ncpus = parse_cpulist(have_mask ? buf : "", cpus, MAX_PMU_CPUS);
  int paranoid = pp_collect_perf_paranoid();
  int navail = 0, nevents = 0;
  for (size_t e = 0; e < PP__ARRAY_LEN(pmu_events); e++) {
    char sname[32];
    if (path_join(path, sizeof path, base, "/events", pmu_events[e].event) ||
        read_text(path, buf, sizeof buf) != 0)
      continue;
    const char *ev = strstr(buf, "event=");
    if (!ev)
      continue;
    char *end;
    unsigned long long config = strtoull(ev + 6, &end, 0);
    if (end == ev + 6)
      continue;
    nevents++;
    double scale = PMU_DEFAULT_SCALE;
    if (path_join(sname, sizeof sname, pmu_events[e].event, ".scale",
                  NULL) == 0 &&
        path_join(path, sizeof path, base, "/events", sname) == 0 &&
        read_text(path, buf, sizeof buf) == 0) {
      double s = strtod(buf, &end);
      if (end != buf && s > 0)
        scale = s;
    }
    int nc = pmu_events[e].suffix ? ncpus : 1;
    for (int c = 0; c < nc && p->n < PP_POWER_MAX_DOMAINS; c++) {
      domain *d = &p->d[p->n++];
      domain_init(d);
      d->is_perf = 1;
      d->scale = scale;
      d->pub.kind = pmu_events[e].kind;
      if (pmu_events[e].suffix) {
        d->pub.package = c;
        snprintf(d->pub.label, sizeof d->pub.label, "package-%d%s", c,
                 pmu_events[e].suffix);
      } else {
        snprintf(d->pub.label, sizeof d->pub.label, "psys");
      }
      if (ncpus > 1 && pmu_events[e].suffix)
        snprintf(d->pub.zone, sizeof d->pub.zone, "power/%s@cpu%d",
                 pmu_events[e].event, cpus[c]);
      else
        snprintf(d->pub.zone, sizeof d->pub.zone, "power/%s",
                 pmu_events[e].event);
      struct perf_event_attr attr;
      memset(&attr, 0, sizeof attr);
      attr.size = sizeof attr;
      attr.type = (uint32_t)type;
      attr.config = config;
      d->fd = pp_collect_perf_event_open(&attr, -1, cpus[c], -1,
                                         PERF_FLAG_FD_CLOEXEC);
      if (d->fd < 0) {
        char tmp[REASON_LEN], msg[REASON_LEN];
        const char *r =
            pp_collect_perf_strerror(errno, paranoid, tmp, sizeof tmp);
        snprintf(msg, sizeof msg, "perf power PMU: %s", r);
        domain_fail(d, msg);
      } else {
        ssize_t n;
        do
          n = read(d->fd, &d->last_raw, sizeof d->last_raw);
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t)sizeof d->last_raw) {
          domain_fail(d, "perf power PMU: read failed");
        } else {
          d->pub.available = 1;
          d->prev_ns = pp_collect_power_now_ns();
          navail++;
        }
      }
      if (!d->pub.available && why && !why[0])
        snprintf(why, whylen, "%s", d->reason);
    }
  }
  if (nevents == 0 && why && !why[0])
    snprintf(why, whylen, "perf power PMU has no energy events");
  return navail;
}

/* ---- open / read / close ------------------------------------------------ */

static void close_domains(pp_collect_power *p) {
  for (int i = 0; i < p->n; i++)
    if (p->d[i].fd >= 0)
      close(p->d[i].fd);
  p->n = 0;
}

pp_collect_power *pp_collect_power_open(const char *sysroot) {
  pp_collect_power *p = pp__calloc(1, sizeof *p);
  if (!p) {
    errno = ENOMEM;
    return NULL;
  }
  const char *root = sysroot && *sysroot ? sysroot : "";
  if (strcmp(root, "/") == 0)
    root = "";
  int nzones = discover_powercap(p, root);
  int navail = 0;
  const char *first_reason = NULL;
  for (int i = 0; i < p->n; i++) {
    if (p->d[i].pub.available)
      navail++;
    else if (!first_reason)
      first_reason = p->d[i].reason;
  }
  if (navail > 0) {
    p->source = PP_POWER_POWERCAP;
    return p;
  }

  /* Powercap absent or unreadable: try the perf power PMU on its own. */
  pp_collect_power *q = pp__calloc(1, sizeof *q);
  if (!q) {
    close_domains(p);
    pp__free(p);
    errno = ENOMEM;
    return NULL;
  }
  char why[REASON_LEN] = "";
  int npmu = discover_pmu(q, root, why, sizeof why);
  if (npmu > 0) {
    close_domains(p);
    pp__free(p);
    q->source = PP_POWER_PERF_PMU;
    return q;
  }
  close_domains(q);
  pp__free(q);

  p->source = PP_POWER_NONE;
  const char *pmu = npmu < 0 ? "no perf power PMU" : why;
  if (nzones == 0 && npmu < 0)
    snprintf(p->reason, sizeof p->reason,
             "unavailable: no RAPL interface (powercap absent, no perf "
             "power PMU)");
  else if (nzones == 0)
    snprintf(p->reason, sizeof p->reason, "unavailable: powercap absent; %s",
             pmu);
  else
    snprintf(p->reason, sizeof p->reason, "unavailable: %s; %s",
             first_reason ? first_reason : "no readable RAPL zone", pmu);
  return p;
}

pp_power_source pp_collect_power_source(const pp_collect_power *p) {
  return p ? p->source : PP_POWER_NONE;
}

const char *pp_collect_power_reason(const pp_collect_power *p) {
  if (!p)
    return NULL;
  return p->reason[0] ? p->reason : NULL;
}

/* Advance domain d to its current counter. Returns 0 or -1. */
static int domain_update(domain *d) {
  uint64_t raw;
  if (d->is_perf) {
    ssize_t n;
    do
      n = read(d->fd, &raw, sizeof raw);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof raw)
      return -1;
    /* The kernel keeps a 64-bit running total: no wrap to handle. */
    if (raw >= d->last_raw)
      d->total_raw += raw - d->last_raw;
  } else {
    if (read_u64_fd(d->fd, &raw) != 0)
      return -1;
    if (raw >= d->last_raw) {
      d->total_raw += raw - d->last_raw;
    } else {
      /* Wrapped: delta = new + max_energy_range_uj - old. Without a
       * (sane) range, count from zero: a lower bound. */
      d->nwraps++;
      if (d->max_uj >= d->last_raw)
        d->total_raw += d->max_uj - d->last_raw + raw;
      else
        d->total_raw += raw;
    }
  }
  d->last_raw = raw;
  return 0;
}

int pp_collect_power_read_at(pp_collect_power *p, uint64_t now_ns,
                             pp_power_sample *out) {
  if (!p || !out) {
    errno = EINVAL;
    return -1;
  }
  out->source = p->source;
  out->ndomains = p->n;
  out->t_ns = now_ns;
  out->package_energy_j = 0;
  out->has_package_energy = 0;
  out->has_package_power = 0;
  out->package_power_w = 0;
  int navail = 0;
  for (int i = 0; i < p->n; i++) {
    domain *d = &p->d[i];
    pp_power_domain *o = &out->d[i];
    *o = d->pub;
    o->has_power = 0;
    o->power_w = 0;
    if (!d->pub.available) {
      o->energy_j = 0;
      continue;
    }
    navail++;
    int ok = domain_update(d) == 0;
    o->energy_j = d->is_perf ? (double)d->total_raw * d->scale
                             : (double)d->total_raw / 1e6;
    o->nwraps = d->nwraps;
    o->advanced = d->total_raw > 0;
    if (!ok) {
      o->reason = "read failed";
    } else if (now_ns > d->prev_ns) {
      o->has_power = 1;
      o->power_w =
          (o->energy_j - d->prev_j) / ((double)(now_ns - d->prev_ns) / 1e9);
      d->prev_j = o->energy_j;
      d->prev_ns = now_ns;
    }
    if (d->pub.kind == PP_POWER_PACKAGE && o->advanced) {
      out->has_package_energy = 1;
      out->package_energy_j += o->energy_j;
      if (o->has_power) {
        out->has_package_power = 1;
        out->package_power_w += o->power_w;
      }
    }
  }
  return navail;
}

int pp_collect_power_read(pp_collect_power *p, pp_power_sample *out) {
  return pp_collect_power_read_at(p, pp_collect_power_now_ns(), out);
}

const char *pp_collect_power_stuck_reason(const pp_collect_power *p,
                                          double seconds, char *buf,
                                          size_t len) {
  if (!p || p->source == PP_POWER_NONE || !len)
    return NULL;
  const domain *first = NULL;
  int n = 0;
  for (int i = 0; i < p->n; i++) {
    if (!p->d[i].pub.available)
      continue;
    if (p->d[i].total_raw > 0)
      return NULL;
    if (!first)
      first = &p->d[i];
    n++;
  }
  if (!first)
    return NULL;
  snprintf(buf, len,
           "unavailable: %s%s did not advance in %.1f s (a counter that "
           "does not move is not a measurement)",
           first->pub.zone[0] ? first->pub.zone : first->pub.label,
           n > 1 ? " and the other energy counters" : "", seconds);
  return buf;
}

void pp_collect_power_close(pp_collect_power *p) {
  if (!p)
    return;
  close_domains(p);
  pp__free(p);
}
