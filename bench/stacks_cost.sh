#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The CPU stack sampler's cost (`pipeprof run --stacks HZ`,
# docs/internals/stacks.md): pipeprof-bench-stacks-busy (8 spinning
# threads calling libm, nothing of pipeprof linked) run under `pipeprof
# run` without stack samples, at 99 Hz and at 999 Hz, interleaved ROUNDS
# times (the machine's speed moves between runs). Printed per run:
# pipeprof's own CPU time (summary system.run.profiler_cpu_s: sampler,
# writer, the stacks' drain thread that unwinds and names), the samples
# and the lost ones; then per rate the median extra CPU over the runs
# without stacks, as a share of one core. A figure, never a test.
#
#   bash bench/stacks_cost.sh [BUILD_DIR] [ROUNDS] [SECONDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
secs=${3:-10}
bin=$build/pipeprof
busy=$build/pipeprof-bench-stacks-busy
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A cpu
for r in $(seq 1 "$rounds"); do
  for hz in 0 99 999; do
    args=()
    [ "$hz" != 0 ] && args=(--stacks "$hz")
    "$bin" run -q "${args[@]}" -o "$tmp/run" -- "$busy" 8 "$secs" \
      >"$tmp/out" 2>&1
    c=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['system']['run']['profiler_cpu_s'])" "$tmp/run/summary.json")
    s=$(grep -o '[0-9]* samples at' "$tmp/out" | grep -o '^[0-9]*' || echo 0)
    l=$(grep -o '[0-9]* samples lost' "$tmp/out" | grep -o '^[0-9]*' || echo 0)
    printf 'round %d  %4s Hz  pipeprof CPU %.3f s  samples %s  lost %s\n' \
      "$r" "$hz" "$c" "$s" "$l"
    cpu[$hz]="${cpu[$hz]:-} $c"
  done
done
python3 - "$secs" "${cpu[0]}" "${cpu[99]}" "${cpu[999]}" <<'PY'
import statistics, sys
secs = float(sys.argv[1])
base, r99, r999 = ([float(x) for x in a.split()] for a in sys.argv[2:5])
for hz, runs in (("99", r99), ("999", r999)):
    extra = [a - b for a, b in zip(runs, base)]
    print(f"{hz:>4} Hz: extra pipeprof CPU median {statistics.median(extra):.3f} s "
          f"over {secs:g} s = {100 * statistics.median(extra) / secs:.2f}% of one core "
          f"(runs: {', '.join(f'{e:+.3f}' for e in extra)})")
PY
