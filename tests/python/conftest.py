# SPDX-License-Identifier: MIT
"""Shared helpers of the binding's tests (run by tests/python/run.py).

The package under test is the build tree's (<build>/python, first on
PYTHONPATH); the traces it writes are read back with the build's own
`pipeprof` command, so the tests check what the tools see.
"""

import json
import os
import subprocess
import sys

import pytest

# No session from the environment in the test process itself: the tests
# start their own (the autostart test runs a child with PIPEPROF=1).
for _k in [k for k in os.environ if k.startswith("PIPEPROF")]:
    del os.environ[_k]

SOURCE = os.environ.get("PP_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("PP_BUILD_DIR") or os.path.join(SOURCE, "build")
CLI = os.path.join(BUILD, "pipeprof")
SANITIZED = bool(os.environ.get("PP_PY_PRELOAD"))

import pipeprof  # noqa: E402


def cli(*args, check=True):
    r = subprocess.run([CLI, *args], capture_output=True, text=True,
                       timeout=300)
    if check and r.returncode != 0:
        raise AssertionError("pipeprof %s: exit %d\n%s\n%s"
                         % (" ".join(args), r.returncode, r.stdout,
                            r.stderr))
    return r


def summary_json(path):
    """The summary JSON of a trace file or run directory."""
    return json.loads(cli("export", str(path), "--format", "json").stdout)


def zones_by_name(j):
    """zones[] of a summary JSON folded by name (sites added up)."""
    out = {}
    for z in j["zones"]:
        e = out.setdefault(z["name"], {"count": 0, "total_ns": 0,
                                       "self_ns": 0, "min_ns": None,
                                       "max_ns": 0, "sites": []})
        e["count"] += z["count"]
        e["total_ns"] += z["total_ns"]
        e["self_ns"] += z["self_ns"]
        e["max_ns"] = max(e["max_ns"], z["max_ns"])
        e["min_ns"] = z["min_ns"] if e["min_ns"] is None else min(
            e["min_ns"], z["min_ns"])
        e["sites"].append(z)
    return out


def child_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PIPEPROF")}
    env.update({k: str(v) for k, v in extra.items() if v is not None})
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
    return env


def run_python(code, cwd=None, python=None, timeout=120, **env):
    """Run code in a fresh interpreter (this one unless python is given)."""
    return subprocess.run([python or sys.executable, "-c", code],
                          capture_output=True, text=True, cwd=cwd,
                          env=child_env(**env), timeout=timeout)


@pytest.fixture
def session(tmp_path):
    """Start a trace-mode session with a large ring (no drops in these
    small tests); the test calls stop() itself or the fixture does."""
    out = tmp_path / "t.pptrace"

    def begin(**kw):
        kw.setdefault("mode", "trace")
        kw.setdefault("buffer_kib", 16384)
        assert pipeprof.start(out=out, install_signals=False, **kw)
        return out

    yield begin
    pipeprof.stop()
    pipeprof.enabled(True)
