# SPDX-License-Identifier: MIT
"""Record a real torch.profiler trace of a small CNN inference loop.

Usage: python3 torch_profile.py TRACE_JSON FIGURES_JSON [ITERATIONS]

Writes the profiler's own Chrome trace (export_chrome_trace) to TRACE_JSON
and, to FIGURES_JSON, what torch itself says about it: for every operator
name, its count and total CPU time in microseconds (key_averages), and the
number of iterations. tests/test-import.c imports the trace with pipeprof
and compares. Exits 3 when torch cannot be imported.
"""
import json
import sys

try:
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function
except ImportError as e:  # the C test skips (or fails when required)
    print("torch unavailable: %s" % e, file=sys.stderr)
    sys.exit(3)


def main():
    trace, figures = sys.argv[1], sys.argv[2]
    iterations = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(),
        torch.nn.Conv2d(8, 8, 3), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
        torch.nn.Linear(8, 4)).eval()
    x = torch.randn(2, 3, 24, 24)
    with torch.no_grad():
        model(x)  # warm-up outside the profile
        with profile(activities=[ProfilerActivity.CPU],
                     record_shapes=True) as prof:
            for _ in range(iterations):
                with record_function("infer"):
                    y = model(x)
                with record_function("postprocess"):
                    y.softmax(dim=1).argmax(dim=1)
    prof.export_chrome_trace(trace)
    ops = {}
    for avg in prof.key_averages():
        ops[avg.key] = {"count": avg.count,
                        "cpu_time_total_us": avg.cpu_time_total,
                        "self_cpu_time_total_us": avg.self_cpu_time_total}
    with open(figures, "w") as f:
        json.dump({"torch": torch.__version__, "iterations": iterations,
                   "ops": ops}, f)


if __name__ == "__main__":
    main()
