#!/usr/bin/env bash
# What a Prometheus scrape costs the plugin, and proof that the families move under load:
# controller_bench's C x L matrix (and its peer comparison with hostpathplugin) twice in one run,
# A without the metrics endpoint, B with --metrics-address and a scraper fetching /metrics once a
# second (the load a Prometheus server puts on it). ROUNDS=n (default 2) repeats the pair, A B A B,
# so that drift in the machine's load shows as a difference between rounds, not between A and B.
# Prints every table and, for each family, whether any two consecutive scrapes of B saw it change.
#   [ROUNDS=n] bench/metrics/scrape_ab.sh [BUILD_DIR] [extra controller_bench flags...]
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$top/build}"
shift || true
bench="$build/bench/controller/controller_bench"
[ -x "$bench" ] || { echo "scrape_ab: $bench is missing; build the project first" >&2; exit 2; }
work="$(mktemp -d)"
trap 'kill "${scraper:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
port=$((20000 + RANDOM % 20000))

mkdir -p "$work/scrapes"
for round in $(seq "${ROUNDS:-2}"); do
  echo "== round $round, A: no metrics endpoint"
  "$bench" --matrix --restart-test 0 "$@"

  echo "== round $round, B: --metrics-address=127.0.0.1:$port, scraped once a second"
  (
    n=0
    while true; do
      # The scrape rate under test is the point of the loop: one request a second, as Prometheus.
      curl -s -m 5 -o "$work/scrapes/$round-$(printf %06d $n).txt" \
        "http://127.0.0.1:$port/metrics" || true
      n=$((n + 1))
      sleep 1
    done
  ) &
  scraper=$!
  OXIDE_BENCH_PLUGIN_ARGS="--metrics-address=127.0.0.1:$port" \
    "$bench" --matrix --restart-test 0 "$@"
  kill "$scraper" 2>/dev/null || true
  wait "$scraper" 2>/dev/null || true
done

python3 - "$work/scrapes" <<'PY'
import os, re, sys
folder = sys.argv[1]
scrapes = []
for name in sorted(os.listdir(folder)):
    text = open(os.path.join(folder, name), errors="replace").read()
    if "# TYPE" not in text:
        continue  # the plugin was between cells
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            series, _, value = line.rpartition(" ")
            samples[series] = value
    scrapes.append(samples)
families = {}
for samples in scrapes:
    for series in samples:
        family = re.sub(r"(_bucket|_sum|_count)?(\{.*)?$", "", series)
        families.setdefault(family, False)
for before, after in zip(scrapes, scrapes[1:]):
    for series, value in after.items():
        if before.get(series, value) != value:
            families[re.sub(r"(_bucket|_sum|_count)?(\{.*)?$", "", series)] = True
print(f"\nscrapes answered: {len(scrapes)}")
print("family                                        moved between two consecutive scrapes")
for family in sorted(families):
    print(f"{family:45} {'yes' if families[family] else 'no'}")
PY
