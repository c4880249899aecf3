# SPDX-License-Identifier: MIT
"""Build of the pipeprof extension (pipeprof._pipeprof).

pipeprof.h is taken from, in order: $PIPEPROF_INCLUDE, the checkout this
directory belongs to (../../include), `pkg-config --cflags pipeprof`.

The extension does not link libpipeprof; it opens it when imported
(pipeprof/_library.py). So that it finds the library it was built for,
the build records where that is: $PIPEPROF_BUILD_DIR or the checkout's
build/ when it holds libpipeprof.so, and the libdir pkg-config gives.

setuptools writes build/ and pipeprof.egg-info/ here; with
$PIPEPROF_PY_BUILD_BASE it writes them there instead (the install test
does, so that it leaves the checkout as it was).
"""

import os
import shutil
import subprocess

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.normpath(os.path.join(HERE, "..", ".."))


def pkg_config(*args):
    exe = shutil.which("pkg-config")
    if not exe:
        return None
    r = subprocess.run([exe, *args, "pipeprof"], capture_output=True,
                       text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def include_dirs():
    tried = []
    env = os.environ.get("PIPEPROF_INCLUDE")
    places = [("PIPEPROF_INCLUDE", env)] if env else []
    places.append(("the checkout", os.path.join(CHECKOUT, "include")))
    flags = pkg_config("--cflags-only-I") or ""
    places += [("pkg-config", f[2:]) for f in flags.split()
               if f.startswith("-I")]
    if not flags:
        places.append(("pkg-config", "(no pipeprof.pc)"))
    for what, d in places:
        if os.path.isfile(os.path.join(d, "pipeprof.h")):
            return [d]
        tried.append("%s: %s" % (what, d))
    raise SystemExit("pipeprof: pipeprof.h not found; looked in:\n  "
                     + "\n  ".join(tried)
                     + "\nSet PIPEPROF_INCLUDE to the directory holding it.")


def library_dirs():
    out = []
    build = os.environ.get("PIPEPROF_BUILD_DIR") or os.path.join(CHECKOUT,
                                                                 "build")
    if any(os.path.exists(os.path.join(build, n))
           for n in ("libpipeprof.so", "libpipeprof.so.0")):
        out.append(("build tree", os.path.abspath(build)))
    libdir = pkg_config("--variable=libdir")
    if libdir:
        out.append(("pkg-config prefix", libdir))
    return out


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def options():
    base = os.environ.get("PIPEPROF_PY_BUILD_BASE")
    if not base:
        return {}
    os.makedirs(base, exist_ok=True)
    return {"build": {"build_base": os.path.join(base, "build")},
            "egg_info": {"egg_base": base}}


setup(
    options=options(),
    ext_modules=[
        Extension(
            "pipeprof._pipeprof",
            sources=["src/_pipeprof.c", "src/runtime.c"],
            include_dirs=include_dirs(),
            define_macros=[("PP_PY_LIBDIRS",
                            c_string(repr(tuple(library_dirs()))))],
            libraries=["dl"],
        )
    ],
)
