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
# every few milliseconds that this script is still its parent.
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
cmd=
stop_hogs() {
  if [ ${#hogs[@]} -gt 0 ]; then
    kill "${hogs[@]}" 2>/dev/null
    wait "${hogs[@]}" 2>/dev/null
    hogs=()
  fi
}
# On a signal: stop the command too (with SIGTERM: a background command of
# a script ignores SIGINT), then the hogs.
on_signal() {
  if [ -n "$cmd" ]; then
    kill -TERM "$cmd" 2>/dev/null
    wait "$cmd" 2>/dev/null
  fi
  stop_hogs
  exit "$1"
}
trap stop_hogs EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
trap 'on_signal 129' HUP

me=$$
for ((k = 0; k < n; k++)); do
  (
    trap - EXIT INT TERM HUP
    # A busy loop; between rounds it checks that its parent is still this
    # script (a killed parent's children are handed to another process at
    # once, even while the dead parent waits to be reaped).
    ppid=$me
    while [ "$ppid" = "$me" ]; do
      for ((i = 0; i < 5000; i++)); do :; done
      read -r _ _ _ ppid _ </proc/$BASHPID/stat || ppid=
    done
  ) &
  hogs+=($!)
done
echo "with-cpu-hogs.sh: $n CPU hog(s) running (pids ${hogs[*]})" >&2

# In the background so that a signal's trap runs at once (bash runs traps
# only between foreground commands), with this script's standard input.
"$@" <&0 &
cmd=$!
wait "$cmd"
rc=$?
cmd=
stop_hogs
echo "with-cpu-hogs.sh: hogs stopped; command exited $rc" >&2
exit $rc
