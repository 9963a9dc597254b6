#!/usr/bin/env bash
# Fuzzes every parser family with libFuzzer for SECONDS each (default 60):
#   scripts/fuzz.sh [SECONDS]
# Builds the targets of test/fuzz/ with clang-14 (-DOXIDE_CSI_FUZZ=ON, ASan+UBSan everywhere)
# into build-fuzz/, runs each over its seed corpus (test/fuzz/corpus/<target>/, read only) plus a
# working corpus in build-fuzz/corpus/<target>/ that grows between runs, and prints per target:
# executions per second, coverage (edges, features), the working corpus and crashes. A crash
# input lands as test/fuzz/corpus/<target>/crash-<sha1>, where the replay tests pick it up once
# it is fixed and committed. Exit status 1 when any target crashed.
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
jobs="$(nproc 2>/dev/null || echo 2)"
targets=(csi_requests oxide_responses settings node_text sim_requests kubernetes_objects)

"$top/scripts/install-deps.sh"
missing=()
for pkg in clang-14 libfuzzer-14-dev; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "fuzz: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build="$top/build-fuzz"
cmake -S "$top" -B "$build" -G "Unix Makefiles" -DCMAKE_C_COMPILER=clang-14 \
  -DCMAKE_CXX_COMPILER=clang++-14 -DOXIDE_CSI_FUZZ=ON -DOXIDE_CSI_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j"$jobs" --target fuzz_all

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
crashed=0
printf '\n%-16s %10s %12s %8s %8s %8s %8s %s\n' target seconds execs execs/s cov ft corpus crashes
for target in "${targets[@]}"; do
  seeds="$top/test/fuzz/corpus/$target"
  work="$build/corpus/$target"
  log="$build/fuzz-$target.log"
  mkdir -p "$work"
  before=$(find "$seeds" -name 'crash-*' | wc -l)
  status=0
  "$build/test/fuzz/fuzz_$target" "$work" "$seeds" -max_total_time="$seconds" -max_len=8192 \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$seeds/" \
    >"$log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  corpus=$(find "$work" -type f | wc -l)
  crashes=$(( $(find "$seeds" -name 'crash-*' | wc -l) - before ))
  if [ "$status" -ne 0 ] || [ "$crashes" -gt 0 ]; then
    crashed=1
    [ "$crashes" -gt 0 ] || crashes="exit $status"
  fi
  printf '%-16s %10s %12s %8s %8s %8s %8s %s\n' "$target" "$seconds" "${execs:-?}" "${rate:-?}" \
    "${cov:-?}" "${ft:-?}" "$corpus" "$crashes"
  [ "$status" -eq 0 ] || { echo "  see $log:"; grep -m5 -E 'ERROR|SUMMARY|deadly' "$log" | sed 's/^/    /'; }
done
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
exit "$crashed"
