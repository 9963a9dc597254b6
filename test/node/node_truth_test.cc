// The node's truth rules through the real plugin binary, real loop devices, mkfs and mounts: a
// row is a hint, and before the node touches a device or hands a path on it re-derives the truth
// from the device and the mount table (docs/node-safety.md). Publish checks the staging mount; an
// unmount that stays busy fails instead of detaching lazily; a hung mkfs is killed at its time
// limit while other volumes are answered; a device of the wrong size is never formatted; a format
// intent never formats a filesystem that was completed or mounted since. Root only.
#include <fcntl.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>

#include "node_fixture.h"
#include "support/temp_dir.h"

namespace oxide::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr const char* kDiskA = "csi-0123456789abcdef-truth";
constexpr const char* kDiskB = "csi-fedcba9876543210-truth";

// Waits (on a pidfd, not a timer) until `pid` has exited; true at once when it is gone already.
bool WaitForExit(pid_t pid, std::chrono::seconds limit) {
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH;
  pollfd entry{fd, POLLIN, 0};
  int ready = poll(&entry, 1, static_cast<int>(limit.count() * 1000));
  close(fd);
  return ready == 1;
}

bool IsMountPoint(const std::string& path) {
  for (const std::string& mount : MountsUnder(path)) {
    if (mount == path) return true;
  }
  return false;
}

// Writes an executable shell script.
void WriteScript(const std::string& path, const std::string& body) {
  std::ofstream out(path);
  out << "#!/bin/sh\n" << body << "\n";
  out.close();
  fs::permissions(path, fs::perms::owner_all);
}

std::string RealProgram(const std::string& name) {
  std::string path;
  Shell("command -v " + name + " | tr -d '\\n'", &path);
  return path;
}

class NodeTruthTest : public NodeTest {
 protected:
  std::vector<std::string> ExtraArgs() const override {
    std::vector<std::string> args = {"--device-wait-seconds=2"};
    args.insert(args.end(), extra_args_.begin(), extra_args_.end());
    return args;
  }
  // Restarts the plugin with stand-in commands from `bin` first on its PATH.
  void RestartWithCommandsFrom(const std::string& bin, std::vector<std::string> args = {}) {
    StopPlugin();
    setup_->env["PATH"] = bin + ":/usr/sbin:/usr/bin:/sbin:/bin";
    extra_args_ = std::move(args);
    StartPlugin();
  }
  void RestartWithTheRealCommands() {
    if (plugin_) StopPlugin();
    setup_->env.erase("PATH");
    extra_args_.clear();
    StartPlugin();
  }
  grpc::Status StageSized(const std::string& volume, const std::string& disk,
                          const std::string& staging, const std::string& size) {
    csi::v1::NodeStageVolumeRequest request;
    request.set_volume_id(volume);
    request.set_staging_target_path(staging);
    *request.mutable_volume_capability() = MountCapability("ext4");
    (*request.mutable_publish_context())["diskName"] = disk;
    (*request.mutable_publish_context())["diskSizeBytes"] = size;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 60s);
    csi::v1::NodeStageVolumeResponse response;
    return stub().NodeStageVolume(&context, request, &response);
  }

  std::vector<std::string> extra_args_;
};

TEST_F(NodeTruthTest, APublishWhoseStagingMountIsGoneIsRefusedAndBindsNothing) {
  AddDisk(kSerialA, 64);
  const std::string staging = Path("staging");
  const std::string target = Path("pods/p1/mount");
  auto capability = MountCapability("ext4");
  ASSERT_TRUE(Stage("vol-1", kDiskA, staging, capability).ok()) << plugin_->Log();
  ASSERT_EQ(umount2(staging.c_str(), 0), 0);  // the staging mount vanishes behind the plugin
  grpc::Status refused = Publish("vol-1", staging, target, capability);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << refused.error_message();
  EXPECT_NE(refused.error_message().find("nothing is mounted at the staging path"),
            std::string::npos)
      << refused.error_message();
  EXPECT_FALSE(IsMountPoint(target)) << "the pod's path must not be bound to the root disk";
  // Something else mounted at the staging path: named, and nothing bound.
  ASSERT_EQ(mount("tmpfs", staging.c_str(), "tmpfs", 0, nullptr), 0);
  refused = Publish("vol-1", staging, target, capability);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.error_message().find("holds tmpfs"), std::string::npos)
      << refused.error_message();
  EXPECT_FALSE(IsMountPoint(target));
  ASSERT_EQ(umount2(staging.c_str(), 0), 0);
  // The kubelet's repeated stage finds the mount gone and stages again; then publish works.
  grpc::Status restaged = Stage("vol-1", kDiskA, staging, capability);
  ASSERT_TRUE(restaged.ok()) << restaged.error_message() << "\n" << plugin_->Log();
  EXPECT_NE(plugin_->Log().find("staging row does not match its device"), std::string::npos);
  ASSERT_TRUE(Publish("vol-1", staging, target, capability).ok());
  EXPECT_TRUE(IsMountPoint(target));
  ASSERT_TRUE(Unpublish("vol-1", target).ok());
  ASSERT_TRUE(Unstage("vol-1", staging).ok());
}

TEST_F(NodeTruthTest, AnUnstageOfABusyMountFailsUntilTheHolderLetsGo) {
  AddDisk(kSerialA, 64);
  const std::string staging = Path("staging");
  ASSERT_TRUE(Stage("vol-1", kDiskA, staging, MountCapability("ext4")).ok()) << plugin_->Log();
  int held = open((staging + "/open-file").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  ASSERT_GE(held, 0);
  ASSERT_EQ(write(held, "dirty", 5), 5);
  grpc::Status busy = Unstage("vol-1", staging);
  EXPECT_EQ(busy.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << busy.error_message();
  EXPECT_NE(busy.error_message().find("pid " + std::to_string(getpid())), std::string::npos)
      << "the holder is named: " << busy.error_message();
  EXPECT_TRUE(IsMountPoint(staging)) << "never detached lazily";
  close(held);
  grpc::Status unstaged = Unstage("vol-1", staging);
  EXPECT_TRUE(unstaged.ok()) << unstaged.error_message();
  EXPECT_FALSE(IsMountPoint(staging));
}

TEST_F(NodeTruthTest, AHungMkfsIsKilledAtItsLimitWhileOtherVolumesAreAnswered) {
  const std::string bin = Path("bin");
  fs::create_directories(bin);
  // A stand-in mkfs that hangs, with a child that hangs too: both must go at the limit.
  WriteScript(bin + "/mkfs.ext4", "sleep 600 &\necho $! > " + Path("mkfs-child.pid") + "\nwait");
  RestartWithCommandsFrom(bin, {"--mkfs-timeout-seconds=20"});
  AddDisk(kSerialA, 64);
  AddDisk(kSerialB, 512);  // XFS needs 300 MiB
  auto hung = std::async(std::launch::async, [&] {
    return Stage("vol-hung", kDiskA, Path("s-hung"), MountCapability("ext4"));
  });
  ASSERT_TRUE(plugin_->WaitForLog("msg=\"formatting volume\" volume_id=vol-hung", 30s))
      << plugin_->Log();
  // Another volume's calls are answered while the mkfs hangs, its own blkid, mkfs.xfs and mount
  // included.
  grpc::Status other = Stage("vol-other", kDiskB, Path("s-other"), MountCapability("xfs"));
  EXPECT_TRUE(other.ok()) << other.error_message();
  csi::v1::NodeGetVolumeStatsResponse stats;
  EXPECT_TRUE(Stats("vol-other", Path("s-other"), &stats).ok());
  EXPECT_EQ(hung.wait_for(0s), std::future_status::timeout) << "answered before the mkfs limit";
  grpc::Status timed_out = hung.get();
  EXPECT_EQ(timed_out.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << timed_out.error_message();
  EXPECT_NE(timed_out.error_message().find("killed"), std::string::npos)
      << timed_out.error_message();
  // The hung mkfs's own child went with it (its process group was killed).
  const pid_t child = static_cast<pid_t>(std::stol("0" + ReadFile(Path("mkfs-child.pid"))));
  ASSERT_GT(child, 0);
  EXPECT_TRUE(WaitForExit(child, 30s)) << "the mkfs's child " << child << " is still running";
  ASSERT_TRUE(Unstage("vol-other", Path("s-other")).ok());
  EXPECT_TRUE(Unstage("vol-hung", Path("s-hung")).ok());
}

TEST_F(NodeTruthTest, ADeviceOfAnotherSizeThanTheDisksIsNeverFormatted) {
  LoopDisk& disk = AddDisk(kSerialA, 64);
  grpc::Status refused = StageSized("vol-1", kDiskA, Path("s"), std::to_string(128 << 20));
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << refused.error_message();
  EXPECT_NE(refused.error_message().find(std::to_string(64 << 20) + " bytes"), std::string::npos)
      << refused.error_message();
  EXPECT_NE(refused.error_message().find(std::to_string(128 << 20) + " bytes"), std::string::npos)
      << refused.error_message();
  std::string probe;
  EXPECT_EQ(Shell("blkid -p " + disk.node(), &probe), 2) << "still blank: " << probe;
  grpc::Status bad = StageSized("vol-1", kDiskA, Path("s"), "12x");
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bad.error_message();
  ASSERT_TRUE(StageSized("vol-1", kDiskA, Path("s"), std::to_string(64 << 20)).ok());
  ASSERT_TRUE(Unstage("vol-1", Path("s")).ok());
}

// The mkfs finished, then the node died before the staged row: the intent stays. The volume is
// used elsewhere (mounted, written) before it comes back: the intent must not format it.
TEST_F(NodeTruthTest, AnIntentLeftByACrashAfterMkfsNeverFormatsAFilesystemMountedSince) {
  const std::string bin = Path("bin");
  fs::create_directories(bin);
  const std::string mkfs = RealProgram("mkfs.ext4");
  ASSERT_FALSE(mkfs.empty());
  // The crash point, exactly: the real mkfs has finished, the plugin dies before its next step.
  WriteScript(bin + "/mkfs.ext4", mkfs + " \"$@\"; rc=$?; kill -KILL $PPID; exit $rc");
  RestartWithCommandsFrom(bin);
  LoopDisk& disk = AddDisk(kSerialA, 64);
  const std::string staging = Path("staging");
  grpc::Status crashed = Stage("vol-1", kDiskA, staging, MountCapability("ext4"));
  EXPECT_FALSE(crashed.ok());
  plugin_->WaitExit();
  plugin_.reset();
  RestartWithTheRealCommands();
  EXPECT_NE(plugin_->Log().find("kept the intent of an interrupted format"), std::string::npos)
      << plugin_->Log();
  // Elsewhere (another node, by hand here): mounted, a file written, unmounted.
  const std::string elsewhere = Path("elsewhere");
  fs::create_directories(elsewhere);
  ASSERT_EQ(Shell("mount " + disk.node() + " " + elsewhere), 0);
  WriteFile(elsewhere + "/written-elsewhere", "keep me");
  ASSERT_EQ(Shell("umount " + elsewhere), 0);
  grpc::Status staged = Stage("vol-1", kDiskA, staging, MountCapability("ext4"));
  ASSERT_TRUE(staged.ok()) << staged.error_message() << "\n" << plugin_->Log();
  EXPECT_EQ(ReadFile(staging + "/written-elsewhere"), "keep me") << plugin_->Log();
  EXPECT_NE(plugin_->Log().find("has been mounted since"), std::string::npos) << plugin_->Log();
  EXPECT_EQ(plugin_->Log().find("formatting the volume again"), std::string::npos);
  ASSERT_TRUE(Unstage("vol-1", staging).ok());
}

// The same crash point with nobody using the volume since: our mkfs had completed, so the retry
// mounts it rather than formatting it again.
TEST_F(NodeTruthTest, AnIntentWhoseMkfsCompletedMountsItsFilesystemWithoutFormattingAgain) {
  const std::string bin = Path("bin");
  fs::create_directories(bin);
  WriteScript(bin + "/mkfs.ext4",
              RealProgram("mkfs.ext4") + " \"$@\"; rc=$?; kill -KILL $PPID; exit $rc");
  RestartWithCommandsFrom(bin);
  LoopDisk& disk = AddDisk(kSerialA, 64);
  EXPECT_FALSE(Stage("vol-1", kDiskA, Path("s"), MountCapability("ext4")).ok());
  plugin_->WaitExit();
  plugin_.reset();
  std::string uuid;
  ASSERT_EQ(Shell("blkid -p -s UUID -o value " + disk.node() + " | tr -d '\\n'", &uuid), 0);
  RestartWithTheRealCommands();
  grpc::Status staged = Stage("vol-1", kDiskA, Path("s"), MountCapability("ext4"));
  ASSERT_TRUE(staged.ok()) << staged.error_message() << "\n" << plugin_->Log();
  EXPECT_NE(plugin_->Log().find("our interrupted format had completed"), std::string::npos)
      << plugin_->Log();
  std::string after;
  ASSERT_EQ(Shell("blkid -s UUID -o value " + disk.node() + " | tr -d '\\n'", &after), 0);
  EXPECT_EQ(after, uuid) << "the filesystem our mkfs made is the one mounted";
  ASSERT_TRUE(Unstage("vol-1", Path("s")).ok());
}

// A mount option the kernel refuses fails the stage after mkfs; the intent stays for the retry
// but the retry (with good options) mounts the complete filesystem it finds.
TEST_F(NodeTruthTest, AMountRefusedAfterMkfsLeavesAFilesystemTheRetryMountsAsItIs) {
  AddDisk(kSerialA, 64);
  grpc::Status refused =
      Stage("vol-1", kDiskA, Path("s"), MountCapability("ext4", {"nosuchoption"}));
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.error_message().find("the kernel said"), std::string::npos)
      << "the kernel's reason is in the error: " << refused.error_message();
  grpc::Status staged = Stage("vol-1", kDiskA, Path("s"), MountCapability("ext4"));
  ASSERT_TRUE(staged.ok()) << staged.error_message() << "\n" << plugin_->Log();
  EXPECT_EQ(plugin_->Log().find("formatting the volume again"), std::string::npos)
      << plugin_->Log();
  ASSERT_TRUE(Unstage("vol-1", Path("s")).ok());
}

// An intent never formats a device that holds a signature other than a filesystem (here swap;
// LVM, RAID or LUKS alike): someone used the disk since.
TEST_F(NodeTruthTest, AnIntentNeverFormatsADeviceHoldingAnotherKindOfSignature) {
  LoopDisk& disk = AddDisk(kSerialA, 64);
  EXPECT_FALSE(Stage("vol-1", kDiskA, Path("s"), MountCapability("ext4", {"nosuchoption"})).ok());
  ASSERT_EQ(Shell("mkswap " + disk.node() + " >/dev/null 2>&1"), 0);  // used elsewhere as swap
  grpc::Status refused = Stage("vol-1", kDiskA, Path("s"), MountCapability("ext4"));
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << refused.error_message();
  std::string type;
  EXPECT_EQ(Shell("blkid -p -s TYPE -o value " + disk.node() + " | tr -d '\\n'", &type), 0);
  EXPECT_EQ(type, "swap") << "untouched";
  EXPECT_TRUE(Unstage("vol-1", Path("s")).ok());
}

// XFS used elsewhere and stopped without a clean unmount (a crash there: a dirty log, and a
// superblock that may not show the mount): an intent still never formats it.
TEST_F(NodeTruthTest, AnIntentNeverFormatsAnXfsFilesystemLeftDirtyElsewhere) {
  LoopDisk& disk = AddDisk(kSerialA, 512);
  EXPECT_FALSE(Stage("vol-1", kDiskA, Path("s"), MountCapability("xfs", {"nosuchoption"})).ok());
  const std::string elsewhere = Path("elsewhere");
  fs::create_directories(elsewhere);
  ASSERT_EQ(Shell("mount " + disk.node() + " " + elsewhere), 0);
  WriteFile(elsewhere + "/written-elsewhere", "keep me");
  ASSERT_EQ(Shell("sync -f " + elsewhere + "/written-elsewhere"), 0);  // the data, then the log
  ASSERT_EQ(Shell("xfs_io -x -c 'shutdown -f' " + elsewhere), 0);      // no unmount record: dirty
  ASSERT_EQ(Shell("umount " + elsewhere), 0);
  grpc::Status staged = Stage("vol-1", kDiskA, Path("s"), MountCapability("xfs"));
  ASSERT_TRUE(staged.ok()) << staged.error_message() << "\n" << plugin_->Log();
  EXPECT_EQ(ReadFile(Path("s") + "/written-elsewhere"), "keep me");
  EXPECT_EQ(plugin_->Log().find("formatting the volume again"), std::string::npos)
      << plugin_->Log();
  ASSERT_TRUE(Unstage("vol-1", Path("s")).ok());
}

// NodeUnstage answers OK only when no mount of the volume's device is left on the node: one the
// rows do not know (a bind mount made by hand here) refuses it, and the filesystem stays.
TEST_F(NodeTruthTest, AnUnstageIsRefusedWhileTheDeviceIsStillMountedElsewhere) {
  AddDisk(kSerialA, 64);
  const std::string staging = Path("staging");
  ASSERT_TRUE(Stage("vol-1", kDiskA, staging, MountCapability("ext4")).ok()) << plugin_->Log();
  const std::string other = Path("unknown-bind");
  fs::create_directories(other);
  ASSERT_EQ(mount(staging.c_str(), other.c_str(), nullptr, MS_BIND, nullptr), 0);
  grpc::Status refused = Unstage("vol-1", staging);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << refused.error_message();
  EXPECT_NE(refused.error_message().find(other), std::string::npos) << refused.error_message();
  EXPECT_TRUE(IsMountPoint(staging));
  ASSERT_EQ(umount2(other.c_str(), 0), 0);
  EXPECT_TRUE(Unstage("vol-1", staging).ok());
  EXPECT_FALSE(IsMountPoint(staging));
}

}  // namespace
}  // namespace oxide::testing
