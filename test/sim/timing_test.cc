// State transitions over time: saga delays, async mode, freeze/release/fault (issue part 3).
// The delays run on the simulator's manual clock (--manual-clock): a test observes the state
// during a delay, then ends the delay with POST /__sim/clock/advance. Tests wait for events
// (a reply, a state seen in the simulator), never for wall-clock time.
#include <chrono>
#include <future>

#include "sim_fixture.h"
#include "wait_until.h"

namespace sim_test {
namespace {

constexpr std::chrono::milliseconds kSafetyLimit(10000);

// True once a demo disk exists and is in `state`.
bool DiskIs(HttpClient& client, const std::string& name, const std::string& state) {
  Reply reply = client.get("/v1/disks/" + name + "?project=demo");
  return reply.status == 200 && reply.json()["state"]["state"] == state;
}

template <typename T>
bool StillPending(std::future<T>& pending) {
  return pending.wait_for(std::chrono::seconds(0)) == std::future_status::timeout;
}

class DelayTest : public SimTest {
 protected:
  std::vector<std::string> sim_args() const override {
    return {"--manual-clock",
            "--create-delay-ms",
            "600",
            "--delete-delay-ms",
            "300",
            "--instance-delay-ms",
            "300"};
  }
  // Advances the simulator's manual clock; asserts the control call worked.
  void AdvanceClock(uint64_t ms) {
    Reply reply = api().post("/__sim/clock/advance", {{"ms", ms}});
    ASSERT_EQ(reply.status, 200) << reply.body;
  }
};

TEST_F(DelayTest, SlowCreateIsVisibleAsCreatingMeanwhile) {
  auto pending = std::async(std::launch::async, [&]() {
    HttpClient slow(sim().base_url());
    return slow.post("/v1/disks?project=demo", blank_disk("pv-slow"));
  });
  ASSERT_TRUE(WaitUntil([&]() { return DiskIs(api(), "pv-slow", "creating"); }, kSafetyLimit,
                        "disk pv-slow to be visible as creating"));
  EXPECT_EQ(disk_state("pv-slow"), nlohmann::json({{"state", "creating"}}));
  const nlohmann::json listed = api().get("/v1/disks?project=demo").json();
  ASSERT_EQ(listed["items"].size(), 1U);
  EXPECT_EQ(listed["items"][0]["state"]["state"], "creating");
  // Short of the delay the saga goes on: still creating, and the request still waits.
  AdvanceClock(599);
  EXPECT_EQ(disk_state("pv-slow"), nlohmann::json({{"state", "creating"}}));
  EXPECT_TRUE(StillPending(pending));
  AdvanceClock(1);
  ASSERT_EQ(pending.wait_for(kSafetyLimit), std::future_status::ready);
  Reply created = pending.get();
  EXPECT_EQ(created.status, 201);
  EXPECT_EQ(created.json()["state"]["state"], "creating");
  EXPECT_EQ(disk_state("pv-slow"), nlohmann::json({{"state", "detached"}}));

  auto deleting = std::async(std::launch::async, [&]() {
    HttpClient slow(sim().base_url());
    return slow.del("/v1/disks/pv-slow?project=demo");
  });
  // The saga's first step removes the record; the 204 waits for the delete delay.
  ASSERT_TRUE(WaitUntil([&]() { return api().get("/v1/disks/pv-slow?project=demo").status == 404; },
                        kSafetyLimit, "disk pv-slow to be gone while its delete is pending"));
  AdvanceClock(299);
  EXPECT_TRUE(StillPending(deleting));
  AdvanceClock(1);
  ASSERT_EQ(deleting.wait_for(kSafetyLimit), std::future_status::ready);
  EXPECT_EQ(deleting.get().status, 204);
}

TEST_F(DelayTest, InstanceStartAndStopTakeTime) {
  control_instance("vm", "stopped");
  EXPECT_EQ(api()
                .post("/v1/instances/vm/start?project=demo", nlohmann::json::object())
                .json()["run_state"],
            "starting");
  EXPECT_EQ(api().get("/v1/instances/vm?project=demo").json()["run_state"], "starting");
  AdvanceClock(299);
  EXPECT_EQ(api().get("/v1/instances/vm?project=demo").json()["run_state"], "starting");
  AdvanceClock(1);
  EXPECT_EQ(api().get("/v1/instances/vm?project=demo").json()["run_state"], "running");
  api().post("/v1/instances/vm/stop?project=demo", nlohmann::json::object());
  EXPECT_EQ(api().get("/v1/instances/vm?project=demo").json()["run_state"], "stopping");
  AdvanceClock(299);
  EXPECT_EQ(api().get("/v1/instances/vm?project=demo").json()["run_state"], "stopping");
  AdvanceClock(1);
  EXPECT_EQ(api().get("/v1/instances/vm?project=demo").json()["run_state"], "stopped");
}

TEST_F(DelayTest, ClockAdvanceReportsTheManualClock) {
  Reply clock = api().get("/__sim/clock");
  ASSERT_EQ(clock.status, 200) << clock.body;
  EXPECT_EQ(clock.json()["manual"], true);
  EXPECT_EQ(clock.json()["now_ms"], 0);
  Reply advanced = api().post("/__sim/clock/advance", {{"ms", 250}});
  ASSERT_EQ(advanced.status, 200) << advanced.body;
  EXPECT_EQ(advanced.json()["now_ms"], 250);
  EXPECT_EQ(api().post("/__sim/clock/advance", {{"ms", -1}}).status, 400);
}

class AsyncTest : public SimTest {
 protected:
  std::vector<std::string> sim_args() const override {
    return {"--manual-clock", "--async", "--create-delay-ms", "400"};
  }
};

TEST_F(AsyncTest, AnswersAtOnceAndFinishesLater) {
  // The clock does not move until the test advances it, so a reply at all shows that async
  // mode answered before the delay.
  auto pending = std::async(std::launch::async, [&]() {
    HttpClient client(sim().base_url());
    return client.post("/v1/disks?project=demo", blank_disk("pv-a"));
  });
  ASSERT_EQ(pending.wait_for(kSafetyLimit), std::future_status::ready)
      << "an async create waited for its saga";
  Reply created = pending.get();
  EXPECT_EQ(created.status, 201);
  EXPECT_EQ(disk_state("pv-a"), nlohmann::json({{"state", "creating"}}));
  expect_error(api().del("/v1/disks/pv-a?project=demo"), 400, "InvalidRequest",
               "disk cannot be deleted in state \"creating\"");
  ASSERT_EQ(api().post("/__sim/clock/advance", {{"ms", 399}}).status, 200);
  EXPECT_EQ(disk_state("pv-a"), nlohmann::json({{"state", "creating"}}));
  ASSERT_EQ(api().post("/__sim/clock/advance", {{"ms", 1}}).status, 200);
  EXPECT_EQ(disk_state("pv-a"), nlohmann::json({{"state", "detached"}}));
}

TEST_F(AsyncTest, ConfigCanSwitchModesAtRunTime) {
  Reply config = api().put("/__sim/config", {{"async", false}, {"create_delay_ms", 0}});
  ASSERT_EQ(config.status, 200);
  EXPECT_EQ(config.json()["async"], false);
  create_disk("pv-b");
  EXPECT_EQ(disk_state("pv-b"), nlohmann::json({{"state", "detached"}}));
}

using RealClockTest = SimTest;

TEST_F(RealClockTest, ClockAdvanceNeedsTheManualClock) {
  Reply refused = api().post("/__sim/clock/advance", {{"ms", 10}});
  EXPECT_EQ(refused.status, 409) << refused.body;
  EXPECT_EQ(api().get("/__sim/clock").json()["manual"], false);
}

class FreezeTest : public SimTest {
 protected:
  std::vector<std::string> sim_args() const override {
    return {"--manual-clock", "--instance-delay-ms", "100"};
  }
  // Starts a create of demo disk `name` on another connection, and returns once the simulator
  // shows the disk as creating (the request is then held by the freeze).
  std::future<Reply> StartCreate(const std::string& name) {
    auto pending = std::async(std::launch::async, [this, name]() {
      HttpClient slow(sim().base_url());
      return slow.post("/v1/disks?project=demo", blank_disk(name));
    });
    EXPECT_TRUE(WaitUntil([&]() { return DiskIs(api(), name, "creating"); }, kSafetyLimit,
                          "disk " + name + " to be visible as creating"));
    return pending;
  }
};

TEST_F(FreezeTest, FrozenCreateHoldsTheResponseUntilRelease) {
  ASSERT_EQ(api().post("/__sim/freeze", {{"kind", "disk"}, {"name", "pv-f"}}).status, 200);
  auto pending = StartCreate("pv-f");
  EXPECT_EQ(disk_state("pv-f"), nlohmann::json({{"state", "creating"}}));
  EXPECT_TRUE(StillPending(pending));
  EXPECT_EQ(api().get("/__sim/state").json()["pending_transitions"], 1);
  ASSERT_EQ(api().post("/__sim/release", {{"kind", "disk"}, {"name", "pv-f"}}).status, 200);
  Reply created = pending.get();
  EXPECT_EQ(created.status, 201);
  EXPECT_EQ(disk_state("pv-f"), nlohmann::json({{"state", "detached"}}));
}

TEST_F(FreezeTest, FaultingAFrozenCreateFailsTheCallAndLeavesFaulted) {
  ASSERT_EQ(api().post("/__sim/freeze", {{"kind", "disk"}, {"name", "pv-g"}}).status, 200);
  auto pending = StartCreate("pv-g");
  ASSERT_EQ(api().post("/__sim/fault", {{"kind", "disk"}, {"name", "pv-g"}}).status, 200);
  expect_error(pending.get(), 500, "Internal", "Internal Server Error");
  EXPECT_EQ(disk_state("pv-g"), nlohmann::json({{"state", "faulted"}}));
  EXPECT_EQ(api().del("/v1/disks/pv-g?project=demo").status, 204);
}

TEST_F(FreezeTest, ResetAnswersRequestsStillWaiting) {
  ASSERT_EQ(api().post("/__sim/freeze", {{"kind", "disk"}, {"name", "pv-h"}}).status, 200);
  auto pending = StartCreate("pv-h");
  ASSERT_EQ(api().post("/__sim/reset", nlohmann::json::object()).status, 200);
  expect_error(pending.get(), 500, "Internal", "Internal Server Error");
  EXPECT_EQ(api().get("/v1/disks/pv-h?project=demo").status, 404);
}

TEST_F(FreezeTest, FrozenInstanceStaysStarting) {
  control_instance("vm", "stopped");
  ASSERT_EQ(api().post("/__sim/freeze", {{"kind", "instance"}, {"name", "vm"}}).status, 200);
  api().post("/v1/instances/vm/start?project=demo", nlohmann::json::object());
  // Well past the instance delay: the step falls due but stays parked while frozen.
  ASSERT_EQ(api().post("/__sim/clock/advance", {{"ms", 1000}}).status, 200);
  EXPECT_EQ(api().get("/v1/instances/vm?project=demo").json()["run_state"], "starting");
  ASSERT_EQ(api().post("/__sim/release", {{"kind", "instance"}, {"name", "vm"}}).status, 200);
  EXPECT_EQ(api().get("/v1/instances/vm?project=demo").json()["run_state"], "running");
  ASSERT_EQ(api().post("/__sim/fault", {{"kind", "instance"}, {"name", "vm"}}).status, 200);
  EXPECT_EQ(api().get("/v1/instances/vm?project=demo").json()["run_state"], "failed");
}

}  // namespace
}  // namespace sim_test
