#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench/diff_rates.sh: how often `pipeprof diff` cries wolf, and how often
# it catches a real slowdown, on a busy machine. Figures, not a test: it
# prints rates and always exits 0 once it has run.
#
# Method (docs/diff.md, "Measured error rates"): build/pipeprof-diff-workload
# (bench/diff/workload.c) runs ITERS zones "infer" of fixed floating-point
# work; DIFF_SLOWDOWN=0.10 / 0.20 adds exactly 10% / 20% work. While HOGS
# CPU hogs (the same program with --hog: busy and idle stretches of
# 20..200 ms at random) run beside them, the script records
# 2 * PAIRS * RUNS base runs and PAIRS * RUNS runs of each slowdown,
# interleaved (base, +10%, +20%, base, ...) so that the machine's changing
# load falls on all three alike; then it compares disjoint sets of runs:
#
#   false positives, 1 run per side:  base[2k] vs base[2k+1]
#   false positives, RUNS per side:   the even runs of base[2kR .. 2kR+2R-1]
#                                     vs the odd ones (alternating, as a CI
#                                     job should run base and new)
#   detection, 1 run per side:        base[k] vs slow[k]
#   detection, RUNS per side:         base[kR .. kR+R-1] vs slow[kR ..]
#
# for k = 0 .. PAIRS-1, and counts how many comparisons exit 1 (the gate)
# and how many call the "infer" row, the wall time and the CPU time worse,
# once for each minimum effect in MIN_EFFECTS (the same recorded runs).
#
# Usage: bench/diff_rates.sh   (environment: BUILD=build PAIRS=20 RUNS=5
#        ITERS=100 WORK=400000 HOGS=1 MIN_EFFECTS="5 10" KEEP=0)
set -eu

BUILD=${BUILD:-build}
PAIRS=${PAIRS:-20}
RUNS=${RUNS:-5}
ITERS=${ITERS:-100}
WORK=${WORK:-400000}
HOGS=${HOGS:-1}
MIN_EFFECTS=${MIN_EFFECTS:-5 10}
KEEP=${KEEP:-0}
PP=$BUILD/pipeprof
WL=$BUILD/pipeprof-diff-workload

for b in "$PP" "$WL"; do
  if [ ! -x "$b" ]; then
    echo "diff_rates.sh: $b not found: run 'make build' first" >&2
    exit 2
  fi
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/pp-diff-rates.XXXXXX")
hogs=""
cleanup() {
  for p in $hogs; do kill "$p" 2>/dev/null || true; done
  if [ "$KEEP" = 1 ]; then echo "runs kept in $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT INT TERM

nbase=$((2 * PAIRS * RUNS))
nslow=$((PAIRS * RUNS))
t0=$(date +%s)
h=0
while [ "$h" -lt "$HOGS" ]; do
  "$WL" --hog 3600 &
  hogs="$hogs $!"
  h=$((h + 1))
done

record() { # name slowdown
  PIPEPROF=1 PIPEPROF_MODE=trace PIPEPROF_OUT="$dir/$1.pptrace" \
    DIFF_SLOWDOWN=$2 "$WL" --iters "$ITERS" --work "$WORK"
}

i=0
while [ "$i" -lt "$nbase" ]; do
  record "b$i" 0
  if [ "$i" -lt "$nslow" ]; then
    record "s10_$i" 0.10
    record "s20_$i" 0.20
  fi
  i=$((i + 1))
done
t1=$(date +%s)

# files PREFIX FIRST COUNT [STEP]: the paths of runs PREFIX<FIRST>,
# PREFIX<FIRST + STEP>, ... (COUNT of them)
files() {
  j=$2
  c=0
  while [ "$c" -lt "$3" ]; do
    printf '%s ' "$dir/$1$j.pptrace"
    j=$((j + ${4:-1}))
    c=$((c + 1))
  done
}

# compare LABEL: reads "BASE-FILES|NEW-FILES" lines on stdin
compare() {
  n=0 gate=0 zone=0 wall=0 cpu=0
  while IFS='|' read -r base new; do
    # shellcheck disable=SC2086 # lists of paths without spaces
    out=$("$PP" diff --min-effect "$MIN_EFFECT" $base -- $new) && rc=0 ||
      rc=$?
    if [ "$rc" -gt 1 ]; then
      echo "diff_rates.sh: pipeprof diff failed ($rc)" >&2
      exit 2
    fi
    n=$((n + 1))
    [ "$rc" -eq 1 ] && gate=$((gate + 1))
    row() { printf '%s\n' "$out" | grep "^$1 " | grep -q 'worse'; }
    row infer && zone=$((zone + 1))
    row 'wall time' && wall=$((wall + 1))
    row 'CPU time' && cpu=$((cpu + 1))
  done
  printf '%-34s %3d  gate %3d (%5.1f%%)  infer %3d  wall %3d  cpu %3d\n' \
    "$1" "$n" "$gate" "$(echo "$gate $n" | awk '{print 100*$1/$2}')" \
    "$zone" "$wall" "$cpu"
}

for MIN_EFFECT in $MIN_EFFECTS; do
  echo "pipeprof diff error rates: $PAIRS comparisons each, $RUNS runs per" \
    "side for the run-level rows, min effect $MIN_EFFECT%, $HOGS hog(s)," \
    "ITERS=$ITERS WORK=$WORK"
  echo "(counts of comparisons calling the row worse; gate = exit status 1)"
  k=0
  while [ "$k" -lt "$PAIRS" ]; do
    echo "$(files b $((2 * k)) 1)|$(files b $((2 * k + 1)) 1)"
    k=$((k + 1))
  done | compare "identical, 1 run per side"
  k=0
  while [ "$k" -lt "$PAIRS" ]; do
    echo "$(files b $((2 * k * RUNS)) "$RUNS" 2)|$(files b $((2 * k * RUNS + 1)) "$RUNS" 2)"
    k=$((k + 1))
  done | compare "identical, $RUNS runs per side"
  for s in 10 20; do
    k=0
    while [ "$k" -lt "$PAIRS" ]; do
      echo "$(files b "$k" 1)|$(files "s${s}_" "$k" 1)"
      k=$((k + 1))
    done | compare "+$s% work, 1 run per side"
    k=0
    while [ "$k" -lt "$PAIRS" ]; do
      echo "$(files b $((k * RUNS)) "$RUNS")|$(files "s${s}_" $((k * RUNS)) "$RUNS")"
      k=$((k + 1))
    done | compare "+$s% work, $RUNS runs per side"
  done
  echo
done
t2=$(date +%s)
echo "runs: $((nbase + 2 * nslow)) in $((t1 - t0)) s; comparisons in" \
  "$((t2 - t1)) s"
