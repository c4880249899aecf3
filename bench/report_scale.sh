#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench/report_scale.sh: what `pipeprof report` and `pipeprof export
# --format json` cost on a large trace — peak RSS and events per second —
# against reading the same file's bytes (cat > /dev/null) in the same run.
# Figures, not a test: it prints them and exits 0 once it has run.
#
# A trace of EVENTS events is recorded by build/pipeprof-tracegen
# (bench/report/tracegen.c) into DIR, then each command runs RUNS times
# under /usr/bin/time; the best wall time and the largest RSS are shown,
# with user+system CPU seconds (on a busy machine CPU time is the steadier
# figure of the two).
#
# Usage: bench/report_scale.sh   (environment: BUILD=build EVENTS=20000000
#        RUNS=3 DIR=/dev/shm or /tmp KEEP=0 OLD=path/to/an/older/pipeprof)
set -eu

BUILD=${BUILD:-build}
EVENTS=${EVENTS:-20000000}
RUNS=${RUNS:-3}
KEEP=${KEEP:-0}
OLD=${OLD:-}
if [ -z "${DIR:-}" ]; then
  if [ -w /dev/shm ] && [ "$EVENTS" -le 50000000 ]; then DIR=/dev/shm; else DIR=${TMPDIR:-/tmp}; fi
fi
PP=$BUILD/pipeprof
GEN=$BUILD/pipeprof-tracegen
for f in "$PP" "$GEN" /usr/bin/time; do
  [ -x "$f" ] || { echo "report_scale: $f missing (make build; apt install time)" >&2; exit 1; }
done
TRACE=$DIR/pp-report-scale-$$.pptrace
cleanup() { [ "$KEEP" = 1 ] || rm -f "$TRACE"; }
trap cleanup EXIT INT TERM

"$GEN" "$TRACE" "$EVENTS"
BYTES=$(stat -c %s "$TRACE")
N=$("$PP" export --format json "$TRACE" | sed -n 's/.*"events_read":\([0-9]*\).*/\1/p' | head -1)
DROP=$("$PP" report "$TRACE" | sed -n 's/^dropped events: *//p')
echo "trace: $N events recorded ($DROP dropped), $BYTES bytes"

# One command RUNS times: best wall s, max RSS KiB, best CPU s.
measure() {
  best=; rss=0; cpu=
  i=0
  while [ "$i" -lt "$RUNS" ]; do
    out=$( { /usr/bin/time -f '%e %M %U %S' "$@" > /dev/null; } 2>&1 | tail -1)
    set -- "$@"
    w=$(echo "$out" | cut -d' ' -f1); m=$(echo "$out" | cut -d' ' -f2)
    c=$(echo "$out" | awk '{print $3 + $4}')
    best=$(awk -v a="${best:-1e9}" -v b="$w" 'BEGIN{print (b < a) ? b : a}')
    cpu=$(awk -v a="${cpu:-1e9}" -v b="$c" 'BEGIN{print (b < a) ? b : a}')
    [ "$m" -gt "$rss" ] && rss=$m
    i=$((i + 1))
  done
  echo "$best $rss $cpu"
}

row() { # label wall rss cpu
  awk -v l="$1" -v w="$2" -v r="$3" -v c="$4" -v n="$N" -v base="$BASE" 'BEGIN{
    printf "%-28s %8.2f s %8.2f s cpu %8.1f MiB %8.1f M events/s (cpu: %.1f)  %6.1fx cat\n",
      l, w, c, r / 1024, n / w / 1e6, (c > 0 ? n / c / 1e6 : 0), w / (base > 0 ? base : 1e-9) }'
}

set -- $(measure cat "$TRACE"); BASE=$1
row "cat (baseline)" "$1" "$2" "$3"
set -- $(measure "$PP" report "$TRACE"); row "pipeprof report" "$1" "$2" "$3"
set -- $(measure "$PP" export --format json "$TRACE"); row "pipeprof export --format json" "$1" "$2" "$3"
if [ -n "$OLD" ]; then
  set -- $(measure "$OLD" report "$TRACE"); row "old pipeprof report" "$1" "$2" "$3"
fi
