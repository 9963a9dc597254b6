#!/usr/bin/env bash
# Runs tests over and over and prints how often each failed: a test that fails once in 100 runs
# is a defect, and CI never retries.
#   scripts/repeat-test.sh NAME N [BUILD_DIR]
# NAME is a ctest regular expression (an exact test name, e.g. 'FormatCrashTest\.', or
# '^Shutdown\.'); every test it matches runs N times, each run a new ctest process as in CI,
# one test at a time. BUILD_DIR defaults to build/. The output of every failed run is kept
# under /tmp/oxide-csi-repeat.*/ and its path printed (the folder is removed when all passed).
# Exit status 1 when any run failed, including a run ctest could not start (ctest's own status).
# Environment such as OXIDE_CSI_TEST_PLUGIN_BIN or CI=true passes through to the tests.
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ $# -lt 2 ] || ! [[ "$2" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/repeat-test.sh NAME N [BUILD_DIR]   (NAME: a ctest -R expression)" >&2
  exit 2
fi
name="$1"
runs="$2"
build="${3:-$top/build}"
count=$(ctest --test-dir "$build" -N -R "$name" | awk '/^Total Tests:/ { print $3 }')
if [ "${count:-0}" -eq 0 ]; then
  echo "repeat-test: no test in $build matches '$name' (see ctest --test-dir $build -N)" >&2
  exit 2
fi
work="$(mktemp -d /tmp/oxide-csi-repeat.XXXXXX)"
echo "repeat-test: $count test(s) matching '$name', $runs runs each; failed runs' output in $work"
started=$(date +%s)
failed_runs=0
for ((i = 1; i <= runs; i++)); do
  if ! ctest --test-dir "$build" -R "$name" --no-tests=error --output-junit "$work/run-$i.xml" \
    >"$work/run-$i.log" 2>&1; then
    echo "  run $i failed: $work/run-$i.log"
    failed_runs=$((failed_runs + 1))
  else
    rm -f "$work/run-$i.log"
  fi
done
status=0
python3 - "$work" "$runs" "$(($(date +%s) - started))" "$failed_runs" <<'PY' || status=$?
import glob, sys
import xml.etree.ElementTree as ET
work, runs, seconds, failed_runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
failed, ran, skipped = {}, {}, {}
for path in glob.glob(f"{work}/run-*.xml"):
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name")
        if case.find("skipped") is not None:
            skipped[name] = skipped.get(name, 0) + 1
            continue
        ran[name] = ran.get(name, 0) + 1
        bad = case.find("failure") is not None or case.get("status") == "fail"
        failed[name] = failed.get(name, 0) + (1 if bad else 0)
total_failed = 0
for name in sorted(set(ran) | set(skipped)):
    f, n = failed.get(name, 0), ran.get(name, 0)
    total_failed += f
    rate = 100.0 * f / n if n else 0.0
    print(f"  {name}: {f} of {n} runs failed ({rate:.1f} %)"
          + (f"; skipped in {skipped[name]} runs" if name in skipped else ""))
print(f"repeat-test: {failed_runs} of {runs} ctest runs failed ({total_failed} test failures); "
      f"{seconds} s")
sys.exit(1 if total_failed or failed_runs else 0)
PY
[ "$status" -eq 0 ] && rm -rf "$work"
exit "$status"
