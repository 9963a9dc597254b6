// Ping, /v1/me, auth (401 before lookups), API-Version, routing errors (of the API and of the
// control API), projects, utilization, and the command line.
#include <array>
#include <fstream>
#include <string>
#include <vector>

#include "sim_fixture.h"

namespace sim_test {
namespace {

using BasicsTest = SimTest;

TEST_F(BasicsTest, PingNeedsNoAuthAndHasRequestId) {
  api().set_token(std::nullopt);
  Reply reply = api().get("/v1/ping");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.json(), nlohmann::json({{"status", "ok"}}));
  EXPECT_EQ(reply.header("x-request-id").size(), 36U);
  EXPECT_EQ(reply.header("content-type"), "application/json");
}

TEST_F(BasicsTest, MeWithTokenAndWithout) {
  Reply ok = api().get("/v1/me");
  ASSERT_EQ(ok.status, 200);
  for (const char* key : {"id", "display_name", "silo_id", "silo_name", "silo_admin",
                          "fleet_viewer", "time_created", "time_modified"}) {
    EXPECT_TRUE(ok.json().contains(key)) << key;
  }
  api().set_token(std::nullopt);
  expect_error(api().get("/v1/me"), 401, "Unauthorized", "credentials missing or invalid");
  api().set_token("oxide-token-wrong");
  expect_error(api().get("/v1/me"), 401, "Unauthorized", "credentials missing or invalid");
  api().set_token("test-secret");  // no prefix: ignored as if absent
  expect_error(api().get("/v1/me"), 401, "Unauthorized", "credentials missing or invalid");
  api().set_token(std::nullopt);
  expect_error(api().request("GET", "/v1/me", std::nullopt, {"Authorization: Basic abc"}), 401,
               "Unauthorized", "credentials missing or invalid");
}

// A token rotation as the control API models it: old and new accepted, then only the new; a
// reset accepts the start-up token again.
TEST_F(BasicsTest, AcceptedTokensCanBeReplacedThroughTheControlApi) {
  const std::string a = "oxide-token-rotation-a", b = "oxide-token-rotation-b";
  Reply set = api().post("/__sim/auth/tokens", {{"tokens", {a, b}}});
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_EQ(set.json(), nlohmann::json({{"tokens", {a, b}}}));
  expect_error(api().get("/v1/me"), 401, "Unauthorized", "credentials missing or invalid");
  api().set_token(a);
  EXPECT_EQ(api().get("/v1/me").status, 200);
  api().set_token(b);
  EXPECT_EQ(api().get("/v1/me").status, 200);
  ASSERT_EQ(api().post("/__sim/auth/tokens", {{"tokens", {b}}}).status, 200);
  EXPECT_EQ(api().get("/v1/me").status, 200);
  api().set_token(a);
  expect_error(api().get("/v1/me"), 401, "Unauthorized", "credentials missing or invalid");
  EXPECT_EQ(api().get("/__sim/auth/tokens").json(), nlohmann::json({{"tokens", {b}}}));

  for (const nlohmann::json& bad :
       {nlohmann::json::object(), nlohmann::json({{"tokens", nlohmann::json::array()}}),
        nlohmann::json({{"tokens", {"no-prefix"}}}), nlohmann::json({{"tokens", {1}}})}) {
    Reply refused = api().post("/__sim/auth/tokens", bad);
    EXPECT_EQ(refused.status, 400) << bad.dump();
    EXPECT_NE(refused.json().value("message", "").find("tokens"), std::string::npos)
        << refused.body;
  }
  EXPECT_EQ(api().get("/__sim/auth/tokens").json(), nlohmann::json({{"tokens", {b}}}));

  ASSERT_EQ(api().post("/__sim/reset", nlohmann::json::object()).status, 200);
  api().set_token(std::string(SimProcess::kToken));
  EXPECT_EQ(api().get("/v1/me").status, 200);
  api().set_token(b);
  expect_error(api().get("/v1/me"), 401, "Unauthorized", "credentials missing or invalid");
}

TEST_F(BasicsTest, AuthComesBeforeLookups) {
  api().set_token(std::nullopt);
  expect_error(api().get("/v1/disks/nope?project=nope"), 401, "Unauthorized",
               "credentials missing or invalid");
  expect_error(api().get("/v1/projects/nope"), 401, "Unauthorized",
               "credentials missing or invalid");
  expect_error(api().del("/v1/disks/00000000-0000-4000-8000-000000000000"), 401, "Unauthorized",
               "credentials missing or invalid");
  expect_error(api().get("/v1/utilization"), 401, "Unauthorized", "credentials missing or invalid");
}

TEST_F(BasicsTest, ApiVersionHeader) {
  auto with = [&](const std::string& value) {
    return api().request("GET", "/v1/me", std::nullopt, {"API-Version: " + value});
  };
  EXPECT_EQ(with("2026081901.0.0").status, 200);
  EXPECT_EQ(with("2026060800.0.0").status, 200);
  expect_error(with("2026081902.0.0"), 400, nullptr,
               "server does not support this API version: 2026081902.0.0");
  Reply bad = with("latest");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(
      bad.json()["message"].get<std::string>().rfind("bad value for header \"api-version\": ", 0),
      0U)
      << bad.body;
  EXPECT_FALSE(bad.json().contains("error_code"));
}

TEST_F(BasicsTest, UnknownRouteAndMethod) {
  expect_error(api().get("/v1/nothing"), 404, nullptr, "Not Found");
  expect_error(api().get("/v1/disks/a/b"), 404, nullptr, "Not Found");
  expect_error(api().request("PATCH", "/v1/disks/x", std::nullopt), 405, nullptr,
               "Method Not Allowed");
  expect_error(api().post("/v1/ping", nlohmann::json::object()), 405, nullptr,
               "Method Not Allowed");
}

// The control API's routing table: an endpoint answers only its methods and path shapes; the
// rest is a 404 naming the method and the endpoint (a sub-path too for /__sim/clock and
// /__sim/auth, which tell their sub-paths apart themselves).
TEST_F(BasicsTest, UnknownControlEndpointAndMethod) {
  const std::vector<std::array<std::string, 3>> refused = {
      {"POST", "/__sim/state", "POST /__sim/state"},
      {"GET", "/__sim/instances", "GET /__sim/instances"},
      {"POST", "/__sim/instances/node", "POST /__sim/instances"},
      {"PUT", "/__sim/instances/node/device-order", "PUT /__sim/instances"},
      {"POST", "/__sim/instances/node/start", "POST /__sim/instances"},
      {"PUT", "/__sim/disks", "PUT /__sim/disks"},
      {"GET", "/__sim/disks/pv", "GET /__sim/disks"},
      {"PATCH", "/__sim/faults", "PATCH /__sim/faults"},
      {"PUT", "/__sim/requests", "PUT /__sim/requests"},
      {"GET", "/__sim/reset", "GET /__sim/reset"},
      {"GET", "/__sim/nowhere", "GET /__sim/nowhere"},
      {"GET", "/__sim/clock/advance", "GET /__sim/clock/advance"},
      {"DELETE", "/__sim/auth/tokens", "DELETE /__sim/auth/tokens"},
      {"GET", "/__sim/auth", "GET /__sim/auth"},
  };
  for (const auto& [method, path, named] : refused) {
    Reply reply = api().request(method, path, std::nullopt);
    EXPECT_EQ(reply.status, 404) << method << " " << path;
    EXPECT_EQ(reply.json(), nlohmann::json({{"message", "no such control endpoint: " + named}}))
        << method << " " << path;
  }
  EXPECT_EQ(api().get("/__sim/config").status, 200);
  EXPECT_EQ(api().request("GET", "/__sim/state/anything", std::nullopt).status, 200);
  EXPECT_EQ(api().request("DELETE", "/__sim/faults", std::nullopt).status, 200);
}

TEST_F(BasicsTest, ProjectViewByNameAndId) {
  Reply by_name = api().get("/v1/projects/demo");
  ASSERT_EQ(by_name.status, 200);
  const std::string id = by_name.json()["id"];
  Reply by_id = api().get("/v1/projects/" + id);
  EXPECT_EQ(by_id.status, 200);
  EXPECT_EQ(by_id.json()["name"], "demo");
  expect_error(api().get("/v1/projects/nope"), 404, "ObjectNotFound",
               "not found: project with name \"nope\"");
  expect_error(api().get("/v1/projects/00000000-0000-4000-8000-000000000000"), 404,
               "ObjectNotFound",
               "not found: project with id \"00000000-0000-4000-8000-000000000000\"");
  expect_error(api().get("/v1/projects/Demo"), 400, nullptr,
               "bad parameter in URL path: name must begin with an ASCII lowercase character");
}

TEST_F(BasicsTest, ProjectUpdateRenameAndConflict) {
  ASSERT_EQ(api().post("/__sim/projects", {{"name", "other"}}).status, 201);
  Reply renamed = api().put("/v1/projects/demo", {{"name", "renamed"}, {"description", "d"}});
  ASSERT_EQ(renamed.status, 200) << renamed.body;
  EXPECT_EQ(renamed.json()["name"], "renamed");
  EXPECT_EQ(renamed.json()["description"], "d");
  expect_error(api().get("/v1/projects/demo"), 404, "ObjectNotFound",
               "not found: project with name \"demo\"");
  expect_error(api().put("/v1/projects/renamed", {{"name", "other"}, {"description", nullptr}}),
               400, "ObjectAlreadyExists", "already exists: project \"other\"");
  expect_error(api().put("/v1/projects/renamed", {{"name", "Bad"}}), 400, nullptr,
               "unable to parse JSON body: name must begin with an ASCII lowercase character");
}

TEST_F(BasicsTest, ProjectDeleteRules) {
  create_disk("pv-a");
  expect_error(api().del("/v1/projects/demo"), 400, "InvalidRequest",
               "project to be deleted contains a disk: pv-a");
  ASSERT_EQ(api().del("/v1/disks/pv-a?project=demo").status, 204);
  control_instance("node", "stopped");
  expect_error(api().del("/v1/projects/demo"), 400, "InvalidRequest",
               "project to be deleted contains a instance: node");
  ASSERT_EQ(api().del("/v1/instances/node?project=demo").status, 204);
  Reply deleted = api().del("/v1/projects/demo");
  EXPECT_EQ(deleted.status, 204);
  EXPECT_TRUE(deleted.body.empty());
  expect_error(api().del("/v1/projects/demo"), 404, "ObjectNotFound",
               "not found: project with name \"demo\"");
}

TEST_F(BasicsTest, UtilizationCountsDisksSnapshotsAndRunningInstances) {
  Reply empty = api().get("/v1/utilization");
  ASSERT_EQ(empty.status, 200);
  EXPECT_EQ(empty.json()["capacity"]["storage"], 10995116277760ULL);
  EXPECT_EQ(empty.json()["provisioned"]["storage"], 0);
  create_disk("pv-a", 10);
  ASSERT_EQ(api()
                .post("/v1/snapshots?project=demo",
                      {{"name", "s"}, {"description", ""}, {"disk", "pv-a"}})
                .status,
            201);
  control_instance("node", "running");
  control_instance("idle", "stopped");
  const nlohmann::json used = api().get("/v1/utilization").json()["provisioned"];
  EXPECT_EQ(used["storage"], 20 * kGiB);
  EXPECT_EQ(used["cpus"], 2);
  EXPECT_EQ(used["memory"], 4 * kGiB);
}

TEST(CommandLine, HelpListsEveryFlag) {
  std::string output;
  ASSERT_EQ(run_sim_to_exit({"--help"}, &output), 0);
  for (const char* flag :
       {"--port", "--token", "--token-file", "--tls-cert", "--tls-key", "--state-db", "--seed-file",
        "--project", "--storage-quota", "--hotplug", "--create-delay-ms", "--delete-delay-ms",
        "--instance-delay-ms", "--async", "--fault-seed", "--fault", "--guest-sysfs-root",
        "--guest-backing-dir"}) {
    EXPECT_NE(output.find(flag), std::string::npos) << flag;
  }
}

TEST(CommandLine, RejectsBadFlagsAndTokens) {
  std::string output;
  EXPECT_EQ(run_sim_to_exit({"--bogus"}, &output), 2);
  EXPECT_NE(output.find("unknown option --bogus"), std::string::npos);
  output.clear();
  EXPECT_EQ(run_sim_to_exit({"--token", "plain-secret"}, &output), 2);
  EXPECT_NE(output.find("oxide-token-"), std::string::npos) << output;
  output.clear();
  EXPECT_EQ(run_sim_to_exit({"--port", "70000"}, &output), 2);
  output.clear();
  EXPECT_EQ(run_sim_to_exit({"--fault", "disk_create:500=2"}, &output), 2);
}

TEST(CommandLine, TokenFileAndSeedFile) {
  const std::string token_file = testing::TempDir() + "/sim-token";
  const std::string seed_file = testing::TempDir() + "/sim-seed.json";
  { std::ofstream(token_file) << "oxide-token-from-file\n"; }
  {
    std::ofstream(seed_file) << R"({"projects":[{"name":"alpha"}],
      "instances":[{"project":"alpha","name":"node-1","run_state":"stopped"}],
      "quota":{"storage":5368709120,"cpus":4,"memory":8589934592}})";
  }
  SimProcess sim({"--token-file", token_file, "--seed-file", seed_file});
  HttpClient client(sim.base_url(), "oxide-token-from-file");
  EXPECT_EQ(client.get("/v1/instances/node-1?project=alpha").json()["run_state"], "stopped");
  EXPECT_EQ(client.get("/v1/projects/demo").status, 404);  // no default project with a seed
  const nlohmann::json capacity = client.get("/v1/utilization").json()["capacity"];
  EXPECT_EQ(capacity["storage"], 5368709120ULL);
  EXPECT_EQ(capacity["cpus"], 4);
}

}  // namespace
}  // namespace sim_test
