// The metrics endpoint through real HTTP on loopback: /metrics in the text format, /healthz from
// the loop's heartbeat (an injected clock), and what anything else gets.
#include "metrics/metrics_server.h"

#include <gtest/gtest.h>

#include <atomic>

#include "http_client.h"

namespace oxide::metrics {
namespace {

class MetricsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_.AddCounter("t_calls_total", "Calls.", {"method"}).With({"Probe"}).Increment(4);
    MetricsServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.stale_after = std::chrono::milliseconds(10000);
    options.now_ms = [this] { return now_ms_.load(); };
    server_ = std::make_unique<MetricsServer>(&registry_, &heartbeat_, std::move(options));
    ASSERT_TRUE(server_->Start().ok());
    client_ = std::make_unique<sim_test::HttpClient>("http://127.0.0.1:" +
                                                     std::to_string(server_->port()));
    client_->set_token(std::nullopt);
  }

  Registry registry_;
  LoopHeartbeat heartbeat_;
  std::atomic<int64_t> now_ms_{1000000};
  std::unique_ptr<MetricsServer> server_;
  std::unique_ptr<sim_test::HttpClient> client_;
};

TEST_F(MetricsServerTest, ServesTheRegistryInTheTextFormat) {
  sim_test::Reply reply = client_->get("/metrics");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(reply.body.find("# TYPE t_calls_total counter\nt_calls_total{method=\"Probe\"} 4\n"),
            std::string::npos)
      << reply.body;
  EXPECT_EQ(server_->scrapes(), 1U);
}

TEST_F(MetricsServerTest, HealthzFollowsTheLoopHeartbeat) {
  heartbeat_.Beat(now_ms_);
  EXPECT_EQ(client_->get("/healthz").status, 200);
  now_ms_ += 10000;  // exactly stale_after: still alive
  EXPECT_EQ(client_->get("/healthz").status, 200);
  now_ms_ += 1;
  sim_test::Reply stale = client_->get("/healthz");
  EXPECT_EQ(stale.status, 503);
  EXPECT_NE(stale.body.find("has not turned for 10001 ms"), std::string::npos) << stale.body;
  heartbeat_.Beat(now_ms_);
  EXPECT_EQ(client_->get("/healthz").status, 200);
}

TEST_F(MetricsServerTest, OtherPathsMethodsAndHugeHeadersAreRefusedAndNotScraped) {
  EXPECT_EQ(client_->get("/").status, 404);
  EXPECT_EQ(client_->get("/metrics/extra").status, 404);
  EXPECT_EQ(client_->get("/metrics?x=1").status, 200);  // a query is not part of the path
  sim_test::Reply post = client_->request("POST", "/metrics", std::string("{}"));
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.header("allow"), "GET, HEAD");
  EXPECT_EQ(client_->request("DELETE", "/metrics", std::nullopt).status, 405);
  EXPECT_EQ(client_->request("PUT", "/healthz", std::string("x")).status, 405);
  sim_test::Reply huge =
      client_->request("GET", "/metrics", std::nullopt, {"X-Huge: " + std::string(64 * 1024, 'a')});
  EXPECT_EQ(huge.status, 431);
  EXPECT_EQ(server_->scrapes(), 1U);  // only the request with a query rendered
  // And the server still serves.
  EXPECT_EQ(client_->get("/metrics").status, 200);
}

TEST_F(MetricsServerTest, ASecondServerOnTheSamePortFailsWithTheAddress) {
  MetricsServerOptions options;
  options.host = "127.0.0.1";
  options.port = server_->port();
  MetricsServer second(&registry_, nullptr, std::move(options));
  Status started = second.Start();
  EXPECT_EQ(started.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(started.message().find("127.0.0.1:" + std::to_string(server_->port())),
            std::string::npos)
      << started.message();
}

}  // namespace
}  // namespace oxide::metrics
