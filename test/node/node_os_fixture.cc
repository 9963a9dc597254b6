#include "node_os_fixture.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

#include "node/mounter.h"
#include "support/test_environment.h"

namespace oxide::testing {

void NodeOsDiskTest::SetUp() {
  if (geteuid() != 0) OXIDE_SKIP_UNLESS_CI("node OS tests need root (loop devices, mkfs, mount)");
}

void NodeOsDiskTest::TearDown() {
  std::vector<std::string> mounts = MountsUnder(tmp_.path());
  for (auto it = mounts.rbegin(); it != mounts.rend(); ++it)
    umount2(it->c_str(), MNT_DETACH);  // cleanup after a failure only
  disks_.clear();
}

LoopDisk& NodeOsDiskTest::Disk(const std::string& name, int size_mib) {
  disks_.push_back(
      std::make_unique<LoopDisk>(tmp_.File(name + ".img"), tmp_.File("sys"), "", size_mib));
  EXPECT_TRUE(disks_.back()->ok()) << "cannot attach a loop device for " << name;
  return *disks_.back();
}

std::string NodeOsDiskTest::MountPoint(const std::string& name) {
  std::filesystem::create_directories(tmp_.File(name));
  return tmp_.File(name);
}

std::string NodeOsDiskTest::BlkidUuid(const std::string& node) {
  std::string out;
  Shell("blkid -p -o value -s UUID " + node, &out);
  while (!out.empty() && out.back() == '\n')
    out.pop_back();
  return out;
}

void NodeOsDiskTest::Zero(const std::string& node, long from, long to) {
  int fd = open(node.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << node;
  std::vector<char> zeros(static_cast<size_t>(to - from), 0);
  EXPECT_EQ(pwrite(fd, zeros.data(), zeros.size(), from), static_cast<ssize_t>(zeros.size()));
  EXPECT_EQ(fsync(fd), 0);
  close(fd);
}

bool NodeOsDiskTest::IsMounted(const std::string& path) {
  auto mounts = node::ReadMountInfo();
  return mounts.ok() && node::FindMount(*mounts, path).has_value();
}

}  // namespace oxide::testing
