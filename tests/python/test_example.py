# SPDX-License-Identifier: MIT
"""The Python example (examples/python/video_pipeline.py), run briefly
under `pipeprof run`: its report names its stages and queues and finds
the pipeline. Skipped, saying so, without torch or PyAV (bash
scripts/deps.sh --torch installs them; CI does)."""

import os
import subprocess
import sys

import pytest

from conftest import CLI, SOURCE, child_env, summary_json, zones_by_name

for _mod, _pkg in (("torch", "python3-torch"), ("av", "python3-av")):
    pytest.importorskip(_mod, reason="%s cannot be imported by %s (Debian: "
                        "apt-get install %s, or bash scripts/deps.sh "
                        "--torch)" % (_mod, sys.executable, _pkg))

EXAMPLE = os.path.join(SOURCE, "examples", "python", "video_pipeline.py")
STAGES = ["decode", "preprocess", "infer", "postprocess"]
QUEUES = {"decoded": ("decode", "preprocess"),
          "preprocessed": ("preprocess", "infer"),
          "inferred": ("infer", "postprocess")}


def test_example_pipeline_report_names_its_stages_and_queues(tmp_path):
    n = 6
    run = tmp_path / "run"
    r = subprocess.run(
        [CLI, "run", "-o", str(run), "-q", "--", sys.executable, EXAMPLE,
         "--frames", str(n), "--size", "64", "--queue", "2"],
        capture_output=True, text=True, timeout=600, cwd=str(tmp_path),
        env=child_env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert "video_pipeline: %d frames of 320x240" % n in r.stdout
    report = r.stdout
    for name in STAGES + list(QUEUES):
        assert name in report, name
    assert "pipeline bottlenecks" in report and "bound:" in report
    j = summary_json(run)
    z = zones_by_name(j)
    for name in STAGES:
        assert z[name]["count"] == n, name
    assert z["generate video"]["count"] == 1
    threads = {t["name"] for t in j["threads"]}
    assert set(STAGES) <= threads
    queues = {q["name"]: q for q in j["queues"]}
    for name, (src, dst) in QUEUES.items():
        q = queues[name]
        assert (q["from"], q["to"], q["capacity"]) == (src, dst, 2), name
        # every frame and the end-of-stream marker passed through
        assert q["pushes"] == n + 1 and q["pops"] == n + 1, name
    p = j["pipeline"]
    assert [s["name"] for s in p["stages"]] == STAGES
    assert p["bound"] in STAGES
    assert {f["name"]: f["frames"] for f in j["frames"]}["video"] == n
    assert j["system"] is not None
