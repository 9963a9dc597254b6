// The filesystem options of CreateVolume through the real plugin and oxide-sim: valid options
// come back in the volume's volume_context (what the node reads at NodeStageVolume); options out
// of range, options that do not apply to the requested fs type or to a block volume are
// INVALID_ARGUMENT naming the key, the value and what is accepted, and no disk is made. The
// options are not recorded with the disk: a repeat of a finished volume answers with its own.
#include "controller_fixture.h"

namespace oxide::testing {
namespace {

using grpc::StatusCode;
using Mode = csi::v1::VolumeCapability_AccessMode;

csi::v1::CreateVolumeRequest WithOptions(csi::v1::CreateVolumeRequest request,
                                         const std::map<std::string, std::string>& parameters) {
  request.mutable_parameters()->insert(parameters.begin(), parameters.end());
  return request;
}

csi::v1::VolumeCapability Capability(const std::string& fs_type) {
  csi::v1::VolumeCapability capability;
  if (fs_type == "block") {
    capability.mutable_block();
  } else {
    capability.mutable_mount()->set_fs_type(fs_type);
  }
  capability.mutable_access_mode()->set_mode(Mode::SINGLE_NODE_WRITER);
  return capability;
}

TEST_F(ControllerTest, FilesystemOptionsTravelInTheVolumeContext) {
  csi::v1::CreateVolumeRequest request =
      WithOptions(CreateRequest("pvc-fs-options"), {{"inodeSize", "0512"},
                                                    {"bytesPerInode", "8192"},
                                                    {"ext4BigAlloc", "true"},
                                                    {"ext4ClusterSize", "65536"},
                                                    {"fsBlockSize", "4096"}});
  csi::v1::CreateVolumeResponse response;
  grpc::Status status = Create(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const auto& context = response.volume().volume_context();
  EXPECT_EQ(context.at("inodeSize"), "512");
  EXPECT_EQ(context.at("bytesPerInode"), "8192");
  EXPECT_EQ(context.at("ext4BigAlloc"), "true");
  EXPECT_EQ(context.at("ext4ClusterSize"), "65536");
  EXPECT_EQ(context.at("fsBlockSize"), "4096");
  EXPECT_EQ(context.count("diskName"), 1U);
  // The identical retry gets the same volume and context.
  csi::v1::CreateVolumeResponse again;
  ASSERT_TRUE(Create(request, &again).ok());
  EXPECT_EQ(again.volume().volume_id(), response.volume().volume_id());
  EXPECT_EQ(again.volume().volume_context().at("inodeSize"), "512");
  EXPECT_EQ(CountSimRequests("POST", "disk_create"), 1);
  // The options are not a property of the Oxide disk (nothing is formatted before
  // NodeStageVolume, and Oxide is the only record of a volume): a finished volume asked for
  // again with other options is compatible and answers with the options of that request.
  csi::v1::CreateVolumeRequest other = request;
  (*other.mutable_parameters())["inodeSize"] = "1024";
  ASSERT_TRUE(Create(other, &again).ok());
  EXPECT_EQ(again.volume().volume_id(), response.volume().volume_id());
  EXPECT_EQ(again.volume().volume_context().at("inodeSize"), "1024");
  EXPECT_EQ(CountSimRequests("POST", "disk_create"), 1);

  // XFS takes fsBlockSize and inodeSize; a volume without options carries none.
  csi::v1::CreateVolumeRequest xfs =
      WithOptions(CreateRequest("pvc-fs-xfs"), {{"inodeSize", "1024"}, {"fsBlockSize", "4096"}});
  *xfs.mutable_volume_capabilities(0) = Capability("xfs");
  ASSERT_TRUE(Create(xfs, &response).ok());
  EXPECT_EQ(response.volume().volume_context().at("inodeSize"), "1024");
  ASSERT_TRUE(Create(CreateRequest("pvc-fs-none"), &response).ok());
  EXPECT_EQ(response.volume().volume_context_size(), 2) << "diskName and diskType only";
}

TEST_F(ControllerTest, BadFilesystemOptionsAreInvalidArgumentNamingKeyValueAndRange) {
  struct Case {
    std::string fs_type;
    std::map<std::string, std::string> parameters;
    std::vector<std::string> message_parts;
  };
  const std::vector<Case> cases = {
      {"ext4", {{"inodeSize", "100"}}, {"inodeSize=\"100\"", "power of two from 128 to 4096"}},
      {"", {{"inodeSize", "8192"}}, {"inodeSize=\"8192\"", "128 to 4096"}},  // "" is ext4
      {"ext4",
       {{"fsBlockSize", "1024"}, {"inodeSize", "2048"}, {"blockSize", "512"}},
       {"inodeSize=\"2048\"", "128 to 1024"}},
      {"ext4", {{"fsBlockSize", "8192"}}, {"fsBlockSize=\"8192\"", "1024, 2048 or 4096"}},
      {"ext4", {{"bytesPerInode", "100"}}, {"bytesPerInode=\"100\"", "1024 to 67108864"}},
      {"ext4", {{"numberOfInodes", "-5"}}, {"numberOfInodes=\"-5\"", "1 to 4294967295"}},
      {"ext4",
       {{"numberOfInodes", "5000"}, {"bytesPerInode", "4096"}},
       {"numberOfInodes=\"5000\"", "bytesPerInode"}},
      {"ext4", {{"ext4BigAlloc", "on"}}, {"ext4BigAlloc=\"on\"", "true or false"}},
      {"ext4", {{"ext4ClusterSize", "65536"}}, {"ext4ClusterSize=\"65536\"", "ext4BigAlloc"}},
      {"ext4",
       {{"ext4BigAlloc", "true"}, {"ext4ClusterSize", "1000"}},
       {"ext4ClusterSize=\"1000\"", "power of two from 4096 to 268435456"}},
      {"xfs", {{"inodeSize", "256"}}, {"inodeSize=\"256\"", "512 to 2048"}},
      {"xfs", {{"fsBlockSize", "512"}}, {"fsBlockSize=\"512\"", "1024, 2048 or 4096"}},
      {"xfs", {{"bytesPerInode", "8192"}}, {"bytesPerInode=\"8192\" does not apply to xfs"}},
      {"xfs", {{"numberOfInodes", "8192"}}, {"numberOfInodes=\"8192\" does not apply to xfs"}},
      {"xfs", {{"ext4BigAlloc", "true"}}, {"ext4BigAlloc=\"true\" does not apply to xfs"}},
      {"block", {{"inodeSize", "512"}}, {"inodeSize=\"512\"", "block volume"}},
      // A filesystem block is never smaller than the Oxide disk's (4096 unless blockSize says).
      {"ext4", {{"fsBlockSize", "2048"}}, {"fsBlockSize=\"2048\"", "blockSize 4096"}},
  };
  int n = 0;
  for (const Case& c : cases) {
    csi::v1::CreateVolumeRequest request =
        WithOptions(CreateRequest("pvc-bad-fs-" + std::to_string(n++)), c.parameters);
    *request.mutable_volume_capabilities(0) = Capability(c.fs_type);
    grpc::Status status = Create(request);
    EXPECT_EQ(status.error_code(), StatusCode::INVALID_ARGUMENT)
        << c.fs_type << ": " << status.error_message();
    for (const std::string& part : c.message_parts) {
      EXPECT_NE(status.error_message().find(part), std::string::npos)
          << "\"" << part << "\" not in: " << status.error_message();
    }
  }
  // A key for ext4 with an ext4 and an xfs capability: it must apply to both.
  csi::v1::CreateVolumeRequest both =
      WithOptions(CreateRequest("pvc-bad-fs-both"), {{"bytesPerInode", "8192"}});
  *both.add_volume_capabilities() = Capability("xfs");
  ExpectCode(Create(both), StatusCode::INVALID_ARGUMENT, "does not apply to xfs");
  EXPECT_EQ(CountSimRequests("POST", "disk_create"), 0) << "no disk for a refused request";
}

TEST_F(ControllerTest, ValidateVolumeCapabilitiesJudgesFilesystemOptions) {
  csi::v1::Volume volume = MustCreate("pvc-validate-fs");
  csi::v1::ValidateVolumeCapabilitiesRequest request;
  request.set_volume_id(volume.volume_id());
  *request.add_volume_capabilities() = Capability("xfs");
  (*request.mutable_parameters())["inodeSize"] = "1024";
  csi::v1::ValidateVolumeCapabilitiesResponse response;
  ASSERT_TRUE(controller_->ValidateVolumeCapabilities(Call().get(), request, &response).ok());
  EXPECT_TRUE(response.has_confirmed()) << response.message();
  (*request.mutable_parameters())["bytesPerInode"] = "8192";
  response.Clear();
  ASSERT_TRUE(controller_->ValidateVolumeCapabilities(Call().get(), request, &response).ok());
  EXPECT_FALSE(response.has_confirmed());
  EXPECT_NE(response.message().find("bytesPerInode=\"8192\" does not apply to xfs"),
            std::string::npos)
      << response.message();
}

}  // namespace
}  // namespace oxide::testing
