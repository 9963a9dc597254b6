// The wait for spec.providerID at first boot (node/provider_id_wait.h) against the stand-in
// Kubernetes API server (support/fake_kubernetes_api.h; real HTTPS, real libcurl, real parsing)
// and a ManualClock: each read happens synchronously inside the timer the test's Advance runs,
// so the test drives the waiting minute by minute without sleeping.
#include "node/provider_id_wait.h"

#include <gtest/gtest.h>

#include <optional>

#include "support/fake_kubernetes_api.h"
#include "support/log_capture.h"
#include "support/manual_clock.h"
#include "util/log.h"

namespace oxide::node {
namespace {

using namespace std::chrono_literals;
using testing::FakeKubernetesApi;

constexpr const char* kUuid = "6f0c4e3b-1d2a-4c5b-9e8f-0a1b2c3d4e5f";
constexpr const char* kTaintLine =
    "waiting for the cloud controller manager to set spec.providerID on Node worker-1; taint "
    "node.cloudprovider.kubernetes.io/uninitialized present";
constexpr const char* kFlagLine =
    "waiting for the cloud controller manager to set spec.providerID on Node worker-1; "
    "--wait-for-provider-id is set";

class ProviderIdWaitTest : public ::testing::Test {
 protected:
  // The wait for worker-1, reading the Node from the stand-in server on the test thread.
  ProviderIdWait& MakeWait(bool wait_flag) {
    const KubernetesApiOptions api = api_.ClientOptions();
    wait_ = std::make_unique<ProviderIdWait>(
        &clock_,
        ProviderIdWait::Options{.node_name = "worker-1", .wait_for_provider_id = wait_flag},
        [api](ProviderIdWait::ReadDone done) { done(ReadKubernetesNode(api, "worker-1")); },
        [this](StatusOr<std::string> id) {
          EXPECT_FALSE(result_.has_value()) << "finished twice";
          result_ = std::move(id);
        });
    return *wait_;
  }
  void Answer(const std::string& provider_id, bool tainted) {
    api_.SetAnswer("worker-1",
                   {.status = 200,
                    .body = FakeKubernetesApi::NodeJson("worker-1", provider_id, tainted),
                    .never = false});
  }
  static KubernetesNode Tainted() { return {.provider_id = "", .uninitialized = true}; }

  std::string Log() const { return log_.Text(); }
  // The delays the wait asked for between reads (the report timer's 30 s left out).
  std::vector<std::chrono::milliseconds> ReadDelays() const {
    std::vector<std::chrono::milliseconds> delays;
    for (auto d : clock_.delays_started()) {
      if (d != 30s) delays.push_back(d);
    }
    return delays;
  }

  testing::LogCapture log_;
  FakeKubernetesApi api_;
  testing::ManualClock clock_;
  std::unique_ptr<ProviderIdWait> wait_;
  std::optional<StatusOr<std::string>> result_;
};

TEST_F(ProviderIdWaitTest, ATaintedNodeWaitsWithoutANameThenTakesTheProviderId) {
  Answer("", true);
  ProviderIdWait& wait = MakeWait(false);
  wait.Start(Tainted());
  clock_.Advance(20s);
  EXPECT_FALSE(result_.has_value()) << "a name was taken while the taint is present";
  EXPECT_TRUE(wait.waiting());
  EXPECT_EQ(api_.requests(), 4);  // at 1, 3, 7 and 15 s
  // The CCM sets the providerID (and drops the taint a moment later).
  Answer(std::string("oxide://") + kUuid, true);
  ASSERT_TRUE(clock_.AdvanceToNextTimer());
  ASSERT_TRUE(result_.has_value());
  ASSERT_TRUE(result_->ok()) << result_->status().ToString();
  EXPECT_EQ(**result_, kUuid);
  EXPECT_FALSE(wait.waiting());
  EXPECT_EQ(clock_.pending_timers(), 0U);
  EXPECT_NE(Log().find("Node worker-1 has spec.providerID now"), std::string::npos) << Log();
  EXPECT_EQ(Log().find("name:"), std::string::npos) << Log();
}

TEST_F(ProviderIdWaitTest, ReadsBackOffFromOneSecondToTenSeconds) {
  Answer("", true);
  MakeWait(false).Start(Tainted());
  clock_.Advance(60s);
  std::vector<std::chrono::milliseconds> delays = ReadDelays();
  ASSERT_GE(delays.size(), 7U);
  EXPECT_EQ(std::vector<std::chrono::milliseconds>(delays.begin(), delays.begin() + 7),
            (std::vector<std::chrono::milliseconds>{1s, 2s, 4s, 8s, 10s, 10s, 10s}));
  EXPECT_EQ(api_.requests(), 8);  // at 1, 3, 7, 15, 25, 35, 45, 55 s
}

TEST_F(ProviderIdWaitTest, OneLineEveryThirtySecondsOfWaiting) {
  Answer("", true);
  MakeWait(false).Start(Tainted());
  EXPECT_EQ(log_.Count(kTaintLine), 1) << "the first line comes at once";
  clock_.Advance(29s);
  EXPECT_EQ(log_.Count(kTaintLine), 1) << Log();
  clock_.Advance(1s);
  EXPECT_EQ(log_.Count(kTaintLine), 2) << Log();
  clock_.Advance(60s);
  EXPECT_EQ(log_.Count(kTaintLine), 4) << Log();
  EXPECT_NE(Log().find("waited_seconds=90"), std::string::npos) << Log();
  EXPECT_FALSE(result_.has_value());
}

TEST_F(ProviderIdWaitTest, TheFlagWaitsWithoutTheTaint) {
  Answer("", false);
  ProviderIdWait& wait = MakeWait(true);
  wait.Start({.provider_id = "", .uninitialized = false});
  clock_.Advance(5min);
  EXPECT_FALSE(result_.has_value()) << "the flag never settles for the name";
  EXPECT_TRUE(wait.waiting());
  EXPECT_EQ(log_.Count(kFlagLine), 11) << Log();  // at 0, 30 s, ... 300 s
  Answer(std::string("oxide://") + kUuid, false);
  ASSERT_TRUE(clock_.AdvanceToNextTimer());
  ASSERT_TRUE(result_.has_value() && result_->ok());
  EXPECT_EQ(**result_, kUuid);
}

// The CCM removed the taint without setting a providerID: without the flag the node takes its
// name after all, and says so.
TEST_F(ProviderIdWaitTest, TheTaintGoneWithoutAProviderIdGivesTheNameWithAWarning) {
  Answer("", true);
  MakeWait(false).Start(Tainted());
  clock_.Advance(10s);
  EXPECT_FALSE(result_.has_value());
  Answer("", false);
  ASSERT_TRUE(clock_.AdvanceToNextTimer());
  ASSERT_TRUE(result_.has_value());
  ASSERT_TRUE(result_->ok()) << result_->status().ToString();
  EXPECT_EQ(**result_, "name:worker-1");
  EXPECT_NE(Log().find("level=warn msg=\"Node worker-1 no longer carries the taint "
                       "node.cloudprovider.kubernetes.io/uninitialized but has no "
                       "spec.providerID"),
            std::string::npos)
      << Log();
  EXPECT_EQ(clock_.pending_timers(), 0U);
}

TEST_F(ProviderIdWaitTest, TheTaintGoneWithTheFlagKeepsWaiting) {
  Answer("", true);
  MakeWait(true).Start(Tainted());
  clock_.Advance(10s);
  Answer("", false);
  clock_.Advance(60s);
  EXPECT_FALSE(result_.has_value());
  EXPECT_GE(log_.Count(kFlagLine), 2) << "the lines now name the flag: " << Log();
}

TEST_F(ProviderIdWaitTest, FailedReadsKeepWaitingAndTheLineSaysWhy) {
  api_.SetAnswer("worker-1", {.status = 503, .body = "{}", .never = false});
  MakeWait(false).Start(Tainted());
  clock_.Advance(30s);
  EXPECT_FALSE(result_.has_value());
  EXPECT_NE(Log().find("level=warn msg=\"" + std::string(kTaintLine)), std::string::npos) << Log();
  EXPECT_NE(Log().find("last_read_error=\"GET /api/v1/nodes/worker-1: HTTP 503"), std::string::npos)
      << Log();
  Answer(std::string("oxide://") + kUuid, false);
  ASSERT_TRUE(clock_.AdvanceToNextTimer());
  ASSERT_TRUE(result_.has_value() && result_->ok());
  EXPECT_EQ(**result_, kUuid);
}

TEST_F(ProviderIdWaitTest, AProviderIdOfAnotherFormEndsTheWaitWithAnError) {
  Answer("", true);
  MakeWait(false).Start(Tainted());
  Answer("aws:///i-0abc", false);
  ASSERT_TRUE(clock_.AdvanceToNextTimer());
  ASSERT_TRUE(result_.has_value());
  ASSERT_FALSE(result_->ok());
  EXPECT_NE(result_->status().message().find("\"aws:///i-0abc\""), std::string::npos);
}

TEST_F(ProviderIdWaitTest, StopEndsTheWaitWithoutAnAnswer) {
  Answer("", true);
  ProviderIdWait& wait = MakeWait(false);
  wait.Start(Tainted());
  clock_.Advance(5s);
  wait.Stop();
  EXPECT_EQ(clock_.pending_timers(), 0U);
  const int requests = api_.requests();
  EXPECT_FALSE(clock_.AdvanceToNextTimer());
  EXPECT_EQ(api_.requests(), requests);
  EXPECT_FALSE(result_.has_value());
}

}  // namespace
}  // namespace oxide::node
