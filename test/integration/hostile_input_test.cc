// Requests no well-behaved client sends, through the real socket: bytes that are not valid UTF-8
// in a string field, messages above the plugin's receive cap, fields above CSI's size limits.
// Each gets a clear code and the plugin keeps serving. gtest main thread only.
#include <gtest/gtest.h>

#include "controller_fixture.h"

namespace oxide::testing {
namespace {

class HostileInputTest : public ControllerTest {
 protected:
  void ExpectStillServing() {
    csi::v1::Volume volume = MustCreate("pvc-after-hostile-input");
    EXPECT_FALSE(volume.volume_id().empty());
  }
};

TEST_F(HostileInputTest, InvalidUtf8InAStringFieldIsInvalidArgumentNamingTheField) {
  // CreateVolumeRequest{name: "\xff"}: field 1, length 1, a byte that is never UTF-8.
  grpc::Status status =
      SendBytes("/csi.v1.Controller/CreateVolume", std::string("\x0a\x01\xff", 3));
  ExpectCode(status, grpc::StatusCode::INVALID_ARGUMENT,
             "the request is not a valid csi.v1.CreateVolumeRequest: String field "
             "'csi.v1.CreateVolumeRequest.name' contains invalid UTF-8");
  // Nothing raw from libprotobuf reached stderr: its reason is in the answer instead.
  EXPECT_EQ(plugin_->Log().find("[libprotobuf"), std::string::npos) << plugin_->Log();
  ExpectStillServing();
}

TEST_F(HostileInputTest, BytesThatAreNotAMessageAreInvalidArgument) {
  // Field 1 claims 100 bytes; 1 follows.
  grpc::Status status = SendBytes("/csi.v1.Controller/DeleteVolume", std::string("\x0a\x64x", 3));
  ExpectCode(status, grpc::StatusCode::INVALID_ARGUMENT,
             "the request is not a valid csi.v1.DeleteVolumeRequest");
  ExpectStillServing();
}

TEST_F(HostileInputTest, AMessageAboveTheReceiveCapIsResourceExhausted) {
  csi::v1::CreateVolumeRequest request = CreateRequest("pvc-huge");
  (*request.mutable_parameters())["blob"] = std::string(100 * 1024, 'x');
  ExpectCode(Create(request), grpc::StatusCode::RESOURCE_EXHAUSTED, "larger than max");
  ExpectStillServing();
}

TEST_F(HostileInputTest, AFieldAboveCsiSizeLimitsIsInvalidArgumentNamingIt) {
  csi::v1::CreateVolumeRequest request = CreateRequest(std::string(200, 'n'));
  ExpectCode(Create(request), grpc::StatusCode::INVALID_ARGUMENT,
             "name is 200 bytes; a string may be at most 128 bytes");
  request = CreateRequest("pvc-params");
  (*request.mutable_parameters())["blob"] = std::string(5000, 'x');
  ExpectCode(Create(request), grpc::StatusCode::INVALID_ARGUMENT,
             "parameters is 5004 bytes; a map may hold at most 4096 bytes");
  ExpectStillServing();
}

}  // namespace
}  // namespace oxide::testing
