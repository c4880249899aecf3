#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Count the circles among the source files of src/, two ways.

  include   unit A (a .c with its .h) includes a header of unit B
  symbol    an object file of A uses a function or variable an object
            file of B defines (read with nm from a build directory)

A circle is a strongly connected set of two or more units: files that
need each other, so neither can be understood, tested or moved alone.
Usage: scripts/circles.py [BUILD_DIR] (default build/). Prints each
circle and the totals; exit status 1 when there is one.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(
    os.path.abspath(__file__)), ".."))
SRC = os.path.join(ROOT, "src")
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def unit(path):
    return os.path.splitext(os.path.relpath(path, SRC))[0]


def include_graph():
    files = [os.path.join(r, n) for r, _, ns in os.walk(SRC) for n in ns
             if n.endswith((".c", ".h"))]
    g = {unit(f): set() for f in files}
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for inc in INC.findall(text):
            for base in (os.path.dirname(f), SRC):
                p = os.path.normpath(os.path.join(base, inc))
                if os.path.exists(p) and p.startswith(SRC + os.sep):
                    if unit(p) != unit(f):
                        g[unit(f)].add(unit(p))
                    break
    return g


def symbol_graph():
    objs = {}
    for r, _, ns in os.walk(BUILD):
        for n in ns:
            if not n.endswith(".c.o"):
                continue
            p = os.path.join(r, n)
            m = re.search(r"/src/(.+)\.c\.o$", p)
            if m and "pp-tests" not in p and "fuzz" not in p:
                objs.setdefault(m.group(1), p)
    defined, used = {}, {}
    for u, p in objs.items():
        out = subprocess.run(["nm", p], capture_output=True, text=True,
                             check=True).stdout
        used[u] = set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBR":
                defined.setdefault(parts[2], u)
            elif len(parts) == 2 and parts[0] == "U":
                used[u].add(parts[1])
    return {u: {defined[s] for s in syms if s in defined and
                defined[s] != u} for u, syms in used.items()}


def circles(g):
    index, low, on, stack, comps, n = {}, {}, set(), [], [], [0]
    for root in sorted(g):
        if root in index:
            continue
        index[root] = low[root] = n[0]
        n[0] += 1
        stack.append(root)
        on.add(root)
        work = [(root, iter(sorted(g[root])))]
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in g:
                    continue
                if w not in index:
                    index[w] = low[w] = n[0]
                    n[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    return comps


total = 0
for name, g in (("include", include_graph()), ("symbol", symbol_graph())):
    cs = circles(g)
    for c in cs:
        print("%s circle (%d files): %s" % (name, len(c), " ".join(c)))
    print("%s circles: %d, %d files in them, %d files in all" %
          (name, len(cs), sum(len(c) for c in cs), len(g)))
    total += len(cs)
sys.exit(1 if total else 0)
