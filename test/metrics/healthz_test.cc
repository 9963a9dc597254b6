// /healthz (the plugin's liveness) follows whether the state database takes writes: a real
// GroupCommit on a real SQLite file through the fault-injecting VFS publishes to the WriteHealth
// the real metrics server reads on its own thread, asked through real HTTP on loopback. Every
// step waits for an event (a commit's outcome, a held fsync), and the clock both sides read is
// the test's, so no test sleeps.
#include <gtest/gtest.h>
#include <uv.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "http_client.h"
#include "metrics/metrics_server.h"
#include "metrics/write_health.h"
#include "store/group_commit.h"
#include "store/volume_store.h"
#include "support/faulty_vfs.h"
#include "support/temp_dir.h"

namespace oxide::metrics {
namespace {

using testing::FaultyVfs;
using testing::TempDir;

class HealthzTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FaultyVfs::Install();
    uv_loop_init(&loop_);
    auto opened = store::StateDb::Open(dir_.File("state.db"), FaultyVfs::kName);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    db_ = std::move(*opened);
    // A heartbeat that never comes during a test: the writes the tests make are what commit.
    commit_ = std::make_unique<store::GroupCommit>(
        &loop_, db_.get(), [this] { return static_cast<uint64_t>(now_ms_.load()); }, 3600 * 1000);
    commit_->PublishHealthTo(&health_);
    store_ = std::make_unique<store::VolumeStore>(db_.get(), commit_.get());

    MetricsServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.now_ms = [this] { return now_ms_.load(); };
    options.write_health = &health_;
    server_ = std::make_unique<MetricsServer>(&registry_, nullptr, std::move(options));
    ASSERT_TRUE(server_->Start().ok());
    client_ = std::make_unique<sim_test::HttpClient>("http://127.0.0.1:" +
                                                     std::to_string(server_->port()));
    client_->set_token(std::nullopt);
  }
  void TearDown() override {
    FaultyVfs::ReleaseSyncs();
    FaultyVfs::FailWrites(false);
    server_.reset();
    store_.reset();
    commit_.reset();
    db_.reset();
    uv_run(&loop_, UV_RUN_DEFAULT);
    ASSERT_EQ(uv_loop_close(&loop_), 0);
  }

  // Writes a row and runs the loop until its commit's outcome is known.
  Status WriteAndWait(const std::string& name) {
    store_->Put({.disk_name = name,
                 .volume_id = "",
                 .co_name = "co-" + name,
                 .size = 1 << 30,
                 .block_size = 4096,
                 .state = "CREATED",
                 .node_id = ""});
    std::optional<Status> outcome;
    commit_->WhenDurable([&outcome](Status s) { outcome = s; });
    while (!outcome.has_value())
      uv_run(&loop_, UV_RUN_ONCE);
    return *outcome;
  }

  TempDir dir_;
  uv_loop_t loop_{};
  std::atomic<int64_t> now_ms_{1'000'000};
  WriteHealth health_;
  Registry registry_;
  std::unique_ptr<store::StateDb> db_;
  std::unique_ptr<store::GroupCommit> commit_;
  std::unique_ptr<store::VolumeStore> store_;
  std::unique_ptr<MetricsServer> server_;
  std::unique_ptr<sim_test::HttpClient> client_;
};

TEST_F(HealthzTest, HealthzIs503WhileTheDatabaseTakesNoWritesAnd200AgainAfter) {
  ASSERT_TRUE(WriteAndWait("before").ok());
  EXPECT_EQ(client_->get("/healthz").status, 200);

  FaultyVfs::FailWrites(true);  // a full disk, an I/O error
  EXPECT_EQ(WriteAndWait("lost").code(), StatusCode::kUnavailable);
  sim_test::Reply failing = client_->get("/healthz");
  EXPECT_EQ(failing.status, 503);
  // A message a person can act on: what, where, and what to do.
  for (const std::string& part :
       std::vector<std::string>{"the state database does not take writes", "the last commit failed",
                                db_->path(), "--state-db"}) {
    EXPECT_NE(failing.body.find(part), std::string::npos) << part << " in " << failing.body;
  }
  EXPECT_EQ(WriteAndWait("lost-again").code(), StatusCode::kUnavailable);
  failing = client_->get("/healthz");
  EXPECT_EQ(failing.status, 503);
  EXPECT_NE(failing.body.find("the last 2 commits failed"), std::string::npos) << failing.body;
  EXPECT_EQ(client_->get("/metrics").status, 200) << "metrics are served all the same";

  FaultyVfs::FailWrites(false);
  ASSERT_TRUE(WriteAndWait("after").ok());
  sim_test::Reply healthy = client_->get("/healthz");
  EXPECT_EQ(healthy.status, 200);
  EXPECT_EQ(healthy.body, "ok\n");
}

TEST_F(HealthzTest, HealthzIs503WhileACommitHangsLongerThanTheLimit) {
  FaultyVfs::HoldSyncs();
  store_->Put({.disk_name = "stuck",
               .volume_id = "",
               .co_name = "co-stuck",
               .size = 1 << 30,
               .block_size = 4096,
               .state = "CREATED",
               .node_id = ""});
  std::optional<Status> outcome;
  commit_->WhenDurable([&outcome](Status s) { outcome = s; });
  uv_run(&loop_, UV_RUN_NOWAIT);   // the turn ends: the batch goes to the store thread
  FaultyVfs::WaitForHeldSyncs(1);  // the commit is at its fsync
  now_ms_ += 10'000;               // exactly the limit (MetricsServerOptions::commit_hung_after)
  EXPECT_EQ(client_->get("/healthz").status, 200);
  now_ms_ += 1;
  sim_test::Reply hung = client_->get("/healthz");
  EXPECT_EQ(hung.status, 503);
  EXPECT_NE(hung.body.find("a commit has been running for 10 s"), std::string::npos) << hung.body;
  FaultyVfs::ReleaseSyncs();
  while (!outcome.has_value())
    uv_run(&loop_, UV_RUN_ONCE);
  EXPECT_TRUE(outcome->ok());
  EXPECT_EQ(client_->get("/healthz").status, 200) << "nothing running";
}

}  // namespace
}  // namespace oxide::metrics
