#include "node_fixture.h"

#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

namespace oxide::testing {

void NodeTest::SetUp() {
  if (geteuid() != 0) GTEST_SKIP() << "node tests need root (loop devices, mkfs, mount)";
  setup_ = std::make_unique<PluginSetup>("node");
  sysfs_root_ = setup_->File("sys");
  std::filesystem::create_directories(sysfs() + "/block");
  StartPlugin();
}

void NodeTest::TearDown() {
  if (!setup_) return;
  StopPlugin();
  std::vector<std::string> left = MountsUnder(setup_->File(""));
  EXPECT_TRUE(left.empty()) << "mounts left behind, e.g. " << (left.empty() ? "" : left.front());
  // Deepest first, lazily: a failed test must not leave mounts or busy loop devices behind.
  std::sort(left.begin(), left.end(), [](auto& a, auto& b) { return a.size() > b.size(); });
  for (const std::string& path : left)
    umount2(path.c_str(), MNT_DETACH);
  disks_.clear();
  setup_.reset();
}

void NodeTest::StartPlugin() {
  std::vector<std::string> args = setup_->args;
  args.push_back("--sysfs-root=" + sysfs());
  for (const std::string& arg : ExtraArgs())
    args.push_back(arg);
  PluginSetup& setup = *setup_;
  std::vector<std::string> saved = setup.args;
  setup.args = args;
  plugin_ = setup.Start();
  setup.args = saved;
  stub_ = csi::v1::Node::NewStub(UnixChannel(setup.socket_path()));
}

void NodeTest::StopPlugin() {
  if (!plugin_) return;
  plugin_->Signal(SIGTERM);
  EXPECT_EQ(plugin_->WaitExit(), 0) << plugin_->Log();
  plugin_.reset();
}

void NodeTest::KillPlugin() {
  plugin_->Signal(SIGKILL);
  plugin_->WaitExit();
  plugin_.reset();
}

LoopDisk& NodeTest::AddDisk(const std::string& serial, int size_mib) {
  std::string image = Path("disk" + std::to_string(disks_.size()) + ".img");
  disks_.push_back(std::make_unique<LoopDisk>(image, sysfs(), serial, size_mib));
  EXPECT_TRUE(disks_.back()->ok()) << "cannot attach a loop device";
  return *disks_.back();
}

csi::v1::VolumeCapability NodeTest::MountCapability(const std::string& fs_type,
                                                    std::vector<std::string> flags) {
  csi::v1::VolumeCapability capability;
  capability.mutable_mount()->set_fs_type(fs_type);
  for (const std::string& flag : flags)
    capability.mutable_mount()->add_mount_flags(flag);
  capability.mutable_access_mode()->set_mode(
      csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  return capability;
}

csi::v1::VolumeCapability NodeTest::BlockCapability() {
  csi::v1::VolumeCapability capability;
  capability.mutable_block();
  capability.mutable_access_mode()->set_mode(
      csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  return capability;
}

grpc::Status NodeTest::Stage(const std::string& volume_id, const std::string& disk_name,
                             const std::string& staging,
                             const csi::v1::VolumeCapability& capability) {
  csi::v1::NodeStageVolumeRequest request;
  request.set_volume_id(volume_id);
  request.set_staging_target_path(staging);
  *request.mutable_volume_capability() = capability;
  if (!disk_name.empty()) {
    (*request.mutable_publish_context())["diskName"] = disk_name;
    (*request.mutable_publish_context())["nvmeSerial"] = disk_name.substr(0, 20);
  }
  grpc::ClientContext context;
  csi::v1::NodeStageVolumeResponse response;
  return stub_->NodeStageVolume(&context, request, &response);
}

grpc::Status NodeTest::Unstage(const std::string& volume_id, const std::string& staging) {
  csi::v1::NodeUnstageVolumeRequest request;
  request.set_volume_id(volume_id);
  request.set_staging_target_path(staging);
  grpc::ClientContext context;
  csi::v1::NodeUnstageVolumeResponse response;
  return stub_->NodeUnstageVolume(&context, request, &response);
}

grpc::Status NodeTest::Publish(const std::string& volume_id, const std::string& staging,
                               const std::string& target,
                               const csi::v1::VolumeCapability& capability, bool readonly) {
  csi::v1::NodePublishVolumeRequest request;
  request.set_volume_id(volume_id);
  request.set_staging_target_path(staging);
  request.set_target_path(target);
  request.set_readonly(readonly);
  *request.mutable_volume_capability() = capability;
  grpc::ClientContext context;
  csi::v1::NodePublishVolumeResponse response;
  return stub_->NodePublishVolume(&context, request, &response);
}

grpc::Status NodeTest::Unpublish(const std::string& volume_id, const std::string& target) {
  csi::v1::NodeUnpublishVolumeRequest request;
  request.set_volume_id(volume_id);
  request.set_target_path(target);
  grpc::ClientContext context;
  csi::v1::NodeUnpublishVolumeResponse response;
  return stub_->NodeUnpublishVolume(&context, request, &response);
}

grpc::Status NodeTest::Stats(const std::string& volume_id, const std::string& path,
                             csi::v1::NodeGetVolumeStatsResponse* response) {
  csi::v1::NodeGetVolumeStatsRequest request;
  request.set_volume_id(volume_id);
  request.set_volume_path(path);
  grpc::ClientContext context;
  return stub_->NodeGetVolumeStats(&context, request, response);
}

}  // namespace oxide::testing
