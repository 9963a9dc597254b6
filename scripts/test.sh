#!/usr/bin/env bash
# THE TEST COMMAND: installs what is missing, builds, and runs every test.
#   scripts/test.sh           everything (what CI runs, through .ci/run):
#     0. the layout of every C++ source against .clang-format;
#     1. the normal build (Release, warnings are errors), all its tests (unit, integration through
#        the real binaries, simulator, deployment checks), the public CSI conformance suite
#        (csi-sanity, two passes), and the container image built with those binaries and checked
#        from inside (buildah);
#     2. an AddressSanitizer + UndefinedBehaviorSanitizer build of the programs and of the tests
#        whose code under test runs in the test program; those tests, then the normal build's
#        client tests and csi-sanity against the instrumented plugin, simulator and CLI;
#     3. a ThreadSanitizer build of the plugin and of the tests where threads meet (loop handoff,
#        gRPC pump, store, shutdown), and those tests.
#   scripts/test.sh --quick   the inner loop while working: step 0 and step 1 without csi-sanity
#                             and the image; no sanitizers.
# Every step's wall time and the total are printed at the end. Under CI=true a suite that cannot
# run here (no root, no loop devices, no cgroup, no csi-sanity, no image tools) fails the run;
# elsewhere each skip is listed in one line at the end. Nothing is retried.
# Compiles go through ccache (cmake/CompilerCache.cmake): a second run, even from a fresh clone
# in another folder, takes almost every object from the cache. Needs root for apt-get and for the
# tests that use loop devices and mounts.
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$top"
jobs="$(nproc 2>/dev/null || echo 2)"

quick=0
case "${1:-}" in
  "") ;;
  --quick) quick=1 ;;
  *)
    echo "usage: scripts/test.sh [--quick]" >&2
    exit 2
    ;;
esac

# shellcheck source=lib/test-steps.sh
. "$top/scripts/lib/test-steps.sh"
steps_init

if [ "${CI:-}" = true ]; then
  echo "CI=true: a test that cannot run on this machine fails the run instead of skipping"
fi

step "installing missing Debian packages"
scripts/install-deps.sh

step "layout of the C++ sources (.clang-format)"
git ls-files -- '*.cc' '*.h' ':!proto/*' | xargs clang-format --dry-run -Werror

step "normal build (Release)"
# Every option that decides what is built and tested is set, whatever an earlier configure left.
scripts/build.sh build -DCMAKE_BUILD_TYPE=Release -DOXIDE_CSI_WERROR=ON -DOXIDE_CSI_BUILD_TESTS=ON \
  -DOXIDE_CSI_BUILD_CLIENT_TESTS=ON -DOXIDE_CSI_BUILD_BENCH=ON -DOXIDE_CSI_SANITIZE=OFF \
  -DOXIDE_CSI_TSAN=OFF
ccache_line
step "all tests (normal build)"
run_ctest --test-dir build -j"$jobs" --output-on-failure

if [ "$quick" = 1 ]; then
  steps_done "quick checks passed (no sanitizers, csi-sanity or image: scripts/test.sh runs those)"
  exit 0
fi

step "csi-sanity, the public CSI conformance suite (plugin --mode=all, simulator with --hotplug)"
run_script test/conformance/csi-sanity.sh build
step "csi-sanity without --hotplug (the real Oxide rule: attach only to a stopped instance)"
run_script test/conformance/csi-sanity.sh build --no-hotplug

step "container image: the Containerfile's runtime stage with these binaries, checked inside"
run_script test/deploy/image-test.sh build/src/app/oxide-csi-plugin build/src/cli/oxide-csi-ctl

# The sanitizer builds carry debug information (RelWithDebInfo) so that reports name lines.
sanitizer_build=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DOXIDE_CSI_WERROR=ON -DOXIDE_CSI_BUILD_TESTS=ON
  -DOXIDE_CSI_BUILD_BENCH=OFF -DOXIDE_CSI_BUILD_CLIENT_TESTS=OFF)

step "ASan + UBSan build (the programs and the in-process tests)"
scripts/build.sh build-asan "${sanitizer_build[@]}" -DOXIDE_CSI_SANITIZE=ON -DOXIDE_CSI_TSAN=OFF
ccache_line
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
step "in-process tests under ASan + UBSan"
run_ctest --test-dir build-asan -j"$jobs" --output-on-failure -LE deploy
step "client tests against the ASan + UBSan plugin, simulator and CLI"
OXIDE_CSI_TEST_PLUGIN_BIN="$top/build-asan/src/app/oxide-csi-plugin" \
  OXIDE_CSI_TEST_SIM_BIN="$top/build-asan/src/sim/oxide-sim" \
  OXIDE_CSI_TEST_CTL_BIN="$top/build-asan/src/cli/oxide-csi-ctl" \
  run_ctest --test-dir build -j"$jobs" --output-on-failure -L client
step "csi-sanity against the ASan + UBSan plugin (both passes)"
run_script test/conformance/csi-sanity.sh build-asan
run_script test/conformance/csi-sanity.sh build-asan --no-hotplug
unset ASAN_OPTIONS UBSAN_OPTIONS

step "TSan build (the plugin and the tests where its loop, gRPC pump, store and shutdown threads meet)"
scripts/build.sh build-tsan "${sanitizer_build[@]}" -DOXIDE_CSI_TSAN=ON -DOXIDE_CSI_SANITIZE=OFF \
  --target oxide-csi-plugin --target unit_tests --target node_unit_tests
ccache_line
step "threaded tests under TSan"
# The loop's cross-thread queue and the loop <-> store thread hand-offs (group commit, the node
# service's writes), in TSan-built tests; then the process-level tests with the normal test
# client driving the TSan-built plugin. A sanitizer report in the plugin's log fails the test
# that started it. (gRPC from Debian is not TSan-built: test/tsan.supp lists the false reports
# inside it.)
export TSAN_OPTIONS="halt_on_error=1 suppressions=$top/test/tsan.supp"
run_ctest --test-dir build-tsan --output-on-failure \
  -R '^(EventLoop|GroupCommitTest|MirrorTable|VolumeStoreTest|NodeVolumeStore|NodeDurabilityTest)\.'
OXIDE_CSI_TEST_PLUGIN_BIN="$top/build-tsan/src/app/oxide-csi-plugin" \
  run_ctest --test-dir build -j"$jobs" --output-on-failure \
  -R '^(Identity|Modes/IdentityInMode|Endpoint|Startup|Secrets|Unimplemented|Cli|ControllerTest|SlowAttachTest|WrongTokenTest|MissingProjectTest|DebugLogTest|ErrorCodesTest|HostileInputTest|OldClientTest|AdvertisingV1_10Test|LifecycleTest|CsiSnapshotTest|CsiSnapshotQuotaTest|SlowCsiSnapshotTest|SnapshotE2E|NodeTest|NodeWithSimulator|FsTypes/NodeFsLifecycle)\.|^Shutdown\.(Sigterm|AnIdle)'
unset TSAN_OPTIONS

steps_done "all tests passed"
