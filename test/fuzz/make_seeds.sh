#!/usr/bin/env bash
# Writes the seed corpora of the fuzz targets (test/fuzz/corpus/<target>/seed-*) from the
# readable texts below: CSI requests in protobuf text format (encoded with protoc), Oxide
# answers, command lines, mountinfo lines, URLs. Crash inputs found by scripts/fuzz.sh are kept
# beside them as crash-* and never regenerated. Run from anywhere; needs protoc.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
proto="$here/../../proto"
corpus="$here/corpus"

# seed TARGET NAME SELECTOR-BYTE (stdin: the rest of the input)
seed() {
  mkdir -p "$corpus/$1"
  { printf "\\x$(printf %02x "$3")"; cat; } > "$corpus/$1/seed-$2"
}
# csi REQUEST-TYPE SELECTOR NAME TEXT
csi() {
  printf '%s' "$4" | protoc -I"$proto" --encode="csi.v1.$1" "$proto/csi.proto" | seed csi_requests "$3" "$2"
}

uuid=6f0c4e3b-1d2a-4c5b-9e8f-0a1b2c3d4e5f
mount='volume_capabilities { mount { fs_type: "ext4" mount_flags: "noatime" } access_mode { mode: SINGLE_NODE_WRITER } }'
cap='volume_capability { mount { fs_type: "xfs" } access_mode { mode: SINGLE_NODE_WRITER } }'
block='volume_capability { block {} access_mode { mode: SINGLE_NODE_SINGLE_WRITER } }'
csi CreateVolumeRequest 0 create "name: \"pvc-1\" capacity_range { required_bytes: 1073741824 } $mount parameters { key: \"blockSize\" value: \"4096\" } parameters { key: \"csi.storage.k8s.io/pvc/name\" value: \"data\" } accessibility_requirements { requisite { segments { key: \"topology.csi.oxide.computer/zone\" value: \"oxide\" } } }"
csi CreateVolumeRequest 0 create-local-restore "name: \"pvc-3\" $mount parameters { key: \"diskType\" value: \"local\" } parameters { key: \"blockSize\" value: \"4096\" } volume_content_source { snapshot { snapshot_id: \"$uuid\" } }"
csi CreateVolumeRequest 0 create-clone "name: \"pvc-2\" $mount volume_content_source { volume { volume_id: \"${uuid^^}\" } }"
csi DeleteVolumeRequest 1 delete "volume_id: \"$uuid\" secrets { key: \"token\" value: \"x\" }"
csi ControllerPublishVolumeRequest 2 publish "volume_id: \"$uuid\" node_id: \"$uuid\" $cap readonly: true"
csi ControllerUnpublishVolumeRequest 3 unpublish "volume_id: \"$uuid\" node_id: \"not-a-uuid\""
csi ValidateVolumeCapabilitiesRequest 4 validate "volume_id: \"$uuid\" $mount parameters { key: \"blockSize\" value: \"512\" }"
csi ControllerGetVolumeRequest 5 get-volume "volume_id: \"$uuid\""
csi ListVolumesRequest 6 list-volumes 'max_entries: 10 starting_token: "ox1.eyJ2IjoidjEifQ=="'
csi GetCapacityRequest 7 capacity "$mount accessible_topology { segments { key: \"topology.csi.oxide.computer/zone\" value: \"elsewhere\" } }"
csi CreateSnapshotRequest 8 snapshot "source_volume_id: \"$uuid\" name: \"snap-1\" parameters { key: \"csi.storage.k8s.io/volumesnapshot/name\" value: \"s\" }"
csi DeleteSnapshotRequest 9 delete-snapshot "snapshot_id: \"$uuid\""
csi ListSnapshotsRequest 10 list-snapshots "source_volume_id: \"$uuid\" max_entries: -1"
csi GetSnapshotRequest 11 get-snapshot "snapshot_id: \"${uuid^^}\""
csi NodeStageVolumeRequest 12 stage "volume_id: \"$uuid\" staging_target_path: \"/var/lib/kubelet/plugins/staging/pv-1\" $cap publish_context { key: \"diskName\" value: \"csi-0123456789abcdef-pvc-1\" } publish_context { key: \"nvmeSerial\" value: \"csi-0123456789abcdef\" }"
csi NodeUnstageVolumeRequest 13 unstage "volume_id: \"$uuid\" staging_target_path: \"/var/lib/kubelet/plugins/staging/../pv-1\""
csi NodePublishVolumeRequest 14 publish-node "volume_id: \"$uuid\" staging_target_path: \"/var/lib/kubelet/plugins/staging/pv-1\" target_path: \"/var/lib/kubelet/pods/p/volumes/v/mount\" $block readonly: true"
csi NodeUnpublishVolumeRequest 15 unpublish-node "volume_id: \"$uuid\" target_path: \"/etc/passwd\""
csi NodeGetVolumeStatsRequest 16 stats "volume_id: \"$uuid\" volume_path: \"some/path\""

disk="{\"id\":\"$uuid\",\"name\":\"csi-0123456789abcdef-pvc-1\",\"description\":\"d\",\"project_id\":\"$uuid\",\"snapshot_id\":null,\"image_id\":null,\"size\":1073741824,\"block_size\":4096,\"state\":{\"state\":\"attached\",\"instance\":\"$uuid\"},\"disk_type\":\"distributed\",\"read_only\":false,\"time_created\":\"2026-11-24T00:00:00Z\",\"time_modified\":\"2026-11-24T00:00:00Z\"}"
snapshot="{\"id\":\"$uuid\",\"name\":\"s\",\"description\":\"\",\"project_id\":\"$uuid\",\"disk_id\":\"$uuid\",\"size\":1073741824,\"state\":\"ready\",\"time_created\":\"2026-11-24T00:00:00Z\",\"time_modified\":\"2026-11-24T00:00:00Z\"}"
# oxide_responses: selector, HTTP status byte (an index into the target's table: 0 is 200,
# 8 is 404, 13 is 503), body
mkdir -p "$corpus/oxide_responses"
printf '\x01\x00%s' "$snapshot" > "$corpus/oxide_responses/seed-snapshot"
printf '\x06\x00{"items":[%s],"next_page":"eyJ2IjoidjEifQ=="}' "$disk" > "$corpus/oxide_responses/seed-disk-page"
printf '\x07\x00{"items":[%s],"next_page":null}' "$snapshot" > "$corpus/oxide_responses/seed-snapshot-page"
printf '\x03\x00{"id":"%s","name":"node-1","run_state":"running","project_id":"%s"}' "$uuid" "$uuid" > "$corpus/oxide_responses/seed-instance"
printf '\x04\x00{"capacity":{"cpus":1,"memory":1,"storage":1099511627776},"provisioned":{"cpus":0,"memory":0,"storage":0}}' > "$corpus/oxide_responses/seed-utilization"
printf '\x08\x00%s' "$disk" > "$corpus/oxide_responses/seed-disk-compare"
printf '\x09\x08{"request_id":"r-1","error_code":"ObjectNotFound","message":"not found: disk"}' > "$corpus/oxide_responses/seed-error-404"
printf '\x09\x0d{"request_id":"r-2","error_code":"ServiceUnavailable","message":"busy"}' > "$corpus/oxide_responses/seed-error-503"
printf '\x09\x03' > "$corpus/oxide_responses/seed-transport-failure"
printf '\x00\x00%s' "$disk" > "$corpus/oxide_responses/seed-disk"

mkdir -p "$corpus/settings"
printf -- '--endpoint=unix:///csi/csi.sock\n--mode=controller\n--log-format=json\x00OXIDE_HOST=https://oxide.example\nOXIDE_PROJECT=p\x00OXIDE_INSTANCE_ID=%s\n' "$uuid" > "$corpus/settings/seed-controller"
printf -- '--endpoint\n/csi/csi.sock\n--mode=node\n--max-volumes-per-node=4\x00OXIDE_INSTANCE_ID=%s\x00# metadata\ninstance_id=%s\n' "$uuid" "${uuid^^}" > "$corpus/settings/seed-node"
printf -- '--endpoint=/csi/csi.sock\n--oxide-token=x\x00\x00OXIDE_INSTANCE_ID=nope\n' > "$corpus/settings/seed-refused"

mkdir -p "$corpus/node_text"
printf '\x0036 35 98:0 /mnt1 /mnt/with\\040space rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n37 36 7:3 / /var/lib/kubelet/pods/p/volumes/v/mount ro - xfs /dev/loop3 ro\n' > "$corpus/node_text/seed-mountinfo"
printf '\x01csi-0123456789abcdef    \n\x00\x00' > "$corpus/node_text/seed-serial"
printf '\x02noatime\nnodev\nbind\ndata=ordered\n' > "$corpus/node_text/seed-mount-flags"
printf '\x03/var/lib/kubelet/pods/p/volumes/v/mount' > "$corpus/node_text/seed-path"

mkdir -p "$corpus/sim_requests"
printf '\x00/v1/disks/csi-1%%2Fx/attach' > "$corpus/sim_requests/seed-path"
printf '\x01project=p&limit=10&page_token=eyJ2IjoidjEifQ%%3D%%3D&sort_by=name_ascending' > "$corpus/sim_requests/seed-query"
printf '\x02{"name":"d","description":"x","size":1073741824,"disk_source":{"type":"blank","block_size":4096}}' > "$corpus/sim_requests/seed-body"
printf '\x03eyJ2IjoidjEiLCJwYWdlX3N0YXJ0Ijp7fX0=' > "$corpus/sim_requests/seed-token"
mkdir -p "$corpus/kubernetes_objects"
printf '\x00{"kind":"Node","spec":{"taints":[{"key":"node.kubernetes.io/not-ready","effect":"NoSchedule"},{"key":"csi.oxide.computer/agent-not-ready","effect":"NoExecute"},{"key":"example.com/dedicated","value":"storage","effect":"NoSchedule"}]}}' > "$corpus/kubernetes_objects/seed-node-tainted"
printf '\x00{"kind":"Node","spec":{"providerID":"oxide://x","taints":null}}' > "$corpus/kubernetes_objects/seed-node-plain"
printf '\x01{"kind":"CSINode","spec":{"drivers":[{"name":"nfs.csi.k8s.io","nodeID":"w"},{"name":"csi.oxide.computer","nodeID":"w","allocatable":{"count":11}}]}}' > "$corpus/kubernetes_objects/seed-csinode"
echo "seeds written under $corpus"
