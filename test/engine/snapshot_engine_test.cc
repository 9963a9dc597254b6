// The snapshot engine and its upload tracker with a real SQLite file and the real oxide-sim over
// loopback: list-based polling when many snapshots are due (requests far below one per snapshot
// per poll), GETs when few are, settling into the snapshots table, the early ready_to_use=false
// answer, and recovery of unfinished snapshot journal entries. Snapshots are held `creating` with
// the simulator's freeze control. gtest main thread only (it is the loop thread).
#include "engine/snapshot_engine.h"

#include <gtest/gtest.h>

#include "backend_fixture.h"
#include "engine/disk_naming.h"
#include "engine_fixture.h"
#include "metrics/plugin_metrics.h"
#include "store/group_commit.h"
#include "store/snapshot_store.h"
#include "store/state_db.h"
#include "store/volume_store.h"
#include "support/faulty_vfs.h"
#include "support/temp_dir.h"

namespace engine_test {
namespace {

using namespace oxide::engine;  // NOLINT(google-build-using-namespace): test code
using namespace std::chrono_literals;
using oxide::StatusCode;
using oxide::StatusOr;
using oxide::backend::Snapshot;

class SnapshotEngineTest : public backend_test::BackendTest {
 public:
  // Creates answer at once; a frozen snapshot stays `creating` until released.
  std::vector<std::string> sim_args() const override { return {"--async"}; }

  void SetUp() override {
    BackendTest::SetUp();
    Restart();
  }

  bool Busy() override {
    return BackendTest::Busy() || (commit_ && commit_->batches_in_flight() > 0);
  }

  void TearDown() override {
    Close();
    BackendTest::TearDown();
  }

  void Close() {
    engine_.reset();
    snapshots_.reset();
    journal_.reset();
    commit_.reset();
    db_.reset();
    uv_run(loop(), UV_RUN_NOWAIT);
  }

  // Closes and reopens everything on the same database file (a restart).
  void Restart() {
    Close();
    auto opened = oxide::store::StateDb::Open(dir_.File("state.db"), vfs_);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    db_ = std::move(*opened);
    commit_ = std::make_unique<oxide::store::GroupCommit>(loop(), db_.get());
    journal_ = std::make_unique<oxide::store::Journal>(db_.get(), commit_.get(),
                                                       [this] { return clock().WallMillis(); });
    snapshots_ = std::make_unique<oxide::store::SnapshotStore>(db_.get(), commit_.get());
    SnapshotEngineOptions options;
    options.uploads.first = 100ms;
    options.uploads.max = 400ms;
    options.lookup_retry = 50ms;
    options.recovery_retry_max = 200ms;
    engine_ = std::make_unique<SnapshotEngine>(&clock(), &client(), journal_.get(),
                                               snapshots_.get(), commit_.get(), options);
  }

  // A detached disk to take snapshots of; returns its id.
  std::string SourceDisk(const std::string& name) {
    auto disk = CreateBlankDisk(name);
    EXPECT_TRUE(disk.ok()) << disk.status().ToString();
    return disk.ok() ? disk->id : "";
  }

  void Freeze(const std::string& snapshot_name, bool freeze = true) {
    auto reply = control().post(freeze ? "/__sim/freeze" : "/__sim/release",
                                {{"kind", "snapshot"}, {"name", snapshot_name}});
    ASSERT_EQ(reply.status, 200) << reply.body;
  }

  // A snapshot Oxide holds `creating`, recorded in the table as the engine would.
  oxide::store::SnapshotRow CreatingSnapshot(const std::string& co_name,
                                             const std::string& source) {
    const std::string name = SnapshotNameFor(co_name);
    Freeze(name);
    auto created = Await<Snapshot>([&](oxide::backend::Done<Snapshot> done) {
      client().CreateSnapshot(
          {.name = name, .description = SnapshotDescriptionFor(co_name), .disk = source},
          std::move(done));
    });
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    EXPECT_EQ(created.ok() ? created->state : oxide::backend::SnapshotStatus::kUnknown,
              oxide::backend::SnapshotStatus::kCreating);
    oxide::store::SnapshotRow row = RowFromSnapshot(created.ok() ? *created : Snapshot{}, co_name);
    snapshots_->Put(row);
    commit_->Flush();
    return row;
  }

  std::string RowState(const std::string& snapshot_name) {
    auto row = snapshots_->FindByName(snapshot_name);
    return row ? row->state : "missing";
  }

  oxide::testing::TempDir dir_;
  const char* vfs_ = nullptr;  // SQLite's default; FaultyVfs::kName where a test fails writes
  std::unique_ptr<oxide::store::StateDb> db_;
  std::unique_ptr<oxide::store::GroupCommit> commit_;
  std::unique_ptr<oxide::store::Journal> journal_;
  std::unique_ptr<oxide::store::SnapshotStore> snapshots_;
  std::unique_ptr<SnapshotEngine> engine_;
};

TEST_F(SnapshotEngineTest, ManyPendingSnapshotsArePolledWithListCalls) {
  constexpr int kSnapshots = 24;
  std::vector<oxide::store::SnapshotRow> rows;
  for (int i = 0; i < kSnapshots; ++i) {
    std::string source = SourceDisk("src-many-" + std::to_string(i));
    rows.push_back(CreatingSnapshot("many-" + std::to_string(i), source));
  }
  SnapshotUploadTracker& uploads = engine_->uploads();
  for (const auto& row : rows)
    uploads.Track(row);
  ClearRequestLog();
  // Five rounds' worth of time while everything is still creating.
  Elapse(1200ms);
  EXPECT_EQ(uploads.tracking(), static_cast<size_t>(kSnapshots));
  EXPECT_EQ(oxide::metrics::Families().snapshots_tracked.value(), kSnapshots);
  EXPECT_GE(uploads.list_sweeps(), 2u);
  EXPECT_EQ(CountRequests("GET", "snapshot_view"), 0);
  const int listed = CountRequests("GET", "snapshot_list");
  EXPECT_EQ(static_cast<uint64_t>(listed), uploads.requests_sent());
  EXPECT_LE(listed, 12) << "at most one round per 100 ms";
  for (const auto& row : rows)
    Freeze(row.snapshot_name, false);
  ASSERT_TRUE(RunUntil([&] { return uploads.tracking() == 0; }, 10s));
  EXPECT_EQ(oxide::metrics::Families().snapshots_tracked.value(), 0);
  commit_->Flush();
  for (const auto& row : rows)
    EXPECT_EQ(RowState(row.snapshot_name), "ready") << row.snapshot_name;
  // Once only a few are left, asking for them one by one is cheaper than a list.
  EXPECT_LE(CountRequests("GET", "snapshot_view"), 8);
}

TEST_F(SnapshotEngineTest, AFewPendingSnapshotsAreAskedOneByOneAndFaultedOnesSettle) {
  auto first = CreatingSnapshot("few-0", SourceDisk("src-few-0"));
  auto second = CreatingSnapshot("few-1", SourceDisk("src-few-1"));
  SnapshotUploadTracker& uploads = engine_->uploads();
  std::vector<StatusOr<Snapshot>> settled;
  uploads.Track(first);
  uploads.Track(second);
  ASSERT_TRUE(uploads.WhenSettled(first.snapshot_id,
                                  [&](const StatusOr<Snapshot>& s) { settled.push_back(s); }));
  Elapse(500ms);
  EXPECT_GE(CountRequests("GET", "snapshot_view"), 2);
  EXPECT_EQ(uploads.list_sweeps(), 0u);
  EXPECT_TRUE(settled.empty());
  auto reply = control().post("/__sim/fault", {{"kind", "snapshot"}, {"id", first.snapshot_id}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  Freeze(second.snapshot_name, false);
  ASSERT_TRUE(RunUntil([&] { return uploads.tracking() == 0; }, 10s));
  ASSERT_EQ(settled.size(), 1u);
  ASSERT_TRUE(settled[0].ok());
  EXPECT_EQ(settled[0]->state, oxide::backend::SnapshotStatus::kFaulted);
  commit_->Flush();
  EXPECT_EQ(RowState(first.snapshot_name), "faulted");
  EXPECT_EQ(RowState(second.snapshot_name), "ready");
}

TEST_F(SnapshotEngineTest, CreateAnswersNotReadyByItsDeadlineThenReady) {
  const std::string source = SourceDisk("src-answer");
  SnapshotSpec spec{
      .co_name = "answer", .snapshot_name = SnapshotNameFor("answer"), .source_volume_id = source};
  Freeze(spec.snapshot_name);
  std::optional<SnapshotResult> early;
  const auto started = clock().Now();
  engine_->Create(spec, started + 300ms, [&](const SnapshotResult& r) { early = r; });
  ASSERT_TRUE(RunUntil([&] { return early.has_value(); }, 5s));
  EXPECT_LE(clock().Now() - started, 300ms) << "answered by its deadline";
  ASSERT_TRUE(early->ok()) << early->status().ToString();
  EXPECT_EQ((*early)->state, oxide::backend::SnapshotStatus::kCreating);
  EXPECT_TRUE(engine_->uploads().IsTracking((*early)->id));
  Freeze(spec.snapshot_name, false);
  std::optional<SnapshotResult> later;
  engine_->Create(spec, clock().Now() + 5s, [&](const SnapshotResult& r) { later = r; });
  ASSERT_TRUE(RunUntil([&] { return later.has_value(); }, 6s));
  ASSERT_TRUE(later->ok());
  EXPECT_EQ((*later)->state, oxide::backend::SnapshotStatus::kReady);
  EXPECT_EQ((*later)->id, (*early)->id);
  EXPECT_EQ(CountRequests("POST", "snapshot_create"), 1);
}

// The disk fills up between a snapshot's journaled intent and its outcome: the caller learns
// exactly that, and once the disk takes writes again the entry is reconciled with Oxide without a
// restart or another call; the retry finds the snapshot instead of taking another.
TEST_F(SnapshotEngineTest, AnOutcomeThatCouldNotBeRecordedIsReconciledOnceTheDiskTakesWrites) {
  const std::string source = SourceDisk("src-full-disk");
  oxide::testing::FaultyVfs::Install();
  vfs_ = oxide::testing::FaultyVfs::kName;
  Restart();
  SetFaults({{{"operation", "snapshot_create"}, {"latency_ms", 300}}});
  SnapshotSpec spec{.co_name = "full-disk",
                    .snapshot_name = SnapshotNameFor("full-disk"),
                    .source_volume_id = source};
  std::optional<SnapshotResult> result;
  const uint64_t commits = commit_->stats().commits;
  engine_->Create(spec, clock().Now() + 10s, [&](const SnapshotResult& r) { result = r; });
  ASSERT_TRUE(RunUntil([&] { return commit_->stats().commits > commits; }, 5s));  // intent
  oxide::testing::FaultyVfs::FailWrites(true);  // then the disk is full
  ASSERT_TRUE(RunUntil([&] { return result.has_value(); }, 10s));
  oxide::testing::FaultyVfs::FailWrites(false);
  ASSERT_FALSE(result->ok());
  EXPECT_EQ(result->status().code(), oxide::StatusCode::kUnavailable);
  EXPECT_NE(result->status().message().find("its outcome could not be recorded"), std::string::npos)
      << result->status().message();
  ASSERT_TRUE(RunUntil(
      [&] {
        return journal_->UnfinishedOperations().empty() &&
               !engine_->tracker().Busy(spec.snapshot_name);
      },
      10s));  // reconciled and recorded
  EXPECT_EQ(RowState(spec.snapshot_name), "ready");
  std::optional<SnapshotResult> retried;
  engine_->Create(spec, clock().Now() + 5s, [&](const SnapshotResult& r) { retried = r; });
  ASSERT_TRUE(RunUntil([&] { return retried.has_value(); }, 6s));
  ASSERT_TRUE(retried->ok()) << retried->status().ToString();
  EXPECT_EQ(CountRequests("POST", "snapshot_create"), 1) << "Oxide took the snapshot once";
}

TEST_F(SnapshotEngineTest, RecoveryClosesUnfinishedEntriesAndResumesTracking) {
  const std::string source = SourceDisk("src-recover");
  // A create whose snapshot Oxide has (creating), one Oxide never got, and a finished delete.
  const std::string taken = SnapshotNameFor("recover-taken");
  Freeze(taken);
  auto created = Await<Snapshot>([&](oxide::backend::Done<Snapshot> done) {
    client().CreateSnapshot(
        {.name = taken, .description = SnapshotDescriptionFor("recover-taken"), .disk = source},
        std::move(done));
  });
  ASSERT_TRUE(created.ok());
  const std::string lost = SnapshotNameFor("recover-lost");
  const int64_t a =
      journal_->BeginOperation("snapshot_create", taken, R"({"co_name":"recover-taken"})");
  const int64_t b =
      journal_->BeginOperation("snapshot_create", lost, R"({"co_name":"recover-lost"})");
  const int64_t c =
      journal_->BeginOperation("snapshot_delete", "00000000-0000-4000-8000-000000000000", "{}");
  snapshots_->Put({.snapshot_name = lost,
                   .snapshot_id = "",
                   .co_name = "recover-lost",
                   .source_volume_id = source,
                   .size = 0,
                   .state = "creating",
                   .time_created = "",
                   .polls = 0});
  commit_->Flush();
  Restart();
  EXPECT_EQ(engine_->RecoverUnfinished(), 3u);
  ASSERT_TRUE(RunUntil([&] { return engine_->tracker().in_flight() == 0; }, 10s));
  EXPECT_EQ(JournalEntryState(*commit_, *db_, a), "done");
  EXPECT_EQ(JournalEntryState(*commit_, *db_, b), "rolled_back");
  EXPECT_EQ(JournalEntryState(*commit_, *db_, c), "done");
  EXPECT_EQ(RowState(lost), "missing");
  EXPECT_EQ(RowState(taken), "creating");
  EXPECT_TRUE(engine_->uploads().IsTracking(created->id));
  Freeze(taken, false);
  ASSERT_TRUE(RunUntil([&] { return engine_->uploads().tracking() == 0; }, 10s));
  commit_->Flush();
  EXPECT_EQ(RowState(taken), "ready");
}

TEST_F(SnapshotEngineTest, OnlyTheNewestOfSeveralOpenEntriesOfASnapshotDecides) {
  // Two creates of one snapshot left open (the first one's close never became durable); the
  // snapshot exists, so the newest is done and the older one is closed as superseded.
  const std::string source = SourceDisk("src-newest");
  const std::string name = SnapshotNameFor("recover-newest");
  auto created = Await<Snapshot>([&](oxide::backend::Done<Snapshot> done) {
    client().CreateSnapshot(
        {.name = name, .description = SnapshotDescriptionFor("recover-newest"), .disk = source},
        std::move(done));
  });
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const int64_t older =
      journal_->BeginOperation("snapshot_create", name, R"({"co_name":"recover-newest"})");
  const int64_t newer =
      journal_->BeginOperation("snapshot_create", name, R"({"co_name":"recover-newest"})");
  commit_->Flush();
  Restart();
  EXPECT_EQ(engine_->RecoverUnfinished(), 2u);
  ASSERT_TRUE(RunUntil([&] { return engine_->tracker().in_flight() == 0; }, 10s));
  EXPECT_EQ(JournalEntryState(*commit_, *db_, newer), "done");
  EXPECT_EQ(JournalEntryState(*commit_, *db_, older), "rolled_back");
  EXPECT_EQ(RowState(name), "ready");
}

TEST_F(SnapshotEngineTest, RecoveryWaitsOutAnOxideOutageAndThenClosesTheEntry) {
  const std::string lost = SnapshotNameFor("recover-outage");
  const int64_t entry =
      journal_->BeginOperation("snapshot_create", lost, R"({"co_name":"recover-outage"})");
  commit_->Flush();
  SetFaults({{{"operation", "snapshot_view"}, {"error_503", 1.0}}});
  Restart();
  EXPECT_EQ(engine_->RecoverUnfinished(), 1u);
  // Past the first recovery retry (1 s after the first attempt gave up), which fails too.
  Elapse(1500ms);
  EXPECT_EQ(JournalEntryState(*commit_, *db_, entry), "pending")
      << "still open while Oxide is unavailable";
  SetFaults(nlohmann::json::array());
  ASSERT_TRUE(RunUntil([&] { return engine_->tracker().in_flight() == 0; }, 10s));
  EXPECT_EQ(JournalEntryState(*commit_, *db_, entry), "rolled_back");
}

}  // namespace
}  // namespace engine_test
