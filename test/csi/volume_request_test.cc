// Checks of CreateVolume-style requests: capacity rounding to whole GiB, access modes and access
// types, StorageClass parameters, topology, and request fingerprints.
#include "csi/volume_request.h"

#include <gtest/gtest.h>

#include "config/settings.h"

namespace oxide::csi_adapter {
namespace {

using csi::v1::CapacityRange;
using csi::v1::VolumeCapability;
using Mode = csi::v1::VolumeCapability_AccessMode;

CapacityRange Range(int64_t required, int64_t limit) {
  CapacityRange range;
  range.set_required_bytes(required);
  range.set_limit_bytes(limit);
  return range;
}

constexpr uint64_t kDefault = 10 * kGiB;

TEST(ChooseDiskSize, RoundsUpToWholeGiB) {
  EXPECT_EQ(*ChooseDiskSize(Range(1, 0), kDefault, true), kGiB);
  EXPECT_EQ(*ChooseDiskSize(Range(kGiB, 0), kDefault, true), kGiB);
  EXPECT_EQ(*ChooseDiskSize(Range(kGiB + 1, 0), kDefault, true), 2 * kGiB);
  EXPECT_EQ(*ChooseDiskSize(Range(1536 << 20, 2 * kGiB), kDefault, true), 2 * kGiB);
  EXPECT_EQ(*ChooseDiskSize(Range(1023 * kGiB, 0), kDefault, true), 1023 * kGiB);
}

TEST(ChooseDiskSize, DefaultsAndLimits) {
  EXPECT_EQ(*ChooseDiskSize(CapacityRange(), kDefault, false), kDefault);
  EXPECT_EQ(*ChooseDiskSize(Range(0, 0), kDefault, true), kDefault);
  EXPECT_EQ(*ChooseDiskSize(Range(0, 3 * kGiB + 5), kDefault, true), 3 * kGiB);
  EXPECT_EQ(*ChooseDiskSize(Range(0, 100 * kGiB), kDefault, true), kDefault);
}

TEST(ChooseDiskSize, ImpossibleRangesAreOutOfRange) {
  for (auto [required, limit] : {std::pair<int64_t, int64_t>{0, kGiB - 1},
                                 {kGiB + 1, kGiB + 100},
                                 {1023 * kGiB + 1, 0},
                                 {2000 * kGiB, 0}}) {
    auto size = ChooseDiskSize(Range(required, limit), kDefault, true);
    ASSERT_FALSE(size.ok()) << required << " " << limit;
    EXPECT_EQ(size.status().code(), StatusCode::kOutOfRange);
    EXPECT_NE(size.status().message().find("GiB"), std::string::npos);
  }
}

TEST(ChooseDiskSize, NonsenseIsInvalid) {
  EXPECT_EQ(ChooseDiskSize(Range(-1, 0), kDefault, true).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ChooseDiskSize(Range(0, -5), kDefault, true).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ChooseDiskSize(Range(5 * kGiB, 2 * kGiB), kDefault, true).status().code(),
            StatusCode::kInvalidArgument);
}

VolumeCapability Mount(Mode::Mode mode, const std::string& fs = "") {
  VolumeCapability capability;
  capability.mutable_mount()->set_fs_type(fs);
  capability.mutable_access_mode()->set_mode(mode);
  return capability;
}

TEST(Capabilities, SingleNodeModesAndBothAccessTypesAreAccepted) {
  for (auto mode : {Mode::SINGLE_NODE_WRITER, Mode::SINGLE_NODE_READER_ONLY,
                    Mode::SINGLE_NODE_SINGLE_WRITER, Mode::SINGLE_NODE_MULTI_WRITER}) {
    EXPECT_TRUE(CheckCapability(Mount(mode)).ok());
    VolumeCapability block;
    block.mutable_block();
    block.mutable_access_mode()->set_mode(mode);
    EXPECT_TRUE(CheckCapability(block).ok());
  }
  EXPECT_TRUE(CheckCapability(Mount(Mode::SINGLE_NODE_WRITER, "ext4")).ok());
  EXPECT_TRUE(CheckCapability(Mount(Mode::SINGLE_NODE_WRITER, "xfs")).ok());
}

TEST(Capabilities, MultiNodeModesAreRefusedWithTheReason) {
  for (auto mode : {Mode::MULTI_NODE_READER_ONLY, Mode::MULTI_NODE_SINGLE_WRITER,
                    Mode::MULTI_NODE_MULTI_WRITER}) {
    Status checked = CheckCapability(Mount(mode));
    EXPECT_EQ(checked.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(checked.message().find("one instance"), std::string::npos) << checked.message();
  }
}

TEST(Capabilities, MissingOrUnknownPartsAreRefused) {
  google::protobuf::RepeatedPtrField<VolumeCapability> none;
  EXPECT_EQ(CheckCapabilities(none).code(), StatusCode::kInvalidArgument);
  VolumeCapability no_type;
  no_type.mutable_access_mode()->set_mode(Mode::SINGLE_NODE_WRITER);
  EXPECT_EQ(CheckCapability(no_type).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckCapability(Mount(Mode::UNKNOWN)).code(), StatusCode::kInvalidArgument);
  Status btrfs = CheckCapability(Mount(Mode::SINGLE_NODE_WRITER, "btrfs"));
  EXPECT_EQ(btrfs.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(btrfs.message().find("btrfs"), std::string::npos);
}

TEST(Parameters, BlockSizeAndProvisionerKeys) {
  google::protobuf::Map<std::string, std::string> params;
  params["blockSize"] = "512";
  params["csi.storage.k8s.io/pvc/name"] = "data";
  params["csi.storage.k8s.io/pvc/namespace"] = "db";
  params["csi.storage.k8s.io/pv/name"] = "pvc-1";
  auto parsed = ParseParameters(params);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->block_size, 512u);
  EXPECT_TRUE(parsed->block_size_given);
  EXPECT_EQ(parsed->pvc_name, "data");
  EXPECT_EQ(parsed->pvc_namespace, "db");
  EXPECT_EQ(ParseParameters({})->block_size, 4096u);
}

TEST(Parameters, UnknownKeysAndBadBlockSizesAreRefusedListingWhatIsAccepted) {
  google::protobuf::Map<std::string, std::string> unknown;
  unknown["type"] = "ssd";
  Status refused = ParseParameters(unknown).status();
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("\"type\""), std::string::npos);
  EXPECT_NE(refused.message().find("blockSize"), std::string::npos);
  for (std::string bad : {"1024", "4k", "", "-512"}) {
    google::protobuf::Map<std::string, std::string> params;
    params["blockSize"] = bad;
    EXPECT_EQ(ParseParameters(params).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(Topology, OnlyOurZoneMatches) {
  csi::v1::Topology topology;
  (*topology.mutable_segments())[kTopologyKey] = "zone-a";
  EXPECT_TRUE(TopologyMatches(topology, "zone-a"));
  EXPECT_FALSE(TopologyMatches(topology, "zone-b"));
  (*topology.mutable_segments())["other/key"] = "x";
  EXPECT_FALSE(TopologyMatches(topology, "zone-a"));
}

TEST(Fingerprint, EqualForIdenticalRequestsOnly) {
  csi::v1::CreateVolumeRequest a;
  a.set_name("v");
  (*a.mutable_parameters())["blockSize"] = "512";
  (*a.mutable_parameters())["csi.storage.k8s.io/pvc/name"] = "x";
  csi::v1::CreateVolumeRequest b = a;
  EXPECT_EQ(RequestFingerprint(a), RequestFingerprint(b));
  b.mutable_capacity_range()->set_required_bytes(1);
  EXPECT_NE(RequestFingerprint(a), RequestFingerprint(b));
}

}  // namespace
}  // namespace oxide::csi_adapter
