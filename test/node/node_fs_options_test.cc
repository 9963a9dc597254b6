// The filesystem options through the real plugin binary: NodeStageVolume's volume_context
// options reach mkfs on a blank loop device (read back with tune2fs -l / xfs_info), XFS is made
// with the feature profile of --xfs-feature-profile, a device that already holds a filesystem is
// mounted as it is whatever the options say, and options that are out of range or do not apply
// to the node's capability are INVALID_ARGUMENT before the device is touched. Root only.
#include <map>
#include <string>

#include "node_fixture.h"

namespace oxide::testing {
namespace {

constexpr const char* kDiskA = "csi-0123456789abcdef-e2e";

std::string Output(const std::string& command) {
  std::string out;
  Shell(command, &out);
  return out;
}

// The value of tune2fs -l's line `name:`, trimmed.
std::string Tune2fsField(const std::string& node, const std::string& name) {
  const std::string out = Output("tune2fs -l " + node);
  size_t at = out.find("\n" + name + ":");
  if (at == std::string::npos) return "";
  size_t value = out.find_first_not_of(" \t", at + name.size() + 2);
  return out.substr(value, out.find('\n', value) - value);
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(NodeTest, Ext4OptionsInTheVolumeContextReachMkfs) {
  LoopDisk& disk = AddDisk(kSerialA);
  grpc::Status st = Stage("vol-1", kDiskA, Path("s"), MountCapability("ext4"),
                          {{"fsBlockSize", "2048"},
                           {"inodeSize", "1024"},
                           {"bytesPerInode", "32768"},
                           {"ext4BigAlloc", "true"},
                           {"ext4ClusterSize", "32768"}});
  ASSERT_TRUE(st.ok()) << st.error_message() << "\n" << plugin_->Log();
  EXPECT_EQ(Tune2fsField(disk.node(), "Block size"), "2048");
  EXPECT_EQ(Tune2fsField(disk.node(), "Inode size"), "1024");
  EXPECT_EQ(Tune2fsField(disk.node(), "Cluster size"), "32768");
  EXPECT_TRUE(Contains(Tune2fsField(disk.node(), "Filesystem features"), "bigalloc"));
  // 512 MiB / 32768 bytes per inode.
  EXPECT_EQ(Tune2fsField(disk.node(), "Inode count"), "16384");
  EXPECT_TRUE(Unstage("vol-1", Path("s")).ok());
}

TEST_F(NodeTest, NumberOfInodesInTheVolumeContextReachesMkfs) {
  LoopDisk& disk = AddDisk(kSerialA);
  grpc::Status st =
      Stage("vol-1", kDiskA, Path("s"), MountCapability(""), {{"numberOfInodes", "100000"}});
  ASSERT_TRUE(st.ok()) << st.error_message() << "\n" << plugin_->Log();
  const long count = std::stol("0" + Tune2fsField(disk.node(), "Inode count"));
  EXPECT_GE(count, 100000);
  EXPECT_LT(count, 100000 + 4096) << "mke2fs rounds up to whole inode-table blocks only";
  EXPECT_TRUE(Unstage("vol-1", Path("s")).ok());
}

class NodeXfsProfileTest : public NodeTest {
 protected:
  std::vector<std::string> ExtraArgs() const override {
    return {"--device-wait-seconds=2", "--xfs-feature-profile=lts_4.19"};
  }
};

TEST_F(NodeXfsProfileTest, XfsOptionsAndTheProfileReachMkfs) {
  LoopDisk& disk = AddDisk(kSerialA);
  grpc::Status st = Stage("vol-1", kDiskA, Path("s"), MountCapability("xfs"),
                          {{"fsBlockSize", "2048"}, {"inodeSize", "1024"}});
  ASSERT_TRUE(st.ok()) << st.error_message() << "\n" << plugin_->Log();
  const std::string info = Output("xfs_info " + disk.node());
  EXPECT_TRUE(Contains(info, "isize=1024")) << info;
  EXPECT_TRUE(Contains(info, "bsize=2048")) << info;
  // lts_4.19: no reflink, bigtime or inobtcount (the default profile, lts_5.4, has reflink).
  EXPECT_TRUE(Contains(info, "reflink=0")) << info;
  EXPECT_TRUE(Contains(info, "bigtime=0")) << info;
  EXPECT_TRUE(Contains(info, "inobtcount=0")) << info;
  EXPECT_TRUE(Unstage("vol-1", Path("s")).ok());
}

TEST_F(NodeTest, ADeviceHoldingAFilesystemIsMountedAsItIsWhateverTheOptions) {
  LoopDisk& disk = AddDisk(kSerialA);
  ASSERT_EQ(Shell("mkfs.ext4 -q -I 256 " + disk.node()), 0);
  const std::string uuid = Tune2fsField(disk.node(), "Filesystem UUID");
  ASSERT_FALSE(uuid.empty());
  grpc::Status st = Stage("vol-1", kDiskA, Path("s"), MountCapability("ext4"),
                          {{"inodeSize", "1024"}, {"bytesPerInode", "4096"}});
  ASSERT_TRUE(st.ok()) << st.error_message() << "\n" << plugin_->Log();
  EXPECT_EQ(Tune2fsField(disk.node(), "Inode size"), "256") << "never reformatted";
  EXPECT_EQ(Tune2fsField(disk.node(), "Filesystem UUID"), uuid);
  EXPECT_EQ(MountsUnder(Path("")).size(), 1U);
  EXPECT_TRUE(plugin_->WaitForLog("filesystem options not applied")) << plugin_->Log();
  EXPECT_TRUE(Unstage("vol-1", Path("s")).ok());
}

TEST_F(NodeTest, BadOptionsInTheVolumeContextAreInvalidArgumentBeforeTheDeviceIsTouched) {
  LoopDisk& disk = AddDisk(kSerialA);
  struct Case {
    csi::v1::VolumeCapability capability;
    std::map<std::string, std::string> context;
    std::vector<std::string> message_parts;
  };
  for (const Case& c : {
           Case{MountCapability("ext4"),
                {{"inodeSize", "100"}},
                {"volume_context inodeSize=\"100\"", "power of two from 128 to 4096"}},
           // The node's fs type counts, not the controller's.
           Case{MountCapability("xfs"),
                {{"bytesPerInode", "8192"}},
                {"bytesPerInode=\"8192\" does not apply to xfs", "ext4 only"}},
           Case{MountCapability("xfs"),
                {{"inodeSize", "256"}},
                {"inodeSize=\"256\"", "512 to 2048"}},
           Case{MountCapability("ext4"),
                {{"ext4ClusterSize", "65536"}},
                {"ext4ClusterSize=\"65536\"", "ext4BigAlloc"}},
           Case{BlockCapability(), {{"fsBlockSize", "4096"}}, {"fsBlockSize=\"4096\"", "block"}},
       }) {
    grpc::Status st = Stage("vol-1", kDiskA, Path("s"), c.capability, c.context);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
    for (const std::string& part : c.message_parts)
      EXPECT_TRUE(Contains(st.error_message(), part)) << part << " not in " << st.error_message();
  }
  EXPECT_EQ(Output("blkid -p -o value -s TYPE " + disk.node()), "") << "the device is untouched";
  EXPECT_TRUE(MountsUnder(Path("")).empty());
}

}  // namespace
}  // namespace oxide::testing
