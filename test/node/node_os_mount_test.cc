// Mounting and unmounting on real loop devices: XFS copies (same UUID) mount beside their source
// through MountFilesystem (nouuid) while a plain mount(2) of the copy is refused and the kernel's
// reason is found in its log; a failed mount carries the kernel's words; an unmount of a busy
// filesystem fails, names the holder and leaves it mounted (no lazy unmount). Needs root.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "node/formatter.h"
#include "node/mounter.h"
#include "node/volume_ops.h"
#include "node_os_fixture.h"

namespace oxide::testing {
namespace {

using NodeOsMountTest = NodeOsDiskTest;

std::string Joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines)
    text += line + "\n";
  return text;
}

TEST_F(NodeOsMountTest, XfsCopiesMountBesideTheirSource) {
  LoopDisk& original = Disk("original");
  ASSERT_TRUE(original.ok());
  const std::string uuid = node::NewFilesystemUuid();
  ASSERT_TRUE(node::MakeFilesystem(original.node(), "xfs", false, uuid, limits_).ok());
  LoopDisk& copy = Disk("copy");
  ASSERT_TRUE(copy.ok());
  ASSERT_EQ(Shell("dd if=" + original.node() + " of=" + copy.node() +
                  " bs=1M conv=sparse,fsync status=none"),
            0);
  ASSERT_EQ(BlkidUuid(copy.node()), uuid);

  const std::string original_mnt = MountPoint("original-mnt");
  const std::string copy_mnt = MountPoint("copy-mnt");
  Status mounted = node::MountFilesystem(original.node(), original_mnt, "xfs", {});
  ASSERT_TRUE(mounted.ok()) << mounted.ToString();
  mounted = node::MountFilesystem(copy.node(), copy_mnt, "xfs", {});
  ASSERT_TRUE(mounted.ok()) << mounted.ToString();
  EXPECT_TRUE(IsMounted(original_mnt));
  EXPECT_TRUE(IsMounted(copy_mnt));
  ASSERT_TRUE(node::Unmount(copy_mnt).ok());
  ASSERT_TRUE(node::Unmount(original_mnt).ok());

  // The original mounted without nouuid registers its UUID with XFS: the copy still mounts
  // through MountFilesystem, and a plain mount(2) of it is refused with the kernel saying why.
  ASSERT_EQ(mount(original.node().c_str(), original_mnt.c_str(), "xfs", 0, nullptr), 0)
      << std::strerror(errno);
  mounted = node::MountFilesystem(copy.node(), copy_mnt, "xfs", {});
  ASSERT_TRUE(mounted.ok()) << mounted.ToString();
  ASSERT_TRUE(node::Unmount(copy_mnt).ok());
  ASSERT_NE(mount(copy.node().c_str(), copy_mnt.c_str(), "xfs", 0, nullptr), 0);
  EXPECT_EQ(errno, EINVAL);
  std::vector<std::string> said = node::KernelMessagesAbout(copy.name());
  ASSERT_FALSE(said.empty()) << "nothing about " << copy.name() << " in /dev/kmsg";
  EXPECT_LE(said.size(), 5u);
  EXPECT_NE(said.back().find("duplicate UUID"), std::string::npos) << Joined(said);
  EXPECT_NE(said.back().find(copy.name()), std::string::npos) << Joined(said);
  EXPECT_EQ(said.back().find(';'), std::string::npos) << "record prefix left: " << said.back();
}

TEST_F(NodeOsMountTest, AFailedMountCarriesTheKernelsReason) {
  LoopDisk& disk = Disk("disk");
  ASSERT_TRUE(disk.ok());
  ASSERT_TRUE(
      node::MakeFilesystem(disk.node(), "ext4", false, node::NewFilesystemUuid(), limits_).ok());
  const std::string mnt = MountPoint("mnt");
  node::MountOptions options;
  options.data = "nosuchoption";
  Status refused = node::MountFilesystem(disk.node(), mnt, "ext4", options);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument) << refused.ToString();
  EXPECT_NE(refused.message().find("the kernel said: "), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("nosuchoption'"), std::string::npos) << refused.message();
  EXPECT_FALSE(IsMounted(mnt));

  // Broken metadata (ext4's group descriptors): the kernel's words, and FAILED_PRECONDITION.
  Zero(disk.node(), 4096, 1024 * 1024);
  Status corrupt = node::MountFilesystem(disk.node(), mnt, "ext4", {});
  EXPECT_EQ(corrupt.code(), StatusCode::kFailedPrecondition) << corrupt.ToString();
  EXPECT_NE(corrupt.message().find("the kernel said: EXT4-fs (" + disk.name() + ")"),
            std::string::npos)
      << corrupt.message();
  EXPECT_FALSE(IsMounted(mnt));
}

TEST_F(NodeOsMountTest, ABusyUnmountFailsNamingTheHolderAndStaysMounted) {
  LoopDisk& disk = Disk("disk");
  ASSERT_TRUE(disk.ok());
  ASSERT_TRUE(
      node::MakeFilesystem(disk.node(), "ext4", false, node::NewFilesystemUuid(), limits_).ok());
  const std::string mnt = MountPoint("mnt");
  ASSERT_TRUE(node::MountFilesystem(disk.node(), mnt, "ext4", {}).ok());
  const int fd = open((mnt + "/held").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  const std::string me = "pid " + std::to_string(getpid()) + " (";

  std::vector<std::string> holders = node::HoldersOf(mnt + "/");
  EXPECT_NE(Joined(holders).find(me), std::string::npos) << Joined(holders);
  Status busy = node::Unmount(mnt, std::chrono::milliseconds(200));
  EXPECT_EQ(busy.code(), StatusCode::kFailedPrecondition) << busy.ToString();
  EXPECT_EQ(busy.message().rfind(mnt + " is busy: still in use by ", 0), 0u) << busy.message();
  EXPECT_NE(busy.message().find(me), std::string::npos) << busy.message();
  EXPECT_TRUE(IsMounted(mnt)) << "the busy filesystem was detached";

  // UnmountAndRemove passes the failure on and leaves the path in place.
  struct stat info {};
  ASSERT_EQ(stat(disk.node().c_str(), &info), 0);
  node::BlockDevice device{disk.name(), disk.node(), major(info.st_rdev), minor(info.st_rdev)};
  Status removed = node::UnmountAndRemove(&device, false, mnt, true);
  EXPECT_EQ(removed.code(), StatusCode::kFailedPrecondition) << removed.ToString();
  EXPECT_TRUE(IsMounted(mnt));

  close(fd);
  EXPECT_TRUE(node::HoldersOf(mnt).empty()) << Joined(node::HoldersOf(mnt));
  Status unmounted = node::Unmount(mnt);
  EXPECT_TRUE(unmounted.ok()) << unmounted.ToString();
  EXPECT_FALSE(IsMounted(mnt));
}

// A mount whose block device no longer exists may be unmounted at the volume's path although its
// device cannot be matched; a live device's mount, or a mount of no block device, may not.
TEST(NodeOsVanishedDeviceTest, OnlyAMountOfABlockDeviceThatIsGoneCounts) {
  node::MountEntry gone;
  gone.major = 259;
  gone.minor = 1048575;  // no such device number
  EXPECT_TRUE(node::MountOfVanishedDevice(gone, false, "/nowhere"));
  node::MountEntry tmpfs;
  tmpfs.minor = 42;
  EXPECT_FALSE(node::MountOfVanishedDevice(tmpfs, false, "/nowhere"));
  struct stat root {};
  ASSERT_EQ(stat("/", &root), 0);
  node::MountEntry live;
  live.major = major(root.st_dev);
  live.minor = minor(root.st_dev);
  if (live.major != 0) {
    EXPECT_FALSE(node::MountOfVanishedDevice(live, false, "/nowhere"));
  }
  // Block: the device node bound at the path decides; a path that is not one is never "gone".
  EXPECT_FALSE(node::MountOfVanishedDevice(gone, true, "/"));
}

}  // namespace
}  // namespace oxide::testing
