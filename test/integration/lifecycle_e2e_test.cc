// The whole life of a volume through the real plugin in --mode=all, against oxide-sim with guest
// device emulation (a disk attached to a running guest_local instance appears as a real loop
// device with its NVMe serial in the simulator's sysfs tree): create, attach, stage, publish,
// write, tear down, attach and mount again, find the data, tear down, delete. Needs root.
#include <gtest/gtest.h>

#include <filesystem>

#include "guest_volume_fixture.h"

namespace oxide::testing {
namespace {

// The device emulation, the node-1 instance and the mount helpers are GuestVolumeTest's.
class LifecycleTest : public GuestVolumeTest {};

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
