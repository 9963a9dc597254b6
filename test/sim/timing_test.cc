// State transitions over time: saga delays, async mode, freeze/release/fault (issue part 3).
#include <chrono>
#include <future>
#include <thread>

#include "sim_fixture.h"

namespace sim_test {
namespace {

using Clock = std::chrono::steady_clock;

long long elapsed_ms(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

class DelayTest : public SimTest {
 protected:
  std::vector<std::string> sim_args() const override {
    return {"--create-delay-ms", "600", "--delete-delay-ms", "300", "--instance-delay-ms", "300"};
  }
};

TEST_F(DelayTest, SlowCreateIsVisibleAsCreatingMeanwhile) {
  const auto start = Clock::now();
  auto pending = std::async(std::launch::async, [&]() {
    HttpClient slow(sim().base_url());
    return slow.post("/v1/disks?project=demo", blank_disk("pv-slow"));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(disk_state("pv-slow"), nlohmann::json({{"state", "creating"}}));
  const nlohmann::json listed = api().get("/v1/disks?project=demo").json();
  ASSERT_EQ(listed["items"].size(), 1U);
  EXPECT_EQ(listed["items"][0]["state"]["state"], "creating");
  Reply created = pending.get();
  EXPECT_GE(elapsed_ms(start), 550);
  EXPECT_EQ(created.status, 201);
  EXPECT_EQ(created.json()["state"]["state"], "creating");
  EXPECT_EQ(disk_state("pv-slow"), nlohmann::json({{"state", "detached"}}));
  const auto delete_start = Clock::now();
  EXPECT_EQ(api().del("/v1/disks/pv-slow?project=demo").status, 204);
  EXPECT_GE(elapsed_ms(delete_start), 250);
}

TEST_F(DelayTest, InstanceStartAndStopTakeTime) {
  control_instance("vm", "stopped");
  EXPECT_EQ(api()
                .post("/v1/instances/vm/start?project=demo", nlohmann::json::object())
                .json()["run_state"],
            "starting");
  EXPECT_EQ(api().get("/v1/instances/vm?project=demo").json()["run_state"], "starting");
  std::this_thread::sleep_for(std::chrono::milliseconds(450));
  EXPECT_EQ(api().get("/v1/instances/vm?project=demo").json()["run_state"], "running");
  api().post("/v1/instances/vm/stop?project=demo", nlohmann::json::object());
  EXPECT_EQ(api().get("/v1/instances/vm?project=demo").json()["run_state"], "stopping");
  std::this_thread::sleep_for(std::chrono::milliseconds(450));
  EXPECT_EQ(api().get("/v1/instances/vm?project=demo").json()["run_state"], "stopped");
}

class AsyncTest : public SimTest {
 protected:
  std::vector<std::string> sim_args() const override {
    return {"--async", "--create-delay-ms", "400"};
  }
};

TEST_F(AsyncTest, AnswersAtOnceAndFinishesLater) {
  const auto start = Clock::now();
  Reply created = api().post("/v1/disks?project=demo", blank_disk("pv-a"));
  EXPECT_LT(elapsed_ms(start), 300);
  EXPECT_EQ(created.status, 201);
  EXPECT_EQ(disk_state("pv-a"), nlohmann::json({{"state", "creating"}}));
  expect_error(api().del("/v1/disks/pv-a?project=demo"), 400, "InvalidRequest",
               "disk cannot be deleted in state \"creating\"");
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_EQ(disk_state("pv-a"), nlohmann::json({{"state", "detached"}}));
}

TEST_F(AsyncTest, ConfigCanSwitchModesAtRunTime) {
  Reply config = api().put("/__sim/config", {{"async", false}, {"create_delay_ms", 0}});
  ASSERT_EQ(config.status, 200);
  EXPECT_EQ(config.json()["async"], false);
  create_disk("pv-b");
  EXPECT_EQ(disk_state("pv-b"), nlohmann::json({{"state", "detached"}}));
}

using FreezeTest = SimTest;

TEST_F(FreezeTest, FrozenCreateHoldsTheResponseUntilRelease) {
  ASSERT_EQ(api().post("/__sim/freeze", {{"kind", "disk"}, {"name", "pv-f"}}).status, 200);
  auto pending = std::async(std::launch::async, [&]() {
    HttpClient slow(sim().base_url());
    return slow.post("/v1/disks?project=demo", blank_disk("pv-f"));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(disk_state("pv-f"), nlohmann::json({{"state", "creating"}}));
  EXPECT_EQ(pending.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  ASSERT_EQ(api().post("/__sim/release", {{"kind", "disk"}, {"name", "pv-f"}}).status, 200);
  Reply created = pending.get();
  EXPECT_EQ(created.status, 201);
  EXPECT_EQ(disk_state("pv-f"), nlohmann::json({{"state", "detached"}}));
}

TEST_F(FreezeTest, FaultingAFrozenCreateFailsTheCallAndLeavesFaulted) {
  ASSERT_EQ(api().post("/__sim/freeze", {{"kind", "disk"}, {"name", "pv-g"}}).status, 200);
  auto pending = std::async(std::launch::async, [&]() {
    HttpClient slow(sim().base_url());
    return slow.post("/v1/disks?project=demo", blank_disk("pv-g"));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(api().post("/__sim/fault", {{"kind", "disk"}, {"name", "pv-g"}}).status, 200);
  expect_error(pending.get(), 500, "Internal", "Internal Server Error");
  EXPECT_EQ(disk_state("pv-g"), nlohmann::json({{"state", "faulted"}}));
  EXPECT_EQ(api().del("/v1/disks/pv-g?project=demo").status, 204);
}

TEST_F(FreezeTest, ResetAnswersRequestsStillWaiting) {
  ASSERT_EQ(api().post("/__sim/freeze", {{"kind", "disk"}, {"name", "pv-h"}}).status, 200);
  auto pending = std::async(std::launch::async, [&]() {
    HttpClient slow(sim().base_url());
    return slow.post("/v1/disks?project=demo", blank_disk("pv-h"));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(api().post("/__sim/reset", nlohmann::json::object()).status, 200);
  expect_error(pending.get(), 500, "Internal", "Internal Server Error");
  EXPECT_EQ(api().get("/v1/disks/pv-h?project=demo").status, 404);
}

TEST_F(FreezeTest, FrozenInstanceStaysStarting) {
  control_instance("vm", "stopped");
  ASSERT_EQ(api().post("/__sim/freeze", {{"kind", "instance"}, {"name", "vm"}}).status, 200);
  api().post("/v1/instances/vm/start?project=demo", nlohmann::json::object());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(api().get("/v1/instances/vm?project=demo").json()["run_state"], "starting");
  ASSERT_EQ(api().post("/__sim/release", {{"kind", "instance"}, {"name", "vm"}}).status, 200);
  EXPECT_EQ(api().get("/v1/instances/vm?project=demo").json()["run_state"], "running");
  ASSERT_EQ(api().post("/__sim/fault", {{"kind", "instance"}, {"name", "vm"}}).status, 200);
  EXPECT_EQ(api().get("/v1/instances/vm?project=demo").json()["run_state"], "failed");
}

}  // namespace
}  // namespace sim_test
