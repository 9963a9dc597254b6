# shellcheck shell=bash
# Sourced (bash) by scripts/demo.sh. `build_progress` reads a `cmake --build` (Makefiles) output
# on stdin and shows its progress: in a terminal one line that rewrites itself ("building: 45 %,
# 2m10s"), otherwise (CI, a pipe) a plain line at every 10 %. cmake's own bookkeeping lines are
# dropped; anything else (a compiler warning or error, make's failure lines) is printed as is.
# The caller says when the build is done (with `set -o pipefail`, a failed build fails the pipe).

build_progress() {
  local start=$SECONDS line percent shown=-1 last_plain=-1 tty=0 counter_open=0
  [ -t 1 ] && tty=1
  elapsed() { printf '%dm%02ds' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)); }
  if [ $tty -eq 1 ]; then
    printf 'building: configuring...'
    counter_open=1
  fi
  while IFS= read -r line; do
    if [[ "$line" =~ ^\[\ *([0-9]+)%\] ]]; then
      percent=${BASH_REMATCH[1]}
      [ "$percent" -eq "$shown" ] && continue
      shown=$percent
      if [ $tty -eq 1 ]; then
        printf '\rbuilding: %3d %%, %s   ' "$percent" "$(elapsed)"
        counter_open=1
      elif [ $((percent / 10)) -gt "$last_plain" ]; then
        last_plain=$((percent / 10))
        printf 'building: %3d %%, %s\n' "$percent" "$(elapsed)"
      fi
      continue
    fi
    case "$line" in
      "" | "Scanning dependencies of target"* | "Consolidate compiler generated dependencies"* | \
        "gmake"*"Entering directory"* | "gmake"*"Leaving directory"* | \
        "make"*"Entering directory"* | "make"*"Leaving directory"*)
        continue ;;
    esac
    if [ $counter_open -eq 1 ]; then
      printf '\n'
      counter_open=0
    fi
    printf '%s\n' "$line"
  done
  if [ $counter_open -eq 1 ]; then printf '\n'; fi
}
