// The real plugin binary in node mode learning its instance id from this node's Node object: the
// stand-in Kubernetes API server (support/fake_kubernetes_api.h; the real one cannot run in the
// test environment) serves the Node; the plugin gets only NODE_NAME and the in-cluster variables,
// as the DaemonSet gives them. NodeGetInfo then reports the instance id, through a real socket.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>

#include "csi.grpc.pb.h"
#include "support/fake_kubernetes_api.h"
#include "support/metrics_scrape.h"
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
    // These tests count the identity's reads of the Node; the startup taint removal's own
    // requests are startup_taint_process_test.cc's.
    setup_.args.push_back("--remove-startup-taint=false");
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

// At first boot the Node carries the cloud controller manager's uninitialized taint and no
// providerID yet: the plugin must not serve (the registrar would register "name:worker-1", an id
// that changes at the next restart) until the providerID is there.
TEST_F(NodeIdentityProcessTest, ATaintedNodeServesOnlyOnceItsProviderIdIsSet) {
  api_.SetAnswer(
      "worker-1",
      {.status = 200, .body = FakeKubernetesApi::NodeJson("worker-1", "", true), .never = false});
  setup_.args.push_back("--metrics-address=127.0.0.1:0");
  PluginProcess plugin(setup_.args, setup_.env, setup_.log_path());
  ASSERT_TRUE(plugin.WaitForLog(
      "waiting for the cloud controller manager to set spec.providerID on Node worker-1; taint "
      "node.cloudprovider.kubernetes.io/uninitialized present"))
      << plugin.Log();
  // A re-read (a second later) still finds the taint: still no socket, and no name taken.
  ASSERT_TRUE(api_.WaitForRequests(2));
  EXPECT_FALSE(std::filesystem::exists(setup_.socket_path()));
  EXPECT_EQ(plugin.Log().find("name:worker-1"), std::string::npos) << plugin.Log();
  // Liveness (/healthz) sees a plugin that waits, not a dead one.
  EXPECT_EQ(HealthzOf(plugin).status, 200) << plugin.Log();

  api_.SetAnswer("worker-1",
                 {.status = 200,
                  .body = FakeKubernetesApi::NodeJson("worker-1", std::string("oxide://") + kUuid),
                  .never = false});
  ASSERT_TRUE(plugin.WaitServing(setup_.socket_path())) << plugin.Log();
  auto stub = csi::v1::Node::NewStub(UnixChannel(setup_.socket_path()));
  grpc::ClientContext context;
  csi::v1::NodeGetInfoResponse info;
  ASSERT_TRUE(stub->NodeGetInfo(&context, {}, &info).ok());
  EXPECT_EQ(info.node_id(), kUuid);
  EXPECT_EQ(plugin.Log().find("name:worker-1"), std::string::npos) << plugin.Log();
}

// --wait-for-provider-id (here from its environment variable) waits without the taint too; a
// SIGTERM during the wait ends it cleanly, also while a read of the Node is unanswered.
TEST_F(NodeIdentityProcessTest, SigtermDuringTheWaitExitsCleanly) {
  api_.SetAnswer(
      "worker-1",
      {.status = 200, .body = FakeKubernetesApi::NodeJson("worker-1", ""), .never = false});
  setup_.env["OXIDE_CSI_WAIT_FOR_PROVIDER_ID"] = "true";
  PluginProcess plugin(setup_.args, setup_.env, setup_.log_path());
  ASSERT_TRUE(plugin.WaitForLog(
      "waiting for the cloud controller manager to set spec.providerID on Node worker-1; "
      "--wait-for-provider-id is set"))
      << plugin.Log();
  api_.SetAnswer("worker-1", {.status = 0, .body = "", .never = true});
  ASSERT_TRUE(api_.WaitForRequests(2));  // the re-read now hangs (for up to 10 s)
  plugin.Signal(SIGTERM);
  EXPECT_EQ(plugin.WaitExit(std::chrono::seconds(5)), 0) << plugin.Log();
  EXPECT_NE(plugin.Log().find("signal received while waiting for spec.providerID"),
            std::string::npos)
      << plugin.Log();
  EXPECT_NE(plugin.Log().find("oxide-csi-plugin exited cleanly"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(setup_.socket_path()));
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
