#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Install the Debian packages that building and testing pipeprof needs,
# when some are missing. Quiet and idempotent when everything is there.
#
#   bash scripts/deps.sh          compiler, CMake, pkg-config, jansson, SQLite,
#                                 libmicrohttpd (the HTTP endpoint's
#                                 companion library, docs/http.md,
#                                 and libcurl, with which it merges a
#                                 program's endpoint into `pipeprof run
#                                 --http`'s),
#                                 libdw (elfutils: the CPU stack
#                                 samples' symbols, docs/internals/stacks.md),
#                                 FFmpeg's libraries (libavformat,
#                                 libavcodec, libswscale, libavutil: the
#                                 video demo, docs/video-demo.md),
#                                 the reference tools the integration tests
#                                 compare against (perf, GNU time), and
#                                 Debian's Python with what the binding
#                                 (bindings/python) builds, installs and
#                                 tests with: headers, setuptools, wheel,
#                                 pip, venv, pytest
#   bash scripts/deps.sh --fuzz   also clang and the libFuzzer runtime
#   bash scripts/deps.sh --torch  also PyTorch (CPU), torchvision and PyAV
#                                 (python3-torch, -torchvision, -av): the
#                                 binding's pipeprof.torch tests (skipped
#                                 without torch; CI installs it) and the
#                                 Python example (make demo-python)
#   bash scripts/deps.sh --browser  also Chromium, which the HTML report's
#                                 tests open pages in (skipped without it;
#                                 CI installs it and requires it), and
#                                 nodejs + npm unless `node` and `npm`
#                                 already run: the build bundles the
#                                 report's chart library (uPlot) with
#                                 `npm ci` (web/package-lock.json)
#   bash scripts/deps.sh --frameworks  also what the torch and ONNX Runtime
#                                 importer tests make real profiles with:
#                                 python3-torch, and nodejs + npm unless
#                                 `node` and `npm` already run (a Node.js
#                                 from elsewhere, as on these machines, is
#                                 kept: Debian's npm conflicts with it).
#                                 tests/import/ort/make_profile.sh then
#                                 installs onnxruntime-node with npm
#   bash scripts/deps.sh --http   also Prometheus (its promtool checks the
#                                 /metrics page; CI installs it and
#                                 requires it: PP_REQUIRE_HTTP)
#   bash scripts/deps.sh --check  only report; exit 1 if something is missing
#
# As root it runs apt-get itself; otherwise through `sudo -n` when that works
# without a password; otherwise it prints the command to run and exits 1.
set -euo pipefail

want=(gcc g++ make cmake pkg-config libjansson-dev libsqlite3-dev libyajl-dev
  libmicrohttpd-dev libcurl4-openssl-dev libavformat-dev libavcodec-dev libswscale-dev
  libavutil-dev libdw-dev python3
  linux-perf time python3-dev python3-setuptools python3-wheel python3-pip
  python3-venv python3-pytest)
fuzz=(clang libclang-rt-14-dev)
torch=(python3-torch python3-torchvision python3-av)
browser=(chromium)
http=(prometheus)
frameworks=(python3-torch)
check_only=0

for arg in "$@"; do
  case "$arg" in
  --fuzz) want+=("${fuzz[@]}") ;;
  --torch) want+=("${torch[@]}") ;;
  --browser)
    want+=("${browser[@]}")
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1
    then
      want+=(nodejs npm)
    fi
    ;;
  --http) want+=("${http[@]}") ;;
  --frameworks)
    want+=("${frameworks[@]}")
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1
    then
      want+=(nodejs npm)
    fi
    ;;
  --check) check_only=1 ;;
  -h | --help)
    awk 'NR > 3 && !/^#/ { exit } NR > 3 { sub(/^# ?/, ""); print }' "$0"
    exit 0
    ;;
  *)
    echo "deps.sh: unknown option '$arg' (try --help)" >&2
    exit 2
    ;;
  esac
done

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "deps.sh: not a Debian-like system (no dpkg-query); install by hand:" \
    "${want[*]}" >&2
  exit 1
fi

missing=()
for pkg in "${want[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  if [ "$status" != "installed" ]; then
    # python3 may come from elsewhere (pyenv, a venv): a working interpreter
    # on PATH is enough for the tests.
    if [ "$pkg" = python3 ] && command -v python3 >/dev/null 2>&1; then
      continue
    fi
    missing+=("$pkg")
  fi
done

[ "${#missing[@]}" -eq 0 ] && exit 0

install_cmd=(apt-get install -y --no-install-recommends "${missing[@]}")
if [ "$check_only" = 1 ]; then
  echo "deps.sh: missing packages: ${missing[*]}" >&2
  echo "  sudo ${install_cmd[*]}" >&2
  exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo=(sudo -n)
else
  echo "deps.sh: missing packages: ${missing[*]}; install them with:" >&2
  echo "  sudo apt-get update && sudo ${install_cmd[*]}" >&2
  exit 1
fi

echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive "${install_cmd[@]}" -qq \
  >/dev/null
