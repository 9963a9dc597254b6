// The codes of every RPC's refusals, through the socket, against the CSI spec's error tables and
// in the order the public conformance suite (csi-sanity) checks them: a required field missing is
// INVALID_ARGUMENT before anything is looked up; an unknown object is NOT_FOUND where the spec
// says so (and OK for the deletes and unpublishes that may treat it as done); a bad page token is
// ABORTED. One table, the real plugin in --mode=all against oxide-sim. Needs root (guest devices).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "guest_volume_fixture.h"

namespace oxide::testing {
namespace {

using grpc::StatusCode;

constexpr const char* kUnknownId = "5b2ad3a4-1c55-4f43-9d3e-2a4a0bd0c0de";

struct Case {
  std::string what;
  std::function<grpc::Status()> call;
  StatusCode code;
  std::string message_part;  // "" = any message
};

class ErrorCodesTest : public GuestVolumeTest {
 protected:
  // A case's call: `base` changed by `edit`, sent through `method` of `stub`.
  template <typename Stub, typename Request, typename Response>
  std::function<grpc::Status()> Send(
      Stub* stub, grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
      Request base, std::type_identity_t<std::function<void(Request&)>> edit = nullptr) {
    return [this, stub, method, base, edit] {
      Request request = base;
      if (edit) edit(request);
      Response response;
      return (stub->*method)(Call().get(), request, &response);
    };
  }
};

TEST_F(ErrorCodesTest, EveryRpcRefusesBadInputWithTheSpecsCode) {
  auto node_stub = csi::v1::Node::NewStub(UnixChannel(setup_->socket_path()));
  csi::v1::Node::Stub* node = node_stub.get();
  csi::v1::Controller::Stub* controller = controller_.get();
  using Controller = csi::v1::Controller::Stub;
  using Node = csi::v1::Node::Stub;
  const csi::v1::VolumeCapability mount = MountCapability();
  const std::string staging = work_.File("staging-codes");
  const std::string target = work_.File("target-codes");

  // Requests that are complete and name objects that do not exist; each case takes one away.
  csi::v1::CreateVolumeRequest create = CreateRequest("pvc-codes");
  csi::v1::ControllerPublishVolumeRequest publish;
  publish.set_volume_id(kUnknownId);
  publish.set_node_id(node_id_);
  *publish.mutable_volume_capability() = mount;
  csi::v1::ControllerUnpublishVolumeRequest unpublish;
  unpublish.set_volume_id(kUnknownId);
  unpublish.set_node_id(node_id_);
  csi::v1::ValidateVolumeCapabilitiesRequest validate;
  validate.set_volume_id(kUnknownId);
  *validate.add_volume_capabilities() = mount;
  csi::v1::CreateSnapshotRequest snapshot;
  snapshot.set_name("snap-codes");
  snapshot.set_source_volume_id(kUnknownId);
  csi::v1::DeleteSnapshotRequest delete_snapshot;
  delete_snapshot.set_snapshot_id(kUnknownId);
  csi::v1::GetSnapshotRequest get_snapshot;
  get_snapshot.set_snapshot_id(kUnknownId);
  csi::v1::NodeStageVolumeRequest stage;
  stage.set_volume_id(kUnknownId);
  stage.set_staging_target_path(staging);
  *stage.mutable_volume_capability() = mount;
  csi::v1::NodeUnstageVolumeRequest unstage;
  unstage.set_volume_id(kUnknownId);
  unstage.set_staging_target_path(staging);
  csi::v1::NodePublishVolumeRequest node_publish;
  node_publish.set_volume_id(kUnknownId);
  node_publish.set_staging_target_path(staging);
  node_publish.set_target_path(target);
  *node_publish.mutable_volume_capability() = mount;
  csi::v1::NodeUnpublishVolumeRequest node_unpublish;
  node_unpublish.set_volume_id(kUnknownId);
  node_unpublish.set_target_path(target);
  csi::v1::NodeGetVolumeStatsRequest stats;
  stats.set_volume_id(kUnknownId);
  stats.set_volume_path(target);
  csi::v1::ListVolumesRequest list_volumes;
  list_volumes.set_starting_token("not-a-token");
  csi::v1::ListSnapshotsRequest list_snapshots;
  list_snapshots.set_starting_token("not-a-token");

  const auto kInvalid = StatusCode::INVALID_ARGUMENT;
  const std::vector<Case> cases = {
      {"CreateVolume without a name",
       Send<Controller>(controller, &Controller::CreateVolume, create,
                        [](auto& r) { r.clear_name(); }),
       kInvalid, "name"},
      {"CreateVolume without capabilities",
       Send<Controller>(controller, &Controller::CreateVolume, create,
                        [](auto& r) { r.clear_volume_capabilities(); }),
       kInvalid, "capabilit"},
      {"CreateVolume above the largest disk",
       Send<Controller>(
           controller, &Controller::CreateVolume, create,
           [](auto& r) { r.mutable_capacity_range()->set_required_bytes(int64_t{2} << 40); }),
       StatusCode::OUT_OF_RANGE, ""},
      {"CreateVolume from an unknown snapshot",
       Send<Controller>(controller, &Controller::CreateVolume, create,
                        [](auto& r) {
                          r.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(
                              kUnknownId);
                        }),
       StatusCode::NOT_FOUND, ""},
      {"CreateVolume from an unknown volume",
       Send<Controller>(controller, &Controller::CreateVolume, create,
                        [](auto& r) {
                          r.mutable_volume_content_source()->mutable_volume()->set_volume_id(
                              kUnknownId);
                        }),
       StatusCode::NOT_FOUND, ""},
      {"DeleteVolume without an id",
       Send<Controller>(controller, &Controller::DeleteVolume, csi::v1::DeleteVolumeRequest{}),
       kInvalid, "volume_id"},
      {"DeleteVolume of an unknown volume", [&] { return Delete(kUnknownId); }, StatusCode::OK, ""},
      {"ControllerPublishVolume without a volume id",
       Send<Controller>(controller, &Controller::ControllerPublishVolume, publish,
                        [](auto& r) { r.clear_volume_id(); }),
       kInvalid, "volume_id"},
      {"ControllerPublishVolume without a node id",
       Send<Controller>(controller, &Controller::ControllerPublishVolume, publish,
                        [](auto& r) { r.clear_node_id(); }),
       kInvalid, "node_id"},
      {"ControllerPublishVolume without a capability",
       Send<Controller>(controller, &Controller::ControllerPublishVolume, publish,
                        [](auto& r) { r.clear_volume_capability(); }),
       kInvalid, "capability"},
      {"ControllerPublishVolume of an unknown volume",
       Send<Controller>(controller, &Controller::ControllerPublishVolume, publish),
       StatusCode::NOT_FOUND, ""},
      {"ControllerUnpublishVolume without a volume id",
       Send<Controller>(controller, &Controller::ControllerUnpublishVolume, unpublish,
                        [](auto& r) { r.clear_volume_id(); }),
       kInvalid, "volume_id"},
      {"ControllerUnpublishVolume of an unknown volume",
       Send<Controller>(controller, &Controller::ControllerUnpublishVolume, unpublish),
       StatusCode::OK, ""},
      {"ValidateVolumeCapabilities without a volume id",
       Send<Controller>(controller, &Controller::ValidateVolumeCapabilities, validate,
                        [](auto& r) { r.clear_volume_id(); }),
       kInvalid, "volume_id"},
      {"ValidateVolumeCapabilities without capabilities",
       Send<Controller>(controller, &Controller::ValidateVolumeCapabilities, validate,
                        [](auto& r) { r.clear_volume_capabilities(); }),
       kInvalid, "capabilit"},
      {"ValidateVolumeCapabilities of an unknown volume",
       Send<Controller>(controller, &Controller::ValidateVolumeCapabilities, validate),
       StatusCode::NOT_FOUND, ""},
      {"ListVolumes with a page token it never gave",
       Send<Controller>(controller, &Controller::ListVolumes, list_volumes), StatusCode::ABORTED,
       ""},
      {"CreateSnapshot without a name",
       Send<Controller>(controller, &Controller::CreateSnapshot, snapshot,
                        [](auto& r) { r.clear_name(); }),
       kInvalid, "name"},
      {"CreateSnapshot without a source volume",
       Send<Controller>(controller, &Controller::CreateSnapshot, snapshot,
                        [](auto& r) { r.clear_source_volume_id(); }),
       kInvalid, "source_volume_id"},
      {"DeleteSnapshot without an id",
       Send<Controller>(controller, &Controller::DeleteSnapshot, delete_snapshot,
                        [](auto& r) { r.clear_snapshot_id(); }),
       kInvalid, "snapshot_id"},
      {"DeleteSnapshot of an unknown snapshot",
       Send<Controller>(controller, &Controller::DeleteSnapshot, delete_snapshot), StatusCode::OK,
       ""},
      {"GetSnapshot without an id",
       Send<Controller>(controller, &Controller::GetSnapshot, get_snapshot,
                        [](auto& r) { r.clear_snapshot_id(); }),
       kInvalid, "snapshot_id"},
      {"GetSnapshot of an unknown snapshot",
       Send<Controller>(controller, &Controller::GetSnapshot, get_snapshot), StatusCode::NOT_FOUND,
       ""},
      {"ListSnapshots with a page token it never gave",
       Send<Controller>(controller, &Controller::ListSnapshots, list_snapshots),
       StatusCode::ABORTED, ""},
      {"NodeStageVolume without a volume id",
       Send<Node>(node, &Node::NodeStageVolume, stage, [](auto& r) { r.clear_volume_id(); }),
       kInvalid, "volume_id"},
      {"NodeStageVolume without a staging path",
       Send<Node>(node, &Node::NodeStageVolume, stage,
                  [](auto& r) { r.clear_staging_target_path(); }),
       kInvalid, "staging_target_path"},
      {"NodeStageVolume without a capability",
       Send<Node>(node, &Node::NodeStageVolume, stage,
                  [](auto& r) { r.clear_volume_capability(); }),
       kInvalid, "capability"},
      {"NodeUnstageVolume without a volume id",
       Send<Node>(node, &Node::NodeUnstageVolume, unstage, [](auto& r) { r.clear_volume_id(); }),
       kInvalid, "volume_id"},
      {"NodeUnstageVolume without a staging path",
       Send<Node>(node, &Node::NodeUnstageVolume, unstage,
                  [](auto& r) { r.clear_staging_target_path(); }),
       kInvalid, "staging_target_path"},
      {"NodePublishVolume without a volume id",
       Send<Node>(node, &Node::NodePublishVolume, node_publish,
                  [](auto& r) { r.clear_volume_id(); }),
       kInvalid, "volume_id"},
      {"NodePublishVolume without a target path",
       Send<Node>(node, &Node::NodePublishVolume, node_publish,
                  [](auto& r) { r.clear_target_path(); }),
       kInvalid, "target_path"},
      {"NodePublishVolume without a capability",
       Send<Node>(node, &Node::NodePublishVolume, node_publish,
                  [](auto& r) { r.clear_volume_capability(); }),
       kInvalid, "capability"},
      {"NodeUnpublishVolume without a volume id",
       Send<Node>(node, &Node::NodeUnpublishVolume, node_unpublish,
                  [](auto& r) { r.clear_volume_id(); }),
       kInvalid, "volume_id"},
      {"NodeUnpublishVolume without a target path",
       Send<Node>(node, &Node::NodeUnpublishVolume, node_unpublish,
                  [](auto& r) { r.clear_target_path(); }),
       kInvalid, "target_path"},
      {"NodeGetVolumeStats without a volume id",
       Send<Node>(node, &Node::NodeGetVolumeStats, stats, [](auto& r) { r.clear_volume_id(); }),
       kInvalid, "volume_id"},
      {"NodeGetVolumeStats without a path",
       Send<Node>(node, &Node::NodeGetVolumeStats, stats, [](auto& r) { r.clear_volume_path(); }),
       kInvalid, "volume_path"},
      // Not known at the path: NOT_FOUND, whatever the path looks like (csi-sanity passes a
      // relative "some/path").
      {"NodeGetVolumeStats of an unknown volume at a relative path",
       Send<Node>(node, &Node::NodeGetVolumeStats, stats,
                  [](auto& r) { r.set_volume_path("some/path"); }),
       StatusCode::NOT_FOUND, "neither"},
      {"NodeGetVolumeStats of an unknown volume at an absolute path",
       Send<Node>(node, &Node::NodeGetVolumeStats, stats), StatusCode::NOT_FOUND, "neither"},
  };

  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    grpc::Status status = c.call();
    EXPECT_EQ(status.error_code(), c.code) << c.what << ": " << status.error_message();
    if (!c.message_part.empty()) {
      EXPECT_NE(status.error_message().find(c.message_part), std::string::npos)
          << c.what << ": " << status.error_message();
    }
  }
}

}  // namespace
}  // namespace oxide::testing
