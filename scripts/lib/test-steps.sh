# shellcheck shell=bash
# Sourced (bash) by scripts/test.sh: its steps, timed. `step NAME` ends the step before and starts
# NAME; `run_ctest ARGS...` runs ctest (selecting no test is an error) and keeps the names and
# reasons of the tests it skipped; `run_script CMD...` keeps the skip line a test script prints;
# `ccache_line` prints what the compiler cache did during the last build; `steps_done MESSAGE`
# prints every step's wall time, the total, the skips, and MESSAGE. When the script stops on a
# failure, the EXIT trap prints the same table and names the step that failed.

steps_names=()
steps_seconds=()
steps_current=""
steps_started=0
steps_run_started=0
steps_work=""
steps_finished=0
steps_ccache_before="0 0"

steps_init() {
  steps_run_started=$(date +%s)
  steps_work="$(mktemp -d /tmp/oxide-csi-test-steps.XXXXXX)"
  : >"$steps_work/skips"
  trap steps_on_exit EXIT
  steps_ccache_before="$(steps_ccache_counts)"
}

steps_end_current() {
  [ -n "$steps_current" ] || return 0
  steps_names+=("$steps_current")
  steps_seconds+=($(($(date +%s) - steps_started)))
  steps_current=""
}

step() {
  steps_end_current
  steps_current="$*"
  steps_started=$(date +%s)
  printf '\n==== %s ====\n' "$*"
}

steps_clock() { printf '%3dm%02ds' $(($1 / 60)) $(($1 % 60)); }

steps_table() {
  local i
  printf '\n==== wall times ====\n'
  for i in "${!steps_names[@]}"; do
    printf '  %s  %s\n' "$(steps_clock "${steps_seconds[$i]}")" "${steps_names[$i]}"
  done
  printf '  %s  total\n' "$(steps_clock $(($(date +%s) - steps_run_started)))"
  if [ -s "$steps_work/skips" ]; then
    printf '\n==== not tested here ====\n'
    awk -F'\t' '{ count[$1]++; if (!($1 in example)) example[$1] = $2 }
      END { for (r in count) printf "  %d test(s) skipped (e.g. %s): %s\n", count[r], example[r], r }' \
      "$steps_work/skips" | sort
  fi
}

# The failure path: the step that was running did not finish.
steps_on_exit() {
  local status=$?
  if [ "$steps_finished" = 0 ]; then
    local failed="$steps_current"
    steps_end_current
    steps_table
    printf '\n==== FAILED in step: %s (exit status %d) ====\n' "${failed:-?}" "$status"
  fi
  rm -rf "$steps_work"
}

steps_done() {
  steps_end_current
  steps_finished=1
  steps_table
  printf '\n==== %s ====\n' "$1"
}

# "hits misses" of the machine's compiler cache so far (0 0 without ccache).
steps_ccache_counts() {
  if ! command -v ccache >/dev/null 2>&1; then
    echo "0 0"
    return
  fi
  ccache --print-stats | awk '
    $1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { hits += $2 }
    $1 == "cache_miss" { misses = $2 }
    END { print hits + 0, misses + 0 }'
}

# What the compiler cache did since the last call (other builds on the machine at the same time
# would be counted too).
ccache_line() {
  command -v ccache >/dev/null 2>&1 || return 0
  local now hits_before misses_before hits_now misses_now
  now="$(steps_ccache_counts)"
  read -r hits_before misses_before <<<"$steps_ccache_before"
  read -r hits_now misses_now <<<"$now"
  printf 'ccache: %d compiles from the cache, %d compiled\n' \
    $((hits_now - hits_before)) $((misses_now - misses_before))
  steps_ccache_before="$now"
}

# ctest with its JUnit report: the skipped tests and their reasons go to the list steps_done
# prints (under CI=true the tests themselves fail instead of skipping; what remains are skips by
# build configuration, e.g. checks compiled out of a Release build).
run_ctest() {
  local junit status=0
  junit="$steps_work/junit-$RANDOM.xml"
  ctest --no-tests=error --output-junit "$junit" "$@" || status=$?
  if [ -f "$junit" ]; then
    python3 "$(dirname "${BASH_SOURCE[0]}")/ctest_skips.py" "$junit" >>"$steps_work/skips" || true
  fi
  return $status
}

# A test script that prints "NAME: skipped (why)" when it cannot run here (csi-sanity.sh,
# image-test.sh; under CI=true they fail instead): that line goes to the list steps_done prints.
run_script() {
  local status=0
  "$@" 2>&1 | tee "$steps_work/script.out" || status=$?
  grep -E '^[a-z-]+: skipped \(' "$steps_work/script.out" | sed "s|\$|\t$1|" >>"$steps_work/skips" || true
  return $status
}
