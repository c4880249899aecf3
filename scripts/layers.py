#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check that the folders of src/ include each other only downward.

Each folder of src/ is one layer with a fixed list of the folders below it
that it may include (LAYERS, the flow of docs/DESIGN and
docs/internals/README.md). An #include "..." of a header in a folder not on
that list -- one that runs back up the flow, such as format -> model or
core <-> sink -- is an error, printed as FILE:LINE: and failing the build
(the `layers` target of CMakeLists.txt, built with every build). A folder
of src/ missing from LAYERS is an error too, so a new folder is placed on
purpose.

Usage: scripts/layers.py [SRC_DIR] (default: src/ beside this script).
Also writes the allowed graph with --dot.
"""
import os
import re
import sys

# folder: the folders it may include ("." is src/ itself: internal.h,
# util, units, version, shared by all). Lowest first.
LAYERS = {
    ".": [],
    "stats": ["."],
    "metrics": ["."],
    "format": [".", "stats"],
    "pair": [".", "format"],
    "ring": [".", "format", "pair", "stats"],
    "collect": [".", "format", "metrics"],
    "symbols": [".", "collect"],
    "sink": [".", "format", "metrics", "pair", "ring", "stats"],
    "core": [".", "collect", "format", "metrics", "pair", "ring", "sink",
             "stats"],
    "salvage": [".", "format", "pair", "ring", "sink", "stats"],
    "nvtx": [".", "core", "format"],
    "runtime": [".", "core", "format"],
    "model": [".", "format", "metrics", "stats"],
    "results": [".", "metrics", "stats"],
    "import": [".", "format", "model", "stats"],
    "analyze": [".", "format", "import", "metrics", "model", "pair",
                "results", "sink", "stats"],
    "export": [".", "analyze", "format", "metrics", "model", "pair",
               "results", "stats"],
    "http": [".", "core", "export", "metrics", "results", "sink", "stats"],
    "cli": [".", "analyze", "collect", "core", "export", "format", "http",
            "import", "metrics", "model", "pair", "results", "salvage",
            "sink", "stats", "symbols"],
}

INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def folder(src, path):
    rel = os.path.relpath(path, src)
    d = os.path.dirname(rel)
    return d.split(os.sep)[0] if d else "."


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    src = args[0] if args else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "src")
    src = os.path.normpath(src)
    root = os.path.dirname(src)
    bad = []
    for d, _, names in os.walk(src):
        for n in sorted(names):
            if not n.endswith((".c", ".h")):
                continue
            f = os.path.join(d, n)
            me = folder(src, f)
            if me not in LAYERS:
                bad.append("%s: the folder src/%s is not in scripts/layers.py's "
                           "LAYERS: place it" % (os.path.relpath(f, root), me))
                continue
            with open(f, encoding="utf-8", errors="replace") as fh:
                for lineno, line in enumerate(fh, 1):
                    m = INC.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    for base in (d, src):
                        p = os.path.normpath(os.path.join(base, inc))
                        if os.path.exists(p):
                            break
                    else:
                        continue  # generated, or outside src/
                    if not p.startswith(src + os.sep):
                        continue
                    to = folder(src, p)
                    if to != me and to not in LAYERS[me]:
                        bad.append("%s:%d: src/%s includes %s from src/%s, "
                                   "which is not below it (scripts/layers.py)"
                                   % (os.path.relpath(f, root), lineno, me,
                                      inc, to))
    if "--dot" in sys.argv:
        print("digraph layers {")
        for k, v in LAYERS.items():
            for t in v:
                print('  "%s" -> "%s";' % (k, t))
        print("}")
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        print("layers: %d include(s) against the layers" % len(bad),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
