// Liveness is local (issue 34): the real plugin against the real oxide-sim, which the tests stop
// and start again on the same port (a new process) and whose accepted tokens they switch with
// POST /__sim/auth/tokens. Whatever Oxide does, Probe stays ready and /healthz answers 200; what
// is wrong with Oxide shows on the gauges oxide_csi_oxide_api_up and oxide_csi_oxide_token_valid
// and in one log record per change. The plugin runs on the real clock, so the grace is short (0s
// or 1s) and every change is waited for by scraping until the gauge says what is expected.
// (The same rules to the millisecond, over a 30-minute outage: test/engine/oxide_health_test.cc.)
#include "controller_fixture.h"
#include "support/metrics_scrape.h"
#include "support/wait_until.h"

namespace oxide::testing {
namespace {

using grpc::StatusCode;

constexpr const char* kRefusedToken = "oxide-token-probe-refused-51c2";
constexpr const char* kOtherToken = "oxide-token-probe-other-8d04";
constexpr const char* kApiUp = "oxide_csi_oxide_api_up";
constexpr const char* kTokenValid = "oxide_csi_oxide_token_valid";
// The check's own record (calls that fail meanwhile say "cannot reach the Oxide API" too).
constexpr const char* kUnreachableRecord = "msg=\"cannot reach the Oxide API\"";

size_t Count(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
    ++count;
  return count;
}

class ProbeTest : public ControllerTest {
 protected:
  std::vector<std::string> plugin_args() const override {
    std::vector<std::string> args = extra_args();
    args.push_back("--metrics-address=127.0.0.1:0");
    return args;
  }
  virtual std::vector<std::string> extra_args() const { return {}; }

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
  double Gauge(const std::string& name) { return ScrapeOf(*plugin_).Sum(name); }
  // Scrapes until gauge `name` reads `value`; `limit` is a safety net only.
  bool GaugeBecomes(const std::string& name, double value,
                    std::chrono::milliseconds limit = std::chrono::seconds(45)) {
    return WaitUntil([&] { return Gauge(name) == value; }, limit, std::chrono::milliseconds(50));
  }
  // What the plugin itself says about itself: ready and alive.
  void ExpectReadyAndLive() {
    ExpectCode(Probe(), StatusCode::OK);
    sim_test::Reply live = HealthzOf(*plugin_);
    EXPECT_EQ(live.status, 200) << live.body;
  }

  int port_ = 0;
};

// (a) The bug of issue 22: Oxide down at start, a token it refuses, then Oxide up.
class ProbeOxideDownAtStartTest : public ProbeTest {
 protected:
  void BeforePluginStart() override {
    setup_->env["OXIDE_TOKEN"] = kRefusedToken;
    // Through the environment: the unreachability is published at once.
    setup_->env["OXIDE_CSI_PROBE_OXIDE_GRACE"] = "0s";
    StopSim();
  }
};

TEST_F(ProbeOxideDownAtStartTest, UnreachableThenARefusedTokenShowOnTheGaugesProbeStaysReady) {
  ASSERT_TRUE(plugin_->WaitForLog(kUnreachableRecord)) << plugin_->Log();
  EXPECT_EQ(Gauge(kApiUp), 0);
  EXPECT_EQ(Gauge(kTokenValid), 0);
  ExpectReadyAndLive();
  StartSimAgain();  // it accepts only its own token, not the plugin's
  // Within the backoff cap (30 s) plus a margin for the round trips, not the minute check.
  ASSERT_TRUE(GaugeBecomes(kApiUp, 1, std::chrono::seconds(35))) << plugin_->Log();
  ASSERT_TRUE(GaugeBecomes(kTokenValid, 0));
  ASSERT_TRUE(plugin_->WaitForLog("Oxide rejects the API token")) << plugin_->Log();
  ExpectReadyAndLive();
  ExpectCode(AnyOxideCall(), StatusCode::UNAUTHENTICATED, "token");
  EXPECT_EQ(plugin_->Log().find(kRefusedToken), std::string::npos);
}

class ProbeGraceTest : public ProbeTest {
 protected:
  std::vector<std::string> extra_args() const override { return {"--probe-oxide-grace=1s"}; }
};

// (b) An outage longer than the grace: both gauges read 0, one error record, Probe and /healthz
// fine throughout; then Oxide answers again, noticed with no call.
TEST_F(ProbeGraceTest, AnOutageLongerThanTheGraceZeroesTheGaugesAndLeavesProbeReady) {
  ASSERT_TRUE(WaitUntil([&] { return CountSimRequests("GET", "project_view") >= 1; }));
  EXPECT_EQ(Gauge(kApiUp), 1);
  EXPECT_EQ(Gauge(kTokenValid), 1);
  StopSim();
  EXPECT_FALSE(AnyOxideCall().ok());
  ASSERT_TRUE(GaugeBecomes(kApiUp, 0)) << plugin_->Log();
  EXPECT_EQ(Gauge(kTokenValid), 0);
  ExpectReadyAndLive();
  const std::string record = LogLineWith(plugin_->Log(), kUnreachableRecord);
  EXPECT_NE(record.find("level=error"), std::string::npos) << record;
  EXPECT_NE(record.find("since=20"), std::string::npos) << record;  // RFC 3339, UTC
  // Further failed calls and checks neither log it again nor change Probe.
  EXPECT_FALSE(AnyOxideCall().ok());
  ExpectReadyAndLive();
  StartSimAgain();
  ASSERT_TRUE(GaugeBecomes(kApiUp, 1)) << plugin_->Log();
  EXPECT_EQ(Gauge(kTokenValid), 1);
  ASSERT_TRUE(plugin_->WaitForLog("Oxide answers again")) << plugin_->Log();
  EXPECT_EQ(Count(plugin_->Log(), kUnreachableRecord), 1u) << plugin_->Log();
  MustCreate("pvc-probe-after-outage");
}

class ProbeLongGraceTest : public ProbeTest {
 protected:
  std::vector<std::string> extra_args() const override {
    return {"--probe-oxide-grace=1h", "--log-level=debug"};
  }
};

// (c) A short outage inside the grace: seen (and its end seen) in the debug log, no gauge moves.
TEST_F(ProbeLongGraceTest, AShortOutageInsideTheGraceMovesNoGauge) {
  ASSERT_TRUE(WaitUntil([&] { return CountSimRequests("GET", "project_view") >= 1; }));
  StopSim();
  EXPECT_FALSE(AnyOxideCall().ok());
  ASSERT_TRUE(plugin_->WaitForLog("Oxide does not answer")) << plugin_->Log();
  EXPECT_EQ(Gauge(kApiUp), 1);
  ExpectReadyAndLive();
  StartSimAgain();
  ASSERT_TRUE(plugin_->WaitForLog("Oxide answers again", std::chrono::seconds(45)))
      << plugin_->Log();
  EXPECT_EQ(Gauge(kApiUp), 1);
  EXPECT_EQ(Gauge(kTokenValid), 1);
  EXPECT_EQ(plugin_->Log().find(kUnreachableRecord), std::string::npos) << plugin_->Log();
}

// (d) Oxide stops accepting the plugin's token, then accepts it again.
TEST_F(ProbeTest, ATokenOxideStopsAcceptingZeroesTheTokenGaugeUntilItIsAcceptedAgain) {
  ASSERT_TRUE(WaitUntil([&] { return CountSimRequests("GET", "project_view") >= 1; }));
  AcceptTokens({kOtherToken});
  ExpectCode(AnyOxideCall(), StatusCode::UNAUTHENTICATED, "token");
  ASSERT_TRUE(GaugeBecomes(kTokenValid, 0)) << plugin_->Log();
  EXPECT_EQ(Gauge(kApiUp), 1) << "Oxide answers; it refuses the token";
  ExpectReadyAndLive();
  AcceptTokens({sim_test::SimProcess::kToken});
  const auto switched_back = std::chrono::steady_clock::now();
  ASSERT_TRUE(GaugeBecomes(kTokenValid, 1)) << plugin_->Log();
  // Within the backoff cap (30 s), plus a margin for the check's round trip.
  EXPECT_LT(std::chrono::steady_clock::now() - switched_back, std::chrono::seconds(35));
  ASSERT_TRUE(plugin_->WaitForLog("Oxide accepts the API token and the project again"))
      << plugin_->Log();
  EXPECT_EQ(Count(plugin_->Log(), "msg=\"Oxide rejects the API token\""), 1u) << plugin_->Log();
  MustCreate("pvc-probe-accepted-again");
}

// The node plugin has no Oxide client: its Oxide gauges are declared but have no sample, so a
// dashboard or an alert never reads a made-up 1 (or 0) from a node.
TEST(NodeProbeTest, ANodePluginExportsNoOxideHealthSamplesAndIsReadyAndLive) {
  PluginSetup setup("node");
  setup.args.push_back("--metrics-address=127.0.0.1:0");
  std::unique_ptr<PluginProcess> plugin = setup.Start();
  const Scrape scrape = ScrapeOf(*plugin);
  for (const char* family : {kApiUp, kTokenValid, "oxide_csi_oxide_project_found",
                             "oxide_csi_oldest_pending_operation_start_time_seconds"}) {
    EXPECT_EQ(scrape.types.count(family), 1u) << family;
    for (const auto& [series, value] : scrape.samples)
      EXPECT_NE(series.rfind(family, 0), 0u) << series << " " << value;
  }
  sim_test::Reply live = HealthzOf(*plugin);
  EXPECT_EQ(live.status, 200) << live.body;
  grpc::ClientContext context;
  csi::v1::ProbeResponse probe;
  ExpectCode(
      csi::v1::Identity::NewStub(UnixChannel(setup.socket_path()))->Probe(&context, {}, &probe),
      StatusCode::OK);
  EXPECT_TRUE(probe.ready().value());
}

}  // namespace
}  // namespace oxide::testing
