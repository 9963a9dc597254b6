// The controller's view of Oxide health (engine/oxide_health.h) on the ManualClock:
// the real Oxide client against the real oxide-sim, which the tests stop, start again on the same
// port and switch to other tokens. Time moves only when a test says, so the grace and the backoff
// are checked to the millisecond, and a 30-minute outage takes no longer than a short one.
// What is checked is what an operator sees: the gauges oxide_csi_oxide_api_up, _token_valid and
// _project_found, and the log records (one error when a thing goes bad, one info when it is
// well again). Probe no longer reads this view at all (its integration test: probe_test.cc).
#include "engine/oxide_health.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend_fixture.h"
#include "metrics/plugin_metrics.h"
#include "support/log_capture.h"
#include "util/log.h"

namespace engine_test {
namespace {

using backend_test::Status;
using backend_test::StatusCode;
using oxide::engine::OxideHealth;
using oxide::engine::Rfc3339Utc;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr const char* kOtherToken = "oxide-token-someone-else-7f3e";
constexpr const char* kUnreachable = "cannot reach the Oxide API";
constexpr const char* kAnswersAgain = "Oxide answers again";
constexpr const char* kRejected = "Oxide rejects the API token";
constexpr const char* kAcceptedAgain = "Oxide accepts the API token and the project again";

double Gauge(oxide::metrics::GaugeFamily& family) {
  return family.With({}).value();
}
double ApiUp() {
  return Gauge(oxide::metrics::Families().oxide_api_up);
}
double TokenValid() {
  return Gauge(oxide::metrics::Families().oxide_token_valid);
}
double ProjectFound() {
  return Gauge(oxide::metrics::Families().oxide_project_found);
}

class OxideHealthTest : public backend_test::BackendTest {
 protected:
  void SetUp() override {
    oxide::log::Configure(oxide::log::Level::kDebug, oxide::log::Format::kJson);
    BackendTest::SetUp();
    port_ = sim().port();
  }
  void TearDown() override {
    check_.reset();  // before the client the fixture destroys
    BackendTest::TearDown();
    oxide::log::Configure(oxide::log::Level::kInfo, oxide::log::Format::kText);
  }

  void StartCheck(milliseconds grace = seconds(60)) {
    check_ = std::make_unique<OxideHealth>(&clock(), &client(), grace);
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

  // The log records written so far at `level` (and with message `msg`, when given).
  std::vector<nlohmann::json> Records(const std::string& level, const std::string& msg = "") {
    std::vector<nlohmann::json> found;
    for (const std::string& line : log_.Lines()) {
      nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
      if (record.is_discarded()) continue;
      if (record.value("level", "") == level && (msg.empty() || record.value("msg", "") == msg))
        found.push_back(record);
    }
    return found;
  }
  std::string Log() const { return log_.Text(); }

  oxide::testing::LogCapture log_;  // every record while the test runs
  int port_ = 0;
  std::unique_ptr<OxideHealth> check_;
};

TEST_F(OxideHealthTest, EveryGaugeReadsOneWhenOxideAcceptsTheTokenAndTheProjectExists) {
  StartCheck();
  EXPECT_EQ(ApiUp(), 1);
  EXPECT_EQ(TokenValid(), 1);
  EXPECT_EQ(ProjectFound(), 1);
  EXPECT_TRUE(Records("error").empty()) << Log();
}

// Issue 34: an outage far longer than the grace is published, once, and never more than that:
// both gauges read 0 when the grace ends, one error record says since when, and Oxide answering
// again sets them back to 1 with one info record. (On the old code Probe turned not ready here.)
TEST_F(OxideHealthTest, AThirtyMinuteOutageShowsOnBothGaugesAtTheGraceWithOneRecordEachWay) {
  StartCheck(seconds(60));
  StopSim();
  EXPECT_FALSE(AnyCall().ok());
  const int64_t failed_at = clock().WallMillis();  // the outage began with the call's failure
  Elapse(seconds(60) - milliseconds(1));
  EXPECT_EQ(ApiUp(), 1) << "inside the grace";
  EXPECT_EQ(TokenValid(), 1) << "inside the grace";
  EXPECT_TRUE(Records("error").empty()) << Log();
  Elapse(milliseconds(1));
  EXPECT_EQ(ApiUp(), 0) << "the grace is over";
  EXPECT_EQ(TokenValid(), 0) << "a token cannot be known good while Oxide does not answer";
  EXPECT_EQ(ProjectFound(), 1) << "nothing was said about the project";

  Elapse(minutes(30));  // dozens of failed checks (the backoff reaches its 30 s cap)
  EXPECT_EQ(ApiUp(), 0);
  EXPECT_EQ(TokenValid(), 0);
  const std::vector<nlohmann::json> errors = Records("error");
  ASSERT_EQ(errors.size(), 1u) << Log();
  EXPECT_EQ(errors[0]["msg"], kUnreachable);
  EXPECT_EQ(errors[0]["since"], Rfc3339Utc(failed_at));
  EXPECT_EQ(errors[0]["grace"], "60s");
  EXPECT_EQ(Rfc3339Utc(oxide::testing::ManualClock::kWallStart), "2025-06-15T15:06:40Z");

  // No call arrives: the check's own retries notice Oxide is back within the backoff cap.
  StartSimAgain();
  Elapse(OxideHealth::kMaxBackoff);
  EXPECT_EQ(ApiUp(), 1);
  EXPECT_EQ(TokenValid(), 1);
  const std::vector<nlohmann::json> recovered = Records("info", kAnswersAgain);
  ASSERT_EQ(recovered.size(), 1u) << Log();
  EXPECT_EQ(recovered[0]["since"], Rfc3339Utc(failed_at));
  EXPECT_EQ(Records("error").size(), 1u) << Log();
  Elapse(minutes(5));
  EXPECT_EQ(Records("info", kAnswersAgain).size(), 1u) << "once per transition, not per check";
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

TEST_F(OxideHealthTest, AShortOutageInsideTheGraceChangesNoGaugeAndLogsNoError) {
  StartCheck(seconds(60));
  StopSim();
  EXPECT_FALSE(AnyCall().ok());
  Elapse(seconds(20));
  EXPECT_EQ(ApiUp(), 1);
  StartSimAgain();
  Elapse(seconds(30));  // the next check answers: the outage is over
  Elapse(seconds(60));  // well past where the grace would have ended
  EXPECT_EQ(ApiUp(), 1);
  EXPECT_EQ(TokenValid(), 1);
  EXPECT_TRUE(Records("error").empty()) << Log();
  EXPECT_EQ(Records("debug", kAnswersAgain).size(), 1u) << "a blip is only a debug record";
}

TEST_F(OxideHealthTest, ZeroGraceShowsUnreachabilityWithTheFirstFailedAnswer) {
  StartCheck(milliseconds(0));
  StopSim();
  EXPECT_FALSE(AnyCall().ok());
  EXPECT_EQ(ApiUp(), 0);
  EXPECT_EQ(TokenValid(), 0);
  EXPECT_EQ(Records("error", kUnreachable).size(), 1u) << Log();
}

// The bug of issue 22: Oxide unreachable at start, a token it refuses, then Oxide comes up.
TEST_F(OxideHealthTest, ATokenNeverCheckedBecauseOxideWasDownIsCheckedOnceItAnswers) {
  StopSim();
  StartCheck(seconds(60));
  Elapse(seconds(10));  // the first check and a few rechecks find no Oxide
  EXPECT_EQ(TokenValid(), 1) << "unverified, inside the grace";
  StartSimAgain({"--token", kOtherToken});
  Elapse(OxideHealth::kMaxBackoff);
  EXPECT_EQ(ApiUp(), 1);
  EXPECT_EQ(TokenValid(), 0);
  const std::vector<nlohmann::json> errors = Records("error");
  ASSERT_EQ(errors.size(), 1u) << Log();
  EXPECT_EQ(errors[0]["msg"], kRejected);
}

TEST_F(OxideHealthTest, AStray401ThatTheCheckDoesNotConfirmChangesNothing) {
  StartCheck();
  AcceptTokens({kOtherToken});
  EXPECT_EQ(AnyCall().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(TokenValid(), 1) << "a 401 before its check";
  AcceptTokens({sim_test::SimProcess::kToken});  // before the check asks
  const int asked = CountRequests("GET", "current_user_view");
  Elapse(seconds(1));
  EXPECT_EQ(CountRequests("GET", "current_user_view"), asked + 1) << "the 401 starts a check";
  EXPECT_EQ(TokenValid(), 1);
  EXPECT_TRUE(Records("error").empty()) << Log();
}

TEST_F(OxideHealthTest, AConfirmed401ZeroesTheTokenGaugeOnceUntilOxideAcceptsTheTokenAgain) {
  StartCheck();
  AcceptTokens({kOtherToken});
  EXPECT_EQ(AnyCall().code(), StatusCode::kUnauthenticated);
  Elapse(milliseconds(1));
  EXPECT_EQ(TokenValid(), 0);
  EXPECT_EQ(ApiUp(), 1) << "Oxide answers: it refuses the token";
  Elapse(seconds(120));  // rechecks go on, backing off to the cap
  EXPECT_EQ(Records("error", kRejected).size(), 1u) << "once, not per check:\n" << Log();
  AcceptTokens({sim_test::SimProcess::kToken});
  Elapse(OxideHealth::kMaxBackoff);
  EXPECT_EQ(TokenValid(), 1);
  EXPECT_EQ(Records("info", kAcceptedAgain).size(), 1u) << Log();
  EXPECT_EQ(Records("error").size(), 1u) << Log();
}

TEST_F(OxideHealthTest, AMissingProjectZeroesItsGaugeUntilOxideHasIt) {
  backend_test::ClientConfig config = DefaultConfig();
  config.project = "health-missing-project";
  Rebuild(config);
  StartCheck();
  EXPECT_EQ(ProjectFound(), 0);
  EXPECT_EQ(ApiUp(), 1);
  EXPECT_EQ(TokenValid(), 1);
  EXPECT_EQ(Records("error", "the Oxide project is missing").size(), 1u) << Log();
  ASSERT_EQ(control().post("/__sim/projects", {{"name", "health-missing-project"}}).status, 201);
  Elapse(minutes(1));  // the next periodic check
  EXPECT_EQ(ProjectFound(), 1);
  EXPECT_EQ(Records("info", kAcceptedAgain).size(), 1u) << Log();
  EXPECT_EQ(Records("error").size(), 1u) << Log();
}

}  // namespace
}  // namespace engine_test
