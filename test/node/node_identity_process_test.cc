// The real plugin binary in node mode learning its instance id from this node's Node object: the
// stand-in Kubernetes API server (support/fake_kubernetes_api.h; the real one cannot run in the
// test environment) serves the Node; the plugin gets only NODE_NAME and the in-cluster variables,
// as the DaemonSet gives them. NodeGetInfo then reports the instance id, through a real socket.
#include <gtest/gtest.h>

#include <algorithm>

#include "csi.grpc.pb.h"
#include "support/fake_kubernetes_api.h"
#include "support/plugin_setup.h"

namespace oxide::testing {
namespace {

constexpr const char* kUuid = "0e2d9c1a-5b4f-4a3e-8d7c-6b5a4f3e2d1c";

class NodeIdentityProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setup_.env.erase("OXIDE_INSTANCE_ID");
    setup_.env["NODE_NAME"] = "worker-1";
    setup_.env["KUBERNETES_SERVICE_HOST"] = api_.host();
    setup_.env["KUBERNETES_SERVICE_PORT"] = api_.port();
    setup_.args.push_back("--kubernetes-credentials-dir=" + api_.credentials_dir());
  }

  FakeKubernetesApi api_;
  PluginSetup setup_{"node"};
};

TEST_F(NodeIdentityProcessTest, NodeGetInfoReportsTheInstanceOfTheNodesProviderId) {
  api_.SetAnswer("worker-1",
                 {.status = 200,
                  .body = FakeKubernetesApi::NodeJson("worker-1", std::string("oxide://") + kUuid),
                  .never = false});
  auto plugin = setup_.Start();
  auto stub = csi::v1::Node::NewStub(UnixChannel(setup_.socket_path()));
  grpc::ClientContext context;
  csi::v1::NodeGetInfoResponse info;
  grpc::Status status = stub->NodeGetInfo(&context, {}, &info);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(info.node_id(), kUuid);
  // The topology is the same whichever source answered.
  EXPECT_EQ(info.accessible_topology().segments().at("topology.csi.oxide.computer/zone"),
            "default");
  ASSERT_TRUE(plugin->WaitForLog("node service ready"));
  EXPECT_NE(plugin->Log().find("instance_id_source=kubernetes"), std::string::npos)
      << plugin->Log();
  EXPECT_EQ(plugin->Log().find(FakeKubernetesApi::kToken), std::string::npos);
  EXPECT_EQ(api_.requests(), 1);
}

TEST_F(NodeIdentityProcessTest, WithoutProviderIdTheNodeIdIsTheInstanceName) {
  api_.SetAnswer(
      "worker-1",
      {.status = 200, .body = FakeKubernetesApi::NodeJson("worker-1", ""), .never = false});
  auto plugin = setup_.Start();
  auto stub = csi::v1::Node::NewStub(UnixChannel(setup_.socket_path()));
  grpc::ClientContext context;
  csi::v1::NodeGetInfoResponse info;
  ASSERT_TRUE(stub->NodeGetInfo(&context, {}, &info).ok());
  EXPECT_EQ(info.node_id(), "name:worker-1");
}

TEST_F(NodeIdentityProcessTest, WhenNoSourceAnswersTheStartStopsWithOneLine) {
  api_.SetAnswer("worker-1", {.status = 403, .body = "{}", .never = false});
  ProcessResult result = RunProgram(PluginBinary(), setup_.args, setup_.env);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_NE(result.err.find("cannot start: no Oxide instance id: env: skipped: OXIDE_INSTANCE_ID "
                            "is not set; file: skipped: no --instance-metadata-file; kubernetes: "
                            "GET /api/v1/nodes/worker-1: HTTP 403"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(result.err.find(FakeKubernetesApi::kToken), std::string::npos);
}

}  // namespace
}  // namespace oxide::testing
