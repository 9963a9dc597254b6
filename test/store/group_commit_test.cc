// Group commit on a real SQLite file, through the fault-injecting VFS (test/support/faulty_vfs):
// commits adapt to load (a lone write commits at once; writes made while a commit's fsync runs
// share the next commit), every caller is answered only once its own commit is durable, and a
// failed commit or write fails exactly the calls whose writes it carried.
#include "store/group_commit.h"

#include <gtest/gtest.h>
#include <uv.h>

#include <optional>

#include "metrics/plugin_metrics.h"
#include "store/node_volume_store.h"
#include "store/snapshot_store.h"
#include "store/volume_store.h"
#include "support/faulty_vfs.h"
#include "support/temp_dir.h"

namespace oxide::store {
namespace {

using testing::FaultyVfs;
using testing::TempDir;

VolumeRow Row(const std::string& name) {
  return {.disk_name = name,
          .volume_id = "",
          .co_name = "co-" + name,
          .size = 1 << 30,
          .block_size = 4096,
          .state = "CREATED",
          .node_id = ""};
}

class GroupCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FaultyVfs::Install();
    uv_loop_init(&loop_);
    Open();
    // The first commit after opening also writes and syncs the WAL's header: get it done, so
    // that each commit below syncs once.
    store_->Put(Row("warm-up"));
    commit_->Flush();
  }
  void TearDown() override {
    FaultyVfs::ReleaseSyncs();
    FaultyVfs::FailWrites(false);
    Close();
    ASSERT_EQ(uv_loop_close(&loop_), 0);
  }
  void Open() {
    auto opened = StateDb::Open(dir_.File("state.db"), FaultyVfs::kName);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    db_ = std::move(*opened);
    commit_ = std::make_unique<GroupCommit>(&loop_, db_.get(), nullptr, heartbeat_ms_);
    store_ = std::make_unique<VolumeStore>(db_.get(), commit_.get());
  }
  void Close() {
    store_.reset();
    commit_.reset();
    db_.reset();
    uv_run(&loop_, UV_RUN_DEFAULT);
  }
  // One loop turn: what was written in it is handed to the store thread at its end.
  void Turn() { uv_run(&loop_, UV_RUN_NOWAIT); }
  // Runs the loop (waiting for the store thread's answers) until `done` holds.
  template <typename Predicate>
  void RunUntil(Predicate done) {
    while (!done())
      uv_run(&loop_, UV_RUN_ONCE);
  }
  // A write of `name` and a callback that records its outcome in `into`.
  void PutAndWait(const std::string& name, std::optional<Status>* into) {
    store_->Put(Row(name));
    commit_->WhenDurable([into](Status s) { *into = s; });
  }

  TempDir dir_;
  uint64_t heartbeat_ms_ = 500;
  uv_loop_t loop_{};
  std::unique_ptr<StateDb> db_;
  std::unique_ptr<GroupCommit> commit_;
  std::unique_ptr<VolumeStore> store_;
};

TEST_F(GroupCommitTest, ALoneWriteCommitsAtTheEndOfItsTurnWithoutWaitingForMore) {
  const uint64_t before = commit_->stats().commits;
  FaultyVfs::HoldSyncs();
  std::optional<Status> durable;
  PutAndWait("alone", &durable);
  Turn();  // the one turn the write was made in, and no other
  // The store thread reaches the commit's fsync with no further loop turn and no timer: the
  // write was handed over when its turn ended.
  FaultyVfs::WaitForHeldSyncs(1);
  EXPECT_FALSE(durable.has_value()) << "no answer before the commit is durable";
  FaultyVfs::ReleaseSyncs();
  RunUntil([&] { return durable.has_value(); });
  EXPECT_TRUE(durable->ok());
  EXPECT_EQ(commit_->stats().commits - before, 1u);
}

TEST_F(GroupCommitTest, WritesMadeWhileACommitIsSyncingShareTheNextOneAndWaitForIt) {
  const uint64_t commits_before = commit_->stats().commits;
  FaultyVfs::HoldSyncs();
  std::optional<Status> first;
  PutAndWait("first", &first);
  Turn();
  FaultyVfs::WaitForHeldSyncs(1);  // the first commit is at its fsync
  // Fifty calls over ten loop turns while that fsync runs.
  std::vector<std::optional<Status>> later(50);
  for (int turn = 0; turn < 10; ++turn) {
    for (int i = 0; i < 5; ++i) {
      const int n = turn * 5 + i;
      PutAndWait("later-" + std::to_string(n), &later[static_cast<size_t>(n)]);
    }
    Turn();
  }
  EXPECT_FALSE(first.has_value());
  for (const auto& outcome : later)
    EXPECT_FALSE(outcome.has_value()) << "answered before its commit";

  FaultyVfs::AllowSyncs(1);  // only the first commit's fsync
  RunUntil([&] { return first.has_value(); });
  EXPECT_TRUE(first->ok());
  FaultyVfs::WaitForHeldSyncs(1);  // the second commit, carrying all fifty, is at its fsync
  for (int i = 0; i < 20; ++i)
    Turn();
  for (const auto& outcome : later)
    EXPECT_FALSE(outcome.has_value()) << "answered before its own commit was durable";

  FaultyVfs::ReleaseSyncs();
  RunUntil([&] {
    return std::all_of(later.begin(), later.end(), [](const auto& s) { return s.has_value(); });
  });
  for (const auto& outcome : later)
    EXPECT_TRUE(outcome->ok());
  EXPECT_EQ(commit_->stats().commits - commits_before, 2u) << "51 writes, two commits";
  commit_->Flush();
  Statement count(db_->handle(), "SELECT count(*) FROM volumes WHERE disk_name LIKE 'later-%'");
  ASSERT_EQ(count.Step(), SQLITE_ROW);
  EXPECT_EQ(count.ColumnInt(0), 50);
}

TEST_F(GroupCommitTest, AFailedCommitFailsOnlyItsCallsUndoesTheirRowsAndTheNextCommitSucceeds) {
  const uint64_t failures_before = metrics::Families().commit_failures.value();
  FaultyVfs::HoldSyncs();
  std::optional<Status> kept, lost, later;
  PutAndWait("kept", &kept);
  Turn();
  FaultyVfs::WaitForHeldSyncs(1);  // "kept" is written, at its fsync
  PutAndWait("lost", &lost);
  Turn();
  EXPECT_TRUE(store_->FindByDiskName("lost").has_value()) << "readable before it is durable";
  FaultyVfs::FailWrites(true);  // the next commit's WAL writes fail (a full disk, an I/O error)
  FaultyVfs::ReleaseSyncs();
  RunUntil([&] { return kept.has_value() && lost.has_value(); });
  FaultyVfs::FailWrites(false);
  EXPECT_TRUE(kept->ok());
  EXPECT_EQ(lost->code(), StatusCode::kUnavailable);
  EXPECT_NE(lost->message().find("commit failed"), std::string::npos) << lost->message();
  EXPECT_FALSE(store_->FindByDiskName("lost").has_value()) << "the failed write is undone";
  EXPECT_TRUE(store_->FindByDiskName("kept").has_value());
  EXPECT_FALSE(db_->Health().ok()) << "Probe reports the failed commit";

  PutAndWait("later", &later);
  RunUntil([&] { return later.has_value(); });
  EXPECT_TRUE(later->ok()) << later->message();
  EXPECT_TRUE(db_->Health().ok());
  EXPECT_EQ(commit_->stats().failed, 1u);
  EXPECT_EQ(metrics::Families().commit_failures.value(), failures_before + 1);

  // What a restart finds is what was answered OK.
  Close();
  Open();
  EXPECT_TRUE(store_->FindByDiskName("kept").has_value());
  EXPECT_TRUE(store_->FindByDiskName("later").has_value());
  EXPECT_FALSE(store_->FindByDiskName("lost").has_value());
}

// oxide_csi_operations_pending follows the journal entries in memory, also when a failed commit
// undoes the one that began it.
TEST_F(GroupCommitTest, PendingOperationsGaugeFollowsTheJournalThroughAFailedCommit) {
  metrics::Gauge& pending = metrics::Families().operations_pending.With({"publish"});
  const double before = pending.value();
  std::optional<Status> first, second;
  const int64_t kept = store_->journal().BeginOperation("publish", "vol-kept", "{}");
  commit_->WhenDurable([&](Status s) { first = s; });
  RunUntil([&] { return first.has_value(); });
  ASSERT_TRUE(first->ok());
  EXPECT_EQ(pending.value(), before + 1);
  FaultyVfs::FailWrites(true);
  store_->journal().BeginOperation("publish", "vol-lost", "{}");
  EXPECT_EQ(pending.value(), before + 2) << "counted as soon as it is journaled";
  commit_->WhenDurable([&](Status s) { second = s; });
  RunUntil([&] { return second.has_value(); });
  FaultyVfs::FailWrites(false);
  EXPECT_FALSE(second->ok());
  EXPECT_EQ(pending.value(), before + 1) << "the undone entry is no longer pending";
  store_->journal().FinishOperation(kept, "done", "");
  EXPECT_EQ(pending.value(), before);
}

// A full disk that frees up again: no call has to write for Probe to turn ready; the heartbeat's
// one-row write finds the disk working.
TEST_F(GroupCommitTest, AHeartbeatClearsAFailedCommitOnceTheDiskTakesWritesAgain) {
  Close();
  heartbeat_ms_ = 20;
  Open();
  // The heartbeat never keeps a loop alive; in the plugin the gRPC queue's handle does. This
  // timer stands in for it and never fires.
  uv_timer_t keep_alive;
  uv_timer_init(&loop_, &keep_alive);
  uv_timer_start(
      &keep_alive, [](uv_timer_t*) {}, 3600 * 1000, 0);
  std::optional<Status> lost;
  FaultyVfs::FailWrites(true);
  PutAndWait("lost", &lost);
  RunUntil([&] { return lost.has_value(); });
  EXPECT_EQ(lost->code(), StatusCode::kUnavailable);
  EXPECT_FALSE(db_->Health().ok());
  // While the disk still fails, the heartbeats fail too and the failure stays.
  const uint64_t failed = commit_->stats().failed;
  RunUntil([&] { return commit_->stats().failed >= failed + 2; });
  EXPECT_FALSE(db_->Health().ok());
  FaultyVfs::FailWrites(false);
  RunUntil([&] { return db_->Health().ok(); });
  commit_->Flush();
  Statement beat(db_->handle(), "SELECT count(*) FROM heartbeat");
  ASSERT_EQ(beat.Step(), SQLITE_ROW);
  EXPECT_EQ(beat.ColumnInt(0), 1);
  uv_close(reinterpret_cast<uv_handle_t*>(&keep_alive), nullptr);
  uv_run(&loop_, UV_RUN_NOWAIT);
}

// A read error while a store loads its rows at start is an error the start reports (exit 2),
// never an empty table.
TEST_F(GroupCommitTest, AStoreThatCannotReadItsRowsSaysSoInsteadOfStartingEmpty) {
  Close();
  auto opened = StateDb::Open(dir_.File("state.db"), FaultyVfs::kName);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  // The rows were cached when the database opened; dropped, they must come from the file.
  sqlite3_db_release_memory((*opened)->handle());
  FaultyVfs::FailReads(true);
  {
    GroupCommit commit(&loop_, opened->get());
    VolumeStore volumes(opened->get(), &commit);
    EXPECT_EQ(volumes.load_status().code(), StatusCode::kUnavailable);
    EXPECT_NE(volumes.load_status().message().find("reading the volumes failed"), std::string::npos)
        << volumes.load_status().message();
    SnapshotStore snapshots(opened->get(), &commit);
    EXPECT_FALSE(snapshots.load_status().ok());
    NodeVolumeStore node(opened->get(), &commit);
    EXPECT_FALSE(node.load_status().ok());
    FaultyVfs::FailReads(false);
  }
  opened->reset();
  uv_run(&loop_, UV_RUN_DEFAULT);
  Open();
  EXPECT_TRUE(store_->load_status().ok());
  EXPECT_TRUE(store_->FindByDiskName("warm-up").has_value());
}

TEST_F(GroupCommitTest, AFailingWriteFailsOnlyItsBatchTheOthersInTheTransactionCommit) {
  FaultyVfs::HoldSyncs();
  std::optional<Status> before, a, broken, b;
  PutAndWait("before", &before);
  Turn();
  FaultyVfs::WaitForHeldSyncs(1);
  // Three batches queue behind that commit and go into one transaction; the middle one fails.
  PutAndWait("a", &a);
  Turn();
  commit_->Write([](sqlite3*) { return Internal("injected write failure"); });
  commit_->WhenDurable([&](Status s) { broken = s; });
  Turn();
  PutAndWait("b", &b);
  Turn();
  const uint64_t commits = commit_->stats().commits;
  FaultyVfs::ReleaseSyncs();
  RunUntil([&] { return before && a && broken && b; });
  EXPECT_TRUE(before->ok());
  EXPECT_TRUE(a->ok());
  EXPECT_TRUE(b->ok());
  EXPECT_EQ(broken->code(), StatusCode::kUnavailable);
  EXPECT_NE(broken->message().find("injected write failure"), std::string::npos);
  EXPECT_EQ(commit_->stats().commits - commits, 2u);
  EXPECT_TRUE(db_->Health().ok()) << "the commit itself worked";
}

TEST_F(GroupCommitTest, ACallbackWithoutWritesWaitsForTheCommitStillRunning) {
  FaultyVfs::HoldSyncs();
  std::optional<Status> written, reader;
  PutAndWait("written", &written);
  Turn();
  FaultyVfs::WaitForHeldSyncs(1);
  // A call that only read what is being committed may answer only once it is durable.
  commit_->WhenDurable([&](Status s) { reader = s; });
  for (int i = 0; i < 5; ++i)
    Turn();
  EXPECT_FALSE(reader.has_value());
  FaultyVfs::ReleaseSyncs();
  RunUntil([&] { return reader.has_value(); });
  EXPECT_TRUE(written.has_value());
  EXPECT_TRUE(reader->ok());
  // With nothing pending it runs at the end of the turn.
  std::optional<Status> idle;
  commit_->WhenDurable([&](Status s) { idle = s; });
  Turn();
  ASSERT_TRUE(idle.has_value());
  EXPECT_TRUE(idle->ok());
}

TEST_F(GroupCommitTest, WritesMadeByACallbackGoIntoALaterCommit) {
  const uint64_t before = commit_->stats().commits;
  std::optional<Status> second;
  bool first_ran = false;
  store_->Put(Row("a"));
  commit_->WhenDurable([&](Status s) {
    ASSERT_TRUE(s.ok());
    first_ran = true;
    store_->Put(Row("b"));  // an operation's next step
    commit_->WhenDurable([&](Status s2) { second = s2; });
  });
  RunUntil([&] { return second.has_value(); });
  EXPECT_TRUE(first_ran);
  EXPECT_TRUE(second->ok());
  EXPECT_EQ(commit_->stats().commits - before, 2u) << "\"b\" was written after \"a\" was durable";
  EXPECT_EQ(store_->AllVolumes().size(), 3u);
  commit_->Flush();
  Statement count(db_->handle(), "SELECT count(*) FROM volumes WHERE disk_name IN ('a', 'b')");
  ASSERT_EQ(count.Step(), SQLITE_ROW);
  EXPECT_EQ(count.ColumnInt(0), 2);
}

TEST_F(GroupCommitTest, HealthReportsACommitThatHangs) {
  uint64_t now_ms = 1000;
  Close();
  auto opened = StateDb::Open(dir_.File("state.db"), FaultyVfs::kName);
  ASSERT_TRUE(opened.ok());
  db_ = std::move(*opened);
  commit_ = std::make_unique<GroupCommit>(&loop_, db_.get(), [&now_ms] { return now_ms; });
  store_ = std::make_unique<VolumeStore>(db_.get(), commit_.get());

  FaultyVfs::HoldSyncs();
  std::optional<Status> stuck;
  PutAndWait("stuck", &stuck);
  Turn();
  FaultyVfs::WaitForHeldSyncs(1);
  now_ms += 10'000;
  EXPECT_TRUE(commit_->Health(10'000).ok());
  now_ms += 1;
  Status hung = commit_->Health(10'000);
  EXPECT_EQ(hung.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(hung.message().find("a commit has been running for 10 s"), std::string::npos)
      << hung.message();
  FaultyVfs::ReleaseSyncs();
  RunUntil([&] { return stuck.has_value(); });
  EXPECT_TRUE(commit_->Health(10'000).ok()) << "nothing running";
}

}  // namespace
}  // namespace oxide::store
