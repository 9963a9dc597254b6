// An RPC the current mode does not serve answers UNIMPLEMENTED with a message naming it; so does
// every service the plugin does not register (GroupController, SnapshotMetadata).
#include <gtest/gtest.h>

#include "csi.grpc.pb.h"
#include "support/plugin_setup.h"

namespace oxide::testing {
namespace {

template <typename Call>
void ExpectUnimplemented(const char* rpc, Call call) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Status status = call(&context);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED)
      << rpc << ": " << status.error_message();
}

TEST(Unimplemented, ControllerRpcsOnANodeOnlyPlugin) {
  PluginSetup setup("node");
  auto plugin = setup.Start();
  auto stub = csi::v1::Controller::NewStub(UnixChannel(setup.socket_path()));
#define CALL(name)                                         \
  ExpectUnimplemented(#name, [&](grpc::ClientContext* c) { \
    csi::v1::name##Request request;                        \
    csi::v1::name##Response response;                      \
    return stub->name(c, request, &response);              \
  })
  CALL(CreateVolume);
  CALL(DeleteVolume);
  CALL(ControllerPublishVolume);
  CALL(ControllerUnpublishVolume);
  CALL(ValidateVolumeCapabilities);
  CALL(ListVolumes);
  CALL(GetCapacity);
  CALL(ControllerGetCapabilities);
  CALL(CreateSnapshot);
  CALL(DeleteSnapshot);
  CALL(ListSnapshots);
  CALL(ControllerExpandVolume);
  CALL(ControllerGetVolume);
  CALL(ControllerModifyVolume);
  CALL(GetSnapshot);
#undef CALL
  grpc::ClientContext context;
  csi::v1::CreateVolumeResponse response;
  grpc::Status status = stub->CreateVolume(&context, {}, &response);
  EXPECT_NE(status.error_message().find("CreateVolume"), std::string::npos);
  EXPECT_NE(status.error_message().find("--mode"), std::string::npos);
}

TEST(Unimplemented, NodeRpcsOnAControllerOnlyPlugin) {
  PluginSetup setup("controller");
  auto plugin = setup.Start();
  auto stub = csi::v1::Node::NewStub(UnixChannel(setup.socket_path()));
#define CALL(name)                                         \
  ExpectUnimplemented(#name, [&](grpc::ClientContext* c) { \
    csi::v1::name##Request request;                        \
    csi::v1::name##Response response;                      \
    return stub->name(c, request, &response);              \
  })
  CALL(NodeStageVolume);
  CALL(NodeUnstageVolume);
  CALL(NodePublishVolume);
  CALL(NodeUnpublishVolume);
  CALL(NodeGetVolumeStats);
  CALL(NodeExpandVolume);
  CALL(NodeGetCapabilities);
  CALL(NodeGetInfo);
#undef CALL
}

TEST(Unimplemented, UnregisteredServices) {
  PluginSetup setup("all");
  auto plugin = setup.Start();
  auto group = csi::v1::GroupController::NewStub(UnixChannel(setup.socket_path()));
  ExpectUnimplemented("GroupControllerGetCapabilities", [&](grpc::ClientContext* c) {
    csi::v1::GroupControllerGetCapabilitiesResponse response;
    return group->GroupControllerGetCapabilities(c, {}, &response);
  });
}

}  // namespace
}  // namespace oxide::testing
