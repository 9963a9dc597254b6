// Fault injection: deterministic sequences per seed, 500/503/429+Retry-After, latency,
// dropped connections, and the request log (issue part 6).
#include <chrono>

#include "sim_fixture.h"

namespace sim_test {
namespace {

std::vector<long> status_sequence(const std::vector<std::string>& args, int count) {
  SimProcess sim(args);
  HttpClient client(sim.base_url());
  client.set_fresh_connect(true);
  std::vector<long> statuses;
  for (int i = 0; i < count; ++i) {
    Reply reply = client.get("/v1/disks?project=demo");
    statuses.push_back(reply.curl_code == CURLE_OK ? reply.status : -1);
  }
  return statuses;
}

TEST(FaultDeterminism, SameSeedSameFaultsDifferentSeedDifferentFaults) {
  const std::vector<std::string> rule = {"--fault", "disk_list:500=0.2,503=0.1,429=0.1,drop=0.1"};
  auto with_seed = [&](const std::string& seed) {
    std::vector<std::string> args = rule;
    args.push_back("--fault-seed");
    args.push_back(seed);
    return status_sequence(args, 200);
  };
  const auto first = with_seed("42");
  const auto second = with_seed("42");
  const auto other = with_seed("43");
  EXPECT_EQ(first, second);
  EXPECT_NE(first, other);
  int errors = 0, drops = 0;
  for (long status : first) {
    errors += status >= 500 || status == 429;
    drops += status == -1;
  }
  EXPECT_GT(errors, 40);  // about 40% of 200
  EXPECT_LT(errors, 120);
  EXPECT_GT(drops, 3);
}

using FaultTest = SimTest;

TEST_F(FaultTest, ControlApiRulesAndErrorBodies) {
  Reply set = api().put("/__sim/faults",
                        {{"seed", 7},
                         {"rules",
                          {{{"operation", "disk_view"}, {"error_429", 1.0}, {"retry_after_s", 3}},
                           {{"method", "POST"}, {"path_prefix", "/v1/disks"}, {"error_503", 1.0}},
                           {{"path_prefix", "/v1/snapshots"}, {"error_500", 1.0}}}}});
  ASSERT_EQ(set.status, 200) << set.body;
  Reply throttled = api().get("/v1/disks/00000000-0000-4000-8000-000000000000");
  expect_error(throttled, 429, nullptr, "Too Many Requests");
  EXPECT_EQ(throttled.header("retry-after"), "3");
  expect_error(api().post("/v1/disks?project=demo", blank_disk("x")), 503, "ServiceNotAvailable",
               "Service Unavailable");
  expect_error(api().get("/v1/snapshots?project=demo"), 500, "Internal", "Internal Server Error");
  EXPECT_EQ(api().get("/v1/disks?project=demo").status, 200);  // GET /v1/disks unaffected
  EXPECT_EQ(api().put("/__sim/faults", {{"rules", {{{"operation", "nope"}}}}}).status, 400);
  ASSERT_EQ(api().del("/__sim/faults").status, 200);
  EXPECT_EQ(api().post("/v1/disks?project=demo", blank_disk("x")).status, 201);
}

TEST_F(FaultTest, LatencyAndDrop) {
  ASSERT_EQ(
      api()
          .put("/__sim/faults", {{"rules",
                                  {{{"operation", "ping"}, {"latency_ms", 300}, {"jitter_ms", 50}},
                                   {{"operation", "disk_create"}, {"drop", 1.0}}}}})
          .status,
      200);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(api().get("/v1/ping").status, 200);
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count();
  EXPECT_GE(waited, 290);
  EXPECT_LT(waited, 2000);
  api().set_fresh_connect(true);
  Reply dropped = api().post("/v1/disks?project=demo", blank_disk("dropped"));
  api().set_fresh_connect(false);
  EXPECT_NE(dropped.curl_code, CURLE_OK);
  // The call was processed before the connection was dropped (lost response).
  EXPECT_EQ(disk_state("dropped"), nlohmann::json({{"state", "detached"}}));
}

TEST_F(FaultTest, RequestLogCountsCalls) {
  ASSERT_EQ(api().del("/__sim/requests").status, 200);
  create_disk("pv-a");
  api().get("/v1/disks/pv-a?project=demo");
  api().get("/v1/disks/pv-zz?project=demo");
  const nlohmann::json log = api().get("/__sim/requests").json()["requests"];
  ASSERT_EQ(log.size(), 3U);
  EXPECT_EQ(log[0]["method"], "POST");
  EXPECT_EQ(log[0]["path"], "/v1/disks");
  EXPECT_EQ(log[0]["query"], "project=demo");
  EXPECT_EQ(log[0]["status"], 201);
  EXPECT_EQ(log[0]["operation"], "disk_create");
  EXPECT_EQ(log[2]["status"], 404);
  ASSERT_EQ(api().del("/__sim/requests").status, 200);
  EXPECT_TRUE(api().get("/__sim/requests").json()["requests"].empty());
}

TEST_F(FaultTest, ResetWipesState) {
  create_disk("pv-a");
  ASSERT_EQ(api().post("/__sim/reset", nlohmann::json::object()).status, 200);
  EXPECT_TRUE(api().get("/v1/disks?project=demo").json()["items"].empty());
  EXPECT_EQ(api().get("/v1/projects/demo").status, 200);
}

}  // namespace
}  // namespace sim_test
