#!/usr/bin/env bash
# Configures and builds the project into a build directory (default: build/). The one place that
# knows how a build directory is configured; scripts/demo.sh and scripts/test.sh both call it.
#   scripts/build.sh [BUILD_DIR] [--target NAME]... [extra cmake -D options...]
# Without --target everything is built (tests and benchmarks included). Each --target builds
# only that target and what it needs (scripts/demo.sh: --target demo_programs).
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="$top/build"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  build_dir="$1"
  shift
fi
targets=()
cmake_options=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target) targets+=(--target "$2"); shift 2 ;;
    --target=*) targets+=(--target "${1#--target=}"); shift ;;
    *) cmake_options+=("$1"); shift ;;
  esac
done
jobs="$(nproc 2>/dev/null || echo 2)"
cmake -S "$top" -B "$build_dir" -G "Unix Makefiles" "${cmake_options[@]}" >/dev/null
cmake --build "$build_dir" -j"$jobs" "${targets[@]}"
