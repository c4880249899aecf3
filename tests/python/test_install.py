# SPDX-License-Identifier: MIT
"""The install the docs show: a venv with --system-site-packages and
`pip install --no-build-isolation ./bindings/python` from the checkout,
offline; then import from the venv (not the build tree) and record."""

import os
import subprocess

import pytest

from conftest import BUILD, SANITIZED, SOURCE, child_env, summary_json
from conftest import zones_by_name


def test_pip_install_into_a_venv(tmp_path):
    if SANITIZED:
        pytest.skip("packaging test: not run in sanitizer builds")
    import sys
    probe = subprocess.run(
        [sys.executable, "-c", "import venv, ensurepip, pip"],
        capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("venv or pip missing for %s (python3-venv, "
                    "python3-pip): %s" % (sys.executable,
                                         probe.stderr.strip()[-200:]))
    pkg = os.path.join(SOURCE, "bindings", "python")
    before = sorted(os.listdir(pkg))
    venv = tmp_path / "venv"
    env = child_env(PYTHONPATH=None, PIP_NO_INDEX="1",
                    PIP_DISABLE_PIP_VERSION_CHECK="1",
                    PIPEPROF_BUILD_DIR=BUILD,
                    PIPEPROF_PY_BUILD_BASE=str(tmp_path / "pybuild"))
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages",
                    str(venv)], check=True, env=env, timeout=300)
    py = str(venv / "bin" / "python")
    r = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation",
                        pkg], capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(os.listdir(pkg)) == before  # the checkout is untouched
    out = tmp_path / "i.pptrace"
    code = ("import pipeprof, sys\n"
            "assert pipeprof.__file__.startswith(sys.prefix), "
            "pipeprof.__file__\n"
            "pipeprof.start(out=%r)\n"
            "with pipeprof.zone('installed'):\n    pass\n"
            "print(pipeprof.stop(), pipeprof.library_path)\n" % str(out))
    r = subprocess.run([py, "-c", code], capture_output=True, text=True,
                       env=env, cwd=str(tmp_path), timeout=120)
    assert r.returncode == 0, r.stderr
    path, lib = r.stdout.split()
    assert path == str(out)
    assert lib.startswith(os.path.join(BUILD, "libpipeprof"))
    assert zones_by_name(summary_json(out))["installed"]["count"] == 1
