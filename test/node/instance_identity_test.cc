// The node's instance id sources (node/instance_identity.h) and the Kubernetes Node reader
// (node/kubernetes_node_reader.h) against a stand-in Kubernetes API server: an HTTPS server on
// 127.0.0.1 (support/fake_kubernetes_api.h), because the real API server cannot run in the test
// environment. Real TLS (a certificate made by the openssl CLI), real libcurl, real files.
#include "node/instance_identity.h"

#include <gtest/gtest.h>

#include "node/instance_metadata.h"
#include "node/kubernetes_node_reader.h"
#include "support/fake_kubernetes_api.h"
#include "util/log.h"

namespace oxide::node {
namespace {

using testing::FakeKubernetesApi;
using testing::TempDir;
using testing::WriteFile;

constexpr const char* kUuid = "6f0c4e3b-1d2a-4c5b-9e8f-0a1b2c3d4e5f";
constexpr const char* kOtherUuid = "0e2d9c1a-5b4f-4a3e-8d7c-6b5a4f3e2d1c";

class InstanceIdentityTest : public ::testing::Test {
 protected:
  // A node with only the kubernetes source configured, pointing at the stand-in server.
  Settings NodeSettings(const std::string& node_name) const {
    Settings s;
    s.mode = Mode::kNode;
    s.node_name = node_name;
    s.kubernetes_host = api_.host();
    s.kubernetes_port = api_.port();
    s.kubernetes_credentials_dir = api_.credentials_dir();
    s.kubernetes_timeout_seconds = 5;
    return s;
  }
  KubernetesApiOptions Options() const {
    return {.host = api_.host(),
            .port = api_.port(),
            .credentials_dir = api_.credentials_dir(),
            .connect_timeout = std::chrono::seconds(5),
            .total_timeout = std::chrono::seconds(5)};
  }
  static void ExpectFailure(const StatusOr<NodeIdentity>& identity,
                            const std::vector<std::string>& parts) {
    ASSERT_FALSE(identity.ok()) << identity->node_id;
    for (const std::string& part : parts) {
      EXPECT_NE(identity.status().message().find(part), std::string::npos)
          << "missing \"" << part << "\" in: " << identity.status().message();
    }
    EXPECT_EQ(identity.status().message().find(FakeKubernetesApi::kToken), std::string::npos);
  }

  FakeKubernetesApi api_;
};

TEST_F(InstanceIdentityTest, ANodeWithAnOxideProviderIdGivesItsInstanceUuid) {
  api_.SetAnswer("worker-1", {.status = 200,
                              .body = FakeKubernetesApi::NodeJson(
                                  "worker-1", "oxide://6F0C4E3B-1D2A-4C5B-9E8F-0A1B2C3D4E5F"),
                              .never = false});
  StatusOr<NodeIdentity> identity = ResolveNodeIdentity(NodeSettings("worker-1"));
  ASSERT_TRUE(identity.ok()) << identity.status().ToString();
  EXPECT_EQ(identity->node_id, kUuid);
  EXPECT_EQ(identity->source, "kubernetes");
  // The service account's token went to the API server, and nowhere else.
  EXPECT_EQ(api_.last_authorization(), std::string("Bearer ") + FakeKubernetesApi::kToken);
  EXPECT_EQ(log::Redact(FakeKubernetesApi::kToken), "[REDACTED]");
}

TEST_F(InstanceIdentityTest, ANodeWithoutProviderIdGivesItsNameAsAnInstanceName) {
  api_.SetAnswer(
      "worker-2",
      {.status = 200, .body = FakeKubernetesApi::NodeJson("worker-2", ""), .never = false});
  StatusOr<NodeIdentity> identity = ResolveNodeIdentity(NodeSettings("worker-2"));
  ASSERT_TRUE(identity.ok()) << identity.status().ToString();
  EXPECT_EQ(identity->node_id, "name:worker-2");
  EXPECT_EQ(identity->source, "kubernetes");
}

// At first boot the cloud controller manager has not set spec.providerID yet and the Node carries
// its uninitialized taint: the name would be an id that changes at the next restart, so the
// source says "wait" (node/provider_id_wait.h) instead of answering with it.
TEST_F(InstanceIdentityTest, ATaintedNodeWithoutProviderIdIsAwaitedNotNamed) {
  for (const std::string effect : {"NoSchedule", "NoExecute", "PreferNoSchedule"}) {
    api_.SetAnswer("worker-2", {.status = 200,
                                .body = FakeKubernetesApi::NodeJson("worker-2", "", true, effect),
                                .never = false});
    StatusOr<NodeIdentity> identity = ResolveNodeIdentity(NodeSettings("worker-2"));
    ASSERT_TRUE(identity.ok()) << identity.status().ToString();
    EXPECT_EQ(identity->node_id, "") << effect;
    EXPECT_TRUE(identity->awaits_provider_id) << effect;
    EXPECT_TRUE(identity->node.uninitialized) << effect;
    EXPECT_EQ(identity->source, "kubernetes");
  }
}

TEST_F(InstanceIdentityTest, ATaintedNodeWithAProviderIdGivesItsUuid) {
  api_.SetAnswer("worker-2", {.status = 200,
                              .body = FakeKubernetesApi::NodeJson(
                                  "worker-2", std::string("oxide://") + kUuid, true),
                              .never = false});
  StatusOr<NodeIdentity> identity = ResolveNodeIdentity(NodeSettings("worker-2"));
  ASSERT_TRUE(identity.ok()) << identity.status().ToString();
  EXPECT_EQ(identity->node_id, kUuid);
  EXPECT_FALSE(identity->awaits_provider_id);
}

TEST_F(InstanceIdentityTest, TheWaitFlagAwaitsAProviderIdWithoutTheTaint) {
  api_.SetAnswer(
      "worker-2",
      {.status = 200, .body = FakeKubernetesApi::NodeJson("worker-2", ""), .never = false});
  Settings settings = NodeSettings("worker-2");
  settings.wait_for_provider_id = true;
  StatusOr<NodeIdentity> identity = ResolveNodeIdentity(settings);
  ASSERT_TRUE(identity.ok()) << identity.status().ToString();
  EXPECT_TRUE(identity->awaits_provider_id);
  EXPECT_FALSE(identity->node.uninitialized);
  EXPECT_EQ(identity->node_id, "");
}

TEST_F(InstanceIdentityTest, ANodeNameThatCannotBeAnInstanceNameIsRefused) {
  // Dots are fine in a Kubernetes node name, not in an Oxide instance name.
  api_.SetAnswer(
      "worker-3.example",
      {.status = 200, .body = FakeKubernetesApi::NodeJson("worker-3.example", ""), .never = false});
  ExpectFailure(ResolveNodeIdentity(NodeSettings("worker-3.example")),
                {"kubernetes: ", "Node worker-3.example has no spec.providerID"});
}

TEST_F(InstanceIdentityTest, AProviderIdOfAnotherFormIsAnErrorNamingIt) {
  api_.SetAnswer("worker-4", {.status = 200,
                              .body = FakeKubernetesApi::NodeJson("worker-4", "aws:///i-0abc"),
                              .never = false});
  ExpectFailure(ResolveNodeIdentity(NodeSettings("worker-4")),
                {"spec.providerID \"aws:///i-0abc\"", "oxide://<instance uuid>"});
  api_.SetAnswer("worker-5", {.status = 200,
                              .body = FakeKubernetesApi::NodeJson("worker-5", "oxide://nope"),
                              .never = false});
  ExpectFailure(ResolveNodeIdentity(NodeSettings("worker-5")), {"\"oxide://nope\""});
}

TEST_F(InstanceIdentityTest, TlsIsVerifiedAgainstTheServiceAccountCa) {
  api_.SetAnswer(
      "worker-1",
      {.status = 200, .body = FakeKubernetesApi::NodeJson("worker-1", ""), .never = false});
  Settings settings = NodeSettings("worker-1");
  settings.kubernetes_credentials_dir = api_.wrong_ca_credentials_dir();
  ExpectFailure(ResolveNodeIdentity(settings),
                {"kubernetes: GET /api/v1/nodes/worker-1: TLS with the API server",
                 api_.wrong_ca_credentials_dir() + "/ca.crt"});
  EXPECT_EQ(api_.requests(), 0) << "no request may be sent over an unverified connection";
}

TEST_F(InstanceIdentityTest, Http403NamesTheRbacPermissionNeeded) {
  api_.SetAnswer(
      "worker-1",
      {.status = 403,
       .body =
           R"({"kind":"Status","message":"nodes \"worker-1\" is forbidden: User \"system:)"
           R"(serviceaccount:kube-system:oxide-csi-node\" cannot get resource \"nodes\"","code":403})",
       .never = false});
  ExpectFailure(ResolveNodeIdentity(NodeSettings("worker-1")),
                {"GET /api/v1/nodes/worker-1: HTTP 403", "\"get\" on \"nodes\"", "is forbidden"});
}

TEST_F(InstanceIdentityTest, AnUnknownNodeNamesNodeName) {
  ExpectFailure(ResolveNodeIdentity(NodeSettings("nowhere")),
                {"GET /api/v1/nodes/nowhere: HTTP 404", "NODE_NAME"});
}

// The server accepts the request and never answers: the reader gives up at its time limit (short
// here). The call returning is the event the test waits for.
TEST_F(InstanceIdentityTest, AServerThatNeverAnswersTimesOut) {
  api_.SetAnswer("worker-1", {.status = 0, .body = "", .never = true});
  KubernetesApiOptions options = Options();
  options.total_timeout = std::chrono::milliseconds(300);
  auto started = std::chrono::steady_clock::now();
  StatusOr<KubernetesNode> node = ReadKubernetesNode(options, "worker-1");
  auto took = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(node.status().message().find("no answer from https://127.0.0.1:" + api_.port() +
                                         " within the time limit (300 ms"),
            std::string::npos)
      << node.status().message();
  EXPECT_EQ(api_.requests(), 1) << "a timeout is not retried";
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST_F(InstanceIdentityTest, AnAnswerThatIsNotANodeIsRefused) {
  api_.SetAnswer("worker-1", {.status = 200, .body = "<html>proxy login</html>", .never = false});
  ExpectFailure(ResolveNodeIdentity(NodeSettings("worker-1")), {"not JSON"});
  api_.SetAnswer("worker-1", {.status = 200, .body = R"({"kind":"Pod"})", .never = false});
  ExpectFailure(ResolveNodeIdentity(NodeSettings("worker-1")), {"not a Node object"});
  api_.SetAnswer(
      "worker-1",
      {.status = 200, .body = R"({"kind":"Node","spec":{"providerID":7}})", .never = false});
  ExpectFailure(ResolveNodeIdentity(NodeSettings("worker-1")), {"providerID is not a string"});
  api_.SetAnswer(
      "worker-1",
      {.status = 200, .body = R"({"kind":"Node","spec":{"taints":"none"}})", .never = false});
  ExpectFailure(ResolveNodeIdentity(NodeSettings("worker-1")), {"spec.taints is not a list"});
}

TEST_F(InstanceIdentityTest, AHugeAnswerIsCutOffAtTheCap) {
  std::string huge = FakeKubernetesApi::NodeJson("worker-1", "");
  huge.insert(1, "\"padding\":\"" + std::string(256 * 1024, 'x') + "\",");
  api_.SetAnswer("worker-1", {.status = 200, .body = huge, .never = false});
  KubernetesApiOptions options = Options();
  options.max_response_bytes = 64 * 1024;
  StatusOr<KubernetesNode> node = ReadKubernetesNode(options, "worker-1");
  ASSERT_FALSE(node.ok());
  EXPECT_NE(node.status().message().find("larger than 64 KiB"), std::string::npos)
      << node.status().message();
}

TEST_F(InstanceIdentityTest, A5xxIsRetriedAFewTimesThenReported) {
  api_.SetAnswer("worker-1", {.status = 503, .body = "{}", .never = false});
  KubernetesApiOptions options = Options();
  options.retry_pause = std::chrono::milliseconds(1);
  StatusOr<KubernetesNode> node = ReadKubernetesNode(options, "worker-1");
  ASSERT_FALSE(node.ok());
  EXPECT_NE(node.status().message().find("HTTP 503 (3 attempts)"), std::string::npos)
      << node.status().message();
  EXPECT_EQ(api_.requests(), 3);
}

TEST_F(InstanceIdentityTest, WhenNoSourceAnswersOneLineNamesEverySource) {
  api_.SetAnswer("worker-1", {.status = 403, .body = "{}", .never = false});
  Settings settings = NodeSettings("worker-1");
  ExpectFailure(ResolveNodeIdentity(settings),
                {"no Oxide instance id: env: skipped: OXIDE_INSTANCE_ID is not set; file: skipped: "
                 "no --instance-metadata-file; kubernetes: GET /api/v1/nodes/worker-1: HTTP 403"});
  StatusOr<NodeIdentity> identity = ResolveNodeIdentity(settings);
  EXPECT_EQ(identity.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(identity.status().message().find('\n'), std::string::npos);

  Settings outside = settings;
  outside.kubernetes_host.clear();
  ExpectFailure(ResolveNodeIdentity(outside), {"kubernetes: skipped: not in a Kubernetes cluster"});
  Settings unnamed = settings;
  unnamed.node_name.clear();
  ExpectFailure(ResolveNodeIdentity(unnamed), {"kubernetes: skipped: NODE_NAME is not set"});
}

TEST_F(InstanceIdentityTest, SourcesAreTriedInTheConfiguredOrder) {
  TempDir dir;
  WriteFile(dir.File("instance.env"), std::string("OXIDE_INSTANCE_ID=") + kOtherUuid + "\n");
  api_.SetAnswer(
      "worker-1",
      {.status = 200, .body = FakeKubernetesApi::NodeJson("worker-1", ""), .never = false});
  Settings settings = NodeSettings("worker-1");
  settings.instance_id = kUuid;
  settings.instance_metadata_file = dir.File("instance.env");

  StatusOr<NodeIdentity> env_first = ResolveNodeIdentity(settings);
  ASSERT_TRUE(env_first.ok()) << env_first.status().ToString();
  EXPECT_EQ(env_first->node_id, kUuid);
  EXPECT_EQ(env_first->source, "env");
  EXPECT_EQ(api_.requests(), 0) << "sources after the one that answered are not asked";

  settings.instance_id_sources = {InstanceIdSource::kFile, InstanceIdSource::kEnv};
  StatusOr<NodeIdentity> file_first = ResolveNodeIdentity(settings);
  ASSERT_TRUE(file_first.ok());
  EXPECT_EQ(file_first->node_id, kOtherUuid);
  EXPECT_EQ(file_first->source, "file");

  settings.instance_id_sources = {InstanceIdSource::kKubernetes, InstanceIdSource::kEnv};
  StatusOr<NodeIdentity> kubernetes_first = ResolveNodeIdentity(settings);
  ASSERT_TRUE(kubernetes_first.ok());
  EXPECT_EQ(kubernetes_first->node_id, "name:worker-1");
  EXPECT_EQ(kubernetes_first->source, "kubernetes");

  // A source that fails does not stop the search; the failure is kept for a warning.
  WriteFile(dir.File("instance.env"), "OXIDE_INSTANCE_ID=garbage\n");
  settings.instance_id_sources = {InstanceIdSource::kFile, InstanceIdSource::kEnv};
  StatusOr<NodeIdentity> after_failure = ResolveNodeIdentity(settings);
  ASSERT_TRUE(after_failure.ok());
  EXPECT_EQ(after_failure->source, "env");
  EXPECT_NE(after_failure->earlier_failures.find("file: "), std::string::npos);
  EXPECT_NE(after_failure->earlier_failures.find("is not a UUID"), std::string::npos);

  // A file that is not there (an optional hostPath left empty) is skipped, not a failure.
  settings.instance_metadata_file = dir.File("absent.env");
  StatusOr<NodeIdentity> absent = ResolveNodeIdentity(settings);
  ASSERT_TRUE(absent.ok());
  EXPECT_EQ(absent->earlier_failures, "");
}

TEST(MustWaitForProviderId, OnlyWithoutAProviderIdAndWithTheTaintOrTheFlag) {
  EXPECT_FALSE(MustWaitForProviderId({.provider_id = "", .uninitialized = false}, false));
  EXPECT_TRUE(MustWaitForProviderId({.provider_id = "", .uninitialized = true}, false));
  EXPECT_TRUE(MustWaitForProviderId({.provider_id = "", .uninitialized = false}, true));
  EXPECT_FALSE(MustWaitForProviderId({.provider_id = "oxide://x", .uninitialized = true}, true));
}

TEST(NodeIdFromKubernetesNode, FormsOfProviderId) {
  EXPECT_EQ(*NodeIdFromKubernetesNode(std::string("oxide://") + kUuid, "n1"), kUuid);
  EXPECT_EQ(*NodeIdFromKubernetesNode("", "n1"), "name:n1");
  EXPECT_FALSE(NodeIdFromKubernetesNode("oxide://", "n1").ok());
  EXPECT_FALSE(NodeIdFromKubernetesNode(std::string("gce://") + kUuid, "n1").ok());
  // CSI caps node ids at 192 bytes; the longest name form is 5 + 63.
  std::string longest(63, 'a');
  EXPECT_LE(NodeIdFromKubernetesNode("", longest)->size(), 192U);
  EXPECT_FALSE(NodeIdFromKubernetesNode("", std::string(64, 'a')).ok());
}

// The file's text only (node/instance_metadata.h; moved here from test/config/settings_test.cc
// with its parser): the file itself is read by the tests below.
TEST(ParseInstanceMetadata, InstanceIdFromMetadataText) {
  const std::string kInstance = kUuid;
  auto id = ParseInstanceMetadata("# written by the init container\nOXIDE_INSTANCE_ID=" +
                                      std::string("6F0C4E3B-1D2A-4C5B-9E8F-0A1B2C3D4E5F") + " \n",
                                  "/etc/oxide-csi/instance.env");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, kInstance);
  auto legacy = ParseInstanceMetadata("instance_id=" + kInstance + "\nOXIDE_INSTANCE_ID=x\n", "f");
  ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
  EXPECT_EQ(*legacy, kInstance);

  auto bad = ParseInstanceMetadata("OTHER=1\n", "/etc/oxide-csi/instance.env");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "invalid setting --instance-metadata-file: /etc/oxide-csi/instance.env has no "
            "OXIDE_INSTANCE_ID=<uuid> line");
  auto not_uuid = ParseInstanceMetadata("OXIDE_INSTANCE_ID=i-123\n", "f");
  ASSERT_FALSE(not_uuid.ok());
  EXPECT_EQ(not_uuid.status().message(),
            "invalid setting --instance-metadata-file: f: OXIDE_INSTANCE_ID is not a UUID");
}

// The file source reads the file at node start (the settings parser only names it).
TEST(ReadInstanceMetadataFile, ReadsTheIdAndTellsAMissingFileFromABadOne) {
  TempDir dir;
  WriteFile(dir.File("meta"), "# written by the init container\nOXIDE_INSTANCE_ID=" +
                                  std::string("6F0C4E3B-1D2A-4C5B-9E8F-0A1B2C3D4E5F") + "\n");
  auto id = ReadInstanceMetadataFile(dir.File("meta"));
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, kUuid);

  WriteFile(dir.File("bad"), "OTHER=1\n");
  auto bad = ReadInstanceMetadataFile(dir.File("bad"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("no OXIDE_INSTANCE_ID"), std::string::npos);

  auto missing = ReadInstanceMetadataFile(dir.File("missing"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("does not exist"), std::string::npos);
}

// A file that is not one (an endless /dev/zero) is refused after 64 KiB, never read whole.
TEST(ReadInstanceMetadataFile, AFileLargerThan64KiBIsRefusedWithoutReadingItWhole) {
  auto metadata = ReadInstanceMetadataFile("/dev/zero");
  ASSERT_FALSE(metadata.ok());
  EXPECT_NE(metadata.status().message().find("larger than 64 KiB"), std::string::npos)
      << metadata.status().message();
}

}  // namespace
}  // namespace oxide::node
