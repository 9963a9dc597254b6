// Probe through the plugin's socket while Oxide goes away, comes back and switches tokens: the
// real plugin in controller mode against the real oxide-sim, which the tests stop and start again
// on the same port (a new process) and whose accepted tokens they switch with POST
// /__sim/auth/tokens. The plugin runs on the real clock, so the grace is short (0s or 1s) and
// every change is waited for by asking Probe until it answers what is expected.
#include "controller_fixture.h"
#include "support/wait_until.h"

namespace oxide::testing {
namespace {

using grpc::StatusCode;

constexpr const char* kRefusedToken = "oxide-token-probe-refused-51c2";
constexpr const char* kOtherToken = "oxide-token-probe-other-8d04";

class ProbeTest : public ControllerTest {
 protected:
  void StopSim() {
    port_ = sim_->port();
    ASSERT_EQ(sim_->stop(), 0);
  }
  void StartSimAgain() {
    sim_ = std::make_unique<sim_test::SimProcess>(
        std::vector<std::string>{"--port", std::to_string(port_)});
    ASSERT_TRUE(sim_->running());
    ASSERT_EQ(sim_->port(), port_);
    api_ = std::make_unique<sim_test::HttpClient>(sim_->base_url());
  }
  void AcceptTokens(const std::vector<std::string>& tokens) {
    sim_test::Reply reply = api_->post("/__sim/auth/tokens", {{"tokens", tokens}});
    ASSERT_EQ(reply.status, 200) << reply.body;
  }
  // A call that reaches Oxide (GetCapacity: one GET of the utilization, retried a few times
  // when there is no answer).
  grpc::Status AnyOxideCall() {
    csi::v1::GetCapacityResponse response;
    return controller_->GetCapacity(Call().get(), {}, &response);
  }

  int port_ = 0;
};

// (a) The bug of issue 22: Oxide down at start, a token it refuses, then Oxide up.
class ProbeOxideDownAtStartTest : public ProbeTest {
 protected:
  void BeforePluginStart() override {
    setup_->env["OXIDE_TOKEN"] = kRefusedToken;
    // Through the environment: the unreachability is logged at once.
    setup_->env["OXIDE_CSI_PROBE_OXIDE_GRACE"] = "0s";
    StopSim();
  }
};

TEST_F(ProbeOxideDownAtStartTest, ATokenOxideRefusesMakesProbeNotReadyOnceOxideAnswers) {
  ASSERT_TRUE(plugin_->WaitForLog("cannot reach the Oxide API")) << plugin_->Log();
  // Logged when the outage was noted: with no grace, Probe says so from then on.
  ExpectCode(Probe(), StatusCode::FAILED_PRECONDITION, "cannot reach the Oxide API since");
  StartSimAgain();  // it accepts only its own token, not the plugin's
  // Within the backoff cap (30 s) plus a margin for the round trips, not the minute check.
  ExpectCode(ProbeUntil(StatusCode::FAILED_PRECONDITION, "Oxide rejects the API token",
                        std::chrono::seconds(35)),
             StatusCode::FAILED_PRECONDITION, "Oxide rejects the API token");
  ExpectCode(AnyOxideCall(), StatusCode::UNAUTHENTICATED, "token");
  EXPECT_EQ(plugin_->Log().find(kRefusedToken), std::string::npos);
}

class ProbeGraceTest : public ProbeTest {
 protected:
  std::vector<std::string> plugin_args() const override { return {"--probe-oxide-grace=1s"}; }
};

// (b) An outage longer than the grace; then Oxide answers again, noticed with no call.
TEST_F(ProbeGraceTest, AnOutageLongerThanTheGraceIsNotReadyAndReadyAgainWhenOxideAnswers) {
  ASSERT_TRUE(WaitUntil([&] { return CountSimRequests("GET", "project_view") >= 1; }));
  ExpectCode(ProbeUntil(StatusCode::OK), StatusCode::OK);
  StopSim();
  EXPECT_FALSE(AnyOxideCall().ok());
  grpc::Status down = ProbeUntil(StatusCode::FAILED_PRECONDITION, "cannot reach the Oxide API");
  ExpectCode(down, StatusCode::FAILED_PRECONDITION, "cannot reach the Oxide API since 20");
  EXPECT_EQ(down.error_message().back(), 'Z') << down.error_message();  // RFC 3339, UTC
  ASSERT_TRUE(plugin_->WaitForLog("cannot reach the Oxide API: Probe reports not ready"))
      << plugin_->Log();
  StartSimAgain();
  ExpectCode(ProbeUntil(StatusCode::OK), StatusCode::OK);
  ASSERT_TRUE(plugin_->WaitForLog("Oxide answers again")) << plugin_->Log();
  MustCreate("pvc-probe-after-outage");
}

class ProbeLongGraceTest : public ProbeTest {
 protected:
  std::vector<std::string> plugin_args() const override {
    return {"--probe-oxide-grace=1h", "--log-level=debug"};
  }
};

// (c) A short outage inside the grace: seen (and its end seen), Probe ready throughout.
TEST_F(ProbeLongGraceTest, AShortOutageInsideTheGraceKeepsProbeReady) {
  ASSERT_TRUE(WaitUntil([&] { return CountSimRequests("GET", "project_view") >= 1; }));
  StopSim();
  EXPECT_FALSE(AnyOxideCall().ok());
  ASSERT_TRUE(plugin_->WaitForLog("Oxide does not answer")) << plugin_->Log();
  EXPECT_TRUE(Probe().ok());
  StartSimAgain();
  ASSERT_TRUE(plugin_->WaitForLog("Oxide answers again", std::chrono::seconds(45)))
      << plugin_->Log();
  EXPECT_TRUE(Probe().ok());
  EXPECT_EQ(plugin_->Log().find("Probe reports not ready"), std::string::npos) << plugin_->Log();
}

// (d) Oxide stops accepting the plugin's token, then accepts it again.
TEST_F(ProbeTest, ATokenOxideStopsAcceptingIsNotReadyUntilItIsAcceptedAgain) {
  ASSERT_TRUE(WaitUntil([&] { return CountSimRequests("GET", "project_view") >= 1; }));
  AcceptTokens({kOtherToken});
  ExpectCode(AnyOxideCall(), StatusCode::UNAUTHENTICATED, "token");
  ExpectCode(ProbeUntil(StatusCode::FAILED_PRECONDITION, "Oxide rejects the API token"),
             StatusCode::FAILED_PRECONDITION, "Oxide rejects the API token");
  AcceptTokens({sim_test::SimProcess::kToken});
  const auto switched_back = std::chrono::steady_clock::now();
  ExpectCode(ProbeUntil(StatusCode::OK), StatusCode::OK);
  // Within the backoff cap (30 s), plus a margin for the check's round trip.
  EXPECT_LT(std::chrono::steady_clock::now() - switched_back, std::chrono::seconds(35));
  ASSERT_TRUE(plugin_->WaitForLog("Oxide accepts the API token and the project again"))
      << plugin_->Log();
  MustCreate("pvc-probe-accepted-again");
}

}  // namespace
}  // namespace oxide::testing
