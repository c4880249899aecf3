#!/bin/bash
# Remake the seeds of fuzz_salvage (fuzz/corpus/salvage/) from a build of
# the library: bash fuzz/salvage-seeds.sh [BUILD_DIR]. The arena's layout
# is this machine's; run it again when ring/arena.h changes.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=gnu11 -O1 -I"$here/src" -I"$here/include" \
  "$here/fuzz/salvage_seeds.c" -o "$tmp/seeds" -L"$build" -lpipeprof \
  -Wl,-rpath,"$build" -lpthread
mkdir -p "$tmp/rings"
rm -f "$here"/fuzz/corpus/salvage/*.rings
"$tmp/seeds" "$tmp/rings" "$here/fuzz/corpus/salvage"
ls -l "$here/fuzz/corpus/salvage"
