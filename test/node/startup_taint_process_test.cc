// The real plugin binary in node mode removing the startup taint csi.oxide.computer/agent-not-ready
// from its Node once it serves and the CSINode lists the driver, against the stand-in Kubernetes
// API server (support/fake_kubernetes_api.h; the real one cannot run in the test environment)
// replaying a recorded kube-apiserver exchange (recorded_exchange.h). The tests wait for the
// requests and log lines that mark each step, never for time.
#include <gtest/gtest.h>

#include <csignal>
#include <nlohmann/json.hpp>

#include "recorded_exchange.h"
#include "support/fake_kubernetes_api.h"
#include "support/plugin_setup.h"

namespace oxide::testing {
namespace {

using nlohmann::json;
using Request = FakeKubernetesApi::Request;

constexpr const char* kRemovedLine =
    "removed the startup taint csi.oxide.computer/agent-not-ready from Node worker-1";

class StartupTaintProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The instance id comes from OXIDE_INSTANCE_ID: every request the server sees is the taint
    // removal's.
    setup_.env["NODE_NAME"] = "worker-1";
    setup_.env["KUBERNETES_SERVICE_HOST"] = api_.host();
    setup_.env["KUBERNETES_SERVICE_PORT"] = api_.port();
    setup_.args.push_back("--kubernetes-credentials-dir=" + api_.credentials_dir());
  }

  static int Count(const std::vector<Request>& log, const std::string& method,
                   const std::string& path) {
    int n = 0;
    for (const Request& r : log)
      n += (r.method == method && r.path == path) ? 1 : 0;
    return n;
  }
  static std::vector<Request> Patches(const std::vector<Request>& log) {
    std::vector<Request> patches;
    for (const Request& r : log) {
      if (r.method == "PATCH") patches.push_back(r);
    }
    return patches;
  }
  // Exactly the recorded request: method, path, Content-Type and body (as JSON).
  static void ExpectRecorded(const Request& request, const std::string& name) {
    const json& recorded = RecordedExchange()[name];
    EXPECT_EQ(request.method, recorded["method"]);
    EXPECT_EQ(request.path, recorded["path"]);
    EXPECT_EQ(request.content_type, recorded["content_type"]);
    EXPECT_EQ(json::parse(request.body, nullptr, false), recorded["body"]) << request.body;
  }
  // A recorded 200 patch answer, after which the Node reads as patched.
  static FakeKubernetesApi::Answer Patched(const std::string& name) {
    FakeKubernetesApi::Answer answer = RecordedAnswer(name);
    answer.next_node = answer.body;
    return answer;
  }

  FakeKubernetesApi api_;
  PluginSetup setup_{"node"};
};

constexpr const char* kNode = "/api/v1/nodes/worker-1";
constexpr const char* kCsiNode = "/apis/storage.k8s.io/v1/csinodes/worker-1";

TEST_F(StartupTaintProcessTest, TheTaintComesOffOnlyOnceTheCsiNodeListsTheDriver) {
  api_.SetAnswer("worker-1", RecordedObject("node_before"));
  api_.SetCsiNodeAnswer("worker-1", RecordedObject("csinode_without_driver"));
  auto plugin = setup_.Start();  // serves at once: the removal does not hold up the socket
  // Two passes (the second a second later) find the driver missing: no patch.
  ASSERT_TRUE(api_.WaitForLog([](const std::vector<Request>& log) {
    return Count(log, "GET", kCsiNode) >= 2;
  })) << plugin->Log();
  EXPECT_TRUE(Patches(api_.Log()).empty());
  EXPECT_NE(plugin->Log().find("waiting for node-driver-registrar to register csi.oxide.computer "
                               "on Node worker-1"),
            std::string::npos)
      << plugin->Log();

  // The registrar registers the driver: one patch takes off that taint alone.
  api_.QueuePatchAnswer("worker-1", Patched("patch_response_ok"));
  api_.SetCsiNodeAnswer("worker-1", RecordedObject("csinode_with_driver"));
  ASSERT_TRUE(plugin->WaitForLog(kRemovedLine)) << plugin->Log();
  std::vector<Request> patches = Patches(api_.Log());
  ASSERT_EQ(patches.size(), 1U);
  ExpectRecorded(patches[0], "patch_request");
  EXPECT_EQ(api_.last_authorization(), std::string("Bearer ") + FakeKubernetesApi::kToken);
  EXPECT_EQ(plugin->Log().find(FakeKubernetesApi::kToken), std::string::npos);
}

TEST_F(StartupTaintProcessTest, ANodeWithoutTheTaintIsReadOnceAndNeverPatched) {
  api_.SetAnswer("worker-1", RecordedObject("node_without_taint"));
  auto plugin = setup_.Start();
  ASSERT_TRUE(plugin->WaitForLog("Node worker-1 does not carry the startup taint"))
      << plugin->Log();
  std::vector<Request> log = api_.Log();
  ASSERT_EQ(log.size(), 1U);
  EXPECT_EQ(log[0].method, "GET");
  EXPECT_EQ(log[0].path, kNode);
}

TEST_F(StartupTaintProcessTest, AConflictOnTheFirstPatchRereadsAndRetries) {
  api_.SetAnswer("worker-1", RecordedObject("node_before"));
  api_.SetCsiNodeAnswer("worker-1", RecordedObject("csinode_with_driver"));
  // Someone adds a taint between the plugin's read and its patch: the `test` op fails (422).
  FakeKubernetesApi::Answer refused = RecordedAnswer("patch_response_test_failed");
  refused.next_node = RecordedExchange()["node_changed_meanwhile"].dump();
  api_.QueuePatchAnswer("worker-1", refused);
  api_.QueuePatchAnswer("worker-1", Patched("patch_response_ok_after_change"));
  auto plugin = setup_.Start();
  ASSERT_TRUE(plugin->WaitForLog(kRemovedLine)) << plugin->Log();
  std::vector<Request> log = api_.Log();
  std::vector<Request> patches = Patches(log);
  ASSERT_EQ(patches.size(), 2U);
  ExpectRecorded(patches[0], "patch_request");
  // Re-read: the new taint is kept, and tested for.
  ExpectRecorded(patches[1], "patch_request_after_change");
  EXPECT_EQ(Count(log, "GET", kNode), 2);
  EXPECT_NE(plugin->Log().find("changed while the startup taint was being removed"),
            std::string::npos)
      << plugin->Log();
}

TEST_F(StartupTaintProcessTest, SigtermWhileTheApiServerDoesNotAnswerExitsCleanly) {
  api_.SetAnswer("worker-1", {.status = 0, .body = "", .never = true});
  auto plugin = setup_.Start();
  ASSERT_TRUE(api_.WaitForRequests(1));  // the pass now hangs (for up to 10 s)
  plugin->Signal(SIGTERM);
  EXPECT_EQ(plugin->WaitExit(std::chrono::seconds(5)), 0) << plugin->Log();
  EXPECT_NE(plugin->Log().find("oxide-csi-plugin exited cleanly"), std::string::npos);
}

TEST_F(StartupTaintProcessTest, TurnedOffItSendsNothing) {
  setup_.args.push_back("--remove-startup-taint=false");
  setup_.args.push_back("--log-level=debug");
  api_.SetAnswer("worker-1", RecordedObject("node_before"));
  auto plugin = setup_.Start();
  ASSERT_TRUE(
      plugin->WaitForLog("--remove-startup-taint=false: the startup taint is left to others"))
      << plugin->Log();
  plugin->Signal(SIGTERM);
  EXPECT_EQ(plugin->WaitExit(std::chrono::seconds(5)), 0) << plugin->Log();
  EXPECT_EQ(api_.requests(), 0);
}

}  // namespace
}  // namespace oxide::testing
