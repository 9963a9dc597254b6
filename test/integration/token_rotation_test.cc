// Token rotation through the plugin's socket: the real plugin in controller mode reads its token
// from a real Secret volume that the test updates the way the kubelet does, against the real
// simulator, which accepts the tokens the test says. No restart in between.
#include "controller_fixture.h"
#include "support/metrics_scrape.h"
#include "support/secret_volume.h"
#include "support/wait_until.h"

namespace oxide::testing {
namespace {

using grpc::StatusCode;

constexpr const char* kTokenA = "oxide-token-plugin-rotation-a-2b7d";
constexpr const char* kTokenB = "oxide-token-plugin-rotation-b-e04c";
constexpr const char* kTokenC = "oxide-token-plugin-rotation-c-9a31";

class PluginTokenRotationTest : public ControllerTest {
 protected:
  std::vector<std::string> plugin_args() const override {
    return {"--metrics-address=127.0.0.1:0"};
  }
  void BeforePluginStart() override {
    AcceptTokens({kTokenA});
    setup_->env.erase("OXIDE_TOKEN");
    setup_->env["OXIDE_TOKEN_FILE"] = volume_.token_path();
  }
  void SetUp() override {
    ControllerTest::SetUp();
    // The start-up check of the token and the project has run.
    ASSERT_TRUE(WaitUntil([&] { return CountSimRequests("GET", "project_view") >= 1; }));
  }
  void TearDown() override {
    ControllerTest::TearDown();  // stops the plugin: its log is complete
    const std::string log = ReadFile(setup_->log_path());
    EXPECT_FALSE(log.empty());
    for (const char* token : {kTokenA, kTokenB, kTokenC})
      EXPECT_EQ(log.find(token), std::string::npos) << "a token reached the log:\n" << log;
  }

  void AcceptTokens(const std::vector<std::string>& tokens) {
    sim_test::Reply reply = api_->post("/__sim/auth/tokens", {{"tokens", tokens}});
    ASSERT_EQ(reply.status, 200) << reply.body;
  }
  int CountStatus(int status) {
    const nlohmann::json log = api_->get("/__sim/requests").json();
    int count = 0;
    for (const auto& entry : log["requests"])
      count += entry.value("status", 0) == status;
    return count;
  }

  SecretVolume volume_{kTokenA};
};

TEST_F(PluginTokenRotationTest, AKubeletSwapReachesTheRunningPluginAndNoCallFails) {
  AcceptTokens({kTokenA, kTokenB});
  const csi::v1::Volume before = MustCreate("pvc-rotation-before");
  volume_.Swap(kTokenB);
  ASSERT_TRUE(plugin_->WaitForLog("reloaded the Oxide API token from " + volume_.token_path()))
      << plugin_->Log();
  AcceptTokens({kTokenB});  // the old token is revoked
  MustCreate("pvc-rotation-after");
  EXPECT_TRUE(Delete(before.volume_id()).ok());
  EXPECT_TRUE(Probe().ok());
  EXPECT_EQ(CountStatus(401), 0);
  EXPECT_EQ(ScrapeOf(*plugin_).Sum("oxide_csi_token_reloads_total"), 1);
}

TEST_F(PluginTokenRotationTest, OxideSwitchingBeforeTheFileCostsNoFailedCall) {
  AcceptTokens({kTokenB});
  volume_.Swap(kTokenB);
  // Whichever comes first, the directory's notification or the 401 to the old token, the call
  // goes out again with the new one.
  MustCreate("pvc-rotation-raced");
  EXPECT_TRUE(plugin_->WaitForLog("reloaded the Oxide API token from")) << plugin_->Log();
}

TEST_F(PluginTokenRotationTest, ARejectedTokenZeroesItsGaugeUntilTheFileHoldsOneOxideAccepts) {
  AcceptTokens({kTokenC});
  ExpectCode(Create(CreateRequest("pvc-rejected")), StatusCode::UNAUTHENTICATED,
             "Oxide did not accept the API token");
  // The call's 401 makes the token suspect; the check it starts at once confirms it.
  ASSERT_TRUE(WaitUntil([&] { return ScrapeOf(*plugin_).Sum("oxide_csi_oxide_token_valid") == 0; },
                        std::chrono::seconds(45), std::chrono::milliseconds(50)))
      << plugin_->Log();
  ASSERT_TRUE(plugin_->WaitForLog("Oxide rejects the API token")) << plugin_->Log();
  EXPECT_TRUE(Probe().ok()) << "Probe never depends on Oxide";
  volume_.Swap(kTokenC);
  ASSERT_TRUE(plugin_->WaitForLog("Oxide accepts the API token and the project again"))
      << plugin_->Log();
  EXPECT_EQ(ScrapeOf(*plugin_).Sum("oxide_csi_oxide_token_valid"), 1);
  EXPECT_TRUE(Probe().ok());
  MustCreate("pvc-accepted");
}

TEST_F(PluginTokenRotationTest, AnEmptyFileKeepsTheTokenInUseUntilItHoldsATokenAgain) {
  volume_.Swap("");
  ASSERT_TRUE(plugin_->WaitForLog("the Oxide token file cannot be used")) << plugin_->Log();
  MustCreate("pvc-empty-file");
  EXPECT_TRUE(Probe().ok());
  AcceptTokens({kTokenA, kTokenB});
  volume_.Swap(kTokenB);
  ASSERT_TRUE(plugin_->WaitForLog("reloaded the Oxide API token from")) << plugin_->Log();
  EXPECT_NE(plugin_->Log().find("the Oxide token file is readable again"), std::string::npos);
  MustCreate("pvc-file-fixed");
}

}  // namespace
}  // namespace oxide::testing
