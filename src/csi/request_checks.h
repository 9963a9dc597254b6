// The checks a CSI request's own fields must pass before a handler looks at any state or asks
// Oxide: required fields, names, capabilities, parameters, capacity, topology, ids that cannot
// exist, paths and page tokens. One function per RPC; each returns the first failure in the
// order of the spec's error tables (ErrorCodesTest pins it through the socket), or what the
// handler needs from the fields. Pure functions: any thread. The fuzz target csi_requests feeds
// every one of them arbitrary protobuf.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "csi.pb.h"
#include "csi/filesystem_options.h"
#include "csi/node_requests.h"
#include "csi/volume_request.h"
#include "util/status.h"

namespace oxide::csi_adapter {

// ---- controller -------------------------------------------------------------------------------

struct CreateVolumeChecks {
  VolumeParameters params;
  uint64_t size = 0;  // the disk size the capacity range (or the default) asks for
  // The filesystem options' volume_context entries (csi/filesystem_options.h); empty without.
  std::map<std::string, std::string> fs_context;
};
// `zone`: the topology zone this plugin serves; `default_size`: the size without a range.
StatusOr<CreateVolumeChecks> CheckCreateVolume(const csi::v1::CreateVolumeRequest& request,
                                               const std::string& zone, uint64_t default_size);
Status CheckDeleteVolume(const csi::v1::DeleteVolumeRequest& request);
Status CheckControllerPublishVolume(const csi::v1::ControllerPublishVolumeRequest& request);
Status CheckControllerUnpublishVolume(const csi::v1::ControllerUnpublishVolumeRequest& request);
Status CheckValidateVolumeCapabilities(const csi::v1::ValidateVolumeCapabilitiesRequest& request);
Status CheckControllerGetVolume(const csi::v1::ControllerGetVolumeRequest& request);
// The Oxide page token inside starting_token.
StatusOr<std::string> CheckListVolumes(const csi::v1::ListVolumesRequest& request);
Status CheckGetCapacity(const csi::v1::GetCapacityRequest& request);
Status CheckCreateSnapshot(const csi::v1::CreateSnapshotRequest& request);
Status CheckDeleteSnapshot(const csi::v1::DeleteSnapshotRequest& request);
StatusOr<std::string> CheckListSnapshots(const csi::v1::ListSnapshotsRequest& request);
Status CheckGetSnapshot(const csi::v1::GetSnapshotRequest& request);

// ---- node -------------------------------------------------------------------------------------

struct NodeStageChecks {
  CapabilitySpec capability;
  std::string serial;                  // the NVMe serial the volume's disk shows
  std::optional<uint64_t> disk_bytes;  // the disk's size as published, when the controller said
  Encryption encryption;
  node::FilesystemOptions fs_options;  // from volume_context, checked against the capability
};
StatusOr<NodeStageChecks> CheckNodeStageVolume(const csi::v1::NodeStageVolumeRequest& request);
Status CheckNodeUnstageVolume(const csi::v1::NodeUnstageVolumeRequest& request);
StatusOr<CapabilitySpec> CheckNodePublishVolume(const csi::v1::NodePublishVolumeRequest& request);
Status CheckNodeUnpublishVolume(const csi::v1::NodeUnpublishVolumeRequest& request);
// Only what needs no lookup: the spec wants NOT_FOUND for a volume unknown at volume_path before
// the path's syntax is judged, so the path itself is checked by the handler after the lookup.
Status CheckNodeGetVolumeStats(const csi::v1::NodeGetVolumeStatsRequest& request);

}  // namespace oxide::csi_adapter
