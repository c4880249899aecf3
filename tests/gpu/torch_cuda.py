# SPDX-License-Identifier: MIT
"""pipeprof.torch's CUDA paths with a real CUDA torch on a GPU machine
(a check to run by hand there, not part of `make test`):

    make build
    PYTHONPATH=build/python python3 tests/gpu/torch_cuda.py build/pipeprof

Checks, against what torch itself measures: a stage's allocated delta
and peak for tensors of known size; GPU zones on torch's current stream
against torch.cuda.Event timings of the same matmuls; emit_nvtx
operator ranges captured as aten:: zones; the torch.cuda memory
counters. Prints what it measured; exit 0 when every check holds, 1
when one fails, 77 (skipped) when torch has no CUDA device here.
"""

import json
import os
import subprocess
import sys
import tempfile

import torch

import pipeprof
import pipeprof.torch as ppt


def main():
    cli = sys.argv[1] if len(sys.argv) > 1 else "build/pipeprof"
    why = ppt.cuda_reason()
    if why:
        print("skipped: " + why)
        return 77
    out = os.path.join(tempfile.mkdtemp(), "torch_cuda.pptrace")
    pipeprof.start(out=out, install_signals=False)
    ok = True

    def check(cond, what):
        nonlocal ok
        print("%s: %s" % ("ok" if cond else "FAILED", what))
        ok = ok and cond

    dev = torch.device("cuda")
    a = torch.randn(2048, 2048, device=dev)
    torch.cuda.synchronize()
    n = 4 << 20  # 4 MiB in floats: a multiple of the allocator's blocks
    with ppt.stage("alloc", sync=True) as s:
        keep = torch.empty(n // 4, dtype=torch.float32, device=dev)
        tmp = torch.empty(2 * n // 4, dtype=torch.float32, device=dev)
        del tmp
    check(s.memory["alloc_delta_bytes"] == n,
          "stage delta %d == %d" % (s.memory["alloc_delta_bytes"], n))
    check(s.memory["peak_over_start_bytes"] == 3 * n,
          "stage peak over start %d == %d"
          % (s.memory["peak_over_start_bytes"], 3 * n))
    del keep
    ref = []
    for _ in range(10):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        with ppt.gpu_zone("matmul"):
            e0.record()
            a @ a
            e1.record()
        torch.cuda.synchronize()
        ref.append(e0.elapsed_time(e1) * 1e6)
    print("torch events: matmul mean %.0f ns" % (sum(ref) / len(ref)))
    ppt.sample_memory()
    nvtx = ppt.capture_nvtx()
    print("nvtx:", nvtx)
    with ppt.emit_nvtx() as e:
        a @ a
        torch.cuda.synchronize()
    print("emit_nvtx:", e.status)
    pipeprof.stop()
    j = json.loads(subprocess.run([cli, "export", out, "--format", "json"],
                                  capture_output=True, text=True,
                                  check=True).stdout)
    gz = {z["name"]: z for z in (j.get("gpu_zones") or {}).get("zones", [])}
    mm = gz.get("matmul")
    check(mm is not None and mm["count"] == 10,
          "10 GPU zones 'matmul' resolved (%s)" % (j.get("gpu_zones"),))
    if mm:
        mean = mm["total_ns"] / mm["count"]
        refm = sum(ref) / len(ref)
        check(abs(mean - refm) <= 0.1 * refm + 20000,
              "GPU zone mean %.0f ns vs torch events %.0f ns" % (mean, refm))
    names = [z["name"] for z in j["zones"]]
    check(any(x.startswith("aten::") for x in names),
          "emit_nvtx ranges captured as aten:: zones (%d zones)"
          % len(names))
    counters = {c["name"] for c in j["counters"]}
    check("torch.cuda0.fragmentation_bytes" in counters,
          "torch.cuda0.* memory counters recorded")
    check("alloc.cuda.peak_bytes" in counters, "stage memory counters")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
