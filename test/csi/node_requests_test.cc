// Unit tests of the node RPC input checks: capability parsing and the expected NVMe serial.
#include "csi/node_requests.h"

#include <gtest/gtest.h>

#include "csi/csi_context_keys.h"

namespace oxide::csi_adapter {
namespace {

using csi::v1::VolumeCapability;

VolumeCapability Mount(
    const std::string& fs_type,
    VolumeCapability::AccessMode::Mode mode = VolumeCapability::AccessMode::SINGLE_NODE_WRITER) {
  VolumeCapability capability;
  capability.mutable_mount()->set_fs_type(fs_type);
  capability.mutable_access_mode()->set_mode(mode);
  return capability;
}

TEST(NodeRequests, MountCapabilityDefaultsToExt4) {
  auto spec = ParseCapability(true, Mount(""));
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_FALSE(spec->block);
  EXPECT_EQ(spec->fs_type, "ext4");
  auto xfs = ParseCapability(true, Mount("xfs"));
  ASSERT_TRUE(xfs.ok());
  EXPECT_NE(spec->key, xfs->key);
}

TEST(NodeRequests, BadCapabilitiesAreInvalidArguments) {
  EXPECT_EQ(ParseCapability(false, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseCapability(true, Mount("btrfs")).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ParseCapability(true, Mount("ext4", VolumeCapability::AccessMode::MULTI_NODE_MULTI_WRITER))
          .status()
          .code(),
      StatusCode::kInvalidArgument);
  VolumeCapability no_type;
  no_type.mutable_access_mode()->set_mode(VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  EXPECT_EQ(ParseCapability(true, no_type).status().code(), StatusCode::kInvalidArgument);
  VolumeCapability bind = Mount("ext4");
  bind.mutable_mount()->add_mount_flags("bind");
  EXPECT_EQ(ParseCapability(true, bind).status().code(), StatusCode::kInvalidArgument);
}

TEST(NodeRequests, SerialIsTheFirst20BytesOfTheDiskName) {
  google::protobuf::Map<std::string, std::string> publish;
  google::protobuf::Map<std::string, std::string> volume;
  EXPECT_EQ(ExpectedSerial(publish, volume).status().code(), StatusCode::kInvalidArgument);
  volume[kDiskNameKey] = "csi-0123456789abcdef-data";
  EXPECT_EQ(*ExpectedSerial(publish, volume), "csi-0123456789abcdef");
  publish[kDiskNameKey] = "csi-fedcba9876543210";
  publish[kNvmeSerialKey] = "csi-fedcba9876543210";
  EXPECT_EQ(*ExpectedSerial(publish, volume), "csi-fedcba9876543210");
  publish[kNvmeSerialKey] = "csi-0000000000000000";
  EXPECT_EQ(ExpectedSerial(publish, volume).status().code(), StatusCode::kInvalidArgument);
  publish.clear();
  publish[kDiskNameKey] = "short";
  EXPECT_EQ(*ExpectedSerial(publish, volume), "short");
}

}  // namespace
}  // namespace oxide::csi_adapter
