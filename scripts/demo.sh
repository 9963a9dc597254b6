#!/usr/bin/env bash
# THE MAIN JOB: installs what is missing, builds, then runs oxide-csi-plugin on a unix socket
# against the built-in Oxide simulator and drives it with oxide-csi-ctl, showing each step.
# The whole life of a volume: create, attach, stage (mkfs), publish, write a file, tear down,
# attach and mount again, read the file back, tear down, delete — with an idempotent retry and
# refused calls along the way. The simulator emulates the guest's disks as loop devices (root).
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
  --guest-backing-dir "$work/guest" --guest-sysfs-root "$work/guest-sys" --hotplug \
  > "$work/sim.out" 2> "$work/sim.log" &
sim_pid=$!
for _ in $(seq 100); do [ -s "$work/sim.out" ] && break; sleep 0.05; done
port="$(head -n 1 "$work/sim.out")"
echo "oxide-sim listening on http://127.0.0.1:$port (project \"demo\")"

step "creating the node's Oxide instance (running; the simulator's --hotplug lets it take disks)"
instance_id="$(python3 - "$port" <<'PY'
import json, sys, urllib.request
body = json.dumps({"project": "demo", "name": "k8s-node-1", "run_state": "running",
                   "guest_local": True}).encode()
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
  --sysfs-root="$work/guest-sys" \
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

step "Controller and Node services: a volume's whole life"
run "$ctl" controller capabilities
run "$ctl" node info
run "$ctl" controller create pvc-demo-1 --size-gib=3
volume_id="$("$ctl" --output json controller create pvc-demo-1 --size-gib=3 |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["volume"]["volume_id"])')"
echo "(the same CreateVolume again returned the same volume: $volume_id)"
show_refusal() { printf '\033[36m$ %s\033[0m\n' "$*"; "$@" || echo "(refused as expected)"; }
show_refusal "$ctl" controller create pvc-demo-1 --size-gib=5
staging="$work/kubelet/staging/$volume_id"
target="$work/kubelet/pods/pod-1/volumes/data"
mount_volume() {
  run "$ctl" controller publish "$volume_id" "$instance_id"
  disk_name="$("$ctl" --output json controller publish "$volume_id" "$instance_id" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["publish_context"]["diskName"])')"
  run "$ctl" node stage --volume-id "$volume_id" --staging-path "$staging" --fs-type ext4 \
    --publish-context "diskName=$disk_name"
  run "$ctl" node publish --volume-id "$volume_id" --staging-path "$staging" --target-path "$target" \
    --fs-type ext4 --publish-context "diskName=$disk_name"
}
unmount_volume() {
  run "$ctl" node unpublish --volume-id "$volume_id" --target-path "$target"
  run "$ctl" node unstage --volume-id "$volume_id" --staging-path "$staging"
  run "$ctl" controller unpublish "$volume_id" "$instance_id"
}
mount_volume
run "$ctl" controller list
run grep " $staging \| $target " /proc/self/mountinfo
printf '\033[36m$ %s\033[0m\n' "echo 'hello from pod-1' > $target/hello.txt"
echo "hello from pod-1" > "$target/hello.txt"
run "$ctl" node stats --volume-id "$volume_id" --volume-path "$target"
show_refusal "$ctl" controller delete "$volume_id"
unmount_volume
echo "(detached: the file is not reachable now)"; [ ! -e "$target/hello.txt" ]
mount_volume
run cat "$target/hello.txt"
[ "$(cat "$target/hello.txt")" = "hello from pod-1" ] || { echo "ERROR: data lost" >&2; exit 1; }
unmount_volume
run "$ctl" controller delete "$volume_id"
run "$ctl" controller list
if grep -q "$work" /proc/self/mountinfo; then echo "ERROR: a mount was left behind" >&2; exit 1; fi
echo "no mount left behind"

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
