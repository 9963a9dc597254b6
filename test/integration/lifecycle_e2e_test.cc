// The whole life of a volume through the real plugin in --mode=all, against oxide-sim with guest
// device emulation (a disk attached to a running guest_local instance appears as a real loop
// device with its NVMe serial in the simulator's sysfs tree): create, attach, stage, publish,
// write, tear down, attach and mount again, find the data, tear down, delete. Needs root.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "controller_fixture.h"

namespace oxide::testing {
namespace {

class LifecycleTest : public ControllerTest {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "guest device emulation and mounts need root";
    ControllerTest::SetUp();
  }
  std::string mode() const override { return "all"; }
  std::vector<std::string> sim_args() const override {
    return {"--guest-backing-dir", work_.File("backing"), "--guest-sysfs-root",
            work_.File("guest-sys"), "--hotplug"};
  }
  std::vector<std::string> plugin_args() const override {
    return {"--sysfs-root=" + work_.File("guest-sys"), "--device-wait-seconds=20"};
  }
  void BeforePluginStart() override {
    sim_test::Reply instance = api_->post(
        "/__sim/instances",
        {{"project", "demo"}, {"name", "node-1"}, {"run_state", "running"}, {"guest_local", true}});
    ASSERT_EQ(instance.status, 201) << instance.body;
    node_id_ = instance.json()["id"];
    setup_->env["OXIDE_INSTANCE_ID"] = node_id_;
  }

  csi::v1::NodeStageVolumeRequest StageRequest(const csi::v1::Volume& volume,
                                               const csi::v1::ControllerPublishVolumeResponse& pub) {
    csi::v1::NodeStageVolumeRequest request;
    request.set_volume_id(volume.volume_id());
    request.set_staging_target_path(staging_);
    *request.mutable_volume_capability() = MountCapability();
    *request.mutable_publish_context() = pub.publish_context();
    *request.mutable_volume_context() = volume.volume_context();
    return request;
  }
  csi::v1::NodePublishVolumeRequest PublishRequest(const csi::v1::Volume& volume,
                                                   const csi::v1::ControllerPublishVolumeResponse& pub) {
    csi::v1::NodePublishVolumeRequest request;
    request.set_volume_id(volume.volume_id());
    request.set_staging_target_path(staging_);
    request.set_target_path(target_);
    *request.mutable_volume_capability() = MountCapability();
    *request.mutable_publish_context() = pub.publish_context();
    *request.mutable_volume_context() = volume.volume_context();
    return request;
  }
  void MountAndCheck(csi::v1::Node::Stub& node, const csi::v1::Volume& volume) {
    auto published = MustPublish(volume.volume_id(), node_id_);
    csi::v1::NodeStageVolumeResponse staged;
    grpc::Status stage = node.NodeStageVolume(Call(std::chrono::seconds(60)).get(),
                                              StageRequest(volume, published), &staged);
    ASSERT_TRUE(stage.ok()) << stage.error_message() << "\n" << plugin_->Log();
    csi::v1::NodePublishVolumeResponse mounted;
    grpc::Status publish =
        node.NodePublishVolume(Call().get(), PublishRequest(volume, published), &mounted);
    ASSERT_TRUE(publish.ok()) << publish.error_message();
  }
  void UnmountAndDetach(csi::v1::Node::Stub& node, const csi::v1::Volume& volume) {
    csi::v1::NodeUnpublishVolumeRequest unpublish;
    unpublish.set_volume_id(volume.volume_id());
    unpublish.set_target_path(target_);
    csi::v1::NodeUnpublishVolumeResponse unpublished;
    ASSERT_TRUE(node.NodeUnpublishVolume(Call().get(), unpublish, &unpublished).ok());
    csi::v1::NodeUnstageVolumeRequest unstage;
    unstage.set_volume_id(volume.volume_id());
    unstage.set_staging_target_path(staging_);
    csi::v1::NodeUnstageVolumeResponse unstaged;
    ASSERT_TRUE(node.NodeUnstageVolume(Call().get(), unstage, &unstaged).ok());
    ASSERT_TRUE(Unpublish(volume.volume_id(), node_id_).ok());
  }

  TempDir work_;
  std::string node_id_;
  std::string staging_ = work_.File("staging");
  std::string target_ = work_.File("pods/pod-1/volume");
};

TEST_F(LifecycleTest, CreateAttachMountWriteDetachRemountReadDelete) {
  auto node = csi::v1::Node::NewStub(UnixChannel(setup_->socket_path()));
  csi::v1::Volume volume = MustCreate("pvc-lifecycle", 1);

  MountAndCheck(*node, volume);
  WriteFile(target_ + "/data.txt", "kept across detach and attach");
  UnmountAndDetach(*node, volume);
  EXPECT_EQ(SimDisk(volume.volume_id())["state"]["state"], "detached");
  EXPECT_FALSE(std::filesystem::exists(target_ + "/data.txt")) << "unmounted";

  MountAndCheck(*node, volume);
  EXPECT_EQ(ReadFile(target_ + "/data.txt"), "kept across detach and attach");
  UnmountAndDetach(*node, volume);

  ASSERT_TRUE(Delete(volume.volume_id()).ok());
  EXPECT_TRUE(SimDisk(volume.volume_id()).is_null());
  std::string mounts = ReadFile("/proc/self/mountinfo");
  EXPECT_EQ(mounts.find(work_.path()), std::string::npos) << "no mount left behind";
}

}  // namespace
}  // namespace oxide::testing
