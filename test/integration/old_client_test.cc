// A client compiled from CSI v1.10.0 keeps working against the plugin, which serves v1.12.0: its
// messages (test/compat/csi_v1_10.proto) go to the plugin's csi.v1 methods over the real socket,
// against the real simulator, and the plugin's answers parse with the old schema. gtest main
// thread only.
#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/impl/rpc_method.h>
#include <gtest/gtest.h>

#include <set>

#include "controller_fixture.h"
#include "csi_v1_10.pb.h"

namespace oxide::testing {
namespace {

class OldClientTest : public ControllerTest {
 protected:
  // One unary call to the csi.v1 method `path` with v1.10 messages, as the old client's stub
  // would make it: the method path and the wire bytes are all the plugin sees.
  template <typename Request, typename Response>
  grpc::Status CallAsV1_10(const std::string& path, const Request& request, Response* response) {
    std::shared_ptr<grpc::Channel> channel = UnixChannel(setup_->socket_path());
    grpc::internal::RpcMethod method(path.c_str(), grpc::internal::RpcMethod::NORMAL_RPC, channel);
    auto context = Call();
    return grpc::internal::BlockingUnaryCall<Request, Response, grpc::protobuf::MessageLite,
                                             grpc::protobuf::MessageLite>(
        channel.get(), method, context.get(), request, response);
  }
};

TEST_F(OldClientTest, AV1_10ClientProvisionsSnapshotsAndListsThem) {
  csi::v1_10::ControllerGetCapabilitiesResponse capabilities;
  ASSERT_TRUE(CallAsV1_10("/csi.v1.Controller/ControllerGetCapabilities",
                          csi::v1_10::ControllerGetCapabilitiesRequest(), &capabilities)
                  .ok());
  std::set<int> types;
  for (const auto& capability : capabilities.capabilities())
    types.insert(capability.rpc().type());
  using OldRpc = csi::v1_10::ControllerServiceCapability::RPC;
  EXPECT_TRUE(types.count(OldRpc::CREATE_DELETE_SNAPSHOT));
  EXPECT_TRUE(types.count(OldRpc::LIST_SNAPSHOTS));
  // GET_SNAPSHOT is new in v1.12: the old client keeps it as an unknown value of an open enum.
  EXPECT_TRUE(types.count(csi::v1::ControllerServiceCapability::RPC::GET_SNAPSHOT));
  EXPECT_FALSE(OldRpc::Type_IsValid(csi::v1::ControllerServiceCapability::RPC::GET_SNAPSHOT));

  csi::v1_10::CreateVolumeRequest create;
  create.set_name("pvc-old-client");
  create.mutable_capacity_range()->set_required_bytes(kGiB);
  auto* capability = create.add_volume_capabilities();
  capability->mutable_mount()->set_fs_type("ext4");
  capability->mutable_access_mode()->set_mode(
      csi::v1_10::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  csi::v1_10::CreateVolumeResponse created;
  grpc::Status status = CallAsV1_10("/csi.v1.Controller/CreateVolume", create, &created);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(created.volume().capacity_bytes(), kGiB);
  EXPECT_EQ(SimDisk(created.volume().volume_id())["size"], kGiB);

  csi::v1_10::CreateSnapshotRequest snap;
  snap.set_name("snap-old-client");
  snap.set_source_volume_id(created.volume().volume_id());
  csi::v1_10::CreateSnapshotResponse taken;
  status = CallAsV1_10("/csi.v1.Controller/CreateSnapshot", snap, &taken);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(taken.snapshot().source_volume_id(), created.volume().volume_id());

  csi::v1_10::ListSnapshotsRequest list;
  list.set_snapshot_id(taken.snapshot().snapshot_id());
  csi::v1_10::ListSnapshotsResponse listed;
  ASSERT_TRUE(CallAsV1_10("/csi.v1.Controller/ListSnapshots", list, &listed).ok());
  ASSERT_EQ(listed.entries_size(), 1);
  EXPECT_EQ(listed.entries(0).snapshot().snapshot_id(), taken.snapshot().snapshot_id());
  EXPECT_EQ(listed.entries(0).snapshot().ready_to_use(), taken.snapshot().ready_to_use());

  // What the v1.10 client made, a v1.12 client sees with GetSnapshot.
  csi::v1::GetSnapshotRequest get;
  get.set_snapshot_id(taken.snapshot().snapshot_id());
  csi::v1::GetSnapshotResponse got;
  ASSERT_TRUE(controller_->GetSnapshot(Call().get(), get, &got).ok());
  EXPECT_EQ(got.snapshot().source_volume_id(), created.volume().volume_id());

  csi::v1_10::DeleteVolumeRequest remove;
  remove.set_volume_id(created.volume().volume_id());
  csi::v1_10::DeleteVolumeResponse removed;
  ASSERT_TRUE(CallAsV1_10("/csi.v1.Controller/DeleteVolume", remove, &removed).ok());
}

// For clients that reject a capability they do not know (csi-sanity v5.3.1 is one): the plugin
// lists only v1.10's, and still serves GetSnapshot to those that ask.
class AdvertisingV1_10Test : public OldClientTest {
 protected:
  std::vector<std::string> plugin_args() const override { return {"--advertise-csi-version=1.10"}; }
};

TEST_F(AdvertisingV1_10Test, OnlyV1_10CapabilitiesAreListedAndGetSnapshotIsStillServed) {
  csi::v1_10::ControllerGetCapabilitiesResponse capabilities;
  ASSERT_TRUE(CallAsV1_10("/csi.v1.Controller/ControllerGetCapabilities",
                          csi::v1_10::ControllerGetCapabilitiesRequest(), &capabilities)
                  .ok());
  ASSERT_GT(capabilities.capabilities_size(), 0);
  for (const auto& capability : capabilities.capabilities()) {
    EXPECT_TRUE(csi::v1_10::ControllerServiceCapability::RPC::Type_IsValid(capability.rpc().type()))
        << capability.rpc().type();
  }
  csi::v1::Volume volume = MustCreate("pvc-v1-10");
  csi::v1::CreateSnapshotRequest take;
  take.set_name("snap-v1-10");
  take.set_source_volume_id(volume.volume_id());
  csi::v1::CreateSnapshotResponse taken;
  ASSERT_TRUE(controller_->CreateSnapshot(Call().get(), take, &taken).ok());
  csi::v1::GetSnapshotRequest get;
  get.set_snapshot_id(taken.snapshot().snapshot_id());
  csi::v1::GetSnapshotResponse got;
  ASSERT_TRUE(controller_->GetSnapshot(Call().get(), get, &got).ok());
  EXPECT_EQ(got.snapshot().source_volume_id(), volume.volume_id());
}

}  // namespace
}  // namespace oxide::testing
