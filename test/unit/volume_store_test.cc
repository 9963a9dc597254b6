// The controller's tables on a real SQLite file: migration from schema 1, group commit (one
// transaction per loop turn, callbacks after the commit, a failed commit rolls back and reports),
// volume rows and the operation journal.
#include "store/volume_store.h"

#include <gtest/gtest.h>
#include <uv.h>

#include "store/group_commit.h"
#include "store/snapshot_store.h"
#include "support/temp_dir.h"

namespace oxide::store {
namespace {

using testing::TempDir;

class VolumeStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    uv_loop_init(&loop_);
    auto opened = StateDb::Open(dir_.File("state.db"));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    db_ = std::move(*opened);
    commit_ = std::make_unique<GroupCommit>(&loop_, db_.get());
    store_ = std::make_unique<VolumeStore>(db_.get(), commit_.get());
  }
  void TearDown() override {
    store_.reset();
    commit_.reset();
    uv_run(&loop_, UV_RUN_DEFAULT);
    ASSERT_EQ(uv_loop_close(&loop_), 0);
  }
  // Runs one loop turn (the commit happens before the loop would wait).
  void Turn() { uv_run(&loop_, UV_RUN_NOWAIT); }

  int64_t Count(const std::string& sql) {
    Statement statement(db_->handle(), sql);
    EXPECT_EQ(statement.Step(), SQLITE_ROW);
    return statement.ColumnInt(0);
  }

  TempDir dir_;
  uv_loop_t loop_{};
  std::unique_ptr<StateDb> db_;
  std::unique_ptr<GroupCommit> commit_;
  std::unique_ptr<VolumeStore> store_;
};

VolumeRow Row(const std::string& name, const std::string& id = "") {
  return {.disk_name = name,
          .volume_id = id,
          .co_name = "co-" + name,
          .size = 1 << 30,
          .block_size = 4096,
          .state = "CREATED",
          .node_id = ""};
}

TEST_F(VolumeStoreTest, WritesOfOneTurnShareOneCommitAndAnswersWaitForIt) {
  uint64_t before = commit_->commits();
  std::vector<Status> durable;
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(store_->Put(Row("disk-" + std::to_string(i))).ok());
    commit_->WhenDurable([&](Status s) { durable.push_back(s); });
  }
  EXPECT_TRUE(durable.empty()) << "no answer before the commit";
  EXPECT_TRUE(sqlite3_get_autocommit(db_->handle()) == 0) << "a transaction is open";
  Turn();
  EXPECT_EQ(durable.size(), 50u);
  for (const Status& s : durable)
    EXPECT_TRUE(s.ok());
  EXPECT_EQ(commit_->commits() - before, 1u);
  EXPECT_NE(sqlite3_get_autocommit(db_->handle()), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM volumes"), 50);
}

TEST_F(VolumeStoreTest, WritesMadeByACommitCallbackAreCommittedInTheSameTurn) {
  std::vector<int> order;
  ASSERT_TRUE(store_->Put(Row("a")).ok());
  commit_->WhenDurable([&](Status) {
    order.push_back(1);
    ASSERT_TRUE(store_->Put(Row("b")).ok());
    commit_->WhenDurable([&](Status s) {
      EXPECT_TRUE(s.ok());
      order.push_back(2);
    });
  });
  Turn();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_NE(sqlite3_get_autocommit(db_->handle()), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM volumes"), 2);
}

TEST_F(VolumeStoreTest, AFailedCommitRollsBackReportsAndMakesHealthFail) {
  ASSERT_TRUE(store_->Put(Row("kept")).ok());
  Turn();
  // A commit hook that refuses turns the COMMIT into a rollback, as a full disk would.
  sqlite3_commit_hook(
      db_->handle(), [](void*) { return 1; }, nullptr);
  ASSERT_TRUE(store_->Put(Row("lost")).ok());
  std::optional<Status> outcome;
  commit_->WhenDurable([&](Status s) { outcome = s; });
  Turn();
  sqlite3_commit_hook(db_->handle(), nullptr, nullptr);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->code(), StatusCode::kUnavailable);
  EXPECT_NE(outcome->message().find("commit failed"), std::string::npos);
  EXPECT_FALSE(db_->Health().ok());
  EXPECT_TRUE(store_->FindByDiskName("kept").has_value());
  EXPECT_FALSE(store_->FindByDiskName("lost").has_value());
  // The next commit works again and clears the failure.
  ASSERT_TRUE(store_->Put(Row("later")).ok());
  Turn();
  EXPECT_TRUE(db_->Health().ok());
}

TEST_F(VolumeStoreTest, VolumeRowsByNameAndId) {
  ASSERT_TRUE(store_->Put(Row("creating")).ok());  // no id yet
  ASSERT_TRUE(store_->Put(Row("other")).ok());     // two rows without id may coexist
  ASSERT_TRUE(store_->Put(Row("made", "11111111-2222-3333-4444-555555555555")).ok());
  Turn();
  EXPECT_FALSE(store_->FindByVolumeId("").has_value());
  auto made = store_->FindByVolumeId("11111111-2222-3333-4444-555555555555");
  ASSERT_TRUE(made.has_value());
  EXPECT_EQ(made->disk_name, "made");
  EXPECT_EQ(made->co_name, "co-made");
  EXPECT_EQ(made->size, 1u << 30);
  auto creating = store_->FindByDiskName("creating");
  ASSERT_TRUE(creating.has_value());
  EXPECT_EQ(creating->volume_id, "");
  VolumeRow updated = *creating;
  updated.state = "NODE_READY";
  updated.node_id = "node";
  ASSERT_TRUE(store_->Put(updated).ok());
  ASSERT_TRUE(store_->Remove("other").ok());
  Turn();
  EXPECT_EQ(store_->FindByDiskName("creating")->state, "NODE_READY");
  EXPECT_EQ(store_->AllVolumes().size(), 2u);
}

TEST_F(VolumeStoreTest, AStateChangeRewritesTheRowInPlaceAndANewUuidReplacesIt) {
  const std::string first_id = "11111111-2222-3333-4444-555555555555";
  const std::string second_id = "66666666-7777-8888-9999-000000000000";
  ASSERT_TRUE(store_->Put(Row("vol", first_id)).ok());
  ASSERT_TRUE(store_->Put(Row("later")).ok());  // a replaced row would get a rowid after this one
  Turn();
  const std::string rowid_of_vol = "SELECT rowid FROM volumes WHERE disk_name = 'vol'";
  const int64_t rowid = Count(rowid_of_vol);

  VolumeRow published = Row("vol", first_id);
  published.state = "PUBLISHED";
  published.node_id = "node-1";
  ASSERT_TRUE(store_->Put(published).ok());
  Turn();
  EXPECT_EQ(Count(rowid_of_vol), rowid);  // in place: no delete and insert
  EXPECT_EQ(store_->FindByVolumeId(first_id)->state, "PUBLISHED");
  EXPECT_EQ(store_->FindByDiskName("vol")->node_id, "node-1");

  ASSERT_TRUE(store_->Put(Row("vol", second_id)).ok());  // the disk was made anew
  Turn();
  EXPECT_FALSE(store_->FindByVolumeId(first_id).has_value());
  ASSERT_TRUE(store_->FindByVolumeId(second_id).has_value());
  EXPECT_EQ(store_->FindByVolumeId(second_id)->state, "CREATED");
  EXPECT_EQ(Count("SELECT count(*) FROM volumes"), 2);
}

TEST_F(VolumeStoreTest, SnapshotRowsByNameIdAndThoseStillCreating) {
  SnapshotStore snapshots(db_.get(), commit_.get());
  SnapshotRow pending{.snapshot_name = "csi-snap-a",
                      .snapshot_id = "",
                      .co_name = "a",
                      .source_volume_id = "11111111-2222-3333-4444-555555555555",
                      .size = 0,
                      .state = "creating",
                      .time_created = "",
                      .polls = 0};
  SnapshotRow uploading = pending;
  uploading.snapshot_name = "csi-snap-b";
  uploading.snapshot_id = "22222222-2222-3333-4444-555555555555";
  uploading.size = 1 << 30;
  uploading.time_created = "2026-11-22T01:53:34.227581Z";
  SnapshotRow ready = uploading;
  ready.snapshot_name = "csi-snap-c";
  ready.snapshot_id = "33333333-2222-3333-4444-555555555555";
  ready.state = "ready";
  ready.polls = 4;
  for (const SnapshotRow& row : {pending, uploading, ready})
    ASSERT_TRUE(snapshots.Put(row).ok());
  Turn();
  EXPECT_FALSE(snapshots.FindById("").has_value());
  auto found = snapshots.FindById(ready.snapshot_id);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->snapshot_name, "csi-snap-c");
  EXPECT_EQ(found->polls, 4);
  EXPECT_EQ(found->time_created, ready.time_created);
  std::vector<SnapshotRow> creating = snapshots.Creating();
  ASSERT_EQ(creating.size(), 2u);
  EXPECT_EQ(creating[0].snapshot_name, "csi-snap-a");
  EXPECT_EQ(creating[1].snapshot_id, uploading.snapshot_id);
  uploading.state = "ready";
  ASSERT_TRUE(snapshots.Put(uploading).ok());
  ASSERT_TRUE(snapshots.Remove("csi-snap-a").ok());
  Turn();
  EXPECT_TRUE(snapshots.Creating().empty());
  EXPECT_FALSE(snapshots.FindByName("csi-snap-a").has_value());
  EXPECT_EQ(Count("SELECT count(*) FROM snapshots"), 2);
}

TEST_F(VolumeStoreTest, JournalEntriesOpenAndClose) {
  auto first = store_->BeginOperation("create", "disk-a", R"({"co_name":"a"})");
  auto second = store_->BeginOperation("delete", "vol-b", "{}");
  ASSERT_TRUE(first.ok() && second.ok());
  Turn();
  auto open = store_->UnfinishedOperations();
  ASSERT_EQ(open.size(), 2u);
  EXPECT_EQ(open[0].kind, "create");
  EXPECT_EQ(open[0].args, R"({"co_name":"a"})");
  ASSERT_TRUE(store_->FinishOperation(*first, "done", "OK").ok());
  Turn();
  ASSERT_EQ(store_->UnfinishedOperations().size(), 1u);
  EXPECT_EQ(store_->FindOperation(*first)->state, "done");
  EXPECT_EQ(store_->FindOperation(*first)->outcome, "OK");
  // Pruning forgets finished entries only.
  auto pruned = store_->PruneFinished(-1000);
  Turn();
  EXPECT_EQ(*pruned, 1);
  EXPECT_FALSE(store_->FindOperation(*first).has_value());
  EXPECT_TRUE(store_->FindOperation(*second).has_value());
}

TEST(VolumeStoreMigration, ASchemaOneDatabaseIsUpgradedKeepingItsData) {
  TempDir dir;
  std::string path = dir.File("old.db");
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    ASSERT_TRUE(Exec(raw,
                     "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;"
                     "INSERT INTO meta VALUES ('created_by', 'oxide-csi-plugin'), ('k', 'v');"
                     "PRAGMA user_version=1;")
                    .ok());
    sqlite3_close(raw);
  }
  auto db = StateDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_GE((*db)->schema_version(), 2);
  Statement kept((*db)->handle(), "SELECT value FROM meta WHERE key = 'k'");
  ASSERT_EQ(kept.Step(), SQLITE_ROW);
  EXPECT_EQ(kept.ColumnText(0), "v");
  Statement tables((*db)->handle(),
                   "SELECT count(*) FROM sqlite_master WHERE name IN ('volumes', 'operations')");
  ASSERT_EQ(tables.Step(), SQLITE_ROW);
  EXPECT_EQ(tables.ColumnInt(0), 2);
}

}  // namespace
}  // namespace oxide::store

namespace oxide::store {
namespace {

// A store whose group commit paces commits 300 ms apart, on a loop the test turns by hand.
class GroupCommitWindow : public ::testing::Test {
 protected:
  void SetUp() override {
    uv_loop_init(&loop_);
    auto db = StateDb::Open(dir_.File("state.db"));
    ASSERT_TRUE(db.ok());
    db_ = std::move(*db);
    commit_ = std::make_unique<GroupCommit>(&loop_, db_.get(), std::chrono::milliseconds(300));
    store_ = std::make_unique<VolumeStore>(db_.get(), commit_.get());
  }
  void TearDown() override {
    store_.reset();
    commit_.reset();
    db_.reset();
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop_), 0);
  }

  TempDir dir_;
  uv_loop_t loop_{};
  std::unique_ptr<StateDb> db_;
  std::unique_ptr<GroupCommit> commit_;
  std::unique_ptr<VolumeStore> store_;
};

TEST_F(GroupCommitWindow, IsolatedWriteCommitsAtOnceLaterOnesShareOnePacedCommit) {
  GroupCommit& commit = *commit_;
  VolumeStore& store = *store_;
  uv_loop_t& loop = loop_;
  int durable = 0;
  // Nothing committed for a window: the write commits at the end of this loop turn.
  ASSERT_TRUE(store.Put(Row("first")).ok());
  commit.WhenDurable([&](Status s) { durable += s.ok(); });
  uv_run(&loop, UV_RUN_NOWAIT);
  EXPECT_EQ(durable, 1);
  EXPECT_EQ(commit.commits(), 1u);
  // Within the window of that commit: later writes wait for its end and share one commit.
  auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(store.Put(Row("second")).ok());
  commit.WhenDurable([&](Status s) { durable += s.ok(); });
  uv_run(&loop, UV_RUN_NOWAIT);  // a loop turn ends: the window keeps the transaction open
  EXPECT_EQ(durable, 1);
  ASSERT_TRUE(store.Put(Row("third")).ok());  // a later turn joins the same transaction
  commit.WhenDurable([&](Status s) { durable += s.ok(); });
  while (durable < 3 && std::chrono::steady_clock::now() - started < std::chrono::seconds(5)) {
    uv_run(&loop, UV_RUN_ONCE);
  }
  EXPECT_EQ(durable, 3);
  EXPECT_EQ(commit.commits(), 2u);
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(200));
}

// Commits `store` one write that `waiters` callbacks wait for, then one more write, and returns
// how long after the first commit the second one came.
std::chrono::milliseconds SecondCommitAfter(uv_loop_t& loop, GroupCommit& commit,
                                            VolumeStore& store, size_t waiters) {
  int durable = 0;
  EXPECT_TRUE(store.Put(Row("first")).ok());
  for (size_t i = 0; i < waiters; ++i)
    commit.WhenDurable([&](Status s) { durable += s.ok(); });
  uv_run(&loop, UV_RUN_NOWAIT);
  EXPECT_EQ(commit.commits(), 1u);
  const auto first = std::chrono::steady_clock::now();
  EXPECT_TRUE(store.Put(Row("second")).ok());
  commit.WhenDurable([&](Status s) { durable += s.ok(); });
  while (commit.commits() < 2 && std::chrono::steady_clock::now() - first < std::chrono::seconds(5))
    uv_run(&loop, UV_RUN_ONCE);
  EXPECT_EQ(durable, static_cast<int>(waiters) + 1);
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               first);
}

TEST_F(GroupCommitWindow, ACommitThatAnsweredManyCallsDoublesTheNextWindow) {
  // 300 ms window: after a busy commit the next one waits twice that.
  EXPECT_GE(SecondCommitAfter(loop_, *commit_, *store_, GroupCommit::kBusyWaiters),
            std::chrono::milliseconds(550));
}

TEST_F(GroupCommitWindow, ACommitThatAnsweredFewCallsKeepsTheWindow) {
  const auto after = SecondCommitAfter(loop_, *commit_, *store_, GroupCommit::kBusyWaiters - 1);
  EXPECT_GE(after, std::chrono::milliseconds(250));
  EXPECT_LT(after, std::chrono::milliseconds(550));
}

TEST_F(GroupCommitWindow, WritesFromCallbacksInsideTheWindowWaitForTheNextCommit) {
  GroupCommit& commit = *commit_;
  VolumeStore& store = *store_;
  uv_loop_t& loop = loop_;
  bool second_durable = false;
  ASSERT_TRUE(store.Put(Row("first")).ok());
  commit.WhenDurable([&](Status s) {
    ASSERT_TRUE(s.ok());
    // An operation's next step writes right after its commit: it must not be answered with
    // that commit's status, and it waits for the paced one.
    ASSERT_TRUE(store.Put(Row("second")).ok());
    commit.WhenDurable([&](Status s2) { second_durable = s2.ok(); });
  });
  uv_run(&loop, UV_RUN_NOWAIT);
  EXPECT_EQ(commit.commits(), 1u);
  EXPECT_FALSE(second_durable);
  auto started = std::chrono::steady_clock::now();
  while (!second_durable && std::chrono::steady_clock::now() - started < std::chrono::seconds(5)) {
    uv_run(&loop, UV_RUN_ONCE);
  }
  EXPECT_TRUE(second_durable);
  EXPECT_EQ(commit.commits(), 2u);
}

}  // namespace
}  // namespace oxide::store
