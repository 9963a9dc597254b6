// Debug text of CSI requests never shows a secret, at any depth.
#include "rpc/message_redaction.h"

#include <gtest/gtest.h>

#include "csi.pb.h"

namespace oxide::rpc {
namespace {

TEST(MessageRedaction, SecretValuesAreReplacedKeysAndOtherFieldsKept) {
  csi::v1::CreateVolumeRequest request;
  request.set_name("pvc-123");
  (*request.mutable_secrets())["password"] = "hunter2-secret-value";
  (*request.mutable_parameters())["blockSize"] = "4096";
  std::string text = RedactedText(request);
  EXPECT_EQ(text.find("hunter2-secret-value"), std::string::npos) << text;
  EXPECT_EQ(text.find("password"), std::string::npos) << "not even the keys: " << text;
  EXPECT_NE(text.find("secrets (1 entries): [REDACTED]"), std::string::npos) << text;
  EXPECT_NE(text.find("pvc-123"), std::string::npos) << text;
  EXPECT_NE(text.find("4096"), std::string::npos) << text;
  // The original message is untouched.
  EXPECT_EQ(request.secrets().at("password"), "hunter2-secret-value");
}

TEST(MessageRedaction, NodeAndSnapshotRequests) {
  csi::v1::NodeStageVolumeRequest stage;
  stage.set_volume_id("v1");
  (*stage.mutable_secrets())["key"] = "node-secret-abc";
  EXPECT_EQ(RedactedText(stage).find("node-secret-abc"), std::string::npos);
  csi::v1::ListSnapshotsRequest list;
  (*list.mutable_secrets())["k"] = "list-secret-xyz";
  EXPECT_EQ(RedactedText(list).find("list-secret-xyz"), std::string::npos);
}

}  // namespace
}  // namespace oxide::rpc
