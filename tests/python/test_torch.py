# SPDX-License-Identifier: MIT
"""pipeprof.torch with Debian's real python3-torch (CPU): a small CNN
inference loop instrumented with stages, the CUDA helpers saying
"unavailable" on a CPU-only torch, their CUDA code paths against a
scripted torch.cuda, and the run under `pipeprof run`.

Skipped, saying so, when torch cannot be imported (scripts/deps.sh
installs python3-torch; CI runs these)."""

import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import pipeprof
from conftest import CLI, child_env, run_python, summary_json, zones_by_name

torch = pytest.importorskip(
    "torch", reason="torch cannot be imported by %s (Debian: apt-get "
    "install python3-torch, or bash scripts/deps.sh)" % sys.executable)
import pipeprof.torch as ppt  # noqa: E402

MS = 1_000_000
LOW, HIGH = 0.999, 1.001   # the trace's tick-to-ns conversion (test_zones)
CPU_ONLY = not torch.cuda.is_available()
needs_cpu_torch = pytest.mark.skipif(
    not CPU_ONLY, reason="CUDA is available: the CPU-only behaviour "
    "cannot be seen here (tests/gpu covers the GPU)")


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1))
        self.head = torch.nn.Linear(16, 10)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


def counters_by_name(j):
    return {c["name"]: c for c in j["counters"]}


def test_import_pipeprof_does_not_import_torch():
    code = ("import sys, pipeprof\n"
            "print('torch' in sys.modules)\n"
            "t = pipeprof.torch\n"
            "print('torch' in sys.modules, t.__name__, "
            "t is sys.modules['pipeprof.torch'])\n")
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["False", "True pipeprof.torch True"]


def test_cnn_inference_stages_agree_with_what_the_test_measured(session):
    out = session()
    torch.manual_seed(0)
    model = SmallCNN().eval()
    n = 12
    outer = {"preprocess": [], "infer": [], "postprocess": []}
    inner = {"preprocess": [], "infer": [], "postprocess": []}
    elapsed = {"preprocess": [], "infer": [], "postprocess": []}
    labels = []

    def timed(name, fn):
        # outer: the test's clock around the stage; inner: inside it
        t0 = time.perf_counter_ns()
        with ppt.stage(name, sync=True) as s:
            i0 = time.perf_counter_ns()
            r = fn()
            inner[name].append(time.perf_counter_ns() - i0)
        outer[name].append(time.perf_counter_ns() - t0)
        elapsed[name].append(s.elapsed_ns)
        return r

    with torch.no_grad():
        for i in range(n):
            raw = torch.randint(0, 256, (4, 3, 32, 32), dtype=torch.uint8)
            x = timed("preprocess", lambda: (raw.float() / 255 - 0.5) / 0.25)
            y = timed("infer", lambda: model(x))
            labels += timed("postprocess",
                            lambda: y.softmax(1).argmax(1).tolist())
            pipeprof.frame_mark("batch")
    assert pipeprof.stop() == str(out)
    assert len(labels) == 4 * n
    j = summary_json(out)
    z = zones_by_name(j)
    for name in outer:
        # counts exactly; each stage's total lies between the time spent
        # inside its block and the time around it, as the test measured
        assert z[name]["count"] == n, name
        assert z[name]["total_ns"] >= sum(inner[name]) * LOW, name
        assert z[name]["total_ns"] <= sum(outer[name]) * HIGH, name
        assert z[name]["min_ns"] >= min(inner[name]) * LOW, name
        assert z[name]["max_ns"] <= max(outer[name]) * HIGH, name
        # the stage's own measure obeys the same bounds
        assert all(i <= e <= o for i, e, o in
                   zip(inner[name], elapsed[name], outer[name])), name
    assert {f["name"]: f["frames"] for f in j["frames"]}["batch"] == n
    if CPU_ONLY:  # no CUDA, no CUDA counters: nothing made up
        assert not [c for c in counters_by_name(j) if ".cuda" in c]


@needs_cpu_torch
def test_cuda_helpers_say_unavailable_on_cpu_torch(session, monkeypatch):
    monkeypatch.delenv("NVTX_INJECTION64_PATH", raising=False)
    out = session()
    why = ppt.cuda_reason()
    assert why
    if torch.version.cuda is None:
        assert why == "torch %s was built without CUDA" % torch.__version__
    una = "unavailable: " + why
    st = ppt.status()
    assert st["torch"] == torch.__version__
    for k in ("cuda", "stage_memory", "gpu_zones", "memory_counters",
              "nvtx"):
        assert st[k] == una, k
    with ppt.stage("s", sync=True, memory=True, gpu=True) as s:
        pass
    assert s.memory == una and s.elapsed_ns >= 0
    with ppt.stage("quiet", memory=False) as q:
        pass
    assert q.memory == una  # CUDA's absence wins over "not asked"
    assert ppt.sample_memory() == una
    assert ppt.memory_stats() == una
    sampler = ppt.MemorySampler(0.01)
    with sampler:
        time.sleep(0.03)
    assert sampler.status == una and sampler.samples == 0
    assert not [t for t in threading.enumerate()
                if t.name == "pipeprof-torch-memory"]
    with ppt.gpu_zone("g") as g:
        pass
    assert g.status == una
    with ppt.emit_nvtx() as e:
        x = torch.ones(2) + 1
    assert e.status == una and x.tolist() == [2.0, 2.0]
    assert "NVTX_INJECTION64_PATH" not in os.environ

    @ppt.stage("decorated", sync=True)
    def f(v):
        return v + 1
    assert [f(i) for i in range(3)] == [1, 2, 3]
    with pytest.raises(TypeError, match="plain functions"):
        ppt.stage("gen")(lambda: (yield))
    pipeprof.stop()
    j = summary_json(out)
    z = zones_by_name(j)
    assert (z["s"]["count"], z["quiet"]["count"],
            z["decorated"]["count"]) == (1, 1, 3)
    assert "g" not in z
    assert j["counters"] == []
    # no GPU zone reached the library: the summary has no GPU section
    assert j["gpu_zones"] is None


class ScriptedCuda:
    """Stands in for torch.cuda's device queries: one device whose
    allocated bytes follow what the test sets, a peak the way the caching
    allocator keeps it, and counts of synchronize calls."""

    def __init__(self):
        self.allocated = 1000
        self.reserved = 4096
        self.peak = self.allocated
        self.syncs = 0

    def alloc(self, n):
        self.allocated += n
        self.peak = max(self.peak, self.allocated)

    def install(self, monkeypatch):
        c = torch.cuda
        monkeypatch.setattr(torch.version, "cuda", "12.1")
        monkeypatch.setattr(c, "is_available", lambda: True)
        monkeypatch.setattr(c, "device_count", lambda: 1)
        monkeypatch.setattr(c, "current_device", lambda: 0)
        monkeypatch.setattr(c, "get_device_name", lambda d=None: "Scripted")
        monkeypatch.setattr(c, "memory_allocated",
                            lambda d=None: self.allocated)
        monkeypatch.setattr(c, "memory_reserved",
                            lambda d=None: self.reserved)
        monkeypatch.setattr(c, "max_memory_allocated",
                            lambda d=None: self.peak)

        def reset(d=None):
            self.peak = self.allocated

        def sync(d=None):
            self.syncs += 1
        monkeypatch.setattr(c, "reset_peak_memory_stats", reset)
        monkeypatch.setattr(c, "synchronize", sync)
        stream = type("S", (), {"cuda_stream": 0})()
        monkeypatch.setattr(c, "current_stream", lambda d=None: stream)


def test_cuda_paths_against_a_scripted_torch_cuda(session, monkeypatch,
                                                   tmp_path):
    # The CUDA code paths of pipeprof.torch, run here without a GPU:
    # torch.cuda's queries answer from a script; GPU zones go to the C
    # library, which has no libcuda here and counts them as unavailable.
    cu = ScriptedCuda()
    cu.install(monkeypatch)
    monkeypatch.setattr(ppt, "_ctx_ready", threading.local())
    monkeypatch.setenv("PIPEPROF_LIBCUDA", str(tmp_path / "no-libcuda.so"))
    monkeypatch.delenv("NVTX_INJECTION64_PATH", raising=False)
    out = session()
    assert ppt.cuda_reason() is None
    assert ppt.status()["cuda"].startswith("available: 1 device(s)")
    with ppt.stage("outer", sync=True) as so:
        cu.alloc(500)                     # outer's peak: 1500
        cu.alloc(-500)
        with ppt.stage("inner", gpu=True) as si:  # resets the peak
            cu.alloc(200)
            cu.alloc(-100)                # inner: +100, peak 1200
        cu.alloc(50)
    assert cu.syncs == 2 + 1  # outer before and after; inner's first zone
    assert si.memory["alloc_delta_bytes"] == 100
    assert si.memory["peak_bytes"] == 1200
    assert si.memory["peak_over_start_bytes"] == 200
    # the inner stage's reset did not hide the outer's earlier peak
    assert so.memory["alloc_delta_bytes"] == 150
    assert so.memory["peak_bytes"] == 1500
    cu.reserved = 8192
    got = ppt.sample_memory()
    assert got == {0: {"allocated_bytes": 1150, "reserved_bytes": 8192,
                       "fragmentation_bytes": 8192 - 1150}}
    ms = ppt.memory_stats()
    assert ms["inner"]["count"] == 1 and ms["outer"]["count"] == 1
    assert ms["outer"]["peak_bytes_max"] == 1500
    with ppt.MemorySampler(0.005) as sampler:
        time.sleep(0.05)
    assert sampler.status == "available" and sampler.samples >= 2
    nvtx = ppt.capture_nvtx()
    assert nvtx.startswith("available: NVTX calls go to ")
    assert os.environ["NVTX_INJECTION64_PATH"] == pipeprof.library_path
    pipeprof.stop()
    j = summary_json(out)
    c = counters_by_name(j)
    assert c["inner.cuda.alloc_delta_bytes"]["last"] == 100
    assert c["inner.cuda.peak_bytes"]["last"] == 1200
    assert c["outer.cuda.peak_bytes"]["last"] == 1500
    assert c["torch.cuda0.fragmentation_bytes"]["last"] == 8192 - 1150
    assert c["torch.cuda0.allocated_bytes"]["samples"] == \
        1 + sampler.samples
    # the GPU zone reached the C API, which says why it recorded nothing
    assert j["gpu_zones"]["dropped"]["unavailable"] == 1
    assert "libcuda" in j["gpu_zones"]["unavailable"]


def test_pipeprof_run_merges_torch_stages_and_system_samples(tmp_path):
    app = tmp_path / "app.py"
    app.write_text(textwrap.dedent("""
        import torch, pipeprof, pipeprof.torch as ppt
        torch.set_num_threads(1)
        model = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
            torch.nn.Linear(8, 4)).eval()
        with torch.no_grad():
            for i in range(15):
                with ppt.stage("preprocess"):
                    x = torch.rand(2, 3, 32, 32) * 2 - 1
                with ppt.stage("infer"):
                    y = model(x)
                pipeprof.frame_mark("frames")
        print(ppt.status()["cuda"])
    """))
    run = tmp_path / "run"
    r = subprocess.run(
        [CLI, "run", "-o", str(run), "-q", "--hz", "50", "--",
         sys.executable, str(app)], capture_output=True, text=True,
        timeout=300, env=child_env())
    assert r.returncode == 0, r.stdout + r.stderr
    j = summary_json(run)
    z = zones_by_name(j)
    assert z["preprocess"]["count"] == 15 and z["infer"]["count"] == 15
    assert {f["name"]: f["frames"] for f in j["frames"]}["frames"] == 15
    assert j["system"] is not None and "process_tree" in j["system"]
    assert any(c["name"].startswith("sys.") for c in j["counters"])
    assert "MainThread" in [t["name"] for t in j["threads"]]
    report = subprocess.run([CLI, "report", str(run)], capture_output=True,
                            text=True, timeout=300)
    assert report.returncode == 0
    assert "preprocess" in report.stdout and "infer" in report.stdout


def test_torch_profile_merges_into_the_trace_by_wall_clock(session,
                                                           tmp_path):
    """A real torch.profiler run inside a pipeprof zone: exported with
    pipeprof.torch.export_chrome_trace (the anchor), merged with
    `--with`, torch's operators land inside that zone on the Chrome
    timeline, with torch's own counts in the report's figures."""
    import json
    from torch.profiler import ProfilerActivity, profile, record_function
    out = session()
    prof_path = tmp_path / "torch.json"
    torch.manual_seed(0)
    model = SmallCNN().eval()
    x = torch.randn(2, 3, 32, 32)
    with pipeprof.zone("before"):
        model(x)
    with pipeprof.zone("profiled"):
        with profile(activities=[ProfilerActivity.CPU],
                     record_shapes=True) as prof:
            with torch.no_grad():
                for _ in range(3):
                    with record_function("infer"):
                        model(x)
    with pipeprof.zone("after"):
        time.sleep(0.005)
    assert ppt.export_chrome_trace(prof, prof_path) == prof_path
    assert pipeprof.stop() == str(out)
    counts = {}
    for avg in prof.key_averages():
        counts[avg.key] = avg.count

    r = json.loads(_cli_out("export", str(out), "--with", str(prof_path),
                            "--format", "chrome"))
    ev = [e for e in r["traceEvents"] if e.get("ph") == "X"]
    zone = {e["name"]: e for e in ev if e["name"] in
            ("before", "profiled", "after")}
    assert set(zone) == {"before", "profiled", "after"}
    lo = zone["profiled"]["ts"]
    hi = lo + zone["profiled"]["dur"]
    ops = [e for e in ev if e["name"].startswith("aten::") or
           e["name"] == "infer"]
    assert len(ops) >= 3 * 5
    for e in ops:  # every operator inside the zone that enclosed it
        assert lo <= e["ts"] and e["ts"] + e["dur"] <= hi, e
    names = {e["args"]["name"] for e in r["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    assert "torch.profiler: thread 1" in names

    j = json.loads(_cli_out("export", str(out), "--with", str(prof_path),
                            "--format", "json"))
    m = j["merged_profiles"][0]
    assert m["source"] == "torch.profiler (legacy autograd export)"
    assert m["aligned_by"] == ('anchor "pipeprof.profile_start.realtime_ns '
                               'torch.json"')
    z = zones_by_name(j)
    assert z["infer"]["count"] == 3
    assert z["profiled"]["count"] == 1
    for name in ("aten::conv2d", "aten::relu", "aten::linear"):
        assert z[name]["count"] == counts[name], name


def _cli_out(*args):
    r = subprocess.run([CLI, *args], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout
