/* SPDX-License-Identifier: MIT */
/*
 * Addresses to function names with elfutils' libdw (symbols.h): one Dwfl
 * session per process, each mapped file reported once at its load bias,
 * names from .symtab or .dynsym and from separate debug files found the
 * standard ways (build id, debuglink).
 */
#include "symbols.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/stacks.h"
#include "../internal.h"

#ifdef PP_HAVE_LIBDW
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

/* The sample being unwound (pp_symbols_unwind): what the libdw callbacks
 * read. */
typedef struct unwind_ctx {
  const uint64_t *regs;
  const unsigned char *stack;
  size_t stack_len;
  uint64_t *ips;
  int n, max;
} unwind_ctx;

typedef struct proc_syms {
  uint32_t pid;
  Dwfl *dwfl;
  char **paths;   /* files reported */
  uint64_t *bias; /* each one's load bias; UINT64_MAX: not an ELF file */
  size_t npaths, paths_cap, bias_cap;
  int attached; /* dwfl_attach_state done (-1: failed) */
  unwind_ctx *cur;
  /* names already looked up: libdw searches a module's symbols one by
   * one, and a hot loop's addresses come back at every sample */
  struct name_ent {
    uint64_t key; /* the address looked up, + 1; 0: empty */
    const char *name, *module;
  } * names;
  size_t nnames, names_cap; /* a power of two, at most NAMES_MAX */
} proc_syms;

#define NAMES_MAX 65536u

/* C++ names as people read them ("at::native::im2col<float>(...)"), from
 * the C++ runtime's demangler (libstdc++, the ABI's __cxa_demangle). */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len,
                            int *status);

struct pp_symbols {
  proc_syms *procs;
  size_t nprocs, procs_cap;
  /* mangled name -> demangled (owned, malloc'd by the demangler), open
   * addressing; at most DEMANGLED_MAX, then names stay mangled */
  struct demangled {
    char *mangled, *plain;
  } * dm;
  size_t ndm, dm_cap;
};

#define DEMANGLED_MAX 262144u

static char *debuginfo_path;
static const Dwfl_Callbacks offline_cb = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

pp_symbols *pp_symbols_new(char *why, size_t why_len) {
  if (why && why_len)
    why[0] = '\0';
  if (elf_version(EV_CURRENT) == EV_NONE) {
    if (why && why_len)
      snprintf(why, why_len, "unavailable: libelf: %s", elf_errmsg(-1));
    return NULL;
  }
  return pp__calloc(1, sizeof(pp_symbols));
}

static proc_syms *proc_of(pp_symbols *y, uint32_t pid, int make) {
  for (size_t i = 0; i < y->nprocs; i++)
    if (y->procs[i].pid == pid)
      return &y->procs[i];
  if (!make || pp__grow((void **)&y->procs, &y->procs_cap, y->nprocs + 1,
                        sizeof *y->procs))
    return NULL;
  proc_syms *p = &y->procs[y->nprocs];
  memset(p, 0, sizeof *p);
  p->pid = pid;
  p->dwfl = dwfl_begin(&offline_cb);
  if (!p->dwfl)
    return NULL;
  y->nprocs++;
  return p;
}

/* The load bias of path mapped at start from file offset pgoff: the
 * address minus the ELF virtual address of the same byte, from the
 * PT_LOAD segment holding that offset. 0 with *ok 0 when not an ELF file
 * or no segment holds it. */
static uint64_t load_bias(const char *path, uint64_t start, uint64_t pgoff,
                          int *ok) {
  *ok = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  uint64_t bias = 0;
  Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
  size_t n = 0;
  if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &n) == 0) {
    for (size_t i = 0; i < n; i++) {
      GElf_Phdr ph;
      if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
        continue;
      /* the kernel maps whole pages: the segment's page-aligned start */
      uint64_t align = ph.p_align > 1 ? ph.p_align : 1;
      uint64_t off = ph.p_offset & ~(align - 1);
      if (pgoff < off || pgoff >= ph.p_offset + ph.p_filesz)
        continue;
      uint64_t vaddr = ph.p_vaddr - (ph.p_offset - off);
      bias = start - pgoff + off - vaddr;
      *ok = 1;
      break;
    }
  }
  if (e)
    elf_end(e);
  close(fd);
  return bias;
}

/* Report path at bias in p (once per path). */
static int report(proc_syms *p, const char *path, uint64_t bias) {
  for (size_t i = 0; i < p->npaths; i++)
    if (strcmp(p->paths[i], path) == 0)
      return 0;
  if (pp__grow((void **)&p->paths, &p->paths_cap, p->npaths + 1,
               sizeof *p->paths) ||
      pp__grow((void **)&p->bias, &p->bias_cap, p->npaths + 1, sizeof *p->bias))
    return -1;
  char *copy = pp__strdup(path);
  if (!copy)
    return -1;
  p->paths[p->npaths] = copy;
  p->bias[p->npaths++] = bias;
  if (bias == UINT64_MAX)
    return 0;
  const char *base = strrchr(path, '/');
  dwfl_report_begin_add(p->dwfl);
  dwfl_report_elf(p->dwfl, base ? base + 1 : path, path, -1, bias, false);
  dwfl_report_end(p->dwfl, NULL, NULL);
  return 0;
}

int pp_symbols_map(pp_symbols *y, uint32_t pid, uint64_t start, uint64_t len,
                   uint64_t pgoff, const char *path) {
  (void)len;
  if (!y || !path || path[0] != '/')
    return 0; /* anonymous, [vdso], memfd: nothing to read names from */
  proc_syms *p = proc_of(y, pid, 1);
  if (!p)
    return -1;
  for (size_t i = 0; i < p->npaths; i++)
    if (strcmp(p->paths[i], path) == 0)
      return 0;
  int ok;
  uint64_t bias = load_bias(path, start, pgoff, &ok);
  return report(p, path, ok ? bias : UINT64_MAX);
}

static void proc_clear(proc_syms *p) {
  if (p->names)
    memset(p->names, 0, p->names_cap * sizeof *p->names);
  p->nnames = 0;
  dwfl_end(p->dwfl);
  for (size_t k = 0; k < p->npaths; k++)
    pp__free(p->paths[k]);
  p->npaths = 0;
  p->attached = 0;
  p->dwfl = dwfl_begin(&offline_cb);
}

int pp_symbols_fork(pp_symbols *y, uint32_t pid, uint32_t ppid) {
  if (!y)
    return 0;
  proc_syms *parent = proc_of(y, ppid, 0);
  if (!parent)
    return 0;
  size_t at = (size_t)(parent - y->procs);
  proc_syms *p = proc_of(y, pid, 1); /* may move y->procs */
  if (!p)
    return -1;
  parent = &y->procs[at];
  if (p->npaths)
    proc_clear(p); /* a pid used again */
  if (!p->dwfl)
    return -1;
  for (size_t i = 0; i < parent->npaths; i++)
    if (report(p, parent->paths[i], parent->bias[i]))
      return -1;
  return 0;
}

void pp_symbols_exec(pp_symbols *y, uint32_t pid) {
  proc_syms *p = y ? proc_of(y, pid, 0) : NULL;
  if (p)
    proc_clear(p);
}

/* The cache slot of address a (key a + 1) in p: its entry, or the empty
 * slot to fill; NULL when there is no table. */
static struct name_ent *name_slot(proc_syms *p, uint64_t a) {
  if (!p->names_cap)
    return NULL;
  size_t mask = p->names_cap - 1;
  size_t k = (size_t)((a * 0x9E3779B97F4A7C15ull) >> 20) & mask;
  while (p->names[k].key && p->names[k].key != a + 1)
    k = (k + 1) & mask;
  return &p->names[k];
}

/* Room for one more name: the table doubles up to NAMES_MAX, then starts
 * over empty. */
static void name_room(proc_syms *p) {
  if ((p->nnames + 1) * 2 <= p->names_cap)
    return;
  size_t cap = p->names_cap ? p->names_cap * 2 : 1024;
  if (cap > NAMES_MAX) {
    memset(p->names, 0, p->names_cap * sizeof *p->names);
    p->nnames = 0;
    return;
  }
  struct name_ent *old = p->names;
  size_t old_cap = p->names_cap;
  struct name_ent *n = pp__calloc(cap, sizeof *n);
  if (!n)
    return; /* looked up again next time */
  p->names = n;
  p->names_cap = cap;
  p->nnames = 0;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i].key) {
      *name_slot(p, old[i].key - 1) = old[i];
      p->nnames++;
    }
  pp__free(old);
}

static size_t str_hash(const char *s) {
  uint64_t h = 1469598103934665603ULL;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return (size_t)(h ^ (h >> 29));
}

/* name, demangled when it is a C++ symbol ("_Z..."); stays valid until
 * pp_symbols_free. */
static const char *demangle(pp_symbols *y, const char *name) {
  if (!name || name[0] != '_' || name[1] != 'Z')
    return name;
  if ((y->ndm + 1) * 2 > y->dm_cap) {
    size_t cap = y->dm_cap ? y->dm_cap * 2 : 1024;
    if (cap > 2 * DEMANGLED_MAX)
      return name;
    struct demangled *n = pp__calloc(cap, sizeof *n);
    if (!n)
      return name;
    for (size_t i = 0; i < y->dm_cap; i++) {
      if (!y->dm[i].mangled)
        continue;
      size_t k = str_hash(y->dm[i].mangled) & (cap - 1);
      while (n[k].mangled)
        k = (k + 1) & (cap - 1);
      n[k] = y->dm[i];
    }
    pp__free(y->dm);
    y->dm = n;
    y->dm_cap = cap;
  }
  size_t k = str_hash(name) & (y->dm_cap - 1);
  for (; y->dm[k].mangled; k = (k + 1) & (y->dm_cap - 1))
    if (strcmp(y->dm[k].mangled, name) == 0)
      return y->dm[k].plain ? y->dm[k].plain : y->dm[k].mangled;
  int status = -1;
  char *plain = __cxa_demangle(name, NULL, NULL, &status);
  if (status != 0) {
    free(plain);
    plain = NULL; /* not a name the demangler knows: kept as it is */
  }
  char *copy = pp__strdup(name);
  if (!copy) {
    free(plain);
    return name;
  }
  y->dm[k].mangled = copy;
  y->dm[k].plain = plain;
  y->ndm++;
  return plain ? plain : copy;
}

const char *pp_symbols_name(pp_symbols *y, uint32_t pid, uint64_t ip,
                            int is_return, const char **module) {
  if (module)
    *module = NULL;
  proc_syms *p = y ? proc_of(y, pid, 0) : NULL;
  if (!p || !ip)
    return NULL;
  Dwarf_Addr a = is_return ? ip - 1 : ip;
  struct name_ent *e = name_slot(p, a);
  if (e && e->key) {
    if (module)
      *module = e->module;
    return e->name;
  }
  Dwfl_Module *m = dwfl_addrmodule(p->dwfl, a);
  const char *mod =
      m ? dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, NULL, NULL) : NULL;
  const char *name = m ? demangle(y, dwfl_module_addrname(m, a)) : NULL;
  name_room(p);
  e = name_slot(p, a);
  if (e && !e->key && p->nnames + 1 <= p->names_cap / 2) {
    *e = (struct name_ent){a + 1, name, mod};
    p->nnames++;
  }
  if (module)
    *module = mod;
  return name;
}

/* ---- unwinding from a copied stack ---- */

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg) {
  if (*thread_arg)
    return 0; /* one thread: the sample's */
  *thread_arg = arg;
  return dwfl_pid(dwfl);
}

/* Stack memory comes from the copy only: an address outside it ends the
 * walk there. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
                        void *arg) {
  (void)dwfl;
  const proc_syms *p = arg;
  const unwind_ctx *u = p->cur;
  uint64_t sp = u->regs[PP_STACK_REG_SP];
  if (addr < sp || addr - sp > u->stack_len ||
      u->stack_len - (addr - sp) < sizeof *result)
    return false;
  memcpy(result, u->stack + (addr - sp), sizeof *result);
  return true;
}

/* x86-64 DWARF register numbers 0-16: rax, rdx, rcx, rbx, rsi, rdi, rbp,
 * rsp, r8-r15, rip. */
static bool set_initial_registers(Dwfl_Thread *thread, void *arg) {
  const proc_syms *p = arg;
  const uint64_t *r = p->cur->regs;
  static const int order[17] = {
      PP_STACK_REG_AX,  PP_STACK_REG_DX,  PP_STACK_REG_CX,  PP_STACK_REG_BX,
      PP_STACK_REG_SI,  PP_STACK_REG_DI,  PP_STACK_REG_BP,  PP_STACK_REG_SP,
      PP_STACK_REG_R8,  PP_STACK_REG_R9,  PP_STACK_REG_R10, PP_STACK_REG_R11,
      PP_STACK_REG_R12, PP_STACK_REG_R13, PP_STACK_REG_R14, PP_STACK_REG_R15,
      PP_STACK_REG_IP};
  Dwarf_Word w[17];
  for (int i = 0; i < 17; i++)
    w[i] = r[order[i]];
  return dwfl_thread_state_registers(thread, 0, 17, w);
}

static const Dwfl_Thread_Callbacks thread_cb = {
    .next_thread = next_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

static int on_frame(Dwfl_Frame *state, void *arg) {
  unwind_ctx *u = arg;
  Dwarf_Addr pc;
  bool activation = false;
  if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
    return DWARF_CB_ABORT;
  u->ips[u->n++] = pc;
  return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int pp_symbols_unwind(pp_symbols *y, uint32_t pid, const uint64_t *regs,
                      const unsigned char *stack, size_t stack_len,
                      uint64_t *ips, int max) {
  proc_syms *p = y ? proc_of(y, pid, 0) : NULL;
  if (!p || !regs || !ips || max <= 0)
    return 0;
  if (!p->attached)
    p->attached =
        dwfl_attach_state(p->dwfl, NULL, (pid_t)pid, &thread_cb, p) ? 1 : -1;
  if (p->attached < 0)
    return 0;
  unwind_ctx u = {regs, stack, stack ? stack_len : 0, ips, 0, max};
  p->cur = &u;
  dwfl_getthread_frames(p->dwfl, (pid_t)pid, on_frame, &u);
  p->cur = NULL;
  return u.n;
}

void pp_symbols_free(pp_symbols *y) {
  if (!y)
    return;
  for (size_t i = 0; i < y->nprocs; i++) {
    proc_syms *p = &y->procs[i];
    dwfl_end(p->dwfl);
    for (size_t k = 0; k < p->npaths; k++)
      pp__free(p->paths[k]);
    pp__free(p->paths);
    pp__free(p->bias);
    pp__free(p->names);
  }
  pp__free(y->procs);
  for (size_t i = 0; i < y->dm_cap; i++) {
    pp__free(y->dm[i].mangled);
    free(y->dm[i].plain); /* the demangler's malloc */
  }
  pp__free(y->dm);
  pp__free(y);
}

#else /* without libdw */

pp_symbols *pp_symbols_new(char *why, size_t why_len) {
  if (why && why_len)
    snprintf(why, why_len,
             "unavailable: built without libdw (apt install libdw-dev)");
  return NULL;
}

int pp_symbols_map(pp_symbols *y, uint32_t pid, uint64_t start, uint64_t len,
                   uint64_t pgoff, const char *path) {
  (void)y, (void)pid, (void)start, (void)len, (void)pgoff, (void)path;
  return 0;
}

int pp_symbols_fork(pp_symbols *y, uint32_t pid, uint32_t ppid) {
  (void)y, (void)pid, (void)ppid;
  return 0;
}

void pp_symbols_exec(pp_symbols *y, uint32_t pid) { (void)y, (void)pid; }

const char *pp_symbols_name(pp_symbols *y, uint32_t pid, uint64_t ip,
                            int is_return, const char **module) {
  (void)y, (void)pid, (void)ip, (void)is_return;
  if (module)
    *module = NULL;
  return NULL;
}

int pp_symbols_unwind(pp_symbols *y, uint32_t pid, const uint64_t *regs,
                      const unsigned char *stack, size_t stack_len,
                      uint64_t *ips, int max) {
  (void)y, (void)pid, (void)regs, (void)stack, (void)stack_len, (void)ips,
      (void)max;
  return 0;
}

void pp_symbols_free(pp_symbols *y) { (void)y; }

#endif
