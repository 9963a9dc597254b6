#!/usr/bin/env bash
# THE MAIN JOB: installs what is missing, builds, then runs oxide-csi-plugin on a unix socket
# against the built-in Oxide simulator and drives it with oxide-csi-ctl, showing each step.
# Today: the Identity service and the controller's volume lifecycle (create, attach, list, get,
# detach, delete, with an idempotent retry and a refused call); the node steps come next.
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$top"

step() { printf '\n\033[1m==== %s\033[0m\n' "$*"; }
run() { printf '\033[36m$ %s\033[0m\n' "$*"; "$@"; }

step "installing missing Debian packages"
scripts/install-deps.sh
step "building"
scripts/build.sh build >/dev/null
bin="$top/build/src"

work="$(mktemp -d /tmp/oxide-csi-demo.XXXXXX)"
sim_pid=""
plugin_pid=""
cleanup() {
  [ -n "$plugin_pid" ] && kill "$plugin_pid" 2>/dev/null || true
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

token="oxide-token-demo-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s\n' "$token" > "$work/token"
chmod 600 "$work/token"

step "starting the Oxide simulator on a free loopback port"
"$bin/sim/oxide-sim" --port 0 --token-file "$work/token" --project demo \
  > "$work/sim.out" 2> "$work/sim.log" &
sim_pid=$!
for _ in $(seq 100); do [ -s "$work/sim.out" ] && break; sleep 0.05; done
port="$(head -n 1 "$work/sim.out")"
echo "oxide-sim listening on http://127.0.0.1:$port (project \"demo\")"

step "creating the node's Oxide instance (stopped: Oxide attaches disks only to stopped instances)"
instance_id="$(python3 - "$port" <<'PY'
import json, sys, urllib.request
body = json.dumps({"project": "demo", "name": "k8s-node-1", "run_state": "stopped"}).encode()
request = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/__sim/instances", data=body,
                                 headers={"content-type": "application/json"})
print(json.load(urllib.request.urlopen(request))["id"])
PY
)"
echo "instance k8s-node-1: $instance_id"

step "starting oxide-csi-plugin --mode=all on unix://$work/csi/csi.sock"
mkdir -p "$work/csi"
export CSI_ENDPOINT="unix://$work/csi/csi.sock"
OXIDE_HOST="http://127.0.0.1:$port" OXIDE_TOKEN_FILE="$work/token" OXIDE_PROJECT=demo \
OXIDE_INSTANCE_ID="$instance_id" \
  "$bin/app/oxide-csi-plugin" --mode=all --state-db="$work/state/state.db" --oxide-insecure \
  2> "$work/plugin.log" &
plugin_pid=$!
for _ in $(seq 200); do [ -S "$work/csi/csi.sock" ] && break; sleep 0.05; done
run ls -l "$work/csi"

ctl="$bin/cli/oxide-csi-ctl"
step "Identity service"
run "$ctl" identity info
run "$ctl" identity capabilities
run "$ctl" identity probe
run "$ctl" --output json identity info

step "Controller service: a volume's lifecycle"
run "$ctl" controller capabilities
run "$ctl" controller capacity
run "$ctl" controller create pvc-demo-1 --size-gib=3
volume_id="$("$ctl" --output json controller create pvc-demo-1 --size-gib=3 |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["volume"]["volume_id"])')"
echo "(the same CreateVolume again returned the same volume: $volume_id)"
printf '\033[36m$ %s\033[0m\n' "$ctl controller create pvc-demo-1 --size-gib=5   # incompatible"
"$ctl" controller create pvc-demo-1 --size-gib=5 || echo "(refused as expected)"
run "$ctl" controller publish "$volume_id" "$instance_id"
run "$ctl" controller list
run "$ctl" controller get "$volume_id"
printf '\033[36m$ %s\033[0m\n' "$ctl controller delete $volume_id   # still attached"
"$ctl" controller delete "$volume_id" || echo "(refused as expected)"
run "$ctl" controller unpublish "$volume_id" "$instance_id"
run "$ctl" controller delete "$volume_id"
run "$ctl" controller list

step "graceful shutdown (SIGTERM)"
kill -TERM "$plugin_pid"
code=0
wait "$plugin_pid" || code=$?
plugin_pid=""
echo "plugin exit code: $code"
[ -e "$work/csi/csi.sock" ] && echo "socket still present" || echo "socket removed"

step "the plugin's log (stderr, one structured record per line; the token never appears)"
cat "$work/plugin.log"
if grep -q "$token" "$work/plugin.log"; then
  echo "ERROR: the token appeared in the log" >&2
  exit 1
fi
[ "$code" -eq 0 ] || exit 1
step "main job finished"
