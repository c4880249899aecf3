#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Describe an ONNX Runtime profile (or a legacy torch.profiler trace) the way
# tests/import/ort/README.md does: top-level shape, events by ph and cat,
# event names by cat (with the `_kernel_time`-style suffixes folded), the
# args keys seen per cat, op_name/provider counts, pids/tids, ts/dur ranges.
# Standard library only.
#
#   python3 summarize.py PROFILE.json
import collections
import json
import re
import sys


def fold(name):
    # "/conv1/Conv_kernel_time" -> "*_kernel_time"; keep Session/Api names.
    m = re.search(r"_(kernel_time|fence_before|fence_after)$", name)
    return "*_" + m.group(1) if m else name


def main():
    if len(sys.argv) != 2:
        print("usage: summarize.py PROFILE.json", file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    if isinstance(doc, dict):
        print("top level: object with keys", sorted(doc))
        events = doc.get("traceEvents", [])
    else:
        print("top level: array")
        events = doc
    print("events:", len(events))
    by = collections.Counter((e.get("ph"), e.get("cat")) for e in events)
    for (ph, cat), n in sorted(by.items(), key=lambda kv: -kv[1]):
        print(f"  ph={ph!s:3} cat={cat!s:12} {n}")
    names = collections.defaultdict(collections.Counter)
    keys = collections.defaultdict(collections.Counter)
    for e in events:
        names[e.get("cat")][fold(str(e.get("name")))] += 1
        for k, v in (e.get("args") or {}).items():
            keys[e.get("cat")][(k, type(v).__name__)] += 1
    for cat in names:
        print(f"names in cat {cat}:")
        for n, c in names[cat].most_common(12):
            print(f"  {c:5} {n}")
        if keys[cat]:
            print(f"args keys in cat {cat} (key: JSON type, count):")
            for (k, t), c in sorted(keys[cat].items()):
                print(f"  {k}: {t} x{c}")
    ops = collections.Counter(
        (e["args"].get("op_name"), e["args"].get("provider"))
        for e in events if e.get("args") and "op_name" in e["args"])
    if ops:
        print("op_name/provider:")
        for (op, prov), c in ops.most_common():
            print(f"  {c:5} {op} {prov}")
    print("pids:", sorted({str(e.get("pid")) for e in events}))
    print("tids:", sorted({str(e.get("tid")) for e in events}))
    ts = [e["ts"] for e in events if "ts" in e]
    durs = [e["dur"] for e in events if "dur" in e]
    if ts:
        print(f"ts: {min(ts)} .. {max(ts)} ({type(ts[0]).__name__});"
              f" dur: {min(durs)} .. {max(durs)}"
              f" ({type(durs[0]).__name__ if durs else '-'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
