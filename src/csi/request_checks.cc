#include "csi/request_checks.h"

#include <initializer_list>
#include <string_view>

#include "config/settings.h"
#include "config/validation.h"
#include "csi/paged_listing.h"
#include "engine/disk_naming.h"
#include "node/path_rules.h"

namespace oxide::csi_adapter {
namespace {

constexpr std::string_view kSnapshotterKeyPrefix = "csi.storage.k8s.io/";

Status Required(const std::string& value, const char* field) {
  if (!value.empty()) return Status::Ok();
  return InvalidArgument(std::string(field) + " is required");
}

Status CoName(const std::string& name) {
  if (Status present = Required(name, "name"); !present.ok()) return present;
  if (name.size() <= engine::kMaxCoNameBytes) return Status::Ok();
  return InvalidArgument("name is longer than " + std::to_string(engine::kMaxCoNameBytes) +
                         " bytes");
}

// A list RPC's paging: the Oxide page token inside starting_token.
StatusOr<std::string> PageStart(int32_t max_entries, const std::string& starting_token) {
  if (max_entries < 0) return InvalidArgument("max_entries may not be negative");
  return OxidePageToken(starting_token);
}

Status ExistingVolumeId(const std::string& volume_id, const char* what) {
  if (IsUuid(volume_id)) return Status::Ok();
  return NotFound(std::string(what) + " " + volume_id +
                  " does not exist: volume ids are Oxide disk ids (UUIDs)");
}

// The first failed check, or OK.
Status First(std::initializer_list<Status> checks) {
  for (const Status& check : checks) {
    if (!check.ok()) return check;
  }
  return Status::Ok();
}

}  // namespace

// ---- controller -------------------------------------------------------------------------------

StatusOr<CreateVolumeChecks> CheckCreateVolume(const csi::v1::CreateVolumeRequest& request,
                                               const std::string& zone, uint64_t default_size) {
  if (Status name = CoName(request.name()); !name.ok()) return name;
  if (Status caps = CheckCapabilities(request.volume_capabilities()); !caps.ok()) return caps;
  StatusOr<VolumeParameters> params = ParseParameters(request.parameters());
  if (!params.ok()) return params.status();
  auto fs_context = CheckFilesystemParameters(request.parameters(), request.volume_capabilities(),
                                              params->block_size);
  if (!fs_context.ok()) return fs_context.status();
  if (params->disk_type == backend::kDiskTypeLocal && request.has_volume_content_source()) {
    // Oxide makes a local disk only blank: no snapshot source, and a clone needs one.
    return InvalidArgument(
        std::string("parameter ") + kDiskTypeParameter +
        "=\"local\" cannot be combined with volume_content_source (" +
        (request.volume_content_source().has_volume() ? "a volume to clone"
                                                      : "a snapshot to restore") +
        "): Oxide makes local disks only blank (no snapshot source, and a clone needs a "
        "snapshot); restore or clone into a StorageClass with diskType distributed");
  }
  StatusOr<uint64_t> size =
      ChooseDiskSize(request.capacity_range(), default_size, request.has_capacity_range());
  if (!size.ok()) return size.status();
  if (request.has_accessibility_requirements()) {
    const auto& requisite = request.accessibility_requirements().requisite();
    bool reachable = requisite.empty();
    for (const auto& topology : requisite)
      reachable = reachable || TopologyMatches(topology, zone);
    if (!reachable) {
      return Status(StatusCode::kResourceExhausted,
                    "accessibility_requirements: no requisite topology includes this plugin's "
                    "zone (" +
                        std::string(kTopologyKey) + "=" + zone + ")");
    }
  }
  return CreateVolumeChecks{
      .params = std::move(*params), .size = *size, .fs_context = std::move(*fs_context)};
}

Status CheckDeleteVolume(const csi::v1::DeleteVolumeRequest& request) {
  return Required(request.volume_id(), "volume_id");
}

Status CheckControllerPublishVolume(const csi::v1::ControllerPublishVolumeRequest& request) {
  if (Status checked = First(
          {Required(request.volume_id(), "volume_id"), Required(request.node_id(), "node_id")});
      !checked.ok()) {
    return checked;
  }
  if (!request.has_volume_capability()) return InvalidArgument("volume_capability is required");
  if (Status cap = CheckCapability(request.volume_capability()); !cap.ok()) return cap;
  if (Status volume = ExistingVolumeId(request.volume_id(), "volume"); !volume.ok()) return volume;
  if (!IsUuid(request.node_id()) && !InstanceNameOfNodeId(request.node_id())) {
    return NotFound("node " + request.node_id() +
                    " does not exist: node ids are Oxide instance ids (UUIDs) or "
                    "name:<instance name>");
  }
  return Status::Ok();
}

Status CheckControllerUnpublishVolume(const csi::v1::ControllerUnpublishVolumeRequest& request) {
  return Required(request.volume_id(), "volume_id");
}

Status CheckValidateVolumeCapabilities(const csi::v1::ValidateVolumeCapabilitiesRequest& request) {
  if (Status id = Required(request.volume_id(), "volume_id"); !id.ok()) return id;
  if (request.volume_capabilities().empty()) {
    return InvalidArgument("volume_capabilities is required");
  }
  if (!IsUuid(request.volume_id())) {
    return NotFound("volume " + request.volume_id() + " does not exist");
  }
  return Status::Ok();
}

Status CheckControllerGetVolume(const csi::v1::ControllerGetVolumeRequest& request) {
  if (Status id = Required(request.volume_id(), "volume_id"); !id.ok()) return id;
  if (!IsUuid(request.volume_id())) {
    return NotFound("volume " + request.volume_id() + " does not exist");
  }
  return Status::Ok();
}

StatusOr<std::string> CheckListVolumes(const csi::v1::ListVolumesRequest& request) {
  return PageStart(request.max_entries(), request.starting_token());
}

Status CheckGetCapacity(const csi::v1::GetCapacityRequest& request) {
  for (const auto& capability : request.volume_capabilities()) {
    if (Status checked = CheckCapability(capability); !checked.ok()) return checked;
  }
  StatusOr<VolumeParameters> params = ParseParameters(request.parameters());
  if (!params.ok()) return params.status();
  return CheckFilesystemParameters(request.parameters(), request.volume_capabilities(),
                                   params->block_size)
      .status();
}

Status CheckCreateSnapshot(const csi::v1::CreateSnapshotRequest& request) {
  if (Status source = Required(request.source_volume_id(), "source_volume_id"); !source.ok()) {
    return source;
  }
  if (Status name = CoName(request.name()); !name.ok()) return name;
  for (const auto& [key, value] : request.parameters()) {
    if (key.rfind(kSnapshotterKeyPrefix, 0) != 0) {
      return InvalidArgument("parameters: unknown key \"" + key +
                             "\"; snapshots accept only the snapshotter's " +
                             std::string(kSnapshotterKeyPrefix) + "* keys");
    }
  }
  return ExistingVolumeId(request.source_volume_id(), "source volume");
}

Status CheckDeleteSnapshot(const csi::v1::DeleteSnapshotRequest& request) {
  return Required(request.snapshot_id(), "snapshot_id");
}

StatusOr<std::string> CheckListSnapshots(const csi::v1::ListSnapshotsRequest& request) {
  return PageStart(request.max_entries(), request.starting_token());
}

Status CheckGetSnapshot(const csi::v1::GetSnapshotRequest& request) {
  if (Status id = Required(request.snapshot_id(), "snapshot_id"); !id.ok()) return id;
  if (!IsUuid(request.snapshot_id())) {
    return NotFound("snapshot " + request.snapshot_id() +
                    " does not exist: snapshot ids are Oxide snapshot ids (UUIDs)");
  }
  return Status::Ok();
}

// ---- node -------------------------------------------------------------------------------------

StatusOr<NodeStageChecks> CheckNodeStageVolume(const csi::v1::NodeStageVolumeRequest& request) {
  auto capability = ParseCapability(request.has_volume_capability(), request.volume_capability());
  auto serial = ExpectedSerial(request.publish_context(), request.volume_context());
  auto disk_bytes = PublishedDiskBytes(request.publish_context());
  auto encryption = EncryptionOf(request.volume_context(), request.secrets());
  if (Status checked =
          First({Required(request.volume_id(), "volume_id"),
                 node::CheckVolumePath("staging_target_path", request.staging_target_path()),
                 capability.status(), serial.status(), disk_bytes.status(), encryption.status()});
      !checked.ok()) {
    return checked;
  }
  auto fs_options = FilesystemOptionsFromContext(request.volume_context(), *capability);
  if (!fs_options.ok()) return fs_options.status();
  return NodeStageChecks{.capability = std::move(*capability),
                         .serial = std::move(*serial),
                         .disk_bytes = *disk_bytes,
                         .encryption = std::move(*encryption),
                         .fs_options = std::move(*fs_options)};
}

Status CheckNodeUnstageVolume(const csi::v1::NodeUnstageVolumeRequest& request) {
  return First({Required(request.volume_id(), "volume_id"),
                node::CheckVolumePath("staging_target_path", request.staging_target_path())});
}

StatusOr<CapabilitySpec> CheckNodePublishVolume(const csi::v1::NodePublishVolumeRequest& request) {
  auto capability = ParseCapability(request.has_volume_capability(), request.volume_capability());
  if (Status checked =
          First({Required(request.volume_id(), "volume_id"),
                 node::CheckVolumePath("staging_target_path", request.staging_target_path()),
                 node::CheckVolumePath("target_path", request.target_path()), capability.status()});
      !checked.ok()) {
    return checked;
  }
  if (request.target_path() == request.staging_target_path()) {
    return InvalidArgument("target_path and staging_target_path must differ");
  }
  return capability;
}

Status CheckNodeUnpublishVolume(const csi::v1::NodeUnpublishVolumeRequest& request) {
  return First({Required(request.volume_id(), "volume_id"),
                node::CheckVolumePath("target_path", request.target_path())});
}

Status CheckNodeGetVolumeStats(const csi::v1::NodeGetVolumeStatsRequest& request) {
  return First(
      {Required(request.volume_id(), "volume_id"), Required(request.volume_path(), "volume_path")});
}

}  // namespace oxide::csi_adapter
