// The filesystem options (inodeSize, bytesPerInode, numberOfInodes, ext4BigAlloc,
// ext4ClusterSize, fsBlockSize): accepted ranges per filesystem, keys that do not apply, the
// volume_context they travel in, the mkfs arguments they become, and the XFS feature profiles.
// The mkfs results themselves are read back on loop devices in test/node.
#include "csi/filesystem_options.h"

#include <gtest/gtest.h>

#include "config/settings.h"
#include "csi/volume_request.h"

namespace oxide::csi_adapter {
namespace {

using csi::v1::VolumeCapability;
using Strings = std::vector<std::string>;

StringMap Map(std::initializer_list<std::pair<const std::string, std::string>> entries) {
  StringMap map;
  for (const auto& [key, value] : entries)
    map[key] = value;
  return map;
}

google::protobuf::RepeatedPtrField<VolumeCapability> Capabilities(
    std::initializer_list<std::string> fs_types) {
  google::protobuf::RepeatedPtrField<VolumeCapability> capabilities;
  for (const std::string& fs : fs_types) {
    VolumeCapability* capability = capabilities.Add();
    if (fs == "block") {
      capability->mutable_block();
    } else {
      capability->mutable_mount()->set_fs_type(fs);
    }
    capability->mutable_access_mode()->set_mode(
        csi::v1::VolumeCapability_AccessMode::SINGLE_NODE_WRITER);
  }
  return capabilities;
}

// The message names the key, the value and what is accepted.
void ExpectInvalid(const StatusOr<node::FilesystemOptions>& parsed, Strings parts) {
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  for (const std::string& part : parts)
    EXPECT_NE(parsed.status().message().find(part), std::string::npos)
        << "\"" << part << "\" missing from: " << parsed.status().message();
}

TEST(FilesystemOptions, Ext4AcceptsEveryOptionAndCarriesThemCanonically) {
  auto parsed = ParseFilesystemOptions(Map({{"fsBlockSize", "2048"},
                                            {"inodeSize", "512"},
                                            {"bytesPerInode", "0065536"},
                                            {"ext4BigAlloc", "true"},
                                            {"ext4ClusterSize", "32768"}}),
                                       "ext4", "parameter");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->block_size, 2048U);
  EXPECT_EQ(parsed->inode_size, 512U);
  EXPECT_EQ(parsed->bytes_per_inode, 65536U);
  EXPECT_EQ(parsed->bigalloc, true);
  EXPECT_EQ(parsed->cluster_size, 32768U);
  std::map<std::string, std::string> context = FilesystemOptionsContext(*parsed);
  EXPECT_EQ(context, (std::map<std::string, std::string>{{"fsBlockSize", "2048"},
                                                         {"inodeSize", "512"},
                                                         {"bytesPerInode", "65536"},
                                                         {"ext4BigAlloc", "true"},
                                                         {"ext4ClusterSize", "32768"}}));
  // What the node reads back from that volume_context is what the controller checked.
  StringMap round_trip(context.begin(), context.end());
  auto again = ParseFilesystemOptions(round_trip, "ext4", "volume_context");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *parsed);
  EXPECT_EQ(node::MkfsOptionArguments(*parsed, "ext4"),
            (Strings{"-b", "2048", "-I", "512", "-i", "65536", "-O", "bigalloc", "-C", "32768"}));
  auto inodes = ParseFilesystemOptions(Map({{"numberOfInodes", "4096"}}), "ext4", "parameter");
  ASSERT_TRUE(inodes.ok());
  EXPECT_EQ(node::MkfsOptionArguments(*inodes, "ext4"), (Strings{"-N", "4096"}));
}

TEST(FilesystemOptions, Ext4RangesAreEnforcedWithTheKeyValueAndRange) {
  ExpectInvalid(ParseFilesystemOptions(Map({{"fsBlockSize", "8192"}}), "ext4", "parameter"),
                {"parameter fsBlockSize=\"8192\"", "1024, 2048 or 4096"});
  ExpectInvalid(ParseFilesystemOptions(Map({{"fsBlockSize", "3000"}}), "ext4", "parameter"),
                {"fsBlockSize=\"3000\"", "1024, 2048 or 4096"});
  ExpectInvalid(ParseFilesystemOptions(Map({{"inodeSize", "384"}}), "ext4", "parameter"),
                {"inodeSize=\"384\"", "power of two from 128 to 4096"});
  ExpectInvalid(ParseFilesystemOptions(Map({{"inodeSize", "64"}}), "ext4", "parameter"),
                {"inodeSize=\"64\"", "128 to 4096"});
  // The largest inode is the block size.
  ExpectInvalid(ParseFilesystemOptions(Map({{"fsBlockSize", "1024"}, {"inodeSize", "2048"}}),
                                       "ext4", "parameter"),
                {"inodeSize=\"2048\"", "128 to 1024"});
  ExpectInvalid(ParseFilesystemOptions(Map({{"bytesPerInode", "512"}}), "ext4", "parameter"),
                {"bytesPerInode=\"512\"", "1024 to 67108864"});
  ExpectInvalid(ParseFilesystemOptions(Map({{"bytesPerInode", "67108865"}}), "ext4", "parameter"),
                {"bytesPerInode=\"67108865\"", "1024 to 67108864"});
  ExpectInvalid(ParseFilesystemOptions(Map({{"numberOfInodes", "0"}}), "ext4", "parameter"),
                {"numberOfInodes=\"0\"", "1 to 4294967295"});
  ExpectInvalid(
      ParseFilesystemOptions(Map({{"numberOfInodes", "4294967296"}}), "ext4", "parameter"),
      {"numberOfInodes=\"4294967296\"", "1 to 4294967295"});
  ExpectInvalid(ParseFilesystemOptions(Map({{"numberOfInodes", "1000"}, {"bytesPerInode", "4096"}}),
                                       "ext4", "parameter"),
                {"numberOfInodes=\"1000\"", "bytesPerInode"});
  ExpectInvalid(ParseFilesystemOptions(Map({{"ext4BigAlloc", "yes"}}), "ext4", "parameter"),
                {"ext4BigAlloc=\"yes\"", "true or false"});
  ExpectInvalid(ParseFilesystemOptions(Map({{"ext4ClusterSize", "65536"}}), "ext4", "parameter"),
                {"ext4ClusterSize=\"65536\"", "ext4BigAlloc=\"true\""});
  ExpectInvalid(
      ParseFilesystemOptions(Map({{"ext4BigAlloc", "false"}, {"ext4ClusterSize", "65536"}}), "ext4",
                             "parameter"),
      {"ext4ClusterSize=\"65536\"", "ext4BigAlloc=\"true\""});
  ExpectInvalid(ParseFilesystemOptions(Map({{"ext4BigAlloc", "true"}, {"ext4ClusterSize", "2048"}}),
                                       "ext4", "parameter"),
                {"ext4ClusterSize=\"2048\"", "power of two from 4096 to 268435456"});
  ExpectInvalid(
      ParseFilesystemOptions(Map({{"ext4BigAlloc", "true"}, {"ext4ClusterSize", "12288"}}), "ext4",
                             "parameter"),
      {"ext4ClusterSize=\"12288\"", "4096 to 268435456"});
  for (const char* nonsense : {"", "-512", "+512", "512k", "0x200", " 512", "99999999999999999999"})
    ExpectInvalid(ParseFilesystemOptions(Map({{"inodeSize", nonsense}}), "ext4", "volume_context"),
                  {"volume_context inodeSize=", "power of two"});
}

TEST(FilesystemOptions, XfsTakesBlockAndInodeSizesOnly) {
  auto parsed = ParseFilesystemOptions(Map({{"fsBlockSize", "2048"}, {"inodeSize", "1024"}}), "xfs",
                                       "parameter");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(node::MkfsOptionArguments(*parsed, "xfs"),
            (Strings{"-b", "size=2048", "-i", "size=1024"}));
  ExpectInvalid(ParseFilesystemOptions(Map({{"inodeSize", "256"}}), "xfs", "parameter"),
                {"inodeSize=\"256\"", "512 to 2048"});
  ExpectInvalid(ParseFilesystemOptions(Map({{"inodeSize", "4096"}}), "xfs", "parameter"),
                {"inodeSize=\"4096\"", "512 to 2048"});
  // At most half the block size.
  ExpectInvalid(ParseFilesystemOptions(Map({{"fsBlockSize", "1024"}, {"inodeSize", "1024"}}), "xfs",
                                       "parameter"),
                {"inodeSize=\"1024\"", "512 to 512"});
  ExpectInvalid(ParseFilesystemOptions(Map({{"fsBlockSize", "512"}}), "xfs", "parameter"),
                {"fsBlockSize=\"512\"", "1024, 2048 or 4096"});
  ExpectInvalid(ParseFilesystemOptions(Map({{"fsBlockSize", "65536"}}), "xfs", "parameter"),
                {"fsBlockSize=\"65536\"", "page size"});
  for (const char* key : {"bytesPerInode", "numberOfInodes", "ext4ClusterSize"}) {
    ExpectInvalid(ParseFilesystemOptions(Map({{key, "4096"}}), "xfs", "parameter"),
                  {std::string(key) + "=\"4096\" does not apply to xfs", "ext4 only"});
  }
  ExpectInvalid(ParseFilesystemOptions(Map({{"ext4BigAlloc", "false"}}), "xfs", "parameter"),
                {"ext4BigAlloc=\"false\" does not apply to xfs"});
}

TEST(FilesystemOptions, NoneAppliesToABlockVolume) {
  ExpectInvalid(ParseFilesystemOptions(Map({{"inodeSize", "256"}}), "", "volume_context"),
                {"volume_context inodeSize=\"256\"", "block volume"});
  EXPECT_TRUE(ParseFilesystemOptions(Map({{"diskName", "x"}}), "", "volume_context").ok());
}

TEST(FilesystemOptions, CreateVolumeChecksEveryCapability) {
  auto context = CheckFilesystemParameters(Map({{"inodeSize", "1024"}, {"blockSize", "4096"}}),
                                           Capabilities({"xfs", "ext4"}), 4096);
  ASSERT_TRUE(context.ok()) << context.status().ToString();
  EXPECT_EQ(*context, (std::map<std::string, std::string>{{"inodeSize", "1024"}}));
  // An empty fs_type is ext4, the plugin's default.
  EXPECT_TRUE(
      CheckFilesystemParameters(Map({{"bytesPerInode", "8192"}}), Capabilities({""}), 4096).ok());
  auto xfs = CheckFilesystemParameters(Map({{"bytesPerInode", "8192"}}),
                                       Capabilities({"ext4", "xfs"}), 4096);
  ExpectInvalid(xfs.status(), {"bytesPerInode=\"8192\" does not apply to xfs"});
  auto block = CheckFilesystemParameters(Map({{"inodeSize", "512"}}), Capabilities({"block"}), 512);
  ExpectInvalid(block.status(), {"inodeSize=\"512\"", "block volume"});
  // A filesystem block is never smaller than the Oxide disk's block (the device's sector).
  auto small =
      CheckFilesystemParameters(Map({{"fsBlockSize", "1024"}}), Capabilities({"ext4"}), 4096);
  ExpectInvalid(small.status(), {"fsBlockSize=\"1024\"", "blockSize 4096", "4096 to 4096"});
  EXPECT_TRUE(
      CheckFilesystemParameters(Map({{"fsBlockSize", "1024"}}), Capabilities({"ext4"}), 512).ok());
  // Without options: no context entries, for block volumes too.
  auto none = CheckFilesystemParameters(Map({{"blockSize", "512"}}), Capabilities({"block"}), 512);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(FilesystemOptions, ParseParametersLeavesTheOptionsToThisCheck) {
  auto parsed = ParseParameters(Map({{"inodeSize", "512"}, {"blockSize", "512"}}));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->block_size, 512U);
  auto unknown = ParseParameters(Map({{"inodesize", "512"}}));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("inodeSize"), std::string::npos)
      << "the message lists the accepted keys: " << unknown.status().message();
}

TEST(XfsFeatureProfile, BuiltInProfilesPinTheLtsFeatureSets) {
  EXPECT_EQ(*node::XfsFeatureArguments("lts_4.19"),
            (Strings{"-m", "crc=1,finobt=1,rmapbt=0,reflink=0,bigtime=0,inobtcount=0", "-i",
                     "sparse=1,nrext64=0"}));
  EXPECT_EQ(*node::XfsFeatureArguments("lts_5.4"),
            (Strings{"-m", "crc=1,finobt=1,rmapbt=0,reflink=1,bigtime=0,inobtcount=0", "-i",
                     "sparse=1,nrext64=0"}));
  EXPECT_EQ(*node::XfsFeatureArguments("lts_5.10"), *node::XfsFeatureArguments("lts_5.4"));
  EXPECT_EQ(*node::XfsFeatureArguments("lts_6.1"),
            (Strings{"-m", "crc=1,finobt=1,rmapbt=0,reflink=1,bigtime=1,inobtcount=1", "-i",
                     "sparse=1,nrext64=0"}));
  EXPECT_EQ(*node::XfsFeatureArguments("lts_5.15"), *node::XfsFeatureArguments("lts_6.1"));
  EXPECT_TRUE(node::XfsFeatureArguments("none")->empty());
  EXPECT_EQ(*node::XfsFeatureArguments("/etc/hostname"), (Strings{"-c", "options=/etc/hostname"}));
  EXPECT_EQ(node::XfsFeatureArguments("/nonexistent/profile.conf").status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(XfsFeatureProfile, TheFlagAcceptsWhatTheFormatterKnows) {
  auto with = [](const std::string& value) {
    return ParseCommandLine({"--endpoint=unix:///csi/csi.sock", "--xfs-feature-profile=" + value},
                            {{"OXIDE_HOST", "https://oxide.example.com"},
                             {"OXIDE_TOKEN", "oxide-token-for-the-test"},
                             {"OXIDE_PROJECT", "k8s"},
                             {"OXIDE_INSTANCE_ID", "6f0c4e3b-1d2a-4c5b-9e8f-0a1b2c3d4e5f"}});
  };
  for (const std::string& name : node::XfsFeatureProfileNames()) {
    auto parsed = with(name);
    ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.status().ToString();
    EXPECT_EQ(parsed->settings.xfs_feature_profile, name);
    EXPECT_TRUE(node::IsValidXfsFeatureProfile(name));
  }
  EXPECT_TRUE(with("none").ok());
  EXPECT_TRUE(with("/etc/oxide/xfs.conf").ok());
  EXPECT_EQ(Settings().xfs_feature_profile, node::kDefaultXfsFeatureProfile);
  auto bad = with("lts_3.10");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("xfs-feature-profile"), std::string::npos);
  EXPECT_NE(bad.status().message().find("lts_5.4"), std::string::npos);
  EXPECT_FALSE(with("relative/xfs.conf").ok());
}

}  // namespace
}  // namespace oxide::csi_adapter
