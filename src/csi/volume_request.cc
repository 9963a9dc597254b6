#include "csi/volume_request.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "config/settings.h"
#include "csi/filesystem_options.h"
#include "util/sha256.h"

namespace oxide::csi_adapter {
namespace {

using csi::v1::VolumeCapability;
using AccessMode = csi::v1::VolumeCapability_AccessMode;

std::string GiBText(uint64_t bytes) {
  return bytes % kGiB == 0 ? std::to_string(bytes / kGiB) + " GiB"
                           : std::to_string(bytes) + " bytes";
}

}  // namespace

Status CheckCapability(const VolumeCapability& capability) {
  if (capability.has_mount()) {
    const std::string& fs = capability.mount().fs_type();
    if (!fs.empty() && fs != "ext4" && fs != "xfs") {
      return InvalidArgument("volume capability: fs_type \"" + fs +
                             "\" is not supported; use ext4 (the default) or xfs");
    }
  } else if (!capability.has_block()) {
    return InvalidArgument("volume capability: access_type must be mount or block");
  }
  switch (capability.access_mode().mode()) {
    case AccessMode::SINGLE_NODE_WRITER:
    case AccessMode::SINGLE_NODE_READER_ONLY:
    case AccessMode::SINGLE_NODE_SINGLE_WRITER:
    case AccessMode::SINGLE_NODE_MULTI_WRITER:
      return Status::Ok();
    case AccessMode::MULTI_NODE_READER_ONLY:
    case AccessMode::MULTI_NODE_SINGLE_WRITER:
    case AccessMode::MULTI_NODE_MULTI_WRITER:
      return InvalidArgument(
          "volume capability: access mode " +
          AccessMode::Mode_Name(capability.access_mode().mode()) +
          " is not supported: an Oxide disk attaches to one instance at a time; use a "
          "SINGLE_NODE_* mode (ReadWriteOnce / ReadWriteOncePod)");
    default:
      return InvalidArgument("volume capability: access_mode is missing or unknown");
  }
}

Status CheckCapabilities(const google::protobuf::RepeatedPtrField<VolumeCapability>& capabilities) {
  if (capabilities.empty()) return InvalidArgument("volume_capabilities is required");
  for (const VolumeCapability& capability : capabilities) {
    Status checked = CheckCapability(capability);
    if (!checked.ok()) return checked;
  }
  return Status::Ok();
}

StatusOr<uint64_t> ChooseDiskSize(const csi::v1::CapacityRange& range, uint64_t default_bytes,
                                  bool has_range) {
  int64_t required = range.required_bytes();
  int64_t limit = range.limit_bytes();
  if (!has_range || (required == 0 && limit == 0)) return default_bytes;
  if (required < 0 || limit < 0) {
    return InvalidArgument("capacity_range: required_bytes and limit_bytes may not be negative");
  }
  if (limit > 0 && required > limit) {
    return InvalidArgument("capacity_range: required_bytes " + std::to_string(required) +
                           " is above limit_bytes " + std::to_string(limit));
  }
  uint64_t size;
  if (required == 0) {
    // Only a limit: the default, or the largest whole GiB under the limit.
    size = std::min<uint64_t>(default_bytes, static_cast<uint64_t>(limit) / kGiB * kGiB);
  } else {
    size = (static_cast<uint64_t>(required) + kGiB - 1) / kGiB * kGiB;
    size = std::max(size, kMinDiskBytes);
  }
  if (size < kMinDiskBytes || (limit > 0 && size > static_cast<uint64_t>(limit))) {
    return OutOfRange(
        "capacity_range: Oxide disks are whole GiB from 1 GiB to 1023 GiB, and none "
        "fits between " +
        std::to_string(required) + " and " + std::to_string(limit) + " bytes");
  }
  if (size > kMaxDiskBytes) {
    return OutOfRange("capacity_range: " + GiBText(size) +
                      " is above the largest Oxide disk, 1023 GiB");
  }
  return size;
}

StatusOr<VolumeParameters> ParseParameters(
    const google::protobuf::Map<std::string, std::string>& parameters) {
  VolumeParameters parsed;
  for (const auto& [key, value] : parameters) {
    if (key == kBlockSizeParameter) {
      if (value != "512" && value != "2048" && value != "4096") {
        return InvalidArgument("parameter blockSize=\"" + value +
                               "\" is not valid; Oxide disks have a block size of 512, 2048 or "
                               "4096 bytes");
      }
      parsed.block_size = std::stoull(value);
      parsed.block_size_given = true;
    } else if (key == kEncryptedParameter) {
      if (value != "true" && value != "false") {
        return InvalidArgument("parameter encrypted=\"" + value +
                               "\" is not valid; use \"true\" (LUKS2 on the node, under the "
                               "passphrase of the NodeStage secret) or \"false\"");
      }
      parsed.encrypted = value == "true";
    } else if (IsFilesystemOptionKey(key)) {
      continue;  // checked against the capabilities' fs type: csi/filesystem_options.h
    } else if (key == kDiskTypeParameter) {
      StatusOr<std::string> disk_type = ParseDiskType(value);
      if (!disk_type.ok()) return disk_type.status();
      parsed.disk_type = *disk_type;
    } else if (key.rfind(kProvisionerParameterPrefix, 0) == 0) {
      if (key == "csi.storage.k8s.io/pvc/name") parsed.pvc_name = value;
      if (key == "csi.storage.k8s.io/pvc/namespace") parsed.pvc_namespace = value;
    } else {
      return InvalidArgument(
          "parameter \"" + key +
          "\" is not known; the accepted parameters are blockSize (512|2048|4096), diskType "
          "(distributed|local), encrypted (true|false), the filesystem options fsBlockSize, "
          "inodeSize, bytesPerInode, numberOfInodes, ext4BigAlloc and ext4ClusterSize, and the "
          "provisioner's csi.storage.k8s.io/* keys");
    }
  }
  Status fits =
      CheckDiskTypeBlockSize(parsed.disk_type, parsed.block_size, parsed.block_size_given);
  if (!fits.ok()) return fits;
  return parsed;
}

bool TopologyMatches(const csi::v1::Topology& topology, const std::string& zone) {
  for (const auto& [key, value] : topology.segments()) {
    if (key != kTopologyKey || value != zone) return false;
  }
  return true;
}

std::string RequestFingerprint(const google::protobuf::Message& request) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    request.SerializeToCodedStream(&coded);
  }
  return Sha256Hex(bytes).substr(0, 32);
}

}  // namespace oxide::csi_adapter
