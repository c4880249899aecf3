#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Make a real ONNX Runtime profile for the importer's tests:
#
#   tests/import/ort/make_profile.sh [options] OUT_JSON WORK_DIR
#
# 1. exports the small models of export_models.py with torch.onnx.export
#    (Debian's /usr/bin/python3 with python3-torch; PP_TORCH_PYTHON picks
#    another interpreter) into WORK_DIR/models/;
# 2. installs onnxruntime-node (version ORT_VERSION below) from the npm
#    registry into WORK_DIR/ort-node-VERSION/ with `npm install
#    --ignore-scripts`, once: later calls with the same WORK_DIR reuse it
#    (the package's install script would fetch CUDA parts from a host these
#    machines cannot reach; the CPU runtime is in the package itself);
# 3. runs run_profile.js: the model several times with profiling on, and
#    moves the profile ONNX Runtime wrote to OUT_JSON. Beside it,
#    OUT_JSON minus ".json" plus ".meta.json" records the ORT version, the
#    options, the file name ORT chose and the wall clock just before the
#    session was created (ORT's ts are µs from about that moment).
#
# WORK_DIR is a build folder, never the source tree; it is created if
# missing. Calls sharing a WORK_DIR may run at once (flock).
#
# Options (defaults in brackets; see README.md for what each changes):
#   --model cnn|attn     which model [cnn]
#   --runs N             inference runs in the session [6]
#   --batches B,B,...    batch size of each run, in turn [1,4]
#   --intra N            intra-op threads [2]
#   --inter N            inter-op threads, used with --mode parallel [1]
#   --mode M             sequential | parallel [sequential]
#   --opt L              graph optimisation: disabled|basic|extended|all [all]
#   --ort-version V      another onnxruntime-node version (its node binding
#                        must honour enableProfiling: 1.20.1 does not)
#   --allow-skip         when node, npm, the npm registry or torch is
#                        unavailable, print "skipped: REASON" and exit 0
#                        (also PP_ORT_ALLOW_SKIP=1). A failure of ONNX
#                        Runtime itself is never skipped.
#
# Without --allow-skip such a missing piece is one line on stderr and exit 1;
# usage errors exit 2. Environment: NODE, NPM, PP_TORCH_PYTHON override the
# programs used.
set -euo pipefail

# Pinned: the newest onnxruntime-node release when this was written; its
# node binding honours enableProfiling/profileFilePrefix (1.20.1's ignores
# them and writes nothing); its linux-x64 CPU runtime needs glibc >= 2.28
# and N-API 6 and ran on Node 20 (this machine) and Debian 12's Node 18.
# The golden profiles under tests/fixtures/ort/ come from this version.
ORT_VERSION=1.30.0

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prog=make_profile.sh
allow_skip=${PP_ORT_ALLOW_SKIP:-0}
model=cnn
run_args=()

usage() {
  awk 'NR > 3 && !/^#/ { exit } NR > 3 { sub(/^# ?/, ""); print }' "$0"
}

while [ $# -gt 0 ]; do
  case "$1" in
  --allow-skip) allow_skip=1; shift ;;
  --model) model=${2:?}; shift 2 ;;
  --runs | --batches | --intra | --inter | --mode | --opt)
    [ $# -ge 2 ] || { echo "$prog: $1 needs a value" >&2; exit 2; }
    run_args+=("$1" "$2"); shift 2 ;;
  --ort-version) ORT_VERSION=${2:?}; shift 2 ;;
  -h | --help) usage; exit 0 ;;
  --) shift; break ;;
  -*) echo "$prog: unknown option '$1' (try --help)" >&2; exit 2 ;;
  *) break ;;
  esac
done
if [ $# -ne 2 ]; then
  echo "usage: $prog [options] OUT_JSON WORK_DIR (try --help)" >&2
  exit 2
fi
out=$1
work=$2

case "$model" in
cnn) shape=3,32,32 ;;
attn) shape=16,32 ;;
*) echo "$prog: unknown model '$model' (cnn or attn)" >&2; exit 2 ;;
esac

# A piece this needs is missing: skip or fail, in one line.
unavailable() {
  if [ "$allow_skip" = 1 ]; then
    echo "skipped: $*"
    exit 0
  fi
  echo "$prog: $*" >&2
  exit 1
}

node=${NODE:-node}
npm=${NPM:-npm}
py=${PP_TORCH_PYTHON:-/usr/bin/python3}
hint="install them: bash scripts/deps.sh --frameworks"
command -v "$node" >/dev/null 2>&1 || unavailable "node not found ($hint)"
command -v "$npm" >/dev/null 2>&1 || unavailable "npm not found ($hint)"
"$py" -c 'import torch' >/dev/null 2>&1 ||
  unavailable "$py cannot import torch ($hint)"

mkdir -p "$work"
work=$(cd "$work" && pwd)
ort_dir=$work/ort-node-$ORT_VERSION
pkg_json=$ort_dir/node_modules/onnxruntime-node/package.json

installed_version() {
  [ -f "$pkg_json" ] &&
    "$node" -p "require(process.argv[1]).version" "$pkg_json" 2>/dev/null
}

install_ort() {
  local tmp log t0 why secs
  [ "$(installed_version)" = "$ORT_VERSION" ] && return 0
  log=$work/npm-install-$ORT_VERSION.log
  tmp=$(mktemp -d "$work/.ort-node-XXXXXX")
  printf '{"private": true, "dependencies": {"onnxruntime-node": "%s"}}\n' \
    "$ORT_VERSION" >"$tmp/package.json"
  t0=$(date +%s.%N)
  if ! (cd "$tmp" && "$npm" install --ignore-scripts --no-audit --no-fund \
    --fetch-timeout=120000 --fetch-retries=1 >"$log" 2>&1); then
    why=$(grep -m1 -E '^npm (ERR!|error) (code|network|[0-9]{3}|.*E[A-Z]+)' \
      "$log" || true)
    rm -rf "$tmp"
    unavailable "npm install onnxruntime-node@$ORT_VERSION failed" \
      "(${why:-see log}; is the npm registry reachable?); log: $log"
  fi
  rm -rf "$ort_dir"
  mv "$tmp" "$ort_dir"
  [ "$(installed_version)" = "$ORT_VERSION" ] || {
    echo "$prog: npm installed no onnxruntime-node $ORT_VERSION in $ort_dir" >&2
    exit 1
  }
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  echo "$prog: installed onnxruntime-node $ORT_VERSION in $ort_dir" \
    "($secs s)" >&2
}

{
  if command -v flock >/dev/null 2>&1; then
    flock 9
  fi
  install_ort
  # Exporting takes about a second: always redo it, so the models match
  # this checkout's export_models.py.
  "$py" "$here/export_models.py" "$work/models" >"$work/export.log" 2>&1 || {
    echo "$prog: exporting the models failed; log: $work/export.log" >&2
    exit 1
  }
} 9>"$work/.lock"

case "$out" in
*.json) meta=${out%.json}.meta.json ;;
*) meta=$out.meta.json ;;
esac
mkdir -p "$(dirname "$out")"
exec "$node" "$here/run_profile.js" --ort "$ort_dir" \
  --model "$work/models/$model.onnx" --shape "$shape" --out "$out" \
  --meta "$meta" ${run_args[@]+"${run_args[@]}"}
