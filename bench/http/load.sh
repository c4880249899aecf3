#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The recording cost beside a scrape load (docs/http.md#cost): runs
# pipeprof-bench --quick --no-pipeline ROUNDS times without HTTP and
# ROUNDS times with PIPEPROF_HTTP serving while bench/http/scrape.py
# hammers /metrics from 4 threads, alternating, and prints the medians of
# the recording thread's zone cost (trace and stats mode), the process's
# CPU per zone, and the events dropped, with the ratio loaded / unloaded.
# A figure, never a test: the machine's load moves it.
#
# With SIEGE=1 the load is hostile instead (issue 26): 1,000 slowloris
# connections and 1,000 clients GETting /metrics as fast as answered
# (pipeprof-test-http-siege), whose counts are printed at the end.
#
#   [SIEGE=1] bash bench/http/load.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
py=${PP_PYTHON:-/usr/bin/python3}
bench="$build/pipeprof-bench"
[ -x "$bench" ] || { echo "load.sh: no $bench (make build)" >&2; exit 1; }
[ -e "$build/libpipeprof-http.so.0" ] ||
  { echo "load.sh: no $build/libpipeprof-http.so.0 (libmicrohttpd-dev)" >&2; exit 1; }
port=$($py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

one() { # $1: plain|loaded, $2: round
  local f="$out/$1.$2"
  if [ "$1" = loaded ]; then
    if [ "${SIEGE:-0}" = 1 ]; then
      "$build/pipeprof-test-http-siege" "$port" --slow 1000 --flood 1000 \
        --seconds 3600 > "$f.scrape" &
    else
      $py "$here/scrape.py" --port "$port" > "$f.scrape" &
    fi
    local sp=$!
    PIPEPROF_HTTP=$port PIPEPROF_HTTP_LIB="$build/libpipeprof-http.so.0" \
      "$bench" --quick --no-pipeline > "$f" 2>&1
    kill -TERM $sp; wait $sp || true
  else
    "$bench" --quick --no-pipeline > "$f" 2>&1
  fi
}

for r in $(seq 1 "$rounds"); do
  one plain "$r"
  one loaded "$r"
done

$py - "$out" "$rounds" <<'PY'
import re, statistics, sys, glob
out, rounds = sys.argv[1], int(sys.argv[2])
def figs(kind):
    rows = []
    for r in range(1, rounds + 1):
        t = open(f"{out}/{kind}.{r}").read()
        m = {}
        for mode in ("trace", "stats"):
            x = re.search(rf"zone, {mode} mode\s+([\d.]+) ns.*process CPU per zone ([\d.]+)", t)
            m[mode] = (float(x.group(1)), float(x.group(2)))
        d = re.search(r"dropped events: trace (\d+), stats (\d+)", t)
        m["dropped"] = int(d.group(1)) + int(d.group(2))
        rows.append(m)
    return rows
p, l = figs("plain"), figs("loaded")
med = lambda rows, mode, i: statistics.median(r[mode][i] for r in rows)
print(f"{rounds} rounds each, alternating; medians")
for mode in ("trace", "stats"):
    a, b = med(p, mode, 0), med(l, mode, 0)
    c, d = med(p, mode, 1), med(l, mode, 1)
    print(f"{mode} mode: recording thread {a:.2f} ns -> {b:.2f} ns "
          f"({b / a:.3f}x); process CPU per zone {c:.1f} -> {d:.1f} ns "
          f"({d / c:.2f}x)")
print("events dropped: unloaded", sum(r["dropped"] for r in p),
      "loaded", sum(r["dropped"] for r in l))
for f in sorted(glob.glob(f"{out}/loaded.*.scrape")):
    print(f.rsplit("/", 1)[1], open(f).read().strip())
PY
