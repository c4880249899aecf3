/* SPDX-License-Identifier: MIT */
/*
 * NVTX injection: receives the nvtx* calls of an unmodified program (one
 * that includes the header-only NVTX v3 and is run with
 * NVTX_INJECTION64_PATH pointing at libpipeprof.so) and records them as
 * pipeprof zones, ranges, marks and counters. NVTX calls the exported
 * InitializeInjectionNvtx2() once per module that uses it (the executable
 * and each shared object), each time with that module's own function
 * tables; we fill the CORE and CORE2 tables every time and set shared
 * state up once. The few NVTX types we need are declared here (a stable
 * ABI), so the library builds without the CUDA headers. Mapping, naming
 * and limits: docs/internals/nvtx.md.
 *
 * Invariants: push/pop tracking is per thread (one stack of at most
 * NVTX_STACK_CAP entries, each remembering its domain so that levels are
 * per domain, as NVTX specifies) and works whether or not a session runs;
 * domain, category and registered-string objects are never freed, so a
 * handle stays valid for the life of the process; the record path takes no
 * lock and allocates nothing (names longer than NVTX_NAME_CAP bytes are
 * cut at a UTF-8 character boundary).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "core/meta.h"
#include "core/recorder.h"
#include "internal.h"
#include "pipeprof.h"

/* ---- the NVTX ABI (nvToolsExt.h, nvtxDetail/nvtxTypes.h) ---------------- */

enum {
  NVTX_ETID_CALLBACKS = 1,
  NVTX_ETID_VERSIONINFO = 3,
  NVTX_CB_MODULE_CORE = 1,
  NVTX_CB_MODULE_CORE2 = 5
};

enum nvtx_cbid_core {
  CORE_MARK_EX = 1,
  CORE_MARK_A = 2,
  CORE_MARK_W = 3,
  CORE_RANGE_START_EX = 4,
  CORE_RANGE_START_A = 5,
  CORE_RANGE_START_W = 6,
  CORE_RANGE_END = 7,
  CORE_RANGE_PUSH_EX = 8,
  CORE_RANGE_PUSH_A = 9,
  CORE_RANGE_PUSH_W = 10,
  CORE_RANGE_POP = 11,
  CORE_NAME_CATEGORY_A = 12,
  CORE_NAME_CATEGORY_W = 13,
  CORE_NAME_OS_THREAD_A = 14,
  CORE_NAME_OS_THREAD_W = 15
};

enum nvtx_cbid_core2 {
  CORE2_DOMAIN_MARK_EX = 1,
  CORE2_DOMAIN_RANGE_START_EX = 2,
  CORE2_DOMAIN_RANGE_END = 3,
  CORE2_DOMAIN_RANGE_PUSH_EX = 4,
  CORE2_DOMAIN_RANGE_POP = 5,
  CORE2_DOMAIN_NAME_CATEGORY_A = 8,
  CORE2_DOMAIN_NAME_CATEGORY_W = 9,
  CORE2_DOMAIN_REGISTER_STRING_A = 10,
  CORE2_DOMAIN_REGISTER_STRING_W = 11,
  CORE2_DOMAIN_CREATE_A = 12,
  CORE2_DOMAIN_CREATE_W = 13,
  CORE2_DOMAIN_DESTROY = 14
};

enum { NVTX_MSG_ASCII = 1, NVTX_MSG_UNICODE = 2, NVTX_MSG_REGISTERED = 3 };

enum {
  NVTX_PAYLOAD_U64 = 1,
  NVTX_PAYLOAD_I64 = 2,
  NVTX_PAYLOAD_DOUBLE = 3,
  NVTX_PAYLOAD_U32 = 4,
  NVTX_PAYLOAD_I32 = 5,
  NVTX_PAYLOAD_FLOAT = 6
};

#define NVTX_NO_PUSH_POP_TRACKING (-2)

typedef void (*nvtx_fn)(void);
typedef nvtx_fn **nvtx_fn_table;

typedef struct nvtx_callbacks_table {
  size_t struct_size;
  int (*get_module_function_table)(int module, nvtx_fn_table *out_table,
                                   unsigned *out_size);
} nvtx_callbacks_table;

typedef struct nvtx_version_table {
  size_t struct_size;
  uint32_t version;
  uint32_t reserved0;
  void (*set_injection_nvtx_version)(uint32_t version);
} nvtx_version_table;

/* nvtxEventAttributes_t, versions 1 and 2 (same layout). */
typedef struct nvtx_event_attr {
  uint16_t version;
  uint16_t size;
  uint32_t category;
  int32_t color_type;
  uint32_t color;
  int32_t payload_type;
  int32_t reserved0;
  union {
    uint64_t u64;
    int64_t i64;
    double d;
    uint32_t u32;
    int32_t i32;
    float f;
  } payload;
  int32_t message_type;
  union {
    const char *ascii;
    const wchar_t *unicode;
    const void *registered;
  } message;
} nvtx_event_attr;

#if UINTPTR_MAX == UINT64_MAX
_Static_assert(offsetof(nvtx_event_attr, payload) == 24, "NVTX ABI");
_Static_assert(offsetof(nvtx_event_attr, message_type) == 32, "NVTX ABI");
_Static_assert(offsetof(nvtx_event_attr, message) == 40, "NVTX ABI");
_Static_assert(sizeof(nvtx_event_attr) == 48, "NVTX ABI");
#endif

/* Does an attribute struct of the caller's size hold field f? */
#define ATTR_HAS(a, f)                                                         \
  ((size_t)(a)->size >= offsetof(nvtx_event_attr, f) + sizeof((a)->f))

/* ---- our objects behind the NVTX handles -------------------------------- */

#define NVTX_NAME_CAP 512  /* bytes of a composed event name, NUL included */
#define NVTX_STACK_CAP 256 /* push/pop depth tracked per thread */
#define NVTX_STRINGS_MAX 65536u
#define NVTX_STRING_BUCKETS 1024u

typedef struct nvtx_category {
  struct nvtx_category *next; /* immutable once published */
  uint32_t id;
  char name[];
} nvtx_category;

typedef struct nvtx_domain {
  struct nvtx_domain *next;            /* guarded by obj_lock */
  _Atomic(nvtx_category *) categories; /* newest first; readers lock-free */
  const char *name;                    /* "" for the default domain */
  char name_buf[];
} nvtx_domain;

typedef struct nvtx_string {
  struct nvtx_string *next; /* hash chain, guarded by obj_lock */
  const nvtx_domain *domain;
  uint64_t hash;
  /* Interned zone site for "<domain>::<text>", set on the first push
   * without a category: later pushes skip composing and hashing. */
  _Atomic(const pp_srcloc *) zone_loc;
  char text[];
} nvtx_string;

static nvtx_domain default_domain = {NULL, NULL, ""};
static nvtx_domain *domains; /* created ones, guarded by obj_lock */
static nvtx_string *string_tab[NVTX_STRING_BUCKETS];
static unsigned string_count;
static pthread_mutex_t obj_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static pthread_key_t stack_key; /* frees a thread's push/pop stack */
static int stack_key_ok;

/* The domain object a handle stands for; NULL is the default domain. */
static nvtx_domain *dom_of(const void *handle) {
  return handle ? (nvtx_domain *)handle : &default_domain;
}

/* ---- strings ------------------------------------------------------------ */

/* Append up to n bytes of s to buf (length *len, capacity cap), keeping
 * the result NUL-terminated and never cutting a UTF-8 sequence. */
static void append(char *buf, size_t *len, size_t cap, const char *s,
                   size_t n) {
  size_t room = cap - 1 - *len;
  if (n > room) {
    n = room;
    while (n > 0 && ((unsigned char)s[n] & 0xC0u) == 0x80u)
      n--; /* s[n] continues a character: cut before that character */
  }
  memcpy(buf + *len, s, n);
  *len += n;
  buf[*len] = '\0';
}

/* Append w, UTF-32 (Linux wchar_t), as UTF-8 to buf as append() does;
 * invalid code points become U+FFFD. */
static void append_wide(char *buf, size_t *len, size_t cap, const wchar_t *w) {
  for (; w && *w; w++) {
    uint32_t c = (uint32_t)*w;
    char enc[4];
    size_t n;
    if (c > 0x10FFFFu || (c >= 0xD800u && c <= 0xDFFFu))
      c = 0xFFFDu;
    if (c < 0x80u) {
      enc[0] = (char)c;
      n = 1;
    } else if (c < 0x800u) {
      enc[0] = (char)(0xC0u | (c >> 6));
      enc[1] = (char)(0x80u | (c & 0x3Fu));
      n = 2;
    } else if (c < 0x10000u) {
      enc[0] = (char)(0xE0u | (c >> 12));
      enc[1] = (char)(0x80u | ((c >> 6) & 0x3Fu));
      enc[2] = (char)(0x80u | (c & 0x3Fu));
      n = 3;
    } else {
      enc[0] = (char)(0xF0u | (c >> 18));
      enc[1] = (char)(0x80u | ((c >> 12) & 0x3Fu));
      enc[2] = (char)(0x80u | ((c >> 6) & 0x3Fu));
      enc[3] = (char)(0x80u | (c & 0x3Fu));
      n = 4;
    }
    if (*len + n > cap - 1)
      break;
    memcpy(buf + *len, enc, n);
    *len += n;
  }
  buf[*len] = '\0';
}

/* w as UTF-8 in out[cap] (NUL-terminated, cut at a character boundary). */
static const char *wide_to_utf8(const wchar_t *w, char *out, size_t cap) {
  size_t len = 0;
  append_wide(out, &len, cap, w);
  return out;
}

static uint64_t str_hash(const void *domain, const char *s) {
  uint64_t h = 1469598103934665603ULL ^ (uint64_t)(uintptr_t)domain;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    h = (h ^ *p) * 1099511628211ULL;
  return h;
}

/* ---- shared state: domains, categories, registered strings -------------- */

static void stack_free(void *p);

static void setup(void) {
  stack_key_ok = pthread_key_create(&stack_key, stack_free) == 0;
  /* Say in the trace that NVTX was hooked (when a session runs). */
  if (pp_is_running())
    (void)pp__session_meta("nvtx.injection", "1");
}

static nvtx_domain *domain_create(const char *name) {
  if (!name)
    name = "";
  nvtx_domain *d;
  pthread_mutex_lock(&obj_lock);
  for (d = domains; d; d = d->next)
    if (strcmp(d->name, name) == 0)
      break;
  if (!d) {
    size_t len = strlen(name);
    d = pp__malloc(sizeof *d + len + 1);
    if (d) {
      memcpy(d->name_buf, name, len + 1);
      d->name = d->name_buf;
      atomic_init(&d->categories, NULL);
      d->next = domains;
      domains = d;
    }
  }
  pthread_mutex_unlock(&obj_lock);
  return d; /* NULL (the default domain) when out of memory */
}

static const char *category_find(const nvtx_domain *d, uint32_t id);

static void category_name(nvtx_domain *d, uint32_t id, const char *name) {
  const char *old = name ? category_find(d, id) : NULL;
  if (!name || (old && strcmp(old, name) == 0))
    return; /* a repeated naming costs no memory */
  size_t len = strlen(name);
  nvtx_category *c = pp__malloc(sizeof *c + len + 1);
  if (!c)
    return;
  c->id = id;
  memcpy(c->name, name, len + 1);
  pthread_mutex_lock(&obj_lock);
  c->next = atomic_load_explicit(&d->categories, memory_order_relaxed);
  atomic_store_explicit(&d->categories, c, memory_order_release);
  pthread_mutex_unlock(&obj_lock);
}

static const char *category_find(const nvtx_domain *d, uint32_t id) {
  const nvtx_category *c =
      atomic_load_explicit(&d->categories, memory_order_acquire);
  for (; c; c = c->next)
    if (c->id == id)
      return c->name;
  return NULL;
}

static const nvtx_string *string_register(const void *handle, const char *s) {
  if (!s)
    return NULL;
  const nvtx_domain *d = dom_of(handle);
  uint64_t h = str_hash(d, s);
  unsigned b = (unsigned)(h % NVTX_STRING_BUCKETS);
  nvtx_string *e;
  pthread_mutex_lock(&obj_lock);
  for (e = string_tab[b]; e; e = e->next)
    if (e->hash == h && e->domain == d && strcmp(e->text, s) == 0)
      break;
  if (!e && string_count < NVTX_STRINGS_MAX) {
    size_t len = strlen(s);
    e = pp__malloc(sizeof *e + len + 1);
    if (e) {
      memcpy(e->text, s, len + 1);
      e->domain = d;
      e->hash = h;
      atomic_init(&e->zone_loc, NULL);
      e->next = string_tab[b];
      string_tab[b] = e;
      string_count++;
    }
  }
  pthread_mutex_unlock(&obj_lock);
  return e; /* NULL: events using it get the name "(unnamed)" */
}

/* ---- event names -------------------------------------------------------- */

/* What an NVTX event carries, after reading the attribute struct. */
typedef struct nvtx_ev {
  const nvtx_domain *domain; /* never NULL */
  uint32_t category;
  int message_type;
  const void *message;
  int payload_type; /* 0: none */
  double payload;
} nvtx_ev;

static void ev_from_attr(nvtx_ev *e, const void *domain,
                         const nvtx_event_attr *a) {
  memset(e, 0, sizeof *e);
  e->domain = dom_of(domain);
  if (!a || a->version < 1)
    return;
  if (ATTR_HAS(a, category))
    e->category = a->category;
  if (ATTR_HAS(a, payload_type) && ATTR_HAS(a, payload)) {
    e->payload_type = a->payload_type;
    switch (a->payload_type) {
    case NVTX_PAYLOAD_U64:
      e->payload = (double)a->payload.u64;
      break;
    case NVTX_PAYLOAD_I64:
      e->payload = (double)a->payload.i64;
      break;
    case NVTX_PAYLOAD_DOUBLE:
      e->payload = a->payload.d;
      break;
    case NVTX_PAYLOAD_U32:
      e->payload = (double)a->payload.u32;
      break;
    case NVTX_PAYLOAD_I32:
      e->payload = (double)a->payload.i32;
      break;
    case NVTX_PAYLOAD_FLOAT:
      e->payload = (double)a->payload.f;
      break;
    default:
      e->payload_type = 0;
      break;
    }
  }
  if (ATTR_HAS(a, message_type) && ATTR_HAS(a, message)) {
    e->message_type = a->message_type;
    e->message = a->message.registered;
  }
}

static void ev_simple(nvtx_ev *e, int type, const void *msg) {
  memset(e, 0, sizeof *e);
  e->domain = &default_domain;
  e->message_type = type;
  e->message = msg;
}

/* The pipeprof name of an event: "<domain>::<category>/<message>", each
 * prefix only when there is one. Returns the message itself when nothing
 * needs composing, else buf (NVTX_NAME_CAP bytes). */
static const char *ev_name(const nvtx_ev *e, char *buf) {
  const char *msg = NULL;
  int wide = e->message_type == NVTX_MSG_UNICODE && e->message;
  if (e->message_type == NVTX_MSG_ASCII)
    msg = e->message;
  else if (e->message_type == NVTX_MSG_REGISTERED && e->message)
    msg = ((const nvtx_string *)e->message)->text;
  if (!msg && !wide)
    msg = "(unnamed)";
  const char *cat = e->category ? category_find(e->domain, e->category) : NULL;
  if (!e->domain->name[0] && !cat && !wide)
    return msg;
  size_t len = 0;
  buf[0] = '\0';
  if (e->domain->name[0]) {
    append(buf, &len, NVTX_NAME_CAP, e->domain->name, strlen(e->domain->name));
    append(buf, &len, NVTX_NAME_CAP, "::", 2);
  }
  if (cat) {
    append(buf, &len, NVTX_NAME_CAP, cat, strlen(cat));
    append(buf, &len, NVTX_NAME_CAP, "/", 1);
  }
  if (wide)
    append_wide(buf, &len, NVTX_NAME_CAP, e->message);
  else
    append(buf, &len, NVTX_NAME_CAP, msg, strlen(msg));
  return buf;
}

static void ev_payload(const nvtx_ev *e, const char *name) {
  if (!e->payload_type)
    return;
  char buf[NVTX_NAME_CAP + 8];
  size_t len = 0;
  buf[0] = '\0';
  append(buf, &len, NVTX_NAME_CAP, name, strlen(name));
  append(buf, &len, sizeof buf, ".payload", 8);
  pp_counter_setf(buf, e->payload);
}

/* ---- marks and start/end ranges ----------------------------------------- */

static void do_mark(const nvtx_ev *e) {
  if (!PP__ACTIVE())
    return;
  char buf[NVTX_NAME_CAP];
  const char *name = ev_name(e, buf);
  pp_mark(name);
  ev_payload(e, name);
}

static uint64_t do_range_start(const nvtx_ev *e) {
  if (!PP__ACTIVE())
    return 0;
  char buf[NVTX_NAME_CAP];
  const char *name = ev_name(e, buf);
  uint64_t id = pp_range_start(name);
  ev_payload(e, name);
  return id;
}

/* ---- push/pop: per-thread stack, levels per domain ---------------------- */

typedef struct nvtx_frame {
  pp_zone zone;
  const nvtx_domain *domain;
} nvtx_frame;

/* A thread's push/pop stack, allocated on its first push (the library's
 * static TLS must stay small: it is dlopened) and freed at thread exit. */
typedef struct nvtx_stack {
  unsigned n;
  unsigned over; /* pushes not tracked (past the cap, or no memory) */
  nvtx_frame frames[NVTX_STACK_CAP];
  uint16_t levels[NVTX_STACK_CAP];
} nvtx_stack;

static __thread nvtx_stack *tls_stack
    __attribute__((tls_model("initial-exec")));
static __thread unsigned tls_untracked /* pushes made without a stack */
    __attribute__((tls_model("initial-exec")));
static void stack_free(void *p) {
  tls_stack = NULL; /* runs on the exiting thread */
  pp__free(p);
}

static nvtx_stack *stack_get(void) {
  nvtx_stack *st = tls_stack;
  if (pp__likely(st != NULL))
    return st;
  if (!stack_key_ok)
    return NULL;
  st = pp__calloc(1, sizeof *st);
  if (!st)
    return NULL;
  if (pthread_setspecific(stack_key, st) != 0) {
    pp__free(st);
    return NULL;
  }
  return tls_stack = st;
}

static int do_push(const nvtx_ev *e) {
  nvtx_stack *st = stack_get();
  if (!st || st->n == NVTX_STACK_CAP) {
    if (st)
      st->over++;
    else
      tls_untracked++;
    return -1;
  }
  int level = 0;
  for (unsigned i = st->n; i-- > 0;)
    if (st->frames[i].domain == e->domain) {
      level = st->levels[i] + 1;
      break;
    }
  pp_zone z = {NULL};
  if (PP__ACTIVE()) {
    if (e->message_type == NVTX_MSG_REGISTERED && e->message && !e->category &&
        ((const nvtx_string *)e->message)->domain == e->domain) {
      nvtx_string *s = (nvtx_string *)e->message;
      const pp_srcloc *loc =
          atomic_load_explicit(&s->zone_loc, memory_order_acquire);
      if (pp__unlikely(!loc)) {
        char buf[NVTX_NAME_CAP];
        loc = pp__intern(ev_name(e, buf), PP_KIND_ZONE);
        atomic_store_explicit(&s->zone_loc, loc, memory_order_release);
      }
      z = pp_zone_begin(loc);
      ev_payload(e, loc->name);
    } else {
      char buf[NVTX_NAME_CAP];
      const char *name = ev_name(e, buf);
      z = pp_zone_begin_name(name);
      ev_payload(e, name);
    }
  }
  st->frames[st->n] = (nvtx_frame){z, e->domain};
  st->levels[st->n] = (uint16_t)level;
  st->n++;
  return level;
}

static int do_pop(const nvtx_domain *d) {
  nvtx_stack *st = tls_stack;
  if (pp__unlikely(!st)) {
    if (tls_untracked)
      tls_untracked--;
    return -1;
  }
  if (st->over) {
    st->over--;
    return -1;
  }
  unsigned i = st->n;
  while (i > 0 && st->frames[i - 1].domain != d)
    i--;
  if (i == 0)
    return -1; /* nothing pushed in this domain on this thread */
  i--;
  int level = st->levels[i];
  /* Popping below the top only happens when domains interleave without
   * nesting; the zone ends now (docs/internals/nvtx.md). */
  if (st->frames[i].zone.loc) /* pp_zone_end reads the clock first */
    pp_zone_end(st->frames[i].zone);
  unsigned above = st->n - i - 1;
  if (pp__unlikely(above)) {
    memmove(&st->frames[i], &st->frames[i + 1], above * sizeof st->frames[0]);
    memmove(&st->levels[i], &st->levels[i + 1], above * sizeof st->levels[0]);
  }
  st->n--;
  return level;
}

/* ---- CORE callbacks ----------------------------------------------------- */

static void cb_mark_ex(const nvtx_event_attr *a) {
  nvtx_ev e;
  ev_from_attr(&e, NULL, a);
  do_mark(&e);
}
static void cb_mark_a(const char *m) {
  nvtx_ev e;
  ev_simple(&e, NVTX_MSG_ASCII, m);
  do_mark(&e);
}
static void cb_mark_w(const wchar_t *m) {
  nvtx_ev e;
  ev_simple(&e, NVTX_MSG_UNICODE, m);
  do_mark(&e);
}
static uint64_t cb_range_start_ex(const nvtx_event_attr *a) {
  nvtx_ev e;
  ev_from_attr(&e, NULL, a);
  return do_range_start(&e);
}
static uint64_t cb_range_start_a(const char *m) {
  nvtx_ev e;
  ev_simple(&e, NVTX_MSG_ASCII, m);
  return do_range_start(&e);
}
static uint64_t cb_range_start_w(const wchar_t *m) {
  nvtx_ev e;
  ev_simple(&e, NVTX_MSG_UNICODE, m);
  return do_range_start(&e);
}
static void cb_range_end(uint64_t id) { pp_range_end(id); }
static int cb_range_push_ex(const nvtx_event_attr *a) {
  nvtx_ev e;
  ev_from_attr(&e, NULL, a);
  return do_push(&e);
}
static int cb_range_push_a(const char *m) {
  nvtx_ev e;
  ev_simple(&e, NVTX_MSG_ASCII, m);
  return do_push(&e);
}
static int cb_range_push_w(const wchar_t *m) {
  nvtx_ev e;
  ev_simple(&e, NVTX_MSG_UNICODE, m);
  return do_push(&e);
}
static int cb_range_pop(void) { return do_pop(&default_domain); }
static void cb_name_category_a(uint32_t id, const char *name) {
  category_name(&default_domain, id, name);
}
static void cb_name_category_w(uint32_t id, const wchar_t *name) {
  char buf[NVTX_NAME_CAP];
  if (name)
    category_name(&default_domain, id, wide_to_utf8(name, buf, sizeof buf));
}
static void cb_name_os_thread_a(uint32_t tid, const char *name) {
  if (name)
    pp__thread_name_tid(tid, name);
}
static void cb_name_os_thread_w(uint32_t tid, const wchar_t *name) {
  char buf[NVTX_NAME_CAP];
  if (name)
    pp__thread_name_tid(tid, wide_to_utf8(name, buf, sizeof buf));
}

/* ---- CORE2 callbacks (domains) ------------------------------------------ */

static void cb_domain_mark_ex(const void *d, const nvtx_event_attr *a) {
  nvtx_ev e;
  ev_from_attr(&e, d, a);
  do_mark(&e);
}
static uint64_t cb_domain_range_start_ex(const void *d,
                                         const nvtx_event_attr *a) {
  nvtx_ev e;
  ev_from_attr(&e, d, a);
  return do_range_start(&e);
}
static void cb_domain_range_end(const void *d, uint64_t id) {
  pp_range_end(id);
}
static int cb_domain_range_push_ex(const void *d, const nvtx_event_attr *a) {
  nvtx_ev e;
  ev_from_attr(&e, d, a);
  return do_push(&e);
}
static int cb_domain_range_pop(const void *d) { return do_pop(dom_of(d)); }
static void cb_domain_name_category_a(const void *d, uint32_t id,
                                      const char *name) {
  category_name(dom_of(d), id, name);
}
static void cb_domain_name_category_w(const void *d, uint32_t id,
                                      const wchar_t *name) {
  char buf[NVTX_NAME_CAP];
  if (name)
    category_name(dom_of(d), id, wide_to_utf8(name, buf, sizeof buf));
}
static const void *cb_domain_register_string_a(const void *d, const char *s) {
  return string_register(d, s);
}
static const void *cb_domain_register_string_w(const void *d,
                                               const wchar_t *s) {
  char buf[NVTX_NAME_CAP];
  return s ? string_register(d, wide_to_utf8(s, buf, sizeof buf)) : NULL;
}
static void *cb_domain_create_a(const char *name) {
  return domain_create(name);
}
static void *cb_domain_create_w(const wchar_t *name) {
  char buf[NVTX_NAME_CAP];
  return domain_create(name ? wide_to_utf8(name, buf, sizeof buf) : NULL);
}
static void cb_domain_destroy(void *d) {
  /* Kept: events already recorded and handles still held may refer to it,
   * and a later nvtxDomainCreate of the same name gets it back. */
}

/* ---- the injection entry point ------------------------------------------ */

typedef struct nvtx_slot {
  unsigned id;
  nvtx_fn fn;
} nvtx_slot;

#define SLOT(id, f)                                                            \
  { (id), (nvtx_fn)(f) }

static const nvtx_slot core_slots[] = {
    SLOT(CORE_MARK_EX, cb_mark_ex),
    SLOT(CORE_MARK_A, cb_mark_a),
    SLOT(CORE_MARK_W, cb_mark_w),
    SLOT(CORE_RANGE_START_EX, cb_range_start_ex),
    SLOT(CORE_RANGE_START_A, cb_range_start_a),
    SLOT(CORE_RANGE_START_W, cb_range_start_w),
    SLOT(CORE_RANGE_END, cb_range_end),
    SLOT(CORE_RANGE_PUSH_EX, cb_range_push_ex),
    SLOT(CORE_RANGE_PUSH_A, cb_range_push_a),
    SLOT(CORE_RANGE_PUSH_W, cb_range_push_w),
    SLOT(CORE_RANGE_POP, cb_range_pop),
    SLOT(CORE_NAME_CATEGORY_A, cb_name_category_a),
    SLOT(CORE_NAME_CATEGORY_W, cb_name_category_w),
    SLOT(CORE_NAME_OS_THREAD_A, cb_name_os_thread_a),
    SLOT(CORE_NAME_OS_THREAD_W, cb_name_os_thread_w),
};

static const nvtx_slot core2_slots[] = {
    SLOT(CORE2_DOMAIN_MARK_EX, cb_domain_mark_ex),
    SLOT(CORE2_DOMAIN_RANGE_START_EX, cb_domain_range_start_ex),
    SLOT(CORE2_DOMAIN_RANGE_END, cb_domain_range_end),
    SLOT(CORE2_DOMAIN_RANGE_PUSH_EX, cb_domain_range_push_ex),
    SLOT(CORE2_DOMAIN_RANGE_POP, cb_domain_range_pop),
    SLOT(CORE2_DOMAIN_NAME_CATEGORY_A, cb_domain_name_category_a),
    SLOT(CORE2_DOMAIN_NAME_CATEGORY_W, cb_domain_name_category_w),
    SLOT(CORE2_DOMAIN_REGISTER_STRING_A, cb_domain_register_string_a),
    SLOT(CORE2_DOMAIN_REGISTER_STRING_W, cb_domain_register_string_w),
    SLOT(CORE2_DOMAIN_CREATE_A, cb_domain_create_a),
    SLOT(CORE2_DOMAIN_CREATE_W, cb_domain_create_w),
    SLOT(CORE2_DOMAIN_DESTROY, cb_domain_destroy),
};

/* Fill one module's table; returns the number of slots set. */
static unsigned fill(const nvtx_callbacks_table *cb, int module,
                     const nvtx_slot *slots, size_t n) {
  nvtx_fn_table table = NULL;
  unsigned size = 0;
  if (!cb->get_module_function_table(module, &table, &size) || !table)
    return 0;
  unsigned set = 0;
  for (size_t i = 0; i < n; i++) {
    /* size counts the valid ids 0..size-1 (0 is invalid) */
    if (slots[i].id >= size || !table[slots[i].id])
      continue;
    *table[slots[i].id] = slots[i].fn;
    set++;
  }
  return set;
}

PP_API int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t));

int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t)) {
  if (!get_export_table)
    return 0;
  pthread_once(&setup_once, setup);
  const nvtx_callbacks_table *cb = get_export_table(NVTX_ETID_CALLBACKS);
  if (!cb || cb->struct_size < sizeof *cb || !cb->get_module_function_table)
    return 0;
  unsigned set =
      fill(cb, NVTX_CB_MODULE_CORE, core_slots, PP__ARRAY_LEN(core_slots));
  set +=
      fill(cb, NVTX_CB_MODULE_CORE2, core2_slots, PP__ARRAY_LEN(core2_slots));
  if (!set)
    return 0;
  const nvtx_version_table *vi = get_export_table(NVTX_ETID_VERSIONINFO);
  if (vi && vi->struct_size >= sizeof *vi && vi->set_injection_nvtx_version)
    vi->set_injection_nvtx_version(3);
  return 1;
}
