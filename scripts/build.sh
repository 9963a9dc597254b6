#!/usr/bin/env bash
# Configures and builds the project into a build directory (default: build/).
#   scripts/build.sh [BUILD_DIR] [extra cmake -D options...]
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${1:-$top/build}"
shift || true
jobs="$(nproc 2>/dev/null || echo 2)"
cmake -S "$top" -B "$build_dir" -G "Unix Makefiles" "$@" >/dev/null
cmake --build "$build_dir" -j"$jobs"
