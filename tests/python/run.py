# SPDX-License-Identifier: MIT
"""Run the Python binding's tests (ctest's "python"): pytest over this
directory with the build tree's package first on sys.path.

Environment (set by cmake/python.cmake): PYTHONPATH=<build>/python,
PP_BUILD_DIR, PP_SOURCE_DIR, PP_PYTHON (this interpreter). In sanitizer
builds PP_PY_PRELOAD names the sanitizer runtime, which an interpreter
that was not built with it must preload: this script runs pytest with it
in LD_PRELOAD (and every Python child the tests start inherits it).
"""

import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
preload = os.environ.get("PP_PY_PRELOAD")
if preload and preload not in os.environ.get("LD_PRELOAD", ""):
    if not os.path.isfile(preload):
        print("skipped: sanitizer runtime %s not found" % preload)
        sys.exit(77)
    os.environ["LD_PRELOAD"] = preload
    os.execv(sys.executable, [sys.executable] + sys.argv)

import pytest  # noqa: E402

sys.exit(pytest.main(["-p", "no:cacheprovider", "--rootdir", here, here]
                     + sys.argv[1:]))
