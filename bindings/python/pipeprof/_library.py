# SPDX-License-Identifier: MIT
"""Find and load libpipeprof, the C library under the binding.

Places tried, in order (docs/python.md, "How the library is found"):

1. ``PIPEPROF_LIBRARY``: a path to libpipeprof.so* or to a directory
   holding it. When set, nothing else is tried.
2. A libpipeprof already loaded in this process (a program or another
   extension linked it), so that one process never runs two copies.
3. The directories recorded when the extension was built: the build tree
   it was built from and the prefix pkg-config named then.
4. ``pkg-config --variable=libdir pipeprof`` now.
5. The dynamic loader's own search: ``LD_LIBRARY_PATH``, ld.so.cache and
   the system directories (``libpipeprof.so.0``).

When none loads, ImportError names every place and why it failed.
"""

import ast
import os
import shutil
import subprocess

SONAME = "libpipeprof.so.0"
NAMES = (SONAME, "libpipeprof.so")


class LibraryNotFound(ImportError):
    """libpipeprof could not be found or loaded; the message says where
    the binding looked."""


def _built_dirs(ext):
    try:
        pairs = ast.literal_eval(ext.BUILD_LIBDIRS or "()")
    except (ValueError, SyntaxError):
        return []
    return [(str(what), str(d)) for what, d in pairs]


def _pkg_config_libdir():
    exe = shutil.which("pkg-config")
    if not exe:
        return None, "pkg-config is not installed"
    try:
        r = subprocess.run([exe, "--variable=libdir", "pipeprof"],
                           capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as e:
        return None, "pkg-config failed: %s" % e
    if r.returncode != 0:
        msg = (r.stderr.strip().splitlines() or ["no pipeprof.pc"])[0]
        return None, "pkg-config: " + msg
    return r.stdout.strip() or None, "pkg-config gave no libdir"


def _files_in(d):
    return [os.path.join(d, n) for n in NAMES]


def iter_candidates(ext, environ=None):
    """The places to try, in order, as (what, path or None, note) tuples;
    path None means "already loaded". A generator: pkg-config runs only
    when the places before it did not load."""
    env = os.environ if environ is None else environ
    explicit = env.get("PIPEPROF_LIBRARY")
    if explicit:
        if os.path.isdir(explicit):
            for p in _files_in(explicit):
                yield ("PIPEPROF_LIBRARY", p, None)
        else:
            yield ("PIPEPROF_LIBRARY", explicit, None)
        return
    yield ("already loaded in this process", None, None)
    seen = set()
    for what, d in _built_dirs(ext):
        seen.add(os.path.realpath(d))
        for p in _files_in(d):
            yield (what + " (recorded at build time)", p, None)
    libdir, why = _pkg_config_libdir()
    if libdir and os.path.realpath(libdir) not in seen:
        for p in _files_in(libdir):
            yield ("pkg-config libdir", p, None)
    elif not libdir:
        yield ("pkg-config", "", why)
    yield ("the dynamic loader's search path (LD_LIBRARY_PATH, "
           "ld.so.cache, system directories)", SONAME, None)


def candidates(ext, environ=None):
    """All the places iter_candidates gives, as a list."""
    return list(iter_candidates(ext, environ))


def load(ext, places=None):
    """Load the library through ext._load; returns the file loaded.
    Raises LibraryNotFound naming every place tried."""
    tried = []
    for what, path, note in (iter_candidates(ext) if places is None
                             else places):
        if note:
            tried.append("%s: %s" % (what, note))
            continue
        if path is None:
            got = ext._load(SONAME, True)
            if got:
                return got
            tried.append("%s: no" % what)
            continue
        if os.sep in path and not os.path.exists(path):
            tried.append("%s: %s: no such file" % (what, path))
            continue
        try:
            return ext._load(path)
        except OSError as e:
            tried.append("%s: %s" % (what, e))
    raise LibraryNotFound(
        "pipeprof: cannot load the C library libpipeprof. Looked in:\n  "
        + "\n  ".join(tried)
        + "\nBuild it (`make build` in the pipeprof checkout) or install it"
        " (`make install`), or set PIPEPROF_LIBRARY to the path of"
        " libpipeprof.so.")
