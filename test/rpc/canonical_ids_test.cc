// CanonicalizeIds: UUID ids in any letter case become Oxide's lowercase form, at any depth;
// other strings and other fields are left exactly as they came.
#include "rpc/canonical_ids.h"

#include <gtest/gtest.h>

#include "csi.pb.h"

namespace oxide::rpc {
namespace {

constexpr const char* kUpper = "3F2504E0-4F89-41D3-9A0C-0305E82C3301";
constexpr const char* kLower = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";

TEST(CanonicalIds, VolumeAndNodeIdsOfAPublishBecomeLowercase) {
  csi::v1::ControllerPublishVolumeRequest request;
  request.set_volume_id(kUpper);
  request.set_node_id("3F2504E0-4f89-41D3-9a0c-0305E82C3301");
  (*request.mutable_volume_context())["note"] = kUpper;
  CanonicalizeIds(&request);
  EXPECT_EQ(request.volume_id(), kLower);
  EXPECT_EQ(request.node_id(), kLower);
  EXPECT_EQ(request.volume_context().at("note"), kUpper) << "only id fields are rewritten";
}

TEST(CanonicalIds, ContentSourceIdsAtAnyDepth) {
  csi::v1::CreateVolumeRequest from_snapshot;
  from_snapshot.set_name(kUpper);
  from_snapshot.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(kUpper);
  CanonicalizeIds(&from_snapshot);
  EXPECT_EQ(from_snapshot.volume_content_source().snapshot().snapshot_id(), kLower);
  EXPECT_EQ(from_snapshot.name(), kUpper) << "a CSI name is not an id";

  csi::v1::CreateSnapshotRequest snapshot;
  snapshot.set_source_volume_id(kUpper);
  CanonicalizeIds(&snapshot);
  EXPECT_EQ(snapshot.source_volume_id(), kLower);
}

TEST(CanonicalIds, WhatIsNotAUuidIsLeftAsItCame) {
  csi::v1::DeleteVolumeRequest request;
  for (const char* id : {"Not-A-UUID", "3F2504E04F8941D39A0C0305E82C3301", "", "vol-ABC"}) {
    request.set_volume_id(id);
    CanonicalizeIds(&request);
    EXPECT_EQ(request.volume_id(), id);
  }
}

}  // namespace
}  // namespace oxide::rpc
