// The node's truth rules where they matter most, through oxide-sim's guest devices and the real
// plugin: a node "reboot" (instance stop/start) after which the disks' device names belong to
// other disks; a volume formatted on node A, used on node B and brought back to A (two node
// plugins, two guest-local instances, each with its own sysfs tree); and XFS copies (a restore
// and a clone of a snapshot) staged beside their source. Root only (CTest label "root").
#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "http_client.h"
#include "node_fixture.h"
#include "sim_process.h"
#include "support/temp_dir.h"
#include "support/test_environment.h"
#include "support/wait_until.h"

namespace oxide::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr uint64_t kGiB = 1ULL << 30;

void WriteDevice(const std::string& path, const std::string& data) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(pwrite(fd, data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
  ASSERT_EQ(fsync(fd), 0);
  close(fd);
}

std::string ReadDevice(const std::string& path, size_t size) {
  std::string data(size, '\0');
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "cannot open " + path;
  ssize_t n = pread(fd, data.data(), size, 0);
  close(fd);
  return n == static_cast<ssize_t>(size) ? data : "short read";
}

// What a reboot does to a node's mounts: every mount under `prefix` is gone.
void UnmountEverythingUnder(const std::string& prefix) {
  std::vector<std::string> mounts = MountsUnder(prefix);
  std::sort(mounts.begin(), mounts.end(), [](auto& a, auto& b) { return a.size() > b.size(); });
  for (const std::string& path : mounts)
    ASSERT_EQ(umount2(path.c_str(), 0), 0) << path;
}

class SimNodeTruthTest : public NodeTest {
 protected:
  void SetUp() override {
    if (geteuid() != 0) OXIDE_SKIP_UNLESS_CI("guest device emulation and mounts need root");
    setup_ = std::make_unique<PluginSetup>("node");
    sysfs_root_ = setup_->File("sys-a");
    sim_ = std::make_unique<sim_test::SimProcess>(std::vector<std::string>{
        "--guest-backing-dir", setup_->File("backing"), "--guest-sysfs-root",
        setup_->File("guest-sys"), "--hotplug", "--project", "e2e"});
    ASSERT_TRUE(sim_->running());
    api_ = std::make_unique<sim_test::HttpClient>(sim_->base_url());
    node_a_ = CreateInstance("node-a", sysfs_root_);
    setup_->env["OXIDE_INSTANCE_ID"] = node_a_;
    StartPlugin();
  }
  void TearDown() override {
    if (!setup_) return;
    if (plugin_b_) {
      plugin_b_->Signal(SIGTERM);
      EXPECT_EQ(plugin_b_->WaitExit(), 0) << plugin_b_->Log();
      plugin_b_.reset();
    }
    StopPlugin();
    UnmountEverythingUnder(setup_->File(""));
    if (sim_ && sim_->running()) {
      EXPECT_EQ(sim_->stop(), 0) << sim_->stderr_text();
    }
    NodeTest::TearDown();
  }
  std::vector<std::string> ExtraArgs() const override { return {"--device-wait-seconds=30"}; }

  std::string CreateInstance(const std::string& name, const std::string& sysfs_root) {
    auto reply = api_->post("/__sim/instances", {{"project", "e2e"},
                                                 {"name", name},
                                                 {"run_state", "running"},
                                                 {"guest_local", true},
                                                 {"guest_sysfs_root", sysfs_root}});
    EXPECT_EQ(reply.status, 201) << reply.body;
    return reply.json().value("id", "");
  }
  std::string CreateDisk(const std::string& name, uint64_t gib) {
    auto reply = api_->post("/v1/disks?project=e2e", sim_test::blank_disk(name, gib, 4096));
    EXPECT_EQ(reply.status, 201) << reply.body;
    return reply.json().value("id", "");
  }
  void DiskFromSnapshot(const std::string& name, const std::string& snapshot_id, uint64_t bytes) {
    nlohmann::json body = {
        {"name", name},
        {"description", ""},
        {"size", bytes},
        {"disk_backend",
         {{"type", "distributed"},
          {"disk_source", {{"type", "snapshot"}, {"snapshot_id", snapshot_id}}}}}};
    auto reply = api_->post("/v1/disks?project=e2e", body);
    ASSERT_EQ(reply.status, 201) << reply.body;
  }
  std::string Snapshot(const std::string& name, const std::string& disk) {
    auto reply = api_->post("/v1/snapshots?project=e2e",
                            {{"name", name}, {"description", ""}, {"disk", disk}});
    EXPECT_EQ(reply.status, 201) << reply.body;
    return reply.json().value("id", "");
  }
  void DiskAction(const std::string& instance, const std::string& action, const std::string& disk) {
    auto reply = api_->post("/v1/instances/" + instance + "/disks/" + action + "?project=e2e",
                            {{"disk", disk}});
    ASSERT_EQ(reply.status, 202) << reply.body;
    const std::string want = action == "attach" ? "attached" : "detached";
    ASSERT_TRUE(WaitUntil(
        [&] {
          auto disk_state = api_->get("/v1/disks/" + disk + "?project=e2e").json();
          return disk_state.contains("state") && disk_state["state"]["state"] == want;
        },
        30s))
        << disk << " never " << want;
  }
  void Lifecycle(const std::string& instance, const std::string& action,
                 const std::string& final_state) {
    const std::string path = "/v1/instances/" + instance;
    auto reply = api_->post(path + "/" + action + "?project=e2e", nlohmann::json::object());
    ASSERT_EQ(reply.status, 202) << reply.body;
    ASSERT_TRUE(WaitUntil(
        [&] { return api_->get(path + "?project=e2e").json()["run_state"] == final_state; }, 30s))
        << instance << " never " << final_state;
  }
  // The loop device name that shows `serial` under `root` ("" when none).
  static std::string DeviceOf(const std::string& root, const std::string& serial) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(fs::path(root) / "block", ec)) {
      std::ifstream in(entry.path() / "device" / "serial");
      std::string shown;
      std::getline(in, shown);
      if (shown == serial) return entry.path().filename();
    }
    return "";
  }
  // A second node plugin for instance node-b, with its own sysfs tree.
  void StartNodeB() {
    setup_b_ = std::make_unique<PluginSetup>("node");
    sysfs_b_ = setup_b_->File("sys-b");
    node_b_ = CreateInstance("node-b", sysfs_b_);
    setup_b_->env["OXIDE_INSTANCE_ID"] = node_b_;
    setup_b_->args.push_back("--sysfs-root=" + sysfs_b_);
    setup_b_->args.push_back("--device-wait-seconds=30");
    plugin_b_ = setup_b_->Start();
    client_b_.Connect(setup_b_->socket_path());
  }

  std::unique_ptr<sim_test::SimProcess> sim_;
  std::unique_ptr<sim_test::HttpClient> api_;
  std::string node_a_, node_b_, sysfs_b_;
  std::unique_ptr<PluginSetup> setup_b_;
  std::unique_ptr<PluginProcess> plugin_b_;
  NodeClient client_b_;
};

// Disks a (block volume) and b (mount volume) are staged and published on node A; the node
// reboots; while it is down disk c is attached and the disks come up in another order, so that
// c gets a's old device name and a gets b's. The pods' paths must reach their own disks.
TEST_F(SimNodeTruthTest, AfterARebootEachPodReachesItsOwnDiskWhateverTheDeviceNames) {
  const std::string disk_a = "csi-000000000000000a-reboot";
  const std::string disk_b = "csi-000000000000000b-reboot";
  const std::string disk_c = "csi-000000000000000c-reboot";
  CreateDisk(disk_a, 1);
  CreateDisk(disk_b, 2);
  CreateDisk(disk_c, 3);
  DiskAction("node-a", "attach", disk_a);
  DiskAction("node-a", "attach", disk_b);
  const std::string staging_a = Path("kubelet/staging/a"), target_a = Path("kubelet/pods/a/dev");
  const std::string staging_b = Path("kubelet/staging/b"), target_b = Path("kubelet/pods/b/mnt");
  auto block = BlockCapability();
  auto mount = MountCapability("ext4");
  ASSERT_TRUE(Stage("vol-a", disk_a, staging_a, block).ok()) << plugin_->Log();
  ASSERT_TRUE(Publish("vol-a", staging_a, target_a, block).ok()) << plugin_->Log();
  ASSERT_TRUE(Stage("vol-b", disk_b, staging_b, mount).ok()) << plugin_->Log();
  ASSERT_TRUE(Publish("vol-b", staging_b, target_b, mount).ok()) << plugin_->Log();
  WriteDevice(target_a, "the data of disk a");
  WriteFile(target_b + "/marker", "the data of disk b");
  const std::string serial_a = disk_a.substr(0, 20), serial_b = disk_b.substr(0, 20);
  const std::string old_a = DeviceOf(sysfs(), serial_a), old_b = DeviceOf(sysfs(), serial_b);
  ASSERT_FALSE(old_a.empty());
  ASSERT_FALSE(old_b.empty());

  // The reboot: the plugin stops, every mount goes, the instance stops and starts again with
  // disk c attached and the start order c, a, b.
  StopPlugin();
  UnmountEverythingUnder(Path(""));
  Lifecycle("node-a", "stop", "stopped");
  DiskAction("node-a", "attach", disk_c);
  auto order = api_->post("/__sim/instances/node-a/device-order",
                          {{"disk_names", {disk_c, disk_a, disk_b}}});
  ASSERT_EQ(order.status, 200) << order.body;
  Lifecycle("node-a", "start", "running");
  ASSERT_EQ(DeviceOf(sysfs(), disk_c.substr(0, 20)), old_a) << "c now has a's old device name";
  ASSERT_EQ(DeviceOf(sysfs(), serial_a), old_b) << "a now has b's old device name";
  const size_t log_before_reboot = ReadFile(setup_->log_path()).size();
  StartPlugin();
  EXPECT_NE(plugin_->Log().find("row is corrected", log_before_reboot), std::string::npos)
      << plugin_->Log();

  // The kubelet publishes the block volume again (its staging needs no mount).
  ASSERT_TRUE(Stage("vol-a", disk_a, staging_a, block).ok()) << plugin_->Log();
  grpc::Status published = Publish("vol-a", staging_a, target_a, block);
  ASSERT_TRUE(published.ok()) << published.error_message() << "\n" << plugin_->Log();
  EXPECT_EQ(ReadDevice(target_a, 18), "the data of disk a");
  csi::v1::NodeGetVolumeStatsResponse stats;
  ASSERT_TRUE(Stats("vol-a", target_a, &stats).ok());
  ASSERT_EQ(stats.usage_size(), 1);
  EXPECT_EQ(stats.usage(0).total(), static_cast<int64_t>(kGiB)) << "disk a's size, not c's";
  EXPECT_FALSE(stats.volume_condition().abnormal()) << stats.volume_condition().message();

  // The mount volume: a publish before the stage is refused (nothing is mounted); the stage
  // mounts disk b's filesystem, found by serial.
  grpc::Status early = Publish("vol-b", staging_b, target_b, mount);
  EXPECT_EQ(early.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << early.error_message();
  ASSERT_TRUE(Stage("vol-b", disk_b, staging_b, mount).ok()) << plugin_->Log();
  ASSERT_TRUE(Publish("vol-b", staging_b, target_b, mount).ok()) << plugin_->Log();
  EXPECT_EQ(ReadFile(target_b + "/marker"), "the data of disk b");
  EXPECT_EQ(plugin_->Log().find("formatting", log_before_reboot), std::string::npos)
      << "nothing is formatted after the reboot";

  ASSERT_TRUE(Unpublish("vol-a", target_a).ok());
  ASSERT_TRUE(Unstage("vol-a", staging_a).ok());
  ASSERT_TRUE(Unpublish("vol-b", target_b).ok());
  ASSERT_TRUE(Unstage("vol-b", staging_b).ok());
}

// Node A formats the volume but cannot mount it (a mount option the kernel refuses): its format
// intent stays. The volume moves to node B, which mounts it and writes a file, and comes back.
// Node A's next stage must find the file, not format the disk again.
TEST_F(SimNodeTruthTest, AFileWrittenOnAnotherNodeSurvivesTheFirstNodesFormatIntent) {
  StartNodeB();
  const std::string disk = "csi-00000000000000a1-moving";
  CreateDisk(disk, 1);
  DiskAction("node-a", "attach", disk);
  grpc::Status refused =
      Stage("vol-m", disk, Path("a/staging"), MountCapability("ext4", {"nosuchoption"}));
  ASSERT_FALSE(refused.ok());
  ASSERT_NE(plugin_->Log().find("msg=\"formatting volume\" volume_id=vol-m"), std::string::npos);

  DiskAction("node-a", "detach", disk);
  DiskAction("node-b", "attach", disk);
  auto mount = MountCapability("ext4");
  const std::string staging_b = setup_b_->File("staging"), target_b = setup_b_->File("pod/mnt");
  ASSERT_TRUE(client_b_.Stage("vol-m", disk, staging_b, mount).ok()) << plugin_b_->Log();
  ASSERT_TRUE(client_b_.Publish("vol-m", staging_b, target_b, mount).ok()) << plugin_b_->Log();
  WriteFile(target_b + "/written-on-b", "the application's data");
  ASSERT_TRUE(client_b_.Unpublish("vol-m", target_b).ok());
  ASSERT_TRUE(client_b_.Unstage("vol-m", staging_b).ok());
  DiskAction("node-b", "detach", disk);
  DiskAction("node-a", "attach", disk);

  grpc::Status staged = Stage("vol-m", disk, Path("a/staging"), mount);
  ASSERT_TRUE(staged.ok()) << staged.error_message() << "\n" << plugin_->Log();
  EXPECT_EQ(ReadFile(Path("a/staging") + "/written-on-b"), "the application's data")
      << plugin_->Log();
  EXPECT_EQ(plugin_->Log().find("formatting the volume again"), std::string::npos);
  ASSERT_TRUE(Unstage("vol-m", Path("a/staging")).ok());
}

// The same with a crash: node A's plugin dies right after its mkfs finished, before the staged
// row (the crash point is made exact by a stand-in mkfs that runs the real one, then kills its
// parent). The volume is used on node B in between; node A restarts and stages it again.
TEST_F(SimNodeTruthTest, AFileWrittenOnAnotherNodeSurvivesAnIntentLeftByACrash) {
  StartNodeB();
  const std::string bin = Path("bin");
  fs::create_directories(bin);
  std::string mkfs;
  Shell("command -v mkfs.ext4 | tr -d '\\n'", &mkfs);
  {
    std::ofstream script(bin + "/mkfs.ext4");
    script << "#!/bin/sh\n" << mkfs << " \"$@\"; rc=$?; kill -KILL $PPID; exit $rc\n";
  }
  fs::permissions(bin + "/mkfs.ext4", fs::perms::owner_all);
  StopPlugin();
  setup_->env["PATH"] = bin + ":/usr/sbin:/usr/bin:/sbin:/bin";
  StartPlugin();
  const std::string disk = "csi-00000000000000a2-moving";
  CreateDisk(disk, 1);
  DiskAction("node-a", "attach", disk);
  auto mount = MountCapability("ext4");
  EXPECT_FALSE(Stage("vol-c", disk, Path("a/staging"), mount).ok());
  plugin_->WaitExit();
  plugin_.reset();
  setup_->env.erase("PATH");
  StartPlugin();
  ASSERT_NE(plugin_->Log().find("kept the intent of an interrupted format"), std::string::npos)
      << plugin_->Log();

  DiskAction("node-a", "detach", disk);
  DiskAction("node-b", "attach", disk);
  const std::string staging_b = setup_b_->File("staging");
  ASSERT_TRUE(client_b_.Stage("vol-c", disk, staging_b, mount).ok()) << plugin_b_->Log();
  WriteFile(staging_b + "/written-on-b", "the application's data");
  ASSERT_TRUE(client_b_.Unstage("vol-c", staging_b).ok());
  DiskAction("node-b", "detach", disk);
  DiskAction("node-a", "attach", disk);

  grpc::Status staged = Stage("vol-c", disk, Path("a/staging"), mount);
  ASSERT_TRUE(staged.ok()) << staged.error_message() << "\n" << plugin_->Log();
  EXPECT_EQ(ReadFile(Path("a/staging") + "/written-on-b"), "the application's data")
      << plugin_->Log();
  EXPECT_NE(plugin_->Log().find("has been mounted since"), std::string::npos) << plugin_->Log();
  ASSERT_TRUE(Unstage("vol-c", Path("a/staging")).ok());
}

// An XFS volume, a restore of its snapshot and a clone (another disk from a snapshot): three
// filesystems with one UUID, staged together on one node.
TEST_F(SimNodeTruthTest, XfsRestoresAndClonesStageBesideTheirSource) {
  const std::string source = "csi-00000000000000b0-xfs";
  CreateDisk(source, 1);
  DiskAction("node-a", "attach", source);
  auto xfs = MountCapability("xfs");
  ASSERT_TRUE(Stage("vol-src", source, Path("s/src"), xfs).ok()) << plugin_->Log();
  WriteFile(Path("s/src") + "/original", "written before the snapshot");
  ASSERT_TRUE(Unstage("vol-src", Path("s/src")).ok());  // a clean filesystem to copy
  const std::string snapshot = Snapshot("snap-of-src", source);
  ASSERT_FALSE(snapshot.empty());
  const std::string restore = "csi-00000000000000b1-xfs";
  const std::string clone = "csi-00000000000000b2-xfs";
  DiskFromSnapshot(restore, snapshot, kGiB);
  DiskFromSnapshot(clone, Snapshot("clone-tmp", source), kGiB);
  DiskAction("node-a", "attach", restore);
  DiskAction("node-a", "attach", clone);
  for (const auto& [volume, disk] : std::vector<std::pair<std::string, std::string>>{
           {"vol-src", source}, {"vol-restore", restore}, {"vol-clone", clone}}) {
    grpc::Status staged = Stage(volume, disk, Path("s/" + volume), xfs);
    ASSERT_TRUE(staged.ok()) << volume << ": " << staged.error_message() << "\n" << plugin_->Log();
    EXPECT_EQ(ReadFile(Path("s/" + volume) + "/original"), "written before the snapshot");
  }
  for (const std::string volume : {"vol-src", "vol-restore", "vol-clone"})
    ASSERT_TRUE(Unstage(volume, Path("s/" + volume)).ok());
}

}  // namespace
}  // namespace oxide::testing
