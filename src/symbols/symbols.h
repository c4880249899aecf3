/* SPDX-License-Identifier: MIT */
/*
 * Names for code addresses of processes that may be gone: given each
 * process's executable mappings (file, address, file offset), the function
 * an address is in, from the file's symbol tables and, where installed, its
 * separate debug information, through elfutils' libdw (Dwfl, offline).
 * Used by the CLI for CPU stack samples (collect/stacks.h). Not API.
 * Design: docs/internals/stacks.md.
 *
 * Invariants: a name stays valid until pp_symbols_free; a file is opened
 * once per process that mapped it; an address no mapping covers, or one
 * in a file without symbols, has no name (NULL), never a guess.
 */
#ifndef PP_SYMBOLS_H
#define PP_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

typedef struct pp_symbols pp_symbols;

/* NULL when out of memory, or when built without libdw (why says so). */
pp_symbols *pp_symbols_new(char *why, size_t why_len);

/* An executable mapping of pid: bytes [start, start + len) of the address
 * space show path from file offset pgoff. 0, or -1 out of memory. */
int pp_symbols_map(pp_symbols *y, uint32_t pid, uint64_t start, uint64_t len,
                   uint64_t pgoff, const char *path);

/* pid was forked by ppid: it has ppid's mappings (0, or -1 out of
 * memory). */
int pp_symbols_fork(pp_symbols *y, uint32_t pid, uint32_t ppid);

/* pid called execve(): its mappings so far are gone. */
void pp_symbols_exec(pp_symbols *y, uint32_t pid);

/* The function at ip in pid, or NULL. A return address (any frame but the
 * innermost) is looked up at ip - 1, inside its call instruction: pass
 * is_return 1 for those. *module, when not NULL, gets the file's base name
 * (NULL when no mapping covers ip). */
const char *pp_symbols_name(pp_symbols *y, uint32_t pid, uint64_t ip,
                            int is_return, const char **module);

/* The frames of a sample taken where no frame pointers are, from the
 * registers and stack copied with it (collect/stacks.h:
 * PP_STACKS_USER_STACK; regs in its PP_STACK_REG_* order, stack from the
 * stack pointer up), walked with the files' DWARF call frame information
 * (.eh_frame, .debug_frame). Writes at most max return addresses, the
 * sampled instruction first, into ips; returns how many (0 when nothing
 * could be walked: no mapping, no CFI). */
int pp_symbols_unwind(pp_symbols *y, uint32_t pid, const uint64_t *regs,
                      const unsigned char *stack, size_t stack_len,
                      uint64_t *ips, int max);

void pp_symbols_free(pp_symbols *y);

#endif
