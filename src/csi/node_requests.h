// Validation of the node RPCs' inputs: the volume capability (access type, fs_type, mount
// flags, access mode) and the NVMe serial a volume's disk shows, from publish_context and
// volume_context. Pure functions: any thread (the node service calls them on the loop thread).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "csi.pb.h"
#include "node/mounter.h"
#include "util/status.h"

namespace oxide::csi_adapter {

inline constexpr const char* kDefaultFsType = "ext4";

struct CapabilitySpec {
  bool block = false;
  std::string fs_type;  // mount only: "ext4" or "xfs"
  node::MountOptions options;
  csi::v1::VolumeCapability::AccessMode::Mode mode{};
  // Canonical text, compared to decide "identical" vs "incompatible" repeats.
  std::string key;
};

// INVALID_ARGUMENT when the capability is missing, has no access type, asks for a filesystem
// other than ext4/xfs, carries nonsensical mount flags, or an access mode a single-attach Oxide
// disk cannot offer (the MULTI_NODE_* modes).
StatusOr<CapabilitySpec> ParseCapability(bool present, const csi::v1::VolumeCapability& capability);

// The NVMe serial of the volume's disk: the first 20 bytes of diskName (publish_context first,
// then volume_context). INVALID_ARGUMENT when there is no diskName, or nvmeSerial disagrees.
StatusOr<std::string> ExpectedSerial(
    const google::protobuf::Map<std::string, std::string>& publish_context,
    const google::protobuf::Map<std::string, std::string>& volume_context);

// The disk's size the controller published (diskSizeBytes); nullopt when absent (an older
// controller). INVALID_ARGUMENT when it is not a positive decimal number of bytes.
StatusOr<std::optional<uint64_t>> PublishedDiskBytes(
    const google::protobuf::Map<std::string, std::string>& publish_context);

// Whether a volume is encrypted (volume_context "encrypted": "true"; absent or "false": not),
// and then its passphrase, from the NodeStage secret "encryptionPassphrase". INVALID_ARGUMENT
// for another value, or an encrypted volume without a usable passphrase (naming the secret key,
// never its value).
struct Encryption {
  bool encrypted = false;
  std::string passphrase;
};
StatusOr<Encryption> EncryptionOf(
    const google::protobuf::Map<std::string, std::string>& volume_context,
    const google::protobuf::Map<std::string, std::string>& secrets);

}  // namespace oxide::csi_adapter
