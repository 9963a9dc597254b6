#!/usr/bin/env bash
# THE TEST COMMAND: installs what is missing, builds, and runs every test:
#   1. the normal build, all tests (unit, integration through the real binaries, simulator,
#      deployment checks);
#   2. an AddressSanitizer + UndefinedBehaviorSanitizer build, all C++ tests again;
#   3. a ThreadSanitizer build, the tests where threads meet (loop handoff, gRPC pump, shutdown).
# Needs root for apt-get and for the tests that use loop devices and mounts.
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$top"
jobs="$(nproc 2>/dev/null || echo 2)"

step() { printf '\n==== %s ====\n' "$*"; }

step "installing missing Debian packages"
scripts/install-deps.sh

step "normal build"
scripts/build.sh build
step "all tests (normal build)"
ctest --test-dir build -j"$jobs" --output-on-failure

step "ASan + UBSan build"
scripts/build.sh build-asan -DOXIDE_CSI_SANITIZE=ON -DOXIDE_CSI_BUILD_BENCH=OFF
step "C++ tests under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -j"$jobs" --output-on-failure -LE deploy

step "TSan build (threads meet in the loop handoff and the gRPC completion pump)"
cmake -S . -B build-tsan -G "Unix Makefiles" -DOXIDE_CSI_TSAN=ON -DOXIDE_CSI_BUILD_BENCH=OFF >/dev/null
cmake --build build-tsan -j"$jobs" --target unit_tests integration_tests
step "threaded tests under TSan"
TSAN_OPTIONS="halt_on_error=1 suppressions=$top/test/tsan.supp" \
  ctest --test-dir build-tsan -j"$jobs" --output-on-failure -R 'EventLoop|Shutdown|Identity|Cli'

step "all tests passed"
