# SPDX-License-Identifier: MIT
"""Cost of a Python zone, against what a Python programmer would use
instead, all measured in one run (a benchmark, not a test):

  nullcontext      with contextlib.nullcontext(): pass
  floor            t0 = perf_counter_ns(); t1 = perf_counter_ns();
                   times.append(t1 - t0)   (a hand-made timer)
  zone on          with pipeprof.zone("step"): pass   (trace mode)
  zone paused      the same after pipeprof.enabled(False)
  zone off         the same with no session (after pipeprof.stop())
  profile on       a call of a @pipeprof.profile function (vs. a call of
                   the plain function: "call"); paused; no session
  torch stage on   with pipeprof.torch.stage("step"): pass (a new stage
                   object per statement; on a CPU-only torch the CUDA
                   check finds no CUDA and the rest is a zone)
  record_function  with torch.profiler.record_function("step"): pass,
                   with no profiler and inside torch.profiler.profile()
                   (the latter per range, amortised over the profile's
                   exit), when torch is importable

Each round runs every variant --n times (a session is started and stopped
in each round); the figure is the median round, in ns per statement,
with the empty loop's time subtracted (the statement's own cost). Ratios
are to nullcontext. Usage:

  /usr/bin/python3 bench/python/zone_cost.py [--rounds 15] [--n 20000]

with the binding importable (make build, then PYTHONPATH=build/python, or
an installed package).
"""

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time

import pipeprof

pc = time.perf_counter_ns


def loop_empty(n):
    for _ in range(n):
        pass


def loop_null(n):
    for _ in range(n):
        with contextlib.nullcontext():
            pass


def loop_floor(n):
    times = []
    append = times.append
    for _ in range(n):
        t0 = pc()
        t1 = pc()
        append(t1 - t0)


def loop_zone(n):
    for _ in range(n):
        with pipeprof.zone("step"):
            pass


def plain(x):
    return x


@pipeprof.profile
def profiled(x):
    return x


def loop_call(n):
    for i in range(n):
        plain(i)


def loop_profiled(n):
    for i in range(n):
        profiled(i)


def timed(fn, n):
    t0 = pc()
    fn(n)
    return (pc() - t0) / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--torch-n", type=int, default=2000)
    args = ap.parse_args()
    n = args.n
    try:
        import torch
        import pipeprof.torch as ppt
        rf = torch.profiler.record_function
    except ImportError as e:
        torch = None
        why = str(e)

    def loop_rf(k):
        for _ in range(k):
            with rf("step"):
                pass

    def loop_stage(k):
        st = ppt.stage
        for _ in range(k):
            with st("step"):
                pass

    out = os.path.join(tempfile.mkdtemp(), "bench.pptrace")
    res = {}

    def add(key, v):
        res.setdefault(key, []).append(v)

    for fn in (loop_empty, loop_null, loop_floor, loop_zone, loop_call,
               loop_profiled):
        fn(1000)  # warm up
    # Every variant in every round: a session per round (trace mode, a
    # 64 MiB ring, so a round of n zones never fills it and nothing is
    # dropped), then the same statements with no session.
    for _ in range(args.rounds):
        pipeprof.start(mode="trace", out=out, buffer_kib=65536)
        add("empty", timed(loop_empty, n))
        add("nullcontext", timed(loop_null, n))
        add("floor", timed(loop_floor, n))
        add("zone on", timed(loop_zone, n))
        add("call", timed(loop_call, n))
        add("profile on", timed(loop_profiled, n))
        if torch is not None:
            add("pipeprof.torch.stage on", timed(loop_stage, n))
        pipeprof.enabled(False)
        add("zone paused", timed(loop_zone, n))
        add("profile paused", timed(loop_profiled, n))
        pipeprof.stop()
        add("zone off", timed(loop_zone, n))
        add("profile off", timed(loop_profiled, n))
        if torch is not None:
            add("record_function, no profiler", timed(loop_rf, n))
    if torch is not None:
        for _ in range(3):
            k = args.torch_n
            t0 = pc()
            with torch.profiler.profile():
                loop_rf(k)
            add("record_function, profiler active (amortised)",
                (pc() - t0) / k)

    med = {k: statistics.median(v) for k, v in res.items()}
    empty = med["empty"]

    def cost(k):
        return med[k] - empty

    null = cost("nullcontext")
    print("pipeprof %s, Python %s, %s" % (pipeprof.library_version(),
                                          sys.version.split()[0],
                                          sys.executable))
    print("median of %d rounds of %d; ns per statement minus the empty "
          "loop (%.1f ns)" % (args.rounds, n, empty))
    print("%-46s %9s %8s" % ("variant", "ns", "x null"))
    order = ["nullcontext", "floor", "zone on", "zone paused", "zone off",
             "call", "profile on", "profile paused", "profile off",
             "pipeprof.torch.stage on", "record_function, no profiler",
             "record_function, profiler active (amortised)"]
    for k in order:
        if k in med:
            print("%-46s %9.1f %8.2f" % (k, cost(k), cost(k) / null))
    print("ratios to nullcontext: zone enabled %.2f (goal <= 1.5), "
          "paused %.2f, no session %.2f (goal <= 1.1)"
          % (cost("zone on") / null, cost("zone paused") / null,
             cost("zone off") / null))
    print("profile: a decorated call minus a plain call: on %.1f ns, "
          "paused %.1f ns, no session %.1f ns"
          % (med["profile on"] - med["call"],
             med["profile paused"] - med["call"],
             med["profile off"] - med["call"]))
    if torch is None:
        print("torch.profiler.record_function: not measured (%s)" % why)
    else:
        print("torch %s: record_function / zone enabled: %.0fx with no "
              "profiler, %.0fx with torch.profiler active"
              % (torch.__version__,
                 cost("record_function, no profiler") / cost("zone on"),
                 cost("record_function, profiler active (amortised)")
                 / cost("zone on")))
    os.unlink(out)


if __name__ == "__main__":
    main()
