// End to end with oxide-sim's guest device emulation: a disk created and attached through the
// simulated Oxide API shows up as a loop device with its NVMe serial in the simulator's sysfs
// tree; the real plugin in node mode finds it by serial, formats, mounts, publishes, and the
// data survives an unstage/stage cycle. Root only (CTest label "root").
#include <unistd.h>

#include <filesystem>

#include "http_client.h"
#include "node_fixture.h"
#include "sim_process.h"
#include "support/temp_dir.h"
#include "support/test_environment.h"

namespace oxide::testing {
namespace {

namespace fs = std::filesystem;
constexpr const char* kDiskName = "csi-0123456789abcdef-e2e";

class NodeWithSimulator : public NodeTest {
 protected:
  void SetUp() override {
    if (geteuid() != 0) OXIDE_SKIP_UNLESS_CI("guest device emulation and mounts need root");
    setup_ = std::make_unique<PluginSetup>("node");
    sysfs_root_ = setup_->File("guest-sys");
    sim_ = std::make_unique<sim_test::SimProcess>(std::vector<std::string>{
        "--guest-backing-dir", setup_->File("backing"), "--guest-sysfs-root", sysfs_root_,
        "--hotplug", "--project", "e2e"});
    ASSERT_TRUE(sim_->running());
    api_ = std::make_unique<sim_test::HttpClient>(sim_->base_url());

    auto instance = api_->post(
        "/__sim/instances",
        {{"project", "e2e"}, {"name", "node-1"}, {"run_state", "running"}, {"guest_local", true}});
    ASSERT_EQ(instance.status, 201) << instance.body;
    instance_id_ = instance.json()["id"];
    auto disk = api_->post("/v1/disks?project=e2e", sim_test::blank_disk(kDiskName, 1, 4096));
    ASSERT_EQ(disk.status, 201) << disk.body;
    disk_id_ = disk.json()["id"];
    auto attach =
        api_->post("/v1/instances/" + instance_id_ + "/disks/attach", {{"disk", disk_id_}});
    ASSERT_EQ(attach.status, 202) << attach.body;

    setup_->env["OXIDE_INSTANCE_ID"] = instance_id_;
    StartPlugin();
  }

  void TearDown() override {
    if (!setup_) return;
    StopPlugin();
    if (sim_ && sim_->running()) {
      int status = sim_->stop();
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << sim_->stderr_text();
    }
    NodeTest::TearDown();
  }

  std::unique_ptr<sim_test::SimProcess> sim_;
  std::unique_ptr<sim_test::HttpClient> api_;
  std::string instance_id_;
  std::string disk_id_;
};

TEST_F(NodeWithSimulator, StagePublishWriteUnpublishUnstageAndAgain) {
  grpc::ClientContext info_context;
  csi::v1::NodeGetInfoResponse info;
  ASSERT_TRUE(stub().NodeGetInfo(&info_context, {}, &info).ok());
  EXPECT_EQ(info.node_id(), instance_id_);

  auto capability = MountCapability("ext4");
  const std::string staging = Path("kubelet/plugins/staging/pv");
  const std::string target = Path("kubelet/pods/p1/volumes/pv/mount");
  // The controller would send diskName and nvmeSerial in publish_context; the volume id is the
  // Oxide disk id.
  grpc::Status st = Stage(disk_id_, kDiskName, staging, capability);
  ASSERT_TRUE(st.ok()) << st.error_message() << "\n" << plugin_->Log();
  ASSERT_TRUE(Publish(disk_id_, staging, target, capability).ok());
  WriteFile(target + "/data.txt", "written through the simulated guest disk");
  ASSERT_TRUE(Unpublish(disk_id_, target).ok());
  ASSERT_TRUE(Unstage(disk_id_, staging).ok());
  EXPECT_TRUE(MountsUnder(Path("")).empty());

  ASSERT_TRUE(Stage(disk_id_, kDiskName, staging, capability).ok());
  ASSERT_TRUE(Publish(disk_id_, staging, target, capability).ok());
  EXPECT_EQ(ReadFile(target + "/data.txt"), "written through the simulated guest disk");
  ASSERT_TRUE(Unpublish(disk_id_, target).ok());
  ASSERT_TRUE(Unstage(disk_id_, staging).ok());
  EXPECT_FALSE(fs::exists(target));
}

}  // namespace
}  // namespace oxide::testing
