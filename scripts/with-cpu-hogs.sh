#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Run a command with CPU hogs beside it: plain busy loops, one per core
# (PP_HOGS=N for another count), so that the command competes for every
# core as on a machine busy with other work. `make test-loaded` runs the
# test suite this way; no test may fail because the machine is loaded.
#
#   bash scripts/with-cpu-hogs.sh COMMAND [ARGS...]
#
# Exits with the command's status. The hogs are killed when the command
# ends, when this script is interrupted (INT, TERM, HUP), and, should this
# script itself be killed with SIGKILL, by themselves: each hog checks
# about every few milliseconds that this script is still alive.
set -u

if [ $# -eq 0 ]; then
  echo "usage: with-cpu-hogs.sh COMMAND [ARGS...]" >&2
  exit 2
fi

n=${PP_HOGS:-$(nproc 2>/dev/null || echo 2)}
case $n in
'' | *[!0-9]*)
  echo "with-cpu-hogs.sh: bad PP_HOGS '$n' (expected a number)" >&2
  exit 2
  ;;
esac

hogs=()
stop_hogs() {
  if [ ${#hogs[@]} -gt 0 ]; then
    kill "${hogs[@]}" 2>/dev/null
    wait "${hogs[@]}" 2>/dev/null
    hogs=()
  fi
}
trap stop_hogs EXIT
trap 'stop_hogs; exit 130' INT
trap 'stop_hogs; exit 143' TERM
trap 'stop_hogs; exit 129' HUP

me=$$
for ((k = 0; k < n; k++)); do
  (
    trap - EXIT INT TERM HUP
    # A busy loop; between rounds it checks that the script still runs.
    while kill -0 "$me" 2>/dev/null; do
      for ((i = 0; i < 20000; i++)); do :; done
    done
  ) &
  hogs+=($!)
done
echo "with-cpu-hogs.sh: $n CPU hog(s) running (pids ${hogs[*]})" >&2

"$@"
rc=$?
stop_hogs
echo "with-cpu-hogs.sh: hogs stopped; command exited $rc" >&2
exit $rc
