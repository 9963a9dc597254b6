#include "csi/node_requests.h"

#include "csi/csi_context_keys.h"
#include "node/device_finder.h"
#include "node/encrypted_volume.h"
#include "node/formatter.h"
#include "node/luks.h"

namespace oxide::csi_adapter {

using csi::v1::VolumeCapability;

StatusOr<CapabilitySpec> ParseCapability(bool present, const VolumeCapability& capability) {
  if (!present) return InvalidArgument("volume_capability is required");
  CapabilitySpec spec;
  if (!capability.has_access_mode())
    return InvalidArgument("volume_capability.access_mode is required");
  spec.mode = capability.access_mode().mode();
  switch (spec.mode) {
    case VolumeCapability::AccessMode::SINGLE_NODE_WRITER:
    case VolumeCapability::AccessMode::SINGLE_NODE_READER_ONLY:
    case VolumeCapability::AccessMode::SINGLE_NODE_SINGLE_WRITER:
    case VolumeCapability::AccessMode::SINGLE_NODE_MULTI_WRITER:
      break;
    default:
      return InvalidArgument("access mode " + VolumeCapability::AccessMode::Mode_Name(spec.mode) +
                             " is not supported: an Oxide disk attaches to one instance");
  }
  if (capability.has_block()) {
    spec.block = true;
    spec.key = "block";
  } else if (capability.has_mount()) {
    const auto& mount = capability.mount();
    spec.fs_type = mount.fs_type().empty() ? kDefaultFsType : mount.fs_type();
    if (!node::IsSupportedFilesystem(spec.fs_type)) {
      return InvalidArgument("fs_type \"" + spec.fs_type + "\" is not supported; use ext4 or xfs");
    }
    std::vector<std::string> flags(mount.mount_flags().begin(), mount.mount_flags().end());
    auto options = node::ParseMountFlags(flags);
    if (!options.ok()) return options.status();
    spec.options = *options;
    spec.key = "mount:" + spec.fs_type + ":" + std::to_string(spec.options.flags) + ":" +
               spec.options.data;
  } else {
    return InvalidArgument("volume_capability needs an access type: mount or block");
  }
  spec.key += ":mode=" + std::to_string(static_cast<int>(spec.mode));
  return spec;
}

StatusOr<std::string> ExpectedSerial(
    const google::protobuf::Map<std::string, std::string>& publish_context,
    const google::protobuf::Map<std::string, std::string>& volume_context) {
  std::string name;
  if (auto it = publish_context.find(kDiskNameKey); it != publish_context.end()) {
    name = it->second;
  } else if (auto vit = volume_context.find(kDiskNameKey); vit != volume_context.end()) {
    name = vit->second;
  }
  if (name.empty()) {
    return InvalidArgument(std::string("neither publish_context nor volume_context carries ") +
                           kDiskNameKey + ": the node cannot tell which disk is the volume's");
  }
  if (name.find('\0') != std::string::npos || name.find('/') != std::string::npos) {
    return InvalidArgument(std::string(kDiskNameKey) + " \"" + name +
                           "\" is not an Oxide disk name");
  }
  std::string serial = name.substr(0, node::kSerialLength);
  if (auto it = publish_context.find(kNvmeSerialKey);
      it != publish_context.end() && it->second != serial) {
    return InvalidArgument(std::string(kNvmeSerialKey) + " \"" + it->second +
                           "\" is not the first 20 bytes of " + kDiskNameKey + " \"" + name + "\"");
  }
  return serial;
}

StatusOr<std::optional<uint64_t>> PublishedDiskBytes(
    const google::protobuf::Map<std::string, std::string>& publish_context) {
  auto it = publish_context.find(kDiskSizeBytesKey);
  if (it == publish_context.end()) return std::optional<uint64_t>();
  const std::string& text = it->second;
  uint64_t bytes = 0;
  bool valid = !text.empty() && text.size() <= 20;
  for (char c : text) {
    if (!valid) break;
    valid = c >= '0' && c <= '9' && bytes <= (UINT64_MAX - static_cast<uint64_t>(c - '0')) / 10;
    if (valid) bytes = bytes * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!valid || bytes == 0) {
    return InvalidArgument(std::string("publish_context ") + kDiskSizeBytesKey + " \"" +
                           text.substr(0, 40) + "\" is not a size in bytes (a positive decimal)");
  }
  return std::optional<uint64_t>(bytes);
}

StatusOr<Encryption> EncryptionOf(
    const google::protobuf::Map<std::string, std::string>& volume_context,
    const google::protobuf::Map<std::string, std::string>& secrets) {
  Encryption encryption;
  auto it = volume_context.find(node::kEncryptedParameter);
  if (it == volume_context.end() || it->second == "false") return encryption;
  if (it->second != "true") {
    return InvalidArgument(std::string("volume_context ") + node::kEncryptedParameter + " \"" +
                           it->second.substr(0, 40) + "\" is neither \"true\" nor \"false\"");
  }
  encryption.encrypted = true;
  auto secret = secrets.find(node::kPassphraseSecretKey);
  if (secret == secrets.end()) {
    return InvalidArgument(
        std::string("the volume is encrypted, but the NodeStage secrets hold no key \"") +
        node::kPassphraseSecretKey +
        "\": name a Secret with that key in the StorageClass parameters "
        "csi.storage.k8s.io/node-stage-secret-name and "
        "csi.storage.k8s.io/node-stage-secret-namespace");
  }
  if (Status usable = node::CheckPassphrase(secret->second, node::kPassphraseSecretKey);
      !usable.ok()) {
    return usable;
  }
  encryption.passphrase = secret->second;
  return encryption;
}

}  // namespace oxide::csi_adapter
