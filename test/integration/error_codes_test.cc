// The codes of every RPC's refusals, through the socket, against the CSI spec's error tables and
// in the order the public conformance suite (csi-sanity) checks them: a required field missing is
// INVALID_ARGUMENT before anything is looked up; an unknown object is NOT_FOUND where the spec
// says so (and OK for the deletes and unpublishes that may treat it as done); a bad page token is
// ABORTED. One table, the real plugin in --mode=all against oxide-sim. Needs root (guest devices).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "guest_volume_fixture.h"

namespace oxide::testing {
namespace {

using grpc::StatusCode;

class ErrorCodesTest : public GuestVolumeTest {};

struct Case {
  std::string what;
  std::function<grpc::Status()> call;
  StatusCode code;
  std::string message_part;  // "" = any message
};

constexpr const char* kUnknownVolume = "5b2ad3a4-1c55-4f43-9d3e-2a4a0bd0c0de";

TEST_F(ErrorCodesTest, EveryRpcRefusesBadInputWithTheSpecsCode) {
  auto node = csi::v1::Node::NewStub(UnixChannel(setup_->socket_path()));
  csi::v1::Controller::Stub& controller = *controller_;
  const csi::v1::VolumeCapability mount = MountCapability();
  const std::string staging = work_.File("staging-codes");
  const std::string target = work_.File("target-codes");

  auto create = [&](auto edit) {
    return [&, edit] {
      csi::v1::CreateVolumeRequest request = CreateRequest("pvc-codes");
      edit(request);
      csi::v1::CreateVolumeResponse response;
      return controller.CreateVolume(Call().get(), request, &response);
    };
  };
  std::vector<Case> cases = {
      {"CreateVolume without a name", create([](auto& r) { r.clear_name(); }),
       StatusCode::INVALID_ARGUMENT, "name"},
      {"CreateVolume without capabilities", create([](auto& r) { r.clear_volume_capabilities(); }),
       StatusCode::INVALID_ARGUMENT, "capabilit"},
      {"CreateVolume above the largest disk",
       create([](auto& r) { r.mutable_capacity_range()->set_required_bytes(int64_t{2} << 40); }),
       StatusCode::OUT_OF_RANGE, ""},
      {"CreateVolume from an unknown snapshot", create([](auto& r) {
         r.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(kUnknownVolume);
       }),
       StatusCode::NOT_FOUND, ""},
      {"CreateVolume from an unknown volume", create([](auto& r) {
         r.mutable_volume_content_source()->mutable_volume()->set_volume_id(kUnknownVolume);
       }),
       StatusCode::NOT_FOUND, ""},
      {"DeleteVolume without an id",
       [&] {
         csi::v1::DeleteVolumeResponse response;
         return controller.DeleteVolume(Call().get(), {}, &response);
       },
       StatusCode::INVALID_ARGUMENT, "volume_id"},
      {"DeleteVolume of an unknown volume", [&] { return Delete(kUnknownVolume); }, StatusCode::OK,
       ""},
      {"ControllerPublishVolume without a volume id", [&] { return Publish("", node_id_); },
       StatusCode::INVALID_ARGUMENT, "volume_id"},
      {"ControllerPublishVolume without a node id", [&] { return Publish(kUnknownVolume, ""); },
       StatusCode::INVALID_ARGUMENT, "node_id"},
      {"ControllerPublishVolume without a capability",
       [&] {
         csi::v1::ControllerPublishVolumeRequest request;
         request.set_volume_id(kUnknownVolume);
         request.set_node_id(node_id_);
         csi::v1::ControllerPublishVolumeResponse response;
         return controller.ControllerPublishVolume(Call().get(), request, &response);
       },
       StatusCode::INVALID_ARGUMENT, "capability"},
      {"ControllerPublishVolume of an unknown volume",
       [&] { return Publish(kUnknownVolume, node_id_); }, StatusCode::NOT_FOUND, ""},
      {"ControllerUnpublishVolume without a volume id", [&] { return Unpublish("", node_id_); },
       StatusCode::INVALID_ARGUMENT, "volume_id"},
      {"ControllerUnpublishVolume of an unknown volume",
       [&] { return Unpublish(kUnknownVolume, node_id_); }, StatusCode::OK, ""},
      {"ValidateVolumeCapabilities without a volume id",
       [&] {
         csi::v1::ValidateVolumeCapabilitiesRequest request;
         *request.add_volume_capabilities() = mount;
         csi::v1::ValidateVolumeCapabilitiesResponse response;
         return controller.ValidateVolumeCapabilities(Call().get(), request, &response);
       },
       StatusCode::INVALID_ARGUMENT, "volume_id"},
      {"ValidateVolumeCapabilities without capabilities",
       [&] {
         csi::v1::ValidateVolumeCapabilitiesRequest request;
         request.set_volume_id(kUnknownVolume);
         csi::v1::ValidateVolumeCapabilitiesResponse response;
         return controller.ValidateVolumeCapabilities(Call().get(), request, &response);
       },
       StatusCode::INVALID_ARGUMENT, "capabilit"},
      {"ValidateVolumeCapabilities of an unknown volume",
       [&] {
         csi::v1::ValidateVolumeCapabilitiesRequest request;
         request.set_volume_id(kUnknownVolume);
         *request.add_volume_capabilities() = mount;
         csi::v1::ValidateVolumeCapabilitiesResponse response;
         return controller.ValidateVolumeCapabilities(Call().get(), request, &response);
       },
       StatusCode::NOT_FOUND, ""},
      {"ListVolumes with a page token it never gave",
       [&] {
         csi::v1::ListVolumesRequest request;
         request.set_starting_token("not-a-token");
         csi::v1::ListVolumesResponse response;
         return controller.ListVolumes(Call().get(), request, &response);
       },
       StatusCode::ABORTED, ""},
      {"CreateSnapshot without a name",
       [&] {
         csi::v1::CreateSnapshotRequest request;
         request.set_source_volume_id(kUnknownVolume);
         csi::v1::CreateSnapshotResponse response;
         return controller.CreateSnapshot(Call().get(), request, &response);
       },
       StatusCode::INVALID_ARGUMENT, "name"},
      {"CreateSnapshot without a source volume",
       [&] {
         csi::v1::CreateSnapshotRequest request;
         request.set_name("snap-codes");
         csi::v1::CreateSnapshotResponse response;
         return controller.CreateSnapshot(Call().get(), request, &response);
       },
       StatusCode::INVALID_ARGUMENT, "source_volume_id"},
      {"DeleteSnapshot without an id",
       [&] {
         csi::v1::DeleteSnapshotResponse response;
         return controller.DeleteSnapshot(Call().get(), {}, &response);
       },
       StatusCode::INVALID_ARGUMENT, "snapshot_id"},
      {"DeleteSnapshot of an unknown snapshot",
       [&] {
         csi::v1::DeleteSnapshotRequest request;
         request.set_snapshot_id(kUnknownVolume);
         csi::v1::DeleteSnapshotResponse response;
         return controller.DeleteSnapshot(Call().get(), request, &response);
       },
       StatusCode::OK, ""},
      {"ListSnapshots with a page token it never gave",
       [&] {
         csi::v1::ListSnapshotsRequest request;
         request.set_starting_token("not-a-token");
         csi::v1::ListSnapshotsResponse response;
         return controller.ListSnapshots(Call().get(), request, &response);
       },
       StatusCode::ABORTED, ""},
      {"NodeStageVolume without a volume id",
       [&] {
         csi::v1::NodeStageVolumeRequest request;
         request.set_staging_target_path(staging);
         *request.mutable_volume_capability() = mount;
         csi::v1::NodeStageVolumeResponse response;
         return node->NodeStageVolume(Call().get(), request, &response);
       },
       StatusCode::INVALID_ARGUMENT, "volume_id"},
      {"NodeStageVolume without a staging path",
       [&] {
         csi::v1::NodeStageVolumeRequest request;
         request.set_volume_id(kUnknownVolume);
         *request.mutable_volume_capability() = mount;
         csi::v1::NodeStageVolumeResponse response;
         return node->NodeStageVolume(Call().get(), request, &response);
       },
       StatusCode::INVALID_ARGUMENT, "staging_target_path"},
      {"NodeStageVolume without a capability",
       [&] {
         csi::v1::NodeStageVolumeRequest request;
         request.set_volume_id(kUnknownVolume);
         request.set_staging_target_path(staging);
         csi::v1::NodeStageVolumeResponse response;
         return node->NodeStageVolume(Call().get(), request, &response);
       },
       StatusCode::INVALID_ARGUMENT, "capability"},
      {"NodeUnstageVolume without a volume id",
       [&] {
         csi::v1::NodeUnstageVolumeRequest request;
         request.set_staging_target_path(staging);
         csi::v1::NodeUnstageVolumeResponse response;
         return node->NodeUnstageVolume(Call().get(), request, &response);
       },
       StatusCode::INVALID_ARGUMENT, "volume_id"},
      {"NodeUnstageVolume without a staging path",
       [&] {
         csi::v1::NodeUnstageVolumeRequest request;
         request.set_volume_id(kUnknownVolume);
         csi::v1::NodeUnstageVolumeResponse response;
         return node->NodeUnstageVolume(Call().get(), request, &response);
       },
       StatusCode::INVALID_ARGUMENT, "staging_target_path"},
      {"NodePublishVolume without a volume id",
       [&] {
         csi::v1::NodePublishVolumeRequest request;
         request.set_staging_target_path(staging);
         request.set_target_path(target);
         *request.mutable_volume_capability() = mount;
         csi::v1::NodePublishVolumeResponse response;
         return node->NodePublishVolume(Call().get(), request, &response);
       },
       StatusCode::INVALID_ARGUMENT, "volume_id"},
      {"NodePublishVolume without a target path",
       [&] {
         csi::v1::NodePublishVolumeRequest request;
         request.set_volume_id(kUnknownVolume);
         request.set_staging_target_path(staging);
         *request.mutable_volume_capability() = mount;
         csi::v1::NodePublishVolumeResponse response;
         return node->NodePublishVolume(Call().get(), request, &response);
       },
       StatusCode::INVALID_ARGUMENT, "target_path"},
      {"NodePublishVolume without a capability",
       [&] {
         csi::v1::NodePublishVolumeRequest request;
         request.set_volume_id(kUnknownVolume);
         request.set_staging_target_path(staging);
         request.set_target_path(target);
         csi::v1::NodePublishVolumeResponse response;
         return node->NodePublishVolume(Call().get(), request, &response);
       },
       StatusCode::INVALID_ARGUMENT, "capability"},
      {"NodeUnpublishVolume without a volume id",
       [&] {
         csi::v1::NodeUnpublishVolumeRequest request;
         request.set_target_path(target);
         csi::v1::NodeUnpublishVolumeResponse response;
         return node->NodeUnpublishVolume(Call().get(), request, &response);
       },
       StatusCode::INVALID_ARGUMENT, "volume_id"},
      {"NodeUnpublishVolume without a target path",
       [&] {
         csi::v1::NodeUnpublishVolumeRequest request;
         request.set_volume_id(kUnknownVolume);
         csi::v1::NodeUnpublishVolumeResponse response;
         return node->NodeUnpublishVolume(Call().get(), request, &response);
       },
       StatusCode::INVALID_ARGUMENT, "target_path"},
  };
  auto stats = [&](const std::string& volume_id, const std::string& path) {
    return [&, volume_id, path] {
      csi::v1::NodeGetVolumeStatsRequest request;
      request.set_volume_id(volume_id);
      request.set_volume_path(path);
      csi::v1::NodeGetVolumeStatsResponse response;
      return node->NodeGetVolumeStats(Call().get(), request, &response);
    };
  };
  cases.push_back({"NodeGetVolumeStats without a volume id", stats("", target),
                   StatusCode::INVALID_ARGUMENT, "volume_id"});
  cases.push_back({"NodeGetVolumeStats without a path", stats(kUnknownVolume, ""),
                   StatusCode::INVALID_ARGUMENT, "volume_path"});
  // Not known at the path: NOT_FOUND, whatever the path looks like (csi-sanity passes a
  // relative "some/path").
  cases.push_back({"NodeGetVolumeStats of an unknown volume at a relative path",
                   stats(kUnknownVolume, "some/path"), StatusCode::NOT_FOUND, "neither"});
  cases.push_back({"NodeGetVolumeStats of an unknown volume at an absolute path",
                   stats(kUnknownVolume, target), StatusCode::NOT_FOUND, "neither"});

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
