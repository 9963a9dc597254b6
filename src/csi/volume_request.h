// Checks and normalisation of what a CO asks of a volume: access capabilities, capacity ranges
// (Oxide disks are whole GiB, 1 GiB to 1023 GiB), StorageClass parameters and topology.
// Pure functions: any thread.
#pragma once

#include <cstdint>
#include <string>

#include "csi.pb.h"
#include "csi/disk_type_parameter.h"
#include "util/status.h"

namespace oxide::csi_adapter {

inline constexpr uint64_t kGiB = uint64_t{1} << 30;
inline constexpr uint64_t kMinDiskBytes = kGiB;
inline constexpr uint64_t kMaxDiskBytes = 1023 * kGiB;
inline constexpr const char* kBlockSizeParameter = "blockSize";
// "true": the node encrypts the volume (LUKS2) under the NodeStage secret's passphrase; carried
// to the node in volume_context under the same key.
inline constexpr const char* kEncryptedParameter = "encrypted";
inline constexpr const char* kProvisionerParameterPrefix = "csi.storage.k8s.io/";

// OK when every capability can be served: mount (ext4, xfs or unspecified) or block, and an
// access mode of a single node. INVALID_ARGUMENT otherwise, naming what is wrong.
Status CheckCapabilities(
    const google::protobuf::RepeatedPtrField<csi::v1::VolumeCapability>& capabilities);
Status CheckCapability(const csi::v1::VolumeCapability& capability);

// The disk size for a capacity range: `required_bytes` rounded up to whole GiB (at least 1 GiB),
// the default when no range is given; OUT_OF_RANGE when no Oxide size fits.
StatusOr<uint64_t> ChooseDiskSize(const csi::v1::CapacityRange& range, uint64_t default_bytes,
                                  bool has_range);

struct VolumeParameters {
  uint64_t block_size = 4096;
  bool block_size_given = false;
  bool encrypted = false;
  std::string pvc_name, pvc_namespace;
  std::string disk_type = backend::kDiskTypeDistributed;  // diskType (disk_type_parameter.h)
};
StatusOr<VolumeParameters> ParseParameters(
    const google::protobuf::Map<std::string, std::string>& parameters);

// Whether a topology names the zone this plugin serves (every segment must match).
bool TopologyMatches(const csi::v1::Topology& topology, const std::string& zone);

// A short digest of a request's fields, equal for identical retries (secrets included in the
// digest, never stored or logged as such).
std::string RequestFingerprint(const google::protobuf::Message& request);

}  // namespace oxide::csi_adapter
