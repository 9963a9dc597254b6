// The real plugin binary on a real unix socket, called through a real gRPC client: every
// Identity RPC in every mode, and Probe following the state database's health.
#include <gtest/gtest.h>
#include <unistd.h>

#include "csi.grpc.pb.h"
#include "support/plugin_setup.h"

namespace oxide::testing {
namespace {

using csi::v1::PluginCapability;

std::vector<int> ServiceCapabilities(csi::v1::Identity::Stub& stub) {
  grpc::ClientContext context;
  csi::v1::GetPluginCapabilitiesResponse response;
  grpc::Status status = stub.GetPluginCapabilities(&context, {}, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  std::vector<int> types;
  for (const auto& capability : response.capabilities()) {
    if (capability.has_service()) types.push_back(capability.service().type());
  }
  return types;
}

class IdentityInMode : public ::testing::TestWithParam<std::string> {};

TEST_P(IdentityInMode, AnswersAllThreeRpcs) {
  PluginSetup setup(GetParam());
  auto plugin = setup.Start();
  auto stub = csi::v1::Identity::NewStub(UnixChannel(setup.socket_path()));

  grpc::ClientContext info_context;
  csi::v1::GetPluginInfoResponse info;
  ASSERT_TRUE(stub->GetPluginInfo(&info_context, {}, &info).ok());
  EXPECT_EQ(info.name(), "csi.oxide.computer");
  EXPECT_EQ(info.vendor_version(), OXIDE_CSI_VERSION);
  EXPECT_FALSE(info.vendor_version().empty());
  EXPECT_EQ(info.manifest().at("mode"), GetParam());

  std::vector<int> services = ServiceCapabilities(*stub);
  bool controller = GetParam() != "node";
  EXPECT_EQ(
      std::count(services.begin(), services.end(), PluginCapability::Service::CONTROLLER_SERVICE),
      controller ? 1 : 0);
  EXPECT_EQ(std::count(services.begin(), services.end(),
                       PluginCapability::Service::VOLUME_ACCESSIBILITY_CONSTRAINTS),
            1);

  grpc::ClientContext probe_context;
  csi::v1::ProbeResponse probe;
  grpc::Status status = stub->Probe(&probe_context, {}, &probe);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_TRUE(probe.has_ready());
  EXPECT_TRUE(probe.ready().value());
}

INSTANTIATE_TEST_SUITE_P(Modes, IdentityInMode, ::testing::Values("controller", "node", "all"));

TEST(Identity, DriverNameCanBeOverridden) {
  PluginSetup setup("node");
  setup.args.push_back("--driver-name=csi.example.org");
  auto plugin = setup.Start();
  auto stub = csi::v1::Identity::NewStub(UnixChannel(setup.socket_path()));
  grpc::ClientContext context;
  csi::v1::GetPluginInfoResponse info;
  ASSERT_TRUE(stub->GetPluginInfo(&context, {}, &info).ok());
  EXPECT_EQ(info.name(), "csi.example.org");
}

TEST(Identity, ProbeFailsWithTheReasonWhenTheStateDatabaseIsGone) {
  PluginSetup setup("node");
  auto plugin = setup.Start();
  auto stub = csi::v1::Identity::NewStub(UnixChannel(setup.socket_path()));
  ASSERT_EQ(unlink(setup.state_db().c_str()), 0);
  grpc::ClientContext context;
  csi::v1::ProbeResponse probe;
  grpc::Status status = stub->Probe(&context, {}, &probe);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(status.error_message().find("state database"), std::string::npos)
      << status.error_message();
  EXPECT_NE(status.error_message().find("removed"), std::string::npos) << status.error_message();
}

TEST(Identity, ManyConcurrentCallsAllAnswered) {
  PluginSetup setup("all");
  auto plugin = setup.Start();
  auto channel = UnixChannel(setup.socket_path());
  std::vector<std::thread> callers;
  std::atomic<int> ok{0};
  for (int t = 0; t < 16; ++t) {
    callers.emplace_back([&] {
      auto stub = csi::v1::Identity::NewStub(channel);
      for (int i = 0; i < 100; ++i) {
        grpc::ClientContext context;
        csi::v1::ProbeResponse probe;
        if (stub->Probe(&context, {}, &probe).ok() && probe.ready().value()) ++ok;
      }
    });
  }
  for (auto& caller : callers)
    caller.join();
  EXPECT_EQ(ok.load(), 1600);
}

}  // namespace
}  // namespace oxide::testing
