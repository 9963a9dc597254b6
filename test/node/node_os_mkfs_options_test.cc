// The filesystem options and the XFS feature profile on real loop devices: each option given to
// MakeFilesystem is read back from the filesystem mkfs made (tune2fs -l for ext4, xfs_info for
// xfs), the filesystem carries the UUID asked for and mounts. Needs root.
#include <cstdio>
#include <map>
#include <string>

#include "node/filesystem_options.h"
#include "node/formatter.h"
#include "node/mounter.h"
#include "node_os_fixture.h"
#include "support/temp_dir.h"

namespace oxide::testing {
namespace {

using NodeOsMkfsOptionsTest = NodeOsDiskTest;

// tune2fs -l's "Name:   value" lines.
std::map<std::string, std::string> Tune2fs(const std::string& node) {
  std::string out;
  EXPECT_EQ(Shell("tune2fs -l " + node, &out), 0) << out;
  std::map<std::string, std::string> fields;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::string line = out.substr(start, end - start);
    start = end + 1;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    size_t value = line.find_first_not_of(" \t", colon + 1);
    fields[line.substr(0, colon)] = value == std::string::npos ? "" : line.substr(value);
  }
  return fields;
}

std::string XfsInfo(const std::string& node) {
  std::string out;
  EXPECT_EQ(Shell("xfs_info " + node, &out), 0) << out;
  return out;
}

// The value after `name=` on the line of xfs_info that starts with `section` ("meta-data",
// "data", ...) or continues it; "" when absent.
std::string XfsField(const std::string& info, const std::string& section, const std::string& name) {
  size_t at = info.find("\n" + section);
  if (info.rfind(section, 0) == 0) at = 0;
  if (at == std::string::npos) return "";
  size_t next_section = at;
  do {  // the section's continuation lines start with spaces
    next_section = info.find('\n', next_section + 1);
  } while (next_section != std::string::npos && next_section + 1 < info.size() &&
           info[next_section + 1] == ' ');
  std::string text =
      info.substr(at, next_section == std::string::npos ? std::string::npos : next_section - at);
  size_t pos = text.find(" " + name + "=");
  if (pos == std::string::npos) pos = text.find("\t" + name + "=");
  if (pos == std::string::npos) return "";
  pos += name.size() + 2;
  size_t end = text.find_first_of(" ,\n", pos);
  return text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}

void ExpectMounts(const std::string& node, const std::string& fs, const std::string& mnt) {
  Status mounted = node::MountFilesystem(node, mnt, fs, {});
  ASSERT_TRUE(mounted.ok()) << mounted.ToString();
  EXPECT_TRUE(node::Unmount(mnt).ok());
}

node::FilesystemOptions Sizes(uint64_t block_size, uint64_t inode_size) {
  node::FilesystemOptions options;
  if (block_size) options.block_size = block_size;
  if (inode_size) options.inode_size = inode_size;
  return options;
}

TEST_F(NodeOsMkfsOptionsTest, Ext4BlockAndInodeSizesAndBytesPerInodeReachMkfs) {
  LoopDisk& disk = Disk("disk");
  ASSERT_TRUE(disk.ok());
  const std::string uuid = node::NewFilesystemUuid();
  node::FilesystemOptions options = Sizes(2048, 512);
  options.bytes_per_inode = 65536;
  Status made = node::MakeFilesystem(disk.node(), "ext4", false, uuid, limits_, options);
  ASSERT_TRUE(made.ok()) << made.ToString();
  auto fields = Tune2fs(disk.node());
  EXPECT_EQ(fields["Filesystem UUID"], uuid);
  EXPECT_EQ(fields["Block size"], "2048");
  EXPECT_EQ(fields["Inode size"], "512");
  // 512 MiB / 65536 bytes per inode (the default ratio, 16384, would make 32768).
  EXPECT_EQ(fields["Inode count"], "8192");
  ExpectMounts(disk.node(), "ext4", MountPoint("mnt"));
}

TEST_F(NodeOsMkfsOptionsTest, Ext4NumberOfInodesReachesMkfs) {
  LoopDisk& disk = Disk("disk");
  ASSERT_TRUE(disk.ok());
  node::FilesystemOptions options;
  options.number_of_inodes = 100000;
  Status made =
      node::MakeFilesystem(disk.node(), "ext4", false, node::NewFilesystemUuid(), limits_, options);
  ASSERT_TRUE(made.ok()) << made.ToString();
  // mke2fs rounds up to whole inode-table blocks in every block group.
  const long count = std::stol("0" + Tune2fs(disk.node())["Inode count"]);
  EXPECT_GE(count, 100000);
  EXPECT_LT(count, 100000 + 4096);
}

TEST_F(NodeOsMkfsOptionsTest, Ext4BigAllocWithAClusterSizeReachesMkfs) {
  LoopDisk& disk = Disk("disk");
  ASSERT_TRUE(disk.ok());
  node::FilesystemOptions options;
  options.bigalloc = true;
  options.cluster_size = 65536;
  Status made =
      node::MakeFilesystem(disk.node(), "ext4", false, node::NewFilesystemUuid(), limits_, options);
  ASSERT_TRUE(made.ok()) << made.ToString();
  auto fields = Tune2fs(disk.node());
  EXPECT_NE(fields["Filesystem features"].find("bigalloc"), std::string::npos)
      << fields["Filesystem features"];
  EXPECT_EQ(fields["Cluster size"], "65536");
  EXPECT_EQ(fields["Block size"], "4096");
  ExpectMounts(disk.node(), "ext4", MountPoint("mnt"));

  // Without options: no bigalloc, clusters are blocks.
  made = node::MakeFilesystem(disk.node(), "ext4", true, node::NewFilesystemUuid(), limits_);
  ASSERT_TRUE(made.ok()) << made.ToString();
  fields = Tune2fs(disk.node());
  EXPECT_EQ(fields["Filesystem features"].find("bigalloc"), std::string::npos);
  EXPECT_EQ(fields["Inode size"], "256");
}

TEST_F(NodeOsMkfsOptionsTest, XfsBlockAndInodeSizesReachMkfsUnderTheDefaultProfile) {
  LoopDisk& disk = Disk("disk");
  ASSERT_TRUE(disk.ok());
  const std::string uuid = node::NewFilesystemUuid();
  node::FilesystemOptions options = Sizes(2048, 1024);
  Status made = node::MakeFilesystem(disk.node(), "xfs", false, uuid, limits_, options);
  ASSERT_TRUE(made.ok()) << made.ToString();
  const std::string info = XfsInfo(disk.node());
  EXPECT_EQ(XfsField(info, "meta-data", "isize"), "1024") << info;
  EXPECT_EQ(XfsField(info, "data", "bsize"), "2048") << info;
  // lts_5.4: what Linux 5.4 mounts.
  EXPECT_EQ(XfsField(info, "meta-data", "crc"), "1") << info;
  EXPECT_EQ(XfsField(info, "meta-data", "reflink"), "1") << info;
  EXPECT_EQ(XfsField(info, "meta-data", "bigtime"), "0") << info;
  EXPECT_EQ(XfsField(info, "meta-data", "inobtcount"), "0") << info;
  EXPECT_EQ(XfsField(info, "meta-data", "rmapbt"), "0") << info;
  EXPECT_EQ(BlkidUuid(disk.node()), uuid);
  ExpectMounts(disk.node(), "xfs", MountPoint("mnt"));
}

TEST_F(NodeOsMkfsOptionsTest, XfsProfilesPinTheFeatureSetAndKeepTheUuid) {
  LoopDisk& disk = Disk("disk");
  ASSERT_TRUE(disk.ok());
  struct Expected {
    std::string profile, reflink, bigtime, inobtcount;
  };
  // "none" is mkfs.xfs 6.1's own defaults (bigtime and inobtcount on).
  for (const Expected& expected :
       {Expected{"lts_4.19", "0", "0", "0"}, Expected{"lts_5.10", "1", "0", "0"},
        Expected{"lts_5.15", "1", "1", "1"}, Expected{"lts_6.1", "1", "1", "1"},
        Expected{"none", "1", "1", "1"}}) {
    SCOPED_TRACE(expected.profile);
    const std::string uuid = node::NewFilesystemUuid();
    Status made = node::MakeFilesystem(disk.node(), "xfs", true, uuid, limits_, Sizes(0, 512),
                                       expected.profile);
    ASSERT_TRUE(made.ok()) << made.ToString();
    const std::string info = XfsInfo(disk.node());
    EXPECT_EQ(XfsField(info, "meta-data", "reflink"), expected.reflink) << info;
    EXPECT_EQ(XfsField(info, "meta-data", "bigtime"), expected.bigtime) << info;
    EXPECT_EQ(XfsField(info, "meta-data", "inobtcount"), expected.inobtcount) << info;
    EXPECT_EQ(XfsField(info, "meta-data", "isize"), "512") << info;
    EXPECT_EQ(BlkidUuid(disk.node()), uuid);
  }
}

// A config file that cannot be read: the volume is not formatted with another feature set.
TEST_F(NodeOsMkfsOptionsTest, AnUnreadableXfsConfigFileFormatsNothing) {
  LoopDisk& disk = Disk("disk");
  ASSERT_TRUE(disk.ok());
  Status made = node::MakeFilesystem(disk.node(), "xfs", true, node::NewFilesystemUuid(), limits_,
                                     Sizes(0, 512), "/nonexistent/xfs.conf");
  EXPECT_EQ(made.code(), StatusCode::kFailedPrecondition) << made.ToString();
  EXPECT_NE(made.message().find("--xfs-feature-profile"), std::string::npos);
  EXPECT_EQ(BlkidUuid(disk.node()), "") << "nothing was formatted";
}

// A config file (-c options=) goes with the plugin's -m uuid= and the volume's -i size=.
TEST_F(NodeOsMkfsOptionsTest, AnXfsConfigFileProfileWorksWithTheUuidAndOptions) {
  LoopDisk& disk = Disk("disk");
  ASSERT_TRUE(disk.ok());
  const std::string config = MountPoint("conf") + "/old-kernels.conf";
  WriteFile(config,
            "[metadata]\ncrc=1\nfinobt=1\nrmapbt=0\nreflink=0\nbigtime=0\ninobtcount=0\n"
            "[inode]\nsparse=1\nnrext64=0\n");
  const std::string uuid = node::NewFilesystemUuid();
  Status made =
      node::MakeFilesystem(disk.node(), "xfs", false, uuid, limits_, Sizes(4096, 2048), config);
  ASSERT_TRUE(made.ok()) << made.ToString();
  const std::string info = XfsInfo(disk.node());
  EXPECT_EQ(XfsField(info, "meta-data", "reflink"), "0") << info;
  EXPECT_EQ(XfsField(info, "meta-data", "isize"), "2048") << info;
  EXPECT_EQ(BlkidUuid(disk.node()), uuid);
  ExpectMounts(disk.node(), "xfs", MountPoint("mnt"));
}

}  // namespace
}  // namespace oxide::testing
