// The controller's view of Oxide health (engine/oxide_credentials_check.h) on the ManualClock:
// the real Oxide client against the real oxide-sim, which the tests stop, start again on the same
// port and switch to other tokens. Time moves only when a test says, so the grace and the backoff
// are checked to the millisecond without waiting for them.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "backend_fixture.h"
#include "engine/oxide_credentials_check.h"

namespace engine_test {
namespace {

using backend_test::Status;
using backend_test::StatusCode;
using oxide::engine::OxideCredentialsCheck;
using oxide::engine::Rfc3339Utc;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kOtherToken = "oxide-token-someone-else-7f3e";

class OxideHealthTest : public backend_test::BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    port_ = sim().port();
  }
  void TearDown() override {
    check_.reset();  // before the client the fixture destroys
    BackendTest::TearDown();
  }

  void StartCheck(milliseconds grace = seconds(60)) {
    check_ = std::make_unique<OxideCredentialsCheck>(&clock(), &client(), grace);
    check_->Start();
    ASSERT_TRUE(RunUntilIdle());
  }
  void StopSim() { sim().stop(); }
  // The simulator again on the same port (a new process: nothing of the old one's state).
  void StartSimAgain(std::vector<std::string> args = {}) {
    args.insert(args.end(), {"--port", std::to_string(port_)});
    sim_ = std::make_unique<sim_test::SimProcess>(std::move(args));
    ASSERT_TRUE(sim().running());
    control_ = std::make_unique<sim_test::HttpClient>(sim().base_url());
  }
  void AcceptTokens(const std::vector<std::string>& tokens) {
    sim_test::Reply reply = control().post("/__sim/auth/tokens", {{"tokens", tokens}});
    ASSERT_EQ(reply.status, 200) << reply.body;
  }
  // Some ordinary call (not the check's): its answer reaches the check as any answer does.
  Status AnyCall() { return GetDisk("pv-health-any-call").status(); }

  int port_ = 0;
  std::unique_ptr<OxideCredentialsCheck> check_;
};

TEST_F(OxideHealthTest, ReadyWhenOxideAcceptsTheTokenAndTheProjectExists) {
  StartCheck();
  EXPECT_TRUE(check_->Health().ok()) << check_->Health().message();
}

TEST_F(OxideHealthTest, AnOutageLongerThanTheGraceIsReportedWithItsStartAndEndsOnTheNextAnswer) {
  StartCheck(seconds(60));
  StopSim();
  EXPECT_FALSE(AnyCall().ok());
  const int64_t failed_at = clock().WallMillis();
  EXPECT_TRUE(check_->Health().ok()) << "inside the grace: " << check_->Health().message();
  Elapse(seconds(61));
  Status health = check_->Health();
  EXPECT_EQ(health.code(), StatusCode::kUnavailable);
  // The outage began with the call's failure (its final answer, after the retry layer's waits).
  EXPECT_EQ(health.message(), "cannot reach the Oxide API since " + Rfc3339Utc(failed_at));
  EXPECT_EQ(Rfc3339Utc(oxide::testing::ManualClock::kWallStart), "2025-06-15T15:06:40Z");

  // No call arrives: the check's own retries notice Oxide is back within the backoff cap.
  Elapse(seconds(300));  // long enough for the backoff to reach its cap
  StartSimAgain();
  Elapse(OxideCredentialsCheck::kMaxBackoff);
  EXPECT_TRUE(check_->Health().ok()) << check_->Health().message();
}

TEST_F(OxideHealthTest, ChecksWhileUnreachableBackOffFromOneSecondToThirty) {
  StartCheck(seconds(60));
  StopSim();
  const size_t before = clock().delays_started().size();
  EXPECT_FALSE(AnyCall().ok());
  Elapse(seconds(200));
  std::vector<milliseconds> check_delays;
  for (size_t i = before; i < clock().delays_started().size(); ++i) {
    milliseconds delay = clock().delays_started()[i];
    // The check's timers are whole seconds from 1 s to 30 s; the retry layer's are not.
    if (delay >= seconds(1) && delay <= seconds(30) && delay.count() % 1000 == 0)
      check_delays.push_back(delay);
  }
  ASSERT_GE(check_delays.size(), 6u);
  EXPECT_EQ(check_delays.front(), seconds(1));
  EXPECT_EQ(check_delays.back(), seconds(30));
  for (size_t i = 1; i < check_delays.size(); ++i)
    EXPECT_GE(check_delays[i], check_delays[i - 1]);
}

TEST_F(OxideHealthTest, AShortOutageInsideTheGraceKeepsItReady) {
  StartCheck(seconds(60));
  StopSim();
  EXPECT_FALSE(AnyCall().ok());
  Elapse(seconds(20));
  EXPECT_TRUE(check_->Health().ok()) << check_->Health().message();
  StartSimAgain();
  Elapse(seconds(30));  // the next check answers: the outage is over
  Elapse(seconds(60));  // well past where the grace would have ended
  EXPECT_TRUE(check_->Health().ok()) << check_->Health().message();
}

TEST_F(OxideHealthTest, ZeroGraceReportsUnreachabilityWithTheFirstFailedAnswer) {
  StartCheck(milliseconds(0));
  StopSim();
  EXPECT_FALSE(AnyCall().ok());
  EXPECT_EQ(check_->Health().code(), StatusCode::kUnavailable) << check_->Health().message();
}

// The bug of issue 22: Oxide unreachable at start, a token it refuses, then Oxide comes up.
TEST_F(OxideHealthTest, ATokenNeverCheckedBecauseOxideWasDownIsCheckedOnceItAnswers) {
  StopSim();
  StartCheck(seconds(60));
  Elapse(seconds(10));  // the first check and a few rechecks find no Oxide
  EXPECT_TRUE(check_->Health().ok()) << "unverified, inside the grace";
  StartSimAgain({"--token", kOtherToken});
  Elapse(OxideCredentialsCheck::kMaxBackoff);
  EXPECT_EQ(check_->Health().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(check_->Health().message().find("Oxide rejects the API token"), std::string::npos)
      << check_->Health().message();
}

TEST_F(OxideHealthTest, AStray401ThatTheCheckDoesNotConfirmChangesNothing) {
  StartCheck();
  AcceptTokens({kOtherToken});
  EXPECT_EQ(AnyCall().code(), StatusCode::kUnauthenticated);
  EXPECT_TRUE(check_->Health().ok()) << "a 401 before its check: " << check_->Health().message();
  AcceptTokens({sim_test::SimProcess::kToken});  // before the check asks
  const int asked = CountRequests("GET", "current_user_view");
  Elapse(seconds(1));
  EXPECT_EQ(CountRequests("GET", "current_user_view"), asked + 1) << "the 401 starts a check";
  EXPECT_TRUE(check_->Health().ok()) << check_->Health().message();
}

TEST_F(OxideHealthTest, A401ThatTheCheckConfirmsMakesItNotReadyUntilOxideAcceptsTheTokenAgain) {
  StartCheck();
  AcceptTokens({kOtherToken});
  EXPECT_EQ(AnyCall().code(), StatusCode::kUnauthenticated);
  Elapse(milliseconds(1));
  EXPECT_EQ(check_->Health().code(), StatusCode::kFailedPrecondition);
  Elapse(seconds(120));  // rechecks go on, backing off to the cap
  AcceptTokens({sim_test::SimProcess::kToken});
  Elapse(OxideCredentialsCheck::kMaxBackoff);
  EXPECT_TRUE(check_->Health().ok()) << check_->Health().message();
}

}  // namespace
}  // namespace engine_test
