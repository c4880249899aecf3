#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# Write a small, real torch.profiler trace of a CPU inference loop, for the
# torch importer's tests. Run with the Python that has torch (Debian's
# /usr/bin/python3 with python3-torch here):
#
#   /usr/bin/python3 tests/import/torch/make_trace.py OUT_JSON [--iters N]
#                    [--expect OUT_EXPECT_JSON]
#
# The loop: per iteration one "step N" record_function range holding
# "preprocess" (uint8 frame to normalised float), "infer" (a small CNN: conv,
# relu, pool, linear) and "postprocess" (softmax, topk); batch sizes 1 and 2
# alternate, so operators show two input shapes. record_shapes is on. All on
# the main thread: torch 1.13's legacy (non-Kineto) profiler records only
# the thread that started it (a worker thread's ranges are simply absent).
# The trace is what prof.export_chrome_trace() writes: with a torch built
# with Kineto, Kineto's JSON object; with Debian's CPU torch 1.13 (no
# Kineto), the legacy bare array (pid "CPU functions", empty args: no
# shapes in the file even with record_shapes on; see
# tests/fixtures/torch/README.md).
#
# --expect writes torch's own operator table for the same profile, from
# prof.key_averages(group_by_input_shape=True): per (name, input shapes)
# calls, total and self CPU time in µs. An importer's operator table can be
# checked against it. The same file records time.time_ns() just before the
# profiler started: the legacy trace's ts are µs from about that moment and
# carry no wall clock of their own.
import argparse
import json
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile, record_function

# The shared model: tests/import/small_cnn.py.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
from small_cnn import SmallCNN  # noqa: E402


def preprocess(raw, batch):
    x = raw.float().div(255.0)
    x = (x - 0.5) / 0.25
    return x.reshape(batch, 3, 32, 32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--expect")
    args = ap.parse_args()

    torch.manual_seed(13)
    torch.set_num_threads(2)
    model = SmallCNN().eval()
    batches = [1, 2]
    frames = [torch.randint(0, 256, (batches[i % 2] * 3 * 32 * 32,),
                            dtype=torch.uint8) for i in range(args.iters)]
    wall_ns = time.time_ns()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with torch.no_grad():
            for i in range(args.iters):
                with record_function(f"step {i}"):
                    with record_function("preprocess"):
                        x = preprocess(frames[i], batches[i % len(batches)])
                    with record_function("infer"):
                        logits = model(x)
                    with record_function("postprocess"):
                        top = torch.softmax(logits, dim=1).topk(3, dim=1)
                        _ = top.indices.tolist()
    prof.export_chrome_trace(args.out)

    if args.expect:
        rows = []
        for avg in prof.key_averages(group_by_input_shape=True):
            rows.append({
                "name": avg.key,
                "input_shapes": avg.input_shapes,
                "calls": avg.count,
                "cpu_time_total_us": avg.cpu_time_total,
                "self_cpu_time_total_us": avg.self_cpu_time_total,
            })
        rows.sort(key=lambda r: (r["name"], str(r["input_shapes"])))
        with open(args.expect, "w", encoding="utf-8") as f:
            # One row a line: small diffs when the fixture is regenerated.
            f.write('{"torch": %s, "kineto": %s, "iters": %d, '
                    '"wall_clock_ns_before_profile": %d, "key_averages": [\n'
                    % (json.dumps(torch.__version__),
                       json.dumps(torch.autograd.kineto_available()),
                       args.iters, wall_ns))
            f.write(",\n".join(json.dumps(r) for r in rows))
            f.write("\n]}\n")
    print(f"trace {args.out}: torch {torch.__version__}, kineto "
          f"{torch.autograd.kineto_available()}, {args.iters} iterations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
