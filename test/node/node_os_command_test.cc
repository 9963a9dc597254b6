// RunCommand's time limit, and the filesystem helpers on real loop devices: mkfs writing the UUID
// asked for, the filesystem's own history (mounted since mkfs?) and the read-only completeness
// check. The filesystem tests need root (they skip otherwise).
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <string>

#include "node/filesystem_history.h"
#include "node/filesystem_probe.h"
#include "node/formatter.h"
#include "node/kernel_log.h"
#include "node/mounter.h"
#include "node_os_fixture.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace oxide::testing {
namespace {

using namespace std::chrono_literals;

TEST(NodeOsCommandTest, OutputAndExitCodeOfAQuickCommandAreCaptured) {
  auto run = node::RunCommand({"sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 3"}, 10s);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->exit_code, 3);
  EXPECT_NE(run->output.find("to-stdout"), std::string::npos) << run->output;
  EXPECT_NE(run->output.find("to-stderr"), std::string::npos) << run->output;
}

TEST(NodeOsCommandTest, AMissingProgramIsFailedPrecondition) {
  auto run = node::RunCommand({"oxide-no-such-program"}, 10s);
  EXPECT_EQ(run.status().code(), StatusCode::kFailedPrecondition) << run.status().ToString();
}

// A stand-in for a hung mkfs: it starts a grandchild that sleeps, then sleeps itself. At the time
// limit both must be killed (the grandchild through the process group), and the call must return
// at once with DEADLINE_EXCEEDED.
TEST(NodeOsCommandTest, AHungCommandIsKilledWithItsProcessGroup) {
  TempDir tmp;
  const std::string pid_file = tmp.File("grandchild.pid");
  const std::string script = tmp.File("hang.sh");
  WriteFile(script, "#!/bin/sh\nsleep 60 &\necho $! > " + pid_file + ".new\nmv " + pid_file +
                        ".new " + pid_file + "\nsleep 60\n");
  ASSERT_EQ(chmod(script.c_str(), 0755), 0);
  // Orphans of the killed script become our children, so that the test can wait for the
  // grandchild's exit (and see which signal ended it) instead of init reaping it some time later.
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  const auto started = std::chrono::steady_clock::now();
  auto run = node::RunCommand({script}, 3s);  // room for sh to start its child on a busy CI
  const auto took = std::chrono::steady_clock::now() - started;
  prctl(PR_SET_CHILD_SUBREAPER, 0);  // the grandchild, reparented during the call, stays ours
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(run.status().message(), script +
                                        " did not finish within 3 s; it was killed with its "
                                        "process group");
  EXPECT_GE(took, 3s);
  EXPECT_LT(took, 8s) << "the kill did not end the command promptly";
  const pid_t grandchild = static_cast<pid_t>(std::stol("0" + ReadFile(pid_file)));
  ASSERT_GT(grandchild, 0) << "the script did not write its grandchild's pid in time";
  // Killed together, the script may have reaped its grandchild itself; otherwise the grandchild
  // became ours when the script died and its exit status shows the kill.
  int status = 0;
  if (WaitChildExit(grandchild, 10s, &status)) {
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
  }
  EXPECT_EQ(kill(grandchild, 0), -1) << "the grandchild still runs";
  EXPECT_EQ(errno, ESRCH);
}

TEST(NodeOsCommandTest, NewUuidsAreCanonicalAndDiffer) {
  const std::string a = node::NewFilesystemUuid();
  const std::string b = node::NewFilesystemUuid();
  EXPECT_TRUE(node::IsCanonicalUuid(a)) << a;
  EXPECT_NE(a, b);
  EXPECT_FALSE(node::IsCanonicalUuid("0C1E0A45-1D2B-4F3A-9B8C-7D6E5F4A3B2C"));  // uppercase
  EXPECT_FALSE(node::IsCanonicalUuid("0c1e0a451d2b4f3a9b8c7d6e5f4a3b2c"));
  EXPECT_FALSE(node::IsCanonicalUuid("00000000-0000-0000-0000-000000000000"));
}

TEST(NodeOsKernelLogTest, RecordsAreMatchedByWholeDeviceNames) {
  EXPECT_EQ(node::KernelRecordText("3,1234,5678,-;XFS (loop3): bad\n SUBSYSTEM=block\n"),
            "XFS (loop3): bad");
  EXPECT_TRUE(node::NamesDevice("XFS (loop3): bad", "loop3"));
  EXPECT_TRUE(node::NamesDevice("loop3: detected capacity change", "loop3"));
  EXPECT_FALSE(node::NamesDevice("XFS (loop30): bad", "loop3"));
  EXPECT_FALSE(node::NamesDevice("XFS (loop3p1): bad", "loop3"));
  EXPECT_TRUE(node::IsDevicelessMessageOf("ext4: Unknown parameter 'x'", "ext4"));
  EXPECT_FALSE(node::IsDevicelessMessageOf("EXT4-fs (loop4): mounted filesystem", "ext4"));
  EXPECT_FALSE(node::IsDevicelessMessageOf("xfs: Unknown parameter 'x'", "ext4"));
}

class NodeOsFilesystemTest : public NodeOsDiskTest,
                             public ::testing::WithParamInterface<std::string> {
 protected:
  std::string fs() const { return GetParam(); }
};

TEST_P(NodeOsFilesystemTest, MkfsWritesTheUuidAskedFor) {
  LoopDisk& disk = Disk("disk");
  ASSERT_TRUE(disk.ok());
  const std::string uuid = node::NewFilesystemUuid();
  Status made = node::MakeFilesystem(disk.node(), fs(), false, uuid, limits_);
  ASSERT_TRUE(made.ok()) << made.ToString();
  EXPECT_EQ(BlkidUuid(disk.node()), uuid);
  auto content = node::ProbeDevice(disk.node(), limits_);
  ASSERT_TRUE(content.ok()) << content.status().ToString();
  EXPECT_EQ(content->kind, node::DeviceContent::Kind::kFilesystem);
  EXPECT_EQ(content->fs_type, fs());
  EXPECT_EQ(content->uuid, uuid);
  // A UUID not in canonical form is refused before mkfs runs: the filesystem stays.
  Status refused = node::MakeFilesystem(disk.node(), fs(), true, "NOT-A-UUID", limits_);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument) << refused.ToString();
  EXPECT_EQ(BlkidUuid(disk.node()), uuid);
}

TEST_P(NodeOsFilesystemTest, HistoryShowsAMountSinceMkfs) {
  LoopDisk& disk = Disk("disk");
  ASSERT_TRUE(disk.ok());
  const std::string uuid = node::NewFilesystemUuid();
  ASSERT_TRUE(node::MakeFilesystem(disk.node(), fs(), false, uuid, limits_).ok());
  auto fresh = node::ReadFilesystemHistory(disk.node(), fs(), limits_);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_EQ(fresh->uuid, uuid);
  EXPECT_FALSE(fresh->mounted_since_mkfs) << fresh->evidence;
  EXPECT_FALSE(fresh->mkfs_unfinished) << "mkfs finished";
  const std::string mnt = MountPoint("mnt");
  Status mounted = node::MountFilesystem(disk.node(), mnt, fs(), {});
  ASSERT_TRUE(mounted.ok()) << mounted.ToString();
  Status unmounted = node::Unmount(mnt);
  ASSERT_TRUE(unmounted.ok()) << unmounted.ToString();
  auto used = node::ReadFilesystemHistory(disk.node(), fs(), limits_);
  ASSERT_TRUE(used.ok()) << used.status().ToString();
  EXPECT_EQ(used->uuid, uuid);
  EXPECT_TRUE(used->mounted_since_mkfs) << used->evidence;
  EXPECT_NE(used->evidence.find(fs() == "ext4" ? "mount count 1, last mounted "
                                               : "log sequence number 0x"),
            std::string::npos)
      << used->evidence;
}

INSTANTIATE_TEST_SUITE_P(Filesystems, NodeOsFilesystemTest, ::testing::Values("ext4", "xfs"),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace oxide::testing
