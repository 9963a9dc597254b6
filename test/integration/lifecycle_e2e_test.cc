// The whole life of a volume through the real plugin in --mode=all, against oxide-sim with guest
// device emulation (a disk attached to a running guest_local instance appears as a real loop
// device with its NVMe serial in the simulator's sysfs tree): create, attach, stage, publish,
// write, tear down, attach and mount again, find the data, tear down, delete; and the same once
// for a local (sled-local) volume. Needs root.
#include <gtest/gtest.h>

#include <filesystem>

#include "guest_volume_fixture.h"
#include "support/loop_disk.h"

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

// The StorageClass's filesystem options go from CreateVolume's parameters through the volume's
// volume_context to the node's mkfs.
TEST_F(LifecycleTest, FilesystemOptionsOfCreateVolumeReachTheNodesMkfs) {
  auto node = csi::v1::Node::NewStub(UnixChannel(setup_->socket_path()));
  csi::v1::CreateVolumeRequest request = CreateRequest("pvc-fs-options", 1);
  (*request.mutable_parameters())["inodeSize"] = "1024";
  (*request.mutable_parameters())["bytesPerInode"] = "65536";
  csi::v1::CreateVolumeResponse created;
  grpc::Status status = Create(request, &created);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const csi::v1::Volume& volume = created.volume();

  MountAndCheck(*node, volume);
  std::string device;
  ASSERT_EQ(Shell("findmnt -n -o SOURCE " + staging_, &device), 0);
  while (!device.empty() && device.back() == '\n')
    device.pop_back();
  std::string superblock;
  ASSERT_EQ(Shell("tune2fs -l " + device, &superblock), 0) << superblock;
  EXPECT_NE(superblock.find("Inode size:\t          1024"), std::string::npos) << superblock;
  // 1 GiB / 65536 bytes per inode.
  EXPECT_NE(superblock.find("Inode count:              16384"), std::string::npos) << superblock;
  UnmountAndDetach(*node, volume);
  ASSERT_TRUE(Delete(volume.volume_id()).ok());
}

TEST_F(LifecycleTest, ALocalVolumeIsCreatedMountedWrittenAndDeleted) {
  auto node = csi::v1::Node::NewStub(UnixChannel(setup_->socket_path()));
  csi::v1::CreateVolumeRequest request = CreateRequest("pvc-local-lifecycle", 2);
  (*request.mutable_parameters())["diskType"] = "local";
  csi::v1::CreateVolumeResponse created;
  grpc::Status status = Create(request, &created);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const csi::v1::Volume& volume = created.volume();
  EXPECT_EQ(volume.volume_context().at("diskType"), "local");
  EXPECT_EQ(SimDisk(volume.volume_id())["disk_type"], "local");

  // ControllerPublish, NodeStage (mkfs.ext4, mount), NodePublish.
  ASSERT_NO_FATAL_FAILURE(MountAndCheck(*node, volume));
  EXPECT_NE(LogLineWith(ReadFile("/proc/self/mountinfo"), staging_).find(" ext4 "),
            std::string::npos)
      << "the staged local disk carries the ext4 the node made";
  WriteFile(target_ + "/data.txt", "on a sled-local disk");
  EXPECT_EQ(ReadFile(target_ + "/data.txt"), "on a sled-local disk");
  // NodeUnpublish, NodeUnstage, ControllerUnpublish.
  ASSERT_NO_FATAL_FAILURE(UnmountAndDetach(*node, volume));
  EXPECT_EQ(SimDisk(volume.volume_id())["state"]["state"], "detached");

  ASSERT_TRUE(Delete(volume.volume_id()).ok());
  EXPECT_TRUE(SimDisk(volume.volume_id()).is_null());
  std::string mounts = ReadFile("/proc/self/mountinfo");
  EXPECT_EQ(mounts.find(work_.path()), std::string::npos) << "no mount left behind";
}

}  // namespace
}  // namespace oxide::testing
