#!/usr/bin/env bash
# Installs the Debian packages listed in scripts/debian-packages.txt that are not installed yet.
# Runs apt-get only when something is missing, so a machine that has everything needs no network.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

wanted=$(grep -v -E '^\s*(#|$)' "$here/debian-packages.txt")
# One dpkg-query for all of them: the "nothing to install" path takes a fraction of a second.
# shellcheck disable=SC2086  # one word per package
installed=$(dpkg-query -W -f='${Package} ${Status}\n' $wanted 2>/dev/null |
  awk '$NF == "installed" && $(NF-1) == "ok" { sub(/:.*/, "", $1); print $1 }' || true)
missing=()
for pkg in $wanted; do
  grep -qx -- "$pkg" <<<"$installed" || missing+=("$pkg")
done
# kubectl renders the Kubernetes manifests in the tests; some machines ship it outside Debian's
# kubernetes-client package, and installing that package over it would conflict.
if ! command -v kubectl >/dev/null 2>&1; then
  missing+=(kubernetes-client)
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}; run as root to install them" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]} (a minute or two on a fresh machine)"
# Quiet: no progress bars, no debconf prompts or "delaying package configuration" notes. apt's
# output goes to a log that is shown only when it fails.
export DEBIAN_FRONTEND=noninteractive
log="$(mktemp /tmp/oxide-csi-install-deps.XXXXXX.log)"
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends -o Dpkg::Use-Pty=0 \
  "${missing[@]}"; } >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  echo "install-deps: apt-get failed; its whole output is in $log" >&2
  exit 1
fi
rm -f "$log"
echo "install-deps: installed ${#missing[@]} package(s)"
