// The Oxide token and CSI secret fields never appear in logs, errors or --help, even at debug.
#include <gtest/gtest.h>

#include "csi.grpc.pb.h"
#include "support/plugin_setup.h"

namespace oxide::testing {
namespace {

TEST(Secrets, NeitherTheTokenNorCsiSecretsReachTheLog) {
  const std::string csi_secret = "csi-secret-value-7a7a7a";
  for (const char* format : {"text", "json"}) {
    PluginSetup setup("all");
    setup.args.push_back("--log-level=debug");
    setup.args.push_back(std::string("--log-format=") + format);
    auto plugin = setup.Start();
    auto channel = UnixChannel(setup.socket_path());
    {
      auto controller = csi::v1::Controller::NewStub(channel);
      grpc::ClientContext context;
      csi::v1::CreateVolumeRequest request;
      request.set_name("pvc-secret-test");
      (*request.mutable_secrets())["token"] = csi_secret;
      (*request.mutable_secrets())["oxide"] = kTestToken;
      csi::v1::CreateVolumeResponse response;
      grpc::Status status = controller->CreateVolume(&context, request, &response);
      EXPECT_EQ(status.error_message().find(csi_secret), std::string::npos);
      auto node = csi::v1::Node::NewStub(channel);
      grpc::ClientContext node_context;
      csi::v1::NodeStageVolumeRequest stage;
      (*stage.mutable_secrets())["k"] = csi_secret;
      csi::v1::NodeStageVolumeResponse stage_response;
      (void)node->NodeStageVolume(&node_context, stage, &stage_response);
    }
    plugin->Signal(SIGTERM);
    EXPECT_EQ(plugin->WaitExit(), 0);
    std::string log = plugin->Log();
    EXPECT_NE(log.find("pvc-secret-test"), std::string::npos) << "debug request log expected";
    EXPECT_NE(log.find("[REDACTED]"), std::string::npos) << log;
    EXPECT_EQ(log.find(csi_secret), std::string::npos) << log;
    EXPECT_EQ(log.find(kTestToken), std::string::npos) << log;
  }
}

TEST(Secrets, TheTokenIsNotInHelpOrStartupErrors) {
  std::map<std::string, std::string> env = {{"OXIDE_TOKEN", kTestToken}};
  ProcessResult help = RunProgram(PluginBinary(), {"--help"}, env);
  EXPECT_EQ(help.out.find(kTestToken), std::string::npos);
  ProcessResult error =
      RunProgram(PluginBinary(), {"--endpoint=/tmp/x.sock", "--mode=controller"}, env);
  EXPECT_EQ(error.exit_code, 2);
  EXPECT_EQ(error.err.find(kTestToken), std::string::npos) << error.err;
  ProcessResult flag = RunProgram(
      PluginBinary(), {"--endpoint=/tmp/x.sock", std::string("--oxide-token=") + kTestToken}, env);
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_EQ(flag.err.find(kTestToken), std::string::npos) << flag.err;
}

}  // namespace
}  // namespace oxide::testing
