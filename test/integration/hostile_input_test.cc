// Requests no well-behaved client sends, through the real socket: bytes that are not valid UTF-8
// in a string field, messages above the plugin's receive cap, fields above CSI's size limits.
// Each gets a clear code and the plugin keeps serving. gtest main thread only.
#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/impl/rpc_method.h>
#include <grpcpp/support/byte_buffer.h>
#include <gtest/gtest.h>

#include "controller_fixture.h"

namespace oxide::testing {
namespace {

class HostileInputTest : public ControllerTest {
 protected:
  // Sends `wire` as the request of the csi.v1 method `path`.
  grpc::Status SendBytes(const std::string& path, const std::string& wire) {
    std::shared_ptr<grpc::Channel> channel = UnixChannel(setup_->socket_path());
    grpc::internal::RpcMethod method(path.c_str(), grpc::internal::RpcMethod::NORMAL_RPC, channel);
    grpc::Slice slice(wire);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    auto context = Call();
    return grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(
        channel.get(), method, context.get(), request, &response);
  }

  void ExpectStillServing() {
    csi::v1::Volume volume = MustCreate("pvc-after-hostile-input");
    EXPECT_FALSE(volume.volume_id().empty());
  }
};

TEST_F(HostileInputTest, InvalidUtf8InAStringFieldIsRefusedByGrpcBeforeThePlugin) {
  // CreateVolumeRequest{name: "\xff"}: field 1, length 1, a byte that is never UTF-8.
  grpc::Status status =
      SendBytes("/csi.v1.Controller/CreateVolume", std::string("\x0a\x01\xff", 3));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL) << status.error_message();
  EXPECT_EQ(status.error_message(), "Unable to parse request");
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
