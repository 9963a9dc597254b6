// The StorageClass parameter diskType through ParseParameters: its values, its default, and the
// blockSize it allows with local disks (4096 only).
#include <gtest/gtest.h>

#include "csi/volume_request.h"

namespace oxide::csi_adapter {
namespace {

using Parameters = google::protobuf::Map<std::string, std::string>;

TEST(DiskTypeParameter, DistributedByDefaultLocalOnRequest) {
  EXPECT_EQ(ParseParameters({})->disk_type, "distributed");
  Parameters local;
  local["diskType"] = "local";
  ASSERT_TRUE(ParseParameters(local).ok());
  EXPECT_EQ(ParseParameters(local)->disk_type, "local");
  EXPECT_EQ(ParseParameters(local)->block_size, 4096u);
  Parameters distributed;
  distributed["diskType"] = "distributed";
  distributed["blockSize"] = "512";
  ASSERT_TRUE(ParseParameters(distributed).ok());
  EXPECT_EQ(ParseParameters(distributed)->disk_type, "distributed");
}

TEST(DiskTypeParameter, OtherValuesAreRefusedNamingTheValueAndTheChoices) {
  for (std::string bad : {"Local", "", "nvme", "local ", "distributed,local"}) {
    Parameters params;
    params["diskType"] = bad;
    Status refused = ParseParameters(params).status();
    EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(refused.message().find("diskType=\"" + bad + "\""), std::string::npos)
        << refused.message();
    EXPECT_NE(refused.message().find("distributed"), std::string::npos);
    EXPECT_NE(refused.message().find("local"), std::string::npos);
  }
}

TEST(DiskTypeParameter, ALocalDiskTakesOnlyBlockSize4096) {
  Parameters fits;
  fits["diskType"] = "local";
  fits["blockSize"] = "4096";
  ASSERT_TRUE(ParseParameters(fits).ok());
  EXPECT_TRUE(ParseParameters(fits)->block_size_given);
  for (std::string other : {"512", "2048"}) {
    Parameters params;
    params["diskType"] = "local";
    params["blockSize"] = other;
    Status refused = ParseParameters(params).status();
    EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument) << other;
    EXPECT_NE(refused.message().find("blockSize=\"" + other + "\""), std::string::npos)
        << refused.message();
    EXPECT_NE(refused.message().find("diskType=\"local\""), std::string::npos) << refused.message();
    EXPECT_NE(refused.message().find("4096"), std::string::npos);
  }
}

TEST(DiskTypeParameter, TheUnknownKeyMessageListsDiskType) {
  Parameters unknown;
  unknown["type"] = "local";
  Status refused = ParseParameters(unknown).status();
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("diskType (distributed|local)"), std::string::npos)
      << refused.message();
}

}  // namespace
}  // namespace oxide::csi_adapter
