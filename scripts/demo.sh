#!/usr/bin/env bash
# THE MAIN JOB: installs what is missing, builds, then runs oxide-csi-plugin on a unix socket
# against the built-in Oxide simulator and drives it with oxide-csi-ctl, showing each step.
# The whole life of a volume: create, attach, stage (mkfs), publish, write a file, tear down,
# attach and mount again, read the file back; then snapshot it, restore the snapshot into a new
# volume and clone the volume, mount all three and compare the data; tear everything down,
# delete — with idempotent retries and refused calls along the way. The simulator emulates the
# guest's disks (and copies their data into snapshots) as loop devices (root).
#
# With OXIDE_CSI_DEMO_PREBUILT=BUILD_DIR it installs and builds nothing and runs the programs of
# that build directory (test/demo runs it so, against the tree under test).
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$top"

# Colours only for a terminal; a pipe or a CI log gets plain text.
if [ -t 1 ]; then bold=$'\033[1m' cyan=$'\033[36m' plain=$'\033[0m'; else bold="" cyan="" plain=""; fi
step() { printf '\n%s==== %s%s\n' "$bold" "$*" "$plain"; }
show() { printf '%s$ %s%s\n' "$cyan" "$*" "$plain"; }
run() { show "$*"; "$@"; }

if [ -n "${OXIDE_CSI_DEMO_PREBUILT:-}" ]; then
  build_dir="$(cd "$OXIDE_CSI_DEMO_PREBUILT" && pwd)"
  step "using the programs already built in $build_dir (OXIDE_CSI_DEMO_PREBUILT)"
else
  build_dir="$top/build"
  step "installing missing Debian packages"
  scripts/install-deps.sh
  step "building the three programs the demo runs: oxide-csi-plugin, oxide-sim, oxide-csi-ctl"
  echo "A first build needs about 7 minutes of CPU time: about 3-4 minutes on an idle machine"
  echo "with 2 vCPUs, longer on a busy one. Later runs compile only what changed. Into: $build_dir"
  # shellcheck source=lib/build-progress.sh
  . "$top/scripts/lib/build-progress.sh"
  build_start=$SECONDS
  scripts/build.sh "$build_dir" --target demo_programs 2>&1 | build_progress
  echo "built in $(((SECONDS - build_start) / 60))m$(((SECONDS - build_start) % 60))s"
fi
bin="$build_dir/src"

# shellcheck source=lib/local-stack.sh
. "$top/scripts/lib/local-stack.sh"
stack_init /tmp/oxide-csi-demo.XXXXXX
work="$stack_work"
token="$(cat "$work/token")"

step "starting the Oxide simulator on a free loopback port"
stack_start_sim "$bin/sim/oxide-sim" demo --hotplug
echo "oxide-sim listening on http://127.0.0.1:$stack_port (project \"demo\")"

step "creating the node's Oxide instance (running; the simulator's --hotplug lets it take disks)"
instance_id="$(stack_add_instance demo k8s-node-1 running)"
echo "instance k8s-node-1: $instance_id"

step "starting oxide-csi-plugin --mode=all on unix://$work/csi/csi.sock"
export CSI_ENDPOINT="unix://$work/csi/csi.sock"
stack_start_plugin "$bin/app/oxide-csi-plugin" demo "$instance_id" "$work/csi/csi.sock"
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
show_refusal() { show "$*"; "$@" || echo "(refused as expected)"; }
show_refusal "$ctl" controller create pvc-demo-1 --size-gib=5
staging="$work/kubelet/staging/$volume_id"
target="$work/kubelet/pods/pod-1/volumes/data"
json_field() {  # json_field KEY... < JSON: prints json[KEY][KEY]...
  python3 -c 'import json, sys
value = json.load(sys.stdin)
for key in sys.argv[1:]: value = value[key]
if isinstance(value, (dict, list)): value = json.dumps(value)
print(str(value).lower() if isinstance(value, bool) else value)' "$@"
}
# mount_volume / unmount_volume [VOLUME_ID STAGING TARGET] (default: the first volume's).
mount_volume() {
  local vol="${1:-$volume_id}" stg="${2:-$staging}" tgt="${3:-$target}"
  run "$ctl" controller publish "$vol" "$instance_id"
  disk_name="$("$ctl" --output json controller publish "$vol" "$instance_id" |
    json_field publish_context diskName)"
  run "$ctl" node stage --volume-id "$vol" --staging-path "$stg" --fs-type ext4 \
    --publish-context "diskName=$disk_name"
  run "$ctl" node publish --volume-id "$vol" --staging-path "$stg" --target-path "$tgt" \
    --fs-type ext4 --publish-context "diskName=$disk_name"
}
node_unmount() {
  local vol="${1:-$volume_id}" stg="${2:-$staging}" tgt="${3:-$target}"
  run "$ctl" node unpublish --volume-id "$vol" --target-path "$tgt"
  run "$ctl" node unstage --volume-id "$vol" --staging-path "$stg"
}
unmount_volume() {
  node_unmount "$@"
  run "$ctl" controller unpublish "${1:-$volume_id}" "$instance_id"
}
mount_volume
run "$ctl" controller list
run grep " $staging \| $target " /proc/self/mountinfo
show "echo 'hello from pod-1' > $target/hello.txt"
echo "hello from pod-1" > "$target/hello.txt"
run "$ctl" node stats --volume-id "$volume_id" --volume-path "$target"
show_refusal "$ctl" controller delete "$volume_id"
unmount_volume
echo "(detached: the file is not reachable now)"; [ ! -e "$target/hello.txt" ]
mount_volume
run cat "$target/hello.txt"
[ "$(cat "$target/hello.txt")" = "hello from pod-1" ] || { echo "ERROR: data lost" >&2; exit 1; }
show "head -c 4M /dev/urandom > $target/random.bin"
head -c 4M /dev/urandom > "$target/random.bin"
run sync "$target/random.bin"
run sha256sum "$target/hello.txt" "$target/random.bin"

step "Snapshots: take one, restore it into a new volume, clone the volume"
echo "(the filesystem is unmounted first so that it is clean; the disk stays attached)"
node_unmount
run "$ctl" snapshot create snap-demo-1 "$volume_id"
for _ in $(seq 60); do  # as a CO does: the same CreateSnapshot until it is ready to use
  created="$("$ctl" --output json snapshot create snap-demo-1 "$volume_id")"
  [ "$(json_field snapshot ready_to_use <<<"$created")" = true ] && break
  sleep 1
done
snapshot_id="$(json_field snapshot snapshot_id <<<"$created")"
echo "(the same CreateSnapshot again: snapshot $snapshot_id, ready_to_use: $(json_field snapshot ready_to_use <<<"$created"))"
[ "$(json_field snapshot ready_to_use <<<"$created")" = true ] ||
  { echo "ERROR: the snapshot never became ready" >&2; exit 1; }
run "$ctl" snapshot list
run "$ctl" snapshot list --source-volume-id="$volume_id"
run "$ctl" controller create pvc-demo-restored --size-gib=4 --from-snapshot="$snapshot_id"
restored="$("$ctl" --output json controller create pvc-demo-restored --size-gib=4 \
  --from-snapshot="$snapshot_id")"
restored_id="$(json_field volume volume_id <<<"$restored")"
echo "(again: volume $restored_id, content_source $(json_field volume content_source <<<"$restored"))"
run "$ctl" controller create pvc-demo-clone --size-gib=3 --from-volume="$volume_id"
clone="$("$ctl" --output json controller create pvc-demo-clone --size-gib=3 \
  --from-volume="$volume_id")"
clone_id="$(json_field volume volume_id <<<"$clone")"
echo "(again: volume $clone_id, content_source $(json_field volume content_source <<<"$clone"))"
echo "(the clone's temporary snapshot is gone: only snap-demo-1 is listed)"
run "$ctl" snapshot list
run "$ctl" controller list
restored_staging="$work/kubelet/staging/$restored_id"
restored_target="$work/kubelet/pods/pod-2/volumes/data"
clone_staging="$work/kubelet/staging/$clone_id"
clone_target="$work/kubelet/pods/pod-3/volumes/data"
mount_volume
mount_volume "$restored_id" "$restored_staging" "$restored_target"
mount_volume "$clone_id" "$clone_staging" "$clone_target"
run grep " $work/kubelet/pods/" /proc/self/mountinfo
run cat "$restored_target/hello.txt" "$clone_target/hello.txt"
run sha256sum "$target/random.bin" "$restored_target/random.bin" "$clone_target/random.bin"
for copy in "$restored_target" "$clone_target"; do
  cmp "$target/hello.txt" "$copy/hello.txt" && cmp "$target/random.bin" "$copy/random.bin" ||
    { echo "ERROR: $copy does not hold the original's data" >&2; exit 1; }
done
echo "(the restored volume and the clone hold the same data as the original)"
show "echo 'changed on the clone' > $clone_target/hello.txt"
echo "changed on the clone" > "$clone_target/hello.txt"
run cat "$target/hello.txt" "$restored_target/hello.txt" "$clone_target/hello.txt"
[ "$(cat "$target/hello.txt")" = "hello from pod-1" ] ||
  { echo "ERROR: writing the clone changed the original" >&2; exit 1; }
echo "(the copies are independent)"
unmount_volume "$clone_id" "$clone_staging" "$clone_target"
unmount_volume "$restored_id" "$restored_staging" "$restored_target"
unmount_volume
run "$ctl" snapshot delete "$snapshot_id"
run "$ctl" controller delete "$restored_id"
run "$ctl" controller delete "$clone_id"
run "$ctl" snapshot list
echo "(no snapshot left)"
left="$("$ctl" --output json snapshot list | python3 -c 'import json, sys
print(len(json.load(sys.stdin).get("entries", [])))')"
[ "$left" -eq 0 ] || { echo "ERROR: $left snapshot(s) left" >&2; exit 1; }

step "deleting the first volume"
run "$ctl" controller delete "$volume_id"
run "$ctl" controller list
if grep -q "$work" /proc/self/mountinfo; then echo "ERROR: a mount was left behind" >&2; exit 1; fi
echo "no mount left behind"

step "graceful shutdown (SIGTERM)"
kill -TERM "$stack_plugin_pid"
code=0
wait "$stack_plugin_pid" || code=$?
stack_plugin_pid=""
echo "plugin exit code: $code"
[ -e "$work/csi/csi.sock" ] && echo "socket still present" || echo "socket removed"

step "the plugin's log (stderr, one structured record per line; the token never appears)"
cat "$work/plugin.log"
if grep -q "$token" "$work/plugin.log"; then
  echo "ERROR: the token appeared in the log" >&2
  exit 1
fi
[ "$code" -eq 0 ] || exit 1
step "all done: the main job finished"
