#include "guest_volume_fixture.h"

#include <unistd.h>

#include "support/test_environment.h"

namespace oxide::testing {

void GuestVolumeTest::SetUp() {
  if (geteuid() != 0) OXIDE_SKIP_UNLESS_CI("guest device emulation and mounts need root");
  ControllerTest::SetUp();
}

std::vector<std::string> GuestVolumeTest::sim_args() const {
  return {"--guest-backing-dir", work_.File("backing"), "--guest-sysfs-root",
          work_.File("guest-sys"), "--hotplug"};
}

std::vector<std::string> GuestVolumeTest::plugin_args() const {
  return {"--sysfs-root=" + work_.File("guest-sys"), "--device-wait-seconds=20"};
}

void GuestVolumeTest::BeforePluginStart() {
  sim_test::Reply instance = api_->post(
      "/__sim/instances",
      {{"project", "demo"}, {"name", "node-1"}, {"run_state", "running"}, {"guest_local", true}});
  ASSERT_EQ(instance.status, 201) << instance.body;
  node_id_ = instance.json()["id"];
  setup_->env["OXIDE_INSTANCE_ID"] = node_id_;
}

csi::v1::NodeStageVolumeRequest GuestVolumeTest::StageRequest(
    const csi::v1::Volume& volume, const csi::v1::ControllerPublishVolumeResponse& pub,
    const std::string& staging) {
  csi::v1::NodeStageVolumeRequest request;
  request.set_volume_id(volume.volume_id());
  request.set_staging_target_path(staging);
  *request.mutable_volume_capability() = MountCapability();
  *request.mutable_publish_context() = pub.publish_context();
  *request.mutable_volume_context() = volume.volume_context();
  return request;
}

csi::v1::NodePublishVolumeRequest GuestVolumeTest::PublishRequest(
    const csi::v1::Volume& volume, const csi::v1::ControllerPublishVolumeResponse& pub,
    const std::string& staging, const std::string& target) {
  csi::v1::NodePublishVolumeRequest request;
  request.set_volume_id(volume.volume_id());
  request.set_staging_target_path(staging);
  request.set_target_path(target);
  *request.mutable_volume_capability() = MountCapability();
  *request.mutable_publish_context() = pub.publish_context();
  *request.mutable_volume_context() = volume.volume_context();
  return request;
}

void GuestVolumeTest::MountAndCheck(csi::v1::Node::Stub& node, const csi::v1::Volume& volume,
                                    const std::string& staging, const std::string& target) {
  auto published = MustPublish(volume.volume_id(), node_id_);
  csi::v1::NodeStageVolumeResponse staged;
  grpc::Status stage = node.NodeStageVolume(Call(std::chrono::seconds(60)).get(),
                                            StageRequest(volume, published, staging), &staged);
  ASSERT_TRUE(stage.ok()) << stage.error_message() << "\n" << plugin_->Log();
  csi::v1::NodePublishVolumeResponse mounted;
  grpc::Status publish = node.NodePublishVolume(
      Call().get(), PublishRequest(volume, published, staging, target), &mounted);
  ASSERT_TRUE(publish.ok()) << publish.error_message();
}

void GuestVolumeTest::Unmount(csi::v1::Node::Stub& node, const csi::v1::Volume& volume,
                              const std::string& staging, const std::string& target) {
  csi::v1::NodeUnpublishVolumeRequest unpublish;
  unpublish.set_volume_id(volume.volume_id());
  unpublish.set_target_path(target);
  csi::v1::NodeUnpublishVolumeResponse unpublished;
  grpc::Status unpublish_status = node.NodeUnpublishVolume(Call().get(), unpublish, &unpublished);
  ASSERT_TRUE(unpublish_status.ok()) << unpublish_status.error_message();
  csi::v1::NodeUnstageVolumeRequest unstage;
  unstage.set_volume_id(volume.volume_id());
  unstage.set_staging_target_path(staging);
  csi::v1::NodeUnstageVolumeResponse unstaged;
  grpc::Status unstage_status = node.NodeUnstageVolume(Call().get(), unstage, &unstaged);
  ASSERT_TRUE(unstage_status.ok()) << unstage_status.error_message();
}

void GuestVolumeTest::UnmountAndDetach(csi::v1::Node::Stub& node, const csi::v1::Volume& volume,
                                       const std::string& staging, const std::string& target) {
  Unmount(node, volume, staging, target);
  if (::testing::Test::HasFatalFailure()) return;
  grpc::Status detach = Unpublish(volume.volume_id(), node_id_);
  ASSERT_TRUE(detach.ok()) << detach.error_message();
}

}  // namespace oxide::testing
