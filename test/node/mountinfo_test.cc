// Unit tests of the /proc/self/mountinfo parser and the mount-flag table.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include "node/mounter.h"

namespace oxide::node {
namespace {

constexpr const char* kSample =
    "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro\n"
    "42 22 7:3 / /var/lib/kubelet/my\\040volume rw,noatime shared:5 master:2 - xfs /dev/loop3 "
    "rw,attr2\n"
    "43 22 0:5 /loop3 /var/lib/kubelet/pods/p/block\\011x ro,relatime - devtmpfs udev "
    "rw,size=100k\n"
    "44 22 7:3 / /var/lib/kubelet/my\\040volume ro,relatime - xfs /dev/loop3 ro\n"
    "garbage line\n"
    // A mount point that is not absolute (never the kernel's; found by fuzz target node_text)
    // is malformed: skipped, never compared with a CSI path.
    "45 22 7:4 / var/lib/relative rw - ext4 /dev/loop4 rw\n";

TEST(MountInfo, ParsesFieldsAndDecodesOctalEscapes) {
  auto entries = ParseMountInfo(kSample);
  ASSERT_EQ(entries.size(), 4U);
  EXPECT_EQ(entries[0].mount_point, "/");
  EXPECT_EQ(entries[0].major, 259U);
  EXPECT_EQ(entries[0].minor, 2U);
  EXPECT_EQ(entries[0].source, "/dev/nvme0n1p2");
  EXPECT_FALSE(entries[0].ReadOnly());
  EXPECT_EQ(entries[1].mount_point, "/var/lib/kubelet/my volume");
  EXPECT_EQ(entries[1].fs_type, "xfs");
  EXPECT_EQ(entries[1].options, "rw,noatime");
  EXPECT_EQ(entries[1].super_options, "rw,attr2");
  EXPECT_EQ(entries[2].root, "/loop3");
  EXPECT_EQ(entries[2].mount_point, "/var/lib/kubelet/pods/p/block\tx");
  EXPECT_TRUE(entries[2].ReadOnly());
}

TEST(MountInfo, FindMountReturnsTheTopmostMount) {
  auto entries = ParseMountInfo(kSample);
  auto found = FindMount(entries, "/var/lib/kubelet/my volume");
  ASSERT_TRUE(found.has_value());
  EXPECT_TRUE(found->ReadOnly());
  EXPECT_FALSE(FindMount(entries, "/var/lib/kubelet/my").has_value());
}

TEST(MountFlags, KnownFlagsBecomeMountFlagsOthersBecomeData) {
  auto options = ParseMountFlags({"noatime,nodev", "discard", "ro", "data=ordered"});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->flags, static_cast<unsigned long>(MS_NOATIME | MS_NODEV | MS_RDONLY));
  EXPECT_EQ(options->data, "discard,data=ordered");
  auto rw = ParseMountFlags({"ro", "rw"});
  ASSERT_TRUE(rw.ok());
  EXPECT_EQ(rw->flags, 0UL);
}

TEST(MountFlags, NonsenseFlagsAreInvalidArguments) {
  for (const char* flag :
       {"bind", "rbind", "remount", "move", "rshared", "noatime,bind", "a b", "x\\y"}) {
    auto options = ParseMountFlags({flag});
    EXPECT_EQ(options.status().code(), StatusCode::kInvalidArgument) << flag;
  }
}

}  // namespace
}  // namespace oxide::node
