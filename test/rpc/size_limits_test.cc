// CheckSizeLimits: CSI's limits on strings, maps and repeated strings at any depth, the path and
// page-token exceptions, and messages that name the field and the limit without the value.
#include "rpc/size_limits.h"

#include <gtest/gtest.h>

#include "csi.pb.h"

namespace oxide::rpc {
namespace {

void ExpectTooLarge(const google::protobuf::Message& message, const std::string& field,
                    const std::string& value_part) {
  Status status = CheckSizeLimits(message);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << message.GetTypeName();
  EXPECT_NE(status.message().find(field + " is "), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("CSI size limits"), std::string::npos) << status.message();
  EXPECT_EQ(status.message().find(value_part), std::string::npos) << "the value is echoed";
}

TEST(SizeLimits, StringsUpTo128BytesPassAndLongerOnesAreNamed) {
  csi::v1::CreateVolumeRequest request;
  request.set_name(std::string(128, 'n'));
  EXPECT_TRUE(CheckSizeLimits(request).ok());
  request.set_name(std::string(1 << 20, 'n'));
  ExpectTooLarge(request, "name", "nnnn");
  Status status = CheckSizeLimits(request);
  EXPECT_NE(status.message().find("1048576 bytes"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("at most 128 bytes"), std::string::npos) << status.message();
}

TEST(SizeLimits, NestedAndRepeatedFieldsAreNamedWithTheirPath) {
  csi::v1::CreateVolumeRequest request;
  request.set_name("pvc-1");
  request.add_volume_capabilities()->mutable_mount()->set_fs_type("ext4");
  request.add_volume_capabilities()->mutable_mount()->set_fs_type(std::string(129, 'f'));
  ExpectTooLarge(request, "volume_capabilities[1].mount.fs_type", "ffff");

  csi::v1::NodePublishVolumeRequest publish;
  for (int i = 0; i < 64; ++i)
    publish.mutable_volume_capability()->mutable_mount()->add_mount_flags(std::string(64, 'o'));
  EXPECT_TRUE(CheckSizeLimits(publish).ok()) << "4 KiB of mount flags in total";
  publish.mutable_volume_capability()->mutable_mount()->add_mount_flags("x");
  ExpectTooLarge(publish, "volume_capability.mount.mount_flags", "oooo");
}

TEST(SizeLimits, MapsUpTo4KiBOfKeysAndValues) {
  csi::v1::CreateVolumeRequest request;
  request.set_name("pvc-1");
  for (int i = 0; i < 32; ++i) {
    (*request.mutable_parameters())["k" + std::to_string(i + 100)] = std::string(124, 'v');
  }
  EXPECT_TRUE(CheckSizeLimits(request).ok()) << "32 x (4 + 124) bytes = 4 KiB";
  (*request.mutable_parameters())["one-more"] = "v";
  ExpectTooLarge(request, "parameters", "vvvv");
  request.clear_parameters();
  (*request.mutable_secrets())["password"] = std::string(5000, 's');
  ExpectTooLarge(request, "secrets", "ssss");
}

TEST(SizeLimits, PathsFollowPathMaxAndPageTokens4KiB) {
  csi::v1::NodeStageVolumeRequest stage;
  stage.set_volume_id("v");
  stage.set_staging_target_path("/" + std::string(4095, 'p'));
  EXPECT_TRUE(CheckSizeLimits(stage).ok());
  stage.set_staging_target_path("/" + std::string(4096, 'p'));
  ExpectTooLarge(stage, "staging_target_path", "pppp");

  csi::v1::ListVolumesRequest list;
  list.set_starting_token("ox1." + std::string(1000, 't'));
  EXPECT_TRUE(CheckSizeLimits(list).ok()) << "the plugin's own page tokens";
  list.set_starting_token(std::string(100 * 1024, 't'));
  ExpectTooLarge(list, "starting_token", "tttt");
}

}  // namespace
}  // namespace oxide::rpc
