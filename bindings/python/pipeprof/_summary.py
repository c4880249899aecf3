# SPDX-License-Identifier: MIT
"""In-process figures: pipeprof.summary() and pipeprof.print_summary().

Built from the library's live statistics (docs/live.md): per zone name
(ranges included) and for requests, rolling windows of the last 1, 10 and
60 intervals (1 s each unless PIPEPROF_LIVE says otherwise), updated by
the writer thread once per interval, and the window of the whole session
(0), exact as of the call (the library drains every thread's events
first). After stop(), the figures of the session as it ended stay
readable until the next start().
"""

import sys

from . import _pipeprof as _c

WINDOWS = (1, 10, 60, 0)  # 0: every complete interval of the session
SESSION = 0


def _zone_windows(name):
    out = {}
    for w in WINDOWS:
        st = _c.live_zone(name, w)
        if isinstance(st, dict):
            st["total_ns"] = st["mean_ns"] * st["count"]
            out[w] = st
    return out


def _request_windows(metric):
    out = {}
    for w in WINDOWS:
        st = _c.live_request(metric, w)
        if isinstance(st, dict):
            out[w] = st
    return out


_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def _zone_slos_from_env():
    """Zone SLOs of PIPEPROF_SLO ("ttft=200ms,infer=5ms"): the names other
    than ttft, tpot and e2e, with their targets in seconds."""
    import os
    import re
    out = {}
    for item in os.environ.get("PIPEPROF_SLO", "").split(","):
        m = re.fullmatch(r"([^=]+)=([0-9.]+)(ns|us|ms|s)", item.strip())
        if m and m.group(1) not in ("ttft", "tpot", "e2e"):
            out[m.group(1)] = float(m.group(2)) * _UNITS[m.group(3)]
    return out


def _zone_slo(name, target_s):
    got = _c.live_zone_slo(name, int(round(target_s * 1e9)))
    if not isinstance(got, tuple):
        return {"target_s": target_s, "unavailable":
                "no zone of that name in this session"}
    count, met, uncertain = got
    return {"target_s": target_s, "count": count, "met": met,
            "violations": count - met - uncertain, "uncertain": uncertain,
            "compliance": met / count if count else None}


def summary(top=5, slo=None):
    """Per-zone statistics, top bottlenecks, requests and state, as plain
    Python data (dicts, lists, numbers, str). slo: {zone name: target in
    seconds} (default: the zone SLOs of PIPEPROF_SLO), each reported under
    "slos". See docs/python.md."""
    running = _c.is_running()
    out = {
        "running": running,
        "enabled": _c.is_enabled(),
        "output": _c.output_path(),
        "windows": list(WINDOWS),
        "live": None,
        "zones": {},
        "requests": {},
        "bottlenecks": [],
        "slos": {},
    }
    names = _c.live_zone_names()
    if not isinstance(names, list):  # a status
        out["live"] = ("not running" if names == _c.ENOTRUNNING
                       else "off (start(live=\"off\") or PIPEPROF_LIVE=off)"
                       if names == _c.ENOTSUP else "unavailable")
        return out
    # after stop(): the session's figures as it ended
    out["live"] = "on" if running else "ended"
    for name, target in (slo if slo is not None
                         else _zone_slos_from_env()).items():
        out["slos"][name] = _zone_slo(name, float(target))
    for name in names:
        out["zones"][name] = _zone_windows(name)
    for key, metric in (("e2e", _c.LIVE_E2E), ("ttft", _c.LIVE_TTFT),
                        ("tpot", _c.LIVE_TPOT), ("itl", _c.LIVE_ITL)):
        got = _request_windows(metric)
        if got:
            out["requests"][key] = got
    # Bottlenecks: zones by time inside them over the session so far. This
    # is inclusive time (children included) as the live windows keep it;
    # the report's "top bottlenecks" rank self time from the whole trace.
    wide = SESSION
    ranked = []
    for name, ws in out["zones"].items():
        st = ws.get(wide)
        if st and st["count"]:
            ranked.append((st["total_ns"], name, st))
    ranked.sort(key=lambda r: (-r[0], r[1]))
    grand = sum(r[0] for r in ranked)
    for total, name, st in ranked[:max(int(top), 0)]:
        out["bottlenecks"].append({
            "name": name,
            "window": wide,
            "total_ns": total,
            "share": total / grand if grand else 0.0,
            "busy": (total / (st["seconds"] * 1e9)
                     if st["seconds"] else 0.0),
            "count": st["count"],
            "mean_ns": st["mean_ns"],
            "p99_ns": st["p99_ns"],
        })
    return out


def _ms(ns):
    return "%.3f" % (ns / 1e6)


def print_summary(window=SESSION, file=None, top=5):
    """Print summary() as a table: one line per zone over the given window
    (the last 1, 10 or 60 intervals, or 0: the session so far), then
    requests and the top bottlenecks."""
    if window not in WINDOWS:
        raise ValueError("pipeprof.print_summary: window must be one of %s"
                         % (WINDOWS,))
    s = summary(top=top)
    f = file or sys.stdout
    if s["live"] == "not running":
        print("pipeprof: not running", file=f)
        return
    if s["live"] not in ("on", "ended"):
        print("pipeprof: live statistics %s" % s["live"], file=f)
        return
    rows = []
    secs = 0.0
    for name, ws in s["zones"].items():
        st = ws.get(window)
        if not st:
            continue
        secs = max(secs, st["seconds"])
        rows.append((st["total_ns"], name, st))
    rows.sort(key=lambda r: (-r[0], r[1]))
    what = ("the session so far" if window == SESSION
            else "last %d intervals" % window)
    if s["live"] == "ended":
        what += " (the session has ended)"
    print("pipeprof live summary: %s (%.1f s)" % (what, secs), file=f)
    w = max([len("zone")] + [len(r[1]) for r in rows])
    w = min(w, 40)
    head = ("%-*s %8s %9s %10s %10s %10s %10s %10s"
            % (w, "zone", "count", "rate/s", "mean ms", "p50 ms", "p90 ms",
               "p99 ms", "max ms"))
    print(head, file=f)
    for _, name, st in rows:
        print("%-*s %8d %9.1f %10s %10s %10s %10s %10s"
              % (w, name[:w], st["count"], st["rate"], _ms(st["mean_ns"]),
                 _ms(st["p50_ns"]), _ms(st["p90_ns"]), _ms(st["p99_ns"]),
                 _ms(st["max_ns"])), file=f)
    if not rows:
        print("(no zones yet: windows fill once an interval has closed)",
              file=f)
    for key, label in (("e2e", "request e2e"), ("ttft", "request ttft"),
                       ("tpot", "request tpot"), ("itl", "request itl")):
        st = s["requests"].get(key, {}).get(window)
        if st:
            print("%s: %d, p50 %s ms, p99 %s ms"
                  % (label, st["count"], _ms(st["p50_ns"]),
                     _ms(st["p99_ns"])), file=f)
    for name, o in s["slos"].items():
        if "unavailable" in o:
            print("SLO %s <= %s ms: unavailable: %s"
                  % (name, _ms(o["target_s"] * 1e9), o["unavailable"]),
                  file=f)
            continue
        print("SLO %s <= %s ms: %d of %d met (%.1f%%), %d violations%s"
              % (name, _ms(o["target_s"] * 1e9), o["met"], o["count"],
                 100.0 * (o["compliance"] or 0), o["violations"],
                 ", %d within the histogram's bucket of the target"
                 % o["uncertain"] if o["uncertain"] else ""), file=f)
    if s["bottlenecks"]:
        print("top bottlenecks (time inside the zone, the session so far):",
              file=f)
        for i, b in enumerate(s["bottlenecks"], 1):
            print("  %d. %s: %.1f%% (%s ms in %d calls, p99 %s ms)"
                  % (i, b["name"], 100 * b["share"], _ms(b["total_ns"]),
                     b["count"], _ms(b["p99_ns"])), file=f)
