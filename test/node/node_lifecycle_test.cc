// The node service through the real plugin binary, real loop devices, mkfs and mounts:
// ext4/xfs/block lifecycles, read-only publish, idempotency, stats, restart between stage and
// publish. Root only (CTest label "root").
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <thread>

#include "node_fixture.h"
#include "support/temp_dir.h"

namespace oxide::testing {
namespace {

namespace fs = std::filesystem;
constexpr const char* kDiskA = "csi-0123456789abcdef-e2e";

#define EXPECT_GRPC_OK(call)                                               \
  do {                                                                     \
    grpc::Status status_ = (call);                                         \
    EXPECT_TRUE(status_.ok()) << #call << ": " << status_.error_message(); \
  } while (0)

std::string Blkid(const std::string& node) {
  std::string out;
  Shell("blkid -p -o value -s TYPE " + node, &out);
  while (!out.empty() && out.back() == '\n')
    out.pop_back();
  return out;
}

class NodeFsLifecycle : public NodeTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(NodeFsLifecycle, StagePublishWriteUnpublishUnstageThenAgainWithDataIntact) {
  LoopDisk& disk = AddDisk(kSerialA);
  const std::string staging = Path("staging/pv");
  const std::string target = Path("pods/p1/volume");
  auto capability = MountCapability(GetParam());

  {
    grpc::Status st = Stage("vol-1", kDiskA, staging, capability);
    ASSERT_TRUE(st.ok()) << st.error_message() << "\n" << plugin_->Log();
  }
  EXPECT_EQ(Blkid(disk.node()), GetParam());
  ASSERT_TRUE(Publish("vol-1", staging, target, capability).ok());
  WriteFile(target + "/hello.txt", "hello from " + GetParam());
  EXPECT_EQ(MountsUnder(Path("")).size(), 2U);

  EXPECT_GRPC_OK(Unpublish("vol-1", target));
  EXPECT_FALSE(fs::exists(target)) << "the target is removed";
  EXPECT_GRPC_OK(Unstage("vol-1", staging));
  EXPECT_TRUE(MountsUnder(Path("")).empty());

  // Again: the filesystem is found, not recreated, and the file is still there.
  ASSERT_TRUE(Stage("vol-1", kDiskA, staging, capability).ok());
  ASSERT_TRUE(Publish("vol-1", staging, target, capability).ok());
  EXPECT_EQ(ReadFile(target + "/hello.txt"), "hello from " + GetParam());
  EXPECT_GRPC_OK(Unpublish("vol-1", target));
  EXPECT_GRPC_OK(Unstage("vol-1", staging));
}

INSTANTIATE_TEST_SUITE_P(FsTypes, NodeFsLifecycle, ::testing::Values("ext4", "xfs"));

TEST_F(NodeTest, DefaultFsTypeIsExt4) {
  LoopDisk& disk = AddDisk(kSerialA);
  ASSERT_TRUE(Stage("vol-1", kDiskA, Path("s"), MountCapability("")).ok());
  EXPECT_EQ(Blkid(disk.node()), "ext4");
  EXPECT_GRPC_OK(Unstage("vol-1", Path("s")));
}

TEST_F(NodeTest, BlockVolumeCarriesAPatternThroughThePublishedFile) {
  LoopDisk& disk = AddDisk(kSerialA, 64);
  const std::string staging = Path("staging/blk");
  const std::string target = Path("pods/p1/dev/blk");
  ASSERT_TRUE(Stage("vol-b", kDiskA, staging, BlockCapability()).ok());
  ASSERT_TRUE(Publish("vol-b", staging, target, BlockCapability()).ok());
  struct stat info {};
  ASSERT_EQ(stat(target.c_str(), &info), 0);
  EXPECT_TRUE(S_ISBLK(info.st_mode));

  std::string pattern(1 << 20, '\0');
  for (size_t i = 0; i < pattern.size(); ++i)
    pattern[i] = static_cast<char>((i * 7 + 3) % 251);
  int fd = open(target.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, pattern.data(), pattern.size(), 4096), static_cast<ssize_t>(pattern.size()));
  ASSERT_EQ(fsync(fd), 0);
  close(fd);
  // Read back through the device node itself.
  std::string back(pattern.size(), '\0');
  fd = open(disk.node().c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pread(fd, back.data(), back.size(), 4096), static_cast<ssize_t>(back.size()));
  close(fd);
  EXPECT_TRUE(back == pattern);

  csi::v1::NodeGetVolumeStatsResponse stats;
  ASSERT_TRUE(Stats("vol-b", target, &stats).ok());
  ASSERT_EQ(stats.usage_size(), 1);
  EXPECT_EQ(stats.usage(0).unit(), csi::v1::VolumeUsage::BYTES);
  EXPECT_EQ(stats.usage(0).total(), 64 << 20);
  EXPECT_FALSE(stats.volume_condition().abnormal());

  EXPECT_GRPC_OK(Unpublish("vol-b", target));
  EXPECT_FALSE(fs::exists(target));
  EXPECT_GRPC_OK(Unstage("vol-b", staging));
}

TEST_F(NodeTest, ReadOnlyPublishRefusesWrites) {
  AddDisk(kSerialA);
  auto capability = MountCapability("ext4");
  const std::string staging = Path("s");
  ASSERT_TRUE(Stage("vol-1", kDiskA, staging, capability).ok());
  WriteFile(staging + "/seed", "seed");
  ASSERT_TRUE(Publish("vol-1", staging, Path("ro"), capability, /*readonly=*/true).ok());
  EXPECT_EQ(ReadFile(Path("ro/seed")), "seed");
  int fd = open(Path("ro/new").c_str(), O_WRONLY | O_CREAT, 0644);
  int error = errno;
  EXPECT_LT(fd, 0);
  EXPECT_EQ(error, EROFS);
  // A read-only and a read-write publication of the same volume side by side.
  ASSERT_TRUE(Publish("vol-1", staging, Path("rw"), capability).ok());
  WriteFile(Path("rw/new"), "x");
  EXPECT_EQ(ReadFile(Path("ro/new")), "x");
  EXPECT_GRPC_OK(Unpublish("vol-1", Path("ro")));
  EXPECT_GRPC_OK(Unpublish("vol-1", Path("rw")));
  EXPECT_GRPC_OK(Unstage("vol-1", staging));
}

TEST_F(NodeTest, ReadOnlyBlockPublishIsAReadOnlyBindMount) {
  // Linux does not apply a mount's read-only flag to device nodes (the container runtime's
  // device permission enforces it for pods); the plugin still makes the bind mount read-only.
  AddDisk(kSerialA, 64);
  ASSERT_TRUE(Stage("vol-b", kDiskA, Path("s"), BlockCapability()).ok());
  ASSERT_TRUE(Publish("vol-b", Path("s"), Path("blk"), BlockCapability(), true).ok());
  std::string mountinfo = ReadFile("/proc/self/mountinfo");
  auto line_start = mountinfo.find(" " + Path("blk") + " ");
  ASSERT_NE(line_start, std::string::npos);
  EXPECT_EQ(mountinfo.compare(line_start + Path("blk").size() + 2, 3, "ro,"), 0)
      << mountinfo.substr(line_start, 80);
  EXPECT_EQ(Publish("vol-b", Path("s"), Path("blk"), BlockCapability(), false).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_GRPC_OK(Unpublish("vol-b", Path("blk")));
  EXPECT_GRPC_OK(Unstage("vol-b", Path("s")));
}

TEST_F(NodeTest, EveryRpcIsIdempotent) {
  AddDisk(kSerialA);
  auto capability = MountCapability("xfs", {"noatime"});
  const std::string staging = Path("s");
  const std::string target = Path("t");
  for (int i = 0; i < 2; ++i)
    EXPECT_GRPC_OK(Stage("vol-1", kDiskA, staging, capability));
  for (int i = 0; i < 2; ++i)
    EXPECT_GRPC_OK(Publish("vol-1", staging, target, capability));
  EXPECT_EQ(MountsUnder(Path("")).size(), 2U) << "a repeat mounts nothing more";
  for (int i = 0; i < 2; ++i) {
    csi::v1::NodeGetVolumeStatsResponse stats;
    EXPECT_GRPC_OK(Stats("vol-1", target, &stats));
  }
  for (int i = 0; i < 2; ++i)
    EXPECT_GRPC_OK(Unpublish("vol-1", target));
  for (int i = 0; i < 2; ++i)
    EXPECT_GRPC_OK(Unstage("vol-1", staging));
  EXPECT_TRUE(MountsUnder(Path("")).empty());
  // Unknown volumes and paths that never existed are fine too.
  EXPECT_GRPC_OK(Unpublish("vol-never", Path("never")));
  EXPECT_GRPC_OK(Unstage("vol-never", Path("never")));
}

TEST_F(NodeTest, IncompatibleRepeatsAreAlreadyExists) {
  AddDisk(kSerialA);
  auto ext4 = MountCapability("ext4");
  ASSERT_TRUE(Stage("vol-1", kDiskA, Path("s"), ext4).ok());
  EXPECT_EQ(Stage("vol-1", kDiskA, Path("s"), MountCapability("xfs")).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(Stage("vol-1", kDiskA, Path("s"), BlockCapability()).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(Stage("vol-1", kDiskA, Path("s2"), ext4).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
  ASSERT_TRUE(Publish("vol-1", Path("s"), Path("t"), ext4).ok());
  EXPECT_EQ(Publish("vol-1", Path("s"), Path("t"), ext4, /*readonly=*/true).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(
      Publish("vol-1", Path("s"), Path("t"), MountCapability("ext4", {"noexec"})).error_code(),
      grpc::StatusCode::ALREADY_EXISTS);
  // Still published, and still staged: unstage is refused while published.
  EXPECT_EQ(Unstage("vol-1", Path("s")).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_GRPC_OK(Unpublish("vol-1", Path("t")));
  EXPECT_GRPC_OK(Unstage("vol-1", Path("s")));
}

TEST_F(NodeTest, PublishBeforeStageIsFailedPrecondition) {
  AddDisk(kSerialA);
  grpc::Status st = Publish("vol-1", Path("s"), Path("t"), MountCapability());
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("NodeStageVolume"), std::string::npos) << st.error_message();
  EXPECT_FALSE(fs::exists(Path("t")));
}

TEST_F(NodeTest, StatsMatchStatvfsAndReportAVanishedMount) {
  AddDisk(kSerialA);
  auto capability = MountCapability("ext4");
  ASSERT_TRUE(Stage("vol-1", kDiskA, Path("s"), capability).ok());
  ASSERT_TRUE(Publish("vol-1", Path("s"), Path("t"), capability).ok());
  WriteFile(Path("t/data"), std::string(3 << 20, 'x'));
  sync();
  csi::v1::NodeGetVolumeStatsResponse stats;
  ASSERT_TRUE(Stats("vol-1", Path("t"), &stats).ok());
  struct statvfs vfs {};
  ASSERT_EQ(statvfs(Path("t").c_str(), &vfs), 0);
  ASSERT_EQ(stats.usage_size(), 2);
  const auto& bytes = stats.usage(0);
  const auto& inodes = stats.usage(1);
  EXPECT_EQ(bytes.unit(), csi::v1::VolumeUsage::BYTES);
  EXPECT_EQ(bytes.total(), static_cast<int64_t>(vfs.f_blocks * vfs.f_frsize));
  EXPECT_EQ(bytes.available(), static_cast<int64_t>(vfs.f_bavail * vfs.f_frsize));
  EXPECT_EQ(bytes.used(), static_cast<int64_t>((vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize));
  EXPECT_GE(bytes.used(), 3 << 20);
  EXPECT_EQ(inodes.unit(), csi::v1::VolumeUsage::INODES);
  EXPECT_EQ(inodes.total(), static_cast<int64_t>(vfs.f_files));
  EXPECT_EQ(inodes.used(), static_cast<int64_t>(vfs.f_files - vfs.f_ffree));
  EXPECT_FALSE(stats.volume_condition().abnormal());
  // The staging path answers too.
  ASSERT_TRUE(Stats("vol-1", Path("s"), &stats).ok());

  EXPECT_EQ(Stats("vol-1", Path("elsewhere"), &stats).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Stats("vol-other", Path("t"), &stats).error_code(), grpc::StatusCode::NOT_FOUND);

  // Someone unmounts the target behind the plugin's back.
  ASSERT_EQ(Shell("umount " + Path("t")), 0);
  stats.Clear();
  ASSERT_TRUE(Stats("vol-1", Path("t"), &stats).ok());
  EXPECT_TRUE(stats.volume_condition().abnormal());
  EXPECT_NE(stats.volume_condition().message().find("not mounted"), std::string::npos)
      << stats.volume_condition().message();
  EXPECT_GRPC_OK(Unpublish("vol-1", Path("t")));

  // The device vanishes (the disk was detached).
  disks_.back()->Hide();
  ASSERT_TRUE(Stats("vol-1", Path("s"), &stats).ok());
  EXPECT_TRUE(stats.volume_condition().abnormal());
  EXPECT_NE(stats.volume_condition().message().find("vanished"), std::string::npos)
      << stats.volume_condition().message();
  EXPECT_GRPC_OK(Unstage("vol-1", Path("s")));
}

TEST_F(NodeTest, KillAndRestartBetweenStageAndPublish) {
  AddDisk(kSerialA);
  auto capability = MountCapability("ext4");
  ASSERT_TRUE(Stage("vol-1", kDiskA, Path("s"), capability).ok());
  WriteFile(Path("s/kept"), "kept");
  KillPlugin();
  StartPlugin();
  EXPECT_GRPC_OK(Stage("vol-1", kDiskA, Path("s"), capability));  // the CO's retry: OK
  EXPECT_EQ(MountsUnder(Path("")).size(), 1U);
  ASSERT_TRUE(Publish("vol-1", Path("s"), Path("t"), capability).ok());
  EXPECT_EQ(ReadFile(Path("t/kept")), "kept");
  KillPlugin();
  StartPlugin();
  EXPECT_GRPC_OK(Publish("vol-1", Path("s"), Path("t"), capability));
  EXPECT_GRPC_OK(Unpublish("vol-1", Path("t")));
  EXPECT_GRPC_OK(Unstage("vol-1", Path("s")));
  EXPECT_TRUE(MountsUnder(Path("")).empty());
}

TEST_F(NodeTest, AStagedVolumeWhoseMountVanishedIsStagedAgainAfterRestart) {
  AddDisk(kSerialA);
  auto capability = MountCapability("ext4");
  ASSERT_TRUE(Stage("vol-1", kDiskA, Path("s"), capability).ok());
  StopPlugin();
  ASSERT_EQ(Shell("umount " + Path("s")), 0);  // e.g. a reboot
  StartPlugin();
  EXPECT_NE(plugin_->Log().find("stale=1"), std::string::npos) << plugin_->Log();
  EXPECT_EQ(Publish("vol-1", Path("s"), Path("t"), capability).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_GRPC_OK(Stage("vol-1", kDiskA, Path("s"), capability));
  EXPECT_EQ(MountsUnder(Path("")).size(), 1U);
  EXPECT_GRPC_OK(Unstage("vol-1", Path("s")));
}

TEST_F(NodeTest, NodeInfoAndCapabilities) {
  grpc::ClientContext context;
  csi::v1::NodeGetInfoResponse info;
  ASSERT_TRUE(stub().NodeGetInfo(&context, {}, &info).ok());
  EXPECT_EQ(info.node_id(), kTestInstanceId);
  EXPECT_EQ(info.max_volumes_per_node(), 12);
  EXPECT_EQ(info.accessible_topology().segments().at("topology.csi.oxide.computer/zone"),
            "default");

  grpc::ClientContext caps_context;
  csi::v1::NodeGetCapabilitiesResponse caps;
  ASSERT_TRUE(stub().NodeGetCapabilities(&caps_context, {}, &caps).ok());
  std::vector<int> types;
  for (const auto& c : caps.capabilities())
    types.push_back(c.rpc().type());
  using Rpc = csi::v1::NodeServiceCapability::RPC;
  EXPECT_EQ(types, (std::vector<int>{Rpc::STAGE_UNSTAGE_VOLUME, Rpc::GET_VOLUME_STATS,
                                     Rpc::VOLUME_CONDITION, Rpc::SINGLE_NODE_MULTI_WRITER}));
}

TEST_F(NodeTest, MaxVolumesSubtractsTheDisksThePluginDoesNotManage) {
  StopPlugin();
  for (auto [controller, serial] : std::vector<std::pair<std::string, std::string>>{
           {"nvme0", "boot"}, {"nvme1", kSerialA}, {"nvme2", "scratch-disk"}}) {
    fs::create_directories(sysfs() + "/class/nvme/" + controller);
    WriteFile(sysfs() + "/class/nvme/" + controller + "/serial", serial + "\n");
  }
  StartPlugin();
  grpc::ClientContext context;
  csi::v1::NodeGetInfoResponse info;
  ASSERT_TRUE(stub().NodeGetInfo(&context, {}, &info).ok());
  EXPECT_EQ(info.max_volumes_per_node(), 10);
}

// The operator's settings: attachments reserved for disks attached outside the plugin later are
// subtracted from the computed limit; --volume-attach-limit sets it outright.
TEST_F(NodeTest, AttachLimitFlagsReserveFromOrReplaceTheComputedLimit) {
  StopPlugin();
  for (auto [controller, serial] : std::vector<std::pair<std::string, std::string>>{
           {"nvme0", "boot"}, {"nvme1", "scratch-disk"}}) {
    fs::create_directories(sysfs() + "/class/nvme/" + controller);
    WriteFile(sysfs() + "/class/nvme/" + controller + "/serial", serial + "\n");
  }
  const std::vector<std::string> base = setup_->args;
  setup_->args.push_back("--reserved-volume-attachments=3");
  StartPlugin();
  {
    grpc::ClientContext context;
    csi::v1::NodeGetInfoResponse info;
    ASSERT_TRUE(stub().NodeGetInfo(&context, {}, &info).ok());
    EXPECT_EQ(info.max_volumes_per_node(), 12 - 2 - 3);
  }
  StopPlugin();
  setup_->args = base;
  setup_->args.push_back("--volume-attach-limit=4");
  StartPlugin();
  grpc::ClientContext context;
  csi::v1::NodeGetInfoResponse info;
  ASSERT_TRUE(stub().NodeGetInfo(&context, {}, &info).ok());
  EXPECT_EQ(info.max_volumes_per_node(), 4) << "set outright, whatever the disks present";
}

}  // namespace
}  // namespace oxide::testing
